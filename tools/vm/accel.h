// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// TCG or KVM.  /dev/kvm can exist and still be unusable (nested setups where
// QEMU aborts on an MSR, or where the guest never gets past the firmware),
// so "usable" means: the device answers, and a probe boot of the real
// kernel with -accel kvm -cpu host reaches /init within a few seconds.  The
// verdict is cached per host boot in .cache/vm/kvm-probe.
#pragma once

#include "qemu.h"
#include "repo.h"

#include <string>

namespace mroce::vm {

struct AccelChoice {
  Accel accel = Accel::kTcg;
  std::string why; // one line for the user
};

// mode: "auto", "kvm" (fail if unusable) or "tcg".
AccelChoice choose_accel(const std::string &mode, const RepoLayout &repo,
                         const fs::path &kernel, const fs::path &initrd,
                         const fs::path &scratch, int lock_fd);

} // namespace mroce::vm
