// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim --bench, the device part: the real device model driven through
 * its rings the way the driver drives it (rnic_hw.h), on the real platform
 * code, with a memfd as guest RAM and a socketpair as the wire.
 *
 *  tx: post RoCE v2 TX descriptors (header buffer + payload straddling a
 *      page, ICRC and IPv4 checksum offloads), ring, reap completions;
 *  rx: the event loop takes frames off the wire, the device classifies,
 *      checks the ICRC and DMAs into posted buffers; we reap and repost.
 *
 * These figures include descriptor parsing, DMA, offloads, completions
 * and doorbells: the model's whole datapath, minus QEMU and the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rnic_hw.h>

#include "bench.h"
#include "pkt.h"
#include "sim.h"

#define AQ_LOG2		4
#define EQ_LOG2		6
#define RING_LOG2	9
#define CQ_LOG2		10
#define RX_BUF		(9 * 1024 + 512)
#define HDR_LEN		(14 + 20 + 8 + 12)
#define PAGE_SZ		4096ull
#define BATCH		32

struct bring {
	u64 base;
	unsigned int log2;
	u16 id, pi, ci;
};

struct bdrv {
	struct bench_host h;
	struct sim *s;
	struct bring cq, q;
	/* wire */
	int far_fd;
	atomic_bool stop;
	u8 frame[65536];
	size_t frame_len;
};

static void *ram(struct bdrv *b, u64 gpa)
{
	return bench_ram(&b->h, gpa);
}

static u64 ralloc(struct bdrv *b, u64 size, u64 align)
{
	return bench_alloc(&b->h, size, align);
}

static void bar_w32(struct bdrv *b, unsigned int off, u32 v)
{
	bench_bar_w32(&b->h, off, v);
}

static void ring(struct bdrv *b, unsigned int vec)
{
	b->h.ops->doorbell(b->h.dev, vec);
}

static int admin(struct bdrv *b, union rnic_aq_entry *e, u32 *result)
{
	union rnic_aq_resp resp;
	int st = bench_admin(&b->h, e, &resp);

	if (!st && result)
		*result = le32_to_cpu(resp.id.id);
	return st;
}

/* 1.0, jumbo MTU (4 KiB frames), and check the ICRC of what arrives. */
static int drv_up(struct bdrv *b)
{
	struct rnic_aq_set_port *sp;
	union rnic_aq_entry e;
	int ret = bench_host_up(&b->h, 0);

	if (ret)
		return ret;
	memset(&e, 0, sizeof(e));
	sp = &e.set_port;
	sp->hdr.opcode = RNIC_AQ_SET_PORT;
	sp->valid = cpu_to_le32(RNIC_PORT_VALID_MTU | RNIC_PORT_VALID_FLAGS);
	sp->mtu = cpu_to_le16(bench_host_max_mtu(&b->h));
	sp->flags = cpu_to_le32(RNIC_PORT_F_RX_ICRC_CHECK);
	return admin(b, &e, NULL) ? -EIO : 0;
}

/* ---- the host part, shared with bench_v2.c ---- */

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

/* Reset, then enable with ABI @abi (0: 1.0) and the admin queue and EQ. */
int bench_host_up(struct bench_host *h, unsigned int abi)
{
	const struct rnic_sig *sig = (const void *)(h->bar + RNIC_SIG_OFF);
	u32 want = RNIC_STATUS_ENABLED;

	if (!rnic_sig_serves(le32_to_cpu(sig->magic),
			     le16_to_cpu(sig->abi_major),
			     le16_to_cpu(sig->abi_compat),
			     abi ? abi : RNIC_ABI_MAJOR))
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
		      FIELD_PREP(RNIC_CTRL_ABI, abi));
	h->ops->doorbell(h->dev, RNIC_DB_VEC_CTRL);
	if (abi)
		want |= FIELD_PREP(RNIC_STATUS_ABI, abi);
	return bench_bar_r32(h, RNIC_REG_STATUS) == want ? 0 : -EIO;
}

static int make_queue(struct bdrv *b, u8 type)
{
	bool rx = type == RNIC_QUEUE_ROCE_RX;
	union rnic_aq_entry e;
	u32 id;

	memset(&b->cq, 0, sizeof(b->cq));
	b->cq.log2 = CQ_LOG2;
	b->cq.base = ralloc(b, RNIC_CQE_SIZE << CQ_LOG2, PAGE_SZ);
	memset(&e, 0, sizeof(e));
	e.create_cq.hdr.opcode = RNIC_AQ_CREATE_CQ;
	e.create_cq.ring_addr = cpu_to_le64(b->cq.base);
	e.create_cq.log2_depth = CQ_LOG2;
	e.create_cq.msix_vector = cpu_to_le16(1);
	if (admin(b, &e, &id))
		return -EIO;
	b->cq.id = (u16)id;
	memset(&b->q, 0, sizeof(b->q));
	b->q.log2 = RING_LOG2;
	b->q.base = ralloc(b, (rx ? RNIC_RX_DESC_SIZE : RNIC_TX_DESC_SIZE)
			   << RING_LOG2, PAGE_SZ);
	memset(&e, 0, sizeof(e));
	e.create_queue.hdr.opcode = RNIC_AQ_CREATE_QUEUE;
	e.create_queue.ring_addr = cpu_to_le64(b->q.base);
	e.create_queue.type = type;
	e.create_queue.log2_depth = RING_LOG2;
	e.create_queue.cq_id = cpu_to_le16(b->cq.id);
	e.create_queue.rx_buf_size = cpu_to_le32(rx ? RX_BUF : 0);
	if (admin(b, &e, &id))
		return -EIO;
	b->q.id = (u16)id;
	return 0;
}

static void drop_queue(struct bdrv *b)
{
	union rnic_aq_entry e;

	memset(&e, 0, sizeof(e));
	e.destroy.hdr.opcode = RNIC_AQ_DESTROY_QUEUE;
	e.destroy.id = cpu_to_le16(b->q.id);
	admin(b, &e, NULL);
	memset(&e, 0, sizeof(e));
	e.destroy.hdr.opcode = RNIC_AQ_DESTROY_CQ;
	e.destroy.id = cpu_to_le16(b->cq.id);
	admin(b, &e, NULL);
}

/* Reap completions; counts good ones, and bad ones in @bad. */
static unsigned int reap(struct bdrv *b, u64 *bad)
{
	unsigned int mask = (1u << CQ_LOG2) - 1, n = 0;
	struct rnic_cqe *c;

	for (;;) {
		c = ram(b, b->cq.base + (b->cq.ci & mask) * RNIC_CQE_SIZE);
		if (rnic_cqe_phase(c) != rnic_ring_phase(b->cq.ci, CQ_LOG2))
			break;
		if (c->status != RNIC_CQE_OK ||
		    (!(le32_to_cpu(c->flags) & RNIC_CQE_F_TX) &&
		     !rnic_cqe_icrc_good(c)))
			(*bad)++;
		else
			n++;
		b->cq.ci++;
		b->q.ci++;
	}
	if (n || *bad)
		bar_w32(b, RNIC_DB_CQ_OFF(b->cq.id),
			rnic_db_cq(b->cq.ci, false, 0));
	return n;
}

static void *drain(void *arg)
{
	struct bdrv *b = arg;
	u8 buf[65536];

	while (recv(b->far_fd, buf, sizeof(buf), 0) > 0)
		;
	return NULL;
}

static void *feed(void *arg)
{
	struct bdrv *b = arg;

	while (!atomic_load(&b->stop))
		if (send(b->far_fd, b->frame, b->frame_len, MSG_NOSIGNAL) < 0)
			break;
	return NULL;
}

/* A RoCE v2 SEND ONLY header for @payload bytes (ICRC not included). */
static void roce_header(u8 *h, size_t payload)
{
	size_t udp_len = 8 + 12 + payload + RNIC_ICRC_LEN;

	memset(h, 0, HDR_LEN);
	memcpy(h, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00",
	       14);
	h[14] = 0x45;
	h[16] = (u8)((20 + udp_len) >> 8);
	h[17] = (u8)(20 + udp_len);
	h[20] = 0x40;
	h[22] = 64;
	h[23] = 17;
	memcpy(h + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	h[34] = 0xc0;
	h[36] = PKT_ROCE_V2_PORT >> 8;
	h[37] = PKT_ROCE_V2_PORT & 0xff;
	h[38] = (u8)(udp_len >> 8);
	h[39] = (u8)udp_len;
	h[42] = 0x04;		/* RC SEND ONLY */
	h[43] = (u8)(((4 - payload % 4) % 4) << 4);
	h[44] = 0xff;
	h[45] = 0xff;
	h[49] = 0x11;
}

static int dev_tx(struct bdrv *b, const struct sim_opts *o, size_t frame_len)
{
	size_t payload = frame_len - HDR_LEN - RNIC_ICRC_LEN;
	unsigned int mask = (1u << RING_LOG2) - 1, i;
	u64 hdr, pay, addr[2], t0, c0, now, end, done = 0, bad = 0;
	struct rnic_tx_desc d;
	pthread_t th;
	u32 len[2];
	int sv[2];

	if (make_queue(b, RNIC_QUEUE_ROCE_TX))
		return -EIO;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	b->far_fd = sv[1];
	if (sim_attach_wire_fd(b->s, sv[0]) ||
	    pthread_create(&th, NULL, drain, b))
		return -EIO;
	hdr = ralloc(b, HDR_LEN, 64);
	roce_header(ram(b, hdr), payload);
	pay = ralloc(b, payload + 2 * PAGE_SZ, PAGE_SZ) + PAGE_SZ - 100;
	addr[0] = hdr;
	addr[1] = pay;
	len[0] = HDR_LEN;
	len[1] = (u32)payload;
	rnic_tx_desc_build(&d, RNIC_TX_F_ICRC | RNIC_TX_F_IPV4_CSUM, 0, addr,
			   len, 2);
	t0 = sim_now_ns();
	c0 = bench_cpu_ns();
	end = t0 + (u64)(o->bench_seconds * 1e9);
	do {
		for (i = 0; i < BATCH && (u16)(b->q.pi - b->q.ci) <= mask;
		     i++) {
			memcpy(ram(b, b->q.base + (b->q.pi & mask) *
				   RNIC_TX_DESC_SIZE), &d, sizeof(d));
			b->q.pi++;
		}
		bar_w32(b, RNIC_DB_QUEUE_OFF(b->q.id), b->q.pi);
		ring(b, RNIC_DB_VEC_DATA);
		done += reap(b, &bad);
		now = sim_now_ns();
	} while (!sim_stop_signal && now < end && !bad);
	if (send(sv[0], "", 0, MSG_NOSIGNAL) < 0)
		shutdown(sv[1], SHUT_RDWR);
	pthread_join(th, NULL);
	bench_report("tx", frame_len, done, now - t0, bench_cpu_ns() - c0,
	       "device: descriptors, DMA gather, csum + ICRC, wire, CQEs");
	close(sv[0]);
	close(sv[1]);
	b->s->tap.fd = -1;
	drop_queue(b);
	if (bad)
		printf("rnicsim bench: tx: %llu completions in error!\n",
		       (unsigned long long)bad);
	return bad ? -EIO : 0;
}

static void post_rx(struct bdrv *b, u64 bufs, unsigned int n)
{
	unsigned int mask = (1u << RING_LOG2) - 1, i;
	struct rnic_rx_desc *r;

	for (i = 0; i < n; i++) {
		r = ram(b, b->q.base + (b->q.pi & mask) * RNIC_RX_DESC_SIZE);
		r->addr = cpu_to_le64(bufs + (u64)(b->q.pi & mask) * RX_BUF);
		r->len = 0;
		b->q.pi++;
	}
	bar_w32(b, RNIC_DB_QUEUE_OFF(b->q.id), b->q.pi);
	ring(b, RNIC_DB_VEC_DATA);
}

static int dev_rx(struct bdrv *b, const struct sim_opts *o, size_t frame_len)
{
	size_t payload = frame_len - HDR_LEN - RNIC_ICRC_LEN;
	unsigned int depth = 1u << RING_LOG2, got;
	u64 bufs, t0, c0, now, end, done = 0, bad = 0;
	struct pkt_info info;
	pthread_t th;
	int sv[2];

	if (make_queue(b, RNIC_QUEUE_ROCE_RX))
		return -EIO;
	bufs = ralloc(b, (u64)RX_BUF * depth, PAGE_SZ);
	post_rx(b, bufs, depth);
	roce_header(b->frame, payload);
	memset(b->frame + HDR_LEN, 0x5a, payload);
	b->frame_len = frame_len;
	pkt_ipv4_csum_fill(b->frame, 14);
	pkt_classify(b->frame, frame_len, PKT_ROCE_V2_PORT, &info);
	pkt_icrc_fill(b->frame, &info);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	b->far_fd = sv[1];
	atomic_store(&b->stop, false);
	if (sim_attach_wire_fd(b->s, sv[0]) ||
	    pthread_create(&th, NULL, feed, b))
		return -EIO;
	t0 = sim_now_ns();
	c0 = bench_cpu_ns();
	end = t0 + (u64)(o->bench_seconds * 1e9);
	do {
		sim_run_once(b->s, 10);
		got = reap(b, &bad);
		done += got;
		if (got)
			post_rx(b, bufs, got);
		now = sim_now_ns();
	} while (!sim_stop_signal && now < end && !bad);
	atomic_store(&b->stop, true);
	shutdown(sv[1], SHUT_RDWR);
	pthread_join(th, NULL);
	bench_report("rx", frame_len, done, now - t0, bench_cpu_ns() - c0,
	       "device: wire, classify, ICRC check, DMA to buffers, CQEs");
	close(sv[0]);
	close(sv[1]);
	b->s->tap.fd = -1;
	drop_queue(b);
	if (bad)
		printf("rnicsim bench: rx: %llu completions in error!\n",
		       (unsigned long long)bad);
	return bad ? -EIO : 0;
}

int bench_device(struct sim *s, const struct bench_dev_hooks *h,
		 const struct sim_opts *o, const size_t *sizes,
		 unsigned int nsizes)
{
	struct bdrv *b;
	unsigned int i;
	int ret;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->s = s;
	b->h.s = s;
	b->h.ops = h->ops;
	b->h.bar = s->ivs.shm;
	b->h.dev = h->create(s, o);
	if (!b->h.dev) {
		free(b);
		return -ENODEV;
	}
	sim_attach_dev(s, h->ops, b->h.dev);
	ret = drv_up(b);
	if (ret)
		printf("rnicsim bench: device did not come up (%d)\n", ret);
	for (i = 0; i < nsizes && !ret; i++)
		ret = dev_tx(b, o, sizes[i]);
	for (i = 0; i < nsizes && !ret; i++)
		ret = dev_rx(b, o, sizes[i]);
	s->dev_ops = NULL;
	h->destroy(b->h.dev);
	free(b);
	return ret;
}
