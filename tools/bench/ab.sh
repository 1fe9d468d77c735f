#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A/B test of metaroce.ko builds or parameters in one boot of the test VM:
# each variant is loaded in turn on the same veth path and runs the same
# perftest set at each loss, for N rounds; prints every variant's median
# per test and loss.  For deciding a change in the test VM, where single
# runs swing by +-30% and two boots differ more than two variants in one
# boot.  For a latency test it adds each run's average / typical: a slow
# run scales both, so the ratio shows a change in the tail that the
# averages alone hide (its spread is a few percent, the averages' tens).
#
#   tools/bench/ab.sh [--seconds S] [--losses "0 1"] [--repeat N]
#                     [--tests "ib_write_bw:65536 ib_write_bw:65536:-b ..."] [--lat-iters N] [--pin]
#                     NAME=KO[,param=v..]..
#
#   tools/bench/ab.sh base=/tmp/old/metaroce.ko new=metaroce.ko \
#                     nohint=metaroce.ko,capacity_mbps=1000000
#
# A variant KO of "rxe" runs rdma_rxe instead, as the reference.
# Output in results/ab/<stamp>/ (ab.csv, the VM's logs).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
seconds=8
losses="0 1"
repeat=2
tests="ib_write_bw:65536 ib_send_bw:65536 ib_write_lat:64"
lat_iters=5000
pin=0
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--losses) losses=$2; shift 2 ;;
	--repeat) repeat=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	--pin) pin=1; shift ;;
	-h | --help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "ab.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "ab.sh: no variants (NAME=KO[,param=value..])" >&2; exit 2; }
# paths as the caller gave them, before the cd
. "$top/tools/bench/host_lib.sh"
bench_variants ab.sh "$@"
cd "$top"
bench_prereqs ""
out=$top/results/ab/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "ab:$variants; loss $losses %, -D $seconds, $repeat rounds; output in $out"
rc=0
"$vm" --timeout 90m --out "$out/vm" -- sh -c \
	"AB_CSV=\$METAROCE_OUT/ab.csv AB_SECONDS=$seconds AB_LOSSES='$losses' \
	 AB_REPEAT=$repeat AB_TESTS='$tests' AB_LAT_ITERS=$lat_iters AB_PIN=$pin AB_VARIANTS='$variants' \
	 tools/bench/vm_ab.sh" || rc=$?
[ -s "$out/vm/ab.csv" ] || { echo "ab: no measurements (exit $rc); see $out/vm" >&2; exit 1; }
cp "$out/vm/ab.csv" "$out/ab.csv"
"${PYTHON:-/usr/bin/python3}" - "$out/ab.csv" <<'PY'
import csv, statistics, sys
from collections import defaultdict
vals, ctr, order = defaultdict(list), defaultdict(list), []
byround = defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])):
    if r["variant"] not in order:
        order.append(r["variant"])
    if r["test"].startswith("counter:"):
        ctr[(r["variant"], r["test"][8:])].append(r["value"])
    elif r["status"] == "ok":
        vals[(r["test"], r["loss_pct"], r["variant"])].append(float(r["value"]))
        byround[(r["test"], r["loss_pct"], r["variant"])][r["round"]] = float(r["value"])
# A latency run's level (Documentation/benchmarks.md) scales its average and its
# typical alike; their ratio, per run, isolates the tail and varies far less.
for (t, l, v), avg in list(byround.items()):
    if t.endswith(":avg"):
        typ = byround.get((t[:-4] + ":typ", l, v), {})
        x = [avg[k] / typ[k] for k in avg if typ.get(k)]
        if x:
            vals[(t + "/typ", l, v)] = x
keys = sorted({(t, l) for t, l, _ in vals})
print("%-24s %6s " % ("test", "loss%") + " ".join("%22s" % v for v in order))
for t, l in keys:
    cells = []
    for v in order:
        x = vals.get((t, l, v), [])
        f = "%8.3f (%5.2f-%5.2f)" if t.endswith("/typ") else "%8.1f (%5.0f-%5.0f)"
        cells.append(f % (statistics.median(x), min(x), max(x)) if x else "%22s" % "-")
    print("%-24s %6s " % (t, l) + " ".join(cells))
for (v, c), x in sorted(ctr.items()):
    if any(s not in ("0/0",) for s in x):
        print("counter %-18s %-10s %s" % (c, v, " ".join(x)))
PY
