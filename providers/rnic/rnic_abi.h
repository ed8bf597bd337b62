/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librnic: the uverbs commands with rnic's udata (include/uapi/rdma/
 * rnic-abi.h). kernel-abi/rnic-abi.h is generated from that header at
 * build time by rdma-core's make_abi_structs.py (scripts/rdma-core.sh),
 * as rdma-core does for its in-tree providers.
 */
#ifndef RNIC_PROVIDER_ABI_H
#define RNIC_PROVIDER_ABI_H

#include <infiniband/kern-abi.h>
#include <rdma/rnic-abi.h>
#include <kernel-abi/rnic-abi.h>

DECLARE_DRV_CMD(rnic_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, rnic_ualloc_ctx_resp);
DECLARE_DRV_CMD(rnic_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		rnic_ucreate_cq, rnic_ucreate_cq_resp);
DECLARE_DRV_CMD(rnic_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		rnic_ucreate_qp, rnic_ucreate_qp_resp);
DECLARE_DRV_CMD(rnic_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		rnic_ucreate_srq, rnic_ucreate_srq_resp);
DECLARE_DRV_CMD(rnic_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, rnic_ucreate_ah_resp);
DECLARE_DRV_CMD(rnic_modify_qp_ex, IB_USER_VERBS_EX_CMD_MODIFY_QP,
		empty, rnic_umodify_qp_resp);

#endif /* RNIC_PROVIDER_ABI_H */
