// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: fatal, the mode that runs while the lab makes the device
 * fail (rnic_hostile.c says what the program is for). A failed device
 * raises DEVICE_FATAL and stops all DMA: it writes no CQE again, so what
 * a process has in flight never completes, and the process learns of the
 * failure from the async event and its own timeouts only. What must
 * hold: no transfer "completes" with wrong bytes, the event comes, every
 * teardown call returns (an error is expected, a hang is not), and new
 * contexts are refused with EIO until rnic is reloaded. They are asked
 * for NEW_CONTEXTS times: a refusal that leaked kernel memory (as 6.12's
 * GET_CONTEXT does when alloc_ucontext fails, rnic_ib_uctx.c) would leak
 * that much more for the lab's kmemleak sweep to find.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rnic_hostile.h"

/* What the teardown calls returned as errors, "; " between them */
static char td_errors[512];
static int td_nerrors;

/* A teardown call's error after the failure: expected, so only noted */
static void __attribute__((format(printf, 1, 2))) teardown_error(const char *fmt, ...)
{
	size_t used = strlen(td_errors);
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note("teardown: %s", msg);
	snprintf(td_errors + used, sizeof(td_errors) - used, "%s%s",
		 used ? "; " : "", msg);
	td_nerrors++;
}

/*
 * A watchdog over calls that must return: a thread, not alarm(2). A
 * signal's handler needs a thread of this process that is not stuck in
 * the kernel, and once the async event thread is joined the stuck one
 * would be the only thread. (A call stuck there keeps the process from
 * exiting, but the FAIL line is out.)
 */
static atomic_bool wd_done;
static pthread_t wd_thread;

static void *watchdog(void *arg)
{
	const char *what = arg;
	int64_t end = now_ms() + opt.timeout_ms;

	while (!atomic_load(&wd_done)) {
		if (now_ms() >= end)
			fail_exit("%s: %s did not return within %d ms", what,
				  (const char *)under_way, opt.timeout_ms);
		nap_us(10000);
	}
	return NULL;
}

static bool watchdog_arm(const char *what)
{
	atomic_store(&wd_done, false);
	if (pthread_create(&wd_thread, NULL, watchdog, (void *)what)) {
		fail("pthread_create: the watchdog over %s", what);
		return false;
	}
	return true;
}

static void watchdog_disarm(void)
{
	atomic_store(&wd_done, true);
	pthread_join(wd_thread, NULL);
}

#define NEW_CONTEXTS	20

/*
 * What a new context and PD on the failed device get, into @res.
 * Return: true if ibv_open_device was refused with EIO.
 */
static bool new_context(char *res, size_t len)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char why[256];
	int err;

	under_way = "ibv_get_device_list/ibv_open_device";
	ctx = ctx_open(&err, why, sizeof(why));
	if (!ctx) {
		snprintf(res, len, "refused with errno %d (%s)", err, why);
		return err == EIO;
	}
	under_way = "ibv_alloc_pd";
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		err = errno;
		snprintf(res, len,
			 "refused with errno %d (ibv_alloc_pd: %s; ibv_open_device succeeded)",
			 err, strerror(err));
	} else {
		snprintf(res, len, "opened (and a PD allocated)");
		under_way = "ibv_dealloc_pd";
		if (ibv_dealloc_pd(pd))
			note("a new context: ibv_dealloc_pd: %s", strerror(errno));
	}
	under_way = "ibv_close_device";
	if (ibv_close_device(ctx))
		note("a new context: ibv_close_device: %s", strerror(errno));
	return false;
}

void mode_fatal(struct dev *d)
{
	static char ok[1536];
	int64_t end = now_ms() + (int64_t)opt.seconds * 1000, t0, took;
	struct pair *p = pair_create(d);
	enum xfer_end e = XFER_OK;
	char why[256] = "", how[320], ctx_res[320];
	bool fatal;
	uint32_t n = 0;
	int i;

	if (!p)
		return;
	/* the lab makes the device fail once it reads this */
	printf("fatal: ready\n");
	fflush(stdout);
	while (!(fatal = event_seen(d, IBV_EVENT_DEVICE_FATAL, 0)) &&
	       now_ms() < end) {
		e = xfer_try(p, n & 1, 2000 + n, why, sizeof(why));
		if (e != XFER_OK)
			break;
		n++;
	}
	if (e == XFER_OK) {
		if (!fatal) {
			fail("the device never failed: %u transfers verified in %d s, no IBV_EVENT_DEVICE_FATAL",
			     n, opt.seconds);
			return;
		}
		snprintf(how, sizeof(how), "the last transfer completed and verified");
	} else {
		snprintf(how, sizeof(how), "the transfer in flight %s: %s",
			 e == XFER_TIMEOUT ? "timed out" :
			 e == XFER_ERROR ? "completed in error" :
			 e == XFER_REFUSED ? "was refused" : "completed with wrong bytes",
			 why);
	}
	note("%u transfers verified; %s", n, how);
	if (e == XFER_WRONG)
		fail("data corruption after %u transfers verified: %s", n, why);
	else if (e != XFER_OK && !event_wait(d, IBV_EVENT_DEVICE_FATAL, 0))
		fail("a transfer failed after %u verified (%s), but no IBV_EVENT_DEVICE_FATAL came within %d ms",
		     n, why, opt.timeout_ms);

	/* every call returns, with an error or not: no hang */
	if (!watchdog_arm("teardown"))
		return;
	t0 = now_ms();
	dev_teardown(d, teardown_error);
	took = now_ms() - t0;
	watchdog_disarm();
	note("teardown (pair, PD, context) returned in %lld ms, %d call(s) with an error",
	     (long long)took, td_nerrors);

	if (!watchdog_arm("new contexts"))
		return;
	for (i = 0; i < NEW_CONTEXTS; i++) {
		if (!new_context(ctx_res, sizeof(ctx_res))) {
			watchdog_disarm();
			fail("new context %d of %d on the failed device: %s, not refused with EIO",
			     i + 1, NEW_CONTEXTS, ctx_res);
			return;
		}
	}
	watchdog_disarm();
	note("%d new contexts: each %s", NEW_CONTEXTS, ctx_res);

	snprintf(ok, sizeof(ok),
		 "DEVICE_FATAL after %u transfers verified (%s); teardown returned in %lld ms (%s%s); %d new contexts each %s",
		 n, how, (long long)took,
		 td_nerrors ? "errors: " : "no call returned an error",
		 td_errors, NEW_CONTEXTS, ctx_res);
	ok_text = ok;
}
