// SPDX-License-Identifier: GPL-2.0-only
/*
 * Congestion control: one window per connection shared by its EVs.
 * DCTCP-like reaction to the fraction of CE-marked deliveries, plus a
 * Swift-like delay target over the base RTT; halving on loss.  Slow start
 * ends on a rising RTT (HyStart++, RFC 9406) before the queues overflow.
 */
#include <linux/export.h>
#include <linux/minmax.h>
#include <kunit/visibility.h>

#include "cc.h"

/* Conservative slow start ends: back to slow start, or on to avoidance. */
static void mrc_cc_css_end(struct mrc_cc *cc)
{
	cc->css_baseline_us = 0;
	cc->css_rounds = 0;
}

/* HyStart++'s round boundary (RFC 9406 4.2): the new round's RTTs start afresh. */
static void mrc_cc_hystart_round(struct mrc_cc *cc)
{
	cc->last_round_min_rtt_us = cc->round_min_rtt_us;
	cc->round_min_rtt_us = 0;
	cc->round_rtt_samples = 0;
	if (cc->css_baseline_us && ++cc->css_rounds >= MRC_HYSTART_CSS_ROUNDS) {
		/* the RTT stayed up: the queues are filling, avoid congestion */
		cc->ssthresh = cc->cwnd;
		mrc_cc_css_end(cc);
	}
}

/**
 * mrc_cc_rtt_sample() - an RTT sample, for slow start's exit (HyStart++)
 * @cc: state
 * @rtt_us: the sample (0: none)
 *
 * RFC 9406 4.2: once a round has MRC_HYSTART_MIN_SAMPLES samples, a
 * smallest RTT that rose by an eighth of the last round's (4..16 ms) over
 * the last round's means the queues are filling: slow start goes on at a
 * quarter of its growth (conservative slow start) for five rounds, then
 * the window stops doubling; an RTT back below where that began was a
 * false alarm.  Over many EVs a round's samples come from all its paths,
 * so its smallest rises only once every path's queue does: the shared
 * window then fills what the paths hold together.  Without it slow start
 * ran until four 50 ms queues overflowed at once, the first second's
 * 100-200 ms holes in the bench's shaped spines.
 */
void mrc_cc_rtt_sample(struct mrc_cc *cc, u32 rtt_us)
{
	u32 thresh;

	if (!rtt_us || cc->cwnd >= cc->ssthresh || cc->in_recovery)
		return;
	if (!cc->round_min_rtt_us || rtt_us < cc->round_min_rtt_us)
		cc->round_min_rtt_us = rtt_us;
	if (++cc->round_rtt_samples < MRC_HYSTART_MIN_SAMPLES || !cc->last_round_min_rtt_us)
		return;
	if (cc->css_baseline_us) {
		if (cc->round_min_rtt_us < cc->css_baseline_us)
			mrc_cc_css_end(cc);
		return;
	}
	thresh = clamp(cc->last_round_min_rtt_us / 8, MRC_HYSTART_MIN_THRESH_US,
		       MRC_HYSTART_MAX_THRESH_US);
	if (cc->round_min_rtt_us >= cc->last_round_min_rtt_us + thresh) {
		cc->css_baseline_us = cc->round_min_rtt_us;
		cc->css_rounds = 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mrc_cc_rtt_sample);

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
	if (round_done)
		mrc_cc_hystart_round(cc);
	if (round_done && cc->round_delivered) {
		u32 frac = cc->round_ce * MRC_CC_ONE / cc->round_delivered;

		/* alpha <- (1 - g) alpha + g F */
		cc->alpha = cc->alpha - (cc->alpha >> p->dctcp_shift) + (frac >> p->dctcp_shift);
		if (cc->round_ce) {
			cc->cwnd -= (u64)cc->cwnd * cc->alpha / (2 * MRC_CC_ONE);
			cc->ssthresh = cc->cwnd;
			mrc_cc_css_end(cc);
		} else if (p->delay_target_us && base_rtt_us &&
			   srtt_us > base_rtt_us + p->delay_target_us) {
			/* decrease in proportion to the excess delay, at most half */
			u32 excess = srtt_us - base_rtt_us - p->delay_target_us;
			u64 cut = (u64)cc->cwnd * min(excess, srtt_us / 2) / srtt_us;

			cc->cwnd -= cut;
			cc->ssthresh = cc->cwnd;
			mrc_cc_css_end(cc);
		}
		cc->cwnd = max(cc->cwnd, MRC_CC_MIN_CWND);
		cc->round_delivered = 0;
		cc->round_ce = 0;
		return;
	}
	if (ce || cc->in_recovery)
		return;
	if (cc->cwnd < cc->ssthresh && cc->css_baseline_us) {
		cc->cwnd_cnt += delivered;
		cc->cwnd += cc->cwnd_cnt / MRC_HYSTART_CSS_DIVISOR;
		cc->cwnd_cnt %= MRC_HYSTART_CSS_DIVISOR;
	} else if (cc->cwnd < cc->ssthresh) {
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
	mrc_cc_css_end(cc);
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
	mrc_cc_css_end(cc);
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
