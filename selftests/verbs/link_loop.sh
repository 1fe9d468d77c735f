#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma link add/delete in a loop: nothing may leak (module refcount back to
# 0, no rdma link, no bound socket, netdev deletable, rmmod succeeds).
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod

LOOPS=${LOOPS:-200}
vA=mrll$$a
vB=mrll$$b

cleanup() {
	rdma link delete mrll0 2>/dev/null
	ip link del "$vA" 2>/dev/null
	mod_loaded && rmmod metaroce 2>/dev/null
}
trap cleanup EXIT

tap_plan 7

modprobe metaroce
veth_pair "$vA" "$vB"
ip addr add 10.91.0.1/24 dev "$vA"

loop() {
	local i
	for i in $(seq "$LOOPS"); do
		rdma link add mrll0 type metaroce netdev "$vA" ||
			{ echo "add failed at iteration $i"; return 1; }
		ibdev_exists mrll0 || { echo "no device at $i"; return 1; }
		rdma link delete mrll0 ||
			{ echo "delete failed at iteration $i"; return 1; }
		ibdev_gone mrll0 || { echo "device left at $i"; return 1; }
	done
}
start=$(date +%s.%N)
check "$LOOPS x rdma link add/delete" loop
diag "$(echo "$(date +%s.%N) $start" |
	awk -v n="$LOOPS" '{printf "%.1f ms per add+delete", ($1 - $2) * 1000 / n}')"
check "rdma link empty" eval '[ "$(rdma_link_count)" = 0 ]'
check "module refcount 0" eval '[ "$(mod_refcnt)" = 0 ]'
check "no socket left bound" eval '! udp_bound'
check "netdev deletable" ip link del "$vA"
check "rmmod metaroce" rmmod metaroce
check "no netdev reference leak reported" eval '! netdev_leak_seen'

tap_finish
