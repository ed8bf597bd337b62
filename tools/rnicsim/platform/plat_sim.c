// SPDX-License-Identifier: GPL-2.0
/*
 * platform.h on top of sim.c, for rnicsim the process (main.c) and its
 * benchmark: one struct plat per device model, each on its own sim.
 */
#include <stdarg.h>

#include "platform/plat_sim.h"

void *plat_bar2(struct plat *p, size_t *len)
{
	if (len)
		*len = p->sim->ivs.shm_size;
	return p->sim->ivs.shm;
}

int plat_dma_read(struct plat *p, uint64_t gpa, void *buf, size_t len)
{
	return sim_dma_read(p->sim, gpa, buf, len);
}

int plat_dma_write(struct plat *p, uint64_t gpa, const void *buf, size_t len)
{
	return sim_dma_write(p->sim, gpa, buf, len);
}

void *plat_dma_ptr(struct plat *p, uint64_t gpa, size_t len)
{
	return sim_dma_ptr(p->sim, gpa, len);
}

void plat_raise_irq(struct plat *p, unsigned int vector)
{
	sim_raise_irq(p->sim, vector);
}

int plat_wire_tx(struct plat *p, const uint8_t *frame, size_t len)
{
	return sim_wire_tx(p->sim, frame, len);
}

uint64_t plat_now_ns(struct plat *p)
{
	(void)p;
	return sim_now_ns();
}

void plat_log(struct plat *p, const char *fmt, ...)
{
	va_list ap;

	(void)p;
	va_start(ap, fmt);
	sim_vlog(fmt, ap);
	va_end(ap);
}
