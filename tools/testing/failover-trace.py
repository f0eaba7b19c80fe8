#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Lines up failover-trace.sh's tracepoints with the receiver's goodput.

For each run: the failure and heal times, then one line per 100 ms tick
from a second before the failure to 1.5 s after the heal: KiB delivered,
and the events in that tick (losses by rule, EVs retired by path,
re-admissions, window cuts with the new cwnd).  F marks the ticks while tc
applied the failure, H the heal.  With --perf (runs of PROBE_PERF=1):
for each phase, the processes and functions the guest's CPU ran.
"""
import collections
import glob
import gzip
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


def failover(mp):
    """A run's number, its output, (failure and heal times, clock origin) and
    ticks, or None when it has no failover line."""
    n = mp.rsplit(".", 1)[1]
    text = open(mp).read()
    m = FAIL.search(text)
    if not m:
        print("run", n, "has no failover line")
        return None
    ticks = [int(x) for x in re.search(r"delivered per 100 ms: ([\d ]+)KiB", text).group(1).split()]
    return n, text, tuple(map(float, m.groups())), ticks


def run(mp):
    f = failover(mp)
    if not f:
        return
    n, text, (tb0, tb1, th0, th1, z), ticks = f
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


PERF = re.compile(r"\s*(.+?)\s+\[\d+\]\s+([\d.]+):\s+[0-9a-f]+\s+(\S+)")


def profile(mp, top=12):
    """Where the guest's CPU went in each phase of a run (perf.N.gz)."""
    f = failover(mp)
    if not f:
        return
    n, text, (tb0, tb1, th0, th1, z), ticks = f
    phases = [("before", 1.5, tb0), ("failure (tc)", tb0, tb1), ("first second", tb1, tb1 + 1),
              ("later", tb1 + 1.5, th0), ("heal (tc)", th0, th1), ("after", th1 + 1, th1 + 4)]
    comm = [collections.Counter() for _ in phases]
    sym = [collections.Counter() for _ in phases]
    with gzip.open(mp.replace("/mp.", "/perf.") + ".gz", "rt") as f:
        for line in f:
            s = PERF.match(line)
            if not s:
                continue
            t = float(s.group(2)) - z
            for i, (_, lo, hi) in enumerate(phases):
                if lo <= t < hi:
                    comm[i][s.group(1)] += 1
                    sym[i][s.group(3)] += 1
    print("=== run %s: failure %.2f-%.2f s, heal %.2f-%.2f s" % (n, tb0, tb1, th0, th1))
    for i, (name, lo, hi) in enumerate(phases):
        total = sum(comm[i].values()) or 1
        k = ticks[int(lo * 10):int(hi * 10)]
        print("-- %s, %.2f-%.2f s: %d KiB per tick, %d samples" %
              (name, lo, hi, sum(k) / max(len(k), 1), total))
        print("   processes:", ", ".join("%s %d%%" % (c, v * 100 // total)
                                         for c, v in comm[i].most_common(6)))
        for name_, v in sym[i].most_common(top):
            print("   %5.1f%% %s" % (v * 100 / total, name_))


if __name__ == "__main__":
    perf = "--perf" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--perf"]
    for f in sorted(glob.glob(args[0] + "/mp.*")):
        profile(f) if perf else run(f)
