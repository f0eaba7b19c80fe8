// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per network namespace state: the UDP tunnel sockets, the connection and
 * port tables, the cookie secret, the RST rate limiter and the counters.
 */
#include <linux/jhash.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>
#include <net/ipv6.h>

#include "protocol.h"

static unsigned int mrc_net_id __read_mostly;

const char *const mrc_counter_names[__MRC_C_MAX] = {
	[MRC_C_RX_PACKETS]		= "RxPackets",
	[MRC_C_TX_PACKETS]		= "TxPackets",
	[MRC_C_RX_DROP_SHORT]		= "RxDropShort",
	[MRC_C_RX_DROP_VERSION]		= "RxDropVersion",
	[MRC_C_RX_DROP_TYPE]		= "RxDropType",
	[MRC_C_RX_DROP_LEN]		= "RxDropLength",
	[MRC_C_RX_DROP_NOCONN]		= "RxDropNoConnection",
	[MRC_C_RX_DROP_BADID]		= "RxDropBadId",
	[MRC_C_RX_DROP_COOKIE]		= "RxDropBadCookie",
	[MRC_C_RX_DROP_WINDOW]		= "RxDropOutOfWindow",
	[MRC_C_RX_DROP_RCVBUF]		= "RxDropRcvbuf",
	[MRC_C_RX_DROP_BACKLOG]		= "RxDropBacklog",
	[MRC_C_RX_DROP_ACCEPTQ]		= "RxDropAcceptQueue",
	[MRC_C_RX_DUP]			= "RxDuplicate",
	[MRC_C_TX_RST]			= "TxRst",
	[MRC_C_RST_RATELIMITED]		= "RstRateLimited",
	[MRC_C_RETRANSMITS]		= "Retransmits",
	[MRC_C_FAST_RETRANSMITS]	= "FastRetransmits",
	[MRC_C_RTO]			= "RtoExpired",
	[MRC_C_CONN_OPENED]		= "ConnOpened",
	[MRC_C_CONN_ACCEPTED]		= "ConnAccepted",
	[MRC_C_CONN_RESET]		= "ConnReset",
	[MRC_C_CONN_TIMEOUT]		= "ConnTimeout",
	[MRC_C_TX_ERRORS]		= "TxErrors",
	[MRC_C_EV_RETIRED]		= "EvRetired",
	[MRC_C_EV_READMITTED]		= "EvReadmitted",
	[MRC_C_EV_PROBES]		= "EvProbes",
	[MRC_C_SPURIOUS_RETRANS]	= "SpuriousRetransmits",
	[MRC_C_RX_CE]			= "RxCeMarked",
	[MRC_C_TX_REDUNDANT]		= "TxRedundant",
	[MRC_C_RX_DROP_MEM]		= "RxDropMemory",
	[MRC_C_MEM_PRESSURE]		= "MemPressure",
	[MRC_C_MEM_FORCED]		= "MemForced",
	[MRC_C_ORPHAN_OVERFLOW]		= "OrphanOverflow",
	[MRC_C_ORPHAN_FIN_TIMEOUT]	= "OrphanFinTimeout",
	[MRC_C_RTO_SPURIOUS]		= "SpuriousRto",
	[MRC_C_KEEPALIVE_PROBE]		= "KeepaliveProbes",
	[MRC_C_RX_ICMP_UNREACH]		= "RxIcmpUnreachable",
	[MRC_C_RX_ICMP_FRAG]		= "RxIcmpFragNeeded",
	[MRC_C_LOSS_SAME_EV]		= "LossSameEv",
	[MRC_C_LOSS_RACK]		= "LossRack",
	[MRC_C_PLANE_DOWN]		= "PlaneDown",
	[MRC_C_PLANE_UP]		= "PlaneUp",
	[MRC_C_ADDR_LEARNED]		= "AddrLearned",
	[MRC_C_ADDR_REJECTED]		= "AddrRejected",
	[MRC_C_TX_BURSTS]		= "TxBursts",
	[MRC_C_RX_BATCHES]		= "RxBatches",
	[MRC_C_RX_DROP_CSUM]		= "RxDropChecksum",
	[MRC_C_LOSS_PATH_SILENT]	= "LossPathSilent",
	[MRC_C_SYN_ID_TAKEN]		= "SynIdTaken",
	[MRC_C_RX_TRAINS]		= "RxTrains",
	[MRC_C_LOSS_PROBES]		= "LossProbes",
	[MRC_C_LOSS_PROBE_RECOVERED]	= "LossProbeRecovered",
	[MRC_C_RX_ICMP_DROP]		= "RxIcmpDropped",
	[MRC_C_TX_DSACK]		= "TxDsack",
	[MRC_C_DSACK_SAMPLES]		= "DsackRttSamples",
	[MRC_C_TRACE_PROBES]		= "TxTraceProbes",
	[MRC_C_TRACE_HOPS]		= "RxTraceHops",
};

struct mrc_net *mrc_pernet(const struct net *net)
{
	return net_generic(net, mrc_net_id);
}

/*
 * Per CPU, as TCP's and MPTCP's MIBs: a per-netns atomic bumped per packet
 * from every CPU bounced one cache line between them.  Any context.
 */
void mrc_count(struct mrc_net *mn, enum mrc_counter c)
{
	this_cpu_inc(mn->counters->v[c]);
}

void mrc_count_add(struct mrc_net *mn, enum mrc_counter c, unsigned int n)
{
	this_cpu_add(mn->counters->v[c], n);
}

/* The sum over the CPUs (a 32-bit reader may see a count mid-update). */
u64 mrc_counter_read(struct mrc_net *mn, enum mrc_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(mn->counters, cpu)->v[c]);
	return sum;
}

/* A UDP tunnel socket on @port; also used by netlink to move to a new port. */
struct socket *mrc_tunnel_create(struct mrc_net *mn, int family, u16 port)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data	= mn,
		.encap_type	= 1,
		/* no encap_rcv: aggregates come whole (mrc_udp_data_ready()) */
		.encap_err_lookup = mrc_udp_err_lookup,
		.encap_err_rcv	= mrc_udp_err_rcv,
	};
	struct udp_port_cfg cfg = {
		.family			= family,
		.local_udp_port		= htons(port),
		.use_udp6_tx_checksums	= true,
		.use_udp6_rx_checksums	= true,
		.ipv6_v6only		= true,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(mn->net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(mn->net, sock, &tcfg);
	/*
	 * No CHECKSUM_UNNECESSARY -> COMPLETE conversion (which tunnels whose
	 * inner stack wants a full checksum ask for): with it on, cutting an
	 * aggregate (udp_rcv_segment()) would sum every byte in software.
	 */
	inet_dec_convert_csum(sock->sk);
	udp_allow_gso(sock->sk);
	udp_set_bit(GRO_ENABLED, sock->sk);
	/* drained as it fills: room for the aggregates of a few CPUs at once */
	sock->sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	WRITE_ONCE(sock->sk->sk_rcvbuf, MRC_TUNNEL_RCVBUF);
	write_lock_bh(&sock->sk->sk_callback_lock);
	sock->sk->sk_data_ready = mrc_udp_data_ready;
	write_unlock_bh(&sock->sk->sk_callback_lock);
	return sock;
}

/**
 * mrc_tunnel_get() - make sure the namespace's tunnel socket exists
 * @mn: namespace state
 * @family: AF_INET or AF_INET6
 *
 * Created on first use so that namespaces without MRC sockets bind no port.
 * Context: process context, may sleep.
 * Return: 0 or a negative errno (EADDRINUSE when the UDP port is taken).
 */
int mrc_tunnel_get(struct mrc_net *mn, int family)
{
	struct socket __rcu **slot = family == AF_INET6 ? &mn->udp6 : &mn->udp4;
	struct socket *sock;
	int err = 0;

	if (rcu_access_pointer(*slot))
		return 0;
	mutex_lock(&mn->tunnel_mutex);
	if (!rcu_access_pointer(*slot)) {
		sock = mrc_tunnel_create(mn, family, READ_ONCE(mn->cfg.udp_port));
		if (IS_ERR(sock))
			err = PTR_ERR(sock);
		else
			rcu_assign_pointer(*slot, sock);
	}
	mutex_unlock(&mn->tunnel_mutex);
	return err;
}

/* Context: rcu_read_lock or BH disabled. */
struct socket *mrc_tunnel_sock(struct mrc_net *mn, int family)
{
	if (family == AF_INET6)
		return rcu_dereference_bh(mn->udp6);
	return rcu_dereference_bh(mn->udp4);
}

/**
 * mrc_hash_conn() - hash a connection under its local ID
 * @msk: connection, not yet hashed; local_id 0 (a client: a fresh random
 *       one is drawn) or the ID its cookie gave (a child: the client sends
 *       to that one, so no other will do)
 *
 * Return: 0, -EADDRINUSE when a child's ID was taken since its SYNACK, or
 * -EADDRNOTAVAIL after repeated collisions of random ones.
 */
int mrc_hash_conn(struct mrc_sock *msk)
{
	struct mrc_net *mn = msk->mn;
	u32 fixed = msk->local_id;
	int tries;

	spin_lock_bh(&mn->lock);
	for (tries = 0; tries < (fixed ? 1 : 16); tries++) {
		u32 id = fixed ?: get_random_u32();

		msk->local_id = 0;
		if (!id || mrc_lookup_conn(mn, id))
			continue;
		msk->local_id = id;
		hash_add_rcu(mn->conns, &msk->conn_node, id);
		msk->hashed = 1;
		sock_hold(&msk->sk);
		break;
	}
	spin_unlock_bh(&mn->lock);
	if (msk->hashed)
		return 0;
	return fixed ? -EADDRINUSE : -EADDRNOTAVAIL;
}

void mrc_unhash_conn(struct mrc_sock *msk)
{
	struct mrc_net *mn = msk->mn;

	if (!msk->hashed)
		return;
	spin_lock_bh(&mn->lock);
	hash_del_rcu(&msk->conn_node);
	msk->hashed = 0;
	spin_unlock_bh(&mn->lock);
	__sock_put(&msk->sk);
}

/* Context: rcu_read_lock or mn->lock.  No reference taken. */
struct mrc_sock *mrc_lookup_conn(struct mrc_net *mn, u32 local_id)
{
	struct mrc_sock *msk;

	hash_for_each_possible_rcu(mn->conns, msk, conn_node, local_id)
		if (msk->local_id == local_id)
			return msk;
	return NULL;
}

static u16 mrc_local_port(const union mrc_addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->v6.sin6_port : a->v4.sin_port);
}

static bool mrc_addr_any(const union mrc_addr *a)
{
	if (a->sa.sa_family == AF_INET6)
		return ipv6_addr_any(&a->v6.sin6_addr);
	return a->v4.sin_addr.s_addr == htonl(INADDR_ANY);
}

/* Same family and same address, or one of them is the wildcard. */
static bool mrc_addr_overlap(const union mrc_addr *a, const union mrc_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (mrc_addr_any(a) || mrc_addr_any(b))
		return true;
	if (a->sa.sa_family == AF_INET6)
		return ipv6_addr_equal(&a->v6.sin6_addr, &b->v6.sin6_addr);
	return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
}

/* An IPv6 wildcard socket that takes IPv4 too (IPV6_V6ONLY off) */
static bool mrc_dual_any(const struct mrc_sock *msk)
{
	return msk->local.sa.sa_family == AF_INET6 && !msk->v6only &&
	       ipv6_addr_any(&msk->local.v6.sin6_addr);
}

/* The local addresses of @a and @b overlap: mrc_addr_overlap(), or dual stack */
static bool mrc_sock_overlap(const struct mrc_sock *a, const struct mrc_sock *b)
{
	if (a->local.sa.sa_family != b->local.sa.sa_family)
		return mrc_dual_any(a) || mrc_dual_any(b);
	return mrc_addr_overlap(&a->local, &b->local);
}

/* SO_REUSEPORT: both asked for it and one user owns both, as in TCP */
static bool mrc_reuseport_ok(const struct mrc_sock *a, const struct mrc_sock *b)
{
	return a->sk.sk_reuseport && b->sk.sk_reuseport && uid_eq(a->sk.sk_uid, b->sk.sk_uid);
}

static bool mrc_port_conflict(struct mrc_net *mn, struct mrc_sock *msk, u16 port, bool reuse)
{
	struct mrc_sock *other;

	hash_for_each_possible(mn->ports, other, port_node, port) {
		if (mrc_local_port(&other->local) != port || !mrc_sock_overlap(other, msk) ||
		    mrc_reuseport_ok(other, msk))
			continue;
		if (reuse && other->sk.sk_reuse && READ_ONCE(other->state) != MRC_STATE_LISTEN)
			continue;
		return true;
	}
	return false;
}

/**
 * mrc_bind_port() - claim a local MRC port
 * @msk: socket with msk->local set (address and family)
 * @port: port, 0 for an ephemeral one
 * @reuse: SO_REUSEADDR semantics: share with non-listening reusers
 *
 * Return: 0 with the port written into msk->local, or -EADDRINUSE.
 */
int mrc_bind_port(struct mrc_sock *msk, u16 port, bool reuse)
{
	struct mrc_net *mn = msk->mn;
	int low = 32768, high = 60999, tries;
	int err = -EADDRINUSE;

	spin_lock_bh(&mn->lock);
	if (port) {
		if (!mrc_port_conflict(mn, msk, port, reuse))
			err = 0;
	} else {
		for (tries = 0; tries < 256 && err; tries++) {
			port = low + get_random_u32_below(high - low + 1);
			if (!mrc_port_conflict(mn, msk, port, false))
				err = 0;
		}
	}
	if (!err) {
		if (msk->local.sa.sa_family == AF_INET6)
			msk->local.v6.sin6_port = htons(port);
		else
			msk->local.v4.sin_port = htons(port);
		hash_add_rcu(mn->ports, &msk->port_node, port);
		msk->bound = 1;
	}
	spin_unlock_bh(&mn->lock);
	return err;
}

void mrc_unbind_port(struct mrc_sock *msk)
{
	struct mrc_net *mn = msk->mn;

	if (!msk->bound)
		return;
	spin_lock_bh(&mn->lock);
	hash_del_rcu(&msk->port_node);
	msk->bound = 0;
	spin_unlock_bh(&mn->lock);
}

/**
 * mrc_listen_port() - become the listener of the bound port
 * @msk: bound socket (socket lock held), closed or already listening
 *
 * SO_REUSEADDR lets sockets share a port while at most one listens (as in
 * TCP, where it allows binding over connections of an old listener, not
 * two listeners): the check and the state change are one step under
 * mn->lock, so two racing listen() calls cannot both win.
 * Return: 0, or -EADDRINUSE when another socket listens on an overlapping
 * address and the same port.
 */
int mrc_listen_port(struct mrc_sock *msk)
{
	u16 port = mrc_local_port(&msk->local);
	struct mrc_net *mn = msk->mn;
	struct mrc_sock *other;
	int err = 0;

	sock_owned_by_me(&msk->sk);
	spin_lock_bh(&mn->lock);
	hash_for_each_possible(mn->ports, other, port_node, port) {
		if (other != msk && mrc_local_port(&other->local) == port &&
		    mrc_sock_overlap(other, msk) && !mrc_reuseport_ok(other, msk) &&
		    READ_ONCE(other->state) == MRC_STATE_LISTEN) {
			err = -EADDRINUSE;
			break;
		}
	}
	if (!err)
		mrc_set_state(msk, MRC_STATE_LISTEN);
	spin_unlock_bh(&mn->lock);
	return err;
}

/**
 * mrc_lookup_listener() - find the listener for an incoming SYN or HSACK
 * @mn: namespace state
 * @daddr: the packet's destination address and MRC port
 * @flow: hash of the client's address, port and connection ID
 *
 * Listeners sharing the port (SO_REUSEPORT) each get a share of the
 * clients: the one whose weight for @flow is highest (rendezvous hashing),
 * so a SYN and its HSACK, which carry the same @flow, find the same one
 * and a listener that closes moves only its own share.
 *
 * Context: rcu_read_lock.  No reference taken.
 * Return: a listening socket whose address covers @daddr: exact first, then
 * a wildcard of its family, then (IPv4) a dual-stack IPv6 wildcard, as
 * TCP's lookup scores them.
 */
struct mrc_sock *mrc_lookup_listener(struct mrc_net *mn, const union mrc_addr *daddr, u32 flow)
{
	u16 port = mrc_local_port(daddr);
	struct mrc_sock *msk, *best[3] = {};
	u32 weight[3] = {}, w;
	int class;

	hash_for_each_possible_rcu(mn->ports, msk, port_node, port) {
		if (READ_ONCE(msk->state) != MRC_STATE_LISTEN ||
		    mrc_local_port(&msk->local) != port)
			continue;
		if (msk->local.sa.sa_family != daddr->sa.sa_family) {
			if (daddr->sa.sa_family != AF_INET || !mrc_dual_any(msk))
				continue;
			class = 2;
		} else if (!mrc_addr_overlap(&msk->local, daddr)) {
			continue;
		} else {
			class = mrc_addr_any(&msk->local) ? 1 : 0;
		}
		w = jhash_2words(flow, (u32)(unsigned long)msk, 0) | 1;
		if (w > weight[class]) {
			weight[class] = w;
			best[class] = msk;
		}
	}
	return best[0] ?: best[1] ?: best[2];
}

/* Token bucket: at most 100 RSTs a second per namespace, bursts of 20. */
bool mrc_rst_allowed(struct mrc_net *mn)
{
	unsigned long now = jiffies;
	bool ok;

	spin_lock_bh(&mn->lock);
	if (time_after(now, mn->rst_stamp + HZ / 100)) {
		mn->rst_tokens = min_t(u32, 20, mn->rst_tokens +
				       (now - mn->rst_stamp) * 100 / HZ);
		mn->rst_stamp = now;
	}
	ok = mn->rst_tokens > 0;
	if (ok)
		mn->rst_tokens--;
	spin_unlock_bh(&mn->lock);
	if (!ok)
		mrc_count(mn, MRC_C_RST_RATELIMITED);
	return ok;
}

static int mrc_stats_show(struct seq_file *seq, void *v)
{
	struct mrc_net *mn = mrc_pernet(seq_file_single_net(seq));
	int i;

	for (i = 0; i < __MRC_C_MAX; i++)
		seq_printf(seq, "%s %lld\n", mrc_counter_names[i],
			   (long long)mrc_counter_read(mn, i));
	return 0;
}

static int __net_init mrc_net_init(struct net *net)
{
	struct mrc_net *mn = mrc_pernet(net);

	mn->net = net;
	mn->counters = alloc_percpu(struct mrc_counters);
	if (!mn->counters)
		return -ENOMEM;
	spin_lock_init(&mn->lock);
	mutex_init(&mn->tunnel_mutex);
	hash_init(mn->conns);
	hash_init(mn->ports);
	get_random_bytes(&mn->cookie_key, sizeof(mn->cookie_key));
	get_random_bytes(&mn->ts_key, sizeof(mn->ts_key));
	mn->cfg = (struct mrc_config){
		.udp_port		= mrc_udp_port,
		.ev_count		= READ_ONCE(mrc_default_evs),
		.ev_port_min		= 49152,
		.ev_port_max		= 65535,
		.retire_losses		= 1,
		.ecn			= 1,
		.redundancy		= READ_ONCE(mrc_redundancy),
		.burst_max		= READ_ONCE(mrc_burst_max),
		.probe_interval_ms	= 50,
		.min_rto_us		= READ_ONCE(mrc_min_rto_us),
		.max_rto_us		= MRC_MAX_RTO_US,
		.init_cwnd		= READ_ONCE(mrc_init_cwnd),
		.user_timeout_ms	= 30000,
		.dctcp_shift		= 4,
		/*
		 * Off by default: the smoothed RTT blends paths of different
		 * delay against the smallest sample of any, and includes the
		 * receiver's delayed ACKs (see mrc.rst, Congestion control).
		 */
		.delay_target_us	= 0,
	};
	mn->rst_tokens = 20;
	mn->rst_stamp = jiffies;
	if (!proc_create_net_single("mrc_stats", 0444, net->proc_net, mrc_stats_show, NULL)) {
		free_percpu(mn->counters);
		return -ENOMEM;
	}
	return 0;
}

/*
 * User sockets hold a reference on their namespace, so by the time this runs
 * every MRC socket of @net is gone; only the tunnel sockets are left.
 */
static void __net_exit mrc_net_exit(struct net *net)
{
	struct mrc_net *mn = mrc_pernet(net);
	struct socket *sock;

	remove_proc_entry("mrc_stats", net->proc_net);
	/*
	 * Unpublished first, so the grace period each release waits for also
	 * covers a reader of the pointer (mrc_output()), not only receivers.
	 */
	sock = rcu_dereference_protected(mn->udp4, true);
	RCU_INIT_POINTER(mn->udp4, NULL);
	if (sock)
		udp_tunnel_sock_release(sock);
	sock = rcu_dereference_protected(mn->udp6, true);
	RCU_INIT_POINTER(mn->udp6, NULL);
	if (sock)
		udp_tunnel_sock_release(sock);
	/* no receiver left (the releases waited for RCU), no socket either */
	free_percpu(mn->counters);
}

static struct pernet_operations mrc_net_ops = {
	.init	= mrc_net_init,
	.exit	= mrc_net_exit,
	.id	= &mrc_net_id,
	.size	= sizeof(struct mrc_net),
};

int mrc_pernet_init(void)
{
	return register_pernet_subsys(&mrc_net_ops);
}

void mrc_pernet_exit(void)
{
	unregister_pernet_subsys(&mrc_net_ops);
}
