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
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/tap.h"

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

void tap_close(struct tap *t)
{
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
	ssize_t n;

	if (t->fd < 0)
		return -ENODEV;
	do {
		n = write(t->fd, frame, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == ENOBUFS)
			t->tx_full++;
		else
			t->tx_errors++;
		return -errno;
	}
	t->tx_frames++;
	t->tx_bytes += len;
	return 0;
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
