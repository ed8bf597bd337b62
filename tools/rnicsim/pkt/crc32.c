// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32 (reflected 0x04C11DB7). ICRC is on every RoCE frame, so this is
 * on the model's hot path.
 *
 * Tables: sixteen of them let the inner loop take 16 bytes per step
 * ("slicing by 16"); portable, and what short buffers always use.
 *
 * PCLMULQDQ (x86-64, checked at run time): the message is a polynomial
 * M(x) over GF(2), its first bit the highest power, and the CRC register
 * after it (from 0) is M(x) * x^32 mod P(x). Loaded little-endian, a
 * 16-byte block X is two 64-bit halves, the low one first in the
 * message: X = L * x^64 + H. Followed by d more bits, X adds
 *
 *	X * x^d = L * x^(d + 64) + H * x^d
 *	       == L * (x^(d + 64) mod P) + H * (x^d mod P)	(mod P)
 *
 * and each product of 64 by 32 bits fits a 128-bit block again, so it is
 * XORed into the block d bits further on: a block "folds" forward. In the
 * reflected order (bit i of a 64-bit half is x^(63 - i)) a carry-less
 * product comes out multiplied by an extra x; the constants make up for
 * it by being x^(d - 1) mod P rather than x^d mod P.
 *
 * Four blocks fold 64 bytes forward at a time (four independent chains),
 * then into each other and over the rest 16 bytes at a time. The last
 * block is then an ordinary 16-byte message with the same CRC as all
 * that went before: the tables finish it and the tail under 16 bytes.
 * The starting register is XORed into the first four bytes, which is
 * what a CRC register does with them.
 *
 * The fold constants are computed at start-up from the polynomial, so
 * there are no magic numbers to get wrong; the tests compare every
 * implementation against a bit-at-a-time reference.
 */
#include <string.h>

#include "pkt/crc32.h"

#define CRC32_POLY		0x04c11db7u	/* x^32 implied */
#define CRC32_POLY_REFLECTED	0xedb88320u

static uint32_t crc_tab[16][256];

static inline uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t crc32_tables(uint32_t crc, const uint8_t *p, size_t len)
{
	uint32_t a, b, c, d;

	while (len >= 16) {
		a = load_le32(p) ^ crc;
		b = load_le32(p + 4);
		c = load_le32(p + 8);
		d = load_le32(p + 12);
		crc = crc_tab[15][a & 0xff] ^ crc_tab[14][(a >> 8) & 0xff] ^
		      crc_tab[13][(a >> 16) & 0xff] ^ crc_tab[12][a >> 24] ^
		      crc_tab[11][b & 0xff] ^ crc_tab[10][(b >> 8) & 0xff] ^
		      crc_tab[9][(b >> 16) & 0xff] ^ crc_tab[8][b >> 24] ^
		      crc_tab[7][c & 0xff] ^ crc_tab[6][(c >> 8) & 0xff] ^
		      crc_tab[5][(c >> 16) & 0xff] ^ crc_tab[4][c >> 24] ^
		      crc_tab[3][d & 0xff] ^ crc_tab[2][(d >> 8) & 0xff] ^
		      crc_tab[1][(d >> 16) & 0xff] ^ crc_tab[0][d >> 24];
		p += 16;
		len -= 16;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32_HAVE_CLMUL	1
#include <immintrin.h>

/*
 * Below this crc32_update() stays with the tables: folding has a fixed
 * cost (the constants, four blocks to merge, the last 16 bytes by table).
 */
#define CRC32_CLMUL_MIN		128

static bool crc_clmul_ok;
/* { low half, high half } multipliers for 512-bit and 128-bit folds */
static uint64_t crc_k512[2], crc_k128[2];

#define CRC32_TARGET	__attribute__((target("pclmul,sse2")))

CRC32_TARGET static inline __m128i fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
			     _mm_clmulepi64_si128(x, k, 0x11));
}

static inline __m128i load128(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/* @len >= 64 */
CRC32_TARGET static uint32_t crc32_clmul(uint32_t crc, const uint8_t *p,
					 size_t len)
{
	__m128i k512 = _mm_set_epi64x((long long)crc_k512[1],
				      (long long)crc_k512[0]);
	__m128i k128 = _mm_set_epi64x((long long)crc_k128[1],
				      (long long)crc_k128[0]);
	__m128i x0, x1, x2, x3;
	uint8_t last[16];

	x0 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128((int)crc));
	x1 = load128(p + 16);
	x2 = load128(p + 32);
	x3 = load128(p + 48);
	p += 64;
	len -= 64;
	while (len >= 64) {
		x0 = _mm_xor_si128(fold(x0, k512), load128(p));
		x1 = _mm_xor_si128(fold(x1, k512), load128(p + 16));
		x2 = _mm_xor_si128(fold(x2, k512), load128(p + 32));
		x3 = _mm_xor_si128(fold(x3, k512), load128(p + 48));
		p += 64;
		len -= 64;
	}
	x0 = _mm_xor_si128(fold(x0, k128), x1);
	x0 = _mm_xor_si128(fold(x0, k128), x2);
	x0 = _mm_xor_si128(fold(x0, k128), x3);
	while (len >= 16) {
		x0 = _mm_xor_si128(fold(x0, k128), load128(p));
		p += 16;
		len -= 16;
	}
	_mm_storeu_si128((__m128i *)last, x0);
	crc = crc32_tables(0, last, sizeof(last));
	return crc32_tables(crc, p, len);
}

/* x^n mod P, bit i the coefficient of x^i */
static uint32_t xpow_mod(unsigned int n)
{
	uint32_t r = 1;

	while (n--)
		r = (r << 1) ^ (r & 0x80000000u ? CRC32_POLY : 0);
	return r;
}

static uint32_t bitrev32(uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < 32; i++)
		r |= ((v >> i) & 1) << (31 - i);
	return r;
}

/*
 * The multiplier for a half that is @d bits from where it folds to:
 * x^(d - 1) mod P, bit-reversed into the high 32 bits of a 64-bit lane
 * (bit i of the lane is x^(63 - i), as in the data).
 */
static uint64_t fold_const(unsigned int d)
{
	return (uint64_t)bitrev32(xpow_mod(d - 1)) << 32;
}

static void crc32_clmul_init(void)
{
	__builtin_cpu_init();
	crc_clmul_ok = __builtin_cpu_supports("pclmul");
	crc_k512[0] = fold_const(512 + 64);
	crc_k512[1] = fold_const(512);
	crc_k128[0] = fold_const(128 + 64);
	crc_k128[1] = fold_const(128);
}
#endif /* x86-64 */

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
		for (j = 1; j < 16; j++)
			crc_tab[j][i] = (crc_tab[j - 1][i] >> 8) ^
					crc_tab[0][crc_tab[j - 1][i] & 0xff];
#ifdef CRC32_HAVE_CLMUL
	crc32_clmul_init();
#endif
}

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
#ifdef CRC32_HAVE_CLMUL
	if (len >= CRC32_CLMUL_MIN && crc_clmul_ok)
		return crc32_clmul(crc, buf, len);
#endif
	return crc32_tables(crc, buf, len);
}

bool crc32_impl_available(enum crc32_impl impl)
{
	switch (impl) {
	case CRC32_IMPL_TABLE:
		return true;
#ifdef CRC32_HAVE_CLMUL
	case CRC32_IMPL_CLMUL:
		return crc_clmul_ok;
#endif
	default:
		return false;
	}
}

const char *crc32_impl_name(enum crc32_impl impl)
{
	static const char *const names[CRC32_IMPL_COUNT] = {
		[CRC32_IMPL_TABLE] = "tables",
		[CRC32_IMPL_CLMUL] = "pclmul",
	};

	return (unsigned int)impl < CRC32_IMPL_COUNT ? names[impl] : "?";
}

enum crc32_impl crc32_impl_active(void)
{
	return crc32_impl_available(CRC32_IMPL_CLMUL) ? CRC32_IMPL_CLMUL :
							CRC32_IMPL_TABLE;
}

uint32_t crc32_update_impl(enum crc32_impl impl, uint32_t crc,
			   const void *buf, size_t len)
{
#ifdef CRC32_HAVE_CLMUL
	if (impl == CRC32_IMPL_CLMUL && crc_clmul_ok && len >= 64)
		return crc32_clmul(crc, buf, len);
#endif
	(void)impl;
	return crc32_tables(crc, buf, len);
}
