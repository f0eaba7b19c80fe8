// SPDX-License-Identifier: GPL-2.0-only
/*
 * mrc-sim: one scenario (fabric, transport, workload, fault) per run; writes
 * a JSON result.  See Documentation/networking/mrc-sim.rst.
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>

#include <ns3/core-module.h>

#include "fabric.h"
#include "transport.h"

using namespace ns3;

struct Scenario {
	std::string transport = "mrc", workload = "permutation", fault = "none";
	std::string tcpCc = "TcpDctcp", out = "result.json";
	uint64_t bytes = 4 << 20;	// per flow (permutation, incast), per host (all-reduce)
	uint32_t group = 8;		// all-reduce ring size, incast fan-in + 1
	double faultAtUs = 2000, faultEndUs = 0, flapPeriodUs = 2000, lossRate = 0.01;
	uint32_t faultLeaf = 0, faultSpine = 0;
	double stopMs = 200;
	double tickUs = 10000;		// goodput ticks of the bulk workload
	uint32_t evs = 64;
	double minRtoUs = 5000;		// MRC's default (af_mrc.c)
	double tcpMinRtoUs = 5000;
	uint32_t ccInitAlpha = 0;
};

struct Collective {
	std::vector<uint32_t> members;
	uint32_t pending = 0;
	double startUs = 0, doneUs = -1;
};

class Run {
public:
	Run(const Scenario &s, const FabricConfig &fc) : sc(s), fab(fc), rng(fc.seed)
	{
		fab.deliver = [](SimPacket *) {};
		MrcParams mp;

		mp.mss = fc.mtu - 76;	// outer IPv4 + UDP + MRC header
		mp.headerBytes = 76 + 38;
		mp.minRtoUs = s.minRtoUs;
		mp.ccInitAlpha = s.ccInitAlpha;
		if (s.transport == "tcp") {
			transport = makeTcpTransport(fab, s.tcpCc, fc.mtu - 52, s.tcpMinRtoUs);
		} else {
			mp.evCount = s.transport == "mrc1" ? 1 : s.evs;
			transport = makeMrcTransport(fab, mp, s.transport);
		}
		mrcSimSeed(fc.seed);
	}

	void setupFault()
	{
		const FabricConfig &c = fab.cfg;
		auto wholeSpine = [&](LinkFault f) {
			for (uint32_t l = 0; l < c.leaves; l++) {
				f.leaf = l;
				fab.addFault(f);
			}
		};
		if (sc.fault == "down")
			fab.addFault({LinkFault::Down, sc.faultLeaf, sc.faultSpine, sc.faultAtUs,
				      sc.faultEndUs});
		else if (sc.fault == "flap")
			fab.addFault({LinkFault::Flap, sc.faultLeaf, sc.faultSpine, sc.faultAtUs,
				      sc.faultEndUs, 0, sc.flapPeriodUs});
		else if (sc.fault == "loss")
			wholeSpine({LinkFault::Loss, 0, sc.faultSpine, 0, 0, sc.lossRate});
		else if (sc.fault == "busiest-spine-down") {
			// the kernel bench's failover: the spine that carried the
			// most in the 0.7 s before is blackholed, both ways
			Simulator::Schedule(MicroSeconds(std::max(0.0, sc.faultAtUs - 700000)), [this]() {
				for (uint32_t s = 0; s < fab.cfg.spines; s++)
					spineBefore.push_back(fab.spineBytes(s));
			});
			Simulator::Schedule(MicroSeconds(sc.faultAtUs), [this, wholeSpine]() {
				uint32_t best = 0;
				uint64_t most = 0;

				for (uint32_t s = 0; s < fab.cfg.spines; s++) {
					uint64_t d = fab.spineBytes(s) - spineBefore[s];

					if (d > most) {
						most = d;
						best = s;
					}
				}
				faultedSpine = best;
				wholeSpine({LinkFault::Down, 0, best, sc.faultAtUs, sc.faultEndUs});
			});
		}
	}

	Conn *conn(uint32_t src, uint32_t dst)
	{
		auto key = std::make_pair(src, dst);
		auto it = connOf.find(key);

		if (it != connOf.end())
			return it->second;
		return connOf[key] = transport->connect(src, dst);
	}

	// hosts spread over leaves: member j of group g is host g + j * groups
	std::vector<std::vector<uint32_t>> spreadGroups(const std::vector<uint32_t> &hosts,
							  uint32_t size)
	{
		uint32_t groups = hosts.size() / size;
		std::vector<std::vector<uint32_t>> out(groups);

		for (uint32_t g = 0; g < groups; g++)
			for (uint32_t j = 0; j < size; j++)
				out[g].push_back(hosts[g + j * groups]);
		return out;
	}

	// ring all-reduce: 2 (G - 1) steps of bytes / G; a member sends step
	// k + 1 once it has received step k from its predecessor
	struct Ring {
		std::vector<Conn *> send;	// member i -> i + 1
		std::vector<uint32_t> received;
		uint32_t steps;
		uint64_t chunk;
		size_t collective;
	};

	void ringSend(Ring *r, uint32_t i)
	{
		uint32_t next = (i + 1) % r->send.size();

		r->send[i]->write(r->chunk, [this, r, next]() { ringArrived(r, next); });
	}

	void ringArrived(Ring *r, uint32_t i)
	{
		uint32_t n = ++r->received[i];

		if (n < r->steps)
			ringSend(r, i);
		else if (n == r->steps && --collectives[r->collective].pending == 0)
			collectives[r->collective].doneUs = nowUs();
	}

	void allReduce(const std::vector<uint32_t> &hosts)
	{
		for (auto &members : spreadGroups(hosts, sc.group)) {
			uint32_t g = members.size();
			auto r = std::make_unique<Ring>();

			collectives.push_back(Collective{members, g, nowUs()});
			r->collective = collectives.size() - 1;
			r->steps = 2 * (g - 1);
			r->chunk = sc.bytes / g;
			r->received.assign(g, 0);
			for (uint32_t j = 0; j < g; j++)
				r->send.push_back(conn(members[j], members[(j + 1) % g]));
			for (uint32_t j = 0; j < g; j++)
				ringSend(r.get(), j);
			rings.push_back(std::move(r));
		}
	}

	void start()
	{
		const uint32_t hosts = fab.hosts();
		std::vector<uint32_t> all(hosts);

		std::iota(all.begin(), all.end(), 0);
		if (sc.workload == "permutation") {
			std::vector<uint32_t> perm = all;

			do {
				std::shuffle(perm.begin(), perm.end(), rng);
			} while ([&]() {
				for (uint32_t i = 0; i < hosts; i++)
					if (perm[i] == i)
						return true;
				return false;
			}());
			for (uint32_t i = 0; i < hosts; i++)
				conn(i, perm[i])->write(sc.bytes, nullptr);
		} else if (sc.workload == "allreduce") {
			allReduce(all);
		} else if (sc.workload == "incast") {
			for (auto &members : spreadGroups(all, sc.group)) {
				collectives.push_back(Collective{members, (uint32_t)members.size() - 1,
								 nowUs()});
				size_t ci = collectives.size() - 1;

				for (uint32_t j = 1; j < members.size(); j++)
					conn(members[j], members[0])->write(sc.bytes, [this, ci]() {
						if (--collectives[ci].pending == 0)
							collectives[ci].doneUs = nowUs();
					});
			}
		} else if (sc.workload == "mix") {
			// every fourth host sends background bulk (twice a reducer's bytes) to a host on
			// another leaf, the rest run all-reduce
			std::vector<uint32_t> reducers;

			for (uint32_t h = 0; h < hosts; h++) {
				if (h % 4 == 3) {
					uint32_t to = (h + fab.cfg.hostsPerLeaf * (1 + rng() %
						       (fab.cfg.leaves - 1))) % hosts;

					conn(h, to)->write(sc.bytes * 2, nullptr);
					bulk.push_back(conn(h, to));
				} else {
					reducers.push_back(h);
				}
			}
			allReduce(reducers);
		} else if (sc.workload == "bulk") {
			// the kernel bench's aggregation/failover: one connection
			// from the first host to the last (other leaf)
			Conn *c = conn(0, hosts - 1);

			c->onProgress = [this](uint64_t bytes) {
				size_t t = nowUs() / sc.tickUs;

				if (ticks.size() <= t)
					ticks.resize(t + 1);
				ticks[t] += bytes;
			};
			c->write(sc.bytes, nullptr);
		}
	}

	const Scenario sc;
	Fabric fab;
	std::mt19937 rng;
	std::unique_ptr<Transport> transport;
	std::map<std::pair<uint32_t, uint32_t>, Conn *> connOf;
	std::vector<Collective> collectives;
	std::vector<std::unique_ptr<Ring>> rings;
	std::vector<Conn *> bulk;
	std::vector<uint64_t> ticks;
	std::vector<uint64_t> spineBefore;
	int faultedSpine = -1;
};

static bool allDone(const Run &run)
{
	for (auto &c : run.transport->conns) {
		ConnStats s = c->stats();

		if (s.bytesDelivered < s.bytesTarget)
			return false;
	}
	return !run.transport->conns.empty();
}

static void watchCompletion(Run *run)
{
	if (allDone(*run)) {
		Simulator::Stop();
		return;
	}
	Simulator::Schedule(MicroSeconds(500), &watchCompletion, run);
}

static void writeJson(const Run &run, const FabricConfig &fc, double wallS)
{
	const Scenario &sc = run.sc;
	FILE *f = fopen(sc.out.c_str(), "w");

	if (!f) {
		perror(sc.out.c_str());
		exit(1);
	}
	double endUs = nowUs(), firstDone = 1e18, lastDone = 0;
	uint64_t delivered = 0, target = 0, retx = 0, rtos = 0, retired = 0, sameEv = 0, rack = 0;

	fprintf(f, "{\n \"transport\": \"%s\", \"workload\": \"%s\", \"fault\": \"%s\",\n",
		sc.transport.c_str(), sc.workload.c_str(), sc.fault.c_str());
	fprintf(f, " \"hosts\": %u, \"hosts_per_leaf\": %u, \"leaves\": %u, \"spines\": %u,\n",
		run.fab.hosts(), fc.hostsPerLeaf, fc.leaves, fc.spines);
	fprintf(f, " \"host_gbps\": %g, \"spine_gbps\": %g, \"link_delay_us\": %g, \"mtu\": %u,"
		" \"buffer_bytes\": %u, \"ecn_bytes\": %u, \"seed\": %u,\n",
		fc.hostGbps, fc.spineGbps, fc.linkDelayUs, fc.mtu, fc.bufferBytes, fc.ecnBytes,
		fc.seed);
	fprintf(f, " \"bytes\": %llu, \"group\": %u, \"evs\": %u, \"tcp_cc\": \"%s\","
		" \"min_rto_us\": %g, \"tcp_min_rto_us\": %g, \"cc_init_alpha\": %u, \"fault_at_us\": %g, \"fault_end_us\": %g,"
		" \"faulted_spine\": %d,\n",
		(unsigned long long)sc.bytes, sc.group,
		sc.transport == "mrc1" ? 1 : sc.evs, sc.tcpCc.c_str(), sc.minRtoUs, sc.tcpMinRtoUs, sc.ccInitAlpha,
		sc.faultAtUs, sc.faultEndUs, sc.fault == "busiest-spine-down" ?
		run.faultedSpine : (int)sc.faultSpine);
	fprintf(f, " \"wall_s\": %.2f, \"sim_end_us\": %.1f,\n \"flows\": [", wallS, endUs);
	bool first = true;

	for (auto &c : run.transport->conns) {
		ConnStats s = c->stats();

		delivered += s.bytesDelivered;
		target += s.bytesTarget;
		retx += s.retransmits;
		rtos += s.rtos;
		retired += s.retired;
		sameEv += s.lossSameEv;
		rack += s.lossRack;
		if (s.doneUs >= 0) {
			firstDone = std::min(firstDone, s.doneUs);
			lastDone = std::max(lastDone, s.doneUs);
		}
		fprintf(f, "%s\n  [%u, %u, %.1f, %.1f, %llu, %llu, %.1f, %llu, %llu, %llu]",
			first ? "" : ",", s.src, s.dst, s.startUs, s.doneUs,
			(unsigned long long)s.bytesTarget, (unsigned long long)s.bytesDelivered,
			s.longestGapUs, (unsigned long long)s.retransmits,
			(unsigned long long)s.rtos, (unsigned long long)s.retired);
		first = false;
	}
	fprintf(f, "\n ],\n \"flow_fields\": [\"src\", \"dst\", \"start_us\", \"done_us\","
		" \"bytes\", \"delivered\", \"longest_gap_us\", \"retransmits\", \"rtos\","
		" \"ev_retired\"],\n");
	fprintf(f, " \"collectives\": [");
	first = true;
	for (auto &c : run.collectives) {
		fprintf(f, "%s[%.1f, %.1f]", first ? "" : ", ", c.startUs, c.doneUs);
		first = false;
	}
	fprintf(f, "],\n");
	fprintf(f, " \"delivered_bytes\": %llu, \"target_bytes\": %llu, \"retransmits\": %llu,"
		" \"rtos\": %llu, \"ev_retired\": %llu, \"loss_same_ev\": %llu, \"loss_rack\": %llu,\n",
		(unsigned long long)delivered, (unsigned long long)target,
		(unsigned long long)retx, (unsigned long long)rtos, (unsigned long long)retired,
		(unsigned long long)sameEv, (unsigned long long)rack);

	// leaf -> spine utilisation: while every flow is still active (the
	// permutation's figure), and over the run up to the last completion
	double bytesPerUs = fc.spineGbps * 1e3 / 8;
	auto meanUtil = [&](double untilUs) {
		size_t bins = std::max<size_t>(1, untilUs / fc.binUs);
		double sum = 0;

		for (uint32_t l = 0; l < fc.leaves; l++)
			for (uint32_t s = 0; s < fc.spines; s++) {
				auto &b = run.fab.upStats(l, s).bins;

				for (size_t i = 0; i < bins && i < b.size(); i++)
					sum += b[i];
			}
		return sum / (fc.leaves * fc.spines * bins * fc.binUs * bytesPerUs);
	};
	if (firstDone > 1e17)
		firstDone = endUs;
	if (lastDone == 0)
		lastDone = endUs;
	fprintf(f, " \"first_done_us\": %.1f, \"last_done_us\": %.1f,\n", firstDone, lastDone);
	fprintf(f, " \"uplink_util_all_active\": %.4f, \"uplink_util_to_last\": %.4f,\n",
		meanUtil(firstDone), meanUtil(lastDone));
	uint64_t qdrops = 0, fdrops = 0, marks = 0;

	fprintf(f, " \"spine_bytes\": [");
	for (uint32_t s = 0; s < fc.spines; s++) {
		fprintf(f, "%s%llu", s ? ", " : "", (unsigned long long)run.fab.spineBytes(s));
		for (uint32_t l = 0; l < fc.leaves; l++) {
			for (const auto *st : {&run.fab.upStats(l, s), &run.fab.downStats(s, l)}) {
				qdrops += st->dropsQueue;
				fdrops += st->dropsFault;
				marks += st->ceMarks;
			}
		}
	}
	fprintf(f, "],\n \"fabric_queue_drops\": %llu, \"fault_drops\": %llu, \"ce_marks\": %llu,\n",
		(unsigned long long)qdrops, (unsigned long long)fdrops, (unsigned long long)marks);
	fprintf(f, " \"tick_us\": %g, \"ticks_bytes\": [", sc.tickUs);
	for (size_t i = 0; i < run.ticks.size(); i++)
		fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)run.ticks[i]);
	fprintf(f, "],\n \"bin_us\": %g,\n \"uplink_util_bins\": [", fc.binUs);
	size_t nbins = lastDone / fc.binUs + 1;

	for (uint32_t l = 0; l < fc.leaves; l++)
		for (uint32_t s = 0; s < fc.spines; s++) {
			auto &b = run.fab.upStats(l, s).bins;

			fprintf(f, "%s\n  [", l || s ? "," : "");
			for (size_t i = 0; i < nbins; i++)
				fprintf(f, "%s%.2f", i ? "," : "",
					i < b.size() ? b[i] / (fc.binUs * bytesPerUs) : 0.0);
			fprintf(f, "]");
		}
	fprintf(f, "\n ]\n}\n");
	fclose(f);
}

int main(int argc, char **argv)
{
	Scenario sc;
	FabricConfig fc;
	double bufferKb = fc.bufferBytes / 1024, ecnKb = fc.ecnBytes / 1024;
	CommandLine cmd;

	cmd.AddValue("transport", "mrc | mrc1 (one EV) | tcp", sc.transport);
	cmd.AddValue("workload", "permutation | allreduce | incast | mix | bulk", sc.workload);
	cmd.AddValue("fault", "none | down | loss | flap | busiest-spine-down", sc.fault);
	cmd.AddValue("tcp-cc", "ns-3 TCP congestion control", sc.tcpCc);
	cmd.AddValue("out", "JSON result file", sc.out);
	cmd.AddValue("bytes", "per flow (per host for all-reduce)", sc.bytes);
	cmd.AddValue("group", "all-reduce ring size / incast senders + 1", sc.group);
	cmd.AddValue("fault-at-us", "when the fault starts", sc.faultAtUs);
	cmd.AddValue("fault-end-us", "when it ends (0: never)", sc.faultEndUs);
	cmd.AddValue("fault-leaf", "leaf of the faulty link", sc.faultLeaf);
	cmd.AddValue("fault-spine", "spine of the faulty link", sc.faultSpine);
	cmd.AddValue("flap-period-us", "flap: down for half of each period", sc.flapPeriodUs);
	cmd.AddValue("loss", "loss rate of a lossy spine", sc.lossRate);
	cmd.AddValue("stop-ms", "simulated time limit", sc.stopMs);
	cmd.AddValue("tick-us", "goodput tick of the bulk workload", sc.tickUs);
	cmd.AddValue("evs", "MRC entropy values per connection", sc.evs);
	cmd.AddValue("min-rto-us", "MRC minimum RTO", sc.minRtoUs);
	cmd.AddValue("tcp-min-rto-us", "TCP minimum RTO", sc.tcpMinRtoUs);
	cmd.AddValue("cc-init-alpha", "what-if: MRC's initial DCTCP alpha (kernel: 0, of 1024)",
		     sc.ccInitAlpha);
	cmd.AddValue("hosts-per-leaf", "hosts per leaf", fc.hostsPerLeaf);
	cmd.AddValue("leaves", "leaves", fc.leaves);
	cmd.AddValue("spines", "spines", fc.spines);
	cmd.AddValue("host-gbps", "host link rate", fc.hostGbps);
	cmd.AddValue("spine-gbps", "leaf-spine link rate", fc.spineGbps);
	cmd.AddValue("delay-us", "propagation delay per hop", fc.linkDelayUs);
	cmd.AddValue("buffer-kb", "per output queue", bufferKb);
	cmd.AddValue("ecn-kb", "CE marking threshold", ecnKb);
	cmd.AddValue("mtu", "IP MTU", fc.mtu);
	cmd.AddValue("bin-us", "utilisation heatmap bin", fc.binUs);
	cmd.AddValue("seed", "random seed", fc.seed);
	cmd.Parse(argc, argv);
	fc.bufferBytes = bufferKb * 1024;
	fc.ecnBytes = ecnKb * 1024;
	// the heap scheduler is the quickest of ns-3's for millions of events
	Simulator::SetScheduler(ObjectFactory("ns3::HeapScheduler"));

	auto t0 = std::chrono::steady_clock::now();
	Run run(sc, fc);

	run.setupFault();
	run.start();
	Simulator::Schedule(MicroSeconds(500), &watchCompletion, &run);
	Simulator::Stop(MilliSeconds(sc.stopMs));
	Simulator::Run();
	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

	writeJson(run, fc, wall);
	printf("%s %s %s hosts=%u sim=%.1fus wall=%.1fs delivered=%.3f\n", sc.transport.c_str(),
	       sc.workload.c_str(), sc.fault.c_str(), run.fab.hosts(), nowUs(), wall,
	       [&]() {
		       uint64_t d = 0, t = 0;

		       for (auto &c : run.transport->conns) {
			       d += c->stats().bytesDelivered;
			       t += c->stats().bytesTarget;
		       }
		       return t ? (double)d / t : 0.0;
	       }());
	Simulator::Destroy();
	return 0;
}
