// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device reset/enable handshake and the admin queue engine.
 *
 * One admin command is in flight at a time: commands are rare (setup and
 * teardown of queues, statistics) and serialising them keeps the
 * completion matching trivial. The completion arrives on MSI-X vector 0;
 * if that interrupt is lost the waiter polls the ring once more before it
 * gives up, so a lost interrupt costs a timeout, not a hang.
 */
#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>

#include "rnic.h"

#define RNIC_AQ_BUF_SIZE	PAGE_SIZE

static const char * const rnic_fatal_str[] = {
	[RNIC_FATAL_NONE] = "none",
	[RNIC_FATAL_BAD_AQ_ADDR] = "admin queue address outside guest memory",
	[RNIC_FATAL_BAD_AQ_DEPTH] = "admin queue depth out of range",
	[RNIC_FATAL_BAD_EQ_ADDR] = "event queue address outside guest memory",
	[RNIC_FATAL_BAD_EQ_DEPTH] = "event queue depth out of range",
	[RNIC_FATAL_BAD_CTRL] = "invalid control sequence",
	[RNIC_FATAL_INTERNAL] = "internal device error",
	[RNIC_FATAL_BAD_ABI] = "ABI version not served",
};

static const char *rnic_fatal_reason(u32 reason)
{
	if (reason < ARRAY_SIZE(rnic_fatal_str) && rnic_fatal_str[reason])
		return rnic_fatal_str[reason];
	return "unknown";
}

/**
 * rnic_dev_reset() - reset the device and wait for it to come back
 * @rdev: the device
 *
 * After this the device owns no guest memory: it is safe to free rings.
 *
 * Return: 0, or -ETIMEDOUT if the device did not report RESET_DONE.
 */
int rnic_dev_reset(struct rnic_dev *rdev)
{
	u32 ctrl, status;
	int err;

	rnic_reg_write(rdev, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	rnic_kick(rdev, RNIC_DB_VEC_CTRL);
	/*
	 * Wait for the device to clear the self-clearing RESET bit, not for
	 * STATUS.RESET_DONE: that may still be set by the reset of the last
	 * unload, and registers programmed before the device acts on this
	 * kick would be wiped by it.
	 */
	err = readl_poll_timeout(rdev->shm + RNIC_REG_CTRL, ctrl,
				 !(ctrl & RNIC_CTRL_RESET), 1000,
				 RNIC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	status = rnic_reg_read(rdev, RNIC_REG_STATUS);
	if (err || !(status & RNIC_STATUS_RESET_DONE)) {
		rnic_err(rdev, "device did not finish reset within %u ms (ctrl %#x status %#x); is rnicsim running?\n",
			 RNIC_RESET_TIMEOUT_MS, ctrl, status);
		return -ETIMEDOUT;
	}
	WRITE_ONCE(rdev->fatal, false);
	WRITE_ONCE(rdev->stopped, true);
	return 0;
}

/**
 * rnic_dev_stop() - make sure a failed device performs no more DMA
 * @rdev: the device; it announced a fatal error or stopped answering
 *
 * A fatal device performs no DMA (hardware.rst, STATUS.FATAL), and sets
 * that bit right after its DEVICE_FATAL event: it gets a moment to. A
 * device that does not set it is reset. No command is sent to it any more
 * either way: the driver only gets its objects back by a reload.
 *
 * Context: process context; sleeps.
 * Return: true if the device is stopped; false if even the reset failed,
 * and then it may still write whatever it was given, which must be leaked
 * rather than freed.
 */
bool rnic_dev_stop(struct rnic_dev *rdev)
{
	u32 status;

	WRITE_ONCE(rdev->aq.dead, true);
	if (READ_ONCE(rdev->stopped))
		return true;
	if (!readl_poll_timeout(rdev->shm + RNIC_REG_STATUS, status,
				status & RNIC_STATUS_FATAL, 1000,
				RNIC_FATAL_WAIT_MS * USEC_PER_MSEC)) {
		WRITE_ONCE(rdev->fatal, true);
		WRITE_ONCE(rdev->stopped, true);
		return true;
	}
	rnic_err(rdev, "device is not in its fatal state (status %#x); resetting it so that it lets go of host memory\n",
		 status);
	if (rnic_dev_reset(rdev)) {
		rnic_err(rdev, "device did not reset: the memory it was given stays allocated until rnic is unloaded, and then leaks\n");
		return false;
	}
	return true;
}

/**
 * rnic_dma_may_free() - may memory an admin command named be freed now
 * @err: the command's result: 0, the errno of the status the device
 *	answered, -EIO if it was not sent (the device is dead or fatal), or
 *	-ETIMEDOUT if it got no answer
 * @releases: the command takes the memory back (DESTROY_*); else it gave
 *	the memory to the device (CREATE_*) and the caller frees it because
 *	the command failed
 * @stopped: the device performs no DMA (rdev->stopped)
 *
 * A DESTROY gives the memory back only when it completes: after any
 * failure the device may still write it. A CREATE that failed leaves no
 * reference (hardware-rdma.rst, "Lifetime rules"), unless it went
 * unanswered: the device may have created the object and be writing the
 * ring. Either way a stopped device writes nothing.
 *
 * Return: true if the memory may be freed, false if it must be kept until
 * the device is reset, or leaked.
 */
bool rnic_dma_may_free(int err, bool releases, bool stopped)
{
	if (stopped)
		return true;
	if (releases)
		return !err;
	return err != -ETIMEDOUT;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_dma_may_free);

/**
 * rnic_dev_failed() - the device failed for good: stop it, tell the RDMA side
 * @rdev: the device
 *
 * Once the device is stopped nothing completes the RDMA work it had, so
 * the RDMA side completes it in software; while it may still write host
 * memory, that would let ULPs free buffers under its DMA, so then nothing
 * is completed.
 *
 * Context: process context; sleeps.
 */
void rnic_dev_failed(struct rnic_dev *rdev)
{
	if (rnic_dev_stop(rdev))
		rdev->event_ops->dev_dead(rdev);
}

/**
 * rnic_aq_init() - allocate the admin queue and point the device at it
 * @rdev: the device, freshly reset
 *
 * Writes the AQ and EQ registers; rnic_eq_init() must have allocated the
 * EQ ring already. The device starts using them at rnic_dev_enable().
 *
 * Return: 0 or -ENOMEM.
 */
int rnic_aq_init(struct rnic_dev *rdev)
{
	struct device *dma = &rdev->pdev->dev;
	struct rnic_aq *aq = &rdev->aq;
	size_t depth = 1 << RNIC_AQ_LOG2_DEPTH;

	mutex_init(&aq->lock);
	spin_lock_init(&aq->cq_lock);
	init_completion(&aq->done);
	aq->log2_depth = RNIC_AQ_LOG2_DEPTH;
	aq->pi = 0;
	aq->ci = 0;
	aq->dead = false;

	aq->sq = dma_alloc_coherent(dma, depth * RNIC_AQ_ENTRY_SIZE,
				    &aq->sq_dma, GFP_KERNEL);
	if (!aq->sq)
		return -ENOMEM;
	aq->cq = dma_alloc_coherent(dma, depth * RNIC_ACQ_ENTRY_SIZE,
				    &aq->cq_dma, GFP_KERNEL);
	if (!aq->cq)
		goto err_free_sq;
	aq->buf = dma_alloc_coherent(dma, RNIC_AQ_BUF_SIZE, &aq->buf_dma,
				     GFP_KERNEL);
	if (!aq->buf)
		goto err_free_cq;

	rnic_reg_write(rdev, RNIC_REG_AQ_SQ_BASE_LO, lower_32_bits(aq->sq_dma));
	rnic_reg_write(rdev, RNIC_REG_AQ_SQ_BASE_HI, upper_32_bits(aq->sq_dma));
	rnic_reg_write(rdev, RNIC_REG_AQ_CQ_BASE_LO, lower_32_bits(aq->cq_dma));
	rnic_reg_write(rdev, RNIC_REG_AQ_CQ_BASE_HI, upper_32_bits(aq->cq_dma));
	rnic_reg_write(rdev, RNIC_REG_AQ_CFG,
		       FIELD_PREP(RNIC_AQ_CFG_LOG2_DEPTH, aq->log2_depth));
	return 0;

err_free_cq:
	dma_free_coherent(dma, depth * RNIC_ACQ_ENTRY_SIZE, aq->cq, aq->cq_dma);
err_free_sq:
	dma_free_coherent(dma, depth * RNIC_AQ_ENTRY_SIZE, aq->sq, aq->sq_dma);
	return -ENOMEM;
}

/**
 * rnic_aq_destroy() - free the admin queue
 * @rdev: the device, reset; if the reset failed, the rings are leaked
 */
void rnic_aq_destroy(struct rnic_dev *rdev)
{
	struct device *dma = &rdev->pdev->dev;
	struct rnic_aq *aq = &rdev->aq;
	size_t depth = 1 << aq->log2_depth;

	if (!READ_ONCE(rdev->stopped)) {
		rnic_err(rdev, "device was not reset: leaking the admin queue rather than freeing it under its DMA\n");
		mutex_destroy(&aq->lock);
		return;
	}

	dma_free_coherent(dma, RNIC_AQ_BUF_SIZE, aq->buf, aq->buf_dma);
	dma_free_coherent(dma, depth * RNIC_ACQ_ENTRY_SIZE, aq->cq, aq->cq_dma);
	dma_free_coherent(dma, depth * RNIC_AQ_ENTRY_SIZE, aq->sq, aq->sq_dma);
	mutex_destroy(&aq->lock);
}

/**
 * rnic_dev_enable() - start the device on the programmed AQ and EQ
 * @rdev: the device
 *
 * Return: 0, -EIO if the device refused the configuration (the reason is
 * logged), or -ETIMEDOUT.
 */
int rnic_dev_enable(struct rnic_dev *rdev)
{
	u32 ctrl = RNIC_CTRL_ENABLE |
		   FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR);
	u32 status;
	int err;

	/* it may write the admin and event queues from the kick on */
	WRITE_ONCE(rdev->stopped, false);
	rnic_reg_write(rdev, RNIC_REG_CTRL, ctrl);
	rnic_kick(rdev, RNIC_DB_VEC_CTRL);
	err = readl_poll_timeout(rdev->shm + RNIC_REG_STATUS, status,
				 status & (RNIC_STATUS_ENABLED |
					   RNIC_STATUS_FATAL),
				 1000, RNIC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (err) {
		rnic_err(rdev, "device did not enable within %u ms (status %#x)\n",
			 RNIC_RESET_TIMEOUT_MS, status);
		return -ETIMEDOUT;
	}
	if (status & RNIC_STATUS_FATAL) {
		u32 reason = rnic_reg_read(rdev, RNIC_REG_FATAL_REASON);

		rnic_err(rdev, "device refused to enable: %s (reason %u)\n",
			 rnic_fatal_reason(reason), reason);
		WRITE_ONCE(rdev->fatal, true);
		WRITE_ONCE(rdev->stopped, true);
		return -EIO;
	}
	if (FIELD_GET(RNIC_STATUS_ABI, status) != RNIC_ABI2_MAJOR) {
		rnic_err(rdev, "device enabled with ABI %u, not the 2.0 asked for (status %#x)\n",
			 (u32)FIELD_GET(RNIC_STATUS_ABI, status), status);
		return -EIO;
	}
	return 0;
}

/**
 * rnic_aq_process() - consume admin completions
 * @rdev: the device
 *
 * Called from the vector 0 handler and by a waiter that suspects a lost
 * interrupt. A completion whose cmd_id is not the outstanding command's is
 * from a command that already timed out: it is consumed and dropped.
 */
void rnic_aq_process(struct rnic_dev *rdev)
{
	struct rnic_aq *aq = &rdev->aq;
	struct rnic_acqe *acqe;
	unsigned long flags;

	spin_lock_irqsave(&aq->cq_lock, flags);
	for (;;) {
		acqe = &aq->cq[aq->ci & ((1 << aq->log2_depth) - 1)];
		if (rnic_acqe_phase(acqe) != rnic_ring_phase(aq->ci,
							     aq->log2_depth))
			break;
		/* the rest of the entry only after its phase */
		dma_rmb();
		aq->ci++;
		if (le16_to_cpu(acqe->cmd_id) == aq->cmd_id &&
		    !completion_done(&aq->done)) {
			aq->comp = *acqe;
			complete(&aq->done);
		}
	}
	spin_unlock_irqrestore(&aq->cq_lock, flags);
}

static int rnic_aq_status_to_errno(u8 status)
{
	switch (status) {
	case RNIC_AQ_SUCCESS:
		return 0;
	case RNIC_AQ_BAD_OPCODE:
		return -EOPNOTSUPP;
	case RNIC_AQ_BAD_PARAM:
	case RNIC_AQ_BAD_TRANSITION:
	case RNIC_AQ_BAD_ATTR_MASK:
		return -EINVAL;
	case RNIC_AQ_BAD_ADDR:
		return -EFAULT;
	case RNIC_AQ_NO_RESOURCES:
	case RNIC_AQ_NO_DB_SLOT:
		return -ENOSPC;
	case RNIC_AQ_BAD_STATE:
		return -EBUSY;
	case RNIC_AQ_NOT_FOUND:
		return -ENOENT;
	case RNIC_AQ_NO_PERM:
		return -EPERM;
	default:
		return -EIO;
	}
}

/*
 * Caller holds aq->lock. @comp, if not NULL, gets the whole completion
 * whenever the device answered, failed commands included (2.0 MODIFY_QP
 * reports the QP's state with BAD_TRANSITION).
 */
static int __rnic_aq_exec(struct rnic_dev *rdev, union rnic_aq_entry *cmd,
			  u32 *result, struct rnic_acqe *comp)
{
	struct rnic_aq *aq = &rdev->aq;
	u8 opcode = cmd->hdr.opcode;
	unsigned long left;
	int err;

	if (READ_ONCE(aq->dead) || READ_ONCE(rdev->fatal))
		return -EIO;

	aq->cmd_id++;
	cmd->hdr.cmd_id = cpu_to_le16(aq->cmd_id);
	reinit_completion(&aq->done);
	aq->sq[aq->pi & ((1 << aq->log2_depth) - 1)] = *cmd;
	aq->pi++;
	rnic_stat_inc(rdev, RNIC_DRV_STAT_aq_cmds);
	rnic_doorbell(rdev, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ),
		      FIELD_PREP(RNIC_DB_RING_PI, aq->pi), RNIC_DB_VEC_ADMIN);

	left = wait_for_completion_timeout(&aq->done,
					   msecs_to_jiffies(RNIC_AQ_TIMEOUT_MS));
	if (!left) {
		/* the completion may be there with its interrupt lost */
		rnic_aq_process(rdev);
		if (!completion_done(&aq->done)) {
			u32 status = rnic_reg_read(rdev, RNIC_REG_STATUS);

			rnic_stat_inc(rdev, RNIC_DRV_STAT_aq_timeouts);
			rnic_err(rdev, "admin command %#x timed out after %u ms (device status %#x); the device is not answering, unload and reload rnic after checking rnicsim\n",
				 opcode, RNIC_AQ_TIMEOUT_MS, status);
			/*
			 * It may still run this command and use what it
			 * names, and the rings it has: it is reset before
			 * the callers free anything (rnic_dma_may_free()).
			 */
			rnic_dev_failed(rdev);
			return -ETIMEDOUT;
		}
	}

	if (comp)
		*comp = aq->comp;
	err = rnic_aq_status_to_errno(aq->comp.status);
	if (err) {
		rnic_stat_inc(rdev, RNIC_DRV_STAT_aq_errors);
		rnic_dbg(rdev, "admin command %#x failed: status %u\n",
			 opcode, aq->comp.status);
		return err;
	}
	if (result)
		*result = le32_to_cpu(aq->comp.result);
	return 0;
}

/**
 * rnic_aq_exec() - run one admin command and wait for its completion
 * @rdev: the device
 * @cmd: the command; hdr.cmd_id is filled in here
 * @result: the completion's result word, or NULL
 *
 * Context: process context; sleeps.
 * Return: 0, the errno matching the device's status, -ETIMEDOUT, or -EIO
 * when the device is dead.
 */
int rnic_aq_exec(struct rnic_dev *rdev, union rnic_aq_entry *cmd, u32 *result)
{
	int err;

	mutex_lock(&rdev->aq.lock);
	err = __rnic_aq_exec(rdev, cmd, result, NULL);
	mutex_unlock(&rdev->aq.lock);
	return err;
}

/**
 * rnic_aq_exec_comp() - run one admin command, returning its completion
 * @rdev: the device
 * @cmd: the command; hdr.cmd_id is filled in here
 * @comp: gets the completion whenever the device answered, also when the
 *	command failed (2.0 responses, struct rnic_acqe2, live in it)
 *
 * Context: process context; sleeps.
 * Return: as rnic_aq_exec().
 */
int rnic_aq_exec_comp(struct rnic_dev *rdev, union rnic_aq_entry *cmd,
		      struct rnic_acqe *comp)
{
	int err;

	memset(comp, 0, sizeof(*comp));
	mutex_lock(&rdev->aq.lock);
	err = __rnic_aq_exec(rdev, cmd, NULL, comp);
	mutex_unlock(&rdev->aq.lock);
	return err;
}

/**
 * rnic_aq_query() - run a QUERY_* command and copy out its result
 * @rdev: the device
 * @cmd: a command whose body is struct rnic_aq_query
 * @out: where to copy the result
 * @len: bytes expected; a shorter answer from the device is an error
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int rnic_aq_query(struct rnic_dev *rdev, union rnic_aq_entry *cmd, void *out,
		  size_t len)
{
	struct rnic_aq *aq = &rdev->aq;
	u32 full;
	int err;

	if (len > RNIC_AQ_BUF_SIZE)
		return -EINVAL;
	mutex_lock(&aq->lock);
	memset(aq->buf, 0, len);
	cmd->query.buf_addr = cpu_to_le64(aq->buf_dma);
	cmd->query.buf_len = cpu_to_le32(len);
	err = __rnic_aq_exec(rdev, cmd, &full, NULL);
	if (!err && full < len) {
		rnic_err(rdev, "admin query %#x returned %u bytes, expected %zu\n",
			 cmd->hdr.opcode, full, len);
		err = -EPROTO;
	}
	if (!err)
		memcpy(out, aq->buf, len);
	mutex_unlock(&aq->lock);
	return err;
}
