/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic: driver-wide definitions.
 *
 * Layering: rnic_bus.c touches the BARs; rnic_aq.c runs the admin queue and
 * the reset/enable handshake; rnic_aq_cmd.c wraps each admin command;
 * rnic_eq.c owns MSI-X vector 0 (admin completions and device events);
 * rnic_ring.c allocates rings and CQs; rnic_netdev.c and rnic_ethtool.c
 * are the Ethernet side; rnic_ib_*.c are the RDMA side, which programs the
 * NIC's transport (ABI 2.0).
 */
#ifndef _RNIC_H_
#define _RNIC_H_

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>

#include "rnic_hw.h"
#include "rnic_stats.h"

#define DRV_MODULE_NAME		"rnic"

/* MSI-X vector assignment (Documentation/hardware.rst) */
#define RNIC_VEC_ADMIN		0	/* admin completions + events */
#define RNIC_VEC_ETH		1	/* Ethernet CQ (TX and RX) */
#define RNIC_MIN_VECTORS	2

#define RNIC_AQ_LOG2_DEPTH	5
#define RNIC_EQ_LOG2_DEPTH	6
#define RNIC_AQ_TIMEOUT_MS	3000
/* How long a device that announced a fatal error may take to set STATUS.FATAL */
#define RNIC_FATAL_WAIT_MS	100

struct rnic_ibdev;

/**
 * struct rnic_cq - a completion queue the device writes into
 * @va: ring of (1 << @log2_depth) struct rnic_cqe
 * @dma: its DMA address
 * @id: CQ id the device assigned
 * @log2_depth: log2 of the number of entries
 * @ci: free-running consumer index
 * @arm_seq: sequence of the last arm (each arm must change it)
 * @vector: MSI-X vector the device raises when armed
 * @created: the device knows this CQ
 */
struct rnic_cq {
	struct rnic_cqe *va;
	dma_addr_t dma;
	u16 id;
	u8 log2_depth;
	u16 ci;
	u8 arm_seq;
	u16 vector;
	bool created;
};

/**
 * struct rnic_queue - a TX or RX descriptor ring the driver produces into
 * @va: ring of (1 << @log2_depth) descriptors of @desc_size bytes
 * @dma: its DMA address
 * @type: enum rnic_queue_type
 * @id: queue id the device assigned
 * @log2_depth: log2 of the number of descriptors
 * @desc_size: RNIC_TX_DESC_SIZE or RNIC_RX_DESC_SIZE
 * @pi: free-running producer index (descriptors posted)
 * @ci: free-running consumer index (descriptors completed)
 * @created: the device knows this queue
 */
struct rnic_queue {
	void *va;
	dma_addr_t dma;
	u8 type;
	u16 id;
	u8 log2_depth;
	u8 desc_size;
	u16 pi;
	u16 ci;
	bool created;
};

/**
 * struct rnic_aq - the admin queue
 * @sq: command ring (union rnic_aq_entry)
 * @cq: completion ring (struct rnic_acqe)
 * @sq_dma: DMA address of @sq
 * @cq_dma: DMA address of @cq
 * @log2_depth: log2 of the number of entries of both rings
 * @lock: serialises commands; one is outstanding at a time
 * @pi: free-running producer index of @sq
 * @ci: free-running consumer index of @cq
 * @cmd_id: id of the outstanding command
 * @done: completed by the vector 0 handler when the completion arrives
 * @comp: the completion, copied out by the handler
 * @buf: DMA buffer for QUERY_* results, used under @lock
 * @buf_dma: its DMA address
 * @dead: the device stopped answering; fail commands at once
 */
struct rnic_aq {
	union rnic_aq_entry *sq;
	struct rnic_acqe *cq;
	dma_addr_t sq_dma;
	dma_addr_t cq_dma;
	u8 log2_depth;
	struct mutex lock;	/* one command in flight */
	spinlock_t cq_lock;	/* admin CQ consumer */
	u16 pi;
	u16 ci;
	u16 cmd_id;
	struct completion done;
	struct rnic_acqe comp;
	void *buf;
	dma_addr_t buf_dma;
	bool dead;
};

/**
 * struct rnic_eq - the device event queue
 * @va: ring of struct rnic_eqe
 * @dma: its DMA address
 * @log2_depth: log2 of the number of entries
 * @ci: free-running consumer index
 * @arm_seq: sequence of the last arm
 * @work: processes events in process context (link changes take RTNL)
 */
struct rnic_eq {
	struct rnic_eqe *va;
	dma_addr_t dma;
	u8 log2_depth;
	u16 ci;
	u8 arm_seq;
	struct work_struct work;
};

/**
 * struct rnic_event_ops - where event queue 0 delivers the events it does
 *	not handle itself; the netdev and the RDMA side are above it, so it
 *	reaches them only through this table (set by rnic_main.c)
 * @link_change: the netdev's, while @netdev_ready
 * @port_event: the ib_device's, while @ib_ready
 * @ib_event: the RDMA objects' asynchronous events; false for a type it
 *	does not know
 * @dev_dead: the device failed for good and was stopped (rnic_dev_failed()):
 *	the RDMA side completes its outstanding work in software. Any process
 *	context, also with the admin queue's lock held: it must not sleep on
 *	the device.
 */
struct rnic_dev;

struct rnic_event_ops {
	void (*link_change)(struct rnic_dev *rdev, bool up, u32 speed_mbps);
	void (*port_event)(struct rnic_dev *rdev, bool up);
	bool (*ib_event)(struct rnic_dev *rdev, const struct rnic_eqe *eqe);
	void (*dev_dead)(struct rnic_dev *rdev);
};

/**
 * struct rnic_dev - one rnic PCI function
 * @pdev: the PCI function
 * @ivshmem: BAR0, the ivshmem registers (Doorbell)
 * @shm: BAR2: signature block, register file, doorbell page
 * @shm_len: size of BAR2
 * @abi_minor: the minor of the ABI 2 the device runs (QUERY_DEVICE)
 * @caps: RNIC_CAP_* the device offers
 * @num_msix: MSI-X vectors the device may raise
 * @num_irqs: MSI-X vectors the driver got
 * @max_frame: largest frame the device moves, VLAN tag and ICRC included
 * @speed_mbps: port speed
 * @mac: permanent MAC address
 * @model_version: the device's version string
 * @max_queues: queue ids the device has
 * @max_cqs: CQ ids the device has
 * @max_ring_log2: largest ring depth
 * @max_cq_log2: largest CQ depth
 * @aq: admin queue
 * @eq: event queue
 * @link_up: last link state the device reported
 * @fatal: the device reported a fatal error; nothing more is sent to it
 * @stopped: the device performs no DMA: it is fatal, or was reset and has
 *	not been enabled since (rnic_dev_stop()); what it was given may be freed
 * @event_ops: the handlers above event queue 0
 * @netdev_ready: @netdev is registered; events may be delivered to it
 * @ib_ready: @ibd's ib_device is registered; events may be delivered to it
 * @netdev: the Ethernet side
 * @ibd: the RDMA side (rnic_ib_dev.c; NULL until registered)
 * @stats: driver counters (enum rnic_drv_stat), atomic
 */
struct rnic_dev {
	struct pci_dev *pdev;
	void __iomem *ivshmem;
	void __iomem *shm;
	resource_size_t shm_len;

	u16 abi_minor;
	u32 caps;
	u16 num_msix;
	int num_irqs;
	u32 max_frame;
	u32 speed_mbps;
	u8 mac[ETH_ALEN];
	char model_version[RNIC_MODEL_VERSION_LEN];
	u16 max_queues;
	u16 max_cqs;
	u8 max_ring_log2;
	u8 max_cq_log2;

	struct rnic_aq aq;
	struct rnic_eq eq;
	bool link_up;
	bool fatal;
	bool stopped;
	const struct rnic_event_ops *event_ops;
	bool netdev_ready;
	bool ib_ready;

	struct net_device *netdev;
	struct rnic_ibdev *ibd;

	atomic64_t stats[RNIC_NUM_DRV_STATS];
};

static inline void rnic_stat_inc(struct rnic_dev *rdev, enum rnic_drv_stat s)
{
	atomic64_inc(&rdev->stats[s]);
}

#define rnic_dbg(rdev, fmt, ...) dev_dbg(&(rdev)->pdev->dev, fmt, ##__VA_ARGS__)
#define rnic_info(rdev, fmt, ...) dev_info(&(rdev)->pdev->dev, fmt, ##__VA_ARGS__)
#define rnic_warn(rdev, fmt, ...) dev_warn(&(rdev)->pdev->dev, fmt, ##__VA_ARGS__)
#define rnic_err(rdev, fmt, ...) dev_err(&(rdev)->pdev->dev, fmt, ##__VA_ARGS__)
#define rnic_err_ratelimited(rdev, fmt, ...) \
	dev_err_ratelimited(&(rdev)->pdev->dev, fmt, ##__VA_ARGS__)

/* rnic_bus.c: the only code that touches BAR0/BAR2 directly */
u32 rnic_reg_read(struct rnic_dev *rdev, u32 off);
void rnic_reg_write(struct rnic_dev *rdev, u32 off, u32 val);
void rnic_kick(struct rnic_dev *rdev, enum rnic_db_vector vec);
void rnic_doorbell(struct rnic_dev *rdev, u32 slot_off, u32 val,
		   enum rnic_db_vector vec);

/* rnic_aq.c */
int rnic_dev_reset(struct rnic_dev *rdev);
int rnic_aq_init(struct rnic_dev *rdev);
void rnic_aq_destroy(struct rnic_dev *rdev);
int rnic_dev_enable(struct rnic_dev *rdev);
bool rnic_dev_stop(struct rnic_dev *rdev);
bool rnic_dma_may_free(int err, bool releases, bool stopped);
void rnic_dev_failed(struct rnic_dev *rdev);
int rnic_aq_exec(struct rnic_dev *rdev, union rnic_aq_entry *cmd, u32 *result);
int rnic_aq_exec_comp(struct rnic_dev *rdev, union rnic_aq_entry *cmd,
		      struct rnic_acqe *comp);
int rnic_aq_query(struct rnic_dev *rdev, union rnic_aq_entry *cmd, void *out,
		  size_t len);
void rnic_aq_process(struct rnic_dev *rdev);

/* rnic_aq_cmd.c: one wrapper per admin command; 0 or a negative errno */
int rnic_cmd_query_device(struct rnic_dev *rdev, struct rnic_device_attr *attr);
int rnic_cmd_query_port(struct rnic_dev *rdev, struct rnic_port_attr *attr);
int rnic_cmd_set_port(struct rnic_dev *rdev, struct rnic_aq_set_port *cmd);
int rnic_cmd_create_cq(struct rnic_dev *rdev, dma_addr_t ring, u8 log2_depth,
		       u16 vector, u16 *id);
int rnic_cmd_destroy_cq(struct rnic_dev *rdev, u16 id);
int rnic_cmd_create_queue(struct rnic_dev *rdev, enum rnic_queue_type type,
			  dma_addr_t ring, u8 log2_depth, u16 cq_id,
			  u32 rx_buf_size, u8 tx_prio, u16 *id);
int rnic_cmd_destroy_queue(struct rnic_dev *rdev, u16 id);
int rnic_cmd_query_stats(struct rnic_dev *rdev, enum rnic_stats_scope scope,
			 u16 id, u64 *vals, unsigned int n);

/* rnic_eq.c */
int rnic_irq_init(struct rnic_dev *rdev);
void rnic_irq_destroy(struct rnic_dev *rdev);
int rnic_eq_init(struct rnic_dev *rdev);
void rnic_eq_start(struct rnic_dev *rdev);
void rnic_eq_destroy(struct rnic_dev *rdev);
int rnic_irq_vector(struct rnic_dev *rdev, unsigned int vec);

/* rnic_ring.c */
int rnic_cq_create(struct rnic_dev *rdev, struct rnic_cq *cq, u8 log2_depth,
		   u16 vector);
void rnic_cq_destroy(struct rnic_dev *rdev, struct rnic_cq *cq);
struct rnic_cqe *rnic_cq_peek(struct rnic_cq *cq);
void rnic_cq_pop(struct rnic_cq *cq);
void rnic_cq_arm(struct rnic_dev *rdev, struct rnic_cq *cq);
void rnic_cq_update_ci(struct rnic_dev *rdev, struct rnic_cq *cq);
int rnic_queue_create(struct rnic_dev *rdev, struct rnic_queue *q,
		      enum rnic_queue_type type, u8 log2_depth,
		      struct rnic_cq *cq, u32 rx_buf_size, u8 tx_prio);
void rnic_queue_destroy(struct rnic_dev *rdev, struct rnic_queue *q);
void rnic_queue_ring(struct rnic_dev *rdev, struct rnic_queue *q);

static inline u32 rnic_queue_depth(const struct rnic_queue *q)
{
	return 1U << q->log2_depth;
}

static inline void *rnic_queue_slot(const struct rnic_queue *q, u16 idx)
{
	return q->va + (size_t)(idx & (rnic_queue_depth(q) - 1)) * q->desc_size;
}

/* descriptors the driver may still post */
static inline u32 rnic_queue_free(const struct rnic_queue *q)
{
	return rnic_queue_depth(q) - rnic_ring_used(q->pi, q->ci);
}

/* rnic_netdev.c */
int rnic_netdev_init(struct rnic_dev *rdev,
		     const struct ethtool_ops *ethtool_ops);
void rnic_netdev_destroy(struct rnic_dev *rdev);
void rnic_netdev_link_change(struct rnic_dev *rdev, bool up, u32 speed_mbps);

/* For rnic_ethtool.c: the netdev's private state stays in rnic_netdev.c */
struct rnic_dev *rnic_netdev_rdev(struct net_device *netdev);
u32 rnic_netdev_ring_size(struct net_device *netdev);
void rnic_netdev_ring_stats(struct net_device *netdev, u64 *vals);

/* rnic_ethtool.c */
extern const struct ethtool_ops rnic_ethtool_ops;

/* rnic_ib_dev.c: the RDMA side; the NIC runs the transport (ABI 2.0) */
int rnic_ib_register(struct rnic_dev *rdev);
void rnic_ib_unregister(struct rnic_dev *rdev);
void rnic_ib_free(struct rnic_dev *rdev);
void rnic_ib_port_event(struct rnic_dev *rdev, bool up);
bool rnic_ib_event(struct rnic_dev *rdev, const struct rnic_eqe *eqe);
void rnic_ib_dev_dead(struct rnic_dev *rdev);

#endif /* _RNIC_H_ */
