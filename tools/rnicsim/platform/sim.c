// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's event loop and platform services (see sim.h).
 *
 * Single-threaded by design: the device model is called only from this
 * loop, so it needs no locking. Every source is non-blocking; the wait
 * time is bounded by the nearest timer (device tick, delayed frames,
 * pause storm) and by the carrier poll interval.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "platform/sim.h"

#define TAG_IVS_LISTEN		1ull
#define TAG_IVS_CONN		2ull
#define TAG_DOORBELL		3ull
#define TAG_TAP			4ull
#define TAG_CTL_LISTEN		5ull
#define TAG_CTL_CLIENT		6ull
#define TAG(t, i)		((t) << 32 | (uint32_t)(i))

#define CARRIER_POLL_NS		200000000ull	/* 200 ms */
#define RX_BURST		64
#define MAX_WAIT_MS		500

volatile sig_atomic_t sim_stop_signal;

uint64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_vlog(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	/* One write per line, so lines from a crash-time log stay whole. */
	fprintf(stderr, "rnicsim: %s%s", line,
		line[0] && line[strlen(line) - 1] == '\n' ? "" : "\n");
}

void sim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vlog(fmt, ap);
	va_end(ap);
}

static int ep_add(struct sim *s, int fd, uint64_t tag, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* ---- link ---- */

static bool link_wanted(struct sim *s)
{
	return (s->wire_hook || (s->tap.fd >= 0 && s->tap.carrier)) &&
	       !s->fault.link_down;
}

static void link_update(struct sim *s)
{
	bool up = link_wanted(s);

	if (up == s->link_up)
		return;
	s->link_up = up;
	s->link_changes++;
	sim_log("link %s%s", up ? "up" : "down",
		s->fault.link_down ? " (forced)" : "");
	if (s->dev_ops)
		s->dev_ops->set_link(s->dev, up);
}

/* ---- frames out of fault injection ---- */

static void fault_emit(void *ctx, enum fault_dir dir, const uint8_t *frame,
		       size_t len)
{
	struct sim *s = ctx;
	int ret;

	if (dir == FAULT_TX) {
		/* A frame delayed across a link drop is lost with the link. */
		if (!s->link_up) {
			s->tx_link_down++;
			s->tx_err = -ENETDOWN;
			return;
		}
		if (s->wire_hook) {
			pcap_write(&s->pcap, frame, len);
			s->wire_hook(s->wire_ctx, frame, len);
			return;
		}
		ret = tap_send(&s->tap, frame, len);
		if (ret) {
			s->tx_wire_err++;
			s->tx_err = ret;
			return;
		}
		pcap_write(&s->pcap, frame, len);
		return;
	}
	if (!s->link_up) {
		s->rx_link_down++;
		return;
	}
	pcap_write(&s->pcap, frame, len);
	if (s->dev_ops)
		s->dev_ops->wire_rx(s->dev, frame, len);
}

static void fault_link(void *ctx, bool forced_down)
{
	(void)forced_down;
	link_update(ctx);
}

static const struct fault_ops sim_fault_ops = {
	.emit = fault_emit,
	.link = fault_link,
};

/* ---- control socket commands ---- */

static int ctl_fault_set(void *ctx, const char *spec, char *msg, size_t len)
{
	struct sim *s = ctx;
	int ret;

	ret = fault_parse(&s->fault, spec, sim_now_ns(), msg, len);
	if (ret)
		return ret;
	fault_describe(&s->fault, msg, len);
	sim_log("fault: %s", msg);
	return 0;
}

static void ctl_fault_show(void *ctx, char *msg, size_t len)
{
	struct sim *s = ctx;

	fault_describe(&s->fault, msg, len);
}

static void ctl_fault_clear(void *ctx)
{
	struct sim *s = ctx;

	fault_clear(&s->fault);
	sim_log("fault: cleared");
}

static void ctl_link(void *ctx, bool up)
{
	struct sim *s = ctx;
	char err[64];

	fault_parse(&s->fault, up ? "link=up" : "link=down", sim_now_ns(),
		    err, sizeof(err));
}

/* rx, tx and aq hold|release: @fn is the device's op (may be NULL) */
static int ctl_hold(struct sim *s, const char *what,
		    int (*fn)(void *dev, bool hold), bool hold, char *msg,
		    size_t len)
{
	int ret = -ENODEV;

	if (s->dev_ops && fn)
		ret = fn(s->dev, hold);
	if (ret == -EOPNOTSUPP)
		snprintf(msg, len, "%s hold needs a device serving ABI 2.0 (rnicsim without --signature-abi)",
			 what);
	else if (ret)
		snprintf(msg, len, "%s hold: %s", what, strerror(-ret));
	else
		sim_log("%s %s", what, hold ? "held (test knob)" : "released");
	return ret;
}

static int ctl_rx_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct sim *s = ctx;

	return ctl_hold(s, "rx", s->dev_ops ? s->dev_ops->rx_hold : NULL,
			hold, msg, len);
}

static int ctl_tx_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct sim *s = ctx;

	return ctl_hold(s, "tx", s->dev_ops ? s->dev_ops->tx_hold : NULL,
			hold, msg, len);
}

static int ctl_aq_hold(void *ctx, bool hold, char *msg, size_t len)
{
	struct sim *s = ctx;

	return ctl_hold(s, "aq", s->dev_ops ? s->dev_ops->aq_hold : NULL,
			hold, msg, len);
}

static int ctl_fatal(void *ctx, uint32_t *reason, char *msg, size_t len)
{
	struct sim *s = ctx;
	int ret = -ENODEV;

	if (s->dev_ops && s->dev_ops->fatal)
		ret = s->dev_ops->fatal(s->dev, reason);
	if (ret == -EOPNOTSUPP)
		snprintf(msg, len, "fatal needs a device serving ABI 2.0 (rnicsim without --signature-abi)");
	else if (ret == -EALREADY)
		snprintf(msg, len, "fatal: the device is already fatal (a reset recovers it)");
	else if (ret)
		snprintf(msg, len, "fatal: %s", strerror(-ret));
	else
		sim_log("device made fatal (test knob), reason %u", *reason);
	return ret;
}

static int ctl_arm_peek(void *ctx, bool peek, char *msg, size_t len)
{
	struct sim *s = ctx;

	if (!s->dev_ops || !s->dev_ops->arm_peek) {
		snprintf(msg, len, "arm-peek is not available");
		return -EOPNOTSUPP;
	}
	sim_log("CQ arms %s satisfying CQEs already there (test knob)",
		peek ? "fire at once on" : "wait past");
	return s->dev_ops->arm_peek(s->dev, peek);
}

static void ctl_counters(void *ctx, ctl_out_fn out, void *octx)
{
	sim_dump_counters(ctx, out, octx);
}

static int ctl_pcap_start(void *ctx, const char *path, char *err, size_t len)
{
	struct sim *s = ctx;
	int ret = pcap_open(&s->pcap, path);

	if (ret)
		snprintf(err, len, "pcap %s: %s", path, strerror(-ret));
	return ret;
}

static void ctl_pcap_stop(void *ctx)
{
	struct sim *s = ctx;

	pcap_close(&s->pcap);
}

static void ctl_quit(void *ctx)
{
	struct sim *s = ctx;

	s->quit = true;
}

static const struct ctl_ops sim_ctl_ops = {
	.fault_set = ctl_fault_set,
	.fault_show = ctl_fault_show,
	.fault_clear = ctl_fault_clear,
	.link = ctl_link,
	.rx_hold = ctl_rx_hold,
	.tx_hold = ctl_tx_hold,
	.aq_hold = ctl_aq_hold,
	.fatal = ctl_fatal,
	.arm_peek = ctl_arm_peek,
	.counters = ctl_counters,
	.pcap_start = ctl_pcap_start,
	.pcap_stop = ctl_pcap_stop,
	.quit = ctl_quit,
};

static void guest_connecting(void *ctx);

/* ---- setup ---- */

int sim_init(struct sim *s, const struct sim_opts *o, char *err,
	     size_t errlen)
{
	unsigned int v;
	int ret;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->epfd = -1;
	s->tap.fd = s->tap.ctl_sock = -1;
	s->ctl.listen_fd = -1;
	s->ivs.listen_fd = s->ivs.conn_fd = s->ivs.shm_fd = -1;
	gmem_init(&s->gmem, o->guest_mem, o->guest_mem_size);
	fault_init(&s->fault, &sim_fault_ops, s, o->seed);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		snprintf(err, errlen, "out of resources: %s", strerror(errno));
		ret = -ENOMEM;
		goto fail;
	}
	ret = ivs_init(&s->ivs, o->socket, (size_t)o->shm_size, o->vectors,
		       err, errlen);
	if (ret)
		goto fail;
	s->ivs.on_connect = guest_connecting;
	s->ivs.ctx = s;
	if (s->ivs.listen_fd >= 0 &&
	    ep_add(s, s->ivs.listen_fd, TAG(TAG_IVS_LISTEN, 0), EPOLLIN))
		goto fail_ep;
	for (v = 0; v < o->vectors; v++)
		if (ep_add(s, s->ivs.model_efd[v], TAG(TAG_DOORBELL, v),
			   EPOLLIN))
			goto fail_ep;
	if (o->tap) {
		ret = tap_open(&s->tap, o->tap, err, errlen);
		if (ret)
			goto fail;
		sim_wire_batch(s);
		if (ep_add(s, s->tap.fd, TAG(TAG_TAP, 0), EPOLLIN))
			goto fail_ep;
	}
	ret = ctl_init(&s->ctl, o->ctl, &sim_ctl_ops, s, err, errlen);
	if (ret)
		goto fail;
	if (s->ctl.listen_fd >= 0 &&
	    ep_add(s, s->ctl.listen_fd, TAG(TAG_CTL_LISTEN, 0), EPOLLIN))
		goto fail_ep;
	if (o->pcap) {
		ret = pcap_open(&s->pcap, o->pcap);
		if (ret) {
			snprintf(err, errlen, "--pcap %s: %s", o->pcap,
				 strerror(-ret));
			goto fail;
		}
	}
	if (o->fault[0]) {
		char why[256];

		ret = fault_parse(&s->fault, o->fault, sim_now_ns(), why,
				  sizeof(why));
		if (ret) {
			snprintf(err, errlen, "--fault: %s", why);
			goto fail;
		}
	}
	/* The RAM file may not exist yet; that is fine until a guest comes. */
	gmem_map(&s->gmem);
	s->link_up = link_wanted(s);
	return 0;
fail_ep:
	snprintf(err, errlen, "epoll: %s", strerror(errno));
	ret = -errno;
fail:
	sim_fini(s);
	return ret ? ret : -EINVAL;
}

void sim_attach_dev(struct sim *s, const struct sim_dev_ops *ops, void *dev)
{
	s->dev_ops = ops;
	s->dev = dev;
	s->link_up = link_wanted(s);
	ops->set_link(dev, s->link_up);
	s->dev_deadline = ops->tick(dev, sim_now_ns());
}

int sim_attach_wire_fd(struct sim *s, int fd)
{
	if (s->tap.fd >= 0)
		return -EBUSY;
	tap_attach_fd(&s->tap, fd);
	if (ep_add(s, fd, TAG(TAG_TAP, 0), EPOLLIN)) {
		s->tap.fd = -1;
		return -errno;
	}
	link_update(s);
	return 0;
}

/*
 * The frames the device sends in one turn of the event loop go to the
 * wire in one system call (tap_batch_enable()), flushed before the loop
 * waits again. A host without io_uring sends them one write each.
 */
void sim_wire_batch(struct sim *s)
{
	int ret = tap_batch_enable(&s->tap);

	if (ret)
		sim_log("wire %s: io_uring unavailable (%s): a system call "
			"per frame", s->tap.name, strerror(-ret));
}

/* Send the frames queued for the wire; those that failed are counted. */
void sim_wire_flush(struct sim *s)
{
	s->tx_wire_err += tap_flush(&s->tap);
}

void sim_attach_wire_hook(struct sim *s,
			  void (*hook)(void *ctx, const uint8_t *frame,
				       size_t len), void *ctx)
{
	s->wire_hook = hook;
	s->wire_ctx = ctx;
	link_update(s);
}

void sim_fini(struct sim *s)
{
	fault_fini(&s->fault);
	pcap_close(&s->pcap);
	ctl_fini(&s->ctl);
	tap_close(&s->tap);
	ivs_fini(&s->ivs);
	gmem_fini(&s->gmem);
	if (s->epfd >= 0)
		close(s->epfd);
	s->epfd = -1;
}

/* ---- platform services ---- */

int sim_dma_read(struct sim *s, uint64_t gpa, void *buf, size_t len)
{
	if (!s->gmem.base)
		gmem_try_map(&s->gmem, sim_now_ns());
	return gmem_read(&s->gmem, gpa, buf, len);
}

int sim_dma_write(struct sim *s, uint64_t gpa, const void *buf, size_t len)
{
	if (!s->gmem.base)
		gmem_try_map(&s->gmem, sim_now_ns());
	return gmem_write(&s->gmem, gpa, buf, len);
}

void *sim_dma_ptr(struct sim *s, uint64_t gpa, size_t len)
{
	if (!s->gmem.base)
		gmem_try_map(&s->gmem, sim_now_ns());
	return gmem_ptr(&s->gmem, gpa, len);
}

void sim_raise_irq(struct sim *s, unsigned int vector)
{
	ivs_raise(&s->ivs, vector);
}

int sim_wire_tx(struct sim *s, const uint8_t *frame, size_t len)
{
	if (!frame || len < 14 || len > 65535) {
		s->tx_bad_len++;
		return -EINVAL;
	}
	if (!s->link_up) {
		s->tx_link_down++;
		return -ENETDOWN;
	}
	s->tx_frames++;
	s->tx_bytes += len;
	s->tx_err = 0;
	/* A clock read per frame shows in the benchmark: only when used. */
	fault_process(&s->fault, FAULT_TX, frame, len,
		      fault_needs_clock(&s->fault, FAULT_TX) ? sim_now_ns() : 0);
	return s->tx_err;
}

/* ---- counters ---- */

struct counter_out {
	void (*out)(void *ctx, const char *line);
	void *ctx;
};

static void put(struct counter_out *co, const char *name, uint64_t v)
{
	char line[128];

	snprintf(line, sizeof(line), "%s %" PRIu64, name, v);
	co->out(co->ctx, line);
}

void sim_dump_counters(struct sim *s, void (*out)(void *ctx, const char *l),
		       void *ctx)
{
	struct counter_out co = { out, ctx };
	char name[64];
	unsigned int v;

	put(&co, "plat_guest_connected", s->ivs.conn_fd >= 0);
	put(&co, "plat_guest_connects", s->ivs.connects);
	put(&co, "plat_guest_disconnects", s->ivs.disconnects);
	put(&co, "plat_guest_rejected", s->ivs.rejected);
	put(&co, "plat_handshake_errors", s->ivs.handshake_errors);
	for (v = 0; v < s->ivs.nvec; v++) {
		snprintf(name, sizeof(name), "plat_doorbell_v%u", v);
		put(&co, name, s->ivs.doorbells[v]);
	}
	for (v = 0; v < s->ivs.nvec; v++) {
		snprintf(name, sizeof(name), "plat_irq_v%u", v);
		put(&co, name, s->ivs.irqs[v]);
	}
	put(&co, "plat_irq_no_guest", s->ivs.irqs_no_guest);
	put(&co, "plat_guest_mem_mapped", s->gmem.size);
	put(&co, "plat_dma_faults", s->gmem.faults);
	put(&co, "plat_dma_no_mem", s->gmem.no_mem);
	put(&co, "plat_dma_read_bytes", s->gmem.read_bytes);
	put(&co, "plat_dma_write_bytes", s->gmem.write_bytes);
	put(&co, "plat_link_up", s->link_up);
	put(&co, "plat_link_changes", s->link_changes);
	put(&co, "plat_tx_frames", s->tx_frames);
	put(&co, "plat_tx_bytes", s->tx_bytes);
	put(&co, "plat_tx_link_down", s->tx_link_down);
	put(&co, "plat_tx_bad_len", s->tx_bad_len);
	put(&co, "plat_tx_wire_errors", s->tx_wire_err);
	put(&co, "plat_rx_frames", s->rx_frames);
	put(&co, "plat_rx_bytes", s->rx_bytes);
	put(&co, "plat_rx_link_down", s->rx_link_down);
	put(&co, "plat_wire_tx_frames", s->tap.tx_frames);
	put(&co, "plat_wire_tx_bytes", s->tap.tx_bytes);
	put(&co, "plat_wire_tx_full", s->tap.tx_full);
	put(&co, "plat_wire_tx_errors", s->tap.tx_errors);
	put(&co, "plat_wire_tx_batched", s->tap.tx_ring != NULL);
	put(&co, "plat_wire_tx_flushes", s->tap.tx_flushes);
	put(&co, "plat_wire_rx_calls", s->tap.rx_calls);
	put(&co, "plat_wire_rx_errors", s->tap.rx_errors);
	put(&co, "plat_pcap_frames", s->pcap.frames);
	put(&co, "plat_pcap_errors", s->pcap.errors);
	put(&co, "plat_ctl_commands", s->ctl.commands);
	put(&co, "plat_ctl_errors", s->ctl.errors);
	fault_dump(&s->fault, out, ctx);
	if (s->dev_ops && s->dev_ops->dump_counters)
		s->dev_ops->dump_counters(s->dev, out, ctx);
}

/* ---- the loop ---- */

/* Before the handshake: RAM mapped and the device reset. */
static void guest_connecting(void *ctx)
{
	struct sim *s = ctx;
	int ret;

	gmem_unmap(&s->gmem);
	ret = gmem_map(&s->gmem);
	if (ret && s->gmem.path)
		sim_log("guest RAM %s not mapped yet (%s); will retry",
			s->gmem.path, strerror(-ret));
	if (s->dev_ops) {
		s->dev_ops->reset(s->dev);
		s->dev_ops->set_link(s->dev, s->link_up);
	}
}

static void guest_connected(struct sim *s)
{
	if (ep_add(s, s->ivs.conn_fd, TAG(TAG_IVS_CONN, 0),
		   EPOLLIN | EPOLLRDHUP)) {
		sim_log("epoll: %s; dropping the guest", strerror(errno));
		ivs_disconnect(&s->ivs);
		return;
	}
	sim_log("guest connected (peer %d, %u vectors, BAR2 %zu bytes, "
		"guest RAM %" PRIu64 " bytes)", IVS_GUEST_ID, s->ivs.nvec,
		s->ivs.shm_size, s->gmem.size);
}

static void guest_gone(struct sim *s)
{
	sim_log("guest disconnected; resetting the device");
	if (s->dev_ops) {
		s->dev_ops->reset(s->dev);
		s->dev_ops->set_link(s->dev, s->link_up);
	}
	/* The next VM may bring a different RAM file. */
	gmem_unmap(&s->gmem);
}

static void tap_frame(void *ctx, const uint8_t *frame, size_t len)
{
	sim_wire_rx(ctx, frame, len);
}

static void tap_readable(struct sim *s)
{
	int ret;

	/* Bounded, so a flood on the wire cannot starve doorbells. */
	ret = tap_recv_batch(&s->tap, RX_BURST, tap_frame, s);
	if (ret < 0) {
		/*
		 * The tap was deleted under us (EBADFD) or similar: it would
		 * report errors forever, so let it go and carry on with the
		 * link down.
		 */
		sim_log("wire %s: %s; detaching it", s->tap.name,
			strerror(-ret));
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->tap.fd, NULL);
		tap_close(&s->tap);
		link_update(s);
	}
}

void sim_wire_rx(struct sim *s, const uint8_t *frame, size_t len)
{
	s->rx_frames++;
	s->rx_bytes += (uint64_t)len;
	if (!s->link_up) {
		s->rx_link_down++;
		return;
	}
	fault_process(&s->fault, FAULT_RX, frame, len,
		      fault_needs_clock(&s->fault, FAULT_RX) ? sim_now_ns() : 0);
}

static void dispatch(struct sim *s, uint64_t tag, uint32_t events)
{
	uint32_t idx = (uint32_t)tag;
	int fd;

	switch (tag >> 32) {
	case TAG_IVS_LISTEN:
		if (ivs_accept(&s->ivs) == 1)
			guest_connected(s);
		else if (s->ivs.rejected || s->ivs.handshake_errors)
			sim_log("refused a connection (%" PRIu64 " refused, %"
				PRIu64 " failed handshakes so far)",
				s->ivs.rejected, s->ivs.handshake_errors);
		break;
	case TAG_IVS_CONN:
		if (ivs_conn_event(&s->ivs))
			guest_gone(s);
		break;
	case TAG_DOORBELL:
		if (ivs_doorbell_read(&s->ivs, idx) && s->dev_ops)
			s->dev_ops->doorbell(s->dev, idx);
		break;
	case TAG_TAP:
		tap_readable(s);
		break;
	case TAG_CTL_LISTEN:
		fd = ctl_accept(&s->ctl);
		if (fd >= 0 && ep_add(s, fd, TAG(TAG_CTL_CLIENT, fd),
				      EPOLLIN | EPOLLRDHUP))
			ctl_client_event(&s->ctl, fd);
		break;
	case TAG_CTL_CLIENT:
		/* A closed fd leaves the epoll set by itself. */
		ctl_client_event(&s->ctl, (int)idx);
		break;
	}
	(void)events;
}

static uint64_t min_deadline(uint64_t a, uint64_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return a < b ? a : b;
}

/*
 * Wait for events until @next (0: no deadline) or @max_wait_ms from @now.
 * The device's deadlines are the verbs' own timers: an RNR wait of 10 us
 * to 655 ms, a local ACK timeout from 8 us, a moderation period in
 * microseconds. epoll_wait() counts whole milliseconds, so each would
 * round up to at least one; epoll_pwait2() takes the deadline as it is
 * (Linux 5.11; the millisecond wait remains for older hosts).
 */
static int sim_wait(struct sim *s, struct epoll_event *ev, int nev,
		    uint64_t now, uint64_t next, int max_wait_ms)
{
	static bool no_pwait2;
	uint64_t wait_ns = (uint64_t)max_wait_ms * 1000000;
	struct timespec ts;
	int n;

	if (next)
		wait_ns = next <= now ? 0 :
			  next - now < wait_ns ? next - now : wait_ns;
	if (!no_pwait2) {
		ts.tv_sec = (time_t)(wait_ns / 1000000000);
		ts.tv_nsec = (long)(wait_ns % 1000000000);
		n = epoll_pwait2(s->epfd, ev, nev, &ts, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		no_pwait2 = true;
	}
	return epoll_wait(s->epfd, ev, nev, (int)((wait_ns + 999999) / 1000000));
}

int sim_run_once(struct sim *s, int max_wait_ms)
{
	struct epoll_event ev[32];
	uint64_t now = sim_now_ns(), next;
	int n, i;

	/* Frames the device sent since the last poll may be delayed. */
	s->fault_deadline = fault_poll(&s->fault, now);
	next = min_deadline(s->dev_deadline, s->fault_deadline);
	next = min_deadline(next, s->carrier_poll_ns);
	/* frames the delays just released, before the wait */
	sim_wire_flush(s);
	n = sim_wait(s, ev, 32, now, next, max_wait_ms);
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		sim_log("epoll_wait: %s", strerror(errno));
		return -errno;
	}
	for (i = 0; i < n && !s->quit; i++)
		dispatch(s, ev[i].data.u64, ev[i].events);

	now = sim_now_ns();
	if (now >= s->carrier_poll_ns) {
		s->carrier_poll_ns = now + CARRIER_POLL_NS;
		tap_poll_carrier(&s->tap);
		link_update(s);
		/*
		 * QEMU connects its chardev before it creates the RAM file,
		 * so keep trying while a guest is connected.
		 */
		if (s->ivs.conn_fd >= 0 && !s->gmem.base && s->gmem.path) {
			gmem_try_map(&s->gmem, now);
			if (s->gmem.base)
				sim_log("guest RAM %s mapped, %" PRIu64
					" bytes", s->gmem.path, s->gmem.size);
		}
	}
	s->fault_deadline = fault_poll(&s->fault, now);
	/*
	 * Tick after any activity, not only at the device's deadline: a
	 * doorbell or a received pause may have created timer work.
	 */
	if (s->dev_ops && (n > 0 || (s->dev_deadline && s->dev_deadline <= now)))
		s->dev_deadline = s->dev_ops->tick(s->dev, now);
	sim_wire_flush(s);
	return 0;
}

int sim_run(struct sim *s)
{
	int ret = 0;

	while (!s->quit && !sim_stop_signal && ret >= 0)
		ret = sim_run_once(s, MAX_WAIT_MS);
	if (sim_stop_signal)
		sim_log("signal %d: shutting down", (int)sim_stop_signal);
	return ret < 0 ? ret : 0;
}
