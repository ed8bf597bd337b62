// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: the ib_device's port attributes, derived from the netdev, the
 * device and the module parameters.
 *
 * One RoCE port, bound to the rnic netdev with ib_device_set_netdev() so
 * that ib_core fills the GID table from the netdev's IPv4 and IPv6
 * addresses by itself, one entry per address for each RoCE version the
 * port advertises (roce_mode). The port state, MTU and speed are read at
 * query time, never cached; the numeric firmware version comes from the
 * device's version string. These helpers are pure (KUnit:
 * kunit/rnic_ib_kunit.c); rnic_ib_dev.c registers the ib_device with them.
 */
#include <kunit/visibility.h>
#include <linux/ctype.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "rnic_compat.h"
#include "rnic.h"
#include "rnic_ib.h"
#include "rnic_param.h"

/*
 * SET_PORT's flags word is shared with the netdev side (RX_VLAN_STRIP);
 * these are the bits the RDMA side decides.
 */
#define RNIC_IB_PORT_FLAGS	(RNIC_PORT_F_PFC | RNIC_PORT_F_RX_ICRC_CHECK | \
				 RNIC_PORT_F_RX_ICRC_DELIVER_BAD)

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
u32 rnic_ib_core_cap_flags(u8 roce_mode)
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
void rnic_ib_speed_width(u32 speed_mbps, u16 *speed, u8 *width)
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
enum ib_mtu rnic_ib_active_mtu(unsigned int netdev_mtu)
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
__be64 rnic_ib_guid_from_mac(const u8 *mac)
{
	__be64 guid;

	addrconf_addr_eui48((u8 *)&guid, mac);
	return guid;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_guid_from_mac);

/**
 * rnic_ib_fw_ver() - numeric firmware version from the device's version
 * @version: the device's NUL-terminated version string (model_version of
 *	QUERY_DEVICE), e.g. "rnicsim 2.0"
 *
 * The device reports its version only as a string, which get_dev_fw_str
 * and ethtool show as they are. ib_device_attr.fw_ver carries the same
 * version as a number, major in bits 47:32, minor in 31:16 and sub-minor
 * in 15:0, the layout libibverbs decodes as "major.minor.sub". The version
 * is the string's last space-separated word: one to three dot-separated
 * decimal numbers, each at most 65535; missing ones are 0.
 *
 * Return: the encoded version, or 0 if the last word is not a version.
 */
u64 rnic_ib_fw_ver(const char *version)
{
	const char *p = strrchr(version, ' ');
	u32 field[3] = {};
	unsigned int n = 0;

	for (p = p ? p + 1 : version; ; p++) {
		u32 v = 0;

		if (!isdigit(*p))
			return 0;
		while (isdigit(*p)) {
			v = v * 10 + (*p++ - '0');
			if (v > U16_MAX)
				return 0;
		}
		field[n++] = v;
		if (!*p)
			break;
		if (*p != '.' || n == ARRAY_SIZE(field))
			return 0;
	}
	return (u64)field[0] << 32 | (u64)field[1] << 16 | field[2];
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_fw_ver);

/**
 * rnic_ib_build_set_port() - the SET_PORT command for the RoCE settings
 * @cmd: command to fill (fully overwritten; the header is the wrapper's)
 * @p: module parameters
 * @caps: RNIC_CAP_* of the device
 * @cur_flags: RNIC_PORT_F_* in effect now (QUERY_PORT)
 *
 * Only the RoCE groups are flagged valid: the UDP port every v2 template
 * carries, the flags word and, with PFC on, the PFC group; MTU and MAC are
 * the netdev's. The flags word is applied whole, so the netdev's bits in
 * @cur_flags are carried over. PFC is asked for only when the device has it
 * (it refuses the command otherwise); without PFC the priority is not used.
 * The RX ICRC flags belong to the frame-ring interface the NIC no longer
 * offers (it checks the ICRC in its transport and refuses them): cleared.
 * Quanta and watermarks stay 0, the device's defaults.
 */
void rnic_ib_build_set_port(struct rnic_aq_set_port *cmd,
			    const struct rnic_params *p, u32 caps,
			    u32 cur_flags)
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
	cmd->valid = cpu_to_le32(valid);
	cmd->flags = cpu_to_le32(flags & RNIC_PORT_F_ALL);
}
EXPORT_SYMBOL_IF_KUNIT(rnic_ib_build_set_port);
