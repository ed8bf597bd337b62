// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: running admin commands.
 *
 * Each 2.0 request is its own 64-byte struct (rnic_hw_rdma.h); it goes
 * through the common admin queue engine (rnic_aq.c) as raw bytes, and its
 * response comes back as bytes 8..15 of the completion (struct
 * rnic_acqe2). Failures are logged here once, with the opcode's name, and
 * counted, so the verbs only map the errno.
 */
#include "rnic_verbs.h"

static const char * const rnic_ib_opcode_names[] = {
	[RNIC_AQ_QUERY_RDMA_CAPS] = "QUERY_RDMA_CAPS",
	[RNIC_AQ_QUERY_RDMA_STATS] = "QUERY_RDMA_STATS",
	[RNIC_AQ_CREATE_EQ] = "CREATE_EQ",
	[RNIC_AQ_DESTROY_EQ] = "DESTROY_EQ",
	[RNIC_AQ_ALLOC_DB_PAGE] = "ALLOC_DB_PAGE",
	[RNIC_AQ_FREE_DB_PAGE] = "FREE_DB_PAGE",
	[RNIC_AQ_SET_AH_TABLE] = "SET_AH_TABLE",
	[RNIC_AQ_MODIFY_GID] = "MODIFY_GID",
	[RNIC_AQ_QUERY_GID] = "QUERY_GID",
	[RNIC_AQ_SET_PKEY] = "SET_PKEY",
	[RNIC_AQ_ALLOC_PD] = "ALLOC_PD",
	[RNIC_AQ_DEALLOC_PD] = "DEALLOC_PD",
	[RNIC_AQ_CREATE_MR] = "CREATE_MR",
	[RNIC_AQ_QUERY_MR] = "QUERY_MR",
	[RNIC_AQ_DESTROY_MR] = "DESTROY_MR",
	[RNIC_AQ_CREATE_RDMA_CQ] = "CREATE_RDMA_CQ",
	[RNIC_AQ_MODIFY_RDMA_CQ] = "MODIFY_RDMA_CQ",
	[RNIC_AQ_DESTROY_RDMA_CQ] = "DESTROY_RDMA_CQ",
	[RNIC_AQ_CREATE_SRQ] = "CREATE_SRQ",
	[RNIC_AQ_MODIFY_SRQ] = "MODIFY_SRQ",
	[RNIC_AQ_QUERY_SRQ] = "QUERY_SRQ",
	[RNIC_AQ_DESTROY_SRQ] = "DESTROY_SRQ",
	[RNIC_AQ_CREATE_QP] = "CREATE_QP",
	[RNIC_AQ_MODIFY_QP] = "MODIFY_QP",
	[RNIC_AQ_QUERY_QP] = "QUERY_QP",
	[RNIC_AQ_DESTROY_QP] = "DESTROY_QP",
};

const char *rnic_ib_opcode_str(u8 opcode)
{
	if (opcode < ARRAY_SIZE(rnic_ib_opcode_names) &&
	    rnic_ib_opcode_names[opcode])
		return rnic_ib_opcode_names[opcode];
	return "unknown";
}

/**
 * rnic_ib_cmd() - run one 2.0 admin command
 * @ibd: the device
 * @req: the request, a struct of RNIC_AQ_ENTRY_SIZE bytes whose header
 *	opcode is set; the engine fills in the command id
 * @len: sizeof the request struct
 * @resp: gets the response when the device answered (also on failure:
 *	MODIFY_QP reports the QP's state with BAD_TRANSITION), or NULL
 *
 * Context: process context; sleeps.
 * Return: 0 or the errno of the device's status (hardware.rst, "Status codes"),
 * -ETIMEDOUT or -EIO for a device that does not answer.
 */
int rnic_ib_cmd(struct rnic_ibdev *ibd, const void *req, size_t len,
		union rnic_aq_resp *resp)
{
	union rnic_aq_entry e = {};
	struct rnic_acqe comp;
	struct rnic_acqe2 *c2 = (struct rnic_acqe2 *)&comp;
	int err;

	if (WARN_ON_ONCE(len != sizeof(e)))
		return -EINVAL;
	memcpy(&e, req, len);
	err = rnic_aq_exec_comp(ibd->rdev, &e, &comp);
	if (resp)
		*resp = c2->resp;
	if (err) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cmd_failures);
		ibdev_dbg(&ibd->ibdev, "%s failed: status %u, %d\n",
			  rnic_ib_opcode_str(e.hdr.opcode), comp.status, err);
	}
	return err;
}

/**
 * rnic_ib_cmd_query() - run a query whose result the device DMA-writes
 * @ibd: the device
 * @opcode: QUERY_RDMA_CAPS, QUERY_RDMA_STATS, QUERY_GID, QUERY_MR or
 *	QUERY_QP
 * @handle: the object, or 0
 * @scope: QUERY_RDMA_STATS: enum rnic_rdma_stats_scope; else 0
 * @out: where the result is copied
 * @len: bytes wanted; a shorter result is an error
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int rnic_ib_cmd_query(struct rnic_ibdev *ibd, u8 opcode, u32 handle, u8 scope,
		      void *out, size_t len)
{
	struct rnic_aq_query_obj q = {};
	union rnic_aq_entry e;
	int err;

	q.hdr.opcode = opcode;
	q.handle = cpu_to_le32(handle);
	q.scope = scope;
	memcpy(&e, &q, sizeof(q));
	/* rnic_aq_query() fills buf_addr and buf_len, at the same offsets */
	BUILD_BUG_ON(offsetof(struct rnic_aq_query_obj, buf_addr) !=
		     offsetof(struct rnic_aq_query, buf_addr));
	BUILD_BUG_ON(offsetof(struct rnic_aq_query_obj, buf_len) !=
		     offsetof(struct rnic_aq_query, buf_len));
	err = rnic_aq_query(ibd->rdev, &e, out, len);
	if (err) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cmd_failures);
		ibdev_dbg(&ibd->ibdev, "%s %u failed: %d\n",
			  rnic_ib_opcode_str(opcode), handle, err);
	}
	return err;
}

/**
 * rnic_ib_cmd_destroy_resp() - a command that names one object:
 *	DESTROY_*, DEALLOC_PD, FREE_DB_PAGE
 * @ibd: the device
 * @opcode: the command
 * @handle: the object
 * @resp: gets the response (DESTROY_QP's names an SRQ slot it dropped),
 *	or NULL
 *
 * Return: 0 or a negative errno; a failure is logged, since the caller
 * then keeps the object's memory until the next reset.
 */
int rnic_ib_cmd_destroy_resp(struct rnic_ibdev *ibd, u8 opcode, u32 handle,
			     union rnic_aq_resp *resp)
{
	struct rnic_aq_obj c = {};
	int err;

	c.hdr.opcode = opcode;
	c.handle = cpu_to_le32(handle);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), resp);
	if (err)
		ibdev_err_ratelimited(&ibd->ibdev, "%s %#x failed: %d; its memory is kept until the device is reset\n",
				      rnic_ib_opcode_str(opcode), handle, err);
	return err;
}

/**
 * rnic_ib_cmd_destroy() - rnic_ib_cmd_destroy_resp() for a command whose
 *	response says nothing
 * @ibd: the device
 * @opcode: the command
 * @handle: the object
 *
 * Return: 0 or a negative errno, logged.
 */
int rnic_ib_cmd_destroy(struct rnic_ibdev *ibd, u8 opcode, u32 handle)
{
	return rnic_ib_cmd_destroy_resp(ibd, opcode, handle, NULL);
}
