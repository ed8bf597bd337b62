// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the hardware contract's encode/decode helpers
 * (include/rnic_hw.h). The device model compiles the same header, so these
 * pin down the byte layout both sides rely on.
 */
#include <kunit/test.h>
#include <linux/stddef.h>

#include "rnic_hw.h"

static void ivshmem_doorbell_value(struct kunit *test)
{
	/* The model is peer 0: the value is the bare vector. */
	KUNIT_EXPECT_EQ(test, rnic_ivshmem_doorbell(RNIC_DB_VEC_CTRL), 0u);
	KUNIT_EXPECT_EQ(test, rnic_ivshmem_doorbell(RNIC_DB_VEC_DATA), 3u);
	KUNIT_EXPECT_EQ(test, FIELD_GET(RNIC_IVSHMEM_DB_PEER,
					rnic_ivshmem_doorbell(RNIC_DB_VEC_ADMIN)),
			0u);
}

static void sig_check(struct kunit *test)
{
	const u16 ibd = RNIC_ABI2_MAJOR;

	KUNIT_EXPECT_TRUE(test, rnic_sig_serves(RNIC_SIG_MAGIC, ibd, 0, ibd));
	KUNIT_EXPECT_TRUE(test, rnic_sig_serves(RNIC_SIG_MAGIC, ibd, BIT(ibd),
						ibd));
	/* a device of the transition served 1.0 and 2.0 */
	KUNIT_EXPECT_TRUE(test, rnic_sig_serves(RNIC_SIG_MAGIC, ibd,
						BIT(RNIC_ABI_MAJOR) | BIT(ibd),
						ibd));
	/* a 1.0-only device is declined */
	KUNIT_EXPECT_FALSE(test, rnic_sig_serves(RNIC_SIG_MAGIC,
						 RNIC_ABI_MAJOR, 0, ibd));
	KUNIT_EXPECT_FALSE(test, rnic_sig_serves(0, ibd, 0, ibd));
	/* a plain ivshmem region starts zeroed or with someone else's data */
	KUNIT_EXPECT_FALSE(test, rnic_sig_serves(0, 0, 0, ibd));
	KUNIT_EXPECT_FALSE(test, rnic_sig_serves(0xffffffff, 0xffff, 0xffff,
						 ibd));
	/* the magic reads "RNIC" in memory: a little-endian le32 */
	KUNIT_EXPECT_EQ(test, RNIC_SIG_MAGIC,
			(u32)('R' | 'N' << 8 | 'I' << 16 | 'C' << 24));
}

static void ring_phase_and_used(struct kunit *test)
{
	unsigned int log2;

	/* depth 4: first pass phase 1, second pass phase 0, third 1 */
	KUNIT_EXPECT_EQ(test, rnic_ring_phase(0, 2), 1);
	KUNIT_EXPECT_EQ(test, rnic_ring_phase(3, 2), 1);
	KUNIT_EXPECT_EQ(test, rnic_ring_phase(4, 2), 0);
	KUNIT_EXPECT_EQ(test, rnic_ring_phase(7, 2), 0);
	KUNIT_EXPECT_EQ(test, rnic_ring_phase(8, 2), 1);
	/*
	 * 2^16 is a whole number of double passes for every legal depth, so
	 * the phase still alternates when the 16-bit index wraps to 0.
	 */
	for (log2 = RNIC_AQ_LOG2_MIN; log2 <= RNIC_EQ_LOG2_MAX; log2++) {
		KUNIT_EXPECT_EQ(test, rnic_ring_phase(0xffff, log2), 0);
		KUNIT_EXPECT_EQ(test, rnic_ring_phase(0xffff & (0xffff + 1), log2), 1);
	}

	KUNIT_EXPECT_EQ(test, rnic_ring_used(10, 4), 6);
	KUNIT_EXPECT_EQ(test, rnic_ring_used(4, 4), 0);
	/* producer wrapped past 0xffff, consumer did not yet */
	KUNIT_EXPECT_EQ(test, rnic_ring_used(2, 0xfffe), 4);
	KUNIT_EXPECT_EQ(test, rnic_ring_used(0, 0xffff), 1);
}

static void cq_doorbell(struct kunit *test)
{
	u32 v = rnic_db_cq(0x1234, true, 0x56);

	KUNIT_EXPECT_EQ(test, FIELD_GET(RNIC_DB_CQ_CI, v), 0x1234u);
	KUNIT_EXPECT_EQ(test, FIELD_GET(RNIC_DB_CQ_ARM_SEQ, v), 0x56u);
	KUNIT_EXPECT_TRUE(test, v & RNIC_DB_CQ_ARM);
	v = rnic_db_cq(0xffff, false, 0);
	KUNIT_EXPECT_EQ(test, v, 0xffffu);
	/* no undefined bits may be set */
	KUNIT_EXPECT_EQ(test, rnic_db_cq(0xffff, true, 0xff) &
			~(RNIC_DB_CQ_CI | RNIC_DB_CQ_ARM_SEQ | RNIC_DB_CQ_ARM), 0u);
}

static void tx_desc_inline(struct kunit *test)
{
	const u64 addr[3] = { 0x1000, 0x2345678000ULL, 0xfff0 };
	const u32 len[3] = { 54, 4096, 12 };
	struct rnic_tx_desc d;
	u16 tci = FIELD_PREP(RNIC_VLAN_TCI_PCP, 3) | 100;

	memset(&d, 0xa5, sizeof(d));
	KUNIT_ASSERT_EQ(test, rnic_tx_desc_build(&d, RNIC_TX_F_ICRC |
						 RNIC_TX_F_VLAN_INSERT, tci,
						 addr, len, 3), 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d.flags),
			RNIC_TX_F_ICRC | RNIC_TX_F_VLAN_INSERT);
	KUNIT_EXPECT_EQ(test, d.num_sge, 3);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d.vlan_tci), tci);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.total_len), 54u + 4096 + 12);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d.sge[1].addr), 0x2345678000ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.sge[2].len), 12u);
	/* the stale 0xa5 pattern must be gone from reserved fields */
	KUNIT_EXPECT_EQ(test, d.reserved0, 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d.reserved1), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.sge[0].reserved), 0u);

	/* one SGE, no VLAN: the TCI must not leak into the descriptor */
	KUNIT_ASSERT_EQ(test, rnic_tx_desc_build(&d, 0, tci, addr, len, 1), 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d.vlan_tci), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.total_len), 54u);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d.sge[1].addr), 0ULL);
}

static void tx_desc_inline_invalid(struct kunit *test)
{
	const u64 addr[4] = { 1, 2, 3, 4 };
	const u32 len[4] = { 1, 2, 3, 4 };
	struct rnic_tx_desc d, orig;

	memset(&d, 0x5a, sizeof(d));
	orig = d;
	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build(&d, 0, 0, addr, len, 0), -1);
	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build(&d, 0, 0, addr, len, 4), -1);
	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build(&d, RNIC_TX_F_INDIRECT, 0,
						 addr, len, 1), -1);
	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build(&d, BIT(7), 0, addr, len, 1),
			-1);
	KUNIT_EXPECT_MEMEQ(test, &d, &orig, sizeof(d));
}

static void tx_desc_indirect(struct kunit *test)
{
	struct rnic_tx_desc d;

	KUNIT_ASSERT_EQ(test, rnic_tx_desc_build_indirect(&d, RNIC_TX_F_ICRC, 0,
							  0x80000, 17, 9000), 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d.flags),
			RNIC_TX_F_ICRC | RNIC_TX_F_INDIRECT);
	KUNIT_EXPECT_EQ(test, d.num_sge, 17);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d.sge[0].addr), 0x80000ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.sge[0].len), 17u * RNIC_SGE_SIZE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d.total_len), 9000u);

	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build_indirect(&d, 0, 0, 0x80000,
							  0, 0), -1);
	KUNIT_EXPECT_EQ(test, rnic_tx_desc_build_indirect(&d, 0, 0, 0x80000,
							  RNIC_TX_MAX_SGE + 1,
							  1), -1);
}

static void cqe_decode(struct kunit *test)
{
	struct rnic_cqe cqe = {};

	cqe.flags = cpu_to_le32(RNIC_CQE_F_PHASE | RNIC_CQE_F_VLAN_STRIPPED);
	cqe.rx_class = RNIC_RX_CLASS_ROCE_V2_IPV6;
	KUNIT_EXPECT_EQ(test, rnic_cqe_phase(&cqe), 1);
	KUNIT_EXPECT_EQ(test, rnic_cqe_rx_class(&cqe),
			RNIC_RX_CLASS_ROCE_V2_IPV6);

	/* the phase is bit 0 alone */
	cqe.flags = cpu_to_le32(RNIC_CQE_F_TX | RNIC_CQE_F_VLAN_STRIPPED);
	KUNIT_EXPECT_EQ(test, rnic_cqe_phase(&cqe), 0);

	/* a class the driver does not know is reported, not trusted */
	cqe.rx_class = 4;
	KUNIT_EXPECT_EQ(test, rnic_cqe_rx_class(&cqe), -1);
	cqe.rx_class = 0xff;
	KUNIT_EXPECT_EQ(test, rnic_cqe_rx_class(&cqe), -1);
}

static void pause_time(struct kunit *test)
{
	/* one quantum is 512 bit times: 51.2 ns at 10 Gb/s */
	KUNIT_EXPECT_EQ(test, rnic_pause_ns(1, 10000), 51ULL);
	KUNIT_EXPECT_EQ(test, rnic_pause_ns(0xffff, 10000), 3355392ULL);
	KUNIT_EXPECT_EQ(test, rnic_pause_ns(100, 1000), 51200ULL);
	KUNIT_EXPECT_EQ(test, rnic_pause_ns(0, 10000), 0ULL);
	KUNIT_EXPECT_EQ(test, rnic_pause_ns(100, 0), 0ULL);
}

static void layout(struct kunit *test)
{
	/* offsets the model and the documentation depend on */
	KUNIT_EXPECT_EQ(test, offsetof(struct rnic_sig, magic), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct rnic_sig, mac), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct rnic_tx_desc, sge), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct rnic_cqe, flags), 0);
	KUNIT_EXPECT_EQ(test, RNIC_DB_QUEUE_OFF(0), 0x2400);
	KUNIT_EXPECT_EQ(test, RNIC_DB_CQ_OFF(255), 0x2000 + 4 * 767);
	KUNIT_EXPECT_LE(test, RNIC_DB_CQ_OFF(RNIC_MAX_CQS - 1) + 4,
			RNIC_DB_OFF + RNIC_DB_SIZE);
}

static struct kunit_case rnic_hw_cases[] = {
	KUNIT_CASE(ivshmem_doorbell_value),
	KUNIT_CASE(sig_check),
	KUNIT_CASE(ring_phase_and_used),
	KUNIT_CASE(cq_doorbell),
	KUNIT_CASE(tx_desc_inline),
	KUNIT_CASE(tx_desc_inline_invalid),
	KUNIT_CASE(tx_desc_indirect),
	KUNIT_CASE(cqe_decode),
	KUNIT_CASE(pause_time),
	KUNIT_CASE(layout),
	{}
};

static struct kunit_suite rnic_hw_suite = {
	.name = "rnic_hw",
	.test_cases = rnic_hw_cases,
};

kunit_test_suite(rnic_hw_suite);
