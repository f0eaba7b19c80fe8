/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entropy value (EV) decisions over plain arrays of struct mrc_ev: choice,
 * quality weights, loss inference, retirement and re-admission.
 */
#ifndef _NET_MRC_EV_H
#define _NET_MRC_EV_H

#include <linux/types.h>

struct mrc_ev;

/* Fewer EVs echoed recently than this: ACKs go on any active EV */
#define MRC_EV_ACK_MIN_ECHOED	4
/* How long an echo keeps an EV trusted for ACKs, and one ACK in how many explores */
#define MRC_EV_ECHO_TRUST_MS	50
#define MRC_EV_ACK_EXPLORE	16

/**
 * struct mrc_ev_range - where fresh EVs come from
 * @port_min: lowest UDP source port
 * @port_max: highest UDP source port
 * @allowed: optional filter (EV policies of an external controller)
 * @next_allowed: optional, with @allowed: the lowest port >= its argument
 *	that @allowed accepts, or a value above U16_MAX when none; lets the
 *	search skip what a restrictive policy forbids in one step
 * @ctx: argument of @allowed and @next_allowed
 */
struct mrc_ev_range {
	u16	port_min;
	u16	port_max;
	bool	(*allowed)(const void *ctx, u16 port);
	u32	(*next_allowed)(const void *ctx, u32 port);
	const void *ctx;
};

void mrc_evs_init(struct mrc_ev *evs, u16 cap, u16 count, const struct mrc_ev_range *range,
		  u32 *born);
int mrc_ev_pick(struct mrc_ev *evs, u16 cap, int avoid);
int mrc_ev_pick_retransmit(struct mrc_ev *evs, u16 cap, int avoid);
int mrc_ev_pick_retransmit_alive(struct mrc_ev *evs, u16 cap, int avoid, u64 sent_us);
int mrc_ev_pick_ack(struct mrc_ev *evs, u16 cap, int avoid, unsigned long since, bool explore);
u16 mrc_ev_weight(const struct mrc_ev *ev, u32 ref_rtt_us);
void mrc_ev_delivered(struct mrc_ev *ev, u64 tx_us, bool ce, u32 ref_rtt_us);
void mrc_ev_rtt_sample(struct mrc_ev *ev, u32 rtt_us, u32 ref_rtt_us);
bool mrc_ev_lost(struct mrc_ev *ev, u32 retire_losses);
void mrc_ev_echoed(struct mrc_ev *ev, unsigned long now);
bool mrc_ev_rto_lost(struct mrc_ev *ev, u32 retire_losses, unsigned int rtos);
int mrc_ev_retire(struct mrc_ev *evs, u16 cap, int idx, const struct mrc_ev_range *range,
		  u32 *born, unsigned long next_probe);
int mrc_ev_readmit(struct mrc_ev *evs, u16 cap, int idx, u16 count);
u16 mrc_ev_active_count(const struct mrc_ev *evs, u16 cap);
void mrc_evs_spread(struct mrc_ev *evs, u16 cap, u8 npaths, unsigned long now);

/**
 * mrc_ev_loss_same_path() - per-EV loss inference
 * @tx_us: send time of an outstanding packet on an EV
 * @delivered_tx_us: send time of the newest delivered packet on that EV
 * @tolerance_us: reordering tolerated within one path
 *
 * Packets on one EV follow one path in order: a later packet of the same EV
 * delivered while an earlier one (sent @tolerance_us before it) is not means
 * the earlier one is lost.  Times are mrc_clock_us(): 64 bits, no wrap, so
 * the newest delivery of an EV idle for hours is simply older.
 */
static inline bool mrc_ev_loss_same_path(u64 tx_us, u64 delivered_tx_us, u32 tolerance_us)
{
	return delivered_tx_us > tx_us + tolerance_us;
}

/**
 * mrc_ev_loss_rack() - time-based loss inference across EVs (RACK-like)
 * @now_us: current time (mrc_clock_us())
 * @tx_us: send time of an outstanding packet
 * @newest_delivered_tx_us: send time of the newest packet delivered on any EV,
 *	0 when none was: earlier than any send time
 * @expected_rtt_us: RTT expected on the packet's own EV (its srtt)
 * @reo_us: extra reordering window
 *
 * A packet is lost when something sent after it was delivered and it is
 * overdue by its own path's RTT plus the window: a slow path's packets are
 * judged by the slow path's RTT, so spraying over paths of different delay
 * causes no spurious retransmissions.
 */
static inline bool mrc_ev_loss_rack(u64 now_us, u64 tx_us, u64 newest_delivered_tx_us,
				    u32 expected_rtt_us, u32 reo_us)
{
	return newest_delivered_tx_us > tx_us &&
	       now_us > tx_us + expected_rtt_us + reo_us;
}

/**
 * mrc_ev_loss_is_congestion() - does a loss ask the window to shrink?
 * @same_path: the loss was inferred from a later packet of the same EV
 *	arriving (mrc_ev_loss_same_path())
 * @has_ev: the packet's EV is still known
 *
 * A path that delivers packets sent after the lost one is alive: a queue
 * dropped it, which is congestion.  An EV that delivered nothing since may
 * sit on a dead path; EV retirement answers that, and the shared window is
 * kept for the live paths.  A loss whose EV is gone counts as congestion.
 */
static inline bool mrc_ev_loss_is_congestion(bool same_path, bool has_ev)
{
	return same_path || !has_ev;
}

/**
 * mrc_ev_rto_is_congestion() - does a packet lost at RTO reset the window?
 * @ev_delivered: packets the packet's EV has ever delivered
 *
 * An RTO on an EV whose path once worked means a path went silent: the
 * window restarts, as TCP's does.  An EV that never delivered was a fresh
 * port whose path was unknown, maybe a dead one; retiring it (and resending
 * on a proven EV) answers that, and a small window would leave too few
 * packets in flight for the next such loss to be seen before another RTO.
 */
static inline bool mrc_ev_rto_is_congestion(u32 ev_delivered)
{
	return ev_delivered > 0;
}

/*
 * A window is sent in at least twice this many bursts, twice per active EV
 * when there are fewer (mrc_ev_burst_len()).
 */
#define MRC_BURST_SPREAD	8

/**
 * mrc_ev_burst_len() - how many new segments go back to back on one EV
 * @cwnd: congestion window, packets
 * @active_evs: EVs in use
 * @fresh_evs: of them, those that have not delivered yet
 * @max_segs: the most one burst may hold (setting and 64 KiB packet)
 *
 * Each window goes out in at least 2 * MRC_BURST_SPREAD bursts, so that it
 * still spreads over the fabric's paths.  Not 2 per EV of all 64: full
 * bursts would need a window of 5632 packets, and the halving of one loss
 * episode would halve every burst and with it what a CPU-bound sender
 * moves (multipath.sh's heal: 59 % of the goodput before, for the rest of
 * the transfer).  But while some EVs have not delivered yet (a new plane's,
 * replacements of retired ones), 2 bursts per EV: the weighted choice
 * gives a fresh EV the smallest share of the choices until its first
 * delivery, and long bursts made so few choices that a second plane took
 * 0.9 s to carry anything (planes.sh).
 *
 * Return: 1 (spray every packet) .. @max_segs.
 */
static inline u32 mrc_ev_burst_len(u32 cwnd, u32 active_evs, u32 fresh_evs, u32 max_segs)
{
	u32 spread = 2 * (fresh_evs ? max_t(u32, active_evs, 1) :
			  clamp_t(u32, active_evs, 1, MRC_BURST_SPREAD));

	return clamp_t(u32, cwnd / spread, 1, max_t(u32, max_segs, 1));
}

#endif /* _NET_MRC_EV_H */
