#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report of tools/bench/insn_count.sh: guest instructions per ping-pong
iteration by region and function, per variant and round.  Each run has
two snapshots of the plugin's counts (snaps/a_VARIANT_ROUND, b_...) taken
while it ran; iterations between them are the runs of ib_uverbs_post_send
over two (each side posts once per iteration)."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest_syms import load_syms, mods_of, region, sym  # noqa: E402

d = sys.argv[1]
snaps = os.path.join(d, "snaps")
ksyms = load_syms(os.path.join(d, "vm", "kallsyms.txt"))


def load_snap(path):
    code, execs = collections.Counter(), collections.Counter()
    for line in open(path):
        f = line.split()
        code[int(f[0], 16)] = int(f[1])
        execs[int(f[0], 16)] = int(f[2])
    return code, execs


def diff(a, b):
    out = []
    for x, y in zip(load_snap(a), load_snap(b)):
        y.subtract(x)
        out.append(+y)
    return out


summary = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(os.listdir(snaps)):
    m = re.match(r"b_(.+)_(\d+)$", f)
    if not m or not os.path.exists(os.path.join(snaps, "a" + f[1:])):
        continue
    variant, rnd = m[1], int(m[2])
    label = "%s, round %d" % (variant, rnd)
    if os.path.exists(os.path.join(snaps, "short" + f[1:])):
        print("== %s: the run ended inside the window; skipped" % label)
        continue
    code, execs = diff(os.path.join(snaps, "a" + f[1:]), os.path.join(snaps, f))
    mods, syms = mods_of(d, ksyms, variant, rnd)
    post = {a for a, n in syms if n in ("ib_uverbs_post_send[ib_uverbs]", "ib_uverbs_post_send")}
    iters = sum(execs.get(a, 0) for a in post) / 2.0
    if iters < 100:
        print("== %s: %d iterations in the window; skipped" % (label, iters))
        continue

    def name(a):
        r = region(a, mods)
        return r, (sym(a, syms) if r.startswith(("mod", "kernel")) else "")

    funcs, by_region = collections.Counter(), collections.Counter()
    fblocks, blocks = collections.Counter(), 0.0
    for a, v in code.items():
        k = name(a)
        funcs[k] += v / iters
        by_region[k[0]] += v / iters
        if k[0] != "user":
            fblocks[k] += execs.get(a, 0) / iters
            blocks += execs.get(a, 0) / iters
    kern = sum(v for r, v in by_region.items() if r != "user")
    summary[variant]["instructions but user"].append(kern)
    # blocks run: straight-line stretches between branches
    summary[variant]["blocks but user"].append(blocks)
    print("== %s: %.0f iterations in the window; instructions per iteration:" % (label, iters))
    segs = os.path.join(snaps, "seg_%s_%d" % (variant, rnd))
    if os.path.exists(segs):
        # insn_count.sh --seg: a doorbell's stretch to its placement
        rows = [x.split() for x in open(segs) if x.startswith("S ")]
        ins = sorted(int(r[1]) for r in rows)
        blk = sorted(int(r[2]) for r in rows)
        sn = os.path.join(snaps, "segname_%s_%d" % (variant, rnd))
        what = open(sn).read().strip() if os.path.exists(sn) else "?"
        if ins:
            med = lambda v: v[len(v) // 2]
            summary[variant]["stretch, instructions"].append(med(ins))
            summary[variant]["stretch, blocks"].append(med(blk))
            print("   stretch %s (%d of them): median %d instructions, %d blocks;"
                  " p10-p90 %d-%d instructions" % (what, len(ins), med(ins), med(blk),
                                                   ins[len(ins) // 10], ins[len(ins) * 9 // 10]))
    print("   %-26s %9.0f" % ("all but user", kern))
    print("   %-26s %9.0f" % ("blocks run, all but user", blocks))
    for r, v in by_region.most_common():
        if v >= 50:
            print("   %-26s %9.0f" % (r, v))
    print("   functions:")
    for (r, fn), v in funcs.most_common(32):
        if r != "user":
            print("     %8.0f  %s [%s]" % (v, fn, r))
    print("   functions by blocks run per iteration:")
    for (r, fn), v in fblocks.most_common(int(os.environ.get("IC_BLOCKS", "24"))):
        print("     %8.1f  %s [%s]" % (v, fn, r))

if summary:
    print("== per iteration, mean of rounds:")
    keys = sorted({q for v in summary.values() for q in v})
    w = [max(24, len(q) + 2) for q in keys]
    print("   %-12s" % "" + "".join("%*s" % (n, q) for n, q in zip(w, keys)))
    for variant, s in summary.items():
        print("   %-12s" % variant + "".join(
            "%*.0f" % (n, sum(s[q]) / len(s[q])) if s.get(q) else "%*s" % (n, "-")
            for n, q in zip(w, keys)))
