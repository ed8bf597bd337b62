/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnic_scale: a run of rdma_cm loopback connections, shared by
 * rnic_scale_conn.c (the connections, conns) and rnic_scale_one.c
 * (mr_churn, cq_overflow over one connection).
 */
#ifndef RNIC_SCALE_CONN_H
#define RNIC_SCALE_CONN_H

#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rnic_scale.h"

#define SCALE_MAGIC		0x72736331	/* "rsc1" */
#define SCALE_CM_TIMEOUT_MS	5000
#define SCALE_DISC_TIMEOUT	(15 * HZ)
#define SCALE_WR_TIMEOUT	(30 * HZ)
#define SCALE_OVF_TIMEOUT	(10 * HZ)
#define SCALE_OVF_EXTRA		8	/* WRs posted past the overflow CQ's size */
#define SCALE_RESET_WRS		8	/* qp_reset: WRITEs whose CQEs it leaves */
#define SCALE_RESET_TIMEOUT	(5 * HZ)
#define SCALE_CHURN_BATCH	32U	/* WRITE WRs per signalled batch */
#define SCALE_MAX_BUF		SZ_1M	/* depth * size of one connection */

enum scale_mode {
	SCALE_MODE_CONNS,
	SCALE_MODE_CHURN,
	SCALE_MODE_OVF,
	SCALE_MODE_RESET,
};

/* pattern kinds: each message of an iteration has its own */
enum {
	SCALE_KIND_WRITE = 1,
	SCALE_KIND_SEND,
	SCALE_KIND_CHURN,
	SCALE_KIND_RESET,
};

/* What the client tells the server in the connect private data. */
struct scale_req {
	__be32 magic;
	__be32 idx;
};

/*
 * Both a run (the listener's context, and so a new connection's until it
 * is accepted) and a connection are rdma_cm contexts: this tells them apart.
 */
struct scale_cm_ctx {
	bool is_run;
};

struct scale_conn;

/* A client slot (one iteration in flight) or a server receive buffer. */
struct scale_slot {
	struct ib_cqe cqe;	/* client: the SEND; server: the RECV */
	struct scale_conn *c;
	u32 idx;
	u32 iter;
	bool sent;
	bool credited;
};

struct scale_conn {
	struct scale_cm_ctx ctx;
	struct scale_run *run;
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	u32 idx;
	bool server;
	bool qp_made;
	bool dead;		/* torn down: CM handlers leave it alone */
	bool established;
	bool settled;		/* client: ESTABLISHED or failed */

	/* client: per slot WRITE source then SEND source; server: RECVs */
	void *buf;
	u64 buf_dma;
	u32 buf_len;
	struct scale_slot *slots;
	struct ib_cqe ctl_cqe;	/* client: credit RECVs; server: credit SENDs */

	/* server: the WRITE target, fast-registered once established */
	void *wbuf;
	struct scatterlist wsg;
	bool wsg_mapped;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;

	/* client: the server's WRITE target and the progress */
	u64 raddr;
	u32 rkey;
	spinlock_t lock;	/* the slots, against the first posts */
	u32 posted;
	u32 done;
};

/* One posted work request waited for. */
struct scale_wait {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

struct scale_run {
	struct scale_cm_ctx ctx;
	enum scale_mode mode;
	struct scale_conn_args a;
	u32 nconns;
	u32 depth;
	u32 send_sge;
	u32 sq_extra;		/* mr_churn, cq_overflow: SQ room of their own */
	struct rdma_cm_id *listen;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct scale_conn **cli;
	struct scale_conn **srv;
	struct mutex cm_lock;	/* CM handlers, srv[], teardown */
	bool stopping;
	wait_queue_head_t wq;
	int err;		/* the first error */
	atomic_t established;	/* ESTABLISHED events, both ends */
	atomic_t connected;	/* clients ESTABLISHED */
	atomic_t settled;	/* clients ESTABLISHED or failed */
	atomic_t mr_ready;	/* servers whose WRITE target is registered */
	atomic_t conns_done;
	atomic_t disconnected;
	atomic64_t verified;	/* messages whose every byte was right */
	atomic64_t bad;		/* bytes that were wrong */
	ktime_t t_last_est;
	s64 disc_ms;		/* teardown: until the DISCONNECTED events */

	/* mr_churn */
	struct scale_wait w_reg;
	struct scale_wait w_write;
	struct scale_wait w_send;
	struct scale_wait w_inv;
	struct completion churn_rx;
	u32 churn_iter;

	/* cq_overflow, qp_reset: the client's send CQ, polled by neither */
	struct ib_cq *ovf_cq;
	struct ib_cqe ovf_cqe;
	atomic_t cq_events;	/* qp_reset: its completion events */
	atomic_t cq_err;
	atomic_t qp_fatal;
	atomic_t qp_other;
	int qp_other_event;
	ktime_t t_cq_err;
	ktime_t t_qp_fatal;
};

/* rnic_scale_conn.c */
void scale_fill(u8 *p, u32 len, u32 conn, u32 iter, u32 kind);
u32 scale_check(const u8 *p, u32 len, u32 conn, u32 iter, u32 kind);
int scale_wait_for(struct scale_wait *w);
struct scale_run *scale_run_alloc(const struct scale_conn_args *a,
				  enum scale_mode mode, u32 nconns);
int scale_listen(struct scale_run *run);
int scale_run_connect(struct scale_run *run, ktime_t *t0);
void scale_run_teardown(struct scale_run *run);
void scale_run_free(struct scale_run *run);
u64 scale_per_s(u64 n, u64 ns);

#endif /* RNIC_SCALE_CONN_H */
