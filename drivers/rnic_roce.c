// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic RoCE rings: one ROCE_TX and one ROCE_RX queue completing to one CQ
 * on MSI-X vector RNIC_VEC_ROCE, drained by NAPI on a dummy netdev (the
 * RoCE traffic is not the Ethernet netdev's and must not be accounted or
 * scheduled as its traffic).
 *
 * TX is zero copy: each ring entry owns a slot of a DMA-coherent header
 * pool holding the frame's headers (and small kernel payloads such as
 * inline data), the trailer (pad bytes, plus the ICRC when computed in
 * software) and an indirect SGE list. The payload SGEs point straight at
 * the MR's pages; the MRs are referenced until the device completes the
 * descriptor.
 *
 * RX buffers are posted once and reused: every frame is consumed (copied
 * into an MR or dropped) before its buffer goes back to the device.
 *
 * Everything read from the wire or the device is untrusted: CQEs are
 * checked against the ring state, frames are parsed by rnic_hdr_parse(),
 * and every drop is counted by reason.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_cache.h>

#include "rnic_compat.h"
#include "rnic.h"
#include "rnic_param.h"
#include "rnic_roce.h"
#include "rnic_verbs.h"

#define RNIC_ROCE_RING_LOG2	10
/* a 4096-byte path MTU plus every header rnic parses, tag and ICRC */
#define RNIC_ROCE_RX_BUF	(4096 + 256)
#define RNIC_TX_HDR_ROOM	128
#define RNIC_TX_TRAILER		8	/* pad (<= 3) + software ICRC */

static_assert(RNIC_MAX_HDR_LEN <= RNIC_TX_HDR_ROOM);

/**
 * struct rnic_tx_hdr - the DMA-coherent part of a TX ring entry
 * @hdr: headers, then up to RNIC_TX_INLINE_ROOM bytes of kernel payload
 * @trailer: pad bytes and the software ICRC
 * @reserved: keeps @sgl 16-byte aligned
 * @sgl: the indirect SGE list when the frame has more than 3 pieces
 */
struct rnic_tx_hdr {
	u8 hdr[RNIC_TX_HDR_ROOM + RNIC_TX_INLINE_ROOM];
	u8 trailer[RNIC_TX_TRAILER];
	u8 reserved[8];
	struct rnic_sge sgl[RNIC_TX_MAX_SGE];
};

/**
 * struct rnic_tx_slot - what a posted TX descriptor holds on to
 * @qp: UD: the QP (referenced) whose WQE @wqe_idx completes with it
 * @wqe_idx: see @qp
 * @mr: MRs (referenced) whose pages the descriptor points at
 * @nmr: entries of @mr
 * @kdma: mapping of a kernel payload too large for the header slot
 * @klen: its length (0: none)
 * @bytes: frame bytes, for the counters
 * @net: RoCE version, for the counters
 */
struct rnic_tx_slot {
	struct rnic_qp *qp;
	u32 wqe_idx;
	struct rnic_mr *mr[RNIC_TX_MAX_SGE];
	u8 nmr;
	dma_addr_t kdma;
	u32 klen;
	u32 bytes;
	u8 net;
};

/* A frame's pieces as the descriptor will list them */
struct rnic_tx_pieces {
	u64 addr[RNIC_TX_MAX_SGE];
	u32 len[RNIC_TX_MAX_SGE];
	unsigned int n;
};

struct rnic_rx_slot {
	void *buf;
	dma_addr_t dma;
};

/**
 * struct rnic_roce - the RoCE rings of one device
 * @rdev: the device
 * @ndev: dummy netdev carrying @napi
 * @napi: drains @cq
 * @cq: TX and RX completions
 * @txq: ROCE_TX ring
 * @rxq: ROCE_RX ring
 * @tx_lock: serialises producers of @txq
 * @tx_wait: requesters waiting for a free TX descriptor
 * @hdrs: header pool, one entry per @txq descriptor
 * @hdrs_dma: its DMA address
 * @tx: per-descriptor software state
 * @rx: per-descriptor RX buffers
 * @bounce: software ICRC: the frame assembled contiguously (@tx_lock)
 * @pieces: the frame being posted (@tx_lock)
 * @atomic_lock: makes responder atomics atomic across the device's QPs
 * @wq: runs the requesters and QP error transitions
 * @irq: Linux IRQ number
 * @irq_name: name shown in /proc/interrupts
 * @stats: enum rnic_roce_stat
 */
struct rnic_roce {
	struct rnic_dev *rdev;
	struct net_device *ndev;
	struct napi_struct napi;
	struct rnic_cq cq;
	struct rnic_queue txq;
	struct rnic_queue rxq;
	spinlock_t tx_lock;	/* txq producer, tx slots, bounce */
	wait_queue_head_t tx_wait;
	struct rnic_tx_hdr *hdrs;
	dma_addr_t hdrs_dma;
	struct rnic_tx_slot *tx;
	struct rnic_rx_slot *rx;
	u8 *bounce;
	struct rnic_tx_pieces pieces;
	spinlock_t atomic_lock;	/* responder atomics */
	struct workqueue_struct *wq;
	int irq;
	char irq_name[32];
	atomic64_t stats[RNIC_NUM_ROCE_STATS];
};

struct rnic_roce_priv {
	struct rnic_roce *roce;
};

static struct device *rnic_roce_dev(struct rnic_roce *roce)
{
	return &roce->rdev->pdev->dev;
}

void rnic_roce_stat_add(struct rnic_dev *rdev, enum rnic_roce_stat s, u64 n)
{
	if (rdev->roce)
		atomic64_add(n, &rdev->roce->stats[s]);
}

void rnic_roce_stats_read(struct rnic_dev *rdev, u64 *vals)
{
	int i;

	for (i = 0; i < RNIC_NUM_ROCE_STATS; i++)
		vals[i] = rdev->roce ? atomic64_read(&rdev->roce->stats[i]) : 0;
}

spinlock_t *rnic_roce_atomic_lock(struct rnic_dev *rdev)
{
	return &rdev->roce->atomic_lock;
}

struct workqueue_struct *rnic_roce_wq(struct rnic_dev *rdev)
{
	return rdev->roce->wq;
}

/**
 * rnic_av_from_attr() - resolve an rdma_ah_attr into an address vector
 * @rdev: the device
 * @attr: the AH or RC path attributes; RoCE needs a GRH and a source GID
 * @av: filled in
 *
 * The wire format follows the source GID's type: RoCE v1 for
 * IB_GID_TYPE_ROCE, RoCE v2 over IPv4 or IPv6 (by the GID's form) for
 * IB_GID_TYPE_ROCE_UDP_ENCAP. A version the roce_mode parameter disabled
 * is refused.
 *
 * Return: 0 or -EINVAL.
 */
int rnic_av_from_attr(struct rnic_dev *rdev, const struct rdma_ah_attr *attr,
		      struct rnic_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	u16 vlan_id = 0xffff;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	switch (sgid_attr->gid_type) {
	case IB_GID_TYPE_ROCE:
		if (!(rnic_params.roce_mode & RNIC_ROCE_V1))
			return -EINVAL;
		av->net = RNIC_NET_ROCE_V1;
		break;
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		if (!(rnic_params.roce_mode & RNIC_ROCE_V2))
			return -EINVAL;
		av->net = rdma_gid_attr_network_type(sgid_attr) ==
			  RDMA_NETWORK_IPV4 ? RNIC_NET_ROCE_V2_IPV4 :
					      RNIC_NET_ROCE_V2_IPV6;
		break;
	default:
		return -EINVAL;
	}
	if (rdma_read_gid_l2_fields(sgid_attr, &vlan_id, NULL))
		return -EINVAL;

	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	av->sgid_index = grh->sgid_index;
	ether_addr_copy(av->dmac, attr->roce.dmac);
	av->vlan_id = vlan_id < VLAN_N_VID ? vlan_id : 0xffff;
	av->sl = rdma_ah_get_sl(attr);
	av->tclass = grh->traffic_class;
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->hop_limit = grh->hop_limit;
	return 0;
}

/**
 * rnic_roce_pkt_init() - addressing fields of a frame to @av
 * @rdev: the device
 * @pkt: zeroed and filled with L2-L4 fields; the caller adds the BTH on
 * @av: the destination
 * @udp_sport: RoCE v2 source port of the flow
 *
 * The 802.1Q tag carries the PFC priority when PFC is on (a priority
 * tag, VLAN 0, if the GID has no VLAN), else the AV's SL as priority.
 */
void rnic_roce_pkt_init(struct rnic_dev *rdev, struct rnic_pkt *pkt,
			const struct rnic_av *av, u16 udp_sport)
{
	bool pfc = rnic_params.pfc_prio != RNIC_PFC_OFF;
	u8 prio = pfc ? rnic_params.pfc_prio : av->sl & 7;

	memset(pkt, 0, sizeof(*pkt));
	ether_addr_copy(pkt->dmac, av->dmac);
	ether_addr_copy(pkt->smac, rdev->netdev->dev_addr);
	if (av->vlan_id < VLAN_N_VID || pfc) {
		pkt->vlan = true;
		pkt->vlan_tci = FIELD_PREP(RNIC_VLAN_TCI_PCP, prio) |
				(av->vlan_id < VLAN_N_VID ? av->vlan_id : 0);
	}
	pkt->net = av->net;
	pkt->sgid = av->sgid;
	pkt->dgid = av->dgid;
	pkt->tclass = av->tclass;
	pkt->flow_label = av->flow_label;
	pkt->hop_limit = av->hop_limit ?: (av->net == RNIC_NET_ROCE_V1 ?
					   1 : 64);
	pkt->udp_sport = udp_sport;
	pkt->udp_dport = rnic_params.roce_udp_port;
	pkt->pkey = 0xffff;
}

static void rnic_tx_slot_release(struct rnic_roce *roce,
				 struct rnic_tx_slot *slot)
{
	unsigned int i;

	for (i = 0; i < slot->nmr; i++)
		rnic_mr_put(slot->mr[i]);
	slot->nmr = 0;
	if (slot->klen)
		dma_unmap_single(rnic_roce_dev(roce), slot->kdma, slot->klen,
				 DMA_TO_DEVICE);
	slot->klen = 0;
	if (slot->qp)
		rnic_qp_put(slot->qp);
	slot->qp = NULL;
}

static int rnic_tx_piece(struct rnic_tx_pieces *p, u64 addr, u32 len)
{
	if (!len)
		return 0;
	/* merge with the previous piece when physically contiguous */
	if (p->n && p->addr[p->n - 1] + p->len[p->n - 1] == addr) {
		p->len[p->n - 1] += len;
		return 0;
	}
	if (p->n == RNIC_TX_MAX_SGE)
		return -E2BIG;
	p->addr[p->n] = addr;
	p->len[p->n] = len;
	p->n++;
	return 0;
}

/* Add [@iova, @iova + @len) of @mr; @mr is referenced by the caller. */
static int rnic_tx_mr_pieces(struct rnic_tx_pieces *p, struct rnic_mr *mr,
			     u64 iova, u32 len)
{
	dma_addr_t dma;
	u32 contig;
	int err;

	while (len) {
		err = rnic_mr_dma(mr, iova, len, &dma, &contig);
		if (err)
			return err;
		if (!contig || contig > len)
			return -EFAULT;
		err = rnic_tx_piece(p, dma, contig);
		if (err)
			return err;
		iova += contig;
		len -= contig;
	}
	return 0;
}

static int rnic_tx_keep_mr(struct rnic_tx_slot *slot, struct rnic_mr *mr)
{
	if (slot->nmr && slot->mr[slot->nmr - 1] == mr) {
		rnic_mr_put(mr);	/* one reference per slot is enough */
		return 0;
	}
	if (slot->nmr == RNIC_TX_MAX_SGE) {
		rnic_mr_put(mr);
		return -E2BIG;
	}
	slot->mr[slot->nmr++] = mr;
	return 0;
}

/*
 * Payload pieces from local SGEs: [x->offset, x->offset + x->len) of the
 * message. Every lkey is checked for the PD and local read access.
 */
static int rnic_tx_sge_pieces(struct rnic_roce *roce, struct rnic_xmit *x,
			      struct rnic_tx_slot *slot,
			      struct rnic_tx_pieces *p)
{
	u32 skip = x->offset, left = x->len, i;

	for (i = 0; i < x->num_sge && left; i++) {
		const struct rnic_wqe_sge *sge = &x->sge[i];
		struct rnic_mr *mr;
		u32 n;
		int err;

		if (skip >= sge->length) {
			skip -= sge->length;
			continue;
		}
		n = min(sge->length - skip, left);
		mr = rnic_mr_get(roce->rdev, x->pd, sge->lkey, 0,
				 sge->addr + skip, n);
		if (!mr)
			return -EACCES;
		err = rnic_tx_keep_mr(slot, mr);
		if (err)
			return err;
		err = rnic_tx_mr_pieces(p, mr, sge->addr + skip, n);
		if (err)
			return err;
		left -= n;
		skip = 0;
	}
	return left ? -EINVAL : 0;
}

/* Copy the payload out of its MRs into @dst (software ICRC only). */
static int rnic_tx_copy_payload(struct rnic_roce *roce, struct rnic_xmit *x,
				u8 *dst)
{
	u32 skip = x->offset, left = x->len, i;
	struct rnic_mr *mr;
	int err;

	if (x->kbuf) {
		memcpy(dst, x->kbuf, x->len);
		return 0;
	}
	if (x->mr)
		return rnic_mr_copy_from(x->mr, x->iova, dst, x->len);
	for (i = 0; i < x->num_sge && left; i++) {
		const struct rnic_wqe_sge *sge = &x->sge[i];
		u32 n;

		if (skip >= sge->length) {
			skip -= sge->length;
			continue;
		}
		n = min(sge->length - skip, left);
		mr = rnic_mr_get(roce->rdev, x->pd, sge->lkey, 0,
				 sge->addr + skip, n);
		if (!mr)
			return -EACCES;
		err = rnic_mr_copy_from(mr, sge->addr + skip, dst, n);
		rnic_mr_put(mr);
		if (err)
			return err;
		dst += n;
		left -= n;
		skip = 0;
	}
	return 0;
}

/* ICRC of the frame in software, into @trailer after the pad bytes. */
static int rnic_tx_soft_icrc(struct rnic_roce *roce, struct rnic_xmit *x,
			     const u8 *hdr, u32 hlen, u8 pad, u8 *trailer)
{
	u32 flen = hlen + x->len + pad + RNIC_ICRC_SIZE;
	struct rnic_pkt parsed;
	u8 *f = roce->bounce;
	int err;

	if (flen > RNIC_ROCE_RX_BUF)
		return -E2BIG;
	memcpy(f, hdr, hlen);
	err = rnic_tx_copy_payload(roce, x, f + hlen);
	if (err)
		return err;
	memset(f + hlen + x->len, 0, pad + RNIC_ICRC_SIZE);
	/* the parser finds the offsets the ICRC needs */
	if (rnic_hdr_parse(f, flen, rnic_params.roce_udp_port, &parsed))
		return -EINVAL;
	put_unaligned_le32(rnic_icrc(f, &parsed), trailer + pad);
	return 0;
}

/**
 * rnic_roce_xmit() - put one RoCE frame on the ROCE_TX ring
 * @rdev: the device
 * @x: the frame; x->qp, if set, is referenced until the frame completes
 *
 * Context: any; takes the TX lock with BHs off.
 *
 * Return: 0; -EBUSY when the ring is full (nothing was sent; retry after
 * rnic_roce_wait_tx()); -EACCES for an lkey that does not cover the
 * payload; another negative errno if the frame cannot be built.
 */
int rnic_roce_xmit(struct rnic_dev *rdev, struct rnic_xmit *x)
{
	struct rnic_roce *roce = rdev->roce;
	struct rnic_tx_pieces *p;
	struct rnic_tx_slot *slot;
	struct rnic_tx_hdr *th;
	struct rnic_queue *q;
	u16 flags = 0, tci = 0;
	dma_addr_t th_dma;
	u8 pad = (4 - (x->len & 3)) & 3;
	u32 idx, hlen, total, i;
	bool hw_vlan;
	int err;

	if (!roce || rdev->fatal)
		return -EIO;
	q = &roce->txq;

	spin_lock_bh(&roce->tx_lock);
	/* big: kept off the stack of softirq callers, used under the lock */
	p = &roce->pieces;
	p->n = 0;
	if (!rnic_queue_free(q)) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_tx_ring_full);
		err = -EBUSY;
		goto out_unlock;
	}
	idx = q->pi & (rnic_queue_depth(q) - 1);
	slot = &roce->tx[idx];
	th = &roce->hdrs[idx];
	th_dma = roce->hdrs_dma + (dma_addr_t)idx * sizeof(*th);

	/* the device inserts the tag when it can; else it is in the header */
	hw_vlan = x->pkt.vlan && (rdev->caps & RNIC_CAP_VLAN);
	if (hw_vlan) {
		flags |= RNIC_TX_F_VLAN_INSERT;
		tci = x->pkt.vlan_tci;
		x->pkt.vlan = false;
	}
	err = rnic_hdr_build(&x->pkt, x->len, th->hdr, RNIC_TX_HDR_ROOM);
	x->pkt.vlan |= hw_vlan;	/* the caller may send more with @x */
	if (err < 0)
		goto out_unlock;
	hlen = err;

	/* headers, then the payload */
	if (x->kbuf && x->len <= RNIC_TX_INLINE_ROOM) {
		memcpy(th->hdr + hlen, x->kbuf, x->len);
		err = rnic_tx_piece(p, th_dma, hlen + x->len);
	} else {
		err = rnic_tx_piece(p, th_dma, hlen);
		if (err)
			goto out_release;
		if (x->kbuf) {
			slot->kdma = dma_map_single(rnic_roce_dev(roce),
						    (void *)x->kbuf, x->len,
						    DMA_TO_DEVICE);
			if (dma_mapping_error(rnic_roce_dev(roce), slot->kdma)) {
				err = -ENOMEM;
				goto out_release;
			}
			slot->klen = x->len;
			err = rnic_tx_piece(p, slot->kdma, x->len);
		} else if (x->mr) {
			refcount_inc(&x->mr->ref);
			err = rnic_tx_keep_mr(slot, x->mr);
			if (!err)
				err = rnic_tx_mr_pieces(p, x->mr, x->iova,
							x->len);
		} else if (x->len) {
			err = rnic_tx_sge_pieces(roce, x, slot, p);
		}
	}
	if (err)
		goto out_release;

	/* pad and ICRC */
	memset(th->trailer, 0, sizeof(th->trailer));
	if (rdev->caps & RNIC_CAP_ICRC) {
		flags |= RNIC_TX_F_ICRC;
	} else {
		err = rnic_tx_soft_icrc(roce, x, th->hdr, hlen, pad,
					th->trailer);
		if (err)
			goto out_release;
	}
	err = rnic_tx_piece(p, th_dma + offsetof(struct rnic_tx_hdr, trailer),
			    pad + ((flags & RNIC_TX_F_ICRC) ? 0 :
				   RNIC_ICRC_SIZE));
	if (err)
		goto out_release;

	total = 0;
	for (i = 0; i < p->n; i++)
		total += p->len[i];
	if (p->n <= RNIC_TX_INLINE_SGE) {
		err = rnic_tx_desc_build(rnic_queue_slot(q, q->pi), flags, tci,
					 p->addr, p->len, p->n);
	} else {
		for (i = 0; i < p->n; i++) {
			th->sgl[i].addr = cpu_to_le64(p->addr[i]);
			th->sgl[i].len = cpu_to_le32(p->len[i]);
			th->sgl[i].reserved = 0;
		}
		err = rnic_tx_desc_build_indirect(rnic_queue_slot(q, q->pi),
						  flags, tci,
						  th_dma + offsetof(struct rnic_tx_hdr, sgl),
						  p->n, total);
	}
	if (err) {
		err = -EINVAL;
		goto out_release;
	}

	if (x->qp) {
		refcount_inc(&x->qp->ref);
		slot->qp = x->qp;
		slot->wqe_idx = x->wqe_idx;
	}
	slot->bytes = total + (hw_vlan ? RNIC_VLAN_HLEN : 0) +
		      ((flags & RNIC_TX_F_ICRC) ? RNIC_ICRC_SIZE : 0);
	slot->net = x->pkt.net;
	/* descriptor and header slot before the producer index */
	dma_wmb();
	WRITE_ONCE(q->pi, q->pi + 1);
	rnic_queue_ring(rdev, q);
	spin_unlock_bh(&roce->tx_lock);
	return 0;

out_release:
	rnic_tx_slot_release(roce, slot);
	rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_tx_errors);
out_unlock:
	spin_unlock_bh(&roce->tx_lock);
	return err;
}

/**
 * rnic_roce_wait_tx() - sleep until the TX ring has room
 * @rdev: the device
 *
 * Context: process context, no locks held.
 *
 * Return: 0, or -EIO if the device died, -ETIMEDOUT after a second.
 */
int rnic_roce_wait_tx(struct rnic_dev *rdev)
{
	struct rnic_roce *roce = rdev->roce;
	long left;

	left = wait_event_timeout(roce->tx_wait,
				  rnic_queue_free(&roce->txq) || rdev->fatal,
				  HZ);
	if (rdev->fatal)
		return -EIO;
	return left ? 0 : -ETIMEDOUT;
}

static void rnic_roce_tx_cqe(struct rnic_roce *roce,
			     const struct rnic_cqe *cqe)
{
	struct rnic_queue *q = &roce->txq;
	struct rnic_tx_slot slot, *s;
	bool v1;

	spin_lock(&roce->tx_lock);
	if (le16_to_cpu(cqe->queue_id) != q->id ||
	    le16_to_cpu(cqe->desc_idx) != q->ci ||
	    !rnic_ring_used(q->pi, q->ci)) {
		spin_unlock(&roce->tx_lock);
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_rx_drop_bad_cqe);
		rnic_err_ratelimited(roce->rdev, "bad RoCE TX completion (queue %u index %u)\n",
				     le16_to_cpu(cqe->queue_id),
				     le16_to_cpu(cqe->desc_idx));
		return;
	}
	s = &roce->tx[q->ci & (rnic_queue_depth(q) - 1)];
	slot = *s;
	s->qp = NULL;
	s->nmr = 0;
	s->klen = 0;
	WRITE_ONCE(q->ci, q->ci + 1);
	spin_unlock(&roce->tx_lock);

	if (cqe->status == RNIC_CQE_OK) {
		v1 = slot.net == RNIC_NET_ROCE_V1;
		rnic_roce_stat_inc(roce->rdev, v1 ?
				   RNIC_ROCE_STAT_tx_roce_v1_packets :
				   RNIC_ROCE_STAT_tx_roce_v2_packets);
		rnic_roce_stat_add(roce->rdev, v1 ?
				   RNIC_ROCE_STAT_tx_roce_v1_bytes :
				   RNIC_ROCE_STAT_tx_roce_v2_bytes, slot.bytes);
	} else {
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_tx_errors);
	}
	/* UD is unreliable: a frame the wire lost still completes the WR */
	if (slot.qp)
		rnic_ud_tx_done(slot.qp, slot.wqe_idx);
	rnic_tx_slot_release(roce, &slot);
}

static const enum rnic_roce_stat rnic_parse_drop[RNIC_PARSE_NUM] = {
	[RNIC_PARSE_TRUNCATED] = RNIC_ROCE_STAT_rx_drop_truncated,
	[RNIC_PARSE_NOT_ROCE] = RNIC_ROCE_STAT_rx_drop_not_roce,
	[RNIC_PARSE_BAD_L3] = RNIC_ROCE_STAT_rx_drop_bad_l3,
	[RNIC_PARSE_BAD_OPCODE] = RNIC_ROCE_STAT_rx_drop_bad_opcode,
	[RNIC_PARSE_BAD_TVER] = RNIC_ROCE_STAT_rx_drop_bad_tver,
	[RNIC_PARSE_BAD_LENGTH] = RNIC_ROCE_STAT_rx_drop_bad_length,
};

/* Validate one received frame and hand it to its QP's engine. */
static void rnic_roce_rx_frame(struct rnic_roce *roce,
			       const struct rnic_cqe *cqe, const u8 *frame,
			       u32 len)
{
	struct rnic_dev *rdev = roce->rdev;
	u32 cflags = le32_to_cpu(cqe->flags);
	const struct rnic_opcode_info *info;
	enum rnic_parse_err perr;
	struct rnic_pkt pkt;
	struct rnic_qp *qp;
	bool v1, ud;
	u16 tci;

	perr = rnic_hdr_parse(frame, len, rnic_params.roce_udp_port, &pkt);
	if (perr) {
		rnic_roce_stat_inc(rdev, rnic_parse_drop[perr]);
		return;
	}
	if (cflags & RNIC_CQE_F_ICRC_CHECKED) {
		if (!(cflags & RNIC_CQE_F_ICRC_OK)) {
			rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_icrc_errors);
			return;
		}
	} else if (!rnic_icrc_check(frame, &pkt)) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_icrc_errors);
		return;
	}
	v1 = pkt.net == RNIC_NET_ROCE_V1;
	if (!(rnic_params.roce_mode & (v1 ? RNIC_ROCE_V1 : RNIC_ROCE_V2))) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_roce_mode);
		return;
	}
	rnic_roce_stat_inc(rdev, v1 ? RNIC_ROCE_STAT_rx_roce_v1_packets :
			   RNIC_ROCE_STAT_rx_roce_v2_packets);
	rnic_roce_stat_add(rdev, v1 ? RNIC_ROCE_STAT_rx_roce_v1_bytes :
			   RNIC_ROCE_STAT_rx_roce_v2_bytes, len);

	qp = rnic_qp_get(rdev, pkt.dqpn);
	if (!qp) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_unknown_qpn);
		return;
	}
	info = rnic_opcode_info(pkt.opcode);
	ud = info->flags & RNIC_OPF_DETH;
	if (ud != (qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI) ||
	    (!ud && qp->type != IB_QPT_RC)) {
		rnic_roce_stat_inc(rdev, RNIC_ROCE_STAT_rx_drop_qp_type);
		goto out;
	}
	if (ud) {
		if (cflags & RNIC_CQE_F_VLAN_STRIPPED)
			tci = le16_to_cpu(cqe->vlan_tci);
		else
			tci = pkt.vlan ? pkt.vlan_tci : 0;
		rnic_ud_recv(qp, &pkt, frame, tci,
			     (cflags & RNIC_CQE_F_VLAN_STRIPPED) || pkt.vlan);
	} else if (info->flags & RNIC_OPF_REQ) {
		rnic_rc_resp_recv(qp, &pkt, frame);
	} else {
		rnic_rc_comp_recv(qp, &pkt, frame);
	}
out:
	rnic_qp_put(qp);
}

static void rnic_roce_rx_post(struct rnic_roce *roce, u32 idx)
{
	struct rnic_queue *q = &roce->rxq;
	struct rnic_rx_desc *desc = rnic_queue_slot(q, q->pi);

	desc->addr = cpu_to_le64(roce->rx[idx].dma);
	desc->len = cpu_to_le32(RNIC_ROCE_RX_BUF);
	desc->reserved = 0;
	q->pi++;
}

/* Return: whether the buffer was reposted (the RX doorbell is due). */
static bool rnic_roce_rx_cqe(struct rnic_roce *roce, const struct rnic_cqe *cqe)
{
	struct rnic_queue *q = &roce->rxq;
	u32 len = le32_to_cpu(cqe->byte_len);
	u32 idx;

	if (le16_to_cpu(cqe->queue_id) != q->id ||
	    le16_to_cpu(cqe->desc_idx) != q->ci ||
	    !rnic_ring_used(q->pi, q->ci)) {
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_rx_drop_bad_cqe);
		rnic_err_ratelimited(roce->rdev, "bad RoCE RX completion (queue %u index %u)\n",
				     le16_to_cpu(cqe->queue_id),
				     le16_to_cpu(cqe->desc_idx));
		return false;
	}
	idx = q->ci & (rnic_queue_depth(q) - 1);
	q->ci++;
	if (cqe->status == RNIC_CQE_ICRC_BAD) {
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_icrc_errors);
	} else if (cqe->status == RNIC_CQE_TOO_LONG) {
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_rx_drop_too_long);
	} else if (cqe->status != RNIC_CQE_OK || len > RNIC_ROCE_RX_BUF) {
		rnic_roce_stat_inc(roce->rdev, RNIC_ROCE_STAT_rx_drop_bad_cqe);
	} else {
		dma_sync_single_for_cpu(rnic_roce_dev(roce), roce->rx[idx].dma,
					len, DMA_FROM_DEVICE);
		rnic_roce_rx_frame(roce, cqe, roce->rx[idx].buf, len);
		dma_sync_single_for_device(rnic_roce_dev(roce),
					   roce->rx[idx].dma, len,
					   DMA_FROM_DEVICE);
	}
	rnic_roce_rx_post(roce, idx);
	return true;
}

/**
 * rnic_roce_poll() - NAPI poll: TX completions and received frames
 * @napi: the RoCE NAPI context
 * @budget: frames we may process
 *
 * Return: RX work done, or @budget to be polled again.
 */
static int rnic_roce_poll(struct napi_struct *napi, int budget)
{
	struct rnic_roce_priv *priv = netdev_priv(napi->dev);
	struct rnic_roce *roce = priv->roce;
	u32 tx_cap = rnic_queue_depth(&roce->txq);
	unsigned int tx_seen = 0, posted = 0;
	struct rnic_cqe *slot, cqe;
	int rx_seen = 0;

	while (rx_seen < budget && tx_seen < tx_cap) {
		slot = rnic_cq_peek(&roce->cq);
		if (!slot)
			break;
		cqe = *slot;
		rnic_cq_pop(&roce->cq);
		if (le32_to_cpu(cqe.flags) & RNIC_CQE_F_TX) {
			tx_seen++;
			rnic_roce_tx_cqe(roce, &cqe);
		} else {
			rx_seen++;
			posted += rnic_roce_rx_cqe(roce, &cqe);
		}
	}
	if (posted)
		rnic_queue_ring(roce->rdev, &roce->rxq);
	if (tx_seen && wq_has_sleeper(&roce->tx_wait))
		wake_up(&roce->tx_wait);

	if (tx_seen >= tx_cap)
		rx_seen = budget;
	if (rx_seen < budget && napi_complete_done(napi, rx_seen))
		rnic_cq_arm(roce->rdev, &roce->cq);
	else if (rx_seen || tx_seen)
		rnic_cq_update_ci(roce->rdev, &roce->cq);
	return rx_seen;
}

static irqreturn_t rnic_roce_irq(int irq, void *data)
{
	struct rnic_roce *roce = data;

	napi_schedule_irqoff(&roce->napi);
	return IRQ_HANDLED;
}

static void rnic_roce_free_bufs(struct rnic_roce *roce)
{
	struct device *dev = rnic_roce_dev(roce);
	u32 i, depth = 1U << RNIC_ROCE_RING_LOG2;

	if (roce->rx) {
		for (i = 0; i < depth; i++) {
			if (!roce->rx[i].buf)
				continue;
			dma_unmap_single(dev, roce->rx[i].dma, RNIC_ROCE_RX_BUF,
					 DMA_FROM_DEVICE);
			kfree(roce->rx[i].buf);
		}
		kvfree(roce->rx);
		roce->rx = NULL;
	}
	if (roce->tx) {
		for (i = 0; i < depth; i++)
			rnic_tx_slot_release(roce, &roce->tx[i]);
		kvfree(roce->tx);
		roce->tx = NULL;
	}
	if (roce->hdrs)
		dma_free_coherent(dev, depth * sizeof(*roce->hdrs), roce->hdrs,
				  roce->hdrs_dma);
	roce->hdrs = NULL;
	kfree(roce->bounce);
	roce->bounce = NULL;
}

static int rnic_roce_alloc_bufs(struct rnic_roce *roce)
{
	struct device *dev = rnic_roce_dev(roce);
	u32 i, depth = 1U << RNIC_ROCE_RING_LOG2;

	roce->tx = kvcalloc(depth, sizeof(*roce->tx), GFP_KERNEL);
	roce->rx = kvcalloc(depth, sizeof(*roce->rx), GFP_KERNEL);
	roce->bounce = kmalloc(RNIC_ROCE_RX_BUF, GFP_KERNEL);
	roce->hdrs = dma_alloc_coherent(dev, depth * sizeof(*roce->hdrs),
					&roce->hdrs_dma, GFP_KERNEL);
	if (!roce->tx || !roce->rx || !roce->bounce || !roce->hdrs)
		return -ENOMEM;
	for (i = 0; i < depth; i++) {
		void *buf = kmalloc(RNIC_ROCE_RX_BUF, GFP_KERNEL);
		dma_addr_t dma;

		if (!buf)
			return -ENOMEM;
		dma = dma_map_single(dev, buf, RNIC_ROCE_RX_BUF,
				     DMA_FROM_DEVICE);
		if (dma_mapping_error(dev, dma)) {
			kfree(buf);
			return -ENOMEM;
		}
		roce->rx[i].buf = buf;
		roce->rx[i].dma = dma;
	}
	return 0;
}

/**
 * rnic_roce_init() - create the RoCE rings, their CQ, NAPI and IRQ
 * @rdev: a device with its netdev registered
 *
 * Return: 0 or a negative errno (nothing left allocated).
 */
int rnic_roce_init(struct rnic_dev *rdev)
{
	u32 depth = 1U << RNIC_ROCE_RING_LOG2, i;
	struct rnic_roce_priv *priv;
	struct rnic_roce *roce;
	int err, irq;

	irq = rnic_irq_vector(rdev, RNIC_VEC_ROCE);
	if (irq < 0) {
		rnic_err(rdev, "no MSI-X vector %u for RoCE (got %d vectors)\n",
			 RNIC_VEC_ROCE, rdev->num_irqs);
		return irq;
	}
	if (rdev->max_ring_log2 < RNIC_ROCE_RING_LOG2 ||
	    rdev->max_cq_log2 < RNIC_ROCE_RING_LOG2 + 2) {
		rnic_err(rdev, "device rings too small for RoCE\n");
		return -EINVAL;
	}
	roce = kzalloc(sizeof(*roce), GFP_KERNEL);
	if (!roce)
		return -ENOMEM;
	roce->rdev = rdev;
	spin_lock_init(&roce->tx_lock);
	spin_lock_init(&roce->atomic_lock);
	init_waitqueue_head(&roce->tx_wait);
	snprintf(roce->irq_name, sizeof(roce->irq_name), "%s-roce@%s",
		 DRV_MODULE_NAME, pci_name(rdev->pdev));

	/* requesters may block on the TX ring; storage ULPs need reclaim */
	roce->wq = alloc_workqueue("rnic_roce", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!roce->wq) {
		err = -ENOMEM;
		goto err_free;
	}
	roce->ndev = rnic_alloc_netdev_dummy(sizeof(*priv));
	if (!roce->ndev) {
		err = -ENOMEM;
		goto err_destroy_wq;
	}
	priv = netdev_priv(roce->ndev);
	priv->roce = roce;
	netif_napi_add(roce->ndev, &roce->napi, rnic_roce_poll);

	err = rnic_roce_alloc_bufs(roce);
	if (err)
		goto err_free_bufs;
	err = rnic_cq_create(rdev, &roce->cq, RNIC_ROCE_RING_LOG2 + 2,
			     RNIC_VEC_ROCE);
	if (err)
		goto err_free_bufs;
	err = rnic_queue_create(rdev, &roce->txq, RNIC_QUEUE_ROCE_TX,
				RNIC_ROCE_RING_LOG2, &roce->cq, 0,
				rnic_params.pfc_prio == RNIC_PFC_OFF ? 0 :
				rnic_params.pfc_prio);
	if (err)
		goto err_destroy_cq;
	err = rnic_queue_create(rdev, &roce->rxq, RNIC_QUEUE_ROCE_RX,
				RNIC_ROCE_RING_LOG2, &roce->cq,
				RNIC_ROCE_RX_BUF, 0);
	if (err)
		goto err_destroy_txq;
	for (i = 0; i < depth; i++)
		rnic_roce_rx_post(roce, i);
	rnic_queue_ring(rdev, &roce->rxq);

	err = request_irq(irq, rnic_roce_irq, 0, roce->irq_name, roce);
	if (err) {
		rnic_err(rdev, "cannot request RoCE IRQ %d: %d\n", irq, err);
		goto err_destroy_rxq;
	}
	roce->irq = irq;
	rdev->roce = roce;
	napi_enable(&roce->napi);
	rnic_cq_arm(rdev, &roce->cq);
	return 0;

err_destroy_rxq:
	rnic_queue_destroy(rdev, &roce->rxq);
err_destroy_txq:
	rnic_queue_destroy(rdev, &roce->txq);
err_destroy_cq:
	rnic_cq_destroy(rdev, &roce->cq);
	if (roce->rxq.va || roce->txq.va || roce->cq.va) {
		/* the device may still write into them: leak, do not free */
		rnic_err(rdev, "device kept the RoCE rings; leaking them\n");
		return err;
	}
err_free_bufs:
	rnic_roce_free_bufs(roce);
	netif_napi_del(&roce->napi);
	rnic_free_netdev_dummy(roce->ndev);
err_destroy_wq:
	destroy_workqueue(roce->wq);
err_free:
	kfree(roce);
	return err;
}

/**
 * rnic_roce_destroy() - undo rnic_roce_init()
 * @rdev: the device; the ib_device is unregistered (no QPs remain)
 */
void rnic_roce_destroy(struct rnic_dev *rdev)
{
	struct rnic_roce *roce = rdev->roce;

	if (!roce)
		return;
	flush_workqueue(roce->wq);
	napi_disable(&roce->napi);
	rnic_queue_destroy(rdev, &roce->txq);
	rnic_queue_destroy(rdev, &roce->rxq);
	free_irq(roce->irq, roce);
	rnic_cq_destroy(rdev, &roce->cq);
	rdev->roce = NULL;
	netif_napi_del(&roce->napi);
	rnic_free_netdev_dummy(roce->ndev);
	destroy_workqueue(roce->wq);
	if (roce->txq.va || roce->rxq.va || roce->cq.va) {
		rnic_err(rdev, "device kept the RoCE rings; leaking their buffers\n");
		return;
	}
	rnic_roce_free_bufs(roce);
	kfree(roce);
}
