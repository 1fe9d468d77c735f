// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "vm_lock.h"

#include "util.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mroce::vm {

std::string VmLock::default_path() {
  const char *env = std::getenv("METAROCE_VM_LOCK");
  return env && *env ? env : "/tmp/metaroce-vm.lock";
}

bool VmLock::acquire(const std::string &path,
                     const volatile std::sig_atomic_t &stop_signal) {
  fd_.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (!fd_.valid())
    throw Error("cannot open lock " + path + ": " + std::strerror(errno));
  ::fchmod(fd_.get(), 0666); // engineers may run as different users

  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK)
      throw Error("flock " + path + ": " + std::strerror(errno));
    std::string holder;
    try_read_file(path, holder);
    while (!holder.empty() && holder.back() == '\n')
      holder.pop_back();
    note("another VM is running, waiting for the lock " + path +
         (holder.empty() ? "" : " (held by " + holder + ")"));
    auto t0 = Clock::now();
    // Blocking flock; our signal handlers are installed without SA_RESTART
    // so Ctrl-C interrupts the wait.
    while (::flock(fd_.get(), LOCK_EX) != 0) {
      if (errno != EINTR)
        throw Error("flock " + path + ": " + std::strerror(errno));
      if (stop_signal)
        return false;
    }
    note("got the VM lock after " + format_duration(seconds_since(t0)));
  }

  // Tell a later waiter who holds it (informational only).
  char host_time[64];
  std::time_t now = std::time(nullptr);
  std::strftime(host_time, sizeof(host_time), "%F %T", std::localtime(&now));
  char cwd[4096];
  std::string info = "pid " + std::to_string(::getpid()) + " since " +
                     host_time + " in " +
                     (::getcwd(cwd, sizeof(cwd)) ? cwd : "?") + "\n";
  if (::ftruncate(fd_.get(), 0) == 0)
    (void)!::pwrite(fd_.get(), info.data(), info.size(), 0);
  return true;
}

} // namespace mroce::vm
