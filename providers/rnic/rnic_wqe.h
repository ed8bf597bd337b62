/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librnic: work requests to WQEs and CQEs to work completions. Pure
 * functions of their arguments (rnic_wqe.c): no device, no libibverbs
 * calls, so the unit test (rnic_unit_test.c) links them alone.
 *
 * The WQE builders return 0 or a positive errno, the verbs' convention,
 * which post_send and post_recv pass on; the CQE checks return 0 or a
 * negative errno, an internal verdict that never reaches the caller.
 */
#ifndef RNIC_PROVIDER_WQE_H
#define RNIC_PROVIDER_WQE_H

#include "rnic_hw_compat.h"

#include <infiniband/verbs.h>

/* The device's largest message (rnic_rdma_caps.max_msg_size is 2^31) */
#define RNIC_MAX_MSG_SIZE	(1U << 31)

/*
 * Deepest ring: indices are free-running 16 bits (slots, wqe_idx, CI), and
 * the phase of a CQ entry follows bit log2_depth of a 16-bit index.
 */
#define RNIC_MAX_RING_LOG2	15

/* A UD receive buffer starts with this much network header (hardware-rdma.rst) */
#define RNIC_UD_GRH_LEN		40

/* What a send WQE encoder needs to know about its queue */
struct rnic_sq_attr {
	enum ibv_qp_type qp_type;
	uint8_t sqe_log2;
	uint32_t max_sge;		/* granted at create */
	uint32_t max_inline;		/* granted at create */
	bool sig_all;			/* IBV_QPT_* sq_sig_all */
	bool atomics;			/* the device has atomics */
};

uint8_t rnic_sqe_log2(uint32_t max_sge, uint32_t max_inline);
uint8_t rnic_rqe_log2(uint32_t max_sge);
uint8_t rnic_depth_log2(uint32_t entries, uint8_t min_log2);

int rnic_sqe_build(void *wqe, const struct rnic_sq_attr *sq,
		   const struct ibv_send_wr *wr, uint32_t ah_idx);
int rnic_rqe_build(void *wqe, unsigned int rqe_log2, uint32_t max_sge,
		   const struct ibv_recv_wr *wr);
uint32_t rnic_recv_len(const struct ibv_recv_wr *wr);

int rnic_cqe_to_wc(const struct rnic_rdma_cqe *cqe, bool ud,
		   uint32_t recv_len, struct ibv_wc *wc);
int rnic_cqe_sq_retire(uint16_t ci, uint16_t pi, uint16_t wqe_idx);
int rnic_cqe_rq_check(uint16_t ci, uint16_t pi, uint16_t wqe_idx);

#endif /* RNIC_PROVIDER_WQE_H */
