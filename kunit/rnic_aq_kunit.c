// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for the admin queue's rule on memory (drivers/rnic_aq.c,
 * rnic_dma_may_free()): what a command named is freed only when the
 * device can no longer write it. A timed-out command may still run, and
 * a DESTROY that did not complete leaves the object in use, until the
 * device is stopped (fatal, or reset).
 */
#include <kunit/test.h>

#include "rnic.h"

static void dma_free_after_destroy(struct kunit *test)
{
	static const int errs[] = { -ETIMEDOUT, -EIO, -EBUSY, -ENOENT,
				    -EINVAL, -EPROTO };
	unsigned int i;

	/* a DESTROY that completed gives the memory back */
	KUNIT_EXPECT_TRUE(test, rnic_dma_may_free(0, true, false));
	KUNIT_EXPECT_TRUE(test, rnic_dma_may_free(0, true, true));
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		/* any other answer, or none: the device may still use it */
		KUNIT_EXPECT_FALSE_MSG(test, rnic_dma_may_free(errs[i], true,
							       false),
				       "err %d", errs[i]);
		/* unless it is stopped */
		KUNIT_EXPECT_TRUE_MSG(test, rnic_dma_may_free(errs[i], true,
							      true),
				      "err %d", errs[i]);
	}
}

static void dma_free_after_failed_create(struct kunit *test)
{
	static const int answered[] = { -EIO, -EBUSY, -ENOSPC, -EFAULT,
					-EINVAL, -EPROTO, -EOPNOTSUPP };
	unsigned int i;

	/* a CREATE the device refused, or that was never sent, left nothing */
	for (i = 0; i < ARRAY_SIZE(answered); i++)
		KUNIT_EXPECT_TRUE_MSG(test, rnic_dma_may_free(answered[i], false,
							      false),
				      "err %d", answered[i]);
	/* one that went unanswered may have made the object */
	KUNIT_EXPECT_FALSE(test, rnic_dma_may_free(-ETIMEDOUT, false, false));
	KUNIT_EXPECT_TRUE(test, rnic_dma_may_free(-ETIMEDOUT, false, true));
}

static struct kunit_case rnic_aq_cases[] = {
	KUNIT_CASE(dma_free_after_destroy),
	KUNIT_CASE(dma_free_after_failed_create),
	{}
};

static struct kunit_suite rnic_aq_suite = {
	.name = "rnic_aq",
	.test_cases = rnic_aq_cases,
};

kunit_test_suite(rnic_aq_suite);
