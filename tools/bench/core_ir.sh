#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Instructions per packet event of metaroce-core-bench's hot paths, counted
# by callgrind: exact and independent of machine load, so a regression
# shows even on a shared box where nanoseconds are noisy.  Only the
# measured calls are counted (--toggle-collect on run_measured).
#
#   tools/bench/core_ir.sh [build-dir]     default: build-bench
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$top/build-bench}/tools/bench/metaroce-core-bench
[ -x "$bin" ] || { echo "core_ir: build $bin first (Release)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "core_ir: needs valgrind" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '%-16s %12s %10s %12s\n' benchmark instructions events per-event
for b in TxWrite4K RxAckSack RxWrite4K RxWrite4KCopy TxAck; do
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" \
		--toggle-collect='*run_measured*' "$bin" \
		--benchmark_filter="^BM_$b/" --benchmark_min_time=0.05 \
		>"$out/log" 2>/dev/null
	ev=$(sed -n 's/.*events_all=\([0-9.]*\)\([kM]*\).*/\1 \2/p' "$out/log" |
		awk '{ m = $2 == "k" ? 1e3 : $2 == "M" ? 1e6 : 1; printf "%.0f", $1 * m }')
	ir=$(callgrind_annotate "$out/cg" | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
	printf '%-16s %12s %10s %12.0f\n' "$b" "$ir" "$ev" "$(echo "$ir $ev" | awk '{ print $1 / $2 }')"
done
