// SPDX-License-Identifier: GPL-2.0
/*
 * pkt.c: RX classification (including every truncation of valid
 * frames and random corruption), ICRC masking, PFC, VLAN, IPv4 checksum.
 *
 * Frames under test are copied into heap buffers of exactly their length,
 * so an over-read is caught by ASan/valgrind (make test-asan).
 */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "pkt/pkt.h"
#include "test.h"

/* Classify a copy of exactly @len bytes, so over-reads are detectable. */
static enum pkt_class classify_exact(const uint8_t *f, size_t len,
				     struct pkt_info *info)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum pkt_class cls;

	memcpy(copy, f, len);
	cls = pkt_classify(copy, len, PKT_ROCE_V2_PORT, info);
	if (cls == PKT_CLASS_ROCE_V1 || cls == PKT_CLASS_ROCE_V2_IPV4 ||
	    cls == PKT_CLASS_ROCE_V2_IPV6) {
		CHECK(info->icrc_off + 4 <= len);
		CHECK(info->bth_off + 12 <= info->icrc_off);
		(void)pkt_icrc_ok(copy, info);
	}
	free(copy);
	return cls;
}

TEST(classify_roce_kinds)
{
	static const struct {
		enum tf_kind kind;
		enum pkt_class cls;
		size_t l3, bth;
	} cases[] = {
		{ TF_V1, PKT_CLASS_ROCE_V1, 14, 54 },
		{ TF_V2_IPV4, PKT_CLASS_ROCE_V2_IPV4, 14, 42 },
		{ TF_V2_IPV6, PKT_CLASS_ROCE_V2_IPV6, 14, 62 },
	};
	struct pkt_info info;
	uint8_t f[2048];
	size_t i, len;
	int vlan;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (vlan = 0; vlan < 2; vlan++) {
			len = tf_roce(f, cases[i].kind, 100,
				      vlan ? 0x6005 : -1, PKT_ROCE_V2_PORT);
			CHECK_EQ(classify_exact(f, len, &info), cases[i].cls);
			CHECK_EQ(info.cls, cases[i].cls);
			CHECK_EQ(info.vlan, vlan);
			CHECK_EQ(info.vlan_tci, vlan ? 0x6005 : 0);
			CHECK_EQ(info.l3_off, cases[i].l3 + 4 * vlan);
			CHECK_EQ(info.bth_off, cases[i].bth + 4 * vlan);
			CHECK_EQ(info.icrc_off, len - 4);
			CHECK(pkt_icrc_ok(f, &info));
		}
	}
}

TEST(classify_other_traffic)
{
	struct pkt_info info;
	uint8_t f[2048];
	size_t len;

	/* RoCE v2 on another port: ordinary UDP, and vice versa. */
	len = tf_roce(f, TF_V2_IPV4, 64, -1, 4792);
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	CHECK_EQ(pkt_classify(f, len, 4792, &info), PKT_CLASS_ROCE_V2_IPV4);
	len = tf_roce(f, TF_V2_IPV6, 64, 7, 53);
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	CHECK(info.vlan);
	len = tf_arp(f);
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	CHECK_EQ(info.bth_off, 0);
	CHECK_EQ(info.icrc_off, 0);
	CHECK_EQ(pkt_classify(NULL, 0, PKT_ROCE_V2_PORT, &info),
		 PKT_CLASS_ETH);
	/* NULL info is allowed. */
	CHECK_EQ(pkt_classify(f, len, PKT_ROCE_V2_PORT, NULL), PKT_CLASS_ETH);
}

/* Every prefix of a valid frame: never RoCE, never an over-read. */
TEST(classify_every_truncation)
{
	static const enum tf_kind kinds[] = { TF_V1, TF_V2_IPV4, TF_V2_IPV6 };
	struct pkt_info info;
	enum pkt_class cls;
	uint8_t f[1200];
	size_t k, n, len, udp_end;
	int vlan;

	for (k = 0; k < 3; k++) {
		for (vlan = 0; vlan < 2; vlan++) {
			len = tf_roce(f, kinds[k], 1024, vlan ? 3 : -1,
				      PKT_ROCE_V2_PORT);
			udp_end = 14 + 4 * vlan +
				  (kinds[k] == TF_V2_IPV4 ? 20 : 40) + 8;
			for (n = 0; n < len; n++) {
				cls = classify_exact(f, n, &info);
				if (n < 14 + 4 * (size_t)vlan ||
				    (kinds[k] != TF_V1 && n < udp_end))
					CHECK_EQ(cls, PKT_CLASS_ETH);
				else
					CHECK_EQ(cls, PKT_CLASS_MALFORMED);
			}
			/* Ethernet padding after the datagram is fine. */
			memset(f + len, 0, 16);
			cls = classify_exact(f, len + 16, &info);
			CHECK(cls != PKT_CLASS_MALFORMED && cls != PKT_CLASS_ETH);
			CHECK_EQ(info.icrc_off, len - 4);
			CHECK(pkt_icrc_ok(f, &info));
		}
	}
}

/* Random corruption of headers: classification stays in bounds. */
TEST(classify_random_corruption)
{
	static const enum tf_kind kinds[] = { TF_V1, TF_V2_IPV4, TF_V2_IPV6 };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct pkt_info info;
	uint8_t f[600], g[600];
	size_t len, n, i;
	int iter, j;

	for (iter = 0; iter < 30000; iter++) {
		len = tf_roce(f, kinds[iter % 3], 40 + iter % 200,
			      (iter & 8) ? 1 : -1, PKT_ROCE_V2_PORT);
		memcpy(g, f, len);
		/* Flip a few bytes within the first 80 (the headers). */
		for (j = 0; j < 1 + iter % 4; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			i = (size_t)(x % 80);
			g[i] ^= (uint8_t)(x >> 32) | 1;
		}
		n = (iter & 16) ? len - (size_t)(x >> 40) % len : len;
		(void)classify_exact(g, n, &info);
	}
}

TEST(classify_ipv4_header_checks)
{
	struct pkt_info info;
	uint8_t f[512];
	size_t len;

	len = tf_roce(f, TF_V2_IPV4, 32, -1, PKT_ROCE_V2_PORT);
	f[14] = 0x44;			/* IHL 4: invalid */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	f[14] = 0x4f;			/* IHL 15: UDP no longer where it was */
	CHECK(classify_exact(f, len, &info) != PKT_CLASS_ROCE_V2_IPV4);
	f[14] = 0x45;
	f[20] = 0x20;			/* MF: a fragmented RoCE datagram */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	f[20] = 0x00;
	f[21] = 0x10;			/* a later fragment: no UDP header */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	f[21] = 0x00;
	f[17] += 4;			/* IP length beyond the UDP datagram */
	CHECK_EQ(classify_exact(f, len + 4, &info), PKT_CLASS_MALFORMED);
	f[17] -= 4;
	f[14 + 20 + 5] -= 1;		/* UDP length not the IP payload */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	f[14 + 20 + 4] = 0;
	f[14 + 20 + 5] = 8;		/* UDP length too short for BTH */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	len = tf_roce(f, TF_V2_IPV4, 32, -1, PKT_ROCE_V2_PORT);
	f[14] = 0x55;			/* version 5 */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
}

TEST(classify_ipv6_and_v1_checks)
{
	struct pkt_info info;
	uint8_t f[512];
	size_t len;

	len = tf_roce(f, TF_V2_IPV6, 32, -1, PKT_ROCE_V2_PORT);
	f[14 + 6] = 0;			/* hop-by-hop extension header */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
	f[14 + 6] = 17;
	f[14 + 5] += 4;			/* payload length beyond the frame */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	len = tf_roce(f, TF_V1, 32, -1, PKT_ROCE_V2_PORT);
	f[14 + 6] = 17;			/* GRH next header not BTH */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	f[14 + 6] = 0x1b;
	f[14] = 0x40;			/* GRH version 4 */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
	f[14] = 0x60;
	f[14 + 4] = 0;
	f[14 + 5] = 15;			/* payload shorter than BTH + ICRC */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_MALFORMED);
}

/* Which bytes the ICRC covers: masked ones may change, the rest may not. */
static void check_mask(enum tf_kind kind, const size_t *masked, size_t nm,
		       const size_t *covered, size_t nc)
{
	struct pkt_info info;
	uint8_t f[512];
	size_t len, i;

	len = tf_roce(f, kind, 20, -1, PKT_ROCE_V2_PORT);
	for (i = 0; i < nm; i++) {
		f[masked[i]] ^= 0x5a;
		CHECK_EQ(pkt_classify(f, len, PKT_ROCE_V2_PORT, &info),
			 kind == TF_V1 ? PKT_CLASS_ROCE_V1 :
			 kind == TF_V2_IPV4 ? PKT_CLASS_ROCE_V2_IPV4 :
			 PKT_CLASS_ROCE_V2_IPV6);
		if (!pkt_icrc_ok(f, &info))
			test_fail(__FILE__, __LINE__,
				  "kind %d: masked byte %zu changed the ICRC",
				  kind, masked[i]);
		f[masked[i]] ^= 0x5a;
	}
	for (i = 0; i < nc; i++) {
		f[covered[i]] ^= 0x01;
		pkt_classify(f, len, PKT_ROCE_V2_PORT, &info);
		if (pkt_icrc_ok(f, &info))
			test_fail(__FILE__, __LINE__,
				  "kind %d: covered byte %zu not in the ICRC",
				  kind, covered[i]);
		f[covered[i]] ^= 0x01;
	}
}

TEST(icrc_masks)
{
	/* Offsets from frame start; untagged, L3 at 14. */
	static const size_t v4_masked[] = {
		15,		/* TOS */
		22,		/* TTL */
		24, 25,		/* IPv4 checksum */
		40, 41,		/* UDP checksum */
		42 + 4,		/* BTH resv8a */
		0, 5, 6, 11,	/* Ethernet header is not covered at all */
	};
	static const size_t v4_covered[] = {
		18, 19,		/* identification */
		26, 29, 30, 33,	/* addresses */
		34, 35,		/* UDP source port */
		42, 43, 44, 47, 49, 53,	/* BTH */
		54, 70,		/* payload and pad */
	};
	static const size_t v6_masked[] = {
		14 + 1, 14 + 2, 14 + 3, 14 + 7, 54 + 6, 54 + 7, 62 + 4,
	};
	static const size_t v6_covered[] = {
		14 + 4, 14 + 5, 14 + 8, 14 + 39, 54, 55, 62, 62 + 5, 74,
	};
	static const size_t v1_masked[] = {
		14 + 1, 14 + 2, 14 + 3, 14 + 7, 54 + 4,
	};
	static const size_t v1_covered[] = {
		14 + 4, 14 + 6, 14 + 8, 14 + 39, 54, 54 + 5, 66,
	};

	check_mask(TF_V2_IPV4, v4_masked, sizeof(v4_masked) / sizeof(size_t),
		   v4_covered, sizeof(v4_covered) / sizeof(size_t));
	check_mask(TF_V2_IPV6, v6_masked, sizeof(v6_masked) / sizeof(size_t),
		   v6_covered, sizeof(v6_covered) / sizeof(size_t));
	check_mask(TF_V1, v1_masked, sizeof(v1_masked) / sizeof(size_t),
		   v1_covered, sizeof(v1_covered) / sizeof(size_t));
}

TEST(icrc_not_roce)
{
	struct pkt_info info;
	uint8_t f[128];
	size_t len = tf_arp(f);

	pkt_classify(f, len, PKT_ROCE_V2_PORT, &info);
	CHECK(!pkt_icrc_ok(f, &info));
	CHECK_EQ(pkt_icrc(f, &info), 0);
	pkt_icrc_fill(f, &info);	/* must not write anything */
	CHECK_EQ(tf_arp(f + 64), len);
	CHECK_MEM_EQ(f, f + 64, len);
}

TEST(pfc_build_parse_round_trip)
{
	static const uint8_t mac[6] = { 0x02, 1, 2, 3, 4, 5 };
	uint16_t q[8] = { 1, 2, 3, 0xffff, 5, 6, 7, 8 }, out[8];
	struct pkt_info info;
	uint8_t f[64], en = 0;
	size_t len, n;

	len = pkt_pfc_build(f, mac, 0x88, q);
	CHECK_EQ(len, 60);
	CHECK_MEM_EQ(f, "\x01\x80\xc2\x00\x00\x01", 6);
	CHECK_MEM_EQ(f + 6, mac, 6);
	CHECK_MEM_EQ(f + 12, "\x88\x08\x01\x01\x00\x88", 6);
	CHECK_EQ(f[18 + 6], 0xff);	/* quanta[3], big-endian */
	CHECK_EQ(f[18 + 15], 8);	/* quanta[7] */
	CHECK_EQ(f[18], 0);		/* disabled class: zero */
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_PFC);
	memset(out, 0xaa, sizeof(out));
	CHECK(pkt_pfc_parse(f, len, &en, out));
	CHECK_EQ(en, 0x88);
	CHECK_EQ(out[3], 0xffff);
	CHECK_EQ(out[7], 8);
	CHECK_EQ(out[0], 0);
	/* Truncated: not a pause; classified malformed, never over-read. */
	for (n = 0; n < 34; n++) {
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, f, n);
		CHECK(!pkt_pfc_parse(c, n, &en, out));
		free(c);
		CHECK(classify_exact(f, n, &info) != PKT_CLASS_PFC);
	}
	CHECK(pkt_pfc_parse(f, 34, &en, out));
	/* 802.3x PAUSE (opcode 1) is not PFC. */
	f[15] = 0x01;
	f[14] = 0x00;
	CHECK(!pkt_pfc_parse(f, len, &en, out));
	CHECK_EQ(classify_exact(f, len, &info), PKT_CLASS_ETH);
}

TEST(vlan_insert)
{
	struct pkt_info info;
	uint8_t f[600], g[600];
	size_t len, len2;

	len = tf_roce(f, TF_V2_IPV4, 200, -1, PKT_ROCE_V2_PORT);
	memcpy(g, f, len);
	len2 = pkt_vlan_insert(g, len, 0xa123);
	CHECK_EQ(len2, len + 4);
	CHECK_MEM_EQ(g, f, 12);
	CHECK_MEM_EQ(g + 12, "\x81\x00\xa1\x23", 4);
	CHECK_MEM_EQ(g + 16, f + 12, len - 12);
	CHECK_EQ(classify_exact(g, len2, &info), PKT_CLASS_ROCE_V2_IPV4);
	CHECK(info.vlan);
	CHECK_EQ(info.vlan_tci, 0xa123);
	/* The tag is outside the ICRC. */
	CHECK(pkt_icrc_ok(g, &info));
	CHECK_EQ(pkt_vlan_insert(g, 11, 1), 11);
}

TEST(ipv4_header_checksum)
{
	/* A well-known example header; its checksum is 0xb861. */
	uint8_t f[14 + 24] = { 0 };
	static const uint8_t h[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0x12, 0x34, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};

	memcpy(f + 14, h, 20);
	pkt_ipv4_csum_fill(f, 14);
	CHECK_EQ(f[24], 0xb8);
	CHECK_EQ(f[25], 0x61);
	/* With options: the whole header sums to 0xffff. */
	f[14] = 0x46;
	memcpy(f + 34, "\x01\x01\x01\x01", 4);
	pkt_ipv4_csum_fill(f, 14);
	{
		uint32_t s = 0;
		int i;

		for (i = 0; i < 24; i += 2)
			s += (uint32_t)(f[14 + i] << 8 | f[15 + i]);
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		CHECK_EQ(s, 0xffff);
	}
}
