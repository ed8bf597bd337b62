/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnicsim's command line (Documentation/CONVENTIONS.md, "rnicsim process
 * interface"), parsed into one structure.
 */
#ifndef RNICSIM_OPTS_H
#define RNICSIM_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum sim_mode {
	SIM_MODE_RUN,		/* serve one guest after another */
	SIM_MODE_BENCH,		/* --bench */
	SIM_MODE_SELFTEST,	/* --selftest */
	SIM_MODE_CTL_CMD,	/* --ctl-cmd PATH CMD */
	SIM_MODE_HELP,
};

#define SIM_DEFAULT_VECTORS	8
#define SIM_DEFAULT_SHM_SIZE	(1u << 20)
#define SIM_MAX_GUEST_MEM	(2ull << 30)	/* GPA == file offset below */

/*
 * --signature-abi takes 1..this: the device's limit (RDEV_MAX_SIGNATURE_ABI,
 * pci/device.h; main.c checks they agree), which the platform does not
 * include.
 */
#define OPTS_MAX_SIGNATURE_ABI	15
#define OPTS_MIN_RDMA_TABLE_LOG2	4
#define OPTS_MAX_RDMA_TABLE_LOG2	16

struct sim_opts {
	enum sim_mode mode;
	const char *socket;
	const char *guest_mem;
	uint64_t guest_mem_size;	/* 0: the file's size */
	const char *tap;
	uint8_t mac[6];
	unsigned int vectors;
	uint64_t shm_size;
	const char *ctl;
	const char *pcap;
	char fault[1024];		/* every --fault, comma-joined */
	const char *log;
	uint64_t seed;
	uint32_t caps_disable;
	/* --signature-abi: 0, or the one major advertised (rdev_config) */
	unsigned int signature_abi;
	/* --rdma-table-log2: 0, or the log2 of the largest object table */
	unsigned int rdma_table_log2;
	/* --ctl-cmd */
	const char *ctl_cmd_path;
	char ctl_cmd[1024];
	/*
	 * --bench[=abi2|abi2-tap]: without a value, the platform alone
	 * (bench.c), then the 2.0 devices back to back; abi2: those only;
	 * abi2-tap: the 2.0 devices over taps
	 */
	bool bench_platform, bench_abi2, bench_tap;
	double bench_seconds;
};

/*
 * Parse @argv (getopt state is reset first, so this may be called more
 * than once). 0, or -EINVAL with a one-line reason in @err.
 */
int opts_parse(struct sim_opts *o, int argc, char **argv, char *err,
	       size_t errlen);
void opts_usage(FILE *f);

/* "1G", "512M", "64K", "4096": binary multiples. 0 or -EINVAL. */
int opts_parse_size(const char *s, uint64_t *out);
int opts_parse_mac(const char *s, uint8_t mac[6]);

#endif /* RNICSIM_OPTS_H */
