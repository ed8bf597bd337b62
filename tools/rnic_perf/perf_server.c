// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf's server: listeners on rdma_cm's TCP (RC) and UDP (UD) port
 * spaces, a connection per client run; it fast-registers its region,
 * tells the client where it is (INFO), checks what arrives and answers
 * the client's control messages.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>

#include "rnic_compat.h"
#include "rnic_perf.h"

static struct perf_server *perf_servers[8];
static LIST_HEAD(perf_conns);

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
	char line[PERF_LINE_LEN], ev[64];

	if (c->reported)
		return;
	c->reported = true;
	snprintf(line, sizeof(line),
		 "server peer=%pISpc dev=%s qp=%s op=%s size=%u count=%u rtr=%u resp_res=%d sge=%u rx_sge=%u rx_wr_sge=%u max_recv_sge=%d max_srq_sge=%d offset=%u iova_off=%lu verify=%u srq=%u srq_limit=%u srq_events=%u srq_event_msgs=%u inv=%s inv_checked=%u msgs=%u rx_bytes=%llu errors=%llu%s qp_events=%s status=%s",
		 &c->id->route.addr.dst_addr, dev_name(&c->dev->dev),
		 c->ud ? "ud" : "rc", perf_op_names[c->op], c->size, c->count,
		 c->rtr_hold, c->resp_res,
		 c->nsge, c->rx_nsge, c->rx_wr_sge, c->dev->attrs.max_recv_sge,
		 c->dev->attrs.max_srq_sge, c->offset,
		 c->mr ? offset_in_page(c->mr->iova) : 0UL, c->verify,
		 c->use_srq, c->srq_limit,
		 atomic_read(&c->srq_events), c->srq_event_rx,
		 perf_inv_names[c->inv], c->inv_checked, c->rx_data, c->rx_bytes,
		 c->errors,
		 c->errors ? " (first bad message below)" : "",
		 perf_qp_events(c, ev, sizeof(ev)),
		 c->errors || c->wc_err ? "fail" : "ok");
	perf_result_add(line);
	if (c->errors)
		pr_err("server: first bad byte: iteration %u offset %u\n",
		       c->first_bad_iter, c->first_bad_off);
}

/*
 * After an SRQ connection's QP was drained and destroyed: whether the
 * device raised LAST_WQE_REACHED (once), how long the drain took, and
 * the SRQ limit events once more.  The server line's count is a
 * snapshot taken at DONE, which an event still on its way (event queue
 * 0 is delivered by a work item, apart from the completions) misses;
 * here it cannot: the limit was crossed during the run, so its event
 * precedes LAST_WQE_REACHED, raised by the drain, on the same in-order
 * queue, and the drain waited for that one.
 */
static void perf_server_teardown_report(struct perf_conn *c)
{
	char line[PERF_LINE_LEN];

	snprintf(line, sizeof(line),
		 "teardown peer=%pISpc qp=%s srq=1 srq_limit=%u srq_events=%d srq_event_msgs=%u last_wqe_events=%d drain_ms=%u",
		 &c->id->route.addr.dst_addr, c->ud ? "ud" : "rc",
		 c->srq_limit, atomic_read(&c->srq_events), c->srq_event_rx,
		 atomic_read(&c->last_wqe_events), c->drain_ms);
	perf_result_add(line);
}

/* inv=: the region could not be invalidated as asked; the run fails. */
static void perf_server_inv_fail(struct perf_conn *c, struct perf_ctrl *r)
{
	perf_server_bad(c, 1, c->count, 0);
	r->status = cpu_to_be32(1);
	r->errors = cpu_to_be32(min_t(u64, c->errors, U32_MAX));
}

/* inv=local: the LOCAL_INV completed; only now does the client hear. */
static void perf_server_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct perf_ctrl r = { .type = cpu_to_be32(PERF_CTRL_REPLY) };
	struct perf_conn *c = cq->cq_context;

	perf_send_done(c);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	if (wc->status != IB_WC_SUCCESS) {
		pr_err("server: LOCAL_INV of rkey %#x failed: %s (%d), vendor_err %u\n",
		       c->mr->rkey, ib_wc_status_msg(wc->status), wc->status,
		       wc->vendor_err);
		perf_server_inv_fail(c, &r);
	} else if (wc->opcode != IB_WC_LOCAL_INV) {
		pr_err("server: LOCAL_INV of rkey %#x completed as opcode %d\n",
		       c->mr->rkey, wc->opcode);
		perf_server_inv_fail(c, &r);
	} else {
		c->inv_checked = true;
	}
	if (perf_send_ctrl(c, &r))
		c->wc_err = -EIO;
}

/*
 * inv=: the client is done with the region and has it invalidated, as
 * an FRWR ULP does with each buffer. local: our own LOCAL_INV, the reply
 * once it completed (perf_server_inv_done); remote: this message came as
 * a SEND_WITH_INV, its receive completion must say so and name our rkey.
 * True when the reply is to go now.
 */
static bool perf_server_inv(struct perf_conn *c, struct perf_ctrl *m,
			    struct ib_wc *wc, struct perf_ctrl *r)
{
	const struct ib_send_wr *bad;
	struct ib_send_wr wr = {};
	u32 rkey;

	if (!c->mr || c->inv == PERF_INV_NONE ||
	    be32_to_cpu(m->rkey) != c->mr->rkey) {
		pr_err("server: INV of rkey %#x, but inv=%s and our rkey is %#x\n",
		       be32_to_cpu(m->rkey), perf_inv_names[c->inv],
		       c->mr ? c->mr->rkey : 0);
		perf_server_inv_fail(c, r);
		return true;
	}
	rkey = c->mr->rkey;
	if (c->inv == PERF_INV_REMOTE) {
		if (!(wc->wc_flags & IB_WC_WITH_INVALIDATE)) {
			pr_err("server: the SEND_WITH_INV of rkey %#x completed without IB_WC_WITH_INVALIDATE\n",
			       rkey);
			perf_server_inv_fail(c, r);
		} else if (wc->ex.invalidate_rkey != rkey) {
			pr_err("server: SEND_WITH_INV invalidated rkey %#x, ours is %#x\n",
			       wc->ex.invalidate_rkey, rkey);
			perf_server_inv_fail(c, r);
		} else {
			c->inv_checked = true;
		}
		return true;
	}
	wr.opcode = IB_WR_LOCAL_INV;
	wr.wr_cqe = &c->inv_cqe;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = rkey;
	atomic_inc(&c->sq_pending);
	if (ib_post_send(c->qp, &wr, &bad)) {
		atomic_dec(&c->sq_pending);
		pr_err("server: posting LOCAL_INV of rkey %#x failed\n", rkey);
		perf_server_inv_fail(c, r);
		return true;
	}
	return false;
}

static void perf_server_ctrl(struct perf_conn *c, struct perf_ctrl *m,
			     struct ib_wc *wc)
{
	struct perf_ctrl r = { .type = cpu_to_be32(PERF_CTRL_REPLY) };
	u32 first = be32_to_cpu(m->first), n = be32_to_cpu(m->n);
	u32 type = be32_to_cpu(m->type);
	u32 k, errs = 0, bad = 0, slot;
	u64 val;

	if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) && type != PERF_CTRL_INV) {
		pr_err("server: control message %u invalidated rkey %#x\n",
		       type, wc->ex.invalidate_rkey);
		perf_server_bad(c, 1, c->count, 0);
	}
	switch (type) {
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
			errs = perf_check(c->rdata + slot * c->rstride, k, 0,
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
			perf_fill(c->rdata + slot * c->rstride, k, 0, c->size);
		}
		perf_region_for_dev(c);
		break;
	case PERF_CTRL_DONE:
		if (perf_op_is_atomic(c->op) && c->verify) {
			perf_region_for_cpu(c);
			val = *(u64 *)c->rdata;
			if (val != be64_to_cpu(m->val)) {
				pr_err("server: atomic target is %#llx, expected %#llx\n",
				       val, be64_to_cpu(m->val));
				perf_server_bad(c, 8, c->count, 0);
			}
		}
		if (c->inv != PERF_INV_NONE && !c->inv_checked) {
			pr_err("server: inv=%s: the test ended, the region was not invalidated\n",
			       perf_inv_names[c->inv]);
			perf_server_bad(c, 1, c->count, 0);
		}
		/* the test is over: report now, not at the disconnect */
		perf_server_report(c);
		r.errors = cpu_to_be32(min_t(u64, c->errors, U32_MAX));
		r.msgs = cpu_to_be32(c->rx_data);
		c->release_after_tx = c->ud;
		break;
	case PERF_CTRL_INV:
		if (!perf_server_inv(c, m, wc, &r))
			return;
		break;
	default:
		pr_err("server: unknown control message %u\n", type);
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
void perf_server_rx_done(struct ib_cq *cq, struct ib_wc *wc)
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
	if (c->rtr_hold && !c->hello_got) {
		/* rtr=1: the message that found our QP in RTR */
		c->hello_got = true;
		if (len == sizeof(m))
			perf_copy_msg(&m, buf, c->rx_len - c->grh, c->rx_nsge, sizeof(m));
		if (len != sizeof(m) || be32_to_cpu(m.magic) != PERF_MAGIC ||
		    be32_to_cpu(m.type) != PERF_CTRL_HELLO) {
			pr_err("server: rtr=1: the first message is not the client's HELLO\n");
			c->wc_err = -EPROTO;
		}
	} else if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
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
		c->rx_bytes += len;
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
			perf_server_ctrl(c, &m, wc);
	} else {
		pr_err("server: unexpected %u-byte message\n", len);
		c->wc_err = -EPROTO;
	}
	if (data && c->use_srq)
		return;
	if (perf_post_rx(c, r))
		c->wc_err = -EIO;
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
	if (c->use_srq)
		perf_server_teardown_report(c);
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
		ret = ib_post_send(c->qp, &reg.wr, &bad);
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

/*
 * A test the device cannot run (c->why says why): reject it with the
 * reason, which the client logs; other setup failures leave the reject to
 * rdma_cm, as before.
 */
static void perf_server_refuse(struct perf_conn *c, int err)
{
	struct perf_rej rej = {
		.magic = cpu_to_be32(PERF_MAGIC),
		.err = cpu_to_be32(-err),
	};

	if (!c->why[0])
		return;
	strscpy(rej.msg, c->why, sizeof(rej.msg));
	rdma_reject(c->id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * rtr=1, at ESTABLISHED (the RTU, or rdma_notify() on COMM_EST if the RTU
 * is late): the QP is still in RTR and only the client's HELLO, received
 * there, raises COMM_EST (perf_qp_event()); then to RTS. Sleeping here
 * holds this id's CM events only; the event comes through the device's
 * event queue, not the CM.
 */
static int perf_server_rts(struct perf_conn *c)
{
	if (!wait_for_completion_timeout(&c->comm_est, PERF_RTR_WAIT)) {
		pr_err("server: rtr=1: QP %u got no COMM_EST in %u ms after the connection was established\n",
		       c->qp->qp_num, jiffies_to_msecs(PERF_RTR_WAIT));
		return -ETIMEDOUT;
	}
	return perf_qp_to(c, IB_QPS_RTS, c->init_depth);
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
	    be32_to_cpu(req->magic) != PERF_MAGIC || req->op >= PERF_NR_OPS ||
	    be32_to_cpu(req->offset) >= PAGE_SIZE) {
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
	c->nsge = max_t(u32, req->nsge, 1);
	/* rx_sge=: perf_conn_setup checks it against the device */
	c->rx_nsge = req->rx_sge;
	c->rx_sge_max = req->flags & PERF_REQ_F_RX_SGE_MAX;
	/* the region's first byte in its page (offset=) */
	c->offset = be32_to_cpu(req->offset);
	c->verify = req->verify;
	c->size = clamp_t(u32, be32_to_cpu(req->size), 1, PERF_MAX_SIZE);
	c->depth = clamp_t(u32, be32_to_cpu(req->depth), 1, PERF_MAX_DEPTH);
	c->count = be32_to_cpu(req->count);
	c->fault = req->fault < PERF_NR_FAULTS ? req->fault : PERF_FAULT_NONE;
	c->ud = ud;
	c->use_srq = req->flags & PERF_REQ_F_SRQ;
	c->srq_limit = be32_to_cpu(req->srq_limit);
	c->inv = req->inv < PERF_NR_INVS ? req->inv : PERF_INV_NONE;
	c->rtr_hold = !ud && (req->flags & PERF_REQ_F_RTR);
	c->resp_res = !ud && (req->flags & PERF_REQ_F_RESP_RES) ?
		      req->resp_res : -1;
	c->own_qp = c->rtr_hold || c->resp_res >= 0;
	c->inv_cqe.done = perf_server_inv_done;
	init_waitqueue_head(&c->wq);
	INIT_WORK(&c->release_work, perf_release_work);
	id->context = c;

	ret = perf_conn_setup(c);
	if (ret) {
		perf_server_refuse(c, ret);
		goto err;
	}
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
	/*
	 * Our own QP: to RTR before the REP, as rdma_cm does with its own
	 * (resp_res= gives it fewer READs than the REP offers), and to RTS
	 * now too, unless rtr=1 holds it in RTR until the client's first
	 * message raises COMM_EST (perf_server_rts()).
	 */
	if (c->own_qp) {
		c->init_depth = cp.initiator_depth;
		ret = perf_qp_to(c, IB_QPS_RTR, c->resp_res >= 0 ? c->resp_res :
				 cp.responder_resources);
		if (!ret && !c->rtr_hold)
			ret = perf_qp_to(c, IB_QPS_RTS, c->init_depth);
		if (ret)
			goto err;
		cp.qp_num = c->qp->qp_num;
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

void perf_conn_release(struct perf_conn *c)
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
		if (c->rtr_hold && perf_server_rts(c)) {
			c->wc_err = -ETIMEDOUT;
			rdma_disconnect(id);
			break;
		}
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

int perf_server_start(struct sockaddr_storage *addr)
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

/* The listening addresses, for the control file. */
void perf_servers_show(struct seq_file *m)
{
	int i;

	mutex_lock(&perf_lock);
	for (i = 0; i < ARRAY_SIZE(perf_servers); i++)
		if (perf_servers[i])
			seq_printf(m, " %pISpc", &perf_servers[i]->addr);
	mutex_unlock(&perf_lock);
}

void perf_stop_all(void)
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
