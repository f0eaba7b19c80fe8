// SPDX-License-Identifier: GPL-2.0-only
/*
 * One MRC connection (sender at one host, receiver at another) whose every
 * decision is a call into net/mrc's own ev.c, cc.c, rtt.c and sack.c
 * (compiled unmodified, see Makefile): EV choice, EV quality, loss
 * inference predicates, retirement, re-admission, the window, the RTT and
 * RTO, the SACK field.  What this file holds is the glue the kernel keeps
 * in input.c, output.c, ev_sock.c and timer.c around those calls (queue
 * walks, timer arming), restated over a deque of segments instead of an skb
 * queue; each function names the kernel function it follows.
 */
#ifndef MRC_SIM_MRC_MODEL_H
#define MRC_SIM_MRC_MODEL_H

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <vector>

#include "fabric.h"

extern "C" {
#include "protocol.h"
#include "ev.h"
#include "sack.h"
}
// the kernel's min()/max()/swap() macros would capture std::min() etc.
#undef min
#undef max
#undef swap
#undef clamp
#undef jiffies

// mrcctl config defaults (pernet.c, af_mrc.c)
struct MrcParams {
	uint16_t evCount = 64;
	uint32_t retireLosses = 1;
	uint32_t probeIntervalMs = 50;
	uint32_t minRtoUs = 5000;
	uint32_t maxRtoUs = MRC_MAX_RTO_US;
	uint32_t initCwnd = 16;
	uint32_t dctcpShift = 4;
	uint32_t delayTargetUs = 0;
	bool ecn = true;
	// 0 as mrc_sock_init() leaves it; a what-if knob (Linux's DCTCP starts at
	// MRC_CC_ONE), never set by the runs that stand for the kernel
	uint32_t ccInitAlpha = 0;
	uint32_t mss = 8900;
	uint32_t headerBytes = 100;	// outer IP+UDP, MRC header (48)
};

struct FlowStats {
	uint64_t delivered = 0;		// in order at the receiver, packets
	uint64_t sent = 0, retransmits = 0, rtos = 0, retired = 0, readmitted = 0;
	uint64_t lossSameEv = 0, lossRack = 0, lossPathSilent = 0;
};

class MrcFlow {
public:
	MrcFlow(Fabric &f, uint32_t id, uint32_t src, uint32_t dst, const MrcParams &p);
	~MrcFlow();
	void write(uint64_t packets);	// queue more segments
	// the receiver's in-order count moved (packets since the start)
	std::function<void(uint64_t)> onInOrder;
	void receive(SimPacket *p);	// a packet of this flow reached its host
	FlowStats stats;
	uint32_t id;

private:
	struct Segment {
		uint32_t psn;
		u64 sentUs;
		uint16_t evIdx, evPort;
		bool sacked, lost, sent;
		uint8_t txCount;
	};
	// sender (input.c, output.c, ev_sock.c, timer.c)
	void ackRcv(const SimPacket &h);
	u32 segDelivered(Segment &s, u16 cePort, u32 tsecr);
	void detectLosses(u64 nowUs);
	bool retireEv(int idx);
	void markLost(Segment &s, struct mrc_ev *ev);
	void push();
	void retransmitLost();
	void probeRetired();
	void xmit(Segment &s, int evIdx);
	int pickEv(int avoid);
	struct mrc_ev *evOf(const Segment &s);
	void armRto();
	void armRack(u64 inUs);
	void rtoFire();
	void rackFire();
	// receiver
	void dataRcv(const SimPacket &h);
	void echoRcv(struct mrc_ev *evs, u16 cap, u16 port, u32 tsecr, u16 &echoPort,
		     u32 &echoTsecr);
	void sendAck(u8 flags, int avoid, bool twice);
	void armDelack();

	SimPacket *packet(PacketKind k, bool fromSender, u16 port);

	Fabric &fab;
	uint32_t src, dst;
	MrcParams prm;
	struct mrc_ev_range range;

	// sender state (struct mrc_sock fields of the same names)
	std::vector<struct mrc_ev> evs;
	u32 evBorn = 0;
	std::deque<Segment> queue;	// sent, not cumulatively acked: psn snd_una..
	uint64_t unsent = 0;
	u32 snd_una = 0, snd_nxt = 0, in_flight = 0, cc_round_end = 0, recover = 0;
	struct mrc_cc cc;
	struct mrc_rtt rtt;
	u32 slowest_rtt_us = 0;
	u8 backoff = 0, rto_streak = 0;
	bool rto_verdict_due = false;
	u32 rto_tsval = 0;
	u64 newest_delivered_tx_us = 0;
	u32 rack_rtt_us = 0;
	struct mrc_rtt_hi rtt_hi = {};
	u8 reo_mult = 1, reo_quiet = 0;
	bool reo_spurious = false;
	u16 snd_echo_port = 0;
	u32 snd_echo_tsecr = 0;
	struct mrc_dsack_seen dsack_seen = {};	// mrc_sock.dsack_seen
	u32 snd_last_tsval = 0;
	u16 snd_last_ev = 0;
	ns3::EventId rtoTimer, rackTimer;

	// receiver state
	std::vector<struct mrc_ev> rcvEvs;
	u32 rcvEvBorn = 0;
	u32 rcv_nxt = 0;
	std::set<u32> ooo;
	u32 last_tsval = 0;
	u16 last_ev = 0;
	u32 ack_pending = 0;
	bool ce_pending = false;
	bool dsack_due = false;	// mrc_sock.dsack_due, dsack_port, dsack_tsval
	u16 dsack_port = 0;
	u32 dsack_tsval = 0;
	u8 acks_sent = 0;
	u8 ackPath = 0;		// mrc_sock.ack_path
	u16 rcv_echo_port = 0;
	u32 rcv_echo_tsecr = 0;
	ns3::EventId delackTimer;
};

void mrcSimSeed(uint64_t seed);

#endif
