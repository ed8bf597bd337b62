/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC-32 as Ethernet and the InfiniBand ICRC use it: polynomial
 * 0x04C11DB7, reflected (0xEDB88320), table-driven (slicing by 8).
 */
#ifndef RNICSIM_CRC32_H
#define RNICSIM_CRC32_H

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

#endif /* RNICSIM_CRC32_H */
