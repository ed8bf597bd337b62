// SPDX-License-Identifier: GPL-2.0
/*
 * The tap wire without privileges: a missing tap is refused with a clear
 * message (and not created), a socketpair stands in for the wire.
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/tap.h"
#include "test.h"

TEST(tap_missing_is_refused_not_created)
{
	char err[256];
	struct tap t;

	CHECK_EQ(tap_open(&t, "rnicsim-none0", err, sizeof(err)), -ENODEV);
	CHECK(strstr(err, "does not exist") != NULL);
	CHECK_EQ(if_nametoindex("rnicsim-none0"), 0);
	CHECK_EQ(t.fd, -1);
	CHECK_EQ(tap_open(&t, "a-name-much-too-long-for-linux", err,
			  sizeof(err)), -ENAMETOOLONG);
	tap_close(&t);
}

TEST(tap_fd_send_recv)
{
	uint8_t buf[128], f[64];
	struct tap t;
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) == 0);
	tap_attach_fd(&t, sv[0]);
	CHECK(t.carrier);
	CHECK(!tap_poll_carrier(&t));	/* nothing to poll: stays up */
	memset(f, 0x11, sizeof(f));
	CHECK_EQ(tap_send(&t, f, sizeof(f)), 0);
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), (ssize_t)sizeof(f));
	CHECK_EQ(tap_recv(&t, buf, sizeof(buf)), 0);	/* nothing waiting */
	CHECK_EQ(send(sv[1], f, 20, 0), 20);
	CHECK_EQ(tap_recv(&t, buf, sizeof(buf)), 20);
	CHECK_EQ(t.tx_frames, 1);
	CHECK_EQ(t.rx_frames, 1);
	CHECK_EQ(t.rx_bytes, 20);
	close(sv[1]);
	tap_close(&t);
	CHECK_EQ(tap_send(&t, f, sizeof(f)), -ENODEV);
}

static uint8_t rx_seen[8][64];
static size_t rx_len[8];
static unsigned int rx_n;

static void rx_cb(void *ctx, const uint8_t *frame, size_t len)
{
	(void)ctx;
	if (rx_n < 8) {
		memcpy(rx_seen[rx_n], frame, len < 64 ? len : 64);
		rx_len[rx_n] = len;
	}
	rx_n++;
}

TEST(tap_batched_send_recv)
{
	uint8_t buf[128], f[64];
	struct tap t;
	int sv[2], i, ret;

	REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) == 0);
	tap_attach_fd(&t, sv[0]);
	ret = tap_batch_enable(&t);
	REQUIRE(ret == 0);
	for (i = 0; i < 3; i++) {
		memset(f, 0x20 + i, sizeof(f));
		CHECK_EQ(tap_send(&t, f, 40 + i), 0);
	}
	/* queued: nothing on the wire before the flush */
	CHECK_EQ(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), -1);
	CHECK_EQ(t.tx_frames, 0);
	CHECK_EQ(tap_flush(&t), 0);
	CHECK_EQ(t.tx_frames, 3);
	CHECK_EQ(t.tx_bytes, 40 + 41 + 42);
	CHECK_EQ(t.tx_flushes, 1);
	for (i = 0; i < 3; i++) {
		CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 40 + i);
		CHECK_EQ(buf[0], 0x20 + i);
	}
	CHECK_EQ(tap_flush(&t), 0);	/* nothing queued: no call */
	CHECK_EQ(t.tx_flushes, 1);

	/* receive: in arrival order, the batch stops when the queue is dry */
	rx_n = 0;
	CHECK_EQ(tap_recv_batch(&t, 64, rx_cb, NULL), 0);
	for (i = 0; i < 5; i++) {
		memset(f, 0x40 + i, sizeof(f));
		CHECK_EQ(send(sv[1], f, 20 + i, 0), 20 + i);
	}
	CHECK_EQ(tap_recv_batch(&t, 3, rx_cb, NULL), 3);
	CHECK_EQ(tap_recv_batch(&t, 64, rx_cb, NULL), 2);
	CHECK_EQ(rx_n, 5);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(rx_len[i], 20 + i);
		CHECK_EQ(rx_seen[i][0], 0x40 + i);
	}
	CHECK_EQ(t.rx_frames, 5);
	CHECK(t.rx_calls >= 2);

	/* more than a batch holds goes in several calls, in order */
	for (i = 0; i < TAP_TX_BATCH + 5; i++) {
		f[0] = (uint8_t)i;
		CHECK_EQ(tap_send(&t, f, 30), 0);
	}
	CHECK_EQ(tap_flush(&t), 0);
	CHECK_EQ(t.tx_flushes, 3);
	for (i = 0; i < TAP_TX_BATCH + 5; i++) {
		CHECK_EQ(recv(sv[1], buf, sizeof(buf), 0), 30);
		CHECK_EQ(buf[0], (uint8_t)i);
	}

	/* an empty datagram (a socketpair peer's goodbye) ends the wire */
	CHECK_EQ(send(sv[1], f, 10, 0), 10);
	CHECK_EQ(send(sv[1], "", 0, 0), 0);
	rx_n = 0;
	CHECK_EQ(tap_recv_batch(&t, 64, rx_cb, NULL), -EIO);
	CHECK_EQ(rx_n, 1);	/* the frame before it still handed over */
	close(sv[1]);
	tap_close(&t);
	CHECK(t.tx_ring == NULL);
}
