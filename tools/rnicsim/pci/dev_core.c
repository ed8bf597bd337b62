// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: creation, reset, the signature block, the register
 * file and the reset/enable handshake, doorbell dispatch, link state, the
 * timer and the counter dump.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pci/dev_priv.h"

#define NS_PER_MS	1000000ULL

static void write_signature(struct rdev *d)
{
	struct rnic_sig sig = {};

	sig.magic = cpu_to_le32(RNIC_SIG_MAGIC);
	/* 2.0 alone, or (--signature-abi) what another firmware would say */
	if (d->cfg.signature_abi) {
		sig.abi_major = cpu_to_le16(d->cfg.signature_abi);
		sig.abi_compat = cpu_to_le16(BIT(d->cfg.signature_abi));
	} else {
		sig.abi_major = cpu_to_le16(RNIC_ABI2_MAJOR);
		sig.abi_minor = cpu_to_le16(RNIC_ABI2_MINOR);
		sig.abi_compat = cpu_to_le16(BIT(RNIC_ABI2_MAJOR));
	}
	sig.caps = cpu_to_le32(d->caps);
	sig.shm_size = cpu_to_le32((u32)d->bar2_len);
	memcpy(sig.mac, d->cfg.mac, sizeof(sig.mac));
	sig.num_msix = cpu_to_le16(d->cfg.num_vectors);
	sig.max_queues = cpu_to_le16(RDEV_MAX_QUEUES);
	sig.max_cqs = cpu_to_le16(RDEV_MAX_CQS);
	sig.max_ring_log2 = RDEV_MAX_RING_LOG2;
	sig.max_cq_log2 = RDEV_MAX_CQ_LOG2;
	sig.max_tx_sge = RNIC_TX_MAX_SGE;
	sig.max_frame = cpu_to_le32(RDEV_MAX_FRAME);
	sig.speed_mbps = cpu_to_le32(RDEV_SPEED_MBPS);
	snprintf(sig.model_version, sizeof(sig.model_version), "%s",
		 RDEV_MODEL_VERSION);

	memset(d->bar2 + RNIC_SIG_OFF, 0, RNIC_REGS_OFF - RNIC_SIG_OFF);
	memcpy(d->bar2 + RNIC_SIG_OFF, &sig, sizeof(sig));
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

/*
 * Back to the reset state: no queues, register file and doorbell page
 * zeroed, port defaults, counters cleared. @status is what STATUS reads
 * afterwards (0 at power-on, RESET_DONE after a driver reset).
 */
static void do_reset(struct rdev *d, u32 status)
{
	/* Do not leave the link partner paused on our behalf. */
	rdev_pfc_release(d);

	/* Every 2.0 object goes, until the next enable. */
	d->engine->reset(d);
	memset(d->bar2 + RNIC_DBP_BASE_DEFAULT, 0,
	       d->bar2_len - RNIC_DBP_BASE_DEFAULT);
	d->enabled = false;
	d->fatal = false;
	/*
	 * The admin hold goes with the queue it held: a driver that timed
	 * out resets the device, and the one it programs next must work.
	 */
	d->aq_hold = false;
	d->aq_sq = 0;
	d->aq_cq = 0;
	d->aq_log2 = 0;
	d->aq_head = 0;
	memset(&d->eq, 0, sizeof(d->eq));
	memset(d->cqs, 0, sizeof(d->cqs));
	memset(d->queues, 0, sizeof(d->queues));
	d->eth_rx = RDEV_NO_QUEUE;
	memset(&d->pfc, 0, sizeof(d->pfc));
	memset(d->ctr, 0, sizeof(d->ctr));
	rdev_port_defaults(d);

	/*
	 * CTRL is cleared last: a driver that sees RESET read 0 must find
	 * every other register already in its reset state, or its writes
	 * could land before this memset and be wiped (hardware.rst, "Reset
	 * and initialisation").
	 */
	static_assert(RNIC_REG_CTRL == RNIC_REGS_OFF, "CTRL is the first register");
	memset(d->bar2 + RNIC_REG_CTRL + 4, 0, RNIC_DB_OFF + RNIC_DB_SIZE -
					       (RNIC_REG_CTRL + 4));
	write_signature(d);
	rdev_bar_write(d, RNIC_REG_STATUS, status);
	rdev_bar_write(d, RNIC_REG_CTRL, 0);
}

struct rdev *rdev_create(struct plat *p, const struct rdev_config *cfg)
{
	struct rdev *d;
	size_t len = 0;
	u8 *bar2;

	bar2 = plat_bar2(p, &len);
	/* ABI 2.0 needs room for doorbell pages past the register file. */
	if (!bar2 || len < RNIC_SHM_MIN_SIZE_ABI2 || (len & (len - 1)) ||
	    len > 0x80000000UL) {
		plat_log(p, "BAR2 of %zu bytes is unusable (need a power of two >= %u for ABI 2.0)",
			 len, RNIC_SHM_MIN_SIZE_ABI2);
		return NULL;
	}
	if (cfg->num_vectors < 2) {
		plat_log(p, "%u MSI-X vector(s): ABI 2.0 needs at least 2",
			 cfg->num_vectors);
		return NULL;
	}
	if (!cfg->engine) {
		plat_log(p, "no RDMA engine to serve ABI 2.0");
		return NULL;
	}
	if (cfg->signature_abi > RDEV_MAX_SIGNATURE_ABI) {
		plat_log(p, "signature ABI %u: need 1..%u", cfg->signature_abi,
			 RDEV_MAX_SIGNATURE_ABI);
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->p = p;
	d->cfg = *cfg;
	d->engine = cfg->engine;
	d->bar2 = bar2;
	d->bar2_len = len;
	/*
	 * Without the transport bit, or with the signature of another ABI,
	 * the device serves no ABI: every enable is refused.
	 */
	d->serves_abi2 = !cfg->signature_abi &&
			 !(cfg->caps_disable & RNIC_CAP_TRANSPORT);
	d->caps = RNIC_CAP_ALL_ABI2 & ~cfg->caps_disable;
	d->link_up = true;
	do_reset(d, 0);
	return d;
}

void rdev_destroy(struct rdev *d)
{
	d->engine->reset(d);
	free(d);
}

void rdev_reset(struct rdev *d)
{
	do_reset(d, 0);
}

/*
 * A fatal device performs no DMA and acts on nothing but CTRL.RESET
 * (hardware.rst, "Fatal reasons"). Clearing d->enabled stops the rest:
 * doorbells, the admin queue, the rings, the RDMA engine's pump and
 * timers and event posting all need it; rdev_tick() and rdev_wire_rx()
 * test d->fatal. Objects stay as they are until the reset destroys them.
 */
static void set_fatal(struct rdev *d, u32 reason)
{
	plat_log(d->p, "device fatal, reason %u", reason);
	/* Tell the driver first, if event queue 0 still works. */
	if (d->enabled)
		rdev_event(d, RNIC_EQE_DEVICE_FATAL, RNIC_ERR_NONE,
			   RNIC_EQE_OBJ_NONE, 0, reason);
	d->enabled = false;
	d->fatal = true;
	d->fatal_reason = reason;
	/* It sends nothing more, XON included: a pause it sent expires. */
	d->pfc.xoff = false;
	rdev_bar_write(d, RNIC_REG_FATAL_REASON, reason);
	rdev_bar_write(d, RNIC_REG_STATUS, RNIC_STATUS_FATAL);
}

static u64 reg_read64(struct rdev *d, unsigned int lo)
{
	return rdev_bar_read(d, lo) | (u64)rdev_bar_read(d, lo + 4) << 32;
}

/* A ring of @n entries of @esize bytes at @base: aligned, in guest RAM. */
static bool ring_ok(struct rdev *d, u64 base, unsigned int log2,
		    size_t esize)
{
	if (base & (esize - 1))
		return false;
	return !!plat_dma_ptr(d->p, base, esize << log2);
}

/* Check the admin and event queue registers; 0 or an rnic_fatal_reason. */
static u32 check_queues(struct rdev *d, u64 *sq, u64 *cq, u64 *eq,
			unsigned int *aq_log2, unsigned int *eq_log2)
{
	u32 aq_cfg = rdev_bar_read(d, RNIC_REG_AQ_CFG);
	u32 eq_cfg = rdev_bar_read(d, RNIC_REG_EQ_CFG);

	*aq_log2 = FIELD_GET(RNIC_AQ_CFG_LOG2_DEPTH, aq_cfg);
	*eq_log2 = FIELD_GET(RNIC_EQ_CFG_LOG2_DEPTH, eq_cfg);
	*sq = reg_read64(d, RNIC_REG_AQ_SQ_BASE_LO);
	*cq = reg_read64(d, RNIC_REG_AQ_CQ_BASE_LO);
	*eq = reg_read64(d, RNIC_REG_EQ_BASE_LO);

	if ((aq_cfg & ~RNIC_AQ_CFG_LOG2_DEPTH) ||
	    *aq_log2 < RNIC_AQ_LOG2_MIN || *aq_log2 > RNIC_AQ_LOG2_MAX)
		return RNIC_FATAL_BAD_AQ_DEPTH;
	if (!ring_ok(d, *sq, *aq_log2, RNIC_AQ_ENTRY_SIZE) ||
	    !ring_ok(d, *cq, *aq_log2, RNIC_ACQ_ENTRY_SIZE))
		return RNIC_FATAL_BAD_AQ_ADDR;
	if ((eq_cfg & ~RNIC_EQ_CFG_LOG2_DEPTH) ||
	    *eq_log2 < RNIC_EQ_LOG2_MIN || *eq_log2 > RNIC_EQ_LOG2_MAX)
		return RNIC_FATAL_BAD_EQ_DEPTH;
	if (!ring_ok(d, *eq, *eq_log2, RNIC_EQE_SIZE))
		return RNIC_FATAL_BAD_EQ_ADDR;
	return RNIC_FATAL_NONE;
}

/*
 * CTRL.ABI must ask for 2.0, the one ABI served (0 and 1 ask for 1.0,
 * which is gone); with --signature-abi nothing is served. 0, or -1 with
 * the reason logged.
 */
static int check_abi(struct rdev *d, u32 ctrl)
{
	unsigned int abi = FIELD_GET(RNIC_CTRL_ABI, ctrl);

	if (d->cfg.signature_abi) {
		plat_log(d->p, "enable refused: the signature advertises ABI %u (--signature-abi) and this device serves no ABI",
			 d->cfg.signature_abi);
		return -1;
	}
	if (!d->serves_abi2) {
		plat_log(d->p, "enable refused: the transport capability is hidden (--caps-disable), so ABI 2.0 is not served");
		return -1;
	}
	if (abi <= RNIC_ABI_MAJOR) {
		plat_log(d->p, "enable refused: CTRL.ABI %u asks for ABI 1.0, which is not served (removed; this device serves ABI 2.0 only)",
			 abi);
		return -1;
	}
	if (abi != RNIC_ABI2_MAJOR) {
		plat_log(d->p, "enable refused: CTRL.ABI %u is not served (this device serves ABI 2.0 only)",
			 abi);
		return -1;
	}
	return 0;
}

static void enable(struct rdev *d, u32 ctrl)
{
	unsigned int aq_log2, eq_log2;
	u64 sq, cq, eq;
	u32 reason;

	reason = check_queues(d, &sq, &cq, &eq, &aq_log2, &eq_log2);
	if (reason) {
		set_fatal(d, reason);
		return;
	}
	if (check_abi(d, ctrl)) {
		set_fatal(d, RNIC_FATAL_BAD_ABI);
		return;
	}
	if (d->engine->enable(d)) {
		set_fatal(d, RNIC_FATAL_INTERNAL);
		return;
	}
	d->aq_sq = sq;
	d->aq_cq = cq;
	d->aq_log2 = aq_log2;
	d->aq_head = 0;
	memset(&d->eq, 0, sizeof(d->eq));
	d->eq.base = eq;
	d->eq.log2 = eq_log2;
	d->eq.last_arm_seq = -1;
	d->enabled = true;
	rdev_bar_write(d, RNIC_REG_AQ_SQ_HEAD, 0);
	rdev_bar_write(d, RNIC_REG_STATUS, RNIC_STATUS_ENABLED |
		       FIELD_PREP(RNIC_STATUS_ABI, RNIC_ABI2_MAJOR));
	rdev_event(d, RNIC_EQE_LINK_CHANGE, 0, 0, rdev_link_word(d), 0);
}

/* Doorbell vector 0: act on CTRL as it reads now. */
static void ctrl_doorbell(struct rdev *d)
{
	u32 ctrl = rdev_bar_read(d, RNIC_REG_CTRL);

	if (ctrl & RNIC_CTRL_RESET) {
		do_reset(d, RNIC_STATUS_RESET_DONE);
		return;
	}
	if (d->fatal)
		return;
	if (ctrl & ~RNIC_CTRL_ALL_ABI2) {
		set_fatal(d, RNIC_FATAL_BAD_CTRL);
		return;
	}
	if (ctrl & RNIC_CTRL_ENABLE) {
		if (d->enabled)
			return;
		if (rdev_bar_read(d, RNIC_REG_STATUS) & RNIC_STATUS_RESET_DONE)
			enable(d, ctrl);
		else
			set_fatal(d, RNIC_FATAL_BAD_CTRL);
		return;
	}
	if (d->enabled)
		do_reset(d, RNIC_STATUS_RESET_DONE);
}

static void data_doorbell(struct rdev *d)
{
	unsigned int i;
	u16 pi;

	/* Validate every ring slot, then move TX and re-check PFC. */
	for (i = 0; i < RDEV_MAX_QUEUES; i++)
		if (d->queues[i].used && !d->queues[i].error)
			rdev_ring_pi(d, i, &pi);
	/* The QPs that moved, then every sender takes turns. */
	d->engine->kick(d);
	rdev_tx_all(d);
	rdev_pfc_check_now(d);
}

void rdev_doorbell(struct rdev *d, unsigned int vector)
{
	if (vector == RNIC_DB_VEC_CTRL) {
		ctrl_doorbell(d);
		return;
	}
	if (vector >= RNIC_DB_NUM_VECTORS) {
		RDEV_INC(d, bad_doorbells);
		if (d->enabled)
			rdev_device_error(d, RNIC_ERR_BAD_DOORBELL, vector);
		return;
	}
	if (!d->enabled) {
		RDEV_INC(d, bad_doorbells);
		return;
	}
	switch (vector) {
	case RNIC_DB_VEC_ADMIN:
		rdev_admin_doorbell(d);
		break;
	case RNIC_DB_VEC_EVENT:
		rdev_event_doorbell(d);
		break;
	case RNIC_DB_VEC_DATA:
		data_doorbell(d);
		break;
	}
}

void rdev_wire_rx(struct rdev *d, const uint8_t *frame, size_t len)
{
	/* Not even a pause frame is looked at. */
	if (d->fatal) {
		RDEV_INC(d, rx_drop_no_queue);
		return;
	}
	rdev_rx_frame(d, frame, len);
}

void rdev_set_link(struct rdev *d, bool up)
{
	if (d->link_up == up)
		return;
	d->link_up = up;
	RDEV_INC(d, link_changes);
	if (!up)
		d->pfc.xoff = false;	/* nothing can be sent to refresh it */
	if (d->enabled)
		rdev_event(d, RNIC_EQE_LINK_CHANGE, 0, 0, rdev_link_word(d), 0);
	if (up && d->enabled) {
		rdev_tx_all(d);
		rdev_pfc_check_now(d);
	}
}

int rdev_rx_hold(struct rdev *d, bool hold)
{
	if (!d->serves_abi2)
		return -EOPNOTSUPP;
	if (d->rx_hold == hold)
		return 0;
	d->rx_hold = hold;
	if (!hold && d->rdma)
		d->engine->pump(d);	/* what waited runs now; XON follows */
	return 0;
}

int rdev_tx_hold(struct rdev *d, bool hold)
{
	if (!d->serves_abi2)
		return -EOPNOTSUPP;
	if (d->tx_hold == hold)
		return 0;
	d->tx_hold = hold;
	/*
	 * The driver rings no more while its queue is stopped: look at the
	 * rings now, as a data doorbell would.
	 */
	if (!hold)
		rdev_tx_all(d);
	return 0;
}

int rdev_aq_hold(struct rdev *d, bool hold)
{
	if (!d->serves_abi2)
		return -EOPNOTSUPP;
	if (d->aq_hold == hold)
		return 0;
	d->aq_hold = hold;
	/* The driver rang while held and waits: run what it posted. */
	if (!hold && d->enabled)
		rdev_admin_doorbell(d);
	return 0;
}

int rdev_fatal(struct rdev *d, uint32_t *reason)
{
	if (!d->serves_abi2)
		return -EOPNOTSUPP;
	if (d->fatal)
		return -EALREADY;
	if (!*reason)
		*reason = RNIC_FATAL_INTERNAL;
	d->fatal_events++;
	set_fatal(d, *reason);
	return 0;
}

void rdev_set_arm_peek(struct rdev *d, bool peek)
{
	d->no_arm_peek = !peek;
}

uint64_t rdev_tick(struct rdev *d, uint64_t now_ns)
{
	u64 next;

	/* A fatal device runs nothing: no timers, no HEARTBEAT. */
	if (d->fatal)
		return 0;
	if (now_ns >= d->next_heartbeat) {
		rdev_bar_write(d, RNIC_REG_HEARTBEAT,
			       rdev_bar_read(d, RNIC_REG_HEARTBEAT) + 1);
		d->next_heartbeat = now_ns +
				    RNIC_HEARTBEAT_PERIOD_MS * NS_PER_MS;
	}
	next = rdev_pfc_tick(d, now_ns);
	if (!next || next > d->next_heartbeat)
		next = d->next_heartbeat;
	if (d->rdma) {
		u64 t = d->engine->tick(d, now_ns);

		if (t && t < next)
			next = t;
	}
	return next;
}

static const char * const port_stat_names[] = {
#define RDEV_STAT_NAME(name) #name,
	RNIC_PORT_STATS(RDEV_STAT_NAME)
};

static const char * const queue_stat_names[] = {
	RNIC_QUEUE_STATS(RDEV_STAT_NAME)
#undef RDEV_STAT_NAME
};

void rdev_dump_counters(struct rdev *d,
			void (*out)(void *ctx, const char *line), void *ctx)
{
	char line[96];
	unsigned int i, j;

	for (i = 0; i < RNIC_NUM_PORT_STATS; i++) {
		snprintf(line, sizeof(line), "%s %llu", port_stat_names[i],
			 (unsigned long long)d->ctr[i]);
		out(ctx, line);
	}
	for (i = 0; i < RDEV_MAX_QUEUES; i++) {
		if (!d->queues[i].used)
			continue;
		for (j = 0; j < RNIC_NUM_QUEUE_STATS; j++) {
			snprintf(line, sizeof(line), "queue%u_%s %llu", i,
				 queue_stat_names[j],
				 (unsigned long long)d->queues[i].stats[j]);
			out(ctx, line);
		}
	}
	if (d->serves_abi2) {
		snprintf(line, sizeof(line), "rx_hold %d", d->rx_hold);
		out(ctx, line);
		snprintf(line, sizeof(line), "tx_hold %d", d->tx_hold);
		out(ctx, line);
		snprintf(line, sizeof(line), "aq_hold %d", d->aq_hold);
		out(ctx, line);
		snprintf(line, sizeof(line), "fatal_events %llu",
			 (unsigned long long)d->fatal_events);
		out(ctx, line);
		snprintf(line, sizeof(line), "fatal_reason %u",
			 d->fatal ? d->fatal_reason : 0);
		out(ctx, line);
		snprintf(line, sizeof(line), "arm_peek %d", !d->no_arm_peek);
		out(ctx, line);
		snprintf(line, sizeof(line), "arm_peeks_skipped %llu",
			 (unsigned long long)d->arm_peeks_skipped);
		out(ctx, line);
	}
	d->engine->dump_counters(d, out, ctx);
}
