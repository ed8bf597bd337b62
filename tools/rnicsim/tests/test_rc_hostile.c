// SPDX-License-Identifier: GPL-2.0
/*
 * RC hostile packets injected at the responder and the requester: each
 * handled as the specification says, nothing else changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * Hostile packets: each handled as the specification says, nothing else
 * changed
 */

struct hostile {
	struct world *w;
	struct recorder *rc;
	struct node *b;
	u8 *snap;
	u32 e;
};

static void hostile_init(struct hostile *hs)
{
	hs->w = world_mr(&conn_default, &hs->rc);
	hs->b = &hs->w->n[1];
	/* Record what the responder says, but keep it from node 0. */
	hs->rc->drop_all[1] = true;
	rq_post(hs->b, &hs->b->mr[0], 0x9000, 2048);
	hs->snap = malloc(1 << 20);
	memcpy(hs->snap, hs->b->mr[0].buf, 1 << 20);
	hs->e = rc_rq_psn(&hs->b->qp);
}

static void hostile_free(struct hostile *hs)
{
	free(hs->snap);
	free(hs->rc);
	world_free(hs->w);
}

static void inject(struct hostile *hs, struct rc_hdr *h, u32 plen)
{
	u8 payload[4096], buf[RC_PKT_MAX];
	size_t len;

	memset(payload, 0x5a, sizeof(payload));
	h->pkey = 0xffff;
	if (!h->dest_qpn)
		h->dest_qpn = hs->b->qp.qpn;
	len = rc_pkt_build(buf, h, payload, plen);
	rc_rx(&hs->b->qp, buf, len);
	world_run(hs->w, 1000000000ULL);
}

static void inject_raw(struct hostile *hs, const u8 *buf, size_t len)
{
	rc_rx(&hs->b->qp, buf, len);
	world_run(hs->w, 1000000000ULL);
}

/* The responder is as it was, but for @psn_adv and what it sent. */
static void unchanged(struct hostile *hs, u32 psn_adv, int rq_taken)
{
	struct node *b = hs->b;

	CHECK_MEM_EQ(b->mr[0].buf, hs->snap, 1 << 20);
	CHECK_EQ(rc_rq_psn(&b->qp), rc_psn_add(hs->e, psn_adv));
	CHECK_EQ(b->rq_ci, rq_taken);
	CHECK_EQ(b->qp.state, RNIC_QPS_RTS);
	CHECK_EQ(b->nev, 0);
}

static const struct rec *last_from(const struct recorder *rc, int from)
{
	int i;

	for (i = rc->n - 1; i >= 0; i--)
		if (rc->r[i].from == from)
			return &rc->r[i];
	return NULL;
}

TEST(rc_hostile_psn)
{
	struct hostile hs;
	struct rc_hdr h;
	const struct rec *r;

	hostile_init(&hs);
	/* Ahead: one NAK sequence error with ePSN, then silence. */
	h = (struct rc_hdr){ .opcode = RC_OP_WRITE_ONLY, .ackreq = true,
			     .psn = rc_psn_add(hs.e, 5),
			     .va = hs.b->mr[0].va, .rkey = hs.b->mr[0].key,
			     .dma_len = 16 };
	inject(&hs, &h, 16);
	h.psn = rc_psn_add(hs.e, 6);
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 1);
	r = last_from(hs.rc, 1);
	REQUIRE(r);
	CHECK_EQ(r->syn, RC_AETH_NAK_SEQ);
	CHECK_EQ(r->psn, hs.e);
	CHECK_EQ(STAT(hs.b, out_of_sequence), 2);
	CHECK_EQ(hs.b->qp.qp_stats[RNIC_QP_STAT_out_of_sequence], 2);
	unchanged(&hs, 0, 0);
	/* Far ahead (more than half the PSN space) is "before". */
	h.psn = rc_psn_add(hs.e, 0x800001);
	inject(&hs, &h, 16);
	CHECK_EQ(STAT(hs.b, duplicate_requests), 1);
	r = last_from(hs.rc, 1);
	CHECK_EQ(r->syn, RC_AETH_ACK);
	CHECK_EQ(r->psn, rc_psn_add(hs.e, RC_PSN_MASK));
	unchanged(&hs, 0, 0);
	/* Behind, without AckReq: nothing at all. */
	h.psn = rc_psn_add(hs.e, -3u);
	h.ackreq = false;
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 2);
	CHECK_EQ(STAT(hs.b, duplicate_requests), 2);
	/* A duplicate SEND takes no receive WQE. */
	h.opcode = RC_OP_SEND_ONLY;
	h.ackreq = true;
	inject(&hs, &h, 16);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 3);
	unchanged(&hs, 0, 0);
	/* ePSN at last: executed; a new gap gets a new NAK. */
	h = (struct rc_hdr){ .opcode = RC_OP_SEND_ONLY, .ackreq = true,
			     .psn = hs.e };
	inject(&hs, &h, 16);
	CHECK_EQ(hs.b->nrcq, 1);
	CHECK_EQ(rc_rq_psn(&hs.b->qp), rc_psn_add(hs.e, 1));
	h.psn = rc_psn_add(hs.e, 3);
	inject(&hs, &h, 16);
	r = last_from(hs.rc, 1);
	CHECK_EQ(r->syn, RC_AETH_NAK_SEQ);
	CHECK_EQ(r->psn, rc_psn_add(hs.e, 1));
	CHECK_EQ(STAT(hs.b, nak_seq_sent), 2);
	hostile_free(&hs);
}

TEST(rc_hostile_malformed_dropped)
{
	struct hostile hs;
	struct rc_hdr h = { 0 };
	u8 buf[64];
	size_t len;

	hostile_init(&hs);
	h.opcode = RC_OP_SEND_ONLY;
	h.psn = hs.e;
	h.pkey = 0xffff;
	h.dest_qpn = hs.b->qp.qpn;
	len = rc_pkt_build(buf, &h, "abcdefgh", 8);
	/* not a whole number of words */
	inject_raw(&hs, buf, len - 1);
	/* pad beyond the payload */
	buf[1] |= 0x30;
	inject_raw(&hs, buf, RC_BTH_LEN);
	buf[1] &= ~0x30;
	/* TVer 1 */
	buf[1] |= 1;
	inject_raw(&hs, buf, len);
	buf[1] &= ~1;
	/* reserved and UD opcodes */
	buf[0] = 0x15;
	inject_raw(&hs, buf, len);
	buf[0] = 0x64;
	inject_raw(&hs, buf, len);
	buf[0] = RC_OP_SEND_ONLY;
	/* another QP's packet */
	buf[7] ^= 1;
	inject_raw(&hs, buf, len);
	buf[7] ^= 1;
	/* a WRITE too short for its RETH */
	h.opcode = RC_OP_WRITE_ONLY;
	len = rc_pkt_build(buf, &h, NULL, 0);
	inject_raw(&hs, buf, RC_BTH_LEN + 8);
	CHECK_EQ(rec_count(hs.rc, 1, -1), 0);
	CHECK_EQ(hs.b->qp.qp_stats[RNIC_QP_STAT_rx_packets], 0);
	unchanged(&hs, 0, 0);
	/* and the QP still works */
	h.opcode = RC_OP_SEND_ONLY;
	h.ackreq = true;
	inject(&hs, &h, 8);
	CHECK_EQ(hs.b->nrcq, 1);
	CHECK_EQ(hs.b->rcq[0].byte_len, 8);
	hostile_free(&hs);
}

struct bad_req {
	const char *what;
	u8 op1;			/* a valid first packet, or 0xff */
	u32 len1;
	u8 op;
	u32 plen;
	u32 dma_len;
	u8 pad_extra;		/* pad count forced */
	u8 nak;
	int rq_taken;
	u32 adv;
};

TEST(rc_hostile_invalid_requests)
{
	const struct bad_req cases[] = {
		{ "MIDDLE without FIRST", 0xff, 0, RC_OP_SEND_MIDDLE, 1024, 0,
		  0, RC_AETH_NAK_INV, 0, 0 },
		{ "LAST without FIRST", 0xff, 0, RC_OP_WRITE_LAST, 10, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE LAST after SEND FIRST", RC_OP_SEND_FIRST, 1024,
		  RC_OP_WRITE_LAST, 10, 0, 0, RC_AETH_NAK_INV, 1, 1 },
		{ "SEND FIRST inside a SEND", RC_OP_SEND_FIRST, 1024,
		  RC_OP_SEND_FIRST, 1024, 0, 0, RC_AETH_NAK_INV, 1, 1 },
		{ "READ inside a WRITE", RC_OP_WRITE_FIRST, 4096,
		  RC_OP_READ_REQ, 0, 8, 0, RC_AETH_NAK_INV, 0, 1 },
		{ "short FIRST", 0xff, 0, RC_OP_SEND_FIRST, 1020, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "long ONLY", 0xff, 0, RC_OP_SEND_ONLY, 1028, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "empty LAST", RC_OP_SEND_FIRST, 1024, RC_OP_SEND_LAST, 0, 0,
		  0, RC_AETH_NAK_INV, 1, 1 },
		{ "MIDDLE with pad", RC_OP_SEND_FIRST, 1024,
		  RC_OP_SEND_MIDDLE, 1024, 0, 0x30, RC_AETH_NAK_INV, 1, 1 },
		{ "WRITE ONLY shorter than its RETH", 0xff, 0,
		  RC_OP_WRITE_ONLY, 16, 100, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE FIRST that is all of it", 0xff, 0, RC_OP_WRITE_FIRST,
		  1024, 1024, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE LAST beyond its RETH", RC_OP_WRITE_FIRST, 2000,
		  RC_OP_WRITE_LAST, 1000, 0, 0, RC_AETH_NAK_INV, 0, 1 },
		{ "READ with payload", 0xff, 0, RC_OP_READ_REQ, 8, 8, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "READ beyond max_msg_size", 0xff, 0, RC_OP_READ_REQ, 0,
		  0x80000001u, 0, RC_AETH_NAK_INV, 0, 0 },
		{ "atomic with payload", 0xff, 0, RC_OP_FETCH_ADD, 8, 0, 0,
		  RC_AETH_NAK_INV, 0, 0 },
		{ "WRITE with a bad R_Key", 0xff, 0, RC_OP_WRITE_ONLY, 16, 16,
		  0, RC_AETH_NAK_ACCESS, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases) && !test_failed(); i++) {
		const struct bad_req *t = &cases[i];
		struct hostile hs;
		struct rc_hdr h;
		const struct rec *r;
		u8 buf[RC_PKT_MAX];
		size_t len;

		hostile_init(&hs);
		if (t->op1 != 0xff) {
			h = (struct rc_hdr){ .opcode = t->op1, .psn = hs.e,
					     .va = hs.b->mr[0].va + 0x100,
					     .rkey = hs.b->mr[0].key,
					     .dma_len = t->len1 };
			inject(&hs, &h, 1024);
		}
		memcpy(hs.snap, hs.b->mr[0].buf, 1 << 20);
		h = (struct rc_hdr){ .opcode = t->op, .ackreq = true,
				     .psn = rc_psn_add(hs.e, t->adv),
				     .va = hs.b->mr[0].va + 0x1000,
				     .rkey = hs.b->mr[0].key,
				     .dma_len = t->dma_len,
				     .pkey = 0xffff,
				     .dest_qpn = hs.b->qp.qpn };
		if (t->nak == RC_AETH_NAK_ACCESS)
			h.rkey ^= 0x100;
		len = rc_pkt_build(buf, &h, NULL, t->plen);
		memset(buf + rc_hdr_len(t->op), 0x77, t->plen);
		buf[1] |= t->pad_extra;
		if (t->pad_extra)
			len += 4;	/* the pad counted inside, still words */
		inject_raw(&hs, buf, len);
		r = last_from(hs.rc, 1);
		REQUIRE(r);
		CHECK_EQ(r->op, RC_OP_ACK);
		CHECK_EQ(r->syn, t->nak);
		CHECK_EQ(r->psn, rc_psn_add(hs.e, t->adv));
		CHECK_EQ(hs.b->qp.state, RNIC_QPS_ERR);
		CHECK_EQ(hs.b->nev, 1);
		CHECK_EQ(hs.b->ev[0].type, t->nak == RC_AETH_NAK_INV ?
			 RNIC_EQE_QP_REQ_ERR : RNIC_EQE_QP_ACCESS_ERR);
		CHECK_MEM_EQ(hs.b->mr[0].buf, hs.snap, 1 << 20);
		CHECK_EQ(rc_rq_psn(&hs.b->qp), rc_psn_add(hs.e, t->adv));
		/* a receive WQE it had taken is flushed, the rest too */
		CHECK_EQ(hs.b->nrcq, 1);
		CHECK_EQ(hs.b->rcq[0].status, RNIC_WC_WR_FLUSH_ERR);
		CHECK_EQ(STAT(hs.b, qp_errors), 1);
		if (test_failed())
			fprintf(stderr, "# case: %s\n", t->what);
		hostile_free(&hs);
	}
}

TEST(rc_hostile_responses)
{
	struct recorder *rc;
	struct world *w;
	struct node *a;
	struct rc_hdr h;
	u8 buf[RC_PKT_MAX];
	size_t len;
	u32 p0 = conn_default.psn[0];

	/* Responses for nothing outstanding: counted, ignored. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 3000, 0);
	ring(a);
	world_run(w, 1000);		/* the request is out, nothing back */
	h = (struct rc_hdr){ .opcode = RC_OP_ACK, .psn = rc_psn_add(p0, 3),
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.psn = rc_psn_add(p0, -1u);
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.opcode = RC_OP_ATOMIC_ACK;
	h.psn = rc_psn_add(p0, 100);
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	h.opcode = RC_OP_READ_RESP_ONLY;
	h.psn = rc_psn_add(p0, 5);
	len = rc_pkt_build(buf, &h, a->mr[0].buf, 64);
	rc_rx(&a->qp, buf, len);
	CHECK_EQ(STAT(a, duplicate_responses), 4);
	CHECK_EQ(a->nscq, 0);
	CHECK_EQ(a->qp.state, RNIC_QPS_RTS);
	/* A READ response of the wrong length: BAD_RESP_ERR. */
	h.opcode = RC_OP_READ_RESP_FIRST;
	h.psn = p0;
	len = rc_pkt_build(buf, &h, a->mr[0].buf, 1000);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	CHECK_EQ(a->scq[0].syndrome, RNIC_ERR_BAD_RESP);
	CHECK_EQ(a->qp.state, RNIC_QPS_ERR);
	free(rc);
	world_free(w);

	/* An ACK where a READ response belongs: it asks again. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_rdma(w, RNIC_SQE_OP_READ, 0, 0, 3000, 0);
	ring(a);
	world_run(w, 1000);
	h = (struct rc_hdr){ .opcode = RC_OP_ACK, .psn = p0,
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	rc_rx(&a->qp, buf, len);	/* once per PSN, not twice */
	world_run(w, 1000);
	CHECK_EQ(rec_count(rc, 0, RC_OP_READ_REQ), 2);
	CHECK_EQ(a->nscq, 0);
	/* An AETH syndrome the contract does not know: BAD_RESP_ERR. */
	h.syndrome = 0x64;
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	free(rc);
	world_free(w);

	/* An atomic ACK for a SEND: BAD_RESP_ERR. */
	w = world_mr(&conn_default, &rc);
	a = &w->n[0];
	rc->drop_all[0] = true;
	post_send(w, RNIC_SQE_OP_SEND, 10, 0);
	ring(a);
	world_run(w, 1000);
	h = (struct rc_hdr){ .opcode = RC_OP_ATOMIC_ACK, .psn = p0,
			     .syndrome = RC_AETH_ACK, .pkey = 0xffff,
			     .dest_qpn = a->qp.qpn };
	len = rc_pkt_build(buf, &h, NULL, 0);
	rc_rx(&a->qp, buf, len);
	REQUIRE(a->nscq == 1);
	CHECK_EQ(a->scq[0].status, RNIC_WC_BAD_RESP_ERR);
	free(rc);
	world_free(w);
}

/* ------------------------------------------------------------------------
 * A READ stream restarted by its duplicate
 */

TEST(rc_duplicate_read_restarts_stream)
{
	struct hostile hs;
	struct rc_hdr h, p;
	struct node *b;
	u32 e, got = 0, i, mtu = 1024;
	bool first_seen = false;

	hostile_init(&hs);
	hs.rc->drop_all[1] = false;	/* onto the wire, never delivered */
	b = hs.b;
	e = hs.e;
	h = (struct rc_hdr){ .opcode = RC_OP_READ_REQ, .ackreq = true,
			     .psn = e, .va = b->mr[0].va + 0x1000,
			     .rkey = b->mr[0].key, .dma_len = 10 * mtu,
			     .pkey = 0xffff, .dest_qpn = b->qp.qpn };
	{
		u8 buf[64];
		size_t len = rc_pkt_build(buf, &h, NULL, 0);

		rc_rx(&b->qp, buf, len);
		CHECK_EQ(rc_tx(&b->qp, 3), 3);	/* responses e .. e+2 */
		/* "responses 1 and 2 were lost": asked again from e + 1 */
		h.psn = rc_psn_add(e, 1);
		h.va += mtu;
		h.dma_len -= mtu;
		len = rc_pkt_build(buf, &h, NULL, 0);
		rc_rx(&b->qp, buf, len);
	}
	CHECK_EQ(STAT(b, duplicate_requests), 1);
	CHECK_EQ(STAT(b, read_requests_rcvd), 1);
	hs.w->nq = 0;
	CHECK_EQ(rc_tx(&b->qp, 100), 9);
	REQUIRE(hs.w->nq == 9);
	for (i = 0; i < 9; i++) {
		REQUIRE(rc_pkt_parse(hs.w->q[i].data, hs.w->q[i].len, &p) == 0);
		CHECK_EQ(p.psn, rc_psn_add(e, 1 + i));
		if (!i) {
			CHECK_EQ(p.opcode, RC_OP_READ_RESP_FIRST);
			first_seen = true;
		} else {
			CHECK_EQ(p.opcode, i == 8 ? RC_OP_READ_RESP_LAST :
				 RC_OP_READ_RESP_MIDDLE);
		}
		CHECK(test_mem_eq(__FILE__, __LINE__, "resp", p.payload,
				  b->mr[0].buf + 0x1000 + (1 + i) * mtu, mtu));
		got += p.payload_len;
	}
	CHECK(first_seen);
	CHECK_EQ(got, 9 * mtu);
	CHECK_EQ(rc_tx(&b->qp, 100), 0);
	unchanged(&hs, 10, 0);
	hostile_free(&hs);
}
