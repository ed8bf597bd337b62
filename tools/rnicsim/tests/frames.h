/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame builders for the tests: RoCE v1, v2 over IPv4/IPv6, ARP, plain
 * UDP. The ICRC is filled with pkt.c (its independent check is the
 * vectors in tests/vectors/).
 */
#ifndef RNICSIM_TEST_FRAMES_H
#define RNICSIM_TEST_FRAMES_H

#include <stddef.h>
#include <stdint.h>

enum tf_kind { TF_V1, TF_V2_IPV4, TF_V2_IPV6 };

/*
 * Build a RoCE SEND ONLY frame with @payload_len payload bytes (a
 * pattern) into @buf; @vlan_tci < 0 means untagged. Returns its length.
 */
size_t tf_roce(uint8_t *buf, enum tf_kind kind, size_t payload_len,
	       int vlan_tci, uint16_t udp_dport);
size_t tf_arp(uint8_t *buf);

#endif /* RNICSIM_TEST_FRAMES_H */
