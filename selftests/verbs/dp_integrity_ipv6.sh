#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_integrity.sh over IPv6 GIDs (fd93::/64, not IPv4-mapped), MTU 9000
# with zero-copy transmit, 15 s: udp_tunnel6_xmit_skb and the IPv6 receive
# path carry every opcode's data, 8 KiB per packet, and nothing goes over
# IPv4 or is fragmented (see there).
DP_FAMILY=6 exec "$(dirname "$0")/dp_integrity.sh" 9000 1 15
