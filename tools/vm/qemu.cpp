// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qemu.h"

#include <cstdlib>
#include <sstream>

namespace mroce::vm {

const char *accel_name(Accel a) { return a == Accel::kKvm ? "kvm" : "tcg"; }

std::string base_kernel_cmdline() {
  // panic=-1 + -no-reboot: a panic ends QEMU at once instead of hanging.
  // tsc=reliable: otherwise TCG's jitter gets the TSC marked unstable and
  // perftest's cycle-based timing reports 0 MB/s.  quiet keeps the serial
  // console (slow under TCG) short during boot; the guest raises the
  // console log level once it runs.  log_buf_len leaves room for a whole
  // test session's kernel log (session.sh reads it between markers).
  // sysrq_always_enabled: the runner presses Alt+SysRq+w/l on a hang.
  return "console=ttyS0 panic=-1 quiet tsc=reliable log_buf_len=8M "
         "8250.nr_uarts=1 sysrq_always_enabled";
}

std::vector<std::string> qemu_argv(const QemuSpec &s) {
  std::vector<std::string> a = {
      "qemu-system-x86_64",
      "-nodefaults",
      "-no-user-config",
      "-display",
      "none",
      "-no-reboot",
      "-nic",
      "none",
      "-m",
      std::to_string(s.mem_mib),
      "-smp",
      std::to_string(s.smp),
  };
  if (s.accel == Accel::kKvm) {
    a.insert(a.end(), {"-accel", "kvm", "-cpu", "host"});
  } else {
    // Without ERMS/FSRM the guest kernel copies with rep movsq: TCG runs
    // rep movsb byte by byte, 7x slower (4 KiB: 14.8 us against 2.0 us),
    // and every copy_user, memcpy and skb copy of every driver is one.
    a.insert(a.end(),
             {"-accel", "tcg,thread=multi", "-cpu", "max,erms=off,fsrm=off"});
    for (const auto &p : s.plugins)
      a.insert(a.end(), {"-plugin", p});
  }
  a.insert(a.end(), {"-kernel", s.kernel.string(), "-initrd", s.initrd.string(),
                     "-append", s.append});

  if (!s.qmp_sock.empty())
    a.insert(a.end(),
             {"-qmp", "unix:" + s.qmp_sock.string() + ",server=on,wait=off"});
  a.insert(a.end(),
           {"-chardev", "socket,id=con,path=" + s.console_sock.string(),
            "-serial", "chardev:con"});
  a.insert(a.end(),
           {"-device", "virtio-serial-pci,id=vser", "-chardev",
            "socket,id=out,path=" + s.output_sock.string(), "-device",
            "virtserialport,bus=vser.0,chardev=out,name=mroce.out", "-chardev",
            "socket,id=ctl,path=" + s.control_sock.string(), "-device",
            "virtserialport,bus=vser.0,chardev=ctl,name=mroce.ctl"});

  // The host root: read-only; multidevs=remap keeps inode numbers unique
  // across the host's mounts.  Paths in QEMU options cannot contain commas
  // unless doubled.
  auto esc = [](std::string p) {
    std::string r;
    for (char c : p) {
      r += c;
      if (c == ',')
        r += ',';
    }
    return r;
  };
  a.insert(a.end(),
           {"-fsdev",
            "local,id=rootfs,path=/,security_model=none,readonly=on,"
            "multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=rootfs,mount_tag=mroce_root",
            "-fsdev",
            "local,id=outfs,path=" + esc(s.out_dir.string()) +
                ",security_model=none,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=outfs,mount_tag=mroce_out",
            "-device", "virtio-rng-pci"});

  // Debugging aid: extra QEMU options, split on blanks.
  if (const char *extra = std::getenv("METAROCE_VM_QEMU_ARGS")) {
    std::istringstream words(extra);
    for (std::string w; words >> w;)
      a.push_back(w);
  }
  return a;
}

} // namespace mroce::vm
