// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: TX rings. Descriptor parsing (well-formed and malformed),
 * SGE gather, offloads, completions, CQ arming and overflow, tx hold.
 */
#include <errno.h>
#include <string.h>

#include "fake_plat.h"
#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

struct txt {
	struct tdev *t;
	struct tcq cq;
	struct tq q;
};

/* Reset + enable x->t, then a CQ and a 16-entry TX queue completing there */
static bool tx_up(struct txt *x, unsigned int cq_log2, u8 prio)
{
	if (tdev_init(x->t) != T_STATUS_UP)
		return false;
	while (teq_count(x->t, 0, NULL))
		;
	return tcreate_cq(x->t, cq_log2, 2, &x->cq) == RNIC_AQ_SUCCESS &&
	       tcreate_queue(x->t, RNIC_QUEUE_ETH_TX, 4, x->cq.id, 0, prio,
			     &x->q) == RNIC_AQ_SUCCESS;
}

static bool tx_setup(struct txt *x, u32 caps_disable, unsigned int cq_log2,
		     u8 prio)
{
	x->t = tdev_new(caps_disable);
	return tx_up(x, cq_log2, prio);
}

/* A descriptor for @frame cut into @n pieces placed apart in guest RAM. */
static void desc_for(struct tdev *t, struct rnic_tx_desc *d, u16 flags,
		     u16 tci, const u8 *frame, size_t len, unsigned int n)
{
	u64 addr[RNIC_TX_MAX_SGE];
	u32 plen[RNIC_TX_MAX_SGE];
	struct rnic_sge list[RNIC_TX_MAX_SGE] = {};
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		plen[i] = i == n - 1 ? len - off : len / n;
		addr[i] = tput(t, frame + off, plen[i]);
		talloc(t, 64, 64);	/* a gap between pieces */
		off += plen[i];
	}
	if (n <= RNIC_TX_INLINE_SGE) {
		rnic_tx_desc_build(d, flags, tci, addr, plen, n);
		return;
	}
	for (i = 0; i < n; i++) {
		list[i].addr = cpu_to_le64(addr[i]);
		list[i].len = cpu_to_le32(plen[i]);
	}
	rnic_tx_desc_build_indirect(d, flags, tci,
				    tput(t, list, n * RNIC_SGE_SIZE), n, len);
}

static void check_queue_error(struct tdev *t, u16 qid, u8 reason)
{
	struct rnic_eqe e = {};

	CHECK_EQ(teq_count(t, RNIC_EQE_QUEUE_ERROR, &e), 1);
	CHECK_EQ(e.reason, reason);
	CHECK_EQ(e.obj, RNIC_EQE_OBJ_QUEUE);
	CHECK_EQ(le32_to_cpu(e.data), qid);
}

TEST(dev_tx_inline_sges)
{
	struct txt x;
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	u8 f[128];
	size_t len = tf_arp(f);

	REQUIRE(tx_setup(&x, 0, 6, 0));
	desc_for(x.t, &d, 0, 0, f, len, 2);
	tpost_tx(x.t, &x.q, &d);
	REQUIRE(x.t->p->ntx == 1);
	CHECK_EQ(x.t->p->tx[0].len, len);
	CHECK_MEM_EQ(x.t->p->tx[0].data, f, len);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);
	CHECK(le32_to_cpu(c.flags) & RNIC_CQE_F_TX);
	CHECK_EQ(le16_to_cpu(c.queue_id), x.q.id);
	CHECK_EQ(le16_to_cpu(c.desc_idx), 0);
	CHECK_EQ(le32_to_cpu(c.byte_len), len);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_eth_frames), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_eth_bytes), len);

	/* Around the 16-entry ring twice. */
	for (unsigned int i = 0; i < 40; i++) {
		tpost_tx(x.t, &x.q, &d);
		REQUIRE(tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(le16_to_cpu(c.desc_idx), i + 1);
		CHECK_EQ(c.status, RNIC_CQE_OK);
	}
	CHECK_EQ(x.t->p->ntx, 41);
	tdev_free(x.t);
}

TEST(dev_tx_indirect_with_icrc)
{
	static const enum tf_kind kinds[] = { TF_V1, TF_V2_IPV4, TF_V2_IPV6 };
	struct txt x;
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	u8 f[2048];
	unsigned int k;

	REQUIRE(tx_setup(&x, 0, 6, 0));
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t len = tf_roce(f, kinds[k], 1000, -1, 4791);

		/* The device appends the ICRC: give it the frame without. */
		desc_for(x.t, &d, RNIC_TX_F_ICRC, 0, f, len - 4, 7);
		CHECK(le16_to_cpu(d.flags) & RNIC_TX_F_INDIRECT);
		tpost_tx(x.t, &x.q, &d);
		REQUIRE(x.t->p->ntx == k + 1);
		CHECK_EQ(x.t->p->tx[k].len, len);
		CHECK_MEM_EQ(x.t->p->tx[k].data, f, len);
		REQUIRE(tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(c.status, RNIC_CQE_OK);
		CHECK_EQ(le32_to_cpu(c.byte_len), len);
	}
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_roce_v1_frames), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_roce_v2_frames), 2);
	tdev_free(x.t);
}

TEST(dev_tx_vlan_csum_icrc_offloads)
{
	struct txt x;
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	u8 plain[2048], tagged[2048];
	size_t plen, tlen;

	REQUIRE(tx_setup(&x, 0, 6, 0));
	plen = tf_roce(plain, TF_V2_IPV4, 256, -1, 4791);
	tlen = tf_roce(tagged, TF_V2_IPV4, 256, 0x6005, 4791);
	/* Checksum and ICRC left for the device, the tag too. */
	plain[14 + 10] = 0;
	plain[14 + 11] = 0;
	desc_for(x.t, &d, RNIC_TX_F_VLAN_INSERT | RNIC_TX_F_IPV4_CSUM |
		 RNIC_TX_F_ICRC, 0x6005, plain, plen - 4, 2);
	tpost_tx(x.t, &x.q, &d);
	REQUIRE(x.t->p->ntx == 1);
	CHECK_EQ(x.t->p->tx[0].len, tlen);
	CHECK_MEM_EQ(x.t->p->tx[0].data, tagged, tlen);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(le32_to_cpu(c.byte_len), tlen);

	/* The ICRC honours the configured UDP port. */
	{
		struct rnic_aq_set_port sp = {};
		struct pkt_info info;

		sp.valid = cpu_to_le32(RNIC_PORT_VALID_UDP_PORT);
		sp.udp_port = cpu_to_le16(1021);
		REQUIRE(tset_port(x.t, &sp) == RNIC_AQ_SUCCESS);
		plen = tf_roce(plain, TF_V2_IPV6, 100, -1, 1021);
		desc_for(x.t, &d, RNIC_TX_F_ICRC, 0, plain, plen - 4, 1);
		tpost_tx(x.t, &x.q, &d);
		REQUIRE(x.t->p->ntx == 2);
		CHECK_MEM_EQ(x.t->p->tx[1].data, plain, plen);
		CHECK_EQ(pkt_classify(x.t->p->tx[1].data, plen, 1021, &info),
			 PKT_CLASS_ROCE_V2_IPV6);
		CHECK(pkt_icrc_ok(x.t->p->tx[1].data, &info));
	}
	tdev_free(x.t);
}

enum bad_kind {
	BAD_NUM_SGE_0,
	BAD_NUM_SGE_4,
	BAD_INDIRECT_33,
	BAD_INDIRECT_LEN,
	BAD_SGE_LEN_0,
	BAD_TOTAL_MISMATCH,
	BAD_FLAG,
	BAD_RESERVED,
	BAD_SGE_RESERVED,
	BAD_RUNT,
	BAD_ICRC_NOT_ROCE,
	BAD_CSUM_NOT_IPV4,
	BAD_NO_VLAN_CAP,
	BAD_SGE_OUTSIDE,
	BAD_SGE_WRAPS,
	BAD_LIST_OUTSIDE,
	BAD_COUNT
};

TEST(dev_tx_malformed_descriptors)
{
	unsigned int k;

	for (k = 0; k < BAD_COUNT; k++) {
		bool dma = k >= BAD_SGE_OUTSIDE;
		struct rnic_tx_desc d, good;
		struct rnic_cqe c;
		struct txt x;
		u8 f[128];
		size_t len = tf_arp(f);

		REQUIRE(tx_setup(&x, k == BAD_NO_VLAN_CAP ? RNIC_CAP_VLAN : 0,
				 6, 0));
		desc_for(x.t, &d, 0, 0, f, len, 2);
		good = d;
		switch (k) {
		case BAD_NUM_SGE_0:
			d.num_sge = 0;
			break;
		case BAD_NUM_SGE_4:
			d.num_sge = 4;
			break;
		case BAD_INDIRECT_33:
			desc_for(x.t, &d, 0, 0, f, len, 5);
			d.num_sge = 33;
			d.sge[0].len = cpu_to_le32(33 * 16);
			break;
		case BAD_INDIRECT_LEN:
			desc_for(x.t, &d, 0, 0, f, len, 5);
			d.sge[0].len = cpu_to_le32(4 * 16);
			break;
		case BAD_SGE_LEN_0:
			d.sge[1].len = 0;
			break;
		case BAD_TOTAL_MISMATCH:
			d.total_len = cpu_to_le32(len + 1);
			break;
		case BAD_FLAG:
			d.flags = cpu_to_le16(BIT(5));
			break;
		case BAD_RESERVED:
			d.reserved2 = cpu_to_le32(1);
			break;
		case BAD_SGE_RESERVED:
			d.sge[0].reserved = cpu_to_le32(1);
			break;
		case BAD_RUNT:
			desc_for(x.t, &d, 0, 0, f, 13, 1);
			break;
		case BAD_ICRC_NOT_ROCE:
			d.flags = cpu_to_le16(RNIC_TX_F_ICRC);
			break;
		case BAD_CSUM_NOT_IPV4:
			d.flags = cpu_to_le16(RNIC_TX_F_IPV4_CSUM);
			break;
		case BAD_NO_VLAN_CAP:
			d.flags = cpu_to_le16(RNIC_TX_F_VLAN_INSERT);
			break;
		case BAD_SGE_OUTSIDE:
			d.sge[1].addr = cpu_to_le64(T_RAM_SIZE - 8);
			break;
		case BAD_SGE_WRAPS:
			d.sge[1].addr = cpu_to_le64(~0ULL - 4);
			break;
		case BAD_LIST_OUTSIDE:
			desc_for(x.t, &d, 0, 0, f, len, 5);
			d.sge[0].addr = cpu_to_le64(T_RAM_SIZE + 4096);
			break;
		}
		tpost_tx(x.t, &x.q, &d);
		/* Nothing sent; an error CQE; the queue is dead. */
		CHECK_EQ(x.t->p->ntx, 0);
		REQUIRE(tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(c.status, dma ? RNIC_CQE_DMA_ERROR : RNIC_CQE_BAD_DESC);
		check_queue_error(x.t, x.q.id, dma ? RNIC_ERR_DMA_OOB :
						     RNIC_ERR_BAD_DESC);
		tpost_tx(x.t, &x.q, &good);
		CHECK_EQ(x.t->p->ntx, 0);
		CHECK(!tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(tctr(x.t, dma ? RNIC_PORT_STAT_dma_errors :
				  RNIC_PORT_STAT_bad_descriptors), 1);
		CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_queue_errors), 1);
		/* Recreating the queue recovers. */
		CHECK_EQ(tdestroy(x.t, RNIC_AQ_DESTROY_QUEUE, x.q.id),
			 RNIC_AQ_SUCCESS);
		REQUIRE(tcreate_queue(x.t, RNIC_QUEUE_ETH_TX, 4, x.cq.id, 0, 0,
				      &x.q) == RNIC_AQ_SUCCESS);
		tpost_tx(x.t, &x.q, &good);
		CHECK_EQ(x.t->p->ntx, 1);
		if (test_failed()) {
			test_fail(__FILE__, __LINE__, "bad kind %u", k);
			tdev_free(x.t);
			return;
		}
		tdev_free(x.t);
	}
}

TEST(dev_tx_too_long_is_not_fatal)
{
	struct rnic_tx_desc d, big;
	struct rnic_cqe c;
	struct txt x;
	u8 f[4096];
	size_t len = tf_arp(f);
	u64 a;

	REQUIRE(tx_setup(&x, 0, 6, 0));
	memset(f + len, 0x5a, sizeof(f) - len);
	/* 1518 fits MTU 1500 + 18; 1519 does not. */
	desc_for(x.t, &big, 0, 0, f, 1519, 3);
	tpost_tx(x.t, &x.q, &big);
	desc_for(x.t, &d, 0, 0, f, 1518, 3);
	tpost_tx(x.t, &x.q, &d);
	/* With a tag inserted, 1515 becomes 1519. */
	desc_for(x.t, &big, RNIC_TX_F_VLAN_INSERT, 5, f, 1515, 1);
	tpost_tx(x.t, &x.q, &big);
	/* An SGE claiming 4 GiB (and the total to match): too long. */
	a = tput(x.t, f, 64);
	memset(&big, 0, sizeof(big));
	big.num_sge = 1;
	big.sge[0].addr = cpu_to_le64(a);
	big.sge[0].len = cpu_to_le32(0xffffffff);
	big.total_len = cpu_to_le32(0xffffffff);
	tpost_tx(x.t, &x.q, &big);

	CHECK_EQ(x.t->p->ntx, 1);
	CHECK_EQ(x.t->p->tx[0].len, 1518);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_TOO_LONG);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_TOO_LONG);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_TOO_LONG);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_drop_too_long), 3);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_queue_errors), 0);
	tdev_free(x.t);
}

TEST(dev_tx_link_down_flushes)
{
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	struct txt x;
	u8 f[128];
	size_t len = tf_arp(f);

	REQUIRE(tx_setup(&x, 0, 6, 0));
	desc_for(x.t, &d, 0, 0, f, len, 1);
	rdev_set_link(x.t->d, false);
	tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->ntx, 0);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_FLUSHED);
	/* The platform may also find the carrier gone. */
	rdev_set_link(x.t->d, true);
	x.t->p->wire_rc = -ENETDOWN;
	tpost_tx(x.t, &x.q, &d);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_FLUSHED);
	x.t->p->wire_rc = 0;
	tpost_tx(x.t, &x.q, &d);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_drop_link_down), 2);
	tdev_free(x.t);
}

TEST(dev_tx_bad_ring_doorbell)
{
	struct rnic_cqe c;
	struct txt x;

	REQUIRE(tx_setup(&x, 0, 6, 0));
	/* 17 descriptors claimed in a 16-entry ring. */
	tbar_w32(x.t, RNIC_DB_QUEUE_OFF(x.q.id), 17);
	tring(x.t, RNIC_DB_VEC_DATA);
	check_queue_error(x.t, x.q.id, RNIC_ERR_BAD_DOORBELL);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(x.t->p->ntx, 0);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_bad_doorbells), 1);
	tdev_free(x.t);

	REQUIRE(tx_setup(&x, 0, 6, 0));
	tbar_w32(x.t, RNIC_DB_QUEUE_OFF(x.q.id), BIT(16));
	tring(x.t, RNIC_DB_VEC_DATA);
	check_queue_error(x.t, x.q.id, RNIC_ERR_BAD_DOORBELL);
	tdev_free(x.t);
}

TEST(dev_tx_cq_overflow)
{
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	struct rnic_eqe e;
	struct txt x;
	unsigned int i, n = 0;
	u8 f[128];
	size_t len = tf_arp(f);

	REQUIRE(tx_setup(&x, 0, 2, 0));		/* 4-entry CQ */
	desc_for(x.t, &d, 0, 0, f, len, 1);
	for (i = 0; i < 6; i++)
		tpost_tx(x.t, &x.q, &d);
	while (tcq_poll(x.t, &x.cq, &c))
		n++;
	CHECK_EQ(n, 4);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, &e), 1);
	CHECK_EQ(e.obj, RNIC_EQE_OBJ_CQ);
	CHECK_EQ(e.reason, RNIC_ERR_RING_OVERFLOW);
	CHECK_EQ(le32_to_cpu(e.data), x.cq.id);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_cq_overflows), 1);
	/* The queue completing there stopped. */
	CHECK(x.t->p->ntx <= 5);
	tdev_free(x.t);
}

TEST(dev_tx_cq_arm_raises_its_vector_once)
{
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	struct txt x;
	u8 f[128];
	size_t len = tf_arp(f);

	REQUIRE(tx_setup(&x, 0, 6, 0));	/* CQ on vector 2 */
	desc_for(x.t, &d, 0, 0, f, len, 1);
	tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->irqs[2], 0);		/* not armed */
	tcq_arm(x.t, &x.cq);
	CHECK_EQ(x.t->p->irqs[2], 1);		/* a CQE was pending */
	tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->irqs[2], 1);		/* one-shot */
	while (tcq_poll(x.t, &x.cq, &c))
		;
	tcq_arm(x.t, &x.cq);
	CHECK_EQ(x.t->p->irqs[2], 1);		/* nothing pending */
	tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->irqs[2], 2);
	CHECK_EQ(x.t->p->irqs[1], 0);

	/* A consumer index ahead of the producer is a CQ doorbell error. */
	tbar_w32(x.t, RNIC_DB_CQ_OFF(x.cq.id), x.cq.ci + 5);
	tring(x.t, RNIC_DB_VEC_EVENT);
	{
		struct rnic_eqe e;

		CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, &e), 1);
		CHECK_EQ(e.obj, RNIC_EQE_OBJ_CQ);
		CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	}
	tdev_free(x.t);
}

TEST(dev_tx_random_descriptors_never_crash)
{
	struct txt x;
	u32 seed = 777;
	unsigned int i, j;

	REQUIRE(tx_setup(&x, 0, 10, 0));
	for (i = 0; i < 3000; i++) {
		struct rnic_tx_desc d;
		u8 *b = (u8 *)&d;
		struct rnic_cqe c;

		for (j = 0; j < sizeof(d); j++) {
			seed = seed * 1103515245 + 12345;
			b[j] = seed >> 16;
		}
		/* Mostly plausible fields, so parsing goes deep. */
		if (i & 1) {
			d.flags &= cpu_to_le16(RNIC_TX_F_ALL);
			d.num_sge = 1 + (d.num_sge & 3);
			d.reserved0 = 0;
			d.reserved1 = 0;
			d.reserved2 = 0;
			for (j = 0; j < 3; j++) {
				d.sge[j].reserved = 0;
				d.sge[j].addr = cpu_to_le64(le64_to_cpu(
					d.sge[j].addr) % (T_RAM_SIZE + 8192));
				d.sge[j].len = cpu_to_le32(le32_to_cpu(
					d.sge[j].len) % 3000);
			}
			d.total_len = cpu_to_le32(le32_to_cpu(d.sge[0].len) +
				(d.num_sge > 1 ? le32_to_cpu(d.sge[1].len) : 0) +
				(d.num_sge > 2 ? le32_to_cpu(d.sge[2].len) : 0));
		}
		tpost_tx(x.t, &x.q, &d);
		while (tcq_poll(x.t, &x.cq, &c))
			;
		rdev_tick(x.t->d, x.t->p->now);
		if (i % 64 == 0) {
			/* Start afresh now and then: the queue may be dead. */
			tdestroy(x.t, RNIC_AQ_DESTROY_QUEUE, x.q.id);
			tcreate_queue(x.t, RNIC_QUEUE_ETH_TX, 4, x.cq.id, 0, 0,
				      &x.q);
			teq_count(x.t, 0, NULL);
		}
	}
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), T_STATUS_UP);
	tdev_free(x.t);
}

#define HOLD_FRAMES	16	/* the whole ring: the driver stops its queue */

/* Frame @i of a run: its length and a payload byte are its own. */
static size_t hold_frame(u8 *f, unsigned int i)
{
	size_t len = tf_roce(f, TF_V2_IPV4, 60 + 7 * i, -1, 4791);

	f[len - 5] ^= (u8)(0x80 | i);
	return len;
}

/*
 * tx hold: descriptors posted while held stay in the ring (none sent,
 * none completed, ticks change nothing) until the ring is full. The
 * release alone, with no doorbell after it, sends every frame in order
 * with its bytes, and completes every descriptor.
 */
TEST(dev_tx_hold_then_release_without_doorbell)
{
	static u8 f[HOLD_FRAMES][512];
	size_t len[HOLD_FRAMES];
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	struct txt x;
	unsigned int i, irqs;

	x.t = tdev_new(0);
	CHECK(tstatus_has(x.t, "tx_hold 0"));
	/* Taken before the enable: the reset of tdev_init keeps it. */
	REQUIRE(rdev_tx_hold(x.t->d, true) == 0);
	CHECK_EQ(rdev_tx_hold(x.t->d, true), 0);	/* idempotent */
	REQUIRE(tx_up(&x, 6, 0));
	CHECK(tstatus_has(x.t, "tx_hold 1"));
	CHECK(tstatus_has(x.t, "rx_hold 0"));	/* the other knob untouched */
	tcq_arm(x.t, &x.cq);
	irqs = x.t->p->irqs[2];

	for (i = 0; i < HOLD_FRAMES; i++) {
		len[i] = hold_frame(f[i], i);
		/* 1..5 pieces: 4 and 5 go through an indirect SGE list */
		desc_for(x.t, &d, 0, 0, f[i], len[i], 1 + i % 5);
		tpost_tx(x.t, &x.q, &d);	/* each rings doorbell 3 */
	}
	for (i = 0; i < 3; i++) {
		x.t->p->now += 1000000;
		rdev_tick(x.t->d, x.t->p->now);
	}
	CHECK_EQ(x.t->p->ntx, 0);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(x.t->p->irqs[2], irqs);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_roce_v2_frames), 0);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_bad_doorbells), 0);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, NULL), 0);
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), T_STATUS_UP);

	/* Release: no new doorbell, the device looks at the ring itself. */
	REQUIRE(rdev_tx_hold(x.t->d, false) == 0);
	CHECK(tstatus_has(x.t, "tx_hold 0"));
	REQUIRE(x.t->p->ntx == HOLD_FRAMES);
	for (i = 0; i < HOLD_FRAMES; i++) {
		CHECK_EQ(x.t->p->tx[i].len, len[i]);
		CHECK_MEM_EQ(x.t->p->tx[i].data, f[i], len[i]);
		REQUIRE(tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(c.status, RNIC_CQE_OK);
		CHECK(le32_to_cpu(c.flags) & RNIC_CQE_F_TX);
		CHECK_EQ(le16_to_cpu(c.queue_id), x.q.id);
		CHECK_EQ(le16_to_cpu(c.desc_idx), i);
		CHECK_EQ(le32_to_cpu(c.byte_len), len[i]);
	}
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(x.t->p->irqs[2], irqs + 1);	/* the armed CQ woke it */
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_tx_roce_v2_frames), HOLD_FRAMES);
	CHECK_EQ(rdev_tx_hold(x.t->d, false), 0);	/* idempotent */

	/* Released, the ring runs as before: one post, one frame. */
	tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->ntx, HOLD_FRAMES + 1);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(le16_to_cpu(c.desc_idx), HOLD_FRAMES);
	tdev_free(x.t);
}

/*
 * The hold survives a reset taken while descriptors wait (the reset drops
 * the queues with them); a release while the device is disabled sends
 * nothing; a device that serves no ABI refuses the knob.
 */
TEST(dev_tx_hold_survives_reset)
{
	struct rdev_config cfg = { .num_vectors = 8, .signature_abi = 1 };
	struct rnic_tx_desc d;
	struct rnic_cqe c;
	struct tdev *old;
	struct txt x;
	u8 f[512];
	size_t len;
	unsigned int i;

	REQUIRE(tx_setup(&x, 0, 6, 0));
	REQUIRE(rdev_tx_hold(x.t->d, true) == 0);
	len = hold_frame(f, 1);
	desc_for(x.t, &d, 0, 0, f, len, 2);
	for (i = 0; i < 3; i++)
		tpost_tx(x.t, &x.q, &d);
	rdev_reset(x.t->d);
	CHECK(tstatus_has(x.t, "tx_hold 1"));
	CHECK_EQ(x.t->p->ntx, 0);
	REQUIRE(rdev_tx_hold(x.t->d, false) == 0);	/* disabled: nothing */
	CHECK_EQ(x.t->p->ntx, 0);
	REQUIRE(rdev_tx_hold(x.t->d, true) == 0);

	REQUIRE(tx_up(&x, 6, 0));
	CHECK(tstatus_has(x.t, "tx_hold 1"));
	for (i = 0; i < 2; i++)
		tpost_tx(x.t, &x.q, &d);
	CHECK_EQ(x.t->p->ntx, 0);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	REQUIRE(rdev_tx_hold(x.t->d, false) == 0);
	CHECK_EQ(x.t->p->ntx, 2);
	for (i = 0; i < 2; i++) {
		CHECK_MEM_EQ(x.t->p->tx[i].data, f, len);
		REQUIRE(tcq_poll(x.t, &x.cq, &c));
		CHECK_EQ(c.status, RNIC_CQE_OK);
		CHECK_EQ(le16_to_cpu(c.desc_idx), i);
	}
	tdev_free(x.t);

	memcpy(cfg.mac, t_mac, sizeof(cfg.mac));
	old = tdev_new_cfg(&cfg, T_RAM_SIZE);
	CHECK_EQ(rdev_tx_hold(old->d, true), -EOPNOTSUPP);
	CHECK(!tstatus_has(old, "tx_hold 0") && !tstatus_has(old, "tx_hold 1"));
	tdev_free(old);
}
