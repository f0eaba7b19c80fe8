// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workloads see one interface for the three transports compared: MRC
 * (the kernel's logic, 64 EVs), per-flow MRC (the same with one EV, so a
 * flow keeps one path as ECMP pins TCP) and ns-3's TCP (DCTCP by default).
 * A connection is persistent: a collective's steps reuse it, as NCCL's do.
 */
#ifndef MRC_SIM_TRANSPORT_H
#define MRC_SIM_TRANSPORT_H

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ns3/node-container.h>
#include <ns3/socket.h>

#include "fabric.h"
#include "mrc_model.h"

struct ConnStats {
	uint32_t src, dst;
	double startUs = 0, doneUs = -1, longestGapUs = 0;
	uint64_t bytesTarget = 0, bytesDelivered = 0;
	uint64_t retransmits = 0, rtos = 0, retired = 0;
	uint64_t lossSameEv = 0, lossRack = 0;	// MRC's loss rules that fired
};

class Conn {
public:
	virtual ~Conn() = default;
	// more bytes to send; @done when the receiver has them all
	virtual void write(uint64_t bytes, std::function<void()> done) = 0;
	virtual ConnStats stats() const = 0;
	// bytes the receiver got in order, for goodput ticks
	std::function<void(uint64_t)> onProgress;
};

class Transport {
public:
	virtual ~Transport() = default;
	virtual Conn *connect(uint32_t src, uint32_t dst) = 0;
	virtual std::string name() const = 0;
	std::vector<std::unique_ptr<Conn>> conns;
};

std::unique_ptr<Transport> makeMrcTransport(Fabric &f, const MrcParams &p, const std::string &name);
std::unique_ptr<Transport> makeTcpTransport(Fabric &f, const std::string &congestionControl,
					    uint32_t mss, double minRtoUs);

#endif
