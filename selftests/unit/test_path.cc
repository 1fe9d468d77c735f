// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A path's sender half (path.c, path.h): the RTT estimator (RFC 6298 in
// integer nanoseconds), and the scoreboard driven directly: packets sent,
// ACK blocks acknowledging psns below the cumulative point and in the SACK
// bitmap (across the ring's wrap), losses by dupthresh, a lost packet that
// arrives after all, ECN counts, and a path given up whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

extern "C" {
#include "internal.h"
}

#include "fixtures.h"

namespace {

using mroce::test::ConnFixture;

TEST(Rtt, EstimatorFollowsRfc6298) {
  mroce_rtt r{};
  r.rto = 1000000;
  mroce_rtt_sample(&r, 100000, 50000, 10000000);
  EXPECT_EQ(r.srtt, 100000u);
  EXPECT_EQ(r.rttvar, 50000u);
  EXPECT_EQ(r.rto, 300000u);
  for (int i = 0; i < 100; i++)
    mroce_rtt_sample(&r, 100000, 50000, 10000000);
  EXPECT_EQ(r.srtt, 100000u);
  EXPECT_LT(r.rttvar, 1000u);
  EXPECT_EQ(r.rto, 100000u + 12500u); // srtt + rto_min/4 floor on variance
  mroce_rtt_sample(&r, 5000, 200000, 10000000);
  EXPECT_GE(r.rto, 200000u); // clamped to rto_min
  EXPECT_EQ(r.min_rtt, 5000u);
}

// One connection of two paths and no peer: packets are put on path 0's
// scoreboard as tx.c does when it sends them, and ACK blocks are handed to
// mroce_path_on_ack() as ack.c does when it decodes them.  The packets
// belong to no stream, so a loss resolves its dsn instead of queueing a
// retransmission.
struct Scoreboard : ConnFixture {
  mroce_path *p = nullptr;
  static constexpr uint32_t kLen = 1000;

  void SetUp() override {
    ConnFixture::SetUp();
    p = &c->paths[0];
  }
  // @n packets of kLen bytes sent on path 0 at @now, the next dsns.
  void send(uint32_t n, uint64_t now) {
    for (uint32_t i = 0; i < n; i++) {
      mroce_pktref ref{};
      ref.len = kLen;
      ref.dsn = c->tx_dsn_nxt++;
      mroce_path_sent(c, p, &ref, now);
    }
  }
  // An ACK block about path 0 at @now: every psn below @cum, and @sacked,
  // received; the newest one sent at @echo_ts, acknowledged at once.
  void ack(uint32_t cum, std::initializer_list<uint32_t> sacked, uint64_t now,
           uint32_t echo_ts = 0) {
    mroce_ack_path ap{};
    ap.path = 0;
    ap.cum_psn = cum;
    ap.echo_ts = echo_ts;
    for (uint32_t psn : sacked) {
      uint32_t d = psn - cum - 1;
      ap.sack[d / 64] |= 1ull << (d % 64);
    }
    mroce_path_on_ack(c, p, &ap, now);
  }
  uint32_t out_count() const {
    uint32_t n = 0;
    for (uint64_t w : p->out_bits)
      n += static_cast<uint32_t>(__builtin_popcountll(w));
    return n;
  }
};

TEST_F(Scoreboard, SentPacketsAreInFlight) {
  send(5, 1000);
  EXPECT_EQ(p->snd_una, 0u);
  EXPECT_EQ(p->snd_nxt, 5u);
  EXPECT_EQ(p->inflight, 5 * kLen);
  EXPECT_EQ(p->inflight_pkts, 5u);
  EXPECT_EQ(c->inflight, 5 * kLen);
  EXPECT_EQ(p->una_sent_ns, 1000u);
  EXPECT_EQ(p->out_bits[0], 0x1full);
  for (uint32_t psn = 0; psn < 5; psn++) {
    EXPECT_EQ(mroce_path_ent(p, psn)->state, MROCE_TXE_INFLIGHT);
    EXPECT_EQ(mroce_path_ent(p, psn)->ref.dsn, psn);
  }
  EXPECT_EQ(c->paths[1].inflight, 0u);
}

// psns 0-2 below the cumulative point and 5, 6 in the bitmap: exactly those
// are acknowledged.  3 has dupthresh (3) later psns received: lost.  4 has
// two: it may still come.  The first RTT sample seeds the other path too.
TEST_F(Scoreboard, AckBlockAcknowledgesExactlyWhatArrived) {
  send(10, 0);
  ack(3, {5, 6}, 10'000);
  EXPECT_EQ(p->stats.acked_pkts, 5u);
  EXPECT_EQ(p->stats.acked_bytes, 5 * kLen);
  EXPECT_EQ(p->stats.lost_pkts, 1u);
  EXPECT_EQ(c->stats.lost, 1u);
  EXPECT_EQ(p->inflight_pkts, 4u); // 4, 7, 8, 9
  EXPECT_EQ(p->inflight, 4 * kLen);
  EXPECT_EQ(c->inflight, 4 * kLen);
  EXPECT_EQ(p->snd_una, 4u); // past 0-2 (acked) and 3 (lost)
  EXPECT_EQ(p->snd_high, 7u);
  EXPECT_EQ(mroce_path_ent(p, 4)->state, MROCE_TXE_INFLIGHT);
  EXPECT_EQ(mroce_path_ent(p, 5)->state, MROCE_TXE_ACKED);
  EXPECT_EQ(mroce_path_ent(p, 7)->state, MROCE_TXE_INFLIGHT);
  EXPECT_EQ(out_count(), 4u);
  // 3 was given up for being passed: remembered, to notice reordering
  ASSERT_EQ(p->gone_count, 1u);
  EXPECT_EQ(p->gone[p->gone_head].psn, 3u);
  // dsns 0-2 acknowledged in order; 3 resolved (no stream); 5 and 6 too
  EXPECT_EQ(c->tx_dsn_una, 4u);
  EXPECT_TRUE(mroce_dsn_tx_acked(c, 5));
  EXPECT_FALSE(mroce_dsn_tx_acked(c, 7));
  EXPECT_EQ(p->rtt.samples, 1u);
  EXPECT_EQ(p->rtt.srtt, 10'000u);
  EXPECT_EQ(c->paths[1].rtt.samples, 1u);
  EXPECT_EQ(c->paths[1].rtt.srtt, 10'000u);
  EXPECT_EQ(p->last_ack_ns, 10'000u);

  // the same block again is no news
  ack(3, {5, 6}, 12'000);
  EXPECT_EQ(p->stats.acked_pkts, 5u);
  EXPECT_EQ(p->inflight_pkts, 4u);
  EXPECT_EQ(p->stats.lost_pkts, 1u);
  EXPECT_EQ(p->rtt.samples, 1u);
  EXPECT_EQ(p->last_ack_ns, 10'000u);
}

// psn 3, given up for being passed, arrives after all: the loss was
// spurious, the path reorders, and its reordering window opens by a step
// (a quarter of the minimum RTT).
TEST_F(Scoreboard, LostPacketArrivingLateWasSpurious) {
  send(10, 0);
  ack(3, {5, 6}, 10'000);
  ASSERT_EQ(p->gone_count, 1u);
  ASSERT_EQ(p->reo_ns, 0u);
  uint32_t epoch_lost = p->epoch_lost;
  ack(10, {}, 30'000);
  EXPECT_EQ(p->stats.spurious, 1u);
  EXPECT_EQ(c->stats.spurious, 1u);
  EXPECT_EQ(p->epoch_lost, epoch_lost - 1);
  EXPECT_EQ(p->gone_count, 0u);
  EXPECT_EQ(p->reo_ns, 10'000u / 4);
  EXPECT_EQ(p->reo_grown_ns, 30'000u);
  EXPECT_EQ(p->stats.acked_pkts, 9u); // 3 is not counted twice
  EXPECT_EQ(p->snd_una, 10u);
  EXPECT_EQ(p->inflight, 0u);
  EXPECT_EQ(c->inflight, 0u);
  EXPECT_EQ(out_count(), 0u);
  EXPECT_EQ(c->tx_dsn_una, 10u);
}

// Psns on both sides of the ring's end (position 255 to 0): the bitmap is
// taken in ring order, in two parts.
TEST_F(Scoreboard, SackAcrossTheRingWrap) {
  send(200, 0);
  ack(200, {}, 10'000);
  ASSERT_EQ(p->snd_una, 200u);
  send(100, 20'000); // psns 200-299: ring positions 200-255, then 0-43
  mroce_ack_path ap{};
  ap.path = 0;
  ap.cum_psn = 200; // 200 missing
  for (uint32_t psn = 201; psn < 300; psn++) {
    if (psn == 260)
      continue; // ring position 4: after the wrap
    uint32_t d = psn - 201;
    ap.sack[d / 64] |= 1ull << (d % 64);
  }
  mroce_path_on_ack(c, p, &ap, 30'000);
  EXPECT_EQ(p->stats.acked_pkts, 200u + 98);
  EXPECT_EQ(p->stats.lost_pkts, 2u); // 200 and 260, passed by later psns
  EXPECT_EQ(p->snd_una, 300u);
  EXPECT_EQ(p->snd_high, 300u);
  EXPECT_EQ(p->inflight_pkts, 0u);
  EXPECT_EQ(p->inflight, 0u);
  EXPECT_EQ(out_count(), 0u);
  EXPECT_EQ(c->tx_dsn_una, 300u);
}

// A block acknowledging psns never sent is a broken or hostile peer: it is
// counted and changes nothing.
TEST_F(Scoreboard, AckBeyondWhatWasSentIsDropped) {
  send(4, 0);
  ack(5, {}, 10'000);
  EXPECT_EQ(c->stats.rx_drop_ack, 1u);
  EXPECT_EQ(p->stats.acked_pkts, 0u);
  EXPECT_EQ(p->inflight_pkts, 4u);
  EXPECT_EQ(p->snd_una, 0u);
  EXPECT_EQ(p->rtt.samples, 0u);
  ack(4, {}, 10'000);
  EXPECT_EQ(c->stats.rx_drop_ack, 1u);
  EXPECT_EQ(p->stats.acked_pkts, 4u);
}

// The receiver's cumulative packet and CE counts: only what is newer than
// the last block counts, and never more marks than packets.
TEST_F(Scoreboard, EcnCountsAreTakenOnceAndBounded) {
  send(20, 0);
  mroce_ack_path ap{};
  ap.path = 0;
  ap.cum_psn = 10;
  ap.rcv_count = 10;
  ap.ce_count = 4;
  mroce_path_on_ack(c, p, &ap, 10'000);
  EXPECT_EQ(p->stats.ce_pkts, 4u);
  EXPECT_EQ(p->peer_rcv, 10u);
  EXPECT_EQ(p->peer_ce, 4u);
  mroce_path_on_ack(c, p, &ap, 11'000); // the same counts: nothing new
  EXPECT_EQ(p->stats.ce_pkts, 4u);
  ap.cum_psn = 12;
  ap.rcv_count = 12;
  ap.ce_count = 9; // 5 more marks for 2 more packets: 2
  mroce_path_on_ack(c, p, &ap, 12'000);
  EXPECT_EQ(p->stats.ce_pkts, 6u);
  EXPECT_EQ(p->peer_ce, 9u);
}

// A timeout or a new route gives up everything in flight at once; losses
// by timeout are not remembered as reordering candidates.
TEST_F(Scoreboard, LoseAllResolvesEveryPacket) {
  send(6, 0);
  ack(0, {1}, 10'000);
  ASSERT_EQ(p->inflight_pkts, 5u);
  mroce_path_lose_all(c, p, 50'000);
  EXPECT_EQ(p->stats.lost_pkts, 5u);
  EXPECT_EQ(c->stats.lost, 5u);
  EXPECT_EQ(p->inflight_pkts, 0u);
  EXPECT_EQ(p->inflight, 0u);
  EXPECT_EQ(c->inflight, 0u);
  EXPECT_EQ(p->snd_una, 6u);
  EXPECT_EQ(out_count(), 0u);
  EXPECT_EQ(p->gone_count, 0u);
  EXPECT_EQ(c->tx_dsn_una, 6u);
}

} // namespace
