// SPDX-License-Identifier: GPL-2.0-only
/*
 * Transmit side: packet construction, the UDP tunnel transmit with the EV
 * (chosen in ev_sock.c) as source port, pushing new data within the
 * congestion and flow windows, retransmission, ACKs and control packets.
 */
#include <linux/random.h>
#include <linux/skbuff_ref.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "autotune.h"
#include "protocol.h"
#include "trace.h"
#include "sack.h"
#include "ev.h"

#define MRC_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + sizeof(struct udphdr) + \
			 sizeof(struct mrchdr))

/*
 * Free receive buffer in the sender's terms: it counts every packet in
 * flight as a full MSS, and a packet here costs its skb's truesize, so the
 * window scales the free buffer by MSS/truesize as seen on recent packets.
 * Closed while the protocol memory pool refuses us, until the reader frees
 * some or a packet is accepted again.
 */
u32 mrc_rcv_wnd(struct mrc_sock *msk)
{
	int space = READ_ONCE(msk->sk.sk_rcvbuf) - atomic_read(&msk->sk.sk_rmem_alloc);

	u32 wnd;

	if (msk->rcv_starved)
		return 0;
	wnd = space > 0 ? (u64)space * msk->rcv_ratio >> 8 : 0;
	/* an in-order segment into an empty queue is always taken */
	if (skb_queue_empty(&msk->sk.sk_receive_queue) && RB_EMPTY_ROOT(&msk->ooo_queue))
		wnd = max(wnd, msk->mss);
	/* never more PSNs than the reorder window keeps */
	return min_t(u64, wnd, (u64)(MRC_RCV_WINDOW_PKTS - 1) * msk->mss);
}

/**
 * mrc_fill_header() - header of a packet of this connection
 * @msk: connection (socket lock held)
 * @h: header to fill
 * @type: packet type
 * @flags: MRC_F_* flags
 *
 * Every packet carries the current cumulative and selective ACK, so sending
 * anything also acknowledges.
 */
void mrc_fill_header(struct mrc_sock *msk, struct mrchdr *h, u8 type, u8 flags)
{
	const union mrc_addr *l = &msk->local, *r = &msk->remote;
	u32 wnd;

	sock_owned_by_me(&msk->sk);
	memset(h, 0, sizeof(*h));
	h->version = MRC_VERSION;
	h->type = type;
	h->flags = flags;
	h->priority = mrc_sock_prio(msk);
	h->sport = l->sa.sa_family == AF_INET6 ? l->v6.sin6_port : l->v4.sin_port;
	h->dport = r->sa.sa_family == AF_INET6 ? r->v6.sin6_port : r->v4.sin_port;
	h->src_id = htonl(msk->local_id);
	h->dst_id = htonl(msk->remote_id);
	h->psn = htonl(msk->snd_nxt);
	h->ack_psn = htonl(msk->rcv_nxt);
	h->sack = cpu_to_be64(mrc_ooo_sack(&msk->ooo_queue, msk->rcv_nxt));
	h->tsval = htonl(mrc_tsval(msk, mrc_clock_us()));
	h->tsecr = htonl(msk->last_tsval);
	wnd = mrc_rcv_wnd(msk);
	h->rcv_wnd = htonl(wnd);
	/* a probe rides a path thought dead: the peer may never see its window */
	msk->adv_wnd = flags & MRC_F_PROBE ? min(msk->adv_wnd, wnd) : wnd;
	/* the sender may fill this window whatever we advertise later */
	if (msk->mss && mrc_psn_after(msk->rcv_nxt + DIV_ROUND_UP(wnd, msk->mss),
				      msk->rcv_promised))
		msk->rcv_promised = msk->rcv_nxt + DIV_ROUND_UP(wnd, msk->mss);
	h->ack_ev = htons(msk->last_ev);
	if (msk->ce_pending)
		h->flags |= MRC_F_CE;
	/* a probe rides a path thought dead: it acknowledges, but owes stay */
	if (flags & MRC_F_PROBE)
		return;
	msk->ce_pending = false;
	msk->ack_pending = 0;
	msk->rx_ack_due = 0;
}

/*
 * The acknowledgment state mrc_fill_header() hands to a packet: kept
 * (mrc_ack_state_save()) and put back when the packet could not be sent
 * (mrc_ack_state_restore()), so the ACK is still owed and the window
 * update rule (mrc_window_update()) still knows the window the peer has.
 */
struct mrc_ack_state {
	u32	ack_pending;
	u32	adv_wnd;
	bool	ce_pending;
	bool	rx_ack_due;
};

static void mrc_ack_state_save(const struct mrc_sock *msk, struct mrc_ack_state *a)
{
	a->ack_pending = msk->ack_pending;
	a->adv_wnd = msk->adv_wnd;
	a->ce_pending = msk->ce_pending;
	a->rx_ack_due = msk->rx_ack_due;
}

static void mrc_ack_state_restore(struct mrc_sock *msk, const struct mrc_ack_state *a)
{
	msk->ack_pending = a->ack_pending;
	msk->adv_wnd = a->adv_wnd;
	msk->ce_pending = a->ce_pending;
	msk->rx_ack_due = a->rx_ack_due;
}

/*
 * The route of an EV slot, as WireGuard caches one per peer and TCP one per
 * socket: valid while dst_check() passes (a route change, a device going
 * down, a PMTU update obsolete it) and the slot still has the port and
 * path it was looked up for.  Guarded by the socket lock, as every
 * transmission of the connection is.  Return: the route with a reference,
 * or NULL.
 */
static struct dst_entry *mrc_route_get(struct mrc_route *r, u16 port, u8 path)
{
	struct dst_entry *dst = r->dst;

	if (!dst)
		return NULL;
	if (r->port == port && r->path == path && dst_check(dst, r->cookie)) {
		dst_hold(dst);
		return dst;
	}
	r->dst = NULL;
	dst_release(dst);
	return NULL;
}

static void mrc_route_set(struct mrc_route *r, struct dst_entry *dst, u32 cookie, u16 port,
			  u8 path)
{
	dst_release(r->dst);
	dst_hold(dst);
	r->dst = dst;
	r->cookie = cookie;
	r->port = port;
	r->path = path;
}

/**
 * mrc_routes_release() - drop a connection's cached routes
 * @routes: @n slots, or NULL
 * @n: slots
 */
void mrc_routes_release(struct mrc_route *routes, u16 n)
{
	u16 i;

	for (i = 0; routes && i < n; i++) {
		dst_release(routes[i].dst);
		routes[i].dst = NULL;
	}
}

/**
 * mrc_output() - send one MRC packet through the namespace's tunnel socket
 * @mn: namespace state
 * @family: AF_INET or AF_INET6
 * @saddr: source address (port unused)
 * @daddr: destination address (port unused)
 * @skb: packet starting at the MRC header, with MRC_HEADROOM headroom
 * @ev: UDP source port: the entropy value that picks the path
 * @dport: UDP destination port (the peer's tunnel port)
 * @tos: TOS / traffic class of the outer header: DSCP and ECN bits
 * @route: the EV slot's cached route (socket lock held), or NULL
 * @path: the path @saddr and @daddr are, for @route
 * @ttl: the outer TTL / hop limit, 0: the route's (a path trace's probes)
 *
 * The route lookup carries @ev as the flow's source port, so that multipath
 * routes on this host spread EVs as the fabric does.  Consumes @skb.
 * Return: 0 or a negative errno.
 */
static int mrc_output(struct mrc_net *mn, int family, const union mrc_addr *saddr,
		      const union mrc_addr *daddr, struct sk_buff *skb, u16 ev, u16 dport,
		      u8 tos, struct mrc_route *route, u8 path, u8 ttl)
{
	unsigned int segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	struct dst_entry *dst = route ? mrc_route_get(route, ev, path) : NULL;
	struct socket *sock;
	int err = 0;

	rcu_read_lock_bh();
	sock = mrc_tunnel_sock(mn, family);
	if (unlikely(!sock)) {
		err = -ENONET;
		goto drop;
	}
	/* ignore_df: a segment queued before a smaller path MTU was learned */
	if (family == AF_INET) {
		struct flowi4 fl4 = {
			.daddr = daddr->v4.sin_addr.s_addr,
			.saddr = saddr->v4.sin_addr.s_addr,
			.flowi4_proto = IPPROTO_UDP,
			.fl4_sport = htons(ev),
			.fl4_dport = htons(dport),
		};
		struct rtable *rt;

		if (!dst) {
			rt = ip_route_output_key(mn->net, &fl4);
			if (IS_ERR(rt)) {
				err = PTR_ERR(rt);
				goto drop;
			}
			dst = &rt->dst;
			/* a source the lookup chose is not the path's: not cached */
			if (route && fl4.saddr == saddr->v4.sin_addr.s_addr)
				mrc_route_set(route, dst, 0, ev, path);
		}
		udp_tunnel_xmit_skb(dst_rtable(dst), sock->sk, skb, fl4.saddr, fl4.daddr, tos,
				    ttl ?: ip4_dst_hoplimit(dst), skb->ignore_df ? 0 : htons(IP_DF),
				    htons(ev), htons(dport), false, false);
	} else {
#if IS_ENABLED(CONFIG_IPV6)
		struct flowi6 fl6 = {
			.daddr = daddr->v6.sin6_addr,
			.saddr = saddr->v6.sin6_addr,
			.flowi6_proto = IPPROTO_UDP,
			.flowi6_oif = daddr->v6.sin6_scope_id,
			.fl6_sport = htons(ev),
			.fl6_dport = htons(dport),
		};

		if (!dst) {
			dst = ipv6_stub->ipv6_dst_lookup_flow(mn->net, sock->sk, &fl6, NULL);
			if (IS_ERR(dst)) {
				err = PTR_ERR(dst);
				dst = NULL;
				goto drop;
			}
			if (route && ipv6_addr_equal(&fl6.saddr, &saddr->v6.sin6_addr))
				mrc_route_set(route, dst, rt6_get_cookie(dst_rt6_info(dst)), ev,
					      path);
		}
		udp_tunnel6_xmit_skb(dst, sock->sk, skb, NULL, &fl6.saddr, &fl6.daddr, tos,
				     ttl ?: ip6_dst_hoplimit(dst), 0, htons(ev), htons(dport),
				     false);
#else
		err = -EAFNOSUPPORT;
		goto drop;
#endif
	}
	rcu_read_unlock_bh();
	mrc_count_add(mn, MRC_C_TX_PACKETS, segs);
	return 0;
drop:
	rcu_read_unlock_bh();
	dst_release(dst);
	mrc_count(mn, MRC_C_TX_ERRORS);
	kfree_skb(skb);
	return err;
}

static struct sk_buff *mrc_alloc_packet(unsigned int payload)
{
	struct sk_buff *skb = alloc_skb(MRC_HEADROOM + payload, GFP_ATOMIC);

	if (skb)
		skb_reserve(skb, MRC_HEADROOM);
	return skb;
}

/*
 * The outer TOS / traffic class: ECN bits, and the namespace's urgent DSCP on
 * urgent packets (the priority in their header), so that a fabric configured
 * for that class queues them ahead of bulk traffic on every hop.
 */
static u8 mrc_outer_tos(const struct mrc_sock *msk, const struct sk_buff *skb, bool ect)
{
	const struct mrchdr *h = (const struct mrchdr *)skb->data;
	u8 tos = ect ? INET_ECN_ECT_0 : 0;

	if (h->priority >= MRC_PRIO_HIGH)
		tos |= READ_ONCE(msk->mn->cfg.urgent_dscp) << 2;
	return tos;
}

/* Sends @skb on EV @ev: the addresses of its path, its port, @tos and @ttl outside. */
static int mrc_send_on_ev(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_ev *ev,
			  u8 tos, u8 ttl)
{
	const struct mrc_path *path = &msk->paths[ev->path];

	struct mrc_route *route = msk->ev_routes ? &msk->ev_routes[ev - msk->evs] : NULL;

	sock_owned_by_me(&msk->sk);
	if (!ev->path || ev->path >= msk->npaths)
		return mrc_output(msk->mn, msk->family, &msk->local, &msk->remote, skb,
				  ev->port, msk->udp_dport, tos, route, 0, ttl);
	return mrc_output(msk->mn, path->local.sa.sa_family, &path->local, &path->remote, skb,
			  ev->port, msk->udp_dport, tos, route, ev->path, ttl);
}

/* Sends the packet @skb (data at its MRC header) on EV @ev. */
static int mrc_send_packet(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_ev *ev,
			   bool ect)
{
	msk->stats.packets_sent++;
	return mrc_send_on_ev(msk, skb, ev, mrc_outer_tos(msk, skb, ect), 0);
}

static struct sk_buff *mrc_build_data(struct mrc_sock *msk, struct sk_buff *seg)
{
	struct mrc_skb_cb *cb = MRC_SKB_CB(seg);
	struct sk_buff *skb;
	struct mrchdr *h;

	if (skb_is_nonlinear(seg)) {
		/* a page fragment's segment (mrc_alloc_frag_segment()): by reference */
		skb = mrc_alloc_packet(0);
		if (!skb)
			return NULL;
		skb_shinfo(skb)->frags[0] = skb_shinfo(seg)->frags[0];
		__skb_frag_ref(&skb_shinfo(skb)->frags[0]);
		skb_shinfo(skb)->nr_frags = 1;
		skb->len = seg->len;
		skb->data_len = seg->len;
		skb->truesize += seg->len;
	} else {
		skb = mrc_alloc_packet(seg->len);
		if (!skb)
			return NULL;
		skb_copy_bits(seg, 0, skb_put(skb, seg->len), seg->len);
	}
	h = skb_push(skb, sizeof(*h));
	mrc_fill_header(msk, h, MRC_T_DATA, cb->flags & (MRC_F_FIN | MRC_F_EOR));
	h->psn = htonl(cb->psn);
	h->len = htons(seg->len);
	h->priority = cb->prio;
	if (cb->sent)
		h->flags |= MRC_F_ACKNOW;
	/*
	 * Larger than the path MTU learned since it was queued (mrc_pmtu_lower()):
	 * fragmented on the way rather than lost on every path forever.
	 */
	skb->ignore_df = seg->len > msk->mss;
	return skb;
}

/*
 * Urgent data goes out on more than one EV when the namespace asks for
 * redundancy: the copies take distinct paths, the receiver drops the
 * duplicates, and a lossy path no longer delays the message.
 */
static void mrc_send_copies(struct mrc_sock *msk, struct sk_buff *seg, int first_idx)
{
	unsigned int copies = READ_ONCE(msk->mn->cfg.redundancy), i;
	int avoid = first_idx;

	for (i = 1; i < copies && i < msk->ev_count; i++) {
		int idx = mrc_pick_ev(msk, avoid);
		struct sk_buff *skb;

		if (idx == first_idx)
			break;
		skb = mrc_build_data(msk, seg);
		if (!skb)
			break;
		mrc_ev_sent(&msk->evs[idx]);
		mrc_count(msk->mn, MRC_C_TX_REDUNDANT);
		mrc_send_packet(msk, skb, &msk->evs[idx], READ_ONCE(msk->mn->cfg.ecn));
		avoid = idx;
	}
}

/* A transmission of the segment of @cb on EV slot @ev_idx, at @now_us. */
static void mrc_mark_sent(struct mrc_sock *msk, struct mrc_skb_cb *cb, int ev_idx, u64 now_us)
{
	struct mrc_ev *ev = &msk->evs[ev_idx];

	sock_owned_by_me(&msk->sk);
	cb->sent = 1;
	cb->probed = 0;
	cb->sent_us = now_us;
	cb->ev_idx = ev_idx;
	cb->ev_port = ev->port;
	/* saturates: a count that wrapped to 1 would stop the loss walk early */
	if (cb->tx_count < U8_MAX)
		cb->tx_count++;
	mrc_ev_sent(ev);
	ev->in_flight++;
}

/* send_head went out for the first time, with the next PSN. */
static void mrc_send_head_sent(struct mrc_sock *msk)
{
	struct sk_buff_head *q = &msk->sk.sk_write_queue;
	struct sk_buff *skb = msk->send_head;

	sock_owned_by_me(&msk->sk);
	/* from idle: the user timeout counts from now (mrc_user_deadline()) */
	if (msk->snd_una == msk->snd_nxt)
		msk->xmit_stamp = jiffies;
	msk->snd_nxt++;
	msk->in_flight++;
	msk->send_head = skb_queue_is_last(q, skb) ? NULL : skb_queue_next(q, skb);
}

/**
 * mrc_xmit() - (re)transmit one queued segment on an entropy value
 * @msk: connection (socket lock held)
 * @seg: segment from the write queue; stays queued until acknowledged
 * @ev_idx: EV slot to send it on
 *
 * Return: 0 or a negative errno; on error the segment stays queued as it
 * was (its EV and transmission count unchanged).
 */
int mrc_xmit(struct mrc_sock *msk, struct sk_buff *seg, int ev_idx)
{
	struct mrc_skb_cb *cb = MRC_SKB_CB(seg), old = *cb;
	struct mrc_ev *ev = &msk->evs[ev_idx];
	struct mrc_ack_state ack_state;
	struct sk_buff *skb;
	int err;

	sock_owned_by_me(&msk->sk);
	mrc_ack_state_save(msk, &ack_state);
	skb = mrc_build_data(msk, seg);
	if (!skb)
		return -ENOBUFS;
	mrc_mark_sent(msk, cb, ev_idx, mrc_clock_us());
	err = mrc_send_packet(msk, skb, ev, READ_ONCE(msk->mn->cfg.ecn));
	if (err) {
		/*
		 * nothing left (no route, no tunnel): as if never tried, but an
		 * untried EV stays tried (its route may fail again)
		 */
		ev->sent--;
		ev->in_flight--;
		*cb = old;
		mrc_ack_state_restore(msk, &ack_state);
		return err;
	}
	if (cb->prio >= MRC_PRIO_HIGH)
		mrc_send_copies(msk, seg, ev_idx);
	return 0;
}

/**
 * mrc_send_new() - first transmission of the segment at send_head
 * @msk: connection (socket lock held)
 * @ev_idx: EV slot
 *
 * The segment gets its PSN now, so urgent segments queued ahead of bulk ones
 * also go ahead of them in PSN order.
 * Return: 0 or a negative errno (nothing changes then).
 */
int mrc_send_new(struct mrc_sock *msk, int ev_idx)
{
	sock_owned_by_me(&msk->sk);
	MRC_SKB_CB(msk->send_head)->psn = msk->snd_nxt;
	if (mrc_xmit(msk, msk->send_head, ev_idx))
		return -ENOBUFS;
	mrc_send_head_sent(msk);
	return 0;
}

/*
 * The most segments one burst may hold: the namespace's (or socket's)
 * burst_max, within what one 64 KiB IP packet holds; 1 when spraying
 * per packet.
 */
static u32 mrc_burst_cap(const struct mrc_sock *msk)
{
	u32 max = msk->burst_max ?: READ_ONCE(msk->mn->cfg.burst_max);

	if (max <= 1 || !msk->mss)
		return 1;
	return min_t(u32, max, (IP_MAX_MTU - sizeof(struct ipv6hdr) - sizeof(struct udphdr)) /
			       (sizeof(struct mrchdr) + msk->mss));
}

/**
 * mrc_burst_len() - how many new segments go back to back on one EV
 * @msk: connection (socket lock held)
 *
 * By mrc_ev_burst_len(), within the namespace's burst_max and what one
 * 64 KiB IP packet holds.
 *
 * Return: 1 (spray every packet) .. MRC_BURST_MAX_SEGS.
 */
u32 mrc_burst_len(const struct mrc_sock *msk)
{
	u32 max = mrc_burst_cap(msk);

	if (max <= 1)
		return 1;
	return mrc_ev_burst_len(msk->cc.cwnd, msk->ev_count, msk->evs_unproven, max);
}

/*
 * How many segments from send_head may go as one burst: new, bulk, full
 * size but the last, within both windows and not a held tail.
 */
static u32 mrc_burst_fit(struct mrc_sock *msk, bool flush)
{
	struct sk_buff_head *q = &msk->sk.sk_write_queue;
	u32 max = mrc_burst_len(msk), n = 0;
	u32 ahead = msk->snd_nxt - msk->snd_una;
	struct sk_buff *seg = msk->send_head;

	if (msk->cc.cwnd <= msk->in_flight)
		return 0;
	max = min(max, msk->cc.cwnd - msk->in_flight);
	while (seg && n < max) {
		const struct mrc_skb_cb *cb = MRC_SKB_CB(seg);

		/* all by reference (mrc_send_burst_frags()) or all copied */
		if (cb->prio >= MRC_PRIO_HIGH || seg->len > msk->mss ||
		    cb->hdr_room != MRC_SKB_CB(msk->send_head)->hdr_room ||
		    (!cb->hdr_room && skb_headlen(seg) != seg->len))
			break;
		if ((u64)(ahead + n) * msk->mss + seg->len > msk->snd_wnd)
			break;
		if (!flush && mrc_tail_held(msk, seg))
			break;
		n++;
		/* GSO: every segment but the last of the same size */
		if (seg->len < msk->mss || skb_queue_is_last(q, seg))
			break;
		seg = skb_queue_next(q, seg);
	}
	return n;
}

/*
 * The header of the @i-th segment of a burst, @seg: a first transmission
 * from send_head gets the next PSNs, a resend its own and ACKNOW, as a
 * single resend has (mrc_build_data()).
 */
static void mrc_burst_header(const struct mrc_sock *msk, struct mrchdr *h,
			     const struct mrchdr *h0, const struct sk_buff *seg, u32 i,
			     bool resend)
{
	const struct mrc_skb_cb *cb = MRC_SKB_CB(seg);

	*h = *h0;
	h->flags |= cb->flags & (MRC_F_FIN | MRC_F_EOR);
	if (resend)
		h->flags |= MRC_F_ACKNOW;
	h->priority = cb->prio;
	h->psn = htonl(resend ? cb->psn : msk->snd_nxt + i);
	h->len = htons(seg->len);
}

/*
 * A burst's payload copied: @n segments from @first that were not queued
 * in page fragments (small sends filled up, a socket without a page), or
 * a resend's (@resend), whose header room a first transmission used.  A
 * fragment's segment is its first frag, whole (mrc_alloc_frag_segment()).
 */
static struct sk_buff *mrc_burst_copied(struct mrc_sock *msk, const struct mrchdr *h0,
					struct sk_buff *first, u32 n, bool resend)
{
	unsigned int off = 0, total = 0;
	struct sk_buff *seg, *skb;
	struct mrchdr h;
	int err;
	u32 i;

	for (i = 0, seg = first; i < n; i++, seg = seg->next)
		total += sizeof(struct mrchdr) + seg->len;
	skb = alloc_skb_with_frags(MRC_HEADROOM, total, PAGE_ALLOC_COSTLY_ORDER, &err,
				   GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, MRC_HEADROOM);
	skb->data_len = total;
	skb->len = total;
	/* n segments from first exist: ->next is not followed past the last */
	for (i = 0, seg = first; i < n; i++, seg = seg->next) {
		const void *data = skb_is_nonlinear(seg) ?
				   skb_frag_address(&skb_shinfo(seg)->frags[0]) : seg->data;

		mrc_burst_header(msk, &h, h0, seg, i, resend);
		if (skb_store_bits(skb, off, &h, sizeof(h)) ||
		    skb_store_bits(skb, off + sizeof(h), data, seg->len)) {
			kfree_skb(skb);
			return NULL;
		}
		off += sizeof(h) + seg->len;
	}
	return skb;
}

/*
 * A burst's payload by reference to the queued pages: each segment's
 * header goes into the room before its bytes (mrc_alloc_frag_segment();
 * unused until this first transmission, so nothing in flight reads it),
 * and segments that follow each other in a page share one skb frag.
 * Stops early when MAX_SKB_FRAGS would not hold the next one; at least 2
 * fit, as every frag holds a whole segment.  Sets *@n to what went in.
 */
static struct sk_buff *mrc_burst_by_ref(struct mrc_sock *msk, const struct mrchdr *h0, u32 *n)
{
	struct sk_buff *seg = msk->send_head, *skb;
	struct skb_shared_info *shi;
	struct mrchdr h;
	u32 i;

	skb = mrc_alloc_packet(0);
	if (!skb)
		return NULL;
	shi = skb_shinfo(skb);
	for (i = 0; i < *n; i++, seg = seg->next) {
		const skb_frag_t *from = &skb_shinfo(seg)->frags[0];
		unsigned int off = skb_frag_off(from) - sizeof(h);
		unsigned int size = sizeof(h) + seg->len;
		struct page *page = skb_frag_page(from);
		skb_frag_t *last = shi->nr_frags ? &shi->frags[shi->nr_frags - 1] : NULL;

		if (!last || skb_frag_page(last) != page ||
		    skb_frag_off(last) + skb_frag_size(last) != off) {
			if (shi->nr_frags == MAX_SKB_FRAGS)
				break;
			get_page(page);
			skb_fill_page_desc_noacc(skb, shi->nr_frags, page, off, 0);
			last = &shi->frags[shi->nr_frags - 1];
		}
		mrc_burst_header(msk, &h, h0, seg, i, false);
		memcpy(page_address(page) + off, &h, sizeof(h));
		skb_frag_size_add(last, size);
		skb->len += size;
		skb->data_len += size;
		skb->truesize += size;
	}
	*n = i;
	return skb;
}

/*
 * Sends @skb, @n segments of header + MSS, on @ev as one UDP GSO skb that
 * the stack cuts.  Return: 0 or a negative errno (@skb is consumed).
 */
static int mrc_burst_xmit(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_ev *ev,
			  u32 n)
{
	int err;

	/* udp_send_skb() with UDP_SEGMENT sets the same */
	skb_shinfo(skb)->gso_size = sizeof(struct mrchdr) + msk->mss;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = n;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb) - sizeof(struct udphdr);
	skb->csum_offset = offsetof(struct udphdr, check);
	err = mrc_send_on_ev(msk, skb, ev, READ_ONCE(msk->mn->cfg.ecn) ? INET_ECN_ECT_0 : 0, 0);
	if (err)
		return err;
	mrc_count(msk->mn, MRC_C_TX_BURSTS);
	msk->stats.packets_sent += n;
	return 0;
}

/**
 * mrc_send_burst() - first transmission of @n segments from send_head
 * @msk: connection (socket lock held)
 * @ev_idx: EV slot they all go on
 * @n: segments, from mrc_burst_fit(), at least 2
 *
 * One UDP GSO skb whose payload is [MRC header | data] per segment, with
 * gso_size = header + MSS, as QUIC and Homa send: the stack and every hop
 * on the way handle one skb, and the segments are cut (by the NIC, or by
 * software GSO at the last device that cannot carry it) into packets that
 * each parse on their own.  One EV keeps them in order on one path, so the
 * same-EV loss rule holds inside a burst.
 *
 * Return: 0 or a negative errno (nothing changes then).
 */
static int mrc_send_burst(struct mrc_sock *msk, int ev_idx, u32 n)
{
	struct mrc_ev *ev = &msk->evs[ev_idx];
	struct mrc_ack_state ack_state;
	struct sk_buff *skb;
	struct mrchdr h0;
	u64 now;
	u32 i;
	int err;

	sock_owned_by_me(&msk->sk);
	/* the ACK state the header takes: still owed if the burst fails */
	mrc_ack_state_save(msk, &ack_state);
	/* one ACK state for the whole burst: it goes out at one moment */
	mrc_fill_header(msk, &h0, MRC_T_DATA, 0);
	/* sent when stamped, as mrc_xmit() marks it: not after the copies */
	now = mrc_clock_us();
	if (MRC_SKB_CB(msk->send_head)->hdr_room)
		skb = mrc_burst_by_ref(msk, &h0, &n);
	else
		skb = mrc_burst_copied(msk, &h0, msk->send_head, n, false);
	if (!skb) {
		err = -ENOBUFS;
		goto unsent;
	}
	err = mrc_burst_xmit(msk, skb, ev, n);
	if (err)
		goto unsent;
	for (i = 0; i < n; i++) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(msk->send_head);

		cb->psn = msk->snd_nxt;
		/* its room now holds a header that is in flight */
		cb->hdr_room = 0;
		mrc_mark_sent(msk, cb, ev_idx, now);
		mrc_send_head_sent(msk);
	}
	return 0;
unsent:
	mrc_ack_state_restore(msk, &ack_state);
	return err;
}

/* Segment @cb, last sent on EV port @old_port, went out again: traced, counted. */
static void mrc_count_resend(struct mrc_sock *msk, const struct mrc_skb_cb *cb, u16 old_port)
{
	trace_mrc_retransmit(msk->local_id, cb->psn, old_port, cb->ev_port);
	msk->stats.retransmits++;
	mrc_count(msk->mn, MRC_C_RETRANSMITS);
}

/* Lost segment @cb, last sent on EV port @old_port, went out again. */
static void mrc_resent(struct mrc_sock *msk, struct mrc_skb_cb *cb, u16 old_port)
{
	sock_owned_by_me(&msk->sk);
	mrc_count_resend(msk, cb, old_port);
	cb->lost = 0;
	msk->in_flight++;
}

/*
 * How many lost segments from @skb on go back as one burst: consecutive in
 * the queue, lost, bulk, full size but the last, within the window and the
 * burst cap (1 when spraying per packet).  At least 1.
 */
static u32 mrc_resend_fit(struct mrc_sock *msk, struct sk_buff *skb)
{
	struct sk_buff_head *q = &msk->sk.sk_write_queue;
	u32 max = min(mrc_burst_cap(msk), msk->cc.cwnd - msk->in_flight), n = 0;

	while (n < max) {
		const struct mrc_skb_cb *cb = MRC_SKB_CB(skb);

		if (skb == msk->send_head || !cb->lost || cb->sacked ||
		    cb->prio >= MRC_PRIO_HIGH || skb->len > msk->mss)
			break;
		n++;
		if (skb->len < msk->mss || skb_queue_is_last(q, skb))
			break;
		skb = skb_queue_next(q, skb);
	}
	return max(n, 1U);
}

/*
 * mrc_resend_burst() - resend @n lost segments from @first on one EV, as
 * one GSO skb of copies (mrc_send_burst()).  A dead plane's half of the
 * window resent a packet at a time cost the stack one skb each: under
 * emulation 230 resends took 50 ms to leave, and the receiver's hole
 * waited on the last of them (planes.sh, tracepoints).  The EV is the one
 * chosen for the first segment (mrc_pick_retransmit_ev()); a run is most
 * often one lost burst, all from one EV.  Return: 0 or a negative errno
 * (nothing changes then).
 */
static int mrc_resend_burst(struct mrc_sock *msk, struct sk_buff *first, u32 n)
{
	int ev_idx = mrc_pick_retransmit_ev(msk, MRC_SKB_CB(first));
	struct mrc_ack_state ack_state;
	struct sk_buff *skb, *seg;
	struct mrchdr h0;
	u64 now;
	u32 i;
	int err;

	mrc_ack_state_save(msk, &ack_state);
	mrc_fill_header(msk, &h0, MRC_T_DATA, 0);
	/*
	 * Sent when stamped: a send time taken after the copies and the send
	 * (where softirqs may run the peer) made an ACK one min RTT after the
	 * stamp look too early for this resend (mrc_ev_delivery_known()).
	 */
	now = mrc_clock_us();
	skb = mrc_burst_copied(msk, &h0, first, n, true);
	if (!skb) {
		err = -ENOBUFS;
		goto unsent;
	}
	err = mrc_burst_xmit(msk, skb, &msk->evs[ev_idx], n);
	if (err)
		goto unsent;
	for (i = 0, seg = first; i < n; i++, seg = seg->next) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(seg);
		u16 old_port = cb->ev_port;

		mrc_mark_sent(msk, cb, ev_idx, now);
		mrc_resent(msk, cb, old_port);
	}
	return 0;
unsent:
	mrc_ack_state_restore(msk, &ack_state);
	return err;
}

/*
 * Resends segments marked lost, on another EV, within the window: runs of
 * consecutive ones as bursts (mrc_resend_burst()), others one by one.
 */
void mrc_retransmit_lost(struct mrc_sock *msk)
{
	struct sk_buff_head *q = &msk->sk.sk_write_queue;
	struct sk_buff *skb = skb_peek(q);

	sock_owned_by_me(&msk->sk);
	while (skb && skb != msk->send_head && msk->in_flight < msk->cc.cwnd) {
		struct mrc_skb_cb *cb = MRC_SKB_CB(skb);
		u16 old_port = cb->ev_port;
		u32 n = 1;

		if (cb->lost && !cb->sacked) {
			n = mrc_resend_fit(msk, skb);
			/* alone, or no memory for a burst's copies: by itself */
			if (n == 1 || mrc_resend_burst(msk, skb, n)) {
				n = 1;
				if (mrc_xmit(msk, skb, mrc_pick_retransmit_ev(msk, cb)))
					break;
				mrc_resent(msk, cb, old_port);
			}
		}
		/* the n segments resent (or the one passed) are all queued */
		while (n-- && skb)
			skb = skb_queue_is_last(q, skb) ? NULL : skb_queue_next(q, skb);
	}
}

/**
 * mrc_tail_held() - whether @skb, unsent, waits for more data to fill it
 * @msk: connection (socket lock held)
 * @skb: a segment of the write queue
 *
 * TCP_CORK and MSG_MORE hold a stream's partial last segment until more
 * data fills it, the cork comes off, or MRC_CORK_CEILING passes with
 * nothing else in flight; sendmsg appends to it meanwhile.
 *
 * Return: true if mrc_push() must not send @skb yet.
 */
bool mrc_tail_held(struct mrc_sock *msk, const struct sk_buff *skb)
{
	struct sock *sk = &msk->sk;

	return (msk->cork || msk->more) && sk->sk_type == SOCK_STREAM &&
	       skb->len < msk->mss && skb_queue_is_last(&sk->sk_write_queue, skb) &&
	       !(MRC_SKB_CB(skb)->flags & MRC_F_FIN);
}

/**
 * __mrc_push() - send what the congestion and peer windows allow
 * @msk: connection (socket lock held)
 * @flush: send a held partial last segment too (mrc_tail_held())
 *
 * Lost segments first, then new ones.  With nothing in flight and the peer's
 * window closed, the RTO timer doubles as the window probe timer.
 */
void __mrc_push(struct mrc_sock *msk, bool flush)
{
	bool idle = msk->snd_una == msk->snd_nxt;
	u32 nxt = msk->snd_nxt;
	struct sk_buff *skb;
	u32 n;

	sock_owned_by_me(&msk->sk);
	if (!mrc_sending_state(msk))
		return;
	mrc_probe_retired(msk);
	mrc_retransmit_lost(msk);
	while ((skb = msk->send_head)) {
		u64 ahead = (u64)(msk->snd_nxt - msk->snd_una) * msk->mss + skb->len;

		/*
		 * The window is a promise of buffer: never pass it (a receiver
		 * with an empty queue always offers a segment; a closed window
		 * is probed from the RTO timer).
		 */
		if (msk->in_flight >= msk->cc.cwnd || ahead > msk->snd_wnd)
			break;
		if (!flush && mrc_tail_held(msk, skb))
			break;
		n = mrc_burst_fit(msk, flush);
		if (n > 1 ? mrc_send_burst(msk, mrc_pick_ev(msk, -1), n) :
			    mrc_send_new(msk, mrc_pick_ev(msk, -1)))
			break;
	}
	/*
	 * From idle, the pending timer was a cork ceiling or a window probe,
	 * not the RTO of what just went out.
	 */
	if (!skb_queue_empty(&msk->sk.sk_write_queue) &&
	    (!timer_pending(&msk->rto_timer) || (idle && msk->snd_una != msk->snd_nxt)))
		mrc_arm_rto(msk);
	else if (msk->snd_nxt != nxt)
		/* new data restarts the probe's wait (RFC 8985 7.2) */
		mrc_arm_loss_probe(msk);
}

/**
 * mrc_loss_probe_wanted() - may the flight's tail be probed (RFC 8985 7)?
 * @msk: connection (socket lock held)
 *
 * When a flight's last packets are lost, nothing sent after them can show
 * it, and only the RTO would (at least 10 ms beyond twice the slowest
 * path's RTT); a request or an answer of one packet is always such a tail.
 * So with everything queued sent and in flight, no RTO, no RACK deadline
 * and no probe yet, the probe timeout (mrc_pto_us()) resends the newest
 * segment.  Never while the window holds data back: then later packets
 * follow and the loss rules see the holes.
 *
 * Return: true when a probe may be armed or sent now.
 */
bool mrc_loss_probe_wanted(const struct mrc_sock *msk)
{
	return mrc_sending_state(msk) && msk->snd_una != msk->snd_nxt && !msk->send_head &&
	       msk->in_flight && !msk->backoff && !msk->probe_out && !msk->rack_at_us &&
	       !msk->rto_verdict_due && msk->rtt.srtt_us;
}

/**
 * mrc_send_loss_probe() - the probe timeout expired: resend the newest segment
 * @msk: connection (socket lock held: the timer's, or its owner's in release_cb)
 *
 * On another EV than its last, so that the probe does not follow a lost
 * packet onto a lossy or dead path.  Nothing is marked lost and the window
 * stays: if the original arrived, the probe is a duplicate the peer drops;
 * if it did not, the probe's ACK repairs the loss and mrc_seg_delivered()
 * counts it (LossProbeRecovered) without a window cut, as a RACK loss with
 * no later delivery on its EV is none (mrc_ev_loss_is_congestion()).
 */
void mrc_send_loss_probe(struct mrc_sock *msk)
{
	struct sk_buff *skb = skb_peek_tail(&msk->sk.sk_write_queue);
	struct mrc_skb_cb *cb;
	struct mrc_ev *old;
	u16 old_port;
	u32 echo;

	sock_owned_by_me(&msk->sk);
	if (!skb || !mrc_loss_probe_wanted(msk))
		return;
	cb = MRC_SKB_CB(skb);
	if (!cb->sent || cb->sacked || cb->lost)
		return;
	old = mrc_ev_of(msk, cb);
	old_port = cb->ev_port;
	/* the probe's header takes its tsval between this and cb->sent_us */
	echo = mrc_tsval(msk, mrc_clock_us());
	if (mrc_xmit(msk, skb, mrc_pick_retransmit_ev(msk, cb)))
		return;
	/* the segment is in flight once, now on the probe's EV */
	if (old && old->in_flight)
		old->in_flight--;
	cb->probed = 1;
	cb->probe_echo = echo;
	msk->probe_out = 1;
	msk->probe_high = msk->snd_nxt;
	mrc_count_resend(msk, cb, old_port);
	mrc_count(msk->mn, MRC_C_LOSS_PROBES);
	mrc_arm_rto(msk);
}

/* Control packet of this connection: SYN, HSACK, ACK, RST. */
void mrc_send_ctrl(struct mrc_sock *msk, u8 type, u8 flags, const void *payload, u16 plen)
{
	struct sk_buff *skb = mrc_alloc_packet(plen);
	struct mrchdr *h;
	int idx;

	sock_owned_by_me(&msk->sk);
	if (!skb)
		return;
	if (plen)
		skb_put_data(skb, payload, plen);
	h = skb_push(skb, sizeof(*h));
	mrc_fill_header(msk, h, type, flags);
	h->len = htons(plen);
	if (type == MRC_T_SYN || type == MRC_T_HSACK)
		h->psn = htonl(msk->iss);
	if (type == MRC_T_SYN)
		h->ack_psn = 0;
	if (type == MRC_T_RST) {
		/* the PSN the peer expects next, as far as its ACKs told us */
		h->psn = htonl(msk->snd_una);
		mrc_count(msk->mn, MRC_C_TX_RST);
	}
	if (type == MRC_T_ACK)
		idx = mrc_pick_ack_ev(msk, -1, !(++msk->acks_sent % MRC_EV_ACK_EXPLORE));
	else
		idx = mrc_pick_ev(msk, -1);
	mrc_send_packet(msk, skb, &msk->evs[idx], false);
}

/*
 * Probes each retired EV whose time has come with an ACK flagged PROBE on
 * its port; the peer answers at once, and an answer re-admits the EV.
 * Backoff doubles the interval up to 64 times the first, 8 times for the
 * scout of a path with no active EV (mrc_ev_probe_backoff_max()).
 */
void mrc_probe_retired(struct mrc_sock *msk)
{
	unsigned long interval = msecs_to_jiffies(READ_ONCE(msk->mn->cfg.probe_interval_ms));
	unsigned long next = jiffies + MRC_PROBE_SCAN_IDLE;
	u16 i;

	/* called on every push: the slots are walked only when one may be due */
	if (time_before(jiffies, msk->probe_scan_at))
		return;
	for (i = 0; i < msk->ev_cap; i++) {
		struct mrc_ev *ev = &msk->evs[i];
		struct sk_buff *skb;
		struct mrchdr *h;

		if (ev->state != MRC_EV_RETIRED)
			continue;
		/* a path whose device is down: mrc_paths_check() re-admits it */
		if (ev->path < msk->npaths && !msk->paths[ev->path].up)
			continue;
		if (time_before(jiffies, ev->next_probe)) {
			if (time_before(ev->next_probe, next))
				next = ev->next_probe;
			continue;
		}
		skb = mrc_alloc_packet(0);
		if (!skb)
			return;
		h = skb_push(skb, sizeof(*h));
		mrc_fill_header(msk, h, MRC_T_ACK, MRC_F_PROBE);
		ev->probe_backoff = min_t(u8, ev->probe_backoff + 1,
					  mrc_ev_probe_backoff_max(msk->evs, msk->ev_cap, i));
		ev->next_probe = jiffies + max(1UL, interval << ev->probe_backoff);
		mrc_count(msk->mn, MRC_C_EV_PROBES);
		trace_mrc_probe(msk->local_id, ev->port, ev->path);
		mrc_send_packet(msk, skb, ev, false);
		if (time_before(ev->next_probe, next))
			next = ev->next_probe;
	}
	msk->probe_scan_at = next;
}

/**
 * mrc_trace_probe_build() - a path trace's probe: an EV probe
 * @msk: connection (socket lock held)
 * @tsval: set to the probe's tsval, which its answers quote or echo
 *
 * An EV probe (MRC_F_PROBE), so that one that reaches the peer is answered
 * (mrc_trace_reached()); one whose TTL runs out on the way draws an ICMP
 * time exceeded from that router (mrc_trace_icmp()).
 * Return: the packet for mrc_trace_probe_send(), or NULL.
 */
struct sk_buff *mrc_trace_probe_build(struct mrc_sock *msk, u32 *tsval)
{
	struct sk_buff *skb = mrc_alloc_packet(0);
	struct mrchdr *h;

	if (!skb)
		return NULL;
	h = skb_push(skb, sizeof(*h));
	mrc_fill_header(msk, h, MRC_T_ACK, MRC_F_PROBE);
	*tsval = ntohl(h->tsval);
	return skb;
}

/* Sends mrc_trace_probe_build()'s @skb on @ev with TTL @ttl. */
void mrc_trace_probe_send(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_ev *ev,
			  u8 ttl)
{
	mrc_count(msk->mn, MRC_C_TRACE_PROBES);
	mrc_send_on_ev(msk, skb, ev, 0, ttl);
}

/*
 * MRC_F_SACKX's words for a pure ACK, big-endian in @x: what is held beyond
 * the header's 64 PSNs.  Return: their bytes, 0 for none.
 */
static unsigned int mrc_sackx(struct mrc_sock *msk, __be64 *x)
{
	u64 words[1 + MRC_SACKX_WORDS];
	unsigned int i, n;

	n = mrc_ooo_sack_words(&msk->ooo_queue, msk->ooo_last, msk->rcv_nxt, words);
	for (i = 1; i < n; i++)
		x[i - 1] = cpu_to_be64(words[i]);
	return (n - 1) * sizeof(*x);
}

/*
 * A pure ACK's payload in @x: MRC_F_SACKX's words, then the duplicate
 * that came since our last pure ACK (mrc_dup_rcv()), if one did; its
 * flags in @flags.  The duplicate is echoed once, now or never: later, the
 * wait would read as a slower path.  Return: the payload's bytes.
 */
static unsigned int mrc_ack_payload(struct mrc_sock *msk, __be64 *x, u8 *flags)
{
	unsigned int len = mrc_sackx(msk, x);
	struct mrc_dsack d = {};

	sock_owned_by_me(&msk->sk);
	if (len)
		*flags |= MRC_F_SACKX;
	if (msk->dsack_due) {
		msk->dsack_due = false;
		d.tsval = htonl(msk->dsack_tsval);
		d.ev = htons(msk->dsack_port);
		memcpy((u8 *)x + len, &d, sizeof(d));
		len += sizeof(d);
		*flags |= MRC_F_DSACK;
		mrc_count(msk->mn, MRC_C_TX_DSACK);
	}
	return len;
}

/* Room for mrc_ack_payload(): the SACKX words and struct mrc_dsack */
#define MRC_ACK_PAYLOAD_WORDS	(MRC_SACKX_WORDS + sizeof(struct mrc_dsack) / sizeof(__be64))

void mrc_send_ack(struct mrc_sock *msk)
{
	__be64 x[MRC_ACK_PAYLOAD_WORDS];
	u8 flags = 0;
	unsigned int len = mrc_ack_payload(msk, x, &flags);

	mrc_send_ctrl(msk, MRC_T_ACK, flags, x, len);
}

/**
 * mrc_send_ack_twice() - an ACK the peer may be waiting on, on two EVs
 * @msk: connection (socket lock held)
 * @flags: MRC_F_* flags of the ACK
 *
 * ACKs are never acknowledged, so a receiver cannot learn that one of its
 * EVs sits on a dead path: during a one-spine failure a quarter of its ACKs
 * vanish.  Most are covered by the next cumulative ACK, but not the one a
 * sender waits on (a window that reopened, the answer to a window probe,
 * the last ACK of a flight): losing it stalls the sender until its timer,
 * which backs off.  Two copies on distinct EVs make that a sixteenth.
 */
void mrc_send_ack_twice(struct mrc_sock *msk, u8 flags)
{
	__be64 x[MRC_ACK_PAYLOAD_WORDS];
	unsigned int len = mrc_ack_payload(msk, x, &flags);
	struct sk_buff *skb = mrc_alloc_packet(len), *copy;
	struct mrchdr *h;
	int first;

	sock_owned_by_me(&msk->sk);
	if (!skb)
		return;
	if (len)
		skb_put_data(skb, x, len);
	h = skb_push(skb, sizeof(*h));
	mrc_fill_header(msk, h, MRC_T_ACK, flags);
	h->len = htons(len);
	first = mrc_pick_ack_ev(msk, -1, false);
	copy = skb_copy(skb, GFP_ATOMIC);
	mrc_send_packet(msk, skb, &msk->evs[first], false);
	if (copy)
		mrc_send_packet(msk, copy, &msk->evs[mrc_pick_ack_ev(msk, first, false)], false);
}

/* After a read: tells a sender our window held back that it reopened. */
void mrc_window_update(struct mrc_sock *msk)
{
	u32 left = 0, max;

	sock_owned_by_me(&msk->sk);
	if (!msk->remote_id || !mrc_sending_state(msk) || msk->fin_received || !msk->mss)
		return;
	/* our last ACK's window, less what came since (not yet acknowledged) */
	if (msk->adv_wnd > (u64)msk->ack_pending * msk->mss)
		left = msk->adv_wnd - msk->ack_pending * msk->mss;
	max = min_t(u64, (u64)READ_ONCE(msk->sk.sk_rcvbuf) * msk->rcv_ratio >> 8,
		    (u64)(MRC_RCV_WINDOW_PKTS - 1) * msk->mss);
	if (mrc_wnd_update_due(left, mrc_rcv_wnd(msk), max, msk->mss))
		mrc_send_ack_twice(msk, 0);
}

/**
 * mrc_queue_fin() - queue the end of our direction
 * @msk: connection (socket lock held)
 *
 * The FIN takes a PSN of its own, so it is acknowledged and retransmitted
 * like data.
 * Return: 0 or -ENOBUFS.
 */
int mrc_queue_fin(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;
	struct sk_buff *skb = alloc_skb(0, sk->sk_allocation | __GFP_NOFAIL);

	sock_owned_by_me(sk);
	memset(MRC_SKB_CB(skb), 0, sizeof(struct mrc_skb_cb));
	MRC_SKB_CB(skb)->flags = MRC_F_FIN;
	mrc_charge_forced(sk, skb->truesize);
	sk_wmem_queued_add(sk, skb->truesize);
	__skb_queue_tail(&sk->sk_write_queue, skb);
	if (!msk->send_head)
		msk->send_head = skb;
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SEND_SHUTDOWN);
	if (msk->state == MRC_STATE_ESTABLISHED)
		mrc_set_state(msk, MRC_STATE_FIN_WAIT);
	else if (msk->state == MRC_STATE_CLOSE_WAIT)
		mrc_set_state(msk, MRC_STATE_CLOSING);
	mrc_push(msk);
	return 0;
}

/**
 * mrc_send_reply() - stateless answer to a received packet
 * @mn: namespace state
 * @in: the received packet (data at its MRC header)
 * @type: MRC_T_RST or MRC_T_SYNACK
 * @src_id: our ID to put in the reply
 * @psn: PSN of the reply
 * @payload: handshake payload or NULL
 * @plen: its length
 *
 * Goes back on the EV the packet came on.
 */
static void mrc_send_reply(struct mrc_net *mn, struct sk_buff *in, u8 type, u32 src_id,
			   u32 psn, const void *payload, u16 plen)
{
	const struct mrchdr *ih = (const struct mrchdr *)in->data;
	union mrc_addr local, remote;
	struct sk_buff *skb;
	struct mrchdr *h;

	mrc_skb_addrs(in, &local, &remote);
	skb = mrc_alloc_packet(plen);
	if (!skb)
		return;
	if (plen)
		skb_put_data(skb, payload, plen);
	h = skb_push(skb, sizeof(*h));
	memset(h, 0, sizeof(*h));
	h->version = MRC_VERSION;
	h->type = type;
	h->sport = ih->dport;
	h->dport = ih->sport;
	h->src_id = htonl(src_id);
	h->dst_id = ih->src_id;
	h->psn = htonl(psn);
	h->ack_psn = htonl(ntohl(ih->psn) + 1);
	h->tsval = htonl(mrc_ts_clock(mrc_ts_offset(mn, src_id, ntohl(ih->src_id)),
				      mrc_clock_us()));
	h->tsecr = ih->tsval;
	h->ack_ev = udp_hdr(in)->source;
	h->len = htons(plen);
	mrc_output(mn, local.sa.sa_family, &local, &remote, skb,
		   ntohs(udp_hdr(in)->source), ntohs(udp_hdr(in)->dest), 0, NULL, 0, 0);
}

/**
 * mrc_ts_offset() - timestamp offset of a server's connection
 * @mn: namespace
 * @server_id: the server's connection ID
 * @client_id: the client's
 *
 * Keyed by the IDs as TCP's secure_tcp_ts_off() is by the addresses: the
 * stateless SYNACK and the child made from the cookie later use one clock,
 * so the client's echo of the SYNACK's tsval reads right in the child.
 *
 * Return: the offset for the connection's mrc_ts_clock(); 0 with the clock
 * test knob (mrc_test_clock).
 */
u32 mrc_ts_offset(const struct mrc_net *mn, u32 server_id, u32 client_id)
{
	if (mrc_test_clock)
		return 0;
	return (u32)siphash_2u32(server_id, client_id, &mn->ts_key);
}

/* RST for a packet that matches no connection (rate limited, never to a RST). */
void mrc_send_rst_reply(struct mrc_net *mn, struct sk_buff *skb, const struct mrchdr *h)
{
	if (h->type == MRC_T_RST || !mrc_rst_allowed(mn))
		return;
	mrc_count(mn, MRC_C_TX_RST);
	mrc_send_reply(mn, skb, MRC_T_RST, ntohl(h->dst_id), ntohl(h->ack_psn), NULL, 0);
}

/* The handshake payload, then our plane addresses if we have others */
struct mrc_hs_with_addrs {
	struct mrc_hs_payload	hs;
	struct mrc_addr_list	list;
	struct mrc_wire_addr	addrs[MRC_MAX_PLANES];
} __packed;

void mrc_send_synack(struct mrc_net *mn, struct sk_buff *skb, const struct mrchdr *h,
		     u32 server_id, u32 server_isn, const struct mrc_hs_payload *hs)
{
	struct mrc_hs_with_addrs p;
	union mrc_addr local, remote;
	int alen;

	mrc_skb_addrs(skb, &local, &remote);
	p.hs = *hs;
	alen = mrc_addr_list_put(mn, local.sa.sa_family, &local, &p.list,
				 sizeof(p) - sizeof(p.hs));
	mrc_send_reply(mn, skb, MRC_T_SYNACK, server_id, server_isn, &p, sizeof(p.hs) + alen);
}

/* The client's HSACK: the cookie echoed, and our plane addresses. */
void mrc_send_hsack(struct mrc_sock *msk)
{
	struct mrc_hs_with_addrs p;
	int alen;

	p.hs = msk->hs;
	alen = mrc_addr_list_put(msk->mn, msk->family, &msk->local, &p.list,
				 sizeof(p) - sizeof(p.hs));
	mrc_send_ctrl(msk, MRC_T_HSACK, 0, &p, sizeof(p.hs) + alen);
}
