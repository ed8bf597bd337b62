/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic module parameters: parsed and validated once at module load, then
 * read-only for the life of the module.
 */
#ifndef _RNIC_PARAM_H_
#define _RNIC_PARAM_H_

#include <linux/types.h>

/* roce_mode: which RoCE versions the ports advertise (a bit each). */
#define RNIC_ROCE_V1		BIT(0)
#define RNIC_ROCE_V2		BIT(1)
#define RNIC_ROCE_BOTH		(RNIC_ROCE_V1 | RNIC_ROCE_V2)

#define RNIC_ROCE_V2_PORT_DEFAULT	4791
#define RNIC_PFC_OFF		(-1)

#define RNIC_ETH_RING_MIN	64
#define RNIC_ETH_RING_MAX	4096
#define RNIC_ETH_RING_DEFAULT	256

/**
 * struct rnic_params - validated module parameters
 * @roce_mode: RNIC_ROCE_V1, RNIC_ROCE_V2 or RNIC_ROCE_BOTH
 * @roce_udp_port: RoCE v2 UDP destination port (RX classifier and TX)
 * @pfc_prio: 802.1p priority RoCE traffic uses and the device runs PFC
 *	on, or RNIC_PFC_OFF
 * @eth_ring_size: descriptors per Ethernet TX/RX ring
 * @user_kick_map: processes may map the kick register when its page holds
 *	nothing else (rnic_ib_kick_check()); false: they kick through the
 *	kernel
 */
struct rnic_params {
	u8 roce_mode;
	u16 roce_udp_port;
	s8 pfc_prio;
	u32 eth_ring_size;
	bool user_kick_map;
};

extern struct rnic_params rnic_params;

#if IS_ENABLED(CONFIG_KUNIT)
int rnic_parse_roce_mode(const char *val, u8 *mode);
int rnic_parse_udp_port(const char *val, u16 *port);
int rnic_parse_pfc_prio(const char *val, s8 *prio);
int rnic_parse_ring_size(const char *val, u32 min, u32 max, u32 *size);
#endif

#endif /* _RNIC_PARAM_H_ */
