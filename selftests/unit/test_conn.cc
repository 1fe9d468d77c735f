// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Connections (conn.c): configuration checks, the handshake (simultaneous
// open, data overtaking the ACCEPT, the negotiated payload, repeated hellos)
// and, end to end through the two-endpoint harness, every verb over a
// connection: ordering of completions, NACKs and errors.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <set>
#include <vector>

#include "fixtures.h"
#include "harness.h"

extern "C" {
#include "internal.h"  // mroce_conn_implicit_accept
}

using namespace mroce::test;

namespace {

struct Pair : ::testing::Test {
  Fabric f{7};
  void SetUp() override { build(4, 1024); }
  void build(uint32_t npaths, uint32_t mss, int nroutes = 4) {
    f.routes[0].assign(nroutes, Route{});
    f.routes[1].assign(nroutes, Route{});
    for (int i = 0; i < nroutes; i++) {
      f.routes[0][i].delay_ns = f.routes[1][i].delay_ns = 10'000 + 5'000 * i;
      f.routes[0][i].gbps = f.routes[1][i].gbps = 10;
    }
    auto cfg = test_cfg(npaths, mss);
    f.add_endpoint(cfg);
    f.add_endpoint(cfg);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }
  bool wait(const std::function<bool()> &cond, uint64_t ns = 500'000'000) {
    return f.run(cond, ns);
  }
  SendWr wr(uint8_t op, uint64_t cookie, uint32_t len, uint8_t fill = 0xab) {
    SendWr w = make_wr(op, cookie, len, fill);
    pattern(w, fill);
    return w;
  }
};

TEST_F(Pair, Handshake) {
  ASSERT_TRUE(f.connect());
  EXPECT_EQ(A().conn->peer_id, B().conn->id);
  EXPECT_EQ(B().conn->peer_id, A().conn->id);
  EXPECT_EQ(A().conn->npaths, 4u);
  ASSERT_FALSE(A().events.empty());
  EXPECT_EQ(A().events[0], MROCE_EV_ESTABLISHED);
}

TEST_F(Pair, HandshakeSurvivesLoss) {
  for (auto &r : f.routes[0]) r.loss = 0.5;
  for (auto &r : f.routes[1]) r.loss = 0.5;
  ASSERT_TRUE(f.connect(2'000'000'000));
}

TEST_F(Pair, SimultaneousOpen) {
  mroce_conn_open(B().conn, f.now);
  B().drain(f.now);
  ASSERT_TRUE(f.connect());
  EXPECT_EQ(A().conn->peer_id, B().conn->id);
  EXPECT_EQ(B().conn->peer_id, A().conn->id);
}

TEST_F(Pair, HandshakeFailsWithoutPeer) {
  for (auto &r : f.routes[0]) r.up = false;
  EXPECT_FALSE(f.connect(200'000'000));
  wait([&] { return A().conn->state == MROCE_CONN_FAILED; }, 60'000'000'000);
  EXPECT_EQ(A().conn->state, MROCE_CONN_FAILED);
}

TEST_F(Pair, WriteLandsAndCompletes) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x10000, 1 << 20);
  auto w = wr(MROCE_OP_WRITE, 1, 100'000);
  w.msg.va = 0x10000 + 4096;
  w.msg.rkey = rkey;
  auto data = w.data;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(0, std::memcmp(&B().regions[rkey].mem[4096], data.data(), data.size()));
  EXPECT_EQ(B().place_bytes, 100'000u);
}

TEST_F(Pair, SendMatchesPostedReceivesInOrder) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(8000));
  for (int i = 0; i < 8; i++) B().post_recv(B().qp(2), 100 + i, bufs[i].data(), 8000);
  for (int i = 0; i < 8; i++) {
    auto w = wr(i % 2 ? MROCE_OP_SEND_IMM : MROCE_OP_SEND, i, 1000 * (i + 1) - 3,
                static_cast<uint8_t>(i));
    w.msg.imm = 0x5000 + i;
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  }
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return B().qp(2).rcq.size() == 8 && A().qp(1).scq.size() == 8; }));
  for (int i = 0; i < 8; i++) {
    const auto &c = B().qp(2).rcq[i];
    EXPECT_EQ(c.cookie, 100u + i);
    EXPECT_EQ(c.status, MROCE_OK);
    EXPECT_EQ(c.byte_len, 1000u * (i + 1) - 3);
    if (i % 2) {
      EXPECT_EQ(c.imm, 0x5000u + i);
    }
    EXPECT_EQ(A().qp(1).scq[i].cookie, static_cast<uint64_t>(i));
    for (uint32_t k = 0; k < c.byte_len; k++)
      ASSERT_EQ(bufs[i][k], static_cast<uint8_t>(i + k * 7)) << i << " " << k;
  }
}

TEST_F(Pair, ReadReturnsRemoteBytes) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x40000, 1 << 20);
  auto &mem = B().regions[rkey].mem;
  for (size_t i = 0; i < mem.size(); i++) mem[i] = static_cast<uint8_t>(i * 13);
  std::vector<uint8_t> dst(300'000);
  SendWr w;
  w.msg.op = MROCE_OP_READ_REQ;
  w.msg.cookie = 9;
  w.msg.len = 300'000;
  w.msg.va = 0x40000 + 77;
  w.msg.rkey = rkey;
  w.read_dst = dst.data();
  w.read_len = 300'000;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(0, std::memcmp(dst.data(), &mem[77], dst.size()));
}

TEST_F(Pair, AtomicsExecuteOnceInOrder) {
  for (auto &r : f.routes[0]) { r.loss = 0.2; r.dup = 0.2; }
  for (auto &r : f.routes[1]) { r.loss = 0.2; r.dup = 0.2; }
  ASSERT_TRUE(f.connect(2'000'000'000));
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x8000, 64);
  std::vector<uint64_t> results(100);
  for (int i = 0; i < 100; i++) {
    SendWr w;
    w.msg.op = MROCE_OP_FETCH_ADD;
    w.msg.cookie = i;
    w.msg.len = 8;
    w.msg.va = 0x8000 + 8;
    w.msg.rkey = rkey;
    w.msg.swap_add = 1;
    w.read_dst = reinterpret_cast<uint8_t *>(&results[i]);
    w.read_len = 8;
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  }
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == 100; }, 20'000'000'000));
  uint64_t v;
  std::memcpy(&v, &B().regions[rkey].mem[8], 8);
  EXPECT_EQ(v, 100u);  // exactly once each, despite loss and duplicates
  for (int i = 0; i < 100; i++) {
    EXPECT_EQ(A().qp(1).scq[i].cookie, static_cast<uint64_t>(i));
    EXPECT_EQ(results[i], static_cast<uint64_t>(i));  // executed in order
  }
}

TEST_F(Pair, CompareAndSwap) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x8000, 64);
  uint64_t init = 5;
  std::memcpy(&B().regions[rkey].mem[0], &init, 8);
  uint64_t r1 = 0, r2 = 0;
  auto cas = [&](uint64_t cookie, uint64_t cmp, uint64_t swp, uint64_t *out) {
    SendWr w;
    w.msg.op = MROCE_OP_CMP_SWAP;
    w.msg.cookie = cookie;
    w.msg.len = 8;
    w.msg.va = 0x8000;
    w.msg.rkey = rkey;
    w.msg.compare = cmp;
    w.msg.swap_add = swp;
    w.read_dst = reinterpret_cast<uint8_t *>(out);
    w.read_len = 8;
    return A().post_send(A().qp(1), std::move(w));
  };
  ASSERT_EQ(cas(1, 5, 9, &r1), 0);
  ASSERT_EQ(cas(2, 5, 11, &r2), 0);  // fails: value is 9 by then
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == 2; }));
  uint64_t v;
  std::memcpy(&v, &B().regions[rkey].mem[0], 8);
  EXPECT_EQ(r1, 5u);
  EXPECT_EQ(r2, 9u);
  EXPECT_EQ(v, 9u);
}

TEST_F(Pair, BadRkeyIsRemoteAccessErrorAndNothingWritten) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x10000, 4096);
  auto w = wr(MROCE_OP_WRITE, 1, 8192);  // longer than the region
  w.msg.va = 0x10000;
  w.msg.rkey = rkey;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  auto w2 = wr(MROCE_OP_WRITE, 2, 10);
  w2.msg.va = 0x10000;
  w2.msg.rkey = rkey;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w2)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_REM_ACCESS);
  EXPECT_EQ(A().qp(1).error, MROCE_ERR_REM_ACCESS);
  EXPECT_NE(B().qp(2).error, 0);
  const auto &mem = B().regions[rkey].mem;
  EXPECT_TRUE(std::all_of(mem.begin(), mem.end(), [](uint8_t b) { return b == 0; }));
  // the caller flushes the rest after the error
  mroce_stream_flush(&A().qp(1).st);
  ASSERT_EQ(A().qp(1).scq.size(), 2u);
  EXPECT_EQ(A().qp(1).scq[1].status, MROCE_ERR_FLUSH);
}

TEST_F(Pair, ReceiverNotReadyRetriesUntilPosted) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 3000)), 0);
  A().drain(f.now);
  wait([] { return false; }, 2'000'000);
  EXPECT_TRUE(A().qp(1).scq.empty());
  EXPECT_GT(B().qp(2).st.stats.rnr_sent, 0u);
  std::vector<uint8_t> buf(4096);
  B().post_recv(B().qp(2), 55, buf.data(), 4096);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
  ASSERT_EQ(B().qp(2).rcq.size(), 1u);
  EXPECT_EQ(B().qp(2).rcq[0].byte_len, 3000u);
  EXPECT_EQ(buf[2999], static_cast<uint8_t>(0xab + 2999 * 7));
}

// An RNR back-off longer than dead_ns (200 ms here) leaves nothing in
// flight: the connection is idle, not dead, when the message wakes to be
// resent (the timer once judged it before its first packet left).
TEST_F(Pair, RnrBackOffLongerThanDeadTimeIsNotDeath) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  B().qp(2).st.prm.rnr_delay_ns = 300'000'000;
  A().qp(1).st.prm.min_rnr_ns = 300'000'000;
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 100)), 0);
  A().drain(f.now);
  wait([] { return false; }, 1'000'000'000);
  EXPECT_GT(B().qp(2).st.stats.rnr_sent, 1u);
  EXPECT_EQ(A().conn->state, MROCE_CONN_ESTABLISHED);
  std::vector<uint8_t> buf(128);
  B().post_recv(B().qp(2), 55, buf.data(), 128);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }, 2'000'000'000));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
}

// An end whose connection failed (here: its dead timer, while the peer was
// unreachable) answers the peer's next packet with RESET, reason closed:
// the peer fails within a round trip instead of after its own dead_ns.
TEST_F(Pair, FailedEndResetsItsStillSendingPeer) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  mroce_conn_fail(A().conn, MROCE_ERR_DEAD);
  ASSERT_EQ(A().conn->state, MROCE_CONN_FAILED);
  const uint64_t t0 = f.now;
  ASSERT_EQ(B().post_send(B().qp(2), wr(MROCE_OP_SEND, 1, 100)), 0);
  B().drain(f.now);
  ASSERT_TRUE(wait([&] { return B().conn->state == MROCE_CONN_FAILED; }));
  EXPECT_LT(f.now - t0, 10'000'000u);  // dead_ns is 200 ms here
  EXPECT_EQ(B().conn->fail_reason, static_cast<uint32_t>(MROCE_ERR_PEER_CLOSED));
  EXPECT_GE(conn_stats(A().conn).rx_failed_conn, 1u);
  ASSERT_FALSE(B().qp(2).scq.empty());
  EXPECT_EQ(B().qp(2).scq[0].status, MROCE_ERR_RETRY_EXC);
}

// The netdev's MTU went down: a connection whose payload still fits lives
// on; one whose payload no longer fits fails at once (its packets would be
// lost every time) and resets its peer, which fails within a round trip.
TEST_F(Pair, LinkMtuBelowPayloadFailsAndResetsPeer) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  ASSERT_EQ(A().conn->tx_mss, 1024u);
  EXPECT_FALSE(mroce_conn_link_mss(A().conn, 1024));
  EXPECT_FALSE(mroce_conn_link_mss(A().conn, 9000));
  EXPECT_EQ(A().conn->state, MROCE_CONN_ESTABLISHED);
  uint32_t rkey = B().add_region(0x10000, 1 << 20);
  auto w = wr(MROCE_OP_WRITE, 1, 100'000);
  w.msg.va = 0x10000;
  w.msg.rkey = rkey;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  const uint64_t t0 = f.now;
  EXPECT_TRUE(mroce_conn_link_mss(A().conn, 1023));
  EXPECT_EQ(A().conn->state, MROCE_CONN_FAILED);
  EXPECT_EQ(A().conn->fail_reason, uint32_t{MROCE_ERR_LINK_MTU});
  ASSERT_FALSE(A().qp(1).scq.empty());
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_RETRY_EXC);
  EXPECT_FALSE(mroce_conn_link_mss(A().conn, 256));  // once
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return B().conn->state == MROCE_CONN_FAILED; }));
  EXPECT_LT(f.now - t0, 10'000'000u);  // dead_ns is 200 ms here
  EXPECT_EQ(B().conn->fail_reason, static_cast<uint32_t>(MROCE_ERR_PEER_CLOSED));
}

TEST_F(Pair, RnrRetryExhaustedFails) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  A().qp(1).st.prm.rnr_retry = 2;
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 100)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_RNR_RETRY);
}

TEST_F(Pair, SendTooLongForReceive) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  std::vector<uint8_t> buf(100);
  B().post_recv(B().qp(2), 5, buf.data(), 100);
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 3000)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_REM_OP);
  ASSERT_EQ(B().qp(2).rcq.size(), 1u);
  EXPECT_EQ(B().qp(2).rcq[0].status, MROCE_ERR_LOC_QP_OP);
}

TEST_F(Pair, UnknownStreamRetriesThenGivesUp) {
  ASSERT_TRUE(f.connect());
  A().add_qp(1);
  mroce_stream_params p{};
  p.mss = 1024;
  p.retry_cnt = 2;
  p.max_rd_atomic = 1;
  ASSERT_EQ(mroce_stream_attach(A().conn, &A().qp(1).st, 999, &p), 0);
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 10)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_RETRY_EXC);
  EXPECT_GT(conn_stats(B().conn).rx_drop_stream, 0u);
}

TEST_F(Pair, LateAttachingPeerIsRetried) {
  ASSERT_TRUE(f.connect());
  A().add_qp(1);
  B().add_qp(2);
  mroce_stream_params p{};
  p.mss = 1024;
  p.retry_cnt = 7;
  p.max_rd_atomic = 1;
  p.tx_msn = 10;
  p.rx_msn = 20;
  ASSERT_EQ(mroce_stream_attach(A().conn, &A().qp(1).st, 2, &p), 0);
  uint32_t rkey = B().add_region(0x1000, 8192);
  auto w = wr(MROCE_OP_WRITE, 1, 5000);
  w.msg.va = 0x1000;
  w.msg.rkey = rkey;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  wait([] { return false; }, 300'000);
  mroce_stream_params q = p;
  q.tx_msn = 20;
  q.rx_msn = 10;
  ASSERT_EQ(mroce_stream_attach(B().conn, &B().qp(2).st, 1, &q), 0);
  ASSERT_TRUE(wait([&] { return !A().qp(1).scq.empty(); }));
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(B().regions[rkey].mem[4999], static_cast<uint8_t>(0xab + 4999 * 7));
}

TEST_F(Pair, FenceWaitsForReads) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0x1000, 1 << 16);
  B().regions[rkey].mem[0] = 1;
  uint8_t got = 0;
  SendWr r;
  r.msg.op = MROCE_OP_READ_REQ;
  r.msg.cookie = 1;
  r.msg.len = 1;
  r.msg.va = 0x1000;
  r.msg.rkey = rkey;
  r.read_dst = &got;
  r.read_len = 1;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(r)), 0);
  auto w = wr(MROCE_OP_WRITE, 2, 1, 2);
  w.msg.va = 0x1000;
  w.msg.rkey = rkey;
  w.msg.flags = MROCE_MSG_FENCE;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == 2; }));
  EXPECT_EQ(got, 1);  // the read saw the memory before the fenced write
  EXPECT_EQ(B().regions[rkey].mem[0], 2);
}

TEST_F(Pair, ManyStreamsShareOneConnection) {
  ASSERT_TRUE(f.connect());
  uint32_t rkey = B().add_region(0, 64 << 20);
  for (uint32_t s = 0; s < 16; s++) connect_qps(f, 10 + s, 100 + s);
  for (uint32_t s = 0; s < 16; s++)
    for (int m = 0; m < 8; m++) {
      auto w = wr(MROCE_OP_WRITE, m, 50'000, static_cast<uint8_t>(s));
      w.msg.va = (s * 8 + m) * 65536ull;
      w.msg.rkey = rkey;
      ASSERT_EQ(A().post_send(A().qp(10 + s), std::move(w)), 0);
    }
  A().drain(f.now);
  ASSERT_TRUE(wait([&] {
    for (uint32_t s = 0; s < 16; s++)
      if (A().qp(10 + s).scq.size() < 8) return false;
    return true;
  }));
  for (uint32_t s = 0; s < 16; s++)
    for (int m = 0; m < 8; m++)
      ASSERT_EQ(B().regions[rkey].mem[(s * 8 + m) * 65536ull + 49'999],
                static_cast<uint8_t>(s + 49'999 * 7));
}

TEST_F(Pair, ZeroLengthMessages) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint8_t b;
  B().post_recv(B().qp(2), 1, &b, 1);
  uint32_t rkey = B().add_region(0x1000, 16);
  auto w = wr(MROCE_OP_WRITE, 1, 0);
  w.msg.rkey = rkey;
  w.msg.va = 0x1000;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 2, 0)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == 2; }));
  ASSERT_EQ(B().qp(2).rcq.size(), 1u);
  EXPECT_EQ(B().qp(2).rcq[0].byte_len, 0u);
}

TEST_F(Pair, UnknownConnectionGetsReset) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  B().conn->id = 555;  // B forgets the connection id A knows
  ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, 1, 10)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().conn->state == MROCE_CONN_FAILED; }));
  ASSERT_EQ(A().qp(1).scq.size(), 1u);
  EXPECT_EQ(A().qp(1).scq[0].status, MROCE_ERR_RETRY_EXC);
}

TEST_F(Pair, RefusalTakesEffectInMessageOrder) {
  // routes of very unequal delay: later messages' packets overtake
  f.routes[0][0].delay_ns = 200'000;
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(5000));
  for (int i = 0; i < 8; i++) B().post_recv(B().qp(2), 100 + i, bufs[i].data(), 5000);
  for (int i = 0; i < 8; i++)
    ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, i, i == 5 ? 9000 : 4000)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).error != 0; }));
  const auto &sc = A().qp(1).scq;
  ASSERT_EQ(sc.size(), 6u);
  for (int i = 0; i < 5; i++) EXPECT_EQ(sc[i].status, MROCE_OK) << i;
  EXPECT_EQ(sc[5].status, MROCE_ERR_REM_OP);
  const auto &rc = B().qp(2).rcq;
  ASSERT_EQ(rc.size(), 6u);  // five delivered, the sixth consumed by the error
  for (int i = 0; i < 5; i++) EXPECT_EQ(rc[i].status, MROCE_OK) << i;
  EXPECT_EQ(rc[5].status, MROCE_ERR_LOC_QP_OP);
  // nothing after the refused message was placed
  EXPECT_EQ(bufs[6][0], 0);
  EXPECT_EQ(bufs[7][0], 0);
}

TEST_F(Pair, SharedReceiveQueue) {
  ASSERT_TRUE(f.connect());
  A().add_qp(1);
  B().add_qp(2).srq = true;
  connect_qps(f, 1, 2);
  std::vector<std::vector<uint8_t>> bufs(4, std::vector<uint8_t>(2048));
  for (int i = 0; i < 4; i++) B().post_recv(B().qp(2), 10 + i, bufs[i].data(), 2048);
  for (int i = 0; i < 6; i++) ASSERT_EQ(A().post_send(A().qp(1), wr(MROCE_OP_SEND, i, 2000)), 0);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return B().qp(2).rcq.size() == 4; }));
  std::vector<uint8_t> more(2048 * 2);
  B().post_recv(B().qp(2), 20, more.data(), 2048);
  B().post_recv(B().qp(2), 21, more.data() + 2048, 2048);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == 6; }));
  ASSERT_EQ(B().qp(2).rcq.size(), 6u);
  for (auto &c : A().qp(1).scq) EXPECT_EQ(c.status, MROCE_OK);
}

TEST_F(Pair, WindowFullAsksCallerToRetry) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  uint32_t rkey = B().add_region(0, 4096);
  int rc = 0, n = 0;
  while (rc == 0 && n < 1000) {
    auto w = wr(MROCE_OP_WRITE, n, 1);
    w.msg.rkey = rkey;
    rc = A().post_send(A().qp(1), std::move(w));
    n++;
  }
  EXPECT_EQ(rc, MROCE_ERR_AGAIN);
  EXPECT_EQ(n - 1, MROCE_STREAM_WINDOW);
  A().drain(f.now);
  ASSERT_TRUE(wait([&] { return A().qp(1).scq.size() == MROCE_STREAM_WINDOW; }));
  EXPECT_TRUE(mroce_stream_can_post(&A().qp(1).st));
}

TEST_F(Pair, PostRejectsBadRequests) {
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  SendWr w;
  w.msg.op = MROCE_OP_FETCH_ADD;
  w.msg.len = 8;
  w.msg.va = 3;  // misaligned
  EXPECT_EQ(A().post_send(A().qp(1), w), MROCE_ERR_INVAL);
  w.msg.op = 0x42;
  w.msg.cookie = 1;
  EXPECT_EQ(A().post_send(A().qp(1), w), MROCE_ERR_INVAL);
  w.msg.op = MROCE_OP_WRITE;
  w.msg.cookie = 2;
  w.msg.len = 0x80000001u;
  EXPECT_EQ(A().post_send(A().qp(1), w), MROCE_ERR_INVAL);
}

}  // namespace

namespace {
// Both ends open at once and A's ACCEPT travels a much slower route than
// the data A sends right after it: B must take the data (implicit accept),
// not drop it, and the transfer must not wait for an RTO.
TEST(Handshake, DataOvertakingTheAcceptIsNotLost) {
  using namespace mroce::test;
  // a seed whose path-0 route (control packets) no other path shares
  std::unique_ptr<Fabric> fp;
  size_t slow = 0;
  for (uint64_t seed = 1; seed < 200 && !fp; seed++) {
    auto g = std::make_unique<Fabric>(seed);
    for (int d = 0; d < 2; d++) {
      g->routes[d].assign(8, Route{});
      for (auto &r : g->routes[d]) {
        r.delay_ns = 10'000;
        r.gbps = 10;
      }
    }
    auto cfg = test_cfg(4, 1024);
    g->add_endpoint(cfg);
    g->add_endpoint(cfg);
    slow = g->route_of(0, g->ep(0).conn->paths[0].sport);
    bool alone = true;
    for (uint32_t i = 1; i < 4; i++)
      alone &= g->route_of(0, g->ep(0).conn->paths[i].sport) != slow;
    // nor the port A's glue answers CONNECTs from (the cookie CHALLENGE)
    alone &= g->route_of(0, 4797) != slow;
    if (alone) fp = std::move(g);
  }
  ASSERT_TRUE(fp);
  Fabric &f = *fp;
  Endpoint &A = f.ep(0), &B = f.ep(1);
  f.routes[0][slow].delay_ns = 2'000'000;
  connect_qps(f, 1, 2);
  uint32_t rkey = B.add_region(0, 1 << 20);
  SendWr w = make_wr(MROCE_OP_WRITE, 1, 64 << 10, 9, rkey);
  ASSERT_EQ(A.post_send(A.qp(1), std::move(w)), 0);
  // B opens first; A answers B's CONNECT with ACCEPT (slow) + data (fast)
  mroce_conn_open(B.conn, f.now);
  B.drain(f.now);
  mroce_conn_open(A.conn, f.now);
  A.drain(f.now);
  ASSERT_TRUE(f.run([&] { return !A.qp(1).scq.empty(); }, 1'500'000));
  EXPECT_EQ(A.qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(conn_stats(B.conn).rx_drop_state, 0u);  // nothing dropped for want of the ACCEPT
  EXPECT_LT(f.now, 2'000'000u);                 // done before the ACCEPT arrived
  EXPECT_EQ(B.regions[rkey].mem[(64 << 10) - 1], 9);
  // once the ACCEPT arrives, B runs with the negotiated parameters
  f.run([] { return false; }, 5'000'000);
  EXPECT_EQ(B.conn->npaths, 4u);
  EXPECT_NE(B.conn->peer_nonce, 0u);
  EXPECT_EQ(B.conn->tx_mss, 1024u);  // payloads that fit any Ethernet MTU, then 1024
}
}  // namespace

namespace {

using namespace mroce::test;

// Largest data payload each endpoint put on the wire, after a WRITE each
// way and a READ from A, between endpoints of mss @ma and @mb.
std::pair<uint32_t, uint32_t> largest_payloads(uint32_t ma, uint32_t mb) {
  Fabric f{11};
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(4, Route{});
    for (auto &r : f.routes[d]) r.gbps = 10;
  }
  f.add_endpoint(test_cfg(4, ma));
  f.add_endpoint(test_cfg(4, mb));
  EXPECT_TRUE(f.connect());
  connect_qps(f, 1, 2, 65535);  // the QPs' path MTU does not limit
  uint32_t largest[2] = {0, 0};
  for (int e = 0; e < 2; e++)
    f.ep(e).drop = [&largest, e](Endpoint &, const uint8_t *b, uint32_t n) {
      mroce_pkt p;
      if (mroce_wire_decode(b, n, &p) == MROCE_OK)
        largest[e] = std::max(largest[e], p.payload_len);
      return false;
    };
  constexpr uint32_t kLen = 256 << 10;
  uint32_t ka = f.ep(0).add_region(0, kLen), kb = f.ep(1).add_region(0, kLen);
  std::vector<uint8_t> dst(kLen);
  for (int e = 0; e < 2; e++) {
    SendWr w = make_wr(MROCE_OP_WRITE, 1, kLen, 5, e ? ka : kb);
    Qp &q = e ? f.ep(1).qp(2) : f.ep(0).qp(1);
    EXPECT_EQ(f.ep(e).post_send(q, std::move(w)), 0);
  }
  SendWr r;
  r.msg.op = MROCE_OP_READ_REQ;
  r.msg.cookie = 2;
  r.msg.len = kLen;
  r.msg.rkey = kb;
  r.read_dst = dst.data();
  r.read_len = kLen;
  EXPECT_EQ(f.ep(0).post_send(f.ep(0).qp(1), std::move(r)), 0);
  f.ep(0).drain(f.now);
  f.ep(1).drain(f.now);
  EXPECT_TRUE(f.run([&] {
    return f.ep(0).qp(1).scq.size() == 2 && f.ep(1).qp(2).scq.size() == 1;
  }, 500'000'000));
  EXPECT_EQ(f.ep(0).conn->tx_mss, std::min(ma, mb));
  EXPECT_EQ(f.ep(1).conn->tx_mss, std::min(ma, mb));
  EXPECT_EQ(dst[kLen - 1], 5);
  return {largest[0], largest[1]};
}

// Payload per packet is negotiated in the hello (max_payload): each end
// sends at most what the other said it receives, jumbo frames included.
TEST(Handshake, PayloadIsTheSmallerOfBothMaximums) {
  auto both_jumbo = largest_payloads(8192, 8192);
  EXPECT_EQ(both_jumbo.first, 8192u);
  EXPECT_EQ(both_jumbo.second, 8192u);  // WRITE and READ response alike
  auto mixed = largest_payloads(8192, 2048);
  EXPECT_EQ(mixed.first, 2048u);
  EXPECT_EQ(mixed.second, 2048u);
}

}  // namespace

namespace {

// max_payload states what this end receives: its own mss, also after an
// implicit accept has cut what it sends to 1024 until the ACCEPT comes.
TEST(Handshake, HelloStatesWhatThisEndReceives) {
  Fabric f{13};
  for (int d = 0; d < 2; d++) f.routes[d].assign(1, Route{});
  f.add_endpoint(test_cfg(1, 8192));
  f.add_endpoint(test_cfg(1, 8192));
  Endpoint &A = f.ep(0), &B = f.ep(1);
  std::vector<uint16_t> stated;
  B.drop = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    mroce_pkt p;
    if (mroce_wire_decode(b, n, &p) == MROCE_OK &&
        p.hdr.opcode == MROCE_OP_CONNECT)
      stated.push_back(p.hello.max_payload);
    return true;  // nothing reaches A: B keeps asking
  };
  mroce_conn_open(B.conn, f.now);
  B.drain(f.now);
  mroce_hdr h{};
  h.src_conn = A.conn->id;
  mroce_conn_implicit_accept(B.conn, &h, f.now);
  ASSERT_EQ(B.conn->tx_mss, uint32_t{MROCE_IMPLICIT_PAYLOAD});
  f.run([&] { return stated.size() >= 3; }, 1'000'000'000);
  ASSERT_GE(stated.size(), 3u);
  for (uint16_t v : stated) EXPECT_EQ(v, 8192);
}

// The ACCEPT that completes an implicit accept may state a payload limit
// below the 1024 bytes sent meanwhile (a link under IPv6's minimum MTU).
// A resent packet keeps its payload, so those could never get through: the
// connection fails at once, with its own cause, rather than at the dead
// timer; below what was sent, the peer's limit is simply adopted.
void late_accept(uint16_t max_payload, uint32_t write_len, bool want_fail) {
  Fabric f{14};
  for (int d = 0; d < 2; d++) f.routes[d].assign(1, Route{});
  f.add_endpoint(test_cfg(1, 8192));
  f.add_endpoint(test_cfg(1, 8192));
  connect_qps(f, 1, 2, 8192);
  Endpoint &A = f.ep(0), &B = f.ep(1);
  B.drop = [](Endpoint &, const uint8_t *, uint32_t) { return true; };
  mroce_conn_open(B.conn, f.now);
  B.drain(f.now);
  mroce_hdr h{};
  h.src_conn = A.conn->id;
  mroce_conn_implicit_accept(B.conn, &h, f.now);
  if (write_len) {
    SendWr w = make_wr(MROCE_OP_WRITE, 1, write_len, 1, 0x100);
    ASSERT_EQ(B.post_send(B.qp(2), std::move(w)), 0);
    B.drain(f.now);
    EXPECT_EQ(B.conn->implicit_len, std::min(write_len, 1024u));
  }
  mroce_pkt p{};
  p.hdr.opcode = MROCE_OP_ACCEPT;
  p.hdr.dst_conn = B.conn->id;
  p.hdr.src_conn = A.conn->id;
  p.hello = {0x77, B.conn->nonce, 1, max_payload, 4096, 0};
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN);
  b.resize(mroce_wire_encode(&p, b.data()));
  mroce_pkt d;
  ASSERT_EQ(mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d),
            MROCE_OK);
  mroce_rx_meta m{b.data(), 0};
  mroce_conn_rx(B.conn, &d, b.data(), &m, f.now);
  if (want_fail) {
    EXPECT_EQ(B.conn->state, MROCE_CONN_FAILED);
    EXPECT_EQ(B.conn->fail_reason, uint32_t{MROCE_ERR_PAYLOAD});
    EXPECT_EQ(B.qp(2).scq.size(), 1u);  // the WRITE: retry exceeded
  } else {
    EXPECT_EQ(B.conn->state, MROCE_CONN_ESTABLISHED);
    EXPECT_EQ(B.conn->tx_mss, uint32_t{max_payload});
  }
}

TEST(Handshake, LateAcceptBelowPayloadsSentFails) { late_accept(256, 2000, true); }
TEST(Handshake, LateAcceptBelowIdleImplicitAdopts) { late_accept(256, 0, false); }
TEST(Handshake, LateAcceptAboveWhatWasSentAdopts) { late_accept(512, 300, false); }

// Configuration checks of mroce_conn_init().
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

// Regression (fuzz_conn_rx): a repeated CONNECT with fewer paths shrank an established connection.
// fuzz_conn_rx (seed connect-repeat-fewer-paths): an established peer
// repeating its CONNECT (same nonce, our ACCEPT was lost) with fewer paths
// re-set npaths under packets in flight on the paths dropped: their bytes
// never left c->inflight and mroce_stream_detach() no longer visited them,
// leaving pointers to a freed stream in the scoreboard.
TEST_F(Regress, RepeatedConnectDoesNotShrinkAnEstablishedConnection) {
  for (auto &r : f.routes[1])
    r.up = false; // B's ACKs never arrive
  SendWr w = make_wr(MROCE_OP_SEND, 1, 4096, 1);
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  mroce_conn *c = A().conn;
  ASSERT_EQ(c->npaths, 2u);
  ASSERT_GT(c->paths[1].inflight, 0u);
  uint32_t window = c->tx_dsn_window;

  mroce_pkt h{};
  h.hdr.opcode = MROCE_OP_CONNECT;
  h.hdr.src_conn = B().conn->id;
  h.hello.nonce = B().conn->nonce;
  h.hello.max_paths = 1;
  h.hello.dsn_window = MROCE_PATH_WINDOW;
  inject(A(), h);

  EXPECT_EQ(c->state, MROCE_CONN_ESTABLISHED);
  EXPECT_EQ(c->npaths, 2u);
  EXPECT_EQ(c->tx_dsn_window, window);
  EXPECT_TRUE(c->accept_pending);  // it only means our ACCEPT was lost

  // a repeated ACCEPT cannot shrink it either
  for (auto &r : f.routes[0]) r.up = false;
  mroce_pkt acc = h;
  acc.hdr.opcode = MROCE_OP_ACCEPT;
  acc.hdr.dst_conn = c->id;
  acc.hello.echo_nonce = c->nonce;
  inject(A(), acc);
  EXPECT_EQ(c->npaths, 2u);
  EXPECT_EQ(c->tx_dsn_window, window);
}

}  // namespace
