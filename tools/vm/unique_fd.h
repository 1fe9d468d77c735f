// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A file descriptor with one owner: closed when the owner goes, on every
// path, thrown exceptions included.
#pragma once

#include <unistd.h>
#include <utility>

namespace mroce::vm {

class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd &&o) noexcept : fd_(o.release()) {}
  UniqueFd &operator=(UniqueFd &&o) noexcept {
    if (this != &o)
      reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Give the descriptor up without closing it.
  int release() { return std::exchange(fd_, -1); }
  // Close the one held (if any) and hold @fd.
  void reset(int fd = -1) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }
  // Close now, for the caller that must know whether close() failed (a
  // written file); 0 or -1 with errno.
  int close() { return fd_ >= 0 ? ::close(release()) : 0; }

private:
  int fd_ = -1;
};

// A pipe whose both ends close themselves; throws Error on failure.
struct Pipe {
  UniqueFd read, write;
};
Pipe make_pipe(); // O_CLOEXEC on both ends

} // namespace mroce::vm
