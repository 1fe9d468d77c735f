// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// Path health through the harness: timeouts, tail-loss probes, dead and
// bad routes replaced by new source ports, probing, ECN steering, and the
// connection giving up on an unreachable peer.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

struct Paths : ::testing::Test {
  Fabric f{11};
  uint32_t rkey = 0;
  uint64_t cookie = 0;
  // 8 routes each way: with 4 paths, a replacement port usually finds a
  // route no other path uses
  void SetUp() override {
    ASSERT_TRUE(routed_pair(f, 8, 20'000));
    rkey = f.ep(1).add_region(0, 64 << 20);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }
  void write(uint32_t len) {
    SendWr w = make_wr(MROCE_OP_WRITE, cookie++, len, 0x5a, rkey);
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
    A().drain(f.now);
  }
  bool all_done(uint64_t limit = 2'000'000'000) {
    return f.run([&] { return A().qp(1).scq.size() == cookie; }, limit);
  }
  Route &route_of_path(int dir, uint32_t path) {
    return f.routes[dir][f.route_of(dir, f.ep(dir).conn->paths[path].sport)];
  }
};

TEST_F(Paths, TailLossProbeRecoversLastPacketWithoutRto) {
  write(64 << 10);  // a first message gives the paths RTT samples
  ASSERT_TRUE(all_done());
  // drop the first transmission of the only packet of the next one
  for (auto &x : f.routes[0]) x.loss = 1.0;
  write(1024);
  for (auto &x : f.routes[0]) x.loss = 0;
  ASSERT_TRUE(all_done());
  EXPECT_GE(conn_stats(A().conn).tlps, 1u);
  EXPECT_EQ(conn_stats(A().conn).rtos, 0u);
  EXPECT_EQ(A().qp(1).scq[1].status, MROCE_OK);
}

// A far deadline may fire late (far_slack_ns) only while the connection
// has lost nothing for quiet_ns, or only what late ACKs showed spurious: a
// late tail-loss probe is what a lossy ping-pong waits for after each loss;
// and only with at most far_flight bytes in flight: a window would wait.
TEST_F(Paths, FarDeadlinesGetSlackOnlyWhileNotLosing) {
  mroce_cfg &cfg = A().conn->cfg;
  cfg.timer_slack_ns = 1'000;
  cfg.far_ns = 100'000;
  cfg.far_slack_ns = 4'000'000;
  cfg.quiet_ns = 50'000'000;
  auto slack = [&](uint64_t in) {
    return mroce_conn_timer_slack(A().conn, f.now, f.now + in);
  };
  write(64 << 10);
  ASSERT_TRUE(all_done());
  ASSERT_EQ(conn_stats(A().conn).lost, 0u);
  EXPECT_EQ(slack(100'000), 4'000'000u);
  EXPECT_EQ(slack(99'999), 1'000u);  // a delayed ACK, a pacing wait
  // a window in flight keeps exact timers; one request's worth does not
  write(64 << 10);
  ASSERT_TRUE(
      f.run([&] { return A().conn->inflight > cfg.far_flight; }, 1'000'000));
  EXPECT_EQ(slack(100'000), 1'000u);
  ASSERT_TRUE(all_done());
  write(cfg.far_flight);
  ASSERT_TRUE(f.run([&] { return A().conn->inflight > 0; }, 1'000'000));
  EXPECT_EQ(A().conn->inflight, cfg.far_flight);
  EXPECT_EQ(slack(100'000), 4'000'000u);
  ASSERT_TRUE(all_done());
  // ACKs held up (a stall, not a loss): the probe fires, and the ACK that
  // answers it acknowledges the original too, so nothing was lost
  for (auto &x : f.routes[1]) x.delay_ns = 1'000'000;
  write(1024);
  ASSERT_TRUE(f.run([&] { return conn_stats(A().conn).tlps > 0; }, 500'000));
  EXPECT_EQ(A().conn->lost_open, 1u);
  EXPECT_EQ(slack(100'000), 1'000u);
  for (auto &x : f.routes[1]) x.delay_ns = 20'000;
  ASSERT_TRUE(all_done());
  EXPECT_GE(conn_stats(A().conn).spurious, 1u);
  EXPECT_EQ(A().conn->lost_open, 0u);
  EXPECT_EQ(slack(100'000), 4'000'000u);
  for (auto &x : f.routes[0]) x.loss = 1.0;
  write(1024);
  for (auto &x : f.routes[0]) x.loss = 0;
  ASSERT_TRUE(all_done());
  ASSERT_GE(conn_stats(A().conn).lost, 1u);
  EXPECT_EQ(slack(100'000), 1'000u);
  EXPECT_EQ(slack(10'000'000), 1'000u);
  // lossless traffic does not end the losing spell; time does
  uint64_t lost_at = A().conn->lost_ns;
  write(1024);
  ASSERT_TRUE(all_done());
  EXPECT_EQ(A().conn->lost_ns, lost_at);
  f.run([] { return false; }, lost_at + cfg.quiet_ns - 1 - f.now);
  EXPECT_EQ(slack(100'000), 1'000u);
  f.run([] { return false; }, 1);
  EXPECT_EQ(slack(100'000), 4'000'000u);
  cfg.far_slack_ns = 0;  // off
  EXPECT_EQ(slack(100'000), 1'000u);
}

// mroce_conn_timer_what() names the deadline a timer serves (the
// metaroce:mroce_timer_arm tracepoint's "what").
TEST_F(Paths, TimerWhatNamesTheDeadline) {
  uint32_t path = 0;
  write(64 << 10);  // RTT samples: until then the probe waits an RTO
  ASSERT_TRUE(all_done());
  ASSERT_TRUE(f.run([&] { return A().conn->inflight == 0; }, 10'000'000));
  // acknowledged: what is left is the health epoch of the paths used
  uint64_t at = mroce_conn_next_timer(A().conn);
  EXPECT_EQ(mroce_conn_timer_what(A().conn, at, &path), MROCE_TW_EPOCH);
  ASSERT_LT(path, A().conn->npaths);
  EXPECT_EQ(at, A().conn->paths[path].epoch_start + A().conn->cfg.epoch_ns);
  write(1024);
  ASSERT_TRUE(f.run([&] { return A().conn->inflight > 0; }, 1'000'000));
  at = mroce_conn_next_timer(A().conn);
  EXPECT_EQ(mroce_conn_timer_what(A().conn, at, &path), MROCE_TW_TLP);
  ASSERT_LT(path, A().conn->npaths);
  EXPECT_GT(A().conn->paths[path].inflight_pkts, 0u);
  EXPECT_EQ(mroce_conn_timer_what(A().conn, at + 1, &path), MROCE_TW_OTHER);
  EXPECT_EQ(path, UINT32_MAX);
  EXPECT_EQ(mroce_conn_timer_what(A().conn, 0, &path), MROCE_TW_OTHER);
  ASSERT_TRUE(all_done());
}

TEST_F(Paths, DeadRouteIsReplacedAndTrafficFlows) {
  write(64 << 10);
  ASSERT_TRUE(all_done());
  // black-hole the route path 2 uses, in the data direction
  Route &dead = route_of_path(0, 2);
  uint16_t old_port = A().conn->paths[2].sport;
  dead.up = false;
  for (int i = 0; i < 40; i++) write(256 << 10);
  ASSERT_TRUE(all_done(5'000'000'000));
  for (auto &c : A().qp(1).scq) ASSERT_EQ(c.status, MROCE_OK);
  const mroce_path &p = A().conn->paths[2];
  EXPECT_GE(p.stats.replaced, 1u);
  EXPECT_NE(p.sport, old_port);
  EXPECT_GE(p.stats.rtos, 1u);
  // the replacement port was probed back into service (unless it hashed
  // onto the dead route again, in which case it is still probing)
  if (&route_of_path(0, 2) != &dead) {
    EXPECT_EQ(p.state, MROCE_PATH_ACTIVE);
  }
}

TEST_F(Paths, LossyRouteIsMovedRandomLossIsNot) {
  // uniform loss everywhere: nobody moves
  for (auto &r : f.routes[0]) r.loss = 0.05;
  for (int i = 0; i < 30; i++) write(1 << 20);
  ASSERT_TRUE(all_done(10'000'000'000));
  EXPECT_EQ(conn_stats(A().conn).path_replaced, 0u);
  // one route much worse than the others: its path moves away
  for (auto &r : f.routes[0]) r.loss = 0.01;
  Route &bad = route_of_path(0, 1);
  bad.loss = 0.6;
  for (int i = 0; i < 30; i++) write(1 << 20);
  ASSERT_TRUE(all_done(20'000'000'000));
  EXPECT_GE(A().conn->paths[1].stats.replaced, 1u);
}

TEST_F(Paths, EcnMarksSteerTrafficToCleanPaths) {
  // a slow, ECN-marking route for path 0; the others are clean
  for (auto &r : f.routes[0]) r.gbps = 10;
  Route &hot = route_of_path(0, 0);
  hot.gbps = 1;
  hot.ecn_bytes = 20'000;
  hot.queue_bytes = 200'000;
  uint64_t before = A().conn->paths[0].stats.tx_bytes;
  uint64_t total_before = 0;
  for (uint32_t i = 0; i < 4; i++) total_before += A().conn->paths[i].stats.tx_bytes;
  for (int i = 0; i < 40; i++) write(1 << 20);
  ASSERT_TRUE(all_done(20'000'000'000));
  uint64_t total = 0;
  for (uint32_t i = 0; i < 4; i++) total += A().conn->paths[i].stats.tx_bytes;
  double share = double(A().conn->paths[0].stats.tx_bytes - before) / (total - total_before);
  EXPECT_GT(hot.marked, 0u);
  EXPECT_GT(A().conn->paths[0].cc.cuts, 0u);
  // fair spraying would give it a quarter; the marks push it well below
  // (or the path was moved off the hot route altogether)
  EXPECT_TRUE(share < 0.15 || A().conn->paths[0].stats.replaced > 0) << share;
}

TEST_F(Paths, UnreachablePeerFailsTheConnection) {
  write(4096);
  ASSERT_TRUE(all_done());
  for (auto &r : f.routes[0]) r.up = false;
  write(4096);
  f.run([&] { return A().conn->state == MROCE_CONN_FAILED; }, 5'000'000'000);
  EXPECT_EQ(A().conn->state, MROCE_CONN_FAILED);
  ASSERT_EQ(A().qp(1).scq.size(), 2u);
  EXPECT_EQ(A().qp(1).scq[1].status, MROCE_ERR_RETRY_EXC);
  EXPECT_NE(A().qp(1).error, 0);
}

// This host stalls for longer than dead_ns (a busy or paused CPU) while
// data is out.  When it runs again its timer comes first and finds every
// deadline past, while the peer's ACKs still wait behind it: that is one
// round of RTOs, not an unreachable peer.
TEST_F(Paths, StallOfThisHostIsNotDeath) {
  write(4096);
  ASSERT_TRUE(all_done());
  write(64 << 10);
  std::vector<Fabric::Ev> held;
  const uint64_t resume = f.now + 3'000'000'000;
  while (!f.q.empty() && f.q.top().at < resume) {
    Fabric::Ev ev = f.q.top();
    if (ev.ep == 0) {
      f.q.pop();
      if (ev.kind == 0) held.push_back(ev);
      continue;
    }
    f.step();
  }
  ASSERT_FALSE(held.empty());
  f.now = resume;
  A().armed = 0;
  mroce_conn_on_timer(A().conn, f.now);
  A().drain(f.now);
  EXPECT_EQ(A().conn->state, MROCE_CONN_ESTABLISHED);
  for (Fabric::Ev &ev : held) {
    ev.at = f.now;
    ev.seq = f.seq++;
    f.q.push(ev);
  }
  ASSERT_TRUE(all_done());
  EXPECT_EQ(A().conn->state, MROCE_CONN_ESTABLISHED);
  EXPECT_EQ(A().qp(1).scq.back().status, MROCE_OK);
}

TEST_F(Paths, LostAcksAreRecoveredByPoll) {
  // every ACK lost for a while: data gets through, completions do not
  for (auto &r : f.routes[1]) r.loss = 1.0;
  write(4096);
  f.run([] { return false; }, 3'000'000);
  EXPECT_TRUE(A().qp(1).scq.empty());
  for (auto &r : f.routes[1]) r.loss = 0;
  ASSERT_TRUE(all_done());
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
}

TEST_F(Paths, DuplicatesNeverPlacedTwice) {
  for (auto &r : f.routes[0]) r.dup = 0.5;
  for (auto &r : f.routes[1]) r.dup = 0.5;
  std::vector<uint8_t> buf(1 << 20);
  B().post_recv(B().qp(2), 1, buf.data(), buf.size());
  SendWr w = make_wr(MROCE_OP_SEND, cookie++, 1 << 20, 1);
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  ASSERT_TRUE(all_done());
  ASSERT_EQ(B().qp(2).rcq.size(), 1u);
  EXPECT_GT(conn_stats(B().conn).rx_dup_dsn + B().conn->paths[0].stats.rx_dup, 0u);
  EXPECT_EQ(B().place_bytes, 1u << 20);  // each byte exactly once
}

TEST_F(Paths, ReorderingInsideARouteIsToleratedByDupthresh) {
  for (auto &r : f.routes[0]) r.jitter_ns = 3'000;  // a little in-route reordering
  for (int i = 0; i < 20; i++) write(1 << 20);
  ASSERT_TRUE(all_done(5'000'000'000));
  // with dupthresh 3 and a 5/4 srtt time rule, a few us of jitter at
  // 10 Gb/s costs few spurious retransmissions
  EXPECT_LT(conn_stats(A().conn).spurious, conn_stats(A().conn).tx_data / 100 + 5);
}

TEST_F(Paths, ProbeAnsweredMakesPathActive) {
  mroce_path &p = A().conn->paths[3];
  mroce_path_replace(A().conn, &p, f.now);
  EXPECT_EQ(p.state, MROCE_PATH_PROBING);
  A().drain(f.now);
  f.run([&] { return p.state == MROCE_PATH_ACTIVE; }, 100'000'000);
  EXPECT_EQ(p.state, MROCE_PATH_ACTIVE);
  EXPECT_GE(p.stats.probes, 1u);
}

}  // namespace
