// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// ACKs carried by data (Documentation/protocol.md §4 "ACK body", §11): the
// wire layout and its rejections, and the hold that lets a request/response
// exchange acknowledge each message with the answer instead of an ACK
// packet of its own.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness.h"

extern "C" {
#include "wire.h"
}

using namespace mroce::test;

namespace {

constexpr uint32_t kBody = MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN +
                           MROCE_ACK_STREAM_LEN;

// A WRITE of 10 payload bytes with an ACK body of one path block and one
// stream entry; @ext_end receives where the WRITE's extension ends.
std::vector<uint8_t> write_with_body(uint32_t *ext_end) {
  mroce_pkt p{};
  p.hdr.opcode = MROCE_OP_WRITE;
  p.hdr.flags = MROCE_F_LAST | MROCE_F_ACK_REQ | MROCE_F_ACK_BODY;
  p.hdr.dst_conn = 7;
  p.hdr.src_conn = 3;
  p.hdr.path = 2;
  p.hdr.psn = 40;
  p.hdr.dsn = 41;
  p.hdr.msn = 42;
  p.hdr.dst_stream = 0x12;
  p.hdr.src_stream = 0x34;
  p.data.va = 0x1000;
  p.data.rkey = 0x99;
  p.data.total = 10;
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + kBody + 10);
  uint32_t n = mroce_wire_encode(&p, b.data());
  *ext_end = n;
  mroce_ack_ext ext{};
  ext.rate_hint = 777;
  ext.npaths = 1;
  ext.nstreams = 1;
  mroce_wire_put_ack_ext(&ext, &b[n]);
  mroce_ack_path ap{};
  ap.path = 5;
  ap.cum_psn = 1234;
  ap.echo_ts = 99;
  ap.rcv_count = 8;
  ap.sack[0] = 0x6;
  mroce_wire_put_ack_path(&ap, &b[n + MROCE_ACK_EXT_LEN]);
  mroce_ack_stream as{0x55, 17, 0, MROCE_OK, 0, 0};
  mroce_wire_put_ack_stream(
      &as, &b[n + MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN]);
  b.resize(n + kBody + 10);
  for (uint32_t i = 0; i < 10; i++) b[n + kBody + i] = 0xa0 + i;
  return b;
}

mroce_err decode(const std::vector<uint8_t> &b, mroce_pkt *d) {
  return mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), d);
}

TEST(AckBody, DecodesBetweenExtensionAndPayload) {
  uint32_t ext_end;
  auto b = write_with_body(&ext_end);
  mroce_pkt d;
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.hdr.flags & MROCE_F_ACK_BODY, MROCE_F_ACK_BODY);
  EXPECT_EQ(d.ack_off, ext_end + MROCE_ACK_EXT_LEN);
  EXPECT_EQ(d.payload_off, ext_end + kBody);
  EXPECT_EQ(d.payload_len, 10u);
  EXPECT_EQ(b[d.payload_off], 0xa0);
  EXPECT_EQ(d.data.total, 10u);
  EXPECT_EQ(d.data.rkey, 0x99u);
  EXPECT_EQ(d.ack.rate_hint, 777u);
  ASSERT_EQ(d.ack.npaths, 1);
  ASSERT_EQ(d.ack.nstreams, 1);
  mroce_ack_path ap;
  mroce_wire_ack_path(b.data(), &d, 0, &ap);
  EXPECT_EQ(ap.path, 5);
  EXPECT_EQ(ap.cum_psn, 1234u);
  EXPECT_EQ(ap.sack[0], 0x6u);
  mroce_ack_stream as;
  mroce_wire_ack_stream(b.data(), &d, 0, &as);
  EXPECT_EQ(as.stream, 0x55u);
  EXPECT_EQ(as.msn, 17u);

  // Without the flag the same bytes are 10 + 80 bytes of a 10-byte message.
  b[3] &= ~MROCE_F_ACK_BODY;
  EXPECT_EQ(decode(b, &d), MROCE_ERR_LENGTH);
  // A data packet without a body has no ACK fields.
  b.resize(ext_end + 10);
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.ack.npaths, 0);
  EXPECT_EQ(d.ack_off, d.payload_off);
}

TEST(AckBody, Rejections) {
  uint32_t n;
  const auto good = write_with_body(&n);
  mroce_pkt d;
  ASSERT_EQ(decode(good, &d), MROCE_OK);
  struct Case {
    const char *what;
    std::vector<uint8_t> b;
    mroce_err want;
  };
  std::vector<Case> cases;
  auto b = good;
  b.resize(n + MROCE_ACK_EXT_LEN - 1);
  cases.push_back({"body shorter than its extension", b, MROCE_ERR_SHORT});
  b = good;
  b[n + 4] = 2;  // two path blocks, and the payload is too short for one
  cases.push_back({"blocks past the end", b, MROCE_ERR_LENGTH});
  b = good;
  b[n + 4] = MROCE_MAX_PATHS + 1;
  cases.push_back({"too many path blocks", b, MROCE_ERR_FIELD});
  b = good;
  b[n + 7] = 1;
  cases.push_back({"reserved body bits", b, MROCE_ERR_RESERVED});
  b = good;
  b[3] |= MROCE_F_ECE;
  cases.push_back({"ECE on data", b, MROCE_ERR_FLAGS});
  b = good;
  b[n + MROCE_ACK_EXT_LEN + 1] = MROCE_MAX_PATHS;  // path id 64
  cases.push_back({"bad path id in a block", b, MROCE_ERR_FIELD});
  b = good;
  b[MROCE_HDR_LEN + 15] = 10 + kBody;  // the body is not payload
  cases.push_back({"body counted as payload", b, MROCE_ERR_LENGTH});
  for (const auto &c : cases) EXPECT_EQ(decode(c.b, &d), c.want) << c.what;

  // Only sequenced opcodes carry one.
  for (uint8_t op : {MROCE_OP_CONNECT, MROCE_OP_PROBE, MROCE_OP_ACK,
                     MROCE_OP_CLOSE}) {
    mroce_pkt p{};
    p.hdr.opcode = op;
    p.hdr.dst_conn = op == MROCE_OP_CONNECT ? 0 : 1;  // it has none yet
    p.hdr.src_conn = 2;
    p.hello = {1, 0, 8, 9000, 4096, 0};
    std::vector<uint8_t> c(MROCE_MAX_HDR_LEN + kBody);
    c.resize(mroce_wire_encode(&p, c.data()));
    ASSERT_EQ(decode(c, &d), MROCE_OK) << int(op);
    c[3] |= MROCE_F_ACK_BODY;
    c.resize(c.size() + MROCE_ACK_EXT_LEN, 0);
    EXPECT_EQ(decode(c, &d), MROCE_ERR_FLAGS) << int(op);
  }
}

// ---- the hold ----

constexpr uint64_t kDelay = 2'000;      // one-way, ns
constexpr uint64_t kHold = 20'000;      // ack_hold_ns
constexpr uint32_t kLen = 64;

struct Exchange : ::testing::Test {
  Fabric f{5};
  uint32_t rkey[2] = {};

  void start(uint64_t hold, uint32_t bodies = 1) {
    auto cfg = test_cfg(1, 1024);
    cfg.ack_delay_ns = 100'000;  // the module's default: the hold is shorter
    cfg.ack_hold_ns = hold;
    cfg.ack_bodies = bodies;
    ASSERT_TRUE(one_path_pair(f, kDelay, cfg));
    rkey[0] = f.ep(0).add_region(0, 4096);
    rkey[1] = f.ep(1).add_region(0, 4096);
  }
  Qp &qp(int e) { return e ? f.ep(1).qp(2) : f.ep(0).qp(1); }

  // Endpoint @e writes @fill into the other's region, as perftest's
  // ib_write_lat does: no completion is awaited, the answer is.
  void write(int e, uint8_t fill, uint64_t cookie) {
    SendWr w = make_wr(MROCE_OP_WRITE, cookie, kLen, fill, rkey[1 - e]);
    ASSERT_EQ(f.ep(e).post_send(qp(e), std::move(w)), 0);
    f.ep(e).drain(f.now);
  }
  bool arrived(int e, uint8_t fill) {
    auto &m = f.ep(e).regions.at(rkey[e]).mem;
    return m[0] == fill && m[kLen - 1] == fill;
  }
  // One round trip of the ping-pong; its virtual duration.
  uint64_t round(uint8_t fill) {
    uint64_t t0 = f.now;
    write(0, fill, fill);
    EXPECT_TRUE(f.run([&] { return arrived(1, fill); }, 1'000'000));
    write(1, fill, fill);
    EXPECT_TRUE(f.run([&] { return arrived(0, fill); }, 1'000'000));
    return f.now - t0;
  }
  // Post one WRITE at endpoint 0 and run to its completion: how long.
  uint64_t lone_write(uint8_t fill) {
    uint64_t t0 = f.now;
    size_t done = qp(0).scq.size();
    write(0, fill, 1000 + fill);
    EXPECT_TRUE(f.run([&] { return qp(0).scq.size() > done; }, 10'000'000));
    EXPECT_EQ(qp(0).scq.back().status, MROCE_OK);
    return f.now - t0;
  }
  mroce_conn_stats st(int e) { return conn_stats(f.ep(e).conn); }
};

// With a hold, each message's ACK rides on the answer: after the first
// round no ACK packet is sent, every write completes, and a round trip
// costs the two one-way delays, as without a hold.
TEST_F(Exchange, AnswersCarryTheAcks) {
  start(kHold);
  round(1);
  round(2);
  const auto a0 = st(0), b0 = st(1);
  size_t done0 = qp(0).scq.size();
  const int rounds = 50;
  for (int i = 0; i < rounds; i++) {
    uint64_t t = round(static_cast<uint8_t>(10 + i));
    EXPECT_LE(t, 2 * kDelay + 500) << "round " << i;
  }
  EXPECT_EQ(st(0).tx_acks - a0.tx_acks, 0u);
  EXPECT_EQ(st(1).tx_acks - b0.tx_acks, 0u);
  EXPECT_EQ(st(1).ack_holds - b0.ack_holds, uint64_t(rounds));
  EXPECT_EQ(st(0).ack_holds - a0.ack_holds, uint64_t(rounds));
  EXPECT_EQ(st(1).tx_ack_bodies - b0.tx_ack_bodies, uint64_t(rounds));
  EXPECT_EQ(st(0).rx_ack_bodies - a0.rx_ack_bodies, uint64_t(rounds));
  // Endpoint 0's writes completed on the answers' ACK bodies.
  EXPECT_EQ(qp(0).scq.size() - done0, size_t(rounds));
  for (const auto &c : qp(0).scq) EXPECT_EQ(c.status, MROCE_OK);

  // A message no answer follows: its ACK waits out the hold, once...
  uint64_t t = lone_write(200);
  EXPECT_GE(t, kHold);
  EXPECT_LE(t, kHold + 2 * kDelay + 500);
  // ...and the next goes at once: the peer has not answered since.
  t = lone_write(201);
  EXPECT_LE(t, 2 * kDelay + 500);
  EXPECT_EQ(qp(0).error, 0);
  EXPECT_EQ(qp(1).error, 0);
}

// Without a hold every message is acknowledged at once by an ACK packet of
// its own, and nothing is owed when the answer leaves.
TEST_F(Exchange, NoHoldAcksEachMessageAtOnce) {
  start(0);
  round(1);
  const auto a0 = st(0), b0 = st(1);
  const int rounds = 20;
  for (int i = 0; i < rounds; i++)
    EXPECT_LE(round(static_cast<uint8_t>(10 + i)), 2 * kDelay + 500);
  EXPECT_EQ(st(1).tx_acks - b0.tx_acks, uint64_t(rounds));
  EXPECT_EQ(st(0).tx_acks - a0.tx_acks, uint64_t(rounds));
  EXPECT_EQ(st(0).ack_holds + st(1).ack_holds, 0u);
  EXPECT_LE(st(1).tx_ack_bodies - b0.tx_ack_bodies, 1u);
  EXPECT_LE(lone_write(100), 2 * kDelay + 500);
}

// A hold needs ACK bodies: with them off, nothing is held or carried.
TEST_F(Exchange, NoBodiesNoHold) {
  start(kHold, 0);
  for (int i = 0; i < 10; i++) round(static_cast<uint8_t>(10 + i));
  EXPECT_EQ(st(0).ack_holds + st(1).ack_holds, 0u);
  EXPECT_EQ(st(0).tx_ack_bodies + st(1).tx_ack_bodies, 0u);
  EXPECT_EQ(st(0).rx_ack_bodies + st(1).rx_ack_bodies, 0u);
  EXPECT_LE(lone_write(100), 2 * kDelay + 500);
}

// One-way traffic is never held: the receiver sends no data to carry it.
TEST_F(Exchange, OneWayTrafficIsNotHeld) {
  start(kHold);
  for (int i = 0; i < 20; i++)
    EXPECT_LE(lone_write(static_cast<uint8_t>(i)), 2 * kDelay + 500) << i;
  EXPECT_EQ(st(1).ack_holds, 0u);
  EXPECT_GE(st(1).tx_acks, 20u);
}

// A lost answer: the ACK it carried is lost with it, the held message is
// acknowledged by the retransmission's path state, and both sides complete.
TEST_F(Exchange, LostAnswerStillCompletes) {
  start(kHold);
  round(1);
  round(2);
  int dropped = 0;
  f.ep(1).drop = [&](Endpoint &, const uint8_t *b, uint32_t) {
    if (dropped || !(b[3] & MROCE_F_ACK_BODY)) return false;
    dropped++;
    return true;
  };
  write(0, 3, 3);
  ASSERT_TRUE(f.run([&] { return arrived(1, 3); }, 1'000'000));
  write(1, 3, 3);
  ASSERT_TRUE(f.run([&] { return arrived(0, 3); }, 100'000'000));
  EXPECT_EQ(dropped, 1);
  ASSERT_TRUE(f.run([&] { return qp(0).scq.size() >= 3; }, 100'000'000));
  for (const auto &c : qp(0).scq) EXPECT_EQ(c.status, MROCE_OK);
  EXPECT_EQ(qp(0).error, 0);
  EXPECT_EQ(qp(1).error, 0);
}

}  // namespace
