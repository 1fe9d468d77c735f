// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receiver half of a path (sack.c): the cumulative psn and 256-bit SACK
// ring a receiver keeps per path, duplicates, late and far psns (the drag
// over abandoned holes), 32-bit wrap, against a reference model; and the
// rotation of a SACK bitmap onto ring positions the sender uses.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

extern "C" {
#include "internal.h"
}

namespace {

struct PathFixture : ::testing::Test {
  mroce_path p;
  void SetUp() override { mroce_path_init(&p, 0, 50000, 1024, 16384, 1000000, 0); }
  // decode the bitmap of a fill into the set of psns it claims
  std::set<uint32_t> claimed() {
    mroce_ack_path ap;
    mroce_sack_fill(&p, &ap, 0);
    std::set<uint32_t> s;
    for (uint32_t i = 0; i < 256; i++)
      if (ap.sack[i / 64] >> (i % 64) & 1) s.insert(ap.cum_psn + 1 + i);
    return s;
  }
};

TEST_F(PathFixture, SackInOrderAdvancesCumulative) {
  for (uint32_t i = 0; i < 1000; i++) ASSERT_EQ(mroce_sack_rx(&p, i), MROCE_SACK_NEW);
  EXPECT_EQ(p.rcv_cum, 1000u);
  EXPECT_TRUE(claimed().empty());
}

TEST_F(PathFixture, SackHolesAndDuplicates) {
  for (uint32_t i : {0u, 1u, 3u, 4u, 7u}) mroce_sack_rx(&p, i);
  EXPECT_EQ(p.rcv_cum, 2u);
  EXPECT_EQ(claimed(), (std::set<uint32_t>{3, 4, 7}));
  EXPECT_EQ(mroce_sack_rx(&p, 3), MROCE_SACK_DUP);
  EXPECT_EQ(mroce_sack_rx(&p, 1), MROCE_SACK_LATE);
  EXPECT_EQ(mroce_sack_rx(&p, 2), MROCE_SACK_NEW);
  EXPECT_EQ(p.rcv_cum, 5u);
  EXPECT_EQ(claimed(), (std::set<uint32_t>{7}));
}

TEST_F(PathFixture, SackForcedAdvanceForgetsAbandonedHoles) {
  mroce_sack_rx(&p, 0);
  mroce_sack_rx(&p, 2);   // 1 is a hole
  mroce_sack_rx(&p, 300); // proves 1 .. 44 resolved at the sender
  EXPECT_EQ(p.rcv_cum, 300u - 255);
  EXPECT_EQ(claimed(), (std::set<uint32_t>{300}));
  EXPECT_EQ(mroce_sack_rx(&p, 1), MROCE_SACK_LATE);
  mroce_sack_rx(&p, 100000);  // far jump: everything cleared
  EXPECT_EQ(p.rcv_cum, 100000u - 255);
  EXPECT_EQ(claimed(), (std::set<uint32_t>{100000}));
}

TEST_F(PathFixture, SackWrapsAround32Bits) {
  p.rcv_cum = 0xfffffff0u;
  for (uint32_t i = 0; i < 40; i += 2) mroce_sack_rx(&p, 0xfffffff0u + i);
  EXPECT_EQ(p.rcv_cum, 0xfffffff1u);
  auto s = claimed();
  EXPECT_EQ(s.size(), 19u);
  EXPECT_TRUE(s.count(0x00000006u));
}

// Random arrival order against a reference model of the rules.
TEST_F(PathFixture, SackMatchesReferenceModel) {
  std::mt19937 rng(5);
  std::set<uint32_t> got;
  uint32_t cum = 0, next = 0;
  for (int step = 0; step < 200000; step++) {
    uint32_t psn = cum + rng() % 300;  // sometimes beyond the window
    if (rng() % 4 == 0) psn = next++;
    auto r = mroce_sack_rx(&p, psn);
    if (psn < cum) {
      ASSERT_EQ(r, MROCE_SACK_LATE);
      continue;
    }
    if (psn >= cum + 256) {
      uint32_t floor = psn - 255;
      for (auto it = got.begin(); it != got.end();) it = *it < floor ? got.erase(it) : ++it;
      cum = floor;
    }
    if (got.count(psn)) {
      ASSERT_EQ(r, MROCE_SACK_DUP);
      continue;
    }
    ASSERT_EQ(r, MROCE_SACK_NEW);
    got.insert(psn);
    while (got.count(cum)) got.erase(cum++);
    ASSERT_EQ(p.rcv_cum, cum);
    if (step % 97 == 0) {
      ASSERT_EQ(claimed(), got);
    }
  }
}

TEST(SackRing, RotationRoundTrip) {
  std::mt19937_64 rng(3);
  for (uint32_t base : {0u, 1u, 63u, 64u, 65u, 200u, 255u, 256u, 1000001u}) {
    uint64_t in[4] = {rng(), rng(), rng(), rng()}, ring[4];
    mroce_sack_to_ring(in, base, ring);
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t pos = (base + i) % 256;
      ASSERT_EQ(in[i / 64] >> (i % 64) & 1, ring[pos / 64] >> (pos % 64) & 1)
          << base << " " << i;
    }
  }
}

}  // namespace
