/* SPDX-License-Identifier: GPL-2.0 */
/* rnicsim --bench: how fast the model's datapath is without a guest. */
#ifndef RNICSIM_BENCH_H
#define RNICSIM_BENCH_H

#include <stddef.h>

#include "opts.h"
#include "sim.h"

/*
 * How the benchmark gets a device model on its own simulator (main.c
 * binds these to device.h; bench.c itself never names the device, so it
 * also links into the unit-test binary).
 */
struct bench_dev_hooks {
	const struct sim_dev_ops *ops;
	void *(*create)(struct sim *s, const struct sim_opts *o);
	void (*destroy)(void *dev);
};

/* Prints the figures to stdout; 0 or -errno. @dev may be NULL. */
int bench_run(const struct sim_opts *o, const struct bench_dev_hooks *dev);

/* This thread's CPU time, and one result line (bench.c). */
uint64_t bench_cpu_ns(void);
void bench_report(const char *dir, size_t len, uint64_t frames,
		  uint64_t wall_ns, uint64_t cpu_ns, const char *what);

/* The device runs (bench_dev.c), on a simulator with guest RAM mapped. */
int bench_device(struct sim *s, const struct bench_dev_hooks *h,
		 const struct sim_opts *o, const size_t *sizes,
		 unsigned int nsizes);

#endif /* RNICSIM_BENCH_H */
