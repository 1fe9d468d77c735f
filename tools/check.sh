#!/bin/bash
# Every test of the project, in stages; ends with
# "N passed, N failed, N skipped".  A skip is never expected (every tool
# the tests need is installed by make deps, and the VM has all of them), so
# any skip fails the run as a failure would.
#
#   host:  build (module with zero warnings, provider, C++), unit tests and
#          simulator tests (ctest), the same unit tests under ASan+UBSan,
#          the fuzzers for a bounded time, checkpatch on the C sources
#   vm:    one boot of the QEMU test VM running every test of
#          selftests/vm/tests.list (kernel module, provider, datapath)
#
# Usage: tools/check.sh [--host-only | --vm-only]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mode=all
case "${1:-}" in
--host-only) mode=host ;;
--vm-only) mode=vm ;;
"") ;;
*) echo "usage: $0 [--host-only|--vm-only]" >&2; exit 2 ;;
esac

JOBS=${JOBS:-$(nproc)}
logdir=$top/results/check
mkdir -p "$logdir"
passed=0
failed=0
skipped=0
failures=()

note() { printf '# %s\n' "$*"; }
ok() { passed=$((passed + 1)); printf 'ok - %s\n' "$1"; }
notok() {
	failed=$((failed + 1)); failures+=("$1")
	printf 'not ok - %s (log: %s)\n' "$1" "${2:-}"
}

# One step that is a single test: pass or fail, log kept.
step() {
	local name=$1; shift
	local log=$logdir/${name//[^A-Za-z0-9_.-]/_}.log
	if "$@" >"$log" 2>&1; then ok "$name"; else notok "$name" "$log"; tail -n 20 "$log" | sed 's/^/#   /'; fi
}

# A ctest run counts as its individual tests.
ctest_stage() {
	local name=$1 dir=$2; shift 2
	local log=$logdir/$name.log
	ctest --test-dir "$dir" --output-on-failure -j "$JOBS" "$@" >"$log" 2>&1
	local line total nfail
	line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		notok "$name (ctest did not run)" "$log"
		tail -n 20 "$log" | sed 's/^/#   /'
		return
	fi
	total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
	nfail=$(sed -E 's/.*, ([0-9]+) tests? failed.*/\1/' <<<"$line")
	# ctest counts a skipped test as not failed
	nskip=$(grep -cE '\*\*\*(Skipped|Not Run)' "$log")
	passed=$((passed + total - nfail - nskip))
	failed=$((failed + nfail))
	skipped=$((skipped + nskip))
	if [ "$nskip" -gt 0 ]; then
		failures+=("$name: $nskip skipped")
		grep -E '\*\*\*(Skipped|Not Run)' "$log" | sed 's/^/#   skipped: /'
	fi
	note "$name: $line"
	if [ "$nfail" -gt 0 ]; then
		failures+=("$name: $nfail")
		grep -E '^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)' "$log" | sed 's/^/#   failed: /'
	fi
}

# A TAP producer counts as its "ok"/"not ok" lines.
tap_stage() {
	local name=$1; shift
	local log=$logdir/$name.log rc
	"$@" 2>&1 | tee "$log" | grep -E '^(not )?ok |^# |[0-9]+ passed, [0-9]+ failed' | sed 's/^/  /'
	rc=${PIPESTATUS[0]}
	local p f s
	p=$(grep -cE '^ok ' "$log")
	s=$(grep -cE '^ok .*# SKIP' "$log")
	f=$(grep -cE '^not ok ' "$log")
	passed=$((passed + p - s))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$f" -gt 0 ]; then failures+=("$name: $f"); fi
	if [ "$s" -gt 0 ]; then failures+=("$name: $s skipped"); fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		notok "$name (exit $rc)" "$log"
		# Nothing of it said why: show its last words unfiltered (a VM
		# that did not boot prints its verdict and console there).
		tail -n 60 "$log" | sed 's/^/#   /'
	fi
}

host() {
	note "host stage: builds"
	step build-module bash -c "make -s module 2>&1 | tee /dev/stderr | { ! grep -E 'warning:|error:'; }"
	step build-provider make -s provider
	step build-user bash -c "cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j $JOBS"
	step build-asan bash -c "cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DMETAROCE_SANITIZE=ON >/dev/null && cmake --build build-asan -j $JOBS --target mroce_unit mroce-inject"

	note "host stage: unit and simulator tests"
	ctest_stage ctest build
	note "host stage: unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	METAROCE_TRANSFER_MB=${METAROCE_ASAN_TRANSFER_MB:-128} \
		ctest_stage ctest-asan build-asan -L unit

	if [ -x selftests/fuzz/run.sh ]; then
		note "host stage: fuzzers"
		tap_stage fuzz selftests/fuzz/run.sh
	fi
	if [ -x tools/checkpatch.sh ]; then
		step checkpatch tools/checkpatch.sh
	fi
}

vm() {
	note "vm stage: one boot runs selftests/vm/tests.list"
	if [ ! -x tools/vm/check.sh ]; then
		notok "vm stage (tools/vm/check.sh missing)"
		return
	fi
	[ -f metaroce.ko ] || step build-module make -s module
	[ -f rdma-core-provider/libmetaroce-rdmav34.so ] || step build-provider make -s provider
	[ -x build/tools/vm/metaroce-vm ] || step build-vm-runner cmake --build build -j "$JOBS" --target metaroce-vm
	tap_stage vm tools/vm/check.sh
}

start=$(date +%s)
[ "$mode" = vm ] || host
[ "$mode" = host ] || vm
note "took $(( $(date +%s) - start )) s; logs in $logdir"
if [ ${#failures[@]} -gt 0 ]; then
	note "failures:"
	printf '#   %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ]
