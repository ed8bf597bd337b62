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

	if (udata)
		return -EOPNOTSUPP;
	/* a kernel PD: DMA and fast-reg MRs, GSI, REG_MR WQEs */
	pd->privileged = true;
	c.hdr.opcode = RNIC_AQ_ALLOC_PD;
	c.flags = cpu_to_le32(RNIC_PD_F_PRIVILEGED);
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

static int rnic_ib_create_mr(struct rnic_ibdev *ibd, struct rnic_ib_mr *mr,
			     struct rnic_ib_pd *pd, u8 type, int access,
			     u32 npages)
{
	struct rnic_aq_create_mr c = {};
	union rnic_aq_resp r;
	u32 key;
	int hw, err;

	hw = rnic_ib_mr_access(access);
	if (hw < 0)
		return hw;
	c.hdr.opcode = RNIC_AQ_CREATE_MR;
	c.type = type;
	c.access = hw;
	c.pdn = cpu_to_le32(pd->pdn);
	c.npages = cpu_to_le32(npages);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err)
		return err;
	key = le32_to_cpu(r.id.id);
	if (!FIELD_GET(RNIC_KEY_INDEX, key)) {
		ibdev_err(&ibd->ibdev, "CREATE_MR returned key %#x, index 0\n",
			  key);
		return -EPROTO;
	}
	mr->type = type;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
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
 * User memory registration comes with the userspace provider. The op must
 * exist all the same: ib_core counts reg_user_mr among the mandatory ops
 * (ib_device_check_mandatory()) and, without it, adds no kernel client
 * (ib_mad, ib_cm, rdma_cm) to the device.
 */
struct ib_mr *rnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
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

	if (udata || !sgid)
		return -EINVAL;
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
	if (srq->dbp && destroyed)
		rnic_ib_dbp_put(ibd, srq->dbp, 1);
	srq->dbp = NULL;
	rnic_ib_free_dma(ibd, destroyed, (size_t)depth << srq->rqe_log2,
			 srq->wqes, srq->wqe_dma);
	rnic_ib_free_dma(ibd, destroyed, depth * sizeof(*srq->idx), srq->idx,
			 srq->idx_dma);
	bitmap_free(srq->busy);
	kfree(srq->wrid);
	kfree(srq->len);
}

int rnic_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibsrq->device);
	struct rnic_ib_srq *srq = to_rsrq(ibsrq);
	struct ib_srq_attr *a = &init->attr;
	struct rnic_aq_create_srq c = {};
	union rnic_aq_resp r;
	u32 depth;
	int err;

	if (udata || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!ibd->caps.max_srq)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > BIT(ibd->caps.max_srq_log2) ||
	    a->max_sge > ibd->caps.max_srq_sge || a->srq_limit > a->max_wr)
		return -EINVAL;
	depth = roundup_pow_of_two(max_t(u32, a->max_wr, 4));
	srq->log2_depth = ilog2(depth);
	srq->rqe_log2 = rnic_ib_rqe_log2(a->max_sge);
	if (srq->rqe_log2 > ibd->caps.max_rqe_log2)
		return -EINVAL;
	srq->max_sge = min_t(u32, rnic_rqe_max_sge(srq->rqe_log2),
			     ibd->caps.max_srq_sge);
	spin_lock_init(&srq->lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->gone);
	srq->busy = bitmap_zalloc(depth, GFP_KERNEL);
	srq->wrid = kcalloc(depth, sizeof(*srq->wrid), GFP_KERNEL);
	srq->len = kcalloc(depth, sizeof(*srq->len), GFP_KERNEL);
	srq->wqes = dma_alloc_coherent(rnic_ib_dma(ibd),
				       (size_t)depth << srq->rqe_log2,
				       &srq->wqe_dma, GFP_KERNEL);
	srq->idx = dma_alloc_coherent(rnic_ib_dma(ibd),
				      depth * sizeof(*srq->idx),
				      &srq->idx_dma, GFP_KERNEL);
	if (!srq->busy || !srq->wrid || !srq->len || !srq->wqes || !srq->idx) {
		err = -ENOMEM;
		goto err_free;
	}

	srq->dbp = rnic_ib_dbp_get(ibd, 1);
	if (IS_ERR(srq->dbp)) {
		err = PTR_ERR(srq->dbp);
		srq->dbp = NULL;
		goto err_free;
	}

	c.hdr.opcode = RNIC_AQ_CREATE_SRQ;
	c.pdn = cpu_to_le32(to_rpd(ibsrq->pd)->pdn);
	c.db_page = cpu_to_le32(srq->dbp->id);
	c.wqe_addr = cpu_to_le64(srq->wqe_dma);
	c.idx_addr = cpu_to_le64(srq->idx_dma);
	c.log2_depth = srq->log2_depth;
	c.rqe_log2 = srq->rqe_log2;
	c.limit = cpu_to_le32(a->srq_limit);
	err = rnic_ib_cmd(ibd, &c, sizeof(c), &r);
	if (err) {
		/* unanswered, it may have created the SRQ: kept until the reset */
		rnic_ib_srq_free_mem(ibd, srq, rnic_dma_may_free(err, false, false));
		return err;
	}
	srq->srqn = le32_to_cpu(r.create_srq.srqn);
	srq->db_off = le16_to_cpu(r.create_srq.db_off);
	if (!rnic_ib_db_off_ok(srq->db_off) ||
	    xa_insert_irq(&ibd->srq_xa, srq->srqn, srq, GFP_KERNEL)) {
		ibdev_err(&ibd->ibdev, "CREATE_SRQ returned SRQN %u (in use?), doorbell %#x\n",
			  srq->srqn, srq->db_off);
		rnic_ib_srq_free_mem(ibd, srq,
				     !rnic_ib_cmd_destroy(ibd, RNIC_AQ_DESTROY_SRQ,
							  srq->srqn));
		return -EPROTO;
	}
	a->max_wr = depth;
	a->max_sge = srq->max_sge;
	return 0;

err_free:
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
