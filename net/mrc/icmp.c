// SPDX-License-Identifier: GPL-2.0-only
/*
 * ICMP errors about packets MRC sent, as the UDP tunnel sockets receive
 * them (encap_err_lookup/encap_err_rcv, net/ipv4/udp.c __udp4_lib_err()):
 *
 * - port unreachable while connecting: nothing at the peer listens on MRC's
 *   UDP port (no module there), so the connect fails at once with
 *   ECONNREFUSED, as TCP's does, instead of after the user timeout;
 * - fragmentation needed / packet too big: the path MTU is lower than the
 *   segments; new segments shrink to it (the kernel keeps the MTU per
 *   route, not per UDP source port, so every EV to that peer learns it)
 *   and those queued larger go out fragmented rather than lost;
 * - anything else (host or net unreachable from a router) is a soft error,
 *   as TCP keeps it: loss inference already retires the EVs of a dead path.
 *
 * An error names a connection only if its quoted MRC header carries the
 * connection's IDs and addresses (an off-path host would have to guess the
 * 32-bit IDs, as it would TCP's sequence numbers); others are dropped and
 * counted (RxIcmpDropped).  The ICMP arrives at the tunnel socket of our
 * own UDP port: the peers' port must be the same (the default), as for
 * VXLAN.
 */
#include <linux/icmp.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "protocol.h"

/* encap_err_lookup: the quoted packet is ours (the caller found our port) */
int mrc_udp_err_lookup(struct sock *usk, struct sk_buff *skb)
{
	return 0;
}

/*
 * Whether the quoted packet (@iph its IP header) went from @msk to its peer.
 * Our own ID is no secret from whoever saw one packet of ours; the peer's
 * ID in the quote is what an off-path host must guess, as TCP's quoted
 * sequence number must fall in the window.  Only our SYN goes without it
 * (dst_id 0): then the quote must be that SYN, its PSN our random ISN,
 * while we still wait for the SYNACK.  A dst_id of 0 for a connection that
 * knows its peer's ID would let a forger act on our ID alone.
 */
static bool mrc_icmp_matches(const struct mrc_sock *msk, const void *iph,
			     const struct mrchdr *h)
{
	u8 state = READ_ONCE(msk->state);
	u32 dst_id = ntohl(h->dst_id);

	if (state == MRC_STATE_DONE || state == MRC_STATE_CLOSED || state == MRC_STATE_LISTEN)
		return false;
	if (dst_id) {
		if (dst_id != READ_ONCE(msk->remote_id))
			return false;
	} else if (state != MRC_STATE_SYN_SENT || h->type != MRC_T_SYN ||
		   ntohl(h->psn) != READ_ONCE(msk->iss)) {
		return false;
	}
	if (msk->family == AF_INET)
		return ((const struct iphdr *)iph)->daddr == msk->remote.v4.sin_addr.s_addr &&
		       ((const struct iphdr *)iph)->saddr == msk->local.v4.sin_addr.s_addr;
	return ipv6_addr_equal(&((const struct ipv6hdr *)iph)->daddr,
			       &msk->remote.v6.sin6_addr) &&
	       ipv6_addr_equal(&((const struct ipv6hdr *)iph)->saddr, &msk->local.v6.sin6_addr);
}

/**
 * mrc_pmtu_lower() - shrink new segments to a path MTU an ICMP reported
 * @msk: connection (socket lock held or owned)
 * @mtu: the path MTU, bytes of IP packet
 *
 * Reports below the floor the route takes them at (the netns's
 * min_pmtu for IPv4, 1280 for IPv6) count as that floor: segments must fit
 * what the route will carry with DF, or they are dropped here.  At least 64
 * bytes of payload stay, as at connect (mrc_route_setup()).
 */
static void mrc_pmtu_lower(struct mrc_sock *msk, u32 mtu)
{
	u32 overhead = sizeof(struct udphdr) + sizeof(struct mrchdr);

	if (msk->family == AF_INET) {
		overhead += sizeof(struct iphdr);
		mtu = max(mtu, READ_ONCE(sock_net(&msk->sk)->ipv4.ip_rt_min_pmtu));
	} else {
		overhead += sizeof(struct ipv6hdr);
		mtu = max_t(u32, mtu, IPV6_MIN_MTU);
	}
	mtu = max(mtu, overhead + 64);
	if (mtu - overhead < msk->mss)
		msk->mss = mtu - overhead;
}

/**
 * mrc_icmp_apply() - act on an ICMP error for @msk
 * @msk: connection (socket lock held or owned)
 * @err: errno the ICMP maps to (icmp_err_convert, icmpv6_err_convert)
 * @mtu: for EMSGSIZE, the reported path MTU
 */
static void mrc_icmp_apply(struct mrc_sock *msk, int err, u32 mtu)
{
	struct sock *sk = &msk->sk;

	if (err == EMSGSIZE) {
		mrc_count(msk->mn, MRC_C_RX_ICMP_FRAG);
		mrc_pmtu_lower(msk, mtu);
		return;
	}
	mrc_count(msk->mn, MRC_C_RX_ICMP_UNREACH);
	if (msk->state == MRC_STATE_SYN_SENT && (err == ECONNREFUSED || err == ENOPROTOOPT)) {
		mrc_done(msk, ECONNREFUSED);
		return;
	}
	WRITE_ONCE(sk->sk_err_soft, err);
}

/* release_cb: ICMP errors that came while the user owned the socket */
void mrc_icmp_deferred(struct mrc_sock *msk)
{
	int err = msk->icmp_err;
	u32 mtu = msk->icmp_mtu;

	msk->icmp_err = 0;
	msk->icmp_mtu = 0;
	if (mtu)
		mrc_icmp_apply(msk, EMSGSIZE, mtu);
	if (err)
		mrc_icmp_apply(msk, err, 0);
}

/**
 * mrc_udp_err_rcv() - encap_err_rcv of the tunnel sockets
 * @usk: the UDP tunnel socket
 * @skb: the ICMP, data at the quoted IP header
 * @err: errno the ICMP maps to
 * @port: the quoted packet's UDP destination port
 * @info: for "fragmentation needed" / "packet too big", the MTU
 * @payload: the quoted packet after its UDP header
 *
 * Context: softirq, rcu_read_lock held.
 */
void mrc_udp_err_rcv(struct sock *usk, struct sk_buff *skb, int err, __be16 port, u32 info,
		     u8 *payload)
{
	struct mrc_net *mn = rcu_dereference_sk_user_data(usk);
	const struct mrchdr *h;
	struct mrc_sock *msk;
	struct mrchdr buf;
	struct sock *sk;

	if (!mn || !err)
		return;
	h = skb_header_pointer(skb, payload - skb->data, sizeof(buf), &buf);
	if (!h || h->version != MRC_VERSION || !h->src_id)
		goto drop;
	msk = mrc_lookup_conn(mn, ntohl(h->src_id));
	if (!msk || !refcount_inc_not_zero(&msk->sk.sk_refcnt))
		goto drop;
	sk = &msk->sk;
	bh_lock_sock(sk);
	/* the quoted header is the tunnel socket's family (the v6 one is v6only) */
	if (usk->sk_family != msk->family || !mrc_icmp_matches(msk, skb->data, h)) {
		mrc_count(mn, MRC_C_RX_ICMP_DROP);
	} else if (mrc_trace_icmp(msk, skb, h, ntohs(((struct udphdr *)payload - 1)->source))) {
		/* a path trace's probe ran out of TTL, as it was meant to */
	} else if (!sock_owned_by_user(sk)) {
		mrc_icmp_apply(msk, err, info);
	} else {
		/* the smallest MTU, and the latest other error (sk_err_soft's way) */
		if (err == EMSGSIZE)
			msk->icmp_mtu = min_not_zero(msk->icmp_mtu, info);
		else
			msk->icmp_err = err;
		if (!test_and_set_bit(MRC_DEFER_ICMP, &msk->deferred))
			sock_hold(sk);	/* dropped in mrc_release_cb */
	}
	bh_unlock_sock(sk);
	sock_put(sk);
	return;
drop:
	mrc_count(mn, MRC_C_RX_ICMP_DROP);
}
