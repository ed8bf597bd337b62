// SPDX-License-Identifier: GPL-2.0
/*
 * --bench smoke test: the platform half runs briefly and reports every
 * frame size in both directions (the device half needs main.c's hooks
 * and is exercised by running rnicsim --bench).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "opts.h"
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
