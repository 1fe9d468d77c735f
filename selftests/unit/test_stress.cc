// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Randomised verbs traffic through the core over a lossy, duplicating,
// reordering fabric: many QPs, every opcode, random sizes and offsets,
// fences, both directions at once, receives posted late (RNR).  Checked:
// every completion in order and successful; every SEND's bytes, length and
// immediate in the receive it matched; every FETCH_ADD executed exactly
// once and in order (results 0, 1, 2 ... per QP).  Placement of WRITE/READ
// bytes is checked by the transfer and unit tests.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "harness.h"

using namespace mroce::test;

namespace {

struct Stress {
  Fabric f;
  std::mt19937_64 rng;
  static constexpr uint32_t kQps = 6, kRegion = 1 << 20, kMsgs = 300;
  struct Side {
    uint32_t rkey;
    std::vector<std::vector<uint8_t>> rbufs;
  } side[2];
  struct Expect {
    uint8_t op;
    uint64_t seed;
    uint32_t len;
    uint64_t va;
    std::vector<uint8_t> readbuf;
    uint64_t atomic_result = 0;
  };
  // per direction, per QP: what each cookie should have done
  std::vector<std::vector<Expect>> sent[2];
  std::vector<uint8_t *> recvbuf[2][kQps];

  Stress(uint64_t seed, double loss, double dup, uint64_t jitter)
      : f(seed), rng(seed) {
    for (int d = 0; d < 2; d++) {
      f.routes[d].assign(6, Route{});
      int i = 0;
      for (auto &r : f.routes[d]) {
        r.delay_ns = 5'000 + 7'000 * i++;
        r.gbps = 10;
        r.loss = loss;
        r.dup = dup;
        r.jitter_ns = jitter;
      }
    }
    auto cfg = test_cfg(4, 1024);
    f.add_endpoint(cfg);
    f.add_endpoint(cfg);
  }

  static void fill(uint8_t *p, uint32_t n, uint64_t seed) {
    uint64_t x = seed | 1;
    for (uint32_t i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      p[i] = static_cast<uint8_t>(x);
    }
  }

  void run() {
    ASSERT_TRUE(f.connect(2'000'000'000));
    for (int d = 0; d < 2; d++) {
      side[d].rkey = f.ep(d).add_region(0x100000, kRegion);
      Region &r = f.ep(d).regions[side[d].rkey];
      fill(r.mem.data(), kRegion, 99 + d);
      // the first 64 bytes of each QP's slice hold its atomic counter
      for (uint32_t q = 0; q < kQps; q++) std::memset(&r.mem[q * ((kRegion / kQps) & ~4095u)], 0, 8);
      sent[d].resize(kQps);
    }
    for (uint32_t q = 0; q < kQps; q++) connect_qps(f, 10 + q, 20 + q);
    // A (QPs 10..) and B (QPs 20..) both send
    uint32_t posted = 0;
    std::vector<uint32_t> cnt[2] = {std::vector<uint32_t>(kQps), std::vector<uint32_t>(kQps)};
    std::vector<uint32_t> recvs_posted[2] = {std::vector<uint32_t>(kQps), std::vector<uint32_t>(kQps)};
    auto qpid = [](int d, uint32_t q) { return (d ? 20u : 10u) + q; };
    bool done = false;
    uint64_t deadline = f.now + 20'000'000'000ull;
    while (!done && f.now < deadline) {
      for (int d = 0; d < 2; d++)
        for (uint32_t q = 0; q < kQps; q++) {
          Qp &qp = f.ep(d).qp(qpid(d, q));
          // receives trickle in late, so RNR happens
          Qp &peer = f.ep(1 - d).qp(qpid(1 - d, q));
          if (rng() % 3 == 0 && recvs_posted[1 - d][q] < kMsgs) {
            auto &bufs = side[1 - d].rbufs;
            bufs.emplace_back(4096);
            recvbuf[1 - d][q].push_back(bufs.back().data());
            f.ep(1 - d).post_recv(peer, recvs_posted[1 - d][q]++, bufs.back().data(), 4096);
          }
          if (cnt[d][q] >= kMsgs || qp.sends.size() >= 24 || !mroce_stream_can_post(&qp.st)) continue;
          uint32_t i = cnt[d][q]++;
          Expect e;
          static const uint8_t ops[] = {MROCE_OP_SEND, MROCE_OP_SEND_IMM, MROCE_OP_WRITE,
                                        MROCE_OP_WRITE_IMM, MROCE_OP_READ_REQ,
                                        MROCE_OP_CMP_SWAP, MROCE_OP_FETCH_ADD};
          e.op = ops[rng() % 7];
          e.seed = rng();
          e.len = static_cast<uint32_t>(rng() % 4000);
          uint32_t slice = (kRegion / kQps) & ~4095u;
          e.va = 0x100000 + q * slice + 64 + rng() % (slice - 64 - 4096);
          SendWr w;
          w.msg.op = e.op;
          w.msg.cookie = i;
          w.msg.len = e.len;
          w.msg.rkey = side[1 - d].rkey;
          w.msg.imm = i;
          w.msg.flags = rng() % 8 == 0 ? MROCE_MSG_FENCE : 0;
          if (e.op == MROCE_OP_CMP_SWAP || e.op == MROCE_OP_FETCH_ADD) {
            e.len = 8;
            w.msg.len = 8;
            e.va = 0x100000 + q * slice;
            w.msg.op = MROCE_OP_FETCH_ADD;  // a counter checks exactly-once
            e.op = MROCE_OP_FETCH_ADD;
            w.msg.swap_add = 1;
          }
          w.msg.va = e.va;
          if (e.op == MROCE_OP_READ_REQ || e.op == MROCE_OP_FETCH_ADD) {
            e.readbuf.assign(std::max<uint32_t>(e.len, 8), 0);
            w.read_dst = e.readbuf.data();
            w.read_len = static_cast<uint32_t>(e.readbuf.size());
          } else {
            w.data.resize(e.len);
            fill(w.data.data(), e.len, e.seed);
          }
          sent[d][q].push_back(std::move(e));
          // readbuf moved with e: point the request at its final home
          auto &home = sent[d][q].back();
          if (!home.readbuf.empty()) w.read_dst = home.readbuf.data();
          ASSERT_EQ(f.ep(d).post_send(qp, std::move(w)), 0);
          posted++;
        }
      f.ep(0).drain(f.now);
      f.ep(1).drain(f.now);
      f.run([] { return false; }, 20'000);
      done = true;
      for (int d = 0; d < 2; d++)
        for (uint32_t q = 0; q < kQps; q++) {
          Qp &qp = f.ep(d).qp(qpid(d, q));
          ASSERT_EQ(qp.error, 0) << "side " << d << " qp " << q;
          if (qp.scq.size() < kMsgs) done = false;
        }
    }
    for (int d = 0; d < 2; d++)
      for (uint32_t q = 0; q < kQps; q++) {
        Qp &qp = f.ep(d).qp(qpid(d, q));
        if (qp.scq.size() != kMsgs) {
          auto &st = qp.st;
          std::fprintf(stderr, "now %.3f ms una %u next %u end %u frontier %u rdinf %u state %d\n", f.now / 1e6, st.tx_una, st.tx_next, st.tx_end, st.frontier, st.rd_inflight, st.state);
          for (uint32_t m = st.tx_una; m != st.tx_end && m != st.tx_una + 6; m++) {
            auto *t = mroce_txmsg(&st, m);
            std::fprintf(stderr, "  msn %u op %u state %u len %u sent %u acked %u resp %u attempt %u\n", m, t->m.op, t->state, t->m.len, t->sent, t->acked, t->resp, t->attempt);
          }
          auto &pst = f.ep(1 - d).qp((d ? 10u : 20u) + q).st;
          std::fprintf(stderr, "  peer rx_next %u resp_count %u failing %u rnr_slots %u state %d\n", pst.rx_next, pst.resp_count, pst.failing, pst.rnr_slots, pst.state);
          auto *r = mroce_rxmsg(&pst, pst.rx_next);
          std::fprintf(stderr, "  peer slot msn %u op %u state %u total %u got %u\n", r->msn, r->op, r->state, r->total, r->got);
        }
        ASSERT_EQ(qp.scq.size(), kMsgs) << "side " << d << " qp " << q << " stalled";
        uint64_t faa = 0;
        for (uint32_t i = 0; i < kMsgs; i++) {
          ASSERT_EQ(qp.scq[i].cookie, i);
          ASSERT_EQ(qp.scq[i].status, MROCE_WC_OK) << i;
          const Expect &e = sent[d][q][i];
          if (e.op == MROCE_OP_FETCH_ADD) {
            uint64_t v;
            std::memcpy(&v, e.readbuf.data(), 8);
            ASSERT_EQ(v, faa++) << "FETCH_ADD " << i << " ran out of order or twice";
          }
        }
        // receives: the k-th receive-consuming message matched the k-th receive
        Qp &peer = f.ep(1 - d).qp((d ? 10u : 20u) + q);
        size_t k = 0;
        std::vector<uint8_t> want;
        for (uint32_t i = 0; i < kMsgs; i++) {
          const Expect &e = sent[d][q][i];
          if (e.op != MROCE_OP_SEND && e.op != MROCE_OP_SEND_IMM && e.op != MROCE_OP_WRITE_IMM)
            continue;
          ASSERT_LT(k, peer.rcq.size());
          const Completion &c = peer.rcq[k++];
          ASSERT_EQ(c.status, MROCE_WC_OK);
          ASSERT_EQ(c.op, e.op);
          ASSERT_EQ(c.cookie, k - 1);
          if (e.op != MROCE_OP_SEND) {
            ASSERT_EQ(c.imm, i);
          }
          ASSERT_EQ(c.byte_len, e.len);  // a WRITE_IMM's: the write's
          if (e.op == MROCE_OP_WRITE_IMM) continue;
          want.resize(e.len);
          fill(want.data(), e.len, e.seed);
          ASSERT_EQ(0, std::memcmp(recvbuf[1 - d][q][c.cookie], want.data(), e.len)) << "SEND " << i;
        }
        ASSERT_EQ(k, peer.rcq.size());
      }
  }
};

TEST(Stress, AllOpcodesLossDuplicationReordering) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    Stress s(seed, 0.05, 0.02, 3'000);
    s.run();
    if (HasFatalFailure()) return;
  }
}

TEST(Stress, AllOpcodesOnePercentLoss) {
  Stress s(7, 0.01, 0, 0);
  s.run();
}

}  // namespace
