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
				n->woken = false;
				if (rc_tx(&n->qp, 64))
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
static __attribute__((unused)) int scq_visible(const struct node *n, struct rc_cqe *out, int max)
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
		CHECK_EQ(w->n[0].port_stats[RNIC_RDMA_STAT_rc_req_packets],
			 STAT(&w->n[0], rc_req_packets));
		world_free(w);
	}
}
