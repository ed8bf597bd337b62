// SPDX-License-Identifier: GPL-2.0
/*
 * rnic_perf: what client and server share. The data pattern and its
 * scatter-gather layout, DMA-mapped buffers, the server's fast-registered
 * region, control messages, and a connection's setup (PD, CQ, QP, SRQ,
 * buffers, posted receives), drain and teardown.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rnic_compat.h"
#include "rnic_perf.h"

/* ------------------------------------------------------------ pattern */

u32 perf_word(u32 iter, u32 w)
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
void perf_fill(u8 *dst, u32 iter, u32 off, u32 len)
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
u32 perf_check(const u8 *src, u32 iter, u32 off, u32 len, u32 *bad)
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

/* How many SGEs a buffer of len bytes split for nsge gets. */
u32 perf_npieces(u32 len, u32 nsge)
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
int perf_sges(struct ib_sge *sge, u64 base, u32 len, u32 nsge, u32 lkey)
{
	u32 j, moff, plen, n = perf_npieces(len, nsge);

	for (j = 0; j < n; j++) {
		sge[j].addr = base + perf_layout(len, nsge, j, &moff, &plen);
		sge[j].length = plen;
		sge[j].lkey = lkey;
	}
	return n;
}

void perf_fill_msg(u8 *buf, u32 len, u32 nsge, u32 iter)
{
	u32 j, moff, plen, boff;

	for (j = 0; j < perf_npieces(len, nsge); j++) {
		boff = perf_layout(len, nsge, j, &moff, &plen);
		perf_fill(buf + boff, iter, moff, plen);
	}
}

/* Check the first msg_len message bytes of a buffer laid out for len. */
u32 perf_check_msg(const u8 *buf, u32 len, u32 nsge, u32 msg_len,
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
void perf_copy_msg(void *dst, const u8 *buf, u32 len, u32 nsge, u32 n)
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

/*
 * A client slot: whole pages, its first byte off bytes into the first
 * page (offset=), so the SGEs that start there have that page offset
 * whatever the allocator would have given.
 */
static int perf_buf_alloc_pages(struct perf_conn *c, struct perf_buf *b,
				u32 len, u32 off)
{
	b->len = len;
	b->alloc = PAGE_ALIGN((size_t)off + len);
	b->base = alloc_pages_exact(b->alloc, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	if (!b->base)
		return -ENOMEM;
	b->va = b->base + off;
	b->dma = ib_dma_map_single(c->dev, b->va, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, b->dma)) {
		free_pages_exact(b->base, b->alloc);
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
	if (b->alloc)
		free_pages_exact(b->base, b->alloc);
	else
		kfree(b->va);
	b->va = NULL;
}

void perf_buf_for_cpu(struct perf_conn *c, struct perf_buf *b)
{
	ib_dma_sync_single_for_cpu(c->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
}

void perf_buf_for_dev(struct perf_conn *c, struct perf_buf *b)
{
	ib_dma_sync_single_for_device(c->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
}

void perf_region_for_cpu(struct perf_conn *c)
{
	if (!ib_uses_virt_dma(c->dev))
		dma_sync_sgtable_for_cpu(c->dev->dma_device, &c->sgt,
					 DMA_BIDIRECTIONAL);
}

void perf_region_for_dev(struct perf_conn *c)
{
	if (!ib_uses_virt_dma(c->dev))
		dma_sync_sgtable_for_device(c->dev->dma_device, &c->sgt,
					    DMA_BIDIRECTIONAL);
}

/*
 * The server's buffer: rslots slots of rstride bytes, in single pages;
 * slot 0 starts offset bytes into the first page (offset=), and so does
 * the MR: its sg list starts there, so ib_map_mr_sg gives it an iova
 * with that page offset.
 */
static int perf_region_alloc(struct perf_conn *c)
{
	struct ib_device_attr *attr = &c->dev->attrs;
	u32 maxpg = min(attr->max_fast_reg_page_list_len, PERF_MAX_REGION_PAGES);
	u64 room = (u64)maxpg * PAGE_SIZE;
	u32 i, len;
	int ret;

	room = room > c->offset ? room - c->offset : 0;
	c->rstride = ALIGN(perf_op_is_atomic(c->op) ? 8 : c->size, 64);
	c->rslots = min_t(u64, c->depth, div_u64(room, c->rstride));
	if (!c->rslots) {
		pr_err("%s: size %u at offset %u needs more than the device's %u fast-reg pages\n",
		       dev_name(&c->dev->dev), c->size, c->offset, maxpg);
		return -EINVAL;
	}
	len = c->rslots * c->rstride;
	c->npages = DIV_ROUND_UP(c->offset + len, PAGE_SIZE);
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
	c->rdata = c->region + c->offset;
	if (perf_op_is_atomic(c->op))
		*(u64 *)c->rdata = PERF_ATOMIC_INIT;

	ret = sg_alloc_table_from_pages(&c->sgt, c->pages, c->npages, c->offset,
					len, GFP_KERNEL);
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
	/* the server's line reports offset_in_page(mr->iova) */
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
	c->rdata = NULL;
	if (c->pages) {
		for (i = 0; i < c->npages; i++)
			if (c->pages[i])
				__free_page(c->pages[i]);
		kfree(c->pages);
	}
	c->pages = NULL;
}

/* ------------------------------------------------------------ completions */

void perf_wc_error(struct perf_conn *c, struct ib_wc *wc, const char *what)
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

void perf_send_done(struct perf_conn *c)
{
	if (atomic_dec_and_test(&c->sq_pending))
		wake_up(&c->wq);
}

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

/*
 * c->rx_sgl is the connection's: receives are posted at setup, before any
 * completion, and then only from the CQ's handler, one at a time.
 */
int perf_post_rx(struct perf_conn *c, struct perf_rx *r)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};

	perf_buf_for_dev(c, &r->buf);
	wr.wr_cqe = &r->cqe;
	wr.sg_list = c->rx_sgl;
	wr.num_sge = perf_sges(c->rx_sgl, r->buf.dma, c->rx_len, c->rx_nsge,
			       c->pd->local_dma_lkey);
	if (c->srq)
		return ib_post_srq_recv(c->srq, &wr, &bad);
	return ib_post_recv(c->qp, &wr, &bad);
}

/* A control message; IB_WR_SEND_WITH_INV invalidates the peer's rkey. */
static int perf_post_ctrl(struct perf_conn *c, struct perf_ctrl *m,
			  enum ib_wr_opcode opcode, u32 rkey)
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
	wr->opcode = opcode;
	if (opcode == IB_WR_SEND_WITH_INV)
		wr->ex.invalidate_rkey = rkey;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	atomic_inc(&c->sq_pending);
	ret = ib_post_send(c->qp, wr, &bad);
	if (ret)
		atomic_dec(&c->sq_pending);
	return ret;
}

int perf_send_ctrl(struct perf_conn *c, struct perf_ctrl *m)
{
	return perf_post_ctrl(c, m, IB_WR_SEND, 0);
}

int perf_send_ctrl_inv(struct perf_conn *c, struct perf_ctrl *m, u32 rkey)
{
	return perf_post_ctrl(c, m, IB_WR_SEND_WITH_INV, rkey);
}

/* ------------------------------------------------------------ connections */

/*
 * Let every posted WR complete (flushed) so that no completion handler runs
 * on a buffer about to be freed.
 */
void perf_drain(struct perf_conn *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long t0 = jiffies;

	if (c->drained || !c->qp_created)
		return;
	c->drained = true;
	if (!c->ud) {
		ib_drain_qp(c->qp);
		c->drain_ms = jiffies_to_msecs(jiffies - t0);
		/*
		 * With an SRQ, ib_core completes its drain on LAST_WQE_REACHED
		 * before it calls our handler with the same event: let the
		 * handler count it before the teardown line reports it.
		 */
		if (c->srq)
			wait_event_timeout(c->wq, atomic_read(&c->last_wqe_events),
					   HZ);
		return;
	}
	/*
	 * ib_drain_sq() posts an RDMA WRITE, which a UD QP refuses: drain the
	 * RQ the generic way, then wait for the sends the move to ERR
	 * flushed.  With an SRQ there is no RQ of our own: as ib_core's SRQ
	 * drain does, wait for LAST_WQE_REACHED before the QP may go.
	 */
	if (c->srq) {
		ib_modify_qp(c->qp, &attr, IB_QP_STATE);
		if (!wait_event_timeout(c->wq, atomic_read(&c->last_wqe_events),
					60 * HZ))
			pr_err("%s: no LAST_WQE_REACHED for UD QP %u in 60 s\n",
			       dev_name(&c->dev->dev), c->qp->qp_num);
	} else {
		ib_drain_rq(c->qp);
	}
	if (!wait_event_timeout(c->wq, !atomic_read(&c->sq_pending), PERF_TIMEOUT))
		pr_err("%s: %d UD sends never completed\n",
		       dev_name(&c->dev->dev), atomic_read(&c->sq_pending));
	c->drain_ms = jiffies_to_msecs(jiffies - t0);
}

void perf_conn_free(struct perf_conn *c)
{
	u32 i;

	if (c->qp_created) {
		perf_drain(c);
		if (c->own_qp)
			ib_destroy_qp(c->qp);
		else
			rdma_destroy_qp(c->id);
		c->qp = NULL;
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
	kfree(c->tx_sgl);
	kfree(c->rx_sgl);
	c->tx_sgl = NULL;
	c->rx_sgl = NULL;
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

/*
 * IB_EVENT_QP_LAST_WQE_REACHED: an SRQ-attached QP in ERR will take no
 * more receives from the SRQ.  ib_drain_qp() waits for it, up to 60 s
 * and silently if it never comes, so the server reports it (srq=1
 * connections' teardown line).  Any context.
 */
static void perf_qp_event(struct ib_event *ev, void *ctx)
{
	struct perf_conn *c = ctx;

	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED) {
		atomic_inc(&c->last_wqe_events);
		wake_up(&c->wq);
		return;
	}
	/*
	 * The others go in the result lines (qp_events=): a responder that
	 * NAKs a bad request must also tell its own consumer, which the
	 * requester's completion status cannot show.
	 */
	pr_info("%s: QP %u: %s\n", dev_name(&c->dev->dev),
		ev->element.qp->qp_num, ib_event_msg(ev->event));
	if ((unsigned int)ev->event < BITS_PER_LONG)
		set_bit(ev->event, &c->qp_events);
	/*
	 * A SEND that overtook the RTU: rdma_cm completes the connection
	 * on it, as RDS, isert, srpt and nvmet ask it to.
	 */
	if (ev->event == IB_EVENT_COMM_EST) {
		rdma_notify(c->id, IB_EVENT_COMM_EST);
		complete(&c->comm_est);
	}
}

static const char * const perf_qp_event_names[] = {
	[IB_EVENT_QP_FATAL] = "fatal",
	[IB_EVENT_QP_REQ_ERR] = "req_err",
	[IB_EVENT_QP_ACCESS_ERR] = "access_err",
	[IB_EVENT_COMM_EST] = "comm_est",
	[IB_EVENT_SQ_DRAINED] = "sq_drained",
	[IB_EVENT_PATH_MIG] = "path_mig",
	[IB_EVENT_PATH_MIG_ERR] = "path_mig_err",
};

/**
 * perf_qp_events() - the QP's async events so far, for a result line
 * @c: the connection
 * @buf: where to write them
 * @len: its size
 *
 * Return: @buf: the events' short names joined by commas ("access_err"),
 * "none" if there were none. LAST_WQE_REACHED is counted on its own.
 */
const char *perf_qp_events(struct perf_conn *c, char *buf, size_t len)
{
	unsigned long ev = READ_ONCE(c->qp_events);
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for_each_set_bit(i, &ev, BITS_PER_LONG) {
		if (i < ARRAY_SIZE(perf_qp_event_names) && perf_qp_event_names[i])
			n += scnprintf(buf + n, len - n, "%s%s", n ? "," : "",
				       perf_qp_event_names[i]);
		else
			n += scnprintf(buf + n, len - n, "%sev%u", n ? "," : "", i);
	}
	return n ? buf : "none";
}

/*
 * inline=1: what create_qp grants in cap.max_inline_data for the largest
 * send WQE (a QP of the device's max_send_sge SGEs): the device's inline
 * limit as a kernel ULP can learn it. -1 if that QP is refused.
 */
static int perf_max_inline(struct perf_conn *c)
{
	struct ib_qp_init_attr qpa = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.qp_type = c->ud ? IB_QPT_UD : IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = c->dev->attrs.max_send_sge,
			.max_recv_sge = 1,
		},
	};
	struct ib_qp *qp;

	qp = ib_create_qp(c->pd, &qpa);
	if (IS_ERR(qp)) {
		pr_err("%s: a QP of %d send SGEs (to learn the inline limit): %ld\n",
		       dev_name(&c->dev->dev), c->dev->attrs.max_send_sge,
		       PTR_ERR(qp));
		return -1;
	}
	ib_destroy_qp(qp);
	return min_t(u32, qpa.cap.max_inline_data, INT_MAX);
}

/*
 * The SGEs a data WR may carry: sge= against the device's max_send_sge
 * (and max_sge_rd for READ, whose response the SGEs scatter); sge=max is
 * that limit.
 */
static int perf_sge_limit(struct perf_conn *c)
{
	struct ib_device_attr *attr = &c->dev->attrs;
	const char *what = "max_send_sge";
	int limit = attr->max_send_sge;

	if (c->op == PERF_READ && attr->max_sge_rd < limit) {
		what = "max_sge_rd";
		limit = attr->max_sge_rd;
	}
	if (c->nsge == PERF_SGE_DEV)
		c->nsge = clamp_t(int, limit, 1, PERF_MAX_SGE);
	if (c->nsge > limit) {
		pr_err("%s: sge=%u exceeds the device's %s %d\n",
		       dev_name(&c->dev->dev), c->nsge, what, limit);
		return -EINVAL;
	}
	return 0;
}

/*
 * Server: the SGEs each receive of SEND data takes, rx_sge= (default: the
 * client's sge=) against max_recv_sge (max_srq_sge with an SRQ); rx_sge=max
 * is that limit. A refusal's reason goes back in the reject (c->why).
 */
static int perf_rx_sge_limit(struct perf_conn *c, u32 rx_sge)
{
	struct ib_device_attr *attr = &c->dev->attrs;
	const char *what = c->use_srq ? "max_srq_sge" : "max_recv_sge";
	int limit = c->use_srq ? attr->max_srq_sge : attr->max_recv_sge;

	if (c->rx_sge_max)
		rx_sge = clamp_t(int, limit, 1, PERF_MAX_SGE);
	if (rx_sge > limit) {
		snprintf(c->why, sizeof(c->why), "rx_sge=%u exceeds %s's %s %d",
			 rx_sge, dev_name(&c->dev->dev), what, limit);
		pr_err("server: %s\n", c->why);
		return -EINVAL;
	}
	c->rx_nsge = rx_sge;
	return 0;
}

/*
 * rdma_cm's QP (created in INIT, moved to RTR and RTS by rdma_cm), or for
 * a server with rtr= or resp_res= one of our own: rdma_accept() then
 * leaves its states to us (perf_qp_to()), as srpt does with its QPs.
 */
static int perf_create_qp(struct perf_conn *c, struct ib_qp_init_attr *qpa)
{
	struct ib_qp *qp;
	int ret;

	if (!c->own_qp) {
		ret = rdma_create_qp(c->id, c->pd, qpa);
		if (!ret)
			c->qp = c->id->qp;
		return ret;
	}
	qp = ib_create_qp(c->pd, qpa);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	c->qp = qp;
	return 0;
}

/**
 * perf_qp_to() - move our own QP to a state with rdma_cm's attributes
 * @c: a server connection with c->own_qp
 * @state: IB_QPS_INIT, IB_QPS_RTR or IB_QPS_RTS
 * @rd_atomic: RTR: max_dest_rd_atomic, RTS: max_rd_atomic; -1: rdma_cm's
 *
 * rdma_init_qp_attr() gives what rdma_cm would have set (the path from
 * the REQ, the PSNs, the timers); @rd_atomic overrides the READ depth,
 * which rdma_cm takes from the conn_param at accept.
 *
 * Return: 0, or the error of rdma_init_qp_attr() or ib_modify_qp().
 */
int perf_qp_to(struct perf_conn *c, enum ib_qp_state state, int rd_atomic)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = rdma_init_qp_attr(c->id, &attr, &mask);
	if (!ret && rd_atomic >= 0) {
		if (state == IB_QPS_RTR)
			attr.max_dest_rd_atomic = rd_atomic;
		else if (state == IB_QPS_RTS)
			attr.max_rd_atomic = rd_atomic;
	}
	if (!ret)
		ret = ib_modify_qp(c->qp, &attr, mask);
	if (ret)
		pr_err("%s: QP %u to %s: %d\n", dev_name(&c->dev->dev),
		       c->qp->qp_num, state == IB_QPS_INIT ? "INIT" :
		       state == IB_QPS_RTR ? "RTR" : "RTS", ret);
	return ret;
}

/*
 * PD, CQ, QP, buffers and posted receives for an id bound to a device.
 * The server comes with c->rx_nsge as the client asked (0: sge=).
 */
int perf_conn_setup(struct perf_conn *c)
{
	struct ib_device_attr *attr;
	struct ib_qp_init_attr qpa = {};
	u32 i, sq, rq, rx_sge = c->rx_nsge ? c->rx_nsge : c->nsge;
	int ret;

	c->dev = c->id->device;
	attr = &c->dev->attrs;
	c->max_inline = -1;
	init_completion(&c->comm_est);
	if (!c->server) {
		ret = perf_sge_limit(c);
		if (ret)
			return ret;
		c->wr_sge = perf_op_is_atomic(c->op) ? 1 : perf_npieces(c->size, c->nsge);
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
			ret = perf_rx_sge_limit(c, rx_sge);
			if (ret)
				return ret;
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
	c->rx_wr_sge = perf_npieces(c->rx_len, c->rx_nsge);
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

	qpa.event_handler = perf_qp_event;
	qpa.qp_context = c;
	qpa.send_cq = c->cq;
	qpa.recv_cq = c->cq;
	qpa.qp_type = c->ud ? IB_QPT_UD : IB_QPT_RC;
	qpa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qpa.srq = c->srq;
	qpa.cap.max_send_wr = sq;
	qpa.cap.max_recv_wr = c->srq ? 0 : rq + 1;
	qpa.cap.max_send_sge = c->server ? 1 : c->nsge;
	qpa.cap.max_recv_sge = c->srq ? 0 : c->rx_nsge;
	/* inline: ask for size; the device grants it or refuses, no clamp */
	if (c->inl) {
		c->max_inline = perf_max_inline(c);
		qpa.cap.max_inline_data = c->size;
	}
	ret = perf_create_qp(c, &qpa);
	if (ret && c->inl) {
		pr_err("%s: inline=1 size=%u: rdma_create_qp refused max_inline_data %u: %d (its largest send WQE is granted %d inline bytes)\n",
		       dev_name(&c->dev->dev), c->size, c->size, ret,
		       c->max_inline);
		return ret;
	}
	if (ret) {
		pr_err("%s: creating the QP: %d\n", dev_name(&c->dev->dev), ret);
		return ret;
	}
	c->qp_created = true;
	/* receives are posted next: our own QP must be in INIT for them */
	if (c->own_qp) {
		ret = perf_qp_to(c, IB_QPS_INIT, -1);
		if (ret)
			return ret;
	}
	c->qp_inline = qpa.cap.max_inline_data;
	if (c->inl && c->qp_inline < c->size) {
		pr_err("%s: inline=1 size=%u: rdma_create_qp granted max_inline_data %u only (its largest send WQE is granted %d)\n",
		       dev_name(&c->dev->dev), c->size, c->qp_inline,
		       c->max_inline);
		return -EINVAL;
	}
	c->rx_sgl = kcalloc(c->rx_nsge, sizeof(*c->rx_sgl), GFP_KERNEL);
	if (!c->rx_sgl)
		return -ENOMEM;

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

	c->tx_sgl = kcalloc(c->nsge, sizeof(*c->tx_sgl), GFP_KERNEL);
	if (!c->tx_sgl)
		return -ENOMEM;
	c->nslots = c->depth;
	c->slots = kcalloc(c->nslots, sizeof(*c->slots), GFP_KERNEL);
	if (!c->slots)
		return -ENOMEM;
	for (i = 0; i < c->nslots; i++) {
		c->slots[i].c = c;
		c->slots[i].cqe.done = perf_slot_done;
		ret = perf_buf_alloc_pages(c, &c->slots[i].buf,
					   perf_op_is_atomic(c->op) ? 8 : c->size,
					   c->offset);
		if (ret)
			return ret;
	}
	c->lat = kvcalloc(c->count, sizeof(*c->lat), GFP_KERNEL);
	if (!c->lat)
		return -ENOMEM;
	return 0;
}
