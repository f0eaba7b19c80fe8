// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of MRC's decision logic.  Each function under test works on
 * plain state and returns a decision, so the tests need no sockets.
 */
#include <kunit/test.h>

#include "protocol.h"
#include "psn.h"
#include "rtt.h"
#include "sack.h"

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

static void mrc_rtt_first_sample_test(struct kunit *test)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 1000, 2000000);
	KUNIT_EXPECT_EQ(test, r.rto_us, (u32)MRC_INITIAL_RTO_US);
	mrc_rtt_sample(&r, 10000);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 10000u);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 5000u);
	KUNIT_EXPECT_EQ(test, r.rto_us, 30000u);
	KUNIT_EXPECT_EQ(test, r.min_rtt_us, 10000u);
}

static void mrc_rtt_converges_and_clamps_test(struct kunit *test)
{
	struct mrc_rtt r;
	int i;

	mrc_rtt_init(&r, 5000, 100000);
	for (i = 0; i < 200; i++)
		mrc_rtt_sample(&r, 100);
	/* steady 100 us: SRTT -> 100, RTO clamped up to the minimum */
	KUNIT_EXPECT_LE(test, r.srtt_us, 110u);
	KUNIT_EXPECT_EQ(test, r.rto_us, 5000u);
	KUNIT_EXPECT_EQ(test, r.min_rtt_us, 100u);
	mrc_rtt_sample(&r, 1000000);
	KUNIT_EXPECT_EQ(test, r.rto_us, 100000u);
	KUNIT_EXPECT_EQ(test, r.min_rtt_us, 100u);
}

static void mrc_rtt_backoff_test(struct kunit *test)
{
	struct mrc_rtt r;

	mrc_rtt_init(&r, 5000, 80000);
	mrc_rtt_sample(&r, 2000);	/* RTO = 6000 */
	KUNIT_EXPECT_EQ(test, mrc_rtt_rto(&r, 0), 6000u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_rto(&r, 1), 12000u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_rto(&r, 3), 48000u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_rto(&r, 4), 80000u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_rto(&r, 200), 80000u);
}

static struct kunit_case mrc_rtt_cases[] = {
	KUNIT_CASE(mrc_rtt_first_sample_test),
	KUNIT_CASE(mrc_rtt_converges_and_clamps_test),
	KUNIT_CASE(mrc_rtt_backoff_test),
	{}
};

static struct kunit_suite mrc_rtt_suite = {
	.name = "mrc_rtt",
	.test_cases = mrc_rtt_cases,
};

static void mrc_sack_bitmap_test(struct kunit *test)
{
	u32 held[] = { 12, 11, 74, 75, 9, 12 };
	u32 wrap[] = { 1, 0xffffffffu };

	/* rcv_nxt 10: bit i is PSN 11 + i; 74 is the last representable */
	KUNIT_EXPECT_EQ(test, mrc_sack_bitmap(held, ARRAY_SIZE(held), 10),
			0x3ull | 1ull << 63);
	KUNIT_EXPECT_EQ(test, mrc_sack_bitmap(wrap, ARRAY_SIZE(wrap), 0xfffffffeu), 0x5ull);
	KUNIT_EXPECT_EQ(test, mrc_sack_bitmap(held, 0, 10), 0ull);
}

static struct kunit_case mrc_sack_cases[] = {
	KUNIT_CASE(mrc_sack_bitmap_test),
	{}
};

static struct kunit_suite mrc_sack_suite = {
	.name = "mrc_sack",
	.test_cases = mrc_sack_cases,
};

static void mrc_cookie_roundtrip_test(struct kunit *test)
{
	struct mrc_cookie_in in = {
		.addr = { htonl(0x0a000101) }, .laddr = { htonl(0x0a000201) },
		.sport = 40000, .dport = 5000, .client_id = 0x1234, .client_isn = 77,
	};
	siphash_key_t key = { { 1, 2 } }, other = { { 1, 3 } };
	struct mrc_cookie c;

	mrc_cookie_make(&key, &in, 100, &c);
	KUNIT_EXPECT_NE(test, c.server_id, 0u);
	KUNIT_EXPECT_TRUE(test, mrc_cookie_check(&key, &in, 100, 100, c.server_id,
						 c.server_isn, c.cookie));
	/* still valid in the next slot, not after */
	KUNIT_EXPECT_TRUE(test, mrc_cookie_check(&key, &in, 100, 101, c.server_id,
						 c.server_isn, c.cookie));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, 100, 102, c.server_id,
						  c.server_isn, c.cookie));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&other, &in, 100, 100, c.server_id,
						  c.server_isn, c.cookie));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, 100, 100, c.server_id,
						  c.server_isn, c.cookie ^ 1));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, 100, 100, c.server_id + 1,
						  c.server_isn, c.cookie));
	in.addr[0] ^= htonl(1);	/* a spoofed source gets nowhere */
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, 100, 100, c.server_id,
						  c.server_isn, c.cookie));
}

static struct kunit_case mrc_cookie_cases[] = {
	KUNIT_CASE(mrc_cookie_roundtrip_test),
	{}
};

static struct kunit_suite mrc_cookie_suite = {
	.name = "mrc_cookie",
	.test_cases = mrc_cookie_cases,
};

kunit_test_suites(&mrc_psn_suite, &mrc_rtt_suite, &mrc_sack_suite, &mrc_cookie_suite);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for MRC");
