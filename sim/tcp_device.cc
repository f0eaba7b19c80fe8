// SPDX-License-Identifier: GPL-2.0-only
#include "tcp_device.h"

#include <ns3/ipv4-header.h>
#include <ns3/ipv4-l3-protocol.h>
#include <ns3/tcp-header.h>

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(FabricNetDevice);

TypeId FabricNetDevice::GetTypeId()
{
	static TypeId tid = TypeId("FabricNetDevice")
		.SetParent<NetDevice>()
		.AddConstructor<FabricNetDevice>();
	return tid;
}

Ipv4Address hostAddress(uint32_t host)
{
	return Ipv4Address((10u << 24) | (host + 1));
}

uint32_t hostOfAddress(Ipv4Address a)
{
	return (a.Get() & 0xffffff) - 1;
}

bool FabricNetDevice::Send(Ptr<Packet> packet, const Address &, uint16_t protocol)
{
	if (protocol != Ipv4L3Protocol::PROT_NUMBER)
		return false;
	Ipv4Header ip;
	TcpHeader tcp;

	packet->PeekHeader(ip);
	Ptr<Packet> body = packet->Copy();
	body->RemoveHeader(ip);
	body->PeekHeader(tcp);

	SimPacket *p = fabric->alloc();

	p->kind = PacketKind::Ip;
	p->src = hostId;
	p->dst = hostOfAddress(ip.GetDestination());
	p->bytes = packet->GetSize() + headerBytes;
	p->flowHash = Fabric::hash5(ip.GetSource().Get(), ip.GetDestination().Get(),
				    tcp.GetSourcePort(), tcp.GetDestinationPort(),
				    ip.GetProtocol());
	p->ect = ip.GetEcn() == Ipv4Header::ECN_ECT0 || ip.GetEcn() == Ipv4Header::ECN_ECT1;
	p->ip = packet;
	fabric->send(p);
	return true;
}

void FabricNetDevice::receiveFromFabric(SimPacket *p)
{
	Ptr<Packet> packet = p->ip;

	if (p->ce) {
		Ipv4Header ip;

		packet = packet->Copy();
		packet->RemoveHeader(ip);
		ip.SetEcn(Ipv4Header::ECN_CE);
		packet->AddHeader(ip);
	}
	fabric->release(p);
	rx(this, packet, Ipv4L3Protocol::PROT_NUMBER, Mac48Address::GetBroadcast());
}
