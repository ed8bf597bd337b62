// SPDX-License-Identifier: GPL-2.0
/*
 * The fake driver's RDMA side on the fake platform, and the in-process
 * wire; see fake_rdma.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_rdma.h"

static struct rdrv *rdrv_new_cfg(u8 id, unsigned int signature_abi,
				 unsigned int table_log2)
{
	struct rdev_config cfg = { .num_vectors = 8,
				   .signature_abi = signature_abi,
				   .rdma_table_log2 = table_log2 };
	struct rdrv *x = calloc(1, sizeof(*x));
	struct tdev *t;

	if (!x)
		abort();
	/* The MAC rdrv_init gives it */
	cfg.mac[0] = 0x02;
	cfg.mac[5] = id;
	t = tdev_new_cfg(&cfg, RDRV_RAM_SIZE);
	rdrv_init(x, id, &t->drv, t);
	return x;
}

struct rdrv *rdrv_new(u8 id, unsigned int signature_abi)
{
	return rdrv_new_cfg(id, signature_abi, 0);
}

void rdrv_free(struct rdrv *x)
{
	tdev_free(rdrv_tdev(x));
	free(x);
}

struct rdrv *rdrv_up_tables(u8 id, unsigned int table_log2)
{
	struct rdrv *x = rdrv_new_cfg(id, 0, table_log2);

	if (tdev_init_abi(rdrv_tdev(x), RNIC_ABI2_MAJOR) !=
	    (RNIC_STATUS_ENABLED | FIELD_PREP(RNIC_STATUS_ABI, 2)) ||
	    rdrv_setup(x))
		abort();
	return x;
}

struct rdrv *rdrv_up(u8 id)
{
	return rdrv_up_tables(id, 0);
}

/* ---- the wire ---- */

static int wire_hook(void *ctx, const u8 *frame, size_t len)
{
	struct rdrv *from = ctx;
	struct twire *w = from->wire;
	struct twire_frame *f;

	if (w->count >= RDRV_WIRE_MAX || len > sizeof(f->data)) {
		w->dropped++;
		return 0;
	}
	f = &w->q[(w->head + w->count) % RDRV_WIRE_MAX];
	f->to = from == w->a ? 1 : 0;
	f->len = len;
	memcpy(f->data, frame, len);
	w->count++;
	return 0;
}

struct twire *twire_new(struct rdrv *a, struct rdrv *b)
{
	struct twire *w = calloc(1, sizeof(*w));

	if (!w)
		abort();
	w->q = calloc(RDRV_WIRE_MAX, sizeof(*w->q));
	if (!w->q)
		abort();
	w->a = a;
	w->b = b;
	a->wire = b->wire = w;
	rdrv_tdev(a)->p->wire_hook = rdrv_tdev(b)->p->wire_hook = wire_hook;
	rdrv_tdev(a)->p->wire_ctx = a;
	rdrv_tdev(b)->p->wire_ctx = b;
	return w;
}

void twire_free(struct twire *w)
{
	rdrv_tdev(w->a)->p->wire_hook = rdrv_tdev(w->b)->p->wire_hook = NULL;
	free(w->q);
	free(w);
}

/*
 * As rnicsim's loop does: a batch of received frames, then a tick of
 * each device (which runs what they received), until the wire is quiet.
 */
unsigned int twire_run(struct twire *w)
{
	struct tdev *a = rdrv_tdev(w->a), *b = rdrv_tdev(w->b);
	unsigned int n = 0, batch;
	struct twire_frame f;

	do {
		for (batch = w->count; batch; batch--) {
			f = w->q[w->head];
			w->head = (w->head + 1) % RDRV_WIRE_MAX;
			w->count--;
			if (w->filter && !w->filter(w, &f)) {
				w->dropped++;
				continue;
			}
			rdev_wire_rx((f.to ? b : a)->d, f.data, f.len);
			n++;
			w->delivered++;
		}
		rdev_tick(a->d, a->p->now);
		rdev_tick(b->d, b->p->now);
	} while (w->count && n < 100000);
	return n;
}

void twire_advance(struct twire *w, u64 ns)
{
	struct tdev *a = rdrv_tdev(w->a), *b = rdrv_tdev(w->b);

	a->p->now += ns;
	b->p->now += ns;
	rdev_tick(a->d, a->p->now);
	rdev_tick(b->d, b->p->now);
	twire_run(w);
}
