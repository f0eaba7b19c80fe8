/* SPDX-License-Identifier: GPL-2.0-only */
/* Socket buffer sizes and window updates, over plain state (autotune.c). */
#ifndef _NET_MRC_AUTOTUNE_H
#define _NET_MRC_AUTOTUNE_H

#include <linux/types.h>

/* Segments a fresh connection is assumed to move per RTT (TCP's initial window) */
#define MRC_RCVQ_SPACE_SEGS	10

u32 mrc_rcvbuf_grow(u32 copied, u32 space, u32 mss, u32 ratio, u32 cur, u32 max);
u32 mrc_sndbuf_want(u32 cwnd, u32 seg_truesize, u32 cur, u32 max);
bool mrc_wnd_update_due(u32 left, u32 wnd, u32 max, u32 mss);

#endif /* _NET_MRC_AUTOTUNE_H */
