#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_integrity.sh at MTU 1500 (1024-byte path MTU: many more packets), with
# transmit copies (tx_zerocopy 0), so both transmit paths are checked.
exec "$(dirname "$0")/dp_integrity.sh" 1500 0
