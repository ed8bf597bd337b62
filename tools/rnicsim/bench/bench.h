/* SPDX-License-Identifier: GPL-2.0 */
/* rnicsim --bench: how fast the model's datapath is without a guest. */
#ifndef RNICSIM_BENCH_H
#define RNICSIM_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include <rnic_compat.h>
#include <rnic_hw.h>

#include "platform/opts.h"
#include "platform/sim.h"

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

/*
 * rnicsim --bench=abi2 (bench_rdma.c): two ABI 2.0 devices on an
 * in-process wire, or (@tap) over two taps on a bridge in a network
 * namespace of their own, driven by the fake driver
 * (fakedrv/fakedrv_rdma.h). @dev must not be NULL.
 */
int bench_abi2(const struct sim_opts *o, const struct bench_dev_hooks *dev,
	       bool tap);

/* That namespace and its bridge and taps (bench_net.c) */
#define BENCH_NET_BRIDGE	"rnsbench0"
extern const char *const bench_net_taps[2];

struct bench_net {
	int home;		/* the namespace we came from; -1: none */
	bool bridge;
	int taps;		/* made so far */
};

/*
 * Enter a new network namespace and set the bridge and taps up there;
 * 0, or -EPERM when not root, or -errno (reason in @why, nothing left).
 */
int bench_net_up(struct bench_net *n, char *why, size_t len);
/* Delete them and return to the first namespace (none made: nothing) */
void bench_net_down(struct bench_net *n);

#endif /* RNICSIM_BENCH_H */
