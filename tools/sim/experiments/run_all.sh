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
# PNGs to Documentation/img/sim/.  Run with every experiment (the default),
# or with DOC=1, it rewrites the simulator's tables in
# Documentation/benchmarks.md (tools/bench/doc_table.py; DOC=0: never).
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

all="loss_sweep plane_scaling failures incast paths speed"
experiments=${*:-$all}
[ "$experiments" = "$all" ] && doc=${DOC:-1} || doc=${DOC:-0}
out=${OUT:-$repo/results/sim}
python=/usr/bin/python3 # Debian's, with python3-matplotlib
for e in $experiments; do
	echo "=== $e"
	start=$(date +%s)
	mkdir -p "$out/$e"
	: >"$out/$e/tables.md"
	SIM_TABLES=$out/$e/tables.md "$python" "$here/$e.py"
	echo "=== $e: $(($(date +%s) - start)) s"
done

# title EXPERIMENT: the heading of its tables in benchmarks.md
title() {
	case $1 in
	loss_sweep) echo "Random loss (loss_sweep.py)" ;;
	plane_scaling) echo "Plane scaling (plane_scaling.py)" ;;
	failures) echo "Link and plane failure (failures.py)" ;;
	incast) echo "Incast (incast.py)" ;;
	paths) echo "Unequal paths (paths.py)" ;;
	speed) echo "Simulator speed (speed.py)" ;;
	*) echo "$1" ;;
	esac
}
if [ "$doc" = 1 ]; then
	for e in $experiments; do
		printf '\n#### %s\n' "$(title "$e")"
		cat "$out/$e/tables.md"
	done | "$python" "$repo/tools/bench/doc_table.py" \
		"$repo/Documentation/benchmarks.md" tools/sim/experiments/run_all.sh
fi

if [ "${COPY_FIGURES:-0}" = 1 ]; then
	mkdir -p "$repo/Documentation/img/sim"
	for e in $experiments; do
		for png in "$repo"/results/sim/"$e"/*.png; do
			[ -e "$png" ] && cp "$png" "$repo/Documentation/img/sim/"
		done
	done
	echo "figures copied to Documentation/img/sim/"
fi
