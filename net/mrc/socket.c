// SPDX-License-Identifier: GPL-2.0-only
/*
 * AF_MRC socket operations: bind, connect, listen, accept, send, receive,
 * poll, shutdown, close, socket options and ioctls, with TCP's errnos.
 */
#include <linux/sockios.h>
#include <asm/ioctls.h>
#include <linux/uio.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/ip6_route.h>
#include <net/inet_common.h>

#include "protocol.h"
#include "ev.h"
#include "trace.h"

/* Keep the generic sk_state meaningful for core code (poll, diag). */
void mrc_set_state(struct mrc_sock *msk, int state)
{
	static const u8 core_state[] = {
		[MRC_STATE_CLOSED]	= TCP_CLOSE,
		[MRC_STATE_LISTEN]	= TCP_LISTEN,
		[MRC_STATE_SYN_SENT]	= TCP_SYN_SENT,
		[MRC_STATE_ESTABLISHED]	= TCP_ESTABLISHED,
		[MRC_STATE_FIN_WAIT]	= TCP_FIN_WAIT1,
		[MRC_STATE_CLOSE_WAIT]	= TCP_CLOSE_WAIT,
		[MRC_STATE_CLOSING]	= TCP_CLOSING,
		[MRC_STATE_DONE]	= TCP_CLOSE,
	};

	if (msk->state != state)
		trace_mrc_state(msk->local_id, msk->state, state);
	WRITE_ONCE(msk->state, state);
	/* as inet_sk_state_store(): lockless readers see a settled state */
	smp_store_release(&msk->sk.sk_state, core_state[state]);
}

static bool mrc_writeable(struct mrc_sock *msk);

/* Wakes writers once half the send buffer is free (sk_stream_write_space). */
static void mrc_write_space(struct sock *sk)
{
	struct socket *sock = sk->sk_socket;
	struct socket_wq *wq;

	/* the pool cut sk_sndbuf under pressure (sk_stream_moderate_sndbuf): regrow */
	if (!(sk->sk_userlocks & SOCK_SNDBUF_LOCK) && sk->sk_sndbuf < mrc_sk(sk)->sndbuf_init &&
	    !sk_under_memory_pressure(sk))
		WRITE_ONCE(sk->sk_sndbuf, mrc_sk(sk)->sndbuf_init);
	if (!sock || !mrc_writeable(mrc_sk(sk)))
		return;
	clear_bit(SOCK_NOSPACE, &sock->flags);
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_poll(&wq->wait, EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND);
	if (wq && wq->fasync_list && !(sk->sk_shutdown & SEND_SHUTDOWN))
		sock_wake_async(wq, SOCK_WAKE_SPACE, POLL_OUT);
	rcu_read_unlock();
}

void mrc_sock_init(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;

	msk->ooo_queue = RB_ROOT;
	INIT_LIST_HEAD(&msk->accept_queue);
	INIT_LIST_HEAD(&msk->accept_node);
	mrc_timers_init(msk);
	mrc_rtt_init(&msk->rtt, READ_ONCE(msk->mn->cfg.min_rto_us),
		     READ_ONCE(msk->mn->cfg.max_rto_us));
	msk->cc.cwnd = READ_ONCE(msk->mn->cfg.init_cwnd);
	msk->cc.ssthresh = U32_MAX;
	msk->reo_mult = 1;
	msk->mss = 1200;
	/* as tcp_init_sock(): MRC's own initial sizes (net.mrc.wmem/rmem) */
	WRITE_ONCE(sk->sk_sndbuf, READ_ONCE(mrc_wmem[1]));
	WRITE_ONCE(sk->sk_rcvbuf, READ_ONCE(mrc_rmem[1]));
	msk->sndbuf_init = sk->sk_sndbuf;
	msk->rcv_ratio = 128;
	msk->probe_scan_at = jiffies;
	/* a server's child: mrc_ts_offset(); the clock test knob: 0 */
	msk->ts_offset = mrc_test_clock ? 0 : get_random_u32();
	sk_sockets_allocated_inc(sk);
	/* the "sockets" column of /proc/net/protocols, dropped in mrc_destruct() */
	sock_prot_inuse_add(sock_net(sk), sk->sk_prot, 1);
	msk->snd_wnd = U16_MAX;
#if IS_ENABLED(CONFIG_IPV6)
	msk->v6only = READ_ONCE(sock_net(sk)->ipv6.sysctl.bindv6only);
#endif
	msk->user_timeout_ms = READ_ONCE(msk->mn->cfg.user_timeout_ms);
	msk->ev_count = READ_ONCE(msk->mn->cfg.ev_count);
	msk->udp_dport = READ_ONCE(msk->mn->cfg.udp_port);
	msk->stats.version = MRC_INFO_VERSION;
	msk->stats.len = sizeof(struct mrc_info);
	sk->sk_backlog_rcv = mrc_backlog_rcv;
	sk->sk_destruct = mrc_destruct;
	sk->sk_write_space = mrc_write_space;
	sock_set_flag(sk, SOCK_RCU_FREE);
	mrc_set_state(msk, MRC_STATE_CLOSED);
}

void mrc_destruct(struct sock *sk)
{
	struct mrc_sock *msk = mrc_sk(sk);

	__skb_queue_purge(&sk->sk_receive_queue);
	mrc_write_queue_purge(sk);
	mrc_ooo_purge(msk);
	mrc_orphan_del(msk);
	kfree(msk->evs);
	msk->evs = NULL;
	mrc_trace_free(msk);
	mrc_routes_release(msk->ev_routes, msk->ev_cap);
	kfree(msk->ev_routes);
	msk->ev_routes = NULL;
	sk_mem_reclaim_final(sk);
	WARN_ON_ONCE(sk->sk_forward_alloc);
	sk_sockets_allocated_dec(sk);
	sock_prot_inuse_add(sock_net(sk), sk->sk_prot, -1);
}

static int mrc_check_addr(struct socket *sock, struct sockaddr *uaddr, int len)
{
	if (len < (int)sizeof(uaddr->sa_family))
		return -EINVAL;
	if (uaddr->sa_family == AF_INET)
		return len < (int)sizeof(struct sockaddr_in) ? -EINVAL : 0;
	if (uaddr->sa_family == AF_INET6) {
		if (!IS_ENABLED(CONFIG_IPV6))
			return -EAFNOSUPPORT;
		return len < SIN6_LEN_RFC2133 ? -EINVAL : 0;
	}
	return -EAFNOSUPPORT;
}

/*
 * Copies a checked address of @len bytes: an RFC 2133 sockaddr_in6 (24
 * bytes) has no sin6_scope_id, which then reads 0, not what followed it.
 */
static void mrc_copy_addr(union mrc_addr *dst, const struct sockaddr *src, int len)
{
	memset(dst, 0, sizeof(*dst));
	if (src->sa_family == AF_INET)
		memcpy(&dst->v4, src, sizeof(dst->v4));
	else
		memcpy(&dst->v6, src, min_t(int, len, sizeof(dst->v6)));
}

/*
 * An IPv6 socket given a v4-mapped address (::ffff:a.b.c.d) uses IPv4, as
 * TCP's dual-stack sockets do, and reports its addresses mapped.
 * Return: 0, or -ENETUNREACH for an IPV6_V6ONLY socket.
 */
static int mrc_unmap_addr(struct mrc_sock *msk, union mrc_addr *a)
{
	union mrc_addr v4 = { .v4.sin_family = AF_INET };

	if (a->sa.sa_family != AF_INET6 || !ipv6_addr_v4mapped(&a->v6.sin6_addr))
		return 0;
	if (msk->v6only)
		return -ENETUNREACH;
	v4.v4.sin_port = a->v6.sin6_port;
	v4.v4.sin_addr.s_addr = a->v6.sin6_addr.s6_addr32[3];
	*a = v4;
	msk->v4mapped = true;
	return 0;
}

static bool mrc_addr_is_local(struct net *net, const union mrc_addr *a)
{
	if (a->sa.sa_family == AF_INET) {
		if (a->v4.sin_addr.s_addr == htonl(INADDR_ANY))
			return true;
		return inet_addr_type(net, a->v4.sin_addr.s_addr) == RTN_LOCAL;
	}
	if (ipv6_addr_any(&a->v6.sin6_addr))
		return true;
	return ipv6_chk_addr(net, &a->v6.sin6_addr, NULL, 0);
}

/* Binds msk to @addr (port 0: ephemeral).  Socket lock held. */
static int __mrc_bind(struct mrc_sock *msk, const union mrc_addr *addr)
{
	struct sock *sk = &msk->sk;
	int err;

	sock_owned_by_me(sk);
	if (msk->bound || msk->state != MRC_STATE_CLOSED)
		return -EINVAL;
	if (!mrc_addr_is_local(sock_net(sk), addr))
		return -EADDRNOTAVAIL;
	err = mrc_tunnel_get(msk->mn, addr->sa.sa_family);
	/* a dual-stack wildcard takes IPv4 packets too */
	if (!err && addr->sa.sa_family == AF_INET6 && !msk->v6only &&
	    ipv6_addr_any(&addr->v6.sin6_addr))
		err = mrc_tunnel_get(msk->mn, AF_INET);
	if (err)
		return err;
	msk->local = *addr;
	msk->family = addr->sa.sa_family;
	err = mrc_bind_port(msk, ntohs(addr->sa.sa_family == AF_INET ?
				       addr->v4.sin_port : addr->v6.sin6_port),
			    sk->sk_reuse);
	if (err)
		memset(&msk->local, 0, sizeof(msk->local));
	return err;
}

static int mrc_bind(struct socket *sock, struct sockaddr *uaddr, int len)
{
	struct mrc_sock *msk = mrc_sk(sock->sk);
	union mrc_addr addr;
	int err;

	err = mrc_check_addr(sock, uaddr, len);
	if (err)
		return err;
	mrc_copy_addr(&addr, uaddr, len);
	lock_sock(&msk->sk);
	err = msk->bound ? -EINVAL : mrc_unmap_addr(msk, &addr);
	if (!err)
		err = __mrc_bind(msk, &addr);
	release_sock(&msk->sk);
	return err;
}

/**
 * mrc_route_setup() - pick the source address and MSS toward the peer
 * @msk: socket with msk->remote set, msk->local possibly wildcard
 *
 * Return: 0 or the routing errno (ENETUNREACH, EHOSTUNREACH...).
 */
static int mrc_route_setup(struct mrc_sock *msk)
{
	struct net *net = sock_net(&msk->sk);
	unsigned int mtu, overhead;

	if (msk->family == AF_INET) {
		struct flowi4 fl4 = {
			.daddr = msk->remote.v4.sin_addr.s_addr,
			.saddr = msk->local.v4.sin_addr.s_addr,
			.flowi4_proto = IPPROTO_UDP,
			.fl4_dport = htons(msk->udp_dport),
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt))
			return PTR_ERR(rt);
		msk->local.v4.sin_addr.s_addr = fl4.saddr;
		mtu = dst_mtu(&rt->dst);
		overhead = sizeof(struct iphdr);
		ip_rt_put(rt);
	} else {
#if IS_ENABLED(CONFIG_IPV6)
		struct flowi6 fl6 = {
			.daddr = msk->remote.v6.sin6_addr,
			.saddr = msk->local.v6.sin6_addr,
			.flowi6_proto = IPPROTO_UDP,
			.flowi6_oif = msk->remote.v6.sin6_scope_id,
			.fl6_dport = htons(msk->udp_dport),
		};
		struct dst_entry *dst;

		dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		msk->local.v6.sin6_addr = fl6.saddr;
		mtu = dst_mtu(dst);
		overhead = sizeof(struct ipv6hdr);
		dst_release(dst);
#else
		return -EAFNOSUPPORT;
#endif
	}
	overhead += sizeof(struct udphdr) + sizeof(struct mrchdr);
	if (mtu < overhead + 64)
		return -EMSGSIZE;
	msk->mss = min(mtu - overhead, 65000U);
	return 0;
}

/**
 * mrc_conn_start() - common set-up of a new connection (client or child)
 * @msk: socket with local and remote addresses set
 *
 * Return: 0 or a negative errno.
 */
int mrc_conn_start(struct mrc_sock *msk)
{
	int err;

	sock_owned_by_me(&msk->sk);
	err = mrc_route_setup(msk);
	if (err)
		return err;
	err = mrc_init_evs(msk, msk->ev_count, GFP_ATOMIC);
	if (err)
		return err;
	return mrc_hash_conn(msk);
}

static int mrc_wait_state(struct sock *sk, long *timeo, int from)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int err = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (READ_ONCE(mrc_sk(sk)->state) == from) {
		if (!*timeo) {
			err = -EINPROGRESS;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(*timeo);
			break;
		}
		sk_wait_event(sk, timeo, READ_ONCE(mrc_sk(sk)->state) != from, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return err;
}

static int mrc_connect(struct socket *sock, struct sockaddr *uaddr, int len, int flags)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	union mrc_addr addr;
	long timeo;
	int err;

	err = mrc_check_addr(sock, uaddr, len);
	if (err)
		return err;
	mrc_copy_addr(&addr, uaddr, len);
	lock_sock(sk);
	switch (msk->state) {
	case MRC_STATE_SYN_SENT:
		err = (flags & O_NONBLOCK) ? -EALREADY : 0;
		if (err)
			goto out;
		goto wait;
	case MRC_STATE_CLOSED:
		break;
	case MRC_STATE_LISTEN:
		err = -EISCONN;
		goto out;
	case MRC_STATE_DONE:
		/* a failed connect is reported once, through SO_ERROR or here */
		err = sock_error(sk) ?: -EISCONN;
		goto out;
	default:
		err = -EISCONN;
		goto out;
	}
	/* v4-mapped: only before a bind, or on a socket bound v4-mapped */
	if (!msk->bound || msk->v4mapped) {
		err = mrc_unmap_addr(msk, &addr);
		if (err)
			goto out;
	}
	if (msk->bound && msk->family != addr.sa.sa_family) {
		err = -EAFNOSUPPORT;
		goto out;
	}
	if ((addr.sa.sa_family == AF_INET && addr.v4.sin_addr.s_addr == htonl(INADDR_ANY)) ||
	    (addr.sa.sa_family == AF_INET6 && ipv6_addr_any(&addr.v6.sin6_addr)) ||
	    !(addr.sa.sa_family == AF_INET ? addr.v4.sin_port : addr.v6.sin6_port)) {
		err = -EINVAL;
		goto out;
	}
	if (!msk->bound) {
		union mrc_addr any = { .sa.sa_family = addr.sa.sa_family };

		err = __mrc_bind(msk, &any);
		if (err)
			goto out;
	}
	msk->remote = addr;
	err = mrc_conn_start(msk);
	if (err)
		goto out;
	msk->iss = get_random_u32();
	msk->snd_una = msk->iss + 1;
	msk->snd_nxt = msk->iss + 1;
	msk->progress_stamp = jiffies;
	msk->xmit_stamp = jiffies;
	mrc_set_state(msk, MRC_STATE_SYN_SENT);
	sock->state = SS_CONNECTING;
	mrc_send_ctrl(msk, MRC_T_SYN, 0, NULL, 0);
	mrc_arm_rto(msk);
wait:
	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	err = mrc_wait_state(sk, &timeo, MRC_STATE_SYN_SENT);
	if (err)
		goto out;
	if (msk->state == MRC_STATE_DONE || msk->state == MRC_STATE_CLOSED) {
		err = sock_error(sk) ?: -ECONNABORTED;
		sock->state = SS_UNCONNECTED;
		goto out;
	}
	sock->state = SS_CONNECTED;
out:
	release_sock(sk);
	return err;
}

static int mrc_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	int err = 0;

	lock_sock(sk);
	if (sock->state != SS_UNCONNECTED ||
	    (msk->state != MRC_STATE_CLOSED && msk->state != MRC_STATE_LISTEN)) {
		err = -EINVAL;
		goto out;
	}
	if (!msk->bound) {
		/* like TCP: listen() on an unbound socket picks a port */
		union mrc_addr any = { .sa.sa_family = AF_INET6 };

		if (!IS_ENABLED(CONFIG_IPV6))
			any.sa.sa_family = AF_INET;
		err = __mrc_bind(msk, &any);
		if (err)
			goto out;
	}
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	if (msk->state != MRC_STATE_LISTEN)
		err = mrc_listen_port(msk);
out:
	release_sock(sk);
	return err;
}

static int mrc_accept(struct socket *sock, struct socket *newsock, struct proto_accept_arg *arg)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk), *child = NULL;
	long timeo;
	int err = 0;

	lock_sock(sk);
	if (msk->state != MRC_STATE_LISTEN) {
		err = -EINVAL;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, arg->flags & O_NONBLOCK);
	add_wait_queue_exclusive(sk_sleep(sk), &wait);
	while (list_empty(&msk->accept_queue)) {
		if (!timeo) {
			err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			err = sock_intr_errno(timeo);
			break;
		}
		if (msk->state != MRC_STATE_LISTEN) {
			err = -EINVAL;
			break;
		}
		sk_wait_event(sk, &timeo, !list_empty(&msk->accept_queue) ||
			      READ_ONCE(msk->state) != MRC_STATE_LISTEN, &wait);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	if (!err) {
		child = list_first_entry(&msk->accept_queue, struct mrc_sock, accept_node);
		list_del_init(&child->accept_node);
		sk_acceptq_removed(sk);
	}
out:
	release_sock(sk);
	if (err) {
		arg->err = err;
		return err;
	}
	lock_sock(&child->sk);
	child->parent = NULL;
	sock_graft(&child->sk, newsock);
	newsock->ops = sock->ops;
	set_bit(SOCK_CUSTOM_SOCKOPT, &newsock->flags);
	newsock->state = SS_CONNECTED;
	release_sock(&child->sk);
	return 0;
}

static int mrc_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct mrc_sock *msk = mrc_sk(sock->sk);
	union mrc_addr *a;
	int len;

	lock_sock(&msk->sk);
	if (peer) {
		if (!msk->remote.sa.sa_family || msk->state == MRC_STATE_LISTEN ||
		    msk->state == MRC_STATE_SYN_SENT) {
			release_sock(&msk->sk);
			return -ENOTCONN;
		}
		a = &msk->remote;
	} else {
		a = &msk->local;
	}
	if (!a->sa.sa_family) {
		/* unbound: the wildcard of no particular family, like TCP's */
		memset(uaddr, 0, sizeof(struct sockaddr_in));
		uaddr->sa_family = AF_INET;
		len = sizeof(struct sockaddr_in);
	} else if (msk->v4mapped && a->sa.sa_family == AF_INET) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = a->v4.sin_port;
		ipv6_addr_set_v4mapped(a->v4.sin_addr.s_addr, &sin6->sin6_addr);
		len = sizeof(*sin6);
	} else {
		len = a->sa.sa_family == AF_INET ? sizeof(a->v4) : sizeof(a->v6);
		memcpy(uaddr, a, len);
	}
	release_sock(&msk->sk);
	return len;
}

static bool mrc_writeable(struct mrc_sock *msk)
{
	return sk_stream_memory_free(&msk->sk) &&
	       READ_ONCE(msk->sk.sk_wmem_queued) < READ_ONCE(msk->sk.sk_sndbuf) / 2 + 1;
}

static bool mrc_readable(struct mrc_sock *msk)
{
	if (msk->sk.sk_type == SOCK_SEQPACKET)
		return READ_ONCE(msk->rcv_msgs);
	return READ_ONCE(msk->rcv_queued) &&
	       READ_ONCE(msk->rcv_queued) >= (u32)sock_rcvlowat(&msk->sk, 0, INT_MAX);
}

static __poll_t mrc_poll(struct file *file, struct socket *sock, poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	u8 shutdown, state;
	__poll_t mask = 0;

	sock_poll_wait(file, sock, wait);
	state = READ_ONCE(msk->state);
	shutdown = READ_ONCE(sk->sk_shutdown);
	if (state == MRC_STATE_LISTEN)
		return READ_ONCE(sk->sk_ack_backlog) ? EPOLLIN | EPOLLRDNORM : 0;
	if (READ_ONCE(sk->sk_err) || !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;
	if (shutdown == SHUTDOWN_MASK || state == MRC_STATE_DONE)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	if (state == MRC_STATE_CLOSED)
		return mask | EPOLLOUT | EPOLLHUP;
	if (state == MRC_STATE_SYN_SENT)
		return mask;
	if (mrc_readable(msk))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!(shutdown & SEND_SHUTDOWN) && state != MRC_STATE_DONE) {
		if (mrc_writeable(msk)) {
			mask |= EPOLLOUT | EPOLLWRNORM;
		} else {
			sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
			set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
			/* pairs with the barrier in wake-ups after freeing */
			smp_mb__after_atomic();
			if (mrc_writeable(msk))
				mask |= EPOLLOUT | EPOLLWRNORM;
		}
	} else if (state == MRC_STATE_DONE || (shutdown & SEND_SHUTDOWN)) {
		mask |= EPOLLOUT | EPOLLWRNORM;
	}
	return mask;
}

/* Appends a new segment skb for up to @len bytes of @msg.  Socket locked. */
static struct sk_buff *mrc_wq_next(struct sock *sk, struct sk_buff *skb)
{
	return skb_queue_is_last(&sk->sk_write_queue, skb) ? NULL :
	       skb_queue_next(&sk->sk_write_queue, skb);
}

/*
 * Queues a segment.  A high-priority SEQPACKET message goes ahead of unsent
 * bulk messages (PSNs are given at first transmission, so order on the wire
 * follows the queue), behind other urgent ones and never inside a message
 * already partly sent.
 */
static void mrc_queue_segment(struct mrc_sock *msk, struct sk_buff *skb)
{
	struct sock *sk = &msk->sk;
	struct sk_buff *pos = msk->send_head;

	sock_owned_by_me(sk);
	sk_mem_charge(sk, skb->truesize);
	sk_wmem_queued_add(sk, skb->truesize);
	if (MRC_SKB_CB(skb)->prio >= MRC_PRIO_HIGH && sk->sk_type == SOCK_SEQPACKET && pos) {
		if (pos != skb_peek(&sk->sk_write_queue) &&
		    !(MRC_SKB_CB(skb_queue_prev(&sk->sk_write_queue, pos))->flags & MRC_F_EOR)) {
			while (pos && !(MRC_SKB_CB(pos)->flags & MRC_F_EOR))
				pos = mrc_wq_next(sk, pos);
			if (pos)
				pos = mrc_wq_next(sk, pos);
		}
		while (pos && MRC_SKB_CB(pos)->prio >= MRC_PRIO_HIGH)
			pos = mrc_wq_next(sk, pos);
		if (pos) {
			__skb_queue_before(&sk->sk_write_queue, pos, skb);
			if (pos == msk->send_head)
				msk->send_head = skb;
			return;
		}
	}
	__skb_queue_tail(&sk->sk_write_queue, skb);
	if (!msk->send_head)
		msk->send_head = skb;
}

/*
 * Allocates a segment holding the next @len bytes of @msg.  Unless @charged
 * (the caller reserved the memory), the protocol pool must accept it; it is
 * forced only when nothing of ours is queued (an ACK would never come to
 * free memory for us).  Return: the skb, or ERR_PTR(-ENOMEM) when the
 * caller should wait for memory, -ENOBUFS or -EFAULT.
 */
static struct sk_buff *mrc_alloc_segment(struct mrc_sock *msk, struct msghdr *msg, size_t len,
					 u8 flags, u8 prio, bool charged, size_t room)
{
	struct sock *sk = &msk->sk;
	struct sk_buff *skb;

	sock_owned_by_me(&msk->sk);
	skb = alloc_skb(max3(len, room, (size_t)1), sk->sk_allocation);
	if (!skb)
		return ERR_PTR(-ENOBUFS);
	if (!charged && !sk_wmem_schedule(sk, skb->truesize)) {
		if (!skb_queue_empty(&sk->sk_write_queue)) {
			kfree_skb(skb);
			return ERR_PTR(-ENOMEM);
		}
		mrc_count(msk->mn, MRC_C_MEM_FORCED);
	}
	skb_put(skb, len);
	if (len && skb_copy_datagram_from_iter(skb, 0, &msg->msg_iter, len)) {
		kfree_skb(skb);
		return ERR_PTR(-EFAULT);
	}
	memset(MRC_SKB_CB(skb), 0, sizeof(struct mrc_skb_cb));
	MRC_SKB_CB(skb)->flags = flags;
	MRC_SKB_CB(skb)->prio = prio;
	return skb;
}

/**
 * mrc_alloc_frag_segment() - a segment, copied once into a page fragment
 * @msk: connection (socket lock held)
 * @msg: the data
 * @len: bytes of @msg to take (one MSS, or less for a send's last chunk)
 * @prio: its priority
 *
 * As tcp_sendmsg() copies into sk_page_frag(): the data lands in a page
 * fragment with room for its MRC header in front, so that a burst sends the
 * queued bytes by reference (mrc_send_burst()), and a single transmission
 * is a fresh header and a reference to the same page.  Consecutive segments
 * are consecutive in the page, so a burst of 44 takes a few skb frags.
 *
 * Return: the skb; NULL when no page was had (the caller copies into a
 * linear segment instead), ERR_PTR(-ENOMEM) when the caller should wait for
 * memory, -ENOBUFS or -EFAULT.
 */
static struct sk_buff *mrc_alloc_frag_segment(struct mrc_sock *msk, struct msghdr *msg,
					      size_t len, u8 prio)
{
	const unsigned int room = sizeof(struct mrchdr);
	struct sock *sk = &msk->sk;
	struct page_frag *pfrag = sk_page_frag(sk);
	struct sk_buff *skb;

	sock_owned_by_me(sk);
	/* a page frag is at most 32 KiB (a loopback MSS is not): copy those */
	if (room + len > PAGE_SIZE << SKB_FRAG_PAGE_ORDER ||
	    !skb_page_frag_refill(room + len, pfrag, sk->sk_allocation))
		return NULL;
	if (pfrag->size - pfrag->offset < room + len) {
		/*
		 * An order-0 fallback page of an earlier refill, ours alone:
		 * refill would hand it back for ever; try a large one again.
		 */
		put_page(pfrag->page);
		pfrag->page = NULL;
		if (!skb_page_frag_refill(room + len, pfrag, sk->sk_allocation) ||
		    pfrag->size - pfrag->offset < room + len)
			return NULL;
	}
	skb = alloc_skb(0, sk->sk_allocation);
	if (!skb)
		return ERR_PTR(-ENOBUFS);
	if (!sk_wmem_schedule(sk, skb->truesize + room + len)) {
		if (!skb_queue_empty(&sk->sk_write_queue)) {
			kfree_skb(skb);
			return ERR_PTR(-ENOMEM);
		}
		mrc_count(msk->mn, MRC_C_MEM_FORCED);
	}
	if (!copy_from_iter_full(page_address(pfrag->page) + pfrag->offset + room, len,
				 &msg->msg_iter)) {
		kfree_skb(skb);
		return ERR_PTR(-EFAULT);
	}
	get_page(pfrag->page);
	skb_fill_page_desc(skb, 0, pfrag->page, pfrag->offset + room, len);
	pfrag->offset += room + len;
	skb->len = len;
	skb->data_len = len;
	skb->truesize += room + len;
	memset(MRC_SKB_CB(skb), 0, sizeof(struct mrc_skb_cb));
	MRC_SKB_CB(skb)->prio = prio;
	MRC_SKB_CB(skb)->hdr_room = 1;
	return skb;
}

/*
 * The truesize alloc_skb() will give a segment of @room bytes: its head is
 * a kmalloc bucket, often twice @room (16 KiB takes 32 KiB).  The send
 * buffer is checked against this, not @room, since mrc_fill_tail() fills
 * the slack: the queue stays within SO_SNDBUF in bytes too.
 */
static size_t mrc_seg_truesize(size_t room)
{
	return SKB_DATA_ALIGN(sizeof(struct sk_buff)) +
	       kmalloc_size_roundup(SKB_HEAD_ALIGN(max_t(size_t, room, 1)));
}

/*
 * Whether the short last chunk of a send goes into a page fragment too:
 * behind unsent fragment segments it then ends their burst (mrc_burst_fit()
 * keeps a burst to one kind), where a copied one went out alone, a third
 * send for a 64 KiB message.
 */
static bool mrc_tail_joins_frags(struct mrc_sock *msk)
{
	struct sk_buff *tail = skb_peek_tail(&msk->sk.sk_write_queue);

	return msk->sk.sk_type == SOCK_STREAM && msk->send_head && tail &&
	       MRC_SKB_CB(tail)->hdr_room;
}

/*
 * Whether a send's short last chunk, a new segment, waits behind unsent ones (a
 * closed peer window, a full congestion window): later sends then fill
 * it to a full segment in place (mrc_fill_tail()) if it has the room.
 * Sized to the chunk, it kept its kmalloc slack only, and small messages
 * behind a closed window went out as 384-byte packets, each a full
 * segment of the peer's window and a truesize of its buffer (an NCCL
 * ladder's 4-byte messages: 202 of 5794 packets).  Copied, with room:
 * a page fragment could grow in place too, but sk_page_frag() is the
 * task's, and another socket's send in between would leave one tiny
 * segment per message, each pinning a page.  Behind fragment segments a
 * send's last chunk joins them instead (mrc_tail_joins_frags()).
 */
static bool mrc_tail_waits(struct mrc_sock *msk, size_t chunk)
{
	return msk->sk.sk_type == SOCK_STREAM && msk->send_head && chunk < msk->mss &&
	       !mrc_tail_joins_frags(msk);
}

/*
 * Appends up to @len bytes of @msg to unsent page fragment segment @tail,
 * in place, when its bytes end where the socket's page fragment goes on
 * (tcp_sendmsg()'s skb_can_coalesce()): its header room stays in front.
 * Return: bytes appended (0: none), or -EFAULT.
 */
static int mrc_fill_frag_tail(struct mrc_sock *msk, struct sk_buff *tail, struct msghdr *msg,
			      size_t len)
{
	struct sock *sk = &msk->sk;
	struct page_frag *pfrag = sk_page_frag(sk);
	int i = skb_shinfo(tail)->nr_frags;
	int n;

	if (!skb_can_coalesce(tail, i, pfrag->page, pfrag->offset))
		return 0;
	n = min_t(size_t, len, min_t(int, msk->mss - tail->len, pfrag->size - pfrag->offset));
	/* within SO_SNDBUF, as a new segment waits for (mrc_send_wait()) */
	if (n <= 0 || READ_ONCE(sk->sk_wmem_queued) + n > READ_ONCE(sk->sk_sndbuf) ||
	    !sk_wmem_schedule(sk, n))
		return 0;
	if (!copy_from_iter_full(page_address(pfrag->page) + pfrag->offset, n, &msg->msg_iter))
		return -EFAULT;
	pfrag->offset += n;
	skb_frag_size_add(&skb_shinfo(tail)->frags[i - 1], n);
	tail->len += n;
	tail->data_len += n;
	tail->truesize += n;
	sk_wmem_queued_add(sk, n);
	sk_mem_charge(sk, n);
	return n;
}

/**
 * mrc_fill_tail() - append to a stream's unsent partial last segment
 * @msk: connection (socket lock held)
 * @msg: the data
 * @len: bytes of @msg left
 * @prio: this send's priority (a segment carries one)
 *
 * As tcp_sendmsg() fills its tail skb: small writes behind a closed window,
 * a cork or MSG_MORE become full segments instead of one packet each.  A
 * copied segment's room was charged with it (truesize does not change); a
 * page fragment's grows in place (mrc_fill_frag_tail()).
 *
 * Return: bytes appended (0: start a new segment), or -EFAULT.
 */
static int mrc_fill_tail(struct mrc_sock *msk, struct msghdr *msg, size_t len, u8 prio)
{
	struct sock *sk = &msk->sk;
	struct sk_buff *tail = skb_peek_tail(&sk->sk_write_queue);
	int n, off;

	sock_owned_by_me(sk);
	/* a stream's queue is in PSN order: with a send_head, the tail is unsent */
	if (sk->sk_type != SOCK_STREAM || !msk->send_head || !tail ||
	    MRC_SKB_CB(tail)->prio != prio || (MRC_SKB_CB(tail)->flags & MRC_F_FIN) ||
	    tail->len >= msk->mss)
		return 0;
	if (MRC_SKB_CB(tail)->hdr_room)
		return mrc_fill_frag_tail(msk, tail, msg, len);
	if (skb_is_nonlinear(tail))
		return 0;
	n = min_t(size_t, len, min_t(int, msk->mss - tail->len, skb_tailroom(tail)));
	if (n <= 0)
		return 0;
	off = tail->len;
	skb_put(tail, n);
	if (skb_copy_datagram_from_iter(tail, off, &msg->msg_iter, n)) {
		skb_trim(tail, off);
		return -EFAULT;
	}
	return n;
}

/* A socket's priority: MRC_PRIORITY, else SO_PRIORITY (capped at 7) */
u8 mrc_sock_prio(const struct mrc_sock *msk)
{
	return msk->priority ?: min_t(u32, READ_ONCE(msk->sk.sk_priority), 7);
}

/* Priority of this send: cmsg (SEQPACKET), MRC_PRIORITY, else SO_PRIORITY. */
static int mrc_send_prio(struct mrc_sock *msk, struct msghdr *msg)
{
	int prio = mrc_sock_prio(msk);
	struct cmsghdr *cmsg;

	if (!msg->msg_controllen)
		return prio;
	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_MRC)
			continue;
		if (cmsg->cmsg_type != MRC_PRIORITY ||
		    cmsg->cmsg_len != CMSG_LEN(sizeof(int)) ||
		    msk->sk.sk_type != SOCK_SEQPACKET)
			return -EINVAL;
		prio = *(int *)CMSG_DATA(cmsg);
		if (prio < 0 || prio > 7)
			return -EINVAL;
	}
	return prio;
}

static bool mrc_can_send(struct mrc_sock *msk)
{
	return msk->state == MRC_STATE_ESTABLISHED || msk->state == MRC_STATE_CLOSE_WAIT;
}

static int mrc_send_wait(struct mrc_sock *msk, long *timeo, size_t need)
{
	struct sock *sk = &msk->sk;
	int err;

	while (sk->sk_wmem_queued && sk->sk_wmem_queued + need > READ_ONCE(sk->sk_sndbuf)) {
		mrc_push(msk);
		err = sk_stream_wait_memory(sk, timeo);
		if (err)
			return err;
		if (!mrc_can_send(msk))
			return -EPIPE;
	}
	return 0;
}

/* The protocol pool refused: wait, as TCP does, for memory to come back. */
static int mrc_wait_memory(struct mrc_sock *msk, long *timeo)
{
	struct sock *sk = &msk->sk;
	int err;

	mrc_push(msk);
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	err = sk_stream_wait_memory(sk, timeo);
	if (!err && !mrc_can_send(msk))
		err = -EPIPE;
	return err;
}

/*
 * Queues a whole SEQPACKET message or nothing: its memory is reserved first
 * (generously: twice the truesize estimate; the charges draw on it), its
 * segments built aside, then queued together.
 */
static int mrc_send_message(struct mrc_sock *msk, struct msghdr *msg, size_t len, long *timeo,
			    u8 prio)
{
	size_t need = len + DIV_ROUND_UP(len + 1, msk->mss) * SKB_TRUESIZE(0);
	struct sock *sk = &msk->sk;
	struct sk_buff_head segs;
	struct sk_buff *skb;
	size_t copied = 0, chunk;
	int err;

	sock_owned_by_me(&msk->sk);
	/*
	 * Readers take whole messages only: one larger than the peer can
	 * buffer (the largest window it advertised, with nothing queued)
	 * could never be read, and its window would stay closed for ever.
	 */
	if (need > (size_t)READ_ONCE(sk->sk_sndbuf) ||
	    (msk->snd_wnd_max && len > msk->snd_wnd_max))
		return -EMSGSIZE;
	for (;;) {
		err = mrc_send_wait(msk, timeo, need);
		if (err)
			return err;
		if (sk_wmem_schedule(sk, 2 * need))
			break;
		if (skb_queue_empty(&sk->sk_write_queue)) {
			mrc_count(msk->mn, MRC_C_MEM_FORCED);
			break;
		}
		err = mrc_wait_memory(msk, timeo);
		if (err)
			return err;
	}
	__skb_queue_head_init(&segs);
	do {
		chunk = min_t(size_t, len - copied, msk->mss);
		skb = mrc_alloc_segment(msk, msg, chunk, copied + chunk == len ? MRC_F_EOR : 0,
					prio, true, chunk);
		if (IS_ERR(skb)) {
			__skb_queue_purge(&segs);
			return PTR_ERR(skb);
		}
		__skb_queue_tail(&segs, skb);
		copied += chunk;
	} while (copied < len);
	while ((skb = __skb_dequeue(&segs)))
		mrc_queue_segment(msk, skb);
	msk->stats.bytes_sent += len;
	mrc_push(msk);
	return 0;
}

static int mrc_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	bool seqpacket = sk->sk_type == SOCK_SEQPACKET;
	size_t copied = 0, chunk, room;
	u32 unpushed = 0, burst;
	long timeo;
	int err = 0, prio;

	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR | MSG_MORE |
			       MSG_SPLICE_PAGES | MSG_CMSG_COMPAT | MSG_WAITALL))
		return -EOPNOTSUPP;
	/* a stream ignores the address, as TCP (sockperf passes one) */
	if (msg->msg_name && seqpacket && READ_ONCE(msk->state) != MRC_STATE_CLOSED)
		return -EISCONN;

	lock_sock(sk);
	timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	if (msk->state == MRC_STATE_SYN_SENT) {
		err = mrc_wait_state(sk, &timeo, MRC_STATE_SYN_SENT);
		if (err == -EINPROGRESS)
			err = -EAGAIN;
		if (err)
			goto out_err;
	}
	if (sk->sk_err) {
		err = sock_error(sk);
		goto out_err;
	}
	if ((sk->sk_shutdown & SEND_SHUTDOWN) || !mrc_can_send(msk)) {
		err = msk->state == MRC_STATE_CLOSED ? -ENOTCONN : -EPIPE;
		if (err == -ENOTCONN && sk->sk_type == SOCK_STREAM)
			err = -EPIPE;
		goto out_err;
	}
	prio = mrc_send_prio(msk, msg);
	if (prio < 0) {
		err = prio;
		goto out_err;
	}

	if (seqpacket) {
		err = mrc_send_message(msk, msg, len, &timeo, prio);
		if (err)
			goto out_err;
		release_sock(sk);
		return len;
	}

	msk->more = !!(msg->msg_flags & MSG_MORE);
	/* asked again after each push, not per segment (0.5 % of a guest) */
	burst = mrc_burst_len(msk);
	while (copied < len) {
		struct sk_buff *skb;
		int filled;
		bool frag;

		filled = mrc_fill_tail(msk, msg, len - copied, prio);
		if (filled < 0) {
			err = filled;
			break;
		}
		if (filled) {
			copied += filled;
			msk->stats.bytes_sent += filled;
			continue;
		}
		/* segments small enough that a small send buffer holds several */
		chunk = min_t(size_t, len - copied, msk->mss);
		chunk = min_t(size_t, chunk, max_t(int, READ_ONCE(sk->sk_sndbuf) / 4 -
						   SKB_TRUESIZE(0), 256));
		/* a held or waiting tail gets room to grow to a full segment */
		room = msk->cork || msk->more ||
		       (chunk == len - copied && mrc_tail_waits(msk, chunk)) ?
		       max_t(size_t, chunk, msk->mss) : chunk;
		frag = room == chunk && (chunk == msk->mss ||
					 (chunk == len - copied && mrc_tail_joins_frags(msk)));
		err = mrc_send_wait(msk, &timeo, frag ? mrc_frag_seg_truesize(chunk) :
							mrc_seg_truesize(room));
		if (err)
			break;
		skb = frag ? mrc_alloc_frag_segment(msk, msg, chunk, prio) : NULL;
		if (!skb)
			skb = mrc_alloc_segment(msk, msg, chunk, 0, prio, false, room);
		if (skb == ERR_PTR(-ENOMEM)) {
			err = mrc_wait_memory(msk, &timeo);
			if (err)
				break;
			continue;
		}
		if (IS_ERR(skb)) {
			err = PTR_ERR(skb);
			break;
		}
		mrc_queue_segment(msk, skb);
		copied += chunk;
		msk->stats.bytes_sent += chunk;
		/* a burst's worth at a time (TCP pushes per size goal) */
		if (++unpushed >= burst) {
			unpushed = 0;
			mrc_push(msk);
			burst = mrc_burst_len(msk);
		}
	}
	mrc_push(msk);
	if (copied) {
		release_sock(sk);
		return copied;
	}
out_err:
	if (err == -EPIPE && !(msg->msg_flags & MSG_NOSIGNAL))
		send_sig(SIGPIPE, current, 0);
	release_sock(sk);
	return err;
}

static int mrc_rcvq_bytes(struct sock *sk)
{
	struct sk_buff *skb;
	int n = 0;

	skb_queue_walk(&sk->sk_receive_queue, skb)
		n += skb->len - MRC_SKB_CB(skb)->offset;
	return n;
}

static int mrc_recv_wait(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	sk_set_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	sk_wait_event(sk, timeo, !skb_queue_empty(&sk->sk_receive_queue) || READ_ONCE(sk->sk_err) ||
		      (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN), &wait);
	sk_clear_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/*
 * Frees an skb the reader took all of (the read ends with
 * mrc_window_update()): consumed, not dropped, for skb:kfree_skb tracing.
 */
static void mrc_consume(struct mrc_sock *msk, struct sk_buff *skb)
{
	sock_owned_by_me(&msk->sk);
	__skb_unlink(skb, &msk->sk.sk_receive_queue);
	consume_skb(skb);
}

static int mrc_recvmsg(struct socket *sock, struct msghdr *msg, size_t len, int flags)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	bool seqpacket = sk->sk_type == SOCK_SEQPACKET;
	bool peek = flags & MSG_PEEK;
	int copied = 0, target, err = 0;
	long timeo;

	if (flags & ~(MSG_DONTWAIT | MSG_PEEK | MSG_WAITALL | MSG_TRUNC | MSG_NOSIGNAL |
		      MSG_CMSG_COMPAT | MSG_ERRQUEUE))
		return -EOPNOTSUPP;
	if (flags & MSG_ERRQUEUE)
		return -EAGAIN;

	lock_sock(sk);
	if (msk->state == MRC_STATE_LISTEN || msk->state == MRC_STATE_CLOSED) {
		err = -ENOTCONN;
		goto out;
	}
	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	if (seqpacket)
		target = 1;

	while (copied < (int)len || (seqpacket && !copied)) {
		struct sk_buff *skb, *tmp;
		bool eor = false;

		if (seqpacket && !msk->rcv_msgs)
			goto wait;

		/* a SEQPACKET reader sees only whole messages */
		skb_queue_walk_safe(&sk->sk_receive_queue, skb, tmp) {
			struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
			int avail = skb->len - cb->offset;
			int n = min_t(int, avail, (int)len - copied);

			if (n > 0) {
				if (skb_copy_datagram_msg(skb, cb->offset, msg, n)) {
					err = -EFAULT;
					goto out;
				}
				copied += n;
			}
			if (seqpacket) {
				if (n < avail) {
					msg->msg_flags |= MSG_TRUNC;
					if (flags & MSG_TRUNC)
						copied += avail - max(n, 0);
				}
				eor = cb->flags & MRC_F_EOR;
				if (!peek) {
					WRITE_ONCE(msk->rcv_queued, msk->rcv_queued - avail);
					mrc_consume(msk, skb);
					if (eor)
						WRITE_ONCE(msk->rcv_msgs, msk->rcv_msgs - 1);
				}
				if (eor) {
					msg->msg_flags |= MSG_EOR;
					break;
				}
				continue;
			}
			if (!peek) {
				cb->offset += n;
				WRITE_ONCE(msk->rcv_queued, msk->rcv_queued - n);
				if (cb->offset >= skb->len)
					mrc_consume(msk, skb);
			}
			if (copied >= (int)len)
				break;
		}
		if (seqpacket && (eor || copied))
			break;
		if (copied >= target)
			break;
		if (copied && peek)
			break;
wait:
		if (sk->sk_err) {
			if (!copied)
				err = sock_error(sk);
			break;
		}
		if (sk->sk_shutdown & RCV_SHUTDOWN)
			break;
		if (msk->state == MRC_STATE_DONE)
			break;
		if (!timeo) {
			if (!copied)
				err = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			if (!copied)
				err = sock_intr_errno(timeo);
			break;
		}
		mrc_recv_wait(sk, &timeo);
	}
	if (!peek) {
		msk->rcv_starved = 0;
		if (copied > 0)
			mrc_rcv_space_adjust(msk, copied);
		mrc_window_update(msk);
	}
out:
	release_sock(sk);
	return err ? err : copied;
}

static void mrc_close_listener(struct mrc_sock *msk);

static int mrc_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	int err = 0;

	how++;	/* SHUT_RD 0 -> RCV_SHUTDOWN 1, ... */
	if (how <= 0 || how > SHUTDOWN_MASK)
		return -EINVAL;
	lock_sock(sk);
	if (msk->state == MRC_STATE_LISTEN && (how & RCV_SHUTDOWN)) {
		/*
		 * As TCP's disconnect: the queued children are reset (nothing
		 * could accept them any more) and accept() wakes with EINVAL.
		 */
		mrc_close_listener(msk);
		sk->sk_state_change(sk);
		goto out;
	}
	if (msk->state == MRC_STATE_CLOSED || msk->state == MRC_STATE_LISTEN ||
	    msk->state == MRC_STATE_SYN_SENT) {
		err = -ENOTCONN;
		goto out;
	}
	if ((how & SEND_SHUTDOWN) && !(sk->sk_shutdown & SEND_SHUTDOWN) &&
	    mrc_can_send(msk))
		mrc_queue_fin(msk);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
	sk->sk_state_change(sk);
out:
	release_sock(sk);
	return err;
}

/* Aborts a connection: RST to the peer, error ECONNRESET locally. */
static void mrc_abort(struct mrc_sock *msk)
{
	sock_owned_by_me(&msk->sk);
	if (msk->remote_id && msk->state != MRC_STATE_DONE)
		mrc_send_ctrl(msk, MRC_T_RST, 0, NULL, 0);
	mrc_done(msk, 0);
}

/**
 * mrc_close_listener() - stop listening: reset every child not yet accepted
 * @msk: the listener, owned by the caller (lock_sock)
 *
 * Called from close() and from shutdown(SHUT_RD); the port stays bound
 * (release unbinds it).  A queued child may be owned at the same time by a
 * netlink reader, and softirq takes its slock: it is locked as a socket of
 * its own (lock_sock_nested, one level below the listener), never with a
 * bare spin_lock from process context.
 */
static void mrc_close_listener(struct mrc_sock *msk)
{
	struct mrc_sock *child, *tmp;

	sock_owned_by_me(&msk->sk);
	mrc_set_state(msk, MRC_STATE_CLOSED);
	list_for_each_entry_safe(child, tmp, &msk->accept_queue, accept_node) {
		struct sock *csk = &child->sk;

		list_del_init(&child->accept_node);
		sk_acceptq_removed(&msk->sk);
		lock_sock_nested(csk, SINGLE_DEPTH_NESTING);
		child->parent = NULL;
		sock_set_flag(csk, SOCK_DEAD);
		mrc_abort(child);
		release_sock(csk);
		sock_put(csk);	/* the accept queue's reference */
	}
}

static int mrc_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk;

	if (!sk)
		return 0;
	msk = mrc_sk(sk);
	lock_sock(sk);
	switch (msk->state) {
	case MRC_STATE_LISTEN:
		mrc_close_listener(msk);
		break;
	case MRC_STATE_SYN_SENT:
		mrc_abort(msk);
		break;
	case MRC_STATE_ESTABLISHED:
	case MRC_STATE_CLOSE_WAIT:
	case MRC_STATE_FIN_WAIT:
	case MRC_STATE_CLOSING:
		/* unread data or SO_LINGER 0 abort; else finish in order */
		if (!skb_queue_empty(&sk->sk_receive_queue) ||
		    (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime) || !mrc_orphan_add(msk)) {
			mrc_abort(msk);
			break;
		}
		msk->orphan_fin = 1;
		/* nobody waits for an orphan: bound how long it keeps trying */
		msk->user_timeout_ms = min_not_zero(msk->user_timeout_ms,
						    (u32)MRC_ORPHAN_TIMEOUT_MS);
		msk->progress_stamp = jiffies;
		if (!(sk->sk_shutdown & SEND_SHUTDOWN))
			mrc_queue_fin(msk);
		else if (skb_queue_empty(&sk->sk_write_queue) && msk->state == MRC_STATE_FIN_WAIT)
			mrc_orphan_fin_wait(msk);
		break;
	default:
		break;
	}
	sock_orphan(sk);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	if (msk->state == MRC_STATE_DONE || msk->state == MRC_STATE_CLOSED) {
		mrc_timers_stop(msk);
		mrc_unhash_conn(msk);
	}
	mrc_unbind_port(msk);
	release_sock(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/*
 * MRC_EV_COUNT on a live connection: a fresh set of EVs, shared among its
 * paths as mrc_paths_build() shared the first set.  mrc_init_evs() draws
 * them all on path 0: a multi-plane connection would send on one plane
 * until losses retired EVs there.
 */
static int mrc_evs_redraw(struct mrc_sock *msk, unsigned int count)
{
	int err;

	sock_owned_by_me(&msk->sk);
	err = mrc_init_evs(msk, count, GFP_KERNEL);
	if (err || msk->npaths < 2)
		return err;
	mrc_evs_spread(msk->evs, msk->ev_cap, msk->npaths, jiffies);
	mrc_evs_changed(msk);
	mrc_probe_scan_soon(msk, jiffies);
	/* the moved EVs carry data once a probe of theirs is answered */
	if (mrc_sending_state(msk))
		mrc_probe_retired(msk);
	return 0;
}

static int mrc_setsockopt(struct socket *sock, int level, int optname, sockptr_t optval,
			  unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct mrc_sock *msk = mrc_sk(sk);
	int val, err = 0;

	if (level == SOL_SOCKET && optname != SO_REUSEPORT)
		return sock_setsockopt(sock, level, optname, optval, optlen);
	if (level == SOL_TCP)
		return mrc_tcp_setsockopt(sk, optname, optval, optlen);
	if (level == SOL_SOCKET || (level == SOL_IPV6 && optname == IPV6_V6ONLY)) {
		if (optlen < sizeof(int))
			return -EINVAL;
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		lock_sock(sk);
		if (level == SOL_SOCKET)
			/* SO_REUSEPORT: the core refuses it to families not inet */
			sk->sk_reuseport = !!val;
		else if (msk->bound)
			err = -EINVAL;	/* as IPv6: V6ONLY only before bind */
		else
			msk->v6only = !!val;
		release_sock(sk);
		return err;
	}
	if (level != SOL_MRC)
		return -ENOPROTOOPT;
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	lock_sock(sk);
	switch (optname) {
	case MRC_NODELAY:
		/* as TCP_NODELAY: setting it sends what waits, a corked tail too */
		msk->nodelay = !!val;
		if (val)
			__mrc_push(msk, true);
		break;
	case MRC_USER_TIMEOUT:
		if (val < 0)
			err = -EINVAL;
		else
			msk->user_timeout_ms = val;
		break;
	case MRC_EV_COUNT:
		if (val < 1 || val > MRC_MAX_EVS)
			err = -EINVAL;
		else if (msk->evs)
			err = mrc_evs_redraw(msk, val);
		else
			msk->ev_count = val;
		break;
	case MRC_PRIORITY:
		if (val < 0 || val > 7)
			err = -EINVAL;
		else
			msk->priority = val;
		break;
	case MRC_BURST_MAX:
		if (val < 0 || val > MRC_BURST_MAX_SEGS)
			err = -EINVAL;
		else
			msk->burst_max = val;
		break;
	default:
		err = -ENOPROTOOPT;
	}
	release_sock(sk);
	return err;
}

/* The ABI is the same on every architecture: no hole, 64-bit counters aligned. */
static_assert(offsetof(struct mrc_info, ev_count) == 6);
static_assert(offsetof(struct mrc_info, reserved0) == offsetof(struct mrc_info, mss) + 4);
static_assert(offsetof(struct mrc_info, bytes_sent) == 56);
static_assert(sizeof(struct mrc_info) == 128);

static void mrc_fill_info(struct mrc_sock *msk, struct mrc_info *info)
{
	/* the counters, then the snapshot; no byte of @info is left unset */
	memcpy(info, &msk->stats, sizeof(*info));
	info->reserved0 = 0;
	info->state = msk->state;
	info->ev_count = msk->ev_count;
	info->priority = msk->priority;
	info->local_id = msk->local_id;
	info->remote_id = msk->remote_id;
	info->srtt_us = msk->rtt.srtt_us;
	info->rttvar_us = msk->rtt.rttvar_us;
	info->rto_us = mrc_rtt_rto(&msk->rtt, msk->backoff);
	info->min_rtt_us = msk->rtt.min_rtt_us;
	info->cwnd = msk->cc.cwnd;
	info->in_flight = msk->in_flight;
	info->snd_wnd = msk->snd_wnd;
	info->mss = msk->mss;
	info->rcv_wnd = mrc_rcv_wnd(msk);
}

/* MRC_PATH_INFO's entries are read as arrays: their layout never changes. */
static_assert(sizeof(struct mrc_path_info) == 36);
static_assert(offsetof(struct mrc_path_info_ext, path) == 36);
static_assert(offsetof(struct mrc_path_info_ext, local_addr) == 40);
static_assert(offsetof(struct mrc_path_info_ext, remote_addr) == 56);
static_assert(sizeof(struct mrc_path_info_ext) == 72);

/* An address in the 16 bytes of mrc_path_info_ext, IPv4 first. */
static void mrc_path_addr(u8 *out, const union mrc_addr *a)
{
	memset(out, 0, 16);
	if (a->sa.sa_family == AF_INET6)
		memcpy(out, &a->v6.sin6_addr, 16);
	else if (a->sa.sa_family == AF_INET)
		memcpy(out, &a->v4.sin_addr, 4);
}

/**
 * mrc_get_path_info() - copy the per-EV table for MRC_PATH_INFO[_EXT]
 * @msk: the connection, socket lock held, its EVs allocated
 * @optval: the user's buffer
 * @optlen: the user's length, set to the bytes written
 * @len: the buffer's size
 * @ext: struct mrc_path_info_ext entries (each EV's path), else mrc_path_info
 *
 * Active and retired EVs, as many whole entries as fit.  Copied under the
 * socket lock (it may be held across a fault) so that the table and the
 * paths it points at are one snapshot.
 *
 * Return: 0 or -EFAULT.
 */
static int mrc_get_path_info(struct mrc_sock *msk, char __user *optval, int __user *optlen,
			     int len, bool ext)
{
	int size = ext ? sizeof(struct mrc_path_info_ext) : sizeof(struct mrc_path_info);
	struct mrc_path_info_ext pe;
	int i, n = 0;

	for (i = 0; i < msk->ev_cap && (n + 1) * size <= len; i++) {
		const struct mrc_ev *ev = &msk->evs[i];

		if (ev->state == MRC_EV_FREE)
			continue;
		memset(&pe, 0, sizeof(pe));
		pe.info = (struct mrc_path_info){
			.port = ev->port, .state = ev->state, .losses = ev->losses,
			.weight = ev->weight, .srtt_us = ev->srtt_us,
			.min_rtt_us = ev->min_rtt_us, .in_flight = ev->in_flight,
			.sent = ev->sent, .delivered = ev->delivered, .lost = ev->lost,
			.ce = ev->ce,
		};
		pe.path = ev->path;
		/* an index past npaths (none built yet) reports no addresses */
		if (ext && ev->path < min_t(u8, msk->npaths, MRC_MAX_PATHS)) {
			const struct mrc_path *p = &msk->paths[ev->path];

			pe.family = p->local.sa.sa_family;
			mrc_path_addr(pe.local_addr, &p->local);
			mrc_path_addr(pe.remote_addr, &p->remote);
		}
		if (copy_to_user(optval + n * size, &pe, size))
			return -EFAULT;
		n++;
	}
	return put_user(n * size, optlen);
}

static int mrc_getsockopt(struct socket *sock, int level, int optname, char __user *optval,
			  int __user *optlen)
{
	struct mrc_sock *msk = mrc_sk(sock->sk);
	struct mrc_info info;
	int len, val;

	if (level == SOL_TCP)
		return mrc_tcp_getsockopt(sock->sk, optname, optval, optlen);
	if (level != SOL_MRC && !(level == SOL_IPV6 && optname == IPV6_V6ONLY))
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	lock_sock(&msk->sk);
	switch (level == SOL_IPV6 ? -1 : optname) {
	case -1:
		val = msk->v6only;	/* IPV6_V6ONLY */
		break;
	case MRC_INFO:
		mrc_fill_info(msk, &info);
		release_sock(&msk->sk);
		len = min_t(int, len, sizeof(info));
		if (put_user(len, optlen) || copy_to_user(optval, &info, len))
			return -EFAULT;
		return 0;
	case MRC_PATH_INFO:
	case MRC_PATH_INFO_EXT:
		val = msk->evs ? mrc_get_path_info(msk, optval, optlen, len,
						   optname == MRC_PATH_INFO_EXT) : -ENOTCONN;
		release_sock(&msk->sk);
		return val;
	case MRC_NODELAY:
		val = msk->nodelay;
		break;
	case MRC_USER_TIMEOUT:
		val = msk->user_timeout_ms;
		break;
	case MRC_EV_COUNT:
		val = msk->ev_count;
		break;
	case MRC_PRIORITY:
		val = msk->priority;
		break;
	case MRC_BURST_MAX:
		val = msk->burst_max;
		break;
	default:
		release_sock(&msk->sk);
		return -ENOPROTOOPT;
	}
	release_sock(&msk->sk);
	if (len < (int)sizeof(int))
		return -EINVAL;
	len = sizeof(int);
	if (put_user(len, optlen) || copy_to_user(optval, &val, len))
		return -EFAULT;
	return 0;
}

static int mrc_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sk_buff *skb;
	int n = 0;

	switch (cmd) {
	case SIOCINQ:
		lock_sock(sk);
		if (mrc_sk(sk)->state == MRC_STATE_LISTEN) {
			release_sock(sk);
			return -EINVAL;
		}
		n = mrc_rcvq_bytes(sk);
		release_sock(sk);
		break;
	case SIOCOUTQ:
		lock_sock(sk);
		if (mrc_sk(sk)->state == MRC_STATE_LISTEN) {
			release_sock(sk);
			return -EINVAL;
		}
		skb_queue_walk(&sk->sk_write_queue, skb)
			n += skb->len;
		release_sock(sk);
		break;
	default:
		return -ENOIOCTLCMD;
	}
	return put_user(n, (int __user *)arg);
}

const struct proto_ops mrc_stream_ops = {
	.family		= PF_MRC,	/* informational: see mrc_family_ops */
	.owner		= THIS_MODULE,
	.release	= mrc_release,
	.bind		= mrc_bind,
	.connect	= mrc_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= mrc_accept,
	.getname	= mrc_getname,
	.poll		= mrc_poll,
	.ioctl		= mrc_ioctl,
	.listen		= mrc_listen,
	.shutdown	= mrc_shutdown,
	.setsockopt	= mrc_setsockopt,
	.getsockopt	= mrc_getsockopt,
	.sendmsg	= mrc_sendmsg,
	.recvmsg	= mrc_recvmsg,
	.mmap		= sock_no_mmap,
};
