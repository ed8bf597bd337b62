// SPDX-License-Identifier: GPL-2.0
/*
 * The requester's receive side. ACKs, NAKs, READ responses and
 * atomic ACKs move the oldest unacknowledged PSN; WQEs complete in SQ
 * order once acknowledged (SEND, WRITE) or placed (READ, atomics). Lost
 * packets are sent again from the NAKed or oldest unacknowledged PSN,
 * under the retry and RNR retry budgets; the local ACK timer and the RNR
 * wait live here too. Failing, rewinding and completing WQEs, and arming
 * the timer, are rc_sq.c's, which the transmit side shares.
 */
#include <string.h>

#include "transport/rc.h"

/* @psn was sent and is not yet acknowledged. */
static bool rc_outstanding(const struct rc_qp *qp, u32 psn)
{
	const struct rc_req *req = &qp->req;

	return rc_psn_diff(psn, req->una_psn) <
	       rc_psn_diff(req->sent_psn, req->una_psn);
}

/* The started, not yet complete WQE whose PSNs include @psn. */
static struct rc_swr *rc_comp_find(struct rc_qp *qp, u32 psn)
{
	struct rc_req *req = &qp->req;
	u16 idx;

	for (idx = req->una_idx; idx != req->next_idx; idx++) {
		struct rc_swr *r = rc_req_swr(qp, idx);

		if (r->npsn && rc_psn_diff(psn, r->first_psn) < r->npsn)
			return r->state == RC_SWR_PENDING ? r : NULL;
	}
	return NULL;
}

/* The oldest WQE still waiting for the responder. */
static struct rc_swr *rc_comp_oldest(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;
	u16 idx;

	for (idx = req->una_idx; idx != req->next_idx; idx++) {
		struct rc_swr *r = rc_req_swr(qp, idx);

		if (r->state == RC_SWR_PENDING && r->npsn)
			return r;
	}
	return NULL;
}

/* An acknowledgement or response moved una: budgets reload. */
static void rc_comp_progress(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;

	req->retry_left = qp->retry_cnt;
	req->rnr_left = qp->rnr_retry;
	req->retried = false;
	/* The cursor never stays behind what the peer has acknowledged. */
	if (rc_psn_after(req->una_psn, req->tx_psn))
		rc_req_rewind(qp, req->una_psn);
	rc_comp_arm(qp, true);
}

/*
 * Go back to the oldest unacknowledged PSN, paying one retry. Without
 * @timeout (a NAK sequence error, or responses missing before a later
 * one) only once per PSN until progress: a NAK or a gap seen again on a
 * duplicated packet must not cost another retry.
 */
static void rc_comp_retry(struct rc_qp *qp, bool timeout)
{
	struct rc_req *req = &qp->req;
	struct rc_swr *r;

	if (!timeout && req->retried && req->retry_psn == req->una_psn)
		return;
	if (!req->retry_left) {
		r = rc_comp_oldest(qp);
		if (r) {
			RC_STAT_INC(qp, retry_exceeded);
			rc_req_fail(qp, r, RNIC_WC_RETRY_EXC_ERR,
				    RNIC_ERR_RETRY_EXC);
		}
		return;
	}
	req->retry_left--;
	req->retried = true;
	req->retry_psn = req->una_psn;
	rc_req_rewind(qp, req->una_psn);
	rc_comp_arm(qp, true);
}

/*
 * Everything up to and including @psn is acknowledged (an ACK, a NAK's
 * implied ACK of what precedes it, or a response). A READ or atomic it
 * covers without its response means the responses were lost.
 */
static void rc_comp_acked(struct rc_qp *qp, u32 psn)
{
	struct rc_req *req = &qp->req;
	u32 end = rc_psn_add(psn, 1);
	bool progress = false, lost = false;
	u16 idx;

	for (idx = req->una_idx; idx != req->next_idx; idx++) {
		struct rc_swr *r = rc_req_swr(qp, idx);
		u32 last_end;

		if (!r->npsn || r->state == RC_SWR_DONE)
			continue;
		if (r->state == RC_SWR_ERROR)
			break;
		if (!rc_psn_after(end, req->una_psn))
			break;
		if (rc_op_rd_atomic(r->opcode)) {
			lost = true;
			break;
		}
		last_end = rc_psn_add(r->first_psn, r->npsn);
		progress = true;
		if (!rc_psn_after(last_end, end)) {
			r->state = RC_SWR_DONE;
			req->una_psn = last_end;
		} else {
			req->una_psn = end;
			break;
		}
	}
	if (progress)
		rc_comp_progress(qp);
	if (lost)
		rc_comp_retry(qp, false);
	rc_comp_complete(qp);
}

/* A NAK or response that ends the WQE @psn belongs to in error. */
static void rc_comp_fail_psn(struct rc_qp *qp, u32 psn, u8 status, u8 syn)
{
	struct rc_swr *r = rc_comp_find(qp, psn);

	if (r)
		rc_req_fail(qp, r, status, syn);
}

static void rc_comp_rnr(struct rc_qp *qp, u32 psn, u8 code)
{
	struct rc_req *req = &qp->req;
	struct rc_swr *r;

	if (req->rnr_wait)
		return;
	r = rc_comp_find(qp, psn);
	if (!r)
		return;
	if (qp->rnr_retry != RNIC_QP_RNR_RETRY_INFINITE) {
		if (!req->rnr_left) {
			RC_STAT_INC(qp, rnr_retry_exceeded);
			rc_req_fail(qp, r, RNIC_WC_RNR_RETRY_EXC_ERR,
				    RNIC_ERR_RNR_EXC);
			return;
		}
		req->rnr_left--;
	}
	req->rnr_wait = true;
	req->rnr_psn = psn;
	req->rnr_deadline = qp->ops->now_ns(qp) +
			    (u64)rnic_rnr_delay_us(code) * 1000;
	/* The responder told us why it is silent: no ACK timeout meanwhile. */
	rc_comp_arm(qp, false);
}

static void rc_comp_ack(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_req *req = &qp->req;
	u8 syn = h->syndrome;
	u32 psn = h->psn;

	switch (RC_AETH_TYPE(syn)) {
	case 0:
		RC_STAT_INC(qp, acks_rcvd);
		if (!rc_outstanding(qp, psn)) {
			RC_STAT_INC(qp, duplicate_responses);
			return;
		}
		rc_comp_acked(qp, psn);
		return;
	case 1:
		RC_STAT_INC(qp, rnr_naks_rcvd);
		break;
	case 3:
		switch (syn) {
		case RC_AETH_NAK_SEQ:
			RC_STAT_INC(qp, nak_seq_rcvd);
			break;
		case RC_AETH_NAK_INV:
			RC_STAT_INC(qp, nak_inv_req_rcvd);
			break;
		case RC_AETH_NAK_ACCESS:
			RC_STAT_INC(qp, nak_rem_access_rcvd);
			break;
		case RC_AETH_NAK_OP:
			RC_STAT_INC(qp, nak_rem_op_rcvd);
			break;
		}
		break;
	}
	if (!rc_outstanding(qp, psn)) {
		RC_STAT_INC(qp, duplicate_responses);
		return;
	}
	/* A NAK acknowledges every packet before its PSN. */
	if (psn != req->una_psn)
		rc_comp_acked(qp, rc_psn_add(psn, RC_PSN_MASK));
	if (qp->state == RNIC_QPS_ERR)
		return;
	switch (RC_AETH_TYPE(syn) == 1 ? 1 : syn) {
	case 1:
		rc_comp_rnr(qp, psn, syn & 0x1f);
		break;
	case RC_AETH_NAK_SEQ:
		rc_comp_retry(qp, false);
		break;
	case RC_AETH_NAK_INV:
		rc_comp_fail_psn(qp, psn, RNIC_WC_REM_INV_REQ_ERR,
				 RNIC_ERR_REM_INV_REQ);
		break;
	case RC_AETH_NAK_ACCESS:
		rc_comp_fail_psn(qp, psn, RNIC_WC_REM_ACCESS_ERR,
				 RNIC_ERR_REM_ACCESS);
		break;
	case RC_AETH_NAK_OP:
		rc_comp_fail_psn(qp, psn, RNIC_WC_REM_OP_ERR,
				 RNIC_ERR_REM_OP);
		break;
	default:
		rc_comp_fail_psn(qp, psn, RNIC_WC_BAD_RESP_ERR,
				 RNIC_ERR_BAD_RESP);
		break;
	}
}

/*
 * A READ response or atomic ACK at @psn: responses acknowledge what
 * precedes them. Returns the WQE it is for if @psn is the next one we
 * wait for; NULL if it is a duplicate, or later than expected (then the
 * missing responses are asked for again).
 */
static struct rc_swr *rc_comp_resp_wqe(struct rc_qp *qp, u32 psn)
{
	struct rc_req *req = &qp->req;

	if (!rc_outstanding(qp, psn)) {
		RC_STAT_INC(qp, duplicate_responses);
		return NULL;
	}
	if (psn != req->una_psn) {
		rc_comp_acked(qp, rc_psn_add(psn, RC_PSN_MASK));
		if (qp->state == RNIC_QPS_ERR || psn != req->una_psn)
			return NULL;
	}
	return rc_comp_find(qp, psn);
}

static void rc_comp_read_resp(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_req *req = &qp->req;
	struct rc_swqe *w;
	struct rc_swr *r;
	u32 k, off, want;
	bool last, ok;
	u8 syn;

	r = rc_comp_resp_wqe(qp, h->psn);
	if (!r)
		return;
	if (r->opcode != RNIC_SQE_OP_READ) {
		rc_req_fail(qp, r, RNIC_WC_BAD_RESP_ERR, RNIC_ERR_BAD_RESP);
		return;
	}
	k = rc_psn_diff(h->psn, r->first_psn);
	last = k + 1 == r->npsn;
	off = k * qp->mtu;
	want = last ? r->length - (r->length ? off : 0) : qp->mtu;
	/*
	 * FIRST and ONLY may start at any PSN of the READ (a re-request
	 * starts a new response stream there), MIDDLE and LAST not at its
	 * first; LAST and ONLY end it. Stricter position checks would turn
	 * a late packet of an abandoned stream into a QP error.
	 */
	switch (h->opcode) {
	case RC_OP_READ_RESP_FIRST:
		ok = !last;
		break;
	case RC_OP_READ_RESP_MIDDLE:
		ok = !last && k;
		break;
	case RC_OP_READ_RESP_LAST:
		ok = last && k;
		break;
	default:
		ok = last;
		break;
	}
	if (h->mask & RC_HDR_AETH && RC_AETH_TYPE(h->syndrome) != 0)
		ok = false;
	if (!ok || h->payload_len != want) {
		rc_req_fail(qp, r, RNIC_WC_BAD_RESP_ERR, RNIC_ERR_BAD_RESP);
		return;
	}
	w = rc_req_wqe(qp, false, r);
	if (!w)
		return;
	syn = rc_sge_copy(qp, RC_MEM_LOCAL_WRITE, w->sge, w->num_sge, off,
			  (void *)h->payload, want);
	if (syn == RNIC_ERR_DMA_OOB) {
		rc_engine_fatal(qp, syn, h->psn);
		return;
	}
	if (syn) {
		RC_STAT_INC(qp, key_violations);
		rc_req_fail(qp, r, RNIC_WC_LOC_PROT_ERR, syn);
		return;
	}
	req->una_psn = rc_psn_add(h->psn, 1);
	if (last) {
		r->state = RC_SWR_DONE;
		req->rd_atomic--;
	}
	rc_comp_progress(qp);
	rc_comp_complete(qp);
}

static void rc_comp_atomic_ack(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_req *req = &qp->req;
	struct rc_swqe *w;
	struct rc_swr *r;
	u64 orig = h->orig;	/* host order: little-endian, as verbs */
	u8 syn;

	r = rc_comp_resp_wqe(qp, h->psn);
	if (!r)
		return;
	if ((r->opcode != RNIC_SQE_OP_CMP_SWAP &&
	     r->opcode != RNIC_SQE_OP_FETCH_ADD) || h->payload_len ||
	    RC_AETH_TYPE(h->syndrome) != 0) {
		rc_req_fail(qp, r, RNIC_WC_BAD_RESP_ERR, RNIC_ERR_BAD_RESP);
		return;
	}
	w = rc_req_wqe(qp, false, r);
	if (!w)
		return;
	syn = rc_sge_copy(qp, RC_MEM_LOCAL_WRITE, w->sge, w->num_sge, 0,
			  &orig, sizeof(orig));
	if (syn == RNIC_ERR_DMA_OOB) {
		rc_engine_fatal(qp, syn, h->psn);
		return;
	}
	if (syn) {
		RC_STAT_INC(qp, key_violations);
		rc_req_fail(qp, r, RNIC_WC_LOC_PROT_ERR, syn);
		return;
	}
	req->una_psn = rc_psn_add(h->psn, 1);
	r->state = RC_SWR_DONE;
	req->rd_atomic--;
	rc_comp_progress(qp);
	rc_comp_complete(qp);
}

void rc_comp_rx(struct rc_qp *qp, const struct rc_hdr *h)
{
	/* In RTR nothing has been sent: any response is stray. */
	if (qp->state != RNIC_QPS_RTS && qp->state != RNIC_QPS_SQD)
		return;
	switch (h->opcode) {
	case RC_OP_ACK:
		if (h->payload_len)
			return;
		rc_comp_ack(qp, h);
		break;
	case RC_OP_ATOMIC_ACK:
		rc_comp_atomic_ack(qp, h);
		break;
	default:
		rc_comp_read_resp(qp, h);
		break;
	}
}

void rc_comp_timer(struct rc_qp *qp, u64 now)
{
	struct rc_req *req = &qp->req;

	if (req->rnr_deadline && now >= req->rnr_deadline) {
		req->rnr_deadline = 0;
		req->rnr_wait = false;
		/*
		 * From the NAKed PSN, or from an earlier one if a READ's
		 * responses went missing meanwhile.
		 */
		rc_req_rewind(qp, rc_psn_after(req->rnr_psn, req->una_psn) ?
				  req->una_psn : req->rnr_psn);
		rc_comp_arm(qp, true);
	}
	if (req->ack_deadline && now >= req->ack_deadline) {
		req->ack_deadline = 0;
		if (req->una_psn != req->sent_psn) {
			RC_STAT_INC(qp, local_ack_timeouts);
			rc_comp_retry(qp, true);
		}
	}
}
