// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: posting work requests, the kernel-bypass data path.
 *
 * Each WR is encoded straight into its ring slot (rnic_wqe.c), which
 * refuses what the device would before a byte is written; its wr_id goes
 * to the provider's own array at the same index, never to memory the
 * device writes. One doorbell per call, after the last WQE, with bad_wr
 * the first WR refused. No system call unless the kick register could not
 * be mapped (rnic_db.c). A QP is written by the process only: the kernel
 * neither reads its rings nor posts to them.
 */
#include <errno.h>

#include <util/udma_barrier.h>

#include "rnic.h"
#include "rnic_wqe.h"

int rnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct rnic_context *ctx = to_rctx(ibqp->context);
	struct rnic_qp *qp = to_rqp(ibqp);
	struct rnic_wq *sq = &qp->sq;
	uint32_t depth = 1U << sq->log2_depth;
	bool ud = ibqp->qp_type == IBV_QPT_UD;
	struct rnic_sq_attr attr;
	bool posted, kicked = true;
	uint32_t ah_idx;
	struct ibv_send_wr *first = wr;
	uint16_t pi0;
	int err = 0;

	/* verbs: no send before RTS; in ERR the WQEs complete as flushed */
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	attr.qp_type = ibqp->qp_type;
	attr.sqe_log2 = sq->wqe_log2;
	attr.max_sge = sq->max_sge;
	attr.max_inline = sq->max_inline;
	attr.sig_all = qp->sig_all;
	attr.atomics = ctx->lim.atomics;

	pthread_spin_lock(&sq->lock);
	pi0 = sq->pi;
	for (; wr; wr = wr->next) {
		if ((uint16_t)(sq->pi - sq->ci) >= depth) {
			err = ENOMEM;
			break;
		}
		ah_idx = ud && wr->wr.ud.ah ? to_rah(wr->wr.ud.ah)->idx : 0;
		err = rnic_sqe_build((uint8_t *)sq->ring +
				     ((size_t)(sq->pi & (depth - 1)) << sq->wqe_log2),
				     &attr, wr, ah_idx);
		if (err)
			break;
		sq->wrid[sq->pi & (depth - 1)] = wr->wr_id;
		sq->pi++;
	}
	posted = sq->pi != pi0;
	if (posted)
		kicked = rnic_db_ring(ctx, sq->dbp, sq->db_off,
				      FIELD_PREP(RNIC_DB_RING_PI, sq->pi));
	pthread_spin_unlock(&sq->lock);
	if (!kicked) {
		int kerr = rnic_kick_qp(ibqp, false);

		/* the WQEs are in the ring: a failed kick fails the call */
		if (kerr && !err) {
			err = kerr;
			wr = first;
		}
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int rnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct rnic_context *ctx = to_rctx(ibqp->context);
	struct rnic_qp *qp = to_rqp(ibqp);
	struct rnic_wq *rq = &qp->rq;
	uint32_t depth = 1U << rq->log2_depth;
	bool posted, kicked = true;
	struct ibv_recv_wr *first = wr;
	uint16_t pi0;
	int err = 0;

	/* the device ignores a RESET QP's slot: the WQE would be lost */
	if (qp->srq || qp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&rq->lock);
	pi0 = rq->pi;
	for (; wr; wr = wr->next) {
		if ((uint16_t)(rq->pi - rq->ci) >= depth) {
			err = ENOMEM;
			break;
		}
		err = rnic_rqe_build((uint8_t *)rq->ring +
				     ((size_t)(rq->pi & (depth - 1)) << rq->wqe_log2),
				     rq->wqe_log2, rq->max_sge, wr);
		if (err)
			break;
		rq->wrid[rq->pi & (depth - 1)] = wr->wr_id;
		rq->len[rq->pi & (depth - 1)] = rnic_recv_len(wr);
		rq->pi++;
	}
	posted = rq->pi != pi0;
	if (posted)
		kicked = rnic_db_recv(ctx, rq->dbp, rq->db_off,
				      FIELD_PREP(RNIC_DB_RING_PI, rq->pi),
				      qp->state != IBV_QPS_ERR);
	pthread_spin_unlock(&rq->lock);
	if (!kicked) {
		int kerr = rnic_kick_qp(ibqp, true);

		if (kerr && !err) {
			err = kerr;
			wr = first;
		}
	}
	if (err)
		*bad_wr = wr;
	return err;
}

/* A slot back on the free stack; caller holds the SRQ's lock */
void rnic_srq_slot_free(struct rnic_srq *srq, uint16_t slot)
{
	srq->busy[slot] = 0;
	srq->free[srq->nfree++] = slot;
}

/*
 * A QP's move to RESET dropped the WQE it had taken from slot @slot of
 * its SRQ (struct rnic_umodify_qp_resp): no CQE will free the slot, so it
 * is freed here. A slot the process did not post is not the kernel's to
 * give back: counted and refused, so that a slot the device may still
 * read is never reposted. Returns 0, or -1 if refused.
 */
int rnic_srq_dropped(struct rnic_srq *srq, uint32_t slot)
{
	int ret = -1;

	pthread_spin_lock(&srq->lock);
	if (slot < (1U << srq->log2_depth) && srq->busy[slot]) {
		rnic_srq_slot_free(srq, slot);
		ret = 0;
	} else {
		srq->bad_drops++;
	}
	pthread_spin_unlock(&srq->lock);
	return ret;
}

/*
 * A WQE goes into a free slot s, then s into the index ring at the
 * producer index, then the producer index into the SRQ's doorbell slot
 * (hardware-rdma.rst, "SRQ"). A slot is reused only after the CQE that
 * frees it was read.
 */
int rnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct rnic_context *ctx = to_rctx(ibsrq->context);
	struct rnic_srq *srq = to_rsrq(ibsrq);
	uint32_t depth = 1U << srq->log2_depth;
	struct ibv_recv_wr *first = wr;
	bool kicked = true;
	uint16_t pi0, slot;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	pi0 = srq->pi;
	for (; wr; wr = wr->next) {
		if (!srq->nfree) {
			err = ENOMEM;
			break;
		}
		slot = srq->free[srq->nfree - 1];
		err = rnic_rqe_build((uint8_t *)srq->wqes +
				     ((size_t)slot << srq->rqe_log2),
				     srq->rqe_log2, srq->max_sge, wr);
		if (err)
			break;
		srq->nfree--;
		srq->busy[slot] = 1;
		srq->wrid[slot] = wr->wr_id;
		srq->len[slot] = rnic_recv_len(wr);
		/* the slot's WQE before its index: both reach the device by DMA */
		udma_to_device_barrier();
		srq->idx[srq->pi & (depth - 1)] = htole16(slot);
		srq->pi++;
	}
	if (srq->pi != pi0)
		kicked = rnic_db_recv(ctx, srq->dbp, srq->db_off,
				      FIELD_PREP(RNIC_DB_RING_PI, srq->pi), true);
	pthread_spin_unlock(&srq->lock);
	if (!kicked) {
		int kerr = rnic_kick_srq(ibsrq);

		if (kerr && !err) {
			err = kerr;
			wr = first;
		}
	}
	if (err)
		*bad_wr = wr;
	return err;
}
