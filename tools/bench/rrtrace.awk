# SPDX-License-Identifier: GPL-2.0-only
# The phases of 64 KiB request/response exchanges from the ftrace text that
# tools/bench/guest_rrtrace.sh records (kprobes on {mrc,tcp}_{send,recv}msg
# and their returns, net_dev_start_xmit of over 1000 bytes).  A half
# exchange: one side's sendmsg of a message until the other side has read
# 65536 bytes of it (mrc_rr's 4-byte length word not counted).  The first
# 2 * warm halves (mrc_rr's warm-up exchanges, the connection's start) are
# summed apart.  The phases, in us: sendmsg to the first data transmission
# on the sender's eth0; to its last one (the rest of the message: for MRC
# the first burst's trip, its receiver and the ACK run in the sending CPU's
# softirq before the next burst goes); from that to the last read's return.
# Only transmissions on eth0 in the sending task's own context count (what
# a push from an ACK in another task's softirq sends is not seen); a half
# without one is left out.
{
	pid = $1; sub(/.*-/, "", pid)
	t = $4; sub(/:$/, "", t); t += 0
	ev = $5
	if (ev == "mrc_sendmsg:" || ev == "tcp_sendmsg:") {
		p = substr(ev, 1, 3)
		if (!(p in start)) start[p] = t
		cur = pid; s0 = t; fx = 0; lx = 0; got = 0
		next
	}
	if (ev == "net_dev_start_xmit:" && $0 ~ / dev=eth0 / && pid == cur) {
		if (!fx) fx = t
		lx = t
		next
	}
	if ((ev == "mrc_recvmsg_r:" || ev == "tcp_recvmsg_r:") && pid != cur && s0) {
		r = $0; sub(/.*ret=/, "", r); r += 0
		if (r > 4) got += r
		if (got < 65536) next
		if (++halves[p] == 2 * warm) warm_ms[p] = (t - start[p]) * 1000
		if (halves[p] > 2 * warm && fx) {
			n[p]++
			a[p] += (fx - s0) * 1e6; b[p] += (lx - fx) * 1e6
			c[p] += (t - lx) * 1e6; w[p] += (t - s0) * 1e6
		}
		s0 = 0
	}
}
END {
	printf "%-4s %7s %10s %12s %12s %12s %9s %16s\n", "", "halves", "us: whole", "to 1st xmit",
	       "to last xmit", "to read", "", "first exchanges"
	for (p in n)
		printf "%-4s %7d %10.0f %12.0f %12.0f %12.0f %9s %12.1f ms\n", p, n[p], w[p] / n[p],
		       a[p] / n[p], b[p] / n[p], c[p] / n[p], "", warm_ms[p]
}
