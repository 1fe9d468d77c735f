// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The QEMU command line.  The guest gets: the host root read-only over 9p
// (tag mroce_root), the output directory writable over 9p (tag mroce_out),
// the kernel console on ttyS0, and two virtio-serial ports: mroce.out (the
// command's stdout/stderr) and mroce.ctl (heartbeats).  All three character
// devices connect to unix sockets the runner listens on.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mroce::vm {

namespace fs = std::filesystem;

enum class Accel { kTcg, kKvm };

const char *accel_name(Accel a);

struct QemuSpec {
  Accel accel = Accel::kTcg;
  long mem_mib = 4096;
  int smp = 2;
  fs::path kernel;
  fs::path initrd;
  std::string append; // kernel command line
  fs::path out_dir;   // shared writable as mroce_out
  fs::path console_sock;
  fs::path output_sock;
  fs::path control_sock;
  fs::path qmp_sock; // QEMU listens here (for sysrq dumps); empty: none
  std::vector<std::string> plugins; // -plugin arguments (TCG only)
};

std::vector<std::string> qemu_argv(const QemuSpec &spec);

// The kernel command line every boot uses; extra parameters are appended.
std::string base_kernel_cmdline();

} // namespace mroce::vm
