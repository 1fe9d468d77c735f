#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Where the emulator's own time goes in a ping-pong, per driver: the host
# samples QEMU's threads (perf, cpu-clock) while the guest
# (tools/bench/vm_tlb_fills.sh) runs a short and a long pinned
# ib_write_lat per variant and round, and the report gives, for the long
# run's steady middle, the host time per iteration in each QEMU function
# and in the translated guest code itself (perf's [unknown]/anon).  Both
# vCPUs spin through a ping-pong, so an iteration costs the host about two
# round trips of vCPU time; what differs between two drivers there, beside
# the guest code, is the emulator's work: software-TLB fills and victim
# swaps, block lookups, translation, timers and interrupts.
#
#   tools/bench/qemu_prof.sh [--rounds N] [--iters "2000 50000"] [--freq HZ] NAME=KO[,param=v..]|NAME=rxe ..
#
# Needs root and perf on the host.  Output in results/qemu_prof/<stamp>/
# (samples.txt, report.txt, the VM's logs).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/bench/host_lib.sh"
rounds=2
iters="2000 50000"
freq=4000
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--freq) freq=$2; shift 2 ;;
	-h | --help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "qemu_prof.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
# paths as the caller gave them, before the cd
bench_variants_or_tree qemu_prof.sh "$@"
cd "$top"
command -v perf >/dev/null || tools/deps.sh
bench_prereqs module
out=$top/results/qemu_prof/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
# perf stamps samples with CLOCK_MONOTONIC; the guest's marks get the
# host's wall clock as they stream out
python3 -c 'import time; print(time.time() - time.monotonic())' >"$out/clockoff"
echo "$freq" >"$out/freq"
trap "pkill -INT -f 'perf record -q -k monotonic -e cpu-clock' 2>/dev/null" EXIT
echo "qemu_prof:$variants; $rounds rounds of $iters iterations, $freq Hz; output in $out"
"$vm" --timeout 60m --out "$out/vm" -- sh -c \
	"TF_VARIANTS='$variants' TF_ROUNDS=$rounds TF_ITERS='$iters' tools/bench/vm_tlb_fills.sh" 2>&1 |
	while IFS= read -r line; do
		echo "$(date +%s.%N) $line"
		case $line in
		*"MARK ready"*)
			pid=$(pgrep -n qemu-system-x86)
			perf record -q -k monotonic -e cpu-clock -F "$freq" -p "$pid" \
				-o "$out/perf.data" >/dev/null 2>&1 &
			;;
		esac
	done >"$out/stamped.log"
pkill -INT -f 'perf record -q -k monotonic -e cpu-clock' 2>/dev/null || true
# perf writes out its buffers before it exits
while pgrep -f 'perf record -q -k monotonic -e cpu-clock' >/dev/null; do sleep 1; done
perf script -i "$out/perf.data" -F tid,time,ip,sym,dso 2>/dev/null >"$out/samples.txt"
rm -f "$out/perf.data"
"${PYTHON:-/usr/bin/python3}" tools/bench/qemu_prof.py "$out" | tee "$out/report.txt"
