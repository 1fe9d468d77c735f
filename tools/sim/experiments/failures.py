#!/usr/bin/python3
"""Goodput over time through a link failure and through a plane failure.

    tools/sim/experiments/failures.py          (about 3 minutes here)

Link failure: 32 hosts on a 1:1 fat-tree (4 leaves of 8, 8 spines), an
all-to-all of 128 MiB per host; at 2 ms the link leaf0-spine1 dies.  The
fabric's routes either never reconverge (reroute_delay 0: flows hashed onto
the link are black-holed until the transport moves them) or reconverge
after 1 ms.

Plane failure: the same 32 hosts with 4 planes (one port per plane), 512
MiB per host; at 2 ms every link of plane 1 dies (a host port goes down
with it) and stays down.  MetaRoCE with 8 paths (3 planes left: 3/3/2 paths)
and with 12 (4/4/4); RoCEv2 with one QP per plane per peer.

Each failure run has a twin without the failure.  Timeline interval 50 us,
per host pair (--timeline_flows), seed 1.  For each run: goodput before the
failure (0.5-2 ms); the mean and the lowest 50-us goodput in the first
millisecond after it; when goodput is back to 90% of the pre-failure level
(times the capacity left: 3/4 for the plane) for 4 intervals in a row;
MetaRoCE's first and last path replacement; flow stalls (the longest time
a host pair with data outstanding received nothing, counted when it starts
after the failure, and how many pairs stalled for 1 ms or more -- the
aggregate hides a stalled QP while others use its capacity); completion
time against the twin; and application errors (messages not delivered,
failed QPs/connections, bad reports).
Writes results/sim/failures/{failures.csv,timeline_*.csv,link_failure.png,
plane_failure.png}.
"""

import os

import simlib
from simlib import plt

FAIL_MS = 2.0
INTERVAL = "50us"
COMMON = {"hosts": 32, "hosts_per_leaf": 8, "workload": "alltoall", "seed": 1,
          "timeline": INTERVAL, "timeline_flows": 1}

LINK_RUNS = [
    ("MetaRoCE, never rerouted", {"transport": "metaroce", "reroute_delay": 0}),
    ("MetaRoCE, reroute 1 ms", {"transport": "metaroce", "reroute_delay": "1ms"}),
    ("RoCEv2, never rerouted", {"transport": "rocev2", "reroute_delay": 0}),
    ("RoCEv2, reroute 1 ms", {"transport": "rocev2", "reroute_delay": "1ms"}),
]
PLANE_RUNS = [
    ("MetaRoCE, 8 paths", {"transport": "metaroce", "paths": 8, "qps_per_pair": 1}),
    ("MetaRoCE, 12 paths", {"transport": "metaroce", "paths": 12, "qps_per_pair": 1}),
    ("RoCEv2, 1 QP per plane", {"transport": "rocev2"}),
]


def first_at_or_after(xs, t):
    return next((i for i, x in enumerate(xs) if x >= t), len(xs))


def stalls(r, fail_ms, expected_per_pair):
    """Per host pair: the longest run of empty intervals that starts after
    the failure while the pair still had data to receive (an unfinished
    pair stalls until the end of the run)."""
    tl = r["timeline"]
    dt_ms = tl["interval_s"] * 1e3
    i_fail = int(fail_ms / dt_ms)
    longest = []
    for f in tl["flows"]:
        b = f["bytes"]
        last = max((i for i, x in enumerate(b) if x), default=-1)
        end = len(b) if sum(b) < expected_per_pair else last
        best = run = 0
        for i in range(i_fail, end):
            run = run + 1 if b[i] == 0 else 0
            best = max(best, run)
        longest.append(best * dt_ms)
    return longest


def analyse(label, r, twin, fail_ms, capacity_left, expected_per_pair):
    tl = r["timeline"]
    dt_ms = tl["interval_s"] * 1e3
    t, g = simlib.series_gbps(tl)
    i_fail = int(fail_ms / dt_ms)
    pre_from = int(0.5 / dt_ms)
    pre = sum(g[pre_from:i_fail]) / max(1, i_fail - pre_from)
    first_ms = g[i_fail:i_fail + int(1 / dt_ms)]
    target = 0.9 * pre * capacity_left
    # Recovered: the first interval from which 4 in a row reach the target
    # (0 if goodput never fell below it).
    rec = None
    for i in range(i_fail, len(g) - 4):
        if all(x >= target for x in g[i:i + 4]):
            rec = max(0.0, i * dt_ms - fail_ms)
            break
    pr = tl["paths_replaced"]
    repl = [i for i in range(i_fail, len(pr)) if pr[i]]
    to = tl["timeouts"]
    first_to = next((i for i in range(i_fail, len(to)) if to[i]), None)
    st = stalls(r, fail_ms, expected_per_pair)
    return {
        "scenario": label, "transport": r["transport"], "completed": r["completed"],
        "completion_ms": r["completion_time_s"] * 1e3,
        "no_failure_ms": twin["completion_time_s"] * 1e3,
        "pre_gbps": pre, "first_ms_mean": sum(first_ms) / len(first_ms) / pre,
        "first_ms_min": min(first_ms) / pre,
        "recovered_after_ms": rec,
        "first_timeout_after_ms": None if first_to is None else first_to * dt_ms - fail_ms,
        "first_path_replaced_after_ms": repl[0] * dt_ms - fail_ms if repl else None,
        "last_path_replaced_after_ms": repl[-1] * dt_ms - fail_ms if repl else None,
        "paths_replaced": r["transport_stats"]["paths_replaced"],
        "timeouts": r["transport_stats"]["timeouts"],
        "max_stall_ms": max(st), "pairs_stalled_1ms": sum(1 for x in st if x >= 1.0),
        "twin_max_stall_ms": max(stalls(twin, fail_ms, expected_per_pair)),
        "link_down_drops": r["fabric"]["drops"]["link_down"],
        "buffer_drops": r["fabric"]["drops"]["buffer"],
        "failed_qps": r["transport_stats"]["failed_qps"],
        "failed_connections": r["transport_stats"]["failed_connections"],
        "messages_missing": r["messages"]["expected"] - r["messages"]["delivered"],
        "errors": simlib.app_errors(r), "cmd": r["cmd"],
    }


def write_timeline(path, r):
    tl = r["timeline"]
    t, g = simlib.series_gbps(tl)
    rows = [{"t_ms": round(t[i], 4), "goodput_gbps": round(g[i], 3),
             "packets_dropped": tl["packets_dropped"][i],
             "retransmitted_bytes": tl["retransmitted_bytes"][i],
             "timeouts": tl["timeouts"][i], "paths_replaced": tl["paths_replaced"][i],
             "failures": tl["failures"][i]} for i in range(len(g))]
    simlib.write_csv(path, rows, list(rows[0].keys()))


def plot(path, title, runs, summaries, xmax_ms):
    fig, (ax, axe) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1.3]})
    styles = ["-", "--", "-", "--"]
    for (label, r), s, ls in zip(runs, summaries, styles):
        t, g = simlib.series_gbps(r["timeline"])
        col = simlib.COLORS[r["transport"]]
        if "12 paths" in label:
            col = "tab:cyan"
        ax.plot(t[:-1], [x / 1e3 for x in g[:-1]], ls=ls, lw=1, color=col,
                label=f"{label} ({'done' if r['completed'] else 'FAILED'} "
                      f"{r['completion_time_s'] * 1e3:.1f} ms)")
        tl = r["timeline"]
        dt = tl["interval_s"] * 1e3
        ev = [(i + 0.5) * dt for i, n in enumerate(tl["paths_replaced"]) if n]
        if ev:
            axe.plot(ev, [n for n in tl["paths_replaced"] if n], ls="none", marker="|", ms=9,
                     color=col, label=f"{label}: path replacements")
        to = [(i + 0.5) * dt for i, n in enumerate(tl["timeouts"]) if n]
        if to:
            axe.plot(to, [n for n in tl["timeouts"] if n], ls="none", marker=".", ms=4,
                     color=col, alpha=0.6, label=f"{label}: timeouts")
    for a in (ax, axe):
        a.axvline(FAIL_MS, color="red", lw=0.8, ls=":")
    ax.text(FAIL_MS, ax.get_ylim()[1] * 0.02, " failure", color="red", fontsize=8)
    ax.set_title(title)
    ax.set_ylabel("aggregate goodput (Tb/s, 50-us bins)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="lower right")
    axe.set_ylabel("events per bin")
    axe.set_yscale("log")
    axe.set_xlabel("time (ms)")
    axe.set_xlim(0, xmax_ms)
    axe.legend(fontsize=6, loc="upper right", ncol=2)
    simlib.savefig(fig, path)


def main():
    out = simlib.outdir("failures")
    link = dict(COMMON, size="128MiB")
    plane = dict(COMMON, size="512MiB", planes=4)
    cfgs = []
    for _, o in LINK_RUNS:
        cfgs.append(dict(link, link_down=f"{FAIL_MS}ms p0.leaf0~p0.spine1", **o))
        cfgs.append(dict(link, **o))  # the twin
    for _, o in PLANE_RUNS:
        cfgs.append(dict(plane, plane_down=f"{FAIL_MS}ms 1", **o))
        cfgs.append(dict(plane, **o))
    runs = simlib.run_all(cfgs, "failures")
    pairs = list(zip(runs[0::2], runs[1::2]))
    n = COMMON["hosts"]
    groups = (("link", LINK_RUNS, pairs[:len(LINK_RUNS)], 1.0, 128 * 2**20 // n),
              ("plane", PLANE_RUNS, pairs[len(LINK_RUNS):], 0.75, 512 * 2**20 // n))

    summaries, plotted = [], {}
    for kind, specs, group, left, per_pair in groups:
        plotted[kind] = []
        for (label, _), (r, twin) in zip(specs, group):
            s = analyse(f"{kind}: {label}", r, twin, FAIL_MS, left, per_pair)
            summaries.append(s)
            plotted[kind].append((label, r))
            slug = label.lower().replace(",", "").replace(" ", "_")
            write_timeline(os.path.join(out, f"timeline_{kind}_{slug}.csv"), r)
    simlib.write_csv(os.path.join(out, "failures.csv"), summaries, list(summaries[0].keys()))
    simlib.print_table(summaries, [
        ("scenario", "scenario", "{}"), ("done", "completed", "{}"),
        ("ms", "completion_ms", "{:.2f}"), ("twin ms", "no_failure_ms", "{:.2f}"),
        ("pre Gb/s", "pre_gbps", "{:.0f}"),
        ("1st ms mean/min", lambda s: f"{s['first_ms_mean']:.2f}/{s['first_ms_min']:.2f}", "{}"),
        ("recovered ms", "recovered_after_ms", "{:.2f}"),
        ("1st/last replace ms", lambda s: None if s["first_path_replaced_after_ms"] is None else
         f"{s['first_path_replaced_after_ms']:.2f}/{s['last_path_replaced_after_ms']:.2f}", "{}"),
        ("replaced", "paths_replaced", "{}"),
        ("max stall ms (twin)", lambda s: f"{s['max_stall_ms']:.2f} ({s['twin_max_stall_ms']:.2f})",
         "{}"),
        ("pairs stalled >=1ms", "pairs_stalled_1ms", "{}"), ("failed QPs", "failed_qps", "{}"),
        ("errors", "errors", "{}")], "failures (times after the failure at 2 ms)")

    done = [r["completion_time_s"] * 1e3 for _, r in plotted["link"] if r["completed"]]
    plot(os.path.join(out, "link_failure.png"),
         "32 hosts all-to-all 128 MiB: leaf0-spine1 fails at 2 ms", plotted["link"],
         summaries[:len(LINK_RUNS)], max(done) * 1.05)
    done = [r["completion_time_s"] * 1e3 for _, r in plotted["plane"] if r["completed"]]
    plot(os.path.join(out, "plane_failure.png"),
         "32 hosts, 4 planes, all-to-all 512 MiB: plane 1 fails at 2 ms", plotted["plane"],
         summaries[len(LINK_RUNS):], max(done) * 1.05)


if __name__ == "__main__":
    main()
