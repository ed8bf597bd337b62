// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, packet emission: the header templates
 * the driver builds (hardware-rdma.rst, "Header templates") are checked for
 * shape, then sent verbatim with the per-packet fields filled in (GRH or
 * IP lengths, IPv4 checksum, UDP length and checksum 0), followed by the
 * BTH, the extension headers, the payload, the pad and the ICRC. A
 * packet to our own MAC loops back to our receive side.
 */
#include <errno.h>
#include <string.h>

#include "rdma/rdma.h"

#define ETH_HLEN		14
#define VLAN_HLEN		4
#define ETH_P_8021Q		0x8100
#define ETH_P_IPV4		0x0800
#define ETH_P_IPV6		0x86dd
#define ETH_P_ROCE_V1		0x8915
#define IPV4_HLEN		20
#define IPV6_HLEN		40
#define UDP_HLEN		8
#define IPPROTO_UDP_NUM		17
#define GRH_NXT_BTH		0x1b
#define IPV4_DF			0x4000

static u16 get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

unsigned int rdma_tmpl_net(const struct rnic_hdr_tmpl *t)
{
	return FIELD_GET(RNIC_TMPL_NET, le32_to_cpu(t->flags));
}

static unsigned int tmpl_l2_len(const struct rnic_hdr_tmpl *t)
{
	return ETH_HLEN + ((le32_to_cpu(t->flags) & RNIC_TMPL_F_VLAN) ?
			   VLAN_HLEN : 0);
}

unsigned int rdma_tmpl_prio(const struct rnic_hdr_tmpl *t)
{
	if (le32_to_cpu(t->flags) & RNIC_TMPL_F_VLAN)
		return FIELD_GET(RNIC_VLAN_TCI_PCP, get_be16(t->hdr + 14));
	return t->prio;
}

/* The network part: version, protocol, fragment bits, UDP port. */
static int tmpl_check_l3(struct rdev *d, unsigned int net, u16 etype,
			 const u8 *l3)
{
	switch (net) {
	case RNIC_RX_CLASS_ROCE_V1:
		if (etype != ETH_P_ROCE_V1 || (l3[0] >> 4) != 6 ||
		    l3[6] != GRH_NXT_BTH)
			return -EINVAL;
		return 0;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		if (etype != ETH_P_IPV4 || l3[0] != 0x45 ||
		    get_be16(l3 + 6) != IPV4_DF || l3[9] != IPPROTO_UDP_NUM ||
		    get_be16(l3 + IPV4_HLEN + 2) != d->port.udp_port)
			return -EINVAL;
		return 0;
	case RNIC_RX_CLASS_ROCE_V2_IPV6:
		if (etype != ETH_P_IPV6 || (l3[0] >> 4) != 6 ||
		    l3[6] != IPPROTO_UDP_NUM ||
		    get_be16(l3 + IPV6_HLEN + 2) != d->port.udp_port)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

int rdma_tmpl_check(struct rdev *d, const struct rnic_hdr_tmpl *t, bool ah)
{
	u32 flags = le32_to_cpu(t->flags);
	u32 allowed = RNIC_TMPL_NET | RNIC_TMPL_F_VLAN |
		      (ah ? RNIC_TMPL_F_VALID : 0);
	bool vlan = flags & RNIC_TMPL_F_VLAN;
	unsigned int net = FIELD_GET(RNIC_TMPL_NET, flags);
	unsigned int l2 = ETH_HLEN + (vlan ? VLAN_HLEN : 0);

	if ((flags & ~allowed) || (ah && !(flags & RNIC_TMPL_F_VALID)) ||
	    (!ah && t->pdn) || !rnic_tmpl_hdr_len(net, vlan) ||
	    t->hdr_len != rnic_tmpl_hdr_len(net, vlan) ||
	    !rdma_all_zero(t->reserved, sizeof(t->reserved)) ||
	    (vlan ? t->prio : t->prio > RNIC_MAX_PRIO) ||
	    !rdma_all_zero(t->hdr + t->hdr_len, RNIC_TMPL_HDR_MAX - t->hdr_len))
		return -EINVAL;
	/* A unicast destination: multicast is not provided. */
	if (t->hdr[0] & 1)
		return -EINVAL;
	if (vlan && get_be16(t->hdr + 12) != ETH_P_8021Q)
		return -EINVAL;
	return tmpl_check_l3(d, net, get_be16(t->hdr + l2 - 2), t->hdr + l2);
}

u32 rdma_tmpl_max_payload(struct rdev *d, const struct rnic_hdr_tmpl *t,
			unsigned int ext_len)
{
	unsigned int l3 = t->hdr_len - tmpl_l2_len(t);
	unsigned int over = l3 + RDMA_BTH_LEN + ext_len + RNIC_ICRC_LEN;

	return d->port.mtu > over ? d->port.mtu - over : 0;
}

void rdma_bth_build(u8 *b, u8 opcode, bool se, u16 pkey, u32 dqpn, bool ackreq,
		  u32 psn)
{
	b[0] = opcode;
	b[1] = se ? 0x80 : 0;		/* M 0, pad set by rdma_tx_packet, TVer 0 */
	put_be16(b + 2, pkey);
	b[4] = 0;
	b[5] = dqpn >> 16;
	b[6] = dqpn >> 8;
	b[7] = dqpn;
	b[8] = ackreq ? 0x80 : 0;
	b[9] = psn >> 16;
	b[10] = psn >> 8;
	b[11] = psn;
}

/* The per-packet fields of the template part, for a frame of @len. */
static void fill_lengths(u8 *f, size_t len, unsigned int net, size_t l2)
{
	u8 *l3 = f + l2;
	size_t l3_len = len - l2;

	switch (net) {
	case RNIC_RX_CLASS_ROCE_V1:
		put_be16(l3 + 4, l3_len - IPV6_HLEN);
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		put_be16(l3 + 2, l3_len);
		put_be16(l3 + IPV4_HLEN + 4, l3_len - IPV4_HLEN);
		put_be16(l3 + IPV4_HLEN + 6, 0);
		pkt_ipv4_csum_fill(f, l2);
		break;
	default:
		put_be16(l3 + 4, l3_len - IPV6_HLEN);
		put_be16(l3 + IPV6_HLEN + 4, l3_len - IPV6_HLEN);
		put_be16(l3 + IPV6_HLEN + 6, 0);
		break;
	}
}

static void count_tx(struct rdev *d, unsigned int net, size_t len)
{
	if (net == RNIC_RX_CLASS_ROCE_V1) {
		RDEV_INC(d, tx_roce_v1_frames);
		RDEV_ADD(d, tx_roce_v1_bytes, len);
	} else {
		RDEV_INC(d, tx_roce_v2_frames);
		RDEV_ADD(d, tx_roce_v2_bytes, len);
	}
}

/*
 * Send a transport packet (BTH .. pad) behind template @t: lengths,
 * checksum and ICRC filled in; loopback if the destination is our MAC.
 */
int rdma_tx_raw(struct rdev *d, struct rdma_qp *qp, const struct rnic_hdr_tmpl *t,
	      const u8 *pkt, size_t plen)
{
	unsigned int net = rdma_tmpl_net(t), l2 = tmpl_l2_len(t);
	size_t len = t->hdr_len + plen + RNIC_ICRC_LEN;
	bool rc = qp && qp->type == RNIC_QPT_RC;
	struct pkt_info info = {};
	u8 *f = d->rdma->txbuf;

	if (rdev_pfc_paused_now(d, rdma_tmpl_prio(t)))
		return -EAGAIN;
	if (len - l2 > d->port.mtu || len > sizeof(d->rdma->txbuf)) {
		RDMA_INC(d, tx_drop_too_long);
		return -E2BIG;
	}
	/* Nothing is sent while the link is down; the transport goes on. */
	if (!d->link_up)
		return -ENETDOWN;
	memcpy(f, t->hdr, t->hdr_len);
	memcpy(f + t->hdr_len, pkt, plen);
	memset(f + t->hdr_len + plen, 0, RNIC_ICRC_LEN);
	fill_lengths(f, len, net, l2);
	info.cls = net == RNIC_RX_CLASS_ROCE_V1 ? PKT_CLASS_ROCE_V1 :
		   net == RNIC_RX_CLASS_ROCE_V2_IPV4 ? PKT_CLASS_ROCE_V2_IPV4 :
						       PKT_CLASS_ROCE_V2_IPV6;
	info.l3_off = l2;
	info.bth_off = t->hdr_len;
	info.icrc_off = len - RNIC_ICRC_LEN;
	pkt_icrc_fill(f, &info);

	/* (The RC engine keeps its own per-QP packet counters.) */
	if (qp && !rc) {
		RDMA_QP_INC(qp, tx_packets);
		RDMA_QP_ADD(qp, tx_bytes, plen);
	}
	if (!memcmp(f, d->port.mac, 6)) {
		RDMA_INC(d, loopback_packets);
		rdma_rx_loopback(d, f, len);
		return 0;
	}
	if (plat_wire_tx(d->p, f, len) == -ENETDOWN)
		return -ENETDOWN;	/* lost, as on a link that just went down */
	count_tx(d, net, len);
	return 0;
}

int rdma_tx_packet(struct rdev *d, struct rdma_qp *qp,
		 const struct rnic_hdr_tmpl *t, u8 *hdrs, size_t hlen,
		 const void *payload, size_t plen)
{
	u8 pkt[RDMA_BTH_LEN + RDMA_RETH_LEN + RDMA_IMM_LEN + 4096 + 3];
	size_t pad = (4 - (plen & 3)) & 3;
	int rc;

	if (hlen + plen + pad > sizeof(pkt))
		return -E2BIG;
	hdrs[1] = (hdrs[1] & ~0x30) | (u8)(pad << 4);
	memcpy(pkt, hdrs, hlen);
	if (plen)
		memcpy(pkt + hlen, payload, plen);
	memset(pkt + hlen + plen, 0, pad);
	rc = rdma_tx_raw(d, qp, t, pkt, hlen + plen + pad);
	return rc == -ENETDOWN ? 0 : rc;
}
