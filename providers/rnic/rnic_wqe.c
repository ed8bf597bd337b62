// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: verbs work requests to send and receive WQEs, and CQEs to work
 * completions (Documentation/hardware-rdma.rst, "Work queue entries (2.0)"
 * and "Completion entries").
 *
 * The device checks every WQE it fetches and fails a bad one with an
 * error CQE, which on an RC QP takes the whole QP to ERR. A caller gets a
 * synchronous error instead for everything visible at post time: opcodes
 * a user QP cannot use, flags and sizes the WQE cannot carry. Keys, AH
 * entries and the path MTU are the device's to check. A WQE is checked
 * completely before a byte of it is written, then written completely,
 * reserved bytes zero, so a refused WR leaves its ring slot untouched.
 *
 * On the way back nothing the device wrote is trusted: an unknown opcode,
 * flags that do not fit the opcode or QP type, or a receive longer than
 * its WQE make the CQE ill-formed (-EIO); an unknown status still
 * completes the WR, as IBV_WC_GENERAL_ERR.
 */
#include <errno.h>
#include <string.h>

#include "rnic_wqe.h"

#define RNIC_SEND_FLAGS	(IBV_SEND_FENCE | IBV_SEND_SIGNALED |	\
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE)

enum rnic_seg {
	RNIC_SEG_NONE,		/* SEND on RC: no opcode segment */
	RNIC_SEG_RDMA,
	RNIC_SEG_ATOMIC,
};

#define RNIC_OPF_UD		BIT(0)	/* allowed on UD QPs */
#define RNIC_OPF_INLINE		BIT(1)	/* may be inline */
#define RNIC_OPF_IMM		BIT(2)	/* ctrl.imm_data */
#define RNIC_OPF_INV		BIT(3)	/* ctrl.key = invalidate_rkey */
#define RNIC_OPF_ATOMIC		BIT(4)

struct rnic_wr_op {
	uint8_t hw;		/* enum rnic_sqe_opcode; 0: not for users */
	uint8_t seg;		/* enum rnic_seg */
	uint8_t flags;		/* RNIC_OPF_* */
};

/*
 * Indexed by enum ibv_wr_opcode. LOCAL_INV and REG_MR need a FAST_REG MR,
 * which a user PD cannot have (REG_MR carries a DMA address: kernel PDs
 * only); BIND_MW, TSO and driver opcodes are not rnic's.
 */
static const struct rnic_wr_op rnic_wr_ops[] = {
	[IBV_WR_RDMA_WRITE] = { RNIC_SQE_OP_WRITE, RNIC_SEG_RDMA,
		RNIC_OPF_INLINE },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { RNIC_SQE_OP_WRITE_IMM, RNIC_SEG_RDMA,
		RNIC_OPF_INLINE | RNIC_OPF_IMM },
	[IBV_WR_SEND] = { RNIC_SQE_OP_SEND, RNIC_SEG_NONE,
		RNIC_OPF_UD | RNIC_OPF_INLINE },
	[IBV_WR_SEND_WITH_IMM] = { RNIC_SQE_OP_SEND_IMM, RNIC_SEG_NONE,
		RNIC_OPF_UD | RNIC_OPF_INLINE | RNIC_OPF_IMM },
	[IBV_WR_RDMA_READ] = { RNIC_SQE_OP_READ, RNIC_SEG_RDMA, 0 },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { RNIC_SQE_OP_CMP_SWAP, RNIC_SEG_ATOMIC,
		RNIC_OPF_ATOMIC },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { RNIC_SQE_OP_FETCH_ADD,
		RNIC_SEG_ATOMIC, RNIC_OPF_ATOMIC },
	[IBV_WR_SEND_WITH_INV] = { RNIC_SQE_OP_SEND_INV, RNIC_SEG_NONE,
		RNIC_OPF_INLINE | RNIC_OPF_INV },
};

/* The atomic operand: one naturally aligned 64-bit word */
#define RNIC_ATOMIC_LEN		8

/* log2 of the smallest power of two >= @bytes, at least @min_log2 */
static uint8_t rnic_size_log2(uint64_t bytes, uint8_t min_log2)
{
	uint8_t l = min_log2;

	while (l < 63 && (1ULL << l) < bytes)
		l++;
	return l;
}

/**
 * rnic_sqe_log2() - the smallest send WQE for a QP's capacities
 * @max_sge: SGEs a send WR may carry
 * @max_inline: inline bytes a send WR may carry
 *
 * A QP pays only for the WQE size its capacities need: 64 bytes hold one
 * SGE or 16 inline bytes, 512 bytes 29 SGEs or 464 bytes (the same rule as
 * the kernel driver's, so both size alike).
 *
 * Return: log2 of the WQE size, at least RNIC_SQE_LOG2_MIN; above
 * RNIC_SQE_LOG2_MAX when no WQE holds that much (the caller refuses).
 */
uint8_t rnic_sqe_log2(uint32_t max_sge, uint32_t max_inline)
{
	uint64_t sges = (uint64_t)max_sge * sizeof(struct rnic_data_sge);
	uint64_t data = sges > max_inline ? sges : max_inline;

	return rnic_size_log2(RNIC_SQE_HDR_SIZE + data, RNIC_SQE_LOG2_MIN);
}

/**
 * rnic_rqe_log2() - the smallest receive WQE (RQ or SRQ slot)
 * @max_sge: SGEs a receive WR may carry (0 is given room for one)
 *
 * Return: log2 of the WQE size, at least RNIC_RQE_LOG2_MIN; above
 * RNIC_RQE_LOG2_MAX when no WQE holds that many.
 */
uint8_t rnic_rqe_log2(uint32_t max_sge)
{
	uint64_t data = (uint64_t)(max_sge ? max_sge : 1) *
			sizeof(struct rnic_data_sge);

	return rnic_size_log2(RNIC_RQE_HDR_SIZE + data, RNIC_RQE_LOG2_MIN);
}

/**
 * rnic_depth_log2() - log2 of a ring depth that holds @entries
 * @entries: entries asked for
 * @min_log2: the smallest ring
 *
 * Return: log2 of the smallest power of two >= @entries, >= @min_log2.
 */
uint8_t rnic_depth_log2(uint32_t entries, uint8_t min_log2)
{
	return rnic_size_log2(entries, min_log2);
}

/* The message length of @wr's SGEs, or -EINVAL above @max bytes */
static int64_t rnic_sge_len(const struct ibv_send_wr *wr, uint64_t max)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > max ? -EINVAL : (int64_t)len;
}

/* Everything the device would refuse that is visible now */
static int rnic_check_send(const struct rnic_sq_attr *sq,
			   const struct ibv_send_wr *wr, uint32_t ah_idx,
			   const struct rnic_wr_op **opp, int64_t *lenp)
{
	bool ud = sq->qp_type == IBV_QPT_UD;
	const struct rnic_wr_op *op;
	uint32_t room;
	int64_t len;

	if (!ud && sq->qp_type != IBV_QPT_RC)
		return EINVAL;
	if (sq->sqe_log2 < RNIC_SQE_LOG2_MIN || sq->sqe_log2 > RNIC_SQE_LOG2_MAX)
		return EINVAL;
	if ((unsigned int)wr->opcode >= ARRAY_SIZE(rnic_wr_ops))
		return EINVAL;
	op = &rnic_wr_ops[wr->opcode];
	if (!op->hw || (ud && !(op->flags & RNIC_OPF_UD)))
		return EINVAL;
	if ((op->flags & RNIC_OPF_ATOMIC) && !sq->atomics)
		return EOPNOTSUPP;
	if (wr->send_flags & ~RNIC_SEND_FLAGS)
		return EINVAL;
	if (wr->num_sge < 0)
		return EINVAL;

	if (wr->send_flags & IBV_SEND_INLINE) {
		if (!(op->flags & RNIC_OPF_INLINE))
			return EINVAL;
		room = rnic_sqe_max_inline(sq->sqe_log2);
		if (room > sq->max_inline)
			room = sq->max_inline;
		len = rnic_sge_len(wr, room);
	} else {
		room = rnic_sqe_max_sge(sq->sqe_log2);
		if (room > sq->max_sge)
			room = sq->max_sge;
		if ((uint32_t)wr->num_sge > room)
			return EINVAL;
		len = rnic_sge_len(wr, RNIC_MAX_MSG_SIZE);
	}
	if (len < 0)
		return EINVAL;

	/* one 8-byte SGE gets the original value */
	if ((op->flags & RNIC_OPF_ATOMIC) &&
	    (wr->num_sge != 1 || len != RNIC_ATOMIC_LEN ||
	     (wr->wr.atomic.remote_addr & (RNIC_ATOMIC_LEN - 1))))
		return EINVAL;
	/* AH index 0 is a malformed WQE; the QPN is 24 bits */
	if (ud && (!ah_idx || (wr->wr.ud.remote_qpn & ~RNIC_BTH_QPN)))
		return EINVAL;
	*opp = op;
	*lenp = len;
	return 0;
}

static void rnic_put_sges(struct rnic_data_sge *dst, const struct ibv_sge *sg,
			  int num)
{
	int i;

	for (i = 0; i < num; i++) {
		dst[i].addr = htole64(sg[i].addr);
		dst[i].len = htole32(sg[i].length);
		dst[i].lkey = htole32(sg[i].lkey);
	}
}

/**
 * rnic_sqe_build() - encode a send work request into a send WQE
 * @wqe: the ring slot, (1 << @sq->sqe_log2) bytes
 * @sq: the send queue's properties
 * @wr: the work request; only this one, not wr->next
 * @ah_idx: UD: the AH table index of wr->wr.ud.ah; else ignored
 *
 * SIGNALED is set for a signaled WR and for every WR of a QP created with
 * sq_sig_all: the device knows no per-QP signaling policy. Inline payload
 * is copied now (verbs: the buffers are the caller's again on return).
 *
 * Return: 0; EINVAL for a WR the QP cannot carry; EOPNOTSUPP for an
 * atomic on a device without atomics. @wqe is not written on error.
 */
int rnic_sqe_build(void *wqe, const struct rnic_sq_attr *sq,
		   const struct ibv_send_wr *wr, uint32_t ah_idx)
{
	const struct rnic_wr_op *op = NULL;
	struct rnic_sqe *sqe = wqe;
	uint8_t flags = 0;
	int64_t len = 0;
	int err, i;

	err = rnic_check_send(sq, wr, ah_idx, &op, &len);
	if (err)
		return err;

	memset(sqe, 0, 1U << sq->sqe_log2);
	if ((wr->send_flags & IBV_SEND_SIGNALED) || sq->sig_all)
		flags |= RNIC_SQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		flags |= RNIC_SQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		flags |= RNIC_SQE_F_FENCE;

	sqe->ctrl.opcode = op->hw;
	sqe->ctrl.length = htole32((uint32_t)len);
	if (op->flags & RNIC_OPF_IMM)
		sqe->ctrl.imm_data = wr->imm_data;	/* already big-endian */
	else if (op->flags & RNIC_OPF_INV)
		sqe->ctrl.key = htole32(wr->invalidate_rkey);

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *dst = (uint8_t *)sqe->sge;

		flags |= RNIC_SQE_F_INLINE;
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
	} else {
		sqe->ctrl.num_sge = wr->num_sge;
		rnic_put_sges(sqe->sge, wr->sg_list, wr->num_sge);
	}
	sqe->ctrl.flags = flags;

	if (sq->qp_type == IBV_QPT_UD) {
		sqe->seg.ud.ah = htole32(ah_idx);
		sqe->seg.ud.remote_qpn = htole32(wr->wr.ud.remote_qpn);
		/* bit 31 (controlled) asks the device for the QP's own Q_Key */
		sqe->seg.ud.remote_qkey = htole32(wr->wr.ud.remote_qkey);
		return 0;
	}
	switch (op->seg) {
	case RNIC_SEG_RDMA:
		sqe->seg.rdma.remote_addr = htole64(wr->wr.rdma.remote_addr);
		sqe->seg.rdma.rkey = htole32(wr->wr.rdma.rkey);
		break;
	case RNIC_SEG_ATOMIC:
		sqe->seg.atomic.remote_addr = htole64(wr->wr.atomic.remote_addr);
		sqe->seg.atomic.rkey = htole32(wr->wr.atomic.rkey);
		sqe->seg.atomic.compare_add = htole64(wr->wr.atomic.compare_add);
		if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
			sqe->seg.atomic.swap = htole64(wr->wr.atomic.swap);
		break;
	default:
		break;
	}
	return 0;
}

/**
 * rnic_rqe_build() - encode a receive work request into a receive WQE
 * @wqe: the RQ ring slot or SRQ slot, (1 << @rqe_log2) bytes
 * @rqe_log2: log2 of the queue's WQE size
 * @max_sge: SGEs the queue was granted
 * @wr: the work request; only this one
 *
 * A UD receive's first 40 bytes take the network header: that is the
 * application's business, as with every provider, not checked here.
 *
 * Return: 0, or EINVAL for more SGEs than the queue holds. @wqe is not
 * written on error.
 */
int rnic_rqe_build(void *wqe, unsigned int rqe_log2, uint32_t max_sge,
		   const struct ibv_recv_wr *wr)
{
	struct rnic_rqe *rqe = wqe;
	uint32_t room;

	if (rqe_log2 < RNIC_RQE_LOG2_MIN || rqe_log2 > RNIC_RQE_LOG2_MAX)
		return EINVAL;
	room = rnic_rqe_max_sge(rqe_log2);
	if (room > max_sge)
		room = max_sge;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > room)
		return EINVAL;

	memset(rqe, 0, 1U << rqe_log2);
	rqe->num_sge = wr->num_sge;
	rnic_put_sges(rqe->sge, wr->sg_list, wr->num_sge);
	return 0;
}

/* Bytes a receive WR offers, for the CQE's byte_len check */
uint32_t rnic_recv_len(const struct ibv_recv_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
}

/* The contract's status table: the verbs status of the same name */
static const uint8_t rnic_wc_status_map[] = {
	[RNIC_WC_SUCCESS]		= IBV_WC_SUCCESS,
	[RNIC_WC_LOC_LEN_ERR]		= IBV_WC_LOC_LEN_ERR,
	[RNIC_WC_LOC_QP_OP_ERR]		= IBV_WC_LOC_QP_OP_ERR,
	[RNIC_WC_LOC_PROT_ERR]		= IBV_WC_LOC_PROT_ERR,
	[RNIC_WC_WR_FLUSH_ERR]		= IBV_WC_WR_FLUSH_ERR,
	[RNIC_WC_LOC_ACCESS_ERR]	= IBV_WC_LOC_ACCESS_ERR,
	[RNIC_WC_BAD_RESP_ERR]		= IBV_WC_BAD_RESP_ERR,
	[RNIC_WC_REM_INV_REQ_ERR]	= IBV_WC_REM_INV_REQ_ERR,
	[RNIC_WC_REM_ACCESS_ERR]	= IBV_WC_REM_ACCESS_ERR,
	[RNIC_WC_REM_OP_ERR]		= IBV_WC_REM_OP_ERR,
	[RNIC_WC_RETRY_EXC_ERR]		= IBV_WC_RETRY_EXC_ERR,
	[RNIC_WC_RNR_RETRY_EXC_ERR]	= IBV_WC_RNR_RETRY_EXC_ERR,
	[RNIC_WC_FATAL_ERR]		= IBV_WC_FATAL_ERR,
	[RNIC_WC_GENERAL_ERR]		= IBV_WC_GENERAL_ERR,
};

/* The contract's opcode table, for what a user QP can post; -1 otherwise */
static int rnic_wc_opcode(uint8_t opcode)
{
	switch (opcode) {
	case RNIC_SQE_OP_SEND:
	case RNIC_SQE_OP_SEND_IMM:
	case RNIC_SQE_OP_SEND_INV:
		return IBV_WC_SEND;
	case RNIC_SQE_OP_WRITE:
	case RNIC_SQE_OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case RNIC_SQE_OP_READ:
		return IBV_WC_RDMA_READ;
	case RNIC_SQE_OP_CMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case RNIC_SQE_OP_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case RNIC_CQE_OP_RECV:
		return IBV_WC_RECV;
	case RNIC_CQE_OP_RECV_WRITE_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		return -1;
	}
}

/* A successful receive: immediate or invalidated key, bytes, UD sender */
static int rnic_wc_recv(const struct rnic_rdma_cqe *cqe, uint8_t flags, bool ud,
			uint32_t recv_len, struct ibv_wc *wc)
{
	bool write_imm = cqe->opcode == RNIC_CQE_OP_RECV_WRITE_IMM;
	uint32_t len = le32toh(cqe->byte_len);

	if ((flags & RNIC_RCQE_F_IMM) && (flags & RNIC_RCQE_F_INV))
		return -EIO;
	if (write_imm && (ud || !(flags & RNIC_RCQE_F_IMM)))
		return -EIO;
	if (ud != !!(flags & RNIC_RCQE_F_GRH) ||
	    (!ud && (flags & RNIC_RCQE_F_VLAN)) ||
	    (ud && (flags & RNIC_RCQE_F_INV)))
		return -EIO;

	if (ud) {
		uint32_t src = le32toh(cqe->src);
		uint32_t net = FIELD_GET(RNIC_RCQE_NET, src);

		if ((src & ~(RNIC_RCQE_SRC_QP | RNIC_RCQE_NET)) ||
		    net < RNIC_RX_CLASS_ROCE_V1 ||
		    net > RNIC_RX_CLASS_ROCE_V2_IPV6)
			return -EIO;
		/*
		 * The CQE counts the payload; verbs count the 40-byte
		 * header area too, where ibv_create_ah_from_wc() finds the
		 * sender's GRH (or, RoCE v2 over IPv4, its IPv4 header).
		 */
		if (len > UINT32_MAX - RNIC_UD_GRH_LEN)
			return -EIO;
		len += RNIC_UD_GRH_LEN;
		wc->src_qp = FIELD_GET(RNIC_RCQE_SRC_QP, src);
		wc->wc_flags |= IBV_WC_GRH;
		/* the PCP of a tagged frame; verbs have no VLAN field here */
		if (flags & RNIC_RCQE_F_VLAN)
			wc->sl = le16toh(cqe->vlan_tci) >> 13;
	}
	/* a WRITE_IMM's bytes went to an MR, not to the WQE */
	if (!write_imm && len > recv_len)
		return -EIO;
	wc->byte_len = len;

	if (flags & RNIC_RCQE_F_IMM) {
		wc->imm_data = cqe->imm_data;
		wc->wc_flags |= IBV_WC_WITH_IMM;
	} else if (flags & RNIC_RCQE_F_INV) {
		wc->invalidated_rkey = le32toh(cqe->inv_key);
		wc->wc_flags |= IBV_WC_WITH_INV;
	}
	wc->pkey_index = le16toh(cqe->pkey_index);
	return 0;
}

/**
 * rnic_cqe_to_wc() - decode a CQE into a work completion
 * @cqe: the CQE, its phase checked and read after a read barrier
 * @ud: the QP the CQE names is UD
 * @recv_len: receive CQEs: the bytes the completed WQE offered
 * @wc: gets every field but wr_id and qp_num
 *
 * An error CQE carries only flags, opcode, status, syndrome, qpn and
 * wqe_idx; the rest is not looked at. The syndrome becomes vendor_err.
 *
 * Return: 0, or -EIO for a CQE that is not well-formed.
 */
int rnic_cqe_to_wc(const struct rnic_rdma_cqe *cqe, bool ud,
		   uint32_t recv_len, struct ibv_wc *wc)
{
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;
	uint8_t flags = cqe->flags;
	int op = rnic_wc_opcode(cqe->opcode);

	if (op < 0 || (le32toh(cqe->qpn) & ~RNIC_BTH_QPN))
		return -EIO;
	/* UD QPs send SEND and SEND_IMM only; SRQs feed receives only */
	if (ud && !recv && cqe->opcode != RNIC_SQE_OP_SEND &&
	    cqe->opcode != RNIC_SQE_OP_SEND_IMM)
		return -EIO;
	if (!recv && (flags & RNIC_RCQE_F_SRQ))
		return -EIO;

	wc->status = cqe->status < ARRAY_SIZE(rnic_wc_status_map) ?
		     rnic_wc_status_map[cqe->status] : IBV_WC_GENERAL_ERR;
	wc->opcode = op;
	wc->vendor_err = cqe->syndrome;
	wc->byte_len = 0;
	wc->imm_data = 0;
	wc->wc_flags = 0;
	wc->src_qp = 0;
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	if (wc->status != IBV_WC_SUCCESS)
		return 0;
	if (recv)
		return rnic_wc_recv(cqe, flags, ud, recv_len, wc);
	/* a send CQE reports nothing about a peer */
	if (flags & ~RNIC_RCQE_F_PHASE)
		return -EIO;
	wc->byte_len = le32toh(cqe->byte_len);
	return 0;
}

/**
 * rnic_cqe_sq_retire() - check a send CQE's WQE index
 * @ci: index of the oldest SQ WQE not yet completed
 * @pi: WQEs posted
 * @wqe_idx: the CQE's wqe_idx
 *
 * Send CQEs come in SQ order, and a CQE for WQE i also retires every
 * unsignaled WQE before it, so i may be any outstanding WQE, in [ci, pi)
 * modulo 2^16. Anything else would complete WRs never posted, or index the
 * wr_id array with a value the device chose.
 *
 * Return: the number of WQEs the CQE completes (1 .. pi - ci), the last
 * of which it reports; -EIO for an index that is not outstanding.
 */
int rnic_cqe_sq_retire(uint16_t ci, uint16_t pi, uint16_t wqe_idx)
{
	uint16_t n = wqe_idx - ci;

	if (n >= (uint16_t)(pi - ci))
		return -EIO;
	return n + 1;
}

/* Receive WQEs of an RQ complete in order, each with a CQE */
int rnic_cqe_rq_check(uint16_t ci, uint16_t pi, uint16_t wqe_idx)
{
	return ci != pi && wqe_idx == ci ? 0 : -EIO;
}
