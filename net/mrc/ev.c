// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entropy values: each connection sprays its packets over a set of outer UDP
 * source ports, each hashed by the fabric onto one path.  These functions
 * decide which EV carries the next packet (smooth weighted round robin over
 * weights from live per-EV quality), and retire, replace and re-admit EVs.
 * Plain state in, decisions out: KUnit and a simulator drive them directly.
 */
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <kunit/visibility.h>

#include "protocol.h"
#include "ev.h"

/**
 * mrc_ev_find_port() - the slot of the EV (active or retired) on @port
 * @evs: slots
 * @cap: number of slots
 * @port: source port
 *
 * Ports are unique among the slots in use (mrc_ev_fresh_port()).
 * Return: slot index, or -1 when no EV uses @port.
 */
int mrc_ev_find_port(const struct mrc_ev *evs, u16 cap, u16 port)
{
	u16 i;

	for (i = 0; i < cap; i++)
		if (evs[i].state != MRC_EV_FREE && evs[i].port == port)
			return i;
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_find_port);

static bool mrc_ev_port_used(const struct mrc_ev *evs, u16 cap, u16 port)
{
	return mrc_ev_find_port(evs, cap, port) >= 0;
}

/* The lowest allowed port in [@port, port_max], or above port_max. */
static u32 mrc_ev_next_candidate(const struct mrc_ev_range *r, u32 port)
{
	if (port > r->port_max)
		return port;
	if (r->next_allowed)
		return r->next_allowed(r->ctx, port);
	while (port <= r->port_max && r->allowed && !r->allowed(r->ctx, port))
		port++;
	return port;
}

/* mrc_ev_fresh_port(): every port the range and its policies allow is in use */
#define MRC_EV_NO_PORT	0x10000U

/*
 * Random draws first; a policy may allow few ports, so then a scan from a
 * random point that visits allowed ports only (next_allowed skips whole
 * forbidden stretches) and stops after cap + 1 of them: at most cap are
 * used, so if an unused allowed port exists among those visited it is
 * found.  The cost is bounded by the slot count, not the port span, which
 * matters in softirq (a retirement draws a fresh port).
 * Return: the port, or MRC_EV_NO_PORT: never a port that a policy forbids
 * (a pin's few ports are all a connection may use) or that an EV holds.
 */
static u32 mrc_ev_fresh_port(const struct mrc_ev *evs, u16 cap, const struct mrc_ev_range *r)
{
	u32 span = (u32)r->port_max - r->port_min + 1;
	u32 start, port, visited = 0;
	bool wrapped = false;
	u32 tries;

	for (tries = 0; tries < 64; tries++) {
		port = r->port_min + get_random_u32_below(span);
		if (!mrc_ev_port_used(evs, cap, port) &&
		    (!r->allowed || r->allowed(r->ctx, port)))
			return port;
	}
	start = r->port_min + get_random_u32_below(span);
	port = start;
	while (visited <= cap) {
		port = mrc_ev_next_candidate(r, port);
		if (port > r->port_max) {
			if (wrapped)
				break;
			wrapped = true;
			port = mrc_ev_next_candidate(r, r->port_min);
			if (port > r->port_max)
				break;
		}
		if (wrapped && port >= start)
			break;
		if (!mrc_ev_port_used(evs, cap, port))
			return port;
		visited++;
		port++;
	}
	return MRC_EV_NO_PORT;
}

static void mrc_ev_activate(struct mrc_ev *ev, u16 port, u32 *born)
{
	*ev = (struct mrc_ev){
		.port = port,
		.state = MRC_EV_ACTIVE,
		.born = (*born)++,
	};
	ev->weight = mrc_ev_weight(ev, 0);
}

/**
 * mrc_evs_init() - fill a connection's EV slots
 * @evs: @cap slots
 * @cap: slots (room for retired EVs beside the active ones)
 * @count: active EVs wanted (at most @cap)
 * @range: source port range
 * @born: the connection's slot-age counter
 *
 * Each EV takes a port of its own that the range's policies allow.  Where
 * they allow fewer than @count (a pin policy of a few ports), the
 * connection gets one EV per allowed port and the other slots stay free:
 * an EV on any other port would break the pin, two on one port would be
 * one path the choice counted twice.
 * Return: the EVs made active, 0 when no port is allowed.
 */
u16 mrc_evs_init(struct mrc_ev *evs, u16 cap, u16 count, const struct mrc_ev_range *range,
		 u32 *born)
{
	u32 port;
	u16 i;

	for (i = 0; i < cap; i++)
		evs[i] = (struct mrc_ev){ .state = MRC_EV_FREE };
	for (i = 0; i < min(count, cap); i++) {
		port = mrc_ev_fresh_port(evs, cap, range);
		if (port == MRC_EV_NO_PORT)
			break;
		mrc_ev_activate(&evs[i], port, born);
		evs[i].untried = true;
		evs[i].weight = mrc_ev_weight(&evs[i], 0);
	}
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_evs_init);

u16 mrc_ev_active_count(const struct mrc_ev *evs, u16 cap)
{
	u16 i, n = 0;

	for (i = 0; i < cap; i++)
		n += evs[i].state == MRC_EV_ACTIVE;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_active_count);

/* Active EVs of one path */
static u16 mrc_ev_path_active(const struct mrc_ev *evs, u16 cap, u8 path)
{
	u16 i, n = 0;

	for (i = 0; i < cap; i++)
		n += evs[i].state == MRC_EV_ACTIVE && evs[i].path == path;
	return n;
}

/**
 * mrc_evs_spread() - share a connection's active EVs among its paths
 * @evs: slots
 * @cap: number of slots
 * @npaths: paths (1..), path 0 the one the handshake proved
 * @now: jiffies
 *
 * The active EVs go to the paths in turn, so every plane gets an equal
 * share of EVs and, by the weighted choice, of the traffic.  An EV moved
 * off path 0 is retired with a probe due @now: a path whose remote address
 * the peer only announced carries data once a probe on it was answered,
 * which proves that the address is the peer's and that the path works.
 */
void mrc_evs_spread(struct mrc_ev *evs, u16 cap, u8 npaths, unsigned long now)
{
	u16 i, k = 0;

	for (i = 0; i < cap; i++) {
		struct mrc_ev *ev = &evs[i];

		if (ev->state != MRC_EV_ACTIVE)
			continue;
		ev->path = k++ % max_t(u8, npaths, 1);
		if (!ev->path)
			continue;
		ev->state = MRC_EV_RETIRED;
		ev->next_probe = now;
		ev->probe_backoff = 0;
		ev->swrr = 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mrc_evs_spread);

/* Which active EVs a choice considers */
enum mrc_ev_filter {
	MRC_EV_ANY,
	MRC_EV_PROVEN,		/* delivered something */
	MRC_EV_ECHOED,		/* echoed since the filter's time (jiffies) */
	MRC_EV_ALIVE,		/* delivered a packet sent after the filter's time (us) */
	MRC_EV_SOUND,		/* ALIVE, and lost nothing since its last delivery */
};

static bool mrc_ev_passes(const struct mrc_ev *ev, enum mrc_ev_filter filter, u64 since)
{
	switch (filter) {
	case MRC_EV_PROVEN:
		return ev->delivered;
	case MRC_EV_ECHOED:
		return ev->echoed && time_after_eq(ev->echoed_at, (unsigned long)since);
	case MRC_EV_ALIVE:
		return ev->last_delivered_tx_us > since;
	case MRC_EV_SOUND:
		return !ev->losses && ev->last_delivered_tx_us > since;
	default:
		return true;
	}
}

/*
 * Smooth weighted round robin over the active EVs that pass @filter and are
 * on a path in @paths (a bit per path index).
 */
static int mrc_ev_swrr(struct mrc_ev *evs, u16 cap, int avoid, enum mrc_ev_filter filter,
		       u64 since, u32 paths)
{
	s32 total = 0;
	int i, best = -1;

	for (i = 0; i < cap; i++) {
		struct mrc_ev *ev = &evs[i];

		if (ev->state != MRC_EV_ACTIVE || i == avoid || !(paths & BIT(ev->path)) ||
		    !mrc_ev_passes(ev, filter, since))
			continue;
		ev->swrr += ev->weight;
		total += ev->weight;
		if (best < 0 || ev->swrr > evs[best].swrr)
			best = i;
	}
	if (best >= 0)
		evs[best].swrr -= total;
	return best;
}

/**
 * mrc_ev_pick() - the EV for the next packet
 * @evs: slots
 * @cap: number of slots
 * @avoid: slot not to use if any other is active (a retransmission moves
 *	off the EV that lost it), or -1
 *
 * Smooth weighted round robin (as nginx balances upstreams): every active EV
 * gains its weight, the richest is chosen and pays the total, so each EV
 * gets packets in proportion to its weight, evenly interleaved.
 * Return: slot index, or -1 when no EV is active.
 */
int mrc_ev_pick(struct mrc_ev *evs, u16 cap, int avoid)
{
	int best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_ANY, 0, MRC_EV_ALL_PATHS);

	if (best < 0)
		return avoid >= 0 && avoid < cap && evs[avoid].state == MRC_EV_ACTIVE ?
		       avoid : -1;
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_pick);

/**
 * mrc_ev_pick_retransmit() - the EV for a retransmission
 * @evs: slots
 * @cap: number of slots
 * @avoid: the slot that lost the packet, or -1
 *
 * A fresh EV (one that replaced a retired one) has an unknown path: when a
 * path dies, a share of the replacements lands on it.  New data may take
 * that chance, which is how paths are found; a retransmission, which the
 * receiver's in-order delivery may be waiting for, goes on an EV that has
 * already delivered, if any is active, else on one the peer echoed around
 * its newest echo (mrc_ev_echoed()).
 * Return: slot index, or -1 when no EV is active.
 */
int mrc_ev_pick_retransmit(struct mrc_ev *evs, u16 cap, int avoid)
{
	int best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_PROVEN, 0, MRC_EV_ALL_PATHS);
	unsigned long newest = 0;
	bool echoed = false;
	u16 i;

	if (best >= 0)
		return best;
	/*
	 * Nothing delivered: a peer that only receives, resending its FIN.
	 * The EVs its peer echoed last reach it; with a plane dead, half of
	 * the others do not, and a FIN lost on each try outlived the orphan.
	 */
	for (i = 0; i < cap; i++) {
		const struct mrc_ev *ev = &evs[i];

		if (ev->state == MRC_EV_ACTIVE && i != avoid && ev->echoed &&
		    (!echoed || time_after(ev->echoed_at, newest))) {
			newest = ev->echoed_at;
			echoed = true;
		}
	}
	if (echoed) {
		best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_ECHOED,
				   newest - msecs_to_jiffies(MRC_EV_ECHO_TRUST_MS),
				   MRC_EV_ALL_PATHS);
		if (best >= 0)
			return best;
	}
	return mrc_ev_pick(evs, cap, avoid);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_pick_retransmit);

/**
 * mrc_ev_pick_retransmit_alive() - the EV to resend a packet lost at @sent_us
 * @evs: slots
 * @cap: number of slots
 * @avoid: the slot that lost the packet, or -1
 * @sent_us: when the lost packet was sent (mrc_clock_us())
 * @since: a delivery of a packet sent after this proves an EV alive now
 *	(mrc_ev_alive_since(): after @sent_us and lately)
 * @rtt_us: the connection's smoothed RTT: how long before @sent_us a
 *	delivered packet may have been sent and still vouch for its path
 *
 * An EV that delivered a packet sent after the lost one is known to work
 * now; one that merely delivered once may share the lost packet's dead path
 * (a whole plane going silent leaves its EVs proven, at full weight, until
 * each loses a packet of its own), and a resend lost again costs the
 * receiver another round of loss inference or an RTO.
 *
 * Such an EV on another path than @avoid's comes first.  A loss is found
 * about 1.5 RTTs after its send, before any rule can tell a dead plane from
 * a queue's drop: the plane's other EVs had delivered what was sent just
 * before it died, so they still looked alive, and the first resends of a
 * leaf's failure went back onto its plane and were lost again, a second
 * round that doubled the gap (planes.sh).  Another path costs a queue's
 * drop nothing.  Nor does the other path need to have delivered lately:
 * bursts put one EV's packets together, so within a quarter RTT of the
 * newest delivery only a few EVs delivered at all, often all on the dying
 * plane (as it dies link by link, some of its spines still deliver for a
 * few ms): 134 resends went onto one such EV and were lost again, and the
 * ACK clock stopped until the RTO, a 105 ms gap (planes.sh).  So another
 * path that delivered anything sent after the lost packet comes next.
 * Then another path's EV that delivered a packet sent at most @rtt_us
 * before the lost one and lost nothing since: at the first verdict the
 * other path may have delivered nothing sent after the lost packet yet
 * (its ACKs still on the way) while the dying plane's remaining links did,
 * and 30-48 resends went back onto those and were lost again (gaps of 37-49
 * ms in 3 of 48 planes.sh runs).  Then an EV alive lately on any path,
 * then mrc_ev_pick_retransmit().  The mirror case, a queue's drop on the
 * live path just as the other died, now sends that resend onto the dying
 * one; it is rarer: the survivor's queue overflows only once it carries
 * the load, by when the dead path's EVs delivered nothing sent within an
 * RTT of the packets it drops, or are retired.
 * Return: slot index, or -1 when no EV is active.
 */
int mrc_ev_pick_retransmit_alive(struct mrc_ev *evs, u16 cap, int avoid, u64 sent_us,
				 u64 since, u32 rtt_us)
{
	int best = -1;

	if (avoid >= 0 && avoid < cap) {
		u32 others = ~BIT(evs[avoid].path);

		best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_ALIVE, since, others);
		if (best < 0 && since > sent_us)
			best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_ALIVE, sent_us, others);
		if (best < 0)
			best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_SOUND,
					   sent_us > rtt_us ? sent_us - rtt_us : 0, others);
	}
	if (best < 0)
		best = mrc_ev_swrr(evs, cap, avoid, MRC_EV_ALIVE, since, MRC_EV_ALL_PATHS);
	return best >= 0 ? best : mrc_ev_pick_retransmit(evs, cap, avoid);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_pick_retransmit_alive);

/**
 * mrc_paths_rx_live() - the paths the peer's packets lately came in on
 * @paths: the connection's paths
 * @npaths: how many
 * @now: jiffies
 * @lag: jiffies a path may stay silent behind the newest arrival (an RTT)
 *
 * A plane that fails takes both directions of its links: when the peer's
 * packets stop coming in on a path while they go on coming on another,
 * ours on it get lost too.  This is what a receiver knows of its ACKs'
 * paths without an echo, and its sender's choice, not its own, decides it.
 * Return: a bit per path that had an arrival within @lag of the newest,
 * or every path when nothing came in during MRC_EV_ECHO_TRUST_MS.
 */
u32 mrc_paths_rx_live(const struct mrc_path *paths, u8 npaths, unsigned long now,
		      unsigned long lag)
{
	unsigned long newest = 0;
	bool any = false;
	u32 live = 0;
	u8 p;

	for (p = 0; p < npaths; p++) {
		if (paths[p].rx && (!any || time_after(paths[p].rx_at, newest)))
			newest = paths[p].rx_at;
		any |= paths[p].rx;
	}
	if (!any || time_before(newest, now - msecs_to_jiffies(MRC_EV_ECHO_TRUST_MS)))
		return MRC_EV_ALL_PATHS;
	for (p = 0; p < npaths; p++)
		if (paths[p].rx && !time_before(paths[p].rx_at, newest - lag))
			live |= BIT(p);
	return live;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_paths_rx_live);

/**
 * mrc_ev_pick_ack() - the EV for a pure ACK
 * @evs: slots
 * @cap: number of slots
 * @avoid: slot not to use if another qualifies (a second copy), or -1
 * @since: jiffies: an EV echoed since then is trusted
 * @paths: a bit per path worth an ACK (mrc_paths_rx_live()); the others
 *	only when no EV of these is active
 * @turn: the path of the previous ACK; set to this one's when a path's
 *	turn chose it (not when exploring)
 * @explore: choose among all active EVs (how new EVs get echoed)
 *
 * ACKs are never acknowledged, so a receiver cannot learn from losses that
 * an EV of its own sits on a dead path: during a one-spine failure a
 * quarter of its ACKs vanished, and a sender with a small window lost its
 * ACK clock on each (an RTO every 20 ms, the window pinned at 2).  Its one
 * sign of a working EV is the peer's echo: every packet names the EV of
 * the last packet received from us (ack_ev).
 *
 * The paths of @paths take turns, so that a plane's death takes at most
 * its share of the ACKs.  Choosing among the echoed EVs of all paths let
 * them gather on one plane: the peer echoes only the newest ACK it got, so
 * a slower path's ACKs are rarely echoed, and in a tenth to a third of
 * 20 ms spans all ACKs took one plane; when that one died, none reached
 * the sender for 48-250 ms, and it took spurious RTOs (planes.sh).  On the
 * path, ACKs go on its EVs echoed since @since, by weighted choice; with
 * fewer of them than MRC_EV_ACK_MIN_ECHOED, or than half its active EVs if
 * that is less (but two; a new connection, a quiet peer, a slow path, few
 * EVs a path), on any of its active EVs.  One path, as before: the paths
 * only take turns.  Asked to @explore, any active EV.
 * Return: slot index, or -1 when no EV is active.
 */
int mrc_ev_pick_ack(struct mrc_ev *evs, u16 cap, int avoid, unsigned long since, u32 paths,
		    u8 *turn, bool explore)
{
	u16 trusted[MRC_MAX_PATHS] = {}, active[MRC_MAX_PATHS] = {};
	u32 usable = 0;
	bool echoed;
	int best;
	u8 p, k;
	u16 i;

	if (explore)
		return mrc_ev_pick(evs, cap, avoid);
	for (i = 0; i < cap; i++) {
		const struct mrc_ev *ev = &evs[i];

		if (ev->state != MRC_EV_ACTIVE || ev->path >= MRC_MAX_PATHS)
			continue;
		/* a second copy's threshold is the first's: avoid counts here */
		active[ev->path]++;
		if (i == avoid)
			continue;
		usable |= BIT(ev->path);
		trusted[ev->path] += mrc_ev_passes(ev, MRC_EV_ECHOED, since);
	}
	if (usable & paths)
		usable &= paths;
	if (!usable)
		return mrc_ev_pick(evs, cap, avoid);
	/* usable is not empty: some k finds a path */
	for (k = 1; k <= MRC_MAX_PATHS; k++) {
		p = (*turn + k) % MRC_MAX_PATHS;
		if (usable & BIT(p))
			break;
	}
	*turn = p;
	echoed = trusted[p] >= min_t(u16, MRC_EV_ACK_MIN_ECHOED, max_t(u16, 2, active[p] / 2));
	best = mrc_ev_swrr(evs, cap, avoid, echoed ? MRC_EV_ECHOED : MRC_EV_ANY, since, BIT(p));
	return best >= 0 ? best : mrc_ev_pick(evs, cap, avoid);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_pick_ack);

/**
 * mrc_ev_weight() - share of traffic an EV deserves from its quality
 * @ev: the EV
 * @ref_rtt_us: the connection's smoothed RTT over all its EVs (0: none yet)
 *
 * Full weight for an EV no slower than the connection as a whole, scaled
 * down as its smoothed RTT grows past that (queueing on its path), in
 * proportion to its recent CE-marked
 * fraction, to a quarter after a loss, and to the least until it first
 * delivers, once it carried a packet.  Never zero, so a recovering path
 * keeps being measured.
 *
 * A connection's first EVs have full weight until each carried its first
 * packet (@ev->untried): the weighted choice then tries every one of them
 * within the first windows.  At the least, the EVs that delivered first
 * outweighed the others 64 to 1, so the rest were tried a few at a time,
 * and the connection's bursts stayed one packet long until half of a path's
 * EVs had delivered (mrc_ev_burst_len()): the first 10 exchanges of 64 KiB
 * took 125 ms against TCP's 30 (bench ``rrtrace``).  A replacement is
 * never untried: its path may be the dead one its predecessor was on.  A
 * retirement leaves the mark: an EV that carried nothing lost nothing (a
 * plane's EVs retired until their probe, a path gone down or silent).
 *
 * The reference is the smoothed RTT, not the smallest sample: one lucky
 * sample (tens of microseconds on an idle moment, against milliseconds of
 * queueing under load) put every EV at the floor, so a marking path and a
 * fresh EV on a dead one got the same share as the best.
 * Return: weight in 1..MRC_EV_WEIGHT_MAX.
 */
u16 mrc_ev_weight(const struct mrc_ev *ev, u32 ref_rtt_us)
{
	u32 w = MRC_EV_WEIGHT_MAX;

	if (ev->srtt_us && ref_rtt_us && ev->srtt_us > ref_rtt_us)
		w = (u64)w * ref_rtt_us / ev->srtt_us;
	/* ECN is the load balancer's signal: a marking path loses its share */
	w = w * (MRC_EV_WEIGHT_MAX - min_t(u32, ev->ce_ewma, MRC_EV_WEIGHT_MAX)) /
	    MRC_EV_WEIGHT_MAX;
	if (ev->losses)
		w /= 4;
	/*
	 * A fresh EV's path is unknown (while a path is dead, a share of the
	 * replacements lands on it): the smallest share until it delivers.
	 * Not a fraction of the full weight: the EVs that did deliver are
	 * scaled down by their RTT, and a fresh one, which has none, would
	 * otherwise outweigh them all.
	 */
	if (!ev->delivered)
		return ev->untried ? MRC_EV_WEIGHT_MAX : MRC_EV_WEIGHT_MIN;
	return clamp_t(u32, w, MRC_EV_WEIGHT_MIN, MRC_EV_WEIGHT_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_weight);

/**
 * mrc_ev_delivered() - a packet sent on @ev was acknowledged
 * @ev: the EV
 * @tx_us: when the packet was sent (mrc_clock_us())
 * @ce: the receiver saw it CE-marked
 * @ref_rtt_us: the connection's smoothed RTT (mrc_ev_weight())
 */
void mrc_ev_delivered(struct mrc_ev *ev, u64 tx_us, bool ce, u32 ref_rtt_us)
{
	ev->delivered++;
	ev->losses = 0;
	/* EWMA with gain 1/8 of the marked fraction */
	ev->ce_ewma -= ev->ce_ewma / 8;
	if (ce) {
		ev->ce++;
		ev->ce_ewma += MRC_EV_WEIGHT_MAX / 8;
	}
	ev->last_delivered_tx_us = max(ev->last_delivered_tx_us, tx_us);
	ev->weight = mrc_ev_weight(ev, ref_rtt_us);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_delivered);

/**
 * mrc_ev_echoed() - the peer showed that a packet sent on @ev arrived
 * @ev: the EV
 * @now: jiffies
 *
 * An echo of @ev in ack_ev, or a delivery of data sent on it: what
 * mrc_ev_pick_ack() trusts.
 */
void mrc_ev_echoed(struct mrc_ev *ev, unsigned long now)
{
	ev->echoed_at = now;
	ev->echoed = true;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_echoed);

/**
 * mrc_ev_rtt_sample() - an RTT measured on @ev
 * @ev: the EV
 * @rtt_us: from the timestamp echo of an ACK naming @ev (exact: not from
 *	when a delivery was learnt, which a lost ACK delays)
 * @ref_rtt_us: the connection's smoothed RTT (mrc_ev_weight())
 */
void mrc_ev_rtt_sample(struct mrc_ev *ev, u32 rtt_us, u32 ref_rtt_us)
{
	rtt_us = max(rtt_us, 1U);
	ev->srtt_us = ev->srtt_us ? ev->srtt_us - ev->srtt_us / 8 + rtt_us / 8 : rtt_us;
	if (!ev->min_rtt_us || rtt_us < ev->min_rtt_us)
		ev->min_rtt_us = rtt_us;
	ev->weight = mrc_ev_weight(ev, ref_rtt_us);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_rtt_sample);

/**
 * mrc_ev_lost() - a packet sent on @ev was inferred lost
 * @ev: the EV
 * @retire_losses: losses in a row that retire an EV
 *
 * Return: true when the EV should be retired now.
 */
bool mrc_ev_lost(struct mrc_ev *ev, u32 retire_losses)
{
	ev->lost++;
	if (ev->losses < U8_MAX)
		ev->losses++;
	ev->weight = mrc_ev_weight(ev, 0);
	return ev->state == MRC_EV_ACTIVE && ev->losses >= max(retire_losses, 1U);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_lost);

/**
 * mrc_ev_rto_lost() - the RTO found a packet of @ev outstanding
 * @ev: the EV
 * @retire_losses: losses in a row that retire an EV
 * @rtos: RTOs in a row without a delivery, this one included
 *
 * A first RTO only says that nothing was delivered for a while: every path
 * the outstanding packets took is dead, or the receiver or the host stalled
 * (a spurious RTO, frequent on a loaded or emulated host).  It cannot tell
 * the two apart, so it retires no EV that ever delivered: such an EV becomes
 * a suspect (a quarter of its weight, as after a loss), and if its path is
 * dead the per-EV rules retire it as soon as a retransmission sent elsewhere
 * is delivered.  A second RTO with no delivery between (the retransmissions
 * went nowhere either: every proven EV may be dead, as with a single EV)
 * charges every packet as a loss.  Retiring every EV with a packet
 * outstanding at each spurious RTO replaced the proven EVs with fresh ones,
 * a quarter of them on a dead spine, which made the next RTO likelier: a
 * trap that held a one-spine failure at a twentieth of the goodput for
 * seconds.  An EV that never delivered is charged as any loss: its path is
 * unknown and a replacement costs nothing.
 *
 * Return: true when the EV should be retired now.
 */
bool mrc_ev_rto_lost(struct mrc_ev *ev, u32 retire_losses, unsigned int rtos)
{
	if (!ev->delivered || rtos > 1)
		return mrc_ev_lost(ev, retire_losses);
	ev->lost++;
	if (!ev->losses)
		ev->losses = 1;
	ev->weight = mrc_ev_weight(ev, 0);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_rto_lost);

/**
 * mrc_ev_path_silent() - has a path stopped delivering while another works?
 * @evs: slots
 * @cap: number of slots
 * @path: the path
 * @ref_rtt_us: the connection's smoothed RTT
 *
 * Compares send times, not clocks: the newest packet any EV of @path
 * delivered against the newest an active EV of another path delivered.
 * A path that works lags the others by the difference of their RTTs;
 * one that went silent (a dead leaf or plane that says nothing) falls
 * behind without bound.  The margin, MRC_PATH_SILENT_RTTS of the larger of
 * the path's own RTT (its EVs' mean) and the connection's, keeps a slower
 * working path from looking silent: it lags by less than its own RTT.  It was four
 * RTTs: a dead leaf's path then kept its untouched EVs, and gained
 * replacements, for five RTTs, each one losing what it was sent and
 * leaving the receiver a hole; one, sent 270 ms after the failure,
 * held delivery for 59 ms (planes.sh, tracepoints).  With no other path
 * working (one plane, or all silent) nothing is silent: a replacement is
 * then the only way to find a way through.
 * Return: true when another path delivered packets sent more than the
 * margin after anything @path delivered.
 */
bool mrc_ev_path_silent(const struct mrc_ev *evs, u16 cap, u8 path, u32 ref_rtt_us)
{
	u64 newest = 0, newest_other = 0, rtt_sum = 0;
	u32 rtt = ref_rtt_us, sampled = 0;
	u16 i;

	for (i = 0; i < cap; i++) {
		const struct mrc_ev *ev = &evs[i];

		if (ev->state == MRC_EV_FREE)
			continue;
		if (ev->path == path) {
			newest = max(newest, ev->last_delivered_tx_us);
			rtt_sum += ev->srtt_us;
			sampled += !!ev->srtt_us;
		} else if (ev->state == MRC_EV_ACTIVE) {
			newest_other = max(newest_other, ev->last_delivered_tx_us);
		}
	}
	/* the path's mean: one EV's RTT swollen by a stall doubled the margin */
	if (sampled)
		rtt = max_t(u32, rtt, div_u64(rtt_sum, sampled));
	return newest_other > newest + MRC_PATH_SILENT_RTTS * (u64)rtt;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_path_silent);

/**
 * mrc_ev_survey() - one pass over the slots for loss detection and bursts
 * @evs: slots
 * @cap: number of slots
 * @slowest_us: in, the connection's smoothed RTT; out, the largest of it and
 *	every active EV's (an EV without samples yet may be on the slowest path)
 *
 * Counts the active EVs yet to deliver on paths still to be proven.  A path
 * is proven once at least half of its active EVs delivered.  Until then
 * mrc_ev_burst_len() keeps bursts short, so that its EVs yet to deliver,
 * each with the smallest share of the choices once it carried a packet, are
 * all chosen soon: a new plane's, or a connection's first (those are tried
 * first at full weight: mrc_ev_weight()).  Replacements of retired EVs on a proven path do
 * not count: while a spine was dead a quarter of them landed on it again,
 * some EV was always fresh, and every burst was 8 times shorter for
 * seconds.  A CPU-bound sender kept 54-88 % of its goodput through
 * multipath.sh's spine failure (mean 72 %), 73-108 % (mean 87 %) once they
 * no longer counted.  One pass, not one per answer: each ACK asks both, and
 * a second walk of the slots cost 1.6 % of a CPU-bound guest.
 *
 * Return: how many EVs are unproven.
 */
u16 mrc_ev_survey(const struct mrc_ev *evs, u16 cap, u32 *slowest_us)
{
	u16 active[MRC_MAX_PATHS] = {}, delivered[MRC_MAX_PATHS] = {}, n = 0, i;
	u32 slowest = *slowest_us;

	for (i = 0; i < cap; i++) {
		const struct mrc_ev *ev = &evs[i];

		if (ev->state != MRC_EV_ACTIVE)
			continue;
		if (ev->srtt_us > slowest)
			slowest = ev->srtt_us;
		if (ev->path >= MRC_MAX_PATHS)
			continue;
		active[ev->path]++;
		delivered[ev->path] += !!ev->delivered;
	}
	for (i = 0; i < MRC_MAX_PATHS; i++)
		if (2 * delivered[i] < active[i])
			n += active[i] - delivered[i];
	*slowest_us = slowest;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_survey);

/**
 * mrc_ev_srtt_max_update() - keep the largest active EV's srtt across a sample
 * @max_us: the largest srtt of an active EV, as the last mrc_ev_survey() found
 *	it and samples since raised it; raised here when @new_us passes it
 * @old_us: the sampled active EV's srtt before the sample
 * @new_us: its srtt after
 *
 * A survey walks every slot (up to 512), and each ACK needs its answers:
 * 1.8 % of a CPU-bound guest went to that walk.  Between surveys a sample
 * can raise the maximum, which is known at once; it can only lower it when
 * the sampled EV held it, which only a new survey can tell.
 *
 * Return: true when the maximum may have fallen: survey again.
 */
bool mrc_ev_srtt_max_update(u32 *max_us, u32 old_us, u32 new_us)
{
	if (new_us >= *max_us) {
		*max_us = new_us;
		return false;
	}
	return old_us >= *max_us;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_srtt_max_update);

/* The retired EV of @path that probes it while none of its EVs is active. */
static int mrc_ev_path_scout(const struct mrc_ev *evs, u16 cap, u8 path)
{
	u16 i;

	for (i = 0; i < cap; i++)
		if (evs[i].state == MRC_EV_RETIRED && evs[i].path == path)
			return i;
	return -1;
}

/*
 * @path lost its last active EV: its scout probes by @next_probe at the
 * latest, with the scout's short backoff, whatever it had backed off to.
 */
static void mrc_ev_scout_soon(struct mrc_ev *evs, u16 cap, u8 path, unsigned long next_probe)
{
	int scout;

	if (mrc_ev_path_active(evs, cap, path))
		return;
	scout = mrc_ev_path_scout(evs, cap, path);
	if (scout < 0)
		return;
	if (time_after(evs[scout].next_probe, next_probe))
		evs[scout].next_probe = next_probe;
	if (evs[scout].probe_backoff > MRC_EV_SCOUT_BACKOFF)
		evs[scout].probe_backoff = MRC_EV_SCOUT_BACKOFF;
}

/**
 * mrc_ev_retire() - take an EV out of use, maybe replace it with a fresh port
 * @evs: slots
 * @cap: number of slots
 * @idx: the EV to retire
 * @range: source port range for the replacement
 * @born: the connection's slot-age counter
 * @next_probe: when to probe the retired EV first (jiffies)
 * @replace: bring in a fresh EV on the same path
 *
 * The replacement goes to a free slot, else to the slot of the retired EV
 * activated first, which is forgotten, but never to one of a path with no
 * active EV: that path comes back only through its retired EVs' probes,
 * and with them forgotten it never would.  The caller replaces no EV of a
 * silent path (mrc_ev_path_silent()) and retires the path's other active
 * EVs with it: every replacement there lost what it carried in turn, a
 * churn that kept some EV always fresh, so bursts at their shortest and
 * holes for the receiver to wait on, and held the working plane to a
 * seventh of its rate (planes.sh).  The retired EVs are probed instead,
 * and an answer brings the path back (mrc_ev_path_revived()).  Nor is one
 * made when every allowed port has its EV (mrc_evs_init()): the retired
 * EV comes back by its probes.
 * Return: slot of the replacement, or -1 if none was made.
 */
int mrc_ev_retire(struct mrc_ev *evs, u16 cap, int idx, const struct mrc_ev_range *range,
		  u32 *born, unsigned long next_probe, bool replace)
{
	u64 active_paths = 0;
	int i, slot = -1;
	u32 port;

	evs[idx].state = MRC_EV_RETIRED;
	evs[idx].next_probe = next_probe;
	evs[idx].probe_backoff = 0;
	evs[idx].swrr = 0;
	if (!replace) {
		mrc_ev_scout_soon(evs, cap, evs[idx].path, next_probe);
		return -1;
	}
	for (i = 0; i < cap; i++)
		if (evs[i].state == MRC_EV_ACTIVE)
			active_paths |= BIT_ULL(evs[i].path % 64);
	for (i = 0; i < cap; i++) {
		if (evs[i].state == MRC_EV_FREE) {
			slot = i;
			break;
		}
		/* a path with no active EV comes back only through its probes */
		if (i != idx && evs[i].state == MRC_EV_RETIRED &&
		    (active_paths & BIT_ULL(evs[i].path % 64)) &&
		    (slot < 0 || evs[i].born < evs[slot].born))
			slot = i;
	}
	if (slot < 0)
		return -1;
	port = mrc_ev_fresh_port(evs, cap, range);
	if (port == MRC_EV_NO_PORT) {
		mrc_ev_scout_soon(evs, cap, evs[idx].path, next_probe);
		return -1;
	}
	mrc_ev_activate(&evs[slot], port, born);
	/* the replacement tries another way through the same plane */
	evs[slot].path = evs[idx].path;
	return slot;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_retire);

/**
 * mrc_ev_probe_backoff_max() - how far a retired EV's probe interval grows
 * @evs: slots
 * @cap: number of slots
 * @idx: the retired EV
 *
 * Retired EVs back off to 64 intervals (3.2 s by default): while their
 * path has active EVs, it carries the traffic and nothing waits on them.
 * A path with none (its EVs retired and not replaced, mrc_ev_retire())
 * comes back only through a probe's answer, so one of its EVs, the scout,
 * keeps probing every MRC_EV_SCOUT_BACKOFF doublings: a heal is seen
 * within that (400 ms by default), at the cost of one probe per path, not
 * one per EV.
 * Return: the largest probe_backoff for @idx.
 */
u8 mrc_ev_probe_backoff_max(const struct mrc_ev *evs, u16 cap, int idx)
{
	u8 path = evs[idx].path;

	if (!mrc_ev_path_active(evs, cap, path) && mrc_ev_path_scout(evs, cap, path) == idx)
		return MRC_EV_SCOUT_BACKOFF;
	return MRC_EV_PROBE_BACKOFF;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_probe_backoff_max);

/**
 * mrc_ev_path_revived() - a path with no active EV answered a probe
 * @evs: slots
 * @cap: number of slots
 * @path: the path
 * @now: jiffies
 *
 * Call before re-admitting the EV that was answered: when @path had no
 * active EV, its other retired EVs are probed at once, so the path gets
 * its share back within an RTT, not over their backed-off intervals.
 * Return: true when @path had no active EV.
 */
bool mrc_ev_path_revived(struct mrc_ev *evs, u16 cap, u8 path, unsigned long now)
{
	u16 i;

	if (mrc_ev_path_active(evs, cap, path))
		return false;
	for (i = 0; i < cap; i++)
		if (evs[i].state == MRC_EV_RETIRED && evs[i].path == path)
			evs[i].next_probe = now;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_path_revived);

/**
 * mrc_ev_readmit() - a retired EV answered a probe: use it again
 * @evs: slots
 * @cap: number of slots
 * @idx: the retired EV
 * @count: active EVs wanted on the EV's path
 *
 * To keep @count active on that path, its youngest other active EV (a
 * replacement that has had the least time to prove itself) is freed.
 * Return: the slot freed, or -1.
 */
int mrc_ev_readmit(struct mrc_ev *evs, u16 cap, int idx, u16 count)
{
	int i, youngest = -1;

	evs[idx].state = MRC_EV_ACTIVE;
	evs[idx].losses = 0;
	evs[idx].probe_backoff = 0;
	/*
	 * Full share for an EV that delivered before it was retired; one that
	 * never did (any EV of a peer that only acknowledges) keeps a fresh
	 * EV's: at full weight, a new plane would draw every ACK of a pure
	 * receiver.  A connection's first EV that carried nothing yet (a new
	 * plane's, retired by mrc_evs_spread() until its probe) is still
	 * untried: full weight until its first packet, as its plane's others.
	 */
	evs[idx].weight = evs[idx].delivered ? MRC_EV_WEIGHT_MAX : mrc_ev_weight(&evs[idx], 0);
	if (mrc_ev_path_active(evs, cap, evs[idx].path) <= count)
		return -1;
	for (i = 0; i < cap; i++)
		if (i != idx && evs[i].state == MRC_EV_ACTIVE && evs[i].path == evs[idx].path &&
		    (youngest < 0 || evs[i].born > evs[youngest].born))
			youngest = i;
	if (youngest >= 0)
		evs[youngest].state = MRC_EV_FREE;
	return youngest;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ev_readmit);
