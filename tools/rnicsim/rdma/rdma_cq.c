// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, completions: completion event queues,
 * RDMA CQs (commands, CQE writing with the phase bit, arming, overrun,
 * event moderation) and the asynchronous events of IB objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

#define CQ_SLOT_BITS	(RNIC_DB_CQ_CI | RNIC_DB_CQ_ARM_SEQ | \
			 RNIC_DB_CQ_SOLICITED | RNIC_DB_CQ_ARM)
#define EQ_SLOT_BITS	(RNIC_DB_CQ_CI | RNIC_DB_CQ_ARM_SEQ | RNIC_DB_CQ_ARM)

/* ---- completion event queues ---- */

static unsigned int eq_slot_off(unsigned int eqn)
{
	return RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(eqn));
}

u8 rdma_cmd_create_eq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_create_eq *c = (const void *)e;
	u64 base = le64_to_cpu(c->ring_addr);
	u16 vector = le16_to_cpu(c->msix_vector);
	struct rdma_dev *v = d->rdma;
	struct rdma_eq *eq;
	unsigned int eqn;

	if (c->reserved0 || !rdma_all_zero(c->reserved1, sizeof(c->reserved1)) ||
	    c->log2_depth < RNIC_EQ_LOG2_MIN ||
	    c->log2_depth > RDMA_MAX_EQ_LOG2 ||
	    !vector || vector >= d->cfg.num_vectors)
		return RNIC_AQ_BAD_PARAM;
	if ((base & (RNIC_EQE_SIZE - 1)) ||
	    !plat_dma_ptr(d->p, base, (size_t)RNIC_EQE_SIZE << c->log2_depth)) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	for (eqn = 1; eqn <= v->max_eq; eqn++)
		if (!v->eqs[eqn].used)
			break;
	if (eqn > v->max_eq)
		return RNIC_AQ_NO_RESOURCES;
	eq = &v->eqs[eqn];
	memset(eq, 0, sizeof(*eq));
	eq->used = true;
	eq->base = base;
	eq->log2 = c->log2_depth;
	eq->vector = vector;
	eq->last_arm_seq = -1;
	rdev_bar_write(d, eq_slot_off(eqn), 0);
	resp->id.id = cpu_to_le32(eqn);
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_destroy_eq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	u32 eqn = le32_to_cpu(c->handle);
	struct rdma_eq *eq;

	if (!eqn || eqn > d->rdma->max_eq || !d->rdma->eqs[eqn].used)
		return RNIC_AQ_NOT_FOUND;
	eq = &d->rdma->eqs[eqn];
	if (eq->ncqs)
		return RNIC_AQ_BAD_STATE;
	memset(eq, 0, sizeof(*eq));
	return RNIC_AQ_SUCCESS;
}

/* Entries not yet consumed per the EQ's slot; -EINVAL for a bad slot. */
static int eq_used(struct rdev *d, struct rdma_eq *eq, unsigned int eqn,
		   u32 *slot, u16 *used)
{
	*slot = rdev_bar_read(d, eq_slot_off(eqn));
	if (*slot & ~EQ_SLOT_BITS)
		return -EINVAL;
	*used = rnic_ring_used(eq->produced, FIELD_GET(RNIC_DB_CQ_CI, *slot));
	return *used > (1U << eq->log2) ? -EINVAL : 0;
}

static void eq_post(struct rdev *d, unsigned int eqn, u32 cqn)
{
	struct rdma_eq *eq = &d->rdma->eqs[eqn];
	struct rnic_eqe eqe = {};
	u32 slot;
	u16 used;
	u64 gpa;

	if (eq_used(d, eq, eqn, &slot, &used) || used >= (1U << eq->log2)) {
		/* The EQ stays in service; the driver polls all its CQs. */
		RDEV_INC(d, event_overflows);
		RDEV_INC(d, device_errors);
		rdev_event(d, RNIC_EQE_DEVICE_ERROR, RNIC_ERR_RING_OVERFLOW,
			   RNIC_EQE_OBJ_EQ, eqn, cqn);
		return;
	}
	eqe.type = RNIC_EQE_COMPLETION;
	eqe.flags = rnic_ring_phase(eq->produced, eq->log2) ?
		    RNIC_EQE_F_PHASE : 0;
	eqe.data = cpu_to_le32(cqn);
	gpa = eq->base + (u64)(eq->produced & ((1U << eq->log2) - 1)) *
			 RNIC_EQE_SIZE;
	if (rdev_post_entry(d, gpa, &eqe, sizeof(eqe))) {
		RDEV_INC(d, dma_errors);
		RDEV_INC(d, device_errors);
		rdev_event(d, RNIC_EQE_DEVICE_ERROR, RNIC_ERR_DMA_OOB,
			   RNIC_EQE_OBJ_EQ, eqn, gpa);
		return;
	}
	eq->produced++;
	if (eq->armed) {
		eq->armed = false;
		plat_raise_irq(d->p, eq->vector);
	}
}

/* Doorbell vector 2: consumer indices and arms of the completion EQs. */
void rdma_eq_doorbell(struct rdev *d)
{
	unsigned int eqn;

	for (eqn = 1; eqn <= d->rdma->max_eq; eqn++) {
		struct rdma_eq *eq = &d->rdma->eqs[eqn];
		u32 slot;
		u16 used;
		int seq;

		if (!eq->used)
			continue;
		if (eq_used(d, eq, eqn, &slot, &used)) {
			RDEV_INC(d, bad_doorbells);
			continue;
		}
		seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot);
		if ((slot & RNIC_DB_CQ_ARM) && seq != eq->last_arm_seq) {
			eq->last_arm_seq = seq;
			eq->armed = true;
		}
		if (eq->armed && used) {
			eq->armed = false;
			plat_raise_irq(d->p, eq->vector);
		}
	}
}

/* ---- RDMA CQs ---- */

static struct rdma_cq *cq_get(struct rdev *d, u32 cqn)
{
	return idtab_get(&d->rdma->cqs, cqn);
}

u8 rdma_cmd_create_cq(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_create_rdma_cq *c = (const void *)e;
	bool pbl = c->flags & RNIC_RING_F_PBL;
	u32 eqn = le32_to_cpu(c->eqn);
	struct rdma_dbp *page;
	struct rdma_cq *cq;
	struct rdma_eq *eq;
	u8 st;

	if (c->reserved0 || !rdma_all_zero(c->reserved1, sizeof(c->reserved1)) ||
	    (c->flags & ~RNIC_RING_F_ALL) ||
	    c->log2_depth < RNIC_CQ_LOG2_MIN || c->log2_depth > RDMA_MAX_CQ_LOG2 ||
	    (!pbl && c->page_log2))
		return RNIC_AQ_BAD_PARAM;
	if (!eqn || eqn > d->rdma->max_eq || !d->rdma->eqs[eqn].used)
		return RNIC_AQ_NOT_FOUND;
	eq = &d->rdma->eqs[eqn];
	page = rdma_dbp_get(d, le32_to_cpu(c->db_page));
	if (!page)
		return RNIC_AQ_NOT_FOUND;
	/* An EQ of depth D never overflows with at most D - 1 CQs. */
	if (eq->ncqs + 1 >= (1U << eq->log2))
		return RNIC_AQ_NO_RESOURCES;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return RNIC_AQ_INTERNAL;
	st = rdma_ring_setup(d, &cq->ring, pbl, le64_to_cpu(c->ring_addr),
			   c->log2_depth, 5, c->page_log2);
	if (st)
		goto err_free;
	if (rdma_slot_assign(d, page, RDMA_SLOT_CQ, cq, &cq->slot)) {
		st = RNIC_AQ_NO_DB_SLOT;
		goto err_ring;
	}
	if (idtab_alloc(&d->rdma->cqs, cq, &cq->cqn)) {
		st = RNIC_AQ_NO_RESOURCES;
		goto err_slot;
	}
	cq->eq = eq;
	cq->eqn = eqn;
	cq->page = page;
	cq->last_arm_seq = -1;
	eq->ncqs++;
	resp->create_cq.cqn = cpu_to_le32(cq->cqn);
	resp->create_cq.db_off = cpu_to_le16(cq->slot * 4);
	return RNIC_AQ_SUCCESS;

err_slot:
	rdma_slot_release(d, page, cq->slot);
err_ring:
	rdma_ring_free(&cq->ring);
err_free:
	free(cq);
	return st;
}

u8 rdma_cmd_modify_cq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_modify_rdma_cq *c = (const void *)e;
	struct rdma_cq *cq;

	if (!rdma_all_zero(c->reserved, sizeof(c->reserved)))
		return RNIC_AQ_BAD_PARAM;
	cq = cq_get(d, le32_to_cpu(c->cqn));
	if (!cq)
		return RNIC_AQ_NOT_FOUND;
	cq->mod_count = le16_to_cpu(c->count);
	cq->mod_period_us = le16_to_cpu(c->period_us);
	return RNIC_AQ_SUCCESS;
}

static void mod_del(struct rdma_dev *v, struct rdma_cq *cq)
{
	if (!cq->mod_listed)
		return;
	if (cq->mod_prev)
		cq->mod_prev->mod_next = cq->mod_next;
	else
		v->mod_cqs = cq->mod_next;
	if (cq->mod_next)
		cq->mod_next->mod_prev = cq->mod_prev;
	cq->mod_next = cq->mod_prev = NULL;
	cq->mod_listed = false;
}

/* Hold the event until @deadline; the CQ stays listed until a tick. */
static void mod_arm(struct rdma_dev *v, struct rdma_cq *cq, u64 deadline)
{
	cq->mod_deadline = deadline;
	if (cq->mod_listed)
		return;
	cq->mod_listed = true;
	cq->mod_prev = NULL;
	cq->mod_next = v->mod_cqs;
	if (v->mod_cqs)
		v->mod_cqs->mod_prev = cq;
	v->mod_cqs = cq;
}

void rdma_cq_free(struct rdev *d, struct rdma_cq *cq)
{
	mod_del(d->rdma, cq);
	idtab_free(&d->rdma->cqs, cq->cqn);
	rdma_slot_release(d, cq->page, cq->slot);
	cq->eq->ncqs--;
	rdma_ring_free(&cq->ring);
	free(cq);
}

u8 rdma_cmd_destroy_cq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_cq *cq = cq_get(d, le32_to_cpu(c->handle));

	if (!cq)
		return RNIC_AQ_NOT_FOUND;
	if (cq->refs)
		return RNIC_AQ_BAD_STATE;
	rdma_cq_free(d, cq);
	return RNIC_AQ_SUCCESS;
}

void rdma_cq_error(struct rdev *d, struct rdma_cq *cq, u8 reason, u64 info)
{
	if (cq->error)
		return;
	cq->error = true;
	cq->armed = false;
	cq->mod_deadline = 0;
	RDMA_INC(d, cq_errors);
	plat_log(d->p, "cq 0x%x error: reason %u info 0x%llx", cq->cqn,
		 reason, (unsigned long long)info);
	rdma_event(d, RNIC_EQE_CQ_ERROR, reason, RNIC_EQE_OBJ_RDMA_CQ, cq->cqn,
		 info);
}

/* Read and check the CQ's slot; a bad value puts the CQ in error. */
static int cq_slot_read(struct rdev *d, struct rdma_cq *cq, u32 *slot,
			u16 *used)
{
	*slot = rdma_slot_read(d, cq->page, cq->slot);
	*used = rnic_ring_used(cq->produced, FIELD_GET(RNIC_DB_CQ_CI, *slot));
	if ((*slot & ~CQ_SLOT_BITS) || *used > (1U << cq->ring.log2_depth)) {
		RDEV_INC(d, bad_doorbells);
		rdma_cq_error(d, cq, RNIC_ERR_BAD_DOORBELL, *slot);
		return -EINVAL;
	}
	return 0;
}

static void cq_fire(struct rdev *d, struct rdma_cq *cq)
{
	cq->armed = false;
	cq->mod_deadline = 0;
	cq->mod_pending = 0;
	eq_post(d, cq->eqn, cq->cqn);
}

/*
 * A new arm (a sequence not seen before) in the slot arms the CQ;
 * whether this read took one.
 */
static bool cq_arm_update(struct rdma_cq *cq, u32 slot)
{
	int seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot);

	if (!(slot & RNIC_DB_CQ_ARM) || seq == cq->last_arm_seq)
		return false;
	cq->last_arm_seq = seq;
	cq->armed = true;
	cq->arm_solicited = slot & RNIC_DB_CQ_SOLICITED;
	cq->mod_pending = 0;
	cq->mod_deadline = 0;
	return true;
}

/* Whether unconsumed CQEs satisfy the arm in force */
static bool cq_has_event(struct rdma_cq *cq, u16 used)
{
	u16 ci = cq->produced - used;

	if (!used)
		return false;
	if (!cq->arm_solicited)
		return true;
	return cq->sol_valid && (u16)(cq->sol_idx - ci) < used;
}

void rdma_cq_slot(struct rdev *d, struct rdma_cq *cq)
{
	bool new_arm;
	u32 slot;
	u16 used;

	if (cq->error || cq_slot_read(d, cq, &slot, &used))
		return;
	new_arm = cq_arm_update(cq, slot);
	if (!cq->armed || !cq_has_event(cq, used))
		return;
	/*
	 * Already there: the event fires at once (missed-event peeking),
	 * unless a test turned the peek off (rdev_set_arm_peek()); the
	 * arm then waits for the next CQE.
	 */
	if (d->no_arm_peek) {
		if (new_arm)
			d->arm_peeks_skipped++;
		return;
	}
	cq_fire(d, cq);
}

static bool moderated(struct rdma_cq *cq)
{
	return cq->mod_count || cq->mod_period_us;
}

/* A CQE that satisfies the arm arrived. */
static void cq_arm_hit(struct rdev *d, struct rdma_cq *cq)
{
	if (!moderated(cq)) {
		cq_fire(d, cq);
		return;
	}
	if (!cq->mod_pending++ && cq->mod_period_us)
		mod_arm(d->rdma, cq, plat_now_ns(d->p) +
			cq->mod_period_us * 1000ULL);
	if (cq->mod_count && cq->mod_pending >= cq->mod_count)
		cq_fire(d, cq);
}

int rdma_cq_post(struct rdev *d, struct rdma_cq *cq, struct rnic_rdma_cqe *cqe,
	       bool solicited)
{
	bool error = cqe->status != RNIC_WC_SUCCESS;
	u32 slot;
	u16 used;
	u64 gpa;

	if (cq->error || cq_slot_read(d, cq, &slot, &used))
		return -EIO;
	if (used >= (1U << cq->ring.log2_depth)) {
		RDEV_INC(d, cq_overflows);
		rdma_cq_error(d, cq, RNIC_ERR_RING_OVERFLOW, cq->produced);
		return -EIO;
	}
	cq_arm_update(cq, slot);
	cqe->flags &= ~RNIC_RCQE_F_PHASE;
	if (rnic_ring_phase(cq->produced, cq->ring.log2_depth))
		cqe->flags |= RNIC_RCQE_F_PHASE;
	gpa = rdma_ring_addr(&cq->ring, cq->produced);
	if (rdev_post_entry(d, gpa, cqe, sizeof(*cqe))) {
		RDEV_INC(d, dma_errors);
		rdma_cq_error(d, cq, RNIC_ERR_DMA_OOB, gpa);
		return -EIO;
	}
	if (solicited || error) {
		cq->sol_valid = true;
		cq->sol_idx = cq->produced;
	}
	cq->produced++;
	if (cq->mod_pending) {
		/* A held event: every CQE counts towards it. */
		if (cq->mod_count && ++cq->mod_pending >= cq->mod_count)
			cq_fire(d, cq);
	} else if (cq->armed && (!cq->arm_solicited || solicited || error)) {
		cq_arm_hit(d, cq);
	}
	return 0;
}

/*
 * Moderation timers: fire held events whose period ran out. Only the
 * CQs listed may hold one; only this loop and rdma_cq_free() unlist.
 */
u64 rdma_cq_tick(struct rdev *d, u64 now)
{
	struct rdma_cq *cq, *ncq;
	u64 next = 0;

	for (cq = d->rdma->mod_cqs; cq; cq = ncq) {
		ncq = cq->mod_next;
		if (cq->mod_deadline && now >= cq->mod_deadline)
			cq_fire(d, cq);
		if (!cq->mod_deadline)
			mod_del(d->rdma, cq);
		else if (!next || cq->mod_deadline < next)
			next = cq->mod_deadline;
	}
	return next;
}
