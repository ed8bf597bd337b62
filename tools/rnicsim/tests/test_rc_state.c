// SPDX-License-Identifier: GPL-2.0
/*
 * RC QP states: MODIFY_QP transitions, SQD drain, RTR and COMM_EST,
 * fatal errors and RESET, SRQ flush, the PSNs QUERY_QP reports.
 */
#include <stdlib.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * MODIFY_QP
 */

TEST(rc_modify_transitions)
{
	struct rc_qp qp;
	struct rc_attr a = { 0 };
	struct world *w = world_new(&conn_default, 1);

	rc_qp_init(&qp, &f_ops, &w->n[0], 5);
	CHECK_EQ(qp.state, RNIC_QPS_RESET);
	/* RESET->ERR is not a transition (IBA table 91); RESET->RESET is */
	a.mask = A(STATE);
	a.state = RNIC_QPS_ERR;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	CHECK_EQ(qp.state, RNIC_QPS_RESET);
	a.state = RNIC_QPS_RESET;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	/* RESET->RTR skips INIT */
	a.mask = A(STATE) | M_RTR;
	a.state = RNIC_QPS_RTR;
	a.path_mtu = RNIC_PMTU_1024;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	/* INIT needs PKEY_INDEX and ACCESS, and takes nothing else */
	a.mask = A(STATE) | A(ACCESS);
	a.state = RNIC_QPS_INIT;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_INIT | A(QKEY);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_INIT;
	a.access = 0x10;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.access = RNIC_ACCESS_REMOTE_WRITE;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_INIT);
	/* INIT->RTR: each required attribute, and bad values */
	a.mask = A(STATE) | (M_RTR & ~A(RQ_PSN));
	a.state = RNIC_QPS_RTR;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE) | M_RTR;
	a.path_mtu = 6;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.path_mtu = RNIC_PMTU_2048;
	a.max_dest_rd_atomic = 17;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.max_dest_rd_atomic = 4;
	a.rq_psn = 0x1000000;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.rq_psn = 0x123;
	a.mask |= A(CUR_STATE);
	a.cur_state = RNIC_QPS_RESET;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.cur_state = RNIC_QPS_INIT;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_RTR);
	CHECK_EQ(qp.mtu, 2048);
	CHECK_EQ(rc_rq_psn(&qp), 0x123);
	/* RTR->RTS */
	a.mask = A(STATE) | M_RTS;
	a.state = RNIC_QPS_RTS;
	a.retry_cnt = 8;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.retry_cnt = 7;
	a.timeout = 32;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_PARAM);
	a.timeout = 14;
	a.sq_psn = 0xabc;
	a.mask |= A(PATH_MTU);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask &= ~A(PATH_MTU);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(rc_sq_psn(&qp), 0xabc);
	/* attribute-only change, SQE never, SQD and back */
	a.mask = A(MIN_RNR_TIMER);
	a.min_rnr_timer = 12;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.min_rnr_timer, 12);
	a.mask = A(STATE);
	a.state = RNIC_QPS_SQE;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.mask = A(STATE) | A(SQD_NOTIFY);
	a.state = RNIC_QPS_SQD;
	a.sqd_notify = 1;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	/* drained at once: SQ_DRAINED now */
	CHECK_EQ(count_events(&w->n[0], RNIC_EQE_SQ_DRAINED), 1);
	/* SQD->SQD takes no PATH_MTU (IBA); the other path attributes */
	a.mask = A(STATE) | A(PATH_MTU) | A(TIMEOUT);
	a.path_mtu = RNIC_PMTU_256;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	CHECK_EQ(qp.mtu, 2048);
	a.mask = A(STATE) | A(TIMEOUT);
	a.timeout = 18;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.timeout, 18);
	CHECK_EQ(qp.mtu, 2048);
	a.mask = A(STATE);
	a.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	/* to ERR and RESET: nothing but the state */
	a.mask = A(STATE) | A(ACCESS);
	a.state = RNIC_QPS_ERR;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_ATTR_MASK);
	a.mask = A(STATE);
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_ERR);
	a.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_BAD_TRANSITION);
	a.state = RNIC_QPS_RESET;
	CHECK_EQ(rc_modify(&qp, &a), RNIC_AQ_SUCCESS);
	CHECK_EQ(qp.state, RNIC_QPS_RESET);
	CHECK_EQ(rc_sq_psn(&qp), 0);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * SQD, RTR, fatal errors, SRQ
 */

TEST(rc_sqd_drains_begun_wqes)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	struct rc_attr at = { .mask = A(STATE) | A(SQD_NOTIFY),
			      .state = RNIC_QPS_SQD, .sqd_notify = 1 };
	int i;

	for (i = 0; i < 4; i++)
		post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 5000, 0);
	ring(a);
	/* Start the first WQE only (one of its five packets), then SQD. */
	CHECK_EQ(rc_tx(&a->qp, 1), 1);
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	CHECK(rc_sq_draining(&a->qp));
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 0);
	/* SQD->SQD changes wait for the drain */
	at.mask = A(TIMEOUT);
	at.timeout = 12;
	CHECK_EQ(rc_modify(&a->qp, &at), RNIC_AQ_BAD_STATE);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 1);
	CHECK_EQ(rec_count(rc, 0, -1), 5);
	CHECK(!rc_sq_draining(&a->qp));
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 1);
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	/* the responder of an SQD QP still serves */
	CHECK_EQ(a->qp.state, RNIC_QPS_SQD);
	at.mask = A(STATE);
	at.state = RNIC_QPS_RTS;
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 4);
	CHECK_EQ(count_events(a, RNIC_EQE_SQ_DRAINED), 1);
	free(rc);
	world_free(w);
}

TEST(rc_comm_est_and_rtr)
{
	struct conn c = conn_default;
	struct world *w = world_alloc(1);
	struct node *a, *b;
	int i;

	/* node 1 stays in RTR: it answers, it does not send */
	for (i = 0; i < 2; i++) {
		CHECK_EQ(node_modify(&w->n[i], RNIC_QPS_INIT, M_INIT, &c), 0);
		CHECK_EQ(node_modify(&w->n[i], RNIC_QPS_RTR, M_RTR, &c), 0);
	}
	a = &w->n[0];
	b = &w->n[1];
	CHECK_EQ(node_modify(a, RNIC_QPS_RTS, M_RTS, &c), 0);
	mr_add(a, 0, 0x1000, 65536, ALL_ACCESS);
	mr_add(b, 0, 0x1000, 65536, ALL_ACCESS);
	/* b's SQ is not read in RTR */
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	a->sq_pi = 0;
	b->sq[0] = a->sq[0];
	b->sq_pi = 1;
	rc_sq_doorbell(&b->qp);
	CHECK_EQ(rc_tx(&b->qp, 10), 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10, 0);
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 2);
	CHECK_EQ(count_events(b, RNIC_EQE_COMM_EST), 1);
	CHECK_EQ(b->nev, 1);
	CHECK_EQ(b->nscq, 0);
	world_free(w);
}

TEST(rc_fatal_cq_error_reset)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_attr at = { .mask = A(STATE), .state = RNIC_QPS_RESET };

	/* The CQ cannot take a completion: QP_FATAL, ERR, silence. */
	rq_post(b, &b->mr[0], 0, 100);
	rq_post(b, &b->mr[0], 0, 100);
	b->cq_fail = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(b->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(count_events(b, RNIC_EQE_QP_FATAL), 1);
	CHECK_EQ(b->ev[0].reason, RNIC_ERR_CQ_ERROR);
	CHECK_EQ(b->nrcq, 0);
	CHECK_EQ(STAT(b, qp_errors), 1);
	/*
	 * a: the first SEND was ACKed before b died, or not: either way
	 * every WQE completes, in order.
	 */
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[1].status, a->scq[0].status == RNIC_WC_SUCCESS ?
		 a->scq[1].status : RNIC_WC_WR_FLUSH_ERR);
	/* rc_fatal from the device */
	b->cq_fail = false;
	CHECK_EQ(rc_modify(&b->qp, &at), 0);
	CHECK_EQ(b->qp.state, RNIC_QPS_RESET);
	CHECK_EQ(b->deadline, 0);
	free(rc);
	world_free(w);

	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50000, 0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50, 0);
	ring(a);
	rc_tx(&a->qp, 10);
	rc_fatal(&a->qp, RNIC_ERR_BAD_DOORBELL, 0x1234);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	REQUIRE(a->nev == 1);
	CHECK_EQ(a->ev[0].type, RNIC_EQE_QP_FATAL);
	CHECK_EQ(a->ev[0].reason, RNIC_ERR_BAD_DOORBELL);
	CHECK_EQ(a->ev[0].info, 0x1234);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(STAT(a, qp_errors), 0);
	CHECK_EQ(a->deadline, 0);
	/* to RESET mid-flight: no completions, nothing sent, fresh PSNs */
	CHECK_EQ(rc_modify(&a->qp, &at), 0);
	CHECK_EQ(a->nscq, 2);
	CHECK_EQ(rc_tx(&a->qp, 10), 0);
	free(rc);
	world_free(w);
}

TEST(rc_srq_flush_and_last_wqe)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_attr at = { .mask = A(STATE), .state = RNIC_QPS_ERR };

	b->qp.srq = true;
	rq_post(b, &b->mr[0], 0, 8192);
	rq_post(b, &b->mr[0], 0x4000, 8192);
	rq_post(b, &b->mr[0], 0x8000, 8192);
	/* The first packet of a SEND takes an SRQ WQE; then b dies. */
	rc->drop_all[0] = false;
	post_send(w, RNIC_SQE_OP_SEND, 3000, 0);
	ring(a);
	rc_tx(&a->qp, 1);
	w->now += LAT_NS;
	while (wire_deliver(w))
		;
	CHECK_EQ(b->rq_ci, 1);
	CHECK_EQ(rc_modify(&b->qp, &at), 0);
	/* only the taken WQE is flushed, then LAST_WQE_REACHED */
	REQUIRE(b->nrcq == 1);
	CHECK_EQ(b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(b->rcq[0].wqe_idx, 0);
	CHECK_EQ(b->rq_ci, 1);
	CHECK_EQ(count_events(b, RNIC_EQE_LAST_WQE_REACHED), 1);
	rc_rq_doorbell(&b->qp);
	CHECK_EQ(b->nrcq, 1);
	CHECK_EQ(b->rq_ci, 1);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * QUERY_QP PSNs
 */

TEST(rc_query_psns)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	u32 p0 = conn_default.psn[0];

	CHECK_EQ(rc_sq_psn(&a->qp), p0);
	CHECK_EQ(rc_rq_psn(&b->qp), p0);
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 3000, 0);	/* 3 PSNs */
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 5000, 0);	/* 5 PSNs */
	post_rdma(w, RNIC_SQE_OP_FETCH_ADD, 0, 0, 8, 0);	/* 1 PSN */
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 3);
	CHECK_EQ(rc_sq_psn(&a->qp), rc_psn_add(p0, 9));
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(p0, 9));
	/* and across 2^24 */
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 10 * 1024, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(rc_sq_psn(&a->qp), rc_psn_add(p0, 19));
	CHECK_EQ(rc_rq_psn(&b->qp), 3);
	free(rc);
	world_free(w);
}
