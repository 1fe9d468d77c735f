// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Child processes: short helper commands whose output we parse (modprobe,
// depmod, modinfo) and the long-running QEMU process.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace mroce::vm {

struct CommandResult {
  int status = -1; // exit status, or 128 + signal
  std::string out; // stdout
  std::string err; // stderr
};

// Run argv[0] (looked up in PATH) to completion, stdin from /dev/null.
CommandResult run_command(const std::vector<std::string> &argv);

struct Child {
  pid_t pid = -1;
  int stderr_fd = -1; // read end of the child's stderr
};

// Start argv in its own process group, stdin/stdout on /dev/null, stderr on a
// pipe.  The child dies with the runner (PR_SET_PDEATHSIG), so a killed
// runner never leaves a VM behind.  keep_fd is left open across exec (the VM
// lock: QEMU itself holds it while it lives).
Child spawn_child(const std::vector<std::string> &argv, int keep_fd);

// Decode a waitpid() status into an exit code (128 + signal when killed).
int decode_wait_status(int wstatus);

} // namespace mroce::vm
