/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classic pcap writer (LINKTYPE_ETHERNET, microsecond timestamps) for
 * the frames the model sends and receives.
 */
#ifndef RNICSIM_PCAP_H
#define RNICSIM_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pcap {
	FILE *f;		/* NULL: not capturing */
	uint64_t frames;
	uint64_t errors;	/* write failures: capture stopped */
};

/* Start writing @path (truncated). 0 or -errno. */
int pcap_open(struct pcap *p, const char *path);
/* Append one frame with its wall-clock time; no-op when not capturing. */
void pcap_write(struct pcap *p, const uint8_t *frame, size_t len);
void pcap_close(struct pcap *p);

#endif /* RNICSIM_PCAP_H */
