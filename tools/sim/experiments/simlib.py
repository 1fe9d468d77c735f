"""Shared glue of the simulator experiments: run metaroce-sim, collect its
JSON, write CSV, print tables, draw plots.

Every run is a fixed command line (seeds included), so every number and
figure can be reproduced from the CSV's `cmd` column alone.

Environment:
  METAROCE_SIM   the binary (default: build/tools/sim/metaroce-sim)
  JOBS           runs in parallel (default 2; the machine has 2 cores)
  OUT            results root (default: results/sim)
  SIM_TABLES     a file every printed table is also appended to, as Markdown
                 (run_all.sh sets it to build Documentation/benchmarks.md)
"""

import csv
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SIM = os.environ.get("METAROCE_SIM", os.path.join(REPO, "build", "tools", "sim", "metaroce-sim"))
JOBS = max(1, min(2, int(os.environ.get("JOBS", "2"))))
OUT_ROOT = os.environ.get("OUT", os.path.join(REPO, "results", "sim"))

# One look for every figure: MetaRoCE blue, RoCEv2 orange.
COLORS = {"metaroce": "tab:blue", "rocev2": "tab:orange"}
plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "font.size": 9,
                     "axes.grid": True, "grid.alpha": 0.3})


def outdir(name):
    d = os.path.join(OUT_ROOT, name)
    os.makedirs(d, exist_ok=True)
    return d


def check_binary():
    if not os.access(SIM, os.X_OK):
        sys.exit(f"metaroce-sim not found at {SIM}: build it (cmake --build build "
                 f"--target metaroce-sim) or set METAROCE_SIM")
    helptext = subprocess.run([SIM, "--help"], capture_output=True, text=True).stdout
    if "--timeline" not in helptext:
        sys.exit(f"{SIM} is older than the experiments (no --timeline): rebuild it")


def command(opts):
    """The argument list for one run; opts is an ordered dict of key -> value
    (a list value repeats the option)."""
    args = [SIM, "--json"]
    for k, v in opts.items():
        for one in (v if isinstance(v, list) else [v]):
            args += [f"--{k}", str(one)]
    return args


def printable(args):
    return " ".join(shlex.quote(a) for a in ["metaroce-sim"] + args[1:])


def run_one(opts):
    args = command(opts)
    t0 = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{printable(args)} failed ({p.returncode}): {p.stderr.strip()}")
    r = json.loads(p.stdout)
    r["cmd"] = printable(args)
    r["wall_s"] = round(time.monotonic() - t0, 2)
    return r


def run_all(opt_list, label=""):
    """Runs every configuration (JOBS at a time); results in input order."""
    check_binary()
    t0 = time.monotonic()
    done = [0]

    def one(o):
        r = run_one(o)
        done[0] += 1
        print(f"  [{done[0]}/{len(opt_list)}] {r['wall_s']:6.1f}s  {r['cmd']}", flush=True)
        return r

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        results = list(pool.map(one, opt_list))
    print(f"{label}: {len(opt_list)} runs in {time.monotonic() - t0:.0f}s", flush=True)
    return results


def app_errors(r):
    """Everything that would be an application-visible error or a
    bookkeeping violation; 0 for a clean run."""
    m, t = r["messages"], r["transport_stats"]
    return (m["expected"] - m["delivered"] + m["duplicate_bytes"] + m["duplicate_deliveries"] +
            m["incomplete_deliveries"] + m["bad_reports"] + t["failed_qps"] +
            t["failed_connections"] + (0 if r["completed"] else 1))


def write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow(row)
    print(f"wrote {path}")


def print_table(rows, cols, title=""):
    """cols: list of (header, key or function, format)."""
    if title:
        print(f"\n{title}")
    cells = [[h for h, _, _ in cols]]
    for row in rows:
        line = []
        for _, k, fmt in cols:
            v = k(row) if callable(k) else row[k]
            line.append(fmt.format(v) if v is not None else "-")
        cells.append(line)
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    for n, line in enumerate(cells):
        print("  ".join(c.rjust(w) for c, w in zip(line, widths)))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    md = os.environ.get("SIM_TABLES")
    if md:
        with open(md, "a") as f:
            if title:
                f.write(f"\n{title[0].upper() + title[1:]}:\n\n")
            for n, line in enumerate(cells):
                f.write("| " + " | ".join(c.replace("|", "\\|") for c in line) + " |\n")
                if n == 0:
                    f.write("|" + "---|" * len(line) + "\n")


def savefig(fig, path):
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"wrote {path}")


def series_gbps(tl, key="delivered_bytes"):
    """A timeline series as (time in ms at interval centres, Gb/s)."""
    dt = tl["interval_s"]
    ys = [b * 8 / dt / 1e9 for b in tl[key]]
    xs = [(i + 0.5) * dt * 1e3 for i in range(len(ys))]
    return xs, ys


def jain(xs):
    s, s2 = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * s2) if s2 > 0 else 0.0
