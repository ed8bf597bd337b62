// SPDX-License-Identifier: GPL-2.0
/*
 * pcap writer (see pcap.h). Each record is flushed as it is written so a
 * capture can be read while the model runs, and is complete if it is
 * killed.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fault/pcap.h"

#define PCAP_MAGIC		0xa1b2c3d4u
#define PCAP_SNAPLEN		65535u
#define LINKTYPE_ETHERNET	1u

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* host order: the magic tells readers which */
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

int pcap_open(struct pcap *p, const char *path)
{
	uint8_t hdr[24];
	int ret;

	pcap_close(p);
	p->f = fopen(path, "wbe");
	if (!p->f)
		return -errno;
	put32(hdr, PCAP_MAGIC);
	put16(hdr + 4, 2);		/* version 2.4 */
	put16(hdr + 6, 4);
	put32(hdr + 8, 0);		/* thiszone */
	put32(hdr + 12, 0);		/* sigfigs */
	put32(hdr + 16, PCAP_SNAPLEN);
	put32(hdr + 20, LINKTYPE_ETHERNET);
	if (fwrite(hdr, sizeof(hdr), 1, p->f) != 1 || fflush(p->f)) {
		ret = errno ? -errno : -EIO;
		fclose(p->f);
		p->f = NULL;
		return ret;
	}
	return 0;
}

void pcap_write(struct pcap *p, const uint8_t *frame, size_t len)
{
	struct timespec ts;
	uint8_t rec[16];
	size_t incl;

	if (!p->f)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	incl = len > PCAP_SNAPLEN ? PCAP_SNAPLEN : len;
	put32(rec, (uint32_t)ts.tv_sec);
	put32(rec + 4, (uint32_t)(ts.tv_nsec / 1000));
	put32(rec + 8, (uint32_t)incl);
	put32(rec + 12, (uint32_t)len);
	if (fwrite(rec, sizeof(rec), 1, p->f) != 1 ||
	    (incl && fwrite(frame, incl, 1, p->f) != 1) || fflush(p->f)) {
		/* Disk full or similar: stop rather than fail every frame. */
		p->errors++;
		fclose(p->f);
		p->f = NULL;
		return;
	}
	p->frames++;
}

void pcap_close(struct pcap *p)
{
	if (p->f)
		fclose(p->f);
	p->f = NULL;
}
