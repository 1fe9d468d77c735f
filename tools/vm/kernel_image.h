// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The kernel QEMU boots.  Debian ships an XZ-compressed bzImage; under TCG
// its real-mode setup and decompression cost about 4 s per boot.  The ELF
// vmlinux inside has a PVH entry note (CONFIG_PVH=y), which QEMU boots
// directly, so we unpack it once into .cache/vm and fall back to the
// bzImage when that is not possible.
#pragma once

#include "repo.h"

namespace mroce::vm {

fs::path ensure_boot_kernel(const RepoLayout &repo);

} // namespace mroce::vm
