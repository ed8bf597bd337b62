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
#include "rnic_v2.h"
#include "rnic_v2_tmpl.h"
#include "rnic_v2_wqe.h"

/* ------------------------------------------------------------------------
 * Protection domains
 */

int rnic_v2_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibpd->device);
	struct rnic_v2_pd *pd = to_v2pd(ibpd);
	struct rnic_aq_alloc_pd c = {};
	union rnic_aq_resp r;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	/* a kernel PD: DMA and fast-reg MRs, GSI, REG_MR WQEs */
	pd->privileged = true;
	c.hdr.opcode = RNIC_AQ_ALLOC_PD;
	c.flags = cpu_to_le32(RNIC_PD_F_PRIVILEGED);
	err = rnic_v2_cmd(v2, &c, sizeof(c), &r);
	if (err)
		return err;
	pd->pdn = le32_to_cpu(r.id.id);
	return 0;
}

int rnic_v2_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	/* a PD is a number: nothing of ours to keep if this fails */
	rnic_v2_cmd_destroy(to_v2(ibpd->device), RNIC_AQ_DEALLOC_PD,
			    to_v2pd(ibpd)->pdn);
	return 0;
}

/* ------------------------------------------------------------------------
 * Memory regions
 */

static int rnic_v2_create_mr(struct rnic_v2 *v2, struct rnic_v2_mr *mr,
			     struct rnic_v2_pd *pd, u8 type, int access,
			     u32 npages)
{
	struct rnic_aq_create_mr c = {};
	union rnic_aq_resp r;
	u32 key;
	int hw, err;

	hw = rnic_v2_mr_access(access);
	if (hw < 0)
		return hw;
	c.hdr.opcode = RNIC_AQ_CREATE_MR;
	c.type = type;
	c.access = hw;
	c.pdn = cpu_to_le32(pd->pdn);
	c.npages = cpu_to_le32(npages);
	err = rnic_v2_cmd(v2, &c, sizeof(c), &r);
	if (err)
		return err;
	key = le32_to_cpu(r.id.id);
	if (!FIELD_GET(RNIC_KEY_INDEX, key)) {
		ibdev_err(&v2->ibdev, "CREATE_MR returned key %#x, index 0\n",
			  key);
		return -EPROTO;
	}
	mr->type = type;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return 0;
}

struct ib_mr *rnic_v2_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rnic_v2 *v2 = to_v2(ibpd->device);
	struct rnic_v2_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = rnic_v2_create_mr(v2, mr, to_v2pd(ibpd), RNIC_MRT_DMA, access,
				0);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *rnic_v2_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct rnic_v2 *v2 = to_v2(ibpd->device);
	struct rnic_v2_mr *mr;
	size_t size;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(v2->caps.flags & RNIC_RDMA_CAP_REG_MR))
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > v2->caps.max_mr_pages)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_pages = max_num_sg;
	size = max_num_sg * sizeof(*mr->pbl);
	mr->pbl = dma_alloc_coherent(rnic_v2_dma(v2), size, &mr->pbl_dma,
				     GFP_KERNEL);
	if (!mr->pbl) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	/* the REG_MR WQE gives the access; the MR starts FREE */
	err = rnic_v2_create_mr(v2, mr, to_v2pd(ibpd), RNIC_MRT_FAST_REG, 0,
				max_num_sg);
	if (err) {
		dma_free_coherent(rnic_v2_dma(v2), size, mr->pbl, mr->pbl_dma);
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
struct ib_mr *rnic_v2_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 virt_addr, int access,
				  struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int rnic_v2_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rnic_v2_mr *mr = to_v2mr(ibmr);

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
int rnic_v2_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset)
{
	struct rnic_v2_mr *mr = to_v2mr(ibmr);

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, rnic_v2_set_page);
}

int rnic_v2_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibmr->device);
	struct rnic_v2_mr *mr = to_v2mr(ibmr);
	bool destroyed;

	destroyed = !rnic_v2_cmd_destroy(v2, RNIC_AQ_DESTROY_MR, ibmr->lkey);
	if (mr->pbl)
		rnic_v2_free_dma(v2, destroyed,
				 mr->max_pages * sizeof(*mr->pbl), mr->pbl,
				 mr->pbl_dma);
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------------
 * Address handles
 */

/**
 * rnic_v2_ah_table_init() - allocate the AH table and give it the device
 * @v2: the device
 *
 * Return: 0 or a negative errno. The pages stay allocated until
 * rnic_v2_ah_table_free(), after the reset: the device may read them
 * until then.
 */
int rnic_v2_ah_table_init(struct rnic_v2 *v2)
{
	struct rnic_aq_set_ah_table c = {};
	u32 n = rounddown(v2->caps.max_ah, RNIC_AH_PER_PAGE);
	u32 pages = n / RNIC_AH_PER_PAGE, i;
	dma_addr_t pbl_dma;
	__le64 *pbl;
	int err;

	v2->ah_va = kcalloc(pages, sizeof(*v2->ah_va), GFP_KERNEL);
	v2->ah_dma = kcalloc(pages, sizeof(*v2->ah_dma), GFP_KERNEL);
	v2->ah_map = bitmap_zalloc(n, GFP_KERNEL);
	if (!v2->ah_va || !v2->ah_dma || !v2->ah_map)
		return -ENOMEM;
	v2->num_ah = n;
	for (i = 0; i < pages; i++) {
		v2->ah_va[i] = dma_alloc_coherent(rnic_v2_dma(v2),
						  RNIC_AH_PAGE_SIZE,
						  &v2->ah_dma[i], GFP_KERNEL);
		if (!v2->ah_va[i])
			return -ENOMEM;
	}
	/* entry 0 is never valid: a zeroed WQE cannot send */
	set_bit(0, v2->ah_map);

	pbl = dma_alloc_coherent(rnic_v2_dma(v2), pages * sizeof(*pbl),
				 &pbl_dma, GFP_KERNEL);
	if (!pbl)
		return -ENOMEM;
	for (i = 0; i < pages; i++)
		pbl[i] = cpu_to_le64(v2->ah_dma[i]);
	c.hdr.opcode = RNIC_AQ_SET_AH_TABLE;
	c.pbl_addr = cpu_to_le64(pbl_dma);
	c.num_entries = cpu_to_le32(n);
	err = rnic_v2_cmd(v2, &c, sizeof(c), NULL);
	/* the device copied the list, or keeps nothing of a failed command */
	if (err == -ETIMEDOUT || err == -EIO)
		rnic_v2_defer_free(v2, pages * sizeof(*pbl), pbl, pbl_dma);
	else
		dma_free_coherent(rnic_v2_dma(v2), pages * sizeof(*pbl), pbl,
				  pbl_dma);
	if (err) {
		ibdev_err(&v2->ibdev, "SET_AH_TABLE of %u entries failed: %d\n",
			  n, err);
		return err;
	}
	v2->ah_set = true;
	return 0;
}

/* After the reset: the device reads the table until then */
void rnic_v2_ah_table_free(struct rnic_v2 *v2)
{
	u32 i;

	for (i = 0; v2->ah_va && i < v2->num_ah / RNIC_AH_PER_PAGE; i++)
		if (v2->ah_va[i])
			dma_free_coherent(rnic_v2_dma(v2), RNIC_AH_PAGE_SIZE,
					  v2->ah_va[i], v2->ah_dma[i]);
	kfree(v2->ah_va);
	kfree(v2->ah_dma);
	bitmap_free(v2->ah_map);
	v2->ah_va = NULL;
	v2->ah_dma = NULL;
	v2->ah_map = NULL;
}

static struct rnic_hdr_tmpl *rnic_v2_ah_entry(struct rnic_v2 *v2, u32 idx)
{
	return v2->ah_va[idx / RNIC_AH_PER_PAGE] +
	       (idx % RNIC_AH_PER_PAGE) * RNIC_TMPL_SIZE;
}

/* Any context: the MAD layer creates AHs with a spinlock held */
int rnic_v2_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibah->device);
	struct rnic_v2_ah *ah = to_v2ah(ibah);
	struct rdma_ah_attr *attr = init->ah_attr;
	const struct ib_gid_attr *sgid = attr->grh.sgid_attr;
	struct rnic_v2_tmpl_in in;
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
	err = rnic_v2_tmpl_in_from_ah(&in, attr, smac, vlan_id,
				      rnic_params.pfc_prio,
				      rnic_params.roce_udp_port, 0, 0);
	if (err)
		return err;
	in.pdn = to_v2pd(ibah->pd)->pdn;
	err = rnic_v2_tmpl_build(&tmpl, &in);
	if (err)
		return err;

	spin_lock_irqsave(&v2->ah_lock, flags);
	idx = find_first_zero_bit(v2->ah_map, v2->num_ah);
	if (idx < v2->num_ah)
		set_bit(idx, v2->ah_map);
	spin_unlock_irqrestore(&v2->ah_lock, flags);
	if (idx >= v2->num_ah)
		return -ENOMEM;

	/* the whole entry, VALID clear, before VALID */
	e = rnic_v2_ah_entry(v2, idx);
	memcpy(e, &tmpl, sizeof(tmpl));
	dma_wmb();
	WRITE_ONCE(e->flags, cpu_to_le32(le32_to_cpu(tmpl.flags) |
					 RNIC_TMPL_F_VALID));
	ah->idx = idx;
	return 0;
}

int rnic_v2_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rnic_v2 *v2 = to_v2(ibah->device);
	struct rnic_v2_ah *ah = to_v2ah(ibah);
	unsigned long irqflags;

	WRITE_ONCE(rnic_v2_ah_entry(v2, ah->idx)->flags, 0);
	spin_lock_irqsave(&v2->ah_lock, irqflags);
	clear_bit(ah->idx, v2->ah_map);
	spin_unlock_irqrestore(&v2->ah_lock, irqflags);
	return 0;
}

/* ------------------------------------------------------------------------
 * Shared receive queues
 */

struct rnic_v2_srq *rnic_v2_srq_get(struct rnic_v2 *v2, u32 srqn)
{
	struct rnic_v2_srq *srq;

	xa_lock_irq(&v2->srq_xa);
	srq = xa_load(&v2->srq_xa, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	xa_unlock_irq(&v2->srq_xa);
	return srq;
}

void rnic_v2_srq_put(struct rnic_v2_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->gone);
}

static void rnic_v2_srq_free_mem(struct rnic_v2 *v2, struct rnic_v2_srq *srq,
				 bool destroyed)
{
	u32 depth = BIT(srq->log2_depth);

	rnic_v2_free_dma(v2, destroyed, (size_t)depth << srq->rqe_log2,
			 srq->wqes, srq->wqe_dma);
	rnic_v2_free_dma(v2, destroyed, depth * sizeof(*srq->idx), srq->idx,
			 srq->idx_dma);
	bitmap_free(srq->busy);
	kfree(srq->wrid);
	kfree(srq->len);
}

int rnic_v2_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibsrq->device);
	struct rnic_v2_srq *srq = to_v2srq(ibsrq);
	struct ib_srq_attr *a = &init->attr;
	struct rnic_aq_create_srq c = {};
	union rnic_aq_resp r;
	u32 depth;
	int err;

	if (udata || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!v2->caps.max_srq)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > BIT(v2->caps.max_srq_log2) ||
	    a->max_sge > v2->caps.max_srq_sge || a->srq_limit > a->max_wr)
		return -EINVAL;
	depth = roundup_pow_of_two(max_t(u32, a->max_wr, 4));
	srq->log2_depth = ilog2(depth);
	srq->rqe_log2 = rnic_v2_rqe_log2(a->max_sge);
	if (srq->rqe_log2 > v2->caps.max_rqe_log2)
		return -EINVAL;
	srq->max_sge = min_t(u32, rnic_rqe_max_sge(srq->rqe_log2),
			     v2->caps.max_srq_sge);
	spin_lock_init(&srq->lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->gone);
	srq->busy = bitmap_zalloc(depth, GFP_KERNEL);
	srq->wrid = kcalloc(depth, sizeof(*srq->wrid), GFP_KERNEL);
	srq->len = kcalloc(depth, sizeof(*srq->len), GFP_KERNEL);
	srq->wqes = dma_alloc_coherent(rnic_v2_dma(v2),
				       (size_t)depth << srq->rqe_log2,
				       &srq->wqe_dma, GFP_KERNEL);
	srq->idx = dma_alloc_coherent(rnic_v2_dma(v2),
				      depth * sizeof(*srq->idx),
				      &srq->idx_dma, GFP_KERNEL);
	if (!srq->busy || !srq->wrid || !srq->len || !srq->wqes || !srq->idx) {
		err = -ENOMEM;
		goto err_free;
	}

	c.hdr.opcode = RNIC_AQ_CREATE_SRQ;
	c.pdn = cpu_to_le32(to_v2pd(ibsrq->pd)->pdn);
	c.db_page = cpu_to_le32(v2->dbp.id);
	c.wqe_addr = cpu_to_le64(srq->wqe_dma);
	c.idx_addr = cpu_to_le64(srq->idx_dma);
	c.log2_depth = srq->log2_depth;
	c.rqe_log2 = srq->rqe_log2;
	c.limit = cpu_to_le32(a->srq_limit);
	err = rnic_v2_cmd(v2, &c, sizeof(c), &r);
	if (err)
		goto err_free;
	srq->srqn = le32_to_cpu(r.create_srq.srqn);
	srq->db_off = le16_to_cpu(r.create_srq.db_off);
	if (!rnic_v2_db_off_ok(srq->db_off) ||
	    xa_insert_irq(&v2->srq_xa, srq->srqn, srq, GFP_KERNEL)) {
		ibdev_err(&v2->ibdev, "CREATE_SRQ returned SRQN %u (in use?), doorbell %#x\n",
			  srq->srqn, srq->db_off);
		rnic_v2_srq_free_mem(v2, srq,
				     !rnic_v2_cmd_destroy(v2, RNIC_AQ_DESTROY_SRQ,
							  srq->srqn));
		return -EPROTO;
	}
	a->max_wr = depth;
	a->max_sge = srq->max_sge;
	return 0;

err_free:
	rnic_v2_srq_free_mem(v2, srq, true);
	return err;
}

int rnic_v2_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibsrq->device);
	struct rnic_v2_srq *srq = to_v2srq(ibsrq);
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
	return rnic_v2_cmd(v2, &c, sizeof(c), NULL);
}

int rnic_v2_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rnic_v2 *v2 = to_v2(ibsrq->device);
	struct rnic_v2_srq *srq = to_v2srq(ibsrq);
	struct rnic_aq_obj c = {};
	union rnic_aq_resp r;
	int err;

	c.hdr.opcode = RNIC_AQ_QUERY_SRQ;
	c.handle = cpu_to_le32(srq->srqn);
	err = rnic_v2_cmd(v2, &c, sizeof(c), &r);
	if (err)
		return err;
	attr->srq_limit = le32_to_cpu(r.query_srq.limit);
	attr->max_wr = BIT(srq->log2_depth);
	attr->max_sge = srq->max_sge;
	return 0;
}

int rnic_v2_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rnic_v2 *v2 = to_v2(ibsrq->device);
	struct rnic_v2_srq *srq = to_v2srq(ibsrq);
	bool destroyed;

	destroyed = !rnic_v2_cmd_destroy(v2, RNIC_AQ_DESTROY_SRQ, srq->srqn);
	xa_erase_irq(&v2->srq_xa, srq->srqn);
	if (!refcount_dec_and_test(&srq->ref))
		wait_for_completion(&srq->gone);
	rnic_v2_srq_free_mem(v2, srq, destroyed);
	return 0;
}
