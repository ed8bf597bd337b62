// SPDX-License-Identifier: GPL-2.0
/*
 * Fake platform and fake driver for the device model's unit tests; see
 * fake_plat.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_plat.h"
#include "rdma/engine.h"

const u8 t_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

struct plat *fake_plat_new(size_t bar2_len, size_t ram_len)
{
	struct plat *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->bar2 = calloc(1, bar2_len);
	p->bar2_len = bar2_len;
	p->ram = ram_len ? calloc(1, ram_len) : NULL;
	p->ram_len = ram_len;
	p->tx = calloc(FAKE_MAX_FRAMES, sizeof(*p->tx));
	p->now = 1000000000ULL;
	if (!p->bar2 || (ram_len && !p->ram) || !p->tx)
		abort();
	return p;
}

void fake_plat_free(struct plat *p)
{
	free(p->bar2);
	free(p->ram);
	free(p->tx);
	free(p);
}

void *plat_bar2(struct plat *p, size_t *len)
{
	*len = p->bar2_len;
	return p->bar2;
}

static bool in_ram(struct plat *p, uint64_t gpa, size_t len)
{
	return p->ram && gpa <= p->ram_len && len <= p->ram_len - gpa;
}

int plat_dma_read(struct plat *p, uint64_t gpa, void *buf, size_t len)
{
	if (!p->ram)
		return -ENODEV;
	if (!in_ram(p, gpa, len))
		return -EFAULT;
	memcpy(buf, p->ram + gpa, len);
	return 0;
}

int plat_dma_write(struct plat *p, uint64_t gpa, const void *buf, size_t len)
{
	if (!p->ram)
		return -ENODEV;
	if (!in_ram(p, gpa, len))
		return -EFAULT;
	memcpy(p->ram + gpa, buf, len);
	return 0;
}

void *plat_dma_ptr(struct plat *p, uint64_t gpa, size_t len)
{
	return in_ram(p, gpa, len) ? p->ram + gpa : NULL;
}

void plat_raise_irq(struct plat *p, unsigned int vector)
{
	if (vector < FAKE_MAX_VECTORS)
		p->irqs[vector]++;
}

int plat_wire_tx(struct plat *p, const uint8_t *frame, size_t len)
{
	struct fake_frame *f;

	if (p->wire_rc)
		return p->wire_rc;
	if (p->wire_hook)
		p->wire_hook(p->wire_ctx, frame, len);
	if (p->ntx < FAKE_MAX_FRAMES && len <= sizeof(f->data)) {
		f = &p->tx[p->ntx];
		memcpy(f->data, frame, len);
		f->len = len;
	}
	p->ntx++;
	return 0;
}

uint64_t plat_now_ns(struct plat *p)
{
	p->now_reads++;
	return p->now;
}

void plat_log(struct plat *p, const char *fmt, ...)
{
	size_t used = strlen(p->log);
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (used + strlen(line) + 2 > sizeof(p->log))
		used = 0;
	snprintf(p->log + used, sizeof(p->log) - used, "%s\n", line);
	if (getenv("RNICSIM_TEST_VERBOSE"))
		fprintf(stderr, "# rnicsim: %s\n", line);
}

/* ---- the fake driver ---- */

/* BAR0 Doorbell of the device under the fake driver */
static void ring_rdev(void *dev, unsigned int vector)
{
	rdev_doorbell(dev, vector);
}

struct tdev *tdev_new_cfg(const struct rdev_config *cfg, size_t ram_len)
{
	struct rdev_config c = *cfg;
	struct tdev *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	if (!c.engine)
		c.engine = &rdma_engine;
	t->p = fake_plat_new(1 << 20, ram_len);
	t->d = rdev_create(t->p, &c);
	if (!t->d)
		abort();
	fakedrv_init(&t->drv, t->p->bar2, t->p->ram, t->p->ram_len,
		     ring_rdev, t->d, T_AQ_LOG2, T_EQ_LOG2);
	return t;
}

struct tdev *tdev_new(u32 caps_disable)
{
	struct rdev_config cfg = { .num_vectors = 8,
				   .caps_disable = caps_disable };

	memcpy(cfg.mac, t_mac, sizeof(cfg.mac));
	return tdev_new_cfg(&cfg, T_RAM_SIZE);
}

void tdev_free(struct tdev *t)
{
	rdev_destroy(t->d);
	fake_plat_free(t->p);
	free(t);
}

u64 tput(struct tdev *t, const void *data, size_t len)
{
	u64 a = talloc(t, len, 64);

	memcpy(tram(t, a), data, len);
	return a;
}

u32 tdev_init(struct tdev *t)
{
	return tdev_init_abi(t, RNIC_ABI2_MAJOR);
}

u32 tdev_init_abi(struct tdev *t, unsigned int abi)
{
	return fakedrv_enable(&t->drv, abi);
}

struct tdev *tdev_up(void)
{
	struct tdev *t = tdev_new(0);

	if (tdev_init(t) != T_STATUS_UP)
		abort();
	return t;
}

int tadmin(struct tdev *t, union rnic_aq_entry *e, u32 *result)
{
	union rnic_aq_resp resp;
	int st = tadmin2(t, e, &resp);

	if (st >= 0 && result)
		*result = le32_to_cpu(resp.id.id);
	return st;
}

int tcreate_cq(struct tdev *t, unsigned int log2, unsigned int vector,
	       struct tcq *cq)
{
	union rnic_aq_entry e = {};
	u32 id = 0;
	int st;

	memset(cq, 0, sizeof(*cq));
	cq->log2 = log2;
	cq->base = talloc(t, RNIC_CQE_SIZE << log2, 4096);
	e.create_cq.hdr.opcode = RNIC_AQ_CREATE_CQ;
	e.create_cq.ring_addr = cpu_to_le64(cq->base);
	e.create_cq.log2_depth = log2;
	e.create_cq.msix_vector = cpu_to_le16(vector);
	st = tadmin(t, &e, &id);
	cq->id = id;
	return st;
}

int tcreate_queue(struct tdev *t, u8 type, unsigned int log2, u16 cq_id,
		  u32 rx_buf, u8 tx_prio, struct tq *q)
{
	bool rx = type == RNIC_QUEUE_ETH_RX;
	size_t esize = rx ? RNIC_RX_DESC_SIZE : RNIC_TX_DESC_SIZE;
	union rnic_aq_entry e = {};
	u32 id = 0;
	int st;

	memset(q, 0, sizeof(*q));
	q->type = type;
	q->log2 = log2;
	q->base = talloc(t, esize << log2, 4096);
	e.create_queue.hdr.opcode = RNIC_AQ_CREATE_QUEUE;
	e.create_queue.ring_addr = cpu_to_le64(q->base);
	e.create_queue.type = type;
	e.create_queue.log2_depth = log2;
	e.create_queue.cq_id = cpu_to_le16(cq_id);
	e.create_queue.rx_buf_size = cpu_to_le32(rx_buf);
	e.create_queue.tx_prio = tx_prio;
	st = tadmin(t, &e, &id);
	q->id = id;
	return st;
}

int tdestroy(struct tdev *t, u8 opcode, u16 id)
{
	union rnic_aq_entry e = {};

	e.destroy.hdr.opcode = opcode;
	e.destroy.id = cpu_to_le16(id);
	return tadmin(t, &e, NULL);
}

int tset_port(struct tdev *t, struct rnic_aq_set_port *sp)
{
	sp->hdr.opcode = RNIC_AQ_SET_PORT;
	return tadmin(t, (union rnic_aq_entry *)sp, NULL);
}

bool tcq_poll(struct tdev *t, struct tcq *cq, struct rnic_cqe *cqe)
{
	unsigned int mask = (1U << cq->log2) - 1;
	struct rnic_cqe *c = tram(t, cq->base + (cq->ci & mask) * RNIC_CQE_SIZE);

	if (rnic_cqe_phase(c) != rnic_ring_phase(cq->ci, cq->log2))
		return false;
	*cqe = *c;
	cq->ci++;
	tbar_w32(t, RNIC_DB_CQ_OFF(cq->id), rnic_db_cq(cq->ci, false,
						       cq->arm_seq));
	return true;
}

void tcq_arm(struct tdev *t, struct tcq *cq)
{
	cq->arm_seq++;
	tbar_w32(t, RNIC_DB_CQ_OFF(cq->id), rnic_db_cq(cq->ci, true,
						       cq->arm_seq));
	tring(t, RNIC_DB_VEC_EVENT);
}

void tpost_tx(struct tdev *t, struct tq *q, const struct rnic_tx_desc *desc)
{
	unsigned int mask = (1U << q->log2) - 1;

	memcpy(tram(t, q->base + (q->pi & mask) * RNIC_TX_DESC_SIZE), desc,
	       sizeof(*desc));
	q->pi++;
	tbar_w32(t, RNIC_DB_QUEUE_OFF(q->id), q->pi);
	tring(t, RNIC_DB_VEC_DATA);
}

void tpost_rx(struct tdev *t, struct tq *q, u64 addr, u32 len, bool ring)
{
	unsigned int mask = (1U << q->log2) - 1;
	struct rnic_rx_desc desc = {};

	desc.addr = cpu_to_le64(addr);
	desc.len = cpu_to_le32(len);
	memcpy(tram(t, q->base + (q->pi & mask) * RNIC_RX_DESC_SIZE), &desc,
	       sizeof(desc));
	q->pi++;
	tbar_w32(t, RNIC_DB_QUEUE_OFF(q->id), q->pi);
	if (ring)
		tring(t, RNIC_DB_VEC_DATA);
}

struct status_find {
	const char *want;
	bool found;
};

static void status_line(void *ctx, const char *line)
{
	struct status_find *sf = ctx;

	if (!strcmp(line, sf->want))
		sf->found = true;
}

bool tstatus_has(struct tdev *t, const char *want)
{
	struct status_find sf = { .want = want };

	rdev_dump_counters(t->d, status_line, &sf);
	return sf.found;
}
