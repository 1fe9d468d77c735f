# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host side of the tools/bench scripts, sourced from the repository root.
# bench_prereqs [module]: sets $vm (the VM runner) and builds what a run
# needs and lacks: the runner, the provider, and with "module" metaroce.ko.
bench_prereqs() {
	_build=${BUILD:-$PWD/build}
	vm=$_build/tools/vm/metaroce-vm
	if [ ! -x "$vm" ]; then
		{ [ -f "$_build/CMakeCache.txt" ] || cmake -S . -B "$_build" >/dev/null; } &&
			cmake --build "$_build" -j2 --target metaroce-vm >/dev/null
	fi
	if [ "${1:-}" = module ] && [ ! -f metaroce.ko ]; then
		make -s module
	fi
	[ -f rdma-core-provider/libmetaroce-rdmav34.so ] || make -s provider
}
