// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: memory regions and the key table.
 *
 * The device has no memory translation of its own: the driver resolves
 * every key, checks it and turns MR space into DMA addresses for the
 * zero-copy TX descriptors, or into kernel addresses where the transport
 * copies (RX payload, READ responses, atomics, inline data).
 *
 * Two kinds of MR exist for kernel ULPs:
 *  - DMA MRs (ib_get_dma_mr, and the one ib_alloc_pd() makes for its
 *    local_dma_lkey): the MR space is the DMA address space itself;
 *  - fast-registration MRs (ib_alloc_mr + ib_map_mr_sg + IB_WR_REG_MR,
 *    IB_WR_LOCAL_INV / SEND_WITH_INV): a list of DMA pages.
 *
 * Keys: the upper 24 bits index rnic_ibdev.mr_xa, the low 8 bits are the
 * variant a ULP bumps with ib_update_fast_reg_key() before re-registering.
 * lkey and rkey are the same number; access rights decide what the key
 * allows. The key in force is rnic_mr.key: it changes when IB_WR_REG_MR
 * executes, not when the ULP rewrites ib_mr's copy.
 *
 * Lookups run in NAPI, timer and work context, so the key table uses the
 * xarray's irq-safe lock; an MR found there gets a reference, and
 * dereg_mr waits for the last one before freeing.
 *
 * Addressing assumption (documented in DESIGN.md, section 2): the lab's
 * device sits behind no IOMMU, so a DMA address the ULP got from
 * ib_dma_map_*() is a guest-physical address; dma_to_phys() undoes any
 * fixed DMA offset. Pages are reached with kmap_local_page(), and any
 * address that is not RAM is refused rather than touched.
 */
#include <kunit/visibility.h>
#include <linux/dma-direct.h>
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "rnic.h"
#include "rnic_ib.h"
#include "rnic_verbs.h"

/* IB_ACCESS_* a kernel MR may carry */
#define RNIC_MR_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_RELAXED_ORDERING)

/* ------------------------------------------------------------------------
 * Pure helpers (KUnit: kunit/rnic_verbs_kunit.c)
 */

/**
 * rnic_mr_range_ok() - whether [@iova, @iova + @len) lies in an MR
 * @mr_iova: the MR's first byte
 * @mr_len: the MR's length
 * @iova: first byte asked for
 * @len: bytes asked for
 *
 * Written so that no sum can wrap: a hostile RETH with a virtual address
 * near 2^64 must not pass by overflowing. An empty range is inside the MR
 * when its start is (the transport decides whether it checks at all).
 *
 * Return: true if the range is inside the MR.
 */
VISIBLE_IF_KUNIT bool rnic_mr_range_ok(u64 mr_iova, u64 mr_len, u64 iova,
				       u64 len)
{
	if (iova < mr_iova || len > mr_len)
		return false;
	return iova - mr_iova <= mr_len - len;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_mr_range_ok);

/* ------------------------------------------------------------------------
 * Key table
 */

static struct rnic_ibdev *rnic_mr_ibdev(struct rnic_mr *mr)
{
	return to_ribdev(mr->ibmr.device);
}

/* Allocate the MR's key; the MR is findable from here on. */
static int rnic_mr_add(struct rnic_ibdev *rib, struct rnic_mr *mr)
{
	u32 index;
	int err;

	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	err = xa_alloc_cyclic_irq(&rib->mr_xa, &index, mr,
				  XA_LIMIT(1, RNIC_IB_MAX_MR), &rib->next_mr,
				  GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	/*
	 * A random first variant keeps a key of a freed MR from naming the
	 * next MR that gets the same index.
	 */
	mr->key = rnic_mr_key_make(index, get_random_u8());
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return 0;
}

/* Make the key unfindable, then wait for the lookups that found it. */
static void rnic_mr_remove(struct rnic_ibdev *rib, struct rnic_mr *mr)
{
	xa_erase_irq(&rib->mr_xa, rnic_mr_key_index(mr->key));
	rnic_mr_put(mr);
	wait_for_completion(&mr->released);
}

static void rnic_mr_free(struct rnic_mr *mr)
{
	kfree(mr->pages);
	kfree(mr);
}

/**
 * rnic_mr_get() - look up and check a key
 * @rdev: the device (unused: the PD names it)
 * @pd: the PD the access is made in (the QP's)
 * @key: lkey or rkey
 * @access: IB_ACCESS_LOCAL_WRITE, 0 for a local read, or IB_ACCESS_REMOTE_*
 * @iova: first byte
 * @len: bytes
 *
 * Context: any; takes the key table's irq-safe lock.
 * Return: the MR with a reference (rnic_mr_put()), or NULL if the key is
 * unknown, stale, invalidated, of another PD, lacks @access, or does not
 * cover the range.
 */
struct rnic_mr *rnic_mr_get(struct rnic_dev *rdev, struct ib_pd *pd, u32 key,
			    int access, u64 iova, u64 len)
{
	struct rnic_ibdev *rib;
	struct rnic_mr *mr;
	unsigned long flags;

	if (!pd)
		return NULL;
	rib = to_ribdev(pd->device);

	xa_lock_irqsave(&rib->mr_xa, flags);
	mr = xa_load(&rib->mr_xa, rnic_mr_key_index(key));
	if (!mr || mr->key != key || mr->state != RNIC_MR_VALID ||
	    mr->ibmr.pd != pd || (mr->access & access) != access ||
	    !rnic_mr_range_ok(mr->iova, mr->length, iova, len) ||
	    !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	xa_unlock_irqrestore(&rib->mr_xa, flags);
	return mr;
}

/**
 * rnic_mr_put() - drop a reference rnic_mr_get() took
 * @mr: the MR
 */
void rnic_mr_put(struct rnic_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/* ------------------------------------------------------------------------
 * Translation
 */

/*
 * DMA address of MR space at @iova, and the bytes up to the end of the MR
 * page holding it (DMA MR: up to @len, the space is linear).
 */
static int rnic_mr_xlate(struct rnic_mr *mr, u64 iova, u32 len,
			 dma_addr_t *dma, u32 *run)
{
	u64 off, page_size, in_page, idx;

	if (mr->type == RNIC_MR_DMA) {
		*dma = iova;
		*run = len;
		return 0;
	}

	/* pages[0] is the aligned start of the page the MR begins in */
	page_size = 1ULL << mr->page_shift;
	off = iova - mr->iova + (mr->iova & (page_size - 1));
	idx = off >> mr->page_shift;
	if (idx >= mr->npages)
		return -EFAULT;
	in_page = off & (page_size - 1);
	*dma = mr->pages[idx] + in_page;
	*run = min_t(u64, len, page_size - in_page);
	return 0;
}

/*
 * Map the CPU page of the DMA space that holds @dma, refusing what is not
 * RAM; *@room is what is left of that page from @dma on.
 */
static void *rnic_mr_map(struct rnic_mr *mr, dma_addr_t dma, u32 *room)
{
	phys_addr_t phys = dma_to_phys(&mr->rdev->pdev->dev, dma);
	unsigned long pfn = PHYS_PFN(phys);

	if (!pfn_valid(pfn))
		return NULL;
	*room = PAGE_SIZE - offset_in_page(phys);
	return kmap_local_page(pfn_to_page(pfn)) + offset_in_page(phys);
}

enum rnic_mr_dir { RNIC_TO_MR, RNIC_FROM_MR };

static int rnic_mr_copy(struct rnic_mr *mr, u64 iova, void *buf, u32 len,
			enum rnic_mr_dir dir)
{
	while (len) {
		dma_addr_t dma;
		u32 run, room, chunk;
		void *va;

		if (rnic_mr_xlate(mr, iova, len, &dma, &run))
			return -EFAULT;
		va = rnic_mr_map(mr, dma, &room);
		if (!va)
			return -EFAULT;
		chunk = min(run, room);
		if (dir == RNIC_TO_MR)
			memcpy(va, buf, chunk);
		else
			memcpy(buf, va, chunk);
		kunmap_local(va);
		buf += chunk;
		iova += chunk;
		len -= chunk;
	}
	return 0;
}

/**
 * rnic_mr_copy_to() - copy a kernel buffer into MR space
 * @mr: an MR from rnic_mr_get() that covers the range
 * @iova: destination in MR space
 * @src: source
 * @len: bytes
 *
 * Context: any.
 * Return: 0, or -EFAULT if part of the range is not RAM.
 */
int rnic_mr_copy_to(struct rnic_mr *mr, u64 iova, const void *src, u32 len)
{
	return rnic_mr_copy(mr, iova, (void *)src, len, RNIC_TO_MR);
}

/**
 * rnic_mr_copy_from() - copy MR space into a kernel buffer
 * @mr: an MR from rnic_mr_get() that covers the range
 * @iova: source in MR space
 * @dst: destination
 * @len: bytes
 *
 * Context: any.
 * Return: 0, or -EFAULT if part of the range is not RAM.
 */
int rnic_mr_copy_from(struct rnic_mr *mr, u64 iova, void *dst, u32 len)
{
	return rnic_mr_copy(mr, iova, dst, len, RNIC_FROM_MR);
}

/**
 * rnic_mr_dma() - DMA address of MR space, for a zero-copy descriptor
 * @mr: an MR from rnic_mr_get() that covers the range
 * @iova: first byte
 * @len: bytes wanted
 * @dma: its DMA address
 * @contig: bytes from @dma on that are contiguous in DMA space (<= @len)
 *
 * FRWR pages that happen to be adjacent are merged, so a buffer the ULP
 * mapped as one piece makes one descriptor.
 *
 * Return: 0 or -EFAULT.
 */
int rnic_mr_dma(struct rnic_mr *mr, u64 iova, u32 len, dma_addr_t *dma,
		u32 *contig)
{
	dma_addr_t next;
	u32 run, total;

	if (rnic_mr_xlate(mr, iova, len, dma, &run))
		return -EFAULT;
	total = run;
	while (total < len) {
		if (rnic_mr_xlate(mr, iova + total, len - total, &next, &run) ||
		    next != *dma + total)
			break;
		total += run;
	}
	*contig = total;
	return 0;
}

/* ------------------------------------------------------------------------
 * Work requests on MRs
 */

/**
 * rnic_mr_register() - execute IB_WR_REG_MR
 * @rdev: the device
 * @wqe: the WQE; post_send checked that the MR is an FRWR MR of the QP's
 *	PD and that the key names it
 *
 * The page list ib_map_mr_sg() built becomes reachable under wqe->reg.key
 * with wqe->reg.access. A region that is still valid must be invalidated
 * first (IBA 10.7.2.2 fast register: the MR must be in the free state).
 *
 * Context: any.
 * Return: 0 or -EINVAL (the WQE completes with IB_WC_MW_BIND_ERR).
 */
int rnic_mr_register(struct rnic_dev *rdev, const struct rnic_send_wqe *wqe)
{
	struct rnic_mr *mr = wqe->reg.mr;
	struct rnic_ibdev *rib = rnic_mr_ibdev(mr);
	unsigned long flags;
	int err = 0;

	xa_lock_irqsave(&rib->mr_xa, flags);
	if (mr->type != RNIC_MR_FRWR || mr->state == RNIC_MR_VALID ||
	    rnic_mr_key_index(wqe->reg.key) != rnic_mr_key_index(mr->key) ||
	    !mr->npages || !is_power_of_2(mr->ibmr.page_size)) {
		err = -EINVAL;
	} else {
		mr->key = wqe->reg.key;
		mr->access = wqe->reg.access;
		mr->iova = mr->ibmr.iova;
		mr->length = mr->ibmr.length;
		mr->page_shift = ilog2(mr->ibmr.page_size);
		mr->state = RNIC_MR_VALID;
	}
	xa_unlock_irqrestore(&rib->mr_xa, flags);
	return err;
}

/**
 * rnic_mr_invalidate() - execute IB_WR_LOCAL_INV or a SEND_WITH_INV's rkey
 * @rdev: the device
 * @pd: the PD of the QP that invalidates
 * @key: the key to invalidate
 *
 * Only FRWR MRs can be invalidated, only with their current key and only
 * from their own PD (IBA 10.6.6 / o10-37). Invalidating an MR that is
 * already invalid is harmless.
 *
 * Context: any.
 * Return: 0 or -EINVAL.
 */
int rnic_mr_invalidate(struct rnic_dev *rdev, struct ib_pd *pd, u32 key)
{
	struct rnic_ibdev *rib;
	struct rnic_mr *mr;
	unsigned long flags;
	int err = -EINVAL;

	if (!pd)
		return -EINVAL;
	rib = to_ribdev(pd->device);
	xa_lock_irqsave(&rib->mr_xa, flags);
	mr = xa_load(&rib->mr_xa, rnic_mr_key_index(key));
	if (mr && mr->key == key && mr->type == RNIC_MR_FRWR &&
	    mr->ibmr.pd == pd) {
		if (mr->state == RNIC_MR_VALID)
			mr->state = RNIC_MR_INVALID;
		err = 0;
	}
	xa_unlock_irqrestore(&rib->mr_xa, flags);
	return err;
}

/* ------------------------------------------------------------------------
 * Verbs
 */

static struct rnic_mr *rnic_mr_alloc(struct ib_pd *ibpd, enum rnic_mr_type type)
{
	struct rnic_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	mr->rdev = to_rdev(ibpd->device);
	mr->type = type;
	/* ib_core sets these after we return; lookups need them before */
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	return mr;
}

/**
 * rnic_get_dma_mr() - an MR over the whole DMA space
 * @ibpd: its PD
 * @access: IB_ACCESS_*
 *
 * ib_alloc_pd() calls this for every kernel PD and uses the lkey as the
 * PD's local_dma_lkey (rnic does not claim IBK_LOCAL_DMA_LKEY: a per-PD
 * key keeps the PD check meaningful); with IB_PD_UNSAFE_GLOBAL_RKEY the
 * rkey gives peers the same reach, which is what that flag means.
 *
 * Return: the MR, or an ERR_PTR().
 */
struct ib_mr *rnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rnic_mr *mr;
	int err;

	if (access & ~RNIC_MR_ACCESS_ALL)
		return ERR_PTR(-EOPNOTSUPP);
	mr = rnic_mr_alloc(ibpd, RNIC_MR_DMA);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->access = access;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->page_shift = PAGE_SHIFT;
	mr->state = RNIC_MR_VALID;
	err = rnic_mr_add(to_ribdev(ibpd->device), mr);
	if (err) {
		rnic_mr_free(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * rnic_alloc_mr() - a fast-registration MR
 * @ibpd: its PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: pages ib_map_mr_sg() may map, up to RNIC_IB_MAX_FRWR_PAGES
 *
 * The MR starts in the free state: its key works only after an
 * IB_WR_REG_MR.
 *
 * Return: the MR, or an ERR_PTR().
 */
struct ib_mr *rnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct rnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > RNIC_IB_MAX_FRWR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = rnic_mr_alloc(ibpd, RNIC_MR_FRWR);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->max_pages = max_num_sg;
	mr->state = RNIC_MR_FREE;
	err = rnic_mr_add(to_ribdev(ibpd->device), mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	rnic_mr_free(mr);
	return ERR_PTR(err);
}

static int rnic_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rnic_mr *mr = to_rmr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * rnic_map_mr_sg() - build an FRWR MR's page list
 * @ibmr: the MR (not valid: the ULP invalidated it or never registered it)
 * @sg: DMA-mapped scatterlist
 * @sg_nents: entries
 * @sg_offset: offset into the first entry, or NULL
 *
 * ib_sg_to_pages() splits the list into ibmr->page_size pages and sets
 * ibmr->iova and ibmr->length; IB_WR_REG_MR later makes them the MR's.
 *
 * Return: scatterlist entries mapped, or a negative errno.
 */
int rnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct rnic_mr *mr = to_rmr(ibmr);

	if (mr->type != RNIC_MR_FRWR)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rnic_mr_set_page);
}

/**
 * rnic_dereg_mr() - destroy an MR
 * @ibmr: the MR
 * @udata: NULL (kernel ULPs only)
 *
 * Waits for what still holds the MR: a transport lookup (one packet's
 * copy) or a zero-copy frame on the TX ring, until the device sent it.
 *
 * Return: 0.
 */
int rnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rnic_mr *mr = to_rmr(ibmr);

	rnic_mr_remove(rnic_mr_ibdev(mr), mr);
	rnic_mr_free(mr);
	return 0;
}

/*
 * ib_core requires the op of every kernel verbs provider; user memory
 * registration comes with the userspace provider (a later issue).
 */
struct ib_mr *rnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata)
{
	ibdev_dbg(ibpd->device, "reg_user_mr: no userspace provider yet\n");
	return ERR_PTR(-EOPNOTSUPP);
}
