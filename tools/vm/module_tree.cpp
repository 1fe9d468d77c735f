// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "module_tree.h"

#include "process.h"
#include "util.h"

#include <system_error>

namespace mroce::vm {

namespace {

// depmod reads these; it writes every other modules.* file itself.
constexpr const char *kStockIndexFiles[] = {
    "modules.builtin", "modules.builtin.modinfo", "modules.order"};

void warn_on_vermagic(const fs::path &ko, const std::string &kver) {
  CommandResult r = run_command({"modinfo", "-F", "vermagic", ko.string()});
  if (r.status != 0) {
    note("warning: modinfo cannot read " + ko.string());
    return;
  }
  std::string magic = r.out.substr(0, r.out.find(' '));
  if (magic != kver)
    note("warning: " + ko.filename().string() + " was built for '" + magic +
         "', the guest runs " + kver + ": it will not load");
}

} // namespace

fs::path ensure_module_tree(const RepoLayout &repo,
                            const std::vector<fs::path> &extra_modules) {
  fs::path base = repo.vm_cache() / "modroot";
  fs::path tree = base / "lib" / "modules" / repo.kver;

  Hasher h;
  h.add(repo.kver);
  h.add_stat(repo.stock_modules() / "modules.dep");
  for (const auto &ko : extra_modules) {
    h.add(ko.filename().string());
    h.add_file(ko);
  }
  std::string key = h.hex();
  std::string old;
  std::error_code ec;
  if (try_read_file(base / "stamp", old) && old == key &&
      fs::is_regular_file(tree / "modules.dep", ec))
    return tree;

  fs::remove_all(base, ec);
  fs::create_directories(tree / "extra");
  fs::create_symlink(repo.stock_modules() / "kernel", tree / "kernel");
  for (const char *f : kStockIndexFiles)
    fs::copy_file(repo.stock_modules() / f, tree / f);
  for (const auto &ko : extra_modules) {
    warn_on_vermagic(ko, repo.kver);
    fs::copy_file(ko, tree / "extra" / ko.filename(),
                  fs::copy_options::overwrite_existing);
  }
  CommandResult r = run_command({"depmod", "-b", base.string(), repo.kver});
  if (r.status != 0)
    throw Error("depmod failed: " + r.err);
  write_file_atomic(base / "stamp", key);
  return tree;
}

} // namespace mroce::vm
