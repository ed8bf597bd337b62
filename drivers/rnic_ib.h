/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic: the RDMA side, as ib_core sees it.
 *
 * The limits below are what query_device promises kernel ULPs. The device
 * has no verbs objects of its own (it moves frames; the driver runs the IB
 * transport), so these are the driver's limits, chosen to stay well inside
 * what the datapath (issue 5) keeps per object; it must enforce them.
 */
#ifndef _RNIC_IB_H_
#define _RNIC_IB_H_

#include <linux/atomic.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

struct rnic_dev;
struct rnic_aq_set_port;
struct rnic_params;

#define RNIC_IB_NODE_DESC		"rnic RoCE NIC"
#define RNIC_IB_PORT			1

#define RNIC_IB_MAX_PD			4096
#define RNIC_IB_MAX_QP			4096
#define RNIC_IB_MAX_QP_WR		4096
#define RNIC_IB_MAX_SGE			16
#define RNIC_IB_MAX_CQ			4096
#define RNIC_IB_MAX_CQE			16383
#define RNIC_IB_MAX_MR			65536
#define RNIC_IB_MAX_MR_SIZE		SZ_1T
#define RNIC_IB_MAX_FRWR_PAGES		512
#define RNIC_IB_MAX_RD_ATOM		16
#define RNIC_IB_MAX_AH			4096
#define RNIC_IB_MAX_SRQ			1024
#define RNIC_IB_MAX_INLINE		256
/* 4.096 us * 2^15: ~134 ms, ample for a transport run in software */
#define RNIC_IB_ACK_DELAY		15
/* IB's largest message */
#define RNIC_IB_MAX_MSG_SZ		0x80000000U

#define RNIC_IB_GID_TBL_LEN		128
#define RNIC_IB_PKEY_TBL_LEN		1

/**
 * struct rnic_ibdev - the ib_device of one rnic function
 * @ibdev: ib_core's device; must stay first (ib_alloc_device)
 * @rdev: the PCI function it belongs to
 * @pd_xa: protection domains by PD number
 * @next_pdn: where the cyclic PD number allocation goes on
 * @qp_xa: queue pairs by QPN (rnic_verbs.c; the GSI QP at 1)
 * @next_qpn: where the cyclic QPN allocation goes on
 * @mr_xa: memory regions by key index (rnic_mr.c: key >> 8)
 * @next_mr: where the cyclic key index allocation goes on
 * @num_qp: QPs that exist, against RNIC_IB_MAX_QP
 * @num_cq: CQs, against RNIC_IB_MAX_CQ
 * @num_srq: SRQs, against RNIC_IB_MAX_SRQ
 * @num_ah: AHs, against RNIC_IB_MAX_AH
 */
struct rnic_ibdev {
	struct ib_device ibdev;
	struct rnic_dev *rdev;
	struct xarray pd_xa;
	u32 next_pdn;
	struct xarray qp_xa;
	u32 next_qpn;
	struct xarray mr_xa;
	u32 next_mr;
	atomic_t num_qp;
	atomic_t num_cq;
	atomic_t num_srq;
	atomic_t num_ah;
};

/**
 * struct rnic_pd - a protection domain
 * @ibpd: ib_core's PD; must stay first (INIT_RDMA_OBJ_SIZE)
 * @pdn: its number, unique on the device while it lives
 */
struct rnic_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct rnic_ibdev *to_ribdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rnic_ibdev, ibdev);
}

static inline struct rnic_dev *to_rdev(struct ib_device *ibdev)
{
	return to_ribdev(ibdev)->rdev;
}

static inline struct rnic_pd *to_rpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct rnic_pd, ibpd);
}

/* Datapath verbs: rnic_verbs.c */
int rnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int rnic_destroy_ah(struct ib_ah *ibah, u32 flags);
int rnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs);
int rnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int rnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int rnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int rnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int rnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int rnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int rnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int rnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int rnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int rnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int rnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int rnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int rnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int rnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int rnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* Memory regions: rnic_mr.c */
struct ib_mr *rnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *rnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int rnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int rnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *rnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata);

#if IS_ENABLED(CONFIG_KUNIT)
u32 rnic_ib_core_cap_flags(u8 roce_mode);
void rnic_ib_speed_width(u32 speed_mbps, u16 *speed, u8 *width);
enum ib_mtu rnic_ib_active_mtu(unsigned int netdev_mtu);
__be64 rnic_ib_guid_from_mac(const u8 *mac);
u64 rnic_ib_fw_ver(const char *version);
void rnic_ib_build_set_port(struct rnic_aq_set_port *cmd,
			    const struct rnic_params *p, u32 caps,
			    u32 cur_flags);
#endif

#endif /* _RNIC_IB_H_ */
