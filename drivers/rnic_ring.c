// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues and descriptor rings: DMA memory plus the admin
 * commands that hand them to the device.
 *
 * The device writes CQEs with a phase bit that flips on every pass
 * (Documentation/hardware.rst, "Entry ownership"), so the driver never
 * reads a stale entry as new, and needs no CQ tail register.
 */
#include <linux/dma-mapping.h>

#include "rnic.h"

static size_t rnic_cq_bytes(const struct rnic_cq *cq)
{
	return ((size_t)1 << cq->log2_depth) * RNIC_CQE_SIZE;
}

static size_t rnic_queue_bytes(const struct rnic_queue *q)
{
	return ((size_t)1 << q->log2_depth) * q->desc_size;
}

/**
 * rnic_cq_create() - allocate a CQ and create it in the device
 * @rdev: the device
 * @cq: the CQ to fill in
 * @log2_depth: log2 of its number of entries
 * @vector: MSI-X vector the device raises when the CQ is armed
 *
 * The CQ starts disarmed; call rnic_cq_arm() once a handler is in place.
 *
 * Return: 0 or a negative errno.
 */
int rnic_cq_create(struct rnic_dev *rdev, struct rnic_cq *cq, u8 log2_depth,
		   u16 vector)
{
	int err;

	if (log2_depth < RNIC_CQ_LOG2_MIN || log2_depth > rdev->max_cq_log2)
		return -EINVAL;
	memset(cq, 0, sizeof(*cq));
	cq->log2_depth = log2_depth;
	cq->vector = vector;
	cq->va = dma_alloc_coherent(&rdev->pdev->dev, rnic_cq_bytes(cq),
				    &cq->dma, GFP_KERNEL);
	if (!cq->va)
		return -ENOMEM;
	err = rnic_cmd_create_cq(rdev, cq->dma, log2_depth, vector, &cq->id);
	if (err) {
		rnic_err(rdev, "CREATE_CQ (depth %u, vector %u) failed: %d\n",
			 1U << log2_depth, vector, err);
		if (rnic_dma_may_free(err, false, READ_ONCE(rdev->stopped)))
			dma_free_coherent(&rdev->pdev->dev, rnic_cq_bytes(cq),
					  cq->va, cq->dma);
		else
			rnic_err(rdev, "the device may be using that CQ: leaking its ring\n");
		cq->va = NULL;
		return err;
	}
	cq->created = true;
	return 0;
}

/**
 * rnic_cq_destroy() - destroy a CQ in the device and free it
 * @rdev: the device
 * @cq: the CQ; its queues must be destroyed already
 *
 * If the device did not destroy it, it may still write into the ring, so
 * the memory is leaked on purpose: a leak is better than DMA into freed
 * memory. A stopped device (fatal, or reset after it stopped answering)
 * does no more DMA, so then the memory is freed.
 */
void rnic_cq_destroy(struct rnic_dev *rdev, struct rnic_cq *cq)
{
	int err;

	if (!cq->va)
		return;
	if (cq->created) {
		err = rnic_cmd_destroy_cq(rdev, cq->id);
		if (!rnic_dma_may_free(err, true, READ_ONCE(rdev->stopped))) {
			rnic_err(rdev, "DESTROY_CQ %u failed: %d; keeping its memory\n",
				 cq->id, err);
			return;
		}
		cq->created = false;
	}
	dma_free_coherent(&rdev->pdev->dev, rnic_cq_bytes(cq), cq->va, cq->dma);
	cq->va = NULL;
}

/**
 * rnic_cq_peek() - the next completion, if the device has written it
 * @cq: the CQ
 *
 * Return: the CQE at the consumer index, or NULL. Call rnic_cq_pop() once
 * done with it.
 */
struct rnic_cqe *rnic_cq_peek(struct rnic_cq *cq)
{
	struct rnic_cqe *cqe = &cq->va[cq->ci & ((1U << cq->log2_depth) - 1)];

	if (rnic_cqe_phase(cqe) != rnic_ring_phase(cq->ci, cq->log2_depth))
		return NULL;
	/* read the body only after the phase says it is complete */
	dma_rmb();
	return cqe;
}

void rnic_cq_pop(struct rnic_cq *cq)
{
	cq->ci++;
}

/* Tell the device how far we consumed, so it can reuse the entries. */
void rnic_cq_update_ci(struct rnic_dev *rdev, struct rnic_cq *cq)
{
	rnic_doorbell(rdev, RNIC_DB_CQ_OFF(cq->id),
		      rnic_db_cq(cq->ci, false, cq->arm_seq), RNIC_DB_VEC_EVENT);
}

/**
 * rnic_cq_arm() - update the consumer index and request one interrupt
 * @rdev: the device
 * @cq: the CQ
 *
 * The device interrupts at once if entries are already pending, so the
 * caller does not need to poll again after arming.
 */
void rnic_cq_arm(struct rnic_dev *rdev, struct rnic_cq *cq)
{
	cq->arm_seq++;
	rnic_doorbell(rdev, RNIC_DB_CQ_OFF(cq->id),
		      rnic_db_cq(cq->ci, true, cq->arm_seq), RNIC_DB_VEC_EVENT);
}

/**
 * rnic_queue_create() - allocate a descriptor ring and create it
 * @rdev: the device
 * @q: the queue to fill in
 * @type: enum rnic_queue_type
 * @log2_depth: log2 of its number of descriptors
 * @cq: the CQ its completions go to
 * @rx_buf_size: RX queues: buffer length of descriptors with len 0
 * @tx_prio: TX queues: 802.1p priority of its untagged frames (PFC)
 *
 * Return: 0 or a negative errno.
 */
int rnic_queue_create(struct rnic_dev *rdev, struct rnic_queue *q,
		      enum rnic_queue_type type, u8 log2_depth,
		      struct rnic_cq *cq, u32 rx_buf_size, u8 tx_prio)
{
	bool tx = type == RNIC_QUEUE_ETH_TX;
	int err;

	if (log2_depth < RNIC_RING_LOG2_MIN || log2_depth > rdev->max_ring_log2)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->type = type;
	q->log2_depth = log2_depth;
	q->desc_size = tx ? RNIC_TX_DESC_SIZE : RNIC_RX_DESC_SIZE;
	q->va = dma_alloc_coherent(&rdev->pdev->dev, rnic_queue_bytes(q),
				   &q->dma, GFP_KERNEL);
	if (!q->va)
		return -ENOMEM;
	err = rnic_cmd_create_queue(rdev, type, q->dma, log2_depth, cq->id,
				    tx ? 0 : rx_buf_size, tx ? tx_prio : 0,
				    &q->id);
	if (err) {
		rnic_err(rdev, "CREATE_QUEUE (type %u, depth %u) failed: %d\n",
			 type, 1U << log2_depth, err);
		if (rnic_dma_may_free(err, false, READ_ONCE(rdev->stopped)))
			dma_free_coherent(&rdev->pdev->dev, rnic_queue_bytes(q),
					  q->va, q->dma);
		else
			rnic_err(rdev, "the device may be using that queue: leaking its ring\n");
		q->va = NULL;
		return err;
	}
	q->created = true;
	return 0;
}

/**
 * rnic_queue_destroy() - destroy a ring in the device and free it
 * @rdev: the device
 * @q: the queue
 *
 * As rnic_cq_destroy(): memory the device may still use is never freed.
 */
void rnic_queue_destroy(struct rnic_dev *rdev, struct rnic_queue *q)
{
	int err;

	if (!q->va)
		return;
	if (q->created) {
		err = rnic_cmd_destroy_queue(rdev, q->id);
		if (!rnic_dma_may_free(err, true, READ_ONCE(rdev->stopped))) {
			rnic_err(rdev, "DESTROY_QUEUE %u failed: %d; keeping its memory\n",
				 q->id, err);
			return;
		}
		q->created = false;
	}
	dma_free_coherent(&rdev->pdev->dev, rnic_queue_bytes(q), q->va, q->dma);
	q->va = NULL;
}

/**
 * rnic_queue_ring() - publish the producer index of a ring
 * @rdev: the device
 * @q: the ring; descriptors up to q->pi are written
 */
void rnic_queue_ring(struct rnic_dev *rdev, struct rnic_queue *q)
{
	rnic_doorbell(rdev, RNIC_DB_QUEUE_OFF(q->id),
		      FIELD_PREP(RNIC_DB_RING_PI, q->pi), RNIC_DB_VEC_DATA);
}
