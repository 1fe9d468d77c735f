// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Fixtures and helpers shared by several unit-test files; the two-endpoint
// harness itself is harness.h.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness.h"

namespace mroce::test {

// One connection of two paths, a dsn window of 1024 and no peer or ops:
// the core's per-connection pieces driven directly.
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

// A WRITE of @len bytes of @fill to region @rkey.
inline SendWr one_write(uint32_t rkey, uint32_t len, uint8_t fill) {
  return make_wr(MROCE_OP_WRITE, 1, len, fill, rkey);
}

// Post @w at endpoint 0 and run until its completion; false on a timeout.
inline bool write_to_completion(Fabric &f, SendWr w, uint64_t limit_ns) {
  if (f.ep(0).post_send(f.ep(0).qp(1), std::move(w)))
    return false;
  f.ep(0).drain(f.now);
  return f.run([&] { return !f.ep(0).qp(1).scq.empty(); }, limit_ns) &&
         f.ep(0).qp(1).scq[0].status == MROCE_OK;
}

// Two endpoints over two paths, QP 1 of endpoint 0 connected to QP 2 of
// endpoint 1; packets endpoint 1 could have sent are forged and handed to
// endpoint 0's core directly.  Shared by test files, so not in an anonymous
// namespace: GoogleTest wants one fixture class per suite.
struct Regress : ::testing::Test {
  Fabric f{3};
  void SetUp() override {
    for (auto &r : f.routes)
      r.assign(2, Route{});
    auto cfg = test_cfg(2, 1024);
    f.add_endpoint(cfg);
    f.add_endpoint(cfg);
    ASSERT_TRUE(f.connect());
    connect_qps(f, 1, 2);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }

  // A packet that endpoint 1 could have sent to endpoint 0 on stream 2->1,
  // next in sequence on path 0.
  mroce_pkt from_b(uint8_t op, uint32_t msn) {
    mroce_pkt p{};
    p.hdr.opcode = op;
    p.hdr.dst_conn = A().conn->id;
    p.hdr.src_conn = B().conn->id;
    p.hdr.path = 0;
    p.hdr.psn = A().conn->paths[0].rcv_cum;
    p.hdr.dsn = A().conn->rx_dsn_base;
    p.hdr.dst_stream = 1;
    p.hdr.src_stream = 2;
    p.hdr.msn = msn;
    p.hdr.flags = MROCE_F_LAST;
    return p;
  }
  void inject(Endpoint &e, const mroce_pkt &p, uint32_t payload = 0) {
    std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + payload);
    uint32_t n = mroce_wire_encode(&p, b.data());
    b.resize(n + payload);
    mroce_pkt d;
    ASSERT_EQ(mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d),
              MROCE_OK);
    mroce_rx_meta m{b.data(), 0};
    mroce_conn_rx(e.conn, &d, b.data(), &m, f.now);
  }
};

// One WRITE of @len bytes from endpoint 0 to 1 over one path; counts what
// endpoint 0 sent (data packets, those asking for an immediate ACK) and the
// ACKs endpoint 1 sent.  @lose_every: drop every n-th first transmission.
struct AckCount {
  uint64_t data = 0, ack_req = 0, acks = 0, ns = 0;
};

inline AckCount write_and_count(uint64_t delay_ns, uint32_t cwnd_pkts,
                                uint32_t lose_every, uint32_t len = 1 << 20) {
  Fabric f{5};
  auto cfg = test_cfg(1, 1024);
  // The connection's cap keeps the sender window-limited throughout.
  cfg.init_cwnd = cfg.conn_init_cwnd = cfg.conn_max_cwnd = cwnd_pkts * 1024;
  EXPECT_TRUE(one_path_pair(f, delay_ns, cfg));
  uint32_t rkey = f.ep(1).add_region(0, len);
  AckCount n;
  uint64_t firsts = 0;
  f.ep(0).drop = [&](Endpoint &, const uint8_t *b, uint32_t sz) {
    mroce_pkt p;
    if (mroce_wire_decode(b, sz, &p) != MROCE_OK ||
        p.hdr.opcode != MROCE_OP_WRITE)
      return false;
    n.data++;
    if (p.hdr.flags & MROCE_F_ACK_REQ)
      n.ack_req++;
    if (p.hdr.flags & MROCE_F_RETX)
      return false;
    return lose_every && ++firsts % lose_every == 0;
  };
  f.ep(1).drop = [&](Endpoint &, const uint8_t *b, uint32_t sz) {
    mroce_pkt p;
    if (mroce_wire_decode(b, sz, &p) == MROCE_OK &&
        p.hdr.opcode == MROCE_OP_ACK)
      n.acks++;
    return false;
  };
  uint64_t start = f.now;
  EXPECT_TRUE(write_to_completion(f, one_write(rkey, len, 3), 2'000'000'000));
  n.ns = f.now - start;
  return n;
}

} // namespace mroce::test
