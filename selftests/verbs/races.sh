#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Concurrent control operations: two creations on one netdev, device
# deletion racing netdev deletion, rmmod racing netdev deletion and device
# deletion, a device deleted right after (or while) it is created, a netdev
# flapping while its device is deleted, and netns deletion racing device
# deletion.  Exactly one creation may win, everything must end with no
# device, no socket and no leaked netdev reference (the session also fails
# the test on any kernel WARNING/BUG).  The windows these aim at are short;
# Documentation/design.md section 8 says which fence covers each.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod

ROUNDS=${ROUNDS:-8}
vA=mrrc$$a
vB=mrrc$$b
ns=mrrcns$$

cleanup() {
	rdma link delete mrrc0 2>/dev/null
	rdma link delete mrrc1 2>/dev/null
	ip link del "$vA" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	mod_loaded && rmmod metaroce 2>/dev/null
}
trap cleanup EXIT

tap_plan 9

settled() {
	wait_for 20 eval 'ibdev_gone mrrc0 && ibdev_gone mrrc1' &&
		[ "$(rdma_link_count)" = 0 ] && ! udp_bound
}

double_add() {
	local i n
	for i in $(seq "$ROUNDS"); do
		veth_pair "$vA" "$vB" || return 1
		rdma link add mrrc0 type metaroce netdev "$vA" 2>/dev/null &
		rdma link add mrrc1 type metaroce netdev "$vA" 2>/dev/null &
		wait
		n=$(rdma_link_count)
		[ "$n" = 1 ] || { echo "round $i: $n devices on $vA"; return 1; }
		rdma link delete mrrc0 2>/dev/null &
		ip link del "$vA" &
		wait
		settled || { echo "round $i: not settled"; return 1; }
	done
}

rmmod_vs_netdev() {
	local i
	for i in $(seq "$ROUNDS"); do
		veth_pair "$vA" "$vB" || return 1
		rdma link add mrrc0 type metaroce netdev "$vA" || return 1
		rdma link add mrrc1 type metaroce netdev "$vB" || return 1
		ip link del "$vA" &
		rmmod metaroce || { echo "round $i: rmmod failed"; return 1; }
		wait
		settled || { echo "round $i: not settled"; return 1; }
	done
}

# The thread running rdma link delete is in the module's teardown while
# rmmod runs: module exit must wait for it to leave.
rmmod_vs_delete() {
	local i
	for i in $(seq "$ROUNDS"); do
		modprobe metaroce || return 1
		veth_pair "$vA" "$vB" || return 1
		rdma link add mrrc0 type metaroce netdev "$vA" || return 1
		rdma link add mrrc1 type metaroce netdev "$vB" || return 1
		rdma link delete mrrc0 &
		rmmod metaroce || { echo "round $i: rmmod failed"; return 1; }
		wait
		ip link del "$vA"
		settled || { echo "round $i: not settled"; return 1; }
	done
}

# A delete issued while the creation may still be registering: either may
# win, and a final delete must leave nothing.
add_vs_delete() {
	local i pid created=0
	veth_pair "$vA" "$vB" || return 1
	for i in $(seq "$ROUNDS"); do
		rdma link add mrrc0 type metaroce netdev "$vA" 2>/dev/null &
		pid=$!
		sleep 0.0$((i % 10))
		rdma link delete mrrc0 2>/dev/null
		wait "$pid" && created=$((created + 1))
		rdma link delete mrrc0 2>/dev/null
		settled || { echo "round $i: not settled"; return 1; }
	done
	ip link del "$vA"
	echo "created in $created of $ROUNDS rounds"
	[ "$created" -gt 0 ]
}

# Carrier, admin state and MTU changes while the device is being deleted:
# the notifier must not act on a device in teardown.
flap_vs_delete() {
	local i j
	veth_pair "$vA" "$vB" || return 1
	for i in $(seq "$ROUNDS"); do
		rdma link add mrrc0 type metaroce netdev "$vA" || return 1
		(for j in 1 2 3 4 5 6; do
			ip link set "$vB" down
			ip link set "$vA" mtu $((1500 + j))
			ip link set "$vB" up
		done) &
		rdma link delete mrrc0
		wait
		settled || { echo "round $i: not settled"; return 1; }
	done
	ip link del "$vA"
}

netns_vs_delete() {
	local i
	for i in $(seq "$ROUNDS"); do
		ip netns add "$ns" || return 1
		veth_pair "$vA" "$vB" "$ns" "$ns" || return 1
		ip netns exec "$ns" rdma link add mrrc0 type metaroce \
			netdev "$vA" || return 1
		ip netns exec "$ns" rdma link add mrrc1 type metaroce \
			netdev "$vB" || return 1
		rdma link delete mrrc1 2>/dev/null &
		ip netns del "$ns" &
		wait
		settled || { echo "round $i: not settled"; return 1; }
	done
}

modprobe metaroce
check "$ROUNDS x two concurrent adds on one netdev, then delete vs ip link del" \
	double_add
check "$ROUNDS x rmmod while a netdev is being deleted" rmmod_vs_netdev
check "$ROUNDS x rmmod while rdma link delete runs" rmmod_vs_delete
modprobe metaroce
check "$ROUNDS x rdma link delete while rdma link add runs" add_vs_delete
check "$ROUNDS x link flapping while rdma link delete runs" flap_vs_delete
check "$ROUNDS x netns deletion racing rdma link delete" netns_vs_delete
check "module refcount 0" eval '[ "$(mod_refcnt)" = 0 ]'
check "rmmod metaroce" rmmod metaroce
check "no netdev reference leak reported" eval '! netdev_leak_seen'

tap_finish
