#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Harness self-test: proves the test VM, rdma-core and perftest work before
# any MetaRoCE code is involved.  Two rdma_rxe devices in init_net (rxe in
# 6.1 cannot live in other namespaces), their traffic forced across a veth
# pair with netem on both ends, and ib_write_bw between them must move data.
#
#    rxe A  10.199.0.1/32 on veth a   <-- netem -->   veth b 10.199.0.2/32 on  rxe B
#
# Both addresses are local, so by default the kernel would loop A->B traffic
# through lo.  Policy routing sends locally generated traffic for the peer
# out of the veth: "iif lo to <peer> lookup <table>" rules ahead of the local
# table (moved from pref 0 to 1000); the receiving end accepts a local
# source (accept_local=1, rp_filter=0); neighbours are static.
#
# Environment: RXE_NETEM (netem options, default "delay 200us"), RXE_SECONDS
# (perftest -D, default 3).  Everything is removed at exit, the rdma_rxe
# module too if this test loaded it.

. "$(dirname "$0")/../vm/lib.sh"

netem=${RXE_NETEM:-delay 200us}
secs=${RXE_SECONDS:-3}
size=65536
ipA=10.199.0.1
ipB=10.199.0.2
tabA=1991
tabB=1992
port=$((18515 + $$ % 1000))

ksft_require_root
ksft_require_cmd ip tc rdma ib_write_bw modprobe ss awk
rxe_was_loaded=0
[ -d /sys/module/rdma_rxe ] && rxe_was_loaded=1
ksft_require_module veth sch_netem rdma_rxe
[ "$rxe_was_loaded" = 1 ] || mroce_defer modprobe -r rdma_rxe

va='' vb=''
mroce_veth_add va vb || ksft_fail "cannot create a veth pair"
mroce_log "veth $va ($ipA) <-> $vb ($ipB), netem \"$netem\" on both"
ip addr add "$ipA/32" dev "$va" || ksft_fail "address on $va"
ip addr add "$ipB/32" dev "$vb" || ksft_fail "address on $vb"

for k in all "$va" "$vb"; do
	old=$(sysctl -n "net.ipv4.conf.$k.rp_filter")
	mroce_defer sysctl -qw "net.ipv4.conf.$k.rp_filter=$old"
	sysctl -qw "net.ipv4.conf.$k.rp_filter=0"
done
sysctl -qw "net.ipv4.conf.$va.accept_local=1" "net.ipv4.conf.$vb.accept_local=1"

ip route add "$ipB/32" dev "$va" src "$ipA" table "$tabA" || ksft_fail "route table $tabA"
ip route add "$ipA/32" dev "$vb" src "$ipB" table "$tabB" || ksft_fail "route table $tabB"
mroce_defer ip route flush table "$tabA"
mroce_defer ip route flush table "$tabB"
ip rule add pref 100 iif lo to "$ipB/32" lookup "$tabA" || ksft_fail "rule to $ipB"
mroce_defer ip rule del pref 100 iif lo to "$ipB/32" lookup "$tabA"
ip rule add pref 101 iif lo to "$ipA/32" lookup "$tabB" || ksft_fail "rule to $ipA"
mroce_defer ip rule del pref 101 iif lo to "$ipA/32" lookup "$tabB"
# Move the local table behind our rules; the deferred steps run in reverse:
# pref 0 comes back before pref 1000 goes.
ip rule add pref 1000 lookup local || ksft_fail "local rule at 1000"
mroce_defer ip rule del pref 1000 lookup local
ip rule del pref 0 lookup local || ksft_fail "cannot move the local rule"
mroce_defer ip rule add pref 0 lookup local

macA=$(cat "/sys/class/net/$va/address")
macB=$(cat "/sys/class/net/$vb/address")
ip neigh replace "$ipB" lladdr "$macB" dev "$va" nud permanent
ip neigh replace "$ipA" lladdr "$macA" dev "$vb" nud permanent

# shellcheck disable=SC2086 # netem options are words
tc qdisc add dev "$va" root netem $netem || ksft_fail "netem on $va"
# shellcheck disable=SC2086
tc qdisc add dev "$vb" root netem $netem || ksft_fail "netem on $vb"

route=$(ip route get "$ipB" from "$ipA")
mroce_log "route: $route"
case $route in
*" dev $va "*) ;;
*) ksft_fail "traffic to $ipB does not leave through $va" ;;
esac

devA=rxeh$$a
devB=rxeh$$b
rdma link add "$devA" type rxe netdev "$va" || ksft_fail "rdma link add $devA"
mroce_defer rdma link delete "$devA"
rdma link add "$devB" type rxe netdev "$vb" || ksft_fail "rdma link add $devB"
mroce_defer rdma link delete "$devB"

mroce_wait_for 10 mroce_gid_index "$devA" "$ipA" || ksft_fail "no RoCE v2 GID for $ipA on $devA"
mroce_wait_for 10 mroce_gid_index "$devB" "$ipB" || ksft_fail "no RoCE v2 GID for $ipB on $devB"
gidA=$(mroce_gid_index "$devA" "$ipA")
gidB=$(mroce_gid_index "$devB" "$ipB")
mroce_log "$devA GID index $gidA, $devB GID index $gidB"

tx_before=$(cat "/sys/class/net/$va/statistics/tx_bytes")
srv_log=$(mktemp)
cli_log=$(mktemp)
mroce_defer rm -f "$srv_log" "$cli_log"
ib_write_bw -d "$devB" -x "$gidB" -s "$size" -D "$secs" -F -p "$port" >"$srv_log" 2>&1 &
srv=$!
mroce_defer kill "$srv"
mroce_wait_for 20 sh -c "ss -ltnH | grep -q ':$port '" ||
	{ cat "$srv_log"; ksft_fail "ib_write_bw server did not listen on $port"; }

timeout $((secs * 10 + 60)) ib_write_bw -d "$devA" -x "$gidA" -s "$size" \
	-D "$secs" -F -p "$port" "$ipB" >"$cli_log" 2>&1
cli_rc=$?
wait "$srv"
srv_rc=$?
sed 's/^/client: /' "$cli_log"
[ "$srv_rc" = 0 ] || sed 's/^/server: /' "$srv_log"
[ "$cli_rc" = 0 ] || ksft_fail "ib_write_bw client exited with $cli_rc"
[ "$srv_rc" = 0 ] || ksft_fail "ib_write_bw server exited with $srv_rc"

# " 65536  <iterations>  <peak>  <average>  <msg rate>": the average.
bw=$(awk -v s="$size" '$1 == s && NF >= 4 { print $4 }' "$cli_log" | tail -n 1)
tx=$(($(cat "/sys/class/net/$va/statistics/tx_bytes") - tx_before))
mroce_log "ib_write_bw $size B over rxe: ${bw:-?} MB/s average; $tx bytes left $va"
tc -s qdisc show dev "$va" | sed 's/^/# /'

[ -n "$bw" ] || ksft_fail "no bandwidth line in the client's report"
# a finite number above 0: perftest prints "inf" when its clock calibration
# failed, which awk would take for a huge bandwidth
printf '%s\n' "$bw" | grep -Eq '^[0-9]+(\.[0-9]+)?$' ||
	ksft_fail "bandwidth '$bw' is not a measurement"
awk -v b="$bw" 'BEGIN { exit !(b > 0) }' || ksft_fail "bandwidth is $bw MB/s"
# The data must really have crossed the veth, not lo.
[ "$tx" -ge $((size * 10)) ] || ksft_fail "only $tx bytes went out of $va"

# Later tests must find the machine as it was: undo everything now and
# check that it is gone.
mroce_cleanup
! rdma link show | grep -q "rxeh$$" || ksft_fail "rxe links left behind"
if [ "$rxe_was_loaded" = 0 ] && [ -d /sys/module/rdma_rxe ]; then
	ksft_fail "rdma_rxe still loaded"
fi
ip rule show | grep -q '^0:.*lookup local' || ksft_fail "local rule not restored"
ksft_pass "rxe ib_write_bw $bw MB/s through netem ($netem)"
