#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/integrity over MetaRoCE between two network namespaces
# (datapath_lib.sh), MTU 9000 and 1500: 8 QP pairs, every opcode in both
# directions, random sizes up to 1 MiB, every byte checked.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
mtu=${1:-9000}
dp_setup_netns "$mtu"

ksft_check "integrity, 8 QPs, MTU $mtu, 40 s" \
	dp_integrity -q 8 -o 24 -m 1048576 -t 40 -T 120 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"
dp_counters "$DP_DEV_A"
ksft_exit
