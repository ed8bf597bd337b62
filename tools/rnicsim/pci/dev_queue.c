// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: completion-type rings the device writes (EQ, CQs),
 * their arming, the doorbell slot checks of every ring, and the error
 * events that put a queue or CQ into the error state.
 */
#include <errno.h>
#include <string.h>

#include "pci/dev_priv.h"

#define SLOT_CQ_BITS	(RNIC_DB_CQ_CI | RNIC_DB_CQ_ARM_SEQ | RNIC_DB_CQ_ARM)

/*
 * Write one phase-carrying entry into guest memory: everything but the
 * first 32-bit word, then (after a release fence) the word with the phase.
 */
int rdev_post_entry(struct rdev *d, u64 gpa, const void *entry, size_t size)
{
	u8 *dst = plat_dma_ptr(d->p, gpa, size);
	u32 first;

	if (!dst)
		return -EFAULT;
	memcpy(dst + 4, (const u8 *)entry + 4, size - 4);
	memcpy(&first, entry, 4);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n((u32 *)dst, first, __ATOMIC_RELEASE);
	return 0;
}

u32 rdev_link_word(struct rdev *d)
{
	return (d->link_up ? RNIC_LINK_UP : 0) |
	       FIELD_PREP(RNIC_LINK_SPEED_MBPS, RDEV_SPEED_MBPS);
}

/* Entries produced and not yet consumed according to an EQ/CQ slot. */
static int slot_used(u32 slot, u16 produced, unsigned int log2, u16 *used)
{
	if (slot & ~SLOT_CQ_BITS)
		return -EINVAL;
	*used = rnic_ring_used(produced, FIELD_GET(RNIC_DB_CQ_CI, slot));
	if (*used > (1U << log2))
		return -EINVAL;	/* consumer ahead of the producer */
	return 0;
}

/* A new ARM (a sequence not seen before) arms; returns the armed state. */
static bool slot_arm(u32 slot, bool armed, int *last_seq)
{
	int seq = FIELD_GET(RNIC_DB_CQ_ARM_SEQ, slot);

	if ((slot & RNIC_DB_CQ_ARM) && seq != *last_seq) {
		*last_seq = seq;
		return true;
	}
	return armed;
}

void rdev_event(struct rdev *d, u8 type, u8 reason, u8 obj, u32 data,
		u64 info)
{
	struct rdev_eq *eq = &d->eq;
	struct rnic_eqe eqe = {};
	u16 used;
	u32 slot;
	u64 gpa;

	if (!d->enabled)
		return;
	slot = rdev_bar_read(d, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ));
	if (slot_used(slot, eq->produced, eq->log2, &used) ||
	    used >= (1U << eq->log2)) {
		RDEV_INC(d, event_overflows);
		return;
	}
	eqe.type = type;
	eqe.flags = rnic_ring_phase(eq->produced, eq->log2) ?
		    RNIC_EQE_F_PHASE : 0;
	eqe.reason = reason;
	eqe.obj = obj;
	eqe.data = cpu_to_le32(data);
	eqe.info = cpu_to_le64(info);
	gpa = eq->base + (u64)(eq->produced & ((1U << eq->log2) - 1)) *
			 RNIC_EQE_SIZE;
	if (rdev_post_entry(d, gpa, &eqe, sizeof(eqe))) {
		RDEV_INC(d, event_overflows);
		return;
	}
	eq->produced++;
	RDEV_INC(d, events);
	if (eq->armed) {
		eq->armed = false;
		plat_raise_irq(d->p, 0);
	}
}

void rdev_device_error(struct rdev *d, u8 reason, u64 info)
{
	RDEV_INC(d, device_errors);
	plat_log(d->p, "device error: reason %u info 0x%llx", reason,
		 (unsigned long long)info);
	rdev_event(d, RNIC_EQE_DEVICE_ERROR, reason, RNIC_EQE_OBJ_NONE, 0,
		   info);
}

void rdev_queue_error(struct rdev *d, unsigned int qid, u8 reason, u64 info)
{
	struct rdev_queue *q = &d->queues[qid];

	if (q->error)
		return;
	q->error = true;
	RDEV_INC(d, queue_errors);
	plat_log(d->p, "queue %u error: reason %u info 0x%llx", qid, reason,
		 (unsigned long long)info);
	rdev_event(d, RNIC_EQE_QUEUE_ERROR, reason, RNIC_EQE_OBJ_QUEUE, qid,
		   info);
}

void rdev_cq_error(struct rdev *d, unsigned int cqid, u8 reason, u64 info)
{
	struct rdev_cq *cq = &d->cqs[cqid];

	if (cq->error)
		return;
	cq->error = true;
	RDEV_INC(d, queue_errors);
	plat_log(d->p, "cq %u error: reason %u info 0x%llx", cqid, reason,
		 (unsigned long long)info);
	rdev_event(d, RNIC_EQE_QUEUE_ERROR, reason, RNIC_EQE_OBJ_CQ, cqid,
		   info);
}

/* Read and check a CQ's slot; on a bad value the CQ enters error. */
static int cq_slot(struct rdev *d, unsigned int cqid, u32 *slot, u16 *used)
{
	struct rdev_cq *cq = &d->cqs[cqid];

	*slot = rdev_bar_read(d, RNIC_DB_CQ_OFF(cqid));
	if (slot_used(*slot, cq->produced, cq->log2, used)) {
		RDEV_INC(d, bad_doorbells);
		rdev_cq_error(d, cqid, RNIC_ERR_BAD_DOORBELL, *slot);
		return -EINVAL;
	}
	return 0;
}

int rdev_cq_post(struct rdev *d, unsigned int cqid, struct rnic_cqe *cqe)
{
	struct rdev_cq *cq = &d->cqs[cqid];
	u32 slot, flags;
	u16 used;
	u64 gpa;

	if (cqid >= RDEV_MAX_CQS || !cq->used || cq->error)
		return -EIO;
	if (cq_slot(d, cqid, &slot, &used))
		return -EIO;
	if (used >= (1U << cq->log2)) {
		RDEV_INC(d, cq_overflows);
		rdev_cq_error(d, cqid, RNIC_ERR_RING_OVERFLOW, cq->produced);
		return -ENOSPC;
	}
	flags = le32_to_cpu(cqe->flags) & ~RNIC_CQE_F_PHASE;
	if (rnic_ring_phase(cq->produced, cq->log2))
		flags |= RNIC_CQE_F_PHASE;
	cqe->flags = cpu_to_le32(flags);
	cqe->timestamp = cpu_to_le64(plat_now_ns(d->p));
	gpa = cq->base + (u64)(cq->produced & ((1U << cq->log2) - 1)) *
			 RNIC_CQE_SIZE;
	if (rdev_post_entry(d, gpa, cqe, sizeof(*cqe))) {
		RDEV_INC(d, dma_errors);
		rdev_cq_error(d, cqid, RNIC_ERR_DMA_OOB, gpa);
		return -EFAULT;
	}
	cq->produced++;
	if (cq->armed) {
		cq->armed = false;
		plat_raise_irq(d->p, cq->vector);
	}
	return 0;
}

int rdev_ring_pi(struct rdev *d, unsigned int qid, u16 *pi)
{
	struct rdev_queue *q = &d->queues[qid];
	u32 slot = rdev_bar_read(d, RNIC_DB_QUEUE_OFF(qid));

	if ((slot & ~RNIC_DB_RING_PI) ||
	    rnic_ring_used(slot, q->cons) > (1U << q->log2)) {
		RDEV_INC(d, bad_doorbells);
		rdev_queue_error(d, qid, RNIC_ERR_BAD_DOORBELL, slot);
		return -EINVAL;
	}
	*pi = slot;
	return 0;
}

bool rdev_queue_usable(struct rdev *d, int qid)
{
	struct rdev_queue *q;

	if (qid < 0 || qid >= RDEV_MAX_QUEUES)
		return false;
	q = &d->queues[qid];
	if (!q->used || q->error)
		return false;
	return d->cqs[q->cq].used && !d->cqs[q->cq].error;
}

/* Doorbell vector 2: consumer indices and arm requests of the EQ and CQs. */
void rdev_event_doorbell(struct rdev *d)
{
	struct rdev_eq *eq = &d->eq;
	unsigned int i;
	u32 slot;
	u16 used;

	slot = rdev_bar_read(d, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ));
	if (slot_used(slot, eq->produced, eq->log2, &used)) {
		RDEV_INC(d, bad_doorbells);
	} else {
		eq->armed = slot_arm(slot, eq->armed, &eq->last_arm_seq);
		if (eq->armed && used) {
			eq->armed = false;
			plat_raise_irq(d->p, 0);
		}
	}

	if (d->rdma)
		d->engine->eq_doorbell(d);
	for (i = 0; i < RDEV_MAX_CQS; i++) {
		struct rdev_cq *cq = &d->cqs[i];

		if (!cq->used || cq->error || cq_slot(d, i, &slot, &used))
			continue;
		cq->armed = slot_arm(slot, cq->armed, &cq->last_arm_seq);
		if (cq->armed && used) {
			cq->armed = false;
			plat_raise_irq(d->p, cq->vector);
		}
	}
}
