// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim --bench: a driver's reach into one device on its own simulator
 * (bench.h, struct bench_host): BAR2, guest RAM, the admin queue and event
 * queue 0, the reset/enable handshake. bench_rdma.c drives the 2.0 devices
 * through it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rnic_hw.h>
#include <rnic_hw_rdma.h>

#include "bench.h"
#include "sim.h"

#define AQ_LOG2		4
#define EQ_LOG2		6
#define PAGE_SZ		4096ull

void *bench_ram(struct bench_host *h, u64 gpa)
{
	return h->s->gmem.base + gpa;
}

u64 bench_alloc(struct bench_host *h, u64 size, u64 align)
{
	u64 a = (h->next + align - 1) & ~(align - 1);

	if (a + size > h->s->gmem.size)
		abort();
	h->next = a + size;
	memset(bench_ram(h, a), 0, size);
	return a;
}

void bench_bar_w32(struct bench_host *h, unsigned int off, u32 v)
{
	__le32 le = cpu_to_le32(v);

	memcpy(h->bar + off, &le, 4);
}

u32 bench_bar_r32(struct bench_host *h, unsigned int off)
{
	__le32 le;

	memcpy(&le, h->bar + off, 4);
	return le32_to_cpu(le);
}

/* One admin command; the device completes it within the doorbell. */
int bench_admin(struct bench_host *h, void *cmd, union rnic_aq_resp *resp)
{
	unsigned int mask = (1u << AQ_LOG2) - 1;
	union rnic_aq_entry *e = cmd;
	u16 idx = h->aq_pi;
	struct rnic_acqe *c;

	e->hdr.cmd_id = cpu_to_le16(++h->cmd_id);
	memcpy(bench_ram(h, h->aq_sq + (idx & mask) * RNIC_AQ_ENTRY_SIZE), e,
	       sizeof(*e));
	h->aq_pi++;
	bench_bar_w32(h, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), h->aq_pi);
	h->ops->doorbell(h->dev, RNIC_DB_VEC_ADMIN);
	c = bench_ram(h, h->aq_cq + (idx & mask) * RNIC_ACQ_ENTRY_SIZE);
	if (rnic_acqe_phase(c) != rnic_ring_phase(idx, AQ_LOG2))
		return -1;
	memcpy(resp, &c->result, sizeof(*resp));
	return c->status;
}

bool bench_eq0_next(struct bench_host *h, struct rnic_eqe *e)
{
	unsigned int mask = (1u << EQ_LOG2) - 1;
	struct rnic_eqe *p = bench_ram(h, h->eq + (h->eq_ci & mask) *
					  RNIC_EQE_SIZE);

	if (rnic_eqe_phase(p) != rnic_ring_phase(h->eq_ci, EQ_LOG2))
		return false;
	*e = *p;
	h->eq_ci++;
	bench_bar_w32(h, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		      rnic_db_cq(h->eq_ci, false, 0));
	return true;
}

/* The largest MTU the device takes, up to 9000 (jumbo frames). */
u16 bench_host_max_mtu(struct bench_host *h)
{
	const struct rnic_sig *sig = (const void *)(h->bar + RNIC_SIG_OFF);
	u32 max_frame = le32_to_cpu(sig->max_frame);

	return max_frame > 9000 + RNIC_FRAME_OVERHEAD ? 9000 :
	       (u16)(max_frame - RNIC_FRAME_OVERHEAD);
}

/* Reset, then enable ABI 2.0 with the admin queue and EQ. */
int bench_host_up(struct bench_host *h)
{
	const struct rnic_sig *sig = (const void *)(h->bar + RNIC_SIG_OFF);

	if (!rnic_sig_serves(le32_to_cpu(sig->magic),
			     le16_to_cpu(sig->abi_major),
			     le16_to_cpu(sig->abi_compat), RNIC_ABI2_MAJOR))
		return -ENODEV;
	h->next = 0x10000;
	h->aq_pi = 0;
	h->eq_ci = 0;
	h->aq_sq = bench_alloc(h, RNIC_AQ_ENTRY_SIZE << AQ_LOG2, PAGE_SZ);
	h->aq_cq = bench_alloc(h, RNIC_ACQ_ENTRY_SIZE << AQ_LOG2, PAGE_SZ);
	h->eq = bench_alloc(h, RNIC_EQE_SIZE << EQ_LOG2, PAGE_SZ);
	bench_bar_w32(h, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	h->ops->doorbell(h->dev, RNIC_DB_VEC_CTRL);
	if (!(bench_bar_r32(h, RNIC_REG_STATUS) & RNIC_STATUS_RESET_DONE))
		return -EIO;
	bench_bar_w32(h, RNIC_REG_AQ_SQ_BASE_LO, (u32)h->aq_sq);
	bench_bar_w32(h, RNIC_REG_AQ_SQ_BASE_HI, (u32)(h->aq_sq >> 32));
	bench_bar_w32(h, RNIC_REG_AQ_CQ_BASE_LO, (u32)h->aq_cq);
	bench_bar_w32(h, RNIC_REG_AQ_CQ_BASE_HI, (u32)(h->aq_cq >> 32));
	bench_bar_w32(h, RNIC_REG_AQ_CFG, AQ_LOG2);
	bench_bar_w32(h, RNIC_REG_EQ_BASE_LO, (u32)h->eq);
	bench_bar_w32(h, RNIC_REG_EQ_BASE_HI, (u32)(h->eq >> 32));
	bench_bar_w32(h, RNIC_REG_EQ_CFG, EQ_LOG2);
	bench_bar_w32(h, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
		      FIELD_PREP(RNIC_CTRL_ABI, RNIC_ABI2_MAJOR));
	h->ops->doorbell(h->dev, RNIC_DB_VEC_CTRL);
	return bench_bar_r32(h, RNIC_REG_STATUS) ==
	       (RNIC_STATUS_ENABLED |
		FIELD_PREP(RNIC_STATUS_ABI, RNIC_ABI2_MAJOR)) ? 0 : -EIO;
}

