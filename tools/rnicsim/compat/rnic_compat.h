/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnicsim: everything userspace needs before including <rnic_hw.h>.
 * The compat directory shadows <linux/types.h>, <linux/bits.h>,
 * <linux/bitfield.h> and <linux/build_bug.h>; include this first in any
 * rnicsim file that uses the hardware contract.
 */
#ifndef RNIC_COMPAT_H
#define RNIC_COMPAT_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/bitfield.h>
#include <linux/build_bug.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#ifndef min_t
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b)	((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#endif

#endif /* RNIC_COMPAT_H */
