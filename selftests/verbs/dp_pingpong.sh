#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma-core's example programs over MetaRoCE between two network namespaces
# (topology in datapath_lib.sh): ibv_rc_pingpong with --chk (the receiver
# checks every byte) at several sizes, and ibv_srq_pingpong (several QPs
# sharing one SRQ).
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd ibv_rc_pingpong ibv_srq_pingpong
dp_setup_netns 9000

port=$((18515 + $$ % 1000))
for size in 1 4096 65536 1048576; do
	iters=200
	[ "$size" -ge 65536 ] && iters=50
	port=$((port + 1))
	ksft_check "ibv_rc_pingpong --chk -s $size -n $iters" \
		dp_run_pair "rc_pingpong_$size" "$port" -g ibv_rc_pingpong \
		-s "$size" -n "$iters" --chk
done

port=$((port + 1))
ksft_check "ibv_srq_pingpong -q 8 -s 4096" \
	dp_run_pair srq_pingpong "$port" -g ibv_srq_pingpong -q 8 -s 4096 -n 100
grep -h 'bytes in' "$DP_OUT"/rc_pingpong_*.client "$DP_OUT"/srq_pingpong.client 2>/dev/null |
	sed 's/^/# /'
dp_counters "$DP_DEV_A"
ksft_exit
