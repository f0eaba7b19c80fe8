// SPDX-License-Identifier: GPL-2.0-only
/*
 * A host NIC that puts ns-3's own IPv4 packets (its TCP, DCTCP) into the
 * fabric model: the 5-tuple from the IPv4 and TCP headers picks the spine
 * (one flow, one path, as ECMP pins it), and the fabric's CE mark is
 * written into the IPv4 header's ECN field where ns-3's TCP reads it.
 */
#ifndef MRC_SIM_TCP_DEVICE_H
#define MRC_SIM_TCP_DEVICE_H

#include <ns3/channel.h>
#include <ns3/mac48-address.h>
#include <ns3/net-device.h>
#include <ns3/node.h>

#include "fabric.h"

class FabricNetDevice : public ns3::NetDevice {
public:
	static ns3::TypeId GetTypeId();
	void attach(Fabric *f, uint32_t host) { fabric = f; hostId = host; }
	// a packet of kind Ip reached this host
	void receiveFromFabric(SimPacket *p);

	void SetIfIndex(uint32_t index) override { ifIndex = index; }
	uint32_t GetIfIndex() const override { return ifIndex; }
	ns3::Ptr<ns3::Channel> GetChannel() const override { return nullptr; }
	void SetAddress(ns3::Address a) override { address = ns3::Mac48Address::ConvertFrom(a); }
	ns3::Address GetAddress() const override { return address; }
	bool SetMtu(uint16_t m) override { mtu = m; return true; }
	uint16_t GetMtu() const override { return mtu; }
	bool IsLinkUp() const override { return true; }
	void AddLinkChangeCallback(ns3::Callback<void>) override {}
	bool IsBroadcast() const override { return true; }
	ns3::Address GetBroadcast() const override { return ns3::Mac48Address::GetBroadcast(); }
	bool IsMulticast() const override { return false; }
	ns3::Address GetMulticast(ns3::Ipv4Address) const override { return GetBroadcast(); }
	ns3::Address GetMulticast(ns3::Ipv6Address) const override { return GetBroadcast(); }
	bool IsBridge() const override { return false; }
	bool IsPointToPoint() const override { return true; }
	bool Send(ns3::Ptr<ns3::Packet> packet, const ns3::Address &dest,
		  uint16_t protocol) override;
	bool SendFrom(ns3::Ptr<ns3::Packet> packet, const ns3::Address &, const ns3::Address &dest,
		      uint16_t protocol) override { return Send(packet, dest, protocol); }
	ns3::Ptr<ns3::Node> GetNode() const override { return node; }
	void SetNode(ns3::Ptr<ns3::Node> n) override { node = n; }
	bool NeedsArp() const override { return false; }
	void SetReceiveCallback(ns3::NetDevice::ReceiveCallback cb) override { rx = cb; }
	void SetPromiscReceiveCallback(ns3::NetDevice::PromiscReceiveCallback) override {}
	bool SupportsSendFrom() const override { return false; }

	uint32_t headerBytes = 38;	// Ethernet framing on the wire

private:
	Fabric *fabric = nullptr;
	uint32_t hostId = 0, ifIndex = 0;
	uint16_t mtu = 9000;
	ns3::Mac48Address address;
	ns3::Ptr<ns3::Node> node;
	ns3::NetDevice::ReceiveCallback rx;
};

// 10.x.y.z for host ids
ns3::Ipv4Address hostAddress(uint32_t host);
uint32_t hostOfAddress(ns3::Ipv4Address a);

#endif
