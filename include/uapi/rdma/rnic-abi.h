/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * rnic: the user verbs ABI, between rnic.ko and the rdma-core provider
 * librnic (providers/rnic). These are the driver-specific parts of the
 * uverbs commands (ib_udata): what a user context needs to place WQEs in
 * its own rings and ring its own doorbells (Documentation/rnic.rst, "User
 * verbs"). The hardware formats the rings and doorbells hold are those of
 * include/rnic_hw_rdma.h, the same the kernel writes.
 *
 * Every request and response is a fixed size; a longer udata is accepted
 * only if the extra bytes are zero (ib_is_udata_cleared()), a shorter one
 * is refused with -EINVAL. Reserved fields are zero both ways.
 */
#ifndef RNIC_ABI_USER_H
#define RNIC_ABI_USER_H

#include <linux/types.h>

/* ib_device_ops.uverbs_abi_ver; the provider matches exactly this */
#define RNIC_UVERBS_ABI_VERSION		1

/* rnic_ualloc_ctx_resp.flags */
/*
 * kick_key maps the page of the kick register. Without it (the register
 * shares its page with something else), the context kicks through the
 * kernel: a post_send with no work requests for a send or receive
 * doorbell, a req_notify_cq command for a CQ arm.
 */
#define RNIC_UCTX_F_KICK_MMAP		(1U << 0)
/*
 * The device serves kick entries it finds after storing kick_ci
 * (RNIC_RDMA_CAP_KICK_CI, hardware-rdma.rst): after advancing kick_pi, a
 * full barrier and a read of the kick register (map its page readable),
 * a kick_ci other than the kick_pi found before the new entries means no
 * kick is needed. Only with RNIC_UCTX_F_KICK_MMAP.
 */
#define RNIC_UCTX_F_KICK_CI		(1U << 1)
/*
 * The device reads receive slots on demand (RNIC_RDMA_CAP_RQ_PEEK,
 * hardware-rdma.rst): a post_recv or post_srq_recv writes the slot and
 * neither names it in the kick ring nor kicks, while the QP is not in
 * ERR by the process's own modify (a flush then waits for the device's
 * next heartbeat instead). With or without RNIC_UCTX_F_KICK_MMAP.
 */
#define RNIC_UCTX_F_RQ_PEEK		(1U << 2)

/**
 * struct rnic_ualloc_ctx_resp - alloc_ucontext response
 * @db_key: mmap offset of the context's first doorbell page
 *	(struct rnic_db_page, @db_page_size bytes); create_cq/qp/srq say
 *	which page their slots are in, and the provider maps each page once
 * @kick_key: with RNIC_UCTX_F_KICK_MMAP, mmap offset of the page that
 *	holds the kick register (one page, write only)
 * @flags: RNIC_UCTX_F_*
 * @kick: the value to write to the kick register after the kick ring
 *	entries of a doorbell page moved (the same for every page of the
 *	context)
 * @kick_off: byte offset of the 32-bit kick register in the @kick_key page
 * @db_page_size: bytes of a doorbell page and of its mapping
 * @max_sqe_log2: largest send WQE (log2 of bytes) a QP may use
 * @max_rqe_log2: largest receive WQE (log2 of bytes) a QP or SRQ may use
 * @max_inline: inline bytes the largest send WQE holds
 * @status: 0, or the errno (positive) for which the kernel refuses the
 *	process a context: EIO, the device failed (reload rnic); ENOSPC,
 *	user contexts hold every doorbell page they may. A refused context
 *	has no doorbell page (@db_key maps nothing) and gets none; the
 *	provider fails ibv_open_device with @status and closes the file
 *	(why the kernel does not fail the command itself: rnic.rst, "User
 *	verbs")
 */
struct rnic_ualloc_ctx_resp {
	__aligned_u64 db_key;
	__aligned_u64 kick_key;
	__u32 flags;
	__u32 kick;
	__u32 kick_off;
	__u32 db_page_size;
	__u8 max_sqe_log2;
	__u8 max_rqe_log2;
	__u16 max_inline;
	__u32 status;
};

/**
 * struct rnic_ucreate_cq - create_cq request
 * @ring_va: the CQE ring, (1 << @log2_depth) * 32 bytes, page aligned, in
 *	the process's memory; the kernel pins it and gives the device its
 *	page list
 * @log2_depth: log2 of the ring's entries; (1 << @log2_depth) - 1 must
 *	hold the CQEs asked for
 * @reserved: zero
 */
struct rnic_ucreate_cq {
	__aligned_u64 ring_va;
	__u8 log2_depth;
	__u8 reserved[7];
};

/**
 * struct rnic_ucreate_cq_resp - create_cq response
 * @db_key: mmap offset of the doorbell page that holds the CQ's slot
 * @cqn: the device's CQN (rnic_rdma_cqe has none; events name it)
 * @db_off: byte offset of the CQ's slot in that page
 * @reserved: zero
 */
struct rnic_ucreate_cq_resp {
	__aligned_u64 db_key;
	__u32 cqn;
	__u16 db_off;
	__u16 reserved;
};

/**
 * struct rnic_ucreate_qp - create_qp request (RC and UD)
 * @sq_va: the send ring, (1 << @sq_log2_depth) WQEs of (1 << @sqe_log2)
 *	bytes, page aligned
 * @rq_va: the receive ring likewise; 0 with an SRQ
 * @sq_log2_depth: log2 of the send ring's WQEs
 * @sqe_log2: log2 of a send WQE's bytes
 * @rq_log2_depth: log2 of the receive ring's WQEs; 0 with an SRQ
 * @rqe_log2: log2 of a receive WQE's bytes; 0 with an SRQ
 * @reserved: zero
 */
struct rnic_ucreate_qp {
	__aligned_u64 sq_va;
	__aligned_u64 rq_va;
	__u8 sq_log2_depth;
	__u8 sqe_log2;
	__u8 rq_log2_depth;
	__u8 rqe_log2;
	__u32 reserved;
};

/**
 * struct rnic_ucreate_qp_resp - create_qp response
 * @db_key: mmap offset of the doorbell page that holds both slots
 * @qpn: the QP number
 * @sq_db_off: byte offset of the send ring's slot in that page
 * @rq_db_off: the receive ring's; 0xffff with an SRQ
 * @reserved: zero
 */
struct rnic_ucreate_qp_resp {
	__aligned_u64 db_key;
	__u32 qpn;
	__u16 sq_db_off;
	__u16 rq_db_off;
	__u32 reserved[2];
};

/**
 * struct rnic_ucreate_srq - create_srq request
 * @wqe_va: the receive WQE slots, (1 << @log2_depth) of (1 << @rqe_log2)
 *	bytes, page aligned
 * @idx_va: the index ring, (1 << @log2_depth) le16 slot numbers, page
 *	aligned
 * @log2_depth: log2 of the slots
 * @rqe_log2: log2 of a receive WQE's bytes
 * @reserved: zero
 */
struct rnic_ucreate_srq {
	__aligned_u64 wqe_va;
	__aligned_u64 idx_va;
	__u8 log2_depth;
	__u8 rqe_log2;
	__u8 reserved[6];
};

/**
 * struct rnic_ucreate_srq_resp - create_srq response
 * @db_key: mmap offset of the doorbell page that holds the SRQ's slot
 * @srqn: the SRQ number
 * @db_off: byte offset of its slot in that page
 * @reserved: zero
 */
struct rnic_ucreate_srq_resp {
	__aligned_u64 db_key;
	__u32 srqn;
	__u16 db_off;
	__u16 reserved;
};

/* rnic_umodify_qp_resp.flags */
/*
 * The QP left for RESET holding a receive WQE it had taken from its SRQ:
 * the device dropped that WQE with no CQE, and srq_slot is free again.
 */
#define RNIC_UMODIFY_QP_F_SRQ_DROPPED	(1U << 0)

/**
 * struct rnic_umodify_qp_resp - modify_qp response (the extended command,
 *	IB_USER_VERBS_EX_CMD_MODIFY_QP; the plain one has no response)
 * @flags: RNIC_UMODIFY_QP_F_*
 * @reserved: zero
 * @srq_slot: with RNIC_UMODIFY_QP_F_SRQ_DROPPED, the SRQ slot; else zero
 * @reserved2: zero
 *
 * A user SRQ's slots are given out by the process; only this response
 * tells it that a slot it posted will never complete. A QP that is
 * destroyed drops its WQE too, with no word: the provider moves a QP that
 * has an SRQ to RESET before it destroys it.
 */
struct rnic_umodify_qp_resp {
	__u8 flags;
	__u8 reserved;
	__u16 srq_slot;
	__u32 reserved2;
};

/**
 * struct rnic_ucreate_ah_resp - create_ah response
 * @ah: the address handle's index in the device's AH table, what a UD
 *	send WQE names (rnic_sqe_ud.ah)
 * @reserved: zero
 */
struct rnic_ucreate_ah_resp {
	__u32 ah;
	__u32 reserved;
};

#endif /* RNIC_ABI_USER_H */
