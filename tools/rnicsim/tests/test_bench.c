// SPDX-License-Identifier: GPL-2.0
/*
 * --bench smoke tests: the platform half runs briefly and reports every
 * frame size in both directions; the devices need main.c's hooks, so
 * --bench=abi2 runs in the rnicsim binary built next to this one.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "platform/opts.h"
#include "test.h"

TEST(bench_platform_smoke)
{
	char *argv[] = { "rnicsim", "--bench", "--bench-seconds", "0.05",
			 NULL };
	char file[300], out[4096];
	struct sim_opts o;
	int saved, fd, ret;
	ssize_t n;

	REQUIRE(opts_parse(&o, 4, argv, out, sizeof(out)) == 0);
	snprintf(file, sizeof(file), "%s/bench.out", test_tmpdir());
	fflush(stdout);
	saved = dup(1);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	ret = bench_run(&o, NULL);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	CHECK_EQ(ret, 0);
	CHECK(strstr(out, "CRC-32") != NULL);
	CHECK(strstr(out, "tx    64 B") != NULL);
	CHECK(strstr(out, "tx  4096 B") != NULL);
	CHECK(strstr(out, "rx  1024 B") != NULL);
	CHECK(strstr(out, "rx  4096 B") != NULL);
	CHECK(strstr(out, "failed") == NULL);
}

/* The figure after "per CPU-s" on the line that has @what, or -1. */
static double cpu_figure(const char *out, const char *what)
{
	const char *l = strstr(out, what), *f;

	if (!l)
		return -1;
	f = strstr(l, "per CPU-s");
	if (!f || memchr(l, '\n', (size_t)(f - l)))
		return -1;
	return strtod(f + strlen("per CPU-s"), NULL);
}

/*
 * rnicsim --bench=abi2, short: every figure is printed, and the bytes
 * WRITE moved and the messages SEND delivered were checked.
 */
TEST(bench_abi2_smoke)
{
	char bin[4200], cmd[4400], out[8192];
	size_t used;
	ssize_t n;
	FILE *p;

	n = readlink("/proc/self/exe", bin, sizeof(bin) - 16);
	REQUIRE(n > 0);
	bin[n] = '\0';
	strcpy(strrchr(bin, '/'), "/rnicsim");
	if (access(bin, X_OK)) {
		test_fail(__FILE__, __LINE__, "%s not built", bin);
		return;
	}
	snprintf(cmd, sizeof(cmd), "%s --bench=abi2 --bench-seconds 0.05 2>&1",
		 bin);
	p = popen(cmd, "r");
	REQUIRE(p != NULL);
	used = fread(out, 1, sizeof(out) - 1, p);
	out[used] = '\0';
	CHECK_EQ(pclose(p), 0);
	CHECK(strstr(out, "CRC-32 (ICRC)") != NULL);
	/* --bench=abi2 leaves the platform runs out */
	CHECK(strstr(out, "tx    64 B") == NULL);
	CHECK(cpu_figure(out, "abi2 RC WRITE 65536 B") > 0);
	CHECK(cpu_figure(out, "abi2 RC SEND 64 B") > 0);
	CHECK(strstr(out, "abi2 RC WRITE 8 B round trip: p50") != NULL);
	CHECK(strstr(out, "abi2 WRITE data verified") != NULL);
	CHECK(strstr(out, "abi2 SEND data verified") != NULL);
	CHECK(strstr(out, "!") == NULL);
	if (strstr(out, "!") || !strstr(out, "verified"))
		fprintf(stderr, "# %s", out);
}
