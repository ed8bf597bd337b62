// SPDX-License-Identifier: GPL-2.0
/*
 * The kick a writer may skip (RNIC_RDMA_CAP_KICK_CI, hardware-rdma.rst,
 * "Doorbell pages (2.0)"): a writer that finds kick_ci short of the
 * kick_pi it had before its entries does not kick, and the device, which
 * reads kick_pi again after every store of kick_ci, serves those entries
 * anyway. A protocol between two agents running at once is tested with
 * two threads: the writer appends entries as a driver does, the device
 * thread runs the model's doorbell handler and tick for each kick, and at
 * the end no entry may be left unread.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "fake_rdma.h"

#define DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)
#define DBP_KICK_CI_OFF	offsetof(struct rnic_db_page, kick_ci)

TEST(rdma_kick_ci_advertised)
{
	struct rdrv *x = rdrv_up(1);

	CHECK(le32_to_cpu(x->caps.flags) & RNIC_RDMA_CAP_KICK_CI);
	rdrv_free(x);
}

struct kick_race {
	struct rdrv *x;
	unsigned int base;	/* the kernel page's BAR2 offset */
	unsigned int pending;	/* kicks written, not yet served */
	bool done;		/* the writer has finished */
};

static void *device_thread(void *arg)
{
	struct kick_race *r = arg;
	struct tdev *t = rdrv_tdev(r->x);

	for (;;) {
		if (__atomic_exchange_n(&r->pending, 0, __ATOMIC_ACQ_REL)) {
			rdrv_kick(r->x);
			/* the platform ticks after any activity */
			rdev_tick(t->d, t->p->now);
			continue;
		}
		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&r->pending, __ATOMIC_ACQUIRE))
			break;
		sched_yield();
	}
	/* what a tick that came at once would still read */
	rdev_tick(t->d, t->p->now);
	return NULL;
}

/* kick_ci as the writer reads it: after a full barrier */
static u16 race_kick_ci(struct kick_race *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return le32_to_cpu(__atomic_load_n((__le32 *)(r->x->bus->bar2 + r->base +
						      DBP_KICK_CI_OFF),
					   __ATOMIC_ACQUIRE));
}

static u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until the writer is less than 32 entries ahead of kick_ci; false
 * (and the test failed) if the device stops reading for 5 s: an entry
 * whose kick was skipped was never read.
 */
static bool race_room(struct kick_race *r, u16 pi)
{
	u64 start = mono_ms();
	u16 ci;

	while ((u16)(pi - (ci = race_kick_ci(r))) >= 32) {
		if (mono_ms() - start > 5000) {
			test_fail(__FILE__, __LINE__,
				  "kick_ci stays at %u with kick_pi %u: entries whose kick was skipped are never read",
				  ci, pi);
			return false;
		}
		sched_yield();
	}
	return true;
}

/*
 * The writer names the CQ's slot (CI 0, never armed: reading it does
 * nothing) 100000 times, kicking only when kick_ci says the device has
 * read everything before its entry, at an uneven pace and never more than
 * 32 entries ahead (a queue's depth holds a real writer back the same
 * way): so the device is often idle (kicked), often behind (skipped), and
 * often between reading kick_pi and storing kick_ci, the window in which,
 * without the device's second look, an entry would wait for a kick that
 * never comes.
 */
TEST(rdma_kick_ci_skipped_kicks_served)
{
	struct kick_race r = { .x = rdrv_up(1) };
	struct tdev *t = rdrv_tdev(r.x);
	unsigned int i, kicked = 0, skipped = 0, n = 100000, seed = 1;
	volatile unsigned int spin;
	struct rdrv_cq cq;
	pthread_t th;
	u16 pi, prev;

	REQUIRE(rdrv_cq_create(r.x, 4, &cq) == 0);
	r.base = le32_to_cpu(r.x->caps.db_base) + (r.x->dbp << 12);
	pi = tbar_r32(t, r.base + DBP_KICK_PI_OFF);
	REQUIRE(pthread_create(&th, NULL, device_thread, &r) == 0);
	for (i = 0; i < n; i++) {
		__le16 e = cpu_to_le16(cq.db_off / 4);

		if (!race_room(&r, pi))
			break;
		prev = pi;
		memcpy(r.x->bus->bar2 + r.base + DBP_KICK_OFF +
		       2 * (pi % RNIC_DBP_KICK_DEPTH), &e, 2);
		pi++;
		__atomic_store_n((__le32 *)(r.x->bus->bar2 + r.base +
					    DBP_KICK_PI_OFF),
				 cpu_to_le32(pi), __ATOMIC_RELEASE);
		/* kick_pi before kick_ci: pairs with the device's barrier */
		if (race_kick_ci(&r) == prev) {
			kicked++;
			__atomic_store_n(&r.pending, 1, __ATOMIC_RELEASE);
		} else {
			skipped++;
		}
		seed = seed * 1103515245 + 12345;
		for (spin = (seed >> 16) % 2000; spin; spin--)
			;
	}
	__atomic_store_n(&r.done, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);

	/* every entry read, although many writers did not kick */
	CHECK_EQ(tbar_r32(t, r.base + DBP_KICK_CI_OFF), pi);
	CHECK(kicked > 0 && skipped > 0);
	CHECK_EQ(rdrv_rctr(r.x, RNIC_RDMA_STAT_kick_overflows), 0);
	CHECK_EQ(rdrv_rctr(r.x, RNIC_RDMA_STAT_bad_kicks), 0);
	CHECK_EQ(rdrv_rctr(r.x, RNIC_RDMA_STAT_kick_stalls), 0);
	REQUIRE(rdrv_cq_destroy(r.x, &cq) == 0);
	rdrv_free(r.x);
}

/*
 * The device's second look is after its own store of kick_ci, not a poll:
 * entries appended once it has looked wait for their kick (a writer that
 * finds kick_ci equal to its old kick_pi must kick), and a tick does not
 * read the ring.
 */
TEST(rdma_kick_ci_no_poll)
{
	struct rdrv *x = rdrv_up(1);
	struct tdev *t = rdrv_tdev(x);
	unsigned int base;
	struct rdrv_cq cq;
	u64 now;

	REQUIRE(rdrv_cq_create(x, 4, &cq) == 0);
	base = le32_to_cpu(x->caps.db_base) + (x->dbp << 12);
	rdrv_kick_add(x, x->dbp, cq.db_off);
	rdrv_kick(x);
	CHECK_EQ(tbar_r32(t, base + DBP_KICK_CI_OFF),
		 tbar_r32(t, base + DBP_KICK_PI_OFF));
	/* entries without a kick: the tick does not look for them ... */
	rdrv_kick_add(x, x->dbp, cq.db_off);
	now = t->p->now;
	rdev_tick(t->d, now);
	CHECK(tbar_r32(t, base + DBP_KICK_CI_OFF) !=
	      tbar_r32(t, base + DBP_KICK_PI_OFF));
	/* ... the next kick reads them */
	rdrv_kick(x);
	CHECK_EQ(tbar_r32(t, base + DBP_KICK_CI_OFF),
		 tbar_r32(t, base + DBP_KICK_PI_OFF));
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_kick_rechecks), 0);
	REQUIRE(rdrv_cq_destroy(x, &cq) == 0);
	rdrv_free(x);
}

/*
 * Entries nobody kicked for (a lost kick) are read by the device's watch:
 * unread at ten watches in a row (a second of heartbeats) with kick_ci
 * unmoved, they are served and counted in kick_stalls. Fewer is not a
 * stall (a writer may be descheduled between its kick_pi and its kick),
 * nor is a ring whose kick_ci moves in between.
 */
static void watch_ticks(struct tdev *t, unsigned int n)
{
	while (n--) {
		t->p->now += RNIC_HEARTBEAT_PERIOD_MS * 1000000ULL;
		rdev_tick(t->d, t->p->now);
	}
}

TEST(rdma_kick_watch_serves_lost_kick)
{
	struct rdrv *x = rdrv_up(1);
	struct tdev *t = rdrv_tdev(x);
	unsigned int base;
	struct rdrv_cq cq;

	REQUIRE(rdrv_cq_create(x, 4, &cq) == 0);
	base = le32_to_cpu(x->caps.db_base) + (x->dbp << 12);
	watch_ticks(t, 1);
	/* an entry, no kick: nine watches only note it */
	rdrv_kick_add(x, x->dbp, cq.db_off);
	watch_ticks(t, 9);
	CHECK(tbar_r32(t, base + DBP_KICK_CI_OFF) !=
	      tbar_r32(t, base + DBP_KICK_PI_OFF));
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_kick_stalls), 0);
	/* the tenth: read, and counted */
	watch_ticks(t, 1);
	CHECK_EQ(tbar_r32(t, base + DBP_KICK_CI_OFF),
		 tbar_r32(t, base + DBP_KICK_PI_OFF));
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_kick_stalls), 1);
	/* a kick that comes before the tenth watch is no stall */
	rdrv_kick_add(x, x->dbp, cq.db_off);
	watch_ticks(t, 9);
	rdrv_kick(x);
	watch_ticks(t, 12);
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_kick_stalls), 1);
	/* nor is a ring that keeps moving: kick_ci changes between watches */
	rdrv_kick_add(x, x->dbp, cq.db_off);
	watch_ticks(t, 5);
	rdrv_kick_add(x, x->dbp, cq.db_off);
	rdrv_kick(x);
	rdrv_kick_add(x, x->dbp, cq.db_off);
	watch_ticks(t, 9);
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_kick_stalls), 1);
	rdrv_kick(x);
	REQUIRE(rdrv_cq_destroy(x, &cq) == 0);
	rdrv_free(x);
}
