#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/verbs_api between two namespaces (datapath_lib.sh):
# completion channels and solicited events, full queues (ENOMEM, bad_wr),
# invalid WRs (EINVAL, nothing posted), unsignaled sends, the ibv_wr_* API
# with an error mid-batch, SRQ limits, verbs that must fail cleanly.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
api=$METAROCE_ROOT/selftests/verbs/verbs_api
[ -x "$api" ] || ksft_skip "verbs_api not built (make provider)"
dp_setup_netns 9000
dp_a "$api" -a "$DP_DEV_A" -A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B" ||
	ksft_fail "verbs_api"
ksft_pass "verbs_api"
