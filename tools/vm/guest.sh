#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Second stage of the metaroce-vm guest: PID 1 after switch_root, the host's
# /bin/sh on the prepared root (tools/vm/init.sh did the mounts).  Starts the
# heartbeat, runs the command with its output on the mroce.out port, writes
# its exit status to $METAROCE_OUT/status and powers off.  PID 1 must never
# exit (that is a kernel panic): every path ends in power-off.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	while :; do sleep 60; done
}

out=$METAROCE_PORT_OUT
ctl=$METAROCE_PORT_CTL
keep=$METAROCE_KEEP
cwd=$METAROCE_CWD
unset METAROCE_PORT_OUT METAROCE_PORT_CTL METAROCE_KEEP METAROCE_CWD \
	METAROCE_MODTREE METAROCE_KVER
export METAROCE_VM=1

# shellcheck disable=SC3045 # dash and bash both have these
ulimit -l unlimited
# shellcheck disable=SC3045
ulimit -c 0

# Heartbeat: the runner calls the guest hung when these stop.  The port is
# open once, on fd 4, shared with the "shell" notice below (a virtio port
# takes one open at a time).
exec 4>"$ctl"
(
	trap - INT TERM
	while echo hb; do sleep 5; done
) >&4 2>/dev/null &
hb=$!

. "$METAROCE_OUT/.vm/argv"
cd "$cwd" 2>/dev/null || cd "$METAROCE_ROOT" || cd /

"$@" </dev/null >"$out" 2>&1 4>&-
status=$?
echo "$status" >"$METAROCE_OUT/status.tmp" &&
	mv "$METAROCE_OUT/status.tmp" "$METAROCE_OUT/status"

if [ "$keep" = 1 ]; then
	# A virtio port can be open only once at a time: one read-write open.
	exec 3<>"$out"
	echo "metaroce-vm: command exited with status $status; shell kept (exit to power off)" >&3
	echo shell >&4
	PS1='metaroce-vm# ' sh -i <&3 >&3 2>&3 4>&-
	exec 3>&-
fi

kill "$hb" 2>/dev/null
poweroff_now
