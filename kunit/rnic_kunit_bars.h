/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BARs of a KUnit case: a doorbell page and BAR0's ivshmem registers
 * in ordinary memory, so that the driver's writel()s and readl()s of the
 * doorbell path land where the case can look.
 */
#ifndef RNIC_KUNIT_BARS_H
#define RNIC_KUNIT_BARS_H

#include <kunit/test.h>

#include "rnic.h"
#include "rnic_verbs.h"

/**
 * rnic_kunit_bars() - give @ibd a BAR0 and @dbp a page, both in memory
 * @test: the case (allocations freed with it)
 * @ibd: the device; its rdev becomes @rdev
 * @rdev: @ibd's PCI function; its ivshmem becomes *@bar0
 * @dbp: the doorbell page to back with *@page, with kick value @kick
 * @kick: the page's kick value
 * @page: the page's memory
 * @bar0: BAR0's registers (256 bytes)
 */
static inline void rnic_kunit_bars(struct kunit *test, struct rnic_ibdev *ibd,
				   struct rnic_dev *rdev,
				   struct rnic_ib_dbp *dbp, u32 kick,
				   struct rnic_db_page **page, u32 **bar0)
{
	*page = kunit_kzalloc(test, sizeof(**page), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *page);
	*bar0 = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *bar0);
	rdev->ivshmem = (void __iomem __force *)*bar0;
	ibd->rdev = rdev;
	dbp->va = (void __iomem __force *)*page;
	dbp->kick = kick;
	spin_lock_init(&dbp->lock);
}

#endif /* RNIC_KUNIT_BARS_H */
