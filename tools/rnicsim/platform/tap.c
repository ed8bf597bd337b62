// SPDX-License-Identifier: GPL-2.0
/*
 * The tap wire (see tap.h). The lab creates the taps and puts them on a
 * bridge; rnicsim only attaches, so it needs no privilege to configure
 * interfaces beyond opening /dev/net/tun for an existing tap.
 *
 * Carrier is the interface's IFF_UP && IFF_RUNNING, polled by the main
 * loop: cheap, and needs no netlink.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "platform/tap.h"
#include "platform/uring.h"

int tap_open(struct tap *t, const char *name, char *err, size_t errlen)
{
	struct ifreq ifr;
	int ret;

	memset(t, 0, sizeof(*t));
	t->fd = t->ctl_sock = -1;
	if (strlen(name) >= IFNAMSIZ) {
		snprintf(err, errlen, "tap name too long: %s", name);
		return -ENAMETOOLONG;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	/*
	 * TUNSETIFF would create a missing tap (as root): the lab owns the
	 * network setup, so insist that it exists already.
	 */
	if (!if_nametoindex(name)) {
		snprintf(err, errlen, "tap %s does not exist (create it with "
			 "'ip tuntap add dev %s mode tap' first)", name, name);
		return -ENODEV;
	}
	t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "open /dev/net/tun: %s", strerror(errno));
		return ret;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
		ret = -errno;
		snprintf(err, errlen, "attach to tap %s: %s%s", name,
			 strerror(errno),
			 errno == EBUSY ? " (another process has it open)" :
			 errno == EPERM ? " (create it with 'ip tuntap add "
					  "mode tap user ...' first)" : "");
		close(t->fd);
		t->fd = -1;
		return ret;
	}
	t->ctl_sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tap_poll_carrier(t);
	return 0;
}

void tap_attach_fd(struct tap *t, int fd)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->ctl_sock = -1;
	t->carrier = true;
	snprintf(t->name, sizeof(t->name), "fd%d", fd);
}

static void ring_free(struct uring **u, uint8_t **bufs)
{
	if (*u) {
		uring_fini(*u);
		free(*u);
	}
	free(*bufs);
	*u = NULL;
	*bufs = NULL;
}

static int ring_alloc(struct uring **u, uint8_t **bufs, unsigned int n,
		      size_t size)
{
	int ret = -ENOMEM;

	*u = malloc(sizeof(**u));
	*bufs = malloc(n * size);
	/* a failed uring_init() leaves nothing to undo */
	if (*u && *bufs)
		ret = uring_init(*u, n);
	if (ret) {
		free(*u);
		free(*bufs);
		*u = NULL;
		*bufs = NULL;
	}
	return ret;
}

static void tap_batch_disable(struct tap *t)
{
	tap_flush(t);
	ring_free(&t->tx_ring, &t->tx_bufs);
	ring_free(&t->rx_ring, &t->rx_bufs);
}

int tap_batch_enable(struct tap *t)
{
	int ret;

	if (t->tx_ring)
		return 0;
	/* the unbatched reads' buffer */
	free(t->rx_bufs);
	t->rx_bufs = NULL;
	ret = ring_alloc(&t->tx_ring, &t->tx_bufs, TAP_TX_BATCH,
			 TAP_MAX_FRAME);
	if (!ret)
		ret = ring_alloc(&t->rx_ring, &t->rx_bufs, TAP_RX_BATCH,
				 TAP_RX_BUF);
	t->rx_want = 2;
	if (ret)
		tap_batch_disable(t);
	return ret;
}

static void tap_count(struct tap *t, ssize_t n, int err)
{
	if (n >= 0) {
		t->tx_frames++;
		t->tx_bytes += (uint64_t)n;
	} else if (err == EAGAIN || err == ENOBUFS) {
		t->tx_full++;
	} else {
		t->tx_errors++;
	}
}

/* One frame with write(), counted: 0 or -errno. */
static int tap_write(struct tap *t, const void *frame, size_t len)
{
	ssize_t n;

	do {
		n = write(t->fd, frame, len);
	} while (n < 0 && errno == EINTR);
	tap_count(t, n, errno);
	return n < 0 ? -errno : 0;
}

unsigned int tap_flush(struct tap *t)
{
	struct uring *u = t->tx_ring;
	struct io_uring_cqe cqe;
	unsigned int queued, failed = 0;
	int ret;

	if (!u || !u->queued)
		return 0;
	queued = u->queued;
	/*
	 * One frame: a plain write() is one system call too, and cheaper
	 * than the ring's (the latency of a lone frame, as in a ping-pong).
	 */
	ret = queued == 1 ? -EAGAIN : uring_submit_wait(u);
	if (ret < 0) {
		/*
		 * A lone frame, or the ring refused the batch (out of kernel
		 * memory, say): the frames are still in their buffers and
		 * their SQEs unpublished; send them one by one.
		 */
		unsigned int i, idx, tail = *u->sq_tail;

		for (i = 0; i < queued; i++) {
			idx = (tail + i) & *u->sq_mask;
			failed += tap_write(t, (void *)(uintptr_t)u->sqes[idx].addr,
					    u->sqes[idx].len) < 0;
		}
		uring_drop(u);
		return failed;
	}
	t->tx_flushes++;
	while (uring_cqe(u, &cqe)) {
		tap_count(t, cqe.res, -cqe.res);
		failed += cqe.res < 0;
	}
	/* consumed by no call: lost like a frame the wire dropped */
	t->tx_errors += queued - (unsigned int)ret;
	return failed + queued - (unsigned int)ret;
}

void tap_close(struct tap *t)
{
	tap_batch_disable(t);
	if (t->fd >= 0)
		close(t->fd);
	if (t->ctl_sock >= 0)
		close(t->ctl_sock);
	t->fd = t->ctl_sock = -1;
	t->carrier = false;
}

bool tap_poll_carrier(struct tap *t)
{
	struct ifreq ifr;
	bool up;

	if (t->ctl_sock < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", t->name);
	if (ioctl(t->ctl_sock, SIOCGIFFLAGS, &ifr) < 0)
		up = false;	/* the interface was deleted */
	else
		up = (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) ==
		     (IFF_UP | IFF_RUNNING);
	if (up == t->carrier)
		return false;
	t->carrier = up;
	return true;
}

int tap_send(struct tap *t, const uint8_t *frame, size_t len)
{
	if (t->fd < 0)
		return -ENODEV;
	if (t->tx_ring && len <= TAP_MAX_FRAME) {
		struct io_uring_sqe *sqe = uring_sqe(t->tx_ring);
		uint8_t *buf;

		if (!sqe) {
			tap_flush(t);
			sqe = uring_sqe(t->tx_ring);
		}
		if (sqe) {
			buf = t->tx_bufs + (size_t)(t->tx_ring->queued - 1) *
					   TAP_MAX_FRAME;
			memcpy(buf, frame, len);
			sqe->opcode = IORING_OP_WRITE;
			sqe->fd = t->fd;
			sqe->addr = (uintptr_t)buf;
			sqe->len = (unsigned int)len;
			sqe->off = (uint64_t)-1;	/* no position: a stream */
			/* a full queue drops the frame, as write() did */
			sqe->rw_flags = RWF_NOWAIT;
			return 0;
		}
	}
	/* unbatched, or a frame larger than a batch buffer: after the rest */
	tap_flush(t);
	return tap_write(t, frame, len);
}

ssize_t tap_recv(struct tap *t, uint8_t *buf, size_t size)
{
	ssize_t n;

	if (t->fd < 0)
		return 0;
	do {
		n = read(t->fd, buf, size);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		t->rx_errors++;
		return -errno;
	}
	if (n == 0)
		return -EIO;	/* a socketpair peer went away */
	t->rx_frames++;
	t->rx_bytes += (uint64_t)n;
	return n;
}

/* One batch of reads: how many frames it handed over, or -errno. */
static int tap_recv_ring(struct tap *t, unsigned int n, tap_rx_fn fn,
			 void *ctx)
{
	struct uring *u = t->rx_ring;
	struct io_uring_cqe cqe;
	struct io_uring_sqe *sqe;
	int res[TAP_RX_BATCH];
	unsigned int i, got = 0;
	int ret;

	for (i = 0; i < n; i++) {
		sqe = uring_sqe(u);
		sqe->opcode = IORING_OP_READ;
		sqe->fd = t->fd;
		sqe->addr = (uintptr_t)(t->rx_bufs + (size_t)i * TAP_RX_BUF);
		sqe->len = TAP_RX_BUF;
		sqe->off = (uint64_t)-1;
		/* an empty queue completes the read with -EAGAIN, no wait */
		sqe->rw_flags = RWF_NOWAIT;
		sqe->user_data = i;
		res[i] = -EAGAIN;
	}
	ret = uring_submit_wait(u);
	if (ret < 0)
		return ret;
	t->rx_calls++;
	while (uring_cqe(u, &cqe))
		if (cqe.user_data < n)
			res[cqe.user_data] = cqe.res;
	/*
	 * The reads ran one after the other (inline: the fd is
	 * non-blocking and takes IOCB_NOWAIT), so the buffers hold the
	 * frames in the order they arrived; a read that found the queue
	 * empty may be followed by one that found a frame just come.
	 */
	for (i = 0; i < n; i++) {
		if (res[i] == -EAGAIN || res[i] == -EINTR)
			continue;
		if (res[i] <= 0) {
			if (res[i] < 0)
				t->rx_errors++;
			return res[i] ? res[i] : -EIO;
		}
		t->rx_frames++;
		t->rx_bytes += (uint64_t)res[i];
		fn(ctx, t->rx_bufs + (size_t)i * TAP_RX_BUF, (size_t)res[i]);
		got++;
	}
	return (int)got;
}

int tap_recv_batch(struct tap *t, unsigned int max, tap_rx_fn fn, void *ctx)
{
	unsigned int got = 0, n;
	int ret;

	if (t->fd < 0)
		return 0;
	while (got < max) {
		if (!t->rx_ring) {
			if (!t->rx_bufs && !(t->rx_bufs = malloc(TAP_RX_BUF)))
				return -ENOMEM;
			ret = (int)tap_recv(t, t->rx_bufs, TAP_RX_BUF);
			if (ret <= 0)
				return ret < 0 ? ret : (int)got;
			fn(ctx, t->rx_bufs, (size_t)ret);
			got++;
			continue;
		}
		/*
		 * As many reads as the last batch found frames, and twice as
		 * many after a full one: a lone frame (a ping-pong) costs two
		 * reads, not TAP_RX_BATCH, and a stream grows to full batches.
		 */
		n = t->rx_want < max - got ? t->rx_want : max - got;
		ret = tap_recv_ring(t, n, fn, ctx);
		if (ret < 0)
			return ret;
		got += (unsigned int)ret;
		if ((unsigned int)ret == n) {
			t->rx_want = n * 2 < TAP_RX_BATCH ? n * 2 : TAP_RX_BATCH;
			continue;
		}
		/* the queue ran dry */
		t->rx_want = ret + 1 > 2 ? (unsigned int)ret + 1 : 2;
		break;
	}
	return (int)got;
}
