# MetaRoCE top-level build.  Drives three builds:
#   - metaroce.ko with Kbuild against the pinned kernel headers (never uname -r)
#   - libmetaroce-rdmav34.so, the rdma-core provider (plain C, rdma-core-provider/)
#   - the C++20 userspace (unit tests, fuzzers, benchmarks, simulator, tools) with CMake
#
#   make            build everything
#   make deps       install what the project needs (apt), idempotent
#   make demo       boot the test VM: ib_write_bw over metaroce across a lossy multipath link
#   make check      every test: host unit tests, sanitizers, fuzzers, then one VM boot
#   make check-debug  the VM tests on a KASAN/KFENCE/lockdep build of the kernel
#   make bench      benchmarks (tools/bench)
#   make install    module, provider and /etc/libibverbs.d/metaroce.driver

KVER    ?= 6.1.0-57-amd64
KDIR    ?= /usr/src/linux-headers-$(KVER)
BUILD   ?= $(CURDIR)/build
JOBS    ?= $(shell nproc)
DESTDIR ?=
export KVER

.PHONY: all deps module provider user check check-host check-vm check-debug demo bench install clean checkpatch

all: module provider user

deps:
	@tools/deps.sh

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

provider:
	$(MAKE) -C rdma-core-provider

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

user: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: deps
	@tools/check.sh

check-host: deps
	@tools/check.sh --host-only

check-vm: deps
	@tools/check.sh --vm-only

# DEBUG_TESTS="selftests/verbs/x.sh ..." runs only those.
check-debug: deps provider $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target metaroce-vm mroce-inject
	@tools/debug-kernel/check.sh $(DEBUG_TESTS)

demo: deps all
	@tools/demo.sh

bench: deps all
	@tools/bench/run.sh

checkpatch:
	@tools/checkpatch.sh

install: module provider
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) modules_install
	$(MAKE) -C rdma-core-provider install DESTDIR=$(DESTDIR)
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C rdma-core-provider clean
	rm -rf $(BUILD) $(BUILD)-asan
