// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the ABI 2.0 CQE decoder (drivers/rnic_ib_cqe.c): every
 * status and opcode of the contract's tables, the UD receive fields, and
 * CQEs a faulty device could write, including WQE indices outside what is
 * outstanding, which must be refused before they index anything, and CQEs
 * and EQ entries that name an object of another CQ or EQ; and the flush
 * completions the driver makes itself once the device has failed.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_wqe.h"

static void cqe_init(struct rnic_rdma_cqe *c, u8 opcode, u8 status)
{
	memset(c, 0, sizeof(*c));
	c->flags = RNIC_RCQE_F_PHASE;
	c->opcode = opcode;
	c->status = status;
	c->qpn = cpu_to_le32(0x123456);
	c->wqe_idx = cpu_to_le16(7);
}

static void cqe_status_table(struct kunit *test)
{
	static const enum ib_wc_status exp[] = {
		IB_WC_SUCCESS, IB_WC_LOC_LEN_ERR, IB_WC_LOC_QP_OP_ERR,
		IB_WC_LOC_PROT_ERR, IB_WC_WR_FLUSH_ERR, IB_WC_LOC_ACCESS_ERR,
		IB_WC_BAD_RESP_ERR, IB_WC_REM_INV_REQ_ERR,
		IB_WC_REM_ACCESS_ERR, IB_WC_REM_OP_ERR, IB_WC_RETRY_EXC_ERR,
		IB_WC_RNR_RETRY_EXC_ERR, IB_WC_FATAL_ERR, IB_WC_GENERAL_ERR,
	};
	struct rnic_rdma_cqe c;
	struct ib_wc wc;
	int s;

	KUNIT_ASSERT_EQ(test, ARRAY_SIZE(exp), RNIC_WC_GENERAL_ERR + 1);
	for (s = 0; s < 256; s++) {
		enum ib_wc_status want = s < ARRAY_SIZE(exp) ? exp[s] :
					 IB_WC_GENERAL_ERR;

		KUNIT_EXPECT_EQ_MSG(test, rnic_ib_wc_status(s), want,
				    "status %d", s);
		/* an error CQE on either queue decodes to it */
		cqe_init(&c, RNIC_SQE_OP_WRITE, s);
		c.syndrome = s ? RNIC_ERR_KEY_BOUNDS : 0;
		KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), 0);
		KUNIT_EXPECT_EQ(test, wc.status, want);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_WRITE);
		KUNIT_EXPECT_EQ(test, wc.vendor_err, s ? RNIC_ERR_KEY_BOUNDS : 0);
		cqe_init(&c, RNIC_CQE_OP_RECV, s);
		c.flags |= RNIC_RCQE_F_SRQ;
		KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), 0);
		KUNIT_EXPECT_EQ(test, wc.status, want);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	}
}

/* Successful send CQEs: opcode and length; nothing about a peer */
static void cqe_send_opcodes(struct kunit *test)
{
	static const struct {
		u8 hw;
		enum ib_wc_opcode ib;
		bool ud;
	} ops[] = {
		{ RNIC_SQE_OP_SEND, IB_WC_SEND, true },
		{ RNIC_SQE_OP_SEND_IMM, IB_WC_SEND, true },
		{ RNIC_SQE_OP_SEND_INV, IB_WC_SEND, false },
		{ RNIC_SQE_OP_WRITE, IB_WC_RDMA_WRITE, false },
		{ RNIC_SQE_OP_WRITE_IMM, IB_WC_RDMA_WRITE, false },
		{ RNIC_SQE_OP_READ, IB_WC_RDMA_READ, false },
		{ RNIC_SQE_OP_CMP_SWAP, IB_WC_COMP_SWAP, false },
		{ RNIC_SQE_OP_FETCH_ADD, IB_WC_FETCH_ADD, false },
		{ RNIC_SQE_OP_LOCAL_INV, IB_WC_LOCAL_INV, false },
		{ RNIC_SQE_OP_REG_MR, IB_WC_REG_MR, false },
	};
	struct rnic_rdma_cqe c;
	struct ib_wc wc;
	int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		cqe_init(&c, ops[i].hw, RNIC_WC_SUCCESS);
		c.byte_len = cpu_to_le32(4000);
		memset(&wc, 0xa5, sizeof(wc));
		KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), 0);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc.opcode, ops[i].ib);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 4000);
		KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);
		KUNIT_EXPECT_EQ(test, wc.vendor_err, 0);
		KUNIT_EXPECT_EQ(test, wc.port_num, 1);
		KUNIT_EXPECT_EQ(test, wc.src_qp, 0);
		KUNIT_EXPECT_EQ(test, wc.pkey_index, 0);
		KUNIT_EXPECT_EQ(test, wc.slid, 0);
		KUNIT_EXPECT_EQ(test, wc.sl, 0);
		KUNIT_EXPECT_EQ(test, wc.dlid_path_bits, 0);
		/* on a UD QP only the SENDs exist */
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 0, &wc),
				ops[i].ud ? 0 : -EIO);
		/* receive-side flags on a send CQE */
		c.flags |= RNIC_RCQE_F_IMM;
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc),
				-EIO);
		c.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_SRQ;
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc),
				-EIO);
	}
}

static void cqe_rc_recv(struct kunit *test)
{
	struct rnic_rdma_cqe c;
	struct ib_wc wc;

	/* SEND */
	cqe_init(&c, RNIC_CQE_OP_RECV, RNIC_WC_SUCCESS);
	c.byte_len = cpu_to_le32(100);
	c.pkey_index = cpu_to_le16(0);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);
	/* longer than the WQE offered */
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 99, &wc), -EIO);

	/* SEND_IMM */
	c.flags |= RNIC_RCQE_F_IMM;
	c.imm_data = cpu_to_be32(0x01020304);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.ex.imm_data, cpu_to_be32(0x01020304));

	/* SEND_INV */
	c.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_INV;
	c.inv_key = cpu_to_le32(0xabcdef01);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, 0xabcdef01);
	/* both at once */
	c.flags |= RNIC_RCQE_F_IMM;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), -EIO);
	/* an RC receive has no network header, VLAN or sender */
	c.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_GRH;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), -EIO);
	c.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_VLAN;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 100, &wc), -EIO);

	/* WRITE_IMM: the bytes went to the MR, not the (empty) WQE */
	cqe_init(&c, RNIC_CQE_OP_RECV_WRITE_IMM, RNIC_WC_SUCCESS);
	c.flags |= RNIC_RCQE_F_IMM | RNIC_RCQE_F_SRQ;
	c.byte_len = cpu_to_le32(1 << 20);
	c.imm_data = cpu_to_be32(9);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 1 << 20);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.ex.imm_data, cpu_to_be32(9));
	/* a WRITE_IMM without its immediate, or on UD */
	c.flags &= ~RNIC_RCQE_F_IMM;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), -EIO);
	c.flags |= RNIC_RCQE_F_IMM | RNIC_RCQE_F_GRH;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 0, &wc), -EIO);
}

static void cqe_ud_recv(struct kunit *test)
{
	static const struct {
		u8 net;
		u8 type;
	} nets[] = {
		{ RNIC_RX_CLASS_ROCE_V1, RDMA_NETWORK_ROCE_V1 },
		{ RNIC_RX_CLASS_ROCE_V2_IPV4, RDMA_NETWORK_IPV4 },
		{ RNIC_RX_CLASS_ROCE_V2_IPV6, RDMA_NETWORK_IPV6 },
	};
	static const u8 mac[ETH_ALEN] = { 0x52, 0x54, 0, 0x10, 0, 2 };
	struct rnic_rdma_cqe c;
	struct ib_wc wc;
	int i;

	for (i = 0; i < ARRAY_SIZE(nets); i++) {
		cqe_init(&c, RNIC_CQE_OP_RECV, RNIC_WC_SUCCESS);
		c.flags |= RNIC_RCQE_F_GRH | RNIC_RCQE_F_IMM;
		c.byte_len = cpu_to_le32(256);
		c.pkey_index = cpu_to_le16(3);
		c.imm_data = cpu_to_be32(0x77);
		c.src = cpu_to_le32(FIELD_PREP(RNIC_RCQE_NET, nets[i].net) |
				    0xfedcba);
		memcpy(c.smac, mac, ETH_ALEN);
		KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), 0);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
		/* the verbs count the 40-byte header area */
		KUNIT_EXPECT_EQ(test, wc.byte_len, 296);
		KUNIT_EXPECT_EQ(test, wc.src_qp, 0xfedcba);
		KUNIT_EXPECT_EQ(test, wc.network_hdr_type, nets[i].type);
		KUNIT_EXPECT_EQ(test, wc.pkey_index, 3);
		KUNIT_EXPECT_MEMEQ(test, wc.smac, mac, ETH_ALEN);
		KUNIT_EXPECT_EQ(test, wc.wc_flags,
				IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
				IB_WC_WITH_SMAC | IB_WC_WITH_IMM);
		KUNIT_EXPECT_EQ(test, wc.ex.imm_data, cpu_to_be32(0x77));
		KUNIT_EXPECT_EQ(test, wc.sl, 0);
		KUNIT_EXPECT_EQ(test, wc.vlan_id, 0);
		/* a buffer 1 byte too small */
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 295, &wc),
				-EIO);
	}

	/* tagged: VID and the PCP as the SL */
	c.flags |= RNIC_RCQE_F_VLAN;
	c.vlan_tci = cpu_to_le16(5 << 13 | 1 << 12 | 100);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.vlan_id, 100);
	KUNIT_EXPECT_EQ(test, wc.sl, 5);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_VLAN);

	/* a PFC priority tag (VID 0): the SL, but no VLAN for ib_core */
	c.vlan_tci = cpu_to_le16(3 << 13);
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.sl, 3);
	KUNIT_EXPECT_FALSE(test, wc.wc_flags & IB_WC_WITH_VLAN);

	/* what a UD receive CQE cannot be */
	c.flags &= ~RNIC_RCQE_F_GRH;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), -EIO);
	c.flags |= RNIC_RCQE_F_GRH;
	c.src = cpu_to_le32(FIELD_PREP(RNIC_RCQE_NET, RNIC_RX_CLASS_ETH) | 5);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), -EIO);
	c.src = cpu_to_le32(FIELD_PREP(RNIC_RCQE_NET, 4) | 5);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), -EIO);
	c.src = cpu_to_le32(BIT(28) | FIELD_PREP(RNIC_RCQE_NET, 2) | 5);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), -EIO);
	c.src = cpu_to_le32(FIELD_PREP(RNIC_RCQE_NET, 2) | 5);
	c.flags |= RNIC_RCQE_F_INV;
	c.flags &= ~RNIC_RCQE_F_IMM;
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, 296, &wc), -EIO);
	/* byte_len so large the header area would wrap it */
	c.flags &= ~RNIC_RCQE_F_INV;
	c.byte_len = cpu_to_le32(U32_MAX - 10);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, true, U32_MAX, &wc), -EIO);
}

/* CQEs the contract does not define */
static void cqe_malformed(struct kunit *test)
{
	struct rnic_rdma_cqe c;
	struct ib_wc wc;
	int op;

	for (op = 0; op < 256; op++) {
		bool known = (op >= RNIC_SQE_OP_SEND &&
			      op <= RNIC_SQE_OP_REG_MR) ||
			     op == RNIC_CQE_OP_RECV ||
			     op == RNIC_CQE_OP_RECV_WRITE_IMM;

		/* an error CQE: opcode, status and syndrome only */
		cqe_init(&c, op, RNIC_WC_WR_FLUSH_ERR);
		c.syndrome = RNIC_ERR_FLUSHED;
		KUNIT_EXPECT_EQ_MSG(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc),
				    known ? 0 : -EIO, "opcode %#x", op);
	}
	/* QPNs are 24 bits */
	cqe_init(&c, RNIC_SQE_OP_SEND, RNIC_WC_SUCCESS);
	c.qpn = cpu_to_le32(0x1000001);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), -EIO);
	/* an error CQE's other fields are not looked at */
	cqe_init(&c, RNIC_CQE_OP_RECV, RNIC_WC_LOC_PROT_ERR);
	c.byte_len = cpu_to_le32(U32_MAX);
	c.flags |= RNIC_RCQE_F_IMM | RNIC_RCQE_F_INV;
	KUNIT_ASSERT_EQ(test, rnic_ib_cqe_to_wc(&c, false, 0, &wc), 0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, 0);
}

/* Send CQE indices: [ci, pi) modulo 2^16, retiring the unsignaled */
static void cqe_sq_index(struct kunit *test)
{
	static const struct {
		u16 ci, pi, idx;
		int ret;
	} cases[] = {
		{ 0, 1, 0, 1 },
		{ 0, 1, 1, -EIO },		/* the producer index itself */
		{ 0, 0, 0, -EIO },		/* nothing outstanding */
		{ 10, 20, 15, 6 },		/* retires 10..15 */
		{ 10, 20, 19, 10 },
		{ 10, 20, 20, -EIO },
		{ 10, 20, 9, -EIO },		/* already completed */
		{ 10, 20, 0xffff, -EIO },
		{ 0xfffe, 3, 0xffff, 2 },	/* across the wrap */
		{ 0xfffe, 3, 2, 5 },
		{ 0xfffe, 3, 3, -EIO },
		{ 0xfffe, 3, 0xfffd, -EIO },
		{ 0, 0x8000, 0x7fff, 0x8000 },	/* the deepest SQ, full */
		{ 0, 0x8000, 0x8000, -EIO },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rnic_ib_cqe_sq_retire(cases[i].ci,
							  cases[i].pi,
							  cases[i].idx),
				    cases[i].ret, "case %d", i);
}

static void cqe_rq_index(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(5, 6, 5), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(5, 9, 6), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(5, 5, 5), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(5, 9, 4), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(0xffff, 1, 0xffff), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_rq_check(0xffff, 1, 0), -EIO);
}

static void cqe_srq_slot(struct kunit *test)
{
	DECLARE_BITMAP(busy, 64);

	bitmap_zero(busy, 64);
	set_bit(0, busy);
	set_bit(63, busy);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(0, 64, busy), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(63, 64, busy), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(1, 64, busy), -EIO);
	/* beyond the SRQ: never a bitmap read past its end */
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(64, 64, busy), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(0xffff, 64, busy), -EIO);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_srq_check(63, 32, busy), -EIO);
}

/* A CQE the device wrote at free-running index @idx of a ring of 8 */
static void cqe_at(struct rnic_rdma_cqe *ring, u16 idx, u8 opcode, u32 qpn,
		   u16 wqe_idx, u8 flags)
{
	struct rnic_rdma_cqe *c = &ring[idx & 7];

	cqe_init(c, opcode, RNIC_WC_SUCCESS);
	c->flags = flags | (rnic_ring_phase(idx, 3) ? RNIC_RCQE_F_PHASE : 0);
	c->qpn = cpu_to_le32(qpn);
	c->wqe_idx = cpu_to_le16(wqe_idx);
}

/*
 * A QP that went to RESET: its unpolled CQEs are marked for poll_cq to
 * drop, the others' are not touched, the scan stops at the first entry
 * the device has not written this lap, and an SRQ receive gives its slot
 * back (one beyond the SRQ is marked without touching the bitmap).
 */
static void cqe_scrub_after_reset(struct kunit *test)
{
	struct rnic_rdma_cqe ring[8];
	DECLARE_BITMAP(busy, 32);
	u16 ci = 0xfffe, i;

	memset(ring, 0, sizeof(ring));
	bitmap_zero(busy, 32);
	set_bit(3, busy);
	set_bit(7, busy);
	/* across the ring's end and the u16 index's wrap */
	cqe_at(ring, ci, RNIC_SQE_OP_SEND, 5, 0, 0);
	cqe_at(ring, ci + 1, RNIC_SQE_OP_WRITE, 6, 0, 0);
	cqe_at(ring, ci + 2, RNIC_CQE_OP_RECV, 5, 3, RNIC_RCQE_F_SRQ);
	cqe_at(ring, ci + 3, RNIC_CQE_OP_RECV, 5, 40, RNIC_RCQE_F_SRQ);
	cqe_at(ring, ci + 4, RNIC_CQE_OP_RECV, 6, 7, RNIC_RCQE_F_SRQ);
	/* written a lap ago: not yet this lap's, the scan stops here */
	cqe_at(ring, ci + 5 - 8, RNIC_SQE_OP_SEND, 5, 0, 0);

	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_scrub(ring, 3, ci, 5, busy, 32), 3);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)ci & 7].qpn),
			RNIC_IB_CQE_QPN_SCRUBBED);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 1) & 7].qpn), 6);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 2) & 7].qpn),
			RNIC_IB_CQE_QPN_SCRUBBED);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 3) & 7].qpn),
			RNIC_IB_CQE_QPN_SCRUBBED);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 4) & 7].qpn), 6);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 5) & 7].qpn), 5);
	KUNIT_EXPECT_FALSE(test, test_bit(3, busy));
	KUNIT_EXPECT_TRUE(test, test_bit(7, busy));
	/* the phase bits stay: poll_cq still consumes (and drops) them */
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test,
				rnic_rdma_cqe_phase(&ring[(u16)(ci + i) & 7]),
				rnic_ring_phase((u16)(ci + i), 3));
	/* once marked, a second scrub finds nothing; another QP's are its own */
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_scrub(ring, 3, ci, 5, busy, 32), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_scrub(ring, 3, ci, 6, NULL, 0), 2);
	KUNIT_EXPECT_TRUE(test, test_bit(7, busy));

	/* a full ring of one QP's CQEs: every one, and the scan ends */
	for (i = 0; i < 8; i++)
		cqe_at(ring, 16 + i, RNIC_SQE_OP_SEND, 9, i, 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_cqe_scrub(ring, 3, 16, 9, NULL, 0), 8);
}

/*
 * A CQE belongs on its QP's send CQ or receive CQ as its opcode says, in
 * success and in error; one on another CQ is refused, whatever it says.
 */
static void cqe_qp_of_this_cq(struct kunit *test)
{
	static const u8 sends[] = { RNIC_SQE_OP_SEND, RNIC_SQE_OP_WRITE,
				    RNIC_SQE_OP_READ, RNIC_SQE_OP_REG_MR };
	static const u8 recvs[] = { RNIC_CQE_OP_RECV,
				    RNIC_CQE_OP_RECV_WRITE_IMM };
	struct rnic_rdma_cqe c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sends); i++) {
		cqe_init(&c, sends[i], RNIC_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 10, 10, 11), 0);
		/* the QP's receive CQ, or a CQ of no concern to the QP */
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 11, 10, 11),
				-EXDEV);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 12, 10, 11),
				-EXDEV);
		/* one CQ for both */
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 10, 10, 10), 0);
		cqe_init(&c, sends[i], RNIC_WC_RETRY_EXC_ERR);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 11, 10, 11),
				-EXDEV);
	}
	for (i = 0; i < ARRAY_SIZE(recvs); i++) {
		cqe_init(&c, recvs[i], RNIC_WC_SUCCESS);
		c.flags |= RNIC_RCQE_F_SRQ;
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 11, 10, 11), 0);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 10, 10, 11),
				-EXDEV);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 12, 10, 11),
				-EXDEV);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 10, 10, 10), 0);
		cqe_init(&c, recvs[i], RNIC_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, rnic_ib_cqe_qp_check(&c, 10, 10, 11),
				-EXDEV);
	}
}

/* An EQ entry the device wrote at free-running index @idx of a ring of 8 */
static void eqe_at(struct rnic_eqe *ring, u16 idx, u8 type, u32 data)
{
	struct rnic_eqe *e = &ring[idx & 7];

	memset(e, 0, sizeof(*e));
	e->type = type;
	e->flags = rnic_ring_phase(idx, 3) ? RNIC_EQE_F_PHASE : 0;
	e->data = cpu_to_le32(data);
}

/*
 * A destroyed CQ's unconsumed completion events are marked for the EQ's
 * interrupt to drop; other CQs' entries, and entries of other types that
 * happen to carry the CQN, are not touched; the scan stops at the first
 * entry the device has not written this lap.
 */
static void eqe_scrub_destroyed_cq(struct kunit *test)
{
	struct rnic_eqe ring[8];
	u16 ci = 0xfffd, i;

	memset(ring, 0, sizeof(ring));
	/* across the ring's end and the u16 index's wrap */
	eqe_at(ring, ci, RNIC_EQE_COMPLETION, 5);
	eqe_at(ring, ci + 1, RNIC_EQE_COMPLETION, 6);
	eqe_at(ring, ci + 2, RNIC_EQE_LINK_CHANGE, 5);
	eqe_at(ring, ci + 3, RNIC_EQE_COMPLETION, 5);
	/* written a lap ago: not yet this lap's, the scan stops here */
	eqe_at(ring, ci + 4 - 8, RNIC_EQE_COMPLETION, 5);

	KUNIT_EXPECT_EQ(test, rnic_ib_eqe_scrub(ring, 3, ci, 5), 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)ci & 7].data),
			RNIC_IB_EQE_CQN_SCRUBBED);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 1) & 7].data), 6);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 2) & 7].data), 5);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 3) & 7].data),
			RNIC_IB_EQE_CQN_SCRUBBED);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ring[(u16)(ci + 4) & 7].data), 5);
	/* type and phase stay: the interrupt still consumes them */
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, rnic_eqe_phase(&ring[(u16)(ci + i) & 7]),
				rnic_ring_phase((u16)(ci + i), 3));
	KUNIT_EXPECT_EQ(test, ring[(u16)ci & 7].type, RNIC_EQE_COMPLETION);
	/* once marked, a second scrub finds nothing; another CQ's are its own */
	KUNIT_EXPECT_EQ(test, rnic_ib_eqe_scrub(ring, 3, ci, 5), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_eqe_scrub(ring, 3, ci, 6), 1);
	/* an empty ring: nothing */
	memset(ring, 0, sizeof(ring));
	KUNIT_EXPECT_EQ(test, rnic_ib_eqe_scrub(ring, 3, 0, 0), 0);

	/* a full ring of one CQ's entries: every one, and the scan ends */
	for (i = 0; i < 8; i++)
		eqe_at(ring, 40 + i, RNIC_EQE_COMPLETION, 9);
	KUNIT_EXPECT_EQ(test, rnic_ib_eqe_scrub(ring, 3, 40, 9), 8);
}

/*
 * After a fatal error every outstanding WR completes as flushed, in
 * posting order, across the ring's end and the u16 wrap, no more than
 * there is room for, and the queue is then empty.
 */
static void wq_flush_after_fatal(struct kunit *test)
{
	struct ib_qp qp = {};
	struct ib_wc wc[8];
	u64 wrid[4];
	u16 ci, pi;
	int i, n;

	for (i = 0; i < 4; i++)
		wrid[i] = 0x1000 + i;
	/* three outstanding across the u16 wrap and the ring's end */
	ci = 0xfffe;
	pi = 0x0001;
	memset(wc, 0xa5, sizeof(wc));
	n = rnic_ib_wq_flush(&ci, pi, wrid, 3, false, &qp, wc, 8);
	KUNIT_ASSERT_EQ(test, n, 3);
	KUNIT_EXPECT_EQ(test, ci, pi);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, wrid[(u16)(0xfffe + i) & 3]);
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc[i].opcode, IB_WC_SEND);
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp, &qp);
		KUNIT_EXPECT_EQ(test, wc[i].byte_len, 0);
		KUNIT_EXPECT_EQ(test, wc[i].wc_flags, 0);
		KUNIT_EXPECT_EQ(test, wc[i].vendor_err, 0);
	}
	/* nothing beyond what was asked for */
	KUNIT_EXPECT_EQ(test, wc[3].wr_id, 0xa5a5a5a5a5a5a5a5ULL);
	/* flushed once: the queue is empty */
	KUNIT_EXPECT_EQ(test, rnic_ib_wq_flush(&ci, pi, wrid, 3, false, &qp,
					       wc, 8), 0);

	/* a full receive queue, with room for two at a time */
	ci = 10;
	pi = 14;
	n = rnic_ib_wq_flush(&ci, pi, wrid, 3, true, &qp, wc, 2);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, ci, 12);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, wrid[2]);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, wrid[3]);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RECV);
	n = rnic_ib_wq_flush(&ci, pi, wrid, 3, true, &qp, wc, 2);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, ci, pi);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, wrid[0]);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, wrid[1]);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_WR_FLUSH_ERR);
	/* no room: nothing moves */
	ci = 3;
	KUNIT_EXPECT_EQ(test, rnic_ib_wq_flush(&ci, 5, wrid, 3, true, &qp,
					       wc, 0), 0);
	KUNIT_EXPECT_EQ(test, ci, 3);
}

static struct kunit_case rnic_ib_cqe_cases[] = {
	KUNIT_CASE(cqe_status_table),
	KUNIT_CASE(cqe_send_opcodes),
	KUNIT_CASE(cqe_rc_recv),
	KUNIT_CASE(cqe_ud_recv),
	KUNIT_CASE(cqe_malformed),
	KUNIT_CASE(cqe_sq_index),
	KUNIT_CASE(cqe_rq_index),
	KUNIT_CASE(cqe_srq_slot),
	KUNIT_CASE(cqe_scrub_after_reset),
	KUNIT_CASE(cqe_qp_of_this_cq),
	KUNIT_CASE(eqe_scrub_destroyed_cq),
	KUNIT_CASE(wq_flush_after_fatal),
	{}
};

static struct kunit_suite rnic_ib_cqe_suite = {
	.name = "rnic_ib_cqe",
	.test_cases = rnic_ib_cqe_cases,
};

kunit_test_suite(rnic_ib_cqe_suite);
