// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf: an in-kernel RDMA verbs exerciser and benchmark.
 *
 * Driven through debugfs (Documentation/rnic_perf.rst):
 *
 *   echo "server addr=10.20.0.1 port=18515" > /sys/kernel/debug/rnic_perf/control
 *   echo "client addr=10.20.0.1 port=18515 op=write size=65536 depth=16 count=1000 verify=1" \
 *	> /sys/kernel/debug/rnic_perf/control
 *   cat /sys/kernel/debug/rnic_perf/results
 *
 * A client connects with rdma_cm (RC), tells the server the test in the
 * connect private data, learns the server's fast-registered buffer from an
 * INFO message and runs SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM,
 * RDMA READ, CMP_SWAP or FETCH_ADD, keeping up to depth operations in
 * flight.  Every byte is checked against a pattern derived from the
 * iteration number; throughput, message rate and per-operation latency
 * (post to completion) are reported.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>

#include "rnic_compat.h"

#define PERF_MAGIC		0x72706631	/* "rpf1" */
#define PERF_DEF_PORT		18515
#define PERF_MAX_SIZE		SZ_1M
#define PERF_MAX_DEPTH		256U
#define PERF_MAX_COUNT		10000000U
#define PERF_MAX_SGE		16U
#define PERF_MAX_REGION_PAGES	1024U
#define PERF_CTRL_RX		4
#define PERF_INLINE_MAX		256U
#define PERF_ATOMIC_INIT	0x0123456789abcdefULL
#define PERF_TIMEOUT		(30 * HZ)
#define PERF_CM_TIMEOUT_MS	5000
#define PERF_NR_RESULTS		16
#define PERF_LINE_LEN		512
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

static const char * const perf_op_names[PERF_NR_OPS] = {
	[PERF_SEND] = "send",
	[PERF_SEND_IMM] = "send_imm",
	[PERF_WRITE] = "write",
	[PERF_WRITE_IMM] = "write_imm",
	[PERF_READ] = "read",
	[PERF_CMP_SWAP] = "cmp_swap",
	[PERF_FETCH_ADD] = "fetch_add",
};

static bool perf_op_is_send(enum perf_op op)
{
	return op == PERF_SEND || op == PERF_SEND_IMM;
}

static bool perf_op_is_atomic(enum perf_op op)
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

static const char * const perf_fault_names[PERF_NR_FAULTS] = {
	[PERF_FAULT_NONE] = "none",
	[PERF_FAULT_RKEY] = "rkey",
	[PERF_FAULT_NORECV] = "norecv",
	[PERF_FAULT_FLUSH] = "flush",
	[PERF_FAULT_SHORT] = "short",
};

/*
 * ib_wc_status_msg() has spaces; result lines are key=value words, so the
 * enumerator's own name is reported.
 */
static const char * const perf_wc_names[] = {
	[IB_WC_SUCCESS] = "SUCCESS",
	[IB_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	[IB_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	[IB_WC_LOC_EEC_OP_ERR] = "LOC_EEC_OP_ERR",
	[IB_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	[IB_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	[IB_WC_MW_BIND_ERR] = "MW_BIND_ERR",
	[IB_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
	[IB_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
	[IB_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	[IB_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[IB_WC_REM_OP_ERR] = "REM_OP_ERR",
	[IB_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	[IB_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	[IB_WC_LOC_RDD_VIOL_ERR] = "LOC_RDD_VIOL_ERR",
	[IB_WC_REM_INV_RD_REQ_ERR] = "REM_INV_RD_REQ_ERR",
	[IB_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	[IB_WC_INV_EECN_ERR] = "INV_EECN_ERR",
	[IB_WC_INV_EEC_STATE_ERR] = "INV_EEC_STATE_ERR",
	[IB_WC_FATAL_ERR] = "FATAL_ERR",
	[IB_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
	[IB_WC_GENERAL_ERR] = "GENERAL_ERR",
};

static const char *perf_wc_name(enum ib_wc_status st)
{
	if ((unsigned int)st < ARRAY_SIZE(perf_wc_names) && perf_wc_names[st])
		return perf_wc_names[st];
	return "UNKNOWN";
}

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
	u8 rsvd[2];
	__be32 srq_limit;	/* with PERF_REQ_F_SRQ */
};

#define PERF_REQ_F_UD		BIT(0)	/* UD QPs (rdma_cm's UDP port space) */
#define PERF_REQ_F_SRQ		BIT(1)	/* the server receives through an SRQ */

enum perf_ctrl_type {
	PERF_CTRL_INFO = 1,	/* server: addr/rkey/nslots/stride of its buffer */
	PERF_CTRL_CHECK,	/* client: verify iterations first..first+n-1 */
	PERF_CTRL_FILL,		/* client: fill slots for first..first+n-1 */
	PERF_CTRL_DONE,		/* client: end of test, val = atomic final value */
	PERF_CTRL_REPLY,	/* server: errors, msgs */
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

/* A physically contiguous buffer, DMA mapped, used with local_dma_lkey. */
struct perf_buf {
	void *va;
	u64 dma;
	u32 len;
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
	bool server;
	bool qp_created;

	/* the test */
	enum perf_op op;
	u32 size;
	u32 depth;
	u32 count;
	u32 nsge;
	bool verify;
	bool inl;
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
	u32 rx_nsge;

	/* server: the remotely accessible buffer, fast-registered */
	struct page **pages;
	u32 npages;
	void *region;
	struct sg_table sgt;
	bool sgt_mapped;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;
	u32 rslots;
	u32 rstride;

	/* client: the server's buffer */
	u64 raddr;
	u32 rkey;

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

static DEFINE_MUTEX(perf_lock);		/* servers, conns, results */
static DEFINE_MUTEX(perf_client_lock);	/* one client run at a time */
static struct perf_server *perf_servers[8];
static LIST_HEAD(perf_conns);
static struct workqueue_struct *perf_wq;
static struct dentry *perf_dir;
static char perf_results[PERF_NR_RESULTS][PERF_LINE_LEN];
static unsigned int perf_nresults;

static void perf_result_add(const char *line)
{
	mutex_lock(&perf_lock);
	strscpy(perf_results[perf_nresults % PERF_NR_RESULTS], line, PERF_LINE_LEN);
	perf_nresults++;
	mutex_unlock(&perf_lock);
	pr_info("%s\n", line);
}

/* ------------------------------------------------------------ pattern */

static u32 perf_word(u32 iter, u32 w)
{
	u32 x = iter * 0x9e3779b1U ^ (w + 1) * 0x85ebca6bU;

	x ^= x >> 13;
	x *= 0xc2b2ae35U;
	x ^= x >> 16;
	return x;
}

static u8 perf_byte(u32 iter, u32 pos)
{
	return perf_word(iter, pos >> 2) >> ((pos & 3) * 8);
}

/* Fill dst with message bytes off..off+len-1 of iteration iter. */
static void perf_fill(u8 *dst, u32 iter, u32 off, u32 len)
{
	u32 k = 0;

	for (; k < len && ((off + k) & 3); k++)
		dst[k] = perf_byte(iter, off + k);
	for (; k + 4 <= len; k += 4)
		put_unaligned_le32(perf_word(iter, (off + k) >> 2), dst + k);
	for (; k < len; k++)
		dst[k] = perf_byte(iter, off + k);
}

/* Bytes of src that differ from the pattern; *bad = first bad offset. */
static u32 perf_check(const u8 *src, u32 iter, u32 off, u32 len, u32 *bad)
{
	u32 k = 0, errs = 0, j;

	while (k < len && ((off + k) & 3)) {
		if (src[k] != perf_byte(iter, off + k) && !errs++)
			*bad = off + k;
		k++;
	}
	for (; k + 4 <= len; k += 4) {
		if (get_unaligned_le32(src + k) == perf_word(iter, (off + k) >> 2))
			continue;
		for (j = k; j < k + 4; j++)
			if (src[j] != perf_byte(iter, off + j) && !errs++)
				*bad = off + j;
	}
	for (; k < len; k++)
		if (src[k] != perf_byte(iter, off + k) && !errs++)
			*bad = off + k;
	return errs;
}

/*
 * Scatter-gather layout of a buffer of len bytes split into up to nsge
 * pieces: piece j holds message bytes [j * piece, ...) and sits at the
 * mirrored place in the buffer, so the pieces are in reverse order and a
 * device that ignored the SGE list would deliver scrambled data.
 */
static u32 perf_piece(u32 len, u32 nsge)
{
	return max_t(u32, ALIGN(DIV_ROUND_UP(len, nsge), 4), 4);
}

static u32 perf_npieces(u32 len, u32 nsge)
{
	return len ? DIV_ROUND_UP(len, perf_piece(len, nsge)) : 0;
}

/* Piece j: its message offset and length; returns its buffer offset. */
static u32 perf_layout(u32 len, u32 nsge, u32 j, u32 *moff, u32 *plen)
{
	u32 piece = perf_piece(len, nsge), end;

	*moff = j * piece;
	end = min(len, *moff + piece);
	*plen = end - *moff;
	return len - end;
}

/*
 * SGEs for a buffer; base is its DMA address, or for IB_SEND_INLINE its
 * kernel virtual address (the provider copies the data at post time).
 */
static int perf_sges(struct ib_sge *sge, u64 base, u32 len, u32 nsge, u32 lkey)
{
	u32 j, moff, plen, n = perf_npieces(len, nsge);

	for (j = 0; j < n; j++) {
		sge[j].addr = base + perf_layout(len, nsge, j, &moff, &plen);
		sge[j].length = plen;
		sge[j].lkey = lkey;
	}
	return n;
}

static void perf_fill_msg(u8 *buf, u32 len, u32 nsge, u32 iter)
{
	u32 j, moff, plen, boff;

	for (j = 0; j < perf_npieces(len, nsge); j++) {
		boff = perf_layout(len, nsge, j, &moff, &plen);
		perf_fill(buf + boff, iter, moff, plen);
	}
}

/* Check the first msg_len message bytes of a buffer laid out for len. */
static u32 perf_check_msg(const u8 *buf, u32 len, u32 nsge, u32 msg_len,
			  u32 iter, u32 *bad)
{
	u32 j, moff, plen, boff, errs = 0;

	for (j = 0; j < perf_npieces(len, nsge); j++) {
		boff = perf_layout(len, nsge, j, &moff, &plen);
		if (moff >= msg_len)
			break;
		plen = min(plen, msg_len - moff);
		errs += perf_check(buf + boff, iter, moff, plen, bad);
	}
	return errs;
}

/* Gather the first n message bytes of a buffer laid out for len. */
static void perf_copy_msg(void *dst, const u8 *buf, u32 len, u32 nsge, u32 n)
{
	u32 j, moff, plen, boff;

	for (j = 0; j < perf_npieces(len, nsge); j++) {
		boff = perf_layout(len, nsge, j, &moff, &plen);
		if (moff >= n)
			break;
		memcpy(dst + moff, buf + boff, min(plen, n - moff));
	}
}

/* ------------------------------------------------------------ buffers */

static int perf_buf_alloc(struct perf_conn *c, struct perf_buf *b, u32 len)
{
	b->len = len;
	b->va = kzalloc(len, GFP_KERNEL | __GFP_NOWARN);
	if (!b->va)
		return -ENOMEM;
	b->dma = ib_dma_map_single(c->dev, b->va, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, b->dma)) {
		kfree(b->va);
		b->va = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void perf_buf_free(struct perf_conn *c, struct perf_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(c->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	kfree(b->va);
	b->va = NULL;
}

static void perf_buf_for_cpu(struct perf_conn *c, struct perf_buf *b)
{
	ib_dma_sync_single_for_cpu(c->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
}

static void perf_buf_for_dev(struct perf_conn *c, struct perf_buf *b)
{
	ib_dma_sync_single_for_device(c->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
}

static void perf_region_for_cpu(struct perf_conn *c)
{
	if (!ib_uses_virt_dma(c->dev))
		dma_sync_sgtable_for_cpu(c->dev->dma_device, &c->sgt,
					 DMA_BIDIRECTIONAL);
}

static void perf_region_for_dev(struct perf_conn *c)
{
	if (!ib_uses_virt_dma(c->dev))
		dma_sync_sgtable_for_device(c->dev->dma_device, &c->sgt,
					    DMA_BIDIRECTIONAL);
}

/* The server's buffer: rslots slots of rstride bytes, in single pages. */
static int perf_region_alloc(struct perf_conn *c)
{
	struct ib_device_attr *attr = &c->dev->attrs;
	u32 maxpg = min(attr->max_fast_reg_page_list_len, PERF_MAX_REGION_PAGES);
	u32 i, len;
	int ret;

	c->rstride = ALIGN(perf_op_is_atomic(c->op) ? 8 : c->size, 64);
	c->rslots = min_t(u64, c->depth, (u64)maxpg * PAGE_SIZE / c->rstride);
	if (!c->rslots) {
		pr_err("%s: size %u needs more than the device's %u fast-reg pages\n",
		       dev_name(&c->dev->dev), c->size, maxpg);
		return -EINVAL;
	}
	len = c->rslots * c->rstride;
	c->npages = DIV_ROUND_UP(len, PAGE_SIZE);
	c->pages = kcalloc(c->npages, sizeof(*c->pages), GFP_KERNEL);
	if (!c->pages)
		return -ENOMEM;
	for (i = 0; i < c->npages; i++) {
		c->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!c->pages[i])
			return -ENOMEM;
	}
	c->region = vmap(c->pages, c->npages, VM_MAP, PAGE_KERNEL);
	if (!c->region)
		return -ENOMEM;
	if (perf_op_is_atomic(c->op))
		*(u64 *)c->region = PERF_ATOMIC_INIT;

	ret = sg_alloc_table_from_pages(&c->sgt, c->pages, c->npages, 0,
					(unsigned long)c->npages * PAGE_SIZE,
					GFP_KERNEL);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(c->dev, &c->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		return ret;
	c->sgt_mapped = true;

	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, c->npages);
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		return ret;
	}
	ret = ib_map_mr_sg(c->mr, c->sgt.sgl, c->sgt.nents, NULL, PAGE_SIZE);
	if (ret != c->sgt.nents)
		return ret < 0 ? ret : -EINVAL;
	return 0;
}

static void perf_region_free(struct perf_conn *c)
{
	u32 i;

	if (c->mr)
		ib_dereg_mr(c->mr);
	c->mr = NULL;
	if (c->sgt_mapped)
		ib_dma_unmap_sgtable_attrs(c->dev, &c->sgt, DMA_BIDIRECTIONAL, 0);
	c->sgt_mapped = false;
	sg_free_table(&c->sgt);
	if (c->region)
		vunmap(c->region);
	c->region = NULL;
	if (c->pages) {
		for (i = 0; i < c->npages; i++)
			if (c->pages[i])
				__free_page(c->pages[i]);
		kfree(c->pages);
	}
	c->pages = NULL;
}

/* ------------------------------------------------------------ completions */

static void perf_wc_error(struct perf_conn *c, struct ib_wc *wc, const char *what)
{
	/* flushes follow a real error or the teardown */
	if (wc->status == IB_WC_WR_FLUSH_ERR &&
	    (c->server || c->wc_err || test_bit(0, &c->releasing)))
		return;
	if (!c->wc_err) {
		c->wc_status = wc->status;
		c->wc_opcode = wc->opcode;
		pr_err("%s completion error on %s: %s (%d), vendor_err %u\n",
		       what, dev_name(&c->dev->dev),
		       ib_wc_status_msg(wc->status), wc->status, wc->vendor_err);
	}
	c->wc_err = -EIO;
	wake_up(&c->wq);
}

static void perf_send_done(struct perf_conn *c)
{
	if (atomic_dec_and_test(&c->sq_pending))
		wake_up(&c->wq);
}

static void perf_conn_release(struct perf_conn *c);

static void perf_ctrl_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_conn *c = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS)
		perf_wc_error(c, wc, "control send");
	perf_send_done(c);
	/* a UD server has no disconnect: its last REPLY ends the connection */
	if (c->release_after_tx)
		perf_conn_release(c);
}

static void perf_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_conn *c = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS)
		perf_wc_error(c, wc, "REG_MR");
	perf_send_done(c);
}

static void perf_slot_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_slot *s = container_of(wc->wr_cqe, struct perf_slot, cqe);
	struct perf_conn *c = s->c;
	u64 d;

	perf_send_done(c);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status == IB_WC_WR_FLUSH_ERR)
			atomic_inc(&c->flushed);
		perf_wc_error(c, wc, perf_op_names[c->op]);
		return;
	}
	d = ktime_get_ns() - s->t0;
	c->lat[s->iter] = min_t(u64, d, U32_MAX);
	atomic_inc(&c->done);
	wake_up(&c->wq);
}

static int perf_post_rx(struct perf_conn *c, struct perf_rx *r)
{
	struct ib_sge sge[PERF_MAX_SGE];
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};

	perf_buf_for_dev(c, &r->buf);
	wr.wr_cqe = &r->cqe;
	wr.sg_list = sge;
	wr.num_sge = perf_sges(sge, r->buf.dma, c->rx_len, c->rx_nsge,
			       c->pd->local_dma_lkey);
	if (c->srq)
		return ib_post_srq_recv(c->srq, &wr, &bad);
	return ib_post_recv(c->id->qp, &wr, &bad);
}

static int perf_send_ctrl(struct perf_conn *c, struct perf_ctrl *m)
{
	struct perf_buf *b = &c->ctrl_tx[c->ctrl_tx_next++ & 1];
	const struct ib_send_wr *bad;
	struct ib_ud_wr uwr = {};
	struct ib_send_wr *wr = &uwr.wr;
	struct ib_sge sge;
	int ret;

	if (c->ud) {
		if (!c->ah)
			return -ENOTCONN;
		uwr.ah = c->ah;
		uwr.remote_qpn = c->remote_qpn;
		uwr.remote_qkey = c->remote_qkey;
	}
	m->magic = cpu_to_be32(PERF_MAGIC);
	memcpy(b->va, m, sizeof(*m));
	perf_buf_for_dev(c, b);
	sge.addr = b->dma;
	sge.length = sizeof(*m);
	sge.lkey = c->pd->local_dma_lkey;
	wr->wr_cqe = &c->ctrl_tx_cqe;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	atomic_inc(&c->sq_pending);
	ret = ib_post_send(c->id->qp, wr, &bad);
	if (ret)
		atomic_dec(&c->sq_pending);
	return ret;
}

/* Client: a control message from the server (INFO or REPLY). */
static void perf_client_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_rx *r = container_of(wc->wr_cqe, struct perf_rx, cqe);
	struct perf_conn *c = r->c;

	if (wc->status != IB_WC_SUCCESS) {
		perf_wc_error(c, wc, "receive");
		return;
	}
	perf_buf_for_cpu(c, &r->buf);
	if (wc->byte_len != c->grh + sizeof(struct perf_ctrl) ||
	    be32_to_cpup(r->buf.va + c->grh) != PERF_MAGIC) {
		pr_err("client: unexpected %u-byte message from the server\n",
		       wc->byte_len);
		c->wc_err = -EPROTO;
	} else {
		memcpy(&c->ctrl_msg, r->buf.va + c->grh, sizeof(c->ctrl_msg));
		c->ctrl_got = true;
	}
	if (perf_post_rx(c, r))
		c->wc_err = -EIO;
	wake_up(&c->wq);
}

/* ------------------------------------------------------------ server */

static void perf_server_bad(struct perf_conn *c, u32 errs, u32 iter, u32 off)
{
	if (!c->errors) {
		c->first_bad_iter = iter;
		c->first_bad_off = off;
	}
	c->errors += errs;
}

static void perf_server_report(struct perf_conn *c)
{
	char line[PERF_LINE_LEN];

	if (c->reported)
		return;
	c->reported = true;
	snprintf(line, sizeof(line),
		 "server peer=%pISpc dev=%s qp=%s op=%s size=%u count=%u sge=%u verify=%u srq=%u srq_limit=%u srq_events=%u srq_event_msgs=%u msgs=%u errors=%llu%s status=%s",
		 &c->id->route.addr.dst_addr, dev_name(&c->dev->dev),
		 c->ud ? "ud" : "rc", perf_op_names[c->op], c->size, c->count,
		 c->nsge, c->verify, c->use_srq, c->srq_limit,
		 atomic_read(&c->srq_events), c->srq_event_rx,
		 c->rx_data, c->errors,
		 c->errors ? " (first bad message below)" : "",
		 c->errors || c->wc_err ? "fail" : "ok");
	perf_result_add(line);
	if (c->errors)
		pr_err("server: first bad byte: iteration %u offset %u\n",
		       c->first_bad_iter, c->first_bad_off);
}

static void perf_server_ctrl(struct perf_conn *c, struct perf_ctrl *m)
{
	struct perf_ctrl r = { .type = cpu_to_be32(PERF_CTRL_REPLY) };
	u32 first = be32_to_cpu(m->first), n = be32_to_cpu(m->n);
	u32 k, errs = 0, bad = 0, slot;
	u64 val;

	switch (be32_to_cpu(m->type)) {
	case PERF_CTRL_CHECK:
		/* UD SEND rounds: how many arrived (and were checked) so far */
		if (perf_op_is_send(c->op)) {
			r.errors = cpu_to_be32(min_t(u64, c->errors, U32_MAX));
			r.msgs = cpu_to_be32(c->rx_data);
			break;
		}
		perf_region_for_cpu(c);
		for (k = first; k < first + n; k++) {
			slot = k % c->rslots;
			errs = perf_check(c->region + slot * c->rstride, k, 0,
					  c->size, &bad);
			if (errs)
				perf_server_bad(c, errs, k, bad);
			r.errors = cpu_to_be32(be32_to_cpu(r.errors) + errs);
		}
		c->rx_data += n;
		break;
	case PERF_CTRL_FILL:
		for (k = first; k < first + n; k++) {
			slot = k % c->rslots;
			perf_fill(c->region + slot * c->rstride, k, 0, c->size);
		}
		perf_region_for_dev(c);
		break;
	case PERF_CTRL_DONE:
		if (perf_op_is_atomic(c->op) && c->verify) {
			perf_region_for_cpu(c);
			val = *(u64 *)c->region;
			if (val != be64_to_cpu(m->val)) {
				pr_err("server: atomic target is %#llx, expected %#llx\n",
				       val, be64_to_cpu(m->val));
				perf_server_bad(c, 8, c->count, 0);
			}
		}
		/* the test is over: report now, not at the disconnect */
		perf_server_report(c);
		r.errors = cpu_to_be32(min_t(u64, c->errors, U32_MAX));
		r.msgs = cpu_to_be32(c->rx_data);
		c->release_after_tx = c->ud;
		break;
	default:
		pr_err("server: unknown control message %u\n", be32_to_cpu(m->type));
		c->wc_err = -EPROTO;
		return;
	}
	if (perf_send_ctrl(c, &r))
		c->wc_err = -EIO;
}

/* UD server: replies go where the first control message came from. */
static int perf_server_ud_peer(struct perf_conn *c, struct ib_wc *wc,
			       struct perf_rx *r)
{
	struct ib_ah *ah;

	if (c->ah)
		return 0;
	ah = ib_create_ah_from_wc(c->pd, wc, r->buf.va, c->id->port_num);
	if (IS_ERR(ah)) {
		pr_err("server: no address handle for the UD client: %ld\n",
		       PTR_ERR(ah));
		return PTR_ERR(ah);
	}
	c->ah = ah;
	c->remote_qpn = wc->src_qp;
	c->remote_qkey = RDMA_UDP_QKEY;
	return 0;
}

/*
 * Server receive: while a SEND test runs, the first count messages are
 * data; WRITE_WITH_IMM arrives as RECV_RDMA_WITH_IMM; everything else is a
 * control message.  The RQ is FIFO, so the order is the client's order.
 * UD buffers start with the GRH (c->grh bytes).  With an SRQ a data
 * message's buffer is not reposted: the SRQ drains towards its limit.
 */
static void perf_server_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_rx *r = container_of(wc->wr_cqe, struct perf_rx, cqe);
	struct perf_conn *c = r->c;
	u32 errs, bad = 0, iter, len;
	bool data = false;
	struct perf_ctrl m;
	void *buf;

	if (wc->status != IB_WC_SUCCESS) {
		perf_wc_error(c, wc, "server receive");
		return;
	}
	perf_buf_for_cpu(c, &r->buf);
	buf = r->buf.va + c->grh;
	len = wc->byte_len >= c->grh ? wc->byte_len - c->grh : 0;
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		iter = be32_to_cpu(wc->ex.imm_data);
		if (c->op != PERF_WRITE_IMM || len != c->size) {
			pr_err("server: unexpected %u-byte WRITE_WITH_IMM %u\n",
			       len, iter);
			perf_server_bad(c, 1, iter, 0);
		} else if (iter != c->rx_imm) {
			pr_err("server: WRITE_WITH_IMM immediate %u, expected %u\n",
			       iter, c->rx_imm);
			perf_server_bad(c, 4, c->rx_imm, 0);
		}
		c->rx_imm++;
		/* with verify, CHECK counts the iterations */
		if (!c->verify)
			c->rx_data++;
	} else if (perf_op_is_send(c->op) && c->rx_data < c->count &&
		   !(c->ud && len == sizeof(m) &&
		     be32_to_cpup(buf) == PERF_MAGIC && c->size != sizeof(m))) {
		/*
		 * A lost UD message lets a CHECK arrive while data is still
		 * expected; it is told apart by its length and magic.
		 */
		data = true;
		iter = c->rx_data++;
		if (len != c->size) {
			pr_err("server: message %u is %u bytes, expected %u\n",
			       iter, len, c->size);
			perf_server_bad(c, abs((int)len - (int)c->size) + 1,
					iter, len);
		}
		if (c->op == PERF_SEND_IMM &&
		    (!(wc->wc_flags & IB_WC_WITH_IMM) ||
		     be32_to_cpu(wc->ex.imm_data) != iter)) {
			pr_err("server: message %u: immediate missing or wrong\n", iter);
			perf_server_bad(c, 4, iter, 0);
		}
		if (c->op == PERF_SEND && (wc->wc_flags & IB_WC_WITH_IMM))
			perf_server_bad(c, 4, iter, 0);
		if (c->verify) {
			errs = perf_check_msg(buf, c->rx_len - c->grh, c->rx_nsge,
					      min(len, c->size), iter, &bad);
			if (errs)
				perf_server_bad(c, errs, iter, bad);
		}
	} else if (len == sizeof(m)) {
		perf_copy_msg(&m, buf, c->rx_len - c->grh, c->rx_nsge, sizeof(m));
		if (be32_to_cpu(m.magic) != PERF_MAGIC)
			c->wc_err = -EPROTO;
		else if (c->ud && perf_server_ud_peer(c, wc, r))
			c->wc_err = -EHOSTUNREACH;
		else
			perf_server_ctrl(c, &m);
	} else {
		pr_err("server: unexpected %u-byte message\n", len);
		c->wc_err = -EPROTO;
	}
	if (data && c->use_srq)
		return;
	if (perf_post_rx(c, r))
		c->wc_err = -EIO;
}

/* ------------------------------------------------------------ connections */

/*
 * Let every posted WR complete (flushed) so that no completion handler runs
 * on a buffer about to be freed.
 */
static void perf_drain(struct perf_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (c->drained || !c->qp_created)
		return;
	c->drained = true;
	if (!c->ud) {
		ib_drain_qp(c->id->qp);
		return;
	}
	/*
	 * ib_drain_sq() posts an RDMA WRITE, which a UD QP refuses: drain the
	 * RQ the generic way (no RQ of our own with an SRQ), then wait for
	 * the sends the move to ERR flushed.
	 */
	if (c->srq)
		ib_modify_qp(c->id->qp, &attr, IB_QP_STATE);
	else
		ib_drain_rq(c->id->qp);
	if (!wait_event_timeout(c->wq, !atomic_read(&c->sq_pending), PERF_TIMEOUT))
		pr_err("%s: %d UD sends never completed\n",
		       dev_name(&c->dev->dev), atomic_read(&c->sq_pending));
}

static void perf_conn_free(struct perf_conn *c)
{
	u32 i;

	if (c->qp_created) {
		perf_drain(c);
		rdma_destroy_qp(c->id);
		c->qp_created = false;
	}
	/* the SRQ's buffers are still posted: the SRQ goes before them */
	if (c->srq)
		ib_destroy_srq(c->srq);
	c->srq = NULL;
	if (c->ah)
		rdma_destroy_ah(c->ah, RDMA_DESTROY_AH_SLEEPABLE);
	c->ah = NULL;
	if (c->slots)
		for (i = 0; i < c->nslots; i++)
			perf_buf_free(c, &c->slots[i].buf);
	kfree(c->slots);
	if (c->rx)
		for (i = 0; i < c->nrx; i++)
			perf_buf_free(c, &c->rx[i].buf);
	kfree(c->rx);
	perf_buf_free(c, &c->ctrl_tx[0]);
	perf_buf_free(c, &c->ctrl_tx[1]);
	perf_region_free(c);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	kvfree(c->lat);
	c->slots = NULL;
	c->rx = NULL;
	c->cq = NULL;
	c->pd = NULL;
	c->lat = NULL;
}

/*
 * IB_EVENT_SRQ_LIMIT_REACHED: fewer than srq_limit receives are left; the
 * limit is now disarmed, so it must fire once per run.  Any context.
 */
static void perf_srq_event(struct ib_event *ev, void *ctx)
{
	struct perf_conn *c = ctx;

	if (ev->event != IB_EVENT_SRQ_LIMIT_REACHED) {
		pr_err("%s: SRQ event %s\n", dev_name(&c->dev->dev),
		       ib_event_msg(ev->event));
		return;
	}
	if (atomic_inc_return(&c->srq_events) == 1)
		c->srq_event_rx = READ_ONCE(c->rx_data);
}

/* PD, CQ, QP, buffers and posted receives for an id bound to a device. */
static int perf_conn_setup(struct perf_conn *c)
{
	struct ib_device_attr *attr;
	struct ib_qp_init_attr qpa = {};
	u32 i, sq, rq;
	int ret;

	c->dev = c->id->device;
	attr = &c->dev->attrs;
	if (c->nsge > attr->max_send_sge || c->nsge > attr->max_recv_sge) {
		pr_err("%s: sge=%u exceeds the device's %d/%d\n", dev_name(&c->dev->dev),
		       c->nsge, attr->max_send_sge, attr->max_recv_sge);
		return -EINVAL;
	}
	if (perf_op_is_atomic(c->op) && attr->atomic_cap == IB_ATOMIC_NONE) {
		pr_err("%s: no atomic operations\n", dev_name(&c->dev->dev));
		return -EOPNOTSUPP;
	}

	c->grh = c->ud ? PERF_GRH_LEN : 0;
	c->nrx = PERF_CTRL_RX;
	c->rx_len = sizeof(struct perf_ctrl);
	c->rx_nsge = 1;
	sq = c->depth + 4;
	if (c->server) {
		sq = 8;
		if (perf_op_is_send(c->op) || c->op == PERF_WRITE_IMM)
			c->nrx = min_t(u32, 2 * c->depth + PERF_CTRL_RX,
				       attr->max_qp_wr - 1);
		if (perf_op_is_send(c->op)) {
			c->rx_len = max_t(u32, c->size, sizeof(struct perf_ctrl));
			c->rx_nsge = c->nsge;
		}
		/*
		 * fault=short: one byte less than a SEND, still room for a
		 * control message (the client checked the size).
		 */
		if (c->fault == PERF_FAULT_SHORT &&
		    c->size > sizeof(struct perf_ctrl))
			c->rx_len = c->size - 1;
	}
	c->rx_len += c->grh;
	rq = c->nrx;
	/*
	 * ib_drain_rq() posts one more receive after the QP went to ERR, and
	 * every buffer is posted then: the RQ needs room for it (a device
	 * that rounds queue sizes up hides a full RQ; ABI 2.0 rnic does not,
	 * and the drain failed with -ENOMEM and a WARN when the last buffer
	 * had been reposted).
	 */
	if (sq > attr->max_qp_wr || rq + 1 > attr->max_qp_wr) {
		pr_err("%s: depth %u exceeds the device's %d work requests\n",
		       dev_name(&c->dev->dev), c->depth, attr->max_qp_wr);
		return -EINVAL;
	}
	if (c->use_srq) {
		/* a buffer per data message, plus the control messages' */
		c->nrx = c->count + PERF_CTRL_RX;
		if (!perf_op_is_send(c->op) || c->nrx > attr->max_srq_wr ||
		    !c->srq_limit || c->srq_limit >= c->nrx) {
			pr_err("%s: srq needs a send op, count + %u <= %d and 0 < srq_limit < that\n",
			       dev_name(&c->dev->dev), PERF_CTRL_RX,
			       attr->max_srq_wr);
			return -EINVAL;
		}
		rq = c->nrx;
	}

	c->pd = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	if (c->use_srq) {
		struct ib_srq_init_attr sa = {
			.event_handler = perf_srq_event,
			.srq_context = c,
			.attr = { .max_wr = c->nrx, .max_sge = c->rx_nsge },
			.srq_type = IB_SRQT_BASIC,
		};

		c->srq = ib_create_srq(c->pd, &sa);
		if (IS_ERR(c->srq)) {
			ret = PTR_ERR(c->srq);
			c->srq = NULL;
			pr_err("%s: ib_create_srq: %d\n", dev_name(&c->dev->dev), ret);
			return ret;
		}
	}
	c->cq = ib_alloc_cq(c->dev, c, sq + rq + 4, 0,
			    c->server ? IB_POLL_WORKQUEUE : IB_POLL_SOFTIRQ);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}

	qpa.event_handler = NULL;
	qpa.send_cq = c->cq;
	qpa.recv_cq = c->cq;
	qpa.qp_type = c->ud ? IB_QPT_UD : IB_QPT_RC;
	qpa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qpa.srq = c->srq;
	qpa.cap.max_send_wr = sq;
	qpa.cap.max_recv_wr = c->srq ? 0 : rq + 1;
	qpa.cap.max_send_sge = c->server ? 1 : c->nsge;
	qpa.cap.max_recv_sge = c->srq ? 0 : c->rx_nsge;
	if (c->inl)
		qpa.cap.max_inline_data = min(c->size, PERF_INLINE_MAX);
	ret = rdma_create_qp(c->id, c->pd, &qpa);
	if (ret) {
		pr_err("%s: rdma_create_qp: %d\n", dev_name(&c->dev->dev), ret);
		return ret;
	}
	c->qp_created = true;
	if (c->inl && qpa.cap.max_inline_data < c->size) {
		pr_err("%s: inline %u bytes not supported (max %u)\n",
		       dev_name(&c->dev->dev), c->size, qpa.cap.max_inline_data);
		return -EINVAL;
	}

	for (i = 0; i < 2; i++) {
		ret = perf_buf_alloc(c, &c->ctrl_tx[i], sizeof(struct perf_ctrl));
		if (ret)
			return ret;
	}
	c->ctrl_tx_cqe.done = perf_ctrl_tx_done;

	c->rx = kcalloc(c->nrx, sizeof(*c->rx), GFP_KERNEL);
	if (!c->rx)
		return -ENOMEM;
	for (i = 0; i < c->nrx; i++) {
		c->rx[i].c = c;
		c->rx[i].cqe.done = c->server ? perf_server_rx_done : perf_client_rx_done;
		ret = perf_buf_alloc(c, &c->rx[i].buf, c->rx_len);
		if (ret)
			return ret;
		/* fault=norecv: the client's SENDs must meet an empty RQ */
		if (c->server && c->fault == PERF_FAULT_NORECV)
			continue;
		ret = perf_post_rx(c, &c->rx[i]);
		if (ret)
			return ret;
	}

	if (c->srq) {
		struct ib_srq_attr sa = { .srq_limit = c->srq_limit };

		/* armed once every buffer is posted */
		ret = ib_modify_srq(c->srq, &sa, IB_SRQ_LIMIT);
		if (ret)
			return ret;
	}
	if (c->server) {
		c->reg_cqe.done = perf_reg_done;
		if (!perf_op_is_send(c->op))
			return perf_region_alloc(c);
		return 0;
	}

	c->nslots = c->depth;
	c->slots = kcalloc(c->nslots, sizeof(*c->slots), GFP_KERNEL);
	if (!c->slots)
		return -ENOMEM;
	for (i = 0; i < c->nslots; i++) {
		c->slots[i].c = c;
		c->slots[i].cqe.done = perf_slot_done;
		ret = perf_buf_alloc(c, &c->slots[i].buf,
				     perf_op_is_atomic(c->op) ? 8 : c->size);
		if (ret)
			return ret;
	}
	c->lat = kvcalloc(c->count, sizeof(*c->lat), GFP_KERNEL);
	if (!c->lat)
		return -ENOMEM;
	return 0;
}

static void perf_release_work(struct work_struct *w)
{
	struct perf_conn *c = container_of(w, struct perf_conn, release_work);

	perf_server_report(c);
	mutex_lock(&perf_lock);
	list_del(&c->list);
	mutex_unlock(&perf_lock);
	/* UD has no connection to end */
	if (!c->ud)
		rdma_disconnect(c->id);
	perf_conn_free(c);
	rdma_destroy_id(c->id);
	kfree(c);
}

/* Server, after the connection is up: register the buffer, send INFO. */
static int perf_server_established(struct perf_conn *c)
{
	struct perf_ctrl m = { .type = cpu_to_be32(PERF_CTRL_INFO) };
	struct ib_reg_wr reg = {};
	const struct ib_send_wr *bad;
	int ret;

	if (c->mr) {
		perf_region_for_dev(c);
		reg.wr.opcode = IB_WR_REG_MR;
		reg.wr.wr_cqe = &c->reg_cqe;
		reg.wr.send_flags = IB_SEND_SIGNALED;
		reg.mr = c->mr;
		reg.key = c->mr->rkey;
		reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			     IB_ACCESS_REMOTE_WRITE;
		if (perf_op_is_atomic(c->op))
			reg.access |= IB_ACCESS_REMOTE_ATOMIC;
		atomic_inc(&c->sq_pending);
		ret = ib_post_send(c->id->qp, &reg.wr, &bad);
		if (ret) {
			atomic_dec(&c->sq_pending);
			return ret;
		}
		m.addr = cpu_to_be64(c->mr->iova);
		m.rkey = cpu_to_be32(c->mr->rkey);
		m.nslots = cpu_to_be32(c->rslots);
		m.stride = cpu_to_be32(c->rstride);
	}
	return perf_send_ctrl(c, &m);
}

static int perf_server_connect(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	bool ud = id->qp_type == IB_QPT_UD;
	const struct perf_req *req = ud ? ev->param.ud.private_data :
					  ev->param.conn.private_data;
	u8 req_len = ud ? ev->param.ud.private_data_len :
			  ev->param.conn.private_data_len;
	struct rdma_conn_param cp = {};
	struct perf_conn *c;
	int ret;

	if (req_len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != PERF_MAGIC || req->op >= PERF_NR_OPS) {
		pr_err("server: connect request without a valid test, rejected\n");
		rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
		/* non-zero: rdma_cm destroys the new id */
		return -ECONNREFUSED;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->server = true;
	c->id = id;
	c->op = req->op;
	c->nsge = clamp_t(u32, req->nsge, 1, PERF_MAX_SGE);
	c->verify = req->verify;
	c->size = clamp_t(u32, be32_to_cpu(req->size), 1, PERF_MAX_SIZE);
	c->depth = clamp_t(u32, be32_to_cpu(req->depth), 1, PERF_MAX_DEPTH);
	c->count = be32_to_cpu(req->count);
	c->fault = req->fault < PERF_NR_FAULTS ? req->fault : PERF_FAULT_NONE;
	c->ud = ud;
	c->use_srq = req->flags & PERF_REQ_F_SRQ;
	c->srq_limit = be32_to_cpu(req->srq_limit);
	init_waitqueue_head(&c->wq);
	INIT_WORK(&c->release_work, perf_release_work);
	id->context = c;

	ret = perf_conn_setup(c);
	if (ret)
		goto err;
	if (!ud) {
		cp.responder_resources = min_t(u32, ev->param.conn.initiator_depth,
					       c->dev->attrs.max_qp_rd_atom);
		cp.initiator_depth = min_t(u32, ev->param.conn.responder_resources,
					   c->dev->attrs.max_qp_init_rd_atom);
	}
	cp.retry_count = 7;
	cp.rnr_retry_count = min_t(u8, req->rnr_retry, 7);
	if (!ud) {
		ret = rdma_set_min_rnr_timer(id, PERF_MIN_RNR_TIMER);
		if (ret)
			goto err;
	}
	/* UD: the SIDR reply carries our QPN and rdma_cm's default Q_Key */
	ret = rdma_accept(id, &cp);
	if (ret) {
		pr_err("server: rdma_accept: %d\n", ret);
		goto err;
	}
	mutex_lock(&perf_lock);
	list_add_tail(&c->list, &perf_conns);
	mutex_unlock(&perf_lock);
	return 0;
err:
	perf_conn_free(c);
	kfree(c);
	id->context = NULL;
	/* non-zero: rdma_cm destroys the new id */
	return ret;
}

static void perf_conn_release(struct perf_conn *c)
{
	if (!test_and_set_bit(0, &c->releasing))
		queue_work(perf_wq, &c->release_work);
}

static int perf_listener_handler(struct perf_server *s, struct rdma_cm_id *id,
				 struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	pr_info("server on %pISpc: device removed, %s listener closed\n",
		&s->addr, id == s->ud_id ? "UD" : "RC");
	mutex_lock(&perf_lock);
	if (id == s->ud_id)
		s->ud_id = NULL;
	else
		s->id = NULL;
	mutex_unlock(&perf_lock);
	/* non-zero: rdma_cm destroys the listening id */
	return 1;
}

static int perf_server_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct perf_conn *c = id->context;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST && c && c->listener)
		return perf_listener_handler(id->context, id, ev);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return perf_server_connect(id, ev);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (perf_server_established(c)) {
			pr_err("server: posting REG_MR/INFO failed\n");
			c->wc_err = -EIO;
			rdma_disconnect(id);
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (c && ev->event != RDMA_CM_EVENT_TIMEWAIT_EXIT)
			perf_conn_release(c);
		break;
	default:
		break;
	}
	return 0;
}

/* ------------------------------------------------------------ client */

static int perf_client_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct perf_conn *c = id->context;
	enum perf_cm_state st = c->cm_state;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		st = PERF_CM_ADDR;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		st = PERF_CM_ROUTE;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* UD: the SIDR reply names the server's QP; keep its path */
		if (c->ud && !c->ud_ah_attr_set) {
			rdma_copy_ah_attr(&c->ud_ah_attr, &ev->param.ud.ah_attr);
			c->ud_ah_attr_set = true;
			c->remote_qpn = ev->param.ud.qp_num;
			c->remote_qkey = ev->param.ud.qkey;
		}
		st = PERF_CM_CONNECTED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		st = PERF_CM_DISCONNECTED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		pr_err("client: %s (status %d)\n", rdma_event_msg(ev->event),
		       ev->status);
		c->cm_err = ev->status ? ev->status : -ECONNABORTED;
		st = PERF_CM_ERROR;
		break;
	default:
		return 0;
	}
	c->cm_state = st;
	wake_up(&c->wq);
	return 0;
}

static int perf_wait_cm(struct perf_conn *c, enum perf_cm_state want)
{
	long t;

	t = wait_event_interruptible_timeout(c->wq, c->cm_state == want ||
					     c->cm_state == PERF_CM_ERROR,
					     PERF_TIMEOUT);
	if (t < 0)
		return t;
	if (c->cm_state == PERF_CM_ERROR)
		return c->cm_err < 0 ? c->cm_err : -ECONNREFUSED;
	return t ? 0 : -ETIMEDOUT;
}

/*
 * Once connected, a CM event other than our own disconnect ends the run:
 * the peer disconnected, or the device is being removed (rdma_cm then
 * waits for us to destroy the id, so waiting out PERF_TIMEOUT would hold
 * up the removal that long).
 */
static bool perf_cm_broken(struct perf_conn *c)
{
	return c->cm_state == PERF_CM_DISCONNECTED ||
	       c->cm_state == PERF_CM_ERROR;
}

static int perf_cm_broken_err(struct perf_conn *c)
{
	if (c->cm_state == PERF_CM_DISCONNECTED)
		return -ECONNRESET;
	return c->cm_err < 0 ? c->cm_err : -ECONNABORTED;
}

static int perf_wait_ctrl(struct perf_conn *c, struct perf_ctrl *reply)
{
	long t;

	t = wait_event_interruptible_timeout(c->wq, c->ctrl_got || c->wc_err ||
					     perf_cm_broken(c), PERF_TIMEOUT);
	if (t < 0)
		return t;
	if (c->wc_err)
		return c->wc_err;
	if (!c->ctrl_got && perf_cm_broken(c))
		return perf_cm_broken_err(c);
	if (!t)
		return -ETIMEDOUT;
	*reply = c->ctrl_msg;
	c->ctrl_got = false;
	return 0;
}

static int perf_ctrl_xchg(struct perf_conn *c, u32 type, u32 first, u32 n,
			  u64 val, struct perf_ctrl *reply)
{
	struct perf_ctrl m = {
		.type = cpu_to_be32(type),
		.first = cpu_to_be32(first),
		.n = cpu_to_be32(n),
		.val = cpu_to_be64(val),
	};
	int ret;

	ret = perf_send_ctrl(c, &m);
	if (ret)
		return ret;
	ret = perf_wait_ctrl(c, reply);
	if (ret)
		return ret;
	if (be32_to_cpu(reply->type) != PERF_CTRL_REPLY)
		return -EPROTO;
	return 0;
}

static u64 perf_atomic_arg(u32 iter)
{
	return (u64)perf_word(iter, 0x10000) << 32 | perf_word(iter, 0x10001);
}

static int perf_post(struct perf_conn *c, u32 iter)
{
	struct perf_slot *s = &c->slots[iter % c->nslots];
	struct ib_sge sge[PERF_MAX_SGE];
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr rwr = {};
	struct ib_ud_wr uwr = {};
	struct ib_send_wr *wr = &rwr.wr;
	const struct ib_send_wr *bad;
	u64 raddr = c->raddr + (u64)(iter % c->rslots) * c->rstride;
	u32 rkey = c->rkey;
	u64 cmp, swap;
	int ret;

	/* another variant of the same key index: a key that names nothing */
	if (c->fault == PERF_FAULT_RKEY)
		rkey ^= 0x5a;

	s->iter = iter;
	switch (c->op) {
	case PERF_SEND:
	case PERF_SEND_IMM:
	case PERF_WRITE:
	case PERF_WRITE_IMM:
		if (c->verify) {
			perf_fill_msg(s->buf.va, c->size, c->nsge, iter);
			if (c->corrupt == iter + 1)
				((u8 *)s->buf.va)[c->size / 2] ^= 0x10;
			perf_buf_for_dev(c, &s->buf);
		}
		break;
	case PERF_READ:
		if (c->verify) {
			memset(s->buf.va, 0, c->size);
			perf_buf_for_dev(c, &s->buf);
		}
		break;
	default:
		break;
	}

	if (c->ud) {
		wr = &uwr.wr;
		uwr.ah = c->ah;
		uwr.remote_qpn = c->remote_qpn;
		uwr.remote_qkey = c->remote_qkey;
	}
	switch (c->op) {
	case PERF_SEND:
		wr->opcode = IB_WR_SEND;
		break;
	case PERF_SEND_IMM:
		wr->opcode = IB_WR_SEND_WITH_IMM;
		break;
	case PERF_WRITE:
		wr->opcode = IB_WR_RDMA_WRITE;
		break;
	case PERF_WRITE_IMM:
		wr->opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		break;
	case PERF_READ:
		wr->opcode = IB_WR_RDMA_READ;
		break;
	case PERF_CMP_SWAP:
		wr = &awr.wr;
		wr->opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		s->expect = c->atomic_val;
		cmp = c->atomic_val;
		swap = perf_atomic_arg(iter);
		/* every eighth compare must fail and leave the target alone */
		if ((iter & 7) == 7)
			cmp = ~cmp;
		else
			c->atomic_val = swap;
		awr.compare_add = cmp;
		awr.swap = swap;
		break;
	case PERF_FETCH_ADD:
		wr = &awr.wr;
		wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		s->expect = c->atomic_val;
		awr.compare_add = perf_atomic_arg(iter);
		c->atomic_val += awr.compare_add;
		break;
	default:
		return -EINVAL;
	}
	if (perf_op_is_atomic(c->op)) {
		awr.remote_addr = c->raddr;
		awr.rkey = rkey;
		memset(s->buf.va, 0, 8);
		perf_buf_for_dev(c, &s->buf);
		sge[0].addr = s->buf.dma;
		sge[0].length = 8;
		sge[0].lkey = c->pd->local_dma_lkey;
		wr->num_sge = 1;
	} else {
		rwr.remote_addr = raddr;
		rwr.rkey = rkey;
		wr->num_sge = perf_sges(sge, c->inl ? (uintptr_t)s->buf.va : s->buf.dma,
					c->size, c->nsge, c->pd->local_dma_lkey);
	}
	wr->sg_list = sge;
	wr->wr_cqe = &s->cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	/* perf_command allows inline only for sends and writes */
	if (c->inl)
		wr->send_flags |= IB_SEND_INLINE;
	wr->ex.imm_data = cpu_to_be32(iter);
	s->t0 = ktime_get_ns();
	atomic_inc(&c->sq_pending);
	ret = ib_post_send(c->id->qp, wr, &bad);
	if (ret)
		atomic_dec(&c->sq_pending);
	return ret;
}

/* After iteration iter completed: check what came back to the client. */
static u32 perf_complete(struct perf_conn *c, u32 iter, u32 *bad)
{
	struct perf_slot *s = &c->slots[iter % c->nslots];
	u64 got;

	if (!c->verify)
		return 0;
	if (c->op == PERF_READ) {
		perf_buf_for_cpu(c, &s->buf);
		return perf_check_msg(s->buf.va, c->size, c->nsge, c->size, iter, bad);
	}
	if (perf_op_is_atomic(c->op)) {
		perf_buf_for_cpu(c, &s->buf);
		got = *(u64 *)s->buf.va;
		if (got != s->expect) {
			pr_err("client: %s %u returned %#llx, expected %#llx\n",
			       perf_op_names[c->op], iter, got, s->expect);
			*bad = 0;
			return 8;
		}
	}
	return 0;
}

static int perf_wait_done(struct perf_conn *c, u32 n)
{
	long t;

	t = wait_event_interruptible_timeout(c->wq, atomic_read(&c->done) >= n ||
					     c->wc_err || perf_cm_broken(c),
					     PERF_TIMEOUT);
	if (t < 0)
		return t;
	if (c->wc_err)
		return c->wc_err;
	if (atomic_read(&c->done) < n && perf_cm_broken(c))
		return perf_cm_broken_err(c);
	return t ? 0 : -ETIMEDOUT;
}

static int perf_u32_cmp(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

struct perf_args {
	struct sockaddr_storage addr;
	struct sockaddr_storage src;
	bool has_src;
	enum perf_op op;
	u32 size;
	u32 depth;
	u32 count;
	u32 nsge;
	int tos;
	u32 corrupt;
	bool verify;
	bool inl;
	enum perf_fault fault;
	u32 retry;
	u32 rnr_retry;
	bool ud;
	bool srq;
	u32 srq_limit;
};

static void perf_client_report(struct perf_conn *c, struct perf_args *a, int ret,
			       u64 elapsed_ns, u64 errors, u32 srv_msgs)
{
	char line[PERF_LINE_LEN];
	u64 us = div_u64(elapsed_ns, 1000);
	u32 msg = perf_op_is_atomic(a->op) ? 8 : a->size;
	u64 bytes = (u64)msg * a->count, sum = 0, mbps = 0, rate = 0;
	u32 i, p50 = 0, p99 = 0, avg = 0;

	/* figures only for a run that completed */
	if (ret || !us) {
		bytes = 0;
	} else if (c->lat && a->count) {
		for (i = 0; i < a->count; i++)
			sum += c->lat[i];
		avg = div_u64(sum, a->count);
		sort(c->lat, a->count, sizeof(u32), perf_u32_cmp, NULL);
		p50 = c->lat[a->count / 2];
		p99 = c->lat[min_t(u32, a->count - 1, (u64)a->count * 99 / 100)];
	}
	if (bytes) {
		mbps = div64_u64(bytes * 100, us);
		rate = div64_u64((u64)a->count * 1000000, us);
	}
	snprintf(line, sizeof(line),
		 "client local=%pISpc peer=%pISpc dev=%s qp=%s srq=%u op=%s size=%u depth=%u count=%u sge=%u inline=%u verify=%u fault=%s status=%s error=%d wc_status=%s flushed=%u errors=%llu server_msgs=%u bytes=%llu usecs=%llu MBps=%llu.%02llu msg_rate=%llu lat_avg_us=%u.%u lat_p50_us=%u.%u lat_p99_us=%u.%u",
		 &c->id->route.addr.src_addr, &a->addr,
		 c->dev ? dev_name(&c->dev->dev) : "-",
		 a->ud ? "ud" : "rc", a->srq, perf_op_names[a->op], a->size,
		 a->depth, a->count, a->nsge, a->inl, a->verify, perf_fault_names[a->fault],
		 ret || errors ? "fail" : "ok", ret,
		 perf_wc_name(c->wc_err ? c->wc_status : IB_WC_SUCCESS),
		 atomic_read(&c->flushed), errors,
		 srv_msgs, bytes, us, mbps / 100, mbps % 100, rate,
		 avg / 1000, avg % 1000 / 100, p50 / 1000, p50 % 1000 / 100,
		 p99 / 1000, p99 % 1000 / 100);
	perf_result_add(line);
}

/* fault=flush: move the QP to ERR while the first WRs are in flight. */
static int perf_fault_flush(struct perf_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(c->id->qp, &attr, IB_QP_STATE);
}

static int perf_client_test(struct perf_conn *c, u64 *elapsed, u64 *errors,
			    u32 *srv_msgs)
{
	/* UD: each round ends with a CHECK that counts what arrived */
	bool rounds = c->ud || (c->verify && (c->op == PERF_WRITE ||
					      c->op == PERF_WRITE_IMM ||
					      c->op == PERF_READ));
	u32 posted = 0, completed = 0, win, n, first = 0, bad = 0, errs, k;
	struct perf_ctrl r;
	u64 t0;
	int ret;

	win = rounds ? min(c->depth, c->rslots) : c->depth;
	c->atomic_val = PERF_ATOMIC_INIT;
	t0 = ktime_get_ns();
	while (completed < c->count) {
		if (rounds) {
			first = posted;
			n = min(win, c->count - posted);
			if (c->op == PERF_READ) {
				ret = perf_ctrl_xchg(c, PERF_CTRL_FILL, first, n, 0, &r);
				if (ret)
					return ret;
			}
			for (k = 0; k < n; k++) {
				ret = perf_post(c, posted++);
				if (ret)
					return ret;
			}
		} else {
			while (posted < c->count && posted - completed < win) {
				ret = perf_post(c, posted++);
				if (ret)
					return ret;
			}
		}
		if (c->fault == PERF_FAULT_FLUSH && !completed) {
			ret = perf_fault_flush(c);
			if (ret)
				return ret;
		}
		ret = perf_wait_done(c, rounds ? posted : completed + 1);
		if (ret)
			return ret;
		n = atomic_read(&c->done);
		for (; completed < n; completed++) {
			errs = perf_complete(c, completed, &bad);
			if (errs && !*errors)
				pr_err("client: first bad byte: iteration %u offset %u\n",
				       completed, bad);
			*errors += errs;
		}
		if (rounds && c->op != PERF_READ) {
			ret = perf_ctrl_xchg(c, PERF_CTRL_CHECK, first,
					     posted - first, 0, &r);
			if (ret)
				return ret;
			if (be32_to_cpu(r.errors) && !c->ud)
				pr_err("client: the server found %u bad bytes in iterations %u..%u\n",
				       be32_to_cpu(r.errors), first, posted - 1);
			if (c->ud && be32_to_cpu(r.msgs) != posted) {
				pr_err("client: the server received %u UD messages of %u\n",
				       be32_to_cpu(r.msgs), posted);
				*errors += posted - be32_to_cpu(r.msgs);
				return -EIO;
			}
		}
		if (fatal_signal_pending(current))
			return -EINTR;
	}
	*elapsed = ktime_get_ns() - t0;
	ret = perf_ctrl_xchg(c, PERF_CTRL_DONE, 0, 0, c->atomic_val, &r);
	if (ret)
		return ret;
	/* the server's total: its checks of SEND data, CHECK rounds, atomics */
	if (be32_to_cpu(r.errors)) {
		pr_err("client: the server found %u errors\n", be32_to_cpu(r.errors));
		*errors += be32_to_cpu(r.errors);
	}
	*srv_msgs = be32_to_cpu(r.msgs);
	if (perf_op_is_send(c->op) && *srv_msgs != c->count) {
		pr_err("client: the server received %u messages, sent %u\n",
		       *srv_msgs, c->count);
		*errors += 1;
	}
	return 0;
}

static int perf_client(struct perf_args *a)
{
	struct perf_req req = {
		.magic = cpu_to_be32(PERF_MAGIC),
		.op = a->op,
		.nsge = a->nsge,
		.verify = a->verify,
		.size = cpu_to_be32(a->size),
		.depth = cpu_to_be32(a->depth),
		.count = cpu_to_be32(a->count),
		.fault = a->fault,
		.rnr_retry = a->rnr_retry,
		.flags = (a->ud ? PERF_REQ_F_UD : 0) | (a->srq ? PERF_REQ_F_SRQ : 0),
		.srq_limit = cpu_to_be32(a->srq_limit),
	};
	struct rdma_conn_param cp = {};
	u64 elapsed = 0, errors = 0;
	u32 srv_msgs = 0;
	struct perf_ctrl info;
	struct perf_conn *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->op = a->op;
	c->size = a->size;
	c->depth = a->depth;
	c->count = a->count;
	c->nsge = a->nsge;
	c->verify = a->verify;
	c->inl = a->inl;
	c->corrupt = a->corrupt;
	c->fault = a->fault;
	c->ud = a->ud;
	init_waitqueue_head(&c->wq);

	c->id = rdma_create_id(&init_net, perf_client_cm_handler, c,
			       a->ud ? RDMA_PS_UDP : RDMA_PS_TCP,
			       a->ud ? IB_QPT_UD : IB_QPT_RC);
	if (IS_ERR(c->id)) {
		ret = PTR_ERR(c->id);
		kfree(c);
		return ret;
	}
	if (a->tos >= 0)
		rdma_set_service_type(c->id, a->tos);
	ret = rdma_resolve_addr(c->id, a->has_src ? (struct sockaddr *)&a->src : NULL,
				(struct sockaddr *)&a->addr, PERF_CM_TIMEOUT_MS);
	if (!ret)
		ret = perf_wait_cm(c, PERF_CM_ADDR);
	if (!ret)
		ret = rdma_resolve_route(c->id, PERF_CM_TIMEOUT_MS);
	if (!ret)
		ret = perf_wait_cm(c, PERF_CM_ROUTE);
	if (ret) {
		pr_err("client: resolving %pISpc failed: %d\n", &a->addr, ret);
		goto out;
	}
	ret = perf_conn_setup(c);
	if (ret)
		goto out;
	if (a->ud && a->size > ib_mtu_enum_to_int(c->id->route.path_rec->mtu)) {
		pr_err("client: a UD message is one packet: size %u > path MTU %d\n",
		       a->size, ib_mtu_enum_to_int(c->id->route.path_rec->mtu));
		ret = -EMSGSIZE;
		goto out;
	}

	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	cp.responder_resources = min_t(u32, c->dev->attrs.max_qp_rd_atom, 16);
	cp.initiator_depth = min_t(u32, c->dev->attrs.max_qp_init_rd_atom, 16);
	/* the RNR retry count is the server's to give (struct perf_req) */
	cp.retry_count = a->retry;
	cp.rnr_retry_count = 7;
	ret = c->ud ? 0 : rdma_set_min_rnr_timer(c->id, PERF_MIN_RNR_TIMER);
	if (!ret)
		ret = rdma_connect(c->id, &cp);
	if (!ret)
		ret = perf_wait_cm(c, PERF_CM_CONNECTED);
	if (ret) {
		pr_err("client: connecting to %pISpc failed: %d\n", &a->addr, ret);
		goto out;
	}
	if (c->ud) {
		/* no INFO: UD carries no RDMA, the rounds use depth slots */
		c->ah = rdma_create_ah(c->pd, &c->ud_ah_attr,
				       RDMA_CREATE_AH_SLEEPABLE);
		if (IS_ERR(c->ah)) {
			ret = PTR_ERR(c->ah);
			c->ah = NULL;
			pr_err("client: no address handle for the server: %d\n", ret);
			goto out_disc;
		}
		c->rslots = c->depth;
		goto test;
	}
	ret = perf_wait_ctrl(c, &info);
	if (!ret && be32_to_cpu(info.type) != PERF_CTRL_INFO)
		ret = -EPROTO;
	if (ret) {
		pr_err("client: no INFO from the server: %d\n", ret);
		goto out_disc;
	}
	c->raddr = be64_to_cpu(info.addr);
	c->rkey = be32_to_cpu(info.rkey);
	c->rslots = max(be32_to_cpu(info.nslots), 1U);
	c->rstride = be32_to_cpu(info.stride);
test:
	ret = perf_client_test(c, &elapsed, &errors, &srv_msgs);
	if (ret && c->wc_err && c->wc_status != IB_WC_SUCCESS)
		pr_err("client: failed with %s\n", ib_wc_status_msg(c->wc_status));
out_disc:
	/* a failed run: let every WR in flight complete before the report */
	if (ret)
		perf_drain(c);
	set_bit(0, &c->releasing);
	/* UD has no connection to end */
	if (!c->ud)
		rdma_disconnect(c->id);
out:
	perf_client_report(c, a, ret, elapsed, errors, srv_msgs);
	perf_conn_free(c);
	rdma_destroy_id(c->id);
	/* after the id: no handler can set it any more */
	if (c->ud_ah_attr_set)
		rdma_destroy_ah_attr(&c->ud_ah_attr);
	kfree(c);
	if (!ret && errors)
		ret = -EILSEQ;
	return ret;
}

/* ------------------------------------------------------------ control */

/* A listening id of one rdma_cm port space on the server's address. */
static struct rdma_cm_id *perf_listen(struct perf_server *s,
				      enum rdma_ucm_port_space ps,
				      enum ib_qp_type qpt)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, perf_server_cm_handler, s, ps, qpt);
	if (IS_ERR(id))
		return id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&s->addr);
	if (ret) {
		pr_err("server: bind to %pISpc: %d\n", &s->addr, ret);
		goto err;
	}
	ret = rdma_listen(id, 16);
	if (ret) {
		pr_err("server: listen on %pISpc: %d\n", &s->addr, ret);
		goto err;
	}
	return id;
err:
	rdma_destroy_id(id);
	return ERR_PTR(ret);
}

static int perf_server_start(struct sockaddr_storage *addr)
{
	struct perf_server *s;
	int i, ret, slot = -1;

	mutex_lock(&perf_lock);
	for (i = 0; i < ARRAY_SIZE(perf_servers); i++)
		if (!perf_servers[i] && slot < 0)
			slot = i;
	mutex_unlock(&perf_lock);
	if (slot < 0)
		return -ENOSPC;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->addr = *addr;
	s->listener = true;
	s->id = perf_listen(s, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(s->id)) {
		ret = PTR_ERR(s->id);
		goto err_free;
	}
	s->ud_id = perf_listen(s, RDMA_PS_UDP, IB_QPT_UD);
	if (IS_ERR(s->ud_id)) {
		ret = PTR_ERR(s->ud_id);
		goto err_id;
	}
	mutex_lock(&perf_lock);
	if (perf_servers[slot]) {
		mutex_unlock(&perf_lock);
		ret = -EBUSY;
		goto err_id;
	}
	perf_servers[slot] = s;
	mutex_unlock(&perf_lock);
	pr_info("server listening on %pISpc (RC and UD)\n", &s->addr);
	return 0;
err_id:
	if (!IS_ERR(s->ud_id))
		rdma_destroy_id(s->ud_id);
	rdma_destroy_id(s->id);
err_free:
	kfree(s);
	return ret;
}

static void perf_stop_all(void)
{
	struct perf_server *s;
	struct perf_conn *c;
	int i;

	for (i = 0; i < ARRAY_SIZE(perf_servers); i++) {
		mutex_lock(&perf_lock);
		s = perf_servers[i];
		perf_servers[i] = NULL;
		mutex_unlock(&perf_lock);
		if (!s)
			continue;
		if (s->id)
			rdma_destroy_id(s->id);
		if (s->ud_id)
			rdma_destroy_id(s->ud_id);
		pr_info("server on %pISpc stopped\n", &s->addr);
		kfree(s);
	}
	mutex_lock(&perf_lock);
	list_for_each_entry(c, &perf_conns, list)
		perf_conn_release(c);
	mutex_unlock(&perf_lock);
	flush_workqueue(perf_wq);
}

static int perf_parse_u32(const char *v, u32 min, u32 max, u32 *out)
{
	u32 x;

	if (kstrtou32(v, 0, &x) || x < min || x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

static int perf_parse_addr(const char *v, u16 port, struct sockaddr_storage *ss)
{
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	return inet_pton_with_scope(&init_net, AF_UNSPEC, v, p, ss);
}

static int perf_command(char *buf)
{
	struct perf_args a = {
		.op = PERF_SEND, .size = 4096, .depth = 8, .count = 1000,
		.nsge = 1, .tos = -1, .verify = true, .retry = 7, .rnr_retry = 7,
	};
	char *cmd, *tok, *addr = NULL, *src = NULL, *v;
	u32 port = PERF_DEF_PORT, x;
	int ret = 0, i;

	buf = strim(buf);
	cmd = strsep(&buf, " \t");
	if (!cmd || !*cmd)
		return -EINVAL;
	if (!strcmp(cmd, "stop")) {
		perf_stop_all();
		return 0;
	}
	if (strcmp(cmd, "server") && strcmp(cmd, "client")) {
		pr_err("unknown command '%s' (server, client, stop)\n", cmd);
		return -EINVAL;
	}
	while ((tok = strsep(&buf, " \t"))) {
		if (!*tok)
			continue;
		v = strchr(tok, '=');
		if (!v) {
			pr_err("'%s': expected key=value\n", tok);
			return -EINVAL;
		}
		*v++ = '\0';
		if (!strcmp(tok, "addr")) {
			addr = v;
		} else if (!strcmp(tok, "src")) {
			src = v;
		} else if (!strcmp(tok, "port")) {
			ret = perf_parse_u32(v, 1, 65535, &port);
		} else if (!strcmp(tok, "op")) {
			for (i = 0; i < PERF_NR_OPS; i++)
				if (!strcmp(v, perf_op_names[i]))
					break;
			a.op = i;
			ret = i < PERF_NR_OPS ? 0 : -EINVAL;
		} else if (!strcmp(tok, "size")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_SIZE, &a.size);
		} else if (!strcmp(tok, "depth")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_DEPTH, &a.depth);
		} else if (!strcmp(tok, "count")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.count);
		} else if (!strcmp(tok, "sge")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_SGE, &a.nsge);
		} else if (!strcmp(tok, "tos")) {
			ret = perf_parse_u32(v, 0, 255, &x);
			a.tos = x;
		} else if (!strcmp(tok, "verify")) {
			ret = kstrtobool(v, &a.verify);
		} else if (!strcmp(tok, "corrupt")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.corrupt);
		} else if (!strcmp(tok, "inline")) {
			ret = kstrtobool(v, &a.inl);
		} else if (!strcmp(tok, "fault")) {
			for (i = 0; i < PERF_NR_FAULTS; i++)
				if (!strcmp(v, perf_fault_names[i]))
					break;
			a.fault = i;
			ret = i < PERF_NR_FAULTS ? 0 : -EINVAL;
		} else if (!strcmp(tok, "retry")) {
			ret = perf_parse_u32(v, 0, 7, &a.retry);
		} else if (!strcmp(tok, "rnr_retry")) {
			ret = perf_parse_u32(v, 0, 7, &a.rnr_retry);
		} else if (!strcmp(tok, "qp")) {
			a.ud = !strcmp(v, "ud");
			ret = a.ud || !strcmp(v, "rc") ? 0 : -EINVAL;
		} else if (!strcmp(tok, "srq")) {
			ret = kstrtobool(v, &a.srq);
		} else if (!strcmp(tok, "srq_limit")) {
			ret = perf_parse_u32(v, 1, PERF_MAX_COUNT, &a.srq_limit);
		} else {
			ret = -EINVAL;
		}
		if (ret) {
			pr_err("bad option %s=%s\n", tok, v);
			return -EINVAL;
		}
	}
	if (!addr) {
		pr_err("%s: addr= is required\n", cmd);
		return -EINVAL;
	}
	ret = perf_parse_addr(addr, port, &a.addr);
	if (ret) {
		pr_err("bad address '%s'\n", addr);
		return ret;
	}
	if (!strcmp(cmd, "server"))
		return perf_server_start(&a.addr);

	if (src) {
		ret = perf_parse_addr(src, 0, &a.src);
		if (ret) {
			pr_err("bad source address '%s'\n", src);
			return ret;
		}
		a.has_src = true;
	}
	if (a.inl && (perf_op_is_atomic(a.op) || a.op == PERF_READ ||
		      a.size > PERF_INLINE_MAX)) {
		pr_err("inline needs a send or write of at most %u bytes\n",
		       PERF_INLINE_MAX);
		return -EINVAL;
	}
	if ((a.ud || a.srq) && (!perf_op_is_send(a.op) ||
				a.fault != PERF_FAULT_NONE || (a.ud && a.nsge > 1))) {
		pr_err("qp=ud and srq=1 take op=send or send_imm and no fault; qp=ud sge=1\n");
		return -EINVAL;
	}
	/* default: the limit event half way through the run */
	if (a.srq && !a.srq_limit)
		a.srq_limit = a.count / 2 + 1;
	if ((a.fault == PERF_FAULT_RKEY && perf_op_is_send(a.op)) ||
	    (a.fault == PERF_FAULT_NORECV && !perf_op_is_send(a.op)) ||
	    (a.fault == PERF_FAULT_SHORT && !perf_op_is_send(a.op))) {
		pr_err("fault=%s does not apply to op=%s\n",
		       perf_fault_names[a.fault], perf_op_names[a.op]);
		return -EINVAL;
	}
	if (a.fault == PERF_FAULT_SHORT && a.size <= sizeof(struct perf_ctrl)) {
		pr_err("fault=short needs size above %zu\n", sizeof(struct perf_ctrl));
		return -EINVAL;
	}
	if (a.nsge > 1 && perf_op_is_atomic(a.op))
		a.nsge = 1;
	if (perf_op_is_atomic(a.op))
		a.size = 8;
	if (mutex_lock_interruptible(&perf_client_lock))
		return -EINTR;
	ret = perf_client(&a);
	mutex_unlock(&perf_client_lock);
	return ret;
}

static ssize_t perf_control_write(struct file *f, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	char *buf;
	int ret;

	if (len > 512)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = perf_command(buf);
	kfree(buf);
	return ret ? ret : len;
}

static int perf_control_show(struct seq_file *m, void *v)
{
	int i;

	seq_puts(m, "commands:\n"
		 "  server addr=ADDR [port=N]\n"
		 "  client addr=ADDR [port=N] [src=ADDR] [op=OP] [size=N] [depth=N] [count=N]\n"
		 "         [sge=N] [inline=0|1] [verify=0|1] [tos=N] [corrupt=ITER]\n"
		 "         [retry=0-7] [rnr_retry=0-7] [fault=none|rkey|norecv|flush|short]\n"
		 "         [qp=rc|ud] [srq=0|1] [srq_limit=N]\n"
		 "  stop\n"
		 "ops:");
	for (i = 0; i < PERF_NR_OPS; i++)
		seq_printf(m, " %s", perf_op_names[i]);
	seq_puts(m, "\nlistening:");
	mutex_lock(&perf_lock);
	for (i = 0; i < ARRAY_SIZE(perf_servers); i++)
		if (perf_servers[i])
			seq_printf(m, " %pISpc", &perf_servers[i]->addr);
	mutex_unlock(&perf_lock);
	seq_putc(m, '\n');
	return 0;
}

static int perf_control_open(struct inode *inode, struct file *f)
{
	return single_open(f, perf_control_show, NULL);
}

static const struct file_operations perf_control_fops = {
	.owner = THIS_MODULE,
	.open = perf_control_open,
	.read = seq_read,
	.write = perf_control_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int perf_results_show(struct seq_file *m, void *v)
{
	unsigned int i, first;

	mutex_lock(&perf_lock);
	first = perf_nresults > PERF_NR_RESULTS ? perf_nresults - PERF_NR_RESULTS : 0;
	for (i = first; i < perf_nresults; i++)
		seq_printf(m, "%s\n", perf_results[i % PERF_NR_RESULTS]);
	mutex_unlock(&perf_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(perf_results);

static int __init perf_init(void)
{
	perf_wq = alloc_workqueue("rnic_perf", WQ_UNBOUND, 0);
	if (!perf_wq)
		return -ENOMEM;
	perf_dir = debugfs_create_dir("rnic_perf", NULL);
	debugfs_create_file("control", 0600, perf_dir, NULL, &perf_control_fops);
	debugfs_create_file("results", 0400, perf_dir, NULL, &perf_results_fops);
	return 0;
}

static void __exit perf_exit(void)
{
	debugfs_remove_recursive(perf_dir);
	perf_stop_all();
	destroy_workqueue(perf_wq);
}

module_init(perf_init);
module_exit(perf_exit);

MODULE_AUTHOR("rnic developers");
MODULE_DESCRIPTION("In-kernel RDMA verbs exerciser and benchmark (rdma_cm, RC)");
MODULE_LICENSE("GPL");
