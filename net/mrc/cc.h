/* SPDX-License-Identifier: GPL-2.0-only */
/* Congestion control over plain state (see cc.c). */
#ifndef _NET_MRC_CC_H
#define _NET_MRC_CC_H

#include <linux/types.h>

#define MRC_CC_ONE		1024	/* fixed point 1.0 for alpha */
#define MRC_CC_MIN_CWND		2U

/**
 * struct mrc_cc - congestion state of one connection
 * @cwnd: window, packets
 * @ssthresh: slow start threshold, packets
 * @cwnd_cnt: deliveries toward the next additive increase
 * @alpha: DCTCP's estimate of the marked fraction, 0..MRC_CC_ONE
 * @round_delivered: deliveries in the current round
 * @round_ce: CE-marked deliveries in the current round
 * @in_recovery: a loss round is being repaired (no growth, no new cut)
 * @undo_cwnd: window before the first RTO of an episode, to restore if the
 *	RTO proves spurious; 0: nothing to restore
 * @undo_ssthresh: slow start threshold before that RTO
 */
struct mrc_cc {
	u32	cwnd;
	u32	ssthresh;
	u32	cwnd_cnt;
	u32	alpha;
	u32	round_delivered;
	u32	round_ce;
	bool	in_recovery;
	u32	undo_cwnd;
	u32	undo_ssthresh;
};

/**
 * struct mrc_cc_params - tunables (per namespace)
 * @dctcp_shift: gain g = 1 / 2^shift
 * @delay_target_us: tolerated queueing delay over the base RTT (0: off)
 * @max_cwnd: upper bound of the window
 */
struct mrc_cc_params {
	u32	dctcp_shift;
	u32	delay_target_us;
	u32	max_cwnd;
};

void mrc_cc_on_ack(struct mrc_cc *cc, const struct mrc_cc_params *p, u32 delivered, u32 ce,
		   u32 srtt_us, u32 base_rtt_us, bool round_done);
void mrc_cc_on_loss(struct mrc_cc *cc);
void mrc_cc_on_rto(struct mrc_cc *cc);
void mrc_cc_rto_verdict(struct mrc_cc *cc, bool spurious);

#endif /* _NET_MRC_CC_H */
