/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake platform (platform.h) for the device model's unit tests: BAR2 and
 * "guest RAM" are malloc'd, the wire is a list of captured frames, MSI-X is
 * a counter per vector and the clock is set by the test.
 *
 * On top of it, the fake driver (struct tdev): the bus layer every fake
 * driver shares (../fakedrv/fakedrv.h: the reset/enable handshake, admin
 * commands, event queue 0) and the Ethernet rings, driven exactly as
 * Documentation/hardware.rst says a driver must.
 */
#ifndef RNICSIM_TEST_FAKE_PLAT_H
#define RNICSIM_TEST_FAKE_PLAT_H

#include <rnic_compat.h>
#include <rnic_hw.h>
#include <rnic_hw_rdma.h>

#include "pci/device.h"
#include "fakedrv/fakedrv.h"
#include "platform/platform.h"

#define FAKE_MAX_FRAMES		64
#define FAKE_MAX_VECTORS	16

struct fake_frame {
	u8 data[RNIC_FRAME_OVERHEAD + 9100];
	size_t len;
};

struct plat {
	u8 *bar2;
	size_t bar2_len;
	u8 *ram;
	size_t ram_len;
	u64 now;
	u64 now_reads;			/* plat_now_ns() calls */
	unsigned int irqs[FAKE_MAX_VECTORS];
	struct fake_frame *tx;		/* FAKE_MAX_FRAMES, oldest first */
	unsigned int ntx;		/* frames captured (capped) */
	int wire_rc;			/* what plat_wire_tx returns */
	/* if set, every frame sent also goes here (an in-process wire) */
	int (*wire_hook)(void *ctx, const u8 *frame, size_t len);
	void *wire_ctx;
	/* plat_log() lines, newline-ended (restarts when full) */
	char log[4096];
};

struct plat *fake_plat_new(size_t bar2_len, size_t ram_len);
void fake_plat_free(struct plat *p);

/* The fake driver */
#define T_RAM_SIZE	(4u << 20)
#define T_AQ_LOG2	3
#define T_EQ_LOG2	4

struct tcq {
	u16 id;
	u64 base;
	unsigned int log2;
	u16 ci;
	u8 arm_seq;
};

struct tq {
	u16 id;
	u8 type;
	u64 base;
	unsigned int log2;
	u16 pi;
};

struct tdev {
	struct plat *p;
	struct rdev *d;
	struct fakedrv drv;	/* over p's BAR2 and RAM, rings d */
};

extern const u8 t_mac[6];

/* Create platform + device (not yet initialised). */
struct tdev *tdev_new(u32 caps_disable);
/* The same with a device configuration and @ram_len bytes of guest RAM */
struct tdev *tdev_new_cfg(const struct rdev_config *cfg, size_t ram_len);
void tdev_free(struct tdev *t);
/*
 * ABI 1.0's RoCE TX and RX ring types, no longer named by rnic_hw.h: the
 * device must refuse them like any unknown queue type.
 */
#define T_QUEUE_ROCE_TX_V1	3
#define T_QUEUE_ROCE_RX_V1	4

/* What STATUS reads once enabled: ABI 2.0, the only one */
#define T_STATUS_UP	(RNIC_STATUS_ENABLED | \
			 FIELD_PREP(RNIC_STATUS_ABI, RNIC_ABI2_MAJOR))

/* Reset + enable handshake (ABI 2.0); returns STATUS afterwards. */
u32 tdev_init(struct tdev *t);
/* The same, asking for ABI @abi at enable (CTRL.ABI) */
u32 tdev_init_abi(struct tdev *t, unsigned int abi);
/* tdev_new + tdev_init, REQUIREs success is the caller's business. */
struct tdev *tdev_up(void);

/* The bus layer's calls, on @t's fake driver (fakedrv.h) */
static inline u64 talloc(struct tdev *t, size_t size, size_t align)
{
	return fakedrv_alloc(&t->drv, size, align);
}

static inline void *tram(struct tdev *t, u64 gpa)
{
	return fakedrv_ram(&t->drv, gpa);
}

static inline u32 tbar_r32(struct tdev *t, unsigned int off)
{
	return fakedrv_r32(&t->drv, off);
}

static inline void tbar_w32(struct tdev *t, unsigned int off, u32 val)
{
	fakedrv_w32(&t->drv, off, val);
}

static inline void tring(struct tdev *t, unsigned int vector)
{
	fakedrv_ring(&t->drv, vector);
}

/* Port counter @s, read with QUERY_STATS */
static inline u64 tctr(struct tdev *t, enum rnic_port_stat s)
{
	return fakedrv_port_stat(&t->drv, s);
}

/* Submit one admin command; returns its status, result in *result. */
int tadmin(struct tdev *t, union rnic_aq_entry *e, u32 *result);

/* The same with the whole 2.0 response (bytes 8..15 of the completion) */
static inline int tadmin2(struct tdev *t, union rnic_aq_entry *e,
			  union rnic_aq_resp *resp)
{
	return fakedrv_admin(&t->drv, e, resp);
}
int tcreate_cq(struct tdev *t, unsigned int log2, unsigned int vector,
	       struct tcq *cq);
int tcreate_queue(struct tdev *t, u8 type, unsigned int log2, u16 cq_id,
		  u32 rx_buf, u8 tx_prio, struct tq *q);
int tdestroy(struct tdev *t, u8 opcode, u16 id);
int tset_port(struct tdev *t, struct rnic_aq_set_port *sp);

/* Next unconsumed EQ entry, consumed; false if none. */
static inline bool teq_next(struct tdev *t, struct rnic_eqe *eqe)
{
	return fakedrv_eq0_next(&t->drv, eqe);
}

/* Drain the EQ; returns how many entries of @type it held. */
static inline unsigned int teq_count(struct tdev *t, u8 type,
				     struct rnic_eqe *last)
{
	return fakedrv_eq0_count(&t->drv, type, last);
}
/* Next CQE of @cq, consumed (slot updated, no doorbell); false if none. */
bool tcq_poll(struct tdev *t, struct tcq *cq, struct rnic_cqe *cqe);
void tcq_arm(struct tdev *t, struct tcq *cq);

/* Post one TX descriptor / RX buffer and ring doorbell 3. */
void tpost_tx(struct tdev *t, struct tq *q, const struct rnic_tx_desc *desc);
void tpost_rx(struct tdev *t, struct tq *q, u64 addr, u32 len, bool ring);

/* Copy @len bytes into fresh guest RAM; returns the address. */
u64 tput(struct tdev *t, const void *data, size_t len);

/* Whether the status the control socket prints has the line @want */
bool tstatus_has(struct tdev *t, const char *want);

#endif /* RNICSIM_TEST_FAKE_PLAT_H */
