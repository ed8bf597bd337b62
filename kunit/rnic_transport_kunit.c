// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the transport's pure decisions: how a responder
 * classifies a PSN, AETH syndromes, the RNR timer table, NAK codes to
 * completion statuses, the local ACK timeout, segmentation and opcode
 * choice, and the RoCE v2 UDP source port. The engines act on these; a
 * wrong answer here is a protocol violation on the wire.
 */
#include <kunit/test.h>
#include <rdma/ib_pack.h>

#include "rnic_roce.h"

static void psn_classify(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(100, 100), RNIC_PSN_NEW);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(99, 100), RNIC_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(101, 100), RNIC_PSN_OUT_OF_SEQ);
	/* across the 24-bit wrap */
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(0xffffff, 0), RNIC_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(0, 0xffffff), RNIC_PSN_OUT_OF_SEQ);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(0, 0), RNIC_PSN_NEW);
	/* half the space behind is duplicate, the half ahead is not */
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(0x800000, 0), RNIC_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(0x7fffff, 0), RNIC_PSN_OUT_OF_SEQ);
	KUNIT_EXPECT_EQ(test, rnic_psn_classify(5, 0x800005), RNIC_PSN_DUPLICATE);
}

static void aeth_syndrome(struct kunit *test)
{
	u8 s;

	/* ACK without end-to-end credits: 0b0_00_11111 */
	s = rnic_aeth_ack();
	KUNIT_EXPECT_EQ(test, s, 0x1f);
	KUNIT_EXPECT_EQ(test, rnic_aeth_type(s), RNIC_AETH_TYPE_ACK);
	KUNIT_EXPECT_EQ(test, rnic_aeth_value(s), RNIC_AETH_NO_CREDIT);

	/* RNR NAK: 0b0_01_ttttt */
	s = rnic_aeth_rnr(14);
	KUNIT_EXPECT_EQ(test, s, 0x20 | 14);
	KUNIT_EXPECT_EQ(test, rnic_aeth_type(s), RNIC_AETH_TYPE_RNR);
	KUNIT_EXPECT_EQ(test, rnic_aeth_value(s), 14);
	KUNIT_EXPECT_EQ(test, rnic_aeth_rnr(0x3f), 0x20 | 0x1f);

	/* NAK: 0b0_11_ccccc */
	s = rnic_aeth_nak(RNIC_NAK_PSN_SEQ);
	KUNIT_EXPECT_EQ(test, s, 0x60);
	KUNIT_EXPECT_EQ(test, rnic_aeth_type(s), RNIC_AETH_TYPE_NAK);
	KUNIT_EXPECT_EQ(test, rnic_aeth_nak(RNIC_NAK_INV_REQ), 0x61);
	KUNIT_EXPECT_EQ(test, rnic_aeth_nak(RNIC_NAK_REM_ACCESS), 0x62);
	KUNIT_EXPECT_EQ(test, rnic_aeth_nak(RNIC_NAK_REM_OP), 0x63);
	KUNIT_EXPECT_EQ(test, rnic_aeth_value(rnic_aeth_nak(RNIC_NAK_REM_OP)),
			RNIC_NAK_REM_OP);
	/* the reserved top bit does not change the type */
	KUNIT_EXPECT_EQ(test, rnic_aeth_type(0x80 | 0x60), RNIC_AETH_TYPE_NAK);
}

static void rnr_timer(struct kunit *test)
{
	/* IBA table 45 */
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(0), 655360);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(1), 10);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(5), 60);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(12), 640);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(14), 1280);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(18), 5120);
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(31), 491520);
	/* only five bits count */
	KUNIT_EXPECT_EQ(test, rnic_rnr_timer_us(32 + 1), 10);
}

static void nak_status(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(RNIC_NAK_PSN_SEQ),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(RNIC_NAK_INV_REQ),
			IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(RNIC_NAK_REM_ACCESS),
			IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(RNIC_NAK_REM_OP),
			IB_WC_REM_OP_ERR);
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(RNIC_NAK_INV_RD_REQ),
			IB_WC_REM_INV_RD_REQ_ERR);
	/* reserved codes: treated as a remote operational error */
	KUNIT_EXPECT_EQ(test, rnic_nak_wc_status(17), IB_WC_REM_OP_ERR);
}

static void retrans_timeout(struct kunit *test)
{
	/* 0 = infinite: no timer */
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(0), 0);
	/* 4.096 us * 2^t */
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(1), 8192ULL);
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(14), 67108864ULL);
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(18), 1073741824ULL);
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(31),
			4096ULL << 31);
	/* a 5-bit attribute */
	KUNIT_EXPECT_EQ(test, rnic_retrans_timeout_ns(32 + 14),
			67108864ULL);
}

static void segmentation(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(0, 1024), 1);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(1, 1024), 1);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(1024, 1024), 1);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(1025, 1024), 2);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(4096 * 3, 4096), 3);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(0x80000000U, 256), 0x800000);
	KUNIT_EXPECT_EQ(test, rnic_pkts_for_len(0xffffffffU, 4096), 0x100000);

	KUNIT_EXPECT_EQ(test, rnic_seg_pos(0, 1), RNIC_SEG_FIRST | RNIC_SEG_LAST);
	KUNIT_EXPECT_EQ(test, rnic_seg_pos(0, 3), RNIC_SEG_FIRST);
	KUNIT_EXPECT_EQ(test, rnic_seg_pos(1, 3), 0);
	KUNIT_EXPECT_EQ(test, rnic_seg_pos(2, 3), RNIC_SEG_LAST);
}

static void request_opcodes(struct kunit *test)
{
	const unsigned int only = RNIC_SEG_FIRST | RNIC_SEG_LAST;

	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND, only),
			IB_OPCODE_RC_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND, RNIC_SEG_FIRST),
			IB_OPCODE_RC_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND, 0),
			IB_OPCODE_RC_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND, RNIC_SEG_LAST),
			IB_OPCODE_RC_SEND_LAST);
	/* immediate data and invalidate ride on the last packet only */
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_IMM, RNIC_SEG_FIRST),
			IB_OPCODE_RC_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_IMM, RNIC_SEG_LAST),
			IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_IMM, only),
			IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_INV, only),
			IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_INV, RNIC_SEG_LAST),
			IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_SEND_WITH_INV, 0),
			IB_OPCODE_RC_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_WRITE, only),
			IB_OPCODE_RC_RDMA_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_WRITE, RNIC_SEG_FIRST),
			IB_OPCODE_RC_RDMA_WRITE_FIRST);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_WRITE, 0),
			IB_OPCODE_RC_RDMA_WRITE_MIDDLE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_WRITE_WITH_IMM,
					      RNIC_SEG_LAST),
			IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_WRITE_WITH_IMM, only),
			IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_RDMA_READ, only),
			IB_OPCODE_RC_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_ATOMIC_CMP_AND_SWP, only),
			IB_OPCODE_RC_COMPARE_SWAP);
	KUNIT_EXPECT_EQ(test, rnic_req_opcode(IB_WR_ATOMIC_FETCH_AND_ADD, only),
			IB_OPCODE_RC_FETCH_ADD);
	/* local operations send nothing */
	KUNIT_EXPECT_LT(test, rnic_req_opcode(IB_WR_REG_MR, only), 0);
	KUNIT_EXPECT_LT(test, rnic_req_opcode(IB_WR_LOCAL_INV, only), 0);

	KUNIT_EXPECT_EQ(test, rnic_read_resp_opcode(only),
			IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);
	KUNIT_EXPECT_EQ(test, rnic_read_resp_opcode(RNIC_SEG_FIRST),
			IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST);
	KUNIT_EXPECT_EQ(test, rnic_read_resp_opcode(0),
			IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE);
	KUNIT_EXPECT_EQ(test, rnic_read_resp_opcode(RNIC_SEG_LAST),
			IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST);

	/* every opcode chosen is one the header code knows, with the flags */
	KUNIT_EXPECT_TRUE(test, rnic_opcode_info(IB_OPCODE_RC_SEND_FIRST)->flags &
			  RNIC_OPF_FIRST);
	KUNIT_EXPECT_TRUE(test, rnic_opcode_info(rnic_read_resp_opcode(0))->flags &
			  RNIC_OPF_MIDDLE);
}

static void wc_opcodes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_SEND), IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_SEND_WITH_INV),
			IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_RDMA_WRITE_WITH_IMM),
			IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_RDMA_READ),
			IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_ATOMIC_CMP_AND_SWP),
			IB_WC_COMP_SWAP);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_ATOMIC_FETCH_AND_ADD),
			IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_REG_MR), IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, rnic_wr_to_wc_opcode(IB_WR_LOCAL_INV),
			IB_WC_LOCAL_INV);
}

static void udp_sport(struct kunit *test)
{
	u16 a = rnic_udp_sport(0, 17, 42), b = rnic_udp_sport(0, 42, 17);

	/* RoCE v2 source ports live in the dynamic range 0xc000..0xffff */
	KUNIT_EXPECT_GE(test, a, 0xc000);
	/* the derived flow label is symmetric in the QPN pair */
	KUNIT_EXPECT_EQ(test, a, b);
	/* a flow label wins over the QPNs */
	KUNIT_EXPECT_EQ(test, rnic_udp_sport(0x12345, 17, 42),
			rnic_udp_sport(0x12345, 99, 100));
	KUNIT_EXPECT_EQ(test, rnic_udp_sport(0x12345, 1, 2),
			rdma_flow_label_to_udp_sport(0x12345));
	/* only the 20 flow label bits count */
	KUNIT_EXPECT_EQ(test, rnic_udp_sport(0xf12345, 1, 2),
			rnic_udp_sport(0x12345, 1, 2));
	/* different QP pairs spread (not all onto one port) */
	KUNIT_EXPECT_NE(test, rnic_udp_sport(0, 2, 3), rnic_udp_sport(0, 2, 4));
}

static struct kunit_case rnic_transport_cases[] = {
	KUNIT_CASE(psn_classify),
	KUNIT_CASE(aeth_syndrome),
	KUNIT_CASE(rnr_timer),
	KUNIT_CASE(nak_status),
	KUNIT_CASE(retrans_timeout),
	KUNIT_CASE(segmentation),
	KUNIT_CASE(request_opcodes),
	KUNIT_CASE(wc_opcodes),
	KUNIT_CASE(udp_sport),
	{}
};

static struct kunit_suite rnic_transport_suite = {
	.name = "rnic_transport",
	.test_cases = rnic_transport_cases,
};

kunit_test_suite(rnic_transport_suite);
