#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A device goes away while an application has it open (a context and a PD):
# rdma link delete, netdev deletion and rmmod must complete promptly, and
# the application gets IBV_EVENT_DEVICE_FATAL instead of blocking them.
set -u
. "$(dirname "$0")/common.sh"
require_tools ip rdma modprobe rmmod timeout
[ -x "$MROCE_VERBS" ] || skip_all "$MROCE_VERBS not built (make provider)"

vA=mrar$$a
vB=mrar$$b
out=$(mktemp)

cleanup() {
	[ -n "${app:-}" ] && kill "$app" 2>/dev/null
	rdma link delete mrar0 2>/dev/null
	ip link del "$vA" 2>/dev/null
	mod_loaded && rmmod metaroce 2>/dev/null
	rm -f "$out"
}
trap cleanup EXIT

tap_plan 9

start_app() {
	"$MROCE_VERBS" async "$1" device_fatal 30 >"$out" 2>&1 &
	app=$!
	wait_for 10 grep -q ready "$out"
}

app_got_fatal() {
	wait "$app"
	local rc=$?
	app=
	sed 's/^/#   /' "$out"
	[ "$rc" = 0 ] && grep -q "event local catastrophic error" "$out"
}

modprobe metaroce
veth_pair "$vA" "$vB"

rdma link add mrar0 type metaroce netdev "$vA"
check "application holds mrar0 open" start_app mrar0
check "rdma link delete completes while it runs" \
	timeout 20 rdma link delete mrar0
check "application got DEVICE_FATAL" app_got_fatal

rdma link add mrar0 type metaroce netdev "$vA"
check "application holds mrar0 open again" start_app mrar0
check "netdev deletion completes, device removed" eval "timeout 20 ip link del $vA &&
	wait_for 20 ibdev_gone mrar0"
check "application got DEVICE_FATAL" app_got_fatal

veth_pair "$vA" "$vB"
rdma link add mrar0 type metaroce netdev "$vA"
check "application holds mrar0 open a third time" start_app mrar0
check "rmmod completes while it runs" timeout 20 rmmod metaroce
check "application got DEVICE_FATAL" app_got_fatal

tap_finish
