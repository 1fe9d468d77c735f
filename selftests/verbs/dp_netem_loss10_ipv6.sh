#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_netem.sh loss10 over IPv6 GIDs, short: the IPv4 test's assertions (see
# there) on the IPv6 datapath.
DP_FAMILY=6 exec "$(dirname "$0")/dp_netem.sh" loss10 short
