// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the ABI 2.0 WQE encoder (drivers/rnic_ib_wqe.c): every
 * opcode of the contract's table, every flag, on every QP type, and the
 * work requests the contract forbids, which must be refused without a
 * byte of the ring slot being written.
 */
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_wqe.h"

#define WQE_MAX		512
#define POISON		0xa5

static const struct rnic_ib_sq_attr sq_rc = {
	.qp_type = IB_QPT_RC,
	.sqe_log2 = 9,
	.max_send_sge = 29,
	.max_inline = 464,
	.pkey_tbl_len = 1,
	.privileged = true,
	.caps = RNIC_RDMA_CAP_ALL,
	.max_msg_size = 1U << 31,
	.page_size_cap = GENMASK_ULL(30, 12),
};

static struct ib_sge sges[29];

static void fill_sges(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		sges[i].addr = 0x100000ULL * (i + 1) + i;
		sges[i].length = 100 + i;
		sges[i].lkey = 0x1200 + i;
	}
}

static void check_sges(struct kunit *test, const struct rnic_data_sge *s,
		       int n)
{
	int i;

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, le64_to_cpu(s[i].addr), sges[i].addr);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(s[i].len), sges[i].length);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(s[i].lkey), sges[i].lkey);
	}
}

static int sge_sum(int n)
{
	int i, len = 0;

	for (i = 0; i < n; i++)
		len += sges[i].length;
	return len;
}

static bool all_zero(const u8 *p, size_t len)
{
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}

/* The data-carrying RC opcodes: opcode, segment, and SGEs */
static const struct {
	enum ib_wr_opcode ib;
	u8 hw;
	bool rdma;
	bool imm;
	bool inv;
} data_ops[] = {
	{ IB_WR_SEND, RNIC_SQE_OP_SEND, false, false, false },
	{ IB_WR_SEND_WITH_IMM, RNIC_SQE_OP_SEND_IMM, false, true, false },
	{ IB_WR_SEND_WITH_INV, RNIC_SQE_OP_SEND_INV, false, false, true },
	{ IB_WR_RDMA_WRITE, RNIC_SQE_OP_WRITE, true, false, false },
	{ IB_WR_RDMA_WRITE_WITH_IMM, RNIC_SQE_OP_WRITE_IMM, true, true, false },
	{ IB_WR_RDMA_READ, RNIC_SQE_OP_READ, true, false, false },
};

static void wqe_rc_data_ops(struct kunit *test)
{
	static const int nsge[] = { 0, 1, 5, 29 };
	u8 *buf = kunit_kzalloc(test, WQE_MAX, GFP_KERNEL);
	struct rnic_sqe *sqe = (struct rnic_sqe *)buf;
	struct rnic_ib_wr_res res = {};
	int i, n;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(data_ops); i++) {
		for (n = 0; n < ARRAY_SIZE(nsge); n++) {
			struct ib_rdma_wr wr = {};
			u8 zero[32] = {};

			fill_sges(nsge[n]);
			wr.wr.opcode = data_ops[i].ib;
			wr.wr.sg_list = sges;
			wr.wr.num_sge = nsge[n];
			wr.wr.send_flags = IB_SEND_SIGNALED;
			if (data_ops[i].imm)
				wr.wr.ex.imm_data = cpu_to_be32(0xcafef00d);
			if (data_ops[i].inv)
				wr.wr.ex.invalidate_rkey = 0x4321;
			wr.remote_addr = 0x123456789abcULL;
			wr.rkey = 0xabcd01;
			memset(buf, POISON, WQE_MAX);
			KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq_rc,
								&wr.wr, &res),
					0);
			KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, data_ops[i].hw);
			KUNIT_EXPECT_EQ(test, sqe->ctrl.flags,
					RNIC_SQE_F_SIGNALED);
			KUNIT_EXPECT_EQ(test, sqe->ctrl.num_sge, nsge[n]);
			KUNIT_EXPECT_EQ(test, sqe->ctrl.reserved0, 0);
			KUNIT_EXPECT_EQ(test, sqe->ctrl.reserved1, 0);
			KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->ctrl.length),
					sge_sum(nsge[n]));
			if (data_ops[i].imm)
				KUNIT_EXPECT_EQ(test, sqe->ctrl.imm_data,
						cpu_to_be32(0xcafef00d));
			else if (data_ops[i].inv)
				KUNIT_EXPECT_EQ(test,
						le32_to_cpu(sqe->ctrl.key),
						0x4321);
			else
				KUNIT_EXPECT_EQ(test, sqe->ctrl.key, 0);
			if (data_ops[i].rdma) {
				KUNIT_EXPECT_EQ(test,
						le64_to_cpu(sqe->seg.rdma.remote_addr),
						0x123456789abcULL);
				KUNIT_EXPECT_EQ(test,
						le32_to_cpu(sqe->seg.rdma.rkey),
						0xabcd01);
				KUNIT_EXPECT_MEMEQ(test, sqe->seg.rdma.reserved,
						   zero,
						   sizeof(sqe->seg.rdma.reserved));
			} else {
				KUNIT_EXPECT_MEMEQ(test, sqe->seg.raw, zero, 32);
			}
			check_sges(test, sqe->sge, nsge[n]);
			/* the rest of the WQE is zero, not stale */
			KUNIT_EXPECT_TRUE(test,
					  all_zero(buf + RNIC_SQE_HDR_SIZE +
						   16 * nsge[n],
						   WQE_MAX - RNIC_SQE_HDR_SIZE -
						   16 * nsge[n]));
		}
	}
}

static void wqe_atomics(struct kunit *test)
{
	u8 buf[128];
	struct rnic_sqe *sqe = (struct rnic_sqe *)buf;
	struct rnic_ib_wr_res res = {};
	struct ib_atomic_wr wr = {};
	struct ib_sge sge = { .addr = 0x1000, .length = 8, .lkey = 7 };
	struct rnic_ib_sq_attr sq = sq_rc;

	sq.sqe_log2 = 7;
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = 0x2000;
	wr.rkey = 0x99;
	wr.compare_add = 0x1111222233334444ULL;
	wr.swap = 0x5555666677778888ULL;
	KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_CMP_SWAP);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->ctrl.length), 8);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.num_sge, 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.atomic.remote_addr), 0x2000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->seg.atomic.rkey), 0x99);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.atomic.compare_add),
			0x1111222233334444ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.atomic.swap),
			0x5555666677778888ULL);
	KUNIT_EXPECT_EQ(test, sqe->seg.atomic.reserved, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->sge[0].addr), 0x1000);

	/* FETCH_ADD: swap is 0 whatever the WR holds */
	wr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, sqe->seg.atomic.swap, 0);

	/* one aligned 8-byte word only */
	wr.remote_addr = 0x2004;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.remote_addr = 0x2000;
	sge.length = 4;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sge.length = 8;
	wr.wr.num_sge = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_INLINE;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.wr.send_flags = 0;
	sq.caps &= ~RNIC_RDMA_CAP_ATOMIC;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EOPNOTSUPP);
}

static void wqe_local_inv(struct kunit *test)
{
	u8 buf[64], zero[32] = {};
	struct rnic_sqe *sqe = (struct rnic_sqe *)buf;
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {};
	struct ib_send_wr wr = {};

	sq.sqe_log2 = 6;
	wr.opcode = IB_WR_LOCAL_INV;
	wr.ex.invalidate_rkey = 0x123456;
	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE;
	/* a stray SGE list does not make it into the WQE */
	fill_sges(1);
	wr.sg_list = sges;
	wr.num_sge = 1;
	memset(buf, POISON, sizeof(buf));
	KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.flags,
			RNIC_SQE_F_SIGNALED | RNIC_SQE_F_FENCE);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.num_sge, 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.length, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->ctrl.key), 0x123456);
	KUNIT_EXPECT_MEMEQ(test, sqe->seg.raw, zero, 32);
	KUNIT_EXPECT_MEMEQ(test, buf + 48, zero, 16);

	sq.caps &= ~RNIC_RDMA_CAP_REG_MR;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr, &res),
			-EOPNOTSUPP);
}

static void wqe_reg_mr(struct kunit *test)
{
	u8 buf[64];
	struct rnic_sqe *sqe = (struct rnic_sqe *)buf;
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {
		.pbl_addr = 0x7000, .npages = 4, .max_npages = 16,
	};
	struct ib_mr mr = {
		.lkey = 0x123400, .rkey = 0x123400,
		.iova = 0x10000800, .length = 3 * 4096, .page_size = 4096,
	};
	struct ib_reg_wr wr = {};

	sq.sqe_log2 = 6;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = &mr;
	wr.key = 0x123407;	/* same index, new variant */
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_RELAXED_ORDERING;
	KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_REG_MR);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->ctrl.key), 0x123407);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.num_sge, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.reg_mr.iova), 0x10000800);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.reg_mr.length), 3 * 4096);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.reg_mr.pbl_addr), 0x7000);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe->seg.reg_mr.npages), 4);
	KUNIT_EXPECT_EQ(test, sqe->seg.reg_mr.page_log2, 12);
	KUNIT_EXPECT_EQ(test, sqe->seg.reg_mr.access,
			RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_READ |
			RNIC_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, sqe->seg.reg_mr.reserved, 0);

	/* (iova mod page) + length must fit the pages: 0x800 + 3 pages > 3 */
	res.npages = 3;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	res.npages = 17;	/* more than the MR was created for */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	res.npages = 4;
	res.pbl_addr = 0x7004;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	res.pbl_addr = 0x7000;
	wr.key = 0x223407;	/* another MR's index */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.key = 0x123407;
	wr.access = IB_ACCESS_REMOTE_WRITE;	/* without LOCAL_WRITE */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.access = IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.access = IB_ACCESS_LOCAL_WRITE;
	mr.page_size = 2048;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	mr.page_size = 3 * 4096;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	mr.page_size = SZ_2M;	/* allowed by page_size_cap */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->seg.reg_mr.page_log2, 21);
	sq.page_size_cap = BIT_ULL(12);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sq.page_size_cap = sq_rc.page_size_cap;
	/* a user PD can never hand the device a DMA address */
	sq.privileged = false;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EPERM);
	sq.privileged = true;
	sq.caps &= ~RNIC_RDMA_CAP_REG_MR;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EOPNOTSUPP);
}

static void wqe_flags(struct kunit *test)
{
	static const struct {
		int ib;
		bool sig_all;
		u8 hw;
	} cases[] = {
		{ 0, false, 0 },
		{ 0, true, RNIC_SQE_F_SIGNALED },
		{ IB_SEND_SIGNALED, false, RNIC_SQE_F_SIGNALED },
		{ IB_SEND_SOLICITED, false, RNIC_SQE_F_SOLICITED },
		{ IB_SEND_FENCE, false, RNIC_SQE_F_FENCE },
		{ IB_SEND_INLINE, false, RNIC_SQE_F_INLINE },
		{ IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_FENCE |
		  IB_SEND_INLINE, false, RNIC_SQE_F_ALL },
	};
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {};
	struct ib_send_wr wr = {};
	u8 buf[128];
	int i;

	sq.sqe_log2 = 7;
	fill_sges(1);
	sges[0].length = 0;
	wr.opcode = IB_WR_SEND;
	wr.sg_list = sges;
	wr.num_sge = 1;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		wr.send_flags = cases[i].ib;
		sq.sig_all = cases[i].sig_all;
		KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr, &res), 0);
		KUNIT_EXPECT_EQ_MSG(test, buf[1], cases[i].hw, "case %d", i);
	}
	/* flags the device has no bit for */
	wr.send_flags = IB_SEND_IP_CSUM;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr, &res), -EINVAL);
	wr.send_flags = IB_SEND_SIGNALED | BIT(10);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr, &res), -EINVAL);
}

static void wqe_inline(struct kunit *test)
{
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {};
	struct ib_rdma_wr wr = {};
	struct ib_sge sg[3];
	u8 *buf = kunit_kzalloc(test, WQE_MAX, GFP_KERNEL);
	u8 *src = kunit_kzalloc(test, 512, GFP_KERNEL);
	struct rnic_sqe *sqe = (struct rnic_sqe *)buf;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, src);
	for (i = 0; i < 512; i++)
		src[i] = i * 7;
	sg[0] = (struct ib_sge){ (uintptr_t)src, 10, 0 };
	sg[1] = (struct ib_sge){ (uintptr_t)(src + 100), 0, 0 };
	sg[2] = (struct ib_sge){ (uintptr_t)(src + 200), 70, 0 };
	sq.sqe_log2 = 7;	/* 80 inline bytes */
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.send_flags = IB_SEND_INLINE;
	wr.wr.sg_list = sg;
	wr.wr.num_sge = 3;
	wr.remote_addr = 0x5000;
	wr.rkey = 3;
	memset(buf, POISON, WQE_MAX);
	KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.flags, RNIC_SQE_F_INLINE);
	KUNIT_EXPECT_EQ(test, sqe->ctrl.num_sge, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->ctrl.length), 80);
	KUNIT_EXPECT_MEMEQ(test, buf + 48, src, 10);
	KUNIT_EXPECT_MEMEQ(test, buf + 58, src + 200, 70);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(sqe->seg.rdma.remote_addr), 0x5000);
	/* the WQE's room, then the device's max_inline */
	sg[1].length = 1;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sq.sqe_log2 = 9;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	sq.max_inline = 64;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	/* 464 bytes fill a 512-byte WQE exactly */
	sq.max_inline = 464;
	sg[0].length = 464;
	wr.wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
	KUNIT_EXPECT_MEMEQ(test, buf + 48, src, 464);
	sg[0].length = 465;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	/* READ has no inline */
	sg[0].length = 8;
	wr.wr.opcode = IB_WR_RDMA_READ;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
}

/* SGE limits: what the WQE size holds, and the device's max_send_sge */
static void wqe_sge_limits(struct kunit *test)
{
	static const struct {
		u8 log2;
		int max;
	} sizes[] = { { 6, 1 }, { 7, 5 }, { 8, 13 }, { 9, 29 } };
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {};
	struct ib_rdma_wr wr = {};
	u8 *buf = kunit_kzalloc(test, WQE_MAX, GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	fill_sges(29);
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.sg_list = sges;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		sq.sqe_log2 = sizes[i].log2;
		wr.wr.num_sge = sizes[i].max;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				0);
		if (sizes[i].max < 29) {
			wr.wr.num_sge = sizes[i].max + 1;
			KUNIT_EXPECT_EQ(test,
					rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
					-EINVAL);
		}
	}
	sq.max_send_sge = 4;
	wr.wr.num_sge = 5;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	wr.wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	/* the message may not exceed max_msg_size */
	sq.max_send_sge = 29;
	sq.max_msg_size = 1000;
	wr.wr.num_sge = 10;	/* 100 + ... + 109 = 1045 bytes */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	/* a sum past 4 GiB does not wrap */
	sq.max_msg_size = U32_MAX;
	sges[0].length = U32_MAX;
	wr.wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	/* WQE sizes the QP cannot have */
	sq.sqe_log2 = 5;
	wr.wr.num_sge = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sq.sqe_log2 = 10;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
}

static void wqe_ud(struct kunit *test)
{
	static const enum ib_qp_type types[] = { IB_QPT_UD, IB_QPT_GSI };
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = { .ah_idx = 77 };
	struct ib_ud_wr wr = {};
	struct rnic_sqe *sqe;
	u8 buf[128];
	int t;

	sqe = (struct rnic_sqe *)buf;
	sq.sqe_log2 = 7;
	sq.pkey_tbl_len = 2;
	fill_sges(2);
	wr.wr.sg_list = sges;
	wr.wr.num_sge = 2;
	wr.remote_qpn = 0xabcdef;
	wr.remote_qkey = 0x11112222;
	wr.pkey_index = 1;
	for (t = 0; t < ARRAY_SIZE(types); t++) {
		sq.qp_type = types[t];
		wr.wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.wr.ex.imm_data = cpu_to_be32(5);
		KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				0);
		KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_SEND_IMM);
		KUNIT_EXPECT_EQ(test, sqe->ctrl.imm_data, cpu_to_be32(5));
		KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->seg.ud.ah), 77);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->seg.ud.remote_qpn),
				0xabcdef);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->seg.ud.remote_qkey),
				0x11112222);
		/* only GSI sends name a P_Key */
		KUNIT_EXPECT_EQ(test, le16_to_cpu(sqe->seg.ud.pkey_index),
				types[t] == IB_QPT_GSI ? 1 : 0);
		KUNIT_EXPECT_EQ(test, sqe->seg.ud.reserved0, 0);
		check_sges(test, sqe->sge, 2);

		wr.wr.opcode = IB_WR_SEND;
		/* the MAD layer's QP1 Q_Key: bit 31 means "the QP's own" */
		wr.remote_qkey = RNIC_QKEY_GSI;
		KUNIT_ASSERT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				0);
		KUNIT_EXPECT_EQ(test, sqe->ctrl.opcode, RNIC_SQE_OP_SEND);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(sqe->seg.ud.remote_qkey),
				RNIC_QKEY_GSI);
		wr.remote_qkey = 0x11112222;

		/* RC-only opcodes */
		wr.wr.opcode = IB_WR_SEND_WITH_INV;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				-EINVAL);
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				-EINVAL);
		wr.wr.opcode = IB_WR_LOCAL_INV;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				-EINVAL);
		/* AH 0 is never valid; QPNs are 24 bits */
		wr.wr.opcode = IB_WR_SEND;
		res.ah_idx = 0;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				-EINVAL);
		res.ah_idx = 77;
		wr.remote_qpn = 0x1000000;
		KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				-EINVAL);
		wr.remote_qpn = 0xabcdef;
	}
	/* a GSI send's P_Key index must name an entry */
	wr.pkey_index = 2;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sq.qp_type = IB_QPT_UD;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res), 0);
}

/* Opcodes and QP types rnic does not have; a refused WR writes nothing */
static void wqe_refused(struct kunit *test)
{
	static const enum ib_wr_opcode bad[] = {
		IB_WR_LSO, IB_WR_RDMA_READ_WITH_INV, IB_WR_BIND_MW,
		IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
		IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, IB_WR_REG_MR_INTEGRITY,
		IB_WR_RESERVED1, 0x1ff,
	};
	u8 buf[64], poison[64];
	struct rnic_ib_sq_attr sq = sq_rc;
	struct rnic_ib_wr_res res = {};
	struct ib_rdma_wr wr = {};
	int i;

	sq.sqe_log2 = 6;
	memset(poison, POISON, sizeof(poison));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		wr.wr.opcode = bad[i];
		memset(buf, POISON, sizeof(buf));
		KUNIT_EXPECT_EQ_MSG(test,
				    rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
				    -EINVAL, "opcode %#x", bad[i]);
		KUNIT_EXPECT_MEMEQ(test, buf, poison, sizeof(buf));
	}
	wr.wr.opcode = IB_WR_SEND;
	sq.qp_type = IB_QPT_UC;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EINVAL);
	sq.qp_type = IB_QPT_RC;
	sq.caps &= ~RNIC_RDMA_CAP_SEND_INV;
	wr.wr.opcode = IB_WR_SEND_WITH_INV;
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_build(buf, &sq, &wr.wr, &res),
			-EOPNOTSUPP);
	KUNIT_EXPECT_MEMEQ(test, buf, poison, sizeof(buf));
}

static void wqe_recv(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, WQE_MAX, GFP_KERNEL);
	struct rnic_rqe *rqe = (struct rnic_rqe *)buf;
	struct ib_recv_wr wr = {};
	u8 zero[16] = {}, poison[32];

	KUNIT_ASSERT_NOT_NULL(test, buf);
	fill_sges(29);
	wr.sg_list = sges;
	wr.num_sge = 1;
	memset(buf, POISON, WQE_MAX);
	KUNIT_ASSERT_EQ(test, rnic_ib_rqe_build(buf, 5, 31, &wr), 0);
	KUNIT_EXPECT_EQ(test, rqe->num_sge, 1);
	KUNIT_EXPECT_MEMEQ(test, buf + 1, zero, 15);
	check_sges(test, rqe->sge, 1);
	/* 32 bytes hold one SGE */
	wr.num_sge = 2;
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_build(buf, 5, 31, &wr), -EINVAL);
	/* 512 bytes hold 31; 29 here, and the rest is zeroed */
	wr.num_sge = 29;
	memset(buf, POISON, WQE_MAX);
	KUNIT_ASSERT_EQ(test, rnic_ib_rqe_build(buf, 9, 31, &wr), 0);
	KUNIT_EXPECT_EQ(test, rqe->num_sge, 29);
	check_sges(test, rqe->sge, 29);
	KUNIT_EXPECT_MEMEQ(test, buf + 16 + 29 * 16, zero, 16);
	/* the device's max_recv_sge */
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_build(buf, 9, 16, &wr), -EINVAL);
	/* zero SGEs: a WQE for zero-length messages and WRITE_IMM */
	wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, rnic_ib_rqe_build(buf, 5, 31, &wr), 0);
	KUNIT_EXPECT_EQ(test, rqe->num_sge, 0);
	/* WQE sizes a queue cannot have; nothing written */
	memset(poison, POISON, sizeof(poison));
	memset(buf, POISON, 32);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_build(buf, 4, 31, &wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_build(buf, 10, 31, &wr), -EINVAL);
	wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_build(buf, 9, 31, &wr), -EINVAL);
	KUNIT_EXPECT_MEMEQ(test, buf, poison, 32);
}

static void wqe_mr_access(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(0), 0);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ACCESS_REMOTE_READ),
			RNIC_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ACCESS_LOCAL_WRITE |
						IB_ACCESS_REMOTE_WRITE |
						IB_ACCESS_REMOTE_READ |
						IB_ACCESS_REMOTE_ATOMIC),
			RNIC_ACCESS_ALL);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ACCESS_REMOTE_ATOMIC),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ZERO_BASED), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ACCESS_ON_DEMAND), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_ib_mr_access(IB_ACCESS_RELAXED_ORDERING), 0);
}

/* The smallest WQE that holds a QP's SGEs or inline data */
static void wqe_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(0, 0), 6);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(1, 0), 6);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(0, 16), 6);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(2, 0), 7);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(0, 17), 7);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(5, 80), 7);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(6, 0), 8);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(13, 208), 8);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(29, 0), 9);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(1, 464), 9);
	/* what no WQE holds is reported as such, never wrapped */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(30, 0), 10);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(0, 465), 10);
	KUNIT_EXPECT_GT(test, rnic_ib_sqe_log2(U32_MAX, U32_MAX),
			RNIC_SQE_LOG2_MAX);
	/* every size holds what rnic_sqe_max_sge()/_inline() say it does */
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(rnic_sqe_max_sge(8), 0), 8);
	KUNIT_EXPECT_EQ(test, rnic_ib_sqe_log2(0, rnic_sqe_max_inline(7)), 7);

	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(0), 5);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(1), 5);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(2), 6);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(3), 6);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(4), 7);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(31), 9);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(32), 10);
	KUNIT_EXPECT_EQ(test, rnic_ib_rqe_log2(rnic_rqe_max_sge(7)), 7);
	KUNIT_EXPECT_GT(test, rnic_ib_rqe_log2(U32_MAX), RNIC_RQE_LOG2_MAX);
}

static struct kunit_case rnic_ib_wqe_cases[] = {
	KUNIT_CASE(wqe_rc_data_ops),
	KUNIT_CASE(wqe_atomics),
	KUNIT_CASE(wqe_local_inv),
	KUNIT_CASE(wqe_reg_mr),
	KUNIT_CASE(wqe_flags),
	KUNIT_CASE(wqe_inline),
	KUNIT_CASE(wqe_sge_limits),
	KUNIT_CASE(wqe_ud),
	KUNIT_CASE(wqe_refused),
	KUNIT_CASE(wqe_recv),
	KUNIT_CASE(wqe_mr_access),
	KUNIT_CASE(wqe_sizes),
	{}
};

static struct kunit_suite rnic_ib_wqe_suite = {
	.name = "rnic_ib_wqe",
	.test_cases = rnic_ib_wqe_cases,
};

kunit_test_suite(rnic_ib_wqe_suite);
