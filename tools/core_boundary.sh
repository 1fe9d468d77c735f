#!/bin/sh
# The protocol core's boundary: the module's glue (kernel/*.c, kernel/*.h)
# and the simulator (tools/sim, its tests included) include no header of
# kernel/core/ but mroce.h.  The unit tests, the fuzzers and the tools
# that craft or benchmark the core's internals (tools/inject, tools/bench)
# are white-box and may include the rest.
#
#   tools/core_boundary.sh [ROOT]      check the tree at ROOT (default: ours)
#   tools/core_boundary.sh --self-test a tree with one violation must fail
set -eu
here=$(cd "$(dirname "$0")" && pwd)

check() {
	root=$1
	hdrs=$(cd "$root/kernel/core" && ls ./*.h | sed 's|^\./||' | grep -vx mroce.h)
	[ -n "$hdrs" ] || { echo "no private headers in $root/kernel/core"; return 1; }
	files=$(find "$root/kernel" -maxdepth 1 -name '*.[ch]'; find "$root/tools/sim" -name '*.cc' -o -name '*.h')
	[ -n "$files" ] || { echo "no glue or simulator files under $root"; return 1; }
	bad=0
	for h in $hdrs; do
		# "core/conn.h" from the glue, "conn.h" from the simulator
		if grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<](core/)?$h[\">]" $files; then
			echo "includes the core's private $h (use mroce.h)"
			bad=1
		fi
	done
	# the boundary is in use: the glue and the simulator include mroce.h
	for f in "$root/kernel/metaroce.h" "$root/tools/sim/metaroce_adapter.h"; do
		grep -qE '#[[:space:]]*include[[:space:]]*"(core/)?mroce.h"' "$f" ||
			{ echo "$f does not include mroce.h"; bad=1; }
	done
	return $bad
}

if [ "${1:-}" = --self-test ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp/kernel/core" "$tmp/tools/sim"
	: >"$tmp/kernel/core/mroce.h"
	: >"$tmp/kernel/core/conn.h"
	printf '#include "core/mroce.h"\n' >"$tmp/kernel/metaroce.h"
	printf 'extern "C" {\n#include "mroce.h"\n}\n' >"$tmp/tools/sim/metaroce_adapter.h"
	check "$tmp" >/dev/null || { echo "self-test: a clean tree failed"; exit 1; }
	printf '#include "core/conn.h"\n' >"$tmp/kernel/debugfs.c"
	if check "$tmp" >/dev/null; then
		echo "self-test: the glue's core/conn.h passed"; exit 1
	fi
	rm "$tmp/kernel/debugfs.c"
	printf '#include "conn.h"\n' >"$tmp/tools/sim/x.cc"
	if check "$tmp" >/dev/null; then
		echo "self-test: the simulator's conn.h passed"; exit 1
	fi
	echo "self-test: ok"
	exit 0
fi
check "${1:-$here/..}"
