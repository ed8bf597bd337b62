// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_scale: the commands over one rdma_cm loopback connection
 * (Documentation/rnic_scale.rst): mr_churn, the life of fast-registered
 * MRs, and cq_overflow, what the device says when a CQ overflows.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rnic_scale.h"
#include "rnic_scale_conn.h"

/* ------------------------------------------------------------- mr_churn */

/* Pages for DMA: each registration's target. */
struct scale_pages {
	struct sg_table sgt;
	u32 n;			/* pages allocated */
	int nents;		/* entries mapped; 0: not mapped */
};

static void scale_pages_free(struct ib_device *dev, struct scale_pages *p)
{
	struct scatterlist *sg;
	u32 i;

	if (p->nents)
		ib_dma_unmap_sg(dev, p->sgt.sgl, p->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	if (p->sgt.sgl) {
		for_each_sg(p->sgt.sgl, sg, p->n, i)
			__free_page(sg_page(sg));
		sg_free_table(&p->sgt);
	}
	memset(p, 0, sizeof(*p));
}

static int scale_pages_alloc(struct ib_device *dev, struct scale_pages *p,
			     u32 n)
{
	struct scatterlist *sg;
	struct page *pg;
	u32 i;

	if (sg_alloc_table(&p->sgt, n, GFP_KERNEL))
		return -ENOMEM;
	for_each_sg(p->sgt.sgl, sg, n, i) {
		pg = alloc_page(GFP_KERNEL);
		if (!pg)
			return -ENOMEM;
		sg_set_page(sg, pg, PAGE_SIZE, 0);
		p->n++;
	}
	p->nents = ib_dma_map_sg(dev, p->sgt.sgl, n, DMA_BIDIRECTIONAL);
	return p->nents ? 0 : -ENOMEM;
}

/* What mr_churn holds beyond its connection. */
struct scale_churn {
	u32 pages;
	struct page **src;	/* the client's source, one page per SGE */
	u64 *src_dma;
	u32 nsrc;		/* pages of src mapped */
	struct ib_rdma_wr *wrs;	/* one batch of WRITEs */
	struct ib_sge *sges;
	struct ib_mr *mr;	/* the registration of this iteration */
	struct scale_pages dst;
	u64 bytes;		/* verified */
	u64 bad;
};

static void scale_churn_put(struct ib_device *dev, struct scale_churn *ch)
{
	if (ch->mr)
		ib_dereg_mr(ch->mr);
	ch->mr = NULL;
	scale_pages_free(dev, &ch->dst);
}

static void scale_churn_free(struct ib_device *dev, struct scale_churn *ch)
{
	u32 i;

	scale_churn_put(dev, ch);
	for (i = 0; i < ch->nsrc; i++)
		ib_dma_unmap_page(dev, ch->src_dma[i], PAGE_SIZE,
				  DMA_TO_DEVICE);
	for (i = 0; ch->src && i < ch->pages; i++)
		if (ch->src[i])
			__free_page(ch->src[i]);
	kfree(ch->src);
	kfree(ch->src_dma);
	kfree(ch->wrs);
	kfree(ch->sges);
}

static int scale_churn_alloc(struct scale_run *run, struct scale_churn *ch)
{
	struct ib_device *dev = run->dev;
	u64 dma;
	u32 i;

	ch->src = kcalloc(ch->pages, sizeof(*ch->src), GFP_KERNEL);
	ch->src_dma = kcalloc(ch->pages, sizeof(*ch->src_dma), GFP_KERNEL);
	ch->wrs = kcalloc(SCALE_CHURN_BATCH, sizeof(*ch->wrs), GFP_KERNEL);
	ch->sges = kcalloc(SCALE_CHURN_BATCH * run->send_sge,
			   sizeof(*ch->sges), GFP_KERNEL);
	if (!ch->src || !ch->src_dma || !ch->wrs || !ch->sges)
		return -ENOMEM;
	for (i = 0; i < ch->pages; i++) {
		ch->src[i] = alloc_page(GFP_KERNEL);
		if (!ch->src[i])
			return -ENOMEM;
		dma = ib_dma_map_page(dev, ch->src[i], 0, PAGE_SIZE,
				      DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, dma))
			return -ENOMEM;
		ch->src_dma[ch->nsrc++] = dma;
	}
	return 0;
}

/*
 * Post the chain from @wr to @last, @last signalled: completions come in
 * order, so its completion says the whole chain completed.
 */
static int scale_post_wait(struct ib_qp *qp, struct ib_send_wr *wr,
			   struct ib_send_wr *last, struct scale_wait *w)
{
	int ret;

	last->wr_cqe = &w->cqe;
	last->send_flags |= IB_SEND_SIGNALED;
	ret = ib_post_send(qp, wr, NULL);
	return ret ?: scale_wait_for(w);
}

/* The client writes its source, every page, into the registration. */
static int scale_churn_write(struct scale_run *run, struct scale_churn *ch,
			     u32 iter)
{
	struct ib_qp *qp = run->cli[0]->id->qp;
	u32 sge = run->send_sge, j = 0, k, i, nwr;
	void *va;
	int ret;

	for (i = 0; i < ch->pages; i++) {
		va = kmap_local_page(ch->src[i]);
		scale_fill(va, PAGE_SIZE, i, iter, SCALE_KIND_CHURN);
		kunmap_local(va);
		ib_dma_sync_single_for_device(run->dev, ch->src_dma[i],
					      PAGE_SIZE, DMA_TO_DEVICE);
	}
	while (j < ch->pages) {
		for (nwr = 0; nwr < SCALE_CHURN_BATCH && j < ch->pages; nwr++) {
			k = min(ch->pages - j, sge);
			for (i = 0; i < k; i++) {
				ch->sges[nwr * sge + i].addr = ch->src_dma[j + i];
				ch->sges[nwr * sge + i].length = PAGE_SIZE;
				ch->sges[nwr * sge + i].lkey =
					run->pd->local_dma_lkey;
			}
			ch->wrs[nwr] = (struct ib_rdma_wr) {
				.wr = {
					.sg_list = &ch->sges[nwr * sge],
					.num_sge = k,
					.opcode = IB_WR_RDMA_WRITE,
				},
				.remote_addr = ch->mr->iova +
					       (u64)j * PAGE_SIZE,
				.rkey = ch->mr->rkey,
			};
			if (nwr)
				ch->wrs[nwr - 1].wr.next = &ch->wrs[nwr].wr;
			j += k;
		}
		ret = scale_post_wait(qp, &ch->wrs[0].wr, &ch->wrs[nwr - 1].wr,
				      &run->w_write);
		if (ret)
			return ret;
	}
	return 0;
}

/* The server checks every page the client wrote. */
static void scale_churn_verify(struct scale_run *run, struct scale_churn *ch,
			       u32 iter)
{
	struct scatterlist *sg;
	u32 i, bad;
	void *va;

	if (!ib_uses_virt_dma(run->dev))
		dma_sync_sg_for_cpu(run->dev->dma_device, ch->dst.sgt.sgl,
				    ch->dst.sgt.orig_nents, DMA_BIDIRECTIONAL);
	for_each_sg(ch->dst.sgt.sgl, sg, ch->dst.n, i) {
		va = kmap_local_page(sg_page(sg));
		bad = scale_check(va, PAGE_SIZE, i, iter, SCALE_KIND_CHURN);
		kunmap_local(va);
		if (bad)
			pr_err_ratelimited("mr_churn: registration %u page %u: %u bytes wrong\n",
					   iter, i, bad);
		ch->bad += bad;
		ch->bytes += PAGE_SIZE - bad;
	}
}

/**
 * scale_churn_one() - one registration's life
 * @run: the run, connected
 * @ch: the churn's state
 * @iter: the registration number
 *
 * ib_alloc_mr(), ib_map_mr_sg() over fresh pages, REG_MR (with a new key)
 * on the server's QP, RDMA WRITE of every page by the client through the
 * rkey and a SEND that says so, the check of every byte, LOCAL_INV and
 * ib_dereg_mr().
 *
 * Return: 0 or a negative errno (-EILSEQ: data wrong).
 */
static int scale_churn_one(struct scale_run *run, struct scale_churn *ch,
			   u32 iter)
{
	struct ib_qp *sqp = run->srv[0]->id->qp;
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_send_wr note = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.ex.imm_data = cpu_to_be32(iter),
	};
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	u64 bad = ch->bad;
	long t;
	int ret;

	ch->mr = ib_alloc_mr(run->pd, IB_MR_TYPE_MEM_REG, ch->pages);
	if (IS_ERR(ch->mr)) {
		ret = PTR_ERR(ch->mr);
		ch->mr = NULL;
		return ret;
	}
	ret = scale_pages_alloc(run->dev, &ch->dst, ch->pages);
	if (ret)
		return ret;
	ret = ib_map_mr_sg(ch->mr, ch->dst.sgt.sgl, ch->dst.nents, NULL,
			   PAGE_SIZE);
	if (ret != ch->dst.nents)
		return ret < 0 ? ret : -EINVAL;
	/* a new key each time: a stale rkey must not reach the new pages */
	ib_update_fast_reg_key(ch->mr, ib_inc_rkey(ch->mr->rkey));
	reg.mr = ch->mr;
	reg.key = ch->mr->rkey;
	ret = scale_post_wait(sqp, &reg.wr, &reg.wr, &run->w_reg);
	if (!ret)
		ret = scale_churn_write(run, ch, iter);
	if (!ret)
		ret = scale_post_wait(run->cli[0]->id->qp, &note, &note,
				      &run->w_send);
	if (ret)
		return ret;
	t = wait_for_completion_interruptible_timeout(&run->churn_rx,
						      SCALE_WR_TIMEOUT);
	if (t <= 0)
		return t ? -EINTR : -ETIMEDOUT;
	if (READ_ONCE(run->churn_iter) != iter)
		return -EPROTO;
	scale_churn_verify(run, ch, iter);
	inv.ex.invalidate_rkey = ch->mr->rkey;
	ret = scale_post_wait(sqp, &inv, &inv, &run->w_inv);
	if (ret)
		return ret;
	scale_churn_put(run->dev, ch);
	return ch->bad == bad ? 0 : -EILSEQ;
}

int scale_mr_churn(const struct scale_conn_args *a)
{
	struct scale_churn ch = {};
	struct scale_run *run;
	ktime_t t0, t1;
	u64 ns = 0;
	u32 i = 0;
	int ret;

	run = scale_run_alloc(a, SCALE_MODE_CHURN, 1);
	if (!run)
		return -ENOMEM;
	run->sq_extra = SCALE_CHURN_BATCH + 2;
	ret = scale_listen(run);
	if (ret)
		goto out;
	run->send_sge = min_t(u32, run->dev->attrs.max_send_sge, 16);
	ch.pages = min(a->pages, run->dev->attrs.max_fast_reg_page_list_len);
	if (!ch.pages) {
		ret = -EOPNOTSUPP;	/* no fast registration */
		goto out;
	}
	ret = scale_churn_alloc(run, &ch);
	if (!ret)
		ret = scale_run_connect(run, &t0);
	t1 = ktime_get();
	for (i = 0; !ret && i < a->n; i++) {
		ret = scale_churn_one(run, &ch, i);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	ns = ktime_to_ns(ktime_sub(ktime_get(), t1));
out:
	scale_result("mr_churn",
		     "n=%u regs=%u pages=%u max_pages=%u regs_per_s=%llu ms=%llu bytes_verified=%llu bad_bytes=%llu status=%s err=%s",
		     a->n, ret ? (i ? i - 1 : 0) : i, ch.pages,
		     run->dev ? run->dev->attrs.max_fast_reg_page_list_len : 0,
		     scale_per_s(ret ? 0 : i, ns), ns / NSEC_PER_MSEC,
		     ch.bytes, ch.bad, ret ? "error" : "ok", SCALE_ERR(ret));
	/* the QPs drained before the pages and MR they may still touch go */
	scale_run_teardown(run);
	if (run->dev)
		scale_churn_free(run->dev, &ch);
	scale_run_free(run);
	return ret;
}

/* ---------------------------------------------------------- cq_overflow */

/* cq_overflow's WRs are never polled: their CQ is to overflow */
static void scale_ovf_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static void scale_ovf_comp(struct ib_cq *cq, void *ctx)
{
}

static void scale_ovf_cq_event(struct ib_event *ev, void *ctx)
{
	struct scale_run *run = ctx;

	if (ev->event != IB_EVENT_CQ_ERR) {
		pr_warn("cq_overflow: CQ event %s\n", ib_event_msg(ev->event));
		return;
	}
	if (atomic_inc_return(&run->cq_err) == 1)
		run->t_cq_err = ktime_get();
	wake_up(&run->wq);
}

/* An IPv4 address of @dev's port 1: an IPv4-mapped GID of its table. */
static int scale_dev_addr(struct ib_device *dev, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	u32 port = rdma_start_port(dev);
	const struct ib_gid_attr *attr;
	u32 i;

	for (i = 0; i < dev->port_data[port].immutable.gid_tbl_len; i++) {
		attr = rdma_get_gid_attr(dev, port, i);
		if (IS_ERR(attr))
			continue;
		if (ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			memset(ss, 0, sizeof(*ss));
			sin->sin_family = AF_INET;
			memcpy(&sin->sin_addr, attr->gid.raw + 12, 4);
			rdma_put_gid_attr(attr);
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -EADDRNOTAVAIL;
}

static s64 scale_ms_since(ktime_t t, ktime_t t0)
{
	return t ? ktime_ms_delta(t, t0) : -1;
}

/*
 * @nwr signalled WRITEs of the client's first 8 bytes to its server's
 * target, completing as @cqe on the client's own send CQ.
 */
static int scale_post_writes(struct scale_run *run, struct ib_cqe *cqe,
			     u32 nwr, u32 *posted)
{
	struct scale_conn *c = run->cli[0];
	struct ib_sge sge = {
		.addr = c->buf_dma,
		.length = 8,
		.lkey = run->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = cqe,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = c->raddr,
		.rkey = c->rkey,
	};
	int ret = 0;

	/* one at a time: a refusal says after how many */
	for (*posted = 0; *posted < nwr && !ret; (*posted)++)
		ret = ib_post_send(c->id->qp, &wr.wr, NULL);
	if (ret)
		(*posted)--;
	return ret;
}

/*
 * A run of one connection on @dev, through @a's address or one of @dev's,
 * or NULL with *@err set.
 */
static struct scale_run *scale_one_run(struct ib_device *dev,
				       const struct scale_conn_args *a,
				       enum scale_mode mode, int *err)
{
	struct scale_conn_args oa = *a;
	struct scale_run *run;

	*err = 0;
	if (oa.addr.ss_family == AF_UNSPEC) {
		*err = scale_dev_addr(dev, &oa.addr);
		if (*err)
			return NULL;
		((struct sockaddr_in *)&oa.addr)->sin_port = htons(oa.port);
	}
	run = scale_run_alloc(&oa, mode, 1);
	if (!run)
		*err = -ENOMEM;
	return run;
}

int scale_cq_overflow(struct ib_device *dev, const struct scale_conn_args *a)
{
	struct ib_cq_init_attr ca = { .cqe = 1 };
	struct scale_run *run;
	u32 nwr = 0, posted = 0;
	int ret, post_err = 0;
	ktime_t t0, tp = 0;
	bool ok = false;

	run = scale_one_run(dev, a, SCALE_MODE_OVF, &ret);
	if (!run)
		return ret;
	run->ovf_cqe.done = scale_ovf_done;
	run->ovf_cq = ib_create_cq(dev, scale_ovf_comp, scale_ovf_cq_event,
				   run, &ca);
	if (IS_ERR(run->ovf_cq)) {
		ret = PTR_ERR(run->ovf_cq);
		run->ovf_cq = NULL;
		goto out;
	}
	nwr = run->ovf_cq->cqe + 1 + SCALE_OVF_EXTRA;
	run->sq_extra = nwr;
	ret = scale_run_connect(run, &t0);
	if (!ret && run->dev != dev)
		ret = -EXDEV;
	if (ret)
		goto out;
	tp = ktime_get();
	post_err = scale_post_writes(run, &run->ovf_cqe, nwr, &posted);
	wait_event_interruptible_timeout(run->wq,
					 atomic_read(&run->cq_err) &&
					 atomic_read(&run->qp_fatal),
					 SCALE_OVF_TIMEOUT);
	ok = atomic_read(&run->cq_err) && atomic_read(&run->qp_fatal);
	/* no event as the verbs define it: the device did not tell */
	ret = ok ? 0 : -ETIMEDOUT;
out:
	scale_result("cq_overflow",
		     "dev=%s cqe=%d posted=%u wrs=%u post_err=%s cq_err_events=%d cq_err_ms=%lld qp_fatal_events=%d qp_fatal_ms=%lld qp_other_events=%d qp_other=%s status=%s err=%s",
		     dev_name(&dev->dev), run->ovf_cq ? run->ovf_cq->cqe : 0,
		     posted, nwr, SCALE_ERR(post_err), atomic_read(&run->cq_err),
		     scale_ms_since(run->t_cq_err, tp),
		     atomic_read(&run->qp_fatal),
		     scale_ms_since(run->t_qp_fatal, tp),
		     atomic_read(&run->qp_other),
		     atomic_read(&run->qp_other) ?
		     ib_event_msg(run->qp_other_event) : "none",
		     ok ? "ok" : "fail", SCALE_ERR(ret));
	scale_run_free(run);
	return ret;
}

/* ------------------------------------------------------------- qp_reset */

/* qp_reset's completion events: it polls its CQ itself */
static void scale_reset_comp(struct ib_cq *cq, void *ctx)
{
	struct scale_run *run = ctx;

	atomic_inc(&run->cq_events);
	wake_up(&run->wq);
}

/* The next CQE of @cq within @tmo jiffies: 1, or 0 if none came. */
static int scale_poll_one(struct ib_cq *cq, struct ib_wc *wc,
			  unsigned long tmo)
{
	unsigned long end = jiffies + tmo;

	do {
		if (ib_poll_cq(cq, 1, wc) > 0)
			return 1;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return 0;
}

/*
 * The client's QP back from RESET to RTS on its connection (rdma_cm's
 * attributes), its PSNs where the server's QP is now: the server expects
 * the PSN after the WRITEs it received.
 */
static int scale_reset_reconnect(struct scale_conn *c, struct scale_conn *s)
{
	static const enum ib_qp_state next[] = {
		IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS,
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr sa, qa;
	int i, mask, ret;

	ret = ib_query_qp(s->id->qp, &sa, IB_QP_SQ_PSN | IB_QP_RQ_PSN, &init);
	for (i = 0; !ret && i < ARRAY_SIZE(next); i++) {
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = next[i];
		ret = rdma_init_qp_attr(c->id, &qa, &mask);
		if (ret)
			break;
		if (next[i] == IB_QPS_RTR)
			qa.rq_psn = sa.sq_psn;
		if (next[i] == IB_QPS_RTS)
			qa.sq_psn = sa.rq_psn;
		ret = ib_modify_qp(c->id->qp, &qa, mask);
	}
	return ret;
}

/*
 * One WRITE of iteration @iter's pattern after the reset, then its CQ
 * polled: the first CQE must be @cqe's, successful, alone (no CQE within
 * 100 ms after it), and the pattern must be at the server. *@first names
 * what came first ("new", "stale": a WRITE's from before the reset,
 * "unknown", "none"), *@wc is that CQE.
 * Return: 0, -EIO if a check failed, or the errno of the post.
 */
static int scale_reset_write(struct scale_run *run, struct ib_cqe *cqe,
			     u32 iter, const char **first, u32 *extra,
			     u32 *bad, struct ib_wc *wc)
{
	struct scale_conn *c = run->cli[0], *s = run->srv[0];
	struct ib_device *dev = run->dev;
	struct ib_wc more;
	u32 one;
	int ret;

	*first = "none";
	*extra = 0;
	ib_dma_sync_single_for_cpu(dev, sg_dma_address(&s->wsg), 8,
				   DMA_BIDIRECTIONAL);
	memset(s->wbuf, 0, 8);
	ib_dma_sync_single_for_device(dev, sg_dma_address(&s->wsg), 8,
				      DMA_BIDIRECTIONAL);
	ib_dma_sync_single_for_cpu(dev, c->buf_dma, 8, DMA_BIDIRECTIONAL);
	scale_fill(c->buf, 8, 0, iter, SCALE_KIND_RESET);
	ib_dma_sync_single_for_device(dev, c->buf_dma, 8, DMA_BIDIRECTIONAL);
	ret = scale_post_writes(run, cqe, 1, &one);
	if (ret)
		return ret;
	if (scale_poll_one(run->ovf_cq, wc, SCALE_RESET_TIMEOUT))
		*first = wc->wr_cqe == cqe ? "new" :
			 wc->wr_cqe == &run->ovf_cqe ? "stale" : "unknown";
	/* anything after it: a stale CQE, or the new one behind a stale */
	while (*extra < 2 * SCALE_RESET_WRS &&
	       scale_poll_one(run->ovf_cq, &more, msecs_to_jiffies(100)))
		(*extra)++;
	ib_dma_sync_single_for_cpu(dev, sg_dma_address(&s->wsg), 8,
				   DMA_BIDIRECTIONAL);
	*bad = scale_check(s->wbuf, 8, 0, iter, SCALE_KIND_RESET);
	if (strcmp(*first, "new") || wc->status != IB_WC_SUCCESS || *extra ||
	    *bad)
		return -EIO;
	return 0;
}

/*
 * A QP moved to RESET with CQEs of its WRs still unpolled in its CQ,
 * then back to RTS: the CQ must not hand those CQEs out afterwards (the
 * driver scrubs them, mlx5 does the same). The client's send CQ is its
 * own, polled only here: SCALE_RESET_WRS signalled WRITEs, at least one
 * CQE seen (the CQ armed with IB_CQ_REPORT_MISSED_EVENTS says so, or its
 * event), RESET, INIT, RTR, RTS, then two WRITEs of new patterns, one at
 * a time (scale_reset_write()), and the QP still in RTS. A stale CQE
 * that took the place of the first new one shows in the second: a driver
 * that then finds the real one "not outstanding" fails the QP. The lab
 * reads the driver's cqes_scrubbed.
 */
int scale_qp_reset(struct ib_device *dev, const struct scale_conn_args *a)
{
	struct ib_cq_init_attr ca = { .cqe = 2 * SCALE_RESET_WRS };
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET }, qa;
	const char *first = "none", *step = "connect";
	const char *state = "unread";	/* the QP's, read at the end */
	u32 posted = 0, extra = 0, bad = 0, n = 0;
	struct ib_cqe new_cqe[2] = {};
	struct ib_qp_init_attr init;
	struct scale_conn *c, *s;
	struct scale_run *run;
	struct ib_wc wc = {};
	int ret, armed = 0;
	ktime_t t0;
	bool ok;

	run = scale_one_run(dev, a, SCALE_MODE_RESET, &ret);
	if (!run)
		return ret;
	run->ovf_cqe.done = scale_ovf_done;
	new_cqe[0].done = scale_ovf_done;
	new_cqe[1].done = scale_ovf_done;
	run->ovf_cq = ib_create_cq(dev, scale_reset_comp, scale_ovf_cq_event,
				   run, &ca);
	if (IS_ERR(run->ovf_cq)) {
		ret = PTR_ERR(run->ovf_cq);
		run->ovf_cq = NULL;
		goto out;
	}
	run->sq_extra = SCALE_RESET_WRS + 1;
	ret = scale_run_connect(run, &t0);
	if (!ret && run->dev != dev)
		ret = -EXDEV;
	if (ret)
		goto out;
	c = run->cli[0];
	s = run->srv[0];

	step = "post";
	ret = scale_post_writes(run, &run->ovf_cqe, SCALE_RESET_WRS, &posted);
	if (ret)
		goto out;
	step = "wait";
	armed = ib_req_notify_cq(run->ovf_cq, IB_CQ_NEXT_COMP |
				 IB_CQ_REPORT_MISSED_EVENTS);
	if (armed < 0) {
		ret = armed;
		goto out;
	}
	if (!armed &&
	    !wait_event_timeout(run->wq, atomic_read(&run->cq_events),
				SCALE_RESET_TIMEOUT)) {
		ret = -ETIMEDOUT;
		goto out;
	}

	step = "reset";
	ret = ib_modify_qp(c->id->qp, &reset, IB_QP_STATE);
	if (ret)
		goto out;
	step = "reconnect";
	ret = scale_reset_reconnect(c, s);
	if (ret)
		goto out;

	for (n = 0; n < ARRAY_SIZE(new_cqe); n++) {
		step = n ? "write2" : "write";
		ret = scale_reset_write(run, &new_cqe[n], n, &first, &extra,
					&bad, &wc);
		if (ret)
			goto out;
	}
	step = "query";
	ret = ib_query_qp(c->id->qp, &qa, IB_QP_STATE, &init);
	if (ret)
		goto out;
	state = qa.qp_state == IB_QPS_RTS ? "RTS" :
		qa.qp_state == IB_QPS_ERR ? "ERR" : "other";
	step = "done";
out:
	ok = !ret && !strcmp(state, "RTS") && !atomic_read(&run->cq_err) &&
	     !atomic_read(&run->qp_fatal) && !atomic_read(&run->qp_other);
	if (!ret && !ok)
		ret = -EIO;
	scale_result("qp_reset",
		     "dev=%s wrs=%u posted=%u cqes_before_reset=%s writes_after=%u first=%s first_status=%s extra_cqes=%u bad_bytes=%u qp_state=%s cq_err_events=%d qp_fatal_events=%d qp_other=%s step=%s status=%s err=%s",
		     dev_name(&dev->dev), SCALE_RESET_WRS, posted,
		     armed > 0 ? "seen_at_arm" : "event", n, first,
		     strcmp(first, "none") ? ib_wc_status_msg(wc.status) : "none",
		     extra, bad, state,
		     atomic_read(&run->cq_err), atomic_read(&run->qp_fatal),
		     atomic_read(&run->qp_other) ?
		     ib_event_msg(run->qp_other_event) : "none",
		     step, ok ? "ok" : "fail", SCALE_ERR(ret));
	scale_run_free(run);
	return ret;
}
