// SPDX-License-Identifier: GPL-2.0
/*
 * Known-answer frames for the ABI 2.0 transport: what the kernel's
 * rdma_rxe sent in tests/vectors/rxe_v2_ops.pcap (written by
 * scripts/lab/capture-rxe-ops.sh), the model must send too, byte for
 * byte, ICRC included.
 *
 * Requester: for each message rxe sent as a requester, a fresh model QP
 * gets what rxe's QP had: a path template made of the captured frame's
 * headers up to the BTH (lengths and checksums zeroed, as a driver writes
 * them), the destination QPN, the PSN of the first packet, path MTU 1024;
 * the work request carries the message's payload, remote address, rkey,
 * immediate data or atomic operands. The template fixes everything rxe
 * chose per flow (addresses, UDP source port, TOS, TTL, IPv4
 * identification, flow label), so what is left to compare is what the
 * device builds: lengths, the IPv4 checksum, BTH (opcode, SE, pad, P_Key,
 * AckReq, PSN), RETH, ImmDt, AtomicETH, segmentation and the ICRC.
 *
 * Responder: each RC connection's requests, in capture order, are handed
 * to one model QP that plays rxe's responder (its QPN and the request's
 * rkey written into the frames, the ICRC recomputed; READ and atomic
 * targets hold what rxe's memory held), and the model's ACKs, READ
 * responses and atomic ACKs must equal rxe's: MSN, AETH syndrome, PSNs,
 * data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt/pkt.h"
#include "transport/rc.h"
#include "pcapread.h"
#include "test.h"
#include "fake_rdma.h"

#define VEC_FILE	"rxe_v2_ops.pcap"
#define VEC_MAX_FRAMES	1024
#define VEC_MAX_PKTS	8	/* a 3000-byte message at MTU 1024 is 3 */
#define VEC_MAX_FLOWS	32
#define VEC_BUF		(64u << 10)
#define VEC_RECV	4096	/* a receive buffer; 16 of them in VEC_BUF */
#define VEC_UD_SEND_ONLY	0x64
#define VEC_UD_SEND_IMM		0x65

/* A captured RC frame (the CM's UD MADs are not kept) */
struct vec_frame {
	u8 data[2048];
	size_t len;
	struct pkt_info info;
	struct rc_hdr h;	/* payload points into data */
	bool ud;		/* a UD SEND on QP1 (h: BTH, payload, imm) */
	u32 qkey, sqpn;		/* UD: the DETH */
	u8 net;			/* RNIC_RX_CLASS_ROCE_V2_IPV4 / _IPV6 */
	u8 src[16], dst[16];	/* IP addresses (IPv4: the first 4 bytes) */
	u16 sport;		/* UDP source port */
};

struct vec_file {
	struct vec_frame *f;	/* VEC_MAX_FRAMES */
	unsigned int n;
};

/* One requester message of one flow, as rxe sent it */
struct vec_msg {
	const struct vec_frame *f[VEC_MAX_PKTS];
	unsigned int n;
	bool open;		/* FIRST seen, LAST not yet */
	u32 dqpn;
	u16 sport;		/* with dqpn, the flow */
};

static bool vec_is_request(u8 op)
{
	/* UD opcodes are 0x64 on: none of these */
	return op <= RC_OP_READ_REQ || op == RC_OP_CMP_SWAP ||
	       op == RC_OP_FETCH_ADD || op == RC_OP_SEND_LAST_INV ||
	       op == RC_OP_SEND_ONLY_INV;
}

static bool vec_starts(u8 op)
{
	return op != RC_OP_SEND_MIDDLE && op != RC_OP_SEND_LAST &&
	       op != RC_OP_SEND_LAST_IMM && op != RC_OP_WRITE_MIDDLE &&
	       op != RC_OP_WRITE_LAST && op != RC_OP_WRITE_LAST_IMM &&
	       op != RC_OP_SEND_LAST_INV;
}

static bool vec_ends(u8 op)
{
	return op != RC_OP_SEND_FIRST && op != RC_OP_SEND_MIDDLE &&
	       op != RC_OP_WRITE_FIRST && op != RC_OP_WRITE_MIDDLE;
}

static bool vec_is_send(u8 op)
{
	return op <= RC_OP_SEND_ONLY_IMM || op == RC_OP_SEND_LAST_INV ||
	       op == RC_OP_SEND_ONLY_INV;
}

/*
 * A UD SEND (the CM's MADs on QP1): BTH, DETH, ImmDt with SEND_ONLY_IMM,
 * payload, pad. false: not one.
 */
static bool vec_ud_parse(struct vec_frame *fr)
{
	const u8 *b = fr->data + fr->info.bth_off;
	size_t n = fr->info.icrc_off - fr->info.bth_off, hl = 20;

	memset(&fr->h, 0, sizeof(fr->h));
	if (n < hl || (b[0] != VEC_UD_SEND_ONLY && b[0] != VEC_UD_SEND_IMM))
		return false;
	fr->ud = true;
	fr->h.opcode = b[0];
	fr->h.se = b[1] & 0x80;
	fr->h.pad = (b[1] >> 4) & 3;
	fr->h.pkey = (u16)(b[2] << 8 | b[3]);
	fr->h.dest_qpn = (u32)(b[5] << 16 | b[6] << 8 | b[7]);
	fr->h.psn = (u32)(b[9] << 16 | b[10] << 8 | b[11]);
	fr->qkey = (u32)b[12] << 24 | (u32)(b[13] << 16 | b[14] << 8 | b[15]);
	fr->sqpn = (u32)(b[17] << 16 | b[18] << 8 | b[19]);
	if (b[0] == VEC_UD_SEND_IMM) {
		hl += 4;
		if (n < hl)
			return false;
		memcpy(&fr->h.imm, b + 20, 4);
	}
	if (n < hl + fr->h.pad)
		return false;
	fr->h.payload = b + hl;
	fr->h.payload_len = (u32)(n - hl - fr->h.pad);
	return true;
}

/* Every RC frame and UD SEND of the vectors file, in capture order */
static bool vec_load(struct vec_file *v)
{
	struct pcapread_frame pf;
	struct vec_frame *fr;
	struct pcapread *r;
	char path[512], err[256];
	enum pkt_class cls;
	size_t ip, udp;
	int rc;

	snprintf(path, sizeof(path), "%s/tests/vectors/%s", test_srcdir(),
		 VEC_FILE);
	v->n = 0;
	v->f = calloc(VEC_MAX_FRAMES, sizeof(*v->f));
	if (!v->f)
		abort();
	r = pcapread_open(path, err, sizeof(err));
	if (!r) {
		test_fail(__FILE__, __LINE__, "%s", err);
		return false;
	}
	while ((rc = pcapread_next(r, &pf, err, sizeof(err))) == 1) {
		if (v->n == VEC_MAX_FRAMES) {
			test_fail(__FILE__, __LINE__, "over %u frames",
				  VEC_MAX_FRAMES);
			break;
		}
		fr = &v->f[v->n];
		if (pf.len != pf.orig_len || pf.len > sizeof(fr->data))
			continue;
		memcpy(fr->data, pf.data, pf.len);
		fr->len = pf.len;
		cls = pkt_classify(fr->data, fr->len, PKT_ROCE_V2_PORT,
				   &fr->info);
		if (cls != PKT_CLASS_ROCE_V2_IPV4 &&
		    cls != PKT_CLASS_ROCE_V2_IPV6)
			continue;
		if (rc_pkt_parse(fr->data + fr->info.bth_off,
				 fr->info.icrc_off - fr->info.bth_off, &fr->h) &&
		    !vec_ud_parse(fr))
			continue;
		ip = fr->info.l3_off;
		memset(fr->src, 0, sizeof(fr->src));
		memset(fr->dst, 0, sizeof(fr->dst));
		if (cls == PKT_CLASS_ROCE_V2_IPV4) {
			fr->net = RNIC_RX_CLASS_ROCE_V2_IPV4;
			memcpy(fr->src, fr->data + ip + 12, 4);
			memcpy(fr->dst, fr->data + ip + 16, 4);
			udp = ip + 20;
		} else {
			fr->net = RNIC_RX_CLASS_ROCE_V2_IPV6;
			memcpy(fr->src, fr->data + ip + 8, 16);
			memcpy(fr->dst, fr->data + ip + 24, 16);
			udp = ip + 40;
		}
		fr->sport = (u16)(fr->data[udp] << 8 | fr->data[udp + 1]);
		v->n++;
	}
	pcapread_close(r);
	if (rc < 0)
		test_fail(__FILE__, __LINE__, "%s", err);
	return rc == 0;
}

/* An IPv4 frame's identification */
static u16 vec_ip_id(const struct vec_frame *fr)
{
	const u8 *id = fr->data + fr->info.l3_off + 4;

	return (u16)(id[0] << 8 | id[1]);
}

/* The path template a driver would write for the frame's headers */
static void vec_tmpl(const struct vec_frame *fr, struct rnic_hdr_tmpl *t)
{
	size_t l3 = fr->info.l3_off, udp;

	memset(t, 0, sizeof(*t));
	t->flags = cpu_to_le32(fr->net |
			       (fr->info.vlan ? RNIC_TMPL_F_VLAN : 0));
	t->hdr_len = (u8)fr->info.bth_off;
	memcpy(t->hdr, fr->data, fr->info.bth_off);
	if (fr->net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		memset(t->hdr + l3 + 2, 0, 2);		/* total length */
		memset(t->hdr + l3 + 10, 0, 2);		/* header checksum */
		udp = l3 + 20;
	} else {
		memset(t->hdr + l3 + 4, 0, 2);		/* payload length */
		udp = l3 + 40;
	}
	memset(t->hdr + udp + 4, 0, 4);			/* UDP length, checksum */
}

/* RESET -> RTS: the path of @hdr's headers, path MTU 1024 (rxe's here) */
static int vec_connect(struct rdrv *x, struct rdrv_qp *qp,
		       const struct vec_frame *hdr, u32 dqpn, u32 rq_psn,
		       u32 sq_psn)
{
	struct rnic_hdr_tmpl t;

	vec_tmpl(hdr, &t);
	x->path_mtu = RNIC_PMTU_1024;
	return rdrv_rc_connect_path(x, qp, &t, dqpn, rq_psn, sq_psn,
				  RNIC_QPS_RTS);
}

/* The work request that makes rxe's message; its payload goes to @buf */
static void vec_wqe(const struct vec_msg *m, u8 *wqe, u8 *buf, u64 dma,
		    u32 lkey)
{
	const struct rc_hdr *first = &m->f[0]->h, *last = &m->f[m->n - 1]->h;
	struct rnic_sqe *s = (struct rnic_sqe *)wqe;
	u32 len = 0, i;
	u8 op;

	for (i = 0; i < m->n; i++) {
		memcpy(buf + len, m->f[i]->h.payload, m->f[i]->h.payload_len);
		len += m->f[i]->h.payload_len;
	}
	switch (first->opcode) {
	case RC_OP_SEND_FIRST:
	case RC_OP_SEND_ONLY:
		op = last->mask & RC_HDR_IMMDT ? RNIC_SQE_OP_SEND_IMM :
						 RNIC_SQE_OP_SEND;
		break;
	case RC_OP_SEND_ONLY_IMM:
		op = RNIC_SQE_OP_SEND_IMM;
		break;
	case RC_OP_WRITE_FIRST:
	case RC_OP_WRITE_ONLY:
		op = last->mask & RC_HDR_IMMDT ? RNIC_SQE_OP_WRITE_IMM :
						 RNIC_SQE_OP_WRITE;
		break;
	case RC_OP_WRITE_ONLY_IMM:
		op = RNIC_SQE_OP_WRITE_IMM;
		break;
	case RC_OP_READ_REQ:
		op = RNIC_SQE_OP_READ;
		len = first->dma_len;
		break;
	case RC_OP_CMP_SWAP:
		op = RNIC_SQE_OP_CMP_SWAP;
		len = 8;
		break;
	default:
		op = RNIC_SQE_OP_FETCH_ADD;
		len = 8;
		break;
	}
	rdrv_rc_wqe(wqe, op, RNIC_SQE_F_SIGNALED |
		  (last->se ? RNIC_SQE_F_SOLICITED : 0), len, dma, lkey,
		  first->va, first->rkey);
	if (last->mask & RC_HDR_IMMDT)
		s->ctrl.imm_data = last->imm;
	if (op == RNIC_SQE_OP_CMP_SWAP || op == RNIC_SQE_OP_FETCH_ADD) {
		s->seg.atomic.remote_addr = cpu_to_le64(first->va);
		s->seg.atomic.rkey = cpu_to_le32(first->rkey);
		if (op == RNIC_SQE_OP_CMP_SWAP) {
			s->seg.atomic.compare_add = cpu_to_le64(first->compare);
			s->seg.atomic.swap = cpu_to_le64(first->swap_add);
		} else {
			s->seg.atomic.compare_add = cpu_to_le64(first->swap_add);
		}
	}
}

/* Where in the frame byte @off is, for a failure message */
static const char *vec_where(const struct vec_frame *fr, size_t off)
{
	if (off < fr->info.l3_off)
		return "Ethernet";
	if (off < fr->info.bth_off)
		return "IP/UDP";
	if (off < fr->info.bth_off + 12)
		return "BTH";
	if (off >= fr->info.icrc_off)
		return "ICRC";
	if (off < fr->info.bth_off + rc_hdr_len(fr->h.opcode))
		return "extension header";
	return "payload";
}

/*
 * One frame the model sent against the one rxe sent, with two of rxe's
 * choices replaced by the model's, checksum and ICRC recomputed:
 *  - the IPv4 identification: rxe numbers its packets, the model sends
 *    the template's @ip_id, a constant (allowed with DF set: RFC 6864,
 *    hardware-rdma.rst "Header templates");
 *  - AckReq on QP1: rxe's requester leaves it out only for IB_QPT_UD and
 *    IB_QPT_UC QPs (rxe_req.c, init_req_packet()), so its GSI MADs carry
 *    it; AckReq belongs to reliable services and the model, like the
 *    spec, sends 0 on UD and GSI QPs.
 */
static void vec_same(const u8 *out, size_t len, const struct vec_frame *rxe,
		     u16 ip_id)
{
	static struct vec_frame fixed;
	const struct vec_frame *want = &fixed;
	size_t off;

	fixed = *rxe;
	if (rxe->net == RNIC_RX_CLASS_ROCE_V2_IPV4) {
		fixed.data[fixed.info.l3_off + 4] = (u8)(ip_id >> 8);
		fixed.data[fixed.info.l3_off + 5] = (u8)ip_id;
		pkt_ipv4_csum_fill(fixed.data, fixed.info.l3_off);
	}
	if (rxe->ud)
		fixed.data[fixed.info.bth_off + 8] &= 0x7f;
	pkt_icrc_fill(fixed.data, &fixed.info);

	if (len != want->len) {
		test_fail(__FILE__, __LINE__,
			  "opcode %#x psn %#x: %zu bytes, rxe sent %zu",
			  want->h.opcode, want->h.psn, len, want->len);
		return;
	}
	for (off = 0; off < len; off++)
		if (out[off] != want->data[off])
			break;
	if (off < len)
		test_fail(__FILE__, __LINE__,
			  "opcode %#x psn %#x: byte %zu (%s) is %#04x, rxe sent %#04x",
			  want->h.opcode, want->h.psn, off,
			  vec_where(want, off), out[off], want->data[off]);
}

/* Take what the model sent off the wire, running its ticks */
static unsigned int vec_drain(struct rdrv *x, struct twire *w,
			      struct twire_frame *out, unsigned int max)
{
	struct tdev *t = rdrv_tdev(x);
	unsigned int n = 0, rounds;

	/* well under any timeout: no retransmission joins them */
	for (rounds = 0; rounds < 4; rounds++) {
		while (w->count) {
			if (n < max)
				out[n] = w->q[w->head];
			n++;
			w->head = (w->head + 1) % RDRV_WIRE_MAX;
			w->count--;
		}
		t->p->now += 1000;
		rdev_tick(t->d, t->p->now);
	}
	return n;
}

static void vec_qp_gone(struct rdrv *x, struct rdrv_qp *qp, struct rdrv_cq *cq)
{
	struct rnic_rdma_cqe c;

	rdrv_qp_state(x, qp, RNIC_QPS_ERR);
	rdrv_qp_destroy(x, qp);
	while (rdrv_cq_poll(x, cq, &c))
		;
}

/* Send rxe's message from the model; compare what it puts on the wire */
static void vec_check_msg(struct rdrv *x, struct twire *w,
			  const struct vec_msg *m, u64 buf, struct rdrv_cq *cq,
			  struct twire_frame *out)
{
	const struct vec_frame *f0 = m->f[0];
	u8 wqe[128] = {};
	struct rdrv_qp qp;
	unsigned int i, got;

	if (rdrv_qp_create(x, RNIC_QPT_RC, x->pdn, cq, cq, NULL, 4, 7, 4, 6,
			 &qp) ||
	    vec_connect(x, &qp, f0, m->dqpn, 0x100, f0->h.psn)) {
		test_fail(__FILE__, __LINE__, "QP for dqpn %#x psn %#x",
			  m->dqpn, f0->h.psn);
		return;
	}
	vec_wqe(m, wqe, rdrv_ram(x, buf), buf, x->dma_key);
	rdrv_post_send(x, &qp, wqe, true);
	got = vec_drain(x, w, out, VEC_MAX_PKTS);
	for (i = 0; i < got && i < m->n; i++)
		vec_same(out[i].data, out[i].len, m->f[i], vec_ip_id(f0));
	if (got != m->n)
		test_fail(__FILE__, __LINE__,
			  "opcode %#x psn %#x: the model sent %u frames, rxe %u",
			  f0->h.opcode, f0->h.psn, got, m->n);
	/* the peer never answers: the QP goes */
	vec_qp_gone(x, &qp, cq);
}

struct vec_env {
	struct rdrv *x, *peer;
	struct twire *w;
	struct rdrv_cq cq;
	u64 buf, rbuf;
	struct twire_frame *out;	/* VEC_MAX_FRAMES */
};

static void vec_env_up(struct vec_env *e)
{
	e->x = rdrv_up(1);
	e->peer = rdrv_up(2);
	e->w = twire_new(e->x, e->peer);
	e->buf = rdrv_alloc(e->x, VEC_BUF, 4096);
	e->rbuf = rdrv_alloc(e->x, VEC_BUF, 4096);
	e->out = calloc(VEC_MAX_FRAMES, sizeof(*e->out));
	if (!e->out || rdrv_cq_create(e->x, 8, &e->cq))
		abort();
}

static void vec_env_down(struct vec_env *e)
{
	free(e->out);
	twire_free(e->w);
	rdrv_free(e->peer);
	rdrv_free(e->x);
}

TEST(rdma_vectors_rxe_requests)
{
	static struct vec_msg flows[VEC_MAX_FLOWS];
	unsigned int by_op[0x20] = {}, msgs = 0, multi = 0, ipv6 = 0;
	unsigned int skipped = 0, nflows = 0, i, k;
	const struct vec_frame *fr;
	struct vec_file v;
	struct vec_env e;
	struct vec_msg *m;

	REQUIRE(vec_load(&v));
	memset(flows, 0, sizeof(flows));
	vec_env_up(&e);
	for (k = 0; k < v.n; k++) {
		fr = &v.f[k];
		if (!vec_is_request(fr->h.opcode))
			continue;
		for (i = 0; i < nflows; i++)
			if (flows[i].dqpn == fr->h.dest_qpn &&
			    flows[i].sport == fr->sport)
				break;
		if (i == nflows) {
			REQUIRE(nflows < VEC_MAX_FLOWS);
			nflows++;
		}
		m = &flows[i];
		m->dqpn = fr->h.dest_qpn;
		m->sport = fr->sport;
		if (vec_starts(fr->h.opcode)) {
			m->n = 0;
			m->open = true;
		} else if (!m->open || m->n == VEC_MAX_PKTS ||
			   fr->h.psn != rc_psn_add(m->f[m->n - 1]->h.psn, 1)) {
			/* a retransmission or a message begun before capture */
			skipped++;
			m->open = false;
			continue;
		}
		m->f[m->n++] = fr;
		if (!vec_ends(fr->h.opcode))
			continue;
		m->open = false;
		vec_check_msg(e.x, e.w, m, e.buf, &e.cq, e.out);
		msgs++;
		multi += m->n > 1;
		ipv6 += fr->net == RNIC_RX_CLASS_ROCE_V2_IPV6;
		for (i = 0; i < m->n; i++)
			by_op[m->f[i]->h.opcode]++;
	}
	printf("# %s: %u requests (%u multi-packet, %u over IPv6), %u packets skipped\n",
	       VEC_FILE, msgs, multi, ipv6, skipped);

	/* what capture-rxe-ops.sh sends: every opcode rnic_perf can post */
	CHECK(by_op[RC_OP_SEND_ONLY] > 0);
	CHECK(by_op[RC_OP_SEND_FIRST] > 0);
	CHECK(by_op[RC_OP_SEND_MIDDLE] > 0);
	CHECK(by_op[RC_OP_SEND_LAST] > 0);
	CHECK(by_op[RC_OP_SEND_ONLY_IMM] > 0);
	CHECK(by_op[RC_OP_SEND_LAST_IMM] > 0);
	CHECK(by_op[RC_OP_WRITE_ONLY] > 0);
	CHECK(by_op[RC_OP_WRITE_FIRST] > 0);
	CHECK(by_op[RC_OP_WRITE_MIDDLE] > 0);
	CHECK(by_op[RC_OP_WRITE_LAST] > 0);
	CHECK(by_op[RC_OP_WRITE_ONLY_IMM] > 0);
	CHECK(by_op[RC_OP_WRITE_LAST_IMM] > 0);
	CHECK(by_op[RC_OP_READ_REQ] > 0);
	CHECK(by_op[RC_OP_CMP_SWAP] > 0);
	CHECK(by_op[RC_OP_FETCH_ADD] > 0);
	CHECK(ipv6 > 0);
	vec_env_down(&e);
	free(v.f);
}

/* ---- the responder ---- */

static bool vec_same_ip(const u8 *a, const u8 *b)
{
	return !memcmp(a, b, 16);
}

static bool vec_is_response(u8 op)
{
	return op >= RC_OP_READ_RESP_FIRST && op <= RC_OP_ATOMIC_ACK;
}

/* One RC connection seen from rxe's responder */
struct vec_conn {
	const struct vec_frame *req0;	/* its first request */
	u32 resp_qpn;			/* the requester's QPN: responses' dqpn */
	const struct vec_frame *resp0;	/* its first response */
	u64 va_lo, va_hi;		/* what RETH/AtomicETH reach */
};

static bool vec_of_conn(const struct vec_conn *c, const struct vec_frame *fr)
{
	return vec_is_request(fr->h.opcode) &&
	       fr->h.dest_qpn == c->req0->h.dest_qpn &&
	       vec_same_ip(fr->src, c->req0->src) &&
	       vec_same_ip(fr->dst, c->req0->dst);
}

static bool vec_resp_of_conn(const struct vec_conn *c,
			     const struct vec_frame *fr)
{
	return vec_is_response(fr->h.opcode) &&
	       fr->h.dest_qpn == c->resp_qpn &&
	       vec_same_ip(fr->src, c->req0->dst) &&
	       vec_same_ip(fr->dst, c->req0->src);
}

/* rxe's responses of @c with @opcode range and a PSN in [psn, psn + n) */
static const struct vec_frame *vec_find_resp(const struct vec_file *v,
					     const struct vec_conn *c,
					     unsigned int from, u8 op_lo,
					     u8 op_hi, u32 psn, u32 n)
{
	const struct vec_frame *fr;
	unsigned int k;

	for (k = from; k < v->n; k++) {
		fr = &v->f[k];
		if (vec_resp_of_conn(c, fr) && fr->h.opcode >= op_lo &&
		    fr->h.opcode <= op_hi && rc_psn_diff(fr->h.psn, psn) < n)
			return fr;
	}
	return NULL;
}

/* The request as the model's QP @qpn and MR @rkey receive it */
static void vec_rewrite(u8 *data, const struct vec_frame *fr, u32 qpn,
			u32 rkey)
{
	u8 *bth = data + fr->info.bth_off;

	memcpy(data, fr->data, fr->len);
	bth[5] = (u8)(qpn >> 16);
	bth[6] = (u8)(qpn >> 8);
	bth[7] = (u8)qpn;
	if (fr->h.mask & (RC_HDR_RETH | RC_HDR_ATOMICETH)) {
		bth[20] = (u8)(rkey >> 24);	/* after the 8-byte VA */
		bth[21] = (u8)(rkey >> 16);
		bth[22] = (u8)(rkey >> 8);
		bth[23] = (u8)rkey;
	}
	pkt_icrc_fill(data, &fr->info);
}

/*
 * Before the model answers a READ or an atomic, its memory holds what
 * rxe's did: the data rxe returned, the original value rxe reported.
 */
static void vec_target(const struct vec_file *v, const struct vec_conn *c,
		       unsigned int k, u8 *mem)
{
	const struct vec_frame *fr = &v->f[k], *r;
	u8 *at = mem + (fr->h.va - (c->va_lo & ~4095ULL));
	u32 n, i, off = 0;

	if (fr->h.opcode == RC_OP_READ_REQ) {
		n = fr->h.dma_len ? (fr->h.dma_len + 1023) / 1024 : 1;
		for (i = 0; i < n; i++) {
			r = vec_find_resp(v, c, k, RC_OP_READ_RESP_FIRST,
					  RC_OP_READ_RESP_ONLY,
					  rc_psn_add(fr->h.psn, i), 1);
			if (!r)
				return;
			memcpy(at + off, r->h.payload, r->h.payload_len);
			off += r->h.payload_len;
		}
	} else if (fr->h.mask & RC_HDR_ATOMICETH) {
		r = vec_find_resp(v, c, k, RC_OP_ATOMIC_ACK, RC_OP_ATOMIC_ACK,
				  fr->h.psn, 1);
		if (r)
			memcpy(at, &r->h.orig, 8);
	}
}

/* The model's port takes rxe's responder's address as its own too */
static int vec_gid(struct rdrv *x, const struct vec_frame *req)
{
	struct rnic_aq_modify_gid g = {};
	bool v4 = req->net == RNIC_RX_CLASS_ROCE_V2_IPV4;

	g.hdr.opcode = RNIC_AQ_MODIFY_GID;
	/* past the entries rdrv_up() fills */
	g.entry.index = cpu_to_le16(RDRV_GID_V2_IP6 + (v4 ? 1 : 2));
	g.entry.type = RNIC_GID_TYPE_ROCE_V2;
	g.entry.flags = RNIC_GID_F_VALID;
	if (v4) {
		g.entry.gid[10] = g.entry.gid[11] = 0xff;
		memcpy(g.entry.gid + 12, req->dst, 4);
	} else {
		memcpy(g.entry.gid, req->dst, 16);
	}
	return rdrv_cmd(x, &g, NULL);
}

/* Replay @c's requests into one model QP; its responses against rxe's */
static void vec_check_conn(const struct vec_file *v, struct vec_env *e,
			   const struct vec_conn *c, unsigned int *by_op)
{
	static u8 data[2048];
	const struct vec_frame *fr;
	unsigned int k, got = 0, want = 0, slot = 0;
	struct rnic_data_sge s;
	u32 next_psn, last_psn, rkey = 0;
	struct rdrv *x = e->x;
	struct rdrv_qp qp;
	u64 span;

	if (vec_gid(x, c->req0) ||
	    rdrv_qp_create(x, RNIC_QPT_RC, x->pdn, &e->cq, &e->cq, NULL, 4, 7,
			 5, 6, &qp) ||
	    vec_connect(x, &qp, c->resp0, c->resp_qpn, c->req0->h.psn, 0)) {
		test_fail(__FILE__, __LINE__, "QP for qpn %#x",
			  c->req0->h.dest_qpn);
		return;
	}
	if (c->va_hi > c->va_lo) {
		span = c->va_hi - (c->va_lo & ~4095ULL);
		if (span > VEC_BUF) {
			test_fail(__FILE__, __LINE__,
				  "qpn %#x: remote addresses over %llu bytes",
				  c->req0->h.dest_qpn,
				  (unsigned long long)span);
			return;
		}
		memset(rdrv_ram(x, e->buf), 0, VEC_BUF);
		REQUIRE(!rdrv_mr_pbl(x, x->pdn, RNIC_ACCESS_ALL, c->va_lo,
				   c->va_hi - c->va_lo, e->buf, &rkey));
	}
	/* the capture may end before rxe answered the last requests */
	last_psn = c->resp0->h.psn;
	for (k = (unsigned int)(c->resp0 - v->f); k < v->n; k++)
		if (vec_resp_of_conn(c, &v->f[k]) &&
		    rc_psn_after(v->f[k].h.psn, last_psn))
			last_psn = v->f[k].h.psn;
	next_psn = c->req0->h.psn;
	for (k = (unsigned int)(c->req0 - v->f); k < v->n; k++) {
		fr = &v->f[k];
		if (!vec_of_conn(c, fr) || fr->h.psn != next_psn)
			continue;	/* another QP's, or a retransmission */
		if (rc_psn_after(fr->h.psn, last_psn))
			break;
		/* a receive for each SEND, and for each WRITE with immediate */
		if ((vec_is_send(fr->h.opcode) && vec_starts(fr->h.opcode)) ||
		    fr->h.opcode == RC_OP_WRITE_ONLY_IMM ||
		    fr->h.opcode == RC_OP_WRITE_LAST_IMM) {
			s.addr = cpu_to_le64(e->rbuf + slot * VEC_RECV);
			s.len = cpu_to_le32(VEC_RECV);
			s.lkey = cpu_to_le32(x->dma_key);
			slot = (slot + 1) % (VEC_BUF / VEC_RECV);
			rdrv_post_recv(x, &qp, &s, 1, true);
		}
		vec_target(v, c, k, rdrv_ram(x, e->buf));
		vec_rewrite(data, fr, qp.qpn, rkey);
		rdev_wire_rx(rdrv_tdev(x)->d, data, fr->len);
		got += vec_drain(x, e->w, e->out + got,
				 got < VEC_MAX_FRAMES ? VEC_MAX_FRAMES - got : 0);
		next_psn = rc_psn_add(fr->h.psn,
				      fr->h.opcode == RC_OP_READ_REQ && fr->h.dma_len ?
				      (fr->h.dma_len + 1023) / 1024 : 1);
	}
	/* rxe's responses, in order, without repeats of one PSN */
	next_psn = c->req0->h.psn;
	for (k = (unsigned int)(c->resp0 - v->f); k < v->n; k++) {
		fr = &v->f[k];
		if (!vec_resp_of_conn(c, fr) ||
		    rc_psn_diff(fr->h.psn, next_psn) > RC_PSN_MASK / 2)
			continue;
		if (want < got && want < VEC_MAX_FRAMES)
			vec_same(e->out[want].data, e->out[want].len, fr,
				 vec_ip_id(c->resp0));
		want++;
		by_op[fr->h.opcode]++;
		next_psn = rc_psn_add(fr->h.psn, 1);
	}
	if (got != want)
		test_fail(__FILE__, __LINE__,
			  "qpn %#x: the model sent %u responses, rxe %u",
			  c->req0->h.dest_qpn, got, want);
	vec_qp_gone(x, &qp, &e->cq);
}

TEST(rdma_vectors_rxe_responses)
{
	static struct vec_conn conns[VEC_MAX_FLOWS];
	unsigned int by_op[0x20] = {}, nconns = 0, i, k, j;
	const struct vec_frame *fr, *r;
	struct vec_conn *c;
	struct vec_file v;
	struct vec_env e;
	u64 end;

	REQUIRE(vec_load(&v));
	memset(conns, 0, sizeof(conns));
	for (k = 0; k < v.n; k++) {
		fr = &v.f[k];
		if (!vec_is_request(fr->h.opcode))
			continue;
		for (i = 0; i < nconns; i++)
			if (vec_of_conn(&conns[i], fr))
				break;
		if (i == nconns) {
			/* its responses: the reverse direction, a PSN it sent */
			for (j = k + 1; j < v.n; j++) {
				r = &v.f[j];
				if (vec_is_response(r->h.opcode) &&
				    vec_same_ip(r->src, fr->dst) &&
				    vec_same_ip(r->dst, fr->src) &&
				    rc_psn_diff(r->h.psn, fr->h.psn) < 4)
					break;
			}
			if (j == v.n)
				continue;	/* unanswered in the capture */
			REQUIRE(nconns < VEC_MAX_FLOWS);
			c = &conns[nconns++];
			c->req0 = fr;
			c->resp0 = &v.f[j];
			c->resp_qpn = v.f[j].h.dest_qpn;
			c->va_lo = ~0ULL;
		}
		c = &conns[i];
		if (fr->h.mask & (RC_HDR_RETH | RC_HDR_ATOMICETH)) {
			end = fr->h.va + (fr->h.mask & RC_HDR_ATOMICETH ? 8 :
					  fr->h.dma_len);
			if (fr->h.va < c->va_lo)
				c->va_lo = fr->h.va;
			if (end > c->va_hi)
				c->va_hi = end;
		}
	}
	vec_env_up(&e);
	for (i = 0; i < nconns; i++)
		vec_check_conn(&v, &e, &conns[i], by_op);
	for (i = 0, k = 0; i < 0x20; i++)
		k += by_op[i];
	printf("# %s: %u connections replayed to the model's responder, %u responses compared\n",
	       VEC_FILE, nconns, k);
	CHECK(by_op[RC_OP_ACK] > 0);
	CHECK(by_op[RC_OP_READ_RESP_ONLY] > 0);
	CHECK(by_op[RC_OP_READ_RESP_FIRST] > 0);
	CHECK(by_op[RC_OP_READ_RESP_MIDDLE] > 0);
	CHECK(by_op[RC_OP_READ_RESP_LAST] > 0);
	CHECK(by_op[RC_OP_ATOMIC_ACK] > 0);
	vec_env_down(&e);
	free(v.f);
}

/* ---- GSI: the CM's MADs ---- */

/* One rxe device's QP1, played by a model device */
struct vec_gsi {
	u8 src[16];
	struct vec_env e;
	struct rdrv_qp qp;
	u32 next_psn;
	bool up;
};

/* A fresh device whose QP1 sends its next MAD with @psn */
static int vec_gsi_up(struct vec_gsi *g, u32 psn)
{
	struct rnic_aq_modify_qp m = {};
	int st;

	if (g->up)
		vec_env_down(&g->e);
	vec_env_up(&g->e);
	g->up = true;
	g->next_psn = psn;
	st = rdrv_qp_create(g->e.x, RNIC_QPT_GSI, g->e.x->pdn, &g->e.cq,
			  &g->e.cq, NULL, 4, 7, 4, 6, &g->qp);
	if (st)
		return st;
	m.qpn = cpu_to_le32(g->qp.qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PKEY_INDEX |
				  RNIC_QP_ATTR_QKEY);
	m.state = RNIC_QPS_INIT;
	m.qkey = cpu_to_le32(RNIC_QKEY_GSI);
	st = rdrv_qp_modify(g->e.x, &m, NULL);
	if (st)
		return st;
	st = rdrv_qp_state(g->e.x, &g->qp, RNIC_QPS_RTR);
	if (st)
		return st;
	memset(&m, 0, sizeof(m));
	m.qpn = cpu_to_le32(g->qp.qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN);
	m.state = RNIC_QPS_RTS;
	m.sq_psn = cpu_to_le32(psn);
	return rdrv_qp_modify(g->e.x, &m, NULL);
}

/*
 * rxe's MADs from each of its devices (QP1, numbered PSNs) are sent again
 * from a model GSI QP: address handle = the frame's headers, remote QPN,
 * Q_Key and payload from the frame. The template carries rxe's own IPv4
 * identification here (one AH per frame), so the frames must be equal
 * with no correction at all.
 */
TEST(rdma_vectors_rxe_gsi)
{
	static struct vec_gsi gsi[4];
	unsigned int ngsi = 0, mads = 0, k, i, got;
	struct rnic_hdr_tmpl t;
	const struct vec_frame *fr;
	struct vec_gsi *g;
	struct vec_file v;
	u8 wqe[128];

	REQUIRE(vec_load(&v));
	memset(gsi, 0, sizeof(gsi));
	for (k = 0; k < v.n; k++) {
		fr = &v.f[k];
		if (!fr->ud)
			continue;
		CHECK_EQ(fr->sqpn, 1);
		for (i = 0; i < ngsi; i++)
			if (!memcmp(gsi[i].src, fr->src, 16))
				break;
		if (i == ngsi) {
			REQUIRE(ngsi < ARRAY_SIZE(gsi));
			memcpy(gsi[ngsi++].src, fr->src, 16);
		}
		g = &gsi[i];
		/* a MAD the capture missed, or the first: PSNs start here */
		if (!g->up || fr->h.psn != g->next_psn)
			REQUIRE(!vec_gsi_up(g, fr->h.psn));
		vec_tmpl(fr, &t);
		rdrv_ah_set(g->e.x, 1, g->e.x->pdn, &t);
		memcpy(rdrv_ram(g->e.x, g->e.buf), fr->h.payload,
		       fr->h.payload_len);
		memset(wqe, 0, sizeof(wqe));
		rdrv_ud_wqe(wqe, fr->h.opcode == VEC_UD_SEND_IMM ?
			  RNIC_SQE_OP_SEND_IMM : RNIC_SQE_OP_SEND,
			  RNIC_SQE_F_SIGNALED |
			  (fr->h.se ? RNIC_SQE_F_SOLICITED : 0), 1,
			  fr->h.dest_qpn, fr->qkey, g->e.buf,
			  fr->h.payload_len, g->e.x->dma_key);
		if (fr->h.opcode == VEC_UD_SEND_IMM)
			((struct rnic_sqe *)wqe)->ctrl.imm_data = fr->h.imm;
		rdrv_post_send(g->e.x, &g->qp, wqe, true);
		got = vec_drain(g->e.x, g->e.w, g->e.out, 1);
		if (got != 1)
			test_fail(__FILE__, __LINE__,
				  "MAD psn %#x: the model sent %u frames",
				  fr->h.psn, got);
		else
			vec_same(g->e.out[0].data, g->e.out[0].len, fr,
				 vec_ip_id(fr));
		g->next_psn = rc_psn_add(fr->h.psn, 1);
		mads++;
	}
	printf("# %s: %u MADs from %u rxe QP1s sent again\n", VEC_FILE, mads,
	       ngsi);
	/* the connection of every rnic_perf run: REQ, REP, RTU, DREQ, DREP */
	CHECK(mads >= 5);
	for (i = 0; i < ngsi; i++)
		if (gsi[i].up)
			vec_env_down(&gsi[i].e);
	free(v.f);
}
