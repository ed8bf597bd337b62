// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, work queues: rings in host memory
 * (contiguous or page lists) and the fetch of WQEs, each checked
 * completely before anything acts on it (hardware-rdma.rst, "Work queue
 * entries (2.0)"). The producer index slots are read in rdma_kick.c when
 * a kick names them, and here when a packet finds no receive WQE the
 * device knows of (RNIC_RDMA_CAP_RQ_PEEK: receive posts need no kick).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

bool rdma_page_log2_ok(unsigned int log2)
{
	return log2 >= RNIC_PAGE_LOG2_MIN && log2 <= RNIC_PAGE_LOG2_MAX &&
	       (RDMA_PAGE_SIZE_CAP & BIT_ULL(log2));
}

/* ---- rings ---- */

u8 rdma_ring_setup(struct rdev *d, struct rdma_ring *r, bool pbl, u64 addr,
		 u8 log2_depth, u8 esize_log2, u8 page_log2)
{
	u64 bytes = 1ULL << (log2_depth + esize_log2), psize;
	u32 i, n;

	memset(r, 0, sizeof(*r));
	r->log2_depth = log2_depth;
	r->esize_log2 = esize_log2;
	if (!pbl) {
		if ((addr & ((1ULL << esize_log2) - 1)) ||
		    !plat_dma_ptr(d->p, addr, bytes))
			goto bad_addr;
		r->base = addr;
		return RNIC_AQ_SUCCESS;
	}
	if (!rdma_page_log2_ok(page_log2) || page_log2 < esize_log2)
		return RNIC_AQ_BAD_PARAM;
	psize = 1ULL << page_log2;
	n = (bytes + psize - 1) >> page_log2;
	if (addr & 7)
		goto bad_addr;
	r->pages = calloc(n, sizeof(*r->pages));
	if (!r->pages)
		return RNIC_AQ_INTERNAL;
	if (plat_dma_read(d->p, addr, r->pages, n * sizeof(*r->pages)))
		goto bad_list;
	for (i = 0; i < n; i++) {
		r->pages[i] = le64_to_cpu(r->pages[i]);
		/* A ring smaller than a page needs only its own bytes. */
		if ((r->pages[i] & (psize - 1)) ||
		    !plat_dma_ptr(d->p, r->pages[i],
				  bytes < psize ? bytes : psize))
			goto bad_list;
	}
	r->npages = n;
	r->page_log2 = page_log2;
	return RNIC_AQ_SUCCESS;

bad_list:
	free(r->pages);
	r->pages = NULL;
bad_addr:
	RDEV_INC(d, dma_errors);
	return RNIC_AQ_BAD_ADDR;
}

void rdma_ring_free(struct rdma_ring *r)
{
	free(r->pages);
	r->pages = NULL;
}

u64 rdma_ring_addr(const struct rdma_ring *r, u16 idx)
{
	u64 off = (u64)(idx & ((1U << r->log2_depth) - 1)) << r->esize_log2;

	if (!r->pages)
		return r->base + off;
	return r->pages[off >> r->page_log2] +
	       (off & ((1ULL << r->page_log2) - 1));
}

int rdma_ring_read(struct rdev *d, const struct rdma_ring *r, u16 idx,
		 void *buf, size_t len)
{
	if (plat_dma_read(d->p, rdma_ring_addr(r, idx), buf, len)) {
		RDEV_INC(d, dma_errors);
		return -EFAULT;
	}
	return 0;
}

/* ---- send WQEs ---- */

static bool op_allowed(u8 type, u8 op)
{
	if (type == RNIC_QPT_RC)
		return op >= RNIC_SQE_OP_SEND && op <= RNIC_SQE_OP_REG_MR;
	return op == RNIC_SQE_OP_SEND || op == RNIC_SQE_OP_SEND_IMM;
}

static bool op_uses_key(u8 op)
{
	switch (op) {
	case RNIC_SQE_OP_SEND_IMM:
	case RNIC_SQE_OP_WRITE_IMM:
	case RNIC_SQE_OP_SEND_INV:
	case RNIC_SQE_OP_LOCAL_INV:
	case RNIC_SQE_OP_REG_MR:
		return true;
	default:
		return false;
	}
}

static bool op_may_inline(u8 op)
{
	return op >= RNIC_SQE_OP_SEND && op <= RNIC_SQE_OP_WRITE_IMM;
}

/* The opcode segment: its fields in range, its unused bytes zero. */
static bool seg_ok(struct rdma_qp *qp, const struct rdma_swqe *w)
{
	const union rnic_sqe_seg *s = &w->seg;

	switch (w->opcode) {
	case RNIC_SQE_OP_WRITE:
	case RNIC_SQE_OP_WRITE_IMM:
	case RNIC_SQE_OP_READ:
		return rdma_all_zero(s->rdma.reserved, sizeof(s->rdma.reserved));
	case RNIC_SQE_OP_CMP_SWAP:
	case RNIC_SQE_OP_FETCH_ADD:
		return !s->atomic.reserved &&
		       (w->opcode == RNIC_SQE_OP_CMP_SWAP || !s->atomic.swap);
	case RNIC_SQE_OP_REG_MR:
		return !s->reg_mr.reserved;
	case RNIC_SQE_OP_SEND:
	case RNIC_SQE_OP_SEND_IMM:
		if (qp->type == RNIC_QPT_RC)
			return rdma_all_zero(s->raw, sizeof(s->raw));
		if (!s->ud.ah || s->ud.reserved0 ||
		    !rdma_all_zero(s->ud.reserved1, sizeof(s->ud.reserved1)) ||
		    (le32_to_cpu(s->ud.remote_qpn) & ~RNIC_BTH_QPN))
			return false;
		if (qp->type == RNIC_QPT_GSI)
			return le16_to_cpu(s->ud.pkey_index) < RDMA_PKEY_TBL_LEN;
		return !s->ud.pkey_index;
	default:
		return rdma_all_zero(s->raw, sizeof(s->raw));
	}
}

/* The data segment: SGEs that add up to the length, or inline bytes. */
static bool data_ok(struct rdma_qp *qp, struct rdma_swqe *w, const u8 *raw)
{
	unsigned int max_sge = rnic_sqe_max_sge(qp->sq.esize_log2);
	unsigned int max_inl = rnic_sqe_max_inline(qp->sq.esize_log2);
	u64 sum = 0;
	unsigned int i;

	if (w->opcode == RNIC_SQE_OP_LOCAL_INV ||
	    w->opcode == RNIC_SQE_OP_REG_MR)
		return !w->num_sge && !w->length &&
		       !(w->flags & RNIC_SQE_F_INLINE);
	if (w->flags & RNIC_SQE_F_INLINE) {
		if (!op_may_inline(w->opcode) || w->num_sge ||
		    w->length > max_inl || w->length > RDMA_MAX_INLINE)
			return false;
		memcpy(w->inl, raw + RNIC_SQE_HDR_SIZE, w->length);
		return true;
	}
	if (w->num_sge > max_sge || w->num_sge > RDMA_MAX_SEND_SGE)
		return false;
	memcpy(w->sge, raw + RNIC_SQE_HDR_SIZE,
	       w->num_sge * sizeof(struct rnic_data_sge));
	for (i = 0; i < w->num_sge; i++)
		sum += le32_to_cpu(w->sge[i].len);
	if (sum != w->length)
		return false;
	if (w->opcode == RNIC_SQE_OP_CMP_SWAP ||
	    w->opcode == RNIC_SQE_OP_FETCH_ADD)
		return w->num_sge == 1 && w->length == 8;
	return true;
}

u8 rdma_sq_fetch(struct rdev *d, struct rdma_qp *qp, u16 idx, struct rdma_swqe *w)
{
	u8 raw[1 << RNIC_SQE_LOG2_MAX];
	const struct rnic_sqe *sqe = (const void *)raw;

	if (rdma_ring_read(d, &qp->sq, idx, raw, 1U << qp->sq.esize_log2))
		return RNIC_ERR_DMA_OOB;
	memset(w, 0, offsetof(struct rdma_swqe, sge));
	w->idx = idx;
	w->opcode = sqe->ctrl.opcode;
	w->flags = sqe->ctrl.flags;
	w->num_sge = sqe->ctrl.num_sge;
	w->length = le32_to_cpu(sqe->ctrl.length);
	w->imm_key = le32_to_cpu(sqe->ctrl.key);
	w->imm = sqe->ctrl.imm_data;
	w->seg = sqe->seg;
	if (!op_allowed(qp->type, w->opcode) ||
	    (w->flags & ~RNIC_SQE_F_ALL) ||
	    sqe->ctrl.reserved0 || sqe->ctrl.reserved1 ||
	    (!op_uses_key(w->opcode) && w->imm_key) ||
	    w->length > RDMA_MAX_MSG || !seg_ok(qp, w) || !data_ok(qp, w, raw))
		return RNIC_ERR_BAD_WQE;
	return 0;
}

u8 rdma_sq_opcode(struct rdev *d, struct rdma_qp *qp, u16 idx)
{
	u8 op;

	if (plat_dma_read(d->p, rdma_ring_addr(&qp->sq, idx), &op, 1))
		return 0;
	return op;
}

/* ---- receive WQEs ---- */

/* Check a receive WQE (RQ slot or SRQ slot) and copy its SGEs. */
static u8 rqe_parse(const u8 *raw, u8 rqe_log2, struct rdma_rwqe *w)
{
	const struct rnic_rqe *rqe = (const void *)raw;
	unsigned int i;

	w->num_sge = rqe->num_sge;
	w->total = 0;
	if (!rdma_all_zero(rqe->reserved0, sizeof(rqe->reserved0)) ||
	    !rdma_all_zero(rqe->reserved1, sizeof(rqe->reserved1)) ||
	    w->num_sge > rnic_rqe_max_sge(rqe_log2) ||
	    w->num_sge > RDMA_MAX_RECV_SGE) {
		w->num_sge = 0;
		return RNIC_ERR_BAD_WQE;
	}
	memcpy(w->sge, raw + RNIC_RQE_HDR_SIZE,
	       w->num_sge * sizeof(struct rnic_data_sge));
	for (i = 0; i < w->num_sge; i++)
		w->total += le32_to_cpu(w->sge[i].len);
	return 0;
}

/* An SRQ slot value the checks accept, or false (the slot read once) */
static bool srq_slot_value(struct rdev *d, struct rdma_srq *srq, u32 *v)
{
	*v = rdma_slot_read(d, srq->page, srq->slot);
	return rdma_slot_pi_ok(*v, srq->ci, srq->wqe.log2_depth);
}

void rdma_srq_slot(struct rdev *d, struct rdma_srq *srq)
{
	u32 v;

	if (srq->error)
		return;
	if (!srq_slot_value(d, srq, &v)) {
		RDEV_INC(d, bad_doorbells);
		rdma_srq_error(d, srq, RNIC_ERR_BAD_DOORBELL, v);
		return;
	}
	srq->pi = v;
}

/*
 * WQEs posted and not yet taken, for QUERY_SRQ and the limit event: posts
 * without a kick count too (a value the checks refuse is left to the next
 * take that finds the SRQ empty).
 */
u16 rdma_srq_avail(struct rdev *d, struct rdma_srq *srq)
{
	u32 v;

	if (!srq->error && srq_slot_value(d, srq, &v) && (u16)v != srq->pi) {
		srq->pi = v;
		RDMA_INC(d, rq_peeks);
	}
	return srq->pi - srq->ci;
}

/*
 * The RQ looks empty: read its slot, which a receive post may have moved
 * without a kick. 1 if it shows new WQEs (counted in rq_peeks), 0 if
 * not, -EINVAL for a value the checks refuse (in @bad, counted in
 * bad_doorbells; the caller fails the QP as a kick would have).
 */
static int rq_peek(struct rdev *d, struct rdma_qp *qp, u32 *bad)
{
	u32 v;

	/* ERR: flushes take what is known, rdma_rq_watch() the rest */
	if (qp->state == RNIC_QPS_RESET || qp->state == RNIC_QPS_ERR)
		return 0;
	v = rdma_slot_read(d, qp->page, qp->rq_slot);
	if (!rdma_slot_pi_ok(v, qp->rq_ci, qp->rq.log2_depth)) {
		RDEV_INC(d, bad_doorbells);
		*bad = v;
		return -EINVAL;
	}
	if ((u16)v == qp->rq_pi)
		return 0;
	qp->rq_pi = v;
	RDMA_INC(d, rq_peeks);
	return 1;
}

/* The same for an SRQ: 1 with new WQEs, 0 without, -EIO if it failed */
static int srq_refill(struct rdev *d, struct rdma_srq *srq)
{
	u16 pi = srq->pi;

	rdma_srq_slot(d, srq);
	if (srq->error)
		return -EIO;
	if (srq->pi == pi)
		return 0;
	RDMA_INC(d, rq_peeks);
	return 1;
}

static int srq_peek(struct rdev *d, struct rdma_srq *srq, struct rdma_rwqe *w)
{
	u32 depth = 1U << srq->wqe.log2_depth;
	u8 raw[1 << RNIC_RQE_LOG2_MAX];
	__le16 e;
	u16 s;

	if (srq->error)
		return -EIO;
	if (srq->pi == srq->ci) {
		int rc = srq_refill(d, srq);

		if (rc <= 0)
			return rc < 0 ? rc : -ENOENT;
	}
	if (rdma_ring_read(d, &srq->idx, srq->ci, &e, sizeof(e))) {
		rdma_srq_error(d, srq, RNIC_ERR_DMA_OOB,
			     rdma_ring_addr(&srq->idx, srq->ci));
		return -EIO;
	}
	s = le16_to_cpu(e);
	if (s >= depth || srq->in_use[s]) {
		RDEV_INC(d, bad_doorbells);
		rdma_srq_error(d, srq, RNIC_ERR_BAD_DOORBELL, s);
		return -EIO;
	}
	if (rdma_ring_read(d, &srq->wqe, s, raw, 1U << srq->rqe_log2)) {
		rdma_srq_error(d, srq, RNIC_ERR_DMA_OOB,
			     rdma_ring_addr(&srq->wqe, s));
		return -EIO;
	}
	w->srq = true;
	w->idx = s;
	return rqe_parse(raw, srq->rqe_log2, w);
}

int rdma_rwqe_peek(struct rdev *d, struct rdma_qp *qp, struct rdma_rwqe *w,
		 u8 *syn, u64 *info)
{
	u8 raw[1 << RNIC_RQE_LOG2_MAX];
	int rc;

	memset(w, 0, offsetof(struct rdma_rwqe, sge));
	if (qp->srq) {
		rc = srq_peek(d, qp->srq, w);
		/* The SRQ failed its QPs; this one learns it here too. */
		*syn = RNIC_ERR_SRQ_ERROR;
		*info = qp->srq->srqn;
		return rc;
	}
	if (qp->rq_next == qp->rq_pi) {
		u32 bad = 0;

		rc = rq_peek(d, qp, &bad);
		if (rc < 0) {
			*syn = RNIC_ERR_BAD_DOORBELL;
			*info = bad;
			return -EIO;
		}
		if (!rc)
			return -ENOENT;
	}
	if (rdma_ring_read(d, &qp->rq, qp->rq_next, raw,
			 1U << qp->rq.esize_log2)) {
		*syn = RNIC_ERR_DMA_OOB;
		*info = rdma_ring_addr(&qp->rq, qp->rq_next);
		return -EIO;
	}
	w->srq = false;
	w->idx = qp->rq_next;
	return rqe_parse(raw, qp->rq.esize_log2, w);
}

void rdma_rwqe_take(struct rdev *d, struct rdma_qp *qp, const struct rdma_rwqe *w)
{
	struct rdma_srq *srq = qp->srq;
	u16 avail;

	if (!w->srq) {
		qp->rq_next++;	/* retired (rq_ci) by its completion */
		return;
	}
	srq->in_use[w->idx] = 1;
	srq->ci++;
	qp->srq_taken = true;
	qp->srq_slot_taken = w->idx;
	avail = srq->pi - srq->ci;
	/* posts without a kick may have refilled it: count those */
	if (srq->limit && avail < srq->limit)
		avail = rdma_srq_avail(d, srq);
	if (srq->limit && avail < srq->limit) {
		/* One event per arm: the limit disarms (IB semantics). */
		srq->limit = 0;
		RDMA_INC(d, srq_limit_events);
		rdma_event(d, RNIC_EQE_SRQ_LIMIT, RNIC_ERR_NONE,
			 RNIC_EQE_OBJ_SRQ, srq->srqn, avail);
	}
}

/* ---- SRQ errors ---- */

void rdma_srq_error(struct rdev *d, struct rdma_srq *srq, u8 reason, u64 info)
{
	struct rdma_idtab *t = &d->rdma->qps;
	u32 i;

	if (srq->error)
		return;
	srq->error = true;
	plat_log(d->p, "srq 0x%x error: reason %u info 0x%llx", srq->srqn,
		 reason, (unsigned long long)info);
	rdma_event(d, RNIC_EQE_SRQ_ERR, reason, RNIC_EQE_OBJ_SRQ, srq->srqn,
		 info);
	for (i = 0; i <= t->mask; i++) {
		struct rdma_qp *qp = t->obj[i];

		if (qp && qp->srq == srq && qp->state != RNIC_QPS_RESET)
			d->rdma->upper->qp_fatal(d, qp, RNIC_EQE_QP_FATAL,
						 RNIC_ERR_SRQ_ERROR,
						 srq->srqn);
	}
}
