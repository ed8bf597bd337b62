// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic ethtool operations.
 *
 * ethtool -S lists, in this order: the device's port counters (QUERY_STATS,
 * RNIC_PORT_STATS in rnic_hw.h, prefixed "port_"), the driver's counters
 * (RNIC_DRV_STATS, prefixed "drv_") and the netdev's per-ring counters
 * (RNIC_RING_STATS, as "tx0_packets", "rx0_bytes", ...). The lists are the
 * X-macros themselves, so names and values cannot drift apart.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/stringify.h>

#include "rnic_compat.h"
#include "rnic.h"
#include "rnic_param.h"

#define RNIC_PORT_STAT_NAME(name)	"port_" #name,
#define RNIC_DRV_STAT_NAME(name)	"drv_" #name,
#define RNIC_RING_STAT_NAME(dir, name)	__stringify(dir) "0_" #name,

static const char * const rnic_port_stat_names[] = {
	RNIC_PORT_STATS(RNIC_PORT_STAT_NAME)
};

static const char * const rnic_drv_stat_names[] = {
	RNIC_DRV_STATS(RNIC_DRV_STAT_NAME)
};

static const char * const rnic_ring_stat_names[] = {
	RNIC_RING_STATS(RNIC_RING_STAT_NAME)
};

static_assert(ARRAY_SIZE(rnic_port_stat_names) == RNIC_NUM_PORT_STATS);
static_assert(ARRAY_SIZE(rnic_drv_stat_names) == RNIC_NUM_DRV_STATS);
static_assert(ARRAY_SIZE(rnic_ring_stat_names) == RNIC_NUM_RING_STATS);

#define RNIC_NUM_ETHTOOL_STATS \
	(RNIC_NUM_PORT_STATS + RNIC_NUM_DRV_STATS + RNIC_NUM_RING_STATS)

static void rnic_get_drvinfo(struct net_device *netdev,
			     struct ethtool_drvinfo *info)
{
	struct rnic_dev *rdev = rnic_netdev_rdev(netdev);

	strscpy(info->driver, DRV_MODULE_NAME, sizeof(info->driver));
	strscpy(info->fw_version, rdev->model_version,
		sizeof(info->fw_version));
	strscpy(info->bus_info, pci_name(rdev->pdev), sizeof(info->bus_info));
}

/* A fixed-speed port: no autonegotiation, nothing to advertise. */
static int rnic_get_link_ksettings(struct net_device *netdev,
				   struct ethtool_link_ksettings *cmd)
{
	struct rnic_dev *rdev = rnic_netdev_rdev(netdev);

	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	if (netif_carrier_ok(netdev)) {
		cmd->base.speed = rdev->speed_mbps ?: SPEED_UNKNOWN;
		cmd->base.duplex = DUPLEX_FULL;
	} else {
		cmd->base.speed = SPEED_UNKNOWN;
		cmd->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

/*
 * Rings are sized once from the eth_ring_size module parameter; the
 * maximum is what both the driver and the device accept.
 */
static void rnic_get_ringparam(struct net_device *netdev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct rnic_dev *rdev = rnic_netdev_rdev(netdev);
	u32 max = min_t(u32, 1U << rdev->max_ring_log2, RNIC_ETH_RING_MAX);
	u32 cur = rnic_netdev_ring_size(netdev);

	ring->rx_max_pending = max;
	ring->tx_max_pending = max;
	ring->rx_pending = cur;
	ring->tx_pending = cur;
}

static int rnic_get_sset_count(struct net_device *netdev, int sset)
{
	if (sset == ETH_SS_STATS)
		return RNIC_NUM_ETHTOOL_STATS;
	return -EOPNOTSUPP;
}

static void rnic_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < RNIC_NUM_PORT_STATS; i++)
		ethtool_puts(&data, rnic_port_stat_names[i]);
	for (i = 0; i < RNIC_NUM_DRV_STATS; i++)
		ethtool_puts(&data, rnic_drv_stat_names[i]);
	for (i = 0; i < RNIC_NUM_RING_STATS; i++)
		ethtool_puts(&data, rnic_ring_stat_names[i]);
}

/*
 * The port counters take an admin command (this may sleep; ethtool calls
 * us in process context). If it fails the device's values read as zero
 * for this call, and the failure is counted, so the driver's and the
 * rings' counters are still reported.
 */
static void rnic_get_ethtool_stats(struct net_device *netdev,
				   struct ethtool_stats *stats, u64 *data)
{
	struct rnic_dev *rdev = rnic_netdev_rdev(netdev);
	unsigned int i;
	int err = -EIO;

	if (!rdev->fatal)
		err = rnic_cmd_query_stats(rdev, RNIC_STATS_SCOPE_PORT, 0, data,
					   RNIC_NUM_PORT_STATS);
	if (err) {
		memset(data, 0, RNIC_NUM_PORT_STATS * sizeof(*data));
		rnic_stat_inc(rdev, RNIC_DRV_STAT_port_stats_failed);
		netdev_warn_once(netdev, "cannot read the port counters: %d\n",
				 err);
	}
	data += RNIC_NUM_PORT_STATS;

	for (i = 0; i < RNIC_NUM_DRV_STATS; i++)
		*data++ = atomic64_read(&rdev->stats[i]);

	rnic_netdev_ring_stats(netdev, data);
}

/* Given to rnic_netdev_init() by the probe: the netdev does not import us */
const struct ethtool_ops rnic_ethtool_ops = {
	.get_drvinfo = rnic_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = rnic_get_link_ksettings,
	.get_ringparam = rnic_get_ringparam,
	.get_sset_count = rnic_get_sset_count,
	.get_strings = rnic_get_strings,
	.get_ethtool_stats = rnic_get_ethtool_stats,
};
