#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Lines up failover-trace.sh's tracepoints with the receiver's goodput.

For each run: the failure and heal times, then one line per 100 ms tick
from a second before the failure to 1.5 s after the heal: KiB delivered,
and the events in that tick (losses by rule, EVs retired by path,
re-admissions, window cuts with the new cwnd).  F marks the ticks while tc
applied the failure, H the heal.
"""
import collections
import glob
import re
import sys

FAIL = re.compile(r"blackholed at ([\d.]+)-([\d.]+) s, healed at ([\d.]+)-([\d.]+) s "
                  r"\(of the receiver's clock from ([\d.]+)\)")


def events(path):
    """(seconds of the wall clock, tracepoint, its text) of a trace file."""
    sync = None
    out = []
    for line in open(path):
        m = re.search(r"\s([\d.]+): (\w+): (.*)", line)
        if not m or line.startswith("#"):
            continue
        ts, name, rest = float(m.group(1)), m.group(2), m.group(3)
        if name == "tracing_mark_write" and rest.startswith("SYNC "):
            sync = (ts, float(rest.split()[1]))
        elif sync:
            out.append((sync[1] + ts - sync[0], name, rest))
    return out


def key(name, rest):
    if name == "mrc_loss":
        return "loss:" + rest.split("rule=")[1]
    if name == "mrc_ev_retire":
        return "retire/p" + re.search(r"path=(\d+)", rest).group(1)
    if name == "mrc_ev_readmit":
        return "readmit"
    if name == "mrc_cwnd":
        return "cw:" + rest.split("reason=")[1]
    return name


def run(mp):
    n = mp.rsplit(".", 1)[1]
    text = open(mp).read()
    m = FAIL.search(text)
    if not m:
        print("run", n, "has no failover line")
        return
    tb0, tb1, th0, th1, z = map(float, m.groups())
    ticks = [int(x) for x in re.search(r"delivered per 100 ms: ([\d ]+)KiB", text).group(1).split()]
    print("=== run %s: failure %.2f-%.2f s, heal %.2f-%.2f s" % (n, tb0, tb1, th0, th1))
    print("   ", re.search(r"goodput per 100 ms.*", text).group(0))
    bins = collections.defaultdict(collections.Counter)
    cwnd = collections.defaultdict(list)
    for t, name, rest in events(mp.replace("/mp.", "/trace.")):
        b = int((t - z) * 10)
        bins[b][key(name, rest)] += 1
        if name == "mrc_cwnd":
            cwnd[b].append(re.search(r"cwnd=(\d+)", rest).group(1))
    for b in range(max(int(tb0 * 10) - 10, 0), min(int(th1 * 10) + 15, len(ticks))):
        mark = "F" if int(tb0 * 10) <= b <= int(tb1 * 10) else \
               "H" if int(th0 * 10) <= b <= int(th1 * 10) else " "
        ev = " ".join("%s=%d" % kv for kv in sorted(bins[b].items()))
        cw = " cwnd=" + ",".join(cwnd[b]) if cwnd[b] else ""
        print("%5.1f %s %5d  %s%s" % (b / 10, mark, ticks[b], ev, cw))


if __name__ == "__main__":
    for f in sorted(glob.glob(sys.argv[1] + "/mp.*")):
        run(f)
