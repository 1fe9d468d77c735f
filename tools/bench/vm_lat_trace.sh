#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest half of tools/bench/lat_trace.sh (runs inside metaroce-vm): pinned
# ib_write_lat (client on CPU 0, server on the last CPU) over each driver on
# vm_bench.sh's init_net veth path, under ftrace: every doorbell
# (ib_uverbs_write, the write(2) behind ibv_post_send for both providers),
# and the interrupts, softirqs, timers and scheduling around it, and which
# deadline each start of a MetaRoCE connection's timer is for
# (metaroce:mroce_timer_arm).  Writes
# $METAROCE_OUT/trace_<round>_<driver>.txt for lat_trace.py.
#   LT_DRIVERS ("metaroce rxe"), LT_ROUNDS (1), LT_ITERS (20000)
. "$METAROCE_ROOT/selftests/verbs/datapath_lib.sh"

ksft_require_root
ksft_require_cmd ip tc rdma ib_write_lat
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem ib_uverbs ip6_udp_tunnel udp_tunnel
dp_initnet_net 9000
DP_PIN=1
T=/sys/kernel/tracing
mountpoint -q "$T" || mount -t tracefs nodev "$T" || ksft_fail "tracefs"
events="timer:hrtimer_start timer:hrtimer_cancel timer:hrtimer_expire_entry
	timer:timer_expire_entry irq_vectors:local_timer_entry
	irq_vectors:reschedule_entry irq_vectors:call_function_entry
	irq_vectors:call_function_single_entry irq:irq_handler_entry
	irq:softirq_entry irq:softirq_exit sched:sched_switch
	sched:sched_wakeup workqueue:workqueue_execute_start
	metaroce:mroce_timer_arm"

trace_off() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo >"$T/set_event"
	echo >"$T/set_ftrace_filter"
}
mroce_defer trace_off

for round in $(seq "${LT_ROUNDS:-1}"); do
	for drv in ${LT_DRIVERS:-metaroce rxe}; do
		dp_initnet_devs "$drv"
		# shellcheck disable=SC2119 # no arguments: no impairment
		dp_netem
		trace_off
		echo >"$T/trace"
		# one clock for both CPUs: the analysis compares their events
		echo global >"$T/trace_clock"
		echo 65536 >"$T/buffer_size_kb"
		# the module's own event exists while the module is loaded
		for e in $events; do
			echo "$e" 2>/dev/null >>"$T/set_event" ||
				[ "${e%%:*}" = metaroce ] || ksft_fail "event $e"
		done
		echo ib_uverbs_write >"$T/set_ftrace_filter"
		echo function >"$T/current_tracer"
		echo 1 >"$T/tracing_on"
		log=lt_${round}_$drv
		dp_perftest "$log" ib_write_lat -s 64 -n "${LT_ITERS:-20000}" ||
			ksft_fail "$log"
		echo 0 >"$T/tracing_on"
		mroce_log "$drv round $round: $(grep -A1 '#bytes' "$DP_OUT/$log.client" | tail -n 1)"
		grep -h overrun "$T"/per_cpu/cpu*/stats | grep -v ' 0$' &&
			mroce_log "the trace buffer overran: fewer iterations (LT_ITERS)"
		cat "$T/trace" >"$METAROCE_OUT/trace_${round}_$drv.txt"
		trace_off
		[ "$drv" = metaroce ] && dp_counters "$DP_DEV_A"
		dp_initnet_devs_del
	done
done
echo "ok 1 lat_trace"
