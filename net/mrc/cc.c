// SPDX-License-Identifier: GPL-2.0-only
/*
 * Congestion control: one window per connection shared by its EVs.
 * DCTCP-like reaction to the fraction of CE-marked deliveries, plus a
 * Swift-like delay target over the base RTT; halving on loss.
 */
#include <linux/export.h>
#include <linux/minmax.h>
#include <kunit/visibility.h>

#include "cc.h"

/**
 * mrc_cc_on_ack() - deliveries acknowledged: grow, or react to CE/delay
 * @cc: state
 * @p: parameters
 * @delivered: packets newly delivered (acked or sacked)
 * @ce: of those, how many the receiver saw CE-marked
 * @srtt_us: connection's smoothed RTT
 * @base_rtt_us: smallest RTT seen (the empty-queue RTT)
 * @round_done: a window of data was acknowledged since the last round end
 */
void mrc_cc_on_ack(struct mrc_cc *cc, const struct mrc_cc_params *p, u32 delivered, u32 ce,
		   u32 srtt_us, u32 base_rtt_us, bool round_done)
{
	cc->round_delivered += delivered;
	cc->round_ce += ce;
	if (round_done && cc->round_delivered) {
		u32 frac = cc->round_ce * MRC_CC_ONE / cc->round_delivered;

		/* alpha <- (1 - g) alpha + g F */
		cc->alpha = cc->alpha - (cc->alpha >> p->dctcp_shift) + (frac >> p->dctcp_shift);
		if (cc->round_ce) {
			cc->cwnd -= (u64)cc->cwnd * cc->alpha / (2 * MRC_CC_ONE);
			cc->ssthresh = cc->cwnd;
		} else if (p->delay_target_us && base_rtt_us &&
			   srtt_us > base_rtt_us + p->delay_target_us) {
			/* decrease in proportion to the excess delay, at most half */
			u32 excess = srtt_us - base_rtt_us - p->delay_target_us;
			u64 cut = (u64)cc->cwnd * min(excess, srtt_us / 2) / srtt_us;

			cc->cwnd -= cut;
			cc->ssthresh = cc->cwnd;
		}
		cc->cwnd = max(cc->cwnd, MRC_CC_MIN_CWND);
		cc->round_delivered = 0;
		cc->round_ce = 0;
		return;
	}
	if (ce || cc->in_recovery)
		return;
	if (cc->cwnd < cc->ssthresh) {
		cc->cwnd += delivered;
	} else {
		cc->cwnd_cnt += delivered;
		if (cc->cwnd_cnt >= cc->cwnd) {
			cc->cwnd_cnt -= cc->cwnd;
			cc->cwnd++;
		}
	}
	cc->cwnd = min(cc->cwnd, p->max_cwnd);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cc_on_ack);

/**
 * mrc_cc_on_loss() - packets were inferred lost: halve once per round
 * @cc: state
 */
void mrc_cc_on_loss(struct mrc_cc *cc)
{
	if (cc->in_recovery)
		return;
	cc->in_recovery = true;
	cc->ssthresh = max(cc->cwnd / 2, MRC_CC_MIN_CWND);
	cc->cwnd = cc->ssthresh;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cc_on_loss);

/**
 * mrc_cc_on_rto() - the retransmission timer fired
 * @cc: state
 *
 * Halves the window, as a loss does, instead of restarting from 2 as TCP
 * does: over many EVs an RTO mostly means some EVs' path went silent (they
 * are retired), and with a window of 2 the next loss on a dead EV cannot be
 * inferred before yet another RTO, a trap that held a one-spine failure at
 * a tenth of the remaining capacity in a third of the benchmark runs.
 */
void mrc_cc_on_rto(struct mrc_cc *cc)
{
	/* backed-off RTOs of one episode restore to before the first */
	if (!cc->undo_cwnd) {
		cc->undo_cwnd = cc->cwnd;
		cc->undo_ssthresh = cc->ssthresh;
	}
	cc->ssthresh = max(cc->cwnd / 2, MRC_CC_MIN_CWND);
	cc->cwnd = cc->ssthresh;
	cc->cwnd_cnt = 0;
	cc->in_recovery = false;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cc_on_rto);

/**
 * mrc_cc_rto_verdict() - the first ACK after an RTO tells whether it was spurious
 * @cc: state
 * @spurious: the ACK acknowledged transmissions from before the RTO
 *	(its echo predates the retransmissions: Eifel, RFC 3522)
 *
 * An RTO whose packets had arrived (their ACK was lost, or late) restores
 * the window it cut: over many EVs a lost ACK is the common cause, since a
 * receiver cannot tell which of its EVs' paths died.  Without the undo,
 * every ACK lost on a dead path halved a window that was already small, and
 * the next lost ACK again found nothing behind it to cover it: a one-spine
 * failure held a connection at a window of 2 and a thirtieth of its
 * goodput, one RTO every 20 ms, each retransmission a duplicate.
 */
void mrc_cc_rto_verdict(struct mrc_cc *cc, bool spurious)
{
	if (spurious && cc->undo_cwnd) {
		cc->cwnd = max(cc->cwnd, cc->undo_cwnd);
		cc->ssthresh = max(cc->ssthresh, cc->undo_ssthresh);
	}
	cc->undo_cwnd = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cc_rto_verdict);
