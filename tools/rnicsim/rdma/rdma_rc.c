// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine: where RC QPs meet the RC transport
 * engine (rc.h). The engine owns the transport (PSNs, ACKs, retries,
 * in-order completion, flush, COMM_EST, SQ_DRAINED, LAST_WQE_REACHED);
 * the device gives it WQEs from the rings, memory through MR keys, the
 * wire through the QP's path template, CQs, events and a timer.
 *
 * The engine must not be re-entered for a QP from one of its own
 * callbacks: a device error found inside a callback (an SRQ failing
 * while the engine takes a WQE from it) is kept and applied by the
 * pump, and loopback packets queue in the receive buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"
#include "transport/rc.h"

static struct rdma_qp *to_qp(struct rc_qp *rq)
{
	return rq->priv;
}

/* ---- what the device does for the engine (struct rc_ops) ---- */

static void to_rc_sge(struct rc_sge *dst, const struct rnic_data_sge *src,
		      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		dst[i].addr = le64_to_cpu(src[i].addr);
		dst[i].len = le32_to_cpu(src[i].len);
		dst[i].lkey = le32_to_cpu(src[i].lkey);
	}
}

static int op_sq_peek(struct rc_qp *rq, u16 idx, struct rc_swqe *wqe)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rdev *d = qp->d;
	u16 posted = qp->sq_pi - idx;
	struct rdma_swqe w;
	u8 syn;

	if (!posted || posted > (1U << qp->sq.log2_depth))
		return RC_WQE_NONE;
	syn = rdma_sq_fetch(d, qp, idx, &w);
	memset(wqe, 0, offsetof(struct rc_swqe, sge));
	wqe->idx = idx;
	wqe->opcode = w.opcode;
	wqe->syndrome = syn;
	if (syn == RNIC_ERR_DMA_OOB)
		return RC_WQE_FATAL;
	if (syn)
		return RC_WQE_BAD;
	wqe->flags = w.flags;
	wqe->num_sge = w.num_sge;
	wqe->length = w.length;
	if (w.opcode == RNIC_SQE_OP_SEND_IMM ||
	    w.opcode == RNIC_SQE_OP_WRITE_IMM)
		wqe->imm_data = w.imm;
	else
		wqe->key = w.imm_key;
	switch (w.opcode) {
	case RNIC_SQE_OP_WRITE:
	case RNIC_SQE_OP_WRITE_IMM:
	case RNIC_SQE_OP_READ:
		wqe->remote_addr = le64_to_cpu(w.seg.rdma.remote_addr);
		wqe->rkey = le32_to_cpu(w.seg.rdma.rkey);
		break;
	case RNIC_SQE_OP_CMP_SWAP:
	case RNIC_SQE_OP_FETCH_ADD:
		wqe->remote_addr = le64_to_cpu(w.seg.atomic.remote_addr);
		wqe->rkey = le32_to_cpu(w.seg.atomic.rkey);
		wqe->compare_add = le64_to_cpu(w.seg.atomic.compare_add);
		wqe->swap = le64_to_cpu(w.seg.atomic.swap);
		break;
	default:
		break;
	}
	wqe->seg = w.seg;
	if (w.flags & RNIC_SQE_F_INLINE)
		memcpy(wqe->inline_data, w.inl, w.length);
	else
		to_rc_sge(wqe->sge, w.sge, w.num_sge);
	return RC_WQE_OK;
}

static int op_rq_take(struct rc_qp *rq, struct rc_rwqe *wqe)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rdma_rwqe w;
	u64 info = 0;
	u8 syn = 0;
	int rc;

	memset(wqe, 0, offsetof(struct rc_rwqe, sge));
	rc = rdma_rwqe_peek(qp->d, qp, &w, &syn, &info);
	if (rc == -ENOENT)
		return RC_WQE_NONE;
	if (rc < 0) {
		wqe->syndrome = syn;
		return RC_WQE_FATAL;
	}
	rdma_rwqe_take(qp->d, qp, &w);
	wqe->idx = w.idx;
	wqe->srq = w.srq;
	if (rc > 0) {
		wqe->syndrome = rc;
		return RC_WQE_BAD;
	}
	wqe->num_sge = w.num_sge;
	to_rc_sge(wqe->sge, w.sge, w.num_sge);
	return RC_WQE_OK;
}

static u8 op_mem(struct rc_qp *rq, enum rc_mem_op op, u32 key, u64 va,
		 void *buf, u32 len)
{
	static const u8 need[] = {
		[RC_MEM_LOCAL_READ] = 0,
		[RC_MEM_LOCAL_WRITE] = RNIC_ACCESS_LOCAL_WRITE,
		[RC_MEM_RECV_WRITE] = RNIC_ACCESS_LOCAL_WRITE,
		[RC_MEM_REMOTE_WRITE] = RNIC_ACCESS_REMOTE_WRITE,
		[RC_MEM_REMOTE_READ] = RNIC_ACCESS_REMOTE_READ,
	};
	struct rdma_qp *qp = to_qp(rq);
	struct rdma_pd *pd = qp->pd;
	struct rdma_mr *mr;
	bool write;
	int rc;
	u8 syn;

	if ((unsigned int)op >= ARRAY_SIZE(need))
		return RNIC_ERR_INTERNAL;
	/* Receive buffers of an SRQ belong to the SRQ's PD. */
	if (op == RC_MEM_RECV_WRITE && qp->srq)
		pd = qp->srq->pd;
	syn = rdma_key_check(qp->d, key, pd, need[op], va, len, &mr);
	if (syn || !buf || !len)
		return syn;
	write = op != RC_MEM_LOCAL_READ && op != RC_MEM_REMOTE_READ;
	rc = write ? rdma_mr_write(qp->d, mr, va, buf, len) :
		     rdma_mr_read(qp->d, mr, va, buf, len);
	if (rc) {
		RDEV_INC(qp->d, dma_errors);
		return RNIC_ERR_DMA_OOB;
	}
	return 0;
}

static u8 op_atomic(struct rc_qp *rq, u32 rkey, u64 va, bool cmp_swap,
		    u64 compare_add, u64 swap, u64 *orig)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rdma_mr *mr;
	__le64 v;
	u64 old, new;
	u8 syn;

	syn = rdma_key_check(qp->d, rkey, qp->pd, RNIC_ACCESS_REMOTE_ATOMIC, va,
			   8, &mr);
	if (syn)
		return syn;
	/* One thread runs the device: this is atomic against its atomics. */
	if (rdma_mr_read(qp->d, mr, va, &v, 8))
		goto dma;
	old = le64_to_cpu(v);
	if (cmp_swap)
		new = old == compare_add ? swap : old;
	else
		new = old + compare_add;
	v = cpu_to_le64(new);
	if (rdma_mr_write(qp->d, mr, va, &v, 8))
		goto dma;
	*orig = old;
	return 0;
dma:
	RDEV_INC(qp->d, dma_errors);
	return RNIC_ERR_DMA_OOB;
}

static u8 op_invalidate(struct rc_qp *rq, u32 key)
{
	struct rdma_qp *qp = to_qp(rq);

	return rdma_remote_inv(qp->d, qp, key);
}

static u8 op_local_op(struct rc_qp *rq, const struct rc_swqe *wqe)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rdma_swqe w;
	u8 syn;

	memset(&w, 0, offsetof(struct rdma_swqe, sge));
	w.idx = wqe->idx;
	w.opcode = wqe->opcode;
	w.flags = wqe->flags;
	w.imm_key = wqe->key;
	w.seg = wqe->seg;
	syn = rdma_local_op(qp->d, qp, &w);
	if (syn >= RNIC_ERR_BAD_KEY && syn <= RNIC_ERR_KEY_STATE)
		RDMA_INC(qp->d, key_violations);
	return syn;
}

static int op_emit(struct rc_qp *rq, const u8 *pkt, size_t len)
{
	struct rdma_qp *qp = to_qp(rq);
	int rc;

	if (!qp->has_path)
		return -ENETUNREACH;	/* lost; cannot happen after RTR */
	rc = rdma_tx_raw(qp->d, qp, &qp->path, pkt, len);
	if (rc == -EAGAIN && !qp->pfc_wait) {
		/* Paused: parked until PFC lets the priority go. */
		qp->pfc_wait = true;
		qp->pfc_since = plat_now_ns(qp->d->p);
	}
	return rc;
}

static int op_complete(struct rc_qp *rq, const struct rc_cqe *cqe)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rnic_rdma_cqe c = {};
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;
	struct rdma_cq *cq = recv ? qp->rcq : qp->scq;

	if (!recv) {
		qp->sq_ci = cqe->wqe_idx + 1;
		qp->sq_next = qp->sq_ci;
	} else if (cqe->flags & RNIC_RCQE_F_SRQ) {
		if (qp->srq_taken && qp->srq_slot_taken == cqe->wqe_idx) {
			qp->srq->in_use[cqe->wqe_idx] = 0;
			qp->srq_taken = false;
		}
	} else {
		qp->rq_ci = cqe->wqe_idx + 1;
		if ((u16)(qp->rq_next - qp->rq_ci) > (u16)(qp->rq_pi - qp->rq_ci))
			qp->rq_next = qp->rq_ci;
	}
	if (cqe->flags & RC_CQE_F_SILENT)
		return 0;
	/* An error CQE carries only phase and SRQ among the flags. */
	c.flags = cqe->flags & (cqe->status == RNIC_WC_SUCCESS ?
				RNIC_RCQE_F_IMM | RNIC_RCQE_F_INV |
				RNIC_RCQE_F_SRQ : RNIC_RCQE_F_SRQ);
	c.opcode = cqe->opcode;
	c.status = cqe->status;
	c.syndrome = cqe->syndrome;
	c.qpn = cpu_to_le32(qp->qpn);
	c.wqe_idx = cpu_to_le16(cqe->wqe_idx);
	if (cqe->status == RNIC_WC_SUCCESS) {
		c.byte_len = cpu_to_le32(cqe->byte_len);
		if (recv)
			c.pkey_index = cpu_to_le16(qp->pkey_index);
		if (c.flags & RNIC_RCQE_F_IMM)
			c.imm_data = cqe->imm_data;
		else if (c.flags & RNIC_RCQE_F_INV)
			c.inv_key = cpu_to_le32(cqe->inv_key);
	}
	return rdma_cq_post(qp->d, cq, &c, cqe->flags & RC_CQE_F_SOLICITED);
}

static void op_event(struct rc_qp *rq, u8 type, u8 reason, u64 info)
{
	struct rdma_qp *qp = to_qp(rq);

	rdma_event(qp->d, type, reason, RNIC_EQE_OBJ_QP, qp->qpn, info);
}

static void op_state_changed(struct rc_qp *rq, u8 old, u8 new)
{
	struct rdma_qp *qp = to_qp(rq);

	(void)old;
	qp->state = new;
	if (new == RNIC_QPS_ERR)
		qp->pfc_wait = false;
}

static void op_wake(struct rc_qp *rq)
{
	struct rdma_qp *qp = to_qp(rq);

	rdma_runq_add(qp->d, qp);
}

static u64 op_now_ns(struct rc_qp *rq)
{
	return plat_now_ns(to_qp(rq)->d->p);
}

static void timed_del(struct rdma_dev *v, struct rdma_qp *qp)
{
	if (!qp->rc_listed)
		return;
	if (qp->rc_prev)
		qp->rc_prev->rc_next = qp->rc_next;
	else
		v->rc_timed = qp->rc_next;
	if (qp->rc_next)
		qp->rc_next->rc_prev = qp->rc_prev;
	qp->rc_next = qp->rc_prev = NULL;
	qp->rc_listed = false;
}

/* Cleared timers stay listed until the tick passes them (see rdma_dev). */
static void op_timer_set(struct rc_qp *rq, u64 deadline_ns)
{
	struct rdma_qp *qp = to_qp(rq);
	struct rdma_dev *v = qp->d->rdma;

	qp->rc_deadline = deadline_ns;
	if (!deadline_ns || qp->rc_listed)
		return;
	qp->rc_listed = true;
	qp->rc_prev = NULL;
	qp->rc_next = v->rc_timed;
	if (v->rc_timed)
		v->rc_timed->rc_prev = qp;
	v->rc_timed = qp;
}

static const struct rc_ops rdma_rc_ops = {
	.sq_peek = op_sq_peek,
	.rq_take = op_rq_take,
	.mem = op_mem,
	.atomic = op_atomic,
	.invalidate = op_invalidate,
	.local_op = op_local_op,
	.emit = op_emit,
	.complete = op_complete,
	.event = op_event,
	.state_changed = op_state_changed,
	.wake = op_wake,
	.now_ns = op_now_ns,
	.timer_set = op_timer_set,
};

/* ---- what the device asks of the engine ---- */

/* Calls into the engine are bracketed: errors found meanwhile wait. */
static void enter(struct rdma_qp *qp)
{
	qp->rc_busy++;
}

static void leave(struct rdma_qp *qp)
{
	if (--qp->rc_busy || !qp->rc_fatal_pending)
		return;
	qp->rc_fatal_pending = false;
	if (qp->state != RNIC_QPS_ERR && qp->state != RNIC_QPS_RESET)
		rdma_rc_fatal(qp->d, qp, qp->rc_fatal_reason, qp->rc_fatal_info);
}

int rdma_rc_create(struct rdev *d, struct rdma_qp *qp)
{
	qp->rc = malloc(sizeof(*qp->rc));
	if (!qp->rc)
		return -ENOMEM;
	rc_qp_init(qp->rc, &rdma_rc_ops, qp, qp->qpn);
	qp->rc->srq = qp->srq;
	qp->rc->port_stats = d->rdma->ctr;
	return 0;
}

void rdma_rc_destroy(struct rdev *d, struct rdma_qp *qp)
{
	timed_del(d->rdma, qp);
	free(qp->rc);
	qp->rc = NULL;
}

static void attr_from_cmd(const struct rnic_aq_modify_qp *c,
			  struct rc_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->mask = le32_to_cpu(c->attr_mask);
	a->state = c->state;
	a->cur_state = c->cur_state;
	a->path_mtu = c->path_mtu;
	a->access = c->access;
	a->timeout = c->timeout;
	a->retry_cnt = c->retry_cnt;
	a->rnr_retry = c->rnr_retry;
	a->min_rnr_timer = c->min_rnr_timer;
	a->max_rd_atomic = c->max_rd_atomic;
	a->max_dest_rd_atomic = c->max_dest_rd_atomic;
	a->sqd_notify = c->sqd_notify;
	a->sq_psn = le32_to_cpu(c->sq_psn);
	a->rq_psn = le32_to_cpu(c->rq_psn);
	a->dest_qpn = le32_to_cpu(c->dest_qpn);
}

u8 rdma_rc_modify_check(struct rdev *d, struct rdma_qp *qp,
		      const struct rnic_aq_modify_qp *c)
{
	struct rc_attr a;

	(void)d;
	attr_from_cmd(c, &a);
	return rc_modify_check(qp->rc, &a);
}

void rdma_rc_modify(struct rdev *d, struct rdma_qp *qp,
		  const struct rnic_aq_modify_qp *c)
{
	struct rc_attr a;

	attr_from_cmd(c, &a);
	qp->rc->pkey = d->rdma->pkey[qp->pkey_index];
	enter(qp);
	rc_modify(qp->rc, &a);
	leave(qp);
}

void rdma_rc_fatal(struct rdev *d, struct rdma_qp *qp, u8 reason, u64 info)
{
	if (qp->rc_busy) {
		qp->rc_fatal_pending = true;
		qp->rc_fatal_reason = reason;
		qp->rc_fatal_info = info;
		rdma_runq_add(d, qp);
		return;
	}
	RDMA_INC(d, qp_errors);
	plat_log(d->p, "qp 0x%x fatal: reason %u info 0x%llx", qp->qpn,
		 reason, (unsigned long long)info);
	enter(qp);
	rc_fatal(qp->rc, reason, info);
	leave(qp);
}

void rdma_rc_sq_doorbell(struct rdev *d, struct rdma_qp *qp)
{
	(void)d;
	enter(qp);
	rc_sq_doorbell(qp->rc);
	leave(qp);
}

void rdma_rc_rq_doorbell(struct rdev *d, struct rdma_qp *qp)
{
	(void)d;
	enter(qp);
	rc_rq_doorbell(qp->rc);
	leave(qp);
}

bool rdma_rc_send_step(struct rdev *d, struct rdma_qp *qp)
{
	bool more;

	if (qp->pfc_wait)
		return false;
	if (qp->has_path &&
	    rdev_pfc_paused_now(d, rdma_tmpl_prio(&qp->path))) {
		qp->pfc_wait = true;
		qp->pfc_since = plat_now_ns(d->p);
		return false;
	}
	enter(qp);
	rc_tx(qp->rc, 1);
	more = rc_tx_pending(qp->rc) && !qp->pfc_wait;
	leave(qp);
	return more;
}

void rdma_rc_resumed(struct rdev *d, struct rdma_qp *qp, u64 paused_ns)
{
	(void)d;
	enter(qp);
	rc_timer_defer(qp->rc, paused_ns);
	leave(qp);
}

void rdma_rc_recv(struct rdev *d, struct rdma_qp *qp, struct rdma_pkt *pkt)
{
	(void)d;
	enter(qp);
	rc_rx(qp->rc, pkt->bth, pkt->tlen);
	leave(qp);
}

/*
 * The QPs whose timer may be armed. Nothing but this loop takes a QP off
 * the list during a tick (a timer that fires may arm others: they go to
 * the head), so the next one is still there after the current one ran.
 */
u64 rdma_rc_tick(struct rdev *d, u64 now)
{
	struct rdma_qp *qp, *nqp;
	u64 next = 0;

	for (qp = d->rdma->rc_timed; qp; qp = nqp) {
		nqp = qp->rc_next;
		if (!qp->rc || !qp->rc_deadline) {
			timed_del(d->rdma, qp);
			continue;
		}
		if (now >= qp->rc_deadline) {
			qp->rc_deadline = 0;
			enter(qp);
			rc_timer(qp->rc);
			leave(qp);
		}
		if (qp->rc_deadline && (!next || qp->rc_deadline < next))
			next = qp->rc_deadline;
	}
	return next;
}

bool rdma_rc_sq_busy(struct rdev *d, struct rdma_qp *qp)
{
	(void)d;
	return rc_sq_draining(qp->rc);
}

const u64 *rdma_rc_qp_stats(struct rdma_qp *qp)
{
	return qp->rc->qp_stats;
}

void rdma_rc_query(struct rdev *d, struct rdma_qp *qp, struct rnic_qp_query *q)
{
	const struct rc_qp *rq = qp->rc;
	unsigned int i, used = 0;

	(void)d;
	q->sq_psn = cpu_to_le32(rc_sq_psn(rq));
	q->rq_psn = cpu_to_le32(rc_rq_psn(rq));
	q->unacked_psn = cpu_to_le32(rq->req.una_psn);
	q->retry_left = rq->req.retry_left;
	q->rnr_retry_left = rq->req.rnr_left;
	q->rd_atomic_out = rq->req.rd_atomic;
	for (i = 0; i < RC_MAX_RD_ATOMIC; i++)
		used += rq->resp.res[i].valid;
	q->resp_res_used = used;
	q->path_mtu = rq->path_mtu;
	q->access = rq->access;
	q->dest_qpn = cpu_to_le32(rq->dest_qpn);
	q->timeout = rq->timeout;
	q->retry_cnt = rq->retry_cnt;
	q->rnr_retry = rq->rnr_retry;
	q->min_rnr_timer = rq->min_rnr_timer;
	q->max_rd_atomic = rq->max_rd_atomic;
	q->max_dest_rd_atomic = rq->max_dest_rd_atomic;
	if (rq->sqd_notify)
		q->flags |= RNIC_QPQ_F_SQD_NOTIFY;
	else
		q->flags &= ~RNIC_QPQ_F_SQD_NOTIFY;
}

/* SET_PKEY changed an entry: RC QPs using it send the new P_Key. */
void rdma_rc_pkey_changed(struct rdev *d, u16 index)
{
	struct rdma_idtab *t = &d->rdma->qps;
	u32 i;

	for (i = 0; i <= t->mask; i++) {
		struct rdma_qp *qp = t->obj[i];

		if (qp && qp->rc && qp->pkey_index == index)
			qp->rc->pkey = d->rdma->pkey[index];
	}
}
