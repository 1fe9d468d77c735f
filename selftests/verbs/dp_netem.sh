#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The datapath under impairment: netem on both ends of the veth between
# the two namespaces (datapath_lib.sh), then the integrity check (every
# opcode, every byte) and a representative perftest subset; each must
# complete with verified data.  Throughput is reported as TAP comments.
#
#   dp_netem.sh loss1 | loss10 | reorder | duplicate [short]
#
# short: 12 s of integrity and two perftest runs instead of 30 s and six.
# DP_FAMILY=6 runs it over IPv6 GIDs (datapath_lib.sh); either way the
# traffic must have taken that family only, unfragmented (dp_family_check).
# (tests.list runs it through the dp_netem_<case>.sh wrappers.)
. "$(dirname "$0")/datapath_lib.sh"

case=${1:-}
case $case in
loss1) netem="loss 1%" ;;
loss10) netem="loss 10%" ;;
reorder) netem="delay 2ms reorder 25% 50%" ;;
duplicate) netem="duplicate 5%" ;;
*) ksft_fail "usage: $0 loss1|loss10|reorder|duplicate [short]" ;;
esac
short=${2:-}

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
ksft_require_cmd ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat
dp_setup_netns 9000
# shellcheck disable=SC2086 # netem options are words
dp_netem $netem || ksft_fail "netem $netem"
mroce_log "netem on both ends: $netem"
if [ "$DP_FAMILY" = 6 ]; then
	dp_v6_filters || ksft_fail "tc filters counting IPv6 packets"
fi
dp_netstat "$DP_OUT/netstat.before"

# 10% loss: fewer operations per round so each round ends in time.
ops=24
secs=30
[ "$case" = loss10 ] && ops=12
[ "$short" = short ] && secs=12

# A stall leaves a snapshot of both devices' streams (kernel/debugfs.c).
export INTEGRITY_STALL_HOOK="mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; for f in /sys/kernel/debug/metaroce/*/streams /sys/kernel/debug/metaroce/*/peers; do echo \"== \$f\"; cat \"\$f\"; done | sed 's/^/# /' | head -n 400"
ksft_check "integrity under '$netem', IPv$DP_FAMILY, $secs s" \
	dp_integrity -q 8 -o "$ops" -m 1048576 -t "$secs" -T 240 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"

results=$DP_OUT/netem-$case.txt
: >"$results"
run() {
	_desc="$*"
	if dp_perftest "netem_${case}_$(echo "$*" | tr -c 'A-Za-z0-9' _)" "$@"; then
		_v=${DP_BW:-$DP_LAT}
		_u="MB/s"
		[ -n "$DP_LAT" ] && _u=usec
		echo "ok: $_desc: $_v $_u"
		printf '%-40s %12s %s\n' "$_desc" "$_v" "$_u" >>"$results"
	else
		echo "FAIL: $_desc under $netem"
		_ksft_failed=$((_ksft_failed + 1))
	fi
}
if [ "$short" = short ]; then
	run ib_write_bw -s 65536 -q 4 -D 3
	run ib_read_bw -s 65536 -q 4 -D 3
else
	run ib_write_bw -s 65536 -q 4 -D 4
	run ib_write_bw -s 1048576 -q 1 -n 20
	run ib_read_bw -s 65536 -q 4 -D 4
	run ib_send_bw -s 65536 -q 4 -D 4 -b
	run ib_atomic_bw -q 4 -D 4
	run ib_write_lat -s 64 -n 200
fi

mroce_log "perftest under '$netem':"
sed 's/^/#   /' "$results"
dp_a tc -s qdisc show dev "$DP_IF_A" | sed "s/^/# /"
dp_b tc -s qdisc show dev "$DP_IF_B" | sed "s/^/# /"
dp_counters "$DP_DEV_A"
dp_counters "$DP_DEV_B"

# The impairment happened, and the transport recovered from it the way it
# should: without these the test would pass as well on a clean link.
# both NAME: a device counter summed over the two ends.
both() {
	echo $(($(dp_counter "$DP_DEV_A" "$1") + $(dp_counter "$DP_DEV_B" "$1")))
}
# netem's own drop count on both ends (tc -s: "(dropped N, ...").
netem_dropped() {
	{
		dp_a tc -s qdisc show dev "$DP_IF_A"
		dp_b tc -s qdisc show dev "$DP_IF_B"
	} | awk '/netem/ { q = 1 } q && /dropped/ {
		sub(/.*dropped /, ""); sub(/,.*/, ""); s += $0; q = 0 }
		END { print s + 0 }'
}
# The receiving host's own drops: a veth whose peer's input backlog is
# full drops the packet (netif_rx) and counts it as its tx_dropped; the
# transport recovers them as it does netem's.
host_dropped() {
	echo $(($(dp_a cat "/sys/class/net/$DP_IF_A/statistics/tx_dropped") +
		$(dp_b cat "/sys/class/net/$DP_IF_B/statistics/tx_dropped")))
}
data=$(both tx_data)
retx=$(both tx_retransmits)
lost=$(both lost)
spurious=$(both spurious_retransmits)
dups=$(($(both rx_dup) + $(both rx_dup_path)))
dropped=$(netem_dropped)
hdropped=$(host_dropped)
mroce_log "netem dropped $dropped, the hosts' backlogs $hdropped; data packets $data, retransmitted $retx, declared lost $lost, spurious $spurious, duplicates received $dups"
case $case in
loss1 | loss10)
	ksft_check "netem dropped packets" [ "$dropped" -gt 0 ]
	ksft_check "the transport declared packets lost" [ "$lost" -gt 0 ]
	ksft_check "and retransmitted them" [ "$retx" -gt 0 ]
	# Each drop of a data packet costs one retransmission, about.  Not
	# the spurious ones: a loaded guest makes those on a clean link too
	# (3% of the data packets of a 40 s integrity run, seen), more than
	# the drops of a short run at 1% allow for.
	needed=$((retx - spurious))
	ksft_check "retransmissions are of the order of the drops ($needed not spurious)" \
		[ "$needed" -le $(((dropped + hdropped) * 4 + 100)) ]
	;;
duplicate)
	ksft_check "duplicates arrived and were dropped" [ "$dups" -gt 0 ]
	;;
reorder)
	# netem's reorder counts nothing; reordered packets show as losses
	# that the later arrival proves spurious
	ksft_check "the transport saw the reordering" [ "$spurious" -gt 0 ]
	ksft_check "spurious retransmissions stay under 10% of the data" \
		[ "$spurious" -le $((data / 10)) ]
	ksft_check "reordering dropped nothing" [ "$dropped" = 0 ]
	;;
esac
dp_family_check "$DP_OUT/netstat.before"
ksft_exit
