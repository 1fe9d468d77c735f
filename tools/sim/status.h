// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The outcome of building or checking a configuration: ok, or a message
// saying what is wrong.  Success is a state of its own, never a message
// that happens to be empty.
#pragma once

#include <string>
#include <utility>

namespace mroce::sim {

class [[nodiscard]] Status {
public:
  Status() = default; // ok
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = message.empty() ? "unspecified error" : std::move(message);
    return s;
  }
  bool ok() const { return !failed_; }
  // The error; empty when ok().
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace mroce::sim
