// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MSI-X setup and vector 0: admin completions and device events.
 *
 * Events are handled in a work item: a link change takes RTNL (carrier)
 * and dispatches an ib_event, neither of which may run in hard IRQ
 * context. The EQ is re-armed only after the work has drained it, so a
 * burst of events costs one interrupt.
 */
#include <linux/dma-mapping.h>

#include "rnic.h"

static const char * const rnic_err_str[] = {
	[RNIC_ERR_NONE] = "none",
	[RNIC_ERR_DMA_OOB] = "DMA address outside guest memory",
	[RNIC_ERR_BAD_DESC] = "malformed descriptor",
	[RNIC_ERR_BAD_DOORBELL] = "bad doorbell",
	[RNIC_ERR_RING_OVERFLOW] = "completion queue overflow",
	[RNIC_ERR_INTERNAL] = "internal device error",
};

static const char *rnic_err_reason(u8 reason)
{
	if (reason < ARRAY_SIZE(rnic_err_str) && rnic_err_str[reason])
		return rnic_err_str[reason];
	return "unknown reason";
}

int rnic_irq_init(struct rnic_dev *rdev)
{
	int n;

	if (rdev->num_msix < RNIC_MIN_VECTORS) {
		rnic_err(rdev, "device offers %u MSI-X vectors, rnic needs at least %u (QEMU: ivshmem-doorbell vectors=8)\n",
			 rdev->num_msix, RNIC_MIN_VECTORS);
		return -EINVAL;
	}
	n = pci_alloc_irq_vectors(rdev->pdev, RNIC_MIN_VECTORS, rdev->num_msix,
				  PCI_IRQ_MSIX);
	if (n < 0) {
		rnic_err(rdev, "cannot allocate %u-%u MSI-X vectors: %d\n",
			 RNIC_MIN_VECTORS, rdev->num_msix, n);
		return n;
	}
	rdev->num_irqs = n;
	return 0;
}

void rnic_irq_destroy(struct rnic_dev *rdev)
{
	pci_free_irq_vectors(rdev->pdev);
	rdev->num_irqs = 0;
}

static void rnic_eq_arm(struct rnic_dev *rdev)
{
	struct rnic_eq *eq = &rdev->eq;

	eq->arm_seq++;
	rnic_doorbell(rdev, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		      rnic_db_cq(eq->ci, true, eq->arm_seq), RNIC_DB_VEC_EVENT);
}

static void rnic_handle_link(struct rnic_dev *rdev, u32 link)
{
	bool up = link & RNIC_LINK_UP;
	u32 speed = FIELD_GET(RNIC_LINK_SPEED_MBPS, link);

	rnic_stat_inc(rdev, RNIC_DRV_STAT_link_events);
	rdev->link_up = up;
	if (speed)
		rdev->speed_mbps = speed;
	if (READ_ONCE(rdev->netdev_ready))
		rdev->event_ops->link_change(rdev, up, rdev->speed_mbps);
	if (READ_ONCE(rdev->ib_ready))
		rdev->event_ops->port_event(rdev, up);
}

static void rnic_handle_eqe(struct rnic_dev *rdev, const struct rnic_eqe *eqe)
{
	rnic_stat_inc(rdev, RNIC_DRV_STAT_events);
	switch (eqe->type) {
	case RNIC_EQE_LINK_CHANGE:
		rnic_handle_link(rdev, le32_to_cpu(eqe->data));
		break;
	case RNIC_EQE_DEVICE_ERROR:
		rnic_stat_inc(rdev, RNIC_DRV_STAT_device_errors);
		/*
		 * The device ignores such a write; a process may make it
		 * (user contexts map the doorbell register), so it is no
		 * sign of a broken device and must say so.
		 */
		if (eqe->reason == RNIC_ERR_BAD_DOORBELL)
			dev_warn_ratelimited(&rdev->pdev->dev,
					     "doorbell register written with %#llx, which rings nothing: ignored, counted in bad_doorbells (a process with an RDMA context may write that register when user_kick_map=1)\n",
					     le64_to_cpu(eqe->info));
		else
			rnic_err_ratelimited(rdev, "device error: %s (reason %u, info %#llx)\n",
					     rnic_err_reason(eqe->reason), eqe->reason,
					     le64_to_cpu(eqe->info));
		if (rnic_reg_read(rdev, RNIC_REG_STATUS) & RNIC_STATUS_FATAL) {
			rnic_err(rdev, "device is in fatal state; unload and reload rnic to reset it\n");
			rnic_dev_failed(rdev);
		}
		break;
	case RNIC_EQE_DEVICE_FATAL:
		rnic_err(rdev, "device fatal error (reason %llu); unload and reload rnic to reset it\n",
			 le64_to_cpu(eqe->info));
		rnic_dev_failed(rdev);
		break;
	case RNIC_EQE_QUEUE_ERROR:
		rnic_stat_inc(rdev, RNIC_DRV_STAT_queue_errors);
		rnic_err_ratelimited(rdev, "%s %u error: %s (reason %u, info %#llx); it is stopped\n",
				     eqe->obj == RNIC_EQE_OBJ_CQ ? "CQ" : "queue",
				     le32_to_cpu(eqe->data),
				     rnic_err_reason(eqe->reason), eqe->reason,
				     le64_to_cpu(eqe->info));
		break;
	default:
		/* 2.0: the IB objects' asynchronous events */
		if (rdev->event_ops->ib_event(rdev, eqe))
			break;
		rnic_stat_inc(rdev, RNIC_DRV_STAT_unknown_events);
		rnic_warn(rdev, "unknown event type %u ignored\n", eqe->type);
		break;
	}
}

static void rnic_eq_work(struct work_struct *work)
{
	struct rnic_dev *rdev = container_of(work, struct rnic_dev, eq.work);
	struct rnic_eq *eq = &rdev->eq;
	u32 mask = (1 << eq->log2_depth) - 1;
	struct rnic_eqe *eqe;

	for (;;) {
		eqe = &eq->va[eq->ci & mask];
		if (rnic_eqe_phase(eqe) != rnic_ring_phase(eq->ci, eq->log2_depth))
			break;
		dma_rmb();
		rnic_handle_eqe(rdev, eqe);
		eq->ci++;
	}
	/* a stopped device (fatal, or reset after a failure) is not kicked */
	if (!READ_ONCE(rdev->stopped))
		rnic_eq_arm(rdev);
}

/*
 * Events are handled by a high-priority worker: on ABI 2.0 the IB
 * objects' events (SRQ limit, QP errors) come here, and their consumers
 * poll their CQs from ib_comp_wq, itself high-priority. On the
 * normal-priority system workqueue, in a one-vCPU guest, rnic_perf's
 * server got its SRQ limit event only after it had finished the run the
 * event was to warn it of; on this one, a message after the buffer that
 * crossed the limit.
 */
static void rnic_eq_kick(struct rnic_dev *rdev)
{
	queue_work(system_highpri_wq, &rdev->eq.work);
}

static irqreturn_t rnic_admin_irq(int irq, void *data)
{
	struct rnic_dev *rdev = data;

	rnic_aq_process(rdev);
	rnic_eq_kick(rdev);
	return IRQ_HANDLED;
}

/**
 * rnic_eq_init() - allocate the event queue and program its registers
 * @rdev: the device, freshly reset
 *
 * Also requests vector 0, so that admin completions arriving from the
 * first command on have a handler.
 *
 * Return: 0 or a negative errno.
 */
int rnic_eq_init(struct rnic_dev *rdev)
{
	struct rnic_eq *eq = &rdev->eq;
	size_t size = (1 << RNIC_EQ_LOG2_DEPTH) * RNIC_EQE_SIZE;
	int err;

	eq->log2_depth = RNIC_EQ_LOG2_DEPTH;
	eq->ci = 0;
	eq->arm_seq = 0;
	INIT_WORK(&eq->work, rnic_eq_work);
	eq->va = dma_alloc_coherent(&rdev->pdev->dev, size, &eq->dma,
				    GFP_KERNEL);
	if (!eq->va)
		return -ENOMEM;

	rnic_reg_write(rdev, RNIC_REG_EQ_BASE_LO, lower_32_bits(eq->dma));
	rnic_reg_write(rdev, RNIC_REG_EQ_BASE_HI, upper_32_bits(eq->dma));
	rnic_reg_write(rdev, RNIC_REG_EQ_CFG,
		       FIELD_PREP(RNIC_EQ_CFG_LOG2_DEPTH, eq->log2_depth));

	err = request_irq(rnic_irq_vector(rdev, RNIC_VEC_ADMIN), rnic_admin_irq,
			  0, "rnic-admin", rdev);
	if (err) {
		rnic_err(rdev, "cannot request admin interrupt: %d\n", err);
		dma_free_coherent(&rdev->pdev->dev, size, eq->va, eq->dma);
		return err;
	}
	return 0;
}

/**
 * rnic_eq_start() - arm the event queue once the device is enabled
 * @rdev: the device
 */
void rnic_eq_start(struct rnic_dev *rdev)
{
	/* the work drains what the enable posted (LINK_CHANGE) and arms */
	rnic_eq_kick(rdev);
}

/**
 * rnic_eq_destroy() - stop event handling and free the event queue
 * @rdev: the device, reset; if the reset failed, the ring is leaked
 */
void rnic_eq_destroy(struct rnic_dev *rdev)
{
	struct rnic_eq *eq = &rdev->eq;

	free_irq(rnic_irq_vector(rdev, RNIC_VEC_ADMIN), rdev);
	cancel_work_sync(&eq->work);
	if (!READ_ONCE(rdev->stopped)) {
		rnic_err(rdev, "device was not reset: leaking event queue 0 rather than freeing it under its DMA\n");
		return;
	}
	dma_free_coherent(&rdev->pdev->dev,
			  (1 << eq->log2_depth) * RNIC_EQE_SIZE, eq->va, eq->dma);
}
