// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim unit test runner: see test.h for the protocol.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* A test that runs longer than this is hung: fail it rather than block. */
#define TEST_TIMEOUT_S	60

static struct test_case *test_head, **test_tail = &test_head;
static const struct test_case *test_cur;
static int test_nfail;
static char test_tmp[PATH_MAX];
static char test_src[PATH_MAX];

void test_register(struct test_case *tc)
{
	tc->next = NULL;
	*test_tail = tc;
	test_tail = &tc->next;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The first failure names the test's result line; the rest are notes. */
	if (!test_nfail++)
		printf("not ok - rnicsim: %s: %s:%d %s\n",
		       test_cur ? test_cur->name : "?", file, line, msg);
	else
		fprintf(stderr, "# %s: %s:%d %s\n",
			test_cur ? test_cur->name : "?", file, line, msg);
	fflush(stdout);
}

const void *test_arg(void)
{
	return test_cur ? test_cur->arg : NULL;
}

int test_failed(void)
{
	return test_nfail != 0;
}

int test_mem_eq(const char *file, int line, const char *what,
		const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	for (i = 0; i < n; i++) {
		if (x[i] != y[i]) {
			test_fail(file, line, "%s: offset %zu: 0x%02x != 0x%02x",
				  what, i, x[i], y[i]);
			return 0;
		}
	}
	return 1;
}

const char *test_tmpdir(void)
{
	if (!test_tmp[0]) {
		snprintf(test_tmp, sizeof(test_tmp), "/tmp/rnicsim-test.XXXXXX");
		if (!mkdtemp(test_tmp)) {
			perror("mkdtemp");
			exit(2);
		}
	}
	return test_tmp;
}

const char *test_srcdir(void)
{
	const char *env = getenv("RNICSIM_SRCDIR");
	char exe[PATH_MAX], probe[PATH_MAX + 16];
	ssize_t n;
	int i;

	if (env && *env)
		return env;
	if (test_src[0])
		return test_src;
	/* The binary lives in <srcdir>/build/ or <srcdir>/build/asan/. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return ".";
	exe[n] = '\0';
	snprintf(test_src, sizeof(test_src), "%s", dirname(exe));
	for (i = 0; i < 3; i++) {
		strncat(test_src, "/..", sizeof(test_src) - strlen(test_src) - 1);
		snprintf(probe, sizeof(probe), "%s/tests/test.h", test_src);
		if (access(probe, F_OK) == 0)
			return test_src;
	}
	return ".";
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int selected(const struct test_case *tc, int argc, char **argv)
{
	int i;

	if (argc == 0)
		return 1;
	for (i = 0; i < argc; i++)
		if (strstr(tc->name, argv[i]))
			return 1;
	return 0;
}

/* Run one test in this process; returns 1 if it passed. */
static int run_inline(const struct test_case *tc)
{
	test_cur = tc;
	test_nfail = 0;
	tc->fn();
	if (!test_nfail)
		printf("ok - rnicsim: %s\n", tc->name);
	fflush(stdout);
	return !test_nfail;
}

static int run_forked(const struct test_case *tc)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("not ok - rnicsim: %s: fork: %s\n", tc->name,
		       strerror(errno));
		return 0;
	}
	if (pid == 0) {
		alarm(TEST_TIMEOUT_S);
		_exit(run_inline(tc) ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			printf("not ok - rnicsim: %s: waitpid: %s\n", tc->name,
			       strerror(errno));
			return 0;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		return 0;	/* the child printed its "not ok" line */
	if (WIFSIGNALED(status))
		printf("not ok - rnicsim: %s: %s: killed by signal %d (%s)\n",
		       tc->name, tc->file, WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? "timeout" :
		       strsignal(WTERMSIG(status)));
	else
		printf("not ok - rnicsim: %s: %s: exited with status %d\n",
		       tc->name, tc->file, WEXITSTATUS(status));
	return 0;
}

int main(int argc, char **argv)
{
	int nofork = 0, list = 0, pass = 0, fail = 0, opt;
	const struct test_case *tc;

	while ((opt = getopt(argc, argv, "nlh")) != -1) {
		switch (opt) {
		case 'n':
			nofork = 1;
			break;
		case 'l':
			list = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n] [-l] [name-substring...]\n",
				argv[0]);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	/* A test that writes to a closed socket must fail, not die. */
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Made here, not in a forked child, so that it is removed at exit. */
	if (!list)
		test_tmpdir();

	for (tc = test_head; tc; tc = tc->next) {
		if (!selected(tc, argc, argv))
			continue;
		if (list) {
			printf("%s (%s)\n", tc->name, tc->file);
			continue;
		}
		if (nofork ? run_inline(tc) : run_forked(tc))
			pass++;
		else
			fail++;
	}
	if (test_tmp[0])
		nftw(test_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (list)
		return 0;
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
