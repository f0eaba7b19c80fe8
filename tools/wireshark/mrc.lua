-- SPDX-License-Identifier: GPL-2.0-only
--
-- Wireshark dissector for MRC, the multipath reliable connection transport
-- of net/mrc: a 48-byte header (struct mrchdr in net/mrc/protocol.h, big
-- endian) inside UDP, by default on port 4797.  The outer UDP source port
-- is the packet's entropy value (EV), the field that picks its path.
--
--   wireshark -X lua_script:tools/wireshark/mrc.lua
--   tshark -X lua_script:tools/wireshark/mrc.lua -r cap.pcap -Y mrc
-- or copy it into ~/.local/lib/wireshark/plugins/.
--
-- Besides UDP port 4797 (a preference) a heuristic claims UDP payloads on
-- any port that look like an MRC header: right version, known type and
-- flags, and a len that accounts for the whole payload (or for the first
-- packet of a burst, mrc.burst: several DATA packets in one GSO datagram,
-- as a capture on the sending host shows them).
--
-- A SYNACK's or HSACK's handshake payload may be followed by the sender's
-- plane addresses (mrc.addrs.count, mrc.addr.*).  selftests/mrc/wireshark.sh
-- tests it: on the module's traffic in the VM, and with --crafted on
-- packets built byte by byte, on the host.

local MRC_VERSION = 4
local MRC_HDR_LEN = 48
local MRC_HS_LEN = 16
local MRC_ADDR_LIST_LEN = 4	-- struct mrc_addr_list: count, 3 reserved bytes
local MRC_WIRE_ADDR_LEN = 20	-- struct mrc_wire_addr
local MRC_MAX_PLANES = 4
local MRC_SACK_BITS = 64
local MRC_F_ALL = 0x7f
local MRC_F_SACKX = 0x20
local MRC_SACKX_WORDS = 31
local MRC_F_DSACK = 0x40
local MRC_DSACK_LEN = 8		-- struct mrc_dsack: tsval, ev, 2 reserved bytes
local MRC_DEFAULT_UDP_PORT = 4797

local T_SYN, T_SYNACK, T_HSACK, T_DATA, T_ACK, T_RST = 1, 2, 3, 4, 5, 6

local type_names = {
	[T_SYN] = "SYN",
	[T_SYNACK] = "SYNACK",
	[T_HSACK] = "HSACK",
	[T_DATA] = "DATA",
	[T_ACK] = "ACK",
	[T_RST] = "RST",
}

-- flag bit, name; in the order the Info column lists them
local flag_bits = {
	{ 0x01, "FIN" },
	{ 0x02, "EOR" },
	{ 0x04, "ACKNOW" },
	{ 0x08, "PROBE" },
	{ 0x10, "CE" },
	{ 0x20, "SACKX" },
	{ 0x40, "DSACK" },
}

local mrc = Proto("mrc", "Multipath Reliable Connection")

local f = {
	version = ProtoField.uint8("mrc.version", "Version", base.DEC),
	type = ProtoField.uint8("mrc.type", "Type", base.DEC, type_names),
	flags = ProtoField.uint8("mrc.flags", "Flags", base.HEX),
	flag_fin = ProtoField.bool("mrc.flags.fin", "FIN (last PSN of this direction)", 8, nil, 0x01),
	flag_eor = ProtoField.bool("mrc.flags.eor", "EOR (end of a SEQPACKET message)", 8, nil, 0x02),
	flag_acknow = ProtoField.bool("mrc.flags.acknow", "ACKNOW (acknowledge at once)", 8, nil, 0x04),
	flag_probe = ProtoField.bool("mrc.flags.probe", "PROBE (EV probe or its answer)", 8, nil, 0x08),
	flag_ce = ProtoField.bool("mrc.flags.ce", "CE (acknowledged data was CE-marked)", 8, nil, 0x10),
	flag_sackx = ProtoField.bool("mrc.flags.sackx", "SACKX (the payload continues the SACK bitmap)",
		8, nil, 0x20),
	flag_dsack = ProtoField.bool("mrc.flags.dsack", "DSACK (the payload ends with a duplicate's echo)",
		8, nil, 0x40),
	flag_reserved = ProtoField.uint8("mrc.flags.reserved", "Reserved", base.HEX, nil, 0x80),
	priority = ProtoField.uint8("mrc.priority", "Priority", base.DEC),
	sport = ProtoField.uint16("mrc.sport", "Source port", base.DEC),
	dport = ProtoField.uint16("mrc.dport", "Destination port", base.DEC),
	port = ProtoField.uint16("mrc.port", "Source or destination port", base.DEC),
	src_id = ProtoField.uint32("mrc.src_id", "Source connection ID", base.HEX),
	dst_id = ProtoField.uint32("mrc.dst_id", "Destination connection ID", base.HEX),
	psn = ProtoField.uint32("mrc.psn", "PSN", base.DEC),
	ack_psn = ProtoField.uint32("mrc.ack_psn", "ACK PSN (next expected)", base.DEC),
	sack = ProtoField.uint64("mrc.sack", "SACK bitmap", base.HEX),
	sack_count = ProtoField.uint8("mrc.sack.count", "PSNs selectively acknowledged", base.DEC),
	sack_psn = ProtoField.uint32("mrc.sack.psn", "SACKed PSN", base.DEC),
	sack_range = ProtoField.string("mrc.sack.range", "SACKed range"),
	sackx = ProtoField.bytes("mrc.sackx", "SACK bitmap continued (64 PSNs a word)"),
	dsack_tsval = ProtoField.uint32("mrc.dsack.tsval", "Duplicate's timestamp value (us)", base.DEC),
	dsack_ev = ProtoField.uint16("mrc.dsack.ev", "Duplicate's EV", base.DEC),
	tsval = ProtoField.uint32("mrc.tsval", "Timestamp value (us)", base.DEC),
	tsecr = ProtoField.uint32("mrc.tsecr", "Timestamp echo reply (us)", base.DEC),
	rcv_wnd = ProtoField.uint32("mrc.rcv_wnd", "Receive window (bytes)", base.DEC),
	ack_ev = ProtoField.uint16("mrc.ack_ev", "ACK EV (EV of the packet acknowledged)", base.DEC),
	len = ProtoField.uint16("mrc.len", "Payload length", base.DEC),
	hs_cookie = ProtoField.uint64("mrc.hs.cookie", "Cookie", base.HEX),
	hs_slot = ProtoField.uint32("mrc.hs.slot", "Cookie slot word (time slot, salt << 30)", base.HEX),
	hs_mss = ProtoField.uint32("mrc.hs.mss", "MSS", base.DEC),
	addrs = ProtoField.uint8("mrc.addrs.count", "Addresses", base.DEC),
	addrs_reserved = ProtoField.uint24("mrc.addrs.reserved", "Reserved", base.HEX),
	addr_family = ProtoField.uint8("mrc.addr.family", "Family", base.DEC,
		{ [4] = "IPv4", [6] = "IPv6" }),
	addr_plane = ProtoField.uint8("mrc.addr.plane", "Plane (the sender's plane index)", base.DEC),
	addr_reserved = ProtoField.uint16("mrc.addr.reserved", "Reserved", base.HEX),
	addr_ipv4 = ProtoField.ipv4("mrc.addr.ipv4", "IPv4 address"),
	addr_ipv6 = ProtoField.ipv6("mrc.addr.ipv6", "IPv6 address"),
	burst = ProtoField.uint16("mrc.burst", "Packets in this burst", base.DEC),
	burst_last = ProtoField.uint32("mrc.burst.last_psn", "PSN of the burst's last packet", base.DEC),
	ev = ProtoField.uint16("mrc.ev", "Entropy value (UDP source port)", base.DEC),
}
mrc.fields = f

local e = {
	short = ProtoExpert.new("mrc.short", "MRC header shorter than 48 bytes",
		expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("mrc.bad_version", "Unknown MRC version",
		expert.group.MALFORMED, expert.severity.ERROR),
	type = ProtoExpert.new("mrc.bad_type", "Unknown MRC packet type",
		expert.group.MALFORMED, expert.severity.ERROR),
	flags = ProtoExpert.new("mrc.bad_flags", "Reserved MRC flags set",
		expert.group.MALFORMED, expert.severity.ERROR),
	priority = ProtoExpert.new("mrc.bad_priority", "MRC priority above 7",
		expert.group.MALFORMED, expert.severity.ERROR),
	len = ProtoExpert.new("mrc.bad_len", "MRC len disagrees with the UDP payload",
		expert.group.MALFORMED, expert.severity.ERROR),
	hs_len = ProtoExpert.new("mrc.bad_hs_len",
		"Handshake payload is not 16 bytes, nor 16 and a list of 1..4 addresses",
		expert.group.MALFORMED, expert.severity.ERROR),
	addrs = ProtoExpert.new("mrc.bad_addrs",
		"Address count disagrees with the list's length (receiver ignores the list)",
		expert.group.MALFORMED, expert.severity.ERROR),
	addr = ProtoExpert.new("mrc.bad_addr",
		"Address entry the receiver rejects (family not 4 or 6, reserved bits set)",
		expert.group.PROTOCOL, expert.severity.WARN),
	payload = ProtoExpert.new("mrc.bad_payload", "Payload in a packet type that has none",
		expert.group.MALFORMED, expert.severity.ERROR),
	sackx = ProtoExpert.new("mrc.bad_sackx",
		"ACK payload is not SACKX's 1..31 words of 8 bytes and DSACK's 8 bytes, as flagged",
		expert.group.MALFORMED, expert.severity.ERROR),
	ids = ProtoExpert.new("mrc.bad_ids", "Connection IDs break the rules (receiver drops it)",
		expert.group.PROTOCOL, expert.severity.WARN),
}
mrc.experts = { e.short, e.version, e.type, e.flags, e.priority, e.len, e.hs_len,
	e.addrs, e.addr, e.payload, e.sackx, e.ids }

mrc.prefs.udp_port = Pref.uint("UDP port", MRC_DEFAULT_UDP_PORT,
	"UDP port of the MRC tunnel sockets (net.mrc config udp-port)")

local data_dissector = Dissector.get("data")

-- The header's fields: field, offset, length
local header_layout = {
	{ f.version, 0, 1 }, { f.type, 1, 1 }, { f.flags, 2, 1 }, { f.priority, 3, 1 },
	{ f.sport, 4, 2 }, { f.dport, 6, 2 }, { f.src_id, 8, 4 }, { f.dst_id, 12, 4 },
	{ f.psn, 16, 4 }, { f.ack_psn, 20, 4 }, { f.sack, 24, 8 }, { f.tsval, 32, 4 },
	{ f.tsecr, 36, 4 }, { f.rcv_wnd, 40, 4 }, { f.ack_ev, 44, 2 }, { f.len, 46, 2 },
}

-- Lua numbers hold 32-bit halves exactly, so bits are tested arithmetically
-- (no bit library: Lua 5.2 and 5.4 builds of Wireshark differ in theirs).
local function bit_set(word, i)
	return math.floor(word / 2 ^ i) % 2 == 1
end

local function psn_add(psn, n)
	return (psn + n) % 4294967296
end

local function flag_names(flags)
	local names = {}
	for _, fb in ipairs(flag_bits) do
		if math.floor(flags / fb[1]) % 2 == 1 then
			names[#names + 1] = fb[2]
		end
	end
	return names
end

-- The SACK bitmap: bit i set means PSN ack_psn + 1 + i arrived; the
-- header's 64 bits, then NX words of an ACK flagged SACKX (its payload).
-- Adds the bitmap, then each PSN it acknowledges and the runs of them as
-- ranges.
local function add_sack(tree, tvb, ack_psn, nx)
	local range = tvb(24, 8)
	local hi, lo = tvb(24, 4):uint(), tvb(28, 4):uint()
	local sack_tree = tree:add(f.sack, range)
	if nx > 0 then
		sack_tree:add(f.sackx, tvb(MRC_HDR_LEN, 8 * nx))
	end
	if hi == 0 and lo == 0 and nx == 0 then
		sack_tree:add(f.sack_count, range, 0):set_generated()
		return 0
	end
	local psns, runs = {}, {}
	local run_start
	local total = MRC_SACK_BITS * (1 + nx)
	for i = 0, total do
		local set = false
		if i < total then
			local w, b = math.floor(i / 64), i % 64
			local off = w == 0 and 24 or MRC_HDR_LEN + 8 * (w - 1)
			if b < 32 then
				set = bit_set(tvb(off + 4, 4):uint(), b)
			else
				set = bit_set(tvb(off, 4):uint(), b - 32)
			end
		end
		if set then
			psns[#psns + 1] = i
			run_start = run_start or i
		elseif run_start then
			runs[#runs + 1] = { run_start, i - 1 }
			run_start = nil
		end
	end
	sack_tree:add(f.sack_count, range, #psns):set_generated()
	local texts = {}
	for _, r in ipairs(runs) do
		local first, last = psn_add(ack_psn, 1 + r[1]), psn_add(ack_psn, 1 + r[2])
		local text
		if first == last then
			text = string.format("%u (+%d)", first, r[1] + 1)
		else
			text = string.format("%u-%u (+%d..+%d)", first, last, r[1] + 1, r[2] + 1)
		end
		sack_tree:add(f.sack_range, range, text):set_generated()
		texts[#texts + 1] = text
	end
	for _, i in ipairs(psns) do
		sack_tree:add(f.sack_psn, range, psn_add(ack_psn, 1 + i)):set_generated()
	end
	sack_tree:append_text(" (" .. table.concat(texts, ", ") .. ")")
	return #psns
end

-- A burst: DATA packets of one EV sent as one UDP GSO datagram (net/mrc
-- mrc_send_burst()), [header | len bytes] each, all but the last of the
-- same len, consecutive PSNs.  Captured on the sending host (or wherever
-- no device cut it yet) it is one frame.  Returns the number of packets a
-- first header with this len implies for a payload of TOTAL bytes, or 1.
local function burst_count(ptype, plen, total)
	if ptype ~= T_DATA or plen == 0 or total <= MRC_HDR_LEN + plen then
		return 1
	end
	local seg = MRC_HDR_LEN + plen
	local n = math.floor((total + seg - 1) / seg)
	if total - (n - 1) * seg < MRC_HDR_LEN then
		return 1
	end
	return n
end

-- The handshake payload of a SYNACK or HSACK: 16 bytes, or 16 and the
-- sender's other plane addresses (struct mrc_addr_list, net/mrc/wire.h):
-- a count of 1..MRC_MAX_PLANES, 3 reserved bytes, then as many entries of
-- family (4 or 6), plane index, 2 reserved bytes and 16 address bytes
-- (IPv4 in the first 4), as mrc_hdr_check() accepts them.
local function hs_len_ok(len)
	local n = (len - MRC_HS_LEN - MRC_ADDR_LIST_LEN) / MRC_WIRE_ADDR_LEN
	return len == MRC_HS_LEN or (n >= 1 and n <= MRC_MAX_PLANES and n == math.floor(n))
end

-- The address list at OFF, LEN bytes long, as far as the capture kept it.
-- Returns the number of entries decoded.
local function add_addrs(tree, tvb, off, len)
	local have = math.min(len, tvb:len() - off)
	local n = (len - MRC_ADDR_LIST_LEN) / MRC_WIRE_ADDR_LEN
	local lt = tree:add(tvb(off, have), "Plane addresses")
	if have < MRC_ADDR_LIST_LEN then
		lt:append_text(" [Address list cut by the capture]")
		return 0
	end
	local count = tvb(off, 1):uint()
	local ci = lt:add(f.addrs, tvb(off, 1))
	lt:add(f.addrs_reserved, tvb(off + 1, 3))
	if count ~= n then
		ci:add_proto_expert_info(e.addrs, string.format(
			"Address count %d disagrees with the list's length (%d entries; receiver ignores the list)",
			count, n))
	end
	local shown = {}
	local i = 0
	while i < n and off + MRC_ADDR_LIST_LEN + (i + 1) * MRC_WIRE_ADDR_LEN <= off + have do
		local o = off + MRC_ADDR_LIST_LEN + i * MRC_WIRE_ADDR_LEN
		local family, plane = tvb(o, 1):uint(), tvb(o + 1, 1):uint()
		local et = lt:add(tvb(o, MRC_WIRE_ADDR_LEN), string.format("Plane %d", plane))
		local fi = et:add(f.addr_family, tvb(o, 1))
		et:add(f.addr_plane, tvb(o + 1, 1))
		et:add(f.addr_reserved, tvb(o + 2, 2))
		local text
		if family == 4 then
			et:add(f.addr_ipv4, tvb(o + 4, 4))
			text = tostring(tvb(o + 4, 4):ipv4())
		elseif family == 6 then
			et:add(f.addr_ipv6, tvb(o + 4, 16))
			text = tostring(tvb(o + 4, 16):ipv6())
		else
			text = string.format("family %d", family)
		end
		et:append_text(": " .. text)
		if (family ~= 4 and family ~= 6) or tvb(o + 2, 2):uint() ~= 0 then
			fi:add_proto_expert_info(e.addr)
		end
		shown[#shown + 1] = text
		i = i + 1
	end
	lt:append_text(string.format(" (%d)", n))
	if #shown > 0 then
		lt:append_text(": " .. table.concat(shown, ", "))
	end
	if i < n then
		lt:add(tvb(off, have), string.format("Address list cut by the capture: %d of %d entries",
			i, n)):set_generated()
	end
	return i
end

-- dissect(tvb, pinfo, tree): the whole UDP payload as one MRC packet, or
-- the first of a burst.
local function dissect(tvb, pinfo, tree)
	local reported = tvb:reported_length_remaining()
	pinfo.cols.protocol = "MRC"
	local t = tree:add(mrc, tvb())
	t:add(f.ev, pinfo.src_port):set_generated()

	if reported < MRC_HDR_LEN then
		t:add_proto_expert_info(e.short,
			string.format("MRC header shorter than 48 bytes (%d)", reported))
		pinfo.cols.info = string.format("MRC [header too short: %d bytes]", reported)
		if tvb:len() > 0 then
			data_dissector:call(tvb():tvb(), pinfo, tree)
		end
		return
	end
	if tvb:len() < MRC_HDR_LEN then
		-- cut by the capture's snap length, not malformed: what fits
		for _, fl in ipairs(header_layout) do
			if fl[2] + fl[3] <= tvb:len() then
				t:add(fl[1], tvb(fl[2], fl[3]))
			end
		end
		t:add(tvb(), string.format("[Header cut by the capture: %d of 48 bytes]",
			tvb:len())):set_generated()
		local ptype = tvb:len() >= 2 and tvb(1, 1):uint()
		pinfo.cols.info = string.format("%s [cut by the capture]",
			type_names[ptype] or "MRC")
		return
	end

	local version = tvb(0, 1):uint()
	local ptype = tvb(1, 1):uint()
	local flags = tvb(2, 1):uint()
	local priority = tvb(3, 1):uint()
	local sport, dport = tvb(4, 2):uint(), tvb(6, 2):uint()
	local src_id, dst_id = tvb(8, 4):uint(), tvb(12, 4):uint()
	local psn, ack_psn = tvb(16, 4):uint(), tvb(20, 4):uint()
	local plen = tvb(46, 2):uint()
	local tname = type_names[ptype] or string.format("Unknown type %d", ptype)

	local vi = t:add(f.version, tvb(0, 1))
	if version ~= MRC_VERSION then
		vi:add_proto_expert_info(e.version)
	end
	local ti = t:add(f.type, tvb(1, 1))
	if not type_names[ptype] then
		ti:add_proto_expert_info(e.type)
	end
	local fi = t:add(f.flags, tvb(2, 1))
	local names = flag_names(flags)
	if #names > 0 then
		fi:append_text(" (" .. table.concat(names, ", ") .. ")")
	end
	fi:add(f.flag_fin, tvb(2, 1))
	fi:add(f.flag_eor, tvb(2, 1))
	fi:add(f.flag_acknow, tvb(2, 1))
	fi:add(f.flag_probe, tvb(2, 1))
	fi:add(f.flag_ce, tvb(2, 1))
	fi:add(f.flag_sackx, tvb(2, 1))
	fi:add(f.flag_dsack, tvb(2, 1))
	fi:add(f.flag_reserved, tvb(2, 1))
	if flags > MRC_F_ALL then
		fi:add_proto_expert_info(e.flags)
	end
	local pi = t:add(f.priority, tvb(3, 1))
	if priority > 7 then
		pi:add_proto_expert_info(e.priority)
	end
	t:add(f.sport, tvb(4, 2))
	t:add(f.dport, tvb(6, 2))
	t:add(f.port, tvb(4, 2)):set_hidden()
	t:add(f.port, tvb(6, 2)):set_hidden()
	local ii = t:add(f.src_id, tvb(8, 4))
	t:add(f.dst_id, tvb(12, 4))
	-- as mrc_hdr_check(): only a SYN has no receiver, only a RST no sender
	if (ptype == T_SYN) ~= (dst_id == 0) or (src_id == 0 and ptype ~= T_RST) then
		ii:add_proto_expert_info(e.ids)
	end
	t:add(f.psn, tvb(16, 4))
	t:add(f.ack_psn, tvb(20, 4))
	-- an ACK's SACK words, when the capture kept them all
	local nx = 0
	local sackx = ptype == T_ACK and math.floor(flags / MRC_F_SACKX) % 2 == 1
	-- DSACK's echo of a duplicate ends the payload, after SACKX's words
	local dsack = ptype == T_ACK and math.floor(flags / MRC_F_DSACK) % 2 == 1
	local sx_len = plen - (dsack and MRC_DSACK_LEN or 0)
	local ack_payload_ok = sx_len >= 0 and
		(sackx and sx_len > 0 and sx_len % 8 == 0 and sx_len <= 8 * MRC_SACKX_WORDS or
		 not sackx and sx_len == 0)
	if sackx and ack_payload_ok and tvb:len() >= MRC_HDR_LEN + sx_len then
		nx = sx_len / 8
	end
	local nsack = add_sack(t, tvb, ack_psn, nx)
	t:add(f.tsval, tvb(32, 4))
	t:add(f.tsecr, tvb(36, 4))
	t:add(f.rcv_wnd, tvb(40, 4))
	t:add(f.ack_ev, tvb(44, 2))
	local li = t:add(f.len, tvb(46, 2))
	local payload_len = reported - MRC_HDR_LEN
	local nburst = burst_count(ptype, plen, reported)
	if nburst > 1 then
		-- the others' headers follow, if the capture kept them
		t:add(f.burst, nburst):set_generated()
		t:add(f.burst_last, (psn + nburst - 1) % 4294967296):set_generated()
		payload_len = plen
	end
	if plen ~= payload_len then
		li:add_proto_expert_info(e.len, string.format(
			"MRC len %d disagrees with the UDP payload (%d bytes after the header)",
			plen, payload_len))
	end
	t:set_len(MRC_HDR_LEN)

	local info = string.format("%s %u \226\134\146 %u", tname, sport, dport)
	if ptype ~= T_ACK then
		info = info .. string.format(" PSN=%u", psn)
	end
	info = info .. string.format(" ACK=%u", ack_psn)
	if nsack > 0 then
		info = info .. string.format(" SACK=%d", nsack)
	end
	if ptype == T_DATA then
		info = info .. string.format(" Len=%u", plen)
	end
	if nburst > 1 then
		info = info .. string.format(" Burst=%u (to PSN %u)", nburst,
			(psn + nburst - 1) % 4294967296)
	end
	if #names > 0 then
		info = info .. " [" .. table.concat(names, ", ") .. "]"
	end
	info = info .. string.format(" EV=%u", pinfo.src_port)
	pinfo.cols.info = info

	if payload_len <= 0 then
		if sackx or dsack then
			li:add_proto_expert_info(e.sackx)
		end
		return
	end
	if ptype == T_SYNACK or ptype == T_HSACK then
		if not hs_len_ok(payload_len) then
			li:add_proto_expert_info(e.hs_len)
		elseif tvb:len() < MRC_HDR_LEN + MRC_HS_LEN then
			t:add(tvb(MRC_HDR_LEN), "[Handshake cut by the capture]"):set_generated()
			return
		else
			local hs = t:add(tvb(MRC_HDR_LEN, MRC_HS_LEN), "Handshake")
			hs:add(f.hs_cookie, tvb(MRC_HDR_LEN, 8))
			hs:add(f.hs_slot, tvb(MRC_HDR_LEN + 8, 4))
			hs:add(f.hs_mss, tvb(MRC_HDR_LEN + 12, 4))
			local alen = payload_len - MRC_HS_LEN
			if alen > 0 then
				local off = MRC_HDR_LEN + MRC_HS_LEN
				if tvb:len() > off then
					add_addrs(t, tvb, off, alen)
				else
					t:add(tvb(MRC_HDR_LEN, MRC_HS_LEN),
						"Address list cut by the capture"):set_generated()
				end
				pinfo.cols.info:append(string.format(" Addrs=%d",
					(alen - MRC_ADDR_LIST_LEN) / MRC_WIRE_ADDR_LEN))
			end
			t:set_len(math.min(tvb:len(), MRC_HDR_LEN + payload_len))
			return
		end
	elseif sackx or dsack then
		if not ack_payload_ok then
			li:add_proto_expert_info(e.sackx)
		else
			if dsack and tvb:len() >= MRC_HDR_LEN + plen then
				local off = MRC_HDR_LEN + sx_len
				local d = t:add(tvb(off, MRC_DSACK_LEN), "Duplicate's echo (DSACK)")
				d:add(f.dsack_tsval, tvb(off, 4))
				d:add(f.dsack_ev, tvb(off + 4, 2))
				pinfo.cols.info:append(string.format(" DSACK EV=%u", tvb(off + 4, 2):uint()))
			end
			t:set_len(MRC_HDR_LEN + payload_len)
			return
		end
	elseif ptype ~= T_DATA and type_names[ptype] then
		li:add_proto_expert_info(e.payload)
	end
	if tvb:len() > MRC_HDR_LEN then
		local n = tvb:len() - MRC_HDR_LEN
		if nburst > 1 then
			n = math.min(n, plen)
		end
		data_dissector:call(tvb(MRC_HDR_LEN, n):tvb(), pinfo, tree)
	end
end

function mrc.dissector(tvb, pinfo, tree)
	dissect(tvb, pinfo, tree)
	return tvb:len()
end

-- An MRC header on any UDP port: version, type, flags and priority valid and
-- len accounting for exactly the rest of the datagram.
local function heuristic(tvb, pinfo, tree)
	if tvb:len() < MRC_HDR_LEN then
		return false
	end
	local ptype = tvb(1, 1):uint()
	if tvb(0, 1):uint() ~= MRC_VERSION or not type_names[ptype] or
	   tvb(2, 1):uint() > MRC_F_ALL or tvb(3, 1):uint() > 7 then
		return false
	end
	local total = tvb:reported_length_remaining()
	if tvb(46, 2):uint() ~= total - MRC_HDR_LEN and
	   burst_count(ptype, tvb(46, 2):uint(), total) == 1 then
		return false
	end
	dissect(tvb, pinfo, tree)
	return true
end

local udp_port_table = DissectorTable.get("udp.port")
local registered_port = mrc.prefs.udp_port
udp_port_table:add(registered_port, mrc)
mrc:register_heuristic("udp", heuristic)

function mrc.prefs_changed()
	if registered_port ~= mrc.prefs.udp_port then
		udp_port_table:remove(registered_port, mrc)
		registered_port = mrc.prefs.udp_port
		udp_port_table:add(registered_port, mrc)
	end
end
