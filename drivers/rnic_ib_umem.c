// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: user memory the device is given (Documentation/rnic.rst, "User
 * verbs"): the rings of a user context's CQs, QPs and SRQs, which the
 * process allocates and the kernel pins (ib_umem) and hands the device as
 * a page list, and the checks of what a create request says about them.
 *
 * A ring's page list has one entry per PAGE_SIZE page of the ring (a ring
 * smaller than a page has one), in DMA memory the device copies at
 * create: it is freed as soon as the command was answered. The pinned
 * pages live as long as the object, and after it only if its DESTROY did
 * not complete (rnic_ib_umem_free()). The request checks are pure (KUnit:
 * kunit/rnic_ib_umem_kunit.c).
 */
#include <kunit/visibility.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "rnic_verbs.h"

/**
 * rnic_ib_uring_bytes() - bytes of a ring
 * @log2_depth: log2 of its entries
 * @esize_log2: log2 of an entry's bytes
 *
 * Return: the ring's size; both fields are bytes of a request, so the
 * sum is at most 510 and the shift is made safe here.
 */
u64 rnic_ib_uring_bytes(u8 log2_depth, u8 esize_log2)
{
	unsigned int s = log2_depth + esize_log2;

	return s < 64 ? 1ULL << s : 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_uring_bytes);

/**
 * rnic_ib_ucq_check() - a create_cq request of a user context
 * @c: the device's limits
 * @ring_va: the ring's address in the process
 * @log2_depth: log2 of its CQEs
 * @cqe: CQEs the caller asked for (ib_cq_init_attr.cqe)
 *
 * The ring is page aligned, 4 .. 1 << max_cq_log2 entries, and one entry
 * short of full still holds @cqe (the ABI's rule: a CQ of depth n holds
 * n - 1 CQEs, so that the provider never sees a full ring as empty).
 *
 * Return: 0 or -EINVAL.
 */
int rnic_ib_ucq_check(const struct rnic_ib_caps *c, u64 ring_va,
		      u8 log2_depth, int cqe)
{
	if (!ring_va || !PAGE_ALIGNED(ring_va))
		return -EINVAL;
	if (log2_depth < 2 || log2_depth > c->max_cq_log2)
		return -EINVAL;
	if (cqe < 1 || cqe > BIT(log2_depth) - 1)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_ucq_check);

/**
 * rnic_ib_uwq_check() - a user work ring (SQ, RQ or SRQ) of a request
 * @va: its address in the process
 * @log2_depth: log2 of its WQEs
 * @esize_log2: log2 of a WQE's bytes
 * @min_esize: the smallest WQE the device takes (log2)
 * @max_esize: the largest (log2, the device's cap)
 * @max_log2: the deepest ring (log2, the device's cap)
 * @max_wr: WRs the caller asked the ring to hold
 * @need_esize: log2 of the smallest WQE that holds the SGEs or inline
 *	bytes the caller asked for
 *
 * Return: 0, or -EINVAL for an unaligned or missing ring, a depth or WQE
 * size outside the device's range, or a ring too small for the request.
 */
int rnic_ib_uwq_check(u64 va, u8 log2_depth, u8 esize_log2, u8 min_esize,
		      u8 max_esize, u8 max_log2, u32 max_wr, u8 need_esize)
{
	if (!va || !PAGE_ALIGNED(va))
		return -EINVAL;
	if (log2_depth < 2 || log2_depth > max_log2)
		return -EINVAL;
	if (esize_log2 < min_esize || esize_log2 > max_esize ||
	    esize_log2 < need_esize)
		return -EINVAL;
	if (max_wr > BIT(log2_depth))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_uwq_check);

/**
 * rnic_ib_uring_get() - pin a ring of the calling process
 * @ibd: the device
 * @va: its address (checked page aligned)
 * @bytes: its size
 * @umem: the pinned pages
 *
 * Pinned writable: the device writes CQ rings, and a ring it only reads
 * is still written by the process, which must not lose its page to a
 * copy on write after a fork (the provider marks it MADV_DONTFORK too).
 *
 * Return: 0 or a negative errno from ib_umem_get().
 */
int rnic_ib_uring_get(struct rnic_ibdev *ibd, u64 va, u64 bytes,
		      struct ib_umem **umem)
{
	struct ib_umem *u;

	if (bytes > SIZE_MAX || va + bytes < va)
		return -EINVAL;
	u = ib_umem_get(&ibd->ibdev, va, bytes, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(u))
		return PTR_ERR(u);
	*umem = u;
	return 0;
}

/**
 * rnic_ib_pbl_build() - the page list of pinned memory
 * @ibd: the device
 * @umem: the memory, its iova set (ib_umem_get() or
 *	ib_umem_find_best_pgsz())
 * @pgsz: the page size of the list, one ib_umem_find_best_pgsz() allows
 *	(PAGE_SIZE always is)
 * @pbl: filled: DMA memory of @pbl->n le64 page addresses
 *
 * Return: 0 or -ENOMEM.
 */
int rnic_ib_pbl_build(struct rnic_ibdev *ibd, struct ib_umem *umem,
		      unsigned long pgsz, struct rnic_ib_pbl *pbl)
{
	struct ib_block_iter biter;
	size_t n = ib_umem_num_dma_blocks(umem, pgsz), i = 0;

	memset(pbl, 0, sizeof(*pbl));
	if (!n || n > U32_MAX / RNIC_PBL_ENTRY_SIZE)
		return -EINVAL;
	pbl->size = n * RNIC_PBL_ENTRY_SIZE;
	pbl->va = dma_alloc_coherent(rnic_ib_dma(ibd), pbl->size, &pbl->dma,
				     GFP_KERNEL);
	if (!pbl->va)
		return -ENOMEM;
	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		if (WARN_ON_ONCE(i >= n))
			break;
		pbl->va[i++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
	}
	pbl->n = i;
	return 0;
}

/**
 * rnic_ib_pbl_free() - free a page list after the command that used it
 * @ibd: the device
 * @pbl: the list (nothing if never allocated)
 * @err: the command's result: the device copied the list if it answered,
 *	else it may read it still, and the list is kept until the reset
 */
void rnic_ib_pbl_free(struct rnic_ibdev *ibd, struct rnic_ib_pbl *pbl,
		      int err)
{
	rnic_ib_free_dma(ibd, rnic_dma_may_free(err, false, false), pbl->size,
			 pbl->va, pbl->dma);
	pbl->va = NULL;
}
