/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace stand-in for the kernel's <linux/bits.h> (rnicsim). */
#ifndef RNIC_COMPAT_LINUX_BITS_H
#define RNIC_COMPAT_LINUX_BITS_H

#define BITS_PER_LONG		(__SIZEOF_LONG__ * 8)
#define BITS_PER_LONG_LONG	64

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))

/* Contiguous bitmask from bit @l to bit @h inclusive (h >= l). */
#define GENMASK(h, l) \
	(((~0UL) - (1UL << (l)) + 1) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l) \
	(((~0ULL) - (1ULL << (l)) + 1) & \
	 (~0ULL >> (BITS_PER_LONG_LONG - 1 - (h))))

#endif /* RNIC_COMPAT_LINUX_BITS_H */
