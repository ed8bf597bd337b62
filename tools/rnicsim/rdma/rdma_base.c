// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, the bottom layer: what every other rdma_*.c file
 * may call and which calls none of them. The id tables and the lookups by
 * id, the run queue of QPs with send work, the RoCE receive buffer,
 * asynchronous events, and the small checks the commands share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/rdma.h"

bool rdma_all_zero(const void *p, size_t n)
{
	const u8 *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* ---- id tables ---- */

int idtab_init(struct rdma_idtab *t, unsigned int log2, u32 space,
	       u32 reserved_slots)
{
	memset(t, 0, sizeof(*t));
	t->obj = calloc(1U << log2, sizeof(*t->obj));
	t->id = calloc(1U << log2, sizeof(*t->id));
	if (!t->obj || !t->id) {
		idtab_fini(t);
		return -ENOMEM;
	}
	t->mask = (1U << log2) - 1;
	t->space = space;
	t->next = 1;
	t->reserved_slots = reserved_slots;
	return 0;
}

void idtab_fini(struct rdma_idtab *t)
{
	free(t->obj);
	free(t->id);
	memset(t, 0, sizeof(*t));
}

static bool slot_reserved(const struct rdma_idtab *t, u32 s)
{
	return s < 32 && (t->reserved_slots & BIT(s));
}

/*
 * The next id, cyclically, whose table slot is free. Consecutive ids
 * map to consecutive slots, so two passes over the table find one if
 * any slot is free.
 */
int idtab_alloc(struct rdma_idtab *t, void *obj, u32 *id)
{
	u32 tries, n, s;

	for (tries = 0; tries < 2 * (t->mask + 1); tries++) {
		n = t->next;
		t->next = n + 1 >= t->space ? 1 : n + 1;
		s = n & t->mask;
		if (!n || slot_reserved(t, s) || t->obj[s])
			continue;
		t->obj[s] = obj;
		t->id[s] = n;
		t->count++;
		*id = n;
		return 0;
	}
	return -ENOSPC;
}

/* Put @obj at a fixed id (the GSI QP); -EBUSY if its slot is taken. */
int idtab_set(struct rdma_idtab *t, void *obj, u32 id)
{
	u32 s = id & t->mask;

	if (t->obj[s])
		return -EBUSY;
	t->obj[s] = obj;
	t->id[s] = id;
	t->count++;
	return 0;
}

void *idtab_get(struct rdma_idtab *t, u32 id)
{
	u32 s = id & t->mask;

	if (!id || id >= t->space || !t->obj || t->id[s] != id)
		return NULL;
	return t->obj[s];
}

void idtab_free(struct rdma_idtab *t, u32 id)
{
	u32 s = id & t->mask;

	if (t->obj[s] && t->id[s] == id) {
		t->obj[s] = NULL;
		t->id[s] = 0;
		t->count--;
	}
}

struct rdma_qp *rdma_qp_get(struct rdev *d, u32 qpn)
{
	return idtab_get(&d->rdma->qps, qpn);
}

struct rdma_pd *rdma_pd_get(struct rdev *d, u32 pdn)
{
	return idtab_get(&d->rdma->pds, pdn);
}

/* ---- the run queue ---- */

void rdma_runq_add(struct rdev *d, struct rdma_qp *qp)
{
	struct rdma_runq *q = &d->rdma->runq;

	if (qp->queued || qp->pfc_wait)
		return;
	qp->queued = true;
	qp->runq_next = NULL;
	if (q->tail)
		q->tail->runq_next = qp;
	else
		q->head = qp;
	q->tail = qp;
}

/* Take a QP off the run queue (destroy, reset). */
void rdma_runq_remove(struct rdev *d, struct rdma_qp *qp)
{
	struct rdma_runq *q = &d->rdma->runq;
	struct rdma_qp **pp, *prev = NULL;

	for (pp = &q->head; *pp; prev = *pp, pp = &(*pp)->runq_next) {
		if (*pp != qp)
			continue;
		*pp = qp->runq_next;
		if (q->tail == qp)
			q->tail = prev;
		break;
	}
	qp->queued = false;
	qp->runq_next = NULL;
}

/* ---- the receive buffer ---- */

static bool fifo_put(struct rdev *d, const u8 *frame, size_t len)
{
	struct rdma_dev *v = d->rdma;
	struct rdma_fifo_ent *f;

	if (len > sizeof(f->data))
		return false;	/* the MAC already dropped longer frames */
	if (v->fifo_count >= RDMA_RX_FIFO) {
		RDMA_INC(d, rx_drop_fifo_full);
		return false;
	}
	f = &v->fifo[(v->fifo_head + v->fifo_count) % RDMA_RX_FIFO];
	memcpy(f->data, frame, len);
	f->len = len;
	v->fifo_count++;
	return true;
}

/*
 * Frames wait in the receive buffer until the next tick, which the
 * platform runs after every batch of events: the transport then sees a
 * whole batch before it sends, which is what coalesces ACKs (one per
 * batch), and a burst fills the buffer the 2.0 PFC watermarks watch.
 */
void rdma_rx_frame(struct rdev *d, const u8 *frame, size_t len,
		 const struct pkt_info *info)
{
	(void)info;	/* classified again when the transport takes it */
	if (!d->enabled)
		return;
	fifo_put(d, frame, len);
	rdev_pfc_check_now(d);
}

void rdma_rx_loopback(struct rdev *d, const u8 *frame, size_t len)
{
	fifo_put(d, frame, len);	/* the running pump takes it */
}

/* ---- events, addresses, results ---- */

void rdma_event(struct rdev *d, u8 type, u8 reason, u8 obj, u32 id, u64 info)
{
	rdev_event(d, type, reason, obj, id, info);
}

u8 rdma_put_result(struct rdev *d, u64 addr, u32 buf_len, const void *res,
		 size_t len)
{
	if (plat_dma_write(d->p, addr, res, len < buf_len ? len : buf_len)) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	return RNIC_AQ_SUCCESS;
}

/* IB: the partitions match and at least one of the two is a full member */
bool rdma_pkey_match(u16 a, u16 b)
{
	if (!(a & RNIC_PKEY_BASE) || !(b & RNIC_PKEY_BASE))
		return false;	/* 0x0000 / 0x8000: the invalid P_Key */
	return (a & RNIC_PKEY_BASE) == (b & RNIC_PKEY_BASE) &&
	       ((a | b) & RNIC_PKEY_FULL);
}

bool rdma_gid_is_ours(struct rdev *d, u8 net, const u8 *gid, bool vlan,
		    u16 vid)
{
	u8 type = net == RNIC_RX_CLASS_ROCE_V1 ? RNIC_GID_TYPE_ROCE_V1 :
						 RNIC_GID_TYPE_ROCE_V2;
	unsigned int i;

	if (!vlan)
		vid = 0;
	for (i = 0; i < RDMA_GID_TBL_LEN; i++) {
		const struct rnic_gid_entry *g = &d->rdma->gid[i];
		u16 gvid = (g->flags & RNIC_GID_F_VLAN) ?
			   le16_to_cpu(g->vlan_id) : 0;

		if ((g->flags & RNIC_GID_F_VALID) && g->type == type &&
		    gvid == vid && !memcmp(g->gid, gid, RNIC_GID_LEN))
			return true;
	}
	return false;
}
