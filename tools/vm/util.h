// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Small helpers shared by the runner: file I/O, hashing, quoting, logging.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mroce::vm {

namespace fs = std::filesystem;

// A failure that ends the run with kExitRunnerError and a one-line message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Messages of the runner itself go to stderr, prefixed with the program name,
// so that stdout carries nothing but the guest command's output.
void note(std::string_view msg);

std::string read_file(const fs::path &p);
bool try_read_file(const fs::path &p, std::string &out);
// Write via a temporary file and rename, so readers never see half a file.
void write_file_atomic(const fs::path &p, std::string_view data);

// FNV-1a 64: a stable content hash for cache keys (not for security).
class Hasher {
public:
  void add(std::string_view s);
  void add_file(const fs::path &p); // content
  void add_stat(const fs::path &p); // path, size and mtime
  std::string hex() const;

private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// Quote for POSIX sh: the result is one word whatever the input.
std::string shell_quote(std::string_view s);

std::vector<std::string> split_lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

// Parse "90", "90s", "15m", "1h" into seconds; throws Error.
long parse_seconds(std::string_view s, std::string_view what);
// Parse "4096", "4096M", "4G" into MiB; throws Error.
long parse_mib(std::string_view s, std::string_view what);

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t);
std::string format_duration(double s);

} // namespace mroce::vm
