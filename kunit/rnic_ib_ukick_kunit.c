// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the kick through the kernel of user objects
 * (drivers/rnic_ib_post.c, drivers/rnic_ib_cq.c, drivers/rnic_ib_db.c).
 *
 * A user context that cannot map the kick register writes its doorbell
 * slots itself and asks the kernel to kick: a post_send with no WRs (the
 * QP's send and receive slots), a post_recv or post_srq_recv with none,
 * a req_notify_cq (the arm is already in the CQ's slot). The kernel then
 * appends the kick entries to the context's page and writes the kick; it
 * never writes the slots, never touches a ring (a user object has none in
 * the kernel), and refuses WRs and polls for user objects. The doorbell
 * page and BAR0 are normal memory here, as in rnic_ib_cq_kunit.c.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "rnic.h"
#include "rnic_verbs.h"
#include "rnic_kunit_bars.h"

#define UK_KICK		0x00030002
#define UK_CQ_SLOT	7
#define UK_SQ_SLOT	20
#define UK_RQ_SLOT	21
#define UK_SRQ_SLOT	30

struct uk_env {
	struct rnic_ibdev ibd;
	struct rnic_dev rdev;
	struct rnic_ib_ucontext uctx;
	struct rnic_db_page *page;
	u32 *bar0;
	struct rnic_ib_cq cq;
	struct rnic_ib_qp qp;
	struct rnic_ib_srq srq;
};

static int uk_env_init(struct kunit *test)
{
	struct uk_env *env;
	struct rnic_ib_dbp *dbp;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	/* the context's first page, as rnic_ib_udbp_get() would give it */
	dbp = &env->uctx.pages[0].dbp;
	rnic_kunit_bars(test, &env->ibd, &env->rdev, dbp, UK_KICK,
			&env->page, &env->bar0);
	dbp->allocated = true;
	env->uctx.num_pages = 1;
	env->uctx.ibuc.device = &env->ibd.ibdev;

	env->cq.ibcq.device = &env->ibd.ibdev;
	env->cq.uctx = &env->uctx;
	env->cq.dbp = dbp;
	env->cq.db_off = UK_CQ_SLOT * sizeof(__le32);
	env->cq.log2_depth = 2;
	spin_lock_init(&env->cq.lock);

	env->qp.ibqp.device = &env->ibd.ibdev;
	env->qp.ibqp.qp_type = IB_QPT_RC;
	env->qp.uctx = &env->uctx;
	env->qp.state = IB_QPS_RTS;
	env->qp.sq.dbp = dbp;
	env->qp.sq.db_off = UK_SQ_SLOT * sizeof(__le32);
	env->qp.rq.dbp = dbp;
	env->qp.rq.db_off = UK_RQ_SLOT * sizeof(__le32);

	env->srq.ibsrq.device = &env->ibd.ibdev;
	env->srq.uctx = &env->uctx;
	env->srq.dbp = dbp;
	env->srq.db_off = UK_SRQ_SLOT * sizeof(__le32);
	env->srq.log2_depth = 2;
	spin_lock_init(&env->srq.lock);

	/* what the process wrote into its slots before asking */
	env->page->slot[UK_CQ_SLOT] = cpu_to_le32(0x11);
	env->page->slot[UK_SQ_SLOT] = cpu_to_le32(0x22);
	env->page->slot[UK_RQ_SLOT] = cpu_to_le32(0x33);
	env->page->slot[UK_SRQ_SLOT] = cpu_to_le32(0x44);
	test->priv = env;
	return 0;
}

static u16 uk_kick_pi(const struct uk_env *env)
{
	return FIELD_GET(RNIC_DBP_KICK_PI,
			 le32_to_cpu(READ_ONCE(env->page->kick_pi)));
}

static u16 uk_kick(const struct uk_env *env, unsigned int i)
{
	return le16_to_cpu(READ_ONCE(env->page->kick[i]));
}

static u32 uk_bar0(const struct uk_env *env)
{
	return READ_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)]);
}

/* The process's slot values are never rewritten by a kernel kick */
static void uk_expect_slots(struct kunit *test, const struct uk_env *env)
{
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[UK_CQ_SLOT]), 0x11U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[UK_SQ_SLOT]), 0x22U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[UK_RQ_SLOT]), 0x33U);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(env->page->slot[UK_SRQ_SLOT]), 0x44U);
}

/* An arm: the CQ's slot named, one kick, the arm left as written */
static void ucq_arm_kicks(struct kunit *test)
{
	struct uk_env *env = test->priv;

	KUNIT_EXPECT_EQ(test, rnic_ib_req_notify_cq(&env->cq.ibcq,
						    IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 1);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 0), UK_CQ_SLOT);
	KUNIT_EXPECT_EQ(test, uk_bar0(env), (u32)UK_KICK);
	uk_expect_slots(test, env);
}

/* A user CQ has no ring in the kernel: poll_cq refuses, reads nothing */
static void ucq_poll_refused(struct kunit *test)
{
	struct uk_env *env = test->priv;
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, rnic_ib_poll_cq(&env->cq.ibcq, 1, &wc),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 0);
}

/* post_send with no WRs: the send slot, then the receive slot */
static void uqp_send_kicks_both(struct kunit *test)
{
	struct uk_env *env = test->priv;
	const struct ib_send_wr *bad = NULL;

	KUNIT_EXPECT_EQ(test, rnic_ib_post_send(&env->qp.ibqp, NULL, &bad), 0);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 2);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 0), UK_SQ_SLOT);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 1), UK_RQ_SLOT);
	KUNIT_EXPECT_EQ(test, uk_bar0(env), (u32)UK_KICK);
	uk_expect_slots(test, env);

	/* with an SRQ the QP has no receive slot */
	env->qp.srq = &env->srq;
	KUNIT_EXPECT_EQ(test, rnic_ib_post_send(&env->qp.ibqp, NULL, &bad), 0);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 3);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 2), UK_SQ_SLOT);
}

/* post_recv and post_srq_recv with no WRs: their one slot */
static void urecv_kicks(struct kunit *test)
{
	struct uk_env *env = test->priv;
	const struct ib_recv_wr *bad = NULL;

	KUNIT_EXPECT_EQ(test, rnic_ib_post_recv(&env->qp.ibqp, NULL, &bad), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_post_srq_recv(&env->srq.ibsrq, NULL,
						    &bad), 0);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 2);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 0), UK_RQ_SLOT);
	KUNIT_EXPECT_EQ(test, uk_kick(env, 1), UK_SRQ_SLOT);
	uk_expect_slots(test, env);
}

/* WRs through the kernel for a user object: refused, the first is bad */
static void uwr_refused(struct kunit *test)
{
	struct uk_env *env = test->priv;
	struct ib_send_wr swr = { .opcode = IB_WR_SEND };
	struct ib_recv_wr rwr = {};
	const struct ib_send_wr *sbad = NULL;
	const struct ib_recv_wr *rbad = NULL;

	KUNIT_EXPECT_EQ(test, rnic_ib_post_send(&env->qp.ibqp, &swr, &sbad),
			-EOPNOTSUPP);
	KUNIT_EXPECT_PTR_EQ(test, sbad, (const struct ib_send_wr *)&swr);
	KUNIT_EXPECT_EQ(test, rnic_ib_post_recv(&env->qp.ibqp, &rwr, &rbad),
			-EOPNOTSUPP);
	KUNIT_EXPECT_PTR_EQ(test, rbad, (const struct ib_recv_wr *)&rwr);
	rbad = NULL;
	KUNIT_EXPECT_EQ(test, rnic_ib_post_srq_recv(&env->srq.ibsrq, &rwr,
						    &rbad), -EOPNOTSUPP);
	KUNIT_EXPECT_PTR_EQ(test, rbad, (const struct ib_recv_wr *)&rwr);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 0);
	KUNIT_EXPECT_EQ(test, uk_bar0(env), 0U);
}

/* After a fatal error nothing reaches the device, and the caller knows */
static void ukick_after_fatal(struct kunit *test)
{
	struct uk_env *env = test->priv;
	const struct ib_send_wr *bad = NULL;

	env->ibd.fatal = true;
	KUNIT_EXPECT_EQ(test, rnic_ib_post_send(&env->qp.ibqp, NULL, &bad),
			-EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_req_notify_cq(&env->cq.ibcq,
						    IB_CQ_NEXT_COMP), -EIO);
	KUNIT_EXPECT_EQ(test, uk_kick_pi(env), 0);
	KUNIT_EXPECT_EQ(test, uk_bar0(env), 0U);
}

static struct kunit_case rnic_ib_ukick_cases[] = {
	KUNIT_CASE(ucq_arm_kicks),
	KUNIT_CASE(ucq_poll_refused),
	KUNIT_CASE(uqp_send_kicks_both),
	KUNIT_CASE(urecv_kicks),
	KUNIT_CASE(uwr_refused),
	KUNIT_CASE(ukick_after_fatal),
	{}
};

static struct kunit_suite rnic_ib_ukick_suite = {
	.name = "rnic_ib_ukick",
	.init = uk_env_init,
	.test_cases = rnic_ib_ukick_cases,
};

kunit_test_suite(rnic_ib_ukick_suite);
