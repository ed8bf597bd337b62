// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 device model: ABI selection at enable, and every 2.0 admin
 * command with its error paths (hardware-rdma.rst, "Commands (2.0)").
 */
#include <errno.h>
#include <string.h>

#include "platform/opts.h"
#include "test.h"
#include "fake_rdma.h"

#define A_STATE_PK	(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PKEY_INDEX)

static struct rnic_sig sig_of(struct rdrv *x)
{
	struct rnic_sig s;

	memcpy(&s, rdrv_tdev(x)->p->bar2 + RNIC_SIG_OFF, sizeof(s));
	return s;
}

static u32 enable_abi(struct rdrv *x, unsigned int abi)
{
	return tdev_init_abi(rdrv_tdev(x), abi);
}

/*
 * --signature-abi: the signature of an other firmware (that major alone),
 * and no enable succeeds, not even of the major it advertises.
 */
TEST(rdma_signature_abi_knob)
{
	static const unsigned int majors[] = { 1, 3, 15 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(majors); i++) {
		struct rdrv *x = rdrv_new(1, majors[i]);
		struct rnic_sig s = sig_of(x);

		CHECK_EQ(le16_to_cpu(s.abi_major), majors[i]);
		CHECK_EQ(le16_to_cpu(s.abi_minor), 0);
		CHECK_EQ(le16_to_cpu(s.abi_compat), BIT(majors[i]));
		CHECK(!rnic_sig_serves(le32_to_cpu(s.magic),
				       le16_to_cpu(s.abi_major),
				       le16_to_cpu(s.abi_compat),
				       RNIC_ABI2_MAJOR));
		CHECK_EQ(enable_abi(x, RNIC_ABI2_MAJOR), RNIC_STATUS_FATAL);
		CHECK_EQ(tbar_r32(rdrv_tdev(x), RNIC_REG_FATAL_REASON),
			 RNIC_FATAL_BAD_ABI);
		CHECK(strstr(rdrv_tdev(x)->p->log, "--signature-abi") != NULL);
		CHECK_EQ(enable_abi(x, majors[i]), RNIC_STATUS_FATAL);
		CHECK_EQ(tbar_r32(rdrv_tdev(x), RNIC_REG_FATAL_REASON),
			 RNIC_FATAL_BAD_ABI);
		/* No ABI served: the 2.0 receive-buffer knob is refused too */
		CHECK_EQ(rdev_rx_hold(rdrv_tdev(x)->d, true), -EOPNOTSUPP);
		rdrv_free(x);
	}
}

/* 2.0 is the only ABI: CTRL.ABI 0 or 1 (1.0) is refused like 3 or 15 */
TEST(rdma_only_abi2_is_served)
{
	struct rdrv *x = rdrv_new(1, 0);
	struct rnic_sig s = sig_of(x);
	struct rnic_aq_query_obj q = {};
	u64 buf = rdrv_alloc(x, 256, 8);
	struct rnic_device_attr *a = rdrv_ram(x, buf);
	struct rnic_aq_query dq = {};
	static const unsigned int bad[] = { 0, 1, 3, 15 };
	unsigned int i;

	CHECK_EQ(le16_to_cpu(s.abi_major), 2);
	CHECK_EQ(le16_to_cpu(s.abi_minor), RNIC_ABI2_MINOR);
	CHECK_EQ(le16_to_cpu(s.abi_compat), BIT(2));
	CHECK(le32_to_cpu(s.caps) & RNIC_CAP_TRANSPORT);
	CHECK(!rnic_sig_serves(le32_to_cpu(s.magic), 2, BIT(2), 1));
	CHECK(rnic_sig_serves(le32_to_cpu(s.magic), 2, BIT(2), 2));
	CHECK(!strcmp(s.model_version, "rnicsim 2.0"));

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_EQ(enable_abi(x, bad[i]), RNIC_STATUS_FATAL);
		CHECK_EQ(tbar_r32(rdrv_tdev(x), RNIC_REG_FATAL_REASON),
			 RNIC_FATAL_BAD_ABI);
		if (bad[i] <= 1)
			CHECK(strstr(rdrv_tdev(x)->p->log,
				     "ABI 1.0, which is not served") != NULL);
		else
			CHECK(strstr(rdrv_tdev(x)->p->log, "is not served") !=
			      NULL);
	}

	/* 2: STATUS.ABI says so, QUERY_DEVICE reports the ABI in effect. */
	CHECK_EQ(enable_abi(x, 2), T_STATUS_UP);
	q.hdr.opcode = RNIC_AQ_QUERY_RDMA_CAPS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(128);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_SUCCESS);
	dq.hdr.opcode = RNIC_AQ_QUERY_DEVICE;
	dq.buf_addr = cpu_to_le64(buf);
	dq.buf_len = cpu_to_le32(96);
	CHECK_EQ(rdrv_cmd(x, &dq, NULL), RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(a->abi_major), 2);
	CHECK(le32_to_cpu(a->caps) & RNIC_CAP_TRANSPORT);
	CHECK(!strcmp(a->model_version, "rnicsim 2.0"));
	rdrv_free(x);
}

/* Without the transport capability the device serves no ABI at all */
TEST(rdma_hidden_transport_serves_nothing)
{
	struct tdev *t = tdev_new(RNIC_CAP_TRANSPORT);

	CHECK_EQ(tdev_init(t), RNIC_STATUS_FATAL);
	CHECK_EQ(tbar_r32(t, RNIC_REG_FATAL_REASON), RNIC_FATAL_BAD_ABI);
	CHECK(strstr(t->p->log, "transport capability is hidden") != NULL);
	tdev_free(t);
}

TEST(rdma_reset_drops_every_object)
{
	struct rdrv *x = rdrv_up(1);
	struct rdrv_cq cq;
	struct rnic_aq_obj o = {};

	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	/* A slot value and a kick entry the driver wrote ... */
	rdrv_ring(x, cq.db_off, rnic_db_rdma_cq(0, true, false, 1));
	REQUIRE(enable_abi(x, 2) == T_STATUS_UP);
	/* ... are gone, and so is the CQ. */
	CHECK_EQ(tbar_r32(rdrv_tdev(x), le32_to_cpu(x->caps.db_base) + cq.db_off), 0);
	o.hdr.opcode = RNIC_AQ_DESTROY_RDMA_CQ;
	o.handle = cpu_to_le32(cq.cqn);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_device_fatal_event)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_eqe e;

	while (rdrv_eq0_next(x, &e))
		;
	/* An undefined CTRL bit while enabled: fatal, told first. */
	tbar_w32(rdrv_tdev(x), RNIC_REG_CTRL, RNIC_CTRL_ENABLE | BIT(12));
	tring(rdrv_tdev(x), RNIC_DB_VEC_CTRL);
	CHECK_EQ(tbar_r32(rdrv_tdev(x), RNIC_REG_STATUS), RNIC_STATUS_FATAL);
	CHECK_EQ(rdrv_eq0_count(x, RNIC_EQE_DEVICE_FATAL, NULL), 1);
	rdrv_free(x);
}

/*
 * --rdma-table-log2 (a test knob): every object table has at most 2^N
 * entries, QUERY_RDMA_CAPS advertises the sizes, and the N+1-th object of
 * a kind is refused with NO_RESOURCES, so a lab test reaches each limit
 * in seconds. Without it, the full tables (4096 QPs, 65536 MRs).
 */
TEST(rdma_table_log2_knob)
{
	struct rdrv *x = rdrv_up_tables(1, 4);
	struct rdrv *full = rdrv_up(2);
	struct rdrv_srq srq;
	unsigned int n;
	u32 pdn;
	int st;

	CHECK_EQ(le32_to_cpu(x->caps.max_qp), 16);
	CHECK_EQ(le32_to_cpu(x->caps.max_cq), 16);
	CHECK_EQ(le32_to_cpu(x->caps.max_srq), 16);
	CHECK_EQ(le32_to_cpu(x->caps.max_mr), 16);
	CHECK_EQ(le32_to_cpu(x->caps.max_pd), 16);
	CHECK_EQ(le32_to_cpu(full->caps.max_qp), 4096);
	CHECK_EQ(le32_to_cpu(full->caps.max_cq), 4096);
	CHECK_EQ(le32_to_cpu(full->caps.max_srq), 1024);
	CHECK_EQ(le32_to_cpu(full->caps.max_mr), 65536);
	CHECK_EQ(le32_to_cpu(full->caps.max_pd), 4096);

	/* rdrv_setup() made one PD (and no CQ) already */
	for (n = 0; n < 32; n++) {
		st = rdrv_pd_alloc(x, false, &pdn);
		if (st)
			break;
	}
	CHECK_EQ(st, RNIC_AQ_NO_RESOURCES);
	CHECK_EQ(n, 15);
	/* (CQs stop at the event queue's room, 15 here, before the table) */
	for (n = 0; n < 32; n++) {
		st = rdrv_srq_create(x, x->pdn, 2, RNIC_RQE_LOG2_MIN, 0, &srq);
		if (st)
			break;
	}
	CHECK_EQ(st, RNIC_AQ_NO_RESOURCES);
	CHECK_EQ(n, 16);
	rdrv_free(x);
	rdrv_free(full);
}

TEST(rdma_query_caps_and_stats)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_query_obj q = {};
	u64 buf = rdrv_alloc(x, 1024, 8);
	u8 *b = rdrv_ram(x, buf);
	union rnic_aq_resp r;

	CHECK_EQ(le16_to_cpu(x->caps.num_db_pages), 240);
	CHECK_EQ(le32_to_cpu(x->caps.db_base), 0x10000);
	CHECK_EQ(x->caps.db_page_log2, 12);
	CHECK_EQ(le16_to_cpu(x->caps.max_eq), 7);
	CHECK_EQ(le16_to_cpu(x->caps.num_rdma_stats), RNIC_NUM_RDMA_STATS);
	CHECK_EQ(le16_to_cpu(x->caps.num_qp_stats), RNIC_NUM_QP_STATS);
	CHECK(le32_to_cpu(x->caps.flags) & RNIC_RDMA_CAP_UD);
	CHECK_EQ(x->caps.max_send_sge, 29);
	CHECK_EQ(le16_to_cpu(x->caps.max_inline), 464);

	/* A short buffer: clipped, the full length in the response. */
	memset(b, 0xee, 1024);
	q.hdr.opcode = RNIC_AQ_QUERY_RDMA_CAPS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(10);
	CHECK_EQ(rdrv_cmd(x, &q, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(r.query.len), 128);
	CHECK_EQ(b[10], 0xee);

	/* Malformed queries */
	q.hdr.cmd_id = 0;
	q.handle = cpu_to_le32(1);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);
	q.hdr.cmd_id = 0;
	q.handle = 0;
	q.buf_len = 0;
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);
	q.hdr.cmd_id = 0;
	q.buf_len = cpu_to_le32(128);
	q.buf_addr = cpu_to_le64(buf + 4);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_ADDR);
	q.hdr.cmd_id = 0;
	q.buf_addr = cpu_to_le64(RDRV_RAM_SIZE - 64);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_ADDR);
	q.hdr.cmd_id = 0;
	q.buf_addr = cpu_to_le64(buf);
	q.reserved1[8] = cpu_to_le32(1);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);

	/* Stats: port and QP scopes */
	memset(&q, 0, sizeof(q));
	q.hdr.opcode = RNIC_AQ_QUERY_RDMA_STATS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(1024);
	CHECK_EQ(rdrv_cmd(x, &q, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(r.query.len), 8 * RNIC_NUM_RDMA_STATS);
	q.hdr.cmd_id = 0;
	q.scope = RNIC_RDMA_STATS_SCOPE_QP;
	q.handle = cpu_to_le32(0x1234);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_NOT_FOUND);
	q.hdr.cmd_id = 0;
	q.scope = 2;
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);
	q.hdr.cmd_id = 0;
	q.scope = RNIC_RDMA_STATS_SCOPE_PORT;
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);	/* handle */

	/* 1.0's RoCE rings and ICRC-to-the-host flags are refused */
	{
		struct rnic_aq_set_port sp = {};
		struct tq tq;
		struct tcq tcq;
		u64 errs;

		sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS);
		sp.flags = cpu_to_le32(RNIC_PORT_F_RX_ICRC_CHECK);
		CHECK_EQ(tset_port(rdrv_tdev(x), &sp), RNIC_AQ_BAD_PARAM);
		REQUIRE(tcreate_cq(rdrv_tdev(x), 4, 1, &tcq) == RNIC_AQ_SUCCESS);
		errs = rdrv_pctr(x, RNIC_PORT_STAT_admin_errors);
		CHECK_EQ(tcreate_queue(rdrv_tdev(x), T_QUEUE_ROCE_RX_V1, 4, tcq.id,
				       2048, 0, &tq), RNIC_AQ_BAD_PARAM);
		CHECK_EQ(tcreate_queue(rdrv_tdev(x), T_QUEUE_ROCE_TX_V1, 4, tcq.id, 0,
				       0, &tq), RNIC_AQ_BAD_PARAM);
		CHECK_EQ(tcreate_queue(rdrv_tdev(x), 5, 4, tcq.id, 0, 0, &tq),
			 RNIC_AQ_BAD_PARAM);
		CHECK_EQ(rdrv_pctr(x, RNIC_PORT_STAT_admin_errors), errs + 3);
		CHECK_EQ(tcreate_queue(rdrv_tdev(x), RNIC_QUEUE_ETH_RX, 4, tcq.id,
				       2048, 0, &tq), RNIC_AQ_SUCCESS);
	}
	rdrv_free(x);
}

TEST(rdma_eq_create_destroy)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_eq c = {};
	struct rnic_aq_obj o = {};
	union rnic_aq_resp r;
	u64 ring = rdrv_alloc(x, 16 << 4, 4096);
	struct rdrv_cq cq;
	unsigned int i;

#define EQ_BAD(setup, status)						\
	do {								\
		memset(&c, 0, sizeof(c));				\
		c.hdr.opcode = RNIC_AQ_CREATE_EQ;			\
		c.ring_addr = cpu_to_le64(ring);			\
		c.log2_depth = 4;					\
		c.msix_vector = cpu_to_le16(2);				\
		setup;							\
		CHECK_EQ(rdrv_cmd(x, &c, NULL), status);			\
	} while (0)
	EQ_BAD(c.log2_depth = 1, RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.log2_depth = 13, RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.msix_vector = 0, RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.msix_vector = cpu_to_le16(8), RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.reserved0 = 1, RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.reserved1[10] = 1, RNIC_AQ_BAD_PARAM);
	EQ_BAD(c.ring_addr = cpu_to_le64(ring + 8), RNIC_AQ_BAD_ADDR);
	EQ_BAD(c.ring_addr = cpu_to_le64(RDRV_RAM_SIZE - 64), RNIC_AQ_BAD_ADDR);
	/* rdrv_up made EQ 1; six more fit, then none. */
	for (i = 0; i < 6; i++)
		EQ_BAD((void)0, RNIC_AQ_SUCCESS);
	EQ_BAD((void)0, RNIC_AQ_NO_RESOURCES);
#undef EQ_BAD

	/* An EQ with a CQ on it stays; an EQ of depth D takes D - 1 CQs. */
	o.hdr.opcode = RNIC_AQ_DESTROY_EQ;
	o.handle = cpu_to_le32(x->eqn);
	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_STATE);
	for (i = 1; i < 15; i++)
		CHECK_EQ(rdrv_cq_create(x, 2, &cq), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cq_create(x, 2, &cq), RNIC_AQ_NO_RESOURCES);
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(2);
	CHECK_EQ(rdrv_cmd(x, &o, &r), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	o.hdr.cmd_id = 0;
	o.handle = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(3);
	o.reserved[0] = cpu_to_le32(1);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_PARAM);
	rdrv_free(x);
}

TEST(rdma_db_pages)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_obj o = {};
	struct rnic_aq_alloc_db_page a = {};
	struct rdrv_cq cq;
	unsigned int i, n = 0;
	u32 page;

	a.hdr.opcode = RNIC_AQ_ALLOC_DB_PAGE;
	a.flags = cpu_to_le32(BIT(1));
	CHECK_EQ(rdrv_cmd(x, &a, NULL), RNIC_AQ_BAD_PARAM);
	a.hdr.cmd_id = 0;
	a.flags = 0;
	a.reserved[3] = cpu_to_le32(1);
	CHECK_EQ(rdrv_cmd(x, &a, NULL), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(rdrv_alloc_db_page(x, RNIC_DBP_F_USER, &page), RNIC_AQ_SUCCESS);
	CHECK_EQ(x->kick, rnic_ivshmem_doorbell(RNIC_DB_VEC_DATA));
	while (rdrv_alloc_db_page(x, 0, &page) == RNIC_AQ_SUCCESS)
		n++;
	CHECK_EQ(n, 238);	/* 240 pages, 2 allocated before */

	/* A page holding a slot cannot go; an empty one can. */
	o.hdr.opcode = RNIC_AQ_FREE_DB_PAGE;
	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	o.handle = cpu_to_le32(x->dbp);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_STATE);
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(page);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(240);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);

	/* 512 slots per page, then NO_DB_SLOT. */
	for (i = 1; i < RNIC_DBP_SLOTS; i++)
		if (rdrv_cq_create(x, 2, &cq) != RNIC_AQ_SUCCESS)
			break;
	CHECK_EQ(i, 15);	/* the EQ of depth 16 takes 15 CQs first */
	rdrv_free(x);
}

static int modify_gid(struct rdrv *x, u16 index, u8 type, u8 flags, u16 vid)
{
	struct rnic_aq_modify_gid c = {};

	c.hdr.opcode = RNIC_AQ_MODIFY_GID;
	c.entry.index = cpu_to_le16(index);
	c.entry.type = type;
	c.entry.flags = flags;
	c.entry.vlan_id = cpu_to_le16(vid);
	c.entry.gid[15] = 7;
	return rdrv_cmd(x, &c, NULL);
}

TEST(rdma_gid_and_pkey)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_query_obj q = {};
	struct rnic_aq_set_pkey p = {};
	u64 buf = rdrv_alloc(x, 64, 8);
	struct rnic_gid_entry *g = rdrv_ram(x, buf);
	struct rdrv_cq cq;
	struct rdrv_qp qp;

	CHECK_EQ(modify_gid(x, 128, 1, RNIC_GID_F_VALID, 0), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 3, RNIC_GID_F_VALID, 0), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 0, RNIC_GID_F_VALID, 0), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 2, RNIC_GID_F_VALID | BIT(2), 0),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 2, RNIC_GID_F_VALID | RNIC_GID_F_VLAN, 0),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 2, RNIC_GID_F_VALID | RNIC_GID_F_VLAN, 4095),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 2, RNIC_GID_F_VALID, 5), RNIC_AQ_BAD_PARAM);
	CHECK_EQ(modify_gid(x, 10, 2, RNIC_GID_F_VALID | RNIC_GID_F_VLAN, 42),
		 RNIC_AQ_SUCCESS);

	q.hdr.opcode = RNIC_AQ_QUERY_GID;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(64);
	q.handle = cpu_to_le32(10);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(g->index), 10);
	CHECK_EQ(g->type, 2);
	CHECK_EQ(g->flags, RNIC_GID_F_VALID | RNIC_GID_F_VLAN);
	CHECK_EQ(le16_to_cpu(g->vlan_id), 42);
	CHECK_EQ(g->gid[15], 7);
	/* del_gid; then the entry reads unused */
	CHECK_EQ(modify_gid(x, 10, 0, 0, 0), RNIC_AQ_SUCCESS);
	q.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_SUCCESS);
	CHECK_EQ(g->flags, 0);
	q.hdr.cmd_id = 0;
	q.handle = cpu_to_le32(128);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_BAD_PARAM);

	/* P_Key: index range; an entry in use cannot be deleted. */
	p.hdr.opcode = RNIC_AQ_SET_PKEY;
	p.index = cpu_to_le16(1);
	p.pkey = cpu_to_le16(0x8001);
	CHECK_EQ(rdrv_cmd(x, &p, NULL), RNIC_AQ_BAD_PARAM);
	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &qp) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(x, &qp, 0x1234) == RNIC_AQ_SUCCESS);
	p.hdr.cmd_id = 0;
	p.index = 0;
	p.pkey = 0;
	CHECK_EQ(rdrv_cmd(x, &p, NULL), RNIC_AQ_BAD_STATE);
	p.hdr.cmd_id = 0;
	p.pkey = cpu_to_le16(0xffff);
	CHECK_EQ(rdrv_cmd(x, &p, NULL), RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_state(x, &qp, RNIC_QPS_RESET) == RNIC_AQ_SUCCESS);
	p.hdr.cmd_id = 0;
	p.pkey = 0;
	CHECK_EQ(rdrv_cmd(x, &p, NULL), RNIC_AQ_SUCCESS);
	/* ... and a QP cannot then name the empty entry. */
	CHECK_EQ(rdrv_ud_up(x, &qp, 0x1234), RNIC_AQ_BAD_PARAM);
	rdrv_free(x);
}

TEST(rdma_pd_lifetime)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_alloc_pd a = {};
	struct rnic_aq_obj o = {};
	u64 buf = rdrv_alloc(x, 8192, 4096);
	u32 pdn, key;

	a.hdr.opcode = RNIC_AQ_ALLOC_PD;
	a.flags = cpu_to_le32(2);
	CHECK_EQ(rdrv_cmd(x, &a, NULL), RNIC_AQ_BAD_PARAM);
	REQUIRE(rdrv_pd_alloc(x, false, &pdn) == RNIC_AQ_SUCCESS);
	CHECK(pdn != 0);
	REQUIRE(rdrv_mr_pbl(x, pdn, RNIC_ACCESS_LOCAL_WRITE, 0x1000, 4096, buf,
			  &key) == RNIC_AQ_SUCCESS);
	o.hdr.opcode = RNIC_AQ_DEALLOC_PD;
	o.handle = cpu_to_le32(pdn);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_STATE);
	o.hdr.opcode = RNIC_AQ_DESTROY_MR;
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(key ^ 0x5a);	/* the variant is ignored */
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	o.hdr.opcode = RNIC_AQ_DEALLOC_PD;
	o.hdr.cmd_id = 0;
	o.handle = cpu_to_le32(pdn);
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_mr_create_errors)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_mr c;
	u64 buf = rdrv_alloc(x, 3 * 4096, 4096);
	u64 pbl = rdrv_alloc(x, 64, 8);
	__le64 *pages = rdrv_ram(x, pbl);
	struct rnic_aq_query_obj q = {};
	u64 qbuf = rdrv_alloc(x, 64, 8);
	struct rnic_mr_query *mq = rdrv_ram(x, qbuf);
	union rnic_aq_resp r;
	u32 upd;

	REQUIRE(rdrv_pd_alloc(x, false, &upd) == RNIC_AQ_SUCCESS);
	pages[0] = cpu_to_le64(buf);
	pages[1] = cpu_to_le64(buf + 4096);
	pages[2] = cpu_to_le64(buf + 8192);
#define MR(setup, status)						\
	do {								\
		memset(&c, 0, sizeof(c));				\
		c.hdr.opcode = RNIC_AQ_CREATE_MR;			\
		c.type = RNIC_MRT_PBL;					\
		c.access = RNIC_ACCESS_LOCAL_WRITE;			\
		c.page_log2 = 12;					\
		c.pdn = cpu_to_le32(upd);				\
		c.iova = cpu_to_le64(0x7000100);			\
		c.length = cpu_to_le64(8000);				\
		c.pbl_addr = cpu_to_le64(pbl);				\
		c.npages = cpu_to_le32(3);				\
		setup;							\
		CHECK_EQ(rdrv_cmd(x, &c, &r), status);			\
	} while (0)
	MR((void)0, RNIC_AQ_SUCCESS);
	MR(c.type = 0, RNIC_AQ_BAD_PARAM);
	MR(c.type = 4, RNIC_AQ_BAD_PARAM);
	MR(c.access = BIT(4), RNIC_AQ_BAD_PARAM);
	MR(c.access = RNIC_ACCESS_REMOTE_WRITE, RNIC_AQ_BAD_PARAM);
	MR(c.access = RNIC_ACCESS_REMOTE_ATOMIC, RNIC_AQ_BAD_PARAM);
	MR(c.page_log2 = 11, RNIC_AQ_BAD_PARAM);
	MR(c.page_log2 = 31, RNIC_AQ_BAD_PARAM);
	MR(c.length = 0, RNIC_AQ_BAD_PARAM);
	MR(c.length = cpu_to_le64(12288), RNIC_AQ_BAD_PARAM);	/* > pages */
	MR(c.npages = 0, RNIC_AQ_BAD_PARAM);
	MR(c.npages = cpu_to_le32(262145), RNIC_AQ_BAD_PARAM);
	MR(c.iova = cpu_to_le64(~0ULL - 100), RNIC_AQ_BAD_PARAM);
	MR(c.reserved0 = 1, RNIC_AQ_BAD_PARAM);
	MR(c.reserved1[4] = 1, RNIC_AQ_BAD_PARAM);
	MR(c.pdn = cpu_to_le32(upd + 1), RNIC_AQ_NOT_FOUND);
	MR(c.pbl_addr = cpu_to_le64(pbl + 4), RNIC_AQ_BAD_ADDR);
	MR(c.pbl_addr = cpu_to_le64(RDRV_RAM_SIZE - 8), RNIC_AQ_BAD_ADDR);
	pages[1] = cpu_to_le64(buf + 4096 + 512);	/* misaligned page */
	MR((void)0, RNIC_AQ_BAD_ADDR);
	pages[1] = cpu_to_le64(RDRV_RAM_SIZE);		/* outside RAM */
	MR((void)0, RNIC_AQ_BAD_ADDR);
	pages[1] = cpu_to_le64(buf + 4096);
	/* DMA and FAST_REG: privileged PDs, no page list */
	MR((c.type = RNIC_MRT_DMA, c.iova = 0, c.length = 0, c.pbl_addr = 0,
	    c.npages = 0, c.page_log2 = 0), RNIC_AQ_NO_PERM);
	MR((c.type = RNIC_MRT_DMA, c.pdn = cpu_to_le32(x->pdn), c.iova = 0,
	    c.length = 0, c.pbl_addr = 0, c.npages = 0, c.page_log2 = 0),
	   RNIC_AQ_SUCCESS);
	MR((c.type = RNIC_MRT_DMA, c.pdn = cpu_to_le32(x->pdn), c.length = 0,
	    c.pbl_addr = 0, c.npages = 0, c.page_log2 = 0), RNIC_AQ_BAD_PARAM);
	MR((c.type = RNIC_MRT_FAST_REG, c.iova = 0, c.length = 0,
	    c.pbl_addr = 0, c.page_log2 = 0), RNIC_AQ_NO_PERM);
	MR((c.type = RNIC_MRT_FAST_REG, c.pdn = cpu_to_le32(x->pdn),
	    c.iova = 0, c.length = 0, c.pbl_addr = 0, c.page_log2 = 0,
	    c.npages = cpu_to_le32(0x10000)), RNIC_AQ_BAD_PARAM);
	MR((c.type = RNIC_MRT_FAST_REG, c.pdn = cpu_to_le32(x->pdn),
	    c.iova = 0, c.length = 0, c.pbl_addr = 0, c.page_log2 = 0,
	    c.npages = cpu_to_le32(2)), RNIC_AQ_SUCCESS);
#undef MR

	/* QUERY_MR of the FAST_REG MR just made */
	q.hdr.opcode = RNIC_AQ_QUERY_MR;
	q.buf_addr = cpu_to_le64(qbuf);
	q.buf_len = cpu_to_le32(64);
	q.handle = r.id.id;
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(mq->key), le32_to_cpu(r.id.id));
	CHECK_EQ(mq->type, RNIC_MRT_FAST_REG);
	CHECK_EQ(mq->state, RNIC_MRS_FREE);
	CHECK_EQ(le32_to_cpu(mq->npages), 2);
	CHECK_EQ(le32_to_cpu(mq->pdn), x->pdn);
	q.hdr.cmd_id = 0;
	q.handle = cpu_to_le32(0xffffff00);
	CHECK_EQ(rdrv_cmd(x, &q, NULL), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_cq_create_errors)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_rdma_cq c;
	u64 ring = rdrv_alloc(x, 32 << 4, 4096);
	u64 pbl = rdrv_alloc(x, 8, 8);
	struct rnic_aq_modify_rdma_cq m = {};
	struct rdrv_cq cq;
	struct rdrv_qp qp;

	*(__le64 *)rdrv_ram(x, pbl) = cpu_to_le64(ring & ~4095ULL);
#define CQ(setup, status)						\
	do {								\
		memset(&c, 0, sizeof(c));				\
		c.hdr.opcode = RNIC_AQ_CREATE_RDMA_CQ;			\
		c.ring_addr = cpu_to_le64(ring);			\
		c.eqn = cpu_to_le32(x->eqn);				\
		c.db_page = cpu_to_le32(x->dbp);			\
		c.log2_depth = 4;					\
		setup;							\
		CHECK_EQ(rdrv_cmd(x, &c, NULL), status);			\
	} while (0)
	CQ(c.log2_depth = 1, RNIC_AQ_BAD_PARAM);
	CQ(c.log2_depth = 16, RNIC_AQ_BAD_PARAM);
	CQ(c.flags = 2, RNIC_AQ_BAD_PARAM);
	CQ(c.page_log2 = 12, RNIC_AQ_BAD_PARAM);	/* without the flag */
	CQ(c.reserved0 = 1, RNIC_AQ_BAD_PARAM);
	CQ(c.reserved1[8] = 1, RNIC_AQ_BAD_PARAM);
	CQ(c.eqn = 0, RNIC_AQ_NOT_FOUND);
	CQ(c.eqn = cpu_to_le32(5), RNIC_AQ_NOT_FOUND);
	CQ(c.db_page = cpu_to_le32(7), RNIC_AQ_NOT_FOUND);
	CQ(c.ring_addr = cpu_to_le64(ring + 16), RNIC_AQ_BAD_ADDR);
	CQ(c.ring_addr = cpu_to_le64(RDRV_RAM_SIZE - 256), RNIC_AQ_BAD_ADDR);
	CQ((c.flags = RNIC_RING_F_PBL, c.ring_addr = cpu_to_le64(pbl),
	    c.page_log2 = 11), RNIC_AQ_BAD_PARAM);
	CQ((c.flags = RNIC_RING_F_PBL, c.ring_addr = cpu_to_le64(pbl),
	    c.page_log2 = 12), RNIC_AQ_SUCCESS);
	*(__le64 *)rdrv_ram(x, pbl) = cpu_to_le64(ring + 64);
	CQ((c.flags = RNIC_RING_F_PBL, c.ring_addr = cpu_to_le64(pbl),
	    c.page_log2 = 12), RNIC_AQ_BAD_ADDR);
#undef CQ

	/* Moderation and destroy ordering */
	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	m.hdr.opcode = RNIC_AQ_MODIFY_RDMA_CQ;
	m.cqn = cpu_to_le32(cq.cqn + 1);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_NOT_FOUND);
	m.hdr.cmd_id = 0;
	m.cqn = cpu_to_le32(cq.cqn);
	m.reserved[0] = cpu_to_le32(1);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_BAD_PARAM);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &qp) == RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cq_destroy(x, &cq), RNIC_AQ_BAD_STATE);
	CHECK_EQ(rdrv_qp_destroy(x, &qp), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_destroy(x, &qp), RNIC_AQ_NOT_FOUND);
	CHECK_EQ(rdrv_cq_destroy(x, &cq), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_cq_destroy(x, &cq), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_srq_commands)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_srq c;
	struct rnic_aq_modify_srq m = {};
	struct rnic_aq_obj o = {};
	u64 wqe = rdrv_alloc(x, 32 << 4, 4096), idx = rdrv_alloc(x, 32, 64);
	union rnic_aq_resp r;
	struct rdrv_srq srq;
	struct rdrv_cq cq;
	struct rdrv_qp qp;

#define SRQ(setup, status)						\
	do {								\
		memset(&c, 0, sizeof(c));				\
		c.hdr.opcode = RNIC_AQ_CREATE_SRQ;			\
		c.pdn = cpu_to_le32(x->pdn);				\
		c.db_page = cpu_to_le32(x->dbp);			\
		c.wqe_addr = cpu_to_le64(wqe);				\
		c.idx_addr = cpu_to_le64(idx);				\
		c.log2_depth = 4;					\
		c.rqe_log2 = 5;						\
		setup;							\
		CHECK_EQ(rdrv_cmd(x, &c, &r), status);			\
	} while (0)
	SRQ(c.log2_depth = 1, RNIC_AQ_BAD_PARAM);
	SRQ(c.log2_depth = 16, RNIC_AQ_BAD_PARAM);
	SRQ(c.rqe_log2 = 4, RNIC_AQ_BAD_PARAM);
	SRQ(c.rqe_log2 = 10, RNIC_AQ_BAD_PARAM);
	SRQ(c.flags = 4, RNIC_AQ_BAD_PARAM);
	SRQ(c.page_log2 = 12, RNIC_AQ_BAD_PARAM);
	SRQ(c.limit = cpu_to_le32(17), RNIC_AQ_BAD_PARAM);
	SRQ(c.reserved[5] = 1, RNIC_AQ_BAD_PARAM);
	SRQ(c.pdn = 0, RNIC_AQ_NOT_FOUND);
	SRQ(c.db_page = cpu_to_le32(9), RNIC_AQ_NOT_FOUND);
	SRQ(c.wqe_addr = cpu_to_le64(wqe + 16), RNIC_AQ_BAD_ADDR);
	SRQ(c.idx_addr = cpu_to_le64(idx + 1), RNIC_AQ_BAD_ADDR);
	SRQ(c.idx_addr = cpu_to_le64(RDRV_RAM_SIZE - 2), RNIC_AQ_BAD_ADDR);
	SRQ(c.limit = cpu_to_le32(4), RNIC_AQ_SUCCESS);
#undef SRQ
	srq.srqn = le32_to_cpu(r.create_srq.srqn);

	o.hdr.opcode = RNIC_AQ_QUERY_SRQ;
	o.handle = cpu_to_le32(srq.srqn);
	CHECK_EQ(rdrv_cmd(x, &o, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(r.query_srq.limit), 4);
	CHECK_EQ(le16_to_cpu(r.query_srq.avail), 0);
	CHECK_EQ(r.query_srq.error, 0);

	m.hdr.opcode = RNIC_AQ_MODIFY_SRQ;
	m.srqn = cpu_to_le32(srq.srqn);
	m.attr_mask = cpu_to_le32(RNIC_SRQ_ATTR_LIMIT);
	m.limit = cpu_to_le32(17);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_BAD_PARAM);
	m.hdr.cmd_id = 0;
	m.attr_mask = cpu_to_le32(2);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_BAD_PARAM);
	m.hdr.cmd_id = 0;
	m.attr_mask = cpu_to_le32(RNIC_SRQ_ATTR_LIMIT);
	m.limit = cpu_to_le32(2);
	m.srqn = cpu_to_le32(srq.srqn + 1);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_NOT_FOUND);
	m.hdr.cmd_id = 0;
	m.srqn = cpu_to_le32(srq.srqn);
	CHECK_EQ(rdrv_cmd(x, &m, NULL), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, &r), RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(r.query_srq.limit), 2);

	/* A QP on the SRQ keeps it, and its PD, alive. */
	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, &srq, 4, 6, 0,
			     0, &qp) == RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.rq_off, RNIC_DB_NONE);
	o.hdr.opcode = RNIC_AQ_DESTROY_SRQ;
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_BAD_STATE);
	REQUIRE(rdrv_qp_destroy(x, &qp) == RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_SUCCESS);
	o.hdr.cmd_id = 0;
	CHECK_EQ(rdrv_cmd(x, &o, NULL), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_qp_create_errors)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_create_qp c;
	u64 sq = rdrv_alloc(x, 64 << 4, 4096), rq = rdrv_alloc(x, 32 << 4, 4096);
	union rnic_aq_resp r;
	struct rdrv_cq cq;
	struct rdrv_srq srq;
	u32 upd, upage;

	REQUIRE(rdrv_cq_create(x, 6, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_srq_create(x, x->pdn, 4, 5, 0, &srq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_pd_alloc(x, false, &upd) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_alloc_db_page(x, RNIC_DBP_F_USER, &upage) ==
		RNIC_AQ_SUCCESS);
#define QP(setup, status)						\
	do {								\
		memset(&c, 0, sizeof(c));				\
		c.hdr.opcode = RNIC_AQ_CREATE_QP;			\
		c.type = RNIC_QPT_UD;					\
		c.pdn = cpu_to_le32(x->pdn);				\
		c.send_cqn = cpu_to_le32(cq.cqn);			\
		c.recv_cqn = cpu_to_le32(cq.cqn);			\
		c.db_page = cpu_to_le32(x->dbp);			\
		c.sq_addr = cpu_to_le64(sq);				\
		c.rq_addr = cpu_to_le64(rq);				\
		c.sq_log2_depth = 4;					\
		c.sqe_log2 = 6;						\
		c.rq_log2_depth = 4;					\
		c.rqe_log2 = 5;						\
		setup;							\
		CHECK_EQ(rdrv_cmd(x, &c, &r), status);			\
	} while (0)
	QP(c.type = 0, RNIC_AQ_BAD_PARAM);
	QP(c.type = 4, RNIC_AQ_BAD_PARAM);
	QP(c.flags = 8, RNIC_AQ_BAD_PARAM);
	QP(c.sq_log2_depth = 1, RNIC_AQ_BAD_PARAM);
	QP(c.sq_log2_depth = 16, RNIC_AQ_BAD_PARAM);
	QP(c.sqe_log2 = 5, RNIC_AQ_BAD_PARAM);
	QP(c.sqe_log2 = 10, RNIC_AQ_BAD_PARAM);
	QP(c.rqe_log2 = 4, RNIC_AQ_BAD_PARAM);
	QP(c.rq_log2_depth = 0, RNIC_AQ_BAD_PARAM);
	QP(c.sq_page_log2 = 12, RNIC_AQ_BAD_PARAM);
	QP(c.srqn = cpu_to_le32(srq.srqn), RNIC_AQ_BAD_PARAM);
	QP(c.flags = RNIC_QP_F_SRQ, RNIC_AQ_BAD_PARAM);	/* no srqn, an RQ */
	QP((c.flags = RNIC_QP_F_SRQ, c.srqn = cpu_to_le32(srq.srqn)),
	   RNIC_AQ_BAD_PARAM);				/* RQ given too */
	QP(c.reserved0 = 1, RNIC_AQ_BAD_PARAM);
	QP(c.reserved3[1] = 1, RNIC_AQ_BAD_PARAM);
	QP(c.pdn = 0, RNIC_AQ_NOT_FOUND);
	QP(c.send_cqn = cpu_to_le32(cq.cqn + 1), RNIC_AQ_NOT_FOUND);
	QP(c.recv_cqn = 0, RNIC_AQ_NOT_FOUND);
	QP(c.db_page = cpu_to_le32(100), RNIC_AQ_NOT_FOUND);
	QP((c.flags = RNIC_QP_F_SRQ, c.srqn = cpu_to_le32(srq.srqn + 1),
	    c.rq_addr = 0, c.rq_log2_depth = 0, c.rqe_log2 = 0),
	   RNIC_AQ_NOT_FOUND);
	QP(c.sq_addr = cpu_to_le64(sq + 32), RNIC_AQ_BAD_ADDR);
	QP(c.rq_addr = cpu_to_le64(RDRV_RAM_SIZE - 64), RNIC_AQ_BAD_ADDR);
	QP((c.flags = RNIC_QP_F_SQ_PBL, c.sq_page_log2 = 12,
	    c.sq_addr = cpu_to_le64(RDRV_RAM_SIZE)), RNIC_AQ_BAD_ADDR);
	/* GSI: privileged PD, kernel page, once, QPN 1 */
	QP((c.type = RNIC_QPT_GSI, c.pdn = cpu_to_le32(upd)), RNIC_AQ_NO_PERM);
	QP((c.type = RNIC_QPT_GSI, c.db_page = cpu_to_le32(upage)),
	   RNIC_AQ_NO_PERM);
	QP(c.type = RNIC_QPT_GSI, RNIC_AQ_SUCCESS);
	CHECK_EQ(le32_to_cpu(r.create_qp.qpn), RNIC_GSI_QPN);
	QP(c.type = RNIC_QPT_GSI, RNIC_AQ_BAD_STATE);
	/* Ordinary QPs: cyclic QPNs, slots at device-chosen offsets */
	QP((void)0, RNIC_AQ_SUCCESS);
	CHECK(le32_to_cpu(r.create_qp.qpn) > 1);
	CHECK(le16_to_cpu(r.create_qp.sq_db_off) % 4 == 0);
	CHECK(le16_to_cpu(r.create_qp.sq_db_off) !=
	      le16_to_cpu(r.create_qp.rq_db_off));
	QP((c.type = RNIC_QPT_RC, c.flags = RNIC_QP_F_SRQ,
	    c.srqn = cpu_to_le32(srq.srqn), c.rq_addr = 0,
	    c.rq_log2_depth = 0, c.rqe_log2 = 0), RNIC_AQ_SUCCESS);
	CHECK_EQ(le16_to_cpu(r.create_qp.rq_db_off), RNIC_DB_NONE);
#undef QP
	rdrv_free(x);
}

/* One MODIFY_QP with the given mask; the state comes back in *st */
static int mod(struct rdrv *x, struct rdrv_qp *qp, u32 mask, u8 state,
	       struct rnic_aq_modify_qp *m, u8 *st)
{
	m->qpn = cpu_to_le32(qp->qpn);
	m->attr_mask = cpu_to_le32(mask);
	m->state = state;
	return rdrv_qp_modify(x, m, st);
}

TEST(rdma_qp_state_machine_ud)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_aq_modify_qp m;
	struct rnic_qp_query q;
	struct rdrv_cq cq;
	struct rdrv_qp qp;
	u8 st;

	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &qp) == RNIC_AQ_SUCCESS);
	memset(&m, 0, sizeof(m));
	/* RESET->ERR is not a transition (IBA table 91); RESET->RESET is */
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_ERR, &m, &st),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(st, RNIC_QPS_RESET);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RESET, &m, &st),
		 RNIC_AQ_SUCCESS);
	/* RESET->INIT needs PKEY_INDEX and QKEY, allows nothing else */
	CHECK_EQ(mod(x, &qp, A_STATE_PK, RNIC_QPS_INIT, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(st, RNIC_QPS_RESET);
	CHECK_EQ(mod(x, &qp, A_STATE_PK | RNIC_QP_ATTR_QKEY |
		     RNIC_QP_ATTR_ACCESS, RNIC_QPS_INIT, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_SQE, &m, &st),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, 7, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	CHECK_EQ(mod(x, &qp, BIT(17), RNIC_QPS_INIT, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.reserved1[1] = cpu_to_le32(1);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RESET, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.reserved1[1] = 0;
	/* A controlled Q_Key on a privileged PD is fine */
	m.qkey = cpu_to_le32(0x80000001);
	CHECK_EQ(mod(x, &qp, A_STATE_PK | RNIC_QP_ATTR_QKEY, RNIC_QPS_INIT,
		     &m, &st), RNIC_AQ_SUCCESS);
	CHECK_EQ(st, RNIC_QPS_INIT);
	/* CUR_STATE must be the state */
	m.cur_state = RNIC_QPS_RTR;
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE,
		     RNIC_QPS_RTR, &m, &st), RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(st, RNIC_QPS_INIT);
	m.cur_state = RNIC_QPS_INIT;
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_CUR_STATE,
		     RNIC_QPS_RTR, &m, &st), RNIC_AQ_SUCCESS);
	/* RTR->RTS needs SQ_PSN in range */
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	m.sq_psn = cpu_to_le32(0x1000000);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN,
		     RNIC_QPS_RTS, &m, &st), RNIC_AQ_BAD_PARAM);
	m.sq_psn = cpu_to_le32(0xabcdef);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN,
		     RNIC_QPS_RTS, &m, &st), RNIC_AQ_SUCCESS);
	/* RTS->SQD->RTS; SQD->SQD with QKEY */
	m.sqd_notify = 1;
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQD_NOTIFY,
		     RNIC_QPS_SQD, &m, &st), RNIC_AQ_SUCCESS);
	CHECK_EQ(st, RNIC_QPS_SQD);
	CHECK_EQ(rdrv_eq0_count(x, RNIC_EQE_SQ_DRAINED, NULL), 1);
	m.qkey = cpu_to_le32(0x42);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_QKEY, 0, &m, &st), RNIC_AQ_SUCCESS);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_query(x, qp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.state, RNIC_QPS_RTS);
	CHECK_EQ(le32_to_cpu(q.qkey), 0x42);
	CHECK_EQ(q.path_mtu, 0);	/* UD has no path MTU */
	CHECK_EQ(le32_to_cpu(q.sq_psn), 0xabcdef);
	CHECK_EQ(le32_to_cpu(q.send_cqn), cq.cqn);
	CHECK_EQ(le32_to_cpu(q.pdn), x->pdn);
	/* any -> ERR -> RESET, with no attribute */
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_QKEY,
		     RNIC_QPS_ERR, &m, &st), RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_ERR, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(st, RNIC_QPS_ERR);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RESET, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(st, RNIC_QPS_RESET);
	m.qpn = cpu_to_le32(0x777777);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE);
	CHECK_EQ(rdrv_qp_modify(x, &m, NULL), RNIC_AQ_NOT_FOUND);
	rdrv_free(x);
}

TEST(rdma_qp_state_machine_rc)
{
	struct rdrv *x = rdrv_up(1);
	struct rdrv *peer = rdrv_new(2, 0);
	struct rnic_aq_modify_qp m;
	struct rnic_qp_query q;
	u64 path = rdrv_alloc(x, 128, 8);
	struct rnic_hdr_tmpl *t = rdrv_ram(x, path);
	struct rdrv_cq cq;
	struct rdrv_qp qp;
	u32 upd;
	u8 st;

	REQUIRE(rdrv_cq_create(x, 4, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_pd_alloc(x, false, &upd) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_RC, upd, &cq, &cq, NULL, 4, 7, 4,
			     5, &qp) == RNIC_AQ_SUCCESS);
	memset(&m, 0, sizeof(m));
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_ERR, &m, &st),
		 RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(st, RNIC_QPS_RESET);
	/* RC needs ACCESS, not QKEY; only REMOTE_* rights */
	CHECK_EQ(mod(x, &qp, A_STATE_PK | RNIC_QP_ATTR_QKEY, RNIC_QPS_INIT,
		     &m, &st), RNIC_AQ_BAD_ATTR_MASK);
	m.access = BIT(4);
	CHECK_EQ(mod(x, &qp, A_STATE_PK | RNIC_QP_ATTR_ACCESS, RNIC_QPS_INIT,
		     &m, &st), RNIC_AQ_BAD_PARAM);
	m.access = RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ;
	CHECK_EQ(mod(x, &qp, A_STATE_PK | RNIC_QP_ATTR_ACCESS, RNIC_QPS_INIT,
		     &m, &st), RNIC_AQ_SUCCESS);
	/* A controlled Q_Key is not for an unprivileged PD (or RC at all) */
	m.qkey = cpu_to_le32(0x80000000);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_QKEY, 0, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	/* INIT->RTR: the path and its friends */
	rdrv_tmpl(x, peer, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, t);
	m.path_addr = cpu_to_le64(path);
	m.path_mtu = RNIC_PMTU_1024;
	m.dest_qpn = cpu_to_le32(0x12);
	m.rq_psn = cpu_to_le32(0x77);
	m.max_dest_rd_atomic = 4;
	m.min_rnr_timer = 12;
#define RTR_MASK (RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PATH | \
		  RNIC_QP_ATTR_PATH_MTU | RNIC_QP_ATTR_DEST_QPN | \
		  RNIC_QP_ATTR_RQ_PSN | RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | \
		  RNIC_QP_ATTR_MIN_RNR_TIMER)
	CHECK_EQ(mod(x, &qp, RTR_MASK & ~RNIC_QP_ATTR_PATH, RNIC_QPS_RTR, &m,
		     &st), RNIC_AQ_BAD_ATTR_MASK);
	m.path_mtu = RNIC_PMTU_4096;	/* does not fit MTU 1500 */
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.path_mtu = 6;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.path_mtu = RNIC_PMTU_1024;
	m.max_dest_rd_atomic = 17;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.max_dest_rd_atomic = 4;
	m.min_rnr_timer = 32;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.min_rnr_timer = 12;
	m.path_addr = cpu_to_le64(RDRV_RAM_SIZE - 64);
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_ADDR);
	m.path_addr = cpu_to_le64(path + 4);	/* not 8-byte aligned */
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_ADDR);
	m.path_addr = cpu_to_le64(path);
	/* Templates that break the shape rules */
	t->hdr[0] |= 1;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->hdr[0] &= ~1;
	t->hdr[14 + 22] ^= 1;		/* UDP destination port */
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->hdr[14 + 22] ^= 1;
	t->hdr_len++;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->hdr_len--;
	t->flags |= cpu_to_le32(RNIC_TMPL_F_VALID);
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->flags &= ~cpu_to_le32(RNIC_TMPL_F_VALID);
	t->hdr[14 + 6] = 0;		/* DF clear */
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->hdr[14 + 6] = 0x40;
	t->hdr[100] = 1;		/* past hdr_len */
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->hdr[100] = 0;
	t->prio = 8;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	t->prio = 3;
	CHECK_EQ(mod(x, &qp, RTR_MASK, RNIC_QPS_RTR, &m, &st),
		 RNIC_AQ_SUCCESS);
	/* The UDP port is locked while a QP has a path. */
	{
		struct rnic_aq_set_port sp = {};

		sp.valid = cpu_to_le32(RNIC_PORT_VALID_UDP_PORT);
		sp.udp_port = cpu_to_le16(4792);
		CHECK_EQ(tset_port(rdrv_tdev(x), &sp), RNIC_AQ_BAD_STATE);
	}
	/* RTR->RTS */
	m.sq_psn = cpu_to_le32(0x55);
	m.timeout = 14;
	m.retry_cnt = 8;
	m.rnr_retry = 7;
	m.max_rd_atomic = 4;
#define RTS_MASK (RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN | \
		  RNIC_QP_ATTR_TIMEOUT | RNIC_QP_ATTR_RETRY_CNT | \
		  RNIC_QP_ATTR_RNR_RETRY | RNIC_QP_ATTR_MAX_RD_ATOMIC)
	CHECK_EQ(mod(x, &qp, RTS_MASK, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.retry_cnt = 7;
	m.timeout = 32;
	CHECK_EQ(mod(x, &qp, RTS_MASK, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_BAD_PARAM);
	m.timeout = 14;
	CHECK_EQ(mod(x, &qp, RTS_MASK | RNIC_QP_ATTR_PATH, RNIC_QPS_RTS, &m,
		     &st), RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(mod(x, &qp, RTS_MASK, RNIC_QPS_RTS, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_query(x, qp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.state, RNIC_QPS_RTS);
	CHECK_EQ(q.path_mtu, RNIC_PMTU_1024);
	CHECK_EQ(q.flags & RNIC_QPQ_F_PATH, RNIC_QPQ_F_PATH);
	CHECK_EQ(le32_to_cpu(q.dest_qpn), 0x12);
	CHECK_EQ(q.timeout, 14);
	CHECK_EQ(q.max_dest_rd_atomic, 4);
	/* SQD->SQD may change the path, not the path MTU (IBA) */
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_SQD, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_PATH_MTU, 0, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_PATH | RNIC_QP_ATTR_TIMEOUT, 0,
		     &m, &st), RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_query(x, qp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.path_mtu, RNIC_PMTU_1024);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_DEST_QPN, 0, &m, &st),
		 RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(mod(x, &qp, RNIC_QP_ATTR_STATE, RNIC_QPS_RESET, &m, &st),
		 RNIC_AQ_SUCCESS);
	CHECK_EQ(rdrv_qp_query(x, qp.qpn, &q), RNIC_AQ_SUCCESS);
	CHECK_EQ(q.flags & RNIC_QPQ_F_PATH, 0);
	rdrv_free(peer);
	rdrv_free(x);
}

/*
 * Random 2.0 commands: real opcodes, random fields (addresses often
 * inside guest RAM, handles often small). Nothing may crash, every
 * command completes, every failure is counted.
 */
TEST(rdma_admin_fuzz)
{
	static const u8 ops[] = {
		0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29,
		0x30, 0x31, 0x32, 0x33, 0x34, 0x38, 0x39, 0x3a, 0x40, 0x41,
		0x42, 0x43, 0x48, 0x49, 0x4a, 0x4b, 0x2a, 0x35, 0x4c,
	};
	struct rdrv *x = rdrv_up(1);
	unsigned int i, j, fails = 0;
	u64 seed = 7;

	for (i = 0; i < 6000; i++) {
		union rnic_aq_entry e;
		int st;

		for (j = 0; j < sizeof(e); j++) {
			seed = seed * 6364136223846793005ULL +
			       1442695040888963407ULL;
			e.raw[j] = seed >> 56;
		}
		e.hdr.opcode = ops[(seed >> 20) % ARRAY_SIZE(ops)];
		e.hdr.reserved0 = 0;
		e.hdr.reserved1 = 0;
		e.hdr.cmd_id = 0;
		/* Bias towards plausible values so commands get deep */
		for (j = 8; j < 64; j += 4) {
			seed = seed * 6364136223846793005ULL +
			       1442695040888963407ULL;
			switch ((seed >> 40) & 3) {
			case 0:		/* small: handles, sizes, flags */
				*(__le32 *)(e.raw + j) =
					cpu_to_le32((seed >> 50) & 0x1f);
				break;
			case 1:		/* an aligned address in RAM */
				*(__le32 *)(e.raw + j) =
					cpu_to_le32((seed >> 30) & 0xfff000);
				break;
			case 2:
				*(__le32 *)(e.raw + j) = 0;
				break;
			default:
				break;
			}
		}
		st = rdrv_cmd(x, &e, NULL);
		REQUIRE(st >= 0);
		fails += st != RNIC_AQ_SUCCESS;
	}
	CHECK(fails > 1000);
	CHECK_EQ(rdrv_pctr(x, RNIC_PORT_STAT_admin_errors), fails);
	/* And it is still a device that works */
	{
		struct rdrv_cq cq;

		CHECK_EQ(rdrv_cq_create(x, 4, &cq), RNIC_AQ_SUCCESS);
	}
	rdrv_free(x);
}
