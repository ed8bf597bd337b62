// SPDX-License-Identifier: GPL-2.0
/* pcap / pcapng reader for the tests (see pcapread.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapread.h"

#define PCAP_MAGIC_US		0xa1b2c3d4u
#define PCAP_MAGIC_NS		0xa1b23c4du
#define PCAPNG_SHB		0x0a0d0d0au
#define PCAPNG_BOM		0x1a2b3c4du
#define PCAPNG_IDB		1u
#define PCAPNG_SPB		3u
#define PCAPNG_EPB		6u
#define MAX_IFACES		64

struct pcapread {
	uint8_t *buf;
	size_t len, pos;
	int ng;			/* pcapng */
	int swap;		/* file byte order is not ours */
	int nsec;
	uint32_t linktype;	/* classic */
	uint32_t nif;		/* pcapng interfaces seen */
	uint32_t if_link[MAX_IFACES];
	uint32_t if_snap[MAX_IFACES];
};

static uint32_t rd32(const struct pcapread *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t rd16(const struct pcapread *r, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

struct pcapread *pcapread_open(const char *path, char *err, size_t errlen)
{
	struct pcapread *r;
	uint32_t magic;
	FILE *f;
	long sz;

	f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open %s", path);
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	sz = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (r && sz >= 0 && !fseek(f, 0, SEEK_SET))
		r->buf = malloc((size_t)sz + 1);
	if (!r || !r->buf || fread(r->buf, 1, (size_t)sz, f) != (size_t)sz) {
		snprintf(err, errlen, "cannot read %s", path);
		fclose(f);
		if (r)
			free(r->buf);
		free(r);
		return NULL;
	}
	fclose(f);
	r->len = (size_t)sz;
	if (r->len < 24) {
		snprintf(err, errlen, "%s: too short for a pcap header", path);
		goto bad;
	}
	memcpy(&magic, r->buf, 4);
	if (magic == PCAPNG_SHB) {
		r->ng = 1;
		memcpy(&magic, r->buf + 8, 4);
		if (magic == __builtin_bswap32(PCAPNG_BOM))
			r->swap = 1;
		else if (magic != PCAPNG_BOM) {
			snprintf(err, errlen, "%s: bad pcapng byte order", path);
			goto bad;
		}
		return r;	/* the SHB is walked like any block */
	}
	if (magic == __builtin_bswap32(PCAP_MAGIC_US) ||
	    magic == __builtin_bswap32(PCAP_MAGIC_NS)) {
		r->swap = 1;
		magic = __builtin_bswap32(magic);
	}
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS) {
		snprintf(err, errlen, "%s: not a pcap file", path);
		goto bad;
	}
	r->nsec = magic == PCAP_MAGIC_NS;
	r->linktype = rd32(r, r->buf + 20) & 0x0fffffff;
	r->pos = 24;
	return r;
bad:
	free(r->buf);
	free(r);
	return NULL;
}

static int next_classic(struct pcapread *r, struct pcapread_frame *fr,
			char *err, size_t errlen)
{
	const uint8_t *h;
	uint32_t incl;

	if (r->pos == r->len)
		return 0;
	if (r->len - r->pos < 16) {
		snprintf(err, errlen, "truncated record header at %zu", r->pos);
		return -1;
	}
	h = r->buf + r->pos;
	incl = rd32(r, h + 8);
	if (incl > r->len - r->pos - 16) {
		snprintf(err, errlen, "truncated record at %zu", r->pos);
		return -1;
	}
	fr->data = h + 16;
	fr->len = incl;
	fr->orig_len = rd32(r, h + 12);
	fr->linktype = r->linktype;
	fr->ts_ns = (uint64_t)rd32(r, h) * 1000000000ull +
		    (uint64_t)rd32(r, h + 4) * (r->nsec ? 1 : 1000);
	r->pos += 16 + incl;
	return 1;
}

static int next_ng(struct pcapread *r, struct pcapread_frame *fr, char *err,
		   size_t errlen)
{
	const uint8_t *b;
	uint32_t type, blen, ifc, cap;

	for (;;) {
		if (r->pos == r->len)
			return 0;
		if (r->len - r->pos < 12) {
			snprintf(err, errlen, "truncated block at %zu", r->pos);
			return -1;
		}
		b = r->buf + r->pos;
		type = rd32(r, b);
		if (type == PCAPNG_SHB) {
			uint32_t bom;

			/* A new section may switch byte order. */
			memcpy(&bom, b + 8, 4);
			r->swap = bom != PCAPNG_BOM;
			r->nif = 0;
		}
		blen = rd32(r, b + 4);
		if (blen < 12 || (blen & 3) || blen > r->len - r->pos) {
			snprintf(err, errlen, "bad block length at %zu", r->pos);
			return -1;
		}
		r->pos += blen;
		switch (type) {
		case PCAPNG_IDB:
			if (blen < 20 || r->nif >= MAX_IFACES)
				break;
			r->if_link[r->nif] = rd16(r, b + 8);
			r->if_snap[r->nif] = rd32(r, b + 12);
			r->nif++;
			break;
		case PCAPNG_EPB:
			if (blen < 32)
				goto bad_pkt;
			ifc = rd32(r, b + 8);
			cap = rd32(r, b + 20);
			if (ifc >= r->nif || cap > blen - 32)
				goto bad_pkt;
			fr->data = b + 28;
			fr->len = cap;
			fr->orig_len = rd32(r, b + 24);
			fr->linktype = r->if_link[ifc];
			/* Default resolution (microseconds) assumed. */
			fr->ts_ns = (((uint64_t)rd32(r, b + 12) << 32) |
				     rd32(r, b + 16)) * 1000;
			return 1;
		case PCAPNG_SPB:
			if (r->nif < 1 || blen < 16)
				goto bad_pkt;
			fr->orig_len = rd32(r, b + 8);
			fr->len = fr->orig_len;
			if (fr->len > blen - 16)
				fr->len = blen - 16;
			if (r->if_snap[0] && fr->len > r->if_snap[0])
				fr->len = r->if_snap[0];
			fr->data = b + 12;
			fr->linktype = r->if_link[0];
			fr->ts_ns = 0;
			return 1;
		default:
			break;	/* statistics, name resolution, ... */
		}
	}
bad_pkt:
	snprintf(err, errlen, "malformed packet block before %zu", r->pos);
	return -1;
}

int pcapread_next(struct pcapread *r, struct pcapread_frame *fr, char *err,
		  size_t errlen)
{
	return r->ng ? next_ng(r, fr, err, errlen) :
		       next_classic(r, fr, err, errlen);
}

void pcapread_close(struct pcapread *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}
