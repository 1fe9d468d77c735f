// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// Bulk transfer through the real core over a lossy, reordering multipath
// fabric: by default 1 GiB over 4 paths at 10% random loss (both ways, ACKs
// too), routes of unequal delay so packets overtake each other across
// paths.  Every byte must land exactly once with the right content, every
// completion in order, and retransmissions must match losses (ratio <=
// 1.05); with reordering alone there must be no retransmission at all.
// METAROCE_TRANSFER_MB scales the volume (the sanitizer run uses less).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "harness.h"

using namespace mroce::test;

namespace {

uint64_t transfer_bytes() {
  const char *e = std::getenv("METAROCE_TRANSFER_MB");
  return (e ? std::strtoull(e, nullptr, 10) : 1024) << 20;
}

void fill(std::vector<uint8_t> &v, uint64_t seed) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < v.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&v[i], &x, std::min<size_t>(8, v.size() - i));
  }
}

struct Result {
  uint64_t bytes = 0, sim_ns = 0, data_lost = 0, retx = 0, spurious = 0;
  uint64_t data_sent = 0;
  bool ok = false;
};

Result transfer(double loss, uint64_t total, uint64_t seed,
                uint64_t jitter_ns = 0, uint64_t lane_delay_ns = 0) {
  constexpr uint32_t kQps = 4, kMsg = 1 << 20, kDepth = 8, kMss = 4096;
  Fabric f{seed};
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(4, Route{});
    for (int i = 0; i < 4; i++) {
      Route &r = f.routes[d][i];
      r.delay_ns = 10'000 + 13'000 * i;  // 10..49 us: heavy cross-path skew
      r.gbps = 25;
      r.loss = loss;
      r.jitter_ns = jitter_ns;
      r.lane_delay_ns = lane_delay_ns;
    }
  }
  auto cfg = test_cfg(4, kMss);
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  Result res;
  if (!f.connect(1'000'000'000)) return res;
  Endpoint &A = f.ep(0), &B = f.ep(1);

  // receiver: one region of kQps * kDepth slots for the WRITE_IMMs, and
  // receive buffers for the SENDs; both count placements per byte
  uint32_t rkey = B.add_region(0, uint64_t(kQps) * kDepth * kMsg);
  Region &reg = B.regions[rkey];
  reg.placed.assign(reg.mem.size(), 0);
  std::vector<std::vector<uint8_t>> rbuf(kQps * kDepth, std::vector<uint8_t>(kMsg));

  uint64_t msgs_total = total / kMsg, posted = 0, done = 0, checked = 0;
  std::vector<uint64_t> next(kQps, 0), next_done(kQps, 0), next_recv(kQps, 0);
  bool bad = false;

  for (uint32_t q = 0; q < kQps; q++) {
    connect_qps(f, 1 + q, 101 + q, kMss);
    for (uint32_t s = 0; s < kDepth; s++)
      B.post_recv(B.qp(101 + q), s, rbuf[q * kDepth + s].data(), kMsg);
  }
  auto post = [&](uint32_t q) {
    while (posted < msgs_total && next[q] - next_done[q] < kDepth) {
      uint64_t m = next[q]++;
      SendWr w;
      w.msg.op = (m % 2) ? MROCE_OP_WRITE_IMM : MROCE_OP_SEND;
      w.msg.cookie = m;
      w.msg.len = kMsg;
      w.msg.imm = static_cast<uint32_t>(m);
      w.msg.rkey = rkey;
      w.msg.va = (uint64_t(q) * kDepth + m % kDepth) * kMsg;
      w.data.resize(kMsg);
      fill(w.data, (uint64_t(q) << 40) | m);
      if (A.post_send(A.qp(1 + q), std::move(w))) {
        bad = true;
        return;
      }
      posted++;
    }
  };
  for (uint32_t q = 0; q < kQps; q++) post(q);
  A.drain(f.now);

  std::vector<uint8_t> expect(kMsg);
  auto reap = [&] {
    for (uint32_t q = 0; q < kQps; q++) {
      Qp &rq = B.qp(101 + q);
      for (auto &c : rq.rcq) {
        uint64_t m = next_recv[q]++;
        uint32_t slot = static_cast<uint32_t>(m % kDepth);
        fill(expect, (uint64_t(q) << 40) | m);
        if (c.status != MROCE_OK) bad = true;
        if (c.op == MROCE_OP_WRITE_IMM) {
          size_t at = (size_t(q) * kDepth + slot) * kMsg;
          // byte_len: the length of the write, as rxe reports it
          if (c.imm != static_cast<uint32_t>(m) || c.byte_len != kMsg ||
              std::memcmp(&reg.mem[at], expect.data(), kMsg))
            bad = true;
          for (size_t i = 0; i < kMsg; i++)
            if (reg.placed[at + i] != 1) bad = true;
          std::memset(&reg.placed[at], 0, kMsg);
        } else {
          auto &buf = rbuf[q * kDepth + slot];
          if (c.byte_len != kMsg || std::memcmp(buf.data(), expect.data(), kMsg))
            bad = true;
        }
        checked++;
        // the receive was consumed by this message (SEND or WRITE_IMM)
        B.post_recv(rq, c.cookie, rbuf[q * kDepth + c.cookie].data(), kMsg);
      }
      // SEND placements are counted per receive: every byte exactly once
      for (auto &r : rq.rq)
        for (auto n : r.placed)
          if (n > 1) bad = true;
      rq.rcq.clear();
      Qp &sq = A.qp(1 + q);
      for (auto &c : sq.scq) {
        if (c.status != MROCE_OK || c.cookie != next_done[q]) bad = true;
        next_done[q]++;
        done++;
      }
      sq.scq.clear();
      post(q);
    }
    A.drain(f.now);
    B.drain(f.now);
  };
  // SEND receive buffers are re-posted with fresh counters
  for (auto &rq : B.qps) (void)rq;
  uint64_t start = f.now;
  while (done < msgs_total && !bad) {
    if (!f.run([&] { return !A.qp(1).scq.empty() || !A.qp(2).scq.empty() ||
                            !A.qp(3).scq.empty() || !A.qp(4).scq.empty(); },
               2'000'000'000))
      break;
    reap();
  }
  f.run([&] { return checked == msgs_total; }, 1'000'000'000);
  reap();
  res.sim_ns = f.now - start;
  res.bytes = checked * kMsg;
  for (int d = 0; d < 2; d++)
    for (auto &r : f.routes[d]) {
      res.data_lost += r.data_dropped;
      res.data_sent += r.data_sent;
    }
  res.retx = conn_stats(A.conn).tx_retx + conn_stats(B.conn).tx_retx;
  res.spurious = conn_stats(A.conn).spurious + conn_stats(B.conn).spurious;
  res.ok = !bad && done == msgs_total && checked == msgs_total;
  return res;
}

TEST(Transfer, TenPercentLossFourPathsReordering) {
  uint64_t total = transfer_bytes();
  Result r = transfer(0.10, total, 42);
  double gbps = r.sim_ns ? r.bytes * 8.0 / r.sim_ns : 0;
  double ratio = r.data_lost ? double(r.retx) / r.data_lost : 0;
  RecordProperty("goodput_gbps", std::to_string(gbps));
  RecordProperty("retx_per_loss", std::to_string(ratio));
  std::printf("# transferred %llu MiB, simulated goodput %.2f Gb/s over 4x25 Gb/s, "
              "lost %llu, retransmitted %llu (ratio %.3f), spurious %llu\n",
              (unsigned long long)(r.bytes >> 20), gbps,
              (unsigned long long)r.data_lost, (unsigned long long)r.retx, ratio,
              (unsigned long long)r.spurious);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.bytes, total);
  EXPECT_GT(r.data_lost, 0u);
  EXPECT_LE(ratio, 1.05);
}

TEST(Transfer, PureReorderingAcrossPathsNeedsNoRetransmission) {
  uint64_t total = std::min<uint64_t>(transfer_bytes(), 256ull << 20);
  Result r = transfer(0.0, total, 43);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.retx, 0u);
  EXPECT_EQ(r.spurious, 0u);
}

void report_reordering(const char *how, const Result &r) {
  std::printf("# %llu MiB %s: %llu data packets, %llu retransmitted, "
              "%llu found spurious\n",
              (unsigned long long)(r.bytes >> 20), how, (unsigned long long)r.data_sent,
              (unsigned long long)r.retx, (unsigned long long)r.spurious);
}

// Hosts can reorder packets of one path (sent from several CPUs, received
// through several backlogs): here every packet takes up to 20 us extra, so
// a path's packets (1.3 us apart) pass each other by ~15, beyond dupthresh.
// The first gaps are taken for losses; the spurious retransmissions teach
// each path a reordering window, and then gaps are given time to fill.
TEST(Transfer, ReorderingWithinAPathIsLearnt) {
  uint64_t total = std::min<uint64_t>(transfer_bytes(), 256ull << 20);
  Result r = transfer(0.0, total, 44, 20'000);
  report_reordering("with 20 us jitter", r);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.bytes, total);
  EXPECT_GT(r.spurious, 0u);               // it did have to learn
  EXPECT_LT(r.retx * 200, r.data_sent);     // under 0.5% resent
}

// The test VM's reordering: over veth a packet enters the receive backlog
// of the CPU that sent it, and the peer's transmit context moves between
// CPUs, so runs of a path's packets wait behind a long softirq pass on one
// CPU while the next run goes through the other: runs pass each other by
// a stall (here 200 us against a 20-100 us round trip), and the smoothed RTT
// swings with the stalls.  The window must learn how late, at once, and
// from packets given up by either loss rule.
TEST(Transfer, ReorderingByBacklogStallsIsLearnt) {
  uint64_t total = std::min<uint64_t>(transfer_bytes(), 128ull << 20);
  Result r = transfer(0.0, total, 45, 0, 200'000);
  report_reordering("runs of 16 packets 200 us late at random", r);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.bytes, total);
  EXPECT_LT(r.retx * 25, r.data_sent);      // under 4% resent (22% before)
}
}  // namespace
