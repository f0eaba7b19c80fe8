// SPDX-License-Identifier: GPL-2.0-only
/*
 * A connection's entropy values: ev.c's decisions, which work on plain
 * state, applied to a struct mrc_sock.  Drawing its EVs from the
 * namespace's range and EV policies, picking one for each packet, finding
 * one by port or by a queued segment, retiring, probing and re-admitting
 * them, and crediting them with what the peer's packets tell: RTT samples
 * and echoes.  All under the connection's socket lock.
 */
#include "protocol.h"
#include "trace.h"
#include "ev.h"
#include "netlink.h"

static bool mrc_ev_port_allowed(const void *ctx, u16 port)
{
	const struct mrc_sock *msk = ctx;

	return mrc_policy_allows(msk->mn, &msk->remote, port);
}

static u32 mrc_ev_port_next_allowed(const void *ctx, u32 port)
{
	const struct mrc_sock *msk = ctx;

	return mrc_policy_next_allowed(msk->mn, &msk->remote, port);
}

/* Where fresh EVs come from: the namespace's range, filtered by its policies. */
static void mrc_ev_range_init(struct mrc_sock *msk, struct mrc_ev_range *range)
{
	range->port_min = READ_ONCE(msk->mn->cfg.ev_port_min);
	range->port_max = READ_ONCE(msk->mn->cfg.ev_port_max);
	if (range->port_max < range->port_min)
		swap(range->port_max, range->port_min);
	range->allowed = mrc_ev_port_allowed;
	range->next_allowed = mrc_ev_port_next_allowed;
	range->ctx = msk;
}

/**
 * mrc_init_evs() - (re)draw the connection's entropy values
 * @msk: connection (socket lock held)
 * @count: active EVs wanted
 * @gfp: allocation flags
 *
 * The EV policies toward the peer may allow fewer ports than @count (a
 * pin): the connection runs one EV on each, and its ev_count says how
 * many (mrc_evs_init()).
 * Return: 0, -ENOMEM, or -EADDRNOTAVAIL when the policies allow no port
 * toward the peer (as a connect that finds no free local port); the EVs
 * drawn before stay then.
 */
int mrc_init_evs(struct mrc_sock *msk, unsigned int count, gfp_t gfp)
{
	struct mrc_ev_range range;
	struct mrc_route *routes;
	struct mrc_ev *evs;
	u16 cap, n;

	sock_owned_by_me(&msk->sk);
	count = clamp(count, 1U, (unsigned int)MRC_MAX_EVS);
	cap = 2 * count;
	evs = kcalloc(cap, sizeof(*evs), gfp);
	routes = kcalloc(cap, sizeof(*routes), gfp);
	if (!evs || !routes) {
		kfree(evs);
		kfree(routes);
		return -ENOMEM;
	}
	mrc_ev_range_init(msk, &range);
	n = mrc_evs_init(evs, cap, count, &range, &msk->ev_born);
	if (!n) {
		kfree(evs);
		kfree(routes);
		return -EADDRNOTAVAIL;
	}
	kfree(msk->evs);
	mrc_routes_release(msk->ev_routes, msk->ev_cap);
	kfree(msk->ev_routes);
	msk->ev_routes = routes;
	msk->evs = evs;
	/* read unlocked to size a netlink reply (mrc_nl_conn_get_doit()) */
	WRITE_ONCE(msk->ev_cap, cap);
	msk->ev_count = n;
	mrc_evs_changed(msk);
	mrc_trace_evs_drawn(msk);
	return 0;
}

/**
 * mrc_evs_survey() - what a loss check needs of the EVs (mrc_ev_survey())
 * @msk: connection (socket lock held)
 *
 * Sets evs_unproven and slowest_rtt_us.  The slots are walked again only
 * when something the walk counts changed (mrc_evs_changed()), or every
 * MRC_EV_SURVEY_EVERY checks should a change ever go unreported (a kernel
 * with CONFIG_DEBUG_NET checks that none does): one walk per ACK cost 1.8 %
 * of a CPU-bound guest.
 */
void mrc_evs_survey(struct mrc_sock *msk)
{
	sock_owned_by_me(&msk->sk);
	if (msk->evs_changed || ++msk->evs_survey_age >= MRC_EV_SURVEY_EVERY) {
		msk->evs_srtt_max = 0;
		msk->evs_unproven = mrc_ev_survey(msk->evs, msk->ev_cap, &msk->evs_srtt_max);
		msk->evs_changed = false;
		msk->evs_survey_age = 0;
	} else if (IS_ENABLED(CONFIG_DEBUG_NET)) {
		u32 max_us = 0;

		/* every change was reported: a fresh walk agrees */
		DEBUG_NET_WARN_ON_ONCE(mrc_ev_survey(msk->evs, msk->ev_cap, &max_us) !=
				       msk->evs_unproven || max_us != msk->evs_srtt_max);
	}
	msk->slowest_rtt_us = max(msk->rtt.srtt_us, msk->evs_srtt_max);
}

/* Every EV retired: fall back to the one the packet avoided, or the first. */
static int mrc_ev_or_fallback(int idx, int avoid)
{
	return idx >= 0 ? idx : avoid >= 0 ? avoid : 0;
}

/**
 * mrc_pick_ev() - EV slot for the next packet, by weighted choice
 * @msk: connection (socket lock held)
 * @avoid: slot to avoid (the one a lost packet used), or -1
 *
 * Return: a slot index; every connection keeps at least one active EV.
 */
int mrc_pick_ev(struct mrc_sock *msk, int avoid)
{
	return mrc_ev_or_fallback(mrc_ev_pick(msk->evs, msk->ev_cap, avoid), avoid);
}

/*
 * The EV for a pure ACK (mrc_ev_pick_ack()): the paths the peer's packets
 * lately came in on take turns, each on an EV the peer echoed lately; every
 * MRC_EV_ACK_EXPLORE-th ACK that others follow may @explore any.  A path
 * counts as live while it had an arrival within an RTT of the newest,
 * the larger of ours as a sender and as a receiver (which includes the
 * peer's wait before it sends): one passed over while it works costs only
 * a narrower spread of ACKs.  At least two jiffies (one may be about to
 * tick); at most half the echo's trust: a receiver's RTT includes the
 * pauses of a request/response peer, and a dead plane would keep its turns
 * for that long.
 */
int mrc_pick_ack_ev(struct mrc_sock *msk, int avoid, bool explore)
{
	unsigned long trust = msecs_to_jiffies(MRC_EV_ECHO_TRUST_MS), now = jiffies, lag;
	u32 paths = MRC_EV_ALL_PATHS;

	sock_owned_by_me(&msk->sk);
	/* one path: no arrivals are stamped (mrc_path_rx()), nothing to weigh */
	if (msk->npaths > 1) {
		lag = usecs_to_jiffies(max(msk->rtt.srtt_us, msk->rcv_rtt_us));
		lag = clamp(lag, 2UL, trust / 2);
		paths = mrc_paths_rx_live(msk->paths, msk->npaths, now, lag);
	}
	return mrc_ev_or_fallback(mrc_ev_pick_ack(msk->evs, msk->ev_cap, avoid, now - trust,
						  paths, &msk->ack_path, explore), avoid);
}

/*
 * The EV for resending segment @cb, lost on the EV it was last sent on
 * (mrc_ev_pick_retransmit_alive()): one on another path that delivered
 * something sent later and lately (mrc_ev_alive_since()); else one on
 * another path that delivered something sent later; else one on another
 * path that delivered something sent at most an RTT earlier and lost
 * nothing since; else one on any path that
 * delivered something sent later and lately; else one that has delivered.
 * The avoided slot (and its path) is the one the segment went out on only
 * while the slot still holds that EV: a slot freed and reused since
 * belongs to another path.
 */
int mrc_pick_retransmit_ev(struct mrc_sock *msk, const struct mrc_skb_cb *cb)
{
	u64 since = mrc_ev_alive_since(cb->sent_us, msk->newest_delivered_tx_us,
				       msk->rtt.srtt_us);
	struct mrc_ev *lost_on = mrc_ev_of(msk, cb);
	int avoid = lost_on ? lost_on - msk->evs : -1;

	return mrc_ev_or_fallback(mrc_ev_pick_retransmit_alive(msk->evs, msk->ev_cap, avoid,
							       cb->sent_us, since,
							       msk->rtt.srtt_us), avoid);
}

/* The EV a queued segment was last sent on, if its slot still has it. */
struct mrc_ev *mrc_ev_of(struct mrc_sock *msk, const struct mrc_skb_cb *cb)
{
	struct mrc_ev *ev;

	if (!cb->sent || cb->ev_idx >= msk->ev_cap)
		return NULL;
	ev = &msk->evs[cb->ev_idx];
	return ev->port == cb->ev_port && ev->state != MRC_EV_FREE ? ev : NULL;
}

/* The EV (active or retired) that uses source port @port, or NULL. */
static struct mrc_ev *mrc_ev_by_port(struct mrc_sock *msk, u16 port)
{
	int idx = mrc_ev_find_port(msk->evs, msk->ev_cap, port);

	return idx >= 0 ? &msk->evs[idx] : NULL;
}

static const struct mrc_ev_range *mrc_range(struct mrc_sock *msk, struct mrc_ev_range *r)
{
	mrc_ev_range_init(msk, r);
	return r;
}

/* Retires EV slot @idx, with a fresh one on its path if @replace. */
static void mrc_retire_one(struct mrc_sock *msk, int idx, unsigned long probe, bool replace)
{
	struct mrc_ev_range range;

	/* the replacement carries the smallest share until it delivers */
	if (mrc_ev_retire(msk->evs, msk->ev_cap, idx, mrc_range(msk, &range), &msk->ev_born,
			  probe, replace) >= 0)
		mrc_trace_evs_drawn(msk);
	mrc_evs_changed(msk);
	mrc_count(msk->mn, MRC_C_EV_RETIRED);
	trace_mrc_ev_retire(msk->local_id, msk->evs[idx].port, msk->evs[idx].path);
	mrc_nl_notify_ev(msk, &msk->evs[idx], true);
}

/**
 * mrc_retire_ev() - retire EV slot @idx, which lost a packet
 * @msk: connection (socket lock held)
 * @idx: the EV's slot
 *
 * A fresh EV replaces it on its path, unless the path went silent
 * (mrc_ev_path_silent()): then its other active EVs are retired with it,
 * all probed from now on.  Silence is the whole path's: none of its EVs
 * delivered anything sent within two RTTs of another path's newest
 * delivery, so an EV proven earlier is no more alive than the rest.  Most
 * of them are the replacements made before the silence showed, each at
 * the smallest share, so each got a packet now and then, lost it, and left
 * the receiver a hole to wait on: after a leaf died, 32 of them retired
 * one by one over 100-800 ms, and one hole held delivery for 37 ms, over
 * the 3-RTT bound (planes.sh).
 *
 * Return: true when the path went silent: the caller resends what is
 * still out on it (mrc_detect_losses()).
 */
bool mrc_retire_ev(struct mrc_sock *msk, int idx)
{
	unsigned long probe = jiffies +
		max(1UL, msecs_to_jiffies(READ_ONCE(msk->mn->cfg.probe_interval_ms)));
	u8 path = msk->evs[idx].path;
	bool silent = mrc_ev_path_silent(msk->evs, msk->ev_cap, path, msk->rtt.srtt_us);
	u16 i;

	sock_owned_by_me(&msk->sk);
	mrc_retire_one(msk, idx, probe, !silent);
	for (i = 0; silent && i < msk->ev_cap; i++)
		if (msk->evs[i].state == MRC_EV_ACTIVE && msk->evs[i].path == path)
			mrc_retire_one(msk, i, probe, false);
	mrc_probe_scan_soon(msk, probe);
	return silent;
}

/**
 * mrc_probe_scan_soon() - a retired EV's first probe is due at @when
 * @msk: connection (socket lock held)
 * @when: jiffies
 */
void mrc_probe_scan_soon(struct mrc_sock *msk, unsigned long when)
{
	sock_owned_by_me(&msk->sk);
	if (time_before(when, msk->probe_scan_at))
		msk->probe_scan_at = when;
}

/* The peer answered a probe on a retired EV: that path works again. */
void mrc_probe_answered(struct mrc_sock *msk, u16 port)
{
	int i = mrc_ev_find_port(msk->evs, msk->ev_cap, port);

	if (i < 0 || msk->evs[i].state != MRC_EV_RETIRED)
		return;
	if (mrc_ev_path_revived(msk->evs, msk->ev_cap, msk->evs[i].path, jiffies))
		mrc_probe_scan_soon(msk, jiffies);
	mrc_ev_readmit(msk->evs, msk->ev_cap, i, mrc_path_evs(msk));
	mrc_evs_changed(msk);
	mrc_count(msk->mn, MRC_C_EV_READMITTED);
	trace_mrc_ev_readmit(msk->local_id, port, msk->evs[i].path);
	mrc_nl_notify_ev(msk, &msk->evs[i], false);
}

/* The echoed timestamp belongs to the packet that travelled on EV @port. */
void mrc_ev_rtt_rcv(struct mrc_sock *msk, u16 port, u32 sample)
{
	struct mrc_ev *ev = mrc_ev_by_port(msk, port);
	u32 old_us;

	if (!ev)
		return;
	old_us = ev->srtt_us;
	mrc_ev_rtt_sample(ev, sample, msk->rtt.srtt_us);
	if (ev->state == MRC_EV_ACTIVE &&
	    mrc_ev_srtt_max_update(&msk->evs_srtt_max, old_us, ev->srtt_us))
		mrc_evs_changed(msk);
}

/*
 * Every packet of the peer names the EV of the last packet it received from
 * us (ack_ev, with that packet's tsval in tsecr): that EV's path toward the
 * peer works, which, with where the peer's packets come in
 * (mrc_paths_rx_live()), is what a receiver learns of its ACKs' paths
 * (mrc_ev_pick_ack()).  The peer repeats one echo in all it sends until our
 * next packet arrives: one lookup per echo, not per packet.
 */
void mrc_echo_rcv(struct mrc_sock *msk, u16 port, u32 tsecr)
{
	struct mrc_ev *ev;

	if (!tsecr || (port == msk->echo_port && tsecr == msk->echo_tsecr))
		return;
	msk->echo_port = port;
	msk->echo_tsecr = tsecr;
	ev = mrc_ev_by_port(msk, port);
	if (ev)
		mrc_ev_echoed(ev, jiffies);
}
