#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# An off-path attacker that forges the peer's address and knows the live
# connection's ids (protocol.md 15), against a transfer (topology in
# hostile_lib.sh: A, B and the attacker C on one switch):
#
#   A ==== ib_write_bw, 4 QPs, 64 KiB writes ====> B
#                                                  ^
#   C --- forged "from A" (mroce-inject) ----------+
#
# A clean run first measures the goodput.  Then, one transfer per attack,
# C injects (for 4 s, 1000 datagrams a second) while the transfer runs:
#   connect-spoof   CONNECTs from A's address with another nonce or id, no
#                   or a guessed cookie (IPv4, then IPv6 from A's IPv6
#                   address): counted as unproven, each answered by a
#                   CHALLENGE to the real A or rate limited;
#   reset-spoof     RESETs with the live ids, no or a guessed token;
#   close-spoof     CLOSEs with the live ids: both counted as challenged,
#                   a CHALLENGE to A at most per RTO, nothing ended;
#   ack-body        ACKs and data carrying ACK bodies whose blocks
#                   acknowledge psns never sent: one rx_drop_ack a block;
#   fragment        the same, as IP fragments (a reassembled, non-linear
#                   datagram at B);
#   window          data with the live ids, path and streams, with a psn a
#                   quarter of the space ahead or behind, a dsn in [base +
#                   window, base + 2^31), or a msn far beyond the stream's
#                   window: each dropped, once.
# Each transfer must finish without error, with at least half the clean
# goodput, on the same connection (B's id unchanged, nothing failed or
# ended), and B's counters must grow by what the injector says it sent
# (its "expect" lines, by construction of each datagram; 5 % allowed for
# datagrams the network lost, and for the drop counters real traffic
# moves too, what the clean run moved them by).
#
# The window drops are checked as one sum (hl_group_counters seq_drop):
# the duplicate counters, rx_drop_path/dsn/stream and any other rx_drop_*
# or *window* counter, so that counters added for out-of-window psns and
# msns count as soon as the module has them, whatever their names.  The
# kernel log must stay clean (session.sh checks it).
. "$(dirname "$0")/datapath_lib.sh"
. "$(dirname "$0")/hostile_lib.sh"

dp_require
ksft_require_cmd ib_write_bw ping
hl_tool
hl_setup 9000
hl_debugfs || ksft_skip "no metaroce debugfs"

DUR=8
BW_ARGS="-s 65536 -q 4 -D $DUR"

bw_of() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' \
		"$DP_OUT/$1.client"
}

# 1. Clean: the goodput to keep, and what real traffic moves the drop
# counters by.
hl_snapshot "$DP_OUT/hostile_clean.before"
# shellcheck disable=SC2086
dp_perftest hostile_clean ib_write_bw $BW_ARGS ||
	ksft_fail "clean ib_write_bw failed"
clean_bw=$DP_BW
sleep 1
hl_snapshot "$DP_OUT/hostile_clean.after"
# shellcheck disable=SC2046 # counter names are words
clean_seq=$(hl_delta "$DP_OUT/hostile_clean.before" \
	"$DP_OUT/hostile_clean.after" $(hl_group_counters seq_drop \
	"$DP_OUT/hostile_clean.after"))
clean_ack=$(hl_delta "$DP_OUT/hostile_clean.before" \
	"$DP_OUT/hostile_clean.after" rx_drop_ack)
slack_seq=$((clean_seq * 2 + 50))
slack_ack=$((clean_ack * 2 + 5))
mroce_log "clean: $clean_bw MB/s; drop counters moved by seq $clean_seq, ack $clean_ack"
read -r conn0 _ <<<"$(hl_b_conn)"
[ -n "$conn0" ] || ksft_fail "no connection from A in B's debugfs"

# live_state: what the attacker learnt (debugfs: B's and A's view) into
# L_CONN L_PEER L_PATHS L_STATE L_DSN L_STREAM L_PSTREAM L_MSN L_PSN
live_state() {
	read -r L_CONN L_PEER L_PATHS L_STATE <<<"$(hl_b_conn)"
	[ "$L_STATE" = established ] || return 1
	_s=/sys/kernel/debug/metaroce/$DP_DEV_B/streams
	L_DSN=$(sed -n "s/^conn $L_CONN .* rx_base \([0-9]*\) .*/\1/p" "$_s" |
		head -n 1)
	read -r L_STREAM L_PSTREAM L_MSN <<<"$(sed -n \
		's/^ stream \([0-9]*\) peer \([0-9]*\) .* rx_next \([0-9]*\) .*/\1 \2 \3/p' \
		"$_s" | head -n 1)"
	[ -n "$L_DSN" ] && [ -n "$L_STREAM" ] || return 1
	L_PSN=$(awk '/^  path 0 / { p = 1; next } p && /^    tx / { print $2; exit }' \
		"/sys/kernel/debug/metaroce/$DP_DEV_A/peers" 2>/dev/null)
	: "${L_PSN:=0}"
}

# attack NAME DST SRC KIND: a transfer, C injecting KIND from SRC during it.
attack() {
	HL_ATTACK=$1
	_dst=$2
	_src=$3
	_kind=$4
	_pre=$DP_OUT/hostile_$HL_ATTACK
	hl_snapshot "$_pre.before"
	_retx0=$(dp_counter "$DP_DEV_A" tx_retransmits)
	# shellcheck disable=SC2086
	dp_perftest "hostile_$HL_ATTACK" ib_write_bw $BW_ARGS \
		>"$_pre.perftest" 2>&1 &
	_pt=$!
	if ! mroce_wait_for 30 live_state; then
		wait "$_pt"
		cat "$_pre.perftest"
		ksft_check "$HL_ATTACK: a live transfer to attack" false
		return
	fi
	mroce_log "$HL_ATTACK: live conn $L_CONN (A's $L_PEER), $L_PATHS paths, stream $L_STREAM<-$L_PSTREAM msn $L_MSN, dsn base $L_DSN, psn ~$L_PSN"
	sleep 1
	# 500 forged packets a second.  At 1000, B answering every spoofed
	# IPv6 CONNECT left ib_write_bw at 0.50 of its clean goodput in one
	# run of the emulated guest, whose two CPUs also run C and A
	hl_inject --dst "$_dst" --src "$_src" --kind "$_kind" --duration 4 \
		--rate 500 --seed "$$" --dst-conn "$L_CONN" \
		--src-conn "$L_PEER" --npaths "$L_PATHS" \
		--dst-stream "$L_STREAM" --src-stream "$L_PSTREAM" \
		--psn-base "$L_PSN" --dsn-base "$L_DSN" --msn-base "$L_MSN" \
		>"$_pre.inject" 2>&1
	_irc=$?
	grep '^#\|^expect' "$_pre.inject"
	wait "$_pt"
	_rc=$?
	sleep 1
	hl_snapshot "$_pre.after"
	ksft_check "$HL_ATTACK: mroce-inject ran" [ "$_irc" = 0 ]
	[ "$_rc" = 0 ] || cat "$_pre.perftest"
	ksft_check "$HL_ATTACK: ib_write_bw under attack finished without error" \
		[ "$_rc" = 0 ]
	_bw=$(bw_of "hostile_$HL_ATTACK")
	mroce_log "$HL_ATTACK: ${_bw:-?} MB/s under attack, clean $clean_bw MB/s"
	ksft_check "$HL_ATTACK: at least half the clean goodput (${_bw:-none} >= $clean_bw / 2)" \
		awk -v b="${_bw:-0}" -v c="$clean_bw" 'BEGIN { exit !(b + 0 >= c / 2) }'
	# every packet A resent may reach B twice: a real duplicate, beside
	# the forged ones (how many varies with the load, not with the attack)
	_retx=$(($(dp_counter "$DP_DEV_A" tx_retransmits) - _retx0))
	hl_check_expect "$_pre.inject" "$_pre.before" "$_pre.after" 5 \
		"$((slack_seq + _retx))" "$slack_ack"
	_failed=$(hl_delta "$_pre.before" "$_pre.after" conn_failed)
	_ended=$(hl_delta "$_pre.before" "$_pre.after" rx_proven_end)
	ksft_check "$HL_ATTACK: no connection failed or ended (conn_failed +$_failed, rx_proven_end +$_ended)" \
		[ "$_failed$_ended" = 00 ]
	read -r _c _ _ _st <<<"$(hl_b_conn)"
	ksft_check "$HL_ATTACK: the same connection, established ($_c $_st, was $conn0)" \
		test "$_c" = "$conn0" -a "$_st" = established
	dp_counters "$DP_DEV_B"
}

attack connect-spoof "$DP_IP_B" "$DP_IP_A" connect-spoof
attack connect-spoof6 "$HL_IP6_B" "$HL_IP6_A" connect-spoof
attack reset-spoof "$DP_IP_B" "$DP_IP_A" reset-spoof
attack close-spoof "$DP_IP_B" "$DP_IP_A" close-spoof
attack ack-body "$DP_IP_B" "$DP_IP_A" ack-body
attack fragment "$DP_IP_B" "$DP_IP_A" fragment
attack window "$DP_IP_B" "$DP_IP_A" window
ksft_exit
