// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for CQ arming (drivers/rnic_ib_cq.c): the slot values
 * req_notify_cq and poll_cq write, and what req_notify_cq returns.
 *
 * One slot word carries a CQ's consumer index and its arm, and the device
 * reads it when it gets to a kick, not when the kick was written. A poll
 * right after an arm (RDS does that) once rewrote the slot with ARM clear
 * before the device had read it: the arm was lost and half of RDS's
 * connections stalled. The lab sees that only when timing exposes it;
 * here every slot value is read back. The doorbell page and BAR0 are
 * normal memory (the driver reaches both through pointers), so the test
 * sees what the device would.
 */
#include <kunit/test.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rnic.h"
#include "rnic_verbs.h"
#include "rnic_kunit_bars.h"

#define CQ_LOG2		2		/* 4 CQEs: the ring wraps quickly */
#define CQ_DEPTH	BIT(CQ_LOG2)
#define CQ_CQN		3
#define CQ_SLOT		10
#define QP_QPN		0x42
#define SQ_LOG2		4
#define DBP_KICK	0x00030002	/* any value: BAR0 gets it as is */

struct cq_env {
	struct rnic_ibdev ibd;
	struct rnic_dev rdev;
	struct rnic_db_page *dbp;
	u32 *bar0;
	struct rnic_ib_cq cq;
	struct rnic_ib_qp qp;
	u64 sq_wrid[BIT(SQ_LOG2)];
	u64 rq_wrid[BIT(SQ_LOG2)];
	struct ib_wc wc[8];
	atomic_t fatal_works;
};

/* Stands in for rnic_ib_fatal_work(): only counts that it was queued */
static void cq_env_fatal_work(struct work_struct *work)
{
	struct cq_env *env = container_of(work, struct cq_env, ibd.fatal_work);

	atomic_inc(&env->fatal_works);
}

static int cq_env_init(struct kunit *test)
{
	struct cq_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	/* the writel()s of rnic_ib_db_*() land in these instead of BARs */
	rnic_kunit_bars(test, &env->ibd, &env->rdev, &env->ibd.dbps[0],
			DBP_KICK, &env->dbp, &env->bar0);
	xa_init_flags(&env->ibd.qp_xa, XA_FLAGS_LOCK_IRQ);
	INIT_WORK(&env->ibd.fatal_work, cq_env_fatal_work);

	env->cq.ibcq.device = &env->ibd.ibdev;
	env->cq.ring = kunit_kcalloc(test, CQ_DEPTH, sizeof(*env->cq.ring),
				     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env->cq.ring);
	env->cq.log2_depth = CQ_LOG2;
	env->cq.cqn = CQ_CQN;
	env->cq.dbp = &env->ibd.dbps[0];
	env->cq.db_off = CQ_SLOT * sizeof(__le32);
	spin_lock_init(&env->cq.lock);

	/* an RC QP with both queues on the CQ, nothing posted */
	env->qp.ibqp.qp_type = IB_QPT_RC;
	env->qp.ibqp.qp_num = QP_QPN;
	env->qp.send_cqn = CQ_CQN;
	env->qp.recv_cqn = CQ_CQN;
	env->qp.sq.log2_depth = SQ_LOG2;
	env->qp.sq.wrid = env->sq_wrid;
	env->qp.rq.log2_depth = SQ_LOG2;
	env->qp.rq.wrid = env->rq_wrid;
	spin_lock_init(&env->qp.sq.lock);
	spin_lock_init(&env->qp.rq.lock);
	KUNIT_ASSERT_EQ(test, xa_insert_irq(&env->ibd.qp_xa, QP_QPN, &env->qp,
					    GFP_KERNEL), 0);
	test->priv = env;
	return 0;
}

static void cq_env_exit(struct kunit *test)
{
	struct cq_env *env = test->priv;

	cancel_work_sync(&env->ibd.fatal_work);
	xa_destroy(&env->ibd.qp_xa);
}

static u32 slot_val(const struct cq_env *env)
{
	return le32_to_cpu(READ_ONCE(env->dbp->slot[CQ_SLOT]));
}

static u16 kick_pi(const struct cq_env *env)
{
	return FIELD_GET(RNIC_DBP_KICK_PI, le32_to_cpu(READ_ONCE(env->dbp->kick_pi)));
}

static u32 bar0_doorbell(const struct cq_env *env)
{
	return READ_ONCE(env->bar0[RNIC_IVSHMEM_DOORBELL / sizeof(u32)]);
}

/*
 * What a slot must say: CI, and the arm with its sequence and kind. Built
 * from the contract's fields, not with rnic_db_rdma_cq(), which the
 * driver uses. In loops the first wrong slot ends the case (@stop): a
 * few hundred failures would push the KTAP out of the kernel log.
 */
static void check_slot_at(struct kunit *test, int line, bool stop, u32 got,
			  u16 ci, bool arm, bool sol, u8 seq)
{
	u32 want = FIELD_PREP(RNIC_DB_CQ_CI, ci) |
		   FIELD_PREP(RNIC_DB_CQ_ARM_SEQ, seq) |
		   (arm ? RNIC_DB_CQ_ARM : 0) |
		   (sol ? RNIC_DB_CQ_SOLICITED : 0);

	if (stop)
		KUNIT_ASSERT_EQ_MSG(test, got, want,
				    "line %d: slot %#x, want %#x (CI %u, ARM %d, SOLICITED %d, ARM_SEQ %u)",
				    line, got, want, ci, arm, sol, seq);
	else
		KUNIT_EXPECT_EQ_MSG(test, got, want,
				    "line %d: slot %#x, want %#x (CI %u, ARM %d, SOLICITED %d, ARM_SEQ %u)",
				    line, got, want, ci, arm, sol, seq);
}

#define expect_slot(test, ...) check_slot_at(test, __LINE__, false, __VA_ARGS__)
#define assert_slot(test, ...) check_slot_at(test, __LINE__, true, __VA_ARGS__)

/*
 * The device writes a successful send CQE for SQ WQE @wqe_idx at the
 * CQ's free-running index @idx (its phase says which lap).
 */
static void dev_cqe(struct cq_env *env, u16 idx, u16 wqe_idx)
{
	struct rnic_rdma_cqe *c = &env->cq.ring[idx & (CQ_DEPTH - 1)];

	memset(c, 0, sizeof(*c));
	c->opcode = RNIC_SQE_OP_SEND;
	c->status = RNIC_WC_SUCCESS;
	c->qpn = cpu_to_le32(QP_QPN);
	c->wqe_idx = cpu_to_le16(wqe_idx);
	c->byte_len = cpu_to_le32(64);
	if (rnic_ring_phase(idx, CQ_LOG2))
		c->flags = RNIC_RCQE_F_PHASE;
}

/* A signaled SEND was posted (the SQ's slot is not under test) */
static u16 post_send(struct cq_env *env, u64 wr_id)
{
	u16 idx = env->qp.sq.pi++;

	env->sq_wrid[idx & (BIT(SQ_LOG2) - 1)] = wr_id;
	return idx;
}

/* post, and the device completes it at the CQ's next index */
static void send_completes(struct cq_env *env, u16 cqe_idx, u64 wr_id)
{
	dev_cqe(env, cqe_idx, post_send(env, wr_id));
}

static int notify(struct cq_env *env, enum ib_cq_notify_flags flags)
{
	return rnic_ib_req_notify_cq(&env->cq.ibcq, flags);
}

static int poll(struct cq_env *env, int num, struct ib_wc *wc)
{
	return rnic_ib_poll_cq(&env->cq.ibcq, num, wc);
}

/*
 * The issue 18 race at the driver's end: req_notify_cq, then poll_cq
 * consuming CQEs before the device has read the arm. Every consumer
 * index write after the arm repeats it (ARM, same ARM_SEQ), with the new
 * CI, and is not kicked: only the arm is. Before any arm, a poll writes
 * no arm at all.
 */
static void cq_poll_after_arm_keeps_the_arm(struct kunit *test)
{
	struct cq_env *env = test->priv;
	struct ib_wc wc;
	u8 seq;
	int i;

	/* never armed: a CI update arms nothing */
	send_completes(env, 0, 100);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 100);
	expect_slot(test, slot_val(env), 1, false, false, 0);
	KUNIT_EXPECT_EQ(test, kick_pi(env), 0);
	KUNIT_EXPECT_EQ(test, bar0_doorbell(env), 0);

	/* the arm: slot, a kick entry naming it, kick_pi, then BAR0 */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot_val(env));
	expect_slot(test, slot_val(env), 1, true, false, seq);
	KUNIT_EXPECT_EQ(test, kick_pi(env), 1);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(env->dbp->kick[0]), CQ_SLOT);
	KUNIT_EXPECT_EQ(test, bar0_doorbell(env), DBP_KICK);

	/* CQEs arrive; each poll rewrites the slot and keeps the arm */
	for (i = 0; i < 3; i++)
		send_completes(env, 1 + i, 200 + i);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 200 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		expect_slot(test, slot_val(env), 2 + i, true, false, seq);
	}
	/* a poll that finds nothing */
	KUNIT_EXPECT_EQ(test, poll(env, ARRAY_SIZE(env->wc), env->wc), 0);
	expect_slot(test, slot_val(env), 4, true, false, seq);
	/* CI updates need no kick: still the arm's one */
	KUNIT_EXPECT_EQ(test, kick_pi(env), 1);

	/* several CQEs in one poll, on the ring's second lap: the last CI */
	for (i = 0; i < 3; i++)
		send_completes(env, 4 + i, 300 + i);
	KUNIT_ASSERT_EQ(test, poll(env, ARRAY_SIZE(env->wc), env->wc), 3);
	expect_slot(test, slot_val(env), 7, true, false, seq);
	KUNIT_EXPECT_EQ(test, kick_pi(env), 1);
	KUNIT_EXPECT_EQ(test, env->qp.sq.ci, env->qp.sq.pi);
}

/*
 * Each req_notify_cq is a new arm: a new ARM_SEQ (the device takes an arm
 * once per sequence, so a repeated one would arm nothing), never the
 * previous one, across the 8-bit sequence's wrap; each is kicked, with
 * the current CI.
 */
static void cq_rearm_bumps_arm_seq(struct kunit *test)
{
	struct cq_env *env = test->priv;
	u8 seq, prev;
	struct ib_wc wc;
	int i;

	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	prev = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot_val(env));
	for (i = 1; i <= 300; i++) {
		/* an event, a poll, the next arm: ib_core's loop */
		send_completes(env, env->cq.ci, i);
		KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
		assert_slot(test, slot_val(env), i, true, false, prev);
		KUNIT_ASSERT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
		seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot_val(env));
		KUNIT_ASSERT_EQ_MSG(test, seq, (u8)(prev + 1), "arm %d", i);
		assert_slot(test, slot_val(env), i, true, false, seq);
		KUNIT_ASSERT_EQ(test, kick_pi(env), (u16)(i + 1));
		KUNIT_ASSERT_EQ(test,
				le16_to_cpu(env->dbp->kick[i % RNIC_DBP_KICK_DEPTH]),
				CQ_SLOT);
		prev = seq;
	}
	/* arms with no poll in between are new arms too */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot_val(env)),
			(u8)(prev + 1));
}

/*
 * IB_CQ_SOLICITED arms for solicited (and error) CQEs only: the slot says
 * so, polls keep saying so, and the next IB_CQ_NEXT_COMP arm clears it.
 * SMC arms with IB_CQ_SOLICITED_MASK-style flags and
 * IB_CQ_REPORT_MISSED_EVENTS, which must not change the kind.
 */
static void cq_solicited_arm(struct kunit *test)
{
	struct cq_env *env = test->priv;
	struct ib_wc wc;
	u8 seq;

	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_SOLICITED), 0);
	seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot_val(env));
	expect_slot(test, slot_val(env), 0, true, true, seq);
	send_completes(env, 0, 1);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	expect_slot(test, slot_val(env), 1, true, true, seq);

	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	expect_slot(test, slot_val(env), 1, true, false, seq + 1);
	send_completes(env, 1, 2);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	expect_slot(test, slot_val(env), 2, true, false, seq + 1);

	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_SOLICITED |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
	expect_slot(test, slot_val(env), 2, true, true, seq + 2);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
	expect_slot(test, slot_val(env), 2, true, false, seq + 3);
}

/*
 * IB_CQ_REPORT_MISSED_EVENTS: 1 when a CQE is at CI (its phase is this
 * lap's), so that ib_core polls again; 0 when the ring is empty, which
 * is the entry at CI still holding the previous lap's CQE once the ring
 * has gone round. Many laps, and the 16-bit CI's wrap, with a ring of 4.
 */
static void cq_report_missed_events(struct kunit *test)
{
	struct cq_env *env = test->priv;
	const u16 start = 0xfff0;
	struct ib_wc wc;
	int n;
	u16 i;

	/* a fresh ring is all zero: phase 0, not the first lap's 1 */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
	send_completes(env, 0, 1);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	/* a solicited arm reports any CQE: a spurious re-poll is harmless */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_SOLICITED |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	/* >0 only if asked (ib_verbs.h) */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);

	/* the ring as the device left it a lap before start */
	env->cq.ci = start;
	env->qp.sq.ci = start;
	env->qp.sq.pi = start;
	for (i = 0; i < CQ_DEPTH; i++)
		dev_cqe(env, start - CQ_DEPTH + i, 0);
	for (n = 0, i = start; n <= 8 * CQ_DEPTH; n++, i++) {
		KUNIT_ASSERT_EQ_MSG(test,
				    notify(env, IB_CQ_NEXT_COMP |
						IB_CQ_REPORT_MISSED_EVENTS),
				    0, "ci %#x, empty", i);
		send_completes(env, i, i);
		KUNIT_ASSERT_EQ_MSG(test,
				    notify(env, IB_CQ_NEXT_COMP |
						IB_CQ_REPORT_MISSED_EVENTS),
				    1, "ci %#x, a CQE", i);
		KUNIT_ASSERT_EQ(test, poll(env, 2, env->wc), 1);
		assert_slot(test, slot_val(env), i + 1, true, false,
			    env->cq.arm_seq);
	}
	/* two CQEs waiting, one polled: still one there */
	send_completes(env, env->cq.ci, 1);
	send_completes(env, env->cq.ci + 1, 2);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_ASSERT_EQ(test, poll(env, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
}

/*
 * After a fatal error the device writes nothing and reads no doorbell:
 * req_notify_cq answers from the CQEs it left and the WRs poll_cq will
 * flush. Pending and asked to report: 1, and the caller polls. Pending
 * and not asked: 0, and the completion handler is due from fatal_work.
 * Nothing pending: 0, and the arm is the driver's to honour later.
 */
static void cq_fatal_notify(struct kunit *test)
{
	struct cq_env *env = test->priv;
	struct ib_wc *wc = env->wc;
	u32 slot;
	int n;

	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	slot = slot_val(env);
	WRITE_ONCE(env->ibd.fatal, true);

	/* nothing outstanding, nothing in the ring */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
	KUNIT_EXPECT_TRUE(test, env->cq.sw_armed);
	KUNIT_EXPECT_FALSE(test, env->cq.sw_event);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	flush_work(&env->ibd.fatal_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->fatal_works), 0);
	/* a failed device is not rung */
	KUNIT_EXPECT_EQ(test, slot_val(env), slot);
	KUNIT_EXPECT_EQ(test, kick_pi(env), 1);

	/* two SENDs outstanding: poll_cq will flush them */
	post_send(env, 11);
	post_send(env, 12);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_SOLICITED |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	flush_work(&env->ibd.fatal_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->fatal_works), 0);
	/* not asked to report: the handler is due instead */
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_TRUE(test, env->cq.sw_event);
	KUNIT_EXPECT_FALSE(test, env->cq.sw_armed);
	flush_work(&env->ibd.fatal_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->fatal_works), 1);
	n = poll(env, ARRAY_SIZE(env->wc), wc);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 11);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 12);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);

	/* a receive outstanding counts as much */
	env->qp.rq.pi++;
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_ASSERT_EQ(test, poll(env, ARRAY_SIZE(env->wc), wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RECV);

	/* a CQE the device wrote before it failed, its WR retired by it */
	send_completes(env, env->cq.ci, 13);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_ASSERT_EQ(test, poll(env, ARRAY_SIZE(env->wc), wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 13);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, notify(env, IB_CQ_NEXT_COMP |
					  IB_CQ_REPORT_MISSED_EVENTS), 0);
	flush_work(&env->ibd.fatal_work);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->fatal_works), 1);
	KUNIT_EXPECT_EQ(test, kick_pi(env), 1);
}

static struct kunit_case rnic_ib_cq_cases[] = {
	KUNIT_CASE(cq_poll_after_arm_keeps_the_arm),
	KUNIT_CASE(cq_rearm_bumps_arm_seq),
	KUNIT_CASE(cq_solicited_arm),
	KUNIT_CASE(cq_report_missed_events),
	KUNIT_CASE(cq_fatal_notify),
	{}
};

static struct kunit_suite rnic_ib_cq_suite = {
	.name = "rnic_ib_cq",
	.init = cq_env_init,
	.exit = cq_env_exit,
	.test_cases = rnic_ib_cq_cases,
};

kunit_test_suite(rnic_ib_cq_suite);
