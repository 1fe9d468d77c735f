#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo: ib_write_bw over MetaRoCE across a lossy multipath link, side by
# side with rdma_rxe on the very same path, in one boot of the test VM
# (about 2 minutes).  On the host this script boots metaroce-vm and runs
# itself inside; in the guest (METAROCE_VM=1) it builds the topology:
#
#   init_net                netns R1 (router)                netns R2 (router)          init_net
#  +----------+            +-----------------+  path 1: p1  +-----------------+         +----------+
#  | dev A    |  veth      |        ECMP   ==+=== netem ====+==   ECMP        |  veth   | dev B    |
#  | hA       +------------+ r1      over  ==+=== netem ====+==   over     r2 +---------+ hB       |
#  |10.96.1.1 |            | 10.96.1.254     |  path 2: p2  |     10.96.2.254 |         |10.96.2.1 |
#  +----------+            +-----------------+              +-----------------+         +----------+
#
# The routers hash on the UDP ports (fib_multipath_hash_policy=1), so every
# UDP source port picks one of the two paths.  MetaRoCE sprays each
# connection over many source ports; rxe uses one per QP.  Both end hosts
# live in init_net (rxe in 6.1 works only there): policy routing sends
# locally generated traffic for the peer out through the routers.
#
#   tools/demo.sh [--loss PCT] [--seconds S] [--qps N]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
loss=${DEMO_LOSS:-1}
secs=${DEMO_SECONDS:-10}
qps=${DEMO_QPS:-2}
while [ $# -gt 0 ]; do
	case $1 in
	--loss) loss=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--qps) qps=$2; shift 2 ;;
	*) echo "usage: $0 [--loss PCT] [--seconds S] [--qps N]" >&2; exit 2 ;;
	esac
done

# ---- host: boot the VM and run this script inside --------------------------
if [ "${METAROCE_VM:-}" != 1 ]; then
	cd "$top" || exit 1
	build=${BUILD:-$top/build}
	vm=$build/tools/vm/metaroce-vm
	if [ ! -x "$vm" ]; then
		{ [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" >/dev/null; } &&
			cmake --build "$build" -j2 --target metaroce-vm >/dev/null || exit 1
	fi
	[ -f metaroce.ko ] || make -s module || exit 1
	[ -f rdma-core-provider/libmetaroce-rdmav34.so ] || make -s provider || exit 1
	out=$top/results/demo/$(date +%Y%m%d-%H%M%S)
	mkdir -p "$out"
	exec "$vm" --timeout 15m --out "$out" -- sh -c \
		"DEMO_LOSS=$loss DEMO_SECONDS=$secs DEMO_QPS=$qps tools/demo.sh"
fi

# ---- guest ----------------------------------------------------------------
. "$top/selftests/verbs/datapath_lib.sh"

ksft_require_root
ksft_require_cmd ip tc rdma ib_write_bw ping
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem

say() { printf '\n== %s\n' "$*"; }

ipA=10.96.1.1
ipB=10.96.2.1
mroce_netns_add R1 || exit 1
mroce_netns_add R2 || exit 1
mroce_veth_add hA r1 "" "$R1" || exit 1
mroce_veth_add hB r2 "" "$R2" || exit 1
mroce_veth_add p1a p1b "$R1" "$R2" || exit 1
mroce_veth_add p2a p2b "$R1" "$R2" || exit 1

ip addr add "$ipA/32" dev "$hA"
ip addr add "$ipB/32" dev "$hB"
ip -n "$R1" addr add 10.96.1.254/24 dev "$r1"
ip -n "$R2" addr add 10.96.2.254/24 dev "$r2"
ip -n "$R1" addr add 10.96.11.1/24 dev "$p1a"
ip -n "$R2" addr add 10.96.11.2/24 dev "$p1b"
ip -n "$R1" addr add 10.96.12.1/24 dev "$p2a"
ip -n "$R2" addr add 10.96.12.2/24 dev "$p2b"
for r in "$R1" "$R2"; do
	ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.fib_multipath_hash_policy=1 net.ipv4.conf.all.rp_filter=0
done
ip -n "$R1" route add "$ipA/32" dev "$r1"
ip -n "$R1" route add "$ipB/32" nexthop via 10.96.11.2 dev "$p1a" \
	nexthop via 10.96.12.2 dev "$p2a"
ip -n "$R2" route add "$ipB/32" dev "$r2"
ip -n "$R2" route add "$ipA/32" nexthop via 10.96.11.1 dev "$p1b" \
	nexthop via 10.96.12.1 dev "$p2b"

# init_net: both ends are local addresses; force them through the routers.
for k in all "$hA" "$hB"; do
	old=$(sysctl -n "net.ipv4.conf.$k.rp_filter")
	mroce_defer sysctl -qw "net.ipv4.conf.$k.rp_filter=$old"
	sysctl -qw "net.ipv4.conf.$k.rp_filter=0"
done
sysctl -qw "net.ipv4.conf.$hA.accept_local=1" "net.ipv4.conf.$hB.accept_local=1"
ip route add 10.96.1.254/32 dev "$hA" table 1961
ip route add "$ipB/32" via 10.96.1.254 dev "$hA" src "$ipA" table 1961
ip route add 10.96.2.254/32 dev "$hB" table 1962
ip route add "$ipA/32" via 10.96.2.254 dev "$hB" src "$ipB" table 1962
mroce_defer ip route flush table 1961
mroce_defer ip route flush table 1962
ip rule add pref 100 iif lo to "$ipB/32" lookup 1961
mroce_defer ip rule del pref 100 iif lo to "$ipB/32" lookup 1961
ip rule add pref 101 iif lo to "$ipA/32" lookup 1962
mroce_defer ip rule del pref 101 iif lo to "$ipA/32" lookup 1962
if ip rule show | grep -q '^0:.*lookup local'; then
	ip rule add pref 1000 lookup local
	mroce_defer ip rule del pref 1000 lookup local
	ip rule del pref 0 lookup local
	mroce_defer ip rule add pref 0 lookup local
fi
for d in "$p1a" "$p2a"; do
	ip netns exec "$R1" tc qdisc add dev "$d" root netem loss "$loss%" delay 200us
done
for d in "$p1b" "$p2b"; do
	ip netns exec "$R2" tc qdisc add dev "$d" root netem loss "$loss%" delay 200us
done
ping -c 1 -W 5 -I "$ipA" "$ipB" >/dev/null || ksft_fail "no route from $ipA to $ipB"
say "topology: $ipA ($hA) -> R1 -> {path 1, path 2} -> R2 -> $ipB ($hB); netem loss $loss% + 200us on each path, both directions"

# Packets each path carried from R1 towards R2.
path_pkts() {
	ip netns exec "$R1" cat "/sys/class/net/$1/statistics/tx_packets"
}

# The provider runs uninstalled; DP_* for dp_perftest.
DP_IF_A=$hA
DP_IF_B=$hB
DP_IP_A=$ipA
DP_IP_B=$ipB
DP_NS_A=
DP_NS_B=
DP_PERFTEST_TIMEOUT=$((secs * 6 + 60))
declare -A bw

for drv in rxe metaroce; do
	say "$drv: ib_write_bw, 64 KiB messages, $qps QP(s), -D $secs"
	if ! (dp_initnet_devs "$drv" >/dev/null 2>&1 && dp_initnet_devs_del); then
		echo "$drv is not available in this build (module or datapath missing)"
		bw[$drv]=n/a
		dp_initnet_devs_del
		continue
	fi
	dp_initnet_devs "$drv"
	p1=$(path_pkts "$p1a")
	p2=$(path_pkts "$p2a")
	if dp_perftest "demo_$drv" ib_write_bw -s 65536 -q "$qps" -D "$secs"; then
		bw[$drv]=$DP_BW
	else
		bw[$drv]=failed
	fi
	d1=$(($(path_pkts "$p1a") - p1))
	d2=$(($(path_pkts "$p2a") - p2))
	echo "$drv: ${bw[$drv]} MB/s; packets R1->R2: path 1 $d1, path 2 $d2"
	if [ "$drv" = metaroce ]; then
		echo "metaroce per-path counters (debugfs):"
		dbg=/sys/kernel/debug/metaroce
		if [ -d "$dbg" ]; then
			find "$dbg" -type f | while read -r f; do
				case $f in
				*"$DP_DEV_A"* | *path*) echo "--- ${f#"$dbg"/}"; head -n 40 "$f" ;;
				esac
			done
		else
			echo "(no $dbg in this build)"
		fi
		dp_counters "$DP_DEV_A"
	fi
	dp_initnet_devs_del
done

say "summary: ib_write_bw over two lossy ECMP paths ($loss% loss each way)"
printf '  %-10s %10s MB/s\n' rxe "${bw[rxe]}" metaroce "${bw[metaroce]}"
if [[ ${bw[metaroce]} =~ ^[0-9.]+$ && ${bw[rxe]} =~ ^[0-9.]+$ ]]; then
	awk -v m="${bw[metaroce]}" -v r="${bw[rxe]}" \
		'BEGIN { if (r > 0) printf "  metaroce / rxe = %.1fx\n", m / r }'
fi
[[ ${bw[metaroce]} =~ ^[0-9.]+$ ]]
