// SPDX-License-Identifier: GPL-2.0-only
/*
 * Connection state machine: the transitions that received packets drive.
 * LISTEN: the server side of the stateless-cookie handshake (a SYN gets a
 * SYNACK and leaves nothing behind; an HSACK with a valid cookie makes an
 * ESTABLISHED child).  SYN_SENT: the client side, up to ESTABLISHED.  The
 * FIN exchange (CLOSE_WAIT, FIN_WAIT, CLOSING) and the end, DONE
 * (mrc_done(), which timers, ICMP errors and close reach too).
 *
 * A state is set with mrc_set_state() and the user's side (connect,
 * listen, shutdown, close) is driven from socket.c; our FIN is queued by
 * mrc_queue_fin() (output.c).  Called with the socket lock held.
 */
#include <net/udp.h>

#include "protocol.h"

static void mrc_cookie_input(struct sk_buff *skb, const struct mrchdr *h,
			     struct mrc_cookie_in *in)
{
	union mrc_addr local, remote;

	mrc_skb_addrs(skb, &local, &remote);
	memset(in, 0, sizeof(*in));
	if (local.sa.sa_family == AF_INET) {
		in->addr[0] = remote.v4.sin_addr.s_addr;
		in->laddr[0] = local.v4.sin_addr.s_addr;
	} else {
		memcpy(in->addr, &remote.v6.sin6_addr, 16);
		memcpy(in->laddr, &local.v6.sin6_addr, 16);
	}
	in->sport = ntohs(h->sport);
	in->dport = ntohs(h->dport);
	in->client_id = ntohl(h->src_id);
	in->client_isn = ntohl(h->psn);
}

/*
 * Whether @id is another connection's: this client's own child (its SYN or
 * HSACK came again) does not count.  Context: rcu_read_lock.
 */
static bool mrc_id_taken(struct mrc_net *mn, u32 id, u32 client_id)
{
	struct mrc_sock *holder = mrc_lookup_conn(mn, id);

	return holder && READ_ONCE(holder->remote_id) != client_id;
}

/*
 * The cookie for @in whose connection ID no other connection has: the
 * client sends everything to that ID, the HSACK too, so one in use would
 * make the handshake go to that connection until the client gave up.
 * Return: false when every salt's ID is taken (the SYN goes unanswered; its
 * retry finds another slot or freed IDs).
 */
static bool mrc_cookie_free_id(struct mrc_net *mn, const struct mrc_cookie_in *in,
			       struct mrc_cookie *c, u32 *word)
{
	u32 slot = mrc_cookie_slot(), salt;
	bool found = false;

	rcu_read_lock();
	for (salt = 0; salt < MRC_COOKIE_SALTS && !found; salt++) {
		*word = mrc_cookie_word(slot, salt);
		mrc_cookie_make(&mn->cookie_key, in, *word, c);
		found = !mrc_id_taken(mn, c->server_id, in->client_id);
	}
	rcu_read_unlock();
	if (salt > 1 || !found)
		mrc_count(mn, MRC_C_SYN_ID_TAKEN);
	return found;
}

/*
 * SYN: answer with IDs and a cookie, keep nothing.  Listener locked.
 * Return: whether it was answered (else dropped).
 */
static bool mrc_listen_syn(struct mrc_sock *lsk, struct sk_buff *skb, const struct mrchdr *h)
{
	struct mrc_hs_payload hs;
	struct mrc_cookie_in in;
	struct mrc_cookie c;
	u32 word;

	if (sk_acceptq_is_full(&lsk->sk)) {
		mrc_count(lsk->mn, MRC_C_RX_DROP_ACCEPTQ);
		return false;
	}
	mrc_cookie_input(skb, h, &in);
	if (!mrc_cookie_free_id(lsk->mn, &in, &c, &word))
		return false;
	hs.cookie = cpu_to_be64(c.cookie);
	hs.slot = htonl(word);
	hs.mss = htonl(65000);
	mrc_send_synack(lsk->mn, skb, h, c.server_id, c.server_isn, &hs);
	return true;
}

/*
 * HSACK with a valid cookie: the client proved its address; make the child.
 * Return: whether a child was made (else dropped).
 */
static bool mrc_listen_hsack(struct mrc_sock *lsk, struct sk_buff *skb, const struct mrchdr *h)
{
	const struct mrc_hs_payload *hs = (const void *)(h + 1);
	struct sock *lsock = &lsk->sk, *csk;
	struct mrc_sock *child, *holder;
	struct mrc_cookie_in in;
	u32 server_isn = ntohl(h->ack_psn) - 1;

	sock_owned_by_me(lsock);
	mrc_cookie_input(skb, h, &in);
	if (!mrc_cookie_check(&lsk->mn->cookie_key, &in, ntohl(hs->slot), mrc_cookie_slot(),
			      ntohl(h->dst_id), server_isn, be64_to_cpu(hs->cookie))) {
		mrc_count(lsk->mn, MRC_C_RX_DROP_COOKIE);
		return false;
	}
	/*
	 * The ID is held: by this client's child (a duplicate HSACK queued
	 * behind the one that made it; the child answers the next one), or,
	 * rarely, by a connection that took it since the SYNACK (another
	 * handshake's derivation or a client's random draw; this client times
	 * out).  Checked before any allocation; mrc_hash_conn() checks again.
	 */
	rcu_read_lock();
	holder = mrc_lookup_conn(lsk->mn, ntohl(h->dst_id));
	if (holder && READ_ONCE(holder->remote_id) != ntohl(h->src_id))
		mrc_count(lsk->mn, MRC_C_RX_DROP_BADID);
	rcu_read_unlock();
	if (holder)
		return false;
	if (sk_acceptq_is_full(lsock)) {
		mrc_count(lsk->mn, MRC_C_RX_DROP_ACCEPTQ);
		return false;
	}
	csk = sk_alloc(sock_net(lsock), lsock->sk_family, GFP_ATOMIC, &mrc_proto, 0);
	if (!csk)
		return false;
	sock_init_data(NULL, csk);
	child = mrc_sk(csk);
	child->mn = lsk->mn;
	mrc_sock_init(child);
	csk->sk_type = lsock->sk_type;
	csk->sk_sndbuf = lsock->sk_sndbuf;
	csk->sk_rcvbuf = lsock->sk_rcvbuf;
	/* sizes the user fixed stay fixed: no autotuning (as sk_clone_lock()) */
	csk->sk_userlocks |= lsock->sk_userlocks & (SOCK_SNDBUF_LOCK | SOCK_RCVBUF_LOCK);
	child->sndbuf_init = csk->sk_sndbuf;
	child->nodelay = lsk->nodelay;
	child->priority = lsk->priority;
	child->burst_max = lsk->burst_max;
	child->user_timeout_ms = lsk->user_timeout_ms;
	child->ev_count = lsk->ev_count;
	/* as TCP's children (sk_clone_lock()): the listener's keepalive */
	if (sock_flag(lsock, SOCK_KEEPOPEN))
		sock_set_flag(csk, SOCK_KEEPOPEN);
	child->keepidle = lsk->keepidle;
	child->keepintvl = lsk->keepintvl;
	child->keepcnt = lsk->keepcnt;
	mrc_skb_addrs(skb, &child->local, &child->remote);
	child->family = child->local.sa.sa_family;
	/* an IPv4 connection of a dual-stack listener reads v4-mapped */
	child->v4mapped = lsk->family == AF_INET6 && child->family == AF_INET;
	child->local_id = ntohl(h->dst_id);
	child->remote_id = ntohl(h->src_id);
	child->rcv_nxt = ntohl(h->psn) + 1;
	child->rcv_promised = child->rcv_nxt;
	child->iss = server_isn;
	child->snd_una = server_isn + 1;
	child->snd_nxt = server_isn + 1;
	child->progress_stamp = jiffies;
	child->xmit_stamp = jiffies;
	child->rcv_stamp = jiffies;
	child->last_tsval = ntohl(h->tsval);
	/* the clock our SYNACK's tsval came from: the client echoes it */
	child->ts_offset = mrc_ts_offset(lsk->mn, child->local_id, child->remote_id);
	child->last_ev = ntohs(udp_hdr(skb)->source);
	child->snd_wnd = ntohl(h->rcv_wnd);
	child->snd_wnd_max = child->snd_wnd;
	mrc_set_state(child, MRC_STATE_ESTABLISHED);

	/*
	 * As sk_clone_lock(): the child is locked before it is hashed (softirq
	 * finds it from then on), one level below the listener (same lockdep
	 * class), and with BH off: from the listener's backlog this runs in
	 * process context, where a softirq for the child on this CPU would
	 * spin on its slock forever.  Nobody can own a child this new.
	 */
	local_bh_disable();
	bh_lock_sock_nested(csk);
	if (mrc_conn_start(child)) {
		bh_unlock_sock(csk);
		local_bh_enable();
		sk_free(csk);
		return false;
	}
	child->parent = lsk;
	list_add_tail(&child->accept_node, &lsk->accept_queue);
	sk_acceptq_added(lsock);
	mrc_send_ack(child);
	mrc_addr_list_take(child, hs + 1, ntohs(h->len) - sizeof(*hs));
	mrc_paths_build(child);
	mrc_keepalive_arm(child);
	mrc_nl_notify_conn(child, true);
	bh_unlock_sock(csk);
	local_bh_enable();
	mrc_count(lsk->mn, MRC_C_CONN_ACCEPTED);
	lsock->sk_data_ready(lsock);
	return true;
}

void mrc_listen_rcv(struct mrc_sock *lsk, struct sk_buff *skb)
{
	const struct mrchdr *h = (const struct mrchdr *)skb->data;

	if ((h->type == MRC_T_SYN && mrc_listen_syn(lsk, skb, h)) ||
	    (h->type == MRC_T_HSACK && mrc_listen_hsack(lsk, skb, h)))
		consume_skb(skb);
	else
		kfree_skb(skb);
}

/* Client side of the handshake.  Return: true if @h was handled. */
bool mrc_syn_sent_rcv(struct mrc_sock *msk, struct sk_buff *skb, const struct mrchdr *h)
{
	struct sock *sk = &msk->sk;
	u32 rtt_us;

	sock_owned_by_me(&msk->sk);
	if (h->type == MRC_T_SYNACK) {
		if (msk->remote_id && msk->remote_id != ntohl(h->src_id))
			return true;
		memcpy(&msk->hs, h + 1, sizeof(msk->hs));
		WRITE_ONCE(msk->remote_id, ntohl(h->src_id));
		msk->rcv_nxt = ntohl(h->psn) + 1;
		msk->rcv_promised = msk->rcv_nxt;
		msk->last_tsval = ntohl(h->tsval);
		msk->last_ev = ntohs(udp_hdr(skb)->source);
		if (mrc_rtt_from_echo(mrc_tsval(msk, mrc_clock_us()), ntohl(h->tsecr), &rtt_us))
			mrc_rtt_sample(&msk->rtt, rtt_us);
		mrc_addr_list_take(msk, (const u8 *)(h + 1) + sizeof(msk->hs),
				   ntohs(h->len) - sizeof(msk->hs));
		mrc_send_hsack(msk);
		return true;
	}
	if (!msk->remote_id || h->type == MRC_T_HSACK)
		return true;
	/* the server's first ACK or data: it has the connection now */
	mrc_set_state(msk, MRC_STATE_ESTABLISHED);
	msk->backoff = 0;
	msk->progress_stamp = jiffies;
	msk->rcv_stamp = jiffies;
	sk_stop_timer(sk, &msk->rto_timer);
	mrc_keepalive_arm(msk);
	mrc_count(msk->mn, MRC_C_CONN_OPENED);
	mrc_paths_build(msk);
	mrc_nl_notify_conn(msk, true);
	sk->sk_state_change(sk);
	sk->sk_write_space(sk);
	return false;
}

void mrc_fin_rcv(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;

	sock_owned_by_me(&msk->sk);
	msk->fin_received = true;
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | RCV_SHUTDOWN);
	if (msk->state == MRC_STATE_ESTABLISHED) {
		mrc_set_state(msk, MRC_STATE_CLOSE_WAIT);
	} else if (msk->state == MRC_STATE_FIN_WAIT) {
		/* our FIN still unacked: wait for it; else we are done */
		if (skb_queue_empty(&sk->sk_write_queue))
			mrc_done(msk, 0);
		else
			mrc_set_state(msk, MRC_STATE_CLOSING);
	}
	sk->sk_state_change(sk);
}

void mrc_our_fin_acked(struct mrc_sock *msk)
{
	sock_owned_by_me(&msk->sk);
	switch (msk->state) {
	case MRC_STATE_FIN_WAIT:
		/* an orphan still waits (bounded) to acknowledge the peer's FIN */
		if (msk->fin_received)
			mrc_done(msk, 0);
		break;
	case MRC_STATE_CLOSING:
		mrc_done(msk, 0);
		break;
	}
}

/**
 * mrc_done() - the connection is over: stop, unhash, wake everyone
 * @msk: connection (socket lock held, a reference besides the table's held)
 * @err: error for the user (ECONNRESET, ETIMEDOUT...), 0 for an orderly end
 */
void mrc_done(struct mrc_sock *msk, int err)
{
	struct sock *sk = &msk->sk;

	sock_owned_by_me(sk);
	if (msk->state == MRC_STATE_DONE)
		return;
	if (msk->remote_id && msk->state != MRC_STATE_SYN_SENT)
		mrc_nl_notify_conn(msk, false);
	if (err) {
		WRITE_ONCE(sk->sk_err, err);
		WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	}
	mrc_set_state(msk, MRC_STATE_DONE);
	mrc_timers_stop(msk);
	mrc_trace_stop(msk);
	mrc_unhash_conn(msk);
	mrc_write_queue_purge(sk);
	mrc_ooo_purge(msk);
	mrc_orphan_del(msk);
	/* nothing more to send on them: the routes' devices may go */
	mrc_routes_release(msk->ev_routes, msk->ev_cap);
	msk->send_head = NULL;
	msk->in_flight = 0;
	sk->sk_state_change(sk);
	if (err)
		sk_error_report(sk);
	sk->sk_write_space(sk);
}
