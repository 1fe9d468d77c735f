// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "options.h"

#include "util.h"

#include <cstdlib>
#include <string_view>

namespace mroce::vm {

const char *usage_text() {
  return R"(usage: metaroce-vm [options] [--] <command> [args...]
       metaroce-vm [options] --keep

Boot Debian's 6.1.0-57-amd64 kernel (or $KVER, from $METAROCE_CACHE/kernel)
under QEMU with the host root as a read-only 9p root (tmpfs overlay on top),
run <command> in the guest as root (cwd and paths as on the host), stream its
output, power off, and exit with its status.  A single <command> argument is
run with `sh -c`; several are executed as they are.  In the guest:
METAROCE_ROOT (repository), METAROCE_OUT (writable, the host's output
directory), METAROCE_VM=1.

options:
  --timeout S       hard limit for the whole VM run (default 30m; s/m/h suffix)
  --hang-timeout S  guest heartbeat silence counted as a hang (default 180s)
  --mem M           guest memory in MiB, or with M/G suffix (default 4G)
  --smp N           virtual CPUs (default 2)
  --out DIR         output directory (default <repo>/results/vm/<timestamp>)
  --keep            after the command, keep the VM up with an interactive
                    shell on stdin; power off when it exits
  --accel A         auto, kvm or tcg (default auto, or $METAROCE_VM_ACCEL)
  --module FILE     add a kernel module to the guest's module tree (repeatable;
                    <repo>/metaroce.ko is added when it exists and no FILE
                    is named metaroce.ko)
  --kernel-arg ARG  append ARG to the kernel command line (repeatable)
  --bzimage         boot the bzImage through its real-mode setup, not the
                    vmlinux unpacked from it through the PVH entry
  --qemu-plugin P   load the TCG plugin P (QEMU's -plugin argument: FILE
                    followed by ,name=value arguments; TCG only)
  -h, --help        this text

exit status: the guest command's status, or
  121 guest hang (no heartbeat)     122 kernel panic
  123 VM stopped without a status   124 hard timeout (QEMU killed)
  125 runner or QEMU error          130 interrupted
)";
}

Options parse_options(int argc, char **argv) {
  Options o;
  if (const char *a = std::getenv("METAROCE_VM_ACCEL"); a && *a)
    o.accel = a;
  int i = 1;
  // Accept "--opt value" and "--opt=value".
  auto value = [&](std::string_view arg, std::string_view name,
                   std::string &out) {
    if (arg == name) {
      if (i + 1 >= argc)
        throw Error(std::string(name) + " needs a value");
      out = argv[++i];
      return true;
    }
    if (arg.size() > name.size() && starts_with(arg, name) &&
        arg[name.size()] == '=') {
      out = std::string(arg.substr(name.size() + 1));
      return true;
    }
    return false;
  };
  for (; i < argc; i++) {
    std::string_view arg = argv[i];
    std::string v;
    if (arg == "--") {
      i++;
      break;
    }
    if (arg.empty() || arg[0] != '-')
      break;
    if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--keep") {
      o.keep = true;
    } else if (arg == "--bzimage") {
      o.bzimage = true;
    } else if (value(arg, "--timeout", v)) {
      o.timeout_s = static_cast<double>(parse_seconds(v, "--timeout"));
    } else if (value(arg, "--hang-timeout", v)) {
      o.hang_s = static_cast<double>(parse_seconds(v, "--hang-timeout"));
    } else if (value(arg, "--mem", v)) {
      o.mem_mib = parse_mib(v, "--mem");
      if (o.mem_mib < 256)
        throw Error("--mem: at least 256 MiB");
    } else if (value(arg, "--smp", v)) {
      if (v.empty() || v.size() > 2 ||
          v.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(v) < 1 || std::stoi(v) > 64)
        throw Error("--smp: a number from 1 to 64");
      o.smp = std::stoi(v);
    } else if (value(arg, "--out", v)) {
      o.out = v;
    } else if (value(arg, "--accel", v)) {
      o.accel = v;
    } else if (value(arg, "--module", v)) {
      o.modules.push_back(v);
    } else if (value(arg, "--kernel-arg", v)) {
      o.kernel_args.push_back(v);
    } else if (value(arg, "--qemu-plugin", v)) {
      o.plugins.push_back(v);
    } else {
      throw Error("unknown option " + std::string(arg));
    }
  }
  for (; i < argc; i++)
    o.command.emplace_back(argv[i]);
  if (o.accel != "auto" && o.accel != "kvm" && o.accel != "tcg")
    throw Error("--accel: auto, kvm or tcg");
  if (o.command.empty() && !o.keep && !o.help)
    throw Error("no command given (see --help)");
  return o;
}

} // namespace mroce::vm
