#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Where a ping-pong's slow iterations go: one boot of the test VM runs a
# pinned ib_write_lat over MetaRoCE and over rdma_rxe under ftrace
# (tools/bench/vm_lat_trace.sh), then tools/bench/lat_trace.py splits each
# trace into iterations (client doorbell to client doorbell) and prints,
# for the normal, the 1.5-3x and the >3x-median ones, their time in
# softirqs and the events found in them, most telling first, and the
# longest stops (no event on a CPU for 50 ms or more).
#
#   tools/bench/lat_trace.sh [--rounds N] [--iters N] [--drivers "metaroce rxe"]
#
# Output in results/lat_trace/<stamp>/ (traces, analysis.txt).  Tracing
# costs each iteration a few microseconds; compare the drivers, not the
# figures with untraced runs.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=1
iters=20000
drivers="metaroce rxe"
# shellcheck source=tools/bench/host_lib.sh
. "$top/tools/bench/host_lib.sh"
bench_lat_opts "$0" 3,16p "$@"
cd "$top"
bench_prereqs module
out=$top/results/lat_trace/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
"$vm" --timeout 30m --out "$out" -- sh -c \
	"LT_ROUNDS=$rounds LT_ITERS=$iters LT_DRIVERS='$drivers' tools/bench/vm_lat_trace.sh"
"${PYTHON:-/usr/bin/python3}" tools/bench/lat_trace.py "$out"/trace_*.txt | tee "$out/analysis.txt"
