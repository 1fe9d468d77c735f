// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Exit codes of metaroce-vm.  Anything else is the guest command's own exit
// status.  The range 121..125 mirrors timeout(1) (124 timeout, 125 own
// failure); a guest command that itself exits with one of these values is
// told apart by the runner's last stderr line and $OUT/vm-result.
#pragma once

namespace mroce::vm {

enum ExitCode : int {
  kExitGuestHang = 121,   // heartbeat from the guest stopped (or never began)
  kExitKernelPanic = 122, // "Kernel panic - not syncing" on the console
  kExitNoStatus = 123,    // VM stopped without the guest reporting a status
  kExitTimeout = 124,     // hard --timeout reached, QEMU killed
  kExitRunnerError = 125, // bad usage, missing inputs, QEMU failed to run
  kExitInterrupted = 130, // SIGINT/SIGTERM/SIGHUP to the runner (128 + 2)
};

} // namespace mroce::vm
