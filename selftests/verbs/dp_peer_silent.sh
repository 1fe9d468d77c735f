#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A peer that goes silent mid-transfer (netem drops everything, both ways;
# topology in datapath_lib.sh).  The sender must declare its connection dead
# after dead_ms and three rounds of unanswered RTOs, count it (conn_failed),
# log the cause, and fail the transfer with retry exceeded; once the path
# is back, a new transfer opens a new connection and completes at the first
# try (the other end moves its fresh QP off its stale connection).
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd ib_write_bw dmesg
dp_setup_netns 9000
param=/sys/module/metaroce/parameters/dead_ms
old=$(cat "$param")
# taken when a connection opens: before the first QP
echo 500 >"$param"
mroce_defer "echo $old > $param"

failed_a() { [ "$(dp_counter "$DP_DEV_A" conn_failed)" -ge 1 ]; }
flowing() { [ "$(dp_counter "$DP_DEV_A" tx_data)" -ge 2000 ]; }

(
	DP_PERFTEST_TIMEOUT=60
	dp_perftest silent ib_write_bw -s 65536 -q 2 -D 20
	echo $? >"$DP_OUT/silent.rc"
) >"$DP_OUT/silent.out" 2>&1 &
bg=$!
ksft_check "traffic flows before the silence" mroce_wait_for 30 flowing
# from before the tc commands: the silence starts during them
t0=$(date +%s%N)
ksft_check "netem drops everything" dp_netem loss 100%
t0b=$(date +%s%N)
ksft_check "the sender's connection fails (conn_failed)" \
	mroce_wait_for 20 failed_a
t1=$(date +%s%N)
mroce_log "connection failed $(((t1 - t0b) / 1000000))-$(((t1 - t0) / 1000000)) ms after the silence began (dead_ms 500; the tc commands took $(((t0b - t0) / 1000000)) ms)"
dp_netem
wait "$bg"
sed -n 's/^/# /p' "$DP_OUT/silent.out" | grep -E 'why|exit' | head -n 6
# its exit status, which the subshell must have written
silent_failed() {
	_rc=$(cat "$DP_OUT/silent.rc" 2>/dev/null)
	[ -n "$_rc" ] && [ "$_rc" != 0 ]
}
ksft_check "the transfer failed (it cannot complete)" silent_failed
ksft_check "the client saw retry exceeded (status 12)" \
	grep -q 'status 12' "$DP_OUT/silent.client"
ksft_check "the kernel logged why" \
	sh -c "dmesg | grep -E '$DP_DEV_A: connection [0-9]+ to 10.93.0.2 failed: no progress'"

# The other end's connection still looks alive until the sender's new
# CONNECT ends it; a QP the other end attached to it in that instant has
# carried nothing yet and must move to the new connection, not fail.
ksft_check "a new connection carries the next transfer" \
	dp_perftest after ib_write_bw -s 65536 -q 2 -n 200
ksft_check "the other end's old connection ended by the new CONNECT" \
	sh -c "dmesg | grep -E '$DP_DEV_B: connection [0-9]+ to 10.93.0.1 failed: the peer opened a new connection'"
dmesg | grep -E "($DP_DEV_A|$DP_DEV_B): connection" | tail -n 4 | sed 's/^/# /'
dp_counters "$DP_DEV_A"
dp_counters "$DP_DEV_B"
ksft_exit
