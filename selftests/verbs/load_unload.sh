#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Module load/unload, autoload by "rdma link add", and rmmod while devices
# exist (they must be removed cleanly, the netdevs stay); module parameters
# and debugfs tunables refuse values outside their range.
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

tap_plan 29

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

params=/sys/module/metaroce/parameters
tunables=/sys/kernel/debug/metaroce/tunables
check_fails "modprobe metaroce npaths=0 refused" modprobe metaroce npaths=0
check "module not loaded after the refusal" eval '! mod_loaded'
check "modprobe metaroce npaths=8 dead_ms=500" \
	modprobe metaroce npaths=8 dead_ms=500
check "npaths and dead_ms read back" \
	eval '[ "$(cat $params/npaths) $(cat $params/dead_ms)" = "8 500" ]'
check_fails "npaths 65 refused at run time" eval 'echo 65 >$params/npaths'
check "npaths still 8" grep -qx 8 "$params/npaths"
check "eleven module parameters, no experiment knobs" \
	eval '[ "$(ls $params | wc -l)" = 11 ] && [ ! -e $params/lock_split ]'
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
check "tunable tx_zerocopy in debugfs, 1" grep -qx 1 "$tunables/tx_zerocopy"
check_fails "tx_zerocopy 2 refused" eval 'echo 2 >$tunables/tx_zerocopy'
check "tx_zerocopy still 1 after the refusal, then 0 taken" \
	eval 'grep -qx 1 $tunables/tx_zerocopy && echo 0 >$tunables/tx_zerocopy &&
	grep -qx 0 $tunables/tx_zerocopy'
rmmod metaroce

tap_finish
