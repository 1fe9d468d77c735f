// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ACK packets (ack.c), between two connections driven directly: the ACK a
// receiver builds from its paths' state, taken by the sender's scoreboard;
// blocks that name no path or psns never sent, dropped; and a rate hint
// believed only when a block vouches for it.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include "internal.h"
}

namespace {

struct Ack : ::testing::Test {
  std::vector<uint8_t> mem[2];
  mroce_conn *a = nullptr;  // sends data, takes ACKs
  mroce_conn *b = nullptr;  // receives data, builds ACKs

  mroce_conn *make(int i, uint32_t id) {
    mroce_cfg cfg;
    mroce_cfg_default(&cfg);
    cfg.npaths = 2;
    cfg.dsn_window = 1024;
    mem[i].resize(mroce_conn_size(2));
    auto *c = reinterpret_cast<mroce_conn *>(mem[i].data());
    static const mroce_ops ops{};
    EXPECT_EQ(mroce_conn_init(c, &cfg, &ops, nullptr, id, id, id, 0), 0);
    return c;
  }
  void SetUp() override {
    a = make(0, 1);
    b = make(1, 2);
    a->peer_id = b->id;
    b->peer_id = a->id;
  }
  // @n packets of 1000 bytes, no stream's, sent by a on its path 0 at @now.
  void send(uint32_t n, uint64_t now) {
    for (uint32_t i = 0; i < n; i++) {
      mroce_pktref ref{};
      ref.len = 1000;
      ref.dsn = a->tx_dsn_nxt++;
      mroce_path_sent(a, &a->paths[0], &ref, now);
    }
  }
  // Decode @buf and hand it to a, as rx.c does with an ACK.
  void deliver(const std::vector<uint8_t> &buf, uint64_t now) {
    mroce_pkt pkt;
    ASSERT_EQ(mroce_wire_decode(buf.data(), static_cast<uint32_t>(buf.size()), &pkt),
              MROCE_OK);
    ASSERT_EQ(pkt.hdr.opcode, MROCE_OP_ACK);
    mroce_ack_rx(a, &pkt, buf.data(), now);
  }
  // An ACK to a with @hint and a block per element of @blocks.
  std::vector<uint8_t> forge(uint32_t hint, const std::vector<mroce_ack_path> &blocks) {
    mroce_pkt pkt{};
    pkt.hdr.opcode = MROCE_OP_ACK;
    pkt.hdr.dst_conn = a->id;
    pkt.hdr.src_conn = b->id;
    pkt.ack.rate_hint = hint;
    pkt.ack.npaths = static_cast<uint8_t>(blocks.size());
    std::vector<uint8_t> buf(MROCE_MAX_HDR_LEN + blocks.size() * MROCE_ACK_PATH_LEN);
    uint32_t n = mroce_wire_encode(&pkt, buf.data());
    for (size_t i = 0; i < blocks.size(); i++)
      mroce_wire_put_ack_path(&blocks[i], &buf[n + i * MROCE_ACK_PATH_LEN]);
    buf.resize(n + blocks.size() * MROCE_ACK_PATH_LEN);
    return buf;
  }
};

// b received psns 0-7 of a's path 0 but 3; the ACK it builds says so, and
// a's scoreboard acknowledges those seven and gives 3 up (dupthresh).
TEST_F(Ack, BuiltAckIsTakenByTheSendersScoreboard) {
  send(8, 0);
  mroce_path *rp = &b->paths[0];
  for (uint32_t psn = 0; psn < 8; psn++)
    if (psn != 3) {
      ASSERT_EQ(mroce_sack_rx(rp, psn), MROCE_SACK_NEW);
    }
  rp->rcv_last_ts = 0;      // the newest packet's send time, echoed
  rp->rcv_last_ns = 9'000;  // when it arrived: 1 us before the ACK
  b->ack_mask |= 1;

  std::vector<uint8_t> buf(2048);
  mroce_tx tx;
  uint32_t len = mroce_ack_build(b, 10'000, buf.data(), static_cast<uint32_t>(buf.size()), &tx);
  ASSERT_EQ(len, uint32_t{MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN});
  EXPECT_EQ(tx.opcode, MROCE_OP_ACK);
  EXPECT_EQ(tx.hdr_len, len);
  EXPECT_EQ(b->ack_mask, 0u);
  EXPECT_EQ(b->stats.tx_acks, 1u);
  // nothing more is owed
  std::vector<uint8_t> again(2048);
  EXPECT_EQ(mroce_ack_build(b, 10'000, again.data(), 2048, &tx), 0u);

  buf.resize(len);
  mroce_pkt pkt;
  ASSERT_EQ(mroce_wire_decode(buf.data(), len, &pkt), MROCE_OK);
  ASSERT_EQ(pkt.ack.npaths, 1u);
  EXPECT_EQ(pkt.hdr.dst_conn, a->id);
  deliver(buf, 10'000);

  const mroce_path *p = &a->paths[0];
  EXPECT_EQ(p->stats.acked_pkts, 7u);
  EXPECT_EQ(p->stats.lost_pkts, 1u);
  EXPECT_EQ(p->snd_una, 8u);
  EXPECT_EQ(p->inflight, 0u);
  EXPECT_EQ(a->tx_dsn_una, 8u);
  EXPECT_EQ(a->stats.rx_drop_ack, 0u);
  EXPECT_EQ(p->rtt.samples, 1u);
  EXPECT_EQ(p->rtt.srtt, 10'000u - 1'000u);  // the ACK's delay taken off
}

// Blocks naming a path a does not have, or psns it never sent, are dropped
// and counted; a rate hint is believed only with a block about psns a has
// in the air (a forged ACK must not hold the sender to any rate).
TEST_F(Ack, BadBlocksDroppedHintNeedsAVouchingBlock) {
  send(4, 0);
  ASSERT_EQ(a->rate_hint, MROCE_RATE_NONE);
  mroce_ack_path nopath{}, unsent{}, good{};
  nopath.path = 2;
  unsent.path = 0;
  unsent.cum_psn = 1000;
  deliver(forge(5000, {nopath, unsent}), 10'000);
  EXPECT_EQ(a->stats.rx_drop_ack, 2u);
  EXPECT_EQ(a->rate_hint, MROCE_RATE_NONE);
  EXPECT_EQ(a->paths[0].stats.acked_pkts, 0u);

  good.path = 0;
  good.cum_psn = 2;
  deliver(forge(5000, {good}), 20'000);
  EXPECT_EQ(a->stats.rx_drop_ack, 2u);
  EXPECT_EQ(a->rate_hint, 5000u);
  EXPECT_EQ(a->paths[0].stats.acked_pkts, 2u);
  EXPECT_EQ(a->paths[0].snd_una, 2u);
}

}  // namespace
