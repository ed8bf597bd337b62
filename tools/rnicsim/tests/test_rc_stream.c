// SPDX-License-Identifier: GPL-2.0
/*
 * Random WQE streams against a reference model, on clean and lossy
 * wires, one way and both ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_rc_harness.h"

/* ------------------------------------------------------------------------
 * Random WQE streams against a reference model, on clean and lossy wires
 */

#define L_SRC		0x00000		/* requester: payload source */
#define L_RD		0x40000		/* requester: READ destinations */
#define L_AT		0x80000		/* requester: atomic results */
#define R_W		0x00000		/* responder: WRITE targets */
#define R_S		0x40000		/* responder: READ sources, static */
#define R_AT		0x80000		/* responder: atomic targets */
#define R_RECV		0xc0000		/* responder: receive buffers */
#define AREA		0x40000
#define NSLOT		64		/* atomic target slots */
#define MEMSZ		0x100000

struct expect {
	u8 op;
	u32 len;
	u64 loff;		/* READ destination / atomic result */
	u64 roff;		/* source of a READ */
	u64 orig;		/* atomic original value */
	bool recv;		/* consumed a receive WQE */
	u64 recv_off;
	__be32 imm;
};

struct gen {
	struct node *src;
	struct node *dst;
	u8 *model_w;		/* what dst's R_W area must hold */
	u64 model_at[NSLOT];
	struct expect *exp;
	int nexp;
	int scq0;
	int rcq0;
	u64 msgs;
	u64 bytes;
	/* knobs */
	bool small;		/* messages of 0..64 bytes, many per batch */
	bool local_ops;		/* LOCAL_INV / REG_MR among them */
	bool late;		/* half the receive WQEs posted late: RNR */
	/* receive WQEs the batch needs, posted in this order */
	struct rc_rwqe *rcv;
	int nrcv;
	int rcv_posted;
	u8 fr_variant;		/* FAST_REG MR (src slot 5) */
	bool fr_valid;
};

static u32 rnd_len(struct world *w, const struct gen *g, u32 max)
{
	u32 r = rnd(w) % 100, len;

	if (g->small)
		len = rnd(w) % 65;
	else if (r < 45)
		len = rnd(w) % 300;
	else if (r < 90)
		len = rnd(w) % 8192;
	else
		len = rnd(w) % 65536;
	return len < max ? len : max;
}

static void gen_init(struct gen *g, struct node *src, struct node *dst)
{
	int i;

	memset(g, 0, sizeof(*g));
	g->src = src;
	g->dst = dst;
	g->model_w = malloc(AREA);
	memcpy(g->model_w, dst->mr[1].buf + R_W, AREA);
	for (i = 0; i < NSLOT; i++)
		memcpy(&g->model_at[i], dst->mr[1].buf + R_AT + 8 * i, 8);
	g->exp = calloc(SQN, sizeof(*g->exp));
	g->rcv = calloc(RQN, sizeof(*g->rcv));
	g->fr_valid = true;
	g->fr_variant = 1;
	mr_add(src, 5, 0x5000000, 4096, ALL_ACCESS)->fastreg = true;
}

/* Post the batch's receive WQEs, up to @upto of them. */
static void gen_post_recv(struct gen *g, int upto)
{
	struct node *d = g->dst;

	while (g->rcv_posted < g->nrcv && g->rcv_posted < upto)
		d->rq[d->rq_pi++ % RQN] = g->rcv[g->rcv_posted++];
}

static void gen_free(struct gen *g)
{
	free(g->model_w);
	free(g->exp);
	free(g->rcv);
}

/* Post up to @max random WQEs, as much as the areas hold. */
static void gen_batch(struct world *w, struct gen *g, int max)
{
	struct node *s = g->src, *d = g->dst;
	struct fmr *lm = &s->mr[0], *rm = &d->mr[1];
	u64 src_used = 0, rd_used = 0, recv_used = 0;
	int i;

	g->nexp = 0;
	g->nrcv = 0;
	g->rcv_posted = 0;
	g->scq0 = s->nscq;
	g->rcq0 = d->nrcq;
	for (i = 0; i < AREA; i++)
		lm->buf[L_SRC + i] = (u8)rnd(w);
	for (i = 0; i < max; i++) {
		struct expect *e = &g->exp[g->nexp];
		u32 kind = rnd(w) % 100, len, nsge, k;
		u8 flags = rnd(w) % 8 == 0 ? RNIC_SQE_F_FENCE : 0;
		struct rc_swqe *q;
		u64 off;

		memset(e, 0, sizeof(*e));
		if (g->local_ops && rnd(w) % 20 == 0) {
			struct fmr *fr = &s->mr[5];

			/* invalidate, or register again with a new variant */
			e->op = g->fr_valid ? RNIC_SQE_OP_LOCAL_INV :
					      RNIC_SQE_OP_REG_MR;
			if (!g->fr_valid)
				g->fr_variant++;
			q = sq_post(s, e->op, flags);
			q->key = rnic_key_build(fr->key >> 8, g->fr_variant);
			g->fr_valid = !g->fr_valid;
			g->nexp++;
			continue;
		}
		if (kind < 30)
			e->op = RNIC_SQE_OP_SEND + rnd(w) % 2;
		else if (kind < 60)
			e->op = RNIC_SQE_OP_WRITE + rnd(w) % 2;
		else if (kind < 85)
			e->op = RNIC_SQE_OP_READ;
		else
			e->op = RNIC_SQE_OP_CMP_SWAP + rnd(w) % 2;
		if (e->op >= RNIC_SQE_OP_CMP_SWAP) {
			len = 8;
		} else if (e->op == RNIC_SQE_OP_READ) {
			len = rnd_len(w, g, AREA - rd_used);
		} else {
			len = rnd_len(w, g, AREA - src_used);
			if (e->op <= RNIC_SQE_OP_SEND_IMM &&
			    len > AREA - recv_used)
				len = AREA - recv_used;
		}
		e->len = len;
		q = sq_post(s, e->op, flags);
		e->imm = q->imm_data = cpu_to_be32(rnd(w));
		switch (e->op) {
		case RNIC_SQE_OP_READ:
			e->loff = L_RD + rd_used;
			e->roff = R_S + rnd(w) % (AREA - len + 1);
			q->remote_addr = rm->va + e->roff;
			q->rkey = rm->key;
			off = e->loff;
			rd_used += len;
			break;
		case RNIC_SQE_OP_CMP_SWAP:
		case RNIC_SQE_OP_FETCH_ADD:
			k = rnd(w) % NSLOT;
			e->loff = L_AT + 8 * g->nexp;
			q->remote_addr = rm->va + R_AT + 8 * k;
			q->rkey = rm->key;
			e->orig = g->model_at[k];
			if (e->op == RNIC_SQE_OP_FETCH_ADD) {
				q->compare_add = ((u64)rnd(w) << 32) | rnd(w);
				g->model_at[k] += q->compare_add;
			} else {
				q->compare_add = rnd(w) % 2 ? e->orig : rnd(w);
				q->swap = ((u64)rnd(w) << 32) | rnd(w);
				if (q->compare_add == e->orig)
					g->model_at[k] = q->swap;
			}
			off = e->loff;
			break;
		default:
			off = L_SRC + src_used;
			src_used += len;
			if (e->op >= RNIC_SQE_OP_WRITE) {
				u64 t = R_W + rnd(w) % (AREA - len + 1);

				q->remote_addr = rm->va + t;
				q->rkey = rm->key;
				memcpy(g->model_w + t, lm->buf + off, len);
			}
			break;
		}
		/* Scatter the local side over up to 4 SGEs. */
		nsge = len >= 4 && e->op < RNIC_SQE_OP_CMP_SWAP ?
		       1 + rnd(w) % 4 : 1;
		{
			u32 left = len, at = 0;

			for (k = 0; k < nsge; k++) {
				u32 part = k + 1 == nsge ? left :
					   rnd(w) % (left + 1);

				sge_add(q, lm, off + at, part);
				at += part;
				left -= part;
			}
		}
		if (rnd(w) % 4 == 0)
			q->flags &= ~RNIC_SQE_F_SIGNALED;
		if (e->op <= RNIC_SQE_OP_SEND_IMM ||
		    e->op == RNIC_SQE_OP_WRITE_IMM) {
			struct rc_rwqe *rw = &g->rcv[g->nrcv++];

			e->recv = true;
			e->recv_off = R_RECV + recv_used;
			/* A receive WQE a bit larger than the message. */
			memset(rw, 0, sizeof(*rw));
			rw->num_sge = 1;
			rw->sge[0] = (struct rc_sge){
				rm->va + e->recv_off,
				e->op == RNIC_SQE_OP_WRITE_IMM ? 0 : len + 16,
				rm->key };
			if (e->op != RNIC_SQE_OP_WRITE_IMM)
				recv_used += len;
		}
		g->msgs++;
		g->bytes += len;
		g->nexp++;
		if (src_used >= AREA || rd_used >= AREA ||
		    recv_used >= AREA - 16 || g->nrcv >= RQN / 2 - 1)
			break;
	}
	gen_post_recv(g, g->late ? g->nrcv / 2 : g->nrcv);
	/* The last one signaled, so that every WQE is seen retired. */
	s->sq[(u16)(s->sq_pi - 1) % SQN].flags |= RNIC_SQE_F_SIGNALED;
	ring(s);
}

static void gen_check(struct world *w, struct gen *g)
{
	struct node *s = g->src, *d = g->dst;
	struct fmr *lm = &s->mr[0], *rm = &d->mr[1];
	int i, r = g->rcq0, k;

	(void)w;
	REQUIRE(s->nscq - g->scq0 == g->nexp);
	for (i = 0; i < g->nexp; i++) {
		const struct rc_cqe *c = &s->scq[g->scq0 + i];
		const struct expect *e = &g->exp[i];

		CHECK_EQ(c->status, RNIC_WC_SUCCESS);
		CHECK_EQ(c->opcode, e->op);
		if (c->status) {
			fprintf(stderr, "# wqe %d of %d: op %u len %u status %u "
				"syndrome %u\n", i, g->nexp, e->op, e->len,
				c->status, c->syndrome);
			return;
		}
		if (e->op == RNIC_SQE_OP_READ) {
			CHECK(test_mem_eq(__FILE__, __LINE__, "read",
					  lm->buf + e->loff, rm->buf + e->roff,
					  e->len));
		} else if (e->op == RNIC_SQE_OP_CMP_SWAP ||
			   e->op == RNIC_SQE_OP_FETCH_ADD) {
			u64 v;

			memcpy(&v, lm->buf + e->loff, 8);
			CHECK_EQ(v, e->orig);
		}
		if (!e->recv)
			continue;
		REQUIRE(r < d->nrcq);
		CHECK_EQ(d->rcq[r].status, RNIC_WC_SUCCESS);
		CHECK_EQ(d->rcq[r].byte_len, e->len);
		CHECK_EQ(d->rcq[r].wqe_idx, (u16)(d->rq_ci - (d->nrcq - g->rcq0) +
						 (r - g->rcq0)));
		if (e->op == RNIC_SQE_OP_SEND_IMM ||
		    e->op == RNIC_SQE_OP_WRITE_IMM)
			CHECK_EQ(d->rcq[r].imm_data, e->imm);
		if (e->op != RNIC_SQE_OP_WRITE_IMM) {
			const struct rc_swqe *q = &s->sq[(u16)(s->sq_pi -
						 g->nexp + i) % SQN];
			u32 at = 0;

			/* Compare against the gathered source SGEs. */
			for (k = 0; k < q->num_sge; k++) {
				CHECK(test_mem_eq(__FILE__, __LINE__, "recv",
						  rm->buf + e->recv_off + at,
						  lm->buf + (q->sge[k].addr -
							     lm->va),
						  q->sge[k].len));
				at += q->sge[k].len;
			}
		}
		r++;
	}
	CHECK_EQ(r, d->nrcq);
	CHECK(test_mem_eq(__FILE__, __LINE__, "write area",
			  rm->buf + R_W, g->model_w, AREA));
	for (k = 0; k < NSLOT; k++) {
		u64 v;

		memcpy(&v, rm->buf + R_AT + 8 * k, 8);
		CHECK_EQ(v, g->model_at[k]);
	}
}

struct stream_cfg {
	u8 pmtu;
	unsigned int drop_pm;
	unsigned int dup_pm;
	unsigned int reorder_pm;
	u64 seed;
	int batches;
	bool both;		/* both directions at once */
	bool small;
	bool local_ops;
	bool late;
	int per_batch;		/* 0: 200 */
};

static void run_stream(const struct stream_cfg *sc)
{
	struct conn c = conn_default;
	struct world *w;
	struct gen g[2];
	int b, i, nd = sc->both ? 2 : 1;

	c.pmtu = sc->pmtu;
	w = world_new(&c, sc->seed);
	/* Slot 0: what a node sends from and reads into; 1: the peer's. */
	for (i = 0; i < 2; i++) {
		mr_add(&w->n[i], 0, 0x1000000 * (i + 1), MEMSZ, ALL_ACCESS);
		mr_add(&w->n[i], 1, 0x3000000 * (i + 1), MEMSZ, ALL_ACCESS);
	}
	for (i = 0; i < nd; i++) {
		gen_init(&g[i], &w->n[i], &w->n[!i]);
		g[i].small = sc->small;
		g[i].local_ops = sc->local_ops;
		g[i].late = sc->late;
	}
	w->drop_pm = sc->drop_pm;
	w->dup_pm = sc->dup_pm;
	w->reorder_pm = sc->reorder_pm;
	for (b = 0; b < sc->batches && !test_failed(); b++) {
		for (i = 0; i < nd; i++)
			gen_batch(w, &g[i], sc->per_batch ? sc->per_batch : 200);
		if (sc->late) {
			/*
			 * Run until the posted receives are used up (and
			 * RNR NAKs start), then post the other half.
			 */
			int step;

			for (step = 0; step < 20000; step++) {
				bool used = true;

				world_run(w, 10000);
				for (i = 0; i < nd; i++)
					used &= g[i].dst->rq_ci ==
						g[i].dst->rq_pi;
				if (used)
					break;
			}
			world_run(w, 200000);
			for (i = 0; i < nd; i++)
				gen_post_recv(&g[i], RQN);
		}
		world_run(w, 100ULL * 1000000000ULL);
		for (i = 0; i < nd && !test_failed(); i++)
			gen_check(w, &g[i]);
		for (i = 0; i < 2; i++) {
			CHECK_EQ(w->n[i].qp.state, RNIC_QPS_RTS);
			CHECK_EQ(w->nq, 0);
		}
		if (test_failed())
			fprintf(stderr, "# batch %d seed %llu\n", b,
				(unsigned long long)sc->seed);
	}
	printf("# mtu %u drop %u dup %u reorder %u (1/10000): %llu msgs, "
	       "%llu bytes; pkts %llu+%llu, retransmits %llu+%llu, "
	       "timeouts %llu+%llu, dup req %llu+%llu, rnr %llu+%llu\n",
	       rnic_pmtu_bytes(sc->pmtu), sc->drop_pm, sc->dup_pm,
	       sc->reorder_pm, (unsigned long long)(g[0].msgs + (nd > 1 ? g[1].msgs : 0)),
	       (unsigned long long)(g[0].bytes + (nd > 1 ? g[1].bytes : 0)),
	       (unsigned long long)STAT(&w->n[0], rc_req_packets),
	       (unsigned long long)STAT(&w->n[1], rc_req_packets),
	       (unsigned long long)STAT(&w->n[0], retransmits),
	       (unsigned long long)STAT(&w->n[1], retransmits),
	       (unsigned long long)STAT(&w->n[0], local_ack_timeouts),
	       (unsigned long long)STAT(&w->n[1], local_ack_timeouts),
	       (unsigned long long)STAT(&w->n[0], duplicate_requests),
	       (unsigned long long)STAT(&w->n[1], duplicate_requests),
	       (unsigned long long)STAT(&w->n[0], rnr_naks_sent),
	       (unsigned long long)STAT(&w->n[1], rnr_naks_sent));
	for (i = 0; i < nd; i++)
		gen_free(&g[i]);
	world_free(w);
}

TEST(rc_random_stream_clean)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .seed = 11,
				 .batches = 15 };

	run_stream(&sc);
	CHECK(!test_failed());
}

TEST(rc_random_stream_both_ways_mtu256)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_256, .seed = 12,
				 .batches = 6, .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .drop_pm = 100,
				 .seed = 13, .batches = 8 };

	run_stream(&sc);
}

TEST(rc_random_stream_drop_dup_reorder_both_ways)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_4096, .drop_pm = 200,
				 .dup_pm = 200, .reorder_pm = 300, .seed = 14,
				 .batches = 6, .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_mtu512_heavy_loss)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_512, .drop_pm = 500,
				 .dup_pm = 100, .reorder_pm = 500, .seed = 15,
				 .batches = 4, .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_small_messages_local_ops)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_256, .seed = 16,
				 .batches = 8, .small = true,
				 .local_ops = true, .per_batch = 1000,
				 .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_late_receives_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_2048, .drop_pm = 100,
				 .dup_pm = 50, .reorder_pm = 100, .seed = 17,
				 .batches = 6, .late = true, .local_ops = true,
				 .both = true };

	run_stream(&sc);
}

TEST(rc_random_stream_small_lossy)
{
	struct stream_cfg sc = { .pmtu = RNIC_PMTU_1024, .drop_pm = 150,
				 .dup_pm = 100, .reorder_pm = 200, .seed = 18,
				 .batches = 5, .small = true, .late = true,
				 .per_batch = 1000 };

	run_stream(&sc);
}
