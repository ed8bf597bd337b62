// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, UD and GSI transport: one packet per
 * message, addressed through the AH table, with a DETH. A bad send WQE
 * fails alone and the QP goes on; a receive that does not fit its WQE is
 * dropped without consuming it, so a remote sender cannot kill QP1 or eat
 * its buffers (hardware-rdma.rst, "UD never enters SQE").
 */
#include <errno.h>
#include <string.h>

#include "rdma/rdma.h"

#define IPV4_HLEN	20

static void put_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* Read and check AH table entry @ah for @qp; 0 or -EINVAL (BAD_AH). */
static int ah_read(struct rdev *d, struct rdma_qp *qp, u32 ah,
		   struct rnic_hdr_tmpl *t)
{
	struct rdma_dev *v = d->rdma;
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
	if (rdma_tmpl_check(d, t, true) || le32_to_cpu(t->pdn) != qp->pd->pdn)
		return -EINVAL;
	return 0;
}

/* The largest IB MTU a UD packet of this template can carry. */
static u32 ud_pmtu(struct rdev *d, const struct rnic_hdr_tmpl *t)
{
	u32 room = rdma_tmpl_max_payload(d, t, RDMA_DETH_LEN + RDMA_IMM_LEN);
	unsigned int m;

	for (m = RNIC_PMTU_4096; m >= RNIC_PMTU_256; m--)
		if (rnic_pmtu_bytes(m) <= room)
			return rnic_pmtu_bytes(m);
	return 0;
}

/* A send WQE fails alone: error CQE, the QP stays in RTS. */
static bool send_fail(struct rdev *d, struct rdma_qp *qp,
		      const struct rdma_swqe *w, u8 status, u8 syndrome)
{
	rdma_sq_complete(d, qp, w->idx, w->opcode, status, syndrome, 0, true);
	return qp->sq_next != qp->sq_pi;
}

bool rdma_ud_send_step(struct rdev *d, struct rdma_qp *qp)
{
	u8 hdrs[RDMA_BTH_LEN + RDMA_DETH_LEN + RDMA_IMM_LEN];
	u8 payload[4096];
	struct rnic_hdr_tmpl t;
	struct rdma_swqe w;
	u32 qkey, pmtu;
	size_t hlen;
	u16 pkey;
	u8 syn;
	int rc;

	if (qp->state != RNIC_QPS_RTS || qp->sq_next == qp->sq_pi)
		return false;
	syn = rdma_sq_fetch(d, qp, qp->sq_next, &w);
	if (syn == RNIC_ERR_DMA_OOB) {
		rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, RNIC_ERR_DMA_OOB,
			    rdma_ring_addr(&qp->sq, qp->sq_next));
		return false;
	}
	if (syn) {
		RDMA_INC(d, wqe_errors);
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, syn);
	}
	if (ah_read(d, qp, le32_to_cpu(w.seg.ud.ah), &t))
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR,
				 RNIC_ERR_BAD_AH);
	pmtu = ud_pmtu(d, &t);
	if (w.length > pmtu)
		return send_fail(d, qp, &w, RNIC_WC_LOC_LEN_ERR,
				 RNIC_ERR_MSG_TOO_LONG);
	pkey = d->rdma->pkey[qp->type == RNIC_QPT_GSI ?
			   le16_to_cpu(w.seg.ud.pkey_index) : qp->pkey_index];
	if (!pkey)
		return send_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR,
				 RNIC_ERR_BAD_WQE);
	if (w.flags & RNIC_SQE_F_INLINE) {
		memcpy(payload, w.inl, w.length);
	} else {
		syn = rdma_sgl_read(d, w.sge, w.num_sge, qp->pd, 0, payload,
				  w.length);
		if (syn == RNIC_ERR_DMA_OOB) {
			rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, 0);
			return false;
		}
		if (syn)
			return send_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
	}
	qkey = le32_to_cpu(w.seg.ud.remote_qkey);
	if (qkey & RNIC_QKEY_F_CONTROLLED)
		qkey = qp->qkey;	/* the QP's own, maybe controlled */
	rdma_bth_build(hdrs, w.opcode == RNIC_SQE_OP_SEND_IMM ?
		     RDMA_OP_UD_SEND_ONLY_IMM : RDMA_OP_UD_SEND_ONLY,
		     w.flags & RNIC_SQE_F_SOLICITED, pkey,
		     le32_to_cpu(w.seg.ud.remote_qpn), false, qp->sq_psn);
	put_be32(hdrs + RDMA_BTH_LEN, qkey);
	put_be32(hdrs + RDMA_BTH_LEN + 4, qp->qpn & RNIC_BTH_QPN);
	hlen = RDMA_BTH_LEN + RDMA_DETH_LEN;
	if (w.opcode == RNIC_SQE_OP_SEND_IMM) {
		memcpy(hdrs + hlen, &w.imm, 4);
		hlen += RDMA_IMM_LEN;
	}
	rc = rdma_tx_packet(d, qp, &t, hdrs, hlen, payload, w.length);
	if (rc == -EAGAIN) {
		/* Paused by PFC: the WQE is started again on resume. */
		qp->pfc_wait = true;
		return false;
	}
	if (rc)
		return send_fail(d, qp, &w, RNIC_WC_LOC_LEN_ERR,
				 RNIC_ERR_MSG_TOO_LONG);
	qp->sq_psn = (qp->sq_psn + 1) & RNIC_BTH_PSN;
	RDMA_INC(d, ud_send_packets);
	rdma_sq_complete(d, qp, w.idx, w.opcode, RNIC_WC_SUCCESS, 0, w.length,
		       w.flags & RNIC_SQE_F_SIGNALED);
	return qp->sq_next != qp->sq_pi;
}

/* The 40 bytes that precede a UD payload in the receive buffer */
static void ud_grh(const struct rdma_pkt *pkt, u8 *grh)
{
	const u8 *l3 = pkt->frame + pkt->l3_off;

	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		memset(grh, 0, RDMA_UD_GRH_LEN - IPV4_HLEN);
		memcpy(grh + RDMA_UD_GRH_LEN - IPV4_HLEN, l3, IPV4_HLEN);
	} else {
		memcpy(grh, l3, RDMA_UD_GRH_LEN);
	}
}

static void recv_fail(struct rdev *d, struct rdma_qp *qp,
		      const struct rdma_rwqe *w, u8 status, u8 syndrome)
{
	struct rnic_rdma_cqe cqe = {};

	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.status = status;
	cqe.syndrome = syndrome;
	rdma_rq_complete(d, qp, w, &cqe, false);
}

void rdma_ud_recv(struct rdev *d, struct rdma_qp *qp, struct rdma_pkt *pkt)
{
	struct rdma_pd *pd = qp->srq ? qp->srq->pd : qp->pd;
	struct rnic_rdma_cqe cqe = {};
	u8 grh[RDMA_UD_GRH_LEN];
	struct rdma_rwqe w;
	u64 info = 0;
	u8 syn = 0;
	int rc;

	if (qp->state == RNIC_QPS_ERR)
		return;
	rc = rdma_rwqe_peek(d, qp, &w, &syn, &info);
	if (rc == -ENOENT) {
		RDMA_INC(d, rx_drop_no_recv_wqe);
		return;
	}
	if (rc < 0) {
		rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, info);
		return;
	}
	if (rc > 0) {
		RDMA_INC(d, wqe_errors);
		rdma_rwqe_take(d, qp, &w);
		recv_fail(d, qp, &w, RNIC_WC_LOC_QP_OP_ERR, rc);
		return;
	}
	if ((u64)pkt->paylen + RDMA_UD_GRH_LEN > w.total) {
		/* The WQE stays posted for a message that fits. */
		RDMA_INC(d, rx_drop_too_long);
		return;
	}
	rdma_rwqe_take(d, qp, &w);
	ud_grh(pkt, grh);
	syn = rdma_sgl_write(d, w.sge, w.num_sge, pd, 0, grh, sizeof(grh));
	if (!syn)
		syn = rdma_sgl_write(d, w.sge, w.num_sge, pd, RDMA_UD_GRH_LEN,
				   pkt->payload, pkt->paylen);
	if (syn == RNIC_ERR_DMA_OOB) {
		recv_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
		rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, syn, 0);
		return;
	}
	if (syn) {
		recv_fail(d, qp, &w, RNIC_WC_LOC_PROT_ERR, syn);
		return;
	}
	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.flags = RNIC_RCQE_F_GRH;
	if (pkt->opcode == RDMA_OP_UD_SEND_ONLY_IMM) {
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
	RDMA_INC(d, ud_recv_packets);
	rdma_rq_complete(d, qp, &w, &cqe, pkt->se);
}
