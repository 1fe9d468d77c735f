// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Crafting hostile MetaRoCE datagrams.  Every kind except "random" is built
// from a packet the core's own encoder wrote, then broken in one way, so
// the receiver's decoder must reject it for exactly that reason (or, for
// "conn", accept it and drop it for its unknown connection).
#pragma once

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

extern "C" {
#include "wire.h"
}

namespace mroce::inject {

enum class Kind {
  Truncated, // cut inside the header or extension
  Oversized, // payload beyond the message's total (or a huge datagram)
  Version,   // a version other than MROCE_VERSION
  Conn,      // well-formed, for a connection that does not exist
  Flags,     // unknown flag, or a flag the opcode does not allow
  Random,    // random bytes, random length
  // ACK blocks past the first IP fragment: a data packet with an ACK body
  // or an ACK of dozens of path blocks and stream entries (2-8 KB), valid
  // for an unknown connection, or with one late block broken, or an ACK
  // longer than its blocks
  Blocks,
};

inline constexpr Kind kAllKinds[] = {
    Kind::Truncated, Kind::Oversized, Kind::Version, Kind::Conn,
    Kind::Flags,     Kind::Random,    Kind::Blocks};

std::string_view kind_name(Kind k);
bool parse_kind(std::string_view s, Kind &out);

struct Crafted {
  std::vector<uint8_t> bytes;
  // What the core decoder must say: MROCE_WIRE_OK for Conn; for Random,
  // whatever it says (expect_any).
  mroce_wire_err expect = MROCE_WIRE_OK;
  bool expect_any = false;
};

Crafted craft(Kind k, std::mt19937_64 &rng);

// Decode with the core and compare with the intended verdict.
bool verdict_matches(const Crafted &c, mroce_wire_err *got);

} // namespace mroce::inject
