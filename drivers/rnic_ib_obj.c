// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: protection domains, memory regions, address handles and
 * shared receive queues.
 *
 * PDs, MRs and SRQs are admin commands. A DMA MR (a kernel PD's local
 * DMA lkey, ib_get_dma_mr()) makes the DMA address space MR space, so a
 * ULP's ib_dma_map_*() addresses are its SGE addresses; a fast-reg MR
 * gets its pages from map_mr_sg, as DMA addresses in a list the REG_MR
 * WQE names. An AH is an entry of the AH table in host memory, written
 * without a command, because the MAD layer creates AHs in atomic context.
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_umem.h>
#include <uapi/rdma/rnic-abi.h>

#include "rnic_param.h"
#include "rnic_verbs.h"
#include "rnic_ib_tmpl.h"
#include "rnic_ib_wqe.h"

/* ------------------------------------------------------------------------
 * Protection domains
 */

int rnic_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibpd->device);
	struct rnic_ib_pd *pd = to_rpd(ibpd);
	struct rnic_aq_alloc_pd c = {};
	union rnic_aq_resp r;
	int err;

	if (udata) {
		/* a user PD is never privileged: no DMA MR, GSI or REG_MR */
		err = rnic_ib_udata_in(udata, NULL, 0);
		if (err)
			return err;
		pd->privileged = false;
	} else {
		/* a kernel PD: DMA and fast-reg MRs, GSI, REG_MR WQEs */
		pd->privileged = true;
		c.flags = cpu_to_le32(RNIC_PD_F_PRIVILEGED);
	}
	c.hdr.opcode = RNIC_AQ_ALLOC_PD;
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err)
		return err;
	pd->pdn = le32_to_cpu(r.id.id);
	return 0;
}

int rnic_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	/* a PD is a number: nothing of ours to keep if this fails */
	rnic_ib_cmd_destroy(to_ibdev(ibpd->device), RNIC_AQ_DEALLOC_PD,
			    to_rpd(ibpd)->pdn);
	return 0;
}

/* ------------------------------------------------------------------------
 * Memory regions
 */

/* CREATE_MR of @c, its type, PD and page fields filled; the key into @mr */
static int rnic_ib_mr_cmd(struct rnic_ibdev *ibd, struct rnic_ib_mr *mr,
			  struct rnic_aq_create_mr *c)
{
	union rnic_aq_resp r;
	u32 key;
	int err;

	c->hdr.opcode = RNIC_AQ_CREATE_MR;
	err = rnic_ib_cmd(ibd, c, sizeof(*c), &r);
	if (err)
		return err;
	key = le32_to_cpu(r.id.id);
	if (!FIELD_GET(RNIC_KEY_INDEX, key)) {
		ibdev_err(&ibd->ibdev, "CREATE_MR returned key %#x, index 0\n",
			  key);
		return -EPROTO;
	}
	mr->type = c->type;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

static int rnic_ib_create_mr(struct rnic_ibdev *ibd, struct rnic_ib_mr *mr,
			     struct rnic_ib_pd *pd, u8 type, int access,
			     u32 npages)
{
	struct rnic_aq_create_mr c = {};
	int hw;

	hw = rnic_ib_mr_access(access);
	if (hw < 0)
		return hw;
	c.type = type;
	c.access = hw;
	c.pdn = cpu_to_le32(pd->pdn);
	c.npages = cpu_to_le32(npages);
	return rnic_ib_mr_cmd(ibd, mr, &c);
}

struct ib_mr *rnic_ib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rnic_ibdev *ibd = to_ibdev(ibpd->device);
	struct rnic_ib_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = rnic_ib_create_mr(ibd, mr, to_rpd(ibpd), RNIC_MRT_DMA, access,
				0);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *rnic_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct rnic_ibdev *ibd = to_ibdev(ibpd->device);
	struct rnic_ib_mr *mr;
	size_t size;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(ibd->caps.flags & RNIC_RDMA_CAP_REG_MR))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > ibd->caps.max_mr_pages)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_pages = max_num_sg;
	size = max_num_sg * sizeof(*mr->pbl);
	mr->pbl = dma_alloc_coherent(rnic_ib_dma(ibd), size, &mr->pbl_dma,
				     GFP_KERNEL);
	if (!mr->pbl) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	/* the REG_MR WQE gives the access; the MR starts FREE */
	err = rnic_ib_create_mr(ibd, mr, to_rpd(ibpd), RNIC_MRT_FAST_REG, 0,
				max_num_sg);
	if (err) {
		/*
		 * The device reads the page list only in REG_MR WQEs, none of
		 * which names this MR yet; but an unanswered CREATE_MR may have
		 * made it, and then the list is kept until the reset anyway.
		 */
		rnic_ib_free_dma(ibd, rnic_dma_may_free(err, false, false), size,
				 mr->pbl, mr->pbl_dma);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * The access flags of a user MR: the four rights, the optional flags
 * (ignored, as ib_verbs.h allows) and the legacy IB_ACCESS_HUGETLB, which
 * says nothing the page size search does not find. ODP, memory windows,
 * zero-based MRs and the FLUSH rights are not offered (-EOPNOTSUPP); a
 * remote right without local write is refused (-EINVAL).
 */
static int rnic_ib_umr_access(struct rnic_ibdev *ibd, int access)
{
	int a = access & ~(IB_ACCESS_OPTIONAL | IB_ACCESS_HUGETLB);

	if (a & IB_ACCESS_ON_DEMAND) {
		ibdev_dbg(&ibd->ibdev, "reg_user_mr: no on-demand paging\n");
		return -EOPNOTSUPP;
	}
	if (a & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)) {
		ibdev_dbg(&ibd->ibdev, "reg_user_mr: access %#x not offered\n",
			  access);
		return -EOPNOTSUPP;
	}
	return rnic_ib_mr_access(a);
}

/*
 * A user MR: the process's pages, pinned, given to the device as a page
 * list at CREATE_MR (type PBL), in the largest pages the device takes
 * that the memory allows. The device copies the list at create; the pages
 * stay pinned until DESTROY_MR completed (rnic_ib_umem_free()).
 */
struct ib_mr *rnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibpd->device);
	struct rnic_aq_create_mr c = {};
	struct rnic_ib_pbl pbl = {};
	struct rnic_ib_mr *mr;
	unsigned long pgsz;
	int hw, err;

	/* ib_core's one kernel caller has no use here */
	if (!udata)
		return ERR_PTR(-EOPNOTSUPP);
	hw = rnic_ib_umr_access(ibd, access);
	if (hw < 0)
		return ERR_PTR(hw);
	err = rnic_ib_udata_in(udata, NULL, 0);
	if (err)
		return ERR_PTR(err);
	/* the device translates iova by page: the offsets in a page match */
	if (!length || length > ibd->caps.max_mr_size ||
	    ((start ^ virt_addr) & ~PAGE_MASK))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	pgsz = ib_umem_find_best_pgsz(mr->umem, ibd->caps.page_size_cap,
				      virt_addr);
	if (!pgsz || ib_umem_num_dma_blocks(mr->umem, pgsz) >
		     ibd->caps.max_pbl_pages) {
		ibdev_dbg(&ibd->ibdev, "reg_user_mr: %llu bytes need more than %u pages\n",
			  length, ibd->caps.max_pbl_pages);
		err = -EINVAL;
		goto err_release;
	}
	err = rnic_ib_pbl_build(ibd, mr->umem, pgsz, &pbl);
	if (err)
		goto err_release;
	c.type = RNIC_MRT_PBL;
	c.access = hw;
	c.page_log2 = ilog2(pgsz);
	c.pdn = cpu_to_le32(to_rpd(ibpd)->pdn);
	c.iova = cpu_to_le64(virt_addr);
	c.length = cpu_to_le64(length);
	c.pbl_addr = cpu_to_le64(pbl.dma);
	c.npages = cpu_to_le32(pbl.n);
	err = rnic_ib_mr_cmd(ibd, mr, &c);
	/* the device copied the list, or took nothing */
	rnic_ib_pbl_free(ibd, &pbl, err);
	if (err) {
		/*
		 * Unanswered, it may have made the MR; with a bad key it did,
		 * under a key that cannot be destroyed: the pages stay pinned.
		 */
		rnic_ib_umem_free(ibd, err != -EPROTO &&
				  rnic_dma_may_free(err, false, false),
				  mr->umem);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.iova = virt_addr;
	mr->ibmr.length = length;
	return &mr->ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int rnic_ib_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rnic_ib_mr *mr = to_rmr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->pbl[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/*
 * The page list of the next REG_MR: the ULP's DMA addresses, split into
 * mr->page_size pages by ib_sg_to_pages(). The device reads the list
 * when that WQE runs, so the ULP must not remap before it completed, as
 * for every fast-reg provider.
 */
int rnic_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset)
{
	struct rnic_ib_mr *mr = to_rmr(ibmr);

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rnic_ib_set_page);
}

int rnic_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibmr->device);
	struct rnic_ib_mr *mr = to_rmr(ibmr);
	bool destroyed;

	destroyed = !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_MR, ibmr->lkey);
	if (mr->pbl)
		rnic_ib_free_dma(ibd, destroyed,
				 mr->max_pages * sizeof(*mr->pbl), mr->pbl,
				 mr->pbl_dma);
	rnic_ib_umem_free(ibd, destroyed, mr->umem);
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------------
 * Address handles
 */

/**
 * rnic_ib_ah_table_init() - allocate the AH table and give it the device
 * @ibd: the device
 *
 * Return: 0 or a negative errno. The pages stay allocated until
 * rnic_ib_ah_table_free(), after the reset: the device may read them
 * until then.
 */
int rnic_ib_ah_table_init(struct rnic_ibdev *ibd)
{
	struct rnic_aq_set_ah_table c = {};
	u32 n = rounddown(ibd->caps.max_ah, RNIC_AH_PER_PAGE);
	u32 pages = n / RNIC_AH_PER_PAGE, i;
	dma_addr_t pbl_dma;
	__le64 *pbl;
	int err;

	ibd->ah_va = kcalloc(pages, sizeof(*ibd->ah_va), GFP_KERNEL);
	ibd->ah_dma = kcalloc(pages, sizeof(*ibd->ah_dma), GFP_KERNEL);
	ibd->ah_map = bitmap_zalloc(n, GFP_KERNEL);
	if (!ibd->ah_va || !ibd->ah_dma || !ibd->ah_map)
		return -ENOMEM;
	ibd->num_ah = n;
	for (i = 0; i < pages; i++) {
		ibd->ah_va[i] = dma_alloc_coherent(rnic_ib_dma(ibd),
						   RNIC_AH_PAGE_SIZE,
						   &ibd->ah_dma[i], GFP_KERNEL);
		if (!ibd->ah_va[i])
			return -ENOMEM;
	}
	/* entry 0 is never valid: a zeroed WQE cannot send */
	set_bit(0, ibd->ah_map);

	pbl = dma_alloc_coherent(rnic_ib_dma(ibd), pages * sizeof(*pbl),
				 &pbl_dma, GFP_KERNEL);
	if (!pbl)
		return -ENOMEM;
	for (i = 0; i < pages; i++)
		pbl[i] = cpu_to_le64(ibd->ah_dma[i]);
	c.hdr.opcode = RNIC_AQ_SET_AH_TABLE;
	c.pbl_addr = cpu_to_le64(pbl_dma);
	c.num_entries = cpu_to_le32(n);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), NULL);
	/* the device copied the list, or keeps nothing of a failed command */
	rnic_ib_free_dma(ibd, rnic_dma_may_free(err, false, false),
			 pages * sizeof(*pbl), pbl, pbl_dma);
	if (err) {
		ibdev_err(&ibd->ibdev, "SET_AH_TABLE of %u entries failed: %d\n",
			  n, err);
		return err;
	}
	ibd->ah_set = true;
	return 0;
}

/* After the reset: the device reads the table until then */
void rnic_ib_ah_table_free(struct rnic_ibdev *ibd)
{
	u32 i;

	for (i = 0; ibd->ah_va && i < ibd->num_ah / RNIC_AH_PER_PAGE; i++)
		if (ibd->ah_va[i])
			dma_free_coherent(rnic_ib_dma(ibd), RNIC_AH_PAGE_SIZE,
					  ibd->ah_va[i], ibd->ah_dma[i]);
	kfree(ibd->ah_va);
	kfree(ibd->ah_dma);
	bitmap_free(ibd->ah_map);
	ibd->ah_va = NULL;
	ibd->ah_dma = NULL;
	ibd->ah_map = NULL;
}

static struct rnic_hdr_tmpl *rnic_ib_ah_entry(struct rnic_ibdev *ibd, u32 idx)
{
	return ibd->ah_va[idx / RNIC_AH_PER_PAGE] +
	       (idx % RNIC_AH_PER_PAGE) * RNIC_TMPL_SIZE;
}

/* Any context: the MAD layer creates AHs with a spinlock held */
int rnic_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibah->device);
	struct rnic_ib_ah *ah = to_rah(ibah);
	struct rdma_ah_attr *attr = init->ah_attr;
	const struct ib_gid_attr *sgid = attr->grh.sgid_attr;
	struct rnic_ib_tmpl_in in;
	struct rnic_hdr_tmpl tmpl, *e;
	unsigned long flags;
	u8 smac[ETH_ALEN];
	u16 vlan_id;
	u32 idx;
	int err;

	if (!sgid)
		return -EINVAL;
	if (udata) {
		if (udata->outlen < sizeof(struct rnic_ucreate_ah_resp))
			return -EINVAL;
		err = rnic_ib_udata_in(udata, NULL, 0);
		if (err)
			return err;
	}
	err = rdma_read_gid_l2_fields(sgid, &vlan_id, smac);
	if (err)
		return err;
	err = rnic_ib_tmpl_in_from_ah(&in, attr, smac, vlan_id,
				      rnic_params.pfc_prio,
				      rnic_params.roce_udp_port, 0, 0);
	if (err)
		return err;
	in.pdn = to_rpd(ibah->pd)->pdn;
	err = rnic_ib_tmpl_build(&tmpl, &in);
	if (err)
		return err;

	spin_lock_irqsave(&ibd->ah_lock, flags);
	idx = find_first_zero_bit(ibd->ah_map, ibd->num_ah);
	if (idx < ibd->num_ah)
		set_bit(idx, ibd->ah_map);
	spin_unlock_irqrestore(&ibd->ah_lock, flags);
	if (idx >= ibd->num_ah)
		return -ENOMEM;

	/* the whole entry, VALID clear, before VALID */
	e = rnic_ib_ah_entry(ibd, idx);
	memcpy(e, &tmpl, sizeof(tmpl));
	dma_wmb();
	WRITE_ONCE(e->flags, cpu_to_le32(le32_to_cpu(tmpl.flags) |
					 RNIC_TMPL_F_VALID));
	ah->idx = idx;
	if (udata) {
		struct rnic_ucreate_ah_resp resp = { .ah = idx };

		err = rnic_ib_udata_out(udata, &resp, sizeof(resp));
		if (err) {
			rnic_ib_destroy_ah(ibah, 0);
			return err;
		}
	}
	return 0;
}

int rnic_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rnic_ibdev *ibd = to_ibdev(ibah->device);
	struct rnic_ib_ah *ah = to_rah(ibah);
	unsigned long irqflags;

	WRITE_ONCE(rnic_ib_ah_entry(ibd, ah->idx)->flags, 0);
	spin_lock_irqsave(&ibd->ah_lock, irqflags);
	clear_bit(ah->idx, ibd->ah_map);
	spin_unlock_irqrestore(&ibd->ah_lock, irqflags);
	return 0;
}

/* ------------------------------------------------------------------------
 * Shared receive queues
 */

struct rnic_ib_srq *rnic_ib_srq_get(struct rnic_ibdev *ibd, u32 srqn)
{
	struct rnic_ib_srq *srq;

	xa_lock_irq(&ibd->srq_xa);
	srq = xa_load(&ibd->srq_xa, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	xa_unlock_irq(&ibd->srq_xa);
	return srq;
}

void rnic_ib_srq_put(struct rnic_ib_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->gone);
}

static void rnic_ib_srq_free_mem(struct rnic_ibdev *ibd, struct rnic_ib_srq *srq,
				 bool destroyed)
{
	u32 depth = BIT(srq->log2_depth);

	/* an SRQ the device may still have keeps its slot until the reset */
	if (srq->dbp && destroyed) {
		if (srq->uctx)
			rnic_ib_udbp_put(srq->uctx, srq->dbp, 1);
		else
			rnic_ib_dbp_put(ibd, srq->dbp, 1);
	}
	srq->dbp = NULL;
	rnic_ib_free_dma(ibd, destroyed, (size_t)depth << srq->rqe_log2,
			 srq->wqes, srq->wqe_dma);
	rnic_ib_free_dma(ibd, destroyed, depth * sizeof(*srq->idx), srq->idx,
			 srq->idx_dma);
	srq->wqes = NULL;
	srq->idx = NULL;
	rnic_ib_umem_free(ibd, destroyed, srq->wqe_umem);
	rnic_ib_umem_free(ibd, destroyed, srq->idx_umem);
	srq->wqe_umem = NULL;
	srq->idx_umem = NULL;
	bitmap_free(srq->busy);
	kfree(srq->wrid);
	kfree(srq->len);
	srq->busy = NULL;
	srq->wrid = NULL;
	srq->len = NULL;
}

/* A kernel SRQ's rings, slot bookkeeping and doorbell slot */
static int rnic_ib_ksrq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_srq *srq,
			      struct rnic_aq_create_srq *c)
{
	u32 depth = BIT(srq->log2_depth);

	srq->busy = bitmap_zalloc(depth, GFP_KERNEL);
	srq->wrid = kcalloc(depth, sizeof(*srq->wrid), GFP_KERNEL);
	srq->len = kcalloc(depth, sizeof(*srq->len), GFP_KERNEL);
	srq->wqes = dma_alloc_coherent(rnic_ib_dma(ibd),
				       (size_t)depth << srq->rqe_log2,
				       &srq->wqe_dma, GFP_KERNEL);
	srq->idx = dma_alloc_coherent(rnic_ib_dma(ibd),
				      depth * sizeof(*srq->idx),
				      &srq->idx_dma, GFP_KERNEL);
	if (!srq->busy || !srq->wrid || !srq->len || !srq->wqes || !srq->idx)
		return -ENOMEM;
	srq->dbp = rnic_ib_dbp_get(ibd, 1);
	if (IS_ERR(srq->dbp)) {
		int err = PTR_ERR(srq->dbp);

		srq->dbp = NULL;
		return err;
	}
	c->wqe_addr = cpu_to_le64(srq->wqe_dma);
	c->idx_addr = cpu_to_le64(srq->idx_dma);
	return 0;
}

/*
 * A user SRQ's WQE slots and index ring, pinned, as page lists in @pbl
 * (the caller frees them after CREATE_SRQ), and a slot in its context.
 */
static int rnic_ib_usrq_alloc(struct rnic_ibdev *ibd, struct rnic_ib_srq *srq,
			      const struct rnic_ucreate_srq *req,
			      struct rnic_aq_create_srq *c,
			      struct rnic_ib_pbl pbl[2])
{
	struct rnic_ib_udbp *p;
	int err;

	err = rnic_ib_uring_get(ibd, req->wqe_va,
				rnic_ib_uring_bytes(srq->log2_depth,
						    srq->rqe_log2),
				&srq->wqe_umem);
	if (!err)
		err = rnic_ib_uring_get(ibd, req->idx_va,
					rnic_ib_uring_bytes(srq->log2_depth,
							    ilog2(RNIC_SRQ_IDX_SIZE)),
					&srq->idx_umem);
	if (!err)
		err = rnic_ib_pbl_build(ibd, srq->wqe_umem, PAGE_SIZE, &pbl[0]);
	if (!err)
		err = rnic_ib_pbl_build(ibd, srq->idx_umem, PAGE_SIZE, &pbl[1]);
	if (err)
		return err;
	p = rnic_ib_udbp_get(srq->uctx, 1);
	if (IS_ERR(p))
		return PTR_ERR(p);
	srq->dbp = &p->dbp;
	c->wqe_addr = cpu_to_le64(pbl[0].dma);
	c->idx_addr = cpu_to_le64(pbl[1].dma);
	c->page_log2 = PAGE_SHIFT;
	c->flags = RNIC_SRQ_F_WQE_PBL | RNIC_SRQ_F_IDX_PBL;
	return 0;
}

/* A user context's request (rnic_ucreate_srq), checked against @a */
static int rnic_ib_usrq_req(struct rnic_ibdev *ibd, struct ib_udata *udata,
			    const struct ib_srq_attr *a,
			    struct rnic_ucreate_srq *req)
{
	const struct rnic_ib_caps *c = &ibd->caps;
	int err;

	if (udata->outlen < sizeof(struct rnic_ucreate_srq_resp))
		return -EINVAL;
	err = rnic_ib_udata_in(udata, req, sizeof(*req));
	if (err)
		return err;
	if (memchr_inv(req->reserved, 0, sizeof(req->reserved)) ||
	    !req->idx_va || !PAGE_ALIGNED(req->idx_va))
		return -EINVAL;
	return rnic_ib_uwq_check(req->wqe_va, req->log2_depth, req->rqe_log2,
				 RNIC_RQE_LOG2_MIN, c->max_rqe_log2,
				 c->max_srq_log2, a->max_wr,
				 rnic_ib_rqe_log2(a->max_sge));
}

int rnic_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_ucontext *uctx = rnic_ib_uctx(udata);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	struct ib_srq_attr *a = &init->attr;
	struct rnic_ucreate_srq_resp resp = {};
	struct rnic_aq_create_srq c = {};
	struct rnic_ib_pbl pbl[2] = {};
	struct rnic_ucreate_srq ureq;
	union rnic_aq_resp r;
	u32 depth;
	int err;

	if ((udata && !uctx) || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!ibd->caps.max_srq)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > BIT(ibd->caps.max_srq_log2) ||
	    a->max_sge > ibd->caps.max_srq_sge || a->srq_limit > a->max_wr)
		return -EINVAL;
	if (uctx) {
		err = rnic_ib_usrq_req(ibd, udata, a, &ureq);
		if (err)
			return err;
		depth = BIT(ureq.log2_depth);
		srq->rqe_log2 = ureq.rqe_log2;
	} else {
		depth = roundup_pow_of_two(max_t(u32, a->max_wr, 4));
		srq->rqe_log2 = rnic_ib_rqe_log2(a->max_sge);
		if (srq->rqe_log2 > ibd->caps.max_rqe_log2)
			return -EINVAL;
	}
	srq->log2_depth = ilog2(depth);
	srq->max_sge = min_t(u32, rnic_rqe_max_sge(srq->rqe_log2),
			     ibd->caps.max_srq_sge);
	spin_lock_init(&srq->lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->gone);
	srq->uctx = uctx;
	if (uctx)
		err = rnic_ib_usrq_alloc(ibd, srq, &ureq, &c, pbl);
	else
		err = rnic_ib_ksrq_alloc(ibd, srq, &c);
	if (err)
		goto err_free;

	c.hdr.opcode = RNIC_AQ_CREATE_SRQ;
	c.pdn = cpu_to_le32(to_rpd(ibsrq->pd)->pdn);
	c.db_page = cpu_to_le32(srq->dbp->id);
	c.log2_depth = srq->log2_depth;
	c.rqe_log2 = srq->rqe_log2;
	c.limit = cpu_to_le32(a->srq_limit);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	/* the device copied the page lists, or took nothing */
	rnic_ib_pbl_free(ibd, &pbl[0], err);
	rnic_ib_pbl_free(ibd, &pbl[1], err);
	if (err) {
		/* unanswered, it may have created the SRQ: kept until the reset */
		rnic_ib_srq_free_mem(ibd, srq, rnic_dma_may_free(err, false, false));
		return err;
	}
	srq->srqn = le32_to_cpu(r.create_srq.srqn);
	srq->db_off = le16_to_cpu(r.create_srq.db_off);
	if (!rnic_ib_db_off_ok(srq->db_off)) {
		err = -EPROTO;
		goto err_destroy;
	}
	if (uctx) {
		resp.db_key = rnic_ib_udbp_key(uctx, srq->dbp);
		resp.srqn = srq->srqn;
		resp.db_off = srq->db_off;
		err = rnic_ib_udata_out(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy;
	}
	if (xa_insert_irq(&ibd->srq_xa, srq->srqn, srq, GFP_KERNEL)) {
		err = -EPROTO;
		goto err_destroy;
	}
	a->max_wr = depth;
	a->max_sge = srq->max_sge;
	return 0;

err_destroy:
	if (err == -EPROTO)
		ibdev_err(&ibd->ibdev, "CREATE_SRQ returned SRQN %u (in use?), doorbell %#x\n",
			  srq->srqn, srq->db_off);
	rnic_ib_srq_free_mem(ibd, srq,
			     !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_SRQ,
						  srq->srqn));
	return err;
err_free:
	rnic_ib_pbl_free(ibd, &pbl[0], 0);
	rnic_ib_pbl_free(ibd, &pbl[1], 0);
	rnic_ib_srq_free_mem(ibd, srq, true);
	return err;
}

int rnic_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	struct rnic_aq_modify_srq c = {};

	/* the device cannot resize an SRQ */
	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > BIT(srq->log2_depth))
		return -EINVAL;
	c.hdr.opcode = RNIC_AQ_MODIFY_SRQ;
	c.srqn = cpu_to_le32(srq->srqn);
	c.attr_mask = cpu_to_le32(RNIC_SRQ_ATTR_LIMIT);
	c.limit = cpu_to_le32(attr->srq_limit);
	return rnic_ib_cmd(ibd, &c, sizeof(c), NULL);
}

int rnic_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	struct rnic_aq_obj c = {};
	union rnic_aq_resp r;
	int err;

	c.hdr.opcode = RNIC_AQ_QUERY_SRQ;
	c.handle = cpu_to_le32(srq->srqn);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err)
		return err;
	attr->srq_limit = le32_to_cpu(r.query_srq.limit);
	attr->max_wr = BIT(srq->log2_depth);
	attr->max_sge = srq->max_sge;
	return 0;
}

int rnic_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	bool destroyed;

	destroyed = !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_SRQ, srq->srqn);
	xa_erase_irq(&ibd->srq_xa, srq->srqn);
	if (!refcount_dec_and_test(&srq->ref))
		wait_for_completion(&srq->gone);
	rnic_ib_srq_free_mem(ibd, srq, destroyed);
	return 0;
}
