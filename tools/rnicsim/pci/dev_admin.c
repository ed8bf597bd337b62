// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: the admin queue (doorbell vector 1) and its
 * commands. A command that fails has no effect.
 */
#include <stdio.h>
#include <string.h>

#include "pci/dev_priv.h"

static bool all_zero(const void *p, size_t n)
{
	const u8 *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* Write @len bytes of a result, clipped to the driver's buffer. */
static u8 put_result(struct rdev *d, u64 addr, u32 buf_len, const void *res,
		     size_t len)
{
	if (plat_dma_write(d->p, addr, res, len < buf_len ? len : buf_len)) {
		RDEV_INC(d, dma_errors);
		return RNIC_AQ_BAD_ADDR;
	}
	return RNIC_AQ_SUCCESS;
}

static u8 query_device(struct rdev *d, const struct rnic_aq_query *c,
		       u32 *result)
{
	struct rnic_device_attr a = {};

	if (c->scope || c->id)
		return RNIC_AQ_BAD_PARAM;
	/* The ABI in effect: 2.x, the only major an enable can give. */
	a.abi_major = cpu_to_le16(RNIC_ABI2_MAJOR);
	a.abi_minor = cpu_to_le16(RNIC_ABI2_MINOR);
	a.caps = cpu_to_le32(d->caps);
	memcpy(a.mac, d->cfg.mac, sizeof(a.mac));
	a.num_msix = cpu_to_le16(d->cfg.num_vectors);
	a.max_queues = cpu_to_le16(RDEV_MAX_QUEUES);
	a.max_cqs = cpu_to_le16(RDEV_MAX_CQS);
	a.max_ring_log2 = RDEV_MAX_RING_LOG2;
	a.max_cq_log2 = RDEV_MAX_CQ_LOG2;
	a.max_tx_sge = RNIC_TX_MAX_SGE;
	a.max_frame = cpu_to_le32(RDEV_MAX_FRAME);
	a.speed_mbps = cpu_to_le32(RDEV_SPEED_MBPS);
	a.num_port_stats = cpu_to_le16(RNIC_NUM_PORT_STATS);
	a.num_queue_stats = cpu_to_le16(RNIC_NUM_QUEUE_STATS);
	snprintf(a.model_version, sizeof(a.model_version), "%s",
		 RDEV_MODEL_VERSION);
	*result = sizeof(a);
	return put_result(d, le64_to_cpu(c->buf_addr),
			  le32_to_cpu(c->buf_len), &a, sizeof(a));
}

static u8 query_port(struct rdev *d, const struct rnic_aq_query *c,
		     u32 *result)
{
	struct rdev_port *port = &d->port;
	struct rnic_port_attr a = {};

	if (c->scope || c->id)
		return RNIC_AQ_BAD_PARAM;
	a.link = cpu_to_le32(rdev_link_word(d));
	a.flags = cpu_to_le32(port->flags);
	a.mtu = cpu_to_le16(port->mtu);
	a.udp_port = cpu_to_le16(port->udp_port);
	memcpy(a.mac, port->mac, sizeof(a.mac));
	a.pfc_prio = port->pfc_prio;
	a.tx_paused = d->pfc.paused;
	a.pfc_xoff_quanta = cpu_to_le16(port->xoff_quanta);
	a.pfc_low_wm = cpu_to_le16(port->low_wm);
	a.pfc_high_wm = cpu_to_le16(port->high_wm);
	*result = sizeof(a);
	return put_result(d, le64_to_cpu(c->buf_addr),
			  le32_to_cpu(c->buf_len), &a, sizeof(a));
}

static u8 query_stats(struct rdev *d, const struct rnic_aq_query *c,
		      u32 *result)
{
	__le64 buf[(int)RNIC_NUM_PORT_STATS + (int)RNIC_NUM_QUEUE_STATS];
	u32 buf_len = le32_to_cpu(c->buf_len) & ~7U;
	u16 id = le16_to_cpu(c->id);
	const u64 *src;
	unsigned int i, n;

	if (c->scope == RNIC_STATS_SCOPE_PORT) {
		if (id)
			return RNIC_AQ_BAD_PARAM;
		src = d->ctr;
		n = RNIC_NUM_PORT_STATS;
	} else if (c->scope == RNIC_STATS_SCOPE_QUEUE) {
		if (id >= RDEV_MAX_QUEUES || !d->queues[id].used)
			return RNIC_AQ_NOT_FOUND;
		src = d->queues[id].stats;
		n = RNIC_NUM_QUEUE_STATS;
	} else {
		return RNIC_AQ_BAD_PARAM;
	}
	if (!buf_len)
		return RNIC_AQ_BAD_PARAM;
	for (i = 0; i < n; i++)
		buf[i] = cpu_to_le64(src[i]);
	*result = n * sizeof(buf[0]);
	return put_result(d, le64_to_cpu(c->buf_addr), buf_len, buf,
			  n * sizeof(buf[0]));
}

static u8 cmd_query(struct rdev *d, const union rnic_aq_entry *e,
		    u32 *result)
{
	const struct rnic_aq_query *c = &e->query;

	if (!c->buf_len || c->reserved0 ||
	    !all_zero(c->reserved1, sizeof(c->reserved1)))
		return RNIC_AQ_BAD_PARAM;
	switch (c->hdr.opcode) {
	case RNIC_AQ_QUERY_DEVICE:
		return query_device(d, c, result);
	case RNIC_AQ_QUERY_PORT:
		return query_port(d, c, result);
	default:
		return query_stats(d, c, result);
	}
}

static bool mac_ok(const u8 *mac)
{
	return !(mac[0] & 1) && !all_zero(mac, 6);
}

static u8 check_set_port(struct rdev *d, const struct rnic_aq_set_port *c)
{
	u32 valid = le32_to_cpu(c->valid);
	u32 flags = le32_to_cpu(c->flags);
	u16 mtu = le16_to_cpu(c->mtu);
	u16 low = le16_to_cpu(c->pfc_low_wm);
	u16 high = le16_to_cpu(c->pfc_high_wm);

	if ((valid & ~RNIC_PORT_VALID_ALL) || c->reserved0 || c->reserved1 ||
	    !all_zero(c->reserved2, sizeof(c->reserved2)))
		return RNIC_AQ_BAD_PARAM;
	if ((valid & RNIC_PORT_VALID_MTU) &&
	    (mtu < RNIC_MTU_MIN || mtu > RDEV_MAX_FRAME - RNIC_FRAME_OVERHEAD))
		return RNIC_AQ_BAD_PARAM;
	if ((valid & RNIC_PORT_VALID_MAC) && !mac_ok(c->mac))
		return RNIC_AQ_BAD_PARAM;
	if ((valid & RNIC_PORT_VALID_UDP_PORT) && !c->udp_port)
		return RNIC_AQ_BAD_PARAM;
	if (valid & RNIC_PORT_VALID_FLAGS) {
		if (flags & ~RNIC_PORT_F_ALL)
			return RNIC_AQ_BAD_PARAM;
		if ((flags & RNIC_PORT_F_PFC) && !(d->caps & RNIC_CAP_PFC))
			return RNIC_AQ_BAD_PARAM;
		if ((flags & RNIC_PORT_F_RX_VLAN_STRIP) &&
		    !(d->caps & RNIC_CAP_VLAN))
			return RNIC_AQ_BAD_PARAM;
		/* RoCE frames go to the transport, which checks ICRCs. */
		if (flags & (RNIC_PORT_F_RX_ICRC_CHECK |
			     RNIC_PORT_F_RX_ICRC_DELIVER_BAD))
			return RNIC_AQ_BAD_PARAM;
	}
	if (valid & RNIC_PORT_VALID_PFC) {
		if (c->pfc_prio > RNIC_MAX_PRIO)
			return RNIC_AQ_BAD_PARAM;
		if ((low || high) && low >= high)
			return RNIC_AQ_BAD_PARAM;
	}
	/* Templates carry the port; it cannot change under them. */
	if ((valid & RNIC_PORT_VALID_UDP_PORT) &&
	    le16_to_cpu(c->udp_port) != d->port.udp_port &&
	    d->engine->port_in_use(d))
		return RNIC_AQ_BAD_STATE;
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_set_port(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_set_port *c = &e->set_port;
	u32 valid = le32_to_cpu(c->valid);
	struct rdev_port *port = &d->port;
	u8 st;

	st = check_set_port(d, c);
	if (st)
		return st;
	/* PFC parameters may change under an asserted XOFF: withdraw it. */
	if (valid & (RNIC_PORT_VALID_FLAGS | RNIC_PORT_VALID_PFC |
		     RNIC_PORT_VALID_MAC))
		rdev_pfc_release(d);
	if (valid & RNIC_PORT_VALID_MTU)
		port->mtu = le16_to_cpu(c->mtu);
	if (valid & RNIC_PORT_VALID_MAC)
		memcpy(port->mac, c->mac, sizeof(port->mac));
	if (valid & RNIC_PORT_VALID_UDP_PORT)
		port->udp_port = le16_to_cpu(c->udp_port);
	if (valid & RNIC_PORT_VALID_FLAGS)
		port->flags = le32_to_cpu(c->flags);
	if (valid & RNIC_PORT_VALID_PFC) {
		port->pfc_prio = c->pfc_prio;
		port->xoff_quanta = le16_to_cpu(c->pfc_xoff_quanta);
		port->low_wm = le16_to_cpu(c->pfc_low_wm);
		port->high_wm = le16_to_cpu(c->pfc_high_wm);
	}
	rdev_pfc_check_now(d);
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_create_cq(struct rdev *d, const union rnic_aq_entry *e,
			u32 *result)
{
	const struct rnic_aq_create_cq *c = &e->create_cq;
	u64 base = le64_to_cpu(c->ring_addr);
	u16 vector = le16_to_cpu(c->msix_vector);
	unsigned int log2 = c->log2_depth;
	struct rdev_cq *cq;
	unsigned int id;

	if (c->reserved0 || !all_zero(c->reserved1, sizeof(c->reserved1)) ||
	    log2 < RNIC_CQ_LOG2_MIN || log2 > RDEV_MAX_CQ_LOG2 ||
	    vector >= d->cfg.num_vectors)
		return RNIC_AQ_BAD_PARAM;
	if ((base & (RNIC_CQE_SIZE - 1)) ||
	    !plat_dma_ptr(d->p, base, (size_t)RNIC_CQE_SIZE << log2))
		return RNIC_AQ_BAD_ADDR;
	for (id = 0; id < RDEV_MAX_CQS; id++)
		if (!d->cqs[id].used)
			break;
	if (id == RDEV_MAX_CQS)
		return RNIC_AQ_NO_RESOURCES;
	cq = &d->cqs[id];
	memset(cq, 0, sizeof(*cq));
	cq->used = true;
	cq->base = base;
	cq->log2 = log2;
	cq->vector = vector;
	cq->last_arm_seq = -1;
	rdev_bar_write(d, RNIC_DB_CQ_OFF(id), 0);
	*result = id;
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_destroy_cq(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_destroy *c = &e->destroy;
	u16 id = le16_to_cpu(c->id);

	if (c->reserved0 || !all_zero(c->reserved1, sizeof(c->reserved1)))
		return RNIC_AQ_BAD_PARAM;
	if (id >= RDEV_MAX_CQS || !d->cqs[id].used)
		return RNIC_AQ_NOT_FOUND;
	if (d->cqs[id].refs)
		return RNIC_AQ_BAD_STATE;
	memset(&d->cqs[id], 0, sizeof(d->cqs[id]));
	return RNIC_AQ_SUCCESS;
}

static u8 check_create_queue(struct rdev *d,
			     const struct rnic_aq_create_queue *c)
{
	u64 base = le64_to_cpu(c->ring_addr);
	u32 rx_buf = le32_to_cpu(c->rx_buf_size);
	u16 cqid = le16_to_cpu(c->cq_id);
	size_t esize;

	if (!all_zero(c->reserved0, sizeof(c->reserved0)) ||
	    !all_zero(c->reserved1, sizeof(c->reserved1)))
		return RNIC_AQ_BAD_PARAM;
	/* Ethernet rings only: RoCE frames belong to the transport. */
	if ((c->type != RNIC_QUEUE_ETH_TX && c->type != RNIC_QUEUE_ETH_RX) ||
	    c->log2_depth < RNIC_RING_LOG2_MIN ||
	    c->log2_depth > RDEV_MAX_RING_LOG2)
		return RNIC_AQ_BAD_PARAM;
	if (c->type == RNIC_QUEUE_ETH_RX) {
		if (c->tx_prio || rx_buf < RNIC_RX_BUF_MIN ||
		    rx_buf > RNIC_RX_BUF_MAX)
			return RNIC_AQ_BAD_PARAM;
		esize = RNIC_RX_DESC_SIZE;
	} else {
		if (rx_buf || c->tx_prio > RNIC_MAX_PRIO)
			return RNIC_AQ_BAD_PARAM;
		esize = RNIC_TX_DESC_SIZE;
	}
	if ((base & (esize - 1)) ||
	    !plat_dma_ptr(d->p, base, esize << c->log2_depth))
		return RNIC_AQ_BAD_ADDR;
	if (cqid >= RDEV_MAX_CQS || !d->cqs[cqid].used)
		return RNIC_AQ_NOT_FOUND;
	if (d->cqs[cqid].error)
		return RNIC_AQ_BAD_STATE;
	if (c->type == RNIC_QUEUE_ETH_RX && d->eth_rx != RDEV_NO_QUEUE)
		return RNIC_AQ_BAD_STATE;
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_create_queue(struct rdev *d, const union rnic_aq_entry *e,
			   u32 *result)
{
	const struct rnic_aq_create_queue *c = &e->create_queue;
	struct rdev_queue *q;
	unsigned int id;
	u8 st;

	st = check_create_queue(d, c);
	if (st)
		return st;
	for (id = 0; id < RDEV_MAX_QUEUES; id++)
		if (!d->queues[id].used)
			break;
	if (id == RDEV_MAX_QUEUES)
		return RNIC_AQ_NO_RESOURCES;
	q = &d->queues[id];
	memset(q, 0, sizeof(*q));
	q->used = true;
	q->type = c->type;
	q->base = le64_to_cpu(c->ring_addr);
	q->log2 = c->log2_depth;
	q->cq = le16_to_cpu(c->cq_id);
	q->rx_buf_size = le32_to_cpu(c->rx_buf_size);
	q->tx_prio = c->tx_prio;
	d->cqs[q->cq].refs++;
	if (q->type == RNIC_QUEUE_ETH_RX)
		d->eth_rx = id;
	rdev_bar_write(d, RNIC_DB_QUEUE_OFF(id), 0);
	*result = id;
	return RNIC_AQ_SUCCESS;
}

static u8 cmd_destroy_queue(struct rdev *d, const union rnic_aq_entry *e)
{
	const struct rnic_aq_destroy *c = &e->destroy;
	u16 id = le16_to_cpu(c->id);
	struct rdev_queue *q;

	if (c->reserved0 || !all_zero(c->reserved1, sizeof(c->reserved1)))
		return RNIC_AQ_BAD_PARAM;
	if (id >= RDEV_MAX_QUEUES || !d->queues[id].used)
		return RNIC_AQ_NOT_FOUND;
	q = &d->queues[id];
	if (d->eth_rx == id)
		d->eth_rx = RDEV_NO_QUEUE;
	d->cqs[q->cq].refs--;
	memset(q, 0, sizeof(*q));
	return RNIC_AQ_SUCCESS;
}

static u8 execute_common(struct rdev *d, const union rnic_aq_entry *e,
		     u32 *result)
{
	switch (e->hdr.opcode) {
	case RNIC_AQ_QUERY_DEVICE:
	case RNIC_AQ_QUERY_PORT:
	case RNIC_AQ_QUERY_STATS:
		return cmd_query(d, e, result);
	case RNIC_AQ_SET_PORT:
		return cmd_set_port(d, e);
	case RNIC_AQ_CREATE_CQ:
		return cmd_create_cq(d, e, result);
	case RNIC_AQ_DESTROY_CQ:
		return cmd_destroy_cq(d, e);
	case RNIC_AQ_CREATE_QUEUE:
		return cmd_create_queue(d, e, result);
	case RNIC_AQ_DESTROY_QUEUE:
		return cmd_destroy_queue(d, e);
	default:
		return RNIC_AQ_BAD_OPCODE;
	}
}

static u8 execute(struct rdev *d, const union rnic_aq_entry *e,
		  union rnic_aq_resp *resp)
{
	u32 result = 0;
	u8 st;

	if (e->hdr.reserved0 || e->hdr.reserved1)
		return RNIC_AQ_BAD_PARAM;
	if (e->hdr.opcode >= RNIC_AQ_QUERY_RDMA_CAPS) {
		st = d->engine->admin(d, e, resp);
		/* Commands can make QPs runnable or fail them: run that now. */
		d->engine->pump(d);
		return st;
	}
	st = execute_common(d, e, &result);
	/* Their result is the first word of the response. */
	resp->id.id = cpu_to_le32(result);
	return st;
}

/*
 * Doorbell vector 1: run every command up to the admin SQ's slot. Under
 * rdev_aq_hold() nothing, not even the slot is read: the release calls
 * this again.
 */
void rdev_admin_doorbell(struct rdev *d)
{
	u32 slot, mask = (1U << d->aq_log2) - 1;
	bool done = false;

	if (d->aq_hold)
		return;
	slot = rdev_bar_read(d, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ));
	if ((slot & ~RNIC_DB_RING_PI) ||
	    rnic_ring_used(slot, d->aq_head) > mask + 1) {
		RDEV_INC(d, bad_doorbells);
		rdev_device_error(d, RNIC_ERR_BAD_DOORBELL, slot);
		return;
	}
	while (d->aq_head != (u16)slot && d->enabled) {
		u16 idx = d->aq_head;
		union rnic_aq_entry e;
		union rnic_aq_resp resp = {};
		struct rnic_acqe2 c = {};
		u8 st;

		if (plat_dma_read(d->p, d->aq_sq + (u64)(idx & mask) *
				  RNIC_AQ_ENTRY_SIZE, &e, sizeof(e))) {
			RDEV_INC(d, dma_errors);
			rdev_device_error(d, RNIC_ERR_DMA_OOB, d->aq_sq);
			break;
		}
		st = execute(d, &e, &resp);
		RDEV_INC(d, admin_cmds);
		if (st)
			RDEV_INC(d, admin_errors);

		c.status = st;
		c.flags = rnic_ring_phase(idx, d->aq_log2) ?
			  RNIC_ACQE_F_PHASE : 0;
		c.cmd_id = e.hdr.cmd_id;
		c.sq_head = cpu_to_le16((u16)(idx + 1));
		c.resp = resp;
		d->aq_head = idx + 1;
		if (rdev_post_entry(d, d->aq_cq + (u64)(idx & mask) *
				    RNIC_ACQ_ENTRY_SIZE, &c, sizeof(c))) {
			RDEV_INC(d, dma_errors);
			rdev_device_error(d, RNIC_ERR_DMA_OOB, d->aq_cq);
		}
		rdev_bar_write(d, RNIC_REG_AQ_SQ_HEAD, d->aq_head);
		done = true;
	}
	if (done)
		plat_raise_irq(d->p, 0);
}
