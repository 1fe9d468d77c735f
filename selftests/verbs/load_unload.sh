#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Module load/unload, autoload by "rdma link add", and rmmod while devices
# exist (they must be removed cleanly, the netdevs stay).
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod

vA=mrlu$$a
vB=mrlu$$b

cleanup() {
	rdma link delete mrlu0 2>/dev/null
	rdma link delete mrlu1 2>/dev/null
	ip link del "$vA" 2>/dev/null
	mod_loaded && rmmod metaroce 2>/dev/null
}
trap cleanup EXIT

tap_plan 19

mod_loaded && rmmod metaroce
check "modprobe metaroce" modprobe metaroce
check "module parameter udp_port is $MROCE_PORT" \
	grep -qx "$MROCE_PORT" /sys/module/metaroce/parameters/udp_port
check "no socket bound while no device exists" eval '! udp_bound'
check "rmmod metaroce" rmmod metaroce
check "module gone" eval '! mod_loaded'

veth_pair "$vA" "$vB"
check "rdma link add autoloads the module" \
	rdma link add mrlu0 type metaroce netdev "$vA"
check "device mrlu0 exists" ibdev_exists mrlu0
check "rdma link shows mrlu0 on $vA" \
	eval "rdma link show | grep -q 'mrlu0/1 .*netdev $vA'"
check "UDP port $MROCE_PORT bound in init_net" udp_bound
check "second device on the peer" \
	rdma link add mrlu1 type metaroce netdev "$vB"
check "rmmod with two devices present" rmmod metaroce
check "devices removed" eval 'ibdev_gone mrlu0 && ibdev_gone mrlu1 &&
	[ "$(rdma_link_count)" = 0 ]'
check "socket released" eval '! udp_bound'
check "netdevs survive and can be deleted" ip link del "$vA"

veth_pair "$vA" "$vB"
check "modprobe metaroce udp_port=4999" modprobe metaroce udp_port=4999
rdma link add mrlu0 type metaroce netdev "$vA"
check "socket bound to port 4999, not $MROCE_PORT" eval 'MROCE_PORT_HEX=$(printf %04X 4999) udp_bound && ! udp_bound'
check "rmmod" eval 'rdma link delete mrlu0 && rmmod metaroce'
check_fails "modprobe metaroce udp_port=0 refused" modprobe metaroce udp_port=0
check "module not loaded after the refusal" eval '! mod_loaded'

tap_finish
