// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Decoding from a contiguous head (mroce_wire_head_len(),
// mroce_wire_decode_head()), as the module does from an skb whose linear
// area ends anywhere: every packet of a corpus of every opcode, valid and
// not, split at every offset, must decode exactly as the whole buffer does,
// and nothing may read past the contiguous bytes (each is an exact-size
// heap copy: the ASan build reports any read past it).  Then the core's
// receive path, with the head as its buffer and the payload reachable only
// through placement.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

extern "C" {
#include "wire.h"
}
#include "wire_packets.h"

using namespace mroce::test;

namespace {

using Bytes = std::vector<uint8_t>;

struct Case {
  std::string name;
  Bytes b;
};

using mroce::test::base;

// Path block @i and stream entry @i, each field distinct.
mroce_ack_path path_block(unsigned i) {
  mroce_ack_path a{};
  a.path = static_cast<uint16_t>(i % MROCE_MAX_PATHS);
  a.cum_psn = 0x1000 + i;
  a.echo_ts = 0x2000 + i;
  a.ack_delay = i * 3;
  a.ce_count = i;
  a.rcv_count = 100 + i;
  for (unsigned k = 0; k < MROCE_SACK_WORDS; k++)
    a.sack[k] = 0x0101010101010101ull * (i + k + 1);
  return a;
}

mroce_ack_stream stream_entry(unsigned i, uint8_t status = MROCE_OK) {
  return mroce_ack_stream{0x100 + i,
                          0x200 + i,
                          status ? 0x1ff + i : 0,
                          status,
                          static_cast<uint8_t>(i),
                          static_cast<uint16_t>(i)};
}

void put_blocks(Bytes &b, unsigned npaths, unsigned nstreams,
                uint8_t nack_at = 0xff) {
  for (unsigned i = 0; i < npaths; i++) {
    size_t at = b.size();
    b.resize(at + MROCE_ACK_PATH_LEN);
    auto ap = path_block(i);
    mroce_wire_put_ack_path(&ap, &b[at]);
  }
  for (unsigned i = 0; i < nstreams; i++) {
    size_t at = b.size();
    b.resize(at + MROCE_ACK_STREAM_LEN);
    auto as = stream_entry(i, i == nack_at ? MROCE_ERR_RNR : MROCE_OK);
    mroce_wire_put_ack_stream(&as, &b[at]);
  }
}

// Header and extension of @p, an ACK body of @npaths / @nstreams when
// @body (or the blocks of an ACK), then @payload bytes.
Bytes build(mroce_pkt p, bool body, unsigned npaths, unsigned nstreams,
            uint32_t payload, uint8_t nack_at = 0xff) {
  if (body) p.hdr.flags |= MROCE_F_ACK_BODY;
  if (p.hdr.opcode == MROCE_OP_ACK) {
    p.ack.npaths = static_cast<uint8_t>(npaths);
    p.ack.nstreams = static_cast<uint8_t>(nstreams);
  }
  Bytes b(MROCE_MAX_HDR_LEN);
  b.resize(mroce_wire_encode(&p, b.data()));
  if (body) {
    mroce_ack_ext e{5000, static_cast<uint8_t>(npaths),
                    static_cast<uint8_t>(nstreams), 0};
    size_t at = b.size();
    b.resize(at + MROCE_ACK_EXT_LEN);
    mroce_wire_put_ack_ext(&e, &b[at]);
  }
  if (body || p.hdr.opcode == MROCE_OP_ACK)
    put_blocks(b, npaths, nstreams, nack_at);
  for (uint32_t i = 0; i < payload; i++)
    b.push_back(static_cast<uint8_t>(0xc0 + i * 7));
  return b;
}

// A data packet of opcode @op carrying @payload bytes of a message that
// has them all (none where the opcode has no payload).
mroce_pkt data(uint8_t op, uint32_t payload) {
  mroce_pkt p = base(op);
  switch (op) {
    case MROCE_OP_READ_REQ:
      p.data.va = 0x4000;
      p.data.total = 1 << 20;
      break;
    case MROCE_OP_CMP_SWAP:
      p.data.compare = 1;
      [[fallthrough]];
    case MROCE_OP_FETCH_ADD:
      p.data.va = 64;
      p.data.swap_add = 2;
      break;
    case MROCE_OP_ATOMIC_RESP:
      p.data.orig = 0x55;
      break;
    default:
      p.data.total = payload + 8;
      p.data.offset = 8;
      if (op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM) {
        p.data.va = 0x9000;
        p.data.rkey = 0x77;
      }
      if (op == MROCE_OP_WRITE_IMM || op == MROCE_OP_SEND_IMM) p.data.imm = 9;
      if (op != MROCE_OP_WRITE && op != MROCE_OP_READ_RESP) p.data.rsn = 4;
      break;
  }
  p.hdr.flags = MROCE_F_ACK_REQ | MROCE_F_LAST;
  return p;
}

bool has_payload(uint8_t op) {
  return op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM ||
         op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM ||
         op == MROCE_OP_READ_RESP;
}

std::vector<Case> valid_corpus() {
  std::vector<Case> v;
  mroce_pkt p = base(MROCE_OP_CONNECT);
  p.hdr.dst_conn = 0;
  p.hello = {0x1234, 0, 8, 8192, 4096, 0};
  v.push_back({"connect", build(p, false, 0, 0, 0)});
  p = base(MROCE_OP_ACCEPT);
  p.hello = {0x1234, 0x5678, 8, 0, 4096, 125000};
  v.push_back({"accept", build(p, false, 0, 0, 0)});
  p = base(MROCE_OP_RESET);
  p.reset.reason = MROCE_RESET_CLOSED;
  v.push_back({"reset", build(p, false, 0, 0, 0)});
  v.push_back({"close", build(base(MROCE_OP_CLOSE), false, 0, 0, 0)});
  p = base(MROCE_OP_PROBE);
  p.hdr.flags = MROCE_F_ACK_REQ;
  v.push_back({"probe", build(p, false, 0, 0, 0)});
  v.push_back({"probe padded", build(p, false, 0, 0, 300)});
  p = base(MROCE_OP_PROBE_ACK);
  p.probe_ack = {0x99, 0x42};
  v.push_back({"probe ack", build(p, false, 0, 0, 0)});
  p = base(MROCE_OP_POLL);
  p.hdr.dst_stream = 7;
  p.hdr.src_stream = 8;
  p.hdr.msn = 3;
  v.push_back({"poll", build(p, false, 0, 0, 0)});

  p = base(MROCE_OP_ACK);
  p.hdr.flags = MROCE_F_ECE;
  p.ack.rate_hint = 12345;
  const unsigned acks[][2] = {{0, 0},  {1, 0},   {0, 1},   {3, 5},
                              {64, 0}, {0, 255}, {64, 255}};
  for (const auto &a : acks)
    v.push_back({"ack " + std::to_string(a[0]) + "/" + std::to_string(a[1]),
                 build(p, false, a[0], a[1], 0)});
  v.push_back({"ack nack", build(p, false, 2, 4, 0, 2)});

  const uint8_t ops[] = {
      MROCE_OP_WRITE,    MROCE_OP_WRITE_IMM, MROCE_OP_SEND,
      MROCE_OP_SEND_IMM, MROCE_OP_READ_REQ,  MROCE_OP_READ_RESP,
      MROCE_OP_CMP_SWAP, MROCE_OP_FETCH_ADD, MROCE_OP_ATOMIC_RESP};
  for (uint8_t op : ops) {
    char n[16];
    std::snprintf(n, sizeof(n), "op%02x", op);
    uint32_t pl = has_payload(op) ? 200 : 0;
    v.push_back({std::string(n), build(data(op, pl), false, 0, 0, pl)});
    v.push_back(
        {std::string(n) + " body 0/0", build(data(op, pl), true, 0, 0, pl)});
    v.push_back(
        {std::string(n) + " body 2/3", build(data(op, pl), true, 2, 3, pl, 1)});
  }
  v.push_back(
      {"write body 64/255", build(data(MROCE_OP_WRITE, 1), true, 64, 255, 1)});
  v.push_back(
      {"send body 4/0 1k", build(data(MROCE_OP_SEND, 1024), true, 4, 0, 1024)});
  v.push_back({"empty send body 1/1", build(
                                          [] {
                                            mroce_pkt q =
                                                data(MROCE_OP_SEND, 0);
                                            q.data.total = q.data.offset = 0;
                                            return q;
                                          }(),
                                          true, 1, 1, 0)});
  return v;
}

// Refused packets, each for a reason the decoder meets at a different
// depth: header, extension, ACK extension, blocks, lengths.
std::vector<Case> invalid_corpus() {
  std::vector<Case> v;
  auto ack = [](unsigned np, unsigned ns) {
    mroce_pkt p = base(MROCE_OP_ACK);
    return build(p, false, np, ns, 0);
  };
  auto body = [](unsigned np, unsigned ns, uint32_t pl) {
    return build(data(MROCE_OP_WRITE, pl), true, np, ns, pl);
  };
  const size_t ack_ext = MROCE_HDR_LEN;  // where an ACK's extension is
  const size_t body_ext = MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN;
  const size_t body_blocks = body_ext + MROCE_ACK_EXT_LEN;

  Bytes b = ack(2, 1);
  b.push_back(0);
  v.push_back({"ack one byte long", b});
  b = ack(2, 1);
  b.pop_back();
  v.push_back({"ack one byte short", b});
  // longer than any head (the 64 KB one: RefusedPacketsAreNotPulled)
  b = ack(2, 1);
  b.resize(MROCE_MAX_HEAD_LEN + 1000, 0xee);
  v.push_back({"long ack", b});
  b = ack(0, 0);
  b.resize(MROCE_MAX_HEAD_LEN + 1000, 0xee);
  v.push_back({"long empty ack", b});
  b = ack(1, 0);
  b[ack_ext + 4] = 65;  // npaths past the maximum
  b.resize(MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + 65 * MROCE_ACK_PATH_LEN);
  v.push_back({"ack 65 paths", b});
  b = ack(1, 0);
  b[ack_ext + 7] = 1;
  v.push_back({"ack ext flags", b});
  b = ack(3, 2);
  b[ack_ext + MROCE_ACK_EXT_LEN + 2 * MROCE_ACK_PATH_LEN + 1] = 64;
  v.push_back({"ack path id 64", b});
  b = ack(3, 2);
  b[ack_ext + MROCE_ACK_EXT_LEN + 2] = 1;
  v.push_back({"ack block reserved", b});
  b = ack(3, 2);
  b[b.size() - MROCE_ACK_STREAM_LEN + 12] = MROCE_NACK_MAX + 1;
  v.push_back({"ack status", b});
  b = ack(3, 2);
  b[b.size() - MROCE_ACK_STREAM_LEN] = 1;
  v.push_back({"ack stream id bits", b});
  b = ack(1, 0);
  b.resize(MROCE_HDR_LEN + 4);
  v.push_back({"ack cut in its ext", b});

  b = body(2, 2, 50);
  b.resize(body_blocks + 2 * MROCE_ACK_PATH_LEN + 5);
  v.push_back({"body cut in its blocks", b});
  b = body(2, 2, 0);
  b.resize(body_ext + 3);
  v.push_back({"body cut in its ext", b});
  b = body(2, 0, 10);
  b[body_ext + 4] = 200;  // 200 paths
  v.push_back({"body 200 paths", b});
  b = body(2, 0, 10);
  b[body_ext + 5] = 255;  // more entries than the packet holds
  v.push_back({"body longer than packet", b});
  b = body(2, 0, 10);
  b[body_ext + 6] = 0x80;
  v.push_back({"body ext flags", b});
  b = body(2, 3, 10);
  b[body_blocks + MROCE_ACK_PATH_LEN + 1] = 70;
  v.push_back({"body path id", b});
  b = body(2, 3, 10);
  b[body_blocks + 2 * MROCE_ACK_PATH_LEN + 2 * MROCE_ACK_STREAM_LEN + 12] = 9;
  v.push_back({"body status", b});
  b = body(1, 1, 10);
  b[MROCE_HDR_LEN + 19] = 0;  // total 18 -> 0: the segment falls outside
  v.push_back({"body then bad segment", b});
  b = body(64, 255, 1);
  b.pop_back();
  b.pop_back();
  v.push_back({"body 64/255 no room for payload", b});

  // ACK_BODY where the opcode may not carry one: the blocks are not asked
  mroce_pkt c = base(MROCE_OP_CONNECT);
  c.hdr.dst_conn = 0;
  c.hello = {0x1234, 0, 8, 8192, 4096, 0};
  b = build(c, false, 0, 0, 0);
  b[3] |= MROCE_F_ACK_BODY;
  Bytes tail(MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN);
  tail[4] = 1;
  b.insert(b.end(), tail.begin(), tail.end());
  v.push_back({"connect with ack body", b});
  b = ack(1, 1);
  b[3] |= MROCE_F_ACK_BODY;
  v.push_back({"ack with ack body flag", b});

  b = ack(1, 1);
  b[0] = (MROCE_VERSION + 1) << 4;
  v.push_back({"version", b});
  b = ack(1, 1);
  b[1] = 0x7f;
  v.push_back({"opcode", b});
  b = ack(1, 1);
  b[15] = 1;
  v.push_back({"header reserved", b});
  b = ack(1, 1);
  b[19] = 1;
  v.push_back({"psn on ack", b});
  v.push_back({"empty", {}});
  v.push_back({"39 bytes", Bytes(39, 0x10)});
  return v;
}

// A few byte flips of every valid packet, deterministic.
std::vector<Case> mutated_corpus(const std::vector<Case> &valid) {
  std::vector<Case> v;
  std::mt19937 rng(34);
  for (const auto &c : valid) {
    if (c.b.empty()) continue;
    int n = c.b.size() > 2048 ? 2 : 6;
    for (int i = 0; i < n; i++) {
      Bytes b = c.b;
      // mostly in the headers and blocks, where the decoder looks
      size_t span = std::min<size_t>(b.size(), 200);
      size_t at = rng() % (i % 2 ? b.size() : span);
      b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      v.push_back({c.name + " flip " + std::to_string(at), std::move(b)});
    }
  }
  return v;
}

std::unique_ptr<uint8_t[]> copy(const Bytes &b, uint32_t n) {
  std::unique_ptr<uint8_t[]> p(new uint8_t[n]);
  if (n) std::memcpy(p.get(), b.data(), n);
  return p;
}

// The packet's ACK blocks, read from @buf.
struct Blocks {
  std::vector<mroce_ack_path> paths;
  std::vector<mroce_ack_stream> streams;
};

Blocks read_blocks(const uint8_t *buf, const mroce_pkt &d) {
  Blocks r;
  r.paths.resize(d.ack.npaths);
  r.streams.resize(d.ack.nstreams);
  for (unsigned i = 0; i < d.ack.npaths; i++)
    mroce_wire_ack_path(buf, &d, i, &r.paths[i]);
  for (unsigned i = 0; i < d.ack.nstreams; i++)
    mroce_wire_ack_stream(buf, &d, i, &r.streams[i]);
  return r;
}

// Split @c at every offset; compare with the whole-buffer decode.
void check_splits(const Case &c) {
  const uint32_t len = static_cast<uint32_t>(c.b.size());
  auto whole = copy(c.b, len);
  mroce_pkt w;
  std::memset(&w, 0, sizeof(w));
  const mroce_err want = mroce_wire_decode(whole.get(), len, &w);
  Blocks wb;
  if (want == MROCE_OK) wb = read_blocks(whole.get(), w);

  uint32_t least = 0;  // the head asked for when nothing was linear
  for (uint32_t k = 0; k <= len; k++) {
    SCOPED_TRACE(c.name + ", " + std::to_string(k) + " of " +
                 std::to_string(len) + " bytes linear");
    auto buf = copy(c.b, k);
    uint32_t head = k;
    int rounds = 0;
    for (;;) {
      uint32_t need = mroce_wire_head_len(buf.get(), head, len);
      ASSERT_LE(need, len);
      ASSERT_LE(need, uint32_t(MROCE_MAX_HEAD_LEN));
      if (need <= head) break;
      ASSERT_LT(rounds, 3) << "more than three pulls";
      rounds++;
      buf = copy(c.b, need);  // pskb_may_pull: exactly what was asked
      head = need;
    }
    if (k == 0) least = head;
    mroce_pkt s;
    std::memset(&s, 0, sizeof(s));
    ASSERT_EQ(mroce_wire_decode_head(buf.get(), head, len, &s), want)
        << mroce_err_name(want);
    if (want != MROCE_OK) continue;
    ASSERT_EQ(std::memcmp(&s, &w, sizeof(s)), 0) << "decoded fields differ";
    // below the head every split ends with the same exact-size copy
    if (k != 0 && k < len) continue;
    Blocks sb = read_blocks(buf.get(), s);
    ASSERT_EQ(sb.paths.size(), wb.paths.size());
    for (size_t i = 0; i < sb.paths.size(); i++)
      ASSERT_EQ(std::memcmp(&sb.paths[i], &wb.paths[i], sizeof(sb.paths[i])), 0)
          << "path block " << i;
    for (size_t i = 0; i < sb.streams.size(); i++)
      ASSERT_EQ(
          std::memcmp(&sb.streams[i], &wb.streams[i], sizeof(sb.streams[i])), 0)
          << "stream entry " << i;
  }
  // Nothing linear: exactly the headers and blocks, never the payload.
  if (want == MROCE_OK) {
    EXPECT_EQ(least, w.hdr.opcode == MROCE_OP_ACK ? len : w.payload_off)
        << c.name;
  }
}

TEST(WireSplit, ValidPacketsDecodeAlikeAtEverySplit) {
  auto v = valid_corpus();
  ASSERT_GE(v.size(), 40u);
  for (const auto &c : v) {
    mroce_pkt d;
    ASSERT_EQ(
        mroce_wire_decode(c.b.data(), static_cast<uint32_t>(c.b.size()), &d),
        MROCE_OK)
        << c.name;
    check_splits(c);
    if (HasFatalFailure()) return;
  }
}

TEST(WireSplit, InvalidPacketsAreRefusedAlikeAtEverySplit) {
  auto v = invalid_corpus();
  for (const auto &c : v) {
    mroce_pkt d;
    EXPECT_NE(
        mroce_wire_decode(c.b.data(), static_cast<uint32_t>(c.b.size()), &d),
        MROCE_OK)
        << c.name;
    check_splits(c);
    if (HasFatalFailure()) return;
  }
}

TEST(WireSplit, MutatedPacketsDecodeAlikeAtEverySplit) {
  auto v = mutated_corpus(valid_corpus());
  for (const auto &c : v) {
    check_splits(c);
    if (HasFatalFailure()) return;
  }
}

uint32_t least_head(const Bytes &b) {
  return static_cast<uint32_t>(
      pull_head(b.data(), static_cast<uint32_t>(b.size()), 0).size());
}

// What is pulled for refused packets: bounded before anything is read.
TEST(WireSplit, RefusedPacketsAreNotPulled) {
  const uint32_t ack_fixed = MROCE_HDR_LEN + MROCE_ACK_EXT_LEN;
  const uint32_t body_fixed =
      MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN + MROCE_ACK_EXT_LEN;
  for (const auto &c : invalid_corpus()) {
    SCOPED_TRACE(c.name);
    uint32_t h = least_head(c.b);
    const std::string &n = c.name;
    uint32_t want = h;  // the others: whatever the length allows
    if (n == "long ack" || n == "long empty ack" || n == "ack one byte long" ||
        n == "ack one byte short" || n == "ack 65 paths" ||
        n == "ack ext flags")
      want = ack_fixed;
    else if (n == "body 200 paths" || n == "body longer than packet" ||
             n == "body ext flags" || n == "body 64/255 no room for payload")
      want = body_fixed;
    else if (n == "connect with ack body")
      want = MROCE_HDR_LEN + MROCE_HELLO_EXT_LEN;
    else if (n == "version" || n == "opcode")
      want = MROCE_HDR_LEN;
    EXPECT_EQ(h, want);
    EXPECT_LE(h, uint32_t(MROCE_MAX_HEAD_LEN));
  }
  // the 64 KB ACK: refused for its length with 48 bytes linear
  Bytes big = build(base(MROCE_OP_ACK), false, 2, 1, 0);
  big.resize(65535);
  auto buf = copy(big, ack_fixed);
  mroce_pkt d;
  EXPECT_EQ(mroce_wire_decode_head(buf.get(), ack_fixed, 65535, &d),
            MROCE_ERR_LENGTH);
  // the largest head there is: a full ACK body
  Bytes full = build(data(MROCE_OP_WRITE, 1), true, 64, 255, 1);
  EXPECT_EQ(least_head(full), uint32_t(MROCE_MAX_HEAD_LEN));
}

// Fewer contiguous bytes than asked: refused as short, nothing read past.
TEST(WireSplit, HeadShorterThanAskedIsShort) {
  for (const auto &c : valid_corpus()) {
    SCOPED_TRACE(c.name);
    const uint32_t len = static_cast<uint32_t>(c.b.size());
    uint32_t h = least_head(c.b);
    ASSERT_GE(h, uint32_t(MROCE_HDR_LEN));
    for (uint32_t k : {0u, h - 1}) {
      auto buf = copy(c.b, k);
      mroce_pkt d;
      EXPECT_EQ(mroce_wire_decode_head(buf.get(), k, len, &d),
                MROCE_ERR_SHORT);
    }
  }
}

// ---- the core's receive path ----

// Traffic both ways on four paths with ACK bodies, every packet received
// as the module receives it (harness.cc, Fabric::step): the core gets an
// exact-size copy of the head, placement the datagram.  Every byte must
// land, and ACKs and ACK bodies must have been taken from the head.
TEST(WireSplit, ReceivePathReadsOnlyTheHead) {
  Fabric f(34);
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(4, Route{});
    for (int i = 0; i < 4; i++) {
      f.routes[d][i].delay_ns = 5'000 + 2'000 * i;
      f.routes[d][i].gbps = 10;
    }
  }
  auto cfg = test_cfg(4, 1024);
  cfg.ack_bodies = 1;
  cfg.ack_hold_ns = 20'000;
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  Endpoint &a = f.ep(0), &b = f.ep(1);
  uint32_t ka = a.add_region(0x10000, 64 * 1024);
  uint32_t kb = b.add_region(0x20000, 64 * 1024);
  std::vector<uint8_t> rbuf[2];
  rbuf[0].assign(8 * 5000, 0);
  rbuf[1].assign(8 * 5000, 0);
  for (int i = 0; i < 8; i++) {
    a.post_recv(a.qp(1), 100 + i, &rbuf[0][i * 5000], 5000);
    b.post_recv(b.qp(2), 200 + i, &rbuf[1][i * 5000], 5000);
  }
  uint64_t rx0 = f.rx_split;
  // a request/response exchange: each answer carries the ACK it owes
  for (int i = 0; i < 8; i++) {
    uint8_t v = static_cast<uint8_t>(0x10 + i);
    SendWr w = make_wr(MROCE_OP_WRITE, 2 * i, 6000, 0, kb, 0x20000 + i * 6000);
    ASSERT_EQ(a.post_send(a.qp(1), pattern(w, v)), 0);
    SendWr s2 = make_wr(MROCE_OP_SEND, 2 * i + 1, 3000 + i, 0);
    ASSERT_EQ(a.post_send(a.qp(1), pattern(s2, v)), 0);
    a.drain(f.now);
    ASSERT_TRUE(
        f.run([&] { return b.qp(2).rcq.size() == size_t(i + 1); }, 100'000'000))
        << "round " << i;
    SendWr s = make_wr(MROCE_OP_SEND, 2 * i + 1, 4000 + i, 0);
    ASSERT_EQ(b.post_send(b.qp(2), pattern(s, v)), 0);
    b.drain(f.now);
    ASSERT_TRUE(
        f.run([&] { return a.qp(1).rcq.size() == size_t(i + 1); }, 100'000'000))
        << "round " << i;
  }
  ASSERT_TRUE(
      f.run([&] { return a.qp(1).scq.size() == 16 && b.qp(2).scq.size() == 8; },
            100'000'000));
  std::vector<uint8_t> got(6000);
  SendWr rd = make_wr(MROCE_OP_READ_REQ, 99, 6000, 0, kb, 0x20000 + 7 * 6000);
  rd.data.clear();
  rd.read_dst = got.data();
  rd.read_len = 6000;
  ASSERT_EQ(a.post_send(a.qp(1), std::move(rd)), 0);
  a.drain(f.now);
  ASSERT_TRUE(f.run([&] { return a.qp(1).scq.size() == 17; }, 100'000'000));

  for (const auto &c : a.qp(1).scq) EXPECT_EQ(c.status, MROCE_OK);
  for (const auto &c : b.qp(2).scq) EXPECT_EQ(c.status, MROCE_OK);
  for (int i = 0; i < 8; i++) {
    uint8_t v = static_cast<uint8_t>(0x10 + i);
    const uint8_t *m = &b.regions.at(kb).mem[i * 6000];
    for (uint32_t j = 0; j < 6000; j++)
      ASSERT_EQ(m[j], static_cast<uint8_t>(v + j * 7)) << i << " " << j;
    for (uint32_t j = 0; j < 4000u + i; j++)
      ASSERT_EQ(rbuf[0][i * 5000 + j], static_cast<uint8_t>(v + j * 7));
    for (uint32_t j = 0; j < 3000u + i; j++)
      ASSERT_EQ(rbuf[1][i * 5000 + j], static_cast<uint8_t>(v + j * 7));
    EXPECT_EQ(a.qp(1).rcq[i].byte_len, 4000u + i);
    EXPECT_EQ(b.qp(2).rcq[i].byte_len, 3000u + i);
  }
  for (uint32_t j = 0; j < 6000; j++)
    ASSERT_EQ(got[j], static_cast<uint8_t>(0x17 + j * 7));
  (void)ka;

  auto sa = conn_stats(a.conn), sb = conn_stats(b.conn);
  // ACK bodies and ACK packets were both received from heads alone
  EXPECT_GT(sa.rx_ack_bodies + sb.rx_ack_bodies, 0u);
  EXPECT_GT(sa.rx_acks + sb.rx_acks, 0u);
  EXPECT_GT(f.rx_split - rx0, 0u);
  EXPECT_EQ(a.rx_bad + b.rx_bad, 0u);
  EXPECT_EQ(a.qp(1).error, 0);
  EXPECT_EQ(b.qp(2).error, 0);
}

}  // namespace
