// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: a hostile user of librnic, for the lab (issue 21, "hostile
 * userspace"; Documentation/rnic-provider.rst, "rnic_hostile").
 *
 * A libibverbs program on Debian's own libibverbs and the installed
 * provider that reaches, through providers/rnic/rnic.h (built from the same
 * sources, so the layout matches), the provider's structs behind its
 * ibv_qp and ibv_cq, and writes into its own rings and doorbell pages what
 * the provider never would. The hardware contract (hardware-rdma.rst,
 * "User contexts", "Error handling (2.0)") says what must follow: only the
 * queue that got the bad value fails, with a CQE or an event; nothing else
 * of this process, of another process or of the kernel notices.
 *
 * Two QPs of one process talk RC through the NIC itself: each is moved to
 * RTR with the port's own GID as destination, ib_core resolves the port's
 * own MAC, and the device loops the frames back (hardware-transport.rst,
 * "Loopback"). One mode per run; each prints "hostile MODE: ok ..." or
 * "hostile MODE: FAIL ..." last and exits 0 or 1 (2: usage). Every wait
 * has a timeout (-T).
 *
 *   bad-wqe   malformed WQEs into its own SQ, one RC pair each
 *   bad-db    kick entries naming slots that are no queue's, bad slot values
 *   bad-mr    ibv_reg_mr over unmapped, wild, read-only and partial ranges
 *   bad-udata create_cq, create_qp and create_srq with driver data librnic
 *             never sends (short, long, reserved bits, bad rings)
 *   killed    a child SIGKILLed with WRITEs and SENDs in flight
 *   bad-kick  any value to the kick register (when it is mapped)
 *   traffic   verified transfers for -t seconds, or until the file -s
 *             names exists: the bystander to run in another process while
 *             the others run
 *   fatal     verified transfers until the device fails (the lab makes it):
 *             DEVICE_FATAL comes, nothing completes wrongly, teardown
 *             returns, a new context is refused
 *
 * This file parses the options, runs the mode and prints its result; the
 * modes and what they share are in rnic_hostile_*.c, which rnic_hostile.h
 * lists.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic_hostile.h"

struct hostile_opt opt = { "rnic0", 1, -1, 10000, 10, 1000, NULL };

static const char *mode_name;
const char *skipped;
const char *ok_text;
static char fail_why[512];
int failures;

static void __attribute__((format(printf, 1, 0))) vfail(const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	printf("  FAIL: %s\n", msg);
	fflush(stdout);
	if (!failures++)
		snprintf(fail_why, sizeof(fail_why), "%s", msg);
}

/* The first failure is the one the result line gives; all are printed */
void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(fmt, ap);
	va_end(ap);
}

/* The result line of a run that failed */
static void fail_line(void)
{
	printf("hostile %s: FAIL %s%s\n", mode_name, fail_why,
	       failures > 1 ? " (and more, above)" : "");
}

void fail_exit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(fmt, ap);
	va_end(ap);
	fail_line();
	fflush(stdout);
	_exit(1);
}

/* One printf a line: the async event thread notes too */
void note(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("  %s\n", msg);
	fflush(stdout);
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------ */

static const char *ok_msg(void)
{
	if (ok_text)
		return ok_text;
	if (!strcmp(mode_name, "bad-wqe"))
		return "every malformed WQE failed its own QP only; the bystander pair and a new context verified";
	if (!strcmp(mode_name, "bad-db"))
		return "bogus kick entries ignored, each bad slot failed its own queue only; the bystander pair and a new context verified";
	if (!strcmp(mode_name, "bad-mr"))
		return "every bad range refused; a read-only MR and a new pair verified";
	if (!strcmp(mode_name, "bad-udata"))
		return "every bad request refused with its errno, nothing left of it; correct ones created";
	if (!strcmp(mode_name, "killed"))
		return "child killed in flight and reaped, nothing left behind, a new context verified";
	if (skipped)
		return skipped;
	if (!strcmp(mode_name, "bad-kick"))
		return "any kick value left the bystander pair and a new context verified";
	return "every transfer verified";
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rnic_hostile [-d DEV] [-i PORT] [-g GID_INDEX] [-T TIMEOUT_MS]\n"
		"                    [-t SECONDS] [-s STOP_FILE] [-k KILL_MS] MODE\n"
		"MODE: bad-wqe | bad-db | bad-mr | bad-udata | killed | bad-kick | traffic |\n"
		"      fatal\n"
		"  -d  device (rnic0)   -i  port (1)\n"
		"  -g  GID index (default: the port's IPv4 address as RoCE v2, else the best)\n"
		"  -T  timeout of every wait in ms (10000)\n"
		"  -t  traffic, fatal: seconds (10)   -k  killed: ms before SIGKILL (1000)\n"
		"  -s  traffic: stop, after the transfer in progress, once STOP_FILE exists\n"
		"      (checked every 100 ms; -t still ends it)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct dev d;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:i:g:T:t:k:s:h")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'i': opt.port = atoi(optarg); break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 'T': opt.timeout_ms = atoi(optarg); break;
		case 't': opt.seconds = atoi(optarg); break;
		case 'k': opt.kill_ms = atoi(optarg); break;
		case 's': opt.stop_file = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || opt.timeout_ms <= 0 || opt.port <= 0 ||
	    (opt.stop_file && !*opt.stop_file))
		usage();
	mode_name = argv[optind];
	if (strcmp(mode_name, "bad-wqe") && strcmp(mode_name, "bad-db") &&
	    strcmp(mode_name, "bad-mr") && strcmp(mode_name, "bad-udata") &&
	    strcmp(mode_name, "killed") &&
	    strcmp(mode_name, "bad-kick") && strcmp(mode_name, "traffic") &&
	    strcmp(mode_name, "fatal"))
		usage();
	signal(SIGPIPE, SIG_IGN);

	memset(&d, 0, sizeof(d));
	if (!strcmp(mode_name, "killed")) {
		mode_killed();
	} else if (!dev_open(&d)) {
		char gid[INET6_ADDRSTRLEN] = "?";

		inet_ntop(AF_INET6, d.gid.raw, gid, sizeof(gid));
		note("%s port %d, GID index %d (%s), kick %s", opt.dev, opt.port,
		     d.gid_index, gid, d.rctx->kick_reg ? "mapped" : "through the kernel");
		if (!strcmp(mode_name, "bad-wqe"))
			mode_bad_wqe(&d);
		else if (!strcmp(mode_name, "bad-db"))
			mode_bad_db(&d);
		else if (!strcmp(mode_name, "bad-mr"))
			mode_bad_mr(&d);
		else if (!strcmp(mode_name, "bad-udata"))
			mode_bad_udata(&d);
		else if (!strcmp(mode_name, "bad-kick"))
			mode_bad_kick(&d);
		else if (!strcmp(mode_name, "fatal"))
			mode_fatal(&d);
		else
			mode_traffic(&d);
	}
	dev_close(&d);
	if (failures) {
		fail_line();
		return 1;
	}
	/* killed checks a new context itself; fatal leaves the device dead */
	if (strcmp(mode_name, "killed") && strcmp(mode_name, "fatal"))
		if (!fresh_check("a new context afterwards")) {
			printf("hostile %s: FAIL %s\n", mode_name, fail_why);
			return 1;
		}
	printf("hostile %s: ok: %s\n", mode_name, ok_msg());
	return 0;
}
