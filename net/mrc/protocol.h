/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MRC internal definitions: connection state, per-netns state (the wire
 * format is in wire.h).
 *
 * Locking (see Documentation/networking/mrc.rst, "Locking"):
 *  - struct mrc_sock fields are guarded by the socket lock: lock_sock() in
 *    process context, bh_lock_sock() when not owned by the user in softirq
 *    and timers (else the packet goes to the backlog / the timer defers to
 *    release_cb).  Fields read locklessly (poll, getsockopt info) use
 *    READ_ONCE/WRITE_ONCE.  Functions that edit the queues or the
 *    retransmission state assert the lock with sock_owned_by_me(): its
 *    lockdep_sock_is_held() takes the owner's or the spinlock, as they run
 *    under both (the destructor purges unlocked: nobody is left).
 *  - struct mrc_net tables are RCU hash lists: readers under rcu_read_lock,
 *    writers under mrc_net.lock (spin_lock_bh).
 */
#ifndef _NET_MRC_PROTOCOL_H
#define _NET_MRC_PROTOCOL_H

#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <net/proto_memory.h>
#include <net/sock.h>
#include <uapi/linux/mrc.h>

#include "psn.h"
#include "rtt.h"
#include "cc.h"
#include "wire.h"

/* Per-netns counters, exported in /proc/net/mrc_stats (and netlink later) */
enum mrc_counter {
	MRC_C_RX_PACKETS,
	MRC_C_TX_PACKETS,
	MRC_C_RX_DROP_SHORT,		/* shorter than the header */
	MRC_C_RX_DROP_VERSION,
	MRC_C_RX_DROP_TYPE,
	MRC_C_RX_DROP_LEN,		/* len disagrees with the packet */
	MRC_C_RX_DROP_NOCONN,		/* no connection or listener */
	MRC_C_RX_DROP_BADID,		/* IDs/addresses do not match */
	MRC_C_RX_DROP_COOKIE,		/* forged or stale cookie */
	MRC_C_RX_DROP_WINDOW,		/* PSN or ACK outside the window */
	MRC_C_RX_DROP_RCVBUF,		/* receive buffer full */
	MRC_C_RX_DROP_BACKLOG,		/* socket backlog full */
	MRC_C_RX_DROP_ACCEPTQ,		/* listen backlog full */
	MRC_C_RX_DUP,			/* duplicate data packet */
	MRC_C_TX_RST,
	MRC_C_RST_RATELIMITED,
	MRC_C_RETRANSMITS,
	MRC_C_FAST_RETRANSMITS,
	MRC_C_RTO,
	MRC_C_CONN_OPENED,
	MRC_C_CONN_ACCEPTED,
	MRC_C_CONN_RESET,
	MRC_C_CONN_TIMEOUT,
	MRC_C_TX_ERRORS,
	MRC_C_EV_RETIRED,
	MRC_C_EV_READMITTED,
	MRC_C_EV_PROBES,
	MRC_C_SPURIOUS_RETRANS,		/* a retransmitted packet was a duplicate */
	MRC_C_RX_CE,
	MRC_C_TX_REDUNDANT,		/* extra copies of urgent packets */
	MRC_C_RX_DROP_MEM,		/* protocol memory pool exhausted */
	MRC_C_MEM_PRESSURE,		/* times MRC entered memory pressure */
	MRC_C_MEM_FORCED,		/* segments queued beyond the pool's limit */
	MRC_C_ORPHAN_OVERFLOW,		/* closes aborted: net.mrc.max_orphans reached */
	MRC_C_ORPHAN_FIN_TIMEOUT,	/* orphans ended waiting for the peer's FIN */
	MRC_C_RTO_SPURIOUS,		/* RTOs whose packets had arrived: window restored */
	MRC_C_KEEPALIVE_PROBE,		/* keepalive probes sent (SO_KEEPALIVE) */
	MRC_C_RX_ICMP_UNREACH,		/* ICMP unreachable for a connection's packet */
	MRC_C_RX_ICMP_FRAG,		/* ICMP too big / fragmentation needed */
	MRC_C_LOSS_SAME_EV,		/* losses inferred: a later packet of the EV arrived */
	MRC_C_LOSS_RACK,		/* losses inferred: overdue past a later delivery */
	MRC_C_PLANE_DOWN,		/* a path's device went down or lost its address */
	MRC_C_PLANE_UP,			/* ... and came back */
	MRC_C_ADDR_LEARNED,		/* peer plane addresses accepted in a handshake */
	MRC_C_ADDR_REJECTED,		/* ... refused: malformed, duplicate or unusable */
	MRC_C_TX_BURSTS,		/* GSO skbs of several data packets sent */
	MRC_C_RX_BATCHES,		/* GSO/GRO aggregates received whole */
	MRC_C_RX_DROP_CSUM,		/* bad UDP checksum */
	MRC_C_LOSS_PATH_SILENT,		/* losses inferred: out on a path gone silent */
	MRC_C_SYN_ID_TAKEN,		/* SYNs whose first cookie ID was another's */
	MRC_C_RX_TRAINS,		/* aggregates queued whole: in order, not cut */
	MRC_C_LOSS_PROBES,		/* tail loss probes sent (mrc_send_loss_probe()) */
	MRC_C_LOSS_PROBE_RECOVERED,	/* ... that repaired a loss: the probe arrived first */
	MRC_C_RX_ICMP_DROP,		/* ICMP errors quoting no connection's packet */
	MRC_C_TX_DSACK,			/* pure ACKs that echoed a duplicate (MRC_F_DSACK) */
	MRC_C_DSACK_SAMPLES,		/* ... taken as a slow path's RTT sample */
	MRC_C_TRACE_PROBES,		/* path trace probes sent (evtrace.c) */
	MRC_C_TRACE_HOPS,		/* ... answered by a router (ICMP time exceeded) */
	__MRC_C_MAX,
};

extern const char *const mrc_counter_names[__MRC_C_MAX];

/**
 * struct mrc_config - per-namespace settings (netlink config get/set)
 * @udp_port: UDP port of the tunnel sockets
 * @ev_count: entropy values per new connection (1..MRC_MAX_EVS)
 * @ev_port_min: lowest UDP source port used as an EV
 * @ev_port_max: highest UDP source port used as an EV
 * @retire_losses: losses on one EV that retire it (1: at the first)
 * @ecn: send ECN-capable and react to CE marks
 * @redundancy: copies of high-priority packets (1: no duplicates)
 * @probe_interval_ms: first probe of a retired EV, doubling after
 * @min_rto_us: minimum retransmission timeout
 * @max_rto_us: maximum retransmission timeout
 * @init_cwnd: initial congestion window, packets
 * @user_timeout_ms: default MRC_USER_TIMEOUT
 * @dctcp_shift: DCTCP gain g = 1 / 2^shift
 * @delay_target_us: queueing delay over base RTT that the CC tolerates
 * @urgent_dscp: DSCP of urgent packets' outer header (0: unmarked)
 * @burst_max: most segments sent back to back on one EV as one GSO skb
 *	(1: every packet on its own EV)
 *
 * Written under mrc_net.lock as a whole; readers copy it with READ_ONCE per
 * field (a new connection may mix old and new values of a concurrent set).
 */
struct mrc_config {
	u16	udp_port;
	u16	ev_count;
	u16	ev_port_min;
	u16	ev_port_max;
	u8	retire_losses;
	u8	ecn;
	u8	redundancy;
	u32	probe_interval_ms;
	u32	min_rto_us;
	u32	max_rto_us;
	u32	init_cwnd;
	u32	user_timeout_ms;
	u32	dctcp_shift;
	u32	delay_target_us;
	u8	urgent_dscp;
	u8	burst_max;
};

/* Local or remote plane addresses of a connection, and paths between them */
#define MRC_MAX_PLANES	4
#define MRC_MAX_PATHS	8

/* The peer or local endpoint: an IPv4 or IPv6 socket address */
union mrc_addr {
	struct sockaddr		sa;
	struct sockaddr_in	v4;
	struct sockaddr_in6	v6;
};

/**
 * struct mrc_plane - a local address that is a plane of the namespace
 * @addr: the address (port unused)
 * @ifindex: its device when last looked up, 0: not configured on any
 * @up: the device is up with the address (the notifier's last verdict)
 * @down_events: times it went down (explicit planes only)
 * @up_events: times it came back (explicit planes only)
 *
 * Explicit planes (mrcctl plane add) live in mrc_net.planes under
 * mrc_net.lock; without any, every global unicast address on an up device
 * is one (mrc_planes_get()).
 */
struct mrc_plane {
	union mrc_addr	addr;
	int		ifindex;
	bool		up;
	u32		down_events;
	u32		up_events;
};

/* Per-CPU counters of a namespace (mrc_count()), summed when read */
struct mrc_counters {
	u64	v[__MRC_C_MAX];
};

/**
 * struct mrc_net - per network namespace state
 * @lock: guards writers of @conns and @ports, @udp4/@udp6 creation
 * @tunnel_mutex: serialises creation of the tunnel sockets (may sleep)
 * @udp4: IPv4 tunnel socket (RCU; set once under @tunnel_mutex)
 * @udp6: IPv6 tunnel socket (RCU; set once under @tunnel_mutex)
 * @conns: connections by local ID (RCU readers, @lock writers)
 * @ports: bound sockets by local MRC port (RCU readers, @lock writers)
 * @cookie_key: secret of the handshake cookies (written once at init)
 * @ts_key: secret of the servers' timestamp offsets (written once at init)
 * @rst_tokens: RST rate limiter tokens (@lock)
 * @rst_stamp: jiffies of the last refill of @rst_tokens (@lock)
 * @counters: statistics (atomic)
 * @cfg: settings (@lock writers, READ_ONCE readers)
 * @planes: explicit planes (@lock)
 * @nplanes: entries of @planes (@lock)
 * @net: the namespace
 */
struct mrc_net {
	spinlock_t		lock;		/* tables and rate limiter */
	struct mutex		tunnel_mutex;	/* tunnel socket creation */
	struct socket __rcu	*udp4;
	struct socket __rcu	*udp6;
	DECLARE_HASHTABLE(conns, 10);
	DECLARE_HASHTABLE(ports, 8);
	siphash_key_t		cookie_key;
	siphash_key_t		ts_key;
	u32			rst_tokens;
	unsigned long		rst_stamp;
	struct mrc_counters __percpu *counters;	/* per CPU: bumped per packet */
	struct mrc_config	cfg;
	struct mrc_plane	planes[MRC_MAX_PLANES];
	u8			nplanes;
	struct net		*net;
};

/* Control block of queued skbs (transmit and receive queues) */
struct mrc_skb_cb {
	u32	psn;
	u32	offset;		/* receive: bytes already read (stream) */
	u64	sent_us;	/* transmit: mrc_clock_us() of the last transmission */
	u16	ev_idx;		/* transmit: EV slot of the last transmission */
	u16	ev_port;	/* transmit: its port (the slot may be reused) */
	u8	flags;		/* MRC_F_FIN / MRC_F_EOR */
	u8	sacked:1,	/* transmit: peer has it out of order */
		lost:1,		/* transmit: marked for retransmission */
		sent:1,		/* transmit: sent at least once */
		hdr_room:1,	/* transmit: one page frag, header room before it unused */
		probed:1;	/* transmit: last sent by a tail loss probe, not lost */
	u8	tx_count;	/* transmissions so far */
	u8	prio;		/* transmit: 0 (bulk) .. 7 */
	u32	probe_echo;	/* transmit: the probe's echo is from then on (probed) */
};

#define MRC_SKB_CB(skb) ((struct mrc_skb_cb *)&((skb)->cb[0]))

/* Why a packet was taken for lost, and why the window changed (trace.h) */
enum mrc_loss_rule { MRC_LOSS_SAME_EV, MRC_LOSS_RACK, MRC_LOSS_RTO, MRC_LOSS_PATH };
enum mrc_cwnd_reason { MRC_CWND_LOSS, MRC_CWND_RTO, MRC_CWND_UNDO };

/* Deferred work bits (mrc_sock.deferred), handled in release_cb */
enum {
	MRC_DEFER_RTO,
	MRC_DEFER_DELACK,
	MRC_DEFER_PUSH,
	MRC_DEFER_KEEPALIVE,
	MRC_DEFER_ICMP,
	MRC_DEFER_PATHS,
	MRC_DEFER_LOSS_TIMER,
};

#define MRC_MAX_EVS	256

/*
 * Most segments of one burst (one GSO skb on one EV): 44 full segments of
 * a 1500-byte path and their headers fill the 64 KiB of one IPv4 packet.
 */
#define MRC_BURST_MAX_SEGS	44

/* How long the probe scan sleeps when no retired EV waits (a retirement wakes it) */
#define MRC_PROBE_SCAN_IDLE	(10 * HZ)

/* Most datagrams one mrc_udp_data_ready() call takes off the tunnel socket */
#define MRC_RX_DRAIN_BUDGET	64

/* Receive buffer of a tunnel socket, which mrc_udp_data_ready() drains */
#define MRC_TUNNEL_RCVBUF	(8 << 20)

/* How long a corked partial segment waits at most: TCP's 200 ms (tcp(7)) */
#define MRC_CORK_CEILING	(HZ / 5)

/*
 * How far ahead of rcv_nxt out-of-order data is kept, in packets; windows
 * (advertised and used) stay below it in MSS units.
 */
#define MRC_RCV_WINDOW_PKTS	8192

/*
 * How long a closed socket waits for the peer's FIN by default (TCP's
 * tcp_fin_timeout: a peer may take a while to close), and retries its own
 */
#define MRC_FIN_TIMEOUT_S	60
#define MRC_ORPHAN_TIMEOUT_MS	5000

/**
 * struct mrc_ev - one entropy value (outer UDP source port) of a connection
 * @port: the UDP source port
 * @state: enum mrc_ev_state (uapi): active, retired (probed), free slot
 * @losses: losses inferred on this EV since its last delivery
 * @probe_backoff: probe interval doublings of a retired EV
 * @weight: share of new packets, 0..MRC_EV_WEIGHT_MAX, from its quality
 * @swrr: smooth weighted round-robin accumulator
 * @srtt_us: smoothed RTT of packets sent on this EV
 * @min_rtt_us: smallest RTT seen on this EV
 * @in_flight: packets sent on this EV, not yet acked, sacked or lost
 * @sent: packets sent
 * @delivered: packets acked or sacked
 * @lost: packets inferred lost
 * @ce: deliveries the receiver saw CE-marked
 * @ce_ewma: recent CE-marked fraction of deliveries, 0..MRC_EV_WEIGHT_MAX
 * @last_delivered_tx_us: send time (mrc_clock_us()) of the newest delivered
 *	packet, 0 before the first: earlier than any send time
 * @echoed_at: jiffies when the peer last showed that a packet we sent on
 *	this EV arrived (it echoed the EV in ack_ev, or acknowledged data)
 * @echoed: @echoed_at is set
 * @untried: one of the connection's first EVs, no data sent on it yet: full
 *	weight until its first packet (mrc_ev_weight(), mrc_ev_sent())
 * @next_probe: jiffies of the next probe (retired EVs)
 * @born: connection-wide sequence number of when the slot got this port
 * @path: index of the connection's mrc_path the EV's packets take
 *
 * Guarded by the socket lock of the connection that owns it.
 */
struct mrc_ev {
	u16	port;
	u8	state;
	u8	losses;
	u8	probe_backoff;
	u8	path;
	bool	echoed;
	bool	untried;
	u16	weight;
	u16	ce_ewma;
	s32	swrr;
	u32	srtt_us;
	u32	min_rtt_us;
	u32	in_flight;
	u32	sent;
	u32	delivered;
	u32	lost;
	u32	ce;
	u64	last_delivered_tx_us;
	unsigned long	echoed_at;
	unsigned long	next_probe;
	u32	born;
};

#define MRC_EV_WEIGHT_MAX	1024
#define MRC_EV_WEIGHT_MIN	16

/**
 * struct mrc_path - a (local, remote) address pair a connection sends on
 * @local: our address (port: the connection's MRC port)
 * @remote: the peer's address (port: the peer's MRC port)
 * @ifindex: the device of @local, where the route to @remote leaves
 * @plane: the local plane's index among the connection's local addresses
 * @up: false while that device is down or lost @local (mrc_paths_check())
 * @rx: a packet of the peer came in on this path (from @remote to @local)
 * @rx_at: jiffies of the newest such packet, once @rx (mrc_path_rx())
 *
 * Path 0 is the connection's own (@local and @remote of mrc_sock); the
 * others come from the handshake's address lists.  Guarded by the socket
 * lock.
 */
struct mrc_path {
	union mrc_addr	local;
	union mrc_addr	remote;
	int		ifindex;
	u8		plane;
	bool		up;
	bool		rx;
	unsigned long	rx_at;
};

/**
 * struct mrc_route - an EV slot's cached route (mrc_output())
 * @dst: the route, with a reference; NULL: none
 * @cookie: for dst_check() (IPv6's fib serial number, 0 for IPv4)
 * @port: the EV it was looked up for (a slot gets a new one on retirement)
 * @path: the path (addresses) it was looked up for
 *
 * Guarded by the socket lock.
 */
struct mrc_route {
	struct dst_entry	*dst;
	u32			cookie;
	u16			port;
	u8			path;
};

/**
 * struct mrc_sock - one AF_MRC socket: listener or connection
 *
 * All fields are guarded by the socket lock unless marked otherwise.
 */
struct mrc_sock {
	struct sock		sk;		/* must be first */
	struct mrc_net		*mn;		/* namespace state (immutable) */
	u8			state;		/* enum mrc_state (WRITE_ONCE) */
	u8			family;		/* AF_INET/AF_INET6 once bound */
	u8			priority;
	u8			burst_max;	/* MRC_BURST_MAX; 0: the namespace's */
	u8			nodelay:1,
				bound:1,	/* in mn->ports */
				hashed:1,	/* in mn->conns */
				orphan_fin:1,	/* closed by user, finishing */
				rcv_starved:1,	/* the memory pool refused our data */
				wprobe_out:1,	/* window probe sent, not answered */
				snd_wl_valid:1,	/* snd_wl_tsval is set */
				fin_wait_armed:1, /* orphan: fin_wait_end is set */
				orphan_counted:1, /* in mrc_orphan_count */
				rto_verdict_due:1, /* rto_tsval set, no ACK since */
				cork:1,		/* TCP_CORK: hold a partial last segment */
				more:1,		/* the last send said MSG_MORE: the same */
				probe_out:1;	/* a tail loss probe not acknowledged yet */
	bool			v6only;		/* IPV6_V6ONLY: fixed once bound */
	bool			v4mapped;	/* IPv4 connection of an IPv6 socket:
						 * its addresses read v4-mapped
						 */
	union mrc_addr		local;		/* bound address and port */
	union mrc_addr		remote;		/* peer address and port */
	struct hlist_node	port_node;	/* mn->ports (mn->lock) */
	struct hlist_node	conn_node;	/* mn->conns (mn->lock) */
	struct rcu_head		rcu;
	u32			local_id;	/* immutable once hashed */
	u32			remote_id;	/* 0, then the peer's, once
						 * (WRITE_ONCE; read locklessly
						 * by mrc_from_stranger() and
						 * mrc_icmp_matches())
						 */
	u16			udp_dport;	/* peer's tunnel UDP port */

	/* entropy values: outer UDP source ports */
	struct mrc_ev		*evs;		/* ev_cap slots */
	struct mrc_route	*ev_routes;	/* ev_cap slots: each EV's route */
	u16			ev_cap;		/* 2 * ev_count: room for retired */
	u16			ev_count;	/* active EVs wanted */
	u32			ev_born;	/* next mrc_ev.born */

	/* planes: address pairs, and the peer's plane addresses */
	struct mrc_path		paths[MRC_MAX_PATHS];
	u8			npaths;		/* 1 until the handshake's lists */
	u8			rx_path;	/* the path the peer's last packet came in on */
	u8			npeer_addrs;
	union mrc_addr		peer_addrs[MRC_MAX_PLANES]; /* validated by ID or cookie */

	/* sender */
	u32			snd_una;	/* oldest unacked PSN */
	u32			snd_nxt;	/* next new PSN */
	u32			snd_wnd;	/* peer's window, bytes */
	u32			snd_wnd_max;	/* largest snd_wnd seen: SEQPACKET message limit */
	u32			snd_wl_tsval;	/* tsval of the ACK that set snd_wnd */
	struct mrc_cc		cc;		/* congestion window */
	u32			cc_round_end;	/* PSN that ends the CC round */
	u32			in_flight;	/* sent, not acked, not lost */
	u32			mss;
	int			sndbuf_init;	/* sk_sndbuf before memory pressure cut it */
	u32			sndbuf_wnd;	/* usable window (packets) the send buffer fits */
	u32			recover;	/* PSN that ends fast recovery */
	struct sk_buff		*send_head;	/* first never-sent skb */
	struct mrc_rtt		rtt;
	u32			slowest_rtt_us;	/* largest srtt of an active EV */
	u8			reo_mult;	/* RACK's window / base (mrc_rack_reo_round()) */
	u8			reo_quiet;	/* rounds since a spurious resend or a step back */
	bool			reo_spurious;	/* this round: a resend's original was acked */
	u16			evs_unproven;	/* mrc_ev_survey(), as of the last survey */
	u32			evs_srtt_max;	/* largest srtt of an active EV, as of then */
	u8			evs_survey_age;	/* loss checks since that survey */
	bool			evs_changed;	/* something it counts changed since */
	unsigned long		probe_scan_at;	/* jiffies: a retired EV's probe may be due */
	u8			backoff;	/* RTO doublings */
	u8			rto_streak;	/* RTOs since the last delivery */
	u32			rto_tsval;	/* our tsval when the last RTO resent */
	u64			rack_at_us;	/* mrc_clock_us() RACK's next verdict; 0: none */
	u32			probe_high;	/* snd_nxt when the loss probe went out */
	u64			probe_at_us;	/* mrc_clock_us() the loss probe is due; 0: none */
	u32			user_timeout_ms;
	unsigned long		progress_stamp;	/* jiffies of the last ACK progress */
	unsigned long		xmit_stamp;	/* jiffies: data went out after idle */
	unsigned long		rcv_stamp;	/* jiffies of the peer's last packet */
	u32			keepidle;	/* jiffies; 0: the netns's TCP default */
	u32			keepintvl;	/* jiffies; 0: the netns's TCP default */
	u8			keepcnt;	/* probes; 0: the netns's TCP default */
	u8			keepalive_probes; /* sent since the peer's last packet */
	int			icmp_err;	/* MRC_DEFER_ICMP: an errno (slock) */
	u32			icmp_mtu;	/* MRC_DEFER_ICMP: smallest MTU, 0: none (slock) */
	unsigned long		fin_wait_end;	/* orphan: jiffies its FIN wait ends */

	/* receiver */
	u32			rcv_nxt;	/* next PSN expected in order */
	struct rb_root		ooo_queue;	/* out of order: rbtree by PSN (skb->rbnode) */
	struct sk_buff		*ooo_last;	/* its highest PSN, or NULL */
	u32			ack_pending;	/* packets received since ACK */
	u8			rx_batch:1,	/* in a batch: ACK and wake at its end */
				rx_ack_due:1,	/* the batch owes the peer an ACK */
				rx_wake_due:1;	/* the batch queued data for the reader */
	u32			rcv_msgs;	/* whole messages queued (SEQPACKET) */
	u32			rcv_queued;	/* unread bytes in sk_receive_queue */
	u32			adv_wnd;	/* window in our last ACK */
	u32			rcv_promised;	/* PSNs before this fit windows we sent */
	u8			rcv_ratio;	/* peer's MSS per skb truesize, /256 */
	u32			rcv_rtt_us;	/* RTT to our tsval echoed in data; 0: none */
	u32			rcv_rtt_tsecr;	/* the echo it was last taken from */
	u32			rcvq_space;	/* most bytes the reader took in one RTT */
	u32			rcvq_copied;	/* bytes it took since rcvq_time_us */
	u64			rcvq_time_us;	/* mrc_clock_us(): this measurement began */
	u32			last_tsval;	/* to echo */
	u32			ts_offset;	/* our tsval - mrc_clock_us(), immutable
						 * once the first packet is out
						 */
	u16			last_ev;	/* EV of the last data packet */
	u16			echo_port;	/* the peer's last ack_ev seen, */
	u32			echo_tsecr;	/* with its tsecr: a repeated echo */
	u8			acks_sent;	/* pure ACKs, counting to the next exploring one */
	u8			ack_path;	/* the last pure ACK's (mrc_ev_pick_ack()) */
	bool			ce_pending;	/* CE seen since our last ACK */
	bool			dsack_due;	/* a duplicate came since our last pure ACK: */
	u16			dsack_port;	/* its EV */
	u32			dsack_tsval;	/* the duplicate's tsval, for MRC_F_DSACK */
	struct mrc_dsack_seen	dsack_seen;	/* the peer's last MRC_F_DSACK echo */
	u64			newest_delivered_tx_us;	/* RACK: newest send time acked
							 * (mrc_clock_us(), 0: none yet)
							 */
	u32			rack_rtt_us;	/* RACK.rtt: that packet's RTT */
	struct mrc_rtt_hi	rtt_hi;		/* RACK: largest RTT of recent
						 * deliveries, any EV
						 */
	bool			fin_received;
	struct mrc_trace	*trace;		/* path traces (evtrace.c): set once,
						 * under the socket lock; freed
						 * with the socket
						 */

	/* handshake (client) */
	u32			iss;		/* our initial PSN (set before the SYN
						 * goes out; read locklessly by
						 * mrc_icmp_matches())
						 */
	struct mrc_hs_payload	hs;		/* cookie to echo */

	/* listener */
	struct list_head	accept_queue;	/* children ready to accept */
	struct list_head	accept_node;	/* in the listener's queue */
	struct mrc_sock		*parent;	/* listener, until accepted */

	struct timer_list	rto_timer;
	struct hrtimer		delack_timer;	/* soft: runs in softirq */
	struct hrtimer		loss_timer;	/* RACK's deadline or the loss probe; soft */
	struct timer_list	keepalive_timer;
	struct timer_list	path_timer;	/* a plane changed: mrc_paths_check() */
	unsigned long		deferred;	/* MRC_DEFER_* (atomic bitops) */

	struct mrc_info		stats;		/* counters for MRC_INFO */
};

static inline struct mrc_sock *mrc_sk(const struct sock *sk)
{
	return (struct mrc_sock *)sk;
}

extern u64 mrc_clock_offset_us;	/* af_mrc.c: test knob, 0 by default */
extern bool mrc_test_clock;	/* af_mrc.c: the knob is set: ts offsets 0 */

/*
 * MRC's clock: microseconds since boot, in 64 bits (wraps after 584,000
 * years), so internal send times compare as plain numbers and 0 is earlier
 * than any of them.  Only the wire carries 32 bits: mrc_tsval().
 */
static inline u64 mrc_clock_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC) + mrc_clock_offset_us;
}

/* States in which data may be outstanding: sent, resent, probed */
static inline bool mrc_sending_state(const struct mrc_sock *msk)
{
	switch (msk->state) {
	case MRC_STATE_ESTABLISHED:
	case MRC_STATE_CLOSE_WAIT:
	case MRC_STATE_FIN_WAIT:
	case MRC_STATE_CLOSING:
		return true;
	default:
		return false;
	}
}

/* The tsval @msk sends at @now_us: its own offset clock, cut to 32 bits */
static inline u32 mrc_tsval(const struct mrc_sock *msk, u64 now_us)
{
	return mrc_ts_clock(msk->ts_offset, now_us);
}

/* The timestamp offset of a server's connection (SYNACK and child agree) */
u32 mrc_ts_offset(const struct mrc_net *mn, u32 server_id, u32 client_id);

/* af_mrc.c */
extern int mrc_family_nr;
extern unsigned int mrc_udp_port;
extern unsigned int mrc_min_rto_us;
extern unsigned int mrc_init_cwnd;
extern unsigned int mrc_default_evs;
extern unsigned int mrc_redundancy;
extern unsigned int mrc_burst_max;
extern struct proto mrc_proto;

/* mem.c */
extern atomic_long_t mrc_memory_allocated;
DECLARE_PER_CPU(int, mrc_memory_per_cpu_fw_alloc);
extern struct percpu_counter mrc_sockets_allocated;
extern unsigned long mrc_memory_pressure;
extern long mrc_mem[3];
extern int mrc_wmem[3];
extern int mrc_rmem[3];
void mrc_enter_memory_pressure(struct sock *sk);
void mrc_leave_memory_pressure(struct sock *sk);
void mrc_charge_forced(struct sock *sk, int size);
void mrc_write_queue_purge(struct sock *sk);
void mrc_wmem_free_skb(struct sock *sk, struct sk_buff *skb);
void mrc_rcv_space_adjust(struct mrc_sock *msk, int copied);
void mrc_sndbuf_expand(struct mrc_sock *msk);
size_t mrc_frag_seg_truesize(size_t len);
int mrc_mem_init(void);
void mrc_mem_exit(void);

/* pernet.c */
struct mrc_net *mrc_pernet(const struct net *net);
int mrc_pernet_init(void);
void mrc_pernet_exit(void);
int mrc_tunnel_get(struct mrc_net *mn, int family);
struct socket *mrc_tunnel_create(struct mrc_net *mn, int family, u16 port);
struct socket *mrc_tunnel_sock(struct mrc_net *mn, int family);
void mrc_count(struct mrc_net *mn, enum mrc_counter c);
u64 mrc_counter_read(struct mrc_net *mn, enum mrc_counter c);
void mrc_count_add(struct mrc_net *mn, enum mrc_counter c, unsigned int n);
int mrc_hash_conn(struct mrc_sock *msk);
void mrc_unhash_conn(struct mrc_sock *msk);
struct mrc_sock *mrc_lookup_conn(struct mrc_net *mn, u32 local_id);
int mrc_bind_port(struct mrc_sock *msk, u16 port, bool reuse);
void mrc_unbind_port(struct mrc_sock *msk);
int mrc_listen_port(struct mrc_sock *msk);
struct mrc_sock *mrc_lookup_listener(struct mrc_net *mn, const union mrc_addr *daddr, u32 flow);
bool mrc_rst_allowed(struct mrc_net *mn);

/* socket.c */
extern const struct proto_ops mrc_stream_ops;
void mrc_sock_init(struct mrc_sock *msk);
int mrc_conn_start(struct mrc_sock *msk);
void mrc_set_state(struct mrc_sock *msk, int state);
u8 mrc_sock_prio(const struct mrc_sock *msk);
void mrc_destruct(struct sock *sk);

/* state.c */
void mrc_listen_rcv(struct mrc_sock *lsk, struct sk_buff *skb);
bool mrc_syn_sent_rcv(struct mrc_sock *msk, struct sk_buff *skb, const struct mrchdr *h);
void mrc_fin_rcv(struct mrc_sock *msk);
void mrc_our_fin_acked(struct mrc_sock *msk);
void mrc_done(struct mrc_sock *msk, int err);

/* input.c */
void mrc_skb_addrs(struct sk_buff *skb, union mrc_addr *local, union mrc_addr *remote);
void mrc_udp_data_ready(struct sock *usk);
void mrc_rx_batch_end(struct mrc_sock *msk);
int mrc_backlog_rcv(struct sock *sk, struct sk_buff *skb);
bool mrc_ooo_insert(struct rb_root *root, struct sk_buff **last, struct sk_buff *skb);
u64 mrc_ooo_sack(const struct rb_root *root, u32 rcv_nxt);
unsigned int mrc_ooo_sack_words(const struct rb_root *root, const struct sk_buff *last,
				u32 rcv_nxt, u64 *words);
void mrc_ooo_purge(struct mrc_sock *msk);
void mrc_detect_losses(struct mrc_sock *msk, u64 now_us);

/* output.c */
int mrc_xmit(struct mrc_sock *msk, struct sk_buff *skb, int ev_idx);
int mrc_send_new(struct mrc_sock *msk, int ev_idx);
void __mrc_push(struct mrc_sock *msk, bool flush);
bool mrc_tail_held(struct mrc_sock *msk, const struct sk_buff *skb);
u32 mrc_burst_len(const struct mrc_sock *msk);

/* mrc_push() - send what the windows allow (__mrc_push(), holding a corked tail) */
static inline void mrc_push(struct mrc_sock *msk)
{
	__mrc_push(msk, false);
}

void mrc_send_ack(struct mrc_sock *msk);
void mrc_send_ack_twice(struct mrc_sock *msk, u8 flags);
void mrc_send_ctrl(struct mrc_sock *msk, u8 type, u8 flags, const void *payload, u16 plen);
void mrc_send_rst_reply(struct mrc_net *mn, struct sk_buff *skb, const struct mrchdr *h);
void mrc_send_synack(struct mrc_net *mn, struct sk_buff *skb, const struct mrchdr *h,
		     u32 server_id, u32 server_isn, const struct mrc_hs_payload *hs);
void mrc_send_hsack(struct mrc_sock *msk);
int mrc_queue_fin(struct mrc_sock *msk);
void mrc_routes_release(struct mrc_route *routes, u16 n);
void mrc_retransmit_lost(struct mrc_sock *msk);
bool mrc_loss_probe_wanted(const struct mrc_sock *msk);
void mrc_send_loss_probe(struct mrc_sock *msk);
void mrc_fill_header(struct mrc_sock *msk, struct mrchdr *h, u8 type, u8 flags);
void mrc_probe_retired(struct mrc_sock *msk);
struct sk_buff *mrc_trace_probe_build(struct mrc_sock *msk, u32 *tsval);
void mrc_trace_probe_send(struct mrc_sock *msk, struct sk_buff *skb, const struct mrc_ev *ev,
			  u8 ttl);

/* evtrace.c */
struct mrc_ev_trace;
void mrc_trace_evs_drawn(struct mrc_sock *msk);
int mrc_trace_start(struct mrc_sock *msk, u8 max_ttl);
void mrc_trace_stop(struct mrc_sock *msk);
void mrc_trace_free(struct mrc_sock *msk);
void mrc_trace_reached_rcv(struct mrc_sock *msk, u16 port, u32 tsecr);
bool mrc_trace_icmp(struct mrc_sock *msk, struct sk_buff *skb, const struct mrchdr *h,
		    u16 port);
int mrc_trace_copy(struct mrc_sock *msk, struct mrc_ev_trace *out, bool *running);
void mrc_window_update(struct mrc_sock *msk);
u32 mrc_rcv_wnd(struct mrc_sock *msk);

/* ev_sock.c */
int mrc_init_evs(struct mrc_sock *msk, unsigned int count, gfp_t gfp);
void mrc_evs_survey(struct mrc_sock *msk);
int mrc_pick_ev(struct mrc_sock *msk, int avoid);
int mrc_pick_ack_ev(struct mrc_sock *msk, int avoid, bool explore);
int mrc_pick_retransmit_ev(struct mrc_sock *msk, const struct mrc_skb_cb *cb);
struct mrc_ev *mrc_ev_of(struct mrc_sock *msk, const struct mrc_skb_cb *cb);
bool mrc_retire_ev(struct mrc_sock *msk, int idx);
void mrc_lose_paths(struct mrc_sock *msk, u32 paths, bool silent);
void mrc_probe_scan_soon(struct mrc_sock *msk, unsigned long when);
void mrc_probe_answered(struct mrc_sock *msk, u16 port);
void mrc_ev_rtt_rcv(struct mrc_sock *msk, u16 port, u32 sample);
void mrc_echo_rcv(struct mrc_sock *msk, u16 port, u32 tsecr);

/*
 * Something mrc_ev_survey() counts changed (an EV's state or path, a first
 * delivery, the largest srtt): the next loss check surveys the slots again.
 */
static inline void mrc_evs_changed(struct mrc_sock *msk)
{
	msk->evs_changed = true;
}

/* icmp.c */
int mrc_udp_err_lookup(struct sock *usk, struct sk_buff *skb);
void mrc_udp_err_rcv(struct sock *usk, struct sk_buff *skb, int err, __be16 port, u32 info,
		     u8 *payload);
void mrc_icmp_deferred(struct mrc_sock *msk);

/* plane.c */
int mrc_plane_add(struct mrc_net *mn, const union mrc_addr *addr);
int mrc_plane_del(struct mrc_net *mn, const union mrc_addr *addr);
int mrc_planes_get(struct mrc_net *mn, struct mrc_plane *out, int max, bool *is_default);
int mrc_addr_list_put(struct mrc_net *mn, int family, const union mrc_addr *skip, void *buf,
		      unsigned int room);
int mrc_addr_list_take(struct mrc_sock *msk, const void *buf, unsigned int len);
bool mrc_peer_known(const struct mrc_sock *msk, const union mrc_addr *remote);
void mrc_path_rx(struct mrc_sock *msk, const union mrc_addr *local, const union mrc_addr *remote);
int mrc_paths_find(const struct mrc_path *paths, u8 npaths, u8 hint,
		   const union mrc_addr *local, const union mrc_addr *remote);
void mrc_paths_build(struct mrc_sock *msk);
u16 mrc_path_evs(const struct mrc_sock *msk);
void mrc_paths_check(struct mrc_sock *msk);
int mrc_plane_init(void);
void mrc_plane_exit(void);

/* tcp_compat.c */
int mrc_tcp_setsockopt(struct sock *sk, int optname, sockptr_t optval, unsigned int optlen);
int mrc_tcp_getsockopt(struct sock *sk, int optname, char __user *optval, int __user *optlen);

/* timer.c */
void mrc_timers_init(struct mrc_sock *msk);
void mrc_timers_stop(struct mrc_sock *msk);
void mrc_arm_rto(struct mrc_sock *msk);
void mrc_arm_rack(struct mrc_sock *msk, u64 in_us);
void mrc_arm_delack(struct mrc_sock *msk);
void mrc_arm_loss_probe(struct mrc_sock *msk);
void mrc_arm_ack_timer(struct mrc_sock *msk, u32 us);
void mrc_rto_fire(struct mrc_sock *msk);
void mrc_delack_fire(struct mrc_sock *msk);
void mrc_release_cb(struct sock *sk);
void mrc_keepalive(struct sock *sk, int on);
u32 mrc_keepidle(const struct mrc_sock *msk);
u32 mrc_keepintvl(const struct mrc_sock *msk);
u8 mrc_keepcnt(const struct mrc_sock *msk);
void mrc_keepalive_arm(struct mrc_sock *msk);
extern atomic_t mrc_orphan_count;
extern int mrc_max_orphans;
extern int mrc_fin_timeout;
bool mrc_orphan_add(struct mrc_sock *msk);
void mrc_orphan_del(struct mrc_sock *msk);
void mrc_orphan_fin_wait(struct mrc_sock *msk);

/* netlink.c */
int mrc_nl_init(void);
void mrc_nl_exit(void);
void mrc_nl_notify_ev(struct mrc_sock *msk, const struct mrc_ev *ev, bool retired);
void mrc_nl_notify_conn(struct mrc_sock *msk, bool established);
void mrc_nl_notify_plane(struct mrc_net *mn, const struct mrc_plane *plane);

/* wire.c */
enum mrc_counter mrc_hdr_check(const struct mrchdr *h, unsigned int len);
bool mrc_hdr_train_next(const struct mrchdr *first, const struct mrchdr *h, u32 i,
			unsigned int seg_len);

/* cookie.c */
struct mrc_cookie_in {
	__be32	addr[4];	/* peer address (IPv4 in addr[0]) */
	__be32	laddr[4];	/* our address */
	u16	sport, dport;	/* MRC ports */
	u32	client_id;
	u32	client_isn;
};

struct mrc_cookie {
	u32	server_id;
	u32	server_isn;
	u64	cookie;
};

/*
 * The slot word of a handshake: the time slot in its low 30 bits, in the top
 * two which of MRC_COOKIE_SALTS derivations gave a free connection ID.
 */
#define MRC_COOKIE_SALT_SHIFT	30
#define MRC_COOKIE_SLOT_MASK	(BIT(MRC_COOKIE_SALT_SHIFT) - 1)
#define MRC_COOKIE_SALTS	4

void mrc_cookie_make(const siphash_key_t *key, const struct mrc_cookie_in *in, u32 word,
		     struct mrc_cookie *out);
bool mrc_cookie_check(const siphash_key_t *key, const struct mrc_cookie_in *in, u32 word,
		      u32 now_slot, u32 server_id, u32 server_isn, u64 cookie);
u32 mrc_cookie_slot(void);
u32 mrc_cookie_word(u32 slot, u32 salt);

#endif /* _NET_MRC_PROTOCOL_H */
