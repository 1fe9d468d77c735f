#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bad "rdma link add" requests fail with an error and leave nothing behind:
# unknown netdev, loopback, VLAN netdev, duplicate ib device name, second
# device on the same netdev.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod

vA=mrbi$$a
vB=mrbi$$b

cleanup() {
	rdma link delete mrbi0 2>/dev/null
	ip link del "$vA" 2>/dev/null
	mod_loaded && rmmod metaroce 2>/dev/null
}
trap cleanup EXIT

tap_plan 16

modprobe metaroce
veth_pair "$vA" "$vB"
ip link add link "$vA" name "$vA.5" type vlan id 5
# the refusal below means something only if the VLAN netdev exists
check "VLAN netdev created (8021q)" ip link show "$vA.5"

only_mrbi0() {
	[ "$(rdma_link_count)" = 1 ] && ibdev_exists mrbi0 &&
		[ "$(ls /sys/class/infiniband | wc -l)" = 1 ]
}

check_fails "unknown netdev refused" \
	rdma link add mrbix type metaroce netdev mrbi-nosuch
check "nothing created" eval '[ "$(rdma_link_count)" = 0 ] && ibdev_gone mrbix'
check_fails "loopback refused" rdma link add mrbix type metaroce netdev lo
check_fails "VLAN netdev refused" \
	rdma link add mrbix type metaroce netdev "$vA.5"
check "nothing created, no socket bound" eval '[ "$(rdma_link_count)" = 0 ] &&
	! udp_bound'
# Someone else owns the transport port in this netns.
python3 -c "import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', $MROCE_PORT))
print('bound', flush=True)
time.sleep(60)" >"$tap_log.py" 2>&1 &
squatter=$!
wait_for 10 grep -q bound "$tap_log.py"
check_fails "port $MROCE_PORT in use: refused" \
	rdma link add mrbix type metaroce netdev "$vA"
check "nothing created" eval '[ "$(rdma_link_count)" = 0 ] && ibdev_gone mrbix'
kill "$squatter"
wait "$squatter" 2>/dev/null
rm -f "$tap_log.py"

check "valid device mrbi0 on $vA" rdma link add mrbi0 type metaroce netdev "$vA"
check_fails "duplicate name mrbi0 on $vB refused" \
	rdma link add mrbi0 type metaroce netdev "$vB"
check "$vB has no device" eval '[ -z "$(ibdev_of_netdev "$vB")" ]'
check_fails "second device on $vA refused" \
	rdma link add mrbix type metaroce netdev "$vA"
check "only mrbi0 exists, still on $vA" eval 'only_mrbi0 &&
	[ "$(ibdev_of_netdev "$vA")" = mrbi0 ]'
check "mrbi0 still works (PORT_ACTIVE in sysfs)" \
	grep -q ACTIVE /sys/class/infiniband/mrbi0/ports/1/state
check "delete mrbi0, then rmmod" eval 'rdma link delete mrbi0 &&
	rmmod metaroce'
check "no netdev reference leak reported" eval '! netdev_leak_seen'

tap_finish
