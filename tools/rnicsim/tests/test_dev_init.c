// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: signature block, reset/enable handshake, register file,
 * doorbell dispatch, heartbeat.
 */
#include <string.h>

#include "fake_plat.h"
#include "rdma/engine.h"
#include "test.h"

TEST(dev_signature_block)
{
	struct tdev *t = tdev_new(0);
	struct rnic_sig sig;

	memcpy(&sig, t->p->bar2 + RNIC_SIG_OFF, sizeof(sig));
	/* ABI 2.0 alone: a driver of 1.0 only finds nothing it serves */
	CHECK(rnic_sig_serves(le32_to_cpu(sig.magic),
			      le16_to_cpu(sig.abi_major),
			      le16_to_cpu(sig.abi_compat), RNIC_ABI2_MAJOR));
	CHECK(!rnic_sig_serves(le32_to_cpu(sig.magic),
			       le16_to_cpu(sig.abi_major),
			       le16_to_cpu(sig.abi_compat), 1));
	CHECK_MEM_EQ(t->p->bar2, "RNIC", 4);
	CHECK_EQ(le16_to_cpu(sig.abi_major), RNIC_ABI2_MAJOR);
	CHECK_EQ(le16_to_cpu(sig.abi_minor), RNIC_ABI2_MINOR);
	CHECK_EQ(le16_to_cpu(sig.abi_compat), BIT(RNIC_ABI2_MAJOR));
	CHECK_EQ(le32_to_cpu(sig.caps), RNIC_CAP_ALL_ABI2);
	CHECK_EQ(le32_to_cpu(sig.shm_size), 1 << 20);
	CHECK_MEM_EQ(sig.mac, t_mac, 6);
	CHECK_EQ(le16_to_cpu(sig.num_msix), 8);
	CHECK(le16_to_cpu(sig.max_queues) <= RNIC_MAX_QUEUES);
	CHECK(le16_to_cpu(sig.max_cqs) <= RNIC_MAX_CQS);
	CHECK(sig.max_ring_log2 <= RNIC_RING_LOG2_MAX);
	CHECK_EQ(sig.max_tx_sge, RNIC_TX_MAX_SGE);
	CHECK_EQ(le32_to_cpu(sig.max_frame), 9018);
	CHECK(strncmp(sig.model_version, "rnicsim", 7) == 0);
	/* Power-on: nothing running. */
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), 0);
	tdev_free(t);
}

TEST(dev_caps_disable_hides_capabilities)
{
	struct tdev *t = tdev_new(RNIC_CAP_ICRC | RNIC_CAP_PFC);
	struct rnic_sig *sig = (struct rnic_sig *)t->p->bar2;

	CHECK_EQ(le32_to_cpu(sig->caps), RNIC_CAP_VLAN | RNIC_CAP_IPV4_CSUM |
		 RNIC_CAP_TRANSPORT);
	tdev_free(t);
}

/* ABI 2.0 needs doorbell pages past the register file, and 2 vectors */
TEST(dev_create_refuses_small_bar2)
{
	struct rdev_config cfg = { .num_vectors = 4, .engine = &rdma_engine };
	struct plat *p = fake_plat_new(0x2000, 0);
	struct rdev *d;

	CHECK(rdev_create(p, &cfg) == NULL);
	fake_plat_free(p);
	p = fake_plat_new(0x6000, 0);	/* not a power of two */
	CHECK(rdev_create(p, &cfg) == NULL);
	fake_plat_free(p);
	p = fake_plat_new(RNIC_SHM_MIN_SIZE_ABI2 / 2, 0);
	CHECK(rdev_create(p, &cfg) == NULL);
	CHECK(strstr(p->log, "for ABI 2.0") != NULL);
	fake_plat_free(p);
	p = fake_plat_new(RNIC_SHM_MIN_SIZE_ABI2, 0);
	cfg.num_vectors = 1;
	CHECK(rdev_create(p, &cfg) == NULL);
	CHECK(strstr(p->log, "needs at least 2") != NULL);
	cfg.num_vectors = 2;
	cfg.signature_abi = RDEV_MAX_SIGNATURE_ABI + 1;
	CHECK(rdev_create(p, &cfg) == NULL);
	cfg.signature_abi = 0;
	d = rdev_create(p, &cfg);
	CHECK(d != NULL);
	rdev_destroy(d);
	fake_plat_free(p);
}

TEST(dev_reset_enable_handshake)
{
	struct tdev *t = tdev_new(0);
	struct rnic_eqe e;

	tbar_w32(t, RNIC_REG_SCRATCH, 0x12345678);
	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	CHECK_EQ(tbar_r32(t, RNIC_REG_CTRL), 0);
	CHECK_EQ(tbar_r32(t, RNIC_REG_SCRATCH), 0);	/* zeroed by reset */

	CHECK_EQ(tdev_init(t), T_STATUS_UP);
	CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), 0);
	/* Enabling posts the link state. */
	REQUIRE(teq_next(t, &e));
	CHECK_EQ(e.type, RNIC_EQE_LINK_CHANGE);
	CHECK(le32_to_cpu(e.data) & RNIC_LINK_UP);
	CHECK_EQ(FIELD_GET(RNIC_LINK_SPEED_MBPS, le32_to_cpu(e.data)), 10000);
	CHECK(!teq_next(t, &e));

	/* ENABLE again is harmless; clearing it resets. */
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), T_STATUS_UP);
	tbar_w32(t, RNIC_REG_CTRL, 0);
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	tdev_free(t);
}

static u32 enable_with(struct tdev *t, unsigned int reg, u32 val)
{
	u32 st;

	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(t, RNIC_DB_VEC_CTRL);
	st = tdev_init(t);	/* programs good values, enables */
	if (st != T_STATUS_UP)
		return st;
	/* Now the same with one bad register. */
	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(t, RNIC_DB_VEC_CTRL);
	tbar_w32(t, RNIC_REG_AQ_SQ_BASE_LO, (u32)t->drv.aq_sq);
	tbar_w32(t, RNIC_REG_AQ_CQ_BASE_LO, (u32)t->drv.aq_cq);
	tbar_w32(t, RNIC_REG_AQ_CFG, T_AQ_LOG2);
	tbar_w32(t, RNIC_REG_EQ_BASE_LO, (u32)t->drv.eq);
	tbar_w32(t, RNIC_REG_EQ_CFG, T_EQ_LOG2);
	tbar_w32(t, reg, val);
	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
		 FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	tring(t, RNIC_DB_VEC_CTRL);
	return tbar_r32(t, RNIC_REG_STATUS);
}

/*
 * A reload: the unload's reset leaves STATUS = RESET_DONE, so only the
 * self-clearing CTRL.RESET tells the next driver that its own reset kick
 * has been acted on (registers it wrote before that would be wiped).
 */
TEST(dev_reset_is_self_clearing)
{
	struct tdev *t = tdev_new(0);

	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);

	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tbar_w32(t, RNIC_REG_EQ_CFG, 6);
	/* Not acted on yet: STATUS looks done, CTRL does not. */
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	CHECK_EQ(tbar_r32(t, RNIC_REG_CTRL), RNIC_CTRL_RESET);
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_CTRL), 0);
	CHECK_EQ(tbar_r32(t, RNIC_REG_EQ_CFG), 0);	/* wiped by that reset */
	/* Programmed after CTRL read 0, the queues come up. */
	CHECK_EQ(tdev_init(t), T_STATUS_UP);
	CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), 0);
	tdev_free(t);
}

TEST(dev_enable_checks_every_register)
{
	static const struct {
		unsigned int reg;
		u32 val;
		u32 reason;
	} bad[] = {
		{ RNIC_REG_AQ_CFG, 1, RNIC_FATAL_BAD_AQ_DEPTH },
		{ RNIC_REG_AQ_CFG, 9, RNIC_FATAL_BAD_AQ_DEPTH },
		{ RNIC_REG_AQ_CFG, 0x103, RNIC_FATAL_BAD_AQ_DEPTH },
		{ RNIC_REG_AQ_SQ_BASE_HI, 1, RNIC_FATAL_BAD_AQ_ADDR },
		{ RNIC_REG_AQ_SQ_BASE_LO, T_RAM_SIZE - 64, RNIC_FATAL_BAD_AQ_ADDR },
		{ RNIC_REG_AQ_SQ_BASE_LO, 0x10020, RNIC_FATAL_BAD_AQ_ADDR },
		{ RNIC_REG_AQ_CQ_BASE_LO, 0x10008, RNIC_FATAL_BAD_AQ_ADDR },
		{ RNIC_REG_AQ_CQ_BASE_HI, 0xffffffff, RNIC_FATAL_BAD_AQ_ADDR },
		{ RNIC_REG_EQ_CFG, 0, RNIC_FATAL_BAD_EQ_DEPTH },
		{ RNIC_REG_EQ_CFG, 13, RNIC_FATAL_BAD_EQ_DEPTH },
		{ RNIC_REG_EQ_BASE_LO, 0xfffffff0, RNIC_FATAL_BAD_EQ_ADDR },
		{ RNIC_REG_EQ_BASE_LO, 0x10004, RNIC_FATAL_BAD_EQ_ADDR },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tdev *t = tdev_new(0);

		CHECK_EQ(enable_with(t, bad[i].reg, bad[i].val),
			 RNIC_STATUS_FATAL);
		CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), bad[i].reason);
		/* A fatal device ignores everything but RESET. */
		tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE);
		tring(t, RNIC_DB_VEC_CTRL);
		tring(t, RNIC_DB_VEC_ADMIN);
		CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
		CHECK_EQ(tdev_init(t), T_STATUS_UP);
		tdev_free(t);
	}
}

TEST(dev_enable_without_reset_is_fatal)
{
	struct tdev *t = tdev_new(0);

	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE);
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), RNIC_FATAL_BAD_CTRL);
	tdev_free(t);

	t = tdev_up();
	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE | BIT(8));
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), RNIC_FATAL_BAD_CTRL);
	/* RESET wins over anything else written with it. */
	tbar_w32(t, RNIC_REG_CTRL, RNIC_CTRL_RESET | RNIC_CTRL_ENABLE | BIT(9));
	tring(t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	tdev_free(t);
}

TEST(dev_doorbells_before_enable_are_counted)
{
	struct tdev *t = tdev_new(0);
	unsigned int v;

	for (v = 1; v < 8; v++)
		tring(t, v);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), 0);
	REQUIRE(tdev_init(t) == T_STATUS_UP);
	/* The reset cleared them; count again while enabled. */
	tring(t, 5);
	tring(t, 0xffff);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_bad_doorbells), 2);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_device_errors), 2);
	{
		struct rnic_eqe e;

		CHECK_EQ(teq_count(t, RNIC_EQE_DEVICE_ERROR, &e), 2);
		CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
		CHECK_EQ(le64_to_cpu(e.info), 0xffff);
	}
	tdev_free(t);
}

TEST(dev_power_on_reset_forgets_everything)
{
	struct tdev *t = tdev_up();
	struct tcq cq;
	struct tq q;

	REQUIRE(tcreate_cq(t, 4, 1, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q) ==
		RNIC_AQ_SUCCESS);
	/* The guest scribbles over the signature, then reboots. */
	memset(t->p->bar2, 0xaa, 64);
	tbar_w32(t, RNIC_DB_QUEUE_OFF(q.id), 3);
	rdev_reset(t->d);
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), 0);
	CHECK_EQ(tbar_r32(t, RNIC_DB_QUEUE_OFF(q.id)), 0);
	CHECK_EQ(tbar_r32(t, RNIC_SIG_OFF), RNIC_SIG_MAGIC);
	/* A fresh driver can bring it up and gets the same ids again. */
	REQUIRE(tdev_init(t) == T_STATUS_UP);
	CHECK_EQ(tcreate_cq(t, 4, 1, &cq), RNIC_AQ_SUCCESS);
	CHECK_EQ(cq.id, 0);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q),
		 RNIC_AQ_SUCCESS);
	tdev_free(t);
}

TEST(dev_heartbeat_moves_with_the_clock)
{
	struct tdev *t = tdev_new(0);
	u64 next;
	u32 hb;

	next = rdev_tick(t->d, t->p->now);
	hb = tbar_r32(t, RNIC_REG_HEARTBEAT);
	CHECK(hb >= 1);
	CHECK(next > t->p->now);
	CHECK(next <= t->p->now + RNIC_HEARTBEAT_PERIOD_MS * 1000000ULL);
	rdev_tick(t->d, next);
	CHECK_EQ(tbar_r32(t, RNIC_REG_HEARTBEAT), hb + 1);
	tdev_free(t);
}

TEST(dev_link_change_events)
{
	struct tdev *t = tdev_up();
	struct rnic_eqe e;

	while (teq_next(t, &e))
		;
	rdev_set_link(t->d, false);
	rdev_set_link(t->d, false);	/* no change, no event */
	REQUIRE(teq_next(t, &e));
	CHECK_EQ(e.type, RNIC_EQE_LINK_CHANGE);
	CHECK(!(le32_to_cpu(e.data) & RNIC_LINK_UP));
	CHECK(!teq_next(t, &e));
	rdev_set_link(t->d, true);
	REQUIRE(teq_next(t, &e));
	CHECK(le32_to_cpu(e.data) & RNIC_LINK_UP);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_link_changes), 2);
	tdev_free(t);
}

TEST(dev_eq_overflow_and_arm)
{
	struct tdev *t = tdev_up();
	struct rnic_eqe e;
	unsigned int i, n = 0;

	/* Fill the 16-entry EQ (1 entry already: the link event). */
	for (i = 0; i < 20; i++)
		rdev_set_link(t->d, i & 1);
	while (teq_next(t, &e))
		n++;
	CHECK_EQ(n, 1U << T_EQ_LOG2);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_event_overflows), 21 - n);

	/* Arm: one interrupt on vector 0 for the next event, then none. */
	t->p->irqs[0] = 0;
	tbar_w32(t, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		 rnic_db_cq(t->drv.eq_ci, true, 1));
	tring(t, RNIC_DB_VEC_EVENT);
	CHECK_EQ(t->p->irqs[0], 0);
	rdev_set_link(t->d, false);
	CHECK_EQ(t->p->irqs[0], 1);
	rdev_set_link(t->d, true);
	CHECK_EQ(t->p->irqs[0], 1);
	/* Re-arming with the same sequence does nothing... */
	tring(t, RNIC_DB_VEC_EVENT);
	CHECK_EQ(t->p->irqs[0], 1);
	/* ...a new sequence fires at once: entries are pending. */
	tbar_w32(t, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		 rnic_db_cq(t->drv.eq_ci, true, 2));
	tring(t, RNIC_DB_VEC_EVENT);
	CHECK_EQ(t->p->irqs[0], 2);
	tdev_free(t);
}
