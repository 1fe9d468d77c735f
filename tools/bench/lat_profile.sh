#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Where a ping-pong's kernel time goes, per driver: one boot of the test VM
# profiles a pinned ib_write_lat over MetaRoCE and over rdma_rxe with perf's
# cpu-clock sampling (tools/bench/vm_lat_profile.sh) and keeps, per round
# and driver, the samples by CPU and program, by symbol, and the call graphs
# of the symbols over 0.5 %.  Compare the drivers' shares within a boot: in
# TCG a sample lands where the guest next takes an interrupt, so shares are
# by region, not by instruction.
#
#   tools/bench/lat_profile.sh [--rounds N] [--iters N] [--drivers "metaroce rxe"]
#
# Output in results/lat_profile/<stamp>/.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
rounds=1
iters=150000
drivers="metaroce rxe"
# shellcheck source=tools/bench/host_lib.sh
. "$top/tools/bench/host_lib.sh"
bench_lat_opts "$0" 3,14p "$@"
cd "$top"
command -v perf >/dev/null || tools/deps.sh
bench_prereqs module
out=$top/results/lat_profile/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
"$vm" --timeout 30m --out "$out" -- sh -c \
	"LP_ROUNDS=$rounds LP_ITERS=$iters LP_DRIVERS='$drivers' tools/bench/vm_lat_profile.sh"
for f in "$out"/prof_*_sym.txt; do
	echo "== ${f##*/}"
	grep -m1 '^# Samples' "$f"
	grep -v '^#' "$f" | head -n 25
done | tee "$out/summary.txt"
