// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: the ib_device.
 *
 * One RoCE port, bound to the rnic netdev with ib_device_set_netdev() so
 * that ib_core fills the GID table from the netdev's IPv4 and IPv6
 * addresses by itself, one entry per address for each RoCE version the
 * port advertises (roce_mode). The port state, MTU and speed are read from
 * the netdev and the device at query time, never cached here.
 *
 * The datapath verbs (QPs, CQs, SRQs, AHs, MRs) live in rnic_verbs.c and
 * rnic_mr.c; the transport behind them in rnic_roce.c and rnic_rc_*.c.
 */
#include <kunit/visibility.h>
#include <linux/ctype.h>
#include <linux/minmax.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic.h"
#include "rnic_ib.h"
#include "rnic_param.h"
#include "rnic_verbs.h"

/*
 * SET_PORT's flags word is shared with the netdev side (RX_VLAN_STRIP);
 * these are the bits the RDMA side decides.
 */
#define RNIC_IB_PORT_FLAGS	(RNIC_PORT_F_PFC | RNIC_PORT_F_RX_ICRC_CHECK | \
				 RNIC_PORT_F_RX_ICRC_DELIVER_BAD)

/* ------------------------------------------------------------------------
 * Pure helpers (KUnit: kunit/rnic_ib_kunit.c)
 */

/**
 * rnic_ib_core_cap_flags() - port capabilities for a roce_mode
 * @roce_mode: RNIC_ROCE_V1 and/or RNIC_ROCE_V2
 *
 * ib_core derives the GID types of the port from these flags: RoCE v1
 * ("IB/RoCE v1") from RDMA_CORE_CAP_PROT_ROCE, RoCE v2 from
 * RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP. The GID table then holds one entry per
 * address per type, and rdma_cm's configfs accepts exactly those types as
 * default_roce_mode.
 *
 * Return: RDMA_CORE_PORT_IBA_ROCE* flags; 0 for a mode with neither bit.
 */
VISIBLE_IF_KUNIT u32 rnic_ib_core_cap_flags(u8 roce_mode)
{
	u32 flags = 0;

	if (roce_mode & RNIC_ROCE_V1)
		flags |= RDMA_CORE_PORT_IBA_ROCE;
	if (roce_mode & RNIC_ROCE_V2)
		flags |= RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	return flags;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_core_cap_flags);

/*
 * IB speed x width combinations, by increasing signalling rate, that stand
 * for the common Ethernet port speeds.
 */
static const struct {
	u32 mbps;
	u16 speed;
	u8 width;
} rnic_ib_rates[] = {
	{   2500, IB_SPEED_SDR, IB_WIDTH_1X },
	{   5000, IB_SPEED_DDR, IB_WIDTH_1X },
	{  10000, IB_SPEED_QDR, IB_WIDTH_1X },
	{  20000, IB_SPEED_DDR, IB_WIDTH_4X },
	{  25000, IB_SPEED_EDR, IB_WIDTH_1X },
	{  40000, IB_SPEED_QDR, IB_WIDTH_4X },
	{  50000, IB_SPEED_HDR, IB_WIDTH_1X },
	{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
	{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
	{ 400000, IB_SPEED_NDR, IB_WIDTH_4X },
#ifdef RNIC_HAVE_IB_SPEED_XDR
	{ 800000, IB_SPEED_XDR, IB_WIDTH_4X },
#endif
};

/**
 * rnic_ib_speed_width() - IB active speed and width for an Ethernet speed
 * @speed_mbps: port speed in Mb/s (0 when unknown)
 * @speed: IB_SPEED_*
 * @width: IB_WIDTH_*
 *
 * Picks the fastest combination that does not exceed the port speed, so
 * that ULPs sizing their traffic by the reported rate never overrun the
 * wire. Below 2.5 Gb/s IB has nothing slower than SDR 1X, which is
 * reported.
 */
VISIBLE_IF_KUNIT void rnic_ib_speed_width(u32 speed_mbps, u16 *speed,
					  u8 *width)
{
	unsigned int i, best = 0;

	for (i = 0; i < ARRAY_SIZE(rnic_ib_rates); i++)
		if (rnic_ib_rates[i].mbps <= speed_mbps)
			best = i;
	*speed = rnic_ib_rates[best].speed;
	*width = rnic_ib_rates[best].width;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_speed_width);

/**
 * rnic_ib_active_mtu() - IB path MTU the port carries at a netdev MTU
 * @netdev_mtu: the netdev's L3 MTU
 *
 * The RoCE payload has to fit the netdev MTU together with the largest
 * RoCE v2 headers (iboe_get_mtu() knows them). IB has no MTU below 256, so
 * a netdev MTU too small even for that still reports IB_MTU_256.
 *
 * Return: IB_MTU_256 .. IB_MTU_4096.
 */
VISIBLE_IF_KUNIT enum ib_mtu rnic_ib_active_mtu(unsigned int netdev_mtu)
{
	enum ib_mtu mtu = iboe_get_mtu(min_t(unsigned int, netdev_mtu, INT_MAX));

	return mtu ? mtu : IB_MTU_256;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_active_mtu);

/**
 * rnic_ib_guid_from_mac() - node GUID of the device
 * @mac: the device's permanent MAC address
 *
 * The modified EUI-64 of the MAC (as IPv6 builds its interface id), which
 * makes the GUID stable across reboots and unique wherever the MAC is.
 *
 * Return: the GUID in network byte order.
 */
VISIBLE_IF_KUNIT __be64 rnic_ib_guid_from_mac(const u8 *mac)
{
	__be64 guid;

	addrconf_addr_eui48((u8 *)&guid, mac);
	return guid;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_guid_from_mac);

/**
 * rnic_ib_fw_ver() - numeric firmware version from the model's version
 * @version: the device's version string, e.g. "rnicsim 1.2.3"
 *
 * The first run of up to three dot-separated numbers becomes
 * major << 32 | minor << 16 | patch, each part saturated at 0xffff. The
 * string itself is what /sys/class/infiniband/<dev>/fw_ver shows.
 *
 * Return: the version, 0 if @version has no digits.
 */
VISIBLE_IF_KUNIT u64 rnic_ib_fw_ver(const char *version)
{
	u32 part[3] = {};
	unsigned int i = 0;
	const char *s = version;

	while (*s && !isdigit(*s))
		s++;
	while (i < ARRAY_SIZE(part) && isdigit(*s)) {
		for (; isdigit(*s); s++)
			part[i] = min(part[i] * 10 + (*s - '0'), (u32)U16_MAX);
		i++;
		if (*s != '.')
			break;
		s++;
	}
	return (u64)part[0] << 32 | (u64)part[1] << 16 | part[2];
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_fw_ver);

/**
 * rnic_ib_build_set_port() - the SET_PORT command for the RoCE settings
 * @cmd: command to fill (fully overwritten; the header is the wrapper's)
 * @p: module parameters
 * @caps: RNIC_CAP_* of the device
 * @cur_flags: RNIC_PORT_F_* in effect now (QUERY_PORT)
 *
 * Only the RoCE groups are flagged valid: the UDP port, the flags word and,
 * with PFC on, the PFC group; MTU and MAC are the netdev's. The flags word
 * is applied whole, so the netdev's bits in @cur_flags are carried over.
 * PFC and RX ICRC checking are asked for only when the device has them (it
 * refuses the command otherwise); without PFC the priority is not used.
 * Quanta and watermarks stay 0, the device's defaults.
 */
VISIBLE_IF_KUNIT void rnic_ib_build_set_port(struct rnic_aq_set_port *cmd,
					     const struct rnic_params *p,
					     u32 caps, u32 cur_flags)
{
	u32 valid = RNIC_PORT_VALID_UDP_PORT | RNIC_PORT_VALID_FLAGS;
	u32 flags = cur_flags & ~RNIC_IB_PORT_FLAGS;

	memset(cmd, 0, sizeof(*cmd));
	cmd->udp_port = cpu_to_le16(p->roce_udp_port);
	if (p->pfc_prio != RNIC_PFC_OFF && (caps & RNIC_CAP_PFC)) {
		valid |= RNIC_PORT_VALID_PFC;
		flags |= RNIC_PORT_F_PFC;
		cmd->pfc_prio = p->pfc_prio;
	}
	if (caps & RNIC_CAP_ICRC)
		flags |= RNIC_PORT_F_RX_ICRC_CHECK;
	cmd->valid = cpu_to_le32(valid);
	cmd->flags = cpu_to_le32(flags & RNIC_PORT_F_ALL);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_build_set_port);

/* ------------------------------------------------------------------------
 * Device and port queries
 */

static void rnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", to_rdev(ibdev)->model_version);
}

static enum rdma_link_layer rnic_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int rnic_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = rnic_ib_core_cap_flags(rnic_params.roce_mode);
	immutable->gid_tbl_len = RNIC_IB_GID_TBL_LEN;
	immutable->pkey_tbl_len = RNIC_IB_PKEY_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int rnic_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	struct rnic_dev *rdev = to_rdev(ibdev);

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = rnic_ib_fw_ver(rdev->model_version);
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = RNIC_PCI_VENDOR_ID;
	attr->vendor_part_id = RNIC_PCI_DEVICE_ID;
	attr->hw_ver = rdev->pdev->revision;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_mr_size = RNIC_IB_MAX_MR_SIZE;
	attr->max_qp = RNIC_IB_MAX_QP;
	attr->max_qp_wr = RNIC_IB_MAX_QP_WR;
	attr->max_send_sge = RNIC_IB_MAX_SGE;
	attr->max_recv_sge = RNIC_IB_MAX_SGE;
	attr->max_sge_rd = RNIC_IB_MAX_SGE;
	attr->max_cq = RNIC_IB_MAX_CQ;
	attr->max_cqe = RNIC_IB_MAX_CQE;
	attr->max_mr = RNIC_IB_MAX_MR;
	attr->max_pd = RNIC_IB_MAX_PD;
	attr->max_qp_rd_atom = RNIC_IB_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = RNIC_IB_MAX_RD_ATOM;
	attr->max_res_rd_atom = RNIC_IB_MAX_QP * RNIC_IB_MAX_RD_ATOM;
	/* the responder runs atomics under one device-wide lock */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = RNIC_IB_MAX_AH;
	attr->max_srq = RNIC_IB_MAX_SRQ;
	attr->max_srq_wr = RNIC_IB_MAX_QP_WR;
	attr->max_srq_sge = RNIC_IB_MAX_SGE;
	attr->max_pkeys = RNIC_IB_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = RNIC_IB_ACK_DELAY;
	attr->max_fast_reg_page_list_len = RNIC_IB_MAX_FRWR_PAGES;
	return 0;
}

/*
 * The port follows the netdev: ACTIVE exactly when the interface is up and
 * has carrier, the active MTU from the netdev MTU (so "ip link set mtu"
 * shows up here at once), the speed from the device's last link report.
 * ib_core zeroed *attr.
 */
static int rnic_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct rnic_dev *rdev = to_rdev(ibdev);
	struct net_device *ndev = rdev->netdev;
	bool up = netif_running(ndev) && netif_carrier_ok(ndev);

	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = rnic_ib_active_mtu(READ_ONCE(ndev->mtu));
	rnic_ib_speed_width(READ_ONCE(rdev->speed_mbps), &attr->active_speed,
			    &attr->active_width);
	attr->gid_tbl_len = RNIC_IB_GID_TBL_LEN;
	attr->pkey_tbl_len = RNIC_IB_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	/* GIDs come from the netdev's IP addresses (uverbs: IP_BASED_GIDS) */
	attr->ip_gids = true;
	attr->max_msg_sz = RNIC_IB_MAX_MSG_SZ;
	attr->max_vl_num = 1;
	return 0;
}

static int rnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index >= RNIC_IB_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/* ------------------------------------------------------------------------
 * Protection domains
 */

static int rnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_ibdev *rib = to_ribdev(ibpd->device);
	struct rnic_pd *pd = to_rpd(ibpd);
	int err;

	err = xa_alloc_cyclic_irq(&rib->pd_xa, &pd->pdn, pd,
				  XA_LIMIT(1, RNIC_IB_MAX_PD), &rib->next_pdn,
				  GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	return 0;
}

static int rnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rnic_pd *pd = to_rpd(ibpd);

	xa_erase_irq(&to_ribdev(ibpd->device)->pd_xa, pd->pdn);
	return 0;
}

#ifndef RNIC_HAVE_CREATE_CQ_ATTRS
/*
 * Before 6.11 create_cq gets the caller's udata instead of its attribute
 * bundle: non-NULL for a userspace CQ, which rnic refuses either way.
 */
static int rnic_create_cq_udata(struct ib_cq *ibcq,
				const struct ib_cq_init_attr *attr,
				struct ib_udata *udata)
{
	if (udata)
		return -EOPNOTSUPP;
	return rnic_create_cq(ibcq, attr, NULL);
}
#endif

static const struct ib_device_ops rnic_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,

	.alloc_hw_port_stats = rnic_alloc_hw_port_stats,
	.alloc_mr = rnic_alloc_mr,
	.alloc_pd = rnic_alloc_pd,
	.create_ah = rnic_create_ah,
#ifdef RNIC_HAVE_CREATE_CQ_ATTRS
	.create_cq = rnic_create_cq,
#else
	.create_cq = rnic_create_cq_udata,
#endif
	.create_qp = rnic_create_qp,
	.create_srq = rnic_create_srq,
	.dealloc_pd = rnic_dealloc_pd,
	.dereg_mr = rnic_dereg_mr,
	.destroy_ah = rnic_destroy_ah,
	.destroy_cq = rnic_destroy_cq,
	.destroy_qp = rnic_destroy_qp,
	.destroy_srq = rnic_destroy_srq,
	.get_dev_fw_str = rnic_get_dev_fw_str,
	.get_dma_mr = rnic_get_dma_mr,
	.get_hw_stats = rnic_get_hw_stats,
	.get_link_layer = rnic_get_link_layer,
	.get_port_immutable = rnic_get_port_immutable,
	.map_mr_sg = rnic_map_mr_sg,
	.modify_qp = rnic_modify_qp,
	.modify_srq = rnic_modify_srq,
	.poll_cq = rnic_poll_cq,
	.post_recv = rnic_post_recv,
	.post_send = rnic_post_send,
	.post_srq_recv = rnic_post_srq_recv,
	.query_device = rnic_query_device,
	.query_pkey = rnic_query_pkey,
	.query_port = rnic_query_port,
	.query_qp = rnic_query_qp,
	.query_srq = rnic_query_srq,
	.reg_user_mr = rnic_reg_user_mr,
	.req_notify_cq = rnic_req_notify_cq,
	.resize_cq = rnic_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, rnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, rnic_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, rnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, rnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, rnic_srq, ibsrq),
};

/* ------------------------------------------------------------------------
 * Registration
 */

static const char *rnic_ib_roce_str(u8 roce_mode)
{
	switch (roce_mode) {
	case RNIC_ROCE_V1:
		return "v1";
	case RNIC_ROCE_V2:
		return "v2";
	default:
		return "v1+v2";
	}
}

/*
 * Program the RoCE settings into the device: the RoCE v2 UDP port of the
 * RX classifier, PFC on the no-drop priority, and RX ICRC checking. The
 * flags word is read, modified and written back under RTNL, which the
 * netdev side holds whenever it writes the same word.
 */
static int rnic_ib_config_port(struct rnic_dev *rdev)
{
	struct rnic_aq_set_port cmd;
	struct rnic_port_attr attr;
	int err;

	if (rnic_params.pfc_prio != RNIC_PFC_OFF &&
	    !(rdev->caps & RNIC_CAP_PFC))
		rnic_warn(rdev, "pfc_prio=%d ignored: the device has no PFC\n",
			  rnic_params.pfc_prio);

	rtnl_lock();
	err = rnic_cmd_query_port(rdev, &attr);
	if (!err) {
		rnic_ib_build_set_port(&cmd, &rnic_params, rdev->caps,
				       le32_to_cpu(attr.flags));
		err = rnic_cmd_set_port(rdev, &cmd);
	}
	rtnl_unlock();
	if (err)
		rnic_err(rdev, "cannot program the RoCE port settings: %d\n",
			 err);
	return err;
}

/**
 * rnic_ib_register() - register the ib_device of an rnic
 * @rdev: the device, with its netdev registered
 *
 * Programs the RoCE settings into the device, then registers "rnic%d" with
 * ib_core bound to rdev->netdev.
 *
 * Return: 0 or a negative errno; nothing is left registered on error.
 */
int rnic_ib_register(struct rnic_dev *rdev)
{
	struct rnic_ibdev *rib;
	struct ib_device *ibdev;
	int err;

	err = rnic_ib_config_port(rdev);
	if (err)
		return err;

	rib = ib_alloc_device(rnic_ibdev, ibdev);
	if (!rib)
		return -ENOMEM;
	rib->rdev = rdev;
	/*
	 * QPs and MRs are looked up from NAPI and timers: the irq-safe lock
	 * variants. The PD table is not, but xarrays initialised in one file
	 * share one lockdep class, and a softirq-unsafe use of one of them
	 * reads to lockdep as an inversion against the others.
	 */
	xa_init_flags(&rib->pd_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&rib->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&rib->mr_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);

	ibdev = &rib->ibdev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = max(rdev->num_irqs - RNIC_VEC_ROCE, 1);
	ibdev->node_guid = rnic_ib_guid_from_mac(rdev->mac);
	strscpy(ibdev->node_desc, RNIC_IB_NODE_DESC, sizeof(ibdev->node_desc));
	ibdev->dev.parent = &rdev->pdev->dev;
	ib_set_device_ops(ibdev, &rnic_ib_ops);

	err = ib_device_set_netdev(ibdev, rdev->netdev, RNIC_IB_PORT);
	if (err)
		goto err_dealloc;

	err = ib_register_device(ibdev, "rnic%d", &rdev->pdev->dev);
	if (err)
		goto err_dealloc;

	/* the probe's summary line reports the RoCE settings */
	WRITE_ONCE(rdev->ibdev, rib);
	ibdev_dbg(ibdev, "registered: RoCE %s on %s\n",
		  rnic_ib_roce_str(rnic_params.roce_mode),
		  netdev_name(rdev->netdev));
	return 0;

err_dealloc:
	/* also drops the netdev reference ib_device_set_netdev() took */
	ib_dealloc_device(ibdev);
	return err;
}

/**
 * rnic_ib_unregister() - unregister and free the ib_device, if any
 * @rdev: the device
 *
 * Kernel clients (rdma_cm and the ULPs on it) are told to let go and are
 * waited for by ib_unregister_device(). Until it returns the device keeps
 * working: a ULP may still need the wire to let go (nvme-rdma shuts its
 * controller down and waits for the I/O in flight), so received packets
 * must still find their QPs. rdev->ibdev is cleared only then, and an RCU
 * grace period passed before the free, so that rnic_qp_get() and
 * rnic_ib_port_event() running at the same time never see a device being
 * freed.
 */
void rnic_ib_unregister(struct rnic_dev *rdev)
{
	struct rnic_ibdev *rib = rdev->ibdev;

	if (!rib)
		return;
	ib_unregister_device(&rib->ibdev);

	WRITE_ONCE(rdev->ibdev, NULL);
	synchronize_rcu();
	WARN_ON(!xa_empty(&rib->pd_xa));
	xa_destroy(&rib->pd_xa);
	WARN_ON(!xa_empty(&rib->qp_xa));
	xa_destroy(&rib->qp_xa);
	WARN_ON(!xa_empty(&rib->mr_xa));
	xa_destroy(&rib->mr_xa);
	ib_dealloc_device(&rib->ibdev);
}

/**
 * rnic_ib_port_event() - tell ib_core and its clients the link changed
 * @rdev: the device
 * @up: the new link state
 *
 * Call after the netdev's carrier reflects @up: ib_core refreshes its port
 * cache through query_port, which reads the carrier. Any context.
 */
void rnic_ib_port_event(struct rnic_dev *rdev, bool up)
{
	struct ib_event event = {
		.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
		.element.port_num = RNIC_IB_PORT,
	};
	struct rnic_ibdev *rib;

	rcu_read_lock();
	rib = READ_ONCE(rdev->ibdev);
	if (rib) {
		event.device = &rib->ibdev;
		ib_dispatch_event(&event);
	}
	rcu_read_unlock();
}
