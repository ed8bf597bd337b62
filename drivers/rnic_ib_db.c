// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: the kernel's doorbell pages (hardware-rdma.rst, "Doorbell
 * pages (2.0)").
 *
 * A queue's doorbell is a slot the device placed in a page; the kick
 * ring behind the slots tells the device which of them moved, and one
 * BAR0 write per batch wakes it. This file is the 2.0 half of the bus
 * layer: on silicon a slot write would notify the device by itself and
 * the kick ring would go.
 *
 * One page holds RNIC_DBP_SLOTS slots, far fewer than the QPs and CQs the
 * device takes: pages are allocated as objects need slots, and each
 * object remembers its page.
 */
#include <kunit/visibility.h>
#include <linux/io.h>

#include "rnic_verbs.h"

#define RNIC_IB_DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define RNIC_IB_DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)
#define RNIC_IB_DBP_KICK_CI_OFF	offsetof(struct rnic_db_page, kick_ci)

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
 * @dbp: the page the slot is in
 * @off: the slot's byte offset
 * @val: the slot value in CPU order
 *
 * For a CQ consumer index: the device reads it when it needs room.
 */
void rnic_ib_db_write(struct rnic_ib_dbp *dbp, u16 off, u32 val)
{
	writel(val, dbp->va + off);
}

/**
 * rnic_ib_db_kick_needed() - whether the device must be kicked for entries
 * @ibd: the device
 * @dbp: the page, its kick_pi just advanced past @prev
 * @prev: kick_pi before the new entries
 *
 * With RNIC_RDMA_CAP_KICK_CI the device reads kick_pi again after each
 * store of kick_ci (a full barrier between), so a kick_ci short of @prev
 * means it has not finished with earlier entries and will see ours: the
 * BAR0 write, a VM exit and a wake-up of the device, is saved while the
 * device is behind.
 *
 * Return: false if the device will read the entries without a kick.
 */
static bool rnic_ib_db_kick_needed(struct rnic_ibdev *ibd,
				   struct rnic_ib_dbp *dbp, u16 prev)
{
	u16 ci;

	if (!(ibd->caps.flags & RNIC_RDMA_CAP_KICK_CI))
		return true;
	/*
	 * kick_pi must reach the device before kick_ci is read, or both
	 * sides may read the other's old value and the page stalls. A read
	 * of BAR0 flushes the posted store (PCI ordering); mb() alone is not
	 * enough under QEMU 7.2's TCG, which drops a one-vCPU guest's
	 * barriers although the model runs beside it: the device-register
	 * read takes QEMU's lock, a full barrier on the host.
	 */
	mb();
	readl(ibd->rdev->ivshmem + RNIC_IVSHMEM_DOORBELL);
	ci = readl(dbp->va + RNIC_IB_DBP_KICK_CI_OFF) & RNIC_DBP_KICK_PI;
	if (ci == prev)
		return true;
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_kicks_skipped);
	return false;
}

/* The slot write (if @write), its kick entry and the kick */
static void rnic_ib_db_notify(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
			      u16 off, bool write, u32 val)
{
	unsigned long flags;
	u16 prev;

	/* WRs posted to a failed device never reach it (rnic_ib_dev_dead()) */
	if (READ_ONCE(ibd->fatal))
		return;
	spin_lock_irqsave(&dbp->lock, flags);
	if (write)
		writel(val, dbp->va + off);
	prev = dbp->kick_pi;
	writew(off / sizeof(__le32), dbp->va + RNIC_IB_DBP_KICK_OFF +
	       (prev % RNIC_DBP_KICK_DEPTH) * sizeof(__le16));
	dbp->kick_pi++;
	/* the entry before kick_pi, kick_pi before the kick: writel orders */
	writel(FIELD_PREP(RNIC_DBP_KICK_PI, dbp->kick_pi),
	       dbp->va + RNIC_IB_DBP_KICK_PI_OFF);
	if (rnic_ib_db_kick_needed(ibd, dbp, prev))
		writel(dbp->kick, ibd->rdev->ivshmem + RNIC_IVSHMEM_DOORBELL);
	spin_unlock_irqrestore(&dbp->lock, flags);
}

/**
 * rnic_ib_db_ring() - write a slot, name it in the kick ring and kick
 * @ibd: the device
 * @dbp: the page the slot is in
 * @off: the slot's byte offset
 * @val: the slot value in CPU order
 *
 * The caller wrote the WQEs (or consumed the CQEs) before; writel()
 * orders those memory writes before the slot write. Any context.
 */
void rnic_ib_db_ring(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp, u16 off,
		     u32 val)
{
	rnic_ib_db_notify(ibd, dbp, off, true, val);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_db_ring);

/**
 * rnic_ib_db_recv() - publish a receive queue's producer index
 * @ibd: the device
 * @dbp: the page the slot is in
 * @off: the RQ or SRQ slot's byte offset
 * @val: the slot value in CPU order
 * @flush: the QP is in ERR: its receives are to be flushed now
 *
 * With RNIC_RDMA_CAP_RQ_PEEK the device reads a receive slot itself when
 * it finds no receive WQE it knows of (hardware-rdma.rst, "Receive slots
 * read on demand"), so a post is the slot write alone: no kick entry, no
 * read of BAR0, no kick, which is most of what a ULP's receive repost
 * cost (a VM exit and a wake-up of the device per completion handled).
 * A QP in ERR gets no packets, so the device would flush such a post only
 * at its next heartbeat: @flush names the slot and kicks as before, for
 * ib_drain_rq()'s marker above all, posted right after its move to ERR.
 * Any context.
 */
void rnic_ib_db_recv(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
		     u16 off, u32 val, bool flush)
{
	if (flush || !(ibd->caps.flags & RNIC_RDMA_CAP_RQ_PEEK)) {
		rnic_ib_db_notify(ibd, dbp, off, true, val);
		return;
	}
	rnic_ib_db_write(dbp, off, val);
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_recv_slot_only);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_db_recv);

/**
 * rnic_ib_db_kick() - name a slot a user context wrote, and kick
 * @ibd: the device
 * @dbp: the user context's page the slot is in
 * @off: the slot's byte offset
 *
 * The kick a context that cannot map the kick register asks for
 * (rnic_ib_uctx.c): the slot is the process's to write, and only its
 * page's kick ring and the device's kick register are written here. The
 * process does not write that kick ring itself, so the kernel is its one
 * writer. Any context.
 */
void rnic_ib_db_kick(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp, u16 off)
{
	rnic_ib_db_notify(ibd, dbp, off, false, 0);
}

/**
 * rnic_ib_dbp_alloc_page() - ALLOC_DB_PAGE into @dbp
 * @ibd: the device
 * @dbp: the page to fill; @dbp->allocated once the device has it, even
 *	when the page it gave is refused (freed by the caller then)
 * @flags: RNIC_DBP_F_* (RNIC_DBP_F_USER for a user context's page)
 *
 * Return: 0, or a negative errno (-EPROTO: a page outside BAR2).
 */
int rnic_ib_dbp_alloc_page(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
			   u32 flags)
{
	struct rnic_aq_alloc_db_page c = {};
	union rnic_aq_resp r;
	u64 off;
	u32 id;
	int err;

	spin_lock_init(&dbp->lock);
	c.hdr.opcode = RNIC_AQ_ALLOC_DB_PAGE;
	c.flags = cpu_to_le32(flags);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err) {
		ibdev_err(&ibd->ibdev, "ALLOC_DB_PAGE failed: %d\n", err);
		return err;
	}
	id = le32_to_cpu(r.db_page.page);
	dbp->id = id;
	dbp->allocated = true;
	off = ibd->caps.db_base + ((u64)id << ibd->caps.db_page_log2);
	if (id >= ibd->caps.num_db_pages ||
	    off + RNIC_DBP_SIZE > ibd->rdev->shm_len) {
		ibdev_err(&ibd->ibdev, "device gave doorbell page %u at BAR2 %#llx, outside its %u pages or BAR2\n",
			  id, off, ibd->caps.num_db_pages);
		return -EPROTO;
	}
	dbp->va = ibd->rdev->shm + off;
	dbp->kick = le32_to_cpu(r.db_page.kick);
	dbp->kick_pi = 0;
	dbp->used = 0;
	return 0;
}

/**
 * rnic_ib_dbp_alloc() - get the kernel's first doorbell page
 * @ibd: the device, caps known
 *
 * At probe, so that a device that gives none fails there, not at the
 * first CQ a ULP creates. More pages come from rnic_ib_dbp_get().
 *
 * Return: 0 or a negative errno.
 */
int rnic_ib_dbp_alloc(struct rnic_ibdev *ibd)
{
	int err;

	mutex_init(&ibd->dbp_lock);
	err = rnic_ib_dbp_alloc_page(ibd, &ibd->dbps[0], 0);
	/* a page the device gave, even a bad one, is freed at teardown */
	if (ibd->dbps[0].allocated)
		ibd->num_dbps = 1;
	return err;
}

/**
 * rnic_ib_dbp_get() - a doorbell page with room for a new object's slots
 * @ibd: the device
 * @slots: slots the object takes (a QP two, a CQ or an SRQ one)
 *
 * The first page with room by the driver's count, else a new page while
 * the device has some. The device places the slots: should its count and
 * ours ever differ, the create fails with its NO_DB_SLOT (-ENOSPC).
 * Sleeps.
 *
 * Return: the page, its @used already counting @slots
 * (rnic_ib_dbp_put() gives them back), or an ERR_PTR: -ENOSPC when every
 * page the device has is full.
 */
struct rnic_ib_dbp *rnic_ib_dbp_get(struct rnic_ibdev *ibd, unsigned int slots)
{
	unsigned int i, max = min_t(unsigned int, ibd->caps.num_db_pages,
				    RNIC_IB_MAX_DBPS);
	struct rnic_ib_dbp *dbp = NULL;
	int err;

	mutex_lock(&ibd->dbp_lock);
	for (i = 0; i < ibd->num_dbps; i++) {
		if (ibd->dbps[i].used + slots <= RNIC_DBP_SLOTS) {
			dbp = &ibd->dbps[i];
			break;
		}
	}
	if (!dbp && ibd->num_dbps < max) {
		dbp = &ibd->dbps[ibd->num_dbps];
		err = rnic_ib_dbp_alloc_page(ibd, dbp, 0);
		if (dbp->allocated)
			ibd->num_dbps++;
		if (err) {
			/* never chosen again; freed at teardown */
			dbp->used = RNIC_DBP_SLOTS;
			mutex_unlock(&ibd->dbp_lock);
			return ERR_PTR(err);
		}
	}
	if (dbp)
		dbp->used += slots;
	mutex_unlock(&ibd->dbp_lock);
	return dbp ?: ERR_PTR(-ENOSPC);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_dbp_get);

/**
 * rnic_ib_dbp_put() - give back what rnic_ib_dbp_get() counted
 * @ibd: the device
 * @dbp: the page
 * @slots: as given to rnic_ib_dbp_get()
 *
 * The page stays allocated, for the next objects, until the device goes.
 */
void rnic_ib_dbp_put(struct rnic_ibdev *ibd, struct rnic_ib_dbp *dbp,
		     unsigned int slots)
{
	mutex_lock(&ibd->dbp_lock);
	if (!WARN_ON_ONCE(dbp->used < slots))
		dbp->used -= slots;
	mutex_unlock(&ibd->dbp_lock);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_dbp_put);

void rnic_ib_dbp_free(struct rnic_ibdev *ibd)
{
	unsigned int i;

	for (i = 0; i < ibd->num_dbps; i++) {
		if (!ibd->dbps[i].allocated)
			continue;
		rnic_ib_cmd_destroy(ibd, RNIC_AQ_FREE_DB_PAGE, ibd->dbps[i].id);
		ibd->dbps[i].allocated = false;
	}
	ibd->num_dbps = 0;
}
