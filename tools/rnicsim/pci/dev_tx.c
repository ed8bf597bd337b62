// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: Ethernet TX rings (the netdev's; the 2.0 packet
 * scheduler gives them their turns). Each descriptor is checked, its SGEs
 * gathered from guest memory, PFC pause honoured, offloads applied (VLAN
 * tag, IPv4 header checksum, ICRC) and the frame put on the wire; every
 * descriptor completes with one CQE. While the device is held
 * (rdev_tx_hold()) the rings are not read at all.
 */
#include <errno.h>
#include <string.h>

#include "pci/dev_priv.h"
#include "pkt/pkt.h"

#define ETH_HLEN	14
#define VLAN_HLEN	4
#define ETH_P_8021Q	0x8100
#define ETH_P_IP	0x0800

enum tx_result {
	TX_DONE,	/* descriptor completed, go on */
	TX_STALL,	/* paused: retry this descriptor later */
	TX_ERROR,	/* the queue entered the error state */
};

struct tx_ctx {
	struct rdev *d;
	unsigned int qid;
	u16 idx;
	struct rnic_tx_desc desc;
	struct rnic_sge sg[RNIC_TX_MAX_SGE];
	unsigned int nsg;
	u16 flags;
	u32 total;
};

static u16 get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static void complete(struct tx_ctx *t, u8 status, u32 len)
{
	struct rnic_cqe cqe = {};

	cqe.flags = cpu_to_le32(RNIC_CQE_F_TX);
	cqe.queue_id = cpu_to_le16(t->qid);
	cqe.desc_idx = cpu_to_le16(t->idx);
	cqe.byte_len = cpu_to_le32(len);
	cqe.status = status;
	rdev_cq_post(t->d, t->d->queues[t->qid].cq, &cqe);
}

/* A malformed descriptor or bad address: error CQE, queue error. */
static enum tx_result fail(struct tx_ctx *t, u8 reason, u64 info)
{
	struct rdev *d = t->d;

	if (reason == RNIC_ERR_DMA_OOB)
		RDEV_INC(d, dma_errors);
	else
		RDEV_INC(d, bad_descriptors);
	d->queues[t->qid].stats[RNIC_QUEUE_STAT_errors]++;
	complete(t, reason == RNIC_ERR_DMA_OOB ? RNIC_CQE_DMA_ERROR :
						  RNIC_CQE_BAD_DESC, 0);
	rdev_queue_error(d, t->qid, reason, info);
	return TX_ERROR;
}

/* Check the descriptor and collect its SGE list into t->sg. */
static enum tx_result parse(struct tx_ctx *t)
{
	struct rnic_tx_desc *desc = &t->desc;
	struct rdev *d = t->d;
	u64 sum = 0;
	unsigned int i;

	t->flags = le16_to_cpu(desc->flags);
	t->nsg = desc->num_sge;
	t->total = le32_to_cpu(desc->total_len);
	if ((t->flags & ~RNIC_TX_F_ALL) || desc->reserved0 ||
	    desc->reserved1 || desc->reserved2 || !t->nsg)
		return fail(t, RNIC_ERR_BAD_DESC, t->idx);
	if (((t->flags & RNIC_TX_F_ICRC) && !(d->caps & RNIC_CAP_ICRC)) ||
	    ((t->flags & RNIC_TX_F_IPV4_CSUM) &&
	     !(d->caps & RNIC_CAP_IPV4_CSUM)) ||
	    ((t->flags & RNIC_TX_F_VLAN_INSERT) && !(d->caps & RNIC_CAP_VLAN)))
		return fail(t, RNIC_ERR_BAD_DESC, t->idx);

	if (t->flags & RNIC_TX_F_INDIRECT) {
		u64 list = le64_to_cpu(desc->sge[0].addr);

		if (t->nsg > RNIC_TX_MAX_SGE || desc->sge[0].reserved ||
		    le32_to_cpu(desc->sge[0].len) != t->nsg * RNIC_SGE_SIZE)
			return fail(t, RNIC_ERR_BAD_DESC, t->idx);
		if (plat_dma_read(d->p, list, t->sg, t->nsg * RNIC_SGE_SIZE))
			return fail(t, RNIC_ERR_DMA_OOB, list);
	} else {
		if (t->nsg > RNIC_TX_INLINE_SGE)
			return fail(t, RNIC_ERR_BAD_DESC, t->idx);
		memcpy(t->sg, desc->sge, t->nsg * RNIC_SGE_SIZE);
	}
	for (i = 0; i < t->nsg; i++) {
		if (t->sg[i].reserved || !t->sg[i].len)
			return fail(t, RNIC_ERR_BAD_DESC, t->idx);
		sum += le32_to_cpu(t->sg[i].len);
	}
	if (sum != t->total || t->total < ETH_HLEN)
		return fail(t, RNIC_ERR_BAD_DESC, t->idx);
	return TX_DONE;
}

/* Copy the SGEs into the TX buffer (caller checked the total fits). */
static enum tx_result gather(struct tx_ctx *t)
{
	struct rdev *d = t->d;
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < t->nsg; i++) {
		u64 addr = le64_to_cpu(t->sg[i].addr);
		u32 len = le32_to_cpu(t->sg[i].len);
		const void *src = plat_dma_ptr(d->p, addr, len);

		if (!src)
			return fail(t, RNIC_ERR_DMA_OOB, addr);
		memcpy(d->txbuf + off, src, len);
		off += len;
	}
	return TX_DONE;
}

/* 802.1p priority of the frame for PFC. */
static unsigned int frame_prio(struct tx_ctx *t)
{
	const u8 *f = t->d->txbuf;

	if (t->flags & RNIC_TX_F_VLAN_INSERT)
		return FIELD_GET(RNIC_VLAN_TCI_PCP,
				 le16_to_cpu(t->desc.vlan_tci));
	if (t->total >= ETH_HLEN + VLAN_HLEN &&
	    get_be16(f + 12) == ETH_P_8021Q)
		return FIELD_GET(RNIC_VLAN_TCI_PCP, get_be16(f + 14));
	return t->d->queues[t->qid].tx_prio;
}

static bool ipv4_csum(u8 *f, size_t len)
{
	size_t l3 = ETH_HLEN, ihl;

	if (get_be16(f + 12) == ETH_P_8021Q) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return false;
		l3 += VLAN_HLEN;
	}
	if (get_be16(f + l3 - 2) != ETH_P_IP || len < l3 + 20 ||
	    (f[l3] >> 4) != 4)
		return false;
	ihl = (size_t)(f[l3] & 0x0f) * 4;
	if (ihl < 20 || l3 + ihl > len)
		return false;
	pkt_ipv4_csum_fill(f, l3);
	return true;
}

static void count_tx(struct rdev *d, const u8 *f, size_t len)
{
	switch (pkt_classify(f, len, d->port.udp_port, NULL)) {
	case PKT_CLASS_ROCE_V1:
		RDEV_INC(d, tx_roce_v1_frames);
		RDEV_ADD(d, tx_roce_v1_bytes, len);
		break;
	case PKT_CLASS_ROCE_V2_IPV4:
	case PKT_CLASS_ROCE_V2_IPV6:
		RDEV_INC(d, tx_roce_v2_frames);
		RDEV_ADD(d, tx_roce_v2_bytes, len);
		break;
	default:
		RDEV_INC(d, tx_eth_frames);
		RDEV_ADD(d, tx_eth_bytes, len);
		break;
	}
}

static enum tx_result tx_one(struct rdev *d, unsigned int qid)
{
	struct rdev_queue *q = &d->queues[qid];
	struct tx_ctx t = { .d = d, .qid = qid, .idx = q->cons };
	u64 gpa = q->base + (u64)(t.idx & ((1U << q->log2) - 1)) *
			    RNIC_TX_DESC_SIZE;
	struct pkt_info info;
	enum tx_result r;
	size_t len, wire;
	int rc;

	if (plat_dma_read(d->p, gpa, &t.desc, sizeof(t.desc)))
		return fail(&t, RNIC_ERR_DMA_OOB, gpa);
	r = parse(&t);
	if (r != TX_DONE)
		return r;

	wire = t.total;
	if (t.flags & RNIC_TX_F_VLAN_INSERT)
		wire += VLAN_HLEN;
	if (t.flags & RNIC_TX_F_ICRC)
		wire += RNIC_ICRC_LEN;
	if (wire > (size_t)d->port.mtu + RNIC_FRAME_OVERHEAD) {
		RDEV_INC(d, tx_drop_too_long);
		q->stats[RNIC_QUEUE_STAT_drops]++;
		complete(&t, RNIC_CQE_TOO_LONG, wire);
		q->cons++;
		return TX_DONE;
	}
	r = gather(&t);
	if (r != TX_DONE)
		return r;
	if (!d->link_up) {
		RDEV_INC(d, tx_drop_link_down);
		q->stats[RNIC_QUEUE_STAT_drops]++;
		complete(&t, RNIC_CQE_FLUSHED, wire);
		q->cons++;
		return TX_DONE;
	}
	if (rdev_pfc_paused_now(d, frame_prio(&t)))
		return TX_STALL;

	len = t.total;
	if (t.flags & RNIC_TX_F_VLAN_INSERT)
		len = pkt_vlan_insert(d->txbuf, len,
				      le16_to_cpu(t.desc.vlan_tci));
	if ((t.flags & RNIC_TX_F_IPV4_CSUM) && !ipv4_csum(d->txbuf, len))
		return fail(&t, RNIC_ERR_BAD_DESC, t.idx);
	if (t.flags & RNIC_TX_F_ICRC) {
		enum pkt_class cls;

		memset(d->txbuf + len, 0, RNIC_ICRC_LEN);
		len += RNIC_ICRC_LEN;
		cls = pkt_classify(d->txbuf, len, d->port.udp_port, &info);
		if (cls != PKT_CLASS_ROCE_V1 && cls != PKT_CLASS_ROCE_V2_IPV4 &&
		    cls != PKT_CLASS_ROCE_V2_IPV6)
			return fail(&t, RNIC_ERR_BAD_DESC, t.idx);
		pkt_icrc_fill(d->txbuf, &info);
	}

	rc = plat_wire_tx(d->p, d->txbuf, len);
	if (rc == -ENETDOWN) {
		RDEV_INC(d, tx_drop_link_down);
		q->stats[RNIC_QUEUE_STAT_drops]++;
		complete(&t, RNIC_CQE_FLUSHED, len);
	} else {
		/* Other errors are frames lost on the wire, as on silicon. */
		count_tx(d, d->txbuf, len);
		q->stats[RNIC_QUEUE_STAT_frames]++;
		q->stats[RNIC_QUEUE_STAT_bytes] += len;
		complete(&t, RNIC_CQE_OK, len);
	}
	q->cons++;
	return TX_DONE;
}

/*
 * One frame from each TX queue that has one (the turn of the Ethernet
 * rings in the packet scheduler). True if any has more. Under
 * rdev_tx_hold() none: descriptors stay posted until the release, which
 * calls rdev_tx_all().
 */
bool rdev_tx_round(struct rdev *d)
{
	bool more = false;
	unsigned int i;
	u16 pi;

	if (d->tx_hold)
		return false;
	for (i = 0; i < RDEV_MAX_QUEUES; i++) {
		struct rdev_queue *q = &d->queues[i];

		if (q->type != RNIC_QUEUE_ETH_TX || !rdev_queue_usable(d, i) ||
		    rdev_ring_pi(d, i, &pi) || q->cons == pi)
			continue;
		if (tx_one(d, i) == TX_DONE && q->cons != pi &&
		    rdev_queue_usable(d, i))
			more = true;
	}
	return more;
}
