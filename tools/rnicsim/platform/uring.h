/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal io_uring: one submission ring and its completion ring, used by
 * one thread to hand the kernel several wire operations in one system
 * call (tap.c). No liburing: the model needs four operations of it.
 */
#ifndef RNICSIM_URING_H
#define RNICSIM_URING_H

#include <linux/io_uring.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uring {
	int fd;				/* -1: none */
	unsigned int entries;		/* submission ring size */
	unsigned int queued;		/* SQEs written, not yet submitted */
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	void *sq_map, *cq_map;
	size_t sq_map_len, cq_map_len, sqes_len;
};

/* Set up a ring of @entries (a power of 2). 0 or -errno (no io_uring). */
int uring_init(struct uring *u, unsigned int entries);
void uring_fini(struct uring *u);

/* The next free SQE, zeroed, or NULL when @entries are queued. */
struct io_uring_sqe *uring_sqe(struct uring *u);

/*
 * Submit every queued SQE and wait until that many completions are in the
 * completion ring. The number submitted, or -errno (then nothing queued
 * was submitted and the caller may redo the operations itself).
 */
int uring_submit_wait(struct uring *u);

/* Forget the queued SQEs, unsubmitted (the caller does them itself). */
void uring_drop(struct uring *u);

/* Take the oldest completion into @cqe; false when there is none. */
bool uring_cqe(struct uring *u, struct io_uring_cqe *cqe);

#endif /* RNICSIM_URING_H */
