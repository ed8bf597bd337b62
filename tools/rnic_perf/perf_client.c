// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf's client: one run at a time; it connects, learns the
 * server's region (INFO), keeps up to depth operations in flight, has
 * the server check what it wrote (CHECK) or fill what it reads (FILL),
 * ends the test (DONE) and reports throughput, message rate and latency.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rnic_compat.h"
#include "rnic_perf.h"

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

void perf_slot_done(struct ib_cq *cq, struct ib_wc *wc)
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

/* Client: a control message from the server (INFO or REPLY). */
void perf_client_rx_done(struct ib_cq *cq, struct ib_wc *wc)
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

/* A reject from an rnic_perf server that refused the test says why. */
static void perf_client_rejected(struct perf_conn *c, struct rdma_cm_event *ev)
{
	const struct perf_rej *rej = ev->param.conn.private_data;

	if (c->ud || !rej || ev->param.conn.private_data_len < sizeof(*rej) ||
	    be32_to_cpu(rej->magic) != PERF_MAGIC)
		return;
	pr_err("client: the server refused the test: %.*s (%d)\n",
	       (int)strnlen(rej->msg, sizeof(rej->msg)), rej->msg,
	       -(int)be32_to_cpu(rej->err));
}

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
	case RDMA_CM_EVENT_REJECTED:
		perf_client_rejected(c, ev);
		fallthrough;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
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
	struct ib_sge *sge = c->tx_sgl;	/* only this thread posts data */
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
	ret = ib_post_send(c->qp, wr, &bad);
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

static void perf_client_report(struct perf_conn *c, struct perf_args *a, int ret,
			       u64 elapsed_ns, u64 errors, u32 srv_msgs)
{
	struct ib_device_attr *attr = c->dev ? &c->dev->attrs : NULL;
	char line[PERF_LINE_LEN], sge[12], rx_sge[12], max_inline[12], ev[64];
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
	/* sge=max is resolved once the device is known */
	if (c->nsge == PERF_SGE_DEV)
		strscpy(sge, "max", sizeof(sge));
	else
		snprintf(sge, sizeof(sge), "%u", c->nsge);
	if (a->rx_sge_max)
		strscpy(rx_sge, "max", sizeof(rx_sge));
	else if (!perf_op_is_send(a->op))
		strscpy(rx_sge, "-", sizeof(rx_sge));
	else if (a->rx_sge)
		snprintf(rx_sge, sizeof(rx_sge), "%u", a->rx_sge);
	else
		strscpy(rx_sge, sge, sizeof(rx_sge));
	if (c->max_inline < 0)
		strscpy(max_inline, "-", sizeof(max_inline));
	else
		snprintf(max_inline, sizeof(max_inline), "%d", c->max_inline);
	snprintf(line, sizeof(line),
		 "client local=%pISpc peer=%pISpc dev=%s qp=%s srq=%u op=%s size=%u depth=%u count=%u hold=%u rtr=%u resp_res=%d sge=%s wr_sge=%u rx_sge=%s offset=%u inline=%u qp_inline=%u max_inline=%s max_send_sge=%d max_sge_rd=%d verify=%u fault=%s inv=%s inv_checked=%u inv_probe=%s qp_events=%s status=%s error=%d wc_status=%s flushed=%u errors=%llu server_msgs=%u bytes=%llu usecs=%llu MBps=%llu.%02llu msg_rate=%llu lat_avg_us=%u.%u lat_p50_us=%u.%u lat_p99_us=%u.%u",
		 &c->id->route.addr.src_addr, &a->addr,
		 c->dev ? dev_name(&c->dev->dev) : "-",
		 a->ud ? "ud" : "rc", a->srq, perf_op_names[a->op], a->size,
		 a->depth, a->count, a->hold_ms, a->rtr, a->resp_res, sge,
		 c->wr_sge, rx_sge, a->offset, a->inl,
		 c->qp_inline, max_inline, attr ? attr->max_send_sge : 0,
		 attr ? attr->max_sge_rd : 0, a->verify, perf_fault_names[a->fault],
		 perf_inv_names[a->inv], c->inv_checked,
		 c->inv_probe_done ? perf_wc_name(c->inv_probe) : "-",
		 perf_qp_events(c, ev, sizeof(ev)),
		 ret || errors ? "fail" : "ok", ret,
		 perf_wc_name(c->wc_err ? c->wc_status : IB_WC_SUCCESS),
		 atomic_read(&c->flushed), errors,
		 srv_msgs, bytes, us, mbps / 100, mbps % 100, rate,
		 avg / 1000, avg % 1000 / 100, p50 / 1000, p50 % 1000 / 100,
		 p99 / 1000, p99 % 1000 / 100);
	perf_result_add(line);
}

/*
 * inv=: have the server's region invalidated: the server posts LOCAL_INV
 * on its rkey (local), or our SEND_WITH_INV names it (remote); the
 * server's REPLY says whether that happened as it should.
 */
static int perf_invalidate(struct perf_conn *c)
{
	struct perf_ctrl m = {
		.type = cpu_to_be32(PERF_CTRL_INV),
		.rkey = cpu_to_be32(c->rkey),
	};
	struct perf_ctrl r;
	int ret;

	if (c->inv == PERF_INV_REMOTE)
		ret = perf_send_ctrl_inv(c, &m, c->rkey);
	else
		ret = perf_send_ctrl(c, &m);
	if (!ret)
		ret = perf_wait_ctrl(c, &r);
	if (!ret && be32_to_cpu(r.type) != PERF_CTRL_REPLY)
		ret = -EPROTO;
	if (ret) {
		pr_err("client: inv=%s: no reply from the server: %d\n",
		       perf_inv_names[c->inv], ret);
		return ret;
	}
	if (be32_to_cpu(r.status)) {
		pr_err("client: inv=%s: the server's rkey %#x was not invalidated as it should (the server's log says why)\n",
		       perf_inv_names[c->inv], c->rkey);
		return -EIO;
	}
	return 0;
}

static void perf_inv_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_conn *c = cq->cq_context;

	c->inv_probe = wc->status;
	WRITE_ONCE(c->inv_probe_done, true);
	perf_send_done(c);
	wake_up(&c->wq);
}

/*
 * inv=: one more RDMA WRITE with the invalidated rkey; the server's NIC
 * must refuse it (REM_ACCESS_ERR, which also ends the connection).
 */
static int perf_inv_probe(struct perf_conn *c)
{
	struct perf_slot *s = &c->slots[0];
	struct ib_sge sge = {
		.addr = s->buf.dma,
		.length = c->size,
		.lkey = c->pd->local_dma_lkey,
	};
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wr = {};
	long t;
	int ret;

	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.wr_cqe = &c->inv_cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = c->raddr;
	wr.rkey = c->rkey;
	/*
	 * Its REM_ACCESS_ERR moves our QP to ERR: the receives flushed then
	 * are the connection's end, not an error of the run.
	 */
	set_bit(0, &c->releasing);
	atomic_inc(&c->sq_pending);
	ret = ib_post_send(c->qp, &wr.wr, &bad);
	if (ret) {
		atomic_dec(&c->sq_pending);
		return ret;
	}
	t = wait_event_interruptible_timeout(c->wq, READ_ONCE(c->inv_probe_done),
					     PERF_TIMEOUT);
	if (t < 0)
		return t;
	if (!t) {
		pr_err("client: inv=%s: the WRITE with the invalidated rkey %#x never completed\n",
		       perf_inv_names[c->inv], c->rkey);
		return -ETIMEDOUT;
	}
	if (c->inv_probe != IB_WC_REM_ACCESS_ERR) {
		pr_err("client: inv=%s: the WRITE with the invalidated rkey %#x completed with %s, expected REM_ACCESS_ERR\n",
		       perf_inv_names[c->inv], c->rkey,
		       perf_wc_name(c->inv_probe));
		return -EIO;
	}
	pr_info("client: inv=%s: the WRITE with the invalidated rkey %#x failed with REM_ACCESS_ERR, as it must\n",
		perf_inv_names[c->inv], c->rkey);
	c->inv_checked = true;
	return 0;
}

/* fault=flush: move the QP to ERR while the first WRs are in flight. */
static int perf_fault_flush(struct perf_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(c->qp, &attr, IB_QP_STATE);
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
	if (c->inv != PERF_INV_NONE) {
		ret = perf_invalidate(c);
		if (ret)
			return ret;
	}
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
	/* the last thing: the refused WRITE ends the connection */
	if (c->inv != PERF_INV_NONE && !*errors)
		return perf_inv_probe(c);
	return 0;
}

int perf_client(struct perf_args *a)
{
	struct perf_req req = {
		.magic = cpu_to_be32(PERF_MAGIC),
		.op = a->op,
		.verify = a->verify,
		.size = cpu_to_be32(a->size),
		.depth = cpu_to_be32(a->depth),
		.count = cpu_to_be32(a->count),
		.fault = a->fault,
		.rnr_retry = a->rnr_retry,
		.flags = (a->ud ? PERF_REQ_F_UD : 0) | (a->srq ? PERF_REQ_F_SRQ : 0) |
			 (a->rx_sge_max ? PERF_REQ_F_RX_SGE_MAX : 0) |
			 (a->rtr ? PERF_REQ_F_RTR : 0) |
			 (a->resp_res >= 0 ? PERF_REQ_F_RESP_RES : 0),
		.resp_res = a->resp_res >= 0 ? a->resp_res : 0,
		.srq_limit = cpu_to_be32(a->srq_limit),
		.inv = a->inv,
		.rx_sge = a->rx_sge,
		.offset = cpu_to_be32(a->offset),
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
	c->offset = a->offset;
	c->verify = a->verify;
	c->inl = a->inl;
	c->max_inline = -1;
	c->corrupt = a->corrupt;
	c->fault = a->fault;
	c->ud = a->ud;
	c->inv = a->inv;
	c->inv_cqe.done = perf_inv_probe_done;
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
	/* sge=max: the device's count, now known */
	req.nsge = c->nsge;
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
	/*
	 * rtr=1: the server's QP waits in RTR; this SEND, the first thing
	 * it receives, raises COMM_EST there, and only then comes INFO.
	 */
	if (a->rtr) {
		struct perf_ctrl hello = { .type = cpu_to_be32(PERF_CTRL_HELLO) };

		ret = perf_send_ctrl(c, &hello);
		if (ret) {
			pr_err("client: posting HELLO failed: %d\n", ret);
			goto out_disc;
		}
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
	/*
	 * hold=: both QPs connected and idle, their PSNs still, so that a
	 * test can aim a frame of its own at the server's QP. The events
	 * that brings are in this run's line.
	 */
	if (!ret && a->hold_ms) {
		pr_info("client: run to %pISpc over, holding the connection for %u ms\n",
			&a->addr, a->hold_ms);
		msleep_interruptible(a->hold_ms);
	}
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
