#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hostile datagrams against a MetaRoCE port, from a third namespace routed
# through A (tools/inject/mroce-inject: truncated, oversized, wrong version,
# unknown connection, bad flags, random bytes, ACK blocks in IP fragments):
#
#   netns C (mroce-inject) 10.95.0.2 --veth-- 10.95.0.1 netns A (forwards)
#        A 10.93.0.1 --veth-- 10.93.0.2 B (target: device B's port 4797)
#
# Device B must count and drop every one where the injector built it to be
# counted (each decoder reason rx_drop_<reason> and rx_unknown_conn between
# what was sent less 5% and exactly what was sent, random bytes once in any
# of them: hostile_lib.sh's hl_check_expect), the kernel log must stay clean
# (session.sh checks it), and a perftest run and the integrity check
# concurrent with the injection must still pass.  Packets naming B's live
# connection slot with another generation (an old connection's id) must
# count as unknown, never reach the live one.
. "$(dirname "$0")/datapath_lib.sh"
. "$(dirname "$0")/hostile_lib.sh"

dp_require
inject=$(dp_tool mroce-inject) || ksft_skip "mroce-inject not built (make user)"
ksft_require_cmd ib_write_bw ping
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
dp_setup_netns 9000

mroce_netns_add nsC || ksft_fail "netns"
mroce_veth_add ifC ifAC "$nsC" "$DP_NS_A" || ksft_fail "veth to C"
ip -n "$nsC" addr add 10.95.0.2/24 dev "$ifC"
dp_a ip addr add 10.95.0.1/24 dev "$ifAC"
ip -n "$nsC" route add default via 10.95.0.1
dp_a sysctl -qw net.ipv4.ip_forward=1
dp_b ip route add 10.95.0.0/24 via "$DP_IP_A"
ip netns exec "$nsC" ping -c 1 -W 5 "$DP_IP_B" >/dev/null ||
	ksft_fail "C cannot reach B"

# inject_check NAME LOG BEFORE AFTER: mroce-inject ran, sent something, and
# B counted every "expect" line of its LOG (two-sided, 5% loss allowed).
inject_check() {
	HL_ATTACK=$1
	grep '^#\|^expect' "$2"
	_sent=$(sed -n 's/^sent=\([0-9]*\)$/\1/p' "$2")
	ksft_check "$1: datagrams sent (${_sent:-none})" [ "${_sent:-0}" -gt 0 ]
	ksft_check "$1: the injector bounds every decoder reason" \
		[ "$(grep -c '^expect drop_' "$2")" = 7 ]
	hl_check_expect "$2" "$3" "$4" 5 0 0
}

# 1. Injection alone: every datagram counted where it was built to be.
# The broken kinds first, each decoder reason bounded exactly; then random
# bytes, which the injector cannot know the reason for: each counted once.
for run in broken:truncated,oversized,version,conn,flags,blocks random:random; do
	name=${run%%:*}
	hl_snapshot "$DP_OUT/inject1.$name.before"
	ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --kind "${run#*:}" \
		--count 2000 --rate 1000 --seed "$$" \
		>"$DP_OUT/inject1.$name.log" 2>&1 || {
		cat "$DP_OUT/inject1.$name.log"
		ksft_fail "mroce-inject failed"
	}
	sleep 1
	hl_snapshot "$DP_OUT/inject1.$name.after"
	inject_check "$name" "$DP_OUT/inject1.$name.log" \
		"$DP_OUT/inject1.$name.before" "$DP_OUT/inject1.$name.after"
done
dp_counters "$DP_DEV_B"

# 2. Injection concurrent with traffic on the real connection.
dp_perftest inject_write_bw ib_write_bw -s 65536 -q 4 -D 10 \
	>"$DP_OUT/inject_perftest.out" 2>&1 &
pt=$!
dp_integrity -q 4 -o 16 -m 262144 -t 10 -T 120 -s "$$" \
	>"$DP_OUT/inject_integrity.out" 2>&1 &
it=$!
ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --duration 12 --rate 2000 \
	--seed $(($$ + 1)) >"$DP_OUT/inject2.log" 2>&1
grep '^#' "$DP_OUT/inject2.log"
wait "$pt"
pt_rc=$?
wait "$it"
it_rc=$?
cat "$DP_OUT/inject_perftest.out"
grep -E '^(# integrity|# messages|FAIL|PASS)' "$DP_OUT/inject_integrity.out"
ksft_check "ib_write_bw concurrent with injection" [ "$pt_rc" = 0 ]
ksft_check "integrity concurrent with injection" [ "$it_rc" = 0 ]
bw=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' \
	"$DP_OUT/inject_write_bw.client")
mroce_log "ib_write_bw during injection: ${bw:-?} MB/s"

# 3. The live connection's id with another generation (its slot, as an
# old connection's packets name it after the slot was reused): unknown to
# B, not a packet of the live connection from a wrong address, and the
# live connection carries on.
mountpoint -q /sys/kernel/debug 2>/dev/null ||
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
id=$(sed -n 's/^peer .* conn \([0-9]*\) .*/\1/p' \
	"/sys/kernel/debug/metaroce/$DP_DEV_B/peers" 2>/dev/null | head -n 1)
if [ -z "$id" ]; then
	ksft_check "B's connection id from debugfs" false
else
	stale=$(((id + 0x10000) & 0xffffffff))
	[ $((stale >> 16)) = 0 ] && stale=$((stale + 0x10000))
	hl_snapshot "$DP_OUT/inject3.before"
	ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --kind conn \
		--dst-conn "$stale" --count 500 --rate 1000 --seed "$$" \
		>"$DP_OUT/inject3.log" 2>&1
	sleep 1
	hl_snapshot "$DP_OUT/inject3.after"
	mroce_log "connection $id, stale id $stale"
	inject_check stale-generation "$DP_OUT/inject3.log" \
		"$DP_OUT/inject3.before" "$DP_OUT/inject3.after"
	wrong=$(hl_delta "$DP_OUT/inject3.before" "$DP_OUT/inject3.after" \
		rx_wrong_addr)
	ksft_check "... and never reaches the live connection (rx_wrong_addr +$wrong)" \
		[ "$wrong" = 0 ]
	dp_perftest inject_after ib_write_bw -s 4096 -D 2 >/dev/null 2>&1
	rc=$?
	ksft_check "the live connection carries on" [ "$rc" = 0 ]
fi

# 4. IP fragments: ACK bodies and ACKs of 30-64 path blocks (2-8 KB)
# leave C's 1500-byte link in fragments, and B reassembles them into an
# skb whose blocks lie past its linear part.  B must take each for what
# the injector built it to be: the broken ones counted in rx_drop_field or
# rx_drop_length, the valid ones decoded (unknown connection), each no
# more often than the injector sent it.
reasm_oks() {
	dp_b awk '/^Ip:/ { if (!n++) { for (i = 1; i <= NF; i++) c[$i] = i }
		else print $c["ReasmOKs"] }' /proc/net/snmp
}
rbefore=$(reasm_oks)
hl_snapshot "$DP_OUT/inject4.before"
ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --kind blocks --count 600 \
	--rate 300 --seed $(($$ + 2)) >"$DP_OUT/inject4.log" 2>&1 || {
	cat "$DP_OUT/inject4.log"
	ksft_fail "mroce-inject failed"
}
sleep 1
hl_snapshot "$DP_OUT/inject4.after"
reasm=$(($(reasm_oks) - rbefore))
sent=$(sed -n 's/^sent=\([0-9]*\)$/\1/p' "$DP_OUT/inject4.log")
mroce_log "fragmented: sent ${sent:-?}, B reassembled $reasm"
ksft_check "fragmented datagrams reassembled at B" \
	[ "$reasm" -ge $((${sent:-1} * 95 / 100)) ]
inject_check fragmented-blocks "$DP_OUT/inject4.log" \
	"$DP_OUT/inject4.before" "$DP_OUT/inject4.after"
dp_counters "$DP_DEV_B"
ksft_exit
