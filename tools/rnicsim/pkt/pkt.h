/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame parsing shared by the device model: RX classification, ICRC,
 * VLAN tags and 802.1Qbb PFC frames. Pure functions, no state, so unit
 * tests and the benchmark call them directly.
 */
#ifndef RNICSIM_PKT_H
#define RNICSIM_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKT_ETH_P_ROCE_V1	0x8915
#define PKT_ETH_P_PFC		0x8808	/* MAC control, opcode 0x0101 */
#define PKT_ROCE_V2_PORT	4791

enum pkt_class {
	PKT_CLASS_ETH = 0,	/* anything else: Ethernet RX queue */
	PKT_CLASS_ROCE_V1,	/* Ethertype 0x8915: GRH + BTH */
	PKT_CLASS_ROCE_V2_IPV4,	/* IPv4 + UDP dport == configured port */
	PKT_CLASS_ROCE_V2_IPV6,	/* IPv6 + UDP dport == configured port */
	PKT_CLASS_PFC,		/* MAC control PFC frame: consumed by the MAC */
	PKT_CLASS_MALFORMED,	/* looked like RoCE but is truncated/invalid */
};

struct pkt_info {
	enum pkt_class cls;
	bool vlan;		/* one 802.1Q tag present */
	uint16_t vlan_tci;
	size_t l3_off;		/* GRH (v1) or IP header (v2) */
	size_t bth_off;		/* base transport header (RoCE classes) */
	size_t icrc_off;	/* last 4 bytes of the RoCE payload */
};

/* Classify a frame as the RX classifier does; never reads past @len. */
enum pkt_class pkt_classify(const uint8_t *frame, size_t len,
			    uint16_t roce_udp_port, struct pkt_info *info);

/*
 * ICRC of a classified RoCE frame, per the IB spec annex A16 (v1) and
 * A17 (v2): CRC32 over 64 bits of 0xff, then L3 header onward with the
 * variant fields masked to ones, through the end of the payload (excluding
 * the ICRC itself). Returned in the byte order it is carried on the wire
 * (store with a plain little-endian 32-bit write).
 */
uint32_t pkt_icrc(const uint8_t *frame, const struct pkt_info *info);

/* Check / fill the trailing ICRC in place. */
bool pkt_icrc_ok(const uint8_t *frame, const struct pkt_info *info);
void pkt_icrc_fill(uint8_t *frame, const struct pkt_info *info);

/* PFC: parse a pause frame; fills per-priority quanta for enabled bits. */
bool pkt_pfc_parse(const uint8_t *frame, size_t len, uint8_t *enable_mask,
		   uint16_t quanta[8]);
/* Build a 60-byte PFC frame (no FCS) from @src_mac; returns its length. */
size_t pkt_pfc_build(uint8_t *buf, const uint8_t src_mac[6],
		     uint8_t enable_mask, const uint16_t quanta[8]);

/* Insert an 802.1Q tag after the MACs; @buf must have 4 bytes spare. */
size_t pkt_vlan_insert(uint8_t *buf, size_t len, uint16_t tci);

/* Recompute the IPv4 header checksum of the frame's IPv4 header. */
void pkt_ipv4_csum_fill(uint8_t *frame, size_t l3_off);

#endif /* RNICSIM_PKT_H */
