// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The receiver's fair share of its inbound capacity (share.c): the split
// among greedy and light senders, a new sender lowering the hint at once,
// draining a marked queue, epochs only while two share; and the first rate
// an ACCEPT grants, through the harness.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fixtures.h"
#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

struct ShareFixture : ::testing::Test {
  std::vector<std::vector<uint8_t>> mems;
  std::vector<mroce_conn *> conns;
  mroce_share s;
  // A zeroed connection, not yet a member.
  mroce_conn *blank() {
    mems.emplace_back(sizeof(mroce_conn));
    auto *c = reinterpret_cast<mroce_conn *>(mems.back().data());
    memset(c, 0, sizeof(*c));
    mroce_list_init(&c->share_node);
    return c;
  }
  void make(int n, uint64_t capacity) {
    mroce_share_init(&s, capacity, 100000, 0);
    for (int i = 0; i < n; i++) {
      auto *c = blank();
      mroce_share_join(&s, c);
      conns.push_back(c);
    }
  }
};

TEST_F(ShareFixture, EqualSplitAmongGreedySenders) {
  make(16, 12'500'000'000ull);  // 100 Gb/s
  for (auto *c : conns) c->rx_data_bytes += 1'000'000;  // all sending hard
  mroce_share_epoch(&s, 100000);
  EXPECT_EQ(s.nactive, 16u);
  for (auto *c : conns) EXPECT_EQ(c->rx_hint, 12'500'000'000ull / 16 / 1000);
}

TEST_F(ShareFixture, LightSendersKeepTheirRateOthersSplitTheRest) {
  make(4, 10'000'000'000ull);  // 10 GB/s
  // two light senders at 0.5 GB/s, two greedy at 4 GB/s (over 100 us)
  auto epoch = [&](uint64_t now) {
    conns[0]->rx_data_bytes += 50'000;
    conns[1]->rx_data_bytes += 50'000;
    conns[2]->rx_data_bytes += 400'000;
    conns[3]->rx_data_bytes += 400'000;
    mroce_share_epoch(&s, now);
  };
  // One light epoch is not enough (a sender may just be held back by its
  // window after an incast): equal split first.
  epoch(100000);
  EXPECT_EQ(s.hint, 2'500'000u);
  epoch(200000);
  // (10 - 0.5 - 0.5) / 2 = 4.5 GB/s each for the greedy ones
  EXPECT_EQ(s.hint, 4'500'000u);
  for (auto *c : conns) EXPECT_EQ(c->rx_hint, 4'500'000u);
}

TEST_F(ShareFixture, NewSenderLowersTheShareAtOnce) {
  make(4, 10'000'000'000ull);  // 10 GB/s
  conns[0]->rx_data_bytes += 1'000'000;
  mroce_share_rx(&s, conns[0]);
  mroce_share_epoch(&s, 100000);
  EXPECT_EQ(s.nactive, 1u);
  EXPECT_EQ(s.hint, 10'000'000u);
  // same sender again: nothing changes
  mroce_share_rx(&s, conns[0]);
  mroce_share_rx(&s, conns[0]);
  EXPECT_EQ(s.hint, 10'000'000u);
  // three more start mid-epoch: each one's first packet lowers the hint
  mroce_share_rx(&s, conns[1]);
  EXPECT_EQ(s.hint, 5'000'000u);
  mroce_share_rx(&s, conns[2]);
  mroce_share_rx(&s, conns[3]);
  EXPECT_EQ(s.hint, 2'500'000u);
  // ACKs read the shared hint before the epoch updates rx_hint
  EXPECT_EQ(conns[1]->rx_hint, 10'000'000u);
}

TEST_F(ShareFixture, MarkedDataDrainsTheQueueUnderTheHints) {
  // The shares add up to the port: a queue above the marking threshold
  // would drain only at the rounding headroom.  While over 1/4 of the
  // recent data is CE-marked, the hints drop (by half at full marking);
  // senders held back by that are not light, and the next epoch keeps
  // 1/32 of the port spare.
  make(4, 10'000'000'000ull);  // 10 GB/s
  for (auto *c : conns) c->rx_data_bytes += 250'000;
  mroce_share_epoch(&s, 100000);
  EXPECT_EQ(mroce_share_hint(&s), 2'500'000u);
  mroce_share_mark(&s, true);  // one mark: no drain yet
  EXPECT_EQ(mroce_share_hint(&s), 2'500'000u);
  for (int i = 0; i < 200; i++) mroce_share_mark(&s, true);
  EXPECT_EQ(s.ce_frac, MROCE_SHARE_CE_ONE);
  EXPECT_EQ(mroce_share_hint(&s), 1'250'000u);
  // the senders, held back by us, send less: still an equal split
  conns[0]->rx_data_bytes += 250'000;
  conns[1]->rx_data_bytes += 250'000;
  conns[2]->rx_data_bytes += 125'000;
  conns[3]->rx_data_bytes += 125'000;
  mroce_share_epoch(&s, 200000);
  EXPECT_EQ(s.hint, 2'500'000u - 2'500'000u / 32);
  for (auto *c : conns) EXPECT_FALSE(c->share_light);
  for (int i = 0; i < 200; i++) mroce_share_mark(&s, false);  // queue gone
  EXPECT_EQ(s.ce_frac, 0u);
  EXPECT_EQ(mroce_share_hint(&s), s.hint);
  for (auto *c : conns) c->rx_data_bytes += 250'000;
  mroce_share_epoch(&s, 300000);  // the marks faded in this epoch
  EXPECT_EQ(s.hint, 2'500'000u - 2'500'000u / 32);
  for (auto *c : conns) c->rx_data_bytes += 250'000;
  mroce_share_epoch(&s, 400000);
  EXPECT_EQ(s.hint, 2'500'000u);  // an epoch without a drain: no headroom
}

TEST_F(ShareFixture, NoCapacityMeansNoHint) {
  make(3, 0);
  for (auto *c : conns) c->rx_data_bytes += 1000;
  mroce_share_epoch(&s, 100000);
  for (auto *c : conns) EXPECT_EQ(c->rx_hint, MROCE_RATE_NONE);
}

TEST_F(ShareFixture, EpochsOnlyWhileTwoShare) {
  // A lone member needs no epochs: its share is the whole capacity.  The
  // caller pauses when the second one leaves; the split it leaves behind
  // (half the port) must not stick to the one that stays.
  make(1, 10'000'000'000ull);  // 10 GB/s
  EXPECT_FALSE(mroce_share_wants_epochs(&s));
  auto *second = blank();
  mroce_share_join(&s, second);
  EXPECT_TRUE(mroce_share_wants_epochs(&s));
  mroce_share_resume(&s, 1'000'000);
  conns[0]->rx_data_bytes += 400'000;
  second->rx_data_bytes += 400'000;
  mroce_share_epoch(&s, 1'100'000);
  EXPECT_EQ(s.nactive, 2u);
  EXPECT_EQ(mroce_share_hint(&s), 5'000'000u);

  mroce_share_leave(second);
  conns[0]->rx_data_bytes += 400'000;
  mroce_share_epoch(&s, 1'200'000);
  EXPECT_FALSE(mroce_share_wants_epochs(&s));
  mroce_share_pause(&s);
  EXPECT_EQ(mroce_share_hint(&s), MROCE_RATE_NONE);
  EXPECT_EQ(conns[0]->rx_hint, MROCE_RATE_NONE);
  mroce_share_rx(&s, conns[0]);  // its next data: the whole port
  EXPECT_EQ(mroce_share_hint(&s), 10'000'000u);

  // Resumed long after, the first epoch measures from the resume, not
  // from the epoch before the pause: 400 kB in 100 us is 4 GB/s.
  conns[0]->rx_data_bytes += 50'000'000;  // sent while paused
  mroce_share_join(&s, second);
  mroce_share_resume(&s, 9'000'000);
  conns[0]->rx_data_bytes += 400'000;
  mroce_share_epoch(&s, 9'100'000);
  EXPECT_EQ(conns[0]->share_rate, 4'000'000'000ull);
  EXPECT_EQ(s.nactive, 1u);
}

TEST_F(ShareFixture, IdleEpochLiftsHint) {
  make(2, 1'000'000'000ull);
  conns[0]->rx_data_bytes += 100000;
  mroce_share_epoch(&s, 100000);
  EXPECT_EQ(s.nactive, 1u);
  EXPECT_EQ(conns[1]->rx_hint, 1'000'000u);
  mroce_share_epoch(&s, 200000);  // nobody sent
  EXPECT_EQ(conns[0]->rx_hint, MROCE_RATE_NONE);
  mroce_share_leave(conns[1]);
  EXPECT_EQ(conns[1]->share, nullptr);
}

// Regression (simulator): an incast at connection open queued 5x the receiver's marking threshold.
// Simulator (64->1 incast at connection open): 64 first windows of 2
// packets are 5 times the receiver port's 100-KiB marking threshold, a
// queue that took 60 RTTs to drain under the hints.  The receiver's ACCEPT
// now grants the connector a first rate (capacity / the receiver's
// connections), and the connector paces its first data at it, the first
// packet at a random point of one packet time.  Without grants the first
// window leaves back to back, as before.
TEST(Grant, AcceptGrantsAFirstRateThatPacesTheFirstData) {
  for (int mode : {0, 1, 2}) {  // no grants, grants, grants and both open
    const bool grants = mode != 0;
    SCOPED_TRACE(mode);
    Fabric f{11};
    auto cfg = test_cfg(1, 1024);
    for (int d = 0; d < 2; d++) {
      f.routes[d].assign(1, Route{});
      f.routes[d][0].delay_ns = 50'000;  // a 100-us round trip
      f.routes[d][0].gbps = 100;
    }
    f.add_endpoint(cfg);
    Endpoint &b = f.add_endpoint(cfg);
    mroce_share_init(&b.share, 125'000'000, 1'000'000, f.now);  // 1 Gb/s
    b.share.grants = grants;
    mroce_share_join(&b.share, b.conn);
    // a second connection of the receiver's, idle: the grant is half
    std::vector<uint8_t> other(sizeof(mroce_conn));
    auto *idle = reinterpret_cast<mroce_conn *>(other.data());
    mroce_list_init(&idle->share_node);
    mroce_share_join(&b.share, idle);
    b.share_on = true;
    uint32_t granted = UINT32_MAX;
    f.ep(1).tap = [&](Endpoint &, const uint8_t *buf, uint32_t n) {
      mroce_pkt p;
      if (mroce_wire_decode(buf, n, &p) == MROCE_OK &&
          p.hdr.opcode == MROCE_OP_ACCEPT)
        granted = p.hello.rate_hint;
    };
    mroce_conn_open(f.ep(0).conn, f.now);
    f.ep(0).drain(f.now);
    if (mode == 2) {  // as the module does at RTR: both ends open
      mroce_conn_open(b.conn, f.now);
      b.drain(f.now);
    }
    // until the opener has the ACCEPT (in a simultaneous open it is
    // established earlier, by the peer's CONNECT)
    mroce_conn *a = f.ep(0).conn;
    ASSERT_TRUE(f.run(
        [&] {
          return a->state == MROCE_CONN_ESTABLISHED && b.conn->state == MROCE_CONN_ESTABLISHED &&
                 (grants ? a->rate_hint != MROCE_RATE_NONE : granted != UINT32_MAX);
        },
        1'000'000'000));
    connect_qps(f, 1, 2);
    const uint64_t t0 = f.now;  // the ACCEPT's arrival
    EXPECT_EQ(granted, grants ? 62'500u : 0u);
    EXPECT_EQ(f.ep(0).conn->rate_hint, grants ? 62'500u : MROCE_RATE_NONE);
    std::vector<uint64_t> sent;  // data packets before the first ACK
    f.ep(0).tap = [&](Endpoint &e, const uint8_t *buf, uint32_t n) {
      mroce_pkt p;
      if (mroce_wire_decode(buf, n, &p) == MROCE_OK &&
          p.hdr.opcode == MROCE_OP_WRITE && !conn_stats(e.conn).rx_acks)
        sent.push_back(f.now);
    };
    uint32_t rkey = f.ep(1).add_region(0, 8 * 1024);
    ASSERT_TRUE(write_to_completion(f, one_write(rkey, 8 * 1024, 3), 1'000'000'000));
    ASSERT_GE(sent.size(), 4u);
    // 1024 + 40 bytes at 62.5 MB/s: 17 us
    if (grants) {
      EXPECT_LE(sent[0] - t0, 17'100u);
      for (size_t i = 1; i < sent.size(); i++)
        EXPECT_GE(sent[i] - sent[i - 1], 16'900u) << i;
    } else {
      EXPECT_LT(sent[1] - sent[0], 1'000u);  // the first window, at once
    }
    mroce_share_leave(idle);
    EXPECT_EQ(b.share.nmembers, 1u);
  }
}

}  // namespace
