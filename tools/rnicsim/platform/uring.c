// SPDX-License-Identifier: GPL-2.0
/*
 * A minimal io_uring (see uring.h).
 *
 * Why: the wire costs the model a system call per frame (a write to the
 * tap), and on a host where a system call is expensive (a PVM guest: ~7
 * us each, more than the frame's own work) that bounds what one model
 * can send. Through a ring the frames of one turn of the event loop go
 * in one call. One thread owns the ring, without SQPOLL: the kernel
 * reads the submission tail only inside io_uring_enter(), so a tail
 * published for a call that failed may be taken back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/uring.h"

static int sys_setup(unsigned int entries, struct io_uring_params *p)
{
	return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int sys_enter(int fd, unsigned int submit, unsigned int wait,
		     unsigned int flags)
{
	return (int)syscall(__NR_io_uring_enter, fd, submit, wait, flags,
			    NULL, 0);
}

int uring_init(struct uring *u, unsigned int entries)
{
	struct io_uring_params p;
	int ret;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	memset(&p, 0, sizeof(p));
	/* an SQE that fails does not hold back the ones after it */
	p.flags = IORING_SETUP_SUBMIT_ALL;
	u->fd = sys_setup(entries, &p);
	if (u->fd < 0 && errno == EINVAL) {
		/* before 5.18: one failure ends the submission (handled) */
		memset(&p, 0, sizeof(p));
		u->fd = sys_setup(entries, &p);
	}
	if (u->fd < 0)
		return -errno;
	u->entries = p.sq_entries;
	u->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	u->cq_map_len = p.cq_off.cqes +
			p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP) {
		if (u->cq_map_len > u->sq_map_len)
			u->sq_map_len = u->cq_map_len;
		u->cq_map_len = 0;
	}
	u->sq_map = mmap(NULL, u->sq_map_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	if (u->sq_map == MAP_FAILED) {
		u->sq_map = NULL;
		goto fail;
	}
	if (u->cq_map_len) {
		u->cq_map = mmap(NULL, u->cq_map_len, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_POPULATE, u->fd,
				 IORING_OFF_CQ_RING);
		if (u->cq_map == MAP_FAILED) {
			u->cq_map = NULL;
			goto fail;
		}
	} else {
		u->cq_map = u->sq_map;
	}
	u->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (u->sqes == MAP_FAILED) {
		u->sqes = NULL;
		goto fail;
	}
	u->sq_tail = (unsigned int *)((char *)u->sq_map + p.sq_off.tail);
	u->sq_mask = (unsigned int *)((char *)u->sq_map + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)((char *)u->sq_map + p.sq_off.array);
	u->cq_head = (unsigned int *)((char *)u->cq_map + p.cq_off.head);
	u->cq_tail = (unsigned int *)((char *)u->cq_map + p.cq_off.tail);
	u->cq_mask = (unsigned int *)((char *)u->cq_map + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)((char *)u->cq_map + p.cq_off.cqes);
	return 0;
fail:
	ret = -errno;
	uring_fini(u);
	return ret;
}

void uring_fini(struct uring *u)
{
	if (u->sqes)
		munmap(u->sqes, u->sqes_len);
	if (u->cq_map && u->cq_map != u->sq_map)
		munmap(u->cq_map, u->cq_map_len);
	if (u->sq_map)
		munmap(u->sq_map, u->sq_map_len);
	if (u->fd >= 0)
		close(u->fd);
	memset(u, 0, sizeof(*u));
	u->fd = -1;
}

struct io_uring_sqe *uring_sqe(struct uring *u)
{
	unsigned int idx;

	if (u->fd < 0 || u->queued == u->entries)
		return NULL;
	/* everything submitted was consumed: the ring is ours from the tail */
	idx = (*u->sq_tail + u->queued) & *u->sq_mask;
	u->sq_array[idx] = idx;
	u->queued++;
	memset(&u->sqes[idx], 0, sizeof(u->sqes[idx]));
	return &u->sqes[idx];
}

void uring_drop(struct uring *u)
{
	u->queued = 0;
}

static unsigned int cq_ready(struct uring *u)
{
	return __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) - *u->cq_head;
}

int uring_submit_wait(struct uring *u)
{
	unsigned int n = u->queued, tail, done = 0, have;
	int ret;

	if (!n)
		return 0;
	tail = *u->sq_tail;
	__atomic_store_n(u->sq_tail, tail + n, __ATOMIC_RELEASE);
	u->queued = 0;
	have = cq_ready(u);
	/* Without SUBMIT_ALL a failed SQE ends a call: go on after it. */
	while (done < n) {
		ret = sys_enter(u->fd, n - done, 0, 0);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			if (!done) {
				/* nothing consumed: take the SQEs back */
				ret = ret < 0 ? -errno : -EIO;
				__atomic_store_n(u->sq_tail, tail,
						 __ATOMIC_RELEASE);
				return ret;
			}
			/* the rest goes, unsent, as a wire loss would */
			__atomic_store_n(u->sq_tail, tail + done,
					 __ATOMIC_RELEASE);
			break;
		}
		done += (unsigned int)ret;
	}
	/* Each consumed SQE completes (inline, for the fds used here). */
	while (cq_ready(u) < have + done) {
		ret = sys_enter(u->fd, 0, have + done - cq_ready(u),
				IORING_ENTER_GETEVENTS);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
	return (int)done;
}

bool uring_cqe(struct uring *u, struct io_uring_cqe *cqe)
{
	unsigned int head = *u->cq_head;

	if (u->fd < 0 || __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) == head)
		return false;
	*cqe = u->cqes[head & *u->cq_mask];
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return true;
}
