/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librnic: stand-in for the kernel's <linux/bits.h>, which rnic_hw.h
 * includes. What it would define comes from rnic_hw_compat.h (and
 * rdma-core's util/util.h), included before rnic_hw.h.
 */
#ifndef RNIC_HW_COMPAT_H
#error "include rnic_hw_compat.h, not rnic_hw.h, in the provider"
#endif
