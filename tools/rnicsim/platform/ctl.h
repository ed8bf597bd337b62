/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control socket: a unix stream socket speaking a line protocol, so lab
 * scripts can change faults and read counters while traffic runs.
 *
 *	fault SPEC		add/replace faults (fault.h)	ok <now active>
 *	fault			show				ok <active>
 *	fault clear						ok
 *	link down|up						ok link <up|down>
 *	rx hold|release		(rdev_rx_hold())		ok rx <hold|release>
 *	tx hold|release		(rdev_tx_hold())		ok tx <hold|release>
 *	aq hold|release		(rdev_aq_hold())		ok aq <hold|release>
 *	fatal [REASON]		(rdev_fatal())			ok fatal <reason>
 *	counters		"name value" lines, then	ok
 *	pcap start FILE | pcap stop				ok
 *	help							ok <commands>
 *	quit			rnicsim exits			ok bye
 *
 * A reply is zero or more data lines and then exactly one line that is
 * "ok[ ...]" or "error <reason>". Data lines never start with "ok" or
 * "error ".
 */
#ifndef RNICSIM_CTL_H
#define RNICSIM_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAX_CLIENTS	8
#define CTL_LINE_MAX	1024

typedef void (*ctl_out_fn)(void *octx, const char *line);

struct ctl_ops {
	/* 0 or -errno; @msg gets the active spec on success, else a reason */
	int (*fault_set)(void *ctx, const char *spec, char *msg, size_t len);
	void (*fault_show)(void *ctx, char *msg, size_t len);
	void (*fault_clear)(void *ctx);
	void (*link)(void *ctx, bool up);
	/* 0 or -errno; @msg gets a reason on failure */
	int (*rx_hold)(void *ctx, bool hold, char *msg, size_t len);
	int (*tx_hold)(void *ctx, bool hold, char *msg, size_t len);
	int (*aq_hold)(void *ctx, bool hold, char *msg, size_t len);
	/* *@reason 0 asks for the device's default; set to what it used */
	int (*fatal)(void *ctx, uint32_t *reason, char *msg, size_t len);
	/* optional: 0 or -errno; @msg gets a reason on failure */
	int (*arm_peek)(void *ctx, bool peek, char *msg, size_t len);
	void (*counters)(void *ctx, ctl_out_fn out, void *octx);
	int (*pcap_start)(void *ctx, const char *path, char *err, size_t len);
	void (*pcap_stop)(void *ctx);
	void (*quit)(void *ctx);
};

struct ctl_client {
	int fd;
	size_t used;
	char buf[CTL_LINE_MAX];
};

struct ctl {
	const struct ctl_ops *ops;
	void *ctx;
	char *path;
	int listen_fd;
	struct ctl_client client[CTL_MAX_CLIENTS];
	uint64_t commands, errors;
};

/* Run one command line; the reply goes line by line to @out. */
void ctl_execute(struct ctl *c, const char *line, ctl_out_fn out, void *octx);

int ctl_init(struct ctl *c, const char *path, const struct ctl_ops *ops,
	     void *ctx, char *err, size_t errlen);
void ctl_fini(struct ctl *c);
/* The listening socket is readable: returns the new client fd or -1. */
int ctl_accept(struct ctl *c);
/*
 * Client @fd is readable: run the complete lines it sent. Returns false
 * if the client is gone (the caller stops polling @fd; it is closed).
 */
bool ctl_client_event(struct ctl *c, int fd);

/* rnicsim --ctl-cmd: send @cmd, print the reply; exit status 0/1/2. */
int ctl_run_client(const char *path, const char *cmd);

#endif /* RNICSIM_CTL_H */
