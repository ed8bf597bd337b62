/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCE frame headers: the opcode table, building and parsing RoCE v1
 * (Ethernet + GRH) and RoCE v2 (Ethernet + IPv4/IPv6 + UDP) headers with
 * the IBA transport headers (BTH and its extensions), PSN arithmetic, and
 * the software ICRC. Pure functions on buffers: no device, no QP state.
 */
#ifndef _RNIC_HDR_H_
#define _RNIC_HDR_H_

#include <linux/types.h>
#include <rdma/ib_verbs.h>

/* Header sizes (IBA vol 1, chapter 9; RoCE annexes A16, A17) */
#define RNIC_ETH_HLEN		14
#define RNIC_VLAN_HLEN		4
#define RNIC_GRH_LEN		40
#define RNIC_IPV4_LEN		20
#define RNIC_IPV6_LEN		40
#define RNIC_UDP_LEN		8
#define RNIC_BTH_LEN		12
#define RNIC_RETH_LEN		16
#define RNIC_AETH_LEN		4
#define RNIC_ATMETH_LEN		28
#define RNIC_ATMACK_LEN		8
#define RNIC_IMMDT_LEN		4
#define RNIC_IETH_LEN		4
#define RNIC_DETH_LEN		8
#define RNIC_ICRC_SIZE		4
#define RNIC_GRH_NEXT_HDR_BTH	0x1b
#define RNIC_ETH_P_ROCE_V1	0x8915

/* Largest header rnic builds: Ethernet + VLAN + IPv6 + UDP + BTH + AtomicETH */
#define RNIC_MAX_HDR_LEN	(RNIC_ETH_HLEN + RNIC_VLAN_HLEN + RNIC_IPV6_LEN + \
				 RNIC_UDP_LEN + RNIC_BTH_LEN + RNIC_ATMETH_LEN)

/* What an opcode carries (struct rnic_opcode_info.flags) */
#define RNIC_OPF_RETH		BIT(0)
#define RNIC_OPF_AETH		BIT(1)
#define RNIC_OPF_ATMETH		BIT(2)
#define RNIC_OPF_ATMACK		BIT(3)
#define RNIC_OPF_IMMDT		BIT(4)
#define RNIC_OPF_IETH		BIT(5)
#define RNIC_OPF_DETH		BIT(6)
#define RNIC_OPF_PAYLOAD	BIT(7)	/* carries message data */
#define RNIC_OPF_REQ		BIT(8)	/* sent by a requester */
#define RNIC_OPF_RESP		BIT(9)	/* sent by a responder */
#define RNIC_OPF_FIRST		BIT(10)
#define RNIC_OPF_MIDDLE		BIT(11)
#define RNIC_OPF_LAST		BIT(12)
#define RNIC_OPF_ONLY		(RNIC_OPF_FIRST | RNIC_OPF_LAST)
#define RNIC_OPF_SEND		BIT(13)
#define RNIC_OPF_WRITE		BIT(14)
#define RNIC_OPF_READ		BIT(15)
#define RNIC_OPF_ATOMIC		BIT(16)

/**
 * struct rnic_opcode_info - what the transport needs to know of an opcode
 * @name: for debug messages
 * @flags: RNIC_OPF_*
 * @hdr_len: BTH plus every extension header the opcode carries
 */
struct rnic_opcode_info {
	const char *name;
	u32 flags;
	u8 hdr_len;
};

const struct rnic_opcode_info *rnic_opcode_info(u8 opcode);

/* How the frame is carried on the wire */
enum rnic_net_type {
	RNIC_NET_ROCE_V1,	/* Ethertype 0x8915 + GRH */
	RNIC_NET_ROCE_V2_IPV4,	/* IPv4 + UDP */
	RNIC_NET_ROCE_V2_IPV6,	/* IPv6 + UDP */
};

/**
 * struct rnic_pkt - every header field of one RoCE frame
 *
 * Filled by the transport before rnic_hdr_build(), or by rnic_hdr_parse()
 * from a received frame. Multi-byte fields are in CPU order except @imm
 * (carried opaque, as the verbs API hands it over) and the GIDs.
 */
struct rnic_pkt {
	/* L2 */
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	bool vlan;
	u16 vlan_tci;
	/* L3/L4 */
	enum rnic_net_type net;
	union ib_gid sgid;	/* IPv4 as an IPv4-mapped IPv6 address */
	union ib_gid dgid;
	u8 tclass;		/* GRH traffic class, IPv6 TC, IPv4 TOS */
	u32 flow_label;
	u8 hop_limit;		/* also the IPv4 TTL */
	u16 udp_sport;
	u16 udp_dport;
	/* BTH */
	u8 opcode;
	bool se;
	bool mig;
	u8 pad;
	u16 pkey;
	bool fecn;
	bool becn;
	u32 dqpn;
	bool ack_req;
	u32 psn;
	/* extension headers, as the opcode has them */
	u64 va;			/* RETH, AtomicETH */
	u32 rkey;		/* RETH, AtomicETH */
	u32 dma_len;		/* RETH */
	u8 syndrome;		/* AETH */
	u32 msn;		/* AETH */
	u64 swap_add;		/* AtomicETH */
	u64 compare;		/* AtomicETH */
	u64 atomic_orig;	/* AtomicAckETH */
	__be32 imm;		/* ImmDt */
	u32 inv_rkey;		/* IETH */
	u32 qkey;		/* DETH */
	u32 sqpn;		/* DETH */
	/* set by rnic_hdr_parse(): where the message data is */
	u32 l3_off;
	u32 bth_off;
	u32 payload_off;
	u32 payload_len;
};

/* Why rnic_hdr_parse() refused a frame (for the drop counters) */
enum rnic_parse_err {
	RNIC_PARSE_OK = 0,
	RNIC_PARSE_TRUNCATED,		/* shorter than its headers say */
	RNIC_PARSE_NOT_ROCE,		/* wrong Ethertype/protocol/port */
	RNIC_PARSE_BAD_L3,		/* bad IP/GRH version or length */
	RNIC_PARSE_BAD_OPCODE,		/* opcode rnic does not implement */
	RNIC_PARSE_BAD_TVER,		/* BTH transport version not 0 */
	RNIC_PARSE_BAD_LENGTH,		/* pad/payload inconsistent */
	RNIC_PARSE_NUM,
};

int rnic_hdr_len(const struct rnic_pkt *pkt);
int rnic_hdr_build(const struct rnic_pkt *pkt, u32 payload_len, u8 *buf,
		   size_t buf_len);
enum rnic_parse_err rnic_hdr_parse(const u8 *frame, u32 len, u16 udp_port,
				   struct rnic_pkt *pkt);
const char *rnic_parse_err_str(enum rnic_parse_err err);

u32 rnic_icrc(const u8 *frame, const struct rnic_pkt *pkt);
bool rnic_icrc_check(const u8 *frame, const struct rnic_pkt *pkt);

/* PSNs are 24-bit serial numbers (IBA 9.7.1). */
#define RNIC_PSN_MASK		0xffffff

static inline u32 rnic_psn_add(u32 psn, u32 n)
{
	return (psn + n) & RNIC_PSN_MASK;
}

/**
 * rnic_psn_diff() - signed distance from @b to @a in PSN space
 * @a: a PSN
 * @b: a PSN
 *
 * Return: a - b as a value in [-2^23, 2^23): positive if @a is after @b.
 */
static inline s32 rnic_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/**
 * rnic_psn_in_window() - whether @psn lies in [@start, @start + @len)
 * @psn: the PSN to test
 * @start: first PSN of the window
 * @len: window length, at most 2^23
 */
static inline bool rnic_psn_in_window(u32 psn, u32 start, u32 len)
{
	return ((psn - start) & RNIC_PSN_MASK) < len;
}

#endif /* _RNIC_HDR_H_ */
