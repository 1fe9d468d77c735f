// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "util.h"

#include "unique_fd.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mroce::vm {

void note(std::string_view msg) {
  std::string line = "metaroce-vm: ";
  line += msg;
  line += '\n';
  // One write per line keeps messages whole next to the streamed output.
  if (::write(STDERR_FILENO, line.data(), line.size()) < 0) {
    // Nothing sensible to do if stderr is gone.
  }
}

bool try_read_file(const fs::path &p, std::string &out) {
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return false;
  out.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n == 0;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string read_file(const fs::path &p) {
  std::string s;
  if (!try_read_file(p, s))
    throw Error("cannot read " + p.string() + ": " + std::strerror(errno));
  return s;
}

void write_file_atomic(const fs::path &p, std::string_view data) {
  fs::path tmp = p;
  tmp += ".tmp." + std::to_string(::getpid());
  UniqueFd fd(
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid())
    throw Error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      fd.reset();
      ::unlink(tmp.c_str());
      throw Error("cannot write " + tmp.string() + ": " + std::strerror(e));
    }
    off += static_cast<size_t>(n);
  }
  if (fd.close() != 0 || ::rename(tmp.c_str(), p.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error("cannot write " + p.string() + ": " + std::strerror(e));
  }
}

void Hasher::add(std::string_view s) {
  for (unsigned char c : s) {
    h_ ^= c;
    h_ *= 0x100000001b3ull;
  }
  // Separator, so that ("ab","c") and ("a","bc") differ.
  h_ ^= 0xff;
  h_ *= 0x100000001b3ull;
}

void Hasher::add_file(const fs::path &p) { add(read_file(p)); }

void Hasher::add_stat(const fs::path &p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0)
    throw Error("cannot stat " + p.string() + ": " + std::strerror(errno));
  add(p.string());
  add(std::to_string(st.st_size));
  add(std::to_string(st.st_mtim.tv_sec) + "." +
      std::to_string(st.st_mtim.tv_nsec));
}

std::string Hasher::hex() const {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(h_));
  return buf;
}

std::string shell_quote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  q += '\'';
  return q;
}

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string_view::npos)
      nl = s.size();
    lines.emplace_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

namespace {

long parse_scaled(std::string_view s, std::string_view what,
                  std::string_view suffixes, const long *scales) {
  if (s.empty())
    throw Error(std::string(what) + ": empty value");
  long scale = 1;
  size_t sfx = suffixes.find(s.back());
  if (sfx != std::string_view::npos) {
    scale = scales[sfx];
    s.remove_suffix(1);
  }
  long v = 0;
  if (s.empty())
    throw Error(std::string(what) + ": not a number");
  for (char c : s) {
    if (c < '0' || c > '9' || v > 100000000)
      throw Error(std::string(what) +
                  ": not a valid number: " + std::string(s));
    v = v * 10 + (c - '0');
  }
  if (v <= 0)
    throw Error(std::string(what) + ": must be positive");
  return v * scale;
}

} // namespace

long parse_seconds(std::string_view s, std::string_view what) {
  static const long scales[] = {1, 60, 3600};
  return parse_scaled(s, what, "smh", scales);
}

long parse_mib(std::string_view s, std::string_view what) {
  static const long scales[] = {1, 1024};
  return parse_scaled(s, what, "MG", scales);
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof(buf), "%.1f s", s);
  else
    std::snprintf(buf, sizeof(buf), "%dm%02ds", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  return buf;
}

} // namespace mroce::vm
