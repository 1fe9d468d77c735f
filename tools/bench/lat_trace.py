#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Attribute a ping-pong's slow iterations (traces of vm_lat_trace.sh).

An iteration is the time from one client doorbell (ib_uverbs_write on CPU 0)
to the next.  Iterations are grouped by their length against the median:
normal (up to 1.5x), mid (1.5-3x) and slow (over 3x).  For each group: how
many, their mean, the softirq time per CPU, and the server's leg (client
doorbell to the server's next doorbell).  Then, per event kind and CPU, the
share of each group's iterations that contain it, most over-represented in
the slow group first: what the slow iterations have that the normal ones do
not.  Then what each kind of event costs: the time the iterations that met
one took beyond the event-free median.  Last, the stops: gaps of 50 ms or
more between two events of one CPU, and what that CPU did last (within the
run only).
"""
import bisect
import collections
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\S+)\s?(.*)$")
STOP_US = 50000


def kind(name, rest):
    """A short key for one trace event, without addresses or pids."""
    def field(pat):
        m = re.search(pat, rest)
        return m.group(1) if m else "?"

    def task(comm):
        return comm[:9] if comm.startswith("ksoftirqd") else re.sub(r"\d+$", "N", comm)

    if name == "ib_uverbs_write":
        return "db"
    if name in ("softirq_entry", "softirq_exit"):
        return ("si:" if name == "softirq_entry" else "sx:") + field(r"action=(\w+)")
    if name == "local_timer_entry":
        return "lapic"
    if name == "hrtimer_expire_entry":
        return "hrt:" + field(r"function=(\S+)")
    if name == "hrtimer_start":
        return "arm:" + field(r"function=(\S+)")
    if name == "mroce_timer_arm":
        # which deadline, and which timer: the wheel's (a tick of slack
        # or more) or the hrtimer, with more slack than the default 20 us
        # or not
        if "wheel=1" in rest:
            return "mr:%s+wheel" % field(r"what=(\w+)")
        slack = int(field(r"slack=(\d+)") if "slack=" in rest else 0)
        return "mr:%s%s" % (field(r"what=(\w+)"), "+slack" if slack > 1000000 else "")
    if name == "timer_expire_entry":
        return "tmr:" + field(r"function=(\S+)")
    if name == "sched_switch":
        return "sw->" + task(field(r"next_comm=(.+?) next_pid"))
    if name == "sched_wakeup":
        return "wk:" + task(field(r"comm=(.+?) pid"))
    if name == "irq_handler_entry":
        return "irq:" + field(r"name=(\S+)")
    if name == "workqueue_execute_start":
        return "wq:" + field(r"function (\S+)")
    if name.startswith("call_function") or name == "reschedule_entry":
        return "ipi"
    return name


def parse(path):
    ev = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                continue
            _, _, cpu, ts, name, rest = m.groups()
            ev.append((float(ts) * 1e6, int(cpu), kind(name.rstrip(":"), rest),
                       line.rstrip()))
    ev.sort(key=lambda e: e[0])
    return ev


# What every iteration has: its receives and the scheduler tick's own timer.
ROUTINE = {"si:NET_RX", "sx:NET_RX", "arm:tick_sched_timer", "hrt:tick_sched_timer"}


def cost(d, keys):
    """Per event kind (both CPUs): the iterations that met one, their median,
    and the time they took beyond the median of the iterations that met
    nothing else, per iteration of the run.  The shares above say which
    events go with slow iterations; this says what each kind costs, which is
    how a frequent but cheap one (a timer moved with every few writes)
    shows."""
    kinds = [{k.split(":", 1)[1] for k in ks} - ROUTINE for ks in keys]
    plain = [x for x, ks in zip(d, kinds) if not ks]
    if not plain:
        return
    base = statistics.median(plain)
    per = collections.defaultdict(list)
    for x, ks in zip(d, kinds):
        for k in ks:
            per[k].append(x)
    n = len(d)
    print(f"  {len(plain)} iterations met nothing but their receives and ticks' timers:"
          f" median {base:.1f} us")
    print("  iterations that met:                           count  median  beyond it, us/iteration")
    rows = sorted(per.items(), key=lambda kv: -sum(x - base for x in kv[1]))
    for k, v in rows[:14]:
        print(f"    {k:44} {len(v):7} {statistics.median(v):7.1f} "
              f"{sum(x - base for x in v) / n:8.2f}")


def analyse(path):
    ev = parse(path)
    times = [e[0] for e in ev]
    db0 = [e[0] for e in ev if e[2] == "db" and e[1] == 0]
    db1 = [e[0] for e in ev if e[2] == "db" and e[1] != 0]
    if len(db0) < 10:
        print(f"{path}: only {len(db0)} client doorbells")
        return
    iv = list(zip(db0, db0[1:]))
    d = [b - a for a, b in iv]
    med = statistics.median(d)
    print(f"{path}: {len(db0)} client doorbells; iteration median {med:.1f} us,"
          f" mean {statistics.mean(d):.1f} us")

    def contents(i):
        a, b = iv[i]
        lo, hi = bisect.bisect_right(times, a), bisect.bisect_left(times, b)
        keys, si, start = set(), collections.Counter(), {}
        for t, cpu, k, _ in ev[lo:hi]:
            if k.startswith("sx:"):
                if cpu in start:
                    si[cpu] += t - start.pop(cpu)
            elif k != "db":
                if k.startswith("si:"):
                    start[cpu] = t
                keys.add(f"c{cpu}:{k}")
        j = bisect.bisect_right(db1, a)
        leg = db1[j] - a if j < len(db1) and db1[j] < b else None
        return keys, si, leg

    groups = {"normal": [], "mid": [], "slow": []}
    for i, x in enumerate(d):
        groups["normal" if x <= 1.5 * med else "mid" if x <= 3 * med else "slow"].append(i)
    held = [contents(i) for i in range(len(d))]
    share = {}
    for g, idx in groups.items():
        cnt, si, legs = collections.Counter(), collections.Counter(), []
        for i in idx:
            keys, s, leg = held[i]
            cnt.update(keys)
            si.update(s)
            if leg is not None:
                legs.append(leg)
        n = max(1, len(idx))
        share[g] = {k: v / n for k, v in cnt.items()}
        excess = sum(d[i] - med for i in idx) / len(d)
        print(f"  {g:6} {len(idx):6} ({100 * len(idx) / len(d):5.2f} %)"
              f" mean {statistics.mean([d[i] for i in idx]) if idx else 0:8.1f} us,"
              f" adds {excess:5.2f} us/iteration; softirq c0 {si[0] / n:6.1f}"
              f" c1 {si[1] / n:6.1f} us; server leg median"
              f" {statistics.median(legs) if legs else 0:6.1f} us")
    keys = set().union(*share.values())
    rows = sorted(keys, key=lambda k: share["slow"].get(k, 0) - share["normal"].get(k, 0),
                  reverse=True)
    print("  share of iterations with the event:   normal    mid   slow")
    for k in rows[:20]:
        print(f"    {k:36} {share['normal'].get(k, 0):6.3f} {share['mid'].get(k, 0):6.3f}"
              f" {share['slow'].get(k, 0):6.3f}")
    cost(d, [h[0] for h in held])
    last = {}
    for t, cpu, k, line in ev:
        if t < db0[0] or t > db0[-1]:
            continue        # before or after the run: idle CPUs are silent
        if cpu in last and t - last[cpu][0] >= STOP_US:
            print(f"  stop: cpu {cpu} silent {(t - last[cpu][0]) / 1000:.1f} ms after:"
                  f" {last[cpu][1].strip()}")
        last[cpu] = (t, line)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    for path in sys.argv[1:]:
        analyse(path)


if __name__ == "__main__":
    main()
