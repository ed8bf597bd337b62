// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic UD and GSI (QP1) transport: one packet per work request, DETH with
 * the Q_Key; a send completes when the device has put the frame on the
 * wire (UD is unreliable: there is nothing else to wait for). Receives
 * land in a receive WQE behind the 40 bytes ib_core expects for the GRH
 * (RoCE v1 / IPv6: the GRH or IPv6 header; IPv4: the IPv4 header in the
 * last 20 bytes), so that ib_init_ah_attr_from_wc() can answer: that is
 * what ib_mad and rdma_cm rely on.
 */
#include <linux/if_vlan.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_pack.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

/* Largest UD payload: the port's IB MTU (UD is not segmented) */
static u32 rnic_ud_mtu(struct rnic_qp *qp)
{
	unsigned int mtu = READ_ONCE(qp->rdev->netdev->mtu);

	return ib_mtu_enum_to_int(iboe_get_mtu(mtu)) ?: 256;
}

/* Build and post the frame of @wqe; Return: 0 or rnic_roce_xmit()'s errno */
static int rnic_ud_xmit(struct rnic_qp *qp, struct rnic_send_wqe *wqe, u32 idx)
{
	struct rnic_xmit x = {};
	struct rnic_pkt *pkt = &x.pkt;
	u32 qkey = wqe->ud.remote_qkey;

	rnic_roce_pkt_init(qp->rdev, pkt, &wqe->ud.av,
			   rnic_udp_sport(wqe->ud.av.flow_label, qp->qpn,
					  wqe->ud.remote_qpn));
	pkt->opcode = wqe->opcode == IB_WR_SEND_WITH_IMM ?
		      IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
		      IB_OPCODE_UD_SEND_ONLY;
	pkt->se = wqe->send_flags & IB_SEND_SOLICITED;
	pkt->dqpn = wqe->ud.remote_qpn;
	pkt->psn = qp->req.psn;
	/* IBA 10.2.5: a Q_Key with the high bit set means "use the QP's" */
	if (qkey & BIT(31))
		qkey = qp->qkey;
	pkt->qkey = qkey;
	pkt->sqpn = qp->type == IB_QPT_GSI ? 1 : qp->qpn;
	pkt->imm = wqe->ex.imm;

	x.len = wqe->length;
	if (wqe->send_flags & IB_SEND_INLINE) {
		x.kbuf = wqe->inline_data;
	} else {
		x.pd = qp->ibqp.pd;
		x.sge = wqe->sge;
		x.num_sge = wqe->num_sge;
	}
	x.qp = qp;
	x.wqe_idx = idx;
	return rnic_roce_xmit(qp->rdev, &x);
}

static enum ib_wc_status rnic_ud_check(struct rnic_qp *qp,
				       const struct rnic_send_wqe *wqe)
{
	if (wqe->opcode != IB_WR_SEND && wqe->opcode != IB_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->length > rnic_ud_mtu(qp))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/**
 * rnic_ud_send() - send every posted WQE of a UD or GSI QP
 * @qp: the QP
 *
 * Context: the QP's send work (process context).
 */
void rnic_ud_send(struct rnic_qp *qp)
{
	struct rnic_send_wqe *wqe;
	enum ib_wc_status status;
	u32 idx;
	int err;

	spin_lock_bh(&qp->sq_lock);
	for (;;) {
		if (qp->state != IB_QPS_RTS || qp->comp.fatal ||
		    qp->req.wqe_idx == qp->sq.head)
			break;
		idx = qp->req.wqe_idx;
		wqe = rnic_sq_wqe(qp, idx);
		if (wqe->state != RNIC_WQE_POSTED) {
			qp->req.wqe_idx++;
			continue;
		}
		status = rnic_ud_check(qp, wqe);
		if (status != IB_WC_SUCCESS) {
			qp->req.wqe_idx++;
			rnic_sq_fail(qp, wqe, status);
			break;
		}
		/* the TX completion may run before rnic_roce_xmit() returns */
		wqe->state = RNIC_WQE_SENT;
		err = rnic_ud_xmit(qp, wqe, idx);
		if (err == -EBUSY) {
			wqe->state = RNIC_WQE_POSTED;
			spin_unlock_bh(&qp->sq_lock);
			if (rnic_roce_wait_tx(qp->rdev) == -EIO)
				return;
			spin_lock_bh(&qp->sq_lock);
			continue;
		}
		qp->req.wqe_idx++;
		if (err) {
			rnic_sq_fail(qp, wqe, err == -EACCES ?
				     IB_WC_LOC_PROT_ERR : IB_WC_LOC_QP_OP_ERR);
			break;
		}
		qp->req.psn = rnic_psn_add(qp->req.psn, 1);
		rnic_roce_stat_inc(qp->rdev, RNIC_ROCE_STAT_ud_sends);
	}
	spin_unlock_bh(&qp->sq_lock);
}

/* The 40 bytes in front of a UD receive: GRH, IPv6 header, or IPv4's */
static void rnic_ud_grh(const struct rnic_pkt *pkt, const u8 *frame, u8 *grh)
{
	if (pkt->net == RNIC_NET_ROCE_V2_IPV4) {
		memset(grh, 0, RNIC_GRH_LEN - RNIC_IPV4_LEN);
		memcpy(grh + RNIC_GRH_LEN - RNIC_IPV4_LEN, frame + pkt->l3_off,
		       RNIC_IPV4_LEN);
	} else {
		memcpy(grh, frame + pkt->l3_off, RNIC_GRH_LEN);
	}
}

static enum rdma_network_type rnic_ud_net_type(enum rnic_net_type net)
{
	switch (net) {
	case RNIC_NET_ROCE_V2_IPV4:
		return RDMA_NETWORK_IPV4;
	case RNIC_NET_ROCE_V2_IPV6:
		return RDMA_NETWORK_IPV6;
	default:
		return RDMA_NETWORK_ROCE_V1;
	}
}

/**
 * rnic_ud_recv() - deliver a UD SEND to a UD or GSI QP
 * @qp: the destination QP
 * @pkt: the parsed frame
 * @frame: the frame
 * @vlan_tci: the frame's 802.1Q TCI (stripped by the device or not)
 * @vlan: whether the frame was tagged
 *
 * Context: RoCE NAPI. Frames that cannot be delivered (wrong state or
 * Q_Key, no receive WQE) are dropped and counted: UD has no RNR.
 */
void rnic_ud_recv(struct rnic_qp *qp, const struct rnic_pkt *pkt,
		  const u8 *frame, u16 vlan_tci, bool vlan)
{
	struct rnic_dev *rdev = qp->rdev;
	struct rnic_wqe_sge sge[RNIC_IB_MAX_SGE];
	struct rnic_recv_wqe wqe;
	u8 grh[RNIC_GRH_LEN];
	struct ib_wc wc = {};
	u32 expect_qkey;
	int err;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		break;
	default:
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_qp_state);
		return;
	}
	expect_qkey = qp->type == IB_QPT_GSI ? RNIC_GSI_QKEY : qp->qkey;
	if (pkt->qkey != expect_qkey) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_bad_qkey);
		return;
	}
	if (pkt->payload_len > rnic_ud_mtu(qp)) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_too_long);
		return;
	}

	spin_lock(&qp->resp_lock);
	if (!rnic_rq_pop(qp, &wqe, sge)) {
		spin_unlock(&qp->resp_lock);
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_no_recv_wqe);
		return;
	}
	wc.wr_id = wqe.wr_id;
	wc.qp = &qp->ibqp;
	wc.opcode = IB_WC_RECV;
	wc.port_num = RNIC_IB_PORT;
	if (wqe.num_sge > RNIC_IB_MAX_SGE ||
	    RNIC_GRH_LEN + pkt->payload_len > wqe.length) {
		wc.status = IB_WC_LOC_LEN_ERR;
		goto post;
	}
	rnic_ud_grh(pkt, frame, grh);
	err = rnic_copy_to_sges(qp, sge, wqe.num_sge, 0, grh, RNIC_GRH_LEN);
	if (!err)
		err = rnic_copy_to_sges(qp, sge, wqe.num_sge, RNIC_GRH_LEN,
					frame + pkt->payload_off,
					pkt->payload_len);
	if (err) {
		wc.status = err == -EACCES ? IB_WC_LOC_PROT_ERR :
					     IB_WC_LOC_LEN_ERR;
		goto post;
	}

	wc.status = IB_WC_SUCCESS;
	wc.byte_len = RNIC_GRH_LEN + pkt->payload_len;
	wc.src_qp = pkt->sqpn;
	wc.pkey_index = 0;
	wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC;
	wc.network_hdr_type = rnic_ud_net_type(pkt->net);
	ether_addr_copy(wc.smac, pkt->smac);
	if (vlan && (vlan_tci & VLAN_VID_MASK)) {
		wc.vlan_id = vlan_tci & VLAN_VID_MASK;
		wc.wc_flags |= IB_WC_WITH_VLAN;
	}
	wc.sl = vlan ? FIELD_GET(RNIC_VLAN_TCI_PCP, vlan_tci) : 0;
	if (pkt->opcode == IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE) {
		wc.ex.imm_data = pkt->imm;
		wc.wc_flags |= IB_WC_WITH_IMM;
	}
	rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_ud_recvs);
post:
	rnic_cq_post(qp->rcq, &wc, pkt->se);
	spin_unlock(&qp->resp_lock);
}
