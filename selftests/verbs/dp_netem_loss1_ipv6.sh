#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_netem.sh loss1 over IPv6 GIDs, short: the IPv6 datapath loses packets
# and recovers them, with the IPv4 test's assertions (see there).
DP_FAMILY=6 exec "$(dirname "$0")/dp_netem.sh" loss1 short
