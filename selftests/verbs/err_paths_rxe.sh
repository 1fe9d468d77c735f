#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/err_paths against the reference: two rdma_rxe devices in
# init_net (datapath_lib.sh).  Proves that the error-path behaviour the
# test expects (flushes, CQ overflow, remote access errors) is the one rxe
# has; dp_err_paths.sh runs the same binary over MetaRoCE.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd rdma
[ -x "$METAROCE_ROOT/selftests/verbs/err_paths" ] ||
	ksft_skip "err_paths not built (make provider)"
dp_setup_initnet rxe 1500

res_a=$(dp_resources "$DP_DEV_A")
res_b=$(dp_resources "$DP_DEV_B")
ksft_check "flushes, CQ overflow and access errors as rxe has them, over rxe" \
	dp_a timeout 500 "$METAROCE_ROOT/selftests/verbs/err_paths" -R -v \
	-a "$DP_DEV_A" -A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B"
printf '%s\n' "$_out" | grep -E '^(# ok|# info|PASS)' | sed 's/^# /# rxe: /'
dp_no_leak err_paths "$res_a" "$res_b"
ksft_exit
