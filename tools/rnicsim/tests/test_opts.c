// SPDX-License-Identifier: GPL-2.0
/*
 * The command line as CONVENTIONS.md specifies it, its error messages,
 * and the --ctl-cmd client against a running control socket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/ctl.h"
#include "platform/opts.h"
#include "platform/sim.h"
#include "test.h"

#define ARGC(a)	((int)(sizeof(a) / sizeof(a[0])) - 1)

TEST(opts_full_command_line)
{
	char *argv[] = {
		"rnicsim", "--socket", "/tmp/x.sock",
		"--guest-mem", "/dev/shm/rnic-lab-vm1-ram",
		"--guest-mem-size", "1G", "--tap", "rnictap0",
		"--mac", "02:aa:bb:cc:dd:0e", "--vectors", "16",
		"--shm-size", "2M", "--ctl", "/tmp/x.ctl",
		"--pcap", "/tmp/x.pcap", "--fault", "drop=1%,reorder=0.5%",
		"--fault", "corrupt=0.1%", "--log", "/tmp/x.log",
		"--seed", "99", NULL,
	};
	struct sim_opts o;
	char err[256];

	REQUIRE(opts_parse(&o, ARGC(argv), argv, err, sizeof(err)) == 0);
	CHECK_EQ(o.mode, SIM_MODE_RUN);
	CHECK(!strcmp(o.socket, "/tmp/x.sock"));
	CHECK(!strcmp(o.guest_mem, "/dev/shm/rnic-lab-vm1-ram"));
	CHECK_EQ(o.guest_mem_size, 1ull << 30);
	CHECK(!strcmp(o.tap, "rnictap0"));
	CHECK_MEM_EQ(o.mac, "\x02\xaa\xbb\xcc\xdd\x0e", 6);
	CHECK_EQ(o.vectors, 16);
	CHECK_EQ(o.shm_size, 2u << 20);
	CHECK(!strcmp(o.ctl, "/tmp/x.ctl"));
	CHECK(!strcmp(o.pcap, "/tmp/x.pcap"));
	CHECK(!strcmp(o.fault, "drop=1%,reorder=0.5%,corrupt=0.1%"));
	CHECK(!strcmp(o.log, "/tmp/x.log"));
	CHECK_EQ(o.seed, 99);
}

/*
 * --bench: the platform alone, then 2.0; --bench=abi2: 2.0 only;
 * =abi2-tap: 2.0 over taps; =abi1 (removed) and anything else refused
 */
TEST(opts_bench_which)
{
	char *a1[] = { "rnicsim", "--bench", NULL };
	char *a2[] = { "rnicsim", "--bench=abi1", NULL };
	char *a3[] = { "rnicsim", "--bench=abi2", NULL };
	char *a4[] = { "rnicsim", "--bench=abi3", NULL };
	char *a5[] = { "rnicsim", "--bench=abi2-tap", NULL };
	struct sim_opts o;
	char err[256];

	REQUIRE(opts_parse(&o, ARGC(a1), a1, err, sizeof(err)) == 0);
	CHECK(o.bench_platform && o.bench_abi2 && !o.bench_tap);
	REQUIRE(opts_parse(&o, ARGC(a3), a3, err, sizeof(err)) == 0);
	CHECK(!o.bench_platform && o.bench_abi2 && !o.bench_tap);
	REQUIRE(opts_parse(&o, ARGC(a5), a5, err, sizeof(err)) == 0);
	CHECK(!o.bench_platform && !o.bench_abi2 && o.bench_tap);
	CHECK_EQ(opts_parse(&o, ARGC(a2), a2, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "ABI 1.0 was removed") != NULL);
	CHECK_EQ(opts_parse(&o, ARGC(a4), a4, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "abi3") != NULL);
}

/*
 * ABI options: 2.0 is all there is. --abi2 is a no-op for old scripts,
 * --no-abi2 an error; --signature-abi takes one major, 1..15.
 */
TEST(opts_abi)
{
	char *a1[] = { "rnicsim", "--socket", "s", NULL };
	char *a2[] = { "rnicsim", "--socket", "s", "--abi2", NULL };
	char *a3[] = { "rnicsim", "--socket", "s", "--no-abi2", NULL };
	char *a4[] = { "rnicsim", "--socket", "s", "--signature-abi", "1",
		       NULL };
	char *a5[] = { "rnicsim", "--socket", "s", "--signature-abi=15",
		       NULL };
	static const char *const bad[] = { "0", "16", "x", "2.5", "", "-1",
					   "3k" };
	struct sim_opts o;
	char err[256];
	unsigned int i;

	REQUIRE(opts_parse(&o, ARGC(a1), a1, err, sizeof(err)) == 0);
	CHECK_EQ(o.signature_abi, 0);
	REQUIRE(opts_parse(&o, ARGC(a2), a2, err, sizeof(err)) == 0);
	CHECK_EQ(o.signature_abi, 0);
	CHECK_EQ(opts_parse(&o, ARGC(a3), a3, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "--no-abi2") != NULL);
	CHECK(strstr(err, "ABI 1.0 was removed") != NULL);
	REQUIRE(opts_parse(&o, ARGC(a4), a4, err, sizeof(err)) == 0);
	CHECK_EQ(o.signature_abi, 1);
	REQUIRE(opts_parse(&o, ARGC(a5), a5, err, sizeof(err)) == 0);
	CHECK_EQ(o.signature_abi, 15);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a[] = { "rnicsim", "--socket", "s", "--signature-abi",
			      (char *)bad[i], NULL };

		CHECK_EQ(opts_parse(&o, ARGC(a), a, err, sizeof(err)),
			 -EINVAL);
		CHECK(strstr(err, "--signature-abi") != NULL);
		CHECK(strstr(err, "1 to 15") != NULL);
	}
	{
		char *help = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&help, &len);

		REQUIRE(f != NULL);
		opts_usage(f);
		fclose(f);
		CHECK(strstr(help, "--signature-abi MAJOR") != NULL);
		CHECK(strstr(help, "--abi2                 accepted and ignored") !=
		      NULL);
		free(help);
	}
}

TEST(opts_defaults_and_modes)
{
	char *a1[] = { "rnicsim", "--socket", "s", NULL };
	char *a2[] = { "rnicsim", "--bench", NULL };
	char *a3[] = { "rnicsim", "--selftest", NULL };
	char *a4[] = { "rnicsim", "--ctl-cmd", "/c", "fault", "drop=5", NULL };
	char *a5[] = { "rnicsim", "--help", NULL };
	struct sim_opts o;
	char err[256];

	REQUIRE(opts_parse(&o, ARGC(a1), a1, err, sizeof(err)) == 0);
	CHECK_EQ(o.vectors, 8);
	CHECK_EQ(o.shm_size, 1u << 20);
	CHECK_EQ(o.guest_mem_size, 0);
	CHECK_MEM_EQ(o.mac, "\x02\x00\x00\x00\x00\x01", 6);
	CHECK(o.tap == NULL && o.ctl == NULL && o.fault[0] == '\0');
	CHECK_EQ(opts_parse(&o, ARGC(a2), a2, err, sizeof(err)), 0);
	CHECK_EQ(o.mode, SIM_MODE_BENCH);
	CHECK_EQ(opts_parse(&o, ARGC(a3), a3, err, sizeof(err)), 0);
	CHECK_EQ(o.mode, SIM_MODE_SELFTEST);
	CHECK_EQ(opts_parse(&o, ARGC(a4), a4, err, sizeof(err)), 0);
	CHECK_EQ(o.mode, SIM_MODE_CTL_CMD);
	CHECK(!strcmp(o.ctl_cmd_path, "/c"));
	CHECK(!strcmp(o.ctl_cmd, "fault drop=5"));
	CHECK_EQ(opts_parse(&o, ARGC(a5), a5, err, sizeof(err)), 0);
	CHECK_EQ(o.mode, SIM_MODE_HELP);
}

TEST(opts_errors_are_explained)
{
	static const struct {
		const char *opt, *val, *msg;
	} bad[] = {
		{ "--vectors", "0", "--vectors" },
		{ "--vectors", "1", "need 2.." },
		{ "--shm-size", "64K", "from 128K" },
		{ "--vectors", "65", "--vectors" },
		{ "--vectors", "8x", "--vectors" },
		{ "--shm-size", "3M", "power of two" },
		{ "--shm-size", "1K", "power of two" },
		{ "--guest-mem-size", "3G", "2 GiB" },
		{ "--guest-mem-size", "-1", "--guest-mem-size" },
		{ "--guest-mem-size", "99999999999999999999G", "--guest-mem" },
		{ "--mac", "02:00:00:00:00", "--mac" },
		{ "--mac", "02:00:00:00:00:01:02", "--mac" },
		{ "--mac", "01:00:5e:00:00:01", "multicast" },
		{ "--seed", "x", "--seed" },
		{ "--frobnicate", NULL, "unknown option" },
	};
	char *argv[6];
	struct sim_opts o;
	char err[256];
	size_t i;
	int argc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		argc = 0;
		argv[argc++] = "rnicsim";
		argv[argc++] = "--socket=s";
		argv[argc++] = (char *)bad[i].opt;
		if (bad[i].val)
			argv[argc++] = (char *)bad[i].val;
		argv[argc] = NULL;
		if (opts_parse(&o, argc, argv, err, sizeof(err)) != -EINVAL)
			test_fail(__FILE__, __LINE__, "%s %s accepted",
				  bad[i].opt, bad[i].val ? bad[i].val : "");
		else if (!strstr(err, bad[i].msg))
			test_fail(__FILE__, __LINE__, "%s %s: message '%s'",
				  bad[i].opt, bad[i].val ? bad[i].val : "",
				  err);
	}
	{
		char *a[] = { "rnicsim", NULL };

		CHECK_EQ(opts_parse(&o, 1, a, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "--socket") != NULL);
	}
	{
		char *a[] = { "rnicsim", "--socket", NULL };

		CHECK_EQ(opts_parse(&o, 2, a, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "needs an argument") != NULL);
	}
	{
		char *a[] = { "rnicsim", "--ctl-cmd", "/c", NULL };

		CHECK_EQ(opts_parse(&o, 3, a, err, sizeof(err)), -EINVAL);
	}
}

static atomic_bool stop_loop;

static void *loop_thread(void *arg)
{
	struct sim *s = arg;

	while (!atomic_load(&stop_loop) && !s->quit)
		sim_run_once(s, 10);
	return NULL;
}

/* Run the client with its stdout captured into @out. */
static int client(const char *path, const char *cmd, char *out, size_t size)
{
	char file[300];
	int saved, fd, ret;
	ssize_t n;

	snprintf(file, sizeof(file), "%s/client.out", test_tmpdir());
	fflush(stdout);
	saved = dup(1);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	ret = ctl_run_client(path, cmd);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, out, size - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return ret;
}

TEST(ctl_cmd_client)
{
	static struct sim s;
	struct sim_opts o;
	char err[256], ctl[256], out[8192];
	pthread_t th;
	char *argv[] = { "rnicsim", "--socket", "", "--ctl", ctl, NULL };

	snprintf(ctl, sizeof(ctl), "%s/c.ctl", test_tmpdir());
	REQUIRE(opts_parse(&o, 5, argv, err, sizeof(err)) == 0);
	o.socket = NULL;	/* no ivshmem listener needed here */
	REQUIRE(sim_init(&s, &o, err, sizeof(err)) == 0);
	atomic_store(&stop_loop, false);
	REQUIRE(pthread_create(&th, NULL, loop_thread, &s) == 0);

	CHECK_EQ(client(ctl, "fault tx.drop=5", out, sizeof(out)), 0);
	CHECK(!strcmp(out, "ok tx.drop=5\n"));
	CHECK_EQ(client(ctl, "counters", out, sizeof(out)), 0);
	CHECK(strstr(out, "fault_tx_drop 0\n") != NULL);
	CHECK(strstr(out, "\nok\n") != NULL);
	CHECK_EQ(client(ctl, "pcap start /nonexistent/dir/x.pcap", out,
			sizeof(out)), 1);
	CHECK(!strncmp(out, "error ", 6));
	CHECK_EQ(client(ctl, "help", out, sizeof(out)), 0);
	CHECK_EQ(client(ctl, "quit", out, sizeof(out)), 0);
	CHECK(!strcmp(out, "ok bye\n"));
	pthread_join(th, NULL);
	sim_fini(&s);
	/* Nobody listening any more. */
	CHECK_EQ(client(ctl, "counters", out, sizeof(out)), 2);
}
