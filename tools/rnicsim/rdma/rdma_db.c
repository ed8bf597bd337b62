// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, doorbell pages (hardware-rdma.rst,
 * "Doorbell pages (2.0)"): allocation and slot placement. The kick ring
 * that tells the device which slots moved is read in rdma_kick.c.
 *
 * Every page shares the kick value of doorbell vector 3 (the model's
 * first implementation), so a kick reads kick_pi of each allocated page:
 * those are kept in a list, so that a kick costs what is allocated, not
 * a walk of every page BAR2 could hold.
 */
#include <errno.h>
#include <string.h>

#include "rdma/rdma.h"

unsigned int rdma_dbp_off(struct rdev *d, struct rdma_dbp *page)
{
	return RNIC_DBP_BASE_DEFAULT +
	       (unsigned int)(page - d->rdma->dbp) * RNIC_DBP_SIZE;
}

struct rdma_dbp *rdma_dbp_get(struct rdev *d, u32 id)
{
	if (id >= d->rdma->num_db_pages || !d->rdma->dbp[id].used)
		return NULL;
	return &d->rdma->dbp[id];
}

u32 rdma_slot_read(struct rdev *d, struct rdma_dbp *page, u16 slot)
{
	return rdev_bar_read(d, rdma_dbp_off(d, page) + 4 * slot);
}

void rdma_slot_write(struct rdev *d, struct rdma_dbp *page, u16 slot, u32 v)
{
	rdev_bar_write(d, rdma_dbp_off(d, page) + 4 * slot, v);
}

/* A free slot of @page for an object, zeroed: -ENOSPC if none. */
int rdma_slot_assign(struct rdev *d, struct rdma_dbp *page, u8 kind, void *obj,
		   u16 *slot)
{
	unsigned int i, s;

	if (page->nslots >= RNIC_DBP_SLOTS)
		return -ENOSPC;
	for (i = 0; i < RNIC_DBP_SLOTS; i++) {
		s = (page->next + i) % RNIC_DBP_SLOTS;
		if (page->slot[s].kind == RDMA_SLOT_FREE)
			break;
	}
	page->next = (s + 1) % RNIC_DBP_SLOTS;
	page->slot[s].kind = kind;
	page->slot[s].obj = obj;
	page->nslots++;
	rdma_slot_write(d, page, s, 0);
	*slot = s;
	return 0;
}

void rdma_slot_release(struct rdev *d, struct rdma_dbp *page, u16 slot)
{
	(void)d;
	if (slot >= RNIC_DBP_SLOTS || page->slot[slot].kind == RDMA_SLOT_FREE)
		return;
	page->slot[slot].kind = RDMA_SLOT_FREE;
	page->slot[slot].obj = NULL;
	page->nslots--;
}

u8 rdma_cmd_alloc_db_page(struct rdev *d, const union rnic_aq_entry *e,
			union rnic_aq_resp *resp)
{
	const struct rnic_aq_alloc_db_page *c = (const void *)e;
	u32 flags = le32_to_cpu(c->flags);
	struct rdma_dev *v = d->rdma;
	struct rdma_dbp *page;
	u32 id;

	if ((flags & ~RNIC_DBP_F_ALL) ||
	    !rdma_all_zero(c->reserved, sizeof(c->reserved)))
		return RNIC_AQ_BAD_PARAM;
	for (id = 0; id < v->num_db_pages; id++)
		if (!v->dbp[id].used)
			break;
	if (id == v->num_db_pages)
		return RNIC_AQ_NO_RESOURCES;
	page = &v->dbp[id];
	memset(page, 0, sizeof(*page));
	page->used = true;
	page->live_idx = v->nlive_dbp;
	v->live_dbp[v->nlive_dbp++] = (u16)id;
	page->user = flags & RNIC_DBP_F_USER;
	memset(d->bar2 + rdma_dbp_off(d, page), 0, RNIC_DBP_SIZE);
	resp->db_page.page = cpu_to_le32(id);
	resp->db_page.kick = cpu_to_le32(rnic_ivshmem_doorbell(RNIC_DB_VEC_DATA));
	return RNIC_AQ_SUCCESS;
}

u8 rdma_cmd_free_db_page(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_obj *c = (const void *)e;
	struct rdma_dbp *page = rdma_dbp_get(d, le32_to_cpu(c->handle));

	if (!page)
		return RNIC_AQ_NOT_FOUND;
	if (page->nslots)
		return RNIC_AQ_BAD_STATE;
	/* The last live page takes its place in the list. */
	d->rdma->live_dbp[page->live_idx] =
		d->rdma->live_dbp[--d->rdma->nlive_dbp];
	d->rdma->dbp[d->rdma->live_dbp[page->live_idx]].live_idx = page->live_idx;
	memset(page, 0, sizeof(*page));
	return RNIC_AQ_SUCCESS;
}
