#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make check-debug`: the VM suite on the debug kernel (KASAN, KFENCE,
# lockdep; see build.sh and debug.config).
#
#   tools/debug-kernel/check.sh [TEST...]
#
# Builds the debug kernel if the cache has none (40 minutes on two busy
# cores), builds metaroce.ko against it in the cache (the repository's own
# metaroce.ko stays the stock kernel's), then boots it once with
# tools/vm/check.sh and runs selftests/vm/tests.list, or the named tests.
# Fails when a test fails -- session.sh fails a test on any WARNING or BUG
# in the kernel log while it ran, which covers KASAN, KFENCE and lockdep
# reports -- and also on any such report outside a test (boot, module
# unload, between tests), from the whole console log.
#
# DEBUG_TIMEOUT (default 4h): hard limit of the VM run.
# DEBUG_TIMEOUT_SCALE (default 3): every test's timeout is multiplied by
# it, since KASAN, KFENCE and lockdep make the kernel several times slower.
# Results: <repo>/results/vm/debug-<timestamp>/ (or $METAROCE_CHECK_OUT).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tools/debug-kernel
DKC=${METAROCE_DEBUG_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metaroce/debug-kernel}
export METAROCE_DEBUG_KERNEL_CACHE=$DKC

fail() {
	echo "check-debug: $*"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

"$here/build.sh" || fail "the debug kernel did not build"
release=$("$here/build.sh" --print-release) || fail "no debug kernel in $DKC"
kdir=$DKC/obj

# metaroce.ko for the debug kernel: Kbuild builds next to the sources, so
# from a copy of them (tracked and new files, never the stock build's
# objects), rebuilt from scratch whenever they change.
mod=$DKC/metaroce
files() { git -C "$top" ls-files -coz --exclude-standard -- Kbuild kernel uapi; }
key=$( (cat "$DKC/key"; files | (cd "$top" && xargs -0 sha256sum)) | sha256sum)
if [ "$(cat "$mod/key" 2>/dev/null)" != "$key" ] || [ ! -f "$mod/src/metaroce.ko" ]; then
	rm -rf "$mod"
	mkdir -p "$mod/src"
	files | (cd "$top" && tar --null -T - -cf -) | tar -C "$mod/src" -xf - ||
		fail "cannot copy the module sources to $mod"
	if ! nice -n 19 make -s -C "$kdir" M="$mod/src" -j"${JOBS:-2}" modules >"$mod/build.log" 2>&1; then
		cat "$mod/build.log"
		fail "metaroce.ko does not build against $release"
	fi
	echo "$key" >"$mod/key"
fi
[ ! -s "$mod/build.log" ] || { echo "check-debug: metaroce.ko build output:"; cat "$mod/build.log"; }
ko=$mod/src/metaroce.ko

out=${METAROCE_CHECK_OUT:-$top/results/vm/debug-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
# --bzimage: with KASAN the kernel faults in its PVH entry, before KASAN's
# shadow exists, and QEMU resets.  loglevel=7 after the runner's "quiet":
# lockdep reports at boot are warnings, which quiet would keep off the
# console log.  preempt=full: more race windows than Debian's default
# voluntary preemption.
METAROCE_CACHE=$DKC KVER=$release METAROCE_CHECK_OUT=$out \
	"$top/tools/vm/check.sh" --module "$ko" --timeout "${DEBUG_TIMEOUT:-4h}" \
	--hang-timeout 600 --bzimage --kernel-arg loglevel=7 --kernel-arg kasan.fault=report \
	--kernel-arg preempt=full -- -x "${DEBUG_TIMEOUT_SCALE:-3}" "$@"
rc=$?

# Reports anywhere in the kernel log: the first line of each.
reports=$(grep -nE 'BUG: |WARNING: |INFO: trying to register non-static key|general protection|Oops' \
	"$out/console.log" 2>/dev/null | grep -v 'metaroce-session' | head -n 50)
if [ -n "$reports" ]; then
	echo "check-debug: kernel reports in $out/console.log:"
	printf '%s\n' "$reports" | sed 's/^/  /'
	rc=1
fi
echo "check-debug: $release, results in $out"
exit $rc
