// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// The two-lock contract (conn.h, "Two locks"), as the harness emulates the
// module: data under the receive lock alone, ACKs under the send lock alone,
// and every callback under the lock it needs (the harness aborts if not).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "harness.h"

using namespace mroce::test;

namespace {

struct Split : ::testing::Test {
  Fabric f{11};
  void SetUp() override { ASSERT_TRUE(routed_pair(f, 4, 10'000)); }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }
  SendWr write(uint64_t cookie, uint32_t rkey, uint64_t va, uint32_t len,
               uint8_t fill) {
    return make_wr(MROCE_OP_WRITE, cookie, len, fill, rkey, va);
  }
  // ib_write_lat's pattern, 50 round trips: each side writes as soon as
  // the other's data is placed; posted and drained with both locks, or
  // rung as the module's doorbell does (@ring).
  void ping_pong(bool ring) {
    uint32_t ka = A().add_region(0x1000, 4096);
    uint32_t kb = B().add_region(0x2000, 4096);
    auto post = [&](Endpoint &e, Qp &q, SendWr w) {
      if (ring) return e.ring(q, std::move(w));
      int rc = e.post_send(q, std::move(w));
      e.drain(f.now);
      return rc;
    };
    for (int i = 0; i < 50; i++) {
      uint8_t v = static_cast<uint8_t>(i + 1);
      ASSERT_EQ(post(A(), A().qp(1), write(2 * i, kb, 0x2000, 64, v)), 0);
      ASSERT_TRUE(
          f.run([&] { return B().regions[kb].mem[63] == v; }, 100'000'000));
      ASSERT_EQ(post(B(), B().qp(2), write(2 * i + 1, ka, 0x1000, 64, v)), 0);
      ASSERT_TRUE(
          f.run([&] { return A().regions[ka].mem[63] == v; }, 100'000'000));
    }
    ASSERT_TRUE(f.run(
        [&] {
          return A().qp(1).scq.size() == 50 && B().qp(2).scq.size() == 50;
        },
        100'000'000));
    for (auto &c : A().qp(1).scq)
      EXPECT_EQ(c.status, MROCE_WC_OK);
    for (auto &c : B().qp(2).scq)
      EXPECT_EQ(c.status, MROCE_WC_OK);
  }
};

// ib_write_lat's pattern: neither side ever needs its other lock.
TEST_F(Split, PingPongTakesOneLockPerPacket) {
  uint64_t up_a = A().upgrades, up_b = B().upgrades;
  ping_pong(false);
  EXPECT_GE(A().rx_only, 50u);
  EXPECT_GE(B().rx_only, 50u);
  EXPECT_GE(A().ack_only, 50u);
  EXPECT_GE(B().ack_only, 50u);
  EXPECT_EQ(A().upgrades, up_a);
  EXPECT_EQ(B().upgrades, up_b);
  EXPECT_EQ(A().ack_refused + B().ack_refused, 0u);
}

// Response jobs freed by ACKs taken under the send lock alone: the
// responder's frontier moves on in the pass with both locks that follows.
TEST_F(Split, ReadsFreedByAckOnlyReceiptsAllComplete) {
  uint32_t rkey = B().add_region(0x40000, 1 << 16);
  auto &mem = B().regions[rkey].mem;
  for (size_t i = 0; i < mem.size(); i++)
    mem[i] = static_cast<uint8_t>(i * 29);
  std::vector<uint8_t> dst(64 * 2048);
  for (int i = 0; i < 64; i++) {
    SendWr w;
    w.msg.op = MROCE_OP_READ_REQ;
    w.msg.cookie = i;
    w.msg.len = 2048;
    w.msg.va = 0x40000 + i * 1000;
    w.msg.rkey = rkey;
    w.read_dst = &dst[i * 2048];
    w.read_len = 2048;
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  }
  A().drain(f.now);
  ASSERT_TRUE(f.run([&] { return A().qp(1).scq.size() == 64; }, 500'000'000));
  for (int i = 0; i < 64; i++) {
    EXPECT_EQ(A().qp(1).scq[i].status, MROCE_WC_OK);
    EXPECT_EQ(0, std::memcmp(&dst[i * 2048], &mem[i * 1000], 2048)) << i;
  }
  EXPECT_GT(B().crossings, 0u); // the deferred frontier was exercised
  EXPECT_EQ(B().conn->cross_pending, 0);
}

// A WRITE the responder refuses breaks its stream: the receive lock alone
// is not enough, and the NACK's ACK is taken with both locks.
TEST_F(Split, RefusedWriteTakesBothLocks) {
  uint32_t kb = B().add_region(0x2000, 4096);
  uint64_t up_b = B().upgrades;
  ASSERT_EQ(A().post_send(A().qp(1), write(1, kb + 99, 0x2000, 64, 7)), 0);
  A().drain(f.now);
  ASSERT_TRUE(f.run([&] { return !A().qp(1).scq.empty(); }, 500'000'000));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_WC_REM_ACCESS);
  EXPECT_GT(B().upgrades, up_b);
  EXPECT_NE(B().qp(2).error, 0);
  EXPECT_GT(A().ack_refused, 0u);
}

// The doorbell under the send lock alone (the module's default): a
// ping-pong where each side rings as soon as the other's data is placed.
TEST_F(Split, DoorbellUnderTheSendLockAlone) {
  uint64_t up_a = A().upgrades, up_b = B().upgrades;
  ping_pong(true);
  EXPECT_EQ(A().upgrades, up_a);
  EXPECT_EQ(B().upgrades, up_b);
}

// Doorbells under the send lock alone while both directions lose packets:
// retransmissions, timers and data receipts interleave with them.
TEST_F(Split, DoorbellsUnderLossDeliverEverything) {
  uint32_t ka = A().add_region(0x100000, 1 << 16);
  uint32_t kb = B().add_region(0x200000, 1 << 16);
  std::mt19937_64 rng(5);
  auto lossy = [&](Endpoint &, const uint8_t *, uint32_t) {
    return rng() % 100 < 5;
  };
  A().drop = lossy;
  B().drop = lossy;
  // one KiB per write: none overlaps another
  auto len_of = [](int i) { return 64 + 911u * i % 960; };
  auto val_of = [](int i) { return static_cast<uint8_t>(i * 7 + 1); };
  const int n = 64;
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(A().ring(A().qp(1),
                       write(i, kb, 0x200000 + 1024 * i, len_of(i), val_of(i))),
              0);
    ASSERT_EQ(B().ring(B().qp(2),
                       write(i, ka, 0x100000 + 1024 * i, len_of(i), val_of(i))),
              0);
    f.run([] { return false; }, 20'000); // let some of it fly
  }
  ASSERT_TRUE(f.run(
      [&] { return A().qp(1).scq.size() == n && B().qp(2).scq.size() == n; },
      2'000'000'000));
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(A().qp(1).scq[i].status, MROCE_WC_OK);
    EXPECT_EQ(B().qp(2).scq[i].status, MROCE_WC_OK);
  }
  EXPECT_GT(A().conn->stats.tx_retx, 0u); // the losses were repaired
  EXPECT_GT(B().conn->stats.tx_retx, 0u);
  for (int i = 0; i < n; i++)
    for (uint32_t k = 0; k < len_of(i); k++) {
      ASSERT_EQ(B().regions[kb].mem[1024 * i + k], val_of(i)) << i << " " << k;
      ASSERT_EQ(A().regions[ka].mem[1024 * i + k], val_of(i)) << i << " " << k;
    }
}

} // namespace
