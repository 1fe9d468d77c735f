#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Report of tools/bench/insn_count.sh: guest instructions per ping-pong
iteration by region and function, per variant and round; with --pages,
the pages an iteration's loads and stores touch, by region.  Each run has
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
# accesses per iteration that make a data page part of an iteration's set
HOT = 0.5


pcs = {}  # data page -> the instruction of its last access


def load_snap(path):
    code, execs, data = collections.Counter(), collections.Counter(), collections.Counter()
    wins = collections.Counter()  # page -> windows it was accessed in; "W": all, "A": accesses
    jl, jm, jat = collections.Counter(), collections.Counter(), collections.Counter()
    for line in open(path):
        f = line.split()
        if f[0] == "J":
            jl[int(f[1])], jm[int(f[1])] = int(f[2]), int(f[3])
        elif f[0] == "M":
            jat[int(f[1], 16)] = int(f[2])
        elif f[0] == "W":
            wins["W"], wins["A"] = int(f[1]), int(f[2])
        elif f[0] == "D":
            page = int(f[1], 16) << 12
            data[page] = int(f[2])
            pcs[page] = int(f[3], 16)
            wins[page] = int(f[4])
        else:
            code[int(f[0], 16)] = int(f[1])
            execs[int(f[0], 16)] = int(f[2])
    return code, execs, data, wins, jl, jm, jat


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
    code, execs, data, wins, jl, jm, jat = diff(os.path.join(snaps, "a" + f[1:]), os.path.join(snaps, f))
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
    # TCG pays per block as well as per instruction: a block that ends in
    # a return or an indirect jump looks its successor up
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
    if jm:
        ms = [jm[k] / iters for k in sorted(jl)]
        summary[variant]["jump-cache misses"].append(ms[0])
        summary[variant]["misses, mean of placements"].append(sum(ms) / len(ms))
        print("   jump-cache lookups per iteration %.0f; misses %.1f in this placement of the"
              " modules, %.1f mean of %d placements (%.1f-%.1f)" % (
                  jl[0] / iters, ms[0], sum(ms) / len(ms), len(ms), min(ms), max(ms)))
        byfn = collections.Counter()
        for a, v in jat.items():
            r, fn = name(a)
            byfn[fn or r] += v / iters
        print("   jump-cache misses by the target's function, per iteration:")
        for fn, v in byfn.most_common(int(os.environ.get("IC_JC", "30"))):
            print("     %7.2f  %s" % (v, fn))
    if not data:
        continue
    hot = sorted((a for a, v in data.items() if v / iters >= HOT and a >= 0x800000000000),
                 key=lambda a: -data[a])
    # the mean distinct pages of a window of each vCPU's accesses
    nw = float(wins["W"])
    ws = collections.Counter()
    for a, v in wins.items():
        if isinstance(a, int):
            ws[region(a, mods) if a >= 0x800000000000 else "user"] += v / nw
    kws = sum(v for r, v in ws.items() if r != "user")
    summary[variant]["kernel pages/window"].append(kws)
    print("   data accesses per iteration %.0f; distinct pages a window of a vCPU's accesses"
          " touches (%d windows): kernel %.1f, user %.1f" % (wins["A"] / iters, nw, kws, ws["user"]))
    for r, v in ws.most_common():
        if r != "user" and v >= 0.5:
            print("     window %-17s %6.1f" % (r, v))
    print("   pages by the function of their last access, distinct per window:")
    owners = collections.Counter()
    for a, v in wins.items():
        if isinstance(a, int) and a >= 0x800000000000:
            owners[name(pcs[a])[1] or region(a, mods)] += v / nw
    for fn, v in owners.most_common(40):
        print("     %6.2f  %s" % (v, fn))
    cpages = collections.Counter()
    for a, v in code.items():
        cpages[a >> 12 << 12] += v
    hot_code = [a for a, v in cpages.items() if v / iters >= 10 and a >= 0x800000000000]
    summary[variant]["kernel data pages"].append(len(hot))
    summary[variant]["kernel code pages"].append(len(hot_code))
    print("   kernel data pages with %.1f accesses per iteration or more: %d; code pages"
          " running 10 instructions per iteration or more: %d" % (HOT, len(hot), len(hot_code)))
    for r, n in collections.Counter(region(a, mods) for a in hot).most_common():
        print("     data %-19s %4d" % (r, n))
    for r, n in collections.Counter(region(a, mods) for a in hot_code).most_common():
        print("     code %-19s %4d" % (r, n))
    print("   the data pages accessed most (a ring walked through is here, not in the windows):")
    for a in hot[:int(os.environ.get("IC_PAGES", "30"))]:
        r = region(a, mods)
        print("     %x %8.1f  %-16s %-30s last: %s" % (
            a, data[a] / iters, r, sym(a, syms) if r.startswith(("mod", "kernel")) else "",
            name(pcs[a])[1] if a in pcs else "?"))

if summary:
    print("== per iteration, mean of rounds:")
    keys = sorted({q for v in summary.values() for q in v})
    w = [max(24, len(q) + 2) for q in keys]
    print("   %-12s" % "" + "".join("%*s" % (n, q) for n, q in zip(w, keys)))
    for variant, s in summary.items():
        print("   %-12s" % variant + "".join(
            "%*.0f" % (n, sum(s[q]) / len(s[q])) if s.get(q) else "%*s" % (n, "-")
            for n, q in zip(w, keys)))
