#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/integrity over MetaRoCE between two network namespaces
# (datapath_lib.sh), MTU 9000 and 1500: 8 QP pairs, every opcode in both
# directions, random sizes up to 1 MiB, every byte checked.
#   dp_integrity.sh [MTU [TX_ZEROCOPY]]: TX_ZEROCOPY 0 copies every payload
#   on transmit (the tx_zerocopy debugfs tunable) instead of sending the
#   registered pages themselves.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
mtu=${1:-9000}
dp_setup_netns "$mtu"
zc=${2:-1}
dp_tunable tx_zerocopy "$zc"

ksft_check "integrity, 8 QPs, MTU $mtu, tx_zerocopy $zc, 40 s" \
	dp_integrity -q 8 -o 24 -m 1048576 -t 40 -T 120 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"
dp_counters "$DP_DEV_A"
# the transmit path the test is about carried the payloads (a small one is
# always copied: tx_copied grows either way)
zcp=$(($(dp_counter "$DP_DEV_A" tx_zerocopy) + $(dp_counter "$DP_DEV_B" tx_zerocopy)))
cpy=$(($(dp_counter "$DP_DEV_A" tx_copied) + $(dp_counter "$DP_DEV_B" tx_copied)))
mroce_log "payloads sent zero-copy $zcp, copied $cpy"
if [ "$zc" = 1 ]; then
	ksft_check "payloads went as the registered pages (tx_zerocopy)" \
		[ "$zcp" -gt 0 ]
else
	all_copied() { [ "$zcp" = 0 ] && [ "$cpy" -gt 1000 ]; }
	ksft_check "every payload was copied (tx_copied, no tx_zerocopy)" \
		all_copied
fi
ksft_exit
