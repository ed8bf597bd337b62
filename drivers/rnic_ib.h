/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic: the ib_device's port, as ib_core sees it (rnic_ib.c). The verbs
 * limits are the device's (rnic_ib_dev.c reads them with QUERY_CAPS).
 */
#ifndef _RNIC_IB_H_
#define _RNIC_IB_H_

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct rnic_aq_set_port;
struct rnic_params;

#define RNIC_IB_NODE_DESC		"rnic RoCE NIC"
#define RNIC_IB_PORT			1
#define RNIC_IB_GID_TBL_LEN		128

u32 rnic_ib_core_cap_flags(u8 roce_mode);
void rnic_ib_speed_width(u32 speed_mbps, u16 *speed, u8 *width);
enum ib_mtu rnic_ib_active_mtu(unsigned int netdev_mtu);
__be64 rnic_ib_guid_from_mac(const u8 *mac);
u64 rnic_ib_fw_ver(const char *version);
void rnic_ib_build_set_port(struct rnic_aq_set_port *cmd,
			    const struct rnic_params *p, u32 caps,
			    u32 cur_flags);

#endif /* _RNIC_IB_H_ */
