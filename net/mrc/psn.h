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

#endif /* _NET_MRC_PSN_H */
