// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: queue pairs.
 *
 * create_qp sizes the rings from the verbs capacities (the smallest WQE
 * that holds the SGEs or inline data asked for), allocates them and the
 * wr_id arrays, then CREATE_QP; modify_qp builds the RC path's header
 * template and MODIFY_QP through rnic_ib_modify_qp_cmd(), which checks
 * the request as ib_core's rules do; query_qp is QUERY_QP; destroy_qp is
 * DESTROY_QP, after which the rings are freed.
 */
#include <kunit/visibility.h>
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_umem.h>
#include <uapi/rdma/rnic-abi.h>

#include "rnic_param.h"
#include "rnic_verbs.h"
#include "rnic_ib_qp_attr.h"
#include "rnic_ib_tmpl.h"
#include "rnic_ib_wqe.h"

struct rnic_ib_qp *rnic_ib_qp_get(struct rnic_ibdev *ibd, u32 qpn)
{
	struct rnic_ib_qp *qp;

	xa_lock_irq(&ibd->qp_xa);
	qp = xa_load(&ibd->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irq(&ibd->qp_xa);
	return qp;
}

void rnic_ib_qp_put(struct rnic_ib_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->gone);
}

/* The limits a modify_qp request is checked against */
static void rnic_ib_qp_limits(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			      struct rnic_ib_qp_limits *lim)
{
	enum ib_mtu mtu = iboe_get_mtu(READ_ONCE(ibd->rdev->netdev->mtu));
	enum ib_mtu max = ib_mtu_int_to_enum(rnic_pmtu_bytes(ibd->caps.max_pmtu));

	lim->port_mtu = min(mtu ? mtu : IB_MTU_256, max);
	lim->max_qp_rd_atom = ibd->caps.max_qp_rd_atom;
	lim->max_qp_dest_rd_atom = ibd->caps.max_qp_dest_rd_atom;
	lim->pkey_tbl_len = ibd->caps.pkey_tbl_len;
	lim->privileged = qp->privileged;
}

static int rnic_ib_modify_qp_state_locked(struct rnic_ib_qp *qp,
					  struct ib_qp_attr *attr, int mask,
					  bool *last_wqe);
static void rnic_ib_qp_last_wqe(struct rnic_ib_qp *qp);

static void rnic_ib_err_work(struct work_struct *work)
{
	struct rnic_ib_qp *qp = container_of(work, struct rnic_ib_qp,
					     err_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	bool last_wqe = false;

	/*
	 * Checked and sent under one hold of the lock destroy_qp sets
	 * @destroying under: a MODIFY_QP after DESTROY_QP could move
	 * another QP that got the QPN.
	 */
	mutex_lock(&qp->state_lock);
	if (!qp->destroying) {
		rnic_ib_stat_inc(to_ibdev(qp->ibqp.device),
				 RNIC_IB_STAT_qp_err_by_driver);
		rnic_ib_modify_qp_state_locked(qp, &attr, IB_QP_STATE,
					       &last_wqe);
	}
	mutex_unlock(&qp->state_lock);
	if (last_wqe)
		rnic_ib_qp_last_wqe(qp);
}

/**
 * rnic_ib_qp_init_sync() - what orders a new QP's users: its state lock,
 * its references, the error work
 * @qp: the QP being created
 */
void rnic_ib_qp_init_sync(struct rnic_ib_qp *qp)
{
	mutex_init(&qp->state_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->gone);
	INIT_WORK(&qp->err_work, rnic_ib_err_work);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_init_sync);

/**
 * rnic_ib_qp_set_err() - move a QP to ERR from any context
 * @qp: the QP a bad CQE named
 *
 * Its WRs then complete as flushed, so the ULP is not left waiting for a
 * completion that was dropped.
 */
void rnic_ib_qp_set_err(struct rnic_ib_qp *qp)
{
	schedule_work(&qp->err_work);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_set_err);

/**
 * rnic_ib_qp_dev_err() - the device moved a QP to ERR on its own
 * @qp: the QP a QP_FATAL, QP_REQ_ERR or QP_ACCESS_ERR event named
 *
 * Under @qp->state_lock, as every other change of the state: modify_qp
 * writes the device's answer back after its command, and an ERR written
 * while the command ran would be overwritten by a state the QP has left.
 * A QP in RESET was reset after the device raised the event: the error
 * was its previous life's, and the device holds it in RESET now.
 *
 * Context: process context (the event work).
 */
void rnic_ib_qp_dev_err(struct rnic_ib_qp *qp)
{
	mutex_lock(&qp->state_lock);
	if (qp->state != IB_QPS_RESET)
		WRITE_ONCE(qp->state, IB_QPS_ERR);
	mutex_unlock(&qp->state_lock);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_dev_err);

/* ------------------------------------------------------------------------
 * Creation
 */

static int rnic_ib_wq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_wq *wq,
			    u32 depth, u8 wqe_log2, bool recv)
{
	spin_lock_init(&wq->lock);
	wq->log2_depth = ilog2(depth);
	wq->wqe_log2 = wqe_log2;
	wq->wrid = kcalloc(depth, sizeof(*wq->wrid), GFP_KERNEL);
	if (!wq->wrid)
		return -ENOMEM;
	if (recv) {
		wq->len = kcalloc(depth, sizeof(*wq->len), GFP_KERNEL);
		if (!wq->len)
			return -ENOMEM;
	}
	wq->ring = dma_alloc_coherent(rnic_ib_dma(ibd),
				      (size_t)depth << wqe_log2, &wq->dma,
				      GFP_KERNEL);
	return wq->ring ? 0 : -ENOMEM;
}

static void rnic_ib_wq_free(struct rnic_ibdev *ibd, struct rnic_ib_wq *wq,
			    bool destroyed)
{
	if (wq->ring)
		rnic_ib_free_dma(ibd, destroyed,
				 (size_t)BIT(wq->log2_depth) << wq->wqe_log2,
				 wq->ring, wq->dma);
	wq->ring = NULL;
	rnic_ib_umem_free(ibd, destroyed, wq->umem);
	wq->umem = NULL;
	kfree(wq->wrid);
	kfree(wq->len);
	wq->wrid = NULL;
	wq->len = NULL;
}

/* The QP's rings from its capacities, checked against the device's */
static int rnic_ib_qp_size(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			   struct ib_qp_init_attr *init, u32 *sq_depth,
			   u32 *rq_depth, u8 *sqe_log2, u8 *rqe_log2)
{
	const struct rnic_ib_caps *c = &ibd->caps;
	struct ib_qp_cap *cap = &init->cap;
	u32 max_wr = BIT(c->max_wq_log2);

	if (cap->max_send_wr > max_wr || cap->max_send_sge > c->max_send_sge ||
	    cap->max_inline_data > c->max_inline)
		return -EINVAL;
	*sq_depth = roundup_pow_of_two(max_t(u32, cap->max_send_wr, 4));
	*sqe_log2 = rnic_ib_sqe_log2(cap->max_send_sge, cap->max_inline_data);
	if (*sqe_log2 > c->max_sqe_log2)
		return -EINVAL;
	cap->max_send_wr = *sq_depth;
	cap->max_send_sge = min_t(u32, rnic_sqe_max_sge(*sqe_log2),
				  c->max_send_sge);
	cap->max_inline_data = min_t(u32, rnic_sqe_max_inline(*sqe_log2),
				     c->max_inline);

	*rq_depth = 0;
	*rqe_log2 = 0;
	if (init->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	if (cap->max_recv_wr > max_wr || cap->max_recv_sge > c->max_recv_sge)
		return -EINVAL;
	*rq_depth = roundup_pow_of_two(max_t(u32, cap->max_recv_wr, 4));
	*rqe_log2 = rnic_ib_rqe_log2(cap->max_recv_sge);
	if (*rqe_log2 > c->max_rqe_log2)
		return -EINVAL;
	cap->max_recv_wr = *rq_depth;
	cap->max_recv_sge = min_t(u32, rnic_rqe_max_sge(*rqe_log2),
				  c->max_recv_sge);
	return 0;
}

/*
 * A user context's rings (rnic_ucreate_qp), checked against the
 * capacities asked for and the device's, which are then set to what the
 * rings hold.
 */
static int rnic_ib_uqp_size(struct rnic_ibdev *ibd, struct ib_udata *udata,
			    struct ib_qp_init_attr *init,
			    struct rnic_ucreate_qp *req)
{
	const struct rnic_ib_caps *c = &ibd->caps;
	struct ib_qp_cap *cap = &init->cap;
	int err;

	if (udata->outlen < sizeof(struct rnic_ucreate_qp_resp))
		return -EINVAL;
	err = rnic_ib_udata_in(udata, req, sizeof(*req));
	if (err)
		return err;
	if (req->reserved || cap->max_send_sge > c->max_send_sge ||
	    cap->max_inline_data > c->max_inline)
		return -EINVAL;
	err = rnic_ib_uwq_check(req->sq_va, req->sq_log2_depth, req->sqe_log2,
				RNIC_SQE_LOG2_MIN, c->max_sqe_log2,
				c->max_wq_log2, cap->max_send_wr,
				rnic_ib_sqe_log2(cap->max_send_sge,
						 cap->max_inline_data));
	if (err)
		return err;
	if (init->srq) {
		if (req->rq_va || req->rq_log2_depth || req->rqe_log2)
			return -EINVAL;
	} else {
		if (cap->max_recv_sge > c->max_recv_sge)
			return -EINVAL;
		err = rnic_ib_uwq_check(req->rq_va, req->rq_log2_depth,
					req->rqe_log2, RNIC_RQE_LOG2_MIN,
					c->max_rqe_log2, c->max_wq_log2,
					cap->max_recv_wr,
					rnic_ib_rqe_log2(cap->max_recv_sge));
		if (err)
			return err;
	}
	cap->max_send_wr = BIT(req->sq_log2_depth);
	cap->max_send_sge = min_t(u32, rnic_sqe_max_sge(req->sqe_log2),
				  c->max_send_sge);
	cap->max_inline_data = min_t(u32, rnic_sqe_max_inline(req->sqe_log2),
				     c->max_inline);
	cap->max_recv_wr = init->srq ? 0 : BIT(req->rq_log2_depth);
	cap->max_recv_sge = init->srq ? 0 :
			    min_t(u32, rnic_rqe_max_sge(req->rqe_log2),
				  c->max_recv_sge);
	return 0;
}

/* Doorbell slots of a QP: its SQ's and, without an SRQ, its RQ's */
static unsigned int rnic_ib_qp_slots(const struct rnic_ib_qp *qp)
{
	return qp->srq ? 1 : 2;
}

static void rnic_ib_qp_free_mem(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
				bool destroyed)
{
	/* a QP the device may still have keeps its slots until the reset */
	if (qp->sq.dbp && destroyed) {
		if (qp->uctx)
			rnic_ib_udbp_put(qp->uctx, qp->sq.dbp,
					 rnic_ib_qp_slots(qp));
		else
			rnic_ib_dbp_put(ibd, qp->sq.dbp, rnic_ib_qp_slots(qp));
	}
	qp->sq.dbp = NULL;
	qp->rq.dbp = NULL;
	rnic_ib_wq_free(ibd, &qp->sq, destroyed);
	rnic_ib_wq_free(ibd, &qp->rq, destroyed);
	/*
	 * MODIFY_QP copies the path template; one that went unanswered may
	 * read it still: with the QP, then, it is not DESTROYed either.
	 */
	rnic_ib_free_dma(ibd, destroyed, sizeof(*qp->path), qp->path,
			 qp->path_dma);
	qp->path = NULL;
}

/* A user work ring: pinned, its page list in @pbl */
static int rnic_ib_uwq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_wq *wq,
			     u64 va, u8 log2_depth, u8 wqe_log2,
			     struct rnic_ib_pbl *pbl)
{
	int err;

	spin_lock_init(&wq->lock);
	wq->log2_depth = log2_depth;
	wq->wqe_log2 = wqe_log2;
	err = rnic_ib_uring_get(ibd, va,
				rnic_ib_uring_bytes(log2_depth, wqe_log2),
				&wq->umem);
	if (!err)
		err = rnic_ib_pbl_build(ibd, wq->umem, PAGE_SIZE, pbl);
	return err;
}

/*
 * A user QP's rings and slots into @c: SQ_PBL and RQ_PBL page lists of
 * PAGE_SIZE pages, in @sq_pbl and @rq_pbl (the caller frees them after
 * CREATE_QP), and the slots in a page of the context.
 */
static int rnic_ib_uqp_alloc(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			     const struct rnic_ucreate_qp *req,
			     struct rnic_aq_create_qp *c,
			     struct rnic_ib_pbl *sq_pbl,
			     struct rnic_ib_pbl *rq_pbl)
{
	struct rnic_ib_udbp *p;
	int err;

	err = rnic_ib_uwq_alloc(ibd, &qp->sq, req->sq_va, req->sq_log2_depth,
				req->sqe_log2, sq_pbl);
	if (err)
		return err;
	c->flags |= RNIC_QP_F_SQ_PBL;
	c->sq_addr = cpu_to_le64(sq_pbl->dma);
	c->sq_page_log2 = PAGE_SHIFT;
	if (!qp->srq) {
		err = rnic_ib_uwq_alloc(ibd, &qp->rq, req->rq_va,
					req->rq_log2_depth, req->rqe_log2,
					rq_pbl);
		if (err)
			return err;
		c->flags |= RNIC_QP_F_RQ_PBL;
		c->rq_addr = cpu_to_le64(rq_pbl->dma);
		c->rq_page_log2 = PAGE_SHIFT;
	}
	p = rnic_ib_udbp_get(qp->uctx, rnic_ib_qp_slots(qp));
	if (IS_ERR(p))
		return PTR_ERR(p);
	qp->sq.dbp = &p->dbp;
	return 0;
}

/* A kernel QP's rings, wr_id arrays and slots */
static int rnic_ib_kqp_alloc(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			     u32 sq_depth, u8 sqe_log2, u32 rq_depth,
			     u8 rqe_log2, struct rnic_aq_create_qp *c)
{
	int err;

	err = rnic_ib_wq_alloc(ibd, &qp->sq, sq_depth, sqe_log2, false);
	if (!err && !qp->srq)
		err = rnic_ib_wq_alloc(ibd, &qp->rq, rq_depth, rqe_log2, true);
	if (err)
		return err;
	qp->sq.dbp = rnic_ib_dbp_get(ibd, rnic_ib_qp_slots(qp));
	if (IS_ERR(qp->sq.dbp)) {
		err = PTR_ERR(qp->sq.dbp);
		qp->sq.dbp = NULL;
		return err;
	}
	c->sq_addr = cpu_to_le64(qp->sq.dma);
	c->rq_addr = cpu_to_le64(qp->rq.dma);
	return 0;
}

int rnic_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_ucontext *uctx = rnic_ib_uctx(udata);
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_ib_pd *pd = to_rpd(ibqp->pd);
	struct rnic_ib_pbl sq_pbl = {}, rq_pbl = {};
	struct rnic_ucreate_qp_resp resp = {};
	struct rnic_aq_create_qp c = {};
	struct rnic_ucreate_qp ureq = {};
	u32 sq_depth = 0, rq_depth = 0, qpn;
	u8 sqe_log2 = 0, rqe_log2 = 0;
	union rnic_aq_resp r;
	bool bad_gsi;
	int type, err;

	if (udata && !uctx)
		return -EOPNOTSUPP;
	type = rnic_ib_qp_type(init->qp_type);
	if (type < 0 || init->create_flags)
		return -EOPNOTSUPP;
	/* a user context has RC and UD QPs, never GSI */
	if (uctx && init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UD)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_GSI && !pd->privileged)
		return -EPERM;
	qp->privileged = pd->privileged;
	if (uctx)
		err = rnic_ib_uqp_size(ibd, udata, init, &ureq);
	else
		err = rnic_ib_qp_size(ibd, qp, init, &sq_depth, &rq_depth,
				      &sqe_log2, &rqe_log2);
	if (err)
		return err;

	rnic_ib_qp_init_sync(qp);
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->srq = init->srq ? to_rsrq(init->srq) : NULL;
	qp->cap = init->cap;
	qp->send_cqn = to_rcq(init->send_cq)->cqn;
	qp->recv_cqn = to_rcq(init->recv_cq)->cqn;
	qp->uctx = uctx;

	if (uctx)
		err = rnic_ib_uqp_alloc(ibd, qp, &ureq, &c, &sq_pbl, &rq_pbl);
	else
		err = rnic_ib_kqp_alloc(ibd, qp, sq_depth, sqe_log2, rq_depth,
					rqe_log2, &c);
	if (!err && init->qp_type == IB_QPT_RC) {
		qp->path = dma_alloc_coherent(rnic_ib_dma(ibd),
					      sizeof(*qp->path),
					      &qp->path_dma, GFP_KERNEL);
		if (!qp->path)
			err = -ENOMEM;
	}
	if (err)
		goto err_free;
	qp->rq.dbp = qp->sq.dbp;

	c.hdr.opcode = RNIC_AQ_CREATE_QP;
	c.type = type;
	c.pdn = cpu_to_le32(pd->pdn);
	c.send_cqn = cpu_to_le32(qp->send_cqn);
	c.recv_cqn = cpu_to_le32(qp->recv_cqn);
	c.db_page = cpu_to_le32(qp->sq.dbp->id);
	c.sq_log2_depth = qp->sq.log2_depth;
	c.sqe_log2 = qp->sq.wqe_log2;
	if (qp->srq) {
		c.flags |= RNIC_QP_F_SRQ;
		c.srqn = cpu_to_le32(qp->srq->srqn);
		c.rq_addr = 0;
	} else {
		c.rq_log2_depth = qp->rq.log2_depth;
		c.rqe_log2 = qp->rq.wqe_log2;
	}
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	/* the device copied the page lists, or took nothing */
	rnic_ib_pbl_free(ibd, &sq_pbl, err);
	rnic_ib_pbl_free(ibd, &rq_pbl, err);
	if (err) {
		/* unanswered, it may have created the QP: kept until the reset */
		rnic_ib_qp_free_mem(ibd, qp, rnic_dma_may_free(err, false, false));
		return err;
	}
	qpn = le32_to_cpu(r.create_qp.qpn);
	qp->sq.db_off = le16_to_cpu(r.create_qp.sq_db_off);
	qp->rq.db_off = le16_to_cpu(r.create_qp.rq_db_off);
	/* QP1 is the GSI QP, and only it */
	bad_gsi = qpn == RNIC_GSI_QPN;
	if (init->qp_type == IB_QPT_GSI)
		bad_gsi = !bad_gsi;
	if ((qpn & ~RNIC_BTH_QPN) || !qpn || bad_gsi ||
	    !rnic_ib_db_off_ok(qp->sq.db_off) ||
	    (!qp->srq && !rnic_ib_db_off_ok(qp->rq.db_off))) {
		ibdev_err(&ibd->ibdev, "CREATE_QP returned QPN %#x, doorbells %#x/%#x: not a valid answer\n",
			  qpn, qp->sq.db_off, qp->rq.db_off);
		err = -EPROTO;
		goto err_destroy;
	}
	ibqp->qp_num = qpn;
	if (uctx) {
		resp.db_key = rnic_ib_udbp_key(uctx, qp->sq.dbp);
		resp.qpn = qpn;
		resp.sq_db_off = qp->sq.db_off;
		resp.rq_db_off = qp->srq ? RNIC_DB_NONE : qp->rq.db_off;
		err = rnic_ib_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy;
	}
	err = xa_insert_irq(&ibd->qp_xa, qpn, qp, GFP_KERNEL);
	if (err) {
		ibdev_err(&ibd->ibdev, "device returned QPN %u, already in use\n",
			  qpn);
		err = -EPROTO;
		goto err_destroy;
	}
	return 0;

err_destroy:
	rnic_ib_qp_free_mem(ibd, qp,
			    !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_QP, qpn));
	return err;
err_free:
	rnic_ib_pbl_free(ibd, &sq_pbl, 0);
	rnic_ib_pbl_free(ibd, &rq_pbl, 0);
	rnic_ib_qp_free_mem(ibd, qp, true);
	return err;
}

/* ------------------------------------------------------------------------
 * Modify, query, destroy
 */

/* The RC path's header template into qp->path, from the ULP's address */
static int rnic_ib_build_path(struct rnic_ib_qp *qp,
			      const struct ib_qp_attr *attr, int mask)
{
	const struct ib_gid_attr *sgid = attr->ah_attr.grh.sgid_attr;
	struct rnic_ib_tmpl_in in;
	u16 vlan_id;
	u8 smac[ETH_ALEN];
	u32 dqpn = (mask & IB_QP_DEST_QPN) ? attr->dest_qp_num : qp->dest_qpn;
	int err;

	if (!qp->path || !sgid)
		return -EINVAL;
	err = rdma_read_gid_l2_fields(sgid, &vlan_id, smac);
	if (err)
		return err;
	err = rnic_ib_tmpl_in_from_ah(&in, &attr->ah_attr, smac, vlan_id,
				      rnic_params.pfc_prio,
				      rnic_params.roce_udp_port,
				      qp->ibqp.qp_num, dqpn);
	if (!err)
		err = rnic_ib_tmpl_build(qp->path, &in);
	return err;
}

/* Drop the CQEs @qp left in @cq when it went to RESET or was destroyed */
static void rnic_ib_cq_scrub(struct rnic_ib_cq *cq, struct rnic_ib_qp *qp)
{
	struct rnic_ib_srq *srq = qp->srq;
	u32 qpn = qp->ibqp.qp_num;
	unsigned long flags;
	unsigned int n;

	/* a user CQ's ring is the process's, which drops such CQEs itself */
	if (cq->uctx)
		return;
	/* poll_cq's order: the CQ, then the SRQ */
	spin_lock_irqsave(&cq->lock, flags);
	if (srq) {
		spin_lock(&srq->lock);
		n = rnic_ib_cqe_scrub(cq->ring, cq->log2_depth, cq->ci, qpn,
				      srq->busy, BIT(srq->log2_depth));
		spin_unlock(&srq->lock);
	} else {
		n = rnic_ib_cqe_scrub(cq->ring, cq->log2_depth, cq->ci, qpn,
				      NULL, 0);
	}
	cq->scrubbed += n;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * What @qp completed and nobody polled must not outlive it: called once
 * the device has stopped writing CQEs for it (MODIFY_QP to RESET or
 * DESTROY_QP completed).
 */
static void rnic_ib_qp_scrub(struct rnic_ib_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;

	rnic_ib_cq_scrub(to_rcq(ibqp->send_cq), qp);
	if (ibqp->recv_cq != ibqp->send_cq)
		rnic_ib_cq_scrub(to_rcq(ibqp->recv_cq), qp);
}

/*
 * A QP in RESET has no WRs: the device zeroed its slots, its indices
 * restart at 0, and what it completed and nobody polled is dropped.
 */
static void rnic_ib_qp_reset_rings(struct rnic_ib_qp *qp)
{
	rnic_ib_qp_scrub(qp);
	spin_lock_irq(&qp->sq.lock);
	qp->sq.pi = 0;
	qp->sq.ci = 0;
	spin_unlock_irq(&qp->sq.lock);
	if (!qp->srq) {
		spin_lock_irq(&qp->rq.lock);
		qp->rq.pi = 0;
		qp->rq.ci = 0;
		spin_unlock_irq(&qp->rq.lock);
	}
}

/**
 * rnic_ib_qp_srq_dropped() - free the SRQ slot a QP's RESET or destroy
 *	dropped
 * @ibd: the device
 * @qp: the QP of the MODIFY_QP or DESTROY_QP that completed
 * @flags: its response's RNIC_AQ_QP_F_*
 * @slot: its response's srq_slot
 * @gone: the QP went to RESET or was destroyed
 *
 * A QP that leaves for RESET, or is destroyed, holding a WQE it took from
 * its SRQ drops that WQE with no CQE; the response is the only word that
 * the slot is free, and without it the slot would stay busy for good and
 * the SRQ would shrink. The slot is freed as its completion would free
 * it, so post_srq_recv may use it at once: the device is done with it
 * when the command completes. A report the QP cannot have made (no SRQ,
 * no RESET or destroy, a slot out of range or not given to the device) is
 * the device's fault: counted, logged and not acted on, so that a slot
 * the device may still read is never reposted.
 *
 * Context: process context; takes the SRQ's lock.
 * Return: 0 (nothing dropped, or the slot freed), or -EIO (refused).
 */
int rnic_ib_qp_srq_dropped(struct rnic_ibdev *ibd, struct rnic_ib_qp *qp,
			   u8 flags, u16 slot, bool gone)
{
	struct rnic_ib_srq *srq = qp->srq;
	unsigned long irqflags;
	int err = -EIO;

	if (!(flags & RNIC_AQ_QP_F_SRQ_DROPPED))
		return 0;
	/*
	 * A user SRQ's slots are the process's, given out in its library:
	 * modify_qp's response tells it (struct rnic_umodify_qp_resp), and
	 * only the range is the kernel's to check. After a destroy there is
	 * no one to tell: the provider resets such a QP first.
	 */
	if (srq && srq->uctx && gone) {
		if (slot < BIT(srq->log2_depth)) {
			qp->udropped = true;
			qp->udropped_slot = slot;
			err = 0;
		}
	} else if (srq && gone) {
		spin_lock_irqsave(&srq->lock, irqflags);
		err = rnic_ib_cqe_srq_check(slot, BIT(srq->log2_depth),
					    srq->busy);
		if (!err)
			clear_bit(slot, srq->busy);
		spin_unlock_irqrestore(&srq->lock, irqflags);
	}
	if (err) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_bad_srq_drops);
		ibdev_err_ratelimited(&ibd->ibdev, "QP %u: the device reported SRQ slot %u dropped, which the QP cannot have held; ignored. The device is faulty: unload and reload rnic to reset it\n",
				      qp->ibqp.qp_num, slot);
	}
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_qp_srq_dropped);

/* modify_qp with @qp->state_lock held */
static int rnic_ib_modify_qp_locked(struct rnic_ib_qp *qp,
				    struct ib_qp_attr *attr, int mask)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_qp_limits lim;
	struct rnic_aq_modify_qp cmd;
	enum ib_qp_state now;
	union rnic_aq_resp r;
	u64 path = 0;
	int err;

	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_AV) {
		err = rnic_ib_build_path(qp, attr, mask);
		if (err)
			goto out;
		path = qp->path_dma;
	}
	rnic_ib_qp_limits(ibd, qp, &lim);
	err = rnic_ib_modify_qp_cmd(&cmd, ibqp->qp_num, ibqp->qp_type,
				    READ_ONCE(qp->state), attr, mask, path,
				    &lim);
	if (err)
		goto out;
	err = rnic_ib_cmd(ibd, &cmd, sizeof(cmd), &r);
	if (err == -EINVAL && !rnic_ib_qp_state_to_ib(r.modify_qp.state, &now) &&
	    now != READ_ONCE(qp->state)) {
		/* the device moved the QP on its own: resync, tell the ULP */
		ibdev_dbg(&ibd->ibdev, "QP %u is in state %d, not %d\n",
			  ibqp->qp_num, now, qp->state);
		WRITE_ONCE(qp->state, now);
	}
	if (err)
		goto out;
	if (rnic_ib_qp_state_to_ib(r.modify_qp.state, &now)) {
		ibdev_err(&ibd->ibdev, "MODIFY_QP %u reported state %u\n",
			  ibqp->qp_num, r.modify_qp.state);
		err = -EPROTO;
		goto out;
	}
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_AV) {
		/* for query_qp, without a reference on the source GID */
		qp->ah_attr = attr->ah_attr;
		qp->ah_attr.grh.sgid_attr = NULL;
	}
	if (now == IB_QPS_RESET)
		rnic_ib_qp_reset_rings(qp);
	rnic_ib_qp_srq_dropped(ibd, qp, r.modify_qp.flags,
			       le16_to_cpu(r.modify_qp.srq_slot),
			       now == IB_QPS_RESET);
	WRITE_ONCE(qp->state, now);
out:
	return err;
}

/**
 * rnic_ib_modify_qp_fatal() - modify_qp once the device has failed
 * @qp: the QP, its state_lock held
 * @attr: the verbs attributes
 * @mask: IB_QP_* of @attr to apply
 * @last_wqe: set when an SRQ-attached QP entered ERR: the device will not
 *	raise the LAST_WQE_REACHED that ib_drain_qp() waits for, so the
 *	caller does, once it dropped the lock
 *
 * The device answers no command, and a move to ERR or RESET needs none:
 * in ERR poll_cq flushes the WRs; RESET drops them, as on the device.
 * That is what ib_drain_qp() and a ULP's teardown ask for; anything else
 * fails.
 *
 * Return: 0, -EINVAL for RESET to ERR (as the device), or -EIO.
 */
int rnic_ib_modify_qp_fatal(struct rnic_ib_qp *qp, const struct ib_qp_attr *attr,
			    int mask, bool *last_wqe)
{
	enum ib_qp_state cur = READ_ONCE(qp->state);

	*last_wqe = false;
	if (!(mask & IB_QP_STATE))
		return -EIO;
	switch (attr->qp_state) {
	case IB_QPS_ERR:
		/* as the device: a QP that never left RESET has nothing to flush */
		if (cur == IB_QPS_RESET)
			return -EINVAL;
		*last_wqe = qp->srq && cur != IB_QPS_ERR;
		WRITE_ONCE(qp->state, IB_QPS_ERR);
		return 0;
	case IB_QPS_RESET:
		rnic_ib_qp_reset_rings(qp);
		WRITE_ONCE(qp->state, IB_QPS_RESET);
		return 0;
	default:
		return -EIO;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_modify_qp_fatal);

/*
 * Either way, with @qp->state_lock held: the device's, or after a fatal
 * error the driver's, also when the device failed under the command.
 */
static int rnic_ib_modify_qp_state_locked(struct rnic_ib_qp *qp,
					  struct ib_qp_attr *attr, int mask,
					  bool *last_wqe)
{
	struct rnic_ibdev *ibd = to_ibdev(qp->ibqp.device);
	int err = -EIO;

	*last_wqe = false;
	if (!READ_ONCE(ibd->fatal))
		err = rnic_ib_modify_qp_locked(qp, attr, mask);
	if (err == -EIO && READ_ONCE(ibd->fatal))
		err = rnic_ib_modify_qp_fatal(qp, attr, mask, last_wqe);
	return err;
}

/* What the device would have raised; with no lock held, as the event work */
static void rnic_ib_qp_last_wqe(struct rnic_ib_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
		.element.qp = &qp->ibqp,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

int rnic_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata)
{
	struct rnic_umodify_qp_resp resp = {};
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	bool last_wqe;
	int err;

	/* no driver data in the request: what a newer provider adds must be 0 */
	if (udata) {
		err = rnic_ib_udata_in(udata, NULL, 0);
		if (err)
			return err;
	}
	mutex_lock(&qp->state_lock);
	qp->udropped = false;
	err = rnic_ib_modify_qp_state_locked(qp, attr, mask, &last_wqe);
	if (qp->udropped) {
		resp.flags = RNIC_UMODIFY_QP_F_SRQ_DROPPED;
		resp.srq_slot = qp->udropped_slot;
	}
	mutex_unlock(&qp->state_lock);
	if (last_wqe)
		rnic_ib_qp_last_wqe(qp);
	/*
	 * The plain command has no response: a process that uses it is not
	 * told, and the slot stays taken in its library until the SRQ goes.
	 */
	if (!err && udata && udata->outlen)
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
	return err;
}

int rnic_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	struct rnic_qp_query q;
	int err;

	mutex_lock(&qp->state_lock);
	err = rnic_ib_cmd_query(ibd, RNIC_AQ_QUERY_QP, ibqp->qp_num, 0, &q,
				sizeof(q));
	if (!err && rnic_ib_query_qp_attr(&q, ibqp->qp_type, attr)) {
		ibdev_err(&ibd->ibdev, "QUERY_QP %u: the device returned values out of range\n",
			  ibqp->qp_num);
		err = -EPROTO;
	}
	if (!err) {
		WRITE_ONCE(qp->state, attr->qp_state);
		if (ibqp->qp_type == IB_QPT_RC)
			attr->ah_attr = qp->ah_attr;
		attr->cap = qp->cap;
		init->cap = qp->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR :
						  IB_SIGNAL_REQ_WR;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
	}
	mutex_unlock(&qp->state_lock);
	return err;
}

int rnic_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibqp->device);
	struct rnic_ib_qp *qp = to_rqp(ibqp);
	union rnic_aq_resp r;
	bool destroyed;

	mutex_lock(&qp->state_lock);
	qp->destroying = true;
	mutex_unlock(&qp->state_lock);
	destroyed = !rnic_ib_cmd_destroy_resp(ibd, RNIC_AQ_DESTROY_QP,
					      ibqp->qp_num, &r);
	/* a WQE taken from the SRQ and lost with the QP: its slot is free */
	if (destroyed)
		rnic_ib_qp_srq_dropped(ibd, qp, r.destroy_qp.flags,
				       le16_to_cpu(r.destroy_qp.srq_slot), true);
	/*
	 * Before the erase: a poller that finds the QPN unknown then has a
	 * CQE the device wrote after DESTROY_QP, which is its error.
	 */
	rnic_ib_qp_scrub(qp);
	xa_erase_irq(&ibd->qp_xa, ibqp->qp_num);
	/* event handlers that found the QP are done with it */
	if (!refcount_dec_and_test(&qp->ref))
		wait_for_completion(&qp->gone);
	/*
	 * So are pollers: they look QPs up under RCU, and not only their
	 * own CQ's pollers: a bad CQE on any CQ may name this QPN, and its
	 * poller reads the QP to find it belongs elsewhere.
	 */
	synchronize_rcu();
	/* nothing can find the QP to schedule it again */
	cancel_work_sync(&qp->err_work);
	rnic_ib_qp_free_mem(ibd, qp, destroyed);
	mutex_destroy(&qp->state_lock);
	return 0;
}
