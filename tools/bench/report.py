#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turns the raw results of tools/bench/guest.sh into bench.json, table.txt
and PNG plots.  Usage: report.py RAWDIR OUTDIR"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_coll  # noqa: E402
import report_planes  # noqa: E402

raw, out = sys.argv[1], sys.argv[2]


def rows(name):
    path = os.path.join(raw, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"mean": statistics.mean(xs), "min": min(xs), "max": max(xs),
            "stdev": statistics.stdev(xs) if len(xs) > 1 else 0.0, "runs": xs}


def fmt(s, unit="", prec=1):
    if not s:
        return "-"
    return f"{s['mean']:.{prec}f}{unit} [{s['min']:.{prec}f}..{s['max']:.{prec}f}]"


def pct(xs, p):
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p / 100.0 * len(xs) // 1)) - 1))
    return xs[k]


def ratio(a, b):
    return a / b if a and b else None


meta = {}
for line in open(os.path.join(raw, "meta.txt")):
    k, _, v = line.strip().partition(" ")
    meta.setdefault(k, []).append(v)
rate = float(meta["rate_mbit"][0])
spines = int(meta["spines"][0])
reps = int(meta["reps"][0])
cap = rate * spines
res = {"meta": {k: (v[0] if len(v) == 1 else v) for k, v in meta.items()}}
table = []

# ---- aggregation
agg = {}
for p, rep, mbps, secs, ok, nbytes, used in rows("agg.tsv"):
    sb = [int(x) for x in used.split()]
    tot = sum(sb) or 1
    d = agg.setdefault(p, {"mbps": [], "ok": [], "spines_used": []})
    d["mbps"].append(float(mbps))
    d["ok"].append(ok == "1")
    d["spines_used"].append(sum(1 for x in sb if x > 0.05 * tot))
if agg:
    res["aggregation"] = {"capacity_mbit": cap}
    table.append(f"1. Aggregation: one connection over {spines} spines x {rate:g} Mbit/s"
                 f" (capacity {cap:g} Mbit/s); mean [min..max] of {reps} runs")
    table.append(f"   {'':6} {'goodput Mbit/s':>26} {'of capacity':>26} {'spines used':>12}")
    for p in ("mrc", "tcp", "mptcp"):
        if p not in agg:
            continue
        d = agg[p]
        g = spread(d["mbps"])
        fr = spread([x / cap for x in d["mbps"]])
        res["aggregation"][p] = {"goodput_mbit": g, "fraction_of_capacity": fr,
                                 "spines_used": d["spines_used"], "all_verified": all(d["ok"])}
        table.append(f"   {p:6} {fmt(g):>26} {fmt({k: (v * 100 if k != 'runs' else v) for k, v in fr.items()}, '%', 0):>26}"
                     f" {','.join(map(str, d['spines_used'])):>12}")
    r = {f"mrc/{q}": ratio(agg["mrc"] and statistics.mean(agg["mrc"]["mbps"]),
                           q in agg and statistics.mean(agg[q]["mbps"])) for q in ("tcp", "mptcp")}
    res["aggregation"]["ratios"] = r
    table.append("   ratios: " + ", ".join(f"{k} = {v:.2f}x" for k, v in r.items() if v))
    table.append("")

# ---- failover
fo = {}
for p, rep, dead, tf0, tf, th0, th, gap, mbps, ok in rows("fo.tsv"):
    ticks, gaps = [], []
    with open(os.path.join(raw, f"fo_{p}_{rep}.rx")) as f:
        for line in f:
            if line.startswith("tick") or line.startswith("gap "):
                a = dict(x.split("=") for x in line.split()[1:])
                if line.startswith("tick"):
                    ticks.append((float(a["t_ms"]), int(a["bytes"])))
                else:
                    gaps.append((float(a["at_ms"]), float(a["ms"])))
    tf, th = int(tf), int(th)
    end = ticks[-1][0] if ticks else 0

    def longest(windows, inside):
        """The longest stall (receiver's -g lines) that overlaps one of the
        windows (inside) or none of them; 0: none of FO_GAP_MS or more."""
        if not gaps:
            return None
        return max([ms for at, ms in gaps
                    if any(at < hi and at + ms > lo for lo, hi in windows) == inside] + [0.0])
    # the failure's own gap: a stall in the second after the blackhole; the
    # heal's second aside, every other stall is the shaped spines' own
    fail_w, heal_w = (int(tf0), tf + 1000), (int(th0), th + 1000)

    def gput(lo, hi):
        b = sum(by for t, by in ticks if lo < t <= hi)
        return b * 8 / (hi - lo) / 1000 if hi > lo else None
    d = fo.setdefault(p, [])
    d.append({"rep": int(rep), "dead_spine": int(dead), "fail_ms": [int(tf0), tf],
              "heal_ms": [int(th0), th], "max_gap_ms": float(gap or 0), "mbps": float(mbps or 0),
              "ok": ok == "1", "before_mbit": gput(0, int(tf0)), "during_mbit": gput(tf, int(th0)),
              "after_mbit": gput(th, end), "ticks_10ms": ticks,
              "failure_gap_ms": longest([fail_w], True),
              "other_gap_ms": longest([fail_w, heal_w], False)})
if fo:
    res["failover"] = {p: [{k: v for k, v in r.items()} for r in d] for p, d in fo.items()}
    table.append(f"2. Failover: {spines} x {rate:g} Mbit/s, the busiest spine blackholed, then healed"
                 f" (10 ms ticks); mean [min..max] of {reps} runs")
    table.append(f"   {'':6} {'longest gap ms':>24} {'before Mbit/s':>20} {'during':>20} {'after':>20}")
    for p in ("mrc", "tcp", "mptcp"):
        if p not in fo:
            continue
        d = fo[p]
        table.append(f"   {p:6} {fmt(spread([r['max_gap_ms'] for r in d]), '', 0):>24}"
                     f" {fmt(spread([r['before_mbit'] for r in d])):>20}"
                     f" {fmt(spread([r['during_mbit'] for r in d])):>20}"
                     f" {fmt(spread([r['after_mbit'] for r in d])):>20}")
    table.append("   the longest gap split: in the second after the blackhole, and away from it"
                 " and from the heal's")
    table.append(f"   {'':6} {'at the failure ms':>24} {'elsewhere ms':>20}")
    for p in ("mrc", "tcp", "mptcp"):
        if p in fo:
            table.append(f"   {p:6} {fmt(spread([r['failure_gap_ms'] for r in fo[p]]), '', 0):>24}"
                         f" {fmt(spread([r['other_gap_ms'] for r in fo[p]]), '', 0):>20}")
    gm = {p: statistics.mean(r["max_gap_ms"] for r in fo[p]) for p in fo}
    r = {f"{q}/mrc longest gap": ratio(gm.get(q), gm.get("mrc")) for q in ("tcp", "mptcp")}
    res["failover_ratios"] = r
    table.append("   ratios: " + ", ".join(f"{k} = {v:.1f}x" for k, v in r.items() if v))
    table.append("")

# ---- tail latency
rr = {}
for v, size, rep, line in rows("rr.tsv"):
    a = dict(x.split("=") for x in line.split()[1:] if "=" in x)
    rr.setdefault((v, int(size)), []).append(a)
if rr:
    res["tail_latency"] = {}
    rr_loss = meta.get("rr_loss", ["1%"])[0]
    rr_fabric = "every spine clean" if rr_loss == "0" else f"spine 1 at {rr_loss} loss"
    table.append(f"3. Request/response, {rr_fabric}: latency in ms, pooled over"
                 f" {reps} runs (per-run p99 [min..max])")
    table.append(f"   {'':10} {'size':>6} {'samples':>8} {'p50':>8} {'p99':>8} {'p99.9':>8} {'per-run p99':>20}")
    pooled = {}
    for (v, size) in sorted(rr, key=lambda k: (k[1], ["mrc", "tcp-lossy", "tcp-clean"].index(k[0]))):
        samples = []
        for f in sorted(glob.glob(os.path.join(raw, f"rr_{v}_{size}_*.txt"))):
            samples += [float(x) / 1000 for x in open(f) if x.strip()]
        if not samples:
            continue
        q = {"p50_ms": pct(samples, 50), "p99_ms": pct(samples, 99), "p999_ms": pct(samples, 99.9),
             "mean_ms": statistics.mean(samples), "samples": len(samples),
             "per_run_p99_ms": spread([float(a["p99_us"]) / 1000 for a in rr[(v, size)]]),
             "per_run_p50_ms": spread([float(a["p50_us"]) / 1000 for a in rr[(v, size)]])}
        pooled[(v, size)] = (q, samples)
        res["tail_latency"][f"{v}_{size}"] = q
        table.append(f"   {v:10} {size:>6} {len(samples):>8} {q['p50_ms']:8.2f} {q['p99_ms']:8.2f}"
                     f" {q['p999_ms']:8.2f} {fmt(q['per_run_p99_ms'], '', 2):>20}")
    r = {}
    for size in (1024, 65536):
        m = pooled.get(("mrc", size))
        for v in ("tcp-lossy", "tcp-clean"):
            t = pooled.get((v, size))
            if m and t:
                for k in ("p50_ms", "p99_ms", "p999_ms"):
                    r[f"{v}/mrc {size}B {k[:-3]}"] = ratio(t[0][k], m[0][k])
    res["tail_latency_ratios"] = r
    for size in (1024, 65536):
        items = [f"{k.split(' ')[0]} {k.split(' ')[2]} = {v:.2f}x" for k, v in r.items() if f" {size}B " in k and v]
        if items:
            table.append(f"   ratios {size}B: " + ", ".join(items))
    table.append("")

# ---- cost: four unshaped spines (4a), one unconstrained path (4)
def cost_section(name, title, protos):
    """Goodput and guest CPU per GB: over the whole run (the programs'
    start-up and the connection's set-up included: a fixed cost that weighs
    twice on MRC's half-size transfer), and over the data phase alone (the
    receiver's busy_ticks, first data to end of stream)."""
    cost = {}
    for p, rep, nbytes, secs, mbps, busy, wall, *data in rows(name + ".tsv"):
        d = cost.setdefault(p, {"mbps": [], "cpu_s_per_gb": [], "data_cpu_s_per_gb": []})
        d["mbps"].append(float(mbps))
        d["cpu_s_per_gb"].append(int(busy) / 100.0 / (int(nbytes) / 1e9))
        if data and data[0] not in ("", "-1"):
            d["data_cpu_s_per_gb"].append(int(data[0]) / 100.0 / (int(nbytes) / 1e9))
    if not cost:
        return cost
    res[name] = {p: {"goodput_mbit": spread(d["mbps"]), "cpu_s_per_gb": spread(d["cpu_s_per_gb"]),
                     "data_cpu_s_per_gb": spread(d["data_cpu_s_per_gb"])}
                 for p, d in cost.items()}
    table.append(f"{title}; mean [min..max] of {reps} runs")
    table.append(f"   {'':6} {'goodput Mbit/s':>26} {'guest CPU s per GB':>26} {'same, data phase':>26}")
    for p in protos:
        if p in cost:
            table.append(f"   {p:6} {fmt(res[name][p]['goodput_mbit']):>26} {fmt(res[name][p]['cpu_s_per_gb']):>26}"
                         f" {fmt(res[name][p]['data_cpu_s_per_gb']):>26}")
    r = {}
    for o in protos[1:]:
        if "mrc" in cost and o in cost:
            r[f"mrc/{o} goodput"] = ratio(statistics.mean(cost["mrc"]["mbps"]),
                                          statistics.mean(cost[o]["mbps"]))
            r[f"mrc/{o} cpu per GB"] = ratio(statistics.mean(cost["mrc"]["cpu_s_per_gb"]),
                                             statistics.mean(cost[o]["cpu_s_per_gb"]))
            if cost["mrc"]["data_cpu_s_per_gb"] and cost[o]["data_cpu_s_per_gb"]:
                r[f"mrc/{o} data-phase cpu per GB"] = ratio(
                    statistics.mean(cost["mrc"]["data_cpu_s_per_gb"]),
                    statistics.mean(cost[o]["data_cpu_s_per_gb"]))
    if r:
        res[name + "_ratios"] = r
        table.append("   ratios: " + ", ".join(f"{k} = {v:.2f}x" for k, v in r.items() if v))
    table.append("")
    return cost


cost_section("cost4", "4a. Four unshaped spines, one connection each", ("mrc", "tcp", "mptcp"))
cost = cost_section("cost", "4. Cost: one unconstrained path (traffic through spine 1 only)", ("mrc", "tcp"))

coll = report_coll.section(raw, res, table, spread, fmt, ratio)
planes = report_planes.section(raw, res, table, spread, fmt, ratio)
text = "\n".join(table)
with open(os.path.join(out, "table.txt"), "w") as f:
    f.write(text + "\n")
with open(os.path.join(out, "bench.json"), "w") as f:
    json.dump(res, f, indent=1)
print(text)

# ---- plots
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("report: no matplotlib (apt-get install python3-matplotlib): no plots")
    sys.exit(0)
colors = {"mrc": "tab:blue", "tcp": "tab:red", "mptcp": "tab:green",
          "tcp-lossy": "tab:red", "tcp-clean": "tab:orange"}

if agg:
    fig, ax = plt.subplots(figsize=(6, 4))
    ps = [p for p in ("mrc", "tcp", "mptcp") if p in agg]
    means = [statistics.mean(agg[p]["mbps"]) / cap * 100 for p in ps]
    for i, p in enumerate(ps):
        ax.bar(i, means[i], color=colors[p])
        ax.plot([i] * len(agg[p]["mbps"]), [x / cap * 100 for x in agg[p]["mbps"]], "k.")
    ax.set_xticks(range(len(ps)), [p.upper() for p in ps])
    ax.set_ylabel("goodput, % of summed spine capacity")
    ax.set_title(f"Aggregation: one connection, {spines} x {rate:g} Mbit/s")
    ax.set_ylim(0, 100)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "aggregation.png"), dpi=100)

if fo:
    ps = [p for p in ("mrc", "tcp", "mptcp") if p in fo]
    fig, axs = plt.subplots(len(ps), 1, figsize=(8, 2.3 * len(ps)), sharex=True)
    for ax, p in zip(axs, ps):
        r = fo[p][0]
        t = [x[0] / 1000 for x in r["ticks_10ms"]]
        mb = [x[1] * 8 / 10 / 1000 for x in r["ticks_10ms"]]
        # 100 ms moving average over the 10 ms ticks
        avg = [sum(mb[max(0, i - 9):i + 1]) / len(mb[max(0, i - 9):i + 1]) for i in range(len(mb))]
        ax.plot(t, mb, color=colors[p], alpha=0.25, lw=0.6, label="10 ms")
        ax.plot(t, avg, color=colors[p], lw=1.2, label="100 ms avg")
        ax.axvspan(r["fail_ms"][0] / 1000, r["heal_ms"][1] / 1000, color="grey", alpha=0.2,
                   label=f"spine {r['dead_spine']} blackholed")
        ax.set_ylabel("Mbit/s")
        ax.set_ylim(0, max(avg + [1]) * 1.4)
        ax.set_title(f"{p.upper()}: longest gap {r['max_gap_ms']:.0f} ms", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    axs[-1].set_xlabel("seconds")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "failover.png"), dpi=100)

if rr:
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for ax, size in zip(axs, (1024, 65536)):
        for v in ("mrc", "tcp-lossy", "tcp-clean"):
            if (v, size) not in pooled:
                continue
            s = sorted(pooled[(v, size)][1])
            n = len(s)
            ax.plot(s, [1 - i / n for i in range(n)], color=colors[v], label=v.upper())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(1e-3 / 2, 1)
        ax.set_xlabel("latency, ms")
        ax.set_ylabel("fraction slower (CCDF)")
        ax.set_title(f"{size // 1024} KiB request/response, {rr_fabric}", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "tail_latency.png"), dpi=100)

if cost:
    fig, axs = plt.subplots(1, 2, figsize=(8, 3.5))
    ps = [p for p in ("mrc", "tcp") if p in cost]
    for ax, key, lab in ((axs[0], "mbps", "goodput, Mbit/s"), (axs[1], "cpu_s_per_gb", "guest CPU s per GB")):
        for i, p in enumerate(ps):
            ax.bar(i, statistics.mean(cost[p][key]), color=colors[p])
            ax.plot([i] * len(cost[p][key]), cost[p][key], "k.")
        ax.set_xticks(range(len(ps)), [p.upper() for p in ps])
        ax.set_ylabel(lab)
    fig.suptitle("Cost: one unconstrained path", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cost.png"), dpi=100)
report_planes.plots(planes, out, plt, colors)
report_coll.plots(coll, out, plt, colors)
print(f"report: {out}/bench.json, table.txt, " +
      ", ".join(os.path.basename(p) for p in sorted(glob.glob(os.path.join(out, "*.png")))))
