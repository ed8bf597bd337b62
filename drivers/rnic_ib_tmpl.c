// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: header templates for QP paths and address handles.
 *
 * The device sends a template's bytes as they are and fills in only the
 * per-packet fields (GRH/IPv6 payload length, IPv4 total length and
 * checksum, UDP length and checksum). Every encapsulation decision is
 * therefore the driver's, made here once per path or AH: RoCE version,
 * VLAN tag and PCP, TOS/traffic class, flow label, hop limit and the UDP
 * source port. The fields the device fills are written as zero.
 */
#include <kunit/visibility.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic_ib_tmpl.h"

#define RNIC_TMPL_ETH_P_ROCE_V1		0x8915
#define RNIC_TMPL_GRH_NEXT_HDR_BTH	0x1b
#define RNIC_TMPL_IPV4_DF		0x4000
#define RNIC_TMPL_FLOW_LABEL_MAX	0xfffff
/* rdma_read_gid_l2_fields() reports "no VLAN" as this VID */
#define RNIC_TMPL_NO_VLAN		0xffff

/**
 * rnic_ib_tmpl_net() - template network type of a GID's network type
 * @type: rdma_gid_attr_network_type() of the source GID
 *
 * Return: enum rnic_rx_class value (ROCE_V1, ROCE_V2_IPV4, ROCE_V2_IPV6),
 * or -EINVAL for a network type a RoCE port cannot send (IB).
 */
int rnic_ib_tmpl_net(enum rdma_network_type type)
{
	switch (type) {
	case RDMA_NETWORK_ROCE_V1:
		return RNIC_RX_CLASS_ROCE_V1;
	case RDMA_NETWORK_IPV4:
		return RNIC_RX_CLASS_ROCE_V2_IPV4;
	case RDMA_NETWORK_IPV6:
		return RNIC_RX_CLASS_ROCE_V2_IPV6;
	default:
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_tmpl_net);

/**
 * rnic_ib_udp_sport() - RoCE v2 UDP source port of a flow
 * @flow_label: the path's or AH's flow label, 0 if the ULP gave none
 * @lqpn: the local QPN, or 0 for an address handle
 * @rqpn: the remote QPN, or 0 for an address handle
 *
 * The source port is what ECMP hashes on, so every packet of a flow must
 * carry the same one. Derive it as rxe and mlx5 do (ib_core's
 * rdma_get_udp_sport()): from the flow label rdma_cm chose, or, without
 * one, from a label symmetric in the two QPNs, so both directions of an
 * RC connection hash alike.
 *
 * Return: a port in the RoCE v2 source port range (0xc000 .. 0xffff).
 */
u16 rnic_ib_udp_sport(u32 flow_label, u32 lqpn, u32 rqpn)
{
	return rdma_get_udp_sport(flow_label & RNIC_TMPL_FLOW_LABEL_MAX,
				  lqpn, rqpn);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_udp_sport);

/**
 * rnic_ib_tmpl_in_from_ah() - template inputs of an address vector
 * @in: filled on success
 * @ah: a RoCE address vector with a GRH and its sgid_attr
 * @smac: the MAC of the source GID's netdev
 * @vlan_id: the VID of that netdev, 0xffff if it is not a VLAN device
 *	(what rdma_read_gid_l2_fields() reports)
 * @pfc_prio: the PFC no-drop priority, or RNIC_PFC_OFF
 * @udp_dport: the port's RoCE v2 UDP port
 * @lqpn: local QPN of an RC path, 0 for an address handle
 * @rqpn: remote QPN of an RC path, 0 for an address handle
 *
 * The RoCE version comes from the source GID's type, the way ib_core
 * tells the two versions apart. @in.pdn is left 0: an AH's caller sets it.
 *
 * With PFC on, every frame travels on @pfc_prio, so every frame is tagged:
 * a priority tag (VID 0) when the GID's netdev is no VLAN device, because
 * a PFC peer classifies an untagged frame as priority 0 and would not
 * pause it. With PFC off only a VLAN device's frames are tagged, with the
 * address vector's SL as PCP (what rdma_cm derived from the TOS).
 *
 * Return: 0, or -EINVAL for an address vector rnic cannot send on.
 */
int rnic_ib_tmpl_in_from_ah(struct rnic_ib_tmpl_in *in,
			    const struct rdma_ah_attr *ah,
			    const u8 *smac, u16 vlan_id, s8 pfc_prio,
			    u16 udp_dport, u32 lqpn, u32 rqpn)
{
	bool pfc = pfc_prio != RNIC_PFC_OFF;
	const struct ib_global_route *grh;
	int net;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr)
		return -EINVAL;
	net = rnic_ib_tmpl_net(rdma_gid_attr_network_type(grh->sgid_attr));
	if (net < 0)
		return net;
	if (vlan_id != RNIC_TMPL_NO_VLAN && vlan_id >= VLAN_N_VID - 1)
		return -EINVAL;

	if (pfc && (pfc_prio < 0 || pfc_prio > 7))
		return -EINVAL;

	memset(in, 0, sizeof(*in));
	in->net = net;
	in->vlan = vlan_id != RNIC_TMPL_NO_VLAN || pfc;
	in->vlan_id = vlan_id != RNIC_TMPL_NO_VLAN ? vlan_id : 0;
	in->prio = pfc ? pfc_prio : rdma_ah_get_sl(ah) & 7;
	in->traffic_class = grh->traffic_class;
	in->hop_limit = grh->hop_limit;
	in->flow_label = grh->flow_label;
	if (net != RNIC_RX_CLASS_ROCE_V1) {
		in->udp_sport = rnic_ib_udp_sport(grh->flow_label, lqpn, rqpn);
		in->udp_dport = udp_dport;
	}
	memcpy(in->dmac, ah->roce.dmac, ETH_ALEN);
	memcpy(in->smac, smac, ETH_ALEN);
	in->sgid = grh->sgid_attr->gid;
	in->dgid = grh->dgid;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_tmpl_in_from_ah);

static int rnic_ib_tmpl_check(const struct rnic_ib_tmpl_in *in)
{
	bool v4 = in->net == RNIC_RX_CLASS_ROCE_V2_IPV4;

	if (!rnic_tmpl_hdr_len(in->net, in->vlan))
		return -EINVAL;
	/* the device refuses a multicast destination; no all-zero MACs */
	if (!is_valid_ether_addr(in->dmac) || !is_valid_ether_addr(in->smac))
		return -EINVAL;
	if ((in->vlan && in->vlan_id >= VLAN_N_VID - 1) || in->prio > 7)
		return -EINVAL;
	if (in->flow_label > RNIC_TMPL_FLOW_LABEL_MAX)
		return -EINVAL;
	if (in->net == RNIC_RX_CLASS_ROCE_V1)
		return 0;
	/* the UDP port must be the one SET_PORT configured; never 0 */
	if (!in->udp_dport)
		return -EINVAL;
	/* an IPv4 path has IPv4-mapped GIDs, an IPv6 path has none */
	if (ipv6_addr_v4mapped((const struct in6_addr *)in->sgid.raw) != v4 ||
	    ipv6_addr_v4mapped((const struct in6_addr *)in->dgid.raw) != v4)
		return -EINVAL;
	return 0;
}

/*
 * GRH or IPv6 header (the same layout, IP version 6 in both); the payload
 * length (bytes 4-5) is the device's.
 */
static u8 *rnic_ib_put_ip6(u8 *p, const struct rnic_ib_tmpl_in *in,
			   u8 next_hdr)
{
	put_unaligned_be32(6U << 28 | (u32)in->traffic_class << 20 |
			   in->flow_label, p);
	p[6] = next_hdr;
	p[7] = in->hop_limit;
	memcpy(p + 8, in->sgid.raw, sizeof(in->sgid.raw));
	memcpy(p + 24, in->dgid.raw, sizeof(in->dgid.raw));
	return p + 40;
}

/*
 * IPv4 header without options. Total length and checksum are the
 * device's. The identification is 0: every packet has DF set and is
 * never fragmented, so the field has no meaning (RFC 6864, atomic
 * datagrams), and a constant keeps the template per path, not per packet.
 */
static u8 *rnic_ib_put_ip4(u8 *p, const struct rnic_ib_tmpl_in *in)
{
	p[0] = 0x45;
	p[1] = in->traffic_class;
	put_unaligned_be16(RNIC_TMPL_IPV4_DF, p + 6);
	p[8] = in->hop_limit;
	p[9] = IPPROTO_UDP;
	/* the low 32 bits of an IPv4-mapped GID are the address */
	memcpy(p + 12, in->sgid.raw + 12, 4);
	memcpy(p + 16, in->dgid.raw + 12, 4);
	return p + 20;
}

/* UDP: length and checksum (0, RoCE v2 sends none) are the device's */
static u8 *rnic_ib_put_udp(u8 *p, const struct rnic_ib_tmpl_in *in)
{
	put_unaligned_be16(in->udp_sport, p);
	put_unaligned_be16(in->udp_dport, p + 2);
	return p + 8;
}

/**
 * rnic_ib_tmpl_build() - build the header template of a path or an AH
 * @tmpl: the template to fill (a QP path buffer or an AH table entry)
 * @in: what goes into it
 *
 * Writes the whole 128 bytes, RNIC_TMPL_F_VALID clear: an AH table entry
 * becomes valid only when its caller sets VALID after a dma_wmb(), so the
 * device never reads a half-written entry. Nothing is written on error.
 *
 * Return: 0, or -EINVAL for inputs the template rules refuse.
 */
int rnic_ib_tmpl_build(struct rnic_hdr_tmpl *tmpl,
		       const struct rnic_ib_tmpl_in *in)
{
	u32 flags;
	u8 *p;
	int err;

	err = rnic_ib_tmpl_check(in);
	if (err)
		return err;

	memset(tmpl, 0, sizeof(*tmpl));
	flags = FIELD_PREP(RNIC_TMPL_NET, in->net);
	if (in->vlan)
		flags |= RNIC_TMPL_F_VLAN;
	tmpl->flags = cpu_to_le32(flags);
	tmpl->pdn = cpu_to_le32(in->pdn);
	tmpl->hdr_len = rnic_tmpl_hdr_len(in->net, in->vlan);
	/* PFC classifies a tagged frame by its PCP, an untagged one by this */
	tmpl->prio = in->vlan ? 0 : in->prio;

	p = tmpl->hdr;
	ether_addr_copy(p, in->dmac);
	ether_addr_copy(p + ETH_ALEN, in->smac);
	p += 2 * ETH_ALEN;
	if (in->vlan) {
		put_unaligned_be16(ETH_P_8021Q, p);
		put_unaligned_be16((u16)in->prio << VLAN_PRIO_SHIFT |
				   in->vlan_id, p + 2);
		p += VLAN_HLEN;
	}

	switch (in->net) {
	case RNIC_RX_CLASS_ROCE_V1:
		put_unaligned_be16(RNIC_TMPL_ETH_P_ROCE_V1, p);
		p = rnic_ib_put_ip6(p + 2, in, RNIC_TMPL_GRH_NEXT_HDR_BTH);
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		put_unaligned_be16(ETH_P_IP, p);
		p = rnic_ib_put_udp(rnic_ib_put_ip4(p + 2, in), in);
		break;
	default:
		put_unaligned_be16(ETH_P_IPV6, p);
		p = rnic_ib_put_udp(rnic_ib_put_ip6(p + 2, in, IPPROTO_UDP),
				    in);
		break;
	}
	WARN_ON_ONCE(p - tmpl->hdr != tmpl->hdr_len);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_tmpl_build);
