// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic port counters for `rdma statistic show`: the transport's own
 * counters (rnic_roce.h, RNIC_ROCE_STATS) followed by the device's port
 * counters (rnic_hw.h, RNIC_PORT_STATS) read with QUERY_STATS, prefixed
 * "hw_" to tell the wire's view from the transport's.
 */
#include <rdma/ib_verbs.h>

#include "rnic.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

#define RNIC_ROCE_STAT_DESC(n)		{ .name = #n },
#define RNIC_PORT_STAT_DESC(n)		{ .name = "hw_" #n },

static const struct rdma_stat_desc rnic_hw_stat_descs[] = {
	RNIC_ROCE_STATS(RNIC_ROCE_STAT_DESC)
	RNIC_PORT_STATS(RNIC_PORT_STAT_DESC)
};

#define RNIC_NUM_HW_STATS	(RNIC_NUM_ROCE_STATS + RNIC_NUM_PORT_STATS)
static_assert(ARRAY_SIZE(rnic_hw_stat_descs) == RNIC_NUM_HW_STATS);

struct rdma_hw_stats *rnic_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num)
{
	return rdma_alloc_hw_stats_struct(rnic_hw_stat_descs,
					  RNIC_NUM_HW_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * rnic_get_hw_stats() - refresh the port's counters
 * @ibdev: the ib_device
 * @stats: from rnic_alloc_hw_port_stats()
 * @port_num: the port
 * @index: the counter asked for (all are refreshed)
 *
 * Context: process context (QUERY_STATS sleeps). If the device does not
 * answer, its counters keep their last values.
 *
 * Return: the number of counters.
 */
int rnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port_num, int index)
{
	struct rnic_dev *rdev = to_rdev(ibdev);

	rnic_roce_stats_read(rdev, stats->value);
	if (rnic_cmd_query_stats(rdev, RNIC_STATS_SCOPE_PORT, 0,
				 stats->value + RNIC_NUM_ROCE_STATS,
				 RNIC_NUM_PORT_STATS))
		rnic_stat_inc(rdev, RNIC_DRV_STAT_port_stats_failed);
	return RNIC_NUM_HW_STATS;
}
