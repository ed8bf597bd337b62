// SPDX-License-Identifier: GPL-2.0
/*
 * The RC transport engine (rc_*.c) between two fake devices: each side has
 * memory regions with keys, an SQ and an RQ of already parsed WQEs, a
 * completion log and an event log; a wire joins them with a virtual
 * clock and can drop, duplicate and reorder packets from a fixed seed. A
 * tap lets a test look at, change or inject packets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "test.h"

#define SQN		1024
#define RQN		1024
#define NCQE		16384
#define NMR		8
#define NEV		64
#define LAT_NS		2000ULL		/* one-way wire latency */

struct fmr {
	bool used;
	bool valid;
	bool fastreg;
	u32 key;
	u64 va;
	u32 len;
	u8 access;
	u8 *buf;
};

struct fev {
	u8 type;
	u8 reason;
	u64 info;
};

struct world;

struct node {
	struct rc_qp qp;
	struct world *w;
	int id;
	struct fmr mr[NMR];
	struct rc_swqe *sq;
	u16 sq_pi;
	struct rc_rwqe *rq;
	u16 rq_pi;
	u16 rq_ci;
	int bad_sq_idx;		/* >= 0: sq_peek reports that WQE malformed */
	struct rc_cqe *scq;	/* send completions, silent ones included */
	int nscq;
	struct rc_cqe *rcq;
	int nrcq;
	struct fev ev[NEV];
	int nev;
	bool woken;
	u64 deadline;
	bool cq_fail;
	int eagain;		/* emit refuses this many packets */
	bool link_down;		/* emit loses every packet (-ENETDOWN) */
	u64 port_stats[RNIC_NUM_RDMA_STATS];
};

struct wpkt {
	u8 data[RC_PKT_MAX];
	size_t len;
	int to;
	u64 at;
	u64 seq;
};

/* The tap sees every packet sent; return false to drop it. */
typedef bool (*tap_fn)(struct world *w, int from, u8 *pkt, size_t *len);

struct world {
	struct node n[2];
	u64 now;
	struct wpkt *q;
	int nq;
	int cap;
	u64 seq;
	u64 rng;
	unsigned int drop_pm;	/* per 10000 */
	unsigned int dup_pm;
	unsigned int reorder_pm;
	tap_fn tap;
	void *tap_arg;
	u64 wire_pkts[2];	/* packets each side put on the wire */
	u64 dropped;
};

static u32 rnd(struct world *w)
{
	/* xorshift64*: fixed seeds, reproducible runs */
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return (u32)((w->rng * 0x2545f4914f6cdd1dULL) >> 32);
}

static struct node *node_of(struct rc_qp *qp)
{
	return qp->priv;
}

/* ------------------------------------------------------------------------
 * Fake device ops
 */

static int f_sq_peek(struct rc_qp *qp, u16 idx, struct rc_swqe *wqe)
{
	struct node *n = node_of(qp);
	u16 ahead = n->sq_pi - idx;

	if (ahead == 0 || ahead > SQN)
		return RC_WQE_NONE;
	*wqe = n->sq[idx % SQN];
	wqe->idx = idx;
	if (n->bad_sq_idx == idx) {
		wqe->syndrome = RNIC_ERR_BAD_WQE;
		return RC_WQE_BAD;
	}
	return RC_WQE_OK;
}

static int f_rq_take(struct rc_qp *qp, struct rc_rwqe *wqe)
{
	struct node *n = node_of(qp);

	if (n->rq_ci == n->rq_pi)
		return RC_WQE_NONE;
	*wqe = n->rq[n->rq_ci % RQN];
	wqe->idx = n->rq_ci++;
	return RC_WQE_OK;
}

static struct fmr *f_key(struct node *n, u32 key, u8 *syn)
{
	int i;

	for (i = 0; i < NMR; i++) {
		struct fmr *m = &n->mr[i];

		if (!m->used || (m->key >> 8) != (key >> 8))
			continue;
		if (m->key != key) {
			*syn = RNIC_ERR_BAD_KEY;
			return NULL;
		}
		if (!m->valid) {
			*syn = RNIC_ERR_KEY_STATE;
			return NULL;
		}
		return m;
	}
	*syn = RNIC_ERR_BAD_KEY;
	return NULL;
}

static u8 f_check(struct node *n, u32 key, u64 va, u32 len, u8 need,
		  struct fmr **out)
{
	struct fmr *m;
	u8 syn = 0;

	m = f_key(n, key, &syn);
	if (!m)
		return syn;
	if ((m->access & need) != need)
		return RNIC_ERR_KEY_ACCESS;
	if (va < m->va || va + len < va || va + len > m->va + m->len)
		return RNIC_ERR_KEY_BOUNDS;
	*out = m;
	return 0;
}

static u8 f_mem(struct rc_qp *qp, enum rc_mem_op op, u32 key, u64 va,
		void *buf, u32 len)
{
	static const u8 need[] = {
		[RC_MEM_LOCAL_READ] = 0,
		[RC_MEM_LOCAL_WRITE] = RNIC_ACCESS_LOCAL_WRITE,
		[RC_MEM_RECV_WRITE] = RNIC_ACCESS_LOCAL_WRITE,
		[RC_MEM_REMOTE_WRITE] = RNIC_ACCESS_REMOTE_WRITE,
		[RC_MEM_REMOTE_READ] = RNIC_ACCESS_REMOTE_READ,
	};
	struct node *n = node_of(qp);
	struct fmr *m = NULL;
	u8 syn = f_check(n, key, va, len, need[op], &m);

	if (syn || !buf)
		return syn;
	if (op == RC_MEM_LOCAL_READ || op == RC_MEM_REMOTE_READ)
		memcpy(buf, m->buf + (va - m->va), len);
	else
		memcpy(m->buf + (va - m->va), buf, len);
	return 0;
}

static u8 f_atomic(struct rc_qp *qp, u32 rkey, u64 va, bool cmp_swap,
		   u64 compare_add, u64 swap, u64 *orig)
{
	struct node *n = node_of(qp);
	struct fmr *m = NULL;
	u8 syn = f_check(n, rkey, va, 8, RNIC_ACCESS_REMOTE_ATOMIC, &m);
	u64 v;

	if (syn)
		return syn;
	memcpy(&v, m->buf + (va - m->va), 8);
	*orig = v;
	if (cmp_swap) {
		if (v == compare_add)
			v = swap;
	} else {
		v += compare_add;
	}
	memcpy(m->buf + (va - m->va), &v, 8);
	return 0;
}

static u8 f_invalidate(struct rc_qp *qp, u32 key)
{
	struct node *n = node_of(qp);
	struct fmr *m;
	u8 syn = 0;

	m = f_key(n, key, &syn);
	if (!m)
		return syn;
	if (!m->fastreg)
		return RNIC_ERR_KEY_STATE;
	m->valid = false;
	return 0;
}

static u8 f_local_op(struct rc_qp *qp, const struct rc_swqe *wqe)
{
	struct node *n = node_of(qp);
	int i;

	if (wqe->opcode == RNIC_SQE_OP_LOCAL_INV)
		return f_invalidate(qp, wqe->key);
	for (i = 0; i < NMR; i++) {
		struct fmr *m = &n->mr[i];

		if (m->used && (m->key >> 8) == (wqe->key >> 8)) {
			if (!m->fastreg || m->valid)
				return RNIC_ERR_KEY_STATE;
			m->key = wqe->key;
			m->valid = true;
			return 0;
		}
	}
	return RNIC_ERR_BAD_KEY;
}

static void wire_push(struct world *w, int to, const u8 *pkt, size_t len,
		      u64 at)
{
	struct wpkt *p;

	if (w->nq == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->q = realloc(w->q, w->cap * sizeof(*w->q));
	}
	p = &w->q[w->nq++];
	memcpy(p->data, pkt, len);
	p->len = len;
	p->to = to;
	p->at = at;
	p->seq = w->seq++;
}

static int f_emit(struct rc_qp *qp, const u8 *pkt, size_t len)
{
	struct node *n = node_of(qp);
	struct world *w = n->w;
	u8 buf[RC_PKT_MAX];
	u64 at = w->now + LAT_NS;

	if (n->eagain) {
		n->eagain--;
		return -EAGAIN;
	}
	if (n->link_down)
		return -ENETDOWN;
	if (len > sizeof(buf)) {
		test_fail(__FILE__, __LINE__, "packet of %zu bytes", len);
		return 0;
	}
	memcpy(buf, pkt, len);
	w->wire_pkts[n->id]++;
	if (w->tap && !w->tap(w, n->id, buf, &len))
		return 0;
	if (w->drop_pm && rnd(w) % 10000 < w->drop_pm) {
		w->dropped++;
		return 0;
	}
	if (w->reorder_pm && rnd(w) % 10000 < w->reorder_pm)
		at += LAT_NS * (1 + rnd(w) % 4);
	wire_push(w, !n->id, buf, len, at);
	if (w->dup_pm && rnd(w) % 10000 < w->dup_pm)
		wire_push(w, !n->id, buf, len, at + rnd(w) % (3 * LAT_NS));
	return 0;
}

static int f_complete(struct rc_qp *qp, const struct rc_cqe *cqe)
{
	struct node *n = node_of(qp);

	if (n->cq_fail)
		return -ENOSPC;
	if (cqe->opcode & RNIC_CQE_OP_RECV_BIT) {
		if (n->nrcq < NCQE)
			n->rcq[n->nrcq++] = *cqe;
	} else {
		if (n->nscq < NCQE)
			n->scq[n->nscq++] = *cqe;
	}
	return 0;
}

static void f_event(struct rc_qp *qp, u8 type, u8 reason, u64 info)
{
	struct node *n = node_of(qp);

	if (n->nev < NEV)
		n->ev[n->nev++] = (struct fev){ type, reason, info };
}

static void f_wake(struct rc_qp *qp)
{
	node_of(qp)->woken = true;
}

static u64 f_now(struct rc_qp *qp)
{
	return node_of(qp)->w->now;
}

static void f_timer_set(struct rc_qp *qp, u64 deadline)
{
	node_of(qp)->deadline = deadline;
}

static const struct rc_ops f_ops = {
	.sq_peek = f_sq_peek,
	.rq_take = f_rq_take,
	.mem = f_mem,
	.atomic = f_atomic,
	.invalidate = f_invalidate,
	.local_op = f_local_op,
	.emit = f_emit,
	.complete = f_complete,
	.event = f_event,
	.wake = f_wake,
	.now_ns = f_now,
	.timer_set = f_timer_set,
};

/* ------------------------------------------------------------------------
 * Setup
 */

struct conn {
	u8 pmtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 access;
	u32 psn[2];
};

static const struct conn conn_default = {
	.pmtu = RNIC_PMTU_1024,
	.timeout = 10,		/* 4.2 ms */
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 1,	/* 10 us */
	.max_rd_atomic = 16,
	.max_dest_rd_atomic = 16,
	.access = RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
		  RNIC_ACCESS_REMOTE_ATOMIC,
	/* near the 2^24 wrap on purpose */
	.psn = { 0xfffff0, 0x7ffff8 },
};

static u8 node_modify(struct node *n, u8 state, u32 mask,
		      const struct conn *c)
{
	int me = n->id;
	struct rc_attr a = {
		.mask = mask | RNIC_QP_ATTR_STATE,
		.state = state,
		.path_mtu = c->pmtu,
		.access = c->access,
		.timeout = c->timeout,
		.retry_cnt = c->retry_cnt,
		.rnr_retry = c->rnr_retry,
		.min_rnr_timer = c->min_rnr_timer,
		.max_rd_atomic = c->max_rd_atomic,
		.max_dest_rd_atomic = c->max_dest_rd_atomic,
		.sq_psn = c->psn[me],
		.rq_psn = c->psn[!me],
		.dest_qpn = n->w->n[!me].qp.qpn,
	};

	return rc_modify(&n->qp, &a);
}

#define A(x)	RNIC_QP_ATTR_##x
#define M_INIT	(A(PKEY_INDEX) | A(ACCESS))
#define M_RTR	(A(PATH) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | \
		 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER))
#define M_RTS	(A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | \
		 A(MAX_RD_ATOMIC))

static struct world *world_new(const struct conn *c, u64 seed)
{
	struct world *w = calloc(1, sizeof(*w));
	int i;

	w->rng = seed ? seed : 1;
	for (i = 0; i < 2; i++) {
		struct node *n = &w->n[i];

		n->w = w;
		n->id = i;
		n->bad_sq_idx = -1;
		n->sq = calloc(SQN, sizeof(*n->sq));
		n->rq = calloc(RQN, sizeof(*n->rq));
		n->scq = calloc(NCQE, sizeof(*n->scq));
		n->rcq = calloc(NCQE, sizeof(*n->rcq));
		rc_qp_init(&n->qp, &f_ops, n, 0x100 + 0x11 * (i + 1));
		n->qp.port_stats = n->port_stats;
	}
	for (i = 0; i < 2; i++) {
		struct node *n = &w->n[i];

		CHECK_EQ(node_modify(n, RNIC_QPS_INIT, M_INIT, c), 0);
		CHECK_EQ(node_modify(n, RNIC_QPS_RTR, M_RTR, c), 0);
		CHECK_EQ(node_modify(n, RNIC_QPS_RTS, M_RTS, c), 0);
	}
	return w;
}

static void world_free(struct world *w)
{
	int i, j;

	for (i = 0; i < 2; i++) {
		free(w->n[i].sq);
		free(w->n[i].rq);
		free(w->n[i].scq);
		free(w->n[i].rcq);
		for (j = 0; j < NMR; j++)
			free(w->n[i].mr[j].buf);
	}
	free(w->q);
	free(w);
}

/* A memory region: key index @idx, variant 1; filled with a pattern. */
static struct fmr *mr_add(struct node *n, int slot, u64 va, u32 len,
			  u8 access)
{
	struct fmr *m = &n->mr[slot];
	u32 i;

	free(m->buf);
	memset(m, 0, sizeof(*m));
	m->used = true;
	m->valid = true;
	m->key = rnic_key_build(0x10 + slot + 0x40 * n->id, 1);
	m->va = va;
	m->len = len;
	m->access = access;
	m->buf = malloc(len ? len : 1);
	for (i = 0; i < len; i++)
		m->buf[i] = (u8)(i * 7 + slot * 13 + n->id * 101 + 1);
	return m;
}

#define ALL_ACCESS	(RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE | \
			 RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

static struct rc_swqe *sq_post(struct node *n, u8 opcode, u8 flags)
{
	struct rc_swqe *s = &n->sq[n->sq_pi % SQN];

	memset(s, 0, sizeof(*s));
	s->opcode = opcode;
	s->flags = flags | RNIC_SQE_F_SIGNALED;
	s->idx = n->sq_pi++;
	return s;
}

static void sge_add(struct rc_swqe *s, const struct fmr *m, u64 off, u32 len)
{
	s->sge[s->num_sge++] = (struct rc_sge){ m->va + off, len, m->key };
	s->length += len;
}

static void rq_post(struct node *n, const struct fmr *m, u64 off, u32 len)
{
	struct rc_rwqe *r = &n->rq[n->rq_pi++ % RQN];

	memset(r, 0, sizeof(*r));
	if (m) {
		r->num_sge = 1;
		r->sge[0] = (struct rc_sge){ m->va + off, len, m->key };
	}
}

static void ring(struct node *n)
{
	rc_sq_doorbell(&n->qp);
}

/* Deliver the earliest packet due now, if any. */
static bool wire_deliver(struct world *w)
{
	int i, best = -1;
	struct wpkt p;

	for (i = 0; i < w->nq; i++)
		if (w->q[i].at <= w->now &&
		    (best < 0 || w->q[i].at < w->q[best].at ||
		     (w->q[i].at == w->q[best].at &&
		      w->q[i].seq < w->q[best].seq)))
			best = i;
	if (best < 0)
		return false;
	p = w->q[best];
	w->q[best] = w->q[--w->nq];
	rc_rx(&w->n[p.to].qp, p.data, p.len);
	return true;
}

/*
 * Run until nothing is in flight, nothing wants to send and no timer is
 * set, or @limit_ns of virtual time passed. Frames due at the same time
 * are a receive batch: both sides transmit only after it.
 */
static void world_run(struct world *w, u64 limit_ns)
{
	u64 end = w->now + limit_ns;
	unsigned int guard = 0;

	while (w->now <= end && guard++ < 20000000) {
		bool busy = false;
		u64 next = UINT64_MAX;
		int i;

		while (wire_deliver(w))
			busy = true;
		for (i = 0; i < 2; i++) {
			struct node *n = &w->n[i];

			if (n->deadline && n->deadline <= w->now) {
				rc_timer(&n->qp);
				busy = true;
			}
			if (n->woken || rc_tx_pending(&n->qp)) {
				int refused = n->eagain;

				n->woken = false;
				/* a refused packet is offered again later */
				if (rc_tx(&n->qp, 64) || n->eagain != refused)
					busy = true;
			}
		}
		if (busy)
			continue;
		for (i = 0; i < w->nq; i++)
			if (w->q[i].at < next)
				next = w->q[i].at;
		for (i = 0; i < 2; i++)
			if (w->n[i].deadline && w->n[i].deadline < next)
				next = w->n[i].deadline;
		if (next == UINT64_MAX)
			return;
		w->now = next > w->now ? next : w->now + 1;
	}
}

static int count_events(const struct node *n, u8 type)
{
	int i, k = 0;

	for (i = 0; i < n->nev; i++)
		k += n->ev[i].type == type;
	return k;
}

/* Signaled send completions only (what the driver would see as CQEs). */
static int scq_visible(const struct node *n, struct rc_cqe *out, int max)
{
	int i, k = 0;

	for (i = 0; i < n->nscq; i++)
		if (!(n->scq[i].flags & RC_CQE_F_SILENT) && k < max)
			out[k++] = n->scq[i];
	return k;
}

#define STAT(n, name)	((n)->qp.stats[RNIC_RDMA_STAT_##name])

/* ------------------------------------------------------------------------
 * Packets
 */

TEST(rc_pkt_round_trip)
{
	static const u8 ops[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x16, 0x17,
	};
	u8 buf[RC_PKT_MAX], payload[13];
	unsigned int i, plen, cut;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (u8)(0xa0 + i);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (plen = 0; plen <= sizeof(payload); plen += 5) {
			struct rc_hdr h = {
				.opcode = ops[i], .se = i & 1, .ackreq = i & 2,
				.pkey = 0x8123, .dest_qpn = 0xabcdef,
				.psn = 0xfedcba, .va = 0x0102030405060708ULL,
				.rkey = 0x11223344, .dma_len = 0x55667788,
				.syndrome = 0x61, .msn = 0x123456,
				.imm = cpu_to_be32(0xdeadbeef),
				.inv_key = 0xcafef00d,
				.swap_add = 0x1111222233334444ULL,
				.compare = 0x5555666677778888ULL,
				.orig = 0x99990000aaaabbbbULL,
			}, p;
			size_t len = rc_pkt_build(buf, &h, payload, plen);
			int mask = rc_hdr_mask(ops[i]);

			REQUIRE(mask >= 0);
			CHECK_EQ(len % 4, 0);
			CHECK_EQ(len, rc_hdr_len(ops[i]) + ((plen + 3) & ~3u));
			REQUIRE(rc_pkt_parse(buf, len, &p) == 0);
			CHECK_EQ(p.opcode, ops[i]);
			CHECK_EQ(p.se, h.se);
			CHECK_EQ(p.ackreq, h.ackreq);
			CHECK_EQ(p.pkey, 0x8123);
			CHECK_EQ(p.dest_qpn, 0xabcdef);
			CHECK_EQ(p.psn, 0xfedcba);
			CHECK_EQ(p.mask, (u32)mask);
			CHECK_EQ(p.payload_len, plen);
			CHECK_EQ(p.pad, (4 - plen % 4) % 4);
			CHECK(test_mem_eq(__FILE__, __LINE__, "payload",
					  p.payload, payload, plen));
			if (mask & (RC_HDR_RETH | RC_HDR_ATOMICETH)) {
				CHECK_EQ(p.va, h.va);
				CHECK_EQ(p.rkey, h.rkey);
			}
			if (mask & RC_HDR_RETH)
				CHECK_EQ(p.dma_len, h.dma_len);
			if (mask & RC_HDR_ATOMICETH) {
				CHECK_EQ(p.swap_add, h.swap_add);
				CHECK_EQ(p.compare, h.compare);
			}
			if (mask & RC_HDR_AETH) {
				CHECK_EQ(p.syndrome, 0x61);
				CHECK_EQ(p.msn, 0x123456);
			}
			if (mask & RC_HDR_ATOMICACKETH)
				CHECK_EQ(p.orig, h.orig);
			if (mask & RC_HDR_IMMDT)
				CHECK_EQ(p.imm, h.imm);
			if (mask & RC_HDR_IETH)
				CHECK_EQ(p.inv_key, h.inv_key);
			/* Every truncation fails cleanly (ASan sees reads). */
			for (cut = 0; cut < len; cut++) {
				u8 *copy = malloc(cut ? cut : 1);
				struct rc_hdr q;

				memcpy(copy, buf, cut);
				if (cut < rc_hdr_len(ops[i]) || cut % 4)
					CHECK(rc_pkt_parse(copy, cut, &q) != 0);
				free(copy);
			}
		}
	}
	/* Wire layout of a BTH, byte by byte (IB 9.2). */
	{
		struct rc_hdr h = { .opcode = RC_OP_SEND_LAST, .se = true,
				    .ackreq = true, .pkey = 0xffff,
				    .dest_qpn = 0x000123, .psn = 0x456789 };
		static const u8 want[] = { 0x02, 0xb0, 0xff, 0xff, 0x00, 0x00,
					   0x01, 0x23, 0x80, 0x45, 0x67, 0x89,
					   0x41, 0x00, 0x00, 0x00 };

		CHECK_EQ(rc_pkt_build(buf, &h, "A", 1), 16);
		CHECK_MEM_EQ(buf, want, sizeof(want));
	}
	/* TVer, reserved opcode, non-RC opcode, pad beyond the payload */
	{
		struct rc_hdr h = { .opcode = RC_OP_SEND_ONLY }, q;
		size_t len = rc_pkt_build(buf, &h, payload, 4);

		buf[1] |= 1;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[1] &= ~1;
		buf[0] = 0x15;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[0] = 0x64;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[0] = RC_OP_SEND_ONLY;
		CHECK_EQ(rc_pkt_parse(buf, RC_BTH_LEN, &q), 0);
		buf[1] |= 0x30;
		CHECK(rc_pkt_parse(buf, RC_BTH_LEN, &q) != 0);
		CHECK_EQ(rc_pkt_parse(buf, len, &q), 0);
		CHECK_EQ(q.payload_len, 1);
	}
	CHECK(rc_psn_after(0, 0xffffff));
	CHECK(!rc_psn_after(0xffffff, 0));
	CHECK(rc_psn_after(0x7fffff, 0));
	CHECK(!rc_psn_after(0x800000, 0));
	CHECK_EQ(rc_psn_add(0xfffffe, 3), 1);
}

/* ------------------------------------------------------------------------
 * MODIFY_QP
 */

TEST(rc_modify_transitions)
{
	struct rc_qp qp;
	struct rc_attr a = { 0 };
	struct world *w = world_new(&conn_default, 1);

	rc_qp_init(&qp, &f_ops, &w->n[0], 5);
	CHECK_EQ(qp.state, RNIC_QPS_RESET);
	/* RESET->RTR skips INIT */
	a.mask = A(STATE) | M_RTR;
	a.state = RNIC_QPS_RTR;
	a.path_mtu = RNIC_PMTU_1024;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	/* INIT needs PKEY_INDEX and ACCESS, and takes nothing else */
	a.mask = A(STATE) | A(ACCESS);
	a.state = RNIC_QPS_INIT;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_INIT | A(QKEY);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_INIT;
	a.access = 0x10;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.access = RNIC_ACCESS_REMOTE_WRITE;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_INIT);
	/* INIT->RTR: each required attribute, and bad values */
	a.mask = A(STATE) | (M_RTR & ~A(RQ_PSN));
	a.state = RNIC_QPS_RTR;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_RTR;
	a.path_mtu = 6;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.path_mtu = RNIC_PMTU_2048;
	a.max_dest_rd_atomic = 17;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.max_dest_rd_atomic = 4;
	a.rq_psn = 0x1000000;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.rq_psn = 0x123;
	a.mask |= A(CUR_STATE);
	a.cur_state = RNIC_QPS_RESET;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.cur_state = RNIC_QPS_INIT;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_RTR);
	CHECK_EQ(qp.mtu, 2048);
	CHECK_EQ(rc_rq_psn(&qp), 0x123);
	/* RTR->RTS */
	a.mask = A(STATE) | M_RTS;
	a.state = RNIC_QPS_RTS;
	a.retry_cnt = 8;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.retry_cnt = 7;
	a.timeout = 32;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.timeout = 14;
	a.sq_psn = 0xabc;
	a.mask |= A(PATH_MTU);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask &= ~A(PATH_MTU);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(rc_sq_psn(&qp), 0xabc);
	/* attribute-only change, SQE never, SQD and back */
	a.mask = A(MIN_RNR_TIMER);
	a.min_rnr_timer = 12;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.min_rnr_timer, 12);
	a.mask = A(STATE);
	a.state = RNIC_QPS_SQE;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.mask = A(STATE) | A(SQD_NOTIFY);
	a.state = RNIC_QPS_SQD;
	a.sqd_notify = 1;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	/* drained at once: SQ_DRAINED now */
	CHECK_EQ(count_events(&w->n[0], RNIC_EQE_SQ_DRAINED), 1);
	a.mask = A(STATE) | A(PATH_MTU) | A(TIMEOUT);
	a.path_mtu = RNIC_PMTU_256;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.mtu, 256);
	a.mask = A(STATE);
	a.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	/* to ERR and RESET: nothing but the state */
	a.mask = A(STATE) | A(ACCESS);
	a.state = RNIC_QPS_ERR;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_ERR);
	a.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.state = RNIC_QPS_RESET;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_RESET);
	CHECK_EQ(rc_sq_psn(&qp), 0);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Every opcode, data verified, at every path MTU
 */

static void fill(struct fmr *m, u64 off, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		m->buf[off + i] = (u8)(seed + i * 131 + (i >> 8));
}

/* One message from node 0 to node 1; returns false on any failure. */
static void one_op(struct world *w, u8 op, u32 len, u32 seed)
{
	struct node *a = &w->n[0], *b = &w->n[1];
	struct fmr *la = &a->mr[0], *rb = &b->mr[0], *inv = &b->mr[3];
	int ns = a->nscq, nr = b->nrcq;
	u64 loff = 3 + seed % 64, roff = 8 * (1 + seed % 32);
	struct rc_swqe *s;
	u64 before = 0, after, v;

	if (op == RNIC_SQE_OP_CMP_SWAP || op == RNIC_SQE_OP_FETCH_ADD)
		len = 8;
	fill(la, loff, len, seed);
	fill(rb, roff, len, seed + 77);
	memcpy(&before, rb->buf + roff, op >= RNIC_SQE_OP_CMP_SWAP ? 8 : 0);
	s = sq_post(a, op, RNIC_SQE_F_SOLICITED);
	sge_add(s, la, loff, len);
	s->remote_addr = rb->va + roff;
	s->rkey = rb->key;
	s->imm_data = cpu_to_be32(seed);
	if (op == RNIC_SQE_OP_SEND_INV) {
		inv->valid = true;
		s->key = inv->key;
	}
	if (op == RNIC_SQE_OP_CMP_SWAP) {
		s->compare_add = seed & 1 ? before : before + 1;
		s->swap = 0x1234567890abcdefULL + seed;
	} else if (op == RNIC_SQE_OP_FETCH_ADD) {
		s->compare_add = 0x100000001ULL * seed;
	}
	if (op <= RNIC_SQE_OP_SEND_INV || op == RNIC_SQE_OP_WRITE_IMM)
		rq_post(b, rb, roff, op == RNIC_SQE_OP_WRITE_IMM ? 0 : len);
	ring(a);
	world_run(w, 1000000000ULL);

	REQUIRE(a->nscq == ns + 1);
	CHECK_EQ(a->scq[ns].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[ns].opcode, op);
	CHECK_EQ(a->scq[ns].byte_len, len);
	CHECK_EQ(a->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	switch (op) {
	case RNIC_SQE_OP_READ:
		CHECK(test_mem_eq(__FILE__, __LINE__, "read", la->buf + loff,
				  rb->buf + roff, len));
		break;
	case RNIC_SQE_OP_CMP_SWAP:
	case RNIC_SQE_OP_FETCH_ADD:
		memcpy(&v, la->buf + loff, 8);
		CHECK_EQ(v, before);
		memcpy(&after, rb->buf + roff, 8);
		if (op == RNIC_SQE_OP_FETCH_ADD)
			CHECK_EQ(after, before + s->compare_add);
		else
			CHECK_EQ(after, seed & 1 ? s->swap : before);
		break;
	default:
		CHECK(test_mem_eq(__FILE__, __LINE__, "data", rb->buf + roff,
				  la->buf + loff, len));
		break;
	}
	if (op <= RNIC_SQE_OP_SEND_INV || op == RNIC_SQE_OP_WRITE_IMM) {
		REQUIRE(b->nrcq == nr + 1);
		CHECK_EQ(b->rcq[nr].status, RNIC_WC_SUCCESS);
		CHECK_EQ(b->rcq[nr].byte_len, len);
		CHECK(b->rcq[nr].flags & RC_CQE_F_SOLICITED);
		CHECK_EQ(b->rcq[nr].opcode, op == RNIC_SQE_OP_WRITE_IMM ?
			 RNIC_CQE_OP_RECV_WRITE_IMM : RNIC_CQE_OP_RECV);
		if (op == RNIC_SQE_OP_SEND_IMM || op == RNIC_SQE_OP_WRITE_IMM) {
			CHECK(b->rcq[nr].flags & RNIC_RCQE_F_IMM);
			CHECK_EQ(b->rcq[nr].imm_data, cpu_to_be32(seed));
		} else if (op == RNIC_SQE_OP_SEND_INV) {
			CHECK(b->rcq[nr].flags & RNIC_RCQE_F_INV);
			CHECK_EQ(b->rcq[nr].inv_key, inv->key);
			CHECK(!inv->valid);
		} else {
			CHECK_EQ(b->rcq[nr].flags & (RNIC_RCQE_F_IMM |
						     RNIC_RCQE_F_INV), 0);
		}
	} else {
		CHECK_EQ(b->nrcq, nr);
	}
}

TEST(rc_every_opcode_every_mtu)
{
	static const u8 ops[] = {
		RNIC_SQE_OP_SEND, RNIC_SQE_OP_SEND_IMM, RNIC_SQE_OP_SEND_INV,
		RNIC_SQE_OP_WRITE, RNIC_SQE_OP_WRITE_IMM, RNIC_SQE_OP_READ,
		RNIC_SQE_OP_CMP_SWAP, RNIC_SQE_OP_FETCH_ADD,
	};
	u8 pmtu;
	u32 seed = 1;

	for (pmtu = RNIC_PMTU_256; pmtu <= RNIC_PMTU_4096; pmtu++) {
		struct conn c = conn_default;
		u32 mtu = rnic_pmtu_bytes(pmtu);
		const u32 lens[] = { 0, 1, 3, mtu - 1, mtu, mtu + 1,
				     3 * mtu + 5, 40 * mtu, 100000 };
		struct world *w;
		unsigned int i, j;
		u64 pkts;

		c.pmtu = pmtu;
		w = world_new(&c, pmtu);
		mr_add(&w->n[0], 0, 0x10000, 1 << 18, ALL_ACCESS);
		mr_add(&w->n[1], 0, 0x7000000000ULL, 1 << 18, ALL_ACCESS);
		mr_add(&w->n[1], 3, 0x900000, 4096, ALL_ACCESS)->fastreg = true;
		for (i = 0; i < ARRAY_SIZE(ops); i++) {
			for (j = 0; j < ARRAY_SIZE(lens); j++) {
				pkts = w->wire_pkts[0];
				one_op(w, ops[i], lens[j], seed++);
				if (test_failed()) {
					fprintf(stderr, "# mtu %u op %u len %u\n",
						mtu, ops[i], lens[j]);
					world_free(w);
					return;
				}
				/* Segmentation: exactly ceil(len / mtu). */
				if (ops[i] != RNIC_SQE_OP_READ &&
				    ops[i] < RNIC_SQE_OP_CMP_SWAP)
					CHECK_EQ(w->wire_pkts[0] - pkts,
						 lens[j] ? (lens[j] + mtu - 1) / mtu : 1);
			}
		}
		CHECK_EQ(STAT(&w->n[0], retransmits), 0);
		CHECK_EQ(STAT(&w->n[1], duplicate_requests), 0);
		CHECK_EQ(STAT(&w->n[1], resp_res_exhausted), 0);
		CHECK_EQ(STAT(&w->n[1], read_requests_rcvd),
			 ARRAY_SIZE(lens));
		CHECK_EQ(STAT(&w->n[1], atomic_requests_rcvd),
			 2 * ARRAY_SIZE(lens));
		CHECK_EQ(w->n[0].port_stats[RNIC_RDMA_STAT_rc_req_packets],
			 STAT(&w->n[0], rc_req_packets));
		world_free(w);
	}
}

/* ------------------------------------------------------------------------
 * Random WQE streams against a reference model, on clean and lossy wires
 */

#define L_SRC		0x00000		/* requester: payload source */
#define L_RD		0x40000		/* requester: READ destinations */
#define L_AT		0x80000		/* requester: atomic results */
#define R_W		0x00000		/* responder: WRITE targets */
#define R_S		0x40000		/* responder: READ sources, static */
#define R_AT		0x80000		/* responder: atomic targets */
#define R_RECV		0xc0000		/* responder: receive buffers */
#define AREA		0x40000
#define NSLOT		64		/* atomic target slots */
#define MEMSZ		0x100000

struct expect {
	u8 op;
	u32 len;
	u64 loff;		/* READ destination / atomic result */
	u64 roff;		/* source of a READ */
	u64 orig;		/* atomic original value */
	bool recv;		/* consumed a receive WQE */
	u64 recv_off;
	__be32 imm;
};

struct gen {
	struct node *src;
	struct node *dst;
	u8 *model_w;		/* what dst's R_W area must hold */
	u64 model_at[NSLOT];
	struct expect *exp;
	int nexp;
	int scq0;
	int rcq0;
	u64 msgs;
	u64 bytes;
	/* knobs */
	bool small;		/* messages of 0..64 bytes, many per batch */
	bool local_ops;		/* LOCAL_INV / REG_MR among them */
	bool late;		/* half the receive WQEs posted late: RNR */
	/* receive WQEs the batch needs, posted in this order */
	struct rc_rwqe *rcv;
	int nrcv;
	int rcv_posted;
	u8 fr_variant;		/* FAST_REG MR (src slot 5) */
	bool fr_valid;
};

static u32 rnd_len(struct world *w, const struct gen *g, u32 max)
{
	u32 r = rnd(w) % 100, len;

	if (g->small)
		len = rnd(w) % 65;
	else if (r < 45)
		len = rnd(w) % 300;
	else if (r < 90)
		len = rnd(w) % 8192;
	else
		len = rnd(w) % 65536;
	return len < max ? len : max;
}

static void gen_init(struct gen *g, struct node *src, struct node *dst)
{
	int i;

	memset(g, 0, sizeof(*g));
	g->src = src;
	g->dst = dst;
	g->model_w = malloc(AREA);
	memcpy(g->model_w, dst->mr[1].buf + R_W, AREA);
	for (i = 0; i < NSLOT; i++)
		memcpy(&g->model_at[i], dst->mr[1].buf + R_AT + 8 * i, 8);
	g->exp = calloc(SQN, sizeof(*g->exp));
	g->rcv = calloc(RQN, sizeof(*g->rcv));
	g->fr_valid = true;
	g->fr_variant = 1;
	mr_add(src, 5, 0x5000000, 4096, ALL_ACCESS)->fastreg = true;
}

/* Post the batch's receive WQEs, up to @upto of them. */
static void gen_post_recv(struct gen *g, int upto)
{
	struct node *d = g->dst;

	while (g->rcv_posted < g->nrcv && g->rcv_posted < upto)
		d->rq[d->rq_pi++ % RQN] = g->rcv[g->rcv_posted++];
}

static void gen_free(struct gen *g)
{
	free(g->model_w);
	free(g->exp);
	free(g->rcv);
}

/* Post up to @max random WQEs, as much as the areas hold. */
static void gen_batch(struct world *w, struct gen *g, int max)
{
	struct node *s = g->src, *d = g->dst;
	struct fmr *lm = &s->mr[0], *rm = &d->mr[1];
	u64 src_used = 0, rd_used = 0, recv_used = 0;
	int i;

	g->nexp = 0;
	g->nrcv = 0;
	g->rcv_posted = 0;
	g->scq0 = s->nscq;
	g->rcq0 = d->nrcq;
	for (i = 0; i < AREA; i++)
		lm->buf[L_SRC + i] = (u8)rnd(w);
	for (i = 0; i < max; i++) {
		struct expect *e = &g->exp[g->nexp];
		u32 kind = rnd(w) % 100, len, nsge, k;
		u8 flags = rnd(w) % 8 == 0 ? RNIC_SQE_F_FENCE : 0;
		struct rc_swqe *q;
		u64 off;

		memset(e, 0, sizeof(*e));
		if (g->local_ops && rnd(w) % 20 == 0) {
			struct fmr *fr = &s->mr[5];

			/* invalidate, or register again with a new variant */
			e->op = g->fr_valid ? RNIC_SQE_OP_LOCAL_INV :
					      RNIC_SQE_OP_REG_MR;
			if (!g->fr_valid)
				g->fr_variant++;
			q = sq_post(s, e->op, flags);
			q->key = rnic_key_build(fr->key >> 8, g->fr_variant);
			g->fr_valid = !g->fr_valid;
			g->nexp++;
			continue;
		}
		if (kind < 30)
			e->op = RNIC_SQE_OP_SEND + rnd(w) % 2;
		else if (kind < 60)
			e->op = RNIC_SQE_OP_WRITE + rnd(w) % 2;
		else if (kind < 85)
			e->op = RNIC_SQE_OP_READ;
		else
			e->op = RNIC_SQE_OP_CMP_SWAP + rnd(w) % 2;
		if (e->op >= RNIC_SQE_OP_CMP_SWAP) {
			len = 8;
		} else if (e->op == RNIC_SQE_OP_READ) {
			len = rnd_len(w, g, AREA - rd_used);
		} else {
			len = rnd_len(w, g, AREA - src_used);
			if (e->op <= RNIC_SQE_OP_SEND_IMM &&
			    len > AREA - recv_used)
				len = AREA - recv_used;
		}
		e->len = len;
		q = sq_post(s, e->op, flags);
		e->imm = q->imm_data = cpu_to_be32(rnd(w));
		switch (e->op) {
		case RNIC_SQE_OP_READ:
			e->loff = L_RD + rd_used;
			e->roff = R_S + rnd(w) % (AREA - len + 1);
			q->remote_addr = rm->va + e->roff;
			q->rkey = rm->key;
			off = e->loff;
			rd_used += len;
			break;
		case RNIC_SQE_OP_CMP_SWAP:
		case RNIC_SQE_OP_FETCH_ADD:
			k = rnd(w) % NSLOT;
			e->loff = L_AT + 8 * g->nexp;
			q->remote_addr = rm->va + R_AT + 8 * k;
			q->rkey = rm->key;
			e->orig = g->model_at[k];
			if (e->op == RNIC_SQE_OP_FETCH_ADD) {
				q->compare_add = ((u64)rnd(w) << 32) | rnd(w);
				g->model_at[k] += q->compare_add;
			} else {
				q->compare_add = rnd(w) % 2 ? e->orig : rnd(w);
				q->swap = ((u64)rnd(w) << 32) | rnd(w);
				if (q->compare_add == e->orig)
					g->model_at[k] = q->swap;
			}
			off = e->loff;
			break;
		default:
			off = L_SRC + src_used;
			src_used += len;
			if (e->op >= RNIC_SQE_OP_WRITE) {
				u64 t = R_W + rnd(w) % (AREA - len + 1);

				q->remote_addr = rm->va + t;
				q->rkey = rm->key;
				memcpy(g->model_w + t, lm->buf + off, len);
			}
			break;
		}
		/* Scatter the local side over up to 4 SGEs. */
		nsge = len >= 4 && e->op < RNIC_SQE_OP_CMP_SWAP ?
		       1 + rnd(w) % 4 : 1;
		{
			u32 left = len, at = 0;

			for (k = 0; k < nsge; k++) {
				u32 part = k + 1 == nsge ? left :
					   rnd(w) % (left + 1);

				sge_add(q, lm, off + at, part);
				at += part;
				left -= part;
			}
		}
		if (rnd(w) % 4 == 0)
			q->flags &= ~RNIC_SQE_F_SIGNALED;
		if (e->op <= RNIC_SQE_OP_SEND_IMM ||
		    e->op == RNIC_SQE_OP_WRITE_IMM) {
			struct rc_rwqe *rw = &g->rcv[g->nrcv++];

			e->recv = true;
			e->recv_off = R_RECV + recv_used;
			/* A receive WQE a bit larger than the message. */
			memset(rw, 0, sizeof(*rw));
			rw->num_sge = 1;
			rw->sge[0] = (struct rc_sge){
				rm->va + e->recv_off,
				e->op == RNIC_SQE_OP_WRITE_IMM ? 0 : len + 16,
				rm->key };
			if (e->op != RNIC_SQE_OP_WRITE_IMM)
				recv_used += len;
		}
		g->msgs++;
		g->bytes += len;
		g->nexp++;
		if (src_used >= AREA || rd_used >= AREA ||
		    recv_used >= AREA - 16 || g->nrcv >= RQN / 2 - 1)
			break;
	}
	gen_post_recv(g, g->late ? g->nrcv / 2 : g->nrcv);
	/* The last one signaled, so that every WQE is seen retired. */
	s->sq[(u16)(s->sq_pi - 1) % SQN].flags |= RNIC_SQE_F_SIGNALED;
	ring(s);
}

static void gen_check(struct world *w, struct gen *g)
{
	struct node *s = g->src, *d = g->dst;
	struct fmr *lm = &s->mr[0], *rm = &d->mr[1];
	int i, r = g->rcq0, k;

	(void)w;
	REQUIRE(s->nscq - g->scq0 == g->nexp);
	for (i = 0; i < g->nexp; i++) {
		const struct rc_cqe *c = &s->scq[g->scq0 + i];
		const struct expect *e = &g->exp[i];

		CHECK_EQ(c->status, RNIC_WC_SUCCESS);
		CHECK_EQ(c->opcode, e->op);
		if (c->status) {
			fprintf(stderr, "# wqe %d of %d: op %u len %u status %u "
				"syndrome %u\n", i, g->nexp, e->op, e->len,
				c->status, c->syndrome);
			return;
		}
		if (e->op == RNIC_SQE_OP_READ) {
			CHECK(test_mem_eq(__FILE__, __LINE__, "read",
					  lm->buf + e->loff, rm->buf + e->roff,
					  e->len));
		} else if (e->op == RNIC_SQE_OP_CMP_SWAP ||
			   e->op == RNIC_SQE_OP_FETCH_ADD) {
			u64 v;

			memcpy(&v, lm->buf + e->loff, 8);
			CHECK_EQ(v, e->orig);
		}
		if (!e->recv)
			continue;
		REQUIRE(r < d->nrcq);
		CHECK_EQ(d->rcq[r].status, RNIC_WC_SUCCESS);
		CHECK_EQ(d->rcq[r].byte_len, e->len);
		CHECK_EQ(d->rcq[r].wqe_idx, (u16)(d->rq_ci - (d->nrcq - g->rcq0) +
						 (r - g->rcq0)));
		if (e->op == RNIC_SQE_OP_SEND_IMM ||
		    e->op == RNIC_SQE_OP_WRITE_IMM)
			CHECK_EQ(d->rcq[r].imm_data, e->imm);
		if (e->op != RNIC_SQE_OP_WRITE_IMM) {
			const struct rc_swqe *q = &s->sq[(u16)(s->sq_pi -
						 g->nexp + i) % SQN];
			u32 at = 0;

			/* Compare against the gathered source SGEs. */
			for (k = 0; k < q->num_sge; k++) {
				CHECK(test_mem_eq(__FILE__, __LINE__, "recv",
						  rm->buf + e->recv_off + at,
						  lm->buf + (q->sge[k].addr -
							     lm->va),
						  q->sge[k].len));
				at += q->sge[k].len;
			}
		}
		r++;
	}
	CHECK_EQ(r, d->nrcq);
	CHECK(test_mem_eq(__FILE__, __LINE__, "write area",
			  rm->buf + R_W, g->model_w, AREA));
	for (k = 0; k < NSLOT; k++) {
		u64 v;

		memcpy(&v, rm->buf + R_AT + 8 * k, 8);
		CHECK_EQ(v, g->model_at[k]);
	}
}

struct stream_cfg {
	u8 pmtu;
	unsigned int drop_pm;
	unsigned int dup_pm;
	unsigned int reorder_pm;
	u64 seed;
	int batches;
	bool both;		/* both directions at once */
	bool small;
	bool local_ops;
	bool late;
	int per_batch;		/* 0: 200 */
};

static void run_stream(const struct stream_cfg *sc)
{
	struct conn c = conn_default;
	struct world *w;
	struct gen g[2];
	int b, i, nd = sc->both ? 2 : 1;

	c.pmtu = sc->pmtu;
	w = world_new(&c, sc->seed);
	/* Slot 0: what a node sends from and reads into; 1: the peer's. */
	for (i = 0; i < 2; i++) {
		mr_add(&w->n[i], 0, 0x1000000 * (i + 1), MEMSZ, ALL_ACCESS);
		mr_add(&w->n[i], 1, 0x3000000 * (i + 1), MEMSZ, ALL_ACCESS);
	}
	for (i = 0; i < nd; i++) {
		gen_init(&g[i], &w->n[i], &w->n[!i]);
		g[i].small = sc->small;
		g[i].local_ops = sc->local_ops;
		g[i].late = sc->late;
	}
	w->drop_pm = sc->drop_pm;
	w->dup_pm = sc->dup_pm;
	w->reorder_pm = sc->reorder_pm;
	for (b = 0; b < sc->batches && !test_failed(); b++) {
		for (i = 0; i < nd; i++)
			gen_batch(w, &g[i], sc->per_batch ? sc->per_batch : 200);
		if (sc->late) {
			/*
			 * Run until the posted receives are used up (and
			 * RNR NAKs start), then post the other half.
			 */
			int step;

			for (step = 0; step < 20000; step++) {
				bool used = true;

				world_run(w, 10000);
				for (i = 0; i < nd; i++)
					used &= g[i].dst->rq_ci ==
						g[i].dst->rq_pi;
				if (used)
					break;
			}
			world_run(w, 200000);
			for (i = 0; i < nd; i++)
				gen_post_recv(&g[i], RQN);
		}
		world_run(w, 100ULL * 1000000000ULL);
		for (i = 0; i < nd && !test_failed(); i++)
			gen_check(w, &g[i]);
		for (i = 0; i < 2; i++) {
			CHECK_EQ(w->n[i].qp.state, RNIC_QPS_RTS);
			CHECK_EQ(w->nq, 0);
		}
		if (test_failed())
			fprintf(stderr, "# batch %d seed %llu\n", b,
				(unsigned long long)sc->seed);
	}
	printf("# mtu %u drop %u dup %u reorder %u (1/10000): %llu msgs, "
	       "%llu bytes; pkts %llu+%llu, retransmits %llu+%llu, "
	       "timeouts %llu+%llu, dup req %llu+%llu, rnr %llu+%llu\n",
	       rnic_pmtu_bytes(sc->pmtu), sc->drop_pm, sc->dup_pm,
	       sc->reorder_pm, (unsigned long long)(g[0].msgs + (nd > 1 ? g[1].msgs : 0)),
	       (unsigned long long)(g[0].bytes + (nd > 1 ? g[1].bytes : 0)),
	       (unsigned long long)STAT(&w->n[0], rc_req_packets),
	       (unsigned long long)STAT(&w->n[1], rc_req_packets),
	       (unsigned long long)STAT(&w->n[0], retransmits),
	       (unsigned long long)STAT(&w->n[1], retransmits),
	       (unsigned long long)STAT(&w->n[0], local_ack_timeouts),
	       (unsigned long long)STAT(&w->n[1], local_ack_timeouts),
	       (unsigned long long)STAT(&w->n[0], duplicate_requests),
	       (unsigned long long)STAT(&w->n[1], duplicate_requests),
	       (unsigned long long)STAT(&w->n[0], rnr_naks_sent),
	       (unsigned long long)STAT(&w->n[1], rnr_naks_sent));
	for (i = 0; i < nd; i++)
		gen_free(&g[i]);
	world_free(w);
}

TEST(rc_random_stream_clean)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .seed = 11,
				 .batches = 15 };

	run_stream(&sc);
	CHECK(!test_failed());
}

TEST(rc_random_stream_both_ways_mtu256)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_256, .seed = 12,
				 .batches = 6, .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .drop_pm = 100,
				 .seed = 13, .batches = 8 };

	run_stream(&sc);
}

TEST(rc_random_stream_drop_dup_reorder_both_ways)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_4096, .drop_pm = 200,
				 .dup_pm = 200, .reorder_pm = 300, .seed = 14,
				 .batches = 6, .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_mtu512_heavy_loss)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_512, .drop_pm = 500,
				 .dup_pm = 100, .reorder_pm = 500, .seed = 15,
				 .batches = 4, .both = true };

	run_stream(&sc);
}

/* ------------------------------------------------------------------------
 * Go-back-N cost: a 64 KiB WRITE stream with 1% of packets dropped
 */

static void write_stream(u64 seed, u8 pmtu, unsigned int drop_pm)
{
	struct conn c = conn_default;
	struct world *w;
	struct node *a, *b;
	u64 carried, resent;
	int i, n = 64;

	c.pmtu = pmtu;
	w = world_new(&c, seed);
	a = &w->n[0];
	b = &w->n[1];
	mr_add(a, 0, 0x100000, 1 << 16, ALL_ACCESS);
	mr_add(b, 0, 0x200000, n << 16, ALL_ACCESS);
	w->drop_pm = drop_pm;
	for (i = 0; i < n; i++) {
		struct rc_swqe *s = sq_post(a, RNIC_SQE_OP_WRITE, 0);

		sge_add(s, &a->mr[0], 0, 1 << 16);
		s->remote_addr = b->mr[0].va + ((u64)i << 16);
		s->rkey = b->mr[0].key;
	}
	fill(&a->mr[0], 0, 1 << 16, (u32)seed);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	REQUIRE(a->nscq == n);
	for (i = 0; i < n; i++) {
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
		CHECK(test_mem_eq(__FILE__, __LINE__, "write",
				  b->mr[0].buf + ((u64)i << 16), a->mr[0].buf,
				  1 << 16));
	}
	carried = STAT(a, rc_req_packets);
	resent = STAT(a, retransmits);
	CHECK_EQ(carried, (u64)n * ((1 << 16) / rnic_pmtu_bytes(pmtu)));
	printf("# 64 KiB WRITE x %d, mtu %u, drop %u.%02u%%, seed %llu: "
	       "%llu packets carried, %llu retransmitted (%llu dropped, "
	       "%llu NAK seq, %llu timeouts)\n", n, rnic_pmtu_bytes(pmtu),
	       drop_pm / 100, drop_pm % 100, (unsigned long long)seed,
	       (unsigned long long)carried, (unsigned long long)resent,
	       (unsigned long long)w->dropped,
	       (unsigned long long)STAT(a, nak_seq_rcvd),
	       (unsigned long long)STAT(a, local_ack_timeouts));
	CHECK(resent <= carried);
	CHECK_EQ(a->qp.qp_stats[RNIC_QP_STAT_retransmits], resent);
	CHECK(STAT(b, nak_seq_sent) >= STAT(a, nak_seq_rcvd));
	world_free(w);
}

TEST(rc_write_stream_1pct_drop)
{
	write_stream(21, RNIC_PMTU_1024, 100);
	write_stream(22, RNIC_PMTU_1024, 100);
	write_stream(23, RNIC_PMTU_4096, 100);
	write_stream(24, RNIC_PMTU_256, 100);
}

/* ------------------------------------------------------------------------
 * A tap that records what each side sends, and can drop chosen packets
 */

#define NREC	4096

struct rec {
	int from;
	u8 op;
	u8 syn;
	bool ackreq;
	u32 psn;
	u64 va;
	u32 dma_len;
	u64 at;
	int a_nscq;		/* send completions node 0 had by then */
};

struct recorder {
	struct rec r[NREC];
	int n;
	/* drop the packets of this side with this opcode, this many times */
	int drop_from;
	int drop_op;
	int drop_count;
	int drop_skip;		/* ... after letting this many through */
	bool drop_all[2];
};

static struct recorder *rec_of(struct world *w)
{
	return w->tap_arg;
}

static bool rec_tap(struct world *w, int from, u8 *pkt, size_t *len)
{
	struct recorder *rc = rec_of(w);
	struct rc_hdr h;

	if (rc_pkt_parse(pkt, *len, &h))
		return true;
	if (rc->n < NREC)
		rc->r[rc->n++] = (struct rec){
			.from = from, .op = h.opcode, .syn = h.syndrome,
			.ackreq = h.ackreq, .psn = h.psn, .va = h.va,
			.dma_len = h.dma_len, .at = w->now,
			.a_nscq = w->n[0].nscq,
		};
	if (rc->drop_all[from])
		return false;
	if (from == rc->drop_from && h.opcode == rc->drop_op &&
	    rc->drop_count) {
		if (rc->drop_skip) {
			rc->drop_skip--;
			return true;
		}
		rc->drop_count--;
		return false;
	}
	return true;
}

static struct recorder *tap_on(struct world *w)
{
	struct recorder *rc = calloc(1, sizeof(*rc));

	rc->drop_from = -1;
	rc->drop_op = -1;
	w->tap = rec_tap;
	w->tap_arg = rc;
	return rc;
}

static int rec_count(const struct recorder *rc, int from, int op)
{
	int i, k = 0;

	for (i = 0; i < rc->n; i++)
		k += rc->r[i].from == from && (op < 0 || rc->r[i].op == op);
	return k;
}

/* A world with one 1 MiB MR per side (slot 0) and the tap on. */
static struct world *world_mr(const struct conn *c, struct recorder **rc)
{
	struct world *w = world_new(c, 99);

	mr_add(&w->n[0], 0, 0x100000, 1 << 20, ALL_ACCESS);
	mr_add(&w->n[1], 0, 0x200000, 1 << 20, ALL_ACCESS);
	*rc = tap_on(w);
	return w;
}

static void post_send(struct world *w, u8 op, u32 len, u8 flags)
{
	struct node *a = &w->n[0];
	struct rc_swqe *s = sq_post(a, op, flags);

	sge_add(s, &a->mr[0], 0, len);
}

static void post_rdma(struct world *w, u8 op, u64 loff, u64 roff, u32 len,
		      u8 flags)
{
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_swqe *s = sq_post(a, op, flags);

	sge_add(s, &a->mr[0], loff, len);
	s->remote_addr = b->mr[0].va + roff;
	s->rkey = b->mr[0].key;
}

/* ------------------------------------------------------------------------
 * RNR
 */

TEST(rc_rnr_retry)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	u64 delay = rnic_rnr_delay_us(14) * 1000ULL;

	c.min_rnr_timer = 14;		/* 1.28 ms */
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	post_send(w, RNIC_SQE_OP_SEND, 3000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, delay / 2);
	/* The first packet was refused, the rest dropped, nothing retried. */
	CHECK_EQ(STAT(b, rnr_naks_sent), 1);
	CHECK_EQ(STAT(a, rnr_naks_rcvd), 1);
	CHECK_EQ(STAT(b, nak_seq_sent), 0);
	CHECK_EQ(rec_count(rc, 0, RC_OP_SEND_FIRST), 1);
	CHECK_EQ(rec_count(rc, 1, RC_OP_ACK), 1);
	{
		int i = 0;

		while (i < rc->n && rc->r[i].from != 1)
			i++;
		REQUIRE(i < rc->n);
		CHECK_EQ(rc->r[i].syn, RC_AETH_RNR(14));
		CHECK_EQ(rc->r[i].psn, conn_default.psn[0]);
	}
	CHECK_EQ(rc_rq_psn(&b->qp), conn_default.psn[0]);
	world_run(w, delay);
	CHECK_EQ(rec_count(rc, 0, RC_OP_SEND_FIRST), 2);
	CHECK(STAT(b, rnr_naks_sent) >= 2);
	/* A buffer at last: both messages go through. */
	rq_post(b, &b->mr[0], 0, 3000);
	rq_post(b, &b->mr[0], 4096, 10);
	world_run(w, 100 * delay);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[1].status, RNIC_WC_SUCCESS);
	REQUIRE(b->nrcq == 2);
	CHECK_EQ(b->rcq[0].byte_len, 3000);
	CHECK_MEM_EQ(b->mr[0].buf, a->mr[0].buf, 3000);
	CHECK_EQ(STAT(a, retransmits), rec_count(rc, 0, -1) - 4);
	CHECK_EQ(STAT(a, rnr_retry_exceeded), 0);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	free(rc);
	world_free(w);
}

TEST(rc_rnr_retry_exceeded)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a, *b;

	c.rnr_retry = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	post_send(w, RNIC_SQE_OP_WRITE, 100, 0);
	a->sq[0].remote_addr = b->mr[0].va;
	a->sq[0].rkey = b->mr[0].key;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	world_run(w, 10ULL * 1000000000ULL);
	/* The WRITE, then the SEND three times: once and two retries. */
	{
		int i, k = 0;

		for (i = 0; i < rc->n; i++)
			k += rc->r[i].from == 0 &&
			     rc->r[i].psn == rc_psn_add(c.psn[0], 1);
		CHECK_EQ(k, 3);
	}
	CHECK_EQ(STAT(b, rnr_naks_sent), 3);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_RNR_EXC);
	CHECK_EQ(cq[1].wqe_idx, 1);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(cq[2].syndrome, RNIC_ERR_FLUSHED);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(STAT(a, rnr_retry_exceeded), 1);
	CHECK_EQ(STAT(a, cqe_errors), 1);
	CHECK_EQ(STAT(a, cqe_flushed), 1);
	CHECK_EQ(STAT(a, qp_errors), 1);
	/* An error reported by a CQE raises no event. */
	CHECK_EQ(a->nev, 0);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Local ACK timeout and retry count
 */

static void retry_case(u8 retry_cnt)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	u64 t = rnic_ack_timeout_ns(c.timeout);

	c.retry_cnt = retry_cnt;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 2500, 0);	/* 3 packets */
	post_send(w, RNIC_SQE_OP_SEND, 1, 0);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_RETRY_EXC);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	/* retry_cnt retries: each resends all four packets */
	CHECK_EQ(rec_count(rc, 0, -1), 4 * (1 + retry_cnt));
	CHECK_EQ(STAT(a, retransmits), 4 * retry_cnt);
	CHECK_EQ(STAT(a, rc_req_packets), 4);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1 + retry_cnt);
	CHECK_EQ(STAT(a, retry_exceeded), 1);
	/* Each timeout no earlier than T, no later than 2T. */
	CHECK(w->now >= (1 + retry_cnt) * t);
	CHECK(w->now <= (1 + retry_cnt) * 2 * t + 10 * LAT_NS);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(a->deadline, 0);
	free(rc);
	world_free(w);
}

TEST(rc_retry_exceeded)
{
	retry_case(0);
	retry_case(3);
	retry_case(7);		/* seven means seven */
}

TEST(rc_timeout_zero_never_fires)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;

	c.timeout = 0;
	w = world_mr(&c, &rc);
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(&w->n[0]);
	world_run(w, 100ULL * 1000000000ULL);
	CHECK_EQ(w->n[0].nscq, 0);
	CHECK_EQ(w->n[0].deadline, 0);
	CHECK_EQ(rec_count(rc, 0, -1), 1);
	CHECK_EQ(w->n[0].qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Remote errors: what each side completes, and the flush that follows
 */

TEST(rc_remote_access_error_and_flush_order)
{
	struct recorder *rc;
	struct rc_cqe cq[16];
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	u8 *snap = malloc(1 << 20);
	int n, i;

	rq_post(b, &b->mr[0], 0x80000, 64);
	rq_post(b, &b->mr[0], 0x81000, 64);
	rq_post(b, &b->mr[0], 0x82000, 64);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x1000, 5000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[1].flags &= ~RNIC_SQE_F_SIGNALED;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x2000, 3000, 0);
	a->sq[2].rkey ^= 0x100;			/* no such MR */
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x3000, 3000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[4].flags &= ~RNIC_SQE_F_SIGNALED;
	ring(a);
	world_run(w, 1000000000ULL);
	memcpy(snap, b->mr[0].buf, 1 << 20);
	/* Posted after the error: flushed too, signaled or not. */
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[5].flags &= ~RNIC_SQE_F_SIGNALED;
	ring(a);
	n = scq_visible(a, cq, 16);
	REQUIRE(n == 5);
	CHECK_EQ(cq[0].wqe_idx, 0);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].wqe_idx, 2);
	CHECK_EQ(cq[1].status, RNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_REM_ACCESS);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_WRITE);
	for (i = 2; i < 5; i++) {
		CHECK_EQ(cq[i].wqe_idx, i + 1);
		CHECK_EQ(cq[i].status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(cq[i].byte_len, 0);
	}
	CHECK_EQ(cq[2].opcode, RNIC_SQE_OP_READ);
	/* every WQE retired exactly once, in order */
	REQUIRE(a->nscq == 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(a->scq[i].wqe_idx, i);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(STAT(a, nak_rem_access_rcvd), 1);
	/* The responder: NAK, QP_ACCESS_ERR, ERR; its RQ flushed. */
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(STAT(b, nak_rem_access_sent), 1);
	CHECK_EQ(count_events(b, RNIC_EQE_QP_ACCESS_ERR), 1);
	CHECK_EQ(b->ev[0].info, rc_psn_add(conn_default.psn[0], 6));
	REQUIRE(b->nrcq == 3);
	CHECK_EQ(b->rcq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(b->rcq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[2].wqe_idx, 2);
	rq_post(b, &b->mr[0], 0x83000, 64);
	rc_rq_doorbell(&b->qp);
	CHECK_EQ(b->nrcq, 4);
	CHECK_EQ(b->rcq[3].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->nev, 0);
	/* ERR sends nothing, and drops what arrives. */
	world_run(w, 1000000000ULL);
	CHECK_MEM_EQ(b->mr[0].buf, snap, 1 << 20);
	free(snap);
	free(rc);
	world_free(w);
}

struct resp_err_case {
	const char *what;
	u8 op;
	int len;
	u8 b_access;		/* QP access of the responder */
	int recv_len;		/* -1: none posted; -2: bad key */
	u8 req_status;
	u8 resp_status;		/* of the receive WQE, 0xff none */
	u8 resp_syn;
	u8 event;
	u8 nak;
	u8 max_dest;
	u64 roff;
	u32 adv;		/* packets executed before the failing one */
};

static void resp_err(const struct resp_err_case *t)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	struct rc_cqe cq[4];
	u8 *snap;
	u32 epsn;

	c.max_dest_rd_atomic = t->max_dest;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	b->qp.access = t->b_access;
	if (t->recv_len >= 0) {
		rq_post(b, &b->mr[0], 0x8000, t->recv_len);
	} else if (t->recv_len == -2) {
		rq_post(b, &b->mr[0], 0x8000, 64);
		b->rq[0].sge[0].lkey ^= 0x100;
	}
	mr_add(b, 4, 0x50000000, 4096, ALL_ACCESS);	/* not FAST_REG */
	post_rdma(w, t->op, 0, t->roff, t->len, 0);
	a->sq[0].key = b->mr[4].key;
	post_send(w, RNIC_SQE_OP_SEND, 1, 0);
	snap = malloc(1 << 20);
	memcpy(snap, b->mr[0].buf, 1 << 20);
	epsn = rc_rq_psn(&b->qp);
	ring(a);
	world_run(w, 10ULL * 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 4) == 2);
	CHECK_EQ(cq[0].status, t->req_status);
	CHECK_EQ(cq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(count_events(b, t->event), t->event ? 1 : 0);
	CHECK_EQ(b->nev, t->event ? 1 : 0);
	CHECK_EQ(a->nev, 0);
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(epsn, t->adv));
	/* one NAK, the last thing the responder sent, at the failing PSN */
	{
		int i = rc->n - 1;

		while (i >= 0 && rc->r[i].from != 1)
			i--;
		REQUIRE(i >= 0);
		CHECK_EQ(rc->r[i].op, RC_OP_ACK);
		CHECK_EQ(rc->r[i].syn, t->nak);
		CHECK_EQ(rc->r[i].psn, rc_psn_add(epsn, t->adv));
		CHECK_EQ(STAT(b, acks_sent), 0);
	}
	if (t->resp_status != 0xff) {
		REQUIRE(b->nrcq == 1);
		CHECK_EQ(b->rcq[0].status, t->resp_status);
		CHECK_EQ(b->rcq[0].syndrome, t->resp_syn);
		CHECK_EQ(b->rcq[0].byte_len, 0);
	} else if (t->recv_len >= 0) {
		REQUIRE(b->nrcq == 1);
		CHECK_EQ(b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
	} else {
		CHECK_EQ(b->nrcq, 0);
	}
	/* Nothing reached memory but what a SEND may have placed. */
	if (t->op != RNIC_SQE_OP_SEND && t->op != RNIC_SQE_OP_SEND_INV)
		CHECK_MEM_EQ(b->mr[0].buf, snap, 1 << 20);
	if (test_failed())
		fprintf(stderr, "# case: %s\n", t->what);
	free(snap);
	free(rc);
	world_free(w);
}

TEST(rc_responder_errors)
{
	const u8 all = ALL_ACCESS;
	const struct resp_err_case cases[] = {
		{ "SEND too long", RNIC_SQE_OP_SEND, 3000, all, 2999,
		  RNIC_WC_REM_INV_REQ_ERR, RNIC_WC_LOC_LEN_ERR,
		  RNIC_ERR_RECV_TOO_SHORT, 0, RC_AETH_NAK_INV, 16, 0, 2 },
		{ "SEND_INV of a non-FAST_REG key", RNIC_SQE_OP_SEND_INV, 10,
		  all, 64, RNIC_WC_REM_INV_REQ_ERR, RNIC_WC_REM_INV_REQ_ERR,
		  RNIC_ERR_INV_KEY, 0, RC_AETH_NAK_INV, 16, 0, 0 },
		{ "receive SGE key", RNIC_SQE_OP_SEND, 10, all, -2,
		  RNIC_WC_REM_OP_ERR, RNIC_WC_LOC_PROT_ERR, RNIC_ERR_BAD_KEY,
		  0, RC_AETH_NAK_OP, 16, 0, 0 },
		{ "WRITE without QP access", RNIC_SQE_OP_WRITE, 10,
		  RNIC_ACCESS_REMOTE_READ, -1, RNIC_WC_REM_ACCESS_ERR, 0xff, 0,
		  RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "WRITE out of bounds", RNIC_SQE_OP_WRITE, 4096, all, -1,
		  RNIC_WC_REM_ACCESS_ERR, 0xff, 0, RNIC_EQE_QP_ACCESS_ERR,
		  RC_AETH_NAK_ACCESS, 16, (1 << 20) - 4095, 0 },
		{ "READ without QP access", RNIC_SQE_OP_READ, 10,
		  RNIC_ACCESS_REMOTE_WRITE, -1, RNIC_WC_REM_ACCESS_ERR, 0xff, 0,
		  RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "READ with no responder resources", RNIC_SQE_OP_READ, 10,
		  all, -1, RNIC_WC_REM_INV_REQ_ERR, 0xff, 0,
		  RNIC_EQE_QP_REQ_ERR, RC_AETH_NAK_INV, 0, 0, 0 },
		{ "atomic without QP access", RNIC_SQE_OP_FETCH_ADD, 8,
		  RNIC_ACCESS_REMOTE_WRITE, -1, RNIC_WC_REM_ACCESS_ERR, 0xff,
		  0, RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "atomic misaligned", RNIC_SQE_OP_CMP_SWAP, 8, all, -1,
		  RNIC_WC_REM_INV_REQ_ERR, 0xff, 0, RNIC_EQE_QP_REQ_ERR,
		  RC_AETH_NAK_INV, 16, 4, 0 },
		{ "atomic with no responder resources", RNIC_SQE_OP_FETCH_ADD,
		  8, all, -1, RNIC_WC_REM_INV_REQ_ERR, 0xff, 0,
		  RNIC_EQE_QP_REQ_ERR, RC_AETH_NAK_INV, 0, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases) && !test_failed(); i++)
		resp_err(&cases[i]);
}

/* A zero-length WRITE or READ carries no key: none is checked. */
TEST(rc_zero_length_rdma_not_checked)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];

	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 0, 0);
	a->sq[0].rkey = 0xdead00;
	a->sq[0].remote_addr = ~0ULL;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 0, 0);
	a->sq[1].rkey = 0xbeef00;
	b->qp.access = 0;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[1].status, RNIC_WC_SUCCESS);
	CHECK_EQ(rec_count(rc, 1, RC_OP_READ_RESP_ONLY), 1);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Local errors of the requester
 */

TEST(rc_requester_local_errors)
{
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a;

	/* A bad local key: LOC_PROT_ERR, after the WQE before it. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100, 0);
	a->sq[1].sge[0].lkey ^= 0x100;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_BAD_KEY);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(rec_count(rc, 0, -1), 98);	/* nothing of WQE 1 */
	CHECK_EQ(STAT(a, key_violations), 1);
	free(rc);
	world_free(w);

	/* READ into memory without LOCAL_WRITE */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	a->mr[0].access = 0;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_KEY_ACCESS);
	CHECK_EQ(rec_count(rc, 0, -1), 0);
	free(rc);
	world_free(w);

	/* A malformed WQE: LOC_QP_OP_ERR, in order */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	a->bad_sq_idx = 1;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_BAD_WQE);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(STAT(a, wqe_errors), 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * READ and atomic limits, fence
 */

TEST(rc_max_rd_atomic_zero)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a;

	c.max_rd_atomic = 0;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 3000, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_RESP_RES);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_READ);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(rec_count(rc, 0, RC_OP_READ_REQ), 0);
	CHECK_EQ(rec_count(rc, 0, -1), 3);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(w->n[1].qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

static bool limit_tap(struct world *w, int from, u8 *pkt, size_t *len)
{
	struct recorder *rc = rec_of(w);
	struct rc_hdr h;
	int i, reqs = 0;

	rec_tap(w, from, pkt, len);
	if (from || rc_pkt_parse(pkt, *len, &h) ||
	    (h.opcode != RC_OP_READ_REQ && h.opcode != RC_OP_FETCH_ADD))
		return true;
	/* READ/atomic WQEs started, minus those completed */
	for (i = 0; i < rc->n; i++)
		reqs += rc->r[i].from == 0 &&
			(rc->r[i].op == RC_OP_READ_REQ ||
			 rc->r[i].op == RC_OP_FETCH_ADD);
	CHECK(reqs - w->n[0].nscq <= 2);
	return true;
}

TEST(rc_max_rd_atomic_limit_and_fence)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	int i, s1 = -1, s2 = -1;

	c.max_rd_atomic = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	w->tap = limit_tap;
	for (i = 0; i < 8; i++)
		post_rdma(w, i % 3 ? RNIC_SQE_OP_READ : RNIC_SQE_OP_FETCH_ADD,
			  0x1000 * i, 0x1000 * i, i % 3 ? 3000 : 8, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 8);
	for (i = 0; i < 8; i++)
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
	free(rc);
	world_free(w);

	/* A fenced SEND waits for the READ before it; an unfenced not. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 60000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0x20000, 0x20000, 10, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0x40000, 0x40000, 60000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0x20000, 0x20000, 10,
		  RNIC_SQE_F_FENCE);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 4);
	for (i = 0; i < rc->n; i++) {
		if (rc->r[i].from || rc->r[i].op != RC_OP_WRITE_ONLY)
			continue;
		if (s1 < 0)
			s1 = rc->r[i].a_nscq;
		else
			s2 = rc->r[i].a_nscq;
	}
	CHECK_EQ(s1, 0);	/* went out while the first READ ran */
	CHECK_EQ(s2, 3);	/* only once the second READ completed */
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Duplicates: READ executed again, atomics replayed, never re-executed
 */

TEST(rc_read_replay)
{
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	int i, reqs = 0;

	/* The whole first response stream lost: the timeout asks again. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	b = &w->n[1];
	rc->drop_from = 1;
	rc->drop_op = RC_OP_READ_RESP_FIRST;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x10000, 5000, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(a->mr[0].buf, b->mr[0].buf + 0x10000, 5000);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(b, read_requests_rcvd), 1);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);	/* the gap did it */
	CHECK_EQ(STAT(a, retransmits), 1);
	free(rc);
	world_free(w);

	/* A middle response lost: re-requested from the missing PSN. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	b = &w->n[1];
	rc->drop_from = 1;
	rc->drop_op = RC_OP_READ_RESP_MIDDLE;
	rc->drop_count = 1;
	rc->drop_skip = 2;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x10000, 10 * 1024 + 7, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(a->mr[0].buf, b->mr[0].buf + 0x10000, 10 * 1024 + 7);
	for (i = 0; i < rc->n; i++) {
		if (rc->r[i].from || rc->r[i].op != RC_OP_READ_REQ)
			continue;
		if (reqs++ == 1) {
			/* responses 0, 1 and 2 arrived; 3 is missing */
			CHECK_EQ(rc->r[i].psn, rc_psn_add(conn_default.psn[0],
							  3));
			CHECK_EQ(rc->r[i].va, b->mr[0].va + 0x10000 + 3 * 1024);
			CHECK_EQ(rc->r[i].dma_len, 7 * 1024 + 7);
		}
	}
	CHECK_EQ(reqs, 2);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	free(rc);
	world_free(w);
}

TEST(rc_atomic_replay)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	u64 v0, v;

	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	memcpy(&v0, b->mr[0].buf + 0x100, 8);
	rc->drop_from = 1;
	rc->drop_op = RC_OP_ATOMIC_ACK;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0x100, 8, 0);
	a->sq[0].compare_add = 5;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	memcpy(&v, b->mr[0].buf + 0x100, 8);
	CHECK_EQ(v, v0 + 5);			/* once, not twice */
	memcpy(&v, a->mr[0].buf, 8);
	CHECK_EQ(v, v0);
	CHECK_EQ(STAT(b, atomic_requests_rcvd), 1);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1);
	free(rc);
	world_free(w);

	/*
	 * One responder resource, two atomics unanswered: the first one's
	 * state is recycled, so its duplicate is dropped and the requester
	 * runs out of retries; neither is ever executed twice.
	 */
	c.max_dest_rd_atomic = 1;
	c.retry_cnt = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	memcpy(&v0, b->mr[0].buf + 0x100, 8);
	rc->drop_from = 1;
	rc->drop_op = RC_OP_ATOMIC_ACK;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0x100, 8, 0);
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 8, 0x100, 8, 0);
	a->sq[0].compare_add = 1;
	a->sq[1].compare_add = 1;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	memcpy(&v, b->mr[0].buf + 0x100, 8);
	CHECK_EQ(v, v0 + 2);
	CHECK_EQ(STAT(b, atomic_requests_rcvd), 2);
	CHECK_EQ(STAT(b, resp_res_exhausted), 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Hostile packets: each handled as the specification says, nothing else
 * changed
 */

struct hostile {
	struct world *w;
	struct recorder *rc;
	struct node *b;
	u8 *snap;
	u32 e;
};

static void hostile_init(struct hostile *hs)
{
	hs->w = world_mr(&conn_default, &hs->rc);
	hs->b = &hs->w->n[1];
	/* Record what the responder says, but keep it from node 0. */
	hs->rc->drop_all[1] = true;
	rq_post(hs->b, &hs->b->mr[0], 0x9000, 2048);
	hs->snap = malloc(1 << 20);
	memcpy(hs->snap, hs->b->mr[0].buf, 1 << 20);
	hs->e = rc_rq_psn(&hs->b->qp);
}

static void hostile_free(struct hostile *hs)
{
	free(hs->snap);
	free(hs->rc);
	world_free(hs->w);
}

static void inject(struct hostile *hs, struct rc_hdr *h, u32 plen)
{
	u8 payload[4096], buf[RC_PKT_MAX];
	size_t len;

	memset(payload, 0x5a, sizeof(payload));
	h->pkey = 0xffff;
	if (!h->dest_qpn)
		h->dest_qpn = hs->b->qp.qpn;
	len = rc_pkt_build(buf, h, payload, plen);
	rc_rx(&hs->b->qp, buf, len);
	world_run(hs->w, 1000000000ULL);
}

static void inject_raw(struct hostile *hs, const u8 *buf, size_t len)
{
	rc_rx(&hs->b->qp, buf, len);
	world_run(hs->w, 1000000000ULL);
}

/* The responder is as it was, but for @psn_adv and what it sent. */
static void unchanged(struct hostile *hs, u32 psn_adv, int rq_taken)
{
	struct node *b = hs->b;

	CHECK_MEM_EQ(b->mr[0].buf, hs->snap, 1 << 20);
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(hs->e, psn_adv));
	CHECK_EQ(b->rq_ci, rq_taken);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(b->nev, 0);
}

static const struct rec *last_from(const struct recorder *rc, int from)
{
	int i;

	for (i = rc->n - 1; i >= 0; i--)
		if (rc->r[i].from == from)
			return &rc->r[i];
	return NULL;
}

TEST(rc_hostile_psn)
{
	struct hostile hs;
	struct rc_hdr h;
	const struct rec *r;

	hostile_init(&hs);
	/* Ahead: one NAK sequence error with ePSN, then silence. */
	h = (struct rc_hdr){ .opcode = RC_OP_WRITE_ONLY, .ackreq = true,
			     .psn = rc_psn_add(hs.e, 5),
			     .va = hs.b->mr[0].va, .rkey = hs.b->mr[0].key,
			     .dma_len = 16 };
	inject(&hs, &h, 16);
	h.psn = rc_psn_add(hs.e, 6);
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 1);
	r = last_from(hs.rc, 1);
	REQUIRE(r);
	CHECK_EQ(r->syn, RC_AETH_NAK_SEQ);
	CHECK_EQ(r->psn, hs.e);
	CHECK_EQ(STAT(hs.b, out_of_sequence), 2);
	CHECK_EQ(hs.b->qp.qp_stats[RNIC_QP_STAT_out_of_sequence], 2);
	unchanged(&hs, 0, 0);
	/* Far ahead (more than half the PSN space) is "before". */
	h.psn = rc_psn_add(hs.e, 0x800001);
	inject(&hs, &h, 16);
	CHECK_EQ(STAT(hs.b, duplicate_requests), 1);
	r = last_from(hs.rc, 1);
	CHECK_EQ(r->syn, RC_AETH_ACK);
	CHECK_EQ(r->psn, rc_psn_add(hs.e, RC_PSN_MASK));
	unchanged(&hs, 0, 0);
	/* Behind, without AckReq: nothing at all. */
	h.psn = rc_psn_add(hs.e, -3u);
	h.ackreq = false;
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 2);
	CHECK_EQ(STAT(hs.b, duplicate_requests), 2);
	/* A duplicate SEND takes no receive WQE. */
	h.opcode = RC_OP_SEND_ONLY;
	h.ackreq = true;
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 3);
	unchanged(&hs, 0, 0);
	/* ePSN at last: executed; a new gap gets a new NAK. */
	h = (struct rc_hdr){ .opcode = RC_OP_SEND_ONLY, .ackreq = true,
			     .psn = hs.e };
	inject(&hs, &h, 16);
	CHECK_EQ(hs.b->nrcq, 1);
	CHECK_EQ(rc_rq_psn(&hs.b->qp), rc_psn_add(hs.e, 1));
	h.psn = rc_psn_add(hs.e, 3);
	inject(&hs, &h, 16);
	r = last_from(hs.rc, 1);
	CHECK_EQ(r->syn, RC_AETH_NAK_SEQ);
	CHECK_EQ(r->psn, rc_psn_add(hs.e, 1));
	CHECK_EQ(STAT(hs.b, nak_seq_sent), 2);
	hostile_free(&hs);
}

TEST(rc_hostile_malformed_dropped)
{
	struct hostile hs;
	struct rc_hdr h = { 0 };
	u8 buf[64];
	size_t len;

	hostile_init(&hs);
	h.opcode = RC_OP_SEND_ONLY;
	h.psn = hs.e;
	h.pkey = 0xffff;
	h.dest_qpn = hs.b->qp.qpn;
	len = rc_pkt_build(buf, &h, "abcdefgh", 8);
	/* not a whole number of words */
	inject_raw(&hs, buf, len - 1);
	/* pad beyond the payload */
	buf[1] |= 0x30;
	inject_raw(&hs, buf, RC_BTH_LEN);
	buf[1] &= ~0x30;
	/* TVer 1 */
	buf[1] |= 1;
	inject_raw(&hs, buf, len);
	buf[1] &= ~1;
	/* reserved and UD opcodes */
	buf[0] = 0x15;
	inject_raw(&hs, buf, len);
	buf[0] = 0x64;
	inject_raw(&hs, buf, len);
	buf[0] = RC_OP_SEND_ONLY;
	/* another QP's packet */
	buf[7] ^= 1;
	inject_raw(&hs, buf, len);
	buf[7] ^= 1;
	/* a WRITE too short for its RETH */
	h.opcode = RC_OP_WRITE_ONLY;
	len = rc_pkt_build(buf, &h, NULL, 0);
	inject_raw(&hs, buf, RC_BTH_LEN + 8);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 0);
	CHECK_EQ(hs.b->qp.qp_stats[RNIC_QP_STAT_rx_packets], 0);
	unchanged(&hs, 0, 0);
	/* and the QP still works */
	h.opcode = RC_OP_SEND_ONLY;
	h.ackreq = true;
	inject(&hs, &h, 8);
	CHECK_EQ(hs.b->nrcq, 1);
	CHECK_EQ(hs.b->rcq[0].byte_len, 8);
	hostile_free(&hs);
}

struct bad_req {
	const char *what;
	u8 op1;			/* a valid first packet, or 0xff */
	u32 len1;
	u8 op;
	u32 plen;
	u32 dma_len;
	u8 pad_extra;		/* pad count forced */
	u8 nak;
	int rq_taken;
	u32 adv;
};

TEST(rc_hostile_invalid_requests)
{
	const struct bad_req cases[] = {
		{ "MIDDLE without FIRST", 0xff, 0, RC_OP_SEND_MIDDLE, 1024, 0,
		  0, RC_AETH_NAK_INV, 0, 0 },
		{ "LAST without FIRST", 0xff, 0, RC_OP_WRITE_LAST, 10, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE LAST after SEND FIRST", RC_OP_SEND_FIRST, 1024,
		  RC_OP_WRITE_LAST, 10, 0, 0, RC_AETH_NAK_INV, 1, 1 },
		{ "SEND FIRST inside a SEND", RC_OP_SEND_FIRST, 1024,
		  RC_OP_SEND_FIRST, 1024, 0, 0, RC_AETH_NAK_INV, 1, 1 },
		{ "READ inside a WRITE", RC_OP_WRITE_FIRST, 4096,
		  RC_OP_READ_REQ, 0, 8, 0, RC_AETH_NAK_INV, 0, 1 },
		{ "short FIRST", 0xff, 0, RC_OP_SEND_FIRST, 1020, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "long ONLY", 0xff, 0, RC_OP_SEND_ONLY, 1028, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "empty LAST", RC_OP_SEND_FIRST, 1024, RC_OP_SEND_LAST, 0, 0,
		  0, RC_AETH_NAK_INV, 1, 1 },
		{ "MIDDLE with pad", RC_OP_SEND_FIRST, 1024,
		  RC_OP_SEND_MIDDLE, 1024, 0, 0x30, RC_AETH_NAK_INV, 1, 1 },
		{ "WRITE ONLY shorter than its RETH", 0xff, 0,
		  RC_OP_WRITE_ONLY, 16, 100, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE FIRST that is all of it", 0xff, 0, RC_OP_WRITE_FIRST,
		  1024, 1024, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE LAST beyond its RETH", RC_OP_WRITE_FIRST, 2000,
		  RC_OP_WRITE_LAST, 1000, 0, 0, RC_AETH_NAK_INV, 0, 1 },
		{ "READ with payload", 0xff, 0, RC_OP_READ_REQ, 8, 8, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "READ beyond max_msg_size", 0xff, 0, RC_OP_READ_REQ, 0,
		  0x80000001u, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "atomic with payload", 0xff, 0, RC_OP_FETCH_ADD, 8, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE with a bad R_Key", 0xff, 0, RC_OP_WRITE_ONLY, 16, 16,
		  0, RC_AETH_NAK_ACCESS, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases) && !test_failed(); i++) {
		const struct bad_req *t = &cases[i];
		struct hostile hs;
		struct rc_hdr h;
		const struct rec *r;
		u8 buf[RC_PKT_MAX];
		size_t len;

		hostile_init(&hs);
		if (t->op1 != 0xff) {
			h = (struct rc_hdr){ .opcode = t->op1, .psn = hs.e,
					     .va = hs.b->mr[0].va + 0x100,
					     .rkey = hs.b->mr[0].key,
					     .dma_len = t->len1 };
			inject(&hs, &h, 1024);
		}
		memcpy(hs.snap, hs.b->mr[0].buf, 1 << 20);
		h = (struct rc_hdr){ .opcode = t->op, .ackreq = true,
				     .psn = rc_psn_add(hs.e, t->adv),
				     .va = hs.b->mr[0].va + 0x1000,
				     .rkey = hs.b->mr[0].key,
				     .dma_len = t->dma_len,
				     .pkey = 0xffff,
				     .dest_qpn = hs.b->qp.qpn };
		if (t->nak == RC_AETH_NAK_ACCESS)
			h.rkey ^= 0x100;
		len = rc_pkt_build(buf, &h, NULL, t->plen);
		memset(buf + rc_hdr_len(t->op), 0x77, t->plen);
		buf[1] |= t->pad_extra;
		if (t->pad_extra)
			len += 4;	/* the pad counted inside, still words */
		inject_raw(&hs, buf, len);
		r = last_from(hs.rc, 1);
		REQUIRE(r);
		CHECK_EQ(r->op, RC_OP_ACK);
		CHECK_EQ(r->syn, t->nak);
		CHECK_EQ(r->psn, rc_psn_add(hs.e, t->adv));
		CHECK_EQ(hs.b->qp.state, RNIC_QPS_ERR);
		CHECK_EQ(hs.b->nev, 1);
		CHECK_EQ(hs.b->ev[0].type, t->nak == RC_AETH_NAK_INV ?
			 RNIC_EQE_QP_REQ_ERR : RNIC_EQE_QP_ACCESS_ERR);
		CHECK_MEM_EQ(hs.b->mr[0].buf, hs.snap, 1 << 20);
		CHECK_EQ(rc_rq_psn(&hs.b->qp), rc_psn_add(hs.e, t->adv));
		/* a receive WQE it had taken is flushed, the rest too */
		CHECK_EQ(hs.b->nrcq, 1);
		CHECK_EQ(hs.b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(STAT(hs.b, qp_errors), 1);
		if (test_failed())
			fprintf(stderr, "# case: %s\n", t->what);
		hostile_free(&hs);
	}
}

TEST(rc_hostile_responses)
{
	struct recorder *rc;
	struct world *w;
	struct node *a;
	struct rc_hdr h;
	u8 buf[RC_PKT_MAX];
	size_t len;
	u32 p0 = conn_default.psn[0];

	/* Responses for nothing outstanding: counted, ignored. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 3000, 0);
	ring(a);
	world_run(w, 1000);		/* the request is out, nothing back */
	h = (struct rc_hdr){ .opcode = RC_OP_ACK, .psn = rc_psn_add(p0, 3),
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.psn = rc_psn_add(p0, -1u);
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.opcode = RC_OP_ATOMIC_ACK;
	h.psn = rc_psn_add(p0, 100);
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.opcode = RC_OP_READ_RESP_ONLY;
	h.psn = rc_psn_add(p0, 5);
	len = rc_pkt_build(buf, &h, a->mr[0].buf, 64);
	rc_rx(&a->qp, buf, len);
	CHECK_EQ(STAT(a, duplicate_responses), 4);
	CHECK_EQ(a->nscq, 0);
	CHECK_EQ(a->qp.state, RNIC_QPS_RTS);
	/* A READ response of the wrong length: BAD_RESP_ERR. */
	h.opcode = RC_OP_READ_RESP_FIRST;
	h.psn = p0;
	len = rc_pkt_build(buf, &h, a->mr[0].buf, 1000);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_BAD_RESP);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	free(rc);
	world_free(w);

	/* An ACK where a READ response belongs: it asks again. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 3000, 0);
	ring(a);
	world_run(w, 1000);
	h = (struct rc_hdr){ .opcode = RC_OP_ACK, .psn = p0,
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	rc_rx(&a->qp, buf, len);	/* once per PSN, not twice */
	world_run(w, 1000);
	CHECK_EQ(rec_count(rc, 0, RC_OP_READ_REQ), 2);
	CHECK_EQ(a->nscq, 0);
	/* An AETH syndrome the contract does not know: BAD_RESP_ERR. */
	h.syndrome = 0x64;
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	free(rc);
	world_free(w);

	/* An atomic ACK for a SEND: BAD_RESP_ERR. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, 1000);
	h = (struct rc_hdr){ .opcode = RC_OP_ATOMIC_ACK, .psn = p0,
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Wire compatibility: rxe's frames parse, and build back byte for byte
 */

#include "pcapread.h"
#include "pkt.h"

static void rxe_vectors(const char *name)
{
	char path[4096], err[256];
	struct pcapread_frame fr;
	struct pcapread *r;
	int n = 0, rc;

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", test_srcdir(),
		 name);
	r = pcapread_open(path, err, sizeof(err));
	REQUIRE(r);
	while ((rc = pcapread_next(r, &fr, err, sizeof(err))) == 1) {
		struct pkt_info info;
		struct rc_hdr h;
		u8 buf[RC_PKT_MAX + 64];
		const u8 *t;
		size_t tlen, blen;

		if (pkt_classify(fr.data, fr.len, PKT_ROCE_V2_PORT, &info) !=
		    PKT_CLASS_ROCE_V2_IPV4 &&
		    pkt_classify(fr.data, fr.len, PKT_ROCE_V2_PORT, &info) !=
		    PKT_CLASS_ROCE_V2_IPV6)
			continue;
		t = fr.data + info.bth_off;
		tlen = info.icrc_off - info.bth_off;
		if (t[0] >= 0x20)	/* UD and others: not ours */
			continue;
		REQUIRE(rc_pkt_parse(t, tlen, &h) == 0);
		REQUIRE(tlen <= sizeof(buf));
		/* Build it again from the parsed fields. */
		blen = rc_pkt_build(buf, &h, h.payload, h.payload_len);
		CHECK_EQ(blen, tlen);
		/* byte 4 (FECN/BECN) and AckReq's reserved bits aside */
		buf[4] = t[4];
		CHECK(test_mem_eq(__FILE__, __LINE__, name, buf, t, tlen));
		n++;
	}
	CHECK_EQ(rc, 0);
	pcapread_close(r);
	printf("# %s: %d RC packets of rxe parsed and rebuilt\n", name, n);
	CHECK(n > 0);
}

TEST(rc_rxe_wire_format)
{
	rxe_vectors("rxe_v2_ipv4.pcap");
	rxe_vectors("rxe_v2_ipv6.pcap");
}

/* ------------------------------------------------------------------------
 * States, events, ACKs, and the device interface's corners
 */

TEST(rc_sqd_drains_begun_wqes)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	struct rc_attr at = { .mask = A(STATE) | A(SQD_NOTIFY),
			      .state = RNIC_QPS_SQD, .sqd_notify = 1 };
	int i;

	for (i = 0; i < 4; i++)
		post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 5000, 0);
	ring(a);
	/* Start the first WQE only (one of its five packets), then SQD. */
	CHECK_EQ(rc_tx(&a->qp, 1), 1);
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	CHECK(rc_sq_draining(&a->qp));
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 0);
	/* SQD->SQD changes wait for the drain */
	at.mask = A(TIMEOUT);
	at.timeout = 12;
	CHECK_EQ(rc_modify(&a->qp, &at), RNIC_AQ_BAD_STATE);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 1);
	CHECK_EQ(rec_count(rc, 0, -1), 5);
	CHECK(!rc_sq_draining(&a->qp));
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 1);
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	/* the responder of an SQD QP still serves */
	CHECK_EQ(a->qp.state, RNIC_QPS_SQD);
	at.mask = A(STATE);
	at.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 4);
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 1);
	free(rc);
	world_free(w);
}

TEST(rc_comm_est_and_rtr)
{
	struct conn c = conn_default;
	struct world *w = calloc(1, sizeof(*w));
	struct node *a, *b;
	int i;

	/* node 1 stays in RTR: it answers, it does not send */
	w->rng = 1;
	for (i = 0; i < 2; i++) {
		struct node *n = &w->n[i];

		n->w = w;
		n->id = i;
		n->bad_sq_idx = -1;
		n->sq = calloc(SQN, sizeof(*n->sq));
		n->rq = calloc(RQN, sizeof(*n->rq));
		n->scq = calloc(NCQE, sizeof(*n->scq));
		n->rcq = calloc(NCQE, sizeof(*n->rcq));
		rc_qp_init(&n->qp, &f_ops, n, 0x100 + 0x11 * (i + 1));
	}
	for (i = 0; i < 2; i++) {
		CHECK_EQ(node_modify(&w->n[i], RNIC_QPS_INIT, M_INIT, &c), 0);
		CHECK_EQ(node_modify(&w->n[i], RNIC_QPS_RTR, M_RTR, &c), 0);
	}
	a = &w->n[0];
	b = &w->n[1];
	CHECK_EQ(node_modify(a, RNIC_QPS_RTS, M_RTS, &c), 0);
	mr_add(a, 0, 0x1000, 65536, ALL_ACCESS);
	mr_add(b, 0, 0x1000, 65536, ALL_ACCESS);
	/* b's SQ is not read in RTR */
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	a->sq_pi = 0;
	b->sq[0] = a->sq[0];
	b->sq_pi = 1;
	rc_sq_doorbell(&b->qp);
	CHECK_EQ(rc_tx(&b->qp, 10), 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 2);
	CHECK_EQ(count_events(b, RNIC_EQE_COMM_EST), 1);
	CHECK_EQ(b->nev, 1);
	CHECK_EQ(b->nscq, 0);
	world_free(w);
}

TEST(rc_ack_coalescing_and_ackreq)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	int i, k;

	/* 20 single-packet messages in one burst: one ACK for all. */
	for (i = 0; i < 20; i++)
		post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x100 * i, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 20);
	CHECK_EQ(STAT(b, acks_sent), 1);
	CHECK_EQ(STAT(a, acks_rcvd), 1);
	CHECK_EQ(rec_count(rc, 1, -1), 1);
	/* A 100-packet message: AckReq on packets 32, 64, 96 and the last. */
	rc->n = 0;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100 * 1024, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 21);
	for (i = 0, k = 0; i < rc->n; i++) {
		if (rc->r[i].from)
			continue;
		CHECK_EQ(rc->r[i].ackreq,
			 (k + 1) % 32 == 0 || k == 99);
		k++;
	}
	CHECK_EQ(k, 100);
	free(rc);
	world_free(w);
}

static bool window_tap(struct world *w, int from, u8 *pkt, size_t *len)
{
	struct rc_hdr h;
	struct node *a = &w->n[0];

	if (!from && !rc_pkt_parse(pkt, *len, &h))
		CHECK(rc_psn_diff(h.psn, a->qp.req.una_psn) < RC_PSN_WINDOW);
	return true;
}

TEST(rc_psn_window)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	unsigned int sent;

	w->tap = window_tap;
	/* Nothing comes back: exactly the window goes out. */
	w->n[1].qp.state = RNIC_QPS_INIT;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 300 * 1024, 0);
	ring(a);
	sent = rc_tx(&a->qp, 1000);
	CHECK_EQ(sent, RC_PSN_WINDOW);
	CHECK_EQ(rc_tx(&a->qp, 1000), 0);
	w->n[1].qp.state = RNIC_QPS_RTS;
	w->nq = 0;
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(w->n[1].mr[0].buf, a->mr[0].buf, 300 * 1024);
	free(rc);
	world_free(w);
}

TEST(rc_emit_eagain_and_unsignaled)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_cqe cq[8];
	int i;

	a->eagain = 7;
	b->eagain = 3;
	for (i = 0; i < 6; i++) {
		post_rdma(w, i % 2 ? RNIC_SQE_OP_READ : RNIC_SQE_OP_WRITE,
			  0x10000 * i, 0x10000 * i, 9000, 0);
		if (i != 3 && i != 5)
			a->sq[i].flags &= ~RNIC_SQE_F_SIGNALED;
	}
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 6);
	for (i = 0; i < 6; i++) {
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
		CHECK_EQ(!!(a->scq[i].flags & RC_CQE_F_SILENT),
			 i != 3 && i != 5);
	}
	CHECK_EQ(scq_visible(a, cq, 8), 2);
	CHECK_EQ(cq[0].wqe_idx, 3);
	for (i = 0; i < 6; i++)
		CHECK(test_mem_eq(__FILE__, __LINE__, "data",
				  a->mr[0].buf + 0x10000 * i,
				  b->mr[0].buf + 0x10000 * i, 9000));
	CHECK_EQ(STAT(a, retransmits), 0);
	CHECK_EQ(a->eagain, 0);
	CHECK_EQ(b->eagain, 0);
	free(rc);
	world_free(w);
}

TEST(rc_local_operations)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	struct fmr *fr = mr_add(a, 5, 0x7000000, 4096, ALL_ACCESS);
	struct rc_swqe *s;
	struct rc_cqe cq[8];

	fr->fastreg = true;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50000, 0);
	s = sq_post(a, RNIC_SQE_OP_LOCAL_INV, 0);
	s->key = fr->key;
	s = sq_post(a, RNIC_SQE_OP_REG_MR, 0);
	s->key = rnic_key_build(fr->key >> 8, 7);
	/* ... and then a SEND from the re-registered key */
	s = sq_post(a, RNIC_SQE_OP_SEND, 0);
	s->sge[s->num_sge++] = (struct rc_sge){ fr->va, 16,
						rnic_key_build(fr->key >> 8, 7) };
	s->length = 16;
	rq_post(&w->n[1], &w->n[1].mr[0], 0, 16);
	ring(a);
	/* LOCAL_INV ran when the SQ reached it, the WRITE still going */
	CHECK_EQ(rc_tx(&a->qp, 5), 5);
	CHECK(fr->valid);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 4);
	CHECK_EQ(cq[0].opcode, RNIC_SQE_OP_WRITE);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_LOCAL_INV);
	CHECK_EQ(cq[1].byte_len, 0);
	CHECK_EQ(cq[2].opcode, RNIC_SQE_OP_REG_MR);
	CHECK_EQ(cq[3].status, RNIC_WC_SUCCESS);
	CHECK(fr->valid);
	CHECK_EQ(fr->key & 0xff, 7);
	/* A LOCAL_INV that fails: LOC_QP_OP_ERR with its syndrome, ERR. */
	s = sq_post(a, RNIC_SQE_OP_LOCAL_INV, 0);
	s->key = a->mr[0].key;		/* not FAST_REG */
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 5);
	CHECK_EQ(a->scq[4].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(a->scq[4].syndrome, RNIC_ERR_KEY_STATE);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	free(rc);
	world_free(w);
}

TEST(rc_fatal_cq_error_reset)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_attr at = { .mask = A(STATE), .state = RNIC_QPS_RESET };

	/* The CQ cannot take a completion: QP_FATAL, ERR, silence. */
	rq_post(b, &b->mr[0], 0, 100);
	rq_post(b, &b->mr[0], 0, 100);
	b->cq_fail = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(count_events(b, RNIC_EQE_QP_FATAL), 1);
	CHECK_EQ(b->ev[0].reason, RNIC_ERR_CQ_ERROR);
	CHECK_EQ(b->nrcq, 0);
	CHECK_EQ(STAT(b, qp_errors), 1);
	/*
	 * a: the first SEND was ACKed before b died, or not: either way
	 * every WQE completes, in order.
	 */
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[1].status, a->scq[0].status == RNIC_WC_SUCCESS ?
		 a->scq[1].status : RNIC_WC_WR_FLUSH_ERR);
	/* rc_fatal from the device */
	b->cq_fail = false;
	CHECK_EQ(rc_modify(&b->qp, &at), 0);
	CHECK_EQ(b->qp.state, RNIC_QPS_RESET);
	CHECK_EQ(b->deadline, 0);
	free(rc);
	world_free(w);

	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50, 0);
	ring(a);
	rc_tx(&a->qp, 10);
	rc_fatal(&a->qp, RNIC_ERR_BAD_DOORBELL, 0x1234);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	REQUIRE(a->nev == 1);
	CHECK_EQ(a->ev[0].type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(a->ev[0].reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(a->ev[0].info, 0x1234);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(STAT(a, qp_errors), 0);
	CHECK_EQ(a->deadline, 0);
	/* to RESET mid-flight: no completions, nothing sent, fresh PSNs */
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	CHECK_EQ(a->nscq, 2);
	CHECK_EQ(rc_tx(&a->qp, 10), 0);
	free(rc);
	world_free(w);
}

TEST(rc_srq_flush_and_last_wqe)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_attr at = { .mask = A(STATE), .state = RNIC_QPS_ERR };

	b->qp.srq = true;
	rq_post(b, &b->mr[0], 0, 8192);
	rq_post(b, &b->mr[0], 0x4000, 8192);
	rq_post(b, &b->mr[0], 0x8000, 8192);
	/* The first packet of a SEND takes an SRQ WQE; then b dies. */
	rc->drop_all[0] = false;
	post_send(w, RNIC_SQE_OP_SEND, 3000, 0);
	ring(a);
	rc_tx(&a->qp, 1);
	w->now += LAT_NS;
	while (wire_deliver(w))
		;
	CHECK_EQ(b->rq_ci, 1);
	CHECK_EQ(rc_modify(&b->qp, &at), 0);
	/* only the taken WQE is flushed, then LAST_WQE_REACHED */
	REQUIRE(b->nrcq == 1);
	CHECK_EQ(b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[0].wqe_idx, 0);
	CHECK_EQ(b->rq_ci, 1);
	CHECK_EQ(count_events(b, RNIC_EQE_LAST_WQE_REACHED), 1);
	rc_rq_doorbell(&b->qp);
	CHECK_EQ(b->nrcq, 1);
	CHECK_EQ(b->rq_ci, 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Segmentation on the wire, and a READ stream restarted by its duplicate
 */

TEST(rc_segmentation_opcodes)
{
	static const struct {
		u8 op;
		u8 wire[3];
		u32 mask[3];
	} t[] = {
		{ RNIC_SQE_OP_SEND, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
				      RC_OP_SEND_LAST }, { 0, 0, 0 } },
		{ RNIC_SQE_OP_SEND_IMM, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
					  RC_OP_SEND_LAST_IMM },
		  { 0, 0, RC_HDR_IMMDT } },
		{ RNIC_SQE_OP_SEND_INV, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
					  RC_OP_SEND_LAST_INV },
		  { 0, 0, RC_HDR_IETH } },
		{ RNIC_SQE_OP_WRITE, { RC_OP_WRITE_FIRST, RC_OP_WRITE_MIDDLE,
				       RC_OP_WRITE_LAST },
		  { RC_HDR_RETH, 0, 0 } },
		{ RNIC_SQE_OP_WRITE_IMM, { RC_OP_WRITE_FIRST,
					   RC_OP_WRITE_MIDDLE,
					   RC_OP_WRITE_LAST_IMM },
		  { RC_HDR_RETH, 0, RC_HDR_IMMDT } },
	};
	struct conn c = conn_default;
	unsigned int i;

	c.pmtu = RNIC_PMTU_256;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct recorder *rc;
		struct world *w = world_mr(&c, &rc);
		struct node *a = &w->n[0], *b = &w->n[1];
		int k;

		mr_add(b, 3, 0x900000, 4096, ALL_ACCESS)->fastreg = true;
		rq_post(b, &b->mr[0], 0, 1000);
		post_rdma(w, t[i].op, 0, 0, 600, RNIC_SQE_F_SOLICITED);
		a->sq[0].key = b->mr[3].key;
		ring(a);
		rc_tx(&a->qp, 10);
		REQUIRE(w->nq == 3);
		for (k = 0; k < 3; k++) {
			struct rc_hdr h;

			REQUIRE(rc_pkt_parse(w->q[k].data, w->q[k].len,
					     &h) == 0);
			CHECK_EQ(h.opcode, t[i].wire[k]);
			CHECK_EQ(h.mask, t[i].mask[k]);
			CHECK_EQ(h.payload_len, k < 2 ? 256 : 88);
			CHECK_EQ(h.pad, 0);
			CHECK_EQ(h.se, k == 2 && t[i].op != RNIC_SQE_OP_WRITE);
			CHECK_EQ(h.ackreq, k == 2);
			CHECK_EQ(h.psn, rc_psn_add(c.psn[0], k));
			CHECK_EQ(h.dest_qpn, b->qp.qpn);
			CHECK_EQ(h.pkey, 0xffff);
			if (k == 0 && h.mask & RC_HDR_RETH)
				CHECK_EQ(h.dma_len, 600);
		}
		world_run(w, 1000000000ULL);
		CHECK_EQ(a->nscq, 1);
		CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
		free(rc);
		world_free(w);
	}
}

TEST(rc_duplicate_read_restarts_stream)
{
	struct hostile hs;
	struct rc_hdr h, p;
	struct node *b;
	u32 e, got = 0, i, mtu = 1024;
	bool first_seen = false;

	hostile_init(&hs);
	hs.rc->drop_all[1] = false;	/* onto the wire, never delivered */
	b = hs.b;
	e = hs.e;
	h = (struct rc_hdr){ .opcode = RC_OP_READ_REQ, .ackreq = true,
			     .psn = e, .va = b->mr[0].va + 0x1000,
			     .rkey = b->mr[0].key, .dma_len = 10 * mtu,
			     .pkey = 0xffff, .dest_qpn = b->qp.qpn };
	{
		u8 buf[64];
		size_t len = rc_pkt_build(buf, &h, NULL, 0);

		rc_rx(&b->qp, buf, len);
		CHECK_EQ(rc_tx(&b->qp, 3), 3);	/* responses e .. e+2 */
		/* "responses 1 and 2 were lost": asked again from e + 1 */
		h.psn = rc_psn_add(e, 1);
		h.va += mtu;
		h.dma_len -= mtu;
		len = rc_pkt_build(buf, &h, NULL, 0);
		rc_rx(&b->qp, buf, len);
	}
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(b, read_requests_rcvd), 1);
	hs.w->nq = 0;
	CHECK_EQ(rc_tx(&b->qp, 100), 9);
	REQUIRE(hs.w->nq == 9);
	for (i = 0; i < 9; i++) {
		REQUIRE(rc_pkt_parse(hs.w->q[i].data, hs.w->q[i].len, &p) == 0);
		CHECK_EQ(p.psn, rc_psn_add(e, 1 + i));
		if (!i) {
			CHECK_EQ(p.opcode, RC_OP_READ_RESP_FIRST);
			first_seen = true;
		} else {
			CHECK_EQ(p.opcode, i == 8 ? RC_OP_READ_RESP_LAST :
				 RC_OP_READ_RESP_MIDDLE);
		}
		CHECK(test_mem_eq(__FILE__, __LINE__, "resp", p.payload,
				  b->mr[0].buf + 0x1000 + (1 + i) * mtu, mtu));
		got += p.payload_len;
	}
	CHECK(first_seen);
	CHECK_EQ(got, 9 * mtu);
	CHECK_EQ(rc_tx(&b->qp, 100), 0);
	unchanged(&hs, 10, 0);
	hostile_free(&hs);
}

TEST(rc_resp_res_exhausted_counts_beyond_max_dest)
{
	struct conn c = conn_default;
	int n, pat;

	c.max_dest_rd_atomic = 2;
	/* all READs, all atomics, alternating; 1 to 4 in one burst */
	for (pat = 0; pat < 3; pat++) {
		for (n = 1; n <= 4; n++) {
			struct recorder *rc;
			struct world *w = world_mr(&c, &rc);
			int i;

			for (i = 0; i < n; i++) {
				bool at = pat == 1 || (pat == 2 && i % 2);

				post_rdma(w, at ? RNIC_SQE_OP_FETCH_ADD :
					  RNIC_SQE_OP_READ, 0x100 * i,
					  0x100 * i, 8, 0);
			}
			ring(&w->n[0]);
			world_run(w, 1000000000ULL);
			CHECK_EQ(w->n[0].nscq, n);
			CHECK_EQ(STAT(&w->n[1], resp_res_exhausted),
				 n > 2 ? n - 2 : 0);
			free(rc);
			world_free(w);
		}
	}
}

TEST(rc_random_stream_small_messages_local_ops)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_256, .seed = 16,
				 .batches = 8, .small = true,
				 .local_ops = true, .per_batch = 1000,
				 .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_late_receives_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_2048, .drop_pm = 100,
				 .dup_pm = 50, .reorder_pm = 100, .seed = 17,
				 .batches = 6, .late = true, .local_ops = true,
				 .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_small_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .drop_pm = 150,
				 .dup_pm = 100, .reorder_pm = 200, .seed = 18,
				 .batches = 5, .small = true, .late = true,
				 .per_batch = 1000 };

	run_stream(&sc);
}

/* ------------------------------------------------------------------------
 * Link down, PFC pause, QUERY_QP PSNs
 */

TEST(rc_link_down_retry_exceeded)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	u64 t = rnic_ack_timeout_ns(c.timeout);

	c.retry_cnt = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	a->link_down = true;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	/* Lost sends count as sent: the timers run as on a real link. */
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(STAT(a, rc_req_packets), 1);
	CHECK_EQ(STAT(a, retransmits), 2);
	CHECK_EQ(a->qp.qp_stats[RNIC_QP_STAT_tx_packets], 3);
	CHECK(w->now >= 3 * t);
	free(rc);
	world_free(w);
}

TEST(rc_timer_defer_for_pfc)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	u64 t = rnic_ack_timeout_ns(conn_default.timeout), d0;

	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	rc_tx(&a->qp, 10);
	d0 = a->deadline;
	CHECK_EQ(d0, w->now + t);
	/* a 1 ms pause does not count */
	rc_timer_defer(&a->qp, 1000000);
	CHECK_EQ(a->deadline, d0 + 1000000);
	/* an early rc_timer() is harmless */
	rc_timer(&a->qp);
	CHECK_EQ(a->deadline, d0 + 1000000);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	w->now = d0 + 999999;
	rc_timer(&a->qp);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	w->now = d0 + 1000000;
	rc_timer(&a->qp);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1);
	CHECK_EQ(a->deadline, w->now + t);
	free(rc);
	world_free(w);
}

TEST(rc_query_psns)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	u32 p0 = conn_default.psn[0];

	CHECK_EQ(rc_sq_psn(&a->qp), p0);
	CHECK_EQ(rc_rq_psn(&b->qp), p0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 3000, 0);	/* 3 PSNs */
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 5000, 0);	/* 5 PSNs */
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0, 8, 0);	/* 1 PSN */
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 3);
	CHECK_EQ(rc_sq_psn(&a->qp), rc_psn_add(p0, 9));
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(p0, 9));
	/* and across 2^24 */
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10 * 1024, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(rc_sq_psn(&a->qp), rc_psn_add(p0, 19));
	CHECK_EQ(rc_rq_psn(&b->qp), 3);
	free(rc);
	world_free(w);
}
