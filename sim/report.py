#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/sim/*.json -> table.txt, summary.json and plots (matplotlib).

Usage: report.py DIR
"""
import glob
import json
import os
import statistics
import sys

# The kernel's figures on the same 4-spine fabric: the `make bench` of
# 2026-12-02 (means of 3 VM runs), as Documentation/networking/mrc-bench.rst
# recorded it at bc54af2; replaced by results/bench/bench.json when a newer
# run is there.
KERNEL_BENCH = {
    "agg_fraction": {"mrc": 0.70, "tcp": 0.24},
    "fo_gap_ms": {"mrc": 101, "tcp": 4472},
    "fo_before_mbit": {"mrc": 18.9, "tcp": 7.7},
    "fo_during_mbit": {"mrc": 14.7, "tcp": 0.0},
    "fo_after_mbit": {"mrc": 18.7, "tcp": 6.8},
    "source": "Documentation/networking/mrc-bench.rst (make bench, 3 runs, 2026-12-02)",
}
DEADLINE_FACTOR = 1.5	# a collective is late past 1.5x its transport's p99 without faults
INTERRUPTION_MS = 50	# a flow is interrupted by a delivery gap this long (or never finishing)
TRANSPORTS = ("mrc", "mrc1", "tcp")
LABEL = {"mrc": "MRC (64 EVs)", "mrc1": "per-flow MRC (1 EV)", "tcp": "ns-3 TCP (DCTCP)"}


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def load(d):
    runs = {}
    for fn in sorted(glob.glob(os.path.join(d, "*.json"))):
        if os.path.basename(fn) in ("summary.json",):
            continue
        with open(fn) as f:
            runs[os.path.basename(fn)[:-5]] = json.load(f)
    return runs


def flow_facts(r):
    fl = r["flows"]
    inf = float("inf")
    # a flow is done when all written bytes arrived (a persistent
    # connection's done_us is when it last caught up)
    fct = [(f[3] - f[2]) / 1000 if f[3] >= 0 and f[5] >= f[4] else inf for f in fl]
    coll = [(c[1] - c[0]) / 1000 if c[1] >= 0 else inf for c in r["collectives"]]
    interrupted = sum(1 for f in fl if f[3] < 0 or f[5] < f[4] or f[6] >= INTERRUPTION_MS * 1000)
    return fct, coll, interrupted


def fmt(x, p=2):
    if x is None:
        return "-"
    if x == float("inf"):
        return "never"
    return f"{x:.{p}f}"


def kernel_bench(repo):
    k = dict(KERNEL_BENCH)
    fn = os.path.join(repo, "results", "bench", "bench.json")
    try:
        with open(fn) as f:
            b = json.load(f)
        k["agg_fraction"] = {p: b["aggregation"][p]["fraction_of_capacity"]["mean"]
                             for p in ("mrc", "tcp")}
        fo = b["failover"]
        k["fo_gap_ms"] = {p: statistics.mean(x["max_gap_ms"] for x in fo[p]) for p in ("mrc", "tcp")}
        for w in ("before", "during", "after"):
            k[f"fo_{w}_mbit"] = {p: statistics.mean(x[f"{w}_mbit"] or 0 for x in fo[p])
                                 for p in ("mrc", "tcp")}
        k["source"] = fn
    except (OSError, KeyError, ValueError, TypeError):
        pass
    return k


def calibration(runs, repo, table, summary):
    k = kernel_bench(repo)
    model = {}
    for t in ("mrc", "tcp"):
        agg = [r for n, r in runs.items() if n.startswith(f"calib-agg-{t}-")]
        fo = [r for n, r in runs.items() if n.startswith(f"calib-fo-{t}-")]
        if not agg or not fo:
            continue
        cap = agg[0]["spines"] * agg[0]["spine_gbps"] * 1e3	# Mbit/s
        frac = statistics.mean(r["delivered_bytes"] * 8 / r["sim_end_us"] / cap for r in agg)
        gaps, before, during, after = [], [], [], []
        for r in fo:
            tick = r["tick_us"] / 1000
            ticks = r["ticks_bytes"]
            fail, heal = r["fault_at_us"] / 1000, r["fault_end_us"] / 1000
            end = r["sim_end_us"] / 1000

            def gput(lo, hi):
                b = sum(by for i, by in enumerate(ticks) if lo < (i + 1) * tick <= hi)
                return b * 8 / (hi - lo) / 1000
            gaps.append(r["flows"][0][6] / 1000)
            before.append(gput(0, fail))
            during.append(gput(fail, heal))
            after.append(gput(heal, end))
        model[t] = {"agg_fraction": frac, "fo_gap_ms": statistics.mean(gaps),
                    "fo_before_mbit": statistics.mean(before),
                    "fo_during_mbit": statistics.mean(during),
                    "fo_after_mbit": statistics.mean(after), "runs": len(fo)}
    if not model:
        return
    table.append("Calibration: the kernel bench's 4-spine fabric (2 hosts, 4 x 8 Mbit/s), model vs kernel VM")
    table.append(f"  kernel figures: {k['source']}")
    table.append(f"  {'figure':38} {'model':>10} {'kernel':>10} {'model/kernel':>13}")
    rows = []
    for t in model:
        for key, label, scale in (("agg_fraction", "aggregation: share of capacity", 100),
                                  ("fo_gap_ms", "failover: longest gap ms", 1),
                                  ("fo_before_mbit", "failover: before Mbit/s", 1),
                                  ("fo_during_mbit", "failover: during Mbit/s", 1),
                                  ("fo_after_mbit", "failover: after Mbit/s", 1)):
            m, kv = model[t][key], k[key][t]
            ratio = m / kv if kv else None
            rows.append({"transport": t, "figure": key, "model": m, "kernel": kv, "ratio": ratio})
            unit = "%" if scale == 100 else ""
            table.append(f"  {t + ' ' + label:38} {m * scale:>9.1f}{unit:1} {kv * scale:>9.1f}{unit:1}"
                         f" {fmt(ratio):>13}")
    table.append("")
    summary["calibration"] = {"model": model, "kernel": k, "rows": rows}


def main():
    d = sys.argv[1]
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    runs = load(d)
    table, summary = [], {"runs": {}}
    scen = sorted({n.rsplit("-", 1)[0] for n in runs if not n.startswith("calib-")})
    base_p99 = {}
    for n, r in runs.items():
        if n.startswith("calib-"):
            continue
        fct, coll, interrupted = flow_facts(r)
        s = {"hosts": r["hosts"], "wall_s": r["wall_s"], "sim_ms": r["sim_end_us"] / 1000,
             "util_all_active": r["uplink_util_all_active"],
             "fct_p50_ms": pct(fct, .5), "fct_p99_ms": pct(fct, .99),
             "coll_p50_ms": pct(coll, .5), "coll_p99_ms": pct(coll, .99),
             "coll_max_ms": max(coll) if coll else None, "collectives": len(coll),
             "flows": len(fct), "incomplete": sum(1 for x in fct if x == float("inf")),
             "interrupted": interrupted, "retransmits": r["retransmits"], "rtos": r["rtos"],
             "ev_retired": r["ev_retired"], "queue_drops": r["fabric_queue_drops"],
             "fault_drops": r["fault_drops"], "spine_bytes": r["spine_bytes"]}
        summary["runs"][n] = s
        if r["workload"] == "allreduce" and r["fault"] == "none":
            base_p99[r["transport"]] = s["coll_p99_ms"]
    for n, s in summary["runs"].items():
        r = runs[n]
        if r["workload"] == "allreduce" and r["transport"] in base_p99:
            dl = DEADLINE_FACTOR * base_p99[r["transport"]]
            _, coll, _ = flow_facts(r)
            s["deadline_ms"] = dl
            s["over_deadline"] = sum(1 for c in coll if c > dl)
    hosts = sorted({s["hosts"] for s in summary["runs"].values()})
    for h in hosts:
        table.append(f"{h} hosts: completion times in ms (flows: FCT; collectives: all-reduce rings"
                     f" of 8 / incasts of 15 -> 1), wall time of each run")
        table.append(f"  {'scenario':24} {'transport':22} {'wall s':>7} {'util':>5} {'FCT p50':>8}"
                     f" {'p99':>8} {'coll p50':>8} {'p99':>8} {'max':>8} {'late':>6} {'intr':>5}"
                     f" {'retx':>7} {'RTOs':>5} {'EVs ret':>7}")
        for sc in scen:
            for t in TRANSPORTS:
                n = f"{sc}-{t}"
                s = summary["runs"].get(n)
                if not s or s["hosts"] != h:
                    continue
                late = f"{s['over_deadline']}/{s['collectives']}" if "over_deadline" in s else "-"
                table.append(f"  {sc:24} {LABEL[t]:22} {s['wall_s']:7.1f} {s['util_all_active']:5.2f}"
                             f" {fmt(s['fct_p50_ms']):>8} {fmt(s['fct_p99_ms']):>8}"
                             f" {fmt(s['coll_p50_ms']):>8} {fmt(s['coll_p99_ms']):>8}"
                             f" {fmt(s['coll_max_ms']):>8} {late:>6} {s['interrupted']:5d}"
                             f" {s['retransmits']:7d} {s['rtos']:5d} {s['ev_retired']:7d}")
        table.append(f"  util: mean leaf->spine utilisation while every flow is active;"
                     f" late: collectives over {DEADLINE_FACTOR}x their transport's fault-free p99;"
                     f" intr: flows with a delivery gap >= {INTERRUPTION_MS} ms or never finished")
        table.append("")
    # headline figures against the goals
    g = {}
    R = summary["runs"]
    if "permutation-mrc" in R and "permutation-tcp" in R:
        g["permutation_util_mrc"] = R["permutation-mrc"]["util_all_active"]
        g["permutation_util_tcp"] = R["permutation-tcp"]["util_all_active"]
        g["permutation_util_mrc_over_tcp"] = g["permutation_util_mrc"] / g["permutation_util_tcp"]
    if "allreduce-mrc" in R and "allreduce-tcp" in R:
        g["allreduce_p99_mrc_over_tcp"] = R["allreduce-mrc"]["coll_p99_ms"] / R["allreduce-tcp"]["coll_p99_ms"]
        g["allreduce_p50_mrc_over_tcp"] = R["allreduce-mrc"]["coll_p50_ms"] / R["allreduce-tcp"]["coll_p50_ms"]
    for f in ("down", "flap", "loss"):
        a, b = R.get(f"allreduce-{f}-mrc"), R.get(f"allreduce-{f}-tcp")
        if a and b and "over_deadline" in a and "over_deadline" in b:
            g[f"{f}_late_mrc"], g[f"{f}_late_tcp"] = a["over_deadline"], b["over_deadline"]
            g[f"{f}_late_fewer"] = (1 - a["over_deadline"] / b["over_deadline"]
                                    if b["over_deadline"] else None)
            g[f"{f}_interrupted_mrc"], g[f"{f}_interrupted_tcp"] = a["interrupted"], b["interrupted"]
    if g:
        table.append("Headline figures (goals of issue 16):")
        for key, v in g.items():
            table.append(f"  {key:36} {fmt(v, 3) if isinstance(v, float) else v}")
        table.append("")
    summary["headline"] = g
    calibration(runs, repo, table, summary)
    with open(os.path.join(d, "table.txt"), "w") as f:
        f.write("\n".join(table) + "\n")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print("\n".join(table))
    plots(runs, d)


def plots(runs, d):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        print("report: no matplotlib, no plots", file=sys.stderr)
        return
    # completion-time CDFs
    panels = [("permutation", "flows", "permutation: flow completion"),
              ("allreduce", "coll", "all-reduce: collective completion"),
              ("allreduce-down", "coll", "all-reduce, a spine-leaf link down"),
              ("allreduce-flap", "coll", "all-reduce, a flapping link"),
              ("allreduce-loss", "coll", "all-reduce, a spine at 1 % loss"),
              ("incast", "coll", "incast 15 -> 1"), ("mix", "coll", "all-reduce beside bulk")]
    panels = [p for p in panels if any(f"{p[0]}-{t}" in runs for t in TRANSPORTS)]
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4), squeeze=False)
        for ax, (sc, what, title) in zip(axes[0], panels):
            for t in TRANSPORTS:
                r = runs.get(f"{sc}-{t}")
                if not r:
                    continue
                fct, coll, _ = flow_facts(r)
                xs = sorted(fct if what == "flows" else coll)
                n = len(xs)
                fin = [x for x in xs if x != float("inf")]
                ax.step(fin, [(i + 1) / n for i in range(len(fin))], where="post", label=LABEL[t])
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("completion ms")
            ax.set_ylim(0, 1.01)
            ax.grid(alpha=.3)
        axes[0][0].set_ylabel("CDF")
        axes[0][0].legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(d, "completion_cdf.png"), dpi=110)
        plt.close(fig)
    # leaf->spine utilisation heatmaps over time
    for sc in ("allreduce-down", "permutation"):
        rs = [(t, runs[f"{sc}-{t}"]) for t in TRANSPORTS if f"{sc}-{t}" in runs]
        if not rs:
            continue
        fig, axes = plt.subplots(1, len(rs), figsize=(5 * len(rs), 4.5), squeeze=False,
                                 constrained_layout=True)
        for i, (ax, (t, r)) in enumerate(zip(axes[0], rs)):
            m = np.array(r["uplink_util_bins"], dtype=float)
            binms = r["bin_us"] / 1000
            im = ax.imshow(m, aspect="auto", interpolation="nearest", vmin=0, vmax=1, cmap="viridis",
                           extent=[0, m.shape[1] * binms, m.shape[0], 0])
            ax.set_title(f"{sc}: {LABEL[t]}", fontsize=9)
            ax.set_xlabel("ms")
            if i == 0:
                ax.set_ylabel(f"leaf->spine link (leaf x {r['spines']} + spine)")
        fig.colorbar(im, ax=axes[0].tolist(), label="utilisation")
        fig.savefig(os.path.join(d, f"heatmap_{sc}.png"), dpi=110)
        plt.close(fig)
    # calibration failover goodput
    fo = [(n, r) for n, r in sorted(runs.items()) if n.startswith("calib-fo-") and n.endswith("-1")]
    if fo:
        fig, ax = plt.subplots(figsize=(8, 3.2))
        for n, r in fo:
            tick = r["tick_us"] / 1000
            ax.plot([i * tick / 1000 for i in range(len(r["ticks_bytes"]))],
                    [b * 8 / tick / 1000 for b in r["ticks_bytes"]], lw=.7, label=r["transport"])
        ax.axvspan(fo[0][1]["fault_at_us"] / 1e6, fo[0][1]["fault_end_us"] / 1e6, color="red", alpha=.1)
        ax.set_xlabel("s")
        ax.set_ylabel("Mbit/s per 10 ms")
        ax.set_title("model on the kernel bench's fabric: busiest spine blackholed 3-7 s", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(d, "calibration_failover.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
