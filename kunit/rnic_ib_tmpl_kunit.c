// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the ABI 2.0 header templates (drivers/rnic_ib_tmpl.c).
 *
 * The known answers are the frames rdma_rxe sent in the lab
 * (kunit/rnic_rxe_vectors.h): a template built from the same addresses
 * must equal the frame's headers byte for byte, except where the contract
 * gives the byte to the device (lengths, checksums), which the template
 * holds as zero, and the IPv4 identification, a per-packet counter in rxe
 * and a constant 0 in rnic (both valid for DF datagrams, RFC 6864).
 * rxe sends neither RoCE v1 nor VLAN tags in the lab, so those expected
 * headers are derived from its frames the way the IBA annexes relate them
 * (a RoCE v1 GRH is the IPv6 header with next header 0x1b and no UDP; a
 * tag is four bytes after the MACs); the lab's RoCE v1 and VLAN tests
 * (NVMe-oF over RoCE v1, PFC) carry them between two rnic NICs.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <net/ipv6.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_rxe_vectors.h"
#include "rnic_ib_tmpl.h"

#define ROCE_PORT	4791
#define L3		ETH_HLEN

/* The two lab VMs: node n has MAC 52:54:00:10:00:0n, 10.10.0.n, fd00:10::n */
static void node_mac(u8 *mac, int n)
{
	static const u8 base[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x10, 0x00, 0x00 };

	ether_addr_copy(mac, base);
	mac[5] = n;
}

static void node_gid(union ib_gid *gid, int net, int n)
{
	memset(gid, 0, sizeof(*gid));
	if (net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		ipv6_addr_set_v4mapped(htonl(0x0a0a0000 | n),
				       (struct in6_addr *)gid->raw);
	} else {
		gid->raw[0] = 0xfd;
		gid->raw[3] = 0x10;
		gid->raw[15] = n;
	}
}

struct tmpl_vec {
	const struct rnic_rxe_vector *rv;
	int net;	/* the vector's own: ROCE_V2_IPV4 or _IPV6 */
	int src;	/* sending node */
	u16 sport;	/* rxe's UDP source port for the QP */
};

static const struct tmpl_vec tmpl_vecs[] = {
	{ &rnic_rxe_vectors[0], RNIC_RX_CLASS_ROCE_V2_IPV4, 1, 0xd872 },
	{ &rnic_rxe_vectors[1], RNIC_RX_CLASS_ROCE_V2_IPV4, 1, 0xfa03 },
	{ &rnic_rxe_vectors[2], RNIC_RX_CLASS_ROCE_V2_IPV4, 2, 0xfa03 },
	{ &rnic_rxe_vectors[3], RNIC_RX_CLASS_ROCE_V2_IPV4, 2, 0xfa03 },
	{ &rnic_rxe_vectors[4], RNIC_RX_CLASS_ROCE_V2_IPV4, 1, 0xfa03 },
	{ &rnic_rxe_vectors[5], RNIC_RX_CLASS_ROCE_V2_IPV4, 2, 0xfa03 },
	{ &rnic_rxe_vectors[6], RNIC_RX_CLASS_ROCE_V2_IPV6, 1, 0xd872 },
	{ &rnic_rxe_vectors[7], RNIC_RX_CLASS_ROCE_V2_IPV6, 2, 0xc86e },
	{ &rnic_rxe_vectors[8], RNIC_RX_CLASS_ROCE_V2_IPV6, 2, 0xc86e },
};

/* Inputs for vector @v sent as @net (v1 reuses the IPv6 addresses) */
static void vec_inputs(struct rnic_ib_tmpl_in *in, const struct tmpl_vec *v,
		       int net, bool vlan)
{
	memset(in, 0, sizeof(*in));
	in->net = net;
	in->vlan = vlan;
	in->vlan_id = vlan ? 100 : 0;
	in->prio = 3;
	in->hop_limit = 64;
	in->udp_sport = net == RNIC_RX_CLASS_ROCE_V1 ? 0 : v->sport;
	in->udp_dport = net == RNIC_RX_CLASS_ROCE_V1 ? 0 : ROCE_PORT;
	node_mac(in->smac, v->src);
	node_mac(in->dmac, 3 - v->src);
	node_gid(&in->sgid, v->net, v->src);
	node_gid(&in->dgid, v->net, 3 - v->src);
}

/*
 * The header rnic's template must hold for vector @v sent as @net, with
 * or without a tag: the frame's headers with the device's fields zeroed.
 * Return: the length.
 */
static unsigned int vec_expected(u8 *exp, const struct tmpl_vec *v, int net,
				 bool vlan)
{
	const u8 *f = v->rv->frame;
	unsigned int l3 = L3, len = 0;

	memcpy(exp, f, 2 * ETH_ALEN);
	len = 2 * ETH_ALEN;
	if (vlan) {
		/* PCP 3, DEI 0, VID 100 */
		put_unaligned_be16(ETH_P_8021Q, exp + len);
		put_unaligned_be16(3 << VLAN_PRIO_SHIFT | 100, exp + len + 2);
		len += VLAN_HLEN;
	}
	l3 = len + 2;
	if (net == RNIC_RX_CLASS_ROCE_V1) {
		put_unaligned_be16(0x8915, exp + len);
		memcpy(exp + l3, f + L3, 40);
		exp[l3 + 6] = 0x1b;
		len = l3 + 40;
	} else {
		memcpy(exp + len, f + 2 * ETH_ALEN,
		       rnic_tmpl_hdr_len(net, false) - 2 * ETH_ALEN);
		len = rnic_tmpl_hdr_len(net, vlan);
		/* UDP length and checksum */
		memset(exp + len - 4, 0, 4);
	}
	if (net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		/* total length, identification; checksum */
		memset(exp + l3 + 2, 0, 4);
		memset(exp + l3 + 10, 0, 2);
	} else {
		/* GRH / IPv6 payload length */
		memset(exp + l3 + 4, 0, 2);
	}
	return len;
}

static void check_tmpl(struct kunit *test, const struct rnic_hdr_tmpl *t,
		       const u8 *exp, unsigned int len, int net, bool vlan,
		       const char *name)
{
	static const u8 zero[RNIC_TMPL_HDR_MAX];
	u32 flags = le32_to_cpu(t->flags);

	KUNIT_EXPECT_EQ_MSG(test, t->hdr_len, len, "%s", name);
	KUNIT_EXPECT_EQ_MSG(test, FIELD_GET(RNIC_TMPL_NET, flags), net, "%s",
			    name);
	KUNIT_EXPECT_EQ_MSG(test, !!(flags & RNIC_TMPL_F_VLAN), vlan, "%s",
			    name);
	KUNIT_EXPECT_FALSE_MSG(test, flags & RNIC_TMPL_F_VALID, "%s", name);
	KUNIT_EXPECT_EQ(test, flags & ~RNIC_TMPL_F_ALL, 0);
	KUNIT_EXPECT_EQ_MSG(test, t->prio, vlan ? 0 : 3, "%s", name);
	KUNIT_EXPECT_MEMEQ(test, t->reserved, zero, sizeof(t->reserved));
	KUNIT_EXPECT_MEMEQ_MSG(test, t->hdr, exp, len, "%s net %d vlan %d",
			       name, net, vlan);
	/* the bytes after hdr_len are reserved */
	KUNIT_EXPECT_MEMEQ_MSG(test, t->hdr + len, zero,
			       RNIC_TMPL_HDR_MAX - len, "%s", name);
}

/* RoCE v2 templates equal rxe's IPv4 and IPv6 headers, tagged or not. */
static void tmpl_rxe_v2(struct kunit *test)
{
	struct rnic_hdr_tmpl t;
	struct rnic_ib_tmpl_in in;
	u8 exp[RNIC_TMPL_HDR_MAX];
	int i, vlan, n = 0;

	for (i = 0; i < ARRAY_SIZE(tmpl_vecs); i++) {
		const struct tmpl_vec *v = &tmpl_vecs[i];

		for (vlan = 0; vlan < 2; vlan++) {
			unsigned int len = vec_expected(exp, v, v->net, vlan);

			vec_inputs(&in, v, v->net, vlan);
			KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
			check_tmpl(test, &t, exp, len, v->net, vlan,
				   v->rv->name);
			n++;
		}
	}
	KUNIT_EXPECT_EQ(test, n, 18);
}

/* The constant IPv4 fields, spelled out once: version/IHL, DF, UDP, TTL */
static void tmpl_ipv4_fields(struct kunit *test)
{
	const struct tmpl_vec *v = &tmpl_vecs[1];
	struct rnic_ib_tmpl_in in;
	struct rnic_hdr_tmpl t;
	const u8 *ip = t.hdr + L3;

	vec_inputs(&in, v, v->net, false);
	in.traffic_class = 0x6a;
	in.hop_limit = 3;
	in.flow_label = 0x12345;	/* IPv4 has none: not sent */
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, t.hdr_len, 42);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(t.hdr + 12), ETH_P_IP);
	KUNIT_EXPECT_EQ(test, ip[0], 0x45);
	KUNIT_EXPECT_EQ(test, ip[1], 0x6a);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(ip + 6), 0x4000);
	KUNIT_EXPECT_EQ(test, ip[8], 3);
	KUNIT_EXPECT_EQ(test, ip[9], IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(ip + 12), 0x0a0a0001);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(ip + 16), 0x0a0a0002);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(ip + 20), 0xfa03);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(ip + 22), ROCE_PORT);
	/* a template on a non-default RoCE port carries that port */
	in.udp_dport = 4792;
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(ip + 22), 4792);
}

/* RoCE v1: the IPv6 frames' GRH, next header 0x1b, Ethertype 0x8915. */
static void tmpl_rxe_v1(struct kunit *test)
{
	struct rnic_ib_tmpl_in in;
	struct rnic_hdr_tmpl t;
	u8 exp[RNIC_TMPL_HDR_MAX];
	int i, vlan;

	for (i = 0; i < ARRAY_SIZE(tmpl_vecs); i++) {
		const struct tmpl_vec *v = &tmpl_vecs[i];

		if (v->net != RNIC_RX_CLASS_ROCE_V2_IPV6)
			continue;
		for (vlan = 0; vlan < 2; vlan++) {
			unsigned int len;

			len = vec_expected(exp, v, RNIC_RX_CLASS_ROCE_V1, vlan);
			KUNIT_EXPECT_EQ(test, len, vlan ? 58 : 54);
			vec_inputs(&in, v, RNIC_RX_CLASS_ROCE_V1, vlan);
			KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
			check_tmpl(test, &t, exp, len, RNIC_RX_CLASS_ROCE_V1,
				   vlan, v->rv->name);
		}
	}
}

static void fill_gid_attr(struct ib_gid_attr *attr, int net)
{
	memset(attr, 0, sizeof(*attr));
	attr->gid_type = net == RNIC_RX_CLASS_ROCE_V1 ? IB_GID_TYPE_ROCE :
			 IB_GID_TYPE_ROCE_UDP_ENCAP;
	node_gid(&attr->gid, net == RNIC_RX_CLASS_ROCE_V2_IPV4 ? net :
		 RNIC_RX_CLASS_ROCE_V2_IPV6, 2);
}

static void fill_ah(struct rdma_ah_attr *ah, const struct ib_gid_attr *sgid,
		    int net, u32 flow_label)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	ah->port_num = 1;
	ah->ah_flags = IB_AH_GRH;
	ah->grh.sgid_attr = sgid;
	ah->grh.flow_label = flow_label;
	ah->grh.hop_limit = 64;
	node_gid(&ah->grh.dgid, net == RNIC_RX_CLASS_ROCE_V2_IPV4 ? net :
		 RNIC_RX_CLASS_ROCE_V2_IPV6, 1);
	node_mac(ah->roce.dmac, 1);
}

/*
 * From an address vector, as modify_qp and create_ah will call it: the
 * RoCE version follows the source GID's type, the UDP source port follows
 * the flow label as in rxe, and rxe's own IPv6 RC frame comes out (rxe
 * derives its port from the label 0x86e but leaves the IPv6 flow label 0,
 * where rnic sends the label it hashed).
 */
static void tmpl_from_ah(struct kunit *test)
{
	const struct tmpl_vec *v = &tmpl_vecs[8];
	struct rnic_ib_tmpl_in in;
	struct ib_gid_attr sgid;
	struct rdma_ah_attr ah;
	struct rnic_hdr_tmpl t;
	u8 smac[ETH_ALEN], exp[RNIC_TMPL_HDR_MAX];
	unsigned int len;

	node_mac(smac, 2);
	fill_gid_attr(&sgid, RNIC_RX_CLASS_ROCE_V2_IPV6);
	fill_ah(&ah, &sgid, RNIC_RX_CLASS_ROCE_V2_IPV6, 0x86e);
	/* PFC off: untagged, the SL as the template's priority */
	rdma_ah_set_sl(&ah, 3);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT,
						      0x12, 0x12),
			0);
	KUNIT_EXPECT_EQ(test, in.net, RNIC_RX_CLASS_ROCE_V2_IPV6);
	KUNIT_EXPECT_FALSE(test, in.vlan);
	KUNIT_EXPECT_EQ(test, in.udp_sport, 0xc86e);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	len = vec_expected(exp, v, v->net, false);
	put_unaligned_be32(0x60000000 | 0x86e, exp + L3);
	check_tmpl(test, &t, exp, len, v->net, false, "from_ah ipv6");

	/* a VLAN netdev: tagged, PCP = the PFC priority */
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 100, 3,
						      ROCE_PORT, 0x12, 0x12),
			0);
	KUNIT_EXPECT_TRUE(test, in.vlan);
	KUNIT_EXPECT_EQ(test, in.vlan_id, 100);
	KUNIT_EXPECT_EQ(test, in.prio, 3);

	/* PFC on, no VLAN netdev: a priority tag, VID 0 PCP 3 */
	rdma_ah_set_sl(&ah, 6);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      3, ROCE_PORT, 0x12, 0x12),
			0);
	KUNIT_EXPECT_TRUE(test, in.vlan);
	KUNIT_EXPECT_EQ(test, in.vlan_id, 0);
	KUNIT_EXPECT_EQ(test, in.prio, 3);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(t.hdr + 12), ETH_P_8021Q);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(t.hdr + 14), 3 << 13);

	/* PFC off: the SL is the PCP of a VLAN netdev's tag ... */
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 100,
						      RNIC_PFC_OFF, ROCE_PORT,
						      0x12, 0x12),
			0);
	KUNIT_EXPECT_TRUE(test, in.vlan);
	KUNIT_EXPECT_EQ(test, in.prio, 6);
	/* ... and no tag without a VLAN netdev */
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT,
						      0x12, 0x12),
			0);
	KUNIT_EXPECT_FALSE(test, in.vlan);
	KUNIT_EXPECT_EQ(test, in.prio, 6);
	/* no such priority */
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      8, ROCE_PORT, 0x12, 0x12),
			-EINVAL);
	rdma_ah_set_sl(&ah, 0);

	/* an IPv4 GID is RoCE v2 over IPv4 */
	fill_gid_attr(&sgid, RNIC_RX_CLASS_ROCE_V2_IPV4);
	fill_ah(&ah, &sgid, RNIC_RX_CLASS_ROCE_V2_IPV4, 0);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0x12, 0x34),
			0);
	KUNIT_EXPECT_EQ(test, in.net, RNIC_RX_CLASS_ROCE_V2_IPV4);
	KUNIT_EXPECT_EQ(test, in.udp_sport,
			rdma_flow_label_to_udp_sport(rdma_calc_flow_label(0x12,
									  0x34)));
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);

	/* a RoCE v1 GID: GRH, no UDP */
	fill_gid_attr(&sgid, RNIC_RX_CLASS_ROCE_V1);
	fill_ah(&ah, &sgid, RNIC_RX_CLASS_ROCE_V1, 7);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			0);
	KUNIT_EXPECT_EQ(test, in.net, RNIC_RX_CLASS_ROCE_V1);
	KUNIT_EXPECT_EQ(test, in.udp_sport, 0);
	KUNIT_EXPECT_EQ(test, in.flow_label, 7);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, t.hdr_len, 54);

	/* what a RoCE port cannot send */
	sgid.gid_type = IB_GID_TYPE_IB;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			-EINVAL);
	sgid.gid_type = IB_GID_TYPE_ROCE;
	ah.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			-EINVAL);
	ah.ah_flags = IB_AH_GRH;
	ah.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			-EINVAL);
	ah.grh.sgid_attr = &sgid;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 4095,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			-EINVAL);
	ah.type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_in_from_ah(&in, &ah, smac, 0xffff,
						      RNIC_PFC_OFF, ROCE_PORT, 0, 0),
			-EINVAL);
}

/* The UDP source port is ib_core's, and symmetric in the QPNs. */
static void tmpl_udp_sport(struct kunit *test)
{
	static const u32 fls[] = { 0, 1, 0x3fff, 0x4000, 0x86e, 0xfffff };
	int i;

	for (i = 0; i < ARRAY_SIZE(fls); i++) {
		u16 s = rnic_ib_udp_sport(fls[i], 0x11, 0x2345);

		KUNIT_EXPECT_EQ(test, s, rdma_get_udp_sport(fls[i], 0x11,
							    0x2345));
		KUNIT_EXPECT_GE(test, s, 0xc000);
		KUNIT_EXPECT_EQ(test, s, rnic_ib_udp_sport(fls[i], 0x2345,
							   0x11));
	}
	KUNIT_EXPECT_EQ(test, rnic_ib_udp_sport(0x86e, 1, 2), 0xc86e);
	KUNIT_EXPECT_EQ(test, rnic_ib_udp_sport(0, 0, 0), 0xc000);
	/* bits above the 20-bit label are not the label */
	KUNIT_EXPECT_EQ(test, rnic_ib_udp_sport(0x100086e, 1, 2), 0xc86e);
}

static void tmpl_refuses(struct kunit *test)
{
	struct rnic_ib_tmpl_in in, good;
	struct rnic_hdr_tmpl t;

	vec_inputs(&good, &tmpl_vecs[1], RNIC_RX_CLASS_ROCE_V2_IPV4, true);
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &good), 0);

	in = good;
	in.net = RNIC_RX_CLASS_ETH;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in.net = 4;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.dmac[0] |= 1;		/* multicast */
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	eth_zero_addr(in.dmac);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	eth_zero_addr(in.smac);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.vlan_id = 4095;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.prio = 8;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.flow_label = 0x100000;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.udp_dport = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	/* IPv4 needs IPv4-mapped GIDs, IPv6 must not have them */
	in = good;
	node_gid(&in.dgid, RNIC_RX_CLASS_ROCE_V2_IPV6, 2);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	in = good;
	in.net = RNIC_RX_CLASS_ROCE_V2_IPV6;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	/* RoCE v1 takes any GID and no UDP port */
	in = good;
	in.net = RNIC_RX_CLASS_ROCE_V1;
	in.udp_dport = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	/* a VID of 0 (priority tag) is a tag */
	in = good;
	in.vlan_id = 0;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(t.hdr + 14), 3 << 13);
}

/* An AH entry carries its PD; nothing else of the caller's leaks in. */
static void tmpl_ah_entry(struct kunit *test)
{
	struct rnic_ib_tmpl_in in;
	struct rnic_hdr_tmpl t;

	memset(&t, 0xa5, sizeof(t));
	vec_inputs(&in, &tmpl_vecs[6], RNIC_RX_CLASS_ROCE_V2_IPV6, false);
	in.pdn = 0x1234;
	KUNIT_ASSERT_EQ(test, rnic_ib_tmpl_build(&t, &in), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t.pdn), 0x1234);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t.flags),
			FIELD_PREP(RNIC_TMPL_NET, RNIC_RX_CLASS_ROCE_V2_IPV6));
	KUNIT_EXPECT_EQ(test, t.hdr_len, 62);
	KUNIT_EXPECT_EQ(test, t.hdr[RNIC_TMPL_HDR_MAX - 1], 0);
	/* a refused input leaves the entry as it was */
	memset(&t, 0xa5, sizeof(t));
	in.prio = 9;
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_build(&t, &in), -EINVAL);
	KUNIT_EXPECT_EQ(test, t.hdr_len, 0xa5);
}

static void tmpl_net_map(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_net(RDMA_NETWORK_ROCE_V1),
			RNIC_RX_CLASS_ROCE_V1);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_net(RDMA_NETWORK_IPV4),
			RNIC_RX_CLASS_ROCE_V2_IPV4);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_net(RDMA_NETWORK_IPV6),
			RNIC_RX_CLASS_ROCE_V2_IPV6);
	KUNIT_EXPECT_EQ(test, rnic_ib_tmpl_net(RDMA_NETWORK_IB), -EINVAL);
}

static struct kunit_case rnic_ib_tmpl_cases[] = {
	KUNIT_CASE(tmpl_rxe_v2),
	KUNIT_CASE(tmpl_ipv4_fields),
	KUNIT_CASE(tmpl_rxe_v1),
	KUNIT_CASE(tmpl_from_ah),
	KUNIT_CASE(tmpl_udp_sport),
	KUNIT_CASE(tmpl_refuses),
	KUNIT_CASE(tmpl_ah_entry),
	KUNIT_CASE(tmpl_net_map),
	{}
};

static struct kunit_suite rnic_ib_tmpl_suite = {
	.name = "rnic_ib_tmpl",
	.test_cases = rnic_ib_tmpl_cases,
};

kunit_test_suite(rnic_ib_tmpl_suite);
