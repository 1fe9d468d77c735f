#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/integrity over MetaRoCE between two network namespaces
# (datapath_lib.sh), MTU 9000 and 1500: 8 QP pairs, every opcode in both
# directions, random sizes up to 1 MiB, every byte checked.
#   dp_integrity.sh [MTU [TX_ZEROCOPY]]: TX_ZEROCOPY 0 copies every payload
#   on transmit (the tx_zerocopy module parameter) instead of sending the
#   registered pages themselves.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
mtu=${1:-9000}
dp_setup_netns "$mtu"
zc=${2:-1}
zc_param=/sys/module/metaroce/parameters/tx_zerocopy
[ -w "$zc_param" ] || ksft_fail "no $zc_param"
mroce_defer "echo $(cat "$zc_param") >$zc_param"
echo "$zc" >"$zc_param"

ksft_check "integrity, 8 QPs, MTU $mtu, tx_zerocopy $zc, 40 s" \
	dp_integrity -q 8 -o 24 -m 1048576 -t 40 -T 120 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"
dp_counters "$DP_DEV_A"
ksft_exit
