// SPDX-License-Identifier: GPL-2.0
/*
 * RC errors: remote and local errors and the flush that follows, READ
 * and atomic limits, fence, duplicate READs and atomics replayed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * Remote errors: what each side completes, and the flush that follows
 */

TEST(rc_remote_access_error_and_flush_order)
{
	struct recorder *rc;
	struct rc_cqe cq[16];
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	u8 *snap = malloc(1 << 20);
	int n, i;

	rq_post(b, &b->mr[0], 0x80000, 64);
	rq_post(b, &b->mr[0], 0x81000, 64);
	rq_post(b, &b->mr[0], 0x82000, 64);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x1000, 5000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[1].flags &= ~RNIC_SQE_F_SIGNALED;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x2000, 3000, 0);
	a->sq[2].rkey ^= 0x100;			/* no such MR */
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x3000, 3000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[4].flags &= ~RNIC_SQE_F_SIGNALED;
	ring(a);
	world_run(w, 1000000000ULL);
	memcpy(snap, b->mr[0].buf, 1 << 20);
	/* Posted after the error: flushed too, signaled or not. */
	post_send(w, RNIC_SQE_OP_SEND, 64, 0);
	a->sq[5].flags &= ~RNIC_SQE_F_SIGNALED;
	ring(a);
	n = scq_visible(a, cq, 16);
	REQUIRE(n == 5);
	CHECK_EQ(cq[0].wqe_idx, 0);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].wqe_idx, 2);
	CHECK_EQ(cq[1].status, RNIC_WC_REM_ACCESS_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_REM_ACCESS);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_WRITE);
	for (i = 2; i < 5; i++) {
		CHECK_EQ(cq[i].wqe_idx, i + 1);
		CHECK_EQ(cq[i].status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(cq[i].byte_len, 0);
	}
	CHECK_EQ(cq[2].opcode, RNIC_SQE_OP_READ);
	/* every WQE retired exactly once, in order */
	REQUIRE(a->nscq == 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(a->scq[i].wqe_idx, i);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(STAT(a, nak_rem_access_rcvd), 1);
	/* The responder: NAK, QP_ACCESS_ERR, ERR; its RQ flushed. */
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(STAT(b, nak_rem_access_sent), 1);
	CHECK_EQ(count_events(b, RNIC_EQE_QP_ACCESS_ERR), 1);
	CHECK_EQ(b->ev[0].info, rc_psn_add(conn_default.psn[0], 6));
	REQUIRE(b->nrcq == 3);
	CHECK_EQ(b->rcq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(b->rcq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[2].wqe_idx, 2);
	rq_post(b, &b->mr[0], 0x83000, 64);
	rc_rq_doorbell(&b->qp);
	CHECK_EQ(b->nrcq, 4);
	CHECK_EQ(b->rcq[3].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->nev, 0);
	/* ERR sends nothing, and drops what arrives. */
	world_run(w, 1000000000ULL);
	CHECK_MEM_EQ(b->mr[0].buf, snap, 1 << 20);
	free(snap);
	free(rc);
	world_free(w);
}

struct resp_err_case {
	const char *what;
	u8 op;
	int len;
	u8 b_access;		/* QP access of the responder */
	int recv_len;		/* -1: none posted; -2: bad key */
	u8 req_status;
	u8 resp_status;		/* of the receive WQE, 0xff none */
	u8 resp_syn;
	u8 event;
	u8 nak;
	u8 max_dest;
	u64 roff;
	u32 adv;		/* packets executed before the failing one */
};

static void resp_err(const struct resp_err_case *t)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	struct rc_cqe cq[4];
	u8 *snap;
	u32 epsn;

	c.max_dest_rd_atomic = t->max_dest;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	b->qp.access = t->b_access;
	if (t->recv_len >= 0) {
		rq_post(b, &b->mr[0], 0x8000, t->recv_len);
	} else if (t->recv_len == -2) {
		rq_post(b, &b->mr[0], 0x8000, 64);
		b->rq[0].sge[0].lkey ^= 0x100;
	}
	mr_add(b, 4, 0x50000000, 4096, ALL_ACCESS);	/* not FAST_REG */
	post_rdma(w, t->op, 0, t->roff, t->len, 0);
	a->sq[0].key = b->mr[4].key;
	post_send(w, RNIC_SQE_OP_SEND, 1, 0);
	snap = malloc(1 << 20);
	memcpy(snap, b->mr[0].buf, 1 << 20);
	epsn = rc_rq_psn(&b->qp);
	ring(a);
	world_run(w, 10ULL * 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 4) == 2);
	CHECK_EQ(cq[0].status, t->req_status);
	CHECK_EQ(cq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(count_events(b, t->event), t->event ? 1 : 0);
	CHECK_EQ(b->nev, t->event ? 1 : 0);
	CHECK_EQ(a->nev, 0);
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(epsn, t->adv));
	/* one NAK, the last thing the responder sent, at the failing PSN */
	{
		int i = rc->n - 1;

		while (i >= 0 && rc->r[i].from != 1)
			i--;
		REQUIRE(i >= 0);
		CHECK_EQ(rc->r[i].op, RC_OP_ACK);
		CHECK_EQ(rc->r[i].syn, t->nak);
		CHECK_EQ(rc->r[i].psn, rc_psn_add(epsn, t->adv));
		CHECK_EQ(STAT(b, acks_sent), 0);
	}
	if (t->resp_status != 0xff) {
		REQUIRE(b->nrcq == 1);
		CHECK_EQ(b->rcq[0].status, t->resp_status);
		CHECK_EQ(b->rcq[0].syndrome, t->resp_syn);
		CHECK_EQ(b->rcq[0].byte_len, 0);
	} else if (t->recv_len >= 0) {
		REQUIRE(b->nrcq == 1);
		CHECK_EQ(b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
	} else {
		CHECK_EQ(b->nrcq, 0);
	}
	/* Nothing reached memory but what a SEND may have placed. */
	if (t->op != RNIC_SQE_OP_SEND && t->op != RNIC_SQE_OP_SEND_INV)
		CHECK_MEM_EQ(b->mr[0].buf, snap, 1 << 20);
	if (test_failed())
		fprintf(stderr, "# case: %s\n", t->what);
	free(snap);
	free(rc);
	world_free(w);
}

TEST(rc_responder_errors)
{
	const u8 all = ALL_ACCESS;
	const struct resp_err_case cases[] = {
		{ "SEND too long", RNIC_SQE_OP_SEND, 3000, all, 2999,
		  RNIC_WC_REM_INV_REQ_ERR, RNIC_WC_LOC_LEN_ERR,
		  RNIC_ERR_RECV_TOO_SHORT, 0, RC_AETH_NAK_INV, 16, 0, 2 },
		{ "SEND_INV of a non-FAST_REG key", RNIC_SQE_OP_SEND_INV, 10,
		  all, 64, RNIC_WC_REM_INV_REQ_ERR, RNIC_WC_REM_INV_REQ_ERR,
		  RNIC_ERR_INV_KEY, 0, RC_AETH_NAK_INV, 16, 0, 0 },
		{ "receive SGE key", RNIC_SQE_OP_SEND, 10, all, -2,
		  RNIC_WC_REM_OP_ERR, RNIC_WC_LOC_PROT_ERR, RNIC_ERR_BAD_KEY,
		  0, RC_AETH_NAK_OP, 16, 0, 0 },
		{ "WRITE without QP access", RNIC_SQE_OP_WRITE, 10,
		  RNIC_ACCESS_REMOTE_READ, -1, RNIC_WC_REM_ACCESS_ERR, 0xff, 0,
		  RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "WRITE out of bounds", RNIC_SQE_OP_WRITE, 4096, all, -1,
		  RNIC_WC_REM_ACCESS_ERR, 0xff, 0, RNIC_EQE_QP_ACCESS_ERR,
		  RC_AETH_NAK_ACCESS, 16, (1 << 20) - 4095, 0 },
		{ "READ without QP access", RNIC_SQE_OP_READ, 10,
		  RNIC_ACCESS_REMOTE_WRITE, -1, RNIC_WC_REM_ACCESS_ERR, 0xff, 0,
		  RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "READ with no responder resources", RNIC_SQE_OP_READ, 10,
		  all, -1, RNIC_WC_REM_INV_REQ_ERR, 0xff, 0,
		  RNIC_EQE_QP_REQ_ERR, RC_AETH_NAK_INV, 0, 0, 0 },
		{ "atomic without QP access", RNIC_SQE_OP_FETCH_ADD, 8,
		  RNIC_ACCESS_REMOTE_WRITE, -1, RNIC_WC_REM_ACCESS_ERR, 0xff,
		  0, RNIC_EQE_QP_ACCESS_ERR, RC_AETH_NAK_ACCESS, 16, 0, 0 },
		{ "atomic misaligned", RNIC_SQE_OP_CMP_SWAP, 8, all, -1,
		  RNIC_WC_REM_INV_REQ_ERR, 0xff, 0, RNIC_EQE_QP_REQ_ERR,
		  RC_AETH_NAK_INV, 16, 4, 0 },
		{ "atomic with no responder resources", RNIC_SQE_OP_FETCH_ADD,
		  8, all, -1, RNIC_WC_REM_INV_REQ_ERR, 0xff, 0,
		  RNIC_EQE_QP_REQ_ERR, RC_AETH_NAK_INV, 0, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases) && !test_failed(); i++)
		resp_err(&cases[i]);
}

/* A zero-length WRITE or READ carries no key: none is checked. */
TEST(rc_zero_length_rdma_not_checked)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];

	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 0, 0);
	a->sq[0].rkey = 0xdead00;
	a->sq[0].remote_addr = ~0ULL;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 0, 0);
	a->sq[1].rkey = 0xbeef00;
	b->qp.access = 0;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[1].status, RNIC_WC_SUCCESS);
	CHECK_EQ(rec_count(rc, 1, RC_OP_READ_RESP_ONLY), 1);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Local errors of the requester
 */

TEST(rc_requester_local_errors)
{
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a;

	/* A bad local key: LOC_PROT_ERR, after the WQE before it. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100, 0);
	a->sq[1].sge[0].lkey ^= 0x100;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_BAD_KEY);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(rec_count(rc, 0, -1), 98);	/* nothing of WQE 1 */
	CHECK_EQ(STAT(a, key_violations), 1);
	free(rc);
	world_free(w);

	/* READ into memory without LOCAL_WRITE */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	a->mr[0].access = 0;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_KEY_ACCESS);
	CHECK_EQ(rec_count(rc, 0, -1), 0);
	free(rc);
	world_free(w);

	/* A malformed WQE: LOC_QP_OP_ERR, in order */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	a->bad_sq_idx = 1;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_BAD_WQE);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(STAT(a, wqe_errors), 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * READ and atomic limits, fence
 */

TEST(rc_max_rd_atomic_zero)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a;

	c.max_rd_atomic = 0;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 3000, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_RESP_RES);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_READ);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(rec_count(rc, 0, RC_OP_READ_REQ), 0);
	CHECK_EQ(rec_count(rc, 0, -1), 3);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(w->n[1].qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

static bool limit_tap(struct world *w, int from, u8 *pkt, size_t *len)
{
	struct recorder *rc = rec_of(w);
	struct rc_hdr h;
	int i, reqs = 0;

	rec_tap(w, from, pkt, len);
	if (from || rc_pkt_parse(pkt, *len, &h) ||
	    (h.opcode != RC_OP_READ_REQ && h.opcode != RC_OP_FETCH_ADD))
		return true;
	/* READ/atomic WQEs started, minus those completed */
	for (i = 0; i < rc->n; i++)
		reqs += rc->r[i].from == 0 &&
			(rc->r[i].op == RC_OP_READ_REQ ||
			 rc->r[i].op == RC_OP_FETCH_ADD);
	CHECK(reqs - w->n[0].nscq <= 2);
	return true;
}

TEST(rc_max_rd_atomic_limit_and_fence)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	int i, s1 = -1, s2 = -1;

	c.max_rd_atomic = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	w->tap = limit_tap;
	for (i = 0; i < 8; i++)
		post_rdma(w, i % 3 ? RNIC_SQE_OP_READ : RNIC_SQE_OP_FETCH_ADD,
			  0x1000 * i, 0x1000 * i, i % 3 ? 3000 : 8, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 8);
	for (i = 0; i < 8; i++)
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
	free(rc);
	world_free(w);

	/* A fenced SEND waits for the READ before it; an unfenced not. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 60000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0x20000, 0x20000, 10, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0x40000, 0x40000, 60000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0x20000, 0x20000, 10,
		  RNIC_SQE_F_FENCE);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 4);
	for (i = 0; i < rc->n; i++) {
		if (rc->r[i].from || rc->r[i].op != RC_OP_WRITE_ONLY)
			continue;
		if (s1 < 0)
			s1 = rc->r[i].a_nscq;
		else
			s2 = rc->r[i].a_nscq;
	}
	CHECK_EQ(s1, 0);	/* went out while the first READ ran */
	CHECK_EQ(s2, 3);	/* only once the second READ completed */
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Duplicates: READ executed again, atomics replayed, never re-executed
 */

TEST(rc_read_replay)
{
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	int i, reqs = 0;

	/* The whole first response stream lost: the timeout asks again. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	b = &w->n[1];
	rc->drop_from = 1;
	rc->drop_op = RC_OP_READ_RESP_FIRST;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x10000, 5000, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(a->mr[0].buf, b->mr[0].buf + 0x10000, 5000);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(b, read_requests_rcvd), 1);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);	/* the gap did it */
	CHECK_EQ(STAT(a, retransmits), 1);
	free(rc);
	world_free(w);

	/* A middle response lost: re-requested from the missing PSN. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	b = &w->n[1];
	rc->drop_from = 1;
	rc->drop_op = RC_OP_READ_RESP_MIDDLE;
	rc->drop_count = 1;
	rc->drop_skip = 2;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0x10000, 10 * 1024 + 7, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(a->mr[0].buf, b->mr[0].buf + 0x10000, 10 * 1024 + 7);
	for (i = 0; i < rc->n; i++) {
		if (rc->r[i].from || rc->r[i].op != RC_OP_READ_REQ)
			continue;
		if (reqs++ == 1) {
			/* responses 0, 1 and 2 arrived; 3 is missing */
			CHECK_EQ(rc->r[i].psn, rc_psn_add(conn_default.psn[0],
							  3));
			CHECK_EQ(rc->r[i].va, b->mr[0].va + 0x10000 + 3 * 1024);
			CHECK_EQ(rc->r[i].dma_len, 7 * 1024 + 7);
		}
	}
	CHECK_EQ(reqs, 2);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	free(rc);
	world_free(w);
}

TEST(rc_atomic_replay)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	u64 v0, v;

	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	memcpy(&v0, b->mr[0].buf + 0x100, 8);
	rc->drop_from = 1;
	rc->drop_op = RC_OP_ATOMIC_ACK;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0x100, 8, 0);
	a->sq[0].compare_add = 5;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	memcpy(&v, b->mr[0].buf + 0x100, 8);
	CHECK_EQ(v, v0 + 5);			/* once, not twice */
	memcpy(&v, a->mr[0].buf, 8);
	CHECK_EQ(v, v0);
	CHECK_EQ(STAT(b, atomic_requests_rcvd), 1);
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1);
	free(rc);
	world_free(w);

	/*
	 * One responder resource, two atomics unanswered: the first one's
	 * state is recycled, so its duplicate is dropped and the requester
	 * runs out of retries; neither is ever executed twice.
	 */
	c.max_dest_rd_atomic = 1;
	c.retry_cnt = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	memcpy(&v0, b->mr[0].buf + 0x100, 8);
	rc->drop_from = 1;
	rc->drop_op = RC_OP_ATOMIC_ACK;
	rc->drop_count = 1;
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0x100, 8, 0);
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 8, 0x100, 8, 0);
	a->sq[0].compare_add = 1;
	a->sq[1].compare_add = 1;
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	memcpy(&v, b->mr[0].buf + 0x100, 8);
	CHECK_EQ(v, v0 + 2);
	CHECK_EQ(STAT(b, atomic_requests_rcvd), 2);
	CHECK_EQ(STAT(b, resp_res_exhausted), 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Responder resources beyond max_dest_rd_atomic
 */

TEST(rc_resp_res_exhausted_counts_beyond_max_dest)
{
	struct conn c = conn_default;
	int n, pat;

	c.max_dest_rd_atomic = 2;
	/* all READs, all atomics, alternating; 1 to 4 in one burst */
	for (pat = 0; pat < 3; pat++) {
		for (n = 1; n <= 4; n++) {
			struct recorder *rc;
			struct world *w = world_mr(&c, &rc);
			int i;

			for (i = 0; i < n; i++) {
				bool at = pat == 1 || (pat == 2 && i % 2);

				post_rdma(w, at ? RNIC_SQE_OP_FETCH_ADD :
					  RNIC_SQE_OP_READ, 0x100 * i,
					  0x100 * i, 8, 0);
			}
			ring(&w->n[0]);
			world_run(w, 1000000000ULL);
			CHECK_EQ(w->n[0].nscq, n);
			CHECK_EQ(STAT(&w->n[1], resp_res_exhausted),
				 n > 2 ? n - 2 : 0);
			free(rc);
			world_free(w);
		}
	}
}
