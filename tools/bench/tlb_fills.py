#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report of tools/bench/tlb_fills.sh: QEMU software-TLB fills per ping-pong
iteration, per variant and round, by region, and the pages that missed most
(with --tb: the block lookups that missed the jump cache, by target)."""
import bisect
import collections
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest_syms  # noqa: E402
from guest_syms import load_syms, region, sym  # noqa: E402

d = sys.argv[1]
marks = guest_syms.load_marks(d)

ksyms = load_syms(os.path.join(d, "vm", "kallsyms.txt"))


def mods_of(name, rnd):
    return guest_syms.mods_of(d, ksyms, name, rnd)


# only what falls in a run's window is kept (the file holds the whole boot)
spans = sorted((e["start"], e["end"]) for e in marks.values() if "end" in e)
starts = [a for a, _ in spans]


def in_run(t):
    i = bisect.bisect_right(starts, t) - 1
    return i >= 0 and t <= spans[i][1]


wf = os.path.join(d, "what")
tb = os.path.exists(wf) and open(wf).read().strip() == "tb"
what = "jump-cache misses" if tb else "fills"
fills = []  # (t, addr, ifetch)
pat = re.compile(r"\s*\d+\s+([\d.]+):.*addr=0x([0-9a-f]+)(?: acc=(-?\d+))?")
for line in open(os.path.join(d, "fills.txt")):
    m = pat.match(line)
    if m and in_run(float(m.group(1))):
        fills.append((float(m.group(1)), int(m.group(2), 16), tb or m.group(3) == "2"))
fills.sort()
times = [f[0] for f in fills]


def window(e):
    return fills[bisect.bisect_left(times, e["start"]):bisect.bisect_right(times, e["end"])]


per_variant = collections.defaultdict(list)
order = []
for (name, rnd) in sorted({(k[0], k[1]) for k in marks}, key=lambda x: (x[1], x[0])):
    ns = sorted(k[2] for k in marks if k[:2] == (name, rnd) and "end" in marks[k])
    if not ns:
        continue
    if name not in order:
        order.append(name)
    mods, syms = mods_of(name, rnd)
    # every run: fills / iterations (the short ones carry perftest's own
    # start and exit, a few hundred thousand fills)
    runs = []
    for n in ns:
        e = marks[(name, rnd, n)]
        runs.append("%d iterations: %.1f per iteration, %s" % (n, len(window(e)) / n, e.get("info", "")))
    n = ns[-1]
    e = marks[(name, rnd, n)]
    if "failed" in e.get("info", ""):
        continue
    sel = window(e)
    per_variant[name].append(len(sel) / n)
    print("== %s, round %d: %s" % (name, rnd, "; ".join(runs)))
    reg = collections.Counter()
    pages = collections.Counter()
    for _, a, ifx in sel:
        reg[(region(a, mods), "code" if ifx else "data")] += 1
        pages[(a >> 12, ifx)] += 1
    for (r, kind), c in sorted(reg.items(), key=lambda x: -x[1]):
        if c / n >= 0.2:
            print("   %-22s %-5s %7.2f" % (r, kind, c / n))
    hot = [(c / n, p, ifx) for (p, ifx), c in pages.items() if c / n >= 0.3]
    print("   pages with %s 0.3 times per iteration or more: %d" % (what, len(hot)))
    for v, p, ifx in sorted(hot, reverse=True)[:20]:
        a = p << 12
        r = region(a, mods)
        print("     %016x %-4s %5.2f  %-16s %s" % (a, "code" if ifx else "data", v, r,
                                                  sym(a, syms) if r.startswith(("mod", "kernel")) else ""))
    if tb:
        fns = collections.Counter()
        for _, a, _ in sel:
            r = region(a, mods)
            fns[sym(a, syms) if r.startswith(("mod", "kernel")) else r] += 1
        print("   lookups by the target's function, per iteration:")
        for f, c in fns.most_common(int(os.environ.get("TF_FUNCS", "30"))):
            print("     %7.2f  %s" % (c / n, f))
print("\n%s per iteration of the longest runs, median (range) over rounds:" % what)
for name in order:
    x = per_variant[name]
    print("  %-16s %7.1f (%.1f-%.1f), %d rounds" % (name, statistics.median(x), min(x), max(x), len(x)))
