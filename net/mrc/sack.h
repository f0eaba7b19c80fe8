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

u64 mrc_sack_bitmap(const u32 *psns, unsigned int n, u32 rcv_nxt);

#endif /* _NET_MRC_SACK_H */
