/* SPDX-License-Identifier: GPL-2.0 */
/* The wire: an existing tap device (IFF_TAP | IFF_NO_PI), non-blocking. */
#ifndef RNICSIM_TAP_H
#define RNICSIM_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TAP_MAX_FRAME	(9216 + 18)	/* jumbo payload plus headers */

struct tap {
	int fd;			/* -1: no tap */
	int ctl_sock;		/* for SIOCGIFFLAGS */
	char name[16];
	bool carrier;		/* interface up and running */
	/* counters */
	uint64_t tx_frames, tx_bytes, tx_errors, tx_full;
	uint64_t rx_frames, rx_bytes, rx_errors;
};

/* Attach to the existing tap @name. 0 or -errno, reason in @err. */
int tap_open(struct tap *t, const char *name, char *err, size_t errlen);
/* Use an arbitrary datagram fd as the wire (tests, benchmark). */
void tap_attach_fd(struct tap *t, int fd);
void tap_close(struct tap *t);

/* Re-read the interface flags; true if the carrier changed. */
bool tap_poll_carrier(struct tap *t);

/* 0, or -errno (-EAGAIN: the tap queue is full; the frame is dropped). */
int tap_send(struct tap *t, const uint8_t *frame, size_t len);
/* One frame into @buf: its length, 0 when none is waiting, or -errno. */
ssize_t tap_recv(struct tap *t, uint8_t *buf, size_t size);

#endif /* RNICSIM_TAP_H */
