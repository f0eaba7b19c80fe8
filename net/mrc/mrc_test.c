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
#include "ev.h"
#include "cc.h"
#include "autotune.h"
#include "evtrace.h"

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

/* A tail is probed after two RTTs, a lone packet's after 1.5 delayed ACKs too */
static void mrc_pto_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_pto_us(0, 1, 1000), 0u);
	KUNIT_EXPECT_EQ(test, mrc_pto_us(300, 1, 1000), 2100u);
	KUNIT_EXPECT_EQ(test, mrc_pto_us(300, 0, 1000), 2100u);
	KUNIT_EXPECT_EQ(test, mrc_pto_us(300, 2, 1000), 600u);
	KUNIT_EXPECT_EQ(test, mrc_pto_us(20, 5, 1000), (u32)MRC_PTO_MIN_US);
	/* no overflow: an absurd RTT still gives an absurd, not a tiny, wait */
	KUNIT_EXPECT_EQ(test, mrc_pto_us(U32_MAX, 5, 1000), 1U << 30);
	KUNIT_EXPECT_EQ(test, mrc_pto_us(U32_MAX, 1, 1000), (1U << 30) + 1500);
}

/* ACKs of out-of-order data wait a twentieth of the RTT, within bounds */
static void mrc_ooo_ack_delay_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_ooo_ack_delay_us(2000), 100u);
	KUNIT_EXPECT_EQ(test, mrc_ooo_ack_delay_us(100000), (u32)MRC_OOO_ACK_MAX_US);
	KUNIT_EXPECT_EQ(test, mrc_ooo_ack_delay_us(50), (u32)MRC_OOO_ACK_MIN_US);
	KUNIT_EXPECT_EQ(test, mrc_ooo_ack_delay_us(0), (u32)MRC_OOO_ACK_MAX_US);
}

/*
 * The largest recent RTT covers one to two windows of samples (the slowest
 * EV's RTT, here 10 ms), then ages out; never past the RTO's floor
 */
static void mrc_rtt_hi_test(struct kunit *test)
{
	struct mrc_rtt_hi hi = {};
	u64 t = 5000000000ULL;	/* a long uptime */

	/* a sample from long ago is not recent */
	mrc_rtt_hi_sample(&hi, t - 100000, 9000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t, 10000), 0u);
	mrc_rtt_hi_sample(&hi, t, 19000, 10000);
	mrc_rtt_hi_sample(&hi, t + 2000, 12000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 5000, 10000), 19000u);
	/* next window: the last one's maximum still counts */
	mrc_rtt_hi_sample(&hi, t + 11000, 5000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 15000, 10000), 19000u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 19999, 10000), 19000u);
	/* two windows after it, it no longer does */
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 21000, 10000), 5000u);
	mrc_rtt_hi_sample(&hi, t + 25000, 4000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 26000, 10000), 5000u);
	/* no sample in the last window nor the one before it: nothing recent */
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 41000, 10000), 0u);
	/* a sample after a long silence does not bring the old ones back */
	mrc_rtt_hi_sample(&hi, t + 90000, 3000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 91000, 10000), 3000u);
	/* a sample just under two windows later: the first ages out a window on */
	mrc_rtt_hi_sample(&hi, t + 200000, 9000, 10000);
	mrc_rtt_hi_sample(&hi, t + 219999, 1000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 229998, 10000), 1000u);
	/* a stalled guest's sample counts no more than the RTO's floor */
	mrc_rtt_hi_sample(&hi, t + 230000, 300000, 10000);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 231000, 10000), 20000u);
	/* the window is at least MRC_RTT_HI_MIN_WIN_US */
	mrc_rtt_hi_sample(&hi, t + 300000, 700, 100);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 303000, 1000), 700u);
	KUNIT_EXPECT_EQ(test, mrc_rtt_hi(&hi, t + 309000, 1000), 0u);
}

/* A duplicate's echo: one sample per echo, none while an RTO's verdict is due */
static void mrc_dsack_sample_test(struct kunit *test)
{
	struct mrc_dsack_seen seen = {};
	u32 rtt = 0;

	KUNIT_EXPECT_TRUE(test, mrc_dsack_sample(&seen, 4000, 1000, 31000, false,
						 MRC_MAX_RTO_US, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 30000u);
	/* the second copy of a doubled ACK */
	rtt = 0;
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4000, 1000, 31100, false,
						  MRC_MAX_RTO_US, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 0u);
	/* the same tsval on another EV is another duplicate */
	KUNIT_EXPECT_TRUE(test, mrc_dsack_sample(&seen, 4001, 1000, 31100, false,
						 MRC_MAX_RTO_US, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 30100u);
	/* an RTO's verdict is due: no sample, and the echo is spent */
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4002, 2000, 32000, true,
						  MRC_MAX_RTO_US, &rtt));
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4002, 2000, 32100, false,
						  MRC_MAX_RTO_US, &rtt));
	/* above the RTO's ceiling: a replay, no sample */
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4003, 2000, 2000 + 200001, false,
						  200000, &rtt));
	KUNIT_EXPECT_TRUE(test, mrc_dsack_sample(&seen, 4003, 2001, 2000 + 200001, false,
						 200000, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 200000u);
	/* across the 32-bit clock's wrap */
	KUNIT_EXPECT_TRUE(test, mrc_dsack_sample(&seen, 4004, 0xffffff00u, 0x100, false,
						 MRC_MAX_RTO_US, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 0x200u);
	/* from the future (forged): no sample */
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4005, 0x200, 0x100, false,
						  MRC_MAX_RTO_US, &rtt));
	/* a tsval of 0 is no echo */
	KUNIT_EXPECT_FALSE(test, mrc_dsack_sample(&seen, 4006, 0, 0x100, false,
						  MRC_MAX_RTO_US, &rtt));
}

static struct kunit_case mrc_rtt_cases[] = {
	KUNIT_CASE(mrc_rtt_hi_test),
	KUNIT_CASE(mrc_dsack_sample_test),
	KUNIT_CASE(mrc_rtt_first_sample_test),
	KUNIT_CASE(mrc_rtt_converges_and_clamps_test),
	KUNIT_CASE(mrc_rtt_backoff_test),
	KUNIT_CASE(mrc_ooo_ack_delay_test),
	KUNIT_CASE(mrc_pto_test),
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

/*
 * A salted word derives another ID for the same client (the server's way
 * around an ID in use); the echoed word must be the one the cookie covers,
 * and its slot ages as an unsalted one's, across the slot field's wrap too.
 */
static void mrc_cookie_salt_test(struct kunit *test)
{
	struct mrc_cookie_in in = {
		.addr = { htonl(0x0a000101) }, .laddr = { htonl(0x0a000201) },
		.sport = 40000, .dport = 5000, .client_id = 0x1234, .client_isn = 77,
	};
	u32 w0 = mrc_cookie_word(100, 0), w3 = mrc_cookie_word(100, 3);
	u32 top = MRC_COOKIE_SLOT_MASK;
	siphash_key_t key = { { 1, 2 } };
	struct mrc_cookie c0, c3, cw;

	KUNIT_EXPECT_EQ(test, w0, 100u);
	mrc_cookie_make(&key, &in, w0, &c0);
	mrc_cookie_make(&key, &in, w3, &c3);
	KUNIT_EXPECT_NE(test, c0.server_id, c3.server_id);
	KUNIT_EXPECT_TRUE(test, mrc_cookie_check(&key, &in, w3, 100, c3.server_id,
						 c3.server_isn, c3.cookie));
	KUNIT_EXPECT_TRUE(test, mrc_cookie_check(&key, &in, w3, 101, c3.server_id,
						 c3.server_isn, c3.cookie));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, w3, 102, c3.server_id,
						  c3.server_isn, c3.cookie));
	/* another salt echoed with this cookie: no match */
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, mrc_cookie_word(100, 2),
						  100, c3.server_id, c3.server_isn, c3.cookie));
	/* a word from the future is no good */
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, w3, 99, c3.server_id,
						  c3.server_isn, c3.cookie));
	/* the last slot before the field wraps is still valid in slot 0 */
	mrc_cookie_make(&key, &in, mrc_cookie_word(top, 1), &cw);
	KUNIT_EXPECT_TRUE(test, mrc_cookie_check(&key, &in, mrc_cookie_word(top, 1), 0,
						 cw.server_id, cw.server_isn, cw.cookie));
	KUNIT_EXPECT_FALSE(test, mrc_cookie_check(&key, &in, mrc_cookie_word(top, 1), 1,
						  cw.server_id, cw.server_isn, cw.cookie));
}

static struct kunit_case mrc_cookie_cases[] = {
	KUNIT_CASE(mrc_cookie_roundtrip_test),
	KUNIT_CASE(mrc_cookie_salt_test),
	{}
};

static struct kunit_suite mrc_cookie_suite = {
	.name = "mrc_cookie",
	.test_cases = mrc_cookie_cases,
};

#define EV_CAP 16

static void mrc_ev_init_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 50000, .port_max = 50063 };
	struct mrc_ev evs[EV_CAP];
	u32 born = 0;
	int i, j;

	mrc_evs_init(evs, EV_CAP, 8, &r, &born);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, EV_CAP), 8);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_GE(test, evs[i].port, 50000);
		KUNIT_EXPECT_LE(test, evs[i].port, 50063);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, evs[i].port, evs[j].port);
	}
	KUNIT_EXPECT_EQ(test, evs[8].state, (u8)MRC_EV_FREE);
}

static void mrc_ev_pick_weighted_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[EV_CAP];
	int counts[4] = {}, i;
	u32 born = 0;

	mrc_evs_init(evs, EV_CAP, 4, &r, &born);
	evs[0].weight = 1024;
	evs[1].weight = 512;
	evs[2].weight = 256;
	evs[3].weight = 256;
	for (i = 0; i < 2048; i++)
		counts[mrc_ev_pick(evs, EV_CAP, -1)]++;
	/* exact shares: smooth weighted round robin is deterministic */
	KUNIT_EXPECT_EQ(test, counts[0], 1024);
	KUNIT_EXPECT_EQ(test, counts[1], 512);
	KUNIT_EXPECT_EQ(test, counts[2], 256);
	KUNIT_EXPECT_EQ(test, counts[3], 256);
	/* avoid moves a retransmission off its EV; retired EVs get nothing */
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_NE(test, mrc_ev_pick(evs, EV_CAP, 0), 0);
	evs[1].state = MRC_EV_RETIRED;
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_NE(test, mrc_ev_pick(evs, EV_CAP, -1), 1);
}

static void mrc_ev_pick_retransmit_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[EV_CAP];
	int i, idx;
	u32 born = 0;

	mrc_evs_init(evs, EV_CAP, 4, &r, &born);
	/* nothing proven yet: any active EV but the one that lost it */
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_NE(test, mrc_ev_pick_retransmit(evs, EV_CAP, 0), 0);
	/* a pure receiver: the EVs echoed around the newest echo, not an old one */
	mrc_ev_echoed(&evs[1], 100);
	mrc_ev_echoed(&evs[2], 5000);
	mrc_ev_echoed(&evs[3], 5000 - msecs_to_jiffies(MRC_EV_ECHO_TRUST_MS) / 2);
	for (i = 0; i < 40; i++) {
		idx = mrc_ev_pick_retransmit(evs, EV_CAP, 0);
		KUNIT_EXPECT_TRUE(test, idx == 2 || idx == 3);
	}
	for (i = 0; i < EV_CAP; i++)
		evs[i].echoed = false;
	/* slots 1 and 3 have delivered; 0 lost the packet, 2 is fresh */
	evs[1].delivered = 5;
	evs[3].delivered = 1;
	for (i = 0; i < 100; i++) {
		idx = mrc_ev_pick_retransmit(evs, EV_CAP, 0);
		KUNIT_EXPECT_TRUE(test, idx == 1 || idx == 3);
	}
	/* a proven EV retired is no longer a candidate */
	evs[1].state = MRC_EV_RETIRED;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit(evs, EV_CAP, 0), 3);
	/* a resend goes where something sent after the loss arrived */
	evs[3].last_delivered_tx_us = 100;
	evs[2].delivered = 1;
	evs[2].last_delivered_tx_us = 300;
	KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 200, 60), 2);
	/* none did: any that has delivered */
	evs[2].last_delivered_tx_us = 150;
	idx = mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 200, 60);
	KUNIT_EXPECT_TRUE(test, idx == 3 || idx == 2);
	/* both alive: the one on another path than the lost packet's first */
	evs[2].last_delivered_tx_us = 300;
	evs[3].last_delivered_tx_us = 300;
	evs[3].path = 1;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 200, 60),
				3);
	/*
	 * the other path delivered after the loss but not lately, the lost
	 * packet's path lately: the other path (a plane dying link by link)
	 */
	evs[3].last_delivered_tx_us = 250;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60),
				3);
	/* on the other path, one alive lately before one alive since the loss */
	evs[1].state = MRC_EV_ACTIVE;
	evs[1].path = 1;
	evs[1].delivered = 1;
	evs[1].last_delivered_tx_us = 290;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60),
				1);
	evs[1].state = MRC_EV_RETIRED;
	/*
	 * nothing on the other path since the loss (its ACKs on the way): its
	 * EV that has delivered and lost nothing since, before the lost
	 * packet's own path
	 */
	evs[3].last_delivered_tx_us = 150;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60),
				3);
	/* ... unless it lost one since: the one alive lately */
	evs[3].losses = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60), 2);
	evs[3].losses = 0;
	/* ... or its delivery was of a packet sent more than an RTT earlier */
	KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 40), 2);
	/* a fresh EV on the other path (nothing delivered) does not vouch for it */
	evs[1].state = MRC_EV_ACTIVE;
	evs[1].delivered = 0;
	evs[1].last_delivered_tx_us = 0;
	evs[3].losses = 1;
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60),
				2);
	evs[1].state = MRC_EV_RETIRED;
	evs[3].losses = 0;
	/*
	 * the lost packet's path delivered since the loss, not lately: not
	 * alive; any that has delivered (mrc_ev_pick_retransmit()), so the
	 * other path's too
	 */
	evs[2].last_delivered_tx_us = 250;
	for (i = 0, idx = 0; i < 20; i++)
		idx += mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 280, 60) == 3;
	KUNIT_EXPECT_GT(test, idx, 0);
	evs[2].last_delivered_tx_us = 300;
	/* none alive elsewhere, nor within an RTT: one alive on the same path */
	evs[3].last_delivered_tx_us = 100;
	KUNIT_EXPECT_EQ(test, mrc_ev_pick_retransmit_alive(evs, EV_CAP, 0, 200, 200, 60), 2);
	/* the lost packet's EV is gone (its slot reused): any alive EV */
	evs[0].delivered = 1;
	evs[0].last_delivered_tx_us = 300;
	for (i = 0; i < 20; i++) {
		idx = mrc_ev_pick_retransmit_alive(evs, EV_CAP, -1, 200, 200, 60);
		KUNIT_EXPECT_TRUE(test, idx == 0 || idx == 2);
	}
}

/* ACKs go on EVs the peer echoed lately, any EV when too few were. */
static void mrc_ev_pick_ack_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	unsigned long now = 100000, since = now - 50;
	struct mrc_ev evs[EV_CAP];
	int i, idx;
	u32 born = 0;
	u8 turn = 0;

	mrc_evs_init(evs, EV_CAP, 8, &r, &born);
	/* nothing echoed yet: any active EV */
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_GE(test, mrc_ev_pick_ack(evs, EV_CAP, -1, since, MRC_EV_ALL_PATHS,
						      &turn, false), 0);
	/* slots 0..4 echoed lately, 5 long ago, 6 and 7 never */
	for (i = 0; i < 6; i++)
		mrc_ev_echoed(&evs[i], i == 5 ? now - 500 : now - 10);
	for (i = 0; i < 100; i++) {
		idx = mrc_ev_pick_ack(evs, EV_CAP, -1, since, MRC_EV_ALL_PATHS, &turn, false);
		KUNIT_EXPECT_TRUE(test, idx >= 0 && idx <= 4);
	}
	/* a second copy avoids the first */
	for (i = 0; i < 20; i++)
		KUNIT_EXPECT_NE(test, mrc_ev_pick_ack(evs, EV_CAP, 2, since, MRC_EV_ALL_PATHS,
						      &turn, false), 2);
	/* exploring: every active EV gets its turn */
	for (i = 0; i < 8; i++)
		idx = max(idx, mrc_ev_pick_ack(evs, EV_CAP, -1, since, MRC_EV_ALL_PATHS, &turn,
					       true));
	KUNIT_EXPECT_EQ(test, idx, 7);
	/* fewer than MRC_EV_ACK_MIN_ECHOED recent: any EV again */
	for (i = 0; i < 5 - (MRC_EV_ACK_MIN_ECHOED - 1); i++)
		evs[i].echoed = false;
	idx = -1;
	for (i = 0; i < 8; i++)
		idx = max(idx, mrc_ev_pick_ack(evs, EV_CAP, -1, since, MRC_EV_ALL_PATHS, &turn,
					       false));
	KUNIT_EXPECT_EQ(test, idx, 7);
}

/* The slots that @n ACK choices took (a bit each), and how many went on path 1. */
static u32 mrc_ev_ack_slots(struct mrc_ev *evs, unsigned long since, u32 paths, u8 *turn,
			    int n, int *on_path1)
{
	u32 slots = 0;
	int idx;

	*on_path1 = 0;
	while (n--) {
		idx = mrc_ev_pick_ack(evs, EV_CAP, -1, since, paths, turn, false);
		if (idx < 0)
			return 0;
		slots |= BIT(idx);
		*on_path1 += evs[idx].path == 1;
	}
	return slots;
}

/*
 * The paths take turns, whichever has more echoed EVs; each uses its own
 * echoed EVs, or all its EVs while it has fewer than MRC_EV_ACK_MIN_ECHOED
 * (or than half its EVs, but two);
 * a path the peer's packets stopped coming in on gets none.
 */
static void mrc_ev_pick_ack_path_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	unsigned long now = 100000, since = now - 50;
	struct mrc_ev evs[EV_CAP];
	int i, on_path1;
	u32 born = 0;
	u8 turn = 0;

	mrc_evs_init(evs, EV_CAP, 13, &r, &born);
	/* slots 0..7 on path 0, all echoed; 8..12 on path 1, one echoed */
	for (i = 0; i < 13; i++) {
		evs[i].path = i >= 8;
		if (i < 9)
			mrc_ev_echoed(&evs[i], now - 10);
	}
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, MRC_EV_ALL_PATHS, &turn, 32,
					       &on_path1), 0x1fff);
	KUNIT_EXPECT_EQ(test, on_path1, 16);
	/* path 1 with four of five echoed (two would do): only those */
	for (i = 9; i < 12; i++)
		mrc_ev_echoed(&evs[i], now - 10);
	evs[0].echoed = false;
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, MRC_EV_ALL_PATHS, &turn, 32,
					       &on_path1), 0xffe);
	KUNIT_EXPECT_EQ(test, on_path1, 16);
	/* only path 0 lately heard from: path 1 gets nothing */
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, BIT(0), &turn, 32, &on_path1),
			0xfe);
	KUNIT_EXPECT_EQ(test, on_path1, 0);
	/* ... unless no EV of path 0 is active */
	for (i = 0; i < 8; i++)
		evs[i].state = MRC_EV_RETIRED;
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, BIT(0), &turn, 8, &on_path1),
			0xf00);
	/* a second copy: on the other path, never on the first's slot */
	for (i = 0; i < 8; i++)
		evs[i].state = MRC_EV_ACTIVE;
	for (i = 0; i < 16; i++) {
		int first = mrc_ev_pick_ack(evs, EV_CAP, -1, since, MRC_EV_ALL_PATHS, &turn,
					    false);
		int second;

		KUNIT_ASSERT_GE(test, first, 0);
		second = mrc_ev_pick_ack(evs, EV_CAP, first, since, MRC_EV_ALL_PATHS, &turn,
					 false);
		KUNIT_ASSERT_GE(test, second, 0);
		KUNIT_EXPECT_NE(test, evs[first].path, evs[second].path);
	}
	/* few EVs a path: half of them echoed is enough (two of three here) */
	for (i = 0; i < 13; i++)
		evs[i].state = i < 3 || i >= 8 ? MRC_EV_ACTIVE : MRC_EV_RETIRED;
	evs[0].echoed = false;
	mrc_ev_echoed(&evs[1], now - 10);
	mrc_ev_echoed(&evs[2], now - 10);
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, BIT(0), &turn, 16, &on_path1),
			0x6);
	/* one of three: all three */
	evs[1].echoed = false;
	KUNIT_EXPECT_EQ(test, mrc_ev_ack_slots(evs, since, BIT(0), &turn, 16, &on_path1),
			0x7);
}

/* The path of a packet's address pair; the hint first, -1 for a stranger. */
static void mrc_paths_find_test(struct kunit *test)
{
	struct mrc_path paths[3] = {};
	union mrc_addr local = {}, remote = {};
	int i;

	for (i = 0; i < 3; i++) {
		paths[i].local.v4.sin_family = AF_INET;
		paths[i].remote.v4.sin_family = AF_INET;
		paths[i].local.v4.sin_addr.s_addr = htonl(0x0a000001 + (i << 8));
		paths[i].remote.v4.sin_addr.s_addr = htonl(0x0a000002 + (i << 8));
	}
	local = paths[1].local;
	remote = paths[1].remote;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, mrc_paths_find(paths, 3, i, &local, &remote), 1);
	/* a known remote toward another of our addresses is another pair */
	local = paths[2].local;
	KUNIT_EXPECT_EQ(test, mrc_paths_find(paths, 3, 1, &local, &remote), -1);
	/* only the first npaths count */
	remote = paths[2].remote;
	KUNIT_EXPECT_EQ(test, mrc_paths_find(paths, 3, 0, &local, &remote), 2);
	KUNIT_EXPECT_EQ(test, mrc_paths_find(paths, 2, 2, &local, &remote), -1);
	/* another family never matches */
	remote.v6.sin6_family = AF_INET6;
	KUNIT_EXPECT_EQ(test, mrc_paths_find(paths, 3, 2, &local, &remote), -1);
}

/* The paths the peer's packets lately came in on */
static void mrc_paths_rx_live_test(struct kunit *test)
{
	unsigned long now = 100000, trust = msecs_to_jiffies(MRC_EV_ECHO_TRUST_MS);
	struct mrc_path paths[3] = {};

	/* nothing came in: every path */
	KUNIT_EXPECT_EQ(test, mrc_paths_rx_live(paths, 3, now, 2), MRC_EV_ALL_PATHS);
	paths[0].rx = true;
	paths[1].rx = true;
	paths[0].rx_at = now - 1;
	paths[1].rx_at = now - 3;
	KUNIT_EXPECT_EQ(test, mrc_paths_rx_live(paths, 3, now, 2), BIT(0) | BIT(1));
	/* path 1 silent for more than the lag while path 0 goes on */
	paths[0].rx_at = now;
	KUNIT_EXPECT_EQ(test, mrc_paths_rx_live(paths, 3, now, 2), BIT(0));
	/* both silent longer than an echo is trusted: no knowledge, every path */
	KUNIT_EXPECT_EQ(test, mrc_paths_rx_live(paths, 3, now + trust + 1, 2),
			MRC_EV_ALL_PATHS);
	/* jiffies wrapping between the arrivals */
	paths[0].rx_at = 1;
	paths[1].rx_at = ULONG_MAX;
	KUNIT_EXPECT_EQ(test, mrc_paths_rx_live(paths, 3, 2, 2), BIT(0) | BIT(1));
}

static void mrc_ev_weight_test(struct kunit *test)
{
	struct mrc_ev ev = { .state = MRC_EV_ACTIVE, .srtt_us = 1000 };

	/* a fresh EV probes with the least share until it delivers */
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), MRC_EV_WEIGHT_MIN);
	ev.delivered = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), MRC_EV_WEIGHT_MAX);
	ev.srtt_us = 4000;	/* queueing: a quarter of the share */
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), 256);
	ev.srtt_us = 1000;
	ev.ce_ewma = 512;	/* half the recent deliveries marked: half */
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), 512);
	ev.ce_ewma = 0;
	ev.losses = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), 256);
	ev.srtt_us = 1000000;	/* never zero */
	KUNIT_EXPECT_EQ(test, mrc_ev_weight(&ev, 1000), MRC_EV_WEIGHT_MIN);
}

/* A connection's first EVs: each tried at once, replacements are not */
static void mrc_ev_untried_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[16];
	bool seen[16] = {};
	int counts[16];
	u32 born = 0;
	int i, idx, fresh;

	mrc_evs_init(evs, 16, 8, &r, &born);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_TRUE(test, evs[i].untried);
		KUNIT_EXPECT_EQ(test, evs[i].weight, MRC_EV_WEIGHT_MAX);
	}
	/* EV 0 delivered already: the first 8 choices still take all 8 */
	mrc_ev_sent(&evs[0]);
	mrc_ev_delivered(&evs[0], 10, false, 100);
	for (i = 0; i < 8; i++) {
		idx = mrc_ev_pick(evs, 16, -1);
		KUNIT_ASSERT_GE(test, idx, 0);
		KUNIT_EXPECT_FALSE(test, seen[idx] && idx);
		seen[idx] = true;
		mrc_ev_sent(&evs[idx]);
	}
	for (i = 1; i < 8; i++) {
		KUNIT_EXPECT_TRUE(test, seen[i]);
		/* tried, not delivered yet: the least share */
		KUNIT_EXPECT_FALSE(test, evs[i].untried);
		KUNIT_EXPECT_EQ(test, evs[i].weight, MRC_EV_WEIGHT_MIN);
		KUNIT_EXPECT_EQ(test, evs[i].sent, 1u);
	}
	/*
	 * Nothing delivers: each of the first 16 choices of 8 EVs takes every
	 * EV twice (the credit gathered at the full weight went with the first
	 * packet; kept, the last EV tried took 9 of the 16).
	 */
	mrc_evs_init(evs, 16, 8, &r, &born);
	memset(counts, 0, sizeof(counts));
	for (i = 0; i < 16; i++) {
		idx = mrc_ev_pick(evs, 16, -1);
		KUNIT_ASSERT_GE(test, idx, 0);
		KUNIT_ASSERT_LT(test, idx, 8);
		counts[idx]++;
		mrc_ev_sent(&evs[idx]);
	}
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, counts[i], 2);
	/* a replacement's path may be the dead one: never untried */
	mrc_evs_init(evs, 16, 8, &r, &born);
	mrc_ev_sent(&evs[3]);
	fresh = mrc_ev_retire(evs, 16, 3, &r, &born, 1000, true);
	KUNIT_ASSERT_GE(test, fresh, 0);
	KUNIT_EXPECT_FALSE(test, evs[fresh].untried);
	KUNIT_EXPECT_EQ(test, evs[fresh].weight, MRC_EV_WEIGHT_MIN);
	/* one that carried nothing is retired with its path (silent, down) */
	KUNIT_EXPECT_EQ(test, mrc_ev_retire(evs, 16, 5, &r, &born, 1000, false), -1);
	KUNIT_EXPECT_TRUE(test, evs[5].untried);
	mrc_ev_readmit(evs, 16, 5, 8);
	KUNIT_EXPECT_EQ(test, evs[5].weight, MRC_EV_WEIGHT_MAX);
	/* its first packet ends it */
	mrc_ev_sent(&evs[5]);
	KUNIT_EXPECT_EQ(test, evs[5].weight, MRC_EV_WEIGHT_MIN);
}

static void mrc_ev_retire_readmit_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[8];
	u32 born = 0;
	u16 old;
	int fresh, freed;

	mrc_evs_init(evs, 8, 4, &r, &born);
	old = evs[2].port;
	KUNIT_EXPECT_FALSE(test, mrc_ev_lost(&evs[2], 2));
	KUNIT_EXPECT_TRUE(test, mrc_ev_lost(&evs[2], 2));
	fresh = mrc_ev_retire(evs, 8, 2, &r, &born, 1000, true);
	KUNIT_EXPECT_EQ(test, fresh, 4);
	KUNIT_EXPECT_EQ(test, evs[2].state, (u8)MRC_EV_RETIRED);
	KUNIT_EXPECT_EQ(test, evs[2].port, old);
	KUNIT_EXPECT_NE(test, evs[4].port, old);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 8), 4);
	/* marks pull the recent CE fraction up, clean deliveries down */
	for (int i = 0; i < 40; i++)
		mrc_ev_delivered(&evs[1], 10, true, 100);
	KUNIT_EXPECT_GT(test, evs[1].ce_ewma, 900);
	KUNIT_EXPECT_LT(test, evs[1].weight, 128);
	for (int i = 0; i < 40; i++)
		mrc_ev_delivered(&evs[1], 10, false, 100);
	KUNIT_EXPECT_LT(test, evs[1].ce_ewma, 100);
	/* a delivery resets the loss run */
	mrc_ev_delivered(&evs[0], 10, false, 100);
	mrc_ev_rtt_sample(&evs[0], 100, 100);
	KUNIT_EXPECT_EQ(test, evs[0].srtt_us, 100u);
	KUNIT_EXPECT_EQ(test, evs[0].losses, 0);
	/* re-admission restores the port and frees the youngest replacement */
	freed = mrc_ev_readmit(evs, 8, 2, 4);
	KUNIT_EXPECT_EQ(test, freed, 4);
	KUNIT_EXPECT_EQ(test, evs[2].state, (u8)MRC_EV_ACTIVE);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 8), 4);
}

/* Planes: EVs shared among paths, replacements and re-admission per path */
static void mrc_ev_paths_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[16];
	u32 born = 0;
	int i, fresh, per_path[2] = {};

	mrc_evs_init(evs, 16, 8, &r, &born);
	mrc_evs_spread(evs, 16, 2, 500);
	for (i = 0; i < 16; i++) {
		if (evs[i].state == MRC_EV_FREE)
			continue;
		per_path[evs[i].path]++;
		/* the announced path waits for a probe's answer */
		KUNIT_EXPECT_EQ(test, evs[i].state,
				(u8)(evs[i].path ? MRC_EV_RETIRED : MRC_EV_ACTIVE));
		if (evs[i].path)
			KUNIT_EXPECT_EQ(test, evs[i].next_probe, 500ul);
	}
	KUNIT_EXPECT_EQ(test, per_path[0], 4);
	KUNIT_EXPECT_EQ(test, per_path[1], 4);
	/* probes answered: all of path 1 active, nothing of path 0 freed */
	for (i = 0; i < 16; i++)
		if (evs[i].path == 1 && evs[i].state == MRC_EV_RETIRED)
			KUNIT_EXPECT_EQ(test, mrc_ev_readmit(evs, 16, i, 4), -1);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 8);
	/* a replacement stays on its EV's plane (EV 1 lost what it carried) */
	mrc_ev_sent(&evs[1]);
	fresh = mrc_ev_retire(evs, 16, 1, &r, &born, 1000, true);
	KUNIT_ASSERT_GE(test, fresh, 0);
	KUNIT_EXPECT_EQ(test, evs[fresh].path, evs[1].path);
	/* re-admitting EV 1 frees the youngest of its own path only */
	i = mrc_ev_readmit(evs, 16, 1, 4);
	KUNIT_EXPECT_EQ(test, i, fresh);
	/* it never delivered: a fresh EV's share, not the full one */
	KUNIT_EXPECT_EQ(test, evs[1].weight, MRC_EV_WEIGHT_MIN);
	/* one path: nothing moves */
	mrc_evs_init(evs, 16, 8, &r, &born);
	mrc_evs_spread(evs, 16, 1, 0);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 8);
}

static void mrc_ev_loss_rules_test(struct kunit *test)
{
	/* same path: a later packet delivered means the earlier is lost */
	KUNIT_EXPECT_TRUE(test, mrc_ev_loss_same_path(1000, 1500, 200));
	KUNIT_EXPECT_FALSE(test, mrc_ev_loss_same_path(1000, 1100, 200));
	KUNIT_EXPECT_FALSE(test, mrc_ev_loss_same_path(1500, 1000, 200));
	KUNIT_EXPECT_TRUE(test, mrc_ev_loss_same_path(0xfffffff0u, 0x100000000ull + 300, 200));
	/* across EVs: a slow path's packet is judged by its own RTT */
	KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(30000, 1000, 2000, 31000, 4000));
	KUNIT_EXPECT_TRUE(test, mrc_ev_loss_rack(40000, 1000, 2000, 31000, 4000));
	/* nothing sent later was delivered: no verdict yet */
	KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(900000, 5000, 2000, 1000, 4000));
	/* only a loss on a path that still delivers shrinks the window */
	KUNIT_EXPECT_TRUE(test, mrc_ev_loss_is_congestion(true, true));
	KUNIT_EXPECT_FALSE(test, mrc_ev_loss_is_congestion(false, true));
	KUNIT_EXPECT_TRUE(test, mrc_ev_loss_is_congestion(false, false));
	/* an RTO resets the window only for EVs whose path once worked */
	KUNIT_EXPECT_TRUE(test, mrc_ev_rto_is_congestion(3));
	KUNIT_EXPECT_FALSE(test, mrc_ev_rto_is_congestion(0));
}

/*
 * An RTO retires no proven EV (it may be a stall, not a dead path) unless a
 * second one follows with no delivery between; fresh EVs go at once.
 */
static void mrc_ev_rto_lost_test(struct kunit *test)
{
	struct mrc_ev proven = { .state = MRC_EV_ACTIVE, .delivered = 9, .srtt_us = 100 };
	struct mrc_ev fresh = { .state = MRC_EV_ACTIVE };
	int i;

	proven.weight = mrc_ev_weight(&proven, 100);
	KUNIT_EXPECT_EQ(test, proven.weight, MRC_EV_WEIGHT_MAX);
	/* a first RTO, however many of its packets were outstanding: a suspect */
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, mrc_ev_rto_lost(&proven, 1, 1));
	KUNIT_EXPECT_EQ(test, proven.state, (u8)MRC_EV_ACTIVE);
	KUNIT_EXPECT_EQ(test, proven.lost, 5u);
	KUNIT_EXPECT_EQ(test, proven.losses, 1);
	KUNIT_EXPECT_EQ(test, proven.weight, MRC_EV_WEIGHT_MAX / 4);
	/* the next per-EV loss retires it, as for any suspect */
	KUNIT_EXPECT_TRUE(test, mrc_ev_lost(&proven, 1));
	/* a second RTO in a row: the proven paths went silent too */
	proven.losses = 0;
	KUNIT_EXPECT_TRUE(test, mrc_ev_rto_lost(&proven, 1, 2));
	KUNIT_EXPECT_FALSE(test, mrc_ev_rto_lost(&proven, 3, 2));
	/* an EV that never delivered is charged as any loss */
	KUNIT_EXPECT_TRUE(test, mrc_ev_rto_lost(&fresh, 1, 1));
}

/*
 * Times near the 32-bit microsecond wraps (2^31: the sign of a 32-bit
 * difference; 2^32: the wrap itself), as a host up for 36 and 72 minutes
 * has them (or the test_clock_start_us knob gives them).
 */
#define T31	BIT_ULL(31)
#define T32	BIT_ULL(32)

static void mrc_time_rack_test(struct kunit *test)
{
	/* variables, not constants: the helpers take the internal clock's type */
	u64 starts[] = { T31 - 3000, T32 - 3000, T31 + 5000, T32 + 5000 };
	u64 never = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		u64 tx = starts[i], later = tx + 2000, now = tx + 50000;

		/* nothing delivered yet: no packet is lost, however old */
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(now, tx, never, 1000, 4000));
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(tx + 36 * 60 * USEC_PER_SEC, tx,
							  never, 1000, 4000));
		/* a later packet delivered, this one overdue: lost */
		KUNIT_EXPECT_TRUE(test, mrc_ev_loss_rack(now, tx, later, 1000, 4000));
		/* a later packet delivered, this one not yet overdue */
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(tx + 4000, tx, later, 1000, 4000));
		/* only earlier packets delivered: no verdict */
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_rack(now, tx, tx - 1000, 1000, 4000));
	}
}

static void mrc_time_ev_stale_test(struct kunit *test)
{
	u64 starts[] = { 1000, T31 - 3000, T32 - 3000 };
	u64 idle = T31 + 1000;	/* an EV idle for 36 minutes */
	struct mrc_ev ev;
	int i;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		u64 t = starts[i];

		/* the newest delivery of an idle EV is older than anything sent now */
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_same_path(t + idle, t, 200));
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_same_path(t + 2 * idle, t, 200));
		/* across the wrap: a later packet of the EV delivered */
		KUNIT_EXPECT_TRUE(test, mrc_ev_loss_same_path(t, t + 6000, 200));
		KUNIT_EXPECT_FALSE(test, mrc_ev_loss_same_path(t, t + 100, 200));

		memset(&ev, 0, sizeof(ev));
		ev.state = MRC_EV_ACTIVE;
		mrc_ev_delivered(&ev, t, false, 100);
		mrc_ev_delivered(&ev, t - 500, false, 100);	/* reordered: older */
		KUNIT_EXPECT_EQ(test, ev.last_delivered_tx_us, t);
		mrc_ev_delivered(&ev, t + 6000, false, 100);	/* across the wrap */
		KUNIT_EXPECT_EQ(test, ev.last_delivered_tx_us, t + 6000);
		mrc_ev_delivered(&ev, t + 6000 + idle, false, 100);	/* after 36 min idle */
		KUNIT_EXPECT_EQ(test, ev.last_delivered_tx_us, t + 6000 + idle);
	}
}

static void mrc_time_rtt_echo_test(struct kunit *test)
{
	u64 starts[] = { T31 - 3000, T32 - 3000, T31 + 5000, T32 + 5000 };
	u32 offsets[] = { 0, 0x7fffffff, 0x80000000, 0xfffff000, 12345 };
	u32 rtt = 0;
	int i, j;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		for (j = 0; j < ARRAY_SIZE(offsets); j++) {
			u32 sent = mrc_ts_clock(offsets[j], starts[i]);
			u32 later = mrc_ts_clock(offsets[j], starts[i] + 5000);

			KUNIT_EXPECT_NE(test, sent, 0u);	/* 0 means "no echo" */
			rtt = 0;
			KUNIT_EXPECT_TRUE(test, mrc_rtt_from_echo(later, sent, &rtt));
			KUNIT_EXPECT_LE(test, abs((int)rtt - 5000), 1);
			/* an echo from the future is refused */
			KUNIT_EXPECT_FALSE(test, mrc_rtt_from_echo(sent, later, &rtt));
			/* one older than the bound too */
			later = mrc_ts_clock(offsets[j], starts[i] + MRC_RTT_MAX_ECHO_US + 1);
			KUNIT_EXPECT_FALSE(test, mrc_rtt_from_echo(later, sent, &rtt));
		}
	}
	/* right across the 32-bit wrap of the wire clock */
	KUNIT_EXPECT_TRUE(test, mrc_rtt_from_echo(100, 0xffffff00u, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 356u);
	KUNIT_EXPECT_TRUE(test, mrc_rtt_from_echo(0x80000100u, 0x7fffff00u, &rtt));
	KUNIT_EXPECT_EQ(test, rtt, 512u);
	KUNIT_EXPECT_FALSE(test, mrc_rtt_from_echo(100, 0, &rtt));
	/* connections' wire clocks differ: the offset, not the host's clock */
	KUNIT_EXPECT_EQ(test, mrc_ts_clock(1000, T32 + 5), 1005u);
	KUNIT_EXPECT_EQ(test, mrc_ts_clock(0, T32), 1u);
}

/* Bursts: a window in at least 16 bursts, within the limit, never 0 */
static void mrc_ev_burst_len_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(16, 64, 0, 44), 1U);	/* initial window */
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(160, 64, 0, 44), 10U);
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(100000, 64, 0, 44), 44U);
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(100000, 64, 0, 1), 1U);	/* per-packet setting */
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(100000, 64, 0, 0), 1U);
	/* fewer EVs than the spread: still two bursts per EV */
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(40, 2, 0, 44), 10U);
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(40, 0, 0, 44), 20U);
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(0, 64, 0, 44), 1U);
	/* EVs still to deliver: two bursts per EV, so each is chosen soon */
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(1280, 64, 1, 44), 10U);
	KUNIT_EXPECT_EQ(test, mrc_ev_burst_len(1280, 64, 0, 44), 44U);
}

/*
 * Bursts stay short for EVs yet to deliver while fewer than half of their
 * path's delivered: a new plane's or a connection's first, not a working
 * path's replacements.  The same pass finds the slowest active EV's RTT.
 */
static void mrc_ev_survey_test(struct kunit *test)
{
	struct mrc_ev evs[8] = {};
	u32 slowest = 0;
	int i;

	for (i = 0; i < 8; i++) {
		evs[i].state = MRC_EV_ACTIVE;
		evs[i].path = i < 4 ? 0 : 1;
	}
	/* a connection's start: nothing delivered anywhere */
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 8);
	/* one of path 0's four: its three others still count */
	evs[0].delivered = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 7);
	/* half of path 0's: proven, its fresh ones no longer count */
	evs[1].delivered = 2;
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 4);
	evs[5].delivered = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 3);
	evs[6].delivered = 1;
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 0);
	/* a retired EV proves nothing: path 1 has 1 of 3 again */
	evs[5].state = MRC_EV_RETIRED;
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 8, &slowest), 2);
	KUNIT_EXPECT_EQ(test, mrc_ev_survey(evs, 0, &slowest), 0);

	/* the same pass: the slowest active EV's RTT, else the connection's */
	slowest = 5000;
	evs[2].srtt_us = 9000;
	evs[5].srtt_us = 40000;	/* retired: not counted */
	mrc_ev_survey(evs, 8, &slowest);
	KUNIT_EXPECT_EQ(test, slowest, 9000u);
	slowest = 12000;
	mrc_ev_survey(evs, 8, &slowest);
	KUNIT_EXPECT_EQ(test, slowest, 12000u);
}

/*
 * Between surveys a sample keeps the largest active srtt when it can: a
 * rise is known at once; a fall of the EV that held it needs a survey.
 */
static void mrc_ev_srtt_max_update_test(struct kunit *test)
{
	struct mrc_ev evs[4] = {};
	u32 max = 0, survey;
	int i;

	for (i = 0; i < 4; i++) {
		evs[i].state = MRC_EV_ACTIVE;
		evs[i].srtt_us = 1000 * (i + 1);
	}
	mrc_ev_survey(evs, 4, &max);
	KUNIT_ASSERT_EQ(test, max, 4000u);
	/* another EV passes the maximum: no survey needed, and it is exact */
	KUNIT_EXPECT_FALSE(test, mrc_ev_srtt_max_update(&max, 2000, 5000));
	evs[1].srtt_us = 5000;
	survey = 0;
	mrc_ev_survey(evs, 4, &survey);
	KUNIT_EXPECT_EQ(test, max, survey);
	/* one below the maximum moves, staying below: nothing changes */
	KUNIT_EXPECT_FALSE(test, mrc_ev_srtt_max_update(&max, 1000, 1500));
	KUNIT_EXPECT_EQ(test, max, 5000u);
	/* the holder rises: still exact */
	KUNIT_EXPECT_FALSE(test, mrc_ev_srtt_max_update(&max, 5000, 6000));
	KUNIT_EXPECT_EQ(test, max, 6000u);
	/* the holder falls: only a survey knows the new maximum */
	KUNIT_EXPECT_TRUE(test, mrc_ev_srtt_max_update(&max, 6000, 3500));
	/* a first sample (srtt 0 before) never asks for one */
	max = 4000;
	KUNIT_EXPECT_FALSE(test, mrc_ev_srtt_max_update(&max, 0, 300));
	KUNIT_EXPECT_EQ(test, max, 4000u);
	/* equal to the maximum: one of two holders may remain, survey */
	KUNIT_EXPECT_TRUE(test, mrc_ev_srtt_max_update(&max, 4000, 3000));
}

/*
 * A path that went silent while another works: its EVs are retired without
 * replacement, one scout keeps probing it often, and an answer brings
 * every EV of the path back to probing at once.
 */
static void mrc_ev_silent_path_test(struct kunit *test)
{
	struct mrc_ev_range r = { .port_min = 40000, .port_max = 60000 };
	struct mrc_ev evs[16];
	u32 born = 0;
	int i, fresh, scout = -1;

	mrc_evs_init(evs, 16, 8, &r, &born);
	mrc_evs_spread(evs, 16, 2, 0);
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_RETIRED)
			mrc_ev_readmit(evs, 16, i, 4);
	/* both paths deliver, path 1 on a 5 ms slower path: not silent */
	for (i = 0; i < 16; i++) {
		if (evs[i].state != MRC_EV_ACTIVE)
			continue;
		evs[i].srtt_us = evs[i].path ? 6000 : 1000;
		mrc_ev_delivered(&evs[i], evs[i].path ? 95000 : 100000, false, 2000);
	}
	KUNIT_EXPECT_FALSE(test, mrc_ev_path_silent(evs, 16, 0, 2000));
	KUNIT_EXPECT_FALSE(test, mrc_ev_path_silent(evs, 16, 1, 2000));
	/*
	 * the margin takes the path's mean RTT, not its slowest EV's: one EV
	 * swollen to 60 ms does not stretch it to 120 ms
	 */
	for (i = 0; i < 16 && !(evs[i].state == MRC_EV_ACTIVE && evs[i].path); i++)
		;
	KUNIT_ASSERT_LT(test, i, 16);
	evs[i].srtt_us = 60000;
	for (int j = 0; j < 16; j++)
		if (evs[j].state == MRC_EV_ACTIVE && !evs[j].path)
			mrc_ev_delivered(&evs[j], 95000 + 60000, false, 2000);
	KUNIT_EXPECT_TRUE(test, mrc_ev_path_silent(evs, 16, 1, 2000));
	evs[i].srtt_us = 6000;
	for (int j = 0; j < 16; j++)
		if (evs[j].state == MRC_EV_ACTIVE && !evs[j].path)
			evs[j].last_delivered_tx_us = 100000;
	/*
	 * path 0 keeps delivering, path 1 stopped at 95 ms: silent past
	 * MRC_PATH_SILENT_RTTS of its 6 ms RTT
	 */
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_ACTIVE && !evs[i].path)
			mrc_ev_delivered(&evs[i], 95000 + MRC_PATH_SILENT_RTTS * 6000, false, 2000);
	KUNIT_EXPECT_FALSE(test, mrc_ev_path_silent(evs, 16, 1, 2000));
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_ACTIVE && !evs[i].path)
			mrc_ev_delivered(&evs[i], 95001 + MRC_PATH_SILENT_RTTS * 6000, false, 2000);
	KUNIT_EXPECT_TRUE(test, mrc_ev_path_silent(evs, 16, 1, 2000));
	KUNIT_EXPECT_FALSE(test, mrc_ev_path_silent(evs, 16, 0, 2000));
	/* retired without replacement: the path empties, path 0 keeps its 4 */
	for (i = 0; i < 16; i++) {
		if (evs[i].state != MRC_EV_ACTIVE || !evs[i].path)
			continue;
		KUNIT_EXPECT_EQ(test, mrc_ev_probe_backoff_max(evs, 16, i), MRC_EV_PROBE_BACKOFF);
		KUNIT_EXPECT_EQ(test, mrc_ev_retire(evs, 16, i, &r, &born, 50, false), -1);
		if (scout < 0)
			scout = i;
	}
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 4);
	/* one scout probes often, the others back off as before */
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_RETIRED)
			KUNIT_EXPECT_EQ(test, mrc_ev_probe_backoff_max(evs, 16, i),
					i == scout ? MRC_EV_SCOUT_BACKOFF : MRC_EV_PROBE_BACKOFF);
	/* with no other path working, nothing is silent: path 0 is replaced */
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_ACTIVE)
			KUNIT_EXPECT_FALSE(test, mrc_ev_path_silent(evs, 16, 0, 2000));
	/* path 0's churn fills the free slots, then evicts its own, never path 1's */
	for (int round = 0; round < 24; round++) {
		int slot = -1;

		for (i = 0; i < 16 && slot < 0; i++)
			if (evs[i].state == MRC_EV_ACTIVE && !evs[i].path)
				slot = mrc_ev_retire(evs, 16, i, &r, &born, 50, true);
		KUNIT_ASSERT_GE(test, slot, 0);
		KUNIT_EXPECT_EQ(test, evs[slot].path, 0);
	}
	for (i = 0, fresh = 0; i < 16; i++)
		fresh += evs[i].state == MRC_EV_RETIRED && evs[i].path == 1;
	KUNIT_EXPECT_EQ(test, fresh, 4);
	KUNIT_EXPECT_EQ(test, evs[scout].state, (u8)MRC_EV_RETIRED);
	/* the scout's answer: every EV of path 1 is due for a probe now */
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_RETIRED)
			evs[i].next_probe = 5000;
	KUNIT_EXPECT_TRUE(test, mrc_ev_path_revived(evs, 16, 1, 700));
	mrc_ev_readmit(evs, 16, scout, 4);
	for (i = 0; i < 16; i++)
		if (evs[i].state == MRC_EV_RETIRED && evs[i].path == 1)
			KUNIT_EXPECT_EQ(test, evs[i].next_probe, 700ul);
	/* the path has an active EV again: the next answer changes nothing */
	KUNIT_EXPECT_FALSE(test, mrc_ev_path_revived(evs, 16, 1, 900));
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 5);
}

/* Karn's ambiguity: a resend acknowledged sooner than a round trip is not credited */
static void mrc_ev_delivery_known_test(struct kunit *test)
{
	/* sent once: always the one that arrived */
	KUNIT_EXPECT_TRUE(test, mrc_ev_delivery_known(1, 1000, 1001, 500, true));
	/* resent 100 us ago, the path's RTT at least 500 us: the original */
	KUNIT_EXPECT_FALSE(test, mrc_ev_delivery_known(2, 1000, 1100, 500, false));
	/* a round trip after the resend: credited */
	KUNIT_EXPECT_TRUE(test, mrc_ev_delivery_known(2, 1000, 1500, 500, false));
	/* ... unless the ACK echoes a packet sent before the resend (Eifel) */
	KUNIT_EXPECT_FALSE(test, mrc_ev_delivery_known(2, 1000, 9000, 500, true));
	/* no RTT sample yet: nothing to tell them apart by */
	KUNIT_EXPECT_TRUE(test, mrc_ev_delivery_known(3, 1000, 1000, 0, false));
}

/* RACK's reordering window widens per round with a spurious resend */
static void mrc_rack_reo_round_test(struct kunit *test)
{
	u8 mult = 1, quiet = 0;
	int i;

	/* rounds without a spurious resend leave the base */
	mrc_rack_reo_round(&mult, &quiet, false);
	KUNIT_EXPECT_EQ(test, mult, 1);
	/* one step per round with one, to the cap */
	for (i = 0; i < 20; i++)
		mrc_rack_reo_round(&mult, &quiet, true);
	KUNIT_EXPECT_EQ(test, mult, MRC_REO_MULT_MAX);
	/* one step back per MRC_REO_QUIET_ROUNDS quiet rounds */
	for (i = 0; i < MRC_REO_QUIET_ROUNDS - 1; i++)
		mrc_rack_reo_round(&mult, &quiet, false);
	KUNIT_EXPECT_EQ(test, mult, MRC_REO_MULT_MAX);
	mrc_rack_reo_round(&mult, &quiet, false);
	KUNIT_EXPECT_EQ(test, mult, MRC_REO_MULT_MAX - 1);
	/* a spurious resend restarts the count */
	for (i = 0; i < MRC_REO_QUIET_ROUNDS - 1; i++)
		mrc_rack_reo_round(&mult, &quiet, false);
	mrc_rack_reo_round(&mult, &quiet, true);
	KUNIT_EXPECT_EQ(test, mult, MRC_REO_MULT_MAX);
	for (i = 0; i < MRC_REO_QUIET_ROUNDS * MRC_REO_MULT_MAX; i++)
		mrc_rack_reo_round(&mult, &quiet, false);
	KUNIT_EXPECT_EQ(test, mult, 1);
}

/* RACK's reordering window: quarter-RTT steps of at least 4 ms, at most an RTT */
static void mrc_rack_reo_us_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(40000, 1), 10000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(40000, 3), 30000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(40000, MRC_REO_MULT_MAX), 40000U);
	/* a short RTT: the floor per step, the cap no lower than the floor */
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(12000, 1), (u32)MRC_REO_MIN_US);
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(12000, MRC_REO_MULT_MAX), 12000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_reo_us(0, MRC_REO_MULT_MAX), (u32)MRC_REO_MIN_US);
}

/*
 * RACK's expected RTT: 1.25 x the EV's, or RACK.rtt when a queue grew, or
 * the slowest live path's recent RTT
 */
static void mrc_rack_expect_us_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(8000, 0, 0), 10000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(8000, 9000, 0), 10000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(8000, 25000, 0), 25000U);
	/* an EV without a sample yet: RACK.rtt alone */
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(0, 12000, 0), 12000U);
	/* another spine's queue is 50 ms deep: this EV's may be too */
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(4000, 300, 50000), 50000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(48000, 300, 50000), 60000U);
	KUNIT_EXPECT_EQ(test, mrc_rack_expect_us(8000, 20000, 15000), 20000U);
}

/* A resend's EV must have delivered lately, not only after the lost packet */
static void mrc_ev_alive_since_test(struct kunit *test)
{
	/* lost 15 ms before the newest delivery: a quarter RTT before that */
	KUNIT_EXPECT_EQ(test, mrc_ev_alive_since(100000, 115000, 10000), 112500ull);
	/* lost after it: its own send time */
	KUNIT_EXPECT_EQ(test, mrc_ev_alive_since(114000, 115000, 10000), 114000ull);
	/* nothing delivered yet */
	KUNIT_EXPECT_EQ(test, mrc_ev_alive_since(100, 0, 10000), 100ull);
}

/* A path trace: hops by TTL, silent hops, the peer reached, stale answers */
static void mrc_trace_steps_test(struct kunit *test)
{
	const __be32 r1[4] = { htonl(0x0a000101) }, r2[4] = { htonl(0x0a000201) };
	struct mrc_ev_trace t;
	u64 now = 1000000;

	mrc_trace_begin(&t, 50000, 0);
	KUNIT_EXPECT_EQ(test, t.max_ttl, 1);
	mrc_trace_begin(&t, 50000, 200);
	KUNIT_EXPECT_EQ(test, t.max_ttl, MRC_TRACE_MAX_HOPS);
	mrc_trace_begin(&t, 50000, 6);
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 1);
	mrc_trace_sent(&t, 1, 111, now);
	/* one probe out at a time */
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 0);
	/* an answer that quotes another tsval is stale or forged */
	KUNIT_EXPECT_FALSE(test, mrc_trace_hop_rcv(&t, 110, r1, now + 50));
	KUNIT_EXPECT_FALSE(test, mrc_trace_reached(&t, 110));
	KUNIT_EXPECT_TRUE(test, mrc_trace_hop_rcv(&t, 111, r1, now + 50));
	KUNIT_EXPECT_EQ(test, t.nhops, 1);
	KUNIT_EXPECT_EQ(test, t.hop[0].addr[0], r1[0]);
	KUNIT_EXPECT_EQ(test, t.hop[0].rtt_us, 50u);
	/* a second answer to the same probe */
	KUNIT_EXPECT_FALSE(test, mrc_trace_hop_rcv(&t, 111, r2, now + 60));
	/* TTL 2 draws no answer in time: its hop stays unnamed */
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 2);
	mrc_trace_sent(&t, 2, 222, now + 100);
	KUNIT_EXPECT_FALSE(test, mrc_trace_timeout(&t, now + 100 + 4999, 5000));
	KUNIT_EXPECT_TRUE(test, mrc_trace_timeout(&t, now + 100 + 5000, 5000));
	KUNIT_EXPECT_FALSE(test, mrc_trace_hop_rcv(&t, 222, r2, now + 6000));
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 3);
	mrc_trace_sent(&t, 3, 333, now + 6000);
	KUNIT_EXPECT_TRUE(test, mrc_trace_hop_rcv(&t, 333, r2, now + 6100));
	KUNIT_EXPECT_EQ(test, t.nhops, 3);
	KUNIT_EXPECT_EQ(test, t.hop[1].addr[0], 0u);
	KUNIT_EXPECT_EQ(test, t.hop[1].rtt_us, 0u);
	KUNIT_EXPECT_EQ(test, t.hop[2].addr[0], r2[0]);
	KUNIT_EXPECT_EQ(test, t.silent, 0);
	/* TTL 4 reaches the peer: three hops before it */
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 4);
	mrc_trace_sent(&t, 4, 444, now + 7000);
	KUNIT_EXPECT_TRUE(test, mrc_trace_reached(&t, 444));
	KUNIT_EXPECT_EQ(test, t.state, MRC_TRACE_REACHED);
	KUNIT_EXPECT_EQ(test, t.nhops, 3);
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 0);
	KUNIT_EXPECT_FALSE(test, mrc_trace_hop_rcv(&t, 444, r1, now + 7100));

	/* the peer reached after silent hops: they are unnamed hops */
	mrc_trace_begin(&t, 50001, 8);
	mrc_trace_sent(&t, mrc_trace_next_ttl(&t), 1, now);
	KUNIT_EXPECT_TRUE(test, mrc_trace_timeout(&t, now + 5000, 5000));
	mrc_trace_sent(&t, mrc_trace_next_ttl(&t), 2, now + 5000);
	KUNIT_EXPECT_TRUE(test, mrc_trace_reached(&t, 2));
	KUNIT_EXPECT_EQ(test, t.nhops, 1);
	KUNIT_EXPECT_EQ(test, t.hop[0].addr[0], 0u);

	/* a blackhole: MRC_TRACE_MAX_SILENT silent hops end it */
	mrc_trace_begin(&t, 50002, 8);
	mrc_trace_sent(&t, mrc_trace_next_ttl(&t), 1, now);
	KUNIT_EXPECT_TRUE(test, mrc_trace_hop_rcv(&t, 1, r1, now + 10));
	for (int i = 0; i < MRC_TRACE_MAX_SILENT; i++) {
		u8 ttl = mrc_trace_next_ttl(&t);

		KUNIT_EXPECT_EQ(test, ttl, 2 + i);
		mrc_trace_sent(&t, ttl, 10 + i, now + 100 * i);
		KUNIT_EXPECT_TRUE(test, mrc_trace_timeout(&t, now + 100 * i + 5000, 5000));
	}
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 0);
	KUNIT_EXPECT_EQ(test, t.state, MRC_TRACE_UNREACHED);
	KUNIT_EXPECT_EQ(test, t.nhops, 1);

	/* the TTL limit */
	mrc_trace_begin(&t, 50003, 1);
	mrc_trace_sent(&t, mrc_trace_next_ttl(&t), 5, now);
	KUNIT_EXPECT_TRUE(test, mrc_trace_hop_rcv(&t, 5, r1, now + 10));
	KUNIT_EXPECT_EQ(test, mrc_trace_next_ttl(&t), 0);
	KUNIT_EXPECT_EQ(test, t.state, MRC_TRACE_UNREACHED);

	/* the wait: two RTTs, within its bounds */
	KUNIT_EXPECT_EQ(test, mrc_trace_wait_us(0), MRC_TRACE_MIN_WAIT_US);
	KUNIT_EXPECT_EQ(test, mrc_trace_wait_us(10000), 20000u);
	KUNIT_EXPECT_EQ(test, mrc_trace_wait_us(U32_MAX), MRC_TRACE_MAX_WAIT_US);
}

static struct kunit_case mrc_ev_cases[] = {
	KUNIT_CASE(mrc_ev_init_test),
	KUNIT_CASE(mrc_trace_steps_test),
	KUNIT_CASE(mrc_ev_pick_weighted_test),
	KUNIT_CASE(mrc_ev_pick_retransmit_test),
	KUNIT_CASE(mrc_ev_pick_ack_test),
	KUNIT_CASE(mrc_ev_pick_ack_path_test),
	KUNIT_CASE(mrc_paths_rx_live_test),
	KUNIT_CASE(mrc_paths_find_test),
	KUNIT_CASE(mrc_ev_weight_test),
	KUNIT_CASE(mrc_ev_untried_test),
	KUNIT_CASE(mrc_ev_retire_readmit_test),
	KUNIT_CASE(mrc_ev_paths_test),
	KUNIT_CASE(mrc_ev_silent_path_test),
	KUNIT_CASE(mrc_ev_delivery_known_test),
	KUNIT_CASE(mrc_rack_reo_round_test),
	KUNIT_CASE(mrc_rack_reo_us_test),
	KUNIT_CASE(mrc_rack_expect_us_test),
	KUNIT_CASE(mrc_ev_alive_since_test),
	KUNIT_CASE(mrc_ev_rto_lost_test),
	KUNIT_CASE(mrc_ev_loss_rules_test),
	KUNIT_CASE(mrc_ev_burst_len_test),
	KUNIT_CASE(mrc_ev_survey_test),
	KUNIT_CASE(mrc_ev_srtt_max_update_test),
	KUNIT_CASE(mrc_time_rack_test),
	KUNIT_CASE(mrc_time_ev_stale_test),
	KUNIT_CASE(mrc_time_rtt_echo_test),
	{}
};

static struct kunit_suite mrc_ev_suite = {
	.name = "mrc_ev",
	.test_cases = mrc_ev_cases,
};

static const struct mrc_cc_params cc_params = {
	.dctcp_shift = 4, .delay_target_us = 2000, .max_cwnd = 1000,
};

static void mrc_cc_growth_test(struct kunit *test)
{
	struct mrc_cc cc = { .cwnd = 10, .ssthresh = 20 };

	mrc_cc_on_ack(&cc, &cc_params, 10, 0, 100, 100, false);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20u);	/* slow start */
	mrc_cc_on_ack(&cc, &cc_params, 20, 0, 100, 100, false);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 21u);	/* one per window after */
	cc.cwnd = 999;
	cc.cwnd_cnt = 0;
	mrc_cc_on_ack(&cc, &cc_params, 5000, 0, 100, 100, false);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 1000u);
}

static void mrc_cc_ecn_test(struct kunit *test)
{
	struct mrc_cc cc = { .cwnd = 100, .ssthresh = 50 };
	int i;

	/* every delivery marked for many rounds: alpha -> 1, cwnd halves per round */
	for (i = 0; i < 60; i++) {
		cc.cwnd = 100;
		mrc_cc_on_ack(&cc, &cc_params, 100, 100, 100, 100, true);
	}
	KUNIT_EXPECT_GE(test, cc.alpha, 900u);
	KUNIT_EXPECT_LE(test, cc.cwnd, 56u);
	/* a few marks: a small cut */
	cc = (struct mrc_cc){ .cwnd = 100, .ssthresh = 50, .alpha = 64 };
	mrc_cc_on_ack(&cc, &cc_params, 100, 5, 100, 100, true);
	KUNIT_EXPECT_GE(test, cc.cwnd, 95u);
	KUNIT_EXPECT_LT(test, cc.cwnd, 100u);
}

static void mrc_cc_delay_and_loss_test(struct kunit *test)
{
	struct mrc_cc cc = { .cwnd = 100, .ssthresh = 50 };

	/* 10 ms of queueing over a 1 ms base with a 2 ms target: cut */
	mrc_cc_on_ack(&cc, &cc_params, 10, 0, 11000, 1000, true);
	KUNIT_EXPECT_LT(test, cc.cwnd, 60u);
	cc.cwnd = 100;
	mrc_cc_on_ack(&cc, &cc_params, 10, 0, 2500, 1000, true);
	KUNIT_EXPECT_GE(test, cc.cwnd, 100u);	/* within the target */
	mrc_cc_on_loss(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 50u);
	mrc_cc_on_loss(&cc);	/* once per round */
	KUNIT_EXPECT_EQ(test, cc.cwnd, 50u);
	mrc_cc_on_rto(&cc);	/* halves, no restart from 2 */
	KUNIT_EXPECT_EQ(test, cc.cwnd, 25u);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 25u);
	cc.cwnd = 3;
	mrc_cc_on_rto(&cc);
	KUNIT_EXPECT_EQ(test, cc.cwnd, MRC_CC_MIN_CWND);
}

/* A spurious RTO gives back the window it cut, from before the first RTO. */
static void mrc_cc_rto_undo_test(struct kunit *test)
{
	struct mrc_cc cc = { .cwnd = 80, .ssthresh = 40 };

	mrc_cc_on_rto(&cc);
	mrc_cc_on_rto(&cc);	/* backed off: still one episode */
	KUNIT_EXPECT_EQ(test, cc.cwnd, 20u);
	mrc_cc_rto_verdict(&cc, true);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 80u);
	KUNIT_EXPECT_EQ(test, cc.ssthresh, 40u);
	/* a needed RTO keeps its cut, and the next episode starts afresh */
	mrc_cc_on_rto(&cc);
	mrc_cc_rto_verdict(&cc, false);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40u);
	mrc_cc_rto_verdict(&cc, true);
	KUNIT_EXPECT_EQ(test, cc.cwnd, 40u);
	/* the verdict compares echoes across the 32-bit clock's wrap */
	KUNIT_EXPECT_TRUE(test, mrc_ts_before(0xfffffff0u, 0x10));
	KUNIT_EXPECT_FALSE(test, mrc_ts_before(0x10, 0xfffffff0u));
	KUNIT_EXPECT_FALSE(test, mrc_ts_before(5, 5));
}

/* The receive buffer follows the reader's rate per RTT, within its limit. */
static void mrc_autotune_rcvbuf_test(struct kunit *test)
{
	const u32 mss = 1424, space = MRC_RCVQ_SPACE_SEGS * 1424, max = 6 << 20;

	/* steady: two RTTs of the rate and 16 segments, in buffer bytes */
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(200000, 100000, mss, 256, 1000, max),
			2 * 200000 + 16 * mss + 2 * (2 * 200000 + 16 * mss));
	/* half a byte of window per byte of buffer: twice the buffer */
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(200000, 200000 - 1, mss, 128, 1000, max),
			(2 * (2 * 200000 + 16 * mss) + 2 * 2 * (2 * 200000 + 16 * mss) / 199999));
	/* no faster than before, no limit left, nothing measured: unchanged */
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(space, space, mss, 128, 212992, max), 212992u);
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(1 << 20, space, mss, 128, max, max), max);
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(1 << 20, 0, mss, 128, 212992, max), 212992u);
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(1 << 20, space, mss, 0, 212992, max), 212992u);
	/* a fast start is capped, and a buffer never shrinks */
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(U32_MAX, space, mss, 16, 212992, max), max);
	KUNIT_EXPECT_EQ(test, mrc_rcvbuf_grow(space + 1, space, mss, 255, 1 << 20, max), 1u << 20);
}

/* The send buffer holds two windows of full segments, within its limit. */
static void mrc_autotune_sndbuf_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mrc_sndbuf_want(100, 2000, 16384, 4 << 20), 400000u);
	/* at least the initial window's worth */
	KUNIT_EXPECT_EQ(test, mrc_sndbuf_want(2, 2000, 16384, 4 << 20),
			2u * MRC_RCVQ_SPACE_SEGS * 2000);
	KUNIT_EXPECT_EQ(test, mrc_sndbuf_want(4096, 2500, 16384, 4 << 20), 4u << 20);
	KUNIT_EXPECT_EQ(test, mrc_sndbuf_want(100, 2000, 1 << 20, 4 << 20), 1u << 20);
	/* above a lowered limit already (SO_SNDBUF's double): unchanged */
	KUNIT_EXPECT_EQ(test, mrc_sndbuf_want(4096, 2500, 8 << 20, 4 << 20), 8u << 20);
}

/* A read sends a window update only to a sender the window held back (TCP's rule). */
static void mrc_wnd_update_due_test(struct kunit *test)
{
	const u32 mss = 1424, max = 400000;

	/* a 64 KiB message read from a large window: nobody waits */
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(max - 65536, max, max, mss));
	/* a closed or nearly closed window that reopened */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_due(0, mss, max, mss));
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_due(mss, 3 * mss, max, mss));
	/* half the largest window left, doubled by the read */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_due(max / 2, max, max, mss));
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(max / 2 + 1, max, max, mss));
	/* grown, but not doubled; or less than a segment on offer */
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(10 * mss, 19 * mss, max, mss));
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(0, mss - 1, max, mss));
	/* a largest window under two segments: a sender short of one segment waits */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_due(1100, 2000, 2000, mss));
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(1100, 1200, 2000, mss));
	/* the largest windows */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_due(U32_MAX / 2, U32_MAX - 1, U32_MAX, mss));
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_due(U32_MAX / 2 + 1, U32_MAX, U32_MAX, mss));
}

static struct kunit_case mrc_cc_cases[] = {
	KUNIT_CASE(mrc_autotune_rcvbuf_test),
	KUNIT_CASE(mrc_autotune_sndbuf_test),
	KUNIT_CASE(mrc_wnd_update_due_test),
	KUNIT_CASE(mrc_cc_growth_test),
	KUNIT_CASE(mrc_cc_ecn_test),
	KUNIT_CASE(mrc_cc_delay_and_loss_test),
	KUNIT_CASE(mrc_cc_rto_undo_test),
	{}
};

static struct kunit_suite mrc_cc_suite = {
	.name = "mrc_cc",
	.test_cases = mrc_cc_cases,
};

static void mrc_hdr_fill(struct mrchdr *h, u8 type, u16 plen)
{
	memset(h, 0, sizeof(*h));
	h->version = MRC_VERSION;
	h->type = type;
	h->src_id = htonl(7);
	h->dst_id = type == MRC_T_SYN ? 0 : htonl(9);
	h->len = htons(plen);
}

static void mrc_hdr_valid_test(struct kunit *test)
{
	struct mrchdr h;
	unsigned int hs = sizeof(struct mrc_hs_payload);

	mrc_hdr_fill(&h, MRC_T_SYN, 0);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_PACKETS);
	mrc_hdr_fill(&h, MRC_T_SYNACK, hs);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + hs), MRC_C_RX_PACKETS);
	mrc_hdr_fill(&h, MRC_T_DATA, 1400);
	h.flags = MRC_F_FIN | MRC_F_EOR;
	h.priority = 7;
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 1400), MRC_C_RX_PACKETS);
	mrc_hdr_fill(&h, MRC_T_RST, 0);
	h.src_id = 0;	/* a refusal comes from no connection */
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_PACKETS);
}

/* A packet's type, flags and payload length, and what mrc_hdr_check() says */
struct mrc_payload_case {
	u8		type;
	u8		flags;
	u16		plen;
	enum mrc_counter want;
};

static const struct mrc_payload_case mrc_ack_payloads[] = {
	{ MRC_T_ACK, MRC_F_SACKX, 8, MRC_C_RX_PACKETS },
	{ MRC_T_ACK, MRC_F_SACKX, 8 * MRC_SACKX_WORDS, MRC_C_RX_PACKETS },
	{ MRC_T_ACK, MRC_F_SACKX, 8 * MRC_SACKX_WORDS + 8, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_SACKX, 12, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_SACKX, 0, MRC_C_RX_DROP_LEN },
	{ MRC_T_DATA, MRC_F_SACKX, 8, MRC_C_RX_DROP_TYPE },
	{ MRC_T_ACK, MRC_F_DSACK, 8, MRC_C_RX_PACKETS },
	{ MRC_T_ACK, MRC_F_DSACK, 0, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_DSACK, 16, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_SACKX | MRC_F_DSACK, 16, MRC_C_RX_PACKETS },
	{ MRC_T_ACK, MRC_F_SACKX | MRC_F_DSACK, 8 * MRC_SACKX_WORDS + 8, MRC_C_RX_PACKETS },
	{ MRC_T_ACK, MRC_F_SACKX | MRC_F_DSACK, 8 * MRC_SACKX_WORDS + 16, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_SACKX | MRC_F_DSACK, 12, MRC_C_RX_DROP_LEN },
	{ MRC_T_ACK, MRC_F_SACKX | MRC_F_DSACK, 8, MRC_C_RX_DROP_LEN },
	{ MRC_T_DATA, MRC_F_DSACK, 8, MRC_C_RX_DROP_TYPE },
};

static void mrc_hdr_malformed_test(struct kunit *test)
{
	struct mrchdr h;
	unsigned int i;

	mrc_hdr_fill(&h, MRC_T_DATA, 10);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) - 1), MRC_C_RX_DROP_SHORT);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 9), MRC_C_RX_DROP_LEN);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 11), MRC_C_RX_DROP_LEN);
	h.version = 1;	/* before MRC_F_SACKX */
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 10), MRC_C_RX_DROP_VERSION);
	mrc_hdr_fill(&h, 0, 0);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_TYPE);
	mrc_hdr_fill(&h, __MRC_T_MAX, 0);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_TYPE);
	mrc_hdr_fill(&h, MRC_T_ACK, 0);
	h.flags = 0x80;
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_TYPE);
	mrc_hdr_fill(&h, MRC_T_ACK, 0);
	h.version = 3;	/* the withdrawn draft, before MRC_F_DSACK */
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_VERSION);
	mrc_hdr_fill(&h, MRC_T_ACK, 0);
	h.priority = 8;
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_TYPE);
	mrc_hdr_fill(&h, MRC_T_ACK, 4);	/* control packets carry no payload */
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 4), MRC_C_RX_DROP_LEN);
	/*
	 * ... but an ACK's: MRC_F_SACKX's 1..MRC_SACKX_WORDS words of 8 bytes,
	 * then MRC_F_DSACK's 8; on data neither means anything: refused
	 */
	for (i = 0; i < ARRAY_SIZE(mrc_ack_payloads); i++) {
		const struct mrc_payload_case *c = &mrc_ack_payloads[i];

		mrc_hdr_fill(&h, c->type, c->plen);
		h.flags = c->flags;
		KUNIT_EXPECT_EQ_MSG(test, mrc_hdr_check(&h, sizeof(h) + c->plen), c->want,
				    "case %u", i);
	}
	mrc_hdr_fill(&h, MRC_T_HSACK, 3);	/* handshake payload has one size */
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 3), MRC_C_RX_DROP_LEN);
	/* ... then an address list of 1..4 entries of 20 bytes */
	mrc_hdr_fill(&h, MRC_T_HSACK, 16 + 4 + 20);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 40), MRC_C_RX_PACKETS);
	mrc_hdr_fill(&h, MRC_T_SYNACK, 16 + 4 + 80);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 100), MRC_C_RX_PACKETS);
	mrc_hdr_fill(&h, MRC_T_SYNACK, 16 + 4 + 100);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 120), MRC_C_RX_DROP_LEN);
	mrc_hdr_fill(&h, MRC_T_HSACK, 16 + 4);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 20), MRC_C_RX_DROP_LEN);
	mrc_hdr_fill(&h, MRC_T_HSACK, 16 + 4 + 21);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h) + 41), MRC_C_RX_DROP_LEN);
	mrc_hdr_fill(&h, MRC_T_SYN, 0);
	h.dst_id = htonl(1);
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_BADID);
	mrc_hdr_fill(&h, MRC_T_DATA, 0);
	h.dst_id = 0;
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_BADID);
	mrc_hdr_fill(&h, MRC_T_DATA, 0);
	h.src_id = 0;
	KUNIT_EXPECT_EQ(test, mrc_hdr_check(&h, sizeof(h)), MRC_C_RX_DROP_BADID);
}

/* One burst's headers make a train; anything else breaks it. */
static void mrc_hdr_train_test(struct kunit *test)
{
	struct mrchdr first, h;

	mrc_hdr_fill(&first, MRC_T_DATA, 1000);
	first.psn = htonl(0xffffffffu);
	first.ack_psn = htonl(77);
	first.tsval = htonl(5);
	h = first;
	h.psn = htonl(0);	/* the PSN wraps inside a train */
	KUNIT_EXPECT_TRUE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.tsval = htonl(6);	/* sent later: still the same burst */
	KUNIT_EXPECT_TRUE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.len = htons(300);	/* the last packet may be short */
	KUNIT_EXPECT_TRUE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 300));
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.len = 0;
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h)));
	/* a last packet shorter than a header: its bytes are not read */
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) - 1));
	h = first;
	h.psn = htonl(1);	/* a gap */
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h = first;
	h.psn = htonl(0);
	h.flags = MRC_F_FIN;
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.flags = 0;
	h.dst_id = htonl(10);	/* another connection sharing the EV */
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.dst_id = first.dst_id;
	h.ack_psn = htonl(78);	/* another acknowledgment: handled per packet */
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.ack_psn = first.ack_psn;
	h.rcv_wnd = htonl(1);
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
	h.rcv_wnd = first.rcv_wnd;
	h.priority = 3;
	KUNIT_EXPECT_FALSE(test, mrc_hdr_train_next(&first, &h, 1, sizeof(h) + 1000));
}

static struct kunit_case mrc_hdr_cases[] = {
	KUNIT_CASE(mrc_hdr_valid_test),
	KUNIT_CASE(mrc_hdr_malformed_test),
	KUNIT_CASE(mrc_hdr_train_test),
	{}
};

static struct kunit_suite mrc_hdr_suite = {
	.name = "mrc_hdr",
	.test_cases = mrc_hdr_cases,
};

/* ---- out-of-order tree, window update, bounded fresh-EV search ---- */

static struct sk_buff *mrc_test_skb(struct kunit *test, u32 psn)
{
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(skb->cb, 0, sizeof(skb->cb));
	MRC_SKB_CB(skb)->psn = psn;
	return skb;
}

/* Checks the tree is sorted from @first, holds @n PSNs, and frees it. */
static void mrc_test_ooo_check(struct kunit *test, struct rb_root *root, struct sk_buff *last,
			       u32 first, u32 n)
{
	struct sk_buff *skb = skb_rb_first(root), *prev = NULL;
	u32 i = 0;

	for (; skb; prev = skb, skb = skb_rb_next(skb), i++)
		KUNIT_EXPECT_EQ(test, MRC_SKB_CB(skb)->psn, first + i);
	KUNIT_EXPECT_EQ(test, i, n);
	KUNIT_EXPECT_PTR_EQ(test, last, prev);
	while ((skb = skb_rb_first(root))) {
		rb_erase(&skb->rbnode, root);
		kfree_skb(skb);
	}
}

static void mrc_ooo_orders_test(struct kunit *test)
{
	const u32 base = 0xfffff000u;	/* wraps through 0 */
	struct rb_root root = RB_ROOT;
	struct sk_buff *last = NULL, *dup;
	u32 i, n = 8190;

	/* descending, as a hostile peer sends */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE(test, mrc_ooo_insert(&root, &last,
						       mrc_test_skb(test, base + n - 1 - i)));
	dup = mrc_test_skb(test, base + 17);
	KUNIT_EXPECT_FALSE(test, mrc_ooo_insert(&root, &last, dup));
	kfree_skb(dup);
	dup = mrc_test_skb(test, base + n - 1);
	KUNIT_EXPECT_FALSE(test, mrc_ooo_insert(&root, &last, dup));
	kfree_skb(dup);
	mrc_test_ooo_check(test, &root, last, base, n);

	/* ascending (the append fast path), then a stride that fills holes */
	last = NULL;
	for (i = 0; i < 1000; i += 2)
		KUNIT_EXPECT_TRUE(test, mrc_ooo_insert(&root, &last, mrc_test_skb(test, base + i)));
	for (i = 999; i < 1000; i -= 2)
		KUNIT_EXPECT_TRUE(test, mrc_ooo_insert(&root, &last, mrc_test_skb(test, base + i)));
	mrc_test_ooo_check(test, &root, last, base, 1000);
}

static void mrc_ooo_sack_test(struct kunit *test)
{
	u32 held[] = { 12, 11, 74, 75, 9 + 200, 13 };
	struct rb_root root = RB_ROOT;
	struct sk_buff *last = NULL;
	u32 i, rcv_nxt = 0xfffffff0u + 10;

	KUNIT_EXPECT_EQ(test, mrc_ooo_sack(&root, 10), 0ull);
	/* around the wrap: PSNs are rcv_nxt - 10 + held[i] */
	for (i = 0; i < ARRAY_SIZE(held); i++)
		KUNIT_EXPECT_TRUE(test, mrc_ooo_insert(&root, &last,
						       mrc_test_skb(test, rcv_nxt - 10 + held[i])));
	/* bit i is PSN rcv_nxt + 1 + i: 11, 12, 13 and 74 (bit 63) */
	KUNIT_EXPECT_EQ(test, mrc_ooo_sack(&root, rcv_nxt), 0x7ull | 1ull << 63);
	/* MRC_F_SACKX's words: 75 is bit 0 of word 1, 209 bit 6 of word 3 */
	{
		u64 words[1 + MRC_SACKX_WORDS];

		KUNIT_EXPECT_EQ(test, mrc_ooo_sack_words(&root, last, rcv_nxt, words), 4u);
		KUNIT_EXPECT_EQ(test, words[0], 0x7ull | 1ull << 63);
		KUNIT_EXPECT_EQ(test, words[1], 1ull);
		KUNIT_EXPECT_EQ(test, words[2], 0ull);
		KUNIT_EXPECT_EQ(test, words[3], 1ull << 6);
		KUNIT_EXPECT_TRUE(test, mrc_sack_words_test(words, 4, 199));
		KUNIT_EXPECT_FALSE(test, mrc_sack_words_test(words, 4, 198));
		KUNIT_EXPECT_FALSE(test, mrc_sack_words_test(words, 4, 4 * 64 + 1));
		/* nothing held beyond the header's reach: no words */
		KUNIT_EXPECT_EQ(test, mrc_ooo_sack_words(&root, last, rcv_nxt + 150, words), 1u);
	}
	while ((last = skb_rb_first(&root))) {
		rb_erase(&last->rbnode, &root);
		kfree_skb(last);
	}
}

static void mrc_wnd_update_test(struct kunit *test)
{
	/* the first window is always taken */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_ok(false, 5, 5, 100, 0));
	/* an ACK built before the one we hold (older tsval): stale */
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_ok(true, 5, 5, 99, 100));
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_ok(true, 5, 5, 100, 100));
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_ok(true, 5, 5, 101, 100));
	/* new data acknowledged: newer whatever its timestamp */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_ok(true, 6, 5, 1, 100));
	/* timestamps wrap */
	KUNIT_EXPECT_TRUE(test, mrc_wnd_update_ok(true, 5, 5, 3, 0xfffffff0u));
	KUNIT_EXPECT_FALSE(test, mrc_wnd_update_ok(true, 5, 5, 0xfffffff0u, 3));
}

/* A pin policy allowing 60000..60003 only, with call counters. */
static u32 mrc_test_allowed_calls, mrc_test_next_calls;

static bool mrc_test_pin_allowed(const void *ctx, u16 port)
{
	mrc_test_allowed_calls++;
	return port >= 60000 && port <= 60003;
}

static u32 mrc_test_pin_next(const void *ctx, u32 port)
{
	mrc_test_next_calls++;
	if (port > 60003)
		return 0x10000;
	return max(port, 60000U);
}

static void mrc_ev_fresh_bounded_test(struct kunit *test)
{
	struct mrc_ev_range r = {
		.port_min = 0, .port_max = 65535,
		.allowed = mrc_test_pin_allowed, .next_allowed = mrc_test_pin_next,
	};
	struct mrc_ev evs[8];
	u32 born = 0;
	int i, fresh;

	/* all four allowed ports become EVs, whatever the draws */
	KUNIT_EXPECT_EQ(test, mrc_evs_init(evs, 8, 4, &r, &born), 4);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_GE(test, evs[i].port, 60000);
		KUNIT_EXPECT_LE(test, evs[i].port, 60003);
	}
	/* none left: the search gives up after a bounded number of steps */
	mrc_test_allowed_calls = 0;
	mrc_test_next_calls = 0;
	fresh = mrc_ev_retire(evs, 8, 0, &r, &born, 0, true);
	KUNIT_EXPECT_EQ(test, fresh, -1);
	KUNIT_EXPECT_LE(test, mrc_test_allowed_calls, 64u);
	KUNIT_EXPECT_LE(test, mrc_test_next_calls, 8u + 3);
}

/* Every slot in use holds a port of its own, and one @allowed accepts. */
static void mrc_test_evs_pinned(struct kunit *test, const struct mrc_ev *evs, u16 cap,
				const struct mrc_ev_range *r)
{
	int i, j;

	for (i = 0; i < cap; i++) {
		if (evs[i].state == MRC_EV_FREE)
			continue;
		KUNIT_EXPECT_GE(test, evs[i].port, r->port_min);
		KUNIT_EXPECT_LE(test, evs[i].port, r->port_max);
		if (r->allowed)
			KUNIT_EXPECT_TRUE(test, r->allowed(r->ctx, evs[i].port));
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_TRUE(test, evs[j].state == MRC_EV_FREE ||
					  evs[j].port != evs[i].port);
	}
}

/*
 * Fewer allowed ports than EVs (a pin policy of 4 ports, ev_count 8): one
 * EV on each pinned port and none elsewhere, and a retirement finds no
 * port for a replacement; no allowed port at all: no EV.  A range with no
 * policy as small as the EVs keeps its ports unique too.
 */
static void mrc_ev_pin_cap_test(struct kunit *test)
{
	struct mrc_ev_range r = {
		.port_min = 49152, .port_max = 65535,
		.allowed = mrc_test_pin_allowed, .next_allowed = mrc_test_pin_next,
	};
	struct mrc_ev_range small = { .port_min = 50000, .port_max = 50003 };
	struct mrc_ev evs[16];
	u32 born = 0;

	KUNIT_EXPECT_EQ(test, mrc_evs_init(evs, 16, 8, &r, &born), 4);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 4);
	mrc_test_evs_pinned(test, evs, 16, &r);
	KUNIT_EXPECT_EQ(test, mrc_ev_retire(evs, 16, 0, &r, &born, 0, true), -1);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 3);
	mrc_test_evs_pinned(test, evs, 16, &r);

	/* the pinned ports lie outside the namespace's range */
	r.port_min = 1024;
	r.port_max = 49151;
	KUNIT_EXPECT_EQ(test, mrc_evs_init(evs, 16, 8, &r, &born), 0);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 16), 0);

	KUNIT_EXPECT_EQ(test, mrc_evs_init(evs, 8, 4, &small, &born), 4);
	KUNIT_EXPECT_EQ(test, mrc_ev_active_count(evs, 8), 4);
	KUNIT_EXPECT_EQ(test, mrc_ev_retire(evs, 8, 1, &small, &born, 0, true), -1);
	mrc_test_evs_pinned(test, evs, 8, &small);
}

static struct kunit_case mrc_input_cases[] = {
	KUNIT_CASE(mrc_ooo_orders_test),
	KUNIT_CASE(mrc_ooo_sack_test),
	KUNIT_CASE(mrc_wnd_update_test),
	KUNIT_CASE(mrc_ev_fresh_bounded_test),
	KUNIT_CASE(mrc_ev_pin_cap_test),
	{}
};

static struct kunit_suite mrc_input_suite = {
	.name = "mrc_input",
	.test_cases = mrc_input_cases,
};

kunit_test_suites(&mrc_hdr_suite, &mrc_psn_suite, &mrc_rtt_suite, &mrc_sack_suite,
		  &mrc_cookie_suite, &mrc_ev_suite, &mrc_cc_suite, &mrc_input_suite);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for MRC");
