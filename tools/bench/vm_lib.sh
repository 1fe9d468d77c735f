# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared by the guest halves of the comparison tools (vm_ab.sh,
# vm_insn_count.sh), sourced after selftests/verbs/datapath_lib.sh.

# vm_load KO[,param=value..]: (re)load metaroce.ko from KO with those
# parameters, in place of whichever build was loaded.
vm_load() {
	rmmod metaroce 2>/dev/null
	_ko=${1%%,*}
	_params=
	[ "$_ko" != "$1" ] && _params=$(echo "${1#*,}" | tr ',' ' ')
	# shellcheck disable=SC2086 # parameters are words
	insmod "$_ko" $_params
}
