// SPDX-License-Identifier: GPL-2.0-only
/*
 * Timers: retransmission (also handshake retries, window probes and the
 * user timeout), loss inference (RACK's deadline, the tail loss probe) and
 * delayed ACK.  A handler that finds the socket owned by
 * the user sets a deferred bit, handled by release_cb when the user lets go.
 */
#include <net/sock.h>

#include "protocol.h"
#include "trace.h"
#include "ev.h"

#define MRC_DELACK_US	1000
/* RTO slack over twice the slowest path's RTT: scheduling jitter */
#define MRC_RTO_SLACK_US	10000

/*
 * The user timeout counts from the later of the last progress and the moment
 * data went out after an idle spell (TCP counts from the oldest unacked
 * segment's first transmission): a connection idle for longer than its user
 * timeout has not failed until what it sends next goes unanswered.
 */
static unsigned long mrc_user_deadline(const struct mrc_sock *msk)
{
	unsigned long base = msk->progress_stamp;

	if (time_after(msk->xmit_stamp, base))
		base = msk->xmit_stamp;
	return base + msecs_to_jiffies(msk->user_timeout_ms);
}

/*
 * Never sleep past the user timeout while data is outstanding (as TCP's
 * tcp_clamp_rto_to_user_timeout()): the connection ends when the user said,
 * not up to one backed-off RTO later.
 */
static unsigned long mrc_clamp_to_user_timeout(const struct mrc_sock *msk,
					       unsigned long expires)
{
	unsigned long deadline;

	if (!msk->user_timeout_ms || msk->snd_una == msk->snd_nxt)
		return expires;
	/* mrc_user_timed_out() wants jiffies strictly after the deadline */
	deadline = mrc_user_deadline(msk) + 1;
	if (time_before(deadline, jiffies + 1))
		deadline = jiffies + 1;
	return time_before(deadline, expires) ? deadline : expires;
}

/**
 * mrc_hrtimer_arm() - start a soft hrtimer of @msk to fire within @us
 * @msk: connection (socket lock held)
 * @t: its delayed-ACK or loss timer
 * @us: microseconds
 *
 * Soft mode runs it in softirq, as timers run.  It holds a socket
 * reference while queued, as sk_reset_timer()'s do.  A timer queued to
 * fire no later stays; a later one is moved earlier, its cancel handing
 * its reference to the new start.  A queued timer whose callback runs is
 * left alone: hrtimer_try_to_cancel() says -1 then, queued or not, and a
 * second start would take a second reference for one expiry.
 */
static void mrc_hrtimer_arm(struct mrc_sock *msk, struct hrtimer *t, u32 us)
{
	ktime_t at = ktime_add_us(ktime_get(), us);

	sock_owned_by_me(&msk->sk);
	if (hrtimer_is_queued(t)) {
		/* its expiry changes only under the socket lock: no base lock to read it */
		if (!ktime_after(hrtimer_get_expires(t), at) || hrtimer_try_to_cancel(t) != 1)
			return;
	} else {
		/* only an arm under the socket lock queues it: not racing this one */
		sock_hold(&msk->sk);
	}
	hrtimer_start(t, at, HRTIMER_MODE_ABS_SOFT);
}

/**
 * mrc_arm_loss_probe() - (re)start the tail loss probe's wait
 * @msk: connection (socket lock held)
 *
 * From the last send or delivery (mrc_arm_rto(), __mrc_push()), when
 * mrc_loss_probe_wanted() and the RTO would not come first.  An hrtimer: a
 * probe is due within a few RTTs, far below a jiffy at HZ=250.  Moving the
 * wait later only moves the deadline: a timer queued earlier finds it and
 * sleeps the rest (mrc_loss_timer_fire()), so that an ACK costs a clock
 * read, not a timer's restart; one no longer wanted finds none.
 */
void mrc_arm_loss_probe(struct mrc_sock *msk)
{
	const struct mrc_ev *ev;
	u32 us = 0;

	sock_owned_by_me(&msk->sk);
	if (mrc_loss_probe_wanted(msk) && timer_pending(&msk->rto_timer)) {
		ev = mrc_ev_of(msk, MRC_SKB_CB(skb_peek_tail(&msk->sk.sk_write_queue)));
		us = mrc_pto_us(max(msk->rtt.srtt_us, ev ? ev->srtt_us : 0), msk->in_flight,
				MRC_DELACK_US);
		if (!time_before(jiffies + usecs_to_jiffies(us), msk->rto_timer.expires))
			us = 0;
	}
	if (!us) {
		msk->probe_at_us = 0;
		return;
	}
	msk->probe_at_us = mrc_clock_us() + us;
	mrc_hrtimer_arm(msk, &msk->loss_timer, us);
}

/*
 * The RTO must outlast the slowest active path, not the blend of all paths'
 * samples: packets sprayed onto a slow path would else time out and be
 * resent while on their way.  Losses are found by the EV rules long before;
 * the RTO is the last resort, so it errs on the long side.
 */
void mrc_arm_rto(struct mrc_sock *msk)
{
	struct sk_buff *head = skb_peek(&msk->sk.sk_write_queue);
	u32 us = mrc_rtt_rto(&msk->rtt, msk->backoff);
	unsigned long expires;
	u32 slow = 2 * msk->slowest_rtt_us + MRC_RTO_SLACK_US;

	sock_owned_by_me(&msk->sk);
	/*
	 * Nothing in flight, only a held tail the window would take: TCP's cork
	 * ceiling, not our RTO (behind a closed window: the backed-off probe).
	 */
	if (head && head == msk->send_head && mrc_tail_held(msk, head) &&
	    head->len <= msk->snd_wnd) {
		msk->rack_at_us = 0;
		sk_reset_timer(&msk->sk, &msk->rto_timer, jiffies + MRC_CORK_CEILING);
		mrc_arm_loss_probe(msk);
		return;
	}

	if (msk->backoff < 16)
		slow <<= msk->backoff;
	us = clamp(slow, us, max(us, msk->rtt.max_rto_us));
	expires = jiffies + max_t(unsigned long, 1, usecs_to_jiffies(us));
	expires = mrc_clamp_to_user_timeout(msk, expires);
	sk_reset_timer(&msk->sk, &msk->rto_timer, expires);
	mrc_arm_loss_probe(msk);
}

/**
 * mrc_arm_rack() - RACK's reordering deadline (mrc_detect_losses())
 * @msk: connection (socket lock held)
 * @in_us: when an overtaken packet becomes overdue, from now; 0: none is
 *
 * On the loss timer, an hrtimer, which it shares with the tail loss probe
 * (never wanted while RACK waits: mrc_loss_probe_wanted()).  It was the
 * RTO's jiffies timer: at HZ=250 every verdict waited up to a tick (4 ms)
 * past its deadline, or a tick more when the tick came first and found
 * nothing overdue yet; a plane's failure costs a verdict per hole.  The
 * earlier deadline is kept and moves the timer earlier; a later one is
 * found again by the loss detection that the earlier expiry runs.
 */
void mrc_arm_rack(struct mrc_sock *msk, u64 in_us)
{
	u64 at;

	sock_owned_by_me(&msk->sk);
	if (!in_us) {
		msk->rack_at_us = 0;
		return;
	}
	/*
	 * Never queued past max_rto_us (the reference rule in mrc.rst): a
	 * deadline further out is looked at again then (mrc_rack_fire() finds
	 * no loss yet, mrc_detect_losses() re-arms it)
	 */
	in_us = min_t(u64, in_us, msk->rtt.max_rto_us);
	at = mrc_clock_us() + in_us;
	if (msk->rack_at_us && msk->rack_at_us <= at)
		return;
	msk->rack_at_us = at;
	msk->probe_at_us = 0;
	mrc_hrtimer_arm(msk, &msk->loss_timer, in_us);
}

/**
 * mrc_arm_ack_timer() - an ACK is owed within @us at the latest
 * @msk: connection (socket lock held)
 * @us: microseconds
 *
 * The delayed ACK is an hrtimer (mrc_hrtimer_arm()): a jiffies timer
 * rounds its 1 ms up to a tick (4 ms at HZ=250).
 */
void mrc_arm_ack_timer(struct mrc_sock *msk, u32 us)
{
	mrc_hrtimer_arm(msk, &msk->delack_timer, us);
}

void mrc_arm_delack(struct mrc_sock *msk)
{
	mrc_arm_ack_timer(msk, MRC_DELACK_US);
}

/*
 * Orphans: closed sockets still delivering their data and FIN.  Nobody
 * waits for them, so, as TCP bounds its orphans (tcp_max_orphans,
 * tcp_orphan_retries, tcp_fin_timeout), each one is bounded in time (the
 * orphan timeout without progress, answered window probes not counting as
 * progress; the FIN wait from the moment our FIN was acknowledged, not
 * extended by later ACKs) and their number is bounded: past
 * net.mrc.max_orphans a close aborts (RST) instead of finishing in order.
 */
atomic_t mrc_orphan_count = ATOMIC_INIT(0);
int mrc_max_orphans __read_mostly = 16384;
/* net.mrc.fin_timeout, seconds: read once per orphan, when its wait starts */
int mrc_fin_timeout __read_mostly = MRC_FIN_TIMEOUT_S;

/**
 * mrc_orphan_add() - count @msk as an orphan, if the limit allows
 * @msk: socket being closed (socket lock held)
 *
 * Return: false when net.mrc.max_orphans orphans live already (counted in
 * OrphanOverflow): the caller aborts the connection.
 */
bool mrc_orphan_add(struct mrc_sock *msk)
{
	sock_owned_by_me(&msk->sk);
	if (msk->orphan_counted)
		return true;
	if (atomic_inc_return(&mrc_orphan_count) > READ_ONCE(mrc_max_orphans)) {
		atomic_dec(&mrc_orphan_count);
		mrc_count(msk->mn, MRC_C_ORPHAN_OVERFLOW);
		net_info_ratelimited("mrc: too many orphaned sockets\n");
		return false;
	}
	msk->orphan_counted = 1;
	return true;
}

/* @msk is no orphan any more (done or destroyed). */
void mrc_orphan_del(struct mrc_sock *msk)
{
	if (msk->orphan_counted) {
		msk->orphan_counted = 0;
		atomic_dec(&mrc_orphan_count);
	}
}

/**
 * mrc_orphan_fin_wait() - (re)arm the wait of an orphan for the peer's FIN
 * @msk: orphan with everything it sent acknowledged (socket lock held)
 *
 * The deadline is set the first time only: a peer that keeps sending ACKs
 * (or empty packets) but never its FIN cannot extend it.
 */
void mrc_orphan_fin_wait(struct mrc_sock *msk)
{
	if (!msk->fin_wait_armed) {
		msk->fin_wait_armed = 1;
		msk->fin_wait_end = jiffies + (unsigned long)READ_ONCE(mrc_fin_timeout) * HZ;
	}
	sk_reset_timer(&msk->sk, &msk->rto_timer, msk->fin_wait_end);
}

static bool mrc_user_timed_out(struct mrc_sock *msk)
{
	return msk->user_timeout_ms && time_after(jiffies, mrc_user_deadline(msk));
}

/*
 * RACK's deadline came: packets that later ones overtook are overdue now.
 * Not an RTO: no backoff, no window cut, no EV charged beyond what the loss
 * rules say.  What it resends has the RTO's full time (armed afresh).
 * Return: true when it found a loss.  An expiry before the deadline (one
 * that moved later, or the cap in mrc_arm_rack()) finds none and leaves the
 * RTO as it was: it must not postpone it.  With no deadline left, the tail
 * loss probe, which waited for RACK (mrc_loss_probe_wanted()), may be due:
 * its packets may have been marked lost otherwise (a path's device down).
 */
static bool mrc_rack_fire(struct mrc_sock *msk, u64 now_us)
{
	u64 lost = msk->stats.packets_lost;

	sock_owned_by_me(&msk->sk);
	msk->rack_at_us = 0;
	if (!mrc_sending_state(msk) || msk->send_head == skb_peek(&msk->sk.sk_write_queue))
		return false;
	mrc_detect_losses(msk, now_us);
	if (msk->stats.packets_lost == lost) {
		if (!msk->rack_at_us)
			mrc_arm_loss_probe(msk);
		return false;
	}
	mrc_push(msk);
	mrc_arm_rto(msk);
	return true;
}

/**
 * mrc_rto_fire() - the retransmission timer expired
 * @msk: connection (socket lock held, not owned by the user)
 *
 * Retries the handshake, or marks everything outstanding lost and resends it
 * with backoff, or sends a window probe; ends the connection with ETIMEDOUT
 * once nothing progressed for the user timeout.
 */
void mrc_rto_fire(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;
	struct sk_buff *skb;
	bool outstanding = false, congested = false;

	sock_owned_by_me(&msk->sk);
	switch (msk->state) {
	case MRC_STATE_CLOSED:
	case MRC_STATE_LISTEN:
	case MRC_STATE_DONE:
		return;
	}
	/*
	 * Deferred to release_cb while the user held the socket, and re-armed
	 * since by an ACK from the backlog: this expiry is stale.
	 */
	if (timer_pending(&msk->rto_timer))
		return;
	if (msk->orphan_fin && skb_queue_empty(&sk->sk_write_queue)) {
		/* closed, our FIN acknowledged, the peer's never came */
		mrc_count(msk->mn, MRC_C_ORPHAN_FIN_TIMEOUT);
		mrc_done(msk, 0);
		return;
	}
	/*
	 * RACK's deadline passed as well (the loss timer had no chance to run
	 * yet): a loss it finds comes first and the RTO is armed afresh, as
	 * when both shared this timer and as TCP's one retransmit timer does.
	 * After a stall of the machine both are overdue, and the timer wheel
	 * runs before netem's hrtimers release the ACKs held meanwhile: an RTO
	 * then would mark every packet in flight lost, most of them delivered.
	 */
	if (msk->rack_at_us) {
		u64 now = mrc_clock_us();

		if (now >= msk->rack_at_us && mrc_rack_fire(msk, now))
			return;
	}
	/*
	 * A held partial segment (TCP_CORK, MSG_MORE) alone in the queue: its
	 * ceiling has come.  Sent if the windows allow; else a window probe.
	 */
	if (msk->send_head && msk->send_head == skb_peek(&sk->sk_write_queue) &&
	    mrc_tail_held(msk, msk->send_head)) {
		msk->more = 0;
		__mrc_push(msk, true);
		if (!msk->send_head)
			return;
	}
	/*
	 * Behind a closed window with everything sent acknowledged, only an
	 * unanswered probe counts: the backed-off probe interval may exceed
	 * the user timeout while the peer answers every probe.  An orphan
	 * has no such grace (answers do not count as its progress).
	 */
	if (mrc_user_timed_out(msk) &&
	    (msk->snd_una != msk->snd_nxt || !msk->send_head || msk->wprobe_out ||
	     msk->orphan_fin)) {
		mrc_count(msk->mn, MRC_C_CONN_TIMEOUT);
		if (msk->remote_id)
			mrc_send_ctrl(msk, MRC_T_RST, 0, NULL, 0);
		mrc_done(msk, ETIMEDOUT);
		return;
	}
	if (msk->backoff < 16)
		msk->backoff++;
	/* a full RTO: whatever RACK waited for is marked lost below */
	msk->rack_at_us = 0;
	msk->probe_out = 0;
	if (msk->state == MRC_STATE_SYN_SENT) {
		if (msk->remote_id)
			mrc_send_hsack(msk);
		else
			mrc_send_ctrl(msk, MRC_T_SYN, 0, NULL, 0);
		mrc_arm_rto(msk);
		return;
	}
	mrc_count(msk->mn, MRC_C_RTO);
	msk->stats.rto_events++;
	skb_queue_walk(&sk->sk_write_queue, skb) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
		struct mrc_ev *ev;

		if (skb == msk->send_head)
			break;
		if (cb->sacked)
			continue;
		outstanding = true;
		if (cb->lost)
			continue;
		cb->lost = 1;
		msk->stats.packets_lost++;
		trace_mrc_loss(msk->local_id, cb->psn, cb->ev_port, MRC_LOSS_RTO);
		/*
		 * The last resort also charges an EV that delivered nothing
		 * sent after this packet: its path may be dead.  One that did
		 * deliver later packets is alive, only slow or jittery.
		 */
		ev = mrc_ev_of(msk, cb);
		congested |= mrc_ev_rto_is_congestion(ev ? ev->delivered : 1);
		if (!ev)
			continue;
		ev->in_flight = 0;
		if (ev->last_delivered_tx_us <= cb->sent_us &&
		    mrc_ev_rto_lost(ev, READ_ONCE(msk->mn->cfg.retire_losses),
				    msk->rto_streak + 1))
			mrc_retire_ev(msk, cb->ev_idx);
	}
	if (outstanding) {
		msk->in_flight = 0;
		if (msk->rto_streak < U8_MAX)
			msk->rto_streak++;
		/*
		 * The first ACK from now on says whether this was needed,
		 * against the episode's first resending (RFC 3522): a later
		 * RTO's duplicate leaves the echo on the first one's.
		 */
		if (!msk->rto_verdict_due)
			msk->rto_tsval = mrc_tsval(msk, mrc_clock_us());
		msk->rto_verdict_due = 1;
		if (congested) {
			mrc_cc_on_rto(&msk->cc);
			trace_mrc_cwnd(msk->local_id, msk->cc.cwnd, msk->cc.ssthresh,
				       MRC_CWND_RTO);
		}
	} else if (msk->send_head) {
		/* window probe: the answer carries the peer's window */
		mrc_send_ctrl(msk, MRC_T_ACK, MRC_F_PROBE, NULL, 0);
		msk->wprobe_out = 1;
	}
	mrc_push(msk);
	if (!skb_queue_empty(&sk->sk_write_queue))
		mrc_arm_rto(msk);
}

void mrc_delack_fire(struct mrc_sock *msk)
{
	/* the last ACK of a flight: nothing follows to cover its loss */
	if (msk->ack_pending && msk->remote_id && msk->state != MRC_STATE_DONE)
		mrc_send_ack_twice(msk, 0);
}

/* Keepalive times: the socket's TCP_KEEP* options, else the netns's tcp_keepalive_* */
u32 mrc_keepidle(const struct mrc_sock *msk)
{
	return msk->keepidle ?: READ_ONCE(sock_net(&msk->sk)->ipv4.sysctl_tcp_keepalive_time);
}

u32 mrc_keepintvl(const struct mrc_sock *msk)
{
	return msk->keepintvl ?: READ_ONCE(sock_net(&msk->sk)->ipv4.sysctl_tcp_keepalive_intvl);
}

u8 mrc_keepcnt(const struct mrc_sock *msk)
{
	return msk->keepcnt ?: READ_ONCE(sock_net(&msk->sk)->ipv4.sysctl_tcp_keepalive_probes);
}

static bool mrc_keepalive_state(const struct mrc_sock *msk)
{
	return msk->state == MRC_STATE_ESTABLISHED || msk->state == MRC_STATE_CLOSE_WAIT ||
	       msk->state == MRC_STATE_FIN_WAIT;
}

/**
 * mrc_keepalive_arm() - (re)start the keepalive timer of an idle connection
 * @msk: connection (socket lock held)
 *
 * As TCP: the first probe when nothing came from the peer for keepidle.
 */
void mrc_keepalive_arm(struct mrc_sock *msk)
{
	sock_owned_by_me(&msk->sk);
	if (sock_flag(&msk->sk, SOCK_KEEPOPEN) && mrc_keepalive_state(msk))
		sk_reset_timer(&msk->sk, &msk->keepalive_timer,
			       msk->rcv_stamp + mrc_keepidle(msk));
}

/* proto.keepalive: SO_KEEPALIVE set (before SOCK_KEEPOPEN is) or cleared */
void mrc_keepalive(struct sock *sk, int on)
{
	struct mrc_sock *msk = mrc_sk(sk);

	sock_owned_by_me(sk);
	msk->keepalive_probes = 0;
	if (!on) {
		sk_stop_timer(sk, &msk->keepalive_timer);
		return;
	}
	/* as tcp_set_keepalive(): the first probe a full keepidle from now */
	if (mrc_keepalive_state(msk) && !timer_pending(&msk->keepalive_timer))
		sk_reset_timer(sk, &msk->keepalive_timer, jiffies + mrc_keepidle(msk));
}

/*
 * The keepalive timer: an idle connection whose peer said nothing for
 * keepidle gets a probe (an ACK flagged PROBE, answered at once) every
 * keepintvl; keepcnt unanswered probes, or the user timeout with a probe
 * out, end it with ETIMEDOUT.  With data outstanding the RTO and the user
 * timeout watch the peer instead.
 */
static void mrc_keepalive_fire(struct mrc_sock *msk)
{
	unsigned long idle = jiffies - msk->rcv_stamp;
	struct sock *sk = &msk->sk;
	bool dead;

	sock_owned_by_me(&msk->sk);
	if (!sock_flag(sk, SOCK_KEEPOPEN) || !mrc_keepalive_state(msk) ||
	    timer_pending(&msk->keepalive_timer))
		return;
	/* with data outstanding the RTO and the user timeout watch the peer */
	if (msk->snd_una != msk->snd_nxt || msk->send_head) {
		msk->keepalive_probes = 0;
		sk_reset_timer(sk, &msk->keepalive_timer, jiffies + mrc_keepidle(msk));
		return;
	}
	if (idle < mrc_keepidle(msk)) {
		msk->keepalive_probes = 0;
		sk_reset_timer(sk, &msk->keepalive_timer, jiffies + mrc_keepidle(msk) - idle);
		return;
	}
	/*
	 * TCP counts probes only without a user timeout; MRC always has one
	 * (30 s by default), so whichever ends first ends the connection.
	 */
	dead = msk->keepalive_probes >= mrc_keepcnt(msk) ||
	       (msk->user_timeout_ms && msk->keepalive_probes &&
		idle >= msecs_to_jiffies(msk->user_timeout_ms));
	if (dead) {
		mrc_count(msk->mn, MRC_C_CONN_TIMEOUT);
		mrc_send_ctrl(msk, MRC_T_RST, 0, NULL, 0);
		mrc_done(msk, ETIMEDOUT);
		return;
	}
	mrc_send_ctrl(msk, MRC_T_ACK, MRC_F_PROBE, NULL, 0);
	mrc_count(msk->mn, MRC_C_KEEPALIVE_PROBE);
	if (msk->keepalive_probes < U8_MAX)
		msk->keepalive_probes++;
	sk_reset_timer(sk, &msk->keepalive_timer, jiffies + mrc_keepintvl(msk));
}

static void mrc_timer_common(struct mrc_sock *msk, int bit, void (*fire)(struct mrc_sock *))
{
	struct sock *sk = &msk->sk;

	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk))
		fire(msk);
	else if (!test_and_set_bit(bit, &msk->deferred))
		sock_hold(sk);	/* dropped in mrc_release_cb */
	bh_unlock_sock(sk);
	sock_put(sk);	/* the timer's reference */
}

static void mrc_rto_timer(struct timer_list *t)
{
	struct mrc_sock *msk = from_timer(msk, t, rto_timer);

	mrc_timer_common(msk, MRC_DEFER_RTO, mrc_rto_fire);
}

static enum hrtimer_restart mrc_delack_timer(struct hrtimer *t)
{
	struct mrc_sock *msk = container_of(t, struct mrc_sock, delack_timer);

	mrc_timer_common(msk, MRC_DEFER_DELACK, mrc_delack_fire);
	return HRTIMER_NORESTART;
}

/*
 * The loss timer expired, for RACK's deadline or the probe's.  Either may
 * have moved later since it was queued (mrc_arm_rack() keeps an earlier
 * expiry, mrc_arm_loss_probe() only moves the deadline), or ended (none
 * set), or the timer been re-armed (queued again, from the backlog).
 */
static void mrc_loss_timer_fire(struct mrc_sock *msk)
{
	u64 now = mrc_clock_us();
	u64 at = msk->rack_at_us ? msk->rack_at_us : msk->probe_at_us;

	if (!at || hrtimer_is_queued(&msk->loss_timer))
		return;
	if (!msk->rack_at_us && !mrc_loss_probe_wanted(msk)) {
		msk->probe_at_us = 0;
		return;
	}
	if (now < at) {
		mrc_hrtimer_arm(msk, &msk->loss_timer, min_t(u64, at - now, U32_MAX));
		return;
	}
	if (msk->rack_at_us) {
		mrc_rack_fire(msk, now);
		return;
	}
	msk->probe_at_us = 0;
	mrc_send_loss_probe(msk);
}

static enum hrtimer_restart mrc_loss_timer(struct hrtimer *t)
{
	struct mrc_sock *msk = container_of(t, struct mrc_sock, loss_timer);

	mrc_timer_common(msk, MRC_DEFER_LOSS_TIMER, mrc_loss_timer_fire);
	return HRTIMER_NORESTART;
}

static void mrc_keepalive_timer(struct timer_list *t)
{
	struct mrc_sock *msk = from_timer(msk, t, keepalive_timer);

	mrc_timer_common(msk, MRC_DEFER_KEEPALIVE, mrc_keepalive_fire);
}

static void mrc_path_timer(struct timer_list *t)
{
	struct mrc_sock *msk = from_timer(msk, t, path_timer);

	mrc_timer_common(msk, MRC_DEFER_PATHS, mrc_paths_check);
}

/* Runs in release_sock() with the socket still owned: may not sleep. */
void mrc_release_cb(struct sock *sk)
{
	struct mrc_sock *msk = mrc_sk(sk);

	/* the backlog's packets were one batch (mrc_backlog_rcv()) */
	if (msk->rx_batch)
		mrc_rx_batch_end(msk);
	if (test_and_clear_bit(MRC_DEFER_RTO, &msk->deferred)) {
		mrc_rto_fire(msk);
		__sock_put(sk);
	}
	if (test_and_clear_bit(MRC_DEFER_DELACK, &msk->deferred)) {
		mrc_delack_fire(msk);
		__sock_put(sk);
	}
	if (test_and_clear_bit(MRC_DEFER_LOSS_TIMER, &msk->deferred)) {
		mrc_loss_timer_fire(msk);
		__sock_put(sk);
	}
	if (test_and_clear_bit(MRC_DEFER_KEEPALIVE, &msk->deferred)) {
		mrc_keepalive_fire(msk);
		__sock_put(sk);
	}
	if (test_and_clear_bit(MRC_DEFER_ICMP, &msk->deferred)) {
		mrc_icmp_deferred(msk);
		__sock_put(sk);
	}
	if (test_and_clear_bit(MRC_DEFER_PATHS, &msk->deferred)) {
		mrc_paths_check(msk);
		__sock_put(sk);
	}
}

void mrc_timers_init(struct mrc_sock *msk)
{
	timer_setup(&msk->rto_timer, mrc_rto_timer, 0);
	hrtimer_init(&msk->delack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	msk->delack_timer.function = mrc_delack_timer;
	hrtimer_init(&msk->loss_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	msk->loss_timer.function = mrc_loss_timer;
	timer_setup(&msk->keepalive_timer, mrc_keepalive_timer, 0);
	timer_setup(&msk->path_timer, mrc_path_timer, 0);
}

/* Stops pending timers (a running handler sees the new state and quits). */
void mrc_timers_stop(struct mrc_sock *msk)
{
	sk_stop_timer(&msk->sk, &msk->rto_timer);
	/* as sk_stop_timer(): a cancelled timer's reference goes with it */
	if (hrtimer_try_to_cancel(&msk->delack_timer) == 1)
		__sock_put(&msk->sk);
	msk->rack_at_us = 0;
	msk->probe_at_us = 0;
	if (hrtimer_try_to_cancel(&msk->loss_timer) == 1)
		__sock_put(&msk->sk);
	sk_stop_timer(&msk->sk, &msk->keepalive_timer);
	sk_stop_timer(&msk->sk, &msk->path_timer);
}
