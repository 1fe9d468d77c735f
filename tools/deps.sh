#!/bin/sh
# Install everything this project needs on Debian 12, from Debian's archive.
# Idempotent and quiet when all is present: it asks dpkg first and only calls
# apt-get for what is missing.
#
# The kernel ABI is pinned (MODVERSIONS=y: the module loads only on the exact
# ABI it was built against).  The headers are installed; the matching image is
# only downloaded and unpacked into .cache/ for the QEMU guest, because
# installing a kernel image on a build host runs bootloader/initramfs hooks
# for a kernel this host will never boot.
set -eu

KVER=${KVER:-6.1.0-57-amd64}
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${METAROCE_CACHE:-$top/.cache}

pkgs="linux-headers-$KVER qemu-system-x86 busybox-static kmod rdma-core
ibverbs-utils ibverbs-providers libibverbs-dev perftest rdmacm-utils
python3-pyverbs python3-pytest iproute2 iperf3 iputils-ping cmake make g++ gcc-12
googletest libgtest-dev libgmock-dev libbenchmark-dev clang
libclang-rt-14-dev python3-matplotlib linux-source-6.1 binutils xz-utils
valgrind linux-perf flex bison bc libelf-dev libssl-dev"

missing=""
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$s" = installed ] || missing="$missing $p"
done

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null || true
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The guest kernel: image package unpacked, module tree with modules.dep.
img="$cache/kernel/$KVER"
if [ ! -f "$img/boot/vmlinuz-$KVER" ] || [ ! -f "$img/lib/modules/$KVER/modules.dep" ]; then
	echo "deps: fetching linux-image-$KVER for the test VM"
	rm -rf "$img" && mkdir -p "$img" "$cache/deb"
	(cd "$cache/deb" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$KVER" >/dev/null)
	deb=$(ls "$cache/deb"/linux-image-"$KVER"_*.deb | head -n 1)
	dpkg-deb -x "$deb" "$img"
	depmod -b "$img" "$KVER"
fi
exit 0
