// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receive side (rx.c), through the harness: when a data packet is
// acknowledged at once.  (Its sequence windows against forged packets are
// test_windows.cc.)
#include <gtest/gtest.h>

#include "fixtures.h"
#include "harness.h"

using namespace mroce::test;

namespace {

// Regression (simulator): an old hole below the cumulative point made every packet ACKed alone.
// Simulator (incast, 8 -> 1): the receiver acknowledged nearly every data
// packet on its own.  A lost psn is never resent (its data goes out with a
// new one), so the hole stays below the cumulative point for 256 psns, and
// "the packet is not at the cumulative point" held for every one of them.
TEST(Regression, AnOldHoleDoesNotAcknowledgeEveryPacket) {
  AckCount n = write_and_count(2'000, 64, 100);
  // 1,024 packets, ~10 lost: ~1 ACK per ack_every (4) packets plus one per
  // loss, where every packet after the first loss used to get its own.
  EXPECT_LT(n.acks * 2, n.data) << n.acks << " ACKs for " << n.data;
}

}  // namespace
