/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ABI 2.0 QP attributes (Documentation/hardware-rdma.rst, "QP", "MODIFY_QP",
 * "QUERY_QP"): verbs modify_qp requests to MODIFY_QP commands, QUERY_QP
 * results to verbs attributes, and the enum mappings between the two.
 *
 * Pure functions: the caller holds the QP's state lock, builds the path
 * template (rnic_ib_tmpl.h) and issues the command.
 */
#ifndef _RNIC_IB_QP_ATTR_H_
#define _RNIC_IB_QP_ATTR_H_

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "rnic_hw.h"

/**
 * struct rnic_ib_qp_limits - what a modify_qp request is checked against
 * @port_mtu: the largest path MTU allowed now: the port's active MTU,
 *	at most rnic_rdma_caps.max_pmtu
 * @max_qp_rd_atom: rnic_rdma_caps.max_qp_rd_atom
 * @max_qp_dest_rd_atom: rnic_rdma_caps.max_qp_dest_rd_atom
 * @pkey_tbl_len: rnic_rdma_caps.pkey_tbl_len
 * @privileged: the QP's PD is a kernel PD: it may set a controlled Q_Key
 */
struct rnic_ib_qp_limits {
	enum ib_mtu port_mtu;
	u8 max_qp_rd_atom;
	u8 max_qp_dest_rd_atom;
	u16 pkey_tbl_len;
	bool privileged;
};

int rnic_ib_qp_type(enum ib_qp_type type);
int rnic_ib_qp_state(enum ib_qp_state state);
int rnic_ib_qp_state_to_ib(u8 state, enum ib_qp_state *ib_state);
int rnic_ib_pmtu(enum ib_mtu mtu);
int rnic_ib_pmtu_to_ib(u8 pmtu, enum ib_mtu *mtu);
int rnic_ib_qp_access(int ib_access);
int rnic_ib_qp_access_to_ib(u8 access);

int rnic_ib_modify_qp_cmd(struct rnic_aq_modify_qp *cmd, u32 qpn,
			  enum ib_qp_type type, enum ib_qp_state cur,
			  const struct ib_qp_attr *attr, int mask,
			  u64 path_addr, const struct rnic_ib_qp_limits *lim);
int rnic_ib_query_qp_attr(const struct rnic_qp_query *q, enum ib_qp_type type,
			  struct ib_qp_attr *attr);

#endif /* _RNIC_IB_QP_ATTR_H_ */
