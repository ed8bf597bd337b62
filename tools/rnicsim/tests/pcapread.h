/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small reader for classic pcap (either byte order, us or ns) and
 * pcapng (as tshark writes by default), for test vectors and for reading
 * back what pcap.c wrote.
 */
#ifndef RNICSIM_TEST_PCAPREAD_H
#define RNICSIM_TEST_PCAPREAD_H

#include <stddef.h>
#include <stdint.h>

struct pcapread_frame {
	const uint8_t *data;
	size_t len;		/* captured length */
	size_t orig_len;
	uint32_t linktype;
	uint64_t ts_ns;
};

struct pcapread;

/* NULL with a reason in @err on failure. */
struct pcapread *pcapread_open(const char *path, char *err, size_t errlen);
/* 1 = a frame, 0 = end, -1 = malformed file (reason in @err). */
int pcapread_next(struct pcapread *r, struct pcapread_frame *fr, char *err,
		  size_t errlen);
void pcapread_close(struct pcapread *r);

#endif /* RNICSIM_TEST_PCAPREAD_H */
