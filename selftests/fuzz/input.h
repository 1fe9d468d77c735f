// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A cursor over a fuzzer input.  Reading past the end yields zeros, so every
// input is a valid program and the fuzzer never wastes time on framing
// errors.  Multi-byte values are big-endian, like the wire.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace mroce::fuzz {

class Input {
 public:
  Input(const uint8_t *data, size_t size) : p_(data), end_(data + size) {}

  bool done() const { return p_ >= end_; }
  size_t left() const { return done() ? 0 : static_cast<size_t>(end_ - p_); }

  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() {
    uint16_t hi = u8();
    return static_cast<uint16_t>(hi << 8 | u8());
  }
  uint32_t u32() {
    uint32_t hi = u16();
    return hi << 16 | u16();
  }
  uint64_t u64() {
    uint64_t hi = u32();
    return hi << 32 | u32();
  }

  // Up to @n bytes (fewer at the end of the input); @got says how many.
  const uint8_t *take(size_t n, size_t *got) {
    size_t k = n < left() ? n : left();
    const uint8_t *at = p_;
    p_ += k;
    *got = k;
    return at;
  }

 private:
  const uint8_t *p_;
  const uint8_t *end_;
};

// A broken invariant: say which and abort, so libFuzzer keeps the input.
[[noreturn]] inline void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fputs("INVARIANT: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::abort();
}

#define FUZZ_REQUIRE(cond, ...)                   \
  do {                                            \
    if (!(cond)) ::mroce::fuzz::die(__VA_ARGS__); \
  } while (0)

}  // namespace mroce::fuzz
