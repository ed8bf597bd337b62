/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ABI 2.0 work queue entries and completions (Documentation/hardware-rdma.rst,
 * "Work queue entries (2.0)" and "Completion entries"): encoding verbs
 * work requests into send and receive WQEs (rnic_ib_wqe.c), and decoding
 * the device's CQEs into work completions (rnic_ib_cqe.c).
 *
 * Pure functions: the caller resolves the objects a WR names (AH index,
 * MR page list) and the state of its queues, so these need no locks, no
 * device and no ib_device, and KUnit drives every opcode and status.
 */
#ifndef _RNIC_IB_WQE_H_
#define _RNIC_IB_WQE_H_

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "rnic_hw.h"

/* Bytes a UD receive buffer starts with: the network header (GRH) area */
#define RNIC_IB_UD_GRH_LEN		40

/**
 * struct rnic_ib_sq_attr - what a send WQE is checked against
 * @qp_type: IB_QPT_RC, IB_QPT_UD or IB_QPT_GSI
 * @sqe_log2: log2 of the SQ's WQE size, RNIC_SQE_LOG2_MIN .. _MAX
 * @max_send_sge: rnic_rdma_caps.max_send_sge
 * @max_inline: rnic_rdma_caps.max_inline
 * @pkey_tbl_len: rnic_rdma_caps.pkey_tbl_len (GSI sends name an entry)
 * @privileged: the QP's PD is a kernel PD (REG_MR needs one)
 * @sig_all: the QP was created with IB_SIGNAL_ALL_WR
 * @caps: rnic_rdma_caps.flags, RNIC_RDMA_CAP_*
 * @max_msg_size: rnic_rdma_caps.max_msg_size
 * @page_size_cap: rnic_rdma_caps.page_size_cap
 */
struct rnic_ib_sq_attr {
	enum ib_qp_type qp_type;
	u8 sqe_log2;
	u8 max_send_sge;
	u16 max_inline;
	u16 pkey_tbl_len;
	bool privileged;
	bool sig_all;
	u32 caps;
	u32 max_msg_size;
	u64 page_size_cap;
};

/**
 * struct rnic_ib_wr_res - what the driver resolved from a WR's objects
 * @ah_idx: UD and GSI: the AH table index of ud_wr(wr)->ah
 * @pbl_addr: REG_MR: DMA address of the MR's page list
 * @npages: REG_MR: entries ib_map_mr_sg() wrote to that list
 * @max_npages: REG_MR: the MR's npages at CREATE_MR (ib_alloc_mr()'s
 *	max_num_sg)
 */
struct rnic_ib_wr_res {
	u32 ah_idx;
	u64 pbl_addr;
	u32 npages;
	u32 max_npages;
};

int rnic_ib_mr_access(int ib_access);
u8 rnic_ib_sqe_log2(u32 max_sge, u32 max_inline);
u8 rnic_ib_rqe_log2(u32 max_sge);
int rnic_ib_sqe_build(void *wqe, const struct rnic_ib_sq_attr *sq,
		      const struct ib_send_wr *wr,
		      const struct rnic_ib_wr_res *res);
int rnic_ib_rqe_build(void *wqe, unsigned int rqe_log2,
		      unsigned int max_sge, const struct ib_recv_wr *wr);

enum ib_wc_status rnic_ib_wc_status(u8 status);
int rnic_ib_cqe_to_wc(const struct rnic_rdma_cqe *cqe, bool ud, u32 recv_len,
		      struct ib_wc *wc);
int rnic_ib_cqe_sq_retire(u16 ci, u16 pi, u16 wqe_idx);
int rnic_ib_cqe_rq_check(u16 ci, u16 pi, u16 wqe_idx);
int rnic_ib_cqe_srq_check(u16 slot, u32 depth, const unsigned long *busy);
int rnic_ib_cqe_qp_check(const struct rnic_rdma_cqe *cqe, u32 cqn,
			 u32 send_cqn, u32 recv_cqn);
int rnic_ib_wq_flush(u16 *ci, u16 pi, const u64 *wrid, u32 mask, bool recv,
		     struct ib_qp *qp, struct ib_wc *wc, int num);
/*
 * The QPN rnic_ib_cqe_scrub() gives a CQE it drops: outside the 24-bit QPN
 * the device writes (its upper bits are reserved, written as zero).
 */
#define RNIC_IB_CQE_QPN_SCRUBBED	0xffffffffU
unsigned int rnic_ib_cqe_scrub(struct rnic_rdma_cqe *ring, u8 log2_depth,
			       u16 ci, u32 qpn, unsigned long *srq_busy,
			       u32 srq_depth);
/* The CQN rnic_ib_eqe_scrub() gives an EQ entry it drops: not a 24-bit CQN */
#define RNIC_IB_EQE_CQN_SCRUBBED	0xffffffffU
unsigned int rnic_ib_eqe_scrub(struct rnic_eqe *ring, u8 log2_depth, u16 ci,
			       u32 cqn);

#endif /* _RNIC_IB_WQE_H_ */
