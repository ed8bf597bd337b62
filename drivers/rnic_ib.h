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
 */
struct rnic_ibdev {
	struct ib_device ibdev;
	struct rnic_dev *rdev;
	struct xarray pd_xa;
	u32 next_pdn;
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

/*
 * Placeholders for the datapath (issue 5): ib_core allocates QPs and CQs
 * with the size the driver declares, so the types must exist even while
 * create_qp and create_cq refuse.
 */
struct rnic_qp {
	struct ib_qp ibqp;
};

struct rnic_ib_cq {
	struct ib_cq ibcq;
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
