/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ABI 2.0 header templates (Documentation/hardware-rdma.rst, "Header
 * templates"): the L2-L4 headers of an RC QP's path and of an address
 * handle, built by the driver and sent verbatim by the device.
 *
 * Pure functions of their inputs: no ib_device, no netdev, no locks, so
 * the verbs can call them from any context (create_ah runs atomic) and
 * KUnit can compare their output with frames rxe sent.
 */
#ifndef _RNIC_IB_TMPL_H_
#define _RNIC_IB_TMPL_H_

#include <linux/if_ether.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "rnic_hw.h"
#include "rnic_param.h"

/**
 * struct rnic_ib_tmpl_in - everything a header template is made of
 * @net: RNIC_RX_CLASS_ROCE_V1, _ROCE_V2_IPV4 or _ROCE_V2_IPV6
 * @vlan: put an 802.1Q tag after the MACs
 * @vlan_id: with @vlan: the VID, 0 .. 4094
 * @prio: the 802.1p priority the packets travel with (PFC): the PCP of
 *	the tag, or the template's prio field when untagged; 0 .. 7
 * @traffic_class: GRH/IPv6 traffic class or IPv4 TOS, as the ULP gave it
 *	(rdma_cm's TOS includes the ECN bits; they are sent as given)
 * @hop_limit: GRH/IPv6 hop limit or IPv4 TTL
 * @udp_sport: RoCE v2 UDP source port (rnic_ib_udp_sport())
 * @udp_dport: RoCE v2 UDP destination port: the port's configured one
 * @flow_label: GRH/IPv6 flow label, 20 bits; not carried by IPv4
 * @pdn: AH table entry: the PD it belongs to; a QP path: 0
 * @dmac: destination MAC, unicast
 * @smac: source MAC
 * @sgid: source GID; for IPv4 the IPv4-mapped IPv6 address
 * @dgid: destination GID; for IPv4 the IPv4-mapped IPv6 address
 *
 * A plain struct so the builder needs no ib_device: the verbs fill it
 * from a struct rdma_ah_attr (rnic_ib_tmpl_in_from_ah()), KUnit by hand.
 */
struct rnic_ib_tmpl_in {
	u8 net;
	bool vlan;
	u16 vlan_id;
	u8 prio;
	u8 traffic_class;
	u8 hop_limit;
	u16 udp_sport;
	u16 udp_dport;
	u32 flow_label;
	u32 pdn;
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	union ib_gid sgid;
	union ib_gid dgid;
};

int rnic_ib_tmpl_net(enum rdma_network_type type);
u16 rnic_ib_udp_sport(u32 flow_label, u32 lqpn, u32 rqpn);
int rnic_ib_tmpl_in_from_ah(struct rnic_ib_tmpl_in *in,
			    const struct rdma_ah_attr *ah,
			    const u8 *smac, u16 vlan_id, s8 pfc_prio,
			    u16 udp_dport, u32 lqpn, u32 rqpn);
int rnic_ib_tmpl_build(struct rnic_hdr_tmpl *tmpl,
		       const struct rnic_ib_tmpl_in *in);

#endif /* _RNIC_IB_TMPL_H_ */
