// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The machine-wide VM lock.  Two QEMU guests on a 2-core host make each other
// time out, so every VM (including the KVM probe) runs under one flock on
// /tmp/metaroce-vm.lock (or $METAROCE_VM_LOCK), shared by all checkouts.
#pragma once

#include "unique_fd.h"

#include <csignal>
#include <string>

namespace mroce::vm {

class VmLock {
public:
  VmLock() = default;
  VmLock(const VmLock &) = delete;
  VmLock &operator=(const VmLock &) = delete;
  ~VmLock() = default; // closing the descriptor releases the flock

  // Block until the lock is ours, telling the user once if we wait.
  // Returns false if a signal interrupted the wait.
  bool acquire(const std::string &path,
               const volatile std::sig_atomic_t &stop_signal);
  int fd() const { return fd_.get(); }
  static std::string default_path();

private:
  UniqueFd fd_;
};

} // namespace mroce::vm
