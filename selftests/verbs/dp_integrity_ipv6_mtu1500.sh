#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_integrity_ipv6.sh at MTU 1500 (1 KiB payloads beside the 40-byte IPv6
# header), with transmit copies (tx_zerocopy 0): the other transmit path.
DP_FAMILY=6 exec "$(dirname "$0")/dp_integrity.sh" 1500 0 15
