#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest half of tools/bench/insn_count.sh: pinned ib_write_lat runs of
# each variant (a metaroce.ko with its parameters, or rdma_rxe), one per
# TF_ITERS entry and round, each announced on stdout ("MARK start|end
# VARIANT ROUND ITERS") for the host, which snapshots its plugin's counts
# inside the run.  The kernel's and the modules' symbol addresses go to
# $METAROCE_OUT for the host to name the blocks.
#   TF_VARIANTS "name=KO[,param=value..] ..|name=rxe", TF_ROUNDS, TF_ITERS
. "$METAROCE_ROOT/selftests/verbs/datapath_lib.sh"
. "$METAROCE_ROOT/tools/bench/vm_lib.sh"

ksft_require_root
ksft_require_cmd ip tc rdma insmod rmmod ib_write_lat
mroce_use_provider || ksft_fail "provider not built"
ksft_require_module veth sch_netem ib_uverbs ip6_udp_tunnel udp_tunnel rdma_rxe
dp_initnet_net 9000
dp_netem
DP_PIN=1
DP_PERFTEST_TIMEOUT=600
cat /proc/kallsyms >"$METAROCE_OUT/kallsyms.txt"
echo "MARK ready"

round=0
while [ "$round" -lt "${TF_ROUNDS:-2}" ]; do
	round=$((round + 1))
	# shellcheck disable=SC2086 # variants are words
	for v in $TF_VARIANTS; do
		name=${v%%=*}
		drv=metaroce
		if [ "${v#*=}" = rxe ]; then
			drv=rxe
		elif ! vm_load "${v#*=}"; then
			echo "MARK failed $name $round load"
			continue
		fi
		dp_initnet_devs $drv
		# where this load's module landed (module text moves per load)
		cat /proc/modules >"$METAROCE_OUT/modules_${name}_$round.txt"
		grep -F '[' /proc/kallsyms >"$METAROCE_OUT/modsyms_${name}_$round.txt"
		for n in ${TF_ITERS:-300000}; do
			sleep 3
			echo "MARK start $name $round $n"
			if dp_perftest "tf_${name}_${round}_$n" ib_write_lat -s 64 -n "$n" >/dev/null 2>&1; then
				echo "MARK end $name $round $n typ=$DP_LAT avg=$DP_LAT_AVG"
			else
				echo "MARK end $name $round $n failed"
			fi
		done
		dp_initnet_devs_del
	done
done
rmmod metaroce 2>/dev/null
echo "MARK done"
exit 0
