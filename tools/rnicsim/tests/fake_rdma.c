// SPDX-License-Identifier: GPL-2.0
/*
 * The fake driver's RDMA side on the fake platform, and the in-process
 * wire; see fake_rdma.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fake_rdma.h"

struct t2 *t2_new(u8 id, unsigned int signature_abi)
{
	struct rdev_config cfg = { .num_vectors = 8,
				   .signature_abi = signature_abi };
	struct t2 *x = calloc(1, sizeof(*x));
	struct tdev *t;

	if (!x)
		abort();
	/* The MAC t2_init gives it */
	cfg.mac[0] = 0x02;
	cfg.mac[5] = id;
	t = tdev_new_cfg(&cfg, T2_RAM_SIZE);
	t2_init(x, id, &t->drv, t);
	return x;
}

void t2_free(struct t2 *x)
{
	tdev_free(t2_tdev(x));
	free(x);
}

struct t2 *t2_up(u8 id)
{
	struct t2 *x = t2_new(id, 0);

	if (tdev_init_abi(t2_tdev(x), RNIC_ABI2_MAJOR) !=
	    (RNIC_STATUS_ENABLED | FIELD_PREP(RNIC_STATUS_ABI, 2)) ||
	    t2_setup(x))
		abort();
	return x;
}

/* ---- the wire ---- */

static int wire_hook(void *ctx, const u8 *frame, size_t len)
{
	struct t2 *from = ctx;
	struct twire *w = from->wire;
	struct twire_frame *f;

	if (w->count >= T2_WIRE_MAX || len > sizeof(f->data)) {
		w->dropped++;
		return 0;
	}
	f = &w->q[(w->head + w->count) % T2_WIRE_MAX];
	f->to = from == w->a ? 1 : 0;
	f->len = len;
	memcpy(f->data, frame, len);
	w->count++;
	return 0;
}

struct twire *twire_new(struct t2 *a, struct t2 *b)
{
	struct twire *w = calloc(1, sizeof(*w));

	if (!w)
		abort();
	w->q = calloc(T2_WIRE_MAX, sizeof(*w->q));
	if (!w->q)
		abort();
	w->a = a;
	w->b = b;
	a->wire = b->wire = w;
	t2_tdev(a)->p->wire_hook = t2_tdev(b)->p->wire_hook = wire_hook;
	t2_tdev(a)->p->wire_ctx = a;
	t2_tdev(b)->p->wire_ctx = b;
	return w;
}

void twire_free(struct twire *w)
{
	t2_tdev(w->a)->p->wire_hook = t2_tdev(w->b)->p->wire_hook = NULL;
	free(w->q);
	free(w);
}

/*
 * As rnicsim's loop does: a batch of received frames, then a tick of
 * each device (which runs what they received), until the wire is quiet.
 */
unsigned int twire_run(struct twire *w)
{
	struct tdev *a = t2_tdev(w->a), *b = t2_tdev(w->b);
	unsigned int n = 0, batch;
	struct twire_frame f;

	do {
		for (batch = w->count; batch; batch--) {
			f = w->q[w->head];
			w->head = (w->head + 1) % T2_WIRE_MAX;
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
	struct tdev *a = t2_tdev(w->a), *b = t2_tdev(w->b);

	a->p->now += ns;
	b->p->now += ns;
	rdev_tick(a->d, a->p->now);
	rdev_tick(b->d, b->p->now);
	twire_run(w);
}
