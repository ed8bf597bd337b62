// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * librnic: test of the data path without a device or a kernel. A context,
 * a CQ and an RC QP are put together by hand around a doorbell page and a
 * kick register in ordinary memory, and the real post_send, post_recv,
 * poll_cq and req_notify_cq run against them: the WQEs in the rings, the
 * slot values, the kick ring entries, kick_pi and the kick register are
 * checked, and CQEs written as the device would are polled back. Linked
 * with the provider's objects (not rnic.o) and libibverbs; run by
 * scripts/rdma-core.sh after every build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnic.h"
#include "rnic_wqe.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
		failures++;						\
	}								\
} while (0)

#define KICK_VALUE	0x00000001
#define SQ_DB_OFF	0x40
#define RQ_DB_OFF	0x44
#define CQ_DB_OFF	0x80
#define QPN		0x11

static struct rnic_context *ctx;
static struct rnic_db_page *page;
static uint32_t kick_reg;
static struct rnic_cq *cq;
static struct rnic_qp *qp;
static struct rnic_dbp dbp;

static void setup(void)
{
	ctx = calloc(1, sizeof(*ctx));
	page = aligned_alloc(4096, sizeof(*page));
	memset(page, 0, sizeof(*page));
	ctx->page_size = 4096;
	ctx->db_page_size = 4096;
	ctx->kick = KICK_VALUE;
	ctx->kick_reg = &kick_reg;
	ctx->max_inline = 64;
	ctx->lim.atomics = true;
	ctx->ibv_ctx.context.cmd_fd = -1;
	list_head_init(&ctx->dbps);
	dbp.va = page;
	pthread_spin_init(&dbp.lock, PTHREAD_PROCESS_PRIVATE);

	cq = calloc(1, sizeof(*cq));
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->ibv_cq.context = &ctx->ibv_ctx.context;
	cq->log2_depth = 3;
	cq->ring = rnic_ring_alloc(ctx, 8 * RNIC_RDMA_CQE_SIZE, &cq->ring_bytes);
	cq->cqn = 5;
	cq->dbp = &dbp;
	cq->db_off = CQ_DB_OFF;

	qp = calloc(1, sizeof(*qp));
	qp->vqp.qp.context = &ctx->ibv_ctx.context;
	qp->vqp.qp.qp_type = IBV_QPT_RC;
	qp->vqp.qp.qp_num = QPN;
	qp->vqp.qp.send_cq = &cq->ibv_cq;
	qp->vqp.qp.recv_cq = &cq->ibv_cq;
	qp->send_cqn = qp->recv_cqn = cq->cqn;
	qp->state = IBV_QPS_RTS;
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->sq.log2_depth = 2;
	qp->sq.wqe_log2 = 7;
	qp->sq.ring = rnic_ring_alloc(ctx, 4 << 7, &qp->sq.ring_bytes);
	qp->sq.wrid = calloc(4, sizeof(uint64_t));
	qp->sq.dbp = &dbp;
	qp->sq.db_off = SQ_DB_OFF;
	qp->sq.max_sge = 5;
	qp->sq.max_inline = 64;
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->rq.log2_depth = 2;
	qp->rq.wqe_log2 = 5;
	qp->rq.ring = rnic_ring_alloc(ctx, 4 << 5, &qp->rq.ring_bytes);
	qp->rq.wrid = calloc(4, sizeof(uint64_t));
	qp->rq.len = calloc(4, sizeof(uint32_t));
	qp->rq.dbp = &dbp;
	qp->rq.db_off = RQ_DB_OFF;
	qp->rq.max_sge = 1;
	ctx->qp_table[0] = calloc(1 << 12, sizeof(struct rnic_qp *));
	ctx->qp_table[0][QPN] = qp;
}

/* What the device writes: the CQE at the CQ's index @idx, phase last */
static void device_cqe(uint16_t idx, uint8_t opcode, uint8_t flags,
		       uint32_t qpn, uint16_t wqe_idx, uint32_t byte_len)
{
	struct rnic_rdma_cqe *cqe = &cq->ring[idx & 7];

	memset((uint8_t *)cqe + 4, 0, sizeof(*cqe) - 4);
	cqe->qpn = htole32(qpn);
	cqe->wqe_idx = htole16(wqe_idx);
	cqe->byte_len = htole32(byte_len);
	cqe->opcode = opcode;
	cqe->status = RNIC_WC_SUCCESS;
	cqe->flags = flags | (rnic_ring_phase(idx, 3) ? RNIC_RCQE_F_PHASE : 0);
}

static uint32_t slot(uint16_t off)
{
	return le32toh(page->slot[off / 4]);
}

static void test_send_and_poll(void)
{
	char buf[64] = "payload";
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 7, .lkey = 3 };
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_wc wc[4];
	struct rnic_sqe *sqe;
	int i;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[1].send_flags = IBV_SEND_INLINE;
	wr[2].opcode = IBV_WR_RDMA_WRITE;
	wr[2].send_flags = IBV_SEND_SIGNALED;
	wr[2].wr.rdma.remote_addr = 0x10000;
	wr[2].wr.rdma.rkey = 0x99;
	CHECK(rnic_post_send(&qp->vqp.qp, wr, &bad) == 0);
	CHECK(qp->sq.pi == 3);
	/* one doorbell for the call: slot, one kick entry, kick_pi, kick */
	CHECK(slot(SQ_DB_OFF) == 3);
	CHECK(le16toh(page->kick[0]) == SQ_DB_OFF / 4);
	CHECK(le32toh(page->kick_pi) == 1);
	CHECK(kick_reg == KICK_VALUE);
	sqe = (struct rnic_sqe *)((uint8_t *)qp->sq.ring + (1 << 7));
	CHECK(sqe->ctrl.flags == RNIC_SQE_F_INLINE &&
	      !memcmp(sqe->sge, "payload", 7));
	sqe = (struct rnic_sqe *)((uint8_t *)qp->sq.ring + (2 << 7));
	CHECK(sqe->ctrl.opcode == RNIC_SQE_OP_WRITE &&
	      sqe->ctrl.flags == RNIC_SQE_F_SIGNALED);

	/* the ring holds 4: the fifth WR of a batch is refused, bad_wr = it */
	wr[0].next = &wr[1];
	wr[1].next = NULL;
	CHECK(rnic_post_send(&qp->vqp.qp, wr, &bad) == ENOMEM);
	CHECK(bad == &wr[1] && qp->sq.pi == 4 && slot(SQ_DB_OFF) == 4);
	CHECK(le32toh(page->kick_pi) == 2);

	/* nothing written yet */
	CHECK(rnic_poll_cq(&cq->ibv_cq, 4, wc) == 0);
	/* the signaled WRITE's CQE retires the two unsignaled SENDs too */
	device_cqe(0, RNIC_SQE_OP_WRITE, 0, QPN, 2, 7);
	CHECK(rnic_poll_cq(&cq->ibv_cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 102 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].opcode == IBV_WC_RDMA_WRITE && wc[0].qp_num == QPN);
	CHECK(qp->sq.ci == 3);
	/* CI written, not kicked, no arm yet */
	CHECK(slot(CQ_DB_OFF) == 1 && le32toh(page->kick_pi) == 2);

	/* a CQE for a WQE that is not outstanding names another QP: dropped */
	device_cqe(1, RNIC_SQE_OP_SEND, 0, 0x22, 0, 0);
	CHECK(rnic_poll_cq(&cq->ibv_cq, 4, wc) == 0);
	CHECK(cq->ci == 2 && cq->bad_cqes == 1 && slot(CQ_DB_OFF) == 2);
}

static void test_arm_and_recv(void)
{
	struct ibv_sge sge = { .addr = 0x5000, .length = 256, .lkey = 4 };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_wc wc;
	uint32_t armed;

	CHECK(rnic_req_notify_cq(&cq->ibv_cq, 1) == 0);
	armed = rnic_db_rdma_cq(2, true, true, 1);
	CHECK(slot(CQ_DB_OFF) == armed);
	CHECK(le16toh(page->kick[2]) == CQ_DB_OFF / 4);
	CHECK(le32toh(page->kick_pi) == 3);

	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(slot(RQ_DB_OFF) == 1 && le16toh(page->kick[3]) == RQ_DB_OFF / 4);
	/* longer than the WQE offered: dropped, the QP would be failed */
	device_cqe(2, RNIC_CQE_OP_RECV, RNIC_RCQE_F_IMM, QPN, 0, 300);
	device_cqe(3, RNIC_CQE_OP_RECV, RNIC_RCQE_F_IMM, QPN, 0, 200);
	cq->ring[3].imm_data = htobe32(0xabcd);
	/* skip the failing of the QP: the fake context has no command fd */
	cq->ring[2].qpn = htole32(RNIC_CQE_QPN_SCRUBBED);
	CHECK(rnic_poll_cq(&cq->ibv_cq, 1, &wc) == 1);
	CHECK(wc.wr_id == 7 && wc.opcode == IBV_WC_RECV && wc.byte_len == 200 &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xabcd));
	/* the CI update repeats the arm, so it cannot withdraw it */
	CHECK(slot(CQ_DB_OFF) == rnic_db_rdma_cq(4, true, true, 1));
	CHECK(le32toh(page->kick_pi) == 4);
}

/*
 * RNIC_UCTX_F_KICK_CI: the kick register is written only when the
 * device's kick_ci shows it done with every entry before ours.
 */
static void test_kick_ci(void)
{
	struct ibv_sge sge = { .addr = 0x5000, .length = 16, .lkey = 4 };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	uint16_t pi = le32toh(page->kick_pi);

	ctx->flags |= RNIC_UCTX_F_KICK_CI;
	/* the device behind (kick_ci short of our kick_pi): no kick */
	page->kick_ci = htole32((uint16_t)(pi - 1));
	kick_reg = 0;
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(kick_reg == 0 && le32toh(page->kick_pi) == (uint16_t)(pi + 1));
	/* the device done with everything before our entry: kick */
	page->kick_ci = htole32((uint16_t)(pi + 1));
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(kick_reg == KICK_VALUE && le32toh(page->kick_pi) == (uint16_t)(pi + 2));
	ctx->flags &= ~RNIC_UCTX_F_KICK_CI;
	/* without the flag, kicked whatever kick_ci says */
	kick_reg = 0;
	page->kick_ci = htole32((uint16_t)(pi - 1));
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(kick_reg == KICK_VALUE);
}

/* Without the kick register the slot is written and the kernel asked */
static void test_kernel_kick(void)
{
	struct ibv_sge sge = { .addr = 0x5000, .length = 16, .lkey = 4 };
	struct ibv_recv_wr rwr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;

	ctx->kick_reg = NULL;
	kick_reg = 0;
	/* the fake context's command fd is -1: the kick fails, and says so */
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == EBADF);
	CHECK(rbad == &rwr);
	CHECK(slot(RQ_DB_OFF) == 2);
	CHECK(le32toh(page->kick_pi) == 4 && kick_reg == 0);
	ctx->kick_reg = &kick_reg;
}

/* A QP reset: its unpolled CQEs are dropped, its indices start over */
static void test_scrub(void)
{
	struct ibv_wc wc;

	device_cqe(4, RNIC_SQE_OP_SEND, 0, QPN, 3, 0);
	pthread_spin_lock(&cq->lock);
	rnic_cq_scrub(cq, QPN, NULL);
	pthread_spin_unlock(&cq->lock);
	CHECK(le32toh(cq->ring[4].qpn) == RNIC_CQE_QPN_SCRUBBED);
	CHECK(rnic_poll_cq(&cq->ibv_cq, 1, &wc) == 0 && cq->ci == 5);
}

/*
 * An SRQ's slot dropped by a QP's move to RESET (the kernel's modify_qp
 * response): free again for the next post, and only a slot the process
 * posted can be given back.
 */
static void test_srq_dropped(void)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 64, .lkey = 1 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct rnic_srq *srq = calloc(1, sizeof(*srq));
	uint32_t i;

	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->vsrq.srq.context = &ctx->ibv_ctx.context;
	srq->log2_depth = 2;
	srq->rqe_log2 = 5;
	srq->max_sge = 1;
	srq->wqes = rnic_ring_alloc(ctx, 4 << 5, &srq->wqes_bytes);
	srq->idx = rnic_ring_alloc(ctx, 4 * sizeof(*srq->idx), &srq->idx_bytes);
	srq->wrid = calloc(4, sizeof(*srq->wrid));
	srq->len = calloc(4, sizeof(*srq->len));
	srq->busy = calloc(4, sizeof(*srq->busy));
	srq->free = calloc(4, sizeof(*srq->free));
	for (i = 0; i < 4; i++)
		srq->free[i] = 3 - i;
	srq->nfree = 4;
	srq->dbp = &dbp;
	srq->db_off = 0xc0;

	/* slots 0..3 posted: the fifth post finds none */
	for (i = 0; i < 4; i++) {
		wr.wr_id = 100 + i;
		CHECK(rnic_post_srq_recv(&srq->vsrq.srq, &wr, &bad) == 0);
	}
	CHECK(srq->nfree == 0);
	CHECK(rnic_post_srq_recv(&srq->vsrq.srq, &wr, &bad) == ENOMEM);
	/* slot 2 dropped: the next post takes it */
	CHECK(rnic_srq_dropped(srq, 2) == 0);
	CHECK(srq->nfree == 1 && !srq->busy[2]);
	wr.wr_id = 200;
	CHECK(rnic_post_srq_recv(&srq->vsrq.srq, &wr, &bad) == 0);
	CHECK(le16toh(srq->idx[4 & 3]) == 2 && srq->wrid[2] == 200);
	CHECK(srq->pi == 5 && srq->nfree == 0);
	/* out of the SRQ, or a slot not posted: refused, counted */
	CHECK(rnic_srq_dropped(srq, 4) == -1);
	CHECK(rnic_srq_dropped(srq, 0xffff) == -1);
	pthread_spin_lock(&srq->lock);
	rnic_srq_slot_free(srq, 1);
	pthread_spin_unlock(&srq->lock);
	CHECK(rnic_srq_dropped(srq, 1) == -1);
	CHECK(srq->bad_drops == 3 && srq->nfree == 1);
}

/*
 * RNIC_UCTX_F_RQ_PEEK: a receive post writes its slot and nothing else,
 * with or without the kick register (no system call either), except on
 * a QP the process moved to ERR, whose flush must not wait.
 */
static void test_rq_peek(void)
{
	struct ibv_sge sge = { .addr = 0x5000, .length = 16, .lkey = 4 };
	struct ibv_recv_wr rwr = { .wr_id = 10, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad = NULL;
	uint16_t pi = le32toh(page->kick_pi);
	uint32_t rq = slot(RQ_DB_OFF);

	/* the earlier tests' receives as if completed: room for three */
	qp->rq.ci = qp->rq.pi;
	ctx->flags |= RNIC_UCTX_F_RQ_PEEK;
	kick_reg = 0;
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(slot(RQ_DB_OFF) == rq + 1);
	CHECK(le32toh(page->kick_pi) == pi && kick_reg == 0);
	/* the kernel is not asked either (its command fd is -1 here) */
	ctx->kick_reg = NULL;
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(slot(RQ_DB_OFF) == rq + 2 && le32toh(page->kick_pi) == pi);
	ctx->kick_reg = &kick_reg;
	/* ERR by the process's own modify: named and kicked */
	qp->state = IBV_QPS_ERR;
	CHECK(rnic_post_recv(&qp->vqp.qp, &rwr, &rbad) == 0);
	CHECK(slot(RQ_DB_OFF) == rq + 3);
	CHECK(le32toh(page->kick_pi) == (uint16_t)(pi + 1) &&
	      kick_reg == KICK_VALUE);
	qp->state = IBV_QPS_RTS;
	ctx->flags &= ~RNIC_UCTX_F_RQ_PEEK;
}

int main(void)
{
	setup();
	test_send_and_poll();
	test_arm_and_recv();
	test_kernel_kick();
	test_scrub();
	test_srq_dropped();
	test_kick_ci();
	test_rq_peek();
	if (failures) {
		fprintf(stderr, "rnic_datapath_test: %d check(s) failed\n",
			failures);
		return 1;
	}
	printf("rnic_datapath_test: all checks passed\n");
	return 0;
}
