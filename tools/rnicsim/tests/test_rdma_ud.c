// SPDX-License-Identifier: GPL-2.0
/*
 * ABI 2.0 device model: UD and GSI traffic between two devices on an
 * in-process wire, over RoCE v1, v2/IPv4 and v2/IPv6 templates, and what
 * the receive side refuses (hardware-transport.rst, "UD and GSI",
 * "RX validation").
 */
#include <errno.h>
#include <string.h>

#include "pkt/pkt.h"
#include "test.h"
#include "fake_rdma.h"

#define QKEY		0x11112222
#define MSG_LEN		300

struct pair {
	struct rdrv *a, *b;
	struct twire *w;
	struct rdrv_cq acq, bcq;
	struct rdrv_qp aqp, bqp;
	u64 abuf, bbuf;		/* 64 KiB each */
};

static void pair_up(struct pair *p, u8 type)
{
	memset(p, 0, sizeof(*p));
	p->a = rdrv_up(1);
	p->b = rdrv_up(2);
	p->w = twire_new(p->a, p->b);
	if (rdrv_cq_create(p->a, 6, &p->acq) || rdrv_cq_create(p->b, 6, &p->bcq) ||
	    rdrv_qp_create(p->a, type, p->a->pdn, &p->acq, &p->acq, NULL, 5, 7,
			 5, 6, &p->aqp) ||
	    rdrv_qp_create(p->b, type, p->b->pdn, &p->bcq, &p->bcq, NULL, 5, 7,
			 5, 6, &p->bqp) ||
	    rdrv_ud_up(p->a, &p->aqp, type == RNIC_QPT_GSI ? RNIC_QKEY_GSI :
				    QKEY) ||
	    rdrv_ud_up(p->b, &p->bqp, type == RNIC_QPT_GSI ? RNIC_QKEY_GSI :
				    QKEY))
		test_fail(__FILE__, __LINE__, "pair_up failed");
	p->abuf = rdrv_alloc(p->a, 65536, 4096);
	p->bbuf = rdrv_alloc(p->b, 65536, 4096);
}

static void pair_down(struct pair *p)
{
	twire_free(p->w);
	rdrv_free(p->a);
	rdrv_free(p->b);
}

static void fill(u8 *buf, size_t n, u8 seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (u8)(seed + i * 7);
}

static struct rnic_data_sge sge(u64 addr, u32 len, u32 key)
{
	struct rnic_data_sge s = {
		.addr = cpu_to_le64(addr),
		.len = cpu_to_le32(len),
		.lkey = cpu_to_le32(key),
	};

	return s;
}

/* A sends MSG_LEN bytes to B over @net (and @vlan); B checks it all. */
static void ud_round_trip(u8 net, u16 vlan, u8 opcode)
{
	struct rnic_data_sge rs;
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	u8 wqe[128], *rb;
	struct pair p;
	u32 src;

	pair_up(&p, RNIC_QPT_UD);
	if (vlan) {
		/* B's addresses on VLAN 5 */
		struct rnic_aq_modify_gid g = {};

		g.hdr.opcode = RNIC_AQ_MODIFY_GID;
		g.entry.index = cpu_to_le16(20);
		g.entry.type = net == RNIC_RX_CLASS_ROCE_V1 ? 1 : 2;
		g.entry.flags = RNIC_GID_F_VALID | RNIC_GID_F_VLAN;
		g.entry.vlan_id = cpu_to_le16(5);
		if (net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
			g.entry.gid[10] = g.entry.gid[11] = 0xff;
			memcpy(g.entry.gid + 12, p.b->ip4, 4);
		} else if (net == RNIC_RX_CLASS_ROCE_V2_IPV6) {
			memcpy(g.entry.gid, p.b->ip6, 16);
		} else {
			struct rnic_hdr_tmpl tt;

			rdrv_tmpl(p.a, p.b, net, 0, &tt);
			memcpy(g.entry.gid, tt.hdr + 14 + 24, 16);
		}
		REQUIRE(rdrv_cmd(p.b, &g, NULL) == RNIC_AQ_SUCCESS);
	}
	rdrv_tmpl(p.a, p.b, net, vlan, &t);
	rdrv_ah_set(p.a, 1, p.a->pdn, &t);
	fill(rdrv_ram(p.a, p.abuf), MSG_LEN, net);
	rb = rdrv_ram(p.b, p.bbuf);
	memset(rb, 0xee, 4096);
	rs = sge(p.bbuf, 40 + MSG_LEN + 10, p.b->dma_key);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_ud_wqe(wqe, opcode, RNIC_SQE_F_SIGNALED | RNIC_SQE_F_SOLICITED, 1,
		  p.bqp.qpn, QKEY, p.abuf, MSG_LEN, p.a->dma_key);
	rdrv_post_send(p.a, &p.aqp, wqe, true);

	/* The frame: ICRC good, our template's fields kept */
	REQUIRE(p.w->count == 1);
	{
		struct twire_frame *f = &p.w->q[p.w->head];
		struct pkt_info info;
		enum pkt_class cls = pkt_classify(f->data, f->len, 4791, &info);

		CHECK_EQ(cls, net == RNIC_RX_CLASS_ROCE_V1 ? PKT_CLASS_ROCE_V1 :
			 net == RNIC_RX_CLASS_ROCE_V2_IPV4 ?
			 PKT_CLASS_ROCE_V2_IPV4 : PKT_CLASS_ROCE_V2_IPV6);
		CHECK(pkt_icrc_ok(f->data, &info));
		CHECK_EQ(info.vlan, !!vlan);
		CHECK_MEM_EQ(f->data, t.hdr, 12);
		if (net == RNIC_RX_CLASS_ROCE_V2_IPV4)
			CHECK_EQ(f->data[info.l3_off + 1], 0x68);	/* TOS */
		/* BTH: UD SEND (Only/with Imm), SE, P_Key, QPN, PSN */
		CHECK_EQ(f->data[info.bth_off], opcode == RNIC_SQE_OP_SEND ?
			 0x64 : 0x65);
		CHECK(f->data[info.bth_off + 1] & 0x80);
		CHECK_EQ(f->data[info.bth_off + 2], 0xff);
		CHECK_EQ(f->data[info.bth_off + 7], p.bqp.qpn & 0xff);
		CHECK_EQ(f->data[info.bth_off + 11], 0x00);	/* PSN 0x100 */
		CHECK_EQ(f->data[info.bth_off + 10], 0x01);
	}
	CHECK_EQ(twire_run(p.w), 1);

	REQUIRE(rdrv_cq_poll(p.a, &p.acq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, opcode);
	CHECK_EQ(le32_to_cpu(c.qpn), p.aqp.qpn);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 0);
	CHECK_EQ(le32_to_cpu(c.byte_len), MSG_LEN);
	CHECK(!rdrv_cq_poll(p.a, &p.acq, &c));

	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
	CHECK(c.flags & RNIC_RCQE_F_GRH);
	CHECK_EQ(!!(c.flags & RNIC_RCQE_F_IMM),
		 opcode == RNIC_SQE_OP_SEND_IMM);
	if (opcode == RNIC_SQE_OP_SEND_IMM)
		CHECK_EQ(be32_to_cpu(c.imm_data), 0xa1b2c3d4);
	CHECK_EQ(!!(c.flags & RNIC_RCQE_F_VLAN), !!vlan);
	if (vlan)
		CHECK_EQ(le16_to_cpu(c.vlan_tci), vlan);
	CHECK_EQ(le32_to_cpu(c.qpn), p.bqp.qpn);
	CHECK_EQ(le32_to_cpu(c.byte_len), MSG_LEN);
	src = le32_to_cpu(c.src);
	CHECK_EQ(FIELD_GET(RNIC_RCQE_SRC_QP, src), p.aqp.qpn);
	CHECK_EQ(FIELD_GET(RNIC_RCQE_NET, src), net);
	CHECK_MEM_EQ(c.smac, p.a->mac, 6);
	CHECK_EQ(le16_to_cpu(c.pkey_index), 0);
	/* The data after the 40-byte header area, and nothing past it */
	CHECK_MEM_EQ(rb + 40, rdrv_ram(p.a, p.abuf), MSG_LEN);
	CHECK_EQ(rb[40 + MSG_LEN], 0xee);
	/* The header area as ib_init_ah_attr_from_wc() parses it */
	if (net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		static const u8 zero[20];

		CHECK_MEM_EQ(rb, zero, 20);
		CHECK_EQ(rb[20], 0x45);
		CHECK_MEM_EQ(rb + 20 + 12, p.a->ip4, 4);
		CHECK_MEM_EQ(rb + 20 + 16, p.b->ip4, 4);
	} else {
		CHECK_EQ(rb[0] >> 4, 6);
		CHECK_MEM_EQ(rb + 8, t.hdr + (vlan ? 18 : 14) + 8, 32);
	}
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_ud_send_packets), 1);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_ud_recv_packets), 1);
	CHECK_EQ(rdrv_qpctr(p.b, p.bqp.qpn, RNIC_QP_STAT_rx_packets), 1);
	/* transport packet bytes: BTH, DETH, ImmDt, payload */
	CHECK_EQ(rdrv_qpctr(p.a, p.aqp.qpn, RNIC_QP_STAT_tx_bytes),
		 12 + 8 + MSG_LEN + (opcode == RNIC_SQE_OP_SEND_IMM ? 4 : 0));
	CHECK_EQ(rdrv_pctr(p.a, net == RNIC_RX_CLASS_ROCE_V1 ?
			 RNIC_PORT_STAT_tx_roce_v1_frames :
			 RNIC_PORT_STAT_tx_roce_v2_frames), 1);
	pair_down(&p);
}

TEST(rdma_ud_roce_v1)
{
	ud_round_trip(RNIC_RX_CLASS_ROCE_V1, 0, RNIC_SQE_OP_SEND);
}

TEST(rdma_ud_roce_v2_ipv4)
{
	ud_round_trip(RNIC_RX_CLASS_ROCE_V2_IPV4, 0, RNIC_SQE_OP_SEND);
}

TEST(rdma_ud_roce_v2_ipv6)
{
	ud_round_trip(RNIC_RX_CLASS_ROCE_V2_IPV6, 0, RNIC_SQE_OP_SEND_IMM);
}

TEST(rdma_ud_vlan_each_version)
{
	ud_round_trip(RNIC_RX_CLASS_ROCE_V1, 0xa005, RNIC_SQE_OP_SEND_IMM);
	ud_round_trip(RNIC_RX_CLASS_ROCE_V2_IPV4, 0x6005, RNIC_SQE_OP_SEND);
	ud_round_trip(RNIC_RX_CLASS_ROCE_V2_IPV6, 0x0005, RNIC_SQE_OP_SEND);
}

TEST(rdma_gsi_mads_both_ways)
{
	struct rnic_data_sge rs;
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	u8 wqe[128];
	struct pair p;
	unsigned int i;

	pair_up(&p, RNIC_QPT_GSI);
	CHECK_EQ(p.aqp.qpn, 1);
	CHECK_EQ(p.bqp.qpn, 1);
	rdrv_tmpl(p.a, p.b, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(p.a, 3, p.a->pdn, &t);
	rdrv_tmpl(p.b, p.a, RNIC_RX_CLASS_ROCE_V2_IPV6, 0, &t);
	rdrv_ah_set(p.b, 4, p.b->pdn, &t);
	for (i = 0; i < 4; i++) {
		rs = sge(p.bbuf + 512 * i, 512, p.b->dma_key);
		rdrv_post_recv(p.b, &p.bqp, &rs, 1, i == 3);
		rs = sge(p.abuf + 512 * i, 512, p.a->dma_key);
		rdrv_post_recv(p.a, &p.aqp, &rs, 1, i == 3);
	}
	fill(rdrv_ram(p.a, p.abuf + 8192), 256, 1);
	fill(rdrv_ram(p.b, p.bbuf + 8192), 256, 2);
	for (i = 0; i < 4; i++) {
		/* The controlled GSI Q_Key: the WQE asks for the QP's own. */
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 3, 1,
			  RNIC_QKEY_F_CONTROLLED, p.abuf + 8192, 256,
			  p.a->dma_key);
		rdrv_post_send(p.a, &p.aqp, wqe, true);
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 4, 1,
			  RNIC_QKEY_GSI, p.bbuf + 8192, 256, p.b->dma_key);
		rdrv_post_send(p.b, &p.bqp, wqe, true);
	}
	CHECK_EQ(twire_run(p.w), 8);
	for (i = 0; i < 8; i++) {
		struct rdrv *x = i & 1 ? p.b : p.a;
		struct rdrv_cq *cq = i & 1 ? &p.bcq : &p.acq;

		REQUIRE(rdrv_cq_poll(x, cq, &c));
		CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	}
	/* Each side got four MADs, with the peer's network type */
	CHECK_MEM_EQ((u8 *)rdrv_ram(p.b, p.bbuf + 512 * 3) + 40,
		     rdrv_ram(p.a, p.abuf + 8192), 256);
	CHECK_MEM_EQ((u8 *)rdrv_ram(p.a, p.abuf + 512 * 3) + 40,
		     rdrv_ram(p.b, p.bbuf + 8192), 256);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_ud_recv_packets), 4);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_ud_recv_packets), 4);
	pair_down(&p);
}

/* Post one UD WQE on A and return A's CQE for it */
static bool send_one(struct pair *p, const void *wqe, struct rnic_rdma_cqe *c)
{
	rdrv_post_send(p->a, &p->aqp, wqe, true);
	twire_run(p->w);
	return rdrv_cq_poll(p->a, &p->acq, c);
}

TEST(rdma_ud_send_errors_fail_one_wqe)
{
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	struct rnic_sqe *s;
	u8 wqe[128];
	struct pair p;
	u32 upd, ukey;

	pair_up(&p, RNIC_QPT_UD);
	s = (void *)wqe;
	rdrv_tmpl(p.a, p.b, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(p.a, 1, p.a->pdn, &t);
	REQUIRE(rdrv_pd_alloc(p.a, false, &upd) == RNIC_AQ_SUCCESS);
	rdrv_ah_set(p.a, 2, upd, &t);		/* another PD's entry */
	rdrv_ah_set(p.a, 5, p.a->pdn, &t);
	rdrv_ah_clear(p.a, 5);			/* destroyed */
	t.hdr[0] = 0x01;			/* multicast */
	rdrv_ah_set(p.a, 6, p.a->pdn, &t);
	REQUIRE(rdrv_mr_pbl(p.a, upd, RNIC_ACCESS_LOCAL_WRITE, 0x10000, 4096,
			  p.abuf, &ukey) == RNIC_AQ_SUCCESS);

#define SEND_BAD(setup, st_, syn_)				\
	do {								\
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, p.bqp.qpn, QKEY, \
			  p.abuf, 64, p.a->dma_key);			\
		setup;							\
		REQUIRE(send_one(&p, wqe, &c));				\
		CHECK_EQ(c.status, st_);				\
		CHECK_EQ(c.syndrome, syn_);				\
		CHECK_EQ(c.opcode, s->ctrl.opcode);			\
		CHECK_EQ(le16_to_cpu(c.wqe_idx), (u16)(p.aqp.sq_pi - 1)); \
		CHECK_EQ(c.byte_len, 0);				\
	} while (0)
	/* Address handles */
	SEND_BAD(s->seg.ud.ah = 0, RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
	SEND_BAD(s->seg.ud.ah = cpu_to_le32(RDRV_AH_ENTRIES),
		 RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_AH);
	SEND_BAD(s->seg.ud.ah = cpu_to_le32(2), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_AH);
	SEND_BAD(s->seg.ud.ah = cpu_to_le32(5), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_AH);
	SEND_BAD(s->seg.ud.ah = cpu_to_le32(6), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_AH);
	SEND_BAD(s->seg.ud.ah = cpu_to_le32(7), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_AH);			/* all zero */
	/* Malformed WQEs */
	SEND_BAD(s->ctrl.opcode = RNIC_SQE_OP_WRITE, RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.opcode = 0, RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.flags = BIT(4), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.reserved0 = 1, RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.reserved1 = 1, RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.key = 1, RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.length = cpu_to_le32(65), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD(s->ctrl.num_sge = 6, RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);			/* 128 B hold 5 */
	SEND_BAD(s->seg.ud.remote_qpn = cpu_to_le32(1 << 24),
		 RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
	SEND_BAD(s->seg.ud.pkey_index = cpu_to_le16(1),
		 RNIC_WC_LOC_QP_OP_ERR, RNIC_ERR_BAD_WQE);
	SEND_BAD(s->seg.ud.reserved1[3] = 1, RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);
	SEND_BAD((s->ctrl.flags = RNIC_SQE_F_INLINE, s->ctrl.num_sge = 0,
		  s->ctrl.length = cpu_to_le32(81)), RNIC_WC_LOC_QP_OP_ERR,
		 RNIC_ERR_BAD_WQE);			/* 128 B hold 80 */
	/* Lengths and keys */
	SEND_BAD((s->ctrl.length = cpu_to_le32(2048),
		  s->sge[0].len = cpu_to_le32(2048)), RNIC_WC_LOC_LEN_ERR,
		 RNIC_ERR_MSG_TOO_LONG);
	SEND_BAD(s->sge[0].lkey = cpu_to_le32(p.a->dma_key + 0x100000),
		 RNIC_WC_LOC_PROT_ERR, RNIC_ERR_BAD_KEY);
	SEND_BAD(s->sge[0].lkey = cpu_to_le32(p.a->dma_key ^ 1),
		 RNIC_WC_LOC_PROT_ERR, RNIC_ERR_BAD_KEY);
	SEND_BAD(s->sge[0].lkey = cpu_to_le32(ukey), RNIC_WC_LOC_PROT_ERR,
		 RNIC_ERR_KEY_PD);
	SEND_BAD(s->sge[0].addr = cpu_to_le64(RDRV_RAM_SIZE - 32),
		 RNIC_WC_LOC_PROT_ERR, RNIC_ERR_KEY_BOUNDS);
	SEND_BAD(s->sge[0].addr = cpu_to_le64(~0ULL - 8),
		 RNIC_WC_LOC_PROT_ERR, RNIC_ERR_KEY_BOUNDS);
#undef SEND_BAD
	CHECK_EQ(p.w->delivered, 0);
	CHECK(rdrv_rctr(p.a, RNIC_RDMA_STAT_wqe_errors) >= 12);
	CHECK_EQ(rdrv_rctr(p.a, RNIC_RDMA_STAT_key_violations), 5);

	/* The QP is still in RTS and sends the next good WQE. */
	{
		struct rnic_data_sge rs = sge(p.bbuf, 512, p.b->dma_key);
		struct rnic_qp_query q;

		CHECK_EQ(rdrv_qp_query(p.a, p.aqp.qpn, &q), RNIC_AQ_SUCCESS);
		CHECK_EQ(q.state, RNIC_QPS_RTS);
		rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
		rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_INLINE, 1,
			  p.bqp.qpn, QKEY, 0, 80, 0);
		memset(wqe + 48, 0x5a, 80);
		rdrv_post_send(p.a, &p.aqp, wqe, true);	/* unsignaled */
		CHECK_EQ(twire_run(p.w), 1);
		CHECK(!rdrv_cq_poll(p.a, &p.acq, &c));
		REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
		CHECK_EQ(le32_to_cpu(c.byte_len), 80);
		CHECK_EQ(((u8 *)rdrv_ram(p.b, p.bbuf))[40 + 79], 0x5a);
	}
	pair_down(&p);
}

/* Frames for B that fail one RX check each; @mangle edits A's frame */
struct mangle {
	void (*fn)(u8 *f, size_t len);
};

static bool mangle_filter(struct twire *w, struct twire_frame *f)
{
	const struct mangle *m = w->filter_ctx;

	if (m && m->fn)
		m->fn(f->data, f->len);
	return true;
}

static void refill_icrc(u8 *f, size_t len)
{
	struct pkt_info info;

	pkt_classify(f, len, 4791, &info);
	pkt_icrc_fill(f, &info);
}

static void flip_payload(u8 *f, size_t len)
{
	f[len - 10] ^= 1;	/* ICRC no longer matches */
}

static void bad_tver(u8 *f, size_t len)
{
	f[14 + 28 + 1] |= 1;
	refill_icrc(f, len);
}

static void bad_pkey(u8 *f, size_t len)
{
	f[14 + 28 + 2] = 0x12;
	f[14 + 28 + 3] = 0x34;
	refill_icrc(f, len);
}

static void bad_qkey(u8 *f, size_t len)
{
	f[14 + 28 + 12 + 3] ^= 1;
	refill_icrc(f, len);
}

static void bad_ip_csum(u8 *f, size_t len)
{
	(void)len;
	f[14 + 10] ^= 1;
}

static void bad_opcode(u8 *f, size_t len)
{
	f[14 + 28] = 0x04;	/* RC SEND Only to a UD QP */
	refill_icrc(f, len);
}

static void unknown_qpn(u8 *f, size_t len)
{
	f[14 + 28 + 7] ^= 0x40;
	refill_icrc(f, len);
}

static void not_ours(u8 *f, size_t len)
{
	f[14 + 19] = 99;	/* destination 10.0.0.99 */
	pkt_ipv4_csum_fill(f, 14);
	refill_icrc(f, len);
}

static void multicast(u8 *f, size_t len)
{
	f[14 + 16] = 239;
	pkt_ipv4_csum_fill(f, 14);
	refill_icrc(f, len);
}

static void truncate_udp(u8 *f, size_t len)
{
	(void)len;
	f[14 + 20 + 5] -= 4;	/* UDP length disagrees with IP */
}

TEST(rdma_ud_rx_validation)
{
	static const struct {
		void (*fn)(u8 *f, size_t len);
		enum rnic_rdma_stat ctr;
	} cases[] = {
		{ flip_payload, RNIC_RDMA_STAT_rx_icrc_errors_v2 },
		{ bad_ip_csum, RNIC_RDMA_STAT_rx_drop_malformed_v2 },
		{ truncate_udp, RNIC_RDMA_STAT_rx_drop_malformed_v2 },
		{ multicast, RNIC_RDMA_STAT_rx_drop_multicast },
		{ not_ours, RNIC_RDMA_STAT_rx_drop_not_ours_v2 },
		{ bad_tver, RNIC_RDMA_STAT_rx_drop_bad_bth },
		{ unknown_qpn, RNIC_RDMA_STAT_rx_drop_unknown_qpn },
		{ bad_opcode, RNIC_RDMA_STAT_rx_drop_qp_type },
		{ bad_pkey, RNIC_RDMA_STAT_rx_drop_bad_pkey },
		{ bad_qkey, RNIC_RDMA_STAT_rx_drop_bad_qkey },
	};
	struct rnic_data_sge rs;
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	struct mangle m;
	u8 wqe[128];
	struct pair p;
	unsigned int i;

	pair_up(&p, RNIC_QPT_UD);
	rdrv_tmpl(p.a, p.b, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(p.a, 1, p.a->pdn, &t);
	rs = sge(p.bbuf, 512, p.b->dma_key);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	p.w->filter = mangle_filter;
	p.w->filter_ctx = &m;
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, p.bqp.qpn, QKEY, p.abuf, 100,
		  p.a->dma_key);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u64 before = rdrv_rctr(p.b, cases[i].ctr);

		m.fn = cases[i].fn;
		rdrv_post_send(p.a, &p.aqp, wqe, true);
		CHECK_EQ(twire_run(p.w), 1);
		CHECK_EQ(rdrv_rctr(p.b, cases[i].ctr), before + 1);
		/* Dropped: the receive WQE is still there. */
		CHECK(!rdrv_cq_poll(p.b, &p.bcq, &c));
	}
	/* Not in RTR/RTS/SQD: dropped too */
	m.fn = NULL;
	REQUIRE(rdrv_qp_state(p.b, &p.bqp, RNIC_QPS_SQD) == RNIC_AQ_SUCCESS);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));	/* SQD still receives */
	REQUIRE(rdrv_qp_state(p.b, &p.bqp, RNIC_QPS_ERR) == RNIC_AQ_SUCCESS);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_qp_state), 1);
	/* Nothing arrived without a WQE to take it */
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_ud_recv_packets), 1);
	pair_down(&p);
}

TEST(rdma_ud_recv_too_long_keeps_wqe)
{
	struct rnic_data_sge rs;
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	u8 wqe[128];
	struct pair p;

	pair_up(&p, RNIC_QPT_UD);
	rdrv_tmpl(p.a, p.b, RNIC_RX_CLASS_ROCE_V2_IPV6, 0, &t);
	rdrv_ah_set(p.a, 1, p.a->pdn, &t);
	/* No WQE at all: dropped and counted */
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, p.bqp.qpn, QKEY, p.abuf, 200,
		  p.a->dma_key);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_no_recv_wqe), 1);
	/* 200 + 40 do not fit 239 bytes: dropped, the WQE stays */
	rs = sge(p.bbuf, 239, p.b->dma_key);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_too_long), 1);
	CHECK(!rdrv_cq_poll(p.b, &p.bcq, &c));
	/* 199 bytes fit exactly, into the same WQE */
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, p.bqp.qpn, QKEY, p.abuf, 199,
		  p.a->dma_key);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 0);
	CHECK_EQ(le32_to_cpu(c.byte_len), 199);
	/* A receive SGE whose key fails: the WQE completes in error */
	rs = sge(p.bbuf, 512, p.b->dma_key + 0x300);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_LOC_PROT_ERR);
	CHECK_EQ(c.syndrome, RNIC_ERR_BAD_KEY);
	CHECK_EQ(c.opcode, RNIC_CQE_OP_RECV);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 1);
	/* A malformed receive WQE: LOC_QP_OP_ERR, the QP goes on */
	rs = sge(p.bbuf, 512, p.b->dma_key);
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, false);
	((u8 *)rdrv_ram(p.b, p.bqp.rq + (2 << p.bqp.rqe_log2)))[3] = 1;
	rdrv_post_recv(p.b, &p.bqp, &rs, 1, true);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	twire_run(p.w);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_LOC_QP_OP_ERR);
	CHECK_EQ(c.syndrome, RNIC_ERR_BAD_WQE);
	REQUIRE(rdrv_cq_poll(p.b, &p.bcq, &c));
	CHECK_EQ(c.status, RNIC_WC_SUCCESS);
	CHECK_EQ(le16_to_cpu(c.wqe_idx), 3);
	pair_down(&p);
}

TEST(rdma_ud_loopback)
{
	struct rdrv *x = rdrv_up(1);
	struct rnic_data_sge rs;
	struct rnic_hdr_tmpl t;
	struct rnic_rdma_cqe c;
	struct rdrv_qp q1, q2;
	struct rdrv_cq cq;
	u64 buf = rdrv_alloc(x, 8192, 4096);
	u8 wqe[64];

	REQUIRE(rdrv_cq_create(x, 5, &cq) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &q1) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_qp_create(x, RNIC_QPT_UD, x->pdn, &cq, &cq, NULL, 4, 6, 4,
			     5, &q2) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(x, &q1, QKEY) == RNIC_AQ_SUCCESS);
	REQUIRE(rdrv_ud_up(x, &q2, QKEY) == RNIC_AQ_SUCCESS);
	rdrv_tmpl(x, x, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(x, 9, x->pdn, &t);
	rs = sge(buf, 4096, x->dma_key);
	rdrv_post_recv(x, &q2, &rs, 1, true);
	fill(rdrv_ram(x, buf + 4096), 1000, 9);
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, RNIC_SQE_F_SIGNALED, 9, q2.qpn, QKEY,
		  buf + 4096, 1000, x->dma_key);
	rdrv_post_send(x, &q1, wqe, true);
	REQUIRE(rdrv_cq_poll(x, &cq, &c));
	CHECK_EQ(le32_to_cpu(c.qpn), q1.qpn);
	REQUIRE(rdrv_cq_poll(x, &cq, &c));
	CHECK_EQ(le32_to_cpu(c.qpn), q2.qpn);
	CHECK_EQ(le32_to_cpu(c.byte_len), 1000);
	CHECK_MEM_EQ((u8 *)rdrv_ram(x, buf) + 40, rdrv_ram(x, buf + 4096), 1000);
	CHECK_EQ(rdrv_tdev(x)->p->ntx, 0);	/* nothing went to the wire */
	CHECK_EQ(rdrv_rctr(x, RNIC_RDMA_STAT_loopback_packets), 1);
	rdrv_free(x);
}

/* RoCE frames wait in the receive buffer for the next tick; PFC watches it */
TEST(rdma_rx_buffer_and_pfc)
{
	struct rnic_aq_set_port sp = {};
	struct twire_frame f;
	struct rnic_hdr_tmpl t;
	struct pair p;
	unsigned int i, pause = 0;
	u8 wqe[128];
	u8 en;
	u16 quanta[8];

	pair_up(&p, RNIC_QPT_UD);
	sp.valid = cpu_to_le32(RNIC_PORT_VALID_FLAGS | RNIC_PORT_VALID_PFC);
	sp.flags = cpu_to_le32(RNIC_PORT_F_PFC);
	sp.pfc_prio = 3;
	REQUIRE(tset_port(rdrv_tdev(p.b), &sp) == RNIC_AQ_SUCCESS);
	rdrv_tmpl(p.a, p.b, RNIC_RX_CLASS_ROCE_V2_IPV4, 0, &t);
	rdrv_ah_set(p.a, 1, p.a->pdn, &t);
	rdrv_ud_wqe(wqe, RNIC_SQE_OP_SEND, 0, 1, p.bqp.qpn, QKEY, p.abuf, 64,
		  p.a->dma_key);
	rdrv_post_send(p.a, &p.aqp, wqe, true);
	REQUIRE(p.w->count == 1);
	f = p.w->q[p.w->head];
	p.w->count = 0;
	/* 300 frames before B's next tick: 256 wait, 44 are dropped ... */
	rdrv_tdev(p.b)->p->ntx = 0;
	for (i = 0; i < 300; i++)
		rdev_wire_rx(rdrv_tdev(p.b)->d, f.data, f.len);
	/* ... and XOFF went out for priority 3 as the buffer ran short */
	for (i = 0; i < rdrv_tdev(p.b)->p->ntx && i < FAKE_MAX_FRAMES; i++)
		if (pkt_pfc_parse(rdrv_tdev(p.b)->p->tx[i].data, rdrv_tdev(p.b)->p->tx[i].len,
				  &en, quanta) && en == BIT(3) && quanta[3])
			pause++;
	CHECK(pause >= 1);
	CHECK_EQ(pause, rdrv_tdev(p.b)->p->ntx);
	/* The tick runs them all; the buffer empties and XON follows */
	rdev_tick(rdrv_tdev(p.b)->d, rdrv_tdev(p.b)->p->now);
	i = rdrv_tdev(p.b)->p->ntx - 1;
	REQUIRE(i < FAKE_MAX_FRAMES);
	CHECK(pkt_pfc_parse(rdrv_tdev(p.b)->p->tx[i].data, rdrv_tdev(p.b)->p->tx[i].len, &en,
			    quanta));
	CHECK_EQ(quanta[3], 0);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_fifo_full), 44);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_no_recv_wqe), 256);

	/*
	 * rdev_rx_hold(): ticks leave the frames waiting, so the buffer
	 * stays short and XOFF is all B sends; release runs them, XON last.
	 */
	REQUIRE(rdev_rx_hold(rdrv_tdev(p.b)->d, true) == 0);
	rdrv_tdev(p.b)->p->ntx = 0;
	for (i = 0; i < 300; i++)
		rdev_wire_rx(rdrv_tdev(p.b)->d, f.data, f.len);
	for (i = 0; i < 3; i++) {
		rdrv_tdev(p.b)->p->now += 1000000;
		rdev_tick(rdrv_tdev(p.b)->d, rdrv_tdev(p.b)->p->now);
	}
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_no_recv_wqe), 256);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_fifo_full), 88);
	REQUIRE(rdrv_tdev(p.b)->p->ntx >= 1);
	for (i = 0; i < rdrv_tdev(p.b)->p->ntx && i < FAKE_MAX_FRAMES; i++) {
		CHECK(pkt_pfc_parse(rdrv_tdev(p.b)->p->tx[i].data,
				    rdrv_tdev(p.b)->p->tx[i].len, &en, quanta));
		CHECK(quanta[3] > 0);
	}
	REQUIRE(rdev_rx_hold(rdrv_tdev(p.b)->d, false) == 0);
	CHECK_EQ(rdrv_rctr(p.b, RNIC_RDMA_STAT_rx_drop_no_recv_wqe), 512);
	i = rdrv_tdev(p.b)->p->ntx - 1;
	REQUIRE(i < FAKE_MAX_FRAMES);
	CHECK(pkt_pfc_parse(rdrv_tdev(p.b)->p->tx[i].data, rdrv_tdev(p.b)->p->tx[i].len, &en,
			    quanta));
	CHECK_EQ(quanta[3], 0);
	pair_down(&p);
}

/*
 * The hold is a 2.0 knob: a device takes it before it is enabled; one
 * that serves no ABI (--signature-abi) refuses it.
 */
TEST(rdma_rx_hold_needs_abi2)
{
	struct rdrv *x = rdrv_new(1, 0);
	struct rdrv *old = rdrv_new(2, 1);

	CHECK_EQ(rdev_rx_hold(rdrv_tdev(x)->d, true), 0);
	CHECK_EQ(rdev_rx_hold(rdrv_tdev(x)->d, false), 0);
	CHECK_EQ(rdev_rx_hold(rdrv_tdev(old)->d, true), -EOPNOTSUPP);
	rdrv_free(old);
	rdrv_free(x);
}
