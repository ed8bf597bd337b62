// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: unit test of the pure encoders and decoders (rnic_wqe.c),
 * against the byte layout of include/rnic_hw_rdma.h. Linked with
 * rnic_wqe.o alone, no libibverbs and no device; run by
 * scripts/rdma-core.sh after every build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnic_wqe.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
		failures++;						\
	}								\
} while (0)

static const struct rnic_sq_attr rc_sq = {
	.qp_type = IBV_QPT_RC, .sqe_log2 = 7, .max_sge = 5, .max_inline = 80,
	.sig_all = false, .atomics = true,
};

static void test_sizes(void)
{
	/* hardware-rdma.rst: 64 B hold 1 SGE or 16 inline bytes, 512 B 29 or 464 */
	CHECK(rnic_sqe_log2(1, 0) == 6);
	CHECK(rnic_sqe_log2(0, 16) == 6);
	CHECK(rnic_sqe_log2(2, 0) == 7);
	CHECK(rnic_sqe_log2(5, 80) == 7);
	CHECK(rnic_sqe_log2(29, 0) == 9);
	CHECK(rnic_sqe_log2(0, 464) == 9);
	CHECK(rnic_sqe_log2(30, 0) > RNIC_SQE_LOG2_MAX);
	CHECK(rnic_rqe_log2(0) == 5 && rnic_rqe_log2(1) == 5);
	CHECK(rnic_rqe_log2(2) == 6 && rnic_rqe_log2(31) == 9);
	CHECK(rnic_depth_log2(1, 2) == 2 && rnic_depth_log2(5, 2) == 3);
	CHECK(rnic_depth_log2(1024, 2) == 10 && rnic_depth_log2(1025, 2) == 11);
}

static void test_send_sge(void)
{
	uint8_t wqe[128];
	struct ibv_sge sg[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 0x1234 },
		{ .addr = 0x2000, .length = 28, .lkey = 0x5678 },
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = sg, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
		.imm_data = htobe32(0xdeadbeef),
	};
	struct rnic_sqe *sqe = (struct rnic_sqe *)wqe;

	wr.wr.rdma.remote_addr = 0x123456789abcULL;
	wr.wr.rdma.rkey = 0xabcd;
	memset(wqe, 0xa5, sizeof(wqe));
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == 0);
	CHECK(sqe->ctrl.opcode == RNIC_SQE_OP_WRITE_IMM);
	CHECK(sqe->ctrl.flags == (RNIC_SQE_F_SIGNALED | RNIC_SQE_F_SOLICITED));
	CHECK(sqe->ctrl.num_sge == 2);
	CHECK(le32toh(sqe->ctrl.length) == 128);
	CHECK(sqe->ctrl.imm_data == htobe32(0xdeadbeef));
	CHECK(le64toh(sqe->seg.rdma.remote_addr) == 0x123456789abcULL);
	CHECK(le32toh(sqe->seg.rdma.rkey) == 0xabcd);
	CHECK(le64toh(sqe->sge[1].addr) == 0x2000);
	CHECK(le32toh(sqe->sge[1].len) == 28 && le32toh(sqe->sge[1].lkey) == 0x5678);
	/* reserved bytes and the unused tail are zero */
	CHECK(wqe[3] == 0 && wqe[127] == 0 && sqe->ctrl.reserved1 == 0);

	/* more SGEs than the WQE holds: refused, slot untouched */
	memset(wqe, 0xa5, sizeof(wqe));
	wr.num_sge = 6;
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == EINVAL);
	CHECK(wqe[0] == 0xa5 && wqe[127] == 0xa5);
	/* not an opcode for users */
	wr.num_sge = 1;
	wr.opcode = IBV_WR_LOCAL_INV;
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_IP_CSUM;
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == EINVAL);
}

static void test_send_inline_ud(void)
{
	struct rnic_sq_attr ud = rc_sq;
	char a[] = "hello, ", b[] = "rnic";
	struct ibv_sge sg[2] = {
		{ .addr = (uintptr_t)a, .length = 7 },
		{ .addr = (uintptr_t)b, .length = 4 },
	};
	struct ibv_send_wr wr = {
		.sg_list = sg, .num_sge = 2, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE,
	};
	uint8_t wqe[128];
	struct rnic_sqe *sqe = (struct rnic_sqe *)wqe;

	ud.qp_type = IBV_QPT_UD;
	ud.sig_all = true;
	wr.wr.ud.remote_qpn = 0x12345;
	wr.wr.ud.remote_qkey = 0x11111111;
	CHECK(rnic_sqe_build(wqe, &ud, &wr, 9) == 0);
	CHECK(sqe->ctrl.opcode == RNIC_SQE_OP_SEND);
	CHECK(sqe->ctrl.flags == (RNIC_SQE_F_SIGNALED | RNIC_SQE_F_INLINE));
	CHECK(sqe->ctrl.num_sge == 0 && le32toh(sqe->ctrl.length) == 11);
	CHECK(!memcmp(sqe->sge, "hello, rnic", 11));
	CHECK(le32toh(sqe->seg.ud.ah) == 9);
	CHECK(le32toh(sqe->seg.ud.remote_qpn) == 0x12345);
	CHECK(le32toh(sqe->seg.ud.remote_qkey) == 0x11111111);
	/* AH index 0 is malformed; RDMA WRITE is not a UD opcode */
	CHECK(rnic_sqe_build(wqe, &ud, &wr, 0) == EINVAL);
	wr.opcode = IBV_WR_RDMA_WRITE;
	CHECK(rnic_sqe_build(wqe, &ud, &wr, 9) == EINVAL);
	/* inline beyond what the QP was granted */
	ud.max_inline = 10;
	wr.opcode = IBV_WR_SEND;
	CHECK(rnic_sqe_build(wqe, &ud, &wr, 9) == EINVAL);
}

static void test_atomic(void)
{
	struct ibv_sge sg = { .addr = 0x3000, .length = 8, .lkey = 1 };
	struct ibv_send_wr wr = {
		.sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	struct rnic_sq_attr noatom = rc_sq;
	uint8_t wqe[128];
	struct rnic_sqe *sqe = (struct rnic_sqe *)wqe;

	wr.wr.atomic.remote_addr = 0x8000;
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 2;
	wr.wr.atomic.rkey = 3;
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == 0);
	CHECK(le64toh(sqe->seg.atomic.swap) == 2 &&
	      le64toh(sqe->seg.atomic.compare_add) == 1);
	wr.wr.atomic.remote_addr = 0x8004;
	CHECK(rnic_sqe_build(wqe, &rc_sq, &wr, 0) == EINVAL);
	noatom.atomics = false;
	wr.wr.atomic.remote_addr = 0x8000;
	CHECK(rnic_sqe_build(wqe, &noatom, &wr, 0) == EOPNOTSUPP);
}

static void test_recv(void)
{
	struct ibv_sge sg[2] = {
		{ .addr = 0x1000, .length = 4096, .lkey = 7 },
		{ .addr = 0x9000, .length = 40, .lkey = 8 },
	};
	struct ibv_recv_wr wr = { .sg_list = sg, .num_sge = 2 };
	uint8_t wqe[64];
	struct rnic_rqe *rqe = (struct rnic_rqe *)wqe;

	CHECK(rnic_rqe_build(wqe, 6, 3, &wr) == 0);
	CHECK(rqe->num_sge == 2 && le32toh(rqe->sge[1].lkey) == 8);
	CHECK(rnic_recv_len(&wr) == 4136);
	CHECK(rnic_rqe_build(wqe, 5, 3, &wr) == EINVAL);	/* 32 B: 1 SGE */
	CHECK(rnic_rqe_build(wqe, 6, 1, &wr) == EINVAL);	/* granted 1 */
}

static void test_cqe(void)
{
	struct rnic_rdma_cqe cqe;
	struct ibv_wc wc;

	/* a send */
	memset(&cqe, 0, sizeof(cqe));
	cqe.flags = RNIC_RCQE_F_PHASE;
	cqe.opcode = RNIC_SQE_OP_READ;
	cqe.qpn = htole32(0x42);
	cqe.byte_len = htole32(512);
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == 0);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
	      wc.byte_len == 512 && wc.wc_flags == 0);
	/* a send CQE with receive flags is not well-formed */
	cqe.flags |= RNIC_RCQE_F_IMM;
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == -EIO);

	/* a UD receive: 40 header bytes counted, sender, immediate */
	memset(&cqe, 0, sizeof(cqe));
	cqe.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_GRH | RNIC_RCQE_F_IMM;
	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.qpn = htole32(0x42);
	cqe.byte_len = htole32(100);
	cqe.imm_data = htobe32(0x01020304);
	cqe.src = htole32(FIELD_PREP(RNIC_RCQE_SRC_QP, 0x777) |
			  FIELD_PREP(RNIC_RCQE_NET, RNIC_RX_CLASS_ROCE_V2_IPV4));
	cqe.pkey_index = htole16(0);
	CHECK(rnic_cqe_to_wc(&cqe, true, 140, &wc) == 0);
	CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 140);
	CHECK(wc.src_qp == 0x777);
	CHECK(wc.wc_flags == (IBV_WC_GRH | IBV_WC_WITH_IMM));
	CHECK(wc.imm_data == htobe32(0x01020304));
	/* longer than the WQE offered */
	CHECK(rnic_cqe_to_wc(&cqe, true, 139, &wc) == -EIO);
	/* UD without GRH, or an unknown network type */
	cqe.flags &= ~RNIC_RCQE_F_GRH;
	CHECK(rnic_cqe_to_wc(&cqe, true, 140, &wc) == -EIO);
	cqe.flags |= RNIC_RCQE_F_GRH;
	cqe.src = htole32(0x777);
	CHECK(rnic_cqe_to_wc(&cqe, true, 140, &wc) == -EIO);

	/* RC WRITE_IMM receive: bytes went to an MR, not the WQE */
	memset(&cqe, 0, sizeof(cqe));
	cqe.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_IMM;
	cqe.opcode = RNIC_CQE_OP_RECV_WRITE_IMM;
	cqe.byte_len = htole32(65536);
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == 0);
	CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.byte_len == 65536);

	/* errors: a flush; an unknown status is a general error, not a drop */
	memset(&cqe, 0, sizeof(cqe));
	cqe.opcode = RNIC_CQE_OP_RECV;
	cqe.status = RNIC_WC_WR_FLUSH_ERR;
	CHECK(rnic_cqe_to_wc(&cqe, true, 0, &wc) == 0);
	CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.opcode == IBV_WC_RECV);
	cqe.status = 200;
	cqe.syndrome = 5;
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == 0);
	CHECK(wc.status == IBV_WC_GENERAL_ERR && wc.vendor_err == 5);
	/* an opcode users never post, a QPN wider than 24 bits */
	cqe.opcode = RNIC_SQE_OP_REG_MR;
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == -EIO);
	cqe.opcode = RNIC_SQE_OP_SEND;
	cqe.qpn = htole32(0x1000000);
	CHECK(rnic_cqe_to_wc(&cqe, false, 0, &wc) == -EIO);
}

static void test_indices(void)
{
	/* a send CQE retires unsignaled WQEs before it; indices wrap at 2^16 */
	CHECK(rnic_cqe_sq_retire(10, 14, 10) == 1);
	CHECK(rnic_cqe_sq_retire(10, 14, 13) == 4);
	CHECK(rnic_cqe_sq_retire(10, 14, 14) < 0);
	CHECK(rnic_cqe_sq_retire(10, 14, 9) < 0);
	CHECK(rnic_cqe_sq_retire(65534, 2, 1) == 4);
	CHECK(rnic_cqe_sq_retire(5, 5, 5) < 0);
	CHECK(rnic_cqe_rq_check(3, 4, 3) == 0);
	CHECK(rnic_cqe_rq_check(3, 3, 3) < 0);
	CHECK(rnic_cqe_rq_check(3, 5, 4) < 0);
	/* the CQ slot word and the ring phase */
	CHECK(rnic_db_rdma_cq(0x1234, true, true, 7) ==
	      (0x1234 | (7 << 16) | RNIC_DB_CQ_SOLICITED | RNIC_DB_CQ_ARM));
	CHECK(rnic_db_rdma_cq(0x1234, false, true, 7) == (0x1234 | (7 << 16)));
	CHECK(rnic_ring_phase(0, 4) == 1 && rnic_ring_phase(16, 4) == 0 &&
	      rnic_ring_phase(32, 4) == 1);
}

int main(void)
{
	test_sizes();
	test_send_sge();
	test_send_inline_ud();
	test_atomic();
	test_recv();
	test_cqe();
	test_indices();
	if (failures) {
		fprintf(stderr, "rnic_unit_test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("rnic_unit_test: all checks passed\n");
	return 0;
}
