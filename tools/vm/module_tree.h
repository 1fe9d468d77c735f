// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The guest's /lib/modules/<kver>: the stock tree plus the freshly built
// metaroce.ko (and any --module), with a depmod run over both, so that
// `rdma link add … type metaroce` autoloads the module through its alias.
// Built on the host (depmod over 4000 modules on 9p under TCG is slow) in
// .cache/vm/modroot and bind-mounted by the guest.  The stock modules are
// reached through an absolute symlink; the extra ones are copied, so a
// rebuild while the VM runs cannot change what the guest loads.
#pragma once

#include "repo.h"

#include <vector>

namespace mroce::vm {

// Returns the directory the guest mounts on /lib/modules/<kver>.
fs::path ensure_module_tree(const RepoLayout &repo,
                            const std::vector<fs::path> &extra_modules);

} // namespace mroce::vm
