/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Userspace stand-in for the kernel's <linux/types.h>, so that
 * include/rnic_hw.h compiles in rnicsim unchanged.
 *
 * The real uapi header (linux-libc-dev) provides __u8..__u64 and the
 * __le/__be types; this adds the kernel-internal short names, bool, and
 * the cpu_to_le*() / le*_to_cpu() family (little-endian hosts only).
 */
#ifndef RNIC_COMPAT_LINUX_TYPES_H
#define RNIC_COMPAT_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <endian.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#if __BYTE_ORDER != __LITTLE_ENDIAN
#error "rnicsim compat: only little-endian hosts are supported"
#endif

#define cpu_to_le16(x)	((__le16)(__u16)(x))
#define cpu_to_le32(x)	((__le32)(__u32)(x))
#define cpu_to_le64(x)	((__le64)(__u64)(x))
#define le16_to_cpu(x)	((__u16)(__le16)(x))
#define le32_to_cpu(x)	((__u32)(__le32)(x))
#define le64_to_cpu(x)	((__u64)(__le64)(x))
#define cpu_to_be16(x)	((__be16)__builtin_bswap16((__u16)(x)))
#define cpu_to_be32(x)	((__be32)__builtin_bswap32((__u32)(x)))
#define cpu_to_be64(x)	((__be64)__builtin_bswap64((__u64)(x)))
#define be16_to_cpu(x)	__builtin_bswap16((__u16)(__be16)(x))
#define be32_to_cpu(x)	__builtin_bswap32((__u32)(__be32)(x))
#define be64_to_cpu(x)	__builtin_bswap64((__u64)(__be64)(x))

#endif /* RNIC_COMPAT_LINUX_TYPES_H */
