// SPDX-License-Identifier: GPL-2.0
/*
 * RC on a lossy or silent wire: go-back-N cost, RNR NAKs and their
 * retry count, the local ACK timeout and retry count, link down, the ACK
 * timer held over a PFC pause.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * Go-back-N cost: a 64 KiB WRITE stream with 1% of packets dropped
 */

static void write_stream(u64 seed, u8 pmtu, unsigned int drop_pm)
{
	struct conn c = conn_default;
	struct world *w;
	struct node *a, *b;
	u64 carried, resent;
	int i, n = 64;

	c.pmtu = pmtu;
	w = world_new(&c, seed);
	a = &w->n[0];
	b = &w->n[1];
	mr_add(a, 0, 0x100000, 1 << 16, ALL_ACCESS);
	mr_add(b, 0, 0x200000, n << 16, ALL_ACCESS);
	w->drop_pm = drop_pm;
	for (i = 0; i < n; i++) {
		struct rc_swqe *s = sq_post(a, RNIC_SQE_OP_WRITE, 0);

		sge_add(s, &a->mr[0], 0, 1 << 16);
		s->remote_addr = b->mr[0].va + ((u64)i << 16);
		s->rkey = b->mr[0].key;
	}
	fill(&a->mr[0], 0, 1 << 16, (u32)seed);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	REQUIRE(a->nscq == n);
	for (i = 0; i < n; i++) {
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
		CHECK(test_mem_eq(__FILE__, __LINE__, "write",
				  b->mr[0].buf + ((u64)i << 16), a->mr[0].buf,
				  1 << 16));
	}
	carried = STAT(a, rc_req_packets);
	resent = STAT(a, retransmits);
	CHECK_EQ(carried, (u64)n * ((1 << 16) / rnic_pmtu_bytes(pmtu)));
	printf("# 64 KiB WRITE x %d, mtu %u, drop %u.%02u%%, seed %llu: "
	       "%llu packets carried, %llu retransmitted (%llu dropped, "
	       "%llu NAK seq, %llu timeouts)\n", n, rnic_pmtu_bytes(pmtu),
	       drop_pm / 100, drop_pm % 100, (unsigned long long)seed,
	       (unsigned long long)carried, (unsigned long long)resent,
	       (unsigned long long)w->dropped,
	       (unsigned long long)STAT(a, nak_seq_rcvd),
	       (unsigned long long)STAT(a, local_ack_timeouts));
	CHECK(resent <= carried);
	CHECK_EQ(a->qp.qp_stats[RNIC_QP_STAT_retransmits], resent);
	CHECK(STAT(b, nak_seq_sent) >= STAT(a, nak_seq_rcvd));
	world_free(w);
}

TEST(rc_write_stream_1pct_drop)
{
	write_stream(21, RNIC_PMTU_1024, 100);
	write_stream(22, RNIC_PMTU_1024, 100);
	write_stream(23, RNIC_PMTU_4096, 100);
	write_stream(24, RNIC_PMTU_256, 100);
}

/* ------------------------------------------------------------------------
 * RNR
 */

TEST(rc_rnr_retry)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a, *b;
	u64 delay = rnic_rnr_delay_us(14) * 1000ULL;

	c.min_rnr_timer = 14;		/* 1.28 ms */
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	post_send(w, RNIC_SQE_OP_SEND, 3000, 0);
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, delay / 2);
	/* The first packet was refused, the rest dropped, nothing retried. */
	CHECK_EQ(STAT(b, rnr_naks_sent), 1);
	CHECK_EQ(STAT(a, rnr_naks_rcvd), 1);
	CHECK_EQ(STAT(b, nak_seq_sent), 0);
	CHECK_EQ(rec_count(rc, 0, RC_OP_SEND_FIRST), 1);
	CHECK_EQ(rec_count(rc, 1, RC_OP_ACK), 1);
	{
		int i = 0;

		while (i < rc->n && rc->r[i].from != 1)
			i++;
		REQUIRE(i < rc->n);
		CHECK_EQ(rc->r[i].syn, RC_AETH_RNR(14));
		CHECK_EQ(rc->r[i].psn, conn_default.psn[0]);
	}
	CHECK_EQ(rc_rq_psn(&b->qp), conn_default.psn[0]);
	world_run(w, delay);
	CHECK_EQ(rec_count(rc, 0, RC_OP_SEND_FIRST), 2);
	CHECK(STAT(b, rnr_naks_sent) >= 2);
	/* A buffer at last: both messages go through. */
	rq_post(b, &b->mr[0], 0, 3000);
	rq_post(b, &b->mr[0], 4096, 10);
	world_run(w, 100 * delay);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[1].status, RNIC_WC_SUCCESS);
	REQUIRE(b->nrcq == 2);
	CHECK_EQ(b->rcq[0].byte_len, 3000);
	CHECK_MEM_EQ(b->mr[0].buf, a->mr[0].buf, 3000);
	CHECK_EQ(STAT(a, retransmits), rec_count(rc, 0, -1) - 4);
	CHECK_EQ(STAT(a, rnr_retry_exceeded), 0);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	free(rc);
	world_free(w);
}

TEST(rc_rnr_retry_exceeded)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct rc_cqe cq[8];
	struct world *w;
	struct node *a, *b;

	c.rnr_retry = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	b = &w->n[1];
	post_send(w, RNIC_SQE_OP_WRITE, 100, 0);
	a->sq[0].remote_addr = b->mr[0].va;
	a->sq[0].rkey = b->mr[0].key;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	world_run(w, 10ULL * 1000000000ULL);
	/* The WRITE, then the SEND three times: once and two retries. */
	{
		int i, k = 0;

		for (i = 0; i < rc->n; i++)
			k += rc->r[i].from == 0 &&
			     rc->r[i].psn == rc_psn_add(c.psn[0], 1);
		CHECK_EQ(k, 3);
	}
	CHECK_EQ(STAT(b, rnr_naks_sent), 3);
	REQUIRE(scq_visible(a, cq, 8) == 3);
	CHECK_EQ(cq[0].status, RNIC_WC_SUCCESS);
	CHECK_EQ(cq[1].status, RNIC_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(cq[1].syndrome, RNIC_ERR_RNR_EXC);
	CHECK_EQ(cq[1].wqe_idx, 1);
	CHECK_EQ(cq[2].status, RNIC_WC_WR_FLUSH_ERR);
	CHECK_EQ(cq[2].syndrome, RNIC_ERR_FLUSHED);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(STAT(a, rnr_retry_exceeded), 1);
	CHECK_EQ(STAT(a, cqe_errors), 1);
	CHECK_EQ(STAT(a, cqe_flushed), 1);
	CHECK_EQ(STAT(a, qp_errors), 1);
	/* An error reported by a CQE raises no event. */
	CHECK_EQ(a->nev, 0);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Local ACK timeout and retry count
 */

static void retry_case(u8 retry_cnt)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	u64 t = rnic_ack_timeout_ns(c.timeout);

	c.retry_cnt = retry_cnt;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 2500, 0);	/* 3 packets */
	post_send(w, RNIC_SQE_OP_SEND, 1, 0);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	REQUIRE(a->nscq == 2);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_RETRY_EXC);
	CHECK_EQ(a->scq[1].status, RNIC_WC_WR_FLUSH_ERR);
	/* retry_cnt retries: each resends all four packets */
	CHECK_EQ(rec_count(rc, 0, -1), 4 * (1 + retry_cnt));
	CHECK_EQ(STAT(a, retransmits), 4 * retry_cnt);
	CHECK_EQ(STAT(a, rc_req_packets), 4);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1 + retry_cnt);
	CHECK_EQ(STAT(a, retry_exceeded), 1);
	/* Each timeout no earlier than T, no later than 2T. */
	CHECK(w->now >= (1 + retry_cnt) * t);
	CHECK(w->now <= (1 + retry_cnt) * 2 * t + 10 * LAT_NS);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	CHECK_EQ(a->deadline, 0);
	free(rc);
	world_free(w);
}

TEST(rc_retry_exceeded)
{
	retry_case(0);
	retry_case(3);
	retry_case(7);		/* seven means seven */
}

TEST(rc_timeout_zero_never_fires)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;

	c.timeout = 0;
	w = world_mr(&c, &rc);
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(&w->n[0]);
	world_run(w, 100ULL * 1000000000ULL);
	CHECK_EQ(w->n[0].nscq, 0);
	CHECK_EQ(w->n[0].deadline, 0);
	CHECK_EQ(rec_count(rc, 0, -1), 1);
	CHECK_EQ(w->n[0].qp.state, RNIC_QPS_RTS);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Link down, PFC pause
 */

TEST(rc_link_down_retry_exceeded)
{
	struct conn c = conn_default;
	struct recorder *rc;
	struct world *w;
	struct node *a;
	u64 t = rnic_ack_timeout_ns(c.timeout);

	c.retry_cnt = 2;
	w = world_mr(&c, &rc);
	a = &w->n[0];
	a->link_down = true;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	world_run(w, 1000ULL * 1000000000ULL);
	/* Lost sends count as sent: the timers run as on a real link. */
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_RETRY_EXC_ERR);
	CHECK_EQ(STAT(a, rc_req_packets), 1);
	CHECK_EQ(STAT(a, retransmits), 2);
	CHECK_EQ(a->qp.qp_stats[RNIC_QP_STAT_tx_packets], 3);
	CHECK(w->now >= 3 * t);
	free(rc);
	world_free(w);
}

TEST(rc_timer_defer_for_pfc)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	u64 t = rnic_ack_timeout_ns(conn_default.timeout), d0;

	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 100, 0);
	ring(a);
	rc_tx(&a->qp, 10);
	d0 = a->deadline;
	CHECK_EQ(d0, w->now + t);
	/* a 1 ms pause does not count */
	rc_timer_defer(&a->qp, 1000000);
	CHECK_EQ(a->deadline, d0 + 1000000);
	/* an early rc_timer() is harmless */
	rc_timer(&a->qp);
	CHECK_EQ(a->deadline, d0 + 1000000);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	w->now = d0 + 999999;
	rc_timer(&a->qp);
	CHECK_EQ(STAT(a, local_ack_timeouts), 0);
	w->now = d0 + 1000000;
	rc_timer(&a->qp);
	CHECK_EQ(STAT(a, local_ack_timeouts), 1);
	CHECK_EQ(a->deadline, w->now + t);
	free(rc);
	world_free(w);
}
