// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: freeing DMA memory the device was given (hardware-rdma.rst,
 * "Lifetime rules"). Memory whose DESTROY command did not complete may
 * still be written by the device, so it is kept until the next reset.
 * Every object file's teardown uses these, and the device setup releases
 * the kept memory after the reset: a file of its own, so that neither
 * imports the other.
 */
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "rnic_verbs.h"

/* Memory kept for the device until the next reset: DMA memory or a umem */
struct rnic_ib_deferred {
	struct list_head list;
	size_t size;
	void *va;
	dma_addr_t dma;
	struct ib_umem *umem;
};

static void rnic_ib_defer(struct rnic_ibdev *ibd, struct rnic_ib_deferred *d)
{
	spin_lock(&ibd->defer_lock);
	list_add_tail(&d->list, &ibd->deferred);
	spin_unlock(&ibd->defer_lock);
}

/**
 * rnic_ib_defer_free() - keep DMA memory until the device is reset
 * @ibd: the device
 * @size: dma_alloc_coherent() size
 * @va: its CPU address (NULL: nothing to keep)
 * @dma: its DMA address
 *
 * For memory whose DESTROY command did not complete: the device may still
 * write it (hardware-rdma.rst, "Lifetime rules"), so it is freed only after
 * the reset in rnic_ib_free(), or leaked if even that allocation fails.
 */
void rnic_ib_defer_free(struct rnic_ibdev *ibd, size_t size, void *va,
			dma_addr_t dma)
{
	struct rnic_ib_deferred *d;

	if (!va)
		return;
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_deferred_frees);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return;
	d->size = size;
	d->va = va;
	d->dma = dma;
	rnic_ib_defer(ibd, d);
}

/**
 * rnic_ib_free_dma() - free DMA memory the device was given
 * @ibd: the device
 * @destroyed: the command that released it completed
 * @size: its size
 * @va: its CPU address, or NULL
 * @dma: its DMA address
 */
void rnic_ib_free_dma(struct rnic_ibdev *ibd, bool destroyed, size_t size,
		      void *va, dma_addr_t dma)
{
	if (!va)
		return;
	if (destroyed)
		dma_free_coherent(rnic_ib_dma(ibd), size, va, dma);
	else
		rnic_ib_defer_free(ibd, size, va, dma);
}

/**
 * rnic_ib_umem_free() - unpin user memory the device was given
 * @ibd: the device
 * @destroyed: the command that released it completed
 * @umem: a user ring or MR's pages, or NULL
 *
 * As rnic_ib_free_dma(): pages the device may still write stay pinned
 * until the reset (the process may be gone by then; the umem keeps what
 * it needs), or for good if even the list entry cannot be allocated.
 */
void rnic_ib_umem_free(struct rnic_ibdev *ibd, bool destroyed,
		       struct ib_umem *umem)
{
	struct rnic_ib_deferred *d;

	if (!umem)
		return;
	if (destroyed) {
		ib_umem_release(umem);
		return;
	}
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_deferred_frees);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return;
	d->umem = umem;
	rnic_ib_defer(ibd, d);
}

/**
 * rnic_ib_deferred_release() - free what rnic_ib_defer_free() kept
 * @ibd: the device, reset (or never enabled)
 */
void rnic_ib_deferred_release(struct rnic_ibdev *ibd)
{
	struct rnic_ib_deferred *d, *tmp;

	list_for_each_entry_safe(d, tmp, &ibd->deferred, list) {
		if (d->umem)
			ib_umem_release(d->umem);
		else
			dma_free_coherent(rnic_ib_dma(ibd), d->size, d->va,
					  d->dma);
		list_del(&d->list);
		kfree(d);
	}
}
