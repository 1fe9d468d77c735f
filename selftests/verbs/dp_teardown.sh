#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Teardown under live traffic.  Each case builds the two-namespace topology
# (datapath_lib.sh), starts selftests/verbs/integrity (4 QP pairs, every
# opcode both ways, every byte checked) or ib_write_bw, proves data is
# flowing (both devices' tx_data counters move), then ends something under
# it:
#
#   link_delete    rdma link delete of end A
#   link_delete_server
#                  rdma link delete of ib_write_bw's server end (B)
#   rmmod          rmmod metaroce
#   netdev_down    end A's netdev set down (and up again afterwards)
#   netdev_delete  end A's veth deleted (its peer at B goes with it)
#   netns_delete   end B's network namespace deleted
#   mtu_lower      both netdevs from MTU 9000 to 1500 under connections
#                  that carry 8 KiB payloads (dead_ms 20 s), then new QPs
#                  over the same devices
#
# and asserts: the event itself completes promptly; the application exits
# within a bound, with the failure the event means (below); the kernel log
# shows no warning (session.sh checks); afterwards no device of the test
# is left in "rdma link" or "rdma resource", a device that survived has no
# QP, CQ, MR, PD or context left once the application is gone, the module's
# reference count is 0, rmmod succeeds and the module loads again.
#
# What the application sees:
# - its device removed (link delete, netdev or netns delete, rmmod): the
#   context is disassociated, IBV_EVENT_DEVICE_FATAL arrives, posting
#   fails with EIO, nothing completes any more;
# - its port down: IBV_EVENT_PORT_ERR, then the connection fails once it
#   makes no progress for dead_ms, and every outstanding work request
#   completes with IBV_WC_RETRY_EXC_ERR (the first one; the rest flush);
# - the MTU below the connection's payload size: the connection fails at
#   once (its packets could never get through again), the same retry
#   exceeded; new QPs open a new connection with the smaller payload;
# - the peer's device removed: the same retry exceeded.
#
#   dp_teardown.sh [CASE..]     (default: $DP_TEARDOWN_CASES, else all of
#                               them, in the order above)
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd ib_write_bw rmmod modprobe lsmod
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
all="link_delete link_delete_server rmmod netdev_down netdev_delete netns_delete mtu_lower"
cases=${*:-${DP_TEARDOWN_CASES:-$all}}
for c in $cases; do
	case " $all " in
	*" $c "*) ;;
	*) ksft_fail "unknown case $c (known: $all)" ;;
	esac
done

td_fail() {
	echo "FAIL: $case: $*"
	_ksft_failed=$((_ksft_failed + 1))
}

td_ok() {
	echo "ok: $case: $*"
}

# td_check DESC CMD..: ksft_check with the case's name.
td_check() {
	_d=$1
	shift
	ksft_check "$case: $_d" "$@"
}

# Both devices' data counters move within a second: traffic is in flight.
td_flowing() {
	_a=$(dp_counter "$DP_DEV_A" tx_data)
	_b=$(dp_counter "$DP_DEV_B" tx_data)
	sleep 1
	[ "$(dp_counter "$DP_DEV_A" tx_data)" -gt "$_a" ] &&
		[ "$(dp_counter "$DP_DEV_B" tx_data)" -gt "$_b" ]
}

# td_start_integrity: the integrity program at A (both ends in one
# process), long enough to be cut by the event; TD_APP is its pid.
td_start_integrity() {
	TD_LOG=$DP_OUT/teardown-$case.integrity
	rm -f "$TD_LOG" "$TD_LOG.rc"
	(
		dp_integrity -q 4 -o 16 -m 1048576 -t 600 -T 60 -s "$$" \
			>"$TD_LOG" 2>&1
		echo $? >"$TD_LOG.rc"
	) &
	TD_APP=$!
}

# td_traffic: wait until the application moves data both ways.
td_traffic() {
	_started() { [ "$(dp_counter "$DP_DEV_A" tx_data)" -ge 500 ]; }
	if ! mroce_wait_for 60 _started || ! td_flowing; then
		td_fail "no traffic before the event"
		sed 's/^/#   /' "$TD_LOG"
		return 1
	fi
	if [ -e "$TD_LOG.rc" ]; then
		td_fail "the application ended before the event"
		sed 's/^/#   /' "$TD_LOG"
		return 1
	fi
	td_ok "traffic in flight ($(dp_counter "$DP_DEV_A" tx_data) data packets from A, $(dp_counter "$DP_DEV_B" tx_data) from B)"
}

# td_app_exit SECONDS: the application ended within SECONDS (else it is
# killed: a hang).  Prints its last words.
td_app_exit() {
	_t0=$(date +%s)
	# by the clock: mroce_wait_for counts polls, which a loaded TCG
	# guest makes slower than 0.1 s
	while [ ! -e "$TD_LOG.rc" ] && [ $(($(date +%s) - _t0)) -lt "$1" ]; do
		sleep 0.2
	done
	if [ ! -e "$TD_LOG.rc" ]; then
		pkill -P "$TD_APP" 2>/dev/null
		kill "$TD_APP" 2>/dev/null
		wait "$TD_APP" 2>/dev/null
		td_fail "the application still runs $1 s after the event (hang)"
		tail -n 8 "$TD_LOG" | sed 's/^/#   /'
		return 1
	fi
	wait "$TD_APP" 2>/dev/null
	td_ok "the application exited $(cat "$TD_LOG.rc") within $(($(date +%s) - _t0 + TD_EVENT_S)) s of the event"
	grep -E '^(FAIL|PASS)|async event' "$TD_LOG" | head -n 6 | sed 's/^/#   /'
}

# td_app_failed_with REGEX WHAT: it failed (exit 1), saying REGEX.
td_app_failed_with() {
	_rc=$(cat "$TD_LOG.rc" 2>/dev/null)
	if [ "$_rc" = 1 ] && grep -qE "$1" "$TD_LOG"; then
		td_ok "the application failed with $2"
	else
		td_fail "the application did not fail with $2 (exit ${_rc:-none})"
		tail -n 8 "$TD_LOG" | sed 's/^/#   /'
	fi
}

# td_timed SECONDS DESC CMD..: CMD completes, and within SECONDS.
td_timed() {
	_lim=$1
	_d=$2
	shift 2
	_t0=$(date +%s%N)
	if _o=$(timeout "$_lim" "$@" 2>&1); then
		TD_EVENT_S=$((($(date +%s%N) - _t0) / 1000000000))
		td_ok "$_d ($((($(date +%s%N) - _t0) / 1000000)) ms)"
	else
		_rc=$?
		TD_EVENT_S=$_lim
		td_fail "$_d: exit $_rc${_o:+: $_o}"
	fi
}

# The device's objects in "rdma resource" (pd cq qp mr ctx ...), e.g.
# "pd 0 cq 0 qp 0 cm_id 0 mr 0 ctx 0 srq 0"; empty if it is not there.
td_res_of() {
	rdma resource show 2>/dev/null | awk -v d="$1" '$2 == d":" {
		$1 = ""; $2 = ""; sub(/^ +/, ""); print }'
}

td_res_empty() {
	_r=$(td_res_of "$1")
	[ -n "$_r" ] || { echo "$1 not in rdma resource"; return 1; }
	echo "$_r" | awk '{ for (i = 2; i <= NF; i += 2) if ($i != 0) {
		print "left: " $0; exit 1 } }'
}

# td_finish: what must hold after every case.  Devices that survived
# their event have nothing left of the application and go; then nothing
# of the test remains, and the module unloads and loads again.
td_finish() {
	for _dev in "$DP_DEV_A" "$DP_DEV_B"; do
		[ -e "/sys/class/infiniband/$_dev" ] || continue
		td_check "$_dev survived and holds nothing of the application" \
			mroce_wait_for 10 td_res_empty "$_dev"
		td_check "rdma link delete $_dev" rdma link delete "$_dev"
	done
	_gone() {
		[ ! -e "/sys/class/infiniband/$DP_DEV_A" ] &&
			[ ! -e "/sys/class/infiniband/$DP_DEV_B" ]
	}
	td_check "no device left" mroce_wait_for 20 _gone
	_none() {
		! rdma link show | grep -E "$DP_DEV_A|$DP_DEV_B" &&
			! rdma resource show | grep -E "$DP_DEV_A|$DP_DEV_B"
	}
	td_check "rdma link and rdma resource show nothing of the test" _none
	# the namespaces and the veth go too, then the module
	mroce_cleanup
	if [ -d /sys/module/metaroce ]; then
		_refs() {
			[ "$(cat /sys/module/metaroce/refcnt)" = 0 ] &&
				lsmod | awk '$1 == "metaroce" { exit $3 != 0 }'
		}
		td_check "module reference count 0" mroce_wait_for 10 _refs
		td_check "rmmod metaroce" timeout 30 rmmod metaroce
	fi
	td_check "the module loads again" modprobe metaroce
}

# td_setup [MTU]: the topology, and dead_ms as the module has it.
td_setup() {
	echo "# ---- $case"
	ksft_require_module metaroce
	dp_setup_netns "${1:-9000}"
	TD_EVENT_S=0
}

case_link_delete() {
	td_setup
	td_start_integrity
	td_traffic || return
	td_timed 20 "rdma link delete $DP_DEV_A under traffic" \
		rdma link delete "$DP_DEV_A"
	td_app_exit 30 || return
	td_app_failed_with "$DP_DEV_A: async event local catastrophic error|ibv_post_send.*Input/output error" \
		"DEVICE_FATAL (or EIO on posting)"
}

case_link_delete_server() {
	td_setup
	TD_LOG=$DP_OUT/teardown-$case.perftest
	rm -f "$TD_LOG" "$TD_LOG.rc"
	(
		# shellcheck disable=SC2034 # read by dp_perftest_once
		DP_PERFTEST_TIMEOUT=120
		dp_perftest_once td_server ib_write_bw -s 65536 -q 2 -D 100
		echo $? >"$TD_LOG.rc"
	) >"$TD_LOG" 2>&1 &
	TD_APP=$!
	_started() { [ "$(dp_counter "$DP_DEV_A" tx_data)" -ge 500 ]; }
	# the server writes nothing back but ACKs: only A's data counts
	_moving() {
		_a=$(dp_counter "$DP_DEV_A" tx_data)
		sleep 1
		[ "$(dp_counter "$DP_DEV_A" tx_data)" -gt "$_a" ]
	}
	td_check "ib_write_bw in flight" eval "mroce_wait_for 60 _started && _moving"
	td_timed 20 "rdma link delete of the server's $DP_DEV_B under traffic" \
		rdma link delete "$DP_DEV_B"
	# dead_ms (2 s) and its three RTO rounds, then the client's error
	td_app_exit 40 || return
	_c=$DP_OUT/td_server.client
	if grep -q 'status 12' "$_c"; then
		td_ok "the client's writes completed with retry exceeded (status 12)"
	else
		td_fail "the client saw no retry exceeded"
		tail -n 8 "$_c" | sed 's/^/#   /'
	fi
	td_check "the client's connection failed (conn_failed)" \
		[ "$(dp_counter "$DP_DEV_A" conn_failed)" -ge 1 ]
}

case_rmmod() {
	td_setup
	td_start_integrity
	td_traffic || return
	td_timed 30 "rmmod metaroce under traffic" rmmod metaroce
	td_check "the module is gone" sh -c '! lsmod | grep -q "^metaroce "'
	td_app_exit 30 || return
	# Both devices go, one after the other: when removing the first takes
	# longer than dead_ms (a slow or debug kernel), the other end's
	# connection fails first, with retry exceeded.
	td_app_failed_with "async event local catastrophic error|ibv_post_send.*Input/output error|completed with transport retry counter exceeded" \
		"DEVICE_FATAL, EIO on posting, or retry exceeded as its peer went first"
}

case_netdev_down() {
	td_setup
	td_start_integrity
	td_traffic || return
	td_timed 10 "ip link set $DP_IF_A down under traffic" \
		ip -n "$DP_NS_A" link set "$DP_IF_A" down
	td_app_exit 40 || return
	td_app_failed_with "transport retry counter exceeded|Work Request Flushed Error" \
		"retry exceeded (or its flush)"
	td_check "the application saw the port go down (PORT_ERR)" \
		grep -q "async event on $DP_DEV_A: port error" "$TD_LOG"
	td_check "the connection failed (conn_failed)" \
		[ "$(dp_counter "$DP_DEV_A" conn_failed)" -ge 1 ]
	# and the devices carry new connections once it is back
	dp_a ip link set "$DP_IF_A" up
	dp_a ip neigh replace "$DP_IP_B" dev "$DP_IF_A" nud permanent \
		lladdr "$(dp_b cat "/sys/class/net/$DP_IF_B/address")"
	_active() { port_active "$DP_DEV_A"; }
	td_check "port active again" mroce_wait_for 20 _active
	_dp_gids
	td_check "integrity passes after the port came back" \
		dp_integrity -q 2 -o 8 -m 65536 -r 3 -T 60 -s "$$"
}

port_active() {
	grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"
}

case_netdev_delete() {
	td_setup
	td_start_integrity
	td_traffic || return
	td_timed 20 "ip link del $DP_IF_A under traffic" \
		ip -n "$DP_NS_A" link del "$DP_IF_A"
	_gone() {
		[ ! -e "/sys/class/infiniband/$DP_DEV_A" ] &&
			[ ! -e "/sys/class/infiniband/$DP_DEV_B" ]
	}
	td_check "both devices removed (the veth pair went)" \
		mroce_wait_for 20 _gone
	td_app_exit 30 || return
	# both devices go: as for rmmod, the peer's may go first
	td_app_failed_with "async event local catastrophic error|ibv_post_send.*Input/output error|completed with transport retry counter exceeded" \
		"DEVICE_FATAL, EIO on posting, or retry exceeded as its peer went first"
}

case_netns_delete() {
	td_setup
	td_start_integrity
	td_traffic || return
	td_timed 20 "ip netns del $DP_NS_B under traffic" ip netns del "$DP_NS_B"
	_gone() { [ ! -e "/sys/class/infiniband/$DP_DEV_B" ]; }
	td_check "$DP_DEV_B removed with its netns" mroce_wait_for 30 _gone
	td_app_exit 30 || return
	td_app_failed_with "async event local catastrophic error|ibv_post_send.*Input/output error" \
		"DEVICE_FATAL (or EIO on posting)"
}

case_mtu_lower() {
	td_setup 9000
	# The dead timer far away (taken when a connection opens): the QPs
	# must fail because the payload no longer fits, not because nothing
	# moved for dead_ms.
	echo 20000 >/sys/module/metaroce/parameters/dead_ms
	td_start_integrity
	td_traffic || return
	td_timed 20 "MTU 9000 to 1500 at both ends under traffic" sh -c \
		"ip -n $DP_NS_A link set $DP_IF_A mtu 1500 &&
			ip -n $DP_NS_B link set $DP_IF_B mtu 1500"
	td_app_exit 10 || return
	td_app_failed_with "transport retry counter exceeded|Work Request Flushed Error" \
		"retry exceeded (or its flush)"
	td_check "the connections failed because of the MTU" sh -c \
		"dmesg | grep -E '($DP_DEV_A|$DP_DEV_B): connection [0-9]+ to .* failed: the link.s MTU fell below'"
	dp_counters "$DP_DEV_A"
	# New QPs, same devices and peers: full-size messages must arrive
	# byte-exact in 1 KiB payloads.
	td_check "integrity passes at MTU 1500 after the change" \
		dp_integrity -q 2 -o 12 -m 262144 -r 4 -T 60 -s "$$"
	# shellcheck disable=SC2154 # ksft_check's output
	grep -E '^(FAIL|PASS)' <<<"$_out" | sed 's/^/#   /'
}

for case in $cases; do
	"case_$case"
	td_finish
done
ksft_exit
