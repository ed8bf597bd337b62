/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim device model internals, shared by the dev_*.c files.
 *
 * dev_core.c	create/reset, signature block, register file, doorbell
 *		dispatch, link, timer, counter dump
 * dev_base.c	BAR2 access, port defaults, TX work to the scheduler
 * dev_admin.c	admin queue and its commands
 * dev_queue.c	CQ/EQ entry posting, arming, doorbell slot checks, errors
 * dev_tx.c	Ethernet TX rings: descriptor parsing, gather, offloads, wire
 * dev_rx.c	RX path: classification, VLAN strip, Ethernet RX delivery
 * dev_pfc.c	802.1Qbb pause honour and emission
 * ../rdma/	the RDMA engine: objects, doorbell pages, WQs, CQs (rdma.h)
 *
 * All state lives in struct rdev; the platform calls in from one thread.
 *
 * The files are layered, so that none calls a file that calls it back:
 * dev_base.c calls no other; dev_queue.c and dev_pfc.c call only it;
 * dev_admin.c, dev_tx.c and dev_rx.c call those; dev_core.c dispatches
 * to them (dev_tx.c gets its turns from the engine's packet scheduler,
 * rdev_tx_round()). The engine is reached through struct rdev_engine.
 */
#ifndef RNICSIM_DEV_PRIV_H
#define RNICSIM_DEV_PRIV_H

#include <rnic_compat.h>
#include <rnic_hw.h>

#include "pci/device.h"
#include "platform/platform.h"

#define RDEV_MAX_QUEUES		64
#define RDEV_MAX_CQS		64
#define RDEV_MAX_RING_LOG2	12
#define RDEV_MAX_CQ_LOG2	14
#define RDEV_MAX_FRAME		9018
#define RDEV_SPEED_MBPS		10000
#define RDEV_MODEL_VERSION	"rnicsim 2.0"

/* TX gather buffer: the largest frame plus room for a tag and the ICRC */
#define RDEV_TXBUF_SIZE		(RDEV_MAX_FRAME + 64)

#define RDEV_NO_QUEUE		(-1)
#define RDEV_NUM_PRIO		8

struct rdev_cq {
	bool used;
	bool error;
	u64 base;
	unsigned int log2;
	u16 produced;		/* free-running */
	unsigned int vector;
	bool armed;
	int last_arm_seq;	/* -1: never armed */
	unsigned int refs;	/* queues completing here */
};

struct rdev_queue {
	bool used;
	bool error;
	u8 type;		/* enum rnic_queue_type */
	u64 base;
	unsigned int log2;
	u16 cons;		/* next descriptor to process */
	u16 cq;
	u32 rx_buf_size;
	u8 tx_prio;
	u64 stats[RNIC_NUM_QUEUE_STATS];
};

struct rdev_eq {
	u64 base;
	unsigned int log2;
	u16 produced;
	bool armed;
	int last_arm_seq;
};

struct rdev_port {
	u16 mtu;
	u16 udp_port;
	u8 mac[6];
	u32 flags;		/* RNIC_PORT_F_* */
	u8 pfc_prio;
	u16 xoff_quanta;	/* 0: RNIC_PFC_DEFAULT_QUANTA */
	u16 low_wm;
	u16 high_wm;
};

struct rdev_pfc {
	/* honour: TX priorities paused by the link partner */
	u8 paused;
	u64 pause_start[RDEV_NUM_PRIO];
	u64 pause_end[RDEV_NUM_PRIO];
	/* emission: XOFF asserted for the no-drop priority */
	bool xoff;
	u64 xoff_sent_ns;
};

struct rdma_dev;
struct pkt_info;

/*
 * The RDMA engine as the PCI function sees it: the PCI function calls
 * it only through this table (rdev_config.engine, filled in by
 * rdma/rdma_core.c), never by name, so that pci/ does not depend on
 * rdma/. Every call but enable is harmless while the engine has no
 * state (d->rdma NULL).
 */
struct rdev_engine {
	int (*enable)(struct rdev *d);		/* 0 or -ENOMEM */
	void (*reset)(struct rdev *d);		/* frees all its state */
	void (*pump)(struct rdev *d);		/* queued RX frames, send work */
	u64 (*tick)(struct rdev *d, u64 now);	/* its next deadline */
	/* An admin command of the engine (opcode >= 0x20): its status */
	u8 (*admin)(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
	void (*kick)(struct rdev *d);		/* doorbell vector 3 */
	void (*eq_doorbell)(struct rdev *d);	/* vector 2: completion EQs */
	void (*pfc_resume)(struct rdev *d);	/* a priority unpaused */
	/* A classified RoCE frame, into the receive buffer */
	void (*rx_frame)(struct rdev *d, const u8 *frame, size_t len,
			 const struct pkt_info *info);
	/* A frame the classifier found malformed: counted per RoCE version */
	void (*rx_malformed)(struct rdev *d, const u8 *frame, size_t len);
	void (*dump_counters)(struct rdev *d,
			      void (*out)(void *ctx, const char *line),
			      void *ctx);
	/* The Ethernet TX rings have work: they take turns with the QPs */
	void (*eth_tx)(struct rdev *d);
	/* Whether a header template carries the RoCE UDP port */
	bool (*port_in_use)(struct rdev *d);
	/* The receive buffer: free entries of @depth */
	void (*rx_room)(struct rdev *d, unsigned int *free,
			unsigned int *depth);
};

struct rdev {
	struct plat *p;
	struct rdev_config cfg;
	const struct rdev_engine *engine;	/* cfg.engine */
	u8 *bar2;
	size_t bar2_len;
	u32 caps;		/* as advertised */
	/* false: no ABI served (--signature-abi, CAP_TRANSPORT hidden) */
	bool serves_abi2;
	struct rdma_dev *rdma;	/* the RDMA engine: exactly while enabled */

	bool enabled;
	bool fatal;
	u32 fatal_reason;	/* what FATAL_REASON was set to, if fatal */
	bool link_up;
	bool rx_hold;		/* rdev_rx_hold(): survives resets */
	bool tx_hold;		/* rdev_tx_hold(): survives resets */
	bool aq_hold;		/* rdev_aq_hold(): a reset clears it */
	u64 fatal_events;	/* rdev_fatal() calls that took: not reset */
	bool no_arm_peek;	/* rdev_set_arm_peek(): survives resets */
	u64 arm_peeks_skipped;	/* arms it left unfired: not reset */

	u64 aq_sq;
	u64 aq_cq;
	unsigned int aq_log2;
	u16 aq_head;

	struct rdev_eq eq;
	struct rdev_port port;
	struct rdev_cq cqs[RDEV_MAX_CQS];
	struct rdev_queue queues[RDEV_MAX_QUEUES];
	int eth_rx;		/* queue id or RDEV_NO_QUEUE */
	struct rdev_pfc pfc;

	u64 ctr[RNIC_NUM_PORT_STATS];
	u64 next_heartbeat;

	u8 txbuf[RDEV_TXBUF_SIZE];
};

#define RDEV_INC(d, name)	((d)->ctr[RNIC_PORT_STAT_##name]++)
#define RDEV_ADD(d, name, n)	((d)->ctr[RNIC_PORT_STAT_##name] += (n))

/* dev_base.c: BAR2 access (all registers and slots are le32) */
u32 rdev_bar_read(struct rdev *d, unsigned int off);
u16 rdev_bar_read16(struct rdev *d, unsigned int off);
void rdev_bar_write(struct rdev *d, unsigned int off, u32 val);
void rdev_port_defaults(struct rdev *d);
void rdev_tx_all(struct rdev *d);

/* dev_queue.c */
int rdev_post_entry(struct rdev *d, u64 gpa, const void *entry, size_t size);
void rdev_event(struct rdev *d, u8 type, u8 reason, u8 obj, u32 data,
		u64 info);
void rdev_device_error(struct rdev *d, u8 reason, u64 info);
void rdev_queue_error(struct rdev *d, unsigned int qid, u8 reason,
		      u64 info);
void rdev_cq_error(struct rdev *d, unsigned int cqid, u8 reason, u64 info);
int rdev_cq_post(struct rdev *d, unsigned int cqid, struct rnic_cqe *cqe);
int rdev_ring_pi(struct rdev *d, unsigned int qid, u16 *pi);
bool rdev_queue_usable(struct rdev *d, int qid);
void rdev_event_doorbell(struct rdev *d);
u32 rdev_link_word(struct rdev *d);

/* dev_admin.c */
void rdev_admin_doorbell(struct rdev *d);

/* dev_tx.c */
bool rdev_tx_round(struct rdev *d);

/* dev_rx.c */
void rdev_rx_frame(struct rdev *d, const u8 *frame, size_t len);

/* dev_pfc.c */
bool rdev_pfc_active(struct rdev *d);
bool rdev_pfc_paused(struct rdev *d, unsigned int prio, u64 now);
/*
 * The same two with the clock read only when it matters (a priority
 * paused, PFC on): the datapath calls them per packet.
 */
bool rdev_pfc_paused_now(struct rdev *d, unsigned int prio);
void rdev_pfc_check_now(struct rdev *d);
void rdev_pfc_rx(struct rdev *d, const u8 *frame, size_t len);
void rdev_pfc_check(struct rdev *d, u64 now);
void rdev_pfc_release(struct rdev *d);
u64 rdev_pfc_tick(struct rdev *d, u64 now);

#endif /* RNICSIM_DEV_PRIV_H */
