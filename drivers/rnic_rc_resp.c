// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic RC responder: executes the requests a peer sends.
 *
 * A request at the expected PSN is checked (opcode sequence, lengths,
 * rkey, bounds and access) and executed: SEND data into the receive WQE
 * across packets, WRITE data into the MR, READ answered by (segmented)
 * responses straight from the MR's pages, atomics under the device-wide
 * atomic lock. Earlier PSNs are duplicates: re-ACKed, or READ/atomic
 * replayed from the responder resources. A later PSN is answered with one
 * sequence-error NAK until the expected PSN arrives. No receive WQE for a
 * SEND means an RNR NAK; an invalid request, an access violation or a
 * local failure means a NAK and the QP in the error state (IBA 9.7.4,
 * 9.7.5). ACKs are coalesced: sent when the requester asks (AckReq) or
 * after RNIC_ACK_COALESCE unacknowledged packets.
 *
 * Runs in the RoCE NAPI context under qp->resp_lock.
 */
#include <rdma/ib_pack.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

static u32 rnic_resp_mtu(const struct rnic_qp *qp)
{
	return qp->mtu ?: 256;
}

/* Send an ACK or NAK for @psn with @syndrome and the current MSN. */
static void rnic_resp_ack(struct rnic_qp *qp, u32 psn, u8 syndrome)
{
	struct rnic_xmit x = {};

	rnic_roce_pkt_init(qp->rdev, &x.pkt, &qp->av, qp->udp_sport);
	x.pkt.opcode = IB_OPCODE_RC_ACKNOWLEDGE;
	x.pkt.dqpn = qp->dest_qpn;
	x.pkt.psn = psn;
	x.pkt.syndrome = syndrome;
	x.pkt.msn = qp->resp.msn;
	/* a lost ACK is recovered by the requester's retransmission */
	if (rnic_roce_xmit(qp->rdev, &x))
		return;
	if (rnic_aeth_type(syndrome) == RNIC_AETH_TYPE_ACK) {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_acks_sent);
		qp->resp.ack_psn = psn;
		qp->resp.unacked = 0;
	}
}

static void rnic_resp_nak_stat(struct rnic_qp *qp, enum rnic_nak_code code)
{
	static const enum rnic_roce_stat s[] = {
		[RNIC_NAK_PSN_SEQ] = RNIC_ROCE_STAT_nak_seq_sent,
		[RNIC_NAK_INV_REQ] = RNIC_ROCE_STAT_nak_inv_req_sent,
		[RNIC_NAK_REM_ACCESS] = RNIC_ROCE_STAT_nak_rem_access_sent,
		[RNIC_NAK_REM_OP] = RNIC_ROCE_STAT_nak_rem_op_sent,
	};

	rnic_roce_stat_inc(qp->rdev, code < ARRAY_SIZE(s) ? s[code] :
			   RNIC_ROCE_STAT_nak_rem_op_sent);
}

/*
 * A fatal responder error: complete the receive in progress (if any) in
 * error, NAK, and take the QP to the error state.
 */
static void rnic_resp_fatal(struct rnic_qp *qp, const struct rnic_pkt *pkt,
			    enum rnic_nak_code code, enum ib_wc_status status)
{
	struct rnic_recv_wqe *wqe = qp->resp.wqe;

	if (wqe) {
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = status,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
			.port_num = RNIC_IB_PORT,
		};

		rnic_cq_post(qp->rcq, &wc, false);
		qp->resp.wqe = NULL;
	}
	qp->resp.write_left = 0;
	rnic_resp_nak_stat(qp, code);
	rnic_resp_ack(qp, pkt->psn, rnic_aeth_nak(code));
	spin_lock(&qp->sq_lock);
	rnic_qp_fatal(qp, code == RNIC_NAK_REM_ACCESS ?
		      IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_REQ_ERR);
	spin_unlock(&qp->sq_lock);
}

/*
 * The opcode must continue the message in progress, or start one when
 * none is (IBA 9.7.4.1.3 / C9-91).
 */
static bool rnic_resp_seq_ok(const struct rnic_qp *qp, u32 flags)
{
	bool in_send = qp->resp.wqe, in_write = qp->resp.write_left;

	if (flags & RNIC_OPF_FIRST)
		return !in_send && !in_write;
	if (flags & RNIC_OPF_SEND)
		return in_send;
	if (flags & RNIC_OPF_WRITE)
		return in_write;
	return false;
}

/* Segment length rule: FIRST/MIDDLE carry exactly the path MTU. */
static bool rnic_resp_len_ok(const struct rnic_qp *qp,
			     const struct rnic_pkt *pkt, u32 flags)
{
	u32 mtu = rnic_resp_mtu(qp);

	if (pkt->payload_len > mtu)
		return false;
	if (!(flags & RNIC_OPF_LAST))
		return pkt->payload_len == mtu;
	return true;
}

/*
 * Post the receive completion of a finished SEND or WRITE with immediate.
 * Return: false if the QP went to error instead (bad rkey to invalidate).
 */
static bool rnic_resp_complete(struct rnic_qp *qp, const struct rnic_pkt *pkt,
			       u32 flags, u32 byte_len)
{
	struct rnic_recv_wqe *wqe = qp->resp.wqe;
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = (flags & RNIC_OPF_WRITE) ? IB_WC_RECV_RDMA_WITH_IMM :
						     IB_WC_RECV,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = qp->dest_qpn,
		.port_num = RNIC_IB_PORT,
	};

	if (flags & RNIC_OPF_IMMDT) {
		wc.ex.imm_data = pkt->imm;
		wc.wc_flags |= IB_WC_WITH_IMM;
	}
	if (flags & RNIC_OPF_IETH) {
		if (rnic_mr_invalidate(qp->rdev, qp->ibqp.pd, pkt->inv_rkey)) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
					IB_WC_REM_INV_REQ_ERR);
			return false;
		}
		wc.ex.invalidate_rkey = pkt->inv_rkey;
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	qp->resp.wqe = NULL;
	rnic_cq_post(qp->rcq, &wc, pkt->se);
	return true;
}

/* Take a receive WQE for a SEND or WRITE with immediate; false: RNR */
static bool rnic_resp_get_wqe(struct rnic_qp *qp)
{
	struct rnic_recv_wqe *store = rnic_resp_wqe_store(qp);

	if (!rnic_rq_pop(qp, store, store->sge))
		return false;
	if (store->num_sge > RNIC_IB_MAX_SGE)
		store->num_sge = RNIC_IB_MAX_SGE;
	qp->resp.wqe = store;
	qp->resp.offset = 0;
	return true;
}

static void rnic_resp_rnr(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_nak_rnr_sent);
	rnic_resp_ack(qp, pkt->psn, rnic_aeth_rnr(qp->min_rnr_timer));
}

/* SEND_FIRST/MIDDLE/LAST/ONLY (with IMM or INV); false: stop (NAKed) */
static bool rnic_resp_send(struct rnic_qp *qp, const struct rnic_pkt *pkt,
			   const u8 *frame, u32 flags)
{
	struct rnic_recv_wqe *wqe;
	int err;

	if ((flags & RNIC_OPF_FIRST) && !rnic_resp_get_wqe(qp)) {
		rnic_resp_rnr(qp, pkt);
		return false;
	}
	wqe = qp->resp.wqe;
	if (qp->resp.offset + pkt->payload_len > wqe->length) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ, IB_WC_LOC_LEN_ERR);
		return false;
	}
	err = rnic_copy_to_sges(qp, wqe->sge, wqe->num_sge, qp->resp.offset,
				frame + pkt->payload_off, pkt->payload_len);
	if (err) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_OP,
				err == -EACCES ? IB_WC_LOC_PROT_ERR :
						 IB_WC_LOC_LEN_ERR);
		return false;
	}
	qp->resp.offset += pkt->payload_len;
	if (flags & RNIC_OPF_LAST) {
		if (!rnic_resp_complete(qp, pkt, flags, qp->resp.offset))
			return false;
		qp->resp.msn = rnic_psn_add(qp->resp.msn, 1);
	}
	return true;
}

/* RDMA WRITE packets; false: stop (NAKed) */
static bool rnic_resp_write(struct rnic_qp *qp, const struct rnic_pkt *pkt,
			    const u8 *frame, u32 flags)
{
	struct rnic_mr *mr;
	int err;

	if (flags & RNIC_OPF_FIRST) {
		if (!(qp->access_flags & IB_ACCESS_REMOTE_WRITE)) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
					IB_WC_REM_ACCESS_ERR);
			return false;
		}
		/* ONLY carries it all; FIRST must leave some for later */
		if ((flags & RNIC_OPF_LAST) ? pkt->dma_len != pkt->payload_len :
					      pkt->dma_len <= pkt->payload_len) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
					IB_WC_REM_INV_REQ_ERR);
			return false;
		}
		qp->resp.write_va = pkt->va;
		qp->resp.write_rkey = pkt->rkey;
		qp->resp.write_left = pkt->dma_len;
		qp->resp.offset = pkt->dma_len;	/* byte_len of WRITE_IMM */
	}
	if (pkt->payload_len > qp->resp.write_left ||
	    ((flags & RNIC_OPF_LAST) &&
	     pkt->payload_len != qp->resp.write_left) ||
	    (!(flags & RNIC_OPF_LAST) &&
	     pkt->payload_len == qp->resp.write_left)) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return false;
	}
	/* WRITE with immediate consumes a receive WQE: check before writing */
	if (flags & RNIC_OPF_IMMDT) {
		u32 total = qp->resp.offset;

		if (!rnic_resp_get_wqe(qp)) {
			if (flags & RNIC_OPF_FIRST)
				qp->resp.write_left = 0;
			rnic_resp_rnr(qp, pkt);
			return false;
		}
		qp->resp.offset = total;
	}
	if (pkt->payload_len) {
		mr = rnic_mr_get(qp->rdev, qp->ibqp.pd, qp->resp.write_rkey,
				 IB_ACCESS_REMOTE_WRITE, qp->resp.write_va,
				 pkt->payload_len);
		if (!mr) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
					IB_WC_REM_ACCESS_ERR);
			return false;
		}
		err = rnic_mr_copy_to(mr, qp->resp.write_va,
				      frame + pkt->payload_off,
				      pkt->payload_len);
		rnic_mr_put(mr);
		if (err) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
					IB_WC_REM_ACCESS_ERR);
			return false;
		}
	}
	qp->resp.write_va += pkt->payload_len;
	qp->resp.write_left -= pkt->payload_len;
	if (flags & RNIC_OPF_LAST) {
		if ((flags & RNIC_OPF_IMMDT) &&
		    !rnic_resp_complete(qp, pkt, flags, qp->resp.offset))
			return false;
		qp->resp.msn = rnic_psn_add(qp->resp.msn, 1);
	}
	return true;
}

/*
 * Send the READ responses for [@va, @va + @len) starting at @psn. Sent
 * from the MR's pages; a frame the TX ring has no room for is left to
 * the requester's retry (it asks again for what is missing).
 */
static void rnic_resp_read_send(struct rnic_qp *qp, u32 psn, u64 va, u32 rkey,
				u32 len)
{
	u32 mtu = rnic_resp_mtu(qp), n = rnic_pkts_for_len(len, mtu), i, off;
	struct rnic_mr *mr = NULL;
	struct rnic_xmit x;
	unsigned int seg;

	if (len) {
		mr = rnic_mr_get(qp->rdev, qp->ibqp.pd, rkey,
				 IB_ACCESS_REMOTE_READ, va, len);
		if (!mr)
			return;
	}
	for (i = 0, off = 0; i < n; i++) {
		seg = rnic_seg_pos(i, n);
		memset(&x, 0, sizeof(x));
		rnic_roce_pkt_init(qp->rdev, &x.pkt, &qp->av, qp->udp_sport);
		x.pkt.opcode = rnic_read_resp_opcode(seg);
		x.pkt.dqpn = qp->dest_qpn;
		x.pkt.psn = rnic_psn_add(psn, i);
		x.pkt.syndrome = rnic_aeth_ack();
		x.pkt.msn = qp->resp.msn;
		x.len = min(mtu, len - off);
		x.mr = x.len ? mr : NULL;
		x.iova = va + off;
		if (rnic_roce_xmit(qp->rdev, &x))
			break;
		off += x.len;
	}
	if (mr)
		rnic_mr_put(mr);
}

static struct rnic_resp_res *rnic_resp_res_new(struct rnic_qp *qp)
{
	u32 n = clamp_t(u32, qp->max_dest_rd_atomic, 1, RNIC_RESP_RES);
	struct rnic_resp_res *res = &qp->resp.res[qp->resp.res_head % n];

	qp->resp.res_head = (qp->resp.res_head + 1) % n;
	memset(res, 0, sizeof(*res));
	return res;
}

static void rnic_resp_read(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	struct rnic_resp_res *res;
	struct rnic_mr *mr;
	u32 npkts;

	if (!(qp->access_flags & IB_ACCESS_REMOTE_READ)) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return;
	}
	if (pkt->dma_len > RNIC_IB_MAX_MSG_SZ) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (pkt->dma_len) {
		mr = rnic_mr_get(qp->rdev, qp->ibqp.pd, pkt->rkey,
				 IB_ACCESS_REMOTE_READ, pkt->va, pkt->dma_len);
		if (!mr) {
			rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
					IB_WC_REM_ACCESS_ERR);
			return;
		}
		rnic_mr_put(mr);
	}
	npkts = rnic_pkts_for_len(pkt->dma_len, rnic_resp_mtu(qp));
	res = rnic_resp_res_new(qp);
	res->opcode = pkt->opcode;
	res->first_psn = pkt->psn;
	res->last_psn = rnic_psn_add(pkt->psn, npkts - 1);
	res->va = pkt->va;
	res->rkey = pkt->rkey;
	res->length = pkt->dma_len;
	res->valid = true;

	qp->resp.psn = rnic_psn_add(res->last_psn, 1);
	qp->resp.msn = rnic_psn_add(qp->resp.msn, 1);
	rnic_resp_read_send(qp, pkt->psn, pkt->va, pkt->rkey, pkt->dma_len);
	qp->resp.ack_psn = res->last_psn;
	qp->resp.unacked = 0;
}

static void rnic_resp_atomic_ack(struct rnic_qp *qp, u32 psn, u64 orig)
{
	struct rnic_xmit x = {};

	rnic_roce_pkt_init(qp->rdev, &x.pkt, &qp->av, qp->udp_sport);
	x.pkt.opcode = IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE;
	x.pkt.dqpn = qp->dest_qpn;
	x.pkt.psn = psn;
	x.pkt.syndrome = rnic_aeth_ack();
	x.pkt.msn = qp->resp.msn;
	x.pkt.atomic_orig = orig;
	rnic_roce_xmit(qp->rdev, &x);
}

static void rnic_resp_atomic(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	spinlock_t *lock = rnic_roce_atomic_lock(qp->rdev);
	struct rnic_resp_res *res;
	u64 orig, val;
	struct rnic_mr *mr;
	int err;

	if (!(qp->access_flags & IB_ACCESS_REMOTE_ATOMIC)) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return;
	}
	if (pkt->va & 7) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		return;
	}
	mr = rnic_mr_get(qp->rdev, qp->ibqp.pd, pkt->rkey,
			 IB_ACCESS_REMOTE_ATOMIC, pkt->va, sizeof(u64));
	if (!mr) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_ACCESS,
				IB_WC_REM_ACCESS_ERR);
		return;
	}
	/* atomic with respect to every QP of the device */
	spin_lock(lock);
	err = rnic_mr_copy_from(mr, pkt->va, &orig, sizeof(orig));
	if (!err) {
		if (pkt->opcode == IB_OPCODE_RC_COMPARE_SWAP)
			val = orig == pkt->compare ? pkt->swap_add : orig;
		else
			val = orig + pkt->swap_add;
		err = rnic_mr_copy_to(mr, pkt->va, &val, sizeof(val));
	}
	spin_unlock(lock);
	rnic_mr_put(mr);
	if (err) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_REM_OP, IB_WC_REM_OP_ERR);
		return;
	}

	res = rnic_resp_res_new(qp);
	res->opcode = pkt->opcode;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->atomic_orig = orig;
	res->valid = true;
	qp->resp.psn = rnic_psn_add(pkt->psn, 1);
	qp->resp.msn = rnic_psn_add(qp->resp.msn, 1);
	rnic_resp_atomic_ack(qp, pkt->psn, orig);
	qp->resp.ack_psn = pkt->psn;
	qp->resp.unacked = 0;
}

/* A request before the expected PSN (IBA 9.7.5.1.1) */
static void rnic_resp_duplicate(struct rnic_qp *qp, const struct rnic_pkt *pkt)
{
	u32 flags = rnic_opcode_info(pkt->opcode)->flags, i, n;
	struct rnic_resp_res *res;

	rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_duplicate_requests);
	if (!(flags & (RNIC_OPF_READ | RNIC_OPF_ATOMIC))) {
		/* the ACK was lost: say again how far we got */
		if (pkt->ack_req)
			rnic_resp_ack(qp, rnic_psn_add(qp->resp.psn,
						       RNIC_PSN_MASK),
				      rnic_aeth_ack());
		return;
	}
	n = clamp_t(u32, qp->max_dest_rd_atomic, 1, RNIC_RESP_RES);
	for (i = 0; i < n; i++) {
		res = &qp->resp.res[i];
		if (!res->valid || res->opcode != pkt->opcode)
			continue;
		if (flags & RNIC_OPF_ATOMIC) {
			if (res->first_psn == pkt->psn) {
				rnic_resp_atomic_ack(qp, pkt->psn,
						     res->atomic_orig);
				return;
			}
			continue;
		}
		/* READ: the retry may ask for the tail of the original */
		if (!rnic_psn_in_window(pkt->psn, res->first_psn,
					rnic_psn_diff(res->last_psn,
						      res->first_psn) + 1))
			continue;
		if (pkt->rkey != res->rkey || pkt->va < res->va ||
		    pkt->va + pkt->dma_len > res->va + res->length ||
		    rnic_psn_diff(rnic_psn_add(pkt->psn,
					       rnic_pkts_for_len(pkt->dma_len,
								 rnic_resp_mtu(qp)) - 1),
				  res->last_psn) > 0)
			return;
		rnic_resp_read_send(qp, pkt->psn, pkt->va, pkt->rkey,
				    pkt->dma_len);
		return;
	}
}

/**
 * rnic_rc_resp_recv() - a request packet arrived for an RC QP
 * @qp: the QP
 * @pkt: the parsed frame (a requester opcode)
 * @frame: the frame
 *
 * Context: RoCE NAPI.
 */
void rnic_rc_resp_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		       const u8 *frame)
{
	u32 flags = rnic_opcode_info(pkt->opcode)->flags;
	bool ok;

	spin_lock(&qp->resp_lock);
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		break;
	default:
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rx_drop_qp_state);
		goto out;
	}
	if (qp->comp.fatal) {
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_rx_drop_qp_state);
		goto out;
	}

	switch (rnic_psn_classify(pkt->psn, qp->resp.psn)) {
	case RNIC_PSN_OUT_OF_SEQ:
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_out_of_sequence);
		/* one NAK per gap: the requester goes back to resp.psn */
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			rnic_resp_nak_stat(qp, RNIC_NAK_PSN_SEQ);
			rnic_resp_ack(qp, qp->resp.psn,
				      rnic_aeth_nak(RNIC_NAK_PSN_SEQ));
		}
		goto out;
	case RNIC_PSN_DUPLICATE:
		rnic_resp_duplicate(qp, pkt);
		goto out;
	case RNIC_PSN_NEW:
		break;
	}
	qp->resp.nak_sent = false;

	if (!rnic_resp_seq_ok(qp, flags)) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		goto out;
	}
	if (flags & RNIC_OPF_READ) {
		rnic_resp_read(qp, pkt);
		goto out;
	}
	if (flags & RNIC_OPF_ATOMIC) {
		rnic_resp_atomic(qp, pkt);
		goto out;
	}
	if (!rnic_resp_len_ok(qp, pkt, flags)) {
		rnic_resp_fatal(qp, pkt, RNIC_NAK_INV_REQ,
				IB_WC_REM_INV_REQ_ERR);
		goto out;
	}
	if (flags & RNIC_OPF_SEND)
		ok = rnic_resp_send(qp, pkt, frame, flags);
	else
		ok = rnic_resp_write(qp, pkt, frame, flags);
	if (!ok)
		goto out;

	qp->resp.psn = rnic_psn_add(pkt->psn, 1);
	if (pkt->ack_req || ++qp->resp.unacked >= RNIC_ACK_COALESCE)
		rnic_resp_ack(qp, pkt->psn, rnic_aeth_ack());
out:
	spin_unlock(&qp->resp_lock);
}
