#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The integrity checker against the reference: two rdma_rxe devices in
# init_net across a veth pair (see datapath_lib.sh).  Proves that
# selftests/verbs/integrity passes on a known-good implementation, so a
# failure over MetaRoCE means MetaRoCE, not the checker.
. "$(dirname "$0")/datapath_lib.sh"

dp_require
ksft_require_cmd rdma
[ -x "$METAROCE_ROOT/selftests/verbs/integrity" ] ||
	ksft_skip "integrity not built (make provider)"
dp_setup_initnet rxe 1500

# rxe retransmits on its own timers under TCG; keep the run short.
dp_integrity -q 2 -o 12 -m 65536 -r 20 -t 30 -T 120 -s 7 ||
	ksft_fail "integrity over rxe"
ksft_pass "integrity over rxe"
