/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SACK field decisions over plain bitmaps: bit i stands for PSN base + i.
 */
#ifndef _NET_MRC_SACK_H
#define _NET_MRC_SACK_H

#include <linux/types.h>

#include "psn.h"

/* Records PSN @psn, held out of order, in the SACK field relative to @rcv_nxt. */
static inline void mrc_sack_mark(u64 *bits, u32 psn, u32 rcv_nxt)
{
	if (mrc_psn_in_window(psn, rcv_nxt + 1, 64))
		*bits |= 1ULL << (psn - rcv_nxt - 1);
}

/*
 * The SACK field with MRC_F_SACKX's words after the header's (words[0]):
 * bit i of words[k] stands for PSN rcv_nxt + 1 + 64 * k + i.
 */
static inline void mrc_sack_words_mark(u64 *words, unsigned int n, u32 psn, u32 rcv_nxt)
{
	u32 off = psn - rcv_nxt - 1;

	if (mrc_psn_in_window(psn, rcv_nxt + 1, n * 64))
		words[off / 64] |= 1ULL << (off % 64);
}

/* Does a SACK field of @n words report PSN ack + @off (@off >= 1)? */
static inline bool mrc_sack_words_test(const u64 *words, unsigned int n, u32 off)
{
	off--;
	return off < n * 64 && ((words[off / 64] >> (off % 64)) & 1);
}

u64 mrc_sack_bitmap(const u32 *psns, unsigned int n, u32 rcv_nxt);
unsigned int mrc_sack_words_used(const u64 *words, unsigned int n);

#endif /* _NET_MRC_SACK_H */
