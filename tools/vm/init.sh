#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /init of the metaroce-vm initramfs, run by busybox-static as PID 1.
# Loads the virtio/9p/overlay modules (/modules.list, dependency order from
# the host's modprobe), builds the guest root -- the host's / over 9p,
# read-only, under a tmpfs overlay -- mounts the writable output share at its
# host path and hands over to tools/vm/guest.sh in the repository.
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

r=/newroot
# /tmp and /run are fresh tmpfs before the output share goes on top, so an
# output directory under /tmp stays visible.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$r/tmp"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$r/run"
mkdir -p "$r$METAROCE_OUT"
mount --move /mnt/out "$r$METAROCE_OUT" || die "cannot move the output share"
# busybox switch_root does not carry these over.
mount --move /dev "$r/dev"
mount --move /proc "$r/proc"
mount --move /sys "$r/sys"

exec switch_root "$r" /bin/sh "$METAROCE_ROOT/tools/vm/guest.sh"
die "switch_root failed"
