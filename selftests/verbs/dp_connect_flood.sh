#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A CONNECT flood from forged sources must cost the receiver no state
# (protocol.md 6.2, stateless cookies), and must not keep a real opener
# out.  Topology in hostile_lib.sh: A, B, the attacker C and a fresh host D
# on one switch:
#
#   C --- 1000 CONNECTs from random hosts of 10.98.0.0/16 ------> B
#     --- 1000 CONNECTs from random hosts of fd98:0:0:1::/64 ---> B
#   D --- ib_write_bw, right after the flood ------------------> B
#
# Before: A connects once (ib_write_bw) for a baseline of how long a
# never-seen host takes to connect, measured the same way as D's.
# Then the flood (no cookie, or a guessed one; random ids and nonces); B
# must count every CONNECT as unproven (rx_connect_unproven grows by what C
# sent, less what the network lost, at most 1 %), answer each with a
# CHALLENGE or count it as limited (challenges_sent + challenges_limited
# grows by exactly as much), and allocate nothing: the hw counter peers,
# the debugfs peer list and rx_open_dropped unchanged.  Last, D, which B
# has never seen, opens right after the flood: its connection must be
# established (B's debugfs) within one second of its first CONNECT, and its
# transfer must succeed.  (The time from the flood's end is printed too;
# in the test VM most of it is perftest starting up, 1.7 s without any
# flood.)
. "$(dirname "$0")/datapath_lib.sh"
. "$(dirname "$0")/hostile_lib.sh"

dp_require
ksft_require_cmd ib_write_bw ping date
hl_tool
hl_setup 9000 D
hl_debugfs || ksft_skip "no metaroce debugfs"
peers=/sys/kernel/debug/metaroce/$DP_DEV_B/peers

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# established_from IP: B's connection to IP is established
established_from() {
	grep -q "^peer $1 local .* state established" "$peers"
}

# connect_time NS DEV GID IP NAME: ib_write_bw from NS's device to B, the
# server started first.  CT_OPEN: when the opener's connection appeared in
# its debugfs (its first CONNECT leaves then); CT_EST: when B shows it
# established (empty: never); CT_RC: the transfer's exit code.  A
# perftest client takes over a second to get as far as opening in the
# test VM, with or without a flood: the time that is the receiver's is
# CT_EST - CT_OPEN.
connect_time() {
	DP_PORT=$((DP_PORT + 1))
	dp_b timeout 60 ib_write_bw -d "$DP_DEV_B" -x "$DP_GID_B" \
		-p "$DP_PORT" -F -s 4096 -n 200 >"$DP_OUT/$5.server" 2>&1 &
	_srv=$!
	mroce_wait_for 20 sh -c "ip netns exec $DP_NS_B ss -ltnH | grep -q ':$DP_PORT '" ||
		ksft_fail "$5: server did not listen"
	ip netns exec "$1" timeout 60 ib_write_bw -d "$2" -x "$3" \
		-p "$DP_PORT" -F -s 4096 -n 200 "$DP_IP_B" \
		>"$DP_OUT/$5.client" 2>&1 &
	_cli=$!
	_mine=/sys/kernel/debug/metaroce/$2/peers
	CT_OPEN=
	CT_EST=
	for _i in $(seq 1 4000); do
		[ -z "$CT_OPEN" ] && grep -q "^peer $DP_IP_B " "$_mine" &&
			CT_OPEN=$(now)
		if established_from "$4"; then
			CT_EST=$(now)
			: "${CT_OPEN:=$CT_EST}"
			break
		fi
		sleep 0.002
	done
	wait "$_cli"
	_crc=$?
	wait "$_srv"
	CT_RC=$((_crc + $?))
	[ "$CT_RC" = 0 ] || sed 's/^/#   /' "$DP_OUT/$5.client" "$DP_OUT/$5.server"
	return 0
}

# 1. Baseline: A, never seen by B.
connect_time "$DP_NS_A" "$DP_DEV_A" "$DP_GID_A" "$DP_IP_A" flood_base
ksft_check "baseline: A connects and transfers" [ "$CT_RC" = 0 ]
base=
[ -n "$CT_EST" ] && base=$(since "$CT_OPEN" "$CT_EST")
mroce_log "baseline: A established ${base:-never} s after it opened"

# 2. The flood.
hl_snapshot "$DP_OUT/flood.before"
peers_before=$(grep -c '^peer' "$peers")
t_start=$(now)
hl_inject --dst "$DP_IP_B" --src-net "$HL_NET4" --kind connect-flood \
	--count 1000 --rate 2000 --seed "$$" >"$DP_OUT/flood4.log" 2>&1 ||
	ksft_fail "mroce-inject (IPv4) failed: $(cat "$DP_OUT/flood4.log")"
hl_inject --dst "$HL_IP6_B" --src-net "$HL_NET6" --kind connect-flood \
	--count 1000 --rate 2000 --seed $(($$ + 1)) >"$DP_OUT/flood6.log" 2>&1 ||
	ksft_fail "mroce-inject (IPv6) failed: $(cat "$DP_OUT/flood6.log")"
t_end=$(now)
grep '^#\|^expect' "$DP_OUT/flood4.log" "$DP_OUT/flood6.log"

# what the flood did, before D adds its own first (unproven) CONNECT
sleep 0.3
hl_snapshot "$DP_OUT/flood.after"
peer_lines=$(grep '^peer' "$peers")

# 3. D, right away.
connect_time "$HL_NS_D" "$HL_DEV_D" "$HL_GID_D" "$HL_IP_D" flood_d
d_rc=$CT_RC
took=
after_end=
if [ -n "$CT_EST" ]; then
	took=$(since "$CT_OPEN" "$CT_EST")
	after_end=$(since "$t_end" "$CT_EST")
fi
mroce_log "flood of $(since "$t_start" "$t_end") s; D opened $(since "$t_end" "${CT_OPEN:-$t_end}") s after its end (perftest's start-up) and was established ${took:-never} s later, ${after_end:-never} s after the flood's end (baseline: ${base:-?} s from open to established)"

sleep 1
hl_snapshot "$DP_OUT/flood_d.after"
sent=0
for _l in "$DP_OUT/flood4.log" "$DP_OUT/flood6.log"; do
	_n=$(sed -n 's/^expect unproven \([0-9]*\) .*/\1/p' "$_l")
	sent=$((sent + ${_n:-0}))
done
unproven=$(hl_delta "$DP_OUT/flood.before" "$DP_OUT/flood.after" \
	rx_connect_unproven)
answered=$(hl_delta "$DP_OUT/flood.before" "$DP_OUT/flood.after" \
	challenges_sent challenges_limited)
chal=$(hl_delta "$DP_OUT/flood.before" "$DP_OUT/flood.after" challenges_sent)
peers_hw=$(hl_delta "$DP_OUT/flood.before" "$DP_OUT/flood.after" peers)
opens=$(hl_delta "$DP_OUT/flood.before" "$DP_OUT/flood.after" \
	rx_open_dropped)
d_unproven=$(hl_delta "$DP_OUT/flood.after" "$DP_OUT/flood_d.after" \
	rx_connect_unproven)
d_peers=$(hl_delta "$DP_OUT/flood.after" "$DP_OUT/flood_d.after" peers)
mroce_log "C sent $sent CONNECTs; B: rx_connect_unproven +$unproven, challenges sent +$chal, sent or limited +$answered, peers +$peers_hw, rx_open_dropped +$opens; then D: rx_connect_unproven +$d_unproven, peers +$d_peers"
printf '%s\n' "$peer_lines" | sed 's/^/# B after the flood: /'

ksft_check "C sent 2000 CONNECTs" [ "$sent" = 2000 ]
ksft_check "every CONNECT counted unproven ($unproven of $sent, at most 1 % lost)" \
	test "$unproven" -le "$sent" -a "$unproven" -ge $((sent * 99 / 100))
ksft_check "each answered by a CHALLENGE or counted limited ($answered = $unproven)" \
	[ "$answered" = "$unproven" ]
# 2000 in well under 2 s is over the CHALLENGE rate (1000/s, burst 100)
flood_s=$(since "$t_start" "$t_end")
if awk -v t="$flood_s" 'BEGIN { exit !(t < 1.6) }'; then
	ksft_check "the CHALLENGEs rate limited (sent +$chal < $unproven in $flood_s s)" \
		test "$chal" -gt 0 -a "$chal" -lt "$unproven"
else
	mroce_log "the flood took $flood_s s: too slow to test the CHALLENGE rate limit"
fi
ksft_check "no peer allocated for the flood (peers +$peers_hw)" \
	[ "$peers_hw" = 0 ]
ksft_check "no debugfs peer of a forged source" \
	eval '! printf "%s\n" "$peer_lines" | grep -q "^peer \(10\.98\.\|fd98:\)"'
ksft_check "debugfs lists A only after the flood ($peers_before before it)" \
	[ "$(printf '%s\n' "$peer_lines" | grep -c '^peer')" = "$peers_before" ]
ksft_check "nothing reached the passive-open queue (rx_open_dropped +$opens)" \
	[ "$opens" = 0 ]
ksft_check "D connects and transfers after the flood" [ "$d_rc" = 0 ]
# Both ends of a perftest pair open: B's CONNECT may reach D first (D
# challenges it), or D's CONNECT, without a cookie, is challenged by B
# (once, or again for a retransmission that crossed the CHALLENGE).
ksft_check "D: one peer at B, at most 3 unproven CONNECTs (+$d_peers, +$d_unproven)" \
	test "$d_unproven" -le 3 -a "$d_peers" = 1
ksft_check "D established within 1 s of opening, right after the flood (${took:-never} s)" \
	awk -v t="${took:-99}" 'BEGIN { exit !(t + 0 <= 1.0) }'
dp_counters "$DP_DEV_B"
ksft_exit
