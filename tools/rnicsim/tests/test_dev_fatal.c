// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: the control socket's failure knobs. rdev_fatal(), a device
 * failing as hardware.rst says a device fails fatally (DEVICE_FATAL, then
 * STATUS.FATAL, then no DMA and nothing but CTRL.RESET), and
 * rdev_aq_hold(), an admin queue that takes no command until released or
 * until the device is reset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_rdma.h"
#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

/* Ethernet side of a device under test: a CQ, a TX ring and an RX ring */
struct fdev {
	struct tdev *t;
	struct tcq cq;
	struct tq tx, rx;
};

#define F_BUF	2048

static void f_up(struct fdev *x)
{
	x->t = tdev_up();
	if (tcreate_cq(x->t, 6, 2, &x->cq) != RNIC_AQ_SUCCESS ||
	    tcreate_queue(x->t, RNIC_QUEUE_ETH_TX, 4, x->cq.id, 0, 0,
			  &x->tx) != RNIC_AQ_SUCCESS ||
	    tcreate_queue(x->t, RNIC_QUEUE_ETH_RX, 4, x->cq.id, F_BUF, 0,
			  &x->rx) != RNIC_AQ_SUCCESS)
		test_fail(__FILE__, __LINE__, "f_up failed");
	while (teq_count(x->t, 0, NULL))
		;
}

/* A one-SGE TX descriptor for a fresh copy of @frame */
static void tx_desc(struct tdev *t, struct rnic_tx_desc *d, const u8 *frame,
		    size_t len)
{
	u64 addr = tput(t, frame, len);
	u32 plen = len;

	rnic_tx_desc_build(d, 0, 0, &addr, &plen, 1);
}

/* Write a TX descriptor and the ring's slot, ringing nothing */
static void tx_write(struct tdev *t, struct tq *q, const struct rnic_tx_desc *d)
{
	unsigned int mask = (1U << q->log2) - 1;

	memcpy(tram(t, q->base + (q->pi & mask) * RNIC_TX_DESC_SIZE), d,
	       sizeof(*d));
	q->pi++;
	tbar_w32(t, RNIC_DB_QUEUE_OFF(q->id), q->pi);
}

/* Write an admin command and the admin SQ's slot, ringing nothing */
static u16 aq_write(struct tdev *t, union rnic_aq_entry *e)
{
	struct fakedrv *f = &t->drv;
	unsigned int mask = (1U << f->aq_log2) - 1;
	u16 idx = f->aq_pi;

	e->hdr.cmd_id = cpu_to_le16(++f->cmd_id);
	memcpy(fakedrv_ram(f, f->aq_sq + (idx & mask) * RNIC_AQ_ENTRY_SIZE),
	       e, sizeof(*e));
	f->aq_pi++;
	fakedrv_w32(f, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), f->aq_pi);
	return idx;
}

/* The completion the device wrote for the command at @idx, or NULL */
static struct rnic_acqe *aq_done(struct tdev *t, u64 aq_cq, u16 idx)
{
	struct fakedrv *f = &t->drv;
	unsigned int mask = (1U << f->aq_log2) - 1;
	struct rnic_acqe *c = fakedrv_ram(f, aq_cq + (idx & mask) *
					     RNIC_ACQ_ENTRY_SIZE);

	return rnic_acqe_phase(c) == rnic_ring_phase(idx, f->aq_log2) ?
	       c : NULL;
}

static void query_device_cmd(union rnic_aq_entry *e, u64 buf)
{
	memset(e, 0, sizeof(*e));
	e->query.hdr.opcode = RNIC_AQ_QUERY_DEVICE;
	e->query.buf_addr = cpu_to_le64(buf);
	e->query.buf_len = cpu_to_le32(sizeof(struct rnic_device_attr));
}

static void eq0_arm(struct tdev *t, u8 seq)
{
	tbar_w32(t, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		 rnic_db_cq(t->drv.eq_ci, true, seq));
	tring(t, RNIC_DB_VEC_EVENT);
}

static u8 *ram_copy(struct plat *p)
{
	u8 *c = malloc(p->ram_len);

	if (!c)
		abort();
	memcpy(c, p->ram, p->ram_len);
	return c;
}

static void advance(struct tdev *t, u64 ns)
{
	t->p->now += ns;
	CHECK_EQ(rdev_tick(t->d, t->p->now), 0);	/* no timer wanted */
}

/*
 * fatal: DEVICE_FATAL with the reason in info (the armed EQ raises its
 * vector), then STATUS = FATAL and FATAL_REASON. After it, with work
 * posted on every ring and the admin queue, every doorbell rung, frames
 * arriving, the link flapping and seconds of ticks, guest RAM is not
 * touched, no interrupt is raised, no frame is sent and HEARTBEAT stops.
 * CTRL = 0 and CTRL = ENABLE are ignored; a second fatal changes nothing.
 */
TEST(dev_fatal_event_status_then_no_dma)
{
	static const u16 quanta[8] = { [0] = 0xffff };
	struct rnic_tx_desc d;
	union rnic_aq_entry e;
	struct rnic_eqe ev;
	unsigned int irqs[FAKE_MAX_VECTORS], i;
	u8 f[1024], *snap;
	u32 reason = 0, hb, aq_head;
	u64 buf;
	size_t len;
	struct fdev x;

	f_up(&x);
	CHECK(tstatus_has(x.t, "fatal_events 0"));
	CHECK(tstatus_has(x.t, "fatal_reason 0"));
	eq0_arm(x.t, 1);
	tcq_arm(x.t, &x.cq);
	memcpy(irqs, x.t->p->irqs, sizeof(irqs));

	REQUIRE(rdev_fatal(x.t->d, &reason) == 0);
	CHECK_EQ(reason, RNIC_FATAL_INTERNAL);	/* the default */
	REQUIRE(teq_next(x.t, &ev));
	CHECK_EQ(ev.type, RNIC_EQE_DEVICE_FATAL);
	CHECK_EQ(ev.reason, 0);
	CHECK_EQ(ev.obj, RNIC_EQE_OBJ_NONE);
	CHECK_EQ(le64_to_cpu(ev.info), RNIC_FATAL_INTERNAL);
	CHECK(!teq_next(x.t, &ev));
	CHECK_EQ(x.t->p->irqs[0], irqs[0] + 1);	/* EQ 0 was armed */
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_FATAL_REASON), RNIC_FATAL_INTERNAL);
	CHECK(tstatus_has(x.t, "fatal_events 1"));
	CHECK(tstatus_has(x.t, "fatal_reason 6"));
	CHECK(strstr(x.t->p->log, "device fatal, reason 6") != NULL);

	/* Work for every part of the device, posted before the snapshot */
	len = tf_roce(f, TF_V2_IPV4, 200, -1, 4791);
	for (i = 0; i < 3; i++) {
		tx_desc(x.t, &d, f, len);
		tx_write(x.t, &x.tx, &d);
		tpost_rx(x.t, &x.rx, talloc(x.t, F_BUF, 64), F_BUF, false);
	}
	buf = talloc(x.t, 256, 64);
	query_device_cmd(&e, buf);
	aq_write(x.t, &e);
	aq_head = tbar_r32(x.t, RNIC_REG_AQ_SQ_HEAD);
	hb = tbar_r32(x.t, RNIC_REG_HEARTBEAT);
	memcpy(irqs, x.t->p->irqs, sizeof(irqs));
	snap = ram_copy(x.t->p);

	tring(x.t, RNIC_DB_VEC_ADMIN);
	tring(x.t, RNIC_DB_VEC_DATA);
	eq0_arm(x.t, 2);
	tcq_arm(x.t, &x.cq);
	tring(x.t, 9);			/* not a vector */
	rdev_wire_rx(x.t->d, f, len);	/* RoCE: for the transport */
	len = tf_arp(f);
	rdev_wire_rx(x.t->d, f, len);	/* Ethernet: for the RX ring */
	len = pkt_pfc_build(f, t_mac, 1, quanta);
	rdev_wire_rx(x.t->d, f, len);
	rdev_set_link(x.t->d, false);
	rdev_set_link(x.t->d, true);
	CHECK_EQ(rdev_tx_hold(x.t->d, true), 0);
	CHECK_EQ(rdev_tx_hold(x.t->d, false), 0);
	CHECK_EQ(rdev_aq_hold(x.t->d, true), 0);
	CHECK_EQ(rdev_aq_hold(x.t->d, false), 0);
	/* Not a reset: ignored */
	tbar_w32(x.t, RNIC_REG_CTRL, 0);
	tring(x.t, RNIC_DB_VEC_CTRL);
	tbar_w32(x.t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
		 FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	tring(x.t, RNIC_DB_VEC_CTRL);
	for (i = 0; i < 5; i++)
		advance(x.t, 1000000000ULL);
	reason = 42;
	CHECK_EQ(rdev_fatal(x.t->d, &reason), -EALREADY);

	CHECK(!memcmp(x.t->p->ram, snap, x.t->p->ram_len));
	CHECK_MEM_EQ(x.t->p->irqs, irqs, sizeof(irqs));
	CHECK_EQ(x.t->p->ntx, 0);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_HEARTBEAT), hb);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_AQ_SQ_HEAD), aq_head);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_FATAL_REASON), RNIC_FATAL_INTERNAL);
	CHECK(tstatus_has(x.t, "fatal_events 1"));
	CHECK(tstatus_has(x.t, "rx_drop_no_queue 3"));
	free(snap);
	tdev_free(x.t);
}

/*
 * A reset (the driver's CTRL.RESET, as at probe and remove) brings a
 * fatal device back: enable, admin commands, rings, events and HEARTBEAT
 * all work again and FATAL_REASON reads 0; fatal_events is not reset. A
 * reason given is the one reported. A device not enabled fails without
 * an event (there is no event queue to post to) and refuses an enable
 * until reset. A device serving no ABI refuses the knob.
 */
TEST(dev_fatal_reset_restores_a_working_device)
{
	struct rdev_config cfg = { .num_vectors = 8, .signature_abi = 1 };
	struct rnic_tx_desc d;
	struct rnic_eqe ev;
	struct rnic_cqe c;
	struct tdev *old;
	struct fdev x;
	u32 reason = 0x12345678, hb;
	u8 f[512];
	size_t len;

	f_up(&x);
	REQUIRE(rdev_fatal(x.t->d, &reason) == 0);
	CHECK_EQ(reason, 0x12345678);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_DEVICE_FATAL, &ev), 1);
	CHECK_EQ(le64_to_cpu(ev.info), 0x12345678);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_FATAL_REASON), 0x12345678);
	CHECK(tstatus_has(x.t, "fatal_reason 305419896"));

	/* The driver's reset: RESET, then it reads 0 and RESET_DONE */
	tbar_w32(x.t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(x.t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_CTRL), 0);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_FATAL_REASON), 0);
	CHECK(tstatus_has(x.t, "fatal_reason 0"));
	CHECK(tstatus_has(x.t, "fatal_events 1"));
	hb = tbar_r32(x.t, RNIC_REG_HEARTBEAT);
	x.t->p->now += 1000000000ULL;
	CHECK(rdev_tick(x.t->d, x.t->p->now) > x.t->p->now);
	CHECK(tbar_r32(x.t, RNIC_REG_HEARTBEAT) != hb);

	/* Fatal while disabled: no event; an enable is ignored */
	reason = 0;
	REQUIRE(rdev_fatal(x.t->d, &reason) == 0);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	tbar_w32(x.t, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
		 FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	tring(x.t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK(tstatus_has(x.t, "fatal_events 2"));

	/* Probe again: reset, enable, objects, traffic */
	REQUIRE(tdev_init(x.t) == T_STATUS_UP);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_LINK_CHANGE, NULL), 1);
	REQUIRE(tcreate_cq(x.t, 6, 2, &x.cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(x.t, RNIC_QUEUE_ETH_TX, 4, x.cq.id, 0, 0,
			      &x.tx) == RNIC_AQ_SUCCESS);
	len = tf_roce(f, TF_V2_IPV4, 100, -1, 4791);
	tx_desc(x.t, &d, f, len);
	tpost_tx(x.t, &x.tx, &d);
	REQUIRE(x.t->p->ntx == 1);
	CHECK_MEM_EQ(x.t->p->tx[0].data, f, len);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_admin_errors), 0);
	CHECK(tstatus_has(x.t, "fatal_events 2"));
	tdev_free(x.t);

	memcpy(cfg.mac, t_mac, sizeof(cfg.mac));
	old = tdev_new_cfg(&cfg, T_RAM_SIZE);
	reason = 0;
	CHECK_EQ(rdev_fatal(old->d, &reason), -EOPNOTSUPP);
	CHECK_EQ(tbar_r32(old, RNIC_REG_STATUS), 0);
	CHECK_EQ(rdev_aq_hold(old->d, true), -EOPNOTSUPP);
	CHECK(!tstatus_has(old, "fatal_events 0"));
	CHECK(!tstatus_has(old, "aq_hold 0"));
	tdev_free(old);
}

#define F_IOVA	0x40000000ULL
#define F_RBUF	(64u << 10)

/*
 * The RDMA side of a fatal device: A's SEND is on the wire when A fails.
 * B takes it and ACKs; A takes nothing (no CQE), sends nothing more (a
 * second SEND rung, seconds of RC timers: no frame, no retransmission)
 * and writes nothing to guest RAM. After a reset A serves RDMA again.
 */
TEST(dev_fatal_stops_the_rdma_engine)
{
	struct rdrv *a = rdrv_up(1), *b = rdrv_up(2);
	struct twire *w = twire_new(a, b);
	struct tdev *ta = rdrv_tdev(a);
	struct rdrv_cq acq, bcq;
	struct rdrv_qp aqp, bqp;
	struct rnic_rdma_cqe c;
	struct rnic_data_sge s = {};
	struct rnic_eqe ev;
	unsigned int irqs[FAKE_MAX_VECTORS], ntx, i;
	u64 abuf = rdrv_alloc(a, F_RBUF, 4096), bbuf = rdrv_alloc(b, F_RBUF, 4096);
	u32 akey, bkey, reason = RNIC_FATAL_INTERNAL;
	u8 wqe[128] = {}, *snap;

	REQUIRE(!rdrv_mr_pbl(a, a->pdn, RNIC_ACCESS_ALL, F_IOVA, F_RBUF, abuf,
			     &akey));
	REQUIRE(!rdrv_mr_pbl(b, b->pdn, RNIC_ACCESS_ALL, F_IOVA, F_RBUF, bbuf,
			     &bkey));
	REQUIRE(!rdrv_cq_create(a, 6, &acq) && !rdrv_cq_create(b, 6, &bcq));
	REQUIRE(!rdrv_qp_create(a, RNIC_QPT_RC, a->pdn, &acq, &acq, NULL, 6, 7,
				6, 6, &aqp));
	REQUIRE(!rdrv_qp_create(b, RNIC_QPT_RC, b->pdn, &bcq, &bcq, NULL, 6, 7,
				6, 6, &bqp));
	REQUIRE(!rdrv_rc_connect(a, &aqp, b, bqp.qpn,
				 RNIC_RX_CLASS_ROCE_V2_IPV4));
	REQUIRE(!rdrv_rc_connect(b, &bqp, a, aqp.qpn,
				 RNIC_RX_CLASS_ROCE_V2_IPV4));
	while (rdrv_eq0_next(a, &ev))
		;
	s.addr = cpu_to_le64(F_IOVA);
	s.len = cpu_to_le32(4096);
	s.lkey = cpu_to_le32(bkey);
	for (i = 0; i < 2; i++)
		rdrv_post_recv(b, &bqp, &s, 1, true);
	rdrv_cq_arm(a, &acq, false);

	rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 1000, F_IOVA,
		    akey, 0, 0);
	rdrv_post_send(a, &aqp, wqe, true);
	REQUIRE(w->count == 1);		/* on the wire, not yet ACKed */
	REQUIRE(rdev_fatal(ta->d, &reason) == 0);
	CHECK_EQ(rdrv_eq0_count(a, RNIC_EQE_DEVICE_FATAL, &ev), 1);
	CHECK_EQ(le64_to_cpu(ev.info), RNIC_FATAL_INTERNAL);

	/* A second SEND written (not rung) before the snapshot */
	rdrv_post_send(a, &aqp, wqe, false);
	snap = ram_copy(ta->p);
	memcpy(irqs, ta->p->irqs, sizeof(irqs));
	ntx = ta->p->ntx;

	rdrv_ring(a, aqp.sq_off, aqp.sq_pi);
	rdrv_cq_arm(a, &acq, false);
	twire_run(w);			/* B: the SEND, then its ACK to A */
	REQUIRE(rdrv_cq_poll(b, &bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(le32_to_cpu(c.byte_len), 1000);
	for (i = 0; i < 5; i++)
		twire_advance(w, 1000000000ULL);

	CHECK_EQ(ta->p->ntx, ntx);
	CHECK(!rdrv_cq_poll(b, &bcq, &c));	/* no second SEND */
	CHECK(!memcmp(ta->p->ram, snap, ta->p->ram_len));
	CHECK_MEM_EQ(ta->p->irqs, irqs, sizeof(irqs));
	CHECK(!rdrv_cq_poll(a, &acq, &c));
	CHECK(tstatus_has(ta, "rx_drop_no_queue 1"));	/* the ACK */
	free(snap);

	/* Reset and set up again: RDMA is served */
	REQUIRE(tdev_init_abi(ta, RNIC_ABI2_MAJOR) == T_STATUS_UP);
	CHECK(tstatus_has(ta, "fatal_reason 0"));
	CHECK_EQ(rdrv_setup(a), 0);
	CHECK_EQ(rdrv_cq_create(a, 6, &acq), RNIC_AQ_SUCCESS);
	twire_free(w);
	rdrv_free(a);
	rdrv_free(b);
}

/*
 * aq hold: commands posted and rung while held stay posted (no
 * completion, AQ_SQ_HEAD and the query buffer untouched, no interrupt)
 * across ticks, while the rings go on. The release alone, with no
 * doorbell after it, runs them in order and completes them.
 */
TEST(dev_aq_hold_then_release_without_doorbell)
{
	union rnic_aq_entry e[2];
	struct rnic_acqe *ac;
	struct rnic_device_attr *attr;
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	unsigned int irq0, i;
	struct fdev x;
	u64 buf[2];
	u8 f[512];
	size_t len;
	u16 idx;

	f_up(&x);
	CHECK(tstatus_has(x.t, "aq_hold 0"));
	REQUIRE(rdev_aq_hold(x.t->d, true) == 0);
	CHECK_EQ(rdev_aq_hold(x.t->d, true), 0);	/* idempotent */
	CHECK(tstatus_has(x.t, "aq_hold 1"));
	CHECK(tstatus_has(x.t, "tx_hold 0") && tstatus_has(x.t, "rx_hold 0"));
	irq0 = x.t->p->irqs[0];
	idx = x.t->drv.aq_pi;

	/* As the driver does: write, slot, ring; it then waits */
	for (i = 0; i < 2; i++) {
		buf[i] = talloc(x.t, 256, 64);
		memset(tram(x.t, buf[i]), 0xee, 256);
		query_device_cmd(&e[i], buf[i]);
		CHECK_EQ(tadmin(x.t, &e[i], NULL), -1);	/* no completion */
	}
	for (i = 0; i < 3; i++) {
		x.t->p->now += 1000000000ULL;
		rdev_tick(x.t->d, x.t->p->now);
		tring(x.t, RNIC_DB_VEC_EVENT);
	}
	CHECK(!aq_done(x.t, x.t->drv.aq_cq, idx));
	CHECK(!aq_done(x.t, x.t->drv.aq_cq, idx + 1));
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_AQ_SQ_HEAD), idx);
	CHECK_EQ(((u8 *)tram(x.t, buf[0]))[0], 0xee);
	CHECK_EQ(x.t->p->irqs[0], irq0);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), T_STATUS_UP);

	/* The rings are not held */
	len = tf_roce(f, TF_V2_IPV4, 100, -1, 4791);
	tx_desc(x.t, &d, f, len);
	tpost_tx(x.t, &x.tx, &d);
	CHECK_EQ(x.t->p->ntx, 1);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));

	/* Release: no new doorbell */
	REQUIRE(rdev_aq_hold(x.t->d, false) == 0);
	CHECK(tstatus_has(x.t, "aq_hold 0"));
	for (i = 0; i < 2; i++) {
		ac = aq_done(x.t, x.t->drv.aq_cq, idx + i);
		REQUIRE(ac != NULL);
		CHECK_EQ(ac->status, RNIC_AQ_SUCCESS);
		CHECK_EQ(ac->cmd_id, e[i].hdr.cmd_id);
		CHECK_EQ(le16_to_cpu(ac->sq_head), (u16)(idx + i + 1));
		CHECK_EQ(le32_to_cpu(ac->result), sizeof(*attr));
		attr = tram(x.t, buf[i]);
		CHECK_EQ(le16_to_cpu(attr->abi_major), RNIC_ABI2_MAJOR);
	}
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_AQ_SQ_HEAD), (u16)(idx + 2));
	CHECK_EQ(x.t->p->irqs[0], irq0 + 1);	/* one batch */
	CHECK_EQ(rdev_aq_hold(x.t->d, false), 0);	/* idempotent */
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_bad_doorbells), 0);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_admin_errors), 0);
	tdev_free(x.t);
}

/*
 * The driver's recovery from a command timeout is a reset: it clears the
 * hold (unlike rx and tx hold), the command held is never run (its
 * completion never written), and the admin queue the driver programs
 * next works at once. A release after that is a no-op. Held, then made
 * fatal, a release runs nothing either. A hold taken while the device is
 * disabled holds the queue of the next enable if no reset comes between.
 */
TEST(dev_aq_hold_is_cleared_by_reset)
{
	union rnic_aq_entry e;
	struct tcq cq;
	struct fdev x;
	u64 old_cq, buf;
	u32 reason = 0;
	u16 idx;

	f_up(&x);
	buf = talloc(x.t, 256, 64);
	REQUIRE(rdev_aq_hold(x.t->d, true) == 0);
	idx = x.t->drv.aq_pi;
	old_cq = x.t->drv.aq_cq;
	query_device_cmd(&e, buf);
	CHECK_EQ(tadmin(x.t, &e, NULL), -1);

	REQUIRE(tdev_init(x.t) == T_STATUS_UP);	/* reset + enable */
	CHECK(tstatus_has(x.t, "aq_hold 0"));
	CHECK(!aq_done(x.t, old_cq, idx));
	CHECK_EQ(tcreate_cq(x.t, 6, 2, &cq), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdev_aq_hold(x.t->d, false), 0);
	CHECK(!aq_done(x.t, old_cq, idx));
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_admin_errors), 0);

	/* Held, then fatal: the release takes nothing */
	REQUIRE(rdev_aq_hold(x.t->d, true) == 0);
	idx = x.t->drv.aq_pi;
	query_device_cmd(&e, buf);
	CHECK_EQ(tadmin(x.t, &e, NULL), -1);
	REQUIRE(rdev_fatal(x.t->d, &reason) == 0);
	CHECK(tstatus_has(x.t, "aq_hold 1"));
	REQUIRE(rdev_aq_hold(x.t->d, false) == 0);
	CHECK(!aq_done(x.t, x.t->drv.aq_cq, idx));
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_FATAL);

	/* The reset alone (a driver unload) clears it too */
	REQUIRE(rdev_aq_hold(x.t->d, true) == 0);
	tbar_w32(x.t, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	tring(x.t, RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), RNIC_STATUS_RESET_DONE);
	CHECK(tstatus_has(x.t, "aq_hold 0"));

	/* A guest reconnecting (power-on reset) as well */
	REQUIRE(rdev_aq_hold(x.t->d, true) == 0);
	rdev_reset(x.t->d);
	CHECK(tstatus_has(x.t, "aq_hold 0"));
	tdev_free(x.t);
}
