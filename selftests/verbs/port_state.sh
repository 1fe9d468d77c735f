#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The port follows the netdev: carrier down/up is seen by ibv_devinfo and
# as IBV_EVENT_PORT_ERR / IBV_EVENT_PORT_ACTIVE async events; active_mtu
# follows the netdev MTU minus the IP/UDP/MetaRoCE header overhead.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe ibv_devinfo
[ -x "$MROCE_VERBS" ] || skip_all "$MROCE_VERBS not built (make provider)"

vA=mrps$$a
vB=mrps$$b
dev=mrps0
out=$(mktemp)

cleanup() {
	[ -n "${waiter:-}" ] && kill "$waiter" 2>/dev/null
	rdma link delete "$dev" 2>/dev/null
	ip link del "$vA" 2>/dev/null
	rm -f "$out"
}
trap cleanup EXIT

tap_plan 16

modprobe metaroce
veth_pair "$vA" "$vB"
rdma link add "$dev" type metaroce netdev "$vA"

check "ibv_devinfo: PORT_ACTIVE" port_state_is "$dev" PORT_ACTIVE
check "link_layer Ethernet" eval "[ \"\$(port_field $dev link_layer)\" = Ethernet ]"

# expect_event EVENT CMD...: run CMD while mroce_verbs waits for EVENT.
expect_event() {
	local ev=$1
	shift
	"$MROCE_VERBS" async "$dev" "$ev" 15 >"$out" 2>&1 &
	waiter=$!
	wait_for 10 grep -q ready "$out" || { cat "$out"; return 1; }
	"$@" || return 1
	wait "$waiter"
	local rc=$?
	waiter=
	cat "$out"
	return $rc
}

check "async IBV_EVENT_PORT_ERR on carrier loss" \
	expect_event port_err ip link set "$vB" down
check "ibv_devinfo: PORT_DOWN" port_state_is "$dev" PORT_DOWN
check "phys_state POLLING" eval "[ \"\$(port_field $dev phys_state)\" = POLLING ]"
check "rdma link shows state DOWN" \
	eval "rdma link show $dev/1 | grep -q 'state DOWN'"
check "async IBV_EVENT_PORT_ACTIVE on carrier back" \
	expect_event port_active ip link set "$vB" up
check "ibv_devinfo: PORT_ACTIVE again" port_state_is "$dev" PORT_ACTIVE
check "admin down: PORT_ERR and phys_state DISABLED" eval "
	expect_event port_err ip link set $vA down &&
	[ \"\$(port_field $dev phys_state)\" = DISABLED ]"
check "admin up: PORT_ACTIVE" expect_event port_active ip link set "$vA" up

mtu_is() {
	ip link set "$vA" mtu "$1" &&
		[ "$(port_field "$dev" active_mtu)" = "$2" ]
}
check "MTU 1500 -> active_mtu 1024" mtu_is 1500 1024
check "MTU 2200 -> active_mtu 2048" mtu_is 2200 2048
check "MTU 9000 -> active_mtu 4096" mtu_is 9000 4096
check "MTU 600 -> active_mtu 256" mtu_is 600 256
check "MTU 300 (no 256-byte payload fits): PORT_ERR, PORT_DOWN" eval "
	expect_event port_err ip link set $vA mtu 300 &&
	port_state_is $dev PORT_DOWN"
check "MTU 1500 again: PORT_ACTIVE, active_mtu 1024" eval "
	expect_event port_active ip link set $vA mtu 1500 &&
	[ \"\$(port_field $dev active_mtu)\" = 1024 ]"

tap_finish
