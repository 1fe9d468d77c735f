#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The in-guest test session: runs every test of selftests/vm/tests.list (or
# the tests named on the command line) in this one boot and prints TAP 13,
# then the line "N passed, N failed, N skipped" last.
#
#   metaroce-vm -- selftests/vm/session.sh [-t SECONDS] [-x SCALE] [TEST...]
#
# A test is an executable, run from the repository root with METAROCE_ROOT
# and METAROCE_OUT set, stdin on /dev/null; kselftest exit codes: 0 pass,
# 4 skip, anything else fail.  Each has a timeout (tests.list "timeout=S",
# else -t, else $METAROCE_TEST_TIMEOUT, else 600 s), multiplied by -x (a
# whole number, 1 unless given: a kernel with KASAN and lockdep runs the
# same tests several times slower).  A test also fails if
# the kernel logged WARNING:, BUG:, Oops, refcount_t, general protection or
# lockdep's "trying to register non-static key" while it ran (between two
# markers this script writes to /dev/kmsg).
# Per-test output and kernel log: $METAROCE_OUT/session/.

set -u

root=${METAROCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
out=${METAROCE_OUT:-/tmp}/session
list=$root/selftests/vm/tests.list
timeout_default=${METAROCE_TEST_TIMEOUT:-600}
kernel_bad='WARNING:|BUG:|Oops|refcount_t|general protection|INFO: trying to register non-static key'
tag="metaroce-session[$$]"

scale=1
while getopts t:l:x: opt; do
	case $opt in
	t) timeout_default=$OPTARG ;;
	l) list=$OPTARG ;;
	x) scale=$OPTARG ;;
	*)
		echo "usage: $0 [-t SECONDS] [-l LIST] [-x SCALE] [TEST...]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))

# These tests reconfigure the kernel and the network: only in the test VM.
if [ "${METAROCE_VM:-}" != 1 ] && [ "${METAROCE_SESSION_ANYWHERE:-}" != 1 ]; then
	echo "session.sh: not in the metaroce-vm guest; run it with" >&2
	echo "  metaroce-vm -- selftests/vm/session.sh" >&2
	exit 2
fi

mkdir -p "$out"
plan=$out/plan
: >"$plan"
if [ $# -gt 0 ]; then
	for t in "$@"; do
		echo "$t" >>"$plan"
	done
else
	# Drop comments and blank lines; keep "path [timeout=S]".
	sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$list" |
		grep -v '^$' >>"$plan"
fi

total=$(wc -l <"$plan")
passed=0
failed=0
skipped=0
n=0

# Kernel log records written between our begin and end markers.
kernel_log_of() {
	dmesg | awk -v b="$tag: begin $1 " -v e="$tag: end $1 " '
		index($0, e) { exit }
		started { print }
		index($0, b) { started = 1; seen = 1 }
		END { if (!seen) print "(begin marker rotated out of the log)" }'
}

# What a test left behind that the next one may trip over.  Bounded: after
# a kernel bug a dump can wait forever for a lock a dead task held.
snapshot() {
	{
		timeout 20 ip netns list 2>/dev/null | sed 's/^/netns /'
		timeout 20 ip -o link show 2>/dev/null |
			awk -F': ' '{print "link " $2}'
		timeout 20 rdma link show 2>/dev/null | awk '{print "rdma " $2}'
	} | sort
}

# TAINT_DIE: a task died in the kernel (oops, BUG).  The locks it held stay
# held, so what runs after it may hang, and measures a broken kernel anyway.
kernel_died() {
	[ $(($(cat /proc/sys/kernel/tainted) & 128)) -ne 0 ]
}
died_before=0
kernel_died && died_before=1

echo "TAP version 13"
echo "1..$total"

while read -r path opts <&3; do
	n=$((n + 1))
	t=$timeout_default
	for o in $opts; do
		case $o in
		timeout=*) t=${o#timeout=} ;;
		esac
	done
	t=$((t * scale))
	name=$path
	safe=$(printf '%s' "$path" | tr -c 'A-Za-z0-9._-' '_')
	log=$out/$n-$safe.log
	klog=$out/$n-$safe.dmesg
	case $path in
	/*) exe=$path ;;
	*) exe=$root/$path ;;
	esac

	echo "# $n/$total $name (timeout ${t}s)"
	if [ ! -f "$exe" ] || [ ! -x "$exe" ]; then
		echo "# $exe: missing or not executable"
		echo "not ok $n - $name"
		failed=$((failed + 1))
		continue
	fi

	before=$(snapshot)
	echo "$tag: begin $n $name" >/dev/kmsg
	start=$(date +%s)
	# Output goes to a file that tail streams: a daemon the test leaves
	# behind cannot hold the session up by keeping a pipe open.  timeout(1)
	# runs the test in its own process group, whose leftovers are killed.
	(cd "$root" && exec timeout -k 10 "$t" "$exe") </dev/null >"$log" 2>&1 &
	pid=$!
	tail -n +1 -s 0.2 -f --pid="$pid" "$log" | sed -u 's/^/# /'
	wait "$pid"
	rc=$?
	stray=$(pgrep -g "$pid" 2>/dev/null | tr '\n' ' ')
	if [ -n "$stray" ]; then
		echo "# killing processes the test left running: $stray"
		kill -9 "-$pid" 2>/dev/null
	fi
	secs=$(($(date +%s) - start))
	echo "$tag: end $n $name" >/dev/kmsg

	kernel_log_of "$n" >"$klog"
	bad=$(grep -E "$kernel_bad" "$klog")
	# a log that lost the test's start cannot show it was clean: fail
	if grep -qxF "(begin marker rotated out of the log)" "$klog"; then
		bad="${bad:+$bad
}the kernel log lost this test's begin marker: it cannot be checked"
	fi
	if [ "$died_before" = 0 ] && kernel_died; then
		# Report the whole oops, then stop: the remaining tests fail.
		echo "# exit $rc, ${secs}s; the kernel died during this test:"
		grep -m 1 -A 60 -E "$kernel_bad" "$klog" | sed 's/^/#   /'
		echo "not ok $n - $name"
		failed=$((failed + 1))
		while read -r path opts <&3; do
			n=$((n + 1))
			echo "not ok $n - $path # not run: the kernel died in an earlier test"
			failed=$((failed + 1))
		done
		break
	fi
	after=$(snapshot)
	leftover=$(printf '%s\n' "$after" | grep -vxF "$before" | grep -v '^$')
	if [ -n "$leftover" ]; then
		printf '%s\n' "$leftover" | sed 's/^/# left behind: /'
	fi

	case $rc in
	0) how="exit 0" ;;
	124 | 137) how="exit $rc: timed out after ${t}s" ;;
	*) how="exit $rc" ;;
	esac
	echo "# $how, ${secs}s"
	if [ -n "$bad" ]; then
		echo "# kernel log during the test (full: $klog):"
		printf '%s\n' "$bad" | sed 's/^/#   /'
		echo "not ok $n - $name"
		failed=$((failed + 1))
	elif [ "$rc" = 0 ]; then
		echo "ok $n - $name"
		passed=$((passed + 1))
	elif [ "$rc" = 4 ] && [ "${METAROCE_VM:-}" != 1 ]; then
		why=$(grep 'SKIP' "$log" | tail -n 1 | sed 's/.*SKIP[:]*[[:space:]]*//')
		echo "ok $n - $name # SKIP${why:+ $why}"
		skipped=$((skipped + 1))
	elif [ "$rc" = 4 ]; then
		# lib.sh fails a skip in the VM; a test that exits 4 itself too
		why=$(grep 'SKIP' "$log" | tail -n 1 | sed 's/.*SKIP[:]*[[:space:]]*//')
		echo "# a skip in the test VM is a failure: no reason to skip can hold here"
		echo "not ok $n - $name # SKIP${why:+ $why}"
		failed=$((failed + 1))
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
	fi
done 3<"$plan"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
