// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Congestion control (cc.c): slow start and additive increase, the
// DCTCP-style alpha from ECN marks, loss that does not shrink the window
// while a timeout does, and the window's bounds.
#include <gtest/gtest.h>

extern "C" {
#include "internal.h"
}

namespace {

TEST(Cc, SlowStartThenAdditive) {
  mroce_cc cc;
  mroce_cc_init(&cc, 1000, 10000, 1000000);
  mroce_cc_on_ack(&cc, 10000);
  EXPECT_EQ(cc.cwnd, 20000u);  // slow start doubles per window
  mroce_cc_on_ecn(&cc, 10, 5);
  EXPECT_TRUE(mroce_cc_on_window(&cc));
  uint32_t w = cc.cwnd;
  EXPECT_LT(w, 20000u);
  mroce_cc_on_ack(&cc, w);  // one window acknowledged: +1 MSS
  EXPECT_EQ(cc.cwnd, w + 1000);
}

TEST(Cc, AlphaTracksMarkedFraction) {
  mroce_cc cc;
  mroce_cc_init(&cc, 1000, 100000, 1000000);
  for (int i = 0; i < 200; i++) {
    mroce_cc_on_ecn(&cc, 100, 25);
    mroce_cc_on_window(&cc);
    mroce_cc_on_ack(&cc, 100000);
  }
  EXPECT_NEAR(cc.alpha, MROCE_ALPHA_ONE / 4, 16);
  for (int i = 0; i < 200; i++) {
    mroce_cc_on_ecn(&cc, 100, 0);
    EXPECT_FALSE(mroce_cc_on_window(&cc));
  }
  EXPECT_LT(cc.alpha, 8u);
}

TEST(Cc, LossDoesNotShrinkOnlyTimeoutDoes) {
  mroce_cc cc;
  mroce_cc_init(&cc, 1000, 50000, 1000000);
  for (int i = 0; i < 10; i++) {
    mroce_cc_on_ecn(&cc, 10, 0);  // packets lost, none marked
    mroce_cc_on_window(&cc);
  }
  EXPECT_EQ(cc.cwnd, 50000u);
  mroce_cc_on_rto(&cc);
  EXPECT_EQ(cc.cwnd, 1000u);
  EXPECT_EQ(cc.ssthresh, 25000u);
}

TEST(Cc, NeverBelowOneMssOrAboveMax) {
  mroce_cc cc;
  mroce_cc_init(&cc, 1000, 5000, 20000);
  for (int i = 0; i < 50; i++) {
    mroce_cc_on_ecn(&cc, 10, 10);
    mroce_cc_on_window(&cc);
  }
  EXPECT_EQ(cc.cwnd, 1000u);
  for (int i = 0; i < 1000; i++) mroce_cc_on_ack(&cc, 100000);
  EXPECT_EQ(cc.cwnd, 20000u);
}

}  // namespace
