/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic verbs objects and the contract between the verbs layer and the
 * transport engines.
 *
 * The device moves frames; the driver runs the IB transport. Objects here
 * are software objects: rnic_verbs.c and rnic_mr.c create, modify and
 * destroy them and queue work requests; rnic_roce.c (the RoCE rings),
 * rnic_ud.c, rnic_rc_req.c, rnic_rc_resp.c and rnic_rc_comp.c move the
 * work. The calls each side may make on the other are declared at the end.
 *
 * Locking: qp->sq_lock protects the send queue and the requester and
 * completer state; qp->rq_lock the receive queue (or srq->lock); responder
 * state is only touched from the RoCE RX NAPI context and the QP's
 * transport work, serialised by qp->resp_lock. cq->lock protects a CQ.
 * Lock order: qp->resp_lock, then qp->sq_lock, then qp->rq_lock/srq->lock,
 * then cq->lock.
 */
#ifndef _RNIC_VERBS_H_
#define _RNIC_VERBS_H_

#include <linux/refcount.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "rnic_hdr.h"
#include "rnic_ib.h"

struct rnic_dev;

/* ------------------------------------------------------------------------
 * Address vector: everything needed to build the L2-L4 headers to a peer
 */

/**
 * struct rnic_av - a resolved destination
 * @net: RoCE v1, or RoCE v2 over IPv4/IPv6 (from the source GID's type)
 * @sgid: source GID (IPv4 as v4-mapped)
 * @dgid: destination GID
 * @sgid_index: index of @sgid in the port's GID table
 * @dmac: destination MAC (ib_core resolved it: rdma_ah_attr.roce.dmac)
 * @vlan_id: VLAN of the source GID's netdev, or 0xffff for none
 * @sl: service level, used as the 802.1p priority when PFC is off
 * @tclass: traffic class / DSCP+ECN (rdma_cm's default_roce_tos lands here)
 * @flow_label: GRH/IPv6 flow label (0: derive from the QPNs)
 * @hop_limit: hop limit / TTL
 */
struct rnic_av {
	enum rnic_net_type net;
	union ib_gid sgid;
	union ib_gid dgid;
	u8 sgid_index;
	u8 dmac[ETH_ALEN];
	u16 vlan_id;
	u8 sl;
	u8 tclass;
	u32 flow_label;
	u8 hop_limit;
};

struct rnic_ah {
	struct ib_ah ibah;
	struct rnic_av av;
};

/* ------------------------------------------------------------------------
 * Protection domain: struct rnic_pd in rnic_ib.h
 * Memory regions
 */

enum rnic_mr_type {
	RNIC_MR_DMA,		/* ib_get_dma_mr: iova is a DMA address */
	RNIC_MR_FRWR,		/* ib_alloc_mr + IB_WR_REG_MR */
};

enum rnic_mr_state {
	RNIC_MR_FREE,		/* FRWR allocated, not registered */
	RNIC_MR_VALID,
	RNIC_MR_INVALID,	/* invalidated; keys refused */
};

/**
 * struct rnic_mr - a memory region
 * @ibmr: ib_core's MR
 * @rdev: the device
 * @type: DMA or FRWR
 * @state: FRWR: registered or not
 * @access: IB_ACCESS_* granted
 * @key: the key in force (lkey = rkey): set at allocation and by each
 *	IB_WR_REG_MR; ib_update_fast_reg_key() changes only ib_mr's copy
 * @iova: first byte's I/O virtual address
 * @length: bytes covered
 * @page_shift: FRWR page size
 * @pages: FRWR: DMA address of each page
 * @npages: pages mapped by ib_map_mr_sg
 * @max_pages: capacity of @pages
 * @ref: lookups in flight; destroy waits for them
 */
struct rnic_mr {
	struct ib_mr ibmr;
	struct rnic_dev *rdev;
	enum rnic_mr_type type;
	enum rnic_mr_state state;
	int access;
	u32 key;
	u64 iova;
	u64 length;
	unsigned int page_shift;
	u64 *pages;
	u32 npages;
	u32 max_pages;
	refcount_t ref;
	struct completion released;
};

/* ------------------------------------------------------------------------
 * Completion queue (software: the device has no IB completions)
 */

/**
 * struct rnic_ib_cq - an ib_core CQ
 * @ibcq: ib_core's CQ
 * @comp_work: calls the completion handler outside every driver lock (a
 *	ULP's handler may poll the CQ and post to the QP right away)
 * @lock: protects the queue
 * @queue: ring of (@size) work completions
 * @size: ring entries (ib_cq.cqe + 1)
 * @head: next to poll (free-running)
 * @tail: next to fill (free-running)
 * @notify: IB_CQ_NEXT_COMP / IB_CQ_SOLICITED armed, else 0
 * @overflowed: a completion was lost; the CQ is in error
 */
struct rnic_ib_cq {
	struct ib_cq ibcq;
	struct work_struct comp_work;	/* runs ibcq.comp_handler */
	spinlock_t lock;	/* the queue */
	struct ib_wc *queue;
	u32 size;
	u32 head;
	u32 tail;
	u8 notify;
	bool overflowed;
};

/* ------------------------------------------------------------------------
 * Work queue entries
 */

/**
 * struct rnic_wqe_sge - one scatter/gather element of a WQE, resolved
 * @addr: I/O virtual address (the lkey's MR space)
 * @length: bytes
 * @lkey: local key
 */
struct rnic_wqe_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

/**
 * struct rnic_send_wqe - a posted send work request
 * @wr_id: the ULP's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_*
 * @ex: immediate data (network order) or rkey to invalidate
 * @rdma: RDMA WRITE/READ target
 * @atomic: compare-and-swap / fetch-and-add operands
 * @ud: UD/GSI destination (ah copied in, so the AH may go away)
 * @reg: IB_WR_REG_MR operands
 * @num_sge: valid entries of @sge
 * @length: total bytes of the message
 * @inline_data: IB_SEND_INLINE: the data copied at post time
 * @sge: the local buffers
 * @status: requester: first/last PSN, packets and bytes sent, ...
 */
struct rnic_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	union {
		__be32 imm;
		u32 invalidate_rkey;
	} ex;
	struct {
		u64 remote_addr;
		u32 rkey;
	} rdma;
	struct {
		u64 remote_addr;
		u32 rkey;
		u64 compare_add;
		u64 swap;
	} atomic;
	struct {
		struct rnic_av av;
		u32 remote_qpn;
		u32 remote_qkey;
		u16 pkey_index;
	} ud;
	struct {
		struct rnic_mr *mr;
		u32 key;
		int access;
	} reg;
	u32 num_sge;
	u32 length;
	u8 *inline_data;
	struct rnic_wqe_sge *sge;

	/* requester progress (rnic_rc_req.c / rnic_ud.c own these) */
	u32 first_psn;
	u32 last_psn;
	u32 sent;		/* bytes handed to the wire */
	u32 npkts;		/* packets the message takes */
	u8 state;		/* enum rnic_wqe_state */
	bool completed;		/* acked/answered; WC may be pending order */
	enum ib_wc_status wc_status;
	u64 atomic_orig;	/* atomic ACK's original value */
};

enum rnic_wqe_state {
	RNIC_WQE_POSTED,	/* not started */
	RNIC_WQE_SENDING,	/* some packets sent */
	RNIC_WQE_SENT,		/* every packet sent, awaiting ACK/response */
	RNIC_WQE_DONE,		/* acked; completion generated in order */
};

/**
 * struct rnic_recv_wqe - a posted receive work request
 * @wr_id: the ULP's cookie
 * @num_sge: valid entries of @sge
 * @length: total bytes the buffers hold
 * @sge: the buffers
 */
struct rnic_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct rnic_wqe_sge *sge;
};

/**
 * struct rnic_wq - a ring of WQEs
 * @wqe: (@size) entries, each of @stride bytes: the WQE struct followed by
 *	its SGE array (and inline data for the SQ)
 * @size: entries, a power of two >= the requested max_wr
 * @max_sge: SGEs per entry
 * @head: next entry to post (free-running)
 * @tail: oldest entry not yet completed (free-running)
 */
struct rnic_wq {
	void *wqe;
	u32 stride;
	u32 size;
	u32 max_sge;
	u32 max_inline;
	u32 head;
	u32 tail;
};

struct rnic_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* the queue */
	struct rnic_wq rq;
	u32 limit;		/* IB_SRQ_LIMIT: event when below, 0 = off */
};

/* ------------------------------------------------------------------------
 * Queue pair
 */

/* RDMA READ / atomic responder resource (IBA 9.5, o9-19) */
struct rnic_resp_res {
	u8 opcode;		/* READ_REQUEST, COMPARE_SWAP, FETCH_ADD */
	u32 first_psn;
	u32 last_psn;
	u64 va;			/* READ: remote address range */
	u32 rkey;
	u32 length;
	u64 atomic_orig;	/* atomic: result to replay for duplicates */
	bool valid;
};

/**
 * struct rnic_qp - a queue pair
 *
 * Attributes are set by modify_qp (rnic_verbs.c) under @state_lock and
 * read by the transport, which never changes them except @state on the
 * way to IB_QPS_ERR / IB_QPS_SQE (through rnic_qp_error()).
 */
struct rnic_qp {
	struct ib_qp ibqp;
	struct rnic_dev *rdev;
	u32 qpn;
	enum ib_qp_type type;
	refcount_t ref;
	struct completion released;

	struct mutex state_lock;	/* modify_qp / query_qp / destroy */
	enum ib_qp_state state;
	bool sq_draining;

	struct rnic_ib_cq *scq;
	struct rnic_ib_cq *rcq;
	struct rnic_srq *srq;
	enum ib_sig_type sq_sig_type;

	/* attributes (modify_qp) */
	struct rnic_av av;	/* RC: the remote end */
	u32 dest_qpn;
	u32 qkey;
	u16 pkey_index;
	enum ib_mtu path_mtu;
	u32 mtu;		/* path MTU in bytes */
	u8 timeout;		/* local ACK timeout: 4.096 us * 2^timeout */
	u8 retry_cnt;
	u8 rnr_retry;		/* 7 = infinite */
	u8 min_rnr_timer;	/* our RNR NAK timer field */
	u8 max_rd_atomic;	/* initiator depth */
	u8 max_dest_rd_atomic;	/* responder resources */
	int access_flags;	/* IB_ACCESS_REMOTE_* allowed to peers */
	u32 sq_psn;		/* first PSN the requester uses */
	u32 rq_psn;		/* first PSN the responder expects */
	u16 udp_sport;		/* RoCE v2 source port for this flow */

	/* send queue + requester + completer (rnic_rc_req.c, rnic_rc_comp.c) */
	spinlock_t sq_lock;	/* sq, req, comp */
	struct rnic_wq sq;
	struct {
		u32 psn;		/* next PSN to send */
		u32 wqe_idx;		/* next WQE to (continue to) send */
		u32 rd_atomic_inflight;	/* READ/atomic awaiting response */
		u32 msn;
	} req;
	struct {
		u32 psn;		/* oldest unacknowledged PSN */
		u32 retry_left;
		u32 rnr_retry_left;
		bool rnr_wait;
		bool fatal;		/* send_work moves the QP to error */
		enum ib_event_type fatal_event;
	} comp;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct work_struct send_work;	/* runs the requester */

	/* receive queue + responder (rnic_rc_resp.c, rnic_ud.c) */
	spinlock_t rq_lock;	/* rq */
	struct rnic_wq rq;
	spinlock_t resp_lock;	/* resp */
	struct {
		u32 psn;		/* next PSN expected */
		u32 msn;
		u32 ack_psn;		/* last PSN acknowledged */
		bool nak_sent;		/* sequence NAK outstanding */
		u32 unacked;		/* packets since the last ACK */
		/* the message being received */
		struct rnic_recv_wqe *wqe;	/* SEND in progress */
		u32 offset;
		u64 write_va;			/* WRITE in progress */
		u32 write_rkey;
		u32 write_left;
		struct rnic_resp_res *res;	/* READ/atomic resources */
		u32 res_head;
	} resp;
};

/* ------------------------------------------------------------------------
 * Accessors
 */

static inline struct rnic_qp *to_rqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rnic_qp, ibqp);
}

static inline struct rnic_ib_cq *to_rcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rnic_ib_cq, ibcq);
}

static inline struct rnic_mr *to_rmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rnic_mr, ibmr);
}

static inline struct rnic_ah *to_rah(struct ib_ah *ibah)
{
	return container_of(ibah, struct rnic_ah, ibah);
}

static inline struct rnic_srq *to_rsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rnic_srq, ibsrq);
}

static inline struct rnic_send_wqe *rnic_sq_wqe(struct rnic_qp *qp, u32 idx)
{
	return qp->sq.wqe + (size_t)(idx & (qp->sq.size - 1)) * qp->sq.stride;
}

static inline struct rnic_recv_wqe *rnic_rq_wqe(struct rnic_wq *rq, u32 idx)
{
	return rq->wqe + (size_t)(idx & (rq->size - 1)) * rq->stride;
}

/*
 * Memory keys: the upper 24 bits index the device's key table, the low 8
 * bits are the variant ib_update_fast_reg_key() sets.
 */
#define RNIC_MR_KEY_SHIFT	8

static inline u32 rnic_mr_key_make(u32 index, u8 variant)
{
	return index << RNIC_MR_KEY_SHIFT | variant;
}

static inline u32 rnic_mr_key_index(u32 key)
{
	return key >> RNIC_MR_KEY_SHIFT;
}

/* ------------------------------------------------------------------------
 * The verbs layer offers the transport (rnic_verbs.c, rnic_mr.c)
 */

/* QP by number with a reference held, or NULL; rnic_qp_put() when done. */
struct rnic_qp *rnic_qp_get(struct rnic_dev *rdev, u32 qpn);
void rnic_qp_put(struct rnic_qp *qp);

/* Move the QP to the error state: flush both queues, event to the ULP. */
void rnic_qp_error(struct rnic_qp *qp, enum ib_event_type event);

/*
 * Add a completion to @cq and run its handler if armed accordingly. On
 * overflow the CQ goes to error (IB_EVENT_CQ_ERR) and -EOVERFLOW is
 * returned.
 */
int rnic_cq_post(struct rnic_ib_cq *cq, const struct ib_wc *wc,
		 bool solicited);

/* Take the next receive WQE of a QP (its SRQ if it has one), or NULL. */
bool rnic_rq_pop(struct rnic_qp *qp, struct rnic_recv_wqe *out,
		 struct rnic_wqe_sge *sge_out);

/*
 * Memory keys. rnic_mr_get() returns the MR for @key with a reference if
 * it is valid, belongs to @pd, grants @access, and covers [@iova, @iova +
 * @len); else NULL. @access is IB_ACCESS_LOCAL_WRITE for local writes, 0
 * for local reads, or IB_ACCESS_REMOTE_*.
 */
struct rnic_mr *rnic_mr_get(struct rnic_dev *rdev, struct ib_pd *pd, u32 key,
			    int access, u64 iova, u64 len);
void rnic_mr_put(struct rnic_mr *mr);

/*
 * Copy between a kernel buffer and MR space [@iova, @iova + @len), which
 * rnic_mr_get() validated. Return 0 or -EFAULT.
 */
int rnic_mr_copy_to(struct rnic_mr *mr, u64 iova, const void *src, u32 len);
int rnic_mr_copy_from(struct rnic_mr *mr, u64 iova, void *dst, u32 len);

/*
 * The DMA address of MR space at @iova and how many contiguous bytes
 * follow it (at most @len): what a zero-copy TX descriptor points at.
 */
int rnic_mr_dma(struct rnic_mr *mr, u64 iova, u32 len, dma_addr_t *dma,
		u32 *contig);

/* Execute IB_WR_REG_MR / IB_WR_LOCAL_INV / a SEND_WITH_INV's rkey. */
int rnic_mr_register(struct rnic_dev *rdev, const struct rnic_send_wqe *wqe);
int rnic_mr_invalidate(struct rnic_dev *rdev, struct ib_pd *pd, u32 key);

/* ------------------------------------------------------------------------
 * The transport offers the verbs layer (rnic_roce.c, rnic_ud.c, rnic_rc_*.c)
 */

/* RoCE rings: created after the netdev, destroyed before it. */
int rnic_roce_init(struct rnic_dev *rdev);
void rnic_roce_destroy(struct rnic_dev *rdev);

/* Set up / tear down a QP's transport state (timers, work, resources). */
int rnic_qp_transport_init(struct rnic_qp *qp);
void rnic_qp_transport_destroy(struct rnic_qp *qp);

/*
 * modify_qp moved the QP from @old to @new (under qp->state_lock); e.g.
 * RTR arms the responder at qp->rq_psn, RTS starts the requester at
 * qp->sq_psn, ERR flushes.
 */
void rnic_qp_state_changed(struct rnic_qp *qp, enum ib_qp_state old,
			   enum ib_qp_state new);

/* post_send queued WQEs: run the requester (any context). */
void rnic_qp_kick_sq(struct rnic_qp *qp);

/* post_recv added WQEs: a responder waiting in RNR may resume. */
void rnic_qp_kick_rq(struct rnic_qp *qp);

/* rdma statistic show: the port's counters (device + transport) */
struct rdma_hw_stats *rnic_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port_num);
int rnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port_num, int index);

/* Resolve an rdma_ah_attr (AH or RC path) into an address vector. */
int rnic_av_from_attr(struct rnic_dev *rdev, const struct rdma_ah_attr *attr,
		      struct rnic_av *av);

#if IS_ENABLED(CONFIG_KUNIT)
/* Pure helpers of rnic_verbs.c and rnic_mr.c, for kunit/rnic_verbs_kunit.c */
int rnic_qp_check_attr(enum ib_qp_type type, enum ib_qp_state cur,
		       enum ib_qp_state new, const struct ib_qp_attr *attr,
		       int mask, enum ib_mtu port_mtu);
int rnic_wq_geometry(struct rnic_wq *wq, u32 max_wr, u32 max_sge,
		     u32 max_inline, size_t base);
u32 rnic_cq_ring_size(int cqe);
void rnic_cq_init_ring(struct rnic_ib_cq *cq, struct ib_wc *queue, u32 size);
int rnic_cq_poll_ring(struct rnic_ib_cq *cq, int num, struct ib_wc *wc);
bool rnic_mr_range_ok(u64 mr_iova, u64 mr_len, u64 iova, u64 len);
#endif

#endif /* _RNIC_VERBS_H_ */
