// ECMP next-hop selection by a seeded hash of the 5-tuple.  The hash is a
// pure function of (tuple, seed): the same flow always takes the same next
// hop, and the UDP source port a transport picks decides its route.
#pragma once

#include "packet.h"

#include <cstdint>

namespace mroce::sim {

uint64_t ecmp_hash(const FiveTuple &t, uint64_t seed);

// Index in [0, n) for a group of n equal-cost next hops.
inline uint32_t ecmp_select(uint64_t hash, uint32_t n) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(hash) * n) >> 64);
}

} // namespace mroce::sim
