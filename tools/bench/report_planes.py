# SPDX-License-Identifier: GPL-2.0-only
"""The planes section of the bench report (tools/bench/guest_planes.sh's raw
results): table lines, the issue's goals, bench.json entries and a plot."""
import os

TRANSPORTS = ("mrc", "mptcp", "tcp")
SCENARIOS = {"nic": "a's plane-1 NIC down", "leaf": "plane 1's leaf blackholed"}
NIC_GOAL_MS = 5.0       # MRC's longest gap after a local NIC failure
LEAF_GOAL_RTTS = 3.0    # ... after a silent leaf failure, in loaded RTTs
GAP_FLOOR_MS = 5.0      # the receiver reports gaps of at least this (mrc_xfer -g)


def _ticks(path):
    """(t_ms, bytes) of every 10 ms tick of a receiver."""
    ticks = []
    if not os.path.exists(path):
        return ticks
    for line in open(path):
        if line.startswith("tick"):
            a = dict(x.split("=") for x in line.split()[1:])
            ticks.append((float(a["t_ms"]), int(a["bytes"])))
    return ticks


def _gaps(path):
    """(end ms, gap ms) of every delivery gap the receiver reported (mrc_xfer
    -g: "gap at_ms=START ms=G"; an earlier -G printed end_ms=END)."""
    gaps = []
    if not os.path.exists(path):
        return gaps
    for line in open(path):
        if line.startswith("gap "):
            a = dict(x.split("=") for x in line.split()[1:])
            g = float(a["ms"])
            gaps.append((float(a["end_ms"]) if "end_ms" in a else float(a["at_ms"]) + g, g))
    return gaps


def _mbit(ticks, lo, hi):
    """Goodput (Mbit/s) of the ticks that end in (lo, hi]."""
    if hi <= lo:
        return None
    return sum(b for t, b in ticks if lo < t <= hi) * 8 / (hi - lo) / 1000


def load(raw, fail=3, heal=6):
    """One dict a run of planes.tsv (failure at FAIL s, undone at HEAL s)."""
    runs = []
    path = os.path.join(raw, "planes.tsv")
    if not os.path.exists(path):
        return runs
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 15:
            continue
        sc, t, rep, tf0, tf1, th0, th1, gap, mbps, ok, nbytes, rtt, paths, pre, dur = f[:15]
        tf0, tf1, th0, th1 = int(tf0), int(tf1), int(th0), int(th1)
        ticks = _ticks(os.path.join(raw, f"planes_{sc}_{t}_{rep}.rx"))
        pre = [int(x) for x in pre.split()]
        dur = [int(x) for x in dur.split()]
        gaps = _gaps(os.path.join(raw, f"planes_{sc}_{t}_{rep}.rx"))
        # the failure's gap: the longest that overlaps [failure, undone);
        # the undoing's: the longest that starts in [undone, undone + 1 s]
        # (EVs re-admitted); under TCG the guest also stalls on its own, so
        # the longest gap before the failure is the noise floor to read them
        # against.  No gap reported there (-g 5): at most 5 ms.
        fail_gap = max([g for e, g in gaps if e > tf0 and e - g < th0] or [GAP_FLOOR_MS])
        undo_gap = max([g for e, g in gaps if th0 <= e - g < th1 + 1000] or [GAP_FLOOR_MS])
        base_gap = max([g for e, g in gaps if e <= tf0] or [GAP_FLOOR_MS])
        before = _mbit(ticks, max(0, tf0 - 2000), tf0)
        during = _mbit(ticks, tf1, th0)
        runs.append({
            "scenario": sc, "transport": t, "rep": int(rep),
            # how late the bench's own timer that undoes the failure woke:
            # the whole guest stalled that long (TCG on a shared host)
            "timer_late_ms": th0 - tf0 - (heal - fail) * 1000,
            "fail_ms": [tf0, tf1], "heal_ms": [th0, th1],
            "fail_gap_ms": fail_gap if gaps else float(gap or 0), "base_gap_ms": base_gap,
            "undo_gap_ms": undo_gap,
            "max_gap_ms": float(gap or 0), "mbps": float(mbps or 0), "ok": ok == "1",
            "bytes": int(nbytes or 0), "loaded_rtt_ms": float(rtt or 0), "paths": int(paths or 0),
            "plane_bytes_before": pre, "plane_bytes_during": dur,
            "plane1_share_before": pre[0] / sum(pre) if sum(pre) else None,
            "before_mbit": before, "during_mbit": during,
            "during_over_before": during / before if before and during is not None else None,
            "ticks_10ms": ticks,
        })
    return runs


def section(raw, res, table, spread, fmt, ratio):
    meta = {}
    for line in open(os.path.join(raw, "meta.txt")):
        k, _, v = line.strip().partition(" ")
        meta[k] = v
    runs = load(raw, int(meta.get("planes_fail", 3)), int(meta.get("planes_heal", 6)))
    if not runs:
        return runs
    sp = meta.get("planes_spines", "2")
    rate = meta.get("planes_rate_mbit", "?")
    hop = meta.get("planes_hop_ms", "?")
    ping = meta.get("planes_ping_ms", "")

    def pick(sc, t):
        return [r for r in runs if r["scenario"] == sc and r["transport"] == t]

    def stat(sc, t, key, scale=1.0):
        return spread([r[key] * scale for r in pick(sc, t) if r[key] is not None])

    out = {"runs": [{k: v for k, v in r.items() if k != "ticks_10ms"} for r in runs],
           "idle_ping_ms": ping}
    nreps = max(r["rep"] for r in runs)
    table.append(f"6. Planes: one connection over 2 planes x {sp} spines ({rate} Mbit/s, {hop} ms each way"
                 f" a spine link; idle ping {ping.replace(' ', ' / ')} ms); failure at"
                 f" {meta.get('planes_fail', '?')} s of {meta.get('planes_secs', '?')}, undone at"
                 f" {meta.get('planes_heal', '?')} s;"
                 f" mean [min..max] of {nreps} runs")
    table.append("   gap: the longest delivery gap while the failure lasts; undo: the longest that began"
                 " in the second after it was undone;")
    table.append("   before: the longest before the failure (emulator stalls); late: how late the timer"
                 " that undoes the failure woke (the guest stalled)")
    table.append(f"   {'scenario':9} {'transport':6} {'gap ms':>18} {'undo ms':>18} {'before ms':>16} {'during/before %':>18}"
                 f" {'plane 1 share %':>16} {'loaded RTT ms':>20} {'late ms':>18} {'subflows':>8} {'ok':>5}")
    for sc in SCENARIOS:
        for t in TRANSPORTS:
            rs = pick(sc, t)
            if not rs:
                continue
            e = {"fail_gap_ms": stat(sc, t, "fail_gap_ms"), "base_gap_ms": stat(sc, t, "base_gap_ms"),
                 "undo_gap_ms": stat(sc, t, "undo_gap_ms"),
                 "during_over_before": stat(sc, t, "during_over_before"),
                 "plane1_share_before": stat(sc, t, "plane1_share_before"),
                 "loaded_rtt_ms": stat(sc, t, "loaded_rtt_ms"), "timer_late_ms": stat(sc, t, "timer_late_ms"),
                 "paths": [r["paths"] for r in rs],
                 "verified_runs": sum(r["ok"] for r in rs), "runs": len(rs)}
            out.setdefault(sc, {})[t] = e
            pc = stat(sc, t, "during_over_before", 100)
            sh = stat(sc, t, "plane1_share_before", 100)
            table.append(f"   {sc:9} {t:6} {fmt(e['fail_gap_ms'], '', 0):>18} {fmt(e['undo_gap_ms'], '', 0):>18}"
                         f" {fmt(e['base_gap_ms'], '', 0):>16}"
                         f" {fmt(pc, '', 0):>18} {fmt(sh, '', 0):>16} {fmt(e['loaded_rtt_ms']):>20}"
                         f" {fmt(e['timer_late_ms'], '', 0):>18}"
                         f" {','.join(map(str, e['paths'])) if t != 'mrc' else '-':>8}"
                         f" {e['verified_runs']:>2}/{e['runs']}")

    def mean(sc, t, key):
        s = stat(sc, t, key)
        return s["mean"] if s else None

    ratios = {}
    for sc in SCENARIOS:
        for q in ("mptcp", "tcp"):
            ratios[f"{sc} gap MRC/{q.upper()}"] = ratio(mean(sc, "mrc", "fail_gap_ms"),
                                                        mean(sc, q, "fail_gap_ms"))
    out["ratios"] = ratios
    table.append("   ratios: " + ", ".join(f"{k} = {v:.3f}x" for k, v in ratios.items() if v))

    # goals: every run within (the mean beside it)
    goals = {}
    nic = pick("nic", "mrc")
    if nic:
        within = sum(r["fail_gap_ms"] <= NIC_GOAL_MS for r in nic)
        goals["nic"] = {"goal_ms": NIC_GOAL_MS, "runs_within": within, "runs": len(nic),
                        "met": within == len(nic)}
        g = stat("nic", "mptcp", "fail_gap_ms")
        table.append(f"   goal: MRC's longest gap after a local NIC failure <= {NIC_GOAL_MS:g} ms:"
                     f" {fmt(stat('nic', 'mrc', 'fail_gap_ms'), '', 1)} ms, {within}/{len(nic)} runs within:"
                     f" {'met' if within == len(nic) else 'not met'} (MPTCP {fmt(g, '', 0)} ms;"
                     f" MRC's stalls before it {fmt(stat('nic', 'mrc', 'base_gap_ms'), '', 0)} ms)")
    leaf = pick("leaf", "mrc")
    if leaf:
        within = sum(r["loaded_rtt_ms"] > 0 and r["fail_gap_ms"] <= LEAF_GOAL_RTTS * r["loaded_rtt_ms"]
                     for r in leaf)
        rtts = spread([r["fail_gap_ms"] / r["loaded_rtt_ms"] for r in leaf if r["loaded_rtt_ms"] > 0])
        goals["leaf"] = {"goal_rtts": LEAF_GOAL_RTTS, "gap_in_rtts": rtts, "runs_within": within,
                         "runs": len(leaf), "met": within == len(leaf)}
        g = stat("leaf", "mptcp", "fail_gap_ms")
        gr = spread([r["fail_gap_ms"] / m for r in pick("leaf", "mptcp")
                     for m in [mean("leaf", "mrc", "loaded_rtt_ms")] if m])
        table.append(f"   goal: MRC's longest gap after a silent leaf failure <= {LEAF_GOAL_RTTS:g} loaded RTTs:"
                     f" {fmt(rtts, '', 1)} RTTs, {within}/{len(leaf)} runs within:"
                     f" {'met' if within == len(leaf) else 'not met'}"
                     f" (MPTCP {fmt(g, '', 0)} ms = {fmt(gr, '', 1)} of MRC's loaded RTTs;"
                     f" MRC's stalls before it {fmt(stat('leaf', 'mrc', 'base_gap_ms'), '', 0)} ms)")
    out["goals"] = goals
    res["planes"] = out
    table.append("")
    return runs


def plots(runs, out, plt, colors):
    if not runs:
        return
    scs = [sc for sc in SCENARIOS if any(r["scenario"] == sc for r in runs)]
    fig, axs = plt.subplots(len(scs), 2, figsize=(12, 3.2 * len(scs)), squeeze=False,
                            gridspec_kw={"width_ratios": [2.2, 1]})
    for row, sc in enumerate(scs):
        ax = axs[row][0]
        spans = []
        for t in TRANSPORTS:
            rs = [r for r in runs if r["scenario"] == sc and r["transport"] == t]
            if not rs:
                continue
            r = rs[0]
            mb = [b * 8 / 10 / 1000 for _, b in r["ticks_10ms"]]
            # 100 ms moving average over the 10 ms ticks
            avg = [sum(mb[max(0, i - 9):i + 1]) / len(mb[max(0, i - 9):i + 1]) for i in range(len(mb))]
            # each run failed at its own moment: time from its failure
            ax.plot([(x[0] - r["fail_ms"][0]) / 1000 for x in r["ticks_10ms"]], avg, color=colors[t], lw=1.1,
                    label=f"{t.upper()} (gap at the failure {r['fail_gap_ms']:.0f} ms)")
            spans.append((r["heal_ms"][1] - r["fail_ms"][0]) / 1000)
        if spans:
            ax.axvspan(0, sum(spans) / len(spans), color="grey", alpha=0.2, label=SCENARIOS[sc] + " (mean)")
        ax.set_ylabel("Mbit/s (100 ms avg)")
        ax.set_title(f"{SCENARIOS[sc]}: goodput, first run", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
        ax.set_xlabel("seconds from the failure")
        ax = axs[row][1]
        for i, t in enumerate(TRANSPORTS):
            gaps = [r["fail_gap_ms"] for r in runs if r["scenario"] == sc and r["transport"] == t]
            if not gaps:
                continue
            ax.bar(i, sum(gaps) / len(gaps), color=colors[t])
            ax.plot([i] * len(gaps), gaps, "k.")
            base = [r["base_gap_ms"] for r in runs if r["scenario"] == sc and r["transport"] == t]
            ax.plot([i + 0.25] * len(base), base, "x", color="grey",
                    label="longest gap before the failure" if i == 0 else None)
        if sc == "nic":
            ax.axhline(NIC_GOAL_MS, color="k", ls="--", lw=0.8, label=f"goal {NIC_GOAL_MS:g} ms")
        else:
            rtt = [r["loaded_rtt_ms"] for r in runs if r["scenario"] == sc and r["transport"] == "mrc"
                   and r["loaded_rtt_ms"] > 0]
            if rtt:
                ax.axhline(LEAF_GOAL_RTTS * sum(rtt) / len(rtt), color="k", ls="--", lw=0.8,
                           label=f"goal: 3 loaded RTTs ({LEAF_GOAL_RTTS * sum(rtt) / len(rtt):.0f} ms)")
        ax.set_yscale("log")
        ax.set_xticks(range(len(TRANSPORTS)), [t.upper() for t in TRANSPORTS])
        ax.set_ylabel("longest gap at the failure, ms")
        ax.set_title("every run", fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "planes.png"), dpi=100)
