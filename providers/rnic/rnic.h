/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librnic: the rdma-core provider of the rnic RoCE NIC, kernel bypass.
 *
 * The process allocates its rings, the kernel pins them (ib_umem) and gives
 * the NIC their page lists; WQEs, CQ consumption, arms and doorbells are
 * written from here, into the context's own mmapped doorbell pages. The
 * kernel is entered to create and destroy objects, to wait for completion
 * events and, where the kick register cannot be mapped, to kick.
 * Formats: include/rnic_hw_rdma.h; the ABI with rnic.ko:
 * include/uapi/rdma/rnic-abi.h; see Documentation/rnic-provider.rst.
 */
#ifndef RNIC_PROVIDER_H
#define RNIC_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>

#include "rnic_hw_compat.h"

#include <ccan/list.h>
#include <infiniband/driver.h>
#include <rdma/rnic-abi.h>

/*
 * The provider shares these structs with Debian 12's libibverbs 44.0: built
 * against 56.1's verbs.h they would be longer (scripts/rdma-core.sh).
 */
static_assert(sizeof(struct verbs_qp) == 368, "verbs_qp is not 44.0's");
static_assert(sizeof(struct ibv_port_attr) == 52, "ibv_port_attr is not 44.0's");

/* The QPN the provider writes into CQEs of a QP that is gone (rnic_cq.c) */
#define RNIC_CQE_QPN_SCRUBBED	0xffffffffU

struct rnic_device {
	struct verbs_device ibv_dev;
};

/*
 * One doorbell page of the context, mapped once and kept until the
 * context goes: the kernel names a page by its mmap key, the same key for
 * every object with slots in it. The kick ring has one writer at a time.
 */
struct rnic_dbp {
	struct list_node entry;
	uint64_t key;
	struct rnic_db_page *va;
	pthread_spinlock_t lock;
	/* kick entries written, free-running (RNIC_DBP_KICK_PI) */
	uint16_t kick_pi;
};

struct rnic_qp;

/* Limits from the device, at context creation (query_device) */
struct rnic_limits {
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cqe;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	bool atomics;
};

struct rnic_context {
	struct verbs_context ibv_ctx;
	uint32_t flags;			/* RNIC_UCTX_F_* */
	uint32_t kick;			/* the kick register's value */
	uint32_t db_page_size;
	uint8_t max_sqe_log2;
	uint8_t max_rqe_log2;
	uint16_t max_inline;
	size_t page_size;		/* the host's, for ring allocation */
	void *kick_page;		/* with RNIC_UCTX_F_KICK_MMAP */
	void *kick_reg;
	struct rnic_limits lim;

	pthread_mutex_t dbp_mutex;
	struct list_head dbps;

	/* QPN -> QP for poll_cq: two levels, lookups lock-free under the CQ lock */
	pthread_mutex_t qp_mutex;
	struct rnic_qp **qp_table[1 << 12];
};

struct rnic_pd {
	struct ibv_pd ibv_pd;
};

struct rnic_ah {
	struct ibv_ah ibv_ah;
	uint32_t idx;			/* the device's AH table index */
};

struct rnic_cq {
	struct ibv_cq ibv_cq;
	pthread_spinlock_t lock;
	struct rnic_rdma_cqe *ring;
	size_t ring_bytes;
	uint8_t log2_depth;
	uint16_t ci;			/* CQEs consumed, free-running */
	/* the last arm, repeated by every slot write (rnic_cq.c) */
	bool armed;
	bool arm_solicited;
	uint8_t arm_seq;
	uint32_t cqn;
	struct rnic_dbp *dbp;
	uint16_t db_off;
	uint64_t bad_cqes;		/* dropped as not well-formed */
};

/* A send or receive queue of a QP */
struct rnic_wq {
	pthread_spinlock_t lock;
	void *ring;
	size_t ring_bytes;
	uint8_t log2_depth;
	uint8_t wqe_log2;
	uint16_t pi;			/* WQEs posted, free-running */
	uint16_t ci;			/* WQEs completed, free-running */
	uint64_t *wrid;
	uint32_t *len;			/* receive: bytes each WQE offers */
	struct rnic_dbp *dbp;
	uint16_t db_off;
	uint32_t max_sge;		/* what the provider granted */
	uint32_t max_inline;
};

struct rnic_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	void *wqes;
	size_t wqes_bytes;
	__le16 *idx;
	size_t idx_bytes;
	uint8_t log2_depth;
	uint8_t rqe_log2;
	uint16_t pi;			/* index ring entries written */
	uint32_t max_sge;
	uint32_t srqn;
	uint64_t *wrid;
	uint32_t *len;
	uint8_t *busy;			/* slot holds a posted WQE */
	uint16_t *free;			/* stack of free slots */
	uint32_t nfree;
	uint32_t bad_drops;		/* refused dropped-slot reports */
	struct rnic_dbp *dbp;
	uint16_t db_off;
};

struct rnic_qp {
	struct verbs_qp vqp;
	struct rnic_wq sq;
	struct rnic_wq rq;
	struct rnic_srq *srq;
	enum ibv_qp_state state;	/* as the provider last set it */
	bool sig_all;
	uint32_t send_cqn;
	uint32_t recv_cqn;
};

static inline struct rnic_context *to_rctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct rnic_context, ibv_ctx.context);
}

static inline struct rnic_cq *to_rcq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct rnic_cq, ibv_cq);
}

static inline struct rnic_qp *to_rqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct rnic_qp, vqp.qp);
}

static inline struct rnic_srq *to_rsrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct rnic_srq, vsrq.srq);
}

static inline struct rnic_ah *to_rah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct rnic_ah, ibv_ah);
}

/* rnic_db.c */
struct rnic_dbp *rnic_dbp_get(struct rnic_context *ctx, uint64_t key);
void rnic_dbp_unmap_all(struct rnic_context *ctx);
bool rnic_db_off_ok(uint16_t off);
bool rnic_db_ring(struct rnic_context *ctx, struct rnic_dbp *dbp,
		  uint16_t off, uint32_t val);
void rnic_db_write(struct rnic_dbp *dbp, uint16_t off, uint32_t val);
bool rnic_db_recv(struct rnic_context *ctx, struct rnic_dbp *dbp,
		  uint16_t off, uint32_t val, bool quiet);
int rnic_kick_qp(struct ibv_qp *ibqp, bool recv);
int rnic_kick_srq(struct ibv_srq *ibsrq);
void *rnic_ring_alloc(struct rnic_context *ctx, size_t bytes, size_t *alloc);
void rnic_ring_free(void *ring, size_t alloc);

/* rnic_verbs.c */
int rnic_query_device(struct ibv_context *ibctx,
		      const struct ibv_query_device_ex_input *input,
		      struct ibv_device_attr_ex *attr, size_t attr_size);
int rnic_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *rnic_alloc_pd(struct ibv_context *ibctx);
int rnic_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *rnic_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int rnic_dereg_mr(struct verbs_mr *vmr);
struct ibv_ah *rnic_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int rnic_destroy_ah(struct ibv_ah *ah);
struct ibv_srq *rnic_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
int rnic_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int rnic_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int rnic_destroy_srq(struct ibv_srq *srq);

/* rnic_qp.c */
struct ibv_qp *rnic_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int rnic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int rnic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct ibv_qp_init_attr *init);
int rnic_destroy_qp(struct ibv_qp *qp);
struct rnic_qp *rnic_qp_lookup(struct rnic_context *ctx, uint32_t qpn);

/* rnic_cq.c */
struct ibv_cq *rnic_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel, int vector);
int rnic_destroy_cq(struct ibv_cq *cq);
int rnic_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
int rnic_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int rnic_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void rnic_cq_event(struct ibv_cq *cq);
void rnic_cq_scrub(struct rnic_cq *cq, uint32_t qpn, struct rnic_srq *srq);

/* rnic_post.c */
int rnic_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int rnic_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int rnic_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
void rnic_srq_slot_free(struct rnic_srq *srq, uint16_t slot);
int rnic_srq_dropped(struct rnic_srq *srq, uint32_t slot);

#endif /* RNIC_PROVIDER_H */
