/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim RDMA engine internals (Documentation/hardware-rdma.rst,
 * Documentation/hardware-transport.rst, include/rnic_hw_rdma.h): the device
 * runs the IB transport.
 *
 * rdma_base.c	id tables and lookups, the run queue, the receive
 *		buffer, events: the bottom layer, which calls no other
 * rdma_core.c	engine state lifetime, the work pump, tick, counters
 * rdma_admin.c	admin dispatch; caps, stats, EQs, doorbell pages, AH
 *		table, GID, P_Key, PD
 * rdma_db.c	doorbell pages: allocation, slots
 * rdma_kick.c	doorbell vector 3: kick rings, the slots they name
 * rdma_mr.c	MRs: commands, key checks, translation, local ops
 * rdma_cq.c	RDMA CQs, CQEs, arming, completion EQs
 * rdma_qp.c	SRQ and QP commands, the QP state machine, flush
 * rdma_wq.c	rings in host memory, WQE fetch and validation
 * rdma_tx.c	header templates and packet emission, loopback
 * rdma_rx.c	RX validation and dispatch of RoCE frames
 * rdma_rc.c	RC QPs handed to the RC engine (transport/rc.h)
 * rdma_ud.c	UD and GSI send and receive
 *
 * The RC transport engine is not here: RC QPs are handed to it through
 * the hooks at the end of this file.
 *
 * Every value read from BAR2 or guest memory is checked before use; a bad
 * one stays within the object that owns it.
 */
#ifndef RNICSIM_RDMA_H
#define RNICSIM_RDMA_H

#include "pci/dev_priv.h"
#include "pkt/pkt.h"

/* Model limits (QUERY_RDMA_CAPS): suggestions of hardware-rdma.rst */
#define RDMA_QP_LOG2		12	/* QP table slots: max_qp */
#define RDMA_CQ_LOG2		12
#define RDMA_SRQ_LOG2		10
#define RDMA_MR_LOG2		16
#define RDMA_PD_LOG2		12
#define RDMA_MAX_AH		4096
#define RDMA_MAX_MR_PAGES		262144
#define RDMA_MAX_MR_SIZE		(1ULL << 40)
#define RDMA_PAGE_SIZE_CAP	GENMASK_ULL(RNIC_PAGE_LOG2_MAX, RNIC_PAGE_LOG2_MIN)
#define RDMA_MAX_MSG		(1U << 31)
#define RDMA_MAX_WQ_LOG2		15
#define RDMA_MAX_CQ_LOG2		15
#define RDMA_MAX_SRQ_LOG2		15
#define RDMA_MAX_EQ_LOG2		12
#define RDMA_MAX_SEND_SGE		29
#define RDMA_MAX_RECV_SGE		31
#define RDMA_MAX_INLINE		464
#define RDMA_MAX_RD_ATOM		16
#define RDMA_LOCAL_ACK_DELAY	15
#define RDMA_GID_TBL_LEN		128
#define RDMA_PKEY_TBL_LEN		1
#define RDMA_TIMER_TICK_US	1000
#define RDMA_PSN_WINDOW		128
#define RDMA_RX_FIFO		256
#define RDMA_MAX_DB_PAGES		1024
#define RDMA_ID_SPACE		(1U << 24)	/* QPN, CQN, SRQN, key index */

/* Bytes of network header a UD receive buffer starts with */
#define RDMA_UD_GRH_LEN		40

/* IB header sizes */
#define RDMA_BTH_LEN		12
#define RDMA_DETH_LEN		8
#define RDMA_RETH_LEN		16
#define RDMA_IMM_LEN		4
#define RDMA_IETH_LEN		4
#define RDMA_AETH_LEN		4
#define RDMA_ATOMICETH_LEN	28
#define RDMA_ATOMICACK_LEN	8

/* BTH opcodes (IB 9.2) the device knows */
#define RDMA_OP_RC_SEND_FIRST		0x00
#define RDMA_OP_RC_SEND_MIDDLE		0x01
#define RDMA_OP_RC_SEND_LAST		0x02
#define RDMA_OP_RC_SEND_LAST_IMM		0x03
#define RDMA_OP_RC_SEND_ONLY		0x04
#define RDMA_OP_RC_SEND_ONLY_IMM		0x05
#define RDMA_OP_RC_WRITE_FIRST		0x06
#define RDMA_OP_RC_WRITE_MIDDLE		0x07
#define RDMA_OP_RC_WRITE_LAST		0x08
#define RDMA_OP_RC_WRITE_LAST_IMM		0x09
#define RDMA_OP_RC_WRITE_ONLY		0x0a
#define RDMA_OP_RC_WRITE_ONLY_IMM		0x0b
#define RDMA_OP_RC_READ_REQ		0x0c
#define RDMA_OP_RC_READ_RESP_FIRST	0x0d
#define RDMA_OP_RC_READ_RESP_MIDDLE	0x0e
#define RDMA_OP_RC_READ_RESP_LAST		0x0f
#define RDMA_OP_RC_READ_RESP_ONLY		0x10
#define RDMA_OP_RC_ACK			0x11
#define RDMA_OP_RC_ATOMIC_ACK		0x12
#define RDMA_OP_RC_CMP_SWAP		0x13
#define RDMA_OP_RC_FETCH_ADD		0x14
#define RDMA_OP_RC_SEND_LAST_INV		0x16
#define RDMA_OP_RC_SEND_ONLY_INV		0x17
#define RDMA_OP_UD_SEND_ONLY		0x64
#define RDMA_OP_UD_SEND_ONLY_IMM		0x65

/* A ring in host memory: contiguous, or a copied page list */
struct rdma_ring {
	u64 base;		/* contiguous ring */
	u64 *pages;		/* or page list (malloc'd copy) */
	u32 npages;
	u8 page_log2;
	u8 log2_depth;
	u8 esize_log2;
};

/* Slot owners in a doorbell page */
enum rdma_slot_kind {
	RDMA_SLOT_FREE = 0,
	RDMA_SLOT_SQ,
	RDMA_SLOT_RQ,
	RDMA_SLOT_SRQ,
	RDMA_SLOT_CQ,
};

struct rdma_slot {
	u8 kind;		/* enum rdma_slot_kind */
	void *obj;		/* struct rdma_qp, rdma_srq or rdma_cq */
};

struct rdma_dbp {
	bool used;
	bool user;		/* RNIC_DBP_F_USER */
	u32 live_idx;		/* its place in rdma_dev.live_dbp */
	u16 kick_ci;		/* device's consumer index of the kick ring */
	u8 watch_count;		/* kick watches in a row with entries unread */
	u16 watch_ci;		/* kick_ci at the first of them */
	unsigned int nslots;	/* slots assigned */
	unsigned int next;	/* where the next slot search starts */
	struct rdma_slot slot[RNIC_DBP_SLOTS];
};

/*
 * Objects are found by id in O(1): the low bits of the id index a table,
 * the rest makes ids cycle through their whole space (hardware-rdma.rst,
 * "Cyclic 24-bit ids").
 */
struct rdma_idtab {
	void **obj;
	u32 *id;
	u32 mask;		/* table slots - 1 */
	u32 space;		/* ids are 1 .. space - 1 */
	u32 next;		/* where the cyclic search resumes */
	u32 count;
	u32 reserved_slots;	/* bit n: slot n is never allocated */
};

struct rdma_pd {
	u32 pdn;
	bool priv;		/* RNIC_PD_F_PRIVILEGED */
	u32 refs;		/* MRs, SRQs and QPs */
};

struct rdma_mr {
	u32 index;		/* RNIC_KEY_INDEX part */
	u8 variant;
	u8 type;		/* enum rnic_mr_type_hw */
	u8 state;		/* enum rnic_mr_state_hw */
	u8 access;		/* RNIC_ACCESS_* */
	u8 page_log2;
	struct rdma_pd *pd;
	u64 iova;
	u64 length;
	u32 npages;		/* entries in pages[] */
	u32 max_pages;		/* FAST_REG: largest REG_MR list */
	u64 *pages;
};

struct rdma_eq {
	bool used;
	u64 base;
	u8 log2;
	u16 produced;
	bool armed;
	int last_arm_seq;
	unsigned int vector;
	unsigned int ncqs;
};

struct rdma_cq {
	u32 cqn;
	struct rdma_ring ring;
	struct rdma_eq *eq;
	unsigned int eqn;
	struct rdma_dbp *page;
	u16 slot;
	u16 produced;		/* CQEs written, free-running */
	bool error;
	bool armed;
	bool arm_solicited;
	int last_arm_seq;
	bool sol_valid;		/* sol_idx names a solicited or error CQE */
	u16 sol_idx;
	u32 refs;		/* QPs */
	/* completion event moderation */
	u16 mod_count;
	u16 mod_period_us;
	u16 mod_pending;	/* CQEs since the event was due */
	u64 mod_deadline;	/* 0: no event held */
	/* on rdma_dev.mod_cqs (mod_deadline was set; dropped by the tick) */
	bool mod_listed;
	struct rdma_cq *mod_next, *mod_prev;
};

struct rdma_srq {
	u32 srqn;
	struct rdma_pd *pd;
	struct rdma_dbp *page;
	u16 slot;
	struct rdma_ring wqe;	/* slots */
	struct rdma_ring idx;	/* index ring of le16 slot numbers */
	u8 rqe_log2;
	u16 pi;			/* producer index last read from the slot */
	u16 ci;			/* index ring entries taken */
	u32 limit;		/* armed limit, 0: not armed */
	bool error;
	u32 refs;		/* QPs */
	u8 *in_use;		/* per slot: taken and not completed */
};

/* An RQ or SRQ WQE taken for a message */
struct rdma_rwqe {
	bool srq;
	u16 idx;		/* RQ index or SRQ slot */
	u8 num_sge;
	struct rnic_data_sge sge[RDMA_MAX_RECV_SGE];
	u64 total;		/* sum of SGE lengths */
};

/* A send WQE after its checks: everything the engines need */
struct rdma_swqe {
	u16 idx;
	u8 opcode;		/* enum rnic_sqe_opcode */
	u8 flags;		/* RNIC_SQE_F_* */
	u8 num_sge;
	u32 length;
	u32 imm_key;		/* CPU order of ctrl.key; imm as raw wire */
	__be32 imm;
	union rnic_sqe_seg seg;
	/* SGEs, or inline payload */
	union {
		struct rnic_data_sge sge[RDMA_MAX_SEND_SGE];
		u8 inl[RDMA_MAX_INLINE];
	};
};

struct rdma_qp;

/* Queue of QPs with send work, in turn (hardware-transport.rst "Packets") */
struct rdma_runq {
	struct rdma_qp *head, *tail;
};

struct rc_qp;

struct rdma_qp {
	struct rdev *d;
	u32 qpn;
	u8 type;		/* enum rnic_qp_type_hw */
	u8 state;		/* enum rnic_qp_state_hw */
	struct rdma_pd *pd;
	struct rdma_cq *scq, *rcq;
	struct rdma_srq *srq;
	struct rdma_dbp *page;
	u16 sq_slot, rq_slot;	/* RNIC_DB_NONE: none */
	struct rdma_ring sq, rq;

	/* free-running indices */
	u16 sq_pi;		/* producer index last read */
	u16 sq_next;		/* next WQE to start */
	u16 sq_ci;		/* WQEs retired (completed) */
	u16 rq_pi;
	u16 rq_next;		/* next WQE to take */
	u16 rq_ci;		/* WQEs completed */

	/* attributes (MODIFY_QP) */
	u8 access;
	u16 pkey_index;
	u32 qkey;
	bool has_path;
	struct rnic_hdr_tmpl path;
	u8 path_mtu;
	u32 dest_qpn;
	u32 sq_psn;		/* UD: next PSN to send */
	u32 rq_psn;
	u8 timeout, retry_cnt, rnr_retry, min_rnr_timer;
	u8 max_rd_atomic, max_dest_rd_atomic;
	bool sqd_notify;
	bool sq_drained_sent;

	bool comm_est_sent;
	bool fatal_sent;	/* QP_FATAL posted for this error episode */
	bool last_wqe_sent;	/* LAST_WQE_REACHED posted */
	bool srq_taken;		/* an SRQ WQE taken, not completed */
	u16 srq_slot_taken;

	/* scheduling */
	bool queued;
	bool pfc_wait;		/* paused by PFC, parked until resumed */
	struct rdma_qp *runq_next;	/* runq link */

	u64 pfc_since;		/* when it was parked on a pause */

	u64 stats[RNIC_NUM_QP_STATS];

	/* RC: the engine's state (rc.h) and what the device keeps for it */
	struct rc_qp *rc;
	u64 rc_deadline;	/* ops->timer_set; 0: none */
	/* on rdma_dev.rc_timed (rc_deadline was set; dropped by the tick) */
	bool rc_listed;
	struct rdma_qp *rc_next, *rc_prev;
	unsigned int rc_busy;	/* inside an rc_*() call for this QP */
	bool rc_fatal_pending;	/* a device error found while rc_busy */
	u8 rc_fatal_reason;
	u64 rc_fatal_info;
};

/* A received RoCE frame after RX validation */
struct rdma_pkt {
	const u8 *frame;
	size_t len;
	u8 net;			/* enum rnic_rx_class */
	bool vlan;
	u16 vlan_tci;
	size_t l3_off;
	const u8 *smac;
	const u8 *sgid;		/* 16 bytes; IPv4 as ::ffff:a.b.c.d in sgid_buf */
	const u8 *dgid;
	u8 sgid_buf[16], dgid_buf[16];
	/* BTH */
	u8 opcode;
	bool se;
	bool mig;
	u8 pad;
	u16 pkey;
	u32 dqpn;
	bool ackreq;
	u32 psn;
	/* extension headers, valid when the opcode has them */
	u32 qkey, sqpn;		/* DETH */
	__be32 imm;		/* ImmDt */
	u32 ieth;		/* IETH */
	const u8 *reth;		/* RETH, raw */
	const u8 *aeth;		/* AETH, raw */
	const u8 *atomiceth;	/* AtomicETH, raw */
	const u8 *atomicack;	/* AtomicAckETH, raw */
	const u8 *payload;
	u32 paylen;		/* without pad */
	const u8 *bth;		/* the transport packet: BTH .. pad */
	size_t tlen;
	u16 pkey_index;		/* the table entry the P_Key matched */
};

/* The transport counters of the port */
#define RDMA_INC(d, name)		((d)->rdma->ctr[RNIC_RDMA_STAT_##name]++)
#define RDMA_ADD(d, name, n)	((d)->rdma->ctr[RNIC_RDMA_STAT_##name] += (n))
#define RDMA_QP_INC(qp, name)	((qp)->stats[RNIC_QP_STAT_##name]++)
#define RDMA_QP_ADD(qp, name, n)	((qp)->stats[RNIC_QP_STAT_##name] += (n))

struct rdma_fifo_ent {
	u16 len;
	u8 data[RDEV_MAX_FRAME];
};

/*
 * What the files below the QP layer reach above them. An SRQ that fails
 * where a WQE is fetched (rdma_wq.c) takes its QPs with it, and failing
 * a QP is rdma_qp.c's (the RC engine's, for an RC QP), which calls
 * rdma_wq.c: so it is reached through this table, which rdma_enable()
 * fills in (rdma_core.c), and never by name.
 */
struct rdma_upper {
	void (*qp_fatal)(struct rdev *d, struct rdma_qp *qp, u8 event,
			 u8 reason, u64 info);
};

struct rdma_dev {
	const struct rdma_upper *upper;	/* rdma_enable() */
	u32 num_db_pages;
	u32 max_eq;
	struct rdma_dbp *dbp;		/* num_db_pages */
	/* The allocated pages, in no order: what a kick reads */
	u16 *live_dbp;
	u32 nlive_dbp;
	struct rdma_eq eqs[RNIC_MAX_EQS + 1];	/* 1 .. max_eq */

	struct rdma_idtab pds, mrs, cqs, srqs, qps;
	bool gsi_exists;

	struct rnic_gid_entry gid[RDMA_GID_TBL_LEN];
	u16 pkey[RDMA_PKEY_TBL_LEN];

	u64 *ah_pages;		/* SET_AH_TABLE page list copy */
	u32 ah_entries;

	/* RoCE receive buffer: frames waiting for the transport */
	struct rdma_fifo_ent *fifo;
	unsigned int fifo_head, fifo_count;

	struct rdma_runq runq;
	/*
	 * The objects whose timers may be armed, so that a tick costs what
	 * is armed and not a walk of the 4096-slot tables (a tick follows
	 * every batch of events). Only the tick and object destruction
	 * take entries off; arming adds at the head.
	 */
	struct rdma_qp *rc_timed;
	struct rdma_cq *mod_cqs;
	bool eth_pending;	/* the Ethernet TX rings may have frames */
	bool kick_again;	/* a kick ring left behind: read it at the tick */
	u64 next_kick_watch;	/* rdma_kick_watch() due (ns) */
	bool busy;		/* inside rdma_pump() */
	unsigned int npaths;	/* QPs with a path template (UDP port lock) */

	u64 ctr[RNIC_NUM_RDMA_STATS];
	u8 txbuf[RDEV_TXBUF_SIZE];
};

/* ---- rdma_base.c ---- */
bool rdma_all_zero(const void *p, size_t n);
int idtab_init(struct rdma_idtab *t, unsigned int log2, u32 space,
	       u32 reserved_slots);
void idtab_fini(struct rdma_idtab *t);
int idtab_alloc(struct rdma_idtab *t, void *obj, u32 *id);
int idtab_set(struct rdma_idtab *t, void *obj, u32 id);
void *idtab_get(struct rdma_idtab *t, u32 id);
void idtab_free(struct rdma_idtab *t, u32 id);
struct rdma_qp *rdma_qp_get(struct rdev *d, u32 qpn);
struct rdma_pd *rdma_pd_get(struct rdev *d, u32 pdn);
void rdma_runq_add(struct rdev *d, struct rdma_qp *qp);
void rdma_runq_remove(struct rdev *d, struct rdma_qp *qp);
/* A RoCE frame from the wire (classified): into the receive buffer */
void rdma_rx_frame(struct rdev *d, const u8 *frame, size_t len,
		 const struct pkt_info *info);
/* Loopback: a packet of ours to our own MAC */
void rdma_rx_loopback(struct rdev *d, const u8 *frame, size_t len);
/* An async event on event queue 0 naming an object */
void rdma_event(struct rdev *d, u8 type, u8 reason, u8 obj, u32 id, u64 info);
u8 rdma_put_result(struct rdev *d, u64 addr, u32 buf_len, const void *res,
		 size_t len);
bool rdma_pkey_match(u16 a, u16 b);
/* Whether @gid (16 bytes) is ours for @net and the frame's VLAN */
bool rdma_gid_is_ours(struct rdev *d, u8 net, const u8 *gid, bool vlan,
		    u16 vid);

/* ---- rdma_core.c ---- */
int rdma_enable(struct rdev *d);		/* 0 or -ENOMEM */
void rdma_reset(struct rdev *d);		/* frees all 2.0 state, no DMA */
void rdma_pump(struct rdev *d);		/* run queued RX frames and send work */
void rdma_pfc_resume(struct rdev *d);
u64 rdma_tick(struct rdev *d, u64 now);
void rdma_dump_counters(struct rdev *d,
		      void (*out)(void *ctx, const char *line), void *ctx);

/* ---- rdma_admin.c ---- */
/* Execute a 2.0 command (opcode >= 0x20); returns enum rnic_aq_status. */
u8 rdma_admin(struct rdev *d, const union rnic_aq_entry *e,
	    union rnic_aq_resp *resp);

/* ---- rdma_db.c ---- */
/* Where @page starts in BAR2 */
unsigned int rdma_dbp_off(struct rdev *d, struct rdma_dbp *page);
int rdma_slot_assign(struct rdev *d, struct rdma_dbp *page, u8 kind, void *obj,
		   u16 *slot);
void rdma_slot_release(struct rdev *d, struct rdma_dbp *page, u16 slot);
u32 rdma_slot_read(struct rdev *d, struct rdma_dbp *page, u16 slot);

/*
 * A producer index slot value the checks accept: no undefined bits, and
 * no more WQEs ahead of @ci (retired) than the ring of 1 << @log2 holds.
 */
static inline bool rdma_slot_pi_ok(u32 v, u16 ci, u8 log2)
{
	return !(v & ~RNIC_DB_RING_PI) && rnic_ring_used(v, ci) <= (1U << log2);
}
void rdma_slot_write(struct rdev *d, struct rdma_dbp *page, u16 slot, u32 v);
struct rdma_dbp *rdma_dbp_get(struct rdev *d, u32 id);
u8 rdma_cmd_alloc_db_page(struct rdev *d, const union rnic_aq_entry *e,
			union rnic_aq_resp *resp);
u8 rdma_cmd_free_db_page(struct rdev *d, const union rnic_aq_entry *e);

/* ---- rdma_kick.c ---- */
void rdma_kick(struct rdev *d);		/* doorbell vector 3, 2.0 part */
void rdma_kick_watch(struct rdev *d);	/* kick rings left unread */
void rdma_rq_watch(struct rdev *d);	/* RQ slots of QPs in ERR */
/* Producer index slots, read on kicks */
void rdma_sq_slot(struct rdev *d, struct rdma_qp *qp);
void rdma_rq_slot(struct rdev *d, struct rdma_qp *qp);
void rdma_srq_slot(struct rdev *d, struct rdma_srq *srq);
u16 rdma_srq_avail(struct rdev *d, struct rdma_srq *srq);

/* ---- rdma_mr.c ---- */
u8 rdma_cmd_create_mr(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_query_mr(struct rdev *d, const union rnic_aq_entry *e,
		   union rnic_aq_resp *resp);
u8 rdma_cmd_destroy_mr(struct rdev *d, const union rnic_aq_entry *e);
void rdma_mr_free(struct rdma_mr *mr);
/*
 * Check a key for an access of [addr, addr + len) by @pd with @need
 * (RNIC_ACCESS_* rights, 0 for a local read); 0 or an rnic_err_reason.
 * A zero length is not checked.
 */
u8 rdma_key_check(struct rdev *d, u32 key, struct rdma_pd *pd, u8 need, u64 addr,
		u64 len, struct rdma_mr **out);
/* Copy through a checked MR; 0 or -EFAULT (page outside guest RAM). */
int rdma_mr_read(struct rdev *d, struct rdma_mr *mr, u64 addr, void *buf,
	       size_t len);
int rdma_mr_write(struct rdev *d, struct rdma_mr *mr, u64 addr, const void *buf,
		size_t len);
/*
 * Read or write @len bytes at offset @off of a scatter list, checking
 * each touched SGE's key for @pd and @need. 0, an rnic_err_reason, or
 * RNIC_ERR_DMA_OOB.
 */
u8 rdma_sgl_read(struct rdev *d, const struct rnic_data_sge *sge,
	       unsigned int n, struct rdma_pd *pd, u64 off, void *buf,
	       size_t len);
u8 rdma_sgl_write(struct rdev *d, const struct rnic_data_sge *sge,
		unsigned int n, struct rdma_pd *pd, u64 off, const void *buf,
		size_t len);
/* LOCAL_INV / REG_MR of a send WQE: 0 or an rnic_err_reason. */
u8 rdma_local_inv(struct rdev *d, struct rdma_qp *qp, u32 key);
u8 rdma_reg_mr(struct rdev *d, struct rdma_qp *qp, const struct rdma_swqe *w);
/* Either local operation of a send WQE: 0 or an rnic_err_reason. */
u8 rdma_local_op(struct rdev *d, struct rdma_qp *qp, const struct rdma_swqe *w);
/* Remote invalidation (SEND_INV at the responder): 0 or INV_KEY. */
u8 rdma_remote_inv(struct rdev *d, struct rdma_qp *qp, u32 key);

/* ---- rdma_cq.c ---- */
u8 rdma_cmd_create_eq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_destroy_eq(struct rdev *d, const union rnic_aq_entry *e);
u8 rdma_cmd_create_cq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_modify_cq(struct rdev *d, const union rnic_aq_entry *e);
u8 rdma_cmd_destroy_cq(struct rdev *d, const union rnic_aq_entry *e);
void rdma_cq_free(struct rdev *d, struct rdma_cq *cq);
/*
 * Write a CQE (phase set here). 0; -EIO if the CQ is in error or enters
 * it now (overrun, bad slot, DMA); the caller then fails the QP.
 */
int rdma_cq_post(struct rdev *d, struct rdma_cq *cq, struct rnic_rdma_cqe *cqe,
	       bool solicited);
void rdma_cq_slot(struct rdev *d, struct rdma_cq *cq);	/* kicked */
void rdma_cq_error(struct rdev *d, struct rdma_cq *cq, u8 reason, u64 info);
void rdma_eq_doorbell(struct rdev *d);		/* vector 2, completion EQs */
u64 rdma_cq_tick(struct rdev *d, u64 now);

/* ---- rdma_wq.c ---- */
bool rdma_page_log2_ok(unsigned int log2);
u8 rdma_ring_setup(struct rdev *d, struct rdma_ring *r, bool pbl, u64 addr,
		 u8 log2_depth, u8 esize_log2, u8 page_log2);
void rdma_ring_free(struct rdma_ring *r);
u64 rdma_ring_addr(const struct rdma_ring *r, u16 idx);
int rdma_ring_read(struct rdev *d, const struct rdma_ring *r, u16 idx,
		 void *buf, size_t len);
/*
 * Fetch and check send WQE @idx. 0, RNIC_ERR_DMA_OOB (ring), or the
 * syndrome of a malformed WQE (BAD_WQE; the caller counts wqe_errors).
 */
u8 rdma_sq_fetch(struct rdev *d, struct rdma_qp *qp, u16 idx,
	       struct rdma_swqe *w);
/* Just the opcode of send WQE @idx, for flush CQEs (0 if unreadable). */
u8 rdma_sq_opcode(struct rdev *d, struct rdma_qp *qp, u16 idx);
/*
 * Look at the next receive WQE of an RQ or SRQ without taking it.
 * 0 (*w filled), -ENOENT none posted, -EIO the ring or SRQ failed
 * (*syn: why; an SRQ is now in error, the QP is the caller's to fail),
 * or a positive syndrome: the WQE is malformed (the caller completes it
 * in error after taking it, and counts wqe_errors).
 */
int rdma_rwqe_peek(struct rdev *d, struct rdma_qp *qp, struct rdma_rwqe *w,
		 u8 *syn, u64 *info);
void rdma_rwqe_take(struct rdev *d, struct rdma_qp *qp, const struct rdma_rwqe *w);
void rdma_srq_error(struct rdev *d, struct rdma_srq *srq, u8 reason, u64 info);

/* ---- rdma_qp.c ---- */
u8 rdma_cmd_create_srq(struct rdev *d, const union rnic_aq_entry *e,
		     union rnic_aq_resp *resp);
u8 rdma_cmd_modify_srq(struct rdev *d, const union rnic_aq_entry *e);
u8 rdma_cmd_query_srq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_destroy_srq(struct rdev *d, const union rnic_aq_entry *e);
void rdma_srq_free(struct rdev *d, struct rdma_srq *srq);
u8 rdma_cmd_create_qp(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_modify_qp(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp);
u8 rdma_cmd_query_qp(struct rdev *d, const union rnic_aq_entry *e,
		   union rnic_aq_resp *resp);
u8 rdma_cmd_destroy_qp(struct rdev *d, const union rnic_aq_entry *e,
		       union rnic_aq_resp *resp);
void rdma_qp_free(struct rdev *d, struct rdma_qp *qp);
/*
 * The device moves @qp to ERR: QP_FATAL (or the given event, 0 for none)
 * with @reason, then flushes.
 */
void rdma_qp_fatal(struct rdev *d, struct rdma_qp *qp, u8 event, u8 reason,
		 u64 info);
/* Complete send WQE @w->idx (and retire unsignaled ones before it). */
int rdma_sq_complete(struct rdev *d, struct rdma_qp *qp, u16 idx, u8 opcode,
		   u8 status, u8 syndrome, u32 byte_len, bool signaled);
/* Complete a receive WQE; @cqe carries the receive fields. */
int rdma_rq_complete(struct rdev *d, struct rdma_qp *qp, const struct rdma_rwqe *w,
		   struct rnic_rdma_cqe *cqe, bool solicited);
/* Write flush CQEs for everything a QP in ERR holds. */
void rdma_qp_flush(struct rdev *d, struct rdma_qp *qp);
/* SQD: every WQE begun is complete (posts SQ_DRAINED if asked) */
void rdma_qp_sq_idle(struct rdev *d, struct rdma_qp *qp);
void rdma_qp_cq_failed(struct rdev *d, struct rdma_qp *qp);

/* ---- rdma_tx.c ---- */
/* Template checks: 0 or -EINVAL. @ah: an AH entry (VALID, pdn) */
int rdma_tmpl_check(struct rdev *d, const struct rnic_hdr_tmpl *t, bool ah);
/* The template's network type (enum rnic_rx_class) */
unsigned int rdma_tmpl_net(const struct rnic_hdr_tmpl *t);
/* 802.1p priority of a template's packets */
unsigned int rdma_tmpl_prio(const struct rnic_hdr_tmpl *t);
/* Largest payload a packet of this template may carry at the port MTU */
u32 rdma_tmpl_max_payload(struct rdev *d, const struct rnic_hdr_tmpl *t,
			unsigned int ext_len);
/*
 * Build and send one packet: template, BTH + extension headers (@hdrs,
 * @hlen, BTH first; the pad count is filled in here), @plen payload bytes
 * from @payload, ICRC. Loopback if the destination MAC is ours.
 * 0; -EAGAIN if the packet's priority is paused (nothing sent);
 * -E2BIG if it does not fit the port MTU (dropped, counted).
 */
int rdma_tx_packet(struct rdev *d, struct rdma_qp *qp,
		 const struct rnic_hdr_tmpl *t, u8 *hdrs, size_t hlen,
		 const void *payload, size_t plen);
/*
 * Send one transport packet (BTH .. pad, as the RC engine builds them)
 * behind template @t. 0; -EAGAIN paused; -E2BIG too long (dropped,
 * counted); -ENETDOWN the link is down (lost).
 */
int rdma_tx_raw(struct rdev *d, struct rdma_qp *qp, const struct rnic_hdr_tmpl *t,
	      const u8 *pkt, size_t plen);
/* Fill a BTH */
void rdma_bth_build(u8 *b, u8 opcode, bool se, u16 pkey, u32 dqpn, bool ackreq,
		  u32 psn);

/* ---- rdma_rx.c ---- */
/* A frame the classifier found malformed: count it per RoCE version */
void rdma_rx_malformed(struct rdev *d, const u8 *frame, size_t len);
/* Process one frame from the receive buffer */
void rdma_rx_process(struct rdev *d, const u8 *frame, size_t len);

/* ---- rdma_ud.c ---- */
/* Start one send WQE of a UD/GSI QP; false when there is nothing to do. */
bool rdma_ud_send_step(struct rdev *d, struct rdma_qp *qp);
void rdma_ud_recv(struct rdev *d, struct rdma_qp *qp, struct rdma_pkt *pkt);

/* ---- RC engine hooks (rdma_rc.c) ---- */
int rdma_rc_create(struct rdev *d, struct rdma_qp *qp);
void rdma_rc_destroy(struct rdev *d, struct rdma_qp *qp);
/* Send work: one step; false when idle or blocked */
bool rdma_rc_send_step(struct rdev *d, struct rdma_qp *qp);
/* The SQ or RQ producer index moved */
void rdma_rc_sq_doorbell(struct rdev *d, struct rdma_qp *qp);
void rdma_rc_rq_doorbell(struct rdev *d, struct rdma_qp *qp);
/* MODIFY_QP: check (before anything changes), then apply */
u8 rdma_rc_modify_check(struct rdev *d, struct rdma_qp *qp,
		      const struct rnic_aq_modify_qp *c);
void rdma_rc_modify(struct rdev *d, struct rdma_qp *qp,
		  const struct rnic_aq_modify_qp *c);
/* The device moves the QP to ERR (QP_FATAL) */
void rdma_rc_fatal(struct rdev *d, struct rdma_qp *qp, u8 reason, u64 info);
/* The QP's per-QP counters (RNIC_QP_STATS) */
const u64 *rdma_rc_qp_stats(struct rdma_qp *qp);
/* A parked QP may send again after @paused_ns of PFC pause */
void rdma_rc_resumed(struct rdev *d, struct rdma_qp *qp, u64 paused_ns);
void rdma_rc_recv(struct rdev *d, struct rdma_qp *qp, struct rdma_pkt *pkt);
u64 rdma_rc_tick(struct rdev *d, u64 now);
/* Whether send WQEs begun are still outstanding (SQD draining) */
bool rdma_rc_sq_busy(struct rdev *d, struct rdma_qp *qp);
/* SET_PKEY changed table entry @index */
void rdma_rc_pkey_changed(struct rdev *d, u16 index);
/* Fill the transport fields of QUERY_QP */
void rdma_rc_query(struct rdev *d, struct rdma_qp *qp, struct rnic_qp_query *q);

#endif /* RNICSIM_RDMA_H */
