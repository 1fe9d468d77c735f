// Deterministic pseudo-random numbers.  Every component draws from its own
// stream derived from (seed, stream id), so adding randomness in one place
// never shifts the numbers another component sees.
#pragma once

#include <cstdint>

namespace mroce::sim {

// SplitMix64 finaliser: a cheap bijective 64-bit mixer.
constexpr uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman/Vigna), seeded through SplitMix64.
class Rng {
public:
  explicit Rng(uint64_t seed = 0, uint64_t stream = 0) { reseed(seed, stream); }

  void reseed(uint64_t seed, uint64_t stream) {
    uint64_t x = mix64(seed) ^ mix64(stream ^ 0x5851f42d4c957f2dULL);
    for (auto &w : s_) {
      x = mix64(x);
      w = x;
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // True with probability threshold / 2^64 (see probability_threshold()).
  bool chance(uint64_t threshold) { return threshold != 0 && next() < threshold; }

private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Converts a probability in [0, 1) to the integer threshold used by
// Rng::chance(), so the hot path compares integers only.
inline uint64_t probability_threshold(double p) {
  if (p <= 0.0)
    return 0;
  if (p >= 1.0)
    return ~0ULL;
  return static_cast<uint64_t>(p * 0x1.0p64);
}

} // namespace mroce::sim
