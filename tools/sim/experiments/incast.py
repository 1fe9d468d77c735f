#!/usr/bin/python3
"""Incast 16->1 and 64->1: time to fair share and steady-state fairness.

    tools/sim/experiments/incast.py            (seconds)

N senders on one switch (star, 100 Gb/s, 1 MiB per port, ECN at 100 KiB)
each send S bytes to host 0 at t=0: N=16 with S=8 MiB, N=64 with S=2 MiB
(about 11 ms at line rate either way).  MetaRoCE with the receiver's rate
hints (fair-share epoch 100 us) and its grants in the ACCEPTs (every sender
starts paced at capacity / the receiver's connections): the defaults; the
same without grants (--metaroce_grants 0); with a 20-us epoch; without
hints (--metaroce_share_epoch 0, so no grants either); and RoCEv2 with
DCQCN.  Seed 1.

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
The control loop, at the senders (--timeline_senders 1: every departure and
every change of what each sender enforces; --timeline_link h0~p0.sw
--timeline_queues 1: the receiver port's queue at the end of every 2-us bin):
  enforced(s, t)  the rate sender s's transport allows at t, in payload bytes
               per second: min(pacer, window) where pacer = the receiver's
               hint in force (MetaRoCE's pacer spaces packets by (payload +
               40 B header) / hint) or DCQCN's rate (RoCEv2), and window =
               cwnd / srtt (MetaRoCE; srtt = mean over the paths that have a
               sample); a missing limit (no hint yet, no RTT sample yet,
               DCQCN at line rate) is the line rate;
  t1           the first ACK reaching any sender (also: the last sender's
               first ACK);
  settled      the first t from which, until the end of the steady window,
               every sender's enforced rate is within 10% of the fair share
               AND the receiver port's queue is at most the ECN threshold
               (100 KiB) at every bin end;
  time to settle = settled - t1, also in base RTTs (negative: every sender
               was at its share, and the queue at most K, before any ACK came);
  gap rate     a departure's payload / the time since the sender's previous
               departure; per sender and base-RTT bin the median of the gap
               rates of the departures in it (bins without one have none);
               gap-settled = the first t from which every such median is
               within 10% of the fair share (to the steady window's end).
Targets: fair share within 2 RTTs of the first ACKs, J >= 0.95.
Writes results/sim/incast/{incast.csv,incast_<N>.png,incast_rates_<N>.csv,
incast_tx_<N>.png,incast_tx_<N>.csv}.
"""

import bisect
import os
import statistics

import simlib
from simlib import plt

CASES = [(16, "8MiB"), (64, "2MiB")]
BIN = "2us"
VARIANTS = [
    ("MetaRoCE, hints 100us + grants", "metaroce", {}),
    ("MetaRoCE, hints 100us, no grants", "metaroce", {"metaroce_grants": 0}),
    ("MetaRoCE, hints 20us", "metaroce", {"metaroce_share_epoch": "20us"}),
    ("MetaRoCE, no hints", "metaroce", {"metaroce_share_epoch": 0}),
    ("RoCEv2 + DCQCN", "rocev2", {}),
]
PKT_TIME_US = (4096 + 138) * 8 / 100e3  # one MTU frame at 100 Gb/s
WINDOW_PKTS = 20
RECV_LINK = "h0~p0.sw"  # the receiver's link; b -> a is the switch port towards it
ECN_K = 100 << 10       # the fabric's ECN marking threshold (bytes queued)
FRAME = 4096 + 138      # one MTU frame on the wire, bytes
LINE_GBPS = 100.0 * 4096 / FRAME  # payload at line rate: "no limit"
BAND = 0.10
DRAINED = 3 * FRAME     # "drained": at most 3 packets queued (~1 us at line rate)
TX_OPTS = {"timeline_senders": 1, "timeline_link": RECV_LINK, "timeline_queues": 1}


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
        **sender_side(tl, n, fair_gbps, b * dt_us, base_rtt_us),
        "cmd": r["cmd"],
    }


def enforced(snd):
    """Sender s's state log as (t_us list, enforced Gb/s, pacer Gb/s or None,
    window Gb/s or None)."""
    st = snd["states"]
    ts = [t / 1e3 for t in st["t_ns"]]
    pace = [p * 8 / 1e9 if p else None for p in st["pace_Bps"]]
    win = [w * 8 / 1e9 if w else None for w in st["window_Bps"]]
    eff = [min([x for x in (p, w) if x is not None] + [LINE_GBPS]) for p, w in zip(pace, win)]
    return ts, eff, pace, win


def settled_at(ts, vals, ok, t_end):
    """The first t from which ok(value) holds until t_end, for a step function
    (value vals[i] from ts[i] to ts[i + 1]); None if it does not by t_end."""
    last_bad = None
    for i, (t, v) in enumerate(zip(ts, vals)):
        if t >= t_end:
            break
        if not ok(v):
            last_bad = min(ts[i + 1], t_end) if i + 1 < len(ts) else t_end
    if last_bad is None:
        return ts[0] if ts else None
    return None if last_bad >= t_end else last_bad


def gap_medians(snd, rtt_us):
    """Per base-RTT bin with departures: (bin centre us, median gap rate Gb/s)."""
    dep, ln = snd["departure_ns"], snd["departure_len"]
    bins = {}
    for i in range(1, len(dep)):
        g = dep[i] - dep[i - 1]
        if g <= 0:
            continue
        bins.setdefault(int(dep[i] / 1e3 / rtt_us), []).append(ln[i] * 8 / g)  # bytes/ns -> Gb/s
    return [((k + 0.5) * rtt_us, statistics.median(v)) for k, v in sorted(bins.items())]


def sender_side(tl, n, fair_gbps, t_end_us, rtt_us):
    """The control-loop measures (see the header)."""
    senders = [x for x in tl["senders"] if x["departure_ns"]]
    assert len(senders) == n, (len(senders), n)
    acks = [x["first_ack_ns"] / 1e3 for x in senders if x["first_ack_ns"] >= 0]
    t1 = min(acks) if acks else None
    in_band = lambda v: abs(v - fair_gbps) <= BAND * fair_gbps  # noqa: E731
    rate_settled, hint_settled, gap_settled, eff_in_window, gaps_in_window = [], [], [], [], []
    for x in senders:
        ts, eff, pace, _ = enforced(x)
        rate_settled.append(settled_at(ts, eff, in_band, t_end_us))
        hint_settled.append(settled_at(ts, pace, lambda v: v is not None and in_band(v), t_end_us))
        gm = gap_medians(x, rtt_us)
        gap_settled.append(settled_at([t - rtt_us / 2 for t, _ in gm], [v for _, v in gm],
                                      in_band, t_end_us))
    # The receiver port's queue, sampled at the end of every bin.
    dt_us = tl["interval_s"] * 1e6
    link = next(lk for lk in tl["links"] if lk["name"] == RECV_LINK)
    q = link["queue_b_to_a"]
    qts = [(k + 1) * dt_us for k in range(len(q))]
    q_settled = settled_at(qts, q, lambda v: v <= ECN_K, t_end_us)
    q_empty = settled_at(qts, q, lambda v: v <= DRAINED, t_end_us)
    q_settled = None if q_settled is None else q_settled + dt_us  # somewhere in the next bin
    q_empty = None if q_empty is None else q_empty + dt_us
    ecn = tl["ecn_marks"]
    last_mark = max((k for k in range(len(ecn)) if ecn[k] and (k + 1) * dt_us <= t_end_us),
                    default=None)
    rs = None if None in rate_settled else max(rate_settled)
    hs = None if None in hint_settled else max(hint_settled)
    gs = None if None in gap_settled else max(gap_settled)
    settled = None if rs is None or q_settled is None else max(rs, q_settled)
    # What the senders enforce and send once settled (to the steady window's end).
    lo = settled if settled is not None else t_end_us
    for x in senders:
        ts, eff, _, _ = enforced(x)
        i = max(0, bisect.bisect_right(ts, lo) - 1)
        eff_in_window += [v for t, v in zip(ts[i:], eff[i:]) if t < t_end_us]
        dep, ln = x["departure_ns"], x["departure_len"]
        gaps_in_window += [ln[j] * 8 / (dep[j] - dep[j - 1]) for j in range(1, len(dep))
                           if lo <= dep[j] / 1e3 < t_end_us and dep[j] > dep[j - 1]]
    pct = lambda v, p: sorted(v)[min(len(v) - 1, int(p * len(v)))] if v else None  # noqa: E731
    rel = lambda t: None if t is None or t1 is None else t - t1  # noqa: E731
    rtts = lambda t: None if t is None else t / rtt_us  # noqa: E731
    return {
        "t1_first_ack_us": t1, "t1_last_sender_us": max(acks) if len(acks) == n else None,
        "first_departure_us": min(x["departure_ns"][0] for x in senders) / 1e3,
        "hint_settled_us": rel(hs), "rate_settled_us": rel(rs), "queue_below_ecn_us": rel(q_settled),
        "settle_us": rel(settled), "settle_rtts": rtts(rel(settled)),
        "gap_settled_us": rel(gs), "gap_settled_rtts": rtts(rel(gs)),
        "queue_drained_us": rel(q_empty), "queue_peak_kib": max(q) / 1024,
        "queue_settled_max_kib": (max([v for t, v in zip(qts, q) if lo <= t <= t_end_us],
                                      default=0) / 1024),
        "last_ecn_mark_us": None if last_mark is None else rel((last_mark + 1) * dt_us),
        "enforced_min_gbps": min(eff_in_window) if eff_in_window else None,
        "enforced_max_gbps": max(eff_in_window) if eff_in_window else None,
        "gap_p5_gbps": pct(gaps_in_window, 0.05), "gap_median_gbps": pct(gaps_in_window, 0.5),
        "gap_p95_gbps": pct(gaps_in_window, 0.95),
        "gaps_in_band": (sum(in_band(g) for g in gaps_in_window) / len(gaps_in_window)
                         if gaps_in_window else None),
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
                                 "timeline_flows": 1}, **TX_OPTS, **extra))
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
    simlib.print_table(rows, [
        ("N", "senders", "{}"), ("variant", "variant", "{}"),
        ("t1 us", "t1_first_ack_us", "{:.1f}"), ("last 1st ACK", "t1_last_sender_us", "{:.1f}"),
        ("hints in band", "hint_settled_us", "{:.1f}"), ("rates in band", "rate_settled_us", "{:.1f}"), ("q<=K", "queue_below_ecn_us", "{:.0f}"),
        ("settle us", "settle_us", "{:.1f}"), ("RTTs", "settle_rtts", "{:.1f}"),
        ("gaps us", "gap_settled_us", "{:.0f}"), ("RTTs", "gap_settled_rtts", "{:.1f}"),
        ("q peak KiB", "queue_peak_kib", "{:.0f}"), ("q drained us", "queue_drained_us", "{:.0f}"),
        ("q after KiB", "queue_settled_max_kib", "{:.0f}"),
        ("last CE us", "last_ecn_mark_us", "{:.0f}"),
        ("enforced Gb/s", lambda r: "-" if r["enforced_min_gbps"] is None else
         f"{r['enforced_min_gbps']:.2f}..{r['enforced_max_gbps']:.2f}", "{}"),
        ("gap p5/50/95", lambda r: "-" if r["gap_median_gbps"] is None else
         f"{r['gap_p5_gbps']:.2f}/{r['gap_median_gbps']:.2f}/{r['gap_p95_gbps']:.2f}", "{}"),
        ("gaps in band", "gaps_in_band", "{:.3f}")],
        "the control loop at the senders (times after t1, the first ACK at a sender)")

    for n, _ in CASES:
        sel = [(l, r, row) for (nn, l), r, row in zip(labels, runs, rows) if nn == n]
        fig, axes = plt.subplots(2, 3, figsize=(16, 7), sharey=True)
        for ax in axes.flat[len(sel):]:
            ax.set_visible(False)
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
        tx_plot(n, sel, base_rtt_us, out)


def tx_plot(n, sel, rtt_us, out):
    """Per sender: the enforced rate (steps), the departure-gap medians (dots),
    and the receiver port's queue, from t = 0 to the time the plot needs."""
    fig, axes = plt.subplots(2, 3, figsize=(16, 7))
    for ax in axes.flat[len(sel):]:
        ax.set_visible(False)
    csv_rows = []
    for ax, (label, r, row) in zip(axes.flat, sel):
        tl = r["timeline"]
        t1 = row["t1_first_ack_us"] or 0.0
        span = max(1000.0, 2 * ((row["settle_us"] or 0.0) + t1),
                   2 * ((row["queue_drained_us"] or 0.0) + t1))
        span = min(span, row["first_sender_done_ms"] * 1e3)
        for x in tl["senders"]:
            if not x["departure_ns"]:
                continue
            ts, eff, _, _ = enforced(x)
            k = bisect.bisect_right(ts, span)
            ax.step(ts[:k] + [span], eff[:k] + [eff[k - 1]], where="post", lw=0.6, alpha=0.7)
            gm = [(t, v) for t, v in gap_medians(x, rtt_us) if t <= span]
            ax.plot([t for t, _ in gm], [v for _, v in gm], ".", ms=1.5, color="gray", alpha=0.5)
            csv_rows += [{"variant": label, "sender": x["src"], "kind": "enforced",
                          "t_us": round(t, 3), "gbps": round(v, 4)}
                         for t, v in zip(ts[:k], eff[:k])]
            csv_rows += [{"variant": label, "sender": x["src"], "kind": "gap_median",
                          "t_us": round(t, 3), "gbps": round(v, 4)} for t, v in gm]
        f = row["fair_gbps"]
        ax.axhline(f, color="black", ls="--", lw=0.8, label="fair share")
        ax.axhspan((1 - BAND) * f, (1 + BAND) * f, color="gray", alpha=0.15, label="+-10%")
        ax.axvline(t1, color="tab:red", lw=0.8, label=f"t1 (first ACK) {t1:.1f} us")
        if row["settle_us"] is not None:
            ax.axvline(t1 + row["settle_us"], color="green", lw=0.8,
                       label=f"settled {row['settle_us']:.1f} us = "
                             f"{row['settle_rtts']:.1f} RTTs after t1")
        ax.set_ylim(0, 4 * f)
        ax.set_xscale("log")
        ax.set_xlim(1, span)
        ax.set_xlabel(f"time (us, log); base RTT {rtt_us:.2f} us")
        ax.set_ylabel("Gb/s per sender (lines: enforced; dots: gaps)")
        ax.set_title(f"{label}: settled "
                     f"{'never' if row['settle_us'] is None else '%.0f us' % row['settle_us']}"
                     f", queue peak {row['queue_peak_kib']:.0f} KiB", fontsize=9)
        qa = ax.twinx()
        dt_us = tl["interval_s"] * 1e6
        q = next(lk for lk in tl["links"] if lk["name"] == RECV_LINK)["queue_b_to_a"]
        kq = min(len(q), int(span / dt_us) + 1)
        qa.plot([(k + 1) * dt_us for k in range(kq)], [v / 1024 for v in q[:kq]],
                color="tab:purple", lw=0.9, label="receiver port queue")
        qa.axhline(ECN_K / 1024, color="tab:purple", ls=":", lw=0.8, label="ECN threshold")
        qa.set_ylabel("queue (KiB)", color="tab:purple")
        qa.set_ylim(0, max(4 * ECN_K / 1024, 1.05 * row["queue_peak_kib"]))
        qa.grid(False)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = qa.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=6, loc="upper right")
    fig.suptitle(f"incast {n}->1: what the senders enforce (min(hint or DCQCN rate, cwnd/srtt))"
                 f" and the receiver's queue")
    simlib.savefig(fig, os.path.join(out, f"incast_tx_{n}.png"))
    simlib.write_csv(os.path.join(out, f"incast_tx_{n}.csv"), csv_rows,
                     ["variant", "sender", "kind", "t_us", "gbps"])


if __name__ == "__main__":
    main()
