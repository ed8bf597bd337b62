/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC-32 as Ethernet and the InfiniBand ICRC use it: polynomial
 * 0x04C11DB7, reflected (0xEDB88320). Tables (slicing by 16) everywhere;
 * on x86-64 with PCLMULQDQ, carry-less multiplication for long buffers.
 */
#ifndef RNICSIM_CRC32_H
#define RNICSIM_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Feed @len bytes into a running CRC register. No pre/post inversion:
 * start from 0xffffffff and invert at the end for the standard CRC-32.
 */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

/* The standard CRC-32 (as zlib.crc32) of a buffer. */
static inline uint32_t crc32_ieee(const void *buf, size_t len)
{
	return ~crc32_update(0xffffffffu, buf, len);
}

/*
 * The ways crc32_update() can compute it, for the tests and --bench:
 * crc32_update() takes the fastest one this CPU has.
 */
enum crc32_impl {
	CRC32_IMPL_TABLE,	/* slicing by 16, portable */
	CRC32_IMPL_CLMUL,	/* x86-64 PCLMULQDQ folding */
	CRC32_IMPL_COUNT,
};

/* Whether @impl runs on this build and CPU. */
bool crc32_impl_available(enum crc32_impl impl);
/* "tables", "pclmul" */
const char *crc32_impl_name(enum crc32_impl impl);
/* What crc32_update() uses for long buffers. */
enum crc32_impl crc32_impl_active(void);
/*
 * crc32_update() by @impl. CLMUL folds any buffer of 64 bytes or more
 * (crc32_update() only longer ones, where it pays) and leaves shorter
 * ones, or all of them on a CPU without it, to the tables.
 */
uint32_t crc32_update_impl(enum crc32_impl impl, uint32_t crc,
			   const void *buf, size_t len);

#endif /* RNICSIM_CRC32_H */
