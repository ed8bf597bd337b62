// SPDX-License-Identifier: GPL-2.0
/*
 * The fake driver's bus layer; see fakedrv.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fakedrv/fakedrv.h"

void fakedrv_init(struct fakedrv *f, u8 *bar2, u8 *ram, size_t ram_len,
		  void (*doorbell)(void *dev, unsigned int vector), void *dev,
		  unsigned int aq_log2, unsigned int eq_log2)
{
	*f = (struct fakedrv){ .bar2 = bar2, .ram = ram, .ram_len = ram_len,
			       .doorbell = doorbell, .dev = dev,
			       .aq_log2 = aq_log2, .eq_log2 = eq_log2,
			       .next_alloc = 0x10000 };
}

u64 fakedrv_alloc(struct fakedrv *f, size_t size, size_t align)
{
	u64 a = (f->next_alloc + align - 1) & ~(u64)(align - 1);

	if (a + size > f->ram_len)
		abort();
	f->next_alloc = a + size;
	memset(f->ram + a, 0, size);
	return a;
}

void *fakedrv_ram(struct fakedrv *f, u64 gpa)
{
	return f->ram + gpa;
}

u32 fakedrv_r32(struct fakedrv *f, unsigned int off)
{
	__le32 v;

	memcpy(&v, f->bar2 + off, 4);
	return le32_to_cpu(v);
}

void fakedrv_w32(struct fakedrv *f, unsigned int off, u32 val)
{
	__le32 v = cpu_to_le32(val);

	memcpy(f->bar2 + off, &v, 4);
}

void fakedrv_ring(struct fakedrv *f, unsigned int vector)
{
	f->doorbell(f->dev, vector);
}

u32 fakedrv_enable(struct fakedrv *f, unsigned int abi)
{
	f->aq_sq = fakedrv_alloc(f, RNIC_AQ_ENTRY_SIZE << f->aq_log2, 4096);
	f->aq_cq = fakedrv_alloc(f, RNIC_ACQ_ENTRY_SIZE << f->aq_log2, 4096);
	f->eq = fakedrv_alloc(f, RNIC_EQE_SIZE << f->eq_log2, 4096);
	f->aq_pi = 0;
	f->eq_ci = 0;

	fakedrv_w32(f, RNIC_REG_CTRL, RNIC_CTRL_RESET);
	fakedrv_ring(f, RNIC_DB_VEC_CTRL);
	if (!(fakedrv_r32(f, RNIC_REG_STATUS) & RNIC_STATUS_RESET_DONE))
		return fakedrv_r32(f, RNIC_REG_STATUS);
	fakedrv_w32(f, RNIC_REG_AQ_SQ_BASE_LO, (u32)f->aq_sq);
	fakedrv_w32(f, RNIC_REG_AQ_SQ_BASE_HI, (u32)(f->aq_sq >> 32));
	fakedrv_w32(f, RNIC_REG_AQ_CQ_BASE_LO, (u32)f->aq_cq);
	fakedrv_w32(f, RNIC_REG_AQ_CQ_BASE_HI, (u32)(f->aq_cq >> 32));
	fakedrv_w32(f, RNIC_REG_AQ_CFG, f->aq_log2);
	fakedrv_w32(f, RNIC_REG_EQ_BASE_LO, (u32)f->eq);
	fakedrv_w32(f, RNIC_REG_EQ_BASE_HI, (u32)(f->eq >> 32));
	fakedrv_w32(f, RNIC_REG_EQ_CFG, f->eq_log2);
	fakedrv_w32(f, RNIC_REG_CTRL, RNIC_CTRL_ENABLE |
		    FIELD_PREP(RNIC_CTRL_ABI, abi));
	fakedrv_ring(f, RNIC_DB_VEC_CTRL);
	return fakedrv_r32(f, RNIC_REG_STATUS);
}

/* The device completes an admin command within the doorbell. */
int fakedrv_admin(struct fakedrv *f, void *cmd, union rnic_aq_resp *resp)
{
	unsigned int mask = (1U << f->aq_log2) - 1;
	union rnic_aq_entry *e = cmd;
	u16 idx = f->aq_pi;
	struct rnic_acqe *c;

	if (!e->hdr.cmd_id)
		e->hdr.cmd_id = cpu_to_le16(++f->cmd_id);
	memcpy(fakedrv_ram(f, f->aq_sq + (idx & mask) * RNIC_AQ_ENTRY_SIZE),
	       e, sizeof(*e));
	f->aq_pi++;
	fakedrv_w32(f, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_ADMIN_SQ), f->aq_pi);
	fakedrv_ring(f, RNIC_DB_VEC_ADMIN);
	c = fakedrv_ram(f, f->aq_cq + (idx & mask) * RNIC_ACQ_ENTRY_SIZE);
	if (rnic_acqe_phase(c) != rnic_ring_phase(idx, f->aq_log2))
		return -1;	/* no completion */
	if (c->cmd_id != e->hdr.cmd_id || le16_to_cpu(c->sq_head) != f->aq_pi)
		return -2;
	if (resp)
		memcpy(resp, &c->result, sizeof(*resp));
	return c->status;
}

u64 fakedrv_port_stat(struct fakedrv *f, enum rnic_port_stat s)
{
	u64 buf = fakedrv_alloc(f, 8 * RNIC_NUM_PORT_STATS, 8);
	struct rnic_aq_query q = {};
	__le64 v;

	q.hdr.opcode = RNIC_AQ_QUERY_STATS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(8 * RNIC_NUM_PORT_STATS);
	if (fakedrv_admin(f, &q, NULL))
		return ~0ULL;
	memcpy(&v, fakedrv_ram(f, buf + 8 * s), 8);
	return le64_to_cpu(v);
}

bool fakedrv_eq0_next(struct fakedrv *f, struct rnic_eqe *e)
{
	unsigned int mask = (1U << f->eq_log2) - 1;
	struct rnic_eqe *p = fakedrv_ram(f, f->eq + (f->eq_ci & mask) *
					    RNIC_EQE_SIZE);

	if (rnic_eqe_phase(p) != rnic_ring_phase(f->eq_ci, f->eq_log2))
		return false;
	*e = *p;
	f->eq_ci++;
	fakedrv_w32(f, RNIC_DB_SLOT_OFF(RNIC_DB_SLOT_EQ),
		    rnic_db_cq(f->eq_ci, false, 0));
	return true;
}

unsigned int fakedrv_eq0_count(struct fakedrv *f, u8 type,
			       struct rnic_eqe *last)
{
	struct rnic_eqe e;
	unsigned int n = 0;

	while (fakedrv_eq0_next(f, &e)) {
		if (e.type != type)
			continue;
		n++;
		if (last)
			*last = e;
	}
	return n;
}
