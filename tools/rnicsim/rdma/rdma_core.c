// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine: lifetime of its state (made at an
 * enable that asks for 2.0, dropped by every reset), the pump that runs
 * received frames and send work, the timer and the transport counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma/engine.h"
#include "rdma/rdma.h"

/* Work items one pump call runs at most; the tick resumes the rest. */
#define RDMA_PUMP_MAX	(1U << 20)
/* rdma_kick_watch(): with the heartbeat, which wakes the device anyway */
#define RDMA_KICK_WATCH_NS	(RNIC_HEARTBEAT_PERIOD_MS * 1000000ULL)

/* ---- lifetime ---- */

static void free_objects(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	u32 i;

	/* QPs first: they hold references to everything else. */
	for (i = 0; i <= v->qps.mask; i++)
		if (v->qps.obj && v->qps.obj[i])
			rdma_qp_free(d, v->qps.obj[i]);
	for (i = 0; i <= v->srqs.mask; i++)
		if (v->srqs.obj && v->srqs.obj[i])
			rdma_srq_free(d, v->srqs.obj[i]);
	for (i = 0; i <= v->cqs.mask; i++)
		if (v->cqs.obj && v->cqs.obj[i])
			rdma_cq_free(d, v->cqs.obj[i]);
	for (i = 0; i <= v->mrs.mask; i++)
		if (v->mrs.obj && v->mrs.obj[i])
			rdma_mr_free(v->mrs.obj[i]);
	for (i = 0; i <= v->pds.mask; i++)
		if (v->pds.obj)
			free(v->pds.obj[i]);
	idtab_fini(&v->qps);
	idtab_fini(&v->srqs);
	idtab_fini(&v->cqs);
	idtab_fini(&v->mrs);
	idtab_fini(&v->pds);
}

void rdma_reset(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;

	if (!v)
		return;
	free_objects(d);
	free(v->ah_pages);
	free(v->fifo);
	free(v->live_dbp);
	free(v->dbp);
	free(v);
	d->rdma = NULL;
}

/* What rdma_wq.c calls above it (see struct rdma_upper) */
static const struct rdma_upper rdma_upper = {
	.qp_fatal = rdma_qp_fatal,
};

/* A table's size: its own, or --rdma-table-log2's if that is smaller */
static unsigned int table_log2(const struct rdev *d, unsigned int own)
{
	unsigned int cap = d->cfg.rdma_table_log2;

	return cap && cap < own ? cap : own;
}

int rdma_enable(struct rdev *d)
{
	struct rdma_dev *v = calloc(1, sizeof(*v));
	u64 pages;

	if (!v)
		return -ENOMEM;
	d->rdma = v;
	v->upper = &rdma_upper;
	pages = (d->bar2_len - RNIC_DBP_BASE_DEFAULT) / RNIC_DBP_SIZE;
	v->num_db_pages = pages > RDMA_MAX_DB_PAGES ? RDMA_MAX_DB_PAGES : pages;
	v->max_eq = d->cfg.num_vectors - 1;
	if (v->max_eq > RNIC_MAX_EQS)
		v->max_eq = RNIC_MAX_EQS;
	v->dbp = calloc(v->num_db_pages, sizeof(*v->dbp));
	v->live_dbp = calloc(v->num_db_pages, sizeof(*v->live_dbp));
	v->fifo = calloc(RDMA_RX_FIFO, sizeof(*v->fifo));
	v->pkey[0] = RNIC_PKEY_DEFAULT;
	/*
	 * QPN 1 is the GSI QP's: its slot is kept for it, so that no other
	 * QP can make its creation fail. QPN 0xffffff is the IB multicast
	 * QPN: the space stops short of it.
	 */
	if (!v->dbp || !v->live_dbp || !v->fifo ||
	    idtab_init(&v->pds, table_log2(d, RDMA_PD_LOG2), RDMA_ID_SPACE, 0) ||
	    idtab_init(&v->mrs, table_log2(d, RDMA_MR_LOG2), RDMA_ID_SPACE, 0) ||
	    idtab_init(&v->cqs, table_log2(d, RDMA_CQ_LOG2), RDMA_ID_SPACE, 0) ||
	    idtab_init(&v->srqs, table_log2(d, RDMA_SRQ_LOG2), RDMA_ID_SPACE,
		       0) ||
	    idtab_init(&v->qps, table_log2(d, RDMA_QP_LOG2), RDMA_ID_SPACE - 1,
		       BIT(RNIC_GSI_QPN))) {
		rdma_reset(d);
		return -ENOMEM;
	}
	return 0;
}

/* ---- the pump ---- */

static struct rdma_qp *runq_pop(struct rdma_dev *v)
{
	struct rdma_qp *qp = v->runq.head;

	if (!qp)
		return NULL;
	v->runq.head = qp->runq_next;
	if (!v->runq.head)
		v->runq.tail = NULL;
	qp->runq_next = NULL;
	qp->queued = false;
	return qp;
}

/* One packet's worth of send work; true if the QP has more. */
static bool qp_step(struct rdev *d, struct rdma_qp *qp)
{
	/* RC: the engine flushes, and may still owe the peer a NAK in ERR. */
	if (qp->type == RNIC_QPT_RC)
		return rdma_rc_send_step(d, qp);
	if (qp->state == RNIC_QPS_ERR) {
		rdma_qp_flush(d, qp);
		return false;
	}
	return rdma_ud_send_step(d, qp);
}

/* Received frames the transport may take now (none while rx_hold). */
static bool rx_runnable(const struct rdev *d)
{
	return d->rdma->fifo_count && !d->rx_hold;
}

/*
 * Run received frames first, then the senders in turn, a packet each:
 * the Ethernet TX rings (a frame per ring) and every QP with send work
 * (hardware-transport.rst, "Packets"), until there is nothing left. Re-entry
 * (a loopback packet, a CQE that fails a QP) only queues work for the
 * running pump.
 */
void rdma_pump(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	struct rdma_fifo_ent *f;
	struct rdma_qp *qp;
	unsigned int n;

	if (!v || v->busy || !d->enabled)
		return;
	v->busy = true;
	for (n = 0; n < RDMA_PUMP_MAX; n++) {
		if (rx_runnable(d)) {
			/* Popped after: a loopback append cannot overwrite it. */
			f = &v->fifo[v->fifo_head];
			rdma_rx_process(d, f->data, f->len);
			v->fifo_head = (v->fifo_head + 1) % RDMA_RX_FIFO;
			v->fifo_count--;
			continue;
		}
		if (v->eth_pending)
			v->eth_pending = rdev_tx_round(d);
		qp = runq_pop(v);
		if (qp && qp_step(d, qp))
			rdma_runq_add(d, qp);
		if (!qp && !v->eth_pending)
			break;
	}
	v->busy = false;
	rdev_pfc_check_now(d);
}

/* PFC released a priority: QPs parked on a pause may go on. */
void rdma_pfc_resume(struct rdev *d)
{
	struct rdma_dev *v = d->rdma;
	u32 i;

	for (i = 0; i <= v->qps.mask; i++) {
		struct rdma_qp *qp = v->qps.obj[i];

		if (qp && qp->pfc_wait) {
			qp->pfc_wait = false;
			if (qp->type == RNIC_QPT_RC)
				rdma_rc_resumed(d, qp, plat_now_ns(d->p) -
						     qp->pfc_since);
			rdma_runq_add(d, qp);
		}
	}
	rdma_pump(d);
}

static u64 earliest(u64 a, u64 b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

u64 rdma_tick(struct rdev *d, u64 now)
{
	u64 next;

	if (!d->rdma || !d->enabled)
		return 0;
	/* Kick entries a busy writer left behind, as if kicked again */
	if (d->rdma->kick_again)
		rdma_kick(d);
	if (now >= d->rdma->next_kick_watch) {
		rdma_kick_watch(d);
		rdma_rq_watch(d);
		d->rdma->next_kick_watch = now + RDMA_KICK_WATCH_NS;
	}
	/*
	 * Received frames before timers: an ACK already in the receive
	 * buffer must beat the retransmit timeout it makes moot, however
	 * late this tick runs on a busy host.
	 */
	rdma_pump(d);
	next = rdma_cq_tick(d, now);
	next = earliest(next, rdma_rc_tick(d, now));
	next = earliest(next, d->rdma->next_kick_watch);
	rdma_pump(d);
	/* Work left over by a pump that hit its limit: come back at once. */
	if (rx_runnable(d) || d->rdma->runq.head || d->rdma->eth_pending ||
	    d->rdma->kick_again)
		next = now;
	return next;
}

static const char * const rdma_stat_names[] = {
#define RDMA_STAT_NAME(name) #name,
	RNIC_RDMA_STATS(RDMA_STAT_NAME)
#undef RDMA_STAT_NAME
};

void rdma_dump_counters(struct rdev *d,
		      void (*out)(void *ctx, const char *line), void *ctx)
{
	char line[96];
	unsigned int i;

	if (!d->rdma)
		return;
	for (i = 0; i < RNIC_NUM_RDMA_STATS; i++) {
		snprintf(line, sizeof(line), "rdma_%s %llu",
			 rdma_stat_names[i],
			 (unsigned long long)d->rdma->ctr[i]);
		out(ctx, line);
	}
}

/* ---- the engine as the PCI function calls it ---- */

static void engine_eth_tx(struct rdev *d)
{
	d->rdma->eth_pending = true;
	rdma_pump(d);
}

/* Templates carry the port: it cannot change under them. */
static bool engine_port_in_use(struct rdev *d)
{
	return d->rdma->npaths || d->rdma->ah_pages;
}

static void engine_rx_room(struct rdev *d, unsigned int *free,
			   unsigned int *depth)
{
	*depth = RDMA_RX_FIFO;
	*free = RDMA_RX_FIFO - d->rdma->fifo_count;
}

const struct rdev_engine rdma_engine = {
	.enable = rdma_enable,
	.reset = rdma_reset,
	.pump = rdma_pump,
	.tick = rdma_tick,
	.admin = rdma_admin,
	.kick = rdma_kick,
	.eq_doorbell = rdma_eq_doorbell,
	.pfc_resume = rdma_pfc_resume,
	.rx_frame = rdma_rx_frame,
	.rx_malformed = rdma_rx_malformed,
	.dump_counters = rdma_dump_counters,
	.eth_tx = engine_eth_tx,
	.port_in_use = engine_port_in_use,
	.rx_room = engine_rx_room,
};
