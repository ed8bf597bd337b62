// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim --bench=abi2-tap: the network the two devices talk over, in a
 * network namespace of the benchmark's own, so that its frames never
 * meet the host's (or the lab's) interfaces.
 *
 * The process leaves its namespace for a new, anonymous one (unshare),
 * makes two persistent taps with jumbo MTU on a bridge there, and at the
 * end deletes them and goes back; the namespace goes with its last
 * reference. Root only (CAP_NET_ADMIN in the initial user namespace, to
 * keep the taps' owner checks simple).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#include "bench/bench.h"

#define NET_MTU		9000

const char *const bench_net_taps[2] = { "rnsbench0a", "rnsbench0b" };

static void sysctl_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	/* A failure leaves some IPv6 chatter on the wire: not fatal */
	if (write(fd, val, strlen(val)) < 0)
		fprintf(stderr, "rnicsim: bench: %s: %s\n", path,
			strerror(errno));
	close(fd);
}

/* Make tap @name persistent (@on) or delete it (!@on). */
static int tap_persist(const char *name, bool on)
{
	struct ifreq ifr;
	int fd, ret = 0;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0 ||
	    ioctl(fd, TUNSETPERSIST, on ? 1 : 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int if_set(int sock, const char *name, unsigned long req, int val)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (req == SIOCSIFFLAGS) {
		if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
			return -errno;
		ifr.ifr_flags = val ? ifr.ifr_flags | IFF_UP :
				      ifr.ifr_flags & ~IFF_UP;
	} else if (req == SIOCSIFMTU) {
		ifr.ifr_mtu = val;
	} else {
		ifr.ifr_ifindex = val;		/* SIOCBRADDIF */
	}
	return ioctl(sock, req, &ifr) < 0 ? -errno : 0;
}

int bench_net_up(struct bench_net *n, char *why, size_t len)
{
	int sock = -1, ret, i;

	memset(n, 0, sizeof(*n));
	n->home = -1;
	if (geteuid()) {
		snprintf(why, len, "needs root (it makes a network namespace "
			 "with two taps and a bridge)");
		return -EPERM;
	}
	n->home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (n->home < 0 || unshare(CLONE_NEWNET)) {
		ret = -errno;
		snprintf(why, len, "network namespace: %s", strerror(errno));
		if (n->home >= 0)
			close(n->home);
		n->home = -1;
		return ret;
	}
	/* No IPv6 autoconfiguration chatter on the wire being measured */
	sysctl_write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	sysctl_write("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		ret = -errno;
		goto fail;
	}
	ret = ioctl(sock, SIOCBRADDBR, BENCH_NET_BRIDGE) < 0 ? -errno : 0;
	if (ret)
		goto fail;
	n->bridge = true;
	for (i = 0; i < 2; i++) {
		ret = tap_persist(bench_net_taps[i], true);
		if (ret)
			goto fail;
		n->taps++;
		ret = if_set(sock, bench_net_taps[i], SIOCSIFMTU, NET_MTU);
		if (!ret)
			ret = if_set(sock, BENCH_NET_BRIDGE, SIOCBRADDIF,
				     (int)if_nametoindex(bench_net_taps[i]));
		if (!ret)
			ret = if_set(sock, bench_net_taps[i], SIOCSIFFLAGS, 1);
		if (ret)
			goto fail;
	}
	ret = if_set(sock, BENCH_NET_BRIDGE, SIOCSIFMTU, NET_MTU);
	if (!ret)
		ret = if_set(sock, BENCH_NET_BRIDGE, SIOCSIFFLAGS, 1);
	if (ret)
		goto fail;
	close(sock);
	return 0;
fail:
	snprintf(why, len, "bridge %s with taps %s, %s: %s", BENCH_NET_BRIDGE,
		 bench_net_taps[0], bench_net_taps[1], strerror(-ret));
	if (sock >= 0)
		close(sock);
	bench_net_down(n);
	return ret;
}

void bench_net_down(struct bench_net *n)
{
	int sock, i;

	if (n->home < 0)
		return;
	for (i = 0; i < n->taps; i++)
		tap_persist(bench_net_taps[i], false);
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock >= 0 && n->bridge) {
		if_set(sock, BENCH_NET_BRIDGE, SIOCSIFFLAGS, 0);
		ioctl(sock, SIOCBRDELBR, BENCH_NET_BRIDGE);
	}
	if (sock >= 0)
		close(sock);
	/* Back home: the benchmark's namespace had no other reference. */
	if (setns(n->home, CLONE_NEWNET))
		fprintf(stderr, "rnicsim: bench: cannot return to the first "
			"network namespace: %s\n", strerror(errno));
	close(n->home);
	n->home = -1;
}
