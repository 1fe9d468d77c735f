# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers shared by the verbs selftests (sourced, not run): TAP output,
# waits, metaroce device and netns queries.  Every test runs as root inside
# the test VM; the provider is used uninstalled through RDMAV_DRIVERS.

VERBS_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$VERBS_DIR/../.." && pwd)
export RDMAV_DRIVERS="$TOP/rdma-core-provider/libmetaroce"
MROCE_VERBS="$VERBS_DIR/mroce_verbs"
MROCE_PORT=${MROCE_PORT:-4797}
MROCE_PORT_HEX=$(printf '%04X' "$MROCE_PORT")

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

tap_n=0
tap_fail=0
tap_log=$(mktemp)

tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

diag() {
	echo "# $*"
}

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

nok() {
	tap_n=$((tap_n + 1))
	tap_fail=$((tap_fail + 1))
	echo "not ok $tap_n - $*"
}

# check DESC CMD...: the command must succeed.
check() {
	local desc=$1
	shift
	if "$@" >"$tap_log" 2>&1; then
		ok "$desc"
	else
		nok "$desc"
		sed 's/^/#   /' "$tap_log"
	fi
}

# check_fails DESC CMD...: the command must fail (an error, not a crash).
check_fails() {
	local desc=$1
	shift
	if "$@" >"$tap_log" 2>&1; then
		nok "$desc (unexpectedly succeeded)"
	else
		ok "$desc"
		sed 's/^/#   /' "$tap_log"
	fi
}

tap_finish() {
	rm -f "$tap_log"
	echo "# $((tap_n - tap_fail)) passed, $tap_fail failed"
	[ "$tap_fail" -eq 0 ] && exit "$KSFT_PASS"
	exit "$KSFT_FAIL"
}

# In the test VM nothing may be skipped (selftests/vm/lib.sh, ksft_skip).
skip_all() {
	echo "TAP version 13"
	if [ "${METAROCE_VM:-}" = 1 ]; then
		echo "1..0 # FAIL: would skip, which cannot happen in the test VM: $*"
		exit "$KSFT_FAIL"
	fi
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

require_tools() {
	local t
	[ "$(id -u)" = 0 ] || skip_all "needs root"
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip_all "$t not installed"
	done
}

# wait_for SECONDS CMD...: poll every 0.1 s until CMD succeeds.
wait_for() {
	local tries=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

ibdev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

ibdev_gone() {
	! ibdev_exists "$1"
}

# Number of rdma links of any type.
rdma_link_count() {
	rdma link show 2>/dev/null | grep -c '^link '
}

# Name of the ib device bound to netdev $1, empty if none.
ibdev_of_netdev() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d/netdev" ] || continue
		[ "$(cat "$d/netdev")" = "$1" ] && basename "$d"
	done
	return 0
}

mod_loaded() {
	[ -d /sys/module/metaroce ]
}

mod_refcnt() {
	cat /sys/module/metaroce/refcnt
}

# udp_bound [NETNS]: is a UDP socket (IPv4 or IPv6) bound to MROCE_PORT?
udp_bound() {
	local ns=${1:-}
	local pfx=""
	[ -n "$ns" ] && pfx="ip netns exec $ns"
	$pfx cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk '{print $2}' | grep -q ":$MROCE_PORT_HEX\$"
}

udp_bound_v6() {
	local ns=${1:-}
	local pfx=""
	[ -n "$ns" ] && pfx="ip netns exec $ns"
	$pfx cat /proc/net/udp6 2>/dev/null |
		awk '{print $2}' | grep -q ":$MROCE_PORT_HEX\$"
}

# port_field DEV FIELD: a field of port 1 as printed by ibv_devinfo -v.
port_field() {
	ibv_devinfo -v -d "$1" | awk -v f="$2:" '$1 == f {print $2; exit}'
}

port_state_is() {
	[ "$(port_field "$1" state)" = "$2" ]
}

hw_counter() {
	cat "/sys/class/infiniband/$1/hw_counters/$2"
}

counter_at_least() {
	[ "$(hw_counter "$1" "$2")" -ge "$3" ]
}

# veth_pair A B [NS_A [NS_B]]: a veth pair, each end up, DAD off.
veth_pair() {
	ip link add "$1" type veth peer name "$2" || return 1
	if [ -n "${3:-}" ]; then
		ip link set "$1" netns "$3" || return 1
	fi
	if [ -n "${4:-}" ]; then
		ip link set "$2" netns "$4" || return 1
	fi
	nsdo "${3:-}" sysctl -qw "net.ipv6.conf.$1.accept_dad=0"
	nsdo "${4:-}" sysctl -qw "net.ipv6.conf.$2.accept_dad=0"
	nsdo "${3:-}" ip link set "$1" up &&
		nsdo "${4:-}" ip link set "$2" up
}

# nsdo NS CMD...: run CMD in netns NS, or in the current one if NS is empty.
nsdo() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# A kernel message that means a netdev reference leaked.
netdev_leak_seen() {
	dmesg | grep -q 'unregister_netdevice: waiting for'
}
