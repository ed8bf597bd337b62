// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: verbs work requests to send and receive WQEs.
 *
 * The device checks every WQE it fetches and fails a bad one with an
 * error CQE, which on an RC QP takes the whole QP to ERR. A verbs caller
 * gets a synchronous error instead for everything the driver can see at
 * post time, so what is checked here is what the contract's WQE rules
 * say the device would refuse: opcodes the QP type or the device does not
 * have, flags and sizes the WQE cannot carry, and the REG_MR rules.
 * What only the device can know (keys, AH entries, the path MTU of a UD
 * send) is left to it.
 *
 * A WQE is validated completely before a byte of it is written, and then
 * written completely, reserved bytes as zero, so a refused WR leaves the
 * ring slot untouched.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_wqe.h"

#define RNIC_IB_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED |	\
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* What an opcode segment a verbs opcode uses (struct rnic_ib_wr_op.seg) */
enum rnic_ib_seg {
	RNIC_IB_SEG_NONE,	/* SEND on RC: no segment */
	RNIC_IB_SEG_RDMA,
	RNIC_IB_SEG_ATOMIC,
	RNIC_IB_SEG_REG_MR,
};

#define RNIC_IB_OPF_UD		BIT(0)	/* allowed on UD and GSI QPs */
#define RNIC_IB_OPF_DATA	BIT(1)	/* has SGEs */
#define RNIC_IB_OPF_INLINE	BIT(2)	/* may be inline */
#define RNIC_IB_OPF_IMM		BIT(3)	/* ctrl.imm_data */
#define RNIC_IB_OPF_KEY		BIT(4)	/* ctrl.key from ex.invalidate_rkey */

/**
 * struct rnic_ib_wr_op - how one verbs opcode becomes a send WQE
 * @hw: enum rnic_sqe_opcode; 0 for an opcode rnic does not implement
 * @seg: enum rnic_ib_seg, the opcode segment on an RC QP
 * @flags: RNIC_IB_OPF_*
 * @cap: the RNIC_RDMA_CAP_* the device must have, or 0
 */
struct rnic_ib_wr_op {
	u8 hw;
	u8 seg;
	u8 flags;
	u32 cap;
};

/* The contract's opcode table ("Send WQE"), indexed by enum ib_wr_opcode */
static const struct rnic_ib_wr_op rnic_ib_wr_ops[] = {
	[IB_WR_SEND] = { RNIC_SQE_OP_SEND, RNIC_IB_SEG_NONE,
		RNIC_IB_OPF_UD | RNIC_IB_OPF_DATA | RNIC_IB_OPF_INLINE, 0 },
	[IB_WR_SEND_WITH_IMM] = { RNIC_SQE_OP_SEND_IMM, RNIC_IB_SEG_NONE,
		RNIC_IB_OPF_UD | RNIC_IB_OPF_DATA | RNIC_IB_OPF_INLINE |
		RNIC_IB_OPF_IMM, 0 },
	[IB_WR_SEND_WITH_INV] = { RNIC_SQE_OP_SEND_INV, RNIC_IB_SEG_NONE,
		RNIC_IB_OPF_DATA | RNIC_IB_OPF_INLINE | RNIC_IB_OPF_KEY,
		RNIC_RDMA_CAP_SEND_INV },
	[IB_WR_RDMA_WRITE] = { RNIC_SQE_OP_WRITE, RNIC_IB_SEG_RDMA,
		RNIC_IB_OPF_DATA | RNIC_IB_OPF_INLINE, 0 },
	[IB_WR_RDMA_WRITE_WITH_IMM] = { RNIC_SQE_OP_WRITE_IMM,
		RNIC_IB_SEG_RDMA,
		RNIC_IB_OPF_DATA | RNIC_IB_OPF_INLINE | RNIC_IB_OPF_IMM, 0 },
	[IB_WR_RDMA_READ] = { RNIC_SQE_OP_READ, RNIC_IB_SEG_RDMA,
		RNIC_IB_OPF_DATA, 0 },
	[IB_WR_ATOMIC_CMP_AND_SWP] = { RNIC_SQE_OP_CMP_SWAP,
		RNIC_IB_SEG_ATOMIC, RNIC_IB_OPF_DATA, RNIC_RDMA_CAP_ATOMIC },
	[IB_WR_ATOMIC_FETCH_AND_ADD] = { RNIC_SQE_OP_FETCH_ADD,
		RNIC_IB_SEG_ATOMIC, RNIC_IB_OPF_DATA, RNIC_RDMA_CAP_ATOMIC },
	[IB_WR_LOCAL_INV] = { RNIC_SQE_OP_LOCAL_INV, RNIC_IB_SEG_NONE,
		RNIC_IB_OPF_KEY, RNIC_RDMA_CAP_REG_MR },
	[IB_WR_REG_MR] = { RNIC_SQE_OP_REG_MR, RNIC_IB_SEG_REG_MR, 0,
		RNIC_RDMA_CAP_REG_MR },
};

/* The atomic operand is one naturally aligned 64-bit word */
#define RNIC_IB_ATOMIC_LEN	8

/**
 * rnic_ib_mr_access() - device access rights of verbs MR access flags
 * @ib_access: IB_ACCESS_* of a REG_MR WR (or, later, of reg_user_mr)
 *
 * The IB rule that remote write and atomic rights need local write is
 * the device's too (it refuses such a REG_MR), so it is checked here.
 * IB_ACCESS_RELAXED_ORDERING and the other optional flags may be ignored
 * by a driver (ib_verbs.h, IB_ACCESS_OPTIONAL); memory windows, zero
 * based MRs, ODP and the FLUSH rights are not provided.
 *
 * Return: RNIC_ACCESS_* bits, or -EINVAL.
 */
int rnic_ib_mr_access(int ib_access)
{
	int a = ib_access & ~IB_ACCESS_OPTIONAL;
	int hw = 0;

	if (a & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	if ((a & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(a & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (a & IB_ACCESS_LOCAL_WRITE)
		hw |= RNIC_ACCESS_LOCAL_WRITE;
	if (a & IB_ACCESS_REMOTE_WRITE)
		hw |= RNIC_ACCESS_REMOTE_WRITE;
	if (a & IB_ACCESS_REMOTE_READ)
		hw |= RNIC_ACCESS_REMOTE_READ;
	if (a & IB_ACCESS_REMOTE_ATOMIC)
		hw |= RNIC_ACCESS_REMOTE_ATOMIC;
	return hw;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_mr_access);

/* log2 of the smallest power of two >= @bytes, at least @min */
static u8 rnic_ib_size_log2(u64 bytes, u8 min)
{
	u8 l = min;

	while (l < 63 && BIT_ULL(l) < bytes)
		l++;
	return l;
}

/**
 * rnic_ib_sqe_log2() - the smallest send WQE for a QP's capacities
 * @max_sge: SGEs a send WR of the QP may carry
 * @max_inline: inline bytes a send WR of the QP may carry
 *
 * A QP pays only for the WQE size its capacities need (64 bytes hold one
 * SGE or 16 inline bytes, 512 bytes 29 SGEs or 464 bytes).
 *
 * Return: log2 of the WQE size, at least RNIC_SQE_LOG2_MIN; above
 * RNIC_SQE_LOG2_MAX when no WQE holds that much (the caller refuses it).
 */
u8 rnic_ib_sqe_log2(u32 max_sge, u32 max_inline)
{
	u64 data = max_t(u64, (u64)max_sge * sizeof(struct rnic_data_sge),
			 max_inline);

	return rnic_ib_size_log2(RNIC_SQE_HDR_SIZE + data, RNIC_SQE_LOG2_MIN);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_sqe_log2);

/**
 * rnic_ib_rqe_log2() - the smallest receive WQE (RQ or SRQ slot)
 * @max_sge: SGEs a receive WR may carry (0 is given room for one)
 *
 * Return: log2 of the WQE size, at least RNIC_RQE_LOG2_MIN; above
 * RNIC_RQE_LOG2_MAX when no WQE holds that many.
 */
u8 rnic_ib_rqe_log2(u32 max_sge)
{
	u64 data = (u64)max_t(u32, max_sge, 1) * sizeof(struct rnic_data_sge);

	return rnic_ib_size_log2(RNIC_RQE_HDR_SIZE + data, RNIC_RQE_LOG2_MIN);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_rqe_log2);

/* The message length of @wr's SGEs, or -EINVAL past @max bytes */
static s64 rnic_ib_sge_len(const struct ib_send_wr *wr, u32 max)
{
	u64 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > max ? -EINVAL : (s64)len;
}

/* A REG_MR WR against the contract's page list rules */
static int rnic_ib_check_reg_mr(const struct rnic_ib_sq_attr *sq,
				const struct ib_reg_wr *reg,
				const struct rnic_ib_wr_res *res)
{
	const struct ib_mr *mr = reg->mr;
	unsigned int page_log2;
	u64 span;

	/* REG_MR carries a DMA address: kernel PDs only */
	if (!sq->privileged)
		return -EPERM;
	if (!mr || !is_power_of_2(mr->page_size))
		return -EINVAL;
	page_log2 = ilog2(mr->page_size);
	if (page_log2 < RNIC_PAGE_LOG2_MIN || page_log2 > RNIC_PAGE_LOG2_MAX ||
	    !(sq->page_size_cap & BIT_ULL(page_log2)))
		return -EINVAL;
	/* the WQE's npages is le16; the MR was created for max_npages */
	if (!res->npages || res->npages > U16_MAX ||
	    res->npages > res->max_npages)
		return -EINVAL;
	if (!res->pbl_addr || !IS_ALIGNED(res->pbl_addr, RNIC_PBL_ENTRY_SIZE))
		return -EINVAL;
	/* the first byte may lie inside the first page */
	span = (mr->iova & (mr->page_size - 1)) + mr->length;
	if (span < mr->length ||
	    span > (u64)res->npages << page_log2)
		return -EINVAL;
	/* the key keeps the MR's index; only the variant may change */
	if ((reg->key ^ mr->lkey) & RNIC_KEY_INDEX)
		return -EINVAL;
	return rnic_ib_mr_access(reg->access) < 0 ? -EINVAL : 0;
}

/* The UD segment's fields against the contract; the AH is the device's */
static int rnic_ib_check_ud(const struct rnic_ib_sq_attr *sq,
			    const struct ib_ud_wr *ud,
			    const struct rnic_ib_wr_res *res)
{
	if (!res->ah_idx || ud->remote_qpn & ~RNIC_BTH_QPN)
		return -EINVAL;
	if (sq->qp_type == IB_QPT_GSI && ud->pkey_index >= sq->pkey_tbl_len)
		return -EINVAL;
	return 0;
}

/* Everything the device would refuse that the driver can see now */
static int rnic_ib_check_send(const struct rnic_ib_sq_attr *sq,
			      const struct ib_send_wr *wr,
			      const struct rnic_ib_wr_res *res,
			      const struct rnic_ib_wr_op **opp, s64 *lenp)
{
	bool ud = sq->qp_type == IB_QPT_UD || sq->qp_type == IB_QPT_GSI;
	unsigned int room;
	const struct rnic_ib_wr_op *op;
	s64 len = 0;

	if (!ud && sq->qp_type != IB_QPT_RC)
		return -EINVAL;
	if (sq->sqe_log2 < RNIC_SQE_LOG2_MIN ||
	    sq->sqe_log2 > RNIC_SQE_LOG2_MAX)
		return -EINVAL;
	if ((unsigned int)wr->opcode >= ARRAY_SIZE(rnic_ib_wr_ops))
		return -EINVAL;
	op = &rnic_ib_wr_ops[wr->opcode];
	if (!op->hw || (ud && !(op->flags & RNIC_IB_OPF_UD)))
		return -EINVAL;
	if (op->cap && !(sq->caps & op->cap))
		return -EOPNOTSUPP;
	if (wr->send_flags & ~RNIC_IB_SEND_FLAGS)
		return -EINVAL;

	if (!(op->flags & RNIC_IB_OPF_DATA)) {
		/* LOCAL_INV, REG_MR: no data; a stray sg_list is ignored */
	} else if (wr->send_flags & IB_SEND_INLINE) {
		if (!(op->flags & RNIC_IB_OPF_INLINE))
			return -EINVAL;
		room = min_t(unsigned int, rnic_sqe_max_inline(sq->sqe_log2),
			     sq->max_inline);
		len = rnic_ib_sge_len(wr, room);
	} else {
		room = min_t(unsigned int, rnic_sqe_max_sge(sq->sqe_log2),
			     sq->max_send_sge);
		if (wr->num_sge < 0 || wr->num_sge > room)
			return -EINVAL;
		len = rnic_ib_sge_len(wr, sq->max_msg_size);
	}
	if (len < 0)
		return len;
	*opp = op;
	*lenp = len;

	switch (wr->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/* one 8-byte SGE gets the original value */
		if (wr->num_sge != 1 || len != RNIC_IB_ATOMIC_LEN ||
		    !IS_ALIGNED(atomic_wr(wr)->remote_addr, RNIC_IB_ATOMIC_LEN))
			return -EINVAL;
		break;
	case IB_WR_REG_MR:
		return rnic_ib_check_reg_mr(sq, reg_wr(wr), res);
	default:
		if (ud)
			return rnic_ib_check_ud(sq, ud_wr(wr), res);
		break;
	}
	return 0;
}

/* Inline payload: the bytes of the WR's buffers, back to back */
static void rnic_ib_put_inline(u8 *dst, const struct ib_send_wr *wr)
{
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		/* a kernel ULP's inline SGE holds a virtual address */
		memcpy(dst, (const void *)(uintptr_t)sge->addr, sge->length);
		dst += sge->length;
	}
}

static void rnic_ib_put_sges(struct rnic_data_sge *dst,
			     const struct ib_sge *sg, int num)
{
	int i;

	for (i = 0; i < num; i++) {
		dst[i].addr = cpu_to_le64(sg[i].addr);
		dst[i].len = cpu_to_le32(sg[i].length);
		dst[i].lkey = cpu_to_le32(sg[i].lkey);
	}
}

static void rnic_ib_put_seg(union rnic_sqe_seg *seg,
			    const struct rnic_ib_sq_attr *sq,
			    const struct rnic_ib_wr_op *op,
			    const struct ib_send_wr *wr,
			    const struct rnic_ib_wr_res *res)
{
	if (sq->qp_type != IB_QPT_RC) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		seg->ud.ah = cpu_to_le32(res->ah_idx);
		seg->ud.remote_qpn = cpu_to_le32(ud->remote_qpn);
		/* bit 31 (controlled) asks the device for the QP's own Q_Key */
		seg->ud.remote_qkey = cpu_to_le32(ud->remote_qkey);
		if (sq->qp_type == IB_QPT_GSI)
			seg->ud.pkey_index = cpu_to_le16(ud->pkey_index);
		return;
	}

	switch (op->seg) {
	case RNIC_IB_SEG_RDMA:
		seg->rdma.remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		seg->rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case RNIC_IB_SEG_ATOMIC:
		seg->atomic.remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		seg->atomic.rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		seg->atomic.compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP)
			seg->atomic.swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	case RNIC_IB_SEG_REG_MR: {
		const struct ib_mr *mr = reg_wr(wr)->mr;

		seg->reg_mr.iova = cpu_to_le64(mr->iova);
		seg->reg_mr.length = cpu_to_le64(mr->length);
		seg->reg_mr.pbl_addr = cpu_to_le64(res->pbl_addr);
		seg->reg_mr.npages = cpu_to_le16(res->npages);
		seg->reg_mr.page_log2 = ilog2(mr->page_size);
		seg->reg_mr.access = rnic_ib_mr_access(reg_wr(wr)->access);
		break;
	}
	default:
		break;
	}
}

/**
 * rnic_ib_sqe_build() - encode a send work request into a send WQE
 * @wqe: the ring slot, (1 << @sq->sqe_log2) bytes
 * @sq: the send queue's properties
 * @wr: the work request; only this one, not wr->next
 * @res: the AH index (UD, GSI) and MR page list (REG_MR) of @wr's objects
 *
 * SIGNALED is set for a signaled WR and for every WR of a QP created with
 * IB_SIGNAL_ALL_WR: the device knows no per-QP signaling policy. FENCE
 * and SOLICITED are passed on as the verbs give them (the device ignores
 * SOLICITED where it has no meaning, as the verbs allow it anywhere).
 * Inline payload is copied into the WQE now, so the caller's buffers are
 * free when this returns.
 *
 * Return: 0; -EINVAL for a WR the contract does not allow (opcode for the
 * QP type, flags, too many SGEs for the WQE size or the device, inline
 * data that does not fit, an atomic that is not one aligned 8-byte word,
 * a REG_MR page list the device refuses, UD fields out of range);
 * -EOPNOTSUPP for an opcode the device lacks the capability for; -EPERM
 * for REG_MR on a QP whose PD is not privileged. @wqe is not written on
 * error.
 */
int rnic_ib_sqe_build(void *wqe, const struct rnic_ib_sq_attr *sq,
		      const struct ib_send_wr *wr,
		      const struct rnic_ib_wr_res *res)
{
	const struct rnic_ib_wr_op *op;
	struct rnic_sqe *sqe = wqe;
	u8 flags = 0;
	s64 len;
	int err;

	err = rnic_ib_check_send(sq, wr, res, &op, &len);
	if (err)
		return err;

	memset(sqe, 0, BIT(sq->sqe_log2));
	if ((wr->send_flags & IB_SEND_SIGNALED) || sq->sig_all)
		flags |= RNIC_SQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= RNIC_SQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= RNIC_SQE_F_FENCE;

	sqe->ctrl.opcode = op->hw;
	sqe->ctrl.length = cpu_to_le32(len);
	if (op->flags & RNIC_IB_OPF_IMM)
		sqe->ctrl.imm_data = wr->ex.imm_data;
	else if (op->flags & RNIC_IB_OPF_KEY)
		sqe->ctrl.key = cpu_to_le32(wr->ex.invalidate_rkey);
	else if (wr->opcode == IB_WR_REG_MR)
		sqe->ctrl.key = cpu_to_le32(reg_wr(wr)->key);

	if (op->flags & RNIC_IB_OPF_DATA) {
		if (wr->send_flags & IB_SEND_INLINE) {
			flags |= RNIC_SQE_F_INLINE;
			rnic_ib_put_inline((u8 *)sqe->sge, wr);
		} else {
			sqe->ctrl.num_sge = wr->num_sge;
			rnic_ib_put_sges(sqe->sge, wr->sg_list, wr->num_sge);
		}
	}
	sqe->ctrl.flags = flags;
	rnic_ib_put_seg(&sqe->seg, sq, op, wr, res);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_sqe_build);

/**
 * rnic_ib_rqe_build() - encode a receive work request into a receive WQE
 * @wqe: the RQ ring slot or SRQ slot, (1 << @rqe_log2) bytes
 * @rqe_log2: log2 of the queue's WQE size, RNIC_RQE_LOG2_MIN .. _MAX
 * @max_sge: the device's max_recv_sge (RQ) or max_srq_sge (SRQ)
 * @wr: the work request; only this one, not wr->next
 *
 * The device checks the keys when a message lands; a UD receive's first
 * 40 bytes take the network header, which is the ULP's business (as with
 * every verbs provider), not checked here.
 *
 * Return: 0, or -EINVAL for more SGEs than the WQE size or the device
 * allow. @wqe is not written on error.
 */
int rnic_ib_rqe_build(void *wqe, unsigned int rqe_log2,
		      unsigned int max_sge, const struct ib_recv_wr *wr)
{
	struct rnic_rqe *rqe = wqe;

	if (rqe_log2 < RNIC_RQE_LOG2_MIN || rqe_log2 > RNIC_RQE_LOG2_MAX)
		return -EINVAL;
	if (wr->num_sge < 0 ||
	    wr->num_sge > min(rnic_rqe_max_sge(rqe_log2), max_sge))
		return -EINVAL;

	memset(rqe, 0, BIT(rqe_log2));
	rqe->num_sge = wr->num_sge;
	rnic_ib_put_sges(rqe->sge, wr->sg_list, wr->num_sge);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_rqe_build);
