// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "craft.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <map>

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
  case Kind::ConnectFlood:
    return "connect-flood";
  case Kind::ConnectSpoof:
    return "connect-spoof";
  case Kind::ResetSpoof:
    return "reset-spoof";
  case Kind::CloseSpoof:
    return "close-spoof";
  case Kind::Window:
    return "window";
  case Kind::AckBody:
    return "ack-body";
  case Kind::Fragment:
    return "fragment";
  }
  return "?";
}

bool kind_needs_live(Kind k) {
  switch (k) {
  case Kind::ResetSpoof:
  case Kind::CloseSpoof:
  case Kind::Window:
  case Kind::AckBody:
  case Kind::Fragment:
    return true;
  default:
    return false;
  }
}

bool kind_needs_raw(Kind k) {
  switch (k) {
  case Kind::ConnectFlood:
  case Kind::ConnectSpoof:
  case Kind::ResetSpoof:
  case Kind::CloseSpoof:
  case Kind::Window:
  case Kind::AckBody:
  case Kind::Fragment:
    return true;
  default:
    return false;
  }
}

std::string_view group_name(int g) {
  static constexpr const char *names[kGroups] = {
      "drop_short", "drop_version", "drop_opcode", "drop_reserved",
      "drop_flags", "drop_length",  "drop_field",  "unknown",
      "unproven",   "challenged",   "seq_drop",    "ack_drop",
      "any_once"};
  return g >= 0 && g < kGroups ? names[g] : "?";
}

int drop_group(mroce_err e) {
  return kDropShort + (static_cast<int>(e) - MROCE_ERR_SHORT);
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
    p[12] = static_cast<uint8_t>(rng() % (MROCE_NACK_MAX + 1));
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

uint64_t nonzero64(std::mt19937_64 &rng) {
  uint64_t v;
  do
    v = rng();
  while (!v);
  return v;
}

// "Far" from a sequence base: a quarter of the sequence space.  Each
// window packet's broken field is at least this far outside its window,
// whatever the real base moved since the injector was told it.
constexpr uint32_t kFar = 1u << 30;
// How far the dsn base may move during an attack (packets) and still leave
// a "beyond the window" dsn beyond it.
constexpr uint32_t kDsnSlack = 1u << 24;

// A psn a little below the given base: late, never the slot of a psn the
// sender will use.
uint32_t late_psn(const Live &l, std::mt19937_64 &rng) {
  return l.psn_base - 1 - static_cast<uint32_t>(rng() % 1024);
}
// A dsn a quarter of the space behind: a duplicate to any receiver.
uint32_t dup_dsn(const Live &l, std::mt19937_64 &rng) {
  return l.dsn_base - kFar - static_cast<uint32_t>(rng() % (kFar / 2));
}

std::vector<uint8_t> encoded(const mroce_pkt &p, uint32_t extra) {
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + extra);
  b.resize(mroce_wire_encode(&p, b.data()));
  return b;
}

mroce_pkt live_hdr(uint8_t op, const Live &l, std::mt19937_64 &rng) {
  mroce_pkt p{};
  p.hdr.version = MROCE_VERSION;
  p.hdr.opcode = op;
  p.hdr.dst_conn = l.dst_conn;
  p.hdr.src_conn = l.src_conn;
  p.hdr.path = static_cast<uint16_t>(rng() % l.npaths);
  p.hdr.ts = static_cast<uint32_t>(rng());
  return p;
}

// A WRITE of 64 bytes on the live streams (never placed: the injector
// knows no rkey, and each is dropped before placement).
mroce_pkt live_write(const Live &l, std::mt19937_64 &rng) {
  mroce_pkt p = live_hdr(MROCE_OP_WRITE, l, rng);
  p.hdr.flags = MROCE_F_ACK_REQ | MROCE_F_LAST;
  p.hdr.dst_stream = l.dst_stream & MROCE_STREAM_MASK;
  p.hdr.src_stream = l.src_stream & MROCE_STREAM_MASK;
  p.hdr.msn = l.msn_base;
  p.data.va = rng() & 0x0000ffffffff0000ull;
  p.data.rkey = static_cast<uint32_t>(rng());
  p.data.total = 64;
  return p;
}

void append_random(std::vector<uint8_t> &b, uint32_t n, std::mt19937_64 &rng) {
  for (uint32_t i = 0; i < n; i++)
    b.push_back(static_cast<uint8_t>(rng()));
}

Crafted forged_connect(Kind k, const Live &l, std::mt19937_64 &rng) {
  Crafted c;
  mroce_pkt p{};
  p.hdr.version = MROCE_VERSION;
  p.hdr.opcode = MROCE_OP_CONNECT;
  // the peer's own id with another nonce (it "restarted"), or another id
  p.hdr.src_conn = k == Kind::ConnectSpoof && l.src_conn && (rng() & 1)
                       ? l.src_conn
                       : nonzero32(rng);
  p.hdr.ts = static_cast<uint32_t>(rng());
  p.hello.nonce = nonzero64(rng);
  // no cookie, or a guessed one (2^-64 to be right)
  bool guess = rng() & 1;
  p.hello.echo_nonce = guess ? nonzero64(rng) : 0;
  p.hello.max_paths = static_cast<uint16_t>(1 + rng() % MROCE_MAX_PATHS);
  p.hello.max_payload = MROCE_DEFAULT_PAYLOAD;
  p.hello.dsn_window = 1u << (8 + rng() % 13);
  c.bytes = encoded(p, 0);
  c.effect.n[kUnproven] = 1;
  c.spoof_net = k == Kind::ConnectFlood;
  c.broke = guess ? "guessed-cookie" : "no-cookie";
  return c;
}

Crafted forged_end(Kind k, const Live &l, std::mt19937_64 &rng) {
  Crafted c;
  mroce_pkt p =
      live_hdr(k == Kind::ResetSpoof ? MROCE_OP_RESET : MROCE_OP_CLOSE, l, rng);
  if (k == Kind::ResetSpoof) {
    p.reset.reason = 1 + static_cast<uint32_t>(rng() % 3);
    // no echo, or a guessed token
    p.reset.echo = (rng() & 3) ? nonzero64(rng) : 0;
    c.broke = p.reset.echo ? "guessed-token" : "no-token";
  } else {
    c.broke = "close";
  }
  c.bytes = encoded(p, 0);
  c.effect.n[kChallenged] = 1;
  return c;
}

Crafted forged_window(const Live &l, std::mt19937_64 &rng) {
  Crafted c;
  mroce_pkt p = live_write(l, rng);
  switch (rng() % 4) {
  case 0:
    p.hdr.psn = l.psn_base + kFar + static_cast<uint32_t>(rng() % (kFar / 2));
    p.hdr.dsn = dup_dsn(l, rng);
    c.broke = "psn-ahead";
    break;
  case 1:
    p.hdr.psn = l.psn_base - kFar - static_cast<uint32_t>(rng() % (kFar / 2));
    p.hdr.dsn = dup_dsn(l, rng);
    c.broke = "psn-behind";
    break;
  case 2:
    // [base + window, base + 2^31), with room for the base to move
    p.hdr.psn = late_psn(l, rng);
    p.hdr.dsn = l.dsn_base + MROCE_DSN_WINDOW + kDsnSlack +
                static_cast<uint32_t>(
                    rng() % (0x80000000u - MROCE_DSN_WINDOW - 2 * kDsnSlack));
    c.broke = "dsn-ahead";
    break;
  default:
    // a dsn at the window's top (new to the receiver, if its base has
    // not moved on), a msn far beyond the stream's window
    p.hdr.psn = late_psn(l, rng);
    p.hdr.dsn =
        l.dsn_base + MROCE_DSN_WINDOW - 1 - static_cast<uint32_t>(rng() % 64);
    p.hdr.msn = l.msn_base + kFar + static_cast<uint32_t>(rng() % (kFar / 2));
    c.broke = "msn-ahead";
    break;
  }
  c.bytes = encoded(p, 64);
  append_random(c.bytes, 64, rng);
  c.effect.n[kSeqDrop] = 1;
  return c;
}

// ACK path blocks acknowledging psns the receiver never sent.
void append_garbage_blocks(std::vector<uint8_t> &b, unsigned n, const Live &l,
                           std::mt19937_64 &rng) {
  mroce_ack_ext ext{};
  ext.rate_hint = 0; // "keep": the blocks are the attack, not the hint
  ext.npaths = static_cast<uint8_t>(n);
  size_t at = b.size();
  b.resize(at + MROCE_ACK_EXT_LEN + n * MROCE_ACK_PATH_LEN);
  mroce_wire_put_ack_ext(&ext, b.data() + at);
  for (unsigned i = 0; i < n; i++) {
    mroce_ack_path ap{};
    ap.path = static_cast<uint16_t>(rng() % l.npaths);
    ap.cum_psn = l.psn_base + kFar + static_cast<uint32_t>(rng() % (kFar / 2));
    ap.echo_ts = static_cast<uint32_t>(rng());
    ap.ack_delay = static_cast<uint32_t>(rng() % 100000);
    ap.rcv_count = static_cast<uint32_t>(rng());
    for (auto &w : ap.sack)
      w = rng();
    mroce_wire_put_ack_path(&ap, b.data() + at + MROCE_ACK_EXT_LEN +
                                     i * MROCE_ACK_PATH_LEN);
  }
}

Crafted forged_ack(const Live &l, std::mt19937_64 &rng) {
  Crafted c;
  unsigned n = 1 + static_cast<unsigned>(rng() % 4);
  if (rng() & 1) {
    mroce_pkt p = live_hdr(MROCE_OP_ACK, l, rng);
    // the extension is written with the blocks
    c.bytes = encoded(p, 0);
    c.bytes.resize(MROCE_HDR_LEN);
    append_garbage_blocks(c.bytes, n, l, rng);
    c.broke = "ack";
  } else {
    // data that is itself a duplicate (dsn far behind), with a body
    mroce_pkt p = live_write(l, rng);
    p.hdr.flags |= MROCE_F_ACK_BODY;
    p.hdr.psn = late_psn(l, rng);
    p.hdr.dsn = dup_dsn(l, rng);
    c.bytes = encoded(p, 0);
    append_garbage_blocks(c.bytes, n, l, rng);
    append_random(c.bytes, 64, rng);
    c.effect.n[kSeqDrop] = 1;
    c.broke = "body";
  }
  c.effect.n[kAckDrop] = n;
  return c;
}

} // namespace

Crafted craft(Kind k, const Live &live, std::mt19937_64 &rng) {
  Crafted c;
  switch (k) {
  case Kind::Truncated: {
    c.bytes = valid_write(rng, 0);
    // Anywhere from empty to one byte short of header + extension.
    c.bytes.resize(rng() % (MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN));
    c.expect = MROCE_ERR_SHORT;
    break;
  }
  case Kind::Oversized: {
    // A segment running past its message: total 64, payload 1..8000.
    uint32_t payload = 65 + static_cast<uint32_t>(rng() % 8000);
    c.bytes = valid_write(rng, payload);
    mroce_put_be32(64u, c.bytes.data() + MROCE_HDR_LEN + 16);
    c.expect = MROCE_ERR_LENGTH;
    break;
  }
  case Kind::Version: {
    c.bytes = (rng() & 1) ? valid_write(rng, 16) : valid_control(rng);
    // any of the 15 versions that are not ours
    uint8_t v = static_cast<uint8_t>(rng() % 15);
    if (v >= MROCE_VERSION)
      v++;
    c.bytes[0] = static_cast<uint8_t>(v << 4);
    c.expect = MROCE_ERR_VERSION;
    break;
  }
  case Kind::Conn:
    c.bytes =
        (rng() & 1) ? valid_write(rng, 1 + rng() % 1024) : valid_control(rng);
    c.expect = MROCE_OK;
    break;
  case Kind::Flags: {
    c.bytes = valid_write(rng, 8);
    // An undefined bit, or ECE, which only ACKs may carry.
    uint16_t bad = (rng() & 1) ? static_cast<uint16_t>(0x0040u << (rng() % 10))
                               : static_cast<uint16_t>(MROCE_F_ECE);
    uint16_t f = mroce_get_be16(c.bytes.data() + 2);
    mroce_put_be16(static_cast<uint16_t>(f | bad), c.bytes.data() + 2);
    c.expect = MROCE_ERR_FLAGS;
    break;
  }
  case Kind::Random: {
    c.bytes.resize(rng() % 1500);
    for (auto &b : c.bytes)
      b = static_cast<uint8_t>(rng());
    c.expect_any = true;
    c.effect.n[kAnyOnce] = 1;
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
      c.expect = MROCE_OK;
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
        c.bytes[at + 12] = static_cast<uint8_t>(MROCE_NACK_MAX + 1 + rng() % 8);
      }
      c.expect = MROCE_ERR_FIELD;
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
      c.expect = MROCE_ERR_LENGTH;
      break;
    }
    break;
  }
  case Kind::ConnectFlood:
  case Kind::ConnectSpoof:
    c = forged_connect(k, live, rng);
    break;
  case Kind::ResetSpoof:
  case Kind::CloseSpoof:
    c = forged_end(k, live, rng);
    break;
  case Kind::Window:
    c = forged_window(live, rng);
    break;
  case Kind::AckBody:
  case Kind::Fragment:
    c = forged_ack(live, rng);
    c.fragment = k == Kind::Fragment;
    break;
  }
  // A malformed kind counts where it was built to: refused for the reason
  // it was broken for, or decoded and dropped for its unknown connection.
  if (!kind_needs_raw(k) && !c.expect_any)
    c.effect.n[c.expect == MROCE_OK ? kUnknown : drop_group(c.expect)] = 1;
  return c;
}

bool verdict_matches(const Crafted &c, mroce_err *got) {
  mroce_pkt p{};
  *got = mroce_wire_decode(c.bytes.data(),
                           static_cast<uint32_t>(c.bytes.size()), &p);
  return c.expect_any || *got == c.expect;
}

namespace {

uint32_t be32_at(const std::vector<uint8_t> &b, size_t off) {
  return off + 4 <= b.size() ? mroce_get_be32(b.data() + off) : 0;
}
int32_t dist(uint32_t a, uint32_t base) {
  return static_cast<int32_t>(a - base);
}

bool fail(std::string *why, const std::string &s) {
  if (why)
    *why = s;
  return false;
}

// The garbage blocks after the ack extension at @at: every one names a
// usable path and acknowledges a psn far beyond anything sent.
bool blocks_hold(const std::vector<uint8_t> &b, size_t at, const Live &l,
                 uint32_t want, std::string *why) {
  if (at + MROCE_ACK_EXT_LEN > b.size())
    return fail(why, "no room for the ack extension");
  unsigned n = b[at + 4];
  if (n != want || b[at + 5] != 0)
    return fail(why, "block count differs from the recorded effect");
  for (unsigned i = 0; i < n; i++) {
    size_t o = at + MROCE_ACK_EXT_LEN + i * MROCE_ACK_PATH_LEN;
    if (o + MROCE_ACK_PATH_LEN > b.size())
      return fail(why, "block past the end");
    if (mroce_get_be16(b.data() + o) >= l.npaths)
      return fail(why, "block names a path beyond --npaths");
    if (dist(be32_at(b, o + 4), l.psn_base) < static_cast<int32_t>(kFar))
      return fail(why, "cum_psn not far beyond the psn base");
  }
  return true;
}

// A malformed kind's record against its bytes (protocol.md section 3
// offsets, read here rather than by the decoder): the one group it counts
// in follows from what was broken, and the break is in the bytes.
bool malformed_holds(Kind k, const Crafted &c, std::string *why) {
  const auto &b = c.bytes;
  int sum = 0, group = -1;
  for (int g = 0; g < kGroups; g++) {
    sum += static_cast<int>(c.effect.n[g]);
    if (c.effect.n[g])
      group = g;
  }
  if (sum != 1)
    return fail(why, "a malformed datagram counts exactly once");
  if (k == Kind::Random)
    return c.expect_any && group == kAnyOnce
               ? true
               : fail(why, "random bytes count as any_once");
  int want = c.expect == MROCE_OK ? kUnknown : drop_group(c.expect);
  if (c.expect_any || group != want)
    return fail(why, "effect is not the group of the intended verdict");
  const size_t data_hdr = MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN;
  uint8_t version = b.empty() ? 0 : b[0] >> 4;
  uint16_t flags = b.size() >= 4 ? mroce_get_be16(b.data() + 2) : 0;
  switch (k) {
  case Kind::Truncated:
    if (c.expect != MROCE_ERR_SHORT || b.size() >= data_hdr)
      return fail(why, "not cut inside header and extension");
    break;
  case Kind::Oversized:
    if (c.expect != MROCE_ERR_LENGTH || b.size() <= data_hdr ||
        b[1] != MROCE_OP_WRITE ||
        be32_at(b, MROCE_HDR_LEN + 16) >= b.size() - data_hdr)
      return fail(why, "payload not beyond the message's total");
    break;
  case Kind::Version:
    if (c.expect != MROCE_ERR_VERSION || version == MROCE_VERSION)
      return fail(why, "version not broken");
    break;
  case Kind::Conn:
    if (c.expect != MROCE_OK || version != MROCE_VERSION ||
        b.size() < MROCE_HDR_LEN || (flags & ~MROCE_F_ALL))
      return fail(why, "not a well-formed datagram");
    break;
  case Kind::Flags:
    if (c.expect != MROCE_ERR_FLAGS || b[1] != MROCE_OP_WRITE ||
        !(flags & (~MROCE_F_ALL | MROCE_F_ECE)))
      return fail(why, "no undefined flag and no ECE on a WRITE");
    break;
  case Kind::Blocks:
    if (c.expect != MROCE_OK && c.expect != MROCE_ERR_FIELD &&
        c.expect != MROCE_ERR_LENGTH)
      return fail(why, "blocks: not ok, field or length");
    if (version != MROCE_VERSION ||
        b.size() < MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + 30 * MROCE_ACK_PATH_LEN)
      return fail(why, "blocks: fewer than 30 path blocks");
    break;
  default:
    return fail(why, "not a malformed kind");
  }
  return true;
}

} // namespace

bool construction_holds(Kind k, const Crafted &c, const Live &l,
                        std::string *why) {
  const auto &b = c.bytes;
  if (!kind_needs_raw(k))
    return malformed_holds(k, c, why);
  if (b.size() < MROCE_HDR_LEN)
    return fail(why, "shorter than a header");
  uint8_t op = b[1];
  uint32_t dst = be32_at(b, 4), src = be32_at(b, 8);
  uint32_t psn = be32_at(b, 16), msn = be32_at(b, 32), dsn = be32_at(b, 36);
  auto live_ids = [&] { return dst == l.dst_conn && src == l.src_conn; };
  int sum = 0;
  for (auto n : c.effect.n)
    sum += static_cast<int>(n);
  switch (k) {
  case Kind::ConnectFlood:
  case Kind::ConnectSpoof:
    if (op != MROCE_OP_CONNECT || dst || !src ||
        !mroce_get_be64(b.data() + MROCE_HDR_LEN))
      return fail(why, "not a CONNECT with an id and a nonce");
    if (c.effect.n[kUnproven] != 1 || sum != 1)
      return fail(why, "a CONNECT must count once, as unproven");
    if (c.spoof_net != (k == Kind::ConnectFlood))
      return fail(why, "source address choice");
    return true;
  case Kind::ResetSpoof:
  case Kind::CloseSpoof:
    if (op != (k == Kind::ResetSpoof ? MROCE_OP_RESET : MROCE_OP_CLOSE) ||
        !live_ids())
      return fail(why, "not a RESET/CLOSE with the live ids");
    if (c.effect.n[kChallenged] != 1 || sum != 1)
      return fail(why, "a RESET or CLOSE must count once, as challenged");
    return true;
  case Kind::Window: {
    if (op != MROCE_OP_WRITE || !live_ids() || b[12] * 256 + b[13] >= l.npaths)
      return fail(why, "not a WRITE with the live ids on a live path");
    if (c.effect.n[kSeqDrop] != 1 || sum != 1)
      return fail(why, "a window packet must count once, as a drop");
    std::string_view s = c.broke;
    bool dsn_dup = dist(dsn, l.dsn_base) <= -static_cast<int32_t>(kFar);
    if (s == "psn-ahead")
      return dist(psn, l.psn_base) >= static_cast<int32_t>(kFar) && dsn_dup
                 ? true
                 : fail(why, "psn-ahead: psn or dsn");
    if (s == "psn-behind")
      return dist(psn, l.psn_base) <= -static_cast<int32_t>(kFar) && dsn_dup
                 ? true
                 : fail(why, "psn-behind: psn or dsn");
    if (s == "dsn-ahead") {
      uint32_t d = dsn - l.dsn_base;
      return d >= MROCE_DSN_WINDOW + kDsnSlack && d < 0x80000000u - kDsnSlack
                 ? true
                 : fail(why, "dsn-ahead: dsn not in [base+window, base+2^31)");
    }
    if (s == "msn-ahead") {
      uint32_t d = dsn - l.dsn_base, m = msn - l.msn_base;
      return d < MROCE_DSN_WINDOW && m >= kFar && m < 0x80000000u
                 ? true
                 : fail(why, "msn-ahead: msn or dsn");
    }
    return fail(why, "unknown window sub-kind");
  }
  case Kind::AckBody:
  case Kind::Fragment:
    if (!live_ids() || c.fragment != (k == Kind::Fragment))
      return fail(why, "not for the live ids, or fragmenting differs");
    if (op == MROCE_OP_ACK)
      return c.effect.n[kSeqDrop] == 0 &&
                     blocks_hold(b, MROCE_HDR_LEN, l, c.effect.n[kAckDrop],
                                 why) &&
                     b.size() == MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
                                     c.effect.n[kAckDrop] * MROCE_ACK_PATH_LEN
                 ? true
                 : fail(why, why && !why->empty() ? *why : "ACK length");
    if (op == MROCE_OP_WRITE &&
        (mroce_get_be16(b.data() + 2) & MROCE_F_ACK_BODY)) {
      if (c.effect.n[kSeqDrop] != 1 ||
          dist(dsn, l.dsn_base) > -static_cast<int32_t>(kFar))
        return fail(why, "body: the data must be a duplicate, counted once");
      return blocks_hold(b, MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN, l,
                         c.effect.n[kAckDrop], why);
    }
    return fail(why, "neither an ACK nor data with a body");
  default:
    return true; // the malformed kinds: their verdict is the decoder's test
  }
}

// ---- IP framing -----------------------------------------------------------

bool parse_addr(const std::string &s, Addr &out) {
  out = Addr{};
  if (inet_pton(AF_INET, s.c_str(), out.a.data()) == 1)
    return true;
  out.v6 = true;
  return inet_pton(AF_INET6, s.c_str(), out.a.data()) == 1;
}

std::string addr_str(const Addr &a) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.a.data(), buf, sizeof(buf));
  return buf;
}

bool parse_prefix(const std::string &s, Prefix &out) {
  size_t slash = s.find('/');
  if (slash == std::string::npos || !parse_addr(s.substr(0, slash), out.base))
    return false;
  char *end;
  unsigned long len = std::strtoul(s.c_str() + slash + 1, &end, 10);
  if (*end || len > (out.base.v6 ? 128u : 32u) ||
      len < (out.base.v6 ? 64u : 8u))
    return false;
  out.len = static_cast<unsigned>(len);
  return true;
}

bool in_prefix(const Prefix &p, const Addr &a) {
  if (p.base.v6 != a.v6)
    return false;
  for (unsigned i = 0; i < p.len; i++) {
    unsigned byte = i / 8, bit = 7 - i % 8;
    if (((p.base.a[byte] ^ a.a[byte]) >> bit) & 1)
      return false;
  }
  return true;
}

Addr random_host(const Prefix &p, std::mt19937_64 &rng) {
  Addr a = p.base;
  unsigned bits = a.v6 ? 128 : 32;
  for (unsigned i = p.len; i < bits; i++) {
    unsigned byte = i / 8, bit = 7 - i % 8;
    a.a[byte] =
        static_cast<uint8_t>((a.a[byte] & ~(1u << bit)) | ((rng() & 1) << bit));
  }
  if (!a.v6) {
    // not the network or broadcast address of the prefix, when it has any
    uint32_t host = (static_cast<uint32_t>(a.a[0]) << 24 | a.a[1] << 16 |
                     a.a[2] << 8 | a.a[3]);
    uint32_t mask = p.len >= 32 ? 0 : 0xffffffffu >> p.len;
    if (mask > 1 && ((host & mask) == 0 || (host & mask) == mask))
      a.a[3] ^= 2;
  } else if (p.len < 128) {
    a.a[15] |= 1; // never the subnet-router anycast address
  }
  return a;
}

namespace {

// One's complement sum of big-endian 16-bit words.
uint32_t sum16(const uint8_t *p, size_t n, uint32_t s = 0) {
  for (size_t i = 0; i + 1 < n; i += 2)
    s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  if (n & 1)
    s += static_cast<uint32_t>(p[n - 1] << 8);
  return s;
}
uint16_t fold(uint32_t s) {
  while (s >> 16)
    s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(s);
}
uint32_t pseudo_sum(const Addr &src, const Addr &dst, uint32_t udp_len) {
  size_t alen = src.v6 ? 16 : 4;
  uint32_t s = sum16(src.a.data(), alen);
  s = sum16(dst.a.data(), alen, s);
  s += IPPROTO_UDP;
  s += udp_len >> 16;
  s += udp_len & 0xffff;
  return s;
}

} // namespace

uint16_t udp_checksum(const Addr &src, const Addr &dst,
                      const std::vector<uint8_t> &udp) {
  uint32_t s = pseudo_sum(src, dst, static_cast<uint32_t>(udp.size()));
  s = sum16(udp.data(), udp.size(), s);
  uint16_t c = static_cast<uint16_t>(~fold(s));
  return c ? c : 0xffff;
}

std::vector<std::vector<uint8_t>>
ip_packets(const Addr &src, const Addr &dst, uint16_t sport, uint16_t dport,
           const std::vector<uint8_t> &payload, uint32_t frag, uint32_t ident) {
  std::vector<uint8_t> udp(8 + payload.size());
  mroce_put_be16(sport, udp.data());
  mroce_put_be16(dport, udp.data() + 2);
  mroce_put_be16(static_cast<uint16_t>(udp.size()), udp.data() + 4);
  std::copy(payload.begin(), payload.end(), udp.begin() + 8);
  mroce_put_be16(udp_checksum(src, dst, udp), udp.data() + 6);

  uint32_t piece = frag ? std::max<uint32_t>(8, frag & ~7u)
                        : static_cast<uint32_t>(udp.size());
  bool fragmented = piece < udp.size();
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t off = 0; off < udp.size(); off += piece) {
    uint32_t n =
        std::min<uint32_t>(piece, static_cast<uint32_t>(udp.size()) - off);
    bool more = off + n < udp.size();
    std::vector<uint8_t> pkt;
    if (!src.v6) {
      pkt.assign(20, 0);
      pkt[0] = 0x45;
      mroce_put_be16(static_cast<uint16_t>(20 + n), pkt.data() + 2);
      mroce_put_be16(static_cast<uint16_t>(ident), pkt.data() + 4);
      mroce_put_be16(static_cast<uint16_t>((more ? 0x2000 : 0) | off / 8),
                     pkt.data() + 6);
      pkt[8] = 64;
      pkt[9] = IPPROTO_UDP;
      std::copy(src.a.begin(), src.a.begin() + 4, pkt.begin() + 12);
      std::copy(dst.a.begin(), dst.a.begin() + 4, pkt.begin() + 16);
      mroce_put_be16(static_cast<uint16_t>(~fold(sum16(pkt.data(), 20))),
                     pkt.data() + 10);
    } else {
      uint32_t fh = fragmented ? 8 : 0;
      pkt.assign(40 + fh, 0);
      pkt[0] = 0x60;
      mroce_put_be16(static_cast<uint16_t>(fh + n), pkt.data() + 4);
      pkt[6] = fragmented ? 44 : IPPROTO_UDP; // next header
      pkt[7] = 64;
      std::copy(src.a.begin(), src.a.end(), pkt.begin() + 8);
      std::copy(dst.a.begin(), dst.a.end(), pkt.begin() + 24);
      if (fragmented) {
        pkt[40] = IPPROTO_UDP;
        mroce_put_be16(static_cast<uint16_t>(off | (more ? 1 : 0)),
                       pkt.data() + 42);
        mroce_put_be32(ident, pkt.data() + 44);
      }
    }
    pkt.insert(pkt.end(), udp.begin() + off, udp.begin() + off + n);
    out.push_back(std::move(pkt));
  }
  return out;
}

bool ip_reassemble(const std::vector<std::vector<uint8_t>> &pkts,
                   const Addr &src, const Addr &dst, uint16_t dport,
                   std::vector<uint8_t> &payload, std::string *why) {
  std::map<uint32_t, std::vector<uint8_t>> pieces;
  uint32_t end = 0;
  bool have_last = false;
  for (const auto &p : pkts) {
    uint32_t off, hl;
    bool more;
    size_t alen = src.v6 ? 16 : 4, sa = src.v6 ? 8 : 12, da = src.v6 ? 24 : 16;
    if (p.size() < (src.v6 ? 40u : 20u))
      return fail(why, "short IP packet");
    if (!std::equal(src.a.begin(), src.a.begin() + alen, p.begin() + sa) ||
        !std::equal(dst.a.begin(), dst.a.begin() + alen, p.begin() + da))
      return fail(why, "addresses");
    if (!src.v6) {
      if (p[0] != 0x45 || p[9] != IPPROTO_UDP ||
          fold(sum16(p.data(), 20)) != 0xffff ||
          mroce_get_be16(p.data() + 2) != p.size())
        return fail(why, "IPv4 header");
      uint16_t fo = mroce_get_be16(p.data() + 6);
      off = (fo & 0x1fff) * 8u;
      more = fo & 0x2000;
      hl = 20;
    } else {
      if ((p[0] >> 4) != 6 || mroce_get_be16(p.data() + 4) != p.size() - 40)
        return fail(why, "IPv6 header");
      if (p[6] == 44) {
        if (p.size() < 48 || p[40] != IPPROTO_UDP)
          return fail(why, "IPv6 fragment header");
        uint16_t fo = mroce_get_be16(p.data() + 42);
        off = fo & 0xfff8u;
        more = fo & 1;
        hl = 48;
      } else if (p[6] == IPPROTO_UDP) {
        off = 0;
        more = false;
        hl = 40;
      } else {
        return fail(why, "IPv6 next header");
      }
    }
    if (more && (p.size() - hl) % 8)
      return fail(why, "a non-last fragment not a multiple of 8");
    pieces[off].assign(p.begin() + hl, p.end());
    if (!more) {
      have_last = true;
      end = off + static_cast<uint32_t>(p.size() - hl);
    }
  }
  if (!have_last)
    return fail(why, "no last fragment");
  std::vector<uint8_t> udp;
  for (auto &[off, v] : pieces) {
    if (off != udp.size())
      return fail(why, "a hole or an overlap");
    udp.insert(udp.end(), v.begin(), v.end());
  }
  if (udp.size() != end || udp.size() < 8 ||
      mroce_get_be16(udp.data() + 4) != udp.size() ||
      mroce_get_be16(udp.data() + 2) != dport)
    return fail(why, "UDP length or port");
  // the receiver's check: the sum over everything, checksum included
  if (fold(sum16(udp.data(), udp.size(),
                 pseudo_sum(src, dst, static_cast<uint32_t>(udp.size())))) !=
      0xffff)
    return fail(why, "UDP checksum");
  payload.assign(udp.begin() + 8, udp.end());
  return true;
}

} // namespace mroce::inject
