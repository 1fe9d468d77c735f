#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Table and plot of tools/bench/run.sh measurements.

Input: CSV rows driver,loss_pct,test,value,unit,status.  The table has one
row per (test, loss): MetaRoCE, rxe, TCP, and the ratios metaroce/rxe,
metaroce/TCP (bandwidth tests) and lossy/lossless (MetaRoCE's value at this
loss over its value at 0 %, netem dropping nothing; loss "none" is the path
without netem, and its lossy/0% column says what netem itself costs).  For
latency lower is better, so a metaroce/rxe ratio below 1 favours MetaRoCE
there.  With several rounds
(run.sh --repeat) every figure is the median of its rounds, and a last
column gives the range of the rounds' metaroce/rxe ratios.
"""
import argparse
import csv
import statistics
import sys


TESTS = (("ib_write_bw", "MB/s"), ("ib_send_bw", "MB/s"),
         ("ib_write_lat", "usec"), ("ib_write_lat_typ", "usec"),
         ("ib_write_lat_p99", "usec"))


def load(path):
    """(driver, loss, test) -> the values of every round, in order."""
    rounds = {}
    for r in csv.DictReader(open(path)):
        if r["status"] != "ok" or not r["value"]:
            continue
        rounds.setdefault((r["driver"], r["loss_pct"], r["test"]), []).append(float(r["value"]))
    return rounds


def medians(rounds):
    return {k: statistics.median(v) for k, v in rounds.items()}


def ratio_range(rounds, loss, test):
    """min..max of metaroce/rxe over the rounds (latency: the run pairs)
    both completed."""
    mr = rounds.get(("metaroce", loss, test), [])
    rx = rounds.get(("rxe", loss, test), [])
    rs = [a / b for a, b in zip(mr, rx) if b]
    if len(rs) < 2:
        return "-"
    return f"{min(rs):.2f}..{max(rs):.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def fmt(v):
    return "fail" if v is None else f"{v:.2f}"


def table(rounds, losses):
    data = medians(rounds)
    nruns = max((len(v) for v in rounds.values()), default=1)
    # latency has several runs per round (bench_lat); rounds are counted
    # by the other tests
    nrounds = max((len(v) for k, v in rounds.items()
                   if not k[2].startswith("ib_write_lat")), default=1)
    tcp = {l: data.get(("tcp", l, "iperf3")) for l in losses}
    lines = []
    hdr = (f"{'test':<16} {'loss %':>6} {'metaroce':>10} {'rxe':>10} {'tcp':>10}"
           f" {'mr/rxe':>7} {'mr/tcp':>7} {'lossy/0%':>8}"
           + (f" {'mr/rxe range':>12}" if nruns > 1 else ""))
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for test, unit in TESTS:
        if not any(k[2] == test for k in data):
            continue
        base = data.get(("metaroce", "0" if "0" in losses else losses[0], test))
        for l in losses:
            mr = data.get(("metaroce", l, test))
            rx = data.get(("rxe", l, test))
            if l == "none" and mr is None and rx is None:
                continue  # latency is not measured without netem
            t = tcp[l] if unit == "MB/s" else None
            lines.append(
                f"{test:<16} {l:>6} {fmt(mr):>10} {fmt(rx):>10}"
                f" {(fmt(t) if unit == 'MB/s' else '-'):>10}"
                f" {ratio(mr, rx):>7} {(ratio(mr, t) if unit == 'MB/s' else '-'):>7}"
                f" {ratio(mr, base):>8}"
                + (f" {ratio_range(rounds, l, test):>12}" if nruns > 1 else ""))
        lines.append("")
    lines.append("bandwidth in MB/s (perftest average, iperf3 received); "
                 "latency in usec of -n runs, the drivers taking turns run by run: "
                 "ib_write_lat the mean, _typ the median and _p99 the 99th "
                 "percentile of a run's iterations; medians of all runs"
                 + (f" over {nrounds} rounds" if nrounds > 1 else ""))
    return "\n".join(lines)


def plot(data, losses, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tests = [t for t in TESTS[:4] if any(k[2] == t[0] for k in data)]
    fig, axes = plt.subplots(1, len(tests), figsize=(5 * len(tests), 4.5))
    x = list(range(len(losses)))
    for ax, (test, unit) in zip(axes, tests):
        for drv, style in (("metaroce", "o-"), ("rxe", "s--")):
            ys = [data.get((drv, l, test)) for l in losses]
            ax.plot([i for i, y in zip(x, ys) if y], [y for y in ys if y],
                    style, label=drv)
        if unit == "MB/s":
            ys = [data.get(("tcp", l, "iperf3")) for l in losses]
            ax.plot([i for i, y in zip(x, ys) if y], [y for y in ys if y],
                    "^:", label="TCP (iperf3)")
        ax.set_xticks(x)
        ax.set_xticklabels(["no qdisc" if l == "none" else f"{l}%" for l in losses])
        ax.set_xlabel("netem loss, both directions")
        ax.set_ylabel(unit)
        ax.set_yscale("log")
        ax.set_title(test)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("MetaRoCE vs rdma_rxe on the same lossy veth path (test VM)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--table")
    ap.add_argument("--plot")
    a = ap.parse_args()
    rounds = load(a.csv)
    losses = []
    for r in csv.DictReader(open(a.csv)):
        if r["loss_pct"] not in ("-", "") and r["loss_pct"] not in losses:
            losses.append(r["loss_pct"])
    if not losses:
        print("report: no measurements", file=sys.stderr)
        return 1
    t = table(rounds, losses)
    print(t)
    if a.table:
        open(a.table, "w").write(t + "\n")
    if a.plot:
        plot(medians(rounds), losses, a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
