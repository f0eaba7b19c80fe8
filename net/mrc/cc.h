/* SPDX-License-Identifier: GPL-2.0-only */
/* Congestion control over plain state (see cc.c). */
#ifndef _NET_MRC_CC_H
#define _NET_MRC_CC_H

#include <linux/types.h>

#define MRC_CC_ONE		1024	/* fixed point 1.0 for alpha */
#define MRC_CC_MIN_CWND		2U

/* HyStart++ (RFC 9406): leaving slow start on a rising RTT, its constants */
#define MRC_HYSTART_MIN_SAMPLES		8	/* RTT samples a round before it judges */
#define MRC_HYSTART_MIN_THRESH_US	4000
#define MRC_HYSTART_MAX_THRESH_US	16000
#define MRC_HYSTART_CSS_DIVISOR		4	/* growth in conservative slow start */
#define MRC_HYSTART_CSS_ROUNDS		5	/* its length before congestion avoidance */

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
 * @round_min_rtt_us: HyStart++: smallest RTT sampled in this round (0: none)
 * @last_round_min_rtt_us: the same of the round before (0: none)
 * @round_rtt_samples: RTT samples in this round
 * @css_baseline_us: in conservative slow start, the round's smallest RTT
 *	when it began; 0: not in it
 * @css_rounds: rounds in conservative slow start so far
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
	u32	round_min_rtt_us;
	u32	last_round_min_rtt_us;
	u32	round_rtt_samples;
	u32	css_baseline_us;
	u32	css_rounds;
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
void mrc_cc_rtt_sample(struct mrc_cc *cc, u32 rtt_us);
void mrc_cc_on_loss(struct mrc_cc *cc);
void mrc_cc_on_rto(struct mrc_cc *cc);
void mrc_cc_rto_verdict(struct mrc_cc *cc, bool spurious);

#endif /* _NET_MRC_CC_H */
