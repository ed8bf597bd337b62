// SPDX-License-Identifier: GPL-2.0
/*
 * Device model: the admin queue and every command, well-formed and not.
 */
#include <string.h>

#include "fake_plat.h"
#include "test.h"

static int query(struct tdev *t, u8 opcode, u8 scope, u16 id, u64 addr,
		 u32 len, u32 *result)
{
	union rnic_aq_entry e = {};

	e.query.hdr.opcode = opcode;
	e.query.buf_addr = cpu_to_le64(addr);
	e.query.buf_len = cpu_to_le32(len);
	e.query.scope = scope;
	e.query.id = cpu_to_le16(id);
	return tadmin(t, &e, result);
}

TEST(dev_admin_query_device)
{
	struct tdev *t = tdev_up();
	u64 buf = talloc(t, 256, 64);
	struct rnic_device_attr *a = tram(t, buf);
	u32 res = 0;

	memset(a, 0xee, 256);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, buf, 256, &res),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(res, sizeof(*a));
	CHECK_EQ(le16_to_cpu(a->abi_major), RNIC_ABI2_MAJOR);
	CHECK_EQ(le32_to_cpu(a->caps), RNIC_CAP_ALL_ABI2);
	CHECK_MEM_EQ(a->mac, t_mac, 6);
	CHECK_EQ(le16_to_cpu(a->num_msix), 8);
	CHECK_EQ(le16_to_cpu(a->num_port_stats), RNIC_NUM_PORT_STATS);
	CHECK_EQ(le16_to_cpu(a->num_queue_stats), RNIC_NUM_QUEUE_STATS);
	CHECK_EQ(((u8 *)a)[sizeof(*a)], 0xee);	/* nothing past the result */

	/* A short buffer gets a clipped result and the full size. */
	memset(a, 0xee, 256);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, buf, 6, &res),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(res, sizeof(*a));
	CHECK_EQ(((u8 *)a)[6], 0xee);
	tdev_free(t);
}

TEST(dev_admin_query_malformed)
{
	struct tdev *t = tdev_up();
	u64 buf = talloc(t, 256, 64);
	union rnic_aq_entry e = {};

	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, buf, 0, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 1, 0, buf, 64, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_PORT, 0, 3, buf, 64, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, T_RAM_SIZE - 8, 64,
		       NULL), RNIC_AQ_BAD_ADDR);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, ~0ULL - 7, 64, NULL),
		 RNIC_AQ_BAD_ADDR);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, 2, 0, buf, 64, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, 0, 1, buf, 64, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, 0, 0, buf, 7, NULL),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, 1, 5, buf, 64, NULL),
		 RNIC_AQ_NOT_FOUND);

	/* Reserved fields must be zero, in the header and the body. */
	e.query.hdr.opcode = RNIC_AQ_QUERY_DEVICE;
	e.query.buf_addr = cpu_to_le64(buf);
	e.query.buf_len = cpu_to_le32(64);
	e.query.hdr.reserved1 = cpu_to_le32(1);
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_PARAM);
	e.query.hdr.reserved1 = 0;
	e.hdr.cmd_id = 0;
	e.query.reserved1[9] = cpu_to_le32(1);
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_PARAM);

	/* Unknown opcodes. */
	memset(&e, 0, sizeof(e));
	e.hdr.opcode = 0;
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_OPCODE);
	e.hdr.cmd_id = 0;
	e.hdr.opcode = 0xff;
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_OPCODE);

	/* 9 bad address/param + 2 reserved + 2 opcode, then this query. */
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_admin_errors), 13);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_dma_errors), 2);
	tdev_free(t);
}

TEST(dev_admin_set_and_query_port)
{
	struct tdev *t = tdev_up();
	struct rnic_aq_set_port sp = {};
	u64 buf = talloc(t, 64, 64);
	struct rnic_port_attr *a = tram(t, buf);
	static const u8 mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	u32 res;

	CHECK_EQ(query(t, RNIC_AQ_QUERY_PORT, 0, 0, buf, 64, &res),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(res, sizeof(*a));
	CHECK_EQ(le16_to_cpu(a->mtu), 1500);
	CHECK_EQ(le16_to_cpu(a->udp_port), 4791);
	CHECK(le32_to_cpu(a->link) & RNIC_LINK_UP);
	CHECK_EQ(le32_to_cpu(a->flags), 0);

	sp.valid = cpu_to_le32(RNIC_PORT_VALID_ALL);
	sp.mtu = cpu_to_le16(4200);
	sp.udp_port = cpu_to_le16(1021);
	memcpy(sp.mac, mac, 6);
	sp.flags = cpu_to_le32(RNIC_PORT_F_PFC | RNIC_PORT_F_RX_VLAN_STRIP);
	sp.pfc_prio = 3;
	sp.pfc_xoff_quanta = cpu_to_le16(0x100);
	sp.pfc_low_wm = cpu_to_le16(2);
	sp.pfc_high_wm = cpu_to_le16(6);
	CHECK_EQ(tset_port(t, &sp), RNIC_AQ_SUCCESS);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_PORT, 0, 0, buf, 64, NULL),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(a->mtu), 4200);
	CHECK_EQ(le16_to_cpu(a->udp_port), 1021);
	CHECK_MEM_EQ(a->mac, mac, 6);
	CHECK_EQ(le32_to_cpu(a->flags), RNIC_PORT_F_PFC |
		 RNIC_PORT_F_RX_VLAN_STRIP);
	CHECK_EQ(a->pfc_prio, 3);
	CHECK_EQ(le16_to_cpu(a->pfc_xoff_quanta), 0x100);
	CHECK_EQ(le16_to_cpu(a->pfc_low_wm), 2);
	CHECK_EQ(le16_to_cpu(a->pfc_high_wm), 6);

	/* Only the flagged group changes. */
	memset(&sp, 0, sizeof(sp));
	sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU);
	sp.mtu = cpu_to_le16(9000);
	CHECK_EQ(tset_port(t, &sp), RNIC_AQ_SUCCESS);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_PORT, 0, 0, buf, 64, NULL),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(a->mtu), 9000);
	CHECK_EQ(le16_to_cpu(a->udp_port), 1021);
	tdev_free(t);
}

TEST(dev_admin_set_port_malformed)
{
	struct tdev *t = tdev_new(RNIC_CAP_PFC);
	struct rnic_aq_set_port sp;
	u64 buf;
	struct rnic_port_attr *a;

	REQUIRE(tdev_init(t) == T_STATUS_UP);
	buf = talloc(t, 64, 64);
	a = tram(t, buf);
#define BAD_SET_PORT(field_setup)					\
	do {								\
		memset(&sp, 0, sizeof(sp));				\
		field_setup;						\
		CHECK_EQ(tset_port(t, &sp), RNIC_AQ_BAD_PARAM);		\
	} while (0)
	BAD_SET_PORT(sp.valid = cpu_to_le32(BIT(5)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU),
		      sp.mtu = cpu_to_le16(67)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU),
		      sp.mtu = cpu_to_le16(9001)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_MAC),
		      sp.mac[0] = 1));
	BAD_SET_PORT(sp.valid = cpu_to_le32(RNIC_PORT_VALID_MAC));
	BAD_SET_PORT(sp.valid = cpu_to_le32(RNIC_PORT_VALID_UDP_PORT));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS),
		      sp.flags = cpu_to_le32(BIT(4))));
	/* PFC capability hidden: the flag is refused. */
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS),
		      sp.flags = cpu_to_le32(RNIC_PORT_F_PFC)));
	/* RoCE frames go to the transport: no ICRC check for the host */
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS),
		      sp.flags = cpu_to_le32(RNIC_PORT_F_RX_ICRC_CHECK)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS),
		      sp.flags = cpu_to_le32(RNIC_PORT_F_RX_ICRC_DELIVER_BAD)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_PFC),
		      sp.pfc_prio = 8));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_PFC),
		      sp.pfc_low_wm = cpu_to_le16(4),
		      sp.pfc_high_wm = cpu_to_le16(4)));
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU),
		      sp.mtu = cpu_to_le16(2000), sp.reserved2[0] = 1));
	/* All-or-nothing: a good MTU with a bad port changes nothing. */
	BAD_SET_PORT((sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU |
					     RNIC_PORT_VALID_UDP_PORT),
		      sp.mtu = cpu_to_le16(2000)));
#undef BAD_SET_PORT
	CHECK_EQ(query(t, RNIC_AQ_QUERY_PORT, 0, 0, buf, 64, NULL),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(a->mtu), 1500);
	tdev_free(t);
}

TEST(dev_admin_cq_lifecycle)
{
	struct tdev *t = tdev_up();
	union rnic_aq_entry e = {};
	struct tcq cq, cq2;
	struct tq q;
	unsigned int n;

	CHECK_EQ(tcreate_cq(t, 1, 1, &cq), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_cq(t, 15, 1, &cq), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_cq(t, 4, 8, &cq), RNIC_AQ_BAD_PARAM);	/* 8 vectors */

	e.create_cq.hdr.opcode = RNIC_AQ_CREATE_CQ;
	e.create_cq.log2_depth = 4;
	e.create_cq.ring_addr = cpu_to_le64(0x20010);	/* misaligned */
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_ADDR);
	e.hdr.cmd_id = 0;
	e.create_cq.ring_addr = cpu_to_le64(T_RAM_SIZE - 32 * 8);
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_ADDR);
	e.hdr.cmd_id = 0;
	e.create_cq.ring_addr = cpu_to_le64(0x20000);
	e.create_cq.reserved0 = 1;
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_PARAM);

	REQUIRE(tcreate_cq(t, 4, 1, &cq) == RNIC_AQ_SUCCESS);
	CHECK_EQ(cq.id, 0);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 0, &q) ==
		RNIC_AQ_SUCCESS);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_CQ, cq.id), RNIC_AQ_BAD_STATE);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_QUEUE, q.id), RNIC_AQ_SUCCESS);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_QUEUE, q.id), RNIC_AQ_NOT_FOUND);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_CQ, cq.id), RNIC_AQ_SUCCESS);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_CQ, cq.id), RNIC_AQ_NOT_FOUND);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_CQ, 0xffff), RNIC_AQ_NOT_FOUND);

	/* Exhaustion. */
	for (n = 0; n < RNIC_MAX_CQS; n++)
		if (tcreate_cq(t, 2, 0, &cq2) != RNIC_AQ_SUCCESS)
			break;
	CHECK_EQ(n, 64);
	CHECK_EQ(tcreate_cq(t, 2, 0, &cq2), RNIC_AQ_NO_RESOURCES);
	tdev_free(t);
}

TEST(dev_admin_queue_lifecycle)
{
	struct tdev *t = tdev_up();
	struct tcq cq;
	struct tq q, q2;
	unsigned int n;

	REQUIRE(tcreate_cq(t, 6, 1, &cq) == RNIC_AQ_SUCCESS);
	CHECK_EQ(tcreate_queue(t, 0, 4, cq.id, 0, 0, &q), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, 5, 4, cq.id, 0, 0, &q), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 1, cq.id, 0, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 13, cq.id, 0, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 2048, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 4, cq.id, 0, 8, &q),
		 RNIC_AQ_BAD_PARAM);
	/* 1.0's RoCE rings are gone: refused with valid parameters too */
	CHECK_EQ(tcreate_queue(t, T_QUEUE_ROCE_TX_V1, 4, cq.id, 0, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, T_QUEUE_ROCE_RX_V1, 4, cq.id, 4096, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 63, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 65537, 0, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 1, &q),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, 9, 2048, 0, &q),
		 RNIC_AQ_NOT_FOUND);

	CHECK_EQ(tctr(t, RNIC_PORT_STAT_admin_errors), 12);

	/* One ETH_RX queue at a time */
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q2),
		 RNIC_AQ_BAD_STATE);
	CHECK_EQ(tdestroy(t, RNIC_AQ_DESTROY_QUEUE, q.id), RNIC_AQ_SUCCESS);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q2),
		 RNIC_AQ_SUCCESS);

	for (n = 1; n < RNIC_MAX_QUEUES; n++)
		if (tcreate_queue(t, RNIC_QUEUE_ETH_TX, 2, cq.id, 0, 0, &q) !=
		    RNIC_AQ_SUCCESS)
			break;
	CHECK_EQ(n, 64);
	CHECK_EQ(tcreate_queue(t, RNIC_QUEUE_ETH_TX, 2, cq.id, 0, 0, &q),
		 RNIC_AQ_NO_RESOURCES);
	tdev_free(t);
}

TEST(dev_admin_queue_ring_must_be_in_ram)
{
	struct tdev *t = tdev_up();
	union rnic_aq_entry e = {};
	struct tcq cq;

	REQUIRE(tcreate_cq(t, 4, 1, &cq) == RNIC_AQ_SUCCESS);
	e.create_queue.hdr.opcode = RNIC_AQ_CREATE_QUEUE;
	e.create_queue.type = RNIC_QUEUE_ETH_TX;
	e.create_queue.log2_depth = 4;
	e.create_queue.cq_id = cpu_to_le16(cq.id);
	e.create_queue.ring_addr = cpu_to_le64(T_RAM_SIZE - 64 * 15);
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_ADDR);
	e.hdr.cmd_id = 0;
	e.create_queue.ring_addr = cpu_to_le64(0x30020);	/* < 64 aligned */
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_ADDR);
	e.hdr.cmd_id = 0;
	e.create_queue.ring_addr = cpu_to_le64(0xfffffffffffffc00ULL);
	CHECK_EQ(tadmin(t, &e, NULL), RNIC_AQ_BAD_ADDR);
	tdev_free(t);
}

TEST(dev_admin_query_stats)
{
	struct tdev *t = tdev_up();
	u64 buf = talloc(t, 8 * 64, 64);
	__le64 *v = tram(t, buf);
	struct tcq cq;
	struct tq q;
	u32 res;

	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, RNIC_STATS_SCOPE_PORT, 0, buf,
		       8 * 64, &res), RNIC_AQ_SUCCESS);
	CHECK_EQ(res, 8 * RNIC_NUM_PORT_STATS);
	/* This very command is not counted yet when the values are taken. */
	CHECK_EQ(le64_to_cpu(v[RNIC_PORT_STAT_admin_cmds]), 0);
	CHECK_EQ(le64_to_cpu(v[RNIC_PORT_STAT_events]), 1);	/* link */

	/* Whole counters only: 12 bytes give one. */
	memset(v, 0xff, 16);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, RNIC_STATS_SCOPE_PORT, 0, buf,
		       12, &res), RNIC_AQ_SUCCESS);
	CHECK_EQ(le64_to_cpu(v[0]), 0);
	CHECK_EQ(le64_to_cpu(v[1]), ~0ULL);

	REQUIRE(tcreate_cq(t, 4, 1, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(tcreate_queue(t, RNIC_QUEUE_ETH_RX, 4, cq.id, 2048, 0, &q) ==
		RNIC_AQ_SUCCESS);
	CHECK_EQ(query(t, RNIC_AQ_QUERY_STATS, RNIC_STATS_SCOPE_QUEUE, q.id,
		       buf, 8 * 64, &res), RNIC_AQ_SUCCESS);
	CHECK_EQ(res, 8 * RNIC_NUM_QUEUE_STATS);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_admin_cmds), 5);
	tdev_free(t);
}

TEST(dev_admin_phase_wraps_and_bad_doorbell)
{
	struct tdev *t = tdev_up();
	u64 buf = talloc(t, 128, 64);
	struct rnic_eqe e;
	unsigned int i;

	/* Three times around the 8-entry admin queue. */
	for (i = 0; i < 24; i++)
		CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, buf, 96, NULL),
			 RNIC_AQ_SUCCESS);
	CHECK_EQ(tbar_r32(t, RNIC_REG_AQ_SQ_HEAD), 24);
	CHECK(t->p->irqs[0] >= 24);

	/* Producer index more than the depth ahead: ignored, reported. */
	while (teq_next(t, &e))
		;
	tbar_w32(t, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), t->drv.aq_pi + 9);
	tring(t, RNIC_DB_VEC_ADMIN);
	CHECK_EQ(tbar_r32(t, RNIC_REG_AQ_SQ_HEAD), 24);
	REQUIRE(teq_next(t, &e));
	CHECK_EQ(e.type, RNIC_EQE_DEVICE_ERROR);
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	/* Undefined bits in the slot: same. */
	tbar_w32(t, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ),
		 BIT(20) | t->drv.aq_pi);
	tring(t, RNIC_DB_VEC_ADMIN);
	REQUIRE(teq_next(t, &e));
	CHECK_EQ(e.reason, RNIC_ERR_BAD_DOORBELL);
	/* The queue still works afterwards. */
	CHECK_EQ(query(t, RNIC_AQ_QUERY_DEVICE, 0, 0, buf, 96, NULL),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(tctr(t, RNIC_PORT_STAT_bad_doorbells), 2);
	tdev_free(t);
}

TEST(dev_admin_garbage_commands_never_crash)
{
	struct tdev *t = tdev_up();
	union rnic_aq_entry e;
	unsigned int i, j;
	u32 seed = 12345;
	int st;

	/* Random bytes with each valid opcode: a status, never a crash. */
	for (i = 0; i < 2000; i++) {
		for (j = 0; j < sizeof(e); j++) {
			seed = seed * 1103515245 + 12345;
			e.raw[j] = seed >> 16;
		}
		e.hdr.opcode = 1 + i % 8;
		if (i & 1) {
			e.hdr.reserved0 = 0;
			e.hdr.reserved1 = 0;
		}
		e.hdr.cmd_id = cpu_to_le16(i + 1);
		st = tadmin(t, &e, NULL);
		CHECK(st >= 0 && st <= RNIC_AQ_INTERNAL);
	}
	CHECK_EQ(tbar_r32(t, RNIC_REG_STATUS), T_STATUS_UP);
	tdev_free(t);
}
