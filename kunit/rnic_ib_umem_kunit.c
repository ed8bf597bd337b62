// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the checks of a user context's create requests
 * (drivers/rnic_ib_umem.c) and the choice of its doorbell pages
 * (drivers/rnic_ib_uctx.c).
 *
 * A request names its rings by address and log2 sizes
 * (include/uapi/rdma/rnic-abi.h): every ring the kernel pins must be page
 * aligned, within the device's limits and large enough for the
 * capacities the caller asked for, or the create fails with -EINVAL
 * before anything is pinned or sent. Pages are set up as allocated, so
 * that no case sends the device a command.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <rdma/ib_verbs.h>

#include "rnic.h"
#include "rnic_verbs.h"

static const struct rnic_ib_caps umem_caps = {
	.max_cq_log2 = 14,
	.max_wq_log2 = 14,
	.max_sqe_log2 = RNIC_SQE_LOG2_MAX,
	.max_rqe_log2 = RNIC_RQE_LOG2_MAX,
};

/* Ring sizes: the shift, and no overflow from any pair of u8 fields */
static void uring_bytes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_ib_uring_bytes(2, 5), 128ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uring_bytes(14, 9), 8ULL << 20);
	KUNIT_EXPECT_EQ(test, rnic_ib_uring_bytes(0, 0), 1ULL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uring_bytes(63, 0), 1ULL << 63);
	KUNIT_EXPECT_EQ(test, rnic_ib_uring_bytes(200, 200), 0ULL);
}

/* A CQ of depth n holds n - 1 CQEs; the ring is page aligned */
static void ucq_check(struct kunit *test)
{
	const struct rnic_ib_caps *c = &umem_caps;

	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 2, 3), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 2, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 10, 1023), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 10, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 10, -1), -EINVAL);
	/* depth outside 4 .. 1 << max_cq_log2 */
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 1, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 14, 100), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE, 15, 100), -EINVAL);
	/* no ring, or one not on a page */
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, 0, 4, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_ucq_check(c, PAGE_SIZE + 64, 4, 3),
			-EINVAL);
}

/* Work rings: alignment, depth, WQE size, capacity asked for */
static void uwq_check(struct kunit *test)
{
	u64 va = 16 * PAGE_SIZE;

	/* 64 send WQEs of 128 bytes, for 64 WRs of a 128-byte WQE */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 6, 7, 6, 9, 14, 64, 7), 0);
	/* one WR more than the ring holds */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 6, 7, 6, 9, 14, 65, 7),
			-EINVAL);
	/* the SGEs or inline data asked for need a larger WQE */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 6, 7, 6, 9, 14, 64, 8),
			-EINVAL);
	/* WQE sizes outside the device's */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 6, 5, 6, 9, 14, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 6, 10, 6, 9, 14, 1, 0),
			-EINVAL);
	/* depths outside 4 .. 1 << max */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 1, 7, 6, 9, 14, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 15, 7, 6, 9, 14, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va, 14, 9, 6, 9, 14, 1, 0), 0);
	/* no ring, or an unaligned one */
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(0, 6, 7, 6, 9, 14, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_uwq_check(va + 8, 6, 7, 6, 9, 14, 1, 0),
			-EINVAL);
}

static struct rnic_ib_ucontext *udbp_env(struct kunit *test,
					 unsigned int pages)
{
	struct rnic_ibdev *ibd = kunit_kzalloc(test, sizeof(*ibd), GFP_KERNEL);
	struct rnic_ib_ucontext *uctx;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ibd);
	uctx = kunit_kzalloc(test, sizeof(*uctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, uctx);
	uctx->ibuc.device = &ibd->ibdev;
	mutex_init(&uctx->lock);
	for (i = 0; i < pages; i++) {
		uctx->pages[i].dbp.id = i;
		uctx->pages[i].dbp.allocated = true;
		uctx->pages[i].key = (u64)i << PAGE_SHIFT;
	}
	uctx->num_pages = pages;
	return uctx;
}

/* A context's slots: first page with room, a QP's two in one page */
static void udbp_slots(struct kunit *test)
{
	struct rnic_ib_ucontext *uctx = udbp_env(test, 2);
	struct rnic_ib_udbp *p;

	uctx->pages[0].dbp.used = RNIC_DBP_SLOTS - 1;
	p = rnic_ib_udbp_get(uctx, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p));
	KUNIT_EXPECT_PTR_EQ(test, p, &uctx->pages[1]);
	KUNIT_EXPECT_EQ(test, rnic_ib_udbp_key(uctx, &p->dbp),
			(u64)PAGE_SIZE);
	p = rnic_ib_udbp_get(uctx, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p));
	KUNIT_EXPECT_PTR_EQ(test, p, &uctx->pages[0]);
	KUNIT_EXPECT_EQ(test, uctx->pages[0].dbp.used, RNIC_DBP_SLOTS);
	rnic_ib_udbp_put(uctx, &uctx->pages[1].dbp, 2);
	KUNIT_EXPECT_EQ(test, uctx->pages[1].dbp.used, 0U);
}

/* A context that holds its last page full gets -ENOSPC, and no new page */
static void udbp_context_limit(struct kunit *test)
{
	struct rnic_ib_ucontext *uctx = udbp_env(test, RNIC_IB_UCTX_MAX_DBPS);
	unsigned int i;

	for (i = 0; i < RNIC_IB_UCTX_MAX_DBPS; i++)
		uctx->pages[i].dbp.used = RNIC_DBP_SLOTS - 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_udbp_get(uctx, 2)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, uctx->num_pages, (unsigned int)RNIC_IB_UCTX_MAX_DBPS);
	KUNIT_EXPECT_PTR_EQ(test, rnic_ib_udbp_get(uctx, 1), &uctx->pages[0]);
}

/*
 * A context refused in its response (a failed NIC) gets no page for any
 * object: no ALLOC_DB_PAGE is tried, the refusal's errno comes back
 */
static void udbp_refused_context(struct kunit *test)
{
	struct rnic_ib_ucontext *uctx = udbp_env(test, 0);

	uctx->refused = EIO;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_udbp_get(uctx, 1)), -EIO);
	KUNIT_EXPECT_EQ(test, uctx->num_pages, 0U);
	uctx->refused = ENOSPC;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_udbp_get(uctx, 0)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, uctx->num_pages, 0U);
}

static struct kunit_case rnic_ib_umem_cases[] = {
	KUNIT_CASE(uring_bytes),
	KUNIT_CASE(ucq_check),
	KUNIT_CASE(uwq_check),
	KUNIT_CASE(udbp_slots),
	KUNIT_CASE(udbp_context_limit),
	KUNIT_CASE(udbp_refused_context),
	{}
};

static struct kunit_suite rnic_ib_umem_suite = {
	.name = "rnic_ib_umem",
	.test_cases = rnic_ib_umem_cases,
};

kunit_test_suite(rnic_ib_umem_suite);
