// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic transport: the QP hooks the verbs layer calls (transport state
 * set-up and tear-down, state changes, kicks) and the pure decisions the
 * engines share (PSN classification, AETH syndromes, timers, segmentation,
 * UDP source port), which KUnit tests directly.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>
#include <rdma/ib_pack.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

/**
 * rnic_psn_classify() - how a responder sees a request PSN (IBA 9.7.3)
 * @psn: the request's PSN
 * @expected: the responder's expected PSN
 *
 * Half the PSN space behind @expected counts as duplicates, the half
 * ahead as out of sequence.
 */
enum rnic_psn_class rnic_psn_classify(u32 psn, u32 expected)
{
	s32 d = rnic_psn_diff(psn, expected);

	if (!d)
		return RNIC_PSN_NEW;
	return d < 0 ? RNIC_PSN_DUPLICATE : RNIC_PSN_OUT_OF_SEQ;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_psn_classify);

/* AETH syndrome: bit 7 reserved, type in bits 6:5, value in bits 4:0 */
u8 rnic_aeth_ack(void)
{
	/* end-to-end credits are not used: "credit count invalid" */
	return RNIC_AETH_TYPE_ACK << 5 | RNIC_AETH_NO_CREDIT;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_aeth_ack);

u8 rnic_aeth_rnr(u8 timer)
{
	return RNIC_AETH_TYPE_RNR << 5 | (timer & 0x1f);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_aeth_rnr);

u8 rnic_aeth_nak(enum rnic_nak_code code)
{
	return RNIC_AETH_TYPE_NAK << 5 | (code & 0x1f);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_aeth_nak);

u8 rnic_aeth_type(u8 syndrome)
{
	return (syndrome >> 5) & 3;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_aeth_type);

u8 rnic_aeth_value(u8 syndrome)
{
	return syndrome & 0x1f;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_aeth_value);

/**
 * rnic_rnr_timer_us() - decode the 5-bit RNR NAK timer (IBA table 45)
 * @timer: the encoded value; 0 is the longest, 655.36 ms
 *
 * Return: the minimum wait in microseconds.
 */
u32 rnic_rnr_timer_us(u8 timer)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return us[timer & 0x1f];
}
EXPORT_SYMBOL_IF_KUNIT(rnic_rnr_timer_us);

/**
 * rnic_nak_wc_status() - the completion status a NAK code means
 * @code: the NAK code (AETH value of a NAK)
 *
 * A PSN sequence error is recovered by retransmission and never reaches
 * a completion; it maps to success here. Reserved codes are treated as
 * a remote operational error.
 */
enum ib_wc_status rnic_nak_wc_status(u8 code)
{
	switch (code) {
	case RNIC_NAK_PSN_SEQ:
		return IB_WC_SUCCESS;
	case RNIC_NAK_INV_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case RNIC_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case RNIC_NAK_INV_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	case RNIC_NAK_REM_OP:
	default:
		return IB_WC_REM_OP_ERR;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_nak_wc_status);

/**
 * rnic_retrans_timeout_ns() - local ACK timeout from the QP attribute
 * @timeout: 5-bit attribute: 4.096 us * 2^timeout; 0 means infinite
 *
 * Return: nanoseconds, or 0 for no timeout.
 */
u64 rnic_retrans_timeout_ns(u8 timeout)
{
	timeout &= 0x1f;
	if (!timeout)
		return 0;
	return 4096ULL << timeout;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_retrans_timeout_ns);

/* Packets a message of @len bytes takes at @mtu: a zero-length one too. */
u32 rnic_pkts_for_len(u32 len, u32 mtu)
{
	if (!len || !mtu)
		return 1;
	return (u32)DIV_ROUND_UP((u64)len, mtu);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_pkts_for_len);

/* RNIC_SEG_FIRST / RNIC_SEG_LAST of packet @idx of @npkts */
unsigned int rnic_seg_pos(u32 idx, u32 npkts)
{
	return (idx == 0 ? RNIC_SEG_FIRST : 0) |
	       (idx + 1 >= npkts ? RNIC_SEG_LAST : 0);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_seg_pos);

/**
 * rnic_req_opcode() - RC request opcode of one packet of a work request
 * @op: IB_WR_*
 * @seg: RNIC_SEG_FIRST and/or RNIC_SEG_LAST
 *
 * Immediate data and the rkey to invalidate ride on the last (or only)
 * packet; RDMA WRITE's RETH on the first (or only).
 *
 * Return: the IB opcode, or -EINVAL for a WR that sends no packet.
 */
int rnic_req_opcode(enum ib_wr_opcode op, unsigned int seg)
{
	bool first = seg & RNIC_SEG_FIRST, last = seg & RNIC_SEG_LAST;

	switch (op) {
	case IB_WR_SEND:
		return first && last ? IB_OPCODE_RC_SEND_ONLY :
		       first ? IB_OPCODE_RC_SEND_FIRST :
		       last ? IB_OPCODE_RC_SEND_LAST : IB_OPCODE_RC_SEND_MIDDLE;
	case IB_WR_SEND_WITH_IMM:
		return first && last ? IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE :
		       first ? IB_OPCODE_RC_SEND_FIRST :
		       last ? IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE :
		       IB_OPCODE_RC_SEND_MIDDLE;
	case IB_WR_SEND_WITH_INV:
		return first && last ? IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE :
		       first ? IB_OPCODE_RC_SEND_FIRST :
		       last ? IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE :
		       IB_OPCODE_RC_SEND_MIDDLE;
	case IB_WR_RDMA_WRITE:
		return first && last ? IB_OPCODE_RC_RDMA_WRITE_ONLY :
		       first ? IB_OPCODE_RC_RDMA_WRITE_FIRST :
		       last ? IB_OPCODE_RC_RDMA_WRITE_LAST :
		       IB_OPCODE_RC_RDMA_WRITE_MIDDLE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return first && last ?
		       IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
		       first ? IB_OPCODE_RC_RDMA_WRITE_FIRST :
		       last ? IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE :
		       IB_OPCODE_RC_RDMA_WRITE_MIDDLE;
	case IB_WR_RDMA_READ:
		return IB_OPCODE_RC_RDMA_READ_REQUEST;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_OPCODE_RC_COMPARE_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_OPCODE_RC_FETCH_ADD;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_req_opcode);

/* READ response opcode of one packet (AETH on first, last and only) */
u8 rnic_read_resp_opcode(unsigned int seg)
{
	bool first = seg & RNIC_SEG_FIRST, last = seg & RNIC_SEG_LAST;

	return first && last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
	       first ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
	       last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
	       IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_read_resp_opcode);

/**
 * rnic_udp_sport() - RoCE v2 UDP source port of a flow
 * @flow_label: the path's flow label, or 0
 * @lqpn: local QPN
 * @rqpn: remote QPN
 *
 * From the flow label when there is one, else from a label both ends
 * derive alike from the QPN pair, so that ECMP spreads QPs over paths
 * while each QP's packets stay in order on one.
 */
u16 rnic_udp_sport(u32 flow_label, u32 lqpn, u32 rqpn)
{
	return rdma_get_udp_sport(flow_label & IB_GRH_FLOWLABEL_MASK, lqpn,
				  rqpn);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_udp_sport);

enum ib_wc_opcode rnic_wr_to_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_wr_to_wc_opcode);

/**
 * rnic_copy_to_sges() - copy received bytes into a receive WQE's buffers
 * @qp: the QP (its PD owns the lkeys)
 * @sge: the buffers
 * @num_sge: entries of @sge
 * @offset: where in the buffers to start
 * @src: the bytes
 * @len: how many
 *
 * Return: 0; -EINVAL if the buffers are too small; -EACCES if an lkey
 * does not grant local write over the range.
 */
int rnic_copy_to_sges(struct rnic_qp *qp, const struct rnic_wqe_sge *sge,
		      u32 num_sge, u32 offset, const void *src, u32 len)
{
	u32 i, n;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		struct rnic_mr *mr;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = min(sge[i].length - offset, len);
		mr = rnic_mr_get(qp->rdev, qp->ibqp.pd, sge[i].lkey,
				 IB_ACCESS_LOCAL_WRITE, sge[i].addr + offset, n);
		if (!mr)
			return -EACCES;
		err = rnic_mr_copy_to(mr, sge[i].addr + offset, src, n);
		rnic_mr_put(mr);
		if (err)
			return -EACCES;
		src += n;
		len -= n;
		offset = 0;
	}
	return len ? -EINVAL : 0;
}

/**
 * rnic_qp_fatal() - move a QP to the error state from any context
 * @qp: the QP
 * @event: the asynchronous event to report
 *
 * rnic_qp_error() takes the QP's state mutex, so the transition runs on
 * the RoCE workqueue; until then the engines see comp.fatal and stop.
 * Caller holds qp->sq_lock.
 */
void rnic_qp_fatal(struct rnic_qp *qp, enum ib_event_type event)
{
	if (qp->comp.fatal)
		return;
	qp->comp.fatal = true;
	qp->comp.fatal_event = event;
	timer_delete(&qp->retrans_timer);
	timer_delete(&qp->rnr_timer);
	queue_work(rnic_roce_wq(qp->rdev), &qp->send_work);
}

/*
 * A receive the responder had taken for a SEND in progress is its own to
 * complete when the QP goes to error (rnic_qp_error() flushes the rest).
 */
static void rnic_resp_flush(struct rnic_qp *qp)
{
	struct rnic_recv_wqe *wqe;
	struct ib_wc wc = {};

	spin_lock_bh(&qp->resp_lock);
	wqe = qp->resp.wqe;
	qp->resp.wqe = NULL;
	qp->resp.write_left = 0;
	if (wqe) {
		wc.wr_id = wqe->wr_id;
		wc.status = IB_WC_WR_FLUSH_ERR;
		wc.opcode = IB_WC_RECV;
		wc.qp = &qp->ibqp;
		rnic_cq_post(qp->rcq, &wc, false);
	}
	spin_unlock_bh(&qp->resp_lock);
}

static void rnic_qp_send_work(struct work_struct *work)
{
	struct rnic_qp *qp = container_of(work, struct rnic_qp, send_work);
	enum ib_event_type event;
	bool fatal;

	spin_lock_bh(&qp->sq_lock);
	fatal = qp->comp.fatal && qp->state != IB_QPS_ERR;
	event = qp->comp.fatal_event;
	spin_unlock_bh(&qp->sq_lock);
	if (fatal) {
		rnic_qp_error(qp, event);
		rnic_resp_flush(qp);
		return;
	}
	if (qp->type == IB_QPT_RC)
		rnic_rc_req_run(qp);
	else
		rnic_ud_send(qp);
}

/* The responder's resources, then room for the receive WQE in progress */
struct rnic_resp_wqe {
	struct rnic_recv_wqe wqe;
	struct rnic_wqe_sge sge[RNIC_IB_MAX_SGE];
};

/**
 * rnic_qp_transport_init() - set up a new QP's transport state
 * @qp: the QP, before it is visible to rnic_qp_get()
 *
 * Return: 0 or -ENOMEM.
 */
int rnic_qp_transport_init(struct rnic_qp *qp)
{
	size_t sz = RNIC_RESP_RES * sizeof(struct rnic_resp_res) +
		    sizeof(struct rnic_resp_wqe);

	qp->resp.res = kzalloc(sz, GFP_KERNEL);
	if (!qp->resp.res)
		return -ENOMEM;
	timer_setup(&qp->retrans_timer, rnic_rc_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, rnic_rc_rnr_timer, 0);
	INIT_WORK(&qp->send_work, rnic_qp_send_work);
	return 0;
}

void rnic_qp_transport_destroy(struct rnic_qp *qp)
{
	timer_shutdown_sync(&qp->retrans_timer);
	timer_shutdown_sync(&qp->rnr_timer);
	cancel_work_sync(&qp->send_work);
	kfree(qp->resp.res);
	qp->resp.res = NULL;
}

/* Storage for the receive WQE a multi-packet SEND is filling */
struct rnic_recv_wqe *rnic_resp_wqe_store(struct rnic_qp *qp)
{
	struct rnic_resp_wqe *w = (void *)(qp->resp.res + RNIC_RESP_RES);

	w->wqe.sge = w->sge;
	return &w->wqe;
}

static void rnic_qp_reset_transport(struct rnic_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	qp->resp.psn = 0;
	qp->resp.msn = 0;
	qp->resp.ack_psn = 0;
	qp->resp.nak_sent = false;
	qp->resp.unacked = 0;
	qp->resp.wqe = NULL;
	qp->resp.offset = 0;
	qp->resp.write_left = 0;
	qp->resp.res_head = 0;
	memset(qp->resp.res, 0, RNIC_RESP_RES * sizeof(*qp->resp.res));
}

/**
 * rnic_qp_state_changed() - modify_qp moved the QP from @old to @new
 * @qp: the QP, with state_lock held
 * @old: previous state
 * @new: new state
 *
 * RTR arms the responder at rq_psn and fixes the flow's UDP source
 * port; RTS starts the requester at sq_psn; RESET and ERR stop the
 * timers (ERR's flush is the verbs layer's).
 */
void rnic_qp_state_changed(struct rnic_qp *qp, enum ib_qp_state old,
			   enum ib_qp_state new)
{
	switch (new) {
	case IB_QPS_RESET:
		timer_delete_sync(&qp->retrans_timer);
		timer_delete_sync(&qp->rnr_timer);
		spin_lock_bh(&qp->resp_lock);
		spin_lock(&qp->sq_lock);
		rnic_qp_reset_transport(qp);
		spin_unlock(&qp->sq_lock);
		spin_unlock_bh(&qp->resp_lock);
		break;
	case IB_QPS_RTR:
		if (old == IB_QPS_RTR)
			break;
		spin_lock_bh(&qp->resp_lock);
		qp->resp.psn = qp->rq_psn & RNIC_PSN_MASK;
		qp->resp.ack_psn = rnic_psn_add(qp->resp.psn, RNIC_PSN_MASK);
		qp->resp.msn = 0;
		qp->resp.nak_sent = false;
		qp->resp.wqe = NULL;
		spin_unlock_bh(&qp->resp_lock);
		qp->udp_sport = rnic_udp_sport(qp->av.flow_label, qp->qpn,
					       qp->dest_qpn);
		break;
	case IB_QPS_RTS:
		spin_lock_bh(&qp->sq_lock);
		if (old == IB_QPS_RTR) {
			qp->req.psn = qp->sq_psn & RNIC_PSN_MASK;
			qp->req.wqe_idx = qp->sq.tail;
			qp->req.rd_atomic_inflight = 0;
			qp->comp.psn = qp->req.psn;
			qp->comp.rnr_wait = false;
		}
		qp->comp.retry_left = qp->retry_cnt;
		qp->comp.rnr_retry_left = qp->rnr_retry;
		spin_unlock_bh(&qp->sq_lock);
		if (qp->type != IB_QPT_RC)
			qp->udp_sport = rnic_udp_sport(0, qp->qpn, qp->qpn);
		rnic_qp_kick_sq(qp);
		break;
	case IB_QPS_ERR:
		timer_delete(&qp->retrans_timer);
		timer_delete(&qp->rnr_timer);
		rnic_resp_flush(qp);
		break;
	default:
		break;
	}
}

void rnic_qp_kick_sq(struct rnic_qp *qp)
{
	struct rnic_dev *rdev = qp->rdev;

	if (rdev->roce)
		queue_work(rnic_roce_wq(rdev), &qp->send_work);
}

/*
 * A requester that got an RNR NAK retries on its own timer (IBA 9.7.5.2.8);
 * nothing is waiting on this side.
 */
void rnic_qp_kick_rq(struct rnic_qp *qp)
{
}
