// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: the verbs that are kernel commands and little else: device and
 * port queries, PDs, MRs, AHs, and SRQ creation (the SRQ's posting is in
 * rnic_post.c). MRs are the kernel's (ib_umem and the device's page
 * lists); an AH is an index into the device's AH table, which a UD WQE
 * names, so the create response carries it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnic.h"
#include "rnic_abi.h"
#include "rnic_wqe.h"

int rnic_query_device(struct ibv_context *ibctx,
		      const struct ibv_query_device_ex_input *input,
		      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err)
		return err;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * @attr may be libibverbs 44.0's 52-byte struct: the command fills it
 * field by field, and nothing here writes past it (rnic.h asserts the
 * size the provider was built with).
 */
int rnic_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *rnic_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct rnic_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return &pd->ibv_pd;
}

int rnic_dealloc_pd(struct ibv_pd *ibpd)
{
	int err = ibv_cmd_dealloc_pd(ibpd);

	if (!err)
		free(container_of(ibpd, struct rnic_pd, ibv_pd));
	return err;
}

struct ibv_mr *rnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int rnic_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* The kernel resolves the destination MAC (ib_resolve_eth_dmac) itself */
struct ibv_ah *rnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rnic_create_ah_resp resp;
	struct rnic_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	/* index 0 is never an AH: a UD WQE naming it is malformed */
	if (!resp.ah) {
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		free(ah);
		errno = EPROTO;
		return NULL;
	}
	ah->idx = resp.ah;
	return &ah->ibv_ah;
}

int rnic_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(to_rah(ibah));
	return err;
}

/* ------------------------------------------------------------------------
 * SRQ: a WQE array and an index ring in the process's memory
 * (hardware-rdma.rst, "SRQ"); slots are given out by the provider and
 * come back with their CQE.
 */

static void rnic_srq_free_mem(struct rnic_srq *srq)
{
	rnic_ring_free(srq->wqes, srq->wqes_bytes);
	rnic_ring_free(srq->idx, srq->idx_bytes);
	free(srq->wrid);
	free(srq->len);
	free(srq->busy);
	free(srq->free);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

struct ibv_srq *rnic_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *init)
{
	struct rnic_context *ctx = to_rctx(pd->context);
	struct ibv_srq_attr *a = &init->attr;
	struct rnic_create_srq_resp resp;
	struct rnic_create_srq cmd;
	struct rnic_srq *srq;
	uint32_t depth, i;
	int err = EINVAL;

	if (!a->max_wr || a->max_wr > ctx->lim.max_srq_wr ||
	    a->max_sge > ctx->lim.max_srq_sge || a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->log2_depth = rnic_depth_log2(a->max_wr, 2);
	srq->rqe_log2 = rnic_rqe_log2(a->max_sge);
	if (srq->rqe_log2 > ctx->max_rqe_log2 ||
	    srq->log2_depth > RNIC_MAX_RING_LOG2)
		goto err_free;
	depth = 1U << srq->log2_depth;
	srq->max_sge = rnic_rqe_max_sge(srq->rqe_log2);
	if (srq->max_sge > ctx->lim.max_srq_sge)
		srq->max_sge = ctx->lim.max_srq_sge;

	err = ENOMEM;
	srq->wqes = rnic_ring_alloc(ctx, (size_t)depth << srq->rqe_log2,
				    &srq->wqes_bytes);
	srq->idx = rnic_ring_alloc(ctx, depth * sizeof(*srq->idx),
				   &srq->idx_bytes);
	srq->wrid = calloc(depth, sizeof(*srq->wrid));
	srq->len = calloc(depth, sizeof(*srq->len));
	srq->busy = calloc(depth, sizeof(*srq->busy));
	srq->free = calloc(depth, sizeof(*srq->free));
	if (!srq->wqes || !srq->idx || !srq->wrid || !srq->len ||
	    !srq->busy || !srq->free)
		goto err_free;
	/* lowest slot first: pushed in reverse */
	for (i = 0; i < depth; i++)
		srq->free[i] = depth - 1 - i;
	srq->nfree = depth;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.wqe_va = (uintptr_t)srq->wqes;
	cmd.idx_va = (uintptr_t)srq->idx;
	cmd.log2_depth = srq->log2_depth;
	cmd.rqe_log2 = srq->rqe_log2;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, init, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_free;
	srq->srqn = resp.srqn;
	srq->db_off = resp.db_off;
	if (!rnic_db_off_ok(srq->db_off)) {
		err = EPROTO;
		goto err_destroy;
	}
	srq->dbp = rnic_dbp_get(ctx, resp.db_key);
	if (!srq->dbp) {
		err = errno;
		goto err_destroy;
	}
	/* what the SRQ holds, as verbs want it reported back */
	a->max_wr = depth;
	a->max_sge = srq->max_sge;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	rnic_srq_free_mem(srq);
	errno = err;
	return NULL;
}

/* Only the limit: the rings cannot grow (IBV_SRQ_MAX_WR is refused) */
int rnic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct ibv_modify_srq cmd;

	if (mask & ~IBV_SRQ_LIMIT)
		return EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

int rnic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct rnic_srq *srq = to_rsrq(ibsrq);
	struct ibv_query_srq cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (err)
		return err;
	attr->max_wr = 1U << srq->log2_depth;
	attr->max_sge = srq->max_sge;
	return 0;
}

/* After DESTROY_SRQ the device touches neither the slots nor the index ring */
int rnic_destroy_srq(struct ibv_srq *ibsrq)
{
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (err)
		return err;
	rnic_srq_free_mem(to_rsrq(ibsrq));
	return 0;
}
