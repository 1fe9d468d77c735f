#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Second stage of the metaroce-vm guest, PID 1 after switch_root (the host's
# /bin/sh on the overlay root).  Finishes the mounts, puts the prepared module
# tree on /lib/modules/<kver>, starts the heartbeat, runs the command with
# its output on the mroce.out port, writes its exit status to
# $METAROCE_OUT/status and powers off.  PID 1 must never exit (that would be a
# kernel panic): every path ends in power-off.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	while :; do sleep 60; done
}

die() {
	echo "metaroce-vm guest: $*" >/dev/console
	poweroff_now
}

mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr

# The stock tree plus metaroce.ko, depmod'ed on the host: modprobe (and the
# kernel's request_module, e.g. for "rdma link add ... type metaroce") use it.
mkdir -p "/lib/modules/$METAROCE_KVER"
mount --bind "$METAROCE_MODTREE" "/lib/modules/$METAROCE_KVER" ||
	die "cannot mount the module tree $METAROCE_MODTREE"

mount -t debugfs debugfs /sys/kernel/debug
# configfs is a module in Debian's kernel.
modprobe configfs && mount -t configfs configfs /sys/kernel/config

hostname metaroce-vm
ip link set lo up
# Boot ran with "quiet"; from here on the console log gets everything but
# debug, so warnings land in console.log.
echo 7 >/proc/sys/kernel/printk
ulimit -l unlimited
ulimit -c 0

port() {
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && echo "/dev/${p##*/}" && return 0
	done
	return 1
}
i=0
while ! out=$(port mroce.out) || ! ctl=$(port mroce.ctl) ||
	[ ! -c "$out" ] || [ ! -c "$ctl" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && die "virtio ports mroce.out/mroce.ctl did not appear"
	sleep 0.1
done

# Heartbeat: the runner calls the guest hung when these stop.
(
	trap - INT TERM
	while echo hb; do sleep 5; done
) >"$ctl" 2>/dev/null &
hb=$!

. "$METAROCE_OUT/.vm/argv"
keep=$METAROCE_KEEP
unset METAROCE_MODTREE METAROCE_KEEP METAROCE_KVER
export METAROCE_VM=1
cwd=$METAROCE_CWD
unset METAROCE_CWD
cd "$cwd" 2>/dev/null || cd "$METAROCE_ROOT" || cd /

"$@" </dev/null >"$out" 2>&1
status=$?
echo "$status" >"$METAROCE_OUT/status.tmp" &&
	mv "$METAROCE_OUT/status.tmp" "$METAROCE_OUT/status"

if [ "$keep" = 1 ]; then
	# A virtio port can be open only once at a time: one read-write open.
	exec 3<>"$out"
	echo "metaroce-vm: command exited with status $status; shell kept (exit to power off)" >&3
	PS1='metaroce-vm# ' sh -i <&3 >&3 2>&3
	exec 3>&-
fi

kill "$hb" 2>/dev/null
poweroff_now
