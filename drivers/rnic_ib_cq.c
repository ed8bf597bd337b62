// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: completion queues and completion event queues.
 *
 * A CQ is a ring the device writes 32-byte CQEs into (phase bit) and the
 * driver consumes in poll_cq. An armed CQ that gets a CQE writes an entry
 * naming it to its completion EQ, whose MSI-X vector then fires: the
 * interrupt handler consumes the EQ (consumer index written before the
 * CQ's handler runs, so before the CQ can be re-armed: that bounds what an
 * EQ ever holds), calls each CQ's comp_handler and re-arms the EQ.
 *
 * poll_cq checks every CQE before it uses it (hardware-rdma.rst, "Completion
 * entries"): the QPN must name a QP of this CQ, the WQE index one that is
 * outstanding, the fields must be consistent. A CQE whose QP is not this
 * CQ's is dropped and counted, and no QP is touched: the device got the
 * QPN or the CQ wrong, and the QP it named may be another ULP's. A CQE of
 * this CQ's QP that fails the other checks is dropped and counted, and its
 * QP is moved to ERR (from a work item: poll_cq may run in interrupt
 * context), whose flush then completes its WRs.
 *
 * A QP's CQEs that are still unpolled when it is reset or destroyed are
 * marked for poll_cq to drop (rnic_ib_qp.c), and so are a destroyed CQ's
 * entries in its EQ: an entry that then names no QP or no CQ, or one of
 * another CQ or EQ, is the device's error, and is reported as such.
 */
#include <kunit/visibility.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/log2.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rnic-abi.h>

#include "rnic_verbs.h"
#include "rnic_ib_wqe.h"

/* ------------------------------------------------------------------------
 * Completion EQs
 */

static void rnic_ib_eq_arm(struct rnic_ibdev *ibd, struct rnic_ib_eq *eq)
{
	eq->arm_seq++;
	rnic_doorbell(ibd->rdev, RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(eq->eqn)),
		      rnic_db_cq(eq->ci, true, eq->arm_seq), RNIC_DB_VEC_EVENT);
}

/*
 * The CQ an EQ entry names, if it is one of this EQ's. RCU keeps it alive
 * until destroy_cq's grace period: an entry of another EQ's CQ is read on
 * this EQ's interrupt, which destroy_cq does not fence.
 */
static void rnic_ib_cq_event(struct rnic_ibdev *ibd, struct rnic_ib_eq *eq,
			     u32 cqn)
{
	struct rnic_ib_cq *cq;

	rcu_read_lock();
	cq = xa_load(&ibd->cq_xa, cqn);
	if (!cq) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_eq_unknown_cq);
		ibdev_err_ratelimited(&ibd->ibdev, "EQ %u: dropped a completion event for CQ %u, which does not exist; the device is faulty, and a CQ may have lost its event: unload and reload rnic to reset it\n",
				      eq->eqn, cqn);
	} else if (cq->eq != eq) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_bad_eqes);
		ibdev_err_ratelimited(&ibd->ibdev, "EQ %u: dropped a completion event for CQ %u, which is EQ %u's; the device is faulty, and a CQ may have lost its event: unload and reload rnic to reset it\n",
				      eq->eqn, cqn, cq->eq->eqn);
	} else if (cq->ibcq.comp_handler) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
	rcu_read_unlock();
}

static irqreturn_t rnic_ib_eq_irq(int irq, void *data)
{
	struct rnic_ib_eq *eq = data;
	struct rnic_ibdev *ibd = eq->ibd;
	u32 mask = BIT(eq->log2_depth) - 1;
	struct rnic_eqe *eqe;
	u8 type;
	u32 cqn;

	for (;;) {
		eqe = &eq->va[eq->ci & mask];
		if (rnic_eqe_phase(eqe) != rnic_ring_phase(eq->ci,
							   eq->log2_depth))
			break;
		/* the rest of the entry only after its phase */
		dma_rmb();
		type = eqe->type;
		cqn = le32_to_cpu(eqe->data);
		eq->ci++;
		/*
		 * Consumed before the CQ can be re-armed by its handler. The
		 * EQ was armed at creation and after every interrupt: the
		 * write repeats that arm (rnic_ib_cq_db() says why).
		 */
		writel(rnic_db_cq(eq->ci, true, eq->arm_seq),
		       ibd->rdev->shm + RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(eq->eqn)));
		if (type != RNIC_EQE_COMPLETION) {
			rnic_ib_stat_inc(ibd, RNIC_IB_STAT_bad_eqes);
			continue;
		}
		/* a destroyed CQ's (rnic_ib_eq_forget_cq()) */
		if (cqn == RNIC_IB_EQE_CQN_SCRUBBED && eq->scrubbed) {
			eq->scrubbed--;
			continue;
		}
		rnic_ib_cq_event(ibd, eq, cqn);
	}
	if (!READ_ONCE(ibd->rdev->stopped))
		rnic_ib_eq_arm(ibd, eq);
	return IRQ_HANDLED;
}

static void rnic_ib_eq_destroy(struct rnic_ibdev *ibd, struct rnic_ib_eq *eq)
{
	size_t size = BIT(eq->log2_depth) * RNIC_EQE_SIZE;
	bool destroyed = true;

	if (eq->irq > 0)
		free_irq(eq->irq, eq);
	eq->irq = 0;
	if (eq->created)
		destroyed = !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_EQ,
						 eq->eqn);
	eq->created = false;
	rnic_ib_free_dma(ibd, destroyed, size, eq->va, eq->dma);
	eq->va = NULL;
}

static int rnic_ib_eq_create(struct rnic_ibdev *ibd, struct rnic_ib_eq *eq,
			     u16 vector)
{
	struct rnic_aq_create_eq c = {};
	union rnic_aq_resp r;
	size_t size;
	int err;

	eq->ibd = ibd;
	eq->vector = vector;
	eq->log2_depth = min_t(u8, RNIC_IB_EQ_LOG2, ibd->caps.max_eq_log2);
	size = BIT(eq->log2_depth) * RNIC_EQE_SIZE;
	eq->va = dma_alloc_coherent(rnic_ib_dma(ibd), size, &eq->dma,
				    GFP_KERNEL);
	if (!eq->va)
		return -ENOMEM;

	c.hdr.opcode = RNIC_AQ_CREATE_EQ;
	c.ring_addr = cpu_to_le64(eq->dma);
	c.log2_depth = eq->log2_depth;
	c.msix_vector = cpu_to_le16(vector);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err) {
		ibdev_err(&ibd->ibdev, "CREATE_EQ on vector %u failed: %d\n",
			  vector, err);
		/* unanswered, it may have created the EQ: kept until the reset */
		rnic_ib_free_dma(ibd, rnic_dma_may_free(err, false, false), size,
				 eq->va, eq->dma);
		eq->va = NULL;
		return err;
	}
	eq->eqn = le32_to_cpu(r.id.id);
	eq->created = true;
	if (!eq->eqn || eq->eqn > min_t(u32, ibd->caps.max_eq, RNIC_MAX_EQS)) {
		ibdev_err(&ibd->ibdev, "device returned EQN %u, outside 1..%u\n",
			  eq->eqn, ibd->caps.max_eq);
		return -EPROTO;
	}
	snprintf(eq->name, sizeof(eq->name), "rnic-comp%u@%s", eq->eqn,
		 pci_name(ibd->rdev->pdev));
	err = request_irq(rnic_irq_vector(ibd->rdev, vector), rnic_ib_eq_irq,
			  0, eq->name, eq);
	if (err) {
		ibdev_err(&ibd->ibdev, "cannot request completion interrupt %u: %d\n",
			  vector, err);
		return err;
	}
	eq->irq = rnic_irq_vector(ibd->rdev, vector);
	rnic_ib_eq_arm(ibd, eq);
	return 0;
}

/**
 * rnic_ib_eqs_create() - one completion EQ per spare MSI-X vector
 * @ibd: the device
 *
 * Vector 0 is the admin queue's and event queue 0's, vector 1 the
 * netdev's; every other vector the driver got carries one completion EQ,
 * and the ib_device has as many completion vectors.
 *
 * Return: 0 or a negative errno (nothing left created).
 */
int rnic_ib_eqs_create(struct rnic_ibdev *ibd)
{
	int n = ibd->rdev->num_irqs - RNIC_IB_VEC_COMP;
	int i, err;

	n = min_t(int, n, ibd->caps.max_eq);
	if (n < 1) {
		ibdev_err(&ibd->ibdev, "ABI 2.0 needs at least %u MSI-X vectors (got %d, the device has %u EQs)\n",
			  RNIC_IB_VEC_COMP + 1, ibd->rdev->num_irqs,
			  ibd->caps.max_eq);
		return -EINVAL;
	}
	ibd->eqs = kcalloc(n, sizeof(*ibd->eqs), GFP_KERNEL);
	if (!ibd->eqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ibd->num_eqs = i + 1;
		err = rnic_ib_eq_create(ibd, &ibd->eqs[i], RNIC_IB_VEC_COMP + i);
		if (err) {
			rnic_ib_eqs_destroy(ibd);
			return err;
		}
	}
	return 0;
}

/**
 * rnic_ib_eq_forget_cq() - make a CQ unknown to its EQ's interrupt
 * @ibd: the device
 * @cq: the CQ being destroyed
 *
 * With the EQ's interrupt kept from running (the handler is the EQ's only
 * consumer), the entries the device wrote for the CQ and the handler has
 * not consumed are marked for it to drop, and the CQ leaves the table:
 * after this, the CQ's completion handler is never called again, and an
 * EQ entry naming the CQN is the device's error. The EQ's other CQs only
 * see their events delayed.
 *
 * Context: process context; not from the EQ's interrupt.
 */
static void rnic_ib_eq_forget_cq(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq)
{
	struct rnic_ib_eq *eq = cq->eq;

	if (eq->irq > 0)
		disable_irq(eq->irq);
	eq->scrubbed += rnic_ib_eqe_scrub(eq->va, eq->log2_depth, eq->ci,
					  cq->cqn);
	xa_erase_irq(&ibd->cq_xa, cq->cqn);
	if (eq->irq > 0)
		enable_irq(eq->irq);
}

void rnic_ib_eqs_destroy(struct rnic_ibdev *ibd)
{
	unsigned int i;

	for (i = 0; i < ibd->num_eqs; i++)
		rnic_ib_eq_destroy(ibd, &ibd->eqs[i]);
	kfree(ibd->eqs);
	ibd->eqs = NULL;
	ibd->num_eqs = 0;
}

/* ------------------------------------------------------------------------
 * CQ lookup for events
 */

struct rnic_ib_cq *rnic_ib_cq_get(struct rnic_ibdev *ibd, u32 cqn)
{
	struct rnic_ib_cq *cq;

	xa_lock_irq(&ibd->cq_xa);
	cq = xa_load(&ibd->cq_xa, cqn);
	if (cq && !refcount_inc_not_zero(&cq->ref))
		cq = NULL;
	xa_unlock_irq(&ibd->cq_xa);
	return cq;
}

void rnic_ib_cq_put(struct rnic_ib_cq *cq)
{
	if (refcount_dec_and_test(&cq->ref))
		complete(&cq->gone);
}

/* ------------------------------------------------------------------------
 * Verbs
 */

/*
 * The ring and the doorbell slot of a CQ: @destroyed, or the device may
 * still write the ring and hold the slot, both kept until the reset.
 */
static void rnic_ib_cq_free_mem(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
				bool destroyed)
{
	if (destroyed && cq->dbp) {
		if (cq->uctx)
			rnic_ib_udbp_put(cq->uctx, cq->dbp, 1);
		else
			rnic_ib_dbp_put(ibd, cq->dbp, 1);
	}
	cq->dbp = NULL;
	rnic_ib_free_dma(ibd, destroyed, BIT(cq->log2_depth) * RNIC_RDMA_CQE_SIZE,
			 cq->ring, cq->dma);
	cq->ring = NULL;
	rnic_ib_umem_free(ibd, destroyed, cq->umem);
	cq->umem = NULL;
}

/* A kernel CQ's ring and slot, for CREATE_RDMA_CQ */
static int rnic_ib_kcq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
			     struct rnic_aq_create_rdma_cq *c)
{
	size_t size = BIT(cq->log2_depth) * RNIC_RDMA_CQE_SIZE;

	cq->ring = dma_alloc_coherent(rnic_ib_dma(ibd), size, &cq->dma,
				      GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	cq->dbp = rnic_ib_dbp_get(ibd, 1);
	if (IS_ERR(cq->dbp)) {
		dma_free_coherent(rnic_ib_dma(ibd), size, cq->ring, cq->dma);
		cq->ring = NULL;
		return PTR_ERR(cq->dbp);
	}
	c->ring_addr = cpu_to_le64(cq->dma);
	return 0;
}

/*
 * A user CQ's ring, pinned, as a page list in @pbl, and a slot in one of
 * its context's pages. Nothing is left on error.
 */
static int rnic_ib_ucq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
			     u64 ring_va, struct rnic_aq_create_rdma_cq *c,
			     struct rnic_ib_pbl *pbl)
{
	struct rnic_ib_udbp *p;
	int err;

	err = rnic_ib_uring_get(ibd, ring_va,
				rnic_ib_uring_bytes(cq->log2_depth,
						    ilog2(RNIC_RDMA_CQE_SIZE)),
				&cq->umem);
	if (err)
		return err;
	err = rnic_ib_pbl_build(ibd, cq->umem, PAGE_SIZE, pbl);
	if (err)
		goto err_release;
	p = rnic_ib_udbp_get(cq->uctx, 1);
	if (IS_ERR(p)) {
		err = PTR_ERR(p);
		rnic_ib_pbl_free(ibd, pbl, 0);
		goto err_release;
	}
	cq->dbp = &p->dbp;
	c->ring_addr = cpu_to_le64(pbl->dma);
	c->page_log2 = PAGE_SHIFT;
	c->flags = RNIC_RING_F_PBL;
	return 0;

err_release:
	ib_umem_release(cq->umem);
	cq->umem = NULL;
	return err;
}

/* A user context's request: its depth, checked, in @log2_depth */
static int rnic_ib_ucq_req(struct rnic_ibdev *ibd, struct ib_udata *udata,
			   const struct ib_cq_init_attr *attr,
			   struct rnic_ucreate_cq *req)
{
	int err;

	if (udata->outlen < sizeof(struct rnic_ucreate_cq_resp))
		return -EINVAL;
	err = rnic_ib_udata_in(udata, req, sizeof(*req));
	if (err)
		return err;
	if (memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		return -EINVAL;
	return rnic_ib_ucq_check(&ibd->caps, req->ring_va, req->log2_depth,
				 attr->cqe);
}

/**
 * rnic_ib_create_cq_udata() - create_cq, for the kernel or a user context
 * @ibcq: the CQ
 * @attr: its attributes
 * @udata: a user context's request (rnic_ucreate_cq), or NULL
 *
 * A user CQ's ring is the process's (rnic_ib_umem.c): the kernel never
 * reads it, and poll_cq refuses it; its completion events are delivered
 * as a kernel CQ's.
 *
 * Return: 0 or a negative errno; nothing is left of a CQ that failed.
 */
int rnic_ib_create_cq_udata(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibcq->device);
	struct rnic_ib_ucontext *uctx = rnic_ib_uctx(udata);
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	struct rnic_aq_create_rdma_cq c = {};
	struct rnic_ucreate_cq_resp resp = {};
	struct rnic_ucreate_cq ureq;
	struct rnic_ib_pbl pbl = {};
	union rnic_aq_resp r;
	u32 depth;
	int err;

	if (attr->flags || (udata && !uctx))
		return -EOPNOTSUPP;
	if (uctx) {
		err = rnic_ib_ucq_req(ibd, udata, attr, &ureq);
		if (err)
			return err;
		depth = BIT(ureq.log2_depth);
	} else {
		if (attr->cqe < 1 || attr->cqe >= BIT(ibd->caps.max_cq_log2))
			return -EINVAL;
		depth = roundup_pow_of_two(max_t(u32, attr->cqe, 4));
	}
	cq->log2_depth = ilog2(depth);
	cq->eq = &ibd->eqs[attr->comp_vector % ibd->num_eqs];
	spin_lock_init(&cq->lock);
	refcount_set(&cq->ref, 1);
	init_completion(&cq->gone);
	cq->uctx = uctx;
	/* the process arms in its page: after a fatal error it gets one event */
	cq->armed = !!uctx;
	if (uctx)
		err = rnic_ib_ucq_alloc(ibd, cq, ureq.ring_va, &c, &pbl);
	else
		err = rnic_ib_kcq_alloc(ibd, cq, &c);
	if (err)
		return err;

	c.hdr.opcode = RNIC_AQ_CREATE_RDMA_CQ;
	c.eqn = cpu_to_le32(cq->eq->eqn);
	c.db_page = cpu_to_le32(cq->dbp->id);
	c.log2_depth = cq->log2_depth;
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	/* the device copied the page list, or took nothing */
	if (pbl.va)
		rnic_ib_pbl_free(ibd, &pbl, err);
	if (err) {
		/* unanswered, it may have created the CQ: kept until the reset */
		rnic_ib_cq_free_mem(ibd, cq, rnic_dma_may_free(err, false, false));
		return err;
	}
	cq->cqn = le32_to_cpu(r.create_cq.cqn);
	cq->db_off = le16_to_cpu(r.create_cq.db_off);
	/* CQNs are 24 bits: the value above them marks scrubbed EQ entries */
	if (cq->cqn & ~RNIC_BTH_QPN) {
		ibdev_err(&ibd->ibdev, "device returned CQN %#x, wider than 24 bits\n",
			  cq->cqn);
		err = -EPROTO;
		goto err_destroy;
	}
	if (!rnic_ib_db_off_ok(cq->db_off)) {
		ibdev_err(&ibd->ibdev, "CQ %u: device placed its doorbell at %#x, outside the slots\n",
			  cq->cqn, cq->db_off);
		err = -EPROTO;
		goto err_destroy;
	}
	if (uctx) {
		resp.db_key = rnic_ib_udbp_key(uctx, cq->dbp);
		resp.cqn = cq->cqn;
		resp.db_off = cq->db_off;
		err = rnic_ib_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy;
	}
	err = xa_insert_irq(&ibd->cq_xa, cq->cqn, cq, GFP_KERNEL);
	if (err) {
		/* a CQN in use: the device broke the cyclic id rule */
		ibdev_err(&ibd->ibdev, "device returned CQN %u, already in use\n",
			  cq->cqn);
		err = -EPROTO;
		goto err_destroy;
	}
	/* a user CQ of depth n holds n - 1 CQEs (rnic-abi.h) */
	ibcq->cqe = uctx ? depth - 1 : depth;
	return 0;

err_destroy:
	rnic_ib_cq_free_mem(ibd, cq,
			    !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_RDMA_CQ,
						 cq->cqn));
	return err;
}

/* ib_device_ops.create_cq since 6.11: the udata is the bundle's */
int rnic_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs)
{
	return rnic_ib_create_cq_udata(ibcq, attr,
				       attrs ? &attrs->driver_udata : NULL);
}

int rnic_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibcq->device);
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	bool destroyed;

	destroyed = !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_RDMA_CQ, cq->cqn);
	/* the device writes no entry for the CQ after DESTROY_RDMA_CQ */
	rnic_ib_eq_forget_cq(ibd, cq);
	/*
	 * Other EQs' interrupt handlers that found the CQ before the erase
	 * are done: they look CQs up under RCU, and a faulty entry naming
	 * this CQN may come on any completion EQ, not only the CQ's own.
	 */
	synchronize_rcu();
	if (!refcount_dec_and_test(&cq->ref))
		wait_for_completion(&cq->gone);
	rnic_ib_cq_free_mem(ibd, cq, destroyed);
	return 0;
}

/**
 * rnic_ib_modify_cq() - ib_device_ops.modify_cq: completion event moderation
 * @ibcq: the CQ, the kernel's or a user context's
 * @count: hold an armed CQ's event until this many CQEs have arrived ...
 * @period_us: ... or this many microseconds have passed since the first;
 *	0/0 turns moderation off
 *
 * ib_core's DIM (use_cq_dim) calls this from a work item for the CQs of
 * ib_alloc_cq() as their load changes; ibv_modify_cq() comes here too.
 * A held event never delays the driver's missed-event check: an arm that
 * finds CQEs already there fires at once (hardware-rdma.rst).
 *
 * Context: process context; sleeps.
 * Return: 0, -EOPNOTSUPP for a device without moderation, or the errno
 * of the command.
 */
int rnic_ib_modify_cq(struct ib_cq *ibcq, u16 count, u16 period_us)
{
	struct rnic_ibdev *ibd = to_ibdev(ibcq->device);
	struct rnic_aq_modify_rdma_cq c = {};
	int err;

	if (!(ibd->caps.flags & RNIC_RDMA_CAP_CQ_MODERATION))
		return -EOPNOTSUPP;
	c.hdr.opcode = RNIC_AQ_MODIFY_RDMA_CQ;
	c.cqn = cpu_to_le32(to_rcq(ibcq)->cqn);
	c.count = cpu_to_le16(count);
	c.period_us = cpu_to_le16(period_us);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), NULL);
	if (!err)
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cq_moderations);
	return err;
}

/* A CQE of @qp the checks refused: drop it, count it, fail @qp */
static void rnic_ib_bad_cqe(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
			    const struct rnic_rdma_cqe *cqe,
			    struct rnic_ib_qp *qp, const char *why)
{
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_bad_cqes);
	ibdev_err_ratelimited(&ibd->ibdev, "CQ %u: dropped a bad CQE (%s): QPN %u opcode %#x status %u wqe_idx %u; the QP is moved to ERR\n",
			      cq->cqn, why, le32_to_cpu(cqe->qpn), cqe->opcode,
			      cqe->status, le16_to_cpu(cqe->wqe_idx));
	if (qp)
		rnic_ib_qp_set_err(qp);
}

/* Send CQE: retires the WQEs up to wqe_idx, reports the last */
static int rnic_ib_poll_sq(struct rnic_ib_qp *qp,
			   const struct rnic_rdma_cqe *cqe, struct ib_wc *wc)
{
	struct rnic_ib_wq *sq = &qp->sq;
	u16 idx = le16_to_cpu(cqe->wqe_idx);
	bool ud = qp->ibqp.qp_type != IB_QPT_RC;
	int n;

	spin_lock(&sq->lock);
	n = rnic_ib_cqe_sq_retire(sq->ci, sq->pi, idx);
	if (n > 0 && !rnic_ib_cqe_to_wc(cqe, ud, 0, wc)) {
		wc->wr_id = sq->wrid[idx & (BIT(sq->log2_depth) - 1)];
		sq->ci += n;
		n = 0;
	} else {
		n = -EIO;
	}
	spin_unlock(&sq->lock);
	return n;
}

/* Receive CQE of an RQ: exactly the next WQE */
static int rnic_ib_poll_rq(struct rnic_ib_qp *qp,
			   const struct rnic_rdma_cqe *cqe, struct ib_wc *wc)
{
	struct rnic_ib_wq *rq = &qp->rq;
	u16 idx = le16_to_cpu(cqe->wqe_idx);
	u32 slot = idx & (BIT(rq->log2_depth) - 1);
	int err;

	spin_lock(&rq->lock);
	err = rnic_ib_cqe_rq_check(rq->ci, rq->pi, idx);
	if (!err)
		err = rnic_ib_cqe_to_wc(cqe, qp->ibqp.qp_type != IB_QPT_RC,
					rq->len[slot], wc);
	if (!err) {
		wc->wr_id = rq->wrid[slot];
		rq->ci++;
	}
	spin_unlock(&rq->lock);
	return err;
}

/* Receive CQE of an SRQ: a slot the driver gave and has not had back */
static int rnic_ib_poll_srq(struct rnic_ib_qp *qp,
			    const struct rnic_rdma_cqe *cqe, struct ib_wc *wc)
{
	struct rnic_ib_srq *srq = qp->srq;
	u16 slot = le16_to_cpu(cqe->wqe_idx);
	int err;

	spin_lock(&srq->lock);
	err = rnic_ib_cqe_srq_check(slot, BIT(srq->log2_depth), srq->busy);
	if (!err)
		err = rnic_ib_cqe_to_wc(cqe, qp->ibqp.qp_type != IB_QPT_RC,
					srq->len[slot], wc);
	if (!err) {
		wc->wr_id = srq->wrid[slot];
		clear_bit(slot, srq->busy);
	}
	spin_unlock(&srq->lock);
	return err;
}

/* One CQE, phase checked: 0 and @wc filled, or -EIO (dropped) */
static int rnic_ib_poll_one(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
			    const struct rnic_rdma_cqe *cqe, struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn);
	bool recv = cqe->opcode & RNIC_CQE_OP_RECV_BIT;
	struct rnic_ib_qp *qp;
	int err;

	/* left by a QP that was reset or destroyed (rnic_ib_cqe_scrub()) */
	if (qpn == RNIC_IB_CQE_QPN_SCRUBBED && cq->scrubbed) {
		cq->scrubbed--;
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cqes_scrubbed);
		return -ENOENT;
	}
	/*
	 * Nothing of the QP but its CQNs is read before they say it is this
	 * CQ's: a QP of another CQ may be in destroy_qp, which waits for
	 * this RCU reader but does not take this CQ's lock.
	 */
	qp = xa_load(&ibd->qp_xa, qpn);
	if (!qp) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cqe_unknown_qp);
		ibdev_err_ratelimited(&ibd->ibdev, "CQ %u: dropped a CQE naming QPN %#x, which does not exist; the device is faulty, and a WR may never complete: unload and reload rnic to reset it\n",
				      cq->cqn, qpn);
		return -ENOENT;
	}
	if (rnic_ib_cqe_qp_check(cqe, cq->cqn, qp->send_cqn, qp->recv_cqn)) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_bad_cqes);
		ibdev_err_ratelimited(&ibd->ibdev, "CQ %u: dropped a %s CQE naming QP %u, whose %s CQ is CQ %u; the device is faulty, and a WR may never complete: unload and reload rnic to reset it\n",
				      cq->cqn, recv ? "receive" : "send", qpn,
				      recv ? "receive" : "send",
				      recv ? qp->recv_cqn : qp->send_cqn);
		return -EXDEV;
	}
	if (!recv)
		err = rnic_ib_poll_sq(qp, cqe, wc);
	else if (!!qp->srq != !!(cqe->flags & RNIC_RCQE_F_SRQ))
		err = -EIO;
	else if (qp->srq)
		err = rnic_ib_poll_srq(qp, cqe, wc);
	else
		err = rnic_ib_poll_rq(qp, cqe, wc);
	if (err) {
		rnic_ib_bad_cqe(ibd, cq, cqe, qp, "not an outstanding WQE, or inconsistent");
		return err;
	}
	/* with local_invs: which way a ULP's MRs are invalidated */
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_remote_invs);
	wc->qp = &qp->ibqp;
	return 0;
}

/* ------------------------------------------------------------------------
 * After a fatal error: completions and events in software
 *
 * A failed device is stopped (rnic_dev_stop()) and writes no CQE and no
 * EQ entry any more. poll_cq still returns the CQEs it wrote before, then
 * completes every WR its QPs still have, and those posted later, which
 * never reach it, as flushed (rnic_ib_wq_flush()); the completion
 * handlers it no longer triggers are called from ibd->fatal_work, the
 * way the EQ interrupt calls them: once per arm.
 */

/*
 * The WRs of this CQ's QPs that no CQE will complete. Caller holds
 * cq->lock and the RCU read lock, under which destroy_qp keeps a QP it
 * erased, as for poll_one().
 */
static int rnic_ib_poll_flushed(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq,
				int num, struct ib_wc *wc)
{
	struct rnic_ib_qp *qp;
	unsigned long qpn;
	int n = 0;

	xa_for_each(&ibd->qp_xa, qpn, qp) {
		if (n >= num)
			break;
		/* a user QP's WRs are the process's, in its rings */
		if (qp->uctx)
			continue;
		if (qp->send_cqn == cq->cqn) {
			spin_lock(&qp->sq.lock);
			n += rnic_ib_wq_flush(&qp->sq.ci, qp->sq.pi, qp->sq.wrid,
					      BIT(qp->sq.log2_depth) - 1, false,
					      &qp->ibqp, wc + n, num - n);
			spin_unlock(&qp->sq.lock);
		}
		if (!qp->srq && qp->recv_cqn == cq->cqn && n < num) {
			spin_lock(&qp->rq.lock);
			n += rnic_ib_wq_flush(&qp->rq.ci, qp->rq.pi, qp->rq.wrid,
					      BIT(qp->rq.log2_depth) - 1, true,
					      &qp->ibqp, wc + n, num - n);
			spin_unlock(&qp->rq.lock);
		}
	}
	return n;
}

/* Would poll_cq return something? Caller holds cq->lock. */
static bool rnic_ib_cq_fatal_pending(struct rnic_ibdev *ibd,
				     struct rnic_ib_cq *cq)
{
	struct rnic_rdma_cqe *cqe = &cq->ring[cq->ci & (BIT(cq->log2_depth) - 1)];
	struct rnic_ib_qp *qp;
	unsigned long qpn;
	bool pending;

	if (rnic_rdma_cqe_phase(cqe) == rnic_ring_phase(cq->ci, cq->log2_depth))
		return true;
	pending = false;
	rcu_read_lock();
	xa_for_each(&ibd->qp_xa, qpn, qp) {
		if (qp->uctx)
			continue;
		if (qp->send_cqn == cq->cqn) {
			spin_lock(&qp->sq.lock);
			pending = qp->sq.ci != qp->sq.pi;
			spin_unlock(&qp->sq.lock);
		}
		if (!pending && !qp->srq && qp->recv_cqn == cq->cqn) {
			spin_lock(&qp->rq.lock);
			pending = qp->rq.ci != qp->rq.pi;
			spin_unlock(&qp->rq.lock);
		}
		if (pending)
			break;
	}
	rcu_read_unlock();
	return pending;
}

/**
 * rnic_ib_cq_fatal_kick() - WRs were posted to a failed device
 * @ibd: the device, after a fatal error
 * @ibcq: the CQ they complete on
 *
 * They complete at once, as flushed: if the CQ is armed, its completion
 * handler is due. It is called from a work item, not here: post_send
 * may be called from the very handler, under the ULP's locks.
 *
 * Context: any; takes the CQ's lock.
 */
void rnic_ib_cq_fatal_kick(struct rnic_ibdev *ibd, struct ib_cq *ibcq)
{
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&cq->lock, flags);
	due = cq->sw_armed;
	cq->sw_armed = false;
	cq->sw_event |= due;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (due)
		queue_work(system_highpri_wq, &ibd->fatal_work);
}

/**
 * rnic_ib_cqs_fatal_notify() - call the completion handlers that are due
 * @ibd: the device, after a fatal error
 * @first: the first call since the error: every CQ that was ever armed
 *	gets its handler called once, since the device may have taken its
 *	arm and will never honour it (a CQ pool's handler that finds nothing
 *	new only polls once more)
 *
 * As the EQ interrupt does: under RCU, which destroy_cq waits for after
 * the CQ left the table, and with interrupts off, as handlers expect.
 *
 * Context: ibd->fatal_work.
 */
void rnic_ib_cqs_fatal_notify(struct rnic_ibdev *ibd, bool first)
{
	struct rnic_ib_cq *cq;
	unsigned long cqn, flags;
	bool due;

	rcu_read_lock();
	xa_for_each(&ibd->cq_xa, cqn, cq) {
		spin_lock_irqsave(&cq->lock, flags);
		due = cq->sw_event || (first && cq->armed);
		cq->sw_event = false;
		if (due)
			cq->sw_armed = false;
		spin_unlock(&cq->lock);
		if (due && cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		local_irq_restore(flags);
	}
	rcu_read_unlock();
}

/*
 * The CQ's slot value: the consumer index and the last arm. The device
 * reads the slot when it gets to a kick, not when the kick was written,
 * and takes an arm once per ARM_SEQ: a consumer index update that left
 * the arm out would withdraw an arm the device had not read yet (poll_cq
 * right after req_notify_cq, as RDS does), and then no event would ever
 * come. Repeating the last arm is harmless: its sequence is taken once.
 */
static u32 rnic_ib_cq_db(const struct rnic_ib_cq *cq)
{
	return rnic_db_rdma_cq(cq->ci, cq->armed, cq->arm_solicited,
			       cq->arm_seq);
}

int rnic_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rnic_ibdev *ibd = to_ibdev(ibcq->device);
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	u32 mask = BIT(cq->log2_depth) - 1;
	struct rnic_rdma_cqe *cqe;
	unsigned long flags;
	int n = 0;
	u16 ci0;

	/* a user CQ's ring is the process's to poll (uverbs' POLL_CQ) */
	if (cq->uctx)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	ci0 = cq->ci;
	rcu_read_lock();
	while (n < num_entries) {
		cqe = &cq->ring[cq->ci & mask];
		if (rnic_rdma_cqe_phase(cqe) !=
		    rnic_ring_phase(cq->ci, cq->log2_depth))
			break;
		/* the rest of the entry only after its phase */
		dma_rmb();
		cq->ci++;
		if (!rnic_ib_poll_one(ibd, cq, cqe, &wc[n]))
			n++;
	}
	/* after what the device wrote before it failed */
	if (n < num_entries && READ_ONCE(ibd->fatal))
		n += rnic_ib_poll_flushed(ibd, cq, num_entries - n, wc + n);
	rcu_read_unlock();
	/* room for the device: a CI update needs no kick */
	if (cq->ci != ci0)
		rnic_ib_db_write(cq->dbp, cq->db_off, rnic_ib_cq_db(cq));
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_poll_cq);

/*
 * req_notify_cq after a fatal error, with cq->lock held: the arm is the
 * driver's to honour. Completions are already there when WRs are
 * outstanding (poll_cq flushes them): reported as missed if asked,
 * else the handler is due at once. Return: 1 (missed), 0, or -EAGAIN
 * when the caller must queue ibd->fatal_work.
 */
static int rnic_ib_req_notify_fatal(struct rnic_ibdev *ibd,
				    struct rnic_ib_cq *cq,
				    enum ib_cq_notify_flags flags)
{
	cq->sw_armed = true;
	if (!rnic_ib_cq_fatal_pending(ibd, cq))
		return 0;
	if (flags & IB_CQ_REPORT_MISSED_EVENTS)
		return 1;
	cq->sw_armed = false;
	cq->sw_event = true;
	return -EAGAIN;
}

/*
 * A user CQ: the process wrote its arm into the slot, and this is its kick
 * (rnic_ib_uctx.c). After a fatal error there is no arm to honour: every
 * user CQ got one event then (rnic_ib_cqs_fatal_notify()), and a process
 * that arms again learns that the device is gone rather than wait.
 */
static int rnic_ib_ucq_arm(struct rnic_ibdev *ibd, struct rnic_ib_cq *cq)
{
	if (READ_ONCE(ibd->fatal))
		return -EIO;
	rnic_ib_db_kick(ibd, cq->dbp, cq->db_off);
	return 0;
}

int rnic_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rnic_ibdev *ibd = to_ibdev(ibcq->device);
	struct rnic_ib_cq *cq = to_rcq(ibcq);
	bool solicited = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED;
	struct rnic_rdma_cqe *cqe;
	unsigned long irqflags;
	int ret = 0;

	if (cq->uctx)
		return rnic_ib_ucq_arm(ibd, cq);
	spin_lock_irqsave(&cq->lock, irqflags);
	if (READ_ONCE(ibd->fatal)) {
		ret = rnic_ib_req_notify_fatal(ibd, cq, flags);
		spin_unlock_irqrestore(&cq->lock, irqflags);
		if (ret < 0) {
			queue_work(system_highpri_wq, &ibd->fatal_work);
			ret = 0;
		}
		return ret;
	}
	cq->arm_seq++;
	cq->armed = true;
	cq->arm_solicited = solicited;
	rnic_ib_db_ring(ibd, cq->dbp, cq->db_off, rnic_ib_cq_db(cq));
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		cqe = &cq->ring[cq->ci & (BIT(cq->log2_depth) - 1)];
		if (rnic_rdma_cqe_phase(cqe) ==
		    rnic_ring_phase(cq->ci, cq->log2_depth))
			ret = 1;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_req_notify_cq);
