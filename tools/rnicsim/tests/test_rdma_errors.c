// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 device model: doorbell pages and kick rings, CQ arming and
 * completion EQs, CQ overrun, SRQ limit and errors, UD flush, and
 * hostile values in slots, kick rings and WQEs (hardware-rdma.rst,
 * "Error handling (2.0)"): each error stays in the object that owns it.
 */
#include <stdlib.h>
#include <string.h>

#include "pci/dev_priv.h"
#include "pkt/pkt.h"
#include "test.h"
#include "fake_rdma.h"

#define QKEY	0x5555

/* One device with a UD QP talking to itself through loopback */
struct self {
	struct rdrv *x;
	struct rdrv_cq cq;
	struct rdrv_qp qp;
	u64 buf;
};

static void self_up(struct self *s, u8 cq_log2)
{
	struct rnic_hdr_tmpl t;

	memset(s, 0, sizeof(*s));
	s->x = rdrv_up(1);
	s->buf = rdrv_alloc(s->x, 65536, 4096);
	if (rdrv_cq_create(s->x, cq_log2, &s->cq) ||
	    rdrv_qp_create(s->x, RNIC_QPT_UD, s->x->pdn, &s->cq, &s->cq, NULL,
			 5, 6, 5, 5, &s->qp) ||
	    rdrv_ud_up(s->x, &s->qp, QKEY))
		test_fail(__FILE__, __LINE__, "self_up");
	rdrv_tmpl(s->x, s->x, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(s->x, 1, s->x->pdn, &t);
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

/* A message to itself: one send CQE, one receive CQE if posted */
static void self_send(struct self *s, u8 flags, bool ring)
{
	u8 wqe[64];

	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, flags, 1, s->qp.qpn, QKEY, s->buf,
		  16, s->x->dma_key);
	rdrv_post_send(s->x, &s->qp, wqe, ring);
}

static void self_recv(struct self *s, bool ring)
{
	struct rnic_data_sge rs = sge(s->buf + 4096, 256, s->x->dma_key);

	rdrv_post_recv(s->x, &s->qp, &rs, 1, ring);
}

TEST(rdma_cq_arm_and_completion_eq)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct self s;
	unsigned int irqs;

	self_up(&s, 4);
	irqs = rdrv_tdev(s.x)->p->irqs[1];
	/* Armed: the first CQE writes one COMPLETION and raises vector 1 */
	rdrv_cq_arm(s.x, &s.cq, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	REQUIRE(rdrv_ceq_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_COMPLETION);
	CHECK_EQ(le32_to_cpu(e.data), s.cq.cqn);
	CHECK_EQ(rdrv_tdev(s.x)->p->irqs[1], irqs + 1);
	/* One-shot: the next CQE does not fire */
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_ceq_next(s.x, &e));
	/* Arming with CQEs already there fires at once (EQ not armed: no irq) */
	rdrv_cq_arm(s.x, &s.cq, false);
	REQUIRE(rdrv_ceq_next(s.x, &e));
	CHECK_EQ(rdrv_tdev(s.x)->p->irqs[1], irqs + 1);
	/* The same arm sequence again arms nothing */
	rdrv_ring(s.x, s.cq.db_off, rnic_db_rdma_cq(s.cq.ci, true, false,
						  s.cq.arm_seq));
	CHECK(!rdrv_ceq_next(s.x, &e));
	while (rdrv_cq_poll(s.x, &s.cq, &c))
		;
	/* Solicited arm: a plain CQE does not fire, a solicited one does */
	rdrv_ceq_arm(s.x);
	rdrv_cq_arm(s.x, &s.cq, true);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_ceq_next(s.x, &e));
	self_recv(&s, true);
	self_send(&s, RNIC_SQE_F_SOLICITED, true);
	REQUIRE(rdrv_ceq_next(s.x, &e));
	CHECK_EQ(rdrv_tdev(s.x)->p->irqs[1], irqs + 2);
	/* An error CQE satisfies a solicited arm too */
	while (rdrv_cq_poll(s.x, &s.cq, &c))
		;
	rdrv_cq_arm(s.x, &s.cq, true);
	{
		u8 wqe[64];

		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 9, s.qp.qpn, QKEY, s.buf,
			  16, s.x->dma_key);	/* AH 9 is not valid */
		rdrv_post_send(s.x, &s.qp, wqe, true);
	}
	REQUIRE(rdrv_ceq_next(s.x, &e));
	rdrv_free(s.x);
}

/*
 * The device reads a CQ's slot when it gets to the kick, not when the
 * kick was written. A consumer index written in between (a poll right
 * after the arm, as RDS does) must repeat the arm: the event then comes
 * with the next CQE. A write that clears ARM withdraws the arm, and no
 * event comes (issue 18: RDS stalled in half of its connections).
 */
TEST(rdma_cq_ci_write_keeps_an_unread_arm)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct self s;
	int round;

	self_up(&s, 4);
	for (round = 0; round < 2; round++) {
		bool withdraw = round == 1;

		/* a CQE there before the arm; the EQ armed */
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
		rdrv_ceq_arm(s.x);
		/* the arm written and named, the device not kicked yet */
		rdrv_cq_arm_write(s.x, &s.cq, false);
		rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
		/* the poll consumes that CQE and writes CI */
		REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
		if (withdraw)
			rdrv_slot_write(s.x, s.x->dbp, s.cq.db_off,
					rnic_db_rdma_cq(s.cq.ci, false, false,
							s.cq.arm_seq));
		else
			CHECK(rdrv_cq_slot(&s.cq) & RNIC_DB_CQ_ARM);
		/* the device gets to the kick: nothing to report yet */
		rdrv_kick(s.x);
		CHECK(!rdrv_ceq_next(s.x, &e));
		/* the next CQE fires the arm, unless it was withdrawn */
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
		if (withdraw) {
			CHECK(!rdrv_ceq_next(s.x, &e));
		} else {
			REQUIRE(rdrv_ceq_next(s.x, &e));
			CHECK_EQ(le32_to_cpu(e.data), s.cq.cqn);
			/* repeating a taken arm arms nothing */
			REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
			self_send(&s, RNIC_SQE_F_SIGNALED, true);
			CHECK(!rdrv_ceq_next(s.x, &e));
		}
		while (rdrv_cq_poll(s.x, &s.cq, &c))
			;
	}
	rdrv_free(s.x);
}

/* The completion events waiting in the EQ, consumed; each must be the CQ's */
static unsigned int cq_events(struct self *s)
{
	struct rnic_eqe e;
	unsigned int n = 0;

	while (rdrv_ceq_next(s->x, &e)) {
		CHECK_EQ(e.type, RNIC_EQE_COMPLETION);
		CHECK_EQ(le32_to_cpu(e.data), s->cq.cqn);
		n++;
	}
	return n;
}

static void cq_drain(struct self *s)
{
	struct rnic_rdma_cqe c;

	while (rdrv_cq_poll(s->x, &s->cq, &c))
		;
}

/*
 * With the peek off (rdev_set_arm_peek(), rnicsim's "arm-peek off"), an
 * arm that finds a CQE waiting fires nothing, however often the device
 * reads its slot, and is counted once; the next CQE fires it. The peek
 * back on, such an arm fires at once again.
 */
TEST(rdma_cq_arm_without_peek_waits_for_the_next_cqe)
{
	struct rdev *d;
	struct self s;

	self_up(&s, 4);
	d = rdrv_tdev(s.x)->d;
	rdev_set_arm_peek(d, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	rdrv_cq_arm(s.x, &s.cq, false);
	rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
	rdrv_kick(s.x);
	CHECK_EQ(cq_events(&s), 0);
	CHECK_EQ(d->arm_peeks_skipped, 1);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 1);
	cq_drain(&s);

	/* Each new arm that finds a CQE waiting is counted, once. */
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	rdrv_cq_arm(s.x, &s.cq, false);
	CHECK_EQ(cq_events(&s), 0);
	CHECK_EQ(d->arm_peeks_skipped, 2);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 1);
	cq_drain(&s);

	rdev_set_arm_peek(d, true);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	rdrv_cq_arm(s.x, &s.cq, false);
	CHECK_EQ(cq_events(&s), 1);
	CHECK_EQ(d->arm_peeks_skipped, 2);
	cq_drain(&s);
	rdrv_free(s.x);
}

/*
 * One arm, one event, however often the device reads the slot that
 * carries it. The driver writes the arm and names it in the kick ring;
 * before the device gets to the kick, a poll writes a CI-only update that
 * repeats the arm (what rnic_ib_poll_cq() writes). The device reads the
 * slot at each kick entry naming it, at every CQE it writes, and in a
 * scan of the page when the kick ring overflowed: none of these may take
 * the same sequence twice.
 */
TEST(rdma_cq_repeated_arm_fires_once)
{
	struct rnic_rdma_cqe c;
	struct self s;
	unsigned int i;

	self_up(&s, 4);

	/*
	 * A CQE still waiting when the kick is read: the arm fires at once
	 * (missed-event peeking), once, though the kick ring names the slot
	 * twice (the arm, and the CI update as a second kick would).
	 */
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 0);
	rdrv_cq_arm_write(s.x, &s.cq, false);
	rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK(rdrv_cq_slot(&s.cq) & RNIC_DB_CQ_ARM);
	rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
	rdrv_kick(s.x);
	CHECK_EQ(cq_events(&s), 1);
	for (i = 0; i < 3; i++)
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 0);
	cq_drain(&s);

	/*
	 * A CQE written between the arm's slot write and its kick: the
	 * device takes the arm from the slot at that CQE and fires; the
	 * kick, read after a poll repeated the arm, arms nothing.
	 */
	rdrv_cq_arm_write(s.x, &s.cq, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 1);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
	rdrv_kick(s.x);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 0);
	cq_drain(&s);

	/*
	 * The kick ring overflowed before the device got to it: it scans
	 * the page instead of reading the entries, and finds the arm once.
	 */
	rdrv_cq_arm_write(s.x, &s.cq, false);
	for (i = 0; i <= RNIC_DBP_KICK_DEPTH; i++)
		rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
	rdrv_kick(s.x);
	CHECK_EQ(cq_events(&s), 0);
	for (i = 0; i < 3; i++)
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(cq_events(&s), 1);
	cq_drain(&s);
	rdrv_free(s.x);
}

/*
 * After an event, an arm with a new sequence arms again, through the
 * same race (a poll's CI update repeating it before the kick is read):
 * each round is exactly one event, for more rounds than the 8-bit
 * sequence has values, so across its wrap. In odd rounds a CQE is still
 * waiting when the kick is read, and the arm fires there; in even ones
 * it fires with the next CQE.
 */
TEST(rdma_cq_rearm_after_event_fires_again)
{
	struct rnic_rdma_cqe c;
	struct self s;
	unsigned int round;

	self_up(&s, 4);
	for (round = 0; round < 300; round++) {
		bool waiting = round & 1;

		/* CQEs before the arm: the last arm was taken, no event */
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
		if (waiting)
			self_send(&s, RNIC_SQE_F_SIGNALED, true);
		CHECK_EQ(cq_events(&s), 0);
		rdrv_cq_arm_write(s.x, &s.cq, false);
		rdrv_kick_add(s.x, s.x->dbp, s.cq.db_off);
		REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
		CHECK_EQ(FIELD_GET(RNIC_DB_CQ_ARM_SEQ, rdrv_cq_slot(&s.cq)),
			 (u8)(round + 1));
		rdrv_kick(s.x);
		if (!waiting) {
			CHECK_EQ(cq_events(&s), 0);
			self_send(&s, RNIC_SQE_F_SIGNALED, true);
		}
		CHECK_EQ(cq_events(&s), 1);
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
		CHECK_EQ(cq_events(&s), 0);
		cq_drain(&s);
		if (test_failed())
			return;
	}
	rdrv_free(s.x);
}

TEST(rdma_cq_moderation)
{
	struct rnic_aq_modify_rdma_cq m = {};
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct self s;
	unsigned int i;

	self_up(&s, 5);
	m.hdr.opcode = RNIC_AQ_MODIFY_RDMA_CQ;
	m.cqn = cpu_to_le32(s.cq.cqn);
	m.count = cpu_to_le16(3);
	m.period_us = cpu_to_le16(50);
	REQUIRE(rdrv_cmd(s.x, &m, NULL) == RNIC_AQ_SUCCESS);
	/* Held until three CQEs ... */
	rdrv_cq_arm(s.x, &s.cq, false);
	for (i = 0; i < 2; i++)
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_ceq_next(s.x, &e));
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(rdrv_ceq_next(s.x, &e));
	/* ... or the period after the first */
	while (rdrv_cq_poll(s.x, &s.cq, &c))
		;
	rdrv_cq_arm(s.x, &s.cq, false);
	CHECK(!rdrv_ceq_next(s.x, &e));
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_ceq_next(s.x, &e));
	rdrv_tdev(s.x)->p->now += 49000;
	rdev_tick(rdrv_tdev(s.x)->d, rdrv_tdev(s.x)->p->now);
	CHECK(!rdrv_ceq_next(s.x, &e));
	rdrv_tdev(s.x)->p->now += 2000;
	rdev_tick(rdrv_tdev(s.x)->d, rdrv_tdev(s.x)->p->now);
	CHECK(rdrv_ceq_next(s.x, &e));
	rdrv_free(s.x);
}

/*
 * Held events are found through the list of CQs that hold one, not a
 * walk of the CQ table: a CQ destroyed while it holds one leaves the
 * list, and another still fires when its period runs out.
 */
TEST(rdma_cq_moderation_list)
{
	struct rnic_aq_modify_rdma_cq m = {};
	struct rdrv_cq cq2;
	struct rnic_eqe e;
	struct self s;

	self_up(&s, 5);
	REQUIRE(rdrv_cq_create(s.x, 5, &cq2) == RNIC_AQ_SUCCESS);
	m.hdr.opcode = RNIC_AQ_MODIFY_RDMA_CQ;
	m.cqn = cpu_to_le32(s.cq.cqn);
	m.period_us = cpu_to_le16(50);
	REQUIRE(rdrv_cmd(s.x, &m, NULL) == RNIC_AQ_SUCCESS);
	m.hdr.cmd_id = 0;
	m.cqn = cpu_to_le32(cq2.cqn);
	REQUIRE(rdrv_cmd(s.x, &m, NULL) == RNIC_AQ_SUCCESS);
	/* The first CQ holds an event, and goes */
	rdrv_cq_arm(s.x, &s.cq, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_ceq_next(s.x, &e));
	REQUIRE(rdrv_qp_destroy(s.x, &s.qp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_cq_destroy(s.x, &s.cq) == RNIC_AQ_SUCCESS);
	/* The second holds one too: it fires after 50 us, once */
	s.cq = cq2;
	REQUIRE(rdrv_qp_create(s.x, RNIC_QPT_UD, s.x->pdn, &s.cq, &s.cq, NULL,
			     5, 6, 5, 5, &s.qp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(s.x, &s.qp, QKEY) == RNIC_AQ_SUCCESS);
	rdrv_cq_arm(s.x, &s.cq, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	rdrv_tdev(s.x)->p->now += 20000;
	rdev_tick(rdrv_tdev(s.x)->d, rdrv_tdev(s.x)->p->now);
	CHECK(!rdrv_ceq_next(s.x, &e));
	rdrv_tdev(s.x)->p->now += 40000;
	rdev_tick(rdrv_tdev(s.x)->d, rdrv_tdev(s.x)->p->now);
	REQUIRE(rdrv_ceq_next(s.x, &e));
	CHECK_EQ(le32_to_cpu(e.data), cq2.cqn);
	rdrv_tdev(s.x)->p->now += 100000;
	rdev_tick(rdrv_tdev(s.x)->d, rdrv_tdev(s.x)->p->now);
	CHECK(!rdrv_ceq_next(s.x, &e));
	rdrv_free(s.x);
}

TEST(rdma_cq_overrun)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct rnic_qp_query q;
	struct self s;
	unsigned int i;

	self_up(&s, 2);		/* four CQEs */
	for (i = 0; i < 4; i++)
		self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK_EQ(rdrv_eq0_count(s.x, RNIC_EQE_CQ_ERROR, NULL), 0);
	/* The fifth finds it full: CQ error, then the QP fails */
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	while (e.type == RNIC_EQE_LINK_CHANGE)
		REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_CQ_ERROR);
	CHECK_EQ(e.reason, RNIC_ERR_RING_OVERFLOW);
	CHECK_EQ(e.obj, RNIC_EQE_OBJ_RDMA_CQ);
	CHECK_EQ(le32_to_cpu(e.data), s.cq.cqn);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(e.reason, RNIC_ERR_CQ_ERROR);
	CHECK_EQ(le32_to_cpu(e.data), s.qp.qpn);
	CHECK_EQ(rdrv_qp_query(s.x, s.qp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.state, RNIC_QPS_ERR);
	CHECK_EQ(rdrv_pctr(s.x, RNIC_PORT_STAT_cq_overflows), 1);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_cq_errors), 1);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_qp_errors), 1);
	/* The CQ writes nothing more, even with room made */
	for (i = 0; i < 4; i++)
		REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	/* Destroy in order, and the CQ goes too */
	CHECK_EQ(rdrv_qp_destroy(s.x, &s.qp), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cq_destroy(s.x, &s.cq), RNIC_AQ_SUCCESS);
	rdrv_free(s.x);
}

TEST(rdma_completion_eq_overflow)
{
	struct rnic_aq_create_eq ce = {};
	struct rnic_aq_create_rdma_cq cc = {};
	union rnic_aq_resp r;
	struct rnic_eqe e;
	struct self s;
	struct rdrv_cq cq;
	unsigned int i, eqn;
	u64 ring;

	self_up(&s, 4);
	ring = rdrv_alloc(s.x, 16 * 4, 64);
	ce.hdr.opcode = RNIC_AQ_CREATE_EQ;
	ce.ring_addr = cpu_to_le64(ring);
	ce.log2_depth = 2;
	ce.msix_vector = cpu_to_le16(3);
	REQUIRE(rdrv_cmd(s.x, &ce, &r) == RNIC_AQ_SUCCESS);
	eqn = le32_to_cpu(r.id.id);
	/* A CQ on it, fired five times without the EQ being consumed */
	memset(&cq, 0, sizeof(cq));
	cq.log2 = 4;
	cq.base = rdrv_alloc(s.x, 32 << 4, 4096);
	cc.hdr.opcode = RNIC_AQ_CREATE_RDMA_CQ;
	cc.ring_addr = cpu_to_le64(cq.base);
	cc.eqn = cpu_to_le32(eqn);
	cc.db_page = cpu_to_le32(s.x->dbp);
	cc.log2_depth = 4;
	REQUIRE(rdrv_cmd(s.x, &cc, &r) == RNIC_AQ_SUCCESS);
	cq.cqn = le32_to_cpu(r.create_cq.cqn);
	cq.db_off = le16_to_cpu(r.create_cq.db_off);
	while (rdrv_eq0_next(s.x, &e))
		;
	self_send(&s, RNIC_SQE_F_SIGNALED, true);	/* a CQE on s.cq */
	{
		/* Make cq hold one CQE: move s.qp's send CQ? Use a 2nd QP. */
		struct rdrv_qp qp;
		u8 wqe[64];

		REQUIRE(rdrv_qp_create(s.x, RNIC_QPT_UD, s.x->pdn, &cq, &cq, NULL,
				     4, 6, 4, 5, &qp) == RNIC_AQ_SUCCESS);
		REQUIRE(rdrv_ud_up(s.x, &qp, QKEY) == RNIC_AQ_SUCCESS);
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 1,
			  s.qp.qpn, QKEY, s.buf, 16, s.x->dma_key);
		rdrv_post_send(s.x, &qp, wqe, true);
	}
	/* The EQ holds four; the fifth entry overflows */
	for (i = 0; i < 5; i++)
		rdrv_cq_arm(s.x, &cq, false);	/* fires at once each time */
	CHECK_EQ(rdrv_pctr(s.x, RNIC_PORT_STAT_event_overflows), 1);
	CHECK_EQ(rdrv_eq0_count(s.x, RNIC_EQE_DEVICE_ERROR, &e), 1);
	CHECK_EQ(e.reason, RNIC_ERR_RING_OVERFLOW);
	CHECK_EQ(e.obj, RNIC_EQE_OBJ_EQ);
	CHECK_EQ(le32_to_cpu(e.data), eqn);
	/* The EQ stays in service: consumed, it takes entries again */
	tbar_w32(rdrv_tdev(s.x), RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(eqn)),
		 rnic_db_cq(4, false, 0));
	rdrv_cq_arm(s.x, &cq, false);
	CHECK_EQ(rdrv_pctr(s.x, RNIC_PORT_STAT_event_overflows), 1);
	CHECK_EQ(((struct rnic_eqe *)rdrv_ram(s.x, ring))->type,
		 RNIC_EQE_COMPLETION);
	CHECK_EQ(((struct rnic_eqe *)rdrv_ram(s.x, ring))->flags, 0);
	rdrv_free(s.x);
}

TEST(rdma_ud_flush)
{
	struct rnic_rdma_cqe c;
	struct self s;
	unsigned int i;

	self_up(&s, 6);
	for (i = 0; i < 3; i++)
		self_recv(&s, i == 2);
	/* Sends posted while the QP is in SQD wait; no send starts */
	REQUIRE(rdrv_qp_state(s.x, &s.qp, RNIC_QPS_SQD) == RNIC_AQ_SUCCESS);
	self_send(&s, 0, true);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	REQUIRE(rdrv_qp_state(s.x, &s.qp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	/* Every WQE, signaled or not, in order, SQ then RQ */
	for (i = 0; i < 2; i++) {
		REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
		CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(c.syndrome, RNIC_ERR_FLUSHED);
		CHECK_EQ(c.opcode, RNIC_SQE_OP_SEND);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), i);
	}
	for (i = 0; i < 3; i++) {
		REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
		CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
		CHECK_EQ(le16_to_cpu(c.wqe_idx), i);
	}
	/* Posted later: flushed on the kick (ib_drain_qp) */
	self_send(&s, 0, true);
	self_recv(&s, true);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 2);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 3);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_cqe_flushed), 7);
	/* No event: the driver moved it */
	CHECK_EQ(rdrv_eq0_count(s.x, RNIC_EQE_QP_FATAL, NULL), 0);
	rdrv_free(s.x);
}

static int free_db_page(struct rdrv *x, u32 page)
{
	struct rnic_aq_obj c = {};

	c.hdr.opcode = RNIC_AQ_FREE_DB_PAGE;
	c.handle = cpu_to_le32(page);
	return rdrv_cmd(x, &c, NULL);
}

/*
 * A kick reads the kick rings of the allocated pages (a list kept as
 * pages come and go): a freed page's ring is not read, a page allocated
 * in its place is.
 */
TEST(rdma_kick_reads_allocated_pages)
{
	u32 p1, p2, p3, kicks;
	struct self s;

	self_up(&s, 6);
	REQUIRE(rdrv_alloc_db_page(s.x, 0, &p1) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_alloc_db_page(s.x, 0, &p2) == RNIC_AQ_SUCCESS);
	REQUIRE(free_db_page(s.x, p1) == RNIC_AQ_SUCCESS);
	kicks = rdrv_rctr(s.x, RNIC_RDMA_STAT_kicks);
	/* A stale writer of the freed page: nothing is read there */
	rdrv_kick_add(s.x, p1, 0);
	rdrv_kick(s.x);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_kicks), kicks);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_bad_kicks), 0);
	/* The other new page is read (slot 0 is not assigned: a bad kick) */
	rdrv_kick_add(s.x, p2, 0);
	rdrv_kick(s.x);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_kicks), kicks + 1);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_bad_kicks), 1);
	/* A page allocated again is read, and so is the first one */
	REQUIRE(rdrv_alloc_db_page(s.x, 0, &p3) == RNIC_AQ_SUCCESS);
	rdrv_kick_add(s.x, p3, 0);
	rdrv_kick_add(s.x, s.x->dbp, s.qp.sq_off);
	self_send(&s, RNIC_SQE_F_SIGNALED, false);
	rdrv_kick(s.x);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_kicks), kicks + 3);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_bad_kicks), 2);
	REQUIRE(free_db_page(s.x, p2) == RNIC_AQ_SUCCESS);
	REQUIRE(free_db_page(s.x, p3) == RNIC_AQ_SUCCESS);
	rdrv_free(s.x);
}

TEST(rdma_kick_ring)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct self s;
	unsigned int i;
	u16 rq_slot;

	self_up(&s, 6);
	/* A slot written but never named is not seen ... */
	self_recv(&s, false);
	self_send(&s, RNIC_SQE_F_SIGNALED, false);
	rdrv_kick(s.x);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	/* ... until a kick names it; naming twice costs nothing */
	rdrv_kick_add(s.x, s.x->dbp, s.qp.rq_off);
	rdrv_kick_add(s.x, s.x->dbp, s.qp.sq_off);
	rdrv_kick_add(s.x, s.x->dbp, s.qp.sq_off);
	rdrv_kick(s.x);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	/* Entries naming no assigned slot are ignored and counted */
	rdrv_kick_add(s.x, s.x->dbp, 4 * 500);
	rdrv_kick_add(s.x, s.x->dbp, 4 * 1000);	/* beyond the page */
	rdrv_kick(s.x);
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_bad_kicks), 2);
	/* kick_pi far ahead: one scan of the page finds the moved slots */
	self_send(&s, RNIC_SQE_F_SIGNALED, false);
	{
		unsigned int off = le32_to_cpu(s.x->caps.db_base) +
				   (s.x->dbp << 12) + 0xc00;

		tbar_w32(rdrv_tdev(s.x), off, (tbar_r32(rdrv_tdev(s.x), off) + 600) & 0xffff);
	}
	rdrv_kick(s.x);
	CHECK(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_kick_overflows), 1);
	/* kick_ci is told back for the writer's information */
	CHECK_EQ(tbar_r32(rdrv_tdev(s.x), le32_to_cpu(s.x->caps.db_base) +
			  (s.x->dbp << 12) + 0xc40),
		 tbar_r32(rdrv_tdev(s.x), le32_to_cpu(s.x->caps.db_base) +
			  (s.x->dbp << 12) + 0xc00));
	CHECK(rdrv_rctr(s.x, RNIC_RDMA_STAT_kicks) >= 3);

	/* An RQ slot with undefined bits: the QP fails, alone */
	rq_slot = s.qp.rq_off;
	while (rdrv_eq0_next(s.x, &e))
		;
	rdrv_ring(s.x, rq_slot, 0x10000 | s.qp.rq_pi);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(le64_to_cpu(e.info), 0x10000 | s.qp.rq_pi);
	CHECK_EQ(rdrv_pctr(s.x, RNIC_PORT_STAT_bad_doorbells), 1);
	for (i = 0; i < 8 && rdrv_cq_poll(s.x, &s.cq, &c); i++)
		CHECK_EQ(c.status, RNIC_WC_WR_FLUSH_ERR);
	rdrv_free(s.x);
}

TEST(rdma_slot_errors_stay_in_their_object)
{
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct self s;
	struct rdrv_cq cq2;
	struct rdrv_qp qp2;

	self_up(&s, 6);
	REQUIRE(rdrv_cq_create(s.x, 4, &cq2) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(s.x, RNIC_QPT_UD, s.x->pdn, &cq2, &cq2, NULL, 4,
			     6, 4, 5, &qp2) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(s.x, &qp2, QKEY) == RNIC_AQ_SUCCESS);
	while (rdrv_eq0_next(s.x, &e))
		;
	/* SQ producer index more than the depth ahead */
	rdrv_ring(s.x, qp2.sq_off, 33);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(le32_to_cpu(e.data), qp2.qpn);
	/* A CQ CI beyond what was produced: the CQ fails */
	rdrv_ring(s.x, cq2.db_off, rnic_db_rdma_cq(5, true, false, 1));
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_CQ_ERROR);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(le32_to_cpu(e.data), cq2.cqn);
	/* Undefined CQ slot bits */
	rdrv_ring(s.x, s.cq.db_off, BIT(28));
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_CQ_ERROR);
	CHECK_EQ(le32_to_cpu(e.data), s.cq.cqn);
	CHECK(!rdrv_eq0_next(s.x, &e));
	CHECK_EQ(rdrv_pctr(s.x, RNIC_PORT_STAT_bad_doorbells), 3);
	/* The other QP is unharmed, though its CQ is now in error */
	self_recv(&s, true);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(e.reason, RNIC_ERR_CQ_ERROR);
	rdrv_free(s.x);
}

TEST(rdma_srq_errors)
{
	struct rnic_data_sge rs;
	struct rnic_rdma_cqe c;
	struct rnic_eqe e;
	struct rdrv_srq srq;
	struct rdrv_qp qp;
	struct self s;
	__le16 *idx;
	u8 wqe[64];

	self_up(&s, 6);
	REQUIRE(rdrv_srq_create(s.x, s.x->pdn, 3, 5, 0, &srq) ==
		RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(s.x, RNIC_QPT_UD, s.x->pdn, &s.cq, &s.cq, &srq,
			     4, 6, 0, 0, &qp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(s.x, &qp, QKEY) == RNIC_AQ_SUCCESS);
	rs = sge(s.buf + 8192, 512, s.x->dma_key);
	rdrv_srq_post(s.x, &srq, 5, &rs, 1);
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, qp.qpn, QKEY, s.buf, 16,
		  s.x->dma_key);
	rdrv_post_send(s.x, &s.qp, wqe, true);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK(c.flags & RNIC_RCQE_F_SRQ);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 5);
	/* Slot 5 is free again; then an index entry naming no slot */
	rdrv_srq_post(s.x, &srq, 5, &rs, 1);
	idx = rdrv_ram(s.x, srq.idx);
	idx[srq.pi & 7] = cpu_to_le16(8);
	srq.pi++;
	rdrv_ring(s.x, srq.db_off, srq.pi);
	while (rdrv_eq0_next(s.x, &e))
		;
	rdrv_post_send(s.x, &s.qp, wqe, true);
	rdrv_post_send(s.x, &s.qp, wqe, true);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 5);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_SRQ_ERR);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(le32_to_cpu(e.data), srq.srqn);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(e.reason, RNIC_ERR_SRQ_ERROR);
	CHECK_EQ(le32_to_cpu(e.data), qp.qpn);
	REQUIRE(rdrv_eq0_next(s.x, &e));
	CHECK_EQ(e.type, RNIC_EQE_LAST_WQE_REACHED);
	{
		struct rnic_aq_obj o = { .hdr.opcode = RNIC_AQ_QUERY_SRQ };
		union rnic_aq_resp r;

		o.handle = cpu_to_le32(srq.srqn);
		REQUIRE(rdrv_cmd(s.x, &o, &r) == RNIC_AQ_SUCCESS);
		CHECK_EQ(r.query_srq.error, 1);
	}
	rdrv_free(s.x);
}

/* Random bytes for WQEs, slots and kick entries: nothing may crash. */
TEST(rdma_hostile_wqes_and_slots)
{
	struct rnic_rdma_cqe c;
	struct rnic_data_sge rs;
	struct rnic_eqe e;
	struct self s;
	unsigned int i, j;
	u64 seed = 12345;

	self_up(&s, 8);
	for (i = 0; i < 400; i++) {
		u8 wqe[64];

		for (j = 0; j < sizeof(wqe); j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			wqe[j] = seed >> 56;
		}
		/* Often a valid opcode and small lengths, to go deep */
		if (i & 1) {
			wqe[0] = 1 + (i & 1);
			wqe[2] = i % 3;
			wqe[4] = wqe[4] & 0x3f;
			memset(wqe + 5, 0, 3);
			memset(wqe + 12, 0, 4);
			wqe[16] = 1;
			memset(wqe + 17, 0, 3);
			memset(wqe + 28, 0, 20);
		}
		rdrv_post_send(s.x, &s.qp, wqe, true);
		if (!(i % 16)) {
			rs = sge(seed & 0xfffff, seed >> 44, s.x->dma_key ^
				 (u32)(seed & 0x100));
			self_recv(&s, true);
			rdrv_post_recv(s.x, &s.qp, &rs, 1, true);
		}
		while (rdrv_cq_poll(s.x, &s.cq, &c))
			;
		while (rdrv_eq0_next(s.x, &e))
			;
	}
	CHECK(rdrv_rctr(s.x, RNIC_RDMA_STAT_wqe_errors) > 100);
	/* Garbage in the kick ring and slots of the page */
	for (i = 0; i < 2000; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		rdrv_slot_write(s.x, s.x->dbp, (seed >> 20) & 0x7fc,
			      (u32)(seed >> 32));
		rdrv_kick_add(s.x, s.x->dbp, (seed >> 40) & 0xfffc);
		if (!(i % 7))
			rdrv_kick(s.x);
		while (rdrv_cq_poll(s.x, &s.cq, &c))
			;
	}
	rdrv_kick(s.x);
	/* Still a device: commands work */
	CHECK_EQ(rdrv_qp_destroy(s.x, &s.qp), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cq_destroy(s.x, &s.cq), RNIC_AQ_SUCCESS);
	rdrv_free(s.x);
}

TEST(rdma_destroy_qp_stops_it)
{
	struct rnic_rdma_cqe c;
	struct self s;

	self_up(&s, 6);
	self_recv(&s, true);
	REQUIRE(rdrv_qp_state(s.x, &s.qp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	/* Destroyed: its slots are no one's, its QPN names nothing */
	REQUIRE(rdrv_qp_destroy(s.x, &s.qp) == RNIC_AQ_SUCCESS);
	self_send(&s, RNIC_SQE_F_SIGNALED, true);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(rdrv_rctr(s.x, RNIC_RDMA_STAT_bad_kicks), 1);
	CHECK(rdrv_qpctr(s.x, s.qp.qpn, 0) == ~0ULL);
	/* A new QP does not reuse the QPN */
	{
		struct rdrv_qp qp2;

		REQUIRE(rdrv_qp_create(s.x, RNIC_QPT_UD, s.x->pdn, &s.cq, &s.cq,
				     NULL, 4, 6, 4, 5, &qp2) ==
			RNIC_AQ_SUCCESS);
		CHECK(qp2.qpn != s.qp.qpn);
	}
	rdrv_free(s.x);
}

TEST(rdma_pfc_pauses_qps)
{
	struct rnic_aq_set_port sp = {};
	struct rnic_rdma_cqe c;
	struct rnic_hdr_tmpl t;
	struct rdrv *peer;
	struct self s;
	u16 quanta[8] = { 0 };
	u8 frame[64];
	size_t len;

	self_up(&s, 6);
	peer = rdrv_new(2, 0);
	sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS);
	sp.flags = cpu_to_le32(RNIC_PORT_F_PFC);
	REQUIRE(tset_port(rdrv_tdev(s.x), &sp) == RNIC_AQ_SUCCESS);
	/* AH 2: to a peer, untagged, priority 3 */
	rdrv_tmpl(s.x, peer, RNIC_RX_CLASS_ROCE_V2_IPV6, 0, &t);
	t.prio = 3;
	rdrv_ah_set(s.x, 2, s.x->pdn, &t);
	quanta[3] = 0xffff;
	len = pkt_pfc_build(frame, peer->mac, BIT(3), quanta);
	rdev_wire_rx(rdrv_tdev(s.x)->d, frame, len);
	{
		u8 wqe[64];

		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 2, 7,
			  QKEY, s.buf, 16, s.x->dma_key);
		rdrv_post_send(s.x, &s.qp, wqe, true);
	}
	/* Paused: not sent, not completed */
	CHECK_EQ(rdrv_tdev(s.x)->p->ntx, 0);
	CHECK(!rdrv_cq_poll(s.x, &s.cq, &c));
	/* XON: it goes */
	quanta[3] = 0;
	len = pkt_pfc_build(frame, peer->mac, BIT(3), quanta);
	rdev_wire_rx(rdrv_tdev(s.x)->d, frame, len);
	CHECK_EQ(rdrv_tdev(s.x)->p->ntx, 1);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	rdrv_free(peer);
	rdrv_free(s.x);
}

TEST(rdma_link_down_ud_completes)
{
	struct rnic_rdma_cqe c;
	struct rnic_hdr_tmpl t;
	struct rdrv *peer;
	struct self s;
	u8 wqe[64];

	self_up(&s, 6);
	peer = rdrv_new(2, 0);
	rdrv_tmpl(s.x, peer, RNIC_RX_CLASS_ROCE_V1, 0, &t);
	rdrv_ah_set(s.x, 2, s.x->pdn, &t);
	rdev_set_link(rdrv_tdev(s.x)->d, false);
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 2, 7, QKEY,
		  s.buf, 16, s.x->dma_key);
	rdrv_post_send(s.x, &s.qp, wqe, true);
	REQUIRE(rdrv_cq_poll(s.x, &s.cq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(rdrv_tdev(s.x)->p->ntx, 0);
	rdrv_free(peer);
	rdrv_free(s.x);
}

/* The Ethernet rings and the QPs take turns on the wire (one kick) */
TEST(rdma_eth_and_qps_take_turns)
{
	struct rnic_hdr_tmpl t;
	struct rdrv *peer;
	struct self s;
	struct tcq tcq;
	struct tq tq;
	u64 frame;
	unsigned int i, first_ud = 99, last_eth = 0;
	u8 wqe[64];

	self_up(&s, 6);
	peer = rdrv_new(2, 0);
	rdrv_tmpl(s.x, peer, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(s.x, 2, s.x->pdn, &t);
	REQUIRE(tcreate_cq(rdrv_tdev(s.x), 4, 1, &tcq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(rdrv_tdev(s.x), RNIC_QUEUE_ETH_TX, 4, tcq.id, 0, 0,
			      &tq) == RNIC_AQ_SUCCESS);
	frame = rdrv_alloc(s.x, 64, 64);
	memset(rdrv_ram(s.x, frame), 0x42, 64);
	for (i = 0; i < 6; i++) {
		struct rnic_tx_desc d = {};
		u64 a = frame;
		u32 l = 64;

		REQUIRE(rnic_tx_desc_build(&d, 0, 0, &a, &l, 1) == 0);
		memcpy(rdrv_ram(s.x, tq.base + 64 * i), &d, sizeof(d));
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 2, 7, QKEY, s.buf, 16,
			  s.x->dma_key);
		rdrv_post_send(s.x, &s.qp, wqe, false);
	}
	tbar_w32(rdrv_tdev(s.x), RNIC_DB_QUEUE_OFF(tq.id), 6);
	rdrv_kick_add(s.x, s.x->dbp, s.qp.sq_off);
	rdrv_kick(s.x);
	REQUIRE(rdrv_tdev(s.x)->p->ntx == 12);
	for (i = 0; i < 12; i++) {
		bool eth = rdrv_tdev(s.x)->p->tx[i].data[12] == 0x42;

		if (eth)
			last_eth = i;
		else if (first_ud == 99)
			first_ud = i;
	}
	/* Neither kind waited for the other to finish */
	CHECK(first_ud < 3);
	CHECK(last_eth > 8);
	rdrv_free(peer);
	rdrv_free(s.x);
}
