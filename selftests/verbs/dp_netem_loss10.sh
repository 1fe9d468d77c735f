#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# dp_netem.sh loss10: see there.
exec "$(dirname "$0")/dp_netem.sh" loss10
