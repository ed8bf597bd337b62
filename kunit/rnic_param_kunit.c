// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit tests for rnic's module parameter parsers: every value a user can
 * put in /etc/modprobe.d/rnic.conf must either be accepted with its
 * documented meaning or refused, never clamped or misread.
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "rnic_param.h"

static void roce_mode_valid(struct kunit *test)
{
	u8 mode = 0;

	KUNIT_EXPECT_EQ(test, rnic_parse_roce_mode("1", &mode), 0);
	KUNIT_EXPECT_EQ(test, mode, RNIC_ROCE_V1);
	KUNIT_EXPECT_EQ(test, rnic_parse_roce_mode("2", &mode), 0);
	KUNIT_EXPECT_EQ(test, mode, RNIC_ROCE_V2);
	KUNIT_EXPECT_EQ(test, rnic_parse_roce_mode("3", &mode), 0);
	KUNIT_EXPECT_EQ(test, mode, RNIC_ROCE_BOTH);
	/* sysfs and modprobe hand over values with a trailing newline */
	KUNIT_EXPECT_EQ(test, rnic_parse_roce_mode("2\n", &mode), 0);
	KUNIT_EXPECT_EQ(test, mode, RNIC_ROCE_V2);
}

static void roce_mode_invalid(struct kunit *test)
{
	static const char * const bad[] = {
		"0", "4", "255", "256", "-1", "", "v2", "2x", " 2", "1.5",
	};
	u8 mode = 0x5a;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_EQ_MSG(test, rnic_parse_roce_mode(bad[i], &mode),
				    -EINVAL, "value \"%s\"", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, mode, 0x5a,
				    "\"%s\" changed the output", bad[i]);
	}
	KUNIT_EXPECT_EQ(test, rnic_parse_roce_mode(NULL, &mode), -EINVAL);
}

static void udp_port(struct kunit *test)
{
	u16 port = 0;

	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("4791", &port), 0);
	KUNIT_EXPECT_EQ(test, port, 4791);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("1021", &port), 0);
	KUNIT_EXPECT_EQ(test, port, 1021);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("1", &port), 0);
	KUNIT_EXPECT_EQ(test, port, 1);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("65535", &port), 0);
	KUNIT_EXPECT_EQ(test, port, 65535);

	port = 7;
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("0", &port), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("65536", &port), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("-4791", &port), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("0x12b7", &port), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_udp_port("", &port), -EINVAL);
	KUNIT_EXPECT_EQ(test, port, 7);
}

static void pfc_prio(struct kunit *test)
{
	s8 prio = 0;
	int i;

	for (i = 0; i <= 7; i++) {
		char buf[4];

		snprintf(buf, sizeof(buf), "%d", i);
		KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio(buf, &prio), 0);
		KUNIT_EXPECT_EQ(test, prio, i);
	}
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("off", &prio), 0);
	KUNIT_EXPECT_EQ(test, prio, RNIC_PFC_OFF);
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("off\n", &prio), 0);
	KUNIT_EXPECT_EQ(test, prio, RNIC_PFC_OFF);

	prio = 3;
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("8", &prio), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("-1", &prio), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("on", &prio), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("offx", &prio), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_pfc_prio("", &prio), -EINVAL);
	KUNIT_EXPECT_EQ(test, prio, 3);
}

static void ring_size(struct kunit *test)
{
	u32 size = 0;

	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("64", 64, 4096, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 64);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("4096", 64, 4096, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 4096);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("512", 64, 4096, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 512);

	size = 1;
	/* not powers of two, out of range, or not numbers */
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("100", 64, 4096, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("32", 64, 4096, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("8192", 64, 4096, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("0", 64, 4096, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("4294967296", 64, 4096, &size),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rnic_parse_ring_size("1k", 64, 4096, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, size, 1);
}

static void defaults(struct kunit *test)
{
	/* The documented defaults, as the module starts with no options. */
	KUNIT_EXPECT_EQ(test, rnic_params.roce_mode, RNIC_ROCE_BOTH);
	KUNIT_EXPECT_EQ(test, rnic_params.roce_udp_port, 4791);
	KUNIT_EXPECT_EQ(test, rnic_params.pfc_prio, RNIC_PFC_OFF);
	KUNIT_EXPECT_EQ(test, rnic_params.eth_ring_size, 256);
	KUNIT_EXPECT_TRUE(test, rnic_params.user_kick_map);
}

static struct kunit_case rnic_param_cases[] = {
	KUNIT_CASE(roce_mode_valid),
	KUNIT_CASE(roce_mode_invalid),
	KUNIT_CASE(udp_port),
	KUNIT_CASE(pfc_prio),
	KUNIT_CASE(ring_size),
	KUNIT_CASE(defaults),
	{}
};

static struct kunit_suite rnic_param_suite = {
	.name = "rnic_param",
	.test_cases = rnic_param_cases,
};

kunit_test_suite(rnic_param_suite);

MODULE_DESCRIPTION("KUnit tests for the rnic RDMA driver");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
