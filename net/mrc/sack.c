// SPDX-License-Identifier: GPL-2.0-only
/*
 * SACK field: the bitmap a receiver advertises.  Plain state in, decision out.
 */
#include <linux/bitops.h>
#include <linux/export.h>
#include <kunit/visibility.h>

#include "sack.h"

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

/**
 * mrc_sack_words_used() - how many words of a SACK field to send
 * @words: the field, words[0] the header's
 * @n: its words
 *
 * Return: 1 + the index of the last non-zero word, 1 when only the
 * header's (or none) has bits: MRC_F_SACKX then carries the rest.
 */
unsigned int mrc_sack_words_used(const u64 *words, unsigned int n)
{
	while (n > 1 && !words[n - 1])
		n--;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_sack_words_used);
