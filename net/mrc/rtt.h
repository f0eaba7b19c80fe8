/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RTT estimation and retransmission timeout (RFC 6298), in microseconds, over
 * plain state so that KUnit and a simulator can drive it directly.
 */
#ifndef _NET_MRC_RTT_H
#define _NET_MRC_RTT_H

#include <linux/time64.h>
#include <linux/types.h>

/**
 * struct mrc_rtt - RTT estimator state of one connection (or one EV)
 * @srtt_us: smoothed RTT, 0 before the first sample
 * @rttvar_us: RTT variation
 * @min_rtt_us: smallest sample seen, 0 before the first
 * @rto_us: current retransmission timeout (without backoff)
 * @min_rto_us: lower bound of @rto_us
 * @max_rto_us: upper bound of @rto_us, also with backoff
 */
struct mrc_rtt {
	u32	srtt_us;
	u32	rttvar_us;
	u32	min_rtt_us;
	u32	rto_us;
	u32	min_rto_us;
	u32	max_rto_us;
};

#define MRC_INITIAL_RTO_US	200000
#define MRC_MAX_RTO_US		2000000

/* An echo older than this is no RTT sample (an idle turn, a stale packet) */
#define MRC_RTT_MAX_ECHO_US	(10 * USEC_PER_SEC)

/**
 * mrc_ts_clock() - a connection's timestamp clock, as sent in tsval
 * @ts_offset: the connection's random offset (as TCP's tsoffset)
 * @now_us: MRC's 64-bit clock
 *
 * Each connection's 32-bit clock starts at a random point, so it wraps at a
 * different time for each and reveals nothing of the host's uptime.  Never
 * 0: a tsecr of 0 means "nothing to echo" (as in TCP); the 1 us that costs
 * once a wrap is noise.
 *
 * Return: the tsval for a packet sent at @now_us.
 */
static inline u32 mrc_ts_clock(u32 ts_offset, u64 now_us)
{
	return ((u32)now_us + ts_offset) ?: 1;
}

/**
 * mrc_rtt_from_echo() - RTT sample from an echoed timestamp
 * @ts_now: the connection's timestamp clock now (mrc_ts_clock())
 * @tsecr: the echo of a tsval this connection sent; 0: none
 * @rtt_us: the sample, written when there is one
 *
 * Wrap-safe: the distance is taken modulo 2^32, and one from the future
 * (a forged or corrupted echo) reads as huge and is refused.
 *
 * Return: true if @rtt_us holds a sample.
 */
static inline bool mrc_rtt_from_echo(u32 ts_now, u32 tsecr, u32 *rtt_us)
{
	u32 d = ts_now - tsecr;

	if (!tsecr || d >= MRC_RTT_MAX_ECHO_US)
		return false;
	*rtt_us = d;
	return true;
}

/**
 * mrc_ts_before() - was timestamp @a taken before @b on the same 32-bit clock?
 * @a: a tsval
 * @b: another tsval of the same connection, less than 2^31 us apart
 *
 * Return: true if @a is earlier, across the clock's wrap.
 */
static inline bool mrc_ts_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/* Out-of-order data: ACKed within this long, or at MRC_OOO_ACK_SEGS packets */
#define MRC_OOO_ACK_MAX_US	200
#define MRC_OOO_ACK_MIN_US	20
#define MRC_OOO_ACK_SEGS	16

/**
 * mrc_ooo_ack_delay_us() - how long an ACK of out-of-order data may wait
 * @rtt_us: the receiver's RTT estimate (0: none yet)
 *
 * Spraying reorders all the time: an ACK at once for every packet that
 * arrived out of order doubled the ACKs of a multipath flow, and each one
 * walks the out-of-order tree for its SACK words.  As TCP compresses its
 * SACKs (tcp_comp_sack_delay_ns), a twentieth of the RTT, at most
 * MRC_OOO_ACK_MAX_US: a loss is reported that much later at worst.
 * Return: microseconds.
 */
static inline u32 mrc_ooo_ack_delay_us(u32 rtt_us)
{
	u32 d = rtt_us ? rtt_us / 20 : MRC_OOO_ACK_MAX_US;

	return d < MRC_OOO_ACK_MIN_US ? MRC_OOO_ACK_MIN_US :
	       d > MRC_OOO_ACK_MAX_US ? MRC_OOO_ACK_MAX_US : d;
}

/* A tail loss probe waits at least this long: a shorter wait fires on jitter */
#define MRC_PTO_MIN_US	200

/**
 * mrc_pto_us() - how long a flight's tail may go unacknowledged (RFC 8985 7.2)
 * @srtt_us: smoothed RTT of the tail's path (0: no sample yet)
 * @in_flight: packets in flight
 * @delack_us: how long the peer may delay its ACK of a lone packet
 *
 * Two RTTs, as TCP's probe timeout; a flight of one packet also waits for
 * the peer's delayed ACK, and half as long again for a softirq that runs
 * it late: a one-way message's ACK would else race its probe (a request's
 * answer carries the ACK sooner).
 * Return: microseconds, or 0 when there is no RTT to go by.
 */
static inline u32 mrc_pto_us(u32 srtt_us, u32 in_flight, u32 delack_us)
{
	u32 pto;

	if (!srtt_us)
		return 0;
	pto = srtt_us < (1U << 29) ? 2 * srtt_us : 1U << 30;
	if (in_flight <= 1)
		pto += delack_us + delack_us / 2;
	return pto > MRC_PTO_MIN_US ? pto : MRC_PTO_MIN_US;
}

/**
 * struct mrc_rtt_hi - the largest RTT delivered with lately, over any EV
 * @cur: largest sample of the window that began at @start_us
 * @prev: largest sample of the window before it
 * @start_us: when the current window began (mrc_clock_us())
 *
 * Windows of the slowest active EV's smoothed RTT (at least
 * MRC_RTT_HI_MIN_WIN_US), so that every live path delivers in one: the
 * maximum covers the samples of the last one to two windows.  Not
 * lib/win_minmax.c: the ns-3 model compiles this header as it is, without
 * the kernel's lib/, and two buckets are all a floor under RACK needs.
 */
struct mrc_rtt_hi {
	u32	cur;
	u32	prev;
	u64	start_us;
};

#define MRC_RTT_HI_MIN_WIN_US	4000

static inline u32 mrc_rtt_hi_win_us(u32 slowest_us)
{
	return slowest_us > MRC_RTT_HI_MIN_WIN_US ? slowest_us : MRC_RTT_HI_MIN_WIN_US;
}

/**
 * mrc_rtt_hi_sample() - note the RTT of a delivered packet
 * @hi: the state
 * @now_us: mrc_clock_us()
 * @rtt_us: the sample
 * @slowest_us: the slowest active EV's smoothed RTT (the window)
 */
static inline void mrc_rtt_hi_sample(struct mrc_rtt_hi *hi, u64 now_us, u32 rtt_us,
				     u32 slowest_us)
{
	u32 win = mrc_rtt_hi_win_us(slowest_us);
	u64 age = now_us - hi->start_us;

	if (age >= win) {
		/* the window that ended stays only if it ended within one */
		if (age < 2ULL * win) {
			hi->prev = hi->cur;
			hi->start_us += win;
		} else {
			hi->prev = 0;
			hi->start_us = now_us;
		}
		hi->cur = 0;
	}
	if (rtt_us > hi->cur)
		hi->cur = rtt_us;
}

/**
 * mrc_rtt_hi() - the largest RTT of the last one to two windows
 * @hi: the state
 * @now_us: mrc_clock_us()
 * @slowest_us: the slowest active EV's smoothed RTT, as for the samples
 *
 * Never more than 2 x @slowest_us, the RTO's floor less its slack
 * (mrc_arm_rto()): a stale sample (a guest that stalled, a hole repaired
 * behind what SACK covers) would else hold a dead path's loss verdicts past
 * the RTO.
 * Return: the RTT (us), 0 when no sample is that recent.
 */
static inline u32 mrc_rtt_hi(const struct mrc_rtt_hi *hi, u64 now_us, u32 slowest_us)
{
	u32 win = mrc_rtt_hi_win_us(slowest_us), rtt;
	u64 age = now_us - hi->start_us;

	if (age >= 2ULL * win)
		return 0;
	rtt = age >= win || hi->cur > hi->prev ? hi->cur : hi->prev;
	return rtt < 2ULL * slowest_us ? rtt : 2 * slowest_us;
}

/**
 * struct mrc_dsack_seen - the last duplicate echo (MRC_F_DSACK) taken
 * @tsval: the duplicate's tsval, as the peer echoed it
 * @port: its EV
 */
struct mrc_dsack_seen {
	u32	tsval;
	u16	port;
};

/**
 * mrc_dsack_sample() - the RTT sample a peer's duplicate echo gives
 * @seen: the last echo taken, updated when this one is new
 * @port: the echo's EV (struct mrc_dsack)
 * @tsval: the duplicate's tsval it echoes
 * @ts_now: our timestamp clock now (mrc_ts_clock())
 * @verdict_due: an RTO's spurious-or-real verdict is pending
 * @max_rto_us: the connection's RTO ceiling
 * @rtt_us: the sample, written when there is one
 *
 * The duplicate is the original that came late: an exact sample of the
 * slow path it took, which the header's echo (the newest packet's) never
 * names.  Taken once: both copies of a doubled ACK carry the echo.  None
 * while an RTO's verdict is due (and the echo is spent): the duplicate may
 * be an original the RTO overtook, held by a stall as long as the RTO
 * waited, and its sample would raise every EV's RACK wait and the RTO's
 * floor.  None above the RTO's ceiling: a replay from long ago would hold
 * every RACK verdict.
 *
 * Return: true if @rtt_us holds a sample.
 */
static inline bool mrc_dsack_sample(struct mrc_dsack_seen *seen, u16 port, u32 tsval,
				    u32 ts_now, bool verdict_due, u32 max_rto_us,
				    u32 *rtt_us)
{
	if (port == seen->port && tsval == seen->tsval)
		return false;
	/* spent even while a verdict is due: a second copy is as suspect */
	seen->port = port;
	seen->tsval = tsval;
	return !verdict_due && mrc_rtt_from_echo(ts_now, tsval, rtt_us) &&
	       *rtt_us <= max_rto_us;
}

void mrc_rtt_init(struct mrc_rtt *r, u32 min_rto_us, u32 max_rto_us);
void mrc_rtt_sample(struct mrc_rtt *r, u32 sample_us);
u32 mrc_rtt_rto(const struct mrc_rtt *r, unsigned int backoff);

#endif /* _NET_MRC_RTT_H */
