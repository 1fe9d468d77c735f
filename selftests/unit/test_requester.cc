// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The requester (requester.c), through the harness: its bugs found after
// the fact, responses matched to the wrong kind of message, and POLL
// deadlines left armed or not re-armed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fixtures.h"
#include "harness.h"

extern "C" {
#include "internal.h"
}

using namespace mroce::test;

namespace {

// Regression (fuzz_conn_rx): an ATOMIC_RESP was taken as the response of a SEND or WRITE.
// fuzz_conn_rx: an ATOMIC_RESP naming a SEND (or WRITE) message was taken
// as that message's response: the glue was asked to store the 8-byte
// "original value" into the SEND's buffer, and the SEND completed.
TEST_F(Regress, AtomicResponseForASendIsIgnored) {
  for (auto &r : f.routes[1]) r.up = false;  // B's ACKs never arrive
  SendWr w = make_wr(MROCE_OP_SEND, 7, 100, 0x5a);
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  uint32_t msn = A().qp(1).st.tx_una;
  ASSERT_EQ(A().qp(1).st.tx[msn % MROCE_STREAM_WINDOW].state, MROCE_TXM_SENT);

  mroce_pkt p = from_b(MROCE_OP_ATOMIC_RESP, msn);
  p.data.orig = 0xdeadbeefcafef00dull;
  p.data.total = 8;
  uint64_t places = A().place_calls, stale = A().qp(1).st.stats.rx_stale;
  inject(A(), p);

  EXPECT_EQ(A().place_calls, places);  // nothing stored anywhere
  EXPECT_TRUE(A().qp(1).scq.empty());  // and the SEND still outstanding
  EXPECT_EQ(A().qp(1).st.stats.rx_stale, stale + 1);
  EXPECT_EQ(A().qp(1).error, 0);
}

// Regression (fuzz_conn_rx): a stream in error kept its POLL deadline; the timer fired forever.
// fuzz_conn_rx: a stream broke (here: a message far outside its window)
// while its POLL timer was armed.  mroce_stream_on_wake() returned early
// for a stream in error without disarming it, so mroce_conn_next_timer()
// kept reporting the same past deadline: a timer re-armed there fires
// again at once, forever.
TEST_F(Regress, BrokenStreamDisarmsItsTimer) {
  for (auto &r : f.routes[0]) r.up = false;  // we play B's ACKs ourselves
  SendWr w = make_wr(MROCE_OP_SEND, 1, 10, 1);
  ASSERT_EQ(A().post_send(A().qp(1), std::move(w)), 0);
  A().drain(f.now);
  mroce_conn *c = A().conn;

  // every packet acknowledged on its path, no stream entry: POLL armed
  mroce_pkt ack = from_b(MROCE_OP_ACK, 0);
  ack.hdr = mroce_hdr{};
  ack.hdr.opcode = MROCE_OP_ACK;
  ack.hdr.dst_conn = c->id;
  ack.hdr.src_conn = B().conn->id;
  ack.ack.npaths = static_cast<uint8_t>(c->npaths);
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + c->npaths * MROCE_ACK_PATH_LEN);
  uint32_t n = mroce_wire_encode(&ack, b.data());
  for (uint32_t i = 0; i < c->npaths; i++) {
    mroce_ack_path ap{};
    ap.path = static_cast<uint16_t>(i);
    ap.cum_psn = c->paths[i].snd_nxt;
    mroce_wire_put_ack_path(&ap, &b[n + i * MROCE_ACK_PATH_LEN]);
  }
  b.resize(n + c->npaths * MROCE_ACK_PATH_LEN);
  mroce_pkt d;
  ASSERT_EQ(mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d),
            MROCE_OK);
  mroce_rx_meta m{b.data(), 0};
  mroce_conn_rx(c, &d, b.data(), &m, f.now);
  ASSERT_NE(A().qp(1).st.poll_at, 0u);

  // the stream breaks: a WRITE at its frontier with an unknown rkey
  mroce_pkt wr = from_b(MROCE_OP_WRITE, A().qp(1).st.rx_next);
  wr.data.rkey = 0xdead;
  wr.data.total = 4;
  inject(A(), wr, 4);
  ASSERT_EQ(A().qp(1).st.state, MROCE_STREAM_ERROR);

  // the timer fires when the POLL was due; then it must not be due again
  uint64_t now = A().qp(1).st.poll_at;
  mroce_conn_on_timer(c, now);
  A().drain(now);  // what the glue does: send what is due, re-arm
  uint64_t at = mroce_conn_next_timer(c);
  EXPECT_TRUE(at == 0 || at > now) << "next_timer " << at << " at " << now;
}

// Regression (VM, ib_write_lat): a stream whose messages all completed kept a POLL deadline.
// In a ping-pong every message completed while the POLL deadline armed by
// its last byte's acknowledgement stayed: the stream kept the connection's
// timer due once per PTO, and each firing found nothing to do (seen in
// the VM as a softirq every ~2 ms per side during ib_write_lat).
TEST(Regression, ACompletedStreamArmsNoTimer) {
  using namespace mroce::test;
  Fabric f{7};
  ASSERT_TRUE(one_path_pair(f, 10'000, test_cfg(1, 1024)));
  uint32_t rkey = f.ep(1).add_region(0, 1 << 20);
  for (uint64_t k = 0; k < 3; k++) {
    ASSERT_EQ(f.ep(0).post_send(f.ep(0).qp(1), one_write(rkey, 1024, 1)), 0);
    f.ep(0).drain(f.now);
    ASSERT_TRUE(
        f.run([&] { return f.ep(0).qp(1).scq.size() == k + 1; }, 10'000'000));
    const mroce_stream &st = f.ep(0).qp(1).st;
    EXPECT_EQ(st.poll_at, 0u) << "message " << k;
    EXPECT_EQ(st.wake_at, 0u) << "message " << k;
    EXPECT_FALSE(mroce_list_linked(&st.waitq)) << "message " << k;
  }
  // nothing outstanding: what is left due is no sooner than a health epoch
  uint64_t at = mroce_conn_next_timer(f.ep(0).conn);
  EXPECT_TRUE(at == 0 || at >= f.now + f.ep(0).conn->cfg.epoch_ns / 2)
      << "next_timer " << at << " now " << f.now;
}

// Regression (VM, netem): a SEND behind a slow READ was not polled once its frontier ACK was lost.
// VM (netem 1% loss): a SEND behind a slow READ never completed.  The SEND
// was delivered, but the ACK whose stream entry moved the peer's frontier
// past it was lost; the POLL timer fired while the READ (still waiting for
// its response) was the oldest message, found nothing to poll for and was
// not re-armed.  When the READ completed, the SEND waited forever.
TEST_F(Regress, SendBehindSlowReadIsPolledWhenItsFrontierIsLost) {
  uint32_t rkey = B().add_region(0x10000, 256 * 1024);
  std::vector<uint8_t> dst(256 * 1024);
  std::vector<uint8_t> rbuf(64);
  B().post_recv(B().qp(2), 77, rbuf.data(), 64);
  // B loses every ACK with a stream entry for the first millisecond, and
  // its READ response for three (so the READ stays the oldest message).
  uint64_t lost_entries = 0;
  B().drop = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    mroce_pkt p;
    if (mroce_wire_decode(b, n, &p) != MROCE_OK) return false;
    if (p.hdr.opcode == MROCE_OP_READ_RESP) return f.now < 3'000'000;
    if (f.now >= 1'000'000 || p.hdr.opcode != MROCE_OP_ACK || !p.ack.nstreams)
      return false;
    lost_entries++;
    return true;
  };
  SendWr r;
  r.msg.op = MROCE_OP_READ_REQ;
  r.msg.cookie = 1;
  r.msg.len = static_cast<uint32_t>(dst.size());
  r.msg.va = 0x10000;
  r.msg.rkey = rkey;
  r.read_dst = dst.data();
  r.read_len = r.msg.len;
  ASSERT_EQ(A().post_send(A().qp(1), std::move(r)), 0);
  SendWr s;
  s.msg.op = MROCE_OP_SEND;
  s.msg.cookie = 2;
  s.msg.len = 64;
  s.data.assign(64, 0x5a);
  ASSERT_EQ(A().post_send(A().qp(1), std::move(s)), 0);
  A().drain(f.now);
  ASSERT_TRUE(f.run([&] { return A().qp(1).scq.size() == 2; }, 200'000'000));
  EXPECT_GT(lost_entries, 0u);
  EXPECT_EQ(A().qp(1).scq[0].cookie, 1u);
  EXPECT_EQ(A().qp(1).scq[1].cookie, 2u);
  EXPECT_EQ(A().qp(1).scq[1].status, MROCE_OK);
}

}  // namespace
