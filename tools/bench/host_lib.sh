# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host side of the tools/bench scripts, sourced from the repository root.
# bench_prereqs [module]: sets $vm (the VM runner) and builds what a run
# needs: the runner when it is missing; the provider, and with "module"
# metaroce.ko, every time (make rebuilds only what changed).
bench_prereqs() {
	_build=${BUILD:-$PWD/build}
	vm=$_build/tools/vm/metaroce-vm
	if [ ! -x "$vm" ]; then
		{ [ -f "$_build/CMakeCache.txt" ] || cmake -S . -B "$_build" >/dev/null; } &&
			cmake --build "$_build" -j2 --target metaroce-vm >/dev/null
	fi
	# always: both builds are incremental, and a module left from before
	# an edit would be measured as if it were the edit
	if [ "${1:-}" = module ]; then
		make -s module
	fi
	make -s provider
}

# bench_lat_opts SCRIPT HELP_LINES ARGS..: the options of the latency
# tools (--rounds, --iters, --drivers) into $rounds, $iters and $drivers,
# whose defaults the caller sets; -h prints lines HELP_LINES ("3,16p") of
# SCRIPT, its header.
# shellcheck disable=SC2034 # the variables are the caller's
bench_lat_opts() {
	_self=$1
	_help=$2
	shift 2
	while [ $# -gt 0 ]; do
		case $1 in
		--rounds) rounds=$2; shift 2 ;;
		--iters) iters=$2; shift 2 ;;
		--drivers) drivers=$2; shift 2 ;;
		-h | --help) sed -n "$_help" "$_self" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "${_self##*/}: unknown option $1" >&2; exit 2 ;;
		esac
	done
}

# bench_variants PROG NAME=KO[,param=value..]|NAME=rxe ..: checks each
# variant and sets $variants to them with KO made absolute (the guest's
# cwd differs); exits 2 on a malformed one or a missing module.
# shellcheck disable=SC2034 # the variable is the caller's
bench_variants() {
	_prog=$1
	shift
	variants=
	for _v in "$@"; do
		case $_v in
		*=*) ;;
		*) echo "$_prog: $_v is not NAME=KO[,param=value..]" >&2; exit 2 ;;
		esac
		_ko=${_v#*=}
		_ko=${_ko%%,*}
		[ "$_ko" = rxe ] && { variants="$variants $_v"; continue; }
		_ko=$(realpath "$_ko") || exit 2
		[ -f "$_ko" ] || { echo "$_prog: no module $_ko" >&2; exit 2; }
		_rest=${_v#*=}
		[ "$_rest" != "${_rest#*,}" ] && _ko="$_ko,${_rest#*,}"
		variants="$variants ${_v%%=*}=$_ko"
	done
}

# bench_variants_or_tree PROG NAME=KO.. : bench_variants, or without
# variants this tree's module (built first, as its path is checked) against
# rdma_rxe.  $top is the caller's repository root.
bench_variants_or_tree() {
	_prog=$1
	shift
	if [ $# -eq 0 ]; then
		(cd "${top:?}" && make -s module) || exit 1
		set -- metaroce="$top/metaroce.ko" rxe=rxe
	fi
	bench_variants "$_prog" "$@"
}
