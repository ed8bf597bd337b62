// SPDX-License-Identifier: GPL-2.0
/*
 * RC packets: every header built and parsed back, truncations, the BTH
 * byte layout; and rxe's frames parsed and rebuilt byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapread.h"
#include "pkt/pkt.h"
#include "transport/rc.h"
#include "test.h"

/* ------------------------------------------------------------------------
 * Packets
 */

TEST(rc_pkt_round_trip)
{
	static const u8 ops[] = {
		0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13,
		0x14, 0x16, 0x17,
	};
	u8 buf[RC_PKT_MAX], payload[13];
	unsigned int i, plen, cut;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (u8)(0xa0 + i);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (plen = 0; plen <= sizeof(payload); plen += 5) {
			struct rc_hdr h = {
				.opcode = ops[i], .se = i & 1, .ackreq = i & 2,
				.pkey = 0x8123, .dest_qpn = 0xabcdef,
				.psn = 0xfedcba, .va = 0x0102030405060708ULL,
				.rkey = 0x11223344, .dma_len = 0x55667788,
				.syndrome = 0x61, .msn = 0x123456,
				.imm = cpu_to_be32(0xdeadbeef),
				.inv_key = 0xcafef00d,
				.swap_add = 0x1111222233334444ULL,
				.compare = 0x5555666677778888ULL,
				.orig = 0x99990000aaaabbbbULL,
			}, p;
			size_t len = rc_pkt_build(buf, &h, payload, plen);
			int mask = rc_hdr_mask(ops[i]);

			REQUIRE(mask >= 0);
			CHECK_EQ(len % 4, 0);
			CHECK_EQ(len, rc_hdr_len(ops[i]) + ((plen + 3) & ~3u));
			REQUIRE(rc_pkt_parse(buf, len, &p) == 0);
			CHECK_EQ(p.opcode, ops[i]);
			CHECK_EQ(p.se, h.se);
			CHECK_EQ(p.ackreq, h.ackreq);
			CHECK_EQ(p.pkey, 0x8123);
			CHECK_EQ(p.dest_qpn, 0xabcdef);
			CHECK_EQ(p.psn, 0xfedcba);
			CHECK_EQ(p.mask, (u32)mask);
			CHECK_EQ(p.payload_len, plen);
			CHECK_EQ(p.pad, (4 - plen % 4) % 4);
			CHECK(test_mem_eq(__FILE__, __LINE__, "payload",
					  p.payload, payload, plen));
			if (mask & (RC_HDR_RETH | RC_HDR_ATOMICETH)) {
				CHECK_EQ(p.va, h.va);
				CHECK_EQ(p.rkey, h.rkey);
			}
			if (mask & RC_HDR_RETH)
				CHECK_EQ(p.dma_len, h.dma_len);
			if (mask & RC_HDR_ATOMICETH) {
				CHECK_EQ(p.swap_add, h.swap_add);
				CHECK_EQ(p.compare, h.compare);
			}
			if (mask & RC_HDR_AETH) {
				CHECK_EQ(p.syndrome, 0x61);
				CHECK_EQ(p.msn, 0x123456);
			}
			if (mask & RC_HDR_ATOMICACKETH)
				CHECK_EQ(p.orig, h.orig);
			if (mask & RC_HDR_IMMDT)
				CHECK_EQ(p.imm, h.imm);
			if (mask & RC_HDR_IETH)
				CHECK_EQ(p.inv_key, h.inv_key);
			/* Every truncation fails cleanly (ASan sees reads). */
			for (cut = 0; cut < len; cut++) {
				u8 *copy = malloc(cut ? cut : 1);
				struct rc_hdr q;

				memcpy(copy, buf, cut);
				if (cut < rc_hdr_len(ops[i]) || cut % 4)
					CHECK(rc_pkt_parse(copy, cut, &q) != 0);
				free(copy);
			}
		}
	}
	/* Wire layout of a BTH, byte by byte (IB 9.2). */
	{
		struct rc_hdr h = { .opcode = RC_OP_SEND_LAST, .se = true,
				    .ackreq = true, .pkey = 0xffff,
				    .dest_qpn = 0x000123, .psn = 0x456789 };
		static const u8 want[] = { 0x02, 0xb0, 0xff, 0xff, 0x00, 0x00,
					   0x01, 0x23, 0x80, 0x45, 0x67, 0x89,
					   0x41, 0x00, 0x00, 0x00 };

		CHECK_EQ(rc_pkt_build(buf, &h, "A", 1), 16);
		CHECK_MEM_EQ(buf, want, sizeof(want));
	}
	/* TVer, reserved opcode, non-RC opcode, pad beyond the payload */
	{
		struct rc_hdr h = { .opcode = RC_OP_SEND_ONLY }, q;
		size_t len = rc_pkt_build(buf, &h, payload, 4);

		buf[1] |= 1;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[1] &= ~1;
		buf[0] = 0x15;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[0] = 0x64;
		CHECK(rc_pkt_parse(buf, len, &q) != 0);
		buf[0] = RC_OP_SEND_ONLY;
		CHECK_EQ(rc_pkt_parse(buf, RC_BTH_LEN, &q), 0);
		buf[1] |= 0x30;
		CHECK(rc_pkt_parse(buf, RC_BTH_LEN, &q) != 0);
		CHECK_EQ(rc_pkt_parse(buf, len, &q), 0);
		CHECK_EQ(q.payload_len, 1);
	}
	CHECK(rc_psn_after(0, 0xffffff));
	CHECK(!rc_psn_after(0xffffff, 0));
	CHECK(rc_psn_after(0x7fffff, 0));
	CHECK(!rc_psn_after(0x800000, 0));
	CHECK_EQ(rc_psn_add(0xfffffe, 3), 1);
}

/* ------------------------------------------------------------------------
 * Wire compatibility: rxe's frames parse, and build back byte for byte
 */

static void rxe_vectors(const char *name)
{
	char path[4096], err[256];
	struct pcapread_frame fr;
	struct pcapread *r;
	int n = 0, rc;

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", test_srcdir(),
		 name);
	r = pcapread_open(path, err, sizeof(err));
	REQUIRE(r);
	while ((rc = pcapread_next(r, &fr, err, sizeof(err))) == 1) {
		struct pkt_info info;
		struct rc_hdr h;
		u8 buf[RC_PKT_MAX + 64];
		const u8 *t;
		size_t tlen, blen;

		if (pkt_classify(fr.data, fr.len, PKT_ROCE_V2_PORT, &info) !=
		    PKT_CLASS_ROCE_V2_IPV4 &&
		    pkt_classify(fr.data, fr.len, PKT_ROCE_V2_PORT, &info) !=
		    PKT_CLASS_ROCE_V2_IPV6)
			continue;
		t = fr.data + info.bth_off;
		tlen = info.icrc_off - info.bth_off;
		if (t[0] >= 0x20)	/* UD and others: not ours */
			continue;
		REQUIRE(rc_pkt_parse(t, tlen, &h) == 0);
		REQUIRE(tlen <= sizeof(buf));
		/* Build it again from the parsed fields. */
		blen = rc_pkt_build(buf, &h, h.payload, h.payload_len);
		CHECK_EQ(blen, tlen);
		/* byte 4 (FECN/BECN) and AckReq's reserved bits aside */
		buf[4] = t[4];
		CHECK(test_mem_eq(__FILE__, __LINE__, name, buf, t, tlen));
		n++;
	}
	CHECK_EQ(rc, 0);
	pcapread_close(r);
	printf("# %s: %d RC packets of rxe parsed and rebuilt\n", name, n);
	CHECK(n > 0);
}

TEST(rc_rxe_wire_format)
{
	rxe_vectors("rxe_v2_ipv4.pcap");
	rxe_vectors("rxe_v2_ipv6.pcap");
}
