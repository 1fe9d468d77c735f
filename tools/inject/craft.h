// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Crafting hostile MetaRoCE datagrams, and the IP packets that carry them
// from a forged source address.
//
// The malformed kinds (truncated .. random) are built from a packet the
// core's own encoder wrote, then broken in one way, so the receiver's
// decoder must reject it for exactly that reason (or, for "conn", accept it
// and drop it for its unknown connection).
//
// The protocol kinds (connect-flood .. fragment) are well-formed packets an
// off-path attacker forges: from the peer's address, or from addresses
// nobody proved, and for the attacker that learnt the live connection ids,
// with those ids.  Each records what it broke and so what the receiver
// must count for it (struct Effect); the self-test checks every packet
// against that record with its own arithmetic, never by asking the
// receiver's code what it thinks.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
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
  // The protocol's threat model (protocol.md 15): forged, well-formed.
  ConnectFlood, // CONNECTs from random spoofed sources, no valid cookie
  ConnectSpoof, // CONNECT from the peer's address: other nonce and id
  ResetSpoof,   // RESET with the live ids, echoing no token we know
  CloseSpoof,   // CLOSE with the live ids
  Window,       // data with the live ids: psn, dsn or msn out of window
  AckBody,      // ACKs / ACK bodies acknowledging psns never sent
  Fragment,     // AckBody's packets, sent as IP fragments
};

inline constexpr Kind kMalformedKinds[] = {
    Kind::Truncated, Kind::Oversized, Kind::Version, Kind::Conn,
    Kind::Flags,     Kind::Random,    Kind::Blocks};
inline constexpr Kind kAllKinds[] = {
    Kind::Truncated,    Kind::Oversized,  Kind::Version,    Kind::Conn,
    Kind::Flags,        Kind::Random,     Kind::Blocks,     Kind::ConnectFlood,
    Kind::ConnectSpoof, Kind::ResetSpoof, Kind::CloseSpoof, Kind::Window,
    Kind::AckBody,      Kind::Fragment};

std::string_view kind_name(Kind k);
bool parse_kind(std::string_view s, Kind &out);
// Does the kind need the live connection's ids (--dst-conn, --src-conn)?
bool kind_needs_live(Kind k);
// Does the kind forge its source address (a raw socket)?
bool kind_needs_raw(Kind k);

// What the injector knows of the live connection (from debugfs, in the
// tests: the attacker that learnt the ids) and of the receiver's windows.
struct Live {
  uint32_t dst_conn = 0;   // the receiver's id of the connection
  uint32_t src_conn = 0;   // the peer's id
  uint16_t npaths = 1;     // paths to use (ids 0 .. npaths-1)
  uint32_t dst_stream = 0; // receiver's stream (QPN)
  uint32_t src_stream = 0; // the peer's stream
  uint32_t psn_base = 0;   // roughly where the paths' psns are
  uint32_t dsn_base = 0;   // the receiver's rx dsn base
  uint32_t msn_base = 0;   // the receiver's stream frontier (rx_next)
};

// What one crafted datagram must make the receiver count.  The groups are
// what the VM tests read back (selftests/verbs/hostile_lib.sh,
// hl_group_counters):
//   drop_short .. drop_field  the decoder's rx_drop_<reason>, one group per
//             reason (enum mroce_err order, from MROCE_ERR_SHORT)
//   unknown   rx_unknown_conn + rx_wrong_addr (an id, or a known id from
//             another address: the same answer)
//   unproven  rx_connect_unproven; and as many CHALLENGEs sent or limited
//   challenged rx_challenged (a RESET or CLOSE from the peer's id)
//   seq_drop  a sequenced packet dropped for psn, dsn or msn (one drop each)
//   ack_drop  rx_drop_ack: one per ACK path block acknowledging a psn never
//             sent
//   any_once  random bytes: counted exactly once, by one of the drop_*
//             reasons or as unknown; which one is not known by construction
enum Group {
  kDropShort,
  kDropVersion,
  kDropOpcode,
  kDropReserved,
  kDropFlags,
  kDropLength,
  kDropField,
  kUnknown,
  kUnproven,
  kChallenged,
  kSeqDrop,
  kAckDrop,
  kAnyOnce,
  kGroups
};
static_assert(kDropField - kDropShort == MROCE_ERR_FIELD - MROCE_ERR_SHORT,
              "one drop group per decoder rejection");
std::string_view group_name(int g);
// The group a datagram built to be refused for @e (not MROCE_OK) is
// counted in.
int drop_group(mroce_err e);
inline bool is_drop_group(int g) { return g >= kDropShort && g <= kDropField; }

struct Effect {
  std::array<uint32_t, kGroups> n{};
};

struct Crafted {
  std::vector<uint8_t> bytes;
  // What the datagram was built to make the core decoder say:
  // MROCE_OK for Conn and the protocol kinds; for Random, nothing
  // known (expect_any).  The self-test holds the decoder to it; the VM
  // tests count by it (effect), never by asking the decoder.
  mroce_err expect = MROCE_OK;
  bool expect_any = false;
  Effect effect;          // at the receiver, by construction
  bool spoof_net = false; // source: a random host of --src-net
  bool fragment = false;  // send as IP fragments
  const char *broke = ""; // what was broken: the sub-kind
};

// A datagram of kind @k.  @live is used by the protocol kinds only.
Crafted craft(Kind k, const Live &live, std::mt19937_64 &rng);

// Decode with the core and compare with the intended verdict (the
// self-test's check of the crafter against the decoder).
bool verdict_matches(const Crafted &c, mroce_err *got);

// Check a crafted packet against its own record (the self-test), with
// this file's arithmetic, not the decoder: the fields it claims to have
// broken are broken, the others are as @live says, and its effect is the
// one group its construction names.  On failure, @why says what.
bool construction_holds(Kind k, const Crafted &c, const Live &live,
                        std::string *why);

// ---- IP framing (raw sockets) -------------------------------------------

struct Addr {
  bool v6 = false;
  std::array<uint8_t, 16> a{}; // IPv4: the first 4 bytes
};
bool parse_addr(const std::string &s, Addr &out);
std::string addr_str(const Addr &a);

// A prefix to draw spoofed sources from: IPv4 /8../32, IPv6 /64../128.
struct Prefix {
  Addr base;
  unsigned len = 0;
};
bool parse_prefix(const std::string &s, Prefix &out);
Addr random_host(const Prefix &p, std::mt19937_64 &rng);
bool in_prefix(const Prefix &p, const Addr &a);

// The UDP checksum of @udp (header with checksum field as is, payload)
// between @src and @dst: the one's complement of the one's complement sum
// over the pseudo header and the datagram.  0 is sent as 0xffff.
uint16_t udp_checksum(const Addr &src, const Addr &dst,
                      const std::vector<uint8_t> &udp);

// IP packets (IPv4 with IP header, IPv6 with its fixed header, and a
// fragment header when fragmented) carrying a UDP datagram with @payload
// from @src:@sport to @dst:@dport.  @frag 0: one packet; else fragments of
// at most @frag bytes of the UDP datagram each (rounded down to 8).
std::vector<std::vector<uint8_t>>
ip_packets(const Addr &src, const Addr &dst, uint16_t sport, uint16_t dport,
           const std::vector<uint8_t> &payload, uint32_t frag, uint32_t ident);

// The self-test's receiver side: reassemble @pkts (any order) and return
// the UDP payload, checking lengths and the checksum; empty on failure.
bool ip_reassemble(const std::vector<std::vector<uint8_t>> &pkts,
                   const Addr &src, const Addr &dst, uint16_t dport,
                   std::vector<uint8_t> &payload, std::string *why);

} // namespace mroce::inject
