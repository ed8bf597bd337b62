/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RC transport engine of rnicsim (ABI 2.0).
 *
 * Documentation/hardware-transport.rst, "Transport behaviour (2.0)", is the
 * contract this engine implements: requester (segmentation, PSN window,
 * go-back-N, RNR, READ/atomic limits, fence, in-order completion),
 * responder (ePSN, duplicates, NAKs, RNR, ACK coalescing, responder
 * resources) and the error and flush rules of an RC QP.
 *
 * The engine knows nothing about rings, BARs, guest memory, MR tables or
 * frames. The device embeds a struct rc_qp in its QP object and supplies a
 * struct rc_ops; the engine reaches everything outside itself through
 * those callbacks, so unit tests can join two engines with a fake wire.
 *
 * Inputs, all called by the device with the QP not otherwise in use (the
 * engine takes no locks; one thread per QP at a time):
 *
 *	rc_modify()		MODIFY_QP (RC transitions and attributes)
 *	rc_sq_doorbell()	the SQ producer index moved
 *	rc_rq_doorbell()	the RQ (or SRQ) producer index moved
 *	rc_rx()			an RC packet for this QP passed RX validation
 *	rc_timer()		the deadline given to ops->timer_set passed
 *	rc_fatal()		the device decided the QP is dead (QP_FATAL)
 *
 * Output is pulled: when the QP has something to send the engine calls
 * ops->wake(); the device then calls rc_tx() when it is the QP's turn in
 * its packet scheduler (and PFC allows), and the engine hands over
 * packets one at a time through ops->emit(). ACKs are coalesced until the
 * device calls rc_tx(), which is how "one ACK per receive batch" falls out:
 * the device calls rc_tx() for every QP it woke after it has processed
 * the frames it has received.
 *
 * Packets are IB transport packets: from the BTH through the payload and
 * pad, without ICRC. The device prepends the QP's header template and
 * appends the ICRC on transmit, and strips both on receive.
 *
 * Callbacks are called from inside the rc_*() functions. A callback must
 * not call back into the engine for the same QP (a loopback packet for
 * the same QP, say, must be queued, not delivered from inside emit()).
 */
#ifndef RNICSIM_RC_H
#define RNICSIM_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rnic_compat.h>
#include <rnic_hw.h>

/* ------------------------------------------------------------------------
 * Wire format: opcodes and header sizes (IB spec vol. 1, 9.2 and 9.3)
 */

enum rc_opcode {
	RC_OP_SEND_FIRST		= 0x00,
	RC_OP_SEND_MIDDLE		= 0x01,
	RC_OP_SEND_LAST			= 0x02,
	RC_OP_SEND_LAST_IMM		= 0x03,
	RC_OP_SEND_ONLY			= 0x04,
	RC_OP_SEND_ONLY_IMM		= 0x05,
	RC_OP_WRITE_FIRST		= 0x06,
	RC_OP_WRITE_MIDDLE		= 0x07,
	RC_OP_WRITE_LAST		= 0x08,
	RC_OP_WRITE_LAST_IMM		= 0x09,
	RC_OP_WRITE_ONLY		= 0x0a,
	RC_OP_WRITE_ONLY_IMM		= 0x0b,
	RC_OP_READ_REQ			= 0x0c,
	RC_OP_READ_RESP_FIRST		= 0x0d,
	RC_OP_READ_RESP_MIDDLE		= 0x0e,
	RC_OP_READ_RESP_LAST		= 0x0f,
	RC_OP_READ_RESP_ONLY		= 0x10,
	RC_OP_ACK			= 0x11,
	RC_OP_ATOMIC_ACK		= 0x12,
	RC_OP_CMP_SWAP			= 0x13,
	RC_OP_FETCH_ADD			= 0x14,
	RC_OP_SEND_LAST_INV		= 0x16,
	RC_OP_SEND_ONLY_INV		= 0x17,
};

#define RC_BTH_LEN		12
#define RC_RETH_LEN		16
#define RC_AETH_LEN		4
#define RC_IMMDT_LEN		4
#define RC_IETH_LEN		4
#define RC_ATOMICETH_LEN	28
#define RC_ATOMICACKETH_LEN	8

/* Largest transport packet: BTH + RETH + ImmDt + 4096 payload (+ pad 0). */
#define RC_PKT_MAX		(RC_BTH_LEN + RC_RETH_LEN + RC_IMMDT_LEN + 4096)

/* AETH syndromes (hardware-transport.rst "ACK and NAK codes") */
#define RC_AETH_ACK		0x1f	/* ACK, no credit information */
#define RC_AETH_RNR(code)	(0x20 | ((code) & 0x1f))
#define RC_AETH_NAK_SEQ		0x60
#define RC_AETH_NAK_INV		0x61
#define RC_AETH_NAK_ACCESS	0x62
#define RC_AETH_NAK_OP		0x63
#define RC_AETH_TYPE(syn)	(((syn) >> 5) & 3)	/* 0 ACK 1 RNR 3 NAK */

/* What a packet holds, parsed or to be built (CPU byte order). */
#define RC_HDR_RETH		BIT(0)
#define RC_HDR_AETH		BIT(1)
#define RC_HDR_IMMDT		BIT(2)
#define RC_HDR_IETH		BIT(3)
#define RC_HDR_ATOMICETH	BIT(4)
#define RC_HDR_ATOMICACKETH	BIT(5)

struct rc_hdr {
	u8 opcode;		/* enum rc_opcode */
	bool se;		/* solicited event */
	bool ackreq;
	u8 pad;			/* pad count, 0..3 */
	u16 pkey;
	u32 dest_qpn;
	u32 psn;
	u32 mask;		/* RC_HDR_*: the extension headers present */
	/* RETH (also the request part of AtomicETH: va, rkey) */
	u64 va;
	u32 rkey;
	u32 dma_len;
	/* AETH */
	u8 syndrome;
	u32 msn;
	/* ImmDt, as on the wire */
	__be32 imm;
	/* IETH */
	u32 inv_key;
	/* AtomicETH */
	u64 swap_add;
	u64 compare;
	/* AtomicAckETH */
	u64 orig;
	/* parse only: the payload (without pad) inside the parsed packet */
	const u8 *payload;
	u32 payload_len;
};

/**
 * rc_hdr_mask() - extension headers an RC opcode carries
 * @opcode: enum rc_opcode
 *
 * Return: RC_HDR_* mask, or -1 for an opcode that is not an RC opcode.
 */
int rc_hdr_mask(u8 opcode);

/**
 * rc_hdr_len() - bytes from the BTH to the payload for an RC opcode
 * @opcode: enum rc_opcode
 *
 * Return: the header bytes, or 0 for an opcode that is not an RC opcode.
 */
unsigned int rc_hdr_len(u8 opcode);

/**
 * rc_pkt_build() - write BTH, extension headers, payload and pad
 * @buf: at least rc_hdr_len() + @len + 3 bytes
 * @h: the fields; mask is taken from the opcode, pad computed from @len
 * @payload: @len bytes (may be NULL when @len is 0), or NULL to leave the
 *	payload area for the caller to fill
 * @len: payload bytes
 *
 * Return: the packet length (headers, payload and pad).
 */
size_t rc_pkt_build(u8 *buf, const struct rc_hdr *h, const void *payload,
		    u32 len);

/**
 * rc_pkt_parse() - parse and check an RC transport packet
 * @pkt: BTH onward, ICRC excluded
 * @len: bytes at @pkt
 * @h: filled on success; payload points into @pkt
 *
 * Checks what RX validation checks 5 and 12 of hardware-transport.rst ask
 * of the BTH and the extension headers: TVer 0, an RC opcode, the headers
 * the opcode needs present, a pad count that fits. It never reads past
 * @len.
 * The device may use it for its own RX validation.
 *
 * Return: 0, or -EINVAL (with @h partly filled).
 */
int rc_pkt_parse(const u8 *pkt, size_t len, struct rc_hdr *h);

/* ------------------------------------------------------------------------
 * PSN arithmetic: 24-bit, compared modulo 2^24
 */

#define RC_PSN_MASK		0xffffffu

static inline u32 rc_psn_add(u32 psn, u32 n)
{
	return (psn + n) & RC_PSN_MASK;
}

/* (a - b) mod 2^24 */
static inline u32 rc_psn_diff(u32 a, u32 b)
{
	return (a - b) & RC_PSN_MASK;
}

/* @a is after @b: (a - b) mod 2^24 in 1 .. 2^23 - 1 */
static inline bool rc_psn_after(u32 a, u32 b)
{
	u32 d = rc_psn_diff(a, b);

	return d != 0 && d < 0x800000u;
}

/* ------------------------------------------------------------------------
 * Work requests as the device hands them over
 */

/* Largest SGE lists (send 29, receive 31) and inline data of ABI 2.0 */
#define RC_MAX_SGE		31
#define RC_MAX_INLINE		464
/* max_msg_size */
#define RC_MAX_MSG		0x80000000u
/* architectural limits of max_rd_atomic / max_dest_rd_atomic */
#define RC_MAX_RD_ATOMIC	16
/* psn_window */
#define RC_PSN_WINDOW		128
/* AckReq at least every this many packets of a message */
#define RC_ACKREQ_EVERY		32

struct rc_sge {
	u64 addr;		/* MR-space address */
	u32 len;
	u32 lkey;
};

/**
 * struct rc_swqe - a send WQE, read and checked by the device
 * @idx: free-running SQ index
 * @opcode: enum rnic_sqe_opcode
 * @flags: RNIC_SQE_F_*
 * @num_sge: SGEs in @sge (0 with RNIC_SQE_F_INLINE)
 * @syndrome: with RC_WQE_BAD or RC_WQE_FATAL, enum rnic_err_reason: why
 * @length: message bytes (SGE sum or inline bytes)
 * @imm_data: SEND_IMM, WRITE_IMM: as on the wire
 * @key: SEND_INV, LOCAL_INV, REG_MR: the key (CPU order)
 * @remote_addr: WRITE*, READ, atomics
 * @rkey: WRITE*, READ, atomics
 * @compare_add: atomics
 * @swap: CMP_SWAP
 * @seg: the WQE's opcode segment as it is in the ring, for the device's
 *	own use in ops->local_op() (REG_MR)
 * @sge: the SGEs
 * @inline_data: with RNIC_SQE_F_INLINE, @length bytes
 */
struct rc_swqe {
	u16 idx;
	u8 opcode;
	u8 flags;
	u8 num_sge;
	u8 syndrome;
	u32 length;
	union {
		__be32 imm_data;
		u32 key;
	};
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	union rnic_sqe_seg seg;
	struct rc_sge sge[RC_MAX_SGE];
	u8 inline_data[RC_MAX_INLINE];
};

/**
 * struct rc_rwqe - a receive WQE taken from the QP's RQ or SRQ
 * @idx: free-running RQ index, or with @srq the SRQ slot
 * @srq: taken from the QP's SRQ
 * @num_sge: SGEs in @sge
 * @syndrome: with RC_WQE_BAD or RC_WQE_FATAL, enum rnic_err_reason
 * @sge: the SGEs
 */
struct rc_rwqe {
	u16 idx;
	bool srq;
	u8 num_sge;
	u8 syndrome;
	struct rc_sge sge[RC_MAX_SGE];
};

/*
 * What ops->sq_peek() and ops->rq_take() found. RC_WQE_BAD: a malformed
 * WQE, with idx, opcode (send) and syndrome valid; it completes with
 * LOC_QP_OP_ERR and the QP enters ERR. RC_WQE_FATAL: the ring cannot be
 * read (DMA error, SRQ in error), syndrome valid; the QP gets QP_FATAL.
 */
enum rc_wqe_res {
	RC_WQE_OK	= 0,	/* a well-formed WQE */
	RC_WQE_NONE	= 1,	/* nothing posted at that index (yet) */
	RC_WQE_BAD	= 2,
	RC_WQE_FATAL	= 3,
};

/*
 * Memory accesses the engine asks for (ops->mem): LOCAL_READ the send
 * payload (lkey, no right needed); LOCAL_WRITE a READ response or atomic
 * result (lkey, LOCAL_WRITE); RECV_WRITE a receive WQE's SGE (lkey,
 * LOCAL_WRITE, the RQ's PD or the SRQ's); REMOTE_WRITE and REMOTE_READ
 * (rkey, the REMOTE_* right).
 */
enum rc_mem_op {
	RC_MEM_LOCAL_READ	= 0,
	RC_MEM_LOCAL_WRITE	= 1,
	RC_MEM_RECV_WRITE	= 2,
	RC_MEM_REMOTE_WRITE	= 3,
	RC_MEM_REMOTE_READ	= 4,
};

/*
 * struct rc_cqe.flags beyond RNIC_RCQE_F_IMM, _INV and _SRQ. SILENT: an
 * unsignaled success; retire the WQE, write no CQE.
 */
#define RC_CQE_F_SOLICITED	BIT(6)	/* receive: the last packet had SE */
#define RC_CQE_F_SILENT		BIT(7)

/**
 * struct rc_cqe - a completion (or silent retirement) of one WQE
 * @wqe_idx: the WQE's free-running SQ/RQ index or SRQ slot
 * @opcode: send: enum rnic_sqe_opcode; receive: RNIC_CQE_OP_RECV*
 * @status: enum rnic_wc_status
 * @syndrome: enum rnic_err_reason (0 on success)
 * @flags: RNIC_RCQE_F_IMM, RNIC_RCQE_F_INV, RNIC_RCQE_F_SRQ, RC_CQE_F_*
 * @byte_len: as the CQE's byte_len (0 in error CQEs)
 * @imm_data: with RNIC_RCQE_F_IMM
 * @inv_key: with RNIC_RCQE_F_INV
 *
 * Send completions come in SQ order, receive completions in RQ order.
 */
struct rc_cqe {
	u16 wqe_idx;
	u8 opcode;
	u8 status;
	u8 syndrome;
	u8 flags;
	u32 byte_len;
	union {
		__be32 imm_data;
		u32 inv_key;
	};
};

struct rc_qp;

/**
 * struct rc_ops - what the device does for the engine
 *
 * @sq_peek: read and check the send WQE at free-running index @idx, which
 *	is at or after the oldest WQE not yet completed. The engine peeks a
 *	WQE when it starts it and again when it needs its SGEs later (to
 *	retransmit, or to place READ responses), so peeking must not consume.
 *	Returns enum rc_wqe_res.
 * @rq_take: take the next receive WQE (from the RQ, or from the SRQ for a
 *	QP attached to one) and check it. The engine calls it only when a
 *	message needs a buffer, and, in ERR, to flush an RQ (never an SRQ).
 *	Returns enum rc_wqe_res.
 * @mem: check a key for @op over [@va, @va + @len) (key, state, PD,
 *	access right, bounds: the order of hardware-rdma.rst "MR") and, if @buf
 *	is not NULL, move the bytes (read into @buf or write from it). The
 *	QP's own access flags are the engine's business, not this call's.
 *	Returns 0 or enum rnic_err_reason (RNIC_ERR_DMA_OOB when the data
 *	cannot be reached: the engine treats that as fatal for the QP).
 * @atomic: check @rkey for REMOTE_ATOMIC over the 8 bytes at @va and do
 *	the operation on the little-endian value there, atomically with
 *	respect to the device's other atomics; the value before goes to
 *	@orig. Returns 0 or enum rnic_err_reason.
 * @invalidate: invalidate @key for a received SEND_INV (a FAST_REG MR of
 *	the QP's PD with that variant, in VALID). Returns 0 or a reason.
 * @local_op: execute LOCAL_INV or REG_MR. Returns 0 or a reason (the WQE
 *	then completes with LOC_QP_OP_ERR).
 * @emit: send one packet (BTH .. pad, no ICRC) on the QP's path. Returns
 *	0; -EAGAIN when the device cannot take it now (the engine keeps it
 *	and offers it again on a later rc_tx()); another negative errno when
 *	it was lost (link down): the engine counts it as sent.
 * @complete: write a CQE (or, with RC_CQE_F_SILENT, only retire the WQE).
 *	Returns 0, or a negative errno when the CQ cannot take it (overrun,
 *	CQ in error): the engine then moves the QP to ERR with QP_FATAL
 *	(CQ_ERROR) and writes no more completions.
 * @event: post an asynchronous event on event queue 0: @type enum
 *	rnic_eqe_type (COMM_EST, QP_REQ_ERR, QP_ACCESS_ERR, QP_FATAL,
 *	SQ_DRAINED, LAST_WQE_REACHED), @reason enum rnic_err_reason, @info the
 *	offending PSN or 0.
 * @state_changed: optional; the QP's state moved from @old to @new (enum
 *	rnic_qp_state_hw) by the engine's own decision or by rc_modify().
 * @wake: the QP has packets to send: schedule an rc_tx(). May be called
 *	often; the device only needs to remember that it was.
 * @now_ns: the device's clock. Time the device spends paused by PFC may
 *	be left out of it (or given back with rc_timer_defer()).
 * @timer_set: the engine wants rc_timer() at or after @deadline_ns
 *	(one per QP; a new call replaces the old deadline; 0 cancels). An
 *	early or spurious rc_timer() is harmless.
 */
struct rc_ops {
	int (*sq_peek)(struct rc_qp *qp, u16 idx, struct rc_swqe *wqe);
	int (*rq_take)(struct rc_qp *qp, struct rc_rwqe *wqe);
	u8 (*mem)(struct rc_qp *qp, enum rc_mem_op op, u32 key, u64 va,
		  void *buf, u32 len);
	u8 (*atomic)(struct rc_qp *qp, u32 rkey, u64 va, bool cmp_swap,
		     u64 compare_add, u64 swap, u64 *orig);
	u8 (*invalidate)(struct rc_qp *qp, u32 key);
	u8 (*local_op)(struct rc_qp *qp, const struct rc_swqe *wqe);
	int (*emit)(struct rc_qp *qp, const u8 *pkt, size_t len);
	int (*complete)(struct rc_qp *qp, const struct rc_cqe *cqe);
	void (*event)(struct rc_qp *qp, u8 type, u8 reason, u64 info);
	void (*state_changed)(struct rc_qp *qp, u8 old, u8 new);
	void (*wake)(struct rc_qp *qp);
	u64 (*now_ns)(struct rc_qp *qp);
	void (*timer_set)(struct rc_qp *qp, u64 deadline_ns);
};

/* ------------------------------------------------------------------------
 * Modify QP
 */

/**
 * struct rc_attr - MODIFY_QP attributes the engine owns, CPU order
 * @mask: RNIC_QP_ATTR_*; without STATE the QP stays in its state (an
 *	attribute-only change). PATH and PKEY_INDEX are the device's, but
 *	the engine checks that they are given where the transition table
 *	requires them; QKEY is never allowed on RC.
 * @state: target, enum rnic_qp_state_hw
 * @cur_state: expected current state (with CUR_STATE)
 * @path_mtu: enum rnic_pmtu
 * @access: RNIC_ACCESS_*: what incoming requests may do
 * @timeout: local ACK timeout code, 0 .. 31 (0: none)
 * @retry_cnt: 0 .. 7 (7 means seven)
 * @rnr_retry: 0 .. 7 (7: for ever)
 * @min_rnr_timer: RNR timer code sent in RNR NAKs, 0 .. 31
 * @max_rd_atomic: 0 .. RC_MAX_RD_ATOMIC
 * @max_dest_rd_atomic: 0 .. RC_MAX_RD_ATOMIC
 * @sqd_notify: with SQD_NOTIFY, 1 posts SQ_DRAINED
 * @sq_psn: first PSN the requester sends
 * @rq_psn: first PSN the responder expects
 * @dest_qpn: the peer QP
 */
struct rc_attr {
	u32 mask;
	u8 state;
	u8 cur_state;
	u8 path_mtu;
	u8 access;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sqd_notify;
	u32 sq_psn;
	u32 rq_psn;
	u32 dest_qpn;
};

/* ------------------------------------------------------------------------
 * The QP. Fields under "device" are set by the device; the rest is the
 * engine's: the device may read the attributes and counters, nothing else.
 */

/* Send WQEs the engine tracks between start and completion */
#define RC_SQ_TRACK		256
/* Responses (ACK, NAK, READ response streams, atomic ACKs) queued */
#define RC_RESP_QUEUE		256

/* private: one started send WQE */
struct rc_swr {
	u32 first_psn;
	u32 npsn;		/* PSNs it takes; 0 for local operations */
	u32 length;
	u32 rd_req_psn;		/* READ: PSN of the last request sent for it */
	u16 idx;
	u8 opcode;
	u8 flags;
	u8 state;		/* RC_SWR_* (rc_req.c) */
	u8 status;
	u8 syndrome;
};

/* private: the requester */
struct rc_req {
	u16 una_idx;		/* oldest WQE not completed */
	u16 next_idx;		/* next WQE to start */
	u16 tx_idx;		/* WQE of the transmit cursor */
	u32 tx_psn;		/* PSN of the next packet to transmit */
	u32 next_psn;		/* next PSN to assign (QUERY_QP sq_psn) */
	u32 una_psn;		/* oldest PSN not acknowledged */
	u32 sent_psn;		/* one after the highest PSN ever sent */
	u32 rd_atomic;		/* READ/atomic WQEs started, not done */
	u8 retry_left;
	u8 rnr_left;
	bool halted;		/* a WQE failed: start nothing more */
	bool sq_more;		/* a doorbell since the last empty peek */
	bool rnr_wait;		/* waiting out an RNR NAK */
	bool retried;		/* rewound for retry_psn, no progress since */
	bool drained_sent;	/* SQ_DRAINED posted for this SQD */
	u32 retry_psn;
	u32 rnr_psn;
	u64 ack_deadline;	/* local ACK timer, 0 = stopped */
	u64 rnr_deadline;	/* RNR wait, 0 = none */
	struct rc_swr wr[RC_SQ_TRACK];
	/* caches of peeked WQEs: for transmit, and for placing responses */
	bool txw_valid;
	bool rxw_valid;
	struct rc_swqe txw;
	struct rc_swqe rxw;
};

/* private: one queued response */
struct rc_resp_item {
	u8 type;		/* RC_RI_* (rc_resp.c) */
	u8 syndrome;		/* ACK/NAK: AETH syndrome */
	u8 res;			/* READ/atomic: responder resource slot */
	u32 psn;		/* ACK/NAK/atomic: PSN; READ: next PSN */
	u32 first_psn;		/* READ: the request's PSN */
	u32 last_psn;		/* READ: last response PSN */
	u32 msn;
	u32 rkey;
	u32 len;		/* READ: bytes left */
	u64 va;			/* READ: next address */
	u64 orig;		/* atomic: original value */
};

/* private: a responder resource (replay state of a READ or atomic) */
struct rc_resp_res {
	bool valid;
	bool atomic;
	u32 first_psn;
	u32 npsn;
	u64 orig;
	u32 msn;
};

/* private: the responder */
struct rc_resp {
	u32 epsn;		/* expected PSN (QUERY_QP rq_psn) */
	u32 msn;		/* messages completed, mod 2^24 */
	u8 cur;			/* message in progress: RC_RCUR_* */
	bool nak_sent;		/* NAK seq or RNR NAK sent for epsn */
	bool comm_est;		/* COMM_EST posted */
	bool rwqe_valid;	/* @rwqe is taken and not completed */
	bool final_nak;		/* an error NAK waits to be sent in ERR */
	u8 final_syn;
	u32 final_psn;
	/* message in progress */
	u32 offset;		/* bytes placed so far */
	u64 va;			/* WRITE: RETH */
	u32 rkey;
	u32 dma_len;
	u32 rwqe_len;		/* sum of the rwqe's SGE lengths */
	struct rc_rwqe rwqe;
	/* responder resources: a ring of max_dest_rd_atomic entries */
	u8 res_next;
	struct rc_resp_res res[RC_MAX_RD_ATOMIC];
	/* queued responses, [head, tail) */
	u16 q_head;
	u16 q_tail;
	struct rc_resp_item q[RC_RESP_QUEUE];
	bool tx_turn;		/* rc_tx() alternates responder/requester */
};

struct rc_roles;

/**
 * struct rc_qp - RC transport state of one QP
 * @ops: device callbacks (device)
 * @priv: the device's pointer back to its QP object (device)
 * @qpn: this QP's number (device)
 * @pkey: the P_Key of the QP's pkey_index, for the BTH (device)
 * @srq: receives come from an SRQ (device)
 * @port_stats: NULL or the port's RNIC_NUM_RDMA_STATS counters, which the
 *	engine increments along with @stats (device)
 * @state: enum rnic_qp_state_hw
 * @path_mtu: enum rnic_pmtu
 * @mtu: payload bytes per packet (rnic_pmtu_bytes(@path_mtu))
 * @access: RNIC_ACCESS_REMOTE_* the responder allows
 * @timeout: local ACK timeout code
 * @retry_cnt: retry count
 * @rnr_retry: RNR retry count (7: for ever)
 * @min_rnr_timer: RNR timer code the responder sends
 * @max_rd_atomic: READ/atomic WQEs outstanding as requester
 * @max_dest_rd_atomic: responder resources
 * @sqd_notify: post SQ_DRAINED in SQD
 * @dest_qpn: the peer QP
 * @stats: this QP's share of the port counters the engine keeps (see
 *	RC_ENGINE_STATS), indexed by enum rnic_rdma_stat
 * @qp_stats: RNIC_QP_STATS, indexed by enum rnic_qp_stat; tx_bytes and
 *	rx_bytes count transport packet bytes (BTH .. pad)
 */
struct rc_qp {
	/* device */
	const struct rc_ops *ops;
	void *priv;
	u32 qpn;
	u16 pkey;
	bool srq;
	u64 *port_stats;

	/* attributes */
	u8 state;
	u8 path_mtu;
	u32 mtu;
	u8 access;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sqd_notify;
	u32 dest_qpn;

	u64 stats[RNIC_NUM_RDMA_STATS];
	u64 qp_stats[RNIC_NUM_QP_STATS];

	/* private */
	const struct rc_roles *roles;	/* rc_qp_init(): for rc_base.c */
	bool in_err;		/* inside the ERR entry (no re-entry) */
	bool cq_dead;		/* ops->complete failed: write no more */
	u64 timer_armed;	/* deadline last given to ops->timer_set */
	struct rc_req req;
	struct rc_resp resp;
};

/*
 * The counters of RNIC_RDMA_STATS the engine keeps (in @stats and, if set,
 * @port_stats); the device keeps all the others and must not count these
 * again. cqe_errors and cqe_flushed count what the engine asked
 * ops->complete() to write; qp_errors counts QPs the engine moved to ERR
 * by its own decision (not rc_modify(), not rc_fatal(), which the device
 * decided: it counts those); key_violations counts failed ops->mem,
 * ops->atomic checks; wqe_errors counts RC_WQE_BAD WQEs completed.
 */
#define RC_ENGINE_STATS(op)			\
	op(rc_req_packets)			\
	op(rc_resp_packets)			\
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
	op(wqe_errors)				\
	op(key_violations)			\
	op(cqe_errors)				\
	op(cqe_flushed)				\
	op(qp_errors)

/* ------------------------------------------------------------------------
 * Entry points
 */

/**
 * rc_qp_init() - put a QP in RESET with no transport state
 * @qp: the QP; the device fields are set from the arguments, @pkey to
 *	the default P_Key, @srq false, @port_stats NULL (set them after)
 * @ops: device callbacks
 * @priv: the device's pointer
 * @qpn: the QP's number
 */
void rc_qp_init(struct rc_qp *qp, const struct rc_ops *ops, void *priv,
		u32 qpn);

/**
 * rc_modify_check() - would rc_modify() accept these attributes?
 * @qp: the QP
 * @attr: the request
 *
 * Checks the transition against the RC rows of hardware-rdma.rst's table
 * (required and allowed attributes, CUR_STATE) and the values the engine
 * owns. Changes nothing, so the device can check its own attributes (path
 * template, P_Key index) and apply all or nothing.
 *
 * Return: RNIC_AQ_SUCCESS, RNIC_AQ_BAD_TRANSITION, RNIC_AQ_BAD_ATTR_MASK,
 * RNIC_AQ_BAD_PARAM, or RNIC_AQ_BAD_STATE (SQD->SQD changes before the SQ
 * has drained).
 */
u8 rc_modify_check(const struct rc_qp *qp, const struct rc_attr *attr);

/**
 * rc_modify() - apply a MODIFY_QP
 * @qp: the QP
 * @attr: the request
 *
 * Checks as rc_modify_check(), then applies. To RESET: all transport
 * state and WQEs are discarded without completions. To ERR: the QP stops
 * sending and flushes its SQ and RQ through ops->complete() before this
 * returns (hardware-transport.rst "Errors and flush").
 *
 * Return: as rc_modify_check(); nothing changed unless RNIC_AQ_SUCCESS.
 */
u8 rc_modify(struct rc_qp *qp, const struct rc_attr *attr);

/**
 * rc_sq_doorbell() - new send WQEs may have been posted
 * @qp: the QP
 *
 * In RTS the requester will start them (ops->wake); in ERR they are
 * flushed now.
 */
void rc_sq_doorbell(struct rc_qp *qp);

/**
 * rc_rq_doorbell() - new receive WQEs may have been posted
 * @qp: the QP
 *
 * Only ERR needs this (to flush them); the responder takes receive WQEs
 * when messages arrive.
 */
void rc_rq_doorbell(struct rc_qp *qp);

/**
 * rc_rx() - a received RC packet for this QP
 * @qp: the QP
 * @pkt: BTH onward, ICRC excluded; the device has run its RX validation
 *	(the engine checks the transport headers again, and drops what
 *	fails without a change)
 * @len: bytes at @pkt
 *
 * Requests go to the responder, responses to the requester. Packets in a
 * state other than RTR, RTS or SQD are dropped.
 */
void rc_rx(struct rc_qp *qp, const u8 *pkt, size_t len);

/**
 * rc_tx() - let the QP send
 * @qp: the QP
 * @budget: at most this many packets
 *
 * Sends through ops->emit() the pending responses (coalesced ACKs, NAKs,
 * READ responses, atomic ACKs) and request packets, alternating between
 * the two, subject to the PSN window and the other requester rules.
 *
 * Return: packets sent.
 */
unsigned int rc_tx(struct rc_qp *qp, unsigned int budget);

/**
 * rc_tx_pending() - whether rc_tx() may have something to send now
 * @qp: the QP
 *
 * Return: true if a response is queued or the requester may send.
 */
bool rc_tx_pending(const struct rc_qp *qp);

/**
 * rc_timer() - the timer deadline passed
 * @qp: the QP
 *
 * Runs the local ACK timeout and the end of an RNR wait, whichever are
 * due by ops->now_ns().
 */
void rc_timer(struct rc_qp *qp);

/**
 * rc_timer_defer() - push the QP's timers back
 * @qp: the QP
 * @ns: time the QP could not send (PFC pause), which does not count
 */
void rc_timer_defer(struct rc_qp *qp, u64 ns);

/**
 * rc_fatal() - the device moves the QP to ERR for an error no CQE reports
 * @qp: the QP
 * @reason: enum rnic_err_reason (BAD_DOORBELL, DMA_OOB, CQ_ERROR, ...)
 * @info: the offending value for the event
 *
 * Posts QP_FATAL, enters ERR and flushes (without completions if the CQ is
 * the reason: pass RNIC_ERR_CQ_ERROR).
 */
void rc_fatal(struct rc_qp *qp, u8 reason, u64 info);

/**
 * rc_sq_psn() - QUERY_QP sq_psn: the next PSN the requester will assign
 * @qp: the QP
 *
 * Return: the PSN.
 */
u32 rc_sq_psn(const struct rc_qp *qp);

/**
 * rc_rq_psn() - QUERY_QP rq_psn: the responder's expected PSN
 * @qp: the QP
 *
 * Return: the PSN.
 */
u32 rc_rq_psn(const struct rc_qp *qp);

/**
 * rc_sq_draining() - in SQD with WQEs begun and not yet complete
 * @qp: the QP
 *
 * Return: true while draining (QUERY_QP RNIC_QPQ_F_SQ_DRAINING).
 */
bool rc_sq_draining(const struct rc_qp *qp);

/* ------------------------------------------------------------------------
 * Engine internals, shared between rc_*.c only; not for the device.
 */

/* rc_swr.state */
#define RC_SWR_PENDING		0	/* started, not complete */
#define RC_SWR_DONE		1	/* complete, waits for its turn */
#define RC_SWR_ERROR		2	/* failed, waits for its turn */

/* rc_resp.cur: the message in progress at the responder */
#define RC_RCUR_NONE		0
#define RC_RCUR_SEND		1
#define RC_RCUR_WRITE		2

/*
 * The roles as rc_base.c sees them. rc_kick() asks whether either side
 * has something to send and rc_enter_err() flushes both, yet every role
 * calls those two: so they reach the roles through this table, which
 * rc_qp_init() sets in rc_qp.roles, and never by name (issue 20: no
 * import circle between the rc_*.c files).
 */
struct rc_roles {
	bool (*req_pending)(const struct rc_qp *qp);
	bool (*resp_pending)(const struct rc_qp *qp);
	void (*req_flush)(struct rc_qp *qp);
	void (*resp_flush)(struct rc_qp *qp);
};

/* rc_base.c: what the roles share, and the error state */
void rc_count(struct rc_qp *qp, unsigned int stat, u64 n);
#define RC_STAT_INC(qp, name)	rc_count((qp), RNIC_RDMA_STAT_##name, 1)

int rc_emit(struct rc_qp *qp, const u8 *pkt, size_t len);
void rc_complete(struct rc_qp *qp, const struct rc_cqe *cqe);
void rc_set_state(struct rc_qp *qp, u8 state);
void rc_enter_err(struct rc_qp *qp);
void rc_engine_fatal(struct rc_qp *qp, u8 reason, u64 info);
void rc_timer_update(struct rc_qp *qp);
void rc_kick(struct rc_qp *qp);
u8 rc_sge_copy(struct rc_qp *qp, enum rc_mem_op op, const struct rc_sge *sge,
	       unsigned int num, u32 off, void *buf, u32 len);
u32 rc_npsn(const struct rc_qp *qp, u32 len);

static inline bool rc_op_rd_atomic(u8 opcode)
{
	return opcode == RNIC_SQE_OP_READ || opcode == RNIC_SQE_OP_CMP_SWAP ||
	       opcode == RNIC_SQE_OP_FETCH_ADD;
}

/* rc_sq.c: the send queue's records, shared by rc_req.c and rc_comp.c */
struct rc_swr *rc_req_swr(struct rc_qp *qp, u16 idx);
struct rc_swqe *rc_req_wqe(struct rc_qp *qp, bool tx, struct rc_swr *r);
void rc_req_fail(struct rc_qp *qp, struct rc_swr *r, u8 status, u8 syndrome);
void rc_req_rewind(struct rc_qp *qp, u32 psn);
void rc_comp_arm(struct rc_qp *qp, bool restart);
void rc_comp_complete(struct rc_qp *qp);

/* rc_req.c: starting WQEs and sending request packets */
int rc_req_tx_one(struct rc_qp *qp);
bool rc_req_pending(const struct rc_qp *qp);
void rc_req_reset(struct rc_qp *qp, u32 sq_psn);
void rc_req_flush(struct rc_qp *qp);

/* rc_comp.c: responses, retries, timers */
void rc_comp_rx(struct rc_qp *qp, const struct rc_hdr *h);
void rc_comp_timer(struct rc_qp *qp, u64 now);

/* rc_resp.c: the responder */
int rc_resp_tx_one(struct rc_qp *qp);
bool rc_resp_pending(const struct rc_qp *qp);
void rc_resp_rx(struct rc_qp *qp, const struct rc_hdr *h);
void rc_resp_reset(struct rc_qp *qp, u32 rq_psn);
void rc_resp_flush(struct rc_qp *qp);

#endif /* RNICSIM_RC_H */
