#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest over MetaRoCE on IPv6 GIDs (datapath_lib.sh, DP_FAMILY=6):
# ib_write_bw, ib_read_bw and ib_send_bw with -x the IPv6 GID's index, 64
# KiB messages on 4 QPs, 32 MiB each.  Every run must complete on both sides
# and report a non-zero result, and the RDMA traffic must have gone over
# IPv6 only, unfragmented (dp_family_check; perftest's own TCP connection
# is IPv4, which is not UDP and not counted).
. "$(dirname "$0")/datapath_lib.sh"

# shellcheck disable=SC2034 # datapath_lib.sh reads it
DP_FAMILY=6
dp_require
ksft_require_cmd ib_write_bw ib_read_bw ib_send_bw
dp_setup_netns 9000
dp_v6_filters || ksft_fail "tc filters counting IPv6 packets"
dp_netstat "$DP_OUT/netstat.before"

results=$DP_OUT/perftest-ipv6.txt
: >"$results"
bw() {
	_desc="$*"
	if dp_perftest "ipv6_$(echo "$*" | tr -c 'A-Za-z0-9' _)" "$@"; then
		echo "ok: $_desc: $DP_BW MB/s"
		printf '%-45s %10s MB/s\n' "$_desc" "$DP_BW" >>"$results"
	else
		echo "FAIL: $_desc"
		_ksft_failed=$((_ksft_failed + 1))
	fi
}
for tool in ib_write_bw ib_read_bw ib_send_bw; do
	bw "$tool" -s 65536 -q 4 -n 128
done

mroce_log "results ($DP_DEV_A $DP_IP_A GID $DP_GID_A -> $DP_DEV_B $DP_IP_B GID $DP_GID_B, MTU 9000):"
sed 's/^/#   /' "$results"
dp_counters "$DP_DEV_A"
dp_counters "$DP_DEV_B"
dp_family_check "$DP_OUT/netstat.before"
ksft_exit
