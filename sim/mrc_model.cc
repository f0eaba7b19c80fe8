// SPDX-License-Identifier: GPL-2.0-only
#include <algorithm>
#include <random>

#include "mrc_model.h"
#include "kernel_constants.h"

using namespace ns3;

// The kernel's clock and randomness, served by the simulator (sim_kernel.h)
static std::mt19937_64 mrcRng(1);

void mrcSimSeed(uint64_t seed)
{
	mrcRng.seed(seed);
}

extern "C" u32 get_random_u32_below(u32 ceil)
{
	return ceil ? (u32)(mrcRng() % ceil) : 0;
}

extern "C" u64 ktime_get_ns(void)
{
	return Simulator::Now().GetNanoSeconds();
}

extern "C" unsigned long sim_jiffies(void)
{
	return Simulator::Now().GetNanoSeconds() / 1000000;	// HZ 1000
}

static u64 clockUs()
{
	return Simulator::Now().GetNanoSeconds() / 1000;
}

static const u16 kTunnelPort = 6081;	// the outer UDP destination port

MrcFlow::MrcFlow(Fabric &f, uint32_t i, uint32_t s, uint32_t d, const MrcParams &p)
	: id(i), fab(f), src(s), dst(d), prm(p)
{
	u16 cap = 2 * std::max<u16>(1, std::min<u16>(p.evCount, MRC_MAX_EVS));

	range = {};
	range.port_min = 49152;
	range.port_max = 65535;
	evs.resize(cap);
	rcvEvs.resize(cap);
	mrc_evs_init(evs.data(), cap, cap / 2, &range, &evBorn);
	mrc_evs_init(rcvEvs.data(), cap, cap / 2, &range, &rcvEvBorn);
	mrc_rtt_init(&rtt, p.minRtoUs, p.maxRtoUs);	// mrc_sock_init()
	cc = {};
	cc.cwnd = p.initCwnd;
	cc.ssthresh = U32_MAX;
	cc.alpha = p.ccInitAlpha;
}

MrcFlow::~MrcFlow()
{
	rtoTimer.Cancel();
	rackTimer.Cancel();
	delackTimer.Cancel();
}

void MrcFlow::write(uint64_t packets)
{
	unsent += packets;
	push();
}

SimPacket *MrcFlow::packet(PacketKind k, bool fromSender, u16 port)
{
	SimPacket *p = fab.alloc();

	p->kind = k;
	p->conn = id;
	p->src = fromSender ? src : dst;
	p->dst = fromSender ? dst : src;
	p->flowHash = Fabric::hash5(p->src, p->dst, port, kTunnelPort, 17);
	p->ev = port;
	p->bytes = prm.headerBytes;
	p->tsval = mrc_ts_clock(0, clockUs());
	return p;
}

// ev_sock.c: mrc_ev_or_fallback(), mrc_pick_ev()
static int evOrFallback(int idx, int avoid)
{
	return idx >= 0 ? idx : avoid >= 0 ? avoid : 0;
}

int MrcFlow::pickEv(int avoid)
{
	return evOrFallback(mrc_ev_pick(evs.data(), evs.size(), avoid), avoid);
}

// ev_sock.c: mrc_ev_of()
struct mrc_ev *MrcFlow::evOf(const Segment &s)
{
	if (!s.sent || s.evIdx >= evs.size())
		return nullptr;
	struct mrc_ev *ev = &evs[s.evIdx];

	return ev->port == s.evPort && ev->state != MRC_EV_FREE ? ev : nullptr;
}

// output.c: mrc_xmit()
void MrcFlow::xmit(Segment &s, int evIdx)
{
	struct mrc_ev *ev = &evs[evIdx];
	SimPacket *p = packet(PacketKind::MrcData, true, ev->port);

	s.sent = true;
	s.sentUs = clockUs();
	s.evIdx = evIdx;
	s.evPort = ev->port;
	s.txCount++;
	mrc_ev_sent(ev);
	ev->in_flight++;
	p->psn = s.psn;
	p->bytes += prm.mss;
	p->ect = prm.ecn;
	p->tsecr = snd_last_tsval;
	p->ackEv = snd_last_ev;
	if (s.txCount > 1)
		p->flags |= MRC_F_ACKNOW;
	stats.sent++;
	fab.send(p);
}

// output.c: mrc_probe_retired()
void MrcFlow::probeRetired()
{
	unsigned long interval = prm.probeIntervalMs, now = sim_jiffies();

	for (size_t i = 0; i < evs.size(); i++) {
		struct mrc_ev &ev = evs[i];

		if (ev.state != MRC_EV_RETIRED || time_before(now, ev.next_probe))
			continue;
		ev.probe_backoff = std::min<u8>(ev.probe_backoff + 1,
						mrc_ev_probe_backoff_max(evs.data(), evs.size(), i));
		ev.next_probe = now + std::max(1UL, interval << ev.probe_backoff);
		SimPacket *p = packet(PacketKind::MrcProbe, true, ev.port);

		p->flags = MRC_F_PROBE;
		p->tsecr = snd_last_tsval;
		p->ackEv = snd_last_ev;
		fab.send(p);
	}
}

// output.c: mrc_retransmit_lost()
void MrcFlow::retransmitLost()
{
	for (auto &s : queue) {
		if (in_flight >= cc.cwnd)
			break;
		if (!s.lost || s.sacked)
			continue;
		xmit(s, evOrFallback(mrc_ev_pick_retransmit(evs.data(), evs.size(), s.evIdx),
				     s.evIdx));
		s.lost = false;
		in_flight++;
		stats.retransmits++;
	}
}

// output.c: __mrc_push() (the receiver's window never binds: the model's
// receive buffer is unbounded, as an application that keeps reading)
void MrcFlow::push()
{
	bool idle = snd_una == snd_nxt;

	probeRetired();
	retransmitLost();
	while (unsent && in_flight < cc.cwnd && snd_nxt - snd_una < MRC_RCV_WINDOW_PKTS - 1) {
		queue.push_back(Segment{snd_nxt, 0, 0, 0, false, false, false, 0});
		xmit(queue.back(), pickEv(-1));
		snd_nxt++;
		in_flight++;
		unsent--;
	}
	if (!queue.empty() && (!rtoTimer.IsRunning() || (idle && snd_una != snd_nxt)))
		armRto();
}

// timer.c: mrc_arm_rto() (microsecond timers, no jiffy rounding)
void MrcFlow::armRto()
{
	u32 us = mrc_rtt_rto(&rtt, backoff);
	u32 slow = 2 * slowest_rtt_us + MRC_RTO_SLACK_US;

	if (backoff < 16)
		slow <<= backoff;
	us = std::clamp(slow, us, std::max(us, rtt.max_rto_us));
	rtoTimer.Cancel();
	rtoTimer = Simulator::Schedule(MicroSeconds(us), &MrcFlow::rtoFire, this);
}

// timer.c: mrc_arm_rack(); its own exact timer, as the kernel's loss timer (an hrtimer);
// no max_rto_us cap (it bounds the kernel timer's socket reference) and, with no
// stalls to catch up on, no RACK verdict ahead of a due RTO
void MrcFlow::armRack(u64 inUs)
{
	if (!inUs) {
		rackTimer.Cancel();
		return;
	}
	Time at = MicroSeconds(inUs);

	if (rackTimer.IsRunning() && Simulator::GetDelayLeft(rackTimer) <= at)
		return;
	rackTimer.Cancel();
	rackTimer = Simulator::Schedule(at, &MrcFlow::rackFire, this);
}

// timer.c: mrc_rack_fire(); only a loss found re-arms the RTO
void MrcFlow::rackFire()
{
	u64 lost = stats.lossRack + stats.lossSameEv + stats.lossPathSilent;

	if (queue.empty())
		return;
	detectLosses(clockUs());
	// the kernel then re-arms the tail loss probe, which the model lacks
	if (stats.lossRack + stats.lossSameEv + stats.lossPathSilent == lost)
		return;
	push();
	armRto();
}

// input.c: mrc_mark_lost()
void MrcFlow::markLost(Segment &s, struct mrc_ev *ev)
{
	s.lost = true;
	in_flight--;
	if (ev && ev->in_flight)
		ev->in_flight--;
}

// ev_sock.c: mrc_retire_ev()
bool MrcFlow::retireEv(int idx)
{
	unsigned long probe = sim_jiffies() + std::max(1UL, (unsigned long)prm.probeIntervalMs);

	u8 path = evs[idx].path;
	bool silent = mrc_ev_path_silent(evs.data(), evs.size(), path, rtt.srtt_us);

	mrc_ev_retire(evs.data(), evs.size(), idx, &range, &evBorn, probe, !silent);
	stats.retired++;
	for (size_t i = 0; silent && i < evs.size(); i++) {
		if (evs[i].state != MRC_EV_ACTIVE || evs[i].path != path)
			continue;
		mrc_ev_retire(evs.data(), evs.size(), i, &range, &evBorn, probe, false);
		stats.retired++;
	}
	return silent;
}

// input.c: mrc_seg_delivered()
u32 MrcFlow::segDelivered(Segment &s, u16 cePort, u32 tsecr)
{
	struct mrc_ev *ev = evOf(s);
	bool ce = cePort && s.evPort == cePort;

	if (ev && ev->in_flight && !s.lost)
		ev->in_flight--;
	if (!mrc_ev_delivery_known(std::min<u32>(s.txCount, 255), s.sentUs, clockUs(),
				   rtt.min_rtt_us,
				   tsecr && mrc_ts_before(tsecr, mrc_ts_clock(0, s.sentUs - MRC_EIFEL_SLACK_US)))) {
		reo_spurious = true;
		return ce;
	}
	u32 rttUs = std::min<u64>(clockUs() - s.sentUs, U32_MAX);
	if (!rto_verdict_due)
		mrc_rtt_hi_sample(&rtt_hi, clockUs(), rttUs, slowest_rtt_us);
	if (s.sentUs >= newest_delivered_tx_us) {
		newest_delivered_tx_us = s.sentUs;
		rack_rtt_us = rttUs;
	}
	if (!ev)
		return ce;
	mrc_ev_echoed(ev, sim_jiffies());
	mrc_ev_delivered(ev, s.sentUs, ce, rtt.srtt_us);
	return ce;
}

// input.c: mrc_detect_losses()
void MrcFlow::detectLosses(u64 now)
{
	u32 reo = mrc_rack_reo_us(rtt.srtt_us, reo_mult);
	u32 slowest = rtt.srtt_us;
	u64 rackAt = U64_MAX;
	bool congested = false;
	u32 silentPaths = 0;

	mrc_ev_survey(evs.data(), evs.size(), &slowest);
	slowest_rtt_us = slowest;
	u32 hi = mrc_rtt_hi(&rtt_hi, now, slowest);
	for (auto &s : queue) {
		if (!s.sent || s.sacked || s.lost)
			continue;
		struct mrc_ev *ev = evOf(s);
		u32 expect = mrc_rack_expect_us(ev && ev->srtt_us ? ev->srtt_us : slowest,
						rack_rtt_us, hi);

		bool samePath = ev && ev->delivered &&
				mrc_ev_loss_same_path(s.sentUs, ev->last_delivered_tx_us,
						      MRC_SAME_EV_TOLERANCE_US);
		if (!samePath &&
		    !mrc_ev_loss_rack(now, s.sentUs, newest_delivered_tx_us, expect, reo)) {
			if (newest_delivered_tx_us > s.sentUs)
				rackAt = std::min(rackAt, s.sentUs + expect + reo);
			continue;
		}
		markLost(s, ev);
		(samePath ? stats.lossSameEv : stats.lossRack)++;
		congested |= mrc_ev_loss_is_congestion(samePath, ev);
		if (ev && mrc_ev_lost(ev, prm.retireLosses) && retireEv(s.evIdx))
			silentPaths |= 1U << ev->path;
	}
	// input.c: mrc_lose_paths()
	for (auto &s : queue) {
		struct mrc_ev *ev = silentPaths && s.sent && !s.sacked && !s.lost ? evOf(s) : nullptr;

		if (ev && (silentPaths & (1U << ev->path))) {
			markLost(s, ev);
			stats.lossPathSilent++;
		}
	}
	if (congested && !cc.in_recovery) {
		mrc_cc_on_loss(&cc);
		recover = snd_nxt;
	}
	armRack(rackAt == U64_MAX ? 0 : rackAt - now + 1);
}

// input.c: mrc_ack_rcv() with mrc_sack_rcv(), mrc_unmark_lost() and
// ev_sock.c's mrc_probe_answered()
void MrcFlow::ackRcv(const SimPacket &h)
{
	struct mrc_cc_params ccp = {prm.dctcpShift, prm.delayTargetUs, MRC_ACK_MAX_CWND};
	u16 cePort = (h.flags & MRC_F_CE) ? h.ackEv : 0;
	u32 ack = h.ackPsn, acked = 0, delivered = 0, ce = 0, rttUs;
	u64 now = clockUs();
	bool roundDone = false, spurious = false;

	if (mrc_psn_after(ack, snd_nxt) || mrc_psn_before(ack, snd_una - MRC_RCV_WINDOW_PKTS))
		return;
	echoRcv(evs.data(), evs.size(), h.ackEv, h.tsecr, snd_echo_port, snd_echo_tsecr);
	// input.c: mrc_dsack_rcv()
	if ((h.flags & MRC_F_DSACK) &&
	    mrc_dsack_sample(&dsack_seen, h.dsackEv, h.dsackTsval, mrc_ts_clock(0, now),
			     rto_verdict_due, prm.maxRtoUs, &rttUs)) {
		int i = mrc_ev_find_port(evs.data(), evs.size(), h.dsackEv);

		mrc_rtt_hi_sample(&rtt_hi, now, rttUs, slowest_rtt_us);
		if (i >= 0)
			mrc_ev_rtt_sample(&evs[i], rttUs, rtt.srtt_us);
	}
	if ((h.flags & (MRC_F_PROBE | MRC_F_ACKNOW)) == (MRC_F_PROBE | MRC_F_ACKNOW)) {
		int i = mrc_ev_find_port(evs.data(), evs.size(), h.ackEv);

		if (i >= 0 && evs[i].state == MRC_EV_RETIRED) {
			mrc_ev_path_revived(evs.data(), evs.size(), evs[i].path, sim_jiffies());
			mrc_ev_readmit(evs.data(), evs.size(), i, evs.size() / 2);
			stats.readmitted++;
		}
	}
	while (!queue.empty() && mrc_psn_before(queue.front().psn, ack)) {
		Segment &s = queue.front();

		if (!s.sacked) {
			ce += segDelivered(s, cePort, h.tsecr);
			delivered++;
			if (!s.lost)
				in_flight--;
		}
		queue.pop_front();
		acked++;
	}
	if (acked && rto_verdict_due && !(h.flags & MRC_F_PROBE)) {
		spurious = mrc_ts_before(h.tsecr, rto_tsval);
		rto_verdict_due = false;
		if (spurious) {
			for (auto &s : queue) {
				if (s.lost && !s.sacked) {
					s.lost = false;
					in_flight++;
				}
			}
		}
		mrc_cc_rto_verdict(&cc, spurious);
	}
	if (acked) {
		snd_una = ack;
		backoff = 0;
		if (cc.in_recovery && !mrc_psn_before(ack, recover))
			cc.in_recovery = false;
		if (!mrc_psn_before(ack, cc_round_end)) {
			roundDone = true;
			cc_round_end = snd_nxt;
			mrc_rack_reo_round(&reo_mult, &reo_quiet, reo_spurious);
			reo_spurious = false;
		}
	}
	if (h.sack) {
		for (auto &s : queue) {
			u32 off = s.psn - ack;

			if (off > MRC_SACK_BITS)
				break;
			if (!off || !(h.sack & (1ULL << (off - 1))) || s.sacked)
				continue;
			ce += segDelivered(s, cePort, h.tsecr);
			delivered++;
			s.sacked = true;
			if (!s.lost)
				in_flight--;
			s.lost = false;
		}
	}
	if (delivered && !spurious && mrc_rtt_from_echo(mrc_ts_clock(0, now), h.tsecr, &rttUs)) {
		int i = mrc_ev_find_port(evs.data(), evs.size(), h.ackEv);

		mrc_rtt_sample(&rtt, rttUs);
		if (i >= 0)
			mrc_ev_rtt_sample(&evs[i], rttUs, rtt.srtt_us);
	}
	if (delivered) {
		backoff = 0;
		rto_streak = 0;
		mrc_cc_on_ack(&cc, &ccp, delivered, ce, rtt.srtt_us, rtt.min_rtt_us, roundDone);
	}
	detectLosses(now);
	push();
	if (!queue.empty()) {
		if (delivered)
			armRto();
	} else {
		rtoTimer.Cancel();
	}
}

// timer.c: mrc_rto_fire() for an established connection
void MrcFlow::rtoFire()
{
	bool outstanding = false, congested = false;

	if (backoff < 16)
		backoff++;
	rackTimer.Cancel();
	stats.rtos++;
	for (auto &s : queue) {
		if (s.sacked)
			continue;
		outstanding = true;
		if (s.lost)
			continue;
		s.lost = true;
		struct mrc_ev *ev = evOf(s);

		congested |= mrc_ev_rto_is_congestion(ev ? ev->delivered : 1);
		if (!ev)
			continue;
		ev->in_flight = 0;
		if (ev->last_delivered_tx_us <= s.sentUs &&
		    mrc_ev_rto_lost(ev, prm.retireLosses, rto_streak + 1))
			retireEv(s.evIdx);
	}
	if (outstanding) {
		in_flight = 0;
		if (rto_streak < U8_MAX)
			rto_streak++;
		if (!rto_verdict_due)
			rto_tsval = mrc_ts_clock(0, clockUs());
		rto_verdict_due = true;
		if (congested)
			mrc_cc_on_rto(&cc);
	}
	push();
	if (!queue.empty() || unsent)
		armRto();
}

// ev_sock.c: mrc_echo_rcv()
void MrcFlow::echoRcv(struct mrc_ev *e, u16 cap, u16 port, u32 tsecr, u16 &echoPort,
		      u32 &echoTsecr)
{
	if (!tsecr || (port == echoPort && tsecr == echoTsecr))
		return;
	echoPort = port;
	echoTsecr = tsecr;
	int i = mrc_ev_find_port(e, cap, port);

	if (i >= 0)
		mrc_ev_echoed(&e[i], sim_jiffies());
}

// output.c: mrc_send_ctrl(MRC_T_ACK) / mrc_send_ack_twice(), mrc_fill_header()
void MrcFlow::sendAck(u8 flags, int avoid, bool twice)
{
	bool explore = !twice && !(++acks_sent % MRC_EV_ACK_EXPLORE);
	unsigned long since = sim_jiffies() - MRC_EV_ECHO_TRUST_MS;
	// a host has one address here: mrc_paths_rx_live() has no paths to weigh
	int idx = evOrFallback(mrc_ev_pick_ack(rcvEvs.data(), rcvEvs.size(), avoid, since,
					       MRC_EV_ALL_PATHS, &ackPath, explore), avoid);
	u32 held[MRC_SACK_BITS];
	unsigned int n = 0;

	for (auto it = ooo.begin(); it != ooo.end() && n < MRC_SACK_BITS; ++it)
		held[n++] = *it;
	SimPacket *p = packet(PacketKind::MrcAck, false, rcvEvs[idx].port);

	p->flags = flags | (ce_pending ? MRC_F_CE : 0);
	p->ackPsn = rcv_nxt;
	p->sack = mrc_sack_bitmap(held, n, rcv_nxt);
	p->tsecr = last_tsval;
	p->ackEv = last_ev;
	// output.c: mrc_ack_payload()
	if (dsack_due) {
		dsack_due = false;
		p->flags |= MRC_F_DSACK;
		p->dsackTsval = dsack_tsval;
		p->dsackEv = dsack_port;
		p->bytes += sizeof(struct mrc_dsack);
	}
	if (twice) {
		SimPacket *copy = fab.alloc();
		int second = evOrFallback(mrc_ev_pick_ack(rcvEvs.data(), rcvEvs.size(), idx,
							  since, MRC_EV_ALL_PATHS, &ackPath,
							  false), idx);

		*copy = *p;
		copy->ev = rcvEvs[second].port;
		copy->flowHash = Fabric::hash5(dst, src, copy->ev, kTunnelPort, 17);
		fab.send(copy);
	}
	ce_pending = false;
	ack_pending = 0;
	delackTimer.Cancel();
	fab.send(p);
}

// timer.c: mrc_arm_delack(), mrc_delack_fire()
void MrcFlow::armDelack()
{
	if (delackTimer.IsRunning())
		return;
	delackTimer = Simulator::Schedule(MicroSeconds(MRC_DELACK_US), [this]() {
		if (ack_pending)
			sendAck(0, -1, true);
	});
}

// input.c: mrc_data_rcv() (with mrc_echo_update())
void MrcFlow::dataRcv(const SimPacket &h)
{
	bool ackNow = h.flags & (MRC_F_ACKNOW | MRC_F_FIN | MRC_F_PROBE);
	u32 psn = h.psn;

	// mrc_dup_rcv()
	auto dupRcv = [&]() {
		dsack_due = true;
		dsack_port = h.ev;
		dsack_tsval = h.tsval;
	};
	if (mrc_psn_before(psn, rcv_nxt)) {
		dupRcv();
		sendAck(0, -1, false);
		return;
	}
	if (h.ce) {
		ce_pending = true;
		ackNow = true;
	}
	if (!mrc_psn_in_window(psn, rcv_nxt, MRC_RCV_WINDOW_PKTS))
		return;
	auto echoUpdate = [&]() {
		if (last_tsval && mrc_ts_before(h.tsval, last_tsval))
			return;
		last_tsval = h.tsval;
		last_ev = h.ev;
	};
	if (psn == rcv_nxt) {
		echoUpdate();
		rcv_nxt++;
		while (!ooo.empty() && *ooo.begin() == rcv_nxt) {
			ooo.erase(ooo.begin());
			rcv_nxt++;
		}
		if (!ooo.empty())
			ackNow = true;
	} else {
		if (ooo.insert(psn).second)
			echoUpdate();
		else
			dupRcv();
		ackNow = true;
	}
	if (ackNow || ++ack_pending >= 2)
		sendAck(0, -1, false);
	else
		armDelack();
	if (stats.delivered != rcv_nxt) {
		stats.delivered = rcv_nxt;
		if (onInOrder)
			onInOrder(rcv_nxt);
	}
}

// input.c: mrc_conn_rcv()
void MrcFlow::receive(SimPacket *p)
{
	bool atReceiver = p->dst == dst && p->kind != PacketKind::MrcAck;

	if (atReceiver) {
		// every packet carries the echo of our last ACK (mrc_ack_rcv())
		echoRcv(rcvEvs.data(), rcvEvs.size(), p->ackEv, p->tsecr, rcv_echo_port,
			rcv_echo_tsecr);
		if (p->kind == PacketKind::MrcProbe) {
			u32 tsval = last_tsval;
			u16 ev = last_ev;

			last_ev = p->ev;
			last_tsval = p->tsval;
			sendAck(MRC_F_PROBE | MRC_F_ACKNOW, -1, true);
			last_tsval = tsval;
			last_ev = ev;
		} else {
			dataRcv(*p);
		}
	} else {
		// an ACK, a probe's answer included, moves our echo (mrc_echo_update())
		ackRcv(*p);
		if (!(snd_last_tsval && mrc_ts_before(p->tsval, snd_last_tsval))) {
			snd_last_tsval = p->tsval;
			snd_last_ev = p->ev;
		}
	}
	fab.release(p);
}
