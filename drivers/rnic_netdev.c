// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic Ethernet netdev: one TX ring and one RX ring (the device's ETH_TX
 * and ETH_RX queues) completing to one CQ on MSI-X vector RNIC_VEC_ETH,
 * drained by NAPI.
 *
 * Every frame is one TX descriptor: the linear part and up to two page
 * fragments go in the descriptor's inline SGEs, anything more fragmented
 * is linearized. The device completes descriptors in order, one CQE each,
 * so a ring's consumer index is also the index the next CQE must name;
 * a CQE that says otherwise is counted and ignored, and the datapath is
 * restarted (the device is as untrusted as the wire).
 *
 * RX buffers are linear skbs of MTU + RNIC_FRAME_OVERHEAD bytes, the
 * largest frame the device accepts. A buffer is handed to the stack only
 * once its replacement is allocated; otherwise the frame is dropped and
 * the buffer posted again, so the ring never runs dry.
 *
 * Sizing: the CQ holds twice the entries of both rings together. Entries
 * the device has written and not yet been told we consumed are at most
 * one per posted descriptor (both rings, 2 * depth) plus those popped
 * since the last consumer-index update, which every poll sends and which
 * rnic_poll() caps at depth per ring: 4 * depth, so the CQ cannot overflow.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/netdev_queues.h>

#include "rnic_compat.h"
#include "rnic.h"
#include "rnic_param.h"

/* One descriptor per frame: stop when the next frame would not fit. */
#define RNIC_TX_STOP_THRESH	1

/**
 * struct rnic_ring_stats - counters of one ring, written by one context
 * @syncp: lets 32-bit readers see consistent 64-bit values
 * @val: enum rnic_ring_stat; each instance uses the entries its writer owns
 */
struct rnic_ring_stats {
	struct u64_stats_sync syncp;
	u64_stats_t val[RNIC_NUM_RING_STATS];
};

/**
 * struct rnic_tx_buf - what a posted TX descriptor holds on to
 * @skb: the frame, freed on completion
 * @dma: DMA addresses of its pieces (u64: what rnic_tx_desc_build() takes)
 * @len: their lengths
 * @nr: number of pieces
 * @head: piece 0 is the linear part (dma_map_single), not a page fragment
 */
struct rnic_tx_buf {
	struct sk_buff *skb;
	u64 dma[RNIC_TX_INLINE_SGE];
	u32 len[RNIC_TX_INLINE_SGE];
	u8 nr;
	bool head;
};

/**
 * struct rnic_rx_buf - a posted RX buffer
 * @skb: linear skb of rnic_netdev.rx_buf_size bytes
 * @dma: its mapping
 */
struct rnic_rx_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
};

/**
 * struct rnic_netdev - private area of the rnic net_device
 * @rdev: the PCI function
 * @netdev: back pointer
 * @napi: drains @cq
 * @cq: completions of both rings
 * @txq: the ETH_TX ring
 * @rxq: the ETH_RX ring
 * @tx_bufs: per @txq slot
 * @rx_bufs: per @rxq slot
 * @ring_log2: log2 of the depth of both rings
 * @cq_log2: log2 of the depth of @cq
 * @tx_wake_thresh: free TX descriptors needed to wake a stopped queue
 * @rx_buf_size: RX buffer bytes, MTU + RNIC_FRAME_OVERHEAD
 * @irq: Linux IRQ of vector RNIC_VEC_ETH while @up
 * @up: rings, CQ and IRQ exist (ndo_open succeeded, no failed restart)
 * @restart_task: recreates the datapath after the device misbehaved
 * @speed_mbps: speed last logged, to log only changes
 * @rx_stats: written by NAPI (RX completions)
 * @tx_stats: written by NAPI (TX completions)
 * @xmit_stats: written by ndo_start_xmit
 * @irq_name: name shown in /proc/interrupts
 */
struct rnic_netdev {
	struct rnic_dev *rdev;
	struct net_device *netdev;
	struct napi_struct napi;
	struct rnic_cq cq;
	struct rnic_queue txq;
	struct rnic_queue rxq;
	struct rnic_tx_buf *tx_bufs;
	struct rnic_rx_buf *rx_bufs;
	u8 ring_log2;
	u8 cq_log2;
	u32 tx_wake_thresh;
	u32 rx_buf_size;
	int irq;
	bool up;
	struct work_struct restart_task;
	u32 speed_mbps;
	struct rnic_ring_stats rx_stats;
	struct rnic_ring_stats tx_stats;
	struct rnic_ring_stats xmit_stats;
	char irq_name[32];
};

static struct device *rnic_dma_dev(const struct rnic_netdev *priv)
{
	return &priv->rdev->pdev->dev;
}

static u32 rnic_ring_mask(const struct rnic_queue *q)
{
	return rnic_queue_depth(q) - 1;
}

/*
 * Free TX descriptors. NAPI advances ci while ndo_start_xmit advances pi,
 * so both are read once here; the netif_txq_* helpers supply the barriers.
 */
static u32 rnic_tx_avail(const struct rnic_netdev *priv)
{
	const struct rnic_queue *q = &priv->txq;

	return rnic_queue_depth(q) -
	       rnic_ring_used(READ_ONCE(q->pi), READ_ONCE(q->ci));
}

static void rnic_stats_add(struct rnic_ring_stats *s, enum rnic_ring_stat i,
			   u64 n)
{
	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->val[i], n);
	u64_stats_update_end(&s->syncp);
}

/* Add one writer's counters to @vals. */
static void rnic_stats_fetch(const struct rnic_ring_stats *s, u64 *vals)
{
	u64 tmp[RNIC_NUM_RING_STATS];
	unsigned int start, i;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		for (i = 0; i < RNIC_NUM_RING_STATS; i++)
			tmp[i] = u64_stats_read(&s->val[i]);
	} while (u64_stats_fetch_retry(&s->syncp, start));
	for (i = 0; i < RNIC_NUM_RING_STATS; i++)
		vals[i] += tmp[i];
}

/**
 * rnic_netdev_ring_stats() - per-ring counters for ethtool -S
 * @netdev: the rnic netdev
 * @vals: RNIC_NUM_RING_STATS values, in enum rnic_ring_stat order
 */
void rnic_netdev_ring_stats(struct net_device *netdev, u64 *vals)
{
	struct rnic_netdev *priv = netdev_priv(netdev);

	memset(vals, 0, RNIC_NUM_RING_STATS * sizeof(*vals));
	rnic_stats_fetch(&priv->rx_stats, vals);
	rnic_stats_fetch(&priv->tx_stats, vals);
	rnic_stats_fetch(&priv->xmit_stats, vals);
}

struct rnic_dev *rnic_netdev_rdev(struct net_device *netdev)
{
	struct rnic_netdev *priv = netdev_priv(netdev);

	return priv->rdev;
}

u32 rnic_netdev_ring_size(struct net_device *netdev)
{
	struct rnic_netdev *priv = netdev_priv(netdev);

	return 1U << priv->ring_log2;
}

/* SET_PORT with only the groups the netdev owns (MTU, MAC). */
static int rnic_port_set(struct rnic_netdev *priv, u32 valid, u32 mtu,
			 const u8 *mac)
{
	struct rnic_aq_set_port cmd = {};

	cmd.valid = cpu_to_le32(valid);
	if (valid & RNIC_PORT_VALID_MTU)
		cmd.mtu = cpu_to_le16(mtu);
	if (valid & RNIC_PORT_VALID_MAC)
		ether_addr_copy(cmd.mac, mac);
	return rnic_cmd_set_port(priv->rdev, &cmd);
}

/* Caller holds RTNL, which orders carrier changes from events and open. */
static void rnic_carrier_set(struct rnic_netdev *priv, bool up, u32 speed)
{
	struct net_device *netdev = priv->netdev;

	if (up == netif_carrier_ok(netdev) &&
	    (!up || speed == priv->speed_mbps))
		return;
	if (up) {
		priv->speed_mbps = speed;
		netif_carrier_on(netdev);
		netdev_info(netdev, "link up, %u Mb/s, full duplex\n", speed);
	} else {
		netif_carrier_off(netdev);
		netdev_info(netdev, "link down\n");
	}
}

/* Carrier from the device's current link word (it may have changed while
 * events could not be delivered to us).
 */
static void rnic_link_refresh(struct rnic_netdev *priv)
{
	struct rnic_port_attr attr;
	u32 link;

	if (rnic_cmd_query_port(priv->rdev, &attr))
		return;
	link = le32_to_cpu(attr.link);
	rnic_carrier_set(priv, link & RNIC_LINK_UP,
			 FIELD_GET(RNIC_LINK_SPEED_MBPS, link) ?:
			 priv->rdev->speed_mbps);
}

/**
 * rnic_netdev_link_change() - the device reported a link change
 * @rdev: the device
 * @up: new link state
 * @speed_mbps: port speed
 *
 * Called from the event work (process context, RTNL not held) while
 * rdev->netdev_ready is set.
 */
void rnic_netdev_link_change(struct rnic_dev *rdev, bool up, u32 speed_mbps)
{
	struct rnic_netdev *priv;

	if (!rdev->netdev)
		return;
	priv = netdev_priv(rdev->netdev);
	rtnl_lock();
	rnic_carrier_set(priv, up, speed_mbps);
	rtnl_unlock();
}

static void rnic_tx_unmap(struct rnic_netdev *priv, struct rnic_tx_buf *buf)
{
	struct device *dev = rnic_dma_dev(priv);
	unsigned int i;

	for (i = 0; i < buf->nr; i++) {
		if (i == 0 && buf->head)
			dma_unmap_single(dev, buf->dma[i], buf->len[i],
					 DMA_TO_DEVICE);
		else
			dma_unmap_page(dev, buf->dma[i], buf->len[i],
				       DMA_TO_DEVICE);
	}
	buf->nr = 0;
}

/* Map the skb's pieces into @buf; on failure nothing stays mapped. */
static int rnic_tx_map(struct rnic_netdev *priv, struct sk_buff *skb,
		       struct rnic_tx_buf *buf)
{
	struct device *dev = rnic_dma_dev(priv);
	unsigned int hlen = skb_headlen(skb);
	unsigned int i;
	dma_addr_t dma;

	buf->nr = 0;
	buf->head = hlen != 0;
	if (hlen) {
		dma = dma_map_single(dev, skb->data, hlen, DMA_TO_DEVICE);
		if (dma_mapping_error(dev, dma))
			return -ENOMEM;
		buf->dma[0] = dma;
		buf->len[0] = hlen;
		buf->nr = 1;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		u32 len = skb_frag_size(frag);

		/* the device rejects empty SGEs */
		if (!len)
			continue;
		dma = skb_frag_dma_map(dev, frag, 0, len, DMA_TO_DEVICE);
		if (dma_mapping_error(dev, dma)) {
			rnic_tx_unmap(priv, buf);
			return -ENOMEM;
		}
		buf->dma[buf->nr] = dma;
		buf->len[buf->nr] = len;
		buf->nr++;
	}
	return 0;
}

static netdev_tx_t rnic_start_xmit(struct sk_buff *skb,
				   struct net_device *netdev)
{
	struct rnic_netdev *priv = netdev_priv(netdev);
	struct netdev_queue *txq = netdev_get_tx_queue(netdev, 0);
	struct rnic_queue *q = &priv->txq;
	u16 flags = 0, tci = 0;
	struct rnic_tx_buf *buf;
	unsigned int bytes;

	if (unlikely(!rnic_tx_avail(priv))) {
		/* the stop below should have prevented this */
		netif_tx_stop_queue(txq);
		rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_tx_busy);
		return NETDEV_TX_BUSY;
	}

	/* the device wants at least a minimum Ethernet frame */
	if (skb_put_padto(skb, ETH_ZLEN))
		goto dropped;
	/* linear part + frags must fit in the inline SGEs */
	if (skb_shinfo(skb)->nr_frags >= RNIC_TX_INLINE_SGE &&
	    skb_linearize(skb))
		goto drop;

	buf = &priv->tx_bufs[q->pi & rnic_ring_mask(q)];
	if (rnic_tx_map(priv, skb, buf))
		goto drop;
	if (skb_vlan_tag_present(skb)) {
		flags |= RNIC_TX_F_VLAN_INSERT;
		tci = skb_vlan_tag_get(skb);
	}
	if (rnic_tx_desc_build(rnic_queue_slot(q, q->pi), flags, tci,
			       buf->dma, buf->len, buf->nr)) {
		rnic_tx_unmap(priv, buf);
		goto drop;
	}
	buf->skb = skb;
	bytes = skb->len;
	skb_tx_timestamp(skb);

	WRITE_ONCE(q->pi, q->pi + 1);
	if (!netif_txq_maybe_stop(txq, rnic_tx_avail(priv),
				  RNIC_TX_STOP_THRESH, priv->tx_wake_thresh))
		rnic_stats_add(&priv->xmit_stats, RNIC_RING_STAT_tx_stopped, 1);
	/* true unless more frames follow and the queue still runs */
	if (__netdev_tx_sent_queue(txq, bytes, netdev_xmit_more()))
		rnic_queue_ring(priv->rdev, q);
	return NETDEV_TX_OK;

drop:
	dev_kfree_skb_any(skb);
dropped:
	rnic_stats_add(&priv->xmit_stats, RNIC_RING_STAT_tx_dropped, 1);
	rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_tx_dropped);
	return NETDEV_TX_OK;
}

/* Free every frame still on the TX ring (the device no longer has it). */
static void rnic_tx_free_all(struct rnic_netdev *priv)
{
	struct rnic_queue *q = &priv->txq;
	struct rnic_tx_buf *buf;

	for (; q->ci != q->pi; q->ci++) {
		buf = &priv->tx_bufs[q->ci & rnic_ring_mask(q)];
		rnic_tx_unmap(priv, buf);
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
	}
	netdev_tx_reset_queue(netdev_get_tx_queue(priv->netdev, 0));
}

/* TX completions of one poll: all of them for BQL, the sent ones for stats */
struct rnic_tx_done {
	unsigned int pkts, bytes;
	unsigned int ok_pkts, errors;
	u64 ok_bytes;
};

static void rnic_tx_cqe(struct rnic_netdev *priv, const struct rnic_cqe *cqe,
			struct rnic_tx_done *done, int budget)
{
	struct rnic_queue *q = &priv->txq;
	struct rnic_tx_buf *buf;

	if (le16_to_cpu(cqe->queue_id) != q->id ||
	    le16_to_cpu(cqe->desc_idx) != q->ci ||
	    !rnic_ring_used(READ_ONCE(q->pi), q->ci)) {
		rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_tx_bad_cqe);
		netdev_err_once(priv->netdev,
				"bad TX completion (queue %u index %u, expected %u index %u)\n",
				le16_to_cpu(cqe->queue_id),
				le16_to_cpu(cqe->desc_idx), q->id, q->ci);
		schedule_work(&priv->restart_task);
		return;
	}
	buf = &priv->tx_bufs[q->ci & rnic_ring_mask(q)];
	rnic_tx_unmap(priv, buf);
	done->pkts++;
	done->bytes += buf->skb->len;
	if (cqe->status == RNIC_CQE_OK) {
		done->ok_pkts++;
		done->ok_bytes += buf->skb->len;
	} else {
		/* FLUSHED (link down) and TOO_LONG leave the queue usable */
		done->errors++;
		if (cqe->status != RNIC_CQE_FLUSHED &&
		    cqe->status != RNIC_CQE_TOO_LONG)
			schedule_work(&priv->restart_task);
	}
	napi_consume_skb(buf->skb, budget);
	buf->skb = NULL;
	/* publishes the slot to ndo_start_xmit */
	WRITE_ONCE(q->ci, q->ci + 1);
}

static void rnic_tx_done(struct rnic_netdev *priv, struct rnic_tx_done *done)
{
	struct netdev_queue *txq = netdev_get_tx_queue(priv->netdev, 0);
	struct rnic_ring_stats *s = &priv->tx_stats;

	if (!done->pkts)
		return;
	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->val[RNIC_RING_STAT_tx_packets], done->ok_pkts);
	u64_stats_add(&s->val[RNIC_RING_STAT_tx_bytes], done->ok_bytes);
	u64_stats_add(&s->val[RNIC_RING_STAT_tx_errors], done->errors);
	u64_stats_update_end(&s->syncp);

	if (!netif_txq_completed_wake(txq, done->pkts, done->bytes,
				      rnic_tx_avail(priv),
				      priv->tx_wake_thresh))
		rnic_stats_add(s, RNIC_RING_STAT_tx_woken, 1);
}

static int rnic_rx_alloc(struct rnic_netdev *priv, struct rnic_rx_buf *buf,
			 bool in_napi)
{
	struct device *dev = rnic_dma_dev(priv);
	struct sk_buff *skb;
	dma_addr_t dma;

	if (in_napi)
		skb = napi_alloc_skb(&priv->napi, priv->rx_buf_size);
	else	/* ndo_open, MTU change: may sleep, and jumbo buffers are big */
		skb = __netdev_alloc_skb_ip_align(priv->netdev,
						  priv->rx_buf_size, GFP_KERNEL);
	if (!skb)
		goto fail;
	dma = dma_map_single(dev, skb->data, priv->rx_buf_size,
			     DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		dev_kfree_skb_any(skb);
		goto fail;
	}
	buf->skb = skb;
	buf->dma = dma;
	return 0;

fail:
	rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_rx_alloc_failed);
	return -ENOMEM;
}

static void rnic_rx_unmap(struct rnic_netdev *priv, struct rnic_rx_buf *buf)
{
	dma_unmap_single(rnic_dma_dev(priv), buf->dma, priv->rx_buf_size,
			 DMA_FROM_DEVICE);
}

/* Write the descriptor for @buf at the producer index (doorbell later). */
static void rnic_rx_post(struct rnic_netdev *priv,
			 const struct rnic_rx_buf *buf)
{
	struct rnic_queue *q = &priv->rxq;
	struct rnic_rx_desc *desc = rnic_queue_slot(q, q->pi);

	priv->rx_bufs[q->pi & rnic_ring_mask(q)] = *buf;
	desc->addr = cpu_to_le64(buf->dma);
	desc->len = cpu_to_le32(priv->rx_buf_size);
	desc->reserved = 0;
	q->pi++;
}

/* Post new buffers into every free RX slot. Return: buffers posted. */
static unsigned int rnic_rx_fill(struct rnic_netdev *priv, bool in_napi)
{
	struct rnic_rx_buf buf;
	unsigned int n = 0;

	while (rnic_queue_free(&priv->rxq)) {
		if (rnic_rx_alloc(priv, &buf, in_napi))
			break;
		rnic_rx_post(priv, &buf);
		n++;
	}
	return n;
}

static void rnic_rx_free_all(struct rnic_netdev *priv)
{
	struct rnic_queue *q = &priv->rxq;
	struct rnic_rx_buf *buf;

	for (; q->ci != q->pi; q->ci++) {
		buf = &priv->rx_bufs[q->ci & rnic_ring_mask(q)];
		rnic_rx_unmap(priv, buf);
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
	}
}

/*
 * RX completions of one poll. @dropped: good frames without a replacement
 * buffer; @posted: descriptors written since the last RX doorbell.
 */
struct rnic_rx_done {
	unsigned int pkts, errors, dropped, too_long, posted;
	u64 bytes;
};

static void rnic_rx_cqe(struct rnic_netdev *priv, const struct rnic_cqe *cqe,
			struct rnic_rx_done *done)
{
	struct rnic_queue *q = &priv->rxq;
	struct rnic_rx_buf buf, fresh;
	u32 len = le32_to_cpu(cqe->byte_len);
	struct sk_buff *skb;

	if (le16_to_cpu(cqe->queue_id) != q->id ||
	    le16_to_cpu(cqe->desc_idx) != q->ci || !rnic_ring_used(q->pi, q->ci)) {
		rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_rx_bad_cqe);
		netdev_err_once(priv->netdev,
				"bad RX completion (queue %u index %u, expected %u index %u)\n",
				le16_to_cpu(cqe->queue_id),
				le16_to_cpu(cqe->desc_idx), q->id, q->ci);
		done->errors++;
		schedule_work(&priv->restart_task);
		return;
	}
	buf = priv->rx_bufs[q->ci & rnic_ring_mask(q)];
	q->ci++;

	if (cqe->status != RNIC_CQE_OK) {
		done->errors++;
		if (cqe->status == RNIC_CQE_TOO_LONG)
			done->too_long++;
		else
			/* DMA_ERROR, BAD_DESC: the queue is now stopped */
			schedule_work(&priv->restart_task);
		goto recycle;
	}
	if (len < ETH_HLEN || len > priv->rx_buf_size) {
		rnic_stat_inc(priv->rdev, RNIC_DRV_STAT_rx_bad_cqe);
		done->errors++;
		goto recycle;
	}
	if (rnic_rx_alloc(priv, &fresh, true)) {
		done->dropped++;
		goto recycle;
	}

	rnic_rx_unmap(priv, &buf);
	skb = buf.skb;
	skb_put(skb, len);
	if (le32_to_cpu(cqe->flags) & RNIC_CQE_F_VLAN_STRIPPED)
		__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
				       le16_to_cpu(cqe->vlan_tci));
	skb->protocol = eth_type_trans(skb, priv->netdev);
	skb_record_rx_queue(skb, 0);
	done->pkts++;
	done->bytes += len;
	napi_gro_receive(&priv->napi, skb);
	rnic_rx_post(priv, &fresh);
	done->posted++;
	return;

recycle:
	/* the CPU never touched it: hand it back as it is */
	rnic_rx_post(priv, &buf);
	done->posted++;
}

static void rnic_rx_done(struct rnic_netdev *priv, struct rnic_rx_done *done)
{
	struct rnic_ring_stats *s = &priv->rx_stats;

	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->val[RNIC_RING_STAT_rx_packets], done->pkts);
	u64_stats_add(&s->val[RNIC_RING_STAT_rx_bytes], done->bytes);
	u64_stats_add(&s->val[RNIC_RING_STAT_rx_errors], done->errors);
	u64_stats_add(&s->val[RNIC_RING_STAT_rx_dropped], done->dropped);
	u64_stats_add(&s->val[RNIC_RING_STAT_rx_too_long], done->too_long);
	u64_stats_update_end(&s->syncp);
}

/**
 * rnic_poll() - NAPI poll: drain the Ethernet CQ
 * @napi: the netdev's NAPI context
 * @budget: RX frames we may pass up
 *
 * RX completions count against @budget; each ring's completions are also
 * capped at its depth per poll, which bounds the CQEs consumed between two
 * consumer-index updates (see the sizing note at the top).
 *
 * Return: RX work done, or @budget to be polled again.
 */
static int rnic_poll(struct napi_struct *napi, int budget)
{
	struct rnic_netdev *priv = container_of(napi, struct rnic_netdev, napi);
	u32 tx_cap = rnic_queue_depth(&priv->txq);
	int rx_cap = min_t(int, budget, rnic_queue_depth(&priv->rxq));
	struct rnic_dev *rdev = priv->rdev;
	struct rnic_tx_done tx = {};
	struct rnic_rx_done rx = {};
	unsigned int tx_seen = 0;
	int rx_seen = 0;
	struct rnic_cqe *slot, cqe;

	while (rx_seen < rx_cap && tx_seen < tx_cap) {
		slot = rnic_cq_peek(&priv->cq);
		if (!slot)
			break;
		/* one copy: the device cannot change it under our checks */
		cqe = *slot;
		rnic_cq_pop(&priv->cq);
		if (le32_to_cpu(cqe.flags) & RNIC_CQE_F_TX) {
			tx_seen++;
			rnic_tx_cqe(priv, &cqe, &tx, budget);
		} else {
			rx_seen++;
			rnic_rx_cqe(priv, &cqe, &rx);
		}
	}

	rnic_tx_done(priv, &tx);
	if (rx_seen) {
		rnic_rx_done(priv, &rx);
		/* top up slots left empty by an earlier allocation failure */
		if (rnic_queue_free(&priv->rxq))
			rx.posted += rnic_rx_fill(priv, true);
		if (rx.posted)
			rnic_queue_ring(rdev, &priv->rxq);
	}

	/* stopped by a cap rather than an empty CQ: poll again */
	if (tx_seen >= tx_cap || rx_seen >= rx_cap)
		rx_seen = budget;
	if (rx_seen < budget && napi_complete_done(napi, rx_seen))
		/* also publishes the consumer index */
		rnic_cq_arm(rdev, &priv->cq);
	else if (rx_seen || tx_seen)
		rnic_cq_update_ci(rdev, &priv->cq);
	return rx_seen;
}

static irqreturn_t rnic_eth_irq(int irq, void *data)
{
	struct rnic_netdev *priv = data;

	/* arming is one-shot: nothing to mask until the poll re-arms */
	napi_schedule_irqoff(&priv->napi);
	return IRQ_HANDLED;
}

static void rnic_bufs_free(struct rnic_netdev *priv)
{
	kvfree(priv->tx_bufs);
	priv->tx_bufs = NULL;
	kvfree(priv->rx_bufs);
	priv->rx_bufs = NULL;
}

/**
 * rnic_up() - create the CQ and rings, fill RX, enable NAPI and the IRQ
 * @priv: the netdev, with RTNL held
 *
 * Return: 0 or a negative errno (then nothing is left allocated).
 */
static int rnic_up(struct rnic_netdev *priv)
{
	struct net_device *netdev = priv->netdev;
	struct rnic_dev *rdev = priv->rdev;
	u32 depth = 1U << priv->ring_log2;
	int err, irq;

	if (rdev->fatal)
		return -EIO;
	irq = rnic_irq_vector(rdev, RNIC_VEC_ETH);
	if (irq < 0)
		return irq;
	priv->rx_buf_size = netdev->mtu + RNIC_FRAME_OVERHEAD;

	priv->tx_bufs = kvcalloc(depth, sizeof(*priv->tx_bufs), GFP_KERNEL);
	priv->rx_bufs = kvcalloc(depth, sizeof(*priv->rx_bufs), GFP_KERNEL);
	if (!priv->tx_bufs || !priv->rx_bufs) {
		err = -ENOMEM;
		goto err_free_bufs;
	}

	err = rnic_cq_create(rdev, &priv->cq, priv->cq_log2, RNIC_VEC_ETH);
	if (err)
		goto err_free_bufs;
	err = rnic_queue_create(rdev, &priv->txq, RNIC_QUEUE_ETH_TX,
				priv->ring_log2, &priv->cq, 0, 0);
	if (err)
		goto err_destroy_cq;
	err = rnic_queue_create(rdev, &priv->rxq, RNIC_QUEUE_ETH_RX,
				priv->ring_log2, &priv->cq, priv->rx_buf_size,
				0);
	if (err)
		goto err_destroy_txq;

	err = rnic_port_set(priv, RNIC_PORT_VALID_MTU | RNIC_PORT_VALID_MAC,
			    netdev->mtu, netdev->dev_addr);
	if (err) {
		netdev_err(netdev, "cannot program MTU %u and MAC: %d\n",
			   netdev->mtu, err);
		goto err_destroy_rxq;
	}

	if (!rnic_rx_fill(priv, false)) {
		err = -ENOMEM;
		goto err_destroy_rxq;
	}
	rnic_queue_ring(rdev, &priv->rxq);

	err = request_irq(irq, rnic_eth_irq, 0, priv->irq_name, priv);
	if (err) {
		netdev_err(netdev, "cannot request IRQ %d: %d\n", irq, err);
		goto err_destroy_rxq;
	}
	priv->irq = irq;

	napi_enable(&priv->napi);
	/* frames that arrived meanwhile raise the interrupt at once */
	rnic_cq_arm(rdev, &priv->cq);
	netif_tx_start_all_queues(netdev);
	priv->up = true;
	return 0;

err_destroy_rxq:
	rnic_queue_destroy(rdev, &priv->rxq);
	/* buffers of a ring the device may still use are leaked, not freed */
	if (!priv->rxq.va)
		rnic_rx_free_all(priv);
err_destroy_txq:
	rnic_queue_destroy(rdev, &priv->txq);
err_destroy_cq:
	rnic_cq_destroy(rdev, &priv->cq);
err_free_bufs:
	if (!priv->rxq.va && !priv->txq.va)
		rnic_bufs_free(priv);
	return err;
}

/**
 * rnic_down() - undo rnic_up()
 * @priv: the netdev, with RTNL held
 *
 * The rings are destroyed before their buffers are unmapped: after
 * DESTROY_QUEUE completes the device no longer touches them. If the device
 * refused, the buffers are leaked rather than freed under its DMA.
 */
static void rnic_down(struct rnic_netdev *priv)
{
	struct rnic_dev *rdev = priv->rdev;

	if (!priv->up)
		return;
	priv->up = false;

	/* NAPI first, so that it cannot wake the queue we stop next */
	napi_disable(&priv->napi);
	netif_tx_disable(priv->netdev);

	rnic_queue_destroy(rdev, &priv->txq);
	rnic_queue_destroy(rdev, &priv->rxq);
	free_irq(priv->irq, priv);
	rnic_cq_destroy(rdev, &priv->cq);

	if (!priv->txq.va)
		rnic_tx_free_all(priv);
	if (!priv->rxq.va)
		rnic_rx_free_all(priv);
	if (!priv->txq.va && !priv->rxq.va)
		rnic_bufs_free(priv);
	else
		netdev_err(priv->netdev, "device kept its rings; leaking their buffers\n");
}

/*
 * The device said something the driver cannot reconcile with its rings
 * (a bad CQE, a queue in the error state, a stuck TX ring). Recreating the
 * queues resyncs both sides; that needs RTNL and sleeps, hence a work item.
 */
static void rnic_restart_task(struct work_struct *work)
{
	struct rnic_netdev *priv = container_of(work, struct rnic_netdev,
						restart_task);
	int err;

	rtnl_lock();
	if (netif_running(priv->netdev) && !priv->rdev->fatal) {
		netdev_warn(priv->netdev, "restarting the datapath\n");
		rnic_down(priv);
		err = rnic_up(priv);
		if (err)
			netdev_err(priv->netdev, "datapath restart failed: %d\n",
				   err);
	}
	rtnl_unlock();
}

static int rnic_open(struct net_device *netdev)
{
	struct rnic_netdev *priv = netdev_priv(netdev);
	int err;

	err = rnic_up(priv);
	if (err)
		return err;
	rnic_link_refresh(priv);
	return 0;
}

static int rnic_stop(struct net_device *netdev)
{
	rnic_down(netdev_priv(netdev));
	return 0;
}

/*
 * The port MTU bounds what the device sends and accepts on every queue,
 * RoCE ones included, so it is programmed even while the netdev is down.
 * A running datapath is recreated for the new RX buffer size.
 */
static int rnic_change_mtu(struct net_device *netdev, int new_mtu)
{
	struct rnic_netdev *priv = netdev_priv(netdev);
	unsigned int old_mtu = netdev->mtu;
	int err;

	if (!netif_running(netdev)) {
		err = rnic_port_set(priv, RNIC_PORT_VALID_MTU, new_mtu, NULL);
		if (err)
			return err;
		WRITE_ONCE(netdev->mtu, new_mtu);
		return 0;
	}

	rnic_down(priv);
	WRITE_ONCE(netdev->mtu, new_mtu);
	err = rnic_up(priv);
	if (!err)
		return 0;
	netdev_err(netdev, "cannot restart with MTU %d: %d\n", new_mtu, err);
	WRITE_ONCE(netdev->mtu, old_mtu);
	if (rnic_up(priv))
		netdev_err(netdev, "cannot restart with MTU %u either; bring the interface down and up\n",
			   old_mtu);
	return err;
}

static int rnic_set_mac_address(struct net_device *netdev, void *p)
{
	struct rnic_netdev *priv = netdev_priv(netdev);
	struct sockaddr *addr = p;
	int err;

	err = eth_prepare_mac_addr_change(netdev, p);
	if (err)
		return err;
	/* the device does not filter RX by MAC; it sources pause frames */
	err = rnic_port_set(priv, RNIC_PORT_VALID_MAC, 0, addr->sa_data);
	if (err)
		return err;
	eth_commit_mac_addr_change(netdev, p);
	return 0;
}

static void rnic_get_stats64(struct net_device *netdev,
			     struct rtnl_link_stats64 *stats)
{
	u64 v[RNIC_NUM_RING_STATS];

	rnic_netdev_ring_stats(netdev, v);
	stats->rx_packets = v[RNIC_RING_STAT_rx_packets];
	stats->rx_bytes = v[RNIC_RING_STAT_rx_bytes];
	stats->rx_errors = v[RNIC_RING_STAT_rx_errors];
	stats->rx_dropped = v[RNIC_RING_STAT_rx_dropped];
	stats->rx_length_errors = v[RNIC_RING_STAT_rx_too_long];
	stats->tx_packets = v[RNIC_RING_STAT_tx_packets];
	stats->tx_bytes = v[RNIC_RING_STAT_tx_bytes];
	stats->tx_errors = v[RNIC_RING_STAT_tx_errors];
	stats->tx_dropped = v[RNIC_RING_STAT_tx_dropped];
}

static void rnic_tx_timeout(struct net_device *netdev, unsigned int txqueue)
{
	struct rnic_netdev *priv = netdev_priv(netdev);

	netdev_warn(netdev, "TX queue %u timed out: %u of %u descriptors outstanding\n",
		    txqueue, rnic_ring_used(READ_ONCE(priv->txq.pi),
					    READ_ONCE(priv->txq.ci)),
		    rnic_queue_depth(&priv->txq));
	schedule_work(&priv->restart_task);
}

static const struct net_device_ops rnic_netdev_ops = {
	.ndo_open = rnic_open,
	.ndo_stop = rnic_stop,
	.ndo_start_xmit = rnic_start_xmit,
	.ndo_change_mtu = rnic_change_mtu,
	.ndo_set_mac_address = rnic_set_mac_address,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_get_stats64 = rnic_get_stats64,
	.ndo_tx_timeout = rnic_tx_timeout,
};

/*
 * Ring depth from the eth_ring_size parameter, within what the device
 * offers; the CQ needs four times the depth (see the top of the file).
 */
static int rnic_ring_sizes(struct rnic_netdev *priv)
{
	struct rnic_dev *rdev = priv->rdev;
	int log2 = ilog2(rnic_params.eth_ring_size);

	log2 = min3(log2, (int)rdev->max_ring_log2, rdev->max_cq_log2 - 2);
	if (log2 < RNIC_RING_LOG2_MIN)
		return -EINVAL;
	if ((1U << log2) != rnic_params.eth_ring_size)
		rnic_info(rdev, "eth_ring_size %u exceeds what the device offers; using %u\n",
			  rnic_params.eth_ring_size, 1U << log2);
	priv->ring_log2 = log2;
	priv->cq_log2 = log2 + 2;
	priv->tx_wake_thresh = max(1U << log2 >> 2, RNIC_TX_STOP_THRESH);
	return 0;
}

/**
 * rnic_netdev_init() - create and register the Ethernet netdev
 * @rdev: a running device (admin and event queues up, limits queried)
 * @ethtool_ops: the netdev's ethtool operations (rnic_ethtool.c)
 *
 * The largest MTU is max_frame - RNIC_FRAME_OVERHEAD, the contract's
 * SET_PORT bound. The RoCE ICRC is not subtracted: it travels inside the
 * L3 packet (in the UDP payload for RoCE v2, after the GRH payload for
 * RoCE v1), so the RoCE side fits its payload to the MTU as IP does.
 *
 * Return: 0 or a negative errno.
 */
int rnic_netdev_init(struct rnic_dev *rdev,
		     const struct ethtool_ops *ethtool_ops)
{
	struct net_device *netdev;
	struct rnic_netdev *priv;
	int err;

	if (rdev->max_frame < RNIC_MTU_MIN + RNIC_FRAME_OVERHEAD)
		return -EINVAL;

	netdev = alloc_etherdev(sizeof(*priv));
	if (!netdev)
		return -ENOMEM;
	SET_NETDEV_DEV(netdev, &rdev->pdev->dev);
	priv = netdev_priv(netdev);
	priv->rdev = rdev;
	priv->netdev = netdev;
	err = rnic_ring_sizes(priv);
	if (err) {
		rnic_err(rdev, "device rings (2^%u) or CQs (2^%u) too small for the netdev\n",
			 rdev->max_ring_log2, rdev->max_cq_log2);
		goto err_free;
	}
	u64_stats_init(&priv->rx_stats.syncp);
	u64_stats_init(&priv->tx_stats.syncp);
	u64_stats_init(&priv->xmit_stats.syncp);
	INIT_WORK(&priv->restart_task, rnic_restart_task);
	snprintf(priv->irq_name, sizeof(priv->irq_name), "%s-eth@%s",
		 DRV_MODULE_NAME, pci_name(rdev->pdev));

	netdev->netdev_ops = &rnic_netdev_ops;
	netdev->ethtool_ops = ethtool_ops;
	netdev->watchdog_timeo = 5 * HZ;
	netdev->min_mtu = RNIC_MTU_MIN;
	netdev->max_mtu = min_t(u32, rdev->max_frame,
				RNIC_RX_BUF_MAX) - RNIC_FRAME_OVERHEAD;
	netdev->mtu = min_t(unsigned int, ETH_DATA_LEN, netdev->max_mtu);
	netdev->hw_features = NETIF_F_SG;
	netdev->features = NETIF_F_SG | NETIF_F_HIGHDMA;
	if (rdev->caps & RNIC_CAP_VLAN)
		netdev->features |= NETIF_F_HW_VLAN_CTAG_TX;
	/* the MAC matters only for pause frames the device sends */
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev_addr_set(netdev, rdev->mac);
	netif_napi_add(netdev, &priv->napi, rnic_poll);
	netif_carrier_off(netdev);

	rdev->netdev = netdev;
	err = register_netdev(netdev);
	if (err) {
		rnic_err(rdev, "cannot register the netdev: %d\n", err);
		goto err_napi;
	}
	netdev_info(netdev, "MAC %pM, MTU %u (max %u), %u-descriptor rings\n",
		    netdev->dev_addr, netdev->mtu, netdev->max_mtu,
		    1U << priv->ring_log2);
	return 0;

err_napi:
	rdev->netdev = NULL;
	netif_napi_del(&priv->napi);
err_free:
	free_netdev(netdev);
	return err;
}

/**
 * rnic_netdev_destroy() - unregister and free the netdev
 * @rdev: the device; events no longer reach the netdev (netdev_ready off)
 */
void rnic_netdev_destroy(struct rnic_dev *rdev)
{
	struct net_device *netdev = rdev->netdev;
	struct rnic_netdev *priv;

	if (!netdev)
		return;
	priv = netdev_priv(netdev);
	/* closes the device: rnic_down() frees rings and buffers */
	unregister_netdev(netdev);
	/* a restart queued meanwhile finds the netdev down and does nothing */
	cancel_work_sync(&priv->restart_task);
	netif_napi_del(&priv->napi);
	rdev->netdev = NULL;
	free_netdev(netdev);
}
