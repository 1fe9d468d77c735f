#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest half of tools/bench/run.sh (runs inside metaroce-vm): the same
# impaired veth path, the drivers taking turns at each loss, then TCP.
#
#   init_net:  dev A 10.94.0.1 on veth a  <== netem loss L, both ends ==>  veth b 10.94.0.2 dev B
#
# Loss 0 is netem with loss 0 % (the issue's "netem loss 0"): the lossy rows
# are compared with the same qdisc in the path, dropping nothing.  netem's
# own work per packet costs this CPU-bound guest several percent of its
# bandwidth, which a real switch's drops do not; loss "none" (the bandwidth
# tests and TCP only) is the bare veth, no qdisc, to show that cost.
#
# rdma_rxe works only in init_net in 6.1, so both drivers run there (policy
# routing forces A->B traffic out of the veth: selftests/verbs/datapath_lib.sh).
# For each loss (none, 0, 0.1%, 1%, 10%) and driver (rxe, metaroce, in turn):
# ib_write_bw and ib_send_bw (64 KiB, -D); then, except at "none",
# ib_write_lat (64 B, -n: the average, the median and the 99th percentile)
# with both drivers' devices up at once, the drivers taking turns run by run
# ($BENCH_LAT_PAIRS runs each at loss 0, $BENCH_LAT_PAIRS_LOSSY at the
# others); then iperf3 TCP over the same path.  Rows go to $BENCH_CSV as
# they are measured:
#   driver,loss_pct,test,value,unit,status
# BENCH_REPEAT=N runs N such rounds (one row per measurement and round).
. "$METAROCE_ROOT/selftests/verbs/datapath_lib.sh"

csv=${BENCH_CSV:?}
secs=${BENCH_SECONDS:-8}
losses=${BENCH_LOSSES:-none 0 0.1 1 10}
drivers=${BENCH_DRIVERS:-rxe metaroce}
size=${BENCH_SIZE:-65536}
repeat=${BENCH_REPEAT:-1}
lat_n=${BENCH_LAT_ITERS:-20000}
lat_pairs=${BENCH_LAT_PAIRS:-10}
lat_pairs_lossy=${BENCH_LAT_PAIRS_LOSSY:-3}
echo "driver,loss_pct,test,value,unit,status" >"$csv"

ksft_require_root
ksft_require_cmd ip tc rdma ib_write_bw ib_send_bw ib_write_lat iperf3
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem
dp_initnet_net 9000
if [ "${BENCH_RPS:-0}" = 1 ]; then
	# every CPU, by flow hash: what a multi-queue NIC's RSS does
	mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for dev in "$DP_IF_A" "$DP_IF_B"; do
		echo "$mask" >"/sys/class/net/$dev/queues/rx-0/rps_cpus" ||
			ksft_fail "RPS on $dev"
	done
	mroce_log "RPS on $DP_IF_A and $DP_IF_B: CPUs $mask"
fi
DP_PERFTEST_TIMEOUT=$((secs * 6 + 60))
DP_PIN=${BENCH_PIN:-0}

set_loss() {
	if [ "$1" = none ]; then
		dp_netem
	else
		dp_netem loss "$1%"
	fi
}

lat_iters() {
	case $1 in
	0 | 0.1) echo "$lat_n" ;;
	1) echo $((lat_n / 4)) ;;
	*) echo $((lat_n / 40)) ;;
	esac
}

row() {
	echo "$1,$2,$3,$4,$5,$6" >>"$csv"
	mroce_log "$1 loss $2%: $3 = ${4:-n/a} $5 ($6)"
}

# One driver at one loss: the bandwidth tests.
bench_one() {
	drv=$1
	loss=$2
	dp_initnet_devs "$drv"
	set_loss "$loss"
	for t in ib_write_bw ib_send_bw; do
		if dp_perftest "bench_r${round}_${drv}_${loss}_$t" "$t" -s "$size" \
			-q 1 -D "$secs"; then
			row "$drv" "$loss" "$t" "$DP_BW" MB/s ok
		else
			row "$drv" "$loss" "$t" "" MB/s failed
		fi
	done
	dp_counters "$DP_DEV_A"
	dp_netem
	dp_initnet_devs_del
}

# Latency at one loss, the drivers taking turns run by run, their devices
# up side by side on the same veth pair (their UDP ports differ).  The
# host has phases: for a minute or two any driver's latency can double, and
# now and then a vCPU stops for about 100 ms (traced: no guest event at all
# on that CPU, rxe's runs as well as MetaRoCE's; one such stop adds 2.5 us
# to the average of a 20,000-iteration run).  A driver measured right after
# the other, not half a minute later, meets the same phase.  Each run is
# -n: the mean, the median ("typical") and the 99th percentile of its
# iterations; t_max goes to the log, to show the stops.
bench_lat() {
	loss=$1
	for drv in $avail; do
		dp_initnet_devs "$drv"
		eval "lat_dev_${drv}='$DP_DEV_A $DP_DEV_B $DP_GID_A $DP_GID_B'"
	done
	set_loss "$loss"
	pairs=$lat_pairs
	[ "$loss" = 0 ] || pairs=$lat_pairs_lossy
	k=0
	while [ "$k" -lt "$pairs" ]; do
		k=$((k + 1))
		order=$avail
		[ $((k % 2)) = 0 ] && order=$(echo "$avail" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
		for drv in $order; do
			eval "set -- \$lat_dev_${drv}"
			DP_DEV_A=$1 DP_DEV_B=$2 DP_GID_A=$3 DP_GID_B=$4
			log=bench_r${round}_${drv}_${loss}_lat$k
			if dp_perftest "$log" ib_write_lat -s 64 -n "$(lat_iters "$loss")"; then
				row "$drv" "$loss" ib_write_lat "$DP_LAT_AVG" usec ok
				row "$drv" "$loss" ib_write_lat_typ "$DP_LAT" usec ok
				row "$drv" "$loss" ib_write_lat_p99 "$DP_LAT_P99" usec ok
				mroce_log "$drv loss $loss%: ib_write_lat longest iteration $(awk '$1 ~ /^[0-9]+$/ && NF >= 6 { v = $4 } END { print v }' "$DP_OUT/$log.client") usec"
			else
				row "$drv" "$loss" ib_write_lat "" usec failed
				row "$drv" "$loss" ib_write_lat_typ "" usec failed
			fi
		done
	done
	dp_netem
	for drv in $avail; do
		eval "set -- \$lat_dev_${drv}"
		DP_DEV_A=$1 DP_DEV_B=$2
		[ "$drv" = metaroce ] && dp_counters "$DP_DEV_A"
		dp_initnet_devs_del
	done
}

# One round: at each loss every driver in turn (in the other order every
# other round), then TCP.  The host drifts: for a minute or two any
# driver's latency can double.  One driver over every
# loss and then the other put minutes between the two figures a ratio
# compares.
bench_drivers() {
	avail=
	for drv in $drivers; do
		# A driver that cannot run here (module missing, no datapath) is
		# recorded as such; the other one still runs.
		if ! (dp_initnet_devs "$drv" >"$DP_OUT/devs-$drv.log" 2>&1 &&
			dp_initnet_devs_del); then
			cat "$DP_OUT/devs-$drv.log"
			row "$drv" - setup "" "" unavailable
			dp_initnet_devs_del
			continue
		fi
		if [ $((round % 2)) = 1 ]; then
			avail="$avail $drv"
		else
			avail="$drv $avail"
		fi
	done
	for loss in $losses; do
		for drv in $avail; do
			bench_one "$drv" "$loss"
		done
		[ "$loss" = none ] || bench_lat "$loss"
	done
}

bench_tcp() {
	for loss in $losses; do
		set_loss "$loss"
		if out=$(timeout $((secs + 30)) iperf3 -c "$DP_IP_B" -B "$DP_IP_A" \
			-p 5299 -t "$secs" -J 2>&1); then
			bps=$(printf '%s' "$out" | python3 -c \
				'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])' \
				2>/dev/null)
			mbs=$(awk -v b="${bps:-0}" 'BEGIN { printf "%.2f", b / 8 / 1e6 }')
			row tcp "$loss" iperf3 "$mbs" MB/s ok
		else
			row tcp "$loss" iperf3 "" MB/s failed
		fi
	done
}

# TCP reference over the same path (policy routing applies to it too).
pidfile=$DP_OUT/iperf3.pid
iperf3 -s -B "$DP_IP_B" -p 5299 -D -I "$pidfile" \
	--logfile "$DP_OUT/iperf3-server.log" || ksft_fail "iperf3 server"
# shellcheck disable=SC2016 # expanded when the cleanup runs
mroce_defer 'kill "$(cat '"$pidfile"')"'
mroce_wait_for 10 sh -c "ss -ltnH | grep -q ':5299 '"

for round in $(seq "$repeat"); do
	if [ "$repeat" -gt 1 ]; then mroce_log "round $round of $repeat"; fi
	bench_drivers
	bench_tcp
done
dp_netem
exit 0
