#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# How many pages a ping-pong iteration touches, as the emulator sees it:
# QEMU's TCG keeps a direct-mapped software TLB per vCPU (indexed by
# virtual page number), and every miss walks the guest's page tables
# (x86_cpu_tlb_fill).  This counts those fills with a uprobe on the QEMU
# binary while the guest (tools/bench/vm_tlb_fills.sh) runs a short and a
# long pinned ib_write_lat per variant and round, and prints per variant
# the fills per iteration of each run (the longest without perftest's
# start and exit to speak of), and of the longest by region (kernel image,
# modules, direct map, vmalloc, user) and the pages that missed most,
# named by the guest's symbols.  A page filled about once per iteration
# and CPU, or more, is evicted between uses: it shares a TLB index with
# another hot page.  The uprobe makes each fill cost microseconds, so the
# latencies printed are not comparable with untraced runs; the counts are.
#
#   tools/bench/tlb_fills.sh [--tb] [--rounds N] [--iters "2000 50000"] NAME=KO[,param=v..]|NAME=rxe ..
#
# With --tb it counts instead the translated-block lookups that miss the
# vCPU's jump cache (4,096 entries, direct-mapped by guest PC) and search
# QEMU's block hash table: every indirect jump and return whose target is
# not in the cache, named by the target's guest symbol.
#
# With --prof [--freq HZ] it samples QEMU's threads instead (perf's
# cpu-clock, default 4000 Hz) and tools/bench/qemu_prof.py reports, for
# the long run's steady middle, the host time per iteration in each QEMU
# function and in the translated guest code.  Both vCPUs spin through a
# ping-pong, so an iteration costs the host about two round trips of vCPU
# time; beside the guest code, what differs between two drivers there is
# the emulator's work: TLB fills, block lookups, translation, timers.
#
#   tools/bench/tlb_fills.sh --prof [--freq HZ] [--rounds N] [--iters ..] NAME=..
#
# Needs root and perf on the host, and uprobes but for --prof (tracefs is
# mounted if needed).
# Output in results/tlb_fills/<stamp>/ (fills.txt or samples.txt,
# report.txt, the VM's logs).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/bench/host_lib.sh"
rounds=2
iters="2000 50000"
what=tlb
freq=4000
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--tb) what=tb; shift ;;
	--prof) what=prof; shift ;;
	--freq) freq=$2; shift 2 ;;
	-h | --help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "tlb_fills.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
# paths as the caller gave them, before the cd
bench_variants_or_tree tlb_fills.sh "$@"
cd "$top"
command -v perf >/dev/null || tools/deps.sh
bench_prereqs module
q=/usr/bin/qemu-system-x86_64
# uprobes need tracefs; --prof samples without them
[ "$what" = prof ] || [ -d /sys/kernel/tracing/events ] ||
	mount -t tracefs nodev /sys/kernel/tracing
out=$top/results/tlb_fills/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
echo "$what" >"$out/what"
# perf stamps samples with CLOCK_MONOTONIC; the guest's marks get the
# host's wall clock as they stream out
python3 -c 'import time; print(time.time() - time.monotonic())' >"$out/clockoff"
perf probe -q -d 'probe_qemu:*' 2>/dev/null || true
if [ "$what" = prof ]; then
	echo "$freq" >"$out/freq"
	event="cpu-clock -F $freq"
elif [ "$what" = tb ]; then
	# qht_lookup_custom(ht, desc, hash, cmp): QEMU 7.2's struct tb_desc
	# starts with the guest PC
	perf probe -q -x "$q" -a 'qht_lookup_custom addr=+0(%si):x64'
	event=probe_qemu:qht_lookup_custom
else
	# x86_cpu_tlb_fill(cs, addr, size, access_type, mmu_idx, ...)
	perf probe -q -x "$q" -a 'x86_cpu_tlb_fill addr=%si:x64 acc=%cx:s32 mmu=%r8:s32'
	event=probe_qemu:x86_cpu_tlb_fill
fi
# shellcheck disable=SC2064 # expand now
trap "perf probe -q -d 'probe_qemu:*' 2>/dev/null; pkill -INT -f 'perf record -q -k monotonic' 2>/dev/null" EXIT
echo "tlb_fills ($what):$variants; $rounds rounds of $iters iterations; output in $out"
"$vm" --timeout 60m --out "$out/vm" -- sh -c \
	"TF_VARIANTS='$variants' TF_ROUNDS=$rounds TF_ITERS='$iters' tools/bench/vm_tlb_fills.sh" 2>&1 |
	while IFS= read -r line; do
		echo "$(date +%s.%N) $line"
		case $line in
		*"MARK ready"*)
			pid=$(pgrep -n qemu-system-x86)
			# shellcheck disable=SC2086 # the event may carry -F
			perf record -q -k monotonic -e $event -p "$pid" \
				-o "$out/perf.data" >/dev/null 2>&1 &
			;;
		esac
	done >"$out/stamped.log"
pkill -INT -f 'perf record -q -k monotonic' 2>/dev/null || true
# perf writes out its buffers before it exits
while pgrep -f 'perf record -q -k monotonic' >/dev/null; do sleep 1; done
if [ "$what" = prof ]; then
	perf script -i "$out/perf.data" -F tid,time,ip,sym,dso 2>/dev/null >"$out/samples.txt"
	report=qemu_prof.py
else
	perf script -i "$out/perf.data" -F tid,time,trace 2>/dev/null >"$out/fills.txt"
	report=tlb_fills.py
fi
rm -f "$out/perf.data"
"${PYTHON:-/usr/bin/python3}" "tools/bench/$report" "$out" | tee "$out/report.txt"
