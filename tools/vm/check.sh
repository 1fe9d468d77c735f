#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Host side of the VM tests: boot the test VM once, run the whole session
# (selftests/vm/session.sh over selftests/vm/tests.list), mirror its output,
# and exit non-zero if any test failed or the VM itself failed.  The last
# line printed is always the summary "N passed, N failed, N skipped"; when the
# VM died mid-session, the tests that did not finish count as failed.
#
#   tools/vm/check.sh [metaroce-vm options] [-- session.sh args]
#
# Builds metaroce-vm in $BUILD (default <repo>/build) if it is missing.
# Results: <repo>/results/vm/check-<timestamp>/ (or $METAROCE_CHECK_OUT).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
vm=$build/tools/vm/metaroce-vm

vm_opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	vm_opts+=("$1")
	shift
done
[ "${1:-}" = -- ] && shift

if [ ! -x "$vm" ] || [ -n "$(find "$top/tools/vm" -newer "$vm" -name '*.[ch]*' -print -quit)" ]; then
	echo "check.sh: building metaroce-vm in $build" >&2
	if ! { [ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" >/dev/null; } ||
		! cmake --build "$build" -j2 --target metaroce-vm >/dev/null; then
		echo "check.sh: cannot build metaroce-vm"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
fi

out=${METAROCE_CHECK_OUT:-$top/results/vm/check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
"$vm" "${vm_opts[@]}" --out "$out" -- selftests/vm/session.sh "$@"
rc=$?

log=$out/output.log
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" 2>/dev/null | tail -n 1)
if [ -z "$summary" ]; then
	# The session did not finish: count from its TAP lines.
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" 2>/dev/null | head -n 1)
	pass=$(grep -cE '^ok [0-9]+ - ' "$log" 2>/dev/null)
	skip=$(grep -cE '^ok [0-9]+ - .*# SKIP' "$log" 2>/dev/null)
	fail=$(grep -cE '^not ok [0-9]+ - ' "$log" 2>/dev/null)
	pass=$((${pass:-0} - ${skip:-0}))
	unfinished=$((${plan:-1} - pass - ${skip:-0} - ${fail:-0}))
	[ "$unfinished" -gt 0 ] || unfinished=1
	echo "check.sh: the session did not finish ($(cat "$out/vm-result" 2>/dev/null || echo "metaroce-vm exit $rc")); $unfinished test(s) counted as failed"
	summary="$pass passed, $((${fail:-0} + unfinished)) failed, ${skip:-0} skipped"
	[ "$rc" -ne 0 ] || rc=1
fi
echo "check.sh: results in $out"
echo "$summary"
[ "$rc" -eq 0 ] && [[ $summary == *" 0 failed,"* ]]
