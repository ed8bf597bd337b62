/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RC transport engine (rc_*.c) between two fake devices: each side has
 * memory regions with keys, an SQ and an RQ of already parsed WQEs, a
 * completion log and an event log; a wire joins them with a virtual
 * clock and can drop, duplicate and reorder packets from a fixed seed. A
 * tap lets a test look at, change or inject packets.
 *
 * The test_rc_*.c files share this harness (test_rc_harness.c).
 */
#ifndef RNICSIM_TEST_RC_HARNESS_H
#define RNICSIM_TEST_RC_HARNESS_H

#include "transport/rc.h"

#define SQN		1024
#define RQN		1024
#define NCQE		16384
#define NMR		8
#define NEV		64
#define LAT_NS		2000ULL		/* one-way wire latency */

struct fmr {
	bool used;
	bool valid;
	bool fastreg;
	u32 key;
	u64 va;
	u32 len;
	u8 access;
	u8 *buf;
};

struct fev {
	u8 type;
	u8 reason;
	u64 info;
};

struct world;

struct node {
	struct rc_qp qp;
	struct world *w;
	int id;
	struct fmr mr[NMR];
	struct rc_swqe *sq;
	u16 sq_pi;
	struct rc_rwqe *rq;
	u16 rq_pi;
	u16 rq_ci;
	int bad_sq_idx;		/* >= 0: sq_peek reports that WQE malformed */
	struct rc_cqe *scq;	/* send completions, silent ones included */
	int nscq;
	struct rc_cqe *rcq;
	int nrcq;
	struct fev ev[NEV];
	int nev;
	bool woken;
	u64 deadline;
	bool cq_fail;
	int eagain;		/* emit refuses this many packets */
	bool link_down;		/* emit loses every packet (-ENETDOWN) */
	u64 port_stats[RNIC_NUM_RDMA_STATS];
};

struct wpkt {
	u8 data[RC_PKT_MAX];
	size_t len;
	int to;
	u64 at;
	u64 seq;
};

/* The tap sees every packet sent; return false to drop it. */
typedef bool (*tap_fn)(struct world *w, int from, u8 *pkt, size_t *len);

struct world {
	struct node n[2];
	u64 now;
	struct wpkt *q;
	int nq;
	int cap;
	u64 seq;
	u64 rng;
	unsigned int drop_pm;	/* per 10000 */
	unsigned int dup_pm;
	unsigned int reorder_pm;
	tap_fn tap;
	void *tap_arg;
	u64 wire_pkts[2];	/* packets each side put on the wire */
	u64 dropped;
};

struct conn {
	u8 pmtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 access;
	u32 psn[2];
};

#define A(x)	RNIC_QP_ATTR_##x
#define M_INIT	(A(PKEY_INDEX) | A(ACCESS))
#define M_RTR	(A(PATH) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) | \
		 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER))
#define M_RTS	(A(SQ_PSN) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | \
		 A(MAX_RD_ATOMIC))

#define ALL_ACCESS	(RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE | \
			 RNIC_ACCESS_REMOTE_READ | RNIC_ACCESS_REMOTE_ATOMIC)

#define STAT(n, name)	((n)->qp.stats[RNIC_RDMA_STAT_##name])

#define NREC	4096

struct rec {
	int from;
	u8 op;
	u8 syn;
	bool ackreq;
	u32 psn;
	u64 va;
	u32 dma_len;
	u64 at;
	int a_nscq;		/* send completions node 0 had by then */
};

struct recorder {
	struct rec r[NREC];
	int n;
	/* drop the packets of this side with this opcode, this many times */
	int drop_from;
	int drop_op;
	int drop_count;
	int drop_skip;		/* ... after letting this many through */
	bool drop_all[2];
};

extern const struct rc_ops f_ops;
extern const struct conn conn_default;

u32 rnd(struct world *w);
u8 node_modify(struct node *n, u8 state, u32 mask, const struct conn *c);
/* Two nodes, their QPs in RESET; world_new() brings them to RTS. */
struct world *world_alloc(u64 seed);
struct world *world_new(const struct conn *c, u64 seed);
void world_free(struct world *w);
struct fmr *mr_add(struct node *n, int slot, u64 va, u32 len, u8 access);
struct rc_swqe *sq_post(struct node *n, u8 opcode, u8 flags);
void sge_add(struct rc_swqe *s, const struct fmr *m, u64 off, u32 len);
void rq_post(struct node *n, const struct fmr *m, u64 off, u32 len);
void ring(struct node *n);
bool wire_deliver(struct world *w);
void world_run(struct world *w, u64 limit_ns);
int count_events(const struct node *n, u8 type);
int scq_visible(const struct node *n, struct rc_cqe *out, int max);
void fill(struct fmr *m, u64 off, u32 len, u32 seed);

struct recorder *rec_of(struct world *w);
bool rec_tap(struct world *w, int from, u8 *pkt, size_t *len);
struct recorder *tap_on(struct world *w);
int rec_count(const struct recorder *rc, int from, int op);
struct world *world_mr(const struct conn *c, struct recorder **rc);
void post_send(struct world *w, u8 op, u32 len, u8 flags);
void post_rdma(struct world *w, u8 op, u64 loff, u64 roff, u32 len,
	       u8 flags);

#endif /* RNICSIM_TEST_RC_HARNESS_H */
