// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, doorbell vector 3: the kick ring of each doorbell
 * page tells the device which slots moved, so that a kick never costs a
 * scan of every queue, and each slot it names is read and acted on (a
 * CQ's consumer index and arm, an SQ's, RQ's or SRQ's producer index).
 *
 * This sits above the objects whose slots it reads: rdma_db.c keeps the
 * pages and their slots, rdma_cq.c, rdma_wq.c, rdma_qp.c and rdma_rc.c
 * the objects, and none of them calls back here.
 */
#include <errno.h>

#include "rdma/rdma.h"

#define DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)
#define DBP_KICK_CI_OFF	offsetof(struct rnic_db_page, kick_ci)

/* The queue behind @slot moved, or may have: read its slot value. */
static void slot_moved(struct rdev *d, struct rdma_dbp *page, u16 slot)
{
	struct rdma_slot *s = &page->slot[slot];

	switch (s->kind) {
	case RDMA_SLOT_SQ:
		rdma_sq_slot(d, s->obj);
		break;
	case RDMA_SLOT_RQ:
		rdma_rq_slot(d, s->obj);
		break;
	case RDMA_SLOT_SRQ:
		rdma_srq_slot(d, s->obj);
		break;
	case RDMA_SLOT_CQ:
		rdma_cq_slot(d, s->obj);
		break;
	default:
		RDMA_INC(d, bad_kicks);
		break;
	}
}

/* The writer's kick_pi of @page */
static u16 page_kick_pi(struct rdev *d, struct rdma_dbp *page)
{
	return rdev_bar_read(d, rdma_dbp_off(d, page) + DBP_KICK_PI_OFF) &
	       RNIC_DBP_KICK_PI;
}

/* Every assigned slot of the page, once: the entries cannot be trusted. */
static void page_scan(struct rdev *d, struct rdma_dbp *page)
{
	unsigned int s;

	RDMA_INC(d, kick_overflows);
	for (s = 0; s < RNIC_DBP_SLOTS; s++)
		if (page->slot[s].kind != RDMA_SLOT_FREE)
			slot_moved(d, page, s);
}

/* Serve the entries up to @pi, then store kick_ci = @pi */
static void page_consume(struct rdev *d, struct rdma_dbp *page, u16 pi)
{
	unsigned int base = rdma_dbp_off(d, page);
	u16 n = pi - page->kick_ci, i, again;
	u16 e[RNIC_DBP_KICK_DEPTH];

	if (n > RNIC_DBP_KICK_DEPTH) {
		/* Entries were overwritten before we got here. */
		page_scan(d, page);
		page->kick_ci = pi;
		goto out;
	}
	for (i = 0; i < n; i++)
		e[i] = rdev_bar_read16(d, base + DBP_KICK_OFF + 2 *
				       ((u16)(page->kick_ci + i) %
					RNIC_DBP_KICK_DEPTH));
	/*
	 * The writer never waits for kick_ci: while the entries were read
	 * it may have lapped the ring and overwritten some of them, losing
	 * the slots they named (an arm among them). If it got more than a
	 * ring ahead of the first entry, scan instead; the slot values are
	 * written before their entries, so the scan sees them all.
	 */
	again = page_kick_pi(d, page);
	if ((u16)(again - page->kick_ci) > RNIC_DBP_KICK_DEPTH) {
		page_scan(d, page);
		page->kick_ci = again;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (e[i] >= RNIC_DBP_SLOTS ||
		    page->slot[e[i]].kind == RDMA_SLOT_FREE) {
			RDMA_INC(d, bad_kicks);
			continue;
		}
		slot_moved(d, page, e[i]);
	}
	page->kick_ci = pi;
out:
	rdev_bar_write(d, base + DBP_KICK_CI_OFF, page->kick_ci);
}

/*
 * Passes over one page per kick: a writer that keeps the ring moving
 * (a process writing kick_pi in a loop) must not keep the device from
 * its other pages, its receive buffer and its timers. What is left is
 * read at the next tick, which comes at once (rdma_tick()).
 */
#define KICK_PASSES	4

static void page_kicked(struct rdev *d, struct rdma_dbp *page)
{
	u16 pi = page_kick_pi(d, page);
	unsigned int pass;

	if (pi == page->kick_ci)
		return;
	RDMA_INC(d, kicks);
	for (pass = 1;; pass++) {
		page_consume(d, page, pi);
		/*
		 * RNIC_RDMA_CAP_KICK_CI: kick_ci is stored before kick_pi is
		 * read again. A writer that advanced kick_pi and then (after
		 * a barrier and a BAR0 read, which make its store reach us)
		 * found the old kick_ci did not kick: its entries are seen
		 * here. Without this barrier both sides could read the
		 * other's old value and the entries would wait for the next
		 * kick of the page, which may never come.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		pi = page_kick_pi(d, page);
		if (pi == page->kick_ci)
			return;
		RDMA_INC(d, kick_rechecks);
		if (pass == KICK_PASSES) {
			d->rdma->kick_again = true;
			return;
		}
	}
}

void rdma_kick(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	u32 i;

	v->kick_again = false;
	for (i = 0; i < v->nlive_dbp; i++)
		page_kicked(d, &v->dbp[v->live_dbp[i]]);
}

/*
 * Entries nobody kicked for: at RDMA_KICK_WATCH_STALL watches in a row
 * (rdma_tick(), one per heartbeat period) a page had entries unread and
 * kick_ci had not moved. A writer that skipped its kick
 * (RNIC_RDMA_CAP_KICK_CI) while its kick_pi had not reached the device
 * yet, or one that never kicked: the entries are read now, so the queues
 * go on, and counted in kick_stalls, which the lab requires to stay 0. A
 * correct writer leaves entries unannounced only between its store of
 * kick_pi and its kick; a second is far beyond a descheduled vCPU or a
 * preempted process, so a count is a writer's bug, not load.
 */
#define RDMA_KICK_WATCH_STALL	10

void rdma_kick_watch(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	struct rdma_dbp *page;
	u32 i;
	u16 pi;

	for (i = 0; i < v->nlive_dbp; i++) {
		page = &v->dbp[v->live_dbp[i]];
		pi = page_kick_pi(d, page);
		if (pi == page->kick_ci ||
		    (page->watch_count && page->watch_ci != page->kick_ci)) {
			page->watch_count = 0;
			if (pi == page->kick_ci)
				continue;
		}
		if (!page->watch_count)
			page->watch_ci = page->kick_ci;
		if (++page->watch_count < RDMA_KICK_WATCH_STALL)
			continue;
		RDMA_INC(d, kick_stalls);
		page_kicked(d, page);
		page->watch_count = 0;
	}
}

/* An RQ slot read and checked: the new producer index @pi acted on */
static void rq_moved(struct rdev *d, struct rdma_qp *qp, u16 pi)
{
	qp->rq_pi = pi;
	if (qp->type == RNIC_QPT_RC)
		rdma_rc_rq_doorbell(d, qp);
	else if (qp->state == RNIC_QPS_ERR)
		rdma_runq_add(d, qp);	/* flush what was posted late */
}

/*
 * RNIC_RDMA_CAP_RQ_PEEK: a receive post needs no kick, and the device
 * reads an RQ slot when a packet finds no receive WQE (rdma_wq.c). A QP
 * in ERR gets no packets, yet IB flushes every receive posted to it, so
 * with the heartbeat the RQ slot of each QP in ERR is read here and
 * whatever it shows is flushed. A value the checks refuse is left alone:
 * the QP has already failed, and reading it again every heartbeat must
 * not count it every time.
 */
void rdma_rq_watch(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	struct rdma_qp *qp;
	u32 i, val;

	if (!v->qps.obj)
		return;
	for (i = 0; i <= v->qps.mask; i++) {
		qp = v->qps.obj[i];
		if (!qp || qp->state != RNIC_QPS_ERR || qp->srq ||
		    qp->rq_slot == RNIC_DB_NONE)
			continue;
		val = rdma_slot_read(d, qp->page, qp->rq_slot);
		if ((u16)val == qp->rq_pi ||
		    !rdma_slot_pi_ok(val, qp->rq_ci, qp->rq.log2_depth))
			continue;
		RDMA_INC(d, rq_peeks);
		rq_moved(d, qp, val);
	}
}

/* ---- producer index slots ---- */

/* Read a SQ or RQ slot: the new PI, or -EINVAL (the QP failed). */
static int wq_slot(struct rdev *d, struct rdma_qp *qp, u16 slot, u16 ci,
		   u8 log2, u16 *pi)
{
	u32 v = rdma_slot_read(d, qp->page, slot);

	if (!rdma_slot_pi_ok(v, ci, log2)) {
		RDEV_INC(d, bad_doorbells);
		rdma_qp_fatal(d, qp, RNIC_EQE_QP_FATAL, RNIC_ERR_BAD_DOORBELL, v);
		return -EINVAL;
	}
	*pi = v;
	return 0;
}

void rdma_sq_slot(struct rdev *d, struct rdma_qp *qp)
{
	u16 pi;

	/* A QP in RESET has no rings in use: its slots mean nothing yet. */
	if (qp->state == RNIC_QPS_RESET ||
	    wq_slot(d, qp, qp->sq_slot, qp->sq_ci, qp->sq.log2_depth, &pi))
		return;
	qp->sq_pi = pi;
	if (qp->type == RNIC_QPT_RC)
		rdma_rc_sq_doorbell(d, qp);
	else if (qp->state == RNIC_QPS_RTS || qp->state == RNIC_QPS_ERR)
		rdma_runq_add(d, qp);
}

void rdma_rq_slot(struct rdev *d, struct rdma_qp *qp)
{
	u16 pi;

	if (qp->state == RNIC_QPS_RESET ||
	    wq_slot(d, qp, qp->rq_slot, qp->rq_ci, qp->rq.log2_depth, &pi))
		return;
	rq_moved(d, qp, pi);
}
