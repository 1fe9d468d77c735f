// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "initramfs.h"

#include "cpio.h"
#include "process.h"
#include "util.h"

#include <elf.h>
#include <set>
#include <system_error>

namespace mroce::vm {

namespace {

// What /init needs before the real root exists: PCI transport, 9p, overlay,
// and the virtio console ports and RNG the runner talks through.
constexpr const char *kBootModules[] = {
    "virtio_pci",     "9pnet_virtio", "9p",       "overlay",
    "virtio_console", "virtio_rng",   "configfs",
};

constexpr const char *kBusybox = "/bin/busybox";

// Bump when the archive layout changes in a way the inputs do not show.
constexpr const char *kFormat = "metaroce-initramfs-3";

// The module files to insmod, in dependency order, deduplicated.
std::vector<fs::path> boot_module_files(const RepoLayout &repo) {
  std::vector<fs::path> files;
  std::set<std::string> seen;
  for (const char *mod : kBootModules) {
    CommandResult r =
        run_command({"modprobe", "-d", repo.kernel_tree().string(), "-S",
                     repo.kver, "--show-depends", mod});
    if (r.status != 0)
      throw Error(std::string("modprobe --show-depends ") + mod +
                  " failed: " + r.err);
    for (const auto &line : split_lines(r.out)) {
      // "insmod <path> [params]"; "builtin <name>" needs nothing.
      if (!starts_with(line, "insmod "))
        continue;
      std::string path = line.substr(7);
      path = path.substr(0, path.find(' '));
      if (seen.insert(path).second)
        files.emplace_back(path);
    }
  }
  return files;
}

// /init runs before any library is reachable: busybox must be static.
void check_static(const fs::path &bin) {
  std::string elf = read_file(bin);
  if (elf.size() < sizeof(Elf64_Ehdr) || elf.compare(0, 4, ELFMAG) != 0)
    throw Error(bin.string() + " is not an ELF binary");
  Elf64_Ehdr eh;
  elf.copy(reinterpret_cast<char *>(&eh), sizeof(eh));
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    size_t off = eh.e_phoff + size_t(i) * eh.e_phentsize;
    if (off + sizeof(Elf64_Phdr) > elf.size())
      break;
    Elf64_Phdr ph;
    elf.copy(reinterpret_cast<char *>(&ph), sizeof(ph), off);
    if (ph.p_type == PT_INTERP)
      throw Error(bin.string() +
                  " is dynamically linked: install busybox-static");
  }
}

std::string build_archive(const RepoLayout &repo,
                          const std::vector<fs::path> &modules) {
  CpioWriter w;
  for (const char *d : {"bin", "dev", "proc", "sys", "mnt", "mnt/host",
                        "mnt/rw", "mnt/out", "newroot", "lib", "lib/modules"})
    w.add_dir(d);
  // The kernel opens /dev/console for /init's stdio before devtmpfs exists.
  w.add_char_dev("dev/console", 5, 1);
  w.add_file("bin/busybox", read_file(kBusybox), 0755);
  w.add_symlink("bin/sh", "busybox");
  w.add_file("init", read_file(repo.init_script()), 0755);

  std::string order;
  for (const auto &m : modules) {
    w.add_file("lib/modules/" + m.filename().string(), read_file(m));
    order += m.filename().string() + "\n";
  }
  w.add_file("modules.list", order);
  return w.finish();
}

} // namespace

fs::path ensure_initramfs(const RepoLayout &repo) {
  check_static(kBusybox);
  std::vector<fs::path> modules = boot_module_files(repo);

  Hasher h;
  h.add(kFormat);
  h.add(repo.kver);
  h.add_file(repo.init_script());
  h.add_stat(kBusybox);
  for (const auto &m : modules)
    h.add_stat(m);

  fs::path dir = repo.vm_cache();
  fs::create_directories(dir);
  fs::path archive = dir / ("initramfs-" + h.hex() + ".cpio");
  std::error_code ec;
  if (fs::is_regular_file(archive, ec))
    return archive;

  note("building initramfs " + archive.filename().string() + " (" +
       std::to_string(modules.size()) + " modules)");
  write_file_atomic(archive, build_archive(repo, modules));
  // Drop stale archives; we hold the VM lock, so no other run is using one.
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string n = e.path().filename().string();
    if (starts_with(n, "initramfs-") && e.path() != archive)
      fs::remove(e.path(), ec);
  }
  return archive;
}

} // namespace mroce::vm
