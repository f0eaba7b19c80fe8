/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-EV path discovery, Paris-traceroute style: the hops one EV's packets
 * cross, found by probes on the EV's own UDP 5-tuple (so every switch
 * hashes them as it hashes the EV's data) with TTL 1, 2, ... and the ICMP
 * time-exceeded errors they draw.  The decisions over plain state, so that
 * KUnit drives them directly; evtrace.c sends and matches.
 *
 * One probe per EV is out at a time: an answer names its TTL by the
 * probe's tsval, which the ICMP quotes (routers quote our whole header, as
 * RFC 1812 4.3.2.3 asks: as much of the packet as fits in 576 bytes) and
 * the peer's probe answer echoes.
 */
#ifndef _NET_MRC_EVTRACE_H
#define _NET_MRC_EVTRACE_H

#include <linux/types.h>

/* Most hops a trace records, and its default TTL limit */
#define MRC_TRACE_MAX_HOPS	8
#define MRC_TRACE_DEF_TTL	8
/* A trace ends after this many hops in a row that did not answer */
#define MRC_TRACE_MAX_SILENT	3
/* How long a probe waits for its answer: 2 RTTs, within these */
#define MRC_TRACE_MIN_WAIT_US	5000
#define MRC_TRACE_MAX_WAIT_US	1000000

/* enum mrc_trace_state: where one EV's trace stands (the uapi's values) */
enum {
	MRC_TRACE_NONE,		/* never traced */
	MRC_TRACE_RUNNING,	/* a probe is out or due */
	MRC_TRACE_REACHED,	/* the peer answered: the hops before it are known */
	MRC_TRACE_UNREACHED,	/* TTL limit or MRC_TRACE_MAX_SILENT silent hops */
};

/**
 * struct mrc_trace_hop - one hop of an EV's path
 * @addr: the router that answered (IPv4 in addr[0]); all zero: no answer
 * @rtt_us: from the probe to its answer
 */
struct mrc_trace_hop {
	__be32	addr[4];
	u32	rtt_us;
};

/**
 * struct mrc_ev_trace - the trace of one EV
 * @port: the EV (UDP source port) traced
 * @state: MRC_TRACE_*
 * @ttl: the TTL of the last probe sent (0: none yet)
 * @max_ttl: the TTL limit, at most MRC_TRACE_MAX_HOPS
 * @silent: hops in a row without an answer
 * @out: a probe is out, waiting for its answer
 * @nhops: hops recorded in @hop, for TTL 1 .. @nhops; REACHED: the peer is
 *	hop @nhops + 1
 * @tsval: the probe's tsval, which its answers quote or echo
 * @sent_us: when it was sent (mrc_clock_us())
 * @hop: the hops
 */
struct mrc_ev_trace {
	u16	port;
	u8	state;
	u8	ttl;
	u8	max_ttl;
	u8	silent;
	u8	out;
	u8	nhops;
	u32	tsval;
	u64	sent_us;
	struct mrc_trace_hop hop[MRC_TRACE_MAX_HOPS];
};

/**
 * mrc_trace_begin() - (re)start the trace of an EV
 * @t: its state
 * @port: the EV
 * @max_ttl: the TTL limit (clamped to 1 .. MRC_TRACE_MAX_HOPS)
 */
static inline void mrc_trace_begin(struct mrc_ev_trace *t, u16 port, u8 max_ttl)
{
	*t = (struct mrc_ev_trace){
		.port = port,
		.state = MRC_TRACE_RUNNING,
		.max_ttl = max_ttl < 1 ? 1 : max_ttl > MRC_TRACE_MAX_HOPS ?
			   MRC_TRACE_MAX_HOPS : max_ttl,
	};
}

/**
 * mrc_trace_next_ttl() - the TTL of the next probe to send, if one is due
 * @t: the trace
 *
 * Ends a trace that has reached its TTL limit or MRC_TRACE_MAX_SILENT
 * silent hops in a row (a blackhole, or routers that do not answer).
 * Return: the TTL, or 0 when no probe is due.
 */
static inline u8 mrc_trace_next_ttl(struct mrc_ev_trace *t)
{
	if (t->state != MRC_TRACE_RUNNING || t->out)
		return 0;
	if (t->ttl >= t->max_ttl || t->silent >= MRC_TRACE_MAX_SILENT) {
		t->state = MRC_TRACE_UNREACHED;
		return 0;
	}
	return t->ttl + 1;
}

/**
 * mrc_trace_sent() - a probe went out
 * @t: the trace
 * @ttl: its TTL (mrc_trace_next_ttl())
 * @tsval: its tsval
 * @now_us: mrc_clock_us()
 */
static inline void mrc_trace_sent(struct mrc_ev_trace *t, u8 ttl, u32 tsval, u64 now_us)
{
	t->ttl = ttl;
	t->tsval = tsval;
	t->sent_us = now_us;
	t->out = 1;
}

/**
 * mrc_trace_hop_rcv() - a router answered a probe (ICMP time exceeded)
 * @t: the trace
 * @tsval: the tsval of the probe the ICMP quotes
 * @addr: the router's address (IPv4 in addr[0])
 * @now_us: mrc_clock_us()
 *
 * Only the probe out counts: a late answer to one that timed out is
 * stale, a forged one would have to guess its tsval too.
 * Return: true if it was taken (the next probe is due).
 */
static inline bool mrc_trace_hop_rcv(struct mrc_ev_trace *t, u32 tsval, const __be32 addr[4],
				     u64 now_us)
{
	struct mrc_trace_hop *h;
	u8 i;

	if (t->state != MRC_TRACE_RUNNING || !t->out || tsval != t->tsval)
		return false;
	for (i = t->nhops; i + 1 < t->ttl; i++)
		t->hop[i] = (struct mrc_trace_hop){};
	h = &t->hop[t->ttl - 1];
	for (i = 0; i < 4; i++)
		h->addr[i] = addr[i];
	h->rtt_us = now_us - t->sent_us;
	t->nhops = t->ttl;
	t->silent = 0;
	t->out = 0;
	return true;
}

/**
 * mrc_trace_reached() - the peer answered a probe (its EV probe answer)
 * @t: the trace
 * @tsecr: the answer's echo
 *
 * The hops before the peer are those below the probe's TTL.
 * Return: true if it was this trace's probe (the trace is done).
 */
static inline bool mrc_trace_reached(struct mrc_ev_trace *t, u32 tsecr)
{
	u8 i;

	if (t->state != MRC_TRACE_RUNNING || !t->out || tsecr != t->tsval)
		return false;
	for (i = t->nhops; i + 1 < t->ttl; i++)
		t->hop[i] = (struct mrc_trace_hop){};
	t->nhops = t->ttl - 1;
	t->out = 0;
	t->state = MRC_TRACE_REACHED;
	return true;
}

/**
 * mrc_trace_wait_us() - how long a probe waits for an answer
 * @srtt_us: the EV's (or the connection's) smoothed RTT, 0: none
 *
 * A router is nearer than the peer: two RTTs cover its answer and the
 * peer's.
 * Return: microseconds.
 */
static inline u32 mrc_trace_wait_us(u32 srtt_us)
{
	u64 w = 2ULL * srtt_us;

	return w < MRC_TRACE_MIN_WAIT_US ? MRC_TRACE_MIN_WAIT_US :
	       w > MRC_TRACE_MAX_WAIT_US ? MRC_TRACE_MAX_WAIT_US : w;
}

/**
 * mrc_trace_timeout() - give up waiting on the probe out, if it is time
 * @t: the trace
 * @now_us: mrc_clock_us()
 * @wait_us: mrc_trace_wait_us()
 *
 * Its hop stays unnamed (a router that does not answer, or rate-limits
 * its ICMP) and the next TTL is tried.
 * Return: true if the probe timed out now (the next probe is due).
 */
static inline bool mrc_trace_timeout(struct mrc_ev_trace *t, u64 now_us, u32 wait_us)
{
	if (t->state != MRC_TRACE_RUNNING || !t->out || now_us - t->sent_us < wait_us)
		return false;
	t->out = 0;
	t->silent++;
	return true;
}

#endif /* _NET_MRC_EVTRACE_H */
