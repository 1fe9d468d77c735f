# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers for tests run in the metaroce-vm guest (sourced, POSIX sh or bash):
#
#   . "$METAROCE_ROOT/selftests/vm/lib.sh"     (or relative to "$0")
#
# kselftest results   ksft_pass/ksft_fail/ksft_skip/ksft_xfail MSG (exit),
#                     ksft_require_root, ksft_require_cmd CMD..,
#                     ksft_require_module MOD.., ksft_check DESC CMD..,
#                     ksft_exit (0 unless a ksft_check failed)
# cleanup             mroce_defer CMD.. (run at exit, last in first out),
#                     mroce_cleanup (runs them now; the EXIT trap calls it)
# namespaces, veth    mroce_netns_add VAR, mroce_veth_add VAR_A VAR_B [NS_A
#                     [NS_B]], mroce_ns NS CMD.. -- unique names, removed at
#                     exit
# waiting             mroce_wait_for SECONDS CMD..
# RDMA                mroce_use_provider, mroce_gid_index DEV ADDR,
#                     mroce_addr_gid ADDR
#
# The library installs an EXIT trap (and INT/TERM traps that exit) to run the
# deferred cleanups: register cleanups with mroce_defer rather than setting
# your own EXIT trap, or call mroce_cleanup from yours.

# shellcheck disable=SC2034 # for the tests that source this
KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
KSFT_XPASS=3
KSFT_SKIP=4

if [ -z "${METAROCE_ROOT:-}" ]; then
	# Run by hand: find the checkout from the test's own path.
	METAROCE_ROOT=$(cd "$(dirname "$0")" && while [ ! -f Kbuild ] &&
		[ "$PWD" != / ]; do cd ..; done && pwd)
fi
export METAROCE_ROOT
: "${METAROCE_OUT:=${TMPDIR:-/tmp}}"
export METAROCE_OUT

mroce_log() {
	echo "# $*"
}

# ---- kselftest results -------------------------------------------------

ksft_pass() {
	echo "PASS: ${*:-$(basename "$0")}"
	exit "$KSFT_PASS"
}

ksft_fail() {
	echo "FAIL: $*"
	exit "$KSFT_FAIL"
}

# A skip says the test could not run here.  The test VM always has every
# tool, module and binary the tests need (tools/vm builds and boots it so),
# so inside it no skip reason can hold: there a skip fails, loudly, and a
# missing capability is a broken VM or build, not a test to pass over.
ksft_skip() {
	if [ "${METAROCE_VM:-}" = 1 ]; then
		echo "FAIL: would skip, which cannot happen in the test VM: $*"
		exit "$KSFT_FAIL"
	fi
	echo "SKIP: $*"
	exit "$KSFT_SKIP"
}

ksft_xfail() {
	echo "XFAIL: $*"
	exit "$KSFT_XFAIL"
}

ksft_require_root() {
	[ "$(id -u)" = 0 ] || ksft_skip "needs root"
}

ksft_require_cmd() {
	for _c in "$@"; do
		command -v "$_c" >/dev/null 2>&1 || ksft_skip "$_c not installed"
	done
}

# Load kernel modules; a module the kernel does not have is a skip.
ksft_require_module() {
	for _m in "$@"; do
		modprobe "$_m" 2>/dev/null || ksft_skip "kernel module $_m not available"
	done
}

_ksft_failed=0

# ksft_check DESC CMD..: run CMD, report it; a failure is remembered for
# ksft_exit and the command's output shown.
ksft_check() {
	_desc=$1
	shift
	if _out=$("$@" 2>&1); then
		echo "ok: $_desc"
	else
		echo "FAIL: $_desc"
		[ -n "$_out" ] && printf '%s\n' "$_out" | sed 's/^/    /'
		_ksft_failed=$((_ksft_failed + 1))
	fi
}

ksft_exit() {
	if [ "$_ksft_failed" -eq 0 ]; then
		exit "$KSFT_PASS"
	fi
	echo "$_ksft_failed check(s) failed"
	exit "$KSFT_FAIL"
}

# ---- cleanup -----------------------------------------------------------

_mroce_ndefer=0

# mroce_defer CMD..: run CMD (as one shell command line) at exit.
mroce_defer() {
	_mroce_ndefer=$((_mroce_ndefer + 1))
	eval "_mroce_defer_$_mroce_ndefer=\$*"
}

mroce_cleanup() {
	while [ "$_mroce_ndefer" -gt 0 ]; do
		_cmd=
		eval "_cmd=\$_mroce_defer_$_mroce_ndefer"
		_mroce_ndefer=$((_mroce_ndefer - 1))
		eval "$_cmd" >/dev/null 2>&1
	done
	return 0
}

trap 'mroce_cleanup' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- namespaces and veth -----------------------------------------------

_mroce_uniq=0

# mroce_netns_add VAR: a new netns with loopback up, named into VAR.
mroce_netns_add() {
	_mroce_uniq=$((_mroce_uniq + 1))
	_ns="mroce-$$-$_mroce_uniq"
	ip netns add "$_ns" || return 1
	mroce_defer ip netns del "$_ns"
	ip -n "$_ns" link set lo up || return 1
	eval "$1=\$_ns"
}

# mroce_veth_add VAR_A VAR_B [NS_A [NS_B]]: a veth pair (unique names, up,
# IPv6 DAD off), each end moved to its netns if given, removed at exit.
mroce_veth_add() {
	_mroce_uniq=$((_mroce_uniq + 1))
	# IFNAMSIZ: at most 15 characters.
	_a=$(printf 'mv%s%sa' "$$" "$_mroce_uniq" | tail -c 15)
	_b=$(printf 'mv%s%sb' "$$" "$_mroce_uniq" | tail -c 15)
	ip link add "$_a" type veth peer name "$_b" || return 1
	mroce_defer "ip link del $_a 2>/dev/null || ip -n '${3:-}' link del $_a"
	[ -n "${3:-}" ] && { ip link set "$_a" netns "$3" || return 1; }
	[ -n "${4:-}" ] && { ip link set "$_b" netns "$4" || return 1; }
	mroce_ns "${3:-}" sysctl -qw "net.ipv6.conf.$_a.accept_dad=0"
	mroce_ns "${4:-}" sysctl -qw "net.ipv6.conf.$_b.accept_dad=0"
	mroce_ns "${3:-}" ip link set "$_a" up || return 1
	mroce_ns "${4:-}" ip link set "$_b" up || return 1
	eval "$1=\$_a; $2=\$_b"
}

# mroce_ns NS CMD..: CMD in netns NS, or here if NS is empty.
mroce_ns() {
	_n=$1
	shift
	if [ -n "$_n" ]; then
		ip netns exec "$_n" "$@"
	else
		"$@"
	fi
}

# ---- waiting -----------------------------------------------------------

# mroce_wait_for SECONDS CMD..: poll CMD every 0.1 s until it succeeds;
# returns 1 if it still fails after SECONDS.
mroce_wait_for() {
	_tries=$(($1 * 10))
	shift
	until "$@" >/dev/null 2>&1; do
		_tries=$((_tries - 1))
		[ "$_tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

# ---- RDMA --------------------------------------------------------------

# Use the provider built in the checkout, uninstalled.  Returns 1 when it has
# not been built (the caller decides: skip or fail).
mroce_use_provider() {
	RDMAV_DRIVERS="$METAROCE_ROOT/rdma-core-provider/libmetaroce"
	export RDMAV_DRIVERS
	[ -f "$RDMAV_DRIVERS-rdmav34.so" ]
}

# mroce_gid_index DEV ADDR [PORT]: index of DEV's RoCE v2 GID for ADDR, IPv4
# (the IPv4-mapped GID) or IPv6 (the address itself); the value for perftest
# -x.  Returns 1 if there is none (yet).
mroce_gid_index() {
	_gid=$(mroce_addr_gid "$2")
	_p=/sys/class/infiniband/$1/ports/${3:-1}
	# read, not cat: a scan of the whole table (the GID is not there
	# yet) is then no 128 processes, which a loaded TCG guest took
	# seconds to start
	for _f in "$_p"/gids/*; do
		_i=${_f##*/}
		_g=
		read -r _g <"$_f" 2>/dev/null
		[ "$_g" = "$_gid" ] || continue
		_t=
		read -r _t <"$_p/gid_attrs/types/$_i" 2>/dev/null
		[ "$_t" = "RoCE v2" ] || continue
		echo "$_i"
		return 0
	done
	return 1
}

# mroce_addr_gid ADDR: the GID of an IPv4 or IPv6 address as sysfs prints
# it (eight groups of four lower-case hex digits; IPv4 as ::ffff:a.b.c.d).
mroce_addr_gid() {
	case $1 in
	*:*)
		echo "$1" | awk '{
			n = split(tolower($0), h, "::")
			nl = h[1] == "" ? 0 : split(h[1], l, ":")
			nr = n < 2 || h[2] == "" ? 0 : split(h[2], r, ":")
			for (i = 1; i <= nl; i++)
				g[i] = l[i]
			for (; i <= 8 - nr; i++)
				g[i] = "0"
			for (j = 1; j <= nr; j++)
				g[i++] = r[j]
			for (i = 1; i <= 8; i++)
				printf "%s%s", substr("0000" g[i], length(g[i]) + 1),
					i < 8 ? ":" : "\n"
		}'
		;;
	*)
		echo "$1" | awk -F. '{
			printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n",
				$1, $2, $3, $4 }'
		;;
	esac
}
