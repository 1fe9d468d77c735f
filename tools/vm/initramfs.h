// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The initramfs: busybox-static as the shell, tools/vm/init.sh as /init and
// the virtio/9p/overlay modules in the order modprobe derives from the stock
// tree.  Cached under .cache/vm/ by a hash of every input, so it is rebuilt
// exactly when the init script, busybox or the kernel tree change.
#pragma once

#include "repo.h"

namespace mroce::vm {

// Returns the path of an up-to-date archive, building it if needed.
fs::path ensure_initramfs(const RepoLayout &repo);

} // namespace mroce::vm
