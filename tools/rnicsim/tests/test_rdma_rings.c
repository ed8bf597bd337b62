// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 device model: rings given as page lists (how a ring in user
 * memory reaches the device), a QP on a user doorbell page, and two RC
 * events the device passes on from the engine: SEND_INV and COMM_EST.
 */
#include <string.h>

#include "test.h"
#include "fake_rdma.h"

#define QKEY	0x7777

/*
 * Two pages, given to the device in reverse order: ring byte @off is at
 * the second page for the first 4 KiB, the first page after.
 */
struct rev_pages {
	u64 base;	/* two contiguous pages */
	u64 pbl;	/* { base + 4096, base } */
};

static void rev_pages_alloc(struct rdrv *x, struct rev_pages *r)
{
	__le64 *l;

	r->base = rdrv_alloc(x, 8192, 4096);
	r->pbl = rdrv_alloc(x, 16, 8);
	l = rdrv_ram(x, r->pbl);
	l[0] = cpu_to_le64(r->base + 4096);
	l[1] = cpu_to_le64(r->base);
}

static void *rev_pages_at(struct rdrv *x, const struct rev_pages *r, u64 off)
{
	return rdrv_ram(x, off < 4096 ? r->base + 4096 + off :
				      r->base + off - 4096);
}

static struct rnic_data_sge sge(u64 addr, u32 len, u32 key)
{
	struct rnic_data_sge s = {
		.addr = cpu_to_le64(addr),
		.len = cpu_to_le32(len),
		.lkey = cpu_to_le32(key),
	};

	return s;
}

static bool cq_poll_rev(struct rdrv *x, const struct rev_pages *r, struct rdrv_cq *cq,
			struct rnic_rdma_cqe *cqe)
{
	struct rnic_rdma_cqe *p = rev_pages_at(x, r, (u64)(cq->ci & 255) * 32);

	if (rnic_rdma_cqe_phase(p) != rnic_ring_phase(cq->ci, 8))
		return false;
	*cqe = *p;
	cq->ci++;
	rdrv_slot_write(x, x->dbp, cq->db_off, rnic_db_rdma_cq(cq->ci, false,
							     false, 0));
	return true;
}

TEST(rdma_pbl_rings_ud)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_rdma_cq cc = {};
	struct rnic_aq_create_qp qc = {};
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	union rnic_aq_resp r;
	struct rev_pages sq, rq, cqr;
	struct rdrv_cq cq = {};
	struct rdrv_qp qp = {};
	u64 buf = rdrv_alloc(x, 65536, 4096);
	unsigned int i, got = 0;

	rev_pages_alloc(x, &sq);
	rev_pages_alloc(x, &rq);
	rev_pages_alloc(x, &cqr);
	/* A CQ of 256 CQEs over two pages */
	cc.hdr.opcode = RNIC_AQ_CREATE_RDMA_CQ;
	cc.ring_addr = cpu_to_le64(cqr.pbl);
	cc.eqn = cpu_to_le32(x->eqn);
	cc.db_page = cpu_to_le32(x->dbp);
	cc.log2_depth = 8;
	cc.page_log2 = 12;
	cc.flags = RNIC_RING_F_PBL;
	REQUIRE(rdrv_cmd(x, &cc, &r) == RNIC_AQ_SUCCESS);
	cq.cqn = le32_to_cpu(r.create_cq.cqn);
	cq.db_off = le16_to_cpu(r.create_cq.db_off);
	cq.log2 = 8;
	/* A UD QP: SQ 64 x 128 B and RQ 128 x 64 B, two pages each */
	qc.hdr.opcode = RNIC_AQ_CREATE_QP;
	qc.type = RNIC_QPT_UD;
	qc.flags = RNIC_QP_F_SQ_PBL | RNIC_QP_F_RQ_PBL;
	qc.pdn = cpu_to_le32(x->pdn);
	qc.send_cqn = qc.recv_cqn = cpu_to_le32(cq.cqn);
	qc.db_page = cpu_to_le32(x->dbp);
	qc.sq_addr = cpu_to_le64(sq.pbl);
	qc.rq_addr = cpu_to_le64(rq.pbl);
	qc.sq_log2_depth = 6;
	qc.sqe_log2 = 7;
	qc.sq_page_log2 = 12;
	qc.rq_log2_depth = 7;
	qc.rqe_log2 = 6;
	qc.rq_page_log2 = 12;
	REQUIRE(rdrv_cmd(x, &qc, &r) == RNIC_AQ_SUCCESS);
	qp.qpn = le32_to_cpu(r.create_qp.qpn);
	qp.sq_off = le16_to_cpu(r.create_qp.sq_db_off);
	qp.rq_off = le16_to_cpu(r.create_qp.rq_db_off);
	REQUIRE(rdrv_ud_up(x, &qp, QKEY) == RNIC_AQ_SUCCESS);
	rdrv_tmpl(x, x, RNIC_RX_CLASS_ROCE_V2_IPV6, 0, &t);
	rdrv_ah_set(x, 1, x->pdn, &t);

	/* 40 messages to itself: both pages of every ring get used */
	for (i = 0; i < 40; i++) {
		struct rnic_rqe *rqe = rev_pages_at(x, &rq, (u64)i * 64);
		u8 *wqe = rev_pages_at(x, &sq, (u64)i * 128);

		memset(rqe, 0, 64);
		rqe->num_sge = 1;
		rqe->sge[0] = sge(buf + 1024 * i, 1024, x->dma_key);
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED |
			  RNIC_SQE_F_INLINE, 1, qp.qpn, QKEY, 0, 8, 0);
		memset(wqe + 48, 'a' + i % 26, 8);
	}
	for (i = 0; i < 40; i += 20) {
		rdrv_ring(x, qp.rq_off, i + 20);
		rdrv_ring(x, qp.sq_off, i + 20);
	}
	while (cq_poll_rev(x, &cqr, &cq, &c)) {
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		got++;
	}
	CHECK_EQ(got, 80);
	for (i = 0; i < 40; i++)
		CHECK_EQ(((u8 *)rdrv_ram(x, buf + 1024 * i))[40 + 7],
			 'a' + i % 26);
	rdrv_free(x);
}

TEST(rdma_pbl_srq_and_user_page)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_srq sc = {};
	struct rnic_rdma_cqe c;
	struct rnic_hdr_tmpl t;
	union rnic_aq_resp r;
	struct rev_pages wq, iq;
	struct rdrv_cq cq;
	struct rdrv_qp sender, qp;
	u32 upage, upd, ukey, kernel_page;
	u64 buf = rdrv_alloc(x, 65536, 4096);
	u16 srq_off;
	u32 srqn;
	unsigned int i;
	u8 wqe[64];

	rev_pages_alloc(x, &wq);
	rev_pages_alloc(x, &iq);
	REQUIRE(rdrv_pd_alloc(x, false, &upd) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_mr_pbl(x, upd, RNIC_ACCESS_LOCAL_WRITE, 0x100000, 65536,
			  buf, &ukey) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_cq_create(x, 7, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_alloc_db_page(x, RNIC_DBP_F_USER, &upage) ==
		RNIC_AQ_SUCCESS);
	/*
	 * An SRQ of a user PD, on the user page, both lists as page lists:
	 * 256 slots of 32 bytes (two pages), an index ring of 256 entries
	 * (one page)
	 */
	sc.hdr.opcode = RNIC_AQ_CREATE_SRQ;
	sc.pdn = cpu_to_le32(upd);
	sc.db_page = cpu_to_le32(upage);
	sc.wqe_addr = cpu_to_le64(wq.pbl);
	sc.idx_addr = cpu_to_le64(iq.pbl);
	sc.log2_depth = 8;
	sc.rqe_log2 = 5;
	sc.page_log2 = 12;
	sc.flags = RNIC_SRQ_F_WQE_PBL | RNIC_SRQ_F_IDX_PBL;
	REQUIRE(rdrv_cmd(x, &sc, &r) == RNIC_AQ_SUCCESS);
	srqn = le32_to_cpu(r.create_srq.srqn);
	srq_off = le16_to_cpu(r.create_srq.db_off);
	{
		struct rdrv_srq s = { .srqn = srqn };

		REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, upd, &cq, &cq, &s, 4, 6, 0,
				     0, &qp) == RNIC_AQ_SUCCESS);
	}
	REQUIRE(rdrv_ud_up(x, &qp, QKEY) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &sender) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(x, &sender, QKEY) == RNIC_AQ_SUCCESS);
	rdrv_tmpl(x, x, RNIC_RX_CLASS_ROCE_V1, 0, &t);
	rdrv_ah_set(x, 1, x->pdn, &t);

	/* Post slots 200..209 (in the second WQE page) through the user page */
	for (i = 0; i < 10; i++) {
		struct rnic_rqe *rqe = rev_pages_at(x, &wq, (200 + i) * 32);
		__le16 *e = rev_pages_at(x, &iq, 2 * i);

		memset(rqe, 0, 32);
		rqe->num_sge = 1;
		rqe->sge[0] = sge(0x100000 + 512 * i, 512, ukey);
		*e = cpu_to_le16(200 + i);
	}
	kernel_page = x->dbp;
	x->dbp = upage;
	rdrv_ring(x, srq_off, 10);
	x->dbp = kernel_page;
	for (i = 0; i < 10; i++) {
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, qp.qpn, QKEY, buf + 60000,
			  100, x->dma_key);
		rdrv_post_send(x, &sender, wqe, true);
	}
	for (i = 0; i < 10; i++) {
		REQUIRE(rdrv_cq_poll(x, &cq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		CHECK(c.flags & RNIC_RCQE_F_SRQ);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), 200 + i);
	}
	/* The user page holds only that context's slots */
	{
		struct rnic_aq_obj o = { .hdr.opcode = RNIC_AQ_FREE_DB_PAGE };

		o.handle = cpu_to_le32(upage);
		CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_STATE);
	}
	rdrv_free(x);
}

TEST(rdma_rc_send_inv_and_comm_est)
{
	struct rdrv *a = rdrv_up(1), *b = rdrv_up(2);
	struct twire *w = twire_new(a, b);
	struct rnic_aq_create_mr mc = {};
	struct rnic_aq_query_obj q = {};
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rnic_eqe e;
	union rnic_aq_resp r;
	struct rdrv_cq acq, bcq;
	struct rdrv_qp aqp, bqp;
	struct rnic_sqe *s;
	u64 abuf = rdrv_alloc(a, 8192, 4096), bbuf = rdrv_alloc(b, 8192, 4096);
	u64 pbl = rdrv_alloc(b, 8, 8), qbuf = rdrv_alloc(b, 64, 8);
	struct rnic_mr_query *mq = rdrv_ram(b, qbuf);
	u8 wqe[128];
	u32 frkey;

	REQUIRE(rdrv_cq_create(a, 5, &acq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_cq_create(b, 5, &bcq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(a, RNIC_QPT_RC, a->pdn, &acq, &acq, NULL, 4, 7,
			     4, 5, &aqp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(b, RNIC_QPT_RC, b->pdn, &bcq, &bcq, NULL, 4, 7,
			     4, 5, &bqp) == RNIC_AQ_SUCCESS);
	/* B stops in RTR: its first request posts COMM_EST */
	REQUIRE(rdrv_rc_connect(a, &aqp, b, bqp.qpn,
			      RNIC_RX_CLASS_ROCE_V2_IPV4) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_rc_connect_upto(b, &bqp, a, aqp.qpn,
				   RNIC_RX_CLASS_ROCE_V2_IPV4, RNIC_QPS_RTR) ==
		RNIC_AQ_SUCCESS);

	/*
	 * B: a FAST_REG MR, registered by REG_MR on a second QP of B (the
	 * first stays in RTR, where its SQ is not read)
	 */
	mc.hdr.opcode = RNIC_AQ_CREATE_MR;
	mc.type = RNIC_MRT_FAST_REG;
	mc.pdn = cpu_to_le32(b->pdn);
	mc.npages = cpu_to_le32(1);
	REQUIRE(rdrv_cmd(b, &mc, &r) == RNIC_AQ_SUCCESS);
	frkey = le32_to_cpu(r.id.id);
	*(__le64 *)rdrv_ram(b, pbl) = cpu_to_le64(bbuf + 4096);
	{
		struct rdrv_qp lq;
		struct rdrv_cq lcq;

		REQUIRE(rdrv_cq_create(b, 4, &lcq) == RNIC_AQ_SUCCESS);
		REQUIRE(rdrv_qp_create(b, RNIC_QPT_RC, b->pdn, &lcq, &lcq, NULL,
				     4, 7, 4, 5, &lq) == RNIC_AQ_SUCCESS);
		REQUIRE(rdrv_rc_connect(b, &lq, a, 0x99,
				      RNIC_RX_CLASS_ROCE_V2_IPV4) ==
			RNIC_AQ_SUCCESS);
		s = (void *)wqe;
		memset(wqe, 0, sizeof(wqe));
		s->ctrl.opcode = RNIC_SQE_OP_REG_MR;
		s->ctrl.flags = RNIC_SQE_F_SIGNALED;
		s->ctrl.key = cpu_to_le32(frkey);
		s->seg.reg_mr.iova = cpu_to_le64(0x9000);
		s->seg.reg_mr.length = cpu_to_le64(4096);
		s->seg.reg_mr.pbl_addr = cpu_to_le64(pbl);
		s->seg.reg_mr.npages = cpu_to_le16(1);
		s->seg.reg_mr.page_log2 = 12;
		s->seg.reg_mr.access = RNIC_ACCESS_LOCAL_WRITE |
				       RNIC_ACCESS_REMOTE_WRITE;
		rdrv_post_send(b, &lq, wqe, true);
		REQUIRE(rdrv_cq_poll(b, &lcq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	}

	/* A: SEND_INV of B's key */
	rs = sge(bbuf, 256, b->dma_key);
	rdrv_post_recv(b, &bqp, &rs, 1, true);
	s = (void *)wqe;
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_SEND_INV;
	s->ctrl.flags = RNIC_SQE_F_SIGNALED;
	s->ctrl.length = cpu_to_le32(16);
	s->ctrl.key = cpu_to_le32(frkey);
	s->ctrl.num_sge = 1;
	s->sge[0] = sge(abuf, 16, a->dma_key);
	rdrv_post_send(a, &aqp, wqe, true);
	twire_run(w);
	REQUIRE(rdrv_cq_poll(a, &acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_SEND_INV);
	REQUIRE(rdrv_cq_poll(b, &bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK(c.flags & RNIC_RCQE_F_INV);
	CHECK_EQ(le32_to_cpu(c.inv_key), frkey);
	CHECK_EQ(le32_to_cpu(c.byte_len), 16);
	q.hdr.opcode = RNIC_AQ_QUERY_MR;
	q.buf_addr = cpu_to_le64(qbuf);
	q.buf_len = cpu_to_le32(48);
	q.handle = cpu_to_le32(frkey);
	REQUIRE(rdrv_cmd(b, &q, NULL) == RNIC_AQ_SUCCESS);
	CHECK_EQ(mq->state, RNIC_MRS_INVALID);
	/* COMM_EST: once, for B's QP, while it was in RTR */
	CHECK_EQ(rdrv_eq0_count(b, RNIC_EQE_COMM_EST, &e), 1);
	CHECK_EQ(le32_to_cpu(e.data), bqp.qpn);
	twire_free(w);
	rdrv_free(a);
	rdrv_free(b);
}
