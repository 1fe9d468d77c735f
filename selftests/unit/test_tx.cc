// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The transmit side (tx.c), through the harness: the pacer (its slack, no
// pacing at the line rate, no past deadline and no burst above the hint
// for a window-limited sender) and the ACK_REQ of a window-filling packet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fixtures.h"
#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

// One path and windows of 200 packets: what a pacing test's sender may
// send is up to its pacer alone.
mroce_cfg pacing_cfg() {
  auto cfg = test_cfg(1, 1024);
  cfg.init_cwnd = cfg.conn_init_cwnd = cfg.conn_max_cwnd = 200 * 1024;
  return cfg;
}

// Endpoint 0's connection, holding @hint (1000 B/s units) from endpoint 1,
// with a WRITE of @len posted and nothing polled yet; nullptr on failure.
mroce_conn *paced_write(Fabric &f, const mroce_cfg &cfg, uint32_t hint,
                        uint32_t len) {
  if (!one_path_pair(f, 50'000, cfg)) return nullptr;
  uint32_t rkey = f.ep(1).add_region(0, 1 << 20);
  mroce_conn *c = f.ep(0).conn;
  c->rate_hint = hint;
  if (f.ep(0).post_send(f.ep(0).qp(1), one_write(rkey, len, 7))) return nullptr;
  return c;
}

// Regression (VM): the pacer armed a timer every few packets built in one lock hold.
// Packets built in one pass of the Linux module all see the time its lock
// was taken: without a slack the pacer let two go and armed a timer for
// the next one microseconds later, a timer interrupt and a softirq per few
// packets.  With pace_slack a packet due within the slack goes at once; the
// long-run rate stays the hint's.
TEST(Regression, PacingSlackLetsDuePacketsGoWithoutAWait) {
  for (uint32_t slack : {0u, 10'000u}) {
    Fabric f{3};
    auto cfg = pacing_cfg();
    cfg.pace_slack_ns = slack;
    // 1 GB/s: a 1,064-byte packet per 1.064 us
    mroce_conn *c = paced_write(f, cfg, 1'000'000, 1 << 20);
    ASSERT_NE(c, nullptr);
    uint8_t buf[2048];
    mroce_tx tx;
    uint64_t now = f.now;
    uint32_t first = 0;
    while (mroce_conn_poll_tx(c, now, buf, sizeof(buf), &tx) ==
           MROCE_POLL_PACKET)
      first++;
    // one packet on time, one of credit, then as many as the slack covers
    uint32_t want = 2 + slack / 1064;
    EXPECT_GE(first, want) << "slack " << slack;
    EXPECT_LE(first, want + 1) << "slack " << slack;
    ASSERT_TRUE(c->paced);
    EXPECT_EQ(mroce_conn_next_timer(c), c->pace_next_ns - slack)
        << "slack " << slack;
    // polled every microsecond for 200 us (the window holds 200 packets):
    // what the rate allows, plus no more than the slack's and the credit's
    uint32_t later = 0;
    for (int i = 1; i <= 200; i++) {
      while (mroce_conn_poll_tx(c, now + i * 1000ull, buf, sizeof(buf), &tx) ==
             MROCE_POLL_PACKET)
        later++;
    }
    EXPECT_LE(first + later, (200'000 + slack) / 1064 + 3) << "slack " << slack;
    EXPECT_GE(first + later, 200'000u / 1064 - 2) << "slack " << slack;
  }
}

// Regression (VM, ib_write_bw): a hint at or above the line rate still paced.
// A hint at or above the sender's own line rate does not pace: the port
// spaces the packets, and in the module each pacing wait was a timer
// interrupt and a softirq (a lone ib_write_bw sender, whose hint is the
// receiver's whole link, ran 1.25x faster without them).  Below it, the
// pacer holds the sender to the hint as before.
TEST(Regression, AHintAtTheLineRateDoesNotPace) {
  for (uint32_t hint : {1'000'000u, 2'000'000u, 999'999u, 500'000u}) {
    Fabric f{3};
    auto cfg = pacing_cfg();
    cfg.line_rate = 1'000'000;  // 1 GB/s
    mroce_conn *c = paced_write(f, cfg, hint, 64 * 1024);
    ASSERT_NE(c, nullptr);
    uint8_t buf[2048];
    mroce_tx tx;
    uint32_t sent = 0;
    while (mroce_conn_poll_tx(c, f.now, buf, sizeof(buf), &tx) == MROCE_POLL_PACKET)
      sent++;
    if (hint >= cfg.line_rate) {
      EXPECT_EQ(sent, 64u) << "hint " << hint;  // the whole message at once
      EXPECT_FALSE(c->paced) << "hint " << hint;
      EXPECT_EQ(conn_stats(c).pace_waits, 0u) << "hint " << hint;
    } else {
      EXPECT_LE(sent, 3u) << "hint " << hint;  // one on time, one of credit
      EXPECT_TRUE(c->paced) << "hint " << hint;
      EXPECT_EQ(mroce_conn_next_timer(c), c->pace_next_ns) << "hint " << hint;
    }
  }
}

// Regression: a window-limited connection reported a past pacing deadline; its timer spun.
// A connection whose data is held back by a full window (not by the pacer)
// must not report a pacing deadline in the past: the caller's timer would
// fire again and again without anything to do.
TEST(Regression, NoPastPacingDeadlineWhenWindowLimited) {
  using namespace mroce::test;
  Fabric f{3};
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(1, Route{});
    f.routes[d][0].delay_ns = 50'000;
    f.routes[d][0].gbps = 10;
  }
  auto cfg = test_cfg(1, 1024);
  cfg.init_cwnd = cfg.conn_init_cwnd = 4 * 1024;
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = f.ep(1).add_region(0, 1 << 20);
  f.ep(0).conn->rate_hint = 1'000'000;  // 1 GB/s: pacing active
  SendWr w = make_wr(MROCE_OP_WRITE, 1, 1 << 20, 7, rkey);
  ASSERT_EQ(f.ep(0).post_send(f.ep(0).qp(1), std::move(w)), 0);
  uint8_t buf[2048];
  mroce_tx tx;
  // send until the window (4 KiB) is full, then let the pacer's deadline
  // pass while no ACK can have come back yet (RTT 100 us)
  uint64_t now = f.now;
  for (int i = 0; i < 100; i++) {
    while (mroce_conn_poll_tx(f.ep(0).conn, now, buf, sizeof(buf), &tx) == MROCE_POLL_PACKET) {
    }
    now += 2'000;
  }
  ASSERT_GT(f.ep(0).conn->inflight, 0u);
  ASSERT_LT(f.ep(0).conn->pace_next_ns, now);
  uint64_t at = mroce_conn_next_timer(f.ep(0).conn);
  EXPECT_TRUE(at == 0 || at > now) << at << " " << now;
}

// Regression (simulator): a window below ack_every waited out the delayed ACK each round trip.
// Found by metaroce-sim: a path whose
// window holds fewer than ack_every packets is acknowledged only when the
// receiver's delayed-ACK timer fires, so every round trip costs ack_delay
// on top of the RTT.  After an incast has cut the windows the connections
// crawl: `metaroce-sim --hosts 4 --workload incast --size 1MiB --transport
// metaroce` reaches 0.47 of line rate (0.90 with --metaroce_ack_delay 2us).
// Here: one path, a 2-packet window, a 2-us RTT and a 20-us ACK delay.
// Fixed: the packet that fills a window asks for an immediate ACK.
TEST(Regression, SmallWindowDoesNotWaitForTheDelayedAck) {
  Fabric f{3};
  auto cfg = test_cfg(1, 1024);
  cfg.init_cwnd = cfg.conn_init_cwnd = cfg.conn_max_cwnd = 2 * 1024;
  cfg.ack_delay_ns = 20'000;
  ASSERT_TRUE(one_path_pair(f, 1'000, cfg));
  constexpr uint32_t kLen = 256 * 1024;
  uint32_t rkey = f.ep(1).add_region(0, kLen);
  uint64_t start = f.now;
  ASSERT_TRUE(write_to_completion(f, one_write(rkey, kLen, 7), 1'000'000'000));
  // 128 windows of 2 packets; a round trip is ~2.3 us.  Waiting out the
  // ACK delay makes each ~22 us: ~2.8 ms instead of ~0.3 ms.
  EXPECT_LT(f.now - start, 1'000'000u)
      << "transfer took " << (f.now - start) << " ns";
}

// Regression (simulator): a window-limited sender asked for an immediate ACK with every packet.
// Simulator (incast; plane failure): a window-limited sender fills its
// window with every packet an ACK lets out, and each asked for an immediate
// ACK: one ACK per data packet exactly when the fabric is congested.  Once
// per round trip of the path is enough for a small window not to wait out
// the receiver's delayed ACK.
TEST(Regression, AWindowLimitedSenderAsksForAnAckOncePerRoundTrip) {
  AckCount n = write_and_count(20'000, 16, 0);
  // A window of 16 packets: one request per window, not one per ACK that
  // refills it (every 4th packet here, every one once ACKs came singly).
  EXPECT_LT(n.ack_req * 8, n.data) << n.ack_req << " ACK_REQs in " << n.data;
  EXPECT_LT(n.acks * 2, n.data) << n.acks << " ACKs for " << n.data;
  // 64 windows of 16 packets at ~40 us per round trip: ~2.6 ms.
  EXPECT_LT(n.ns, 4'000'000u);
}

// Regression (simulator): a window-limited sender caught up by a burst above the hint.
// Simulator (16->1 incast with the receiver's hints): senders delivered 4
// to 9 Gb/s around a 6 Gb/s share for ~0.8 ms.  A sender held back by its
// window, not by the pacer, found its pacing clock in the past when an ACK
// opened the window, and the pacer's catch-up allowance (pace_burst, meant
// for a late pacing timer) let it put a burst above the hint on the wire:
// the bursts kept the receiver's queue and its ECN marks going, the marks
// kept the windows small, and the small windows made more bursts.  Fixed:
// only a sender the pacer itself held back may catch up by a burst; one a
// window held back may be a packet ahead, no more.
TEST(Regression, AWindowLimitedSenderDoesNotBurstAboveTheHint) {
  Fabric f{11};
  auto cfg = test_cfg(1, 1024);
  // 4 packets per round trip (~40 MB/s): always below the hint
  cfg.init_cwnd = cfg.conn_init_cwnd = cfg.conn_max_cwnd = 4 * 1024;
  cfg.pace_burst = 4 * 1024;
  // a 100-us round trip; B's share of 1 Gb/s: a packet per ~8.5 us
  ASSERT_TRUE(one_path_pair(f, 50'000, cfg, 125'000'000));
  std::vector<uint64_t> sent;  // data packets sent once the hint is known
  f.ep(0).tap = [&](Endpoint &e, const uint8_t *b, uint32_t n) {
    mroce_pkt p;
    if (mroce_wire_decode(b, n, &p) == MROCE_OK &&
        p.hdr.opcode == MROCE_OP_WRITE && e.conn->rate_hint != MROCE_RATE_NONE)
      sent.push_back(f.now);
  };
  constexpr uint32_t kLen = 64 * 1024;
  uint32_t rkey = f.ep(1).add_region(0, kLen);
  ASSERT_TRUE(write_to_completion(f, one_write(rkey, kLen, 5), 1'000'000'000));
  ASSERT_GT(sent.size(), 16u);
  // A packet (1024 + header bytes) takes ~8.5 us at 1 Gb/s.  The sender may
  // be one packet ahead (its clock restarts a packet back), never more: any
  // three packets in a row span at least a packet's time.
  uint64_t min_span = UINT64_MAX;
  for (size_t i = 2; i < sent.size(); i++)
    min_span = std::min(min_span, sent[i] - sent[i - 2]);
  EXPECT_GE(min_span, 8'000u) << "three packets left within " << min_span
                              << " ns at a 1 Gb/s hint";
}

}  // namespace
