#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hostile datagrams against a MetaRoCE port, from a third namespace routed
# through A (tools/inject/mroce-inject: truncated, oversized, wrong version,
# unknown connection, bad flags, random bytes, ACK blocks in IP fragments):
#
#   netns C (mroce-inject) 10.95.0.2 --veth-- 10.95.0.1 netns A (forwards)
#        A 10.93.0.1 --veth-- 10.93.0.2 B (target: device B's port 4797)
#
# Device B must count and drop every one (its rejection counters grow by
# at least what the injector says its decoder rejects), the kernel log must
# stay clean (session.sh checks it), and a perftest run and the integrity
# check concurrent with the injection must still pass.  Last, packets
# naming B's live connection slot with another generation (an old
# connection's id) must count as unknown, never reach the live one.
. "$(dirname "$0")/datapath_lib.sh"

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

# counter_sum NAME..: sum of B's hw counters of these names.
counter_sum() {
	_s=0
	for _c in "$@"; do
		_s=$((_s + $(dp_counter "$DP_DEV_B" "$_c")))
	done
	echo "$_s"
}
# The decoder's rejections by reason, and well-formed packets for unknown
# connections.
wire_rejects() {
	counter_sum rx_drop_short rx_drop_version rx_drop_opcode \
		rx_drop_reserved rx_drop_flags rx_drop_length rx_drop_field
}
unknown_conns() {
	counter_sum rx_unknown_conn
}

# inject_summary LOG: "rejected unknown_conn sent" from mroce-inject's last line.
inject_summary() {
	sed -n 's/^rejected=\([0-9]*\) unknown_conn=\([0-9]*\) sent=\([0-9]*\)$/\1 \2 \3/p' "$1"
}

# 1. Injection alone: every datagram counted.
before=$(wire_rejects)
ubefore=$(unknown_conns)
ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --count 3000 --rate 1000 \
	--seed "$$" >"$DP_OUT/inject1.log" 2>&1 || {
	cat "$DP_OUT/inject1.log"
	ksft_fail "mroce-inject failed"
}
grep '^#' "$DP_OUT/inject1.log"
read -r rejected unknown sent <<<"$(inject_summary "$DP_OUT/inject1.log")"
[ -n "$sent" ] || ksft_fail "no summary from mroce-inject"
sleep 1
after=$(wire_rejects)
uafter=$(unknown_conns)
mroce_log "injected $sent: $rejected malformed (rx_drop_* grew by $((after - before))), $unknown for unknown connections (rx_unknown_conn grew by $((uafter - ubefore)))"
# Each must be counted (a little slack for datagrams the socket dropped).
ksft_check "malformed datagrams counted in rx_drop_*" \
	[ $((after - before)) -ge $((rejected * 95 / 100)) ]
ksft_check "datagrams for unknown connections counted in rx_unknown_conn" \
	[ $((uafter - ubefore)) -ge $((unknown * 95 / 100)) ]
dp_counters "$DP_DEV_B"
if [ -d /sys/kernel/debug/metaroce ]; then
	grep -rs . /sys/kernel/debug/metaroce/ 2>/dev/null | grep -i "rej\|drop" |
		head -n 20 | sed 's/^/# debugfs: /'
fi

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
	ubefore=$(unknown_conns)
	wbefore=$(counter_sum rx_wrong_addr)
	ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --kind conn \
		--dst-conn "$stale" --count 500 --rate 1000 --seed "$$" \
		>"$DP_OUT/inject3.log" 2>&1
	grep '^#' "$DP_OUT/inject3.log"
	read -r _ unknown sent <<<"$(inject_summary "$DP_OUT/inject3.log")"
	sleep 1
	uafter=$(unknown_conns)
	wafter=$(counter_sum rx_wrong_addr)
	mroce_log "connection $id, stale id $stale: sent ${sent:-?}, rx_unknown_conn +$((uafter - ubefore)), rx_wrong_addr +$((wafter - wbefore))"
	counted=false
	[ "${sent:-0}" -gt 0 ] &&
		[ $((uafter - ubefore)) -ge $((unknown * 95 / 100)) ] &&
		counted=true
	ksft_check "a stale generation of a live slot counted in rx_unknown_conn" \
		"$counted"
	ksft_check "... and never reaches the live connection" \
		[ "$wafter" = "$wbefore" ]
	dp_perftest inject_after ib_write_bw -s 4096 -D 2 >/dev/null 2>&1
	rc=$?
	ksft_check "the live connection carries on" [ "$rc" = 0 ]
fi

# 4. IP fragments: ACK bodies and ACKs of 30-64 path blocks (2-8 KB)
# leave C's 1500-byte link in fragments, and B reassembles them into an
# skb whose blocks lie past its linear part.  B must take each for what
# the injector's copy of the core decoder says it is: the malformed ones
# counted in rx_drop_*, the valid ones decoded (unknown connection), and
# neither more than the injector sent of it.
reasm_oks() {
	dp_b awk '/^Ip:/ { if (!n++) { for (i = 1; i <= NF; i++) c[$i] = i }
		else print $c["ReasmOKs"] }' /proc/net/snmp
}
before=$(wire_rejects)
ubefore=$(unknown_conns)
rbefore=$(reasm_oks)
ip netns exec "$nsC" "$inject" --dst "$DP_IP_B" --kind blocks --count 600 \
	--rate 300 --seed $(($$ + 2)) >"$DP_OUT/inject4.log" 2>&1 || {
	cat "$DP_OUT/inject4.log"
	ksft_fail "mroce-inject failed"
}
grep '^#' "$DP_OUT/inject4.log"
read -r rejected unknown sent <<<"$(inject_summary "$DP_OUT/inject4.log")"
sleep 1
drops=$(($(wire_rejects) - before))
unk=$(($(unknown_conns) - ubefore))
reasm=$(($(reasm_oks) - rbefore))
mroce_log "fragmented: sent ${sent:-?}, B reassembled $reasm; $rejected malformed (rx_drop_* +$drops), $unknown valid (rx_unknown_conn +$unk)"
ksft_check "fragmented datagrams reassembled at B" \
	[ "$reasm" -ge $((${sent:-1} * 95 / 100)) ]
ksft_check "fragmented malformed ACK blocks counted in rx_drop_*, no more" \
	[ "$drops" -ge $((rejected * 95 / 100)) -a "$drops" -le "$rejected" ]
ksft_check "fragmented valid ACK blocks decoded (rx_unknown_conn), no more" \
	[ "$unk" -ge $((unknown * 95 / 100)) -a "$unk" -le "$unknown" ]
dp_counters "$DP_DEV_B"
ksft_exit
