/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels rnic builds for: Debian 12's 6.1 and
 * 6.12 (Documentation/rnic.rst, "Supported kernels").
 *
 * Every test here is on a feature, never on LINUX_VERSION_CODE: Debian
 * backports APIs into its 6.1 (its net/netdev_queues.h, for one, is part
 * of 6.3's), so the version does not tell what a header has. Functions,
 * enumerators and headers cannot be tested by the preprocessor (sparse
 * has no __has_include()); Kbuild searches the headers for them and
 * defines RNIC_HAVE_*. Each fallback keeps the semantics rnic relies
 * on, as its comment says.
 */
#ifndef RNIC_COMPAT_H
#define RNIC_COMPAT_H

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/netdev_queues.h>

/*
 * The unaligned accessors moved from asm/ to linux/ in 6.12. Kbuild looks
 * for the file: sparse (0.6.4, make check) cannot parse __has_include().
 */
#ifdef RNIC_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifndef RNIC_HAVE_ETHTOOL_PUTS
/*
 * ethtool_puts() (6.8): one string into its ETH_GSTRING_LEN slot,
 * truncated and NUL-terminated, then the next slot. The rest of the slot
 * stays as ethtool's core allocated it, zeroed.
 */
static inline void ethtool_puts(u8 **data, const char *str)
{
	strscpy(*data, str, ETH_GSTRING_LEN);
	*data += ETH_GSTRING_LEN;
}
#endif

#ifndef netif_txq_completed_wake
/*
 * Debian's 6.1 has netif_txq_maybe_stop() but not the BQL-aware wake of
 * 6.3: report the completion to BQL, then wake through
 * netif_txq_maybe_wake(), whose smp_mb() pairs with the barrier in
 * netif_txq_try_stop() as the newer macro's BQL barrier does. It wakes
 * above its threshold, the newer macro at or above: hence the + 1. It
 * does not skip the wake when @pkts is 0, as the newer one does; rnic
 * never reports an empty completion.
 */
#define netif_txq_completed_wake(txq, pkts, bytes, get_desc, start_thrs) \
	({								\
		struct netdev_queue *rnic_txq_ = (txq);			\
									\
		netdev_tx_completed_queue(rnic_txq_, pkts, bytes);	\
		netif_txq_maybe_wake(rnic_txq_, (get_desc) + 1, start_thrs); \
	})
#endif

#ifdef RNIC_HAVE_ALLOC_NETDEV_DUMMY
static inline struct net_device *rnic_alloc_netdev_dummy(int sizeof_priv)
{
	return alloc_netdev_dummy(sizeof_priv);
}

static inline void rnic_free_netdev_dummy(struct net_device *dev)
{
	free_netdev(dev);
}
#else
/*
 * Before alloc_netdev_dummy() (6.10) a NAPI-only netdev is memory the
 * driver allocates and init_dummy_netdev() initialises (it clears the
 * struct net_device, so it cannot serve as an alloc_netdev() setup
 * function). It allocates nothing itself, and free_netdev() would hit
 * its BUG_ON on a NETREG_DUMMY device: kfree() is its release. The
 * private area is where netdev_priv() looks, after the aligned struct.
 */
static inline struct net_device *rnic_alloc_netdev_dummy(int sizeof_priv)
{
	struct net_device *dev;

	dev = kzalloc(ALIGN(sizeof(*dev), NETDEV_ALIGN) + sizeof_priv,
		      GFP_KERNEL);
	if (dev)
		init_dummy_netdev(dev);
	return dev;
}

static inline void rnic_free_netdev_dummy(struct net_device *dev)
{
	kfree(dev);
}
#endif

/*
 * IB_SPEED_XDR (6.7): without it ib_core cannot express 800 Gb/s, and
 * rnic_ib_speed_width() stops at NDR 4X, the fastest rate it can.
 *
 * ib_device_ops.create_cq takes the uverbs_attr_bundle since 6.11
 * (RNIC_HAVE_CREATE_CQ_ATTRS), the caller's ib_udata before: rnic_ib_dev.c
 * adapts the older one.
 */

#endif /* RNIC_COMPAT_H */
