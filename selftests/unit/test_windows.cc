// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// Sequence windows against forged and stale packets (rx.c, rx_window_ok()):
// a packet with the live connection and stream ids but a psn, dsn or msn
// outside its window is dropped, counted once, and moves nothing, while a
// transfer runs to a byte-exact end.  The legitimate moves (a dsn jump over
// abandoned dsns, a psn forced past a path's blackout) still happen.  And
// no work request hangs: the oldest message fails with retry exceeded
// within T * (retry_cnt + 1) without progress (requester.c, stall_bound()).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

constexpr uint32_t kLen = 1 << 20;  // the running transfer

// What a dropped packet must not move at the receiver.
struct Snap {
  uint32_t cum[MROCE_MAX_PATHS], nxt[MROCE_MAX_PATHS], count[MROCE_MAX_PATHS];
  uint64_t bits[MROCE_MAX_PATHS][MROCE_SACK_WORDS];
  uint64_t ack_at, ack_mask;
  uint8_t ack_now;
  uint32_t dsn_base, rx_next;
  uint64_t dsn_bits[MROCE_DSN_WINDOW / 64];
  mroce_conn_stats stats;
  mroce_stream_stats st_stats;

  Snap(const mroce_conn *c, const mroce_stream *st) {
    std::memset(this, 0, sizeof(*this));
    for (uint32_t i = 0; i < c->cfg.npaths; i++) {
      cum[i] = c->paths[i].rcv_cum;
      nxt[i] = c->paths[i].rcv_nxt;
      count[i] = c->paths[i].rcv_count;
      std::memcpy(bits[i], c->paths[i].rcv_bits, sizeof(bits[i]));
    }
    ack_at = c->ack_at;
    ack_mask = c->ack_mask;
    ack_now = c->ack_now;
    dsn_base = c->rx_dsn_base;
    std::memcpy(dsn_bits, c->rx_dsn_bits, sizeof(dsn_bits));
    rx_next = st->rx_next;
    stats = conn_stats(c);
    st_stats = st->stats;
  }
};

struct Windows : ::testing::Test {
  Fabric f{21};
  uint32_t rkey = 0;
  std::vector<uint8_t> want;
  void SetUp() override {
    ASSERT_TRUE(routed_pair(f, 4, 20'000));
    rkey = B().add_region(0, 4 << 20);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }
  mroce_conn *bc() { return B().conn; }

  // A 1 MiB WRITE from A to B, run until B placed part of it.
  void start() {
    SendWr w = make_wr(MROCE_OP_WRITE, 1, kLen, 0, rkey, 0);
    pattern(w, 3);
    want = w.data;
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
    A().drain(f.now);
    ASSERT_TRUE(f.run([&] { return conn_stats(bc()).rx_data >= 200; },
                      2'000'000'000));
    ASSERT_LT(conn_stats(bc()).rx_data, kLen / 1024);  // still running
  }
  void finish() {
    ASSERT_TRUE(f.run([&] { return !A().qp(1).scq.empty(); }, 2'000'000'000));
    EXPECT_EQ(A().qp(1).scq[0].status, MROCE_OK);
    EXPECT_EQ(A().qp(1).error, 0);
    EXPECT_EQ(B().qp(2).error, 0);
    EXPECT_EQ(std::memcmp(B().regions.at(rkey).mem.data(), want.data(), kLen), 0);
  }
  // A psn of path 0 inside its window and not yet received.
  uint32_t new_psn() {
    const mroce_path *p = &bc()->paths[0];
    for (uint32_t psn = p->rcv_cum + MROCE_PATH_WINDOW - 1;; psn--)
      if (mroce_sack_check(p, psn) == MROCE_SACK_NEW) return psn;
  }
  // A dsn inside the window and not yet received.
  uint32_t new_dsn() {
    for (uint32_t dsn = bc()->rx_dsn_base + bc()->cfg.dsn_window - 1;; dsn--)
      if (mroce_dsn_check(bc(), dsn) == MROCE_DSN_NEW) return dsn;
  }
  // A WRITE of 64 bytes of 0xee into the transfer's target, with the live
  // ids of the stream A 1 -> B 2: placed, it would corrupt the transfer.
  mroce_pkt forged() {
    mroce_pkt p{};
    p.hdr.opcode = MROCE_OP_WRITE;
    p.hdr.dst_conn = bc()->id;
    p.hdr.src_conn = A().conn->id;
    p.hdr.path = 0;
    p.hdr.psn = new_psn();
    p.hdr.dsn = new_dsn();
    p.hdr.dst_stream = 2;
    p.hdr.src_stream = 1;
    p.hdr.msn = B().qp(2).st.rx_next;
    p.data.rkey = rkey;
    p.data.va = 0;
    p.data.total = kLen;
    p.data.offset = 4096;
    return p;
  }
  void inject(const mroce_pkt &p) {
    std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + 64);
    uint32_t n = mroce_wire_encode(&p, b.data());
    std::memset(&b[n], 0xee, 64);
    b.resize(n + 64);
    mroce_pkt d;
    ASSERT_EQ(mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d),
              MROCE_OK);
    mroce_rx_meta m{b.data(), 0};
    mroce_conn_rx(bc(), &d, b.data(), &m, f.now);
  }
  // Inject @p mid-transfer: dropped, counted once in @ctr (and the
  // stream's rx_window for an msn), nothing else moved; the transfer ends
  // byte-exact.
  void attack(const mroce_pkt &p, uint64_t mroce_conn_stats::*ctr) {
    Snap before(bc(), &B().qp(2).st);
    inject(p);
    Snap after(bc(), &B().qp(2).st);
    mroce_conn_stats want_stats = before.stats;
    want_stats.rx_pkts++;
    want_stats.rx_bytes += 64;
    want_stats.*ctr += 1;
    EXPECT_EQ(std::memcmp(&after.stats, &want_stats, sizeof(want_stats)), 0)
        << "counters other than rx_pkts, rx_bytes and the drop moved";
    mroce_stream_stats want_st = before.st_stats;
    if (ctr == &mroce_conn_stats::rx_drop_msn) want_st.rx_window++;
    EXPECT_EQ(std::memcmp(&after.st_stats, &want_st, sizeof(want_st)), 0);
    after.stats = before.stats;
    after.st_stats = before.st_stats;
    EXPECT_EQ(after.cum[0], before.cum[0]);
    EXPECT_EQ(after.dsn_base, before.dsn_base);
    EXPECT_EQ(after.rx_next, before.rx_next);
    EXPECT_EQ(std::memcmp(&after, &before, sizeof(Snap)), 0)
        << "receiver state moved";
    EXPECT_EQ(B().place_calls, before_places);
    finish();
  }
  uint64_t before_places = 0;
  mroce_pkt armed() {
    start();
    before_places = B().place_calls;
    return forged();
  }
};

// (a) a psn far ahead of its path, its dsn more than a window below the
// base: it cannot force the path's window up (a dsn in the window, new or
// a duplicate, would vouch for it: by design)
TEST_F(Windows, PsnFarAheadIsDropped) {
  mroce_pkt p = armed();
  p.hdr.psn = bc()->paths[0].rcv_cum + 1000;
  p.hdr.dsn = bc()->rx_dsn_base - bc()->cfg.dsn_window - 1;
  attack(p, &mroce_conn_stats::rx_drop_psn);
}

// (b) a psn far behind (LATE) cannot carry a dsn jump
TEST_F(Windows, PsnFarBehindIsDropped) {
  mroce_pkt p = armed();
  p.hdr.psn = bc()->paths[0].rcv_cum - 1000;
  p.hdr.dsn = bc()->rx_dsn_base + bc()->cfg.dsn_window + 5;
  attack(p, &mroce_conn_stats::rx_drop_psn);
}

// (c) a dsn beyond any jump the sender could make, with a good psn
TEST_F(Windows, DsnFarAheadIsDropped) {
  mroce_pkt p = armed();
  p.hdr.dsn = bc()->rx_dsn_base + MROCE_DSN_JUMP_MAX + 7;
  attack(p, &mroce_conn_stats::rx_drop_dsn);
}

// (c) the top of [base + window, base + 2^31)
TEST_F(Windows, DsnHalfAheadIsDropped) {
  mroce_pkt p = armed();
  p.hdr.dsn = bc()->rx_dsn_base + 0x7fffffffu;
  attack(p, &mroce_conn_stats::rx_drop_dsn);
}

// (d) a dsn more than a window below the base is no duplicate: nothing,
// not even its psn, is recorded
TEST_F(Windows, DsnFarBelowIsDropped) {
  mroce_pkt p = armed();
  p.hdr.dsn = bc()->rx_dsn_base - bc()->cfg.dsn_window - 5;
  attack(p, &mroce_conn_stats::rx_drop_dsn);
}

// (e) an msn beyond the responder's window: no NACK, no broken QP
TEST_F(Windows, MsnOutsideWindowIsDropped) {
  mroce_pkt p = armed();
  p.hdr.msn = B().qp(2).st.rx_next + 1000;
  attack(p, &mroce_conn_stats::rx_drop_msn);
}

// (e) a response to a READ never posted
TEST_F(Windows, ResponseBeyondPostedIsDropped) {
  // B -> A direction: A is the requester of stream 1
  start();
  mroce_pkt p{};
  p.hdr.opcode = MROCE_OP_READ_RESP;
  p.hdr.dst_conn = A().conn->id;
  p.hdr.src_conn = bc()->id;
  p.hdr.path = 0;
  const mroce_path *ap = &A().conn->paths[0];
  p.hdr.psn = ap->rcv_cum + 10;
  p.hdr.dsn = A().conn->rx_dsn_base + 10;
  p.hdr.dst_stream = 1;
  p.hdr.src_stream = 2;
  p.hdr.msn = A().qp(1).st.tx_end + 3;
  p.data.total = 64;
  mroce_conn_stats s0 = conn_stats(A().conn);
  uint32_t cum = ap->rcv_cum, base = A().conn->rx_dsn_base;
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + 64);
  uint32_t n = mroce_wire_encode(&p, b.data());
  b.resize(n + 64);
  mroce_pkt d;
  ASSERT_EQ(mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d),
            MROCE_OK);
  mroce_rx_meta m{b.data(), 0};
  mroce_conn_rx(A().conn, &d, b.data(), &m, f.now);
  EXPECT_EQ(conn_stats(A().conn).rx_drop_msn, s0.rx_drop_msn + 1);
  EXPECT_EQ(conn_stats(A().conn).rx_data, s0.rx_data);
  EXPECT_EQ(ap->rcv_cum, cum);
  EXPECT_EQ(A().conn->rx_dsn_base, base);
  finish();
}

// (f) both numbers far
TEST_F(Windows, PsnAndDsnFarAreDropped) {
  mroce_pkt p = armed();
  p.hdr.psn = bc()->paths[0].rcv_cum + 5000;
  p.hdr.dsn = bc()->rx_dsn_base + bc()->cfg.dsn_window + 9;
  attack(p, &mroce_conn_stats::rx_drop_psn);
}

// ---- what a live sender does still works ----

// Messages refused for want of a receive are resent as new attempts; the
// old attempts' lost packets are abandoned, never resent: their dsns stay
// holes at the receiver until a dsn a window ahead drags the window over
// them, vouched for by its in-window psn.  A small dsn window makes the
// jumps come soon.
TEST(WindowsLegit, DsnJumpOverAbandonedDsns) {
  Fabric f{5};
  for (auto &r : f.routes) {
    r.assign(4, Route{});
    for (auto &x : r) x.gbps = 10;
  }
  auto cfg = test_cfg(4, 1024);
  cfg.dsn_window = 4 * MROCE_PATH_WINDOW;
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  Endpoint &A = f.ep(0), &B = f.ep(1);
  for (auto &r : f.routes[0]) r.loss = 0.1;
  const int n = 64;
  const uint32_t len = 16 << 10;
  std::vector<std::vector<uint8_t>> bufs(n, std::vector<uint8_t>(len));
  for (int i = 0; i < n; i++) {
    SendWr w = make_wr(MROCE_OP_SEND, i, len, 0);
    pattern(w, static_cast<uint8_t>(i));
    ASSERT_EQ(A.post_send(A.qp(1), std::move(w)), 0);
  }
  A.drain(f.now);
  // no receive yet: RNR, resends, while 10% of the data is lost
  f.run([] { return false; }, 2'000'000);
  for (int i = 0; i < n; i++) B.post_recv(B.qp(2), 1000 + i, bufs[i].data(), len);
  ASSERT_TRUE(f.run([&] { return A.qp(1).scq.size() == n; }, 5'000'000'000));
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(A.qp(1).scq[i].status, MROCE_OK);
    for (uint32_t k = 0; k < len; k++)
      if (bufs[i][k] != static_cast<uint8_t>(i + k * 7)) {
        ADD_FAILURE() << "message " << i << " byte " << k;
        break;
      }
  }
  mroce_conn_stats s = conn_stats(B.conn);
  EXPECT_GT(s.rx_dsn_jumps, 0u);
  EXPECT_GT(B.qp(2).st.stats.rnr_sent, 0u);
  // A genuine packet that is at once FAR on its lossy path and the first
  // to jump is dropped (rx_window_ok()): its retransmission goes through.
  EXPECT_EQ(s.rx_drop_dsn + s.rx_drop_msn, 0u);
  EXPECT_LE(s.rx_drop_psn, s.rx_dsn_jumps);
}

// A blackout of one path longer than 256 packets: the first psn after it
// is 256 or more above the receiver's cumulative point and forces it up,
// vouched for by its new dsn.
TEST(WindowsLegit, PsnForcedAdvanceAfterBlackout) {
  Fabric f{6};
  for (auto &r : f.routes) {
    r.assign(4, Route{});
    for (auto &x : r) x.gbps = 10;
  }
  auto cfg = test_cfg(4, 1024);
  cfg.init_cwnd = 512 * 1024;
  cfg.conn_init_cwnd = cfg.conn_max_cwnd = 4096 * 1024;
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  Endpoint &A = f.ep(0), &B = f.ep(1);
  uint32_t rkey = B.add_region(0, 8 << 20);
  const uint32_t from = B.conn->paths[0].rcv_cum + 20;
  uint64_t blacked = 0;
  // every data packet of path 0 with a psn in [from, from + 300) is lost
  A.drop = [&](Endpoint &, const uint8_t *b, uint32_t len) {
    mroce_pkt p;
    if (mroce_wire_decode(b, len, &p) != MROCE_OK || p.hdr.path != 0 ||
        p.hdr.opcode < MROCE_OP_WRITE || p.hdr.opcode > MROCE_OP_FETCH_ADD)
      return false;
    if (p.hdr.psn - from < 300) {
      blacked++;
      return true;
    }
    return false;
  };
  SendWr w = make_wr(MROCE_OP_WRITE, 1, 8 << 20, 0, rkey, 0);
  pattern(w, 9);
  std::vector<uint8_t> want = w.data;
  ASSERT_EQ(A.post_send(A.qp(1), std::move(w)), 0);
  A.drain(f.now);
  ASSERT_TRUE(f.run([&] { return !A.qp(1).scq.empty(); }, 10'000'000'000));
  EXPECT_EQ(A.qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(blacked, 300u);
  // the holes [from, from + 300) are never filled: only a forced advance
  // takes the cumulative point past them
  EXPECT_GT(B.conn->paths[0].rcv_cum - from, 300u);
  EXPECT_EQ(std::memcmp(B.regions.at(rkey).mem.data(), want.data(), want.size()), 0);
  mroce_conn_stats s = conn_stats(B.conn);
  // A genuine packet that is at once FAR on its lossy path and the first
  // to jump is dropped (rx_window_ok()): its retransmission goes through.
  EXPECT_EQ(s.rx_drop_dsn + s.rx_drop_msn, 0u);
  EXPECT_LE(s.rx_drop_psn, s.rx_dsn_jumps);
}

// Regression (unit harness, test_stall.cc): resends of packets a path had, 256 psns past its stuck cumulative point, were dropped unacked forever.
// B's READ response: its first packet is lost and resent within the
// path's window, so the hole it left is never filled; then A's ACKs of
// the response's tail are lost, and B resends the tail, at last 256 and
// more above the hole.  Those packets' dsns are duplicates: the psn must
// still force the path's window up and be acknowledged, or B resends them
// until its connection dies, its response job held all the while.
TEST(WindowsLegit, PsnForcedAdvanceByDuplicate) {
  Fabric f{7};
  for (auto &r : f.routes) {
    r.assign(1, Route{});
    r[0].gbps = 10;
  }
  auto cfg = test_cfg(1, 1024);
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  ASSERT_TRUE(f.connect());
  connect_qps(f, 1, 2);
  Endpoint &A = f.ep(0), &B = f.ep(1);
  const uint32_t len = 250 * 1024;  // 250 packets: all inside one window
  uint32_t rkey = B.add_region(0, len);
  Region &reg = B.regions.at(rkey);
  for (uint32_t i = 0; i < len; i++) reg.mem[i] = static_cast<uint8_t>(i * 7 + 1);
  const uint32_t hole = B.conn->paths[0].snd_nxt;
  uint64_t holes = 0, acks_lost = 0, resent_far = 0;
  B.drop = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    mroce_pkt p;
    if (mroce_wire_decode(b, n, &p) != MROCE_OK || p.hdr.opcode != MROCE_OP_READ_RESP)
      return false;
    resent_far += p.hdr.psn - hole >= MROCE_PATH_WINDOW;
    if (p.hdr.psn != hole) return false;
    holes++;
    return true;
  };
  // every ACK from when the READ completes until B resent 8 packets
  // beyond the window
  A.drop = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    if (n < 2 || b[1] != MROCE_OP_ACK || A.qp(1).scq.empty() ||
        B.conn->paths[0].snd_nxt - hole >= MROCE_PATH_WINDOW + 8)
      return false;
    acks_lost++;
    return true;
  };
  std::vector<uint8_t> dst(len);
  SendWr w = make_wr(MROCE_OP_READ_REQ, 1, len, 0, rkey, 0);
  w.data.clear();
  w.read_dst = dst.data();
  w.read_len = len;
  ASSERT_EQ(A.post_send(A.qp(1), std::move(w)), 0);
  A.drain(f.now);
  ASSERT_TRUE(f.run([&] { return !A.qp(1).scq.empty(); }, 1'000'000'000));
  EXPECT_EQ(A.qp(1).scq[0].status, MROCE_OK);
  EXPECT_EQ(std::memcmp(dst.data(), reg.mem.data(), len), 0);
  // B's response job is freed once every packet of it is acknowledged
  f.run([&] { return B.qp(2).st.resp_count == 0 && resent_far; }, 2'000'000'000);
  EXPECT_EQ(holes, 1u);
  EXPECT_GT(acks_lost, 0u);
  EXPECT_GT(resent_far, 0u);
  EXPECT_EQ(B.qp(2).st.resp_count, 0u);
  EXPECT_EQ(B.conn->state, MROCE_CONN_ESTABLISHED);
  EXPECT_EQ(A.conn->state, MROCE_CONN_ESTABLISHED);
  EXPECT_EQ(conn_stats(A.conn).rx_drop_psn, 0u);
  // past the hole, which only a forced advance could take it over
  EXPECT_GT(A.conn->paths[0].rcv_cum - hole, 0u);
  EXPECT_LT(A.conn->paths[0].rcv_cum - hole, 1u << 16);
}

// ---- no silent hang ----

struct Hang : ::testing::Test {
  Fabric f{8};
  uint32_t rkey = 0;
  void SetUp() override {
    ASSERT_TRUE(routed_pair(f, 4, 20'000));
    rkey = B().add_region(0, 1 << 20);
    // write something first: the paths have RTT samples
    post(0);
    ASSERT_TRUE(f.run([&] { return A().qp(1).scq.size() == 1; }, 1'000'000'000));
    ASSERT_EQ(A().qp(1).scq[0].status, MROCE_OK);
  }
  Endpoint &A() { return f.ep(0); }
  Endpoint &B() { return f.ep(1); }
  // Every dsn B receives from now on is a duplicate of the window below
  // its base: acknowledged on its path, never placed.
  void bc_shift() {
    ASSERT_EQ(B().conn->rx_dsn_base, A().conn->tx_dsn_nxt);
    B().conn->rx_dsn_base += B().conn->cfg.dsn_window / 2;
  }
  void post(uint64_t cookie) {
    SendWr w = make_wr(MROCE_OP_WRITE, cookie, 64 << 10, 1, rkey, 0);
    ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
    A().drain(f.now);
  }
  // The QP's timeout (verbs attribute) and retry count; returns the bound.
  uint64_t set_timeout(uint8_t timeout, uint8_t retry_cnt) {
    A().qp(1).st.prm.ack_timeout_ns = mroce_ib_timeout_ns(timeout);
    A().qp(1).st.prm.retry_cnt = retry_cnt;
    if (!timeout) return A().conn->cfg.dead_ns;
    return std::max(std::max(mroce_ib_timeout_ns(timeout),
                             A().conn->cfg.rto_min_ns) *
                        (retry_cnt + 1u),
                    A().conn->cfg.dead_ns);
  }
  // The second message fails with retry exceeded within the bound plus
  // the grace (one T) and timer slack; nothing completes before.
  void expect_fails_within(uint64_t t0, uint64_t bound, uint64_t grace) {
    ASSERT_TRUE(f.run([&] { return A().qp(1).scq.size() >= 2; }, 10'000'000'000));
    uint64_t took = f.now - t0;
    EXPECT_EQ(A().qp(1).scq[1].status, MROCE_ERR_RETRY_EXC);
    EXPECT_EQ(A().qp(1).error, MROCE_ERR_RETRY_EXC);
    EXPECT_GE(took, bound);
    EXPECT_LE(took, bound + grace + 2'000'000) << "bound " << bound;
  }
};

// B acknowledges every packet on its paths but never places one (as after
// a forged dsn jump before the windows were guarded): A polls, B answers
// with a frontier that never moves.
TEST_F(Hang, AckedOnPathsNeverCompletedFails) {
  uint64_t bound = set_timeout(16, 3);  // T = 268 ms, above dead_ns
  bc_shift();
  uint64_t t0 = f.now;
  post(1);
  expect_fails_within(t0, bound, mroce_ib_timeout_ns(16));
  EXPECT_GT(bound, A().conn->cfg.dead_ns);  // the QP's timeout set it
  EXPECT_GT(A().qp(1).st.stats.polls, 0u);
  EXPECT_GT(A().qp(1).st.stats.stalls, 0u);
}

// The same with timeout 0 (infinite): the connection's dead time bounds it.
TEST_F(Hang, AckedOnPathsNeverCompletedFailsWithInfiniteTimeout) {
  uint64_t bound = set_timeout(0, 7);
  bc_shift();
  uint64_t t0 = f.now;
  post(1);
  expect_fails_within(t0, bound, A().conn->cfg.rto_min_ns);
}

// A silent peer: the message fails within its bound (here the
// connection's dead time, which a short QP timeout does not undercut).
TEST_F(Hang, SilentPeerFails) {
  uint64_t bound = set_timeout(10, 3);
  for (auto &r : f.routes[0]) r.up = false;
  for (auto &r : f.routes[1]) r.up = false;
  uint64_t t0 = f.now;
  post(1);
  expect_fails_within(t0, bound, mroce_ib_timeout_ns(10));
  EXPECT_EQ(bound, A().conn->cfg.dead_ns);
}

}  // namespace
