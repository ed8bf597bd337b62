// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: 802.1Qbb priority flow control.
 *
 * Honour: a received PFC frame pauses TX of each priority it names for
 * quanta * 512 bit times (quanta 0 resumes). Emission: XOFF for the
 * no-drop priority while the free entries of the 2.0 RoCE receive buffer
 * are below the low watermark (refreshed every half pause time), XON once
 * they reach the high watermark.
 */
#include "pci/dev_priv.h"
#include "pkt/pkt.h"

bool rdev_pfc_active(struct rdev *d)
{
	return (d->caps & RNIC_CAP_PFC) && (d->port.flags & RNIC_PORT_F_PFC);
}

static u16 xoff_quanta(struct rdev *d)
{
	return d->port.xoff_quanta ? d->port.xoff_quanta :
				     RNIC_PFC_DEFAULT_QUANTA;
}

/* Priority @prio's pause ends at @at: account for it. */
static void resume(struct rdev *d, unsigned int prio, u64 at)
{
	if (at > d->pfc.pause_start[prio])
		RDEV_ADD(d, tx_paused_ns, at - d->pfc.pause_start[prio]);
	d->pfc.paused &= ~BIT(prio);
}

bool rdev_pfc_paused(struct rdev *d, unsigned int prio, u64 now)
{
	if (prio >= RDEV_NUM_PRIO || !(d->pfc.paused & BIT(prio)))
		return false;
	if (now >= d->pfc.pause_end[prio]) {
		resume(d, prio, d->pfc.pause_end[prio]);
		return false;
	}
	return rdev_pfc_active(d);
}

bool rdev_pfc_paused_now(struct rdev *d, unsigned int prio)
{
	if (prio >= RDEV_NUM_PRIO || !(d->pfc.paused & BIT(prio)))
		return false;
	return rdev_pfc_paused(d, prio, plat_now_ns(d->p));
}

/* rdev_pfc_check() uses the time only when it may send a pause. */
void rdev_pfc_check_now(struct rdev *d)
{
	bool on = d->enabled && d->link_up && rdev_pfc_active(d);

	rdev_pfc_check(d, on ? plat_now_ns(d->p) : 0);
}

void rdev_pfc_rx(struct rdev *d, const u8 *frame, size_t len)
{
	u16 quanta[RDEV_NUM_PRIO];
	bool resumed = false;
	unsigned int prio;
	u8 mask;
	u64 now;

	RDEV_INC(d, rx_pause);
	if (!pkt_pfc_parse(frame, len, &mask, quanta) || !rdev_pfc_active(d))
		return;
	now = plat_now_ns(d->p);
	for (prio = 0; prio < RDEV_NUM_PRIO; prio++) {
		if (!(mask & BIT(prio)))
			continue;
		if (!quanta[prio]) {
			if (d->pfc.paused & BIT(prio)) {
				resume(d, prio, now);
				resumed = true;
			}
			continue;
		}
		if (!(d->pfc.paused & BIT(prio))) {
			d->pfc.paused |= BIT(prio);
			d->pfc.pause_start[prio] = now;
		}
		d->pfc.pause_end[prio] = now + rnic_pause_ns(quanta[prio],
							     RDEV_SPEED_MBPS);
	}
	if (resumed) {
		rdev_tx_all(d);
		if (d->rdma)
			d->engine->pfc_resume(d);
	}
}

static void send_pause(struct rdev *d, u16 quanta)
{
	u16 q[RDEV_NUM_PRIO] = {};
	u8 frame[64];
	size_t len;

	q[d->port.pfc_prio] = quanta;
	len = pkt_pfc_build(frame, d->port.mac, BIT(d->port.pfc_prio), q);
	plat_wire_tx(d->p, frame, len);
	RDEV_INC(d, tx_pause);
}

void rdev_pfc_release(struct rdev *d)
{
	if (!d->pfc.xoff)
		return;
	d->pfc.xoff = false;
	if (d->link_up)
		send_pause(d, 0);
}

/* Watermarks in free entries for a buffer of @depth. */
static void watermarks(struct rdev *d, unsigned int depth, unsigned int *low,
		       unsigned int *high)
{
	*low = d->port.low_wm;
	*high = d->port.high_wm;
	if (!*low && !*high) {
		*low = depth / 8 ? depth / 8 : 1;
		*high = depth / 4 > *low ? depth / 4 : *low + 1;
	}
	if (*high > depth)
		*high = depth;
	if (*low >= *high)
		*low = *high - 1;
}

/*
 * What the no-drop priority protects, as free entries of a depth: the
 * RoCE receive buffer. False when there is nothing to watch (disabled).
 */
static bool rx_room(struct rdev *d, unsigned int *free, unsigned int *depth)
{
	if (!d->rdma)
		return false;
	d->engine->rx_room(d, free, depth);
	return true;
}

void rdev_pfc_check(struct rdev *d, u64 now)
{
	unsigned int low, high, free, depth;

	if (!d->enabled || !d->link_up || !rdev_pfc_active(d) ||
	    !rx_room(d, &free, &depth)) {
		rdev_pfc_release(d);
		return;
	}
	watermarks(d, depth, &low, &high);

	if (!d->pfc.xoff) {
		if (free < low) {
			send_pause(d, xoff_quanta(d));
			d->pfc.xoff = true;
			d->pfc.xoff_sent_ns = now;
		}
	} else if (free >= high) {
		rdev_pfc_release(d);
	} else if (now - d->pfc.xoff_sent_ns >=
		   rnic_pause_ns(xoff_quanta(d), RDEV_SPEED_MBPS) / 2) {
		send_pause(d, xoff_quanta(d));
		d->pfc.xoff_sent_ns = now;
	}
}

/* Timer: expire pauses (restarting TX), refresh XOFF; next deadline or 0. */
u64 rdev_pfc_tick(struct rdev *d, u64 now)
{
	bool resumed = false;
	unsigned int prio;
	u64 next = 0, t;

	for (prio = 0; prio < RDEV_NUM_PRIO; prio++) {
		if (!(d->pfc.paused & BIT(prio)))
			continue;
		if (now >= d->pfc.pause_end[prio]) {
			resume(d, prio, d->pfc.pause_end[prio]);
			resumed = true;
		} else if (!next || d->pfc.pause_end[prio] < next) {
			next = d->pfc.pause_end[prio];
		}
	}
	if (resumed) {
		rdev_tx_all(d);
		if (d->rdma)
			d->engine->pfc_resume(d);
	}
	rdev_pfc_check(d, now);
	if (d->pfc.xoff) {
		t = d->pfc.xoff_sent_ns +
		    rnic_pause_ns(xoff_quanta(d), RDEV_SPEED_MBPS) / 2;
		if (!next || t < next)
			next = t;
	}
	return next;
}
