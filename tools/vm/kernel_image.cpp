// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kernel_image.h"

#include "process.h"
#include "util.h"

#include <elf.h>
#include <system_error>

namespace mroce::vm {

namespace {

constexpr char kXzMagic[] = "\xfd"
                            "7zXZ";             // + NUL: 6 bytes
constexpr uint32_t kXenElfnotePhys32Entry = 18; // the PVH entry point

template <typename T> bool read_at(const std::string &f, size_t off, T &out) {
  if (off > f.size() || f.size() - off < sizeof(T))
    return false;
  f.copy(reinterpret_cast<char *>(&out), sizeof(T), off);
  return true;
}

// Does this ELF carry a "Xen" note of type PHYS32_ENTRY?  QEMU needs it to
// boot an ELF kernel as PVH.
bool has_pvh_note(const std::string &elf) {
  Elf64_Ehdr eh;
  if (!read_at(elf, 0, eh) || elf.compare(0, 4, ELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    if (!read_at(elf, eh.e_phoff + size_t(i) * eh.e_phentsize, ph))
      return false;
    if (ph.p_type != PT_NOTE)
      continue;
    size_t off = ph.p_offset, end = ph.p_offset + ph.p_filesz;
    while (off + sizeof(Elf64_Nhdr) <= end) {
      Elf64_Nhdr nh;
      if (!read_at(elf, off, nh))
        return false;
      size_t name = off + sizeof(nh);
      size_t desc = name + ((nh.n_namesz + 3) & ~3u);
      if (nh.n_namesz == 4 &&
          elf.compare(name, 4, std::string("Xen\0", 4)) == 0 &&
          nh.n_type == kXenElfnotePhys32Entry)
        return true;
      off = desc + ((nh.n_descsz + 3) & ~3u);
    }
  }
  return false;
}

bool extract_vmlinux(const fs::path &bzimage, const fs::path &dest,
                     std::string &why) {
  std::string img = read_file(bzimage);
  size_t at = img.find(std::string(kXzMagic, 6));
  if (at == std::string::npos) {
    why = "no XZ payload in " + bzimage.filename().string();
    return false;
  }
  fs::path tmp = dest;
  tmp += ".tmp";
  CommandResult r = run_command(
      {"sh", "-c", "tail -c +$1 \"$2\" | xz -dcq --single-stream > \"$3\"",
       "sh", std::to_string(at + 1), bzimage.string(), tmp.string()});
  std::string elf;
  if (r.status != 0 || !try_read_file(tmp, elf)) {
    why = "xz failed: " + r.err;
  } else if (!has_pvh_note(elf)) {
    why = "the unpacked vmlinux has no PVH entry note";
  } else {
    fs::rename(tmp, dest);
    return true;
  }
  std::error_code ec;
  fs::remove(tmp, ec);
  return false;
}

} // namespace

fs::path ensure_boot_kernel(const RepoLayout &repo) {
  fs::path dir = repo.vm_cache();
  fs::create_directories(dir);
  fs::path vmlinux = dir / ("vmlinux-" + repo.kver);
  fs::path stamp = dir / ("vmlinux-" + repo.kver + ".stamp");
  Hasher h;
  h.add_stat(repo.vmlinuz());
  std::string key = h.hex(), old;
  std::error_code ec;
  if (try_read_file(stamp, old)) {
    if (old == key + " ok\n" && fs::is_regular_file(vmlinux, ec))
      return vmlinux;
    if (old == key + " bzimage\n")
      return repo.vmlinuz();
  }
  std::string why;
  bool ok = extract_vmlinux(repo.vmlinuz(), vmlinux, why);
  if (!ok)
    note("booting the bzImage (slower under TCG): " + why);
  write_file_atomic(stamp, key + (ok ? " ok\n" : " bzimage\n"));
  return ok ? vmlinux : repo.vmlinuz();
}

} // namespace mroce::vm
