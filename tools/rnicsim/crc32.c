// SPDX-License-Identifier: GPL-2.0
/*
 * Table-driven CRC-32 (reflected 0x04C11DB7). Eight tables let the inner
 * loop consume 8 bytes per step; ICRC is on every RoCE frame, so this is
 * on the model's hot path.
 */
#include <string.h>

#include "crc32.h"

#define CRC32_POLY_REFLECTED	0xedb88320u

static uint32_t crc_tab[8][256];

/* Built before main() so that no caller ever sees a half-built table. */
__attribute__((constructor)) static void crc32_init(void)
{
	unsigned int i, j;
	uint32_t c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ CRC32_POLY_REFLECTED : c >> 1;
		crc_tab[0][i] = c;
	}
	/* crc_tab[k][i]: byte i followed by k zero bytes. */
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_tab[j][i] = (crc_tab[j - 1][i] >> 8) ^
					crc_tab[0][crc_tab[j - 1][i] & 0xff];
}

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t lo, hi;

	while (len >= 8) {
		lo = load_le32(p) ^ crc;
		hi = load_le32(p + 4);
		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		      crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
		      crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}
