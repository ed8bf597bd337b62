// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Typed wrappers around the admin commands (Documentation/hardware.rst,
 * "Admin queue"). Each builds one command, runs it through rnic_aq_exec()
 * and returns 0 or a negative errno.
 */
#include "rnic.h"

int rnic_cmd_query_device(struct rnic_dev *rdev, struct rnic_device_attr *attr)
{
	union rnic_aq_entry cmd = {};

	cmd.hdr.opcode = RNIC_AQ_QUERY_DEVICE;
	return rnic_aq_query(rdev, &cmd, attr, sizeof(*attr));
}

int rnic_cmd_query_port(struct rnic_dev *rdev, struct rnic_port_attr *attr)
{
	union rnic_aq_entry cmd = {};

	cmd.hdr.opcode = RNIC_AQ_QUERY_PORT;
	return rnic_aq_query(rdev, &cmd, attr, sizeof(*attr));
}

/**
 * rnic_cmd_set_port() - apply port settings
 * @rdev: the device
 * @cmd: the caller fills valid, flags and the fields it flags valid; the
 *	header is filled in here
 *
 * Return: 0 or a negative errno.
 */
int rnic_cmd_set_port(struct rnic_dev *rdev, struct rnic_aq_set_port *cmd)
{
	union rnic_aq_entry e = { .set_port = *cmd };

	e.hdr.opcode = RNIC_AQ_SET_PORT;
	return rnic_aq_exec(rdev, &e, NULL);
}

int rnic_cmd_create_cq(struct rnic_dev *rdev, dma_addr_t ring, u8 log2_depth,
		       u16 vector, u16 *id)
{
	union rnic_aq_entry cmd = {};
	u32 res;
	int err;

	cmd.hdr.opcode = RNIC_AQ_CREATE_CQ;
	cmd.create_cq.ring_addr = cpu_to_le64(ring);
	cmd.create_cq.log2_depth = log2_depth;
	cmd.create_cq.msix_vector = cpu_to_le16(vector);
	err = rnic_aq_exec(rdev, &cmd, &res);
	if (err)
		return err;
	if (res >= rdev->max_cqs) {
		rnic_err(rdev, "device returned CQ id %u, beyond its %u CQs\n",
			 res, rdev->max_cqs);
		return -EPROTO;
	}
	*id = res;
	return 0;
}

int rnic_cmd_destroy_cq(struct rnic_dev *rdev, u16 id)
{
	union rnic_aq_entry cmd = {};

	cmd.hdr.opcode = RNIC_AQ_DESTROY_CQ;
	cmd.destroy.id = cpu_to_le16(id);
	return rnic_aq_exec(rdev, &cmd, NULL);
}

int rnic_cmd_create_queue(struct rnic_dev *rdev, enum rnic_queue_type type,
			  dma_addr_t ring, u8 log2_depth, u16 cq_id,
			  u32 rx_buf_size, u8 tx_prio, u16 *id)
{
	union rnic_aq_entry cmd = {};
	u32 res;
	int err;

	cmd.hdr.opcode = RNIC_AQ_CREATE_QUEUE;
	cmd.create_queue.ring_addr = cpu_to_le64(ring);
	cmd.create_queue.type = type;
	cmd.create_queue.log2_depth = log2_depth;
	cmd.create_queue.cq_id = cpu_to_le16(cq_id);
	cmd.create_queue.rx_buf_size = cpu_to_le32(rx_buf_size);
	cmd.create_queue.tx_prio = tx_prio;
	err = rnic_aq_exec(rdev, &cmd, &res);
	if (err)
		return err;
	if (res >= rdev->max_queues) {
		rnic_err(rdev, "device returned queue id %u, beyond its %u queues\n",
			 res, rdev->max_queues);
		return -EPROTO;
	}
	*id = res;
	return 0;
}

int rnic_cmd_destroy_queue(struct rnic_dev *rdev, u16 id)
{
	union rnic_aq_entry cmd = {};

	cmd.hdr.opcode = RNIC_AQ_DESTROY_QUEUE;
	cmd.destroy.id = cpu_to_le16(id);
	return rnic_aq_exec(rdev, &cmd, NULL);
}

/**
 * rnic_cmd_query_stats() - read device counters
 * @rdev: the device
 * @scope: RNIC_STATS_SCOPE_PORT or RNIC_STATS_SCOPE_QUEUE
 * @id: queue id for RNIC_STATS_SCOPE_QUEUE, else 0
 * @vals: where to store @n counters in the order of the contract's list
 * @n: RNIC_NUM_PORT_STATS or RNIC_NUM_QUEUE_STATS
 *
 * Return: 0 or a negative errno.
 */
int rnic_cmd_query_stats(struct rnic_dev *rdev, enum rnic_stats_scope scope,
			 u16 id, u64 *vals, unsigned int n)
{
	union rnic_aq_entry cmd = {};
	__le64 *raw;
	unsigned int i;
	int err;

	raw = kcalloc(n, sizeof(*raw), GFP_KERNEL);
	if (!raw)
		return -ENOMEM;
	cmd.hdr.opcode = RNIC_AQ_QUERY_STATS;
	cmd.query.scope = scope;
	cmd.query.id = cpu_to_le16(id);
	err = rnic_aq_query(rdev, &cmd, raw, n * sizeof(*raw));
	if (!err)
		for (i = 0; i < n; i++)
			vals[i] = le64_to_cpu(raw[i]);
	kfree(raw);
	return err;
}
