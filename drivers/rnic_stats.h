/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic driver-side counters, declared once (the device's own are in
 * rnic_hw.h). ethtool -S shows them after the device's counters.
 */
#ifndef _RNIC_STATS_H_
#define _RNIC_STATS_H_

#define RNIC_DRV_STATS(op)			\
	op(aq_cmds)				\
	op(aq_errors)				\
	op(aq_timeouts)				\
	op(events)				\
	op(link_events)				\
	op(device_errors)			\
	op(queue_errors)			\
	op(unknown_events)			\
	op(tx_dropped)				\
	op(tx_busy)				\
	op(rx_alloc_failed)			\
	op(rx_bad_cqe)				\
	op(tx_bad_cqe)

#define RNIC_DRV_STAT_ENUM(name)	RNIC_DRV_STAT_##name,
enum rnic_drv_stat {
	RNIC_DRV_STATS(RNIC_DRV_STAT_ENUM)
	RNIC_NUM_DRV_STATS
};

#endif /* _RNIC_STATS_H_ */
