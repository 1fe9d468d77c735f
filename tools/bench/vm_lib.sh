# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared by the guest halves of the comparison tools (vm_ab.sh,
# vm_insn_count.sh), sourced after selftests/verbs/datapath_lib.sh.

# vm_load KO[,name=value..]: (re)load metaroce.ko from KO, in place of
# whichever build was loaded, with those settings: module parameters
# (modinfo -F parm) at load, the rest written to the module's debugfs
# tunables (/sys/kernel/debug/metaroce/tunables/) after it.
vm_load() {
	rmmod metaroce 2>/dev/null
	_ko=${1%%,*}
	_params=
	_tunables=
	if [ "$_ko" != "$1" ]; then
		_parms=$(modinfo -F parm "$_ko" | cut -d: -f1)
		for _s in $(echo "${1#*,}" | tr ',' ' '); do
			if echo "$_parms" | grep -qx "${_s%%=*}"; then
				_params="$_params $_s"
			else
				_tunables="$_tunables $_s"
			fi
		done
	fi
	# shellcheck disable=SC2086 # parameters are words
	insmod "$_ko" $_params || return 1
	[ -n "$_tunables" ] || return 0
	mountpoint -q /sys/kernel/debug 2>/dev/null ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for _s in $_tunables; do
		echo "${_s#*=}" >"/sys/kernel/debug/metaroce/tunables/${_s%%=*}" ||
			{ echo "vm_load: cannot set ${_s%%=*}" >&2; return 1; }
	done
}
