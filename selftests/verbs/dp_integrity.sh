#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/verbs/integrity over MetaRoCE between two network namespaces
# (datapath_lib.sh), MTU 9000 and 1500: 8 QP pairs, every opcode in both
# directions, random sizes up to 1 MiB, every byte checked.
#   dp_integrity.sh [MTU [TX_ZEROCOPY [SECONDS]]]: TX_ZEROCOPY 0 copies
#   every payload on transmit (the tx_zerocopy debugfs tunable) instead of
#   sending the registered pages themselves; SECONDS (default 40) of rounds.
# DP_FAMILY=6 runs it over IPv6 GIDs (datapath_lib.sh).  Either way the
# traffic must have taken that family only, unfragmented (dp_family_check);
# over IPv6 most of A's data packets must also have arrived full-sized: at
# MTU 9000 8 KiB payloads, at 1500 1 KiB ones, beside the 40-byte header.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
mtu=${1:-9000}
dp_setup_netns "$mtu"
zc=${2:-1}
secs=${3:-40}
dp_tunable tx_zerocopy "$zc"

# big: the largest power of two in the largest payload the MTU takes
# (mroce_max_payload: 8192 at 9000, 1024 at 1500); IPv6 payload lengths
# of at least that much have this bit set, and none reaches twice it.
big=1
while [ $((big * 2)) -le $((mtu - 120)) ]; do
	big=$((big * 2))
done
if [ "$DP_FAMILY" = 6 ]; then
	dp_v6_filters "$(printf '0x%x' "$big")" ||
		ksft_fail "tc filters counting IPv6 packets"
fi
dp_netstat "$DP_OUT/netstat.before"

ksft_check "integrity, IPv$DP_FAMILY, 8 QPs, MTU $mtu, tx_zerocopy $zc, $secs s" \
	dp_integrity -q 8 -o 24 -m 1048576 -t "$secs" -T 120 -s "$$"
grep -E '^# (integrity: [0-9]+ rounds|messages)' <<<"$_out"
dp_counters "$DP_DEV_A"
dp_family_check "$DP_OUT/netstat.before"
if [ "$DP_FAMILY" = 6 ]; then
	nbig=$(dp_filter_count 1)
	data=$(dp_counter "$DP_DEV_A" tx_data)
	mroce_log "UDP/IPv6 packets at B with an IPv6 payload of $big bytes or more: $nbig (A sent $data data packets)"
	# Messages up to 1 MiB are cut into full packets but for their last
	# one: most of A's data packets are full (over 80% at either MTU).
	ksft_check "most data packets went full-sized over IPv6 ($nbig of $data at least $big bytes)" \
		[ "$nbig" -ge $((data / 2)) ]
fi
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
