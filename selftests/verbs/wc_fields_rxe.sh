#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/wc_fields against the reference: two rdma_rxe devices in
# init_net (datapath_lib.sh).  Proves that the completion fields the test
# expects are the ones rxe reports; dp_wc_fields.sh runs it over MetaRoCE.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd rdma
[ -x "$METAROCE_ROOT/selftests/verbs/wc_fields" ] ||
	ksft_skip "wc_fields not built (make provider)"
dp_setup_initnet rxe 1500

ksft_check "every completion field as rxe reports it, over rxe" \
	dp_a "$METAROCE_ROOT/selftests/verbs/wc_fields" -v -a "$DP_DEV_A" \
	-A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B"
printf '%s\n' "$_out" | grep -E '^(# ok|PASS)' | sed 's/^# /# rxe: /'
ksft_exit
