#include "ecmp.h"

#include "rng.h"

namespace mroce::sim {

uint64_t ecmp_hash(const FiveTuple &t, uint64_t seed) {
  const uint64_t addrs = (static_cast<uint64_t>(t.src_ip) << 32) | t.dst_ip;
  const uint64_t l4 = (static_cast<uint64_t>(t.src_port) << 24) |
                      (static_cast<uint64_t>(t.dst_port) << 8) | t.proto;
  // Two rounds so that every input bit reaches every output bit.
  return mix64(mix64(addrs ^ seed) ^ l4);
}

} // namespace mroce::sim
