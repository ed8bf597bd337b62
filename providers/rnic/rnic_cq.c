// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: completion queues.
 *
 * A CQ is a ring in the process's memory that the device writes 32-byte
 * CQEs into, with a phase bit; poll_cq consumes them and tells the device
 * by writing the consumer index into the CQ's doorbell slot. That write
 * needs no kick: the device reads CI when it needs room. An arm writes
 * the slot with ARM and a new ARM_SEQ and is kicked. The slot is one word
 * for both, and the device reads it when it gets to a kick, not when the
 * kick was written, so every later slot write repeats the last arm: a CI
 * update with ARM clear would withdraw an arm the device had not read
 * yet (hardware-rdma.rst, "CQ"). The device takes each ARM_SEQ once.
 *
 * Nothing in a CQE is trusted (hardware-rdma.rst, "Completion entries"):
 * its QP must be one of this CQ's, its WQE index one that is outstanding,
 * its fields consistent (rnic_wqe.c). A CQE naming another CQ's QP, or no
 * QP, is dropped and nothing else is touched; a CQE of this CQ's QP that
 * fails the other checks is dropped and the QP moved to ERR, whose flush
 * then completes its work requests, as the kernel driver does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <util/udma_barrier.h>

#include "rnic.h"
#include "rnic_abi.h"
#include "rnic_wqe.h"

struct ibv_cq *rnic_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel, int vector)
{
	struct rnic_context *ctx = to_rctx(ibctx);
	struct rnic_create_cq_resp resp;
	struct rnic_create_cq cmd;
	struct rnic_cq *cq;
	int err;

	if (cqe < 1 || (uint32_t)cqe > ctx->lim.max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	/* (1 << log2_depth) - 1 must hold the CQEs asked for (rnic-abi.h) */
	cq->log2_depth = rnic_depth_log2((uint32_t)cqe + 1, 2);
	if (cq->log2_depth > RNIC_MAX_RING_LOG2) {
		err = EINVAL;
		goto err_free;
	}
	cq->ring = rnic_ring_alloc(ctx, (size_t)RNIC_RDMA_CQE_SIZE << cq->log2_depth,
				   &cq->ring_bytes);
	if (!cq->ring) {
		err = errno;
		goto err_free;
	}

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.ring_va = (uintptr_t)cq->ring;
	cmd.log2_depth = cq->log2_depth;
	err = ibv_cmd_create_cq(ibctx, cqe, channel, vector, &cq->ibv_cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err)
		goto err_free;
	cq->cqn = resp.cqn;
	cq->db_off = resp.db_off;
	if ((cq->cqn & ~RNIC_BTH_QPN) || !rnic_db_off_ok(cq->db_off)) {
		err = EPROTO;
		goto err_destroy;
	}
	cq->dbp = rnic_dbp_get(ctx, resp.db_key);
	if (!cq->dbp) {
		err = errno;
		goto err_destroy;
	}
	return &cq->ibv_cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	rnic_ring_free(cq->ring, cq->ring_bytes);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	errno = err;
	return NULL;
}

/* After DESTROY_RDMA_CQ the device writes no more CQEs to the ring */
int rnic_destroy_cq(struct ibv_cq *ibcq)
{
	struct rnic_cq *cq = to_rcq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	rnic_ring_free(cq->ring, cq->ring_bytes);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/*
 * Event moderation is the device's (MODIFY_RDMA_CQ), set through the
 * kernel: the process's CQ ring and slot do not change.
 */
int rnic_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

/* The slot value: CI and the last arm (see the top of this file) */
static uint32_t rnic_cq_slot(const struct rnic_cq *cq)
{
	return rnic_db_rdma_cq(cq->ci, cq->armed, cq->arm_solicited,
			       cq->arm_seq);
}

/* Whether the CQE at @ci has been written by the device on this lap */
static bool rnic_cqe_ready(const struct rnic_cq *cq, uint16_t ci,
			   struct rnic_rdma_cqe **cqep)
{
	struct rnic_rdma_cqe *cqe =
		&cq->ring[ci & ((1U << cq->log2_depth) - 1)];
	/* the device writes this byte last; reread on every poll */
	uint8_t flags = __atomic_load_n(&cqe->flags, __ATOMIC_RELAXED);

	*cqep = cqe;
	return !!(flags & RNIC_RCQE_F_PHASE) ==
	       rnic_ring_phase(ci, cq->log2_depth);
}

/* Send CQE: retires the WQEs up to wqe_idx, reports the last */
static int rnic_poll_sq(struct rnic_qp *qp, const struct rnic_rdma_cqe *cqe,
			struct ibv_wc *wc)
{
	struct rnic_wq *sq = &qp->sq;
	uint16_t idx = le16toh(cqe->wqe_idx);
	bool ud = qp->vqp.qp.qp_type == IBV_QPT_UD;
	int n, err = -EIO;

	pthread_spin_lock(&sq->lock);
	n = rnic_cqe_sq_retire(sq->ci, sq->pi, idx);
	if (n > 0 && !rnic_cqe_to_wc(cqe, ud, 0, wc)) {
		wc->wr_id = sq->wrid[idx & ((1U << sq->log2_depth) - 1)];
		sq->ci += n;
		err = 0;
	}
	pthread_spin_unlock(&sq->lock);
	return err;
}

/* Receive CQE of an RQ: exactly the next WQE */
static int rnic_poll_rq(struct rnic_qp *qp, const struct rnic_rdma_cqe *cqe,
			struct ibv_wc *wc)
{
	struct rnic_wq *rq = &qp->rq;
	uint16_t idx = le16toh(cqe->wqe_idx);
	uint32_t slot = idx & ((1U << rq->log2_depth) - 1);
	int err;

	pthread_spin_lock(&rq->lock);
	err = rnic_cqe_rq_check(rq->ci, rq->pi, idx);
	if (!err)
		err = rnic_cqe_to_wc(cqe, qp->vqp.qp.qp_type == IBV_QPT_UD,
				     rq->len[slot], wc);
	if (!err) {
		wc->wr_id = rq->wrid[slot];
		rq->ci++;
	}
	pthread_spin_unlock(&rq->lock);
	return err;
}

/* Receive CQE of an SRQ: a slot the provider gave and has not had back */
static int rnic_poll_srq(struct rnic_qp *qp, const struct rnic_rdma_cqe *cqe,
			 struct ibv_wc *wc)
{
	struct rnic_srq *srq = qp->srq;
	uint16_t slot = le16toh(cqe->wqe_idx);
	int err = -EIO;

	pthread_spin_lock(&srq->lock);
	if (slot < (1U << srq->log2_depth) && srq->busy[slot])
		err = rnic_cqe_to_wc(cqe, qp->vqp.qp.qp_type == IBV_QPT_UD,
				     srq->len[slot], wc);
	if (!err) {
		wc->wr_id = srq->wrid[slot];
		rnic_srq_slot_free(srq, slot);
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}

/*
 * One CQE, phase checked: 0 and @wc filled, or an error (dropped). A QP
 * whose CQE was bad is returned in @bad for the caller to fail.
 */
static int rnic_poll_one(struct rnic_context *ctx, struct rnic_cq *cq,
			 const struct rnic_rdma_cqe *cqe, struct ibv_wc *wc,
			 struct rnic_qp **bad)
{
	uint32_t qpn = le32toh(cqe->qpn);
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;
	struct rnic_qp *qp;
	int err;

	/* left by a QP that was reset or destroyed (rnic_cq_scrub()) */
	if (qpn == RNIC_CQE_QPN_SCRUBBED)
		return -ENOENT;
	qp = rnic_qp_lookup(ctx, qpn);
	if (!qp) {
		cq->bad_cqes++;
		return -ENOENT;
	}
	/* another CQ's QP: the device erred, and that QP is not ours to fail */
	if ((recv ? qp->recv_cqn : qp->send_cqn) != cq->cqn) {
		cq->bad_cqes++;
		return -EXDEV;
	}
	if (!recv)
		err = rnic_poll_sq(qp, cqe, wc);
	else if (!!qp->srq != !!(cqe->flags & RNIC_RCQE_F_SRQ))
		err = -EIO;
	else if (qp->srq)
		err = rnic_poll_srq(qp, cqe, wc);
	else
		err = rnic_poll_rq(qp, cqe, wc);
	if (err) {
		cq->bad_cqes++;
		if (!*bad)
			*bad = qp;
		return err;
	}
	wc->qp_num = qpn;
	return 0;
}

/* A CQE of @qp was refused: the QP goes to ERR, as the kernel driver does */
static void rnic_fail_qp(struct rnic_cq *cq, struct rnic_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_modify_qp cmd;

	verbs_err(verbs_get_ctx(cq->ibv_cq.context),
		  "rnic: CQ %u: dropped a CQE of QP %u that names no outstanding WQE or is inconsistent; the QP is moved to ERR\n",
		  cq->cqn, qp->vqp.qp.qp_num);
	memset(&cmd, 0, sizeof(cmd));
	if (!ibv_cmd_modify_qp(&qp->vqp.qp, &attr, IBV_QP_STATE, &cmd,
			       sizeof(cmd)))
		qp->state = IBV_QPS_ERR;
}

int rnic_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct rnic_context *ctx = to_rctx(ibcq->context);
	struct rnic_cq *cq = to_rcq(ibcq);
	struct rnic_rdma_cqe *cqe;
	struct rnic_qp *bad = NULL;
	uint16_t ci0;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	ci0 = cq->ci;
	while (n < num && rnic_cqe_ready(cq, cq->ci, &cqe)) {
		/* the rest of the entry only after its phase */
		udma_from_device_barrier();
		cq->ci++;
		if (!rnic_poll_one(ctx, cq, cqe, &wc[n], &bad))
			n++;
	}
	/* room for the device: a CI update needs no kick */
	if (cq->ci != ci0)
		rnic_db_write(cq->dbp, cq->db_off, rnic_cq_slot(cq));
	pthread_spin_unlock(&cq->lock);
	if (bad)
		rnic_fail_qp(cq, bad);
	return n;
}

/*
 * An arm is one-shot: the device raises one event for the first CQE (for
 * a solicited arm, the first solicited or error CQE) after it reads the
 * new ARM_SEQ, or at once if such a CQE is already there.
 */
int rnic_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct rnic_context *ctx = to_rctx(ibcq->context);
	struct rnic_cq *cq = to_rcq(ibcq);
	bool kicked;

	pthread_spin_lock(&cq->lock);
	cq->arm_seq++;
	cq->armed = true;
	cq->arm_solicited = !!solicited_only;
	kicked = rnic_db_ring(ctx, cq->dbp, cq->db_off, rnic_cq_slot(cq));
	pthread_spin_unlock(&cq->lock);
	/* the slot and its kick entry are written; the kernel only kicks */
	return kicked ? 0 : ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/*
 * ibv_get_cq_event() got an event: nothing to update, since the device
 * took the arm with its ARM_SEQ and the next req_notify_cq brings a new
 * one. Repeating the taken arm in CI writes costs nothing.
 */
void rnic_cq_event(struct ibv_cq *ibcq)
{
}

/**
 * rnic_cq_scrub() - mark the CQEs a reset or destroyed QP left in a CQ
 * @cq: the CQ, its lock held
 * @qpn: the QP
 * @srq: the QP's SRQ, or NULL; an SRQ receive among the CQEs frees its slot
 *
 * Each such CQE the device has written (from CI to the first not yet
 * written on this lap) gets the QPN RNIC_CQE_QPN_SCRUBBED, which poll_cq
 * drops. The device only writes past them, so this races with nothing.
 */
void rnic_cq_scrub(struct rnic_cq *cq, uint32_t qpn, struct rnic_srq *srq)
{
	uint32_t depth = 1U << cq->log2_depth, i;
	struct rnic_rdma_cqe *cqe;
	uint16_t ci = cq->ci, slot;

	for (i = 0; i < depth; i++, ci++) {
		if (!rnic_cqe_ready(cq, ci, &cqe))
			break;
		udma_from_device_barrier();
		if (le32toh(cqe->qpn) != qpn)
			continue;
		slot = le16toh(cqe->wqe_idx);
		if (srq && (cqe->opcode & RNIC_CQE_OP_RECV_BIT) &&
		    (cqe->flags & RNIC_RCQE_F_SRQ) &&
		    slot < (1U << srq->log2_depth)) {
			pthread_spin_lock(&srq->lock);
			if (srq->busy[slot])
				rnic_srq_slot_free(srq, slot);
			pthread_spin_unlock(&srq->lock);
		}
		cqe->qpn = htole32(RNIC_CQE_QPN_SCRUBBED);
	}
}
