// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A writer for the "newc" cpio format the kernel unpacks as initramfs.  Built
// in memory so the archive is byte-for-byte reproducible (fixed owners and
// times) and needs no cpio tool on the host.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mroce::vm {

class CpioWriter {
public:
  void add_dir(std::string_view name, uint32_t mode = 0755);
  void add_file(std::string_view name, std::string_view data,
                uint32_t mode = 0644);
  void add_symlink(std::string_view name, std::string_view target);
  void add_char_dev(std::string_view name, uint32_t major, uint32_t minor,
                    uint32_t mode = 0600);
  // Append the trailer and return the archive.
  std::string finish();

private:
  void add_entry(std::string_view name, uint32_t mode, std::string_view data,
                 uint32_t rmajor, uint32_t rminor);
  void pad4();

  std::string out_;
  uint32_t next_ino_ = 1;
};

} // namespace mroce::vm
