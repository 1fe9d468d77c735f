// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "monitor.h"

#include "process.h"
#include "unique_fd.h"
#include "util.h"

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mroce::vm {

volatile std::sig_atomic_t g_stop_signal = 0;

namespace {

constexpr size_t kTailLines = 80;
constexpr const char *kPanicText = "Kernel panic - not syncing";
// After a panic QEMU normally exits within a second (panic=-1, -no-reboot).
constexpr double kPanicGraceS = 15;
// After QEMU exits, what it wrote is still in the sockets: read to EOF.
constexpr double kDrainS = 5;
// Time the guest gets to print its sysrq dumps before QEMU is killed.
constexpr int kDumpS = 5;

UniqueFd listen_unix(const fs::path &p) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    throw Error(std::string("socket: ") + std::strerror(errno));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (p.string().size() >= sizeof(sa.sun_path))
    throw Error("socket path too long: " + p.string());
  std::strcpy(sa.sun_path, p.c_str());
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0 ||
      ::listen(fd.get(), 1) != 0)
    throw Error("cannot listen on " + p.string() + ": " + std::strerror(errno));
  return fd;
}

// Write everything or give up on this fd (returns false, e.g. EPIPE).
bool write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Press Alt+SysRq+<key> on the guest's keyboard for each key, through QMP
// (the kernel runs with sysrq_always_enabled).  Best effort: a guest with
// interrupts off on every CPU will not answer.
bool qmp_sysrq(const fs::path &sock, std::string_view keys) {
  UniqueFd sfd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int fd = sfd.get();
  if (fd < 0)
    return false;
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, sock.c_str(), sizeof(sa.sun_path) - 1);
  char buf[4096];
  bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) == 0 &&
            ::read(fd, buf, sizeof(buf)) > 0; // the greeting
  if (ok) {
    // Commands run in order: capabilities first, then the key presses.
    std::string cmds = "{\"execute\":\"qmp_capabilities\"}\n";
    for (char k : keys)
      cmds += "{\"execute\":\"send-key\",\"arguments\":{\"keys\":["
              "{\"type\":\"qcode\",\"data\":\"alt\"},"
              "{\"type\":\"qcode\",\"data\":\"sysrq\"},"
              "{\"type\":\"qcode\",\"data\":\"" +
              std::string(1, k) + "\"}]}}\n";
    ok = write_all(fd, cmds.data(), cmds.size());
    // Let QEMU answer every command before the connection goes.
    std::string replies;
    auto answered = [&] {
      size_t count = 0;
      for (size_t at = 0;
           (at = replies.find("\"return\"", at)) != std::string::npos; at++)
        count++;
      return count > keys.size();
    };
    while (ok && !answered()) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n <= 0)
        break;
      replies.append(buf, static_cast<size_t>(n));
    }
  }
  return ok;
}

UniqueFd open_log(const fs::path &p) {
  if (p.empty())
    return UniqueFd();
  UniqueFd fd(
      ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid())
    throw Error("cannot create " + p.string() + ": " + std::strerror(errno));
  return fd;
}

// The kernel console: logged without carriage returns, split into lines to
// spot a panic (and the probe's marker), last lines kept for the report.
class Console {
public:
  Console(int log_fd, std::string marker, VmResult &res)
      : log_fd_(log_fd), marker_(std::move(marker)), res_(res) {}

  void feed(const char *p, size_t n) {
    std::string clean;
    clean.reserve(n);
    for (size_t i = 0; i < n; i++)
      if (p[i] != '\r')
        clean += p[i];
    if (log_fd_ >= 0)
      write_all(log_fd_, clean.data(), clean.size());
    for (char c : clean) {
      if (c == '\n')
        end_line();
      else if (line_.size() < 4096)
        line_ += c;
    }
  }

  void finish() {
    if (!line_.empty())
      end_line();
  }

private:
  void end_line() {
    if (line_.find(kPanicText) != std::string::npos)
      res_.panic = true;
    if (!marker_.empty() && line_.find(marker_) != std::string::npos)
      res_.marker_seen = true;
    res_.console_tail.push_back(std::move(line_));
    if (res_.console_tail.size() > kTailLines)
      res_.console_tail.pop_front();
    line_.clear();
  }

  int log_fd_;
  std::string marker_;
  VmResult &res_;
  std::string line_;
};

// SIGTERM lets QEMU exit cleanly; SIGKILL if it does not within 5 s.
int kill_and_reap(pid_t pid) {
  ::kill(pid, SIGTERM);
  int ws = 0;
  for (int i = 0; i < 50; i++) {
    pid_t r = ::waitpid(pid, &ws, WNOHANG);
    if (r == pid)
      return decode_wait_status(ws);
    ::usleep(100000);
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  return decode_wait_status(ws);
}

enum Slot {
  kListenCon,
  kListenOut,
  kListenCtl,
  kCon,
  kOut,
  kCtl,
  kQemuErr,
  kStdin,
  kSlots
};

} // namespace

VmResult run_vm(const QemuSpec &spec, const MonitorConfig &cfg) {
  VmResult res;
  // Every slot owns its descriptor but kStdin, which borrows ours while
  // stdin_on says so.
  std::array<UniqueFd, kSlots> fds;
  bool stdin_on = false;
  fds[kListenCon] = listen_unix(spec.console_sock);
  fds[kListenOut] = listen_unix(spec.output_sock);
  fds[kListenCtl] = listen_unix(spec.control_sock);
  UniqueFd console_log = open_log(cfg.console_log);
  UniqueFd output_log = open_log(cfg.output_log);
  Console console(console_log.get(), cfg.marker, res);
  bool stdout_ok = cfg.stream_output;

  auto start = Clock::now();
  Child qemu = spawn_child(qemu_argv(spec), cfg.lock_fd);
  fds[kQemuErr].reset(qemu.stderr_fd);
  std::string ctl_line; // partial line from mroce.ctl

  bool alive = true, heartbeat = false;
  Clock::time_point last_hb = start, panic_at{}, exited_at{};

  bool killing = false;
  bool dumping = false;
  VmEnd dump_end = VmEnd::kTimeout;
  Clock::time_point dump_until{};
  auto stop = [&](VmEnd why) {
    if (!alive)
      return;
    killing = true; // QEMU's "terminating on signal" is our doing: mute it
    res.end = why;
    res.qemu_status = kill_and_reap(qemu.pid);
    alive = false;
    exited_at = Clock::now();
  };

  for (;;) {
    // Reap QEMU first, then read until its sockets report EOF.
    if (alive) {
      int ws = 0;
      if (::waitpid(qemu.pid, &ws, WNOHANG) == qemu.pid) {
        res.qemu_status = decode_wait_status(ws);
        alive = false;
        exited_at = Clock::now();
      }
    }
    bool streams_open = false;
    for (int s : {kCon, kOut, kCtl, kQemuErr})
      streams_open |= fds[s].valid();
    if (!alive && (!streams_open || seconds_since(exited_at) > kDrainS))
      break;

    if (alive) {
      double elapsed = seconds_since(start);
      // A hang or timeout first asks the kernel for its blocked tasks and
      // CPU backtraces (sysrq w, l), so the console log shows where it was
      // stuck, then kills QEMU a few seconds later.
      auto dump_then_stop = [&](VmEnd why) {
        if (dumping)
          return;
        if (!spec.qmp_sock.empty() && qmp_sysrq(spec.qmp_sock, "wl")) {
          dumping = true;
          dump_end = why;
          dump_until = Clock::now() + std::chrono::seconds(kDumpS);
        } else {
          stop(why);
        }
      };
      if (g_stop_signal)
        stop(VmEnd::kInterrupted);
      else if (dumping && Clock::now() > dump_until)
        stop(dump_end);
      else if (elapsed > cfg.timeout_s)
        dump_then_stop(VmEnd::kTimeout);
      else if (res.panic && seconds_since(panic_at) > kPanicGraceS)
        stop(VmEnd::kPanicStuck);
      else if (cfg.hang_s > 0 && !res.panic &&
               seconds_since(last_hb) > cfg.hang_s)
        dump_then_stop(VmEnd::kHang);
      if (!alive) {
        // The listeners are useless now; QEMU's sockets hit EOF below.
        for (int s : {kListenCon, kListenOut, kListenCtl})
          fds[s].reset();
        stdin_on = false;
        continue;
      }
    }

    pollfd pfd[kSlots];
    for (int i = 0; i < kSlots; i++)
      pfd[i] = {i == kStdin ? (stdin_on ? STDIN_FILENO : -1) : fds[i].get(),
                POLLIN, 0};
    if (::poll(pfd, kSlots, 200) < 0) {
      if (errno == EINTR)
        continue;
      throw Error(std::string("poll: ") + std::strerror(errno));
    }
    for (int i = 0; i < kSlots; i++) {
      if (pfd[i].fd < 0 || !pfd[i].revents)
        continue;
      if (i == kListenCon || i == kListenOut || i == kListenCtl) {
        int c = ::accept4(fds[i].get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
          continue;
        fds[i + (kCon - kListenCon)].reset(c);
        fds[i].reset();
        continue;
      }
      char buf[65536];
      ssize_t n = ::read(pfd[i].fd, buf, sizeof(buf));
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0) {
        if (i == kStdin) {
          // stdin ended: end the guest shell instead of cutting the port.
          if (fds[kOut].valid())
            write_all(fds[kOut].get(), "\nexit\n", 6);
          stdin_on = false;
        } else {
          fds[i].reset();
        }
        continue;
      }
      size_t len = static_cast<size_t>(n);
      switch (i) {
      case kCon: {
        bool was_panic = res.panic;
        console.feed(buf, len);
        if (res.panic && !was_panic)
          panic_at = Clock::now();
        break;
      }
      case kOut:
        if (output_log.valid())
          write_all(output_log.get(), buf, len);
        if (stdout_ok && !write_all(STDOUT_FILENO, buf, len))
          stdout_ok = false; // reader went away; keep logging
        break;
      case kCtl:
        // Any line is a sign of life.  "shell" means the --keep shell reads
        // the port now: only then is stdin forwarded (what the guest port
        // receives while nobody reads it is thrown away).
        if (!heartbeat)
          res.boot_s = seconds_since(start);
        heartbeat = true;
        last_hb = Clock::now();
        ctl_line.append(buf, len);
        for (size_t nl; (nl = ctl_line.find('\n')) != std::string::npos;) {
          if (ctl_line.compare(0, nl, "shell") == 0 && cfg.forward_stdin &&
              alive)
            stdin_on = true;
          ctl_line.erase(0, nl + 1);
        }
        break;
      case kQemuErr:
        res.qemu_stderr.append(buf, len);
        if (cfg.echo_qemu_stderr && !killing)
          write_all(STDERR_FILENO, buf, len);
        break;
      case kStdin:
        if (fds[kOut].valid())
          write_all(fds[kOut].get(), buf, len);
        break;
      }
    }
  }

  console.finish();
  res.total_s = seconds_since(start);
  return res;
}

} // namespace mroce::vm
