/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fake driver's bus layer: what the kernel driver does to find and
 * start the PCI function, as Documentation/hardware.rst tells a driver
 * to. BAR2 and guest RAM as mapped, a bump allocator of guest RAM, the
 * reset/enable handshake, the admin queue and event queue 0. The unit
 * tests (tests/fake_plat.c, on the fake platform) and rnicsim --bench
 * (bench_rdma.c, on a simulator of its own) both drive the device through
 * it; the RDMA side of the driver is fakedrv_rdma.h.
 */
#ifndef RNICSIM_FAKEDRV_H
#define RNICSIM_FAKEDRV_H

#include <stdbool.h>
#include <stddef.h>

#include <rnic_compat.h>
#include <rnic_hw.h>

struct fakedrv {
	u8 *bar2;		/* BAR2 as mapped */
	u8 *ram;		/* guest RAM, at guest-physical 0 */
	size_t ram_len;
	/* A write of BAR0 Doorbell: the device sees vector @vector */
	void (*doorbell)(void *dev, unsigned int vector);
	void *dev;
	unsigned int aq_log2, eq_log2;
	u64 next_alloc;
	u64 aq_sq, aq_cq, eq;
	u16 aq_pi, eq_ci, cmd_id;
};

/* Guest RAM is handed out from 64 KiB up. */
void fakedrv_init(struct fakedrv *f, u8 *bar2, u8 *ram, size_t ram_len,
		  void (*doorbell)(void *dev, unsigned int vector), void *dev,
		  unsigned int aq_log2, unsigned int eq_log2);

/* Zeroed guest RAM (aborts when there is none left) */
u64 fakedrv_alloc(struct fakedrv *f, size_t size, size_t align);
void *fakedrv_ram(struct fakedrv *f, u64 gpa);
u32 fakedrv_r32(struct fakedrv *f, unsigned int off);
void fakedrv_w32(struct fakedrv *f, unsigned int off, u32 val);
void fakedrv_ring(struct fakedrv *f, unsigned int vector);

/*
 * Reset, then enable asking for ABI @abi (CTRL.ABI) with a fresh admin
 * queue and event queue 0; returns STATUS afterwards.
 */
u32 fakedrv_enable(struct fakedrv *f, unsigned int abi);

/*
 * Submit one admin command (a cmd_id is given if it has none) and wait:
 * its status, -1 if it did not complete, -2 if the completion is not its.
 * @resp (may be NULL) gets bytes 8..15 of the completion.
 */
int fakedrv_admin(struct fakedrv *f, void *cmd, union rnic_aq_resp *resp);

/* Port counter @s, read the way a driver would: QUERY_STATS; ~0 if refused */
u64 fakedrv_port_stat(struct fakedrv *f, enum rnic_port_stat s);

/* The next entry of event queue 0, consumed; false if none */
bool fakedrv_eq0_next(struct fakedrv *f, struct rnic_eqe *e);
/* Drain event queue 0: how many entries of @type it held (last in @last) */
unsigned int fakedrv_eq0_count(struct fakedrv *f, u8 type,
			       struct rnic_eqe *last);

#endif /* RNICSIM_FAKEDRV_H */
