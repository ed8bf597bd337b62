// SPDX-License-Identifier: GPL-2.0
/*
 * Frame parsing for the model: RX classification, ICRC (IB spec annexes
 * A16 for RoCE v1, A17 for RoCE v2), VLAN insertion, 802.1Qbb PFC frames
 * and the IPv4 header checksum.
 *
 * Every frame handed to pkt_classify() is untrusted: each field is read
 * only after the bytes holding it are known to lie inside @len, and
 * lengths taken from headers are checked against what is actually there.
 */
#include <string.h>

#include "pkt/crc32.h"
#include "pkt/pkt.h"

#define ETH_HLEN		14
#define ETH_ALEN		6
#define ETH_P_8021Q		0x8100
#define ETH_P_IPV4		0x0800
#define ETH_P_IPV6		0x86dd
#define VLAN_HLEN		4
#define IPV4_MIN_HLEN		20
#define IPV6_HLEN		40
#define GRH_LEN			40
#define UDP_HLEN		8
#define BTH_LEN			12
#define ICRC_LEN		4
#define IPPROTO_UDP_NUM		17
#define GRH_NXTHDR_BTH		0x1b
#define PFC_OPCODE		0x0101
#define PFC_MIN_LEN		(ETH_HLEN + 2 + 2 + 16)
#define PFC_FRAME_LEN		60
#define IPV4_FRAG_MASK		0x3fff	/* MF flag and fragment offset */

static const uint8_t pfc_dmac[ETH_ALEN] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void info_init(struct pkt_info *info, enum pkt_class cls)
{
	memset(info, 0, sizeof(*info));
	info->cls = cls;
}

/*
 * The UDP part of RoCE v2, common to IPv4 and IPv6. @l4_off is where UDP
 * starts and @l4_avail how many bytes the IP header says follow it (already
 * clipped to the frame). Not our port: plain Ethernet traffic.
 */
static enum pkt_class classify_udp(const uint8_t *f, size_t len,
				   size_t l4_off, size_t l4_avail,
				   uint16_t port, enum pkt_class v2cls,
				   struct pkt_info *info)
{
	size_t udp_len;

	if (l4_off + UDP_HLEN > len)
		return PKT_CLASS_ETH;	/* cannot even see the port */
	if (get_be16(f + l4_off + 2) != port)
		return PKT_CLASS_ETH;
	udp_len = get_be16(f + l4_off + 4);
	/* RoCE: UDP header, BTH and ICRC at least, all inside the frame. */
	if (udp_len < UDP_HLEN + BTH_LEN + ICRC_LEN || udp_len > l4_avail ||
	    l4_off + udp_len > len)
		return PKT_CLASS_MALFORMED;
	info->bth_off = l4_off + UDP_HLEN;
	info->icrc_off = l4_off + udp_len - ICRC_LEN;
	return v2cls;
}

static enum pkt_class classify_ipv4(const uint8_t *f, size_t len, size_t l3,
				    uint16_t port, struct pkt_info *info)
{
	size_t ihl, tot;

	if (l3 + IPV4_MIN_HLEN > len)
		return PKT_CLASS_ETH;
	if ((f[l3] >> 4) != 4)
		return PKT_CLASS_ETH;
	ihl = (size_t)(f[l3] & 0x0f) * 4;
	tot = get_be16(f + l3 + 2);
	if (ihl < IPV4_MIN_HLEN || l3 + ihl > len || tot < ihl)
		return PKT_CLASS_ETH;
	if (f[l3 + 9] != IPPROTO_UDP_NUM)
		return PKT_CLASS_ETH;
	/* A later fragment has no UDP header: nothing to classify by. */
	if (get_be16(f + l3 + 6) & 0x1fff)
		return PKT_CLASS_ETH;
	/* The IP header may claim more than was received: clip, then judge. */
	if (l3 + tot > len)
		tot = len - l3;
	if (classify_udp(f, len, l3 + ihl, tot - ihl, port,
			 PKT_CLASS_ROCE_V2_IPV4, info) == PKT_CLASS_ETH)
		return PKT_CLASS_ETH;
	/* Our port: anything short of a whole, unfragmented datagram is bad. */
	if (get_be16(f + l3 + 2) > len - l3 ||
	    (get_be16(f + l3 + 6) & IPV4_FRAG_MASK) ||
	    info->icrc_off + ICRC_LEN != l3 + tot)
		return PKT_CLASS_MALFORMED;
	return PKT_CLASS_ROCE_V2_IPV4;
}

static enum pkt_class classify_ipv6(const uint8_t *f, size_t len, size_t l3,
				    uint16_t port, struct pkt_info *info)
{
	size_t plen;
	enum pkt_class cls;

	if (l3 + IPV6_HLEN > len)
		return PKT_CLASS_ETH;
	if ((f[l3] >> 4) != 6)
		return PKT_CLASS_ETH;
	/* No extension headers: RoCE v2 never uses them. */
	if (f[l3 + 6] != IPPROTO_UDP_NUM)
		return PKT_CLASS_ETH;
	plen = get_be16(f + l3 + 4);
	if (l3 + IPV6_HLEN + plen > len) {
		cls = classify_udp(f, len, l3 + IPV6_HLEN,
				   len - l3 - IPV6_HLEN, port,
				   PKT_CLASS_ROCE_V2_IPV6, info);
		return cls == PKT_CLASS_ETH ? cls : PKT_CLASS_MALFORMED;
	}
	cls = classify_udp(f, len, l3 + IPV6_HLEN, plen, port,
			   PKT_CLASS_ROCE_V2_IPV6, info);
	if (cls == PKT_CLASS_ROCE_V2_IPV6 &&
	    info->icrc_off + ICRC_LEN != l3 + IPV6_HLEN + plen)
		return PKT_CLASS_MALFORMED;
	return cls;
}

/* RoCE v1: a GRH (laid out as an IPv6 header) carrying BTH directly. */
static enum pkt_class classify_v1(const uint8_t *f, size_t len, size_t l3,
				  struct pkt_info *info)
{
	size_t plen;

	if (l3 + GRH_LEN + BTH_LEN + ICRC_LEN > len)
		return PKT_CLASS_MALFORMED;
	if ((f[l3] >> 4) != 6 || f[l3 + 6] != GRH_NXTHDR_BTH)
		return PKT_CLASS_MALFORMED;
	plen = get_be16(f + l3 + 4);
	if (plen < BTH_LEN + ICRC_LEN || l3 + GRH_LEN + plen > len)
		return PKT_CLASS_MALFORMED;
	info->bth_off = l3 + GRH_LEN;
	info->icrc_off = l3 + GRH_LEN + plen - ICRC_LEN;
	return PKT_CLASS_ROCE_V1;
}

static bool is_pfc(const uint8_t *f, size_t len)
{
	return len >= ETH_HLEN + 2 && get_be16(f + 12) == PKT_ETH_P_PFC &&
	       get_be16(f + 14) == PFC_OPCODE;
}

enum pkt_class pkt_classify(const uint8_t *frame, size_t len,
			    uint16_t roce_udp_port, struct pkt_info *info)
{
	struct pkt_info tmp;
	enum pkt_class cls;
	size_t l3 = ETH_HLEN;
	uint16_t type;

	if (!info)
		info = &tmp;
	info_init(info, PKT_CLASS_ETH);
	if (!frame || len < ETH_HLEN)
		return PKT_CLASS_ETH;
	type = get_be16(frame + 12);
	if (type == PKT_ETH_P_PFC) {
		if (!is_pfc(frame, len))
			return PKT_CLASS_ETH;	/* other MAC control */
		info->cls = len >= PFC_MIN_LEN ? PKT_CLASS_PFC :
						 PKT_CLASS_MALFORMED;
		return info->cls;
	}
	if (type == ETH_P_8021Q) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return PKT_CLASS_ETH;
		info->vlan = true;
		info->vlan_tci = get_be16(frame + 14);
		type = get_be16(frame + 16);
		l3 += VLAN_HLEN;
	}
	info->l3_off = l3;
	switch (type) {
	case PKT_ETH_P_ROCE_V1:
		cls = classify_v1(frame, len, l3, info);
		break;
	case ETH_P_IPV4:
		cls = classify_ipv4(frame, len, l3, roce_udp_port, info);
		break;
	case ETH_P_IPV6:
		cls = classify_ipv6(frame, len, l3, roce_udp_port, info);
		break;
	default:
		cls = PKT_CLASS_ETH;
		break;
	}
	/* Offsets are only meaningful for a frame we can process as RoCE. */
	if (cls != PKT_CLASS_ROCE_V1 && cls != PKT_CLASS_ROCE_V2_IPV4 &&
	    cls != PKT_CLASS_ROCE_V2_IPV6) {
		info->bth_off = 0;
		info->icrc_off = 0;
	}
	info->cls = cls;
	return cls;
}

/*
 * The invariant-field masks. In the "pseudo header" every variant field
 * is replaced by ones: the frame may legitimately change them in flight
 * (routers rewrite TTL/hop limit, TOS/traffic class, flow label, and the
 * checksums that cover them), and the ICRC must survive that.
 */
static void mask_ipv6_like(uint8_t *h)
{
	h[0] |= 0x0f;		/* traffic class, high nibble */
	h[1] = 0xff;		/* traffic class low nibble, flow label */
	h[2] = 0xff;
	h[3] = 0xff;
	h[7] = 0xff;		/* hop limit */
}

static void mask_ipv4(uint8_t *h)
{
	h[1] = 0xff;		/* TOS (DSCP/ECN) */
	h[8] = 0xff;		/* TTL */
	h[10] = 0xff;		/* header checksum */
	h[11] = 0xff;
}

static void mask_bth(uint8_t *b)
{
	b[4] = 0xff;		/* resv8a */
}

uint32_t pkt_icrc(const uint8_t *frame, const struct pkt_info *info)
{
	/* LRH-sized ones, the biggest L3 (IPv4 with options) + UDP + BTH. */
	static const uint8_t lrh_ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	uint8_t ph[60 + UDP_HLEN + BTH_LEN];
	size_t l3 = info->l3_off, hlen, pos;
	uint32_t crc;

	switch (info->cls) {
	case PKT_CLASS_ROCE_V1:
		hlen = GRH_LEN + BTH_LEN;
		memcpy(ph, frame + l3, hlen);
		mask_ipv6_like(ph);
		break;
	case PKT_CLASS_ROCE_V2_IPV6:
		hlen = IPV6_HLEN + UDP_HLEN + BTH_LEN;
		memcpy(ph, frame + l3, hlen);
		mask_ipv6_like(ph);
		ph[IPV6_HLEN + 6] = 0xff;	/* UDP checksum */
		ph[IPV6_HLEN + 7] = 0xff;
		break;
	case PKT_CLASS_ROCE_V2_IPV4:
		/* IPv4 options, if any, are covered like the rest. */
		hlen = info->bth_off + BTH_LEN - l3;
		if (hlen > sizeof(ph))
			return 0;
		memcpy(ph, frame + l3, hlen);
		mask_ipv4(ph);
		ph[hlen - BTH_LEN - UDP_HLEN + 6] = 0xff;
		ph[hlen - BTH_LEN - UDP_HLEN + 7] = 0xff;
		break;
	default:
		return 0;
	}
	mask_bth(ph + hlen - BTH_LEN);
	crc = crc32_update(0xffffffffu, lrh_ones, sizeof(lrh_ones));
	crc = crc32_update(crc, ph, hlen);
	pos = info->bth_off + BTH_LEN;
	if (info->icrc_off > pos)
		crc = crc32_update(crc, frame + pos, info->icrc_off - pos);
	return ~crc;
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool pkt_icrc_ok(const uint8_t *frame, const struct pkt_info *info)
{
	switch (info->cls) {
	case PKT_CLASS_ROCE_V1:
	case PKT_CLASS_ROCE_V2_IPV4:
	case PKT_CLASS_ROCE_V2_IPV6:
		return get_le32(frame + info->icrc_off) ==
		       pkt_icrc(frame, info);
	default:
		return false;
	}
}

void pkt_icrc_fill(uint8_t *frame, const struct pkt_info *info)
{
	uint32_t icrc;

	switch (info->cls) {
	case PKT_CLASS_ROCE_V1:
	case PKT_CLASS_ROCE_V2_IPV4:
	case PKT_CLASS_ROCE_V2_IPV6:
		break;
	default:
		return;
	}
	icrc = pkt_icrc(frame, info);
	frame[info->icrc_off] = icrc & 0xff;
	frame[info->icrc_off + 1] = (icrc >> 8) & 0xff;
	frame[info->icrc_off + 2] = (icrc >> 16) & 0xff;
	frame[info->icrc_off + 3] = icrc >> 24;
}

bool pkt_pfc_parse(const uint8_t *frame, size_t len, uint8_t *enable_mask,
		   uint16_t quanta[8])
{
	unsigned int i;
	uint8_t en;

	if (!frame || len < PFC_MIN_LEN || !is_pfc(frame, len))
		return false;
	/* Class-enable vector: high octet reserved, bit i = priority i. */
	en = frame[17];
	for (i = 0; i < 8; i++)
		quanta[i] = (en & (1u << i)) ?
			    get_be16(frame + 18 + 2 * i) : 0;
	*enable_mask = en;
	return true;
}

size_t pkt_pfc_build(uint8_t *buf, const uint8_t src_mac[6],
		     uint8_t enable_mask, const uint16_t quanta[8])
{
	unsigned int i;

	memset(buf, 0, PFC_FRAME_LEN);
	memcpy(buf, pfc_dmac, ETH_ALEN);
	memcpy(buf + ETH_ALEN, src_mac, ETH_ALEN);
	put_be16(buf + 12, PKT_ETH_P_PFC);
	put_be16(buf + 14, PFC_OPCODE);
	put_be16(buf + 16, enable_mask);
	for (i = 0; i < 8; i++)
		put_be16(buf + 18 + 2 * i,
			 (enable_mask & (1u << i)) ? quanta[i] : 0);
	return PFC_FRAME_LEN;
}

size_t pkt_vlan_insert(uint8_t *buf, size_t len, uint16_t tci)
{
	if (len < 2 * ETH_ALEN)
		return len;
	memmove(buf + 2 * ETH_ALEN + VLAN_HLEN, buf + 2 * ETH_ALEN,
		len - 2 * ETH_ALEN);
	put_be16(buf + 12, ETH_P_8021Q);
	put_be16(buf + 14, tci);
	return len + VLAN_HLEN;
}

/*
 * The caller guarantees the whole header (IHL * 4 bytes from @l3_off) is
 * inside the frame, e.g. because pkt_classify() returned
 * PKT_CLASS_ROCE_V2_IPV4 with this l3_off.
 */
void pkt_ipv4_csum_fill(uint8_t *frame, size_t l3_off)
{
	uint8_t *h = frame + l3_off;
	size_t i, ihl = (size_t)(h[0] & 0x0f) * 4;
	uint32_t sum = 0;

	if ((h[0] >> 4) != 4 || ihl < IPV4_MIN_HLEN)
		return;
	h[10] = 0;
	h[11] = 0;
	for (i = 0; i < ihl; i += 2)
		sum += get_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put_be16(h + 10, (uint16_t)~sum);
}
