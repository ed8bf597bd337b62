/* SPDX-License-Identifier: GPL-2.0 */
/* The wire: an existing tap device (IFF_TAP | IFF_NO_PI), non-blocking. */
#ifndef RNICSIM_TAP_H
#define RNICSIM_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TAP_MAX_FRAME	(9216 + 18)	/* jumbo payload plus headers */
#define TAP_TX_BATCH	64		/* frames queued for one flush */
#define TAP_RX_BATCH	16		/* reads in one system call */
#define TAP_RX_BUF	65536		/* a batched read's buffer */

struct uring;

struct tap {
	int fd;			/* -1: no tap */
	int ctl_sock;		/* for SIOCGIFFLAGS */
	char name[16];
	bool carrier;		/* interface up and running */
	/* counters */
	uint64_t tx_frames, tx_bytes, tx_errors, tx_full;
	uint64_t rx_frames, rx_bytes, rx_errors;
	uint64_t tx_flushes;	/* calls that sent queued frames */
	/* batched sending (tap_batch_enable()); NULL: a write per frame */
	struct uring *tx_ring;
	uint8_t *tx_bufs;	/* TAP_TX_BATCH frames of TAP_MAX_FRAME */
	struct uring *rx_ring;	/* batched receiving, with tx_ring */
	uint8_t *rx_bufs;	/* TAP_RX_BATCH buffers of TAP_RX_BUF */
	uint64_t rx_calls;	/* calls of tap_recv_batch()'s reads */
	unsigned int rx_want;	/* reads in the next batch */
};

typedef void (*tap_rx_fn)(void *ctx, const uint8_t *frame, size_t len);

/* Attach to the existing tap @name. 0 or -errno, reason in @err. */
int tap_open(struct tap *t, const char *name, char *err, size_t errlen);
/* Use an arbitrary datagram fd as the wire (tests, benchmark). */
void tap_attach_fd(struct tap *t, int fd);
void tap_close(struct tap *t);

/* Re-read the interface flags; true if the carrier changed. */
bool tap_poll_carrier(struct tap *t);

/*
 * 0, or -errno (-EAGAIN: the tap queue is full; the frame is dropped).
 * Batched, 0 once the frame is queued: a frame the flush fails to send is
 * lost as on the wire, and counted there.
 */
int tap_send(struct tap *t, const uint8_t *frame, size_t len);
/*
 * From now on queue frames and send them in batches, up to TAP_TX_BATCH
 * in one system call (io_uring), at tap_flush() or when the batch is
 * full, in the order they were queued; and receive in batches
 * (tap_recv_batch()). 0, or -errno when this host has no io_uring
 * (frames then keep going one write() and one read() each).
 */
int tap_batch_enable(struct tap *t);
/* Send the queued frames; how many of them failed (counted). */
unsigned int tap_flush(struct tap *t);
/*
 * Receive up to @max frames and hand each to @fn, in the order they
 * arrived: batched, TAP_RX_BATCH reads per system call; else one read
 * each. How many were handed over (0: none was waiting), or -errno when
 * the wire failed (-EIO: a socketpair peer went away) after those.
 */
int tap_recv_batch(struct tap *t, unsigned int max, tap_rx_fn fn, void *ctx);
/* One frame into @buf: its length, 0 when none is waiting, or -errno. */
ssize_t tap_recv(struct tap *t, uint8_t *buf, size_t size);

#endif /* RNICSIM_TAP_H */
