#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report of tools/bench/tlb_fills.sh --prof: the host time QEMU spends per
ping-pong iteration, by function, per variant (median over rounds), for
the steady middle of each round's longest run."""
import collections
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_syms  # noqa: E402

d = sys.argv[1]
# the middle of a run: perftest's start and exit are left out
SKIP_HEAD, SKIP_TAIL = 2.0, 1.0
freq = float(open(os.path.join(d, "freq")).read())
marks = guest_syms.load_marks(d)

# the longest run of each variant and round, with its mean latency
runs = {}
for (name, rnd, n), e in marks.items():
    m = re.search(r"avg=([\d.]+)", e.get("info", ""))
    if "end" not in e or not m or e["end"] - e["start"] < SKIP_HEAD + SKIP_TAIL + 1:
        continue
    if (name, rnd) not in runs or n > runs[(name, rnd)][0]:
        runs[(name, rnd)] = (n, e["start"] + SKIP_HEAD, e["end"] - SKIP_TAIL, float(m.group(1)))
spans = sorted((a, b, k) for k, (_, a, b, _) in runs.items())


def which(t):
    for a, b, k in spans:
        if a <= t <= b:
            return k
    return None


# group a sample's function: QEMU's named ones as they are, the rest by
# where it ran
def label(sym, dso):
    # QEMU names its translated code in /tmp/perf-PID.map
    if dso in ("[unknown]", "") or dso.startswith(("//anon", "[anon")) or \
            re.search(r"perf-\d+\.map", dso):
        return "<translated guest code>"
    if "kernel" in dso:
        return "<host kernel>"
    if sym in ("[unknown]", ""):
        return "<%s, unnamed>" % os.path.basename(dso)
    return sym.split("+")[0]


counts = collections.defaultdict(collections.Counter)
pat = re.compile(r"\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
for line in open(os.path.join(d, "samples.txt")):
    m = pat.match(line)
    if not m:
        continue
    k = which(float(m.group(2)))
    if k:
        counts[k][label(m.group(4), m.group(5))] += 1

# host µs per iteration: samples / freq over iterations in the span; an
# iteration is a round trip, two of perftest's one-way latencies
per = collections.defaultdict(lambda: collections.defaultdict(list))
lat = collections.defaultdict(list)
tot = collections.defaultdict(list)
for k, c in counts.items():
    n, a, b, avg = runs[k]
    iters = (b - a) / (2 * avg * 1e-6)
    lat[k[0]].append(avg)
    tot[k[0]].append(sum(c.values()) / freq / iters * 1e6)
    for f, v in c.items():
        per[k[0]][f].append(v / freq / iters * 1e6)
names = sorted(per)
if not names:
    sys.exit("qemu_prof.py: no samples inside the runs")


def med(x, rounds):
    return statistics.median(x + [0.0] * (rounds - len(x)))


nr = {v: len(lat[v]) for v in names}
print("host µs per ping-pong iteration (median over rounds), the steady middle of the longest run")
print("%-44s" % "" + "".join("%14s" % v for v in names))
print("%-44s" % "perftest mean latency, µs" + "".join("%14.2f" % statistics.median(lat[v]) for v in names))
print("%-44s" % "QEMU, all threads" + "".join("%14.2f" % statistics.median(tot[v]) for v in names))
fs = collections.Counter()
for v in names:
    for f, x in per[v].items():
        fs[f] = max(fs[f], med(x, nr[v]))
for f, _ in fs.most_common(int(os.environ.get("QP_TOP", "45"))):
    print("%-44s" % f[:44] + "".join("%14.2f" % med(per[v].get(f, []), nr[v]) for v in names))
