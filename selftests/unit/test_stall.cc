// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// A slow host's lot, with the module's timers (kernel/params.c: rto_min
// 20 ms, rto_max 500 ms, dead 2 s) and the verbs QPs of
// selftests/verbs/integrity.c (timeout 14, retry_cnt 7): every opcode,
// fences, messages up to 64 KiB, 8 QPs both ways, 6% loss both ways (ACKs
// too), up to 5 ms of jitter and receive-backlog stalls of 20 ms, so round
// trips run from tens of microseconds to tens of milliseconds.  Nothing may
// fail: no message with retry exceeded (the stall bound, requester.c), no
// connection dead.  The METAROCE_STALL_* variables below change the mix and
// the seeds, to hunt for stalls over many runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "harness.h"

using namespace mroce::test;

namespace {

uint64_t env(const char *n, uint64_t d) {
  const char *e = std::getenv(n);
  return e ? std::strtoull(e, nullptr, 10) : d;
}

// The module's defaults (kernel/params.c), 1 KiB packets.
mroce_cfg module_cfg(uint32_t mss) {
  mroce_cfg c = test_cfg(4, mss);
  c.rto_init_ns = 50'000'000;
  c.rto_min_ns = 20'000'000;
  c.rto_max_ns = 500'000'000;
  c.tlp_min_ns = 2'000'000;
  c.ack_delay_ns = 100'000;
  c.probe_interval_ns = 10'000'000;
  c.epoch_ns = 50'000'000;
  c.dead_ns = env("METAROCE_STALL_DEAD_MS", 2000) * 1'000'000;
  c.init_cwnd = 10 * mss;
  return c;
}

struct Slow {
  static constexpr uint32_t kMss = 1024, kRegion = 4 << 20, kDepth = 16;
  static constexpr uint64_t kVa = 0x100000;
  Fabric f;
  std::mt19937_64 rng;
  const uint32_t nqps, msgs, maxlen;
  uint32_t rkey[2] = {};
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<uint8_t> readbuf = std::vector<uint8_t>(1 << 20);
  uint64_t cookie = 1;

  Slow(uint64_t seed)
      : f(seed), rng(seed), nqps(static_cast<uint32_t>(env("METAROCE_STALL_QPS", 8))),
        msgs(static_cast<uint32_t>(env("METAROCE_STALL_MSGS", 500))),
        maxlen(static_cast<uint32_t>(env("METAROCE_STALL_MAXLEN", 65536))) {}

  static uint32_t qid(int d, uint32_t q) { return (d ? 200u : 100u) + q; }

  void attach(uint32_t q) {
    connect_qps(f, qid(0, q), qid(1, q), kMss, mroce_ib_timeout_ns(14));
  }

  // One random message from side @d on QP @q (its receive posted at once).
  void post(int d, uint32_t q) {
    static const uint8_t ops[] = {MROCE_OP_SEND,      MROCE_OP_SEND_IMM, MROCE_OP_WRITE,
                                  MROCE_OP_WRITE_IMM, MROCE_OP_READ_REQ, MROCE_OP_CMP_SWAP,
                                  MROCE_OP_FETCH_ADD};
    uint8_t op = ops[rng() % 7];
    uint32_t len = static_cast<uint32_t>(rng() % 4 ? rng() % 4096 : rng() % maxlen);
    SendWr w;
    w.msg.op = op;
    w.msg.cookie = cookie++;
    w.msg.rkey = rkey[1 - d];
    w.msg.flags = rng() % 8 == 0 ? MROCE_MSG_FENCE : 0;
    if (op == MROCE_OP_CMP_SWAP || op == MROCE_OP_FETCH_ADD) {
      len = 8;
      w.msg.va = kVa + 8 * q;
      w.read_dst = readbuf.data();
      w.read_len = 8;
    } else {
      w.msg.va = kVa + 4096 + rng() % (kRegion - 4096 - len);
      if (op == MROCE_OP_READ_REQ) {
        w.read_dst = readbuf.data();
        w.read_len = len;
      } else {
        w.data.assign(len, static_cast<uint8_t>(w.msg.cookie));
      }
    }
    w.msg.len = len;
    if (op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM || op == MROCE_OP_WRITE_IMM) {
      bufs.emplace_back(len);
      Endpoint &peer = f.ep(1 - d);
      peer.post_recv(peer.qp(qid(1 - d, q)), w.msg.cookie, bufs.back().data(), len);
    }
    ASSERT_EQ(f.ep(d).post_send(f.ep(d).qp(qid(d, q)), std::move(w)), 0);
  }

  void run() {
    for (int d = 0; d < 2; d++) {
      f.routes[d].assign(4, Route{});
      int i = 0;
      for (auto &r : f.routes[d]) {
        r.delay_ns = env("METAROCE_STALL_DELAY_US", 100) * 1000 + 7'000 * i++;
        r.gbps = 1;
        r.loss = env("METAROCE_STALL_LOSS_PM", 60) / 1000.0;
        r.jitter_ns = env("METAROCE_STALL_JITTER_US", 5000) * 1000;
        r.lane_delay_ns = env("METAROCE_STALL_LANE_US", 20000) * 1000;
      }
    }
    f.add_endpoint(module_cfg(kMss));
    f.add_endpoint(module_cfg(kMss));
    ASSERT_TRUE(f.connect(5'000'000'000));
    for (int d = 0; d < 2; d++)
      rkey[d] = f.ep(d).add_region(kVa, kRegion);
    for (uint32_t q = 0; q < nqps; q++) {
      attach(q);
      if (::testing::Test::HasFatalFailure())
        return;
    }
    std::vector<uint32_t> posted(2 * nqps);
    const uint64_t end = f.now + 600'000'000'000ull;
    for (bool done = false; !done;) {
      done = true;
      for (int d = 0; d < 2; d++)
        for (uint32_t q = 0; q < nqps; q++) {
          Qp &qp = f.ep(d).qp(qid(d, q));
          ASSERT_EQ(qp.error, 0) << "side " << d << " QP " << q << " at " << f.now / 1e9 << " s, "
                                 << qp.st.stats.stalls << " stalls";
          done &= qp.scq.size() == msgs;
          while (posted[d * nqps + q] < msgs && qp.sends.size() < kDepth &&
                 mroce_stream_can_post(&qp.st)) {
            post(d, q);
            if (::testing::Test::HasFatalFailure())
              return;
            posted[d * nqps + q]++;
          }
        }
      f.ep(0).drain(f.now);
      f.ep(1).drain(f.now);
      f.run([] { return false; }, 1'000'000);
      for (int d = 0; d < 2; d++)
        ASSERT_EQ(f.ep(d).conn->state, MROCE_CONN_ESTABLISHED)
            << "endpoint " << d << " at " << f.now / 1e9
            << " s: " << mroce_strerror(static_cast<int>(f.ep(d).conn->fail_reason));
      ASSERT_LT(f.now, end) << "still running";
    }
    for (int d = 0; d < 2; d++)
      for (uint32_t q = 0; q < nqps; q++)
        for (const Completion &c : f.ep(d).qp(qid(d, q)).scq)
          ASSERT_EQ(c.status, MROCE_OK) << "side " << d << " QP " << q;
  }
};

TEST(Stall, SlowHostAllOpcodes) {
  // seed 19 lost a connection (resends of packets a stuck path had: rx.c)
  const uint64_t first = env("METAROCE_STALL_SEED", 17);
  const uint64_t seeds = env("METAROCE_STALL_SEEDS", 4);
  for (uint64_t s = first; s < first + seeds; s++) {
    SCOPED_TRACE(s);
    Slow x(s);
    x.run();
    if (::testing::Test::HasFatalFailure())
      return;
    mroce_conn_stats a = conn_stats(x.f.ep(0).conn), b = conn_stats(x.f.ep(1).conn);
    std::printf("# seed %llu: %.3f s; lost %llu, resent %llu, RTOs %llu, paths replaced %llu\n",
                static_cast<unsigned long long>(s), x.f.now / 1e9,
                static_cast<unsigned long long>(a.lost + b.lost),
                static_cast<unsigned long long>(a.tx_retx + b.tx_retx),
                static_cast<unsigned long long>(a.rtos + b.rtos),
                static_cast<unsigned long long>(a.path_replaced + b.path_replaced));
    // the impairments took place
    EXPECT_GT(a.lost, 0u);
    EXPECT_GT(b.lost, 0u);
    EXPECT_GT(a.spurious + b.spurious, 0u);
  }
}

} // namespace
