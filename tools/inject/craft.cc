// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "craft.h"

#include <cstring>

namespace mroce::inject {

std::string_view kind_name(Kind k) {
  switch (k) {
  case Kind::Truncated:
    return "truncated";
  case Kind::Oversized:
    return "oversized";
  case Kind::Version:
    return "version";
  case Kind::Conn:
    return "conn";
  case Kind::Flags:
    return "flags";
  case Kind::Random:
    return "random";
  case Kind::Blocks:
    return "blocks";
  }
  return "?";
}

bool parse_kind(std::string_view s, Kind &out) {
  for (Kind k : kAllKinds) {
    if (kind_name(k) == s) {
      out = k;
      return true;
    }
  }
  return false;
}

namespace {

uint32_t nonzero32(std::mt19937_64 &rng) {
  uint32_t v;
  do
    v = static_cast<uint32_t>(rng());
  while (!v);
  return v;
}

// A valid WRITE packet (header, extension, payload) for connection dst.
std::vector<uint8_t> valid_write(std::mt19937_64 &rng, uint32_t payload) {
  mroce_pkt p{};
  p.hdr.version = MROCE_VERSION;
  p.hdr.opcode = MROCE_OP_WRITE;
  p.hdr.flags = MROCE_F_ACK_REQ | MROCE_F_LAST;
  p.hdr.dst_conn = nonzero32(rng);
  p.hdr.src_conn = nonzero32(rng);
  p.hdr.path = static_cast<uint16_t>(rng() % MROCE_MAX_PATHS);
  p.hdr.psn = static_cast<uint32_t>(rng());
  p.hdr.ts = static_cast<uint32_t>(rng());
  p.hdr.dst_stream = static_cast<uint32_t>(rng()) & MROCE_STREAM_MASK;
  p.hdr.src_stream = static_cast<uint32_t>(rng()) & MROCE_STREAM_MASK;
  p.hdr.msn = static_cast<uint32_t>(rng());
  p.hdr.dsn = static_cast<uint32_t>(rng());
  p.data.va = rng() & 0x0000ffffffff0000ull;
  p.data.rkey = static_cast<uint32_t>(rng());
  p.data.offset = 0;
  p.data.total = payload;
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + payload);
  uint32_t n = mroce_wire_encode(&p, b.data());
  b.resize(n + payload);
  for (uint32_t i = 0; i < payload; i++)
    b[n + i] = static_cast<uint8_t>(rng());
  return b;
}

// A valid ACK with no blocks, or a PROBE with padding.
std::vector<uint8_t> valid_control(std::mt19937_64 &rng) {
  mroce_pkt p{};
  p.hdr.version = MROCE_VERSION;
  p.hdr.dst_conn = nonzero32(rng);
  p.hdr.src_conn = nonzero32(rng);
  p.hdr.path = static_cast<uint16_t>(rng() % MROCE_MAX_PATHS);
  p.hdr.ts = static_cast<uint32_t>(rng());
  uint32_t pad = 0;
  if (rng() & 1) {
    p.hdr.opcode = MROCE_OP_ACK;
    p.ack.rate_hint = MROCE_RATE_NONE;
  } else {
    p.hdr.opcode = MROCE_OP_PROBE;
    p.hdr.flags = MROCE_F_ACK_REQ;
    pad = static_cast<uint32_t>(rng() % 256);
  }
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + pad);
  uint32_t n = mroce_wire_encode(&p, b.data());
  b.resize(n + pad, 0);
  return b;
}

// An ACK (@ack) or a WRITE with an ACK body of @npaths path blocks and
// @nstreams stream entries, valid; @payload: the WRITE's.
std::vector<uint8_t> with_blocks(std::mt19937_64 &rng, bool ack,
                                 unsigned npaths, unsigned nstreams,
                                 uint32_t payload) {
  std::vector<uint8_t> body(MROCE_ACK_EXT_LEN + npaths * MROCE_ACK_PATH_LEN +
                            nstreams * MROCE_ACK_STREAM_LEN);
  for (auto &x : body)
    x = static_cast<uint8_t>(rng());
  mroce_ack_ext e{static_cast<uint32_t>(rng()), static_cast<uint8_t>(npaths),
                  static_cast<uint8_t>(nstreams), 0};
  mroce_wire_put_ack_ext(&e, body.data());
  uint8_t *p = body.data() + MROCE_ACK_EXT_LEN;
  for (unsigned i = 0; i < npaths; i++, p += MROCE_ACK_PATH_LEN) {
    mroce_put_be16(static_cast<uint16_t>(rng() % MROCE_MAX_PATHS), p);
    mroce_put_be16(0, p + 2);
  }
  for (unsigned i = 0; i < nstreams; i++, p += MROCE_ACK_STREAM_LEN) {
    mroce_put_be32(static_cast<uint32_t>(rng()) & MROCE_STREAM_MASK, p);
    p[12] = static_cast<uint8_t>(rng() % (MROCE_ST_MAX + 1));
  }
  if (ack) {
    std::vector<uint8_t> b = valid_control(rng);
    while (b[1] != MROCE_OP_ACK)
      b = valid_control(rng);
    b.resize(MROCE_HDR_LEN);
    b.insert(b.end(), body.begin(), body.end());
    return b;
  }
  std::vector<uint8_t> b = valid_write(rng, payload);
  b[3] |= MROCE_F_ACK_BODY;
  b.insert(b.begin() + MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN, body.begin(),
           body.end());
  return b;
}

} // namespace

Crafted craft(Kind k, std::mt19937_64 &rng) {
  Crafted c;
  switch (k) {
  case Kind::Truncated: {
    c.bytes = valid_write(rng, 0);
    // Anywhere from empty to one byte short of header + extension.
    c.bytes.resize(rng() % (MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN));
    c.expect = MROCE_WIRE_SHORT;
    break;
  }
  case Kind::Oversized: {
    // A segment running past its message: total 64, payload 1..8000.
    uint32_t payload = 65 + static_cast<uint32_t>(rng() % 8000);
    c.bytes = valid_write(rng, payload);
    mroce_put_be32(64u, c.bytes.data() + MROCE_HDR_LEN + 16);
    c.expect = MROCE_WIRE_LENGTH;
    break;
  }
  case Kind::Version: {
    c.bytes = (rng() & 1) ? valid_write(rng, 16) : valid_control(rng);
    // any of the 15 versions that are not ours
    uint8_t v = static_cast<uint8_t>(rng() % 15);
    if (v >= MROCE_VERSION)
      v++;
    c.bytes[0] = static_cast<uint8_t>(v << 4);
    c.expect = MROCE_WIRE_VERSION;
    break;
  }
  case Kind::Conn:
    c.bytes =
        (rng() & 1) ? valid_write(rng, 1 + rng() % 1024) : valid_control(rng);
    c.expect = MROCE_WIRE_OK;
    break;
  case Kind::Flags: {
    c.bytes = valid_write(rng, 8);
    // An undefined bit, or ECE, which only ACKs may carry.
    uint16_t bad = (rng() & 1) ? static_cast<uint16_t>(0x0040u << (rng() % 10))
                               : static_cast<uint16_t>(MROCE_F_ECE);
    uint16_t f = mroce_get_be16(c.bytes.data() + 2);
    mroce_put_be16(static_cast<uint16_t>(f | bad), c.bytes.data() + 2);
    c.expect = MROCE_WIRE_FLAGS;
    break;
  }
  case Kind::Random: {
    c.bytes.resize(rng() % 1500);
    for (auto &b : c.bytes)
      b = static_cast<uint8_t>(rng());
    c.expect_any = true;
    break;
  }
  case Kind::Blocks: {
    // 30-64 path blocks: past 1500 bytes, so a 1500-byte link fragments
    unsigned np = 30 + static_cast<unsigned>(rng() % 35);
    unsigned ns = static_cast<unsigned>(rng() % 256);
    bool ack = rng() & 1;
    c.bytes =
        with_blocks(rng, ack, np, ns, static_cast<uint32_t>(rng() % 2000));
    const size_t blocks =
        MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + (ack ? 0 : MROCE_WRITE_EXT_LEN);
    switch (rng() % 3) {
    case 0:
      c.expect = MROCE_WIRE_OK;
      break;
    case 1: {
      // the last path block names path 64+, or the last entry a status
      // past the last one
      if (!ns || (rng() & 1)) {
        size_t at = blocks + (np - 1) * MROCE_ACK_PATH_LEN;
        mroce_put_be16(static_cast<uint16_t>(MROCE_MAX_PATHS + rng() % 100),
                       c.bytes.data() + at);
      } else {
        size_t at =
            blocks + np * MROCE_ACK_PATH_LEN + (ns - 1) * MROCE_ACK_STREAM_LEN;
        c.bytes[at + 12] = static_cast<uint8_t>(MROCE_ST_MAX + 1 + rng() % 8);
      }
      c.expect = MROCE_WIRE_FIELD;
      break;
    }
    default:
      // an ACK longer than its blocks; a body longer than the datagram
      if (ack) {
        c.bytes.resize(c.bytes.size() + 1 + rng() % 4000,
                       static_cast<uint8_t>(rng()));
      } else {
        size_t n = blocks - MROCE_ACK_EXT_LEN + 5; // nstreams
        c.bytes[n] = 255;
        c.bytes.resize(blocks + np * MROCE_ACK_PATH_LEN +
                       255 * MROCE_ACK_STREAM_LEN - 1);
      }
      c.expect = MROCE_WIRE_LENGTH;
      break;
    }
    break;
  }
  }
  return c;
}

bool verdict_matches(const Crafted &c, mroce_wire_err *got) {
  mroce_pkt p{};
  *got = mroce_wire_decode(c.bytes.data(),
                           static_cast<uint32_t>(c.bytes.size()), &p);
  return c.expect_any || *got == c.expect;
}

} // namespace mroce::inject
