// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for RoCE header build/parse, the software ICRC and PSN
 * arithmetic (drivers/rnic_hdr.c).
 *
 * The known answers are frames the kernel's own rdma_rxe sent in the lab:
 * rnic must parse them, agree with rxe's ICRC, and rebuild the same bytes.
 * Malformed frames must be refused with the right reason and without
 * reading past the bytes received.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_pack.h>

#include "rnic_compat.h"
#include "rnic_hdr.h"
#include "rnic_rxe_vectors.h"

#define ROCE_PORT	4791

static void opcode_table(struct kunit *test)
{
	const struct rnic_opcode_info *i;

	i = rnic_opcode_info(IB_OPCODE_RC_SEND_ONLY);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 12);
	KUNIT_EXPECT_TRUE(test, i->flags & RNIC_OPF_PAYLOAD);
	KUNIT_EXPECT_EQ(test, i->flags & RNIC_OPF_ONLY, RNIC_OPF_ONLY);

	i = rnic_opcode_info(IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 12 + 16 + 4);

	i = rnic_opcode_info(IB_OPCODE_RC_COMPARE_SWAP);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 12 + 28);
	KUNIT_EXPECT_FALSE(test, i->flags & RNIC_OPF_PAYLOAD);

	i = rnic_opcode_info(IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 12 + 4 + 8);
	KUNIT_EXPECT_TRUE(test, i->flags & RNIC_OPF_RESP);

	i = rnic_opcode_info(IB_OPCODE_RC_RDMA_READ_REQUEST);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_FALSE(test, i->flags & RNIC_OPF_PAYLOAD);

	i = rnic_opcode_info(IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE);
	KUNIT_ASSERT_NOT_NULL(test, i);
	KUNIT_EXPECT_EQ(test, i->hdr_len, 12 + 8 + 4);

	/* UC, the reserved RC opcode, CNP and vendor opcodes: not ours */
	KUNIT_EXPECT_NULL(test, rnic_opcode_info(IB_OPCODE_UC_SEND_ONLY));
	KUNIT_EXPECT_NULL(test, rnic_opcode_info(0x15));
	KUNIT_EXPECT_NULL(test, rnic_opcode_info(IB_OPCODE_CNP));
	KUNIT_EXPECT_NULL(test, rnic_opcode_info(0xff));
	KUNIT_EXPECT_NULL(test, rnic_opcode_info(IB_OPCODE_RC_FLUSH));
}

/* rxe's frames parse, carry a correct ICRC, and rebuild byte for byte. */
static void rxe_known_answers(struct kunit *test)
{
	int v;

	for (v = 0; v < ARRAY_SIZE(rnic_rxe_vectors); v++) {
		const struct rnic_rxe_vector *rv = &rnic_rxe_vectors[v];
		u8 *buf = kunit_kzalloc(test, rv->len, GFP_KERNEL);
		struct rnic_pkt pkt;
		int hlen;

		KUNIT_ASSERT_NOT_NULL(test, buf);
		KUNIT_ASSERT_EQ_MSG(test, rnic_hdr_parse(rv->frame, rv->len,
							 ROCE_PORT, &pkt),
				    RNIC_PARSE_OK, "%s", rv->name);
		KUNIT_EXPECT_EQ_MSG(test, pkt.opcode, rv->frame[pkt.bth_off],
				    "%s", rv->name);
		KUNIT_EXPECT_EQ_MSG(test, pkt.udp_dport, ROCE_PORT, "%s",
				    rv->name);
		KUNIT_EXPECT_TRUE_MSG(test, rnic_icrc_check(rv->frame, &pkt),
				      "%s: rnic ICRC %08x disagrees with rxe's",
				      rv->name, rnic_icrc(rv->frame, &pkt));

		/* rebuild: same headers as rxe (IPv4 id is rxe's choice) */
		hlen = rnic_hdr_build(&pkt, pkt.payload_len, buf, rv->len);
		KUNIT_ASSERT_EQ_MSG(test, hlen, (int)pkt.payload_off, "%s",
				    rv->name);
		if (pkt.net == RNIC_NET_ROCE_V2_IPV4) {
			struct iphdr *ip = (struct iphdr *)(buf + pkt.l3_off);

			KUNIT_EXPECT_EQ(test, ip_fast_csum(ip, ip->ihl), 0);
			memcpy(&ip->id, rv->frame + pkt.l3_off + 4, 2);
			ip->check = 0;
			ip->check = ip_fast_csum(ip, ip->ihl);
		}
		memcpy(buf + hlen, rv->frame + hlen, rv->len - hlen);
		KUNIT_EXPECT_MEMEQ_MSG(test, buf, rv->frame, rv->len, "%s",
				       rv->name);
	}
}

static void fill_pkt(struct rnic_pkt *p, u8 opcode, enum rnic_net_type net,
		     bool vlan)
{
	static const u8 v6a[16] = { 0xfd, 0, 0, 0x20, [15] = 1 };
	static const u8 v6b[16] = { 0xfd, 0, 0, 0x20, [15] = 2 };

	memset(p, 0, sizeof(*p));
	eth_broadcast_addr(p->dmac);
	p->dmac[0] = 0x52;
	memcpy(p->smac, "\x52\x54\x00\x20\x00\x01", ETH_ALEN);
	p->vlan = vlan;
	p->vlan_tci = vlan ? 0x6000 : 0;
	p->net = net;
	if (net == RNIC_NET_ROCE_V2_IPV4) {
		ipv6_addr_set_v4mapped(htonl(0x0a140001),
				       (struct in6_addr *)p->sgid.raw);
		ipv6_addr_set_v4mapped(htonl(0x0a140002),
				       (struct in6_addr *)p->dgid.raw);
	} else {
		memcpy(p->sgid.raw, v6a, 16);
		memcpy(p->dgid.raw, v6b, 16);
		p->flow_label = 0xabcde;
	}
	p->tclass = 106;
	p->hop_limit = 64;
	p->udp_sport = 0xc123;
	p->udp_dport = ROCE_PORT;
	p->opcode = opcode;
	p->se = true;
	p->pkey = 0xffff;
	p->dqpn = 0x123456;
	p->ack_req = true;
	p->psn = 0xfffffe;
	p->va = 0x1122334455667788ULL;
	p->rkey = 0xdeadbeef;
	p->dma_len = 4096;
	p->syndrome = 0x1f;
	p->msn = 0xabcdef;
	p->swap_add = 0x0102030405060708ULL;
	p->compare = 0x8877665544332211ULL;
	p->atomic_orig = 0x5555aaaa5555aaaaULL;
	p->imm = cpu_to_be32(0xcafef00d);
	p->inv_rkey = 0x77;
	p->qkey = 0x80010000;
	p->sqpn = 1;
}

/* Build one frame, parse it back, and compare every field it carries. */
static void roundtrip_one(struct kunit *test, u8 *buf, u8 op, int net,
			  bool vlan, u32 plen)
{
	const struct rnic_opcode_info *info = rnic_opcode_info(op);
	u32 pad = (4 - (plen & 3)) & 3;
	struct rnic_pkt in, out;
	int hlen;

	fill_pkt(&in, op, net, vlan);
	hlen = rnic_hdr_build(&in, plen, buf, 2048);
	KUNIT_ASSERT_EQ(test, hlen, rnic_hdr_len(&in));
	KUNIT_ASSERT_EQ_MSG(test,
			    rnic_hdr_parse(buf, hlen + plen + pad + RNIC_ICRC_SIZE,
					   ROCE_PORT, &out),
			    RNIC_PARSE_OK, "%s net %d", info->name, net);
	KUNIT_EXPECT_EQ(test, out.payload_len, plen);
	KUNIT_EXPECT_EQ(test, out.payload_off, (u32)hlen);
	KUNIT_EXPECT_EQ(test, out.pad, pad);
	KUNIT_EXPECT_EQ(test, out.psn, in.psn);
	KUNIT_EXPECT_EQ(test, out.dqpn, in.dqpn);
	KUNIT_EXPECT_EQ(test, out.ack_req, in.ack_req);
	KUNIT_EXPECT_EQ(test, out.se, in.se);
	KUNIT_EXPECT_EQ(test, out.tclass, in.tclass);
	KUNIT_EXPECT_EQ(test, out.vlan, in.vlan);
	KUNIT_EXPECT_MEMEQ(test, out.dgid.raw, in.dgid.raw, 16);
	KUNIT_EXPECT_MEMEQ(test, out.sgid.raw, in.sgid.raw, 16);
	if (info->flags & (RNIC_OPF_RETH | RNIC_OPF_ATMETH)) {
		KUNIT_EXPECT_EQ(test, out.va, in.va);
		KUNIT_EXPECT_EQ(test, out.rkey, in.rkey);
	}
	if (info->flags & RNIC_OPF_ATMETH) {
		KUNIT_EXPECT_EQ(test, out.swap_add, in.swap_add);
		KUNIT_EXPECT_EQ(test, out.compare, in.compare);
	}
	if (info->flags & RNIC_OPF_AETH) {
		KUNIT_EXPECT_EQ(test, out.syndrome, in.syndrome);
		KUNIT_EXPECT_EQ(test, out.msn, in.msn);
	}
	if (info->flags & RNIC_OPF_ATMACK)
		KUNIT_EXPECT_EQ(test, out.atomic_orig, in.atomic_orig);
	if (info->flags & RNIC_OPF_IMMDT)
		KUNIT_EXPECT_EQ(test, out.imm, in.imm);
	if (info->flags & RNIC_OPF_IETH)
		KUNIT_EXPECT_EQ(test, out.inv_rkey, in.inv_rkey);
	if (info->flags & RNIC_OPF_DETH) {
		KUNIT_EXPECT_EQ(test, out.qkey, in.qkey);
		KUNIT_EXPECT_EQ(test, out.sqpn, in.sqpn);
	}
}

/* Every opcode, network type, VLAN or not, payload sizes around the pad. */
static void build_parse_roundtrip(struct kunit *test)
{
	static const u32 sizes[] = { 0, 1, 2, 3, 4, 5, 255, 1024 };
	u8 *buf = kunit_kzalloc(test, 2048, GFP_KERNEL);
	int op, net, s, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (op = 0; op < 256; op++) {
		const struct rnic_opcode_info *info = rnic_opcode_info(op);

		if (!info)
			continue;
		for (net = 0; net <= RNIC_NET_ROCE_V2_IPV6; net++) {
			for (s = 0; s < ARRAY_SIZE(sizes); s++) {
				if (sizes[s] && !(info->flags & RNIC_OPF_PAYLOAD))
					continue;
				roundtrip_one(test, buf, op, net, false, sizes[s]);
				roundtrip_one(test, buf, op, net, true, sizes[s]);
				n += 2;
			}
		}
	}
	/* 25 opcodes x 3 networks x 2: make sure the loop ran */
	KUNIT_EXPECT_GT(test, n, 300);
}

static void build_refuses(struct kunit *test)
{
	u8 buf[RNIC_MAX_HDR_LEN];
	struct rnic_pkt p;

	fill_pkt(&p, IB_OPCODE_RC_ACKNOWLEDGE, RNIC_NET_ROCE_V2_IPV4, false);
	/* a header-only opcode cannot carry data */
	KUNIT_EXPECT_EQ(test, rnic_hdr_build(&p, 4, buf, sizeof(buf)), -EINVAL);
	/* no room */
	KUNIT_EXPECT_EQ(test, rnic_hdr_build(&p, 0, buf, 20), -EINVAL);
	p.opcode = IB_OPCODE_UC_SEND_ONLY;
	KUNIT_EXPECT_EQ(test, rnic_hdr_build(&p, 0, buf, sizeof(buf)), -EINVAL);
	fill_pkt(&p, IB_OPCODE_RC_SEND_ONLY, RNIC_NET_ROCE_V2_IPV6, true);
	KUNIT_EXPECT_EQ(test, rnic_hdr_build(&p, 0, buf, sizeof(buf)),
			rnic_hdr_len(&p));
	KUNIT_EXPECT_LE(test, rnic_hdr_len(&p), RNIC_MAX_HDR_LEN);
}

/* Every prefix of a valid frame is refused, never read past its end. */
static void truncated_frames(struct kunit *test)
{
	int v;

	for (v = 0; v < ARRAY_SIZE(rnic_rxe_vectors); v++) {
		const struct rnic_rxe_vector *rv = &rnic_rxe_vectors[v];
		struct rnic_pkt pkt;
		u32 len;

		for (len = 0; len < rv->len; len++) {
			/* an exact-size copy, so an overread is out of bounds */
			u8 *f = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
			enum rnic_parse_err e;

			KUNIT_ASSERT_NOT_NULL(test, f);
			memcpy(f, rv->frame, len);
			e = rnic_hdr_parse(f, len, ROCE_PORT, &pkt);
			KUNIT_EXPECT_NE_MSG(test, e, RNIC_PARSE_OK,
					    "%s cut to %u bytes accepted",
					    rv->name, len);
			kunit_kfree(test, f);
		}
	}
}

/* Copy vector @name into a buffer with @extra spare bytes. */
static u8 *vec_copy(struct kunit *test, const struct rnic_rxe_vector *rv,
		    u32 extra)
{
	u8 *f = kunit_kzalloc(test, rv->len + extra, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	memcpy(f, rv->frame, rv->len);
	return f;
}

static void malformed_frames(struct kunit *test)
{
	/* [1]: IPv4 RC SEND ONLY; [7]: IPv6 RC ACK */
	const struct rnic_rxe_vector *v4 = &rnic_rxe_vectors[1];
	const struct rnic_rxe_vector *v6 = &rnic_rxe_vectors[7];
	const u32 l3 = 14, bth4 = 14 + 20 + 8, bth6 = 14 + 40 + 8;
	struct rnic_pkt pkt;
	u8 *f;

	KUNIT_ASSERT_EQ(test, rnic_hdr_parse(v4->frame, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_OK);

	/* another UDP port is not RoCE for this port setting */
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(v4->frame, v4->len, 1021, &pkt),
			RNIC_PARSE_NOT_ROCE);
	/* unsupported opcode (UC) */
	f = vec_copy(test, v4, 0);
	f[bth4] = IB_OPCODE_UC_SEND_ONLY;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_OPCODE);
	/* transport version 1 */
	f = vec_copy(test, v4, 0);
	f[bth4 + 1] |= 1;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_TVER);
	/* IPv4 fragment */
	f = vec_copy(test, v4, 0);
	f[l3 + 6] |= 0x20;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_L3);
	/* IPv4 total length beyond the frame */
	f = vec_copy(test, v4, 0);
	put_unaligned_be16(get_unaligned_be16(f + l3 + 2) + 4, f + l3 + 2);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_TRUNCATED);
	/* UDP length disagreeing with the IP length */
	f = vec_copy(test, v4, 0);
	put_unaligned_be16(get_unaligned_be16(f + bth4 - 4) - 4, f + bth4 - 4);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_L3);
	/* IHL below 5 */
	f = vec_copy(test, v4, 0);
	f[l3] = 0x44;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_L3);
	/* not UDP */
	f = vec_copy(test, v4, 0);
	f[l3 + 9] = IPPROTO_TCP;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_NOT_ROCE);
	/* ARP */
	f = vec_copy(test, v4, 0);
	put_unaligned_be16(ETH_P_ARP, f + 12);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_NOT_ROCE);

	/* Ethernet padding after the packet is not payload */
	f = vec_copy(test, v4, 16);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v4->len + 16, ROCE_PORT, &pkt),
			RNIC_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, rnic_icrc_check(f, &pkt));

	/* an ACK whose lengths claim a payload */
	f = vec_copy(test, v6, 4);
	put_unaligned_be16(get_unaligned_be16(f + l3 + 4) + 4, f + l3 + 4);
	put_unaligned_be16(get_unaligned_be16(f + bth6 - 4) + 4, f + bth6 - 4);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v6->len + 4, ROCE_PORT, &pkt),
			RNIC_PARSE_BAD_LENGTH);
	/* IPv6 payload length beyond the frame */
	f = vec_copy(test, v6, 0);
	put_unaligned_be16(get_unaligned_be16(f + l3 + 4) + 8, f + l3 + 4);
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v6->len, ROCE_PORT, &pkt),
			RNIC_PARSE_TRUNCATED);
	/* IPv6 with an extension header first */
	f = vec_copy(test, v6, 0);
	f[l3 + 6] = 0;
	KUNIT_EXPECT_EQ(test, rnic_hdr_parse(f, v6->len, ROCE_PORT, &pkt),
			RNIC_PARSE_NOT_ROCE);
}

/* The ICRC covers what it must and ignores what routers may change. */
static void icrc_coverage(struct kunit *test)
{
	const struct rnic_rxe_vector *v4 = &rnic_rxe_vectors[5];
	const struct rnic_rxe_vector *v6 = &rnic_rxe_vectors[8];
	const u32 l3 = 14;
	struct rnic_pkt pkt;
	u8 *f;

	/* TTL, TOS and the IP checksum are masked */
	f = vec_copy(test, v4, 0);
	f[l3 + 1] ^= 0xfc;
	f[l3 + 8] -= 3;
	f[l3 + 10] ^= 0x5a;
	KUNIT_ASSERT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, rnic_icrc_check(f, &pkt));
	/* the payload is covered */
	f[pkt.payload_off + 3] ^= 1;
	KUNIT_EXPECT_FALSE(test, rnic_icrc_check(f, &pkt));
	/* the source address is covered */
	f = vec_copy(test, v4, 0);
	f[l3 + 15] ^= 1;
	KUNIT_ASSERT_EQ(test, rnic_hdr_parse(f, v4->len, ROCE_PORT, &pkt),
			RNIC_PARSE_OK);
	KUNIT_EXPECT_FALSE(test, rnic_icrc_check(f, &pkt));

	/* IPv6: traffic class, flow label and hop limit are masked */
	f = vec_copy(test, v6, 0);
	f[l3 + 1] ^= 0xff;
	f[l3 + 3] ^= 0x11;
	f[l3 + 7] = 1;
	KUNIT_ASSERT_EQ(test, rnic_hdr_parse(f, v6->len, ROCE_PORT, &pkt),
			RNIC_PARSE_OK);
	KUNIT_EXPECT_TRUE(test, rnic_icrc_check(f, &pkt));
	/* the BTH's PSN is covered, its resv8a byte (FECN/BECN) is not */
	f[pkt.bth_off + 4] ^= 0xc0;
	KUNIT_EXPECT_TRUE(test, rnic_icrc_check(f, &pkt));
	f[pkt.bth_off + 11] ^= 1;
	KUNIT_EXPECT_FALSE(test, rnic_icrc_check(f, &pkt));
}

static void psn_arith(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_psn_add(0xffffff, 1), 0u);
	KUNIT_EXPECT_EQ(test, rnic_psn_add(0xfffffe, 5), 3u);
	KUNIT_EXPECT_EQ(test, rnic_psn_diff(3, 0xfffffe), 5);
	KUNIT_EXPECT_EQ(test, rnic_psn_diff(0xfffffe, 3), -5);
	KUNIT_EXPECT_EQ(test, rnic_psn_diff(10, 10), 0);
	/* half the space away is "before" (the window is 2^23) */
	KUNIT_EXPECT_EQ(test, rnic_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_EQ(test, rnic_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_TRUE(test, rnic_psn_in_window(0, 0xfffff0, 32));
	KUNIT_EXPECT_TRUE(test, rnic_psn_in_window(0xfffff0, 0xfffff0, 32));
	KUNIT_EXPECT_FALSE(test, rnic_psn_in_window(0x10, 0xfffff0, 32));
	KUNIT_EXPECT_TRUE(test, rnic_psn_in_window(0xf, 0xfffff0, 32));
	KUNIT_EXPECT_FALSE(test, rnic_psn_in_window(0xffffef, 0xfffff0, 32));
}

static struct kunit_case rnic_hdr_cases[] = {
	KUNIT_CASE(opcode_table),
	KUNIT_CASE(rxe_known_answers),
	KUNIT_CASE(build_parse_roundtrip),
	KUNIT_CASE(build_refuses),
	KUNIT_CASE(truncated_frames),
	KUNIT_CASE(malformed_frames),
	KUNIT_CASE(icrc_coverage),
	KUNIT_CASE(psn_arith),
	{}
};

static struct kunit_suite rnic_hdr_suite = {
	.name = "rnic_hdr",
	.test_cases = rnic_hdr_cases,
};

kunit_test_suite(rnic_hdr_suite);
