#!/usr/bin/python3
"""How fast the simulator runs here (a benchmark, not a test).

    tools/sim/experiments/speed.py             (1-2 minutes here)

1. metaroce-sim-bench (Google Benchmark, one core): the event queue alone
   (hold model) and whole runs, events per CPU second.
2. The wall time of a 64-node, 1 GiB ring all-reduce over MetaRoCE (target:
   under 2 minutes here), and of the same over RoCEv2, with --timing.
Runs one thing at a time (JOBS is ignored) so the figures are per core.
Wall times depend on what else the machine is doing: the load average is
recorded beside them.
Writes results/sim/speed/{speed.csv,bench.json}.
"""

import json
import os
import subprocess

import simlib

BENCH = os.environ.get("METAROCE_SIM_BENCH",
                       os.path.join(os.path.dirname(simlib.SIM), "metaroce-sim-bench"))


def main():
    out = simlib.outdir("speed")
    simlib.check_binary()
    rows = []
    if os.access(BENCH, os.X_OK):
        p = subprocess.run([BENCH, "--benchmark_format=json"], capture_output=True, text=True,
                           check=True)
        with open(os.path.join(out, "bench.json"), "w") as f:
            f.write(p.stdout)
        for b in json.loads(p.stdout)["benchmarks"]:
            rate = b.get("events_per_s", b.get("items_per_second"))
            rows.append({"what": b["name"], "events_per_cpu_s": rate,
                         "cpu_s": b["cpu_time"] / (1e3 if b["time_unit"] == "ms" else 1e9),
                         "wall_s": None, "events": None, "load": os.getloadavg()[0],
                         "cmd": os.path.basename(BENCH)})
    else:
        print(f"{BENCH} not built (needs libbenchmark-dev): skipping the micro-benchmarks")
    for t in ("metaroce", "rocev2"):
        args = simlib.command({"hosts": 64, "workload": "allreduce", "size": "1GiB",
                               "transport": t, "seed": 1}) + ["--timing"]
        load = os.getloadavg()[0]
        r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        rows.append({"what": f"64-node 1 GiB ring all-reduce, {t}",
                     "events_per_cpu_s": r["events_per_s"], "cpu_s": None,
                     "wall_s": r["wall_time_s"], "events": r["events"], "load": load,
                     "cmd": simlib.printable(args)})
        print(f"  {t}: {r['wall_time_s']:.1f} s wall, {r['events']} events, "
              f"{r['events_per_s'] / 1e6:.2f} M events/s, completed {r['completed']}, "
              f"{r['line_rate_fraction']:.3f} of line rate", flush=True)
    simlib.write_csv(os.path.join(out, "speed.csv"), rows,
                     ["what", "events_per_cpu_s", "cpu_s", "wall_s", "events", "load", "cmd"])
    simlib.print_table(rows, [
        ("what", "what", "{}"), ("M events/s", lambda r: r["events_per_cpu_s"] / 1e6, "{:.2f}"),
        ("wall s", "wall_s", "{:.1f}"), ("load", "load", "{:.1f}")], "simulator speed")


if __name__ == "__main__":
    main()
