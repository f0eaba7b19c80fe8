// SPDX-License-Identifier: GPL-2.0-only
#include <deque>

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include "tcp_device.h"
#include "transport.h"

using namespace ns3;

// Write milestones and delivery gaps, in the transport's unit (MRC: packets,
// TCP: bytes), so a collective can queue its next step before the last one
// has arrived.
class MilestoneConn : public Conn {
public:
	MilestoneConn(uint32_t s, uint32_t d, uint64_t unitBytes) : unit(unitBytes)
	{
		st.src = s;
		st.dst = d;
	}
	ConnStats stats() const override { return st; }

protected:
	uint64_t addMilestone(uint64_t units, uint64_t bytes, std::function<void()> done)
	{
		double now = nowUs();

		if (written == reached)
			lastProgressUs = now;	// a gap counts only while data is due
		if (!st.bytesTarget)
			st.startUs = now;
		written += units;
		st.bytesTarget += bytes;
		st.doneUs = -1;		// done again only when these arrive too
		milestones.push_back({written, std::move(done)});
		return units;
	}
	void progress(uint64_t total)
	{
		double now = nowUs();

		if (total <= reached)
			return;
		st.longestGapUs = std::max(st.longestGapUs, now - lastProgressUs);
		lastProgressUs = now;
		if (onProgress)
			onProgress((total - reached) * unit);
		reached = total;
		// whole writes are rounded up to units: all bytes are there only
		// once every unit written is
		st.bytesDelivered = reached >= written ? st.bytesTarget :
				    std::min(reached * unit, st.bytesTarget - 1);
		while (!milestones.empty() && milestones.front().first <= reached) {
			auto done = std::move(milestones.front().second);

			milestones.pop_front();
			if (milestones.empty() && reached >= written)
				st.doneUs = now;
			if (done)
				done();
		}
	}
	ConnStats st;
	uint64_t unit, written = 0, reached = 0;
	double lastProgressUs = 0;
	std::deque<std::pair<uint64_t, std::function<void()>>> milestones;
};

class MrcConn : public MilestoneConn {
public:
	MrcConn(Fabric &f, uint32_t id, uint32_t s, uint32_t d, const MrcParams &p)
		: MilestoneConn(s, d, p.mss), flow(f, id, s, d, p)
	{
		flow.onInOrder = [this](uint64_t n) { progress(n); };
	}
	void write(uint64_t bytes, std::function<void()> done) override
	{
		uint64_t packets = (bytes + unit - 1) / unit;

		addMilestone(packets, bytes, std::move(done));
		flow.write(packets);
	}
	ConnStats stats() const override
	{
		ConnStats s = st;

		s.retransmits = flow.stats.retransmits;
		s.rtos = flow.stats.rtos;
		s.retired = flow.stats.retired;
		s.lossSameEv = flow.stats.lossSameEv;
		s.lossRack = flow.stats.lossRack;
		return s;
	}
	MrcFlow flow;
};

class MrcTransport : public Transport {
public:
	MrcTransport(Fabric &f, const MrcParams &p, const std::string &n)
		: fab(f), prm(p), label(n) {}
	Conn *connect(uint32_t src, uint32_t dst) override
	{
		auto *c = new MrcConn(fab, conns.size(), src, dst, prm);

		conns.emplace_back(c);
		flows.push_back(&c->flow);
		return c;
	}
	std::string name() const override { return label; }
	void deliver(SimPacket *p) { flows[p->conn]->receive(p); }

	Fabric &fab;
	MrcParams prm;
	std::string label;
	std::vector<MrcFlow *> flows;
};

std::unique_ptr<Transport> makeMrcTransport(Fabric &f, const MrcParams &p, const std::string &name)
{
	auto t = std::make_unique<MrcTransport>(f, p, name);
	MrcTransport *raw = t.get();
	auto previous = f.deliver;

	f.deliver = [raw, previous](SimPacket *p) {
		if (p->kind == PacketKind::Ip)
			previous(p);
		else
			raw->deliver(p);
	};
	return t;
}

static const uint16_t kTcpPort = 5000;

class TcpTransport;

class TcpConn : public MilestoneConn {
public:
	TcpConn(TcpTransport &t, uint32_t s, uint32_t d);
	void write(uint64_t bytes, std::function<void()> done) override
	{
		addMilestone(bytes, bytes, std::move(done));
		pending += bytes;
		fill();
	}
	void fill()
	{
		while (connected && pending) {
			uint32_t n = std::min<uint64_t>({pending, sender->GetTxAvailable(), 65536});

			if (!n)
				break;
			int sent = sender->Send(Create<Packet>(n));

			if (sent <= 0)
				break;
			pending -= sent;
		}
	}
	void received(Ptr<Socket> s)
	{
		Ptr<Packet> p;

		while ((p = s->Recv()))
			got += p->GetSize();
		progress(got);
	}
	Ptr<Socket> sender;
	uint16_t localPort = 0;
	bool connected = false;
	uint64_t pending = 0, got = 0;
};

class TcpTransport : public Transport {
public:
	TcpTransport(Fabric &f, const std::string &cc, uint32_t mss, double minRtoUs) : fab(f)
	{
		Config::SetDefault("ns3::TcpL4Protocol::SocketType",
				   StringValue("ns3::" + cc));
		Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
		Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
		Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
		Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
		// every segment acked: with ns-3 3.37's DCTCP, delayed ACKs (2)
		// left flows stalled for good once CE marks began (a 64-host
		// permutation: 5 of 64 flows never finished)
		Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
		Config::SetDefault("ns3::TcpSocketBase::MinRto",
				   TimeValue(MicroSeconds(minRtoUs)));
		Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
				   TimeValue(MicroSeconds(100)));
		if (cc == "TcpDctcp")
			Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
		nodes.Create(f.hosts());
		InternetStackHelper stack;

		stack.Install(nodes);
		devices.resize(f.hosts());
		listeners.resize(f.hosts());
		for (uint32_t h = 0; h < f.hosts(); h++) {
			Ptr<FabricNetDevice> dev = CreateObject<FabricNetDevice>();

			dev->attach(&f, h);
			dev->SetAddress(Mac48Address::Allocate());
			dev->SetMtu(f.cfg.mtu);
			nodes.Get(h)->AddDevice(dev);
			Ptr<Ipv4> ip = nodes.Get(h)->GetObject<Ipv4>();
			int32_t i = ip->AddInterface(dev);

			ip->AddAddress(i, Ipv4InterfaceAddress(hostAddress(h), Ipv4Mask("255.0.0.0")));
			ip->SetUp(i);
			devices[h] = dev;
		}
		auto previous = f.deliver;

		f.deliver = [this, previous](SimPacket *p) {
			if (p->kind == PacketKind::Ip)
				devices[p->dst]->receiveFromFabric(p);
			else if (previous)
				previous(p);
		};
	}
	Conn *connect(uint32_t src, uint32_t dst) override
	{
		listen(dst);
		auto *c = new TcpConn(*this, src, dst);

		conns.emplace_back(c);
		bySource[{dst, (uint64_t)src << 16 | c->localPort}] = c;
		return c;
	}
	std::string name() const override { return "tcp"; }
	void listen(uint32_t host)
	{
		if (listeners[host])
			return;
		Ptr<Socket> l = Socket::CreateSocket(nodes.Get(host), TcpSocketFactory::GetTypeId());

		l->Bind(InetSocketAddress(Ipv4Address::GetAny(), kTcpPort));
		l->Listen();
		l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address &>(),
				     MakeCallback(&TcpTransport::accepted, this));
		listeners[host] = l;
	}
	void accepted(Ptr<Socket> s, const Address &from)
	{
		InetSocketAddress a = InetSocketAddress::ConvertFrom(from);
		uint32_t dst = hostOfAddress(Ipv4Address::ConvertFrom(
			s->GetNode()->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal()));
		auto it = bySource.find({dst, (uint64_t)hostOfAddress(a.GetIpv4()) << 16 | a.GetPort()});

		if (it == bySource.end())
			return;
		TcpConn *c = it->second;

		s->SetRecvCallback(MakeCallback(&TcpConn::received, c));
	}

	Fabric &fab;
	NodeContainer nodes;
	std::vector<Ptr<FabricNetDevice>> devices;
	std::vector<Ptr<Socket>> listeners;
	std::map<std::pair<uint32_t, uint64_t>, TcpConn *> bySource;
};

TcpConn::TcpConn(TcpTransport &t, uint32_t s, uint32_t d) : MilestoneConn(s, d, 1)
{
	Address local;

	sender = Socket::CreateSocket(t.nodes.Get(s), TcpSocketFactory::GetTypeId());
	sender->Bind();
	sender->GetSockName(local);
	localPort = InetSocketAddress::ConvertFrom(local).GetPort();
	sender->SetConnectCallback(MakeCallback(+[](TcpConn *c, Ptr<Socket>) {
					   c->connected = true;
					   c->fill();
				   }).Bind(this),
				   MakeNullCallback<void, Ptr<Socket>>());
	sender->SetSendCallback(MakeCallback(+[](TcpConn *c, Ptr<Socket>, uint32_t) {
		c->fill();
	}).Bind(this));
	sender->Connect(InetSocketAddress(hostAddress(d), kTcpPort));
}

std::unique_ptr<Transport> makeTcpTransport(Fabric &f, const std::string &cc, uint32_t mss,
					    double minRtoUs)
{
	return std::make_unique<TcpTransport>(f, cc, mss, minRtoUs);
}
