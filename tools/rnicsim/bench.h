/* SPDX-License-Identifier: GPL-2.0 */
/* rnicsim --bench: how fast the model's datapath is without a guest. */
#ifndef RNICSIM_BENCH_H
#define RNICSIM_BENCH_H

#include "opts.h"

/* Prints the figures to stdout; 0 or -errno. */
int bench_run(const struct sim_opts *o);

#endif /* RNICSIM_BENCH_H */
