/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim unit test framework: plain C, no dependencies.
 *
 *	TEST(pfc_round_trip)
 *	{
 *		CHECK(x == 1);
 *		CHECK_EQ(len, 60);
 *		REQUIRE(p != NULL);	(stops this test on failure)
 *	}
 *
 * Tests register themselves from any file linked into rnicsim-tests and
 * run in registration order, each in its own forked child (so a crash or a
 * hang fails that one test, not the run). Output follows the project's
 * protocol (Documentation/CONVENTIONS.md), one line per test:
 *
 *	ok - rnicsim: <name>
 *	not ok - rnicsim: <name>: <file:line what>
 *
 * then "N passed, N failed"; the exit status is 1 if anything failed.
 * Further failures of a test beyond the first go to stderr as "# ..." lines.
 *
 * rnicsim-tests [-n] [-l] [substring...]: -n runs in-process without
 * fork (for gdb), -l lists test names, substrings select tests by name.
 */
#ifndef RNICSIM_TEST_H
#define RNICSIM_TEST_H

#include <stddef.h>
#include <stdint.h>

struct test_case {
	const char *name;
	const char *file;
	void (*fn)(void);
	const void *arg;	/* for tests registered at run time */
	struct test_case *next;
};

void test_register(struct test_case *tc);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The running test's arg (NULL for TEST() cases). */
const void *test_arg(void);
/* True once a check of the running test has failed. */
int test_failed(void);
/* Hex-dump aid for CHECK_MEM_EQ: reports the first differing offset. */
int test_mem_eq(const char *file, int line, const char *what,
		const void *a, const void *b, size_t n);

/*
 * A scratch directory private to this run (created on first use, removed
 * at exit), and the rnicsim source directory (tools/rnicsim: found from
 * the test binary's location, or $RNICSIM_SRCDIR), for tests/vectors.
 */
const char *test_tmpdir(void);
const char *test_srcdir(void);

#define TEST(tname)							\
	static void test_fn_##tname(void);				\
	static struct test_case test_case_##tname = {			\
		.name = #tname,						\
		.file = __FILE__,					\
		.fn = test_fn_##tname,					\
	};								\
	__attribute__((constructor)) static void test_reg_##tname(void)	\
	{								\
		test_register(&test_case_##tname);			\
	}								\
	static void test_fn_##tname(void)

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
	} while (0)

/* Compares as 64-bit integers; both arguments are evaluated once. */
#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long _ca = (unsigned long long)(a);	\
		unsigned long long _cb = (unsigned long long)(b);	\
		if (_ca != _cb)						\
			test_fail(__FILE__, __LINE__,			\
				  "CHECK_EQ(%s, %s): %lld (0x%llx) != %lld (0x%llx)", \
				  #a, #b, (long long)_ca, _ca,		\
				  (long long)_cb, _cb);			\
	} while (0)

#define CHECK_MEM_EQ(a, b, n)						\
	test_mem_eq(__FILE__, __LINE__, "CHECK_MEM_EQ(" #a ", " #b ")",	\
		    (a), (b), (n))

/* Like CHECK, but returns from the (void) test function on failure. */
#define REQUIRE(cond)							\
	do {								\
		if (!(cond)) {						\
			test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond); \
			return;						\
		}							\
	} while (0)

#endif /* RNICSIM_TEST_H */
