// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive side: validation of every packet from the UDP tunnel, demux to a
 * connection or listener (whose handshake is in state.c), ACK and SACK
 * processing, in-order delivery and out-of-order reassembly.
 *
 * Softirq: the connection is found under RCU and referenced, then handled
 * under bh_lock_sock, or queued to the backlog while the user owns it.
 */
#include <linux/jhash.h>
#include <linux/skbuff_ref.h>
#include <linux/unaligned.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp.h>
#include <net/inet_ecn.h>

#include <kunit/visibility.h>

#include "protocol.h"
#include "trace.h"
#include "sack.h"
#include "ev.h"

/*
 * Addresses of a received packet whose MRC header is @h, as seen by us
 * (local = its destination).
 */
static void mrc_hdr_addrs(struct sk_buff *skb, const struct mrchdr *h, union mrc_addr *local,
			  union mrc_addr *remote)
{
	memset(local, 0, sizeof(*local));
	memset(remote, 0, sizeof(*remote));
	if (ip_hdr(skb)->version == 4) {
		local->v4.sin_family = AF_INET;
		local->v4.sin_addr.s_addr = ip_hdr(skb)->daddr;
		local->v4.sin_port = h->dport;
		remote->v4.sin_family = AF_INET;
		remote->v4.sin_addr.s_addr = ip_hdr(skb)->saddr;
		remote->v4.sin_port = h->sport;
	} else {
		local->v6.sin6_family = AF_INET6;
		local->v6.sin6_addr = ipv6_hdr(skb)->daddr;
		local->v6.sin6_port = h->dport;
		remote->v6.sin6_family = AF_INET6;
		remote->v6.sin6_addr = ipv6_hdr(skb)->saddr;
		remote->v6.sin6_port = h->sport;
		if (ipv6_addr_type(&remote->v6.sin6_addr) & IPV6_ADDR_LINKLOCAL)
			remote->v6.sin6_scope_id = inet6_iif(skb);
	}
}

/* The same for a packet with its data at the MRC header. */
void mrc_skb_addrs(struct sk_buff *skb, union mrc_addr *local, union mrc_addr *remote)
{
	mrc_hdr_addrs(skb, (const struct mrchdr *)skb->data, local, remote);
}

/* Per-path reordering tolerated before the same-EV rule calls a loss. */
#define MRC_SAME_EV_TOLERANCE_US	200

/*
 * What our next packet echoes (tsecr, ack_ev): the newest packet of the peer
 * that was not a duplicate, by its own clock, so a late or reordered packet
 * never moves the echo back (which would make an RTO look spurious to the
 * peer, mrc_cc_rto_verdict()).
 */
static void mrc_echo_update(struct mrc_sock *msk, u32 tsval, u16 port)
{
	if (msk->last_tsval && mrc_ts_before(tsval, msk->last_tsval))
		return;
	msk->last_tsval = tsval;
	msk->last_ev = port;
}

/*
 * A segment was acked or sacked at @now_us by an ACK echoing @tsecr: credit
 * its EV, unless an earlier transmission delivered it.  Return: 1 if
 * CE-marked.
 */
static u32 mrc_seg_delivered(struct mrc_sock *msk, struct mrc_skb_cb *cb, u16 ce_port,
			     u64 now_us, u32 tsecr)
{
	struct mrc_ev *ev = mrc_ev_of(msk, cb);
	bool ce = ce_port && cb->ev_port == ce_port;
	u32 rtt_us;

	sock_owned_by_me(&msk->sk);
	if (ev && ev->in_flight && !cb->lost)
		ev->in_flight--;
	if (cb->probed) {
		/*
		 * Only the probe's own echo says which copy arrived (from just
		 * before the probe to its send time): the probe, so the original
		 * was lost (mrc_send_loss_probe()).  Any other echo credits
		 * neither: a probe's wait may be shorter than the Eifel slack,
		 * and a wrong credit to its EV would charge that EV's packets
		 * sent before it as lost.
		 */
		if (!tsecr || mrc_ts_before(tsecr, cb->probe_echo) ||
		    mrc_ts_before(mrc_tsval(msk, cb->sent_us), tsecr))
			return ce;
		msk->stats.packets_lost++;
		mrc_count(msk->mn, MRC_C_LOSS_PROBE_RECOVERED);
	} else if (cb->tx_count > 1 &&
		   !mrc_ev_delivery_known(cb->tx_count, cb->sent_us, now_us, msk->rtt.min_rtt_us,
					  tsecr && mrc_ts_before(tsecr,
								 mrc_tsval(msk, cb->sent_us -
									   MRC_EIFEL_SLACK_US)))) {
		/* the resend was spurious: RACK's window was too short */
		msk->reo_spurious = true;
		return ce;
	}
	rtt_us = min_t(u64, now_us - cb->sent_us, U32_MAX);
	/* an RTO's verdict: its RTT would include the RTO's wait */
	if (!msk->rto_verdict_due)
		mrc_rtt_hi_sample(&msk->rtt_hi, now_us, rtt_us, msk->slowest_rtt_us);
	if (cb->sent_us >= msk->newest_delivered_tx_us) {
		msk->newest_delivered_tx_us = cb->sent_us;
		msk->rack_rtt_us = rtt_us;
	}
	if (!ev)
		return ce;
	mrc_ev_echoed(ev, jiffies);
	if (!ev->delivered)
		mrc_evs_changed(msk);
	mrc_ev_delivered(ev, cb->sent_us, ce, msk->rtt.srtt_us);
	return ce;
}

/* Outstanding segment @cb, last sent on @ev (or a freed slot), is lost. */
static void mrc_mark_lost(struct mrc_sock *msk, struct mrc_skb_cb *cb, struct mrc_ev *ev)
{
	sock_owned_by_me(&msk->sk);
	cb->lost = 1;
	msk->in_flight--;
	msk->stats.packets_lost++;
	if (ev && ev->in_flight)
		ev->in_flight--;
}

/* A loss inferred by @rule: counted and traced as a fast retransmission. */
static void mrc_count_loss(struct mrc_sock *msk, const struct mrc_skb_cb *cb,
			   enum mrc_loss_rule rule)
{
	mrc_count(msk->mn, MRC_C_FAST_RETRANSMITS);
	mrc_count(msk->mn, rule == MRC_LOSS_SAME_EV ? MRC_C_LOSS_SAME_EV :
			   rule == MRC_LOSS_RACK ? MRC_C_LOSS_RACK : MRC_C_LOSS_PATH_SILENT);
	trace_mrc_loss(msk->local_id, cb->psn, cb->ev_port, rule);
}

/**
 * mrc_lose_paths() - what is still out on the paths in @paths is lost
 * @msk: connection (socket lock held)
 * @paths: a bit per path index, each of whose EVs the caller retired
 * @silent: the paths went silent (mrc_retire_ev()): count and trace the
 *	losses as inferred ones; a path whose device went down is counted
 *	by PlaneDown alone (mrc_path_down())
 *
 * Resent now, not each segment at its own RACK time or the RTO: a silent
 * path's came one round after another while its EVs retired one by one,
 * and a dead leaf's last holes, 30 ms after the silence, were what held
 * delivery longest (planes.sh, tracepoints).  Not congestion.
 */
void mrc_lose_paths(struct mrc_sock *msk, u32 paths, bool silent)
{
	struct sk_buff *skb;

	sock_owned_by_me(&msk->sk);
	skb_queue_walk(&msk->sk.sk_write_queue, skb) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
		struct mrc_ev *ev;

		if (skb == msk->send_head)
			break;
		if (!cb->sent || cb->sacked || cb->lost)
			continue;
		ev = mrc_ev_of(msk, cb);
		if (!ev || !(paths & BIT(ev->path)))
			continue;
		if (silent)
			mrc_count_loss(msk, cb, MRC_LOSS_PATH);
		mrc_mark_lost(msk, cb, ev);
	}
}

/**
 * mrc_detect_losses() - mark what the ACKs so far show lost
 * @msk: connection (socket lock held)
 * @now_us: mrc_clock_us()
 *
 * Loss inference that spraying does not fool: an outstanding packet is lost
 * when a later packet on its own EV (same path, in order) was delivered, or
 * when a packet sent after it was delivered and it is overdue by the largest
 * of 1.25 x its own EV's RTT, RACK.rtt and the slowest live path's recent
 * RTT (mrc_rack_expect_us()), plus a reordering window (mrc_rack_reo_us()).
 * Lost packets go back to the retransmission queue; an EV that loses
 * retire_losses packets in a row is retired, and when that shows its path
 * silent, everything still out on the path is lost with it
 * (mrc_lose_paths()).
 *
 * A packet that something later overtook but that is not overdue yet gets
 * the RACK reordering timer (RFC 8985 6.2) for when it will be: without it
 * the verdict waited for another ACK, and a sender that the peer's window
 * or its own had stopped, with its last packets lost on a dead path, got no
 * ACK at all and waited for the RTO, which cut its window; a one-spine
 * failure cut it that way to 2 within half a second.
 */
void mrc_detect_losses(struct mrc_sock *msk, u64 now_us)
{
	u32 reo = mrc_rack_reo_us(msk->rtt.srtt_us, msk->reo_mult);
	u32 retire = READ_ONCE(msk->mn->cfg.retire_losses);
	u32 slowest, hi;
	u64 rack_at = U64_MAX;
	struct sk_buff *skb;
	bool congested = false;
	u32 silent_paths = 0;

	sock_owned_by_me(&msk->sk);

	mrc_evs_survey(msk);
	slowest = msk->slowest_rtt_us;
	hi = mrc_rtt_hi(&msk->rtt_hi, now_us, slowest);

	skb_queue_walk(&msk->sk.sk_write_queue, skb) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
		struct mrc_ev *ev;
		u32 expect;

		if (skb == msk->send_head)
			break;
		/*
		 * Both rules need something sent later delivered.  PSNs are
		 * given in sending order, so from a packet sent once and no
		 * earlier than the newest delivery on, every later one was
		 * (first) sent later still: the walk costs what can be lost,
		 * not the whole window.
		 */
		if (cb->tx_count == 1 && cb->sent_us >= msk->newest_delivered_tx_us)
			break;
		if (!cb->sent || cb->sacked || cb->lost)
			continue;
		bool same_path;

		ev = mrc_ev_of(msk, cb);
		expect = mrc_rack_expect_us(ev && ev->srtt_us ? ev->srtt_us : slowest,
					    msk->rack_rtt_us, hi);
		same_path = ev && ev->delivered &&
			    mrc_ev_loss_same_path(cb->sent_us, ev->last_delivered_tx_us,
						  MRC_SAME_EV_TOLERANCE_US);
		if (!same_path &&
		    !mrc_ev_loss_rack(now_us, cb->sent_us, msk->newest_delivered_tx_us,
				      expect, reo)) {
			if (msk->newest_delivered_tx_us > cb->sent_us)
				rack_at = min(rack_at, cb->sent_us + expect + reo);
			continue;
		}
		mrc_count_loss(msk, cb, same_path ? MRC_LOSS_SAME_EV : MRC_LOSS_RACK);
		mrc_mark_lost(msk, cb, ev);
		/*
		 * A loss on a path that delivered later packets is congestion
		 * (a queue dropped it); one on an EV that delivered nothing sent
		 * after it may be a dead path: retiring the EV answers that, and
		 * halving the shared window for it would starve the live paths.
		 */
		congested |= mrc_ev_loss_is_congestion(same_path, !!ev);
		if (ev && mrc_ev_lost(ev, retire) && mrc_retire_ev(msk, cb->ev_idx))
			silent_paths |= BIT(ev->path);
	}
	if (silent_paths)
		mrc_lose_paths(msk, silent_paths, true);
	if (congested && !msk->cc.in_recovery) {
		mrc_cc_on_loss(&msk->cc);
		trace_mrc_cwnd(msk->local_id, msk->cc.cwnd, msk->cc.ssthresh, MRC_CWND_LOSS);
		msk->recover = msk->snd_nxt;
	}
	mrc_arm_rack(msk, rack_at == U64_MAX ? 0 : rack_at - now_us + 1);
}

/*
 * Marks what the SACK field of @n words (the header's, then MRC_F_SACKX's)
 * covers.  Return: CE-marked deliveries.
 */
static u32 mrc_sack_rcv(struct mrc_sock *msk, u32 ack, const u64 *words, unsigned int n,
			u64 now_us, u32 tsecr, u16 ce_port, u32 *delivered)
{
	struct sk_buff *skb;
	u32 ce = 0;

	sock_owned_by_me(&msk->sk);
	skb_queue_walk(&msk->sk.sk_write_queue, skb) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
		u32 off = cb->psn - ack;

		if (skb == msk->send_head || off > n * MRC_SACK_BITS)
			break;
		if (!off || !mrc_sack_words_test(words, n, off) || cb->sacked)
			continue;
		ce += mrc_seg_delivered(msk, cb, ce_port, now_us, tsecr);
		(*delivered)++;
		cb->sacked = 1;
		if (!cb->lost)
			msk->in_flight--;
		cb->lost = 0;
	}
	return ce;
}

/*
 * Takes the peer's window, at most what the reorder window can hold (a PSN
 * further than MRC_RCV_WINDOW_PKTS ahead is dropped by the receiver).
 */
static void mrc_snd_wnd_update(struct mrc_sock *msk, u32 wnd, u32 tsval)
{
	wnd = min_t(u64, wnd, (u64)(MRC_RCV_WINDOW_PKTS - 1) * msk->mss);
	/*
	 * A window that opens ends the probing backoff, as progress does; one
	 * that reopens from below a segment restarts a backed-off timer, so
	 * whatever the closed window dropped is resent now, not seconds later.
	 */
	if (wnd > msk->snd_wnd) {
		bool reopened = msk->snd_wnd < msk->mss && wnd >= msk->mss;

		msk->backoff = 0;
		if (reopened && timer_pending(&msk->rto_timer))
			mrc_arm_rto(msk);
	}
	msk->snd_wnd = wnd;
	msk->snd_wnd_max = max(msk->snd_wnd_max, wnd);
	msk->snd_wl_tsval = tsval;
	msk->snd_wl_valid = 1;
}

/*
 * A spurious RTO marked packets lost that had arrived: those not resent
 * yet count as in flight again, and loss detection judges them afresh
 * (as tcp_undo_cwnd_reduction() unmarks), instead of all being resent at
 * the window the undo restored.
 */
static void mrc_unmark_lost(struct mrc_sock *msk)
{
	struct sk_buff *skb;

	sock_owned_by_me(&msk->sk);
	skb_queue_walk(&msk->sk.sk_write_queue, skb) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);

		if (skb == msk->send_head)
			break;
		if (cb->lost && !cb->sacked) {
			cb->lost = 0;
			msk->in_flight++;
		}
	}
}

/**
 * mrc_dsack_rcv() - the peer echoes a duplicate it received (MRC_F_DSACK)
 * @msk: connection (socket lock held)
 * @d: the echo (struct mrc_dsack, unaligned)
 * @now_us: mrc_clock_us()
 *
 * Our echo names the newest packet the peer received (mrc_echo_update()),
 * so a path slower than the others never had its own packets echoed.
 * RACK, judging them by the fast paths' RTTs, resent each before it
 * arrived; the resend, on a fast path, arrived first, and Karn's rule kept
 * every delivery on the slow path from a sample.  On a spine 30 ms slower
 * than three others, every packet it carried was resent and its EVs were
 * retired one after another (multipath.sh: 24-48 duplicates, as many RACK
 * losses and 12-21 retirements in each of 13 runs).  The duplicate, the
 * original that came late, is that path's sample, as exact as any echo:
 * its EV and RACK's recent largest RTT (mrc_rtt_hi()) take it, so the
 * path's later packets are judged by their own RTT.  Beside the header's
 * echo, which stays the newest packet's for everything else (Eifel, the
 * RTO's verdict, the connection's RTT).  mrc_dsack_sample() says when it
 * is one.
 */
static void mrc_dsack_rcv(struct mrc_sock *msk, const u8 *d, u64 now_us)
{
	u32 tsval = get_unaligned_be32(d + offsetof(struct mrc_dsack, tsval));
	u16 port = get_unaligned_be16(d + offsetof(struct mrc_dsack, ev));
	u32 rtt_us;

	sock_owned_by_me(&msk->sk);
	if (!mrc_dsack_sample(&msk->dsack_seen, port, tsval, mrc_tsval(msk, now_us),
			      msk->rto_verdict_due, msk->rtt.max_rto_us, &rtt_us))
		return;
	mrc_count(msk->mn, MRC_C_DSACK_SAMPLES);
	mrc_rtt_hi_sample(&msk->rtt_hi, now_us, rtt_us, msk->slowest_rtt_us);
	mrc_ev_rtt_rcv(msk, port, rtt_us);
}

/*
 * Cumulative ACK, SACK, window and RTT (@payload: a pure ACK's, with
 * MRC_F_SACKX's words and MRC_F_DSACK's echo; NULL for other packets).
 * Return: false if the ACK is invalid.
 */
static bool mrc_ack_rcv(struct mrc_sock *msk, const struct mrchdr *h, const u8 *payload)
{
	u64 words[1 + MRC_SACKX_WORDS];
	unsigned int nwords = 1;
	struct mrc_cc_params ccp = {
		.dctcp_shift = READ_ONCE(msk->mn->cfg.dctcp_shift),
		.delay_target_us = READ_ONCE(msk->mn->cfg.delay_target_us),
		.max_cwnd = 4096,
	};
	struct sock *sk = &msk->sk;
	u32 ack = ntohl(h->ack_psn), tsecr = ntohl(h->tsecr);
	u16 ce_port = (h->flags & MRC_F_CE) ? ntohs(h->ack_ev) : 0;
	u32 acked = 0, delivered = 0, ce = 0, rtt_us;
	u64 now_us = mrc_clock_us();
	bool fin_acked = false, round_done = false, spurious = false;
	unsigned int sackx_len = 0;
	struct sk_buff *skb;

	sock_owned_by_me(&msk->sk);
	if (mrc_psn_after(ack, msk->snd_nxt) ||
	    mrc_psn_before(ack, msk->snd_una - MRC_RCV_WINDOW_PKTS))
		return false;
	mrc_echo_rcv(msk, ntohs(h->ack_ev), tsecr);
	if (payload) {
		sackx_len = ntohs(h->len);
		if (h->flags & MRC_F_DSACK) {
			sackx_len -= sizeof(struct mrc_dsack);
			mrc_dsack_rcv(msk, payload + sackx_len, now_us);
		}
	}
	/*
	 * A receiver's RTT, for its buffer (mrc_rcv_space_adjust()): data
	 * echoes the tsval of our last ACK, once per ACK (as TCP's
	 * tcp_rcv_rtt_measure_ts()).
	 */
	if (h->type == MRC_T_DATA && tsecr != msk->rcv_rtt_tsecr &&
	    mrc_rtt_from_echo(mrc_tsval(msk, now_us), tsecr, &rtt_us)) {
		msk->rcv_rtt_tsecr = tsecr;
		msk->rcv_rtt_us = msk->rcv_rtt_us ? msk->rcv_rtt_us - (msk->rcv_rtt_us >> 3) +
						     (rtt_us >> 3) : rtt_us;
	}
	if (mrc_wnd_update_ok(msk->snd_wl_valid, ack, msk->snd_una, ntohl(h->tsval),
			      msk->snd_wl_tsval))
		mrc_snd_wnd_update(msk, ntohl(h->rcv_wnd), ntohl(h->tsval));
	if ((h->flags & (MRC_F_PROBE | MRC_F_ACKNOW)) == (MRC_F_PROBE | MRC_F_ACKNOW)) {
		mrc_probe_answered(msk, ntohs(h->ack_ev));
		mrc_trace_reached_rcv(msk, ntohs(h->ack_ev), tsecr);
		/*
		 * A peer answering window probes is alive (RFC 1122 4.2.2.17).
		 * Not for an orphan: nobody waits for what it still has to send,
		 * and a peer that answers but never opens would keep it forever.
		 */
		if (msk->snd_una == msk->snd_nxt && !msk->orphan_fin) {
			msk->progress_stamp = jiffies;
			msk->wprobe_out = 0;
		}
	}
	while ((skb = skb_peek(&sk->sk_write_queue)) && skb != msk->send_head &&
	       mrc_psn_before(MRC_SKB_CB(skb)->psn, ack)) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);

		if (!cb->sacked) {
			ce += mrc_seg_delivered(msk, cb, ce_port, now_us, tsecr);
			delivered++;
			if (!cb->lost)
				msk->in_flight--;
		}
		if (cb->flags & MRC_F_FIN)
			fin_acked = true;
		msk->stats.bytes_acked += skb->len;
		__skb_unlink(skb, &sk->sk_write_queue);
		mrc_wmem_free_skb(sk, skb);
		acked++;
	}
	if (acked && msk->rto_verdict_due && !(h->flags & MRC_F_PROBE)) {
		/*
		 * An echo from before the RTO's retransmissions: what arrived
		 * was the original, the RTO was spurious (Eifel; the peer
		 * echoes no duplicate).  Its RTT would include the RTO's wait.
		 */
		spurious = mrc_ts_before(tsecr, msk->rto_tsval);
		msk->rto_verdict_due = 0;
		if (spurious) {
			mrc_count(msk->mn, MRC_C_RTO_SPURIOUS);
			mrc_unmark_lost(msk);
		}
		mrc_cc_rto_verdict(&msk->cc, spurious);
		if (spurious)
			trace_mrc_cwnd(msk->local_id, msk->cc.cwnd, msk->cc.ssthresh,
				       MRC_CWND_UNDO);
	}
	if (acked) {
		msk->snd_una = ack;
		msk->backoff = 0;
		/* the probe's episode ends when what it probed is acknowledged */
		if (msk->probe_out && !mrc_psn_before(ack, msk->probe_high))
			msk->probe_out = 0;
		msk->progress_stamp = jiffies;
		if (msk->cc.in_recovery && !mrc_psn_before(ack, msk->recover))
			msk->cc.in_recovery = false;
		if (!mrc_psn_before(ack, msk->cc_round_end)) {
			round_done = true;
			msk->cc_round_end = msk->snd_nxt;
			mrc_rack_reo_round(&msk->reo_mult, &msk->reo_quiet, msk->reo_spurious);
			msk->reo_spurious = false;
		}
		sk->sk_write_space(sk);
	}
	words[0] = be64_to_cpu(h->sack);
	if (payload && (h->flags & MRC_F_SACKX)) {
		for (; nwords <= sackx_len / sizeof(u64); nwords++)
			words[nwords] = get_unaligned_be64(payload + (nwords - 1) * sizeof(u64));
	}
	if (words[0] || nwords > 1)
		ce += mrc_sack_rcv(msk, ack, words, nwords, now_us, tsecr, ce_port, &delivered);
	/*
	 * RTT only from an ACK that delivers something new: a packet that
	 * acknowledges nothing may echo a timestamp from long ago (an idle
	 * request/response turn), as TCP ignores such echoes too.
	 */
	if (delivered && !spurious && mrc_rtt_from_echo(mrc_tsval(msk, now_us), tsecr, &rtt_us)) {
		mrc_rtt_sample(&msk->rtt, rtt_us);
		mrc_ev_rtt_rcv(msk, ntohs(h->ack_ev), rtt_us);
	}
	if (delivered) {
		/* any delivery, sacked too, shows the path works: no backoff */
		msk->backoff = 0;
		msk->rto_streak = 0;
		mrc_cc_on_ack(&msk->cc, &ccp, delivered, ce, msk->rtt.srtt_us,
			      msk->rtt.min_rtt_us, round_done);
		mrc_sndbuf_expand(msk);
	}
	mrc_detect_losses(msk, now_us);
	if (fin_acked)
		mrc_our_fin_acked(msk);
	if (msk->state == MRC_STATE_DONE)
		return true;
	mrc_push(msk);
	/* the RTO is the last resort: any delivery, sacked too, defers it */
	if (!skb_queue_empty(&sk->sk_write_queue)) {
		if (delivered)
			mrc_arm_rto(msk);
	} else if (msk->orphan_fin) {
		/* FIN_WAIT of a closed socket: the peer's FIN has this long */
		mrc_orphan_fin_wait(msk);
	} else {
		sk_stop_timer(sk, &msk->rto_timer);
		msk->probe_at_us = 0;
	}
	return true;
}

/* Moves an in-order packet to the receive queue.  Consumes @skb. */
static void mrc_deliver(struct mrc_sock *msk, struct sk_buff *skb)
{
	struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
	struct sock *sk = &msk->sk;
	u8 flags = cb->flags;

	sock_owned_by_me(&msk->sk);
	msk->rcv_nxt = cb->psn + 1;
	if (skb->len || ((flags & MRC_F_EOR) && sk->sk_type == SOCK_SEQPACKET)) {
		msk->stats.bytes_received += skb->len;
		WRITE_ONCE(msk->rcv_queued, msk->rcv_queued + skb->len);
		__skb_queue_tail(&sk->sk_receive_queue, skb);
		if ((flags & MRC_F_EOR) && sk->sk_type == SOCK_SEQPACKET)
			WRITE_ONCE(msk->rcv_msgs, msk->rcv_msgs + 1);
	} else {
		consume_skb(skb);	/* a bare FIN: its PSN taken */
	}
	if (flags & MRC_F_FIN)
		mrc_fin_rcv(msk);
}

/**
 * mrc_ooo_insert() - add a packet to an out-of-order tree
 * @root: rbtree of skbs by PSN (MRC_SKB_CB()->psn, linked by skb->rbnode)
 * @last: the tree's skb with the highest PSN, or NULL when empty; updated
 * @skb: packet to add
 *
 * O(log n), and O(1) for the common case of a packet after all held ones
 * (as TCP's out-of-order queue): a peer sending PSNs in any order cannot
 * make the softirq walk the queue.
 * Return: true if inserted, false if its PSN is already held (@skb untouched).
 */
bool mrc_ooo_insert(struct rb_root *root, struct sk_buff **last, struct sk_buff *skb)
{
	struct rb_node **p = &root->rb_node, *parent = NULL;
	u32 psn = MRC_SKB_CB(skb)->psn;

	if (*last) {
		u32 high = MRC_SKB_CB(*last)->psn;

		if (psn == high)
			return false;
		if (mrc_psn_after(psn, high)) {
			parent = &(*last)->rbnode;
			p = &parent->rb_right;
			goto insert;
		}
	}
	while (*p) {
		u32 q;

		parent = *p;
		q = MRC_SKB_CB(rb_to_skb(parent))->psn;
		if (mrc_psn_before(psn, q))
			p = &parent->rb_left;
		else if (mrc_psn_after(psn, q))
			p = &parent->rb_right;
		else
			return false;
	}
insert:
	rb_link_node(&skb->rbnode, parent, p);
	rb_insert_color(&skb->rbnode, root);
	if (!*last || mrc_psn_after(psn, MRC_SKB_CB(*last)->psn))
		*last = skb;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ooo_insert);

/**
 * mrc_ooo_sack() - the SACK field for an out-of-order tree
 * @root: rbtree of skbs by PSN
 * @rcv_nxt: next PSN expected in order (all held PSNs are after it)
 *
 * Walks the lowest PSNs only, up to the SACK field's reach.
 * Return: bit i set when PSN rcv_nxt + 1 + i is held.
 */
u64 mrc_ooo_sack(const struct rb_root *root, u32 rcv_nxt)
{
	struct sk_buff *skb;
	u64 bits = 0;

	for (skb = skb_rb_first(root); skb; skb = skb_rb_next(skb)) {
		if (!mrc_psn_in_window(MRC_SKB_CB(skb)->psn, rcv_nxt + 1, MRC_SACK_BITS))
			break;
		mrc_sack_mark(&bits, MRC_SKB_CB(skb)->psn, rcv_nxt);
	}
	return bits;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ooo_sack);

/**
 * mrc_ooo_sack_words() - the SACK field with MRC_F_SACKX's words
 * @root: rbtree of skbs by PSN
 * @last: its skb of the highest PSN, or NULL
 * @rcv_nxt: next PSN expected in order
 * @words: 1 + MRC_SACKX_WORDS words to fill, words[0] the header's field
 *
 * Walks and fills nothing when nothing is held beyond the header's reach
 * (the common case, once per pure ACK: a few PSNs reordered); else the held
 * PSNs up to the words' reach.
 * Return: the words to send (mrc_sack_words_used()), 1 for the header's only.
 */
unsigned int mrc_ooo_sack_words(const struct rb_root *root, const struct sk_buff *last,
				u32 rcv_nxt, u64 *words)
{
	const unsigned int n = 1 + MRC_SACKX_WORDS;
	struct sk_buff *skb;

	if (!last || mrc_psn_in_window(MRC_SKB_CB(last)->psn, rcv_nxt + 1, MRC_SACK_BITS))
		return 1;
	memset(words, 0, n * sizeof(*words));
	for (skb = skb_rb_first(root); skb; skb = skb_rb_next(skb)) {
		if (!mrc_psn_in_window(MRC_SKB_CB(skb)->psn, rcv_nxt + 1, n * MRC_SACK_BITS))
			break;
		mrc_sack_words_mark(words, n, MRC_SKB_CB(skb)->psn, rcv_nxt);
	}
	return mrc_sack_words_used(words, n);
}
EXPORT_SYMBOL_IF_KUNIT(mrc_ooo_sack_words);

/* Drops every out-of-order packet (socket lock held, or unreachable). */
void mrc_ooo_purge(struct mrc_sock *msk)
{
	struct rb_node *p = rb_first(&msk->ooo_queue);

	/* skb_rbtree_purge(), which is not exported to modules */
	while (p) {
		struct sk_buff *skb = rb_to_skb(p);

		p = rb_next(p);
		rb_erase(&skb->rbnode, &msk->ooo_queue);
		kfree_skb(skb);
	}
	msk->ooo_last = NULL;
}

static bool mrc_skb_ce(const struct sk_buff *skb)
{
	if (ip_hdr(skb)->version == 4)
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
}

/*
 * The sender counts each packet as one MSS against our window: learn what
 * an MSS costs here, from @n packets of @truesize each.  Down at once (so
 * the window never promises memory we lack), up slowly: an eighth of the
 * way per packet, which stops moving once it gets there.
 */
static void mrc_rcv_ratio_update(struct mrc_sock *msk, unsigned int truesize, u32 n)
{
	u32 r = min_t(u32, (msk->mss << 8) / max(truesize, 1U), 255);	/* mss < 2^16 */

	if (r < msk->rcv_ratio) {
		msk->rcv_ratio = max_t(u32, r, 16);
		return;
	}
	while (n-- && msk->rcv_ratio < r)
		msk->rcv_ratio += (r - msk->rcv_ratio + 7) / 8;
}

/* An empty packet that is a message of its own (queued, read as one). */
static bool mrc_empty_msg(const struct sock *sk, u8 flags)
{
	return (flags & MRC_F_EOR) && sk->sk_type == SOCK_SEQPACKET;
}

/*
 * Inside a receive batch (mrc_rcv_batch(), or the backlog until release_cb)
 * the ACK and the reader's wakeup wait for the batch's end: one of each
 * for a whole GSO/GRO aggregate.  Any packet we send meanwhile carries the
 * ACK (mrc_fill_header() clears rx_ack_due).
 */
static void mrc_data_ack(struct mrc_sock *msk)
{
	if (msk->rx_batch)
		msk->rx_ack_due = 1;
	else
		mrc_send_ack(msk);
}

static void mrc_data_wake(struct mrc_sock *msk)
{
	if (msk->rx_batch)
		msk->rx_wake_due = 1;
	else
		msk->sk.sk_data_ready(&msk->sk);
}

/**
 * mrc_rx_batch_end() - the ACK and the wakeup a receive batch owes
 * @msk: connection (socket lock held)
 */
void mrc_rx_batch_end(struct mrc_sock *msk)
{
	msk->rx_batch = 0;
	if (msk->rx_wake_due) {
		msk->rx_wake_due = 0;
		msk->sk.sk_data_ready(&msk->sk);
	}
	/* a duplicate is echoed by a pure ACK, even when data acknowledged it */
	if (msk->rx_ack_due || msk->dsack_due) {
		msk->rx_ack_due = 0;
		/* after a reset or the end, only the peer's FIN is still acknowledged */
		if (msk->evs && msk->state != MRC_STATE_CLOSED &&
		    (msk->state != MRC_STATE_DONE || msk->fin_received))
			mrc_send_ack(msk);
	}
	msk->dsack_due = false;
}

/*
 * A data packet whose PSN had arrived: counted, and echoed by our next
 * pure ACK (MRC_F_DSACK, mrc_ack_payload()), so its sender learns the RTT
 * of the EV it came on.  The last of a batch is echoed.
 */
static void mrc_dup_rcv(struct mrc_sock *msk, const struct mrchdr *hdr, u16 ev_port)
{
	sock_owned_by_me(&msk->sk);
	msk->stats.dup_packets_received++;
	mrc_count(msk->mn, MRC_C_RX_DUP);
	msk->dsack_due = true;
	msk->dsack_port = ev_port;
	msk->dsack_tsval = ntohl(hdr->tsval);
}

/* Data (or FIN) packet.  Consumes @skb. */
static void mrc_data_rcv(struct mrc_sock *msk, struct sk_buff *skb, const struct mrchdr *hdr)
{
	struct sock *sk = &msk->sk;
	u32 psn = ntohl(hdr->psn);
	u16 len = ntohs(hdr->len);
	bool ack_now = hdr->flags & (MRC_F_ACKNOW | MRC_F_FIN | MRC_F_PROBE), ooo = false;
	u16 ev_port = ntohs(udp_hdr(skb)->source);
	bool ce = mrc_skb_ce(skb);
	struct mrc_skb_cb *cb;

	sock_owned_by_me(&msk->sk);
	msk->stats.packets_received++;
	if (ce)
		mrc_count(msk->mn, MRC_C_RX_CE);

	/*
	 * A duplicate leaves the echo (tsecr, ack_ev) on the newest packet
	 * that was new: the sender learns from it that an RTO's resending was
	 * not needed (mrc_cc_rto_verdict()), and takes no RTT sample that
	 * includes its wait.  The next pure ACK echoes the duplicate besides
	 * (mrc_dup_rcv()).
	 */
	if (msk->fin_received || mrc_psn_before(psn, msk->rcv_nxt)) {
		mrc_dup_rcv(msk, hdr, ev_port);
		if (hdr->flags & MRC_F_ACKNOW)
			mrc_count(msk->mn, MRC_C_SPURIOUS_RETRANS);
		kfree_skb(skb);
		mrc_data_ack(msk);
		return;
	}
	/* a duplicate's mark is not echoed: the ACK names another packet's EV */
	if (ce) {
		msk->ce_pending = true;
		ack_now = true;
	}
	if (!mrc_psn_in_window(psn, msk->rcv_nxt, MRC_RCV_WINDOW_PKTS)) {
		mrc_count(msk->mn, MRC_C_RX_DROP_WINDOW);
		kfree_skb(skb);
		return;
	}
	/*
	 * A packet inside a window we advertised is taken even past rcvbuf
	 * (the window is a promise; rcv_ratio keeps the excess small).  An
	 * in-order packet into an empty queue always fits, so tiny buffers and
	 * an exhausted memory pool still progress (one packet at a time).
	 * Whatever gets queued is charged, empty or not: an empty SEQPACKET
	 * message or an empty packet out of order costs its truesize as data
	 * does; only an in-order empty packet that is not a message (a FIN,
	 * say) is never queued and costs nothing.
	 */
	if (len || psn != msk->rcv_nxt || mrc_empty_msg(sk, hdr->flags)) {
		bool forced = psn == msk->rcv_nxt && skb_queue_empty(&sk->sk_receive_queue);
		bool room = mrc_psn_before(psn, msk->rcv_promised) ||
			    atomic_read(&sk->sk_rmem_alloc) + skb->truesize <=
			    READ_ONCE(sk->sk_rcvbuf);
		bool mem = (room || forced) && sk_rmem_schedule(sk, skb, skb->truesize);

		if (len)
			mrc_rcv_ratio_update(msk, skb->truesize, 1);
		msk->rcv_starved = room && !mem;
		if (!forced && !mem) {
			mrc_count(msk->mn, room ? MRC_C_RX_DROP_MEM : MRC_C_RX_DROP_RCVBUF);
			kfree_skb(skb);
			mrc_data_ack(msk);
			return;
		}
		if (!mem)
			mrc_count(msk->mn, MRC_C_MEM_FORCED);
	}
	__skb_pull(skb, sizeof(struct mrchdr));
	if (pskb_trim(skb, len)) {
		kfree_skb(skb);
		return;
	}
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb_orphan(skb);
	skb_set_owner_r(skb, sk);
	cb = MRC_SKB_CB(skb);
	memset(cb, 0, sizeof(*cb));
	cb->psn = psn;
	cb->flags = hdr->flags;

	if (psn == msk->rcv_nxt) {
		mrc_echo_update(msk, ntohl(hdr->tsval), ev_port);
		mrc_deliver(msk, skb);
		while ((skb = skb_rb_first(&msk->ooo_queue)) &&
		       MRC_SKB_CB(skb)->psn == msk->rcv_nxt) {
			rb_erase(&skb->rbnode, &msk->ooo_queue);
			if (skb == msk->ooo_last)
				msk->ooo_last = NULL;
			mrc_deliver(msk, skb);
		}
		if (!RB_EMPTY_ROOT(&msk->ooo_queue))
			ack_now = true;
		mrc_data_wake(msk);
	} else {
		if (!mrc_ooo_insert(&msk->ooo_queue, &msk->ooo_last, skb)) {
			mrc_dup_rcv(msk, hdr, ev_port);
			kfree_skb(skb);
			/* a spurious resend: its sender learns so from this echo */
			ack_now = true;
		} else {
			mrc_echo_update(msk, ntohl(hdr->tsval), ev_port);
			/* a batch ACKs once at its end anyway; a flagged packet at once */
			ack_now |= msk->rx_batch;
			ooo = !ack_now;
		}
	}
	if (msk->state == MRC_STATE_DONE) {
		/* the peer's FIN completed the close: acknowledge it still */
		if (msk->fin_received)
			mrc_data_ack(msk);
		return;
	}
	if (ooo) {
		/* compressed, as TCP's SACKs: spraying reorders all the time */
		if (++msk->ack_pending >= MRC_OOO_ACK_SEGS)
			mrc_data_ack(msk);
		else
			mrc_arm_ack_timer(msk, mrc_ooo_ack_delay_us(msk->rtt.srtt_us ?:
								     msk->rcv_rtt_us));
	} else if (ack_now || ++msk->ack_pending >= 2) {
		mrc_data_ack(msk);
	} else {
		mrc_arm_delack(msk);
	}
}

static void mrc_conn_rcv(struct mrc_sock *msk, struct sk_buff *skb)
{
	struct mrchdr hdr = *(const struct mrchdr *)skb->data;
	union mrc_addr local, remote;
	u32 src_id = ntohl(hdr.src_id);

	sock_owned_by_me(&msk->sk);
	if (msk->state == MRC_STATE_DONE || msk->state == MRC_STATE_CLOSED) {
		/*
		 * Answered as after the unhash, whose packets find no socket: the
		 * backlog can hold packets that came while we ended.  Over
		 * loopback the peer's challenge ACK to our own RST (sent with
		 * the PSN it had acknowledged, behind data still in flight)
		 * arrives inside that RST's transmission, before mrc_done();
		 * dropped here, its peer waited out net.mrc.fin_timeout for a FIN.
		 */
		mrc_send_rst_reply(msk->mn, skb, &hdr);
		mrc_count(msk->mn, MRC_C_RX_DROP_NOCONN);
		goto drop;
	}
	mrc_skb_addrs(skb, &local, &remote);
	if (!mrc_peer_known(msk, &remote) ||
	    (src_id != msk->remote_id &&
	     !(msk->state == MRC_STATE_SYN_SENT && !msk->remote_id &&
	       (hdr.type == MRC_T_SYNACK || (hdr.type == MRC_T_RST && !src_id))))) {
		mrc_count(msk->mn, MRC_C_RX_DROP_BADID);
		goto drop;
	}
	mrc_path_rx(msk, &local, &remote);
	if (hdr.type == MRC_T_RST) {
		/*
		 * Only a RST at exactly the next expected PSN resets (RFC 5961's
		 * idea): one that merely names the right IDs gets a challenge
		 * ACK, which a peer that really lost the connection answers with
		 * an exact RST.
		 */
		if (msk->state != MRC_STATE_SYN_SENT && ntohl(hdr.psn) != msk->rcv_nxt) {
			mrc_count(msk->mn, MRC_C_RX_DROP_WINDOW);
			mrc_send_ack(msk);
			goto drop;
		}
		mrc_count(msk->mn, MRC_C_CONN_RESET);
		/* as tcp_reset(): refused while connecting, EPIPE once the peer closed */
		mrc_done(msk, msk->state == MRC_STATE_SYN_SENT ? ECONNREFUSED :
			 msk->state == MRC_STATE_CLOSE_WAIT ? EPIPE : ECONNRESET);
		goto consume;
	}
	if (hdr.type == MRC_T_SYN || hdr.type == MRC_T_SYNACK) {
		if (msk->state != MRC_STATE_SYN_SENT)
			goto drop;
		mrc_syn_sent_rcv(msk, skb, (const struct mrchdr *)skb->data);
		goto consume;
	}
	if (msk->state == MRC_STATE_SYN_SENT &&
	    mrc_syn_sent_rcv(msk, skb, (const struct mrchdr *)skb->data))
		goto drop;
	if (hdr.type == MRC_T_HSACK) {
		/* our ACK of the handshake was lost: repeat it */
		mrc_send_ack(msk);
		goto consume;
	}
	/* wire.c checked a pure ACK's payload; a control packet is linear */
	if (!mrc_ack_rcv(msk, &hdr, hdr.type == MRC_T_ACK && hdr.len ?
			 skb->data + sizeof(hdr) : NULL)) {
		mrc_count(msk->mn, MRC_C_RX_DROP_WINDOW);
		goto drop;
	}
	/* the peer is alive: the keepalive timer reads this when it fires */
	msk->rcv_stamp = jiffies;
	msk->keepalive_probes = 0;
	if ((hdr.flags & (MRC_F_PROBE | MRC_F_ACKNOW)) == MRC_F_PROBE &&
	    msk->state != MRC_STATE_DONE) {
		/*
		 * A probe of a retired EV or of our window: answer at once,
		 * echoing its port; the prober may be stalled on our window
		 */
		u32 tsval = msk->last_tsval;
		u16 ev = msk->last_ev;

		msk->last_ev = ntohs(udp_hdr(skb)->source);
		msk->last_tsval = ntohl(hdr.tsval);
		mrc_send_ack_twice(msk, MRC_F_PROBE | MRC_F_ACKNOW);
		/* only the answer echoes the probe */
		msk->last_tsval = tsval;
		msk->last_ev = ev;
	} else if (hdr.type == MRC_T_ACK) {
		/*
		 * An ACK is echoed too: a peer that only acknowledges learns
		 * from our echoes which of its EVs reach us (mrc_echo_rcv()).
		 */
		mrc_echo_update(msk, ntohl(hdr.tsval), ntohs(udp_hdr(skb)->source));
	}
	if (hdr.type == MRC_T_DATA && (hdr.len || mrc_empty_msg(&msk->sk, hdr.flags)) &&
	    sock_flag(&msk->sk, SOCK_DEAD) && !mrc_psn_before(ntohl(hdr.psn), msk->rcv_nxt) &&
	    msk->state != MRC_STATE_DONE) {
		/*
		 * New data for a socket nobody can read any more: reset, as TCP.
		 * Not a copy of what was read (a late or spurious resend): the
		 * peer's transfer was whole, and a RST lost on the way would
		 * leave it waiting for our FIN forever (robustness.sh, 10 %
		 * loss).
		 */
		mrc_send_ctrl(msk, MRC_T_RST, 0, NULL, 0);
		mrc_done(msk, 0);
		goto drop;
	}
	if (hdr.type == MRC_T_DATA) {
		if (msk->state == MRC_STATE_DONE)
			goto drop;
		mrc_data_rcv(msk, skb, &hdr);
		return;
	}
consume:
	/* handled (an ACK, a probe, the handshake): not a drop for skb tracing */
	consume_skb(skb);
	return;
drop:
	kfree_skb(skb);
}

/* Handles a validated packet for @sk; the socket lock is held (or owned). */
static int mrc_do_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct mrc_sock *msk = mrc_sk(sk);

	if (msk->state == MRC_STATE_LISTEN)
		mrc_listen_rcv(msk, skb);
	else
		mrc_conn_rcv(msk, skb);
	return 0;
}

/*
 * A packet (its MRC header @h) for a connection whose peer is known, from
 * anyone else (another address or sender ID).  Checked before the backlog, so that an off-path
 * flood cannot take the room the peer's packets need while the user owns
 * the socket; mrc_conn_rcv() checks again under the lock.  remote_id goes
 * from 0 to the peer's ID once, and remote is fixed before the connection
 * is hashed: read without the lock, a stale 0 only skips this early check.
 */
static bool mrc_hdr_from_stranger(struct mrc_sock *msk, struct sk_buff *skb,
				  const struct mrchdr *h)
{
	u32 remote_id = READ_ONCE(msk->remote_id);
	union mrc_addr local, remote;

	if (!remote_id)
		return false;
	if (ntohl(h->src_id) != remote_id)
		return true;
	mrc_hdr_addrs(skb, h, &local, &remote);
	return !mrc_peer_known(msk, &remote);
}

static bool mrc_from_stranger(struct mrc_sock *msk, struct sk_buff *skb)
{
	return mrc_hdr_from_stranger(msk, skb, (const struct mrchdr *)skb->data);
}

/*
 * As tcp_add_backlog(): the buffers plus 64 KB of headroom.  Without it a
 * socket shrunk to the minimum buffers while its owner sat in a syscall
 * dropped the RST right behind a data packet; the peer, gone, never sent
 * it again, and our orphan waited out net.mrc.fin_timeout for a FIN
 * (hardening.sh's syscall fuzz, about one run in five).
 */
static unsigned int mrc_backlog_limit(const struct sock *sk)
{
	return READ_ONCE(sk->sk_rcvbuf) + READ_ONCE(sk->sk_sndbuf) + 64 * 1024;
}

/**
 * mrc_sock_rcv() - hand packets to their socket under one lock
 * @mn: namespace state
 * @sk: their connection or listener, referenced
 * @batch: validated packets for @sk, in arrival order
 *
 * One bh_lock_sock, one ACK decision and one wakeup for the batch.
 * Consumes the packets and the reference on @sk.
 */
static void mrc_sock_rcv(struct mrc_net *mn, struct sock *sk, struct sk_buff_head *batch)
{
	struct mrc_sock *msk = mrc_sk(sk);
	struct sk_buff *skb;

	/* subclass 0: a listener takes its new child one level below */
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk)) {
		msk->rx_batch = 1;
		while ((skb = __skb_dequeue(batch)))
			mrc_do_rcv(sk, skb);
		mrc_rx_batch_end(msk);
	}
	while ((skb = __skb_dequeue(batch))) {
		if (mrc_from_stranger(msk, skb)) {
			mrc_count(mn, MRC_C_RX_DROP_BADID);
			kfree_skb(skb);
		} else if (sk_add_backlog(sk, skb, mrc_backlog_limit(sk))) {
			mrc_count(mn, MRC_C_RX_DROP_BACKLOG);
			kfree_skb(skb);
		}
	}
	bh_unlock_sock(sk);
	sock_put(sk);
}

static int mrc_drop(struct mrc_net *mn, struct sk_buff *skb, enum mrc_counter why)
{
	mrc_count(mn, why);
	kfree_skb(skb);
	return 0;
}

/* A client's flow for SO_REUSEPORT: its address, MRC port and connection ID */
static u32 mrc_flow_hash(const union mrc_addr *remote, __be32 src_id)
{
	if (remote->sa.sa_family == AF_INET6)
		return jhash_3words(ipv6_addr_hash(&remote->v6.sin6_addr),
				    (__force u32)remote->v6.sin6_port, (__force u32)src_id, 0);
	return jhash_3words((__force u32)remote->v4.sin_addr.s_addr,
			    (__force u32)remote->v4.sin_port, (__force u32)src_id, 0);
}

/*
 * Checks a packet (data at its MRC header) and counts it.  A data packet's
 * payload stays where it lies (page fragments of an aggregate); the other
 * types are parsed in place, so they are made linear.
 * Return: true if it may go on; false: dropped and counted.
 */
static bool mrc_rcv_check(struct mrc_net *mn, struct sk_buff *skb)
{
	const struct mrchdr *h;
	enum mrc_counter why;

	mrc_count(mn, MRC_C_RX_PACKETS);
	if (!pskb_may_pull(skb, sizeof(struct mrchdr)))
		return mrc_drop(mn, skb, MRC_C_RX_DROP_SHORT);
	h = (const struct mrchdr *)skb->data;
	why = mrc_hdr_check(h, skb->len);
	if (why != MRC_C_RX_PACKETS)
		return mrc_drop(mn, skb, why);
	if (h->type != MRC_T_DATA && !pskb_may_pull(skb, skb->len))
		return mrc_drop(mn, skb, MRC_C_RX_DROP_SHORT);
	return true;
}

/*
 * The connection or listener a checked packet is for, referenced; NULL:
 * none, and the packet was answered (RST) and dropped.
 */
static struct mrc_sock *mrc_rcv_lookup(struct mrc_net *mn, struct sk_buff *skb)
{
	const struct mrchdr *h = (const struct mrchdr *)skb->data;
	union mrc_addr local, remote;
	struct mrc_sock *msk = NULL;

	rcu_read_lock();
	if (h->dst_id)
		msk = mrc_lookup_conn(mn, ntohl(h->dst_id));
	if (!msk && (h->type == MRC_T_SYN || h->type == MRC_T_HSACK)) {
		mrc_skb_addrs(skb, &local, &remote);
		msk = mrc_lookup_listener(mn, &local, mrc_flow_hash(&remote, h->src_id));
	}
	if (!msk || !refcount_inc_not_zero(&msk->sk.sk_refcnt)) {
		rcu_read_unlock();
		mrc_send_rst_reply(mn, skb, h);
		mrc_drop(mn, skb, MRC_C_RX_DROP_NOCONN);
		return NULL;
	}
	rcu_read_unlock();
	return msk;
}

/*
 * Packets (data at their MRC headers, in arrival order): the ones for the
 * first packet's connection are handed over as one batch; the others (an
 * aggregate may merge two connections that share an EV) one by one.
 */
static void mrc_rcv_list(struct mrc_net *mn, struct sk_buff *segs)
{
	struct sk_buff_head batch, one;
	struct mrc_sock *msk = NULL, *other;
	struct sk_buff *skb, *next;
	bool looked = false;
	__be32 id = 0;

	__skb_queue_head_init(&batch);
	skb_list_walk_safe(segs, skb, next) {
		__be32 dst_id;

		skb_mark_not_on_list(skb);
		if (!mrc_rcv_check(mn, skb))
			continue;
		dst_id = ((const struct mrchdr *)skb->data)->dst_id;
		if (!looked) {
			looked = true;
			id = dst_id;
			msk = mrc_rcv_lookup(mn, skb);
			if (msk)
				__skb_queue_tail(&batch, skb);
		} else if (msk && dst_id && dst_id == id) {
			__skb_queue_tail(&batch, skb);
		} else {
			other = mrc_rcv_lookup(mn, skb);
			if (other) {
				__skb_queue_head_init(&one);
				__skb_queue_tail(&one, skb);
				mrc_sock_rcv(mn, &other->sk, &one);
			}
		}
	}
	if (msk)
		mrc_sock_rcv(mn, &msk->sk, &batch);
}

/* Packets of an in-order train handled together (mrc_rcv_train()) */
#define MRC_TRAIN_MAX	64

/**
 * struct mrc_train - an aggregate read as one in-order data train
 * @n: packets
 * @frag: for each, the frag of the aggregate that holds it whole
 * @off: its offset in that frag
 * @first: the first packet's header
 * @last: the last one's (its send time is the newest)
 */
struct mrc_train {
	u32		n;
	u8		frag[MRC_TRAIN_MAX];
	u16		off[MRC_TRAIN_MAX];
	struct mrchdr	first;
	struct mrchdr	last;
};

/*
 * Reads the headers of @skb's packets where they lie: each packet must sit
 * whole in one page frag we may reference (what mrc_burst_by_ref() sends),
 * and the headers must make a train (mrc_hdr_train_next()).
 */
static bool mrc_train_parse(struct sk_buff *skb, struct mrc_train *t)
{
	const struct skb_shared_info *shi = skb_shinfo(skb);
	unsigned int stride = shi->gso_size, fstart = 0, off;
	int f = 0;

	/* UDP_L4: packets cut at gso_size (UFO's one datagram udp_rcv_segment() drops) */
	if (!(shi->gso_type & SKB_GSO_UDP_L4) || (shi->gso_type & SKB_GSO_UDP) ||
	    IS_ENABLED(CONFIG_HIGHMEM) || skb_headlen(skb) || skb_has_frag_list(skb) ||
	    skb->pp_recycle || skb_zcopy(skb) || !skb_frags_readable(skb) ||
	    stride <= sizeof(struct mrchdr) || skb->len <= stride ||
	    skb->len > MRC_TRAIN_MAX * stride)
		return false;
	for (t->n = 0, off = 0; off < skb->len; t->n++, off += stride) {
		unsigned int seg_len = min(stride, skb->len - off);
		const skb_frag_t *frag;
		const struct mrchdr *h;

		/* a last packet too short for its header is no train's */
		if (seg_len <= sizeof(*h))
			return false;
		while (f < shi->nr_frags && fstart + skb_frag_size(&shi->frags[f]) <= off)
			fstart += skb_frag_size(&shi->frags[f++]);
		if (f == shi->nr_frags)
			return false;
		frag = &shi->frags[f];
		if (off + seg_len > fstart + skb_frag_size(frag) || off - fstart > U16_MAX)
			return false;
		h = skb_frag_address(frag) + off - fstart;
		if (!t->n) {
			if (mrc_hdr_check(h, seg_len) != MRC_C_RX_PACKETS ||
			    h->type != MRC_T_DATA || h->flags || !h->len)
				return false;
			t->first = *h;
		} else if (!mrc_hdr_train_next(&t->first, h, t->n, seg_len)) {
			return false;
		}
		t->frag[t->n] = f;
		t->off[t->n] = off - fstart;
		if (off + stride >= skb->len)
			t->last = *h;
	}
	return true;
}

/*
 * The payload of packets [@from, @to) of @t, by reference to @skb's pages:
 * one frag each (their headers lie between them).
 */
static struct sk_buff *mrc_train_data(struct sk_buff *skb, const struct mrc_train *t, u32 from,
				      u32 to)
{
	const struct skb_shared_info *shi = skb_shinfo(skb);
	unsigned int stride = shi->gso_size;
	struct sk_buff *d = alloc_skb(0, GFP_ATOMIC);
	u32 i;

	if (!d)
		return NULL;
	memset(MRC_SKB_CB(d), 0, sizeof(struct mrc_skb_cb));
	MRC_SKB_CB(d)->psn = ntohl(t->first.psn) + from;
	for (i = from; i < to; i++) {
		const skb_frag_t *frag = &shi->frags[t->frag[i]];
		unsigned int len = min(stride, skb->len - i * stride) - sizeof(struct mrchdr);

		skb_frag_ref(skb, t->frag[i]);
		skb_fill_page_desc(d, i - from, skb_frag_page(frag),
				   skb_frag_off(frag) + t->off[i] + sizeof(struct mrchdr), len);
		d->len += len;
		d->data_len += len;
		/* the header's bytes stay pinned with the page as well */
		d->truesize += stride;
	}
	return d;
}

/*
 * Whether @msk takes train @t now as the per-packet path would take each
 * of its packets in order: next PSN, nothing held out of order, a stream
 * still receiving, from its peer.
 */
static bool mrc_train_fits(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_train *t,
			   union mrc_addr *local, union mrc_addr *remote)
{
	struct sock *sk = &msk->sk;
	u32 psn = ntohl(t->first.psn);

	if ((msk->state != MRC_STATE_ESTABLISHED && msk->state != MRC_STATE_FIN_WAIT) ||
	    sk->sk_type != SOCK_STREAM || sock_flag(sk, SOCK_DEAD) || msk->fin_received ||
	    ntohl(t->first.src_id) != msk->remote_id || psn != msk->rcv_nxt ||
	    !RB_EMPTY_ROOT(&msk->ooo_queue) ||
	    !mrc_psn_in_window(psn + t->n - 1, msk->rcv_nxt, MRC_RCV_WINDOW_PKTS))
		return false;
	mrc_hdr_addrs(skb, &t->first, local, remote);
	return mrc_peer_known(msk, remote);
}

/*
 * Takes train @t, all of @skb, into @msk as the per-packet path would take
 * its packets one by one, in order, when that is all they would do.  The
 * socket lock held (softirq, not owned) or owned (its backlog); inside a
 * receive batch.
 * Return: true when @skb was consumed (queued, or dropped and counted).
 */
static bool mrc_train_take(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_train *t)
{
	struct mrc_net *mn = msk->mn;
	union mrc_addr local, remote;
	struct sock *sk = &msk->sk;
	unsigned int truesize = 0;
	struct sk_buff_head q;
	struct sk_buff *d;
	u32 i;

	lockdep_assert(lockdep_sock_is_held(sk));
	if (!mrc_train_fits(msk, skb, t, &local, &remote))
		return false;
	mrc_path_rx(msk, &local, &remote);
	__skb_queue_head_init(&q);
	for (i = 0; i < t->n; i += MAX_SKB_FRAGS) {
		d = mrc_train_data(skb, t, i, min_t(u32, i + MAX_SKB_FRAGS, t->n));
		if (!d)
			goto undo;
		truesize += d->truesize;
		__skb_queue_tail(&q, d);
	}
	/*
	 * As each packet's would: the ACK first (it may free our sent data and
	 * reclaim forward-allocated memory), then the room.  Handled again by
	 * the per-packet way if the room is short, as each packet repeats it.
	 */
	if (!mrc_ack_rcv(msk, &t->last, NULL)) {
		mrc_count_add(mn, MRC_C_RX_PACKETS, t->n);
		mrc_count_add(mn, MRC_C_RX_DROP_WINDOW, t->n);
		__skb_queue_purge_reason(&q, SKB_CONSUMED);
		kfree_skb(skb);
		return true;
	}
	msk->rcv_stamp = jiffies;
	msk->keepalive_probes = 0;
	if (msk->state == MRC_STATE_DONE)
		goto undo;
	/* what the per-packet path queues without dropping or forcing */
	if ((!mrc_psn_before(ntohl(t->last.psn), msk->rcv_promised) &&
	     atomic_read(&sk->sk_rmem_alloc) + truesize > READ_ONCE(sk->sk_rcvbuf)) ||
	    !sk_rmem_schedule(sk, skb_peek(&q), truesize))
		goto undo;
	mrc_count_add(mn, MRC_C_RX_PACKETS, t->n);
	mrc_count(mn, MRC_C_RX_TRAINS);
	msk->stats.packets_received += t->n;
	mrc_rcv_ratio_update(msk, truesize / t->n, t->n);
	msk->rcv_starved = 0;
	mrc_echo_update(msk, ntohl(t->last.tsval), ntohs(udp_hdr(skb)->source));
	while ((d = __skb_dequeue(&q))) {
		skb_set_owner_r(d, sk);
		msk->stats.bytes_received += d->len;
		WRITE_ONCE(msk->rcv_queued, msk->rcv_queued + d->len);
		__skb_queue_tail(&sk->sk_receive_queue, d);
	}
	msk->rcv_nxt = ntohl(t->last.psn) + 1;
	mrc_data_wake(msk);
	msk->ack_pending += t->n;
	mrc_data_ack(msk);
	consume_skb(skb);
	return true;
undo:
	__skb_queue_purge_reason(&q, SKB_CONSUMED);
	return false;
}

/*
 * Cuts aggregate @skb (data at its first MRC header) at its gso_size into
 * the packets it was made of, by the stack's own UDP segmentation.
 * Return: the packets (data at their MRC headers), or NULL (@skb consumed).
 */
static struct sk_buff *mrc_cut(struct sock *usk, struct sk_buff *skb)
{
	struct sk_buff *segs, *seg, *next;

	__skb_push(skb, -skb_mac_offset(skb));
	/*
	 * UDP's header pull turned CHECKSUM_PARTIAL (what GSO and GRO make)
	 * into NONE (skb_postpull_rcsum()), and __udp_gso_segment() would then
	 * sum every byte in software.  Its state before the pull is restored,
	 * as udp_rcv_segment() does for looped packets; UDP's own GSO receive
	 * (udp_queue_rcv_skb()) segments before the pull.
	 */
	if (skb->ip_summed == CHECKSUM_NONE &&
	    skb_checksum_start(skb) == skb_transport_header(skb))
		skb->ip_summed = CHECKSUM_PARTIAL;
	segs = udp_rcv_segment(usk, skb, usk->sk_family == AF_INET);
	skb_list_walk_safe(segs, seg, next) {
		__skb_pull(seg, skb_transport_offset(seg) + sizeof(struct udphdr));
		udp_post_segment_fix_csum(seg);
	}
	return segs;
}

/*
 * A train its socket's user held (mrc_rcv_train()), from the backlog: taken
 * whole, or cut into its packets, every one this connection's.
 */
static void mrc_backlog_train(struct mrc_sock *msk, struct sk_buff *skb)
{
	struct sk_buff *segs = NULL, *seg, *next;
	struct mrc_net *mn = msk->mn;
	struct mrc_train t;
	struct socket *usock;

	if (mrc_train_parse(skb, &t) && mrc_train_take(msk, skb, &t))
		return;
	local_bh_disable();
	rcu_read_lock();
	usock = mrc_tunnel_sock(mn, ip_hdr(skb)->version == 4 ? AF_INET : AF_INET6);
	if (usock)
		segs = mrc_cut(usock->sk, skb);
	else	/* none after the namespace's exit began: no socket is left either */
		kfree_skb(skb);
	rcu_read_unlock();
	local_bh_enable();
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		if (mrc_rcv_check(mn, seg))
			mrc_do_rcv(&msk->sk, seg);
	}
}

/*
 * The backlog, drained by release_sock(): one batch, ended in release_cb.
 * An aggregate in it is a train (mrc_rcv_train()).
 */
int mrc_backlog_rcv(struct sock *sk, struct sk_buff *skb)
{
	mrc_sk(sk)->rx_batch = 1;
	if (skb_is_gso(skb)) {
		mrc_backlog_train(mrc_sk(sk), skb);
		return 0;
	}
	return mrc_do_rcv(sk, skb);
}

/**
 * mrc_rcv_train() - queue an aggregate that is its connection's next data
 * @mn: namespace state
 * @skb: the aggregate, data at its first MRC header
 *
 * The common case of a transfer: a burst arrives whole and in order on a
 * connection that misses nothing.  Instead of cutting it into an skb per
 * packet (udp_rcv_segment()) and handling each, its headers are read where
 * they lie, its payload is queued by reference (MAX_SKB_FRAGS packets per
 * skb) under one socket lock, and its acknowledgment fields, the same in
 * every packet of a burst, are handled once.  While the socket's user holds
 * it, the train waits in the backlog whole (mrc_backlog_train()).  Anything
 * else (a gap, a flag, CE, memory short) takes the per-packet way, which
 * decides and counts what this does not.
 *
 * Context: softirq, rcu_read_lock held.
 * Return: true when @skb was consumed.
 */
static bool mrc_rcv_train(struct mrc_net *mn, struct sk_buff *skb)
{
	struct mrc_sock *msk;
	struct mrc_train t;
	bool done = false;
	struct sock *sk;

	if (!mrc_train_parse(skb, &t) || mrc_skb_ce(skb))
		return false;
	msk = mrc_lookup_conn(mn, ntohl(t.first.dst_id));
	if (!msk || !refcount_inc_not_zero(&msk->sk.sk_refcnt))
		return false;
	sk = &msk->sk;
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk)) {
		msk->rx_batch = 1;
		done = mrc_train_take(msk, skb, &t);
		mrc_rx_batch_end(msk);
	} else if (!mrc_hdr_from_stranger(msk, skb, &t.first)) {
		/* else cut: the backlog may still take some of its packets */
		done = !sk_add_backlog(sk, skb, mrc_backlog_limit(sk));
	}
	bh_unlock_sock(sk);
	sock_put(sk);
	return done;
}

/*
 * A packet of the tunnel socket, data after its UDP header.  An aggregate
 * (our sender's GSO burst, or GRO at a NIC or veth) is queued whole when
 * it is its connection's next data (mrc_rcv_train()); else it is cut at
 * its gso_size into the packets it was made of, by the stack's own UDP
 * segmentation, and they are handled as one batch.
 */
static void mrc_udp_input(struct mrc_net *mn, struct sock *usk, struct sk_buff *skb)
{
	struct sk_buff *segs;

	if (!skb_is_gso(skb)) {
		skb->next = NULL;
		mrc_rcv_list(mn, skb);
		return;
	}
	mrc_count(mn, MRC_C_RX_BATCHES);
	if (mrc_rcv_train(mn, skb))
		return;
	segs = mrc_cut(usk, skb);
	if (!segs)
		return;
	mrc_rcv_list(mn, segs);
}

/**
 * mrc_udp_data_ready() - sk_data_ready of the tunnel sockets
 * @usk: the UDP tunnel socket
 *
 * The tunnel sockets have no encap_rcv: UDP segments every GSO or GRO
 * aggregate before an encap_rcv (udp_unexpected_gso()), so each packet
 * would cross the stack on its own.  They take aggregates whole instead
 * (udp_allow_gso()), UDP queues them, and this drains the queue at once,
 * in the softirq that queued them, as rxrpc once did.  UDP has not
 * verified the checksum of a queued datagram yet: done here, as
 * udp_recvmsg() does.  Each call takes at most MRC_RX_DRAIN_BUDGET
 * datagrams, so one CPU does not drain every other's; as every enqueue
 * calls this and each call takes one while any is queued, none is left.
 *
 * Context: softirq (or BH disabled); any CPU, concurrently.
 */
void mrc_udp_data_ready(struct sock *usk)
{
	int off = 0, err, budget = MRC_RX_DRAIN_BUDGET;
	struct mrc_net *mn;
	struct sk_buff *skb;

	local_bh_disable();
	rcu_read_lock();
	mn = rcu_dereference_sk_user_data(usk);
	while (budget-- && (skb = __skb_recv_udp(usk, MSG_DONTWAIT, &off, &err))) {
		/* an aggregate's checksum is the GSO/GRO engine's (see above) */
		bool csum_bad = !skb_is_gso(skb) && !udp_skb_csum_unnecessary(skb) &&
				__udp_lib_checksum_complete(skb);

		/* UDP kept its accounting in skb->dev_scratch: done with it */
		skb->dev = NULL;
		off = 0;
		if (!mn) {
			kfree_skb(skb);
			continue;
		}
		if (csum_bad) {
			mrc_count(mn, MRC_C_RX_PACKETS);
			mrc_drop(mn, skb, MRC_C_RX_DROP_CSUM);
			continue;
		}
		mrc_udp_input(mn, usk, skb);
	}
	rcu_read_unlock();
	local_bh_enable();
}
