// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-EV path discovery (evtrace.h has the decisions): the hops each EV of
 * a connection crosses, for a controller that localizes a failing link by
 * the EVs whose paths cross it (Documentation/networking/mrc.rst, "Path
 * traces").
 *
 * An administrator starts a connection's trace over netlink (ev-trace).
 * From then on the connection keeps it current: an EV drawn later (a
 * replacement for a retired one) is traced when it appears, and every EV
 * again each MRC_TRACE_REFRESH, because routes change.  A delayed work
 * sends the probes (one per EV at a time, at most MRC_TRACE_BURST at once
 * and MRC_TRACE_RATE a second) and gives up on the unanswered; the ICMP
 * handler and the probe answers record what comes back.
 *
 * Lifetimes: the trace is allocated once, under the socket lock, and freed
 * with the socket (mrc_destruct()); whoever reads it holds a reference to
 * the socket.  The work holds one while it is queued; mrc_done() cancels
 * it, so a closed connection is not kept by its trace.
 */
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/ipv6.h>
#include <linux/workqueue.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "protocol.h"
#include "evtrace.h"

/* Every EV is traced again this often, while the connection lives */
#define MRC_TRACE_REFRESH	(60 * HZ)
/* Probes sent at once, and a second, by one connection */
#define MRC_TRACE_BURST		32
#define MRC_TRACE_RATE		1000

/**
 * struct mrc_trace - a connection's path traces
 * @lock: guards @ev (ICMP and probe answers come without the socket lock)
 * @work: sends probes and times them out; a socket reference while queued
 * @msk: the connection
 * @max_ttl: TTL limit of the traces (socket lock)
 * @tokens: probes that may go now (socket lock)
 * @tokens_us: when @tokens was last filled (socket lock)
 * @refresh_at: jiffies: every EV is traced again then (socket lock)
 * @drawn: new EVs to trace (socket lock)
 * @ev: one per EV port traced, port 0: free
 */
struct mrc_trace {
	spinlock_t		lock;		/* @ev: answers come in softirq */
	struct delayed_work	work;
	struct mrc_sock		*msk;
	u8			max_ttl;
	u32			tokens;
	u64			tokens_us;
	unsigned long		refresh_at;
	bool			drawn;
	struct mrc_ev_trace	ev[MRC_MAX_EVS];
};

static struct mrc_trace *mrc_trace_of(const struct mrc_sock *msk)
{
	/* published once with its lock and work set up (mrc_trace_start()) */
	return smp_load_acquire(&msk->trace);
}

/* Queue the work in @delay jiffies (or sooner, if it is queued sooner). */
static void mrc_trace_kick(struct mrc_trace *tr, unsigned long delay)
{
	struct sock *sk = &tr->msk->sk;

	sock_hold(sk);
	if (!queue_delayed_work(system_wq, &tr->work, delay))
		__sock_put(sk);
}

/* The same, at once: an answer came, the next probe is due. */
static void mrc_trace_kick_now(struct mrc_trace *tr)
{
	struct sock *sk = &tr->msk->sk;

	sock_hold(sk);
	if (mod_delayed_work(system_wq, &tr->work, 0))
		__sock_put(sk);	/* it was queued: that holds its own */
}

/* The slot of the EV with @port, -1: none (retired EVs keep theirs). */
static int mrc_trace_slot(const struct mrc_sock *msk, u16 port)
{
	u16 i;

	for (i = 0; i < msk->ev_cap; i++)
		if (msk->evs[i].state != MRC_EV_FREE && msk->evs[i].port == port)
			return i;
	return -1;
}

/* The entry tracing @port, NULL: none (a port has one at most). */
static struct mrc_ev_trace *mrc_trace_find(struct mrc_trace *tr, u16 port)
{
	unsigned int i;

	for (i = 0; i < MRC_MAX_EVS; i++)
		if (tr->ev[i].port == port)
			return &tr->ev[i];
	return NULL;
}

/*
 * Whether EV @ev is traced: an active one of the connection's first path.
 * Only ICMP errors that quote the connection's own addresses are taken
 * (mrc_icmp_matches()), so another plane's EV would never have a hop
 * named.  A retired EV keeps the trace it had: probing it again would be
 * an EV probe outside mrc_probe_retired()'s backoff, whose answer
 * re-admits it.
 */
static bool mrc_trace_wanted(const struct mrc_sock *msk, const struct mrc_ev *ev)
{
	return ev->state == MRC_EV_ACTIVE && (!ev->path || ev->path >= msk->npaths);
}

/*
 * Free the entries of EVs the connection no longer has; begin one for
 * each traced EV that has none (or for all, when @all).  Context: socket
 * lock, the trace's lock.
 */
static void mrc_trace_refresh(struct mrc_sock *msk, struct mrc_trace *tr, bool all)
{
	struct mrc_ev_trace *free = tr->ev;
	unsigned int i;

	sock_owned_by_me(&msk->sk);
	lockdep_assert_held(&tr->lock);
	for (i = 0; i < MRC_MAX_EVS; i++)
		if (tr->ev[i].port && mrc_trace_slot(msk, tr->ev[i].port) < 0)
			tr->ev[i].port = 0;
	for (i = 0; i < msk->ev_cap; i++) {
		const struct mrc_ev *ev = &msk->evs[i];
		struct mrc_ev_trace *t;

		if (!mrc_trace_wanted(msk, ev))
			continue;
		t = mrc_trace_find(tr, ev->port);
		if (t && !all)
			continue;
		while (!t && free < tr->ev + MRC_MAX_EVS) {
			if (!free->port)
				t = free;
			free++;
		}
		if (!t)
			break;	/* more EVs than entries: the first ones are traced */
		mrc_trace_begin(t, ev->port, tr->max_ttl);
	}
}

/*
 * One round: take new EVs in (all of them when the refresh is due), time
 * out what waited too long, send the probes due.
 * Return: jiffies until the next round: the first probe's deadline while
 * traces run, else the refresh.
 */
static unsigned long mrc_trace_round(struct mrc_sock *msk, struct mrc_trace *tr)
{
	unsigned long now = jiffies;
	u64 now_us = mrc_clock_us(), gained, next_us = U64_MAX;
	bool all = time_after_eq(now, tr->refresh_at);
	unsigned int i;

	sock_owned_by_me(&msk->sk);
	/* whole tokens only; the remainder of the time counts toward the next */
	gained = div_u64((now_us - tr->tokens_us) * MRC_TRACE_RATE, USEC_PER_SEC);
	if (tr->tokens + gained >= MRC_TRACE_BURST) {
		tr->tokens = MRC_TRACE_BURST;
		tr->tokens_us = now_us;
	} else {
		tr->tokens += gained;
		tr->tokens_us += div_u64(gained * USEC_PER_SEC, MRC_TRACE_RATE);
	}
	if (all || tr->drawn) {
		spin_lock_bh(&tr->lock);
		mrc_trace_refresh(msk, tr, all);
		spin_unlock_bh(&tr->lock);
		tr->drawn = false;
		if (all)
			tr->refresh_at = now + MRC_TRACE_REFRESH;
	}

	for (i = 0; i < MRC_MAX_EVS; i++) {
		struct mrc_ev_trace *t = &tr->ev[i];
		const struct mrc_ev *ev;
		struct sk_buff *skb;
		u32 tsval, wait;
		int slot;
		u8 ttl;

		/* a lockless peek: only the socket lock's holder begins a trace */
		if (!t->port || READ_ONCE(t->state) != MRC_TRACE_RUNNING)
			continue;
		slot = mrc_trace_slot(msk, t->port);
		if (slot < 0)
			continue;
		ev = &msk->evs[slot];
		wait = mrc_trace_wait_us(ev->srtt_us ?: msk->rtt.srtt_us);
		spin_lock_bh(&tr->lock);
		mrc_trace_timeout(t, now_us, wait);
		ttl = tr->tokens ? mrc_trace_next_ttl(t) : 0;
		if (t->state == MRC_TRACE_RUNNING)
			/* out: its deadline; due but no token: the next token */
			next_us = min(next_us, t->out ? t->sent_us + wait :
					       now_us + USEC_PER_SEC / MRC_TRACE_RATE);
		spin_unlock_bh(&tr->lock);
		if (!ttl)
			continue;
		skb = mrc_trace_probe_build(msk, &tsval);
		if (!skb) {
			next_us = min(next_us, now_us + MRC_TRACE_MIN_WAIT_US);
			break;
		}
		tr->tokens--;
		spin_lock_bh(&tr->lock);
		/* the clock now, not the round's: its probes go one by one */
		mrc_trace_sent(t, ttl, tsval, mrc_clock_us());
		spin_unlock_bh(&tr->lock);
		mrc_trace_probe_send(msk, skb, ev, ttl);
		next_us = min(next_us, now_us + wait);
	}
	if (next_us == U64_MAX)
		return tr->refresh_at - now;
	return min(tr->refresh_at - now,
		   max(1UL, usecs_to_jiffies(next_us > now_us ? next_us - now_us : 0)));
}

static void mrc_trace_work(struct work_struct *work)
{
	struct mrc_trace *tr = container_of(to_delayed_work(work), struct mrc_trace, work);
	struct mrc_sock *msk = tr->msk;
	struct sock *sk = &msk->sk;

	lock_sock(sk);
	if (mrc_sending_state(msk))
		mrc_trace_kick(tr, mrc_trace_round(msk, tr));
	release_sock(sk);
	sock_put(sk);
}

/**
 * mrc_trace_start() - trace every EV of a connection, and keep doing so
 * @msk: the connection (socket lock held)
 * @max_ttl: the TTL limit (1 .. MRC_TRACE_MAX_HOPS)
 *
 * Return: 0, -ENOTCONN (not established), -ENOMEM.
 */
int mrc_trace_start(struct mrc_sock *msk, u8 max_ttl)
{
	struct mrc_trace *tr = mrc_trace_of(msk);

	sock_owned_by_me(&msk->sk);
	if (!mrc_sending_state(msk))
		return -ENOTCONN;
	if (!tr) {
		tr = kvzalloc(sizeof(*tr), GFP_KERNEL_ACCOUNT);
		if (!tr)
			return -ENOMEM;
		spin_lock_init(&tr->lock);
		INIT_DELAYED_WORK(&tr->work, mrc_trace_work);
		tr->msk = msk;
		tr->tokens = MRC_TRACE_BURST;
		tr->tokens_us = mrc_clock_us();
		/* pairs with mrc_trace_of(): the lock and work set up first */
		smp_store_release(&msk->trace, tr);
	}
	tr->max_ttl = max_ttl;
	tr->refresh_at = jiffies;	/* everything, on the next round */
	mrc_trace_kick_now(tr);
	return 0;
}

/* New EVs were drawn (a replacement, a redraw): trace them now. */
void mrc_trace_evs_drawn(struct mrc_sock *msk)
{
	struct mrc_trace *tr = mrc_trace_of(msk);

	sock_owned_by_me(&msk->sk);
	if (!tr || !mrc_sending_state(msk))
		return;
	tr->drawn = true;
	mrc_trace_kick_now(tr);
}

/* mrc_done(): no more probes; the socket is not kept for them. */
void mrc_trace_stop(struct mrc_sock *msk)
{
	struct mrc_trace *tr = mrc_trace_of(msk);

	sock_owned_by_me(&msk->sk);
	/* the caller holds a reference besides the work's */
	if (tr && cancel_delayed_work(&tr->work))
		__sock_put(&msk->sk);
}

/* mrc_destruct(): nothing can reach the trace any more. */
void mrc_trace_free(struct mrc_sock *msk)
{
	kvfree(msk->trace);
	msk->trace = NULL;
}

/**
 * mrc_trace_reached_rcv() - the peer answered an EV probe
 * @msk: the connection (socket lock held)
 * @port: the EV the probe went on (the answer's ack_ev)
 * @tsecr: the answer's echo of the probe's tsval
 */
void mrc_trace_reached_rcv(struct mrc_sock *msk, u16 port, u32 tsecr)
{
	struct mrc_trace *tr = mrc_trace_of(msk);
	struct mrc_ev_trace *t;
	bool taken;

	sock_owned_by_me(&msk->sk);
	if (!tr)
		return;
	spin_lock_bh(&tr->lock);
	t = mrc_trace_find(tr, port);
	taken = t && mrc_trace_reached(t, tsecr);
	spin_unlock_bh(&tr->lock);
	if (taken)
		mrc_trace_kick_now(tr);
}

/**
 * mrc_trace_icmp() - an ICMP error about a packet of the connection
 * @msk: the connection, the quote matched to it (mrc_icmp_matches())
 * @skb: the ICMP (network header: its own IP header; data: the quote's)
 * @h: the quoted MRC header
 * @port: the quoted UDP source port (the EV)
 *
 * Context: softirq, the socket's spinlock held (maybe owned by its user).
 * Return: true if it was a time exceeded about a trace's probe (taken,
 * or stale): not an error of the connection.
 */
bool mrc_trace_icmp(struct mrc_sock *msk, struct sk_buff *skb, const struct mrchdr *h,
		    u16 port)
{
	struct mrc_trace *tr = mrc_trace_of(msk);
	struct mrc_ev_trace *t;
	__be32 addr[4] = {};
	bool taken;

	if (!tr || h->type != MRC_T_ACK || !(h->flags & MRC_F_PROBE))
		return false;
	if (msk->family == AF_INET) {
		if (icmp_hdr(skb)->type != ICMP_TIME_EXCEEDED ||
		    icmp_hdr(skb)->code != ICMP_EXC_TTL)
			return false;
		addr[0] = ip_hdr(skb)->saddr;
	} else {
		if (icmp6_hdr(skb)->icmp6_type != ICMPV6_TIME_EXCEED ||
		    icmp6_hdr(skb)->icmp6_code != ICMPV6_EXC_HOPLIMIT)
			return false;
		memcpy(addr, &ipv6_hdr(skb)->saddr, sizeof(addr));
	}
	spin_lock(&tr->lock);
	t = mrc_trace_find(tr, port);
	taken = t && mrc_trace_hop_rcv(t, ntohl(h->tsval), addr, mrc_clock_us());
	spin_unlock(&tr->lock);
	if (taken) {
		mrc_count(msk->mn, MRC_C_TRACE_HOPS);
		mrc_trace_kick_now(tr);
	}
	return true;
}

/**
 * mrc_trace_copy() - a snapshot of a connection's traces, for netlink
 * @msk: the connection (socket lock held)
 * @out: MRC_MAX_EVS entries
 * @running: set if a trace is still running
 *
 * Return: entries written (those of EVs the connection has), or -ENOENT
 * when the connection was never traced.
 */
int mrc_trace_copy(struct mrc_sock *msk, struct mrc_ev_trace *out, bool *running)
{
	struct mrc_trace *tr = mrc_trace_of(msk);
	unsigned int i;
	int n = 0;

	sock_owned_by_me(&msk->sk);
	*running = false;
	if (!tr)
		return -ENOENT;
	spin_lock_bh(&tr->lock);
	for (i = 0; i < MRC_MAX_EVS; i++) {
		/* one forgotten since the last round is freed by the next */
		if (!tr->ev[i].port || mrc_trace_slot(msk, tr->ev[i].port) < 0)
			continue;
		out[n++] = tr->ev[i];
		*running |= tr->ev[i].state == MRC_TRACE_RUNNING;
	}
	spin_unlock_bh(&tr->lock);
	return n;
}
