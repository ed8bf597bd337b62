// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA side of the fake driver; see fakedrv_rdma.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fakedrv/fakedrv_rdma.h"

#define DBP_KICK_OFF	offsetof(struct rnic_db_page, kick)
#define DBP_KICK_PI_OFF	offsetof(struct rnic_db_page, kick_pi)

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

int rdrv_cmd(struct rdrv *x, void *cmd, union rnic_aq_resp *resp)
{
	return fakedrv_admin(x->bus, cmd, resp);
}

u64 rdrv_alloc(struct rdrv *x, size_t size, size_t align)
{
	return fakedrv_alloc(x->bus, size, align);
}

void *rdrv_ram(struct rdrv *x, u64 gpa)
{
	return fakedrv_ram(x->bus, gpa);
}

static u64 query_stat(struct rdrv *x, u8 scope, u32 handle, unsigned int i,
		      unsigned int n)
{
	struct rnic_aq_query_obj q = {};
	u64 buf = rdrv_alloc(x, 8 * n, 8);
	__le64 v;

	q.hdr.opcode = RNIC_AQ_QUERY_RDMA_STATS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(8 * n);
	q.handle = cpu_to_le32(handle);
	q.scope = scope;
	if (rdrv_cmd(x, &q, NULL))
		return ~0ULL;
	memcpy(&v, rdrv_ram(x, buf + 8 * i), 8);
	return le64_to_cpu(v);
}

u64 rdrv_rctr(struct rdrv *x, enum rnic_rdma_stat s)
{
	return query_stat(x, RNIC_RDMA_STATS_SCOPE_PORT, 0, s,
			  RNIC_NUM_RDMA_STATS);
}

u64 rdrv_qpctr(struct rdrv *x, u32 qpn, enum rnic_qp_stat s)
{
	return query_stat(x, RNIC_RDMA_STATS_SCOPE_QP, qpn, s,
			  RNIC_NUM_QP_STATS);
}

u64 rdrv_pctr(struct rdrv *x, enum rnic_port_stat s)
{
	return fakedrv_port_stat(x->bus, s);
}

/* ---- doorbell pages ---- */

static unsigned int page_off(struct rdrv *x, u32 page)
{
	return le32_to_cpu(x->caps.db_base) + (page << x->caps.db_page_log2);
}

int rdrv_alloc_db_page(struct rdrv *x, u32 flags, u32 *page)
{
	struct rnic_aq_alloc_db_page c = {};
	union rnic_aq_resp r;
	int st;

	c.hdr.opcode = RNIC_AQ_ALLOC_DB_PAGE;
	c.flags = cpu_to_le32(flags);
	st = rdrv_cmd(x, &c, &r);
	if (!st) {
		*page = le32_to_cpu(r.db_page.page);
		x->kick = le32_to_cpu(r.db_page.kick);
	}
	return st;
}

void rdrv_slot_write(struct rdrv *x, u32 page, u16 db_off, u32 val)
{
	fakedrv_w32(x->bus, page_off(x, page) + db_off, val);
}

/* The page's kick_pi is only ever written by this driver: read it back. */
void rdrv_kick_add(struct rdrv *x, u32 page, u16 db_off)
{
	unsigned int base = page_off(x, page);
	u16 pi = fakedrv_r32(x->bus, base + DBP_KICK_PI_OFF);
	__le16 e = cpu_to_le16(db_off / 4);

	memcpy(x->bus->bar2 + base + DBP_KICK_OFF +
	       2 * (pi % RNIC_DBP_KICK_DEPTH), &e, 2);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	fakedrv_w32(x->bus, base + DBP_KICK_PI_OFF, (u16)(pi + 1));
}

void rdrv_kick(struct rdrv *x)
{
	fakedrv_ring(x->bus, FIELD_GET(RNIC_IVSHMEM_DB_VECTOR, x->kick));
}

void rdrv_ring(struct rdrv *x, u16 db_off, u32 val)
{
	rdrv_slot_write(x, x->dbp, db_off, val);
	rdrv_kick_add(x, x->dbp, db_off);
	rdrv_kick(x);
}

/* ---- event queues ---- */

bool rdrv_eq0_next(struct rdrv *x, struct rnic_eqe *e)
{
	return fakedrv_eq0_next(x->bus, e);
}

/* Drain event queue 0; how many entries of @type it held. */
unsigned int rdrv_eq0_count(struct rdrv *x, u8 type, struct rnic_eqe *last)
{
	return fakedrv_eq0_count(x->bus, type, last);
}

bool rdrv_ceq_next(struct rdrv *x, struct rnic_eqe *e)
{
	unsigned int mask = (1U << RDRV_EQ_LOG2) - 1;
	struct rnic_eqe *p = rdrv_ram(x, x->eq_base +
				     (x->eq_ci & mask) * RNIC_EQE_SIZE);

	if (rnic_eqe_phase(p) != rnic_ring_phase(x->eq_ci, RDRV_EQ_LOG2))
		return false;
	*e = *p;
	x->eq_ci++;
	/* repeats the last arm, as every slot write must (rdrv_cq_poll) */
	fakedrv_w32(x->bus, RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(x->eqn)),
		rnic_db_cq(x->eq_ci, x->eq_armed, x->eq_arm_seq));
	return true;
}

void rdrv_ceq_arm(struct rdrv *x)
{
	x->eq_arm_seq++;
	x->eq_armed = true;
	fakedrv_w32(x->bus, RNIC_DB_SLOT_OFF(RNIC_DB_EQ_SLOT(x->eqn)),
		rnic_db_cq(x->eq_ci, true, x->eq_arm_seq));
	fakedrv_ring(x->bus, RNIC_DB_VEC_EVENT);
}

/* ---- CQs ---- */

int rdrv_cq_create(struct rdrv *x, u8 log2, struct rdrv_cq *cq)
{
	struct rnic_aq_create_rdma_cq c = {};
	union rnic_aq_resp r;
	int st;

	memset(cq, 0, sizeof(*cq));
	cq->log2 = log2;
	cq->base = rdrv_alloc(x, RNIC_RDMA_CQE_SIZE << log2, 4096);
	c.hdr.opcode = RNIC_AQ_CREATE_RDMA_CQ;
	c.ring_addr = cpu_to_le64(cq->base);
	c.eqn = cpu_to_le32(x->eqn);
	c.db_page = cpu_to_le32(x->dbp);
	c.log2_depth = log2;
	st = rdrv_cmd(x, &c, &r);
	if (!st) {
		cq->cqn = le32_to_cpu(r.create_cq.cqn);
		cq->db_off = le16_to_cpu(r.create_cq.db_off);
	}
	return st;
}

int rdrv_cq_destroy(struct rdrv *x, struct rdrv_cq *cq)
{
	struct rnic_aq_obj c = {};

	c.hdr.opcode = RNIC_AQ_DESTROY_RDMA_CQ;
	c.handle = cpu_to_le32(cq->cqn);
	return rdrv_cmd(x, &c, NULL);
}

bool rdrv_cq_poll(struct rdrv *x, struct rdrv_cq *cq, struct rnic_rdma_cqe *cqe)
{
	unsigned int mask = (1U << cq->log2) - 1;
	struct rnic_rdma_cqe *p = rdrv_ram(x, cq->base +
					 (cq->ci & mask) * RNIC_RDMA_CQE_SIZE);

	if (rnic_rdma_cqe_phase(p) != rnic_ring_phase(cq->ci, cq->log2))
		return false;
	*cqe = *p;
	cq->ci++;
	/*
	 * A CI update needs neither a kick entry nor a kick, but it repeats
	 * the last arm: the device may not have read it yet
	 * (hardware-rdma.rst, CQ).
	 */
	rdrv_slot_write(x, x->dbp, cq->db_off, rdrv_cq_slot(cq));
	return true;
}

u32 rdrv_cq_slot(const struct rdrv_cq *cq)
{
	return rnic_db_rdma_cq(cq->ci, cq->armed, cq->arm_solicited,
			       cq->arm_seq);
}

/* The arm's slot value, written but not yet kicked */
void rdrv_cq_arm_write(struct rdrv *x, struct rdrv_cq *cq, bool solicited)
{
	cq->arm_seq++;
	cq->armed = true;
	cq->arm_solicited = solicited;
	rdrv_slot_write(x, x->dbp, cq->db_off, rdrv_cq_slot(cq));
}

void rdrv_cq_arm(struct rdrv *x, struct rdrv_cq *cq, bool solicited)
{
	rdrv_cq_arm_write(x, cq, solicited);
	rdrv_kick_add(x, x->dbp, cq->db_off);
	rdrv_kick(x);
}

/* ---- PD, MR ---- */

int rdrv_pd_alloc(struct rdrv *x, bool priv, u32 *pdn)
{
	struct rnic_aq_alloc_pd c = {};
	union rnic_aq_resp r;
	int st;

	c.hdr.opcode = RNIC_AQ_ALLOC_PD;
	c.flags = cpu_to_le32(priv ? RNIC_PD_F_PRIVILEGED : 0);
	st = rdrv_cmd(x, &c, &r);
	if (!st)
		*pdn = le32_to_cpu(r.id.id);
	return st;
}

/* A PBL MR of 4 KiB pages over the contiguous guest buffer @buf */
int rdrv_mr_pbl(struct rdrv *x, u32 pdn, u8 access, u64 iova, u64 len,
	      u64 buf, u32 *key)
{
	u32 n = ((iova & 4095) + len + 4095) / 4096, i;
	u64 pbl = rdrv_alloc(x, 8 * n, 8);
	struct rnic_aq_create_mr c = {};
	union rnic_aq_resp r;
	__le64 *pages = rdrv_ram(x, pbl);
	int st;

	for (i = 0; i < n; i++)
		pages[i] = cpu_to_le64((buf & ~4095ULL) + 4096ULL * i);
	c.hdr.opcode = RNIC_AQ_CREATE_MR;
	c.type = RNIC_MRT_PBL;
	c.access = access;
	c.page_log2 = 12;
	c.pdn = cpu_to_le32(pdn);
	c.iova = cpu_to_le64(iova);
	c.length = cpu_to_le64(len);
	c.pbl_addr = cpu_to_le64(pbl);
	c.npages = cpu_to_le32(n);
	st = rdrv_cmd(x, &c, &r);
	if (!st)
		*key = le32_to_cpu(r.id.id);
	return st;
}

static int mr_dma(struct rdrv *x, u32 pdn, u32 *key)
{
	struct rnic_aq_create_mr c = {};
	union rnic_aq_resp r;
	int st;

	c.hdr.opcode = RNIC_AQ_CREATE_MR;
	c.type = RNIC_MRT_DMA;
	c.access = RNIC_ACCESS_ALL;
	c.pdn = cpu_to_le32(pdn);
	st = rdrv_cmd(x, &c, &r);
	if (!st)
		*key = le32_to_cpu(r.id.id);
	return st;
}

/* ---- SRQ ---- */

int rdrv_srq_create(struct rdrv *x, u32 pdn, u8 log2, u8 rqe_log2, u32 limit,
		  struct rdrv_srq *srq)
{
	struct rnic_aq_create_srq c = {};
	union rnic_aq_resp r;
	int st;

	memset(srq, 0, sizeof(*srq));
	srq->log2 = log2;
	srq->rqe_log2 = rqe_log2;
	srq->wqe = rdrv_alloc(x, 1U << (log2 + rqe_log2), 4096);
	srq->idx = rdrv_alloc(x, 2U << log2, 64);
	c.hdr.opcode = RNIC_AQ_CREATE_SRQ;
	c.pdn = cpu_to_le32(pdn);
	c.db_page = cpu_to_le32(x->dbp);
	c.wqe_addr = cpu_to_le64(srq->wqe);
	c.idx_addr = cpu_to_le64(srq->idx);
	c.log2_depth = log2;
	c.rqe_log2 = rqe_log2;
	c.limit = cpu_to_le32(limit);
	st = rdrv_cmd(x, &c, &r);
	if (!st) {
		srq->srqn = le32_to_cpu(r.create_srq.srqn);
		srq->db_off = le16_to_cpu(r.create_srq.db_off);
	}
	return st;
}

static void rqe_write(void *dst, const struct rnic_data_sge *sge,
		      unsigned int n, size_t size)
{
	struct rnic_rqe *rqe = dst;

	memset(dst, 0, size);
	rqe->num_sge = n;
	memcpy(rqe->sge, sge, n * sizeof(*sge));
}

void rdrv_srq_post_ring(struct rdrv *x, struct rdrv_srq *srq, u16 slot,
			const struct rnic_data_sge *sge, unsigned int n,
			bool ring)
{
	__le16 *idx = rdrv_ram(x, srq->idx);

	rqe_write(rdrv_ram(x, srq->wqe + ((u64)slot << srq->rqe_log2)), sge, n,
		  1U << srq->rqe_log2);
	idx[srq->pi & ((1U << srq->log2) - 1)] = cpu_to_le16(slot);
	srq->pi++;
	if (ring)
		rdrv_ring(x, srq->db_off, srq->pi);
	else
		rdrv_slot_write(x, x->dbp, srq->db_off, srq->pi);
}

void rdrv_srq_post(struct rdrv *x, struct rdrv_srq *srq, u16 slot,
		 const struct rnic_data_sge *sge, unsigned int n)
{
	rdrv_srq_post_ring(x, srq, slot, sge, n, true);
}

/* ---- QPs ---- */

int rdrv_qp_create(struct rdrv *x, u8 type, u32 pdn, struct rdrv_cq *scq,
		 struct rdrv_cq *rcq, struct rdrv_srq *srq, u8 sq_log2, u8 sqe_log2,
		 u8 rq_log2, u8 rqe_log2, struct rdrv_qp *qp)
{
	struct rnic_aq_create_qp c = {};
	union rnic_aq_resp r;
	int st;

	memset(qp, 0, sizeof(*qp));
	qp->type = type;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	qp->sq_log2 = sq_log2;
	qp->sqe_log2 = sqe_log2;
	qp->sq = rdrv_alloc(x, 1U << (sq_log2 + sqe_log2), 4096);
	c.hdr.opcode = RNIC_AQ_CREATE_QP;
	c.type = type;
	c.pdn = cpu_to_le32(pdn);
	c.send_cqn = cpu_to_le32(scq->cqn);
	c.recv_cqn = cpu_to_le32(rcq->cqn);
	c.db_page = cpu_to_le32(x->dbp);
	c.sq_addr = cpu_to_le64(qp->sq);
	c.sq_log2_depth = sq_log2;
	c.sqe_log2 = sqe_log2;
	if (srq) {
		c.flags = RNIC_QP_F_SRQ;
		c.srqn = cpu_to_le32(srq->srqn);
	} else {
		qp->rq_log2 = rq_log2;
		qp->rqe_log2 = rqe_log2;
		qp->rq = rdrv_alloc(x, 1U << (rq_log2 + rqe_log2), 4096);
		c.rq_addr = cpu_to_le64(qp->rq);
		c.rq_log2_depth = rq_log2;
		c.rqe_log2 = rqe_log2;
	}
	st = rdrv_cmd(x, &c, &r);
	if (!st) {
		qp->qpn = le32_to_cpu(r.create_qp.qpn);
		qp->sq_off = le16_to_cpu(r.create_qp.sq_db_off);
		qp->rq_off = le16_to_cpu(r.create_qp.rq_db_off);
	}
	return st;
}

int rdrv_qp_modify(struct rdrv *x, struct rnic_aq_modify_qp *m, u8 *state)
{
	union rnic_aq_resp r;
	int st;

	m->hdr.opcode = RNIC_AQ_MODIFY_QP;
	m->hdr.cmd_id = 0;
	st = rdrv_cmd(x, m, &r);
	if (state)
		*state = r.modify_qp.state;
	return st;
}

int rdrv_qp_destroy(struct rdrv *x, struct rdrv_qp *qp)
{
	struct rnic_aq_obj c = {};

	c.hdr.opcode = RNIC_AQ_DESTROY_QP;
	c.handle = cpu_to_le32(qp->qpn);
	return rdrv_cmd(x, &c, NULL);
}

int rdrv_qp_query(struct rdrv *x, u32 qpn, struct rnic_qp_query *q)
{
	struct rnic_aq_query_obj c = {};
	u64 buf = rdrv_alloc(x, sizeof(*q), 8);
	int st;

	c.hdr.opcode = RNIC_AQ_QUERY_QP;
	c.buf_addr = cpu_to_le64(buf);
	c.buf_len = cpu_to_le32(sizeof(*q));
	c.handle = cpu_to_le32(qpn);
	st = rdrv_cmd(x, &c, NULL);
	memcpy(q, rdrv_ram(x, buf), sizeof(*q));
	return st;
}

int rdrv_qp_state(struct rdrv *x, struct rdrv_qp *qp, u8 state)
{
	struct rnic_aq_modify_qp m = {};

	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE);
	m.state = state;
	return rdrv_qp_modify(x, &m, NULL);
}

int rdrv_ud_up(struct rdrv *x, struct rdrv_qp *qp, u32 qkey)
{
	struct rnic_aq_modify_qp m = {};
	int st;

	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PKEY_INDEX |
				  RNIC_QP_ATTR_QKEY);
	m.state = RNIC_QPS_INIT;
	m.qkey = cpu_to_le32(qkey);
	st = rdrv_qp_modify(x, &m, NULL);
	if (st)
		return st;
	st = rdrv_qp_state(x, qp, RNIC_QPS_RTR);
	if (st)
		return st;
	memset(&m, 0, sizeof(m));
	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN);
	m.state = RNIC_QPS_RTS;
	m.sq_psn = cpu_to_le32(0x100);
	return rdrv_qp_modify(x, &m, NULL);
}

void rdrv_post_send(struct rdrv *x, struct rdrv_qp *qp, const void *wqe, bool ring)
{
	u64 a = qp->sq + ((u64)(qp->sq_pi & ((1U << qp->sq_log2) - 1)) <<
			  qp->sqe_log2);

	memcpy(rdrv_ram(x, a), wqe, 1U << qp->sqe_log2);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	qp->sq_pi++;
	if (ring)
		rdrv_ring(x, qp->sq_off, qp->sq_pi);
	else
		rdrv_slot_write(x, x->dbp, qp->sq_off, qp->sq_pi);
}

void rdrv_post_recv(struct rdrv *x, struct rdrv_qp *qp,
		  const struct rnic_data_sge *sge, unsigned int n, bool ring)
{
	u64 a = qp->rq + ((u64)(qp->rq_pi & ((1U << qp->rq_log2) - 1)) <<
			  qp->rqe_log2);

	rqe_write(rdrv_ram(x, a), sge, n, 1U << qp->rqe_log2);
	qp->rq_pi++;
	if (ring)
		rdrv_ring(x, qp->rq_off, qp->rq_pi);
	else
		rdrv_slot_write(x, x->dbp, qp->rq_off, qp->rq_pi);
}

void rdrv_ud_wqe(void *wqe, u8 opcode, u8 flags, u32 ah, u32 rqpn, u32 qkey,
	       u64 addr, u32 len, u32 lkey)
{
	struct rnic_sqe *s = wqe;

	memset(s, 0, RNIC_SQE_HDR_SIZE + sizeof(struct rnic_data_sge));
	s->ctrl.opcode = opcode;
	s->ctrl.flags = flags;
	s->ctrl.length = cpu_to_le32(len);
	if (opcode == RNIC_SQE_OP_SEND_IMM)
		s->ctrl.imm_data = cpu_to_be32(0xa1b2c3d4);
	s->seg.ud.ah = cpu_to_le32(ah);
	s->seg.ud.remote_qpn = cpu_to_le32(rqpn);
	s->seg.ud.remote_qkey = cpu_to_le32(qkey);
	if (flags & RNIC_SQE_F_INLINE)
		return;
	s->ctrl.num_sge = 1;
	s->sge[0].addr = cpu_to_le64(addr);
	s->sge[0].len = cpu_to_le32(len);
	s->sge[0].lkey = cpu_to_le32(lkey);
}

/* ---- templates and the AH table ---- */

static void gid_ll(const struct rdrv *x, u8 *gid)
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = x->mac[0] ^ 2;
	gid[9] = x->mac[1];
	gid[10] = x->mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = x->mac[3];
	gid[14] = x->mac[4];
	gid[15] = x->mac[5];
}

static void gid_ip4(const struct rdrv *x, u8 *gid)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, x->ip4, 4);
}

void rdrv_tmpl(const struct rdrv *src, const struct rdrv *dst, u8 net, u16 vlan,
	     struct rnic_hdr_tmpl *t)
{
	u8 *h = t->hdr, *l3;
	unsigned int l2 = vlan ? 18 : 14;

	memset(t, 0, sizeof(*t));
	t->flags = cpu_to_le32(FIELD_PREP(RNIC_TMPL_NET, net) |
			       (vlan ? RNIC_TMPL_F_VLAN : 0));
	t->hdr_len = rnic_tmpl_hdr_len(net, vlan);
	memcpy(h, dst->mac, 6);
	memcpy(h + 6, src->mac, 6);
	if (vlan) {
		put_be16(h + 12, 0x8100);
		put_be16(h + 14, vlan);
	}
	l3 = h + l2;
	switch (net) {
	case RNIC_RX_CLASS_ROCE_V1:
		put_be16(h + l2 - 2, 0x8915);
		l3[0] = 0x60;
		l3[6] = 0x1b;
		l3[7] = 1;
		gid_ll(src, l3 + 8);
		gid_ll(dst, l3 + 24);
		break;
	case RNIC_RX_CLASS_ROCE_V2_IPV4:
		put_be16(h + l2 - 2, 0x0800);
		l3[0] = 0x45;
		l3[1] = 0x68;		/* a TOS the device must keep */
		put_be16(l3 + 6, 0x4000);
		l3[8] = 64;
		l3[9] = 17;
		memcpy(l3 + 12, src->ip4, 4);
		memcpy(l3 + 16, dst->ip4, 4);
		put_be16(l3 + 20, 0xc123);
		put_be16(l3 + 22, RNIC_DEFAULT_UDP_PORT);
		break;
	default:
		put_be16(h + l2 - 2, 0x86dd);
		l3[0] = 0x60;
		l3[2] = 0x12;		/* a flow label the device must keep */
		l3[6] = 17;
		l3[7] = 64;
		memcpy(l3 + 8, src->ip6, 16);
		memcpy(l3 + 24, dst->ip6, 16);
		put_be16(l3 + 40, 0xc321);
		put_be16(l3 + 42, RNIC_DEFAULT_UDP_PORT);
		break;
	}
}

static struct rnic_hdr_tmpl *ah_entry(struct rdrv *x, u32 idx)
{
	__le64 *pages = rdrv_ram(x, x->ah_pages);
	u64 page = le64_to_cpu(pages[idx / RNIC_AH_PER_PAGE]);

	return rdrv_ram(x, page + (idx % RNIC_AH_PER_PAGE) * RNIC_TMPL_SIZE);
}

void rdrv_ah_set(struct rdrv *x, u32 idx, u32 pdn, const struct rnic_hdr_tmpl *t)
{
	struct rnic_hdr_tmpl *e = ah_entry(x, idx);

	*e = *t;
	e->pdn = cpu_to_le32(pdn);
	e->flags = t->flags & ~cpu_to_le32(RNIC_TMPL_F_VALID);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->flags |= cpu_to_le32(RNIC_TMPL_F_VALID);
}

void rdrv_ah_clear(struct rdrv *x, u32 idx)
{
	ah_entry(x, idx)->flags &= ~cpu_to_le32(RNIC_TMPL_F_VALID);
}

/* ---- bring-up ---- */

void rdrv_init(struct rdrv *x, u8 id, struct fakedrv *bus, void *ctx)
{
	memset(x, 0, sizeof(*x));
	x->bus = bus;
	x->ctx = ctx;
	x->id = id;
	x->mac[0] = 0x02;
	x->mac[5] = id;
	x->ip4[0] = 10;
	x->ip4[3] = id;
	x->ip6[0] = 0xfd;
	x->ip6[15] = id;
}

static int query_caps(struct rdrv *x)
{
	struct rnic_aq_query_obj q = {};
	u64 buf = rdrv_alloc(x, sizeof(x->caps), 8);
	int st;

	q.hdr.opcode = RNIC_AQ_QUERY_RDMA_CAPS;
	q.buf_addr = cpu_to_le64(buf);
	q.buf_len = cpu_to_le32(sizeof(x->caps));
	st = rdrv_cmd(x, &q, NULL);
	memcpy(&x->caps, rdrv_ram(x, buf), sizeof(x->caps));
	return st;
}

static int create_eq(struct rdrv *x)
{
	struct rnic_aq_create_eq c = {};
	union rnic_aq_resp r;
	int st;

	x->eq_base = rdrv_alloc(x, RNIC_EQE_SIZE << RDRV_EQ_LOG2, 4096);
	c.hdr.opcode = RNIC_AQ_CREATE_EQ;
	c.ring_addr = cpu_to_le64(x->eq_base);
	c.log2_depth = RDRV_EQ_LOG2;
	c.msix_vector = cpu_to_le16(1);
	st = rdrv_cmd(x, &c, &r);
	if (!st)
		x->eqn = le32_to_cpu(r.id.id);
	return st;
}

static int add_gid(struct rdrv *x, u16 index, u8 type, const u8 *gid)
{
	struct rnic_aq_modify_gid c = {};

	c.hdr.opcode = RNIC_AQ_MODIFY_GID;
	c.entry.index = cpu_to_le16(index);
	c.entry.type = type;
	c.entry.flags = RNIC_GID_F_VALID;
	memcpy(c.entry.gid, gid, 16);
	return rdrv_cmd(x, &c, NULL);
}

static int gids(struct rdrv *x)
{
	u8 gid[16];

	gid_ll(x, gid);
	if (add_gid(x, RDRV_GID_V1_LL, RNIC_GID_TYPE_ROCE_V1, gid) ||
	    add_gid(x, RDRV_GID_V2_LL, RNIC_GID_TYPE_ROCE_V2, gid))
		return -1;
	gid_ip4(x, gid);
	if (add_gid(x, RDRV_GID_V1_IP4, RNIC_GID_TYPE_ROCE_V1, gid) ||
	    add_gid(x, RDRV_GID_V2_IP4, RNIC_GID_TYPE_ROCE_V2, gid))
		return -1;
	if (add_gid(x, RDRV_GID_V1_IP6, RNIC_GID_TYPE_ROCE_V1, x->ip6) ||
	    add_gid(x, RDRV_GID_V2_IP6, RNIC_GID_TYPE_ROCE_V2, x->ip6))
		return -1;
	return 0;
}

static int ah_table(struct rdrv *x)
{
	unsigned int n = RDRV_AH_ENTRIES / RNIC_AH_PER_PAGE, i;
	struct rnic_aq_set_ah_table c = {};
	__le64 *pages;

	x->ah_pages = rdrv_alloc(x, 8 * n, 8);
	pages = rdrv_ram(x, x->ah_pages);
	for (i = 0; i < n; i++)
		pages[i] = cpu_to_le64(rdrv_alloc(x, RNIC_AH_PAGE_SIZE, 4096));
	c.hdr.opcode = RNIC_AQ_SET_AH_TABLE;
	c.pbl_addr = cpu_to_le64(x->ah_pages);
	c.num_entries = cpu_to_le32(RDRV_AH_ENTRIES);
	return rdrv_cmd(x, &c, NULL);
}

int rdrv_setup(struct rdrv *x)
{
	if (query_caps(x) || rdrv_alloc_db_page(x, 0, &x->dbp) ||
	    create_eq(x) || rdrv_pd_alloc(x, true, &x->pdn) ||
	    mr_dma(x, x->pdn, &x->dma_key) || gids(x) || ah_table(x))
		return -1;
	rdrv_ceq_arm(x);
	return 0;
}

/* ---- RC ---- */

void rdrv_rc_wqe(void *wqe, u8 opcode, u8 flags, u32 len, u64 addr, u32 lkey,
	       u64 raddr, u32 rkey)
{
	struct rnic_sqe *s = wqe;

	memset(s, 0, RNIC_SQE_HDR_SIZE + sizeof(struct rnic_data_sge));
	s->ctrl.opcode = opcode;
	s->ctrl.flags = flags;
	s->ctrl.length = cpu_to_le32(len);
	if (opcode == RNIC_SQE_OP_SEND_IMM || opcode == RNIC_SQE_OP_WRITE_IMM)
		s->ctrl.imm_data = cpu_to_be32(0x11223344);
	if (opcode >= RNIC_SQE_OP_WRITE && opcode <= RNIC_SQE_OP_READ) {
		s->seg.rdma.remote_addr = cpu_to_le64(raddr);
		s->seg.rdma.rkey = cpu_to_le32(rkey);
	}
	if (len || opcode == RNIC_SQE_OP_CMP_SWAP ||
	    opcode == RNIC_SQE_OP_FETCH_ADD) {
		s->ctrl.num_sge = 1;
		s->sge[0].addr = cpu_to_le64(addr);
		s->sge[0].len = cpu_to_le32(len);
		s->sge[0].lkey = cpu_to_le32(lkey);
	}
}

int rdrv_rc_connect(struct rdrv *x, struct rdrv_qp *qp, const struct rdrv *peer,
		  u32 peer_qpn, u8 net)
{
	return rdrv_rc_connect_upto(x, qp, peer, peer_qpn, net, RNIC_QPS_RTS);
}

int rdrv_rc_connect_path(struct rdrv *x, struct rdrv_qp *qp,
		       const struct rnic_hdr_tmpl *t, u32 dest_qpn, u32 rq_psn,
		       u32 sq_psn, u8 upto)
{
	u64 path = rdrv_alloc(x, sizeof(struct rnic_hdr_tmpl), 8);
	struct rnic_aq_modify_qp m = {};
	int st;

	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PKEY_INDEX |
				  RNIC_QP_ATTR_ACCESS);
	m.state = RNIC_QPS_INIT;
	m.access = RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
		   RNIC_ACCESS_REMOTE_ATOMIC;
	st = rdrv_qp_modify(x, &m, NULL);
	if (st)
		return st;
	memcpy(rdrv_ram(x, path), t, sizeof(*t));
	memset(&m, 0, sizeof(m));
	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_PATH |
				  RNIC_QP_ATTR_PATH_MTU |
				  RNIC_QP_ATTR_DEST_QPN | RNIC_QP_ATTR_RQ_PSN |
				  RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
				  RNIC_QP_ATTR_MIN_RNR_TIMER);
	m.state = RNIC_QPS_RTR;
	m.path_addr = cpu_to_le64(path);
	m.path_mtu = x->path_mtu ? x->path_mtu : RNIC_PMTU_1024;
	m.dest_qpn = cpu_to_le32(dest_qpn);
	m.rq_psn = cpu_to_le32(rq_psn);
	m.max_dest_rd_atomic = 16;
	m.min_rnr_timer = 1;
	st = rdrv_qp_modify(x, &m, NULL);
	if (st || upto == RNIC_QPS_RTR)
		return st;
	memset(&m, 0, sizeof(m));
	m.qpn = cpu_to_le32(qp->qpn);
	m.attr_mask = cpu_to_le32(RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN |
				  RNIC_QP_ATTR_TIMEOUT |
				  RNIC_QP_ATTR_RETRY_CNT |
				  RNIC_QP_ATTR_RNR_RETRY |
				  RNIC_QP_ATTR_MAX_RD_ATOMIC);
	m.state = RNIC_QPS_RTS;
	m.sq_psn = cpu_to_le32(sq_psn);
	m.timeout = 10;		/* about 4 ms */
	m.retry_cnt = 7;
	m.rnr_retry = 7;
	m.max_rd_atomic = 16;
	return rdrv_qp_modify(x, &m, NULL);
}

int rdrv_rc_connect_upto(struct rdrv *x, struct rdrv_qp *qp, const struct rdrv *peer,
		       u32 peer_qpn, u8 net, u8 upto)
{
	struct rnic_hdr_tmpl t;

	rdrv_tmpl(x, peer, net, 0, &t);
	return rdrv_rc_connect_path(x, qp, &t, peer_qpn, 0x1000 + peer_qpn,
				  0x1000 + qp->qpn, upto);
}
