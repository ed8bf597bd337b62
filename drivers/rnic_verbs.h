/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic ABI 2.0: the RDMA side when the NIC runs the IB transport.
 *
 * Every verbs object is a device object made by an admin command
 * (rnic_ib_cmd.c); the driver keeps only what it needs to post WQEs and
 * to check what the device returns: rings, producer/consumer indices and
 * the wr_id arrays. Files, one concern each:
 *
 *   rnic_ib_dev.c    device setup (caps, doorbell page, completion EQs,
 *                    AH table), ib_device registration, port/GID/device
 *                    queries, asynchronous events
 *   rnic_ib_cmd.c    typed admin command wrappers
 *   rnic_ib_db.c     doorbell page: slots and the kick ring
 *   rnic_ib_cq.c     CQs, completion EQ interrupts, poll_cq
 *   rnic_ib_qp.c     QPs: create/modify/query/destroy
 *   rnic_ib_post.c   post_send, post_recv, post_srq_recv
 *   rnic_ib_obj.c    PDs, MRs, AHs, SRQs
 *
 * The pure encoders and decoders (templates, WQEs, CQEs, MODIFY_QP) are
 * rnic_ib_tmpl.c, rnic_ib_wqe.c, rnic_ib_cqe.c and rnic_ib_qp_attr.c.
 *
 * Lifetime: memory the device was given is freed only after the DESTROY
 * command that releases it completed, or after a reset
 * (rnic_ib_defer_free() keeps it until then when a command failed).
 *
 * Locking: the object tables (xarrays) are changed in process context
 * with the _irq lock variants and read with xa_load() under RCU from the
 * completion interrupt and poll_cq (destroy_qp and destroy_cq wait a
 * grace period after the erase: a bad CQE or EQ entry may name an object
 * of another CQ or EQ), or under xa_lock_irq() with a reference from the
 * event work. Before the erase, destroy_qp marks the QP's unpolled CQEs
 * under each CQ's lock, and destroy_cq its EQ's unconsumed entries with
 * the EQ's interrupt disabled, so that nothing the device wrote before
 * the DESTROY names an object that is gone. Per queue: cq->lock, then
 * qp->sq.lock, qp->rq.lock or srq->lock (poll_cq nests them in that
 * order; posting takes one queue lock only), then the doorbell page's
 * kick lock.
 */
#ifndef _RNIC_VERBS_H_
#define _RNIC_VERBS_H_

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "rnic.h"

struct ib_umem;

/* Completion EQ depth (log2), at most the device's max_eq_log2 */
#define RNIC_IB_EQ_LOG2		10
/* AH table entries the driver gives the device, at most max_ah */
#define RNIC_IB_MAX_AH		1024
/* Largest fast-reg page list the driver offers */
#define RNIC_IB_MAX_FRWR_PAGES	4096
/* Largest page list of a user MR (CREATE_MR), 2 MiB of DMA memory */
#define RNIC_IB_MAX_PBL_PAGES	BIT(18)
/* Deepest CQ, SQ/RQ and SRQ the driver offers (log2), at most the caps */
#define RNIC_IB_MAX_WQ_LOG2	14
/* MSI-X vectors used by completion EQs start here (0 admin, 1 netdev) */
#define RNIC_IB_VEC_COMP	2

/**
 * struct rnic_ib_caps - QUERY_RDMA_CAPS in CPU order, checked and capped
 *	at what the driver offers
 */
struct rnic_ib_caps {
	u32 flags;
	u32 max_qp;
	u32 max_cq;
	u32 max_srq;
	u32 max_mr;
	u32 max_pd;
	u32 max_ah;
	u32 max_mr_pages;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 max_msg_size;
	u16 max_eq;
	u16 num_db_pages;
	u32 db_base;
	u8 db_page_log2;
	u8 max_wq_log2;
	u8 max_cq_log2;
	u8 max_srq_log2;
	u8 max_eq_log2;
	u8 max_sqe_log2;
	u8 max_rqe_log2;
	u8 max_send_sge;
	u8 max_recv_sge;
	u8 max_srq_sge;
	u16 max_inline;
	u32 max_pbl_pages;	/* max_mr_pages uncapped: CREATE_MR lists */
	u8 max_qp_rd_atom;
	u8 max_qp_dest_rd_atom;
	u8 local_ca_ack_delay;
	u8 max_pmtu;
	u16 gid_tbl_len;
	u16 pkey_tbl_len;
	u16 num_rdma_stats;
};

/*
 * Doorbell pages the kernel may take: a QP uses two slots (SQ and RQ), a
 * CQ or an SRQ one, and a page has RNIC_DBP_SLOTS; enough for 4096 QPs,
 * 4096 CQs and 4096 SRQs. rnic_ib_read_caps() lowers the advertised
 * limits if the device has fewer pages.
 */
#define RNIC_IB_MAX_DBPS	40

/**
 * struct rnic_ib_dbp - one of the kernel's doorbell pages
 * @id: page id ALLOC_DB_PAGE returned
 * @kick: value to write to BAR0 DOORBELL after a batch
 * @va: the page in BAR2
 * @lock: one writer of the kick ring at a time
 * @kick_pi: kick entries written (free-running)
 * @used: slots the objects placed in this page hold (under dbp_lock)
 * @allocated: the device knows the page
 */
struct rnic_ib_dbp {
	u32 id;
	u32 kick;
	void __iomem *va;
	spinlock_t lock;	/* kick ring appends */
	u16 kick_pi;
	u16 used;
	bool allocated;
};

/**
 * struct rnic_ib_eq - a completion event queue, one per MSI-X vector
 * @ibd: the device
 * @va: ring of (1 << @log2_depth) struct rnic_eqe
 * @dma: its DMA address
 * @log2_depth: log2 of its depth
 * @eqn: the device's EQN
 * @vector: MSI-X vector
 * @irq: Linux IRQ of @vector (0 until requested)
 * @ci: free-running consumer index
 * @arm_seq: sequence of the last arm
 * @scrubbed: entries of destroyed CQs marked for the interrupt handler to
 *	drop, not yet consumed (changed by the handler, or with it disabled)
 * @created: the device knows the EQ
 * @name: IRQ name
 */
struct rnic_ib_eq {
	struct rnic_ibdev *ibd;
	struct rnic_eqe *va;
	dma_addr_t dma;
	u8 log2_depth;
	u32 eqn;
	u16 vector;
	int irq;
	u16 ci;
	u8 arm_seq;
	u32 scrubbed;
	bool created;
	char name[32];
};

/**
 * struct rnic_ibdev - the ABI 2.0 ib_device of one rnic function
 * @ibdev: ib_core's device; must stay first (ib_alloc_device)
 * @rdev: the PCI function
 * @caps: the device's limits
 * @dbps: the kernel's doorbell pages, @num_dbps of them taken so far
 * @num_dbps: pages allocated (rnic_ib_dbp_get() adds them as needed)
 * @dbp_lock: serialises page choice and allocation
 * @eqs: completion EQs
 * @num_eqs: their number (the ib_device's completion vectors)
 * @ah_va: AH table pages (RNIC_AH_PAGE_SIZE each)
 * @ah_dma: their DMA addresses
 * @num_ah: entries of the table
 * @ah_lock: protects @ah_map (create_ah may run in atomic context)
 * @ah_map: entries in use; entry 0 is never valid
 * @ah_set: SET_AH_TABLE succeeded (the pages are the device's until reset)
 * @qp_xa: QPs by QPN
 * @cq_xa: CQs by CQN
 * @srq_xa: SRQs by SRQN
 * @defer_lock: protects @deferred
 * @deferred: DMA memory to free only after the next reset
 * @registered: ib_register_device() succeeded
 * @fatal: the device failed and is stopped (rnic_ib_dev_dead()): nothing
 *	is sent to it, and the driver completes the WRs in software
 * @fatal_reported: IB_EVENT_DEVICE_FATAL was dispatched (by @fatal_work)
 * @fatal_work: after @fatal, dispatches the event and calls the completion
 *	handlers the device no longer triggers
 * @stats: enum rnic_ib_stat
 * @kick_mmap: the page of BAR0 holds nothing else, so user contexts may
 *	map it to kick (rnic_ib_kick_check(), at probe)
 * @user_dbps: doorbell pages user contexts hold
 * @max_user_dbps: at most this many (the rest is the kernel's)
 */
struct rnic_ibdev {
	struct ib_device ibdev;
	struct rnic_dev *rdev;
	struct rnic_ib_caps caps;
	struct rnic_ib_dbp dbps[RNIC_IB_MAX_DBPS];
	unsigned int num_dbps;
	struct mutex dbp_lock;	/* dbps[].used, num_dbps */
	struct rnic_ib_eq *eqs;
	unsigned int num_eqs;

	void **ah_va;
	dma_addr_t *ah_dma;
	u32 num_ah;
	spinlock_t ah_lock;	/* ah_map */
	unsigned long *ah_map;
	bool ah_set;

	struct xarray qp_xa;
	struct xarray cq_xa;
	struct xarray srq_xa;

	spinlock_t defer_lock;	/* deferred */
	struct list_head deferred;
	bool registered;
	bool fatal;
	bool fatal_reported;
	struct work_struct fatal_work;
	atomic64_t stats[RNIC_IB_NUM_STATS];
	bool kick_mmap;
	atomic_t user_dbps;
	int max_user_dbps;
};

/* Doorbell pages one user context may hold (RNIC_DBP_SLOTS slots each) */
#define RNIC_IB_UCTX_MAX_DBPS	16

/**
 * struct rnic_ib_mentry - what an mmap offset of a user context maps
 * @rdma: ib_core's entry (the offset, the reference count)
 * @pfn: the first page frame (BAR2 doorbell page, or the BAR0 page)
 */
struct rnic_ib_mentry {
	struct rdma_user_mmap_entry rdma;
	unsigned long pfn;
};

/**
 * struct rnic_ib_udbp - a doorbell page of a user context
 * @dbp: the page as the kernel sees it (slots counted in @dbp.used, kick
 *	entries of the kernel's fallback kick in @dbp.kick_pi)
 * @me: its mapping
 * @key: its mmap offset, as the create responses give it
 */
struct rnic_ib_udbp {
	struct rnic_ib_dbp dbp;
	struct rnic_ib_mentry *me;
	u64 key;
};

/**
 * struct rnic_ib_ucontext - a user context (one open uverbs file)
 * @ibuc: ib_core's context
 * @lock: page choice and allocation
 * @pages: its doorbell pages, @num_pages of them
 * @num_pages: pages allocated
 * @kick_me: with ibd->kick_mmap, the mapping of the BAR0 page
 * @refused: 0, or the errno (positive) the context was refused with
 *	(rnic_ualloc_ctx_resp.status): it has no pages and gets none
 */
struct rnic_ib_ucontext {
	struct ib_ucontext ibuc;
	struct mutex lock;	/* pages[].dbp.used, num_pages */
	struct rnic_ib_udbp pages[RNIC_IB_UCTX_MAX_DBPS];
	unsigned int num_pages;
	struct rnic_ib_mentry *kick_me;
	int refused;
};

struct rnic_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
	bool privileged;
};

/**
 * struct rnic_ib_mr - a memory region
 * @ibmr: ib_core's MR
 * @type: enum rnic_mr_type_hw
 * @pbl: FAST_REG: the page list map_mr_sg fills (DMA addresses)
 * @pbl_dma: its DMA address, given in each REG_MR WQE
 * @max_pages: FAST_REG: entries of @pbl
 * @npages: FAST_REG: entries the last map_mr_sg wrote
 * @umem: PBL (a user MR): the pinned pages the device was given
 */
struct rnic_ib_mr {
	struct ib_mr ibmr;
	u8 type;
	__le64 *pbl;
	dma_addr_t pbl_dma;
	u32 max_pages;
	u32 npages;
	struct ib_umem *umem;
};

/**
 * struct rnic_ib_cq - an RDMA CQ
 * @ibcq: ib_core's CQ
 * @ring: (1 << @log2_depth) CQEs the device writes
 * @dma: its DMA address
 * @log2_depth: log2 of the depth
 * @cqn: the device's CQN
 * @dbp: the doorbell page its slot is in
 * @db_off: its slot's byte offset in @dbp
 * @eq: its completion EQ
 * @lock: poll and arm
 * @ci: free-running consumer index
 * @arm_seq: sequence of the last arm
 * @armed: req_notify_cq() ran at least once: the slot carries an arm
 * @arm_solicited: the last arm was for solicited (and error) CQEs only
 * @scrubbed: CQEs of reset or destroyed QPs marked for poll_cq to drop,
 *	not yet polled
 * @sw_armed: after a fatal error: req_notify_cq() asked for an event that
 *	the driver, not the device, must deliver
 * @sw_event: after a fatal error: the completion handler is due, for
 *	ibd->fatal_work to call
 * @ref: references from event lookups (1 while in the table)
 * @gone: completed when the last reference is dropped
 * @uctx: a user CQ's context (@ring is NULL: the ring is @umem, which
 *	only the process reads), else NULL
 * @umem: a user CQ's pinned ring
 */
struct rnic_ib_cq {
	struct ib_cq ibcq;
	struct rnic_rdma_cqe *ring;
	dma_addr_t dma;
	u8 log2_depth;
	u32 cqn;
	struct rnic_ib_dbp *dbp;
	u16 db_off;
	struct rnic_ib_eq *eq;
	spinlock_t lock;	/* ci, arm_seq, armed, arm_solicited, scrubbed, sw_*, the ring */
	u16 ci;
	u8 arm_seq;
	bool armed;
	bool arm_solicited;
	u32 scrubbed;
	bool sw_armed;
	bool sw_event;
	refcount_t ref;
	struct completion gone;
	struct rnic_ib_ucontext *uctx;
	struct ib_umem *umem;
};

/**
 * struct rnic_ib_wq - a send or receive ring of a QP
 * @ring: (1 << @log2_depth) WQEs of (1 << @wqe_log2) bytes
 * @dma: its DMA address
 * @log2_depth: log2 of the depth (0: no ring, the QP has an SRQ)
 * @wqe_log2: log2 of the WQE size
 * @dbp: the doorbell page its slot is in
 * @db_off: its slot's byte offset in @dbp
 * @lock: posting and completing
 * @pi: free-running producer index
 * @ci: free-running index of the oldest WQE not completed
 * @wrid: wr_id of each slot
 * @len: receive rings: bytes the WQE of each slot offers
 * @umem: a user QP's pinned ring (@ring, @wrid and @len are NULL)
 */
struct rnic_ib_wq {
	void *ring;
	dma_addr_t dma;
	u8 log2_depth;
	u8 wqe_log2;
	struct rnic_ib_dbp *dbp;
	u16 db_off;
	spinlock_t lock;	/* pi, ci, wrid, len, the ring */
	u16 pi;
	u16 ci;
	u64 *wrid;
	u32 *len;
	struct ib_umem *umem;
};

/**
 * struct rnic_ib_srq - a shared receive queue
 * @ibsrq: ib_core's SRQ
 * @wqes: (1 << @log2_depth) receive WQE slots
 * @wqe_dma: their DMA address
 * @idx: the index ring: slot numbers in posting order
 * @idx_dma: its DMA address
 * @log2_depth: log2 of the number of slots
 * @rqe_log2: log2 of the WQE size
 * @max_sge: SGEs a WQE may carry
 * @srqn: the device's SRQN
 * @dbp: the doorbell page its slot is in
 * @db_off: its slot's byte offset in @dbp
 * @lock: posting and completing
 * @pi: free-running producer index of the index ring
 * @busy: slots given to the device and not completed
 * @wrid: wr_id of each slot
 * @len: bytes the WQE of each slot offers
 * @ref: references from event lookups
 * @gone: completed when the last reference is dropped
 * @uctx: a user SRQ's context, else NULL; its WQEs and index ring are
 *	@wqe_umem and @idx_umem, and the process keeps the slots (@busy,
 *	@wrid and @len are NULL)
 * @wqe_umem: a user SRQ's pinned WQE slots
 * @idx_umem: a user SRQ's pinned index ring
 */
struct rnic_ib_srq {
	struct ib_srq ibsrq;
	void *wqes;
	dma_addr_t wqe_dma;
	__le16 *idx;
	dma_addr_t idx_dma;
	u8 log2_depth;
	u8 rqe_log2;
	u32 max_sge;
	u32 srqn;
	struct rnic_ib_dbp *dbp;
	u16 db_off;
	spinlock_t lock;	/* pi, busy, wrid, len, the rings */
	u16 pi;
	unsigned long *busy;
	u64 *wrid;
	u32 *len;
	refcount_t ref;
	struct completion gone;
	struct rnic_ib_ucontext *uctx;
	struct ib_umem *wqe_umem;
	struct ib_umem *idx_umem;
};

/**
 * struct rnic_ib_qp - a queue pair
 * @ibqp: ib_core's QP
 * @sq: send ring
 * @rq: receive ring (unused with an SRQ)
 * @srq: the SRQ receives come from, or NULL
 * @path: RC: the path template MODIFY_QP copies
 * @path_dma: its DMA address
 * @state_lock: serialises modify_qp and query_qp
 * @state: the state the driver believes the QP is in
 * @sig_all: IB_SIGNAL_ALL_WR
 * @privileged: its PD is a kernel PD
 * @send_cqn: its send CQ's CQN, and
 * @recv_cqn: its receive CQ's: poll_cq checks that a CQE's QP is its own
 *	from these alone (rnic_ib_cqe_qp_check())
 * @dest_qpn: RC: the peer QPN (for the UDP source port)
 * @ah_attr: RC: the path as the ULP gave it, for query_qp
 * @cap: the capacities granted at create
 * @ref: references from event lookups
 * @gone: completed when the last reference is dropped
 * @err_work: moves the QP to ERR after a bad CQE (poll_cq cannot sleep)
 * @destroying: destroy_qp has begun (under @state_lock): @err_work must not
 *	send a MODIFY_QP that could reach the QPN once the device reuses it
 * @uctx: a user QP's context, else NULL: its rings are the process's
 *	(@sq.umem, @rq.umem), posted and polled there
 * @udropped: (under @state_lock) a user SRQ's slot this QP's move to RESET
 *	dropped, for modify_qp's response: the process gives out the slots
 * @udropped_slot: that slot
 */
struct rnic_ib_qp {
	struct ib_qp ibqp;
	struct rnic_ib_wq sq;
	struct rnic_ib_wq rq;
	struct rnic_ib_srq *srq;
	struct rnic_hdr_tmpl *path;
	dma_addr_t path_dma;
	struct mutex state_lock;	/* modify/query */
	enum ib_qp_state state;
	bool sig_all;
	bool privileged;
	u32 send_cqn;
	u32 recv_cqn;
	u32 dest_qpn;
	struct rdma_ah_attr ah_attr;
	struct ib_qp_cap cap;
	refcount_t ref;
	struct completion gone;
	struct work_struct err_work;
	bool destroying;
	struct rnic_ib_ucontext *uctx;
	bool udropped;
	u16 udropped_slot;
};

/**
 * struct rnic_ib_ah - an address handle: one AH table entry
 * @ibah: ib_core's AH
 * @idx: its index in the table
 */
struct rnic_ib_ah {
	struct ib_ah ibah;
	u32 idx;
};

static inline struct rnic_ibdev *to_ibdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rnic_ibdev, ibdev);
}

static inline struct rnic_ib_ucontext *to_ructx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct rnic_ib_ucontext, ibuc);
}

static inline struct rnic_ib_pd *to_rpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct rnic_ib_pd, ibpd);
}

static inline struct rnic_ib_mr *to_rmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rnic_ib_mr, ibmr);
}

static inline struct rnic_ib_cq *to_rcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rnic_ib_cq, ibcq);
}

static inline struct rnic_ib_qp *to_rqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rnic_ib_qp, ibqp);
}

static inline struct rnic_ib_srq *to_rsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rnic_ib_srq, ibsrq);
}

static inline struct rnic_ib_ah *to_rah(struct ib_ah *ibah)
{
	return container_of(ibah, struct rnic_ib_ah, ibah);
}

static inline void rnic_ib_stat_inc(struct rnic_ibdev *ibd, enum rnic_ib_stat s)
{
	atomic64_inc(&ibd->stats[s]);
}

static inline struct device *rnic_ib_dma(struct rnic_ibdev *ibd)
{
	return &ibd->rdev->pdev->dev;
}

/* rnic_ib_cmd.c */
int rnic_ib_cmd(struct rnic_ibdev *ibd, const void *req, size_t len,
		union rnic_aq_resp *resp);
int rnic_ib_cmd_query(struct rnic_ibdev *ibd, u8 opcode, u32 handle, u8 scope,
		      void *out, size_t len);
int rnic_ib_cmd_destroy_resp(struct rnic_ibdev *ibd, u8 opcode, u32 handle,
			     union rnic_aq_resp *resp);
int rnic_ib_cmd_destroy(struct rnic_ibdev *ibd, u8 opcode, u32 handle);
const char *rnic_ib_opcode_str(u8 opcode);

/* rnic_ib_db.c */
void rnic_ib_db_write(struct rnic_ib_dbp *dbp, u16 off, u32 val);
void rnic_ib_db_ring(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp, u16 off,
		     u32 val);
struct rnic_ib_dbp *rnic_ib_dbp_get(struct rnic_ibdev *ibd, unsigned int slots);
void rnic_ib_dbp_put(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
		     unsigned int slots);
void rnic_ib_db_recv(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
		     u16 off, u32 val, bool flush);
void rnic_ib_db_kick(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp, u16 off);
bool rnic_ib_db_off_ok(u16 off);
int rnic_ib_dbp_alloc_page(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
			   u32 flags);
int rnic_ib_dbp_alloc(struct rnic_ibdev *ibd);
void rnic_ib_dbp_free(struct rnic_ibdev *ibd);

/* rnic_ib_dev.c */
void rnic_ib_defer_free(struct rnic_ibdev *ibd, size_t size, void *va,
			dma_addr_t dma);
void rnic_ib_free_dma(struct rnic_ibdev *ibd, bool destroyed, size_t size,
		      void *va, dma_addr_t dma);
void rnic_ib_deferred_release(struct rnic_ibdev *ibd);
void rnic_ib_umem_free(struct rnic_ibdev *ibd, bool destroyed,
		       struct ib_umem *umem);

/* rnic_ib_uctx.c */
void rnic_ib_kick_check(struct rnic_ibdev *ibd);
int rnic_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void rnic_ib_dealloc_ucontext(struct ib_ucontext *ibuc);
void rnic_ib_disassociate_ucontext(struct ib_ucontext *ibuc);
int rnic_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void rnic_ib_mmap_free(struct rdma_user_mmap_entry *entry);
struct rnic_ib_udbp *rnic_ib_udbp_get(struct rnic_ib_ucontext *uctx,
				      unsigned int slots);
void rnic_ib_udbp_put(struct rnic_ib_ucontext *uctx, struct rnic_ib_dbp *dbp,
		      unsigned int slots);
u64 rnic_ib_udbp_key(struct rnic_ib_ucontext *uctx, struct rnic_ib_dbp *dbp);
struct rnic_ib_ucontext *rnic_ib_uctx(struct ib_udata *udata);
int rnic_ib_udata_in(struct ib_udata *udata, void *req, size_t len);
int rnic_ib_udata_out(struct ib_udata *udata, void *resp, size_t len);

/* rnic_ib_umem.c */
struct rnic_ib_pbl {
	__le64 *va;
	dma_addr_t dma;
	size_t size;
	u32 n;
};

int rnic_ib_uring_get(struct rnic_ibdev *ibd, u64 va, u64 bytes,
		      struct ib_umem **umem);
int rnic_ib_pbl_build(struct rnic_ibdev *ibd, struct ib_umem *umem,
		      unsigned long pgsz, struct rnic_ib_pbl *pbl);
void rnic_ib_pbl_free(struct rnic_ibdev *ibd, struct rnic_ib_pbl *pbl,
		      int err);
u64 rnic_ib_uring_bytes(u8 log2_depth, u8 esize_log2);
int rnic_ib_ucq_check(const struct rnic_ib_caps *c, u64 ring_va,
		      u8 log2_depth, int cqe);
int rnic_ib_uwq_check(u64 va, u8 log2_depth, u8 esize_log2, u8 min_esize,
		      u8 max_esize, u8 max_log2, u32 max_wr, u8 need_esize);

/* rnic_ib_cq.c */
int rnic_ib_eqs_create(struct rnic_ibdev *ibd);
void rnic_ib_eqs_destroy(struct rnic_ibdev *ibd);
int rnic_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs);
int rnic_ib_create_cq_udata(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    struct ib_udata *udata);
int rnic_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int rnic_ib_modify_cq(struct ib_cq *ibcq, u16 count, u16 period_us);
int rnic_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int rnic_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void rnic_ib_cq_fatal_kick(struct rnic_ibdev *ibd, struct ib_cq *ibcq);
void rnic_ib_cqs_fatal_notify(struct rnic_ibdev *ibd, bool first);

/* rnic_ib_qp.c */
int rnic_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
int rnic_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata);
int rnic_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int rnic_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct rnic_ib_qp *rnic_ib_qp_get(struct rnic_ibdev *ibd, u32 qpn);
void rnic_ib_qp_put(struct rnic_ib_qp *qp);
void rnic_ib_qp_init_sync(struct rnic_ib_qp *qp);
void rnic_ib_qp_set_err(struct rnic_ib_qp *qp);
void rnic_ib_qp_dev_err(struct rnic_ib_qp *qp);
int rnic_ib_modify_qp_fatal(struct rnic_ib_qp *qp, const struct ib_qp_attr *attr,
			    int mask, bool *last_wqe);
int rnic_ib_qp_srq_dropped(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			   u8 flags, u16 slot, bool gone);

/* rnic_ib_post.c */
int rnic_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int rnic_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
int rnic_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);

/* rnic_ib_obj.c */
int rnic_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int rnic_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *rnic_ib_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *rnic_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int rnic_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset);
int rnic_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *rnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_udata *udata);
int rnic_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata);
int rnic_ib_destroy_ah(struct ib_ah *ibah, u32 flags);
int rnic_ib_ah_table_init(struct rnic_ibdev *ibd);
void rnic_ib_ah_table_free(struct rnic_ibdev *ibd);
int rnic_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata);
int rnic_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rnic_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rnic_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
struct rnic_ib_srq *rnic_ib_srq_get(struct rnic_ibdev *ibd, u32 srqn);
void rnic_ib_srq_put(struct rnic_ib_srq *srq);
struct rnic_ib_cq *rnic_ib_cq_get(struct rnic_ibdev *ibd, u32 cqn);
void rnic_ib_cq_put(struct rnic_ib_cq *cq);

#endif /* _RNIC_VERBS_H_ */
