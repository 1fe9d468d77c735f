#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/err_paths over MetaRoCE between two network namespaces
# (datapath_lib.sh): QPs moved to ERR and destroyed with work outstanding,
# CQ overflow and remote access errors, each as rdma_rxe has them
# (err_paths_rxe.sh runs the same binary over rxe).  Nothing may leak: the
# device's resource counts return to where they were.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/err_paths" ] ||
	ksft_skip "err_paths not built (make provider)"
dp_setup_netns 1500

res_a=$(dp_resources "$DP_DEV_A")
res_b=$(dp_resources "$DP_DEV_B")
ksft_check "flushes, CQ overflow and access errors as rxe has them, over MetaRoCE" \
	dp_a timeout 500 "$METAROCE_ROOT/selftests/verbs/err_paths" -v \
	-a "$DP_DEV_A" -A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B"
printf '%s\n' "$_out" | grep -E '^(# ok|# info|PASS)'
dp_counters "$DP_DEV_A"
dp_counters "$DP_DEV_B"
# Each overflow case makes 16 completions more than its CQ of 4 holds: 16
# WRITEs' on A; on B, the fifth receive's and the 15 flushed after it (the
# responder went to ERR).
for _d in "$DP_DEV_A" "$DP_DEV_B"; do
	_n=$(dp_counter "$_d" cq_overflow)
	if [ "$_n" = 16 ]; then
		echo "ok: $_d counted 16 CQEs dropped on overflow"
	else
		echo "FAIL: $_d counted $_n CQEs dropped on overflow, not 16"
		_ksft_failed=$((_ksft_failed + 1))
	fi
done
dp_no_leak err_paths "$res_a" "$res_b"
ksft_exit
