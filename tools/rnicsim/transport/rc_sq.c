// SPDX-License-Identifier: GPL-2.0
/*
 * The send queue's records, which the requester's two halves share: the
 * transmit side (rc_req.c) starts WQEs and arms the ACK timer, the
 * receive side (rc_comp.c) acknowledges, fails and rewinds them, and both
 * complete them in SQ order. Keeping these here lets neither half call
 * the other; they call only this file and rc_base.c.
 */
#include <string.h>

#include "transport/rc.h"

struct rc_swr *rc_req_swr(struct rc_qp *qp, u16 idx)
{
	return &qp->req.wr[idx % RC_SQ_TRACK];
}

/*
 * The WQE of a started record, from the cache or peeked again. A WQE that
 * changed under us (the ring is the driver's, or a user's) fails.
 */
struct rc_swqe *rc_req_wqe(struct rc_qp *qp, bool tx, struct rc_swr *r)
{
	struct rc_swqe *w = tx ? &qp->req.txw : &qp->req.rxw;
	bool *valid = tx ? &qp->req.txw_valid : &qp->req.rxw_valid;
	int res;

	if (*valid && w->idx == r->idx)
		return w;
	*valid = false;
	res = qp->ops->sq_peek(qp, r->idx, w);
	if (res == RC_WQE_FATAL) {
		rc_engine_fatal(qp, w->syndrome, r->idx);
		return NULL;
	}
	if (res != RC_WQE_OK || w->opcode != r->opcode ||
	    w->length != r->length || w->num_sge > RC_MAX_SGE) {
		rc_req_fail(qp, r, RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
		return NULL;
	}
	w->idx = r->idx;
	*valid = true;
	return w;
}

/*
 * A started WQE failed: it completes with @status when its turn comes
 * (earlier WQEs first), and nothing after it starts.
 */
void rc_req_fail(struct rc_qp *qp, struct rc_swr *r, u8 status, u8 syndrome)
{
	if (r->state == RC_SWR_PENDING && rc_op_rd_atomic(r->opcode))
		qp->req.rd_atomic--;
	r->state = RC_SWR_ERROR;
	r->status = status;
	r->syndrome = syndrome;
	qp->req.halted = true;
	if (syndrome == RNIC_ERR_BAD_WQE && status == RNIC_WC_LOC_QP_OP_ERR)
		RC_STAT_INC(qp, wqe_errors);
	rc_comp_complete(qp);
}

/* Move the transmit cursor back to @psn (go-back-N). */
void rc_req_rewind(struct rc_qp *qp, u32 psn)
{
	struct rc_req *req = &qp->req;
	u16 idx;

	for (idx = req->una_idx; idx != req->next_idx; idx++) {
		struct rc_swr *r = rc_req_swr(qp, idx);

		if (r->npsn && rc_psn_diff(psn, r->first_psn) < r->npsn) {
			req->tx_idx = idx;
			req->tx_psn = psn;
			return;
		}
	}
	req->tx_idx = req->next_idx;
	req->tx_psn = req->next_psn;
}

/* (Re)start the local ACK timer, or stop it when nothing is unacked. */
void rc_comp_arm(struct rc_qp *qp, bool restart)
{
	struct rc_req *req = &qp->req;
	u64 t = rnic_ack_timeout_ns(qp->timeout);

	if (!t || req->una_psn == req->sent_psn || req->rnr_wait ||
	    (qp->state != RNIC_QPS_RTS && qp->state != RNIC_QPS_SQD))
		req->ack_deadline = 0;
	else if (restart || !req->ack_deadline)
		req->ack_deadline = qp->ops->now_ns(qp) + t;
	rc_timer_update(qp);
}

/* Complete, in SQ order, every WQE at the head that is done or failed. */
void rc_comp_complete(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;
	struct rc_cqe cqe;

	while (req->una_idx != req->next_idx && qp->state != RNIC_QPS_ERR) {
		struct rc_swr *r = rc_req_swr(qp, req->una_idx);

		if (r->state == RC_SWR_PENDING)
			break;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wqe_idx = req->una_idx++;
		cqe.opcode = r->opcode;
		if (r->state == RC_SWR_ERROR) {
			cqe.status = r->status;
			cqe.syndrome = r->syndrome;
			rc_complete(qp, &cqe);
			if (qp->state != RNIC_QPS_ERR) {
				RC_STAT_INC(qp, qp_errors);
				rc_enter_err(qp);
			}
			return;
		}
		if (r->opcode == RNIC_SQE_OP_CMP_SWAP ||
		    r->opcode == RNIC_SQE_OP_FETCH_ADD)
			cqe.byte_len = 8;
		else if (r->npsn)
			cqe.byte_len = r->length;
		if (!(r->flags & RNIC_SQE_F_SIGNALED))
			cqe.flags = RC_CQE_F_SILENT;
		rc_complete(qp, &cqe);
	}
	/* A READ/atomic slot or a fence may have opened. */
	rc_kick(qp);
}
