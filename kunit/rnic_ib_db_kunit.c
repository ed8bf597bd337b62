// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the choice of a doorbell page (drivers/rnic_ib_db.c),
 * and for the kick the driver skips while the device is behind.
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
#include "rnic_kunit_bars.h"

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

/* A page and a kick register in memory, the device's caps @caps */
struct kick_env {
	struct rnic_ibdev ibd;
	struct rnic_dev rdev;
	struct rnic_db_page *page;
	u32 *bar0;
};

#define KICK_VALUE	0x30001
#define KICK_SLOT_OFF	0x40

static struct kick_env *kick_env(struct kunit *test, u32 caps)
{
	struct kick_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, env);
	rnic_kunit_bars(test, &env->ibd, &env->rdev, &env->ibd.dbps[0],
			KICK_VALUE, &env->page, &env->bar0);
	env->ibd.caps.flags = caps;
	return env;
}

/* Ring once; the kick register's value afterwards (0: not written) */
static u32 kick_ring(struct kick_env *env, u32 val)
{
	WRITE_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)], 0);
	rnic_ib_db_ring(&env->ibd, &env->ibd.dbps[0], KICK_SLOT_OFF, val);
	return READ_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)]);
}

static void kick_ci_set(struct kick_env *env, u32 ci)
{
	WRITE_ONCE(env->page->kick_ci, cpu_to_le32(ci));
}

/*
 * RNIC_RDMA_CAP_KICK_CI: the kick is written only when kick_ci shows the
 * device done with every entry before the new one; entries the device
 * has not reached yet, or has already read, need none.
 */
static void db_kick_skipped_while_device_behind(struct kunit *test)
{
	struct kick_env *env = kick_env(test, RNIC_RDMA_CAP_KICK_CI);

	/* nothing written before: the device is idle, kick */
	KUNIT_EXPECT_EQ(test, kick_ring(env, 1), KICK_VALUE);
	/* entry 0 not consumed yet: the device will see entry 1 too */
	KUNIT_EXPECT_EQ(test, kick_ring(env, 2), 0);
	/* the slot, the entry and kick_pi are written all the same */
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[KICK_SLOT_OFF / 4]), 2);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(env->page->kick[1]), KICK_SLOT_OFF / 4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 2);
	/* the device consumed both: the next entry kicks */
	kick_ci_set(env, 2);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 3), KICK_VALUE);
	/* it already read entry 3 (its second look): no kick for entry 4 */
	kick_ci_set(env, 4);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 4), 0);
	/* rdma statistic's kicks_skipped */
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->ibd.stats[RNIC_IB_STAT_kicks_skipped]),
			2);
}

/* kick_pi and kick_ci are 16-bit counts: equal across the wrap too */
static void db_kick_ci_wraps(struct kunit *test)
{
	struct kick_env *env = kick_env(test, RNIC_RDMA_CAP_KICK_CI);

	env->ibd.dbps[0].kick_pi = 0xffff;
	/* bits above the count are not part of it */
	kick_ci_set(env, 0xabcdffff);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 1), KICK_VALUE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 0);
	kick_ci_set(env, 0);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 2), KICK_VALUE);
	kick_ci_set(env, 0xfffe);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 3), 0);
}

/* A device without the capability is kicked for every batch */
static void db_kick_always_without_cap(struct kunit *test)
{
	struct kick_env *env = kick_env(test, RNIC_RDMA_CAP_ALL &
					      ~RNIC_RDMA_CAP_KICK_CI);

	KUNIT_EXPECT_EQ(test, kick_ring(env, 1), KICK_VALUE);
	/* kick_ci far behind (or garbage) changes nothing */
	kick_ci_set(env, 0x1234);
	KUNIT_EXPECT_EQ(test, kick_ring(env, 2), KICK_VALUE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 2);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&env->ibd.stats[RNIC_IB_STAT_kicks_skipped]),
			0);
}

/* Post receives once; the kick register's value afterwards (0: none) */
static u32 recv_ring(struct kick_env *env, u32 val, bool flush)
{
	WRITE_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)], 0);
	rnic_ib_db_recv(&env->ibd, &env->ibd.dbps[0], KICK_SLOT_OFF, val,
			flush);
	return READ_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)]);
}

static u64 recv_slot_only(struct kick_env *env)
{
	return atomic64_read(&env->ibd.stats[RNIC_IB_STAT_recv_slot_only]);
}

/*
 * RNIC_RDMA_CAP_RQ_PEEK: a receive post is the slot write alone, unless
 * the QP is in ERR (its receives flushed now, not at the next heartbeat);
 * a device without the capability is named the slot and kicked always.
 */
static void db_recv_slot_only_with_rq_peek(struct kunit *test)
{
	struct kick_env *env = kick_env(test, RNIC_RDMA_CAP_ALL);

	KUNIT_EXPECT_EQ(test, recv_ring(env, 5, false), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[KICK_SLOT_OFF / 4]), 5);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 0);
	KUNIT_EXPECT_EQ(test, env->ibd.dbps[0].kick_pi, 0);
	KUNIT_EXPECT_EQ(test, recv_slot_only(env), 1);
	/* in ERR: named and kicked (kick_ci 0: the device is idle) */
	KUNIT_EXPECT_EQ(test, recv_ring(env, 6, true), KICK_VALUE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[KICK_SLOT_OFF / 4]), 6);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(env->page->kick[0]), KICK_SLOT_OFF / 4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 1);
	KUNIT_EXPECT_EQ(test, recv_slot_only(env), 1);

	env = kick_env(test, RNIC_RDMA_CAP_ALL & ~RNIC_RDMA_CAP_RQ_PEEK);
	KUNIT_EXPECT_EQ(test, recv_ring(env, 1, false), KICK_VALUE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->kick_pi), 1);
	KUNIT_EXPECT_EQ(test, recv_slot_only(env), 0);
}

static struct kunit_case rnic_ib_db_cases[] = {
	KUNIT_CASE(db_kick_skipped_while_device_behind),
	KUNIT_CASE(db_kick_ci_wraps),
	KUNIT_CASE(db_kick_always_without_cap),
	KUNIT_CASE(db_recv_slot_only_with_rq_peek),
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
