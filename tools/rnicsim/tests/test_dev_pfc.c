// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: 802.1Qbb PFC. Received pause honoured per priority on TX,
 * XOFF/XON emitted for the no-drop priority from the level of the 2.0
 * RoCE receive buffer (test_rdma_ud.c runs it with traffic).
 */
#include <string.h>

#include "rdma/rdma.h"
#include "fake_plat.h"
#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

static const u8 peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };

static void pfc_on(struct tdev *t, u8 prio, u16 low, u16 high, u16 quanta)
{
	struct rnic_aq_set_port sp = {};

	sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS | RNIC_PORT_VALID_PFC);
	sp.flags = cpu_to_le32(RNIC_PORT_F_PFC);
	sp.pfc_prio = prio;
	sp.pfc_low_wm = cpu_to_le16(low);
	sp.pfc_high_wm = cpu_to_le16(high);
	sp.pfc_xoff_quanta = cpu_to_le16(quanta);
	if (tset_port(t, &sp) != RNIC_AQ_SUCCESS)
		test_fail(__FILE__, __LINE__, "SET_PORT failed");
}

static void rx_pause(struct tdev *t, u8 mask, u16 quanta)
{
	u16 q[8];
	u8 f[64];
	size_t len;
	int i;

	for (i = 0; i < 8; i++)
		q[i] = quanta;
	len = pkt_pfc_build(f, peer_mac, mask, q);
	rdev_wire_rx(t->d, f, len);
}

static void send_arp(struct tdev *t, struct tq *q, u16 flags, u16 tci)
{
	struct rnic_tx_desc d;
	u8 f[128];
	size_t len = tf_arp(f);
	u64 a = tput(t, f, len);
	u32 l = len;

	rnic_tx_desc_build(&d, flags, tci, &a, &l, 1);
	tpost_tx(t, q, &d);
}

TEST(dev_pfc_pause_honoured_per_priority)
{
	struct tdev *t = tdev_up();
	struct tcq cq;
	struct tq q3, q5;
	u64 pause_ns = rnic_pause_ns(1000, 10000);	/* 51.2 us */
	u64 next;

	REQUIRE(tcreate_cq(t, 6, 1, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 3, &q3) ==
		RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 5, &q5) ==
		RNIC_AQ_SUCCESS);
	pfc_on(t, 3, 0, 0, 0);

	rx_pause(t, BIT(3), 1000);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_rx_pause), 1);
	send_arp(t, &q3, 0, 0);			/* untagged: queue prio 3 */
	send_arp(t, &q3, 0, 0);
	CHECK_EQ(t->p->ntx, 0);
	send_arp(t, &q5, 0, 0);			/* prio 5 flows */
	CHECK_EQ(t->p->ntx, 1);
	send_arp(t, &q5, RNIC_TX_F_VLAN_INSERT, 3 << 13);	/* PCP 3 */
	CHECK_EQ(t->p->ntx, 1);			/* q5 now blocked behind it */

	/* The timer wants to run when the pause ends, and then sends. */
	next = rdev_tick(t->d, t->p->now);
	CHECK_EQ(next, t->p->now + pause_ns);
	t->p->now += pause_ns / 2;
	rdev_tick(t->d, t->p->now);
	CHECK_EQ(t->p->ntx, 1);
	t->p->now = next;
	rdev_tick(t->d, t->p->now);
	CHECK_EQ(t->p->ntx, 4);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_tx_paused_ns), pause_ns);
	tdev_free(t);
}

TEST(dev_pfc_xon_and_disabled_port)
{
	struct tdev *t = tdev_up();
	struct rnic_port_attr *a;
	struct tcq cq;
	struct tq q;
	u64 buf;

	REQUIRE(tcreate_cq(t, 6, 1, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 2, &q) ==
		RNIC_AQ_SUCCESS);

	/* PFC off: pause frames are counted and ignored. */
	rx_pause(t, 0xff, 0xffff);
	send_arp(t, &q, 0, 0);
	CHECK_EQ(t->p->ntx, 1);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_rx_pause), 1);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_rx_eth_frames), 0);

	pfc_on(t, 2, 0, 0, 0);
	rx_pause(t, BIT(2) | BIT(6), 0xffff);
	send_arp(t, &q, 0, 0);
	CHECK_EQ(t->p->ntx, 1);
	buf = talloc(t, 64, 64);
	a = tram(t, buf);
	{
		union rnic_aq_entry e = {};

		e.query.hdr.opcode = RNIC_AQ_QUERY_PORT;
		e.query.buf_addr = cpu_to_le64(buf);
		e.query.buf_len = cpu_to_le32(64);
		REQUIRE(tadmin(t, &e, NULL) == RNIC_AQ_SUCCESS);
	}
	CHECK_EQ(a->tx_paused, BIT(2) | BIT(6));
	/* XON (quanta 0) resumes at once. */
	t->p->now += 1000;
	rx_pause(t, BIT(2), 0);
	CHECK_EQ(t->p->ntx, 2);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_tx_paused_ns), 1000);
	tdev_free(t);
}

/* The PFC frames among the captured ones: returns how many, last one's. */
static unsigned int sent_pauses(struct plat *p, unsigned int from,
				u8 *mask, u16 quanta[8])
{
	unsigned int i, n = 0;

	for (i = from; i < p->ntx && i < FAKE_MAX_FRAMES; i++)
		if (pkt_pfc_parse(p->tx[i].data, p->tx[i].len, mask, quanta))
			n++;
	return n;
}

/*
 * rx hold keeps received RoCE frames in the receive buffer: XOFF once
 * fewer than the low watermark of its entries are free, XON when a
 * reset empties it, no pause frames while the link is down.
 */
TEST(dev_pfc_xoff_from_rx_buffer_xon_on_reset)
{
	struct tdev *t = tdev_up();
	u8 rf[512], mask;
	size_t len = tf_roce(rf, TF_V2_IPV4, 100, -1, 4791);
	u16 quanta[8];
	unsigned int i;

	REQUIRE(rdev_rx_hold(t->d, true) == 0);
	/* Default watermarks: depth/8 = 32 and depth/4 = 64 free entries */
	pfc_on(t, 1, 0, 0, 0);
	for (i = 0; i < RDMA_RX_FIFO - 32; i++)
		rdev_wire_rx(t->d, rf, len);
	CHECK_EQ(sent_pauses(t->p, 0, &mask, quanta), 0);	/* 32 free */
	rdev_wire_rx(t->d, rf, len);
	REQUIRE(sent_pauses(t->p, 0, &mask, quanta) == 1);
	CHECK_EQ(mask, BIT(1));
	CHECK_EQ(quanta[1], 0xffff);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_rx_roce_v2_frames), RDMA_RX_FIFO - 31);

	/* A reset under an asserted XOFF withdraws it. */
	rdev_reset(t->d);
	CHECK_EQ(sent_pauses(t->p, 0, &mask, quanta), 2);
	CHECK_EQ(quanta[1], 0);

	/* No pause frames while the link is down. */
	REQUIRE(tdev_init(t) == T_STATUS_UP);
	rdev_set_link(t->d, false);
	pfc_on(t, 1, 0, 0, 0);
	for (i = 0; i < RDMA_RX_FIFO; i++)
		rdev_wire_rx(t->d, rf, len);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_rx_drop_link_down), RDMA_RX_FIFO);
	CHECK_EQ(sent_pauses(t->p, 0, &mask, quanta), 2);
	tdev_free(t);
}

static void collect(void *ctx, const char *line)
{
	strncat(ctx, line, 8000 - strlen(ctx));
	strcat(ctx, "\n");
}

/*
 * The datapath asks about pauses per packet: without a paused priority,
 * or with PFC off, that costs no clock read.
 */
TEST(dev_pfc_clock_read_only_when_needed)
{
	struct tdev *t = tdev_up();
	u64 n;

	rdev_set_link(t->d, true);
	n = t->p->now_reads;
	CHECK(!rdev_pfc_paused_now(t->d, 3));
	rdev_pfc_check_now(t->d);
	CHECK_EQ(t->p->now_reads, n);
	pfc_on(t, 3, 2, 4, 0xffff);
	rx_pause(t, BIT(3), 0xffff);
	n = t->p->now_reads;
	CHECK(!rdev_pfc_paused_now(t->d, 2));
	CHECK_EQ(t->p->now_reads, n);
	CHECK(rdev_pfc_paused_now(t->d, 3));
	CHECK(t->p->now_reads > n);
	n = t->p->now_reads;
	rdev_pfc_check_now(t->d);
	CHECK(t->p->now_reads > n);
	tdev_free(t);
}

TEST(dev_counters_dump)
{
	struct tdev *t = tdev_up();
	static char all[8192];
	struct tcq cq;
	struct tq q;

	REQUIRE(tcreate_cq(t, 6, 1, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 0, &q) ==
		RNIC_AQ_SUCCESS);
	rx_pause(t, BIT(0), 10);
	send_arp(t, &q, 0, 0);
	all[0] = 0;
	rdev_dump_counters(t->d, collect, all);
	CHECK(strstr(all, "tx_eth_frames 1\n") != NULL);
	CHECK(strstr(all, "rx_pause 1\n") != NULL);
	CHECK(strstr(all, "admin_cmds 2\n") != NULL);
	CHECK(strstr(all, "link_changes 0\n") != NULL);
	CHECK(strstr(all, "queue0_frames 1\n") != NULL);
	tdev_free(t);
}
