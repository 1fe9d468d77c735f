// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// metaroce-vm: run one command in a throw-away QEMU guest booting Debian's
// stock 6.1 kernel over the host's own root filesystem.  See
// Documentation/testing-vm.md.
#include "accel.h"
#include "exit_codes.h"
#include "initramfs.h"
#include "kernel_image.h"
#include "module_tree.h"
#include "monitor.h"
#include "options.h"
#include "repo.h"
#include "util.h"
#include "vm_lock.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <system_error>
#include <unistd.h>

namespace mroce::vm {
namespace {

void on_signal(int sig) { g_stop_signal = sig; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // no SA_RESTART: a blocking flock() must return EINTR
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

fs::path make_out_dir(const Options &opt, const RepoLayout &repo) {
  fs::path dir;
  if (!opt.out.empty()) {
    dir = fs::absolute(opt.out);
    fs::create_directories(dir);
  } else {
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
    fs::path base = repo.root / "results" / "vm";
    fs::create_directories(base);
    dir = base / stamp;
    for (int n = 2; !fs::create_directory(dir); n++)
      dir = base / (std::string(stamp) + "-" + std::to_string(n));
  }
  dir = fs::canonical(dir);
  // Left over from an earlier run in the same --out: never trust them.
  std::error_code ec;
  for (const char *f : {"status", "vm-result"})
    fs::remove(dir / f, ec);
  fs::create_directories(dir / ".vm");
  return dir;
}

// The command as a `set --` line the guest shell sources.  One argument is a
// shell snippet ("uname -r; exit 3"); several are an argv.
std::string argv_script(const std::vector<std::string> &cmd) {
  std::vector<std::string> words = cmd;
  if (words.size() == 1)
    words = {"sh", "-c", cmd[0]};
  std::string s = "set --";
  for (const auto &w : words)
    s += " " + shell_quote(w);
  return s + "\n";
}

std::string boot_env(const RepoLayout &repo, const fs::path &out,
                     const fs::path &modtree, bool keep) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  auto kv = [](const char *k, const std::string &v) {
    return std::string(k) + "=" + shell_quote(v) + "\n";
  };
  return kv("METAROCE_ROOT", repo.root.string()) +
         kv("METAROCE_OUT", out.string()) +
         kv("METAROCE_CWD", ec ? repo.root.string() : cwd.string()) +
         kv("METAROCE_KVER", repo.kver) +
         kv("METAROCE_MODTREE", modtree.string()) +
         kv("METAROCE_KEEP", keep ? "1" : "0");
}

std::vector<fs::path> guest_modules(const Options &opt,
                                    const RepoLayout &repo) {
  std::vector<fs::path> mods;
  std::error_code ec;
  fs::path ko = repo.root / "metaroce.ko";
  // A --module of the same name (metaroce.ko built against another kernel)
  // takes the repository's place.
  bool replaced = false;
  for (const auto &m : opt.modules)
    replaced |= fs::path(m).filename() == ko.filename();
  if (!replaced && fs::is_regular_file(ko, ec))
    mods.push_back(ko);
  else if (!replaced)
    note("no metaroce.ko in " + repo.root.string() +
         ": the guest gets the stock modules only");
  for (const auto &m : opt.modules) {
    if (!fs::is_regular_file(m, ec))
      throw Error("--module " + m + ": no such file");
    mods.push_back(fs::canonical(m));
  }
  return mods;
}

void print_tail(const VmResult &r) {
  if (r.console_tail.empty())
    return;
  std::string s = "---- last lines of the kernel console ----\n";
  for (const auto &l : r.console_tail)
    s += l + "\n";
  s += "----\n";
  std::cerr << s << std::flush;
}

struct Outcome {
  int code;
  std::string what;
  bool show_console;
};

Outcome classify(const VmResult &r, const fs::path &out, double hang_s) {
  if (r.end == VmEnd::kInterrupted)
    return {128 + g_stop_signal,
            "interrupted by signal " + std::to_string(g_stop_signal), false};
  if (r.panic)
    return {kExitKernelPanic, "kernel panic", true};
  if (r.end == VmEnd::kTimeout)
    return {kExitTimeout,
            "hard timeout after " + format_duration(r.total_s) +
                ", QEMU killed",
            true};
  if (r.end == VmEnd::kHang)
    return {kExitGuestHang,
            r.boot_s < 0
                ? "the guest did not come up within " + format_duration(hang_s)
                : "guest hang: no heartbeat for " + format_duration(hang_s),
            true};
  std::string st;
  if (try_read_file(out / "status", st)) {
    char *end = nullptr;
    long v = std::strtol(st.c_str(), &end, 10);
    if (end != st.c_str() && v >= 0 && v <= 255)
      return {static_cast<int>(v),
              "guest command exited with status " + std::to_string(v), false};
  }
  if (r.qemu_status != 0)
    return {kExitRunnerError,
            "QEMU failed (exit status " + std::to_string(r.qemu_status) + ")",
            true};
  return {kExitNoStatus, "the VM stopped without a status from the guest",
          true};
}

int run(int argc, char **argv) {
  install_signal_handlers();
  Options opt = parse_options(argc, argv);
  if (opt.help) {
    std::cout << usage_text();
    return 0;
  }
  RepoLayout repo = find_repo();
  fs::path out = make_out_dir(opt, repo);

  char scratch_tmpl[] = "/tmp/metaroce-vm.XXXXXX";
  if (!::mkdtemp(scratch_tmpl))
    throw Error(std::string("mkdtemp: ") + std::strerror(errno));
  fs::path scratch = scratch_tmpl;
  struct ScratchGuard {
    fs::path p;
    ~ScratchGuard() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } scratch_guard{scratch};

  VmLock lock;
  if (!lock.acquire(VmLock::default_path(), g_stop_signal))
    return 128 + g_stop_signal;

  // Inputs are prepared under the lock: the cache is shared by every run
  // from this checkout.
  fs::path kernel = opt.bzimage ? repo.vmlinuz() : ensure_boot_kernel(repo);
  fs::path initrd = ensure_initramfs(repo);
  fs::path modtree = ensure_module_tree(repo, guest_modules(opt, repo));
  AccelChoice accel =
      choose_accel(opt.accel, repo, kernel, initrd, scratch, lock.fd());
  if (g_stop_signal)
    return 128 + g_stop_signal;

  write_file_atomic(out / ".vm" / "boot.env",
                    boot_env(repo, out, modtree, opt.keep));
  write_file_atomic(out / ".vm" / "argv",
                    argv_script(opt.command.empty()
                                    ? std::vector<std::string>{"true"}
                                    : opt.command));

  QemuSpec spec;
  spec.accel = accel.accel;
  spec.mem_mib = opt.mem_mib;
  spec.smp = opt.smp;
  spec.kernel = kernel;
  spec.initrd = initrd;
  spec.append = base_kernel_cmdline();
  for (const auto &a : opt.kernel_args)
    spec.append += " " + a;
  spec.out_dir = out;
  spec.console_sock = scratch / "console.sock";
  spec.output_sock = scratch / "output.sock";
  spec.control_sock = scratch / "control.sock";
  spec.qmp_sock = scratch / "qmp.sock";
  if (!opt.plugins.empty() && spec.accel != Accel::kTcg)
    throw Error("--qemu-plugin needs TCG (--accel tcg)");
  spec.plugins = opt.plugins;

  MonitorConfig cfg;
  cfg.timeout_s = opt.timeout_s;
  cfg.hang_s = opt.hang_s;
  cfg.forward_stdin = opt.keep;
  cfg.console_log = out / "console.log";
  cfg.output_log = out / "output.log";
  cfg.lock_fd = lock.fd();

  note("booting " + repo.kver + " with " + accel.why + ", " +
       std::to_string(opt.smp) + " vCPU, " + std::to_string(opt.mem_mib) +
       " MiB; output in " + out.string());
  VmResult r = run_vm(spec, cfg);

  Outcome o = classify(r, out, opt.hang_s);
  if (o.show_console)
    print_tail(r);
  std::string times =
      "boot " + (r.boot_s < 0 ? std::string("-") : format_duration(r.boot_s)) +
      ", total " + format_duration(r.total_s) + ", " + accel_name(accel.accel);
  write_file_atomic(out / "vm-result", std::to_string(o.code) + " " + o.what +
                                           " (" + times + ")\n");
  note(o.what + " (" + times + "); exit " + std::to_string(o.code) +
       "; logs in " + out.string());
  return o.code;
}

} // namespace
} // namespace mroce::vm

int main(int argc, char **argv) {
  try {
    return mroce::vm::run(argc, argv);
  } catch (const mroce::vm::Error &e) {
    mroce::vm::note(e.what());
  } catch (const std::exception &e) {
    mroce::vm::note(std::string("error: ") + e.what());
  }
  return mroce::vm::kExitRunnerError;
}
