#!/usr/bin/python3
"""Unequal path delays and a persistently congested (slow) path.

    tools/sim/experiments/paths.py             (about 35 seconds here)

16 hosts on a 1:1 fat-tree (2 leaves of 8, 8 spines, 100 Gb/s), all-to-all
of 512 MiB per host (32 MiB per peer; half of it crosses the spines).
Scenarios:
  equal        every link alike (100 ns);
  long links   the four leaf-spine links through spines 0 and 1 are 10 us
               long (2 km of fibre): a quarter of the routes have 40 us
               more RTT;
  slow link    leaf0-spine0 runs at 10 Gb/s (a degraded port): the routes
               through it are persistently congested.
MetaRoCE (8 paths per connection; the path health check every 10 ms, the
core's default, and every 1 ms) and RoCEv2 (one route per QP), seed 1.
Timeline interval 100 us; the special links are watched
(--timeline_link), so their share of the leaf-spine bytes shows whether a
transport steers traffic off them: ECMP alone gives each of leaf0's 8
uplinks 1/8.
Writes results/sim/paths/{paths.csv,paths.png,paths_timeline.png}.
"""

import os

import simlib
from simlib import plt

COMMON = {"hosts": 16, "hosts_per_leaf": 8, "workload": "alltoall", "size": "512MiB",
          "seed": 1, "timeline": "100us"}
UPLINKS = [f"p0.leaf0~p0.spine{s}" for s in range(8)]
LONG = ["p0.leaf0~p0.spine0", "p0.leaf0~p0.spine1", "p0.leaf1~p0.spine0", "p0.leaf1~p0.spine1"]
SCENARIOS = [
    ("equal", {}),
    ("long links", {"link_latency": [f"{l} 10us" for l in LONG]}),
    ("slow link", {"link_rate": "p0.leaf0~p0.spine0 10"}),
]
TRANSPORTS = [
    ("MetaRoCE", {"transport": "metaroce"}),
    ("MetaRoCE, health 1 ms", {"transport": "metaroce", "metaroce_health_epoch": "1ms"}),
    ("RoCEv2", {"transport": "rocev2"}),
]


def watched(scenario):
    # leaf0's eight uplinks (both directions), plus leaf1's long ones.
    return UPLINKS + ([l for l in LONG if "leaf1" in l] if scenario == "long links" else [])


def main():
    out = simlib.outdir("paths")
    configs, labels = [], []
    for sname, sopts in SCENARIOS:
        for tname, topts in TRANSPORTS:
            configs.append(dict(COMMON, timeline_link=watched(sname), **sopts, **topts))
            labels.append((sname, tname))
    runs = simlib.run_all(configs, "paths")

    rows = []
    for (sname, tname), r in zip(labels, runs):
        links = {l["name"]: sum(l["a_to_b"]) + sum(l["b_to_a"]) for l in r["timeline"]["links"]}
        up = sum(links[l] for l in UPLINKS)
        special = ["p0.leaf0~p0.spine0"] if sname == "slow link" else (
            [l for l in UPLINKS if l in LONG] if sname == "long links" else [])
        share = sum(links[l] for l in special) / up if special and up else None
        rows.append({
            "scenario": sname, "transport": tname, "completed": r["completed"],
            "completion_ms": r["completion_time_s"] * 1e3,
            "line_rate_fraction": r["line_rate_fraction"],
            "special_share": share,
            "ecmp_share": len(special) / len(UPLINKS) if special else None,
            "paths_replaced": r["transport_stats"]["paths_replaced"],
            "ecn_marks": r["fabric"]["ecn_marks"],
            "buffer_drops": r["fabric"]["drops"]["buffer"],
            "retransmitted_bytes": r["bytes_retransmitted"],
            "timeouts": r["transport_stats"]["timeouts"], "errors": simlib.app_errors(r),
            "cmd": r["cmd"]})
    simlib.write_csv(os.path.join(out, "paths.csv"), rows, list(rows[0].keys()))
    simlib.print_table(rows, [
        ("scenario", "scenario", "{}"), ("transport", "transport", "{}"),
        ("completion ms", "completion_ms", "{:.2f}"),
        ("of line rate", "line_rate_fraction", "{:.3f}"),
        ("bytes on special links", "special_share", "{:.3f}"), ("ECMP share", "ecmp_share",
                                                                 "{:.3f}"),
        ("paths replaced", "paths_replaced", "{}"), ("ECN marks", "ecn_marks", "{}"),
        ("drops", "buffer_drops", "{}"), ("errors", "errors", "{}")],
        "unequal paths: 16 hosts all-to-all 512 MiB (special links' share of leaf0's uplink bytes)")

    # Summary bars: completion time per scenario and transport.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    width = 0.27
    colors = ["tab:blue", "tab:cyan", "tab:orange"]
    for k, (tname, _) in enumerate(TRANSPORTS):
        rs = [row for row in rows if row["transport"] == tname]
        xs = [i + (k - 1) * width for i in range(len(SCENARIOS))]
        ax1.bar(xs, [row["line_rate_fraction"] for row in rs], width, color=colors[k],
                label=tname)
        sh = [(x, row["special_share"]) for x, row in zip(xs, rs) if row["special_share"]]
        ax2.bar([x for x, _ in sh], [s for _, s in sh], width, color=colors[k], label=tname)
    for i, (sname, _) in enumerate(SCENARIOS):
        ecmp = {"long links": 2 / 8, "slow link": 1 / 8}.get(sname)
        if ecmp:
            ax2.hlines(ecmp, i - 0.45, i + 0.45, color="black", ls="--", lw=0.8)
    ax1.set_xticks(range(len(SCENARIOS)), [s for s, _ in SCENARIOS])
    ax2.set_xticks(range(len(SCENARIOS)), [s for s, _ in SCENARIOS])
    ax1.set_ylabel("goodput / receiver line rate")
    ax1.set_title("all-to-all goodput")
    ax1.set_ylim(0, 1)
    ax2.set_ylabel("share of leaf0's uplink bytes")
    ax2.set_title("bytes on the long / slow links (dashed: ECMP share)")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    simlib.savefig(fig, os.path.join(out, "paths.png"))

    # Slow link over time: goodput and what the slow link carries.
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    ax3 = ax2.twinx()
    xmax = 0
    for k, ((sname, tname), r) in enumerate(zip(labels, runs)):
        if sname != "slow link":
            continue
        tl = r["timeline"]
        t, g = simlib.series_gbps(tl)
        done = r["completion_time_s"] * 1e3
        if r["transport"] == "metaroce":
            xmax = max(xmax, 1.4 * done)
        ax1.plot(t[:-1], [x / 1e3 for x in g[:-1]], lw=1, color=colors[k % 3],
                 label=f"{tname} (done at {done:.1f} ms)")
        slow = [l for l in tl["links"] if l["name"] == "p0.leaf0~p0.spine0"][0]
        ups = [l for l in tl["links"] if l["name"] in UPLINKS]
        frac = []
        for i in range(len(t) - 1):
            tot = sum(l["a_to_b"][i] + l["b_to_a"][i] for l in ups)
            frac.append((slow["a_to_b"][i] + slow["b_to_a"][i]) / tot if tot else 0)
        ax2.plot(t[:-1], frac, lw=1, color=colors[k % 3], label=tname)
        if r["transport"] == "metaroce":
            cum, c = [], 0
            for n in tl["paths_replaced"]:
                c += n
                cum.append(c)
            ax3.plot(t, cum, lw=1, ls=":", color=colors[k % 3],
                     label=f"{tname}: paths replaced (right)")
    ax2.axhline(1 / 8, color="black", ls="--", lw=0.8, label="ECMP share 1/8")
    ax1.set_title("slow link (leaf0-spine0 at 10 Gb/s): 16 hosts all-to-all 512 MiB")
    ax1.set_ylabel("aggregate goodput (Tb/s)")
    ax1.set_ylim(bottom=0)
    ax1.legend(fontsize=7)
    ax2.set_ylabel("slow link's share of\nleaf0's uplink bytes")
    ax2.set_xlabel("time (ms)")
    ax2.set_ylim(0, 0.2)
    ax2.set_xlim(0, xmax)
    ax3.set_ylabel("paths replaced (cumulative)")
    ax3.set_ylim(bottom=0)
    h1, l1 = ax2.get_legend_handles_labels()
    h2, l2 = ax3.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper right")
    simlib.savefig(fig, os.path.join(out, "paths_timeline.png"))


if __name__ == "__main__":
    main()
