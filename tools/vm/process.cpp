// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "process.h"

#include "unique_fd.h"
#include "util.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mroce::vm {

namespace {

std::vector<char *> make_argv(const std::vector<std::string> &argv) {
  std::vector<char *> v;
  for (const auto &a : argv)
    v.push_back(const_cast<char *>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

// In the child after fork(): only async-signal-safe calls from here on.
[[noreturn]] void exec_or_die(char *const *argv) {
  ::execvp(argv[0], argv);
  const char msg[] = "metaroce-vm: exec failed\n";
  (void)!::write(STDERR_FILENO, msg, sizeof(msg) - 1);
  ::_exit(127);
}

void reset_signals_in_child() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD})
    ::sigaction(sig, &sa, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

} // namespace

int decode_wait_status(int wstatus) {
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return -1;
}

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("pipe: ") + std::strerror(errno));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

CommandResult run_command(const std::vector<std::string> &argv) {
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  auto args = make_argv(argv);
  pid_t pid = ::fork();
  if (pid < 0)
    throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    reset_signals_in_child();
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(out.write.get(), STDOUT_FILENO);
    ::dup2(err.write.get(), STDERR_FILENO);
    exec_or_die(args.data());
  }
  // Only the child writes: end of file once it (and its children) exit.
  out.write.reset();
  err.write.reset();

  CommandResult r;
  UniqueFd *src[2] = {&out.read, &err.read};
  std::string *sink[2] = {&r.out, &r.err};
  while (out.read.valid() || err.read.valid()) {
    struct pollfd pfd[2] = {{out.read.get(), POLLIN, 0},
                            {err.read.get(), POLLIN, 0}};
    if (::poll(pfd, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (!src[i]->valid() || !pfd[i].revents)
        continue;
      char buf[65536];
      ssize_t n = ::read(src[i]->get(), buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        src[i]->reset();
        continue;
      }
      sink[i]->append(buf, static_cast<size_t>(n));
    }
  }
  out.read.reset();
  err.read.reset();
  int ws = 0;
  while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  r.status = decode_wait_status(ws);
  return r;
}

Child spawn_child(const std::vector<std::string> &argv, int keep_fd) {
  Pipe err = make_pipe();
  auto args = make_argv(argv);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0)
    throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    reset_signals_in_child();
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) // the runner died before prctl took effect
      ::_exit(127);
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(devnull, STDOUT_FILENO);
    ::dup2(err.write.get(), STDERR_FILENO);
    if (keep_fd >= 0)
      ::fcntl(keep_fd, F_SETFD, 0);
    exec_or_die(args.data());
  }
  return Child{pid, err.read.release()};
}

} // namespace mroce::vm
