// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model, ABI 2.0 UD and GSI transport: one packet per
 * message, addressed through the AH table, with a DETH. A bad send WQE
 * fails alone and the QP goes on; a receive that does not fit its WQE is
 * dropped without consuming it, so a remote sender cannot kill QP1 or eat
 * its buffers (hardware-abi2.rst, "UD never enters SQE").
 */
#include <errno.h>
#include <string.h>

#include "dev_v2.h"

#define IPV4_HLEN	20

static void put_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Read and check AH table entry @ah for @qp; 0 or -EINVAL (BAD_AH). */
static int ah_read(struct rdev *d, struct v2_qp *qp, u32 ah,
		   struct rnic_hdr_tmpl *t)
{
	struct v2_dev *v = d->v2;
	u64 gpa;

	if (!v->ah_pages || !ah || ah >= v->ah_entries)
		return -EINVAL;
	gpa = v->ah_pages[ah / RNIC_AH_PER_PAGE] +
	      (u64)(ah % RNIC_AH_PER_PAGE) * RNIC_TMPL_SIZE;
	if (plat_dma_read(d->p, gpa, t, sizeof(*t))) {
		RDEV_INC(d, dma_errors);
		return -EINVAL;
	}
	/* The driver writes VALID last: nothing before it is trusted. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (v2_tmpl_check(d, t, true) || le32_to_cpu(t->pdn) != qp->pd->pdn)
		return -EINVAL;
	return 0;
}

/* The largest IB MTU a UD packet of this template can carry. */
static u32 ud_pmtu(struct rdev *d, const struct rnic_hdr_tmpl *t)
{
	u32 room = v2_tmpl_max_payload(d, t, V2_DETH_LEN + V2_IMM_LEN);
	unsigned int m;

	for (m = RNIC_PMTU_4096; m >= RNIC_PMTU_256; m--)
		if (rnic_pmtu_bytes(m) <= room)
			return rnic_pmtu_bytes(m);
	return 0;
}

/* A send WQE fails alone: error CQE, the QP stays in RTS. */
static bool send_fail(struct rdev *d, struct v2_qp *qp,
		      const struct v2_swqe *w, u8 status, u8 syndrome)
{
	v2_sq_complete(d, qp, w->idx, w->opcode, status, syndrome, 0, true);
	return qp->sq_next != qp->sq_pi;
}

bool v2_ud_send_step(struct rdev *d, struct v2_qp *qp)
{
	u8 hdrs[V2_BTH_LEN + V2_DETH_LEN + V2_IMM_LEN];
	u8 payload[4096];
	struct rnic_hdr_tmpl t;
	struct v2_swqe w;
	u32 qkey, pmtu;
	size_t hlen;
	u16 pkey;
	u8 syn;
	int rc;

	if (qp->state != RNIC_QPS_RTS || qp->sq_next == qp->sq_pi)
		return false;
	syn = v2_sq_fetch(d, qp, qp->sq_next, &w);
	if (syn == RNIC_ERR_DMA_OOB) {
		v2_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, RNIC_ERR_DMA_OOB,
			    v2_ring_addr(&qp->sq, qp->sq_next));
		return false;
	}
	if (syn) {
		V2_INC(d, wqe_errors);
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, syn);
	}
	if (ah_read(d, qp, le32_to_cpu(w.seg.ud.ah), &t))
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR,
				 RNIC_ERR_BAD_AH);
	pmtu = ud_pmtu(d, &t);
	if (w.length > pmtu)
		return send_fail(d, qp, &w, RNIC_WC_LOC_LEN_ERR,
				 RNIC_ERR_MSG_TOO_LONG);
	pkey = d->v2->pkey[qp->type == RNIC_QPT_GSI ?
			   le16_to_cpu(w.seg.ud.pkey_index) : qp->pkey_index];
	if (!pkey)
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR,
				 RNIC_ERR_BAD_WQE);
	if (w.flags & RNIC_SQE_F_INLINE) {
		memcpy(payload, w.inl, w.length);
	} else {
		syn = v2_sgl_read(d, w.sge, w.num_sge, qp->pd, 0, payload,
				  w.length);
		if (syn == RNIC_ERR_DMA_OOB) {
			v2_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, 0);
			return false;
		}
		if (syn)
			return send_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
	}
	qkey = le32_to_cpu(w.seg.ud.remote_qkey);
	if (qkey & RNIC_QKEY_F_CONTROLLED)
		qkey = qp->qkey;	/* the QP's own, maybe controlled */
	v2_bth_build(hdrs, w.opcode == RNIC_SQE_OP_SEND_IMM ?
		     V2_OP_UD_SEND_ONLY_IMM : V2_OP_UD_SEND_ONLY,
		     w.flags & RNIC_SQE_F_SOLICITED, pkey,
		     le32_to_cpu(w.seg.ud.remote_qpn), false, qp->sq_psn);
	put_be32(hdrs + V2_BTH_LEN, qkey);
	put_be32(hdrs + V2_BTH_LEN + 4, qp->qpn & RNIC_BTH_QPN);
	hlen = V2_BTH_LEN + V2_DETH_LEN;
	if (w.opcode == RNIC_SQE_OP_SEND_IMM) {
		memcpy(hdrs + hlen, &w.imm, 4);
		hlen += V2_IMM_LEN;
	}
	rc = v2_tx_packet(d, qp, &t, hdrs, hlen, payload, w.length);
	if (rc == -EAGAIN) {
		/* Paused by PFC: the WQE is started again on resume. */
		qp->pfc_wait = true;
		return false;
	}
	if (rc)
		return send_fail(d, qp, &w, RNIC_WC_LOC_LEN_ERR,
				 RNIC_ERR_MSG_TOO_LONG);
	qp->sq_psn = (qp->sq_psn + 1) & RNIC_BTH_PSN;
	V2_INC(d, ud_send_packets);
	v2_sq_complete(d, qp, w.idx, w.opcode, RNIC_WC_SUCCESS, 0, w.length,
		       w.flags & RNIC_SQE_F_SIGNALED);
	return qp->sq_next != qp->sq_pi;
}

/* The 40 bytes that precede a UD payload in the receive buffer */
static void ud_grh(const struct v2_pkt *pkt, u8 *grh)
{
	const u8 *l3 = pkt->frame + pkt->l3_off;

	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		memset(grh, 0, V2_UD_GRH_LEN - IPV4_HLEN);
		memcpy(grh + V2_UD_GRH_LEN - IPV4_HLEN, l3, IPV4_HLEN);
	} else {
		memcpy(grh, l3, V2_UD_GRH_LEN);
	}
}

static void recv_fail(struct rdev *d, struct v2_qp *qp,
		      const struct v2_rwqe *w, u8 status, u8 syndrome)
{
	struct rnic_rdma_cqe cqe = {};

	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.status = status;
	cqe.syndrome = syndrome;
	v2_rq_complete(d, qp, w, &cqe, false);
}

void v2_ud_recv(struct rdev *d, struct v2_qp *qp, struct v2_pkt *pkt)
{
	struct v2_pd *pd = qp->srq ? qp->srq->pd : qp->pd;
	struct rnic_rdma_cqe cqe = {};
	u8 grh[V2_UD_GRH_LEN];
	struct v2_rwqe w;
	u64 info = 0;
	u8 syn = 0;
	int rc;

	if (qp->state == RNIC_QPS_ERR)
		return;
	rc = v2_rwqe_peek(d, qp, &w, &syn, &info);
	if (rc == -ENOENT) {
		V2_INC(d, rx_drop_no_recv_wqe);
		return;
	}
	if (rc < 0) {
		v2_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, info);
		return;
	}
	if (rc > 0) {
		V2_INC(d, wqe_errors);
		v2_rwqe_take(d, qp, &w);
		recv_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, rc);
		return;
	}
	if ((u64)pkt->paylen + V2_UD_GRH_LEN > w.total) {
		/* The WQE stays posted for a message that fits. */
		V2_INC(d, rx_drop_too_long);
		return;
	}
	v2_rwqe_take(d, qp, &w);
	ud_grh(pkt, grh);
	syn = v2_sgl_write(d, w.sge, w.num_sge, pd, 0, grh, sizeof(grh));
	if (!syn)
		syn = v2_sgl_write(d, w.sge, w.num_sge, pd, V2_UD_GRH_LEN,
				   pkt->payload, pkt->paylen);
	if (syn == RNIC_ERR_DMA_OOB) {
		recv_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
		v2_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, 0);
		return;
	}
	if (syn) {
		recv_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
		return;
	}
	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.flags = RNIC_RCQE_F_GRH;
	if (pkt->opcode == V2_OP_UD_SEND_ONLY_IMM) {
		cqe.flags |= RNIC_RCQE_F_IMM;
		cqe.imm_data = pkt->imm;
	}
	if (pkt->vlan) {
		cqe.flags |= RNIC_RCQE_F_VLAN;
		cqe.vlan_tci = cpu_to_le16(pkt->vlan_tci);
	}
	cqe.pkey_index = cpu_to_le16(pkt->pkey_index);
	cqe.byte_len = cpu_to_le32(pkt->paylen);
	cqe.src = cpu_to_le32(FIELD_PREP(RNIC_RCQE_SRC_QP, pkt->sqpn) |
			      FIELD_PREP(RNIC_RCQE_NET, pkt->net));
	memcpy(cqe.smac, pkt->smac, sizeof(cqe.smac));
	V2_INC(d, ud_recv_packets);
	v2_rq_complete(d, qp, &w, &cqe, pkt->se);
}
