# SPDX-License-Identifier: GPL-2.0-only
"""The collective section of the bench report (tools/bench/guest_coll.sh's
raw results): table lines, bench.json entries and two plots."""
import os
import statistics

TRANSPORTS = ("mrc", "tcp", "mptcp")
MIB = 1 << 20


def _iterations(path):
    """(start ms, iteration ms) of every measured iteration of a run."""
    its = []
    if not os.path.exists(path):
        return its
    for line in open(path):
        if not line.startswith("iter="):
            continue
        kv = dict(f.split("=", 1) for f in line.split() if "=" in f)
        its.append((float(kv["t_ms"]), float(kv["ms"])))
    return its


def _pct(xs, p):
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-p / 100.0 * len(xs) // 1)) - 1))
    return xs[k]


def load(raw):
    """One dict a run of coll.tsv."""
    runs = []
    path = os.path.join(raw, "coll.tsv")
    if not os.path.exists(path):
        return runs
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8:
            continue
        sc, t, size, rep, rc, spine, fail, heal = f[:8]
        summ = dict(x.split("=", 1) for x in (f[8] if len(f) > 8 else "").split() if "=" in x)
        its = _iterations(os.path.join(raw, f"coll_{sc}_{t}_{size}_{rep}.txt"))
        # the figures of an impaired run count from the impairment on
        fail = int(fail)
        window = [ms for start, ms in its if fail < 0 or start + ms >= fail]
        dl = float(summ.get("deadline_ms", 0) or 0)
        runs.append({
            "scenario": sc, "transport": t, "bytes": int(size), "rep": int(rep), "rc": int(rc),
            "spine": int(spine), "fail_ms": fail, "heal_ms": int(heal),
            "iterations": its, "deadline_ms": dl,
            "p50_ms": _pct(window, 50) if window else None,
            "p99_ms": _pct(window, 99) if window else None,
            "max_ms": max(window) if window else None,
            "interruptions": sum(1 for _, ms in its if dl and ms > dl),
            # the deadline is 10x the clean median: also count the milder stalls
            "over_2x": sum(1 for _, ms in its if dl and ms > dl / 5),
            "failed": int(rc) == 2 or summ.get("failed", "0") != "0",
            "verified": summ.get("ok") == "1" and int(rc) == 0,
        })
    return runs


def section(raw, res, table, spread, fmt, ratio):
    runs = load(raw)
    if not runs:
        return runs

    def pick(sc, t, size=MIB):
        return [r for r in runs if r["scenario"] == sc and r["transport"] == t and r["bytes"] == size]

    def stat(sc, t, key, size=MIB):
        return spread([r[key] for r in pick(sc, t, size) if r[key] is not None])

    scen = []
    for r in runs:
        if r["scenario"] not in scen:
            scen.append(r["scenario"])
    out = {"runs": [{k: v for k, v in r.items() if k != "iterations"} for r in runs]}
    table.append("5. Collectives: ring all-reduce, 8 ranks on 4 leaves x 2 hosts, 4 spines; "
                 "mean [min..max] of the runs, ms")
    table.append(f"   {'scenario':15} {'transport':6} {'p50':>24} {'p99':>24} {'longest':>24}"
                 f" {'intr':>5} {'fail':>5} {'ok':>5}")
    for size in sorted({r["bytes"] for r in runs}):
        for sc in scen:
            for t in TRANSPORTS:
                rs = pick(sc, t, size)
                if not rs:
                    continue
                name = sc if size == MIB else f"{sc} {size // MIB}MiB"
                e = {k: stat(sc, t, k, size) for k in ("p50_ms", "p99_ms", "max_ms")}
                e["interruptions"] = sum(r["interruptions"] for r in rs)
                e["failed_steps"] = sum(r["failed"] for r in rs)
                e["verified_runs"] = sum(r["verified"] for r in rs)
                e["runs"] = len(rs)
                out.setdefault(name, {})[t] = e
                table.append(f"   {name:15} {t:6} {fmt(e['p50_ms']):>24} {fmt(e['p99_ms']):>24}"
                             f" {fmt(e['max_ms']):>24} {e['interruptions']:>5} {e['failed_steps']:>5}"
                             f" {e['verified_runs']:>2}/{e['runs']:<2}")

    def mean(sc, t, key, size=MIB):
        s = stat(sc, t, key, size)
        return s["mean"] if s else None

    goals = {
        "clean p50 MRC/TCP (goal <= 0.8)": ratio(mean("clean", "mrc", "p50_ms"), mean("clean", "tcp", "p50_ms")),
        "clean 16 MiB p50 MRC/TCP": ratio(mean("clean", "mrc", "p50_ms", 16 * MIB),
                                         mean("clean", "tcp", "p50_ms", 16 * MIB)),
        "1% loss p99 MRC/TCP (goal <= 0.2)": ratio(mean("loss", "mrc", "p99_ms"), mean("loss", "tcp", "p99_ms")),
        "blackhole longest MRC/TCP (goal <= 0.1)": ratio(mean("blackhole", "mrc", "max_ms"),
                                                        mean("blackhole", "tcp", "max_ms")),
        "flap longest MRC/TCP": ratio(mean("flap", "mrc", "max_ms"), mean("flap", "tcp", "max_ms")),
        "straggler p50 MRC/TCP": ratio(mean("straggler", "mrc", "p50_ms"), mean("straggler", "tcp", "p50_ms")),
        "contended p99 priority off/on (goal >= 2)": ratio(mean("contended", "mrc", "p99_ms"),
                                                          mean("contended-prio", "mrc", "p99_ms")),
    }
    failure = ("loss", "blackhole", "flap", "straggler")
    intr = {t: sum(r["interruptions"] for r in runs if r["transport"] == t and r["scenario"] in failure)
            for t in TRANSPORTS}
    goals["interruptions in failure scenarios, MRC / TCP / MPTCP"] = \
        f"{intr['mrc']} / {intr['tcp']} / {intr['mptcp']}"
    slow = {t: sum(r["over_2x"] for r in runs if r["transport"] == t and r["scenario"] in failure)
            for t in TRANSPORTS}
    goals["iterations over 2x the clean median in failure scenarios, MRC / TCP / MPTCP"] = \
        f"{slow['mrc']} / {slow['tcp']} / {slow['mptcp']}"
    if intr["tcp"]:
        goals["fewer interruptions than TCP (goal >= 90 %)"] = f"{100 * (1 - intr['mrc'] / intr['tcp']):.0f} %"
    goals["failed job steps, MRC, all scenarios (goal 0)"] = sum(
        r["failed"] for r in runs if r["transport"] == "mrc")
    out["goals"] = goals
    res["collectives"] = out
    for k, v in goals.items():
        if v is None:
            continue
        table.append(f"   {k}: " + (f"{v:.2f}x" if isinstance(v, float) else str(v)))
    table.append("")
    return runs


def plots(runs, out, plt, colors):
    if not runs:
        return
    bh = [r for r in runs if r["scenario"] == "blackhole" and r["bytes"] == MIB]
    if not bh:
        return
    fig, axs = plt.subplots(1, 2, figsize=(12, 4))
    ax = axs[0]
    for t in TRANSPORTS:
        rs = [r for r in bh if r["transport"] == t]
        if not rs:
            continue
        r = rs[0]
        # time from the failure: each run failed its own busiest spine at its own moment
        xs = [(s + ms - r["fail_ms"]) / 1000 for s, ms in r["iterations"]]
        longest = max((ms for _, ms in r["iterations"]), default=0)
        ax.plot(xs, [ms for _, ms in r["iterations"]], ".-", color=colors[t], lw=0.8, ms=3,
                label=f"{t.upper()} (longest {longest:.0f} ms)")
    span = [r["heal_ms"] - r["fail_ms"] for r in bh if r["heal_ms"] > 0]
    if span:
        ax.axvspan(0, statistics.mean(span) / 1000, color="grey", alpha=0.2,
                   label="the busiest spine blackholed")
    ax.set_yscale("log")
    ax.set_xlabel("seconds from the failure (iteration end)")
    ax.set_ylabel("iteration time, ms")
    ax.set_title("1 MiB all-reduce, 8 ranks: a spine dies for 3 s (first run)", fontsize=9)
    ax.legend(fontsize=7)
    ax = axs[1]
    for t in TRANSPORTS:
        s = sorted(ms for r in bh if r["transport"] == t for _, ms in r["iterations"])
        if s:
            ax.plot(s, [(i + 1) / len(s) for i in range(len(s))], color=colors[t], label=t.upper())
    ax.set_xscale("log")
    ax.set_xlabel("iteration time, ms")
    ax.set_ylabel("fraction of iterations (CDF)")
    ax.set_title("the same, every run: iteration time CDF", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "collectives.png"), dpi=100)

