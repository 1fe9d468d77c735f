// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cpio.h"

#include <cstdio>
#include <sys/stat.h>

namespace mroce::vm {

void CpioWriter::pad4() {
  while (out_.size() % 4)
    out_ += '\0';
}

// newc header: "070701" then 13 fields of 8 hex digits, then the name with
// its NUL, padded to 4 bytes; then the data, padded to 4 bytes.
void CpioWriter::add_entry(std::string_view name, uint32_t mode,
                           std::string_view data, uint32_t rmajor,
                           uint32_t rminor) {
  const uint32_t fields[13] = {
      next_ino_++,
      mode,
      0, // uid
      0, // gid
      (mode & S_IFMT) == S_IFDIR ? 2u : 1u,
      0, // mtime: fixed, the archive must not change between builds
      static_cast<uint32_t>(data.size()),
      0,
      0, // dev major/minor
      rmajor,
      rminor,
      static_cast<uint32_t>(name.size() + 1),
      0, // checksum (unused by "070701")
  };
  out_ += "070701";
  for (uint32_t f : fields) {
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08X", f);
    out_.append(hex, 8);
  }
  out_ += name;
  out_ += '\0';
  pad4();
  out_ += data;
  pad4();
}

void CpioWriter::add_dir(std::string_view name, uint32_t mode) {
  add_entry(name, S_IFDIR | mode, {}, 0, 0);
}

void CpioWriter::add_file(std::string_view name, std::string_view data,
                          uint32_t mode) {
  add_entry(name, S_IFREG | mode, data, 0, 0);
}

void CpioWriter::add_symlink(std::string_view name, std::string_view target) {
  add_entry(name, S_IFLNK | 0777, target, 0, 0);
}

void CpioWriter::add_char_dev(std::string_view name, uint32_t major,
                              uint32_t minor, uint32_t mode) {
  add_entry(name, S_IFCHR | mode, {}, major, minor);
}

std::string CpioWriter::finish() {
  add_entry("TRAILER!!!", 0, {}, 0, 0);
  // The kernel reads the archive in 512-byte blocks; pad like cpio does.
  while (out_.size() % 512)
    out_ += '\0';
  return std::move(out_);
}

} // namespace mroce::vm
