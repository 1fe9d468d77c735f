#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the debug kernel of `make check-debug`: Debian's 6.1 source
# (linux-source-6.1) with the debug options of debug.config (KASAN, KFENCE,
# lockdep) merged over one of two bases, DEBUG_KERNEL_BASE:
#
#   vm      (default) x86_64_defconfig trimmed to what the test VM has and
#           uses (vm.config)
#   debian  Debian's config trimmed by localmodconfig to the modules the
#           test VM loads (modules.list): closer to the stock kernel, a
#           third more to compile
#
# Everything goes to a cache outside the repository, laid out the way the VM
# runner reads a guest kernel:
#
#   $DKC/src/linux-source-6.1/         the extracted source
#   $DKC/obj/                          the kernel build (O=)
#   $DKC/kernel/<release>/boot/vmlinuz-<release>
#   $DKC/kernel/<release>/lib/modules/<release>/
#   $DKC/release                       <release>, once the build is complete
#   $DKC/build.time                    how long make took
#
# DKC is $METAROCE_DEBUG_KERNEL_CACHE, by default
# ${XDG_CACHE_HOME:-~/.cache}/metaroce/debug-kernel.  A second run with the
# same source, base and fragments does nothing; a changed fragment rebuilds
# incrementally.  build.sh --print-release prints <release> of a complete
# build (exit 1 without one).  JOBS (default 2) sets make -j; the build runs
# under nice -n 19.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
SRC_TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
BASE_CONFIG=${BASE_CONFIG:-/usr/src/linux-headers-6.1.0-57-amd64/.config}
DKC=${METAROCE_DEBUG_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metaroce/debug-kernel}
JOBS=${JOBS:-2}
BASE=${DEBUG_KERNEL_BASE:-vm}
FRAGMENT=$HERE/debug.config
MODLIST=$HERE/modules.list
case $BASE in
vm | debian) ;;
*) echo "DEBUG_KERNEL_BASE=$BASE: vm or debian" >&2; exit 2 ;;
esac

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# What the build is made of: a different source, base config, fragment or
# module list means a different kernel.
build_key() {
	{
		echo "$BASE"
		stat -c '%n %s %Y' "$SRC_TAR" "$BASE_CONFIG"
		cat "$FRAGMENT" "$MODLIST" "$HERE/vm.config"
	} | sha256sum | cut -d' ' -f1
}

if [ "${1:-}" = --print-release ]; then
	[ -s "$DKC/release" ] && [ "$(cat "$DKC/key" 2>/dev/null)" = "$(build_key)" ] ||
		exit 1
	cat "$DKC/release"
	exit 0
fi

[ -r "$SRC_TAR" ] || die "$SRC_TAR missing: apt-get install linux-source-6.1"
[ -r "$BASE_CONFIG" ] || die "$BASE_CONFIG missing: make deps"
for t in flex bison bc; do
	command -v $t >/dev/null || die "$t missing: make deps"
done
[ -e /usr/include/libelf.h ] || die "libelf-dev missing: make deps"

key=$(build_key)
if [ -s "$DKC/release" ] && [ "$(cat "$DKC/key" 2>/dev/null)" = "$key" ]; then
	log "up to date: $(cat "$DKC/release") in $DKC"
	exit 0
fi
rm -f "$DKC/release" "$DKC/key"
mkdir -p "$DKC/src" "$DKC/obj"

ksrc=$DKC/src/linux-source-6.1
if [ ! -e "$ksrc/.extracted" ]; then
	log "extracting $SRC_TAR"
	rm -rf "$ksrc"
	tar -C "$DKC/src" -xf "$SRC_TAR"
	touch "$ksrc/.extracted"
fi

obj=$DKC/obj
kmake() {
	# LOCALVERSION= set (empty) keeps setlocalversion from appending "+"
	nice -n 19 make -C "$ksrc" O="$obj" LOCALVERSION= "$@"
}

log "configuring: $BASE base + debug.config"
if [ "$BASE" = debian ]; then
	cp "$BASE_CONFIG" "$obj/.config"
	# Debian's config names its own certificate files; localmodconfig runs
	# oldconfig, so drop them before.
	sed -i -e 's/^CONFIG_SYSTEM_TRUSTED_KEYS=.*/CONFIG_SYSTEM_TRUSTED_KEYS=""/' \
		-e 's/^CONFIG_SYSTEM_REVOCATION_KEYS=.*/CONFIG_SYSTEM_REVOCATION_KEYS=""/' \
		"$obj/.config"
	# localmodconfig asks about new symbols: the default answers them all
	{ yes '' || true; } | kmake -s LSMOD="$MODLIST" localmodconfig >/dev/null
	fragments=("$FRAGMENT")
else
	kmake -s x86_64_defconfig >/dev/null
	fragments=("$HERE/vm.config" "$FRAGMENT")
fi
(cd "$obj" && "$ksrc/scripts/kconfig/merge_config.sh" -m .config "${fragments[@]}" >/dev/null)
kmake -s olddefconfig
# Every line of the fragments must have survived olddefconfig's dependency
# resolution, or the kernel is not the one this script promises.
bad=0
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF -- "$line" "$obj/.config" || { log "$(basename "$f"): not set: $line"; bad=1; } ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			! grep -q "^$sym=" "$obj/.config" || { log "$(basename "$f"): still set: $sym"; bad=1; } ;;
		esac
	done <"$f"
done
[ $bad = 0 ] || die "the fragments do not apply to this source"

log "building with -j$JOBS (nice 19)"
start=$(date +%s)
TIMEFORMAT='%R s wall, %U s user, %S s sys'
{ time kmake -j"$JOBS" bzImage modules >"$DKC/build.log" 2>&1; } 2>"$DKC/build.time" ||
	die "build failed: see $DKC/build.log"
release=$(cat "$obj/include/config/kernel.release")
log "built $release in $(cat "$DKC/build.time")"

dest=$DKC/kernel/$release
rm -rf "$dest"
mkdir -p "$dest/boot"
kmake -s INSTALL_MOD_PATH="$dest" INSTALL_MOD_STRIP=1 modules_install >/dev/null
# The object tree stays: check-debug builds metaroce.ko against it.
cp "$obj/arch/x86/boot/bzImage" "$dest/boot/vmlinuz-$release"
cp "$obj/System.map" "$dest/boot/System.map-$release"
cp "$obj/.config" "$dest/boot/config-$release"
echo "$(($(date +%s) - start))" >"$DKC/build.seconds"
echo "$key" >"$DKC/key"
echo "$release" >"$DKC/release"
log "installed $release in $dest"
