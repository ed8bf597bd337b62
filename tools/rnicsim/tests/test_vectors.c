// SPDX-License-Identifier: GPL-2.0
/*
 * Known-answer ICRC vectors: every .pcap and .pcapng in tests/vectors is a
 * test of its own ("icrc_vectors_<file>"), registered at start-up, so
 * frames captured from rdma_rxe are checked as soon as they are committed.
 * icrc_gen.pcap comes from gen_icrc_vectors.py, an independent
 * implementation (zlib's CRC-32 over its own masking).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapread.h"
#include "pkt/pkt.h"
#include "test.h"

#define LINKTYPE_ETHERNET	1

struct vec_count {
	unsigned int v1, v4, v6, other, skipped;
};

static int is_roce(enum pkt_class c)
{
	return c == PKT_CLASS_ROCE_V1 || c == PKT_CLASS_ROCE_V2_IPV4 ||
	       c == PKT_CLASS_ROCE_V2_IPV6;
}

/* Check every RoCE frame of one file; counts what it saw. */
static void check_file(const char *path, struct vec_count *cnt)
{
	struct pcapread_frame fr;
	struct pcapread *r;
	struct pkt_info info;
	enum pkt_class cls;
	unsigned int n = 0;
	char err[256];
	int rc;

	memset(cnt, 0, sizeof(*cnt));
	r = pcapread_open(path, err, sizeof(err));
	if (!r) {
		test_fail(__FILE__, __LINE__, "%s", err);
		return;
	}
	while ((rc = pcapread_next(r, &fr, err, sizeof(err))) == 1) {
		n++;
		if (fr.linktype != LINKTYPE_ETHERNET || fr.len != fr.orig_len) {
			cnt->skipped++;	/* not Ethernet, or cut by snaplen */
			continue;
		}
		cls = pkt_classify(fr.data, fr.len, PKT_ROCE_V2_PORT, &info);
		if (cls == PKT_CLASS_MALFORMED) {
			test_fail(__FILE__, __LINE__,
				  "%s: frame %u classified malformed", path, n);
			continue;
		}
		if (!is_roce(cls)) {
			cnt->other++;
			continue;
		}
		if (!pkt_icrc_ok(fr.data, &info))
			test_fail(__FILE__, __LINE__,
				  "%s: frame %u: ICRC mismatch (ours %08x)",
				  path, n, pkt_icrc(fr.data, &info));
		if (cls == PKT_CLASS_ROCE_V1)
			cnt->v1++;
		else if (cls == PKT_CLASS_ROCE_V2_IPV4)
			cnt->v4++;
		else
			cnt->v6++;
	}
	if (rc < 0)
		test_fail(__FILE__, __LINE__, "%s: %s", path, err);
	pcapread_close(r);
	fprintf(stderr, "# %s: %u frames: RoCE v1 %u, v2/IPv4 %u, v2/IPv6 %u, "
		"other %u, skipped %u\n", path, n, cnt->v1, cnt->v4, cnt->v6,
		cnt->other, cnt->skipped);
}

static void test_one_file(void)
{
	const char *path = test_arg();
	struct vec_count cnt;

	check_file(path, &cnt);
	if (!test_failed() && cnt.v1 + cnt.v4 + cnt.v6 == 0)
		test_fail(__FILE__, __LINE__, "%s: no RoCE frame to check",
			  path);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

__attribute__((constructor)) static void register_vector_files(void)
{
	struct dirent **ents;
	struct test_case *tc;
	char dir[4096], *path, *name;
	int i, n;

	snprintf(dir, sizeof(dir), "%s/tests/vectors", test_srcdir());
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return;	/* icrc_gen_vectors_present reports it */
	for (i = 0; i < n; i++) {
		if (has_suffix(ents[i]->d_name, ".pcap") ||
		    has_suffix(ents[i]->d_name, ".pcapng")) {
			tc = calloc(1, sizeof(*tc));
			if (asprintf(&path, "%s/%s", dir, ents[i]->d_name) < 0 ||
			    asprintf(&name, "icrc_vectors_%s",
				     ents[i]->d_name) < 0)
				abort();
			tc->name = name;
			tc->file = __FILE__;
			tc->fn = test_one_file;
			tc->arg = path;
			test_register(tc);
		}
		free(ents[i]);
	}
	free(ents);
}

/* The generated vectors cover all three encapsulations. */
TEST(icrc_gen_vectors_present)
{
	struct vec_count cnt;
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/vectors/icrc_gen.pcap",
		 test_srcdir());
	check_file(path, &cnt);
	CHECK_EQ(cnt.v1, 3);
	CHECK_EQ(cnt.v4, 7);
	CHECK_EQ(cnt.v6, 4);
}
