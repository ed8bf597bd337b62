// SPDX-License-Identifier: GPL-2.0
/*
 * The responder. Checks each request against the expected PSN,
 * executes new ones (SEND into receive WQEs, WRITE, READ, atomics),
 * answers duplicates (ACK, READ executed again, atomic replayed from the
 * responder resources), NAKs what it must, and queues its responses in PSN
 * order for rc_tx(), coalescing ACKs that nothing separates.
 */
#include <errno.h>
#include <string.h>

#include "transport/rc.h"

/* rc_resp_item.type */
#define RC_RI_ACK		0	/* ACK or NAK: syndrome, psn, msn */
#define RC_RI_READ		1	/* READ response stream */
#define RC_RI_ATOMIC		2	/* atomic ACK */

#define RC_RI_NONE		0xff	/* res: no responder resource */

void rc_resp_reset(struct rc_qp *qp, u32 rq_psn)
{
	struct rc_resp *resp = &qp->resp;

	memset(resp, 0, sizeof(*resp));
	resp->epsn = rq_psn & RC_PSN_MASK;
}

bool rc_resp_pending(const struct rc_qp *qp)
{
	const struct rc_resp *resp = &qp->resp;

	if (resp->final_nak)
		return true;
	if (qp->state != RNIC_QPS_RTR && qp->state != RNIC_QPS_RTS &&
	    qp->state != RNIC_QPS_SQD)
		return false;
	return resp->q_head != resp->q_tail;
}

static unsigned int rc_q_len(const struct rc_resp *resp)
{
	return (u16)(resp->q_tail - resp->q_head);
}

static struct rc_resp_item *rc_q_at(struct rc_resp *resp, u16 pos)
{
	return &resp->q[pos % RC_RESP_QUEUE];
}

static struct rc_resp_item *rc_q_push(struct rc_resp *resp, u8 type)
{
	struct rc_resp_item *it = rc_q_at(resp, resp->q_tail++);

	memset(it, 0, sizeof(*it));
	it->type = type;
	it->res = RC_RI_NONE;
	return it;
}

/* One ACK covers every ACK queued right before it (ACKs are cumulative). */
static void rc_q_ack(struct rc_qp *qp, u32 psn)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_resp_item *it;

	if (rc_q_len(resp)) {
		it = rc_q_at(resp, resp->q_tail - 1);
		if (it->type == RC_RI_ACK && it->syndrome == RC_AETH_ACK) {
			it->psn = psn;
			it->msn = resp->msn;
			return;
		}
	}
	it = rc_q_push(resp, RC_RI_ACK);
	it->syndrome = RC_AETH_ACK;
	it->psn = psn;
	it->msn = resp->msn;
}

static void rc_q_nak(struct rc_qp *qp, u8 syndrome, u32 psn)
{
	struct rc_resp_item *it = rc_q_push(&qp->resp, RC_RI_ACK);

	it->syndrome = syndrome;
	it->psn = psn;
	it->msn = qp->resp.msn;
}

/*
 * A request the responder cannot accept ends the QP: the NAK still goes
 * out (it is the requester's only news of it), then ERR and the flush.
 * The receive WQE's error CQE, if any, has been written by the caller;
 * the event follows it, as hardware-rdma.rst asks.
 */
static void rc_resp_error(struct rc_qp *qp, u8 syndrome, u8 event, u8 reason)
{
	struct rc_resp *resp = &qp->resp;

	resp->final_nak = true;
	resp->final_syn = syndrome;
	resp->final_psn = resp->epsn;
	if (event)
		qp->ops->event(qp, event, reason, resp->epsn);
	if (qp->state != RNIC_QPS_ERR) {
		RC_STAT_INC(qp, qp_errors);
		rc_enter_err(qp);
	}
}

/* The device cannot reach the data or a ring: NAK, then QP_FATAL. */
static void rc_resp_fatal(struct rc_qp *qp, u8 reason)
{
	struct rc_resp *resp = &qp->resp;

	resp->final_nak = true;
	resp->final_syn = RC_AETH_NAK_OP;
	resp->final_psn = resp->epsn;
	rc_engine_fatal(qp, reason, resp->epsn);
}

static void rc_resp_inv(struct rc_qp *qp, u8 reason)
{
	rc_resp_error(qp, RC_AETH_NAK_INV, RNIC_EQE_QP_REQ_ERR, reason);
}

static void rc_resp_access(struct rc_qp *qp, u8 reason)
{
	rc_resp_error(qp, RC_AETH_NAK_ACCESS, RNIC_EQE_QP_ACCESS_ERR, reason);
}

/* Complete the receive WQE in use. */
static void rc_resp_rwqe_done(struct rc_qp *qp, struct rc_cqe *cqe)
{
	struct rc_resp *resp = &qp->resp;

	cqe->wqe_idx = resp->rwqe.idx;
	if (resp->rwqe.srq)
		cqe->flags |= RNIC_RCQE_F_SRQ;
	resp->rwqe_valid = false;
	rc_complete(qp, cqe);
}

static void rc_resp_rwqe_fail(struct rc_qp *qp, u8 opcode, u8 status, u8 syn)
{
	struct rc_cqe cqe = {
		.opcode = opcode,
		.status = status,
		.syndrome = syn,
	};

	rc_resp_rwqe_done(qp, &cqe);
}

/*
 * Take a receive WQE for a new message. Returns true if one is in use;
 * false if the packet must not be executed (RNR NAK queued, or the QP
 * failed).
 */
static bool rc_resp_take(struct rc_qp *qp, u8 cqe_op)
{
	struct rc_resp *resp = &qp->resp;
	unsigned int i;
	int res;

	if (resp->rwqe_valid)
		return true;
	memset(&resp->rwqe, 0, sizeof(resp->rwqe));
	res = qp->ops->rq_take(qp, &resp->rwqe);
	switch (res) {
	case RC_WQE_OK:
		break;
	case RC_WQE_NONE:
		/* Not executed: ePSN stays, the requester comes back. */
		rc_q_nak(qp, RC_AETH_RNR(qp->min_rnr_timer), resp->epsn);
		resp->nak_sent = true;
		return false;
	case RC_WQE_BAD:
		resp->rwqe_valid = true;
		rc_resp_rwqe_fail(qp, cqe_op, RNIC_WC_LOC_QP_OP_ERR,
				  resp->rwqe.syndrome ? resp->rwqe.syndrome :
							RNIC_ERR_BAD_WQE);
		rc_resp_error(qp, RC_AETH_NAK_OP, 0, 0);
		return false;
	default:
		rc_resp_fatal(qp, resp->rwqe.syndrome);
		return false;
	}
	if (resp->rwqe.num_sge > RC_MAX_SGE) {
		resp->rwqe_valid = true;
		rc_resp_rwqe_fail(qp, cqe_op, RNIC_WC_LOC_QP_OP_ERR,
				  RNIC_ERR_BAD_WQE);
		rc_resp_error(qp, RC_AETH_NAK_OP, 0, 0);
		return false;
	}
	resp->rwqe_valid = true;
	resp->rwqe_len = 0;
	for (i = 0; i < resp->rwqe.num_sge; i++) {
		u64 n = (u64)resp->rwqe_len + resp->rwqe.sge[i].len;

		resp->rwqe_len = n > RC_MAX_MSG ? RC_MAX_MSG : (u32)n;
	}
	return true;
}

static bool rc_op_first(u8 op)
{
	return op == RC_OP_SEND_FIRST || op == RC_OP_SEND_ONLY ||
	       op == RC_OP_SEND_ONLY_IMM || op == RC_OP_SEND_ONLY_INV ||
	       op == RC_OP_WRITE_FIRST || op == RC_OP_WRITE_ONLY ||
	       op == RC_OP_WRITE_ONLY_IMM;
}

static bool rc_op_last(u8 op)
{
	return op != RC_OP_SEND_FIRST && op != RC_OP_SEND_MIDDLE &&
	       op != RC_OP_WRITE_FIRST && op != RC_OP_WRITE_MIDDLE;
}

static bool rc_op_send(u8 op)
{
	return op <= RC_OP_SEND_ONLY_IMM || op == RC_OP_SEND_LAST_INV ||
	       op == RC_OP_SEND_ONLY_INV;
}

static bool rc_op_write(u8 op)
{
	return op >= RC_OP_WRITE_FIRST && op <= RC_OP_WRITE_ONLY_IMM;
}

static bool rc_op_imm(u8 op)
{
	return op == RC_OP_SEND_LAST_IMM || op == RC_OP_SEND_ONLY_IMM ||
	       op == RC_OP_WRITE_LAST_IMM || op == RC_OP_WRITE_ONLY_IMM;
}

/* Opcode order and packet lengths (IB 9.7.5.1.3 and 9.7.5.1.4). */
static bool rc_resp_valid(const struct rc_qp *qp, const struct rc_hdr *h)
{
	u8 op = h->opcode, cur = qp->resp.cur;
	u32 pl = h->payload_len;

	if (rc_op_send(op) || rc_op_write(op)) {
		bool send = rc_op_send(op);

		if (rc_op_first(op) ? cur != RC_RCUR_NONE :
		    cur != (send ? RC_RCUR_SEND : RC_RCUR_WRITE))
			return false;
		if (!rc_op_last(op))
			return pl == qp->mtu && !h->pad;
		if (!rc_op_first(op))
			return pl >= 1 && pl <= qp->mtu;
		return pl <= qp->mtu;
	}
	if (op == RC_OP_READ_REQ || op == RC_OP_CMP_SWAP ||
	    op == RC_OP_FETCH_ADD)
		return cur == RC_RCUR_NONE && !pl;
	return false;
}

static void rc_resp_send(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	u8 op = h->opcode;
	u8 syn;

	if (rc_op_first(op)) {
		if (!rc_resp_take(qp, RNIC_CQE_OP_RECV))
			return;
		resp->offset = 0;
	}
	if (!resp->rwqe_valid)
		return;
	if ((u64)resp->offset + h->payload_len > resp->rwqe_len) {
		rc_resp_rwqe_fail(qp, RNIC_CQE_OP_RECV, RNIC_WC_LOC_LEN_ERR,
				  RNIC_ERR_RECV_TOO_SHORT);
		rc_resp_error(qp, RC_AETH_NAK_INV, 0, 0);
		return;
	}
	syn = rc_sge_copy(qp, RC_MEM_RECV_WRITE, resp->rwqe.sge,
			  resp->rwqe.num_sge, resp->offset, (void *)h->payload,
			  h->payload_len);
	if (syn == RNIC_ERR_DMA_OOB) {
		rc_resp_fatal(qp, syn);
		return;
	}
	if (syn) {
		RC_STAT_INC(qp, key_violations);
		rc_resp_rwqe_fail(qp, RNIC_CQE_OP_RECV, RNIC_WC_LOC_PROT_ERR,
				  syn);
		rc_resp_error(qp, RC_AETH_NAK_OP, 0, 0);
		return;
	}
	resp->offset += h->payload_len;
	if (rc_op_last(op)) {
		struct rc_cqe cqe = {
			.opcode = RNIC_CQE_OP_RECV,
			.byte_len = resp->offset,
		};

		if (rc_op_imm(op)) {
			cqe.flags |= RNIC_RCQE_F_IMM;
			cqe.imm_data = h->imm;
		}
		if (h->mask & RC_HDR_IETH) {
			/* After the data is placed, before the CQE. */
			syn = qp->ops->invalidate(qp, h->inv_key);
			if (syn) {
				rc_resp_rwqe_fail(qp, RNIC_CQE_OP_RECV,
						  RNIC_WC_REM_INV_REQ_ERR,
						  RNIC_ERR_INV_KEY);
				rc_resp_error(qp, RC_AETH_NAK_INV, 0, 0);
				return;
			}
			cqe.flags |= RNIC_RCQE_F_INV;
			cqe.inv_key = h->inv_key;
		}
		if (h->se)
			cqe.flags |= RC_CQE_F_SOLICITED;
		resp->cur = RC_RCUR_NONE;
		resp->msn = rc_psn_add(resp->msn, 1);
		rc_resp_rwqe_done(qp, &cqe);
	} else {
		resp->cur = RC_RCUR_SEND;
	}
	resp->epsn = rc_psn_add(resp->epsn, 1);
	if (h->ackreq)
		rc_q_ack(qp, h->psn);
}

static void rc_resp_write(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	u8 op = h->opcode;
	u8 syn;

	if (rc_op_first(op)) {
		/* Only: the packet is the message; First: more must follow. */
		if (h->dma_len > RC_MAX_MSG ||
		    (rc_op_last(op) ? h->dma_len != h->payload_len :
				      h->dma_len <= h->payload_len)) {
			rc_resp_inv(qp, 0);
			return;
		}
		/* A zero-length WRITE's R_Key and address are not checked. */
		if (h->dma_len) {
			if (!(qp->access & RNIC_ACCESS_REMOTE_WRITE)) {
				RC_STAT_INC(qp, key_violations);
				rc_resp_access(qp, RNIC_ERR_KEY_ACCESS);
				return;
			}
			syn = qp->ops->mem(qp, RC_MEM_REMOTE_WRITE, h->rkey,
					   h->va, NULL, h->dma_len);
			if (syn) {
				RC_STAT_INC(qp, key_violations);
				rc_resp_access(qp, syn);
				return;
			}
		}
		resp->va = h->va;
		resp->rkey = h->rkey;
		resp->dma_len = h->dma_len;
		resp->offset = 0;
	} else if ((u64)resp->offset + h->payload_len > resp->dma_len ||
		   (rc_op_last(op) &&
		    resp->offset + h->payload_len != resp->dma_len)) {
		rc_resp_inv(qp, 0);
		return;
	}
	/* The packet with the immediate needs a receive WQE first. */
	if (rc_op_imm(op) && !rc_resp_take(qp, RNIC_CQE_OP_RECV_WRITE_IMM))
		return;
	if (h->payload_len) {
		syn = qp->ops->mem(qp, RC_MEM_REMOTE_WRITE, resp->rkey,
				   resp->va + resp->offset, (void *)h->payload,
				   h->payload_len);
		if (syn == RNIC_ERR_DMA_OOB) {
			rc_resp_fatal(qp, syn);
			return;
		}
		if (syn) {
			RC_STAT_INC(qp, key_violations);
			rc_resp_access(qp, syn);
			return;
		}
	}
	resp->offset += h->payload_len;
	if (rc_op_last(op)) {
		if (rc_op_imm(op)) {
			struct rc_cqe cqe = {
				.opcode = RNIC_CQE_OP_RECV_WRITE_IMM,
				.flags = RNIC_RCQE_F_IMM,
				.byte_len = resp->dma_len,
				.imm_data = h->imm,
			};

			if (h->se)
				cqe.flags |= RC_CQE_F_SOLICITED;
			rc_resp_rwqe_done(qp, &cqe);
		}
		resp->cur = RC_RCUR_NONE;
		resp->msn = rc_psn_add(resp->msn, 1);
	} else {
		resp->cur = RC_RCUR_WRITE;
	}
	resp->epsn = rc_psn_add(resp->epsn, 1);
	if (h->ackreq)
		rc_q_ack(qp, h->psn);
}

/* READ and atomic requests queued and not yet answered */
static unsigned int rc_resp_unanswered(struct rc_resp *resp)
{
	unsigned int n = 0;
	u16 pos;

	for (pos = resp->q_head; pos != resp->q_tail; pos++)
		if (rc_q_at(resp, pos)->type != RC_RI_ACK)
			n++;
	return n;
}

/* Take the oldest responder resource for a new READ or atomic. */
static u8 rc_resp_res_take(struct rc_qp *qp, bool atomic, u32 psn, u32 npsn)
{
	struct rc_resp *resp = &qp->resp;
	u8 slot = resp->res_next;
	struct rc_resp_res *res = &resp->res[slot];

	if (rc_resp_unanswered(resp) >= qp->max_dest_rd_atomic)
		RC_STAT_INC(qp, resp_res_exhausted);
	resp->res_next = (slot + 1) % qp->max_dest_rd_atomic;
	memset(res, 0, sizeof(*res));
	res->valid = true;
	res->atomic = atomic;
	res->first_psn = psn;
	res->npsn = npsn;
	return slot;
}

static void rc_resp_read(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_resp_item *it;
	u32 npsn;
	u8 syn, slot;

	if (!qp->max_dest_rd_atomic) {
		rc_resp_inv(qp, RNIC_ERR_RESP_RES);
		return;
	}
	if (h->dma_len > RC_MAX_MSG) {
		rc_resp_inv(qp, 0);
		return;
	}
	if (h->dma_len) {
		if (!(qp->access & RNIC_ACCESS_REMOTE_READ)) {
			RC_STAT_INC(qp, key_violations);
			rc_resp_access(qp, RNIC_ERR_KEY_ACCESS);
			return;
		}
		syn = qp->ops->mem(qp, RC_MEM_REMOTE_READ, h->rkey, h->va,
				   NULL, h->dma_len);
		if (syn) {
			RC_STAT_INC(qp, key_violations);
			rc_resp_access(qp, syn);
			return;
		}
	}
	npsn = rc_npsn(qp, h->dma_len);
	resp->msn = rc_psn_add(resp->msn, 1);
	/* The resource first: the count of unanswered excludes this one. */
	slot = rc_resp_res_take(qp, false, h->psn, npsn);
	resp->res[slot].msn = resp->msn;
	it = rc_q_push(resp, RC_RI_READ);
	it->res = slot;
	it->psn = h->psn;
	it->first_psn = h->psn;
	it->last_psn = rc_psn_add(h->psn, npsn - 1);
	it->msn = resp->msn;
	it->va = h->va;
	it->rkey = h->rkey;
	it->len = h->dma_len;
	resp->epsn = rc_psn_add(resp->epsn, npsn);
	RC_STAT_INC(qp, read_requests_rcvd);
}

static void rc_resp_atomic(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	bool cmp = h->opcode == RC_OP_CMP_SWAP;
	struct rc_resp_item *it;
	u64 orig = 0;
	u8 syn, slot;

	if (!qp->max_dest_rd_atomic) {
		rc_resp_inv(qp, RNIC_ERR_RESP_RES);
		return;
	}
	if (h->va & 7) {
		rc_resp_inv(qp, 0);
		return;
	}
	if (!(qp->access & RNIC_ACCESS_REMOTE_ATOMIC)) {
		RC_STAT_INC(qp, key_violations);
		rc_resp_access(qp, RNIC_ERR_KEY_ACCESS);
		return;
	}
	syn = qp->ops->atomic(qp, h->rkey, h->va, cmp,
			      cmp ? h->compare : h->swap_add,
			      cmp ? h->swap_add : 0, &orig);
	if (syn == RNIC_ERR_DMA_OOB) {
		rc_resp_fatal(qp, syn);
		return;
	}
	if (syn) {
		RC_STAT_INC(qp, key_violations);
		rc_resp_access(qp, syn);
		return;
	}
	resp->msn = rc_psn_add(resp->msn, 1);
	slot = rc_resp_res_take(qp, true, h->psn, 1);
	resp->res[slot].orig = orig;
	resp->res[slot].msn = resp->msn;
	it = rc_q_push(resp, RC_RI_ATOMIC);
	it->res = slot;
	it->psn = h->psn;
	it->last_psn = h->psn;
	it->orig = orig;
	it->msn = resp->msn;
	resp->epsn = rc_psn_add(resp->epsn, 1);
	RC_STAT_INC(qp, atomic_requests_rcvd);
}

/* The responder resource that holds @psn, for a duplicate. */
static struct rc_resp_res *rc_resp_res_find(struct rc_qp *qp, u32 psn,
					    bool atomic, u8 *slot)
{
	struct rc_resp *resp = &qp->resp;
	unsigned int i;

	for (i = 0; i < qp->max_dest_rd_atomic; i++) {
		struct rc_resp_res *res = &resp->res[i];

		if (res->valid && res->atomic == atomic &&
		    rc_psn_diff(psn, res->first_psn) < res->npsn) {
			*slot = i;
			return res;
		}
	}
	return NULL;
}

/*
 * The queued answer of a resource's request, if not yet all sent. The
 * slot alone is not enough: it may have been recycled while an older
 * request's answer was still queued.
 */
static struct rc_resp_item *rc_resp_queued(struct rc_resp *resp, u8 slot,
					   u32 last_psn)
{
	u16 pos;

	for (pos = resp->q_head; pos != resp->q_tail; pos++) {
		struct rc_resp_item *it = rc_q_at(resp, pos);

		if (it->type != RC_RI_ACK && it->res == slot &&
		    it->last_psn == last_psn)
			return it;
	}
	return NULL;
}

static void rc_resp_dup_read(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_resp_res *res;
	struct rc_resp_item *it;
	u32 last;
	u8 slot;

	res = rc_resp_res_find(qp, h->psn, false, &slot);
	if (!res)
		return;		/* older than the resources kept: dropped */
	/* The request must ask for the rest of the READ it repeats. */
	last = rc_psn_add(res->first_psn, res->npsn - 1);
	if (h->dma_len > RC_MAX_MSG ||
	    rc_psn_add(h->psn, rc_npsn(qp, h->dma_len) - 1) != last)
		return;
	if (h->dma_len && (!(qp->access & RNIC_ACCESS_REMOTE_READ) ||
			   qp->ops->mem(qp, RC_MEM_REMOTE_READ, h->rkey, h->va,
					NULL, h->dma_len)))
		return;
	/* Still being answered: restart that stream where asked. */
	it = rc_resp_queued(resp, slot, last);
	if (!it) {
		it = rc_q_push(resp, RC_RI_READ);
		it->res = slot;
		it->last_psn = last;
		it->msn = res->msn;
	}
	it->psn = h->psn;
	it->first_psn = h->psn;
	it->va = h->va;
	it->rkey = h->rkey;
	it->len = h->dma_len;
}

static void rc_resp_dup_atomic(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_resp_res *res;
	struct rc_resp_item *it;
	u8 slot;

	/* Never executed twice: the saved original value is replayed. */
	res = rc_resp_res_find(qp, h->psn, true, &slot);
	if (!res || rc_resp_queued(resp, slot, res->first_psn))
		return;
	it = rc_q_push(resp, RC_RI_ATOMIC);
	it->res = slot;
	it->psn = res->first_psn;
	it->last_psn = res->first_psn;
	it->orig = res->orig;
	it->msn = res->msn;
}

void rc_resp_rx(struct rc_qp *qp, const struct rc_hdr *h)
{
	struct rc_resp *resp = &qp->resp;
	u8 op = h->opcode;

	/*
	 * A full response queue means the requester ignores its window;
	 * dropping the packet unexecuted is safe, it will come again.
	 */
	if (rc_q_len(resp) + 2 > RC_RESP_QUEUE)
		return;
	if (rc_psn_after(resp->epsn, h->psn)) {
		RC_STAT_INC(qp, duplicate_requests);
		if (op == RC_OP_READ_REQ)
			rc_resp_dup_read(qp, h);
		else if (op == RC_OP_CMP_SWAP || op == RC_OP_FETCH_ADD)
			rc_resp_dup_atomic(qp, h);
		else if (h->ackreq)
			rc_q_ack(qp, rc_psn_add(resp->epsn, RC_PSN_MASK));
		return;
	}
	if (h->psn != resp->epsn) {
		/* One NAK per gap; then silence until ePSN arrives. */
		RC_STAT_INC(qp, out_of_sequence);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			rc_q_nak(qp, RC_AETH_NAK_SEQ, resp->epsn);
		}
		return;
	}
	resp->nak_sent = false;
	if (!rc_resp_valid(qp, h)) {
		rc_resp_inv(qp, 0);
		return;
	}
	if (qp->state == RNIC_QPS_RTR && !resp->comm_est) {
		resp->comm_est = true;
		qp->ops->event(qp, RNIC_EQE_COMM_EST, 0, 0);
	}
	if (rc_op_send(op))
		rc_resp_send(qp, h);
	else if (rc_op_write(op))
		rc_resp_write(qp, h);
	else if (op == RC_OP_READ_REQ)
		rc_resp_read(qp, h);
	else
		rc_resp_atomic(qp, h);
}

static void rc_resp_count(struct rc_qp *qp, u8 syndrome)
{
	switch (RC_AETH_TYPE(syndrome)) {
	case 0:
		RC_STAT_INC(qp, acks_sent);
		break;
	case 1:
		RC_STAT_INC(qp, rnr_naks_sent);
		break;
	default:
		if (syndrome == RC_AETH_NAK_SEQ)
			RC_STAT_INC(qp, nak_seq_sent);
		else if (syndrome == RC_AETH_NAK_INV)
			RC_STAT_INC(qp, nak_inv_req_sent);
		else if (syndrome == RC_AETH_NAK_ACCESS)
			RC_STAT_INC(qp, nak_rem_access_sent);
		else
			RC_STAT_INC(qp, nak_rem_op_sent);
		break;
	}
}

static int rc_resp_send_ack(struct rc_qp *qp, u8 syndrome, u32 psn, u32 msn)
{
	u8 buf[RC_BTH_LEN + RC_AETH_LEN];
	struct rc_hdr h = {
		.opcode = RC_OP_ACK,
		.pkey = qp->pkey,
		.dest_qpn = qp->dest_qpn,
		.psn = psn,
		.syndrome = syndrome,
		.msn = msn,
	};
	size_t len = rc_pkt_build(buf, &h, NULL, 0);
	int rc = rc_emit(qp, buf, len);

	if (rc == -EAGAIN)
		return rc;
	RC_STAT_INC(qp, rc_resp_packets);
	rc_resp_count(qp, syndrome);
	return 1;
}

int rc_resp_tx_one(struct rc_qp *qp)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_resp_item *it;
	u8 buf[RC_PKT_MAX];
	struct rc_hdr h = {
		.pkey = qp->pkey,
		.dest_qpn = qp->dest_qpn,
	};
	bool first, last;
	u32 plen;
	size_t len;
	int rc;
	u8 syn;

	if (resp->final_nak) {
		rc = rc_resp_send_ack(qp, resp->final_syn, resp->final_psn,
				      resp->msn);
		if (rc > 0)
			resp->final_nak = false;
		return rc;
	}
	if (!rc_resp_pending(qp))
		return 0;
	it = rc_q_at(resp, resp->q_head);
	switch (it->type) {
	case RC_RI_ACK:
		rc = rc_resp_send_ack(qp, it->syndrome, it->psn, it->msn);
		if (rc > 0)
			resp->q_head++;
		return rc;
	case RC_RI_ATOMIC:
		h.opcode = RC_OP_ATOMIC_ACK;
		h.psn = it->psn;
		h.syndrome = RC_AETH_ACK;
		h.msn = it->msn;
		h.orig = it->orig;
		len = rc_pkt_build(buf, &h, NULL, 0);
		rc = rc_emit(qp, buf, len);
		if (rc == -EAGAIN)
			return rc;
		resp->q_head++;
		RC_STAT_INC(qp, rc_resp_packets);
		return 1;
	}
	first = it->psn == it->first_psn;
	last = it->psn == it->last_psn;
	plen = last ? it->len : qp->mtu;
	if (plen > qp->mtu || (!last && it->len <= qp->mtu)) {
		/* Cannot happen by construction; never send garbage. */
		resp->q_head++;
		return 0;
	}
	h.opcode = first ? (last ? RC_OP_READ_RESP_ONLY :
			    RC_OP_READ_RESP_FIRST) :
		   (last ? RC_OP_READ_RESP_LAST : RC_OP_READ_RESP_MIDDLE);
	h.psn = it->psn;
	h.syndrome = RC_AETH_ACK;
	h.msn = it->msn;
	len = rc_pkt_build(buf, &h, NULL, plen);
	if (plen) {
		syn = qp->ops->mem(qp, RC_MEM_REMOTE_READ, it->rkey, it->va,
				   buf + rc_hdr_len(h.opcode), plen);
		if (syn) {
			/* The MR went away under the READ: NAK its PSN. */
			if (syn == RNIC_ERR_DMA_OOB) {
				rc_resp_fatal(qp, syn);
			} else {
				RC_STAT_INC(qp, key_violations);
				rc_resp_access(qp, syn);
			}
			resp->final_psn = it->psn;
			return 0;
		}
	}
	rc = rc_emit(qp, buf, len);
	if (rc == -EAGAIN)
		return rc;
	RC_STAT_INC(qp, rc_resp_packets);
	if (last) {
		resp->q_head++;
	} else {
		it->psn = rc_psn_add(it->psn, 1);
		it->va += plen;
		it->len -= plen;
	}
	return 1;
}

void rc_resp_flush(struct rc_qp *qp)
{
	struct rc_resp *resp = &qp->resp;
	struct rc_cqe cqe;
	unsigned int guard;

	if (resp->rwqe_valid) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.opcode = RNIC_CQE_OP_RECV;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rc_resp_rwqe_done(qp, &cqe);
	}
	resp->cur = RC_RCUR_NONE;
	/* An SRQ's other WQEs stay for the other QPs. */
	if (qp->srq)
		return;
	for (guard = 0; guard < 0x10000; guard++) {
		struct rc_rwqe *w = &resp->rwqe;
		int res;

		memset(w, 0, sizeof(*w));
		res = qp->ops->rq_take(qp, w);
		if (res != RC_WQE_OK && res != RC_WQE_BAD)
			break;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wqe_idx = w->idx;
		cqe.opcode = RNIC_CQE_OP_RECV;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rc_complete(qp, &cqe);
	}
}
