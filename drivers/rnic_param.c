// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module parameters of rnic.
 *
 * Each parameter has its own kernel_param_ops so that a bad value refuses
 * the module load (the setter returns -EINVAL) with one line that names the
 * parameter and its valid range, instead of being clamped silently. The
 * parsers are pure functions so KUnit can check them without a device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "rnic_param.h"

struct rnic_params rnic_params = {
	.roce_mode = RNIC_ROCE_BOTH,
	.roce_udp_port = RNIC_ROCE_V2_PORT_DEFAULT,
	.pfc_prio = RNIC_PFC_OFF,
	.eth_ring_size = RNIC_ETH_RING_DEFAULT,
	.user_kick_map = true,
};
EXPORT_SYMBOL_IF_KUNIT(rnic_params);

/**
 * rnic_parse_roce_mode() - parse the roce_mode parameter
 * @val: "1" (RoCE v1 only), "2" (RoCE v2 only) or "3" (both)
 * @mode: where to store RNIC_ROCE_V1, RNIC_ROCE_V2 or RNIC_ROCE_BOTH
 *
 * The numbering follows mlx4_core's roce_mode=2 meaning RoCE v2, and makes
 * "both" the union of the two bits.
 *
 * Return: 0 or -EINVAL.
 */
VISIBLE_IF_KUNIT int rnic_parse_roce_mode(const char *val, u8 *mode)
{
	u8 v;

	if (!val || kstrtou8(val, 0, &v))
		return -EINVAL;
	if (v != RNIC_ROCE_V1 && v != RNIC_ROCE_V2 && v != RNIC_ROCE_BOTH)
		return -EINVAL;
	*mode = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_parse_roce_mode);

/**
 * rnic_parse_udp_port() - parse the RoCE v2 UDP destination port
 * @val: decimal port, 1-65535
 * @port: where to store it
 *
 * Port 0 cannot be a destination port, so it is refused rather than
 * silently meaning "default".
 *
 * Return: 0 or -EINVAL.
 */
VISIBLE_IF_KUNIT int rnic_parse_udp_port(const char *val, u16 *port)
{
	u16 v;

	if (!val || kstrtou16(val, 10, &v) || !v)
		return -EINVAL;
	*port = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_parse_udp_port);

/**
 * rnic_parse_pfc_prio() - parse the PFC no-drop priority
 * @val: "off" or an 802.1p priority 0-7
 * @prio: where to store the priority or RNIC_PFC_OFF
 *
 * Return: 0 or -EINVAL.
 */
VISIBLE_IF_KUNIT int rnic_parse_pfc_prio(const char *val, s8 *prio)
{
	u8 v;

	if (!val)
		return -EINVAL;
	if (sysfs_streq(val, "off")) {
		*prio = RNIC_PFC_OFF;
		return 0;
	}
	if (kstrtou8(val, 10, &v) || v > 7)
		return -EINVAL;
	*prio = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_parse_pfc_prio);

/**
 * rnic_parse_ring_size() - parse a ring size
 * @val: decimal number of descriptors
 * @min: smallest allowed size (a power of two)
 * @max: largest allowed size (a power of two)
 * @size: where to store it
 *
 * The device indexes rings with a log2 depth, so only powers of two exist;
 * rounding would hide a typo, so anything else is refused.
 *
 * Return: 0 or -EINVAL.
 */
VISIBLE_IF_KUNIT int rnic_parse_ring_size(const char *val, u32 min, u32 max,
					  u32 *size)
{
	u32 v;

	if (!val || kstrtou32(val, 10, &v))
		return -EINVAL;
	if (v < min || v > max || !is_power_of_2(v))
		return -EINVAL;
	*size = v;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rnic_parse_ring_size);

static int roce_mode_set(const char *val, const struct kernel_param *kp)
{
	if (rnic_parse_roce_mode(val, &rnic_params.roce_mode)) {
		pr_err("roce_mode=%s is invalid: use 1 (RoCE v1), 2 (RoCE v2) or 3 (both, the default)\n",
		       val);
		return -EINVAL;
	}
	return 0;
}

static int roce_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", rnic_params.roce_mode);
}

static const struct kernel_param_ops roce_mode_ops = {
	.set = roce_mode_set,
	.get = roce_mode_get,
};

module_param_cb(roce_mode, &roce_mode_ops, NULL, 0444);
MODULE_PARM_DESC(roce_mode,
		 "RoCE versions the ports advertise: 1 = RoCE v1 only, 2 = RoCE v2 only, 3 = both (default 3)");

static int roce_udp_port_set(const char *val, const struct kernel_param *kp)
{
	if (rnic_parse_udp_port(val, &rnic_params.roce_udp_port)) {
		pr_err("roce_udp_port=%s is invalid: use a UDP port 1-65535 (default %u)\n",
		       val, RNIC_ROCE_V2_PORT_DEFAULT);
		return -EINVAL;
	}
	return 0;
}

static int roce_udp_port_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", rnic_params.roce_udp_port);
}

static const struct kernel_param_ops roce_udp_port_ops = {
	.set = roce_udp_port_set,
	.get = roce_udp_port_get,
};

module_param_cb(roce_udp_port, &roce_udp_port_ops, NULL, 0444);
MODULE_PARM_DESC(roce_udp_port,
		 "RoCE v2 UDP destination port, used on TX and by the device's RX classifier: 1-65535 (default 4791, the IANA port; 1021 for old Mellanox OFED peers)");

static int pfc_prio_set(const char *val, const struct kernel_param *kp)
{
	if (rnic_parse_pfc_prio(val, &rnic_params.pfc_prio)) {
		pr_err("pfc_prio=%s is invalid: use an 802.1p priority 0-7, or off (the default)\n",
		       val);
		return -EINVAL;
	}
	return 0;
}

static int pfc_prio_get(char *buf, const struct kernel_param *kp)
{
	if (rnic_params.pfc_prio == RNIC_PFC_OFF)
		return sysfs_emit(buf, "off\n");
	return sysfs_emit(buf, "%d\n", rnic_params.pfc_prio);
}

static const struct kernel_param_ops pfc_prio_ops = {
	.set = pfc_prio_set,
	.get = pfc_prio_get,
};

module_param_cb(pfc_prio, &pfc_prio_ops, NULL, 0444);
MODULE_PARM_DESC(pfc_prio,
		 "PFC no-drop priority: RoCE frames carry this 802.1p priority and the device sends and honours 802.1Qbb pause for it: 0-7, or off (default off)");

static int eth_ring_size_set(const char *val, const struct kernel_param *kp)
{
	if (rnic_parse_ring_size(val, RNIC_ETH_RING_MIN, RNIC_ETH_RING_MAX,
				 &rnic_params.eth_ring_size)) {
		pr_err("eth_ring_size=%s is invalid: use a power of two %u-%u (default %u)\n",
		       val, RNIC_ETH_RING_MIN, RNIC_ETH_RING_MAX,
		       RNIC_ETH_RING_DEFAULT);
		return -EINVAL;
	}
	return 0;
}

static int eth_ring_size_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", rnic_params.eth_ring_size);
}

static const struct kernel_param_ops eth_ring_size_ops = {
	.set = eth_ring_size_set,
	.get = eth_ring_size_get,
};

module_param_cb(eth_ring_size, &eth_ring_size_ops, NULL, 0444);
MODULE_PARM_DESC(eth_ring_size,
		 "Descriptors per Ethernet TX and RX ring: a power of two 64-4096 (default 256)");

static int user_kick_map_set(const char *val, const struct kernel_param *kp)
{
	if (!val || kstrtobool(val, &rnic_params.user_kick_map)) {
		pr_err("user_kick_map=%s is invalid: use 1 (default) or 0\n",
		       val ?: "");
		return -EINVAL;
	}
	return 0;
}

static int user_kick_map_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", rnic_params.user_kick_map);
}

static const struct kernel_param_ops user_kick_map_ops = {
	.set = user_kick_map_set,
	.get = user_kick_map_get,
};

module_param_cb(user_kick_map, &user_kick_map_ops, NULL, 0444);
MODULE_PARM_DESC(user_kick_map,
		 "Userspace verbs: 1 maps the device's kick register into processes when its page holds nothing else, so posts make no system call; 0 makes every process kick through the kernel, one system call per post (default 1)");
