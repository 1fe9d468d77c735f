// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "accel.h"

#include "monitor.h"
#include "unique_fd.h"
#include "util.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mroce::vm {

namespace {

constexpr double kProbeTimeoutS = 30;
constexpr const char *kProbeMarker = "METAROCE-VM-PROBE-OK";

// Can we open /dev/kvm and create a VM at all?
bool kvm_device_usable(std::string &why) {
  UniqueFd kvm(::open("/dev/kvm", O_RDWR | O_CLOEXEC));
  if (!kvm.valid()) {
    why = std::string("/dev/kvm: ") + std::strerror(errno);
    return false;
  }
  int api = ::ioctl(kvm.get(), KVM_GET_API_VERSION, 0);
  if (api != KVM_API_VERSION) {
    why = "/dev/kvm: unexpected API version " + std::to_string(api);
    return false;
  }
  UniqueFd vm(::ioctl(kvm.get(), KVM_CREATE_VM, 0));
  if (!vm.valid()) {
    why = std::string("KVM_CREATE_VM: ") + std::strerror(errno);
    return false;
  }
  return true;
}

// Identifies this host boot and QEMU build: a cached verdict is valid for
// exactly this pair.
std::string probe_key() {
  std::string boot_id;
  try_read_file("/proc/sys/kernel/random/boot_id", boot_id);
  while (!boot_id.empty() && boot_id.back() == '\n')
    boot_id.pop_back();
  Hasher h;
  h.add(boot_id);
  for (const char *dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    fs::path q = fs::path(dir) / "qemu-system-x86_64";
    std::error_code ec;
    if (fs::exists(q, ec)) {
      h.add_stat(q);
      break;
    }
  }
  return h.hex();
}

bool probe_boot(const fs::path &kernel, const fs::path &initrd,
                const fs::path &scratch, int lock_fd, std::string &why) {
  QemuSpec spec;
  spec.accel = Accel::kKvm;
  spec.mem_mib = 512;
  spec.smp = 1;
  spec.kernel = kernel;
  spec.initrd = initrd;
  spec.append = base_kernel_cmdline() + " mroce_probe";
  spec.out_dir = scratch;
  spec.console_sock = scratch / "probe-con.sock";
  spec.output_sock = scratch / "probe-out.sock";
  spec.control_sock = scratch / "probe-ctl.sock";
  MonitorConfig cfg;
  cfg.timeout_s = kProbeTimeoutS;
  cfg.hang_s = 0;
  cfg.stream_output = false;
  cfg.echo_qemu_stderr = false;
  cfg.marker = kProbeMarker;
  cfg.lock_fd = lock_fd;
  VmResult r = run_vm(spec, cfg);
  for (const char *s : {"probe-con.sock", "probe-out.sock", "probe-ctl.sock"})
    ::unlink((scratch / s).c_str());
  if (r.marker_seen)
    return true;
  if (r.end == VmEnd::kTimeout) {
    why =
        "a KVM guest did not reach /init in " + format_duration(kProbeTimeoutS);
  } else {
    // QEMU's first complaint names the cause; later lines are fallout.
    std::string err = r.qemu_stderr.substr(0, r.qemu_stderr.find('\n'));
    const std::string prefix = "qemu-system-x86_64: ";
    if (starts_with(err, prefix))
      err = err.substr(prefix.size());
    why = "QEMU with KVM failed" + (err.empty() ? "" : ": " + err);
  }
  return false;
}

} // namespace

AccelChoice choose_accel(const std::string &mode, const RepoLayout &repo,
                         const fs::path &kernel, const fs::path &initrd,
                         const fs::path &scratch, int lock_fd) {
  if (mode == "tcg")
    return {Accel::kTcg, "TCG (requested)"};

  std::string why;
  bool ok = kvm_device_usable(why);
  if (ok) {
    fs::path cache = repo.vm_cache() / "kvm-probe";
    std::string key = probe_key(), cached;
    if (try_read_file(cache, cached) && starts_with(cached, key + " ")) {
      std::string verdict = cached.substr(key.size() + 1);
      while (!verdict.empty() && verdict.back() == '\n')
        verdict.pop_back();
      ok = verdict == "ok";
      if (!ok)
        why = verdict;
    } else {
      note("probing KVM (once per host boot)");
      ok = probe_boot(kernel, initrd, scratch, lock_fd, why);
      write_file_atomic(cache, key + " " + (ok ? "ok" : why) + "\n");
    }
  }
  if (ok)
    return {Accel::kKvm, "KVM"};
  if (mode == "kvm")
    throw Error("--accel kvm: KVM is not usable: " + why);
  return {Accel::kTcg, "TCG (KVM not usable: " + why + ")"};
}

} // namespace mroce::vm
