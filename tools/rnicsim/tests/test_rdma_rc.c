// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 device model: RC QPs of two devices, run by the RC engine
 * (rc.h) through the device's rings, MRs, templates, CQs and events.
 * The engine's own behaviour is tested in test_rc.c; these check the
 * wiring: that the device hands the engine what the contract says.
 */
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"
#include "test.h"
#include "fake_rdma.h"

struct rcpair {
	struct rdrv *a, *b;
	struct twire *w;
	struct rdrv_cq acq, bcq;
	struct rdrv_qp aqp, bqp;
	u64 abuf, bbuf;		/* 256 KiB each */
	u32 akey, bkey;		/* PBL MRs over them, all rights */
	u32 apd, bpd;		/* the MRs' PD, not privileged */
};

#define RC_BUF		(256u << 10)
#define RC_IOVA		0x40000000ULL

static void rc_up(struct rcpair *p, u8 net, bool privileged)
{
	u8 acc = RNIC_ACCESS_ALL;

	memset(p, 0, sizeof(*p));
	p->a = rdrv_up(1);
	p->b = rdrv_up(2);
	p->w = twire_new(p->a, p->b);
	p->abuf = rdrv_alloc(p->a, RC_BUF, 4096);
	p->bbuf = rdrv_alloc(p->b, RC_BUF, 4096);
	if (privileged) {
		p->apd = p->a->pdn;
		p->bpd = p->b->pdn;
	} else if (rdrv_pd_alloc(p->a, false, &p->apd) ||
		   rdrv_pd_alloc(p->b, false, &p->bpd)) {
		test_fail(__FILE__, __LINE__, "pd");
	}
	if (rdrv_mr_pbl(p->a, p->apd, acc, RC_IOVA, RC_BUF, p->abuf, &p->akey) ||
	    rdrv_mr_pbl(p->b, p->bpd, acc, RC_IOVA, RC_BUF, p->bbuf, &p->bkey) ||
	    rdrv_cq_create(p->a, 8, &p->acq) || rdrv_cq_create(p->b, 8, &p->bcq) ||
	    rdrv_qp_create(p->a, RNIC_QPT_RC, p->apd, &p->acq, &p->acq, NULL, 6,
			 7, 6, 6, &p->aqp) ||
	    rdrv_qp_create(p->b, RNIC_QPT_RC, p->bpd, &p->bcq, &p->bcq, NULL, 6,
			 7, 6, 6, &p->bqp) ||
	    rdrv_rc_connect(p->a, &p->aqp, p->b, p->bqp.qpn, net) ||
	    rdrv_rc_connect(p->b, &p->bqp, p->a, p->aqp.qpn, net))
		test_fail(__FILE__, __LINE__, "rc_up failed");
}

static void rc_down(struct rcpair *p)
{
	twire_free(p->w);
	rdrv_free(p->a);
	rdrv_free(p->b);
}

static void fill(u8 *buf, size_t n, u8 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (u8)(seed + i * 13 + (i >> 8));
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

static void rc_traffic(u8 net)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	u8 wqe[128] = {};
	u8 *ab, *bb;

	rc_up(&p, net, false);
	ab = rdrv_ram(p.a, p.abuf);
	bb = rdrv_ram(p.b, p.bbuf);
	fill(ab, RC_BUF, net);

	/* SEND of 5000 bytes: five packets at path MTU 1024 */
	rs = sge(RC_IOVA + 0x10000, 8192, p.bkey);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND_IMM, RNIC_SQE_F_SIGNALED |
	       RNIC_SQE_F_SOLICITED, 5000, RC_IOVA + 3, p.akey, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	CHECK(twire_run(p.w) >= 6);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
	CHECK_EQ(le32_to_cpu(c.byte_len), 5000);
	CHECK(c.flags & RNIC_RCQE_F_IMM);
	CHECK_EQ(be32_to_cpu(c.imm_data), 0x11223344);
	CHECK_EQ(le32_to_cpu(c.qpn), p.bqp.qpn);
	CHECK_MEM_EQ(bb + 0x10000, ab + 3, 5000);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_SEND_IMM);
	CHECK_EQ(le32_to_cpu(c.byte_len), 5000);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 0);

	/* WRITE 40000 bytes, unsignaled, then a signaled READ back */
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, 0, 40000, RC_IOVA + 100, p.akey,
	       RC_IOVA + 0x20000, p.bkey);
	rdrv_post_send(p.a, &p.aqp, wqe, false);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_READ, RNIC_SQE_F_SIGNALED, 40000,
	       RC_IOVA + 0x20000, p.akey, RC_IOVA + 0x20000, p.bkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_MEM_EQ(bb + 0x20000, ab + 100, 40000);
	CHECK_MEM_EQ(ab + 0x20000, ab + 100, 40000);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_READ);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 2);	/* the WRITE retired silently */
	CHECK(!rdrv_cq_poll(p.b, &p.bcq, &c));

	/* Atomics on the 8 bytes at B's 0x100 */
	memcpy(bb + 0x100, "\x05\0\0\0\0\0\0\0", 8);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_FETCH_ADD, RNIC_SQE_F_SIGNALED, 8,
	       RC_IOVA + 0x200, p.akey, 0, 0);
	((struct rnic_sqe *)wqe)->seg.atomic.remote_addr =
		cpu_to_le64(RC_IOVA + 0x100);
	((struct rnic_sqe *)wqe)->seg.atomic.rkey = cpu_to_le32(p.bkey);
	((struct rnic_sqe *)wqe)->seg.atomic.compare_add = cpu_to_le64(10);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_FETCH_ADD);
	CHECK_EQ(le32_to_cpu(c.byte_len), 8);
	CHECK_EQ(ab[0x200], 5);
	CHECK_EQ(bb[0x100], 15);

	/* WRITE_IMM takes a receive WQE at B */
	rs = sge(RC_IOVA + 0x1000, 16, p.bkey);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE_IMM, RNIC_SQE_F_SIGNALED, 3000,
	       RC_IOVA, p.akey, RC_IOVA + 0x8000, p.bkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV_WRITE_IMM);
	CHECK_EQ(le32_to_cpu(c.byte_len), 3000);
	CHECK_MEM_EQ(bb + 0x8000, ab, 3000);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);

	CHECK(rdrv_rctr(p.a, RNIC_RDMA_STAT_rc_req_packets) > 40);
	CHECK(rdrv_rctr(p.b, RNIC_RDMA_STAT_rc_resp_packets) > 40);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_read_requests_rcvd), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_atomic_requests_rcvd), 1);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_retransmits), 0);
	CHECK(rdrv_qpctr(p.a, p.aqp.qpn, RNIC_QP_STAT_tx_packets) > 40);
	/* B was in RTS before the first request: no COMM_EST */
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_COMM_EST, NULL), 0);
	rc_down(&p);
}

TEST(rdma_rc_roce_v1)
{
	rc_traffic(RNIC_RX_CLASS_ROCE_V1);
}

TEST(rdma_rc_roce_v2_ipv4)
{
	rc_traffic(RNIC_RX_CLASS_ROCE_V2_IPV4);
}

TEST(rdma_rc_roce_v2_ipv6)
{
	rc_traffic(RNIC_RX_CLASS_ROCE_V2_IPV6);
}

/* Drop every @n-th frame A sends */
static bool lossy(struct twire *w, struct twire_frame *f)
{
	unsigned int *count = w->filter_ctx;

	return f->to != 1 || ++*count % 7;
}

TEST(rdma_rc_loss_recovered_by_timer)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	unsigned int count = 0, i;
	struct rcpair p;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	fill(rdrv_ram(p.a, p.abuf), RC_BUF, 7);
	p.w->filter = lossy;
	p.w->filter_ctx = &count;
	rs = sge(RC_IOVA, RC_BUF, p.bkey);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 100000,
	       RC_IOVA, p.akey, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	for (i = 0; i < 2000 && !rdrv_cq_poll(p.a, &p.acq, &c); i++)
		twire_advance(p.w, 1000000);
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(le32_to_cpu(c.byte_len), 100000);
	CHECK_MEM_EQ(rdrv_ram(p.b, p.bbuf), rdrv_ram(p.a, p.abuf), 100000);
	CHECK(rdrv_rctr(p.a, RNIC_RDMA_STAT_retransmits) > 0);
	rc_down(&p);
}

/* Take the oldest frame off the wire without delivering it */
static bool wire_pop(struct twire *w, struct twire_frame *f)
{
	if (!w->count)
		return false;
	*f = w->q[w->head];
	w->head = (w->head + 1) % RDRV_WIRE_MAX;
	w->count--;
	return true;
}

/*
 * An ACK that reached A's receive buffer before its retransmit timeout
 * ran out is taken before the timer at the next tick, however late that
 * tick comes (a busy host): no timeout, no retransmission.
 */
TEST(rdma_rc_tick_takes_rx_before_timers)
{
	struct rnic_rdma_cqe c;
	struct twire_frame *f;
	struct rcpair p;
	u8 wqe[128] = {};

	f = malloc(sizeof(*f));
	REQUIRE(f);
	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, RNIC_SQE_F_SIGNALED, 64, RC_IOVA,
		  p.akey, RC_IOVA + 0x1000, p.bkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	/* The WRITE to B, which acknowledges it at its tick */
	REQUIRE(wire_pop(p.w, f) && f->to == 1);
	rdev_wire_rx(rdrv_tdev(p.b)->d, f->data, f->len);
	rdev_tick(rdrv_tdev(p.b)->d, rdrv_tdev(p.b)->p->now);
	REQUIRE(wire_pop(p.w, f) && f->to == 0);
	/* The ACK waits in A's buffer while the timeout (4 ms) runs out */
	rdev_wire_rx(rdrv_tdev(p.a)->d, f->data, f->len);
	CHECK(!rdrv_cq_poll(p.a, &p.acq, &c));
	rdrv_tdev(p.a)->p->now += 1000000000ULL;
	rdev_tick(rdrv_tdev(p.a)->d, rdrv_tdev(p.a)->p->now);
	CHECK_EQ(p.w->count, 0);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_local_ack_timeouts), 0);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_retransmits), 0);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	free(f);
	rc_down(&p);
}

static bool drop_all(struct twire *w, struct twire_frame *f)
{
	(void)w;
	(void)f;
	return false;
}

/*
 * Retransmit timers are found through the list of QPs that armed one,
 * not a walk of the QP table: a QP destroyed with its timer armed
 * leaves the list, the others' timers still fire and recover.
 */
TEST(rdma_rc_timer_list)
{
	struct rdrv_qp aqp[3], bqp[3];
	struct rnic_rdma_cqe c;
	unsigned int i, done = 0;
	struct rcpair p;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	aqp[0] = p.aqp;
	bqp[0] = p.bqp;
	for (i = 1; i < 3; i++)
		REQUIRE(!rdrv_qp_create(p.a, RNIC_QPT_RC, p.apd, &p.acq, &p.acq,
				      NULL, 6, 7, 6, 6, &aqp[i]) &&
			!rdrv_qp_create(p.b, RNIC_QPT_RC, p.bpd, &p.bcq, &p.bcq,
				      NULL, 6, 7, 6, 6, &bqp[i]) &&
			!rdrv_rc_connect(p.a, &aqp[i], p.b, bqp[i].qpn,
				       RNIC_RX_CLASS_ROCE_V2_IPV4) &&
			!rdrv_rc_connect(p.b, &bqp[i], p.a, aqp[i].qpn,
				       RNIC_RX_CLASS_ROCE_V2_IPV4));
	p.w->filter = drop_all;
	for (i = 0; i < 3; i++) {
		rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, RNIC_SQE_F_SIGNALED, 64,
			  RC_IOVA + 64 * i, p.akey, RC_IOVA + 0x1000 + 64 * i,
			  p.bkey);
		rdrv_post_send(p.a, &aqp[i], wqe, true);
	}
	twire_run(p.w);
	REQUIRE(rdrv_qp_destroy(p.a, &aqp[1]) == RNIC_AQ_SUCCESS);
	twire_advance(p.w, 10000000);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_local_ack_timeouts), 2);
	p.w->filter = NULL;
	for (i = 0; i < 20 && done < 2; i++) {
		twire_advance(p.w, 10000000);
		while (rdrv_cq_poll(p.a, &p.acq, &c)) {
			CHECK_EQ(c.status, RNIC_WC_SUCCESS);
			CHECK(le32_to_cpu(c.qpn) != aqp[1].qpn);
			done++;
		}
	}
	CHECK_EQ(done, 2);
	CHECK(rdrv_rctr(p.a, RNIC_RDMA_STAT_retransmits) >= 2);
	rc_down(&p);
}

TEST(rdma_rc_rnr_then_receive)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	unsigned int i;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV6, false);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 64, RC_IOVA,
	       p.akey, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK(!rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rnr_naks_sent), 1);
	rs = sge(RC_IOVA, 64, p.bkey);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	for (i = 0; i < 100 && !rdrv_cq_poll(p.a, &p.acq, &c); i++)
		twire_advance(p.w, 100000);
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	rc_down(&p);
}

TEST(rdma_rc_remote_access_error)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct rcpair p;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	/* Outside B's MR: NAK remote access; both QPs end in ERR */
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, RNIC_SQE_F_SIGNALED, 64, RC_IOVA,
	       p.akey, RC_IOVA + RC_BUF - 32, p.bkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 8, RC_IOVA,
	       p.akey, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_WRITE);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_SEND);
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_QP_ACCESS_ERR, &e), 1);
	CHECK_EQ(le32_to_cpu(e.data), p.bqp.qpn);
	CHECK_EQ(e.obj, RNIC_EQE_OBJ_QP);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_nak_rem_access_sent), 1);
	CHECK(rdrv_rctr(p.b, RNIC_RDMA_STAT_key_violations) >= 1);
	rc_down(&p);
}

TEST(rdma_rc_flush_and_drain)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rnic_qp_query q;
	struct rcpair p;
	unsigned int i;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	for (i = 0; i < 3; i++) {
		rs = sge(RC_IOVA, 64, p.akey);
		rdrv_post_recv(p.a, &p.aqp, &rs, 1, i == 2);
	}
	/* Move A to ERR with three receives posted: three flush CQEs */
	REQUIRE(rdrv_qp_state(p.a, &p.aqp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	for (i = 0; i < 3; i++) {
		REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
		CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(c.syndrome, RNIC_ERR_FLUSHED);
		CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), i);
	}
	/* The drain WQEs posted after the move flush too, unsignaled. */
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, 0, 0, 0, 0, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_SEND);
	rs = sge(RC_IOVA, 64, p.akey);
	rdrv_post_recv(p.a, &p.aqp, &rs, 1, true);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 3);
	CHECK(!rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(rdrv_qp_query(p.a, p.aqp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.state, RNIC_QPS_ERR);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_cqe_flushed), 5);
	/* Back to RESET and up again: indices restart at 0 */
	REQUIRE(rdrv_qp_state(p.a, &p.aqp, RNIC_QPS_RESET) == RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_query(p.a, p.aqp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.sq_pi, 0);
	CHECK_EQ(q.rq_ci, 0);
	rc_down(&p);
}

TEST(rdma_rc_local_ops_fast_reg)
{
	struct rnic_aq_create_mr mc = {};
	union rnic_aq_resp r;
	struct rnic_rdma_cqe c;
	struct rcpair p;
	struct rnic_sqe *s;
	u64 pbl, page;
	u32 frkey;
	u8 wqe[128] = {};

	/* Privileged PDs: the kernel's, which may REG_MR */
	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, true);
	mc.hdr.opcode = RNIC_AQ_CREATE_MR;
	mc.type = RNIC_MRT_FAST_REG;
	mc.pdn = cpu_to_le32(p.bpd);
	mc.npages = cpu_to_le32(4);
	REQUIRE(rdrv_cmd(p.b, &mc, &r) == RNIC_AQ_SUCCESS);
	frkey = le32_to_cpu(r.id.id);
	page = rdrv_alloc(p.b, 2 * 4096, 4096);
	pbl = rdrv_alloc(p.b, 16, 8);
	((__le64 *)rdrv_ram(p.b, pbl))[0] = cpu_to_le64(page + 4096);
	((__le64 *)rdrv_ram(p.b, pbl))[1] = cpu_to_le64(page);

	/* B registers two pages in reverse order under variant 0x33 */
	s = (void *)wqe;
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_REG_MR;
	s->ctrl.flags = RNIC_SQE_F_SIGNALED;
	s->ctrl.key = cpu_to_le32((frkey & ~0xffU) | 0x33);
	s->seg.reg_mr.iova = cpu_to_le64(0x5000);
	s->seg.reg_mr.length = cpu_to_le64(8192);
	s->seg.reg_mr.pbl_addr = cpu_to_le64(pbl);
	s->seg.reg_mr.npages = cpu_to_le16(2);
	s->seg.reg_mr.page_log2 = 12;
	s->seg.reg_mr.access = RNIC_ACCESS_LOCAL_WRITE |
			       RNIC_ACCESS_REMOTE_WRITE;
	rdrv_post_send(p.b, &p.bqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_REG_MR);
	frkey = (frkey & ~0xffU) | 0x33;

	/* A writes 100 bytes across B's page boundary through it */
	fill(rdrv_ram(p.a, p.abuf), 100, 3);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, RNIC_SQE_F_SIGNALED, 100, RC_IOVA,
	       p.akey, 0x5000 + 4096 - 50, frkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ((u8 *)rdrv_ram(p.b, page + 4096) + 4046,
		     rdrv_ram(p.a, p.abuf), 50);
	CHECK_MEM_EQ((u8 *)rdrv_ram(p.b, page), (u8 *)rdrv_ram(p.a, p.abuf) + 50,
		     50);

	/* LOCAL_INV, then a new registration under variant 0x34 */
	s = (void *)wqe;
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_LOCAL_INV;
	s->ctrl.flags = RNIC_SQE_F_SIGNALED;
	s->ctrl.key = cpu_to_le32(frkey);
	rdrv_post_send(p.b, &p.bqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_LOCAL_INV);
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_REG_MR;
	s->ctrl.flags = RNIC_SQE_F_SIGNALED;
	s->ctrl.key = cpu_to_le32((frkey & ~0xffU) | 0x34);
	s->seg.reg_mr.iova = cpu_to_le64(0x5000);
	s->seg.reg_mr.length = cpu_to_le64(4096);
	s->seg.reg_mr.pbl_addr = cpu_to_le64(pbl);
	s->seg.reg_mr.npages = cpu_to_le16(1);
	s->seg.reg_mr.page_log2 = 12;
	s->seg.reg_mr.access = RNIC_ACCESS_LOCAL_WRITE |
			       RNIC_ACCESS_REMOTE_WRITE;
	rdrv_post_send(p.b, &p.bqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);

	/* The old variant no longer opens it: A's WRITE fails */
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, RNIC_SQE_F_SIGNALED, 100, RC_IOVA,
	       p.akey, 0x5000, frkey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_REM_ACCESS_ERR);
	rc_down(&p);
}

TEST(rdma_rc_local_op_errors)
{
	struct rnic_rdma_cqe c;
	struct rcpair p;
	struct rnic_sqe *s;
	struct rnic_eqe e;
	u8 wqe[128] = {};

	/* Not privileged: REG_MR is refused with NO_PERM */
	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	s = (void *)wqe;
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_REG_MR;
	s->ctrl.key = cpu_to_le32(p.bkey);
	s->seg.reg_mr.npages = cpu_to_le16(1);
	s->seg.reg_mr.page_log2 = 12;
	rdrv_post_send(p.b, &p.bqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(c.syndrome, RNIC_ERR_NO_PERM);
	CHECK_EQ(c.opcode, RNIC_SQE_OP_REG_MR);
	/* An RC WQE error puts the QP in ERR, reported by the CQE alone */
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_QP_FATAL, &e), 0);

	/* A's LOCAL_INV of a PBL MR: the key fails (KEY_STATE) */
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_LOCAL_INV;
	s->ctrl.key = cpu_to_le32(p.akey);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(c.syndrome, RNIC_ERR_KEY_STATE);
	/* A malformed RC WQE: LOC_QP_OP_ERR (BAD_WQE), then flush */
	memset(wqe, 0, sizeof(wqe));
	s->ctrl.opcode = RNIC_SQE_OP_SEND;
	s->ctrl.length = cpu_to_le32(5);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	rc_down(&p);
}

TEST(rdma_rc_srq_last_wqe_reached)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	struct rdrv_srq srq;
	struct rdrv_qp qp;
	struct rdrv_cq cq;
	struct rnic_eqe e;
	u8 wqe[128] = {};
	unsigned int i;

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	/* B gets a second RC QP on an SRQ, connected to a new QP of A */
	REQUIRE(rdrv_cq_create(p.b, 6, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_srq_create(p.b, p.bpd, 4, 5, 3, &srq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(p.b, RNIC_QPT_RC, p.bpd, &cq, &cq, &srq, 4, 7,
			     0, 0, &qp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_destroy(p.a, &p.aqp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(p.a, RNIC_QPT_RC, p.apd, &p.acq, &p.acq, NULL, 6,
			     7, 6, 6, &p.aqp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_rc_connect(p.a, &p.aqp, p.b, qp.qpn,
			      RNIC_RX_CLASS_ROCE_V2_IPV4) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_rc_connect(p.b, &qp, p.a, p.aqp.qpn,
			      RNIC_RX_CLASS_ROCE_V2_IPV4) == RNIC_AQ_SUCCESS);
	for (i = 0; i < 4; i++) {
		rs = sge(RC_IOVA + 1024 * i, 1024, p.bkey);
		rdrv_srq_post(p.b, &srq, 10 + i, &rs, 1);
	}
	for (i = 0; i < 2; i++) {
		rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 200,
		       RC_IOVA, p.akey, 0, 0);
		rdrv_post_send(p.a, &p.aqp, wqe, true);
	}
	twire_run(p.w);
	for (i = 0; i < 2; i++) {
		REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		CHECK(c.flags & RNIC_RCQE_F_SRQ);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), 10 + i);
	}
	/* 2 left < limit 3: one SRQ_LIMIT, then disarmed */
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_SRQ_LIMIT, &e), 1);
	CHECK_EQ(le32_to_cpu(e.data), srq.srqn);
	/* ERR: LAST_WQE_REACHED, and the SRQ keeps its WQEs */
	REQUIRE(rdrv_qp_state(p.b, &qp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_LAST_WQE_REACHED, &e), 1);
	CHECK_EQ(le32_to_cpu(e.data), qp.qpn);
	CHECK(!rdrv_cq_poll(p.b, &cq, &c));
	{
		struct rnic_aq_obj o = { .hdr.opcode = RNIC_AQ_QUERY_SRQ };
		union rnic_aq_resp r;

		o.handle = cpu_to_le32(srq.srqn);
		REQUIRE(rdrv_cmd(p.b, &o, &r) == RNIC_AQ_SUCCESS);
		CHECK_EQ(le16_to_cpu(r.query_srq.avail), 2);
		CHECK_EQ(le32_to_cpu(r.query_srq.limit), 0);
	}
	rc_down(&p);
}

/* Frames to B after the first are lost: B holds a SEND's first packet */
static bool first_to_b_only(struct twire *w, struct twire_frame *f)
{
	unsigned int *to_b = w->filter_ctx;

	return !f->to || ++*to_b == 1;
}

/* A new RC QP of A, connected to a new QP of B on @srq */
static void srq_qps_up(struct rcpair *p, struct rdrv_srq *srq,
		       struct rdrv_cq *cq, struct rdrv_qp *aqp,
		       struct rdrv_qp *bqp)
{
	if (rdrv_qp_create(p->a, RNIC_QPT_RC, p->apd, &p->acq, &p->acq, NULL,
			   4, 7, 4, 6, aqp) ||
	    rdrv_qp_create(p->b, RNIC_QPT_RC, p->bpd, cq, cq, srq, 4, 7, 0, 0,
			   bqp) ||
	    rdrv_rc_connect(p->a, aqp, p->b, bqp->qpn,
			    RNIC_RX_CLASS_ROCE_V2_IPV4) ||
	    rdrv_rc_connect(p->b, bqp, p->a, aqp->qpn,
			    RNIC_RX_CLASS_ROCE_V2_IPV4))
		test_fail(__FILE__, __LINE__, "QPs on the SRQ: create or connect failed");
}

/* A SEND of @len bytes from @aqp; with @partial only its first packet lands */
static void srq_send(struct rcpair *p, struct rdrv_qp *aqp, u32 len,
		     bool partial)
{
	unsigned int to_b = 0;
	u8 wqe[128] = {};

	p->w->filter = partial ? first_to_b_only : NULL;
	p->w->filter_ctx = &to_b;
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, len, RC_IOVA,
		    p->akey, 0, 0);
	rdrv_post_send(p->a, aqp, wqe, true);
	twire_run(p->w);
	p->w->filter = NULL;
	p->w->filter_ctx = NULL;
}

static u16 srq_avail(struct rdrv *x, struct rdrv_srq *srq)
{
	struct rnic_aq_obj o = { .hdr.opcode = RNIC_AQ_QUERY_SRQ };
	union rnic_aq_resp r;

	o.handle = cpu_to_le32(srq->srqn);
	if (rdrv_cmd(x, &o, &r) != RNIC_AQ_SUCCESS)
		test_fail(__FILE__, __LINE__, "QUERY_SRQ failed");
	return le16_to_cpu(r.query_srq.avail);
}

/* MODIFY_QP of @qp to @state with no other attribute; the response in @r */
static int srq_qp_to(struct rdrv *x, struct rdrv_qp *qp, u8 state,
		     union rnic_aq_resp *r)
{
	struct rnic_aq_modify_qp m = {};

	m.hdr.opcode = RNIC_AQ_MODIFY_QP;
	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE);
	m.state = state;
	memset(r, 0xee, sizeof(*r));
	return rdrv_cmd(x, &m, r);
}

static int srq_qp_destroy(struct rdrv *x, struct rdrv_qp *qp,
			  union rnic_aq_resp *r)
{
	struct rnic_aq_obj o = { .hdr.opcode = RNIC_AQ_DESTROY_QP };

	o.handle = cpu_to_le32(qp->qpn);
	memset(r, 0xee, sizeof(*r));
	return rdrv_cmd(x, &o, r);
}

/*
 * An RC QP on an SRQ that goes to RESET, or is destroyed, while it holds
 * a WQE taken from the SRQ (the first packet of a SEND in, the rest lost)
 * drops that WQE without a CQE: the MODIFY_QP or DESTROY_QP response
 * names its slot, or the driver would never free it. Holding nothing, or
 * after ERR flushed the WQE with a CQE, the response names none. The
 * dropped slot may be posted again.
 */
TEST(rdma_rc_srq_slot_dropped)
{
	struct rdrv_qp aqp[5], bqp[5];
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	union rnic_aq_resp r;
	struct rdrv_srq srq;
	struct rdrv_cq cq;
	struct rcpair p;
	unsigned int i;

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	REQUIRE(rdrv_cq_create(p.b, 6, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_srq_create(p.b, p.bpd, 4, 5, 0, &srq) == RNIC_AQ_SUCCESS);
	/* slots 10..13, taken in that order; each buffer holds 8 KiB */
	for (i = 0; i < 4; i++) {
		rs = sge(RC_IOVA + 8192 * i, 8192, p.bkey);
		rdrv_srq_post(p.b, &srq, 10 + i, &rs, 1);
	}

	/* A whole SEND completes slot 10: RESET then holds nothing */
	srq_qps_up(&p, &srq, &cq, &aqp[0], &bqp[0]);
	srq_send(&p, &aqp[0], 200, false);
	REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 10);
	CHECK_EQ(srq_qp_to(p.b, &bqp[0], RNIC_QPS_RESET, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.modify_qp.state, RNIC_QPS_RESET);
	CHECK_EQ(r.modify_qp.flags, 0);
	CHECK_EQ(le16_to_cpu(r.modify_qp.srq_slot), 0);
	/* a failed command names nothing either (RESET->ERR) */
	CHECK_EQ(srq_qp_to(p.b, &bqp[0], RNIC_QPS_ERR, &r),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(r.modify_qp.flags, 0);
	CHECK_EQ(le16_to_cpu(r.modify_qp.srq_slot), 0);
	/* destroyed in RESET: nothing */
	CHECK_EQ(srq_qp_destroy(p.b, &bqp[0], &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.destroy_qp.flags, 0);
	CHECK_EQ(le16_to_cpu(r.destroy_qp.srq_slot), 0);
	CHECK_EQ(srq_avail(p.b, &srq), 3);

	/* 5000 bytes at MTU 1024, one packet in: slot 11 taken, RTS->RESET */
	srq_qps_up(&p, &srq, &cq, &aqp[1], &bqp[1]);
	srq_send(&p, &aqp[1], 5000, true);
	CHECK_EQ(srq_avail(p.b, &srq), 2);
	CHECK_EQ(srq_qp_to(p.b, &bqp[1], RNIC_QPS_RESET, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.modify_qp.state, RNIC_QPS_RESET);
	CHECK_EQ(r.modify_qp.flags, RNIC_AQ_QP_F_SRQ_DROPPED);
	CHECK_EQ(le16_to_cpu(r.modify_qp.srq_slot), 11);
	CHECK(!rdrv_cq_poll(p.b, &cq, &c));
	/* reported once: RESET again, and the destroy, name nothing */
	CHECK_EQ(srq_qp_to(p.b, &bqp[1], RNIC_QPS_RESET, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.modify_qp.flags, 0);
	CHECK_EQ(srq_qp_destroy(p.b, &bqp[1], &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.destroy_qp.flags, 0);

	/* slot 12 taken, then the QP destroyed in RTS */
	srq_qps_up(&p, &srq, &cq, &aqp[2], &bqp[2]);
	srq_send(&p, &aqp[2], 5000, true);
	CHECK_EQ(srq_avail(p.b, &srq), 1);
	CHECK_EQ(srq_qp_destroy(p.b, &bqp[2], &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.destroy_qp.flags, RNIC_AQ_QP_F_SRQ_DROPPED);
	CHECK_EQ(le16_to_cpu(r.destroy_qp.srq_slot), 12);
	CHECK(!rdrv_cq_poll(p.b, &cq, &c));

	/* slot 13 taken, then ERR first, as ULPs do: a flush CQE, no report */
	srq_qps_up(&p, &srq, &cq, &aqp[3], &bqp[3]);
	srq_send(&p, &aqp[3], 5000, true);
	CHECK_EQ(srq_avail(p.b, &srq), 0);
	CHECK_EQ(srq_qp_to(p.b, &bqp[3], RNIC_QPS_ERR, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.modify_qp.flags, 0);
	REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	CHECK(c.flags & RNIC_RCQE_F_SRQ);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 13);
	CHECK_EQ(srq_qp_to(p.b, &bqp[3], RNIC_QPS_RESET, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(r.modify_qp.flags, 0);
	CHECK_EQ(le16_to_cpu(r.modify_qp.srq_slot), 0);

	/* the dropped slots serve again, with no SRQ error */
	rs = sge(RC_IOVA + 8192, 8192, p.bkey);
	rdrv_srq_post(p.b, &srq, 11, &rs, 1);
	rs = sge(RC_IOVA + 16384, 8192, p.bkey);
	rdrv_srq_post(p.b, &srq, 12, &rs, 1);
	srq_qps_up(&p, &srq, &cq, &aqp[4], &bqp[4]);
	for (i = 0; i < 2; i++)
		srq_send(&p, &aqp[4], 5000, false);
	for (i = 0; i < 2; i++) {
		REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		CHECK_EQ(le32_to_cpu(c.byte_len), 5000);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), 11 + i);
	}
	CHECK(!rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_SRQ_ERR, NULL), 0);
	rc_down(&p);
}

/* Drop or duplicate some of A's and B's frames, from a seeded PRNG */
struct chaos {
	u64 seed;
	unsigned int dropped;
};

static bool chaos_filter(struct twire *w, struct twire_frame *f)
{
	struct chaos *ch = w->filter_ctx;

	(void)f;
	ch->seed = ch->seed * 6364136223846793005ULL + 1442695040888963407ULL;
	if ((ch->seed >> 33) % 100 < 3) {
		ch->dropped++;
		return false;
	}
	return true;
}

/*
 * A stream of SENDs (each checked at B) and WRITE+READ pairs over a
 * lossy wire, through small rings that wrap many times.
 */
TEST(rdma_rc_stream_lossy_wire)
{
	struct chaos ch = { .seed = 42 };
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	unsigned int sent = 0, acked = 0, recvd = 0, i, spins = 0;
	u8 wqe[128] = {};
	u8 *ab, *bb;

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV6, false);
	ab = rdrv_ram(p.a, p.abuf);
	bb = rdrv_ram(p.b, p.bbuf);
	fill(ab, RC_BUF, 11);
	p.w->filter = chaos_filter;
	p.w->filter_ctx = &ch;
	/* B keeps 32 receive buffers of 4 KiB posted */
	for (i = 0; i < 32; i++) {
		rs = sge(RC_IOVA + 4096 * i, 4096, p.bkey);
		rdrv_post_recv(p.b, &p.bqp, &rs, 1, i == 31);
	}
	while (acked < 600 && spins < 20000) {
		/* Keep at most 16 WQEs outstanding on A's SQ of 64 */
		while (sent - acked < 16 && sent < 600) {
			u32 len = 1 + (sent * 2654435761u) % 4000;

			if (sent % 3 == 2) {
				rdrv_rc_wqe(wqe, RNIC_SQE_OP_READ,
				       RNIC_SQE_F_SIGNALED, len,
				       RC_IOVA + 0x30000, p.akey,
				       RC_IOVA + 0x20000, p.bkey);
			} else {
				rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND,
				       RNIC_SQE_F_SIGNALED, len,
				       RC_IOVA + (sent % 50), p.akey, 0, 0);
			}
			rdrv_post_send(p.a, &p.aqp, wqe, true);
			sent++;
		}
		twire_run(p.w);
		while (rdrv_cq_poll(p.a, &p.acq, &c)) {
			CHECK_EQ(c.status, RNIC_WC_SUCCESS);
			CHECK_EQ(le16_to_cpu(c.wqe_idx), (u16)acked);
			if (c.status)
				goto out;
			acked++;
		}
		while (rdrv_cq_poll(p.b, &p.bcq, &c)) {
			u16 idx = le16_to_cpu(c.wqe_idx);
			unsigned int msg = recvd / 2 * 3 + recvd % 2;
			u32 len = 1 + (msg * 2654435761u) % 4000;

			CHECK_EQ(c.status, RNIC_WC_SUCCESS);
			CHECK_EQ(idx, (u16)recvd);
			CHECK_EQ(le32_to_cpu(c.byte_len), len);
			CHECK_MEM_EQ(bb + 4096 * (idx % 32), ab + (msg % 50),
				     len);
			recvd++;
			rs = sge(RC_IOVA + 4096 * (idx % 32), 4096, p.bkey);
			rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
			if (test_failed())
				goto out;
		}
		twire_advance(p.w, 2000000);
		spins++;
	}
	CHECK_EQ(acked, 600);
	CHECK_EQ(recvd, 400);
	CHECK(ch.dropped > 10);
	CHECK(rdrv_rctr(p.a, RNIC_RDMA_STAT_retransmits) > 0);
out:
	rc_down(&p);
}

/*
 * RNIC_RDMA_CAP_RQ_PEEK: receives posted by their slot alone, no kick
 * entry and no kick, are found when the SEND arrives; no RNR NAK.
 */
TEST(rdma_rc_recv_without_kick)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	unsigned int i;
	u64 kicks;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	CHECK(le32_to_cpu(p.b->caps.flags) & RNIC_RDMA_CAP_RQ_PEEK);
	kicks = rdrv_rctr(p.b, RNIC_RDMA_STAT_kicks);
	for (i = 0; i < 3; i++) {
		rs = sge(RC_IOVA + 4096 * i, 4096, p.bkey);
		rdrv_post_recv(p.b, &p.bqp, &rs, 1, false);
	}
	for (i = 0; i < 3; i++) {
		rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED,
			    100 + i, RC_IOVA, p.akey, 0, 0);
		rdrv_post_send(p.a, &p.aqp, wqe, true);
	}
	twire_run(p.w);
	for (i = 0; i < 3; i++) {
		REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), i);
		CHECK_EQ(le32_to_cpu(c.byte_len), 100 + i);
		REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	}
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rnr_naks_sent), 0);
	/* one read of the slot found all three */
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_kicks), kicks);
	/* an empty RQ whose slot did not move is still an RNR NAK */
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rnr_naks_sent), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 1);
	rc_down(&p);
}

/* A bad RQ slot value found by that read fails the QP as a kick would */
TEST(rdma_rc_recv_peek_bad_slot)
{
	struct rnic_rdma_cqe c;
	struct rcpair p;
	struct rnic_eqe e;
	u64 bad;
	u8 wqe[128] = {};

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	bad = rdrv_pctr(p.b, RNIC_PORT_STAT_bad_doorbells);
	/* 65 WQEs on a 64-deep RQ */
	rdrv_slot_write(p.b, p.b->dbp, p.bqp.rq_off, 65);
	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 8, RC_IOVA,
		    p.akey, 0, 0);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_EQ(rdrv_pctr(p.b, RNIC_PORT_STAT_bad_doorbells), bad + 1);
	REQUIRE(rdrv_eq0_count(p.b, RNIC_EQE_QP_FATAL, &e) == 1);
	CHECK_EQ(le32_to_cpu(e.data), p.bqp.qpn);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 0);
	CHECK(!rdrv_cq_poll(p.b, &p.bcq, &c));
	rc_down(&p);
}

/*
 * A QP in ERR gets no packets, yet every receive posted to it is
 * flushed: without a kick, within a heartbeat period (the device's watch).
 */
TEST(rdma_rc_recv_err_flush_without_kick)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rcpair p;
	unsigned int i;

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	REQUIRE(rdrv_qp_state(p.b, &p.bqp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	rs = sge(RC_IOVA, 64, p.bkey);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, false);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, false);
	for (i = 0; i < 2 && !rdrv_cq_poll(p.b, &p.bcq, &c); i++)
		twire_advance(p.w, RNIC_HEARTBEAT_PERIOD_MS * 1000000ULL);
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 0);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 1);
	/* nothing more at later watches */
	twire_advance(p.w, 2 * RNIC_HEARTBEAT_PERIOD_MS * 1000000ULL);
	CHECK(!rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 1);
	rc_down(&p);
}

/*
 * The same for an SRQ: WQEs posted by its slot alone are taken, and the
 * limit event counts them (no SRQ_LIMIT while the slot shows enough).
 */
TEST(rdma_rc_srq_recv_without_kick)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rdrv_qp aqp, bqp;
	struct rdrv_srq srq;
	struct rdrv_cq cq;
	struct rcpair p;
	struct rnic_eqe e;
	unsigned int i;

	rc_up(&p, RNIC_RX_CLASS_ROCE_V2_IPV4, false);
	REQUIRE(rdrv_cq_create(p.b, 6, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_srq_create(p.b, p.bpd, 4, 5, 2, &srq) == RNIC_AQ_SUCCESS);
	srq_qps_up(&p, &srq, &cq, &aqp, &bqp);
	/* one WQE rung, then three by the slot alone */
	rs = sge(RC_IOVA, 1024, p.bkey);
	rdrv_srq_post(p.b, &srq, 0, &rs, 1);
	for (i = 1; i < 4; i++) {
		rs = sge(RC_IOVA + 1024 * i, 1024, p.bkey);
		rdrv_srq_post_ring(p.b, &srq, i, &rs, 1, false);
	}
	/* 4 posted, 2 taken: 2 left, not below the limit */
	srq_send(&p, &aqp, 300, false);
	srq_send(&p, &aqp, 301, false);
	for (i = 0; i < 2; i++) {
		REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), i);
	}
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_SRQ_LIMIT, &e), 0);
	/* the third: 1 left < 2, the event */
	srq_send(&p, &aqp, 302, false);
	REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 2);
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_SRQ_LIMIT, &e), 1);
	srq_send(&p, &aqp, 303, false);
	REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 3);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rnr_naks_sent), 0);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 1);
	/* QUERY_SRQ counts a WQE posted by the slot alone */
	rs = sge(RC_IOVA, 1024, p.bkey);
	rdrv_srq_post_ring(p.b, &srq, 4, &rs, 1, false);
	CHECK_EQ(srq_avail(p.b, &srq), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rq_peeks), 2);
	srq_send(&p, &aqp, 305, false);
	REQUIRE(rdrv_cq_poll(p.b, &cq, &c));
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 4);
	/* a bad SRQ slot value found the same way fails the SRQ */
	rdrv_slot_write(p.b, p.b->dbp, srq.db_off, 0x10004);
	srq_send(&p, &aqp, 304, false);
	CHECK_EQ(rdrv_eq0_count(p.b, RNIC_EQE_SRQ_ERR, &e), 1);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	rc_down(&p);
}
