// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim RDMA engine, receive side: RoCE frames wait in the
 * device's receive buffer, then go through the checks of
 * hardware-transport.rst "RX validation", in order, each failure dropped
 * and counted without touching any QP state, and reach the transport of
 * their QP.
 */
#include <string.h>

#include <errno.h>

#include "rdma/rdma.h"

#define ETH_ALEN		6
#define IPV4_HLEN		20
#define IPV6_HLEN		40
#define UDP_HLEN		8
#define ETH_P_ROCE_V1		0x8915

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

/* ---- malformed frames (the receive buffer is rdma_base.c's) ---- */

static bool is_v1(const u8 *frame, size_t len)
{
	u16 type = get_be16(frame + 12);

	if (type == 0x8100 && len >= 18)
		type = get_be16(frame + 16);
	return type == ETH_P_ROCE_V1;
}

static void count_malformed(struct rdev *d, bool v1)
{
	if (v1)
		RDMA_INC(d, rx_drop_malformed_v1);
	else
		RDMA_INC(d, rx_drop_malformed_v2);
}

void rdma_rx_malformed(struct rdev *d, const u8 *frame, size_t len)
{
	u16 type = get_be16(frame + 12);

	if (type == 0x8100 && len >= 18)
		type = get_be16(frame + 16);
	/* Only what claimed to be RoCE: not a short MAC control frame. */
	if (type == ETH_P_ROCE_V1 || type == 0x0800 || type == 0x86dd)
		count_malformed(d, is_v1(frame, len));
}

/* ---- BTH opcodes: extension headers each carries ---- */

enum {
	X_RETH = 1, X_IMM = 2, X_IETH = 4, X_AETH = 8, X_ATOMIC = 16,
	X_ATOMICACK = 32, X_DETH = 64,
};

/* Extension headers of an opcode; -1 for an opcode the device does not know */
static int op_ext(u8 op)
{
	switch (op) {
	case RDMA_OP_RC_SEND_FIRST:
	case RDMA_OP_RC_SEND_MIDDLE:
	case RDMA_OP_RC_SEND_LAST:
	case RDMA_OP_RC_SEND_ONLY:
	case RDMA_OP_RC_WRITE_MIDDLE:
	case RDMA_OP_RC_WRITE_LAST:
	case RDMA_OP_RC_READ_RESP_MIDDLE:
		return 0;
	case RDMA_OP_RC_SEND_LAST_IMM:
	case RDMA_OP_RC_SEND_ONLY_IMM:
	case RDMA_OP_RC_WRITE_LAST_IMM:
		return X_IMM;
	case RDMA_OP_RC_WRITE_FIRST:
	case RDMA_OP_RC_WRITE_ONLY:
	case RDMA_OP_RC_READ_REQ:
		return X_RETH;
	case RDMA_OP_RC_WRITE_ONLY_IMM:
		return X_RETH | X_IMM;
	case RDMA_OP_RC_READ_RESP_FIRST:
	case RDMA_OP_RC_READ_RESP_LAST:
	case RDMA_OP_RC_READ_RESP_ONLY:
	case RDMA_OP_RC_ACK:
		return X_AETH;
	case RDMA_OP_RC_ATOMIC_ACK:
		return X_AETH | X_ATOMICACK;
	case RDMA_OP_RC_CMP_SWAP:
	case RDMA_OP_RC_FETCH_ADD:
		return X_ATOMIC;
	case RDMA_OP_RC_SEND_LAST_INV:
	case RDMA_OP_RC_SEND_ONLY_INV:
		return X_IETH;
	case RDMA_OP_UD_SEND_ONLY:
		return X_DETH;
	case RDMA_OP_UD_SEND_ONLY_IMM:
		return X_DETH | X_IMM;
	default:
		return -1;
	}
}

static unsigned int ext_len(int ext)
{
	return ((ext & X_RETH) ? RDMA_RETH_LEN : 0) +
	       ((ext & X_IMM) ? RDMA_IMM_LEN : 0) +
	       ((ext & X_IETH) ? RDMA_IETH_LEN : 0) +
	       ((ext & X_AETH) ? RDMA_AETH_LEN : 0) +
	       ((ext & X_ATOMIC) ? RDMA_ATOMICETH_LEN : 0) +
	       ((ext & X_ATOMICACK) ? RDMA_ATOMICACK_LEN : 0) +
	       ((ext & X_DETH) ? RDMA_DETH_LEN : 0);
}

/* Point the packet's fields at its extension headers, in wire order. */
static void parse_ext(struct rdma_pkt *pkt, const u8 *p, int ext)
{
	if (ext & X_DETH) {
		pkt->qkey = get_be32(p);
		pkt->sqpn = get_be24(p + 5);
		p += RDMA_DETH_LEN;
	}
	if (ext & X_RETH) {
		pkt->reth = p;
		p += RDMA_RETH_LEN;
	}
	if (ext & X_AETH) {
		pkt->aeth = p;
		p += RDMA_AETH_LEN;
	}
	if (ext & X_ATOMICACK) {
		pkt->atomicack = p;
		p += RDMA_ATOMICACK_LEN;
	}
	if (ext & X_ATOMIC) {
		pkt->atomiceth = p;
		p += RDMA_ATOMICETH_LEN;
	}
	if (ext & X_IMM) {
		memcpy(&pkt->imm, p, 4);
		p += RDMA_IMM_LEN;
	}
	if (ext & X_IETH) {
		pkt->ieth = get_be32(p);
		p += RDMA_IETH_LEN;
	}
	pkt->payload = p;
}

/* ---- the checks ---- */

/* Check 1 beyond the classifier: IPv4 without options, right checksum */
static bool ipv4_ok(const u8 *h)
{
	u32 sum = 0;
	unsigned int i;

	if (h[0] != 0x45)
		return false;
	for (i = 0; i < IPV4_HLEN; i += 2)
		sum += get_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Source and destination as GIDs (IPv4 as ::ffff:a.b.c.d) */
static void addresses(struct rdma_pkt *pkt)
{
	const u8 *l3 = pkt->frame + pkt->l3_off;

	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		memset(pkt->sgid_buf, 0, 10);
		pkt->sgid_buf[10] = pkt->sgid_buf[11] = 0xff;
		memcpy(pkt->sgid_buf + 12, l3 + 12, 4);
		memcpy(pkt->dgid_buf, pkt->sgid_buf, 12);
		memcpy(pkt->dgid_buf + 12, l3 + 16, 4);
		pkt->sgid = pkt->sgid_buf;
		pkt->dgid = pkt->dgid_buf;
	} else {
		/* The GRH and the IPv6 header put them at the same place. */
		pkt->sgid = l3 + 8;
		pkt->dgid = l3 + 24;
	}
}

static bool is_multicast(const struct rdma_pkt *pkt)
{
	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4)
		return (pkt->dgid[12] & 0xf0) == 0xe0;
	return pkt->dgid[0] == 0xff;
}

static bool ecn_ce(const struct rdma_pkt *pkt)
{
	const u8 *l3 = pkt->frame + pkt->l3_off;

	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4)
		return (l3[1] & 3) == 3;
	return ((l3[1] >> 4) & 3) == 3;	/* low bits of the traffic class */
}

/* Headers, ICRC, destination (checks 1-4). false: dropped, counted. */
static bool check_frame(struct rdev *d, struct rdma_pkt *pkt,
			const struct pkt_info *info)
{
	bool v1 = pkt->net == RNIC_RX_CLASS_ROCE_V1;

	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4 &&
	    !ipv4_ok(pkt->frame + pkt->l3_off)) {
		RDEV_INC(d, rx_drop_malformed);
		count_malformed(d, false);
		return false;
	}
	if (!pkt_icrc_ok(pkt->frame, info)) {
		RDEV_INC(d, rx_icrc_errors);
		if (v1)
			RDMA_INC(d, rx_icrc_errors_v1);
		else
			RDMA_INC(d, rx_icrc_errors_v2);
		return false;
	}
	addresses(pkt);
	if (is_multicast(pkt)) {
		RDMA_INC(d, rx_drop_multicast);
		return false;
	}
	if (!rdma_gid_is_ours(d, pkt->net, pkt->dgid, pkt->vlan,
			    FIELD_GET(RNIC_VLAN_TCI_VID, pkt->vlan_tci))) {
		if (v1)
			RDMA_INC(d, rx_drop_not_ours_v1);
		else
			RDMA_INC(d, rx_drop_not_ours_v2);
		return false;
	}
	if (ecn_ce(pkt))
		RDMA_INC(d, rx_ecn_ce);
	return true;
}

/*
 * BTH (check 5): fills the BTH fields; *hdr_ok tells whether the
 * extension headers fit (check 12, counted later, in its order).
 */
static bool check_bth(struct rdev *d, struct rdma_pkt *pkt,
		      const struct pkt_info *info, bool *hdr_ok)
{
	const u8 *b = pkt->frame + info->bth_off;
	size_t room = info->icrc_off - info->bth_off - RDMA_BTH_LEN;
	int ext = op_ext(b[0]);

	pkt->opcode = b[0];
	pkt->se = b[1] & 0x80;
	pkt->mig = b[1] & 0x40;
	pkt->pad = (b[1] >> 4) & 3;
	pkt->pkey = get_be16(b + 2);
	pkt->dqpn = get_be24(b + 5);
	pkt->ackreq = b[8] & 0x80;
	pkt->psn = get_be24(b + 9);
	if ((b[1] & 0x0f) || ext < 0) {
		RDMA_INC(d, rx_drop_bad_bth);
		return false;
	}
	*hdr_ok = room >= ext_len(ext);
	if (*hdr_ok) {
		size_t rest = room - ext_len(ext);

		if (pkt->pad > rest) {
			RDMA_INC(d, rx_drop_bad_bth);
			return false;
		}
		parse_ext(pkt, b + RDMA_BTH_LEN, ext);
		pkt->paylen = rest - pkt->pad;
		pkt->bth = b;
		pkt->tlen = info->icrc_off - info->bth_off;
	}
	return true;
}

static bool is_rc_opcode(u8 op)
{
	return op < 0x20;
}

/* The P_Key (check 9); GSI accepts any entry of the table. */
static bool check_pkey(struct rdev *d, struct rdma_qp *qp, struct rdma_pkt *pkt)
{
	unsigned int i;

	if (qp->type != RNIC_QPT_GSI) {
		pkt->pkey_index = qp->pkey_index;
		return rdma_pkey_match(pkt->pkey, d->rdma->pkey[qp->pkey_index]);
	}
	for (i = 0; i < RDMA_PKEY_TBL_LEN; i++) {
		if (rdma_pkey_match(pkt->pkey, d->rdma->pkey[i])) {
			pkt->pkey_index = i;
			return true;
		}
	}
	return false;
}

/* RC: the sender is the peer the QP's path names (check 10). */
static bool from_peer(struct rdma_qp *qp, const struct rdma_pkt *pkt)
{
	const struct rnic_hdr_tmpl *t = &qp->path;
	unsigned int l2 = 14 + ((le32_to_cpu(t->flags) & RNIC_TMPL_F_VLAN) ?
				4 : 0);

	if (!qp->has_path || rdma_tmpl_net(t) != pkt->net)
		return false;
	if (pkt->net == RNIC_RX_CLASS_ROCE_V2_IPV4)
		return !memcmp(t->hdr + l2 + 16, pkt->sgid + 12, 4);
	return !memcmp(t->hdr + l2 + 24, pkt->sgid, 16);
}

/* Checks 6-12 against the destination QP; NULL: dropped, counted. */
static struct rdma_qp *check_qp(struct rdev *d, struct rdma_pkt *pkt,
			      bool hdr_ok)
{
	struct rdma_qp *qp = rdma_qp_get(d, pkt->dqpn);
	bool rc;

	if (!qp) {
		RDMA_INC(d, rx_drop_unknown_qpn);
		return NULL;
	}
	rc = qp->type == RNIC_QPT_RC;
	if (rc != is_rc_opcode(pkt->opcode)) {
		RDMA_INC(d, rx_drop_qp_type);
		return NULL;
	}
	if (qp->state != RNIC_QPS_RTR && qp->state != RNIC_QPS_RTS &&
	    qp->state != RNIC_QPS_SQD) {
		RDMA_INC(d, rx_drop_qp_state);
		return NULL;
	}
	if (!check_pkey(d, qp, pkt)) {
		RDMA_INC(d, rx_drop_bad_pkey);
		return NULL;
	}
	if (rc && !from_peer(qp, pkt)) {
		RDMA_INC(d, rx_drop_bad_src);
		return NULL;
	}
	if (!hdr_ok) {
		RDMA_INC(d, rx_drop_bad_length);
		return NULL;
	}
	if (!rc && pkt->qkey != (qp->type == RNIC_QPT_GSI ? RNIC_QKEY_GSI :
							    qp->qkey)) {
		RDMA_INC(d, rx_drop_bad_qkey);
		return NULL;
	}
	return qp;
}

void rdma_rx_process(struct rdev *d, const u8 *frame, size_t len)
{
	struct rdma_pkt pkt = { .frame = frame, .len = len };
	struct pkt_info info;
	enum pkt_class cls;
	struct rdma_qp *qp;
	bool hdr_ok = false;

	cls = pkt_classify(frame, len, d->port.udp_port, &info);
	switch (cls) {
	case PKT_CLASS_ROCE_V1:
		pkt.net = RNIC_RX_CLASS_ROCE_V1;
		break;
	case PKT_CLASS_ROCE_V2_IPV4:
		pkt.net = RNIC_RX_CLASS_ROCE_V2_IPV4;
		break;
	case PKT_CLASS_ROCE_V2_IPV6:
		pkt.net = RNIC_RX_CLASS_ROCE_V2_IPV6;
		break;
	default:
		/* A loopback packet the classifier refuses: our own bug. */
		RDEV_INC(d, rx_drop_malformed);
		count_malformed(d, is_v1(frame, len));
		return;
	}
	pkt.vlan = info.vlan;
	pkt.vlan_tci = info.vlan_tci;
	pkt.l3_off = info.l3_off;
	pkt.smac = frame + ETH_ALEN;
	if (!check_frame(d, &pkt, &info) ||
	    !check_bth(d, &pkt, &info, &hdr_ok))
		return;
	qp = check_qp(d, &pkt, hdr_ok);
	if (!qp)
		return;
	if (qp->type == RNIC_QPT_RC) {
		rdma_rc_recv(d, qp, &pkt);	/* counts for itself */
		return;
	}
	/* Transport packet bytes, as the RC engine counts them */
	RDMA_QP_INC(qp, rx_packets);
	RDMA_QP_ADD(qp, rx_bytes, pkt.tlen);
	rdma_ud_recv(d, qp, &pkt);
}
