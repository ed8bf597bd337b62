/* SPDX-License-Identifier: GPL-2.0 */
/*
 * platform.h on top of sim.c (plat_sim.c): a device model's struct plat is
 * the sim it runs on.
 */
#ifndef RNICSIM_PLAT_SIM_H
#define RNICSIM_PLAT_SIM_H

#include "platform/platform.h"
#include "platform/sim.h"

struct plat {
	struct sim *sim;
};

#endif /* RNICSIM_PLAT_SIM_H */
