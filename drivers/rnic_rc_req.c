// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic RC requester: turns send work requests into request packets.
 *
 * Each WQE gets its PSNs when it is first started (a READ reserves one
 * PSN per response packet it expects, IBA 9.7.2); messages are segmented
 * at the path MTU with FIRST/MIDDLE/LAST opcodes. REG_MR and LOCAL_INV
 * execute when the requester reaches them, in queue order. A fenced WQE
 * waits until no READ/atomic is outstanding; READs and atomics in flight
 * are bounded by max_rd_atomic and all packets in flight by a window.
 * AckReq is set on last packets and every RNIC_ACK_REQ_EVERY packets.
 *
 * Recovery is go-back-N: rnic_rc_req_rewind() moves the requester back
 * to a PSN (sequence NAK, RNR NAK, retransmit timeout, lost READ
 * responses) and it sends everything again from there.
 *
 * Runs in the QP's send work under qp->sq_lock, dropping it only to wait
 * for TX ring space.
 */
#include <linux/jiffies.h>
#include <rdma/ib_pack.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

/* The local ACK timer never fires sooner: a software peer needs time */
#define RNIC_MIN_RETRANS_JIFFIES	max(1, HZ / 50)

static bool rnic_req_rd_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static u32 rnic_req_mtu(const struct rnic_qp *qp)
{
	return qp->mtu ?: 256;
}

/**
 * rnic_rc_timer_update() - (re)start the local ACK timer after progress
 * @qp: the QP, with sq_lock held
 *
 * Running while anything is unacknowledged, stopped otherwise; timeout 0
 * means wait forever.
 */
void rnic_rc_timer_update(struct rnic_qp *qp)
{
	u64 ns = rnic_retrans_timeout_ns(qp->timeout);
	unsigned long j;

	if (qp->comp.psn == qp->req.psn || !ns) {
		timer_delete(&qp->retrans_timer);
		return;
	}
	j = max_t(unsigned long, nsecs_to_jiffies(ns),
		  RNIC_MIN_RETRANS_JIFFIES);
	mod_timer(&qp->retrans_timer, jiffies + j);
}

/**
 * rnic_rc_timer_soon() - retry soon: a loss was detected without a NAK
 * @qp: the QP, with sq_lock held
 */
void rnic_rc_timer_soon(struct rnic_qp *qp)
{
	timer_reduce(&qp->retrans_timer,
		     jiffies + RNIC_MIN_RETRANS_JIFFIES);
}

static void rnic_rc_timer_arm(struct rnic_qp *qp)
{
	if (!timer_pending(&qp->retrans_timer))
		rnic_rc_timer_update(qp);
}

/**
 * rnic_rc_req_rewind() - go back N: send again from @psn
 * @qp: the QP, with sq_lock held
 * @psn: first PSN to send again (the oldest not acknowledged)
 */
void rnic_rc_req_rewind(struct rnic_qp *qp, u32 psn)
{
	u32 mtu = rnic_req_mtu(qp), i, found = 0, inflight = 0;
	struct rnic_send_wqe *wqe;
	bool hit = false;

	if (rnic_psn_diff(qp->req.psn, psn) <= 0)
		return;
	for (i = qp->sq.tail; i != qp->sq.head; i++) {
		wqe = rnic_sq_wqe(qp, i);
		if (wqe->state == RNIC_WQE_POSTED)
			break;
		if (wqe->state == RNIC_WQE_DONE)
			continue;
		if (!hit && rnic_psn_in_window(psn, wqe->first_psn,
					       wqe->npkts)) {
			hit = true;
			found = i;
			wqe->sent = (u32)rnic_psn_diff(psn, wqe->first_psn) *
				    mtu;
			wqe->sent = min(wqe->sent, wqe->length);
			if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
			    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
				wqe->sent = 0;
			wqe->state = RNIC_WQE_SENDING;
		} else if (hit) {
			wqe->sent = 0;
			wqe->state = RNIC_WQE_SENDING;
		} else if (rnic_req_rd_atomic(wqe->opcode)) {
			inflight++;
		}
	}
	if (!hit)
		return;
	rnic_roce_stat_add(qp->rdev, RNIC_ROCE_STAT_retransmits,
			   rnic_psn_diff(qp->req.psn, psn));
	qp->req.wqe_idx = found;
	qp->req.psn = psn;
	qp->req.rd_atomic_inflight = inflight;
}

/* Local operations: executed when the requester reaches them */
static void rnic_req_local(struct rnic_qp *qp, struct rnic_send_wqe *wqe)
{
	int err;

	if (wqe->opcode == IB_WR_REG_MR)
		err = rnic_mr_register(qp->rdev, wqe);
	else
		err = rnic_mr_invalidate(qp->rdev, qp->ibqp.pd,
					 wqe->ex.invalidate_rkey);
	qp->req.wqe_idx++;
	wqe->first_psn = qp->req.psn;
	wqe->npkts = 0;
	if (err) {
		rnic_sq_fail(qp, wqe, wqe->opcode == IB_WR_REG_MR ?
			     IB_WC_MW_BIND_ERR : IB_WC_LOC_PROT_ERR);
		return;
	}
	wqe->state = RNIC_WQE_DONE;
	wqe->completed = true;
	wqe->wc_status = IB_WC_SUCCESS;
	rnic_sq_complete(qp);
}

/*
 * Start a posted WQE: assign its PSNs.
 * Return: 0, -EAGAIN to wait (fence, window), -EINVAL for a bad WQE.
 */
static int rnic_req_start(struct rnic_qp *qp, struct rnic_send_wqe *wqe)
{
	u32 mtu = rnic_req_mtu(qp);
	bool rd_atomic = rnic_req_rd_atomic(wqe->opcode);

	if (rnic_req_opcode(wqe->opcode, RNIC_SEG_FIRST | RNIC_SEG_LAST) < 0)
		return -EINVAL;
	if ((wqe->send_flags & IB_SEND_FENCE) && qp->req.rd_atomic_inflight)
		return -EAGAIN;
	if (rd_atomic &&
	    qp->req.rd_atomic_inflight >= max_t(u32, qp->max_rd_atomic, 1))
		return -EAGAIN;
	if (rnic_psn_diff(qp->req.psn, qp->comp.psn) >= RNIC_REQ_WINDOW)
		return -EAGAIN;
	if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		if (wqe->length != sizeof(u64) ||
		    (wqe->atomic.remote_addr & 7))
			return -EINVAL;
		wqe->npkts = 1;
	} else {
		if (wqe->length > RNIC_IB_MAX_MSG_SZ)
			return -EINVAL;
		wqe->npkts = rnic_pkts_for_len(wqe->length, mtu);
	}
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = rnic_psn_add(wqe->first_psn, wqe->npkts - 1);
	wqe->sent = 0;
	wqe->completed = false;
	wqe->state = RNIC_WQE_SENDING;
	return 0;
}

static void rnic_req_pkt_init(struct rnic_qp *qp, struct rnic_xmit *x,
			      int opcode, u32 psn)
{
	memset(x, 0, sizeof(*x));
	rnic_roce_pkt_init(qp->rdev, &x->pkt, &qp->av, qp->udp_sport);
	x->pkt.opcode = opcode;
	x->pkt.dqpn = qp->dest_qpn;
	x->pkt.psn = psn;
}

/* Build the next packet of @wqe into @x; Return: true if it is the last */
static bool rnic_req_build(struct rnic_qp *qp, struct rnic_send_wqe *wqe,
			   struct rnic_xmit *x)
{
	u32 mtu = rnic_req_mtu(qp);
	u32 idx = wqe->sent / mtu;
	u32 psn = rnic_psn_add(wqe->first_psn, idx);
	unsigned int seg;
	bool last;

	switch (wqe->opcode) {
	case IB_WR_RDMA_READ:
		/* responses that arrived since a rewind need not come again */
		if (rnic_psn_in_window(qp->comp.psn, wqe->first_psn,
				       wqe->npkts) &&
		    rnic_psn_diff(qp->comp.psn, psn) > 0) {
			idx = rnic_psn_diff(qp->comp.psn, wqe->first_psn);
			psn = qp->comp.psn;
			wqe->sent = idx * mtu;
		}
		/* one request for the rest of the data, at its first PSN */
		rnic_req_pkt_init(qp, x, IB_OPCODE_RC_RDMA_READ_REQUEST, psn);
		x->pkt.va = wqe->rdma.remote_addr + wqe->sent;
		x->pkt.rkey = wqe->rdma.rkey;
		x->pkt.dma_len = wqe->length - wqe->sent;
		x->pkt.ack_req = true;
		return true;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		rnic_req_pkt_init(qp, x, rnic_req_opcode(wqe->opcode, 0), psn);
		x->pkt.va = wqe->atomic.remote_addr;
		x->pkt.rkey = wqe->atomic.rkey;
		if (wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP) {
			x->pkt.swap_add = wqe->atomic.swap;
			x->pkt.compare = wqe->atomic.compare_add;
		} else {
			x->pkt.swap_add = wqe->atomic.compare_add;
		}
		x->pkt.ack_req = true;
		return true;
	default:
		break;
	}

	seg = rnic_seg_pos(idx, wqe->npkts);
	last = seg & RNIC_SEG_LAST;
	rnic_req_pkt_init(qp, x, rnic_req_opcode(wqe->opcode, seg), psn);
	x->len = last ? wqe->length - wqe->sent : mtu;
	x->pkt.ack_req = last ||
			 idx % RNIC_ACK_REQ_EVERY == RNIC_ACK_REQ_EVERY - 1;
	x->pkt.se = last && (wqe->send_flags & IB_SEND_SOLICITED);
	if (seg & RNIC_SEG_FIRST) {
		x->pkt.va = wqe->rdma.remote_addr;
		x->pkt.rkey = wqe->rdma.rkey;
		x->pkt.dma_len = wqe->length;
	}
	x->pkt.imm = wqe->ex.imm;
	x->pkt.inv_rkey = wqe->ex.invalidate_rkey;
	if (wqe->send_flags & IB_SEND_INLINE) {
		x->kbuf = wqe->inline_data + wqe->sent;
	} else {
		x->pd = qp->ibqp.pd;
		x->sge = wqe->sge;
		x->num_sge = wqe->num_sge;
		x->offset = wqe->sent;
	}
	return last;
}

/**
 * rnic_rc_req_run() - send what the RC send queue allows
 * @qp: the QP
 *
 * Context: the QP's send work (process context).
 */
void rnic_rc_req_run(struct rnic_qp *qp)
{
	struct rnic_send_wqe *wqe;
	struct rnic_xmit *x;
	bool last;
	int err;

	x = kmalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return;
	spin_lock_bh(&qp->sq_lock);
	for (;;) {
		if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
		    qp->comp.fatal || qp->comp.rnr_wait ||
		    qp->req.wqe_idx == qp->sq.head)
			break;
		wqe = rnic_sq_wqe(qp, qp->req.wqe_idx);
		if (wqe->state == RNIC_WQE_SENT || wqe->state == RNIC_WQE_DONE) {
			/* acknowledged while being sent again: skip its PSNs */
			if (wqe->npkts &&
			    rnic_psn_diff(wqe->last_psn, qp->req.psn) >= 0)
				qp->req.psn = rnic_psn_add(wqe->last_psn, 1);
			qp->req.wqe_idx++;
			continue;
		}
		if (wqe->state == RNIC_WQE_POSTED) {
			if (qp->state == IB_QPS_SQD)
				break;	/* draining: start nothing new */
			if (wqe->opcode == IB_WR_REG_MR ||
			    wqe->opcode == IB_WR_LOCAL_INV) {
				rnic_req_local(qp, wqe);
				continue;
			}
			err = rnic_req_start(qp, wqe);
			if (err == -EAGAIN)
				break;
			if (err) {
				qp->req.wqe_idx++;
				rnic_sq_fail(qp, wqe, IB_WC_LOC_QP_OP_ERR);
				break;
			}
			if (rnic_req_rd_atomic(wqe->opcode))
				qp->req.rd_atomic_inflight++;
			rnic_roce_stat_inc(qp->rdev,
					   RNIC_ROCE_STAT_rc_requests);
		}

		last = rnic_req_build(qp, wqe, x);
		err = rnic_roce_xmit(qp->rdev, x);
		if (err == -EBUSY) {
			spin_unlock_bh(&qp->sq_lock);
			err = rnic_roce_wait_tx(qp->rdev);
			spin_lock_bh(&qp->sq_lock);
			if (err == -EIO)
				break;
			continue;
		}
		if (err) {
			qp->req.wqe_idx++;
			rnic_sq_fail(qp, wqe, err == -EACCES ?
				     IB_WC_LOC_PROT_ERR : IB_WC_LOC_QP_OP_ERR);
			break;
		}
		if (last) {
			wqe->sent = wqe->length;
			wqe->state = RNIC_WQE_SENT;
			qp->req.psn = rnic_psn_add(wqe->last_psn, 1);
			qp->req.wqe_idx++;
		} else {
			qp->req.psn = rnic_psn_add(x->pkt.psn, 1);
			wqe->sent += x->len;
		}
		rnic_rc_timer_arm(qp);
	}
	spin_unlock_bh(&qp->sq_lock);
	kfree(x);
}

/**
 * rnic_rc_retrans_timer() - the local ACK timeout expired
 * @t: the QP's retrans_timer
 *
 * Retry from the oldest unacknowledged PSN while retry_cnt allows; then
 * fail the oldest work request with IB_WC_RETRY_EXC_ERR.
 */
void rnic_rc_retrans_timer(struct timer_list *t)
{
	struct rnic_qp *qp = from_timer(qp, t, retrans_timer);
	struct rnic_send_wqe *wqe = NULL;
	u32 i;

	spin_lock_bh(&qp->sq_lock);
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    qp->comp.fatal || qp->comp.rnr_wait ||
	    qp->comp.psn == qp->req.psn)
		goto out;
	rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_retrans_timeouts);
	if (!qp->comp.retry_left) {
		for (i = qp->sq.tail; i != qp->sq.head; i++) {
			wqe = rnic_sq_wqe(qp, i);
			if (wqe->state != RNIC_WQE_DONE)
				break;
		}
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_retry_exceeded);
		if (wqe && wqe->state != RNIC_WQE_DONE)
			rnic_sq_fail(qp, wqe, IB_WC_RETRY_EXC_ERR);
		else
			rnic_qp_fatal(qp, IB_EVENT_QP_FATAL);
		goto out;
	}
	qp->comp.retry_left--;
	rnic_rc_req_rewind(qp, qp->comp.psn);
	rnic_rc_timer_update(qp);
	rnic_qp_kick_sq(qp);
out:
	spin_unlock_bh(&qp->sq_lock);
}

/**
 * rnic_rc_rnr_timer() - the RNR NAK's wait is over: send again
 * @t: the QP's rnr_timer
 */
void rnic_rc_rnr_timer(struct timer_list *t)
{
	struct rnic_qp *qp = from_timer(qp, t, rnr_timer);

	spin_lock_bh(&qp->sq_lock);
	qp->comp.rnr_wait = false;
	if (!qp->comp.fatal) {
		rnic_rc_timer_update(qp);
		rnic_qp_kick_sq(qp);
	}
	spin_unlock_bh(&qp->sq_lock);
}
