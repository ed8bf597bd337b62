// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic_hostile: the modes that write into our own rings, doorbell pages
 * and kick register what the provider never would (rnic_hostile.c says
 * what the program is for): bad-wqe, bad-db, bad-kick, and the raw
 * posting and kicking they share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "rnic_hostile.h"

#define WRID_BAD	0xbadbadULL
#define WRID_GOOD	0x600dULL

/* ------------------------------------------------------------------------
 * Writing into our own rings and doorbell pages, as the provider would not
 */

/* The kick through the kernel (no kick mapping): as rnic_db.c asks */
static int kernel_kick_qp(struct ibv_qp *qp, bool recv)
{
	struct ib_uverbs_post_send_resp sresp;
	struct ib_uverbs_post_recv_resp rresp;
	struct ibv_post_send scmd;
	struct ibv_post_recv rcmd;
	ssize_t r;

	if (!recv) {
		memset(&scmd, 0, sizeof(scmd));
		scmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		scmd.hdr.in_words = sizeof(scmd) / 4;
		scmd.hdr.out_words = sizeof(sresp) / 4;
		scmd.response = (uintptr_t)&sresp;
		scmd.qp_handle = qp->handle;
		scmd.wqe_size = sizeof(struct ibv_send_wr);
		r = write(qp->context->cmd_fd, &scmd, sizeof(scmd));
		return r == sizeof(scmd) ? 0 : errno;
	}
	memset(&rcmd, 0, sizeof(rcmd));
	rcmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	rcmd.hdr.in_words = sizeof(rcmd) / 4;
	rcmd.hdr.out_words = sizeof(rresp) / 4;
	rcmd.response = (uintptr_t)&rresp;
	rcmd.qp_handle = qp->handle;
	rcmd.wqe_size = sizeof(struct ibv_recv_wr);
	r = write(qp->context->cmd_fd, &rcmd, sizeof(rcmd));
	return r == sizeof(rcmd) ? 0 : errno;
}

static int kernel_kick_cq(struct ibv_cq *cq)
{
	struct ibv_req_notify_cq cmd;
	ssize_t r;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.cq_handle = cq->handle;
	r = write(cq->context->cmd_fd, &cmd, sizeof(cmd));
	return r == sizeof(cmd) ? 0 : errno;
}

static volatile uint8_t *dbp_va(struct rnic_dbp *dbp)
{
	return (volatile uint8_t *)dbp->va;
}

/*
 * Kick entries @e[0..n) into @dbp's kick ring after the provider's own,
 * kick_pi, the kick: with the kick register mapped only. The page's lock
 * keeps the provider's kick_pi ours too.
 */
static void kick_entries(struct rnic_context *rc, struct rnic_dbp *dbp,
			 const uint16_t *e, unsigned int n)
{
	uint8_t *page = (uint8_t *)dbp->va;
	unsigned int i;

	pthread_spin_lock(&dbp->lock);
	for (i = 0; i < n; i++) {
		mmio_write16_le(page + offsetof(struct rnic_db_page, kick) +
				(dbp->kick_pi % RNIC_DBP_KICK_DEPTH) * 2,
				htole16(e[i]));
		dbp->kick_pi++;
	}
	mmio_flush_writes();
	mmio_write32_le(page + offsetof(struct rnic_db_page, kick_pi),
			htole32(dbp->kick_pi));
	mmio_flush_writes();
	mmio_write32_le(rc->kick_reg, htole32(rc->kick));
	pthread_spin_unlock(&dbp->lock);
}

/* kick_ci, which the device writes for the writer's information */
static uint16_t kick_ci(struct rnic_dbp *dbp)
{
	return le32toh(*(volatile __le32 *)(dbp_va(dbp) +
		offsetof(struct rnic_db_page, kick_ci))) & 0xffff;
}

/* Until the device consumed the kick ring up to @pi */
static bool kick_drained(struct rnic_dbp *dbp, uint16_t pi)
{
	int64_t end = now_ms() + opt.timeout_ms;

	while (kick_ci(dbp) != pi) {
		if (now_ms() >= end)
			return false;
		nap_us(200);
	}
	return true;
}

/* A slot value, named and kicked however this context kicks */
static int slot_ring(struct dev *d, struct rnic_dbp *dbp, uint16_t off,
		     uint32_t val, struct ibv_qp *qp, bool recv, struct ibv_cq *cq)
{
	uint16_t e = off / 4;

	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)dbp->va + off, htole32(val));
	if (d->rctx->kick_reg) {
		kick_entries(d->rctx, dbp, &e, 1);
		return 0;
	}
	return qp ? kernel_kick_qp(qp, recv) : kernel_kick_cq(cq);
}

/*
 * @wqe (a whole WQE of the SQ's size) into the next SQ entry as if posted,
 * wr_id @wrid, and the doorbell rung.
 */
static int raw_post(struct dev *d, struct ibv_qp *ibqp, const void *wqe,
		    uint64_t wrid)
{
	struct rnic_qp *qp = to_rqp(ibqp);
	struct rnic_wq *sq = &qp->sq;
	uint32_t depth = 1U << sq->log2_depth;
	uint16_t e;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	memcpy((uint8_t *)sq->ring + ((size_t)(sq->pi & (depth - 1)) << sq->wqe_log2),
	       wqe, (size_t)1 << sq->wqe_log2);
	sq->wrid[sq->pi & (depth - 1)] = wrid;
	sq->pi++;
	udma_to_device_barrier();
	mmio_write32_le((uint8_t *)sq->dbp->va + sq->db_off, htole32(sq->pi));
	if (d->rctx->kick_reg) {
		e = sq->db_off / 4;
		kick_entries(d->rctx, sq->dbp, &e, 1);
	}
	pthread_spin_unlock(&sq->lock);
	if (!d->rctx->kick_reg)
		err = kernel_kick_qp(ibqp, false);
	return err;
}

/* ------------------------------------------------------------------------
 * bad-wqe
 */

enum bw_case {
	BW_CONTROL,		/* a well-formed SEND, written raw: the writer works */
	BW_OPCODE,
	BW_NUM_SGE,
	BW_FLAGS,
	BW_RESERVED,
	BW_LENGTH,
	BW_INLINE_LEN,
	BW_LKEY_WILD,
	BW_LKEY_ZERO,
	BW_LKEY_OTHER_PD,
	BW_SGE_OOB,
	BW_RKEY_OTHER_PD,
	BW_REG_MR,
	BW_LOCAL_INV,
	BW_GARBAGE,
	BW_NUM
};

static const char *const bw_names[BW_NUM] = {
	[BW_CONTROL] = "control (well-formed SEND, written raw)",
	[BW_OPCODE] = "unknown opcode 0x3f",
	[BW_NUM_SGE] = "num_sge 255",
	[BW_FLAGS] = "undefined flags",
	[BW_RESERVED] = "reserved bytes set",
	[BW_LENGTH] = "length not the SGE sum",
	[BW_INLINE_LEN] = "inline length beyond the WQE",
	[BW_LKEY_WILD] = "lkey 0xffffff00 (not ours)",
	[BW_LKEY_ZERO] = "lkey 0",
	[BW_LKEY_OTHER_PD] = "lkey of an MR of another PD",
	[BW_SGE_OOB] = "SGE past the end of its MR",
	[BW_RKEY_OTHER_PD] = "WRITE with an rkey of another PD",
	[BW_REG_MR] = "REG_MR (privileged) over guest-physical page 0x1000",
	[BW_LOCAL_INV] = "LOCAL_INV of our own MR",
	[BW_GARBAGE] = "every byte 0xa5",
};

static void bw_build(enum bw_case c, struct pair *p, struct ibv_mr *other,
		     uint8_t *w, size_t size)
{
	struct rnic_sqe *sqe = (struct rnic_sqe *)w;
	struct rnic_data_sge *sge = sqe->sge;

	memset(w, 0, size);
	sqe->ctrl.opcode = RNIC_SQE_OP_SEND;
	sqe->ctrl.flags = RNIC_SQE_F_SIGNALED;
	sqe->ctrl.num_sge = 1;
	sqe->ctrl.length = htole32(64);
	sge->addr = htole64((uintptr_t)p->buf[0] + OFF_SSRC);
	sge->len = htole32(64);
	sge->lkey = htole32(p->mr[0]->lkey);
	switch (c) {
	case BW_CONTROL:
	case BW_NUM:
		break;
	case BW_OPCODE:
		sqe->ctrl.opcode = 0x3f;
		break;
	case BW_NUM_SGE:
		sqe->ctrl.num_sge = 255;
		break;
	case BW_FLAGS:
		sqe->ctrl.flags = 0xf1;
		break;
	case BW_RESERVED:
		sqe->ctrl.reserved0 = 0x5a;
		sqe->ctrl.reserved1 = htole32(0xdeadbeef);
		sqe->seg.raw[31] = 0x77;
		break;
	case BW_LENGTH:
		sqe->ctrl.length = htole32(65);
		break;
	case BW_INLINE_LEN:
		sqe->ctrl.flags |= RNIC_SQE_F_INLINE;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = htole32(4000);
		break;
	case BW_LKEY_WILD:
		sge->lkey = htole32(0xffffff00);
		break;
	case BW_LKEY_ZERO:
		sge->lkey = 0;
		break;
	case BW_LKEY_OTHER_PD:
		sge->addr = htole64((uintptr_t)other->addr);
		sge->lkey = htole32(other->lkey);
		break;
	case BW_SGE_OOB:
		sge->addr = htole64((uintptr_t)p->buf[0] + BUF_LEN - 32);
		break;
	case BW_RKEY_OTHER_PD:
		sqe->ctrl.opcode = RNIC_SQE_OP_WRITE;
		sqe->seg.rdma.remote_addr = htole64((uintptr_t)other->addr);
		sqe->seg.rdma.rkey = htole32(other->rkey);
		break;
	case BW_REG_MR:
		sqe->ctrl.opcode = RNIC_SQE_OP_REG_MR;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = 0;
		sqe->ctrl.key = htole32((p->mr[0]->lkey & ~0xffU) |
					((p->mr[0]->lkey + 1) & 0xff));
		sqe->seg.reg_mr.iova = htole64((uintptr_t)p->buf[0]);
		sqe->seg.reg_mr.length = htole64(4096);
		sqe->seg.reg_mr.pbl_addr = htole64(0x1000);
		sqe->seg.reg_mr.npages = htole16(1);
		sqe->seg.reg_mr.page_log2 = 12;
		sqe->seg.reg_mr.access = RNIC_ACCESS_ALL;
		memset(sge, 0, sizeof(*sge));
		break;
	case BW_LOCAL_INV:
		sqe->ctrl.opcode = RNIC_SQE_OP_LOCAL_INV;
		sqe->ctrl.num_sge = 0;
		sqe->ctrl.length = 0;
		sqe->ctrl.key = htole32(p->mr[0]->lkey);
		memset(sge, 0, sizeof(*sge));
		break;
	case BW_GARBAGE:
		memset(w, 0xa5, size);
		break;
	}
}

static const char *qp_state_str(struct ibv_qp *qp)
{
	static const char *const s[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return "unknown (query failed)";
	return a.qp_state < ARRAY_SIZE(s) ? s[a.qp_state] : "?";
}

/*
 * @mr (of d->pd) still takes a WRITE under its rkey: a REG_MR or LOCAL_INV
 * that the device wrongly ran would have changed or invalidated it, which
 * the completions alone do not show (the provider refuses their CQEs).
 */
static bool mr_still_valid(struct dev *d, struct ibv_mr *mr, uint8_t *dst)
{
	struct pair *q = pair_create(d);
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	bool ok = false;

	if (!q)
		return false;
	sge = (struct ibv_sge){ (uintptr_t)q->buf[0], 256, q->mr[0]->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mr->rkey;
	pat_fill(q->buf[0], 256, 0xabc);
	memset(dst, 0, 256);
	if (!ibv_post_send(q->qp[0], &wr, &bad) && cq_wait(q->cq[0], &wc, 1) == 1 &&
	    wc.status == IBV_WC_SUCCESS && !pat_bad(dst, 256, 0xabc))
		ok = true;
	pair_destroy(q);
	return ok;
}

/*
 * One malformed WQE on a new pair, then a well-formed SEND after it: the
 * bad WQE must complete in error (or its CQE be refused by the provider,
 * which then moves the QP to ERR), and the SEND after it be flushed. A
 * SEND that succeeds means the device ran or skipped the bad WQE.
 */
static void bw_one(struct dev *d, enum bw_case c, struct ibv_mr *other)
{
	struct ibv_sge sge;
	struct ibv_send_wr good = {
		.wr_id = WRID_GOOD, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	const char *name = bw_names[c];
	struct ibv_wc wc[4];
	struct pair *p;
	uint8_t *w = NULL;
	size_t size;
	int n, i, err, got_bad = -1, got_good = -1;
	char what[160];

	p = pair_create(d);
	if (!p)
		return;
	size = (size_t)1 << to_rqp(p->qp[0])->sq.wqe_log2;
	w = malloc(size);
	if (!w) {
		fail("out of memory");
		goto out;
	}
	sge.addr = (uintptr_t)p->buf[0] + OFF_SSRC;
	sge.length = 64;
	sge.lkey = p->mr[0]->lkey;
	pat_fill(p->buf[0] + OFF_SSRC, 64, 0xc0ffee + c);
	/* a receive for each SEND, so that one that gets through completes */
	if (post_recv(p, 1, 10) || post_recv(p, 1, 11)) {
		fail("%s: post_recv", name);
		goto out;
	}
	if (c != BW_CONTROL) {
		victim(d, qp_id(p->qp[0]));
		victim(d, qp_id(p->qp[1]));
	}
	bw_build(c, p, other, w, size);
	err = raw_post(d, p->qp[0], w, WRID_BAD);
	if (!err)
		err = ibv_post_send(p->qp[0], &good, &bad);
	if (err) {
		fail("%s: post: %s", name, strerror(err));
		goto out;
	}
	/* until the good SEND's completion, whatever it is */
	n = 0;
	while (got_good < 0 && n < (int)ARRAY_SIZE(wc)) {
		if (!cq_wait(p->cq[0], &wc[n], 1))
			break;
		if (wc[n].wr_id == WRID_GOOD)
			got_good = n;
		else if (wc[n].wr_id == WRID_BAD)
			got_bad = n;
		n++;
	}
	if (got_bad >= 0)
		snprintf(what, sizeof(what), "bad WQE: %s (vendor_err %u)",
			 ibv_wc_status_str(wc[got_bad].status), wc[got_bad].vendor_err);
	else
		snprintf(what, sizeof(what), "bad WQE: no CQE (the provider refused it)");
	if (got_good < 0) {
		fail("%s: no completion of the SEND after it within %d ms (%s; QP %s)",
		     name, opt.timeout_ms, what, qp_state_str(p->qp[0]));
		goto out;
	}
	if (c == BW_CONTROL) {
		if (got_bad < 0 || wc[got_bad].status || wc[got_good].status) {
			fail("%s: %s, SEND after it %s", name, what,
			     ibv_wc_status_str(wc[got_good].status));
			goto out;
		}
		n = cq_wait(p->cq[1], wc, 2);
		for (i = 0; i < n; i++)
			if (wc[i].status)
				break;
		if (n != 2 || i != n || pat_bad(p->buf[1] + OFF_RDST, 64, 0xc0ffee + c)) {
			fail("%s: the receiver got %d good of 2 or wrong bytes", name, i);
			goto out;
		}
		note("%-52s ok: both SENDs arrived, bytes verified", name);
		goto out;
	}
	if (got_bad >= 0 && wc[got_bad].status == IBV_WC_SUCCESS) {
		fail("%s: completed successfully", name);
		goto out;
	}
	if (wc[got_good].status == IBV_WC_SUCCESS) {
		fail("%s: %s, but the SEND after it succeeded: the QP did not stop", name, what);
		goto out;
	}
	if ((c == BW_REG_MR || c == BW_LOCAL_INV) &&
	    !mr_still_valid(d, p->mr[0], p->buf[0] + OFF_WDST)) {
		fail("%s: %s, but our MR no longer takes a WRITE under its key: the device ran it",
		     name, what);
		goto out;
	}
	note("%-52s ok: %s; SEND after it %s; QP %s", name, what,
	     ibv_wc_status_str(wc[got_good].status), qp_state_str(p->qp[0]));
out:
	free(w);
	pair_destroy(p);
}

void mode_bad_wqe(struct dev *d)
{
	struct ibv_pd *pd2;
	struct ibv_mr *other = NULL;
	struct pair *by;
	void *obuf = NULL;
	long long e0 = counter("wqe_errors"), k0 = counter("key_violations");
	int c;

	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	pd2 = ibv_alloc_pd(d->ctx);
	if (!pd2 || posix_memalign(&obuf, 4096, 4096)) {
		fail("a second PD: %s", strerror(errno));
		obuf = NULL;
		goto out;
	}
	memset(obuf, 0x3c, 4096);
	other = ibv_reg_mr(pd2, obuf, 4096, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!other) {
		fail("ibv_reg_mr on the second PD: %s", strerror(errno));
		goto out;
	}
	for (c = 0; c < BW_NUM; c++)
		bw_one(d, c, other);
	for (c = 0; c < 4096; c++) {
		if (((uint8_t *)obuf)[c] != 0x3c) {
			fail("the other PD's MR was written (byte %d)", c);
			break;
		}
	}
	xfer(by, 1, 2, "bystander pair after");
	events_check(d);
	if (e0 >= 0 && k0 >= 0)
		note("counters: wqe_errors %+lld, key_violations %+lld",
		     counter("wqe_errors") - e0, counter("key_violations") - k0);
out:
	if (other)
		ibv_dereg_mr(other);
	free(obuf);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/* ------------------------------------------------------------------------
 * bad-db
 */

/* The slots of this context's queues in @dbp */
static void slots_used(struct dev *d, struct rnic_dbp *dbp, bool *used)
{
	struct rnic_qp *qp;
	struct rnic_cq *cq;
	int i, j;

	memset(used, 0, RNIC_DBP_SLOTS * sizeof(*used));
	for (i = 0; i < MAX_PAIRS; i++) {
		if (!d->pairs[i])
			continue;
		for (j = 0; j < 2; j++) {
			cq = to_rcq(d->pairs[i]->cq[j]);
			qp = to_rqp(d->pairs[i]->qp[j]);
			if (cq->dbp == dbp)
				used[cq->db_off / 4] = true;
			if (qp->sq.dbp == dbp)
				used[qp->sq.db_off / 4] = true;
			if (qp->rq.dbp == dbp && qp->rq.db_off != RNIC_DB_NONE)
				used[qp->rq.db_off / 4] = true;
		}
	}
}

/*
 * Every slot number of the page that is not one of our queues', and some
 * beyond the page, in the kick ring. With the kick register mapped the
 * entries go after the provider's and are kicked; without it the kernel is
 * the ring's writer, and they are written where the device will read next
 * (kick_ci) and kicked through another context's page (a kick makes the
 * device read every page of that kick value).
 */
static void bogus_kicks(struct dev *d, struct pair *by)
{
	static const uint16_t beyond[] = { 512, 1000, 0x7fff, 0xffff };
	struct rnic_dbp *dbp = to_rqp(by->qp[0])->sq.dbp;
	bool used[RNIC_DBP_SLOTS];
	uint16_t e[RNIC_DBP_KICK_DEPTH];
	unsigned int n = 0, i, j, batch;
	long long b0 = counter("bad_kicks"), o0 = counter("kick_overflows");
	long long b1, o1;

	slots_used(d, dbp, used);
	for (i = 0; i < RNIC_DBP_SLOTS; i++)
		if (!used[i])
			e[n++] = i;
	for (i = 0; i < ARRAY_SIZE(beyond) && n < ARRAY_SIZE(e); i++)
		e[n++] = beyond[i];
	if (d->rctx->kick_reg) {
		for (i = 0; i < n; i += batch) {
			batch = n - i < 128 ? n - i : 128;
			kick_entries(d->rctx, dbp, e + i, batch);
			if (!kick_drained(dbp, dbp->kick_pi)) {
				fail("bogus kicks: the device did not consume the kick ring within %d ms (kick_ci %u, kick_pi %u)",
				     opt.timeout_ms, kick_ci(dbp), dbp->kick_pi);
				return;
			}
		}
	} else {
		struct dev d2;
		struct ibv_cq *cq2;
		uint16_t ci = kick_ci(dbp);
		uint8_t *page = (uint8_t *)dbp->va;

		if (dev_open(&d2))
			return;
		cq2 = ibv_create_cq(d2.ctx, 4, NULL, NULL, 0);
		if (!cq2) {
			fail("ibv_create_cq on a second context: %s", strerror(errno));
			dev_close(&d2);
			return;
		}
		for (i = 0; i < n; i += batch) {
			batch = n - i < 128 ? n - i : 128;
			for (j = 0; j < batch; j++)
				mmio_write16_le(page + offsetof(struct rnic_db_page, kick) +
						((uint16_t)(ci + j) % RNIC_DBP_KICK_DEPTH) * 2,
						htole16(e[i + j]));
			ci += batch;
			mmio_flush_writes();
			mmio_write32_le(page + offsetof(struct rnic_db_page, kick_pi),
					htole32(ci));
			mmio_flush_writes();
			ibv_req_notify_cq(cq2, 0);
			if (!kick_drained(dbp, ci)) {
				note("bogus kicks: a kick of another page did not make the device read ours (kick_ci %u, ours %u); the next kick of ours will",
				     kick_ci(dbp), ci);
				break;
			}
		}
		ibv_destroy_cq(cq2);
		dev_close(&d2);
	}
	/* past ib_core's cache of the counters (RDMA_HW_STATS_DEFAULT_LIFESPAN) */
	nap_us(100000);
	b1 = counter("bad_kicks");
	o1 = counter("kick_overflows");
	if (b0 < 0 || b1 < 0) {
		note("bogus kicks: %u entries; bad_kicks not readable", n);
		return;
	}
	note("bogus kicks: %u entries naming no queue of ours; bad_kicks %lld -> %lld (%+lld), kick_overflows %+lld",
	     n, b0, b1, b1 - b0, o1 - o0);
	if (d->rctx->kick_reg && b1 - b0 < n)
		fail("bad_kicks rose by %lld, not by the %u bogus entries", b1 - b0, n);
}

enum bd_case { BD_SQ_PI, BD_RQ_BITS, BD_CQ_CI, BD_NUM };

static const char *const bd_names[BD_NUM] = {
	[BD_SQ_PI] = "SQ producer index beyond the depth",
	[BD_RQ_BITS] = "RQ slot with undefined bits",
	[BD_CQ_CI] = "CQ consumer index beyond the producer",
};

/* One bad slot value on a new pair: that queue, and only it, fails */
static void bd_one(struct dev *d, enum bd_case c)
{
	struct pair *p = pair_create(d);
	struct rnic_qp *qp;
	struct rnic_cq *cq;
	enum ibv_event_type want;
	struct ibv_qp *vqp = NULL;
	uint64_t obj;
	uint32_t v;
	int err;

	if (!p)
		return;
	switch (c) {
	case BD_SQ_PI:
		qp = to_rqp(p->qp[0]);
		pthread_spin_lock(&qp->sq.lock);
		v = (uint16_t)(qp->sq.pi + (1U << qp->sq.log2_depth) + 1);
		err = slot_ring(d, qp->sq.dbp, qp->sq.db_off, v, p->qp[0], false, NULL);
		pthread_spin_unlock(&qp->sq.lock);
		want = IBV_EVENT_QP_FATAL;
		vqp = p->qp[0];
		obj = qp_id(vqp);
		break;
	case BD_RQ_BITS:
		qp = to_rqp(p->qp[1]);
		pthread_spin_lock(&qp->rq.lock);
		v = 0xdead0000U | qp->rq.pi;
		err = slot_ring(d, qp->rq.dbp, qp->rq.db_off, v, p->qp[1], true, NULL);
		pthread_spin_unlock(&qp->rq.lock);
		want = IBV_EVENT_QP_FATAL;
		vqp = p->qp[1];
		obj = qp_id(vqp);
		break;
	default:
		cq = to_rcq(p->cq[0]);
		pthread_spin_lock(&cq->lock);
		v = (uint16_t)(cq->ci + 1000);
		err = slot_ring(d, cq->dbp, cq->db_off, v, NULL, false, p->cq[0]);
		pthread_spin_unlock(&cq->lock);
		want = IBV_EVENT_CQ_ERR;
		obj = cq_id(p->cq[0]);
		/* its QP may fail with it: a completion it cannot write */
		victim(d, qp_id(p->qp[0]));
		break;
	}
	victim(d, obj);
	if (err) {
		fail("%s: the kick: %s", bd_names[c], strerror(err));
		goto out;
	}
	if (!event_wait(d, want, obj)) {
		fail("%s (slot value %#x): no %s within %d ms", bd_names[c], v,
		     ibv_event_type_str(want), opt.timeout_ms);
		goto out;
	}
	note("%-40s ok: slot %#x -> %s%s%s", bd_names[c], v, ibv_event_type_str(want),
	     vqp ? ", QP " : "", vqp ? qp_state_str(vqp) : "");
	/* the other QP of a QP error's pair still runs: its peer is gone only */
out:
	pair_destroy(p);
}

void mode_bad_db(struct dev *d)
{
	struct pair *by;
	long long bd0 = counter("bad_kicks");
	int c;

	note("kick: %s", d->rctx->kick_reg ? "the register is mapped (RNIC_UCTX_F_KICK_MMAP)" :
					    "through the kernel");
	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	bogus_kicks(d, by);
	xfer(by, 1, 2, "bystander pair after bogus kicks");
	for (c = 0; c < BD_NUM; c++)
		bd_one(d, c);
	xfer(by, 0, 3, "bystander pair after bad slots");
	xfer(by, 1, 4, "bystander pair after bad slots");
	events_check(d);
	if (bd0 >= 0)
		note("bad_kicks now %lld", counter("bad_kicks"));
}

/* ------------------------------------------------------------------------
 * bad-kick
 */

void mode_bad_kick(struct dev *d)
{
	uint32_t peer = d->rctx->kick & 0xffff0000U;
	struct pair *by;
	unsigned int v;

	if (!d->rctx->kick_reg) {
		skipped = "the kick register is not mapped (no RNIC_UCTX_F_KICK_MMAP): the kernel kicks";
		return;
	}
	by = pair_create(d);
	if (!by || !xfer(by, 0, 1, "bystander pair before"))
		return;
	/* every vector of the device's peer, twice; the kick itself 64 times */
	for (v = 0; v < 32; v++)
		mmio_write32_le(d->rctx->kick_reg, htole32(peer | (v & 0xffff)));
	mmio_write32_le(d->rctx->kick_reg, htole32(peer | 0xffff));
	for (v = 0; v < 64; v++)
		mmio_write32_le(d->rctx->kick_reg, htole32(d->rctx->kick));
	xfer(by, 1, 2, "bystander pair after");
	xfer(by, 0, 3, "bystander pair after");
	events_check(d);
	note("kick register: vectors 0..31 and 0xffff of peer %u, the kick 64 times",
	     peer >> 16);
	note("a vector the device does not serve is counted in bad_doorbells and is a DEVICE_ERROR event (hardware.rst, \"Doorbells\"): see ethtool -S and the guest log");
}
