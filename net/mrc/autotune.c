// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer autotuning as TCP's (tcp_rcv_space_adjust(), tcp_sndbuf_expand()):
 * a receive buffer that holds two RTTs of what the reader takes, and a send
 * buffer that holds two windows, each within the namespace's TCP limits.
 * Pure arithmetic over plain numbers, for KUnit.
 */
#include <linux/export.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <kunit/visibility.h>

#include "autotune.h"

/**
 * mrc_rcvbuf_grow() - receive buffer for what the reader took in one RTT
 * @copied: bytes the reader took during the last RTT
 * @space: the most it took in one RTT before (at least one initial window)
 * @mss: segment size
 * @ratio: bytes of window per byte of buffer, << 8 (MSS / truesize)
 * @cur: the buffer now
 * @max: the limit (tcp_rmem[2])
 *
 * Two RTTs of the reader's rate and 16 segments, so that the sender can
 * grow its window for a round before the buffer is the limit; more while
 * the rate still rises (TCP's rule), and converted from window to buffer
 * bytes by @ratio.  Never shrinks: TCP's buffers only grow too.
 *
 * Return: the new buffer size, @cur if it does not grow.
 */
u32 mrc_rcvbuf_grow(u32 copied, u32 space, u32 mss, u32 ratio, u32 cur, u32 max)
{
	u64 win, buf;

	if (copied <= space || !space || !ratio || cur >= max)
		return cur;
	win = 2 * (u64)copied + 16 * (u64)mss;
	/* a rate that rose by x in one RTT may rise as much again */
	win += div64_u64(2 * win * (copied - space), space);
	buf = div64_u64(win << 8, ratio);
	return buf > cur ? min_t(u64, buf, max) : cur;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_rcvbuf_grow);

/**
 * mrc_sndbuf_want() - send buffer for a congestion window
 * @cwnd: window, segments
 * @seg_truesize: what one queued full segment costs
 * @cur: the buffer now
 * @max: the limit (tcp_wmem[2])
 *
 * Two windows: one in flight, one queued behind it, so the writer is not
 * the limit (TCP's tcp_sndbuf_expand()).
 *
 * Return: the new buffer size, @cur if it does not grow.
 */
u32 mrc_sndbuf_want(u32 cwnd, u32 seg_truesize, u32 cur, u32 max)
{
	u64 want = 2 * (u64)max_t(u32, cwnd, MRC_RCVQ_SPACE_SEGS) * seg_truesize;

	return want > cur && cur < max ? min_t(u64, want, max) : cur;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_sndbuf_want);

/**
 * mrc_wnd_update_due() - does a read owe the peer a window update?
 * @left: bytes the peer may still send (our last window, less what came since)
 * @wnd: the window we would offer now
 * @max: the largest window the buffer offers
 * @mss: segment size
 *
 * As tcp_cleanup_rbuf(): when what the peer may send is at most half the
 * largest window and the window now offered is at least twice that, or
 * less than a segment (a sender never sends a segment its window does not
 * hold: TCP advertises no window below one, we do); and a segment fits the
 * new one.  Reading a quarter of the buffer used to be enough, and a
 * 64 KiB request/response then sent a window update (twice, on two EVs)
 * per message that no sender waited for.
 *
 * Return: true when the read should send one.
 */
bool mrc_wnd_update_due(u32 left, u32 wnd, u32 max, u32 mss)
{
	return wnd >= mss && (left < mss || (left <= max / 2 && wnd >= 2 * left));
}
EXPORT_SYMBOL_IF_KUNIT(mrc_wnd_update_due);
