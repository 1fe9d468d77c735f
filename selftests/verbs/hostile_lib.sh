# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
# The hostile-network topology (sourced after datapath_lib.sh): A and B run
# MetaRoCE, C is an off-path attacker on the same switch that forges A's
# address (or any other) with tools/inject/mroce-inject, D is a host B has
# never heard of.  A switch, not a router: B sees a forged packet exactly as
# one from A, and B's answers to A's address go to the real A, never to C.
#
#                         netns $HL_NS_S (bridge br0)
#        +-------------------+---------+---------+-------------------+
#        |                   |                   |                   |
#   netns A             netns B             netns C             netns D
#   mroA (metaroce)     mroB (metaroce)     mroce-inject        mroD (metaroce)
#   10.97.0.1/24        10.97.0.2/24        10.97.0.3/24        10.97.0.4/24
#   fd97::1/64          fd97::2/64          fd97::3/64          fd97::4/64
#
# Forged sources other than A's are drawn from 10.98.0.0/16 and the /64
# fd98:0:0:1::/64; B routes both to C (which does not forward), so B's
# CHALLENGEs to them stay inside the test.  Static neighbours between A, B
# and D, and for C at B.
#
# hl_setup [MTU] [D]: build it (D only when the second argument is "D").
# After it: the datapath_lib.sh variables for A and B (DP_NS_A/B,
# DP_DEV_A/B, DP_IP_A/B, DP_GID_A/B, DP_IF_A/B), HL_NS_C, HL_IP_C,
# HL_IP6_A/B, HL_NET4, HL_NET6, and with D: HL_NS_D, HL_DEV_D, HL_IP_D,
# HL_GID_D.

HL_NET4=10.98.0.0/16
HL_NET6=fd98:0:0:1::/64

# _hl_port NS IP IP6 MTU: a veth from NS to the switch, addresses on it;
# sets _hl_if (the end in NS).
# shellcheck disable=SC2154 # mroce_veth_add sets _hl_if and _hl_sw
_hl_port() {
	mroce_veth_add _hl_if _hl_sw "$1" "$HL_NS_S" || ksft_fail "veth to $1"
	ip -n "$1" link set "$_hl_if" mtu "$4"
	ip -n "$HL_NS_S" link set "$_hl_sw" mtu "$4"
	ip -n "$HL_NS_S" link set "$_hl_sw" master br0 ||
		ksft_fail "bridge port"
	ip -n "$1" addr add "$2/24" dev "$_hl_if"
	ip -n "$1" -6 addr add "$3/64" dev "$_hl_if" nodad
}

# _hl_neigh NS IF IP IP6 OTHER_NS OTHER_IF: OTHER's static neighbours in NS
_hl_neigh() {
	_mac=$(ip netns exec "$5" cat "/sys/class/net/$6/address")
	ip -n "$1" neigh replace "$3" dev "$2" lladdr "$_mac" nud permanent
	ip -n "$1" -6 neigh replace "$4" dev "$2" lladdr "$_mac" nud permanent
}

hl_setup() {
	_mtu=${1:-9000}
	ksft_require_module metaroce bridge
	mroce_netns_add HL_NS_S || ksft_fail "netns"
	ip -n "$HL_NS_S" link add br0 type bridge || ksft_fail "bridge"
	ip -n "$HL_NS_S" link set br0 mtu "$_mtu" up
	for _n in A B C; do
		mroce_netns_add "HL_NS_$_n" || ksft_fail "netns"
	done
	DP_NS_A=$HL_NS_A
	DP_NS_B=$HL_NS_B
	DP_IP_A=10.97.0.1
	DP_IP_B=10.97.0.2
	HL_IP_C=10.97.0.3
	HL_IP6_A=fd97::1
	HL_IP6_B=fd97::2
	HL_IP6_C=fd97::3
	_hl_port "$HL_NS_A" "$DP_IP_A" "$HL_IP6_A" "$_mtu"
	DP_IF_A=$_hl_if
	_hl_port "$HL_NS_B" "$DP_IP_B" "$HL_IP6_B" "$_mtu"
	DP_IF_B=$_hl_if
	_hl_port "$HL_NS_C" "$HL_IP_C" "$HL_IP6_C" "$_mtu"
	HL_IF_C=$_hl_if
	_hl_neigh "$DP_NS_A" "$DP_IF_A" "$DP_IP_B" "$HL_IP6_B" "$DP_NS_B" "$DP_IF_B"
	_hl_neigh "$DP_NS_B" "$DP_IF_B" "$DP_IP_A" "$HL_IP6_A" "$DP_NS_A" "$DP_IF_A"
	_hl_neigh "$DP_NS_B" "$DP_IF_B" "$HL_IP_C" "$HL_IP6_C" "$HL_NS_C" "$HL_IF_C"
	_hl_neigh "$HL_NS_C" "$HL_IF_C" "$DP_IP_B" "$HL_IP6_B" "$DP_NS_B" "$DP_IF_B"
	dp_b ip route add "$HL_NET4" via "$HL_IP_C"
	dp_b ip -6 route add "$HL_NET6" via "$HL_IP6_C"
	DP_DEV_A=mroA$$
	DP_DEV_B=mroB$$
	dp_a rdma link add "$DP_DEV_A" type metaroce netdev "$DP_IF_A" ||
		ksft_fail "rdma link add $DP_DEV_A"
	mroce_defer rdma link delete "$DP_DEV_A"
	dp_b rdma link add "$DP_DEV_B" type metaroce netdev "$DP_IF_B" ||
		ksft_fail "rdma link add $DP_DEV_B"
	mroce_defer rdma link delete "$DP_DEV_B"
	if [ "${2:-}" = D ]; then
		mroce_netns_add HL_NS_D || ksft_fail "netns"
		HL_IP_D=10.97.0.4
		_hl_port "$HL_NS_D" "$HL_IP_D" fd97::4 "$_mtu"
		HL_IF_D=$_hl_if
		_hl_neigh "$HL_NS_D" "$HL_IF_D" "$DP_IP_B" "$HL_IP6_B" "$DP_NS_B" "$DP_IF_B"
		_hl_neigh "$DP_NS_B" "$DP_IF_B" "$HL_IP_D" fd97::4 "$HL_NS_D" "$HL_IF_D"
		HL_DEV_D=mroD$$
		ip netns exec "$HL_NS_D" rdma link add "$HL_DEV_D" type metaroce \
			netdev "$HL_IF_D" || ksft_fail "rdma link add $HL_DEV_D"
		mroce_defer rdma link delete "$HL_DEV_D"
		mroce_wait_for 10 mroce_gid_index "$HL_DEV_D" "$HL_IP_D" ||
			ksft_fail "no RoCE v2 GID on $HL_DEV_D"
		HL_GID_D=$(mroce_gid_index "$HL_DEV_D" "$HL_IP_D")
	fi
	_dp_gids
	_dp_probe
	ip netns exec "$HL_NS_C" ping -c 1 -W 5 "$DP_IP_B" >/dev/null ||
		ksft_fail "C cannot reach B"
	ip netns exec "$HL_NS_C" ping -6 -c 1 -W 5 "$HL_IP6_B" >/dev/null ||
		ksft_fail "C cannot reach B over IPv6"
	mroce_log "topology: A $DP_DEV_A $DP_IP_A, B $DP_DEV_B $DP_IP_B, C (attacker) $HL_IP_C${HL_DEV_D:+, D $HL_DEV_D $HL_IP_D} on one bridge, MTU $_mtu"
}

# hl_inject ARGS..: mroce-inject in C (after hl_tool).
hl_inject() {
	ip netns exec "$HL_NS_C" "$HL_INJECT" "$@"
}

hl_tool() {
	HL_INJECT=$(dp_tool mroce-inject) ||
		ksft_skip "mroce-inject not built (cmake --build build --target mroce-inject)"
}

# hl_snapshot FILE: every hw counter of B, "name value" per line.
hl_snapshot() {
	for _d in "/sys/class/infiniband/$DP_DEV_B/ports/1/hw_counters" \
		"/sys/class/infiniband/$DP_DEV_B/hw_counters"; do
		[ -d "$_d" ] || continue
		for _f in "$_d"/*; do
			echo "${_f##*/} $(cat "$_f" 2>/dev/null || echo 0)"
		done
	done >"$1"
}

# hl_delta BEFORE AFTER NAME..: how much the named counters (summed) grew
# between two hl_snapshot files (datapath_lib.sh's dp_delta).
hl_delta() {
	dp_delta "$@"
}

# hl_group_counters GROUP SNAPSHOT: the counter names of an injector group
# (tools/inject/craft.h, enum Group; "decoded" is every decoder rejection
# and the unknown connections together).  seq_drop is every counter a
# sequenced packet can be dropped by for its psn, dsn or msn: the
# duplicate counters, rx_drop_path/dsn/stream, and any other rx_drop_*
# or *window* counter that is not a decoder rejection, an ACK's or a
# state drop (so a counter added for out-of-window psns or msns is summed
# as soon as it exists).
hl_group_counters() {
	case $1 in
	drop_short | drop_version | drop_opcode | drop_reserved | drop_flags | \
		drop_length | drop_field) echo "rx_$1" ;;
	decoded) echo rx_drop_short rx_drop_version rx_drop_opcode \
		rx_drop_reserved rx_drop_flags rx_drop_length rx_drop_field \
		rx_unknown_conn rx_wrong_addr ;;
	unknown) echo rx_unknown_conn rx_wrong_addr ;;
	unproven) echo rx_connect_unproven ;;
	challenges) echo challenges_sent challenges_limited ;;
	challenged) echo rx_challenged ;;
	tx_challenges) echo tx_challenges ;;
	proven_end) echo rx_proven_end ;;
	ack_drop) echo rx_drop_ack ;;
	seq_drop)
		awk '$1 ~ /^rx_dup/ || $1 ~ /^rx_drop_/ || $1 ~ /window/ {
			if ($1 !~ /^rx_drop_(short|version|opcode|reserved|flags|length|field|ack|state)$/)
				print $1 }' "$2" | tr '\n' ' '
		;;
	*) echo "unknown-group-$1" ;;
	esac
}

# hl_check_expect LOG BEFORE AFTER LOSS SLACK_SEQ SLACK_ACK: every
# "expect GROUP MIN MAX" line of mroce-inject's LOG against B's counters:
# MIN less LOSS percent <= growth <= MAX (plus the slack real traffic
# needs for seq_drop and ack_drop).
hl_check_expect() {
	_log=$1
	_before=$2
	_after=$3
	_loss=$4
	while read -r _w _g _min _max; do
		[ "$_w" = expect ] || continue
		_names=$(hl_group_counters "$_g" "$_after")
		# shellcheck disable=SC2086 # names are words
		_d=$(hl_delta "$_before" "$_after" $_names)
		_lo=$((_min - _min * _loss / 100))
		_hi=$_max
		case $_g in
		seq_drop) _hi=$((_max + $5)) ;;
		ack_drop) _hi=$((_max + $6)) ;;
		esac
		mroce_log "$_g ($_names): +$_d, injector's construction says $_min..$_max (accepting $_lo..$_hi)"
		ksft_check "$HL_ATTACK: $_g counted (+$_d in $_lo..$_hi)" \
			test "$_d" -ge "$_lo" -a "$_d" -le "$_hi"
	done <"$_log"
}

# hl_b_conn: "B's id, A's id, paths, state" of B's connection to A, from
# debugfs; empty if there is none.
hl_b_conn() {
	sed -n "s/^peer $DP_IP_A local .* conn \([0-9]*\) peer_conn \([0-9]*\) state \([a-z_]*\).* paths \([0-9]*\) .*/\1 \2 \4 \3/p" \
		"/sys/kernel/debug/metaroce/$DP_DEV_B/peers" 2>/dev/null | head -n 1
}

hl_debugfs() {
	mountpoint -q /sys/kernel/debug 2>/dev/null ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -r "/sys/kernel/debug/metaroce/$DP_DEV_B/peers" ]
}
