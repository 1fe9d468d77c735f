// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Where things are: the repository root (found from the binary's location or
// the working directory, so any checkout path works), the cache and the
// guest kernel it holds.
#pragma once

#include <filesystem>
#include <string>

namespace mroce::vm {

namespace fs = std::filesystem;

struct RepoLayout {
  fs::path root;  // canonical repository root
  fs::path cache; // $METAROCE_CACHE or <root>/.cache
  std::string kver;
  fs::path kernel_tree() const { return cache / "kernel" / kver; }
  fs::path vmlinuz() const {
    return kernel_tree() / "boot" / ("vmlinuz-" + kver);
  }
  fs::path stock_modules() const {
    return kernel_tree() / "lib" / "modules" / kver;
  }
  fs::path vm_cache() const { return cache / "vm"; }
  fs::path init_script() const { return root / "tools/vm/init.sh"; }
  fs::path guest_script() const { return root / "tools/vm/guest.sh"; }
};

// Throws Error with a hint (run `make deps`) when the tree is incomplete.
RepoLayout find_repo();

} // namespace mroce::vm
