/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Userspace stand-in for the kernel's <linux/bitfield.h> (rnicsim):
 * FIELD_PREP / FIELD_GET / FIELD_FIT / FIELD_MAX with the same meaning,
 * without the kernel's compile-time mask checks.
 */
#ifndef RNIC_COMPAT_LINUX_BITFIELD_H
#define RNIC_COMPAT_LINUX_BITFIELD_H

#include <linux/bits.h>

#define __bf_shf(x)	(__builtin_ffsll(x) - 1)

#define FIELD_MAX(_mask) \
	((__typeof__(_mask))((_mask) >> __bf_shf(_mask)))

#define FIELD_FIT(_mask, _val) \
	(!((((__typeof__(_mask))(_val)) << __bf_shf(_mask)) & ~(_mask)))

#define FIELD_PREP(_mask, _val) \
	((((__typeof__(_mask))(_val)) << __bf_shf(_mask)) & (_mask))

#define FIELD_GET(_mask, _reg) \
	((__typeof__(_mask))(((_reg) & (_mask)) >> __bf_shf(_mask)))

#endif /* RNIC_COMPAT_LINUX_BITFIELD_H */
