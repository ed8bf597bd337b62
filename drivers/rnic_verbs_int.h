/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic verbs layer internals, shared by rnic_verbs.c (objects, state
 * machine, flushing) and rnic_post.c (posting). The transport never
 * includes this; its contract is rnic_verbs.h.
 */
#ifndef _RNIC_VERBS_INT_H_
#define _RNIC_VERBS_INT_H_

#include <rdma/ib_verbs.h>

struct rnic_dev;
struct rnic_qp;

/* QPNs are 24 bits */
#define RNIC_QPN_MAX		0xffffff

/* IB_ACCESS_* a QP may grant its peers */
#define RNIC_QP_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

enum ib_mtu rnic_port_mtu(struct rnic_dev *rdev);

/* Flush with IB_WC_WR_FLUSH_ERR: the SQ with sq_lock held; the RQ alone */
void rnic_flush_sq_locked(struct rnic_qp *qp);
void rnic_flush_rq(struct rnic_qp *qp);

#endif /* _RNIC_VERBS_INT_H_ */
