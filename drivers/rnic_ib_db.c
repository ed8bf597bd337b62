// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: the kernel's doorbell page (hardware-rdma.rst, "Doorbell pages
 * (2.0)").
 *
 * A queue's doorbell is a slot the device placed in the page; the kick
 * ring behind the slots tells the device which of them moved, and one
 * BAR0 write per batch wakes it. This file is the 2.0 half of the bus
 * layer: on silicon a slot write would notify the device by itself and
 * the kick ring would go.
 */
#include <linux/io.h>

#include "rnic_verbs.h"

#define RNIC_IB_DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define RNIC_IB_DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)

/**
 * rnic_ib_db_off_ok() - whether a slot offset the device returned is one
 * @off: byte offset in the page
 *
 * Return: true for a 4-byte aligned offset inside the slot array.
 */
bool rnic_ib_db_off_ok(u16 off)
{
	return IS_ALIGNED(off, sizeof(__le32)) &&
	       off < RNIC_DBP_SLOTS * sizeof(__le32);
}

/**
 * rnic_ib_db_write() - write a slot without telling the device
 * @ibd: the device
 * @off: the slot's byte offset
 * @val: the slot value in CPU order
 *
 * For a CQ consumer index: the device reads it when it needs room.
 */
void rnic_ib_db_write(struct rnic_ibdev *ibd, u16 off, u32 val)
{
	writel(val, ibd->dbp.va + off);
}

/**
 * rnic_ib_db_ring() - write a slot, name it in the kick ring and kick
 * @ibd: the device
 * @off: the slot's byte offset
 * @val: the slot value in CPU order
 *
 * The caller wrote the WQEs (or consumed the CQEs) before; writel()
 * orders those memory writes before the slot write. Any context.
 */
void rnic_ib_db_ring(struct rnic_ibdev *ibd, u16 off, u32 val)
{
	struct rnic_ib_dbp *dbp = &ibd->dbp;
	unsigned long flags;

	/* WRs posted to a failed device never reach it (rnic_ib_dev_dead()) */
	if (READ_ONCE(ibd->fatal))
		return;
	spin_lock_irqsave(&dbp->lock, flags);
	writel(val, dbp->va + off);
	writew(off / sizeof(__le32), dbp->va + RNIC_IB_DBP_KICK_OFF +
	       (dbp->kick_pi % RNIC_DBP_KICK_DEPTH) * sizeof(__le16));
	dbp->kick_pi++;
	/* the entry before kick_pi, kick_pi before the kick: writel orders */
	writel(FIELD_PREP(RNIC_DBP_KICK_PI, dbp->kick_pi),
	       dbp->va + RNIC_IB_DBP_KICK_PI_OFF);
	writel(dbp->kick, ibd->rdev->ivshmem + RNIC_IVSHMEM_DOORBELL);
	spin_unlock_irqrestore(&dbp->lock, flags);
}

/**
 * rnic_ib_dbp_alloc() - get the kernel's doorbell page
 * @ibd: the device, caps known
 *
 * Return: 0 or a negative errno.
 */
int rnic_ib_dbp_alloc(struct rnic_ibdev *ibd)
{
	struct rnic_aq_alloc_db_page c = {};
	union rnic_aq_resp r;
	u64 off;
	u32 id;
	int err;

	spin_lock_init(&ibd->dbp.lock);
	c.hdr.opcode = RNIC_AQ_ALLOC_DB_PAGE;
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err) {
		ibdev_err(&ibd->ibdev, "ALLOC_DB_PAGE failed: %d\n", err);
		return err;
	}
	id = le32_to_cpu(r.db_page.page);
	ibd->dbp.id = id;
	ibd->dbp.allocated = true;
	off = ibd->caps.db_base + ((u64)id << ibd->caps.db_page_log2);
	if (id >= ibd->caps.num_db_pages ||
	    off + RNIC_DBP_SIZE > ibd->rdev->shm_len) {
		ibdev_err(&ibd->ibdev, "device gave doorbell page %u at BAR2 %#llx, outside its %u pages or BAR2\n",
			  id, off, ibd->caps.num_db_pages);
		return -EPROTO;
	}
	ibd->dbp.va = ibd->rdev->shm + off;
	ibd->dbp.kick = le32_to_cpu(r.db_page.kick);
	ibd->dbp.kick_pi = 0;
	return 0;
}

void rnic_ib_dbp_free(struct rnic_ibdev *ibd)
{
	if (!ibd->dbp.allocated)
		return;
	rnic_ib_cmd_destroy(ibd, RNIC_AQ_FREE_DB_PAGE, ibd->dbp.id);
	ibd->dbp.allocated = false;
}
