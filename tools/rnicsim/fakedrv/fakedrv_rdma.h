/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA side of the fake driver (struct rdrv): it programs a device model
 * through the admin queue and rings doorbell pages the way
 * hardware-rdma.rst tells a driver to (WQEs, then slots, then kick
 * entries and kick_pi, then one kick). The model's tests
 * (tests/fake_rdma.c) and rnicsim --bench=abi2 (bench_rdma.c) both drive
 * the device through it, each on its own platform, over the fake
 * driver's bus layer (fakedrv.h), which that platform sets up.
 *
 * Every function returns the admin status (or 0/-1); the callers decide
 * what to expect. Buffers are guest RAM addresses usable as MR-space
 * addresses of the privileged PD's DMA MR (rdrv->dma_key).
 */
#ifndef RNICSIM_FAKEDRV_RDMA_H
#define RNICSIM_FAKEDRV_RDMA_H

#include <stdbool.h>
#include <stddef.h>

#include <rnic_compat.h>
#include <rnic_hw.h>

#include "fakedrv/fakedrv.h"

#define RDRV_EQ_LOG2	4
#define RDRV_AH_ENTRIES	64

/* GID table indices rdrv_up() fills */
enum {
	RDRV_GID_V1_LL,		/* RoCE v1, fe80::<from MAC> */
	RDRV_GID_V2_LL,
	RDRV_GID_V1_IP4,		/* ::ffff:10.0.0.<n> */
	RDRV_GID_V2_IP4,
	RDRV_GID_V1_IP6,		/* fd00::<n> */
	RDRV_GID_V2_IP6,
};

struct rdrv_cq {
	u32 cqn;
	u16 db_off;
	u64 base;
	u8 log2;
	u16 ci;
	u8 arm_seq;
	bool armed;		/* armed once: every slot write repeats the arm */
	bool arm_solicited;
};

struct rdrv_srq {
	u32 srqn;
	u16 db_off;
	u64 wqe, idx;
	u8 log2, rqe_log2;
	u16 pi;
};

struct rdrv_qp {
	u32 qpn;
	u8 type;
	u16 sq_off, rq_off;
	u64 sq, rq;
	u8 sq_log2, sqe_log2, rq_log2, rqe_log2;
	u16 sq_pi, rq_pi;
	struct rdrv_cq *scq, *rcq;
	struct rdrv_srq *srq;
};

struct rdrv {
	struct fakedrv *bus;	/* BAR2, guest RAM, admin queue, EQ 0 */
	void *ctx;		/* the platform's, for its own use */
	u8 id;			/* 1, 2, ...: in the MAC and addresses */
	u8 mac[6];
	u8 ip4[4];
	u8 ip6[16];
	struct rnic_rdma_caps caps;
	u32 dbp;		/* the kernel doorbell page */
	u32 kick;
	u16 kick_pi;
	u32 eqn;
	u64 eq_base;
	u16 eq_ci;
	u8 eq_arm_seq;
	bool eq_armed;
	u32 pdn;		/* privileged */
	u32 dma_key;
	u64 ah_pages;		/* RDRV_AH_ENTRIES / 32 pages */
	u8 path_mtu;		/* RC paths (RNIC_PMTU_*); 0: 1024 */
	void *wire;		/* the platform's in-process wire */
};

/* Addresses from @id: MAC 02:00:00:00:00:<id>, 10.0.0.<id>, fd00::<id> */
void rdrv_init(struct rdrv *x, u8 id, struct fakedrv *bus, void *ctx);
/*
 * After an enable with ABI 2: caps, a doorbell page, a completion EQ, a
 * privileged PD with a DMA MR, the GID table and the AH table. 0 or -1.
 */
int rdrv_setup(struct rdrv *x);

int rdrv_cmd(struct rdrv *x, void *cmd, union rnic_aq_resp *resp);
u64 rdrv_alloc(struct rdrv *x, size_t size, size_t align);
void *rdrv_ram(struct rdrv *x, u64 gpa);
u64 rdrv_rctr(struct rdrv *x, enum rnic_rdma_stat s);
u64 rdrv_pctr(struct rdrv *x, enum rnic_port_stat s);
u64 rdrv_qpctr(struct rdrv *x, u32 qpn, enum rnic_qp_stat s);

/* Doorbell pages */
int rdrv_alloc_db_page(struct rdrv *x, u32 flags, u32 *page);
void rdrv_slot_write(struct rdrv *x, u32 page, u16 db_off, u32 val);
/* Append slot @db_off / 4 to @page's kick ring (kick_pi follows) */
void rdrv_kick_add(struct rdrv *x, u32 page, u16 db_off);
void rdrv_kick(struct rdrv *x);	/* BAR0 doorbell with the page's value */
/* Slot write + kick entry + kick, on the kernel page */
void rdrv_ring(struct rdrv *x, u16 db_off, u32 val);

/* Events */
bool rdrv_eq0_next(struct rdrv *x, struct rnic_eqe *e);
unsigned int rdrv_eq0_count(struct rdrv *x, u8 type, struct rnic_eqe *last);
bool rdrv_ceq_next(struct rdrv *x, struct rnic_eqe *e);
void rdrv_ceq_arm(struct rdrv *x);

/* CQs */
int rdrv_cq_create(struct rdrv *x, u8 log2, struct rdrv_cq *cq);
int rdrv_cq_destroy(struct rdrv *x, struct rdrv_cq *cq);
bool rdrv_cq_poll(struct rdrv *x, struct rdrv_cq *cq, struct rnic_rdma_cqe *cqe);
void rdrv_cq_arm(struct rdrv *x, struct rdrv_cq *cq, bool solicited);
void rdrv_cq_arm_write(struct rdrv *x, struct rdrv_cq *cq, bool solicited);
u32 rdrv_cq_slot(const struct rdrv_cq *cq);

/* PD, MR */
int rdrv_pd_alloc(struct rdrv *x, bool priv, u32 *pdn);
int rdrv_mr_pbl(struct rdrv *x, u32 pdn, u8 access, u64 iova, u64 len,
	      u64 buf, u32 *key);

/* SRQ */
int rdrv_srq_create(struct rdrv *x, u32 pdn, u8 log2, u8 rqe_log2, u32 limit,
		  struct rdrv_srq *srq);
void rdrv_srq_post(struct rdrv *x, struct rdrv_srq *srq, u16 slot,
		 const struct rnic_data_sge *sge, unsigned int n);
/* the same; without @ring only the slot is written (RNIC_RDMA_CAP_RQ_PEEK) */
void rdrv_srq_post_ring(struct rdrv *x, struct rdrv_srq *srq, u16 slot,
			const struct rnic_data_sge *sge, unsigned int n,
			bool ring);

/* QPs */
int rdrv_qp_create(struct rdrv *x, u8 type, u32 pdn, struct rdrv_cq *scq,
		 struct rdrv_cq *rcq, struct rdrv_srq *srq, u8 sq_log2, u8 sqe_log2,
		 u8 rq_log2, u8 rqe_log2, struct rdrv_qp *qp);
int rdrv_qp_modify(struct rdrv *x, struct rnic_aq_modify_qp *m, u8 *state);
int rdrv_qp_destroy(struct rdrv *x, struct rdrv_qp *qp);
int rdrv_qp_query(struct rdrv *x, u32 qpn, struct rnic_qp_query *q);
/* RESET -> INIT -> RTR -> RTS for a UD or GSI QP */
int rdrv_ud_up(struct rdrv *x, struct rdrv_qp *qp, u32 qkey);
int rdrv_qp_state(struct rdrv *x, struct rdrv_qp *qp, u8 state);
/* Write a send WQE (sqe_log2 bytes) and ring */
void rdrv_post_send(struct rdrv *x, struct rdrv_qp *qp, const void *wqe, bool ring);
void rdrv_post_recv(struct rdrv *x, struct rdrv_qp *qp,
		  const struct rnic_data_sge *sge, unsigned int n, bool ring);

/* A UD send WQE: one SGE (or inline when @inl) */
void rdrv_ud_wqe(void *wqe, u8 opcode, u8 flags, u32 ah, u32 rqpn, u32 qkey,
	       u64 addr, u32 len, u32 lkey);

/* Header templates from @src to @dst */
void rdrv_tmpl(const struct rdrv *src, const struct rdrv *dst, u8 net, u16 vlan,
	     struct rnic_hdr_tmpl *t);
/* AH table entry @idx of PD @pdn */
void rdrv_ah_set(struct rdrv *x, u32 idx, u32 pdn,
	       const struct rnic_hdr_tmpl *t);
void rdrv_ah_clear(struct rdrv *x, u32 idx);

/*
 * An RC send WQE with one SGE in MR space (none for @len 0 but an
 * atomic): its header and first SGE, the 64 bytes it writes.
 */
void rdrv_rc_wqe(void *wqe, u8 opcode, u8 flags, u32 len, u64 addr, u32 lkey,
	       u64 raddr, u32 rkey);

/* RESET -> INIT -> RTR -> RTS for an RC QP whose peer is @peer_qpn on @peer */
int rdrv_rc_connect(struct rdrv *x, struct rdrv_qp *qp, const struct rdrv *peer,
		  u32 peer_qpn, u8 net);
/* The same, stopping at @upto (RNIC_QPS_RTR or RNIC_QPS_RTS) */
int rdrv_rc_connect_upto(struct rdrv *x, struct rdrv_qp *qp, const struct rdrv *peer,
		       u32 peer_qpn, u8 net, u8 upto);

/*
 * The same with the path template @t (copied), the destination QPN and
 * both PSNs given: path MTU x->path_mtu, rights and limits as above
 */
int rdrv_rc_connect_path(struct rdrv *x, struct rdrv_qp *qp,
		       const struct rnic_hdr_tmpl *t, u32 dest_qpn, u32 rq_psn,
		       u32 sq_psn, u8 upto);

#endif /* RNICSIM_FAKEDRV_RDMA_H */
