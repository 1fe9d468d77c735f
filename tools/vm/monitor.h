// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Runs one QEMU process and watches it until it is gone: streams the guest
// command's output, logs the kernel console, tracks the guest's heartbeat,
// and enforces the hard timeout.  Whatever happens, QEMU is dead and reaped
// when run_vm() returns.
#pragma once

#include "qemu.h"

#include <csignal>
#include <deque>
#include <string>

namespace mroce::vm {

struct MonitorConfig {
  double timeout_s = 1800;
  // Silence on mroce.ctl longer than this is a hang; 0 disables the check
  // (the KVM probe never starts a heartbeat).
  double hang_s = 180;
  bool forward_stdin = false; // --keep: stdin goes to the guest shell
  bool stream_output = true;  // copy mroce.out to our stdout
  bool echo_qemu_stderr = true;
  fs::path console_log; // empty: keep the console in memory only
  fs::path output_log;
  std::string marker; // console text to look for (VmResult::marker_seen)
  int lock_fd = -1;   // inherited by QEMU
};

enum class VmEnd {
  kExited,      // QEMU exited on its own (power-off, panic reboot, error)
  kTimeout,     // hard timeout, killed
  kHang,        // heartbeat lost, killed
  kPanicStuck,  // panic on the console but QEMU did not exit, killed
  kInterrupted, // the runner got a signal, killed
};

struct VmResult {
  VmEnd end = VmEnd::kExited;
  int qemu_status = -1; // QEMU's exit status (128+sig if killed)
  bool panic = false;   // "Kernel panic - not syncing" seen
  double boot_s = -1;   // start to first heartbeat (guest userspace up)
  double total_s = 0;
  bool marker_seen = false;
  std::deque<std::string> console_tail; // last lines of the console
  std::string qemu_stderr;
};

// Set by the runner's signal handler; run_vm() then stops the VM.
extern volatile std::sig_atomic_t g_stop_signal;

VmResult run_vm(const QemuSpec &spec, const MonitorConfig &cfg);

} // namespace mroce::vm
