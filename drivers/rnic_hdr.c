// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCE header construction and parsing.
 *
 * The device moves frames and (when it has the capability) generates and
 * checks the ICRC; everything between the MAC header and the payload is
 * the driver's, built here on transmit and validated here on receive. The
 * parser trusts nothing in the frame: every length is checked against the
 * bytes actually received before it is used.
 */
#include <kunit/visibility.h>
#include <linux/crc32.h>
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_pack.h>

#include "rnic_compat.h"
#include "rnic_hdr.h"

#define OPI(op, fl, len)						\
	[IB_OPCODE_##op] = { .name = #op, .flags = (fl), .hdr_len = (len) }

#define O_REQ	RNIC_OPF_REQ
#define O_RESP	RNIC_OPF_RESP
#define O_DATA	RNIC_OPF_PAYLOAD
#define O_SEND	RNIC_OPF_SEND
#define O_WRITE	RNIC_OPF_WRITE
#define O_READ	RNIC_OPF_READ
#define O_FIRST	RNIC_OPF_FIRST
#define O_MIDDLE	RNIC_OPF_MIDDLE
#define O_LAST	RNIC_OPF_LAST
#define O_ONLY	RNIC_OPF_ONLY
#define O_BTH	RNIC_BTH_LEN

/*
 * The opcodes rnic implements: RC and UD (IBA 9.2, table 38). Anything
 * else (UC, RD, CNP, vendor) has no entry and is dropped as BAD_OPCODE.
 */
static const struct rnic_opcode_info rnic_opcodes[256] = {
	OPI(RC_SEND_FIRST, O_REQ | O_SEND | O_DATA | O_FIRST, O_BTH),
	OPI(RC_SEND_MIDDLE, O_REQ | O_SEND | O_DATA | O_MIDDLE, O_BTH),
	OPI(RC_SEND_LAST, O_REQ | O_SEND | O_DATA | O_LAST, O_BTH),
	OPI(RC_SEND_LAST_WITH_IMMEDIATE,
	    O_REQ | O_SEND | O_DATA | O_LAST | RNIC_OPF_IMMDT, O_BTH + RNIC_IMMDT_LEN),
	OPI(RC_SEND_ONLY, O_REQ | O_SEND | O_DATA | O_ONLY, O_BTH),
	OPI(RC_SEND_ONLY_WITH_IMMEDIATE,
	    O_REQ | O_SEND | O_DATA | O_ONLY | RNIC_OPF_IMMDT, O_BTH + RNIC_IMMDT_LEN),
	OPI(RC_SEND_LAST_WITH_INVALIDATE,
	    O_REQ | O_SEND | O_DATA | O_LAST | RNIC_OPF_IETH, O_BTH + RNIC_IETH_LEN),
	OPI(RC_SEND_ONLY_WITH_INVALIDATE,
	    O_REQ | O_SEND | O_DATA | O_ONLY | RNIC_OPF_IETH, O_BTH + RNIC_IETH_LEN),
	OPI(RC_RDMA_WRITE_FIRST, O_REQ | O_WRITE | O_DATA | O_FIRST | RNIC_OPF_RETH,
	    O_BTH + RNIC_RETH_LEN),
	OPI(RC_RDMA_WRITE_MIDDLE, O_REQ | O_WRITE | O_DATA | O_MIDDLE, O_BTH),
	OPI(RC_RDMA_WRITE_LAST, O_REQ | O_WRITE | O_DATA | O_LAST, O_BTH),
	OPI(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	    O_REQ | O_WRITE | O_DATA | O_LAST | RNIC_OPF_IMMDT, O_BTH + RNIC_IMMDT_LEN),
	OPI(RC_RDMA_WRITE_ONLY, O_REQ | O_WRITE | O_DATA | O_ONLY | RNIC_OPF_RETH,
	    O_BTH + RNIC_RETH_LEN),
	OPI(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    O_REQ | O_WRITE | O_DATA | O_ONLY | RNIC_OPF_RETH | RNIC_OPF_IMMDT,
	    O_BTH + RNIC_RETH_LEN + RNIC_IMMDT_LEN),
	OPI(RC_RDMA_READ_REQUEST, O_REQ | O_READ | O_ONLY | RNIC_OPF_RETH,
	    O_BTH + RNIC_RETH_LEN),
	OPI(RC_RDMA_READ_RESPONSE_FIRST,
	    O_RESP | O_READ | O_DATA | O_FIRST | RNIC_OPF_AETH, O_BTH + RNIC_AETH_LEN),
	OPI(RC_RDMA_READ_RESPONSE_MIDDLE, O_RESP | O_READ | O_DATA | O_MIDDLE, O_BTH),
	OPI(RC_RDMA_READ_RESPONSE_LAST,
	    O_RESP | O_READ | O_DATA | O_LAST | RNIC_OPF_AETH, O_BTH + RNIC_AETH_LEN),
	OPI(RC_RDMA_READ_RESPONSE_ONLY,
	    O_RESP | O_READ | O_DATA | O_ONLY | RNIC_OPF_AETH, O_BTH + RNIC_AETH_LEN),
	OPI(RC_ACKNOWLEDGE, O_RESP | O_ONLY | RNIC_OPF_AETH, O_BTH + RNIC_AETH_LEN),
	OPI(RC_ATOMIC_ACKNOWLEDGE,
	    O_RESP | RNIC_OPF_ATOMIC | O_ONLY | RNIC_OPF_AETH | RNIC_OPF_ATMACK,
	    O_BTH + RNIC_AETH_LEN + RNIC_ATMACK_LEN),
	OPI(RC_COMPARE_SWAP, O_REQ | RNIC_OPF_ATOMIC | O_ONLY | RNIC_OPF_ATMETH,
	    O_BTH + RNIC_ATMETH_LEN),
	OPI(RC_FETCH_ADD, O_REQ | RNIC_OPF_ATOMIC | O_ONLY | RNIC_OPF_ATMETH,
	    O_BTH + RNIC_ATMETH_LEN),
	OPI(UD_SEND_ONLY, O_REQ | O_SEND | O_DATA | O_ONLY | RNIC_OPF_DETH,
	    O_BTH + RNIC_DETH_LEN),
	OPI(UD_SEND_ONLY_WITH_IMMEDIATE,
	    O_REQ | O_SEND | O_DATA | O_ONLY | RNIC_OPF_DETH | RNIC_OPF_IMMDT,
	    O_BTH + RNIC_DETH_LEN + RNIC_IMMDT_LEN),
};

/**
 * rnic_opcode_info() - the table entry of a BTH opcode
 * @opcode: BTH opcode
 *
 * Return: the entry, or NULL if rnic does not implement the opcode.
 */
const struct rnic_opcode_info *rnic_opcode_info(u8 opcode)
{
	return rnic_opcodes[opcode].name ? &rnic_opcodes[opcode] : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_opcode_info);

static u32 rnic_l3_len(enum rnic_net_type net)
{
	switch (net) {
	case RNIC_NET_ROCE_V1:
		return RNIC_GRH_LEN;
	case RNIC_NET_ROCE_V2_IPV4:
		return RNIC_IPV4_LEN + RNIC_UDP_LEN;
	case RNIC_NET_ROCE_V2_IPV6:
		return RNIC_IPV6_LEN + RNIC_UDP_LEN;
	}
	return 0;
}

/**
 * rnic_hdr_len() - bytes of header rnic_hdr_build() writes for @pkt
 * @pkt: the frame's fields (net, vlan and opcode matter)
 *
 * Return: the length, or -EINVAL for an unknown opcode or network type.
 */
int rnic_hdr_len(const struct rnic_pkt *pkt)
{
	const struct rnic_opcode_info *info = rnic_opcode_info(pkt->opcode);
	u32 l3 = rnic_l3_len(pkt->net);

	if (!info || !l3)
		return -EINVAL;
	return RNIC_ETH_HLEN + (pkt->vlan ? RNIC_VLAN_HLEN : 0) + l3 +
	       info->hdr_len;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_hdr_len);

/* @pad is the frame's own, derived from its payload, not pkt->pad. */
static u8 *rnic_put_bth(const struct rnic_pkt *pkt, u8 pad, u8 *p)
{
	p[0] = pkt->opcode;
	/* SE, M, PadCnt, TVer (0) */
	p[1] = (pkt->se ? 0x80 : 0) | (pkt->mig ? 0x40 : 0) | (pad << 4);
	put_unaligned_be16(pkt->pkey, p + 2);
	put_unaligned_be32((pkt->fecn ? BIT(31) : 0) |
			   (pkt->becn ? BIT(30) : 0) |
			   (pkt->dqpn & RNIC_PSN_MASK), p + 4);
	put_unaligned_be32((pkt->ack_req ? BIT(31) : 0) |
			   (pkt->psn & RNIC_PSN_MASK), p + 8);
	return p + RNIC_BTH_LEN;
}

/* Extension headers in the order IBA 9.2 puts them after the BTH. */
static u8 *rnic_put_ext(const struct rnic_pkt *pkt, u32 flags, u8 *p)
{
	if (flags & RNIC_OPF_DETH) {
		put_unaligned_be32(pkt->qkey, p);
		put_unaligned_be32(pkt->sqpn & RNIC_PSN_MASK, p + 4);
		p += RNIC_DETH_LEN;
	}
	if (flags & RNIC_OPF_RETH) {
		put_unaligned_be64(pkt->va, p);
		put_unaligned_be32(pkt->rkey, p + 8);
		put_unaligned_be32(pkt->dma_len, p + 12);
		p += RNIC_RETH_LEN;
	}
	if (flags & RNIC_OPF_ATMETH) {
		put_unaligned_be64(pkt->va, p);
		put_unaligned_be32(pkt->rkey, p + 8);
		put_unaligned_be64(pkt->swap_add, p + 12);
		put_unaligned_be64(pkt->compare, p + 20);
		p += RNIC_ATMETH_LEN;
	}
	if (flags & RNIC_OPF_AETH) {
		put_unaligned_be32((u32)pkt->syndrome << 24 |
				   (pkt->msn & RNIC_PSN_MASK), p);
		p += RNIC_AETH_LEN;
	}
	if (flags & RNIC_OPF_ATMACK) {
		put_unaligned_be64(pkt->atomic_orig, p);
		p += RNIC_ATMACK_LEN;
	}
	if (flags & RNIC_OPF_IMMDT) {
		memcpy(p, &pkt->imm, RNIC_IMMDT_LEN);
		p += RNIC_IMMDT_LEN;
	}
	if (flags & RNIC_OPF_IETH) {
		put_unaligned_be32(pkt->inv_rkey, p);
		p += RNIC_IETH_LEN;
	}
	return p;
}

/**
 * rnic_hdr_build() - write the headers of one RoCE frame
 * @pkt: the fields; @pkt->pad is ignored and derived from @payload_len
 * @payload_len: bytes of message data that follow the headers
 * @buf: where to write
 * @buf_len: room in @buf
 *
 * Lengths in the GRH, IP and UDP headers count the payload, its pad to a
 * multiple of four and the ICRC, which the caller (or the device) appends.
 * The IPv4 header checksum is computed here, so a device without the
 * offload sends a valid header too. The UDP checksum is 0, as RoCE v2
 * requires.
 *
 * Return: the header length, or -EINVAL.
 */
int rnic_hdr_build(const struct rnic_pkt *pkt, u32 payload_len, u8 *buf,
		   size_t buf_len)
{
	const struct rnic_opcode_info *info = rnic_opcode_info(pkt->opcode);
	int hlen = rnic_hdr_len(pkt);
	u8 pad = (4 - (payload_len & 3)) & 3;
	u32 tlen;
	u8 *p = buf;

	if (hlen < 0 || hlen > buf_len)
		return -EINVAL;
	if (payload_len && !(info->flags & RNIC_OPF_PAYLOAD))
		return -EINVAL;
	if (payload_len > SZ_64K)
		return -EINVAL;
	tlen = info->hdr_len + payload_len + pad + RNIC_ICRC_SIZE;

	ether_addr_copy(p, pkt->dmac);
	ether_addr_copy(p + ETH_ALEN, pkt->smac);
	p += 2 * ETH_ALEN;
	if (pkt->vlan) {
		put_unaligned_be16(ETH_P_8021Q, p);
		put_unaligned_be16(pkt->vlan_tci, p + 2);
		p += RNIC_VLAN_HLEN;
	}

	switch (pkt->net) {
	case RNIC_NET_ROCE_V1:
		put_unaligned_be16(RNIC_ETH_P_ROCE_V1, p);
		p += 2;
		put_unaligned_be32(6U << 28 | (u32)pkt->tclass << 20 |
				   (pkt->flow_label & IB_GRH_FLOWLABEL_MASK), p);
		put_unaligned_be16(tlen, p + 4);
		p[6] = RNIC_GRH_NEXT_HDR_BTH;
		p[7] = pkt->hop_limit;
		memcpy(p + 8, pkt->sgid.raw, 16);
		memcpy(p + 24, pkt->dgid.raw, 16);
		p += RNIC_GRH_LEN;
		break;
	case RNIC_NET_ROCE_V2_IPV4: {
		struct iphdr *ip;

		put_unaligned_be16(ETH_P_IP, p);
		p += 2;
		ip = (struct iphdr *)p;
		memset(ip, 0, RNIC_IPV4_LEN);
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = pkt->tclass;
		ip->tot_len = htons(RNIC_IPV4_LEN + RNIC_UDP_LEN + tlen);
		ip->frag_off = htons(IP_DF);
		ip->ttl = pkt->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, pkt->sgid.raw + 12, 4);
		memcpy(&ip->daddr, pkt->dgid.raw + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
		p += RNIC_IPV4_LEN;
		goto udp;
	}
	case RNIC_NET_ROCE_V2_IPV6:
		put_unaligned_be16(ETH_P_IPV6, p);
		p += 2;
		put_unaligned_be32(6U << 28 | (u32)pkt->tclass << 20 |
				   (pkt->flow_label & IB_GRH_FLOWLABEL_MASK), p);
		put_unaligned_be16(RNIC_UDP_LEN + tlen, p + 4);
		p[6] = IPPROTO_UDP;
		p[7] = pkt->hop_limit;
		memcpy(p + 8, pkt->sgid.raw, 16);
		memcpy(p + 24, pkt->dgid.raw, 16);
		p += RNIC_IPV6_LEN;
udp:
		put_unaligned_be16(pkt->udp_sport, p);
		put_unaligned_be16(pkt->udp_dport, p + 2);
		put_unaligned_be16(RNIC_UDP_LEN + tlen, p + 4);
		put_unaligned_be16(0, p + 6);
		p += RNIC_UDP_LEN;
		break;
	}

	p = rnic_put_bth(pkt, pad, p);
	p = rnic_put_ext(pkt, info->flags, p);
	return p - buf;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_hdr_build);

static void rnic_get_ext(struct rnic_pkt *pkt, u32 flags, const u8 *p)
{
	if (flags & RNIC_OPF_DETH) {
		pkt->qkey = get_unaligned_be32(p);
		pkt->sqpn = get_unaligned_be32(p + 4) & RNIC_PSN_MASK;
		p += RNIC_DETH_LEN;
	}
	if (flags & RNIC_OPF_RETH) {
		pkt->va = get_unaligned_be64(p);
		pkt->rkey = get_unaligned_be32(p + 8);
		pkt->dma_len = get_unaligned_be32(p + 12);
		p += RNIC_RETH_LEN;
	}
	if (flags & RNIC_OPF_ATMETH) {
		pkt->va = get_unaligned_be64(p);
		pkt->rkey = get_unaligned_be32(p + 8);
		pkt->swap_add = get_unaligned_be64(p + 12);
		pkt->compare = get_unaligned_be64(p + 20);
		p += RNIC_ATMETH_LEN;
	}
	if (flags & RNIC_OPF_AETH) {
		u32 aeth = get_unaligned_be32(p);

		pkt->syndrome = aeth >> 24;
		pkt->msn = aeth & RNIC_PSN_MASK;
		p += RNIC_AETH_LEN;
	}
	if (flags & RNIC_OPF_ATMACK) {
		pkt->atomic_orig = get_unaligned_be64(p);
		p += RNIC_ATMACK_LEN;
	}
	if (flags & RNIC_OPF_IMMDT) {
		memcpy(&pkt->imm, p, RNIC_IMMDT_LEN);
		p += RNIC_IMMDT_LEN;
	}
	if (flags & RNIC_OPF_IETH)
		pkt->inv_rkey = get_unaligned_be32(p);
}

/*
 * Parse the network header at @p (@avail bytes received from there on).
 * On success *@tlen is the transport length (BTH through ICRC) that the
 * network header declares, already checked against @avail.
 */
static enum rnic_parse_err rnic_parse_l3(const u8 *p, u32 avail, u16 proto,
					 u16 udp_port, struct rnic_pkt *pkt,
					 u32 *l3_len, u32 *tlen)
{
	u32 ulen;

	switch (proto) {
	case RNIC_ETH_P_ROCE_V1:
		if (avail < RNIC_GRH_LEN)
			return RNIC_PARSE_TRUNCATED;
		if (p[0] >> 4 != 6 || p[6] != RNIC_GRH_NEXT_HDR_BTH)
			return RNIC_PARSE_BAD_L3;
		pkt->net = RNIC_NET_ROCE_V1;
		pkt->tclass = get_unaligned_be32(p) >> 20;
		pkt->flow_label = get_unaligned_be32(p) & IB_GRH_FLOWLABEL_MASK;
		*tlen = get_unaligned_be16(p + 4);
		pkt->hop_limit = p[7];
		memcpy(pkt->sgid.raw, p + 8, 16);
		memcpy(pkt->dgid.raw, p + 24, 16);
		*l3_len = RNIC_GRH_LEN;
		break;
	case ETH_P_IP: {
		u32 ihl, tot;

		if (avail < RNIC_IPV4_LEN + RNIC_UDP_LEN)
			return RNIC_PARSE_TRUNCATED;
		ihl = (p[0] & 0xf) * 4;
		if (p[0] >> 4 != 4 || ihl < RNIC_IPV4_LEN)
			return RNIC_PARSE_BAD_L3;
		if (p[9] != IPPROTO_UDP)
			return RNIC_PARSE_NOT_ROCE;
		/* fragments cannot be RoCE: the BTH is in the first one only */
		if (get_unaligned_be16(p + 6) & (IP_MF | IP_OFFSET))
			return RNIC_PARSE_BAD_L3;
		tot = get_unaligned_be16(p + 2);
		if (tot < ihl + RNIC_UDP_LEN)
			return RNIC_PARSE_BAD_L3;
		if (tot > avail || avail < ihl + RNIC_UDP_LEN)
			return RNIC_PARSE_TRUNCATED;
		pkt->net = RNIC_NET_ROCE_V2_IPV4;
		pkt->tclass = p[1];
		pkt->hop_limit = p[8];
		pkt->flow_label = 0;
		ipv6_addr_set_v4mapped(get_unaligned((__be32 *)(p + 12)),
				       (struct in6_addr *)pkt->sgid.raw);
		ipv6_addr_set_v4mapped(get_unaligned((__be32 *)(p + 16)),
				       (struct in6_addr *)pkt->dgid.raw);
		*l3_len = ihl + RNIC_UDP_LEN;
		p += ihl;
		ulen = tot - ihl;
		goto udp;
	}
	case ETH_P_IPV6:
		if (avail < RNIC_IPV6_LEN + RNIC_UDP_LEN)
			return RNIC_PARSE_TRUNCATED;
		if (p[0] >> 4 != 6)
			return RNIC_PARSE_BAD_L3;
		/* RoCE v2 over IPv6 carries no extension headers */
		if (p[6] != IPPROTO_UDP)
			return RNIC_PARSE_NOT_ROCE;
		ulen = get_unaligned_be16(p + 4);
		if (ulen > avail - RNIC_IPV6_LEN)
			return RNIC_PARSE_TRUNCATED;
		pkt->net = RNIC_NET_ROCE_V2_IPV6;
		pkt->tclass = get_unaligned_be32(p) >> 20;
		pkt->flow_label = get_unaligned_be32(p) & IB_GRH_FLOWLABEL_MASK;
		pkt->hop_limit = p[7];
		memcpy(pkt->sgid.raw, p + 8, 16);
		memcpy(pkt->dgid.raw, p + 24, 16);
		*l3_len = RNIC_IPV6_LEN + RNIC_UDP_LEN;
		p += RNIC_IPV6_LEN;
udp:
		if (ulen < RNIC_UDP_LEN ||
		    get_unaligned_be16(p + 4) != ulen)
			return RNIC_PARSE_BAD_L3;
		pkt->udp_sport = get_unaligned_be16(p);
		pkt->udp_dport = get_unaligned_be16(p + 2);
		if (pkt->udp_dport != udp_port)
			return RNIC_PARSE_NOT_ROCE;
		*tlen = ulen - RNIC_UDP_LEN;
		break;
	default:
		return RNIC_PARSE_NOT_ROCE;
	}
	if (*tlen > avail - *l3_len)
		return RNIC_PARSE_TRUNCATED;
	return RNIC_PARSE_OK;
}

/**
 * rnic_hdr_parse() - validate a received RoCE frame and extract its fields
 * @frame: the frame from its Ethernet header (VLAN tag present or stripped)
 * @len: bytes received (Ethernet padding may follow the RoCE packet)
 * @udp_port: the RoCE v2 UDP destination port in use
 * @pkt: filled on success; undefined otherwise
 *
 * Return: RNIC_PARSE_OK, or why the frame must be dropped.
 */
enum rnic_parse_err rnic_hdr_parse(const u8 *frame, u32 len, u16 udp_port,
				   struct rnic_pkt *pkt)
{
	const struct rnic_opcode_info *info;
	u32 off = RNIC_ETH_HLEN, l3_len, tlen;
	enum rnic_parse_err err;
	const u8 *bth;
	u16 proto;

	memset(pkt, 0, sizeof(*pkt));
	if (len < RNIC_ETH_HLEN)
		return RNIC_PARSE_TRUNCATED;
	ether_addr_copy(pkt->dmac, frame);
	ether_addr_copy(pkt->smac, frame + ETH_ALEN);
	proto = get_unaligned_be16(frame + 12);
	if (proto == ETH_P_8021Q) {
		if (len < RNIC_ETH_HLEN + RNIC_VLAN_HLEN)
			return RNIC_PARSE_TRUNCATED;
		pkt->vlan = true;
		pkt->vlan_tci = get_unaligned_be16(frame + 14);
		proto = get_unaligned_be16(frame + 16);
		off += RNIC_VLAN_HLEN;
	}

	pkt->l3_off = off;
	err = rnic_parse_l3(frame + off, len - off, proto, udp_port, pkt,
			    &l3_len, &tlen);
	if (err)
		return err;
	off += l3_len;
	pkt->bth_off = off;

	if (tlen < RNIC_BTH_LEN + RNIC_ICRC_SIZE)
		return RNIC_PARSE_TRUNCATED;
	bth = frame + off;
	pkt->opcode = bth[0];
	info = rnic_opcode_info(pkt->opcode);
	if (!info)
		return RNIC_PARSE_BAD_OPCODE;
	if (bth[1] & 0xf)
		return RNIC_PARSE_BAD_TVER;
	pkt->se = bth[1] & 0x80;
	pkt->mig = bth[1] & 0x40;
	pkt->pad = (bth[1] >> 4) & 3;
	pkt->pkey = get_unaligned_be16(bth + 2);
	pkt->fecn = bth[4] & 0x80;
	pkt->becn = bth[4] & 0x40;
	pkt->dqpn = get_unaligned_be32(bth + 4) & RNIC_PSN_MASK;
	pkt->ack_req = bth[8] & 0x80;
	pkt->psn = get_unaligned_be32(bth + 8) & RNIC_PSN_MASK;

	if (tlen < info->hdr_len + pkt->pad + RNIC_ICRC_SIZE)
		return RNIC_PARSE_TRUNCATED;
	rnic_get_ext(pkt, info->flags, bth + RNIC_BTH_LEN);
	pkt->payload_off = off + info->hdr_len;
	pkt->payload_len = tlen - info->hdr_len - pkt->pad - RNIC_ICRC_SIZE;
	/* a header-only opcode has neither data nor pad */
	if (!(info->flags & RNIC_OPF_PAYLOAD) &&
	    (pkt->payload_len || pkt->pad))
		return RNIC_PARSE_BAD_LENGTH;
	return RNIC_PARSE_OK;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_hdr_parse);

const char *rnic_parse_err_str(enum rnic_parse_err err)
{
	static const char * const str[RNIC_PARSE_NUM] = {
		[RNIC_PARSE_OK] = "ok",
		[RNIC_PARSE_TRUNCATED] = "truncated",
		[RNIC_PARSE_NOT_ROCE] = "not RoCE",
		[RNIC_PARSE_BAD_L3] = "bad network header",
		[RNIC_PARSE_BAD_OPCODE] = "unsupported opcode",
		[RNIC_PARSE_BAD_TVER] = "bad transport version",
		[RNIC_PARSE_BAD_LENGTH] = "bad length",
	};

	return err < RNIC_PARSE_NUM ? str[err] : "unknown";
}

/**
 * rnic_icrc() - compute the ICRC of a parsed RoCE frame in software
 * @frame: the frame
 * @pkt: its fields from rnic_hdr_parse() (l3_off, bth_off, payload, pad)
 *
 * IBA annexes A16/A17: CRC-32 over 64 bits of ones standing for the LRH,
 * then the network header onward with the fields routers may change
 * masked to ones (IPv4 TOS, TTL and checksum; IPv6/GRH traffic class,
 * flow label and hop limit; the UDP checksum; the BTH's resv8a byte),
 * up to the ICRC itself.
 *
 * Return: the ICRC as the 32-bit value whose little-endian bytes are on
 * the wire.
 */
u32 rnic_icrc(const u8 *frame, const struct rnic_pkt *pkt)
{
	static const u8 lrh_ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	/* the largest network header: IPv4 with 40 bytes of options */
	u8 hdr[60 + RNIC_UDP_LEN + RNIC_BTH_LEN];
	u32 hlen = pkt->bth_off + RNIC_BTH_LEN - pkt->l3_off;
	u32 end = pkt->payload_off + pkt->payload_len + pkt->pad;
	u32 crc;

	if (WARN_ON_ONCE(hlen > sizeof(hdr)))
		return 0;
	memcpy(hdr, frame + pkt->l3_off, hlen);
	switch (pkt->net) {
	case RNIC_NET_ROCE_V2_IPV4:
		hdr[1] = 0xff;			/* TOS */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = 0xff;			/* header checksum */
		hdr[11] = 0xff;
		break;
	case RNIC_NET_ROCE_V1:
	case RNIC_NET_ROCE_V2_IPV6:
		/* version stays, traffic class and flow label masked */
		hdr[0] |= 0x0f;
		hdr[1] = 0xff;
		hdr[2] = 0xff;
		hdr[3] = 0xff;
		hdr[7] = 0xff;			/* hop limit */
		break;
	}
	if (pkt->net != RNIC_NET_ROCE_V1) {
		u32 udp = pkt->bth_off - RNIC_UDP_LEN - pkt->l3_off;

		hdr[udp + 6] = 0xff;		/* UDP checksum */
		hdr[udp + 7] = 0xff;
	}
	hdr[pkt->bth_off - pkt->l3_off + 4] = 0xff;	/* BTH resv8a */

	crc = crc32_le(~0U, lrh_ones, sizeof(lrh_ones));
	crc = crc32_le(crc, hdr, hlen);
	crc = crc32_le(crc, frame + pkt->bth_off + RNIC_BTH_LEN,
		       end - pkt->bth_off - RNIC_BTH_LEN);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_icrc);

/**
 * rnic_icrc_check() - whether a parsed frame's trailing ICRC is right
 * @frame: the frame
 * @pkt: its fields from rnic_hdr_parse()
 */
bool rnic_icrc_check(const u8 *frame, const struct rnic_pkt *pkt)
{
	u32 end = pkt->payload_off + pkt->payload_len + pkt->pad;

	return get_unaligned_le32(frame + end) == rnic_icrc(frame, pkt);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_icrc_check);
