// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of MRC's decision logic.  Each function under test works on
 * plain state and returns a decision, so the tests need no sockets.
 */
#include <kunit/test.h>

#include "psn.h"

static void mrc_psn_wraparound_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, mrc_psn_before(1, 2));
	KUNIT_EXPECT_FALSE(test, mrc_psn_before(2, 2));
	KUNIT_EXPECT_TRUE(test, mrc_psn_before(0xfffffff0u, 5));
	KUNIT_EXPECT_TRUE(test, mrc_psn_after(5, 0xfffffff0u));
	KUNIT_EXPECT_EQ(test, mrc_psn_diff(3, 0xfffffffeu), 5);
	KUNIT_EXPECT_EQ(test, mrc_psn_diff(0xfffffffeu, 3), -5);
	KUNIT_EXPECT_EQ(test, mrc_psn_max(0xffffffffu, 1), 1u);
	KUNIT_EXPECT_EQ(test, mrc_psn_max(7, 6), 7u);
}

static void mrc_psn_window_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, mrc_psn_in_window(100, 100, 1));
	KUNIT_EXPECT_FALSE(test, mrc_psn_in_window(101, 100, 1));
	KUNIT_EXPECT_FALSE(test, mrc_psn_in_window(99, 100, 64));
	KUNIT_EXPECT_TRUE(test, mrc_psn_in_window(3, 0xfffffff0u, 64));
	KUNIT_EXPECT_FALSE(test, mrc_psn_in_window(0x40, 0xfffffff0u, 64));
	KUNIT_EXPECT_FALSE(test, mrc_psn_in_window(5, 5, 0));
}

static struct kunit_case mrc_psn_cases[] = {
	KUNIT_CASE(mrc_psn_wraparound_test),
	KUNIT_CASE(mrc_psn_window_test),
	{}
};

static struct kunit_suite mrc_psn_suite = {
	.name = "mrc_psn",
	.test_cases = mrc_psn_cases,
};

kunit_test_suites(&mrc_psn_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for MRC");
