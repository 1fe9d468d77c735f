// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "repo.h"

#include "util.h"

#include <cstdlib>
#include <system_error>

namespace mroce::vm {

namespace {

bool is_repo_root(const fs::path &dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "Kbuild", ec) &&
         fs::is_regular_file(dir / "tools/vm/init.sh", ec);
}

fs::path search_up(fs::path dir) {
  std::error_code ec;
  dir = fs::weakly_canonical(dir, ec);
  if (ec)
    return {};
  for (;;) {
    if (is_repo_root(dir))
      return dir;
    if (dir == dir.root_path() || !dir.has_parent_path())
      return {};
    dir = dir.parent_path();
  }
}

} // namespace

RepoLayout find_repo() {
  RepoLayout r;
  std::error_code ec;
  if (const char *env = std::getenv("METAROCE_ROOT"); env && *env) {
    if (!is_repo_root(env))
      throw Error(std::string("METAROCE_ROOT=") + env +
                  " is not a MetaRoCE checkout");
    r.root = fs::canonical(env);
  }
  // The binary usually lives in <root>/build/tools/vm; a build directory
  // elsewhere falls back to the working directory.
  if (r.root.empty())
    r.root = search_up(fs::read_symlink("/proc/self/exe", ec).parent_path());
  if (r.root.empty())
    r.root = search_up(fs::current_path(ec));
  if (r.root.empty())
    throw Error("cannot find the MetaRoCE checkout (from the binary's location "
                "or the working directory); set METAROCE_ROOT");

  const char *cache = std::getenv("METAROCE_CACHE");
  r.cache = cache && *cache ? fs::path(cache) : r.root / ".cache";
  r.cache = fs::weakly_canonical(r.cache, ec);
  const char *kver = std::getenv("KVER");
  r.kver = kver && *kver ? kver : "6.1.0-57-amd64";

  if (!fs::is_regular_file(r.vmlinuz(), ec) ||
      !fs::is_regular_file(r.stock_modules() / "modules.dep", ec))
    throw Error("guest kernel missing under " + r.kernel_tree().string() +
                ": run `make deps`");
  return r;
}

} // namespace mroce::vm
