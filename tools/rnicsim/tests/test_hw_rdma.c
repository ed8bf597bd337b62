// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 contract (include/rnic_hw_rdma.h): byte offsets that
 * Documentation/hardware-rdma.rst states, mask round trips and the pure
 * helpers. Nothing implements 2.0 yet; these pin the layout so that the
 * driver and the model, when they do, agree with the prose.
 */
#include <stddef.h>
#include <string.h>

#include <rnic_compat.h>
#include <rnic_hw.h>

#include "test.h"

TEST(hw_rdma_signature_and_ctrl)
{
	CHECK_EQ(offsetof(struct rnic_sig, abi_compat), 40);
	CHECK_EQ(offsetof(struct rnic_sig, model_version), 64);
	CHECK(!(RNIC_CAP_ALL & RNIC_CAP_TRANSPORT));
	CHECK(!(RNIC_CTRL_ALL & RNIC_CTRL_ABI));
	CHECK_EQ(FIELD_GET(RNIC_CTRL_ABI,
			   RNIC_CTRL_ENABLE | FIELD_PREP(RNIC_CTRL_ABI, 2)), 2);
	CHECK_EQ(FIELD_PREP(RNIC_STATUS_ABI, RNIC_ABI2_MAJOR) |
		 RNIC_STATUS_ENABLED, 0x22);

	/* a 1.0 model, a 2.0 model serving both, a 2.0-only model */
	CHECK(rnic_sig_serves(RNIC_SIG_MAGIC, 1, 0, 1));
	CHECK(!rnic_sig_serves(RNIC_SIG_MAGIC, 1, 0, 2));
	CHECK(rnic_sig_serves(RNIC_SIG_MAGIC, 2, BIT(1) | BIT(2), 1));
	CHECK(rnic_sig_serves(RNIC_SIG_MAGIC, 2, BIT(1) | BIT(2), 2));
	CHECK(!rnic_sig_serves(RNIC_SIG_MAGIC, 2, BIT(2), 1));
	CHECK(!rnic_sig_serves(0x12345678, 2, BIT(2), 2));
	CHECK(!rnic_sig_serves(RNIC_SIG_MAGIC, 2, 0xffff, 16));
	CHECK(!rnic_sig_serves(RNIC_SIG_MAGIC, 0, 0xffff, 0));
}

TEST(hw_rdma_admin_layout)
{
	CHECK_EQ(offsetof(struct rnic_aq_obj, handle), 8);
	CHECK_EQ(offsetof(struct rnic_aq_query_obj, handle), 20);
	CHECK_EQ(offsetof(struct rnic_aq_query_obj, scope), 24);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, pdn), 12);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, db_page), 28);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, sq_addr), 32);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, rq_addr), 40);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, sq_log2_depth), 48);
	CHECK_EQ(offsetof(struct rnic_aq_create_qp, rq_log2_depth), 52);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, path_addr), 16);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, state), 40);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, timeout), 44);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, max_rd_atomic), 48);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, pkey_index), 50);
	CHECK_EQ(offsetof(struct rnic_aq_modify_qp, sqd_notify), 52);
	CHECK_EQ(offsetof(struct rnic_aq_create_mr, pdn), 12);
	CHECK_EQ(offsetof(struct rnic_aq_create_mr, iova), 16);
	CHECK_EQ(offsetof(struct rnic_aq_create_mr, npages), 40);
	CHECK_EQ(offsetof(struct rnic_aq_create_rdma_cq, log2_depth), 24);
	CHECK_EQ(offsetof(struct rnic_aq_create_srq, idx_addr), 24);
	CHECK_EQ(offsetof(struct rnic_aq_create_srq, limit), 36);
	CHECK_EQ(offsetof(struct rnic_aq_modify_gid, entry.gid), 16);
	CHECK_EQ(offsetof(struct rnic_rdma_caps, db_base), 56);
	CHECK_EQ(offsetof(struct rnic_rdma_caps, max_inline), 70);
	CHECK_EQ(offsetof(struct rnic_rdma_caps, rx_fifo_frames), 90);
	/* no tail padding: every byte of the result is a named field */
	CHECK_EQ(offsetof(struct rnic_rdma_caps, reserved) +
		 sizeof(((struct rnic_rdma_caps *)0)->reserved), 128);
	CHECK_EQ(offsetof(struct rnic_qp_query, unacked_psn), 36);

	/* every 2.0 request fits one 1.0 SQ entry of the union */
	CHECK_EQ(sizeof(union rnic_aq_entry), sizeof(struct rnic_aq_modify_qp));
}

TEST(hw_rdma_acqe_view)
{
	struct rnic_acqe c1 = {
		.status = RNIC_AQ_SUCCESS,
		.flags = RNIC_ACQE_F_PHASE,
		.cmd_id = cpu_to_le16(7),
		.result = cpu_to_le32(0x123456),
		.reserved1 = cpu_to_le32(0x00400100),
	};
	struct rnic_acqe2 c2;

	/* the same 16 bytes read as the CREATE_QP response */
	memcpy(&c2, &c1, sizeof(c2));
	CHECK_EQ(c2.flags, RNIC_ACQE_F_PHASE);
	CHECK_EQ(le16_to_cpu(c2.cmd_id), 7);
	CHECK_EQ(le32_to_cpu(c2.resp.create_qp.qpn), 0x123456);
	CHECK_EQ(le16_to_cpu(c2.resp.create_qp.sq_db_off), 0x100);
	CHECK_EQ(le16_to_cpu(c2.resp.create_qp.rq_db_off), 0x40);
	CHECK_EQ(le32_to_cpu(c2.resp.db_page.kick), 0x00400100);
	/* MODIFY_QP and DESTROY_QP: state 0x56, SRQ slot 0x1234 dropped */
	c1.result = cpu_to_le32(0x12340156);
	memcpy(&c2, &c1, sizeof(c2));
	CHECK_EQ(c2.resp.modify_qp.state, 0x56);
	CHECK_EQ(c2.resp.modify_qp.flags, RNIC_AQ_QP_F_SRQ_DROPPED);
	CHECK_EQ(le16_to_cpu(c2.resp.modify_qp.srq_slot), 0x1234);
	CHECK_EQ(c2.resp.destroy_qp.flags, RNIC_AQ_QP_F_SRQ_DROPPED);
	CHECK_EQ(le16_to_cpu(c2.resp.destroy_qp.srq_slot), 0x1234);
	CHECK_EQ(le32_to_cpu(c2.resp.modify_qp.reserved1), 0x00400100);
}

TEST(hw_rdma_wqe_layout)
{
	union {
		struct rnic_sqe sqe;
		u8 raw[1 << RNIC_SQE_LOG2_MAX];
	} w;

	CHECK_EQ(offsetof(struct rnic_sqe_ctrl, length), 4);
	CHECK_EQ(offsetof(struct rnic_sqe_ctrl, key), 8);
	CHECK_EQ(offsetof(struct rnic_sqe, seg), 16);
	CHECK_EQ(offsetof(struct rnic_sqe, sge), 48);
	CHECK_EQ(offsetof(struct rnic_sqe_atomic, swap), 24);
	CHECK_EQ(offsetof(struct rnic_sqe_ud, pkey_index), 12);
	CHECK_EQ(offsetof(struct rnic_sqe_reg_mr, npages), 24);
	CHECK_EQ(offsetof(struct rnic_sqe_reg_mr, access), 27);
	CHECK_EQ(offsetof(struct rnic_rqe, sge), 16);
	CHECK_EQ(offsetof(struct rnic_data_sge, lkey), 12);

	/* the immediate travels as wire bytes, the key as a little-endian word */
	memset(&w, 0, sizeof(w));
	w.sqe.ctrl.imm_data = cpu_to_be32(0x01020304);
	CHECK_MEM_EQ(w.raw + 8, "\x01\x02\x03\x04", 4);
	w.sqe.ctrl.key = cpu_to_le32(0x01020304);
	CHECK_MEM_EQ(w.raw + 8, "\x04\x03\x02\x01", 4);

	/* the 29th SGE ends the largest WQE exactly */
	CHECK_EQ(rnic_sqe_max_sge(RNIC_SQE_LOG2_MAX), 29);
	CHECK_EQ((u8 *)&w.sqe.sge[29] - w.raw, sizeof(w.raw));
	CHECK_EQ(rnic_sqe_max_sge(RNIC_SQE_LOG2_MIN), 1);
	CHECK_EQ(rnic_sqe_max_inline(RNIC_SQE_LOG2_MAX), 464);
	CHECK_EQ(rnic_sqe_max_inline(RNIC_SQE_LOG2_MIN), 16);
	CHECK_EQ(rnic_rqe_max_sge(RNIC_RQE_LOG2_MIN), 1);
	CHECK_EQ(rnic_rqe_max_sge(RNIC_RQE_LOG2_MAX), 31);
}

TEST(hw_rdma_cqe_layout)
{
	struct rnic_rdma_cqe c;
	u32 src;

	CHECK_EQ(offsetof(struct rnic_rdma_cqe, qpn), 4);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, wqe_idx), 8);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, byte_len), 12);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, imm_data), 16);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, src), 20);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, smac), 24);
	CHECK_EQ(offsetof(struct rnic_rdma_cqe, vlan_tci), 30);

	src = FIELD_PREP(RNIC_RCQE_SRC_QP, 0xabcdef) |
	      FIELD_PREP(RNIC_RCQE_NET, RNIC_RX_CLASS_ROCE_V2_IPV6);
	CHECK_EQ(FIELD_GET(RNIC_RCQE_SRC_QP, src), 0xabcdef);
	CHECK_EQ(FIELD_GET(RNIC_RCQE_NET, src), RNIC_RX_CLASS_ROCE_V2_IPV6);

	memset(&c, 0, sizeof(c));
	CHECK_EQ(rnic_rdma_cqe_phase(&c), 0);
	c.flags = RNIC_RCQE_F_PHASE | RNIC_RCQE_F_GRH;
	CHECK_EQ(rnic_rdma_cqe_phase(&c), 1);
	/* receive opcodes never collide with send WQE opcodes */
	CHECK(!(RNIC_SQE_OP_REG_MR & RNIC_CQE_OP_RECV_BIT));
	CHECK(RNIC_CQE_OP_RECV_WRITE_IMM & RNIC_CQE_OP_RECV_BIT);
}

TEST(hw_rdma_doorbell_page)
{
	u32 v;

	CHECK_EQ(offsetof(struct rnic_db_page, kick), 0x800);
	CHECK_EQ(offsetof(struct rnic_db_page, kick_pi), 0xc00);
	CHECK_EQ(offsetof(struct rnic_db_page, kick_ci), 0xc40);
	CHECK_EQ(RNIC_DB_EQ_SLOT(0), RNIC_DB_SLOT_EQ);
	CHECK(RNIC_DB_EQ_SLOT(RNIC_MAX_EQS) < RNIC_DB_SLOT_QUEUE_BASE);
	CHECK(RNIC_DBP_BASE_DEFAULT + RNIC_DBP_SIZE <= RNIC_SHM_MIN_SIZE_ABI2);

	v = rnic_db_rdma_cq(0x1234, true, true, 9);
	CHECK_EQ(FIELD_GET(RNIC_DB_CQ_CI, v), 0x1234);
	CHECK_EQ(FIELD_GET(RNIC_DB_CQ_ARM_SEQ, v), 9);
	CHECK(v & RNIC_DB_CQ_ARM);
	CHECK(v & RNIC_DB_CQ_SOLICITED);
	/* solicited means nothing without an arm */
	CHECK_EQ(rnic_db_rdma_cq(5, false, true, 0), 5);
}

TEST(hw_rdma_keys_and_templates)
{
	u32 key = rnic_key_build(0x00abcd, 0x7f);

	CHECK_EQ(key, 0x00abcd7f);
	CHECK_EQ(FIELD_GET(RNIC_KEY_INDEX, key), 0xabcd);
	CHECK_EQ(FIELD_GET(RNIC_KEY_VARIANT, key), 0x7f);

	CHECK_EQ(RNIC_AH_PER_PAGE, 32);
	CHECK_EQ(offsetof(struct rnic_hdr_tmpl, hdr), 16);
	CHECK_EQ(rnic_tmpl_hdr_len(RNIC_RX_CLASS_ROCE_V1, false), 54);
	CHECK_EQ(rnic_tmpl_hdr_len(RNIC_RX_CLASS_ROCE_V2_IPV4, true), 46);
	CHECK_EQ(rnic_tmpl_hdr_len(RNIC_RX_CLASS_ROCE_V2_IPV6, true), 66);
	CHECK_EQ(rnic_tmpl_hdr_len(RNIC_RX_CLASS_ETH, false), 0);
	CHECK(rnic_tmpl_hdr_len(RNIC_RX_CLASS_ROCE_V2_IPV6, true) <=
	      RNIC_TMPL_HDR_MAX);
	CHECK_EQ(FIELD_PREP(RNIC_TMPL_NET, RNIC_RX_CLASS_ROCE_V2_IPV6), 3);
}

TEST(hw_rdma_transport_helpers)
{
	CHECK_EQ(rnic_pmtu_bytes(RNIC_PMTU_256), 256);
	CHECK_EQ(rnic_pmtu_bytes(RNIC_PMTU_1024), 1024);
	CHECK_EQ(rnic_pmtu_bytes(RNIC_PMTU_4096), 4096);
	CHECK_EQ(rnic_pmtu_bytes(0), 0);
	CHECK_EQ(rnic_pmtu_bytes(6), 0);

	CHECK_EQ(rnic_ack_timeout_ns(0), 0);
	CHECK_EQ(rnic_ack_timeout_ns(1), 8192);
	/* rdma_cm's usual 14: about 67 ms */
	CHECK_EQ(rnic_ack_timeout_ns(14), 67108864);
	CHECK_EQ(rnic_ack_timeout_ns(32), 0);

	CHECK_EQ(rnic_rnr_delay_us(0), 655360);
	CHECK_EQ(rnic_rnr_delay_us(1), 10);
	CHECK_EQ(rnic_rnr_delay_us(12), 640);
	CHECK_EQ(rnic_rnr_delay_us(31), 491520);
	CHECK_EQ(rnic_rnr_delay_us(32), 0);
}
