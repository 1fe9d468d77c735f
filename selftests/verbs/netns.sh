#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Devices in non-initial network namespaces:
#
#   nsA: vA 10.92.0.1 fd92::1  <--veth-->  nsB: vB 10.92.0.2 fd92::2
#        mrnsA                                   mrnsB
#
# Each netns gets its own UDP socket on the transport port (none in
# init_net); a datagram too short for a MetaRoCE header sent to it is
# counted by the receiving device (rx_drop_short);
# deleting a netns with a device in it removes the devices and sockets.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod

nsA=mrnsA$$
nsB=mrnsB$$

cleanup() {
	ip netns del "$nsA" 2>/dev/null
	ip netns del "$nsB" 2>/dev/null
	wait_for 20 eval 'ibdev_gone mrnsA && ibdev_gone mrnsB'
	mod_loaded && rmmod metaroce 2>/dev/null
}
trap cleanup EXIT

tap_plan 18

modprobe metaroce
ip netns add "$nsA"
ip netns add "$nsB"
veth_pair vA vB "$nsA" "$nsB"
ip -n "$nsA" addr add 10.92.0.1/24 dev vA
ip -n "$nsB" addr add 10.92.0.2/24 dev vB
ip -n "$nsA" addr add fd92::1/64 dev vA nodad
ip -n "$nsB" addr add fd92::2/64 dev vB nodad

check "rdma link add in $nsA" \
	ip netns exec "$nsA" rdma link add mrnsA type metaroce netdev vA
check "port $MROCE_PORT bound in $nsA (IPv4)" eval "ip netns exec $nsA \
	cat /proc/net/udp | awk '{print \$2}' | grep -q ':$MROCE_PORT_HEX\$'"
check "port $MROCE_PORT bound in $nsA (IPv6)" udp_bound_v6 "$nsA"
check "port $MROCE_PORT not bound in init_net" eval '! udp_bound'
check "port $MROCE_PORT not bound in $nsB yet" eval "! udp_bound $nsB"
check "rdma link add in $nsB" \
	ip netns exec "$nsB" rdma link add mrnsB type metaroce netdev vB
check "port $MROCE_PORT bound in $nsB" udp_bound "$nsB"
check "sysfs netdev of mrnsA is vA" grep -qx vA /sys/class/infiniband/mrnsA/netdev

send_udp() {
	ip netns exec "$nsA" bash -c "echo metaroce > /dev/udp/$1/$MROCE_PORT"
}
check "IPv4 datagram to $nsB counted by mrnsB" eval "send_udp 10.92.0.2 &&
	wait_for 5 counter_at_least mrnsB rx_drop_short 1"
check "IPv6 datagram to $nsB counted by mrnsB" eval "send_udp fd92::2 &&
	wait_for 5 counter_at_least mrnsB rx_drop_short 2"
check "mrnsA counted nothing" eval '[ "$(hw_counter mrnsA rx_drop_short)" = 0 ]'

# Moving a netdev to another netns unbinds it (NETDEV_UNREGISTER) as well.
ip -n "$nsB" link add vM1 type veth peer name vM2
ip netns exec "$nsB" rdma link add mrnsM type metaroce netdev vM1
check "netdev moved to $nsA: its device is removed" eval "
	ibdev_exists mrnsM && ip -n $nsB link set vM1 netns $nsA &&
	wait_for 20 ibdev_gone mrnsM"
check "mrnsB unaffected" ibdev_exists mrnsB

check "ip netns del $nsA with a device present" ip netns del "$nsA"
check "both devices removed (veth pair destroyed)" \
	wait_for 20 eval 'ibdev_gone mrnsA && ibdev_gone mrnsB'
check "socket in $nsB released" eval "! udp_bound $nsB"
ip netns del "$nsB"
check "module refcount 0 and rmmod" eval 'wait_for 10 eval "[ \$(mod_refcnt) = 0 ]" &&
	rmmod metaroce'
check "no netdev reference leak reported" eval '! netdev_leak_seen'

tap_finish
