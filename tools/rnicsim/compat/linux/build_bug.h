/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace stand-in for the kernel's <linux/build_bug.h> (rnicsim). */
#ifndef RNIC_COMPAT_LINUX_BUILD_BUG_H
#define RNIC_COMPAT_LINUX_BUILD_BUG_H

/* Drop <assert.h>'s version so the kernel's one-or-two argument form wins. */
#ifdef static_assert
#undef static_assert
#endif

/* static_assert(expr) or static_assert(expr, "message"), as in the kernel. */
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), "BUILD_BUG_ON: " #cond)

#endif /* RNIC_COMPAT_LINUX_BUILD_BUG_H */
