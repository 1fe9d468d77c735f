#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest over MetaRoCE between two network namespaces (datapath_lib.sh):
# ib_write_bw, ib_read_bw, ib_send_bw at 1 B, 64 KiB and 1 MiB, with 1 and
# 16 QPs, one-way and bidirectional; ib_atomic_bw; ib_write_lat,
# ib_read_lat, ib_send_lat at the same sizes.  Short runs (-n) sized to
# about 32 MiB per run; single-QP runs use perftest's default extended send
# API (ibv_wr_*), 16-QP runs the classic ibv_post_send.  Every run must
# complete on both sides and report a non-zero result; the figures are
# printed as TAP comments.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw \
	ib_write_lat ib_read_lat ib_send_lat
dp_setup_netns 9000

# iters SIZE QPS: about 32 MiB in total, between 5 and 1000 per QP.
iters() {
	_n=$(((32 << 20) / (($1 > 0 ? $1 : 1) * $2)))
	[ "$_n" -gt 1000 ] && _n=1000
	[ "$_n" -lt 5 ] && _n=5
	echo "$_n"
}

results=$DP_OUT/perftest.txt
: >"$results"

bw() {
	_tool=$1 _size=$2 _q=$3 _bi=$4
	_api=
	[ "$_q" -gt 1 ] && _api=--use_old_post_send
	_desc="$_tool -s $_size -q $_q${_bi:+ -b}${_api:+ $_api}"
	# shellcheck disable=SC2086 # empty options vanish
	if dp_perftest "${_tool}_${_size}_${_q}${_bi:+_bi}" "$_tool" \
		-s "$_size" -q "$_q" -n "$(iters "$_size" "$_q")" $_bi $_api; then
		echo "ok: $_desc: $DP_BW MB/s, $DP_RATE Mpps"
		printf '%-50s %10s MB/s %10s Mpps\n' "$_desc" "$DP_BW" \
			"$DP_RATE" >>"$results"
	else
		echo "FAIL: $_desc"
		_ksft_failed=$((_ksft_failed + 1))
	fi
}

lat() {
	_tool=$1 _size=$2
	_desc="$_tool -s $_size"
	if dp_perftest "${_tool}_${_size}" "$_tool" -s "$_size" \
		-n "$(iters "$_size" 4)"; then
		echo "ok: $_desc: $DP_LAT usec"
		printf '%-50s %10s usec\n' "$_desc" "$DP_LAT" >>"$results"
	else
		echo "FAIL: $_desc"
		_ksft_failed=$((_ksft_failed + 1))
	fi
}

for tool in ib_write_bw ib_read_bw ib_send_bw; do
	for size in 1 65536 1048576; do
		for q in 1 16; do
			bw "$tool" "$size" "$q" ""
			bw "$tool" "$size" "$q" -b
		done
	done
done
for q in 1 16; do
	bw ib_atomic_bw 8 "$q" ""
	bw ib_atomic_bw 8 "$q" -b
done
for tool in ib_write_lat ib_read_lat ib_send_lat; do
	for size in 1 65536 1048576; do
		lat "$tool" "$size"
	done
done

mroce_log "results ($DP_DEV_A -> $DP_DEV_B, MTU 9000, no impairment):"
sed 's/^/#   /' "$results"
dp_counters "$DP_DEV_A"
dp_counters "$DP_DEV_B"
ksft_exit
