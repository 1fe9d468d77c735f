// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// The threat model of Documentation/protocol.md 15, handshake and teardown:
// an off-path host that spoofs the peer's address and sends whatever it
// likes must neither end nor stall a connection, and an endpoint that has
// really lost its connection must still end its peer's at once.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness.h"

using namespace mroce::test;

namespace {

std::vector<uint8_t> encode(const mroce_pkt &p) {
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN);
  b.resize(mroce_wire_encode(&p, b.data()));
  return b;
}

struct Hostile : ::testing::Test {
  Fabric f{23};
  uint32_t rkey = 0;
  static constexpr uint32_t kLen = 256 << 10;

  void SetUp() override {
    ASSERT_TRUE(routed_pair(f, 4, 10'000));
    rkey = B().add_region(0x10000, kLen);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }

  // A spoofed packet "from" endpoint @from's address to the other one.
  void forge(int from, const mroce_pkt &p) {
    auto b = encode(p);
    f.send(from, 50000, b.data(), static_cast<uint32_t>(b.size()), false);
  }
  mroce_pkt hdr(uint8_t op, uint32_t dst, uint32_t src) {
    mroce_pkt p{};
    p.hdr.opcode = op;
    p.hdr.dst_conn = dst;
    p.hdr.src_conn = src;
    return p;
  }
  // A WRITE of kLen bytes from A to B, completed without error, its bytes
  // all placed, while @attack runs once the transfer is under way.
  void transfer_under(const std::function<void()> &attack) {
    ASSERT_EQ(A().post_send(A().qp(1),
                            make_wr(MROCE_OP_WRITE, 7, kLen, 0x5a, rkey,
                                    0x10000)),
              0);
    A().drain(f.now);
    ASSERT_TRUE(f.run([&] { return B().regions[rkey].mem[4096] == 0x5a; },
                      50'000'000));
    attack();
    ASSERT_TRUE(f.run([&] { return !A().qp(1).scq.empty(); }, 500'000'000));
    EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
    EXPECT_EQ(A().qp(1).error, 0);
    EXPECT_EQ(B().qp(2).error, 0);
    for (uint32_t i = 0; i < kLen; i += 997)
      ASSERT_EQ(B().regions[rkey].mem[i], 0x5a) << "byte " << i;
    EXPECT_EQ(A().conn->state, MROCE_CONN_ESTABLISHED);
    EXPECT_EQ(B().conn->state, MROCE_CONN_ESTABLISHED);
  }
};

// Every handshake went through the cookie: one CHALLENGE, then the CONNECT
// echoing it made the connection.
TEST_F(Hostile, HandshakeTakesOneCookie) {
  EXPECT_EQ(B().cookie_challenges, 1u);
  EXPECT_NE(A().conn->cookie, 0u);
  EXPECT_EQ(A().conn->hello_tries, 1u);  // the cookie's CONNECT cost no try
}

// A spoofed CONNECT from A's address with another nonce (the old protocol
// failed the connection: "the peer restarted") only earns a CHALLENGE,
// sent to A, which ignores it.
TEST_F(Hostile, SpoofedConnectEndsNothing) {
  const uint64_t challenges = B().cookie_challenges;
  transfer_under([&] {
    for (uint64_t echo : {uint64_t{0}, uint64_t{0x1111}, A().conn->cookie}) {
      mroce_pkt p = hdr(MROCE_OP_CONNECT, 0, A().conn->id ^ 1);
      p.hello = {A().conn->nonce ^ 0x55, echo, 4, 0, 4096, 0};
      forge(0, p);
      // the same id with another nonce, and another id with the same one
      p.hdr.src_conn = A().conn->id;
      forge(0, p);
      p.hdr.src_conn = A().conn->id + 1;
      p.hello.nonce = A().conn->nonce;
      forge(0, p);
    }
  });
  EXPECT_EQ(B().cookie_challenges, challenges + 9);
  EXPECT_EQ(conn_stats(B().conn).rx_challenged, 0u);
}

// RESET and CLOSE from the peer's ids (an attacker that learnt both) end
// nothing: B challenges A, and A, alive, does not echo.
TEST_F(Hostile, ForgedResetAndCloseAreChallenged) {
  transfer_under([&] {
    mroce_pkt r = hdr(MROCE_OP_RESET, B().conn->id, A().conn->id);
    r.reset.reason = MROCE_RESET_CLOSED;
    forge(0, r);
    r.reset.echo = 0x1234;  // a guessed echo
    forge(0, r);
    forge(0, hdr(MROCE_OP_CLOSE, B().conn->id, A().conn->id));
  });
  auto s = conn_stats(B().conn);
  EXPECT_EQ(s.rx_challenged, 3u);
  EXPECT_GE(s.tx_challenges, 1u);
  EXPECT_LE(s.tx_challenges, 3u);
  EXPECT_EQ(s.rx_proven_end, 0u);
  EXPECT_EQ(B().conn->close_seen, 1u);  // remembered until a proof comes
}

// An ACK with the live ids but no block about packets in flight carries
// no believable rate hint: a stream of them would hold the sender to
// 1 KB/s (every real ACK lifts it again, but a packet paced before that
// waits a second).
TEST_F(Hostile, ForgedAckHintIsNotBelieved) {
  const uint64_t t0 = f.now;
  transfer_under([&] {
    mroce_pkt a = hdr(MROCE_OP_ACK, A().conn->id, B().conn->id);
    a.ack.rate_hint = 1;  // 1000 B/s
    for (int i = 0; i < 20000 && A().qp(1).scq.empty(); i++) {
      forge(1, a);
      f.run([&] { return !A().qp(1).scq.empty(); }, 2'000);
      ASSERT_NE(A().conn->rate_hint, 1u);
    }
  });
  EXPECT_LT(f.now - t0, 20'000'000u);
}

// The opener takes only the RESET that answers its own CONNECT.
TEST(HostileOpen, ConnectingOpenerNeedsItsNonceEchoed) {
  Fabric f(5);
  f.routes[0].assign(1, Route{});
  f.routes[1].assign(1, Route{});
  for (auto &r : f.routes[0]) r.delay_ns = 10'000;
  for (auto &r : f.routes[1]) r.delay_ns = 10'000;
  auto cfg = test_cfg(4, 1024);
  Endpoint &A = f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  f.routes[0][0].up = false;  // A's CONNECTs go nowhere
  mroce_conn_open(A.conn, f.now);
  A.drain(f.now);
  mroce_pkt r{};
  r.hdr.opcode = MROCE_OP_RESET;
  r.hdr.dst_conn = A.conn->id;
  r.reset.reason = MROCE_RESET_VERSION;
  auto b = encode(r);
  f.send(1, 4797, b.data(), static_cast<uint32_t>(b.size()), false);
  f.run([] { return false; }, 100'000);
  EXPECT_EQ(A.conn->state, MROCE_CONN_CONNECTING);
  r.reset.echo = A.conn->nonce;  // the real answer to our CONNECT
  b = encode(r);
  f.send(1, 4797, b.data(), static_cast<uint32_t>(b.size()), false);
  f.run([] { return false; }, 100'000);
  EXPECT_EQ(A.conn->state, MROCE_CONN_FAILED);
}

// A's end of the connection is really gone (A restarted: a new id, and
// the old one answered with RESETs by A's glue): B's CHALLENGE is echoed,
// and B fails within a few round trips, long before its dead timer.
TEST_F(Hostile, LostPeerEndsItsPeerAtOnce) {
  ASSERT_EQ(A().post_send(A().qp(1),
                          make_wr(MROCE_OP_WRITE, 7, kLen, 0x5a, rkey,
                                  0x10000)),
            0);
  A().drain(f.now);
  ASSERT_TRUE(f.run([&] { return !A().qp(1).scq.empty(); }, 50'000'000));
  // B writes to A; A forgets its connection before the packets arrive
  uint32_t ka = A().add_region(0x20000, 4096);
  ASSERT_EQ(B().post_send(B().qp(2),
                          make_wr(MROCE_OP_WRITE, 9, 4096, 1, ka, 0x20000)),
            0);
  A().conn->id ^= 0x80000000u;
  B().drain(f.now);
  const uint64_t t0 = f.now;
  ASSERT_TRUE(f.run([&] { return B().conn->state == MROCE_CONN_FAILED; },
                    50'000'000));
  EXPECT_LT(f.now - t0, 5'000'000u);  // dead_ns is 200 ms here
  EXPECT_EQ(conn_stats(B().conn).rx_proven_end, 1u);
  EXPECT_GE(conn_stats(B().conn).rx_challenged, 1u);
  ASSERT_FALSE(B().qp(2).scq.empty());
  EXPECT_EQ(B().qp(2).scq[0].status, MROCE_ERR_RETRY_EXC);
}

// A peer that closed (idle, no QPs) and forgot its id: the CLOSE is
// proven by the echoed CHALLENGE and the connection ends as closed.
TEST_F(Hostile, RealCloseEndsClosed) {
  mroce_conn_close(A().conn);
  A().drain(f.now);
  A().conn->id ^= 0x80000000u;  // its id is gone, as the module unhashes it
  ASSERT_TRUE(f.run([&] { return B().conn->state == MROCE_CONN_CLOSED; },
                    50'000'000));
  EXPECT_EQ(conn_stats(B().conn).rx_proven_end, 1u);
  EXPECT_EQ(B().events.back(), MROCE_EV_CLOSED);
}

}  // namespace
