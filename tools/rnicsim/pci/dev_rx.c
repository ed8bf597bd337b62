// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: the RX path. A frame from the wire is classified:
 * PFC frames go to the MAC, RoCE frames to the 2.0 transport (rdma_rx.c),
 * and the rest, its VLAN tag stripped if asked, into the next posted
 * buffer of the ETH_RX queue, completed with a CQE.
 */
#include <string.h>

#include "pci/dev_priv.h"
#include "pkt/pkt.h"

#define ETH_HLEN	14
#define VLAN_HLEN	4
#define ETH_ALEN	6

struct rx_ctx {
	struct rdev *d;
	const u8 *frame;	/* as received */
	size_t len;
	struct pkt_info info;
	u8 rx_class;
	u32 cqe_flags;
	u16 vlan_tci;
	bool strip;
};

static void count_rx(struct rdev *d, u8 rx_class, size_t len)
{
	switch (rx_class) {
	case RNIC_RX_CLASS_ROCE_V1:
		RDEV_INC(d, rx_roce_v1_frames);
		RDEV_ADD(d, rx_roce_v1_bytes, len);
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
	case RNIC_RX_CLASS_ROCE_V2_IPV6:
		RDEV_INC(d, rx_roce_v2_frames);
		RDEV_ADD(d, rx_roce_v2_bytes, len);
		break;
	default:
		RDEV_INC(d, rx_eth_frames);
		RDEV_ADD(d, rx_eth_bytes, len);
		break;
	}
}

static void rx_complete(struct rx_ctx *r, unsigned int qid, u16 idx,
			u8 status, u32 len)
{
	struct rnic_cqe cqe = {};

	cqe.flags = cpu_to_le32(r->cqe_flags);
	cqe.queue_id = cpu_to_le16(qid);
	cqe.desc_idx = cpu_to_le16(idx);
	cqe.byte_len = cpu_to_le32(len);
	cqe.status = status;
	cqe.rx_class = r->rx_class;
	cqe.vlan_tci = cpu_to_le16(r->vlan_tci);
	rdev_cq_post(r->d, r->d->queues[qid].cq, &cqe);
}

/* Copy the frame (without its tag when stripping) to guest memory. */
static int rx_copy(struct rx_ctx *r, u64 addr, size_t out_len)
{
	u8 *dst = plat_dma_ptr(r->d->p, addr, out_len);

	if (!dst)
		return -1;
	if (r->strip) {
		memcpy(dst, r->frame, 2 * ETH_ALEN);
		memcpy(dst + 2 * ETH_ALEN, r->frame + ETH_HLEN + VLAN_HLEN - 2,
		       r->len - (2 * ETH_ALEN + VLAN_HLEN));
	} else {
		memcpy(dst, r->frame, r->len);
	}
	return 0;
}

/* Deliver to queue @qid; the frame has passed every check. */
static void rx_deliver(struct rx_ctx *r, unsigned int qid)
{
	struct rdev *d = r->d;
	struct rdev_queue *q = &d->queues[qid];
	size_t out_len = r->len - (r->strip ? VLAN_HLEN : 0);
	struct rnic_rx_desc desc;
	u16 pi, idx = q->cons;
	u64 gpa, addr;
	u32 buf_len;

	if (rdev_ring_pi(d, qid, &pi))
		return;		/* bad slot: the queue is now in error */
	if (pi == q->cons) {
		RDEV_INC(d, rx_drop_no_buf);
		q->stats[RNIC_QUEUE_STAT_drops]++;
		return;
	}
	gpa = q->base + (u64)(idx & ((1U << q->log2) - 1)) * RNIC_RX_DESC_SIZE;
	if (plat_dma_read(d->p, gpa, &desc, sizeof(desc))) {
		RDEV_INC(d, dma_errors);
		q->stats[RNIC_QUEUE_STAT_errors]++;
		rx_complete(r, qid, idx, RNIC_CQE_DMA_ERROR, 0);
		rdev_queue_error(d, qid, RNIC_ERR_DMA_OOB, gpa);
		return;
	}
	if (desc.reserved) {
		RDEV_INC(d, bad_descriptors);
		q->stats[RNIC_QUEUE_STAT_errors]++;
		rx_complete(r, qid, idx, RNIC_CQE_BAD_DESC, 0);
		rdev_queue_error(d, qid, RNIC_ERR_BAD_DESC, idx);
		return;
	}
	addr = le64_to_cpu(desc.addr);
	buf_len = le32_to_cpu(desc.len);
	if (!buf_len)
		buf_len = q->rx_buf_size;
	/* The whole posted buffer must be guest RAM, whatever we write. */
	if (!plat_dma_ptr(d->p, addr, buf_len)) {
		RDEV_INC(d, dma_errors);
		q->stats[RNIC_QUEUE_STAT_errors]++;
		rx_complete(r, qid, idx, RNIC_CQE_DMA_ERROR, 0);
		rdev_queue_error(d, qid, RNIC_ERR_DMA_OOB, addr);
		return;
	}
	q->cons++;
	if (out_len > buf_len) {
		RDEV_INC(d, rx_drop_too_long);
		q->stats[RNIC_QUEUE_STAT_drops]++;
		rx_complete(r, qid, idx, RNIC_CQE_TOO_LONG, out_len);
		return;
	}
	if (rx_copy(r, addr, out_len)) {
		/* Unreachable: the buffer was checked above. */
		RDEV_INC(d, dma_errors);
		rdev_queue_error(d, qid, RNIC_ERR_INTERNAL, addr);
		return;
	}
	count_rx(d, r->rx_class, r->len);
	q->stats[RNIC_QUEUE_STAT_frames]++;
	q->stats[RNIC_QUEUE_STAT_bytes] += out_len;
	rx_complete(r, qid, idx, RNIC_CQE_OK, out_len);
}

void rdev_rx_frame(struct rdev *d, const u8 *frame, size_t len)
{
	struct rx_ctx r = { .d = d, .frame = frame, .len = len };
	struct rdev_port *port = &d->port;
	enum pkt_class cls;

	if (!d->link_up) {
		RDEV_INC(d, rx_drop_link_down);
		return;
	}
	if (!frame || len < ETH_HLEN) {
		RDEV_INC(d, rx_drop_malformed);
		return;
	}
	if (len > (size_t)port->mtu + RNIC_FRAME_OVERHEAD) {
		RDEV_INC(d, rx_drop_too_long);
		return;
	}
	cls = pkt_classify(frame, len, port->udp_port, &r.info);
	switch (cls) {
	case PKT_CLASS_PFC:
		rdev_pfc_rx(d, frame, len);
		return;
	case PKT_CLASS_MALFORMED:
		RDEV_INC(d, rx_drop_malformed);
		if (d->rdma)
			d->engine->rx_malformed(d, frame, len);
		return;
	case PKT_CLASS_ROCE_V1:
		r.rx_class = RNIC_RX_CLASS_ROCE_V1;
		break;
	case PKT_CLASS_ROCE_V2_IPV4:
		r.rx_class = RNIC_RX_CLASS_ROCE_V2_IPV4;
		break;
	case PKT_CLASS_ROCE_V2_IPV6:
		r.rx_class = RNIC_RX_CLASS_ROCE_V2_IPV6;
		break;
	default:
		r.rx_class = RNIC_RX_CLASS_ETH;
		break;
	}
	/* RoCE frames belong to the transport, never to a ring. */
	if (r.rx_class != RNIC_RX_CLASS_ETH) {
		if (!d->enabled) {	/* no transport until an enable */
			RDEV_INC(d, rx_drop_no_queue);
			return;
		}
		count_rx(d, r.rx_class, len);
		d->engine->rx_frame(d, frame, len, &r.info);
		return;
	}
	if (!d->enabled || !rdev_queue_usable(d, d->eth_rx)) {
		RDEV_INC(d, rx_drop_no_queue);
		return;
	}
	if (r.info.vlan && (port->flags & RNIC_PORT_F_RX_VLAN_STRIP) &&
	    (d->caps & RNIC_CAP_VLAN)) {
		r.strip = true;
		r.vlan_tci = r.info.vlan_tci;
		r.cqe_flags |= RNIC_CQE_F_VLAN_STRIPPED;
	}
	rx_deliver(&r, d->eth_rx);
}
