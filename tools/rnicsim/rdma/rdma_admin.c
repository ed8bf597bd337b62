// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, admin commands: the dispatch, and the
 * commands about the port rather than one object (capabilities,
 * counters, AH table, GID and P_Key tables) plus PDs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

/* The common checks of struct rnic_aq_query_obj */
static u8 query_check(struct rdev *d, const struct rnic_aq_query_obj *c)
{
	if (!c->buf_len || !rdma_all_zero(c->reserved0, sizeof(c->reserved0)) ||
	    !rdma_all_zero(c->reserved1, sizeof(c->reserved1)))
		return RNIC_AQ_BAD_PARAM;
	if (le64_to_cpu(c->buf_addr) & 7) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	return RNIC_AQ_SUCCESS;
}

static u8 query_reply(struct rdev *d, const struct rnic_aq_query_obj *c,
		      union rnic_aq_resp *resp, const void *res, size_t len)
{
	resp->query.len = cpu_to_le32(len);
	return rdma_put_result(d, le64_to_cpu(c->buf_addr),
			     le32_to_cpu(c->buf_len), res, len);
}

static u8 cmd_query_caps(struct rdev *d, const union rnic_aq_entry *e,
			 union rnic_aq_resp *resp)
{
	const struct rnic_aq_query_obj *c = (const void *)e;
	struct rdma_dev *v = d->rdma;
	struct rnic_rdma_caps a = {};

	if (c->handle || c->scope)
		return RNIC_AQ_BAD_PARAM;
	a.flags = cpu_to_le32(RNIC_RDMA_CAP_RC | RNIC_RDMA_CAP_UD |
			      RNIC_RDMA_CAP_GSI | RNIC_RDMA_CAP_SRQ |
			      RNIC_RDMA_CAP_ATOMIC | RNIC_RDMA_CAP_REG_MR |
			      RNIC_RDMA_CAP_SEND_INV |
			      RNIC_RDMA_CAP_CQ_MODERATION |
			      RNIC_RDMA_CAP_USER_DB |
			      RNIC_RDMA_CAP_KICK_CI | RNIC_RDMA_CAP_RQ_PEEK);
	/*
	 * The tables' sizes (--rdma-table-log2 may make them smaller). The
	 * GSI QP's table slot is kept for it (rdma_core.c).
	 */
	a.max_qp = cpu_to_le32(v->qps.mask + 1);
	a.max_cq = cpu_to_le32(v->cqs.mask + 1);
	a.max_srq = cpu_to_le32(v->srqs.mask + 1);
	a.max_mr = cpu_to_le32(v->mrs.mask + 1);
	a.max_pd = cpu_to_le32(v->pds.mask + 1);
	a.max_ah = cpu_to_le32(RDMA_MAX_AH);
	a.max_mr_pages = cpu_to_le32(RDMA_MAX_MR_PAGES);
	a.max_mr_size = cpu_to_le64(RDMA_MAX_MR_SIZE);
	a.page_size_cap = cpu_to_le64(RDMA_PAGE_SIZE_CAP);
	a.max_msg_size = cpu_to_le32(RDMA_MAX_MSG);
	a.max_eq = cpu_to_le16(v->max_eq);
	a.num_db_pages = cpu_to_le16(v->num_db_pages);
	a.db_base = cpu_to_le32(RNIC_DBP_BASE_DEFAULT);
	a.db_page_log2 = 12;
	a.max_wq_log2 = RDMA_MAX_WQ_LOG2;
	a.max_cq_log2 = RDMA_MAX_CQ_LOG2;
	a.max_srq_log2 = RDMA_MAX_SRQ_LOG2;
	a.max_eq_log2 = RDMA_MAX_EQ_LOG2;
	a.max_sqe_log2 = RNIC_SQE_LOG2_MAX;
	a.max_rqe_log2 = RNIC_RQE_LOG2_MAX;
	a.max_send_sge = RDMA_MAX_SEND_SGE;
	a.max_recv_sge = RDMA_MAX_RECV_SGE;
	a.max_srq_sge = RDMA_MAX_RECV_SGE;
	a.max_inline = cpu_to_le16(RDMA_MAX_INLINE);
	a.max_qp_rd_atom = RDMA_MAX_RD_ATOM;
	a.max_qp_dest_rd_atom = RDMA_MAX_RD_ATOM;
	a.local_ca_ack_delay = RDMA_LOCAL_ACK_DELAY;
	a.max_pmtu = RNIC_PMTU_4096;
	a.gid_tbl_len = cpu_to_le16(RDMA_GID_TBL_LEN);
	a.pkey_tbl_len = cpu_to_le16(RDMA_PKEY_TBL_LEN);
	a.num_rdma_stats = cpu_to_le16(RNIC_NUM_RDMA_STATS);
	a.num_qp_stats = cpu_to_le16(RNIC_NUM_QP_STATS);
	a.timer_tick_us = cpu_to_le32(RDMA_TIMER_TICK_US);
	a.psn_window = cpu_to_le16(RDMA_PSN_WINDOW);
	a.rx_fifo_frames = cpu_to_le16(RDMA_RX_FIFO);
	return query_reply(d, c, resp, &a, sizeof(a));
}

static u8 cmd_query_stats(struct rdev *d, const union rnic_aq_entry *e,
			  union rnic_aq_resp *resp)
{
	const struct rnic_aq_query_obj *c = (const void *)e;
	__le64 buf[RNIC_NUM_RDMA_STATS];
	u32 handle = le32_to_cpu(c->handle);
	const u64 *src;
	unsigned int i, n;
	struct rdma_qp *qp;

	switch (c->scope) {
	case RNIC_RDMA_STATS_SCOPE_PORT:
		if (handle)
			return RNIC_AQ_BAD_PARAM;
		src = d->rdma->ctr;
		n = RNIC_NUM_RDMA_STATS;
		break;
	case RNIC_RDMA_STATS_SCOPE_QP:
		qp = rdma_qp_get(d, handle);
		if (!qp)
			return RNIC_AQ_NOT_FOUND;
		src = qp->type == RNIC_QPT_RC ? rdma_rc_qp_stats(qp) : qp->stats;
		n = RNIC_NUM_QP_STATS;
		break;
	default:
		return RNIC_AQ_BAD_PARAM;
	}
	for (i = 0; i < n; i++)
		buf[i] = cpu_to_le64(src[i]);
	/* Whole counters only, as QUERY_STATS does. */
	resp->query.len = cpu_to_le32(n * 8);
	return rdma_put_result(d, le64_to_cpu(c->buf_addr),
			     le32_to_cpu(c->buf_len) & ~7U, buf, n * 8);
}

/* ---- AH table ---- */

static u8 cmd_set_ah_table(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_set_ah_table *c = (const void *)e;
	u32 n = le32_to_cpu(c->num_entries);
	u64 pbl = le64_to_cpu(c->pbl_addr);
	u32 npages = n / RNIC_AH_PER_PAGE, i;
	u64 *pages;

	if (!rdma_all_zero(c->reserved, sizeof(c->reserved)) || !n ||
	    n % RNIC_AH_PER_PAGE || n > RDMA_MAX_AH)
		return RNIC_AQ_BAD_PARAM;
	if (d->rdma->ah_pages)
		return RNIC_AQ_BAD_STATE;
	if (pbl & 7)
		return RNIC_AQ_BAD_ADDR;
	pages = calloc(npages, sizeof(*pages));
	if (!pages)
		return RNIC_AQ_INTERNAL;
	if (plat_dma_read(d->p, pbl, pages, npages * sizeof(*pages)))
		goto bad_addr;
	for (i = 0; i < npages; i++) {
		pages[i] = le64_to_cpu(pages[i]);
		if ((pages[i] & (RNIC_AH_PAGE_SIZE - 1)) ||
		    !plat_dma_ptr(d->p, pages[i], RNIC_AH_PAGE_SIZE))
			goto bad_addr;
	}
	d->rdma->ah_pages = pages;
	d->rdma->ah_entries = n;
	return RNIC_AQ_SUCCESS;

bad_addr:
	free(pages);
	RDEV_INC(d, dma_errors);
	return RNIC_AQ_BAD_ADDR;
}

/* ---- GID and P_Key tables ---- */

static u8 cmd_modify_gid(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_modify_gid *c = (const void *)e;
	const struct rnic_gid_entry *g = &c->entry;
	u16 index = le16_to_cpu(g->index);
	u16 vid = le16_to_cpu(g->vlan_id);
	struct rnic_gid_entry *dst;

	if (!rdma_all_zero(c->reserved, sizeof(c->reserved)) ||
	    g->reserved0 || !rdma_all_zero(g->reserved1, sizeof(g->reserved1)) ||
	    (g->flags & ~RNIC_GID_F_ALL) || index >= RDMA_GID_TBL_LEN)
		return RNIC_AQ_BAD_PARAM;
	dst = &d->rdma->gid[index];
	if (!(g->flags & RNIC_GID_F_VALID)) {
		/* del_gid: only the index matters */
		memset(dst, 0, sizeof(*dst));
		dst->index = cpu_to_le16(index);
		return RNIC_AQ_SUCCESS;
	}
	if (g->type != RNIC_GID_TYPE_ROCE_V1 && g->type != RNIC_GID_TYPE_ROCE_V2)
		return RNIC_AQ_BAD_PARAM;
	if ((g->flags & RNIC_GID_F_VLAN) ? (!vid || vid > 4094) : vid)
		return RNIC_AQ_BAD_PARAM;
	*dst = *g;
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_query_gid(struct rdev *d, const union rnic_aq_entry *e,
			union rnic_aq_resp *resp)
{
	const struct rnic_aq_query_obj *c = (const void *)e;
	u32 index = le32_to_cpu(c->handle);
	struct rnic_gid_entry g = {};

	if (c->scope || index >= RDMA_GID_TBL_LEN)
		return RNIC_AQ_BAD_PARAM;
	g = d->rdma->gid[index];
	g.index = cpu_to_le16(index);
	return query_reply(d, c, resp, &g, sizeof(g));
}

static bool pkey_in_use(struct rdev *d, u16 index)
{
	struct rdma_idtab *t = &d->rdma->qps;
	u32 i;

	for (i = 0; i <= t->mask; i++) {
		struct rdma_qp *qp = t->obj[i];

		if (qp && qp->state != RNIC_QPS_RESET &&
		    qp->pkey_index == index)
			return true;
	}
	return false;
}

static u8 cmd_set_pkey(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_set_pkey *c = (const void *)e;
	u16 index = le16_to_cpu(c->index);
	u16 pkey = le16_to_cpu(c->pkey);

	if (!rdma_all_zero(c->reserved, sizeof(c->reserved)) ||
	    index >= RDMA_PKEY_TBL_LEN)
		return RNIC_AQ_BAD_PARAM;
	if (!pkey && pkey_in_use(d, index))
		return RNIC_AQ_BAD_STATE;
	d->rdma->pkey[index] = pkey;
	rdma_rc_pkey_changed(d, index);
	return RNIC_AQ_SUCCESS;
}

/* ---- PD ---- */

static u8 cmd_alloc_pd(struct rdev *d, const union rnic_aq_entry *e,
		       union rnic_aq_resp *resp)
{
	const struct rnic_aq_alloc_pd *c = (const void *)e;
	u32 flags = le32_to_cpu(c->flags);
	struct rdma_pd *pd;

	if ((flags & ~RNIC_PD_F_ALL) ||
	    !rdma_all_zero(c->reserved, sizeof(c->reserved)))
		return RNIC_AQ_BAD_PARAM;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return RNIC_AQ_INTERNAL;
	if (idtab_alloc(&d->rdma->pds, pd, &pd->pdn)) {
		free(pd);
		return RNIC_AQ_NO_RESOURCES;
	}
	pd->priv = flags & RNIC_PD_F_PRIVILEGED;
	resp->id.id = cpu_to_le32(pd->pdn);
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_dealloc_pd(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_pd *pd = rdma_pd_get(d, le32_to_cpu(c->handle));

	if (!pd)
		return RNIC_AQ_NOT_FOUND;
	if (pd->refs)
		return RNIC_AQ_BAD_STATE;
	idtab_free(&d->rdma->pds, pd->pdn);
	free(pd);
	return RNIC_AQ_SUCCESS;
}

/* ---- dispatch ---- */

/* The commands whose request is struct rnic_aq_obj */
static bool is_obj_cmd(u8 opcode)
{
	switch (opcode) {
	case RNIC_AQ_DESTROY_EQ:
	case RNIC_AQ_FREE_DB_PAGE:
	case RNIC_AQ_DEALLOC_PD:
	case RNIC_AQ_DESTROY_MR:
	case RNIC_AQ_DESTROY_RDMA_CQ:
	case RNIC_AQ_QUERY_SRQ:
	case RNIC_AQ_DESTROY_SRQ:
	case RNIC_AQ_DESTROY_QP:
		return true;
	default:
		return false;
	}
}

static bool is_query_cmd(u8 opcode)
{
	switch (opcode) {
	case RNIC_AQ_QUERY_RDMA_CAPS:
	case RNIC_AQ_QUERY_RDMA_STATS:
	case RNIC_AQ_QUERY_GID:
	case RNIC_AQ_QUERY_MR:
	case RNIC_AQ_QUERY_QP:
		return true;
	default:
		return false;
	}
}

u8 rdma_admin(struct rdev *d, const union rnic_aq_entry *e,
	    union rnic_aq_resp *resp)
{
	u8 op = e->hdr.opcode;
	u8 st;

	if (is_obj_cmd(op)) {
		const struct rnic_aq_obj *c = (const void *)e;

		if (!rdma_all_zero(c->reserved, sizeof(c->reserved)))
			return RNIC_AQ_BAD_PARAM;
	}
	if (is_query_cmd(op)) {
		st = query_check(d, (const void *)e);
		if (st)
			return st;
	}
	switch (op) {
	case RNIC_AQ_QUERY_RDMA_CAPS:
		return cmd_query_caps(d, e, resp);
	case RNIC_AQ_QUERY_RDMA_STATS:
		return cmd_query_stats(d, e, resp);
	case RNIC_AQ_CREATE_EQ:
		return rdma_cmd_create_eq(d, e, resp);
	case RNIC_AQ_DESTROY_EQ:
		return rdma_cmd_destroy_eq(d, e);
	case RNIC_AQ_ALLOC_DB_PAGE:
		return rdma_cmd_alloc_db_page(d, e, resp);
	case RNIC_AQ_FREE_DB_PAGE:
		return rdma_cmd_free_db_page(d, e);
	case RNIC_AQ_SET_AH_TABLE:
		return cmd_set_ah_table(d, e);
	case RNIC_AQ_MODIFY_GID:
		return cmd_modify_gid(d, e);
	case RNIC_AQ_QUERY_GID:
		return cmd_query_gid(d, e, resp);
	case RNIC_AQ_SET_PKEY:
		return cmd_set_pkey(d, e);
	case RNIC_AQ_ALLOC_PD:
		return cmd_alloc_pd(d, e, resp);
	case RNIC_AQ_DEALLOC_PD:
		return cmd_dealloc_pd(d, e);
	case RNIC_AQ_CREATE_MR:
		return rdma_cmd_create_mr(d, e, resp);
	case RNIC_AQ_QUERY_MR:
		return rdma_cmd_query_mr(d, e, resp);
	case RNIC_AQ_DESTROY_MR:
		return rdma_cmd_destroy_mr(d, e);
	case RNIC_AQ_CREATE_RDMA_CQ:
		return rdma_cmd_create_cq(d, e, resp);
	case RNIC_AQ_MODIFY_RDMA_CQ:
		return rdma_cmd_modify_cq(d, e);
	case RNIC_AQ_DESTROY_RDMA_CQ:
		return rdma_cmd_destroy_cq(d, e);
	case RNIC_AQ_CREATE_SRQ:
		return rdma_cmd_create_srq(d, e, resp);
	case RNIC_AQ_MODIFY_SRQ:
		return rdma_cmd_modify_srq(d, e);
	case RNIC_AQ_QUERY_SRQ:
		return rdma_cmd_query_srq(d, e, resp);
	case RNIC_AQ_DESTROY_SRQ:
		return rdma_cmd_destroy_srq(d, e);
	case RNIC_AQ_CREATE_QP:
		return rdma_cmd_create_qp(d, e, resp);
	case RNIC_AQ_MODIFY_QP:
		return rdma_cmd_modify_qp(d, e, resp);
	case RNIC_AQ_QUERY_QP:
		return rdma_cmd_query_qp(d, e, resp);
	case RNIC_AQ_DESTROY_QP:
		return rdma_cmd_destroy_qp(d, e, resp);
	default:
		return RNIC_AQ_BAD_OPCODE;
	}
}
