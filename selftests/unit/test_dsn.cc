// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The connection's dsn windows (dsn.c): the receiver's exactly-once window
// (new, duplicate, outside, the drag of a far jump) and the sender's
// window of acknowledged dsns.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <vector>

extern "C" {
#include "internal.h"
}

#include "fixtures.h"

namespace {

using mroce::test::ConnFixture;

TEST_F(ConnFixture, DsnReceiveWindowIsExactlyOnce) {
  std::mt19937 rng(9);
  std::vector<uint32_t> order(5000);
  for (uint32_t i = 0; i < order.size(); i++)
    order[i] = i;
  // shuffle inside windows of 512 so everything stays within the window
  for (size_t i = 0; i < order.size(); i += 512)
    std::shuffle(order.begin() + i,
                 order.begin() + std::min(order.size(), i + 512), rng);
  std::set<uint32_t> seen;
  for (uint32_t d : order) {
    ASSERT_EQ(mroce_dsn_rx(c, d), MROCE_DSN_NEW);
    seen.insert(d);
    uint32_t again = *std::next(seen.begin(), rng() % seen.size());
    // seen: a duplicate, or out of window a window below the base
    bool near = again >= c->rx_dsn_base || c->rx_dsn_base - again <= 1024;
    ASSERT_EQ(mroce_dsn_rx(c, again), near ? MROCE_DSN_DUP : MROCE_DSN_OUTSIDE);
  }
  EXPECT_EQ(c->rx_dsn_base, 5000u);
  EXPECT_EQ(mroce_dsn_rx(c, 5000 + 1023), MROCE_DSN_NEW);
  // a dsn a window ahead proves everything a window behind it resolved at
  // the sender: the receiver drags its window, forgetting the holes
  EXPECT_EQ(mroce_dsn_rx(c, 5000 + 1024 + 10), MROCE_DSN_NEW);
  EXPECT_EQ(c->rx_dsn_base, 5000u + 11);
  EXPECT_EQ(mroce_dsn_rx(c, 5005), MROCE_DSN_DUP);
  // a duplicate for a window below the base; further, and beyond a jump
  // the sender could have made, out of window, moving nothing
  uint32_t base = c->rx_dsn_base, win = c->cfg.dsn_window;
  EXPECT_EQ(mroce_dsn_rx(c, base - win), MROCE_DSN_DUP);
  EXPECT_EQ(mroce_dsn_rx(c, base - win - 1), MROCE_DSN_OUTSIDE);
  EXPECT_EQ(mroce_dsn_rx(c, base + 0x80000000u),
            MROCE_DSN_OUTSIDE); // half behind
  EXPECT_EQ(mroce_dsn_rx(c, base + MROCE_DSN_JUMP_MAX), MROCE_DSN_OUTSIDE);
  EXPECT_EQ(c->rx_dsn_base, base);
  EXPECT_EQ(mroce_dsn_check(c, base + MROCE_DSN_JUMP_MAX - 1), MROCE_DSN_JUMP);
  EXPECT_EQ(mroce_dsn_check(c, base + win), MROCE_DSN_JUMP);
  EXPECT_EQ(mroce_dsn_check(c, base + win - 1), MROCE_DSN_DUP); // 5000 + 1034
  EXPECT_EQ(mroce_dsn_check(c, base + win - 2), MROCE_DSN_NEW);
}

TEST_F(ConnFixture, DsnSenderAcks) {
  c->tx_dsn_nxt = 100;
  EXPECT_FALSE(mroce_dsn_tx_acked(c, 5));
  EXPECT_TRUE(mroce_dsn_tx_ack(c, 5));
  EXPECT_FALSE(mroce_dsn_tx_ack(c, 5)); // only once
  EXPECT_EQ(c->tx_dsn_una, 0u);
  for (uint32_t d = 0; d < 5; d++)
    EXPECT_TRUE(mroce_dsn_tx_ack(c, d));
  EXPECT_EQ(c->tx_dsn_una, 6u);
  EXPECT_TRUE(mroce_dsn_tx_acked(c, 3));
  EXPECT_FALSE(mroce_dsn_tx_ack(c, 100)); // never sent
}

} // namespace
