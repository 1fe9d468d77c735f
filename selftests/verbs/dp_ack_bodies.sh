#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ACKs carried by data and the ACK hold (protocol.md §4, §11), both off by
# default: with ack_bodies=1 and ack_hold_us=30 on both devices, the
# integrity check (every opcode both ways, every byte) under 1 % loss at
# MTU 1500, then a ping-pong.  Each must complete with verified data, and
# the counters must show that ACKs rode on data and were held.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
ksft_require_cmd ib_write_lat
dp_setup_netns 1500
# taken when a connection opens: set before any traffic
dp_tunable ack_bodies 1
dp_tunable ack_hold_us 30
dp_netem loss 1% || ksft_fail "netem loss 1%"

ksft_check "integrity with ACK bodies and holds, 1 % loss, MTU 1500" \
	dp_integrity -q 4 -o 16 -m 262144 -t 20 -T 180 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"
dp_netem
if dp_perftest ack_bodies_lat ib_write_lat -s 64 -n 2000; then
	echo "ok: ib_write_lat with ACK holds: typical $DP_LAT usec"
else
	echo "FAIL: ib_write_lat with ACK holds"
	_ksft_failed=$((_ksft_failed + 1))
fi

for d in "$DP_DEV_A" "$DP_DEV_B"; do
	tx=$(dp_counter "$d" tx_ack_bodies)
	rx=$(dp_counter "$d" rx_ack_bodies)
	held=$(dp_counter "$d" ack_holds)
	echo "# $d: tx_ack_bodies $tx rx_ack_bodies $rx ack_holds $held"
	ksft_check "$d carried ACKs on data" test "$tx" -gt 0
	ksft_check "$d received ACKs on data" test "$rx" -gt 0
	ksft_check "$d held ACKs for answers" test "$held" -gt 0
done
dp_counters "$DP_DEV_A"
ksft_exit
