// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic RC completer: what comes back for our requests. ACKs retire
 * SEND/WRITE work requests up to their PSN (coalesced ACKs retire several
 * at once); READ responses are placed into the local SGEs in PSN order;
 * atomic ACKs write the original value to the local buffer; NAKs either
 * rewind the requester (PSN sequence error, RNR after its timer) or fail
 * the work request with the status the NAK code means and take the QP to
 * the error state. Completions are generated strictly in send-queue
 * order, for signaled work requests and for errors.
 *
 * Everything runs under qp->sq_lock, from the RoCE NAPI context (ACKs),
 * the QP's timers and the send work (UD and local completions).
 */
#include <rdma/ib_pack.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

static bool rnic_wqe_is_rd_atomic(const struct rnic_send_wqe *wqe)
{
	return wqe->opcode == IB_WR_RDMA_READ ||
	       wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * rnic_sq_complete() - post the completions now due, in order
 * @qp: the QP, with sq_lock held
 */
void rnic_sq_complete(struct rnic_qp *qp)
{
	struct rnic_send_wqe *wqe;
	struct ib_wc wc;

	/* post_send queues every WQE as RNIC_WQE_POSTED */
	while (qp->sq.tail != qp->sq.head) {
		wqe = rnic_sq_wqe(qp, qp->sq.tail);
		if (wqe->state != RNIC_WQE_DONE)
			break;
		if (wqe->wc_status != IB_WC_SUCCESS ||
		    qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
		    (wqe->send_flags & IB_SEND_SIGNALED)) {
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = wqe->wr_id;
			wc.status = wqe->wc_status;
			wc.opcode = rnic_wr_to_wc_opcode(wqe->opcode);
			wc.byte_len = wqe->length;
			wc.qp = &qp->ibqp;
			wc.port_num = RNIC_IB_PORT;
			rnic_cq_post(qp->scq, &wc, false);
		}
		qp->sq.tail++;
		if (qp->type == IB_QPT_RC)
			rnic_roce_stat_inc(qp->rdev,
					   RNIC_ROCE_STAT_rc_completions);
	}
}

/**
 * rnic_sq_fail() - finish a work request in error; the QP goes to error
 * @qp: the QP, with sq_lock held
 * @wqe: the failed work request
 * @status: its completion status
 *
 * The error completion is posted in order; rnic_qp_error() (from the
 * send work) flushes whatever is still queued.
 */
void rnic_sq_fail(struct rnic_qp *qp, struct rnic_send_wqe *wqe,
		  enum ib_wc_status status)
{
	wqe->state = RNIC_WQE_DONE;
	wqe->completed = true;
	wqe->wc_status = status;
	rnic_sq_complete(qp);
	rnic_qp_fatal(qp, status == IB_WC_REM_ACCESS_ERR ?
		      IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_FATAL);
}

/**
 * rnic_ud_tx_done() - a UD/GSI send's frame left the device
 * @qp: the QP
 * @wqe_idx: the work request the frame carried
 */
void rnic_ud_tx_done(struct rnic_qp *qp, u32 wqe_idx)
{
	struct rnic_send_wqe *wqe;

	spin_lock_bh(&qp->sq_lock);
	/* a flush or reset may have retired it meanwhile */
	if (wqe_idx - qp->sq.tail < qp->sq.head - qp->sq.tail) {
		wqe = rnic_sq_wqe(qp, wqe_idx);
		if (wqe->state == RNIC_WQE_SENT) {
			wqe->state = RNIC_WQE_DONE;
			wqe->completed = true;
			wqe->wc_status = IB_WC_SUCCESS;
			rnic_sq_complete(qp);
		}
	}
	spin_unlock_bh(&qp->sq_lock);
}

/* The oldest work request not yet done, and its index; NULL if none */
static struct rnic_send_wqe *rnic_comp_front(struct rnic_qp *qp, u32 *idx)
{
	u32 i;

	for (i = qp->sq.tail; i != qp->sq.head; i++) {
		struct rnic_send_wqe *wqe = rnic_sq_wqe(qp, i);

		if (wqe->state == RNIC_WQE_POSTED)
			return NULL;
		if (wqe->state != RNIC_WQE_DONE) {
			*idx = i;
			return wqe;
		}
	}
	return NULL;
}

static void rnic_comp_done(struct rnic_qp *qp, struct rnic_send_wqe *wqe)
{
	wqe->state = RNIC_WQE_DONE;
	wqe->completed = true;
	wqe->wc_status = IB_WC_SUCCESS;
	qp->comp.psn = rnic_psn_add(wqe->last_psn, 1);
	if (rnic_wqe_is_rd_atomic(wqe) && qp->req.rd_atomic_inflight)
		qp->req.rd_atomic_inflight--;
}

/**
 * rnic_comp_ack_through() - retire SEND/WRITE requests up to @psn
 * @qp: the QP
 * @psn: last PSN the responder acknowledged
 *
 * An acknowledgment beyond a READ or atomic whose response is missing
 * means the response was lost (IBA 9.7.5.1.3: an implied NAK): the
 * requester goes back to it.
 *
 * Return: false if the requester was rewound.
 */
static bool rnic_comp_ack_through(struct rnic_qp *qp, u32 psn)
{
	struct rnic_send_wqe *wqe;
	u32 idx;

	while ((wqe = rnic_comp_front(qp, &idx))) {
		if (rnic_psn_diff(psn, wqe->first_psn) < 0)
			break;
		if (rnic_wqe_is_rd_atomic(wqe)) {
			/* its own responses are placed by the caller */
			if (rnic_psn_diff(psn, wqe->last_psn) <= 0)
				break;
			rnic_rc_req_rewind(qp, qp->comp.psn);
			return false;
		}
		if (rnic_psn_diff(psn, wqe->last_psn) >= 0) {
			/*
			 * The responder acknowledges only what it received in
			 * order: a WQE being sent again after a rewind is done
			 * if the first transmission got through after all.
			 */
			rnic_comp_done(qp, wqe);
			continue;
		}
		qp->comp.psn = rnic_psn_add(psn, 1);
		break;
	}
	return true;
}

/* Place one READ response packet; Return: false to drop it */
static bool rnic_comp_read_resp(struct rnic_qp *qp, const struct rnic_pkt *pkt,
				const u8 *frame)
{
	u32 idx, off, mtu = qp->mtu ?: 256;
	struct rnic_send_wqe *wqe;
	bool last;
	int err;

	wqe = rnic_comp_front(qp, &idx);
	if (!wqe || wqe->opcode != IB_WR_RDMA_READ ||
	    !rnic_psn_in_window(pkt->psn, wqe->first_psn, wqe->npkts))
		return false;
	if (pkt->psn != qp->comp.psn) {
		/*
		 * Responses were lost. Asking again at once would repeat for
		 * every later response still in flight and make the responder
		 * replay the rest each time: let the local ACK timer (brought
		 * forward) ask once instead.
		 */
		rnic_rc_timer_soon(qp);
		return false;
	}
	off = (u32)rnic_psn_diff(pkt->psn, wqe->first_psn) * mtu;
	last = pkt->psn == wqe->last_psn;
	if (off + pkt->payload_len > wqe->length ||
	    (last ? off + pkt->payload_len != wqe->length :
		    pkt->payload_len != mtu) ||
	    !!(rnic_opcode_info(pkt->opcode)->flags & RNIC_OPF_LAST) != last)
		return false;
	err = rnic_copy_to_sges(qp, wqe->sge, wqe->num_sge, off,
				frame + pkt->payload_off, pkt->payload_len);
	if (err) {
		rnic_sq_fail(qp, wqe, IB_WC_LOC_PROT_ERR);
		return false;
	}
	if (last)
		rnic_comp_done(qp, wqe);
	else
		qp->comp.psn = rnic_psn_add(pkt->psn, 1);
	return true;
}

static bool rnic_comp_atomic_ack(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	struct rnic_send_wqe *wqe;
	u64 orig = pkt->atomic_orig;
	u32 idx;

	wqe = rnic_comp_front(qp, &idx);
	if (!wqe || !rnic_wqe_is_rd_atomic(wqe) ||
	    wqe->opcode == IB_WR_RDMA_READ || pkt->psn != wqe->first_psn)
		return false;
	/* the original value, in host order, as the responder read it */
	if (rnic_copy_to_sges(qp, wqe->sge, wqe->num_sge, 0, &orig,
			      sizeof(orig))) {
		rnic_sq_fail(qp, wqe, IB_WC_LOC_PROT_ERR);
		return false;
	}
	wqe->atomic_orig = orig;
	rnic_comp_done(qp, wqe);
	return true;
}

static void rnic_comp_nak_stat(struct rnic_qp *qp, u8 code)
{
	static const enum rnic_roce_stat s[] = {
		[RNIC_NAK_PSN_SEQ] = RNIC_ROCE_STAT_nak_seq_rcvd,
		[RNIC_NAK_INV_REQ] = RNIC_ROCE_STAT_nak_inv_req_rcvd,
		[RNIC_NAK_REM_ACCESS] = RNIC_ROCE_STAT_nak_rem_access_rcvd,
		[RNIC_NAK_REM_OP] = RNIC_ROCE_STAT_nak_rem_op_rcvd,
	};

	rnic_roce_stat_inc(qp->rdev, code < ARRAY_SIZE(s) ? s[code] :
			   RNIC_ROCE_STAT_nak_rem_op_rcvd);
}

/* RNR NAK for @psn: wait the timer it names, then go back to @psn. */
static void rnic_comp_rnr(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	struct rnic_send_wqe *wqe;
	u32 idx;

	rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_nak_rnr_rcvd);
	wqe = rnic_comp_front(qp, &idx);
	if (!wqe)
		return;
	if (qp->rnr_retry != 7) {
		if (!qp->comp.rnr_retry_left) {
			rnic_roce_stat_inc(qp->rdev,
					   RNIC_ROCE_STAT_rnr_retry_exceeded);
			rnic_sq_fail(qp, wqe, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->comp.rnr_retry_left--;
	}
	rnic_rc_req_rewind(qp, pkt->psn);
	qp->comp.rnr_wait = true;
	timer_delete(&qp->retrans_timer);
	mod_timer(&qp->rnr_timer, jiffies +
		  max(1UL, usecs_to_jiffies(rnic_rnr_timer_us(rnic_aeth_value(pkt->syndrome)))));
	rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rnr_waits);
}

static void rnic_comp_nak(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	u8 code = rnic_aeth_value(pkt->syndrome);
	struct rnic_send_wqe *wqe;
	u32 idx;

	rnic_comp_nak_stat(qp, code);
	if (code == RNIC_NAK_PSN_SEQ) {
		/* go back N from the PSN the responder expects */
		rnic_rc_req_rewind(qp, pkt->psn);
		return;
	}
	wqe = rnic_comp_front(qp, &idx);
	if (wqe)
		rnic_sq_fail(qp, wqe, rnic_nak_wc_status(code));
}

/*
 * One past the last PSN the requester ever assigned. After a rewind
 * req.psn is behind it, and responses still in flight for PSNs between
 * the two are valid (a READ response there is exactly what is missing).
 */
static u32 rnic_comp_psn_limit(struct rnic_qp *qp)
{
	u32 limit = qp->req.psn, i;

	for (i = qp->req.wqe_idx; i != qp->sq.head; i++) {
		struct rnic_send_wqe *wqe = rnic_sq_wqe(qp, i);

		if (wqe->state == RNIC_WQE_POSTED)
			break;
		if (wqe->npkts)
			limit = rnic_psn_add(wqe->last_psn, 1);
	}
	return limit;
}

/**
 * rnic_rc_comp_recv() - an ACK, NAK, READ response or atomic ACK arrived
 * @qp: the RC QP it is for
 * @pkt: the parsed frame (a responder opcode)
 * @frame: the frame
 *
 * Context: RoCE NAPI.
 */
void rnic_rc_comp_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		       const u8 *frame)
{
	const struct rnic_opcode_info *info = rnic_opcode_info(pkt->opcode);
	u8 type = (info->flags & RNIC_OPF_AETH) ?
		  rnic_aeth_type(pkt->syndrome) : RNIC_AETH_TYPE_ACK;
	bool progress = false, handled;
	u32 before;

	spin_lock(&qp->sq_lock);
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    qp->comp.fatal) {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rx_drop_qp_state);
		goto out;
	}
	/* before the oldest outstanding PSN: a duplicate or a stale ACK */
	if (rnic_psn_diff(pkt->psn, qp->comp.psn) < 0) {
		rnic_roce_stat_inc(qp->rdev,
				   RNIC_ROCE_STAT_duplicate_responses);
		goto out;
	}
	/* for a PSN never sent: hostile or confused; ignore */
	if (rnic_psn_diff(pkt->psn, qp->req.psn) >= 0 &&
	    rnic_psn_diff(pkt->psn, rnic_comp_psn_limit(qp)) >= 0) {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rx_drop_bad_psn);
		goto out;
	}
	before = qp->comp.psn;

	if (type == RNIC_AETH_TYPE_ACK && !(info->flags & RNIC_OPF_PAYLOAD) &&
	    !(info->flags & RNIC_OPF_ATMACK)) {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_acks_rcvd);
		rnic_comp_ack_through(qp, pkt->psn);
	} else if (type == RNIC_AETH_TYPE_ACK) {
		/* a response also acknowledges every request before it */
		u32 prev = rnic_psn_add(pkt->psn, RNIC_PSN_MASK);

		handled = rnic_comp_ack_through(qp, prev);
		if (handled) {
			if (info->flags & RNIC_OPF_ATMACK)
				handled = rnic_comp_atomic_ack(qp, pkt);
			else
				handled = rnic_comp_read_resp(qp, pkt, frame);
		}
		if (!handled)
			rnic_roce_stat_inc(qp->rdev,
					   RNIC_ROCE_STAT_duplicate_responses);
	} else if (type == RNIC_AETH_TYPE_RNR || type == RNIC_AETH_TYPE_NAK) {
		/* everything before the NAKed PSN was received */
		if (rnic_comp_ack_through(qp, rnic_psn_add(pkt->psn,
							   RNIC_PSN_MASK))) {
			if (type == RNIC_AETH_TYPE_RNR)
				rnic_comp_rnr(qp, pkt);
			else
				rnic_comp_nak(qp, pkt);
		}
	} else {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rx_drop_bad_opcode);
		goto out;
	}

	if (qp->comp.psn != before) {
		progress = true;
		qp->comp.retry_left = qp->retry_cnt;
		if (!qp->comp.rnr_wait)
			qp->comp.rnr_retry_left = qp->rnr_retry;
	}
	rnic_sq_complete(qp);
	if (!qp->comp.rnr_wait && !qp->comp.fatal) {
		if (progress)
			rnic_rc_timer_update(qp);
		/* a window, fence or rewind may let the requester go on */
		if (qp->req.wqe_idx != qp->sq.head)
			rnic_qp_kick_sq(qp);
	}
out:
	spin_unlock(&qp->sq_lock);
}
