#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The VM benchmark (make bench): in one boot of the test VM, ib_write_bw,
# ib_send_bw and ib_write_lat over MetaRoCE and over rdma_rxe on the same
# veth path with netem loss 0, 0.1 %, 1 % and 10 %, plus iperf3 TCP on that
# path as the reference.  Loss 0 runs through netem dropping nothing, so
# lossy/lossless compares like with like; "none" (bandwidth and TCP only)
# is the bare path without a qdisc, to show what netem itself costs.
# Prints a table with ratios and writes
#   results/bench/<stamp>/bench.csv   every measurement
#   results/bench/<stamp>/bench.txt   the table
#   results/bench/<stamp>/bench.png   the plot
# (and results/bench/latest -> <stamp>).
#
#   tools/bench/run.sh [--seconds S] [--losses "none 0 0.1 1 10"]
#                      [--drivers "rxe metaroce"] [--size BYTES] [--rps]
#                      [--repeat N] [--no-pin] [--no-doc]
#
# --repeat N measures everything N times in rounds (at each loss rxe and
# MetaRoCE in turn, in the other order every other round; then TCP; the
# latency runs alternate between the drivers run by run), so a drift of
# the host hits every driver alike; the table shows each figure's median
# and how far the rounds spread.
#
# perftest's server runs on the last CPU and its client on CPU 0 (taskset),
# for both drivers, so that where the two busy-polling processes and
# their softirqs land does not change from run to run.  --no-pin leaves
# placement to the scheduler (--pin, the default, is accepted).
#
# --rps spreads each veth's receive work over every CPU by flow (RPS), as
# a multi-queue NIC's RSS would; by default one CPU receives what it sent.
#
# perftest measures only the middle of a -D run, so compared figures use
# -D 8 or more (the default).  The environment's BENCH_LAT_ITERS (20000)
# sets the iterations of a lossless latency run, BENCH_LAT_PAIRS (10) the
# runs per driver and round at loss 0 and BENCH_LAT_PAIRS_LOSSY (3) at each
# other loss.  A latency run's level varies from run to run more than
# within a run: more runs, not longer ones, measure a mean.  Expect about
# 10 minutes a round.
#
# With the default drivers and losses (and unless --no-doc), the table is
# also written into Documentation/benchmarks.md (tools/bench/doc_table.py).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
seconds=8
losses="none 0 0.1 1 10"
drivers="rxe metaroce"
size=65536
rps=0
repeat=1
pin=1
doc=1
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) seconds=$2; shift 2 ;;
	--losses) losses=$2; shift 2 ;;
	--drivers) drivers=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--rps) rps=1; shift ;;
	--repeat) repeat=$2; shift 2 ;;
	--pin) pin=1; shift ;;
	--no-pin) pin=0; shift ;;
	--no-doc) doc=0; shift ;;
	-h | --help) sed -n '3,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $repeat in
'' | *[!0-9]* | 0) echo "run.sh: --repeat takes a positive number" >&2; exit 2 ;;
esac
[ "$seconds" -ge 8 ] || echo "run.sh: -D $seconds < 8: figures are not comparable" >&2

cd "$top"
. tools/bench/host_lib.sh
bench_prereqs module

stamp=$(date +%Y%m%d-%H%M%S)
out=$top/results/bench/$stamp
mkdir -p "$out"
echo "bench: $drivers, loss $losses %, -D $seconds, $size-byte messages$([ "$rps" = 1 ] && echo ", RPS")$([ "$repeat" -gt 1 ] && echo ", $repeat rounds"); output in $out"

rc=0
"$vm" --timeout 60m --out "$out/vm" -- sh -c \
	"BENCH_CSV=\$METAROCE_OUT/bench.csv BENCH_SECONDS=$seconds \
	 BENCH_LOSSES='$losses' BENCH_DRIVERS='$drivers' BENCH_SIZE=$size \
	 BENCH_RPS=$rps BENCH_REPEAT=$repeat BENCH_PIN=$pin \
	 BENCH_LAT_ITERS=${BENCH_LAT_ITERS:-20000} BENCH_LAT_PAIRS=${BENCH_LAT_PAIRS:-10} \
	 BENCH_LAT_PAIRS_LOSSY=${BENCH_LAT_PAIRS_LOSSY:-3} \
	 tools/bench/vm_bench.sh" || rc=$?
if [ ! -s "$out/vm/bench.csv" ]; then
	echo "bench: the VM produced no measurements (exit $rc); see $out/vm" >&2
	exit 1
fi
cp "$out/vm/bench.csv" "$out/bench.csv"
"${PYTHON:-/usr/bin/python3}" tools/bench/report.py "$out/bench.csv" --table "$out/bench.txt" \
	--plot "$out/bench.png"
ln -sfn "$stamp" "$top/results/bench/latest"
if [ "$doc" = 1 ] && [ "$drivers" = "rxe metaroce" ] && [ "$losses" = "none 0 0.1 1 10" ]; then
	{
		echo "In the test VM (tools/vm, QEMU), $repeat round(s), -D $seconds, $size-byte messages$([ "$rps" = 1 ] && echo ", RPS")$([ "$pin" = 0 ] && echo ", unpinned"):"
		echo
		echo '```'
		cat "$out/bench.txt"
		echo '```'
	} | "${PYTHON:-/usr/bin/python3}" tools/bench/doc_table.py Documentation/benchmarks.md tools/bench/run.sh
fi
echo "bench: $out/bench.csv, $out/bench.txt, $out/bench.png"
exit "$rc"
