#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/wc_fields over MetaRoCE between two network namespaces
# (datapath_lib.sh): every field of the completions of each opcode and
# each error compared with what rdma_rxe reports (wc_fields_rxe.sh runs
# the same binary over rxe).
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/wc_fields" ] ||
	ksft_skip "wc_fields not built (make provider)"
dp_setup_netns 1500

ksft_check "every completion field as rxe reports it, over MetaRoCE" \
	dp_a "$METAROCE_ROOT/selftests/verbs/wc_fields" -v -a "$DP_DEV_A" \
	-A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B"
printf '%s\n' "$_out" | grep -E '^(# ok|PASS)'
ksft_exit
