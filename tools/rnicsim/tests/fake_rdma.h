/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fake driver's RDMA side (fakedrv/fakedrv_rdma.h) on the tests' fake
 * platform: devices made by the fake driver (fake_plat.h), whose bus
 * layer t2 uses, and an in-process wire that joins two of them.
 */
#ifndef RNICSIM_TEST_FAKE_RDMA_H
#define RNICSIM_TEST_FAKE_RDMA_H

#include "fakedrv/fakedrv_rdma.h"
#include "fake_plat.h"

#define T2_RAM_SIZE	(16u << 20)
#define T2_WIRE_MAX	256

/* The fake driver under @x */
static inline struct tdev *t2_tdev(struct t2 *x)
{
	return x->ctx;
}

/* Two devices and the frames in flight between them */
struct twire_frame {
	u8 to;			/* 0: to a, 1: to b */
	u16 len;
	u8 data[RNIC_FRAME_OVERHEAD + 9100];
};

struct twire {
	struct t2 *a, *b;
	struct twire_frame *q;	/* T2_WIRE_MAX */
	unsigned int head, count;
	unsigned int delivered, dropped;
	/* tests may drop or alter frames before they arrive */
	bool (*filter)(struct twire *w, struct twire_frame *f);
	void *filter_ctx;
};

struct t2 *t2_new(u8 id, unsigned int signature_abi);
/* t2_new + enable with ABI 2 + t2_setup() */
struct t2 *t2_up(u8 id);
void t2_free(struct t2 *x);

/* The wire */
struct twire *twire_new(struct t2 *a, struct t2 *b);
void twire_free(struct twire *w);
/* Deliver until nothing is in flight; returns frames delivered */
unsigned int twire_run(struct twire *w);
/* Let time pass on both ends of @w: clock forward, ticks, wire */
void twire_advance(struct twire *w, u64 ns);

#endif /* RNICSIM_TEST_FAKE_RDMA_H */
