/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic_hostile: what its files share (rnic_hostile.c says what the program
 * is for). The options, the failure and note lines every mode prints, the
 * device with its async events (rnic_hostile_dev.c), the RC pairs in
 * loopback and their verified transfers, and one entry point a mode:
 * rnic_hostile_wqe.c writes into our own rings and doorbell pages,
 * rnic_hostile_mem.c attacks memory registration and dies in flight,
 * rnic_hostile_udata.c sends the uverbs commands bad driver data,
 * rnic_hostile_traffic.c only transfers, rnic_hostile_fatal.c transfers
 * while the device fails.
 */
#ifndef RNIC_HOSTILE_H
#define RNIC_HOSTILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rnic.h"

#define XFER		8192		/* bytes of one WRITE and one SEND */
#define BUF_LEN		(4 * XFER)	/* per side: write src, write dst, recv dst, send src */
#define OFF_WSRC	0
#define OFF_WDST	XFER
#define OFF_RDST	(2 * XFER)
#define OFF_SSRC	(3 * XFER)
#define QP_WR		32
#define CQ_DEPTH	(2 * QP_WR + 8)
#define MAX_PAIRS	64
#define MAX_EVENTS	256

struct hostile_opt {
	const char *dev;
	int port;
	int gid_index;
	int timeout_ms;
	int seconds;
	int kill_ms;
	const char *stop_file;	/* traffic: stop once it exists (-s) */
};

extern struct hostile_opt opt;
/* a mode that cannot run here says why, and that is its "ok" */
extern const char *skipped;
/* a mode whose ok line says what it found (fatal) */
extern const char *ok_text;
extern int failures;

/* The first failure is the one the result line gives; all are printed */
void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...);
/* A failure that ends the run at once, from any thread: a call that hangs */
void __attribute__((format(printf, 1, 2), noreturn)) fail_exit(const char *fmt, ...);
/*
 * How a teardown reports a call's error: fail(), but for fatal, after
 * which an error is expected and only noted.
 */
typedef void __attribute__((format(printf, 1, 2))) (*report_fn)(const char *fmt, ...);
int64_t now_ms(void);
void nap_us(long us);

/* ------------------------------------------------------------------------
 * The device, its async events, its counters
 */

/* An object by its number, which the device does not reuse soon (cyclic) */
#define ID_QP		(1ULL << 32)
#define ID_CQ		(2ULL << 32)

struct ev {
	enum ibv_event_type type;
	uint64_t id;		/* ID_QP | QPN, ID_CQ | CQN, or 0 */
};

struct dev {
	struct ibv_context *ctx;
	struct rnic_context *rctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	/*
	 * Async events, read and acked by a thread of their own: destroying
	 * a QP or CQ waits until its events were acked.
	 */
	pthread_t ev_thread;
	bool ev_running;
	volatile bool ev_stop;
	pthread_mutex_t ev_lock;
	struct ev ev[MAX_EVENTS];
	int nev;
	struct pair *pairs[MAX_PAIRS];	/* alive, for the slots in use */
	/* attacked on purpose: their error events are expected */
	uint64_t victims[2 * MAX_PAIRS];
	int nvictims;
};

/* A new context on -d's device, or NULL with *@err and @why saying why */
struct ibv_context *ctx_open(int *err, char *why, size_t len);
int dev_open(struct dev *d);
/* The verb a teardown is in, for a watchdog to name */
extern const char *_Atomic under_way;
void dev_teardown(struct dev *d, report_fn report);
void dev_close(struct dev *d);		/* dev_teardown(), errors fail */
uint64_t qp_id(struct ibv_qp *qp);
uint64_t cq_id(struct ibv_cq *cq);
void victim(struct dev *d, uint64_t id);
bool event_seen(struct dev *d, enum ibv_event_type type, uint64_t id);
bool event_wait(struct dev *d, enum ibv_event_type type, uint64_t id);
void events_check(struct dev *d);
long long counter(const char *name);
/* rdma resource show's object counts of -d's device (rnic_hostile_mem.c) */
#define RES_KINDS	5
extern const char *const res_names[RES_KINDS];	/* pd cq qp mr ctx */
bool resources(long long r[RES_KINDS]);
void resources_note(const long long before[RES_KINDS], const long long after[RES_KINDS]);

/* ------------------------------------------------------------------------
 * RC pairs in loopback and verified transfers
 */

struct pair {
	struct dev *d;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];
	struct ibv_mr *mr[2];
	uint8_t *buf[2];
};

void pat_fill(uint8_t *p, size_t len, uint32_t seed);
size_t pat_bad(const uint8_t *p, size_t len, uint32_t seed);
struct pair *pair_create(struct dev *d);
void pair_teardown(struct pair *p, report_fn report);
void pair_destroy(struct pair *p);	/* pair_teardown(), errors fail */
int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n);
int post_recv(struct pair *p, int side, uint64_t wrid);

/* How a transfer ended */
enum xfer_end {
	XFER_OK,		/* completed, every byte verified */
	XFER_REFUSED,		/* a post or a poll returned an error */
	XFER_TIMEOUT,		/* a completion did not come within -T */
	XFER_ERROR,		/* a completion in error */
	XFER_WRONG,		/* "successful", but wrong bytes or length */
};

/*
 * A WRITE then a SEND from side @s to the other, both checked, byte by
 * byte; how it ended, and @why unless XFER_OK. xfer() fails on any end
 * but XFER_OK, with @what before the reason.
 */
enum xfer_end xfer_try(struct pair *p, int s, uint32_t seed, char *why, size_t len);
bool xfer(struct pair *p, int s, uint32_t seed, const char *what);
bool fresh_check(const char *what);

/* ------------------------------------------------------------------------
 * The modes
 */

void mode_bad_wqe(struct dev *d);
void mode_bad_db(struct dev *d);
void mode_bad_kick(struct dev *d);
void mode_bad_mr(struct dev *d);
void mode_bad_udata(struct dev *d);
void mode_killed(void);
void mode_traffic(struct dev *d);
void mode_fatal(struct dev *d);

#endif /* RNIC_HOSTILE_H */
