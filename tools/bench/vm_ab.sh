#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest half of tools/bench/ab.sh (runs inside metaroce-vm): several builds
# or parameter sets of metaroce.ko, loaded in turn on the same init_net veth
# path (vm_bench.sh's), round after round, each round starting one variant
# later, so a drift of the host hits every variant alike.
#
#   AB_VARIANTS  "name=KO[,param=value...] ..." (KO: a metaroce.ko path, or
#                "rxe": rdma_rxe on the same path, for ratios in one boot)
#   AB_TESTS     perftest runs, "tool:size ..." (default
#                "ib_write_bw:65536 ib_send_bw:65536 ib_write_lat:64")
#   AB_LAT_ITERS latency tests run -n this many iterations (default 5000)
#                and give two rows: the median (":typ") and the mean
#                (":avg"); a -D run only has the mean, which one stall of
#                a loaded host decides
#   AB_PIN       1: server and client pinned to two CPUs (DP_PIN)
#   AB_LOSSES, AB_SECONDS, AB_REPEAT, AB_CSV
# Rows: variant,round,loss_pct,test,value,unit,status; after each variant
# and round a row per non-zero counter of interest (test "counter:NAME").
. "$METAROCE_ROOT/selftests/verbs/datapath_lib.sh"
. "$METAROCE_ROOT/tools/bench/vm_lib.sh"

csv=${AB_CSV:?}
secs=${AB_SECONDS:-8}
losses=${AB_LOSSES:-0 1}
repeat=${AB_REPEAT:-2}
tests=${AB_TESTS:-ib_write_bw:65536 ib_send_bw:65536 ib_write_lat:64}
lat_iters=${AB_LAT_ITERS:-5000}
counters="pace_waits hint_limited ack_holds tx_ack_bodies tx_acks tail_loss_probes rtos tx_retransmits lost peer_lock_waits db_timer_after"
echo "variant,round,loss_pct,test,value,unit,status" >"$csv"

ksft_require_root
ksft_require_cmd ip tc rdma insmod rmmod ib_write_bw ib_send_bw ib_write_lat
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem ib_uverbs ip6_udp_tunnel udp_tunnel
dp_initnet_net 9000
DP_PERFTEST_TIMEOUT=$((secs * 6 + 60))
DP_PIN=${AB_PIN:-0}

row() {
	echo "$1,$2,$3,$4,$5,$6,$7" >>"$csv"
	mroce_log "$1 r$2 loss $3%: $4 = ${5:-n/a} $6 ($7)"
}

# Each round starts one variant later: in a fixed order the first variant
# after rxe was measured slower, whichever it was.
rotate() {
	_n=$1
	shift
	_i=0
	while [ "$_i" -lt $((_n % $#)) ]; do
		_first=$1
		shift
		set -- "$@" "$_first"
		_i=$((_i + 1))
	done
	echo "$@"
}

for round in $(seq "$repeat"); do
	# shellcheck disable=SC2086 # variants are words
	for v in $(rotate $((round - 1)) $AB_VARIANTS); do
		name=${v%%=*}
		drv=metaroce
		if [ "${v#*=}" = rxe ]; then
			drv=rxe
		elif ! vm_load "${v#*=}"; then
			row "$name" "$round" - load "" "" failed
			continue
		fi
		dp_initnet_devs $drv
		for loss in $losses; do
			if [ "$loss" = 0 ]; then dp_netem; else dp_netem loss "$loss%"; fi
			for t in $tests; do
				# tool:size[:extra,perftest,flags]
				tool=${t%%:*}
				size=${t#*:}
				extra=
				if [ "$size" != "${size#*:}" ]; then
					extra=$(echo "${size#*:}" | tr , ' ')
					size=${size%%:*}
				fi
				log=ab_r${round}_${name}_${loss}_$tool$size$(echo "$extra" | tr -d ' ')
				case $tool in
				*_lat)
					# shellcheck disable=SC2086
					if dp_perftest "$log" "$tool" -s "$size" -n "$lat_iters" $extra; then
						row "$name" "$round" "$loss" "$t:typ" "$DP_LAT" usec ok
						row "$name" "$round" "$loss" "$t:avg" "$DP_LAT_AVG" usec ok
					else
						row "$name" "$round" "$loss" "$t:typ" "" usec failed
					fi
					;;
				*)
					# shellcheck disable=SC2086
					if dp_perftest "$log" "$tool" -s "$size" -D "$secs" $extra; then
						row "$name" "$round" "$loss" "$t" "$DP_BW" MB/s ok
					else
						row "$name" "$round" "$loss" "$t" "" MB/s failed
					fi
					;;
				esac
			done
		done
		dp_netem
		[ $drv = rxe ] || for c in $counters; do
			row "$name" "$round" - "counter:$c" \
				"$(dp_counter "$DP_DEV_A" "$c")/$(dp_counter "$DP_DEV_B" "$c")" A/B ok
		done
		dp_initnet_devs_del
	done
done
rmmod metaroce 2>/dev/null
exit 0
