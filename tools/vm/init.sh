#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /init of the metaroce-vm initramfs, run by busybox-static as PID 1.
# Loads the virtio/9p/overlay modules (/modules.list, in the dependency
# order the host's modprobe derived), builds the guest root -- the host's /
# over 9p, read-only, under a tmpfs overlay -- with every mount the tests
# expect, the output share at its host path and the prepared module tree on
# /lib/modules/<kver>, then hands over to tools/vm/guest.sh.  All of this is
# done here with busybox, which runs from RAM: the same steps with the host's
# dynamically linked tools over 9p cost seconds under TCG.
#
# A failure powers off: the runner sees no status and prints this console.

/bin/busybox --install -s /bin
export PATH=/bin

die() {
	echo "metaroce-vm init: $*"
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# KVM probe: getting here is the proof.
case " $(cat /proc/cmdline) " in
*" mroce_probe "*)
	echo METAROCE-VM-PROBE-OK
	poweroff -f
	;;
esac

# shellcheck disable=SC2013 # one file name per line, no blanks
for m in $(cat /modules.list); do
	insmod "/lib/modules/$m" || die "insmod $m failed"
done

# cache=loose: the host root does not change under a run, and exec/stat get
# much faster.  The output share stays uncached: the host reads it after.
p9="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o "$p9,cache=loose,ro" mroce_root /mnt/host ||
	die "cannot mount the host root (9p tag mroce_root)"
mount -t tmpfs -o mode=0755 tmpfs /mnt/rw || die "tmpfs"
mkdir -p /mnt/rw/upper /mnt/rw/work
mount -t overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/upper,workdir=/mnt/rw/work \
	overlay /newroot || die "cannot mount the overlay root"
mount -t 9p -o "$p9" mroce_out /mnt/out ||
	die "cannot mount the output share (9p tag mroce_out)"

[ -r /mnt/out/.vm/boot.env ] || die "no .vm/boot.env in the output share"
set -a
. /mnt/out/.vm/boot.env
set +a

# The runner's two virtio-serial ports, by name (no udev here).
port() {
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && echo "/dev/${p##*/}" && return 0
	done
	return 1
}
i=0
while ! METAROCE_PORT_OUT=$(port mroce.out) || ! METAROCE_PORT_CTL=$(port mroce.ctl) ||
	[ ! -c "$METAROCE_PORT_OUT" ] || [ ! -c "$METAROCE_PORT_CTL" ]; do
	i=$((i + 1))
	[ $i -gt 200 ] && die "virtio ports mroce.out/mroce.ctl did not appear"
	sleep 0.05
done
export METAROCE_PORT_OUT METAROCE_PORT_CTL

hostname metaroce-vm
ip link set lo up
# Boot ran with "quiet"; from here on the console log gets everything but
# debug, so warnings land in console.log.
echo 7 >/proc/sys/kernel/printk

r=/newroot
# /tmp and /run are fresh tmpfs before the output share goes on top, so an
# output directory under /tmp stays visible.  A checkout (or its module
# tree, or the caller's directory) under the host's /tmp would be hidden by
# a fresh /tmp: then the guest keeps the overlay's /tmp, the host's read-only
# beneath and its own writes in the tmpfs above.
under_tmp=
for d in "$METAROCE_ROOT" "$METAROCE_MODTREE" "$METAROCE_CWD"; do
	case "$d/" in /tmp/*) under_tmp=1 ;; esac
done
[ -n "$under_tmp" ] || mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/tmp"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$r/run"
mkdir -p "$r$METAROCE_OUT"
mount --move /mnt/out "$r$METAROCE_OUT" || die "cannot move the output share"

# busybox switch_root does not carry these over.
mount --move /dev "$r/dev"
mount --move /proc "$r/proc"
mount --move /sys "$r/sys"
mkdir -p "$r/dev/pts" "$r/dev/shm"
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts "$r/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/dev/shm"
ln -sf /proc/self/fd "$r/dev/fd"
ln -sf /proc/self/fd/0 "$r/dev/stdin"
ln -sf /proc/self/fd/1 "$r/dev/stdout"
ln -sf /proc/self/fd/2 "$r/dev/stderr"
mount -t debugfs debugfs "$r/sys/kernel/debug"
mount -t configfs configfs "$r/sys/kernel/config"

# The stock tree plus metaroce.ko, depmod'ed on the host: modprobe and the
# kernel's request_module ("rdma link add ... type metaroce") use it.  The
# paths are canonical and Debian's /lib -> usr/lib is relative, so they
# resolve inside the new root.
[ -d "$r$METAROCE_MODTREE" ] ||
	die "the module tree $METAROCE_MODTREE is not visible in the guest (is a part of its path a mount the 9p share does not cross?)"
mkdir -p "$r/lib/modules/$METAROCE_KVER"
mount --bind "$r$METAROCE_MODTREE" "$r/lib/modules/$METAROCE_KVER" ||
	die "cannot mount the module tree $METAROCE_MODTREE"

# shellcheck disable=SC2093 # only reached if switch_root fails
exec switch_root "$r" /bin/sh "$METAROCE_ROOT/tools/vm/guest.sh"
die "switch_root failed"
