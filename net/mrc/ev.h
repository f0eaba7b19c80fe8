/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entropy value (EV) decisions over plain arrays of struct mrc_ev: choice,
 * quality weights, loss inference, retirement and re-admission.
 */
#ifndef _NET_MRC_EV_H
#define _NET_MRC_EV_H

#include <linux/types.h>

struct mrc_ev;
struct mrc_path;

/* a path mask (a bit per path index): every path */
#define MRC_EV_ALL_PATHS	U32_MAX

/*
 * A path with fewer EVs echoed lately than this (or than half its active
 * EVs, but two): its ACKs go on any of its active EVs
 */
#define MRC_EV_ACK_MIN_ECHOED	4
/* How long an echo keeps an EV trusted for ACKs, and one ACK in how many explores */
#define MRC_EV_ECHO_TRUST_MS	50
#define MRC_EV_ACK_EXPLORE	16
/* Probe interval doublings of a retired EV, and of a silent path's scout */
#define MRC_EV_PROBE_BACKOFF	6
#define MRC_EV_SCOUT_BACKOFF	3
/* Loss checks between full surveys of the slots, at most (mrc_evs_survey()) */
#define MRC_EV_SURVEY_EVERY	16

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

u16 mrc_evs_init(struct mrc_ev *evs, u16 cap, u16 count, const struct mrc_ev_range *range,
		 u32 *born);
int mrc_ev_pick(struct mrc_ev *evs, u16 cap, int avoid);
int mrc_ev_pick_retransmit(struct mrc_ev *evs, u16 cap, int avoid);
int mrc_ev_pick_retransmit_alive(struct mrc_ev *evs, u16 cap, int avoid, u64 sent_us,
				 u64 since, u32 rtt_us);
int mrc_ev_pick_ack(struct mrc_ev *evs, u16 cap, int avoid, unsigned long since, u32 paths,
		    u8 *turn, bool explore);
u32 mrc_paths_rx_live(const struct mrc_path *paths, u8 npaths, unsigned long now,
		      unsigned long lag);
u16 mrc_ev_weight(const struct mrc_ev *ev, u32 ref_rtt_us);
void mrc_ev_delivered(struct mrc_ev *ev, u64 tx_us, bool ce, u32 ref_rtt_us);
void mrc_ev_rtt_sample(struct mrc_ev *ev, u32 rtt_us, u32 ref_rtt_us);
bool mrc_ev_lost(struct mrc_ev *ev, u32 retire_losses);
void mrc_ev_echoed(struct mrc_ev *ev, unsigned long now);
bool mrc_ev_rto_lost(struct mrc_ev *ev, u32 retire_losses, unsigned int rtos);
int mrc_ev_find_port(const struct mrc_ev *evs, u16 cap, u16 port);
/* a path is silent when another delivered packets sent this many RTTs later */
#define MRC_PATH_SILENT_RTTS	2
bool mrc_ev_path_silent(const struct mrc_ev *evs, u16 cap, u8 path, u32 ref_rtt_us);
u16 mrc_ev_survey(const struct mrc_ev *evs, u16 cap, u32 *slowest_us);
bool mrc_ev_srtt_max_update(u32 *max_us, u32 old_us, u32 new_us);
int mrc_ev_retire(struct mrc_ev *evs, u16 cap, int idx, const struct mrc_ev_range *range,
		  u32 *born, unsigned long next_probe, bool replace);
u8 mrc_ev_probe_backoff_max(const struct mrc_ev *evs, u16 cap, int idx);
bool mrc_ev_path_revived(struct mrc_ev *evs, u16 cap, u8 path, unsigned long now);
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

/*
 * A resend's header takes its timestamp a moment before the send time is
 * recorded: an echo this much older still counts as the resend's own.
 */
#define MRC_EIFEL_SLACK_US	1000

/**
 * mrc_ev_delivery_known() - was it the last transmission that arrived?
 * @tx_count: transmissions of the segment
 * @sent_us: when it was last sent (mrc_clock_us())
 * @now_us: when its delivery was learnt
 * @min_rtt_us: the connection's smallest RTT sample (0: none yet)
 * @echo_older: the ACK that reported it echoes a packet sent before the
 *	last transmission (Eifel, RFC 3522): the peer held the segment already
 *
 * A resent segment acknowledged sooner than any round trip takes, or by an
 * ACK that a packet sent before the resend triggered, was delivered by an
 * earlier transmission, on another EV (Karn's ambiguity; RACK's test, RFC
 * 8985 6.2): the resend was spurious.  Credited to the resend, a delivery says that
 * a packet sent just now arrived: every other segment resent on that EV a
 * moment before then looks lost behind it (mrc_ev_loss_same_path()), and
 * the EV, a working one, is retired and the window halved.  After one
 * spurious RACK verdict on a plane's failure that cascaded over the
 * working plane (planes.sh).
 * Return: true when the delivery may be credited to the last send.
 */
static inline bool mrc_ev_delivery_known(u8 tx_count, u64 sent_us, u64 now_us, u32 min_rtt_us,
					 bool echo_older)
{
	return tx_count <= 1 || (now_us >= sent_us + min_rtt_us && !echo_older);
}

/**
 * mrc_ev_alive_since() - deliveries of packets sent after when prove an EV
 * @sent_us: when the lost packet was sent
 * @newest_delivered_tx_us: send time of the newest packet delivered on any EV
 * @srtt_us: the connection's smoothed RTT
 *
 * A resend goes on an EV that delivered a packet sent after the lost one
 * (mrc_ev_pick_retransmit_alive()).  But a loss is found 1.5 RTTs after its
 * send: an EV of a plane that died a moment after the lost packet left
 * delivered packets sent in between, and a resend on it was lost again, a
 * second 30 ms round of recovery as plane 2 died (planes.sh).  So an EV of
 * the lost packet's path must also have delivered something sent within a
 * quarter RTT of the newest delivery (another path's comes first so, but
 * need not).
 * Return: the send time after which a delivery proves an EV alive.
 */
static inline u64 mrc_ev_alive_since(u64 sent_us, u64 newest_delivered_tx_us, u32 srtt_us)
{
	u64 recent = newest_delivered_tx_us > srtt_us / 4 ?
		     newest_delivered_tx_us - srtt_us / 4 : 0;

	return sent_us > recent ? sent_us : recent;
}

/**
 * mrc_rack_expect_us() - how long a packet may take before RACK judges it
 * @ev_rtt_us: the smoothed RTT of the packet's EV (the slowest path's when
 *	the EV has none yet)
 * @rack_rtt_us: RACK.rtt, the RTT of the packet sent last among those
 *	delivered (RFC 8985 6.2), 0 before any
 * @recent_max_us: the largest RTT any EV delivered with lately
 *	(mrc_rtt_hi()), 0 when none did
 *
 * 1.25 x the EV's own RTT keeps a slow path's packets from being judged by
 * a fast path's.  RACK.rtt follows a queue that just grew: when a plane
 * died and the other took its load at once, the EVs' smoothed RTTs, taken
 * while it was quiet, lagged its queue, and RACK resent every other packet
 * of the survivor that it had already delivered (half of 2076 resends were
 * duplicates, planes.sh).  Neither follows queues that differ from path to
 * path and change faster than an EV is sampled (one packet in 64): on four
 * spines shaped to 8 Mbit/s the RTTs ranged from 0.15 to 50 ms, packets
 * were judged lost at 11 ms on EVs whose smoothed RTT said 4, and 89 % of
 * the resends were of packets the peer then received (3514 duplicates in
 * 18 MB, the spines full and 27 % of what they carried wasted).  So a
 * packet may also take as long as the slowest live path took lately: a
 * sprayed connection's packets do.  A dead path delivers nothing and adds
 * nothing to it.
 * Return: the expected RTT (us), before the reordering window.
 */
static inline u32 mrc_rack_expect_us(u32 ev_rtt_us, u32 rack_rtt_us, u32 recent_max_us)
{
	u32 expect = ev_rtt_us + ev_rtt_us / 4;

	if (expect < rack_rtt_us)
		expect = rack_rtt_us;
	return expect > recent_max_us ? expect : recent_max_us;
}

/**
 * mrc_ev_loss_rack() - time-based loss inference across EVs (RACK-like)
 * @now_us: current time (mrc_clock_us())
 * @tx_us: send time of an outstanding packet
 * @newest_delivered_tx_us: send time of the newest packet delivered on any EV,
 *	0 when none was: earlier than any send time
 * @expected_rtt_us: RTT expected on the packet's own EV
 *	(mrc_rack_expect_us())
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

/*
 * Floor of RACK's reordering window step, on top of the expected RTT
 * (mrc_rack_expect_us()): covers timer and scheduling jitter (large under
 * emulation).
 */
#define MRC_REO_MIN_US		4000

/**
 * mrc_rack_reo_us() - RACK's reordering window
 * @srtt_us: the connection's smoothed RTT
 * @mult: the window's multiple of its base (mrc_rack_reo_round())
 *
 * A quarter RTT (at least MRC_REO_MIN_US) per step, never more than the
 * larger of one RTT and MRC_REO_MIN_US, as RFC 8985 6.2 bounds reo_wnd by
 * SRTT; so MRC_REO_MULT_MAX steps reach the bound.  Unbounded, eight steps of
 * the 4 ms floor on a 12 ms path added 32 ms to every verdict: a leaf that
 * died after a few spurious resends cost 2.5 RTTs more than the 3 that
 * planes.sh allows before its packets were resent.
 * Return: the window (us).
 */
static inline u32 mrc_rack_reo_us(u32 srtt_us, u8 mult)
{
	u32 base = srtt_us / 4 > MRC_REO_MIN_US ? srtt_us / 4 : MRC_REO_MIN_US;
	u32 cap = srtt_us > MRC_REO_MIN_US ? srtt_us : MRC_REO_MIN_US;

	return base * mult < cap ? base * mult : cap;
}

/*
 * RACK's reordering window: at most this many times its base.  Four
 * quarter-RTT steps reach one RTT, the window's bound (mrc_rack_reo_us()):
 * more steps would change nothing but how long the window takes to narrow.
 */
#define MRC_REO_MULT_MAX	4
/* rounds without a spurious resend that take the window one step back */
#define MRC_REO_QUIET_ROUNDS	16

/**
 * mrc_rack_reo_round() - adapt RACK's reordering window at a round's end
 * @mult: the window's multiple of its base, 1..MRC_REO_MULT_MAX
 * @quiet: rounds since the last spurious resend or step back
 * @spurious: the round acknowledged a resend whose original had arrived
 *	(mrc_ev_delivery_known() false)
 *
 * One step wider per round with a spurious resend, as RFC 8985 7.2 widens
 * reo_wnd per round with a DSACK.  A spine shaped to 8 Mbit/s queues a
 * packet 1.5 ms per packet ahead of it, while an EV's smoothed RTT is
 * measured at the quiet moments: four shaped spines lost a fifth of what
 * one connection sent to spurious verdicts, while the spines dropped
 * 0.6 % (bench, aggregation).  One step back per MRC_REO_QUIET_ROUNDS
 * rounds without one, not the RFC's reset after 16 recoveries: a wide
 * window also delays the verdict on a dead path's packets, and a fabric
 * with a stray spurious resend and few losses kept it wide for seconds,
 * past a plane's failover bound (planes.sh).
 */
static inline void mrc_rack_reo_round(u8 *mult, u8 *quiet, bool spurious)
{
	if (spurious) {
		*mult = *mult < MRC_REO_MULT_MAX ? *mult + 1 : MRC_REO_MULT_MAX;
		*quiet = 0;
	} else if (*mult > 1 && ++*quiet >= MRC_REO_QUIET_ROUNDS) {
		(*mult)--;
		*quiet = 0;
	}
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
 * @unproven_evs: of them, those yet to deliver on a path where fewer than
 *	half did (mrc_ev_survey())
 * @max_segs: the most one burst may hold (setting and 64 KiB packet)
 *
 * Each window goes out in at least 2 * MRC_BURST_SPREAD bursts, so that it
 * still spreads over the fabric's paths.  Not 2 per EV of all 64: full
 * bursts would need a window of 5632 packets, and the halving of one loss
 * episode would halve every burst and with it what a CPU-bound sender
 * moves (multipath.sh's heal: 59 % of the goodput before, for the rest of
 * the transfer).  But while fewer than half of a path's EVs delivered (a
 * new plane's, a connection's first), 2 bursts per EV: the weighted choice
 * gives an EV that carried a packet the smallest share of the choices until
 * its first delivery (a connection's first EVs have the full one until
 * their first packet: mrc_ev_weight()), and long bursts made so few choices
 * that a second plane took 0.9 s to carry anything (planes.sh).
 *
 * Return: 1 (spray every packet) .. @max_segs.
 */
static inline u32 mrc_ev_burst_len(u32 cwnd, u32 active_evs, u32 unproven_evs, u32 max_segs)
{
	u32 spread = 2 * (unproven_evs ? max_t(u32, active_evs, 1) :
			  clamp_t(u32, active_evs, 1, MRC_BURST_SPREAD));

	return clamp_t(u32, cwnd / spread, 1, max_t(u32, max_segs, 1));
}

/**
 * mrc_ev_sent() - a data packet goes out on @ev
 * @ev: the EV
 *
 * Its first packet ends an untried EV's full weight (mrc_ev_weight()), and
 * the credit it gathered at that weight while it waited for its turn: kept,
 * the last of a connection's first EVs to be tried would take the next
 * choices in a row (8 EVs: 9 of the first 16 packets on the last one).
 * Inline: every transmission of a segment counts here.
 */
static inline void mrc_ev_sent(struct mrc_ev *ev)
{
	ev->sent++;
	if (ev->untried) {
		ev->untried = false;
		ev->weight = mrc_ev_weight(ev, 0);
		ev->swrr = 0;
	}
}

#endif /* _NET_MRC_EV_H */
