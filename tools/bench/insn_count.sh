#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest instructions per ping-pong iteration, by driver and by function.
# A QEMU plugin (insn_plugin.cc) counts the instructions each translated
# block runs; the guest (tools/bench/vm_insn_count.sh) runs one long pinned
# ib_write_lat per variant and round, and the host snapshots the counts
# twice inside it, WAIT seconds after its start mark and SPAN seconds
# later: a window of steady ping-pong without perftest's start and exit.
# Iterations in the window are the runs of ib_uverbs_post_send (two per
# iteration, one per side).  An instruction count does not depend on how
# fast the host runs the guest, so it compares what two drivers' code costs
# where a latency cannot.  User space spins while it waits, so its count
# follows time, not work; the report sets it apart.
#
#   tools/bench/insn_count.sh [--seg] [--rounds N] [--iters N] [--window "WAIT SPAN"]
#                             NAME=KO[,param=v..]|NAME=rxe ..
#
# With --seg the plugin also measures each doorbell's critical stretch:
# the instructions and blocks from the system call to the placement of
# its payload on the other side, on the doorbell's CPU (guest_syms.py,
# seg_bounds).  The report gives their median per variant.  A callback
# per block: the guest runs a few times slower.
#
# Output in results/insn_count/<stamp>/ (report.txt, snapshots, VM logs).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tools/bench/host_lib.sh"
rounds=2
iters=300000
window="5 3"
seg=
while [ $# -gt 0 ]; do
	case $1 in
	--seg) seg=,seg=on; shift ;;
	--rounds) rounds=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	-h | --help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "insn_count.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
# paths as the caller gave them, before the cd
bench_variants_or_tree insn_count.sh "$@"
cd "$top"
bench_prereqs module
cmake --build "${BUILD:-$PWD/build}" -j2 --target metaroce-insn-plugin >/dev/null
plugin=${BUILD:-$PWD/build}/tools/bench/metaroce-insn-plugin.so
out=$top/results/insn_count/$(date +%Y%m%d-%H%M%S)
snaps=$out/snaps
mkdir -p "$snaps"
fifo=$out/ctl.fifo
mkfifo "$fifo"
# shellcheck disable=SC2086 # two words
set -- $window
wait_s=$1
span_s=$2
echo "insn_count:$variants; $rounds rounds of $iters iterations, window $wait_s+$span_s s; output in $out"
# ctl LINE: one command to the plugin
ctl() {
	timeout 60 sh -c "echo '$1' >'$fifo'"
}
# snap FILE: the plugin writes the counts to $snaps/FILE; wait for it
snap() {
	ctl "snap $snaps/$1" &&
		timeout 60 sh -c "while [ ! -e '$snaps/$1' ]; do sleep 0.05; done" ||
		echo "insn_count.sh: no snapshot $1 (is the plugin loaded?)" >&2
}
# driver NAME: metaroce or rxe, the variant's
driver() {
	for v in $variants; do
		[ "${v%%=*}" = "$1" ] || continue
		[ "${v#*=}" = rxe ] && echo rxe || echo metaroce
		return
	done
}
# window LABEL: both snapshots inside the run, or the label is marked short
window() {
	sleep "$wait_s"
	if [ -n "$seg" ]; then
		b=$("${PYTHON:-/usr/bin/python3}" tools/bench/guest_syms.py "$out" \
			"${1%_*}" "${1##*_}" "$(driver "${1%_*}")")
		# shellcheck disable=SC2086 # words
		if [ -n "$b" ] && set -- "$1" $b; then
			ctl "seg $2 $3 $4"
			echo "$5" >"$snaps/segname_$1"
		else
			ctl "seg 0 0 1"	# the last variant's bounds: off
		fi
	fi
	snap "a_$1"
	[ -z "$seg" ] || ctl "segdump $snaps/drop_$1"
	sleep "$span_s"
	snap "b_$1"
	[ -z "$seg" ] || ctl "segdump $snaps/seg_$1"
	[ ! -e "$snaps/ended_$1" ] || touch "$snaps/short_$1"
}
"$vm" --timeout 90m --accel tcg --qemu-plugin "$plugin,ctl=$fifo$seg" --out "$out/vm" -- sh -c \
	"TF_VARIANTS='$variants' TF_ROUNDS=$rounds TF_ITERS='$iters' tools/bench/vm_insn_count.sh" 2>&1 |
	{ while IFS= read -r line; do
		echo "$line"
		case $line in
		"MARK start "*)
			# shellcheck disable=SC2086 # words
			set -- $line
			window "$3_$4" &
			;;
		"MARK end "*)
			# shellcheck disable=SC2086 # words
			set -- $line
			touch "$snaps/ended_$3_$4"
			;;
		esac
	done; wait; } >"$out/marks.log"
rm -f "$fifo"
"${PYTHON:-/usr/bin/python3}" tools/bench/insn_count.py "$out" | tee "$out/report.txt"
