// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim --bench=abi2: the ABI 2.0 device model, two of them back to
 * back, running the IB transport (rdma_*.c, rc_*.c) for a driver that
 * posts WQEs to rings and rings doorbell pages as the kernel driver does
 * (fakedrv/fakedrv_rdma.h). Each device has its own simulator (sim.c: guest RAM, BAR2,
 * fault injection, pcap); the wire between them is in-process (a frame
 * sent by one goes through the other's RX side into its receive buffer
 * at once, to be run at its next tick), so the figures are the model's
 * alone; or, for --bench=abi2-tap, two taps on a bridge (bench_net.c):
 *
 *  - RC WRITE of 64 KiB, A to B: bandwidth;
 *  - RC SEND of 64 B, A to B, every message checked at B: message rate;
 *  - RC WRITE of 8 B, A to B then B to A, each side polling the byte in
 *    memory the other writes (as ib_write_lat does): round-trip latency.
 *
 * Rates are also given per CPU-second of the whole process (both
 * devices and the driver run in this one thread), which leaves out the
 * time other processes of a busy machine take. The bytes WRITE moved
 * are compared with their source at the end and every SEND is checked
 * at B, so a transport that loses or garbles data cannot look fast.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "fakedrv/fakedrv_rdma.h"
#include "platform/sim.h"

#define BP_RAM_SIZE	(64ull << 20)
#define BP_AQ_LOG2	4
#define BP_EQ_LOG2	6
#define BP_CQ_LOG2	11
#define BP_SQ_LOG2	9
#define BP_RQ_LOG2	9
#define BP_SQE_LOG2	6		/* header + one SGE */
#define BP_RQE_LOG2	5
#define BP_BUF_SIZE	(4ull << 20)	/* per side, behind a PBL MR */
#define BP_IOVA		0x40000000ull

#define WR_SIZE		(64u << 10)
#define WR_SLOTS	16		/* WR_SLOTS * WR_SIZE <= BP_BUF_SIZE / 2 */
#define WR_DEPTH	16		/* WRITEs outstanding */
#define SEND_SIZE	64
#define SEND_SIGNAL	16		/* one signaled SEND in so many */
#define LAT_SIZE	8
#define LAT_WORD	(BP_BUF_SIZE - 64)	/* where each side polls */
#define LAT_MAX_SAMPLES	(1u << 20)
/* Untimed rounds first: page faults of first touches are not the model's */
#define WARMUP_ROUNDS	32

struct bench_side {
	struct bench_pair *b;
	unsigned int idx;
	struct sim_opts o;	/* the device's MAC is the driver's */
	struct sim sim;
	void *dev;		/* the device model */
	struct fakedrv drv;	/* its driver's bus layer */
	struct rdrv x;
	struct rdrv_cq cq;
	struct rdrv_qp qp;
	u64 buf;		/* guest address of the MR's buffer */
	u32 key;		/* PBL MR over it, lkey = rkey */
	u16 sq_done;		/* SQ WQEs completed (free-running) */
};

struct bench_pair {
	const char *label;	/* "abi2", "abi2 over tap" */
	bool tap;		/* the wire: taps on a bridge, not in-process */
	const struct bench_dev_hooks *hooks;
	struct sim_opts o;
	struct bench_side side[2];
	bool moved;		/* a frame went over the in-process wire */
};

#define BP_PRINT(b, fmt, ...) \
	printf("rnicsim bench: %s " fmt, (b)->label, ##__VA_ARGS__)

/* Process CPU time: both devices and the driver are this thread. */
static u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* ---- the driver's reach into a device ---- */

/* The signature says ABI 2.0 is served: 0 or -ENODEV. */
static int sig_check(struct bench_side *sd)
{
	const struct rnic_sig *sig = (const void *)(sd->drv.bar2 +
						    RNIC_SIG_OFF);

	return rnic_sig_serves(le32_to_cpu(sig->magic),
			       le16_to_cpu(sig->abi_major),
			       le16_to_cpu(sig->abi_compat),
			       RNIC_ABI2_MAJOR) ? 0 : -ENODEV;
}

/* The largest MTU the device takes, up to 9000 (jumbo frames). */
static u16 max_mtu(struct bench_side *sd)
{
	const struct rnic_sig *sig = (const void *)(sd->drv.bar2 +
						    RNIC_SIG_OFF);
	u32 max_frame = le32_to_cpu(sig->max_frame);

	return max_frame > 9000 + RNIC_FRAME_OVERHEAD ? 9000 :
	       (u16)(max_frame - RNIC_FRAME_OVERHEAD);
}

/* ---- the wire ---- */

/*
 * A frame left side @ctx's TX fault injection: into the other side's RX
 * (counters, fault injection, pcap, the device's receive buffer). The
 * receiving device only buffers it here, so this never re-enters the
 * sender, whose pump is running.
 */
static void wire_hook(void *ctx, const uint8_t *frame, size_t len)
{
	struct bench_side *from = ctx;
	struct bench_pair *b = from->b;

	b->moved = true;
	sim_wire_rx(&b->side[!from->idx].sim, frame, len);
}

static void tick(struct bench_side *sd)
{
	struct sim *s = &sd->sim;

	/* Over taps, rnicsim's own loop: frames read, then the tick. */
	if (sd->b->tap) {
		sim_run_once(s, 0);
		return;
	}
	/* Delayed or held frames (--fault delay/reorder) that are due */
	if (fault_active(&s->fault))
		s->fault_deadline = fault_poll(&s->fault, sim_now_ns());
	s->dev_deadline = s->dev_ops->tick(s->dev, sim_now_ns());
}

/* What rnicsim's loop does after a batch of events: each device ticks. */
static void wire_step(struct bench_pair *b)
{
	tick(&b->side[0]);
	tick(&b->side[1]);
}

static u64 frames_seen(struct bench_pair *b)
{
	return b->side[0].sim.rx_frames + b->side[0].sim.tx_frames +
	       b->side[1].sim.rx_frames + b->side[1].sim.tx_frames;
}

/* Until no frame moves: every message posted is answered or lost. */
static void wire_run(struct bench_pair *b)
{
	u64 seen;

	do {
		b->moved = false;
		seen = frames_seen(b);
		wire_step(b);
	} while (b->moved || (b->tap && frames_seen(b) != seen));
}

/* ---- set-up ---- */

static int side_up(struct bench_pair *b, unsigned int i)
{
	struct bench_side *sd = &b->side[i];
	struct rnic_aq_set_port sp = {};
	char err[256];
	int fd, ret;

	sd->b = b;
	sd->idx = i;
	sd->o = b->o;
	sd->o.mac[0] = 0x02;
	memset(sd->o.mac + 1, 0, 4);
	sd->o.mac[5] = (u8)(i + 1);
	/*
	 * --fault and --pcap once per wire, at A: its TX is the A to B
	 * direction, its RX the B to A one; its pcap sees every frame.
	 */
	if (i) {
		sd->o.fault[0] = '\0';
		sd->o.pcap = NULL;
	}
	if (b->tap)
		sd->o.tap = bench_net_taps[i];
	ret = sim_init(&sd->sim, &sd->o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rnicsim: bench: %s\n", err);
		return ret;
	}
	fd = memfd_create("rnicsim-bench2-ram", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)BP_RAM_SIZE) ||
	    gmem_map_fd(&sd->sim.gmem, fd, BP_RAM_SIZE)) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	close(fd);
	sd->dev = b->hooks->create(&sd->sim, &sd->o);
	if (!sd->dev)
		return -ENODEV;
	sim_attach_dev(&sd->sim, b->hooks->ops, sd->dev);
	if (!b->tap)
		sim_attach_wire_hook(&sd->sim, wire_hook, sd);
	fakedrv_init(&sd->drv, sd->sim.ivs.shm, sd->sim.gmem.base,
		     sd->sim.gmem.size, b->hooks->ops->doorbell, sd->dev,
		     BP_AQ_LOG2, BP_EQ_LOG2);
	ret = sig_check(sd);
	if (ret)
		return ret;
	if (fakedrv_enable(&sd->drv, RNIC_ABI2_MAJOR) !=
	    (RNIC_STATUS_ENABLED | FIELD_PREP(RNIC_STATUS_ABI,
					      RNIC_ABI2_MAJOR)))
		return -EIO;
	rdrv_init(&sd->x, (u8)(i + 1), &sd->drv, sd);
	sd->x.path_mtu = RNIC_PMTU_4096;
	/* Jumbo frames, so that 4 KiB path MTU packets fit. */
	sp.hdr.opcode = RNIC_AQ_SET_PORT;
	sp.valid = cpu_to_le32(RNIC_PORT_VALID_MTU);
	sp.mtu = cpu_to_le16(max_mtu(sd));
	if (rdrv_cmd(&sd->x, &sp, NULL) || rdrv_setup(&sd->x))
		return -EIO;
	sd->buf = rdrv_alloc(&sd->x, BP_BUF_SIZE, 4096);
	if (rdrv_mr_pbl(&sd->x, sd->x.pdn, RNIC_ACCESS_ALL, BP_IOVA,
		      BP_BUF_SIZE, sd->buf, &sd->key) ||
	    rdrv_cq_create(&sd->x, BP_CQ_LOG2, &sd->cq) ||
	    rdrv_qp_create(&sd->x, RNIC_QPT_RC, sd->x.pdn, &sd->cq, &sd->cq,
			 NULL, BP_SQ_LOG2, BP_SQE_LOG2, BP_RQ_LOG2, BP_RQE_LOG2,
			 &sd->qp))
		return -EIO;
	return 0;
}

static void side_down(struct bench_pair *b, unsigned int i)
{
	struct bench_side *sd = &b->side[i];

	if (sd->dev) {
		sd->sim.dev_ops = NULL;
		b->hooks->destroy(sd->dev);
		sd->dev = NULL;
	}
	if (sd->sim.epfd > 0)
		sim_fini(&sd->sim);
}

static int connect_pair(struct bench_pair *b)
{
	struct bench_side *a = &b->side[0], *c = &b->side[1];

	if (rdrv_rc_connect(&a->x, &a->qp, &c->x, c->qp.qpn,
			  RNIC_RX_CLASS_ROCE_V2_IPV4) ||
	    rdrv_rc_connect(&c->x, &c->qp, &a->x, a->qp.qpn,
			  RNIC_RX_CLASS_ROCE_V2_IPV4))
		return -EIO;
	return 0;
}

/* ---- the driver's side of the runs ---- */

static void *mem(struct bench_side *sd, u64 off)
{
	return rdrv_ram(&sd->x, sd->buf + off);
}

/*
 * Reap @sd's CQ: send completions advance sq_done (a CQE retires the
 * unsignaled WQEs before it), receive ones go to @recv. Returns the
 * number of CQEs in error.
 */
static unsigned int reap(struct bench_side *sd,
			 void (*recv)(struct bench_side *sd,
				      const struct rnic_rdma_cqe *c, void *arg),
			 void *arg)
{
	struct rnic_rdma_cqe c;
	unsigned int bad = 0;

	while (rdrv_cq_poll(&sd->x, &sd->cq, &c)) {
		if (c.status != RNIC_WC_SUCCESS) {
			bad++;
			continue;
		}
		if (c.opcode & RNIC_CQE_OP_RECV_BIT) {
			if (recv)
				recv(sd, &c, arg);
		} else {
			sd->sq_done = le16_to_cpu(c.wqe_idx) + 1;
		}
	}
	return bad;
}

static unsigned int sq_room(struct bench_side *sd, unsigned int depth)
{
	u16 used = sd->qp.sq_pi - sd->sq_done;

	return used >= depth ? 0 : depth - used;
}

static void post_write(struct bench_side *from, struct bench_side *to, u64 src_off,
		       u64 dst_off, u32 len, bool signaled, bool ring)
{
	u8 wqe[1u << BP_SQE_LOG2];

	rdrv_rc_wqe(wqe, RNIC_SQE_OP_WRITE, signaled ? RNIC_SQE_F_SIGNALED : 0,
		  len, BP_IOVA + src_off, from->key, BP_IOVA + dst_off,
		  to->key);
	rdrv_post_send(&from->x, &from->qp, wqe, ring);
}

static bool out_of_time(u64 end)
{
	return sim_stop_signal || sim_now_ns() >= end;
}

static void report(struct bench_pair *b, const char *what, double count,
		   double unit, const char *uname, u64 wall, u64 cpu,
		   const char *note)
{
	printf("rnicsim bench: %s %s: %8.2f %s | per CPU-s %8.2f %s  (%s)\n",
	       b->label, what, count * unit * 1e9 / (double)(wall ? wall : 1), uname,
	       count * unit * 1e9 / (double)(cpu ? cpu : 1), uname, note);
}

/* Source pattern: differs per slot and per byte, never all zero. */
static void fill(u8 *p, size_t n, unsigned int seed)
{
	u32 x = 0x9e3779b9u * (seed + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (u8)x;
	}
}

/*
 * One round of the WRITE run: fill the SQ up to WR_DEPTH, let the wire
 * run dry, reap. Returns CQEs in error; *@done counts messages done.
 */
static unsigned int write_round(struct bench_pair *b, u64 *posted, u64 *done)
{
	struct bench_side *a = &b->side[0], *c = &b->side[1];
	const u64 dst = BP_BUF_SIZE / 2;
	unsigned int room = sq_room(a, WR_DEPTH), i, slot, bad;

	for (i = 0; i < room; i++, (*posted)++) {
		slot = *posted % WR_SLOTS;
		post_write(a, c, (u64)slot * WR_SIZE, dst + (u64)slot * WR_SIZE,
			   WR_SIZE, true, i == room - 1);
	}
	wire_run(b);
	bad = reap(a, NULL, NULL) + reap(c, NULL, NULL);
	*done = *posted - (u16)(a->qp.sq_pi - a->sq_done);
	return bad;
}

/* 64 KiB WRITEs from A's first half to B's second half. */
static int run_write(struct bench_pair *b)
{
	struct bench_side *a = &b->side[0], *c = &b->side[1];
	const u64 dst = BP_BUF_SIZE / 2;
	u64 t0, c0, wall, cpu, end, done = 0, done0, posted = 0;
	unsigned int bad = 0, i;

	for (i = 0; i < WR_SLOTS; i++)
		fill(mem(a, (u64)i * WR_SIZE), WR_SIZE, i);
	for (i = 0; i < WARMUP_ROUNDS && !bad; i++)
		bad += write_round(b, &posted, &done);
	done0 = done;
	t0 = sim_now_ns();
	c0 = cpu_ns();
	end = t0 + (u64)(b->o.bench_seconds * 1e9);
	/* One round at least, however little of the machine we get */
	do
		bad += write_round(b, &posted, &done);
	while (!bad && !out_of_time(end));
	done -= done0;
	wall = sim_now_ns() - t0;
	cpu = cpu_ns() - c0;
	if (bad) {
		BP_PRINT(b, "WRITE: %u completions in error!\n",
		       bad);
		return -EIO;
	}
	report(b, "RC WRITE 65536 B", (double)done, WR_SIZE * 8.0 / 1e9, "Gbit/s",
	       wall, cpu, "64 KiB messages, 4 KiB path MTU, A to B");

	/* Check: B's copy cleared, every slot written once more, compared. */
	memset(mem(c, dst), 0, (size_t)WR_SLOTS * WR_SIZE);
	for (i = 0; i < WR_SLOTS; i++) {
		while (!sq_room(a, WR_DEPTH)) {
			wire_run(b);
			bad += reap(a, NULL, NULL);
		}
		post_write(a, c, (u64)i * WR_SIZE, dst + (u64)i * WR_SIZE,
			   WR_SIZE, true, true);
	}
	while (a->qp.sq_pi != a->sq_done && !bad && !sim_stop_signal) {
		wire_run(b);
		bad += reap(a, NULL, NULL);
	}
	if (bad || memcmp(mem(a, 0), mem(c, dst), (size_t)WR_SLOTS * WR_SIZE)) {
		BP_PRINT(b, "WRITE: the data written differs "
		       "from its source!\n");
		return -EIO;
	}
	BP_PRINT(b, "WRITE data verified (%u KiB compared "
	       "with the source)\n", WR_SLOTS * WR_SIZE >> 10);
	return 0;
}

struct send_state {
	u64 expect;		/* sequence number of the next message */
	u64 received, wrong;
	unsigned int reposts;
};

/* B's receive buffer for RQ index @idx: the second half of its buffer */
static u64 rbuf_off(u16 idx)
{
	return BP_BUF_SIZE / 2 + (u64)(idx & ((1u << BP_RQ_LOG2) - 1)) *
				 SEND_SIZE;
}

static void post_recv(struct bench_side *sd, bool ring)
{
	struct rnic_data_sge sge = {
		.addr = cpu_to_le64(BP_IOVA + rbuf_off(sd->qp.rq_pi)),
		.len = cpu_to_le32(SEND_SIZE),
		.lkey = cpu_to_le32(sd->key),
	};

	rdrv_post_recv(&sd->x, &sd->qp, &sge, 1, ring);
}

/* Every message in order, of the right length, carrying its number. */
static void send_recv(struct bench_side *sd, const struct rnic_rdma_cqe *c,
		      void *arg)
{
	struct send_state *st = arg;
	u64 seq;

	memcpy(&seq, mem(sd, rbuf_off(le16_to_cpu(c->wqe_idx))), 8);
	if (le32_to_cpu(c->byte_len) != SEND_SIZE || seq != st->expect)
		st->wrong++;
	st->expect++;
	st->received++;
	st->reposts++;
}

/* One round of the SEND run, as write_round(). */
static unsigned int send_round(struct bench_pair *b, u64 *posted,
			       struct send_state *st)
{
	struct bench_side *a = &b->side[0], *c = &b->side[1];
	unsigned int rq_depth = 1u << BP_RQ_LOG2, room, i, slot, bad;
	u8 wqe[1u << BP_SQE_LOG2];

	/* No more than B has receives posted for: no RNR waits. */
	room = sq_room(a, 1u << BP_SQ_LOG2);
	if (room > rq_depth - (u16)(*posted - st->received))
		room = rq_depth - (u16)(*posted - st->received);
	room -= room % SEND_SIGNAL;
	for (i = 0; i < room; i++, (*posted)++) {
		slot = *posted % (1u << BP_SQ_LOG2);
		memcpy(mem(a, (u64)slot * SEND_SIZE), posted, 8);
		rdrv_rc_wqe(wqe, RNIC_SQE_OP_SEND,
			  (*posted + 1) % SEND_SIGNAL ? 0 : RNIC_SQE_F_SIGNALED,
			  SEND_SIZE, BP_IOVA + (u64)slot * SEND_SIZE, a->key,
			  0, 0);
		rdrv_post_send(&a->x, &a->qp, wqe, i == room - 1);
	}
	wire_run(b);
	bad = reap(a, NULL, NULL);
	st->reposts = 0;
	bad += reap(c, send_recv, st);
	for (i = 0; i < st->reposts; i++)
		post_recv(c, i == st->reposts - 1);
	return bad;
}

static int run_send(struct bench_pair *b)
{
	struct bench_side *c = &b->side[1];
	unsigned int rq_depth = 1u << BP_RQ_LOG2, bad = 0, i;
	u64 t0, c0, wall, cpu, end, posted = 0, rcvd0;
	struct send_state st = {};

	for (i = 0; i < rq_depth; i++)
		post_recv(c, i == rq_depth - 1);
	for (i = 0; i < WARMUP_ROUNDS && !bad && !st.wrong; i++)
		bad += send_round(b, &posted, &st);
	rcvd0 = st.received;
	t0 = sim_now_ns();
	c0 = cpu_ns();
	end = t0 + (u64)(b->o.bench_seconds * 1e9);
	do
		bad += send_round(b, &posted, &st);
	while (!bad && !st.wrong && !out_of_time(end));
	wall = sim_now_ns() - t0;
	cpu = cpu_ns() - c0;
	if (bad || st.wrong || st.received != posted) {
		BP_PRINT(b, "SEND: %u completions in error, "
		       "%llu of %llu messages wrong or missing!\n", bad,
		       (unsigned long long)st.wrong,
		       (unsigned long long)(posted - st.received + st.wrong));
		return -EIO;
	}
	report(b, "RC SEND 64 B", (double)(st.received - rcvd0), 1e-6,
	       "M msg/s", wall, cpu, "A to B, each message checked at B");
	BP_PRINT(b, "SEND data verified (%llu messages, each "
	       "in order with its number)\n",
	       (unsigned long long)st.received);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Post an 8-byte WRITE of @seq into the peer's polled word, and wait. */
static bool ping(struct bench_pair *b, struct bench_side *from, struct bench_side *to,
		 u64 seq)
{
	volatile u64 *seen = mem(to, LAT_WORD);
	unsigned int steps = 0;
	u64 give_up = 0;

	memcpy(mem(from, 0), &seq, LAT_SIZE);
	if (!sq_room(from, 1u << BP_SQ_LOG2))
		return false;
	/* Signaled now and then, for the SQ to retire */
	post_write(from, to, 0, LAT_WORD, LAT_SIZE, !(seq % 64), true);
	while (*seen != seq) {
		wire_step(b);
		/* A lost frame waits for the retransmit timer (4 ms) */
		if (++steps % 1024)
			continue;
		if (!give_up)
			give_up = sim_now_ns() + 2000000000ull;
		else if (sim_now_ns() > give_up || sim_stop_signal)
			return false;
	}
	return !reap(from, NULL, NULL);
}

/*
 * What reading the CPU clock costs (a system call: there is no vDSO for
 * it): the median gap between two reads, taken off every sample.
 */
static u64 clock_cost(void)
{
	u64 d[101], t, t1;
	unsigned int i;

	t = cpu_ns();
	for (i = 0; i < 101; i++) {
		t1 = cpu_ns();
		d[i] = t1 - t;
		t = t1;
	}
	qsort(d, 101, sizeof(d[0]), cmp_u64);
	return d[50];
}

static int run_latency(struct bench_pair *b)
{
	struct bench_side *a = &b->side[0], *c = &b->side[1];
	u64 *lat, t, t1, end, cost, n = 0, seq = 1;
	int ret = 0;

	lat = malloc(LAT_MAX_SAMPLES * sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	wire_run(b);
	for (; seq <= 64 * WARMUP_ROUNDS && !ret; seq++)
		if (!ping(b, a, c, seq) || !ping(b, c, a, seq))
			ret = -EIO;
	cost = clock_cost();
	end = sim_now_ns() + (u64)(b->o.bench_seconds * 1e9);
	t = cpu_ns();
	while (!ret && n < LAT_MAX_SAMPLES && !out_of_time(end)) {
		if (!ping(b, a, c, seq) || !ping(b, c, a, seq)) {
			ret = -EIO;
			break;
		}
		seq++;
		t1 = cpu_ns();
		lat[n++] = t1 - t > cost ? t1 - t - cost : 0;
		t = t1;
	}
	if (ret || !n) {
		BP_PRINT(b, "WRITE 8 B: a round trip did not "
		       "complete!\n");
		free(lat);
		return -EIO;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	BP_PRINT(b, "RC WRITE 8 B round trip: p50 %6.2f us "
	       "p99 %6.2f us  (CPU time, %llu round trips, each side polls "
	       "the word the other writes; the clock read, %.2f us, taken "
	       "off)\n", (double)lat[n / 2] / 1e3,
	       (double)lat[n * 99 / 100] / 1e3, (unsigned long long)n,
	       (double)cost / 1e3);
	free(lat);
	return 0;
}

int bench_abi2(const struct sim_opts *o, const struct bench_dev_hooks *dev,
	       bool tap)
{
	struct bench_net net = { .home = -1 };
	char why[256];
	struct bench_pair *b;
	int ret = 0;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->label = tap ? "abi2 over tap" : "abi2";
	b->tap = tap;
	b->hooks = dev;
	/* Two devices serving ABI 2.0, no guest, no sockets. */
	b->o = *o;
	b->o.signature_abi = 0;
	b->o.socket = NULL;
	b->o.tap = NULL;
	b->o.ctl = NULL;
	b->o.guest_mem = NULL;
	b->o.guest_mem_size = 0;
	if (tap) {
		ret = bench_net_up(&net, why, sizeof(why));
		if (ret == -EPERM) {
			/* Not a failure of the model: said, and not counted */
			BP_PRINT(b, "SKIPPED: %s\n", why);
			free(b);
			return 0;
		}
		if (ret) {
			BP_PRINT(b, "network: %s!\n", why);
			free(b);
			return ret;
		}
		BP_PRINT(b, "bridge %s, taps %s and %s, in a network "
			 "namespace of its own\n", BENCH_NET_BRIDGE,
			 bench_net_taps[0], bench_net_taps[1]);
	}
	if (side_up(b, 0) || side_up(b, 1) || connect_pair(b)) {
		BP_PRINT(b, "devices: did not come up!\n");
		ret = -EIO;
	}
	if (!ret)
		ret = run_write(b);
	if (!ret)
		ret = run_send(b);
	if (!ret)
		ret = run_latency(b);
	side_down(b, 0);
	side_down(b, 1);
	bench_net_down(&net);
	free(b);
	return ret;
}
