// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A path's sender half (path.c, path.h): the RTT estimator (RFC 6298 in
// integer nanoseconds).
#include <gtest/gtest.h>

extern "C" {
#include "internal.h"
}

namespace {

TEST(Rtt, EstimatorFollowsRfc6298) {
  mroce_rtt r{};
  r.rto = 1000000;
  mroce_rtt_sample(&r, 100000, 50000, 10000000);
  EXPECT_EQ(r.srtt, 100000u);
  EXPECT_EQ(r.rttvar, 50000u);
  EXPECT_EQ(r.rto, 300000u);
  for (int i = 0; i < 100; i++) mroce_rtt_sample(&r, 100000, 50000, 10000000);
  EXPECT_EQ(r.srtt, 100000u);
  EXPECT_LT(r.rttvar, 1000u);
  EXPECT_EQ(r.rto, 100000u + 12500u);  // srtt + rto_min/4 floor on variance
  mroce_rtt_sample(&r, 5000, 200000, 10000000);
  EXPECT_GE(r.rto, 200000u);  // clamped to rto_min
  EXPECT_EQ(r.min_rtt, 5000u);
}

}  // namespace
