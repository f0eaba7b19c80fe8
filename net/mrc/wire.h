/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MRC wire format: the header after the UDP header, its packet types and
 * flags, and the payloads of the handshake packets, everything as it lies
 * on the wire (see Documentation/networking/mrc.rst, "Wire format").  The
 * checks a received header must pass are in wire.c.
 */
#ifndef _NET_MRC_WIRE_H
#define _NET_MRC_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

/*
 * 2: MRC_F_SACKX (an ACK's SACK field continued in its payload)
 * 3: a withdrawn draft (0x40 on data); never used again
 * 4: MRC_F_DSACK (an ACK's payload ends with struct mrc_dsack)
 */
#define MRC_VERSION		4

/* Packet types */
enum mrc_type {
	MRC_T_SYN = 1,		/* client -> server: open */
	MRC_T_SYNACK,		/* server -> client: IDs + cookie, no state */
	MRC_T_HSACK,		/* client -> server: echoes the cookie */
	MRC_T_DATA,		/* payload (possibly empty with FIN) */
	MRC_T_ACK,		/* pure acknowledgment / window update */
	MRC_T_RST,		/* abort */
	__MRC_T_MAX,
};

/* Header flags */
#define MRC_F_FIN	0x01	/* last PSN of this direction */
#define MRC_F_EOR	0x02	/* last packet of a SEQPACKET message */
#define MRC_F_ACKNOW	0x04	/* receiver should acknowledge at once */
#define MRC_F_PROBE	0x08	/* EV probe; in an ACK: answers one on ack_ev */
#define MRC_F_CE	0x10	/* in an ACK: data acknowledged was CE-marked */
#define MRC_F_SACKX	0x20	/* in an ACK: its payload continues @sack */
#define MRC_F_DSACK	0x40	/* in an ACK: its payload ends with struct mrc_dsack */
#define MRC_F_ALL	0x7f

/**
 * struct mrchdr - the MRC header, right after the UDP header
 * @version: MRC_VERSION
 * @type: enum mrc_type
 * @flags: MRC_F_*
 * @priority: 0 (bulk) .. 7 (urgent)
 * @sport: MRC service port of the sender
 * @dport: MRC service port of the receiver
 * @src_id: sender's connection ID
 * @dst_id: receiver's connection ID (0 in SYN)
 * @psn: this packet's PSN (data, FIN, SYN, HSACK)
 * @ack_psn: cumulative ACK: next PSN the sender of this header expects
 * @sack: bit i set: PSN ack_psn + 1 + i was received (continued by
 *	MRC_F_SACKX)
 * @tsval: sender's clock, microseconds
 * @tsecr: tsval of the packet that triggered this ACK
 * @rcv_wnd: receive window, bytes beyond ack_psn's data
 * @ack_ev: UDP source port (EV) of the packet that triggered this ACK
 * @len: payload bytes after the header
 */
struct mrchdr {
	__u8	version;
	__u8	type;
	__u8	flags;
	__u8	priority;
	__be16	sport;
	__be16	dport;
	__be32	src_id;
	__be32	dst_id;
	__be32	psn;
	__be32	ack_psn;
	__be64	sack;
	__be32	tsval;
	__be32	tsecr;
	__be32	rcv_wnd;
	__be16	ack_ev;
	__be16	len;
} __packed;

static_assert(sizeof(struct mrchdr) == 48);

#define MRC_SACK_BITS	64

/*
 * A pure ACK flagged MRC_F_SACKX carries 1..MRC_SACKX_WORDS more SACK words
 * as its payload (__be64 each): bit i of word k set means PSN ack_psn + 1 +
 * MRC_SACK_BITS * (k + 1) + i was received.  With the header's field they
 * cover the 2048 PSNs after ack_psn: a hole at the front (a plane that died
 * with half the window on it) no longer hides what arrived behind its
 * first 64 PSNs.  A bitmap, not TCP's ranges: spraying and bursts of two
 * on 64 EVs leave holes every few PSNs, which 31 ranges would not cover.
 */
#define MRC_SACKX_WORDS	31

/**
 * struct mrc_dsack - a duplicate the sender of an ACK received
 * @tsval: the duplicate's tsval
 * @ev: the UDP source port (EV) it came on
 * @reserved: zero, ignored
 *
 * A pure ACK flagged MRC_F_DSACK ends its payload (after any MRC_F_SACKX
 * words) with this: the echo of a duplicate, beside the header's echo of
 * the newest packet, which it leaves as it is.
 */
struct mrc_dsack {
	__be32	tsval;
	__be16	ev;
	__be16	reserved;
} __packed;

static_assert(sizeof(struct mrc_dsack) == 8);

/* Handshake payload of SYNACK and HSACK */
struct mrc_hs_payload {
	__be64	cookie;
	__be32	slot;		/* time slot the cookie was made in */
	__be32	mss;		/* largest payload the sender accepts */
} __packed;

static_assert(sizeof(struct mrc_hs_payload) == 16);

/*
 * After the handshake payload of a SYNACK or HSACK, optionally: the
 * sender's other plane addresses (Documentation/networking/mrc.rst,
 * "Planes").  They are as authentic as the handshake packet that carries
 * them: the HSACK's cookie, the SYNACK's connection ID.
 */
struct mrc_wire_addr {
	__u8	family;		/* 4 or 6 */
	__u8	plane;		/* the sender's plane index */
	__be16	reserved;	/* zero */
	__be32	addr[4];	/* IPv4 in addr[0] */
} __packed;

struct mrc_addr_list {
	__u8	count;		/* entries that follow, at most MRC_MAX_PLANES */
	__u8	reserved[3];
	struct mrc_wire_addr addrs[];
} __packed;

static_assert(sizeof(struct mrc_wire_addr) == 20);
static_assert(sizeof(struct mrc_addr_list) == 4);

#endif /* _NET_MRC_WIRE_H */
