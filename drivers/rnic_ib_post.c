// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: posting work requests.
 *
 * Each WR is encoded straight into its ring slot by the pure encoders
 * (rnic_ib_wqe.c), which refuse what the device would, before a byte is
 * written; its wr_id goes to the driver's own array at the same index.
 * One doorbell per call, after the last WQE, with the exact bad_wr of
 * the first WR refused; after a fatal error no doorbell, and poll_cq
 * completes the WRs as flushed. The driver never reads or maps the ULP's
 * buffers: SGEs carry the ULP's DMA addresses under its keys, and only
 * inline sends copy bytes (kernel virtual addresses by the verbs' rule).
 */
#include <kunit/visibility.h>

#include "rnic_verbs.h"
#include "rnic_ib_wqe.h"

static void rnic_ib_sq_attr(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			    struct rnic_ib_sq_attr *sq)
{
	sq->qp_type = qp->ibqp.qp_type;
	sq->sqe_log2 = qp->sq.wqe_log2;
	sq->max_send_sge = ibd->caps.max_send_sge;
	sq->max_inline = ibd->caps.max_inline;
	sq->pkey_tbl_len = ibd->caps.pkey_tbl_len;
	sq->privileged = qp->privileged;
	sq->sig_all = qp->sig_all;
	sq->caps = ibd->caps.flags;
	sq->max_msg_size = ibd->caps.max_msg_size;
	sq->page_size_cap = ibd->caps.page_size_cap;
}

/* What a WR's objects resolve to: the AH index, the MR page list */
static void rnic_ib_wr_res(const struct ib_send_wr *wr, bool ud,
			   struct rnic_ib_wr_res *res)
{
	memset(res, 0, sizeof(*res));
	if (ud && ud_wr(wr)->ah) {
		res->ah_idx = to_rah(ud_wr(wr)->ah)->idx;
	} else if (wr->opcode == IB_WR_REG_MR && reg_wr(wr)->mr) {
		struct rnic_ib_mr *mr = to_rmr(reg_wr(wr)->mr);

		res->pbl_addr = mr->pbl_dma;
		res->npages = mr->npages;
		res->max_npages = mr->max_pages;
	}
}

/*
 * A user object's doorbell through the kernel (rnic_ib_uctx.c): the
 * process wrote its WQEs and the slot, and uverbs passed no WR. WRs
 * through the kernel are not offered for a user object: its rings are
 * the process's.
 */
static int rnic_ib_ukick(struct rnic_ibdev *ibd, bool has_wr,
			 struct rnic_ib_dbp *dbp, u16 off, u16 off2)
{
	if (has_wr)
		return -EOPNOTSUPP;
	if (READ_ONCE(ibd->fatal))
		return -EIO;
	rnic_ib_db_kick(ibd, dbp, off);
	if (off2 != RNIC_DB_NONE)
		rnic_ib_db_kick(ibd, dbp, off2);
	return 0;
}

/* A user QP: its SQ's slot and, without an SRQ, its RQ's (rnic-abi.h) */
static int rnic_ib_uqp_post_send(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
				 const struct ib_send_wr *wr,
				 const struct ib_send_wr **bad_wr)
{
	int err = rnic_ib_ukick(ibd, wr, qp->sq.dbp, qp->sq.db_off,
				qp->srq ? RNIC_DB_NONE : qp->rq.db_off);

	if (err)
		*bad_wr = wr;
	return err;
}

int rnic_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_ib_wq *sq = &qp->sq;
	bool ud = ibqp->qp_type != IB_QPT_RC;
	u32 mask = BIT(sq->log2_depth) - 1;
	struct rnic_ib_sq_attr attr;
	struct rnic_ib_wr_res res;
	enum ib_qp_state state;
	unsigned long flags;
	bool posted;
	u16 pi0;
	int err = 0;

	if (qp->uctx)
		return rnic_ib_uqp_post_send(ibd, qp, wr, bad_wr);
	/* IB: no send before RTS; in ERR, WRs complete as flushed */
	state = READ_ONCE(qp->state);
	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	rnic_ib_sq_attr(ibd, qp, &attr);

	spin_lock_irqsave(&sq->lock, flags);
	pi0 = sq->pi;
	for (; wr; wr = wr->next) {
		if ((u16)(sq->pi - sq->ci) >= BIT(sq->log2_depth)) {
			err = -ENOMEM;
			break;
		}
		rnic_ib_wr_res(wr, ud, &res);
		err = rnic_ib_sqe_build(sq->ring + ((sq->pi & mask) << sq->wqe_log2),
					&attr, wr, &res);
		if (err)
			break;
		sq->wrid[sq->pi & mask] = wr->wr_id;
		sq->pi++;
		if (wr->opcode == IB_WR_LOCAL_INV)
			rnic_ib_stat_inc(ibd, RNIC_IB_STAT_local_invs);
	}
	posted = sq->pi != pi0;
	if (posted)
		rnic_ib_db_ring(ibd, sq->dbp, sq->db_off,
				FIELD_PREP(RNIC_DB_RING_PI, sq->pi));
	spin_unlock_irqrestore(&sq->lock, flags);
	/* a failed device: poll_cq flushes them, and nothing else says so */
	if (posted && READ_ONCE(ibd->fatal))
		rnic_ib_cq_fatal_kick(ibd, ibqp->send_cq);
	if (err)
		*bad_wr = wr;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_post_send);

/* Bytes a receive WR offers, for the CQE's byte_len check */
static u32 rnic_ib_recv_len(const struct ib_recv_wr *wr)
{
	u64 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return min_t(u64, len, U32_MAX);
}

int rnic_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_ib_wq *rq = &qp->rq;
	u32 mask = BIT(rq->log2_depth) - 1;
	unsigned long flags;
	bool posted;
	u16 pi0;
	int err = 0;

	if (qp->uctx && !qp->srq) {
		err = rnic_ib_ukick(ibd, wr, rq->dbp, rq->db_off, RNIC_DB_NONE);
		if (err)
			*bad_wr = wr;
		return err;
	}
	if (qp->srq || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&rq->lock, flags);
	pi0 = rq->pi;
	for (; wr; wr = wr->next) {
		if ((u16)(rq->pi - rq->ci) >= BIT(rq->log2_depth)) {
			err = -ENOMEM;
			break;
		}
		err = rnic_ib_rqe_build(rq->ring + ((rq->pi & mask) << rq->wqe_log2),
					rq->wqe_log2, ibd->caps.max_recv_sge,
					wr);
		if (err)
			break;
		rq->wrid[rq->pi & mask] = wr->wr_id;
		rq->len[rq->pi & mask] = rnic_ib_recv_len(wr);
		rq->pi++;
	}
	posted = rq->pi != pi0;
	if (posted)
		rnic_ib_db_recv(ibd, rq->dbp, rq->db_off,
				FIELD_PREP(RNIC_DB_RING_PI, rq->pi),
				READ_ONCE(qp->state) == IB_QPS_ERR);
	spin_unlock_irqrestore(&rq->lock, flags);
	if (posted && READ_ONCE(ibd->fatal))
		rnic_ib_cq_fatal_kick(ibd, ibqp->recv_cq);
	if (err)
		*bad_wr = wr;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_post_recv);

int rnic_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	u32 depth = BIT(srq->log2_depth);
	unsigned long flags, slot;
	u16 pi0;
	int err = 0;

	if (srq->uctx) {
		err = rnic_ib_ukick(ibd, wr, srq->dbp, srq->db_off,
				    RNIC_DB_NONE);
		if (err)
			*bad_wr = wr;
		return err;
	}
	spin_lock_irqsave(&srq->lock, flags);
	pi0 = srq->pi;
	for (; wr; wr = wr->next) {
		slot = find_first_zero_bit(srq->busy, depth);
		if (slot >= depth) {
			err = -ENOMEM;
			break;
		}
		err = rnic_ib_rqe_build(srq->wqes + (slot << srq->rqe_log2),
					srq->rqe_log2, srq->max_sge, wr);
		if (err)
			break;
		srq->wrid[slot] = wr->wr_id;
		srq->len[slot] = rnic_ib_recv_len(wr);
		set_bit(slot, srq->busy);
		/* the slot's WQE before its index: both reach the device by DMA */
		dma_wmb();
		srq->idx[srq->pi & (depth - 1)] = cpu_to_le16(slot);
		srq->pi++;
	}
	/* no QP in ERR takes from an SRQ: nothing to flush, never a kick */
	if (srq->pi != pi0)
		rnic_ib_db_recv(ibd, srq->dbp, srq->db_off,
				FIELD_PREP(RNIC_DB_RING_PI, srq->pi), false);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_post_srq_recv);
