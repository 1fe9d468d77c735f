#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The connection timer of a lossless ping-pong (design.md 7): the far
# deadlines of a connection that is not losing (tail-loss probes, epochs)
# go on the timer wheel, so the hrtimer, whose starts reprogram the clock
# event device, is hardly started; and the wheel's timer is moved about
# once per tick, not with every packet.  Counted with the module's
# tracepoint metaroce:mroce_timer_arm over a pinned ib_write_lat between
# two namespaces (topology in datapath_lib.sh).  Before the wheel a
# ping-pong started the hrtimer in about a quarter of its iterations; a
# wheel that followed the deadline moved it in nine of ten.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd ib_write_lat
# rxe has neither the tracepoint nor the two timers
[ "${DP_REFERENCE:-}" = rxe ] && ksft_skip "MetaRoCE's own timers"
dp_setup_netns 9000
# shellcheck disable=SC2034 # read by dp_perftest
DP_PIN=1
T=/sys/kernel/tracing
mountpoint -q "$T" || mount -t tracefs nodev "$T" || ksft_fail "tracefs"
ev=$T/events/metaroce/mroce_timer_arm/enable
[ -e "$ev" ] || ksft_fail "no tracepoint metaroce:mroce_timer_arm"

trace_off() {
	echo 0 >"$ev"
	echo 0 >"$T/tracing_on"
	echo >"$T/trace"
}
mroce_defer trace_off

iters=5000
# a warm-up first: connection setup and the first RTT samples are not
# what this counts
dp_perftest warmup ib_write_lat -s 64 -n 500 || ksft_fail "ib_write_lat warm-up"
echo >"$T/trace"
echo 4096 >"$T/buffer_size_kb"
echo 1 >"$ev"
echo 1 >"$T/tracing_on"
dp_perftest timers ib_write_lat -s 64 -n "$iters" || ksft_fail "ib_write_lat -n $iters"
echo 0 >"$T/tracing_on"
grep -h overrun "$T"/per_cpu/cpu*/stats | grep -v ' 0$' &&
	ksft_fail "the trace buffer overran"
cat "$T/trace" >"$DP_OUT/timers.trace"
hr=$(grep -c 'mroce_timer_arm:.* wheel=0' "$DP_OUT/timers.trace")
wheel=$(grep -c 'mroce_timer_arm:.* wheel=1' "$DP_OUT/timers.trace")
mroce_log "$iters iterations: $hr hrtimer starts, $wheel wheel moves (both sides)"
grep -o 'mroce_timer_arm:.* what=[a-z]*' "$DP_OUT/timers.trace" |
	sed 's/.*what=//' | sort | uniq -c | sed 's/^/#   /'

ksft_check "far deadlines use the wheel ($wheel moves)" [ "$wheel" -gt 0 ]
ksft_check "hrtimer starts at most 1 in 20 iterations ($hr)" \
	[ "$hr" -le $((iters / 20)) ]
ksft_check "wheel moves at most 1 in 2 iterations ($wheel)" \
	[ "$wheel" -le $((iters / 2)) ]
ksft_exit
