// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two-tier leaf-spine fabric on ns-3's event scheduler: output-queued links
 * with a rate, a propagation delay, a drop-tail buffer and an ECN marking
 * threshold; 5-tuple flow-hash ECMP at the leaves, so a packet's UDP source
 * port (an MRC entropy value) or a TCP flow's ports pick its spine.  Packets
 * are plain structs, not ns3::Packet: the fabric carries every byte of a
 * 1,024-host run and the full ns-3 stack per switch would cost tens of
 * times more events.  ns-3 TCP packets ride inside (SimPacket::ip).
 */
#ifndef MRC_SIM_FABRIC_H
#define MRC_SIM_FABRIC_H

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <ns3/core-module.h>
#include <ns3/packet.h>

struct FabricConfig {
	uint32_t hostsPerLeaf = 16;
	uint32_t leaves = 4;
	uint32_t spines = 4;
	double hostGbps = 10;		// host <-> leaf
	double spineGbps = 10;		// leaf <-> spine
	double linkDelayUs = 1;		// per hop
	uint32_t bufferBytes = 512 * 1024;
	uint32_t ecnBytes = 90 * 1024;	// mark CE above this queue depth
	uint32_t mtu = 9000;
	double binUs = 100;		// utilisation heatmap resolution
	uint32_t seed = 1;
};

enum class PacketKind : uint8_t { MrcData, MrcAck, MrcProbe, Ip };

struct SimPacket {
	uint32_t src = 0, dst = 0;	// host ids
	uint32_t bytes = 0;
	uint32_t flowHash = 0;
	bool ect = false, ce = false;
	PacketKind kind = PacketKind::MrcData;
	// MRC header fields (struct mrchdr, host order)
	uint32_t conn = 0;
	uint32_t psn = 0, ackPsn = 0, tsval = 0, tsecr = 0;
	uint64_t sack = 0;
	uint16_t ev = 0, ackEv = 0;
	uint8_t flags = 0;
	uint32_t dsackTsval = 0;	// MRC_F_DSACK's struct mrc_dsack
	uint16_t dsackEv = 0;
	ns3::Ptr<ns3::Packet> ip;	// an ns-3 IPv4 packet (TCP)
};

// A link fault over time: blackhole (silent drop, the link stays up, as in
// the kernel's bench), random loss, or a flap (down/up cycles).
struct LinkFault {
	enum Kind { Down, Loss, Flap } kind;
	uint32_t leaf, spine;		// the spine-leaf link, both directions
	double startUs, endUs;		// endUs 0: to the end of the run
	double lossRate = 0;		// Loss
	double periodUs = 0;		// Flap: down half of each period
};

class Fabric {
public:
	explicit Fabric(const FabricConfig &c);

	uint32_t hosts() const { return cfg.hostsPerLeaf * cfg.leaves; }
	uint32_t leafOf(uint32_t host) const { return host / cfg.hostsPerLeaf; }
	// The spine a flow hash takes out of @leaf (same function at every leaf,
	// salted per leaf as switches' hash seeds are).
	uint32_t spineFor(uint32_t leaf, uint32_t flowHash) const;
	static uint32_t hash5(uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
			      uint8_t proto);

	SimPacket *alloc();
	void release(SimPacket *p);
	void send(SimPacket *p);	// from p->src's NIC

	void addFault(const LinkFault &f) { faults.push_back(f); }
	std::function<void(SimPacket *)> deliver;	// to a host: the receiver owns p

	// per leaf->spine and spine->leaf link: bytes per bin
	struct LinkStats {
		uint64_t bytes = 0, dropsQueue = 0, dropsFault = 0, ceMarks = 0;
		std::vector<uint64_t> bins;
	};
	const LinkStats &upStats(uint32_t leaf, uint32_t spine) const
	{ return links[upLink(leaf, spine)].stats; }
	const LinkStats &downStats(uint32_t spine, uint32_t leaf) const
	{ return links[downLink(spine, leaf)].stats; }
	uint64_t spineBytes(uint32_t spine) const;
	double spineBps() const { return cfg.spineGbps * 1e9; }
	const FabricConfig cfg;

private:
	enum class Hop : uint8_t { Leaf, Spine, Host };
	struct Link {
		double bytesPerUs;
		Hop to;
		uint32_t toIndex;
		int32_t leaf = -1, spine = -1;	// a spine-leaf link: for faults
		std::deque<SimPacket *> queue;
		uint32_t queuedBytes = 0;
		bool busy = false;
		LinkStats stats;
	};
	uint32_t upLink(uint32_t leaf, uint32_t spine) const
	{ return 2 * hosts() + leaf * cfg.spines + spine; }
	uint32_t downLink(uint32_t spine, uint32_t leaf) const
	{ return 2 * hosts() + cfg.leaves * cfg.spines + spine * cfg.leaves + leaf; }

	void enqueue(uint32_t link, SimPacket *p);
	void startTx(uint32_t link);
	void txDone(uint32_t link);
	void arrive(Hop at, uint32_t index, SimPacket *p);
	bool faultDrops(const Link &l);

	std::vector<Link> links;
	std::vector<LinkFault> faults;
	std::vector<uint32_t> leafSalt;
	std::vector<SimPacket *> pool;
	std::mt19937_64 rng;
	std::uniform_real_distribution<double> unit{0.0, 1.0};
	ns3::Time propagation;
};

double nowUs();

#endif
