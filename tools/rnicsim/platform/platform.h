/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim platform layer: everything that is not the NIC's own logic.
 *
 * The platform owns the ivshmem server socket, the BAR2 shared memory, the
 * mapping of the guest's RAM (DMA), the eventfds (doorbells in, MSI-X out),
 * the tap (the wire), pcap, fault injection and the control socket. The
 * device model (device.h) only ever touches the outside world through the
 * calls below, so it can be driven by unit tests and by the benchmark
 * without a guest.
 */
#ifndef RNICSIM_PLATFORM_H
#define RNICSIM_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct plat;

/* BAR2 as the guest sees it; valid from plat creation until plat_destroy. */
void *plat_bar2(struct plat *p, size_t *len);

/*
 * DMA by guest-physical address. Every call is bounds-checked against the
 * guest RAM mapping: a range not wholly inside it returns -EFAULT and
 * touches nothing. -ENODEV when no guest RAM is mapped (no guest yet).
 */
int plat_dma_read(struct plat *p, uint64_t gpa, void *buf, size_t len);
int plat_dma_write(struct plat *p, uint64_t gpa, const void *buf, size_t len);
/* Direct pointer into guest RAM for [gpa, gpa + len), or NULL if invalid. */
void *plat_dma_ptr(struct plat *p, uint64_t gpa, size_t len);

/* Raise MSI-X vector @vector in the guest (no-op if no guest/vector). */
void plat_raise_irq(struct plat *p, unsigned int vector);

/*
 * Put one frame on the wire. The platform applies TX fault injection
 * (drop, duplicate, reorder, corrupt, delay), writes pcap, and sends to the
 * tap. Returns 0 or a negative errno (-ENETDOWN when the link is down).
 */
int plat_wire_tx(struct plat *p, const uint8_t *frame, size_t len);

/* Monotonic clock in ns (a test build may substitute a fake clock). */
uint64_t plat_now_ns(struct plat *p);

/* Log a line prefixed with "rnicsim: " to stderr, printf-style. */
void plat_log(struct plat *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* RNICSIM_PLATFORM_H */
