// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_scale: rdma_cm loopback connections, and the conns command over
 * many of them (Documentation/rnic_scale.rst). rnic_scale_one.c runs the
 * commands over one: mr_churn and cq_overflow.
 *
 * A run listens on an address of the device and connects to it: both
 * ends of every RC connection are QPs of this device, and their packets
 * loop back through the device (rnic loops a frame to its own MAC inside
 * the NIC). Every connection end has its own CQ; the poll contexts are
 * spread over softirq and both workqueues so that completion handlers of
 * different connections run at the same time on different CPUs.
 *
 * The traffic of conns: the client of connection i writes (RDMA WRITE)
 * iteration k's pattern into slot k % depth of the server's fast-registered
 * buffer, then SENDs (with immediate k) another pattern. The server checks
 * both, every byte, when the SEND arrives (RC ordering: the WRITE before
 * it has been placed) and returns a credit (a zero-length SEND with
 * immediate k): only then does the client reuse the slot.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rnic_scale.h"
#include "rnic_scale_conn.h"

/* conns hold=1: the run kept until "release" (under scale_cmd_lock) */
static struct scale_run *scale_held;

static void scale_fail(struct scale_run *run, int err)
{
	cmpxchg(&run->err, 0, err);
	wake_up(&run->wq);
}

/* ------------------------------------------------------------- pattern */

/* A 32-bit word of the pattern; every byte differs with each argument. */
static u32 scale_word(u32 conn, u32 iter, u32 kind, u32 w)
{
	u32 x = conn * 0x9e3779b1U ^ iter * 0x85ebca77U ^
		kind * 0xc2b2ae3dU ^ (w + 1) * 0x27d4eb2fU;

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return x;
}

void scale_fill(u8 *p, u32 len, u32 conn, u32 iter, u32 kind)
{
	u32 i, w;

	for (i = 0; i < len; i += 4) {
		w = scale_word(conn, iter, kind, i / 4);
		memcpy(p + i, &w, min(4U, len - i));
	}
}

/* Return: the number of bytes of @p that differ from the pattern. */
u32 scale_check(const u8 *p, u32 len, u32 conn, u32 iter, u32 kind)
{
	u32 i, j, w, bad = 0;

	for (i = 0; i < len; i += 4) {
		w = scale_word(conn, iter, kind, i / 4);
		for (j = 0; j < min(4U, len - i); j++)
			bad += p[i + j] != ((u8 *)&w)[j];
	}
	return bad;
}

/* --------------------------------------------------------- completions */

static void scale_wc_fail(struct scale_conn *c, struct ib_wc *wc,
			  const char *what)
{
	/*
	 * Flushes follow the first error, and cq_overflow's QP error: not
	 * news.
	 */
	if (wc->status != IB_WC_WR_FLUSH_ERR ||
	    (!READ_ONCE(c->run->err) && !READ_ONCE(c->run->stopping) &&
	     c->run->mode != SCALE_MODE_OVF))
		pr_err_ratelimited("conn %u %s: %s %s (vendor_err %#x)\n",
				   c->idx, c->server ? "server" : "client",
				   what, ib_wc_status_msg(wc->status),
				   wc->vendor_err);
	scale_fail(c->run, -EIO);
}

static void scale_wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_wait *w = container_of(wc->wr_cqe, struct scale_wait,
					    cqe);

	w->status = wc->status;
	complete(&w->done);
}

static void scale_wait_init(struct scale_wait *w)
{
	w->cqe.done = scale_wait_done;
	init_completion(&w->done);
}

/* Return: 0 once the WR completed well, -EIO, -ETIMEDOUT or -EINTR. */
int scale_wait_for(struct scale_wait *w)
{
	long t = wait_for_completion_interruptible_timeout(&w->done,
							   SCALE_WR_TIMEOUT);

	if (t < 0)
		return -EINTR;
	if (!t)
		return -ETIMEDOUT;
	reinit_completion(&w->done);
	if (w->status != IB_WC_SUCCESS) {
		pr_err("work request: %s\n", ib_wc_status_msg(w->status));
		return -EIO;
	}
	return 0;
}

/* The client posts iteration @iter in slot @s: WRITE, then SEND. */
static int scale_cli_post(struct scale_conn *c, struct scale_slot *s, u32 iter)
{
	struct ib_device *dev = c->run->dev;
	u32 size = c->run->a.size;
	u32 off = s->idx * 2 * size;
	struct ib_sge wsge = {
		.addr = c->buf_dma + off,
		.length = size,
		.lkey = c->run->pd->local_dma_lkey,
	};
	struct ib_sge ssge = {
		.addr = c->buf_dma + off + size,
		.length = size,
		.lkey = c->run->pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_cqe = &s->cqe,
		.sg_list = &ssge,
		.num_sge = 1,
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(iter),
	};
	struct ib_rdma_wr write = {
		.wr = {
			.next = &send,
			.sg_list = &wsge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
		},
		.remote_addr = c->raddr + s->idx * size,
		.rkey = c->rkey,
	};

	s->iter = iter;
	s->sent = false;
	s->credited = false;
	ib_dma_sync_single_for_cpu(dev, c->buf_dma + off, 2 * size,
				   DMA_BIDIRECTIONAL);
	scale_fill(c->buf + off, size, c->idx, iter, SCALE_KIND_WRITE);
	scale_fill(c->buf + off + size, size, c->idx, iter, SCALE_KIND_SEND);
	ib_dma_sync_single_for_device(dev, c->buf_dma + off, 2 * size,
				      DMA_BIDIRECTIONAL);
	return ib_post_send(c->id->qp, &write.wr, NULL);
}

/* A slot whose SEND completed and whose credit came: its next iteration. */
static void scale_cli_advance(struct scale_conn *c, struct scale_slot *s)
{
	struct scale_run *run = c->run;
	int ret;

	lockdep_assert_held(&c->lock);
	if (!s->sent || !s->credited)
		return;
	s->sent = false;
	s->credited = false;
	if (++c->done == run->a.count) {
		atomic_inc(&run->conns_done);
		wake_up(&run->wq);
		return;
	}
	if (c->posted < run->a.count) {
		ret = scale_cli_post(c, s, c->posted++);
		if (ret)
			scale_fail(run, ret);
	}
}

static void scale_cli_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_slot *s = container_of(wc->wr_cqe, struct scale_slot,
					    cqe);
	struct scale_conn *c = s->c;
	unsigned long flags;

	if (wc->status != IB_WC_SUCCESS) {
		scale_wc_fail(c, wc, "SEND");
		return;
	}
	spin_lock_irqsave(&c->lock, flags);
	s->sent = true;
	scale_cli_advance(c, s);
	spin_unlock_irqrestore(&c->lock, flags);
}

static int scale_post_ctl_recv(struct scale_conn *c)
{
	struct ib_recv_wr wr = { .wr_cqe = &c->ctl_cqe };

	return ib_post_recv(c->id->qp, &wr, NULL);
}

static void scale_cli_credit_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_conn *c = container_of(wc->wr_cqe, struct scale_conn,
					    ctl_cqe);
	struct scale_run *run = c->run;
	struct scale_slot *s;
	unsigned long flags;
	u32 iter;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		scale_wc_fail(c, wc, "credit RECV");
		return;
	}
	iter = be32_to_cpu(wc->ex.imm_data);
	s = &c->slots[iter % run->depth];
	if (!(wc->wc_flags & IB_WC_WITH_IMM) || s->iter != iter) {
		pr_err("conn %u client: credit for iteration %u, not in flight\n",
		       c->idx, iter);
		scale_fail(run, -EPROTO);
		return;
	}
	ret = scale_post_ctl_recv(c);
	if (ret) {
		scale_fail(run, ret);
		return;
	}
	spin_lock_irqsave(&c->lock, flags);
	s->credited = true;
	scale_cli_advance(c, s);
	spin_unlock_irqrestore(&c->lock, flags);
}

static int scale_srv_post_recv(struct scale_conn *c, struct scale_slot *s)
{
	u32 size = c->run->a.size;
	struct ib_sge sge = {
		.addr = c->buf_dma + s->idx * size,
		.length = size,
		.lkey = c->run->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &s->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(c->id->qp, &wr, NULL);
}

/* The server checks iteration @iter: the SEND in @s and the WRITE's slot. */
static void scale_srv_check(struct scale_conn *c, struct scale_slot *s,
			    u32 iter, u32 len)
{
	struct scale_run *run = c->run;
	struct ib_device *dev = run->dev;
	u32 size = run->a.size;
	u32 woff = (iter % run->depth) * size;
	u32 bad;

	ib_dma_sync_single_for_cpu(dev, c->buf_dma + s->idx * size, size,
				   DMA_BIDIRECTIONAL);
	ib_dma_sync_single_for_cpu(dev, sg_dma_address(&c->wsg) + woff, size,
				   DMA_BIDIRECTIONAL);
	bad = len == size ? 0 : size;
	bad += scale_check(c->buf + s->idx * size, min(len, size), c->idx,
			   iter, SCALE_KIND_SEND);
	bad += scale_check(c->wbuf + woff, size, c->idx, iter,
			   SCALE_KIND_WRITE);
	ib_dma_sync_single_for_device(dev, sg_dma_address(&c->wsg) + woff,
				      size, DMA_BIDIRECTIONAL);
	ib_dma_sync_single_for_device(dev, c->buf_dma + s->idx * size, size,
				      DMA_BIDIRECTIONAL);
	if (bad) {
		pr_err_ratelimited("conn %u: iteration %u: %u bytes wrong (SEND of %u bytes)\n",
				   c->idx, iter, bad, len);
		atomic64_add(bad, &run->bad);
		scale_fail(run, -EILSEQ);
	} else {
		atomic64_add(2, &run->verified);
	}
}

static void scale_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_slot *s = container_of(wc->wr_cqe, struct scale_slot,
					    cqe);
	struct scale_conn *c = s->c;
	struct scale_run *run = c->run;
	struct ib_send_wr credit = {
		.wr_cqe = &c->ctl_cqe,
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SIGNALED,
	};
	u32 iter;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		scale_wc_fail(c, wc, "RECV");
		return;
	}
	iter = be32_to_cpu(wc->ex.imm_data);
	if (!(wc->wc_flags & IB_WC_WITH_IMM) ||
	    (run->mode == SCALE_MODE_CONNS && iter >= run->a.count)) {
		pr_err("conn %u server: a SEND without a valid iteration\n",
		       c->idx);
		scale_fail(run, -EPROTO);
		return;
	}
	if (run->mode == SCALE_MODE_CHURN) {
		/* mr_churn's "written" notice: the test waits for it */
		ret = scale_srv_post_recv(c, s);
		if (ret)
			scale_fail(run, ret);
		WRITE_ONCE(run->churn_iter, iter);
		complete(&run->churn_rx);
		return;
	}
	scale_srv_check(c, s, iter, wc->byte_len);
	/* the buffer back before the credit: the next SEND finds it */
	ret = scale_srv_post_recv(c, s);
	if (!ret) {
		credit.ex.imm_data = cpu_to_be32(iter);
		ret = ib_post_send(c->id->qp, &credit, NULL);
	}
	if (ret)
		scale_fail(run, ret);
}

static void scale_srv_credit_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_conn *c = container_of(wc->wr_cqe, struct scale_conn,
					    ctl_cqe);

	if (wc->status != IB_WC_SUCCESS)
		scale_wc_fail(c, wc, "credit SEND");
}

static void scale_srv_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct scale_conn *c = container_of(wc->wr_cqe, struct scale_conn,
					    reg_cqe);

	if (wc->status != IB_WC_SUCCESS) {
		scale_wc_fail(c, wc, "REG_MR");
		return;
	}
	atomic_inc(&c->run->mr_ready);
	wake_up(&c->run->wq);
}

static void scale_qp_event(struct ib_event *ev, void *ctx)
{
	struct scale_conn *c = ctx;
	struct scale_run *run = c->run;

	if (ev->event == IB_EVENT_QP_FATAL) {
		if (atomic_inc_return(&run->qp_fatal) == 1)
			run->t_qp_fatal = ktime_get();
	} else if (ev->event != IB_EVENT_COMM_EST) {
		atomic_inc(&run->qp_other);
		WRITE_ONCE(run->qp_other_event, ev->event);
	}
	if (run->mode != SCALE_MODE_OVF)
		pr_warn("conn %u %s: QP event %s\n", c->idx,
			c->server ? "server" : "client",
			ib_event_msg(ev->event));
	wake_up(&run->wq);
}

/* --------------------------------------------------------- connections */

static int scale_conn_bufs(struct scale_conn *c)
{
	struct scale_run *run = c->run;
	struct ib_device *dev = run->dev;
	u32 size = run->a.size;
	u32 i;

	c->slots = kcalloc(run->depth, sizeof(*c->slots), GFP_KERNEL);
	if (!c->slots)
		return -ENOMEM;
	for (i = 0; i < run->depth; i++) {
		c->slots[i].c = c;
		c->slots[i].idx = i;
		c->slots[i].iter = U32_MAX;
		c->slots[i].cqe.done = c->server ? scale_srv_recv_done :
						   scale_cli_send_done;
	}
	c->buf_len = run->depth * size * (c->server ? 1 : 2);
	c->buf = kzalloc(c->buf_len, GFP_KERNEL);
	if (!c->buf)
		return -ENOMEM;
	c->buf_dma = ib_dma_map_single(dev, c->buf, c->buf_len,
				       DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, c->buf_dma)) {
		kfree(c->buf);
		c->buf = NULL;
		return -ENOMEM;
	}
	if (!c->server)
		return 0;

	c->wbuf = kzalloc(run->depth * size, GFP_KERNEL);
	if (!c->wbuf)
		return -ENOMEM;
	sg_init_one(&c->wsg, c->wbuf, run->depth * size);
	if (ib_dma_map_sg(dev, &c->wsg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	c->wsg_mapped = true;
	c->mr = ib_alloc_mr(run->pd, IB_MR_TYPE_MEM_REG,
			    DIV_ROUND_UP(run->depth * size, PAGE_SIZE) + 1);
	if (IS_ERR(c->mr)) {
		i = PTR_ERR(c->mr);
		c->mr = NULL;
		return i;
	}
	if (ib_map_mr_sg(c->mr, &c->wsg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	return 0;
}

/**
 * scale_conn_setup() - the CQ, buffers and QP of one connection end
 * @c: the connection, its cm_id bound to the run's device
 *
 * Context: its CM handler (ROUTE_RESOLVED or CONNECT_REQUEST).
 * Return: 0 or a negative errno; what was made is freed by
 * scale_conn_free().
 */
static int scale_conn_setup(struct scale_conn *c)
{
	static const enum ib_poll_context pctx[] = {
		IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE,
	};
	struct scale_run *run = c->run;
	struct ib_device *dev = run->dev;
	u32 d = run->depth;
	struct ib_qp_init_attr qa = {
		.event_handler = scale_qp_event,
		.qp_context = c,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			/* + 1: the drain's WR; a full queue would refuse it */
			.max_send_wr = 2 * d + 2 + run->sq_extra,
			.max_recv_wr = d + 1,
			.max_send_sge = c->server ? 1 : run->send_sge,
			.max_recv_sge = 1,
		},
	};
	int ret;
	u32 i;

	c->cq = ib_alloc_cq(dev, c, qa.cap.max_send_wr + qa.cap.max_recv_wr,
			    c->idx % max(dev->num_comp_vectors, 1),
			    pctx[(c->idx + c->server) % ARRAY_SIZE(pctx)]);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}
	ret = scale_conn_bufs(c);
	if (ret)
		return ret;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (run->ovf_cq && !c->server)
		qa.send_cq = run->ovf_cq;
	ret = rdma_create_qp(c->id, run->pd, &qa);
	if (ret)
		return ret;
	c->qp_made = true;
	c->ctl_cqe.done = c->server ? scale_srv_credit_done :
				      scale_cli_credit_done;
	c->reg_cqe.done = scale_srv_reg_done;
	for (i = 0; i < d; i++) {
		ret = c->server ? scale_srv_post_recv(c, &c->slots[i]) :
				  scale_post_ctl_recv(c);
		if (ret)
			return ret;
	}
	return 0;
}

/* The server's WRITE target, registered once its QP can send. */
static int scale_srv_established(struct scale_conn *c)
{
	struct ib_reg_wr reg = {
		.wr = {
			.wr_cqe = &c->reg_cqe,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = c->mr,
		.key = c->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	return ib_post_send(c->id->qp, &reg.wr, NULL);
}

static void scale_conn_free(struct scale_conn *c)
{
	struct scale_run *run = c->run;
	struct ib_device *dev = run->dev;

	mutex_lock(&run->cm_lock);
	c->dead = true;
	mutex_unlock(&run->cm_lock);
	if (c->qp_made) {
		/*
		 * No drain for the client of cq_overflow or qp_reset: its
		 * send CQ is dead or polled by no one, the drain's
		 * completion would never come.
		 */
		if (!run->ovf_cq || c->server)
			ib_drain_qp(c->id->qp);
		rdma_destroy_qp(c->id);
	}
	/* waits for a handler of this id still running */
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->wsg_mapped)
		ib_dma_unmap_sg(dev, &c->wsg, 1, DMA_BIDIRECTIONAL);
	kfree(c->wbuf);
	if (c->buf) {
		ib_dma_unmap_single(dev, c->buf_dma, c->buf_len,
				    DMA_BIDIRECTIONAL);
		kfree(c->buf);
	}
	kfree(c->slots);
	kfree(c);
}

static struct scale_conn *scale_conn_alloc(struct scale_run *run, u32 idx,
					   bool server)
{
	struct scale_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->run = run;
	c->idx = idx;
	c->server = server;
	spin_lock_init(&c->lock);
	return c;
}

static int scale_cli_connect(struct scale_conn *c)
{
	struct scale_req req = {
		.magic = cpu_to_be32(SCALE_MAGIC),
		.idx = cpu_to_be32(c->idx),
	};
	struct rdma_conn_param cp = {
		.private_data = &req,
		.private_data_len = sizeof(req),
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	int ret;

	if (c->id->device != c->run->dev)
		return -EXDEV;
	ret = scale_conn_setup(c);
	if (ret)
		return ret;
	return rdma_connect_locked(c->id, &cp);
}

static int scale_cm_status(enum rdma_cm_event_type e)
{
	switch (e) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		return -ENETUNREACH;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	case RDMA_CM_EVENT_ADDR_ERROR:
		return -EADDRNOTAVAIL;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return -EHOSTUNREACH;
	default:
		return -ECONNABORTED;
	}
}

static int scale_conn_event(struct scale_conn *c, struct rdma_cm_event *ev)
{
	struct scale_run *run = c->run;
	int ret = 0;

	mutex_lock(&run->cm_lock);
	if (c->dead)
		goto out;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(c->id, SCALE_CM_TIMEOUT_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = scale_cli_connect(c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = true;
		if (c->server)
			ret = scale_srv_established(c);
		run->t_last_est = ktime_get();
		atomic_inc(&run->established);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		atomic_inc(&run->disconnected);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default:
		/* a refused connection says why in its status */
		pr_err_ratelimited("conn %u %s: %s (status %d)\n", c->idx,
				   c->server ? "server" : "client",
				   rdma_event_msg(ev->event), ev->status);
		ret = scale_cm_status(ev->event);
		break;
	}
	if (ret)
		scale_fail(run, ret);
	if (!c->server && !c->settled &&
	    (ret || ev->event == RDMA_CM_EVENT_ESTABLISHED)) {
		c->settled = true;
		if (!ret)
			atomic_inc(&run->connected);
		atomic_inc(&run->settled);
	}
	wake_up(&run->wq);
out:
	mutex_unlock(&run->cm_lock);
	return 0;
}

/* A client's request: the server end of its connection, accepted. */
static int scale_srv_connect(struct scale_run *run, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	const struct scale_req *req = ev->param.conn.private_data;
	struct rdma_conn_param cp = {
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct scale_conn *c = NULL;
	u32 idx = U32_MAX;
	int ret;

	mutex_lock(&run->cm_lock);
	if (run->stopping || !req ||
	    ev->param.conn.private_data_len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != SCALE_MAGIC) {
		ret = -EINVAL;
		goto out;
	}
	idx = be32_to_cpu(req->idx);
	if (idx >= run->nconns || run->srv[idx]) {
		ret = -EINVAL;
		goto out;
	}
	c = scale_conn_alloc(run, idx, true);
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	c->id = id;
	ret = id->device == run->dev ? scale_conn_setup(c) : -EXDEV;
	if (!ret) {
		id->context = &c->ctx;
		ret = rdma_accept(id, &cp);
	}
	if (ret) {
		id->context = &run->ctx;
		goto out;
	}
	run->srv[idx] = c;
	c = NULL;
out:
	mutex_unlock(&run->cm_lock);
	if (c) {
		/* rdma_cm destroys the id when this handler fails */
		c->id = NULL;
		if (c->qp_made) {
			rdma_destroy_qp(id);
			c->qp_made = false;
		}
		scale_conn_free(c);
	}
	if (ret) {
		pr_err_ratelimited("server: connection request %u refused: %s\n",
				   idx, SCALE_ERR(ret));
		scale_fail(run, ret);
	}
	return ret;
}

static int scale_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct scale_cm_ctx *ctx = id->context;
	struct scale_run *run;

	if (!ctx->is_run)
		return scale_conn_event(container_of(ctx, struct scale_conn,
						     ctx), ev);
	run = container_of(ctx, struct scale_run, ctx);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return scale_srv_connect(run, id, ev);
	/* the listener's: the device went away */
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		scale_fail(run, -ENODEV);
	return 0;
}

struct scale_run *scale_run_alloc(const struct scale_conn_args *a,
				  enum scale_mode mode, u32 nconns)
{
	struct scale_run *run = kzalloc(sizeof(*run), GFP_KERNEL);

	if (!run)
		return NULL;
	run->ctx.is_run = true;
	run->mode = mode;
	run->a = *a;
	run->nconns = nconns;
	run->depth = mode == SCALE_MODE_CONNS ? a->depth : 1;
	run->send_sge = 1;
	mutex_init(&run->cm_lock);
	init_waitqueue_head(&run->wq);
	init_completion(&run->churn_rx);
	scale_wait_init(&run->w_reg);
	scale_wait_init(&run->w_write);
	scale_wait_init(&run->w_send);
	scale_wait_init(&run->w_inv);
	run->cli = kcalloc(nconns, sizeof(*run->cli), GFP_KERNEL);
	run->srv = kcalloc(nconns, sizeof(*run->srv), GFP_KERNEL);
	if (!run->cli || !run->srv) {
		kfree(run->cli);
		kfree(run->srv);
		kfree(run);
		return NULL;
	}
	return run;
}

/* The listener on the run's address; its device is the run's. */
int scale_listen(struct scale_run *run)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, scale_cm_handler, &run->ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	run->listen = id;
	ret = rdma_bind_addr(id, (struct sockaddr *)&run->a.addr);
	if (ret)
		return ret;
	if (!id->device)
		return -EADDRNOTAVAIL;	/* not an address of an RDMA device */
	run->dev = id->device;
	run->pd = ib_alloc_pd(run->dev, 0);
	if (IS_ERR(run->pd)) {
		ret = PTR_ERR(run->pd);
		run->pd = NULL;
		return ret;
	}
	return rdma_listen(id, 0);
}

/**
 * scale_run_teardown() - disconnect and free every connection of a run
 * @run: the run
 *
 * The listener goes first, so that no request comes in meanwhile; then
 * every end disconnects (both ends at once: the DREQs cross), the run
 * waits for the DISCONNECTED events (or SCALE_DISC_TIMEOUT) and frees the
 * ends, draining each QP so that no completion refers to freed memory.
 */
void scale_run_teardown(struct scale_run *run)
{
	ktime_t t0 = ktime_get();
	int est = 0;
	u32 i;

	mutex_lock(&run->cm_lock);
	run->stopping = true;
	mutex_unlock(&run->cm_lock);
	if (run->listen) {
		rdma_destroy_id(run->listen);
		run->listen = NULL;
	}
	mutex_lock(&run->cm_lock);
	for (i = 0; i < run->nconns; i++) {
		if (run->cli[i] && run->cli[i]->established) {
			rdma_disconnect(run->cli[i]->id);
			est++;
		}
		if (run->srv[i] && run->srv[i]->established) {
			rdma_disconnect(run->srv[i]->id);
			est++;
		}
	}
	mutex_unlock(&run->cm_lock);
	wait_event_timeout(run->wq, atomic_read(&run->disconnected) >= est,
			   SCALE_DISC_TIMEOUT);
	run->disc_ms = ktime_ms_delta(ktime_get(), t0);
	for (i = 0; i < run->nconns; i++) {
		if (run->cli[i])
			scale_conn_free(run->cli[i]);
		if (run->srv[i])
			scale_conn_free(run->srv[i]);
		run->cli[i] = NULL;
		run->srv[i] = NULL;
	}
}

void scale_run_free(struct scale_run *run)
{
	scale_run_teardown(run);
	if (run->pd)
		ib_dealloc_pd(run->pd);
	if (run->ovf_cq)
		ib_destroy_cq(run->ovf_cq);
	kfree(run->cli);
	kfree(run->srv);
	kfree(run);
}

/* One client: its cm_id, resolving; the CM handler does the rest. */
static int scale_cli_start(struct scale_run *run, u32 idx)
{
	struct scale_conn *c = scale_conn_alloc(run, idx, false);
	struct rdma_cm_id *id;

	if (!c)
		return -ENOMEM;
	id = rdma_create_id(&init_net, scale_cm_handler, &c->ctx, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id)) {
		kfree(c);
		return PTR_ERR(id);
	}
	mutex_lock(&run->cm_lock);
	c->id = id;
	run->cli[idx] = c;
	mutex_unlock(&run->cm_lock);
	return rdma_resolve_addr(id, NULL, (struct sockaddr *)&run->a.addr,
				 SCALE_CM_TIMEOUT_MS);
}

/* Return: what the wait left: 0, -ETIMEDOUT, -EINTR or the run's error. */
static int scale_wait_run(struct scale_run *run, atomic_t *v, int want,
			  unsigned long tmo)
{
	long t;

	t = wait_event_interruptible_timeout(run->wq,
					     atomic_read(v) >= want ||
					     READ_ONCE(run->err), tmo);
	if (READ_ONCE(run->err))
		return run->err;
	if (t < 0)
		return -EINTR;
	return t ? 0 : -ETIMEDOUT;
}

/**
 * scale_run_connect() - listen, connect every client, wait for all
 * @run: the run, allocated
 * @t0: set to when the first client started
 *
 * Return: 0 once every end is ESTABLISHED and every server's WRITE target
 * registered, else a negative errno (the run is then torn down by the
 * caller).
 */
int scale_run_connect(struct scale_run *run, ktime_t *t0)
{
	unsigned long tmo = run->a.timeout_s * HZ;
	int ret;
	u32 i;

	/* mr_churn listens first: it needs the device to size its QPs */
	if (!run->listen) {
		ret = scale_listen(run);
		if (ret)
			return ret;
	}
	*t0 = ktime_get();
	for (i = 0; i < run->nconns; i++) {
		ret = scale_cli_start(run, i);
		if (ret)
			return ret;
	}
	/*
	 * All of them settle, even past a refusal: how many the device took
	 * is the figure. Then both ends of each are established.
	 */
	wait_event_interruptible_timeout(run->wq,
					 atomic_read(&run->settled) >=
					 run->nconns, tmo);
	if (READ_ONCE(run->err))
		return run->err;
	ret = scale_wait_run(run, &run->established, 2 * run->nconns, tmo);
	if (!ret)
		ret = scale_wait_run(run, &run->mr_ready, run->nconns, tmo);
	if (ret)
		return ret;
	/* the client end learns its server's WRITE target (same module) */
	for (i = 0; i < run->nconns; i++) {
		run->cli[i]->raddr = run->srv[i]->mr->iova;
		run->cli[i]->rkey = run->srv[i]->mr->rkey;
	}
	return 0;
}

/* ---------------------------------------------------------------- conns */

static s64 scale_free_pages(void)
{
	return global_zone_page_state(NR_FREE_PAGES);
}

static s64 scale_slab_pages(void)
{
	return global_node_page_state_pages(NR_SLAB_RECLAIMABLE_B) +
	       global_node_page_state_pages(NR_SLAB_UNRECLAIMABLE_B);
}

u64 scale_per_s(u64 n, u64 ns)
{
	return ns ? div64_u64(n * NSEC_PER_SEC, ns) : 0;
}

static s64 scale_per_qp(s64 pages, u32 qps)
{
	return pages > 0 ? div_s64(pages * PAGE_SIZE, qps) : 0;
}

/* Every client posts its first iterations; completions post the rest. */
static int scale_traffic(struct scale_run *run)
{
	struct scale_conn *c;
	unsigned long flags;
	int ret = 0;
	u32 i, j;

	for (i = 0; i < run->nconns && !ret; i++) {
		c = run->cli[i];
		spin_lock_irqsave(&c->lock, flags);
		for (j = 0; j < min(run->depth, run->a.count) && !ret; j++)
			ret = scale_cli_post(c, &c->slots[j], c->posted++);
		spin_unlock_irqrestore(&c->lock, flags);
	}
	if (ret)
		return ret;
	return scale_wait_run(run, &run->conns_done, run->nconns,
			      run->a.timeout_s * HZ);
}

int scale_conns(const struct scale_conn_args *a)
{
	s64 free0, slab0, free1 = 0, slab1 = 0;
	ktime_t t0 = 0, t_traffic = 0, t_end = ktime_get();
	u64 conn_ns = 0, traffic_ns = 0;
	struct scale_run *run;
	int ret;

	if (scale_held)
		return -EBUSY;
	if (a->n > SCALE_MAX_CONNS || a->depth * a->size > SCALE_MAX_BUF)
		return -EINVAL;
	run = scale_run_alloc(a, SCALE_MODE_CONNS, a->n);
	if (!run)
		return -ENOMEM;
	free0 = scale_free_pages();
	slab0 = scale_slab_pages();
	ret = scale_run_connect(run, &t0);
	/* also when some were refused: the rate of those that connected */
	if (run->t_last_est)
		conn_ns = ktime_to_ns(ktime_sub(run->t_last_est, t0));
	if (!ret) {
		free1 = scale_free_pages();
		slab1 = scale_slab_pages();
		t_traffic = ktime_get();
		ret = scale_traffic(run);
		traffic_ns = ktime_to_ns(ktime_sub(ktime_get(), t_traffic));
	}
	scale_result("conns",
		     "n=%u qps=%u connected=%d established=%d connects_per_s=%llu connect_ms=%llu msgs=%llu verified=%lld bad_bytes=%lld size=%u count=%u depth=%u traffic_ms=%llu mem_per_qp=%lld slab_per_qp=%lld status=%s err=%s",
		     a->n, 2 * a->n, atomic_read(&run->connected),
		     atomic_read(&run->established),
		     scale_per_s(atomic_read(&run->connected), conn_ns),
		     conn_ns / NSEC_PER_MSEC,
		     2ULL * a->n * a->count,
		     (s64)atomic64_read(&run->verified),
		     (s64)atomic64_read(&run->bad), a->size, a->count, a->depth,
		     traffic_ns / NSEC_PER_MSEC,
		     ret ? 0 : scale_per_qp(free0 - free1, 2 * a->n),
		     ret ? 0 : scale_per_qp(slab1 - slab0, 2 * a->n),
		     ret ? "error" : "ok", SCALE_ERR(ret));
	if (!ret && a->hold) {
		scale_held = run;
		return 0;
	}
	t_end = ktime_get();
	scale_run_teardown(run);
	scale_result("teardown", "conns=%u teardown_ms=%lld disconnect_ms=%lld",
		     a->n, ktime_ms_delta(ktime_get(), t_end), run->disc_ms);
	scale_run_free(run);
	return ret;
}

int scale_release(void)
{
	struct scale_run *run = scale_held;
	ktime_t t0 = ktime_get();

	if (!run)
		return -ENOENT;
	scale_held = NULL;
	scale_run_teardown(run);
	scale_result("teardown", "conns=%u teardown_ms=%lld disconnect_ms=%lld",
		     run->nconns, ktime_ms_delta(ktime_get(), t0),
		     run->disc_ms);
	scale_run_free(run);
	return 0;
}

void scale_conn_exit(void)
{
	if (scale_held)
		scale_release();
}
