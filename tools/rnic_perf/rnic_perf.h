/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rnic_perf's private header: the test's wire formats (connect private
 * data, control messages), a connection's state and the functions the
 * module's files share (Documentation/rnic_perf.rst).
 *
 *   perf_main.c    debugfs commands and results, module init/exit
 *   perf_conn.c    patterns, buffers, the server's region, control
 *                  messages, connection setup, drain and teardown
 *   perf_server.c  listeners, the server side of a test
 *   perf_client.c  the client side of a test, its result line
 */

#ifndef RNIC_PERF_H
#define RNIC_PERF_H

#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

struct seq_file;

#define PERF_MAGIC		0x72706631	/* "rpf1" */
#define PERF_DEF_PORT		18515
#define PERF_MAX_SIZE		SZ_1M
#define PERF_MAX_DEPTH		256U
#define PERF_MAX_COUNT		10000000U
#define PERF_MAX_HOLD_MS	60000U
#define PERF_MAX_RESP_RES	16U	/* what the client's REQ offers at most */
/*
 * sge= and rx_sge= go to the server in a byte; the device's own limits
 * (max_send_sge, max_sge_rd, max_recv_sge, max_srq_sge) are what a run
 * is checked against, and sge=max / rx_sge=max ask for exactly those.
 */
#define PERF_MAX_SGE		U8_MAX
#define PERF_SGE_DEV		0	/* perf_args.nsge: sge=max */
#define PERF_MAX_REGION_PAGES	1024U
#define PERF_CTRL_RX		4
#define PERF_ATOMIC_INIT	0x0123456789abcdefULL
#define PERF_TIMEOUT		(30 * HZ)
/* rtr=1: from ESTABLISHED to the COMM_EST the client's HELLO raises */
#define PERF_RTR_WAIT		(10 * HZ)
#define PERF_CM_TIMEOUT_MS	5000
#define PERF_NR_RESULTS		16
#define PERF_LINE_LEN		768
#define PERF_GRH_LEN		40	/* room for the GRH ahead of UD data */
/*
 * The RNR NAK wait an RC QP asks of its peer when a SEND finds no receive
 * posted. rdma_cm's default, 0, is 655.36 ms (IBA table 45): one SEND
 * that overtakes its receive's repost stalls a run for that long, which
 * turns a latency figure into the RNR timer. 0.64 ms, as kernel ULPs that
 * repost from their completion handler choose.
 */
#define PERF_MIN_RNR_TIMER	IB_RNR_TIMER_000_64

enum perf_op {
	PERF_SEND,
	PERF_SEND_IMM,
	PERF_WRITE,
	PERF_WRITE_IMM,
	PERF_READ,
	PERF_CMP_SWAP,
	PERF_FETCH_ADD,
	PERF_NR_OPS,
};

extern const char * const perf_op_names[PERF_NR_OPS];

static inline bool perf_op_is_send(enum perf_op op)
{
	return op == PERF_SEND || op == PERF_SEND_IMM;
}

static inline bool perf_op_is_atomic(enum perf_op op)
{
	return op == PERF_CMP_SWAP || op == PERF_FETCH_ADD;
}

/*
 * Error paths on purpose (client option fault=): the run must then fail
 * with the work completion status the test expects.
 */
enum perf_fault {
	PERF_FAULT_NONE,
	PERF_FAULT_RKEY,	/* a wrong rkey: remote access error */
	PERF_FAULT_NORECV,	/* the server posts no receive: RNR NAKs */
	PERF_FAULT_FLUSH,	/* the client's QP to ERR with WRs in flight */
	PERF_FAULT_SHORT,	/* receives too short: NAK invalid request */
	PERF_NR_FAULTS,
};

extern const char * const perf_fault_names[PERF_NR_FAULTS];

/*
 * Client option inv=: once the run's operations are done, the server's
 * fast-registered region is invalidated, as FRWR ULPs do with every
 * buffer: by the server itself (IB_WR_LOCAL_INV) or by the client's
 * SEND_WITH_INV naming the server's rkey; a last WRITE with that rkey
 * must then fail with REM_ACCESS_ERR.
 */
enum perf_inv {
	PERF_INV_NONE,
	PERF_INV_LOCAL,
	PERF_INV_REMOTE,
	PERF_NR_INVS,
};

extern const char * const perf_inv_names[PERF_NR_INVS];

/* Connect private data: the test, client to server. */
struct perf_req {
	__be32 magic;
	u8 op;
	u8 nsge;
	u8 verify;
	u8 fault;		/* enum perf_fault */
	__be32 size;
	__be32 depth;
	__be32 count;
	/*
	 * The CM gives each side's QP the RNR retry count its peer chose
	 * (the peer knows how long it may be short of receives), so the
	 * server accepts with the client's wish for the client's QP.
	 */
	u8 rnr_retry;
	u8 flags;		/* PERF_REQ_F_* */
	u8 inv;			/* enum perf_inv */
	u8 rx_sge;		/* the server's receive SGEs; 0: nsge */
	__be32 srq_limit;	/* with PERF_REQ_F_SRQ */
	__be32 offset;		/* the region's first byte in its first page */
	u8 resp_res;		/* with PERF_REQ_F_RESP_RES */
	u8 rsvd[3];
};

/* it must fit an RC REQ's private data: 92 bytes less rdma_cm's 36 */
static_assert(sizeof(struct perf_req) <= 56);

#define PERF_REQ_F_UD		BIT(0)	/* UD QPs (rdma_cm's UDP port space) */
#define PERF_REQ_F_SRQ		BIT(1)	/* the server receives through an SRQ */
#define PERF_REQ_F_RX_SGE_MAX	BIT(2)	/* rx_sge=max: the device's limit */
/* rtr=1: the server's QP stays in RTR until the client's HELLO arrives */
#define PERF_REQ_F_RTR		BIT(3)
/* resp_res=: the server's QP takes fewer READs than its REP offers */
#define PERF_REQ_F_RESP_RES	BIT(4)

/*
 * The server's reject private data when it refuses a test its device
 * cannot run (rx_sge= above max_recv_sge): the client logs msg.
 */
struct perf_rej {
	__be32 magic;
	__be32 err;
	char msg[96];
};

enum perf_ctrl_type {
	PERF_CTRL_INFO = 1,	/* server: addr/rkey/nslots/stride of its buffer */
	PERF_CTRL_CHECK,	/* client: verify iterations first..first+n-1 */
	PERF_CTRL_FILL,		/* client: fill slots for first..first+n-1 */
	PERF_CTRL_DONE,		/* client: end of test, val = atomic final value */
	PERF_CTRL_REPLY,	/* server: errors, msgs, status */
	PERF_CTRL_INV,		/* client: invalidate rkey (inv=), then REPLY */
	PERF_CTRL_HELLO,	/* client, rtr=1: first message, no reply */
};

struct perf_ctrl {
	__be32 magic;
	__be32 type;
	__be64 addr;
	__be64 val;
	__be32 rkey;
	__be32 nslots;
	__be32 stride;
	__be32 first;
	__be32 n;
	__be32 errors;
	__be32 msgs;
	__be32 status;
};

/*
 * A physically contiguous buffer, DMA mapped, used with local_dma_lkey.
 * A client slot's is allocated in whole pages (base, alloc bytes), va at
 * offset= bytes into its first page; others are kmalloc'ed (alloc 0).
 */
struct perf_buf {
	void *va;
	u64 dma;
	u32 len;
	void *base;
	size_t alloc;
};

struct perf_conn;

struct perf_rx {
	struct ib_cqe cqe;
	struct perf_conn *c;
	struct perf_buf buf;
};

struct perf_slot {
	struct ib_cqe cqe;
	struct perf_conn *c;
	struct perf_buf buf;
	u32 iter;
	u64 t0;
	u64 expect;		/* atomics: the original value to come back */
};

enum perf_cm_state {
	PERF_CM_IDLE,
	PERF_CM_ADDR,
	PERF_CM_ROUTE,
	PERF_CM_CONNECTED,
	PERF_CM_DISCONNECTED,
	PERF_CM_ERROR,
};

struct perf_conn {
	bool listener;		/* false: tells a conn from a perf_server */
	unsigned long releasing;
	struct rdma_cm_id *id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool server;
	bool qp_created;
	/*
	 * Server, rtr= or resp_res=: the QP is ours (ib_create_qp), not
	 * rdma_cm's, and we move it through INIT, RTR and RTS ourselves.
	 */
	bool own_qp;
	bool rtr_hold;		/* rtr=1: in RTR until COMM_EST */
	bool hello_got;
	int resp_res;		/* our max_dest_rd_atomic; -1: as the REP says */
	u8 init_depth;		/* our max_rd_atomic, from the REP */
	struct completion comm_est;

	/* the test */
	enum perf_op op;
	u32 size;
	u32 depth;
	u32 count;
	u32 nsge;		/* client: sge= (sge=max resolved in setup) */
	u32 wr_sge;		/* client: SGEs in each data work request */
	u32 offset;		/* client slots', server region's page offset */
	bool verify;
	bool inl;
	u32 qp_inline;		/* the QP's cap.max_inline_data as granted */
	int max_inline;		/* inline=1: the largest send WQE's, or -1 */
	u32 corrupt;		/* self-test: spoil iteration corrupt - 1 */
	enum perf_fault fault;
	bool ud;		/* UD QPs: no RDMA, messages within the MTU */
	u32 grh;		/* UD: receive buffers start with the GRH */

	/* UD: where sends go (the client: from the SIDR reply; the server:
	 * from the first control message's work completion)
	 */
	struct ib_ah *ah;
	struct rdma_ah_attr ud_ah_attr;	/* client: from ESTABLISHED */
	bool ud_ah_attr_set;
	u32 remote_qpn;
	u32 remote_qkey;
	bool release_after_tx;	/* UD server: release once REPLY is sent */

	/* server with an SRQ: one buffer per data message, none reposted,
	 * so the SRQ drains and must cross its limit exactly once
	 */
	struct ib_srq *srq;
	bool use_srq;
	u32 srq_limit;
	atomic_t srq_events;
	u32 srq_event_rx;	/* data messages handled when it fired */
	/* IB_EVENT_QP_LAST_WQE_REACHED seen, and how long the drain took */
	atomic_t last_wqe_events;
	u32 drain_ms;
	/* the QP's other async events, BIT(enum ib_event_type) each */
	unsigned long qp_events;

	/* client: one slot per operation in flight */
	struct perf_slot *slots;
	u32 nslots;

	/* control messages */
	struct perf_buf ctrl_tx[2];
	struct ib_cqe ctrl_tx_cqe;
	unsigned int ctrl_tx_next;
	struct perf_rx *rx;
	u32 nrx;
	u32 rx_len;
	u32 rx_nsge;		/* SGEs a receive may take (rx_sge=) */
	u32 rx_wr_sge;		/* SGEs in each receive posted */
	bool rx_sge_max;	/* server: rx_sge=max */
	struct ib_sge *tx_sgl;	/* client: a data WR's SGEs, nsge of them */
	struct ib_sge *rx_sgl;	/* a receive's SGEs, rx_nsge of them */
	char why[96];		/* server: why the test was refused */

	/* server: the remotely accessible buffer, fast-registered */
	struct page **pages;
	u32 npages;
	void *region;		/* the pages' mapping */
	void *rdata;		/* region + offset: slot 0 */
	struct sg_table sgt;
	bool sgt_mapped;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;
	u32 rslots;
	u32 rstride;

	/* client: the server's buffer */
	u64 raddr;
	u32 rkey;

	/* inv=: the server's LOCAL_INV, the client's WRITE with the old rkey */
	enum perf_inv inv;
	struct ib_cqe inv_cqe;
	bool inv_checked;	/* server: invalidated; client: all of it */
	bool inv_probe_done;
	enum ib_wc_status inv_probe;

	/* progress */
	wait_queue_head_t wq;
	enum perf_cm_state cm_state;
	int cm_err;
	atomic_t done;
	atomic_t flushed;	/* client data WRs completed with WR_FLUSH_ERR */
	atomic_t sq_pending;	/* signaled sends not completed yet */
	bool drained;
	int wc_err;
	enum ib_wc_status wc_status;
	enum ib_wc_opcode wc_opcode;
	bool ctrl_got;
	struct perf_ctrl ctrl_msg;
	u32 *lat;
	u64 atomic_val;

	/* server statistics */
	u32 rx_data;
	u64 rx_bytes;		/* data messages' byte_len, summed */
	u32 rx_imm;
	u64 errors;
	u32 first_bad_iter;
	u32 first_bad_off;
	bool reported;

	struct list_head list;
	struct work_struct release_work;
};

struct perf_server {
	bool listener;		/* true */
	struct rdma_cm_id *id;		/* RC: rdma_cm's TCP port space */
	struct rdma_cm_id *ud_id;	/* UD: its UDP port space */
	struct sockaddr_storage addr;
};

struct perf_args {
	struct sockaddr_storage addr;
	struct sockaddr_storage src;
	bool has_src;
	enum perf_op op;
	u32 size;
	u32 depth;
	u32 count;
	u32 nsge;		/* PERF_SGE_DEV: sge=max */
	u32 rx_sge;		/* 0: as sge; rx_sge_max: the device's */
	bool rx_sge_max;
	u32 offset;
	int tos;
	u32 corrupt;
	bool verify;
	bool inl;
	enum perf_fault fault;
	enum perf_inv inv;
	u32 retry;
	u32 rnr_retry;
	bool ud;
	bool srq;
	u32 srq_limit;
	u32 hold_ms;		/* connected and idle before the disconnect */
	bool rtr;		/* the server holds its QP in RTR (COMM_EST) */
	int resp_res;		/* the server's max_dest_rd_atomic; -1: as offered */
};

extern struct mutex perf_lock;
extern struct workqueue_struct *perf_wq;

/* perf_main.c */
void perf_result_add(const char *line);

/* perf_conn.c */
void perf_fill(u8 *dst, u32 iter, u32 off, u32 len);
u32 perf_check(const u8 *src, u32 iter, u32 off, u32 len, u32 *bad);
u32 perf_word(u32 iter, u32 w);
u32 perf_npieces(u32 len, u32 nsge);
int perf_sges(struct ib_sge *sge, u64 base, u32 len, u32 nsge, u32 lkey);
void perf_fill_msg(u8 *buf, u32 len, u32 nsge, u32 iter);
u32 perf_check_msg(const u8 *buf, u32 len, u32 nsge, u32 msg_len,
		   u32 iter, u32 *bad);
void perf_copy_msg(void *dst, const u8 *buf, u32 len, u32 nsge, u32 n);
void perf_buf_for_cpu(struct perf_conn *c, struct perf_buf *b);
void perf_buf_for_dev(struct perf_conn *c, struct perf_buf *b);
void perf_region_for_cpu(struct perf_conn *c);
void perf_region_for_dev(struct perf_conn *c);
void perf_wc_error(struct perf_conn *c, struct ib_wc *wc, const char *what);
const char *perf_qp_events(struct perf_conn *c, char *buf, size_t len);
void perf_send_done(struct perf_conn *c);
int perf_post_rx(struct perf_conn *c, struct perf_rx *r);
int perf_send_ctrl(struct perf_conn *c, struct perf_ctrl *m);
int perf_send_ctrl_inv(struct perf_conn *c, struct perf_ctrl *m, u32 rkey);
int perf_qp_to(struct perf_conn *c, enum ib_qp_state state, int rd_atomic);
void perf_drain(struct perf_conn *c);
void perf_conn_free(struct perf_conn *c);
int perf_conn_setup(struct perf_conn *c);

/* perf_server.c */
void perf_server_rx_done(struct ib_cq *cq, struct ib_wc *wc);
void perf_conn_release(struct perf_conn *c);
int perf_server_start(struct sockaddr_storage *addr);
void perf_servers_show(struct seq_file *m);
void perf_stop_all(void);

/* perf_client.c */
void perf_client_rx_done(struct ib_cq *cq, struct ib_wc *wc);
void perf_slot_done(struct ib_cq *cq, struct ib_wc *wc);
int perf_client(struct perf_args *a);

#endif /* RNIC_PERF_H */
