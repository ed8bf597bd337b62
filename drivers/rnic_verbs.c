// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: the verbs layer of the datapath.
 *
 * CQs, AHs, SRQs and QPs are software objects: the device moves frames,
 * the driver runs the IB transport (rnic_roce.c, rnic_ud.c, rnic_rc_*.c).
 * This file creates and checks the objects, runs the QP state machine
 * (IBA 10.3) and turns work requests into completions when they are
 * flushed; rnic_post.c checks and queues them. rnic_verbs.h is the
 * contract with the transport.
 *
 * Contexts: post_send/post_recv and poll_cq may be called from any
 * context but hard IRQ; the transport runs in NAPI, timers and work. So
 * every spinlock here is taken irqsave, and QP state, written by modify_qp
 * (under state_lock) or by rnic_qp_error(), is changed only with sq_lock
 * and rq_lock held, so that a poster holding either sees it settled.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_addr.h>

#include "rnic.h"
#include "rnic_ib.h"
#include "rnic_verbs.h"
#include "rnic_verbs_int.h"

/* QPNs are 24 bits; 0 and 1 are the special QPs (1: GSI, IBA 3.5.5). */
#define RNIC_QPN_GSI		1
#define RNIC_QPN_FIRST		2

/* modify_qp attributes rnic implements (no APM, no resize, no rate limit) */
#define RNIC_QP_ATTR_SUPPORTED	(IB_QP_STATE | IB_QP_CUR_STATE |	\
				 IB_QP_EN_SQD_ASYNC_NOTIFY |		\
				 IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |	\
				 IB_QP_PORT | IB_QP_QKEY | IB_QP_AV |	\
				 IB_QP_PATH_MTU | IB_QP_TIMEOUT |	\
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |	\
				 IB_QP_RQ_PSN | IB_QP_MAX_QP_RD_ATOMIC |	\
				 IB_QP_PATH_MIG_STATE |			\
				 IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |	\
				 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN)

/* The IB MTU the port carries now (query_port's active_mtu). */
enum ib_mtu rnic_port_mtu(struct rnic_dev *rdev)
{
	enum ib_mtu mtu = iboe_get_mtu(READ_ONCE(rdev->netdev->mtu));

	return mtu ? mtu : IB_MTU_256;
}

/* ------------------------------------------------------------------------
 * Pure helpers (KUnit: kunit/rnic_verbs_kunit.c)
 */

/**
 * rnic_cq_ring_size() - ring entries for a CQ of @cqe completions
 * @cqe: completions the ULP asked room for, 1 .. RNIC_IB_MAX_CQE
 *
 * A power of two strictly larger than @cqe, so the free-running indices
 * wrap cleanly; the CQ then reports (and holds) size - 1 completions.
 *
 * Return: the size, or 0 when @cqe is out of range.
 */
VISIBLE_IF_KUNIT u32 rnic_cq_ring_size(int cqe)
{
	if (cqe < 1 || cqe > RNIC_IB_MAX_CQE)
		return 0;
	return roundup_pow_of_two((u32)cqe + 1);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_cq_ring_size);

/**
 * rnic_wq_geometry() - size a work queue
 * @wq: gets size, stride, max_sge and max_inline
 * @max_wr: WRs the ULP wants outstanding
 * @max_sge: SGEs per WR
 * @max_inline: inline bytes per WR (send queues; 0 for receive queues)
 * @base: sizeof the WQE struct the entries start with
 *
 * Entries are a power of two (indices wrap by masking), each the WQE
 * followed by its SGE array and inline buffer, 8-byte aligned.
 *
 * Return: 0, or -EINVAL when a request exceeds the device's limits.
 */
VISIBLE_IF_KUNIT int rnic_wq_geometry(struct rnic_wq *wq, u32 max_wr,
				      u32 max_sge, u32 max_inline, size_t base)
{
	if (max_wr > RNIC_IB_MAX_QP_WR || max_sge > RNIC_IB_MAX_SGE ||
	    max_inline > RNIC_IB_MAX_INLINE)
		return -EINVAL;
	wq->size = roundup_pow_of_two(max(max_wr, 1U));
	wq->max_sge = max_sge;
	wq->max_inline = ALIGN(max_inline, 8);
	wq->stride = ALIGN(base + max_sge * sizeof(struct rnic_wqe_sge), 8) +
		     wq->max_inline;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_wq_geometry);

static int rnic_check_ah_attr(const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(ah) != RNIC_IB_PORT ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    rdma_ah_get_sl(ah) > 15)
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (grh->sgid_index >= RNIC_IB_GID_TBL_LEN ||
	    grh->flow_label > 0xfffff)
		return -EINVAL;
	return 0;
}

/**
 * rnic_qp_check_attr() - check a modify_qp request before applying any of it
 * @type: the QP's type
 * @cur: the state the QP is in
 * @new: the state asked for
 * @attr: the attributes
 * @mask: IB_QP_* present in @attr
 * @port_mtu: the port's active MTU
 *
 * ib_modify_qp_is_ok() knows which attributes each transition requires
 * and allows (IBA table 91); the ranges are checked here: values the
 * packet fields cannot carry, and resources beyond the device's limits.
 *
 * Return: 0, -EINVAL for a bad request, -EOPNOTSUPP for an attribute rnic
 * does not implement (alternate paths, QP resize, rate limits).
 */
VISIBLE_IF_KUNIT int rnic_qp_check_attr(enum ib_qp_type type,
					enum ib_qp_state cur,
					enum ib_qp_state new,
					const struct ib_qp_attr *attr, int mask,
					enum ib_mtu port_mtu)
{
	if (mask & ~RNIC_QP_ATTR_SUPPORTED)
		return -EOPNOTSUPP;
	if (!ib_modify_qp_is_ok(cur, new, type, mask))
		return -EINVAL;

	if ((mask & IB_QP_PORT) && attr->port_num != RNIC_IB_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= RNIC_IB_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~RNIC_QP_ACCESS_ALL))
		return -EINVAL;
	if ((mask & IB_QP_AV) && rnic_check_ah_attr(&attr->ah_attr))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
	     attr->path_mtu > port_mtu))
		return -EINVAL;
	/* 5-bit fields of the CM and of the RNR NAK (IBA 9.7.5.2.8) */
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	/* 3-bit counters; rnr_retry 7 means "retry for ever" */
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > RNIC_IB_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > RNIC_IB_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > RNIC_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > RNIC_PSN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > RNIC_PSN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state != IB_MIG_MIGRATED)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_qp_check_attr);

/**
 * rnic_cq_poll_ring() - take up to @num completions off a CQ's ring
 * @cq: the CQ
 * @num: room in @wc
 * @wc: where they go, oldest first
 *
 * Return: completions taken.
 */
VISIBLE_IF_KUNIT int rnic_cq_poll_ring(struct rnic_ib_cq *cq, int num,
				       struct ib_wc *wc)
{
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->head != cq->tail) {
		wc[n++] = cq->queue[cq->head & (cq->size - 1)];
		cq->head++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_cq_poll_ring);

/* ------------------------------------------------------------------------
 * Completion queues
 */

static void rnic_cq_comp_work(struct work_struct *work)
{
	struct rnic_ib_cq *cq = container_of(work, struct rnic_ib_cq,
					     comp_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * rnic_cq_init_ring() - set up an empty, unarmed CQ ring
 * @cq: the CQ
 * @queue: (@size) entries
 * @size: from rnic_cq_ring_size()
 */
VISIBLE_IF_KUNIT void rnic_cq_init_ring(struct rnic_ib_cq *cq,
					struct ib_wc *queue, u32 size)
{
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->comp_work, rnic_cq_comp_work);
	cq->queue = queue;
	cq->size = size;
	cq->head = 0;
	cq->tail = 0;
	cq->notify = 0;
	cq->overflowed = false;
	cq->ibcq.cqe = size - 1;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_cq_init_ring);

/**
 * rnic_cq_post() - add a completion to a CQ
 * @cq: the CQ
 * @wc: the completion
 * @solicited: it completes a message with the solicited event bit
 *
 * An armed CQ's handler runs from a work item, never under the caller's
 * locks: the transport posts with QP locks held, and a ULP handler may
 * poll and post again at once. IB_CQ_SOLICITED fires on solicited and on
 * unsuccessful completions (IBA 11.4.2.2).
 *
 * Context: any; takes cq->lock, last in the lock order.
 * Return: 0, or -EOVERFLOW when the CQ is full or already overflowed; the
 * first overflow raises IB_EVENT_CQ_ERR and the CQ takes no more.
 */
int rnic_cq_post(struct rnic_ib_cq *cq, const struct ib_wc *wc, bool solicited)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};
	unsigned long flags;
	bool notify, overflow = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -EOVERFLOW;
	}
	if (cq->tail - cq->head >= (u32)cq->ibcq.cqe) {
		cq->overflowed = true;
		overflow = true;
		notify = false;
	} else {
		cq->queue[cq->tail & (cq->size - 1)] = *wc;
		cq->tail++;
		notify = cq->notify == IB_CQ_NEXT_COMP ||
			 (cq->notify == IB_CQ_SOLICITED &&
			  (solicited || wc->status != IB_WC_SUCCESS));
		if (notify)
			cq->notify = 0;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow) {
		if (cq->ibcq.event_handler)
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		return -EOVERFLOW;
	}
	if (notify)
		queue_work(system_highpri_wq, &cq->comp_work);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_cq_post);

int rnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs)
{
	struct rnic_ibdev *rib = to_ribdev(ibcq->device);
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	struct ib_wc *queue;
	u32 size;

	if (attrs || attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	size = rnic_cq_ring_size(attr->cqe);
	if (!size)
		return -EINVAL;
	if (atomic_inc_return(&rib->num_cq) > RNIC_IB_MAX_CQ) {
		atomic_dec(&rib->num_cq);
		return -ENOMEM;
	}

	queue = kvcalloc(size, sizeof(*queue), GFP_KERNEL);
	if (!queue) {
		atomic_dec(&rib->num_cq);
		return -ENOMEM;
	}
	rnic_cq_init_ring(cq, queue, size);
	return 0;
}

int rnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rnic_ib_cq *cq = to_rcq(ibcq);

	/* ib_core destroys a CQ only when no QP uses it: nothing posts */
	cancel_work_sync(&cq->comp_work);
	kvfree(cq->queue);
	atomic_dec(&to_ribdev(ibcq->device)->num_cq);
	return 0;
}

/**
 * rnic_resize_cq() - change how many completions a CQ holds
 * @ibcq: the CQ
 * @cqe: the new size asked for
 * @udata: NULL
 *
 * The completions waiting move to the new ring in order; a size too
 * small for them is refused.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	struct ib_wc *queue, *old;
	unsigned long flags;
	u32 size, n, i;

	if (udata)
		return -EOPNOTSUPP;
	size = rnic_cq_ring_size(cqe);
	if (!size)
		return -EINVAL;
	queue = kvcalloc(size, sizeof(*queue), GFP_KERNEL);
	if (!queue)
		return -ENOMEM;

	spin_lock_irqsave(&cq->lock, flags);
	n = cq->tail - cq->head;
	if (n > size - 1) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(queue);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		queue[i] = cq->queue[(cq->head + i) & (cq->size - 1)];
	old = cq->queue;
	cq->queue = queue;
	cq->size = size;
	cq->head = 0;
	cq->tail = n;
	ibcq->cqe = size - 1;
	spin_unlock_irqrestore(&cq->lock, flags);
	kvfree(old);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_resize_cq);

int rnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return rnic_cq_poll_ring(to_rcq(ibcq), num_entries, wc);
}

int rnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* an armed "next completion" is not narrowed to "solicited" */
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_SOLICITED;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->head != cq->tail)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_req_notify_cq);

/* ------------------------------------------------------------------------
 * Address handles
 */

int rnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct rnic_ibdev *rib = to_ribdev(ibah->device);
	struct rnic_ah *ah = to_rah(ibah);
	int err;

	if (udata)
		return -EOPNOTSUPP;
	err = rnic_check_ah_attr(init_attr->ah_attr);
	if (err)
		return err;
	if (atomic_inc_return(&rib->num_ah) > RNIC_IB_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}
	/* may be atomic (no RDMA_CREATE_AH_SLEEPABLE): the call must not sleep */
	err = rnic_av_from_attr(rib->rdev, init_attr->ah_attr, &ah->av);
	if (err)
		goto err_count;
	return 0;

err_count:
	atomic_dec(&rib->num_ah);
	return err;
}

int rnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_ribdev(ibah->device)->num_ah);
	return 0;
}

/* ------------------------------------------------------------------------
 * Work queues
 */

static int rnic_sq_alloc(struct rnic_wq *wq, u32 max_wr, u32 max_sge,
			 u32 max_inline)
{
	size_t base = sizeof(struct rnic_send_wqe);
	u32 i;
	int err;

	err = rnic_wq_geometry(wq, max_wr, max_sge, max_inline, base);
	if (err)
		return err;
	wq->wqe = vcalloc(wq->size, wq->stride);
	if (!wq->wqe)
		return -ENOMEM;
	/* the SGE array and inline buffer of an entry never move */
	for (i = 0; i < wq->size; i++) {
		struct rnic_send_wqe *wqe = wq->wqe + (size_t)i * wq->stride;
		void *sge = (void *)wqe + base;

		wqe->sge = sge;
		wqe->inline_data = wq->max_inline ?
			sge + ALIGN(max_sge * sizeof(*wqe->sge), 8) : NULL;
	}
	return 0;
}

static int rnic_rq_alloc(struct rnic_wq *wq, u32 max_wr, u32 max_sge)
{
	size_t base = sizeof(struct rnic_recv_wqe);
	u32 i;
	int err;

	err = rnic_wq_geometry(wq, max_wr, max_sge, 0, base);
	if (err)
		return err;
	wq->wqe = vcalloc(wq->size, wq->stride);
	if (!wq->wqe)
		return -ENOMEM;
	for (i = 0; i < wq->size; i++) {
		struct rnic_recv_wqe *wqe = rnic_rq_wqe(wq, i);

		wqe->sge = (void *)wqe + base;
	}
	return 0;
}

static void rnic_wq_free(struct rnic_wq *wq)
{
	vfree(wq->wqe);
	wq->wqe = NULL;
}

/* ------------------------------------------------------------------------
 * Shared receive queues
 */

static void rnic_srq_event(struct rnic_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.event = type,
		.element.srq = &srq->ibsrq,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

int rnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct rnic_ibdev *rib = to_ribdev(ibsrq->device);
	struct rnic_srq *srq = to_rsrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (atomic_inc_return(&rib->num_srq) > RNIC_IB_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}
	err = rnic_rq_alloc(&srq->rq, attr->max_wr, attr->max_sge);
	if (err)
		goto err_count;
	spin_lock_init(&srq->lock);
	srq->rq.head = 0;
	srq->rq.tail = 0;
	srq->limit = attr->srq_limit;
	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	return 0;

err_count:
	atomic_dec(&rib->num_srq);
	return err;
}

int rnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rnic_srq *srq = to_rsrq(ibsrq);
	unsigned long flags;

	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;	/* no resizing */
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->rq.size)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int rnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rnic_srq *srq = to_rsrq(ibsrq);

	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int rnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rnic_srq *srq = to_rsrq(ibsrq);

	/* ib_core refuses while a QP still uses it */
	rnic_wq_free(&srq->rq);
	atomic_dec(&to_ribdev(ibsrq->device)->num_srq);
	return 0;
}

/**
 * rnic_rq_pop() - take the next receive WQE of a QP
 * @qp: the QP; its SRQ's queue if it has one
 * @out: gets the WQE; out->sge points at @sge_out
 * @sge_out: room for RNIC_IB_MAX_SGE entries
 *
 * Taking an SRQ below its armed limit raises IB_EVENT_SRQ_LIMIT_REACHED
 * once and disarms the limit (IBA 10.2.9.3).
 *
 * Context: any; takes rq_lock or the SRQ's lock.
 * Return: true if a WQE was taken.
 */
bool rnic_rq_pop(struct rnic_qp *qp, struct rnic_recv_wqe *out,
		 struct rnic_wqe_sge *sge_out)
{
	struct rnic_srq *srq = qp->srq;
	spinlock_t *lock = srq ? &srq->lock : &qp->rq_lock;
	struct rnic_wq *wq = srq ? &srq->rq : &qp->rq;
	struct rnic_recv_wqe *wqe;
	unsigned long flags;
	bool limit = false;

	spin_lock_irqsave(lock, flags);
	if (!wq->wqe || wq->head == wq->tail) {
		spin_unlock_irqrestore(lock, flags);
		return false;
	}
	wqe = rnic_rq_wqe(wq, wq->tail);
	out->wr_id = wqe->wr_id;
	out->num_sge = wqe->num_sge;
	out->length = wqe->length;
	memcpy(sge_out, wqe->sge, wqe->num_sge * sizeof(*sge_out));
	out->sge = sge_out;
	wq->tail++;
	if (srq && srq->limit && wq->head - wq->tail < srq->limit) {
		srq->limit = 0;
		limit = true;
	}
	spin_unlock_irqrestore(lock, flags);

	if (limit)
		rnic_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return true;
}

/* ------------------------------------------------------------------------
 * Queue pair references and events
 */

/**
 * rnic_qp_get() - find a QP by number and hold it
 * @rdev: the device
 * @qpn: the QP number (24 bits)
 *
 * Context: any.
 * Return: the QP with a reference, or NULL.
 */
struct rnic_qp *rnic_qp_get(struct rnic_dev *rdev, u32 qpn)
{
	struct rnic_ibdev *rib;
	struct rnic_qp *qp = NULL;
	unsigned long flags;

	rcu_read_lock();
	/* rnic_ib_unregister() clears it and waits for a grace period */
	rib = READ_ONCE(rdev->ibdev);
	if (rib) {
		xa_lock_irqsave(&rib->qp_xa, flags);
		qp = xa_load(&rib->qp_xa, qpn);
		if (qp && !refcount_inc_not_zero(&qp->ref))
			qp = NULL;
		xa_unlock_irqrestore(&rib->qp_xa, flags);
	}
	rcu_read_unlock();
	return qp;
}

/**
 * rnic_qp_put() - drop a reference rnic_qp_get() took
 * @qp: the QP
 */
void rnic_qp_put(struct rnic_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

struct rnic_qp_event {
	struct work_struct work;
	struct rnic_qp *qp;
	enum ib_event_type type;
};

static void rnic_qp_event_work(struct work_struct *work)
{
	struct rnic_qp_event *qe = container_of(work, struct rnic_qp_event,
						work);
	struct rnic_qp *qp = qe->qp;
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.event = qe->type,
		.element.qp = &qp->ibqp,
	};

	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	rnic_qp_put(qp);
	kfree(qe);
}

/*
 * QP events are delivered from a work item: ib_qp_init_attr promises the
 * handler workqueue context, and callers here may hold spinlocks. The
 * work holds a QP reference, so destroy_qp waits for it.
 */
static void rnic_qp_event(struct rnic_qp *qp, enum ib_event_type type)
{
	struct rnic_qp_event *qe;

	if (!qp->ibqp.event_handler)
		return;
	qe = kmalloc(sizeof(*qe), GFP_ATOMIC);
	if (!qe)
		return;
	if (!refcount_inc_not_zero(&qp->ref)) {
		kfree(qe);
		return;
	}
	INIT_WORK(&qe->work, rnic_qp_event_work);
	qe->qp = qp;
	qe->type = type;
	queue_work(system_wq, &qe->work);
}

/* ------------------------------------------------------------------------
 * Flushing
 */

static enum ib_wc_opcode rnic_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete every send WQE still queued, in order. Those the transport
 * had finished but could not report yet (an older one was pending) keep
 * their own status, so the WR that failed reports why; the others
 * complete with IB_WC_WR_FLUSH_ERR, signalled or not (IBA 10.8.3.3:
 * flushed WRs always complete). Caller holds sq_lock; the QP is in SQE
 * or ERR, so the transport no longer moves the queue.
 */
void rnic_flush_sq_locked(struct rnic_qp *qp)
{
	for (; qp->sq.tail != qp->sq.head; qp->sq.tail++) {
		struct rnic_send_wqe *wqe = rnic_sq_wqe(qp, qp->sq.tail);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = rnic_wc_opcode(wqe->opcode),
			.qp = &qp->ibqp,
		};

		if (wqe->completed) {
			wc.status = wqe->wc_status;
			wc.byte_len = wqe->length;
			if (wc.status == IB_WC_SUCCESS &&
			    !(wqe->send_flags & IB_SEND_SIGNALED))
				continue;
		}
		rnic_cq_post(qp->scq, &wc, false);
	}
}

void rnic_flush_rq(struct rnic_qp *qp)
{
	unsigned long flags;

	/* an SRQ's WQEs belong to the SRQ, not to this QP */
	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	while (qp->rq.tail != qp->rq.head) {
		struct rnic_recv_wqe *wqe = rnic_rq_wqe(&qp->rq, qp->rq.tail);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		rnic_cq_post(qp->rcq, &wc, false);
		qp->rq.tail++;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/* Change the state with both queue locks held (see the file comment). */
static enum ib_qp_state rnic_qp_set_state(struct rnic_qp *qp,
					  enum ib_qp_state new)
{
	enum ib_qp_state old;
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	spin_lock(&qp->rq_lock);
	old = qp->state;
	WRITE_ONCE(qp->state, new);
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return old;
}

static void rnic_qp_flush(struct rnic_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	rnic_flush_sq_locked(qp);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	rnic_flush_rq(qp);
}

/**
 * rnic_qp_error() - move a QP to the error state from the transport
 * @qp: the QP
 * @event: the affiliated asynchronous event for the ULP, e.g.
 *	IB_EVENT_QP_FATAL, IB_EVENT_QP_REQ_ERR, IB_EVENT_QP_ACCESS_ERR
 *
 * The transport completes the WQE that failed with its own status (and
 * advances sq.tail) first; every WQE still outstanding is then flushed
 * with IB_WC_WR_FLUSH_ERR in order, receive WQEs too (a receive the
 * responder had already taken with rnic_rq_pop() is the responder's to
 * complete). A QP with an SRQ also reports IB_EVENT_QP_LAST_WQE_REACHED,
 * which ib_drain_qp() waits for.
 *
 * Context: any, with none of the QP's locks held.
 */
void rnic_qp_error(struct rnic_qp *qp, enum ib_event_type event)
{
	enum ib_qp_state old = rnic_qp_set_state(qp, IB_QPS_ERR);

	rnic_qp_flush(qp);
	if (old == IB_QPS_ERR)
		return;
	rnic_qp_event(qp, event);
	if (qp->srq)
		rnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* ------------------------------------------------------------------------
 * Queue pairs
 */

static int rnic_check_qp_init(struct rnic_ibdev *rib,
			      const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (init->port_num != RNIC_IB_PORT || init->srq)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl || init->source_qpn)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    init->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (cap->max_send_wr > RNIC_IB_MAX_QP_WR ||
	    cap->max_send_sge > RNIC_IB_MAX_SGE ||
	    cap->max_inline_data > RNIC_IB_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > RNIC_IB_MAX_QP_WR ||
			   cap->max_recv_sge > RNIC_IB_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* Reserve a QPN; the QP is published (findable) only once it is set up. */
static int rnic_qpn_reserve(struct rnic_ibdev *rib, enum ib_qp_type type,
			    u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = RNIC_QPN_GSI;
		return xa_insert_irq(&rib->qp_xa, RNIC_QPN_GSI, NULL,
				     GFP_KERNEL);
	}
	err = xa_alloc_cyclic_irq(&rib->qp_xa, qpn, NULL,
				  XA_LIMIT(RNIC_QPN_FIRST, RNIC_QPN_MAX),
				  &rib->next_qpn, GFP_KERNEL);
	return err < 0 ? err : 0;
}

int rnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct rnic_ibdev *rib = to_ribdev(ibqp->device);
	struct rnic_qp *qp = to_rqp(ibqp);
	enum ib_mtu mtu;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	err = rnic_check_qp_init(rib, init);
	if (err)
		return err;
	if (atomic_inc_return(&rib->num_qp) > RNIC_IB_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->rdev = rib->rdev;
	qp->type = init->qp_type;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->resp_lock);
	qp->state = IB_QPS_RESET;
	qp->scq = to_rcq(init->send_cq);
	qp->rcq = to_rcq(init->recv_cq);
	qp->srq = init->srq ? to_rsrq(init->srq) : NULL;
	qp->sq_sig_type = init->sq_sig_type;
	/* UD messages are one packet: the port's MTU bounds them */
	mtu = rnic_port_mtu(rib->rdev);
	qp->path_mtu = mtu;
	qp->mtu = ib_mtu_enum_to_int(mtu);

	err = rnic_sq_alloc(&qp->sq, init->cap.max_send_wr,
			    init->cap.max_send_sge, init->cap.max_inline_data);
	if (err)
		goto err_count;
	if (!qp->srq) {
		err = rnic_rq_alloc(&qp->rq, init->cap.max_recv_wr,
				    init->cap.max_recv_sge);
		if (err)
			goto err_sq;
	}

	err = rnic_qpn_reserve(rib, qp->type, &qp->qpn);
	if (err)
		goto err_rq;
	ibqp->qp_num = qp->qpn;

	err = rnic_qp_transport_init(qp);
	if (err)
		goto err_qpn;
	/* the slot is reserved: this allocates nothing and cannot fail */
	xa_store_irq(&rib->qp_xa, qp->qpn, qp, GFP_KERNEL);

	init->cap.max_send_wr = qp->sq.size;
	init->cap.max_send_sge = qp->sq.max_sge;
	init->cap.max_inline_data = qp->sq.max_inline;
	if (!qp->srq) {
		init->cap.max_recv_wr = qp->rq.size;
		init->cap.max_recv_sge = qp->rq.max_sge;
	}
	ibdev_dbg(ibqp->device, "QP %u created, type %d\n", qp->qpn, qp->type);
	return 0;

err_qpn:
	xa_erase_irq(&rib->qp_xa, qp->qpn);
err_rq:
	rnic_wq_free(&qp->rq);
err_sq:
	rnic_wq_free(&qp->sq);
err_count:
	atomic_dec(&rib->num_qp);
	return err;
}

/**
 * rnic_destroy_qp() - destroy a QP
 * @ibqp: the QP
 * @udata: NULL
 *
 * Order matters. The QPN is unpublished first, so RX finds it no more.
 * The state goes to ERR (without flushing: the ULP is done with its WRs,
 * and completions naming them now could reach freed contexts), and the
 * requester, which sends only in RTS/SQD and only under sq_lock, takes no
 * new TX references after that. Then the base reference is dropped and
 * what still holds the QP (RX in flight, frames on the TX ring, event
 * work) is waited for; only then is the transport torn down, so nothing
 * re-arms its timers or work behind it. The transport must therefore not
 * keep a QP reference that only rnic_qp_transport_destroy() would drop.
 *
 * Return: 0.
 */
int rnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rnic_ibdev *rib = to_ribdev(ibqp->device);
	struct rnic_qp *qp = to_rqp(ibqp);

	xa_erase_irq(&rib->qp_xa, qp->qpn);
	rnic_qp_set_state(qp, IB_QPS_ERR);
	rnic_qp_put(qp);
	wait_for_completion(&qp->released);

	rnic_qp_transport_destroy(qp);
	rnic_wq_free(&qp->rq);
	rnic_wq_free(&qp->sq);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&rib->num_qp);
	return 0;
}

/* Everything but the state; the request was checked, the AV resolved. */
static void rnic_qp_apply_attr(struct rnic_qp *qp, const struct ib_qp_attr *attr,
			       int mask, const struct rnic_av *av)
{
	unsigned long flags;

	/* the requester and completer read these under sq_lock */
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (mask & IB_QP_AV)
		qp->av = *av;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn;
	/* qp->udp_sport is the transport's, fixed when the QP enters RTR */
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

int rnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	enum ib_qp_state cur, new;
	struct rnic_av av;
	int err;

	if (udata)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	cur = READ_ONCE(qp->state);
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = rnic_qp_check_attr(qp->type, cur, new, attr, mask,
				 rnic_port_mtu(qp->rdev));
	if (err) {
		ibdev_dbg(ibqp->device,
			  "QP %u: modify %d -> %d mask %#x refused: %d\n",
			  qp->qpn, cur, new, mask, err);
		goto out;
	}
	if (mask & IB_QP_AV) {
		err = rnic_av_from_attr(qp->rdev, &attr->ah_attr, &av);
		if (err)
			goto out;
	}

	rnic_qp_apply_attr(qp, attr, mask, &av);
	if (new == cur)
		goto out;

	if (new == IB_QPS_RESET) {
		unsigned long flags;

		/* RESET empties both queues without completions (IBA 10.3.1) */
		spin_lock_irqsave(&qp->sq_lock, flags);
		spin_lock(&qp->rq_lock);
		WRITE_ONCE(qp->state, IB_QPS_RESET);
		qp->sq.head = 0;
		qp->sq.tail = 0;
		qp->rq.head = 0;
		qp->rq.tail = 0;
		qp->sq_draining = false;
		spin_unlock(&qp->rq_lock);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
	} else {
		rnic_qp_set_state(qp, new);
		qp->sq_draining = new == IB_QPS_SQD;
	}
	rnic_qp_state_changed(qp, cur, new);

	if (new == IB_QPS_ERR) {
		rnic_qp_flush(qp);
		if (qp->srq)
			rnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	ibdev_dbg(ibqp->device, "QP %u: state %d -> %d\n", qp->qpn, cur, new);
out:
	mutex_unlock(&qp->state_lock);
	return err;
}

static void rnic_av_to_attr(const struct rnic_av *av,
			    struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, RNIC_IB_PORT);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->tclass);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

int rnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct rnic_qp *qp = to_rqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->state_lock);
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access_flags;
	attr->cap.max_send_wr = qp->sq.size;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.size;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	if (qp->type == IB_QPT_RC)
		rnic_av_to_attr(&qp->av, &attr->ah_attr);
	attr->pkey_index = qp->pkey_index;
	attr->en_sqd_async_notify = 0;
	attr->sq_draining = qp->sq_draining;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->port_num = RNIC_IB_PORT;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	mutex_unlock(&qp->state_lock);

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->qp_type = qp->type;
	init->port_num = RNIC_IB_PORT;
	return 0;
}
