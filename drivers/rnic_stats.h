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
	op(tx_bad_cqe)				\
	op(port_stats_failed)

#define RNIC_DRV_STAT_ENUM(name)	RNIC_DRV_STAT_##name,
enum rnic_drv_stat {
	RNIC_DRV_STATS(RNIC_DRV_STAT_ENUM)
	RNIC_NUM_DRV_STATS
};

/* Per-ring netdev counters, shown by ethtool -S after the driver's. */
#define RNIC_RING_STATS(op)			\
	op(tx, packets)				\
	op(tx, bytes)				\
	op(tx, errors)				\
	op(tx, dropped)				\
	op(tx, stopped)				\
	op(tx, woken)				\
	op(rx, packets)				\
	op(rx, bytes)				\
	op(rx, errors)				\
	op(rx, dropped)				\
	op(rx, too_long)

#define RNIC_RING_STAT_ENUM(dir, name)	RNIC_RING_STAT_##dir##_##name,
enum rnic_ring_stat {
	RNIC_RING_STATS(RNIC_RING_STAT_ENUM)
	RNIC_NUM_RING_STATS
};

/*
 * ABI 2.0 driver counters (rnic_ib_*.c): rdma statistic show lists them
 * before the device's transport counters (hw_*).
 */
#define RNIC_IB_STATS(op)			\
	op(bad_cqes)				\
	op(cqe_unknown_qp)			\
	op(bad_eqes)				\
	op(eq_unknown_cq)			\
	op(bad_srq_drops)			\
	op(async_events)			\
	op(async_unknown_obj)			\
	op(qp_err_by_driver)			\
	op(cmd_failures)			\
	op(deferred_frees)			\
	op(cqes_scrubbed)			\
	op(local_invs)				\
	op(remote_invs)				\
	op(uctx_refused)			\
	op(kicks_skipped)			\
	op(recv_slot_only)			\
	op(cq_moderations)

#define RNIC_IB_STAT_ENUM(name)	RNIC_IB_STAT_##name,
enum rnic_ib_stat {
	RNIC_IB_STATS(RNIC_IB_STAT_ENUM)
	RNIC_IB_NUM_STATS
};

/*
 * The device's port counters (RNIC_PORT_STATS) that rdma statistic shows
 * on ABI 2.0, with the hw_ prefix: RoCE's and PFC's (rnic_ib_dev.c).
 */
#define RNIC_IB_PORT_STATS(op)			\
	op(tx_roce_v1_frames)			\
	op(tx_roce_v1_bytes)			\
	op(tx_roce_v2_frames)			\
	op(tx_roce_v2_bytes)			\
	op(rx_roce_v1_frames)			\
	op(rx_roce_v1_bytes)			\
	op(rx_roce_v2_frames)			\
	op(rx_roce_v2_bytes)			\
	op(rx_pause)				\
	op(tx_pause)				\
	op(tx_paused_ns)

#endif /* _RNIC_STATS_H_ */
