// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: posting work requests.
 *
 * post_send, post_recv and post_srq_recv check each WR against the QP
 * (type, state, queue room, SGE count, keys, lengths) and copy it into the
 * QP's ring; the transport takes it from there (rnic_qp_kick_sq()). A bad
 * WR is refused whole, with bad_wr pointing at it; WRs before it stay
 * queued. Locking as in rnic_verbs.c.
 */
#include <linux/string.h>

#include "rnic.h"
#include "rnic_ib.h"
#include "rnic_verbs.h"
#include "rnic_verbs_int.h"

/* a controlled Q_Key in a UD WR means "the QP's own" (IBA 10.2.5) */
#define RNIC_QKEY_CONTROLLED	0x80000000U
#define RNIC_REG_ACCESS_ALL	(RNIC_QP_ACCESS_ALL | IB_ACCESS_RELAXED_ORDERING)
#define RNIC_SEND_FLAGS_ALL	(IB_SEND_FENCE | IB_SEND_SIGNALED |	\
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* ------------------------------------------------------------------------
 * Receive queues
 */

/* Is @key a memory key of @pd? Its state is checked when the WR runs. */
static bool rnic_lkey_known(struct ib_pd *pd, u32 key)
{
	struct rnic_ibdev *rib = to_ribdev(pd->device);
	struct rnic_mr *mr;
	unsigned long flags;
	bool ok;

	xa_lock_irqsave(&rib->mr_xa, flags);
	mr = xa_load(&rib->mr_xa, rnic_mr_key_index(key));
	ok = mr && mr->ibmr.pd == pd;
	xa_unlock_irqrestore(&rib->mr_xa, flags);
	return ok;
}

/*
 * Check a receive WR's SGEs against @wq and the keys of @pd; the total
 * goes to *@len.
 */
static int rnic_check_recv_wr(const struct ib_recv_wr *wr, struct rnic_wq *wq,
			      struct ib_pd *pd, u32 *len)
{
	u64 total = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > wq->max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (wr->sg_list[i].length &&
		    !rnic_lkey_known(pd, wr->sg_list[i].lkey))
			return -EINVAL;
	}
	if (total > RNIC_IB_MAX_MSG_SZ)
		return -EINVAL;
	*len = total;
	return 0;
}

static void rnic_fill_recv_wqe(struct rnic_recv_wqe *wqe,
			       const struct ib_recv_wr *wr, u32 len)
{
	int i;

	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->length = len;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/* Queue receive WRs on @wq under @lock; the count posted is returned. */
static int rnic_post_recv_wq(struct rnic_wq *wq, spinlock_t *lock,
			     struct ib_pd *pd, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;
	u32 len;

	spin_lock_irqsave(lock, flags);
	for (; wr; wr = wr->next) {
		if (wq->head - wq->tail >= wq->size) {
			err = -ENOMEM;
			break;
		}
		err = rnic_check_recv_wr(wr, wq, pd, &len);
		if (err)
			break;
		rnic_fill_recv_wqe(rnic_rq_wqe(wq, wq->head), wr, len);
		wq->head++;
	}
	spin_unlock_irqrestore(lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

int rnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct rnic_srq *srq = to_rsrq(ibsrq);

	return rnic_post_recv_wq(&srq->rq, &srq->lock, ibsrq->pd, wr, bad_wr);
}

/* ------------------------------------------------------------------------
 * Posting
 */

static bool rnic_wr_is_rc_only(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return true;
	default:
		return false;
	}
}

static int rnic_check_reg_wr(struct rnic_qp *qp, const struct ib_reg_wr *reg)
{
	struct rnic_mr *mr;

	if (!reg->mr)
		return -EINVAL;
	mr = to_rmr(reg->mr);
	if (mr->type != RNIC_MR_FRWR || reg->mr->pd != qp->ibqp.pd ||
	    rnic_mr_key_index(reg->key) != rnic_mr_key_index(mr->key))
		return -EINVAL;
	if (reg->access & ~RNIC_REG_ACCESS_ALL)
		return -EINVAL;
	/* remote write and atomic need local write (IBA 10.6.3.1) */
	if ((reg->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(reg->access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/*
 * Check one send WR against the QP; the message length goes to *@len.
 * Keys are only checked to name an MR of the QP's PD: an IB_WR_REG_MR
 * earlier in the same chain may be what makes an lkey valid, so state,
 * access and bounds are the transport's to check when the WQE runs.
 */
static int rnic_check_send_wr(struct rnic_qp *qp, const struct ib_send_wr *wr,
			      u32 *len)
{
	bool inl = wr->send_flags & IB_SEND_INLINE;
	u64 total = 0;
	int i;

	if (qp->type != IB_QPT_RC) {
		if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM)
			return -EINVAL;
	} else if (wr->opcode != IB_WR_SEND &&
		   wr->opcode != IB_WR_SEND_WITH_IMM &&
		   !rnic_wr_is_rc_only(wr->opcode)) {
		return -EINVAL;
	}
	if (wr->send_flags & ~RNIC_SEND_FLAGS_ALL)
		return -EINVAL;

	*len = 0;
	if (wr->opcode == IB_WR_REG_MR)
		return rnic_check_reg_wr(qp, reg_wr(wr));
	if (wr->opcode == IB_WR_LOCAL_INV)
		return 0;

	if (inl && (wr->opcode == IB_WR_RDMA_READ ||
		    wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD))
		return -EINVAL;
	if (wr->num_sge < 0 ||
	    wr->num_sge > (inl ? RNIC_IB_MAX_SGE : qp->sq.max_sge))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		total += wr->sg_list[i].length;
		if (!inl && wr->sg_list[i].length &&
		    !rnic_lkey_known(qp->ibqp.pd, wr->sg_list[i].lkey))
			return -EINVAL;
	}
	if (total > RNIC_IB_MAX_MSG_SZ || (inl && total > qp->sq.max_inline))
		return -EINVAL;

	switch (wr->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/* one 8-byte local buffer; the target naturally aligned */
		if (wr->num_sge != 1 || total != sizeof(u64) ||
		    !IS_ALIGNED(atomic_wr(wr)->remote_addr, sizeof(u64)))
			return -EINVAL;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (qp->type == IB_QPT_RC)
			break;
		/* UD: one packet, to an AH of this device */
		if (!ud_wr(wr)->ah || ud_wr(wr)->ah->device != qp->ibqp.device ||
		    ud_wr(wr)->remote_qpn > RNIC_QPN_MAX ||
		    ud_wr(wr)->pkey_index >= RNIC_IB_PKEY_TBL_LEN ||
		    total > ib_mtu_enum_to_int(rnic_port_mtu(qp->rdev)))
			return -EINVAL;
		break;
	default:
		break;
	}
	*len = total;
	return 0;
}

static void rnic_fill_send_wqe(struct rnic_qp *qp, struct rnic_send_wqe *wqe,
			       const struct ib_send_wr *wr, u32 len)
{
	struct rnic_wqe_sge *sge = wqe->sge;
	u8 *inline_data = wqe->inline_data;
	int i;

	/* the entry's arrays stay where rnic_sq_alloc() put them */
	memset(wqe, 0, sizeof(*wqe));
	wqe->sge = sge;
	wqe->inline_data = inline_data;

	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	if (qp->sq_sig_type == IB_SIGNAL_ALL_WR)
		wqe->send_flags |= IB_SEND_SIGNALED;
	wqe->length = len;
	wqe->state = RNIC_WQE_POSTED;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_REG_MR:
		wqe->reg.mr = to_rmr(reg_wr(wr)->mr);
		wqe->reg.key = reg_wr(wr)->key;
		wqe->reg.access = reg_wr(wr)->access;
		return;
	case IB_WR_LOCAL_INV:
		return;
	default:
		break;
	}

	if (qp->type != IB_QPT_RC) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		wqe->ud.av = to_rah(ud->ah)->av;
		wqe->ud.remote_qpn = ud->remote_qpn;
		/* a controlled Q_Key asks for the QP's own (IBA 10.2.5) */
		wqe->ud.remote_qkey = ud->remote_qkey & RNIC_QKEY_CONTROLLED ?
				      qp->qkey : ud->remote_qkey;
		wqe->ud.pkey_index = ud->pkey_index;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u32 off = 0;

		/* inline SGEs are kernel virtual addresses; lkeys unused */
		for (i = 0; i < wr->num_sge; i++) {
			memcpy(inline_data + off,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		return;
	}
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/**
 * rnic_post_send() - queue send WRs
 * @ibqp: the QP
 * @wr: the chain
 * @bad_wr: the first WR not queued, on error
 *
 * In RTS and SQD the WRs are queued for the requester. In SQE and ERR
 * they complete at once with IB_WC_WR_FLUSH_ERR (IBA 10.8.3.3; ib_drain_sq()
 * relies on it). In RESET, INIT and RTR posting is an error.
 *
 * Return: 0, -EINVAL for a bad WR or QP state, -ENOMEM when the SQ is full.
 */
int rnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;
	u32 len;

	spin_lock_irqsave(&qp->sq_lock, flags);
	state = qp->state;
	if (state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_SQE && state != IB_QPS_ERR) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (qp->sq.head - qp->sq.tail >= qp->sq.size) {
			err = -ENOMEM;
			break;
		}
		err = rnic_check_send_wr(qp, wr, &len);
		if (err)
			break;
		rnic_fill_send_wqe(qp, rnic_sq_wqe(qp, qp->sq.head), wr, len);
		qp->sq.head++;
	}
	if (state == IB_QPS_SQE || state == IB_QPS_ERR)
		rnic_flush_sq_locked(qp);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (err) {
		*bad_wr = wr;
		ibdev_dbg(ibqp->device, "QP %u: post_send refused: %d\n",
			  qp->qpn, err);
	}
	if (state == IB_QPS_RTS || state == IB_QPS_SQD)
		rnic_qp_kick_sq(qp);
	return err;
}

/**
 * rnic_post_recv() - queue receive WRs
 * @ibqp: the QP
 * @wr: the chain
 * @bad_wr: the first WR not queued, on error
 *
 * Receive WRs may be posted from INIT on; in ERR they are flushed at once.
 * A QP with an SRQ takes none (post to the SRQ).
 *
 * Return: 0, -EINVAL, or -ENOMEM when the RQ is full.
 */
int rnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	int err;

	if (qp->srq || state == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = rnic_post_recv_wq(&qp->rq, &qp->rq_lock, ibqp->pd, wr, bad_wr);
	/* a move to ERR while posting flushes under the same lock order */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		rnic_flush_rq(qp);
	else
		rnic_qp_kick_rq(qp);
	return err;
}
