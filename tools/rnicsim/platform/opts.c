// SPDX-License-Identifier: GPL-2.0
/* Command-line parsing (see opts.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rnic_compat.h>
#include <rnic_hw.h>
#include <rnic_hw_rdma.h>

#include "platform/ivshmem.h"
#include "platform/opts.h"

enum {
	OPT_SOCKET = 256, OPT_GUEST_MEM, OPT_GUEST_MEM_SIZE, OPT_TAP, OPT_MAC,
	OPT_VECTORS, OPT_SHM_SIZE, OPT_CTL, OPT_PCAP, OPT_FAULT, OPT_LOG,
	OPT_SEED, OPT_CAPS_DISABLE, OPT_BENCH, OPT_BENCH_SECONDS,
	OPT_SELFTEST, OPT_CTL_CMD, OPT_HELP, OPT_ABI2, OPT_NO_ABI2,
	OPT_SIGNATURE_ABI,
	OPT_RDMA_TABLE_LOG2,
};

static const struct option long_opts[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "guest-mem", required_argument, NULL, OPT_GUEST_MEM },
	{ "guest-mem-size", required_argument, NULL, OPT_GUEST_MEM_SIZE },
	{ "tap", required_argument, NULL, OPT_TAP },
	{ "mac", required_argument, NULL, OPT_MAC },
	{ "vectors", required_argument, NULL, OPT_VECTORS },
	{ "shm-size", required_argument, NULL, OPT_SHM_SIZE },
	{ "ctl", required_argument, NULL, OPT_CTL },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "fault", required_argument, NULL, OPT_FAULT },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "caps-disable", required_argument, NULL, OPT_CAPS_DISABLE },
	{ "abi2", no_argument, NULL, OPT_ABI2 },
	{ "no-abi2", no_argument, NULL, OPT_NO_ABI2 },	/* refused */
	{ "signature-abi", required_argument, NULL, OPT_SIGNATURE_ABI },
	{ "rdma-table-log2", required_argument, NULL, OPT_RDMA_TABLE_LOG2 },
	{ "bench", optional_argument, NULL, OPT_BENCH },
	{ "bench-seconds", required_argument, NULL, OPT_BENCH_SECONDS },
	{ "selftest", no_argument, NULL, OPT_SELFTEST },
	{ "ctl-cmd", required_argument, NULL, OPT_CTL_CMD },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

void opts_usage(FILE *f)
{
	fputs(
"usage: rnicsim --socket PATH [options]    serve the ivshmem protocol\n"
"       rnicsim --bench[=abi2|abi2-tap] [--bench-seconds S]\n"
"               [--fault SPEC] [--pcap FILE]   datapath speed, no guest\n"
"       rnicsim --selftest                  run the unit tests\n"
"       rnicsim --ctl-cmd PATH COMMAND...   send one control command\n"
"\n"
"  --socket PATH          ivshmem server socket QEMU connects to\n"
"  --guest-mem FILE       the guest RAM file (memory-backend-file)\n"
"  --guest-mem-size BYTES size of that file, the DMA bound (<= 2G)\n"
"  --tap IFNAME           existing tap device to use as the wire\n"
"  --mac xx:xx:xx:xx:xx:xx  the port's MAC (default 02:00:00:00:00:01)\n"
"  --vectors N            MSI-X vectors, >= 2 (default 8, = QEMU vectors=)\n"
"  --shm-size BYTES       BAR2 size, power of two >= 128K (default 1M)\n"
"  --ctl PATH             control socket (faults, counters, link)\n"
"  --pcap FILE            write every frame sent/received\n"
"  --fault SPEC           e.g. drop=1%,reorder=0.5%,corrupt=0.1%\n"
"  --log FILE             log here instead of stderr\n"
"  --seed N               fault-injection PRNG seed (default 1)\n"
"  --caps-disable MASK    hide device capability bits (testing)\n"
"  --signature-abi MAJOR  test knob (1..15): the signature advertises ABI\n"
"                         MAJOR alone, as an older or newer firmware would,\n"
"                         and the device refuses every enable\n"
"  --rdma-table-log2 N    test knob (4..16): at most 2^N QPs, CQs, SRQs,\n"
"                         PDs and MRs, advertised so; each table keeps\n"
"                         its own size if that is smaller\n"
"  --abi2                 accepted and ignored: ABI 2.0 (the device runs the\n"
"                         transport) is the only ABI served; ABI 1.0 and\n"
"                         --no-abi2 were removed\n"
"Sizes take K, M, G suffixes (binary).\n", f);
}

int opts_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ull << 30;
		end++;
		break;
	}
	if (*end || (v && mul > UINT64_MAX / v))
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int opts_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
		   &b[3], &b[4], &b[5], &tail) != 6 || strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end || *out > max ? -EINVAL : 0;
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -EINVAL; } \
	while (0)

static int validate(struct sim_opts *o, char *err, size_t errlen)
{
	if (o->mode != SIM_MODE_RUN)
		return 0;
	if (!o->socket)
		FAIL("--socket PATH is required (or --bench, --selftest, "
		     "--ctl-cmd, --help)");
	if (o->guest_mem_size && !o->guest_mem)
		FAIL("--guest-mem-size without --guest-mem");
	if (o->mac[0] & 1)
		FAIL("--mac: %02x:... is a multicast address", o->mac[0]);
	return 0;
}

int opts_parse(struct sim_opts *o, int argc, char **argv, char *err,
	       size_t errlen)
{
	static const uint8_t def_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	unsigned long long v;
	size_t n, flen;
	uint64_t sz;
	char *end;
	int c, i;

	memset(o, 0, sizeof(*o));
	memcpy(o->mac, def_mac, sizeof(def_mac));
	o->vectors = SIM_DEFAULT_VECTORS;
	o->shm_size = SIM_DEFAULT_SHM_SIZE;
	o->seed = 1;
	o->bench_seconds = 1.0;
	err[0] = '\0';
	optind = 0;	/* full getopt re-initialisation (GNU) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			o->socket = optarg;
			break;
		case OPT_GUEST_MEM:
			o->guest_mem = optarg;
			break;
		case OPT_GUEST_MEM_SIZE:
			if (opts_parse_size(optarg, &sz) || !sz ||
			    sz > SIM_MAX_GUEST_MEM)
				FAIL("--guest-mem-size '%s': need 1..2G (guest "
				     "RAM above 2 GiB is not at its file "
				     "offset)", optarg);
			o->guest_mem_size = sz;
			break;
		case OPT_TAP:
			o->tap = optarg;
			break;
		case OPT_MAC:
			if (opts_parse_mac(optarg, o->mac))
				FAIL("--mac '%s': expected xx:xx:xx:xx:xx:xx",
				     optarg);
			break;
		case OPT_VECTORS:
			/* ABI 2.0: event queue 0 and at least one more */
			if (parse_uint(optarg, IVS_MAX_VECTORS, &v) || v < 2)
				FAIL("--vectors '%s': need 2..%d", optarg,
				     IVS_MAX_VECTORS);
			o->vectors = (unsigned int)v;
			break;
		case OPT_SHM_SIZE:
			/* ABI 2.0: doorbell pages past the register file */
			if (opts_parse_size(optarg, &sz) ||
			    sz < RNIC_SHM_MIN_SIZE_ABI2 || (sz & (sz - 1)) ||
			    sz > (1ull << 30))
				FAIL("--shm-size '%s': need a power of two "
				     "from 128K to 1G", optarg);
			o->shm_size = sz;
			break;
		case OPT_CTL:
			o->ctl = optarg;
			break;
		case OPT_PCAP:
			o->pcap = optarg;
			break;
		case OPT_FAULT:
			flen = strlen(o->fault);
			n = strlen(optarg);
			if (!n || flen + n + 2 > sizeof(o->fault))
				FAIL("--fault '%s': empty or too long", optarg);
			if (flen)
				o->fault[flen++] = ',';
			memcpy(o->fault + flen, optarg, n + 1);
			break;
		case OPT_LOG:
			o->log = optarg;
			break;
		case OPT_SEED:
			if (parse_uint(optarg, UINT64_MAX, &v))
				FAIL("--seed '%s': not a number", optarg);
			o->seed = v;
			break;
		case OPT_CAPS_DISABLE:
			if (parse_uint(optarg, UINT32_MAX, &v))
				FAIL("--caps-disable '%s': not a 32-bit mask",
				     optarg);
			o->caps_disable = (uint32_t)v;
			break;
		case OPT_ABI2:
			break;	/* 2.0 is all there is; old scripts give it */
		case OPT_NO_ABI2:
			FAIL("--no-abi2: ABI 1.0 was removed, rnicsim serves "
			     "ABI 2.0 only (to imitate a device without 2.0, "
			     "see --signature-abi)");
		case OPT_SIGNATURE_ABI:
			if (parse_uint(optarg, OPTS_MAX_SIGNATURE_ABI, &v) ||
			    !v)
				FAIL("--signature-abi '%s': need an ABI major "
				     "from 1 to %d", optarg,
				     OPTS_MAX_SIGNATURE_ABI);
			o->signature_abi = (unsigned int)v;
			break;
		case OPT_RDMA_TABLE_LOG2:
			if (parse_uint(optarg, OPTS_MAX_RDMA_TABLE_LOG2, &v) ||
			    v < OPTS_MIN_RDMA_TABLE_LOG2)
				FAIL("--rdma-table-log2 '%s': need %d to %d",
				     optarg, OPTS_MIN_RDMA_TABLE_LOG2,
				     OPTS_MAX_RDMA_TABLE_LOG2);
			o->rdma_table_log2 = (unsigned int)v;
			break;
		case OPT_BENCH:
			o->mode = SIM_MODE_BENCH;
			if (optarg && !strcmp(optarg, "abi1"))
				FAIL("--bench=abi1: ABI 1.0 was removed (abi2 "
				     "or abi2-tap)");
			o->bench_platform = !optarg;
			o->bench_abi2 = !optarg || !strcmp(optarg, "abi2");
			o->bench_tap = optarg && !strcmp(optarg, "abi2-tap");
			if (!o->bench_abi2 && !o->bench_tap)
				FAIL("--bench=%s: abi2 or abi2-tap", optarg);
			break;
		case OPT_BENCH_SECONDS:
			o->bench_seconds = strtod(optarg, &end);
			if (*end || !(o->bench_seconds > 0) ||
			    o->bench_seconds > 600)
				FAIL("--bench-seconds '%s': need (0, 600]",
				     optarg);
			break;
		case OPT_SELFTEST:
			o->mode = SIM_MODE_SELFTEST;
			break;
		case OPT_CTL_CMD:
			o->mode = SIM_MODE_CTL_CMD;
			o->ctl_cmd_path = optarg;
			break;
		case 'h':
		case OPT_HELP:
			o->mode = SIM_MODE_HELP;
			return 0;
		case ':':
			FAIL("option %s needs an argument", argv[optind - 1]);
		default:
			FAIL("unknown option '%s' (see --help)",
			     argv[optind - 1]);
		}
	}
	if (o->mode == SIM_MODE_CTL_CMD) {
		/* The command is the rest of the line: words joined by ' '. */
		if (optind >= argc)
			FAIL("--ctl-cmd PATH needs a command, e.g. counters");
		for (i = optind; i < argc; i++) {
			n = strlen(o->ctl_cmd);
			if (n + strlen(argv[i]) + 2 > sizeof(o->ctl_cmd))
				FAIL("control command too long");
			snprintf(o->ctl_cmd + n, sizeof(o->ctl_cmd) - n, "%s%s",
				 n ? " " : "", argv[i]);
		}
	} else if (optind < argc) {
		FAIL("unexpected argument '%s' (see --help)", argv[optind]);
	}
	return validate(o, err, errlen);
}
