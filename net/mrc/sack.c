// SPDX-License-Identifier: GPL-2.0-only
/*
 * SACK scoreboard: which outstanding packets the selective ACKs prove lost,
 * and the bitmap a receiver advertises.  Plain state in, decisions out.
 */
#include <linux/bitops.h>
#include <linux/export.h>
#include <kunit/visibility.h>

#include "sack.h"

/**
 * mrc_sack_lost_mask() - packets a SACK scoreboard declares lost
 * @sacked: bit i set: packet base + i is selectively acknowledged
 * @outstanding: bit i set: packet base + i is sent and neither acked,
 *	sacked nor already marked lost
 * @dupthresh: how many later packets must be sacked to call one lost
 *
 * Return: the outstanding packets with at least @dupthresh sacked packets
 * above them (RFC 6675's IsLost with DupThresh counted in packets).
 */
u64 mrc_sack_lost_mask(u64 sacked, u64 outstanding, unsigned int dupthresh)
{
	u64 lost = 0;
	unsigned int above = 0;
	int i;

	if (!dupthresh)
		return outstanding;
	for (i = 63; i >= 0; i--) {
		u64 bit = 1ULL << i;

		if (sacked & bit)
			above++;
		else if ((outstanding & bit) && above >= dupthresh)
			lost |= bit;
	}
	return lost;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_sack_lost_mask);

/**
 * mrc_sack_bitmap() - the SACK field a receiver sends
 * @psns: PSNs held out of order (any order, duplicates allowed)
 * @n: number of entries in @psns
 * @rcv_nxt: next PSN expected in order (the cumulative ACK)
 *
 * Return: bit i set when PSN rcv_nxt + 1 + i is held; PSNs outside the 64
 * after @rcv_nxt are not representable and left out.
 */
u64 mrc_sack_bitmap(const u32 *psns, unsigned int n, u32 rcv_nxt)
{
	u64 bits = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		mrc_sack_mark(&bits, psns[i], rcv_nxt);
	return bits;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_sack_bitmap);
