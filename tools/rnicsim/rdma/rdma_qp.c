// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, queue pairs and shared receive queues:
 * their admin commands, the QP state machine with its attribute checks
 * (hardware-rdma.rst, "QP"), completions of WQEs, errors and flush.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

/* ---- SRQ ---- */

static struct rdma_srq *srq_get(struct rdev *d, u32 srqn)
{
	return idtab_get(&d->rdma->srqs, srqn);
}

static u8 check_create_srq(struct rdev *d, const struct rnic_aq_create_srq *c)
{
	u32 depth = 1U << (c->log2_depth & 31);

	if (!rdma_all_zero(c->reserved, sizeof(c->reserved)) ||
	    (c->flags & ~RNIC_SRQ_F_ALL) ||
	    c->log2_depth < RNIC_RING_LOG2_MIN ||
	    c->log2_depth > RDMA_MAX_SRQ_LOG2 ||
	    c->rqe_log2 < RNIC_RQE_LOG2_MIN || c->rqe_log2 > RNIC_RQE_LOG2_MAX ||
	    (!c->flags && c->page_log2) || le32_to_cpu(c->limit) > depth)
		return RNIC_AQ_BAD_PARAM;
	(void)d;
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_create_srq(struct rdev *d, const union rnic_aq_entry *e,
		     union rnic_aq_resp *resp)
{
	const struct rnic_aq_create_srq *c = (const void *)e;
	struct rdma_dbp *page;
	struct rdma_srq *srq;
	struct rdma_pd *pd;
	u8 st;

	st = check_create_srq(d, c);
	if (st)
		return st;
	pd = rdma_pd_get(d, le32_to_cpu(c->pdn));
	page = rdma_dbp_get(d, le32_to_cpu(c->db_page));
	if (!pd || !page)
		return RNIC_AQ_NOT_FOUND;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return RNIC_AQ_INTERNAL;
	srq->in_use = calloc(1U << c->log2_depth, 1);
	if (!srq->in_use) {
		st = RNIC_AQ_INTERNAL;
		goto err_free;
	}
	st = rdma_ring_setup(d, &srq->wqe, c->flags & RNIC_SRQ_F_WQE_PBL,
			   le64_to_cpu(c->wqe_addr), c->log2_depth,
			   c->rqe_log2, c->page_log2);
	if (st)
		goto err_free;
	st = rdma_ring_setup(d, &srq->idx, c->flags & RNIC_SRQ_F_IDX_PBL,
			   le64_to_cpu(c->idx_addr), c->log2_depth, 1,
			   c->page_log2);
	if (st)
		goto err_wqe;
	if (rdma_slot_assign(d, page, RDMA_SLOT_SRQ, srq, &srq->slot)) {
		st = RNIC_AQ_NO_DB_SLOT;
		goto err_idx;
	}
	if (idtab_alloc(&d->rdma->srqs, srq, &srq->srqn)) {
		st = RNIC_AQ_NO_RESOURCES;
		goto err_slot;
	}
	srq->pd = pd;
	srq->page = page;
	srq->rqe_log2 = c->rqe_log2;
	srq->limit = le32_to_cpu(c->limit);
	pd->refs++;
	resp->create_srq.srqn = cpu_to_le32(srq->srqn);
	resp->create_srq.db_off = cpu_to_le16(srq->slot * 4);
	return RNIC_AQ_SUCCESS;

err_slot:
	rdma_slot_release(d, page, srq->slot);
err_idx:
	rdma_ring_free(&srq->idx);
err_wqe:
	rdma_ring_free(&srq->wqe);
err_free:
	free(srq->in_use);
	free(srq);
	return st;
}

u8 rdma_cmd_modify_srq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_modify_srq *c = (const void *)e;
	u32 mask = le32_to_cpu(c->attr_mask);
	u32 limit = le32_to_cpu(c->limit);
	struct rdma_srq *srq;

	if ((mask & ~RNIC_SRQ_ATTR_ALL) ||
	    !rdma_all_zero(c->reserved, sizeof(c->reserved)))
		return RNIC_AQ_BAD_PARAM;
	srq = srq_get(d, le32_to_cpu(c->srqn));
	if (!srq)
		return RNIC_AQ_NOT_FOUND;
	if (!(mask & RNIC_SRQ_ATTR_LIMIT))
		return RNIC_AQ_SUCCESS;
	if (limit > (1U << srq->wqe.log2_depth))
		return RNIC_AQ_BAD_PARAM;
	srq->limit = limit;
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_query_srq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_srq *srq = srq_get(d, le32_to_cpu(c->handle));

	if (!srq)
		return RNIC_AQ_NOT_FOUND;
	resp->query_srq.limit = cpu_to_le32(srq->limit);
	resp->query_srq.avail = cpu_to_le16(rdma_srq_avail(d, srq));
	resp->query_srq.error = srq->error;
	return RNIC_AQ_SUCCESS;
}

void rdma_srq_free(struct rdev *d, struct rdma_srq *srq)
{
	idtab_free(&d->rdma->srqs, srq->srqn);
	rdma_slot_release(d, srq->page, srq->slot);
	srq->pd->refs--;
	rdma_ring_free(&srq->wqe);
	rdma_ring_free(&srq->idx);
	free(srq->in_use);
	free(srq);
}

u8 rdma_cmd_destroy_srq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_srq *srq = srq_get(d, le32_to_cpu(c->handle));

	if (!srq)
		return RNIC_AQ_NOT_FOUND;
	if (srq->refs)
		return RNIC_AQ_BAD_STATE;
	rdma_srq_free(d, srq);
	return RNIC_AQ_SUCCESS;
}

/* ---- QP creation ---- */

static u8 check_create_qp(const struct rnic_aq_create_qp *c)
{
	bool srq = c->flags & RNIC_QP_F_SRQ;

	if (c->reserved0 || c->reserved1 || c->reserved2 ||
	    !rdma_all_zero(c->reserved3, sizeof(c->reserved3)) ||
	    c->type < RNIC_QPT_RC || c->type > RNIC_QPT_GSI ||
	    (c->flags & ~RNIC_QP_F_ALL))
		return RNIC_AQ_BAD_PARAM;
	if (c->sq_log2_depth < RNIC_RING_LOG2_MIN ||
	    c->sq_log2_depth > RDMA_MAX_WQ_LOG2 ||
	    c->sqe_log2 < RNIC_SQE_LOG2_MIN || c->sqe_log2 > RNIC_SQE_LOG2_MAX ||
	    (!(c->flags & RNIC_QP_F_SQ_PBL) && c->sq_page_log2))
		return RNIC_AQ_BAD_PARAM;
	if (srq)
		return (!c->srqn || c->rq_addr || c->rq_log2_depth ||
			c->rqe_log2 || c->rq_page_log2 ||
			(c->flags & RNIC_QP_F_RQ_PBL)) ? RNIC_AQ_BAD_PARAM :
							 RNIC_AQ_SUCCESS;
	if (c->srqn || c->rq_log2_depth < RNIC_RING_LOG2_MIN ||
	    c->rq_log2_depth > RDMA_MAX_WQ_LOG2 ||
	    c->rqe_log2 < RNIC_RQE_LOG2_MIN || c->rqe_log2 > RNIC_RQE_LOG2_MAX ||
	    (!(c->flags & RNIC_QP_F_RQ_PBL) && c->rq_page_log2))
		return RNIC_AQ_BAD_PARAM;
	return RNIC_AQ_SUCCESS;
}

/* Look up everything CREATE_QP names; NOT_FOUND, NO_PERM or BAD_STATE. */
static u8 create_qp_refs(struct rdev *d, const struct rnic_aq_create_qp *c,
			 struct rdma_qp *qp)
{
	qp->pd = rdma_pd_get(d, le32_to_cpu(c->pdn));
	qp->scq = idtab_get(&d->rdma->cqs, le32_to_cpu(c->send_cqn));
	qp->rcq = idtab_get(&d->rdma->cqs, le32_to_cpu(c->recv_cqn));
	qp->page = rdma_dbp_get(d, le32_to_cpu(c->db_page));
	if (c->flags & RNIC_QP_F_SRQ)
		qp->srq = srq_get(d, le32_to_cpu(c->srqn));
	if (!qp->pd || !qp->scq || !qp->rcq || !qp->page ||
	    ((c->flags & RNIC_QP_F_SRQ) && !qp->srq))
		return RNIC_AQ_NOT_FOUND;
	if (c->type == RNIC_QPT_GSI) {
		if (!qp->pd->priv || qp->page->user)
			return RNIC_AQ_NO_PERM;
		if (d->rdma->gsi_exists)
			return RNIC_AQ_BAD_STATE;
	}
	return RNIC_AQ_SUCCESS;
}

static void qp_release(struct rdev *d, struct rdma_qp *qp)
{
	if (qp->sq_slot != RNIC_DB_NONE)
		rdma_slot_release(d, qp->page, qp->sq_slot);
	if (qp->rq_slot != RNIC_DB_NONE)
		rdma_slot_release(d, qp->page, qp->rq_slot);
	rdma_ring_free(&qp->sq);
	rdma_ring_free(&qp->rq);
	free(qp);
}

static u8 create_qp_rings(struct rdev *d, const struct rnic_aq_create_qp *c,
			  struct rdma_qp *qp)
{
	u8 st;

	st = rdma_ring_setup(d, &qp->sq, c->flags & RNIC_QP_F_SQ_PBL,
			   le64_to_cpu(c->sq_addr), c->sq_log2_depth,
			   c->sqe_log2, c->sq_page_log2);
	if (st)
		return st;
	if (!qp->srq) {
		st = rdma_ring_setup(d, &qp->rq, c->flags & RNIC_QP_F_RQ_PBL,
				   le64_to_cpu(c->rq_addr), c->rq_log2_depth,
				   c->rqe_log2, c->rq_page_log2);
		if (st)
			return st;
	}
	if (rdma_slot_assign(d, qp->page, RDMA_SLOT_SQ, qp, &qp->sq_slot))
		return RNIC_AQ_NO_DB_SLOT;
	if (!qp->srq &&
	    rdma_slot_assign(d, qp->page, RDMA_SLOT_RQ, qp, &qp->rq_slot))
		return RNIC_AQ_NO_DB_SLOT;
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_create_qp(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_create_qp *c = (const void *)e;
	struct rdma_qp *qp;
	int rc;
	u8 st;

	st = check_create_qp(c);
	if (st)
		return st;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return RNIC_AQ_INTERNAL;
	qp->d = d;
	qp->type = c->type;
	qp->sq_slot = RNIC_DB_NONE;
	qp->rq_slot = RNIC_DB_NONE;
	st = create_qp_refs(d, c, qp);
	if (!st)
		st = create_qp_rings(d, c, qp);
	if (st) {
		qp_release(d, qp);
		return st;
	}
	if (qp->type == RNIC_QPT_GSI) {
		qp->qpn = RNIC_GSI_QPN;
		rc = idtab_set(&d->rdma->qps, qp, RNIC_GSI_QPN);
	} else {
		rc = idtab_alloc(&d->rdma->qps, qp, &qp->qpn);
	}
	if (rc) {
		qp_release(d, qp);
		return RNIC_AQ_NO_RESOURCES;
	}
	if (qp->type == RNIC_QPT_RC && rdma_rc_create(d, qp)) {
		idtab_free(&d->rdma->qps, qp->qpn);
		qp_release(d, qp);
		return RNIC_AQ_INTERNAL;
	}
	if (qp->type == RNIC_QPT_GSI)
		d->rdma->gsi_exists = true;
	qp->state = RNIC_QPS_RESET;
	qp->pd->refs++;
	qp->scq->refs++;
	qp->rcq->refs++;
	if (qp->srq)
		qp->srq->refs++;
	resp->create_qp.qpn = cpu_to_le32(qp->qpn);
	resp->create_qp.sq_db_off = cpu_to_le16(qp->sq_slot * 4);
	resp->create_qp.rq_db_off = cpu_to_le16(qp->srq ? RNIC_DB_NONE :
						qp->rq_slot * 4);
	return RNIC_AQ_SUCCESS;
}

/* ---- completions, errors, flush ---- */

/* A CQ of the QP could not take a completion: the QP fails. */
void rdma_qp_cq_failed(struct rdev *d, struct rdma_qp *qp)
{
	if (qp->state != RNIC_QPS_ERR)
		rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, RNIC_ERR_CQ_ERROR, 0);
}

static void count_cqe(struct rdev *d, u8 status)
{
	if (status == RNIC_WC_WR_FLUSH_ERR)
		RDMA_INC(d, cqe_flushed);
	else if (status != RNIC_WC_SUCCESS)
		RDMA_INC(d, cqe_errors);
}

int rdma_sq_complete(struct rdev *d, struct rdma_qp *qp, u16 idx, u8 opcode,
		   u8 status, u8 syndrome, u32 byte_len, bool signaled)
{
	struct rnic_rdma_cqe cqe = {};

	/* Completions are in order: unsignaled WQEs before it retire too. */
	qp->sq_ci = idx + 1;
	if ((u16)(qp->sq_next - qp->sq_ci) > (u16)(qp->sq_pi - qp->sq_ci))
		qp->sq_next = qp->sq_ci;
	if (status == RNIC_WC_SUCCESS && !signaled)
		return 0;
	count_cqe(d, status);
	cqe.opcode = opcode;
	cqe.status = status;
	cqe.syndrome = syndrome;
	cqe.qpn = cpu_to_le32(qp->qpn);
	cqe.wqe_idx = cpu_to_le16(idx);
	if (status == RNIC_WC_SUCCESS)
		cqe.byte_len = cpu_to_le32(byte_len);
	if (rdma_cq_post(d, qp->scq, &cqe, false)) {
		rdma_qp_cq_failed(d, qp);
		return -EIO;
	}
	return 0;
}

static void last_wqe_check(struct rdev *d, struct rdma_qp *qp)
{
	/* (RC QPs: the engine posts it after its own flush.) */
	if (qp->srq && qp->type != RNIC_QPT_RC &&
	    qp->state == RNIC_QPS_ERR && !qp->srq_taken &&
	    !qp->last_wqe_sent) {
		qp->last_wqe_sent = true;
		rdma_event(d, RNIC_EQE_LAST_WQE_REACHED, RNIC_ERR_NONE,
			 RNIC_EQE_OBJ_QP, qp->qpn, 0);
	}
}

int rdma_rq_complete(struct rdev *d, struct rdma_qp *qp, const struct rdma_rwqe *w,
		   struct rnic_rdma_cqe *cqe, bool solicited)
{
	int rc = 0;

	if (w->srq) {
		qp->srq->in_use[w->idx] = 0;
		qp->srq_taken = false;
		cqe->flags |= RNIC_RCQE_F_SRQ;
	} else {
		qp->rq_ci++;
	}
	count_cqe(d, cqe->status);
	cqe->qpn = cpu_to_le32(qp->qpn);
	cqe->wqe_idx = cpu_to_le16(w->idx);
	if (rdma_cq_post(d, qp->rcq, cqe, solicited)) {
		rdma_qp_cq_failed(d, qp);
		rc = -EIO;
	}
	last_wqe_check(d, qp);
	return rc;
}

void rdma_qp_flush(struct rdev *d, struct rdma_qp *qp)
{
	struct rnic_rdma_cqe cqe;
	struct rdma_rwqe w;

	if (qp->state != RNIC_QPS_ERR)
		return;
	while (qp->sq_ci != qp->sq_pi && qp->state == RNIC_QPS_ERR)
		rdma_sq_complete(d, qp, qp->sq_ci, rdma_sq_opcode(d, qp, qp->sq_ci),
			       RNIC_WC_WR_FLUSH_ERR, RNIC_ERR_FLUSHED, 0, true);
	qp->sq_next = qp->sq_ci;
	memset(&w, 0, offsetof(struct rdma_rwqe, sge));
	if (qp->srq && qp->srq_taken) {
		/* Only the WQE it took: the others stay for other QPs. */
		w.srq = true;
		w.idx = qp->srq_slot_taken;
		memset(&cqe, 0, sizeof(cqe));
		cqe.opcode = RNIC_CQE_OP_RECV;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rdma_rq_complete(d, qp, &w, &cqe, false);
	}
	while (!qp->srq && qp->rq_ci != qp->rq_pi) {
		w.idx = qp->rq_ci;
		memset(&cqe, 0, sizeof(cqe));
		cqe.opcode = RNIC_CQE_OP_RECV;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rdma_rq_complete(d, qp, &w, &cqe, false);
	}
	qp->rq_next = qp->rq_ci;
	last_wqe_check(d, qp);
}

/* UD/GSI enter ERR: sending stops; the flush follows in the pump. */
static void qp_enter_err(struct rdev *d, struct rdma_qp *qp)
{
	qp->state = RNIC_QPS_ERR;
	qp->pfc_wait = false;
	rdma_runq_add(d, qp);
}

void rdma_qp_fatal(struct rdev *d, struct rdma_qp *qp, u8 event, u8 reason,
		 u64 info)
{
	if (qp->state == RNIC_QPS_RESET)
		return;
	if (qp->type == RNIC_QPT_RC) {
		/* The engine posts QP_FATAL and flushes (rc.h). */
		if (qp->state != RNIC_QPS_ERR)
			rdma_rc_fatal(d, qp, reason, info);
		return;
	}
	if (qp->state != RNIC_QPS_ERR) {
		RDMA_INC(d, qp_errors);
		plat_log(d->p, "qp 0x%x error: event %u reason %u info 0x%llx",
			 qp->qpn, event, reason, (unsigned long long)info);
		qp_enter_err(d, qp);
	}
	if (event && !qp->fatal_sent) {
		qp->fatal_sent = true;
		rdma_event(d, event, reason, RNIC_EQE_OBJ_QP, qp->qpn, info);
	}
}

void rdma_qp_sq_idle(struct rdev *d, struct rdma_qp *qp)
{
	/* RC QPs: the engine knows when its SQ is drained. */
	if (qp->state != RNIC_QPS_SQD || !qp->sqd_notify ||
	    qp->sq_drained_sent || qp->type == RNIC_QPT_RC)
		return;
	qp->sq_drained_sent = true;
	rdma_event(d, RNIC_EQE_SQ_DRAINED, RNIC_ERR_NONE, RNIC_EQE_OBJ_QP,
		 qp->qpn, 0);
}

/* ---- MODIFY_QP ---- */

#define T_RC	BIT(RNIC_QPT_RC)
#define T_UD	(BIT(RNIC_QPT_UD) | BIT(RNIC_QPT_GSI))
#define A(x)	RNIC_QP_ATTR_##x

struct qp_trans {
	u8 from, to, types;
	u32 req, opt;
};

static const struct qp_trans qp_trans[] = {
	{ RNIC_QPS_RESET, RNIC_QPS_INIT, T_RC, A(PKEY_INDEX) | A(ACCESS), 0 },
	{ RNIC_QPS_RESET, RNIC_QPS_INIT, T_UD, A(PKEY_INDEX) | A(QKEY), 0 },
	{ RNIC_QPS_INIT, RNIC_QPS_INIT, T_RC, 0, A(PKEY_INDEX) | A(ACCESS) },
	{ RNIC_QPS_INIT, RNIC_QPS_INIT, T_UD, 0, A(PKEY_INDEX) | A(QKEY) },
	{ RNIC_QPS_INIT, RNIC_QPS_RTR, T_RC,
	  A(PATH) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
	  A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
	  A(PKEY_INDEX) | A(ACCESS) },
	{ RNIC_QPS_INIT, RNIC_QPS_RTR, T_UD, 0, A(PKEY_INDEX) | A(QKEY) },
	{ RNIC_QPS_RTR, RNIC_QPS_RTS, T_RC,
	  A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
	  A(MAX_RD_ATOMIC), A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_RTR, RNIC_QPS_RTS, T_UD, A(SQ_PSN), A(QKEY) },
	{ RNIC_QPS_RTS, RNIC_QPS_RTS, T_RC, 0, A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_RTS, RNIC_QPS_RTS, T_UD, 0, A(QKEY) },
	{ RNIC_QPS_RTS, RNIC_QPS_SQD, T_RC | T_UD, 0, A(SQD_NOTIFY) },
	{ RNIC_QPS_SQD, RNIC_QPS_RTS, T_RC, 0, A(ACCESS) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_SQD, RNIC_QPS_RTS, T_UD, 0, A(QKEY) },
	{ RNIC_QPS_SQD, RNIC_QPS_SQD, T_RC, 0,
	  A(PATH) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
	  A(MAX_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ACCESS) |
	  A(PKEY_INDEX) | A(MIN_RNR_TIMER) },
	{ RNIC_QPS_SQD, RNIC_QPS_SQD, T_UD, 0, A(PKEY_INDEX) | A(QKEY) },
};

static const struct qp_trans *find_trans(u8 type, u8 from, u8 to)
{
	static const struct qp_trans any = { 0, 0, T_RC | T_UD, 0, 0 };
	unsigned int i;

	/* IBA table 91: RESET goes to INIT or stays; never to ERR. */
	if (from == RNIC_QPS_SQE || to == RNIC_QPS_SQE ||
	    (from == RNIC_QPS_RESET && to == RNIC_QPS_ERR))
		return NULL;
	if (to == RNIC_QPS_RESET || to == RNIC_QPS_ERR)
		return &any;
	for (i = 0; i < ARRAY_SIZE(qp_trans); i++)
		if (qp_trans[i].from == from && qp_trans[i].to == to &&
		    (qp_trans[i].types & BIT(type)))
			return &qp_trans[i];
	return NULL;
}

/* The template a MODIFY_QP with PATH gives, read and checked */
static u8 read_path(struct rdev *d, const struct rnic_aq_modify_qp *c,
		    struct rnic_hdr_tmpl *t)
{
	/* 8-byte aligned, as every other buffer a command names */
	if (le64_to_cpu(c->path_addr) & 7) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	if (plat_dma_read(d->p, le64_to_cpu(c->path_addr), t, sizeof(*t))) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	return rdma_tmpl_check(d, t, false) ? RNIC_AQ_BAD_PARAM :
					    RNIC_AQ_SUCCESS;
}

/* Every value the mask names, in range; @path is filled with PATH. */
static u8 check_values(struct rdev *d, struct rdma_qp *qp,
		       const struct rnic_aq_modify_qp *c, u32 mask,
		       struct rnic_hdr_tmpl *path)
{
	const struct rnic_hdr_tmpl *t = qp->has_path ? &qp->path : NULL;
	u32 qkey = le32_to_cpu(c->qkey);
	u16 pkey_index = le16_to_cpu(c->pkey_index);
	u8 st;

	if (((mask & A(ACCESS)) && (c->access & ~(RNIC_ACCESS_ALL &
						  ~RNIC_ACCESS_LOCAL_WRITE))) ||
	    ((mask & A(PKEY_INDEX)) && (pkey_index >= RDMA_PKEY_TBL_LEN ||
					!d->rdma->pkey[pkey_index])) ||
	    ((mask & A(TIMEOUT)) && c->timeout > RNIC_QP_TIMEOUT_MAX) ||
	    ((mask & A(RETRY_CNT)) && c->retry_cnt > RNIC_QP_RETRY_MAX) ||
	    ((mask & A(RNR_RETRY)) && c->rnr_retry > RNIC_QP_RETRY_MAX) ||
	    ((mask & A(MIN_RNR_TIMER)) &&
	     c->min_rnr_timer > RNIC_QP_RNR_TIMER_MAX) ||
	    ((mask & A(MAX_RD_ATOMIC)) && c->max_rd_atomic > RDMA_MAX_RD_ATOM) ||
	    ((mask & A(MAX_DEST_RD_ATOMIC)) &&
	     c->max_dest_rd_atomic > RDMA_MAX_RD_ATOM) ||
	    ((mask & A(SQ_PSN)) && (le32_to_cpu(c->sq_psn) & ~RNIC_BTH_PSN)) ||
	    ((mask & A(RQ_PSN)) && (le32_to_cpu(c->rq_psn) & ~RNIC_BTH_PSN)) ||
	    ((mask & A(DEST_QPN)) &&
	     (le32_to_cpu(c->dest_qpn) & ~RNIC_BTH_QPN)) ||
	    ((mask & A(SQD_NOTIFY)) && c->sqd_notify > 1) ||
	    ((mask & A(PATH_MTU)) && !rnic_pmtu_bytes(c->path_mtu)))
		return RNIC_AQ_BAD_PARAM;
	if (mask & A(QKEY)) {
		if (qp->type == RNIC_QPT_GSI && qkey != RNIC_QKEY_GSI)
			return RNIC_AQ_BAD_PARAM;
		if ((qkey & RNIC_QKEY_F_CONTROLLED) && !qp->pd->priv)
			return RNIC_AQ_NO_PERM;
	}
	if (mask & A(PATH)) {
		st = read_path(d, c, path);
		if (st)
			return st;
		t = path;
	}
	/* The biggest packet of the path MTU must fit the port MTU. */
	if ((mask & (A(PATH_MTU) | A(PATH))) && t &&
	    rnic_pmtu_bytes((mask & A(PATH_MTU)) ? c->path_mtu : qp->path_mtu) >
	    rdma_tmpl_max_payload(d, t, RDMA_RETH_LEN + RDMA_IMM_LEN))
		return RNIC_AQ_BAD_PARAM;
	return RNIC_AQ_SUCCESS;
}

static void apply_values(struct rdev *d, struct rdma_qp *qp,
			 const struct rnic_aq_modify_qp *c, u32 mask,
			 const struct rnic_hdr_tmpl *path)
{
	if (mask & A(ACCESS))
		qp->access = c->access;
	if (mask & A(PKEY_INDEX))
		qp->pkey_index = le16_to_cpu(c->pkey_index);
	if (mask & A(QKEY))
		qp->qkey = le32_to_cpu(c->qkey);
	if (mask & A(PATH)) {
		if (!qp->has_path)
			d->rdma->npaths++;
		qp->has_path = true;
		qp->path = *path;
	}
	if (mask & A(PATH_MTU))
		qp->path_mtu = c->path_mtu;
	if (mask & A(TIMEOUT))
		qp->timeout = c->timeout;
	if (mask & A(RETRY_CNT))
		qp->retry_cnt = c->retry_cnt;
	if (mask & A(RNR_RETRY))
		qp->rnr_retry = c->rnr_retry;
	if (mask & A(RQ_PSN))
		qp->rq_psn = le32_to_cpu(c->rq_psn);
	if (mask & A(MAX_RD_ATOMIC))
		qp->max_rd_atomic = c->max_rd_atomic;
	if (mask & A(MIN_RNR_TIMER))
		qp->min_rnr_timer = c->min_rnr_timer;
	if (mask & A(SQ_PSN))
		qp->sq_psn = le32_to_cpu(c->sq_psn);
	if (mask & A(MAX_DEST_RD_ATOMIC))
		qp->max_dest_rd_atomic = c->max_dest_rd_atomic;
	if (mask & A(DEST_QPN))
		qp->dest_qpn = le32_to_cpu(c->dest_qpn);
	if (mask & A(SQD_NOTIFY))
		qp->sqd_notify = c->sqd_notify;
}

/*
 * RESET: every index, slot and piece of transport state back to zero. An
 * SRQ WQE the QP took goes without a CQE: the response names its slot,
 * or the driver would never free it.
 */
static void qp_to_reset(struct rdev *d, struct rdma_qp *qp,
			union rnic_aq_resp *resp)
{
	rdma_runq_remove(d, qp);
	if (qp->srq_taken) {
		qp->srq->in_use[qp->srq_slot_taken] = 0;
		resp->modify_qp.flags = RNIC_AQ_QP_F_SRQ_DROPPED;
		resp->modify_qp.srq_slot = cpu_to_le16(qp->srq_slot_taken);
	}
	qp->srq_taken = false;
	qp->sq_pi = qp->sq_next = qp->sq_ci = 0;
	qp->rq_pi = qp->rq_next = qp->rq_ci = 0;
	rdma_slot_write(d, qp->page, qp->sq_slot, 0);
	if (qp->rq_slot != RNIC_DB_NONE)
		rdma_slot_write(d, qp->page, qp->rq_slot, 0);
	if (qp->has_path)
		d->rdma->npaths--;
	qp->has_path = false;
	qp->comm_est_sent = false;
	qp->fatal_sent = false;
	qp->last_wqe_sent = false;
	qp->sq_drained_sent = false;
	qp->pfc_wait = false;
	qp->sqd_notify = false;
	qp->rc_deadline = 0;
	qp->rc_fatal_pending = false;
}

static void qp_entered(struct rdev *d, struct rdma_qp *qp, u8 old,
		       union rnic_aq_resp *resp)
{
	if (qp->state == RNIC_QPS_RESET) {
		if (old != RNIC_QPS_RESET)
			qp_to_reset(d, qp, resp);
		return;
	}
	/* Everything else of an RC QP is the engine's (rc_modify()). */
	if (qp->type == RNIC_QPT_RC)
		return;
	switch (qp->state) {
	case RNIC_QPS_ERR:
		if (old != RNIC_QPS_ERR)
			qp_enter_err(d, qp);
		break;
	case RNIC_QPS_RTS:
		if (old == RNIC_QPS_SQD)
			qp->sq_drained_sent = false;
		rdma_runq_add(d, qp);
		break;
	case RNIC_QPS_SQD:
		if (old != RNIC_QPS_SQD)
			qp->sq_drained_sent = false;
		rdma_qp_sq_idle(d, qp);
		break;
	default:
		break;
	}
}

/* UD/GSI: the transition and its attribute mask (RC: the engine's) */
static u8 check_trans(struct rdma_qp *qp, const struct rnic_aq_modify_qp *c,
		      u32 mask, u8 *target)
{
	const struct qp_trans *tr;
	u32 attrs;

	if ((mask & A(CUR_STATE)) && c->cur_state != qp->state)
		return RNIC_AQ_BAD_TRANSITION;
	*target = (mask & A(STATE)) ? c->state : qp->state;
	tr = find_trans(qp->type, qp->state, *target);
	if (!tr)
		return RNIC_AQ_BAD_TRANSITION;
	attrs = mask & ~(A(STATE) | A(CUR_STATE));
	if ((attrs & tr->req) != tr->req || (attrs & ~(tr->req | tr->opt)))
		return RNIC_AQ_BAD_ATTR_MASK;
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_modify_qp(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_modify_qp *c = (const void *)e;
	u32 mask = le32_to_cpu(c->attr_mask), attrs;
	struct rnic_hdr_tmpl path;
	struct rdma_qp *qp;
	u8 target, old;
	u8 st;

	qp = rdma_qp_get(d, le32_to_cpu(c->qpn));
	if (!qp)
		return RNIC_AQ_NOT_FOUND;
	/* The state comes back whatever happens, so a stale driver resyncs. */
	resp->modify_qp.state = qp->state;
	if ((mask & ~RNIC_QP_ATTR_ALL) ||
	    !rdma_all_zero(c->reserved0, sizeof(c->reserved0)) ||
	    !rdma_all_zero(c->reserved1, sizeof(c->reserved1)) ||
	    ((mask & A(STATE)) && c->state > RNIC_QPS_ERR) ||
	    ((mask & A(CUR_STATE)) && c->cur_state > RNIC_QPS_ERR))
		return RNIC_AQ_BAD_PARAM;
	old = qp->state;
	if (qp->type == RNIC_QPT_RC) {
		target = (mask & A(STATE)) ? c->state : old;
		st = rdma_rc_modify_check(d, qp, c);
	} else {
		st = check_trans(qp, c, mask, &target);
	}
	if (st)
		return st;
	attrs = mask & ~(A(STATE) | A(CUR_STATE));
	st = check_values(d, qp, c, attrs, &path);
	if (st)
		return st;
	apply_values(d, qp, c, attrs, &path);
	if (qp->type == RNIC_QPT_RC)
		rdma_rc_modify(d, qp, c);	/* mirrors the state back */
	else
		qp->state = target;
	qp_entered(d, qp, old, resp);
	resp->modify_qp.state = qp->state;
	return RNIC_AQ_SUCCESS;
}

/* ---- QUERY_QP, DESTROY_QP ---- */

u8 rdma_cmd_query_qp(struct rdev *d, const union rnic_aq_entry *e,
		   union rnic_aq_resp *resp)
{
	const struct rnic_aq_query_obj *c = (const void *)e;
	struct rdma_qp *qp = rdma_qp_get(d, le32_to_cpu(c->handle));
	struct rnic_qp_query q = {};

	if (c->scope)
		return RNIC_AQ_BAD_PARAM;
	if (!qp)
		return RNIC_AQ_NOT_FOUND;
	q.state = qp->state;
	q.path_mtu = qp->path_mtu;
	q.access = qp->access;
	if (qp->sqd_notify)
		q.flags |= RNIC_QPQ_F_SQD_NOTIFY;
	if (qp->has_path)
		q.flags |= RNIC_QPQ_F_PATH;
	if (qp->type == RNIC_QPT_RC && rdma_rc_sq_busy(d, qp))
		q.flags |= RNIC_QPQ_F_SQ_DRAINING;
	q.sq_psn = cpu_to_le32(qp->sq_psn);
	q.rq_psn = cpu_to_le32(qp->rq_psn);
	q.qkey = cpu_to_le32(qp->qkey);
	q.dest_qpn = cpu_to_le32(qp->dest_qpn);
	q.timeout = qp->timeout;
	q.retry_cnt = qp->retry_cnt;
	q.rnr_retry = qp->rnr_retry;
	q.min_rnr_timer = qp->min_rnr_timer;
	q.max_rd_atomic = qp->max_rd_atomic;
	q.max_dest_rd_atomic = qp->max_dest_rd_atomic;
	q.pkey_index = cpu_to_le16(qp->pkey_index);
	q.sq_ci = cpu_to_le16(qp->sq_ci);
	q.sq_pi = cpu_to_le16(qp->sq_pi);
	q.rq_ci = cpu_to_le16(qp->rq_ci);
	q.rq_pi = cpu_to_le16(qp->rq_pi);
	q.unacked_psn = cpu_to_le32(qp->sq_psn);
	q.pdn = cpu_to_le32(qp->pd->pdn);
	q.send_cqn = cpu_to_le32(qp->scq->cqn);
	q.recv_cqn = cpu_to_le32(qp->rcq->cqn);
	q.srqn = cpu_to_le32(qp->srq ? qp->srq->srqn : 0);
	if (qp->type == RNIC_QPT_RC)
		rdma_rc_query(d, qp, &q);
	resp->query.len = cpu_to_le32(sizeof(q));
	return rdma_put_result(d, le64_to_cpu(c->buf_addr),
			     le32_to_cpu(c->buf_len), &q, sizeof(q));
}

void rdma_qp_free(struct rdev *d, struct rdma_qp *qp)
{
	if (qp->type == RNIC_QPT_RC)
		rdma_rc_destroy(d, qp);
	rdma_runq_remove(d, qp);
	if (qp->srq_taken)
		qp->srq->in_use[qp->srq_slot_taken] = 0;
	if (qp->has_path)
		d->rdma->npaths--;
	if (qp->type == RNIC_QPT_GSI)
		d->rdma->gsi_exists = false;
	idtab_free(&d->rdma->qps, qp->qpn);
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	qp_release(d, qp);
}

u8 rdma_cmd_destroy_qp(struct rdev *d, const union rnic_aq_entry *e,
		       union rnic_aq_resp *resp)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_qp *qp = rdma_qp_get(d, le32_to_cpu(c->handle));

	if (!qp)
		return RNIC_AQ_NOT_FOUND;
	/* rdma_qp_free() drops it without a CQE: only this names the slot */
	if (qp->srq_taken) {
		resp->destroy_qp.flags = RNIC_AQ_QP_F_SRQ_DROPPED;
		resp->destroy_qp.srq_slot = cpu_to_le16(qp->srq_slot_taken);
	}
	rdma_qp_free(d, qp);
	return RNIC_AQ_SUCCESS;
}
