// SPDX-License-Identifier: GPL-2.0
/*
 * crc32.c: known answers, and every implementation (tables, PCLMULQDQ
 * where the CPU has it, and crc32_update()'s choice between them) against
 * a bit-at-a-time reference: every short length at every alignment,
 * random lengths, alignments and starting registers from a fixed seed,
 * and a buffer fed in random pieces.
 *
 * Buffers end exactly where their allocation does, so a read past the
 * end (a 16-byte load too many) is caught by ASan (make test-asan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/crc32.h"
#include "test.h"

/* The register after @n bytes from @c, a bit at a time. */
static uint32_t crc32_ref_update(uint32_t c, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return c;
}

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
	return ~crc32_ref_update(0xffffffffu, p, n);
}

TEST(crc32_known_answers)
{
	uint8_t buf[300];
	size_t n, off;

	CHECK_EQ(crc32_ieee("123456789", 9), 0xcbf43926u);
	CHECK_EQ(crc32_ieee("", 0), 0);
	for (n = 0; n < sizeof(buf); n++)
		buf[n] = (uint8_t)(n * 31 + 7);
	/* Every length and alignment against a bit-at-a-time reference. */
	for (off = 0; off < 8; off++)
		for (n = 0; n + off <= sizeof(buf); n += 13)
			CHECK_EQ(crc32_ieee(buf + off, n),
				 crc32_bitwise(buf + off, n));
	/* Split updates equal one pass. */
	CHECK_EQ(~crc32_update(crc32_update(0xffffffffu, buf, 77), buf + 77, 200),
		 crc32_ieee(buf, 277));
}

static uint64_t crc_rng = 0x9e3779b97f4a7c15ull;

static uint32_t crc_rnd(void)
{
	/* xorshift64*: a fixed seed, the same run every time */
	crc_rng ^= crc_rng >> 12;
	crc_rng ^= crc_rng << 25;
	crc_rng ^= crc_rng >> 27;
	return (uint32_t)((crc_rng * 0x2545f4914f6cdd1dull) >> 32);
}

/*
 * One implementation, or crc32_update() (@impl < 0), over @n bytes of
 * @data at alignment @off of a buffer that ends with them.
 */
static uint32_t crc_run(int impl, uint32_t c, const uint8_t *data,
			size_t off, size_t n)
{
	uint8_t *b = malloc(off + n ? off + n : 1);
	uint32_t r;

	memcpy(b + off, data, n);
	r = impl < 0 ? crc32_update(c, b + off, n) :
		       crc32_update_impl(impl, c, b + off, n);
	free(b);
	return r;
}

static const char *crc_name(int impl)
{
	return impl < 0 ? "crc32_update" : crc32_impl_name(impl);
}

/* Is @impl (-1: crc32_update() itself) one to test here? */
static bool crc_testable(int impl)
{
	return impl < 0 || crc32_impl_available(impl);
}

static uint8_t *crc_random_data(size_t n)
{
	uint8_t *d = malloc(n);
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = (uint8_t)crc_rnd();
	return d;
}

TEST(crc32_every_short_length_and_alignment)
{
	const size_t max = 300;
	uint8_t *d = crc_random_data(max);
	size_t n, off;
	int impl;

	/* Around every boundary of the 16-byte tables and 64-byte folds. */
	for (impl = -1; impl < CRC32_IMPL_COUNT && !test_failed(); impl++) {
		if (!crc_testable(impl))
			continue;
		for (n = 0; n <= max && !test_failed(); n++)
			for (off = 0; off < 16; off++)
				CHECK_EQ(crc_run(impl, 0xffffffffu, d, off, n),
					 crc32_ref_update(0xffffffffu, d, n));
		if (test_failed())
			fprintf(stderr, "# %s: length %zu\n", crc_name(impl),
				n - 1);
	}
	free(d);
}

TEST(crc32_random_lengths_alignments_registers)
{
	const size_t max = 70000;
	uint8_t *d = crc_random_data(max);
	int impl, i;

	for (impl = -1; impl < CRC32_IMPL_COUNT && !test_failed(); impl++) {
		if (!crc_testable(impl))
			continue;
		printf("# crc32: testing %s\n", crc_name(impl));
		for (i = 0; i < 400 && !test_failed(); i++) {
			/* mostly packet sizes, now and then a long one */
			size_t n = crc_rnd() % (i % 8 ? 9000 : max - 64);
			size_t off = crc_rnd() % 64, start = crc_rnd() % 64;
			uint32_t c = crc_rnd();

			CHECK_EQ(crc_run(impl, c, d + start, off, n),
				 crc32_ref_update(c, d + start, n));
			if (test_failed())
				fprintf(stderr, "# %s: length %zu at %zu, "
					"register %08x\n", crc_name(impl), n,
					off, c);
		}
	}
	free(d);
}

TEST(crc32_pieces_in_any_implementation)
{
	const size_t n = 20000;
	uint8_t *d = crc_random_data(n);
	uint32_t want = crc32_ref_update(0xffffffffu, d, n);
	int round;

	/* Random pieces, each by a random implementation: one register. */
	for (round = 0; round < 50 && !test_failed(); round++) {
		uint32_t c = 0xffffffffu;
		size_t at = 0;

		while (at < n) {
			size_t len = crc_rnd() % (round % 2 ? 300 : 3000);
			int impl = (int)(crc_rnd() % (CRC32_IMPL_COUNT + 1)) - 1;

			if (len > n - at)
				len = n - at;
			if (!crc_testable(impl))
				impl = -1;
			c = crc_run(impl, c, d + at, crc_rnd() % 16, len);
			at += len;
		}
		CHECK_EQ(c, want);
	}
	CHECK_EQ(~want, crc32_ieee(d, n));
	free(d);
}
