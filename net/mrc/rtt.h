/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RTT estimation and retransmission timeout (RFC 6298), in microseconds, over
 * plain state so that KUnit and a simulator can drive it directly.
 */
#ifndef _NET_MRC_RTT_H
#define _NET_MRC_RTT_H

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

void mrc_rtt_init(struct mrc_rtt *r, u32 min_rto_us, u32 max_rto_us);
void mrc_rtt_sample(struct mrc_rtt *r, u32 sample_us);
u32 mrc_rtt_rto(const struct mrc_rtt *r, unsigned int backoff);

#endif /* _NET_MRC_RTT_H */
