#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest half of tools/bench/lat_profile.sh (runs inside metaroce-vm): a
# sampling profile (perf, cpu-clock, every CPU, call graphs) of a pinned
# ib_write_lat over each driver on vm_bench.sh's init_net veth path.  Unlike
# a function-graph trace it does not inflate each call, so the drivers'
# kernel paths compare fairly.  Writes, per round and driver, into
# $METAROCE_OUT: prof_<r>_<drv>_{dso,sym,graph}.txt and the client's line.
#   LP_DRIVERS ("metaroce rxe"), LP_ROUNDS (1), LP_ITERS (150000), LP_FREQ (2000)
. "$METAROCE_ROOT/selftests/verbs/datapath_lib.sh"

ksft_require_root
ksft_require_cmd ip tc rdma ib_write_lat perf
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem ib_uverbs ip6_udp_tunnel udp_tunnel
dp_initnet_net 9000
DP_PIN=1
data=/tmp/lat_profile.data
ctl=/tmp/lat_profile.ctl
ack=/tmp/lat_profile.ack

for round in $(seq "${LP_ROUNDS:-1}"); do
	for drv in ${LP_DRIVERS:-metaroce rxe}; do
		dp_initnet_devs "$drv"
		# shellcheck disable=SC2119 # no arguments: no impairment
		dp_netem
		# perf starts slowly under TCG (it reads every process's maps)
		# and a run that began before it would be missed: it starts
		# with its events off, and the run waits for its answer to
		# "enable" on the control FIFO
		rm -f "$ctl" "$ack"
		mkfifo "$ctl" "$ack"
		exec {ctl_fd}<>"$ctl" {ack_fd}<>"$ack"
		perf record -e cpu-clock -F "${LP_FREQ:-2000}" -a -g -m 512 \
			-D -1 --control "fifo:$ctl,$ack" \
			-o "$data" -- sleep 100000 >/dev/null 2>&1 &
		perf_pid=$!
		echo enable >&"$ctl_fd"
		read -r -t 300 -u "$ack_fd" reply ||
			ksft_fail "perf did not start within 300 s"
		[ "$reply" = ack ] || ksft_fail "perf answered '$reply' to enable"
		log=lp_${round}_$drv
		dp_perftest "$log" ib_write_lat -s 64 -n "${LP_ITERS:-150000}" ||
			ksft_fail "$log"
		kill -INT "$perf_pid"
		wait "$perf_pid"
		exec {ctl_fd}>&- {ack_fd}>&-
		mroce_log "$drv round $round: $(grep -A1 '#bytes' "$DP_OUT/$log.client" | tail -n 1)"
		p=$METAROCE_OUT/prof_${round}_$drv
		perf report -i "$data" --no-children --sort cpu,comm,dso --stdio \
			-g none 2>/dev/null | grep -v '^$' | head -n 40 >"${p}_dso.txt"
		perf report -i "$data" --no-children --sort sym --stdio -g none \
			--percent-limit 0.1 2>/dev/null | grep -v '^$' >"${p}_sym.txt"
		perf report -i "$data" --no-children --sort sym --stdio \
			-g caller,0.5,callee --percent-limit 0.5 2>/dev/null >"${p}_graph.txt"
		rm -f "$data"
		[ "$drv" = metaroce ] && dp_counters "$DP_DEV_A" && dp_counters "$DP_DEV_B"
		dp_initnet_devs_del
	done
done
echo "ok 1 lat_profile"
