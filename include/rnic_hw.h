/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic hardware interface: the one contract between the rnic kernel driver
 * and the device (the rnicsim reference model). Documentation/hardware.rst
 * describes the same interface in prose; the two must agree.
 *
 * Every multi-byte field the driver and the device exchange through BAR2 or
 * guest memory is little-endian. Field masks are used with FIELD_PREP() and
 * FIELD_GET() on the CPU-order value of the field they belong to.
 *
 * Ownership of the fields: "driver" fields are written by the driver and
 * only read by the device, "device" fields the other way round. The device
 * treats every value it reads as untrusted.
 *
 * The interface is ABI 2.0: the device runs the InfiniBand transport. This
 * file holds the common machinery (signature, registers, admin queue, event
 * queue, the netdev's Ethernet rings) that ABI 1.0 introduced; 1.0 itself,
 * where the device was an Ethernet NIC with ICRC offload and the driver ran
 * the RoCE transport, is withdrawn. rnic_hw_rdma.h, included at the end, adds
 * 2.0's objects, commands, work queue and completion formats. The driver
 * asks for 2.0 at enable (CTRL.ABI).
 */
#ifndef _RNIC_HW_H_
#define _RNIC_HW_H_

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/bitfield.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>

/* ------------------------------------------------------------------------
 * PCI identity and BARs
 */

#define RNIC_PCI_VENDOR_ID		0x1af4	/* Red Hat, Inc. (ivshmem) */
#define RNIC_PCI_DEVICE_ID		0x1110	/* Inter-VM shared memory */

#define RNIC_BAR_IVSHMEM		0	/* ivshmem registers (MMIO) */
#define RNIC_BAR_MSIX			1	/* MSI-X table and PBA */
#define RNIC_BAR_SHM			2	/* shared memory laid out below */

/* BAR0: ivshmem-doorbell registers (le32 each) */
#define RNIC_IVSHMEM_INTR_MASK		0x00
#define RNIC_IVSHMEM_INTR_STATUS	0x04
#define RNIC_IVSHMEM_IV_POSITION	0x08	/* this guest's peer id */
#define RNIC_IVSHMEM_DOORBELL		0x0c

/* BAR0 Doorbell value: (peer << 16) | vector */
#define RNIC_IVSHMEM_DB_PEER		GENMASK(31, 16)
#define RNIC_IVSHMEM_DB_VECTOR		GENMASK(15, 0)

/* The device (model) is always ivshmem peer 0. */
#define RNIC_MODEL_PEER_ID		0

/*
 * Device-side doorbell vectors: what the driver writes to the low 16 bits
 * of the BAR0 Doorbell register, after updating BAR2. ABI 2.0 doorbell
 * pages are kicked with the value ALLOC_DB_PAGE returns (rnic_hw_rdma.h).
 */
enum rnic_db_vector {
	RNIC_DB_VEC_CTRL	= 0,	/* register file changed (CTRL) */
	RNIC_DB_VEC_ADMIN	= 1,	/* admin SQ producer index moved */
	RNIC_DB_VEC_EVENT	= 2,	/* EQ/CQ consumer index or arm */
	RNIC_DB_VEC_DATA	= 3,	/* TX/RX ring producer index moved */
	RNIC_DB_NUM_VECTORS	= 4,
};

/* BAR2 size: a power of two, at least RNIC_SHM_MIN_SIZE (default 1 MiB). */
#define RNIC_SHM_MIN_SIZE		0x4000

/* BAR2 layout (offsets from the start of BAR2) */
#define RNIC_SIG_OFF			0x0000	/* signature block, 4 KiB */
#define RNIC_REGS_OFF			0x1000	/* register file, 4 KiB */
#define RNIC_DB_OFF			0x2000	/* doorbell page, 4 KiB */
#define RNIC_DB_SIZE			0x1000
/* 0x3000 .. 0xffff reserved; ABI 2.0 doorbell pages follow (rnic_hw_rdma.h) */

/* ------------------------------------------------------------------------
 * Signature block (BAR2 + RNIC_SIG_OFF, written by the device, read-only)
 *
 * The driver reads it before writing anything to the device and declines
 * the function unless magic == RNIC_SIG_MAGIC and the device serves the
 * ABI the driver speaks: abi_major is the newest major the device serves,
 * abi_compat the set of majors it serves (bit n: major n; 0 in a device
 * that only serves abi_major). A higher abi_minor only adds fields,
 * commands and capability bits.
 */

#define RNIC_SIG_MAGIC			0x43494e52	/* "RNIC" in memory */
/*
 * ABI 1.0's major, withdrawn: what an old device advertises and an old
 * driver asks for in CTRL.ABI (as 0 or 1), both refused. The driver and
 * the model implement RNIC_ABI2_MAJOR (rnic_hw_rdma.h).
 */
#define RNIC_ABI_MAJOR			1

/* Capability bits (rnic_sig.caps, rnic_device_attr.caps) */
#define RNIC_CAP_ICRC			BIT(0)	/* ICRC generate + check */
#define RNIC_CAP_VLAN			BIT(1)	/* VLAN insert and strip */
#define RNIC_CAP_IPV4_CSUM		BIT(2)	/* IPv4 header checksum */
#define RNIC_CAP_PFC			BIT(3)	/* 802.1Qbb PFC */
/* 1.0 capabilities; RNIC_CAP_ALL_ABI2 (rnic_hw_rdma.h) adds the transport */
#define RNIC_CAP_ALL			GENMASK(3, 0)
/* 2.0: the device runs the IB transport (abi_compat has bit 2) */
#define RNIC_CAP_TRANSPORT		BIT(4)

#define RNIC_MODEL_VERSION_LEN		32

struct rnic_sig {
	__le32 magic;
	__le16 abi_major;
	__le16 abi_minor;
	__le32 caps;
	/* BAR2 size in bytes as the device sees it */
	__le32 shm_size;
	u8 mac[6];
	/* MSI-X vectors the device may raise (0 .. num_msix - 1) */
	__le16 num_msix;
	__le16 max_queues;
	__le16 max_cqs;
	/* log2 of the largest TX/RX ring depth in descriptors */
	u8 max_ring_log2;
	/* log2 of the largest CQ depth in entries */
	u8 max_cq_log2;
	/* largest SGE count of one TX descriptor (INDIRECT included) */
	u8 max_tx_sge;
	u8 reserved0;
	/* largest frame without FCS, VLAN tag included, ICRC included */
	__le32 max_frame;
	/* port speed in Mb/s */
	__le32 speed_mbps;
	/* majors the device serves, bit n for n; 0 means abi_major only */
	__le16 abi_compat;
	__le16 reserved2;
	__le32 reserved1[5];
	/* NUL-terminated ASCII, e.g. "rnicsim 1.0" */
	char model_version[RNIC_MODEL_VERSION_LEN];
};

static_assert(sizeof(struct rnic_sig) == 96);

/* ------------------------------------------------------------------------
 * Register file (BAR2 + RNIC_REGS_OFF), le32 registers, absolute offsets
 *
 * The device sees driver writes only when the driver rings
 * RNIC_DB_VEC_CTRL (CTRL) or the queue vectors; it updates device-owned
 * registers on its own.
 */

#define RNIC_REG_CTRL			(RNIC_REGS_OFF + 0x00)	/* driver */
#define RNIC_REG_STATUS			(RNIC_REGS_OFF + 0x04)	/* device */
#define RNIC_REG_FATAL_REASON		(RNIC_REGS_OFF + 0x08)	/* device */
#define RNIC_REG_HEARTBEAT		(RNIC_REGS_OFF + 0x0c)	/* device */
#define RNIC_REG_AQ_SQ_BASE_LO		(RNIC_REGS_OFF + 0x10)	/* driver */
#define RNIC_REG_AQ_SQ_BASE_HI		(RNIC_REGS_OFF + 0x14)	/* driver */
#define RNIC_REG_AQ_CQ_BASE_LO		(RNIC_REGS_OFF + 0x18)	/* driver */
#define RNIC_REG_AQ_CQ_BASE_HI		(RNIC_REGS_OFF + 0x1c)	/* driver */
#define RNIC_REG_AQ_CFG			(RNIC_REGS_OFF + 0x20)	/* driver */
#define RNIC_REG_EQ_BASE_LO		(RNIC_REGS_OFF + 0x24)	/* driver */
#define RNIC_REG_EQ_BASE_HI		(RNIC_REGS_OFF + 0x28)	/* driver */
#define RNIC_REG_EQ_CFG			(RNIC_REGS_OFF + 0x2c)	/* driver */
#define RNIC_REG_AQ_SQ_HEAD		(RNIC_REGS_OFF + 0x30)	/* device */
#define RNIC_REG_SCRATCH		(RNIC_REGS_OFF + 0x34)	/* driver */
#define RNIC_REG_DRIVER_VERSION		(RNIC_REGS_OFF + 0x38)	/* driver */
#define RNIC_REGS_USED			0x3c

/*
 * CTRL. RESET returns the device to its reset state (all queues gone,
 * registers and doorbell page zeroed, counters cleared); the device then
 * writes STATUS = RESET_DONE and, last, CTRL = 0: RESET is self-clearing,
 * and the driver waits for it to read 0. STATUS.RESET_DONE may be left
 * over from an earlier reset, so it does not tell that this one is done.
 * ENABLE (after RESET_DONE) starts the admin queue and event queue;
 * clearing it while enabled resets.
 */
#define RNIC_CTRL_RESET			BIT(0)
#define RNIC_CTRL_ENABLE		BIT(1)
/* the 1.0 bits; a 1.0-only device treats any other bit as BAD_CTRL */
#define RNIC_CTRL_ALL			GENMASK(1, 0)
/*
 * 2.0: the major ABI the driver asks for with ENABLE, read by the device
 * only then. 0 (what a 1.0 driver writes) and 1 both mean 1.0.
 */
#define RNIC_CTRL_ABI			GENMASK(7, 4)

/* STATUS: 0 at power-on; RESET_DONE is cleared when ENABLED is set */
#define RNIC_STATUS_RESET_DONE		BIT(0)
#define RNIC_STATUS_ENABLED		BIT(1)
#define RNIC_STATUS_FATAL		BIT(2)
/* 2.0: with ENABLED, the major ABI in effect (0 for 1.0, as 1.0 reads) */
#define RNIC_STATUS_ABI			GENMASK(7, 4)

/* AQ_CFG: the admin SQ and CQ have the same depth */
#define RNIC_AQ_CFG_LOG2_DEPTH		GENMASK(3, 0)
#define RNIC_AQ_LOG2_MIN		2
#define RNIC_AQ_LOG2_MAX		8

/* EQ_CFG */
#define RNIC_EQ_CFG_LOG2_DEPTH		GENMASK(4, 0)
#define RNIC_EQ_LOG2_MIN		2
#define RNIC_EQ_LOG2_MAX		12

/* AQ_SQ_HEAD: free-running index of the next admin command to consume */
#define RNIC_AQ_SQ_HEAD_IDX		GENMASK(15, 0)

/* The device increments HEARTBEAT at least every this many ms. */
#define RNIC_HEARTBEAT_PERIOD_MS	100

/* Reset must complete (STATUS.RESET_DONE) within this time. */
#define RNIC_RESET_TIMEOUT_MS		1000

enum rnic_fatal_reason {
	RNIC_FATAL_NONE		= 0,
	RNIC_FATAL_BAD_AQ_ADDR	= 1,	/* admin SQ/CQ outside guest RAM */
	RNIC_FATAL_BAD_AQ_DEPTH	= 2,	/* AQ_CFG log2 depth out of range */
	RNIC_FATAL_BAD_EQ_ADDR	= 3,	/* EQ outside guest RAM */
	RNIC_FATAL_BAD_EQ_DEPTH	= 4,	/* EQ_CFG log2 depth out of range */
	RNIC_FATAL_BAD_CTRL	= 5,	/* ENABLE without RESET_DONE etc. */
	RNIC_FATAL_INTERNAL	= 6,
	RNIC_FATAL_BAD_ABI	= 7,	/* CTRL.ABI names an ABI not served */
};

/* ------------------------------------------------------------------------
 * Doorbell page (BAR2 + RNIC_DB_OFF): 1024 le32 slots
 *
 * Rings (admin SQ, TX, RX): the driver writes its free-running 16-bit
 * producer index (descriptors ever posted, modulo 2^16) and rings the
 * vector. EQ and CQs: the driver writes its free-running consumer index,
 * optionally with ARM and a new ARM_SEQ, and rings RNIC_DB_VEC_EVENT.
 * Bits not defined below must be zero. The device zeroes the page on reset
 * and a queue's or CQ's slot when it creates the object.
 */

#define RNIC_DB_SLOT_ADMIN_SQ		0
#define RNIC_DB_SLOT_EQ			1
#define RNIC_DB_SLOT_QUEUE_BASE		256
#define RNIC_DB_SLOT_CQ_BASE		512
#define RNIC_DB_NUM_SLOTS		1024

/* Architectural limits implied by the doorbell page */
#define RNIC_MAX_QUEUES			256
#define RNIC_MAX_CQS			256

#define RNIC_DB_SLOT_OFF(slot)		(RNIC_DB_OFF + 4 * (slot))
#define RNIC_DB_QUEUE_OFF(qid)		RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_QUEUE_BASE + (qid))
#define RNIC_DB_CQ_OFF(cqid)		RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_CQ_BASE + (cqid))

/* Ring slot (admin SQ, TX, RX) */
#define RNIC_DB_RING_PI			GENMASK(15, 0)

/* EQ / CQ slot */
#define RNIC_DB_CQ_CI			GENMASK(15, 0)
#define RNIC_DB_CQ_ARM_SEQ		GENMASK(23, 16)
#define RNIC_DB_CQ_ARM			BIT(31)

/* Free-running ring indices are 16 bits wide. */
#define RNIC_IDX_MASK			GENMASK(15, 0)

/* ------------------------------------------------------------------------
 * Entry ownership: phase bit
 *
 * Completion-type rings written by the device (admin CQ, EQ, CQs) carry a
 * phase bit. The driver zeroes the ring before handing it over; the device
 * writes phase 1 on its first pass through the ring, 0 on the second, and
 * so on. The device writes the entry's first 32-bit word (which holds the
 * phase) last, after the rest of the entry is visible.
 */

/* ------------------------------------------------------------------------
 * Admin queue
 */

#define RNIC_AQ_ENTRY_SIZE		64
#define RNIC_ACQ_ENTRY_SIZE		16

enum rnic_aq_opcode {
	RNIC_AQ_QUERY_DEVICE	= 0x01,
	RNIC_AQ_SET_PORT	= 0x02,
	RNIC_AQ_QUERY_PORT	= 0x03,
	RNIC_AQ_CREATE_CQ	= 0x04,
	RNIC_AQ_DESTROY_CQ	= 0x05,
	RNIC_AQ_CREATE_QUEUE	= 0x06,
	RNIC_AQ_DESTROY_QUEUE	= 0x07,
	RNIC_AQ_QUERY_STATS	= 0x08,
};

enum rnic_aq_status {
	RNIC_AQ_SUCCESS		= 0,
	RNIC_AQ_BAD_OPCODE	= 1,	/* unknown opcode */
	RNIC_AQ_BAD_PARAM	= 2,	/* field out of range, reserved != 0 */
	RNIC_AQ_BAD_ADDR	= 3,	/* DMA address outside guest RAM */
	RNIC_AQ_NO_RESOURCES	= 4,	/* no free queue/CQ id */
	RNIC_AQ_BAD_STATE	= 5,	/* object busy or already exists */
	RNIC_AQ_NOT_FOUND	= 6,	/* no such queue/CQ id */
	RNIC_AQ_INTERNAL	= 7,
	/* 2.0 */
	RNIC_AQ_NO_DB_SLOT	= 8,	/* the doorbell page is full */
	RNIC_AQ_BAD_TRANSITION	= 9,	/* QP state change not allowed */
	RNIC_AQ_BAD_ATTR_MASK	= 10,	/* attribute missing or not allowed */
	RNIC_AQ_NO_PERM		= 11,	/* needs a privileged PD or page */
};

/* Common 8-byte header of every admin command */
struct rnic_aq_hdr {
	u8 opcode;
	u8 reserved0;
	/* echoed in the completion */
	__le16 cmd_id;
	__le32 reserved1;
};

static_assert(sizeof(struct rnic_aq_hdr) == 8);

/* QUERY_DEVICE / QUERY_PORT / QUERY_STATS: device DMA-writes a buffer */
struct rnic_aq_query {
	struct rnic_aq_hdr hdr;
	/* where to write the result */
	__le64 buf_addr;
	/* size of the buffer; the device writes at most this much */
	__le32 buf_len;
	/* QUERY_STATS: RNIC_STATS_SCOPE_*; others: 0 */
	u8 scope;
	u8 reserved0;
	/* QUERY_STATS with RNIC_STATS_SCOPE_QUEUE: the queue id */
	__le16 id;
	__le32 reserved1[10];
};

static_assert(sizeof(struct rnic_aq_query) == RNIC_AQ_ENTRY_SIZE);

enum rnic_stats_scope {
	RNIC_STATS_SCOPE_PORT	= 0,	/* RNIC_PORT_STATS, le64 each */
	RNIC_STATS_SCOPE_QUEUE	= 1,	/* RNIC_QUEUE_STATS, le64 each */
};

/* SET_PORT: which fields to apply (rnic_aq_set_port.valid) */
#define RNIC_PORT_VALID_MTU		BIT(0)
#define RNIC_PORT_VALID_MAC		BIT(1)
#define RNIC_PORT_VALID_UDP_PORT	BIT(2)
#define RNIC_PORT_VALID_FLAGS		BIT(3)
#define RNIC_PORT_VALID_PFC		BIT(4)	/* prio, quanta, watermarks */
#define RNIC_PORT_VALID_ALL		GENMASK(4, 0)

/* Port flags (rnic_aq_set_port.flags, rnic_port_attr.flags) */
#define RNIC_PORT_F_PFC			BIT(0)	/* run PFC on pfc_prio */
#define RNIC_PORT_F_RX_ICRC_CHECK	BIT(1)	/* check ICRC of RoCE RX */
#define RNIC_PORT_F_RX_ICRC_DELIVER_BAD	BIT(2)	/* deliver bad-ICRC frames */
#define RNIC_PORT_F_RX_VLAN_STRIP	BIT(3)	/* strip the 802.1Q tag */
#define RNIC_PORT_F_ALL			GENMASK(3, 0)

#define RNIC_MTU_MIN			68
#define RNIC_DEFAULT_MTU		1500
#define RNIC_DEFAULT_UDP_PORT		4791
/* Frame overhead allowed on top of the MTU: Ethernet header + one tag */
#define RNIC_FRAME_OVERHEAD		18
#define RNIC_ICRC_LEN			4
#define RNIC_PFC_DEFAULT_QUANTA		0xffff

struct rnic_aq_set_port {
	struct rnic_aq_hdr hdr;
	/* RNIC_PORT_VALID_*: fields not flagged keep their value */
	__le32 valid;
	/* RNIC_PORT_F_* */
	__le32 flags;
	/* L3 MTU: RNIC_MTU_MIN .. max_frame - RNIC_FRAME_OVERHEAD */
	__le16 mtu;
	/* RoCE v2 UDP destination port of the RX classifier (not 0) */
	__le16 udp_port;
	u8 mac[6];
	/* the PFC no-drop priority, 0..7 */
	u8 pfc_prio;
	u8 reserved0;
	/* quanta sent in XOFF frames; 0 means RNIC_PFC_DEFAULT_QUANTA */
	__le16 pfc_xoff_quanta;
	/*
	 * watermarks in free frames of the device's RoCE receive buffer
	 * (1.0: free RoCE RX descriptors): XOFF below low, XON at or above
	 * high; 0/0 means depth / 8 and depth / 4. low < high.
	 */
	__le16 pfc_low_wm;
	__le16 pfc_high_wm;
	__le16 reserved1;
	__le32 reserved2[7];
};

static_assert(sizeof(struct rnic_aq_set_port) == RNIC_AQ_ENTRY_SIZE);

struct rnic_aq_create_cq {
	struct rnic_aq_hdr hdr;
	/* ring of (1 << log2_depth) CQEs, RNIC_CQE_SIZE aligned */
	__le64 ring_addr;
	u8 log2_depth;
	u8 reserved0;
	/* MSI-X vector raised when armed; 1 .. num_msix - 1 (0 shared) */
	__le16 msix_vector;
	__le32 reserved1[11];
};

static_assert(sizeof(struct rnic_aq_create_cq) == RNIC_AQ_ENTRY_SIZE);

/* DESTROY_CQ / DESTROY_QUEUE */
struct rnic_aq_destroy {
	struct rnic_aq_hdr hdr;
	__le16 id;
	__le16 reserved0;
	__le32 reserved1[13];
};

static_assert(sizeof(struct rnic_aq_destroy) == RNIC_AQ_ENTRY_SIZE);

/*
 * 3 and 4 were ABI 1.0's RoCE TX and RX rings; the device refuses them as
 * it refuses any type not listed here.
 */
enum rnic_queue_type {
	RNIC_QUEUE_ETH_TX	= 1,
	RNIC_QUEUE_ETH_RX	= 2,
};

#define RNIC_RING_LOG2_MIN		2
#define RNIC_RING_LOG2_MAX		15
#define RNIC_CQ_LOG2_MIN		2
#define RNIC_CQ_LOG2_MAX		15
#define RNIC_RX_BUF_MIN			64
#define RNIC_RX_BUF_MAX			65536
#define RNIC_MAX_PRIO			7

struct rnic_aq_create_queue {
	struct rnic_aq_hdr hdr;
	/* ring of (1 << log2_depth) descriptors, descriptor-size aligned */
	__le64 ring_addr;
	/* enum rnic_queue_type */
	u8 type;
	u8 log2_depth;
	/* CQ that receives this queue's completions */
	__le16 cq_id;
	/* RX: buffer length used by descriptors with len 0; TX: 0 */
	__le32 rx_buf_size;
	/* TX: 802.1p priority of untagged frames for PFC; RX: 0 */
	u8 tx_prio;
	u8 reserved0[3];
	__le32 reserved1[9];
};

static_assert(sizeof(struct rnic_aq_create_queue) == RNIC_AQ_ENTRY_SIZE);

/* Any admin command, as laid out in the SQ */
union rnic_aq_entry {
	struct rnic_aq_hdr hdr;
	struct rnic_aq_query query;
	struct rnic_aq_set_port set_port;
	struct rnic_aq_create_cq create_cq;
	struct rnic_aq_destroy destroy;
	struct rnic_aq_create_queue create_queue;
	u8 raw[RNIC_AQ_ENTRY_SIZE];
};

static_assert(sizeof(union rnic_aq_entry) == RNIC_AQ_ENTRY_SIZE);

/* Admin completion (admin CQ entry) */
#define RNIC_ACQE_F_PHASE		BIT(0)

struct rnic_acqe {
	/* enum rnic_aq_status */
	u8 status;
	/* RNIC_ACQE_F_* */
	u8 flags;
	/* cmd_id of the command */
	__le16 cmd_id;
	/* AQ SQ head after this command: SQ slots before it are free */
	__le16 sq_head;
	__le16 reserved0;
	/* CREATE_*: the new id; QUERY_*: bytes the full result has */
	__le32 result;
	__le32 reserved1;
};

static_assert(sizeof(struct rnic_acqe) == RNIC_ACQ_ENTRY_SIZE);

/* QUERY_DEVICE result */
struct rnic_device_attr {
	__le16 abi_major;
	__le16 abi_minor;
	__le32 caps;
	u8 mac[6];
	__le16 num_msix;
	__le16 max_queues;
	__le16 max_cqs;
	u8 max_ring_log2;
	u8 max_cq_log2;
	u8 max_tx_sge;
	u8 reserved0;
	__le32 max_frame;
	__le32 speed_mbps;
	/* entries QUERY_STATS returns for each scope */
	__le16 num_port_stats;
	__le16 num_queue_stats;
	__le32 reserved1[7];
	char model_version[RNIC_MODEL_VERSION_LEN];
};

static_assert(sizeof(struct rnic_device_attr) == 96);

/* Link word (rnic_port_attr.link, rnic_eqe.data of LINK_CHANGE) */
#define RNIC_LINK_UP			BIT(31)
#define RNIC_LINK_SPEED_MBPS		GENMASK(23, 0)

/* QUERY_PORT result */
struct rnic_port_attr {
	/* RNIC_LINK_* */
	__le32 link;
	/* RNIC_PORT_F_* in effect */
	__le32 flags;
	__le16 mtu;
	__le16 udp_port;
	u8 mac[6];
	u8 pfc_prio;
	/* bit p set: TX of priority p is paused by the link partner now */
	u8 tx_paused;
	__le16 pfc_xoff_quanta;
	__le16 pfc_low_wm;
	__le16 pfc_high_wm;
	__le16 reserved0;
	__le32 reserved1[3];
};

static_assert(sizeof(struct rnic_port_attr) == 40);

/* ------------------------------------------------------------------------
 * Event queue
 */

#define RNIC_EQE_SIZE			16

enum rnic_eqe_type {
	RNIC_EQE_LINK_CHANGE	= 1,	/* data: RNIC_LINK_* */
	RNIC_EQE_DEVICE_ERROR	= 2,	/* reason, info */
	RNIC_EQE_QUEUE_ERROR	= 3,	/* reason, obj, data = id, info */
	/* 2.0, completion event queues only: data = CQN */
	RNIC_EQE_COMPLETION	= 16,
	/* 2.0, event queue 0: data = QPN, SRQN or CQN, reason */
	RNIC_EQE_QP_FATAL	= 17,	/* IB_EVENT_QP_FATAL */
	RNIC_EQE_QP_REQ_ERR	= 18,	/* IB_EVENT_QP_REQ_ERR */
	RNIC_EQE_QP_ACCESS_ERR	= 19,	/* IB_EVENT_QP_ACCESS_ERR */
	RNIC_EQE_COMM_EST	= 20,	/* IB_EVENT_COMM_EST */
	RNIC_EQE_SQ_DRAINED	= 21,	/* IB_EVENT_SQ_DRAINED */
	RNIC_EQE_LAST_WQE_REACHED = 22,	/* IB_EVENT_QP_LAST_WQE_REACHED */
	RNIC_EQE_SRQ_LIMIT	= 23,	/* IB_EVENT_SRQ_LIMIT_REACHED */
	RNIC_EQE_SRQ_ERR	= 24,	/* IB_EVENT_SRQ_ERR */
	RNIC_EQE_CQ_ERROR	= 25,	/* IB_EVENT_CQ_ERR */
	RNIC_EQE_DEVICE_FATAL	= 26,	/* IB_EVENT_DEVICE_FATAL */
};

/* Error reasons (rnic_eqe.reason) */
enum rnic_err_reason {
	RNIC_ERR_NONE		= 0,
	RNIC_ERR_DMA_OOB	= 1,	/* DMA address outside guest RAM */
	RNIC_ERR_BAD_DESC	= 2,	/* malformed descriptor */
	RNIC_ERR_BAD_DOORBELL	= 3,	/* bad doorbell vector/slot/index */
	RNIC_ERR_RING_OVERFLOW	= 4,	/* CQ (2.0: or EQ) full */
	RNIC_ERR_INTERNAL	= 5,
	/*
	 * 2.0: also the syndrome of an error CQE (rnic_rdma_cqe.syndrome),
	 * the device's reason behind the IB status.
	 */
	RNIC_ERR_BAD_WQE	= 16,	/* opcode, flags, sizes, reserved */
	RNIC_ERR_BAD_KEY	= 17,	/* unknown key, wrong variant */
	RNIC_ERR_KEY_PD		= 18,	/* key of another PD */
	RNIC_ERR_KEY_ACCESS	= 19,	/* key lacks the access right */
	RNIC_ERR_KEY_BOUNDS	= 20,	/* range outside the MR */
	RNIC_ERR_KEY_STATE	= 21,	/* MR invalid, or in the wrong state */
	RNIC_ERR_BAD_AH		= 22,	/* AH entry invalid, other PD, bad */
	RNIC_ERR_MSG_TOO_LONG	= 23,	/* > max message or UD > path MTU */
	RNIC_ERR_RECV_TOO_SHORT	= 24,	/* message longer than the buffer */
	RNIC_ERR_RETRY_EXC	= 25,	/* ACK timeouts / NAK-seq retries */
	RNIC_ERR_RNR_EXC	= 26,	/* RNR NAK retries */
	RNIC_ERR_REM_ACCESS	= 27,	/* NAK remote access error */
	RNIC_ERR_REM_INV_REQ	= 28,	/* NAK invalid request */
	RNIC_ERR_REM_OP		= 29,	/* NAK remote operational error */
	RNIC_ERR_BAD_RESP	= 30,	/* unexpected or malformed response */
	RNIC_ERR_NO_PERM	= 31,	/* privileged operation */
	RNIC_ERR_FLUSHED	= 32,	/* the QP is in the error state */
	RNIC_ERR_INV_KEY	= 33,	/* remote invalidation refused */
	RNIC_ERR_CQ_ERROR	= 34,	/* the QP's CQ is in error */
	RNIC_ERR_SRQ_ERROR	= 35,	/* the QP's SRQ is in error */
	RNIC_ERR_RESP_RES	= 36,	/* READ/atomic with no resources */
};

/* QUEUE_ERROR: what data names (rnic_eqe.obj) */
enum rnic_eqe_obj {
	RNIC_EQE_OBJ_NONE	= 0,
	RNIC_EQE_OBJ_QUEUE	= 1,
	RNIC_EQE_OBJ_CQ		= 2,
	/* 2.0 */
	RNIC_EQE_OBJ_QP		= 3,
	RNIC_EQE_OBJ_SRQ	= 4,
	RNIC_EQE_OBJ_RDMA_CQ	= 5,
	RNIC_EQE_OBJ_EQ		= 6,
	RNIC_EQE_OBJ_DB_PAGE	= 7,
};

#define RNIC_EQE_F_PHASE		BIT(0)

struct rnic_eqe {
	/* enum rnic_eqe_type */
	u8 type;
	/* RNIC_EQE_F_* */
	u8 flags;
	/* enum rnic_err_reason (errors), else 0 */
	u8 reason;
	/* enum rnic_eqe_obj (QUEUE_ERROR), else 0 */
	u8 obj;
	/*
	 * LINK_CHANGE: RNIC_LINK_*; QUEUE_ERROR: queue or CQ id; 2.0: the
	 * QPN, SRQN, CQN or EQN the event is about
	 */
	__le32 data;
	/* errors: offending address, index or vector; else 0 */
	__le64 info;
};

static_assert(sizeof(struct rnic_eqe) == RNIC_EQE_SIZE);

/* ------------------------------------------------------------------------
 * TX and RX rings
 */

#define RNIC_TX_DESC_SIZE		64
#define RNIC_RX_DESC_SIZE		16
#define RNIC_SGE_SIZE			16

/* Inline SGEs in one TX descriptor */
#define RNIC_TX_INLINE_SGE		3
/* Largest SGE list of an INDIRECT descriptor */
#define RNIC_TX_MAX_SGE			32

/* TX descriptor flags */
#define RNIC_TX_F_ICRC			BIT(0)	/* append the RoCE ICRC */
#define RNIC_TX_F_IPV4_CSUM		BIT(1)	/* fill the IPv4 hdr checksum */
#define RNIC_TX_F_VLAN_INSERT		BIT(2)	/* insert an 802.1Q tag */
#define RNIC_TX_F_INDIRECT		BIT(3)	/* sge[0] -> SGE list */
#define RNIC_TX_F_ALL			GENMASK(3, 0)

/* 802.1Q TCI */
#define RNIC_VLAN_TCI_PCP		GENMASK(15, 13)
#define RNIC_VLAN_TCI_DEI		BIT(12)
#define RNIC_VLAN_TCI_VID		GENMASK(11, 0)

/* Scatter-gather element, also the element of an INDIRECT list */
struct rnic_sge {
	__le64 addr;
	__le32 len;
	__le32 reserved;
};

static_assert(sizeof(struct rnic_sge) == RNIC_SGE_SIZE);

struct rnic_tx_desc {
	/* RNIC_TX_F_* */
	__le16 flags;
	/* SGEs making up the frame: 1..3, or 1..RNIC_TX_MAX_SGE if INDIRECT */
	u8 num_sge;
	u8 reserved0;
	/* RNIC_TX_F_VLAN_INSERT: the tag's TCI */
	__le16 vlan_tci;
	__le16 reserved1;
	/* sum of the SGE lengths: the frame before offloads, no FCS */
	__le32 total_len;
	__le32 reserved2;
	/*
	 * The frame's bytes in order. INDIRECT: sge[0] points at num_sge
	 * struct rnic_sge (sge[0].len == num_sge * RNIC_SGE_SIZE).
	 */
	struct rnic_sge sge[RNIC_TX_INLINE_SGE];
};

static_assert(sizeof(struct rnic_tx_desc) == RNIC_TX_DESC_SIZE);

struct rnic_rx_desc {
	__le64 addr;
	/* buffer length; 0 = the queue's rx_buf_size */
	__le32 len;
	__le32 reserved;
};

static_assert(sizeof(struct rnic_rx_desc) == RNIC_RX_DESC_SIZE);

/* ------------------------------------------------------------------------
 * Completion queue entries
 */

#define RNIC_CQE_SIZE			32

enum rnic_cqe_status {
	RNIC_CQE_OK		= 0,
	RNIC_CQE_DMA_ERROR	= 1,	/* buffer/SGE outside guest RAM */
	RNIC_CQE_TOO_LONG	= 2,	/* RX: frame > buffer; TX: > MTU */
	/* 3 was 1.0's bad-ICRC status of RoCE RX; never written */
	RNIC_CQE_FLUSHED	= 4,	/* TX: not sent, link down */
	RNIC_CQE_BAD_DESC	= 5,	/* malformed descriptor */
};

/* RX classes (rnic_cqe.rx_class) */
enum rnic_rx_class {
	RNIC_RX_CLASS_ETH		= 0,
	RNIC_RX_CLASS_ROCE_V1		= 1,
	RNIC_RX_CLASS_ROCE_V2_IPV4	= 2,
	RNIC_RX_CLASS_ROCE_V2_IPV6	= 3,
};

#define RNIC_CQE_F_PHASE		BIT(0)
#define RNIC_CQE_F_TX			BIT(1)	/* completion of a TX desc */
/* bits 2 and 3 were 1.0's ICRC checked / matched of RoCE RX; never set */
#define RNIC_CQE_F_VLAN_STRIPPED	BIT(4)	/* tag removed, see vlan_tci */

struct rnic_cqe {
	/* RNIC_CQE_F_* */
	__le32 flags;
	__le16 queue_id;
	/* free-running index of the completed descriptor */
	__le16 desc_idx;
	/* RX: frame length written (after VLAN strip); TX: length sent */
	__le32 byte_len;
	/* enum rnic_cqe_status */
	u8 status;
	/* RX: enum rnic_rx_class */
	u8 rx_class;
	/* RX with VLAN_STRIPPED: the removed tag's TCI */
	__le16 vlan_tci;
	/* device clock (ns) when the completion was written */
	__le64 timestamp;
	__le64 reserved;
};

static_assert(sizeof(struct rnic_cqe) == RNIC_CQE_SIZE);

/* ------------------------------------------------------------------------
 * Counters: declared once. QUERY_STATS writes them as le64 in this order.
 * op(name) is expanded for each counter, in order.
 */

#define RNIC_PORT_STATS(op)			\
	op(tx_eth_frames)			\
	op(tx_eth_bytes)			\
	op(tx_roce_v1_frames)			\
	op(tx_roce_v1_bytes)			\
	op(tx_roce_v2_frames)			\
	op(tx_roce_v2_bytes)			\
	op(rx_eth_frames)			\
	op(rx_eth_bytes)			\
	op(rx_roce_v1_frames)			\
	op(rx_roce_v1_bytes)			\
	op(rx_roce_v2_frames)			\
	op(rx_roce_v2_bytes)			\
	op(rx_icrc_errors)			\
	op(rx_drop_no_buf)			\
	op(rx_drop_no_queue)			\
	op(rx_drop_malformed)			\
	op(rx_drop_too_long)			\
	op(rx_drop_link_down)			\
	op(tx_drop_too_long)			\
	op(tx_drop_link_down)			\
	op(rx_pause)				\
	op(tx_pause)				\
	op(tx_paused_ns)			\
	op(dma_errors)				\
	op(bad_descriptors)			\
	op(bad_doorbells)			\
	op(cq_overflows)			\
	op(queue_errors)			\
	op(device_errors)			\
	op(admin_cmds)				\
	op(admin_errors)			\
	op(events)				\
	op(event_overflows)			\
	op(link_changes)

#define RNIC_QUEUE_STATS(op)			\
	op(frames)				\
	op(bytes)				\
	op(drops)				\
	op(errors)

#define RNIC_PORT_STAT_ENUM(name)	RNIC_PORT_STAT_##name,
#define RNIC_QUEUE_STAT_ENUM(name)	RNIC_QUEUE_STAT_##name,

enum rnic_port_stat {
	RNIC_PORT_STATS(RNIC_PORT_STAT_ENUM)
	RNIC_NUM_PORT_STATS
};

enum rnic_queue_stat {
	RNIC_QUEUE_STATS(RNIC_QUEUE_STAT_ENUM)
	RNIC_NUM_QUEUE_STATS
};

/* ------------------------------------------------------------------------
 * Helpers. Pure functions of their arguments: no device access.
 */

/**
 * rnic_ivshmem_doorbell() - value to write to the BAR0 Doorbell register
 * @vector: device-side doorbell vector (enum rnic_db_vector)
 *
 * Return: ``(RNIC_MODEL_PEER_ID << 16) | vector``.
 */
static inline u32 rnic_ivshmem_doorbell(unsigned int vector)
{
	return FIELD_PREP(RNIC_IVSHMEM_DB_PEER, RNIC_MODEL_PEER_ID) |
	       FIELD_PREP(RNIC_IVSHMEM_DB_VECTOR, vector);
}

/**
 * rnic_ring_phase() - phase bit the device writes at a free-running index
 * @idx: free-running producer index of the entry (any width)
 * @log2_depth: log2 of the ring depth
 *
 * Return: 1 on the first pass through the ring, 0 on the second, ...
 */
static inline u8 rnic_ring_phase(u32 idx, unsigned int log2_depth)
{
	return !((idx >> log2_depth) & 1);
}

/**
 * rnic_ring_used() - entries between a consumer and a producer index
 * @pi: producer index (16-bit free-running)
 * @ci: consumer index (16-bit free-running)
 *
 * Return: (pi - ci) modulo 2^16.
 */
static inline u16 rnic_ring_used(u16 pi, u16 ci)
{
	return (u16)(pi - ci);
}

/**
 * rnic_db_cq() - doorbell slot value for an EQ or CQ
 * @ci: free-running consumer index (entries consumed)
 * @arm: request an interrupt for the next entry
 * @arm_seq: arm sequence; must differ from the previous arm's to re-arm
 *
 * Return: the le32 slot value in CPU order.
 */
static inline u32 rnic_db_cq(u16 ci, bool arm, u8 arm_seq)
{
	return FIELD_PREP(RNIC_DB_CQ_CI, ci) |
	       FIELD_PREP(RNIC_DB_CQ_ARM_SEQ, arm_seq) |
	       (arm ? RNIC_DB_CQ_ARM : 0);
}

/**
 * rnic_tx_desc_build() - fill a TX descriptor with inline SGEs
 * @desc: descriptor to fill (fully overwritten)
 * @flags: RNIC_TX_F_* offload flags (not RNIC_TX_F_INDIRECT)
 * @vlan_tci: tag to insert with RNIC_TX_F_VLAN_INSERT, else ignored
 * @addr: DMA addresses of the frame's pieces, in order
 * @len: their lengths, each > 0
 * @num_sge: number of pieces, 1..RNIC_TX_INLINE_SGE
 *
 * Return: 0, or -1 if @num_sge or @flags is out of range (desc untouched).
 */
static inline int rnic_tx_desc_build(struct rnic_tx_desc *desc, u16 flags,
				     u16 vlan_tci, const u64 *addr,
				     const u32 *len, unsigned int num_sge)
{
	u32 total = 0;
	unsigned int i;

	if (!num_sge || num_sge > RNIC_TX_INLINE_SGE ||
	    (flags & ~RNIC_TX_F_ALL) || (flags & RNIC_TX_F_INDIRECT))
		return -1;
	*desc = (struct rnic_tx_desc){};
	for (i = 0; i < num_sge; i++) {
		desc->sge[i].addr = cpu_to_le64(addr[i]);
		desc->sge[i].len = cpu_to_le32(len[i]);
		total += len[i];
	}
	desc->flags = cpu_to_le16(flags);
	desc->num_sge = num_sge;
	if (flags & RNIC_TX_F_VLAN_INSERT)
		desc->vlan_tci = cpu_to_le16(vlan_tci);
	desc->total_len = cpu_to_le32(total);
	return 0;
}

/**
 * rnic_tx_desc_build_indirect() - fill a TX descriptor pointing at an SGE list
 * @desc: descriptor to fill (fully overwritten)
 * @flags: RNIC_TX_F_* offload flags; RNIC_TX_F_INDIRECT is added
 * @vlan_tci: tag to insert with RNIC_TX_F_VLAN_INSERT, else ignored
 * @list_addr: DMA address of @num_sge struct rnic_sge
 * @num_sge: 1..RNIC_TX_MAX_SGE
 * @total_len: sum of the list's lengths
 *
 * Return: 0, or -1 if @num_sge or @flags is out of range (desc untouched).
 */
static inline int rnic_tx_desc_build_indirect(struct rnic_tx_desc *desc,
					      u16 flags, u16 vlan_tci,
					      u64 list_addr,
					      unsigned int num_sge,
					      u32 total_len)
{
	if (!num_sge || num_sge > RNIC_TX_MAX_SGE ||
	    (flags & ~RNIC_TX_F_ALL))
		return -1;
	flags |= RNIC_TX_F_INDIRECT;
	*desc = (struct rnic_tx_desc){};
	desc->flags = cpu_to_le16(flags);
	desc->num_sge = num_sge;
	if (flags & RNIC_TX_F_VLAN_INSERT)
		desc->vlan_tci = cpu_to_le16(vlan_tci);
	desc->total_len = cpu_to_le32(total_len);
	desc->sge[0].addr = cpu_to_le64(list_addr);
	desc->sge[0].len = cpu_to_le32(num_sge * RNIC_SGE_SIZE);
	return 0;
}

/**
 * rnic_cqe_phase() - phase bit of a CQE
 * @cqe: completion entry
 *
 * Read the phase first and compare with the expected phase; only then
 * (after a read barrier) read the rest of the entry.
 *
 * Return: 0 or 1.
 */
static inline u8 rnic_cqe_phase(const struct rnic_cqe *cqe)
{
	return !!(le32_to_cpu(cqe->flags) & RNIC_CQE_F_PHASE);
}

/**
 * rnic_cqe_rx_class() - RX class of a receive completion
 * @cqe: completion entry
 *
 * Return: enum rnic_rx_class, or -1 for an unknown value.
 */
static inline int rnic_cqe_rx_class(const struct rnic_cqe *cqe)
{
	return cqe->rx_class <= RNIC_RX_CLASS_ROCE_V2_IPV6 ? cqe->rx_class : -1;
}

/**
 * rnic_acqe_phase() - phase bit of an admin completion
 * @acqe: admin completion entry
 *
 * Return: 0 or 1.
 */
static inline u8 rnic_acqe_phase(const struct rnic_acqe *acqe)
{
	return !!(acqe->flags & RNIC_ACQE_F_PHASE);
}

/**
 * rnic_eqe_phase() - phase bit of an event queue entry
 * @eqe: event queue entry
 *
 * Return: 0 or 1.
 */
static inline u8 rnic_eqe_phase(const struct rnic_eqe *eqe)
{
	return !!(eqe->flags & RNIC_EQE_F_PHASE);
}

/**
 * rnic_pause_ns() - duration of a PFC pause
 * @quanta: pause quanta from the frame (512 bit times each)
 * @speed_mbps: port speed in Mb/s
 *
 * Return: the pause time in nanoseconds (0 if @speed_mbps is 0).
 */
static inline u64 rnic_pause_ns(u16 quanta, u32 speed_mbps)
{
	/* 512 bits / (speed_mbps * 1e6 bit/s) = 512000 / speed_mbps ns */
	if (!speed_mbps)
		return 0;
	return (u64)quanta * 512000ULL / speed_mbps;
}

/* ABI 2.0: the transport in the device */
#include "rnic_hw_rdma.h"

#endif /* _RNIC_HW_H_ */
