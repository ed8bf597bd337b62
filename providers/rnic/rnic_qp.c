// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: queue pairs (RC and UD).
 *
 * The provider sizes the rings from the capacities asked for, by the
 * kernel driver's rules (a power-of-two depth of at least 4, the smallest
 * WQE that holds the SGEs or inline bytes), allocates them, and passes
 * their addresses in the create udata; the kernel pins them and gives the
 * device their page lists. What the QP was granted goes back in the init
 * attributes, as verbs require.
 *
 * A QP that goes to RESET or is destroyed may have left CQEs in its CQs
 * that poll_cq has not consumed: they are marked for poll_cq to drop
 * (rnic_cq_scrub()), as the kernel driver does for its own QPs, since a
 * reset QP restarts its ring indices at 0 and a destroyed QPN is no one's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnic.h"
#include "rnic_abi.h"
#include "rnic_wqe.h"

#define RNIC_QPN_HI(qpn)	(((qpn) >> 12) & 0xfff)
#define RNIC_QPN_LO(qpn)	((qpn) & 0xfff)

/*
 * poll_cq looks QPs up without the table's mutex, under the CQ's lock;
 * a QP leaves the table only with its CQs' locks held (rnic_destroy_qp()).
 */
struct rnic_qp *rnic_qp_lookup(struct rnic_context *ctx, uint32_t qpn)
{
	struct rnic_qp **t;

	if (qpn & ~RNIC_BTH_QPN)
		return NULL;
	t = ctx->qp_table[RNIC_QPN_HI(qpn)];
	return t ? t[RNIC_QPN_LO(qpn)] : NULL;
}

static int rnic_qp_table_add(struct rnic_context *ctx, struct rnic_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct rnic_qp ***t = &ctx->qp_table[RNIC_QPN_HI(qpn)];
	int err = 0;

	pthread_mutex_lock(&ctx->qp_mutex);
	if (!*t)
		*t = calloc(1 << 12, sizeof(**t));
	if (!*t)
		err = ENOMEM;
	else if ((*t)[RNIC_QPN_LO(qpn)])
		err = EEXIST;	/* the kernel reused a live QPN */
	else
		(*t)[RNIC_QPN_LO(qpn)] = qp;
	pthread_mutex_unlock(&ctx->qp_mutex);
	return err;
}

static void rnic_qp_table_del(struct rnic_context *ctx, struct rnic_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct rnic_qp **t;

	pthread_mutex_lock(&ctx->qp_mutex);
	t = ctx->qp_table[RNIC_QPN_HI(qpn)];
	if (t && t[RNIC_QPN_LO(qpn)] == qp)
		t[RNIC_QPN_LO(qpn)] = NULL;
	pthread_mutex_unlock(&ctx->qp_mutex);
}

/* Both CQs of a QP, in a fixed order when they differ */
static void rnic_qp_lock_cqs(struct rnic_qp *qp)
{
	struct rnic_cq *s = to_rcq(qp->vqp.qp.send_cq);
	struct rnic_cq *r = to_rcq(qp->vqp.qp.recv_cq);

	if (s == r) {
		pthread_spin_lock(&s->lock);
	} else if (s < r) {
		pthread_spin_lock(&s->lock);
		pthread_spin_lock(&r->lock);
	} else {
		pthread_spin_lock(&r->lock);
		pthread_spin_lock(&s->lock);
	}
}

static void rnic_qp_unlock_cqs(struct rnic_qp *qp)
{
	struct rnic_cq *s = to_rcq(qp->vqp.qp.send_cq);
	struct rnic_cq *r = to_rcq(qp->vqp.qp.recv_cq);

	pthread_spin_unlock(&s->lock);
	if (s != r)
		pthread_spin_unlock(&r->lock);
}

/* The QP's unpolled CQEs, in both its CQs; caller holds their locks */
static void rnic_qp_scrub(struct rnic_qp *qp)
{
	struct rnic_cq *s = to_rcq(qp->vqp.qp.send_cq);
	struct rnic_cq *r = to_rcq(qp->vqp.qp.recv_cq);

	/* an SRQ receive among them gives its slot back */
	if (s == r) {
		rnic_cq_scrub(s, qp->vqp.qp.qp_num, qp->srq);
		return;
	}
	rnic_cq_scrub(s, qp->vqp.qp.qp_num, NULL);
	rnic_cq_scrub(r, qp->vqp.qp.qp_num, qp->srq);
}

static int rnic_wq_alloc(struct rnic_context *ctx, struct rnic_wq *wq,
			 uint8_t log2_depth, uint8_t wqe_log2, bool recv)
{
	uint32_t depth = 1U << log2_depth;

	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	wq->log2_depth = log2_depth;
	wq->wqe_log2 = wqe_log2;
	wq->wrid = calloc(depth, sizeof(*wq->wrid));
	if (!wq->wrid)
		return ENOMEM;
	if (recv) {
		wq->len = calloc(depth, sizeof(*wq->len));
		if (!wq->len)
			return ENOMEM;
	}
	wq->ring = rnic_ring_alloc(ctx, (size_t)depth << wqe_log2,
				   &wq->ring_bytes);
	return wq->ring ? 0 : ENOMEM;
}

static void rnic_wq_free(struct rnic_wq *wq)
{
	rnic_ring_free(wq->ring, wq->ring_bytes);
	free(wq->wrid);
	free(wq->len);
	pthread_spin_destroy(&wq->lock);
}

/* The rings from the capacities, checked against the device's limits */
static int rnic_qp_size(struct rnic_context *ctx, struct ibv_qp_init_attr *init,
			uint8_t *sq_log2, uint8_t *sqe_log2,
			uint8_t *rq_log2, uint8_t *rqe_log2)
{
	struct ibv_qp_cap *cap = &init->cap;

	/* 0 WRs is a ring of the smallest depth, as the kernel allows */
	if (cap->max_send_wr > ctx->lim.max_qp_wr ||
	    cap->max_send_sge > ctx->lim.max_sge ||
	    cap->max_inline_data > ctx->max_inline)
		return EINVAL;
	*sq_log2 = rnic_depth_log2(cap->max_send_wr, 2);
	*sqe_log2 = rnic_sqe_log2(cap->max_send_sge, cap->max_inline_data);
	if (*sqe_log2 > ctx->max_sqe_log2 || *sq_log2 > RNIC_MAX_RING_LOG2)
		return EINVAL;
	*rq_log2 = 0;
	*rqe_log2 = 0;
	if (init->srq)
		return 0;
	if (cap->max_recv_wr > ctx->lim.max_qp_wr ||
	    cap->max_recv_sge > ctx->lim.max_sge)
		return EINVAL;
	*rq_log2 = rnic_depth_log2(cap->max_recv_wr, 2);
	*rqe_log2 = rnic_rqe_log2(cap->max_recv_sge);
	return *rqe_log2 > ctx->max_rqe_log2 ||
	       *rq_log2 > RNIC_MAX_RING_LOG2 ? EINVAL : 0;
}

/* What a queue of this WQE size may carry, the device's limits applied */
static void rnic_qp_grant(struct rnic_context *ctx, struct rnic_qp *qp)
{
	qp->sq.max_sge = rnic_sqe_max_sge(qp->sq.wqe_log2);
	if (qp->sq.max_sge > ctx->lim.max_sge)
		qp->sq.max_sge = ctx->lim.max_sge;
	qp->sq.max_inline = rnic_sqe_max_inline(qp->sq.wqe_log2);
	if (qp->sq.max_inline > ctx->max_inline)
		qp->sq.max_inline = ctx->max_inline;
	if (qp->srq)
		return;
	qp->rq.max_sge = rnic_rqe_max_sge(qp->rq.wqe_log2);
	if (qp->rq.max_sge > ctx->lim.max_sge)
		qp->rq.max_sge = ctx->lim.max_sge;
}

static void rnic_qp_caps(const struct rnic_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = 1U << qp->sq.log2_depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	cap->max_recv_wr = qp->srq ? 0 : 1U << qp->rq.log2_depth;
	cap->max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
}

static void rnic_qp_free(struct rnic_qp *qp)
{
	rnic_wq_free(&qp->sq);
	if (!qp->srq)
		rnic_wq_free(&qp->rq);
	free(qp);
}

struct ibv_qp *rnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	struct rnic_context *ctx = to_rctx(pd->context);
	struct ibv_qp_init_attr_ex attr_ex;
	struct rnic_create_qp_resp resp;
	struct rnic_create_qp cmd;
	uint8_t sq_log2, sqe_log2, rq_log2, rqe_log2;
	struct rnic_dbp *dbp;
	struct rnic_qp *qp;
	int err;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = rnic_qp_size(ctx, init, &sq_log2, &sqe_log2, &rq_log2, &rqe_log2);
	if (err) {
		errno = err;
		return NULL;
	}
	/* zeroed: verbs_qp.comp_mask stays 0, never VERBS_QP_EX */
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->srq = init->srq ? to_rsrq(init->srq) : NULL;
	err = rnic_wq_alloc(ctx, &qp->sq, sq_log2, sqe_log2, false);
	if (!err && !qp->srq)
		err = rnic_wq_alloc(ctx, &qp->rq, rq_log2, rqe_log2, true);
	if (err)
		goto err_free;
	rnic_qp_grant(ctx, qp);

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.sq_va = (uintptr_t)qp->sq.ring;
	cmd.sq_log2_depth = sq_log2;
	cmd.sqe_log2 = sqe_log2;
	if (!qp->srq) {
		cmd.rq_va = (uintptr_t)qp->rq.ring;
		cmd.rq_log2_depth = rq_log2;
		cmd.rqe_log2 = rqe_log2;
	}
	memset(&attr_ex, 0, sizeof(attr_ex));
	memcpy(&attr_ex, init, sizeof(*init));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;
	err = ibv_cmd_create_qp_ex(pd->context, &qp->vqp, &attr_ex,
				   &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				   sizeof(resp));
	if (err)
		goto err_free;

	err = EPROTO;
	if (resp.qpn != qp->vqp.qp.qp_num || !rnic_db_off_ok(resp.sq_db_off) ||
	    (qp->srq ? resp.rq_db_off != RNIC_DB_NONE :
		       !rnic_db_off_ok(resp.rq_db_off)))
		goto err_destroy;
	dbp = rnic_dbp_get(ctx, resp.db_key);
	if (!dbp) {
		err = errno;
		goto err_destroy;
	}
	qp->sq.dbp = dbp;
	qp->sq.db_off = resp.sq_db_off;
	qp->rq.dbp = dbp;
	qp->rq.db_off = resp.rq_db_off;
	qp->sig_all = init->sq_sig_all;
	qp->state = IBV_QPS_RESET;
	qp->send_cqn = to_rcq(init->send_cq)->cqn;
	qp->recv_cqn = to_rcq(init->recv_cq)->cqn;
	err = rnic_qp_table_add(ctx, qp);
	if (err)
		goto err_destroy;
	rnic_qp_caps(qp, &init->cap);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	rnic_qp_free(qp);
	errno = err;
	return NULL;
}

/* A QP back in RESET starts its rings over; the device zeroed its slots */
static void rnic_qp_reset(struct rnic_qp *qp)
{
	rnic_qp_lock_cqs(qp);
	rnic_qp_scrub(qp);
	pthread_spin_lock(&qp->sq.lock);
	qp->sq.pi = 0;
	qp->sq.ci = 0;
	pthread_spin_unlock(&qp->sq.lock);
	if (!qp->srq) {
		pthread_spin_lock(&qp->rq.lock);
		qp->rq.pi = 0;
		qp->rq.ci = 0;
		pthread_spin_unlock(&qp->rq.lock);
	}
	rnic_qp_unlock_cqs(qp);
}

/*
 * The extended command, for its response: a move to RESET may drop a WQE
 * the QP had taken from its SRQ, and only the response says which slot
 * is free again (struct rnic_umodify_qp_resp).
 */
int rnic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	struct rnic_modify_qp_ex_resp resp;
	struct rnic_modify_qp_ex cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_modify_qp_ex(ibqp, attr, mask, &cmd.ibv_cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (err)
		return err;
	if (mask & IBV_QP_STATE) {
		qp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET)
			rnic_qp_reset(qp);
	}
	if ((resp.flags & RNIC_UMODIFY_QP_F_SRQ_DROPPED) &&
	    (!qp->srq || rnic_srq_dropped(qp->srq, resp.srq_slot)))
		verbs_err(verbs_get_ctx(ibqp->context),
			  "rnic: QP %u: the kernel reported SRQ slot %u dropped, which the QP cannot have held; ignored\n",
			  ibqp->qp_num, resp.srq_slot);
	return 0;
}

int rnic_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	struct ibv_query_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
	if (err)
		return err;
	/* the rings are the provider's: it knows best what they hold */
	rnic_qp_caps(qp, &attr->cap);
	rnic_qp_caps(qp, &init->cap);
	init->sq_sig_all = qp->sig_all;
	return 0;
}

/*
 * After DESTROY_QP the device writes no CQE for the QP and touches none
 * of its rings: the table entry and the CQEs it left go, then the rings.
 */
int rnic_destroy_qp(struct ibv_qp *ibqp)
{
	struct rnic_context *ctx = to_rctx(ibqp->context);
	struct rnic_qp *qp = to_rqp(ibqp);
	int err;

	/*
	 * A destroy drops the WQE the QP may hold from its SRQ without a
	 * word; a move to RESET first says which slot that was. If it fails
	 * (a failed device), the destroy still goes on.
	 */
	if (qp->srq && qp->state != IBV_QPS_RESET) {
		struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

		rnic_modify_qp(ibqp, &attr, IBV_QP_STATE);
	}
	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	rnic_qp_lock_cqs(qp);
	rnic_qp_table_del(ctx, qp);
	rnic_qp_scrub(qp);
	rnic_qp_unlock_cqs(qp);
	rnic_qp_free(qp);
	return 0;
}
