// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Command line of metaroce-vm.
#pragma once

#include <string>
#include <vector>

namespace mroce::vm {

struct Options {
  double timeout_s = 1800; // hard limit for the whole boot
  double hang_s = 180;     // heartbeat silence counted as a hang
  long mem_mib = 4096;
  int smp = 2;
  std::string out;      // output directory; default results/vm/<timestamp>
  bool keep = false;    // interactive shell after the command
  bool bzimage = false; // boot the bzImage, not the vmlinux unpacked from it
  std::string accel = "auto";
  std::vector<std::string> modules;     // extra .ko files for the guest
  std::vector<std::string> kernel_args; // appended to the kernel cmdline
  std::vector<std::string> plugins;     // QEMU -plugin arguments (TCG)
  std::vector<std::string> command;     // empty only with --keep
  bool help = false;
};

// Throws Error on bad usage.
Options parse_options(int argc, char **argv);
const char *usage_text();

} // namespace mroce::vm
