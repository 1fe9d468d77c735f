#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build the protocol core's libFuzzer targets with clang (build-fuzz/,
# METAROCE_FUZZ=ON) and run each for a bounded time from a fresh copy of its
# seed corpus.  Prints TAP, one line per target; exits non-zero if any
# target crashed, leaked, hung, or broke an invariant (or did not build).
#
#   selftests/fuzz/run.sh [target ...]      default: every target
#
# Environment:
#   FUZZ_SECONDS  seconds per target (default 25: 75 s in all)
#   FUZZ_BUILD    build directory (default build-fuzz/)
#   FUZZ_ARGS     extra libFuzzer flags, e.g. "-seed=1"
# Each run keeps its corpus, log and any crash artifact under
# $FUZZ_BUILD/fuzz-run/<target>/; reproduce a crash with
#   $FUZZ_BUILD/selftests/fuzz/<target> <artifact>
# (MROCE_FUZZ_TRACE=1 makes fuzz_conn_rx print every packet and step).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$top/build-fuzz}
secs=${FUZZ_SECONDS:-25}
args=${FUZZ_ARGS:-}
targets=${*:-fuzz_wire fuzz_conn_rx fuzz_sack}

# Longest input worth trying per target: a UDP payload for the decoder
# (an ACK with 64 path blocks and 255 stream entries is ~7.7 KB), record
# programs of a few hundred steps for the connection.
max_len() {
	case $1 in
	fuzz_wire) echo 8192 ;;
	fuzz_conn_rx) echo 16384 ;;
	*) echo 4096 ;;
	esac
}

ntargets=$(echo "$targets" | wc -w)
echo "1..$ntargets"

log=$build/fuzz-build.log
mkdir -p "$build"
if ! CC=clang CXX=clang++ cmake -S "$top" -B "$build" -DMETAROCE_FUZZ=ON \
	>"$log" 2>&1 ||
   ! cmake --build "$build" -j2 --target $targets >>"$log" 2>&1; then
	sed 's/^/# /' "$log" | tail -n 40
	echo "Bail out! the fuzz targets did not build (see $log)"
	exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

n=0
failed=0
for t in $targets; do
	n=$((n + 1))
	run=$build/fuzz-run/$t
	rm -rf "$run"
	mkdir -p "$run/corpus" "$run/artifacts"
	seeds=$top/selftests/fuzz/corpus/$t
	[ -d "$seeds" ] && cp "$seeds"/* "$run/corpus/" 2>/dev/null
	found=$top/selftests/fuzz/found/$t
	[ -d "$found" ] && cp "$found"/* "$run/corpus/" 2>/dev/null
	# shellcheck disable=SC2086
	timeout $((secs * 2 + 120)) "$build/selftests/fuzz/$t" \
		-max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$run/artifacts/" $args "$run/corpus" \
		>"$run/log" 2>&1
	rc=$?
	stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$run/log" | tail -n 1 |
		sed -E 's/^#([0-9]+).*cov: ([0-9]+).*corp: ([0-9]+).*/\1 runs, cov \2, corpus \3/')
	artifacts=$(ls "$run/artifacts" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ -z "$artifacts" ]; then
		echo "ok $n - $t ($secs s: ${stats:-no stats})"
	else
		failed=$((failed + 1))
		echo "not ok $n - $t (exit $rc) ${artifacts:+artifact: $run/artifacts/$artifacts}"
		grep -E 'INVARIANT|ERROR|SUMMARY|runtime error|Assertion|Test unit written' \
			"$run/log" | head -n 20 | sed 's/^/# /'
	fi
done
[ "$failed" -eq 0 ]
