# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
# Shared setup of the datapath tests (sourced after selftests/vm/lib.sh).
#
# Two topologies over one veth pair; netem, when asked for, sits on both
# ends (so both directions see it):
#
# dp_setup_netns [MTU]: MetaRoCE's own, one device per network namespace
#
#     netns $DP_NS_A                                  netns $DP_NS_B
#   +---------------------------+                  +---------------------------+
#   | mroA$$ (metaroce)         |                  | mroB$$ (metaroce)         |
#   |   netdev $DP_IF_A         |     veth pair    |   netdev $DP_IF_B         |
#   |   10.93.0.1/24 ===========+== netem both ===+=========== 10.93.0.2/24   |
#   +---------------------------+                  +---------------------------+
#   (static neighbours in both namespaces)
#
# DP_FAMILY=6 in the environment puts the datapath on IPv6: the veths also
# get fd93::1/64 and fd93::2/64 (no DAD, static neighbours), DP_IP_A/B and
# DP_GID_A/B are those addresses and their (non-mapped) RoCE v2 GIDs, and
# only perftest's own TCP connection stays on IPv4 (DP_OOB_B), which is all
# perftest can connect over.  dp_netstat and dp_family_check prove which
# family the traffic took.
#
# DP_REFERENCE=rxe in the environment turns dp_setup_netns into
# dp_setup_initnet rxe: every test can be checked against the reference.
#
# dp_setup_initnet TYPE [MTU]: two devices of TYPE (rxe or metaroce) in
# init_net, because rdma_rxe in 6.1 works only there.  Both addresses are
# local, so policy routing forces locally generated traffic for the peer out
# of the veth (tables 1931/1932 ahead of the local table, moved to pref
# 1000; rp_filter off, accept_local on; static neighbours):
#
#   init_net:  dev A  10.94.0.1/32 on $DP_IF_A  <== netem ==>  $DP_IF_B 10.94.0.2/32  dev B
#
# After a setup: DP_DEV_A/B (RDMA devices), DP_IP_A/B, DP_GID_A/B (RoCE v2
# GID indexes of those addresses), DP_OOB_B (B's IPv4 address, for
# perftest's TCP), DP_NS_A/B (empty in init_net), DP_IF_A/B.
# dp_a/dp_b CMD.. run CMD at end A/B.  Everything is undone at exit.

. "$(dirname "${BASH_SOURCE[0]}")/../vm/lib.sh"

DP_PORT=$((20000 + $$ % 10000))		# perftest TCP port, bumped per run
DP_OUT=${METAROCE_OUT:-/tmp}/datapath
mkdir -p "$DP_OUT"

dp_a() { mroce_ns "$DP_NS_A" "$@"; }
dp_b() { mroce_ns "$DP_NS_B" "$@"; }

dp_require() {
	ksft_require_root
	ksft_require_cmd ip tc rdma ss awk timeout
	ksft_require_module veth sch_netem
	mroce_use_provider || ksft_skip "provider not built (make provider)"
}

# The device must have its datapath verbs: a CQ that cannot be created
# (EOPNOTSUPP included) fails every datapath test, never skips it.
_dp_probe() {
	[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
		ksft_fail "selftests/verbs/integrity not built (make provider)"
	"$METAROCE_ROOT/selftests/verbs/integrity" -P -a "$DP_DEV_A"
	case $? in
	0) ;;
	4) ksft_fail "$DP_DEV_A: no datapath verbs (creating a CQ is not supported)" ;;
	*) ksft_fail "$DP_DEV_A: cannot create a CQ" ;;
	esac
}

_dp_gids() {
	mroce_wait_for 10 mroce_gid_index "$DP_DEV_A" "$DP_IP_A" ||
		ksft_fail "no RoCE v2 GID for $DP_IP_A on $DP_DEV_A"
	mroce_wait_for 10 mroce_gid_index "$DP_DEV_B" "$DP_IP_B" ||
		ksft_fail "no RoCE v2 GID for $DP_IP_B on $DP_DEV_B"
	DP_GID_A=$(mroce_gid_index "$DP_DEV_A" "$DP_IP_A")
	DP_GID_B=$(mroce_gid_index "$DP_DEV_B" "$DP_IP_B")
}

dp_setup_netns() {
	_mtu=${1:-9000}
	case ${DP_FAMILY:=4} in
	4 | 6) ;;
	*) ksft_fail "DP_FAMILY=$DP_FAMILY: 4 or 6" ;;
	esac
	# DP_REFERENCE=rxe: the same test over rdma_rxe (init_net), to check
	# the test itself against a known-good implementation.
	if [ "${DP_REFERENCE:-}" = rxe ]; then
		[ "$DP_FAMILY" = 4 ] ||
			ksft_fail "the rxe reference topology is IPv4 only"
		dp_setup_initnet rxe "$_mtu"
		return
	fi
	ksft_require_module metaroce
	mroce_netns_add DP_NS_A || ksft_fail "netns"
	mroce_netns_add DP_NS_B || ksft_fail "netns"
	mroce_veth_add DP_IF_A DP_IF_B "$DP_NS_A" "$DP_NS_B" ||
		ksft_fail "veth pair"
	DP_IP_A=10.93.0.1
	DP_IP_B=10.93.0.2
	dp_a ip link set "$DP_IF_A" mtu "$_mtu"
	dp_b ip link set "$DP_IF_B" mtu "$_mtu"
	dp_a ip addr add "$DP_IP_A/24" dev "$DP_IF_A"
	dp_b ip addr add "$DP_IP_B/24" dev "$DP_IF_B"
	# Static neighbours: ib_core resolves a RoCE QP's destination MAC at
	# modify_qp(RTR) with one ARP attempt in about a second, and netem
	# drops ARP as well; at 10% loss both ways that failed the QP with
	# ETIMEDOUT in about 1 of 6 runs.  The loss is for the transport.
	dp_a ip neigh replace "$DP_IP_B" dev "$DP_IF_A" nud permanent \
		lladdr "$(dp_b cat "/sys/class/net/$DP_IF_B/address")"
	dp_b ip neigh replace "$DP_IP_A" dev "$DP_IF_B" nud permanent \
		lladdr "$(dp_a cat "/sys/class/net/$DP_IF_A/address")"
	DP_OOB_B=$DP_IP_B
	if [ "$DP_FAMILY" = 6 ]; then
		DP_IP_A=fd93::1
		DP_IP_B=fd93::2
		dp_a ip -6 addr add "$DP_IP_A/64" dev "$DP_IF_A" nodad
		dp_b ip -6 addr add "$DP_IP_B/64" dev "$DP_IF_B" nodad
		dp_a ip -6 neigh replace "$DP_IP_B" dev "$DP_IF_A" \
			nud permanent lladdr \
			"$(dp_b cat "/sys/class/net/$DP_IF_B/address")"
		dp_b ip -6 neigh replace "$DP_IP_A" dev "$DP_IF_B" \
			nud permanent lladdr \
			"$(dp_a cat "/sys/class/net/$DP_IF_A/address")"
	fi
	DP_DEV_A=mroA$$
	DP_DEV_B=mroB$$
	dp_a rdma link add "$DP_DEV_A" type metaroce netdev "$DP_IF_A" ||
		ksft_fail "rdma link add $DP_DEV_A"
	mroce_defer rdma link delete "$DP_DEV_A"
	dp_b rdma link add "$DP_DEV_B" type metaroce netdev "$DP_IF_B" ||
		ksft_fail "rdma link add $DP_DEV_B"
	mroce_defer rdma link delete "$DP_DEV_B"
	_dp_gids
	_dp_probe
	mroce_log "topology: $DP_DEV_A/$DP_IF_A $DP_IP_A [$DP_NS_A] <-> $DP_DEV_B/$DP_IF_B $DP_IP_B [$DP_NS_B], MTU $_mtu, GID index $DP_GID_A/$DP_GID_B"
}

dp_setup_initnet() {
	dp_initnet_net "${2:-9000}"
	dp_initnet_devs "$1"
}

# dp_initnet_net [MTU]: the init_net veth pair and its policy routing.
dp_initnet_net() {
	_mtu=${1:-9000}
	DP_NS_A=
	DP_NS_B=
	DP_IP_A=10.94.0.1
	DP_IP_B=10.94.0.2
	DP_OOB_B=$DP_IP_B
	mroce_veth_add DP_IF_A DP_IF_B || ksft_fail "veth pair"
	ip link set "$DP_IF_A" mtu "$_mtu"
	ip link set "$DP_IF_B" mtu "$_mtu"
	ip addr add "$DP_IP_A/32" dev "$DP_IF_A"
	ip addr add "$DP_IP_B/32" dev "$DP_IF_B"
	for _k in all "$DP_IF_A" "$DP_IF_B"; do
		_old=$(sysctl -n "net.ipv4.conf.$_k.rp_filter")
		mroce_defer sysctl -qw "net.ipv4.conf.$_k.rp_filter=$_old"
		sysctl -qw "net.ipv4.conf.$_k.rp_filter=0"
	done
	sysctl -qw "net.ipv4.conf.$DP_IF_A.accept_local=1" \
		"net.ipv4.conf.$DP_IF_B.accept_local=1"
	ip route add "$DP_IP_B/32" dev "$DP_IF_A" src "$DP_IP_A" table 1931 ||
		ksft_fail "route table 1931"
	ip route add "$DP_IP_A/32" dev "$DP_IF_B" src "$DP_IP_B" table 1932 ||
		ksft_fail "route table 1932"
	mroce_defer ip route flush table 1931
	mroce_defer ip route flush table 1932
	ip rule add pref 100 iif lo to "$DP_IP_B/32" lookup 1931
	mroce_defer ip rule del pref 100 iif lo to "$DP_IP_B/32" lookup 1931
	ip rule add pref 101 iif lo to "$DP_IP_A/32" lookup 1932
	mroce_defer ip rule del pref 101 iif lo to "$DP_IP_A/32" lookup 1932
	if ip rule show | grep -q '^0:.*lookup local'; then
		ip rule add pref 1000 lookup local
		mroce_defer ip rule del pref 1000 lookup local
		ip rule del pref 0 lookup local
		mroce_defer ip rule add pref 0 lookup local
	fi
	ip neigh replace "$DP_IP_B" lladdr "$(cat "/sys/class/net/$DP_IF_B/address")" \
		dev "$DP_IF_A" nud permanent
	ip neigh replace "$DP_IP_A" lladdr "$(cat "/sys/class/net/$DP_IF_A/address")" \
		dev "$DP_IF_B" nud permanent
	case $(ip route get "$DP_IP_B" from "$DP_IP_A") in
	*" dev $DP_IF_A "*) ;;
	*) ksft_fail "traffic to $DP_IP_B does not leave through $DP_IF_A" ;;
	esac
}

# dp_initnet_devs TYPE: devices of TYPE (rxe, metaroce) on the init_net
# pair; dp_initnet_devs_del removes them (one driver at a time on a pair).
dp_initnet_devs() {
	_type=$1
	case $_type in
	rxe) ksft_require_module rdma_rxe ;;
	metaroce) ksft_require_module metaroce ;;
	*) ksft_fail "dp_initnet_devs: unknown type $_type" ;;
	esac
	DP_DEV_A=${_type%%roce}A$$
	DP_DEV_B=${_type%%roce}B$$
	rdma link add "$DP_DEV_A" type "$_type" netdev "$DP_IF_A" ||
		ksft_fail "rdma link add $DP_DEV_A type $_type"
	mroce_defer rdma link delete "$DP_DEV_A"
	rdma link add "$DP_DEV_B" type "$_type" netdev "$DP_IF_B" ||
		ksft_fail "rdma link add $DP_DEV_B type $_type"
	mroce_defer rdma link delete "$DP_DEV_B"
	_dp_gids
	_dp_probe
	mroce_log "topology (init_net, $_type): $DP_DEV_A/$DP_IF_A $DP_IP_A <-> $DP_DEV_B/$DP_IF_B $DP_IP_B, GID index $DP_GID_A/$DP_GID_B"
}

dp_initnet_devs_del() {
	rdma link delete "$DP_DEV_A" 2>/dev/null
	rdma link delete "$DP_DEV_B" 2>/dev/null
	mroce_wait_for 20 sh -c "[ ! -e /sys/class/infiniband/$DP_DEV_A ] &&
		[ ! -e /sys/class/infiniband/$DP_DEV_B ]"
}

# dp_netem [NETEM OPTIONS..]: impair both veth ends ("" removes netem).
dp_netem() {
	dp_a tc qdisc del dev "$DP_IF_A" root 2>/dev/null
	dp_b tc qdisc del dev "$DP_IF_B" root 2>/dev/null
	[ $# -eq 0 ] && return 0
	# shellcheck disable=SC2068 # netem options are words
	dp_a tc qdisc add dev "$DP_IF_A" root netem $@ || return 1
	# shellcheck disable=SC2068
	dp_b tc qdisc add dev "$DP_IF_B" root netem $@
}

# dp_perftest NAME TOOL ARGS..: one perftest run, server at B, client at A.
# Sets DP_BW (MB/s average) and DP_RATE (Mpps) for bw tools, DP_LAT (usec:
# the typical of an -n run, the average of a -D run) for lat tools, and for
# -n runs also DP_LAT_AVG and DP_LAT_P99 (99th percentile); returns 1 (and prints both sides) if either side failed or
# reported nothing (bw: zero MB/s and zero messages per second).
# DP_PIN=1 pins the server to the last CPU and the client to CPU 0: two
# busy-polling processes that the scheduler put on one CPU take turns, and
# a ping-pong's round trip then doubles for either driver.
dp_perftest() {
	dp_perftest_once "$@"
	_rc=$?
	[ "$_rc" = 2 ] || return "$_rc"
	# perftest times its runs with the TSC, calibrated against the clock
	# for a moment at start; under load (a shared host, a TCG guest) the
	# calibration can fail ("Correlation coefficient r^2 ... < 0.9") and
	# a run that completed reports 0 MB/s.  Its measure failed, not the
	# transport: run it once more.
	echo "# $1: perftest's clock calibration failed; once more"
	dp_perftest_once "$@"
	[ $? = 0 ]
}

dp_perftest_once() {
	_name=$1
	_tool=$2
	shift 2
	DP_PORT=$((DP_PORT + 1))
	_slog=$DP_OUT/$_name.server
	_clog=$DP_OUT/$_name.client
	_limit=${DP_PERFTEST_TIMEOUT:-180}
	_pin_a=
	_pin_b=
	if [ "${DP_PIN:-0}" = 1 ] && [ "$(nproc)" -gt 1 ]; then
		_pin_a="taskset -c 0"
		_pin_b="taskset -c $(($(nproc) - 1))"
	fi
	# shellcheck disable=SC2086 # the pin prefixes are words
	dp_b $_pin_b timeout "$_limit" "$_tool" -d "$DP_DEV_B" -x "$DP_GID_B" \
		-p "$DP_PORT" -F "$@" >"$_slog" 2>&1 &
	_srv=$!
	if ! mroce_wait_for 20 sh -c "$(
		[ -n "$DP_NS_B" ] && echo "ip netns exec $DP_NS_B ") ss -ltnH | grep -q ':$DP_PORT '"; then
		kill "$_srv" 2>/dev/null
		wait "$_srv"
		sed 's/^/#   server: /' "$_slog"
		echo "# $_name: server did not listen"
		return 1
	fi
	# shellcheck disable=SC2086
	dp_a $_pin_a timeout "$_limit" "$_tool" -d "$DP_DEV_A" -x "$DP_GID_A" \
		-p "$DP_PORT" -F "$@" "${DP_OOB_B:-$DP_IP_B}" >"$_clog" 2>&1
	_crc=$?
	wait "$_srv"
	_src=$?
	DP_BW=
	DP_LAT=
	DP_LAT_AVG=
	DP_LAT_P99=
	case $_tool in
	*_bw)
		# "#bytes #iterations BW-peak BW-average MsgRate": the average,
		# and the message rate, which is what is left of 1-byte
		# messages once MB/s is rounded to two decimals.
		DP_BW=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' "$_clog")
		DP_RATE=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $5 } END { print v }' "$_clog")
		_val=$DP_BW
		awk -v v="$DP_BW" 'BEGIN { exit !(v == 0) }' && _val=$DP_RATE
		;;
	*_lat)
		# "#bytes #iter min max typical avg ...": the typical; with -D,
		# "#bytes #iter t_avg tps": the average.
		DP_LAT=$(awk '$1 ~ /^[0-9]+$/ && NF >= 6 { v = $5 }
			$1 ~ /^[0-9]+$/ && NF == 4 { v = $3 } END { print v }' "$_clog")
		# "... avg stdev 99% 99.9%" after the typical
		DP_LAT_AVG=$(awk '$1 ~ /^[0-9]+$/ && NF >= 6 { v = $6 } END { print v }' "$_clog")
		DP_LAT_P99=$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { v = $8 } END { print v }' "$_clog")
		_val=$DP_LAT
		;;
	esac
	# a failed calibration can also print "inf" for every figure, which
	# awk would take for a string greater than 0: only digits count
	if [ "$_crc" != 0 ] || [ "$_src" != 0 ] || [ -z "$_val" ] ||
		! awk -v v="$_val" 'BEGIN {
			exit !(v ~ /^[0-9]*\.?[0-9]+$/ && v + 0 > 0) }'; then
		if [ "$_crc" = 0 ] && [ "$_src" = 0 ] &&
			[ "${_calib_retry:-}" != "$_name" ] &&
			grep -q 'Correlation coefficient' "$_clog" "$_slog"; then
			_calib_retry=$_name
			return 2
		fi
		sed 's/^/#   client: /' "$_clog"
		sed 's/^/#   server: /' "$_slog"
		# CI keeps only the lines around the verdict: repeat the
		# errors perftest printed, and what the peers looked like.
		grep -ihE 'error|fail|status|exceed|abort|couldn' \
			"$_clog" "$_slog" | head -n 12 | sed 's/^/#   why: /'
		dp_debugfs_peers | head -n 24 | sed 's/^/#   /'
		echo "# $_name: client exit $_crc, server exit $_src, result '${_val:-none}'"
		return 1
	fi
	return 0
}

# dp_run_pair NAME PORT GIDFLAG TOOL ARGS..: TOOL -d DEV_B GIDFLAG GID_B
# -p PORT ARGS at B (server), then the same with A's device and GID and
# DP_OOB_B at A (client); both must exit 0.  Logs in DP_OUT.
dp_run_pair() {
	_name=$1
	_pport=$2
	_gf=$3
	_tool=$4
	shift 4
	_slog=$DP_OUT/$_name.server
	_clog=$DP_OUT/$_name.client
	_limit=${DP_PERFTEST_TIMEOUT:-180}
	dp_b timeout "$_limit" "$_tool" -d "$DP_DEV_B" "$_gf" "$DP_GID_B" \
		-p "$_pport" "$@" >"$_slog" 2>&1 &
	_srv=$!
	if ! mroce_wait_for 20 sh -c "$(
		[ -n "$DP_NS_B" ] && echo "ip netns exec $DP_NS_B ") ss -ltnH | grep -q ':$_pport '"; then
		kill "$_srv" 2>/dev/null
		wait "$_srv"
		sed 's/^/#   server: /' "$_slog"
		return 1
	fi
	dp_a timeout "$_limit" "$_tool" -d "$DP_DEV_A" "$_gf" "$DP_GID_A" \
		-p "$_pport" "$@" "${DP_OOB_B:-$DP_IP_B}" >"$_clog" 2>&1
	_crc=$?
	wait "$_srv"
	_src=$?
	if [ "$_crc" != 0 ] || [ "$_src" != 0 ]; then
		sed 's/^/#   client: /' "$_clog"
		sed 's/^/#   server: /' "$_slog"
		echo "# $_name: client exit $_crc, server exit $_src"
		return 1
	fi
	return 0
}

# dp_tool NAME: a binary of the CMake build (build/, else build-*/).
dp_tool() {
	for _b in "$METAROCE_ROOT"/build "$METAROCE_ROOT"/build-*; do
		_t=$(find "$_b/tools" -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1)
		[ -n "$_t" ] && { echo "$_t"; return 0; }
	done
	return 1
}

# dp_integrity ARGS..: selftests/verbs/integrity between the two devices.
dp_integrity() {
	dp_a "$METAROCE_ROOT/selftests/verbs/integrity" -a "$DP_DEV_A" \
		-A "$DP_GID_A" -b "$DP_DEV_B" -B "$DP_GID_B" "$@"
}

# dp_debugfs_peers: each end's connection lines from debugfs (state, why
# it failed), then the kernel's last words about it.
dp_debugfs_peers() {
	mountpoint -q /sys/kernel/debug 2>/dev/null ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for _d in "$DP_DEV_A" "$DP_DEV_B"; do
		grep -s '^peer' "/sys/kernel/debug/metaroce/$_d/peers" |
			sed "s/^/$_d: /"
	done
	dmesg 2>/dev/null | grep -E "metaroce|$DP_DEV_A|$DP_DEV_B" | tail -n 6
}

# dp_tunable NAME VALUE: set the module's debugfs tunable NAME (params.c)
# to VALUE until the test ends; a missing file or a refused value fails
# the test.  Connections read their settings when they open: set before
# any traffic.
dp_tunable() {
	_t=/sys/kernel/debug/metaroce/tunables/$1
	mountpoint -q /sys/kernel/debug 2>/dev/null ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w "$_t" ] || ksft_fail "no $_t"
	mroce_defer "echo $(cat "$_t") >$_t"
	echo "$2" >"$_t" || ksft_fail "$1 $2 refused"
}

# dp_counter DEV NAME: a hw counter of DEV (0 if absent).
dp_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null ||
		cat "/sys/class/infiniband/$1/hw_counters/$2" 2>/dev/null ||
		echo 0
}

# dp_counters DEV: every non-zero hw counter of DEV on one comment line.
dp_counters() {
	for _d in "/sys/class/infiniband/$1/ports/1/hw_counters" \
		"/sys/class/infiniband/$1/hw_counters"; do
		[ -d "$_d" ] || continue
		for _f in "$_d"/*; do
			_v=$(cat "$_f" 2>/dev/null) || continue
			[ "$_v" != 0 ] && printf '%s=%s ' "${_f##*/}" "$_v"
		done
	done | sed "s/^/# $1 counters: /"
	echo
}

# ---- which family the traffic took --------------------------------------

# _dp_netstat_end END NS IF DEV: END's counters, "END.NAME VALUE" per line:
# its netns' IPv6 and IPv4 MIBs (/proc/net/snmp6; /proc/net/snmp as
# Ip.X, Udp.X..), the veth's own IPv6 MIB (END.if.X, /proc/net/dev_snmp6)
# and, read first, the device's packets (tx_pkts, rx_pkts).
_dp_netstat_end() {
	# the device first: a packet in flight as this runs is then counted by
	# the IP layer no earlier than by the device (the UDP receive counters
	# move once the device has taken the datagram)
	for _c in tx_pkts rx_pkts; do
		echo "$1.$_c $(dp_counter "$4" "$_c")"
	done
	mroce_ns "$2" cat /proc/net/snmp6 | awk -v e="$1" '{ print e "." $1, $2 }'
	mroce_ns "$2" cat /proc/net/snmp | awk -v e="$1" '{
		p = substr($1, 1, length($1) - 1)
		if (!(p in seen)) { seen[p] = 1; for (i = 2; i <= NF; i++) n[p, i] = $i; next }
		for (i = 2; i <= NF; i++) print e "." p "." n[p, i], $i }'
	mroce_ns "$2" cat "/proc/net/dev_snmp6/$3" |
		awk -v e="$1" '{ print e ".if." $1, $2 }'
}

# dp_netstat FILE: both ends' counters (_dp_netstat_end) into FILE.
dp_netstat() {
	{
		_dp_netstat_end a "$DP_NS_A" "$DP_IF_A" "$DP_DEV_A"
		_dp_netstat_end b "$DP_NS_B" "$DP_IF_B" "$DP_DEV_B"
	} >"$1"
}

# dp_delta BEFORE AFTER NAME..: how much the named counters (summed) grew
# between two dp_netstat files.
dp_delta() {
	_b=$1
	_a=$2
	shift 2
	awk -v names=" $* " 'FNR == NR { b[$1] = $2; next }
		index(names, " " $1 " ") { d += $2 - b[$1] } END { print d + 0 }' \
		"$_b" "$_a"
}

# dp_family_check BEFORE: what moved since dp_netstat BEFORE went over
# DP_FAMILY only, unfragmented.  Every MetaRoCE packet a device received
# came in through its veth as IPv6 (the veth's Ip6InReceives grew at least
# by the device's rx_pkts) and as a UDP/IPv6 datagram (its netns'
# Udp6InDatagrams too), while no UDP/IPv4 datagram arrived at either end;
# with DP_FAMILY=4 the other way round (UDP/IPv4 datagrams at least
# rx_pkts, no UDP/IPv6 one).  (The sender's side has no such count: a UDP
# tunnel's transmit moves neither Ip6OutRequests nor Udp6OutDatagrams.)
# Neither family fragmented or reassembled anything, nor said "too big".
# After dp_v6_filters, no IPv6 packet at B had flow label 0.
_dp_both_positive() { [ "$1" -gt 0 ] && [ "$2" -gt 0 ]; }

dp_family_check() {
	_before=$1
	# rxe's counters are not ours, and init_net counts the whole guest
	if [ "${DP_REFERENCE:-}" = rxe ]; then
		mroce_log "rxe reference: no family check"
		return 0
	fi
	_after=$DP_OUT/netstat.after
	dp_netstat "$_after"
	for _e in a b; do
		_tx=$(dp_delta "$_before" "$_after" "$_e.tx_pkts")
		_rx=$(dp_delta "$_before" "$_after" "$_e.rx_pkts")
		_if6=$(dp_delta "$_before" "$_after" "$_e.if.Ip6InReceives")
		_in6=$(dp_delta "$_before" "$_after" "$_e.Udp6InDatagrams")
		_in4=$(dp_delta "$_before" "$_after" "$_e.Udp.InDatagrams")
		mroce_log "end $_e: device sent $_tx, received $_rx packets; veth IPv6 in $_if6; UDP/IPv6 in $_in6, UDP/IPv4 in $_in4"
		ksft_check "end $_e sent packets ($_tx) and received ($_rx)" \
			_dp_both_positive "$_tx" "$_rx"
		if [ "$DP_FAMILY" = 6 ]; then
			ksft_check "end $_e: its $_rx packets came through the veth as IPv6 ($_if6)" \
				[ "$_if6" -ge "$_rx" ]
			ksft_check "end $_e: its $_rx packets came as UDP/IPv6 ($_in6)" \
				[ "$_in6" -ge "$_rx" ]
			ksft_check "end $_e: no UDP/IPv4 datagram arrived ($_in4)" \
				[ "$_in4" = 0 ]
		else
			ksft_check "end $_e: its $_rx packets came as UDP/IPv4 ($_in4)" \
				[ "$_in4" -ge "$_rx" ]
			ksft_check "end $_e: no UDP/IPv6 datagram arrived ($_in6)" \
				[ "$_in6" = 0 ]
		fi
	done
	_frag=$(dp_delta "$_before" "$_after" \
		a.Ip6FragCreates a.Ip6FragFails a.Ip6ReasmReqds \
		b.Ip6FragCreates b.Ip6FragFails b.Ip6ReasmReqds \
		a.Ip.FragCreates a.Ip.FragFails a.Ip.ReasmReqds \
		b.Ip.FragCreates b.Ip.FragFails b.Ip.ReasmReqds)
	_big=$(dp_delta "$_before" "$_after" \
		a.Icmp6OutPktTooBigs a.Icmp6InPktTooBigs \
		b.Icmp6OutPktTooBigs b.Icmp6InPktTooBigs)
	ksft_check "no packet fragmented or reassembled ($_frag)" [ "$_frag" = 0 ]
	ksft_check "no packet too big for the MTU ($_big ICMPv6 too big)" \
		[ "$_big" = 0 ]
	if [ "$DP_FAMILY" = 6 ] && [ -n "${_dp_filters:-}" ]; then
		_nolabel=$(dp_filter_count 2)
		ksft_check "every IPv6 packet at B had a flow label ($_nolabel without)" \
			[ "$_nolabel" = 0 ]
	fi
}

# dp_v6_filters [BIT]: count UDP/IPv6 packets arriving at B (clsact
# ingress, u32, each a gact action that continues): prio 2 those with flow
# label 0 (dp_family_check reads it), prio 1, given BIT (a power of two),
# those whose IPv6 payload length has that bit set.  With BIT the largest
# power of two at most the MTU's largest payload, those are the packets of
# at least BIT bytes.
dp_v6_filters() {
	ksft_require_module sch_ingress cls_u32 act_gact
	dp_b tc qdisc add dev "$DP_IF_B" clsact || return 1
	if [ -n "${1:-}" ]; then
		dp_b tc filter add dev "$DP_IF_B" ingress protocol ipv6 prio 1 \
			u32 match u16 "$1" "$1" at 4 match u8 17 0xff at 6 \
			action continue || return 1
	fi
	dp_b tc filter add dev "$DP_IF_B" ingress protocol ipv6 prio 2 \
		u32 match u32 0 0x000fffff at 0 match u8 17 0xff at 6 \
		action continue || return 1
	_dp_filters=1
}

# dp_filter_count PRIO: the packets dp_v6_filters' filter PRIO counted.
dp_filter_count() {
	dp_b tc -s filter show dev "$DP_IF_B" ingress prio "$1" |
		awk '/Sent [0-9]+ bytes [0-9]+ pkt/ {
			for (i = 1; i < NF; i++) if ($i == "bytes") n += $(i + 1) }
			END { print n + 0 }'
}

# dp_resources DEV: DEV's restrack counts ("pd N cq N qp N ..."), as seen
# from end A (the namespaces share the RDMA devices).
dp_resources() {
	dp_a rdma resource show "$1" | sed 's/^[0-9]*: [^:]*: *//'
}

# dp_no_leak WHAT BEFORE_A BEFORE_B: both devices' counts are back to the
# ones taken before WHAT ran.
dp_no_leak() {
	_nl_a=$(dp_resources "$DP_DEV_A")
	_nl_b=$(dp_resources "$DP_DEV_B")
	if [ "$_nl_a" = "$2" ] && [ "$_nl_b" = "$3" ]; then
		echo "ok: $1 left no resource behind ($DP_DEV_A: $_nl_a; $DP_DEV_B: $_nl_b)"
		return
	fi
	echo "FAIL: $1 left resources behind: $DP_DEV_A $2 -> $_nl_a; $DP_DEV_B $3 -> $_nl_b"
	_ksft_failed=$((_ksft_failed + 1))
}
