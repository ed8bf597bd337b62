// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, memory regions: the admin commands, the
 * key checks every payload access goes through (hardware-rdma.rst, "MR"), the
 * translation of MR-space addresses to guest memory, and the local
 * operations REG_MR and LOCAL_INV.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

#define ACCESS_NEEDS_LOCAL_WRITE	(RNIC_ACCESS_REMOTE_WRITE | \
					 RNIC_ACCESS_REMOTE_ATOMIC)

/* The IB rule: remote write or atomic rights need local write. */
static bool access_ok(u8 access)
{
	if (access & ~RNIC_ACCESS_ALL)
		return false;
	return !(access & ACCESS_NEEDS_LOCAL_WRITE) ||
	       (access & RNIC_ACCESS_LOCAL_WRITE);
}

/* The pages cover [iova, iova + length): first-page offset included. */
static bool pages_cover(u64 iova, u64 length, u32 npages, u8 log2)
{
	u64 off = iova & ((1ULL << log2) - 1);

	return iova + length >= iova &&
	       off + length <= ((u64)npages << log2);
}

/*
 * Copy a page list from guest memory, checking each page: aligned to
 * the page size and wholly in guest RAM. 0, -EFAULT (the list itself),
 * -EINVAL (a page).
 */
static int read_pages(struct rdev *d, u64 pbl, u32 n, u8 log2, u64 **out)
{
	u64 *pages, size = 1ULL << log2;
	u32 i;

	if (pbl & 7)
		return -EFAULT;
	pages = malloc((size_t)n * sizeof(*pages));
	if (!pages)
		return -ENOMEM;
	if (plat_dma_read(d->p, pbl, pages, (size_t)n * sizeof(*pages))) {
		free(pages);
		return -EFAULT;
	}
	for (i = 0; i < n; i++) {
		pages[i] = le64_to_cpu(pages[i]);
		if ((pages[i] & (size - 1)) ||
		    !plat_dma_ptr(d->p, pages[i], size)) {
			free(pages);
			return -EINVAL;
		}
	}
	*out = pages;
	return 0;
}

static u8 check_create_mr(struct rdev *d, const struct rnic_aq_create_mr *c,
			  struct rdma_pd **pdp)
{
	u64 iova = le64_to_cpu(c->iova), length = le64_to_cpu(c->length);
	u32 npages = le32_to_cpu(c->npages);
	struct rdma_pd *pd;

	if (c->reserved0 || !rdma_all_zero(c->reserved1, sizeof(c->reserved1)) ||
	    !access_ok(c->access))
		return RNIC_AQ_BAD_PARAM;
	switch (c->type) {
	case RNIC_MRT_DMA:
		if (iova || length || c->pbl_addr || npages || c->page_log2)
			return RNIC_AQ_BAD_PARAM;
		break;
	case RNIC_MRT_FAST_REG:
		if (iova || length || c->pbl_addr || c->page_log2 ||
		    !npages || npages > 0xffff || npages > RDMA_MAX_MR_PAGES)
			return RNIC_AQ_BAD_PARAM;
		break;
	case RNIC_MRT_PBL:
		if (!rdma_page_log2_ok(c->page_log2) || !length ||
		    length > RDMA_MAX_MR_SIZE || !npages ||
		    npages > RDMA_MAX_MR_PAGES ||
		    !pages_cover(iova, length, npages, c->page_log2))
			return RNIC_AQ_BAD_PARAM;
		break;
	default:
		return RNIC_AQ_BAD_PARAM;
	}
	pd = rdma_pd_get(d, le32_to_cpu(c->pdn));
	if (!pd)
		return RNIC_AQ_NOT_FOUND;
	if (c->type != RNIC_MRT_PBL && !pd->priv)
		return RNIC_AQ_NO_PERM;
	*pdp = pd;
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_create_mr(struct rdev *d, const union rnic_aq_entry *e,
		    union rnic_aq_resp *resp)
{
	const struct rnic_aq_create_mr *c = (const void *)e;
	struct rdma_pd *pd = NULL;
	struct rdma_mr *mr;
	u64 *pages = NULL;
	u8 st;

	st = check_create_mr(d, c, &pd);
	if (st)
		return st;
	if (c->type == RNIC_MRT_PBL) {
		int rc = read_pages(d, le64_to_cpu(c->pbl_addr),
				    le32_to_cpu(c->npages), c->page_log2,
				    &pages);

		if (rc == -ENOMEM)
			return RNIC_AQ_INTERNAL;
		if (rc) {
			RDEV_INC(d, dma_errors);
			return RNIC_AQ_BAD_ADDR;
		}
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		free(pages);
		return RNIC_AQ_INTERNAL;
	}
	if (idtab_alloc(&d->rdma->mrs, mr, &mr->index)) {
		free(pages);
		free(mr);
		return RNIC_AQ_NO_RESOURCES;
	}
	mr->type = c->type;
	mr->access = c->access;
	mr->pd = pd;
	pd->refs++;
	switch (c->type) {
	case RNIC_MRT_DMA:
		mr->state = RNIC_MRS_VALID;
		break;
	case RNIC_MRT_FAST_REG:
		mr->state = RNIC_MRS_FREE;
		mr->max_pages = le32_to_cpu(c->npages);
		break;
	default:
		mr->state = RNIC_MRS_VALID;
		mr->page_log2 = c->page_log2;
		mr->iova = le64_to_cpu(c->iova);
		mr->length = le64_to_cpu(c->length);
		mr->npages = le32_to_cpu(c->npages);
		mr->pages = pages;
		break;
	}
	resp->id.id = cpu_to_le32(rnic_key_build(mr->index, mr->variant));
	return RNIC_AQ_SUCCESS;
}

static struct rdma_mr *mr_by_key(struct rdev *d, u32 key)
{
	return idtab_get(&d->rdma->mrs, FIELD_GET(RNIC_KEY_INDEX, key));
}

u8 rdma_cmd_query_mr(struct rdev *d, const union rnic_aq_entry *e,
		   union rnic_aq_resp *resp)
{
	const struct rnic_aq_query_obj *c = (const void *)e;
	struct rdma_mr *mr = mr_by_key(d, le32_to_cpu(c->handle));
	struct rnic_mr_query q = {};

	if (c->scope)
		return RNIC_AQ_BAD_PARAM;
	if (!mr)
		return RNIC_AQ_NOT_FOUND;
	q.key = cpu_to_le32(rnic_key_build(mr->index, mr->variant));
	q.pdn = cpu_to_le32(mr->pd->pdn);
	q.type = mr->type;
	q.state = mr->state;
	q.access = mr->access;
	q.page_log2 = mr->page_log2;
	q.npages = cpu_to_le32(mr->type == RNIC_MRT_FAST_REG &&
			       mr->state == RNIC_MRS_FREE ? mr->max_pages :
							    mr->npages);
	q.iova = cpu_to_le64(mr->iova);
	q.length = cpu_to_le64(mr->length);
	resp->query.len = cpu_to_le32(sizeof(q));
	return rdma_put_result(d, le64_to_cpu(c->buf_addr),
			     le32_to_cpu(c->buf_len), &q, sizeof(q));
}

void rdma_mr_free(struct rdma_mr *mr)
{
	free(mr->pages);
	free(mr);
}

u8 rdma_cmd_destroy_mr(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_mr *mr = mr_by_key(d, le32_to_cpu(c->handle));

	if (!mr)
		return RNIC_AQ_NOT_FOUND;
	idtab_free(&d->rdma->mrs, mr->index);
	mr->pd->refs--;
	rdma_mr_free(mr);
	return RNIC_AQ_SUCCESS;
}

/* ---- key checks and translation ---- */

u8 rdma_key_check(struct rdev *d, u32 key, struct rdma_pd *pd, u8 need, u64 addr,
		u64 len, struct rdma_mr **out)
{
	struct rdma_mr *mr;

	*out = NULL;
	if (!len)
		return 0;
	mr = mr_by_key(d, key);
	if (!mr || FIELD_GET(RNIC_KEY_VARIANT, key) != mr->variant)
		return RNIC_ERR_BAD_KEY;
	if (mr->state != RNIC_MRS_VALID)
		return RNIC_ERR_KEY_STATE;
	if (mr->pd != pd)
		return RNIC_ERR_KEY_PD;
	if ((mr->access & need) != need)
		return RNIC_ERR_KEY_ACCESS;
	if (addr + len < addr)
		return RNIC_ERR_KEY_BOUNDS;
	if (mr->type == RNIC_MRT_DMA) {
		/* MR space is guest RAM itself. */
		if (!plat_dma_ptr(d->p, addr, len))
			return RNIC_ERR_KEY_BOUNDS;
	} else if (addr < mr->iova || addr + len > mr->iova + mr->length) {
		return RNIC_ERR_KEY_BOUNDS;
	}
	*out = mr;
	return 0;
}

/* Copy [addr, addr + len) of a checked MR, page by page. */
static int mr_copy(struct rdev *d, struct rdma_mr *mr, u64 addr, void *buf,
		   size_t len, bool write)
{
	u64 psize, base;
	u8 *p = buf;

	if (!len)
		return 0;
	if (mr->type == RNIC_MRT_DMA)
		return write ? plat_dma_write(d->p, addr, buf, len) :
			       plat_dma_read(d->p, addr, buf, len);
	psize = 1ULL << mr->page_log2;
	base = mr->iova & ~(psize - 1);
	while (len) {
		u64 off = addr - base;
		u64 n = off >> mr->page_log2, in = off & (psize - 1);
		size_t chunk = psize - in < len ? psize - in : len;
		int rc;

		if (n >= mr->npages)
			return -EFAULT;	/* the bounds check prevents it */
		rc = write ? plat_dma_write(d->p, mr->pages[n] + in, p, chunk) :
			     plat_dma_read(d->p, mr->pages[n] + in, p, chunk);
		if (rc)
			return -EFAULT;
		addr += chunk;
		p += chunk;
		len -= chunk;
	}
	return 0;
}

int rdma_mr_read(struct rdev *d, struct rdma_mr *mr, u64 addr, void *buf,
	       size_t len)
{
	return mr_copy(d, mr, addr, buf, len, false);
}

int rdma_mr_write(struct rdev *d, struct rdma_mr *mr, u64 addr, const void *buf,
		size_t len)
{
	return mr_copy(d, mr, addr, (void *)buf, len, true);
}

/* Read or write through a scatter list, checking each SGE it touches. */
static u8 sgl_copy(struct rdev *d, const struct rnic_data_sge *sge,
		   unsigned int n, struct rdma_pd *pd, u8 need, u64 off,
		   u8 *buf, size_t len, bool write)
{
	unsigned int i;

	for (i = 0; i < n && len; i++) {
		u64 addr = le64_to_cpu(sge[i].addr);
		u32 slen = le32_to_cpu(sge[i].len);
		struct rdma_mr *mr;
		size_t chunk;
		u8 syn;

		if (off >= slen) {
			off -= slen;
			continue;
		}
		syn = rdma_key_check(d, le32_to_cpu(sge[i].lkey), pd, need,
				   addr, slen, &mr);
		if (syn) {
			RDMA_INC(d, key_violations);
			return syn;
		}
		chunk = slen - off < len ? slen - off : len;
		if (mr_copy(d, mr, addr + off, buf, chunk, write)) {
			RDEV_INC(d, dma_errors);
			return RNIC_ERR_DMA_OOB;
		}
		buf += chunk;
		len -= chunk;
		off = 0;
	}
	/* The caller sized the transfer to the list. */
	return len ? RNIC_ERR_BAD_WQE : 0;
}

u8 rdma_sgl_read(struct rdev *d, const struct rnic_data_sge *sge,
	       unsigned int n, struct rdma_pd *pd, u64 off, void *buf,
	       size_t len)
{
	return sgl_copy(d, sge, n, pd, 0, off, buf, len, false);
}

u8 rdma_sgl_write(struct rdev *d, const struct rnic_data_sge *sge,
		unsigned int n, struct rdma_pd *pd, u64 off, const void *buf,
		size_t len)
{
	return sgl_copy(d, sge, n, pd, RNIC_ACCESS_LOCAL_WRITE, off,
			(u8 *)buf, len, true);
}

/* ---- local operations ---- */

/* The FAST_REG MR a local operation names, checked for @qp's PD. */
static u8 fast_reg_mr(struct rdev *d, struct rdma_qp *qp, u32 key,
		      bool variant, struct rdma_mr **out)
{
	struct rdma_mr *mr = mr_by_key(d, key);

	if (!mr || (variant && FIELD_GET(RNIC_KEY_VARIANT, key) !=
			       mr->variant))
		return RNIC_ERR_BAD_KEY;
	if (mr->type != RNIC_MRT_FAST_REG)
		return RNIC_ERR_KEY_STATE;
	if (mr->pd != qp->pd)
		return RNIC_ERR_KEY_PD;
	*out = mr;
	return 0;
}

u8 rdma_local_inv(struct rdev *d, struct rdma_qp *qp, u32 key)
{
	struct rdma_mr *mr;
	u8 syn = fast_reg_mr(d, qp, key, true, &mr);

	if (syn)
		return syn;
	if (mr->state == RNIC_MRS_FREE)
		return RNIC_ERR_KEY_STATE;
	mr->state = RNIC_MRS_INVALID;
	return 0;
}

u8 rdma_remote_inv(struct rdev *d, struct rdma_qp *qp, u32 key)
{
	struct rdma_mr *mr;

	if (fast_reg_mr(d, qp, key, true, &mr) ||
	    mr->state != RNIC_MRS_VALID)
		return RNIC_ERR_INV_KEY;
	mr->state = RNIC_MRS_INVALID;
	return 0;
}

u8 rdma_reg_mr(struct rdev *d, struct rdma_qp *qp, const struct rdma_swqe *w)
{
	const struct rnic_sqe_reg_mr *r = &w->seg.reg_mr;
	u64 iova = le64_to_cpu(r->iova), length = le64_to_cpu(r->length);
	u16 npages = le16_to_cpu(r->npages);
	struct rdma_mr *mr;
	u64 *pages;
	int rc;
	u8 syn;

	if (!qp->pd->priv)
		return RNIC_ERR_NO_PERM;
	syn = fast_reg_mr(d, qp, w->imm_key, false, &mr);
	if (syn)
		return syn;
	if (mr->state == RNIC_MRS_VALID)
		return RNIC_ERR_KEY_STATE;
	if (!access_ok(r->access) || !rdma_page_log2_ok(r->page_log2) ||
	    !npages || npages > mr->max_pages || length > RDMA_MAX_MR_SIZE ||
	    !pages_cover(iova, length, npages, r->page_log2))
		return RNIC_ERR_BAD_WQE;
	rc = read_pages(d, le64_to_cpu(r->pbl_addr), npages, r->page_log2,
			&pages);
	if (rc == -EINVAL)
		return RNIC_ERR_BAD_WQE;
	if (rc) {
		RDEV_INC(d, dma_errors);
		return RNIC_ERR_DMA_OOB;
	}
	free(mr->pages);
	mr->pages = pages;
	mr->npages = npages;
	mr->page_log2 = r->page_log2;
	mr->iova = iova;
	mr->length = length;
	mr->access = r->access;
	mr->variant = FIELD_GET(RNIC_KEY_VARIANT, w->imm_key);
	mr->state = RNIC_MRS_VALID;
	return 0;
}

u8 rdma_local_op(struct rdev *d, struct rdma_qp *qp, const struct rdma_swqe *w)
{
	if (w->opcode == RNIC_SQE_OP_LOCAL_INV)
		return rdma_local_inv(d, qp, w->imm_key);
	return rdma_reg_mr(d, qp, w);
}
