// SPDX-License-Identifier: GPL-2.0
/* Frame builders for the unit tests (see frames.h). */
#include <string.h>

#include "frames.h"
#include "pkt/pkt.h"

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
	return p + 2;
}

static uint8_t *put_eth(uint8_t *p, uint16_t type, int vlan_tci)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	p += 12;
	if (vlan_tci >= 0) {
		p = put16(p, 0x8100);
		p = put16(p, (uint16_t)vlan_tci);
	}
	return put16(p, type);
}

static uint8_t *put_bth(uint8_t *p, size_t payload_len)
{
	*p++ = 0x04;				/* RC SEND ONLY */
	*p++ = ((-payload_len) & 3) << 4;	/* pad count */
	p = put16(p, 0xffff);
	*p++ = 0;
	*p++ = 0x00;
	*p++ = 0x12;
	*p++ = 0x34;				/* QPN 0x1234 */
	*p++ = 0x80;				/* ack request */
	*p++ = 0x00;
	*p++ = 0x00;
	*p++ = 0x2a;				/* PSN 42 */
	return p;
}

static uint8_t *put_ipv6ish(uint8_t *p, uint16_t plen, uint8_t nxt)
{
	unsigned int i;

	*p++ = 0x60 | 0x0a;		/* version 6, some traffic class */
	*p++ = 0x51;
	*p++ = 0x23;
	*p++ = 0x45;
	p = put16(p, plen);
	*p++ = nxt;
	*p++ = 64;
	for (i = 0; i < 32; i++)
		*p++ = (uint8_t)(0xfe + i);
	return p;
}

size_t tf_roce(uint8_t *buf, enum tf_kind kind, size_t payload_len,
	       int vlan_tci, uint16_t udp_dport)
{
	size_t padded = (payload_len + 3) & ~(size_t)3, i;
	size_t roce_len = 12 + padded + 4;
	struct pkt_info info;
	uint8_t *p = buf, *l3;

	switch (kind) {
	case TF_V1:
		p = put_eth(p, PKT_ETH_P_ROCE_V1, vlan_tci);
		p = put_ipv6ish(p, (uint16_t)roce_len, 0x1b);
		break;
	case TF_V2_IPV4:
		p = put_eth(p, 0x0800, vlan_tci);
		l3 = p;
		*p++ = 0x45;
		*p++ = 0x02;				/* ECN */
		p = put16(p, (uint16_t)(20 + 8 + roce_len));
		p = put16(p, 0x1234);
		p = put16(p, 0x4000);			/* DF */
		*p++ = 64;
		*p++ = 17;
		p = put16(p, 0);
		memcpy(p, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		p += 8;
		(void)l3;
		goto udp;
	case TF_V2_IPV6:
		p = put_eth(p, 0x86dd, vlan_tci);
		p = put_ipv6ish(p, (uint16_t)(8 + roce_len), 17);
udp:
		p = put16(p, 49152);
		p = put16(p, udp_dport);
		p = put16(p, (uint16_t)(8 + roce_len));
		p = put16(p, 0);
		break;
	}
	p = put_bth(p, payload_len);
	for (i = 0; i < padded; i++)
		*p++ = i < payload_len ? (uint8_t)(i * 7 + 1) : 0;
	memset(p, 0, 4);
	p += 4;
	if (pkt_classify(buf, (size_t)(p - buf), udp_dport, &info) !=
	    PKT_CLASS_ETH) {
		if (info.cls == PKT_CLASS_ROCE_V2_IPV4)
			pkt_ipv4_csum_fill(buf, info.l3_off);
		pkt_icrc_fill(buf, &info);
	}
	return (size_t)(p - buf);
}

size_t tf_arp(uint8_t *buf)
{
	uint8_t *p = put_eth(buf, 0x0806, -1);

	memset(p, 0, 28);
	put16(p, 1);
	put16(p + 2, 0x0800);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, 1);
	return (size_t)(p + 28 - buf);
}
