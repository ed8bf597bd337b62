// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim: the rnic reference model as a process.
 *
 * This file binds the pieces together: a device model (pci/device.h)
 * with the RDMA engine (rdma/engine.h) on a platform (platform/plat_sim.c:
 * platform.h on top of sim.c: event loop, ivshmem, guest RAM, tap,
 * faults, pcap, control socket), the modes, start-up and signals. It and
 * plat_sim.c are the files left out of the unit-test binary, where
 * tests/fake_plat.c provides platform.h to the device code instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "platform/ctl.h"
#include "pci/device.h"
#include "platform/opts.h"
#include "platform/plat_sim.h"
#include "platform/sim.h"
#include "rdma/engine.h"

_Static_assert(OPTS_MAX_SIGNATURE_ABI == RDEV_MAX_SIGNATURE_ABI,
	       "--signature-abi takes what the device takes");

/* One per device model; the benchmark builds its own on its own sim. */
static struct sim the_sim;
static struct plat the_plat = { .sim = &the_sim };
/* The ABI 2.0 benchmark runs two devices back to back. */
#define BENCH_MAX_DEVS	2
static struct plat bench_plat[BENCH_MAX_DEVS];
static struct rdev *bench_devs[BENCH_MAX_DEVS];

/* ---- device.h, as the loop sees it ---- */

static void dev_doorbell(void *dev, unsigned int vector)
{
	rdev_doorbell(dev, vector);
}

static void dev_wire_rx(void *dev, const uint8_t *frame, size_t len)
{
	rdev_wire_rx(dev, frame, len);
}

static void dev_set_link(void *dev, bool up)
{
	rdev_set_link(dev, up);
}

static int dev_rx_hold(void *dev, bool hold)
{
	return rdev_rx_hold(dev, hold);
}

static int dev_tx_hold(void *dev, bool hold)
{
	return rdev_tx_hold(dev, hold);
}

static int dev_aq_hold(void *dev, bool hold)
{
	return rdev_aq_hold(dev, hold);
}

static int dev_fatal(void *dev, uint32_t *reason)
{
	return rdev_fatal(dev, reason);
}

static int dev_arm_peek(void *dev, bool peek)
{
	rdev_set_arm_peek(dev, peek);
	return 0;
}

static uint64_t dev_tick(void *dev, uint64_t now_ns)
{
	return rdev_tick(dev, now_ns);
}

static void dev_reset(void *dev)
{
	rdev_reset(dev);
}

static void dev_dump_counters(void *dev,
			      void (*out)(void *ctx, const char *line),
			      void *ctx)
{
	rdev_dump_counters(dev, out, ctx);
}

static const struct sim_dev_ops rdev_ops = {
	.doorbell = dev_doorbell,
	.wire_rx = dev_wire_rx,
	.set_link = dev_set_link,
	.rx_hold = dev_rx_hold,
	.tx_hold = dev_tx_hold,
	.aq_hold = dev_aq_hold,
	.fatal = dev_fatal,
	.arm_peek = dev_arm_peek,
	.tick = dev_tick,
	.reset = dev_reset,
	.dump_counters = dev_dump_counters,
};

static struct rdev *make_device(struct plat *p, const struct sim_opts *o)
{
	struct rdev_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.mac, o->mac, sizeof(cfg.mac));
	cfg.num_vectors = o->vectors;
	cfg.caps_disable = o->caps_disable;
	cfg.signature_abi = o->signature_abi;
	cfg.rdma_table_log2 = o->rdma_table_log2;
	cfg.engine = &rdma_engine;
	return rdev_create(p, &cfg);
}

static void *bench_create(struct sim *s, const struct sim_opts *o)
{
	unsigned int i;

	for (i = 0; i < BENCH_MAX_DEVS; i++) {
		if (bench_devs[i])
			continue;
		bench_plat[i].sim = s;
		bench_devs[i] = make_device(&bench_plat[i], o);
		return bench_devs[i];
	}
	return NULL;
}

static void bench_destroy(void *dev)
{
	unsigned int i;

	for (i = 0; i < BENCH_MAX_DEVS; i++)
		if (bench_devs[i] == dev)
			bench_devs[i] = NULL;
	rdev_destroy(dev);
}

static const struct bench_dev_hooks bench_hooks = {
	.ops = &rdev_ops,
	.create = bench_create,
	.destroy = bench_destroy,
};

/* ---- modes ---- */

static void on_signal(int sig)
{
	sim_stop_signal = sig;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: wake epoll_wait */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The tests are a separate binary next to this one (build/). */
static int run_selftest(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], *argv[2];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "rnicsim: cannot find my own binary: %s\n",
			strerror(errno));
		return 2;
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/rnicsim-tests", dirname(exe));
	argv[0] = path;
	argv[1] = NULL;
	execv(path, argv);
	fprintf(stderr, "rnicsim: --selftest: cannot run %s: %s (build it "
		"with 'make -C tools/rnicsim')\n", path, strerror(errno));
	return 2;
}

static int open_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
		fprintf(stderr, "rnicsim: --log %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int run(const struct sim_opts *o)
{
	struct sim *s = &the_sim;
	struct rdev *dev;
	char err[512];
	int ret;

	if (o->log && open_log(o->log))
		return 1;
	ret = sim_init(s, o, err, sizeof(err));
	if (ret) {
		sim_log("%s", err);
		return 1;
	}
	dev = make_device(&the_plat, o);
	if (!dev) {
		sim_log("cannot create the device model");
		sim_fini(s);
		return 1;
	}
	sim_attach_dev(s, &rdev_ops, dev);
	install_signals();
	sim_log("listening on %s (%u vectors, BAR2 %zu bytes%s%s%s%s)",
		o->socket, o->vectors, s->ivs.shm_size,
		o->tap ? ", tap " : "", o->tap ? o->tap : "",
		o->ctl ? ", control " : "", o->ctl ? o->ctl : "");
	ret = sim_run(s);
	rdev_destroy(dev);
	s->dev_ops = NULL;
	sim_fini(s);
	sim_log("exited");
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sim_opts o;
	char err[512];

	/* A peer closing a socket must not kill the model. */
	signal(SIGPIPE, SIG_IGN);
	if (opts_parse(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "rnicsim: %s\n", err);
		return 2;
	}
	switch (o.mode) {
	case SIM_MODE_HELP:
		opts_usage(stdout);
		return 0;
	case SIM_MODE_CTL_CMD:
		return ctl_run_client(o.ctl_cmd_path, o.ctl_cmd);
	case SIM_MODE_SELFTEST:
		return run_selftest();
	case SIM_MODE_BENCH:
		install_signals();
		return bench_run(&o, &bench_hooks) ? 1 : 0;
	case SIM_MODE_RUN:
		break;
	}
	return run(&o);
}
