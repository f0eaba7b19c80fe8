// SPDX-License-Identifier: GPL-2.0-only
#include "fabric.h"

#include <cmath>

using namespace ns3;

double nowUs()
{
	return Simulator::Now().GetNanoSeconds() / 1000.0;
}

Fabric::Fabric(const FabricConfig &c) : cfg(c), rng(c.seed)
{
	uint32_t h = hosts();

	links.resize(2 * h + 2 * cfg.leaves * cfg.spines);
	for (uint32_t i = 0; i < h; i++) {
		links[i] = Link{cfg.hostGbps * 1e3 / 8, Hop::Leaf, leafOf(i)};
		links[h + i] = Link{cfg.hostGbps * 1e3 / 8, Hop::Host, i};
	}
	for (uint32_t l = 0; l < cfg.leaves; l++) {
		for (uint32_t s = 0; s < cfg.spines; s++) {
			Link &up = links[upLink(l, s)], &down = links[downLink(s, l)];

			up = Link{cfg.spineGbps * 1e3 / 8, Hop::Spine, s};
			down = Link{cfg.spineGbps * 1e3 / 8, Hop::Leaf, l};
			up.leaf = down.leaf = l;
			up.spine = down.spine = s;
		}
	}
	std::mt19937 salt(c.seed * 7919);
	for (uint32_t l = 0; l < cfg.leaves; l++)
		leafSalt.push_back(salt());
	propagation = MicroSeconds(cfg.linkDelayUs);
}

// murmur3's finaliser: every input bit moves every output bit, as a
// switch's CRC-based hash does for the purpose of spreading flows
static uint32_t mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

uint32_t Fabric::hash5(uint32_t saddr, uint32_t daddr, uint16_t sport, uint16_t dport,
		       uint8_t proto)
{
	uint32_t h = mix32(saddr ^ 0x9e3779b9);

	h = mix32(h ^ daddr);
	h = mix32(h ^ ((uint32_t)sport << 16 | dport));
	return mix32(h ^ proto);
}

uint32_t Fabric::spineFor(uint32_t leaf, uint32_t flowHash) const
{
	return mix32(flowHash ^ leafSalt[leaf]) % cfg.spines;
}

SimPacket *Fabric::alloc()
{
	if (pool.empty())
		return new SimPacket;
	SimPacket *p = pool.back();

	pool.pop_back();
	*p = SimPacket{};
	return p;
}

void Fabric::release(SimPacket *p)
{
	p->ip = nullptr;
	pool.push_back(p);
}

void Fabric::send(SimPacket *p)
{
	enqueue(p->src, p);
}

uint64_t Fabric::spineBytes(uint32_t spine) const
{
	uint64_t b = 0;

	for (uint32_t l = 0; l < cfg.leaves; l++)
		b += upStats(l, spine).bytes + downStats(spine, l).bytes;
	return b;
}

void Fabric::enqueue(uint32_t link, SimPacket *p)
{
	Link &l = links[link];

	if (l.queuedBytes + p->bytes > cfg.bufferBytes) {
		l.stats.dropsQueue++;
		release(p);
		return;
	}
	// marking on enqueue against the queue found, as DCTCP's switches do
	if (p->ect && l.queuedBytes > cfg.ecnBytes) {
		p->ce = true;
		l.stats.ceMarks++;
	}
	l.queue.push_back(p);
	l.queuedBytes += p->bytes;
	if (!l.busy)
		startTx(link);
}

bool Fabric::faultDrops(const Link &l)
{
	double t = nowUs();

	for (const LinkFault &f : faults) {
		if ((int32_t)f.leaf != l.leaf || (int32_t)f.spine != l.spine || t < f.startUs ||
		    (f.endUs > 0 && t >= f.endUs))
			continue;
		switch (f.kind) {
		case LinkFault::Down:
			return true;
		case LinkFault::Loss:
			if (unit(rng) < f.lossRate)
				return true;
			break;
		case LinkFault::Flap:
			if (std::fmod(t - f.startUs, f.periodUs) < f.periodUs / 2)
				return true;
			break;
		}
	}
	return false;
}

void Fabric::startTx(uint32_t link)
{
	Link &l = links[link];
	SimPacket *p = l.queue.front();
	Time tx = NanoSeconds(std::llround(p->bytes / l.bytesPerUs * 1000));

	l.queue.pop_front();
	l.queuedBytes -= p->bytes;
	l.busy = true;
	Simulator::Schedule(tx, &Fabric::txDone, this, link);
	if (l.spine >= 0) {
		uint64_t bin = (uint64_t)(nowUs() / cfg.binUs);

		if (l.stats.bins.size() <= bin)
			l.stats.bins.resize(bin + 1);
		l.stats.bins[bin] += p->bytes;
		l.stats.bytes += p->bytes;
		if (!faults.empty() && faultDrops(l)) {
			l.stats.dropsFault++;
			release(p);
			return;
		}
	}
	Simulator::Schedule(tx + propagation, &Fabric::arrive, this, l.to, l.toIndex, p);
}

void Fabric::txDone(uint32_t link)
{
	Link &l = links[link];

	l.busy = false;
	if (!l.queue.empty())
		startTx(link);
}

void Fabric::arrive(Hop at, uint32_t index, SimPacket *p)
{
	switch (at) {
	case Hop::Leaf:
		if (leafOf(p->dst) == index)
			enqueue(hosts() + p->dst, p);
		else
			enqueue(upLink(index, spineFor(index, p->flowHash)), p);
		break;
	case Hop::Spine:
		enqueue(downLink(index, leafOf(p->dst)), p);
		break;
	case Hop::Host:
		deliver(p);
		break;
	}
}
