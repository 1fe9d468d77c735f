// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Unit tests of the core's building blocks in isolation: receiver SACK
// state (sack.c), RTT estimator (path.c), congestion control (cc.c), the
// dsn windows (dsn.c) and the receiver fair share (share.c).
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

struct ConnFixture : ::testing::Test {
  std::vector<uint8_t> mem;
  mroce_conn *c;
  void SetUp() override {
    mroce_cfg cfg;
    mroce_cfg_default(&cfg);
    cfg.npaths = 2;
    cfg.dsn_window = 1024;
    mem.resize(mroce_conn_size(2));
    c = reinterpret_cast<mroce_conn *>(mem.data());
    static const mroce_ops ops{};
    ASSERT_EQ(mroce_conn_init(c, &cfg, &ops, nullptr, 1, 1, 1, 0), 0);
  }
};

TEST_F(ConnFixture, DsnReceiveWindowIsExactlyOnce) {
  std::mt19937 rng(9);
  std::vector<uint32_t> order(5000);
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  // shuffle inside windows of 512 so everything stays within the window
  for (size_t i = 0; i < order.size(); i += 512)
    std::shuffle(order.begin() + i, order.begin() + std::min(order.size(), i + 512), rng);
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
  EXPECT_EQ(mroce_dsn_rx(c, base + 0x80000000u), MROCE_DSN_OUTSIDE);  // half behind
  EXPECT_EQ(mroce_dsn_rx(c, base + MROCE_DSN_JUMP_MAX), MROCE_DSN_OUTSIDE);
  EXPECT_EQ(c->rx_dsn_base, base);
  EXPECT_EQ(mroce_dsn_check(c, base + MROCE_DSN_JUMP_MAX - 1), MROCE_DSN_JUMP);
  EXPECT_EQ(mroce_dsn_check(c, base + win), MROCE_DSN_JUMP);
  EXPECT_EQ(mroce_dsn_check(c, base + win - 1), MROCE_DSN_DUP);  // 5000 + 1034
  EXPECT_EQ(mroce_dsn_check(c, base + win - 2), MROCE_DSN_NEW);
}

TEST_F(ConnFixture, DsnSenderAcks) {
  c->tx_dsn_nxt = 100;
  EXPECT_FALSE(mroce_dsn_tx_acked(c, 5));
  EXPECT_TRUE(mroce_dsn_tx_ack(c, 5));
  EXPECT_FALSE(mroce_dsn_tx_ack(c, 5));  // only once
  EXPECT_EQ(c->tx_dsn_una, 0u);
  for (uint32_t d = 0; d < 5; d++) EXPECT_TRUE(mroce_dsn_tx_ack(c, d));
  EXPECT_EQ(c->tx_dsn_una, 6u);
  EXPECT_TRUE(mroce_dsn_tx_acked(c, 3));
  EXPECT_FALSE(mroce_dsn_tx_ack(c, 100));  // never sent
}

// Zeroed memory initialised without the clear is the stream a full init
// makes of any memory (same address: the lists point at themselves).
TEST(Stream, InitZeroedEqualsInit) {
  std::vector<uint8_t> mem(sizeof(mroce_stream)), want;
  auto *st = reinterpret_cast<mroce_stream *>(mem.data());
  std::fill(mem.begin(), mem.end(), 0xa5);
  mroce_stream_init(st, 0x12345678);
  want = mem;
  std::fill(mem.begin(), mem.end(), 0);
  mroce_stream_init_zeroed(st, 0x12345678);
  EXPECT_EQ(mem, want);
  EXPECT_EQ(st->state, MROCE_STREAM_IDLE);
  EXPECT_EQ(st->id, 0x12345678u & MROCE_STREAM_MASK);
}

TEST(Config, RejectsNonsense) {
  mroce_cfg cfg;
  mroce_cfg_default(&cfg);
  std::vector<uint8_t> mem(mroce_conn_size(64));
  auto *c = reinterpret_cast<mroce_conn *>(mem.data());
  static const mroce_ops ops{};
  auto bad = [&](auto mutate) {
    mroce_cfg x = cfg;
    mutate(x);
    return mroce_conn_init(c, &x, &ops, nullptr, 1, 1, 1, 0) != 0;
  };
  EXPECT_FALSE(bad([](mroce_cfg &) {}));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.npaths = 0; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.npaths = 65; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.dsn_window = 1000; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.dsn_window = 1 << 20; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.sport_min = 60000; x.sport_max = 60001; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.dupthresh = 0; }));
  EXPECT_TRUE(bad([](mroce_cfg &x) { x.mss = 10; }));
  EXPECT_NE(mroce_conn_init(c, &cfg, &ops, nullptr, 0, 1, 1, 0), 0);  // id 0
}

TEST(Config, SourcePortsAreDistinctAndInPool) {
  mroce_cfg cfg;
  mroce_cfg_default(&cfg);
  cfg.npaths = 64;
  cfg.sport_min = 40000;
  cfg.sport_max = 40063;  // exactly enough ports
  std::vector<uint8_t> mem(mroce_conn_size(64));
  auto *c = reinterpret_cast<mroce_conn *>(mem.data());
  static const mroce_ops ops{};
  ASSERT_EQ(mroce_conn_init(c, &cfg, &ops, nullptr, 1, 1, 77, 0), 0);
  std::set<uint16_t> ports;
  for (uint32_t i = 0; i < 64; i++) {
    EXPECT_GE(c->paths[i].sport, 40000);
    EXPECT_LE(c->paths[i].sport, 40063);
    ports.insert(c->paths[i].sport);
  }
  EXPECT_GT(ports.size(), 40u);  // random picks; collisions only after 64 tries
}

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

}  // namespace
