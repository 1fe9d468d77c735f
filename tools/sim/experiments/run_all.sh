#!/bin/sh
# Every simulator experiment, one after the other (about 15 minutes here):
#
#   tools/sim/experiments/run_all.sh [experiment ...]
#
# Builds metaroce-sim in $BUILD (default: build) unless METAROCE_SIM names a
# binary, then runs the named experiments (default: all of them), each
# writing CSV and PNG into results/sim/<experiment>/ and printing its table.
# Seeds are fixed: the same tree gives the same numbers and figures (the
# speed benchmark's wall times excepted).  COPY_FIGURES=1 also copies the
# PNGs to Documentation/img/sim/ for Documentation/sim-results.md.
# JOBS (default 2, at most 2) runs that many simulations at once.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${BUILD:-$repo/build}

if [ -z "${METAROCE_SIM:-}" ]; then
	if [ ! -f "$build/CMakeCache.txt" ]; then
		cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
	fi
	cmake --build "$build" -j2 --target metaroce-sim
	# The benchmark needs Google Benchmark; without it speed.py skips it.
	cmake --build "$build" -j2 --target metaroce-sim-bench 2>/dev/null || true
	METAROCE_SIM=$build/tools/sim/metaroce-sim
	export METAROCE_SIM
fi

experiments=${*:-loss_sweep plane_scaling failures incast paths speed}
python=/usr/bin/python3 # Debian's, with python3-matplotlib
for e in $experiments; do
	echo "=== $e"
	start=$(date +%s)
	"$python" "$here/$e.py"
	echo "=== $e: $(($(date +%s) - start)) s"
done

if [ "${COPY_FIGURES:-0}" = 1 ]; then
	mkdir -p "$repo/Documentation/img/sim"
	for e in $experiments; do
		for png in "$repo"/results/sim/"$e"/*.png; do
			[ -e "$png" ] && cp "$png" "$repo/Documentation/img/sim/"
		done
	done
	echo "figures copied to Documentation/img/sim/"
fi
