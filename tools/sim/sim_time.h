// Simulated time: integer picoseconds, never the wall clock.  At 800 Gb/s a
// byte takes 10 ps, so picoseconds keep serialisation exact enough while a
// uint64_t still spans ~213 days.
#pragma once

#include <cstdint>
#include <limits>

namespace mroce::sim {

using Time = uint64_t;

inline constexpr Time kPs = 1;
inline constexpr Time kNs = 1000;
inline constexpr Time kUs = 1000 * kNs;
inline constexpr Time kMs = 1000 * kUs;
inline constexpr Time kSec = 1000 * kMs;
inline constexpr Time kNever = std::numeric_limits<Time>::max();

// Time to serialise `bytes` at `rate_bps` bits per second, rounded down.
constexpr Time serialization_time(uint64_t bytes, uint64_t rate_bps) {
  // bytes * 8e12 stays below 2^64 for any frame size we model (< 2 MB).
  return bytes * 8 * kSec / rate_bps;
}

constexpr double to_seconds(Time t) { return static_cast<double>(t) / kSec; }

} // namespace mroce::sim
