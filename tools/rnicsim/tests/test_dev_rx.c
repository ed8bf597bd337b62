// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: the RX path. Classification (RoCE frames to the 2.0
 * transport, the rest to the ETH_RX ring), VLAN strip, buffer handling,
 * drops and their counters.
 */
#include <string.h>

#include "fake_plat.h"
#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

struct rxt {
	struct tdev *t;
	struct tcq cq;
	struct tq eth;
	u64 buf[16];		/* buffers posted, per ring position */
};

#define BUF_SIZE	2048

static void post(struct rxt *x, struct tq *q, unsigned int n, u32 len)
{
	while (n--) {
		u64 a = talloc(x->t, BUF_SIZE, 64);

		memset(tram(x->t, a), 0xcc, BUF_SIZE);
		x->buf[q->pi & 15] = a;
		tpost_rx(x->t, q, a, len, true);
	}
}

static bool rx_setup(struct rxt *x)
{
	memset(x, 0, sizeof(*x));
	x->t = tdev_up();
	teq_count(x->t, 0, NULL);
	if (tcreate_cq(x->t, 6, 3, &x->cq) ||
	    tcreate_queue(x->t, RNIC_QUEUE_ETH_RX, 4, x->cq.id, BUF_SIZE, 0,
			  &x->eth))
		return false;
	post(x, &x->eth, 8, 0);
	return true;
}

static void set_port(struct tdev *t, u32 valid, u32 flags, u16 port)
{
	struct rnic_aq_set_port sp = {};

	sp.valid = cpu_to_le32(valid);
	sp.flags = cpu_to_le32(flags);
	sp.udp_port = cpu_to_le16(port);
	if (tset_port(t, &sp) != RNIC_AQ_SUCCESS)
		test_fail(__FILE__, __LINE__, "SET_PORT failed");
}

/* Deliver @f and check it landed in the ETH_RX ring; returns the CQE. */
static struct rnic_cqe rx_expect(struct rxt *x, const u8 *f, size_t len,
				 struct tq *q, u8 rx_class)
{
	struct rnic_cqe c = {};

	rdev_wire_rx(x->t->d, f, len);
	if (!tcq_poll(x->t, &x->cq, &c)) {
		test_fail(__FILE__, __LINE__, "no CQE");
		return c;
	}
	CHECK_EQ(le16_to_cpu(c.queue_id), q->id);
	CHECK_EQ(c.status, RNIC_CQE_OK);
	CHECK_EQ(c.rx_class, rx_class);
	CHECK_EQ(rnic_cqe_rx_class(&c), rx_class);
	CHECK(!(le32_to_cpu(c.flags) & RNIC_CQE_F_TX));
	CHECK_EQ(le32_to_cpu(c.byte_len), len);
	CHECK_MEM_EQ(tram(x->t, x->buf[le16_to_cpu(c.desc_idx) & 15]), f,
		     len);
	return c;
}

/* Deliver @f: a RoCE frame, the transport's, never a ring's. */
static void rx_transport(struct rxt *x, const u8 *f, size_t len)
{
	struct rnic_cqe c;

	rdev_wire_rx(x->t->d, f, len);
	CHECK(!tcq_poll(x->t, &x->cq, &c));
}

TEST(dev_rx_classification)
{
	struct rxt x;
	u8 f[2048];
	size_t len;

	REQUIRE(rx_setup(&x));
	len = tf_arp(f);
	rx_expect(&x, f, len, &x.eth, RNIC_RX_CLASS_ETH);
	len = tf_roce(f, TF_V1, 200, -1, 4791);
	rx_transport(&x, f, len);
	len = tf_roce(f, TF_V2_IPV4, 200, -1, 4791);
	rx_transport(&x, f, len);
	len = tf_roce(f, TF_V2_IPV6, 200, -1, 4791);
	rx_transport(&x, f, len);
	/* Tagged frames are looked through. */
	len = tf_roce(f, TF_V2_IPV6, 200, 0x2007, 4791);
	rx_transport(&x, f, len);
	/* Another UDP port is plain Ethernet... */
	len = tf_roce(f, TF_V2_IPV4, 200, -1, 1021);
	rx_expect(&x, f, len, &x.eth, RNIC_RX_CLASS_ETH);
	/* ...until the classifier is told that port is RoCE. */
	set_port(x.t, RNIC_PORT_VALID_UDP_PORT, 0, 1021);
	rx_transport(&x, f, len);
	len = tf_roce(f, TF_V2_IPV4, 200, -1, 4791);
	rx_expect(&x, f, len, &x.eth, RNIC_RX_CLASS_ETH);

	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_eth_frames), 3);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_roce_v1_frames), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_roce_v2_frames), 4);
	tdev_free(x.t);
}

static void collect(void *ctx, const char *line)
{
	strncat(ctx, line, 8000 - strlen(ctx));
	strcat(ctx, "\n");
}

TEST(dev_rx_without_a_queue)
{
	static char all[8192];
	struct rxt x;
	u8 f[2048];
	size_t len;

	/* No ETH_RX ring: Ethernet frames are dropped, RoCE frames are not */
	REQUIRE(rx_setup(&x));
	REQUIRE(tdestroy(x.t, RNIC_AQ_DESTROY_QUEUE, x.eth.id) == 0);
	len = tf_roce(f, TF_V2_IPV4, 100, -1, 4791);
	rdev_wire_rx(x.t->d, f, len);
	len = tf_roce(f, TF_V1, 100, -1, 4791);
	rdev_wire_rx(x.t->d, f, len);
	len = tf_arp(f);
	rdev_wire_rx(x.t->d, f, len);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_no_queue), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_roce_v1_frames), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_roce_v2_frames), 1);
	tdev_free(x.t);

	/*
	 * A device that is not enabled has no transport and no ring: every
	 * frame is dropped and counted (read without the admin queue).
	 */
	x.t = tdev_new(0);
	rdev_wire_rx(x.t->d, f, len);
	len = tf_roce(f, TF_V2_IPV6, 100, -1, 4791);
	rdev_wire_rx(x.t->d, f, len);
	len = tf_roce(f, TF_V1, 100, -1, 4791);
	rdev_wire_rx(x.t->d, f, len);
	all[0] = 0;
	rdev_dump_counters(x.t->d, collect, all);
	CHECK(strstr(all, "rx_drop_no_queue 3\n") != NULL);
	CHECK(strstr(all, "rx_roce_v1_frames 0\n") != NULL);
	CHECK(strstr(all, "rx_roce_v2_frames 0\n") != NULL);
	tdev_free(x.t);
}

TEST(dev_rx_no_buffer)
{
	struct rxt x;
	struct rnic_cqe c;
	u64 buf;
	__le64 *v;
	u8 f[128];
	size_t len = tf_arp(f);
	unsigned int i;

	REQUIRE(rx_setup(&x));
	for (i = 0; i < 10; i++)
		rdev_wire_rx(x.t->d, f, len);
	for (i = 0; i < 8; i++)
		CHECK(tcq_poll(x.t, &x.cq, &c));
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_no_buf), 2);
	/* Per-queue counters agree. */
	buf = talloc(x.t, 64, 64);
	v = tram(x.t, buf);
	{
		union rnic_aq_entry e = {};

		e.query.hdr.opcode = RNIC_AQ_QUERY_STATS;
		e.query.scope = RNIC_STATS_SCOPE_QUEUE;
		e.query.id = cpu_to_le16(x.eth.id);
		e.query.buf_addr = cpu_to_le64(buf);
		e.query.buf_len = cpu_to_le32(64);
		REQUIRE(tadmin(x.t, &e, NULL) == RNIC_AQ_SUCCESS);
	}
	CHECK_EQ(le64_to_cpu(v[RNIC_QUEUE_STAT_frames]), 8);
	CHECK_EQ(le64_to_cpu(v[RNIC_QUEUE_STAT_bytes]), 8 * len);
	CHECK_EQ(le64_to_cpu(v[RNIC_QUEUE_STAT_drops]), 2);
	/* Reposting makes room again. */
	post(&x, &x.eth, 1, 0);
	rx_expect(&x, f, len, &x.eth, RNIC_RX_CLASS_ETH);
	tdev_free(x.t);
}

TEST(dev_rx_buffer_too_small)
{
	struct rxt x;
	struct rnic_cqe c;
	u8 f[2048];
	size_t len = tf_roce(f, TF_V2_IPV4, 500, -1, 1021);	/* not RoCE */
	u64 small;

	REQUIRE(rx_setup(&x));
	REQUIRE(tdestroy(x.t, RNIC_AQ_DESTROY_QUEUE, x.eth.id) == 0);
	REQUIRE(tcreate_queue(x.t, RNIC_QUEUE_ETH_RX, 4, x.cq.id, BUF_SIZE, 0,
			      &x.eth) == RNIC_AQ_SUCCESS);
	small = talloc(x.t, 256, 64);
	memset(tram(x.t, small), 0xcc, 256);
	tpost_rx(x.t, &x.eth, small, 256, true);
	post(&x, &x.eth, 1, 0);	/* len 0: the queue's 2048 */
	rdev_wire_rx(x.t->d, f, len);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_TOO_LONG);
	CHECK_EQ(le32_to_cpu(c.byte_len), len);
	CHECK_EQ(((u8 *)tram(x.t, small))[0], 0xcc);	/* untouched */
	rx_expect(&x, f, len, &x.eth, RNIC_RX_CLASS_ETH);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_too_long), 1);
	tdev_free(x.t);
}

TEST(dev_rx_vlan_strip)
{
	struct rxt x;
	struct rnic_cqe c;
	u8 tagged[2048], plain[2048];
	/* UDP to another port than RoCE's: Ethernet frames */
	size_t tlen = tf_roce(tagged, TF_V2_IPV4, 300, 0xa00c, 1021);
	size_t plen = tf_roce(plain, TF_V2_IPV4, 300, -1, 1021);

	REQUIRE(rx_setup(&x));
	REQUIRE(tlen == plen + 4);
	/* Off: the tag stays in the frame. */
	c = rx_expect(&x, tagged, tlen, &x.eth, RNIC_RX_CLASS_ETH);
	CHECK(!(le32_to_cpu(c.flags) & RNIC_CQE_F_VLAN_STRIPPED));

	set_port(x.t, RNIC_PORT_VALID_FLAGS, RNIC_PORT_F_RX_VLAN_STRIP, 0);
	rdev_wire_rx(x.t->d, tagged, tlen);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);
	CHECK(le32_to_cpu(c.flags) & RNIC_CQE_F_VLAN_STRIPPED);
	CHECK_EQ(le16_to_cpu(c.vlan_tci), 0xa00c);
	CHECK_EQ(le32_to_cpu(c.byte_len), plen);
	CHECK_MEM_EQ(tram(x.t, x.buf[le16_to_cpu(c.desc_idx) & 15]), plain,
		     plen);
	/* Untagged frames are untouched. */
	c = rx_expect(&x, plain, plen, &x.eth, RNIC_RX_CLASS_ETH);
	CHECK(!(le32_to_cpu(c.flags) & RNIC_CQE_F_VLAN_STRIPPED));
	tdev_free(x.t);
}

TEST(dev_rx_drops_by_reason)
{
	struct rxt x;
	struct rnic_cqe c;
	u8 f[12000];
	size_t len;

	REQUIRE(rx_setup(&x));
	len = tf_arp(f);
	rdev_wire_rx(x.t->d, f, 13);			/* runt */
	rdev_wire_rx(x.t->d, NULL, 0);
	len = tf_roce(f, TF_V2_IPV4, 300, -1, 4791);
	rdev_wire_rx(x.t->d, f, len - 10);		/* truncated RoCE */
	len = tf_roce(f, TF_V1, 300, -1, 4791);
	rdev_wire_rx(x.t->d, f, 40);			/* truncated v1 */
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_malformed), 4);

	memset(f + 60, 0x11, sizeof(f) - 60);
	len = tf_arp(f);
	rdev_wire_rx(x.t->d, f, 1519);			/* MTU 1500 + 18 + 1 */
	rdev_wire_rx(x.t->d, f, 11000);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_too_long), 2);
	rdev_wire_rx(x.t->d, f, 1518);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_OK);

	rdev_set_link(x.t->d, false);
	rdev_wire_rx(x.t->d, f, len);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_link_down), 1);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	tdev_free(x.t);
}

TEST(dev_rx_bad_buffers_and_doorbells)
{
	struct rxt x;
	struct rnic_cqe c;
	struct rnic_eqe e;
	u8 f[128];
	size_t len = tf_arp(f);

	/* A buffer reaching outside guest RAM. */
	REQUIRE(rx_setup(&x));
	REQUIRE(tdestroy(x.t, RNIC_AQ_DESTROY_QUEUE, x.eth.id) == 0);
	REQUIRE(tcreate_queue(x.t, RNIC_QUEUE_ETH_RX, 4, x.cq.id, BUF_SIZE, 0,
			      &x.eth) == RNIC_AQ_SUCCESS);
	tpost_rx(x.t, &x.eth, T_RAM_SIZE - 1024, 0, true);
	rdev_wire_rx(x.t->d, f, len);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_DMA_ERROR);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, &e), 1);
	CHECK_EQ(e.reason, RNIC_ERR_DMA_OOB);
	CHECK_EQ(le64_to_cpu(e.info), T_RAM_SIZE - 1024);
	/* The queue is dead: later frames are dropped. */
	post(&x, &x.eth, 1, 0);
	rdev_wire_rx(x.t->d, f, len);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_rx_drop_no_queue), 1);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_dma_errors), 1);
	tdev_free(x.t);

	/* Reserved bits in an RX descriptor. */
	REQUIRE(rx_setup(&x));
	((struct rnic_rx_desc *)tram(x.t, x.eth.base))->reserved = 1;
	rdev_wire_rx(x.t->d, f, len);
	REQUIRE(tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(c.status, RNIC_CQE_BAD_DESC);
	CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, &e), 1);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DESC);
	tdev_free(x.t);

	/* A producer index more than the depth ahead. */
	REQUIRE(rx_setup(&x));
	tbar_w32(x.t, RNIC_DB_QUEUE_OFF(x.eth.id), 100);
	rdev_wire_rx(x.t->d, f, len);
	CHECK(!tcq_poll(x.t, &x.cq, &c));
	CHECK_EQ(teq_count(x.t, RNIC_EQE_QUEUE_ERROR, &e), 1);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(le64_to_cpu(e.info), 100);
	tdev_free(x.t);
}

TEST(dev_rx_random_frames_never_crash)
{
	struct rxt x;
	struct rnic_cqe c;
	u8 f[10000];
	u32 seed = 4242;
	unsigned int i, j;

	REQUIRE(rx_setup(&x));
	set_port(x.t, RNIC_PORT_VALID_FLAGS, RNIC_PORT_F_RX_VLAN_STRIP |
		 RNIC_PORT_F_PFC, 0);
	for (i = 0; i < 5000; i++) {
		size_t len;

		seed = seed * 1103515245 + 12345;
		if (i & 1) {
			len = tf_roce(f, (enum tf_kind)((seed >> 8) % 3),
				      (seed >> 12) % 1400,
				      (seed & 1) ? -1 : 0x3001, 4791);
			/* Flip a byte and cut the frame somewhere. */
			f[(seed >> 4) % len] ^= 1 << ((seed >> 20) % 8);
			if (seed & 2)
				len = (seed >> 16) % (len + 1);
		} else {
			len = (seed >> 16) % sizeof(f);
			for (j = 0; j < len; j++) {
				seed = seed * 1103515245 + 12345;
				f[j] = seed >> 16;
			}
			if (len > 14 && (i & 2)) {
				f[12] = 0x88;	/* MAC control / PFC */
				f[13] = 0x08;
			}
		}
		rdev_wire_rx(x.t->d, f, len);
		while (tcq_poll(x.t, &x.cq, &c)) {
			u64 a = x.buf[le16_to_cpu(c.desc_idx) & 15];

			/* Give the same buffer back. */
			CHECK_EQ(le16_to_cpu(c.queue_id), x.eth.id);
			x.buf[x.eth.pi & 15] = a;
			tpost_rx(x.t, &x.eth, a, 0, true);
		}
		x.t->p->now += 1000;
		rdev_tick(x.t->d, x.t->p->now);
		teq_count(x.t, 0, NULL);
	}
	CHECK_EQ(tbar_r32(x.t, RNIC_REG_STATUS), T_STATUS_UP);
	CHECK_EQ(tctr(x.t, RNIC_PORT_STAT_queue_errors), 0);
	tdev_free(x.t);
}
