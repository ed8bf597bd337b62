/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim device model: the NIC's logic (register file, reset/init
 * handshake, admin queue, event queue, Ethernet TX/RX rings, RX
 * classification, offloads, PFC, counters, and the ABI 2.0 transport),
 * implemented against include/rnic_hw.h and include/rnic_hw_rdma.h.
 *
 * The platform (platform.h) calls in here; the device never blocks and
 * never trusts a value read from BAR2 or guest RAM.
 */
#ifndef RNICSIM_DEVICE_H
#define RNICSIM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct plat;
struct rdev;
/* What runs ABI 2.0 behind the PCI function (rdma/engine.h: rdma_engine) */
struct rdev_engine;

/* rdev_config.signature_abi: abi_compat is 16 bits, one per major */
#define RDEV_MAX_SIGNATURE_ABI	15

struct rdev_config {
	uint8_t mac[6];			/* the port's MAC address */
	unsigned int num_vectors;	/* MSI-X vectors the guest has */
	uint32_t caps_disable;		/* capability bits to hide (tests) */
	/*
	 * 0: serve ABI 2.0, the one ABI (ABI 1.0 was removed). 1..15
	 * (--signature-abi, a test knob): the signature advertises that
	 * major alone, as an older or newer firmware would, and every
	 * enable is refused.
	 */
	unsigned int signature_abi;
	/*
	 * 0: the RDMA object tables have their full sizes. 4..16
	 * (--rdma-table-log2, a test knob): none has more than 2^N entries,
	 * and QUERY_RDMA_CAPS advertises those sizes, so a test reaches
	 * every limit in seconds.
	 */
	unsigned int rdma_table_log2;
	/* The RDMA engine the device dispatches to; required */
	const struct rdev_engine *engine;
};

/* Create the model and write the signature block into BAR2. */
struct rdev *rdev_create(struct plat *p, const struct rdev_config *cfg);
void rdev_destroy(struct rdev *d);

/* Return to power-on state (guest connected, rebooted or disconnected). */
void rdev_reset(struct rdev *d);

/* The guest rang its BAR0 Doorbell with this model-side vector. */
void rdev_doorbell(struct rdev *d, unsigned int vector);

/* A frame arrived from the wire (after RX fault injection). */
void rdev_wire_rx(struct rdev *d, const uint8_t *frame, size_t len);

/* Carrier changed (tap state or injected link down/up). */
void rdev_set_link(struct rdev *d, bool up);

/*
 * A test knob for back-pressure behind the port (a PCIe link or host
 * memory that cannot keep up): with @hold the 2.0 transport leaves
 * received RoCE frames in its receive buffer, which fills, so PFC pauses
 * the link partner; releasing runs them. -EOPNOTSUPP on a device that
 * serves no ABI (signature_abi set, or the transport capability hidden).
 */
int rdev_rx_hold(struct rdev *d, bool hold);

/*
 * The same knob on the send side: with @hold the device takes no
 * descriptor from the Ethernet TX rings (the netdev's; QP send queues go
 * on). Descriptors stay posted, nothing is sent or completed, so a
 * driver's ring fills and it must stop its queue. Releasing takes them
 * again at once, in order, where it stopped, without waiting for a
 * doorbell. Idempotent; survives resets; -EOPNOTSUPP on a device that
 * serves no ABI.
 */
int rdev_tx_hold(struct rdev *d, bool hold);

/*
 * The admin queue's knob, for a driver's command timeout: with @hold the
 * device takes no command from the admin queue (doorbells on vector 1 are
 * ignored, commands stay posted, nothing completes). Releasing reads the
 * admin SQ slot at once, as a doorbell would, and runs what was posted.
 * Unlike the rx and tx holds, a device reset (CTRL.RESET, CTRL = 0, a
 * guest connecting) clears it: a driver recovers from the timeout by
 * resetting the device, and the queue it programs after that must work.
 * Idempotent; -EOPNOTSUPP on a device that serves no ABI.
 */
int rdev_aq_hold(struct rdev *d, bool hold);

/*
 * Fail as a device fails fatally (hardware.rst, "Fatal reasons"): a
 * DEVICE_FATAL event with the reason in info on event queue 0 if the
 * device is enabled, then STATUS = FATAL and FATAL_REASON. From then on
 * it performs no DMA, raises no interrupt, sends and takes no frame,
 * runs no command and no timer (HEARTBEAT stops), and acts on nothing
 * but CTRL.RESET, which brings it back to the reset state. *@reason 0
 * asks for RNIC_FATAL_INTERNAL and is set to it. 0, -EALREADY (already
 * fatal: nothing changes), or -EOPNOTSUPP on a device that serves no
 * ABI. Counted in fatal_events, which resets do not clear.
 */
int rdev_fatal(struct rdev *d, uint32_t *reason);

/*
 * A test knob: whether an arm that finds satisfying CQEs already in its
 * CQ fires at once (@peek true: the contract, hardware-rdma.rst
 * "Arming") or, as on a NIC without that peek, only at the next CQE.
 * Without it, ib_core's re-poll on the driver's IB_CQ_REPORT_MISSED_EVENTS
 * answer is all that brings a ULP back to such CQEs. Survives resets;
 * each arm left unfired is counted in arm_peeks_skipped (not reset).
 */
void rdev_set_arm_peek(struct rdev *d, bool peek);

/*
 * Timer work (TX paused by PFC, pause emission for the no-drop priority).
 * Returns the absolute time in ns it wants to be called again, or 0.
 */
uint64_t rdev_tick(struct rdev *d, uint64_t now_ns);

/* Print the device counters as "name value" lines (control socket). */
void rdev_dump_counters(struct rdev *d, void (*out)(void *ctx, const char *line),
			void *ctx);

#endif /* RNICSIM_DEVICE_H */
