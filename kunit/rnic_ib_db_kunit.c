// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the choice of a doorbell page (drivers/rnic_ib_db.c).
 *
 * The device advertises 4096 QPs and 4096 CQs while one doorbell page
 * holds RNIC_DBP_SLOTS slots: with a single page the driver refused the
 * 255th QP with -ENOSPC (found by tools/rnic_scale's limits command).
 * These cases pin down how slots are counted per page and which page a
 * new object gets. Pages are set up as allocated, so that no case sends
 * the device a command.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "rnic.h"
#include "rnic_verbs.h"

static struct rnic_ibdev *db_env(struct kunit *test, unsigned int pages,
				 unsigned int allocated)
{
	struct rnic_ibdev *ibd = kunit_kzalloc(test, sizeof(*ibd), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ibd);
	mutex_init(&ibd->dbp_lock);
	ibd->caps.num_db_pages = pages;
	for (i = 0; i < allocated; i++) {
		ibd->dbps[i].id = i;
		ibd->dbps[i].allocated = true;
	}
	ibd->num_dbps = allocated;
	return ibd;
}

/* A page fills one slot at a time; a QP's two never straddle two pages */
static void dbp_fills_first_page_first(struct kunit *test)
{
	struct rnic_ibdev *ibd = db_env(test, 2, 2);
	struct rnic_ib_dbp *p;
	unsigned int i;

	for (i = 0; i < RNIC_DBP_SLOTS - 1; i++) {
		p = rnic_ib_dbp_get(ibd, 1);
		KUNIT_ASSERT_PTR_EQ(test, p, &ibd->dbps[0]);
	}
	/* one slot left in page 0: a QP goes to page 1, a CQ still fits */
	KUNIT_EXPECT_PTR_EQ(test, rnic_ib_dbp_get(ibd, 2), &ibd->dbps[1]);
	KUNIT_EXPECT_PTR_EQ(test, rnic_ib_dbp_get(ibd, 1), &ibd->dbps[0]);
	KUNIT_EXPECT_EQ(test, ibd->dbps[0].used, RNIC_DBP_SLOTS);
	KUNIT_EXPECT_EQ(test, ibd->dbps[1].used, 2);
}

/* Slots given back are used again, in the first page with room */
static void dbp_put_makes_room(struct kunit *test)
{
	struct rnic_ibdev *ibd = db_env(test, 2, 2);

	ibd->dbps[0].used = RNIC_DBP_SLOTS;
	ibd->dbps[1].used = RNIC_DBP_SLOTS;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_dbp_get(ibd, 1)), -ENOSPC);
	rnic_ib_dbp_put(ibd, &ibd->dbps[1], 2);
	KUNIT_EXPECT_EQ(test, ibd->dbps[1].used, RNIC_DBP_SLOTS - 2);
	KUNIT_EXPECT_PTR_EQ(test, rnic_ib_dbp_get(ibd, 2), &ibd->dbps[1]);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_dbp_get(ibd, 1)), -ENOSPC);
}

/*
 * All the pages the device has are taken and full: -ENOSPC, and no new
 * page asked for (no device here to ask; the attempt would oops).
 */
static void dbp_full_device_is_enospc(struct kunit *test)
{
	struct rnic_ibdev *ibd = db_env(test, 1, 1);

	ibd->dbps[0].used = RNIC_DBP_SLOTS - 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rnic_ib_dbp_get(ibd, 2)), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ibd->dbps[0].used, RNIC_DBP_SLOTS - 1);
	KUNIT_EXPECT_EQ(test, ibd->num_dbps, 1U);
	KUNIT_EXPECT_PTR_EQ(test, rnic_ib_dbp_get(ibd, 1), &ibd->dbps[0]);
}

static struct kunit_case rnic_ib_db_cases[] = {
	KUNIT_CASE(dbp_fills_first_page_first),
	KUNIT_CASE(dbp_put_makes_room),
	KUNIT_CASE(dbp_full_device_is_enospc),
	{}
};

static struct kunit_suite rnic_ib_db_suite = {
	.name = "rnic_ib_db",
	.test_cases = rnic_ib_db_cases,
};

kunit_test_suite(rnic_ib_db_suite);
