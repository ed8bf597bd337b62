// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection: counts and rates are honoured and counted, the PRNG
 * is deterministic, frames are reordered/delayed/duplicated/corrupted as
 * specified, pause storms produce PFC frames, bad specs change nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fault/fault.h"
#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

#define MAX_SEEN	20000

struct seen {
	int n;
	int link_calls;
	bool link_down;
	enum fault_dir dir[MAX_SEEN];
	uint32_t tag[MAX_SEEN];		/* first 4 bytes of each frame */
	size_t len[MAX_SEEN];
	uint8_t last[2048];
};

static void on_emit(void *ctx, enum fault_dir dir, const uint8_t *f,
		    size_t len)
{
	struct seen *s = ctx;

	if (s->n >= MAX_SEEN)
		return;
	s->dir[s->n] = dir;
	memcpy(&s->tag[s->n], f, 4);
	s->len[s->n] = len;
	memcpy(s->last, f, len < sizeof(s->last) ? len : sizeof(s->last));
	s->n++;
}

static void on_link(void *ctx, bool down)
{
	struct seen *s = ctx;

	s->link_calls++;
	s->link_down = down;
}

static const struct fault_ops ops = { .emit = on_emit, .link = on_link };

static void send_tagged(struct fault *f, enum fault_dir dir, uint32_t tag,
			uint64_t now)
{
	uint8_t fr[64] = { 0 };

	memcpy(fr, &tag, 4);
	fault_process(f, dir, fr, sizeof(fr), now);
}

static int parse(struct fault *f, const char *spec)
{
	char err[256];

	return fault_parse(f, spec, 0, err, sizeof(err));
}

TEST(fault_counts)
{
	static struct seen s;
	struct fault f;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 1);
	REQUIRE(parse(&f, "drop=5") == 0);
	for (i = 0; i < 10; i++) {
		send_tagged(&f, FAULT_TX, i, 0);
		send_tagged(&f, FAULT_RX, 100 + i, 0);
	}
	/* The next 5 in each direction, then nothing. */
	CHECK_EQ(s.n, 10);
	CHECK_EQ(s.tag[0], 5);
	CHECK_EQ(s.tag[1], 105);
	CHECK_EQ(f.hits[FAULT_TX][FK_DROP], 5);
	CHECK_EQ(f.hits[FAULT_RX][FK_DROP], 5);
	CHECK(!fault_active(&f));

	/* tx. only touches TX; dup sends twice. */
	s.n = 0;
	REQUIRE(parse(&f, "tx.dup=3") == 0);
	for (i = 0; i < 5; i++) {
		send_tagged(&f, FAULT_TX, i, 0);
		send_tagged(&f, FAULT_RX, 100 + i, 0);
	}
	CHECK_EQ(s.n, 13);
	CHECK_EQ(s.tag[0], 0);
	CHECK_EQ(s.tag[1], 0);
	CHECK_EQ(f.hits[FAULT_TX][FK_DUP], 3);
	CHECK_EQ(f.hits[FAULT_RX][FK_DUP], 0);
	fault_fini(&f);
}

/*
 * The platform reads the clock for a frame only when fault_needs_clock()
 * says so: exactly when a delay or reorder rule is on in that direction.
 */
TEST(fault_needs_clock_only_for_delay_and_reorder)
{
	static struct seen s;
	struct fault f;

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 1);
	CHECK(!fault_needs_clock(&f, FAULT_TX));
	CHECK(!fault_needs_clock(&f, FAULT_RX));
	REQUIRE(parse(&f, "drop=1%,dup=1%,corrupt=1%") == 0);
	CHECK(!fault_needs_clock(&f, FAULT_TX));
	CHECK(!fault_needs_clock(&f, FAULT_RX));
	REQUIRE(parse(&f, "tx.delay=1ms") == 0);
	CHECK(fault_needs_clock(&f, FAULT_TX));
	CHECK(!fault_needs_clock(&f, FAULT_RX));
	REQUIRE(parse(&f, "tx.delay=0,rx.reorder=1%") == 0);
	CHECK(!fault_needs_clock(&f, FAULT_TX));
	CHECK(fault_needs_clock(&f, FAULT_RX));
	fault_clear(&f);
	CHECK(!fault_needs_clock(&f, FAULT_RX));
	CHECK(!fault_needs_clock(&f, FAULT_NDIR));
	fault_fini(&f);
}

TEST(fault_rates_are_counted_and_deterministic)
{
	static struct seen s1, s2;
	struct fault a, b;
	uint32_t i, n = 20000;

	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	fault_init(&a, &ops, &s1, 42);
	fault_init(&b, &ops, &s2, 42);
	REQUIRE(parse(&a, "rx.drop=10%") == 0);
	REQUIRE(parse(&b, "rx.drop=10%") == 0);
	for (i = 0; i < n; i++) {
		send_tagged(&a, FAULT_RX, i, 0);
		send_tagged(&b, FAULT_RX, i, 0);
	}
	/* Every missing frame is counted, and about 10% are missing. */
	CHECK_EQ(a.hits[FAULT_RX][FK_DROP] + (uint64_t)s1.n, n);
	CHECK(a.hits[FAULT_RX][FK_DROP] > n / 10 - 300);
	CHECK(a.hits[FAULT_RX][FK_DROP] < n / 10 + 300);
	/* Same seed, same traffic: the same frames dropped. */
	CHECK_EQ(s1.n, s2.n);
	CHECK_MEM_EQ(s1.tag, s2.tag, sizeof(uint32_t) * (size_t)s1.n);
	/* A different seed drops different frames. */
	s2.n = 0;
	REQUIRE(parse(&b, "seed=7") == 0);
	for (i = 0; i < n; i++)
		send_tagged(&b, FAULT_RX, i, 0);
	CHECK(memcmp(s1.tag, s2.tag, 4000) != 0);
	/* 100% drops everything, 0% turns it off. */
	s1.n = 0;
	REQUIRE(parse(&a, "drop=100%") == 0);
	for (i = 0; i < 100; i++)
		send_tagged(&a, FAULT_TX, i, 0);
	CHECK_EQ(s1.n, 0);
	REQUIRE(parse(&a, "drop=0%") == 0);
	send_tagged(&a, FAULT_TX, 1, 0);
	CHECK_EQ(s1.n, 1);
	fault_fini(&a);
	fault_fini(&b);
}

TEST(fault_reorder_and_delay)
{
	static struct seen s;
	struct fault f;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 1);
	REQUIRE(parse(&f, "tx.reorder=1") == 0);
	for (i = 1; i <= 3; i++)
		send_tagged(&f, FAULT_TX, i, 0);
	/* 1 was held back behind 2. */
	REQUIRE(s.n == 3);
	CHECK_EQ(s.tag[0], 2);
	CHECK_EQ(s.tag[1], 1);
	CHECK_EQ(s.tag[2], 3);
	CHECK_EQ(f.hits[FAULT_TX][FK_REORDER], 1);
	/* A held frame with nothing behind it goes out after a while. */
	s.n = 0;
	REQUIRE(parse(&f, "tx.reorder=1") == 0);
	send_tagged(&f, FAULT_TX, 9, 1000);
	CHECK_EQ(s.n, 0);
	CHECK(fault_poll(&f, 1000) > 1000);
	fault_poll(&f, 1000 + 10000000ull);
	CHECK_EQ(s.n, 1);

	/* delay=10ms@2: the next two wait 10 ms, in order; then none. */
	s.n = 0;
	REQUIRE(parse(&f, "rx.delay=10ms@2") == 0);
	send_tagged(&f, FAULT_RX, 1, 0);
	send_tagged(&f, FAULT_RX, 2, 1000);
	send_tagged(&f, FAULT_RX, 3, 2000);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(s.tag[0], 3);
	CHECK_EQ(fault_poll(&f, 5000000), 10000000);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(fault_poll(&f, 10000500), 10001000);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.tag[1], 1);
	CHECK_EQ(fault_poll(&f, 20000000), 0);
	CHECK_EQ(s.n, 3);
	CHECK_EQ(s.tag[2], 2);
	CHECK_EQ(f.hits[FAULT_RX][FK_DELAY], 2);

	/* clear releases what is still held, in order. */
	s.n = 0;
	REQUIRE(parse(&f, "delay=1s") == 0);
	send_tagged(&f, FAULT_TX, 7, 0);
	send_tagged(&f, FAULT_RX, 8, 0);
	CHECK_EQ(s.n, 0);
	CHECK_EQ(f.queued, 2);
	fault_clear(&f);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.tag[0], 7);
	CHECK_EQ(f.queued, 0);
	CHECK(!fault_active(&f));
	fault_fini(&f);
}

TEST(fault_corrupt_breaks_icrc)
{
	static struct seen s;
	static const enum tf_kind kinds[] = { TF_V1, TF_V2_IPV4, TF_V2_IPV6 };
	struct pkt_info info;
	uint8_t fr[512], orig[512];
	struct fault f;
	size_t len, i, k, diff;

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 3);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 50; i++) {
			len = tf_roce(fr, kinds[k], i, -1, PKT_ROCE_V2_PORT);
			memcpy(orig, fr, len);
			REQUIRE(parse(&f, "corrupt=1") == 0);
			s.n = 0;
			fault_process(&f, FAULT_TX, fr, len, 0);
			REQUIRE(s.n == 1);
			/* The caller's frame is untouched ... */
			CHECK_MEM_EQ(fr, orig, len);
			/* ... the emitted one differs in exactly one byte ... */
			for (diff = 0, len = s.len[0]; len--;)
				diff += s.last[len] != orig[len];
			CHECK_EQ(diff, 1);
			/* ... and fails its ICRC, but is still RoCE. */
			CHECK(pkt_classify(s.last, s.len[0], PKT_ROCE_V2_PORT,
					   &info) != PKT_CLASS_ETH);
			CHECK(!pkt_icrc_ok(s.last, &info));
		}
	}
	CHECK_EQ(f.hits[FAULT_TX][FK_CORRUPT], 150);
	fault_fini(&f);
}

TEST(fault_pause_storm)
{
	static struct seen s;
	uint8_t en = 0;
	uint16_t q[8];
	struct fault f;
	uint64_t t;
	char err[128];

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 1);
	/* A count: 5 XOFF frames for priority 3, one per millisecond. */
	REQUIRE(fault_parse(&f, "pause=3:5", 0, err, sizeof(err)) == 0);
	for (t = 0; t <= 20000000; t += 100000)
		fault_poll(&f, t);
	CHECK_EQ(s.n, 5);
	CHECK_EQ(f.pause_sent, 5);
	CHECK_EQ(s.dir[0], FAULT_RX);
	CHECK_EQ(s.len[0], 60);
	CHECK(pkt_pfc_parse(s.last, s.len[0], &en, q));
	CHECK_EQ(en, 1 << 3);
	CHECK_EQ(q[3], 0xffff);
	CHECK(!f.pause.on);

	/* A rate: 2000/s over one simulated second, quanta 100. */
	s.n = 0;
	REQUIRE(fault_parse(&f, "pause=6:2000/s:q100", 0, err,
			    sizeof(err)) == 0);
	for (t = 0; t < 1000000000ull; t += 250000)
		fault_poll(&f, t);
	CHECK(s.n >= 1999 && s.n <= 2001);
	CHECK(pkt_pfc_parse(s.last, s.len[0], &en, q));
	CHECK_EQ(en, 1 << 6);
	CHECK_EQ(q[6], 100);
	REQUIRE(parse(&f, "pause=off") == 0);
	s.n = 0;
	fault_poll(&f, 2000000000ull);
	CHECK_EQ(s.n, 0);
	fault_fini(&f);
}

TEST(fault_spec_errors_change_nothing)
{
	static const char *const bad[] = {
		"drop", "drop=", "drop=abc", "drop=101%", "drop=-1%",
		"drop=1%%", "bogus=1", "tx.bogus=1", "link=sideways",
		"pause=8:1", "pause=3", "pause=3:0", "pause=3:10/s:x5",
		"delay=5xs", "delay=10ms@", "delay=ms", "seed=x", "", ",",
		"drop=5,bogus=1", "drop=1e3%", "corrupt=0x",
	};
	static struct seen s;
	struct fault f;
	char err[256];
	size_t i;

	memset(&s, 0, sizeof(s));
	fault_init(&f, &ops, &s, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (fault_parse(&f, bad[i], 0, err, sizeof(err)) != -EINVAL)
			test_fail(__FILE__, __LINE__, "accepted '%s'", bad[i]);
		else if (!err[0] && bad[i][0] && bad[i][0] != ',')
			test_fail(__FILE__, __LINE__, "no reason for '%s'",
				  bad[i]);
	}
	/* All or nothing: drop=5 of the last one did not take effect. */
	CHECK(!fault_active(&f));
	CHECK_EQ(s.link_calls, 0);

	/* link=down reports through the callback and back up on clear. */
	REQUIRE(parse(&f, "link=down,duplicate=1%,rx.corrupt=2") == 0);
	CHECK_EQ(s.link_calls, 1);
	CHECK(s.link_down);
	fault_describe(&f, err, sizeof(err));
	CHECK(strstr(err, "link=down") != NULL);
	CHECK(strstr(err, "tx.dup=1%") != NULL);
	CHECK(strstr(err, "rx.corrupt=2") != NULL);
	fault_clear(&f);
	CHECK_EQ(s.link_calls, 2);
	CHECK(!s.link_down);
	fault_describe(&f, err, sizeof(err));
	CHECK(!strcmp(err, "none"));
	fault_fini(&f);
}
