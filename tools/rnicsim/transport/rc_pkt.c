// SPDX-License-Identifier: GPL-2.0
/*
 * IB transport headers of RC packets (BTH, RETH, AETH, ImmDt,
 * IETH, AtomicETH, AtomicAckETH), built and parsed. Pure functions: the
 * device may use rc_pkt_parse() for its own RX validation, and the tests
 * use both to craft hostile packets.
 */
#include <errno.h>
#include <string.h>

#include "transport/rc.h"

/* Extension headers per opcode (IB spec vol. 1, table 38), -1: not RC */
static const s8 rc_masks[0x18] = {
	[RC_OP_SEND_FIRST]		= 0,
	[RC_OP_SEND_MIDDLE]		= 0,
	[RC_OP_SEND_LAST]		= 0,
	[RC_OP_SEND_LAST_IMM]		= RC_HDR_IMMDT,
	[RC_OP_SEND_ONLY]		= 0,
	[RC_OP_SEND_ONLY_IMM]		= RC_HDR_IMMDT,
	[RC_OP_WRITE_FIRST]		= RC_HDR_RETH,
	[RC_OP_WRITE_MIDDLE]		= 0,
	[RC_OP_WRITE_LAST]		= 0,
	[RC_OP_WRITE_LAST_IMM]		= RC_HDR_IMMDT,
	[RC_OP_WRITE_ONLY]		= RC_HDR_RETH,
	[RC_OP_WRITE_ONLY_IMM]		= RC_HDR_RETH | RC_HDR_IMMDT,
	[RC_OP_READ_REQ]		= RC_HDR_RETH,
	[RC_OP_READ_RESP_FIRST]		= RC_HDR_AETH,
	[RC_OP_READ_RESP_MIDDLE]	= 0,
	[RC_OP_READ_RESP_LAST]		= RC_HDR_AETH,
	[RC_OP_READ_RESP_ONLY]		= RC_HDR_AETH,
	[RC_OP_ACK]			= RC_HDR_AETH,
	[RC_OP_ATOMIC_ACK]		= RC_HDR_AETH | RC_HDR_ATOMICACKETH,
	[RC_OP_CMP_SWAP]		= RC_HDR_ATOMICETH,
	[RC_OP_FETCH_ADD]		= RC_HDR_ATOMICETH,
	[0x15]				= -1,
	[RC_OP_SEND_LAST_INV]		= RC_HDR_IETH,
	[RC_OP_SEND_ONLY_INV]		= RC_HDR_IETH,
};

int rc_hdr_mask(u8 opcode)
{
	if (opcode >= ARRAY_SIZE(rc_masks))
		return -1;
	return rc_masks[opcode];
}

static unsigned int rc_mask_len(unsigned int mask)
{
	unsigned int n = RC_BTH_LEN;

	if (mask & RC_HDR_RETH)
		n += RC_RETH_LEN;
	if (mask & RC_HDR_AETH)
		n += RC_AETH_LEN;
	if (mask & RC_HDR_IMMDT)
		n += RC_IMMDT_LEN;
	if (mask & RC_HDR_IETH)
		n += RC_IETH_LEN;
	if (mask & RC_HDR_ATOMICETH)
		n += RC_ATOMICETH_LEN;
	if (mask & RC_HDR_ATOMICACKETH)
		n += RC_ATOMICACKETH_LEN;
	return n;
}

unsigned int rc_hdr_len(u8 opcode)
{
	int mask = rc_hdr_mask(opcode);

	return mask < 0 ? 0 : rc_mask_len(mask);
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be24(u8 *p, u32 v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static void put_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put_be64(u8 *p, u64 v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, (u32)v);
}

static u16 get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get_be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u64 get_be64(const u8 *p)
{
	return (u64)get_be32(p) << 32 | get_be32(p + 4);
}

size_t rc_pkt_build(u8 *buf, const struct rc_hdr *h, const void *payload,
		    u32 len)
{
	int mask = rc_hdr_mask(h->opcode);
	unsigned int pad = (4 - (len & 3)) & 3;
	u8 *p = buf;

	if (mask < 0)
		mask = 0;
	/* BTH: opcode; SE, M 0, PadCnt, TVer 0; P_Key; QPN; AckReq, PSN */
	p[0] = h->opcode;
	p[1] = (h->se ? 0x80 : 0) | pad << 4;
	put_be16(p + 2, h->pkey);
	p[4] = 0;
	put_be24(p + 5, h->dest_qpn & RC_PSN_MASK);
	p[8] = h->ackreq ? 0x80 : 0;
	put_be24(p + 9, h->psn & RC_PSN_MASK);
	p += RC_BTH_LEN;
	if (mask & RC_HDR_RETH) {
		put_be64(p, h->va);
		put_be32(p + 8, h->rkey);
		put_be32(p + 12, h->dma_len);
		p += RC_RETH_LEN;
	}
	if (mask & RC_HDR_ATOMICETH) {
		put_be64(p, h->va);
		put_be32(p + 8, h->rkey);
		put_be64(p + 12, h->swap_add);
		put_be64(p + 20, h->compare);
		p += RC_ATOMICETH_LEN;
	}
	if (mask & RC_HDR_AETH) {
		p[0] = h->syndrome;
		put_be24(p + 1, h->msn & RC_PSN_MASK);
		p += RC_AETH_LEN;
	}
	if (mask & RC_HDR_ATOMICACKETH) {
		put_be64(p, h->orig);
		p += RC_ATOMICACKETH_LEN;
	}
	if (mask & RC_HDR_IMMDT) {
		memcpy(p, &h->imm, RC_IMMDT_LEN);
		p += RC_IMMDT_LEN;
	}
	if (mask & RC_HDR_IETH) {
		put_be32(p, h->inv_key);
		p += RC_IETH_LEN;
	}
	if (payload && len)
		memcpy(p, payload, len);
	p += len;
	/* The pad bytes are zero (IB 9.2.1.6). */
	memset(p, 0, pad);
	p += pad;
	return p - buf;
}

int rc_pkt_parse(const u8 *pkt, size_t len, struct rc_hdr *h)
{
	unsigned int hlen;
	const u8 *p;
	int mask;

	memset(h, 0, sizeof(*h));
	if (len < RC_BTH_LEN)
		return -EINVAL;
	h->opcode = pkt[0];
	h->se = pkt[1] & 0x80;
	h->pad = (pkt[1] >> 4) & 3;
	h->pkey = get_be16(pkt + 2);
	h->dest_qpn = get_be24(pkt + 5);
	h->ackreq = pkt[8] & 0x80;
	h->psn = get_be24(pkt + 9);
	mask = rc_hdr_mask(h->opcode);
	/* TVer must be 0; the opcode must be an RC one. */
	if ((pkt[1] & 0x0f) || mask < 0)
		return -EINVAL;
	h->mask = mask;
	hlen = rc_mask_len(mask);
	/* Headers are whole words; payload and pad must be too. */
	if (len < hlen + h->pad || len & 3)
		return -EINVAL;
	p = pkt + RC_BTH_LEN;
	if (mask & RC_HDR_RETH) {
		h->va = get_be64(p);
		h->rkey = get_be32(p + 8);
		h->dma_len = get_be32(p + 12);
		p += RC_RETH_LEN;
	}
	if (mask & RC_HDR_ATOMICETH) {
		h->va = get_be64(p);
		h->rkey = get_be32(p + 8);
		h->swap_add = get_be64(p + 12);
		h->compare = get_be64(p + 20);
		p += RC_ATOMICETH_LEN;
	}
	if (mask & RC_HDR_AETH) {
		h->syndrome = p[0];
		h->msn = get_be24(p + 1);
		p += RC_AETH_LEN;
	}
	if (mask & RC_HDR_ATOMICACKETH) {
		h->orig = get_be64(p);
		p += RC_ATOMICACKETH_LEN;
	}
	if (mask & RC_HDR_IMMDT) {
		memcpy(&h->imm, p, RC_IMMDT_LEN);
		p += RC_IMMDT_LEN;
	}
	if (mask & RC_HDR_IETH) {
		h->inv_key = get_be32(p);
		p += RC_IETH_LEN;
	}
	h->payload = p;
	h->payload_len = len - hlen - h->pad;
	return 0;
}
