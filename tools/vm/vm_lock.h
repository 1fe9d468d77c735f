// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The machine-wide VM lock.  Two QEMU guests on a 2-core host make each other
// time out, so every VM (including the KVM probe) runs under one flock on
// /tmp/metaroce-vm.lock (or $METAROCE_VM_LOCK), shared by all checkouts.
#pragma once

#include <string>

namespace mroce::vm {

class VmLock {
public:
  VmLock() = default;
  VmLock(const VmLock &) = delete;
  VmLock &operator=(const VmLock &) = delete;
  ~VmLock();

  // Block until the lock is ours, telling the user once if we wait.
  // Returns false if a signal interrupted the wait.
  bool acquire(const std::string &path, const volatile int &stop_signal);
  int fd() const { return fd_; }
  static std::string default_path();

private:
  int fd_ = -1;
};

} // namespace mroce::vm
