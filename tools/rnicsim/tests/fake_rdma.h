/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fake driver's RDMA side (fakedrv/fakedrv_rdma.h) on the tests' fake
 * platform: devices made by the fake driver (fake_plat.h), whose bus
 * layer rdrv uses, and an in-process wire that joins two of them.
 */
#ifndef RNICSIM_TEST_FAKE_RDMA_H
#define RNICSIM_TEST_FAKE_RDMA_H

#include "fakedrv/fakedrv_rdma.h"
#include "fake_plat.h"

#define RDRV_RAM_SIZE	(16u << 20)
#define RDRV_WIRE_MAX	256

/* The fake driver under @x */
static inline struct tdev *rdrv_tdev(struct rdrv *x)
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
	struct rdrv *a, *b;
	struct twire_frame *q;	/* RDRV_WIRE_MAX */
	unsigned int head, count;
	unsigned int delivered, dropped;
	/* tests may drop or alter frames before they arrive */
	bool (*filter)(struct twire *w, struct twire_frame *f);
	void *filter_ctx;
};

struct rdrv *rdrv_new(u8 id, unsigned int signature_abi);
/* rdrv_new + enable with ABI 2 + rdrv_setup() */
struct rdrv *rdrv_up(u8 id);
/* rdrv_up with --rdma-table-log2 @table_log2 (0: full tables) */
struct rdrv *rdrv_up_tables(u8 id, unsigned int table_log2);
void rdrv_free(struct rdrv *x);

/* The wire */
struct twire *twire_new(struct rdrv *a, struct rdrv *b);
void twire_free(struct twire *w);
/* Deliver until nothing is in flight; returns frames delivered */
unsigned int twire_run(struct twire *w);
/* Let time pass on both ends of @w: clock forward, ticks, wire */
void twire_advance(struct twire *w, u64 ns);

#endif /* RNICSIM_TEST_FAKE_RDMA_H */
