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
