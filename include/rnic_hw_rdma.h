/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic hardware interface, ABI 2.0: the device runs the InfiniBand
 * transport. Documentation/hardware-rdma.rst (objects, commands, queues)
 * and Documentation/hardware-transport.rst (RC and UD transport) describe
 * the same contract in prose; the three must agree.
 *
 * Included by rnic_hw.h, never on its own: 2.0 keeps 1.0's signature,
 * registers, admin and event queue mechanics and Ethernet rings, and adds
 * here the objects (PD, MR, CQ, SRQ, QP, GID and P_Key tables, AH table,
 * completion event queues, doorbell pages), their admin commands, the
 * work queue entries, the completion entry and the transport counters.
 *
 * As in 1.0: every multi-byte field is little-endian unless typed __be;
 * masks apply to the CPU-order value of the field they name; reserved
 * fields and undefined bits are written as zero and the device refuses a
 * command or WQE where they are not. "driver" fields are written by the
 * driver (or a user context) and read by the device, "device" fields the
 * other way round; neither side trusts what the other wrote.
 */
#ifndef _RNIC_HW_RDMA_H_
#define _RNIC_HW_RDMA_H_

#ifndef _RNIC_HW_H_
#error "include rnic_hw.h, not rnic_hw_rdma.h"
#endif

#include <linux/stddef.h>

#define RNIC_ABI2_MAJOR			2
/*
 * 2.1: MODIFY_QP and DESTROY_QP responses report an SRQ WQE the QP dropped
 * (RNIC_AQ_QP_F_SRQ_DROPPED); a 2.0 device leaves those bytes 0.
 */
#define RNIC_ABI2_MINOR			1

/* Everything a 2.0 device may advertise in rnic_sig.caps */
#define RNIC_CAP_ALL_ABI2			(RNIC_CAP_ALL | RNIC_CAP_TRANSPORT)

/* CTRL bits a 2.0 device accepts */
#define RNIC_CTRL_ALL_ABI2		(RNIC_CTRL_ALL | RNIC_CTRL_ABI)

/* BAR2 of a 2.0 device is at least this large (doorbell pages start at 64 KiB) */
#define RNIC_SHM_MIN_SIZE_ABI2		0x20000

/* The 24-bit QPN and PSN as the BTH carries them */
#define RNIC_BTH_QPN			GENMASK(23, 0)
#define RNIC_BTH_PSN			GENMASK(23, 0)

/* QP1, the general services QP of the port */
#define RNIC_GSI_QPN			1
/*
 * Q_Keys with this bit set are controlled: only MODIFY_QP on a privileged
 * PD may give one to a QP, and a UD WQE cannot send a controlled Q_Key
 * other than its QP's own (a WQE Q_Key with this bit set means "the QP's
 * own"). A GSI QP's Q_Key is always RNIC_QKEY_GSI.
 */
#define RNIC_QKEY_F_CONTROLLED		BIT(31)
#define RNIC_QKEY_GSI			0x80010000

/* ------------------------------------------------------------------------
 * Device limits: QUERY_RDMA_CAPS writes struct rnic_rdma_caps
 */

/* rnic_rdma_caps.flags */
#define RNIC_RDMA_CAP_RC		BIT(0)
#define RNIC_RDMA_CAP_UD		BIT(1)
#define RNIC_RDMA_CAP_GSI		BIT(2)
#define RNIC_RDMA_CAP_SRQ		BIT(3)
#define RNIC_RDMA_CAP_ATOMIC		BIT(4)	/* CMP_SWAP, FETCH_ADD */
#define RNIC_RDMA_CAP_REG_MR		BIT(5)	/* REG_MR, LOCAL_INV WQEs */
#define RNIC_RDMA_CAP_SEND_INV		BIT(6)	/* SEND_INV both ways */
#define RNIC_RDMA_CAP_CQ_MODERATION	BIT(7)	/* MODIFY_RDMA_CQ */
#define RNIC_RDMA_CAP_USER_DB		BIT(8)	/* doorbell pages for users */
/*
 * kick_ci may be read back to skip a kick: after each store of a page's
 * kick_ci the device orders it before reading kick_pi again (a full
 * barrier) and serves what it finds, so a writer that finds kick_ci short
 * of the kick_pi it had before its own entries knows the device will read
 * them without a kick (struct rnic_db_page).
 */
#define RNIC_RDMA_CAP_KICK_CI		BIT(9)
/*
 * Receive slots read on demand: the device reads a QP's RQ slot (an SRQ's
 * slot) itself before it finds the queue empty, and each heartbeat the RQ
 * slot of every QP in ERR, so a receive post needs no kick entry and no
 * kick (struct rnic_db_page).
 */
#define RNIC_RDMA_CAP_RQ_PEEK		BIT(10)
#define RNIC_RDMA_CAP_ALL		GENMASK(10, 0)

/* QUERY_RDMA_CAPS result: written by the device */
struct rnic_rdma_caps {
	/* RNIC_RDMA_CAP_* */
	__le32 flags;
	/* objects that may exist at once */
	__le32 max_qp;
	__le32 max_cq;
	__le32 max_srq;
	__le32 max_mr;
	__le32 max_pd;
	/* entries SET_AH_TABLE may give */
	__le32 max_ah;
	/* entries of one MR's page list (CREATE_MR, REG_MR) */
	__le32 max_mr_pages;
	/* largest MR in bytes */
	__le64 max_mr_size;
	/* bit n set: pages of 2^n bytes are allowed in page lists */
	__le64 page_size_cap;
	/* largest message in bytes (2^31) */
	__le32 max_msg_size;
	/* completion event queues: EQN 1 .. max_eq */
	__le16 max_eq;
	/* doorbell pages: ids 0 .. num_db_pages - 1 */
	__le16 num_db_pages;
	/* BAR2 offset of doorbell page 0; page n is at db_base + (n << db_page_log2) */
	__le32 db_base;
	u8 db_page_log2;
	/* log2 of the deepest SQ/RQ, CQ, SRQ and EQ, in entries */
	u8 max_wq_log2;
	u8 max_cq_log2;
	u8 max_srq_log2;
	u8 max_eq_log2;
	/* log2 of the largest send and receive WQE in bytes */
	u8 max_sqe_log2;
	u8 max_rqe_log2;
	u8 max_send_sge;
	u8 max_recv_sge;
	u8 max_srq_sge;
	/* largest inline payload of one send WQE in bytes */
	__le16 max_inline;
	/* READ/atomic requests outstanding as requester, per QP */
	u8 max_qp_rd_atom;
	/* READ/atomic requests kept as responder, per QP */
	u8 max_qp_dest_rd_atom;
	/* IB local CA ACK delay (4.096 us * 2^n) */
	u8 local_ca_ack_delay;
	/* largest path MTU, enum rnic_pmtu */
	u8 max_pmtu;
	__le16 gid_tbl_len;
	__le16 pkey_tbl_len;
	/* counters QUERY_RDMA_STATS returns for each scope */
	__le16 num_rdma_stats;
	__le16 num_qp_stats;
	/* tick of the transport timers in microseconds (informational) */
	__le32 timer_tick_us;
	/* RC requester window in packets (informational) */
	__le16 psn_window;
	/* RoCE receive buffer in frames, the unit of the 2.0 PFC watermarks */
	__le16 rx_fifo_frames;
	__le32 reserved[9];
};

static_assert(sizeof(struct rnic_rdma_caps) == 128);

/* ------------------------------------------------------------------------
 * Admin commands (2.0): opcodes, request structs (64-byte SQ entries) and
 * responses (bytes 8..15 of the admin completion, struct rnic_acqe2).
 * Requests and the buffers they point to are written by the driver;
 * completions, responses and query results by the device.
 */

enum rnic_aq_opcode_rdma {
	RNIC_AQ_QUERY_RDMA_CAPS		= 0x20,	/* rnic_aq_query_obj */
	RNIC_AQ_QUERY_RDMA_STATS	= 0x21,	/* rnic_aq_query_obj */
	RNIC_AQ_CREATE_EQ		= 0x22,	/* rnic_aq_create_eq */
	RNIC_AQ_DESTROY_EQ		= 0x23,	/* rnic_aq_obj */
	RNIC_AQ_ALLOC_DB_PAGE		= 0x24,	/* rnic_aq_alloc_db_page */
	RNIC_AQ_FREE_DB_PAGE		= 0x25,	/* rnic_aq_obj */
	RNIC_AQ_SET_AH_TABLE		= 0x26,	/* rnic_aq_set_ah_table */
	RNIC_AQ_MODIFY_GID		= 0x27,	/* rnic_aq_modify_gid */
	RNIC_AQ_QUERY_GID		= 0x28,	/* rnic_aq_query_obj */
	RNIC_AQ_SET_PKEY		= 0x29,	/* rnic_aq_set_pkey */
	RNIC_AQ_ALLOC_PD		= 0x30,	/* rnic_aq_alloc_pd */
	RNIC_AQ_DEALLOC_PD		= 0x31,	/* rnic_aq_obj */
	RNIC_AQ_CREATE_MR		= 0x32,	/* rnic_aq_create_mr */
	RNIC_AQ_QUERY_MR		= 0x33,	/* rnic_aq_query_obj */
	RNIC_AQ_DESTROY_MR		= 0x34,	/* rnic_aq_obj */
	RNIC_AQ_CREATE_RDMA_CQ		= 0x38,	/* rnic_aq_create_rdma_cq */
	RNIC_AQ_MODIFY_RDMA_CQ		= 0x39,	/* rnic_aq_modify_rdma_cq */
	RNIC_AQ_DESTROY_RDMA_CQ		= 0x3a,	/* rnic_aq_obj */
	RNIC_AQ_CREATE_SRQ		= 0x40,	/* rnic_aq_create_srq */
	RNIC_AQ_MODIFY_SRQ		= 0x41,	/* rnic_aq_modify_srq */
	RNIC_AQ_QUERY_SRQ		= 0x42,	/* rnic_aq_obj */
	RNIC_AQ_DESTROY_SRQ		= 0x43,	/* rnic_aq_obj */
	RNIC_AQ_CREATE_QP		= 0x48,	/* rnic_aq_create_qp */
	RNIC_AQ_MODIFY_QP		= 0x49,	/* rnic_aq_modify_qp */
	RNIC_AQ_QUERY_QP		= 0x4a,	/* rnic_aq_query_obj */
	RNIC_AQ_DESTROY_QP		= 0x4b,	/* rnic_aq_obj */
};

/*
 * A command about one existing object: DESTROY_EQ, FREE_DB_PAGE,
 * DEALLOC_PD, DESTROY_MR, DESTROY_RDMA_CQ, QUERY_SRQ, DESTROY_SRQ,
 * DESTROY_QP.
 */
struct rnic_aq_obj {
	struct rnic_aq_hdr hdr;
	/* EQN, page id, PDN, key, CQN, SRQN or QPN */
	__le32 handle;
	__le32 reserved[13];
};

static_assert(sizeof(struct rnic_aq_obj) == RNIC_AQ_ENTRY_SIZE);

/*
 * A query whose result the device DMA-writes to a buffer: QUERY_RDMA_CAPS
 * (handle 0), QUERY_RDMA_STATS, QUERY_GID (handle = index), QUERY_MR
 * (handle = key), QUERY_QP (handle = QPN). The completion's response is
 * rnic_aq_resp_query.
 */
struct rnic_aq_query_obj {
	struct rnic_aq_hdr hdr;
	/* where to write the result, 8-byte aligned */
	__le64 buf_addr;
	/* the device writes at most this many bytes; not 0 */
	__le32 buf_len;
	__le32 handle;
	/* QUERY_RDMA_STATS: enum rnic_rdma_stats_scope; others: 0 */
	u8 scope;
	u8 reserved0[3];
	__le32 reserved1[9];
};

static_assert(sizeof(struct rnic_aq_query_obj) == RNIC_AQ_ENTRY_SIZE);

/* Completion event queue: one MSI-X vector's list of CQs to poll */
struct rnic_aq_create_eq {
	struct rnic_aq_hdr hdr;
	/* ring of (1 << log2_depth) struct rnic_eqe, contiguous, 16-byte aligned */
	__le64 ring_addr;
	/* 2 .. max_eq_log2 */
	u8 log2_depth;
	u8 reserved0;
	/* MSI-X vector raised when the EQ is armed; 1 .. num_msix - 1 */
	__le16 msix_vector;
	__le32 reserved1[11];
};

static_assert(sizeof(struct rnic_aq_create_eq) == RNIC_AQ_ENTRY_SIZE);

/* EQ n's doorbell is slot 1 + n of the 1.0 doorbell page (EQ 0: slot 1) */
#define RNIC_MAX_EQS			62
#define RNIC_DB_EQ_SLOT(eqn)		(RNIC_DB_SLOT_EQ + (eqn))

/* ALLOC_DB_PAGE flags */
#define RNIC_DBP_F_USER			BIT(0)	/* to be mapped into a user context */
#define RNIC_DBP_F_ALL			GENMASK(0, 0)

struct rnic_aq_alloc_db_page {
	struct rnic_aq_hdr hdr;
	/* RNIC_DBP_F_* */
	__le32 flags;
	__le32 reserved[13];
};

static_assert(sizeof(struct rnic_aq_alloc_db_page) == RNIC_AQ_ENTRY_SIZE);

/*
 * SET_AH_TABLE: the address handle table, an array of struct rnic_hdr_tmpl
 * in host memory that the driver writes and the device reads. Entry n is
 * at page[n / RNIC_AH_PER_PAGE] + (n % RNIC_AH_PER_PAGE) * RNIC_TMPL_SIZE.
 */
#define RNIC_AH_PAGE_SIZE		4096
#define RNIC_AH_PER_PAGE		(RNIC_AH_PAGE_SIZE / RNIC_TMPL_SIZE)

struct rnic_aq_set_ah_table {
	struct rnic_aq_hdr hdr;
	/*
	 * DMA address of num_entries / RNIC_AH_PER_PAGE le64 page addresses
	 * (each RNIC_AH_PAGE_SIZE aligned); copied during the command
	 */
	__le64 pbl_addr;
	/* a multiple of RNIC_AH_PER_PAGE, at most max_ah */
	__le32 num_entries;
	__le32 reserved[11];
};

static_assert(sizeof(struct rnic_aq_set_ah_table) == RNIC_AQ_ENTRY_SIZE);

/* GID table entries */
enum rnic_gid_type {
	RNIC_GID_TYPE_ROCE_V1	= 1,
	RNIC_GID_TYPE_ROCE_V2	= 2,
};

#define RNIC_GID_F_VALID		BIT(0)	/* clear: the entry is deleted */
#define RNIC_GID_F_VLAN			BIT(1)	/* vlan_id is the entry's VLAN */
#define RNIC_GID_F_ALL			GENMASK(1, 0)

#define RNIC_GID_LEN			16

/* Written by the driver (MODIFY_GID) or the device (QUERY_GID result) */
struct rnic_gid_entry {
	__le16 index;
	/* enum rnic_gid_type; 0 when not valid */
	u8 type;
	/* RNIC_GID_F_* */
	u8 flags;
	/* with RNIC_GID_F_VLAN: VID 1..4094 */
	__le16 vlan_id;
	__le16 reserved0;
	/* the GID; an IPv4 address as ::ffff:a.b.c.d; network order */
	u8 gid[RNIC_GID_LEN];
	__le32 reserved1[2];
};

static_assert(sizeof(struct rnic_gid_entry) == 32);

/* MODIFY_GID: ib_core's add_gid (VALID) and del_gid (not VALID) */
struct rnic_aq_modify_gid {
	struct rnic_aq_hdr hdr;
	struct rnic_gid_entry entry;
	__le32 reserved[6];
};

static_assert(sizeof(struct rnic_aq_modify_gid) == RNIC_AQ_ENTRY_SIZE);

/* P_Key: bit 15 full membership, bits 14:0 the partition */
#define RNIC_PKEY_FULL			BIT(15)
#define RNIC_PKEY_BASE			GENMASK(14, 0)
#define RNIC_PKEY_DEFAULT		0xffff

struct rnic_aq_set_pkey {
	struct rnic_aq_hdr hdr;
	/* < pkey_tbl_len */
	__le16 index;
	/* 0 deletes the entry */
	__le16 pkey;
	__le32 reserved[13];
};

static_assert(sizeof(struct rnic_aq_set_pkey) == RNIC_AQ_ENTRY_SIZE);

/* ALLOC_PD flags */
#define RNIC_PD_F_PRIVILEGED		BIT(0)	/* a kernel PD */
#define RNIC_PD_F_ALL			GENMASK(0, 0)

struct rnic_aq_alloc_pd {
	struct rnic_aq_hdr hdr;
	/* RNIC_PD_F_* */
	__le32 flags;
	__le32 reserved[13];
};

static_assert(sizeof(struct rnic_aq_alloc_pd) == RNIC_AQ_ENTRY_SIZE);

/* ------------------------------------------------------------------------
 * Memory regions and keys
 *
 * A key (lkey = rkey) is RNIC_KEY_INDEX, chosen by the device at
 * CREATE_MR, and RNIC_KEY_VARIANT, which each REG_MR WQE may change
 * (ib_update_fast_reg_key()). Index 0 is never used.
 */

#define RNIC_KEY_INDEX			GENMASK(31, 8)
#define RNIC_KEY_VARIANT		GENMASK(7, 0)

/* Access rights of an MR, and the remote rights of a QP */
#define RNIC_ACCESS_LOCAL_WRITE		BIT(0)
#define RNIC_ACCESS_REMOTE_WRITE	BIT(1)
#define RNIC_ACCESS_REMOTE_READ		BIT(2)
#define RNIC_ACCESS_REMOTE_ATOMIC	BIT(3)
#define RNIC_ACCESS_ALL			GENMASK(3, 0)

enum rnic_mr_type_hw {
	RNIC_MRT_DMA		= 1,	/* iova = DMA address; privileged PD */
	RNIC_MRT_FAST_REG	= 2,	/* pages given by REG_MR WQEs */
	RNIC_MRT_PBL		= 3,	/* pages given at CREATE_MR */
};

enum rnic_mr_state_hw {
	RNIC_MRS_FREE		= 1,	/* FAST_REG, never registered */
	RNIC_MRS_VALID		= 2,
	RNIC_MRS_INVALID	= 3,	/* invalidated; REG_MR revalidates */
};

/* Page lists (MRs, rings): le64 DMA addresses, each aligned to the page size */
#define RNIC_PBL_ENTRY_SIZE		8
#define RNIC_PAGE_LOG2_MIN		12
#define RNIC_PAGE_LOG2_MAX		30

struct rnic_aq_create_mr {
	struct rnic_aq_hdr hdr;
	/* enum rnic_mr_type_hw */
	u8 type;
	/* RNIC_ACCESS_* */
	u8 access;
	/* PBL: log2 of the page size, allowed by page_size_cap */
	u8 page_log2;
	u8 reserved0;
	__le32 pdn;
	/* PBL: MR-space address of the first byte; others: 0 */
	__le64 iova;
	/* PBL: bytes; others: 0 (DMA covers all of guest RAM) */
	__le64 length;
	/* PBL: DMA address of npages le64, 8-byte aligned, copied now */
	__le64 pbl_addr;
	/* PBL: entries at pbl_addr; FAST_REG: most pages a REG_MR may give */
	__le32 npages;
	__le32 reserved1[5];
};

static_assert(sizeof(struct rnic_aq_create_mr) == RNIC_AQ_ENTRY_SIZE);

/* QUERY_MR result: written by the device */
struct rnic_mr_query {
	__le32 key;
	__le32 pdn;
	/* enum rnic_mr_type_hw, enum rnic_mr_state_hw, RNIC_ACCESS_* */
	u8 type;
	u8 state;
	u8 access;
	u8 page_log2;
	__le32 npages;
	__le64 iova;
	__le64 length;
	__le32 reserved[4];
};

static_assert(sizeof(struct rnic_mr_query) == 48);

/* ------------------------------------------------------------------------
 * Rings in host memory (CQ, SQ, RQ, SRQ)
 *
 * Without the object's PBL flag the ring is one physically contiguous
 * buffer at the given address, aligned to the entry size. With it, the
 * address is that of a page list of ceil(ring bytes / page size) le64
 * page addresses, which the device copies at create; this is how a ring
 * in user memory is given.
 */

#define RNIC_RDMA_CQE_SIZE		32

struct rnic_aq_create_rdma_cq {
	struct rnic_aq_hdr hdr;
	/* the ring of (1 << log2_depth) CQEs, or its page list */
	__le64 ring_addr;
	/* completion EQ told when the CQ is armed: 1 .. max_eq */
	__le32 eqn;
	/* doorbell page that gets the CQ's slot */
	__le32 db_page;
	/* 2 .. max_cq_log2 */
	u8 log2_depth;
	/* with RNIC_RING_F_PBL: log2 of the page size */
	u8 page_log2;
	/* RNIC_RING_F_* */
	u8 flags;
	u8 reserved0;
	__le32 reserved1[9];
};

static_assert(sizeof(struct rnic_aq_create_rdma_cq) == RNIC_AQ_ENTRY_SIZE);

#define RNIC_RING_F_PBL			BIT(0)	/* ring_addr is a page list */
#define RNIC_RING_F_ALL			GENMASK(0, 0)

/* MODIFY_RDMA_CQ: completion event moderation; 0/0 turns it off */
struct rnic_aq_modify_rdma_cq {
	struct rnic_aq_hdr hdr;
	__le32 cqn;
	/* event after this many CQEs ... */
	__le16 count;
	/* ... or this many microseconds after the first, whichever is first */
	__le16 period_us;
	__le32 reserved[12];
};

static_assert(sizeof(struct rnic_aq_modify_rdma_cq) == RNIC_AQ_ENTRY_SIZE);

/* SRQ: a WQE array and an index ring (le16 slot numbers, posting order) */
#define RNIC_SRQ_IDX_SIZE		2
#define RNIC_SRQ_F_WQE_PBL		BIT(0)	/* wqe_addr is a page list */
#define RNIC_SRQ_F_IDX_PBL		BIT(1)	/* idx_addr is a page list */
#define RNIC_SRQ_F_ALL			GENMASK(1, 0)

struct rnic_aq_create_srq {
	struct rnic_aq_hdr hdr;
	__le32 pdn;
	/* doorbell page that gets the SRQ's slot */
	__le32 db_page;
	/* (1 << log2_depth) receive WQEs of (1 << rqe_log2) bytes */
	__le64 wqe_addr;
	/* (1 << log2_depth) le16 slot numbers */
	__le64 idx_addr;
	/* 2 .. max_srq_log2 */
	u8 log2_depth;
	/* RNIC_RQE_LOG2_MIN .. max_rqe_log2 */
	u8 rqe_log2;
	/* with a PBL flag: log2 of the page size of both lists */
	u8 page_log2;
	/* RNIC_SRQ_F_* */
	u8 flags;
	/* limit armed at creation; 0: not armed */
	__le32 limit;
	__le32 reserved[6];
};

static_assert(sizeof(struct rnic_aq_create_srq) == RNIC_AQ_ENTRY_SIZE);

#define RNIC_SRQ_ATTR_LIMIT		BIT(0)
#define RNIC_SRQ_ATTR_ALL		GENMASK(0, 0)

struct rnic_aq_modify_srq {
	struct rnic_aq_hdr hdr;
	__le32 srqn;
	/* RNIC_SRQ_ATTR_* */
	__le32 attr_mask;
	/* arm: SRQ_LIMIT when fewer WQEs than this are posted; 0 disarms */
	__le32 limit;
	__le32 reserved[11];
};

static_assert(sizeof(struct rnic_aq_modify_srq) == RNIC_AQ_ENTRY_SIZE);

/* ------------------------------------------------------------------------
 * Queue pairs
 */

enum rnic_qp_type_hw {
	RNIC_QPT_RC		= 1,
	RNIC_QPT_UD		= 2,
	RNIC_QPT_GSI		= 3,	/* QP1; privileged PD, one per port */
};

/*
 * QP states: the IB states, numbered as ib_qp_state numbers them. As in
 * the IB table, any state may go to RESET and any but RESET to ERR.
 */
enum rnic_qp_state_hw {
	RNIC_QPS_RESET		= 0,
	RNIC_QPS_INIT		= 1,
	RNIC_QPS_RTR		= 2,
	RNIC_QPS_RTS		= 3,
	RNIC_QPS_SQD		= 4,
	RNIC_QPS_SQE		= 5,	/* never entered by this device */
	RNIC_QPS_ERR		= 6,
};

/* Path MTU: payload bytes per packet = 128 << value */
enum rnic_pmtu {
	RNIC_PMTU_256		= 1,
	RNIC_PMTU_512		= 2,
	RNIC_PMTU_1024		= 3,
	RNIC_PMTU_2048		= 4,
	RNIC_PMTU_4096		= 5,
};

/* CREATE_QP flags */
#define RNIC_QP_F_SRQ			BIT(0)	/* receives come from srqn; no RQ */
#define RNIC_QP_F_SQ_PBL		BIT(1)	/* sq_addr is a page list */
#define RNIC_QP_F_RQ_PBL		BIT(2)	/* rq_addr is a page list */
#define RNIC_QP_F_ALL			GENMASK(2, 0)

/* WQE sizes a QP may use, log2 of bytes */
#define RNIC_SQE_LOG2_MIN		6
#define RNIC_SQE_LOG2_MAX		9
#define RNIC_RQE_LOG2_MIN		5
#define RNIC_RQE_LOG2_MAX		9

struct rnic_aq_create_qp {
	struct rnic_aq_hdr hdr;
	/* enum rnic_qp_type_hw */
	u8 type;
	/* RNIC_QP_F_* */
	u8 flags;
	__le16 reserved0;
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	/* with RNIC_QP_F_SRQ; else 0 */
	__le32 srqn;
	/* doorbell page that gets the SQ and RQ slots */
	__le32 db_page;
	/* the SQ: (1 << sq_log2_depth) WQEs of (1 << sqe_log2) bytes */
	__le64 sq_addr;
	/* the RQ, unless RNIC_QP_F_SRQ (then 0) */
	__le64 rq_addr;
	u8 sq_log2_depth;
	u8 sqe_log2;
	/* with RNIC_QP_F_SQ_PBL: log2 of the SQ page size */
	u8 sq_page_log2;
	u8 reserved1;
	u8 rq_log2_depth;
	u8 rqe_log2;
	u8 rq_page_log2;
	u8 reserved2;
	__le32 reserved3[2];
};

static_assert(sizeof(struct rnic_aq_create_qp) == RNIC_AQ_ENTRY_SIZE);

/* MODIFY_QP attr_mask: which fields of rnic_aq_modify_qp apply */
#define RNIC_QP_ATTR_STATE		BIT(0)
#define RNIC_QP_ATTR_CUR_STATE		BIT(1)
#define RNIC_QP_ATTR_ACCESS		BIT(2)
#define RNIC_QP_ATTR_PKEY_INDEX		BIT(3)
#define RNIC_QP_ATTR_QKEY		BIT(4)
#define RNIC_QP_ATTR_PATH		BIT(5)
#define RNIC_QP_ATTR_PATH_MTU		BIT(6)
#define RNIC_QP_ATTR_TIMEOUT		BIT(7)
#define RNIC_QP_ATTR_RETRY_CNT		BIT(8)
#define RNIC_QP_ATTR_RNR_RETRY		BIT(9)
#define RNIC_QP_ATTR_RQ_PSN		BIT(10)
#define RNIC_QP_ATTR_MAX_RD_ATOMIC	BIT(11)
#define RNIC_QP_ATTR_MIN_RNR_TIMER	BIT(12)
#define RNIC_QP_ATTR_SQ_PSN		BIT(13)
#define RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC	BIT(14)
#define RNIC_QP_ATTR_DEST_QPN		BIT(15)
#define RNIC_QP_ATTR_SQD_NOTIFY		BIT(16)
#define RNIC_QP_ATTR_ALL		GENMASK(16, 0)

/* IB limits of the MODIFY_QP fields */
#define RNIC_QP_TIMEOUT_MAX		31
#define RNIC_QP_RETRY_MAX		7
#define RNIC_QP_RNR_RETRY_INFINITE	7
#define RNIC_QP_RNR_TIMER_MAX		31

struct rnic_aq_modify_qp {
	struct rnic_aq_hdr hdr;
	__le32 qpn;
	/* RNIC_QP_ATTR_*: fields not flagged keep their value */
	__le32 attr_mask;
	/* PATH: DMA address of a struct rnic_hdr_tmpl (8-byte aligned), copied */
	__le64 path_addr;
	/* SQ_PSN, RQ_PSN: RNIC_BTH_PSN */
	__le32 sq_psn;
	__le32 rq_psn;
	__le32 qkey;
	/* DEST_QPN: RNIC_BTH_QPN */
	__le32 dest_qpn;
	/*
	 * enum rnic_qp_state_hw: STATE the target, CUR_STATE the expected
	 * (the driver gives it except towards RESET and ERR)
	 */
	u8 state;
	u8 cur_state;
	/* enum rnic_pmtu; INIT->RTR only (not SQD->SQD) */
	u8 path_mtu;
	/* RNIC_ACCESS_REMOTE_* only: what incoming requests may do */
	u8 access;
	/* local ACK timeout 4.096 us * 2^timeout; 0: none */
	u8 timeout;
	u8 retry_cnt;
	/* 7: retry for ever */
	u8 rnr_retry;
	/* IB RNR timer code sent in RNR NAKs */
	u8 min_rnr_timer;
	/* READ/atomic outstanding as requester, 0 .. max_qp_rd_atom */
	u8 max_rd_atomic;
	/* responder resources, 0 .. max_qp_dest_rd_atom */
	u8 max_dest_rd_atomic;
	__le16 pkey_index;
	/* SQD_NOTIFY: 1 = post SQ_DRAINED when the SQ is drained */
	u8 sqd_notify;
	u8 reserved0[3];
	__le32 reserved1[2];
};

static_assert(sizeof(struct rnic_aq_modify_qp) == RNIC_AQ_ENTRY_SIZE);

/* QUERY_QP result flags */
#define RNIC_QPQ_F_SQ_DRAINING		BIT(0)	/* in SQD, not yet drained */
#define RNIC_QPQ_F_SQD_NOTIFY		BIT(1)
#define RNIC_QPQ_F_PATH			BIT(2)	/* a path has been set */

/* QUERY_QP result: written by the device */
struct rnic_qp_query {
	/*
	 * enum rnic_qp_state_hw, enum rnic_pmtu (0 for UD and GSI),
	 * RNIC_ACCESS_*, RNIC_QPQ_F_*
	 */
	u8 state;
	u8 path_mtu;
	u8 access;
	u8 flags;
	/* next PSN the requester sends; next PSN the responder expects */
	__le32 sq_psn;
	__le32 rq_psn;
	__le32 qkey;
	__le32 dest_qpn;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	__le16 pkey_index;
	/* free-running indices: WQEs completed, and the latest PI read */
	__le16 sq_ci;
	__le16 sq_pi;
	__le16 rq_ci;
	__le16 rq_pi;
	/* oldest unacknowledged PSN; retries left; READ/atomic in flight */
	__le32 unacked_psn;
	u8 retry_left;
	u8 rnr_retry_left;
	u8 rd_atomic_out;
	u8 resp_res_used;
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 srqn;
	__le32 reserved;
};

static_assert(sizeof(struct rnic_qp_query) == 64);

/* ------------------------------------------------------------------------
 * Admin completion, 2.0 view: the same 16 bytes as struct rnic_acqe, whose
 * result and reserved1 words carry each command's response.
 */

/* CREATE_EQ, ALLOC_PD, CREATE_MR (the key), and commands with no other output */
struct rnic_aq_resp_id {
	__le32 id;
	__le32 reserved;
};

/* ALLOC_DB_PAGE */
struct rnic_aq_resp_db_page {
	__le32 page;
	/* the value to write to BAR0 DOORBELL after this page's kick ring */
	__le32 kick;
};

/* CREATE_RDMA_CQ: the CQN and its slot's byte offset in the page */
struct rnic_aq_resp_create_cq {
	__le32 cqn;
	__le16 db_off;
	__le16 reserved;
};

/* CREATE_SRQ: the SRQN and its slot's byte offset in the page */
struct rnic_aq_resp_create_srq {
	__le32 srqn;
	__le16 db_off;
	__le16 reserved;
};

/* CREATE_QP: RNIC_DB_NONE for rq_db_off with RNIC_QP_F_SRQ */
struct rnic_aq_resp_create_qp {
	__le32 qpn;
	__le16 sq_db_off;
	__le16 rq_db_off;
};

/*
 * rnic_aq_resp_modify_qp.flags, rnic_aq_resp_destroy_qp.flags: the QP held
 * a WQE taken from its SRQ, in slot srq_slot, and went to RESET or was
 * destroyed before completing it. No CQE for that WQE follows, so the
 * driver learns here that the slot is free again.
 */
#define RNIC_AQ_QP_F_SRQ_DROPPED	BIT(0)

/* MODIFY_QP: the state after the command; on BAD_TRANSITION, the state now */
struct rnic_aq_resp_modify_qp {
	u8 state;
	/* RNIC_AQ_QP_F_* */
	u8 flags;
	/* with RNIC_AQ_QP_F_SRQ_DROPPED: the slot; else 0 */
	__le16 srq_slot;
	__le32 reserved1;
};

/* DESTROY_QP: flags and srq_slot as MODIFY_QP's, at the same offsets */
struct rnic_aq_resp_destroy_qp {
	u8 reserved0;
	u8 flags;
	__le16 srq_slot;
	__le32 reserved1;
};

static_assert(offsetof(struct rnic_aq_resp_modify_qp, flags) ==
	      offsetof(struct rnic_aq_resp_destroy_qp, flags));
static_assert(offsetof(struct rnic_aq_resp_modify_qp, srq_slot) ==
	      offsetof(struct rnic_aq_resp_destroy_qp, srq_slot));

/* QUERY_SRQ */
struct rnic_aq_resp_query_srq {
	/* armed limit, 0 if not armed */
	__le32 limit;
	/* WQEs posted and not yet taken by a QP */
	__le16 avail;
	/* 0: ready, 1: error */
	u8 error;
	u8 reserved;
};

/* QUERY_*: the size in bytes of the full result */
struct rnic_aq_resp_query {
	__le32 len;
	__le32 reserved;
};

union rnic_aq_resp {
	struct rnic_aq_resp_id id;
	struct rnic_aq_resp_db_page db_page;
	struct rnic_aq_resp_create_cq create_cq;
	struct rnic_aq_resp_create_srq create_srq;
	struct rnic_aq_resp_create_qp create_qp;
	struct rnic_aq_resp_modify_qp modify_qp;
	struct rnic_aq_resp_destroy_qp destroy_qp;
	struct rnic_aq_resp_query_srq query_srq;
	struct rnic_aq_resp_query query;
	u8 raw[8];
};

static_assert(sizeof(union rnic_aq_resp) == 8);

/* Written by the device, first word (with the phase bit) last */
struct rnic_acqe2 {
	/* enum rnic_aq_status */
	u8 status;
	/* RNIC_ACQE_F_* */
	u8 flags;
	__le16 cmd_id;
	__le16 sq_head;
	__le16 reserved0;
	union rnic_aq_resp resp;
};

static_assert(sizeof(struct rnic_acqe2) == RNIC_ACQ_ENTRY_SIZE);
static_assert(offsetof(struct rnic_acqe2, resp) == offsetof(struct rnic_acqe, result));

/* ------------------------------------------------------------------------
 * Header template: the L2-L4 headers the driver builds for an RC QP's path
 * (MODIFY_QP PATH) and for an address handle (AH table entry). The device
 * sends hdr[0 .. hdr_len) verbatim, fills in the per-packet fields (GRH or
 * IPv6 payload length, IPv4 total length and header checksum, UDP length,
 * UDP checksum 0) and appends BTH, extension headers, payload and ICRC.
 * The driver writes those per-packet fields as zero and the device ignores
 * them. Everything else goes out as written: an IPv4 identification may be
 * constant (the driver writes 0; DF is always set, the flags and fragment
 * word is exactly 0x4000). Written by the driver only; the device reads
 * it (and never trusts it).
 */

#define RNIC_TMPL_SIZE			128
#define RNIC_TMPL_HDR_MAX		112

/* rnic_hdr_tmpl.flags */
#define RNIC_TMPL_NET			GENMASK(1, 0)	/* enum rnic_rx_class, not ETH */
#define RNIC_TMPL_F_VLAN		BIT(2)	/* an 802.1Q tag follows the MACs */
#define RNIC_TMPL_F_VALID		BIT(31)	/* AH table: the entry is in use */
#define RNIC_TMPL_F_ALL			(RNIC_TMPL_NET | RNIC_TMPL_F_VLAN | RNIC_TMPL_F_VALID)

struct rnic_hdr_tmpl {
	/* RNIC_TMPL_*; the driver writes VALID last (dma_wmb() before) */
	__le32 flags;
	/* AH table: the PD whose QPs may use the entry; path: 0 */
	__le32 pdn;
	/* bytes of hdr used: rnic_tmpl_hdr_len() of NET and VLAN */
	u8 hdr_len;
	/* 802.1p priority of an untagged template (PFC); tagged: 0 */
	u8 prio;
	u8 reserved[6];
	/* Ethernet [+ 802.1Q] + GRH, or + IPv4/IPv6 + UDP; network order */
	u8 hdr[RNIC_TMPL_HDR_MAX];
};

static_assert(sizeof(struct rnic_hdr_tmpl) == RNIC_TMPL_SIZE);

/* ------------------------------------------------------------------------
 * Doorbell pages (2.0): BAR2 + db_base + (id << db_page_log2), each given
 * to one context by ALLOC_DB_PAGE.
 *
 * A slot holds one queue's doorbell, placed by the device at create. The
 * kick ring says which slots moved: after writing one or more slots the
 * writer appends each slot number to kick[], advances kick_pi, then
 * writes the page's kick value to BAR0 DOORBELL. The device reads only
 * the slots named since its last visit (all the page's slots if kick_pi
 * ran more than RNIC_DBP_KICK_DEPTH ahead), so a kick never costs a scan
 * of every queue. Slots are the state, kick entries only hints: a lost or
 * bogus entry can delay work but never create or lose it.
 *
 * With RNIC_RDMA_CAP_KICK_CI a writer may skip the BAR0 write: after
 * storing kick_pi it issues a full barrier, reads BAR0 (which flushes the
 * store to the device) and reads kick_ci; if that is
 * not the kick_pi it found before its entries, the device has not yet
 * stored kick_ci for earlier entries and will read kick_pi again after it
 * does (the device's barrier pairs with the writer's), so the new entries
 * are served without a kick. A kick saved is a BAR0 write, a VM exit and
 * a wake-up of the device less while the device is behind.
 *
 * With RNIC_RDMA_CAP_RQ_PEEK a receive post (an RQ or SRQ slot) needs
 * neither an entry nor a kick: the device reads the slot when it has no
 * receive WQE left it knows of, before an RNR NAK or a UD drop, and reads
 * the RQ slot of each QP in ERR every heartbeat, so a receive posted
 * after an error is flushed within a heartbeat period (the writer that
 * wants it at once, after its own move to ERR, names the slot and kicks).
 */

#define RNIC_DBP_SIZE			4096
#define RNIC_DBP_SLOTS			512
#define RNIC_DBP_KICK_DEPTH		512
/* the model's db_base; drivers use rnic_rdma_caps.db_base */
#define RNIC_DBP_BASE_DEFAULT		0x10000
/* "no slot" (rq_db_off of a QP with an SRQ) */
#define RNIC_DB_NONE			0xffff

/* kick_pi: free-running count of kick entries written */
#define RNIC_DBP_KICK_PI		GENMASK(15, 0)

/* RDMA CQ slot: 1.0's RNIC_DB_CQ_CI, _ARM_SEQ and _ARM, and this */
#define RNIC_DB_CQ_SOLICITED		BIT(30)	/* arm for solicited/error CQEs only */

struct rnic_db_page {
	/* driver: SQ/RQ/SRQ producer index or CQ consumer index and arm */
	__le32 slot[RNIC_DBP_SLOTS];
	/* driver: slot numbers written, in order, modulo the depth */
	__le16 kick[RNIC_DBP_KICK_DEPTH];
	/* driver: RNIC_DBP_KICK_PI */
	__le32 kick_pi;
	__le32 reserved0[15];
	/*
	 * device: kick entries consumed (RNIC_DBP_KICK_PI); read back only
	 * with RNIC_RDMA_CAP_KICK_CI
	 */
	__le32 kick_ci;
	__le32 reserved1[239];
};

static_assert(sizeof(struct rnic_db_page) == RNIC_DBP_SIZE);

/* ------------------------------------------------------------------------
 * Work queue entries
 *
 * Every WQE of a queue has the queue's fixed size. A send WQE is a 16-byte
 * control segment, a 32-byte opcode segment and a data segment (SGEs or
 * inline bytes) to the end of the WQE; a receive WQE is a 16-byte header
 * and SGEs. SGE addresses are MR-space addresses under the SGE's lkey,
 * never DMA addresses. WQEs are written by the driver (later also by a
 * user context); the device only reads work queue rings.
 */

struct rnic_data_sge {
	__le64 addr;
	__le32 len;
	__le32 lkey;
};

static_assert(sizeof(struct rnic_data_sge) == 16);

enum rnic_sqe_opcode {
	RNIC_SQE_OP_SEND		= 1,
	RNIC_SQE_OP_SEND_IMM		= 2,
	RNIC_SQE_OP_SEND_INV		= 3,
	RNIC_SQE_OP_WRITE		= 4,
	RNIC_SQE_OP_WRITE_IMM		= 5,
	RNIC_SQE_OP_READ		= 6,
	RNIC_SQE_OP_CMP_SWAP		= 7,
	RNIC_SQE_OP_FETCH_ADD		= 8,
	RNIC_SQE_OP_LOCAL_INV		= 9,
	RNIC_SQE_OP_REG_MR		= 10,
};

/* rnic_sqe_ctrl.flags */
#define RNIC_SQE_F_SIGNALED		BIT(0)	/* write a CQE on success */
#define RNIC_SQE_F_SOLICITED		BIT(1)	/* set SE on the last packet */
#define RNIC_SQE_F_FENCE		BIT(2)	/* wait for earlier READ/atomic */
#define RNIC_SQE_F_INLINE		BIT(3)	/* data segment holds the payload */
#define RNIC_SQE_F_ALL			GENMASK(3, 0)

struct rnic_sqe_ctrl {
	/* enum rnic_sqe_opcode */
	u8 opcode;
	/* RNIC_SQE_F_* */
	u8 flags;
	/* SGEs in the data segment; 0 with RNIC_SQE_F_INLINE */
	u8 num_sge;
	u8 reserved0;
	/* message bytes: the SGE lengths' sum, or the inline bytes */
	__le32 length;
	union {
		/* SEND_IMM, WRITE_IMM: as it goes on the wire */
		__be32 imm_data;
		/* SEND_INV: the peer's key; LOCAL_INV: ours; REG_MR: the new key */
		__le32 key;
	};
	__le32 reserved1;
};

static_assert(sizeof(struct rnic_sqe_ctrl) == 16);

/* WRITE, WRITE_IMM, READ */
struct rnic_sqe_rdma {
	__le64 remote_addr;
	__le32 rkey;
	__le32 reserved[5];
};

/* CMP_SWAP, FETCH_ADD: one 8-byte SGE receives the original value */
struct rnic_sqe_atomic {
	/* 8-byte aligned */
	__le64 remote_addr;
	__le32 rkey;
	__le32 reserved;
	/* CMP_SWAP: compare; FETCH_ADD: add */
	__le64 compare_add;
	/* CMP_SWAP: swap; FETCH_ADD: 0 */
	__le64 swap;
};

/* SEND, SEND_IMM on UD and GSI QPs */
struct rnic_sqe_ud {
	/* AH table index; 0 is a malformed WQE, other bad ones BAD_AH */
	__le32 ah;
	/* RNIC_BTH_QPN */
	__le32 remote_qpn;
	/*
	 * with RNIC_QKEY_F_CONTROLLED set, the QP's own Q_Key is sent: a WQE
	 * cannot send a controlled Q_Key other than its QP's own
	 */
	__le32 remote_qkey;
	/* GSI: P_Key table index to send with; others: 0 */
	__le16 pkey_index;
	__le16 reserved0;
	__le32 reserved1[4];
};

/* REG_MR (privileged PD): the new key is in rnic_sqe_ctrl.key */
struct rnic_sqe_reg_mr {
	/* MR-space address of the first byte; may be inside the first page */
	__le64 iova;
	__le64 length;
	/* DMA address of npages le64, 8-byte aligned; read while the WQE runs */
	__le64 pbl_addr;
	__le16 npages;
	u8 page_log2;
	/* RNIC_ACCESS_* */
	u8 access;
	__le32 reserved;
};

union rnic_sqe_seg {
	struct rnic_sqe_rdma rdma;
	struct rnic_sqe_atomic atomic;
	struct rnic_sqe_ud ud;
	struct rnic_sqe_reg_mr reg_mr;
	u8 raw[32];
};

static_assert(sizeof(union rnic_sqe_seg) == 32);

/* Send WQE header; the data segment follows, to the end of the WQE */
struct rnic_sqe {
	struct rnic_sqe_ctrl ctrl;
	union rnic_sqe_seg seg;
	/* SGEs, or with RNIC_SQE_F_INLINE the payload bytes */
	struct rnic_data_sge sge[];
};

#define RNIC_SQE_HDR_SIZE		48
static_assert(sizeof(struct rnic_sqe) == RNIC_SQE_HDR_SIZE);

/* Receive WQE header (RQ and SRQ); SGEs follow, to the end of the WQE */
struct rnic_rqe {
	u8 num_sge;
	u8 reserved0[3];
	__le32 reserved1[3];
	struct rnic_data_sge sge[];
};

#define RNIC_RQE_HDR_SIZE		16
static_assert(sizeof(struct rnic_rqe) == RNIC_RQE_HDR_SIZE);

/* ------------------------------------------------------------------------
 * Completion queue entry (2.0 RDMA CQs): written by the device only
 */

/*
 * Work completion status: the IB statuses the device reports. A driver
 * maps a value it does not know to IB_WC_GENERAL_ERR and still completes
 * the WQE; an unknown opcode, unlike an unknown status, is a device error.
 */
enum rnic_wc_status {
	RNIC_WC_SUCCESS			= 0,
	RNIC_WC_LOC_LEN_ERR		= 1,
	RNIC_WC_LOC_QP_OP_ERR		= 2,
	RNIC_WC_LOC_PROT_ERR		= 3,
	RNIC_WC_WR_FLUSH_ERR		= 4,
	RNIC_WC_LOC_ACCESS_ERR		= 5,
	RNIC_WC_BAD_RESP_ERR		= 6,
	RNIC_WC_REM_INV_REQ_ERR		= 7,
	RNIC_WC_REM_ACCESS_ERR		= 8,
	RNIC_WC_REM_OP_ERR		= 9,
	RNIC_WC_RETRY_EXC_ERR		= 10,
	RNIC_WC_RNR_RETRY_EXC_ERR	= 11,
	RNIC_WC_FATAL_ERR		= 12,
	RNIC_WC_GENERAL_ERR		= 13,
};

/*
 * rnic_rdma_cqe.opcode: a send-queue completion carries its WQE's opcode
 * (enum rnic_sqe_opcode), a receive completion one of these. A receive
 * that fails before its message is known, a flushed one included (also on
 * an SRQ-attached QP), is RNIC_CQE_OP_RECV.
 */
#define RNIC_CQE_OP_RECV_BIT		0x40
#define RNIC_CQE_OP_RECV		0x40	/* SEND, SEND_IMM, SEND_INV */
#define RNIC_CQE_OP_RECV_WRITE_IMM	0x41	/* WRITE_IMM */

/* rnic_rdma_cqe.flags */
#define RNIC_RCQE_F_PHASE		BIT(0)
#define RNIC_RCQE_F_IMM			BIT(1)	/* imm_data valid */
#define RNIC_RCQE_F_INV			BIT(2)	/* key invalidated (SEND_INV) */
#define RNIC_RCQE_F_GRH			BIT(3)	/* UD: buffer starts with 40 B header */
#define RNIC_RCQE_F_VLAN		BIT(4)	/* UD: vlan_tci valid */
#define RNIC_RCQE_F_SRQ			BIT(5)	/* wqe_idx is an SRQ slot */

/* rnic_rdma_cqe.src */
#define RNIC_RCQE_SRC_QP		GENMASK(23, 0)	/* UD: sender's QPN */
#define RNIC_RCQE_NET			GENMASK(27, 24)	/* UD: enum rnic_rx_class */

struct rnic_rdma_cqe {
	/*
	 * The device writes this first word (flags, opcode, status,
	 * syndrome) last. RNIC_RCQE_F_*
	 */
	u8 flags;
	/* enum rnic_sqe_opcode or RNIC_CQE_OP_RECV*; valid in errors too */
	u8 opcode;
	/* enum rnic_wc_status */
	u8 status;
	/* enum rnic_err_reason: why, when status is not SUCCESS */
	u8 syndrome;
	/* RNIC_BTH_QPN: the QP the WQE belongs to */
	__le32 qpn;
	/* free-running index of the WQE in its SQ/RQ, or its SRQ slot */
	__le16 wqe_idx;
	/* receive: P_Key index the packet matched */
	__le16 pkey_index;
	/*
	 * receive: bytes placed (WRITE_IMM: bytes written; UD/GSI: without
	 * the 40-byte header area, which the driver adds for ib_wc);
	 * send: message length
	 */
	__le32 byte_len;
	union {
		/* RNIC_RCQE_F_IMM: as it came on the wire */
		__be32 imm_data;
		/* RNIC_RCQE_F_INV: the key invalidated */
		__le32 inv_key;
	};
	/* UD receive: RNIC_RCQE_SRC_QP, RNIC_RCQE_NET */
	__le32 src;
	/* UD receive: the sender's MAC */
	u8 smac[6];
	/* RNIC_RCQE_F_VLAN: the tag of the received frame */
	__le16 vlan_tci;
};

static_assert(sizeof(struct rnic_rdma_cqe) == RNIC_RDMA_CQE_SIZE);

/* ------------------------------------------------------------------------
 * Transport counters: QUERY_RDMA_STATS writes them as le64 in this order.
 */

enum rnic_rdma_stats_scope {
	RNIC_RDMA_STATS_SCOPE_PORT	= 0,	/* RNIC_RDMA_STATS, handle 0 */
	RNIC_RDMA_STATS_SCOPE_QP	= 1,	/* RNIC_QP_STATS, handle = QPN */
};

#define RNIC_RDMA_STATS(op)			\
	op(rc_req_packets)			\
	op(rc_resp_packets)			\
	op(ud_send_packets)			\
	op(ud_recv_packets)			\
	op(read_requests_rcvd)			\
	op(atomic_requests_rcvd)		\
	op(retransmits)				\
	op(local_ack_timeouts)			\
	op(retry_exceeded)			\
	op(rnr_retry_exceeded)			\
	op(acks_sent)				\
	op(acks_rcvd)				\
	op(rnr_naks_sent)			\
	op(rnr_naks_rcvd)			\
	op(nak_seq_sent)			\
	op(nak_seq_rcvd)			\
	op(nak_inv_req_sent)			\
	op(nak_inv_req_rcvd)			\
	op(nak_rem_access_sent)			\
	op(nak_rem_access_rcvd)			\
	op(nak_rem_op_sent)			\
	op(nak_rem_op_rcvd)			\
	op(duplicate_requests)			\
	op(duplicate_responses)			\
	op(out_of_sequence)			\
	op(resp_res_exhausted)			\
	op(rx_icrc_errors_v1)			\
	op(rx_icrc_errors_v2)			\
	op(rx_drop_malformed_v1)		\
	op(rx_drop_malformed_v2)		\
	op(rx_drop_not_ours_v1)			\
	op(rx_drop_not_ours_v2)			\
	op(rx_drop_bad_bth)			\
	op(rx_drop_unknown_qpn)			\
	op(rx_drop_qp_type)			\
	op(rx_drop_qp_state)			\
	op(rx_drop_bad_pkey)			\
	op(rx_drop_bad_src)			\
	op(rx_drop_bad_qkey)			\
	op(rx_drop_bad_length)			\
	op(rx_drop_no_recv_wqe)			\
	op(rx_drop_too_long)			\
	op(rx_drop_multicast)			\
	op(rx_drop_fifo_full)			\
	op(rx_ecn_ce)				\
	op(tx_drop_too_long)			\
	op(wqe_errors)				\
	op(key_violations)			\
	op(cqe_errors)				\
	op(cqe_flushed)				\
	op(qp_errors)				\
	op(cq_errors)				\
	op(srq_limit_events)			\
	op(kicks)				\
	op(kick_overflows)			\
	op(bad_kicks)				\
	op(loopback_packets)			\
	op(kick_rechecks)			\
	op(kick_stalls)				\
	op(rq_peeks)

#define RNIC_QP_STATS(op)			\
	op(tx_packets)				\
	op(tx_bytes)				\
	op(rx_packets)				\
	op(rx_bytes)				\
	op(retransmits)				\
	op(local_ack_timeouts)			\
	op(rnr_naks_sent)			\
	op(rnr_naks_rcvd)			\
	op(nak_seq_sent)			\
	op(nak_seq_rcvd)			\
	op(duplicate_requests)			\
	op(out_of_sequence)

#define RNIC_RDMA_STAT_ENUM(name)	RNIC_RDMA_STAT_##name,
#define RNIC_QP_STAT_ENUM(name)		RNIC_QP_STAT_##name,

enum rnic_rdma_stat {
	RNIC_RDMA_STATS(RNIC_RDMA_STAT_ENUM)
	RNIC_NUM_RDMA_STATS
};

enum rnic_qp_stat {
	RNIC_QP_STATS(RNIC_QP_STAT_ENUM)
	RNIC_NUM_QP_STATS
};

/* ------------------------------------------------------------------------
 * Helpers. Pure functions of their arguments: no device access.
 */

/**
 * rnic_sig_serves() - whether a signature block offers an ABI major
 * @magic: CPU-order value of rnic_sig.magic
 * @abi_major: CPU-order value of rnic_sig.abi_major
 * @abi_compat: CPU-order value of rnic_sig.abi_compat
 * @want: the ABI major the caller speaks
 *
 * Return: true if the device can be driven with ABI @want.
 */
static inline bool rnic_sig_serves(u32 magic, u16 abi_major, u16 abi_compat,
				   unsigned int want)
{
	if (magic != RNIC_SIG_MAGIC || !want || want > 15)
		return false;
	return abi_major == want || (abi_compat & BIT(want));
}

/**
 * rnic_key_build() - a memory key from its parts
 * @index: RNIC_KEY_INDEX part (the device's choice)
 * @variant: RNIC_KEY_VARIANT part
 *
 * Return: the 32-bit key.
 */
static inline u32 rnic_key_build(u32 index, u8 variant)
{
	return FIELD_PREP(RNIC_KEY_INDEX, index) |
	       FIELD_PREP(RNIC_KEY_VARIANT, variant);
}

/**
 * rnic_db_rdma_cq() - doorbell slot value of an RDMA CQ
 * @ci: free-running consumer index (CQEs consumed)
 * @arm: request an event for the next CQE
 * @solicited: with @arm, only for a solicited or error CQE
 * @arm_seq: must differ from the previous arm's to re-arm
 *
 * Return: the le32 slot value in CPU order.
 */
static inline u32 rnic_db_rdma_cq(u16 ci, bool arm, bool solicited, u8 arm_seq)
{
	u32 v = rnic_db_cq(ci, arm, arm_seq);

	if (arm && solicited)
		v |= RNIC_DB_CQ_SOLICITED;
	return v;
}

/**
 * rnic_sqe_max_sge() - SGEs a send WQE of a given size holds
 * @sqe_log2: log2 of the WQE size in bytes
 *
 * Return: the SGE count.
 */
static inline unsigned int rnic_sqe_max_sge(unsigned int sqe_log2)
{
	return ((1U << sqe_log2) - RNIC_SQE_HDR_SIZE) /
	       sizeof(struct rnic_data_sge);
}

/**
 * rnic_sqe_max_inline() - inline payload a send WQE of a given size holds
 * @sqe_log2: log2 of the WQE size in bytes
 *
 * Return: bytes.
 */
static inline unsigned int rnic_sqe_max_inline(unsigned int sqe_log2)
{
	return (1U << sqe_log2) - RNIC_SQE_HDR_SIZE;
}

/**
 * rnic_rqe_max_sge() - SGEs a receive WQE of a given size holds
 * @rqe_log2: log2 of the WQE size in bytes
 *
 * Return: the SGE count.
 */
static inline unsigned int rnic_rqe_max_sge(unsigned int rqe_log2)
{
	return ((1U << rqe_log2) - RNIC_RQE_HDR_SIZE) /
	       sizeof(struct rnic_data_sge);
}

/**
 * rnic_pmtu_bytes() - payload bytes per packet of a path MTU
 * @pmtu: enum rnic_pmtu
 *
 * Return: 256 .. 4096, or 0 for a value that is not a path MTU.
 */
static inline unsigned int rnic_pmtu_bytes(unsigned int pmtu)
{
	if (pmtu < RNIC_PMTU_256 || pmtu > RNIC_PMTU_4096)
		return 0;
	return 128U << pmtu;
}

/**
 * rnic_tmpl_hdr_len() - header template length for a network type
 * @net: enum rnic_rx_class (ROCE_V1, ROCE_V2_IPV4 or ROCE_V2_IPV6)
 * @vlan: whether the template carries an 802.1Q tag
 *
 * Return: Ethernet (+ 4 with @vlan) + GRH, IPv4 + UDP or IPv6 + UDP
 * bytes, or 0 for an unknown @net.
 */
static inline unsigned int rnic_tmpl_hdr_len(unsigned int net, bool vlan)
{
	unsigned int l2 = 14 + (vlan ? 4 : 0);

	switch (net) {
	case RNIC_RX_CLASS_ROCE_V1:
		return l2 + 40;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		return l2 + 20 + 8;
	case RNIC_RX_CLASS_ROCE_V2_IPV6:
		return l2 + 40 + 8;
	default:
		return 0;
	}
}

/**
 * rnic_ack_timeout_ns() - the IB local ACK timeout a QP asks for
 * @timeout: rnic_aq_modify_qp.timeout, 0 .. 31
 *
 * Return: 4.096 us * 2^@timeout in ns; 0 means no timeout.
 */
static inline u64 rnic_ack_timeout_ns(unsigned int timeout)
{
	if (!timeout || timeout > RNIC_QP_TIMEOUT_MAX)
		return 0;
	return 4096ULL << timeout;
}

/**
 * rnic_rnr_delay_us() - delay an IB RNR timer code stands for
 * @code: min_rnr_timer, or the timer field of a received RNR NAK, 0 .. 31
 *
 * Return: microseconds (the IB specification's table: code 0 is the
 * longest, 655.36 ms; 1 is 10 us), or 0 for a code above 31.
 */
static inline u32 rnic_rnr_delay_us(unsigned int code)
{
	static const u32 us[RNIC_QP_RNR_TIMER_MAX + 1] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return code <= RNIC_QP_RNR_TIMER_MAX ? us[code] : 0;
}

/**
 * rnic_rdma_cqe_phase() - phase bit of an RDMA CQE
 * @cqe: completion entry
 *
 * Read the phase first; read the rest only after a read barrier.
 *
 * Return: 0 or 1.
 */
static inline u8 rnic_rdma_cqe_phase(const struct rnic_rdma_cqe *cqe)
{
	return !!(cqe->flags & RNIC_RCQE_F_PHASE);
}

#endif /* _RNIC_HW_RDMA_H_ */
