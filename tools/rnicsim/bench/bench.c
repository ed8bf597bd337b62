// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim --bench: frames/s and bytes/s through the model's own datapath,
 * without QEMU, so a slow lab run can be blamed on the guest or on us.
 *
 * It runs the real platform code (sim.c) with a memfd as guest RAM and a
 * socketpair as the wire (a thread at the far end drains or feeds it):
 *
 *  tx: gather a 54-byte RoCE v2 header and the payload, page by page, with
 *      the DMA calls the device uses; IPv4 checksum, classification, ICRC;
 *      then the wire path (fault injection, pcap, send).
 *  rx: the event loop reads frames off the wire, then classification,
 *      ICRC check and a DMA scatter of the payload into guest RAM.
 *
 * These two measure the platform alone (--bench without a value);
 * bench_rdma.c then runs two ABI 2.0 device models back to back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "pkt/crc32.h"
#include "pkt/pkt.h"
#include "platform/sim.h"

#define BENCH_RAM_SIZE		(64ull << 20)
#define BENCH_HDR_GPA		0x1000ull
#define BENCH_PAYLOAD_GPA	0x100000ull
#define BENCH_PAYLOAD_SPAN	(32ull << 20)
#define BENCH_RX_GPA		(48ull << 20)
#define ROCE_HDR_LEN		(14 + 20 + 8 + 12)
#define PAGE			4096ull

struct bench {
	struct sim sim;
	int far_fd;		/* the other end of the wire */
	atomic_bool stop;
	uint64_t drained, fed;
	/* rx "device" */
	uint64_t rx_ok, rx_bad, rx_bytes, rx_gpa;
	uint8_t frame[65536];
	size_t frame_len;
};

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void *drain_thread(void *arg)
{
	struct bench *b = arg;
	uint8_t buf[65536];

	while (recv(b->far_fd, buf, sizeof(buf), 0) > 0)
		b->drained++;
	return NULL;
}

static void *feed_thread(void *arg)
{
	struct bench *b = arg;

	while (!atomic_load(&b->stop)) {
		if (send(b->far_fd, b->frame, b->frame_len, MSG_NOSIGNAL) < 0)
			break;
		b->fed++;
	}
	return NULL;
}

/* A RoCE v2 SEND ONLY header for @payload bytes, as a driver would. */
static size_t build_header(uint8_t *h, size_t payload)
{
	size_t udp_len = 8 + 12 + payload + 4;

	memset(h, 0, ROCE_HDR_LEN);
	memcpy(h, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00",
	       14);
	h[14] = 0x45;
	h[16] = (uint8_t)((20 + udp_len) >> 8);
	h[17] = (uint8_t)(20 + udp_len);
	h[20] = 0x40;
	h[22] = 64;
	h[23] = 17;
	memcpy(h + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	h[34] = 0xc0;
	h[36] = PKT_ROCE_V2_PORT >> 8;
	h[37] = PKT_ROCE_V2_PORT & 0xff;
	h[38] = (uint8_t)(udp_len >> 8);
	h[39] = (uint8_t)udp_len;
	h[42] = 0x04;		/* RC SEND ONLY */
	h[44] = 0xff;
	h[45] = 0xff;
	h[49] = 0x11;		/* QPN */
	return ROCE_HDR_LEN;
}

uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void bench_report(const char *dir, size_t len, uint64_t frames,
		  uint64_t wall_ns, uint64_t cpu_ns, const char *what)
{
	double fps = (double)frames * 1e9 / (double)(wall_ns ? wall_ns : 1);
	double cps = (double)frames * 1e9 / (double)(cpu_ns ? cpu_ns : 1);

	/*
	 * Wall-clock rate, and the rate per CPU-second of the model's own
	 * thread: on a busy shared machine the second is the steadier
	 * measure of what the (single-threaded) model can do.
	 */
	printf("rnicsim bench: %s %5zu B: %8.0f frames/s %6.2f Gbit/s | "
	       "per model CPU-s %8.0f frames/s %6.2f Gbit/s  (%s)\n", dir, len,
	       fps, fps * (double)len * 8 / 1e9, cps,
	       cps * (double)len * 8 / 1e9, what);
}

static int bench_tx(struct bench *b, const struct sim_opts *o, size_t payload)
{
	uint8_t hdr[ROCE_HDR_LEN], frame[ROCE_HDR_LEN + 65536];
	uint64_t t0, c0, now, end, frames = 0, iter = 0, gpa, off = 0;
	size_t len = ROCE_HDR_LEN + payload + 4, chunk, done;
	struct pkt_info info;
	pthread_t th;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	b->far_fd = sv[1];
	b->drained = 0;
	if (sim_attach_wire_fd(&b->sim, sv[0]) ||
	    pthread_create(&th, NULL, drain_thread, b)) {
		close(sv[0]);
		close(sv[1]);
		return -EIO;
	}
	build_header(hdr, payload);
	sim_dma_write(&b->sim, BENCH_HDR_GPA, hdr, sizeof(hdr));
	t0 = sim_now_ns();
	c0 = bench_cpu_ns();
	end = t0 + (uint64_t)(o->bench_seconds * 1e9);
	do {
		/* Gather: the header buffer, then the payload page by page. */
		if (sim_dma_read(&b->sim, BENCH_HDR_GPA, frame, ROCE_HDR_LEN))
			break;
		gpa = BENCH_PAYLOAD_GPA + off + 100;	/* straddles pages */
		off = (off + 2 * PAGE) % BENCH_PAYLOAD_SPAN;
		for (done = 0; done < payload; done += chunk) {
			chunk = PAGE - (gpa + done) % PAGE;
			if (chunk > payload - done)
				chunk = payload - done;
			sim_dma_read(&b->sim, gpa + done,
				     frame + ROCE_HDR_LEN + done, chunk);
		}
		len = ROCE_HDR_LEN + payload + 4;
		pkt_ipv4_csum_fill(frame, 14);
		if (pkt_classify(frame, len, PKT_ROCE_V2_PORT, &info) !=
		    PKT_CLASS_ROCE_V2_IPV4)
			return -EINVAL;
		pkt_icrc_fill(frame, &info);
		if (!sim_wire_tx(&b->sim, frame, len))
			frames++;
		now = (++iter & 63) ? 0 : sim_now_ns();
	} while (!sim_stop_signal && (!now || now < end));
	now = sim_now_ns();
	/* An empty datagram tells the drain thread to stop. */
	if (send(sv[0], "", 0, MSG_NOSIGNAL) < 0)
		shutdown(sv[1], SHUT_RDWR);
	pthread_join(th, NULL);
	bench_report("tx", len, frames, now - t0, bench_cpu_ns() - c0,
	       "platform: DMA gather, csum, classify, ICRC, wire");
	/* Detach the wire again for the next run. */
	close(sv[0]);
	close(sv[1]);
	b->sim.tap.fd = -1;
	return 0;
}

/* The "device" for the RX run: what rdev_wire_rx would have to do. */
static void rx_frame(void *dev, const uint8_t *frame, size_t len)
{
	struct bench *b = dev;
	struct pkt_info info;
	size_t plen;

	switch (pkt_classify(frame, len, PKT_ROCE_V2_PORT, &info)) {
	case PKT_CLASS_ROCE_V1:
	case PKT_CLASS_ROCE_V2_IPV4:
	case PKT_CLASS_ROCE_V2_IPV6:
		if (!pkt_icrc_ok(frame, &info)) {
			b->rx_bad++;
			return;
		}
		plen = info.icrc_off - info.bth_off - 12;
		if (sim_dma_write(&b->sim, BENCH_RX_GPA + b->rx_gpa,
				  frame + info.bth_off + 12, plen) == 0) {
			b->rx_ok++;
			b->rx_bytes += len;
		}
		b->rx_gpa = (b->rx_gpa + 8192) % (8ull << 20);
		return;
	default:
		b->rx_bad++;
	}
}

static void nop_doorbell(void *dev, unsigned int v)
{
	(void)dev;
	(void)v;
}

static void nop_link(void *dev, bool up)
{
	(void)dev;
	(void)up;
}

static uint64_t nop_tick(void *dev, uint64_t now)
{
	(void)dev;
	(void)now;
	return 0;
}

static void nop_reset(void *dev)
{
	(void)dev;
}

static const struct sim_dev_ops bench_dev_ops = {
	.doorbell = nop_doorbell,
	.wire_rx = rx_frame,
	.set_link = nop_link,
	.tick = nop_tick,
	.reset = nop_reset,
};

static int bench_rx(struct bench *b, const struct sim_opts *o, size_t payload)
{
	uint64_t t0, c0, now, end;
	struct pkt_info info;
	pthread_t th;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* Our end non-blocking like a tap; the feeder blocks when full. */
	if (sim_attach_wire_fd(&b->sim, sv[0])) {
		close(sv[0]);
		close(sv[1]);
		return -EIO;
	}
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	build_header(b->frame, payload);
	memset(b->frame + ROCE_HDR_LEN, 0x5a, payload);
	b->frame_len = ROCE_HDR_LEN + payload + 4;
	pkt_ipv4_csum_fill(b->frame, 14);
	pkt_classify(b->frame, b->frame_len, PKT_ROCE_V2_PORT, &info);
	pkt_icrc_fill(b->frame, &info);
	b->far_fd = sv[1];
	b->rx_ok = b->rx_bad = b->rx_bytes = b->fed = 0;
	atomic_store(&b->stop, false);
	if (pthread_create(&th, NULL, feed_thread, b))
		return -EIO;
	t0 = sim_now_ns();
	c0 = bench_cpu_ns();
	end = t0 + (uint64_t)(o->bench_seconds * 1e9);
	do {
		sim_run_once(&b->sim, 100);
		now = sim_now_ns();
	} while (!sim_stop_signal && now < end);
	atomic_store(&b->stop, true);
	shutdown(sv[1], SHUT_RDWR);
	pthread_join(th, NULL);
	bench_report("rx", b->frame_len, b->rx_ok, now - t0,
		     bench_cpu_ns() - c0,
	       "platform: wire, classify, ICRC check, DMA scatter");
	if (b->rx_bad)
		printf("rnicsim bench: rx: %llu frames failed the check!\n",
		       (unsigned long long)b->rx_bad);
	close(sv[0]);
	close(sv[1]);
	b->sim.tap.fd = -1;
	return b->rx_bad ? -EIO : 0;
}

/* @impl < 0: crc32_update() itself, as the ICRC code calls it. */
static void bench_crc_one(const struct sim_opts *o, int impl)
{
	static uint8_t buf[65536];
	uint64_t t0, c0, n = 0, ns, cpu;
	uint32_t c = 0;

	memset(buf, 0xa5, sizeof(buf));
	t0 = sim_now_ns();
	c0 = bench_cpu_ns();
	do {
		if (impl < 0)
			c ^= crc32_update(c, buf, sizeof(buf));
		else
			c ^= crc32_update_impl(impl, c, buf, sizeof(buf));
		n++;
	} while ((ns = sim_now_ns() - t0) < (uint64_t)(o->bench_seconds * 2e8));
	cpu = bench_cpu_ns() - c0;
	printf("rnicsim bench: CRC-32 (%s): %6.0f MB/s | per model CPU-s "
	       "%6.0f MB/s  (%s; check %08x)\n",
	       impl < 0 ? "ICRC" : crc32_impl_name(impl),
	       (double)n * sizeof(buf) / secs(ns) / 1e6,
	       (double)n * sizeof(buf) / secs(cpu ? cpu : 1) / 1e6,
	       impl < 0 ? crc32_impl_name(crc32_impl_active()) : "fallback",
	       c);
}

/* What the ICRC uses, then the implementations it could fall back to. */
static void bench_crc(const struct sim_opts *o)
{
	int impl;

	bench_crc_one(o, -1);
	for (impl = 0; impl < CRC32_IMPL_COUNT; impl++)
		if (impl != (int)crc32_impl_active() &&
		    crc32_impl_available(impl))
			bench_crc_one(o, impl);
}

int bench_run(const struct sim_opts *o, const struct bench_dev_hooks *dev)
{
	static const size_t frame_sizes[] = { 64, 1024, 4096 };
	struct sim_opts so = *o;
	char err[256], load[64];
	struct bench *b;
	size_t i;
	FILE *lf;
	int fd, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* No guest, no tap, no sockets: only the datapath. */
	so.socket = NULL;
	so.tap = NULL;
	so.ctl = NULL;
	so.guest_mem = NULL;
	so.guest_mem_size = 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = sim_init(&b->sim, &so, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "rnicsim: bench: %s\n", err);
		free(b);
		return ret;
	}
	fd = memfd_create("rnicsim-bench-ram", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)BENCH_RAM_SIZE) ||
	    gmem_map_fd(&b->sim.gmem, fd, BENCH_RAM_SIZE)) {
		fprintf(stderr, "rnicsim: bench: guest RAM: %s\n",
			strerror(errno));
		ret = -ENOMEM;
		goto out;
	}
	close(fd);
	sim_attach_dev(&b->sim, &bench_dev_ops, b);
	load[0] = '\0';
	lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (!fgets(load, sizeof(load), lf))
			load[0] = '\0';
		fclose(lf);
	}
	load[strcspn(load, " ")] = '\0';
	/* A shared 2-core lab machine: say how busy it was. */
	printf("rnicsim bench: %.1f s per run, fault injection: %s, pcap: %s, "
	       "load average %s\n", o->bench_seconds,
	       o->fault[0] ? o->fault : "off", o->pcap ? o->pcap : "off",
	       load[0] ? load : "?");
	bench_crc(o);
	for (i = 0; i < sizeof(frame_sizes) / sizeof(frame_sizes[0]) && !ret &&
	     o->bench_platform; i++)
		ret = bench_tx(b, o, frame_sizes[i] - ROCE_HDR_LEN - 4);
	for (i = 0; i < sizeof(frame_sizes) / sizeof(frame_sizes[0]) && !ret &&
	     o->bench_platform; i++)
		ret = bench_rx(b, o, frame_sizes[i] - ROCE_HDR_LEN - 4);
out:
	sim_fini(&b->sim);
	free(b);
	/* Two devices of their own, each on its own simulator. */
	if (!ret && dev && o->bench_abi2)
		ret = bench_abi2(o, dev, false);
	if (!ret && dev && o->bench_tap)
		ret = bench_abi2(o, dev, true);
	return ret;
}
