// SPDX-License-Identifier: GPL-2.0
/*
 * The requester's transmit side. Starts send WQEs in SQ order
 * (fence, max_rd_atomic, SQD), gives them PSNs, segments them by the path
 * MTU and sends their packets within the PSN window, from a cursor that
 * rc_comp.c moves back to retransmit (go-back-N).
 */
#include <errno.h>
#include <string.h>

#include "transport/rc.h"

static bool rc_op_local(u8 opcode)
{
	return opcode == RNIC_SQE_OP_LOCAL_INV || opcode == RNIC_SQE_OP_REG_MR;
}

void rc_req_reset(struct rc_qp *qp, u32 sq_psn)
{
	struct rc_req *req = &qp->req;
	u64 ack = req->ack_deadline, rnr = req->rnr_deadline;

	/* RTR->RTS gives SQ_PSN: nothing has been started yet. */
	memset(req, 0, offsetof(struct rc_req, wr));
	req->ack_deadline = ack;
	req->rnr_deadline = rnr;
	req->txw_valid = false;
	req->rxw_valid = false;
	sq_psn &= RC_PSN_MASK;
	req->tx_psn = sq_psn;
	req->next_psn = sq_psn;
	req->una_psn = sq_psn;
	req->sent_psn = sq_psn;
	req->retry_left = qp->retry_cnt;
	req->rnr_left = qp->rnr_retry;
}

/* What the device's checks already guarantee, checked again cheaply. */
static u8 rc_req_check(const struct rc_qp *qp, const struct rc_swqe *w)
{
	u64 sum = 0;
	unsigned int i;

	(void)qp;
	if (w->opcode < RNIC_SQE_OP_SEND || w->opcode > RNIC_SQE_OP_REG_MR)
		return RNIC_ERR_BAD_WQE;
	if (w->flags & ~RNIC_SQE_F_ALL)
		return RNIC_ERR_BAD_WQE;
	if (w->flags & RNIC_SQE_F_INLINE) {
		if (w->opcode > RNIC_SQE_OP_WRITE_IMM || w->num_sge ||
		    w->length > RC_MAX_INLINE)
			return RNIC_ERR_BAD_WQE;
		return 0;
	}
	if (w->num_sge > RC_MAX_SGE)
		return RNIC_ERR_BAD_WQE;
	for (i = 0; i < w->num_sge; i++)
		sum += w->sge[i].len;
	if (rc_op_local(w->opcode))
		return 0;
	if (sum != w->length)
		return RNIC_ERR_BAD_WQE;
	if ((w->opcode == RNIC_SQE_OP_CMP_SWAP ||
	     w->opcode == RNIC_SQE_OP_FETCH_ADD) &&
	    (w->length != 8 || w->num_sge != 1))
		return RNIC_ERR_BAD_WQE;
	if (w->length > RC_MAX_MSG)
		return RNIC_ERR_MSG_TOO_LONG;
	return 0;
}

/*
 * Start the WQE at next_idx if the rules allow. Returns 1 if it was
 * started (or completed at once: local operations, failures), 0 if the SQ
 * has to wait.
 */
static int rc_req_start(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;
	struct rc_swqe *w = &req->txw;
	struct rc_swr *r;
	unsigned int i;
	int res;
	u8 syn;

	if (req->halted || qp->state != RNIC_QPS_RTS || !req->sq_more)
		return 0;
	if ((u16)(req->next_idx - req->una_idx) >= RC_SQ_TRACK)
		return 0;
	if (!(req->txw_valid && w->idx == req->next_idx)) {
		req->txw_valid = false;
		res = qp->ops->sq_peek(qp, req->next_idx, w);
		if (res == RC_WQE_NONE) {
			req->sq_more = false;
			return 0;
		}
		if (res == RC_WQE_FATAL) {
			rc_engine_fatal(qp, w->syndrome, req->next_idx);
			return 0;
		}
		w->idx = req->next_idx;
		if (res != RC_WQE_OK) {
			r = rc_req_swr(qp, req->next_idx);
			memset(r, 0, sizeof(*r));
			r->idx = req->next_idx++;
			r->opcode = w->opcode;
			r->first_psn = req->next_psn;
			req->tx_idx = req->next_idx;
			rc_req_fail(qp, r, RNIC_WC_LOC_QP_OP_ERR,
				    w->syndrome ? w->syndrome :
						  RNIC_ERR_BAD_WQE);
			return 1;
		}
		req->txw_valid = true;
	}
	/* READ and atomic limits, and the fence, hold the whole SQ. */
	if (rc_op_rd_atomic(w->opcode) && qp->max_rd_atomic &&
	    req->rd_atomic >= qp->max_rd_atomic)
		return 0;
	if (w->flags & RNIC_SQE_F_FENCE && req->rd_atomic)
		return 0;

	r = rc_req_swr(qp, req->next_idx);
	memset(r, 0, sizeof(*r));
	r->idx = req->next_idx++;
	r->opcode = w->opcode;
	r->flags = w->flags;
	r->length = w->length;
	r->first_psn = req->next_psn;
	req->tx_idx = req->next_idx;

	syn = rc_req_check(qp, w);
	if (syn) {
		rc_req_fail(qp, r, syn == RNIC_ERR_MSG_TOO_LONG ?
			    RNIC_WC_LOC_LEN_ERR : RNIC_WC_LOC_QP_OP_ERR, syn);
		return 1;
	}
	if (rc_op_rd_atomic(w->opcode) && !qp->max_rd_atomic) {
		rc_req_fail(qp, r, RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_RESP_RES);
		return 1;
	}
	if (rc_op_local(w->opcode)) {
		/* Takes effect now, before any later WQE starts. */
		syn = qp->ops->local_op(qp, w);
		if (syn) {
			rc_req_fail(qp, r, RNIC_WC_LOC_QP_OP_ERR, syn);
		} else {
			r->state = RC_SWR_DONE;
			rc_comp_complete(qp);
		}
		return 1;
	}
	/* Every local key before the first packet: a failure sends nothing. */
	if (!(w->flags & RNIC_SQE_F_INLINE)) {
		enum rc_mem_op op = rc_op_rd_atomic(w->opcode) ?
				    RC_MEM_LOCAL_WRITE : RC_MEM_LOCAL_READ;

		for (i = 0; i < w->num_sge; i++) {
			if (!w->sge[i].len)
				continue;
			syn = qp->ops->mem(qp, op, w->sge[i].lkey,
					   w->sge[i].addr, NULL, w->sge[i].len);
			if (syn == RNIC_ERR_DMA_OOB) {
				rc_engine_fatal(qp, syn, r->idx);
				return 0;
			}
			if (syn) {
				RC_STAT_INC(qp, key_violations);
				rc_req_fail(qp, r, RNIC_WC_LOC_PROT_ERR, syn);
				return 1;
			}
		}
	}
	r->npsn = rc_op_rd_atomic(w->opcode) && w->opcode != RNIC_SQE_OP_READ ?
		  1 : rc_npsn(qp, w->length);
	r->rd_req_psn = r->first_psn;
	r->state = RC_SWR_PENDING;
	req->next_psn = rc_psn_add(req->next_psn, r->npsn);
	/* The cursor is at the new WQE's first packet. */
	req->tx_idx = r->idx;
	req->tx_psn = r->first_psn;
	if (rc_op_rd_atomic(w->opcode))
		req->rd_atomic++;
	return 1;
}

static u8 rc_req_payload(struct rc_qp *qp, const struct rc_swqe *w, u32 off,
			 u8 *buf, u32 len)
{
	if (w->flags & RNIC_SQE_F_INLINE) {
		if (off + len > w->length || w->length > RC_MAX_INLINE)
			return RNIC_ERR_BAD_WQE;
		memcpy(buf, w->inline_data + off, len);
		return 0;
	}
	return rc_sge_copy(qp, RC_MEM_LOCAL_READ, w->sge, w->num_sge, off,
			   buf, len);
}

static const u8 rc_send_ops[4][2] = {
	/* [first + 2 * last][imm/inv variant] */
	{ RC_OP_SEND_MIDDLE, RC_OP_SEND_MIDDLE },
	{ RC_OP_SEND_FIRST, RC_OP_SEND_FIRST },
	{ RC_OP_SEND_LAST, RC_OP_SEND_LAST_IMM },
	{ RC_OP_SEND_ONLY, RC_OP_SEND_ONLY_IMM },
};

static const u8 rc_write_ops[4][2] = {
	{ RC_OP_WRITE_MIDDLE, RC_OP_WRITE_MIDDLE },
	{ RC_OP_WRITE_FIRST, RC_OP_WRITE_FIRST },
	{ RC_OP_WRITE_LAST, RC_OP_WRITE_LAST_IMM },
	{ RC_OP_WRITE_ONLY, RC_OP_WRITE_ONLY_IMM },
};

/* Build and emit the packet of @r at the cursor. */
static int rc_req_send(struct rc_qp *qp, struct rc_swr *r)
{
	struct rc_req *req = &qp->req;
	u8 buf[RC_PKT_MAX];
	struct rc_hdr h = {
		.pkey = qp->pkey,
		.dest_qpn = qp->dest_qpn,
		.psn = req->tx_psn,
	};
	u32 k = rc_psn_diff(req->tx_psn, r->first_psn);
	u32 off = k * qp->mtu, plen = 0, end;
	struct rc_swqe *w;
	size_t len;
	u8 syn;
	int rc;

	w = rc_req_wqe(qp, true, r);
	if (!w)
		return 0;
	switch (r->opcode) {
	case RNIC_SQE_OP_READ:
		/* From the cursor: a re-request asks for what is missing. */
		h.opcode = RC_OP_READ_REQ;
		h.va = w->remote_addr + (w->length ? off : 0);
		h.rkey = w->rkey;
		h.dma_len = w->length ? w->length - off : 0;
		h.ackreq = true;
		len = rc_pkt_build(buf, &h, NULL, 0);
		end = rc_psn_add(r->first_psn, r->npsn);
		break;
	case RNIC_SQE_OP_CMP_SWAP:
	case RNIC_SQE_OP_FETCH_ADD:
		h.opcode = r->opcode == RNIC_SQE_OP_CMP_SWAP ?
			   RC_OP_CMP_SWAP : RC_OP_FETCH_ADD;
		h.va = w->remote_addr;
		h.rkey = w->rkey;
		if (r->opcode == RNIC_SQE_OP_CMP_SWAP) {
			h.swap_add = w->swap;
			h.compare = w->compare_add;
		} else {
			h.swap_add = w->compare_add;
		}
		h.ackreq = true;
		len = rc_pkt_build(buf, &h, NULL, 0);
		end = rc_psn_add(h.psn, 1);
		break;
	default: {
		bool first = k == 0, last = k + 1 == r->npsn;
		bool write = r->opcode == RNIC_SQE_OP_WRITE ||
			     r->opcode == RNIC_SQE_OP_WRITE_IMM;
		bool imm = r->opcode == RNIC_SQE_OP_SEND_IMM ||
			   r->opcode == RNIC_SQE_OP_WRITE_IMM;
		unsigned int pos = first + 2 * last;

		plen = last ? w->length - off : qp->mtu;
		if (write) {
			h.opcode = rc_write_ops[pos][imm];
		} else if (r->opcode == RNIC_SQE_OP_SEND_INV && last) {
			h.opcode = first ? RC_OP_SEND_ONLY_INV :
					   RC_OP_SEND_LAST_INV;
			h.inv_key = w->key;
		} else {
			h.opcode = rc_send_ops[pos][imm];
		}
		if (write && first) {
			h.va = w->remote_addr;
			h.rkey = w->rkey;
			h.dma_len = w->length;
		}
		if (imm)
			h.imm = w->imm_data;
		/* SE on the last packet of SEND* and WRITE_IMM only. */
		h.se = last && w->flags & RNIC_SQE_F_SOLICITED &&
		       r->opcode != RNIC_SQE_OP_WRITE;
		h.ackreq = last || (k + 1) % RC_ACKREQ_EVERY == 0;
		len = rc_pkt_build(buf, &h, NULL, plen);
		syn = rc_req_payload(qp, w, off, buf + rc_hdr_len(h.opcode),
				     plen);
		if (syn == RNIC_ERR_DMA_OOB) {
			rc_engine_fatal(qp, syn, r->idx);
			return 0;
		}
		if (syn) {
			RC_STAT_INC(qp, key_violations);
			rc_req_fail(qp, r, RNIC_WC_LOC_PROT_ERR, syn);
			return 0;
		}
		end = rc_psn_add(h.psn, 1);
		break;
	}
	}

	rc = rc_emit(qp, buf, len);
	if (rc == -EAGAIN)
		return rc;
	if (rc_psn_after(req->sent_psn, h.psn))
		RC_STAT_INC(qp, retransmits);
	else
		RC_STAT_INC(qp, rc_req_packets);
	if (rc_psn_after(end, req->sent_psn))
		req->sent_psn = end;
	if (r->opcode == RNIC_SQE_OP_READ)
		r->rd_req_psn = h.psn;
	/* The timer runs while anything is unacknowledged. */
	if (!req->ack_deadline)
		rc_comp_arm(qp, true);
	req->tx_psn = end;
	if (rc_psn_diff(end, r->first_psn) >= r->npsn)
		req->tx_idx = r->idx + 1;
	return 1;
}

int rc_req_tx_one(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;
	unsigned int guard;

	/* Bounded: local operations complete without sending anything. */
	for (guard = 0; guard < 2 * RC_SQ_TRACK + 2; guard++) {
		struct rc_swr *r;

		if (qp->state != RNIC_QPS_RTS && qp->state != RNIC_QPS_SQD)
			return 0;
		if (req->rnr_wait)
			return 0;
		if (req->tx_idx == req->next_idx) {
			if (!rc_req_start(qp))
				return 0;
			continue;
		}
		r = rc_req_swr(qp, req->tx_idx);
		if (r->state == RC_SWR_ERROR)
			return 0;
		if (!r->npsn || r->state == RC_SWR_DONE) {
			req->tx_idx++;
			if (req->tx_idx != req->next_idx)
				req->tx_psn = rc_req_swr(qp, req->tx_idx)->first_psn;
			else
				req->tx_psn = req->next_psn;
			continue;
		}
		if (rc_psn_diff(req->tx_psn, r->first_psn) >= r->npsn)
			req->tx_psn = r->first_psn;
		if (rc_psn_diff(req->tx_psn, req->una_psn) >= RC_PSN_WINDOW)
			return 0;
		return rc_req_send(qp, r);
	}
	return 0;
}

/*
 * Whether rc_req_tx_one() would send or start something now: false while
 * the window is full, a fence or the READ/atomic limit holds the SQ, or
 * an RNR wait runs, so that a device polling this does not spin.
 */
bool rc_req_pending(const struct rc_qp *qp)
{
	const struct rc_req *req = &qp->req;
	const struct rc_swqe *w = &req->txw;

	if (qp->state != RNIC_QPS_RTS && qp->state != RNIC_QPS_SQD)
		return false;
	if (req->rnr_wait)
		return false;
	if (req->tx_idx != req->next_idx) {
		const struct rc_swr *r = &req->wr[req->tx_idx % RC_SQ_TRACK];

		if (r->state == RC_SWR_ERROR)
			return false;
		if (r->npsn && r->state == RC_SWR_PENDING)
			return rc_psn_diff(req->tx_psn, req->una_psn) <
			       RC_PSN_WINDOW;
		return true;
	}
	if (qp->state != RNIC_QPS_RTS || !req->sq_more || req->halted ||
	    (u16)(req->next_idx - req->una_idx) >= RC_SQ_TRACK)
		return false;
	/* Peeked already and waiting for earlier READs/atomics? */
	if (req->txw_valid && w->idx == req->next_idx) {
		if (rc_op_rd_atomic(w->opcode) && qp->max_rd_atomic &&
		    req->rd_atomic >= qp->max_rd_atomic)
			return false;
		if (w->flags & RNIC_SQE_F_FENCE && req->rd_atomic)
			return false;
	}
	return true;
}

void rc_req_flush(struct rc_qp *qp)
{
	struct rc_req *req = &qp->req;
	struct rc_cqe cqe;
	struct rc_swqe *w = &req->txw;
	unsigned int guard;

	while (req->una_idx != req->next_idx) {
		struct rc_swr *r = rc_req_swr(qp, req->una_idx);

		memset(&cqe, 0, sizeof(cqe));
		cqe.wqe_idx = req->una_idx++;
		cqe.opcode = r->opcode;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rc_complete(qp, &cqe);
	}
	req->txw_valid = false;
	req->rxw_valid = false;
	/* And every WQE posted since, malformed ones included. */
	for (guard = 0; guard < 0x10000; guard++) {
		int res = qp->ops->sq_peek(qp, req->next_idx, w);

		if (res != RC_WQE_OK && res != RC_WQE_BAD)
			break;
		memset(&cqe, 0, sizeof(cqe));
		cqe.wqe_idx = req->next_idx++;
		cqe.opcode = w->opcode;
		cqe.status = RNIC_WC_WR_FLUSH_ERR;
		cqe.syndrome = RNIC_ERR_FLUSHED;
		rc_complete(qp, &cqe);
	}
	req->una_idx = req->next_idx;
	req->tx_idx = req->next_idx;
	req->rd_atomic = 0;
	req->sq_more = false;
}
