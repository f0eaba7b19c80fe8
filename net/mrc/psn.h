/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packet sequence number (PSN) arithmetic.  PSNs are 32-bit and wrap; every
 * comparison is made on the signed distance, as TCP's before()/after() do, so
 * it is right as long as the two PSNs are less than 2^31 apart.
 */
#ifndef _NET_MRC_PSN_H
#define _NET_MRC_PSN_H

#include <linux/types.h>

/**
 * mrc_psn_diff() - signed distance from @b to @a
 * @a: PSN
 * @b: PSN
 *
 * Return: a - b as a signed number, correct across wraparound.
 */
static inline s32 mrc_psn_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

static inline bool mrc_psn_before(u32 a, u32 b)
{
	return mrc_psn_diff(a, b) < 0;
}

static inline bool mrc_psn_after(u32 a, u32 b)
{
	return mrc_psn_diff(a, b) > 0;
}

/**
 * mrc_psn_in_window() - is @psn within [@start, @start + @len)?
 * @psn: PSN to test
 * @start: first PSN of the window
 * @len: window length in packets (at most 2^31)
 *
 * Return: true when @psn lies in the window, across wraparound.
 */
static inline bool mrc_psn_in_window(u32 psn, u32 start, u32 len)
{
	return psn - start < len;
}

static inline u32 mrc_psn_max(u32 a, u32 b)
{
	return mrc_psn_after(a, b) ? a : b;
}

/**
 * mrc_wnd_update_ok() - may an ACK's window replace the one we hold?
 * @valid: a window was taken from an ACK before
 * @ack: the ACK's cumulative ACK
 * @snd_una: our oldest unacknowledged PSN
 * @tsval: the ACK's timestamp (the peer's clock when it built the header)
 * @wl_tsval: timestamp of the ACK whose window we hold
 *
 * As TCP's tcp_may_update_window() with the peer's timestamp in place of
 * snd_wl1: ACKs sprayed over paths of different delay arrive out of order,
 * and one built before the ACK we took the window from carries a stale
 * window.  One that acknowledges new data was built after every ACK that
 * did not.
 * Return: true when the window should be taken.
 */
static inline bool mrc_wnd_update_ok(bool valid, u32 ack, u32 snd_una, u32 tsval, u32 wl_tsval)
{
	return !valid || mrc_psn_after(ack, snd_una) || (s32)(tsval - wl_tsval) >= 0;
}

#endif /* _NET_MRC_PSN_H */
