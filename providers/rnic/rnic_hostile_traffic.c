// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: the mode that only transfers (rnic_hostile.c says what the
 * program is for): traffic, the bystander another process runs while the
 * attacking modes run.
 */
#include "rnic_hostile.h"

void mode_traffic(struct dev *d)
{
	int64_t end = now_ms() + (int64_t)opt.seconds * 1000;
	struct pair *p = pair_create(d);
	uint32_t n = 0;

	if (!p)
		return;
	while (now_ms() < end && !failures) {
		if (!xfer(p, n & 1, 1000 + n, "traffic"))
			break;
		n++;
	}
	events_check(d);
	if (!failures)
		note("%u transfers (WRITE and SEND of %d bytes each) verified in %d s",
		     n, XFER, opt.seconds);
}
