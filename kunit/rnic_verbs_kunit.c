// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the verbs layer's pure logic: which modify_qp requests
 * each QP type accepts per state transition and with which attribute
 * ranges, how work queues and CQ rings are sized, the memory key format,
 * MR bounds (with hostile wrap-around), and the CQ ring: wrap of its
 * free-running indices, overflow, and notification.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "rnic_ib.h"
#include "rnic_verbs.h"

/* ------------------------------------------------------------------------
 * modify_qp attribute checking
 */

#define RC_INIT_MASK	(IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT | \
			 IB_QP_ACCESS_FLAGS)
#define RC_RTR_MASK	(IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | \
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN | \
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER)
#define RC_RTS_MASK	(IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT | \
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
			 IB_QP_MAX_QP_RD_ATOMIC)

static void good_attr(struct ib_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->port_num = RNIC_IB_PORT;
	a->pkey_index = 0;
	a->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	a->qkey = 0x11111111;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a->ah_attr, RNIC_IB_PORT);
	rdma_ah_set_grh(&a->ah_attr, NULL, 0, 1, 64, 0);
	a->path_mtu = IB_MTU_1024;
	a->dest_qp_num = 0xffffff;
	a->rq_psn = 0xffffff;
	a->sq_psn = 0;
	a->max_dest_rd_atomic = RNIC_IB_MAX_RD_ATOM;
	a->max_rd_atomic = RNIC_IB_MAX_RD_ATOM;
	a->min_rnr_timer = 31;
	a->timeout = 31;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
}

static int check(enum ib_qp_type t, enum ib_qp_state cur, enum ib_qp_state new,
		 const struct ib_qp_attr *a, int mask)
{
	return rnic_qp_check_attr(t, cur, new, a, mask, IB_MTU_1024);
}

static void qp_rc_reset_to_init(struct kunit *test)
{
	struct ib_qp_attr a;

	good_attr(&a);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK), 0);
	/* a required attribute missing */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK & ~IB_QP_PORT), -EINVAL);
	/* one that does not belong to the transition */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK | IB_QP_SQ_PSN), -EINVAL);
	a.port_num = 2;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK), -EINVAL);
	good_attr(&a);
	a.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK), -EINVAL);
	good_attr(&a);
	a.qp_access_flags |= IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT, &a,
				    RC_INIT_MASK), -EINVAL);
}

static void qp_rc_init_to_rtr(struct kunit *test)
{
	struct ib_qp_attr a;

	good_attr(&a);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK & ~IB_QP_AV), -EINVAL);

	/* path MTU: IB's range, and no larger than the port carries */
	a.path_mtu = IB_MTU_2048;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_qp_check_attr(IB_QPT_RC, IB_QPS_INIT,
						 IB_QPS_RTR, &a, RC_RTR_MASK,
						 IB_MTU_4096), 0);
	a.path_mtu = 0;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	a.path_mtu = IB_MTU_4096 + 1;
	KUNIT_EXPECT_EQ(test, rnic_qp_check_attr(IB_QPT_RC, IB_QPS_INIT,
						 IB_QPS_RTR, &a, RC_RTR_MASK,
						 IB_MTU_4096), -EINVAL);

	good_attr(&a);
	a.dest_qp_num = 0x1000000;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	a.rq_psn = 0x1000000;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	a.max_dest_rd_atomic = RNIC_IB_MAX_RD_ATOM + 1;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	a.min_rnr_timer = 32;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);

	/* RoCE addresses need a GRH, port 1, a GID index in the table */
	good_attr(&a);
	a.ah_attr.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	rdma_ah_set_port_num(&a.ah_attr, 2);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	a.ah_attr.grh.sgid_index = RNIC_IB_GID_TBL_LEN;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
	good_attr(&a);
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK), -EINVAL);
}

static void qp_rc_rtr_to_rts(struct kunit *test)
{
	struct ib_qp_attr a;

	good_attr(&a);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), 0);
	a.retry_cnt = 8;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	good_attr(&a);
	a.rnr_retry = 8;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	good_attr(&a);
	a.timeout = 32;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	good_attr(&a);
	a.max_rd_atomic = RNIC_IB_MAX_RD_ATOM + 1;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	good_attr(&a);
	a.sq_psn = 0x1000000;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	/* RTS -> RTS with an optional attribute; and without any */
	good_attr(&a);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, &a,
				    IB_QP_MIN_RNR_TIMER), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, &a, 0),
			0);
}

static void qp_ud_and_gsi(struct kunit *test)
{
	const int ud_init = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			    IB_QP_QKEY;
	const int gsi_init = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_QKEY;
	struct ib_qp_attr a;

	good_attr(&a);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT, &a,
				    ud_init), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT, &a,
				    ud_init & ~IB_QP_QKEY), -EINVAL);
	/* the MAD layer moves QP1 without a port, with the QP1 Q_Key */
	a.qkey = IB_QP1_QKEY;
	KUNIT_EXPECT_EQ(test, check(IB_QPT_GSI, IB_QPS_RESET, IB_QPS_INIT, &a,
				    gsi_init), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_GSI, IB_QPS_INIT, IB_QPS_RTR, &a,
				    IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_GSI, IB_QPS_RTR, IB_QPS_RTS, &a,
				    IB_QP_STATE | IB_QP_SQ_PSN), 0);
	/* UD has no path: an address vector is refused */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR, &a,
				    IB_QP_STATE | IB_QP_AV), -EINVAL);
	/* SQE is entered on a send error only, and left back to RTS */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_SQE, IB_QPS_RTS, &a,
				    IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_RTS, IB_QPS_SQE, &a,
				    IB_QP_STATE), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQE, &a,
				    IB_QP_STATE), -EINVAL);
}

static void qp_state_machine(struct kunit *test)
{
	static const enum ib_qp_state all[] = {
		IB_QPS_RESET, IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS,
		IB_QPS_SQD, IB_QPS_SQE, IB_QPS_ERR,
	};
	struct ib_qp_attr a;
	int i;

	good_attr(&a);
	/*
	 * To RESET from every state, to ERR from every state but RESET
	 * (IBA 10.3.1), with the state alone.
	 */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_ERR, &a,
				    IB_QP_STATE), -EINVAL);
	for (i = 0; i < ARRAY_SIZE(all); i++) {
		if (all[i] != IB_QPS_RESET)
			KUNIT_EXPECT_EQ_MSG(test,
					    check(IB_QPT_RC, all[i], IB_QPS_ERR,
						  &a, IB_QP_STATE), 0,
					    "state %d -> ERR", all[i]);
		KUNIT_EXPECT_EQ_MSG(test, check(IB_QPT_RC, all[i],
						IB_QPS_RESET, &a, IB_QP_STATE),
				    0, "state %d -> RESET", all[i]);
	}
	/* no skipping states */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RESET, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_ERR, IB_QPS_RTS, &a,
				    RC_RTS_MASK), -EINVAL);
	/* RTS <-> SQD */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTS, IB_QPS_SQD, &a,
				    IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_SQD, IB_QPS_RTS, &a,
				    IB_QP_STATE), 0);
	/* what rnic does not implement says so */
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR, &a,
				    RC_RTR_MASK | IB_QP_ALT_PATH), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, &a,
				    IB_QP_CAP), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, check(IB_QPT_UD, IB_QPS_RTS, IB_QPS_RTS, &a,
				    IB_QP_RATE_LIMIT), -EOPNOTSUPP);
}

/* ------------------------------------------------------------------------
 * Sizing
 */

static void wq_sizing(struct kunit *test)
{
	const size_t base = sizeof(struct rnic_send_wqe);
	struct rnic_wq wq = {};
	u32 wr;

	for (wr = 0; wr <= 70; wr++) {
		KUNIT_ASSERT_EQ(test, rnic_wq_geometry(&wq, wr, 3, 0, base), 0);
		KUNIT_EXPECT_TRUE(test, is_power_of_2(wq.size));
		KUNIT_EXPECT_GE(test, wq.size, max(wr, 1U));
		KUNIT_EXPECT_LT(test, wq.size, 2 * max(wr, 1U));
	}

	KUNIT_ASSERT_EQ(test, rnic_wq_geometry(&wq, RNIC_IB_MAX_QP_WR,
					       RNIC_IB_MAX_SGE,
					       RNIC_IB_MAX_INLINE, base), 0);
	KUNIT_EXPECT_EQ(test, wq.size, RNIC_IB_MAX_QP_WR);
	KUNIT_EXPECT_EQ(test, wq.max_sge, RNIC_IB_MAX_SGE);
	KUNIT_EXPECT_EQ(test, wq.max_inline, RNIC_IB_MAX_INLINE);
	KUNIT_EXPECT_EQ(test, wq.stride % 8, 0);
	KUNIT_EXPECT_GE(test, wq.stride, base + RNIC_IB_MAX_SGE *
			sizeof(struct rnic_wqe_sge) + RNIC_IB_MAX_INLINE);

	/* inline room is rounded up, never down */
	KUNIT_ASSERT_EQ(test, rnic_wq_geometry(&wq, 1, 0, 13, base), 0);
	KUNIT_EXPECT_GE(test, wq.max_inline, 13);
	KUNIT_EXPECT_GE(test, wq.stride, base + 13);

	KUNIT_EXPECT_EQ(test, rnic_wq_geometry(&wq, RNIC_IB_MAX_QP_WR + 1, 1,
					       0, base), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_wq_geometry(&wq, 1, RNIC_IB_MAX_SGE + 1, 0,
					       base), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_wq_geometry(&wq, 1, 1,
					       RNIC_IB_MAX_INLINE + 1, base),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_wq_geometry(&wq, U32_MAX, 1, 0, base),
			-EINVAL);
}

static void cq_sizing(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(1), 2);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(2), 4);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(3), 4);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(4), 8);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(RNIC_IB_MAX_CQE),
			RNIC_IB_MAX_CQE + 1);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(0), 0);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(-1), 0);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(RNIC_IB_MAX_CQE + 1), 0);
	KUNIT_EXPECT_EQ(test, rnic_cq_ring_size(INT_MAX), 0);
}

/* ------------------------------------------------------------------------
 * Memory keys and bounds
 */

static void key_format(struct kunit *test)
{
	struct ib_mr mr = {};
	u32 key;

	key = rnic_mr_key_make(0x123456, 0x78);
	KUNIT_EXPECT_EQ(test, key, 0x12345678);
	KUNIT_EXPECT_EQ(test, rnic_mr_key_index(key), 0x123456);
	key = rnic_mr_key_make(RNIC_IB_MAX_MR, 0xff);
	KUNIT_EXPECT_EQ(test, rnic_mr_key_index(key), RNIC_IB_MAX_MR);
	key = rnic_mr_key_make(0x123456, 0x78);

	/* what a ULP does to the key between registrations */
	mr.lkey = key;
	mr.rkey = key;
	ib_update_fast_reg_key(&mr, ib_inc_rkey(mr.rkey));
	KUNIT_EXPECT_EQ(test, rnic_mr_key_index(mr.rkey), 0x123456);
	KUNIT_EXPECT_EQ(test, mr.rkey & 0xff, 0x79);
	KUNIT_EXPECT_EQ(test, mr.lkey, mr.rkey);
	/* the variant wraps inside its byte, never into the index */
	key = ib_inc_rkey(rnic_mr_key_make(7, 0xff));
	KUNIT_EXPECT_EQ(test, rnic_mr_key_index(key), 7);
	KUNIT_EXPECT_EQ(test, key & 0xff, 0);
}

static void mr_bounds(struct kunit *test)
{
	const u64 va = 0x10000, len = 0x3000;

	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(va, len, va, len));
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(va, len, va + 1, len - 1));
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(va, len, va + len - 1, 1));
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(va, len, va + len, 0));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va - 1, 1));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va, len + 1));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va + len, 1));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va + len + 1, 0));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, 0, 0));
}

static void mr_bounds_wrap(struct kunit *test)
{
	const u64 va = 0x10000, len = 0x3000;

	/* a length that would wrap iova + len back into the MR */
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va + 8, U64_MAX));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, va,
						  U64_MAX - va + 2));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, U64_MAX, 2));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(va, len, U64_MAX - 1, 0x20000));

	/* an MR that ends at the very top of the space */
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(U64_MAX - 0xfff, 0x1000,
						 U64_MAX, 1));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(U64_MAX - 0xfff, 0x1000,
						  U64_MAX, 2));

	/* the DMA MR covers [0, U64_MAX): anything that does not wrap */
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(0, U64_MAX, 0, U64_MAX));
	KUNIT_EXPECT_TRUE(test, rnic_mr_range_ok(0, U64_MAX, U64_MAX - 8, 8));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(0, U64_MAX, U64_MAX - 8, 9));
	KUNIT_EXPECT_FALSE(test, rnic_mr_range_ok(0, U64_MAX, 1, U64_MAX));
}

/* ------------------------------------------------------------------------
 * CQ ring
 */

struct cq_probe {
	int events;
	enum ib_event_type last;
	atomic_t comps;
};

static void cq_test_event(struct ib_event *ev, void *ctx)
{
	struct cq_probe *p = ctx;

	p->events++;
	p->last = ev->event;
}

static void cq_test_comp(struct ib_cq *ibcq, void *ctx)
{
	struct cq_probe *p = ctx;

	atomic_inc(&p->comps);
}

static struct rnic_ib_cq *cq_make(struct kunit *test, int cqe,
				  struct cq_probe *p)
{
	struct rnic_ib_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	struct ib_wc *queue;
	u32 size = rnic_cq_ring_size(cqe);

	KUNIT_ASSERT_NOT_NULL(test, cq);
	KUNIT_ASSERT_NE(test, size, 0);
	queue = kunit_kcalloc(test, size, sizeof(*queue), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, queue);
	rnic_cq_init_ring(cq, queue, size);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, cqe);
	cq->ibcq.event_handler = cq_test_event;
	cq->ibcq.comp_handler = cq_test_comp;
	cq->ibcq.cq_context = p;
	return cq;
}

static int cq_post_id(struct rnic_ib_cq *cq, u64 id, enum ib_wc_status st,
		      bool solicited)
{
	struct ib_wc wc = { .wr_id = id, .status = st };

	return rnic_cq_post(cq, &wc, solicited);
}

static void cq_ring_wrap(struct kunit *test)
{
	struct cq_probe p = {};
	struct rnic_ib_cq *cq = cq_make(test, 3, &p);
	struct ib_wc wc[8];
	u64 next = 0, want = 0;
	int round, i, n;

	/* free-running indices about to wrap through 2^32 */
	cq->head = U32_MAX - 5;
	cq->tail = U32_MAX - 5;
	for (round = 0; round < 6; round++) {
		for (i = 0; i < 3; i++)
			KUNIT_ASSERT_EQ(test, cq_post_id(cq, next++,
							 IB_WC_SUCCESS, false),
					0);
		n = rnic_cq_poll_ring(cq, 2, wc);
		KUNIT_ASSERT_EQ(test, n, 2);
		for (i = 0; i < n; i++)
			KUNIT_EXPECT_EQ(test, wc[i].wr_id, want++);
		n = rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc);
		KUNIT_ASSERT_EQ(test, n, 1);
		KUNIT_EXPECT_EQ(test, wc[0].wr_id, want++);
	}
	KUNIT_EXPECT_LT(test, cq->head, 16U);
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc), 0);
	KUNIT_EXPECT_EQ(test, p.events, 0);
}

static void cq_overflow(struct kunit *test)
{
	struct cq_probe p = {};
	struct rnic_ib_cq *cq = cq_make(test, 3, &p);
	struct ib_wc wc[8];
	int i;

	cq->head = U32_MAX - 1;
	cq->tail = U32_MAX - 1;
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, cq_post_id(cq, i, IB_WC_SUCCESS, false),
				0);
	/* the fourth does not fit in a CQ of 3: lost, and the CQ in error */
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 3, IB_WC_SUCCESS, false),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, p.events, 1);
	KUNIT_EXPECT_EQ(test, p.last, IB_EVENT_CQ_ERR);
	KUNIT_EXPECT_TRUE(test, cq->overflowed);
	/* refused from then on, with a single event */
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, 1, wc), 1);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 4, IB_WC_SUCCESS, false),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, p.events, 1);
	/* what was in the ring before is still delivered, in order */
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 0);
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 2);
}

/* completion handler calls so far, once the CQ's work has run */
static int cq_comps(struct rnic_ib_cq *cq, struct cq_probe *p)
{
	flush_work(&cq->comp_work);
	return atomic_read(&p->comps);
}

static void cq_notify(struct kunit *test)
{
	struct cq_probe p = {};
	struct rnic_ib_cq *cq = cq_make(test, 15, &p);
	struct ib_wc wc[16];

	/* an unarmed CQ stays quiet */
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 1, IB_WC_SUCCESS, true), 0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 0);

	/* REPORT_MISSED_EVENTS: 1 while completions wait, else 0 */
	KUNIT_EXPECT_EQ(test, rnic_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED |
					IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc), 1);
	KUNIT_EXPECT_EQ(test, rnic_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED |
					IB_CQ_REPORT_MISSED_EVENTS), 0);

	/* SOLICITED: not for an unsolicited success ... */
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 2, IB_WC_SUCCESS, false), 0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 0);
	/* ... but for an unsuccessful completion (IBA 11.4.2.2), once */
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 3, IB_WC_REM_ACCESS_ERR, false),
			0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 1);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 4, IB_WC_REM_ACCESS_ERR, true),
			0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 1);

	/* and for a solicited one */
	KUNIT_EXPECT_EQ(test, rnic_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED),
			0);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 5, IB_WC_SUCCESS, true), 0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 2);

	/* NEXT_COMP fires on anything, and is not narrowed by SOLICITED */
	rnic_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP);
	rnic_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 6, IB_WC_SUCCESS, false), 0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 3);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 7, IB_WC_SUCCESS, false), 0);
	KUNIT_EXPECT_EQ(test, cq_comps(cq, &p), 3);

	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc), 6);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc[5].wr_id, 7);
	KUNIT_EXPECT_EQ(test, p.events, 0);
}

static void cq_resize(struct kunit *test)
{
	struct cq_probe p = {};
	struct rnic_ib_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	struct ib_wc wc[16];
	struct ib_wc *queue;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, cq);
	/* rnic_resize_cq() frees the old ring: it must be rnic's own kind */
	queue = kvcalloc(4, sizeof(*queue), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, queue);
	rnic_cq_init_ring(cq, queue, 4);
	cq->ibcq.event_handler = cq_test_event;
	cq->ibcq.cq_context = &p;
	cq->head = U32_MAX - 1;
	cq->tail = U32_MAX - 1;

	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, cq_post_id(cq, i, IB_WC_SUCCESS, false),
				0);
	/* growing keeps what waits, in order, and makes room */
	KUNIT_EXPECT_EQ(test, rnic_resize_cq(&cq->ibcq, 10, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 15);
	for (i = 3; i < 15; i++)
		KUNIT_EXPECT_EQ(test, cq_post_id(cq, i, IB_WC_SUCCESS, false),
				0);
	KUNIT_EXPECT_EQ(test, cq_post_id(cq, 15, IB_WC_SUCCESS, false),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, p.events, 1);
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, 12, wc), 12);
	for (i = 0; i < 12; i++)
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, i);

	/* shrinking below what waits is refused; to just enough works */
	KUNIT_EXPECT_EQ(test, rnic_resize_cq(&cq->ibcq, 1, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_resize_cq(&cq->ibcq, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 3);
	KUNIT_EXPECT_EQ(test, rnic_cq_poll_ring(cq, ARRAY_SIZE(wc), wc), 3);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 12);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 14);
	KUNIT_EXPECT_EQ(test, rnic_resize_cq(&cq->ibcq, 0, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_resize_cq(&cq->ibcq, RNIC_IB_MAX_CQE + 1,
					     NULL), -EINVAL);
	kvfree(cq->queue);
}

static struct kunit_case rnic_verbs_cases[] = {
	KUNIT_CASE(qp_rc_reset_to_init),
	KUNIT_CASE(qp_rc_init_to_rtr),
	KUNIT_CASE(qp_rc_rtr_to_rts),
	KUNIT_CASE(qp_ud_and_gsi),
	KUNIT_CASE(qp_state_machine),
	KUNIT_CASE(wq_sizing),
	KUNIT_CASE(cq_sizing),
	KUNIT_CASE(key_format),
	KUNIT_CASE(mr_bounds),
	KUNIT_CASE(mr_bounds_wrap),
	KUNIT_CASE(cq_ring_wrap),
	KUNIT_CASE(cq_overflow),
	KUNIT_CASE(cq_notify),
	KUNIT_CASE(cq_resize),
	{}
};

static struct kunit_suite rnic_verbs_suite = {
	.name = "rnic_verbs",
	.test_cases = rnic_verbs_cases,
};

kunit_test_suite(rnic_verbs_suite);
