// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The connection's deadlines (timers.c), through the harness: what a
// tail-loss probe leaves behind.  (Path timeouts, probes and health are
// test_path_health.cc.)
#include <gtest/gtest.h>

#include "fixtures.h"
#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

// Regression (simulator): a tail-loss probe left snd_una on what it resolved; an RTO fired at once.
// A tail-loss probe resolved the path's only packet but left snd_una on it:
// the next packet sent on the path then computed its RTO from the old
// packet's send time and timed out at once (found by the simulator).
TEST(Regression, NoSpuriousRtoAfterTailLossProbe) {
  using namespace mroce::test;
  Fabric f{5};
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(1, Route{});
    f.routes[d][0].delay_ns = 10'000;
    f.routes[d][0].gbps = 10;
  }
  auto cfg = test_cfg(1, 1024);
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = f.ep(1).add_region(0, 1 << 20);
  auto write = [&](uint64_t cookie) {
    SendWr w = make_wr(MROCE_OP_WRITE, cookie, 1024, 1, rkey);
    ASSERT_EQ(f.ep(0).post_send(f.ep(0).qp(1), std::move(w)), 0);
    f.ep(0).drain(f.now);
  };
  write(0);
  ASSERT_TRUE(f.run([&] { return f.ep(0).qp(1).scq.size() == 1; }, 10'000'000));
  // the next packet arrives but every ACK is lost for a while: a TLP
  // resolves the packet, and its resend is acknowledged only through the
  // stream entry a POLL brings back
  f.routes[1][0].loss = 1.0;
  write(1);
  ASSERT_TRUE(f.run([&] { return conn_stats(f.ep(0).conn).tlps > 0; }, 100'000'000));
  // right after the probe, snd_una must not name a resolved packet: the
  // RTO of the next packet runs from the send time of the packet at snd_una
  {
    const mroce_path &p = f.ep(0).conn->paths[0];
    EXPECT_TRUE(p.snd_una == p.snd_nxt ||
                mroce_path_ent(&p, p.snd_una)->state == MROCE_TXE_INFLIGHT);
  }
  f.run([] { return false; }, 100'000);
  f.routes[1][0].loss = 0;
  ASSERT_TRUE(f.run([&] { return f.ep(0).qp(1).scq.size() == 2; }, 100'000'000));
  EXPECT_GE(conn_stats(f.ep(0).conn).tlps, 1u);
  // long after, a new packet on the path must not time out at once
  f.run([] { return false; }, 50'000'000);
  write(2);
  ASSERT_TRUE(f.run([&] { return f.ep(0).qp(1).scq.size() == 3; }, 10'000'000));
  EXPECT_EQ(conn_stats(f.ep(0).conn).rtos, 0u);
}

}  // namespace
