#!/usr/bin/python3
"""Incast 16->1 and 64->1: time to fair share and steady-state fairness.

    tools/sim/experiments/incast.py            (seconds)

N senders on one switch (star, 100 Gb/s, 1 MiB per port, ECN at 100 KiB)
each send S bytes to host 0 at t=0: N=16 with S=8 MiB, N=64 with S=2 MiB
(about 11 ms at line rate either way).  MetaRoCE with the receiver's rate
hints (fair-share epoch 100 us, the default; and 20 us), without them
(--metaroce_share_epoch 0), and RoCEv2 with DCQCN.  Seed 1.

Rates are what the receiver gets from each sender (--timeline 2us
--timeline_flows 1).  Definitions:
  fair share   the aggregate goodput over the steady window / N;
  rate(s, t)   sender s's delivered bytes in [t, t + W] / W, with W = the
               time 20 packets take at the fair share (20 x N x 4 KiB at
               100 Gb/s: 110 us for 16 senders, 440 us for 64) -- a shorter
               window cannot tell 10% apart: one packet more or less in it
               is already 1/20;
  t0           the first byte at the receiver (its first ACK leaves then);
  converged    the first t from which every window start in the steady
               window has every sender within 10% of the fair share;
  time to fair share = converged - t0, also in base RTTs (the RTT of an
               empty fabric, 2 x the one-way time of a lone 4 KiB packet);
  steady window from 10% to 90% of the time the first sender finishes;
  Jain's index J = (sum x)^2 / (N sum x^2) over the senders' bytes in it.
Targets: fair share within 2 RTTs of the first ACKs, J >= 0.95.
Writes results/sim/incast/{incast.csv,incast_<N>.png,incast_rates_<N>.csv}.
"""

import os

import simlib
from simlib import plt

CASES = [(16, "8MiB"), (64, "2MiB")]
BIN = "2us"
VARIANTS = [
    ("MetaRoCE, hints 100us", "metaroce", {}),
    ("MetaRoCE, hints 20us", "metaroce", {"metaroce_share_epoch": "20us"}),
    ("MetaRoCE, no hints", "metaroce", {"metaroce_share_epoch": 0}),
    ("RoCEv2 + DCQCN", "rocev2", {}),
]
PKT_TIME_US = (4096 + 138) * 8 / 100e3  # one MTU frame at 100 Gb/s
WINDOW_PKTS = 20


def flow_rates(tl):
    """Per sender: cumulative delivered bytes per bin (for window sums)."""
    out = {}
    for f in tl["flows"]:
        acc, c = [0], 0
        for b in f["bytes"]:
            c += b
            acc.append(c)
        out[f["src"]] = acc
    return out


def analyse(label, r, n, base_rtt_us):
    tl = r["timeline"]
    dt_us = tl["interval_s"] * 1e6
    cum = flow_rates(tl)
    nb = len(tl["delivered_bytes"])
    # When each sender finished: the bin of its last byte.
    done_bin = {s: max(i for i in range(nb) if c[i + 1] > c[i]) for s, c in cum.items()}
    first_done = min(done_bin.values())
    a, b = int(0.1 * first_done), int(0.9 * first_done)
    steady_bytes = {s: c[b] - c[a] for s, c in cum.items()}
    agg_gbps = sum(steady_bytes.values()) * 8 / ((b - a) * dt_us * 1e3)
    fair_gbps = agg_gbps / n
    J = simlib.jain(list(steady_bytes.values()))
    w_bins = max(1, round(WINDOW_PKTS * n * PKT_TIME_US / dt_us))

    def ok(i):  # every sender within 10% of the fair share over [i, i + w]
        for c in cum.values():
            g = (c[i + w_bins] - c[i]) * 8 / (w_bins * dt_us * 1e3)
            if abs(g - fair_gbps) > 0.1 * fair_gbps:
                return False
        return True

    last_start = b - w_bins
    conv = None
    for i in range(last_start, -1, -1):  # the earliest start of an all-good suffix
        if not ok(i):
            break
        conv = i
    t0_us = tl["first_delivery_s"] * 1e6
    tfs = None if conv is None else max(0.0, conv * dt_us - t0_us)
    # Spread of the senders' rates over the steady window.
    rates = sorted(v * 8 / ((b - a) * dt_us * 1e3) for v in steady_bytes.values())
    return {
        "senders": n, "variant": label, "transport": r["transport"],
        "completed": r["completed"], "completion_ms": r["completion_time_s"] * 1e3,
        "line_rate_fraction": r["line_rate_fraction"], "steady_gbps": agg_gbps,
        "fair_gbps": fair_gbps, "min_rate_gbps": rates[0], "max_rate_gbps": rates[-1],
        "jain": J, "window_us": w_bins * dt_us, "t0_us": t0_us,
        "time_to_fair_us": tfs, "time_to_fair_rtts": None if tfs is None else tfs / base_rtt_us,
        "first_sender_done_ms": first_done * dt_us / 1e3,
        "packets_lost": r["packets_lost"], "ecn_marks": r["fabric"]["ecn_marks"],
        "timeouts": r["transport_stats"]["timeouts"], "errors": simlib.app_errors(r),
        "cmd": r["cmd"],
    }


def window_rates(tl, w_bins):
    """Per sender: (time ms, Gb/s) over sliding windows, for the plot."""
    dt_us = tl["interval_s"] * 1e6
    out = {}
    for s, c in flow_rates(tl).items():
        step = max(1, w_bins // 4)
        xs, ys = [], []
        for i in range(0, len(c) - 1 - w_bins, step):
            xs.append((i + w_bins / 2) * dt_us / 1e3)
            ys.append((c[i + w_bins] - c[i]) * 8 / (w_bins * dt_us * 1e3))
        out[s] = (xs, ys)
    return out


def main():
    out = simlib.outdir("incast")
    # The empty fabric's RTT: one packet, one way, twice.
    probe = simlib.run_all([{"hosts": 2, "topology": "star", "workload": "incast",
                             "size": 4096, "transport": "rocev2", "seed": 1}], "base rtt")[0]
    base_rtt_us = 2 * probe["completion_time_s"] * 1e6
    print(f"base RTT ~ {base_rtt_us:.2f} us")
    configs, labels = [], []
    for n, size in CASES:
        for label, t, extra in VARIANTS:
            configs.append(dict({"hosts": n + 1, "topology": "star", "workload": "incast",
                                 "size": size, "transport": t, "seed": 1, "timeline": BIN,
                                 "timeline_flows": 1}, **extra))
            labels.append((n, label))
    runs = simlib.run_all(configs, "incast")
    rows = [analyse(label, r, n, base_rtt_us) for (n, label), r in zip(labels, runs)]
    for row in rows:
        row["base_rtt_us"] = base_rtt_us
    simlib.write_csv(os.path.join(out, "incast.csv"), rows, list(rows[0].keys()))
    simlib.print_table(rows, [
        ("N", "senders", "{}"), ("variant", "variant", "{}"),
        ("of line rate", "line_rate_fraction", "{:.3f}"),
        ("steady Gb/s", "steady_gbps", "{:.1f}"), ("fair Gb/s", "fair_gbps", "{:.2f}"),
        ("min..max Gb/s", lambda r: f"{r['min_rate_gbps']:.2f}..{r['max_rate_gbps']:.2f}", "{}"),
        ("Jain", "jain", "{:.3f}"), ("W us", "window_us", "{:.0f}"),
        ("to fair us", "time_to_fair_us", "{:.0f}"), ("RTTs", "time_to_fair_rtts", "{:.0f}"),
        ("lost", "packets_lost", "{}"), ("errors", "errors", "{}")],
        f"incast (base RTT {base_rtt_us:.2f} us; time to fair share from the first byte)")

    for n, _ in CASES:
        sel = [(l, r, row) for (nn, l), r, row in zip(labels, runs, rows) if nn == n]
        fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharey=True)
        csv_rows = []
        for ax, (label, r, row) in zip(axes.flat, sel):
            w_bins = round(row["window_us"] / (r["timeline"]["interval_s"] * 1e6))
            wr = window_rates(r["timeline"], w_bins)
            for s, (xs, ys) in sorted(wr.items()):
                ax.plot(xs, ys, lw=0.6, alpha=0.7)
                csv_rows += [{"variant": label, "sender": s, "t_ms": round(x, 4),
                              "gbps": round(y, 3)} for x, y in zip(xs, ys)]
            ax.axhline(row["fair_gbps"], color="black", ls="--", lw=0.8, label="fair share")
            ax.axhspan(0.9 * row["fair_gbps"], 1.1 * row["fair_gbps"], color="gray", alpha=0.15,
                       label="+-10%")
            if row["time_to_fair_us"] is not None:
                ax.axvline((row["t0_us"] + row["time_to_fair_us"]) / 1e3, color="green", lw=0.8,
                           label=f"converged: {row['time_to_fair_us']:.0f} us after t0")
            ax.set_title(f"{label}: J={row['jain']:.3f}, {row['line_rate_fraction']:.2f} "
                         f"of line rate", fontsize=9)
            ax.set_xlabel(f"time (ms), rate over {row['window_us']:.0f}-us windows")
            ax.set_ylabel("per-sender goodput (Gb/s)")
            ax.set_ylim(0, 4 * row["fair_gbps"])
            ax.legend(fontsize=7, loc="upper right")
        fig.suptitle(f"incast {n}->1, {sel[0][1]['size'] // 2**20} MiB per sender")
        simlib.savefig(fig, os.path.join(out, f"incast_{n}.png"))
        simlib.write_csv(os.path.join(out, f"incast_rates_{n}.csv"), csv_rows,
                         ["variant", "sender", "t_ms", "gbps"])


if __name__ == "__main__":
    main()
