#!/usr/bin/python3
"""Aggregate goodput with 1, 2, 4 and 8 planes and 4,032 connections.

    tools/sim/experiments/plane_scaling.py     (about 4 minutes here)

64 hosts, all-to-all: every host has a connection to each of its 63 peers,
64 x 63 = 4,032 connections.  Each host has one 100 Gb/s port per plane;
every plane is its own 1:1 fat-tree (8 leaves, 8 spines).  The transfer
grows with the planes (64 MiB per host per plane, 1 MiB per peer per plane)
so every run lasts about as long.  MetaRoCE: one connection (QP) per peer
with 8 paths sprayed over the planes; RoCEv2: one QP per peer per plane
(a QP cannot span planes).  Seed 1.
Writes results/sim/plane_scaling/{plane_scaling.csv,plane_scaling.png}.
Target: aggregate goodput >= 0.9 x planes x single-plane goodput.
"""

import os

import simlib
from simlib import plt

HOSTS = int(os.environ.get("HOSTS", "64"))
PER_PLANE_MIB = int(os.environ.get("PER_PLANE_MIB", "64"))
PLANES = [1, 2, 4, 8]
TRANSPORTS = ["metaroce", "rocev2"]


def main():
    out = simlib.outdir("plane_scaling")
    configs = []
    for t in TRANSPORTS:
        for p in PLANES:
            configs.append({"hosts": HOSTS, "workload": "alltoall",
                            "size": f"{PER_PLANE_MIB * p}MiB", "planes": p,
                            "qps_per_pair": 1 if t == "metaroce" else p, "paths": 8,
                            "transport": t, "seed": 1})
    runs = simlib.run_all(configs, "plane_scaling")
    single = {r["transport"]: r["goodput_gbps"] for r in runs if r["planes"] == 1}
    for r in runs:
        r["connections"] = HOSTS * (HOSTS - 1) * r["qps_per_pair"]
        r["scaling"] = r["goodput_gbps"] / (r["planes"] * single[r["transport"]])
        r["completion_ms"] = r["completion_time_s"] * 1e3
        r["errors"] = simlib.app_errors(r)
        r["size_bytes"] = r["size"]
    fields = ["transport", "hosts", "planes", "qps_per_pair", "connections", "size_bytes",
              "completed", "completion_ms", "goodput_gbps", "line_rate_fraction", "scaling",
              "packets_lost", "bytes_retransmitted", "errors", "events", "cmd"]
    simlib.write_csv(os.path.join(out, "plane_scaling.csv"), runs, fields)
    simlib.print_table(runs, [
        ("transport", "transport", "{}"), ("planes", "planes", "{}"),
        ("connections/QPs", "connections", "{}"), ("goodput Tb/s", lambda r: r["goodput_gbps"] / 1e3,
                                                "{:.2f}"),
        ("of line rate", "line_rate_fraction", "{:.3f}"),
        ("vs planes x 1-plane", "scaling", "{:.3f}"), ("completion ms", "completion_ms", "{:.2f}"),
        ("lost pkts", "packets_lost", "{}"), ("errors", "errors", "{}")],
        f"plane scaling: {HOSTS} hosts all-to-all, {PER_PLANE_MIB} MiB per host per plane")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for t in TRANSPORTS:
        rs = [r for r in runs if r["transport"] == t]
        ax1.plot(PLANES, [r["goodput_gbps"] / 1e3 for r in rs], marker="o",
                 color=simlib.COLORS[t], label=t)
        ax1.plot(PLANES, [p * single[t] / 1e3 for p in PLANES], ls=":", color=simlib.COLORS[t],
                 lw=0.8, label=f"{t}: planes x 1-plane")
        ax2.plot(PLANES, [r["scaling"] for r in rs], marker="o", color=simlib.COLORS[t], label=t)
    ax2.axhline(0.9, ls="--", color="gray", lw=0.8, label="target 0.9")
    ax1.set_title(f"{HOSTS} hosts all-to-all: MetaRoCE {HOSTS * (HOSTS - 1)} connections, "
                  f"RoCEv2 {HOSTS * (HOSTS - 1)} x planes QPs", fontsize=9)
    ax1.set_xlabel("planes")
    ax1.set_ylabel("aggregate goodput (Tb/s)")
    ax2.set_title("scaling efficiency")
    ax2.set_xlabel("planes")
    ax2.set_ylabel("goodput / (planes x 1-plane goodput)")
    ax2.set_ylim(0, 1.1)
    for ax in (ax1, ax2):
        ax.set_xticks(PLANES)
        ax.legend(fontsize=7)
    simlib.savefig(fig, os.path.join(out, "plane_scaling.png"))


if __name__ == "__main__":
    main()
