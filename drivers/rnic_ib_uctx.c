// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: user contexts (Documentation/rnic.rst, "User verbs"; the ABI is
 * include/uapi/rdma/rnic-abi.h).
 *
 * A context gets doorbell pages of its own (ALLOC_DB_PAGE with
 * RNIC_DBP_F_USER), one at alloc_ucontext and more as its objects need
 * slots, each mapped into the process through an rdma_user_mmap_entry.
 * The kick register is BAR0's ivshmem DOORBELL: its page is mapped only if
 * it holds nothing but BAR0 (rnic_ib_kick_check(), at probe); otherwise
 * the process asks the kernel to kick (a post_send with no WRs, a
 * post_recv, post_srq_recv or req_notify_cq), and the kernel appends the
 * kick entry for the slot the process wrote and kicks.
 *
 * Lifetime: ib_core destroys a context's objects before dealloc_ucontext,
 * and by then no mapping of its pages is left (the file is released only
 * after the last VMA, and on disassociation ib_core zapped them and
 * dropped their references), so the pages go back to the device there.
 */
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rnic-abi.h>

#include "rnic_param.h"
#include "rnic_verbs.h"

/**
 * rnic_ib_kick_check() - may user contexts map the kick register's page
 * @ibd: the device, at probe
 *
 * Only if the user_kick_map parameter allows it, BAR0 starts on a page and
 * no other memory resource of any PCI device (this one's other BARs
 * included) lies in that page: a mapping
 * then reaches the ivshmem registers and nothing of another device or
 * context. Bridge windows are not registers and are not counted.
 */
void rnic_ib_kick_check(struct rnic_ibdev *ibd)
{
	struct pci_dev *pdev = ibd->rdev->pdev, *other = NULL;
	resource_size_t start = pci_resource_start(pdev, RNIC_BAR_IVSHMEM);
	resource_size_t end = start + PAGE_SIZE - 1;
	struct resource res = {};
	bool shared = false;
	char who[32] = "";
	unsigned int i;

	ibd->kick_mmap = false;
	if (!rnic_params.user_kick_map) {
		dev_info(&pdev->dev, "user contexts kick through the kernel: user_kick_map=0\n");
		return;
	}
	if (!(pci_resource_flags(pdev, RNIC_BAR_IVSHMEM) & IORESOURCE_MEM) ||
	    !start || !PAGE_ALIGNED(start)) {
		dev_info(&pdev->dev, "user contexts kick through the kernel: BAR0 at %pa does not start a page\n",
			 &start);
		return;
	}
	for_each_pci_dev(other) {
		for (i = 0; !shared && i < PCI_BRIDGE_RESOURCES; i++) {
			struct resource *r = &other->resource[i];

			if (other == pdev && i == RNIC_BAR_IVSHMEM)
				continue;
			if (!(r->flags & IORESOURCE_MEM) ||
			    (r->flags & IORESOURCE_UNSET) || !r->end)
				continue;
			if (r->start <= end && r->end >= start) {
				/* copied: the loop drops its device reference */
				res = *r;
				shared = true;
				strscpy(who, pci_name(other), sizeof(who));
			}
		}
	}
	if (shared) {
		dev_info(&pdev->dev, "user contexts kick through the kernel: BAR0's page %pa is shared with %s %pR\n",
			 &start, who, &res);
		return;
	}
	ibd->kick_mmap = true;
	dev_info(&pdev->dev, "user contexts map the kick register (BAR0's page %pa is BAR0's alone)\n",
		 &start);
}

/**
 * rnic_ib_uctx() - the user context of a udata
 * @udata: a uverbs command's driver data
 *
 * Return: the context, or NULL for a kernel caller.
 */
struct rnic_ib_ucontext *rnic_ib_uctx(struct ib_udata *udata)
{
	return rdma_udata_to_drv_context(udata, struct rnic_ib_ucontext, ibuc);
}

/**
 * rnic_ib_udata_in() - a request of the ABI from a udata
 * @udata: the command's driver data
 * @req: the request struct (@len bytes), or NULL for a command that has
 *	none
 * @len: its size
 *
 * A shorter udata is refused; a longer one only if the bytes past @len
 * are zero (a newer provider's fields this driver does not know).
 *
 * Return: 0, -EINVAL, or -EFAULT.
 */
int rnic_ib_udata_in(struct ib_udata *udata, void *req, size_t len)
{
	if (udata->inlen < len)
		return -EINVAL;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return len ? ib_copy_from_udata(req, udata, len) : 0;
}

/**
 * rnic_ib_udata_out() - a response of the ABI into a udata
 * @udata: the command's driver data; its outlen was checked to hold
 *	@len before the object was made
 * @resp: the response
 * @len: its size
 *
 * Return: 0 or -EFAULT.
 */
int rnic_ib_udata_out(struct ib_udata *udata, void *resp, size_t len)
{
	return ib_copy_to_udata(udata, resp, min(len, udata->outlen));
}

/* An mmap offset for @pfn, one page */
static struct rnic_ib_mentry *rnic_ib_mentry_add(struct rnic_ib_ucontext *uctx,
						 unsigned long pfn, u64 *key)
{
	struct rnic_ib_mentry *me = kzalloc(sizeof(*me), GFP_KERNEL);
	int err;

	if (!me)
		return ERR_PTR(-ENOMEM);
	me->pfn = pfn;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &me->rdma, PAGE_SIZE);
	if (err) {
		kfree(me);
		return ERR_PTR(err);
	}
	*key = rdma_user_mmap_get_offset(&me->rdma);
	return me;
}

static void rnic_ib_udbp_release(struct rnic_ibdev *ibd,
				 struct rnic_ib_udbp *p)
{
	if (p->me)
		rdma_user_mmap_entry_remove(&p->me->rdma);
	p->me = NULL;
	if (p->dbp.allocated)
		rnic_ib_cmd_destroy(ibd, RNIC_AQ_FREE_DB_PAGE, p->dbp.id);
	p->dbp.allocated = false;
	atomic_dec(&ibd->user_dbps);
}

/* A new user page into @p, mapped; uctx->lock held */
static int rnic_ib_udbp_new(struct rnic_ibdev *ibd,
			    struct rnic_ib_ucontext *uctx,
			    struct rnic_ib_udbp *p)
{
	resource_size_t bar = pci_resource_start(ibd->rdev->pdev, RNIC_BAR_SHM);
	u64 off;
	int err;

	memset(p, 0, sizeof(*p));
	if (atomic_inc_return(&ibd->user_dbps) > ibd->max_user_dbps) {
		atomic_dec(&ibd->user_dbps);
		ibdev_dbg(&ibd->ibdev, "user contexts hold all %d doorbell pages they may\n",
			  ibd->max_user_dbps);
		return -ENOSPC;
	}
	err = rnic_ib_dbp_alloc_page(ibd, &p->dbp, RNIC_DBP_F_USER);
	/* one kick value per context (rnic_ualloc_ctx_resp.kick) */
	if (!err && uctx->num_pages && p->dbp.kick != uctx->pages[0].dbp.kick) {
		ibdev_err(&ibd->ibdev, "ALLOC_DB_PAGE gave page %u kick %#x, not %#x as the context's first\n",
			  p->dbp.id, p->dbp.kick, uctx->pages[0].dbp.kick);
		err = -EPROTO;
	}
	if (!err) {
		off = ibd->caps.db_base + ((u64)p->dbp.id << ibd->caps.db_page_log2);
		p->me = rnic_ib_mentry_add(uctx, (bar + off) >> PAGE_SHIFT,
					   &p->key);
		if (IS_ERR(p->me)) {
			err = PTR_ERR(p->me);
			p->me = NULL;
		}
	}
	if (err)
		rnic_ib_udbp_release(ibd, p);
	return err;
}

/**
 * rnic_ib_udbp_get() - a page of the context with room for an object
 * @uctx: the user context
 * @slots: slots the object takes (a QP two, one with an SRQ; a CQ or an
 *	SRQ one)
 *
 * Return: the page, its slots counted (rnic_ib_udbp_put() gives them
 * back), or an ERR_PTR: -ENOSPC when the context holds
 * RNIC_IB_UCTX_MAX_DBPS full pages or user contexts hold all they may.
 */
struct rnic_ib_udbp *rnic_ib_udbp_get(struct rnic_ib_ucontext *uctx,
				      unsigned int slots)
{
	struct rnic_ibdev *ibd = to_ibdev(uctx->ibuc.device);
	struct rnic_ib_udbp *p = NULL;
	unsigned int i;
	int err = -ENOSPC;

	if (uctx->refused)
		return ERR_PTR(-uctx->refused);
	mutex_lock(&uctx->lock);
	for (i = 0; i < uctx->num_pages; i++) {
		if (uctx->pages[i].dbp.used + slots <= RNIC_DBP_SLOTS) {
			p = &uctx->pages[i];
			break;
		}
	}
	if (!p && uctx->num_pages < RNIC_IB_UCTX_MAX_DBPS) {
		err = rnic_ib_udbp_new(ibd, uctx, &uctx->pages[uctx->num_pages]);
		if (!err)
			p = &uctx->pages[uctx->num_pages++];
	}
	if (p)
		p->dbp.used += slots;
	mutex_unlock(&uctx->lock);
	return p ?: ERR_PTR(err);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_udbp_get);

/**
 * rnic_ib_udbp_put() - give back what rnic_ib_udbp_get() counted
 * @uctx: the user context
 * @dbp: the page (&rnic_ib_udbp.dbp)
 * @slots: as given to rnic_ib_udbp_get()
 *
 * The page stays the context's until it goes.
 */
void rnic_ib_udbp_put(struct rnic_ib_ucontext *uctx, struct rnic_ib_dbp *dbp,
		      unsigned int slots)
{
	mutex_lock(&uctx->lock);
	if (!WARN_ON_ONCE(dbp->used < slots))
		dbp->used -= slots;
	mutex_unlock(&uctx->lock);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_udbp_put);

/**
 * rnic_ib_udbp_key() - the mmap offset of a user page
 * @uctx: the user context
 * @dbp: one of its pages, from rnic_ib_udbp_get()
 *
 * Return: the offset the create responses give (db_key).
 */
u64 rnic_ib_udbp_key(struct rnic_ib_ucontext *uctx, struct rnic_ib_dbp *dbp)
{
	return container_of(dbp, struct rnic_ib_udbp, dbp)->key;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_udbp_key);

/* What the device and the kernel must offer for a user context */
static int rnic_ib_uctx_supported(struct rnic_ibdev *ibd)
{
	resource_size_t bar = pci_resource_start(ibd->rdev->pdev, RNIC_BAR_SHM);
	const struct rnic_ib_caps *c = &ibd->caps;

	if (!(c->flags & RNIC_RDMA_CAP_USER_DB)) {
		ibdev_dbg(&ibd->ibdev, "no user contexts: the device has no user doorbell pages (RNIC_RDMA_CAP_USER_DB)\n");
		return -EOPNOTSUPP;
	}
	if (BIT(c->db_page_log2) != PAGE_SIZE ||
	    !PAGE_ALIGNED(bar + c->db_base)) {
		ibdev_dbg(&ibd->ibdev, "no user contexts: doorbell pages of %lu bytes at BAR2 %#x do not map as %lu-byte pages\n",
			  BIT(c->db_page_log2), c->db_base, PAGE_SIZE);
		return -EOPNOTSUPP;
	}
	if (!(c->page_size_cap & PAGE_SIZE)) {
		ibdev_dbg(&ibd->ibdev, "no user contexts: the device takes no %lu-byte pages in page lists\n",
			  PAGE_SIZE);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Refuse a context in its response, not by failing the command: 6.12's
 * GET_CONTEXT ioctl (uverbs_std_types_device.c) frees a context that
 * alloc_ucontext failed without rdma_restrack_put(), so every refusal
 * leaks the task reference restrack took (a task_struct, its
 * signal_struct and creds once the process exits). A device that failed
 * or ran out of user doorbell pages is refused to every open, as often as
 * a process tries; a context that succeeds with a status is freed by
 * ib_core's normal release, which drops the reference.
 */
static int rnic_ib_uctx_refuse(struct rnic_ibdev *ibd,
			       struct rnic_ib_ucontext *uctx, int err,
			       struct ib_udata *udata)
{
	struct rnic_ualloc_ctx_resp resp = {
		.status = -err,
		.db_page_size = RNIC_DBP_SIZE,
		.max_sqe_log2 = ibd->caps.max_sqe_log2,
		.max_rqe_log2 = ibd->caps.max_rqe_log2,
	};

	uctx->refused = -err;
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_uctx_refused);
	ibdev_dbg(&ibd->ibdev, "user context of pid %d refused: %s\n",
		  task_tgid_vnr(current), err == -EIO ?
		  "the device failed (reload rnic)" :
		  "user contexts hold every doorbell page they may");
	return rnic_ib_udata_out(udata, &resp, sizeof(resp));
}

int rnic_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibuc->device);
	struct rnic_ib_ucontext *uctx = to_ructx(ibuc);
	struct rnic_ualloc_ctx_resp resp = {};
	unsigned long kick_pfn;
	struct rnic_ib_udbp *p;
	int err;

	err = rnic_ib_uctx_supported(ibd);
	if (err)
		return err;
	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = rnic_ib_udata_in(udata, NULL, 0);
	if (err)
		return err;
	mutex_init(&uctx->lock);

	/* the first page now, so that a context that gets none fails here */
	p = READ_ONCE(ibd->fatal) ? ERR_PTR(-EIO) : rnic_ib_udbp_get(uctx, 0);
	if (IS_ERR(p)) {
		/* the device may have failed during ALLOC_DB_PAGE */
		err = READ_ONCE(ibd->fatal) ? -EIO : PTR_ERR(p);
		if (err == -EIO || err == -ENOSPC) {
			err = rnic_ib_uctx_refuse(ibd, uctx, err, udata);
			if (!err)
				return 0;
		}
		goto err_free;
	}
	if (ibd->kick_mmap) {
		kick_pfn = pci_resource_start(ibd->rdev->pdev,
					      RNIC_BAR_IVSHMEM) >> PAGE_SHIFT;
		uctx->kick_me = rnic_ib_mentry_add(uctx, kick_pfn,
						   &resp.kick_key);
		if (IS_ERR(uctx->kick_me)) {
			err = PTR_ERR(uctx->kick_me);
			uctx->kick_me = NULL;
			goto err_free;
		}
		resp.flags |= RNIC_UCTX_F_KICK_MMAP;
		if (ibd->caps.flags & RNIC_RDMA_CAP_KICK_CI)
			resp.flags |= RNIC_UCTX_F_KICK_CI;
	}
	if (ibd->caps.flags & RNIC_RDMA_CAP_RQ_PEEK)
		resp.flags |= RNIC_UCTX_F_RQ_PEEK;
	resp.db_key = p->key;
	resp.kick = p->dbp.kick;
	resp.kick_off = RNIC_IVSHMEM_DOORBELL;
	resp.db_page_size = RNIC_DBP_SIZE;
	resp.max_sqe_log2 = ibd->caps.max_sqe_log2;
	resp.max_rqe_log2 = ibd->caps.max_rqe_log2;
	resp.max_inline = ibd->caps.max_inline;
	err = rnic_ib_udata_out(udata, &resp, sizeof(resp));
	if (err)
		goto err_free;
	return 0;

err_free:
	rnic_ib_dealloc_ucontext(ibuc);
	return err;
}

/*
 * After ib_core destroyed the context's objects: their slots are back,
 * and nothing maps the pages any more (see the top of this file).
 */
void rnic_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct rnic_ibdev *ibd = to_ibdev(ibuc->device);
	struct rnic_ib_ucontext *uctx = to_ructx(ibuc);
	unsigned int i;

	if (uctx->kick_me)
		rdma_user_mmap_entry_remove(&uctx->kick_me->rdma);
	uctx->kick_me = NULL;
	/*
	 * A page still counts the slots of objects whose DESTROY failed (the
	 * device failed or was reset): FREE_DB_PAGE then fails too, and the
	 * page is the device's until its reset.
	 */
	for (i = 0; i < uctx->num_pages; i++)
		rnic_ib_udbp_release(ibd, &uctx->pages[i]);
	uctx->num_pages = 0;
	mutex_destroy(&uctx->lock);
}

/*
 * Non-NULL so that unbind and rmmod do not wait for the processes to
 * close their files: ib_core destroys the context's objects and zaps its
 * mappings (the pages are I/O memory, nothing of ours to revoke), then
 * calls dealloc_ucontext; the process sees its verbs fail.
 */
void rnic_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int rnic_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct rnic_ib_mentry *me;
	int err;

	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry)
		return -EINVAL;
	me = container_of(entry, struct rnic_ib_mentry, rdma);
	if (vma->vm_end - vma->vm_start != entry->npages * PAGE_SIZE)
		err = -EINVAL;
	else if (vma->vm_flags & VM_EXEC)
		err = -EPERM;
	else
		err = rdma_user_mmap_io(ibuc, vma, me->pfn, PAGE_SIZE,
					pgprot_noncached(vma->vm_page_prot),
					entry);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void rnic_ib_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(container_of(entry, struct rnic_ib_mentry, rdma));
}
