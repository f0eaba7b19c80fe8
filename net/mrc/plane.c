// SPDX-License-Identifier: GPL-2.0-only
/*
 * Planes: the local addresses a connection spreads over (one per NIC port
 * into its own network), the address lists of the handshake, a
 * connection's paths (local, remote address pairs), and the device and
 * address notifiers that take a path out of use the moment its device or
 * address goes, with no loss needed to notice.
 *
 * A connection's EVs each belong to one path (mrc_ev.path); the path's
 * addresses go in the outer header, the EV's port picks the way through
 * that plane's fabric.  See Documentation/networking/mrc.rst, "Planes".
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <kunit/visibility.h>

#include "protocol.h"
#include "ev.h"

/* Same IP address (ports and scope ignored) */
static bool mrc_addr_same_ip(const union mrc_addr *a, const union mrc_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
	return ipv6_addr_equal(&a->v6.sin6_addr, &b->v6.sin6_addr);
}

static bool mrc_dev_usable(const struct net_device *dev)
{
	return (dev->flags & IFF_UP) && netif_running(dev) && netif_carrier_ok(dev);
}

/*
 * The device that holds @addr: its ifindex, 0 when none does; *@up says it
 * is up with carrier.  Context: RCU.
 */
static int mrc_addr_dev(struct net *net, const union mrc_addr *addr, bool *up)
{
	struct net_device *dev = NULL;

	*up = false;
	if (addr->sa.sa_family == AF_INET) {
		dev = __ip_dev_find(net, addr->v4.sin_addr.s_addr, false);
	} else if (IS_ENABLED(CONFIG_IPV6) && addr->sa.sa_family == AF_INET6) {
		/* not tentative */
		dev = ipv6_dev_find(net, &addr->v6.sin6_addr, NULL);
	}
	if (!dev)
		return 0;
	*up = mrc_dev_usable(dev);
	return dev->ifindex;
}

static void mrc_plane_fill(struct mrc_plane *p, int family, const void *ip, int ifindex,
			   bool up)
{
	memset(p, 0, sizeof(*p));
	p->addr.sa.sa_family = family;
	if (family == AF_INET)
		memcpy(&p->addr.v4.sin_addr, ip, sizeof(p->addr.v4.sin_addr));
	else
		memcpy(&p->addr.v6.sin6_addr, ip, sizeof(p->addr.v6.sin6_addr));
	p->ifindex = ifindex;
	p->up = up;
}

/*
 * The default planes: each up device other than loopback is one, by its
 * first global unicast address (of @family, 0: each family).  A device's
 * secondary addresses are not planes of their own: they reach the same
 * network through the same port.  Context: RCU.
 */
static int mrc_planes_default(struct net *net, int family, struct mrc_plane *out, int max)
{
	struct net_device *dev;
	int n = 0;

	for_each_netdev_rcu(net, dev) {
		bool up = mrc_dev_usable(dev);

		if ((dev->flags & IFF_LOOPBACK) || !(dev->flags & IFF_UP))
			continue;
		if (family != AF_INET6) {
			struct in_device *in_dev = __in_dev_get_rcu(dev);
			const struct in_ifaddr *ifa;

			if (in_dev) {
				in_dev_for_each_ifa_rcu(ifa, in_dev) {
					if (ifa->ifa_scope != RT_SCOPE_UNIVERSE)
						continue;
					if (n == max)
						return n;
					mrc_plane_fill(&out[n++], AF_INET, &ifa->ifa_local,
						       dev->ifindex, up);
					break;
				}
			}
		}
#if IS_ENABLED(CONFIG_IPV6)
		if (family != AF_INET) {
			struct inet6_dev *idev = __in6_dev_get(dev);
			struct inet6_ifaddr *ifa;

			if (!idev)
				continue;
			list_for_each_entry_rcu(ifa, &idev->addr_list, if_list) {
				if (ifa->scope != 0 ||	/* IFA_GLOBAL */
				    (ifa->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED |
						   IFA_F_DEPRECATED)))
					continue;
				if (n == max)
					return n;
				mrc_plane_fill(&out[n++], AF_INET6, &ifa->addr, dev->ifindex, up);
				break;
			}
		}
#endif
	}
	return n;
}

/*
 * The planes a connection of @family may use: the explicit ones (any
 * family: a connection crosses families only where an operator said so),
 * else the default ones of @family.  Context: RCU; takes mn->lock.
 */
static int mrc_planes_family(struct mrc_net *mn, int family, struct mrc_plane *out, int max,
			     bool *is_default)
{
	int n;

	spin_lock_bh(&mn->lock);
	n = min_t(int, mn->nplanes, max);
	memcpy(out, mn->planes, n * sizeof(*out));
	spin_unlock_bh(&mn->lock);
	*is_default = !n;
	if (!n)
		n = mrc_planes_default(mn->net, family, out, max);
	return n;
}

/**
 * mrc_planes_get() - the namespace's planes, for netlink
 * @mn: namespace
 * @out: room for @max planes
 * @max: entries of @out
 * @is_default: set when none is configured and @out lists the default ones
 *
 * Return: planes written.
 */
int mrc_planes_get(struct mrc_net *mn, struct mrc_plane *out, int max, bool *is_default)
{
	int n;

	rcu_read_lock();
	n = mrc_planes_family(mn, 0, out, max, is_default);
	rcu_read_unlock();
	return n;
}

/**
 * mrc_plane_add() - configure a local address as a plane
 * @mn: namespace
 * @addr: the address; a device of the namespace must hold it
 *
 * The tunnel socket of the address's family is made now (it may sleep), so
 * a connection of the other family can use the plane from softirq.
 * Context: process context.
 * Return: 0, -EAFNOSUPPORT, -EADDRNOTAVAIL, -EEXIST, -ENOSPC or the tunnel
 * socket's error.
 */
int mrc_plane_add(struct mrc_net *mn, const union mrc_addr *addr)
{
	struct mrc_plane p;
	int ifindex, i, err;
	bool up;

	if (addr->sa.sa_family != AF_INET &&
	    (!IS_ENABLED(CONFIG_IPV6) || addr->sa.sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	rcu_read_lock();
	ifindex = mrc_addr_dev(mn->net, addr, &up);
	rcu_read_unlock();
	if (!ifindex)
		return -EADDRNOTAVAIL;
	err = mrc_tunnel_get(mn, addr->sa.sa_family);
	if (err)
		return err;
	mrc_plane_fill(&p, addr->sa.sa_family, addr->sa.sa_family == AF_INET ?
		       (const void *)&addr->v4.sin_addr : (const void *)&addr->v6.sin6_addr,
		       ifindex, up);
	spin_lock_bh(&mn->lock);
	for (i = 0; i < mn->nplanes; i++)
		if (mrc_addr_same_ip(&mn->planes[i].addr, addr))
			err = -EEXIST;
	if (!err && mn->nplanes == MRC_MAX_PLANES)
		err = -ENOSPC;
	if (!err)
		mn->planes[mn->nplanes++] = p;
	spin_unlock_bh(&mn->lock);
	return err;
}

/**
 * mrc_plane_del() - remove a configured plane
 * @mn: namespace
 * @addr: its address
 *
 * Connections keep the paths they have; new ones no longer use it.
 * Return: 0 or -ENOENT.
 */
int mrc_plane_del(struct mrc_net *mn, const union mrc_addr *addr)
{
	int i, err = -ENOENT;

	spin_lock_bh(&mn->lock);
	for (i = 0; i < mn->nplanes; i++) {
		if (!mrc_addr_same_ip(&mn->planes[i].addr, addr))
			continue;
		memmove(&mn->planes[i], &mn->planes[i + 1],
			(mn->nplanes - i - 1) * sizeof(mn->planes[0]));
		mn->nplanes--;
		err = 0;
		break;
	}
	spin_unlock_bh(&mn->lock);
	return err;
}

/**
 * mrc_addr_list_put() - our plane addresses for a handshake packet
 * @mn: namespace
 * @family: the connection's family
 * @skip: the connection's own local address (the peer knows it)
 * @buf: where the struct mrc_addr_list goes
 * @room: bytes at @buf
 *
 * Return: bytes written, 0 when there is nothing to announce.
 */
int mrc_addr_list_put(struct mrc_net *mn, int family, const union mrc_addr *skip, void *buf,
		      unsigned int room)
{
	struct mrc_plane planes[MRC_MAX_PLANES + 1];
	struct mrc_addr_list *list = buf;
	unsigned int count = 0;
	bool is_default, up;
	int n, i, own;

	rcu_read_lock();
	n = mrc_planes_family(mn, family, planes, ARRAY_SIZE(planes), &is_default);
	own = mrc_addr_dev(mn->net, skip, &up);
	rcu_read_unlock();
	for (i = 0; i < n && count < MRC_MAX_PLANES; i++) {
		struct mrc_wire_addr *w = &list->addrs[count];
		const union mrc_addr *a = &planes[i].addr;

		if (!planes[i].up || mrc_addr_same_ip(a, skip) ||
		    (is_default && planes[i].ifindex == own) ||
		    room < struct_size(list, addrs, count + 1))
			continue;
		memset(w, 0, sizeof(*w));
		w->plane = i;
		if (a->sa.sa_family == AF_INET) {
			w->family = 4;
			w->addr[0] = a->v4.sin_addr.s_addr;
		} else {
			w->family = 6;
			memcpy(w->addr, &a->v6.sin6_addr, sizeof(w->addr));
		}
		count++;
	}
	if (!count)
		return 0;
	list->count = count;
	memset(list->reserved, 0, sizeof(list->reserved));
	return struct_size(list, addrs, count);
}

/* Is a peer's announced address one it could really be reached at? */
static bool mrc_peer_addr_ok(const union mrc_addr *a)
{
	if (a->sa.sa_family == AF_INET) {
		__be32 ip = a->v4.sin_addr.s_addr;

		return !ipv4_is_zeronet(ip) && !ipv4_is_loopback(ip) && !ipv4_is_multicast(ip) &&
		       !ipv4_is_lbcast(ip);
	}
	return !(ipv6_addr_type(&a->v6.sin6_addr) &
		 (IPV6_ADDR_ANY | IPV6_ADDR_LOOPBACK | IPV6_ADDR_MULTICAST | IPV6_ADDR_LINKLOCAL |
		  IPV6_ADDR_MAPPED));
}

/**
 * mrc_addr_list_take() - learn the peer's plane addresses from a handshake
 * @msk: connection (socket lock held)
 * @buf: the bytes after the handshake payload
 * @len: their number, 0 when the peer announced nothing
 *
 * Called for the packet that proved the peer: the HSACK with its cookie,
 * or the SYNACK naming our connection ID.  Addresses are only candidates:
 * a path to one is used once a probe on it was answered (mrc_paths_build()).
 * Return: addresses learned, or -EINVAL for a malformed list.
 */
int mrc_addr_list_take(struct mrc_sock *msk, const void *buf, unsigned int len)
{
	const struct mrc_addr_list *list = buf;
	unsigned int i, n = 0;

	sock_owned_by_me(&msk->sk);
	if (!len || msk->npeer_addrs)
		return 0;
	if (len < sizeof(*list) || !list->count || list->count > MRC_MAX_PLANES ||
	    len != struct_size(list, addrs, list->count)) {
		mrc_count(msk->mn, MRC_C_ADDR_REJECTED);
		return -EINVAL;
	}
	for (i = 0; i < list->count; i++) {
		const struct mrc_wire_addr *w = &list->addrs[i];
		union mrc_addr a = {};
		unsigned int j;
		bool dup = false;

		if (w->family == 4) {
			a.v4.sin_family = AF_INET;
			a.v4.sin_addr.s_addr = w->addr[0];
			a.v4.sin_port = msk->remote.v4.sin_port;
		} else if (w->family == 6 && IS_ENABLED(CONFIG_IPV6)) {
			a.v6.sin6_family = AF_INET6;
			memcpy(&a.v6.sin6_addr, w->addr, sizeof(a.v6.sin6_addr));
			a.v6.sin6_port = msk->remote.v4.sin_port;
		}
		for (j = 0; j < n; j++)
			dup |= mrc_addr_same_ip(&msk->peer_addrs[j], &a);
		if (!a.sa.sa_family || w->reserved || dup || !mrc_peer_addr_ok(&a) ||
		    mrc_addr_same_ip(&a, &msk->remote)) {
			mrc_count(msk->mn, MRC_C_ADDR_REJECTED);
			continue;
		}
		msk->peer_addrs[n++] = a;
		mrc_count(msk->mn, MRC_C_ADDR_LEARNED);
	}
	/* mrc_peer_known() reads the list without the socket lock */
	smp_store_release(&msk->npeer_addrs, n);
	return n;
}

/**
 * mrc_peer_known() - did a packet come from one of the peer's addresses?
 * @msk: connection (no lock needed: the list is written once)
 * @remote: the packet's source address and MRC port
 *
 * Return: true for the connection's own peer address or a learned one.
 */
bool mrc_peer_known(const struct mrc_sock *msk, const union mrc_addr *remote)
{
	/* pairs with smp_store_release() in mrc_addr_list_take(): entries first */
	u8 i, n = smp_load_acquire(&msk->npeer_addrs);

	if (mrc_addr_same_ip(remote, &msk->remote))
		return remote->v4.sin_port == msk->remote.v4.sin_port;
	for (i = 0; i < n; i++)
		if (mrc_addr_same_ip(remote, &msk->peer_addrs[i]))
			return remote->v4.sin_port == msk->remote.v4.sin_port;
	return false;
}

/* Whether @p is the pair a packet from @remote to @local came in on */
static bool mrc_path_is(const struct mrc_path *p, const union mrc_addr *local,
			const union mrc_addr *remote)
{
	return mrc_addr_same_ip(&p->remote, remote) && mrc_addr_same_ip(&p->local, local);
}

/**
 * mrc_paths_find() - the path whose addresses a packet of the peer carries
 * @paths: a connection's paths
 * @npaths: how many
 * @hint: the index to try first (the peer's packets come in runs on one path)
 * @local: the packet's destination
 * @remote: its source
 *
 * Return: the path's index, or -1 when no path has that pair.
 */
int mrc_paths_find(const struct mrc_path *paths, u8 npaths, u8 hint,
		   const union mrc_addr *local, const union mrc_addr *remote)
{
	u8 i;

	if (hint < npaths && mrc_path_is(&paths[hint], local, remote))
		return hint;
	for (i = 0; i < npaths; i++)
		if (mrc_path_is(&paths[i], local, remote))
			return i;
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(mrc_paths_find);

/**
 * mrc_path_rx() - a packet of the peer came in from @remote to @local
 * @msk: connection (socket lock held)
 * @local: the packet's destination
 * @remote: its source, a known peer address (mrc_peer_known())
 *
 * Stamps the path it came in on, which tells the ACKs where the peer's
 * packets still arrive (mrc_paths_rx_live()).  A packet that waited in the
 * backlog is stamped when the lock's owner lets go, up to one lock hold
 * late: a dead path may look that much fresher, never a live one staler.
 */
void mrc_path_rx(struct mrc_sock *msk, const union mrc_addr *local, const union mrc_addr *remote)
{
	int i;

	sock_owned_by_me(&msk->sk);
	if (msk->npaths < 2)
		return;
	i = mrc_paths_find(msk->paths, msk->npaths, msk->rx_path, local, remote);
	if (i < 0)
		return;
	msk->rx_path = i;
	msk->paths[i].rx_at = jiffies;
	msk->paths[i].rx = true;
}

/*
 * The device a packet from @local to @remote leaves by, 0: no route; its
 * route's MTU in *@mtu.
 */
static int mrc_route_dev(struct net *net, const union mrc_addr *local,
			 const union mrc_addr *remote, u32 *mtu)
{
	int ifindex = 0;

	if (local->sa.sa_family == AF_INET) {
		struct flowi4 fl4 = {
			.daddr = remote->v4.sin_addr.s_addr,
			.saddr = local->v4.sin_addr.s_addr,
			.flowi4_proto = IPPROTO_UDP,
		};
		struct rtable *rt = ip_route_output_key(net, &fl4);

		if (IS_ERR(rt))
			return 0;
		ifindex = rt->dst.dev->ifindex;
		*mtu = dst_mtu(&rt->dst);
		ip_rt_put(rt);
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		struct flowi6 fl6 = {
			.daddr = remote->v6.sin6_addr,
			.saddr = local->v6.sin6_addr,
			.flowi6_proto = IPPROTO_UDP,
		};
		struct dst_entry *dst = ip6_route_output(net, NULL, &fl6);

		if (!dst->error) {
			ifindex = dst->dev->ifindex;
			*mtu = dst_mtu(dst);
		}
		dst_release(dst);
	}
	return ifindex;
}

/*
 * Adds a path; segments shrink to fit its MTU as well, as they do at connect
 * (mrc_route_setup()): an IPv6 path beside an IPv4 one has 20 bytes more of
 * header, and IPv6 is never fragmented on the way.
 */
static void mrc_path_add(struct mrc_sock *msk, const union mrc_addr *local,
			 const union mrc_addr *remote, int ifindex, u8 plane, u32 mtu)
{
	struct mrc_path *p = &msk->paths[msk->npaths++];
	u32 overhead = sizeof(struct udphdr) + sizeof(struct mrchdr) +
		       (local->sa.sa_family == AF_INET ? sizeof(struct iphdr) :
			sizeof(struct ipv6hdr));

	if (mtu >= overhead + 64 && mtu - overhead < msk->mss)
		msk->mss = mtu - overhead;

	p->local = *local;
	p->remote = *remote;
	p->local.v4.sin_port = msk->local.v4.sin_port;
	p->ifindex = ifindex;
	p->plane = plane;
	p->up = true;
	p->rx = false;
}

/**
 * mrc_paths_build() - the connection's paths, once the handshake is done
 * @msk: connection (socket lock held)
 *
 * Every (local plane, peer address) pair of one family whose route leaves
 * by the local plane's own device is a path: a plane is a network of its
 * own, and a packet sourced from one plane's address but sent into another
 * would cross planes the operator kept apart.  The EVs are then shared
 * among the paths; the ones moved to a new path wait for a probe's answer
 * before they carry data, which proves the announced address is the
 * peer's and reachable (mrc_evs_spread()).
 */
void mrc_paths_build(struct mrc_sock *msk)
{
	struct mrc_plane planes[MRC_MAX_PLANES + 1];
	struct net *net = sock_net(&msk->sk);
	u8 nremote = msk->npeer_addrs, r, plane = 1;
	bool is_default, up;
	u32 mtu = 0;
	int n, i;

	sock_owned_by_me(&msk->sk);
	msk->npaths = 0;
	rcu_read_lock();
	mrc_path_add(msk, &msk->local, &msk->remote, mrc_addr_dev(net, &msk->local, &up), 0,
		     U32_MAX);
	n = mrc_planes_family(msk->mn, msk->family, planes, ARRAY_SIZE(planes), &is_default);
	for (i = 0; i < n; i++) {
		const union mrc_addr *local = &planes[i].addr;
		bool used = false;

		if (mrc_addr_same_ip(local, &msk->local) || !planes[i].up ||
		    (is_default && planes[i].ifindex == msk->paths[0].ifindex))
			continue;
		for (r = 0; r <= nremote && msk->npaths < MRC_MAX_PATHS; r++) {
			const union mrc_addr *remote = r ? &msk->peer_addrs[r - 1] : &msk->remote;

			if (remote->sa.sa_family != local->sa.sa_family ||
			    !mrc_tunnel_sock(msk->mn, local->sa.sa_family) ||
			    mrc_route_dev(net, local, remote, &mtu) != planes[i].ifindex)
				continue;
			mrc_path_add(msk, local, remote, planes[i].ifindex, plane, mtu);
			used = true;
		}
		plane += used;
	}
	/* our own plane toward the peer's other addresses */
	for (r = 1; r <= nremote && msk->npaths < MRC_MAX_PATHS; r++) {
		const union mrc_addr *remote = &msk->peer_addrs[r - 1];

		if (remote->sa.sa_family == msk->family &&
		    mrc_route_dev(net, &msk->local, remote, &mtu) == msk->paths[0].ifindex)
			mrc_path_add(msk, &msk->local, remote, msk->paths[0].ifindex, 0, mtu);
	}
	rcu_read_unlock();
	if (msk->npaths < 2)
		return;
	mrc_evs_spread(msk->evs, msk->ev_cap, msk->npaths, jiffies);
	mrc_evs_changed(msk);
	mrc_probe_scan_soon(msk, jiffies);
	mrc_probe_retired(msk);
}

/* Active EVs wanted on each path */
u16 mrc_path_evs(const struct mrc_sock *msk)
{
	return DIV_ROUND_UP(msk->ev_count, max_t(u8, msk->npaths, 1));
}

/*
 * Path @p's device went down or lost its address: its EVs stop carrying
 * data, and what is in flight on them is resent on the other paths now,
 * not one RACK window or RTO later.  The last path standing is left to
 * the timers as before: there is nowhere else to go.
 */
static void mrc_path_down(struct mrc_sock *msk, u8 p)
{
	bool other = false;
	u8 q;
	u16 i;

	sock_owned_by_me(&msk->sk);
	for (q = 0; q < msk->npaths; q++)
		other |= q != p && msk->paths[q].up;
	mrc_count(msk->mn, MRC_C_PLANE_DOWN);
	if (!other)
		return;
	for (i = 0; i < msk->ev_cap; i++) {
		struct mrc_ev *ev = &msk->evs[i];

		if (ev->path != p || ev->state != MRC_EV_ACTIVE)
			continue;
		ev->state = MRC_EV_RETIRED;
		ev->swrr = 0;
		ev->probe_backoff = 0;
	}
	mrc_evs_changed(msk);
	mrc_lose_paths(msk, BIT(p), false);
	mrc_retransmit_lost(msk);
	mrc_push(msk);
	/*
	 * An RTO for what was resent, as the ACK path arms it.  With nothing
	 * outstanding there is none to time: armed, it found an idle or
	 * receive-only connection past its user timeout and reset it, and
	 * cut short an orphan's wait for the peer's FIN (the same timer).
	 */
	if (!skb_queue_empty(&msk->sk.sk_write_queue))
		mrc_arm_rto(msk);
}

/* Path @p is back: its EVs carry data again at once. */
static void mrc_path_up(struct mrc_sock *msk, u8 p)
{
	u16 i;

	mrc_count(msk->mn, MRC_C_PLANE_UP);
	for (i = 0; i < msk->ev_cap; i++)
		if (msk->evs[i].path == p && msk->evs[i].state == MRC_EV_RETIRED)
			mrc_ev_readmit(msk->evs, msk->ev_cap, i, mrc_path_evs(msk));
	mrc_evs_changed(msk);
	mrc_push(msk);
}

/**
 * mrc_paths_check() - act on device and address changes (path_timer)
 * @msk: connection (socket lock held)
 */
void mrc_paths_check(struct mrc_sock *msk)
{
	struct net *net = sock_net(&msk->sk);
	u8 p;

	sock_owned_by_me(&msk->sk);
	if (msk->state == MRC_STATE_DONE || msk->state == MRC_STATE_CLOSED ||
	    msk->npaths < 2)
		return;
	for (p = 0; p < msk->npaths; p++) {
		struct mrc_path *path = &msk->paths[p];
		int ifindex;
		bool up;

		if (!path->ifindex)
			continue;
		rcu_read_lock();
		ifindex = mrc_addr_dev(net, &path->local, &up);
		rcu_read_unlock();
		up &= ifindex == path->ifindex;
		if (up == path->up)
			continue;
		path->up = up;
		if (up)
			mrc_path_up(msk, p);
		else
			mrc_path_down(msk, p);
	}
}

/* Explicit planes: note which came or went, and tell netlink listeners. */
static void mrc_planes_refresh(struct mrc_net *mn)
{
	struct mrc_plane changed[MRC_MAX_PLANES];
	int i, n = 0;

	spin_lock_bh(&mn->lock);
	rcu_read_lock();
	for (i = 0; i < mn->nplanes; i++) {
		struct mrc_plane *p = &mn->planes[i];
		int ifindex;
		bool up;

		ifindex = mrc_addr_dev(mn->net, &p->addr, &up);
		if (ifindex)
			p->ifindex = ifindex;
		if (up == p->up)
			continue;
		p->up = up;
		if (up)
			p->up_events++;
		else
			p->down_events++;
		changed[n++] = *p;
	}
	rcu_read_unlock();
	spin_unlock_bh(&mn->lock);
	for (i = 0; i < n; i++)
		mrc_nl_notify_plane(mn, &changed[i]);
}

/* Default planes: the device's global addresses went @up or down. */
static void mrc_planes_dev_event(struct mrc_net *mn, struct net_device *dev, bool up)
{
	struct mrc_plane planes[2 * MRC_MAX_PLANES];
	int n, i;

	if (READ_ONCE(mn->nplanes))
		return;
	rcu_read_lock();
	n = mrc_planes_default(mn->net, 0, planes, ARRAY_SIZE(planes));
	rcu_read_unlock();
	for (i = 0; i < n; i++) {
		if (planes[i].ifindex != dev->ifindex)
			continue;
		planes[i].up = up;
		mrc_nl_notify_plane(mn, &planes[i]);
	}
}

/*
 * Checks @msk's paths now, as its timers do: under the socket's spinlock,
 * or deferred to release_sock() when a user owns it.  Context: process,
 * BH enabled.
 */
static void mrc_paths_check_now(struct mrc_sock *msk)
{
	struct sock *sk = &msk->sk;

	local_bh_disable();
	bh_lock_sock(sk);
	if (!sock_owned_by_user(sk))
		mrc_paths_check(msk);
	else if (!test_and_set_bit(MRC_DEFER_PATHS, &msk->deferred))
		sock_hold(sk);	/* dropped in mrc_release_cb */
	bh_unlock_sock(sk);
	local_bh_enable();
}

/*
 * Something about a device or address of @net changed: every connection
 * with more than one path checks its paths.  From the device notifier
 * (@now: process context, RTNL) at once, so that a path's packets move the
 * moment its device goes, not at the next timer tick (4 ms at HZ=250); from
 * the address notifiers (inet6's may run atomic, under addrconf's locks) on
 * the connection's path timer.
 */
static void mrc_planes_changed(struct net *net, bool now)
{
	struct mrc_net *mn = mrc_pernet(net);
	struct mrc_sock *msk;
	int bkt;

	mrc_planes_refresh(mn);
	rcu_read_lock();
	hash_for_each_rcu(mn->conns, bkt, msk, conn_node) {
		if (READ_ONCE(msk->npaths) < 2 ||
		    !refcount_inc_not_zero(&msk->sk.sk_refcnt))
			continue;
		if (now)
			mrc_paths_check_now(msk);
		else
			sk_reset_timer(&msk->sk, &msk->path_timer, jiffies);
		sock_put(&msk->sk);
	}
	rcu_read_unlock();
}

static int mrc_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct net *net = dev_net(dev);

	if (!check_net(net))
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:	/* carrier */
		mrc_planes_changed(net, true);
		if (event != NETDEV_CHANGE)
			mrc_planes_dev_event(mrc_pernet(net), dev, event == NETDEV_UP);
		break;
	}
	return NOTIFY_DONE;
}

/*
 * An address of @dev went up or down (@event): connections check their
 * paths; with default planes, a global address (@global) is a plane event.
 */
static void mrc_addr_event(struct net_device *dev, unsigned long event, int family,
			   const void *ip, bool global)
{
	struct net *net = dev_net(dev);
	struct mrc_net *mn = mrc_pernet(net);
	struct mrc_plane p;

	if (!check_net(net) || (event != NETDEV_UP && event != NETDEV_DOWN))
		return;
	mrc_planes_changed(net, false);
	if (READ_ONCE(mn->nplanes) || !global)
		return;
	mrc_plane_fill(&p, family, ip, dev->ifindex, event == NETDEV_UP && mrc_dev_usable(dev));
	mrc_nl_notify_plane(mn, &p);
}

static int mrc_inetaddr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	mrc_addr_event(ifa->ifa_dev->dev, event, AF_INET, &ifa->ifa_local,
		       ifa->ifa_scope == RT_SCOPE_UNIVERSE);
	return NOTIFY_DONE;
}

#if IS_ENABLED(CONFIG_IPV6)
static int mrc_inet6addr_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	const struct inet6_ifaddr *ifa = ptr;

	mrc_addr_event(ifa->idev->dev, event, AF_INET6, &ifa->addr, !ifa->scope);
	return NOTIFY_DONE;
}

static struct notifier_block mrc_inet6addr_nb = { .notifier_call = mrc_inet6addr_event };
#endif

static struct notifier_block mrc_netdev_nb = { .notifier_call = mrc_netdev_event };
static struct notifier_block mrc_inetaddr_nb = { .notifier_call = mrc_inetaddr_event };

int mrc_plane_init(void)
{
	int err;

	err = register_netdevice_notifier(&mrc_netdev_nb);
	if (err)
		return err;
	err = register_inetaddr_notifier(&mrc_inetaddr_nb);
	if (err)
		goto out_netdev;
#if IS_ENABLED(CONFIG_IPV6)
	err = register_inet6addr_notifier(&mrc_inet6addr_nb);
	if (err)
		goto out_inet;
#endif
	return 0;
#if IS_ENABLED(CONFIG_IPV6)
out_inet:
	unregister_inetaddr_notifier(&mrc_inetaddr_nb);
#endif
out_netdev:
	unregister_netdevice_notifier(&mrc_netdev_nb);
	return err;
}

void mrc_plane_exit(void)
{
#if IS_ENABLED(CONFIG_IPV6)
	unregister_inet6addr_notifier(&mrc_inet6addr_nb);
#endif
	unregister_inetaddr_notifier(&mrc_inetaddr_nb);
	unregister_netdevice_notifier(&mrc_netdev_nb);
}
