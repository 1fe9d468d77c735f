#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The uninstalled provider (RDMAV_DRIVERS) against a live device: listing,
# ibv_devinfo -v with Ethernet link layer and the RoCE v2 GIDs of the
# netdev's addresses, PD alloc/free, unsupported verbs failing with an errno.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe ibv_devices ibv_devinfo
[ -x "$MROCE_VERBS" ] || skip_all "$MROCE_VERBS not built (make provider)"
[ -e "$RDMAV_DRIVERS-rdmav34.so" ] || skip_all "provider not built"

vA=mrpv$$a
vB=mrpv$$b
dev=mrpv0
info=$(mktemp)

cleanup() {
	rdma link delete "$dev" 2>/dev/null
	ip link del "$vA" 2>/dev/null
	rm -f "$info"
}
trap cleanup EXIT

tap_plan 17

modprobe metaroce
veth_pair "$vA" "$vB"
ip addr add 10.93.0.1/24 dev "$vA"
ip -6 addr add fd93::1/64 dev "$vA" nodad
rdma link add "$dev" type metaroce netdev "$vA"

mac=$(cat "/sys/class/net/$vA/address")
check "sysfs metaroce_abi = 1" grep -qx 1 "/sys/class/infiniband/$dev/metaroce_abi"
check "sysfs netdev = $vA" grep -qx "$vA" "/sys/class/infiniband/$dev/netdev"
check "hw counter rx_drop_short = 0" \
	grep -qx 0 "/sys/class/infiniband/$dev/hw_counters/rx_drop_short"
check "ibv_devices lists $dev" eval "ibv_devices | grep -qw $dev"

# roce_gid_mgmt fills the GID table asynchronously.
gids_ready() {
	ibv_devinfo -v -d "$dev" >"$info" 2>&1 &&
		grep -q '::ffff:10.93.0.1, RoCE v2' "$info" &&
		grep -q 'fd93::1, RoCE v2' "$info" &&
		grep -q 'fe80::.*, RoCE v2' "$info"
}
check "ibv_devinfo -v shows IPv4, IPv6 and link-local RoCE v2 GIDs" \
	wait_for 10 gids_ready
sed -n '/GID\[/p' "$info" | sed 's/^[[:space:]]*/#   /'
field() {
	awk -v f="$1:" '$1 == f {print $2; exit}' "$info"
}
check "link_layer Ethernet" eval '[ "$(field link_layer)" = Ethernet ]'
check "transport InfiniBand (RoCE)" eval '[ "$(field transport)" = InfiniBand ]'
check "fw_ver 0.1.0" eval '[ "$(field fw_ver)" = 0.1.0 ]'
check "vendor_id 0" eval '[ "$(field vendor_id)" = 0x0000 ]'
# EUI-64 of the MAC, as ibv_devinfo prints it (xxxx:xxxx:xxxx:xxxx).
IFS=: read -r m1 m2 m3 m4 m5 m6 <<<"$mac"
guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m1 ^ 2)) "$m2" "$m3" "$m4" "$m5" "$m6")
check "node_guid $guid derived from MAC $mac" \
	eval '[ "$(field node_guid)" = "$guid" ]'
check "max_pd 65536, atomic_cap ATOMIC_HCA, max_qp_rd_atom 16" eval '
	[ "$(field max_pd)" = 65536 ] && [ "$(field atomic_cap)" = ATOMIC_HCA ] &&
	[ "$(field max_qp_rd_atom)" = 16 ]'
check "port: PORT_ACTIVE, active_mtu 1024, 1 pkey" eval '
	[ "$(field state)" = PORT_ACTIVE ] && [ "$(field active_mtu)" = 1024 ] &&
	[ "$(field max_pkeys)" = 1 ]'
check "PD alloc/free through libibverbs" "$MROCE_VERBS" pd "$dev" 256
check "unsupported verbs and bad requests fail with an errno" \
	"$MROCE_VERBS" unsupported "$dev"
if [ -e /etc/libibverbs.d/metaroce.driver ]; then
	ok "no device claimed without the provider # SKIP provider installed"
else
	check "no device claimed without the provider" \
		eval "! env -u RDMAV_DRIVERS ibv_devices | grep -qw $dev"
fi
check "device deletion with the provider idle" rdma link delete "$dev"
check "ibv_devices no longer lists it" eval "! ibv_devices | grep -qw $dev"

tap_finish
