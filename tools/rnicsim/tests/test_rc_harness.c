// SPDX-License-Identifier: GPL-2.0
/*
 * The RC engine test harness (see test_rc_harness.h): the fake device
 * ops, setup, the wire and its virtual clock, and the recording tap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_rc_harness.h"

u32 rnd(struct world *w)
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

const struct rc_ops f_ops = {
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

const struct conn conn_default = {
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

u8 node_modify(struct node *n, u8 state, u32 mask,
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

struct world *world_alloc(u64 seed)
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
	return w;
}

struct world *world_new(const struct conn *c, u64 seed)
{
	struct world *w = world_alloc(seed);
	int i;

	for (i = 0; i < 2; i++) {
		struct node *n = &w->n[i];

		CHECK_EQ(node_modify(n, RNIC_QPS_INIT, M_INIT, c), 0);
		CHECK_EQ(node_modify(n, RNIC_QPS_RTR, M_RTR, c), 0);
		CHECK_EQ(node_modify(n, RNIC_QPS_RTS, M_RTS, c), 0);
	}
	return w;
}

void world_free(struct world *w)
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
struct fmr *mr_add(struct node *n, int slot, u64 va, u32 len,
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

struct rc_swqe *sq_post(struct node *n, u8 opcode, u8 flags)
{
	struct rc_swqe *s = &n->sq[n->sq_pi % SQN];

	memset(s, 0, sizeof(*s));
	s->opcode = opcode;
	s->flags = flags | RNIC_SQE_F_SIGNALED;
	s->idx = n->sq_pi++;
	return s;
}

void sge_add(struct rc_swqe *s, const struct fmr *m, u64 off, u32 len)
{
	s->sge[s->num_sge++] = (struct rc_sge){ m->va + off, len, m->key };
	s->length += len;
}

void rq_post(struct node *n, const struct fmr *m, u64 off, u32 len)
{
	struct rc_rwqe *r = &n->rq[n->rq_pi++ % RQN];

	memset(r, 0, sizeof(*r));
	if (m) {
		r->num_sge = 1;
		r->sge[0] = (struct rc_sge){ m->va + off, len, m->key };
	}
}

void ring(struct node *n)
{
	rc_sq_doorbell(&n->qp);
}

/* Deliver the earliest packet due now, if any. */
bool wire_deliver(struct world *w)
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
void world_run(struct world *w, u64 limit_ns)
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

int count_events(const struct node *n, u8 type)
{
	int i, k = 0;

	for (i = 0; i < n->nev; i++)
		k += n->ev[i].type == type;
	return k;
}

/* Signaled send completions only (what the driver would see as CQEs). */
int scq_visible(const struct node *n, struct rc_cqe *out, int max)
{
	int i, k = 0;

	for (i = 0; i < n->nscq; i++)
		if (!(n->scq[i].flags & RC_CQE_F_SILENT) && k < max)
			out[k++] = n->scq[i];
	return k;
}

void fill(struct fmr *m, u64 off, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		m->buf[off + i] = (u8)(seed + i * 131 + (i >> 8));
}

/* ------------------------------------------------------------------------
 * A tap that records what each side sends, and can drop chosen packets
 */

struct recorder *rec_of(struct world *w)
{
	return w->tap_arg;
}

bool rec_tap(struct world *w, int from, u8 *pkt, size_t *len)
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

struct recorder *tap_on(struct world *w)
{
	struct recorder *rc = calloc(1, sizeof(*rc));

	rc->drop_from = -1;
	rc->drop_op = -1;
	w->tap = rec_tap;
	w->tap_arg = rc;
	return rc;
}

int rec_count(const struct recorder *rc, int from, int op)
{
	int i, k = 0;

	for (i = 0; i < rc->n; i++)
		k += rc->r[i].from == from && (op < 0 || rc->r[i].op == op);
	return k;
}

/* A world with one 1 MiB MR per side (slot 0) and the tap on. */
struct world *world_mr(const struct conn *c, struct recorder **rc)
{
	struct world *w = world_new(c, 99);

	mr_add(&w->n[0], 0, 0x100000, 1 << 20, ALL_ACCESS);
	mr_add(&w->n[1], 0, 0x200000, 1 << 20, ALL_ACCESS);
	*rc = tap_on(w);
	return w;
}

void post_send(struct world *w, u8 op, u32 len, u8 flags)
{
	struct node *a = &w->n[0];
	struct rc_swqe *s = sq_post(a, op, flags);

	sge_add(s, &a->mr[0], 0, len);
}

void post_rdma(struct world *w, u8 op, u64 loff, u64 roff, u32 len,
		      u8 flags)
{
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_swqe *s = sq_post(a, op, flags);

	sge_add(s, &a->mr[0], loff, len);
	s->remote_addr = b->mr[0].va + roff;
	s->rkey = b->mr[0].key;
}
