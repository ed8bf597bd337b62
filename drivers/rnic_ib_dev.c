// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ABI 2.0: the device and the ib_device.
 *
 * Setup, in order: the device's limits (QUERY_RDMA_CAPS, each checked
 * against what the driver can address), the RoCE port settings
 * (SET_PORT), the kernel's doorbell page, one completion EQ per spare
 * MSI-X vector, the AH table, then the ib_device, bound to the netdev so
 * that ib_core fills the GID table, which add_gid/del_gid mirror into the
 * device. Teardown undoes it in mirror order; what the device may still
 * read until a reset (the AH table pages, memory whose DESTROY failed) is
 * freed by rnic_ib_free() after rnic_remove_dev() reset the device.
 *
 * Asynchronous events arrive on event queue 0, whose work (rnic_eq.c)
 * hands the 2.0 types to rnic_ib_event(): the object is looked up by its
 * id with a reference, so a concurrent destroy waits for the handler.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/log2.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <uapi/rdma/rnic-abi.h>

#include "rnic_compat.h"
#include "rnic_ib.h"
#include "rnic_param.h"
#include "rnic_verbs.h"

/* ------------------------------------------------------------------------
 * Device limits
 */

/*
 * Every QP takes two doorbell slots (one with an SRQ), every CQ and SRQ
 * one, and the kernel has at most RNIC_IB_MAX_DBPS pages of
 * RNIC_DBP_SLOTS: limits the slots cannot hold are lowered in proportion,
 * so that a ULP can reach every limit the device attributes advertise.
 */
static void rnic_ib_fit_db_slots(struct rnic_ibdev *ibd)
{
	struct rnic_ib_caps *c = &ibd->caps;
	u64 have = (u64)min_t(u32, c->num_db_pages, RNIC_IB_MAX_DBPS) *
		   RNIC_DBP_SLOTS;
	u64 need = 2ULL * c->max_qp + c->max_cq + c->max_srq;

	if (need <= have)
		return;
	ibdev_info(&ibd->ibdev, "%llu doorbell slots for %u QPs, %u CQs and %u SRQs (%llu slots): limits lowered to fit\n",
		   have, c->max_qp, c->max_cq, c->max_srq, need);
	c->max_qp = max_t(u32, div64_u64((u64)c->max_qp * have, need), 1);
	c->max_cq = max_t(u32, div64_u64((u64)c->max_cq * have, need), 2);
	c->max_srq = div64_u64((u64)c->max_srq * have, need);
}

/* Every value checked; the driver offers at most what it can address */
static int rnic_ib_read_caps(struct rnic_ibdev *ibd)
{
	struct rnic_ib_caps *c = &ibd->caps;
	struct rnic_rdma_caps raw;
	int err;

	err = rnic_ib_cmd_query(ibd, RNIC_AQ_QUERY_RDMA_CAPS, 0, 0, &raw,
				sizeof(raw));
	if (err) {
		ibdev_err(&ibd->ibdev, "QUERY_RDMA_CAPS failed: %d\n", err);
		return err;
	}
	c->flags = le32_to_cpu(raw.flags) & RNIC_RDMA_CAP_ALL;
	c->max_qp = le32_to_cpu(raw.max_qp);
	c->max_cq = le32_to_cpu(raw.max_cq);
	c->max_srq = le32_to_cpu(raw.max_srq);
	c->max_mr = le32_to_cpu(raw.max_mr);
	c->max_pd = le32_to_cpu(raw.max_pd);
	c->max_ah = min_t(u32, le32_to_cpu(raw.max_ah), RNIC_IB_MAX_AH);
	c->max_mr_pages = min_t(u32, le32_to_cpu(raw.max_mr_pages),
				RNIC_IB_MAX_FRWR_PAGES);
	c->max_pbl_pages = min_t(u32, le32_to_cpu(raw.max_mr_pages),
				 RNIC_IB_MAX_PBL_PAGES);
	c->max_mr_size = le64_to_cpu(raw.max_mr_size);
	c->page_size_cap = le64_to_cpu(raw.page_size_cap) &
			   GENMASK_ULL(RNIC_PAGE_LOG2_MAX, RNIC_PAGE_LOG2_MIN);
	c->max_msg_size = le32_to_cpu(raw.max_msg_size);
	c->max_eq = le16_to_cpu(raw.max_eq);
	c->num_db_pages = le16_to_cpu(raw.num_db_pages);
	c->db_base = le32_to_cpu(raw.db_base);
	c->db_page_log2 = raw.db_page_log2;
	c->max_wq_log2 = min_t(u8, raw.max_wq_log2, RNIC_IB_MAX_WQ_LOG2);
	c->max_cq_log2 = min_t(u8, raw.max_cq_log2, RNIC_IB_MAX_WQ_LOG2);
	c->max_srq_log2 = min_t(u8, raw.max_srq_log2, RNIC_IB_MAX_WQ_LOG2);
	c->max_eq_log2 = raw.max_eq_log2;
	c->max_sqe_log2 = min_t(u8, raw.max_sqe_log2, RNIC_SQE_LOG2_MAX);
	c->max_rqe_log2 = min_t(u8, raw.max_rqe_log2, RNIC_RQE_LOG2_MAX);
	c->max_send_sge = min_t(u8, raw.max_send_sge,
				rnic_sqe_max_sge(c->max_sqe_log2));
	c->max_recv_sge = min_t(u8, raw.max_recv_sge,
				rnic_rqe_max_sge(c->max_rqe_log2));
	c->max_srq_sge = min_t(u8, raw.max_srq_sge,
			       rnic_rqe_max_sge(c->max_rqe_log2));
	c->max_inline = min_t(u16, le16_to_cpu(raw.max_inline),
			      rnic_sqe_max_inline(c->max_sqe_log2));
	c->max_qp_rd_atom = raw.max_qp_rd_atom;
	c->max_qp_dest_rd_atom = raw.max_qp_dest_rd_atom;
	c->local_ca_ack_delay = min_t(u8, raw.local_ca_ack_delay, 31);
	c->max_pmtu = raw.max_pmtu;
	c->gid_tbl_len = min_t(u16, le16_to_cpu(raw.gid_tbl_len),
			       RNIC_IB_GID_TBL_LEN);
	c->pkey_tbl_len = le16_to_cpu(raw.pkey_tbl_len);
	c->num_rdma_stats = le16_to_cpu(raw.num_rdma_stats);

	if (!(c->flags & RNIC_RDMA_CAP_RC) || !(c->flags & RNIC_RDMA_CAP_UD) ||
	    !(c->flags & RNIC_RDMA_CAP_GSI) || !c->max_qp || !c->max_cq ||
	    !c->max_pd || !c->max_mr || c->max_ah < RNIC_AH_PER_PAGE ||
	    !c->max_eq || !c->num_db_pages ||
	    c->db_page_log2 != ilog2(RNIC_DBP_SIZE) ||
	    c->db_base < RNIC_SHM_MIN_SIZE ||
	    c->max_wq_log2 < 2 || c->max_cq_log2 < 2 || c->max_eq_log2 < 2 ||
	    c->max_sqe_log2 < RNIC_SQE_LOG2_MIN ||
	    c->max_rqe_log2 < RNIC_RQE_LOG2_MIN || !c->max_send_sge ||
	    !c->max_recv_sge || !c->gid_tbl_len || !c->pkey_tbl_len ||
	    !rnic_pmtu_bytes(c->max_pmtu) ||
	    !(c->page_size_cap & BIT_ULL(PAGE_SHIFT))) {
		ibdev_err(&ibd->ibdev, "device reports unusable ABI 2.0 limits (flags %#x, %u QPs, %u CQs, %u AHs, %u EQs, %u doorbell pages of 2^%u at %#x, WQ 2^%u, CQ 2^%u, SQE 2^%u, RQE 2^%u, page sizes %#llx, PMTU %u)\n",
			  c->flags, c->max_qp, c->max_cq, c->max_ah, c->max_eq,
			  c->num_db_pages, c->db_page_log2, c->db_base,
			  c->max_wq_log2, c->max_cq_log2, c->max_sqe_log2,
			  c->max_rqe_log2, c->page_size_cap, c->max_pmtu);
		return -EINVAL;
	}
	if (!(c->flags & RNIC_RDMA_CAP_SRQ))
		c->max_srq = 0;
	rnic_ib_fit_db_slots(ibd);
	return 0;
}

/* The RoCE settings: the UDP port every v2 template carries, and PFC */
static int rnic_ib_config_port(struct rnic_ibdev *ibd)
{
	struct rnic_dev *rdev = ibd->rdev;
	struct rnic_aq_set_port cmd;
	struct rnic_port_attr attr;
	int err;

	rtnl_lock();
	err = rnic_cmd_query_port(rdev, &attr);
	if (!err) {
		rnic_ib_build_set_port(&cmd, &rnic_params, rdev->caps,
				       le32_to_cpu(attr.flags));
		err = rnic_cmd_set_port(rdev, &cmd);
	}
	rtnl_unlock();
	if (err)
		ibdev_err(&ibd->ibdev, "cannot program the RoCE port settings: %d\n",
			  err);
	return err;
}

/* ------------------------------------------------------------------------
 * Device, port and GID verbs
 */

/* The device's own version string; query_device's fw_ver encodes it. */
static void rnic_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s",
		 to_ibdev(ibdev)->rdev->model_version);
}

static enum rdma_link_layer rnic_ib_get_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int rnic_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	struct rnic_ibdev *ibd = to_ibdev(ibdev);

	immutable->core_cap_flags = rnic_ib_core_cap_flags(rnic_params.roce_mode);
	immutable->gid_tbl_len = ibd->caps.gid_tbl_len;
	immutable->pkey_tbl_len = ibd->caps.pkey_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int rnic_ib_query_device(struct ib_device *ibdev,
				struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	struct rnic_ibdev *ibd = to_ibdev(ibdev);
	const struct rnic_ib_caps *c = &ibd->caps;
	struct rnic_dev *rdev = ibd->rdev;

	/* no driver data in ABI 1; a response buffer is left as it is */
	if (udata && rnic_ib_udata_in(udata, NULL, 0))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = rnic_ib_fw_ver(rdev->model_version);
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = RNIC_PCI_VENDOR_ID;
	attr->vendor_part_id = RNIC_PCI_DEVICE_ID;
	attr->hw_ver = rdev->pdev->revision;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN;
	if (c->flags & RNIC_RDMA_CAP_REG_MR)
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->page_size_cap = c->page_size_cap;
	attr->max_mr_size = c->max_mr_size;
	attr->max_qp = c->max_qp;
	attr->max_qp_wr = 1U << c->max_wq_log2;
	attr->max_send_sge = c->max_send_sge;
	attr->max_recv_sge = c->max_recv_sge;
	attr->max_sge_rd = c->max_send_sge;
	attr->max_cq = c->max_cq;
	attr->max_cqe = (1U << c->max_cq_log2) - 1;
	attr->max_mr = c->max_mr;
	attr->max_pd = c->max_pd;
	attr->max_qp_rd_atom = c->max_qp_dest_rd_atom;
	attr->max_qp_init_rd_atom = c->max_qp_rd_atom;
	attr->max_res_rd_atom = c->max_qp * c->max_qp_dest_rd_atom;
	/* atomic with respect to the device's own atomics */
	attr->atomic_cap = (c->flags & RNIC_RDMA_CAP_ATOMIC) ?
			   IB_ATOMIC_HCA : IB_ATOMIC_NONE;
	attr->max_ah = ibd->num_ah - 1;
	attr->max_srq = c->max_srq;
	attr->max_srq_wr = c->max_srq ? 1U << c->max_srq_log2 : 0;
	attr->max_srq_sge = c->max_srq_sge;
	attr->max_pkeys = c->pkey_tbl_len;
	attr->local_ca_ack_delay = c->local_ca_ack_delay;
	attr->max_fast_reg_page_list_len = c->max_mr_pages;
	attr->max_pi_fast_reg_page_list_len = 0;
	if (c->flags & RNIC_RDMA_CAP_CQ_MODERATION) {
		/* the command takes any le16 count and period */
		attr->cq_caps.max_cq_moderation_count = U16_MAX;
		attr->cq_caps.max_cq_moderation_period = U16_MAX;
	}
	return 0;
}

static enum ib_mtu rnic_ib_ib_mtu(u8 pmtu)
{
	return ib_mtu_int_to_enum(rnic_pmtu_bytes(pmtu));
}

static int rnic_ib_query_port(struct ib_device *ibdev, u32 port,
			      struct ib_port_attr *attr)
{
	struct rnic_ibdev *ibd = to_ibdev(ibdev);
	struct rnic_dev *rdev = ibd->rdev;
	struct net_device *ndev = rdev->netdev;
	bool up = netif_running(ndev) && netif_carrier_ok(ndev);

	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = rnic_ib_ib_mtu(ibd->caps.max_pmtu);
	attr->active_mtu = min(rnic_ib_active_mtu(READ_ONCE(ndev->mtu)),
			       attr->max_mtu);
	rnic_ib_speed_width(READ_ONCE(rdev->speed_mbps), &attr->active_speed,
			    &attr->active_width);
	attr->gid_tbl_len = ibd->caps.gid_tbl_len;
	attr->pkey_tbl_len = ibd->caps.pkey_tbl_len;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_msg_sz = ibd->caps.max_msg_size;
	attr->max_vl_num = 1;
	return 0;
}

/* The P_Key table is the device's; only entry 0 is ever set (0xffff) */
static int rnic_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			      u16 *pkey)
{
	if (index >= to_ibdev(ibdev)->caps.pkey_tbl_len)
		return -EINVAL;
	*pkey = index ? 0 : IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int rnic_ib_modify_gid(struct rnic_ibdev *ibd, const struct ib_gid_attr *attr,
			      bool valid)
{
	struct rnic_aq_modify_gid c = {};
	u16 vlan_id = 0xffff;
	int err;

	if (attr->index >= ibd->caps.gid_tbl_len)
		return -EINVAL;
	c.hdr.opcode = RNIC_AQ_MODIFY_GID;
	c.entry.index = cpu_to_le16(attr->index);
	if (valid) {
		switch (attr->gid_type) {
		case IB_GID_TYPE_ROCE:
			c.entry.type = RNIC_GID_TYPE_ROCE_V1;
			break;
		case IB_GID_TYPE_ROCE_UDP_ENCAP:
			c.entry.type = RNIC_GID_TYPE_ROCE_V2;
			break;
		default:
			return -EINVAL;
		}
		err = rdma_read_gid_l2_fields(attr, &vlan_id, NULL);
		if (err)
			return err;
		c.entry.flags = RNIC_GID_F_VALID;
		/* a priority-tagged or untagged netdev matches untagged frames */
		if (vlan_id && vlan_id < VLAN_N_VID - 1) {
			c.entry.flags |= RNIC_GID_F_VLAN;
			c.entry.vlan_id = cpu_to_le16(vlan_id);
		}
		memcpy(c.entry.gid, attr->gid.raw, RNIC_GID_LEN);
	}
	err = rnic_ib_cmd(ibd, &c, sizeof(c), NULL);
	if (err)
		ibdev_err(&ibd->ibdev, "%s GID %u (%pI6) in the device failed: %d\n",
			  valid ? "adding" : "deleting", attr->index,
			  attr->gid.raw, err);
	return err;
}

static int rnic_ib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	return rnic_ib_modify_gid(to_ibdev(attr->device), attr, true);
}

static int rnic_ib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return rnic_ib_modify_gid(to_ibdev(attr->device), attr, false);
}

/* ------------------------------------------------------------------------
 * Counters: the driver's, the device's transport counters, then the device's
 * port counters of RoCE traffic with an "hw_" prefix (the wire's view:
 * frames and bytes per RoCE version, PFC).  The rest of
 * the port counters belong to the Ethernet side (ethtool -S); ib_core
 * answers "rdma statistic" in one netlink message of about a page, which
 * holds some 80 counters, not all of them.
 */

#define RNIC_IB_STAT_DESC(s)		{ .name = #s },
#define RNIC_IB_PORT_STAT_DESC(s)	{ .name = "hw_" #s },
#define RNIC_IB_PORT_STAT_INDEX(s)	RNIC_PORT_STAT_##s,

static const struct rdma_stat_desc rnic_ib_stat_descs[] = {
	RNIC_IB_STATS(RNIC_IB_STAT_DESC)
	RNIC_RDMA_STATS(RNIC_IB_STAT_DESC)
	RNIC_IB_PORT_STATS(RNIC_IB_PORT_STAT_DESC)
};

/* where each hw_ counter is in the device's RNIC_PORT_STATS */
static const u8 rnic_ib_port_stat_index[] = {
	RNIC_IB_PORT_STATS(RNIC_IB_PORT_STAT_INDEX)
};

#define RNIC_IB_RDMA_STATS_AT	RNIC_IB_NUM_STATS
#define RNIC_IB_PORT_STATS_AT	(RNIC_IB_RDMA_STATS_AT + RNIC_NUM_RDMA_STATS)
static_assert(ARRAY_SIZE(rnic_ib_stat_descs) ==
	      RNIC_IB_PORT_STATS_AT + ARRAY_SIZE(rnic_ib_port_stat_index));

static struct rdma_hw_stats *rnic_ib_alloc_hw_port_stats(struct ib_device *ibdev,
							 u32 port)
{
	return rdma_alloc_hw_stats_struct(rnic_ib_stat_descs,
					  ARRAY_SIZE(rnic_ib_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * A device that does not answer leaves its counters at their last values
 * and counts cmd_failures; a device with fewer transport counters than
 * this driver knows (an older 2.x) leaves the rest at 0.
 */
static int rnic_ib_get_hw_stats(struct ib_device *ibdev,
				struct rdma_hw_stats *stats, u32 port,
				int index)
{
	struct rnic_ibdev *ibd = to_ibdev(ibdev);
	unsigned int n = min_t(unsigned int, ibd->caps.num_rdma_stats,
			       RNIC_NUM_RDMA_STATS);
	u64 *port_vals;
	__le64 *raw;
	unsigned int i;

	for (i = 0; i < RNIC_IB_NUM_STATS; i++)
		stats->value[i] = atomic64_read(&ibd->stats[i]);
	raw = kcalloc(RNIC_NUM_RDMA_STATS, sizeof(*raw), GFP_KERNEL);
	if (raw && n && !rnic_ib_cmd_query(ibd, RNIC_AQ_QUERY_RDMA_STATS, 0,
					   RNIC_RDMA_STATS_SCOPE_PORT, raw,
					   n * sizeof(*raw)))
		for (i = 0; i < n; i++)
			stats->value[RNIC_IB_RDMA_STATS_AT + i] =
				le64_to_cpu(raw[i]);
	kfree(raw);
	port_vals = kcalloc(RNIC_NUM_PORT_STATS, sizeof(*port_vals), GFP_KERNEL);
	if (port_vals) {
		if (rnic_cmd_query_stats(ibd->rdev, RNIC_STATS_SCOPE_PORT, 0,
					 port_vals, RNIC_NUM_PORT_STATS))
			rnic_ib_stat_inc(ibd, RNIC_IB_STAT_cmd_failures);
		else
			for (i = 0; i < ARRAY_SIZE(rnic_ib_port_stat_index); i++)
				stats->value[RNIC_IB_PORT_STATS_AT + i] =
					port_vals[rnic_ib_port_stat_index[i]];
		kfree(port_vals);
	}
	return stats->num_counters;
}

static const struct ib_device_ops rnic_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = RNIC_UVERBS_ABI_VERSION,

	.add_gid = rnic_ib_add_gid,
	.alloc_hw_port_stats = rnic_ib_alloc_hw_port_stats,
	.alloc_mr = rnic_ib_alloc_mr,
	.alloc_pd = rnic_ib_alloc_pd,
	.alloc_ucontext = rnic_ib_alloc_ucontext,
	.create_ah = rnic_ib_create_ah,
#ifdef RNIC_HAVE_CREATE_CQ_ATTRS
	.create_cq = rnic_ib_create_cq,
#else
	/* before 6.11 create_cq gets the caller's udata */
	.create_cq = rnic_ib_create_cq_udata,
#endif
	.create_qp = rnic_ib_create_qp,
	.create_srq = rnic_ib_create_srq,
	/* uverbs offers CREATE_AH only with this op (UAPI_DEF_OBJ_NEEDS_FN) */
	.create_user_ah = rnic_ib_create_ah,
	.dealloc_pd = rnic_ib_dealloc_pd,
	.dealloc_ucontext = rnic_ib_dealloc_ucontext,
	.del_gid = rnic_ib_del_gid,
	.dereg_mr = rnic_ib_dereg_mr,
	.destroy_ah = rnic_ib_destroy_ah,
	.destroy_cq = rnic_ib_destroy_cq,
	.destroy_qp = rnic_ib_destroy_qp,
	.destroy_srq = rnic_ib_destroy_srq,
	.disassociate_ucontext = rnic_ib_disassociate_ucontext,
	.get_dev_fw_str = rnic_ib_get_dev_fw_str,
	.get_dma_mr = rnic_ib_get_dma_mr,
	.get_hw_stats = rnic_ib_get_hw_stats,
	.get_link_layer = rnic_ib_get_link_layer,
	.get_port_immutable = rnic_ib_get_port_immutable,
	.map_mr_sg = rnic_ib_map_mr_sg,
	.mmap = rnic_ib_mmap,
	.mmap_free = rnic_ib_mmap_free,
	.modify_cq = rnic_ib_modify_cq,
	.modify_qp = rnic_ib_modify_qp,
	.modify_srq = rnic_ib_modify_srq,
	.poll_cq = rnic_ib_poll_cq,
	.post_recv = rnic_ib_post_recv,
	.post_send = rnic_ib_post_send,
	.post_srq_recv = rnic_ib_post_srq_recv,
	.query_device = rnic_ib_query_device,
	.query_pkey = rnic_ib_query_pkey,
	.query_port = rnic_ib_query_port,
	.query_qp = rnic_ib_query_qp,
	.query_srq = rnic_ib_query_srq,
	.reg_user_mr = rnic_ib_reg_user_mr,
	.req_notify_cq = rnic_ib_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, rnic_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rnic_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, rnic_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, rnic_ib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, rnic_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rnic_ib_ucontext, ibuc),
};

/* ------------------------------------------------------------------------
 * Asynchronous events
 */

static const enum ib_event_type rnic_ib_qp_events[] = {
	[RNIC_EQE_QP_FATAL] = IB_EVENT_QP_FATAL,
	[RNIC_EQE_QP_REQ_ERR] = IB_EVENT_QP_REQ_ERR,
	[RNIC_EQE_QP_ACCESS_ERR] = IB_EVENT_QP_ACCESS_ERR,
	[RNIC_EQE_COMM_EST] = IB_EVENT_COMM_EST,
	[RNIC_EQE_SQ_DRAINED] = IB_EVENT_SQ_DRAINED,
	[RNIC_EQE_LAST_WQE_REACHED] = IB_EVENT_QP_LAST_WQE_REACHED,
};

static void rnic_ib_qp_event(struct rnic_ibdev *ibd, const struct rnic_eqe *eqe)
{
	struct ib_event ev = { .device = &ibd->ibdev };
	struct rnic_ib_qp *qp;

	qp = rnic_ib_qp_get(ibd, le32_to_cpu(eqe->data));
	if (!qp) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_async_unknown_obj);
		return;
	}
	ev.event = rnic_ib_qp_events[eqe->type];
	ev.element.qp = &qp->ibqp;
	if (eqe->type <= RNIC_EQE_QP_ACCESS_ERR) {
		/* the device moved it to ERR */
		ibdev_warn_ratelimited(&ibd->ibdev, "QP %u: %s (reason %u, info %#llx)\n",
				       qp->ibqp.qp_num, ib_event_msg(ev.event),
				       eqe->reason, le64_to_cpu(eqe->info));
		rnic_ib_qp_dev_err(qp);
	}
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	rnic_ib_qp_put(qp);
}

static void rnic_ib_srq_event(struct rnic_ibdev *ibd, const struct rnic_eqe *eqe)
{
	struct ib_event ev = { .device = &ibd->ibdev };
	struct rnic_ib_srq *srq;

	srq = rnic_ib_srq_get(ibd, le32_to_cpu(eqe->data));
	if (!srq) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_async_unknown_obj);
		return;
	}
	ev.event = eqe->type == RNIC_EQE_SRQ_LIMIT ? IB_EVENT_SRQ_LIMIT_REACHED :
						     IB_EVENT_SRQ_ERR;
	ev.element.srq = &srq->ibsrq;
	if (ev.event == IB_EVENT_SRQ_ERR)
		ibdev_warn_ratelimited(&ibd->ibdev, "SRQ %u in error (reason %u, info %#llx)\n",
				       srq->srqn, eqe->reason,
				       le64_to_cpu(eqe->info));
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	rnic_ib_srq_put(srq);
}

static void rnic_ib_cq_err_event(struct rnic_ibdev *ibd,
				 const struct rnic_eqe *eqe)
{
	struct ib_event ev = { .device = &ibd->ibdev, .event = IB_EVENT_CQ_ERR };
	struct rnic_ib_cq *cq;

	cq = rnic_ib_cq_get(ibd, le32_to_cpu(eqe->data));
	if (!cq) {
		rnic_ib_stat_inc(ibd, RNIC_IB_STAT_async_unknown_obj);
		return;
	}
	ibdev_err_ratelimited(&ibd->ibdev, "CQ %u in error (reason %u, info %#llx); it is stopped\n",
			      cq->cqn, eqe->reason, le64_to_cpu(eqe->info));
	ev.element.cq = &cq->ibcq;
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	rnic_ib_cq_put(cq);
}

/**
 * rnic_ib_event() - handle a 2.0 event from event queue 0
 * @rdev: the device
 * @eqe: the event, its phase checked
 *
 * Context: the event work (process context).
 * Return: true if the event was a 2.0 one (handled), false otherwise.
 */
bool rnic_ib_event(struct rnic_dev *rdev, const struct rnic_eqe *eqe)
{
	struct rnic_ibdev *ibd = rdev->ibd;

	/* DEVICE_FATAL is the device's: rnic_eq.c, then rnic_ib_dev_dead() */
	if (!ibd || eqe->type < RNIC_EQE_QP_FATAL ||
	    eqe->type > RNIC_EQE_CQ_ERROR)
		return false;
	rnic_ib_stat_inc(ibd, RNIC_IB_STAT_async_events);
	/* before registration and during removal: no consumer to tell */
	if (!READ_ONCE(rdev->ib_ready))
		return true;
	switch (eqe->type) {
	case RNIC_EQE_QP_FATAL:
	case RNIC_EQE_QP_REQ_ERR:
	case RNIC_EQE_QP_ACCESS_ERR:
	case RNIC_EQE_COMM_EST:
	case RNIC_EQE_SQ_DRAINED:
	case RNIC_EQE_LAST_WQE_REACHED:
		rnic_ib_qp_event(ibd, eqe);
		return true;
	case RNIC_EQE_SRQ_LIMIT:
	case RNIC_EQE_SRQ_ERR:
		rnic_ib_srq_event(ibd, eqe);
		return true;
	case RNIC_EQE_CQ_ERROR:
		rnic_ib_cq_err_event(ibd, eqe);
		return true;
	default:
		return false;
	}
}

/*
 * After a fatal error: IB_EVENT_DEVICE_FATAL once the ib_device is
 * registered, then the completion handlers the device no longer calls.
 */
static void rnic_ib_fatal_work(struct work_struct *work)
{
	struct rnic_ibdev *ibd = container_of(work, struct rnic_ibdev,
					      fatal_work);
	struct ib_event ev = {
		.device = &ibd->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
		.element.port_num = RNIC_IB_PORT,
	};
	bool first = !ibd->fatal_reported;

	if (first && READ_ONCE(ibd->registered)) {
		ibd->fatal_reported = true;
		ib_dispatch_event(&ev);
	}
	rnic_ib_cqs_fatal_notify(ibd, first);
}

/**
 * rnic_ib_dev_dead() - the device failed for good and is stopped
 * @rdev: the device; it performs no DMA any more (rnic_dev_stop())
 *
 * Nothing completes the WRs it had: from now on poll_cq completes them,
 * and those posted later, as flushed; modify_qp moves QPs to ERR or RESET
 * without the device, which ib_drain_qp() needs; the completion handlers
 * are called from ibd->fatal_work, which also tells the ULPs.
 *
 * Context: process context, possibly with the admin queue's lock held.
 */
void rnic_ib_dev_dead(struct rnic_dev *rdev)
{
	struct rnic_ibdev *ibd = rdev->ibd;

	if (!ibd)
		return;
	WRITE_ONCE(ibd->fatal, true);
	queue_work(system_highpri_wq, &ibd->fatal_work);
}

/**
 * rnic_ib_port_event() - tell ib_core the link changed
 * @rdev: the device
 * @up: the new link state
 *
 * Context: the event work, after the netdev's carrier follows @up.
 */
void rnic_ib_port_event(struct rnic_dev *rdev, bool up)
{
	struct rnic_ibdev *ibd = rdev->ibd;
	struct ib_event ev = {
		.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
		.element.port_num = RNIC_IB_PORT,
	};

	if (!ibd || !ibd->registered)
		return;
	ev.device = &ibd->ibdev;
	ib_dispatch_event(&ev);
}

/* ------------------------------------------------------------------------
 * Registration
 */

/**
 * rnic_ib_register() - set the device up for 2.0 and register its ib_device
 * @rdev: the device, enabled with ABI 2.0, its netdev registered
 *
 * Return: 0 or a negative errno; on error what the device was given is
 * released or left for rnic_ib_free() after the reset.
 */
int rnic_ib_register(struct rnic_dev *rdev)
{
	struct ib_device *ibdev;
	struct rnic_ibdev *ibd;
	int err;

	ibd = ib_alloc_device(rnic_ibdev, ibdev);
	if (!ibd)
		return -ENOMEM;
	ibd->rdev = rdev;
	spin_lock_init(&ibd->ah_lock);
	spin_lock_init(&ibd->defer_lock);
	INIT_LIST_HEAD(&ibd->deferred);
	INIT_WORK(&ibd->fatal_work, rnic_ib_fatal_work);
	xa_init_flags(&ibd->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&ibd->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&ibd->srq_xa, XA_FLAGS_LOCK_IRQ);
	ibdev = &ibd->ibdev;
	ibdev->dev.parent = &rdev->pdev->dev;
	rdev->ibd = ibd;

	err = rnic_ib_read_caps(ibd);
	if (err)
		goto err_unwind;
	err = rnic_ib_config_port(ibd);
	if (err)
		goto err_unwind;
	err = rnic_ib_dbp_alloc(ibd);
	if (err)
		goto err_unwind;
	/* what the kernel's pages may take is never a user context's */
	ibd->max_user_dbps = ibd->caps.num_db_pages -
			     min_t(int, ibd->caps.num_db_pages, RNIC_IB_MAX_DBPS);
	rnic_ib_kick_check(ibd);
	err = rnic_ib_eqs_create(ibd);
	if (err)
		goto err_free_dbp;
	err = rnic_ib_ah_table_init(ibd);
	if (err)
		goto err_destroy_eqs;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = ibd->num_eqs;
	ibdev->node_guid = rnic_ib_guid_from_mac(rdev->mac);
	strscpy(ibdev->node_desc, RNIC_IB_NODE_DESC, sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &rnic_ib_ops);
	/*
	 * ib_core's DIM moderates the events of ib_alloc_cq()'s CQs (NVMe-oF,
	 * iSER, SRP, NFS, SMB Direct) by their completions per event: under
	 * load an interrupt, and the EQ and softirq work behind it, then
	 * serves many completions instead of one.
	 */
	ibdev->use_cq_dim = !!(ibd->caps.flags & RNIC_RDMA_CAP_CQ_MODERATION);
	/*
	 * uverbs offers these write commands only to drivers that ask: a
	 * process whose kick register is not mapped kicks with them (no WRs;
	 * rnic_ib_uctx.c). Without them its posts and arms fail EOPNOTSUPP.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	err = ib_device_set_netdev(ibdev, rdev->netdev, RNIC_IB_PORT);
	if (err)
		goto err_destroy_eqs;
	err = ib_register_device(ibdev, "rnic%d", &rdev->pdev->dev);
	if (err)
		goto err_put_netdev;
	WRITE_ONCE(ibd->registered, true);
	/* a failure during registration was not told to anyone */
	if (READ_ONCE(ibd->fatal))
		queue_work(system_highpri_wq, &ibd->fatal_work);
	ibdev_info(ibdev, "ABI 2.0: the NIC runs the transport; %u QPs, %u CQs, %u completion vectors, %u AH entries\n",
		   ibd->caps.max_qp, ibd->caps.max_cq, ibd->num_eqs, ibd->num_ah);
	return 0;

err_put_netdev:
	/* the netdev is unregistered before rnic_ib_free() deallocates */
	ib_device_set_netdev(ibdev, NULL, RNIC_IB_PORT);
err_destroy_eqs:
	rnic_ib_eqs_destroy(ibd);
err_free_dbp:
	rnic_ib_dbp_free(ibd);
err_unwind:
	/* the ib_device and the AH pages go in rnic_ib_free(), after reset */
	return err;
}

/**
 * rnic_ib_unregister() - unregister the ib_device and release the
 *	device objects it used
 * @rdev: the device; still enabled, so the DESTROY commands of the ULPs'
 *	objects ib_core tears down here still run
 */
void rnic_ib_unregister(struct rnic_dev *rdev)
{
	struct rnic_ibdev *ibd = rdev->ibd;

	if (!ibd || !ibd->registered)
		return;
	ib_unregister_device(&ibd->ibdev);
	WRITE_ONCE(ibd->registered, false);
	rnic_ib_eqs_destroy(ibd);
	rnic_ib_dbp_free(ibd);
}

/**
 * rnic_ib_free() - free what the device may have used until its reset
 * @rdev: the device, reset (or never enabled); if the reset failed, that
 *	memory is leaked
 */
void rnic_ib_free(struct rnic_dev *rdev)
{
	struct rnic_ibdev *ibd = rdev->ibd;

	if (!ibd)
		return;
	cancel_work_sync(&ibd->fatal_work);
	if (READ_ONCE(rdev->stopped)) {
		rnic_ib_deferred_release(ibd);
		rnic_ib_ah_table_free(ibd);
	} else {
		ibdev_err(&ibd->ibdev, "device was not reset: leaking the memory it may still use (AH table, objects whose destroy failed) rather than freeing it under its DMA\n");
	}
	WARN_ON(!xa_empty(&ibd->qp_xa));
	WARN_ON(!xa_empty(&ibd->cq_xa));
	WARN_ON(!xa_empty(&ibd->srq_xa));
	xa_destroy(&ibd->qp_xa);
	xa_destroy(&ibd->cq_xa);
	xa_destroy(&ibd->srq_xa);
	rdev->ibd = NULL;
	ib_dealloc_device(&ibd->ibdev);
}
