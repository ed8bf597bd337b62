// SPDX-License-Identifier: GPL-2.0
/*
 * RC data path on a clean wire: every opcode with its data checked at
 * every path MTU, segmentation opcodes, ACK coalescing and AckReq, the
 * PSN window, refused sends, local operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * Every opcode, data verified, at every path MTU
 */

/* One message from node 0 to node 1; returns false on any failure. */
static void one_op(struct world *w, u8 op, u32 len, u32 seed)
{
	struct node *a = &w->n[0], *b = &w->n[1];
	struct fmr *la = &a->mr[0], *rb = &b->mr[0], *inv = &b->mr[3];
	int ns = a->nscq, nr = b->nrcq;
	u64 loff = 3 + seed % 64, roff = 8 * (1 + seed % 32);
	struct rc_swqe *s;
	u64 before = 0, after, v;

	if (op == RNIC_SQE_OP_CMP_SWAP || op == RNIC_SQE_OP_FETCH_ADD)
		len = 8;
	fill(la, loff, len, seed);
	fill(rb, roff, len, seed + 77);
	memcpy(&before, rb->buf + roff, op >= RNIC_SQE_OP_CMP_SWAP ? 8 : 0);
	s = sq_post(a, op, RNIC_SQE_F_SOLICITED);
	sge_add(s, la, loff, len);
	s->remote_addr = rb->va + roff;
	s->rkey = rb->key;
	s->imm_data = cpu_to_be32(seed);
	if (op == RNIC_SQE_OP_SEND_INV) {
		inv->valid = true;
		s->key = inv->key;
	}
	if (op == RNIC_SQE_OP_CMP_SWAP) {
		s->compare_add = seed & 1 ? before : before + 1;
		s->swap = 0x1234567890abcdefULL + seed;
	} else if (op == RNIC_SQE_OP_FETCH_ADD) {
		s->compare_add = 0x100000001ULL * seed;
	}
	if (op <= RNIC_SQE_OP_SEND_INV || op == RNIC_SQE_OP_WRITE_IMM)
		rq_post(b, rb, roff, op == RNIC_SQE_OP_WRITE_IMM ? 0 : len);
	ring(a);
	world_run(w, 1000000000ULL);

	REQUIRE(a->nscq == ns + 1);
	CHECK_EQ(a->scq[ns].status, RNIC_WC_SUCCESS);
	CHECK_EQ(a->scq[ns].opcode, op);
	CHECK_EQ(a->scq[ns].byte_len, len);
	CHECK_EQ(a->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	switch (op) {
	case RNIC_SQE_OP_READ:
		CHECK(test_mem_eq(__FILE__, __LINE__, "read", la->buf + loff,
				  rb->buf + roff, len));
		break;
	case RNIC_SQE_OP_CMP_SWAP:
	case RNIC_SQE_OP_FETCH_ADD:
		memcpy(&v, la->buf + loff, 8);
		CHECK_EQ(v, before);
		memcpy(&after, rb->buf + roff, 8);
		if (op == RNIC_SQE_OP_FETCH_ADD)
			CHECK_EQ(after, before + s->compare_add);
		else
			CHECK_EQ(after, seed & 1 ? s->swap : before);
		break;
	default:
		CHECK(test_mem_eq(__FILE__, __LINE__, "data", rb->buf + roff,
				  la->buf + loff, len));
		break;
	}
	if (op <= RNIC_SQE_OP_SEND_INV || op == RNIC_SQE_OP_WRITE_IMM) {
		REQUIRE(b->nrcq == nr + 1);
		CHECK_EQ(b->rcq[nr].status, RNIC_WC_SUCCESS);
		CHECK_EQ(b->rcq[nr].byte_len, len);
		CHECK(b->rcq[nr].flags & RC_CQE_F_SOLICITED);
		CHECK_EQ(b->rcq[nr].opcode, op == RNIC_SQE_OP_WRITE_IMM ?
			 RNIC_CQE_OP_RECV_WRITE_IMM : RNIC_CQE_OP_RECV);
		if (op == RNIC_SQE_OP_SEND_IMM || op == RNIC_SQE_OP_WRITE_IMM) {
			CHECK(b->rcq[nr].flags & RNIC_RCQE_F_IMM);
			CHECK_EQ(b->rcq[nr].imm_data, cpu_to_be32(seed));
		} else if (op == RNIC_SQE_OP_SEND_INV) {
			CHECK(b->rcq[nr].flags & RNIC_RCQE_F_INV);
			CHECK_EQ(b->rcq[nr].inv_key, inv->key);
			CHECK(!inv->valid);
		} else {
			CHECK_EQ(b->rcq[nr].flags & (RNIC_RCQE_F_IMM |
						     RNIC_RCQE_F_INV), 0);
		}
	} else {
		CHECK_EQ(b->nrcq, nr);
	}
}

TEST(rc_every_opcode_every_mtu)
{
	static const u8 ops[] = {
		RNIC_SQE_OP_SEND, RNIC_SQE_OP_SEND_IMM, RNIC_SQE_OP_SEND_INV,
		RNIC_SQE_OP_WRITE, RNIC_SQE_OP_WRITE_IMM, RNIC_SQE_OP_READ,
		RNIC_SQE_OP_CMP_SWAP, RNIC_SQE_OP_FETCH_ADD,
	};
	u8 pmtu;
	u32 seed = 1;

	for (pmtu = RNIC_PMTU_256; pmtu <= RNIC_PMTU_4096; pmtu++) {
		struct conn c = conn_default;
		u32 mtu = rnic_pmtu_bytes(pmtu);
		const u32 lens[] = { 0, 1, 3, mtu - 1, mtu, mtu + 1,
				     3 * mtu + 5, 40 * mtu, 100000 };
		struct world *w;
		unsigned int i, j;
		u64 pkts;

		c.pmtu = pmtu;
		w = world_new(&c, pmtu);
		mr_add(&w->n[0], 0, 0x10000, 1 << 18, ALL_ACCESS);
		mr_add(&w->n[1], 0, 0x7000000000ULL, 1 << 18, ALL_ACCESS);
		mr_add(&w->n[1], 3, 0x900000, 4096, ALL_ACCESS)->fastreg = true;
		for (i = 0; i < ARRAY_SIZE(ops); i++) {
			for (j = 0; j < ARRAY_SIZE(lens); j++) {
				pkts = w->wire_pkts[0];
				one_op(w, ops[i], lens[j], seed++);
				if (test_failed()) {
					fprintf(stderr, "# mtu %u op %u len %u\n",
						mtu, ops[i], lens[j]);
					world_free(w);
					return;
				}
				/* Segmentation: exactly ceil(len / mtu). */
				if (ops[i] != RNIC_SQE_OP_READ &&
				    ops[i] < RNIC_SQE_OP_CMP_SWAP)
					CHECK_EQ(w->wire_pkts[0] - pkts,
						 lens[j] ? (lens[j] + mtu - 1) / mtu : 1);
			}
		}
		CHECK_EQ(STAT(&w->n[0], retransmits), 0);
		CHECK_EQ(STAT(&w->n[1], duplicate_requests), 0);
		CHECK_EQ(STAT(&w->n[1], resp_res_exhausted), 0);
		CHECK_EQ(STAT(&w->n[1], read_requests_rcvd),
			 ARRAY_SIZE(lens));
		CHECK_EQ(STAT(&w->n[1], atomic_requests_rcvd),
			 2 * ARRAY_SIZE(lens));
		CHECK_EQ(w->n[0].port_stats[RNIC_RDMA_STAT_rc_req_packets],
			 STAT(&w->n[0], rc_req_packets));
		world_free(w);
	}
}

/* ------------------------------------------------------------------------
 * ACKs, the PSN window, refused sends, local operations
 */

TEST(rc_ack_coalescing_and_ackreq)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	int i, k;

	/* 20 single-packet messages in one burst: one ACK for all. */
	for (i = 0; i < 20; i++)
		post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0x100 * i, 100, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 20);
	CHECK_EQ(STAT(b, acks_sent), 1);
	CHECK_EQ(STAT(a, acks_rcvd), 1);
	CHECK_EQ(rec_count(rc, 1, -1), 1);
	/* A 100-packet message: AckReq on packets 32, 64, 96 and the last. */
	rc->n = 0;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 100 * 1024, 0);
	ring(a);
	world_run(w, 1000000000ULL);
	CHECK_EQ(a->nscq, 21);
	for (i = 0, k = 0; i < rc->n; i++) {
		if (rc->r[i].from)
			continue;
		CHECK_EQ(rc->r[i].ackreq,
			 (k + 1) % 32 == 0 || k == 99);
		k++;
	}
	CHECK_EQ(k, 100);
	free(rc);
	world_free(w);
}

static bool window_tap(struct world *w, int from, u8 *pkt, size_t *len)
{
	struct rc_hdr h;
	struct node *a = &w->n[0];

	if (!from && !rc_pkt_parse(pkt, *len, &h))
		CHECK(rc_psn_diff(h.psn, a->qp.req.una_psn) < RC_PSN_WINDOW);
	return true;
}

TEST(rc_psn_window)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	unsigned int sent;

	w->tap = window_tap;
	/* Nothing comes back: exactly the window goes out. */
	w->n[1].qp.state = RNIC_QPS_INIT;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 300 * 1024, 0);
	ring(a);
	sent = rc_tx(&a->qp, 1000);
	CHECK_EQ(sent, RC_PSN_WINDOW);
	CHECK_EQ(rc_tx(&a->qp, 1000), 0);
	w->n[1].qp.state = RNIC_QPS_RTS;
	w->nq = 0;
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
	CHECK_MEM_EQ(w->n[1].mr[0].buf, a->mr[0].buf, 300 * 1024);
	free(rc);
	world_free(w);
}

TEST(rc_emit_eagain_and_unsignaled)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0], *b = &w->n[1];
	struct rc_cqe cq[8];
	int i;

	a->eagain = 7;
	b->eagain = 3;
	for (i = 0; i < 6; i++) {
		post_rdma(w, i % 2 ? RNIC_SQE_OP_READ : RNIC_SQE_OP_WRITE,
			  0x10000 * i, 0x10000 * i, 9000, 0);
		if (i != 3 && i != 5)
			a->sq[i].flags &= ~RNIC_SQE_F_SIGNALED;
	}
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 6);
	for (i = 0; i < 6; i++) {
		CHECK_EQ(a->scq[i].status, RNIC_WC_SUCCESS);
		CHECK_EQ(!!(a->scq[i].flags & RC_CQE_F_SILENT),
			 i != 3 && i != 5);
	}
	CHECK_EQ(scq_visible(a, cq, 8), 2);
	CHECK_EQ(cq[0].wqe_idx, 3);
	for (i = 0; i < 6; i++)
		CHECK(test_mem_eq(__FILE__, __LINE__, "data",
				  a->mr[0].buf + 0x10000 * i,
				  b->mr[0].buf + 0x10000 * i, 9000));
	CHECK_EQ(STAT(a, retransmits), 0);
	CHECK_EQ(a->eagain, 0);
	CHECK_EQ(b->eagain, 0);
	free(rc);
	world_free(w);
}

TEST(rc_local_operations)
{
	struct recorder *rc;
	struct world *w = world_mr(&conn_default, &rc);
	struct node *a = &w->n[0];
	struct fmr *fr = mr_add(a, 5, 0x7000000, 4096, ALL_ACCESS);
	struct rc_swqe *s;
	struct rc_cqe cq[8];

	fr->fastreg = true;
	post_rdma(w, RNIC_SQE_OP_WRITE, 0, 0, 50000, 0);
	s = sq_post(a, RNIC_SQE_OP_LOCAL_INV, 0);
	s->key = fr->key;
	s = sq_post(a, RNIC_SQE_OP_REG_MR, 0);
	s->key = rnic_key_build(fr->key >> 8, 7);
	/* ... and then a SEND from the re-registered key */
	s = sq_post(a, RNIC_SQE_OP_SEND, 0);
	s->sge[s->num_sge++] = (struct rc_sge){ fr->va, 16,
						rnic_key_build(fr->key >> 8, 7) };
	s->length = 16;
	rq_post(&w->n[1], &w->n[1].mr[0], 0, 16);
	ring(a);
	/* LOCAL_INV ran when the SQ reached it, the WRITE still going */
	CHECK_EQ(rc_tx(&a->qp, 5), 5);
	CHECK(fr->valid);
	world_run(w, 1000000000ULL);
	REQUIRE(scq_visible(a, cq, 8) == 4);
	CHECK_EQ(cq[0].opcode, RNIC_SQE_OP_WRITE);
	CHECK_EQ(cq[1].opcode, RNIC_SQE_OP_LOCAL_INV);
	CHECK_EQ(cq[1].byte_len, 0);
	CHECK_EQ(cq[2].opcode, RNIC_SQE_OP_REG_MR);
	CHECK_EQ(cq[3].status, RNIC_WC_SUCCESS);
	CHECK(fr->valid);
	CHECK_EQ(fr->key & 0xff, 7);
	/* A LOCAL_INV that fails: LOC_QP_OP_ERR with its syndrome, ERR. */
	s = sq_post(a, RNIC_SQE_OP_LOCAL_INV, 0);
	s->key = a->mr[0].key;		/* not FAST_REG */
	ring(a);
	world_run(w, 1000000000ULL);
	REQUIRE(a->nscq == 5);
	CHECK_EQ(a->scq[4].status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(a->scq[4].syndrome, RNIC_ERR_KEY_STATE);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * Segmentation on the wire
 */

TEST(rc_segmentation_opcodes)
{
	static const struct {
		u8 op;
		u8 wire[3];
		u32 mask[3];
	} t[] = {
		{ RNIC_SQE_OP_SEND, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
				      RC_OP_SEND_LAST }, { 0, 0, 0 } },
		{ RNIC_SQE_OP_SEND_IMM, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
					  RC_OP_SEND_LAST_IMM },
		  { 0, 0, RC_HDR_IMMDT } },
		{ RNIC_SQE_OP_SEND_INV, { RC_OP_SEND_FIRST, RC_OP_SEND_MIDDLE,
					  RC_OP_SEND_LAST_INV },
		  { 0, 0, RC_HDR_IETH } },
		{ RNIC_SQE_OP_WRITE, { RC_OP_WRITE_FIRST, RC_OP_WRITE_MIDDLE,
				       RC_OP_WRITE_LAST },
		  { RC_HDR_RETH, 0, 0 } },
		{ RNIC_SQE_OP_WRITE_IMM, { RC_OP_WRITE_FIRST,
					   RC_OP_WRITE_MIDDLE,
					   RC_OP_WRITE_LAST_IMM },
		  { RC_HDR_RETH, 0, RC_HDR_IMMDT } },
	};
	struct conn c = conn_default;
	unsigned int i;

	c.pmtu = RNIC_PMTU_256;
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct recorder *rc;
		struct world *w = world_mr(&c, &rc);
		struct node *a = &w->n[0], *b = &w->n[1];
		int k;

		mr_add(b, 3, 0x900000, 4096, ALL_ACCESS)->fastreg = true;
		rq_post(b, &b->mr[0], 0, 1000);
		post_rdma(w, t[i].op, 0, 0, 600, RNIC_SQE_F_SOLICITED);
		a->sq[0].key = b->mr[3].key;
		ring(a);
		rc_tx(&a->qp, 10);
		REQUIRE(w->nq == 3);
		for (k = 0; k < 3; k++) {
			struct rc_hdr h;

			REQUIRE(rc_pkt_parse(w->q[k].data, w->q[k].len,
					     &h) == 0);
			CHECK_EQ(h.opcode, t[i].wire[k]);
			CHECK_EQ(h.mask, t[i].mask[k]);
			CHECK_EQ(h.payload_len, k < 2 ? 256 : 88);
			CHECK_EQ(h.pad, 0);
			CHECK_EQ(h.se, k == 2 && t[i].op != RNIC_SQE_OP_WRITE);
			CHECK_EQ(h.ackreq, k == 2);
			CHECK_EQ(h.psn, rc_psn_add(c.psn[0], k));
			CHECK_EQ(h.dest_qpn, b->qp.qpn);
			CHECK_EQ(h.pkey, 0xffff);
			if (k == 0 && h.mask & RC_HDR_RETH)
				CHECK_EQ(h.dma_len, 600);
		}
		world_run(w, 1000000000ULL);
		CHECK_EQ(a->nscq, 1);
		CHECK_EQ(a->scq[0].status, RNIC_WC_SUCCESS);
		free(rc);
		world_free(w);
	}
}
