/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mrc.h - ABI of the MRC (multipath reliable connection) socket family.
 *
 * Applications use AF_MRC exactly as they would use TCP (SOCK_STREAM) or
 * SCTP/unix seqpacket (SOCK_SEQPACKET): addresses are plain sockaddr_in and
 * sockaddr_in6, the port is the MRC service port.
 */
#ifndef _UAPI_LINUX_MRC_H
#define _UAPI_LINUX_MRC_H

#include <linux/types.h>

/*
 * A stock kernel rejects families >= AF_MAX, so the module borrows slot 18
 * (AF_ASH, never implemented).  The module parameter "family" overrides it;
 * the live number is in /sys/module/mrc/parameters/family.
 */
#ifndef AF_MRC
#define AF_MRC		18
#endif
#ifndef PF_MRC
#define PF_MRC		AF_MRC
#endif

/* Level for setsockopt()/getsockopt() */
#ifndef SOL_MRC
#define SOL_MRC		290
#endif

/* Default UDP port of the tunnel socket (IANA unassigned, no tunnel uses it) */
#define MRC_DEFAULT_UDP_PORT	4797

/* Socket options at SOL_MRC */
#define MRC_INFO		1	/* struct mrc_info, read only */
#define MRC_NODELAY		2	/* int: send small segments at once */
#define MRC_USER_TIMEOUT	3	/* int: ms without progress -> ETIMEDOUT */
#define MRC_EV_COUNT		4	/* int: entropy values per connection */
#define MRC_PRIORITY		5	/* int: 0 (bulk) .. 7 (urgent) */
#define MRC_PATH_INFO		6	/* struct mrc_path_info[], read only */
#define MRC_PATH_INFO_EXT	7	/* struct mrc_path_info_ext[], read only */
#define MRC_BURST_MAX		8	/* int: most packets back to back on one EV
					 * (1: spray each; 0: the namespace's burst-max)
					 */

/*
 * Priorities at or above MRC_PRIO_HIGH are urgent: on SEQPACKET sockets their
 * messages overtake queued bulk messages, and they go out on several EVs when
 * the namespace's redundancy setting asks for it.  Per message: a cmsg at
 * level SOL_MRC, type MRC_PRIORITY, with an int.
 */
#define MRC_PRIO_HIGH		4

/* Connection states, as reported in mrc_info.state */
enum mrc_state {
	MRC_STATE_CLOSED = 0,
	MRC_STATE_LISTEN,
	MRC_STATE_SYN_SENT,
	MRC_STATE_ESTABLISHED,
	MRC_STATE_FIN_WAIT,	/* we sent FIN, peer still may send */
	MRC_STATE_CLOSE_WAIT,	/* peer sent FIN, we still may send */
	MRC_STATE_CLOSING,	/* both sent FIN, ours not yet acked */
	MRC_STATE_DONE,		/* both directions finished or reset */
};

/* State of an entropy value, as in mrc_path_info.state */
enum mrc_ev_state {
	MRC_EV_ACTIVE = 0,	/* carries data */
	MRC_EV_RETIRED,		/* lost a packet: probed, re-admitted on reply */
	MRC_EV_FREE,		/* unused slot (never reported) */
};

/**
 * struct mrc_path_info - one entropy value, for getsockopt(MRC_PATH_INFO)
 *
 * getsockopt() fills as many entries as fit in optlen and sets optlen to
 * the bytes written.
 */
struct mrc_path_info {
	__u16	port;		/* UDP source port */
	__u8	state;		/* enum mrc_ev_state */
	__u8	losses;		/* losses since its last delivery */
	__u32	weight;		/* share of new packets, 0..1024 */
	__u32	srtt_us;
	__u32	min_rtt_us;
	__u32	in_flight;
	__u32	sent;
	__u32	delivered;
	__u32	lost;
	__u32	ce;
};

/**
 * struct mrc_path_info_ext - an entropy value and its path, for
 * getsockopt(MRC_PATH_INFO_EXT)
 *
 * @info is the entry MRC_PATH_INFO returns; the rest names the path (the
 * (local, remote) address pair over the hosts' planes) that the EV's
 * packets take.  Addresses are in network byte order, IPv4 in the first 4
 * bytes and the other 12 zero; family 0 and zero addresses while the
 * connection has no path yet.  72 bytes (@info: 36), no implicit padding,
 * the same on every ABI.  getsockopt() fills as many entries as fit in
 * optlen and sets optlen to the bytes written.
 */
struct mrc_path_info_ext {
	struct mrc_path_info	info;
	__u8	path;		/* the connection's path index; path 0: its own */
	__u8	family;		/* AF_INET or AF_INET6 */
	__u16	reserved;	/* zero */
	__u8	local_addr[16];
	__u8	remote_addr[16];
};

#define MRC_INFO_VERSION	2

/**
 * struct mrc_info - connection state, like struct tcp_info
 *
 * Grows only at the end; @len says how much the kernel filled in and
 * getsockopt() copies min(optlen, sizeof) bytes.  No implicit padding:
 * every field sits at the same offset on 32- and 64-bit ABIs (the 64-bit
 * counters start at offset 56), and reserved bytes read as zero.
 */
struct mrc_info {
	__u16	version;	/* MRC_INFO_VERSION */
	__u16	len;		/* bytes of this struct the kernel knows */
	__u8	state;		/* enum mrc_state */
	__u8	priority;
	__u16	ev_count;	/* entropy values in use (1..256) */
	__u32	local_id;	/* connection IDs on the wire */
	__u32	remote_id;
	__u32	srtt_us;
	__u32	rttvar_us;
	__u32	rto_us;
	__u32	min_rtt_us;
	__u32	cwnd;		/* packets */
	__u32	in_flight;	/* packets sent, not yet acked */
	__u32	snd_wnd;	/* peer's advertised window, bytes */
	__u32	rcv_wnd;	/* our advertised window, bytes */
	__u32	mss;		/* payload bytes per packet */
	__u32	reserved0;	/* zero; keeps the 64-bit counters 8-aligned */
	__u64	bytes_sent;
	__u64	bytes_acked;
	__u64	bytes_received;
	__u64	packets_sent;
	__u64	packets_received;
	__u64	retransmits;
	__u64	packets_lost;
	__u64	rto_events;
	__u64	dup_packets_received;
};

#endif /* _UAPI_LINUX_MRC_H */
