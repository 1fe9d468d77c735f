#!/usr/bin/python3
"""Goodput and collective completion time against random loss.

    tools/sim/experiments/loss_sweep.py        (about 5 minutes here)

64 hosts on a 1:1 fat-tree (8 leaves of 8 hosts, 8 spines, 100 Gb/s),
random loss on the last hop (every packet, data and ACK, sees it once) of
0, 0.1, 1, 5 and 10%.  Ring all-reduce of 256 MiB (4 MiB chunks, 126
steps) and all-to-all of 64 MiB per host (1 MiB to each peer), MetaRoCE and
RoCEv2 on the same fabric, seed 1 (SEEDS="1 2 3" for more).
Writes results/sim/loss_sweep/{loss_sweep.csv,loss_sweep.png}.
Targets: MetaRoCE keeps >= 90% of its lossless goodput at 1% loss (Meta
reports ~86% of line rate) and >= 50% at 10%.
"""

import os
import statistics

import simlib
from simlib import plt

HOSTS = int(os.environ.get("HOSTS", "64"))
SIZES = {"allreduce": os.environ.get("SIZE_ALLREDUCE", "256MiB"),
         "alltoall": os.environ.get("SIZE_ALLTOALL", "64MiB")}
LOSSES = [0, 0.001, 0.01, 0.05, 0.1]
TRANSPORTS = ["metaroce", "rocev2"]
SEEDS = [int(s) for s in os.environ.get("SEEDS", "1").split()]


def main():
    out = simlib.outdir("loss_sweep")
    configs = []
    for w in SIZES:
        for t in TRANSPORTS:
            for loss in LOSSES:
                for seed in SEEDS:
                    configs.append({"hosts": HOSTS, "workload": w, "size": SIZES[w],
                                    "transport": t, "loss": loss, "seed": seed})
    runs = simlib.run_all(configs, "loss_sweep")

    # Fraction of the same transport's lossless goodput (same workload, seed).
    base = {(r["workload"], r["transport"], r["seed"]): r["goodput_gbps"]
            for r in runs if r["loss"] == 0}
    for r in runs:
        b = base[(r["workload"], r["transport"], r["seed"])]
        r["of_lossless"] = r["goodput_gbps"] / b if b else 0
        r["retx_per_delivered"] = r["bytes_retransmitted"] / max(1, r["bytes_delivered"])
        r["timeouts"] = r["transport_stats"]["timeouts"]
        r["errors"] = simlib.app_errors(r)
        r["completion_ms"] = r["completion_time_s"] * 1e3
        r["size_bytes"] = r["size"]
    fields = ["workload", "transport", "hosts", "size_bytes", "loss", "seed", "completed",
              "completion_ms", "goodput_gbps", "line_rate_fraction", "of_lossless",
              "bytes_retransmitted", "retx_per_delivered", "packets_lost", "timeouts",
              "errors", "events", "cmd"]
    simlib.write_csv(os.path.join(out, "loss_sweep.csv"), runs, fields)

    # Means over seeds for the table and the plot.
    rows = []
    for w in SIZES:
        for t in TRANSPORTS:
            for loss in LOSSES:
                rs = [r for r in runs if (r["workload"], r["transport"], r["loss"]) == (w, t, loss)]
                rows.append({
                    "workload": w, "transport": t, "loss_pct": loss * 100,
                    "lrf": statistics.mean(r["line_rate_fraction"] for r in rs),
                    "lrf_min": min(r["line_rate_fraction"] for r in rs),
                    "lrf_max": max(r["line_rate_fraction"] for r in rs),
                    "of_lossless": statistics.mean(r["of_lossless"] for r in rs),
                    "ms": statistics.mean(r["completion_ms"] for r in rs),
                    "retx": statistics.mean(r["retx_per_delivered"] for r in rs),
                    "errors": sum(r["errors"] for r in rs),
                })
    simlib.write_csv(os.path.join(out, "loss_sweep_summary.csv"), rows, list(rows[0].keys()))
    simlib.print_table(rows, [
        ("workload", "workload", "{}"), ("transport", "transport", "{}"),
        ("loss %", "loss_pct", "{:g}"), ("of line rate", "lrf", "{:.3f}"),
        ("of lossless", "of_lossless", "{:.3f}"), ("completion ms", "ms", "{:.2f}"),
        ("resent/delivered", "retx", "{:.3f}"), ("errors", "errors", "{}")],
        f"loss sweep: {HOSTS} hosts, seeds {SEEDS}")

    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    xs = list(range(len(LOSSES)))
    labels = [f"{l * 100:g}%" for l in LOSSES]
    for i, w in enumerate(SIZES):
        ax_g, ax_t = axes[i]
        for t in TRANSPORTS:
            rs = [r for r in rows if r["workload"] == w and r["transport"] == t]
            ax_g.errorbar(xs, [r["lrf"] for r in rs],
                          yerr=[[r["lrf"] - r["lrf_min"] for r in rs],
                                [r["lrf_max"] - r["lrf"] for r in rs]],
                          marker="o", color=simlib.COLORS[t], label=t, capsize=3)
            ax_t.plot(xs, [r["ms"] for r in rs], marker="o", color=simlib.COLORS[t], label=t)
        m0 = [r for r in rows if r["workload"] == w and r["transport"] == "metaroce"][0]["lrf"]
        ax_g.axhline(0.9 * m0, ls="--", color="tab:blue", lw=0.8, alpha=0.6,
                     label="target: 90% of MetaRoCE lossless (at 1%)")
        ax_g.axhline(0.5 * m0, ls=":", color="tab:blue", lw=0.8, alpha=0.6,
                     label="target: 50% (at 10%)")
        ax_g.plot([2], [0.86], marker="*", ms=11, color="tab:green", ls="none",
                  label="Meta: ~86% at 1%")
        ax_g.set_title(f"{w} {SIZES[w]}, {HOSTS} hosts: goodput")
        ax_g.set_ylabel("goodput / receiver line rate")
        ax_g.set_ylim(0, 1.05)
        ax_t.set_title(f"{w} {SIZES[w]}, {HOSTS} hosts: completion time")
        ms = [r["ms"] for r in rows if r["workload"] == w]
        if max(ms) > 5 * min(ms):
            ax_t.set_yscale("log")
        ax_t.set_ylabel("completion time (ms" + (", log)" if max(ms) > 5 * min(ms) else ")"))
        for ax in (ax_g, ax_t):
            ax.set_xticks(xs, labels)
            ax.set_xlabel("random loss (last hop)")
        ax_g.legend(fontsize=7, loc="lower left")
        ax_t.legend(fontsize=7, loc="upper left")
    simlib.savefig(fig, os.path.join(out, "loss_sweep.png"))


if __name__ == "__main__":
    main()
