/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * librnic: what include/rnic_hw.h needs in a provider, then rnic_hw.h.
 *
 * The hardware headers are written for the kernel (u8..u64, BIT, GENMASK,
 * FIELD_PREP, static_assert, <linux/bits.h> and friends). The model's
 * compat (tools/rnicsim/compat) shadows <linux/types.h>, which libibverbs'
 * headers include too; here the real uapi <linux/types.h> is used, as
 * libibverbs expects, and only the kernel-internal names are added. BIT,
 * GENMASK and FIELD_PREP/FIELD_GET come from rdma-core's util/util.h, with
 * the kernel's meaning. compat/linux/{bits,bitfield,build_bug}.h are empty
 * stand-ins for the includes at the top of rnic_hw.h.
 *
 * Include this, never rnic_hw.h directly.
 */
#ifndef RNIC_HW_COMPAT_H
#define RNIC_HW_COMPAT_H

#include <assert.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <ccan/array_size.h>
#include <util/util.h>

#if __BYTE_ORDER != __LITTLE_ENDIAN
#error "librnic: only little-endian hosts are supported"
#endif

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

/* used by inline helpers of rnic_hw.h; little-endian only (above) */
#define cpu_to_le16(x)	((__le16)(__u16)(x))
#define cpu_to_le32(x)	((__le32)(__u32)(x))
#define cpu_to_le64(x)	((__le64)(__u64)(x))
#define le16_to_cpu(x)	((__u16)(__le16)(x))
#define le32_to_cpu(x)	((__u32)(__le32)(x))
#define le64_to_cpu(x)	((__u64)(__le64)(x))

#include <rnic_hw.h>

#endif /* RNIC_HW_COMPAT_H */
