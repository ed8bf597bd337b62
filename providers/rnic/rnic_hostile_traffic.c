// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: the mode that only transfers (rnic_hostile.c says what the
 * program is for): traffic, the bystander another process runs while the
 * attacking modes run.
 */
#include <unistd.h>

#include "rnic_hostile.h"

/* How often -s's file is looked for: a stat(2) costs less than a transfer */
#define STOP_CHECK_MS	100

/*
 * Whether -s's file exists, looked for at most every STOP_CHECK_MS
 * (@next: when next); false without -s.
 */
static bool stop_file_seen(int64_t *next)
{
	int64_t now;

	if (!opt.stop_file)
		return false;
	now = now_ms();
	if (now < *next)
		return false;
	*next = now + STOP_CHECK_MS;
	return !access(opt.stop_file, F_OK);
}

void mode_traffic(struct dev *d)
{
	int64_t start = now_ms(), end = start + (int64_t)opt.seconds * 1000;
	int64_t next_check = start, took;
	struct pair *p = pair_create(d);
	bool stopped = false;
	uint32_t n = 0;

	if (!p)
		return;
	/*
	 * Moderated CQs (ibv_modify_cq, through the kernel to the device)
	 * change when events fire, never which completions arrive: this
	 * process polls, and every transfer must still verify.
	 */
	for (int i = 0; i < 2; i++) {
		struct ibv_modify_cq_attr mod = {
			.attr_mask = IBV_CQ_ATTR_MODERATE,
			.moderate = { .cq_count = 4, .cq_period = 100 },
		};
		int err = ibv_modify_cq(p->cq[i], &mod);

		if (err) {
			fail("ibv_modify_cq: %s", strerror(err));
			return;
		}
	}
	note("its CQs moderated: an event per 4 CQEs or 100 us (ibv_modify_cq)");
	/* a file left from an earlier run would end this one at once */
	if (opt.stop_file && !access(opt.stop_file, F_OK))
		note("%s exists already: traffic stops after its first transfer",
		     opt.stop_file);
	while (now_ms() < end && !failures) {
		if (!xfer(p, n & 1, 1000 + n, "traffic"))
			break;
		n++;
		if (stop_file_seen(&next_check)) {
			stopped = true;
			break;
		}
	}
	took = now_ms() - start;
	events_check(d);
	if (failures) {
		/* a test that pulls the device away needs to know it ran first */
		note("%u transfers verified before the failure", n);
		return;
	}
	if (!opt.stop_file)
		note("%u transfers (WRITE and SEND of %d bytes each) verified in %d s",
		     n, XFER, opt.seconds);
	else if (stopped)
		note("%u transfers (WRITE and SEND of %d bytes each) verified in %.1f s; stopped: %s exists",
		     n, XFER, took / 1000.0, opt.stop_file);
	else
		note("%u transfers (WRITE and SEND of %d bytes each) verified in %.1f s; stopped at -t %d s, %s never appeared",
		     n, XFER, took / 1000.0, opt.seconds, opt.stop_file);
}
