# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Guest addresses to regions and symbols, for the report of
tools/bench/insn_count.sh.  The guest half
(vm_insn_count.sh) saves vm/kallsyms.txt once, and per variant and round
the modules' bases (modules_NAME_ROUND.txt) and symbols (modsyms_...)."""
import bisect
import os


def load_syms(path):
    out = []
    for line in open(path) if os.path.exists(path) else []:
        f = line.split()
        if len(f) >= 3 and int(f[0], 16):
            out.append((int(f[0], 16), f[2] + (f[3] if len(f) > 3 else "")))
    out.sort()
    return out


def mods_of(d, ksyms, name, rnd):
    """({module: (base, size)}, every symbol) of one variant's round."""
    mods = {}
    p = os.path.join(d, "vm", "modules_%s_%d.txt" % (name, rnd))
    for line in open(p) if os.path.exists(p) else []:
        f = line.split()
        base = [x for x in f if x.startswith("0x")]
        if base:
            mods[f[0]] = (int(base[0], 16), int(f[1]))
    syms = load_syms(os.path.join(d, "vm", "modsyms_%s_%d.txt" % (name, rnd)))
    return mods, sorted(syms + ksyms)


def region(a, mods):
    if a < 0x800000000000:
        return "user"
    for n, (b, sz) in mods.items():
        if b <= a < b + sz:
            return "mod:" + n
    if a >= 0xffffffffc0000000:
        return "modules"
    if a >= 0xffffffff80000000:
        return "kernel"
    if 0xffff888000000000 <= a < 0xffffc88000000000:
        return "directmap"
    if 0xffffc90000000000 <= a < 0xffffe90000000000:
        return "vmalloc/percpu"
    if 0xffffea0000000000 <= a < 0xffffeb0000000000:
        return "vmemmap"
    return "other"


def sym(a, syms):
    i = bisect.bisect_right(syms, (a, "\xff")) - 1
    return syms[i][1] if i >= 0 else "?"


# A ping-pong's critical stretch (insn_plugin.cc, seg=on): from the
# doorbell's system call to the placement of its payload on the other
# side, by the driver's placement function and the how-manyth call of it
# after the doorbell.  rxe's requester copies the payload out of the
# sender's MR with the same function first (no inline data in the
# latency tests), so its placement is the second call.
SEG_START = "ib_uverbs_post_send[ib_uverbs]"
SEG_ENDS = {"metaroce": ("mroce_mr_copy_skb[metaroce]", 1),
            "rxe": ("rxe_mr_copy[rdma_rxe]", 2)}


def seg_bounds(d, name, rnd, drv):
    """"START END NTH NAME" (hex addresses, then the stretch's name) for
    one variant's round, or "".
    Both modules stay loaded: the variant says which driver ran."""
    syms = dict((n, a) for a, n in load_syms(
        os.path.join(d, "vm", "modsyms_%s_%d.txt" % (name, rnd))) +
        load_syms(os.path.join(d, "vm", "kallsyms.txt")))
    start, (end, nth) = SEG_START, SEG_ENDS[drv]
    # IC_SEG_metaroce, IC_SEG_rxe="START END NTH" (symbols as kallsyms
    # names them): another stretch, for that driver's variants
    if os.environ.get("IC_SEG_" + drv):
        start, end, nth = os.environ["IC_SEG_" + drv].split()
    if start not in syms or end not in syms:
        return ""
    return "%x %x %d %s->%s#%s" % (syms[start], syms[end], int(nth), start, end, nth)


if __name__ == "__main__":
    import sys
    print(seg_bounds(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))

