// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic netlink family "mrc": module information, per-namespace settings,
 * connection and path (heatmap) dumps, EV policies, planes, counters and
 * events.
 *
 * The policies and op tables are generated (netlink_gen.[ch]) from
 * Documentation/netlink/specs/mrc.yaml; this file has the handlers.
 *
 * Locking:
 *  - struct mrc_nl_net.lock (mutex) guards the policy list writers; the
 *    EV picker reads the list under RCU from softirq.
 *  - The tunnel sockets replaced by a UDP port change (old_socks) are
 *    guarded by mrc_net.tunnel_mutex, which config-set holds throughout so
 *    that a lazily created tunnel socket sees one consistent port.
 *  - Connections are found under RCU and pinned with
 *    refcount_inc_not_zero(); their fields are read under the socket lock,
 *    taken with lock_sock_fast() as TCP's tcp_get_info() takes it: a reader
 *    that owned the socket (lock_sock()) could be preempted holding it, and
 *    the connection's packets would wait in its backlog, its writing task
 *    in lock_sock(), all that time.  So nothing in between may sleep: a reply
 *    is allocated before the lock is taken.
 *    Notifications come from the transport with the socket lock held
 *    (softirq or process context) and never sleep.
 *  - Planes live in plane.c under mrc_net.lock; this file only calls
 *    mrc_plane_add(), mrc_plane_del() and mrc_planes_get().
 */
#include <linux/jhash.h>
#include <linux/sort.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "protocol.h"
#include "evtrace.h"
#include "netlink.h"
#include "netlink_gen.h"

#define MRC_NL_MAX_POLICIES	256
/* rows of one path-get snapshot: ~5 MiB of rows, 0.5 MiB of index */
#define MRC_NL_MAX_PATHS	BIT(16)
/* one connection's EVs, copied under its lock (ev_cap is 2 * ev_count) */
#define MRC_NL_SCRATCH		(2 * MRC_MAX_EVS)
/* planes listed by plane-get and searched by a plane event (default ones) */
#define MRC_NL_MAX_PLANES	64
/* a conn path nest: index, family, two addresses, ifindex, ifname, up */
#define MRC_NL_PATH_SIZE	nla_total_size(3 * nla_total_size(4) +		\
					       2 * nla_total_size(16) +		\
					       nla_total_size(IFNAMSIZ) +	\
					       nla_total_size(1))
/* a trace ev nest: port, state, hops, and each hop's ttl, address and RTT */
#define MRC_NL_TRACE_EV_SIZE	nla_total_size(3 * nla_total_size(2) +		\
					       MRC_TRACE_MAX_HOPS *		\
					       nla_total_size(nla_total_size(1) +	\
							      nla_total_size(16) +	\
							      nla_total_size(4)))

/**
 * struct mrc_nl_policy - one EV policy
 * @list: in mrc_nl_net.policies (RCU)
 * @rcu: for kfree_rcu()
 * @id: handle for policy-del, never 0
 * @family: AF_INET or AF_INET6 of @peer; 0: every peer
 * @peer: the peer (IPv4 in s6_addr32[0])
 * @port_min: first source port of the range
 * @port_max: last source port of the range
 * @action: enum mrc_policy_action
 */
struct mrc_nl_policy {
	struct list_head	list;
	struct rcu_head		rcu;
	u32			id;
	u16			family;
	struct in6_addr		peer;
	u16			port_min;
	u16			port_max;
	u8			action;
};

/* A tunnel socket replaced by a UDP port change, kept for old connections */
struct mrc_nl_oldsock {
	struct list_head	list;
	struct socket		*sock;
	int			family;
	u16			port;
};

/**
 * struct mrc_nl_net - per-namespace state of the netlink side
 * @lock: guards writers of @policies, @n_policies, @next_id
 * @policies: struct mrc_nl_policy (RCU readers)
 * @n_policies: entries in @policies
 * @next_id: id of the next policy
 * @old_socks: struct mrc_nl_oldsock (mrc_net.tunnel_mutex)
 */
struct mrc_nl_net {
	struct mutex		lock;		/* policy writers */
	struct list_head	policies;
	u32			n_policies;
	u32			next_id;
	struct list_head	old_socks;
};

static unsigned int mrc_nl_net_id __read_mostly;

static struct mrc_nl_net *mrc_nl_pernet(const struct net *net)
{
	return net_generic(net, mrc_nl_net_id);
}

/* ---- addresses ---------------------------------------------------------- */

static void mrc_nl_addr_key(const union mrc_addr *a, struct in6_addr *key)
{
	if (a->sa.sa_family == AF_INET6) {
		*key = a->v6.sin6_addr;
	} else {
		memset(key, 0, sizeof(*key));
		key->s6_addr32[0] = a->v4.sin_addr.s_addr;
	}
}

static int mrc_nl_put_addr(struct sk_buff *skb, int type, int family, const struct in6_addr *a)
{
	if (family == AF_INET6)
		return nla_put_in6_addr(skb, type, a);
	return nla_put_in_addr(skb, type, a->s6_addr32[0]);
}

static int mrc_nl_put_sockaddr(struct sk_buff *skb, int type, const union mrc_addr *a)
{
	struct in6_addr key;

	mrc_nl_addr_key(a, &key);
	return mrc_nl_put_addr(skb, type, a->sa.sa_family, &key);
}

static u16 mrc_nl_port(const union mrc_addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->v6.sin6_port : a->v4.sin_port);
}

/* Two addresses are the same (family and address; ports ignored). */
static bool mrc_nl_addr_same(const union mrc_addr *a, const union mrc_addr *b)
{
	struct in6_addr ka, kb;

	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	mrc_nl_addr_key(a, &ka);
	mrc_nl_addr_key(b, &kb);
	return ipv6_addr_equal(&ka, &kb);
}

/*
 * @ifindex as @idx_type and, while the device exists, its name as
 * @name_type.  The name is copied under RCU without the rename lock (not
 * exported): a rename racing with it may show the old name.
 */
static int mrc_nl_put_dev(struct sk_buff *skb, struct net *net, int ifindex, int idx_type,
			  int name_type)
{
	char name[IFNAMSIZ] = "";
	struct net_device *dev;

	if (nla_put_u32(skb, idx_type, ifindex))
		return -EMSGSIZE;
	if (ifindex <= 0)
		return 0;
	rcu_read_lock();
	dev = dev_get_by_index_rcu(net, ifindex);
	if (dev)
		strscpy(name, dev->name, sizeof(name));
	rcu_read_unlock();
	if (name[0] && nla_put_string(skb, name_type, name))
		return -EMSGSIZE;
	return 0;
}

/* An address attribute of 4 (IPv4) or 16 (IPv6) bytes. */
static int mrc_nl_get_addr(const struct nlattr *attr, struct in6_addr *a,
			   struct netlink_ext_ack *extack)
{
	memset(a, 0, sizeof(*a));
	switch (nla_len(attr)) {
	case 4:
		a->s6_addr32[0] = nla_get_in_addr(attr);
		return AF_INET;
	case 16:
		*a = nla_get_in6_addr(attr);
		return AF_INET6;
	}
	NL_SET_ERR_MSG_ATTR(extack, attr, "address must be 4 (IPv4) or 16 (IPv6) bytes");
	return -EINVAL;
}

/* ---- info ---------------------------------------------------------------- */

int mrc_nl_info_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	u32 features = MRC_FEATURE_SEQPACKET | MRC_FEATURE_MULTIPATH | MRC_FEATURE_ECN |
		       MRC_FEATURE_EV_POLICY | MRC_FEATURE_EVENTS;
	struct sk_buff *msg;
	void *hdr;

	if (IS_ENABLED(CONFIG_IPV6))
		features |= MRC_FEATURE_IPV6;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	if (nla_put_u32(msg, MRC_A_INFO_VERSION, MRC_VERSION) ||
	    nla_put_u32(msg, MRC_A_INFO_FAMILY, mrc_family_nr) ||
	    nla_put_u16(msg, MRC_A_INFO_UDP_PORT, READ_ONCE(mn->cfg.udp_port)) ||
	    nla_put_u32(msg, MRC_A_INFO_FEATURES, features) ||
	    nla_put_u32(msg, MRC_A_INFO_MAX_EVS, MRC_MAX_EVS))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---- config -------------------------------------------------------------- */

int mrc_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_config *c = &mrc_pernet(genl_info_net(info))->cfg;
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	if (nla_put_u16(msg, MRC_A_CONFIG_UDP_PORT, READ_ONCE(c->udp_port)) ||
	    nla_put_u16(msg, MRC_A_CONFIG_EV_COUNT, READ_ONCE(c->ev_count)) ||
	    nla_put_u16(msg, MRC_A_CONFIG_EV_PORT_MIN, READ_ONCE(c->ev_port_min)) ||
	    nla_put_u16(msg, MRC_A_CONFIG_EV_PORT_MAX, READ_ONCE(c->ev_port_max)) ||
	    nla_put_u8(msg, MRC_A_CONFIG_RETIRE_LOSSES, READ_ONCE(c->retire_losses)) ||
	    nla_put_u8(msg, MRC_A_CONFIG_ECN, READ_ONCE(c->ecn)) ||
	    nla_put_u8(msg, MRC_A_CONFIG_REDUNDANCY, READ_ONCE(c->redundancy)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_PROBE_INTERVAL_MS, READ_ONCE(c->probe_interval_ms)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_MIN_RTO_US, READ_ONCE(c->min_rto_us)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_MAX_RTO_US, READ_ONCE(c->max_rto_us)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_INIT_CWND, READ_ONCE(c->init_cwnd)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_USER_TIMEOUT_MS, READ_ONCE(c->user_timeout_ms)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_DCTCP_SHIFT, READ_ONCE(c->dctcp_shift)) ||
	    nla_put_u32(msg, MRC_A_CONFIG_DELAY_TARGET_US, READ_ONCE(c->delay_target_us)) ||
	    nla_put_u8(msg, MRC_A_CONFIG_URGENT_DSCP, READ_ONCE(c->urgent_dscp)) ||
	    nla_put_u8(msg, MRC_A_CONFIG_BURST_MAX, READ_ONCE(c->burst_max)))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/**
 * mrc_nl_tunnel_move() - put the namespace's tunnel sockets on a new port
 * @mn: namespace state
 * @port: the new UDP port
 * @extack: for the error message
 *
 * Each existing tunnel socket is replaced by one on @port (or by an older
 * one kept on that port), and is itself kept open so that the connections
 * whose peers send to the old port keep receiving.  Families without a
 * tunnel socket get theirs lazily from mrc_tunnel_get() on the new port.
 * Nothing changes on failure.
 *
 * Context: process, mn->tunnel_mutex held.
 * Return: 0 or a negative errno.
 */
static int mrc_nl_tunnel_move(struct mrc_net *mn, u16 port, struct netlink_ext_ack *extack)
{
	static const int families[2] = { AF_INET, AF_INET6 };
	struct mrc_nl_net *nn = mrc_nl_pernet(mn->net);
	struct mrc_nl_oldsock *reuse[2] = {}, *keep[2] = {}, *o;
	struct socket *new[2] = {}, *old;
	struct socket __rcu **slot;
	int i, err = 0;

	lockdep_assert_held(&mn->tunnel_mutex);
	for (i = 0; i < 2; i++) {
		slot = families[i] == AF_INET6 ? &mn->udp6 : &mn->udp4;
		if (!rcu_access_pointer(*slot))
			continue;
		keep[i] = kzalloc(sizeof(*keep[i]), GFP_KERNEL);
		if (!keep[i]) {
			err = -ENOMEM;
			goto fail;
		}
		list_for_each_entry(o, &nn->old_socks, list) {
			if (o->family == families[i] && o->port == port) {
				reuse[i] = o;
				new[i] = o->sock;
				break;
			}
		}
		if (new[i])
			continue;
		new[i] = mrc_tunnel_create(mn, families[i], port);
		if (IS_ERR(new[i])) {
			err = PTR_ERR(new[i]);
			new[i] = NULL;
			NL_SET_ERR_MSG_FMT(extack,
					   "cannot open the %s tunnel socket on UDP port %u",
					   families[i] == AF_INET6 ? "IPv6" : "IPv4", port);
			goto fail;
		}
	}
	for (i = 0; i < 2; i++) {
		if (!new[i])
			continue;
		slot = families[i] == AF_INET6 ? &mn->udp6 : &mn->udp4;
		old = rcu_replace_pointer(*slot, new[i], lockdep_is_held(&mn->tunnel_mutex));
		keep[i]->sock = old;
		keep[i]->family = families[i];
		keep[i]->port = ntohs(inet_sk(old->sk)->inet_sport);
		list_add_tail(&keep[i]->list, &nn->old_socks);
		if (reuse[i]) {
			list_del(&reuse[i]->list);
			kfree(reuse[i]);
		}
	}
	return 0;
fail:
	for (i = 0; i < 2; i++) {
		if (new[i] && !reuse[i])
			udp_tunnel_sock_release(new[i]);
		kfree(keep[i]);
	}
	return err;
}

int mrc_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct mrc_config c;
	int err = 0;

	mutex_lock(&mn->tunnel_mutex);
	spin_lock_bh(&mn->lock);
	c = mn->cfg;
	spin_unlock_bh(&mn->lock);

	if (tb[MRC_A_CONFIG_UDP_PORT])
		c.udp_port = nla_get_u16(tb[MRC_A_CONFIG_UDP_PORT]);
	if (tb[MRC_A_CONFIG_EV_COUNT])
		c.ev_count = nla_get_u16(tb[MRC_A_CONFIG_EV_COUNT]);
	if (tb[MRC_A_CONFIG_EV_PORT_MIN])
		c.ev_port_min = nla_get_u16(tb[MRC_A_CONFIG_EV_PORT_MIN]);
	if (tb[MRC_A_CONFIG_EV_PORT_MAX])
		c.ev_port_max = nla_get_u16(tb[MRC_A_CONFIG_EV_PORT_MAX]);
	if (tb[MRC_A_CONFIG_RETIRE_LOSSES])
		c.retire_losses = nla_get_u8(tb[MRC_A_CONFIG_RETIRE_LOSSES]);
	if (tb[MRC_A_CONFIG_ECN])
		c.ecn = nla_get_u8(tb[MRC_A_CONFIG_ECN]);
	if (tb[MRC_A_CONFIG_REDUNDANCY])
		c.redundancy = nla_get_u8(tb[MRC_A_CONFIG_REDUNDANCY]);
	if (tb[MRC_A_CONFIG_PROBE_INTERVAL_MS])
		c.probe_interval_ms = nla_get_u32(tb[MRC_A_CONFIG_PROBE_INTERVAL_MS]);
	if (tb[MRC_A_CONFIG_MIN_RTO_US])
		c.min_rto_us = nla_get_u32(tb[MRC_A_CONFIG_MIN_RTO_US]);
	if (tb[MRC_A_CONFIG_MAX_RTO_US])
		c.max_rto_us = nla_get_u32(tb[MRC_A_CONFIG_MAX_RTO_US]);
	if (tb[MRC_A_CONFIG_INIT_CWND])
		c.init_cwnd = nla_get_u32(tb[MRC_A_CONFIG_INIT_CWND]);
	if (tb[MRC_A_CONFIG_USER_TIMEOUT_MS])
		c.user_timeout_ms = nla_get_u32(tb[MRC_A_CONFIG_USER_TIMEOUT_MS]);
	if (tb[MRC_A_CONFIG_DCTCP_SHIFT])
		c.dctcp_shift = nla_get_u32(tb[MRC_A_CONFIG_DCTCP_SHIFT]);
	if (tb[MRC_A_CONFIG_DELAY_TARGET_US])
		c.delay_target_us = nla_get_u32(tb[MRC_A_CONFIG_DELAY_TARGET_US]);
	if (tb[MRC_A_CONFIG_URGENT_DSCP])
		c.urgent_dscp = nla_get_u8(tb[MRC_A_CONFIG_URGENT_DSCP]);
	if (tb[MRC_A_CONFIG_BURST_MAX])
		c.burst_max = nla_get_u8(tb[MRC_A_CONFIG_BURST_MAX]);

	/* checks across attributes, on the resulting settings */
	if (c.ev_count > MRC_MAX_EVS) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_CONFIG_EV_COUNT],
				    "ev-count above the maximum");
		err = -EINVAL;
	} else if (c.ev_port_min > c.ev_port_max) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_CONFIG_EV_PORT_MIN] ?:
				    tb[MRC_A_CONFIG_EV_PORT_MAX],
				    "ev-port-min is above ev-port-max");
		err = -EINVAL;
	} else if (c.ev_port_max - c.ev_port_min + 1 < c.ev_count) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_CONFIG_EV_COUNT] ?:
				    tb[MRC_A_CONFIG_EV_PORT_MIN] ?: tb[MRC_A_CONFIG_EV_PORT_MAX],
				    "EV source-port range holds fewer ports than ev-count");
		err = -EINVAL;
	} else if (c.min_rto_us > c.max_rto_us) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_CONFIG_MIN_RTO_US] ?:
				    tb[MRC_A_CONFIG_MAX_RTO_US],
				    "min-rto-us is above max-rto-us");
		err = -EINVAL;
	}
	if (err)
		goto out;

	if (c.udp_port != mn->cfg.udp_port) {
		err = mrc_nl_tunnel_move(mn, c.udp_port, extack);
		if (err)
			goto out;
	}

	spin_lock_bh(&mn->lock);
	WRITE_ONCE(mn->cfg.udp_port, c.udp_port);
	WRITE_ONCE(mn->cfg.ev_count, c.ev_count);
	WRITE_ONCE(mn->cfg.ev_port_min, c.ev_port_min);
	WRITE_ONCE(mn->cfg.ev_port_max, c.ev_port_max);
	WRITE_ONCE(mn->cfg.retire_losses, c.retire_losses);
	WRITE_ONCE(mn->cfg.ecn, c.ecn);
	WRITE_ONCE(mn->cfg.redundancy, c.redundancy);
	WRITE_ONCE(mn->cfg.probe_interval_ms, c.probe_interval_ms);
	WRITE_ONCE(mn->cfg.min_rto_us, c.min_rto_us);
	WRITE_ONCE(mn->cfg.max_rto_us, c.max_rto_us);
	WRITE_ONCE(mn->cfg.init_cwnd, c.init_cwnd);
	WRITE_ONCE(mn->cfg.user_timeout_ms, c.user_timeout_ms);
	WRITE_ONCE(mn->cfg.dctcp_shift, c.dctcp_shift);
	WRITE_ONCE(mn->cfg.delay_target_us, c.delay_target_us);
	WRITE_ONCE(mn->cfg.urgent_dscp, c.urgent_dscp);
	WRITE_ONCE(mn->cfg.burst_max, c.burst_max);
	spin_unlock_bh(&mn->lock);
out:
	mutex_unlock(&mn->tunnel_mutex);
	return err;
}

/* ---- connections -------------------------------------------------------- */

struct mrc_nl_conn_ctx {
	u32	bucket;
	u32	idx;		/* entries of @bucket already visited */
};

/*
 * The next connection of the table after (*bucket, *idx), with a reference;
 * with @owner, the next one of that user's sockets (the others are not
 * touched).  Context: process.
 */
static struct mrc_sock *mrc_nl_conn_next(struct mrc_net *mn, u32 *bucket, u32 *idx,
					 const kuid_t *owner)
{
	struct mrc_sock *msk;
	u32 i;

	rcu_read_lock();
	for (; *bucket < HASH_SIZE(mn->conns); (*bucket)++, *idx = 0) {
		i = 0;
		hlist_for_each_entry_rcu(msk, &mn->conns[*bucket], conn_node) {
			if (i++ < *idx)
				continue;
			*idx = i;
			/* sk_uid changes once, at accept (sock_graft()) */
			if (owner && !uid_eq(READ_ONCE(msk->sk.sk_uid), *owner))
				continue;
			if (!refcount_inc_not_zero(&msk->sk.sk_refcnt))
				continue;
			rcu_read_unlock();
			return msk;
		}
	}
	rcu_read_unlock();
	return NULL;
}

static int mrc_nl_put_ev(struct sk_buff *skb, const struct mrc_ev *ev)
{
	struct nlattr *nest = nla_nest_start(skb, MRC_A_CONN_EV);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u16(skb, MRC_A_EV_PORT, ev->port) ||
	    nla_put_u8(skb, MRC_A_EV_STATE, ev->state) ||
	    nla_put_u8(skb, MRC_A_EV_LOSSES, ev->losses) ||
	    nla_put_u32(skb, MRC_A_EV_WEIGHT, ev->weight) ||
	    nla_put_u32(skb, MRC_A_EV_SRTT_US, ev->srtt_us) ||
	    nla_put_u32(skb, MRC_A_EV_MIN_RTT_US, ev->min_rtt_us) ||
	    nla_put_u32(skb, MRC_A_EV_IN_FLIGHT, ev->in_flight) ||
	    nla_put_u32(skb, MRC_A_EV_SENT, ev->sent) ||
	    nla_put_u32(skb, MRC_A_EV_DELIVERED, ev->delivered) ||
	    nla_put_u32(skb, MRC_A_EV_LOST, ev->lost) ||
	    nla_put_u32(skb, MRC_A_EV_CE, ev->ce) ||
	    nla_put_u8(skb, MRC_A_EV_PATH, ev->path)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* One path of a connection: a conn path nest. */
static int mrc_nl_put_path(struct sk_buff *skb, struct net *net, const struct mrc_path *p,
			   u8 index)
{
	struct nlattr *nest = nla_nest_start(skb, MRC_A_CONN_PATH);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u8(skb, MRC_A_CONN_PATH_INDEX, index) ||
	    nla_put_u16(skb, MRC_A_CONN_PATH_FAMILY, p->local.sa.sa_family) ||
	    mrc_nl_put_sockaddr(skb, MRC_A_CONN_PATH_LOCAL_ADDR, &p->local) ||
	    mrc_nl_put_sockaddr(skb, MRC_A_CONN_PATH_REMOTE_ADDR, &p->remote) ||
	    mrc_nl_put_dev(skb, net, p->ifindex, MRC_A_CONN_PATH_IFINDEX,
			   MRC_A_CONN_PATH_IFNAME) ||
	    nla_put_u8(skb, MRC_A_CONN_PATH_UP, p->up)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Identity of a connection: IDs, addresses, ports, state. */
static int mrc_nl_put_conn_id(struct sk_buff *skb, const struct mrc_sock *msk)
{
	if (nla_put_u32(skb, MRC_A_CONN_LOCAL_ID, msk->local_id) ||
	    nla_put_u32(skb, MRC_A_CONN_REMOTE_ID, msk->remote_id) ||
	    nla_put_u16(skb, MRC_A_CONN_FAMILY, msk->remote.sa.sa_family) ||
	    mrc_nl_put_sockaddr(skb, MRC_A_CONN_LOCAL_ADDR, &msk->local) ||
	    mrc_nl_put_sockaddr(skb, MRC_A_CONN_REMOTE_ADDR, &msk->remote) ||
	    nla_put_u16(skb, MRC_A_CONN_LOCAL_PORT, mrc_nl_port(&msk->local)) ||
	    nla_put_u16(skb, MRC_A_CONN_REMOTE_PORT, mrc_nl_port(&msk->remote)) ||
	    nla_put_u8(skb, MRC_A_CONN_STATE, READ_ONCE(msk->state)))
		return -EMSGSIZE;
	return 0;
}

/*
 * One conn-get message.  @trunc_evs: when the EV table does not fit, end it
 * early instead of failing (the message is alone in its skb).
 * Context: the socket lock held (lock_sock_fast(): perhaps BH off, no sleep).
 */
static int mrc_nl_fill_conn(struct sk_buff *skb, struct mrc_sock *msk, u32 portid, u32 seq,
			    int flags, bool trunc_evs)
{
	const struct mrc_info *st = &msk->stats;
	void *hdr;
	u32 i;

	hdr = genlmsg_put(skb, portid, seq, &mrc_nl_family, flags, MRC_CMD_CONN_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (mrc_nl_put_conn_id(skb, msk) ||
	    nla_put_u16(skb, MRC_A_CONN_UDP_DPORT, msk->udp_dport) ||
	    nla_put_u32(skb, MRC_A_CONN_EV_COUNT, msk->ev_count) ||
	    nla_put_u32(skb, MRC_A_CONN_CWND, msk->cc.cwnd) ||
	    nla_put_u32(skb, MRC_A_CONN_IN_FLIGHT, msk->in_flight) ||
	    nla_put_u32(skb, MRC_A_CONN_SND_WND, msk->snd_wnd) ||
	    nla_put_u32(skb, MRC_A_CONN_MSS, msk->mss) ||
	    nla_put_u32(skb, MRC_A_CONN_SRTT_US, msk->rtt.srtt_us) ||
	    nla_put_u32(skb, MRC_A_CONN_RTTVAR_US, msk->rtt.rttvar_us) ||
	    nla_put_u32(skb, MRC_A_CONN_MIN_RTT_US, msk->rtt.min_rtt_us) ||
	    nla_put_u32(skb, MRC_A_CONN_RTO_US, mrc_rtt_rto(&msk->rtt, msk->backoff)) ||
	    nla_put_uint(skb, MRC_A_CONN_BYTES_SENT, st->bytes_sent) ||
	    nla_put_uint(skb, MRC_A_CONN_BYTES_ACKED, st->bytes_acked) ||
	    nla_put_uint(skb, MRC_A_CONN_BYTES_RECEIVED, st->bytes_received) ||
	    nla_put_uint(skb, MRC_A_CONN_PACKETS_SENT, st->packets_sent) ||
	    nla_put_uint(skb, MRC_A_CONN_PACKETS_RECEIVED, st->packets_received) ||
	    nla_put_uint(skb, MRC_A_CONN_RETRANSMITS, st->retransmits) ||
	    nla_put_uint(skb, MRC_A_CONN_PACKETS_LOST, st->packets_lost) ||
	    nla_put_uint(skb, MRC_A_CONN_RTO_EVENTS, st->rto_events))
		goto cancel;
	/* the paths first: the EV table may be cut short, they may not */
	for (i = 0; i < min_t(u32, msk->npaths, MRC_MAX_PATHS); i++)
		if (mrc_nl_put_path(skb, sock_net(&msk->sk), &msk->paths[i], i))
			goto cancel;
	for (i = 0; msk->evs && i < msk->ev_cap; i++) {
		if (msk->evs[i].state == MRC_EV_FREE)
			continue;
		if (mrc_nl_put_ev(skb, &msk->evs[i])) {
			if (trunc_evs)
				break;
			goto cancel;
		}
	}
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The connection a request's local-id attribute names, with a reference. */
static struct mrc_sock *mrc_nl_conn_ref(struct mrc_net *mn, struct genl_info *info, int attr)
{
	struct mrc_sock *msk;

	rcu_read_lock();
	msk = mrc_lookup_conn(mn, nla_get_u32(info->attrs[attr]));
	if (msk && !refcount_inc_not_zero(&msk->sk.sk_refcnt))
		msk = NULL;
	rcu_read_unlock();
	if (!msk)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr],
				    "no connection with this local-id");
	return msk;
}

int mrc_nl_conn_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	struct mrc_sock *msk;
	struct sk_buff *msg;
	bool again = false;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_CONN_LOCAL_ID))
		return -EINVAL;
	msk = mrc_nl_conn_ref(mn, info, MRC_A_CONN_LOCAL_ID);
	if (!msk)
		return -ENOENT;
	do {
		/*
		 * Sized before the lock, which may not sleep; if the table grew
		 * meanwhile, once more for the largest one.
		 */
		u32 cap = again ? MRC_NL_SCRATCH : READ_ONCE(msk->ev_cap);
		size_t size;
		bool slow;

		size = NLMSG_GOODSIZE + MRC_MAX_PATHS * MRC_NL_PATH_SIZE +
		       (size_t)cap * nla_total_size(12 * nla_total_size(4));
		msg = genlmsg_new(size, GFP_KERNEL);
		if (!msg) {
			err = -ENOMEM;
			break;
		}
		slow = lock_sock_fast(&msk->sk);
		err = msk->ev_cap > cap ? -EAGAIN :
		      mrc_nl_fill_conn(msg, msk, info->snd_portid, info->snd_seq, 0, false);
		unlock_sock_fast(&msk->sk, slow);
		if (err)
			nlmsg_free(msg);
		again = true;
	} while (err == -EAGAIN);
	sock_put(&msk->sk);
	if (err)
		return err;
	return genlmsg_reply(msg, info);
}

int mrc_nl_ev_trace_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	u8 max_ttl = MRC_TRACE_DEF_TTL;
	struct mrc_sock *msk;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_TRACE_LOCAL_ID))
		return -EINVAL;
	if (info->attrs[MRC_A_TRACE_MAX_TTL])
		max_ttl = nla_get_u8(info->attrs[MRC_A_TRACE_MAX_TTL]);
	msk = mrc_nl_conn_ref(mn, info, MRC_A_TRACE_LOCAL_ID);
	if (!msk)
		return -ENOENT;
	lock_sock(&msk->sk);
	err = mrc_trace_start(msk, max_ttl);
	release_sock(&msk->sk);
	sock_put(&msk->sk);
	if (err == -ENOTCONN)
		NL_SET_ERR_MSG(info->extack, "the connection is not established");
	return err;
}

static int mrc_nl_put_trace_ev(struct sk_buff *skb, const struct mrc_ev_trace *t, int family)
{
	struct nlattr *nest = nla_nest_start(skb, MRC_A_TRACE_EV), *hop;
	static const __be32 none[4];
	u8 i;

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u16(skb, MRC_A_TRACE_EV_PORT, t->port) ||
	    nla_put_u8(skb, MRC_A_TRACE_EV_STATE, t->state) ||
	    nla_put_u8(skb, MRC_A_TRACE_EV_HOPS, t->nhops))
		goto cancel;
	for (i = 0; i < t->nhops; i++) {
		const struct mrc_trace_hop *h = &t->hop[i];

		hop = nla_nest_start(skb, MRC_A_TRACE_EV_HOP);
		if (!hop || nla_put_u8(skb, MRC_A_TRACE_HOP_TTL, i + 1))
			goto cancel;
		if (memcmp(h->addr, none, sizeof(none)) &&
		    (nla_put(skb, MRC_A_TRACE_HOP_ADDR, family == AF_INET ? 4 : 16, h->addr) ||
		     nla_put_u32(skb, MRC_A_TRACE_HOP_RTT_US, h->rtt_us)))
			goto cancel;
		nla_nest_end(skb, hop);
	}
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

int mrc_nl_ev_trace_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	struct mrc_ev_trace *evs;
	struct sk_buff *msg;
	struct mrc_sock *msk;
	bool running;
	void *hdr;
	int n, i, family;
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_TRACE_LOCAL_ID))
		return -EINVAL;
	msk = mrc_nl_conn_ref(mn, info, MRC_A_TRACE_LOCAL_ID);
	if (!msk)
		return -ENOENT;
	evs = kvmalloc_array(MRC_MAX_EVS, sizeof(*evs), GFP_KERNEL);
	if (!evs) {
		sock_put(&msk->sk);
		return -ENOMEM;
	}
	lock_sock(&msk->sk);
	n = mrc_trace_copy(msk, evs, &running);
	family = msk->family;
	id = msk->local_id;
	release_sock(&msk->sk);
	sock_put(&msk->sk);
	if (n < 0) {
		NL_SET_ERR_MSG(info->extack, "the connection was never traced (ev-trace)");
		kvfree(evs);
		return n;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE + (size_t)n * MRC_NL_TRACE_EV_SIZE, GFP_KERNEL);
	if (!msg) {
		kvfree(evs);
		return -ENOMEM;
	}
	hdr = genlmsg_iput(msg, info);
	if (!hdr || nla_put_u32(msg, MRC_A_TRACE_LOCAL_ID, id) ||
	    (running && nla_put_flag(msg, MRC_A_TRACE_RUNNING)))
		goto too_big;
	for (i = 0; i < n; i++)
		if (mrc_nl_put_trace_ev(msg, &evs[i], family))
			goto too_big;
	kvfree(evs);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
too_big:
	kvfree(evs);
	nlmsg_free(msg);
	return -EMSGSIZE;
}

int mrc_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mrc_nl_conn_ctx *ctx = (void *)cb->ctx;
	struct mrc_net *mn = mrc_pernet(sock_net(skb->sk));
	struct mrc_sock *msk;
	int err;

	NL_ASSERT_DUMP_CTX_FITS(struct mrc_nl_conn_ctx);
	while ((msk = mrc_nl_conn_next(mn, &ctx->bucket, &ctx->idx, NULL))) {
		bool alone = skb->len == 0, slow;

		slow = lock_sock_fast(&msk->sk);
		err = mrc_nl_fill_conn(skb, msk, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				       NLM_F_MULTI, alone);
		unlock_sock_fast(&msk->sk, slow);
		sock_put(&msk->sk);
		if (err) {
			if (alone)	/* cannot fit even alone: skip it */
				continue;
			ctx->idx--;	/* again in the next skb */
			break;
		}
	}
	return skb->len;
}

/* ---- path heatmap -------------------------------------------------------- */

struct mrc_nl_path {
	struct in6_addr	peer;
	u16		family;
	u16		port;
	u32		conns;
	u32		retired;
	u32		srtt_n;		/* connections with an RTT sample */
	u64		srtt_sum;
	u32		min_rtt_us;
	u32		in_flight;
	u64		sent;
	u64		delivered;
	u64		lost;
	u64		ce;
};

/**
 * struct mrc_nl_paths - the snapshot of one path-get dump
 * @p: the rows, @n used of @cap (a power of two, at most MRC_NL_MAX_PATHS)
 * @slot: open-addressing index of @p while it is built: 2 * @cap slots, each
 *	an index into @p plus one, 0 when free; NULL once sorted
 * @n: rows in @p
 * @cap: room in @p
 * @pos: next row to emit
 *
 * Owned by one dump (netlink's cb_mutex serialises its callbacks): no lock.
 * Every allocation is charged to the caller's memory cgroup.
 */
struct mrc_nl_paths {
	struct mrc_nl_path	*p;
	u32			*slot;
	u32			n;
	u32			cap;
	u32			pos;
};

struct mrc_nl_path_ctx {
	struct mrc_nl_paths	*paths;
};

static int mrc_nl_path_cmp(const void *a, const void *b)
{
	const struct mrc_nl_path *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	r = memcmp(&x->peer, &y->peer, sizeof(x->peer));
	if (r)
		return r;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return 0;
}

static u32 mrc_nl_path_hash(const struct mrc_nl_path *p)
{
	return jhash(&p->peer, sizeof(p->peer), (u32)p->family << 16 | p->port);
}

/* Folds the counters of @a into the row @d of the same (peer, port). */
static void mrc_nl_path_merge(struct mrc_nl_path *d, const struct mrc_nl_path *a)
{
	d->conns += a->conns;
	d->retired += a->retired;
	d->srtt_n += a->srtt_n;
	d->srtt_sum += a->srtt_sum;
	if (a->min_rtt_us && (!d->min_rtt_us || a->min_rtt_us < d->min_rtt_us))
		d->min_rtt_us = a->min_rtt_us;
	d->in_flight += a->in_flight;
	d->sent += a->sent;
	d->delivered += a->delivered;
	d->lost += a->lost;
	d->ce += a->ce;
}

static void mrc_nl_paths_free(struct mrc_nl_paths *paths)
{
	if (!paths)
		return;
	kvfree(paths->slot);
	kvfree(paths->p);
	kfree(paths);
}

/*
 * Gives @paths room for twice as many rows (or its first 64) and rebuilds
 * the index.  Context: process, no socket lock held (sleeps).
 * Return: 0, -ENOMEM, or -E2BIG past MRC_NL_MAX_PATHS rows.
 */
static int mrc_nl_paths_grow(struct mrc_nl_paths *paths)
{
	u32 cap = paths->cap ? paths->cap * 2 : 64, mask = 2 * cap - 1, i, h;
	struct mrc_nl_path *p;
	u32 *slot;

	if (cap > MRC_NL_MAX_PATHS)
		return -E2BIG;
	p = kvmalloc_array(cap, sizeof(*p), GFP_KERNEL_ACCOUNT);
	slot = kvcalloc(2 * cap, sizeof(*slot), GFP_KERNEL_ACCOUNT);
	if (!p || !slot) {
		kvfree(p);
		kvfree(slot);
		return -ENOMEM;
	}
	if (paths->n)
		memcpy(p, paths->p, paths->n * sizeof(*p));
	for (i = 0; i < paths->n; i++) {
		for (h = mrc_nl_path_hash(&p[i]) & mask; slot[h]; h = (h + 1) & mask)
			;
		slot[h] = i + 1;
	}
	kvfree(paths->p);
	kvfree(paths->slot);
	paths->p = p;
	paths->slot = slot;
	paths->cap = cap;
	return 0;
}

/*
 * Adds one EV's row: folded into the row of its (peer, port), or a new row.
 * Context: process, no socket lock held.
 */
static int mrc_nl_paths_add(struct mrc_nl_paths *paths, const struct mrc_nl_path *a)
{
	u32 mask, h;
	int err;

again:
	mask = 2 * paths->cap - 1;
	for (h = mrc_nl_path_hash(a) & mask; paths->slot[h]; h = (h + 1) & mask) {
		struct mrc_nl_path *d = &paths->p[paths->slot[h] - 1];

		if (!mrc_nl_path_cmp(d, a)) {
			mrc_nl_path_merge(d, a);
			return 0;
		}
	}
	if (paths->n == paths->cap) {
		err = mrc_nl_paths_grow(paths);
		if (err)
			return err;
		goto again;
	}
	paths->p[paths->n] = *a;
	paths->slot[h] = ++paths->n;
	return 0;
}

/*
 * Copies the EVs of one connection into @rows (room for MRC_NL_SCRATCH).
 * Context: the socket lock held (lock_sock_fast()); allocates nothing.
 * Return: the number of rows written.
 */
static u32 mrc_nl_paths_snap(struct mrc_sock *msk, struct mrc_nl_path *rows)
{
	struct in6_addr peer;
	u32 i, n = 0;

	sock_owned_by_me(&msk->sk);
	for (i = 0; msk->evs && i < msk->ev_cap && n < MRC_NL_SCRATCH; i++) {
		const struct mrc_ev *ev = &msk->evs[i];
		/* the peer address of the EV's path: rows group by plane */
		const union mrc_addr *remote = ev->path && ev->path < msk->npaths ?
					       &msk->paths[ev->path].remote : &msk->remote;

		if (ev->state == MRC_EV_FREE)
			continue;
		mrc_nl_addr_key(remote, &peer);
		rows[n++] = (struct mrc_nl_path){
			.peer		= peer,
			.family		= remote->sa.sa_family,
			.port		= ev->port,
			.conns		= 1,
			.retired	= ev->state == MRC_EV_RETIRED,
			.srtt_n		= !!ev->srtt_us,
			.srtt_sum	= ev->srtt_us,
			.min_rtt_us	= ev->min_rtt_us,
			.in_flight	= ev->in_flight,
			.sent		= ev->sent,
			.delivered	= ev->delivered,
			.lost		= ev->lost,
			.ce		= ev->ce,
		};
	}
	return n;
}

/**
 * mrc_nl_path_get_start() - snapshot the namespace's EVs for a path-get dump
 * @cb: the dump
 *
 * Each connection's EVs are copied under its socket lock into a fixed
 * scratch array, then folded into the snapshot with no socket lock held, so
 * the snapshot grows (and may sleep) outside every other user's lock.  The
 * snapshot holds at most MRC_NL_MAX_PATHS distinct (peer, port) rows, all
 * charged to the caller's memory cgroup; more fail the dump with E2BIG (a
 * peer-addr filter always fits: one peer has at most 65536 ports).
 *
 * The dump is open to anyone, but a caller without CAP_NET_ADMIN over the
 * namespace gets the rows of its own connections only (sockets of its uid,
 * as getsockopt(MRC_PATH_INFO) on them would): the walk takes each
 * connection's socket lock, which its softirq receive then spins on, and a
 * user looping dumps would otherwise hold up every connection of the
 * namespace.  Others' connections are skipped under RCU, untouched.
 *
 * Context: process.
 * Return: 0 or a negative errno.
 */
int mrc_nl_path_get_start(struct netlink_callback *cb)
{
	const struct genl_info *info = genl_info_dump(cb);
	struct mrc_nl_path_ctx *ctx = (void *)cb->ctx;
	struct mrc_net *mn = mrc_pernet(sock_net(cb->skb->sk));
	struct nlattr *filter = info->attrs[MRC_A_PATH_PEER_ADDR];
	struct mrc_nl_path *scratch = NULL;
	const kuid_t *owner = NULL;
	struct mrc_nl_paths *paths;
	struct in6_addr want, peer;
	struct mrc_sock *msk;
	u32 bucket = 0, idx = 0, n, i;
	int family = 0, err;

	NL_ASSERT_DUMP_CTX_FITS(struct mrc_nl_path_ctx);
	if (!netlink_ns_capable(cb->skb, sock_net(cb->skb->sk)->user_ns, CAP_NET_ADMIN))
		owner = &NETLINK_CREDS(cb->skb)->uid;
	if (filter) {
		family = mrc_nl_get_addr(filter, &want, cb->extack);
		if (family < 0)
			return family;
	}
	paths = kzalloc(sizeof(*paths), GFP_KERNEL_ACCOUNT);
	if (!paths)
		return -ENOMEM;
	err = mrc_nl_paths_grow(paths);
	if (!err) {
		scratch = kvmalloc_array(MRC_NL_SCRATCH, sizeof(*scratch), GFP_KERNEL_ACCOUNT);
		if (!scratch)
			err = -ENOMEM;
	}
	while (!err && (msk = mrc_nl_conn_next(mn, &bucket, &idx, owner))) {
		bool slow;

		n = 0;
		slow = lock_sock_fast(&msk->sk);
		mrc_nl_addr_key(&msk->remote, &peer);
		if (!family || (msk->remote.sa.sa_family == family &&
				ipv6_addr_equal(&peer, &want)))
			n = mrc_nl_paths_snap(msk, scratch);
		unlock_sock_fast(&msk->sk, slow);
		sock_put(&msk->sk);
		for (i = 0; i < n && !err; i++)
			err = mrc_nl_paths_add(paths, &scratch[i]);
		cond_resched();
	}
	kvfree(scratch);
	if (err) {
		if (err == -E2BIG)
			NL_SET_ERR_MSG_FMT(cb->extack,
					   "more than %lu paths: ask for one peer-addr at a time",
					   MRC_NL_MAX_PATHS);
		mrc_nl_paths_free(paths);
		return err;
	}
	kvfree(paths->slot);
	paths->slot = NULL;
	sort(paths->p, paths->n, sizeof(paths->p[0]), mrc_nl_path_cmp, NULL);
	ctx->paths = paths;
	return 0;
}

int mrc_nl_path_get_done(struct netlink_callback *cb)
{
	struct mrc_nl_path_ctx *ctx = (void *)cb->ctx;

	mrc_nl_paths_free(ctx->paths);
	ctx->paths = NULL;
	return 0;
}

static int mrc_nl_fill_path(struct sk_buff *skb, const struct mrc_nl_path *p, u32 portid,
			    u32 seq)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &mrc_nl_family, NLM_F_MULTI, MRC_CMD_PATH_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u16(skb, MRC_A_PATH_FAMILY, p->family) ||
	    mrc_nl_put_addr(skb, MRC_A_PATH_PEER_ADDR, p->family, &p->peer) ||
	    nla_put_u16(skb, MRC_A_PATH_PORT, p->port) ||
	    nla_put_u8(skb, MRC_A_PATH_STATE, p->retired ? MRC_EV_RETIRED : MRC_EV_ACTIVE) ||
	    nla_put_u32(skb, MRC_A_PATH_CONNS, p->conns) ||
	    nla_put_u32(skb, MRC_A_PATH_RETIRED, p->retired) ||
	    nla_put_u32(skb, MRC_A_PATH_SRTT_US,
			p->srtt_n ? (u32)div_u64(p->srtt_sum, p->srtt_n) : 0) ||
	    nla_put_u32(skb, MRC_A_PATH_MIN_RTT_US, p->min_rtt_us) ||
	    nla_put_u32(skb, MRC_A_PATH_IN_FLIGHT, p->in_flight) ||
	    nla_put_uint(skb, MRC_A_PATH_SENT, p->sent) ||
	    nla_put_uint(skb, MRC_A_PATH_DELIVERED, p->delivered) ||
	    nla_put_uint(skb, MRC_A_PATH_LOST, p->lost) ||
	    nla_put_uint(skb, MRC_A_PATH_CE, p->ce)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int mrc_nl_path_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mrc_nl_path_ctx *ctx = (void *)cb->ctx;
	struct mrc_nl_paths *paths = ctx->paths;

	for (; paths->pos < paths->n; paths->pos++)
		if (mrc_nl_fill_path(skb, &paths->p[paths->pos], NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq))
			break;
	return skb->len;
}

/* ---- EV policies ------------------------------------------------------- */

/**
 * mrc_policy_allows() - may a connection to @peer use source port @port?
 * @mn: namespace state
 * @peer: the connection's peer
 * @port: candidate UDP source port (EV)
 *
 * An exclude policy that matches @peer and covers @port forbids it.  If any
 * pin policy matches @peer, only the ports of those pin policies are
 * allowed.  A policy without a peer matches every peer.
 *
 * Context: any (RCU; softirq with the socket lock held is fine).
 * Return: true if @port may be used.
 */
bool mrc_policy_allows(struct mrc_net *mn, const union mrc_addr *peer, u16 port)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(mn->net);
	bool pinned = false, in_pin = false, ok = true;
	struct mrc_nl_policy *p;
	struct in6_addr key;

	if (list_empty(&nn->policies))
		return true;
	mrc_nl_addr_key(peer, &key);
	rcu_read_lock();
	list_for_each_entry_rcu(p, &nn->policies, list) {
		bool in = port >= p->port_min && port <= p->port_max;

		if (p->family && (p->family != peer->sa.sa_family ||
				  !ipv6_addr_equal(&p->peer, &key)))
			continue;
		if (p->action == MRC_POLICY_ACTION_EXCLUDE) {
			if (in) {
				ok = false;
				break;
			}
		} else {
			pinned = true;
			in_pin |= in;
		}
	}
	rcu_read_unlock();
	return ok && (!pinned || in_pin);
}

/**
 * mrc_policy_next_allowed() - the lowest port >= @port that @peer may use
 * @mn: namespace state
 * @peer: the connection's peer
 * @port: first candidate (may exceed U16_MAX)
 *
 * As mrc_policy_allows(), a range at a time: each pass jumps past an
 * exclude policy covering the candidate or up to the next pinned range,
 * so the cost grows with the number of policies, not with the ports they
 * forbid.
 *
 * Context: any (RCU; softirq with the socket lock held is fine).
 * Return: the port, or a value above U16_MAX when no port from @port up is
 * allowed.
 */
u32 mrc_policy_next_allowed(struct mrc_net *mn, const union mrc_addr *peer, u32 port)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(mn->net);
	struct mrc_nl_policy *p;
	struct in6_addr key;
	bool moved = true;

	if (list_empty(&nn->policies))
		return port;
	mrc_nl_addr_key(peer, &key);
	rcu_read_lock();
	while (moved && port <= U16_MAX) {
		u32 pin_next = U32_MAX;
		bool pinned = false;

		moved = false;
		list_for_each_entry_rcu(p, &nn->policies, list) {
			if (p->family && (p->family != peer->sa.sa_family ||
					  !ipv6_addr_equal(&p->peer, &key)))
				continue;
			if (p->action == MRC_POLICY_ACTION_EXCLUDE) {
				if (port >= p->port_min && port <= p->port_max) {
					port = p->port_max + 1;
					moved = true;
				}
			} else {
				u32 first = max_t(u32, port, p->port_min);

				pinned = true;
				if (port <= p->port_max)
					pin_next = min(pin_next, first);
			}
		}
		if (!moved && pinned && pin_next != port) {
			port = pin_next;
			moved = true;
		}
	}
	rcu_read_unlock();
	return port;
}

static int mrc_nl_fill_policy(struct sk_buff *skb, const struct mrc_nl_policy *p, u32 portid,
			      u32 seq, int flags, int cmd)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &mrc_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, MRC_A_POLICY_ID, p->id) ||
	    (p->family && (nla_put_u16(skb, MRC_A_POLICY_FAMILY, p->family) ||
			   mrc_nl_put_addr(skb, MRC_A_POLICY_PEER_ADDR, p->family, &p->peer))) ||
	    nla_put_u16(skb, MRC_A_POLICY_PORT_MIN, p->port_min) ||
	    nla_put_u16(skb, MRC_A_POLICY_PORT_MAX, p->port_max) ||
	    nla_put_u8(skb, MRC_A_POLICY_ACTION, p->action)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int mrc_nl_policy_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct mrc_nl_policy *p;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_POLICY_PORT_MIN) ||
	    GENL_REQ_ATTR_CHECK(info, MRC_A_POLICY_ACTION))
		return -EINVAL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	if (tb[MRC_A_POLICY_PEER_ADDR]) {
		err = mrc_nl_get_addr(tb[MRC_A_POLICY_PEER_ADDR], &p->peer, extack);
		if (err < 0)
			goto free;
		p->family = err;
	}
	p->port_min = nla_get_u16(tb[MRC_A_POLICY_PORT_MIN]);
	p->port_max = tb[MRC_A_POLICY_PORT_MAX] ?
		      nla_get_u16(tb[MRC_A_POLICY_PORT_MAX]) : p->port_min;
	p->action = nla_get_u8(tb[MRC_A_POLICY_ACTION]);
	if (p->port_min > p->port_max) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_POLICY_PORT_MAX],
				    "port-min is above port-max");
		err = -EINVAL;
		goto free;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto free;
	}
	mutex_lock(&nn->lock);
	if (nn->n_policies >= MRC_NL_MAX_POLICIES) {
		mutex_unlock(&nn->lock);
		NL_SET_ERR_MSG_FMT(extack, "at most %u policies per namespace",
				   MRC_NL_MAX_POLICIES);
		err = -ENOSPC;
		goto free_msg;
	}
	p->id = ++nn->next_id ?: ++nn->next_id;
	list_add_tail_rcu(&p->list, &nn->policies);
	nn->n_policies++;
	mutex_unlock(&nn->lock);

	hdr = genlmsg_iput(msg, info);
	if (!hdr || nla_put_u32(msg, MRC_A_POLICY_ID, p->id)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
free_msg:
	nlmsg_free(msg);
free:
	kfree(p);
	return err;
}

int mrc_nl_policy_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(genl_info_net(info));
	struct mrc_nl_policy *p;
	u32 id;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_POLICY_ID))
		return -EINVAL;
	id = nla_get_u32(info->attrs[MRC_A_POLICY_ID]);
	mutex_lock(&nn->lock);
	list_for_each_entry(p, &nn->policies, list) {
		if (p->id != id)
			continue;
		list_del_rcu(&p->list);
		nn->n_policies--;
		mutex_unlock(&nn->lock);
		kfree_rcu(p, rcu);
		return 0;
	}
	mutex_unlock(&nn->lock);
	NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MRC_A_POLICY_ID], "no policy with this id");
	return -ENOENT;
}

struct mrc_nl_policy_ctx {
	u32	last_id;	/* policies are kept in id order */
};

int mrc_nl_policy_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mrc_nl_policy_ctx *ctx = (void *)cb->ctx;
	struct mrc_nl_net *nn = mrc_nl_pernet(sock_net(skb->sk));
	struct mrc_nl_policy *p;

	NL_ASSERT_DUMP_CTX_FITS(struct mrc_nl_policy_ctx);
	mutex_lock(&nn->lock);
	list_for_each_entry(p, &nn->policies, list) {
		if (p->id <= ctx->last_id)
			continue;
		if (mrc_nl_fill_policy(skb, p, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				       NLM_F_MULTI, MRC_CMD_POLICY_GET))
			break;
		ctx->last_id = p->id;
	}
	mutex_unlock(&nn->lock);
	return skb->len;
}

/* ---- planes -------------------------------------------------------------- */

/*
 * The address of a plane-add or plane-del request: addr (4 or 16 bytes) and
 * an optional family that must agree with it.  The unspecified address,
 * multicast and broadcast are no device's own address: refused here with a
 * clearer message than plane.c's lookup would give.
 */
static int mrc_nl_plane_addr(struct genl_info *info, union mrc_addr *addr)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct in6_addr a;
	bool bad;
	int family;

	if (GENL_REQ_ATTR_CHECK(info, MRC_A_PLANE_ADDR))
		return -EINVAL;
	family = mrc_nl_get_addr(tb[MRC_A_PLANE_ADDR], &a, extack);
	if (family < 0)
		return family;
	if (tb[MRC_A_PLANE_FAMILY] && nla_get_u16(tb[MRC_A_PLANE_FAMILY]) != family) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_PLANE_FAMILY],
				    "family does not match the address's length");
		return -EINVAL;
	}
	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		addr->v4.sin_family = AF_INET;
		addr->v4.sin_addr.s_addr = a.s6_addr32[0];
		bad = ipv4_is_zeronet(a.s6_addr32[0]) || ipv4_is_multicast(a.s6_addr32[0]) ||
		      ipv4_is_lbcast(a.s6_addr32[0]);
	} else {
		addr->v6.sin6_family = AF_INET6;
		addr->v6.sin6_addr = a;
		bad = ipv6_addr_any(&a) || ipv6_addr_is_multicast(&a);
	}
	if (bad) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MRC_A_PLANE_ADDR],
				    "a plane address must be a unicast address");
		return -EINVAL;
	}
	return 0;
}

int mrc_nl_plane_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	struct nlattr *attr = info->attrs[MRC_A_PLANE_ADDR];
	struct netlink_ext_ack *extack = info->extack;
	union mrc_addr addr;
	int err;

	err = mrc_nl_plane_addr(info, &addr);
	if (err)
		return err;
	err = mrc_plane_add(mn, &addr);
	switch (err) {
	case 0:
		break;
	case -EEXIST:
		NL_SET_ERR_MSG_ATTR(extack, attr, "this address is already a plane");
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG_FMT(extack, "at most %d planes per namespace", MRC_MAX_PLANES);
		break;
	case -EADDRNOTAVAIL:
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "no device of the namespace has this address");
		break;
	case -EAFNOSUPPORT:
		NL_SET_ERR_MSG_ATTR(extack, attr, "this address family is not supported");
		break;
	default:	/* mrc_tunnel_get(): a plane needs its family's socket */
		NL_SET_ERR_MSG_FMT(extack, "cannot open the %s tunnel socket",
				   addr.sa.sa_family == AF_INET ? "IPv4" : "IPv6");
		break;
	}
	return err;
}

int mrc_nl_plane_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	union mrc_addr addr;
	int err;

	err = mrc_nl_plane_addr(info, &addr);
	if (err)
		return err;
	err = mrc_plane_del(mn, &addr);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MRC_A_PLANE_ADDR],
				    "no plane with this address");
	return err;
}

/* The attributes of one plane; @id 0: not listed, no id attribute. */
static int mrc_nl_put_plane(struct sk_buff *skb, struct net *net, const struct mrc_plane *p,
			    u32 id, bool is_default)
{
	if ((id && nla_put_u32(skb, MRC_A_PLANE_ID, id)) ||
	    nla_put_u16(skb, MRC_A_PLANE_FAMILY, p->addr.sa.sa_family) ||
	    mrc_nl_put_sockaddr(skb, MRC_A_PLANE_ADDR, &p->addr) ||
	    mrc_nl_put_dev(skb, net, p->ifindex, MRC_A_PLANE_IFINDEX, MRC_A_PLANE_IFNAME) ||
	    nla_put_u8(skb, MRC_A_PLANE_UP, p->up) ||
	    (is_default && nla_put_flag(skb, MRC_A_PLANE_IS_DEFAULT)) ||
	    nla_put_u32(skb, MRC_A_PLANE_DOWN_EVENTS, p->down_events) ||
	    nla_put_u32(skb, MRC_A_PLANE_UP_EVENTS, p->up_events))
		return -EMSGSIZE;
	return 0;
}

struct mrc_nl_plane_ctx {
	u32	pos;		/* planes already sent */
};

/*
 * plane-get: the list is read afresh for each skb of the dump; it holds a
 * few entries and fits in the first one, so the ids stay consistent.
 */
int mrc_nl_plane_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mrc_nl_plane_ctx *ctx = (void *)cb->ctx;
	struct mrc_net *mn = mrc_pernet(sock_net(skb->sk));
	struct mrc_plane *planes;
	bool is_default = false;
	void *hdr;
	int n;

	NL_ASSERT_DUMP_CTX_FITS(struct mrc_nl_plane_ctx);
	planes = kmalloc_array(MRC_NL_MAX_PLANES, sizeof(*planes), GFP_KERNEL);
	if (!planes)
		return -ENOMEM;
	n = mrc_planes_get(mn, planes, MRC_NL_MAX_PLANES, &is_default);
	for (; ctx->pos < n; ctx->pos++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &mrc_nl_family, NLM_F_MULTI, MRC_CMD_PLANE_GET);
		if (!hdr)
			break;
		if (mrc_nl_put_plane(skb, mn->net, &planes[ctx->pos], ctx->pos + 1,
				     is_default)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	kfree(planes);
	return n < 0 ? n : skb->len;
}

/* ---- counters ------------------------------------------------------------ */

int mrc_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mrc_net *mn = mrc_pernet(genl_info_net(info));
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	int i;

	msg = genlmsg_new(__MRC_C_MAX * nla_total_size(nla_total_size(32) +
						       nla_total_size(8)), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	for (i = 0; i < __MRC_C_MAX; i++) {
		nest = nla_nest_start(msg, MRC_A_STATS_COUNTER);
		if (!nest ||
		    nla_put_string(msg, MRC_A_COUNTER_NAME, mrc_counter_names[i]) ||
		    nla_put_uint(msg, MRC_A_COUNTER_VALUE, mrc_counter_read(mn, i)))
			goto nospace;
		nla_nest_end(msg, nest);
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* ---- events -------------------------------------------------------------- */

static void mrc_nl_multicast(struct sk_buff *msg, struct net *net)
{
	genlmsg_multicast_netns(&mrc_nl_family, net, msg, 0, MRC_NLGRP_EVENTS, GFP_ATOMIC);
}

/**
 * mrc_nl_notify_ev() - report an EV retired or re-admitted
 * @msk: the connection
 * @ev: its entropy value, already in its new state
 * @retired: true: retired, false: re-admitted
 *
 * Context: softirq or process, socket lock held; does not sleep.
 */
void mrc_nl_notify_ev(struct mrc_sock *msk, const struct mrc_ev *ev, bool retired)
{
	struct net *net = sock_net(&msk->sk);
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&mrc_nl_family, net, MRC_NLGRP_EVENTS))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &mrc_nl_family, 0,
			  retired ? MRC_CMD_EV_RETIRED_NTF : MRC_CMD_EV_READMITTED_NTF);
	if (!hdr ||
	    nla_put_u32(msg, MRC_A_CONN_LOCAL_ID, msk->local_id) ||
	    nla_put_u16(msg, MRC_A_CONN_FAMILY, msk->remote.sa.sa_family) ||
	    mrc_nl_put_sockaddr(msg, MRC_A_CONN_REMOTE_ADDR, &msk->remote) ||
	    mrc_nl_put_ev(msg, ev)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	mrc_nl_multicast(msg, net);
}

/**
 * mrc_nl_notify_conn() - report a connection established or closed
 * @msk: the connection
 * @established: true: established, false: finished or reset
 *
 * Context: softirq or process, socket lock held; does not sleep.
 */
void mrc_nl_notify_conn(struct mrc_sock *msk, bool established)
{
	struct net *net = sock_net(&msk->sk);
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&mrc_nl_family, net, MRC_NLGRP_EVENTS))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &mrc_nl_family, 0,
			  established ? MRC_CMD_CONN_ESTABLISHED_NTF : MRC_CMD_CONN_CLOSED_NTF);
	if (!hdr || mrc_nl_put_conn_id(msg, msk)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	mrc_nl_multicast(msg, net);
}

/**
 * mrc_nl_notify_plane() - report a plane down or up
 * @mn: namespace state
 * @plane: the plane, already in its new state (@plane->up says which)
 *
 * The event carries the plane's id in the current list (mrc_planes_get()),
 * none when it is no longer listed: a default plane whose device went down.
 *
 * Context: process or softirq, not under mn->lock (mrc_planes_get() takes
 * it); does not sleep.
 */
void mrc_nl_notify_plane(struct mrc_net *mn, const struct mrc_plane *plane)
{
	bool is_default = !READ_ONCE(mn->nplanes);
	struct net *net = mn->net;
	struct mrc_plane *planes;
	struct sk_buff *msg;
	int n, i;
	u32 id = 0;
	void *hdr;

	if (!genl_has_listeners(&mrc_nl_family, net, MRC_NLGRP_EVENTS))
		return;
	planes = kmalloc_array(MRC_NL_MAX_PLANES, sizeof(*planes), GFP_ATOMIC);
	if (planes) {
		n = mrc_planes_get(mn, planes, MRC_NL_MAX_PLANES, &is_default);
		for (i = 0; i < n && !id; i++)
			if (mrc_nl_addr_same(&planes[i].addr, &plane->addr))
				id = i + 1;
		kfree(planes);
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &mrc_nl_family, 0,
			  plane->up ? MRC_CMD_PLANE_UP_NTF : MRC_CMD_PLANE_DOWN_NTF);
	if (!hdr || mrc_nl_put_plane(msg, net, plane, id, is_default)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	mrc_nl_multicast(msg, net);
}

/* ---- set-up -------------------------------------------------------------- */

static int __net_init mrc_nl_net_init(struct net *net)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(net);

	mutex_init(&nn->lock);
	INIT_LIST_HEAD(&nn->policies);
	INIT_LIST_HEAD(&nn->old_socks);
	return 0;
}

/* Runs before mrc_net_ops' exit (registered after it): no MRC socket left. */
static void __net_exit mrc_nl_net_exit(struct net *net)
{
	struct mrc_nl_net *nn = mrc_nl_pernet(net);
	struct mrc_nl_oldsock *o, *otmp;
	struct mrc_nl_policy *p, *ptmp;

	list_for_each_entry_safe(o, otmp, &nn->old_socks, list) {
		list_del(&o->list);
		udp_tunnel_sock_release(o->sock);
		kfree(o);
	}
	mutex_lock(&nn->lock);
	list_for_each_entry_safe(p, ptmp, &nn->policies, list) {
		list_del_rcu(&p->list);
		kfree_rcu(p, rcu);
	}
	nn->n_policies = 0;
	mutex_unlock(&nn->lock);
}

static struct pernet_operations mrc_nl_net_ops = {
	.init	= mrc_nl_net_init,
	.exit	= mrc_nl_net_exit,
	.id	= &mrc_nl_net_id,
	.size	= sizeof(struct mrc_nl_net),
};

int mrc_nl_init(void)
{
	int err;

	err = register_pernet_subsys(&mrc_nl_net_ops);
	if (err)
		return err;
	err = genl_register_family(&mrc_nl_family);
	if (err)
		unregister_pernet_subsys(&mrc_nl_net_ops);
	return err;
}

void mrc_nl_exit(void)
{
	genl_unregister_family(&mrc_nl_family);
	unregister_pernet_subsys(&mrc_nl_net_ops);
}
