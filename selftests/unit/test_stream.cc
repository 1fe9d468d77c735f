// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Streams as a whole (stream.c): initialisation, the accessors, the
// transmit start.
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

// Zeroed memory initialised without the clear is the stream a full init
// makes of any memory (same address: the lists point at themselves).
TEST(Stream, InitZeroedEqualsInit) {
  std::vector<uint8_t> mem(sizeof(mroce_stream)), want;
  auto *st = reinterpret_cast<mroce_stream *>(mem.data());
  std::fill(mem.begin(), mem.end(), 0xa5);
  int owner = 0;
  mroce_stream_init(st, 0x12345678, &owner);
  want = mem;
  std::fill(mem.begin(), mem.end(), 0);
  mroce_stream_init_zeroed(st, 0x12345678, &owner);
  EXPECT_EQ(mem, want);
  EXPECT_EQ(st->state, MROCE_STREAM_IDLE);
  EXPECT_EQ(st->id, 0x12345678u & MROCE_STREAM_MASK);
}

// The accessors of mroce.h read what the struct holds.
TEST(Stream, Accessors) {
  EXPECT_EQ(mroce_stream_size(), sizeof(mroce_stream));
  std::vector<uint64_t> mem(mroce_stream_size() / sizeof(uint64_t) + 1);
  auto *st = reinterpret_cast<mroce_stream *>(mem.data());
  int owner = 0;
  mroce_stream_init(st, 0x1234, &owner);
  EXPECT_EQ(mroce_stream_get_ctx(st), &owner);
  EXPECT_EQ(mroce_stream_get_id(st), 0x1234u);
  EXPECT_EQ(mroce_stream_get_state(st), MROCE_STREAM_IDLE);
  EXPECT_EQ(mroce_stream_get_conn(st), nullptr);
  st->tx_una = 0xfffffffe;
  st->tx_end = 3;
  EXPECT_EQ(mroce_stream_sq_outstanding(st), 5u);
  st->stats.rnr_sent = 7;
  mroce_stream_stats s{};
  mroce_stream_get_stats(st, &s);
  EXPECT_EQ(s.rnr_sent, 7u);
  mroce_txmsg_info ti{};
  EXPECT_FALSE(mroce_stream_get_txmsg_info(st, 3, &ti));
  EXPECT_FALSE(mroce_stream_get_txmsg_info(st, 0xfffffffd, &ti));
  st->tx[1].msn = 1;
  st->tx[1].m.len = 99;
  ASSERT_TRUE(mroce_stream_get_txmsg_info(st, 1, &ti));
  EXPECT_EQ(ti.msn, 1u);
  EXPECT_EQ(ti.len, 99u);
  mroce_rxmsg_info ri{};
  EXPECT_FALSE(mroce_stream_get_rxmsg_info(st, 4, &ri));
  st->rx[4].state = MROCE_RXM_READY;
  st->rx[4].total = 10;
  ASSERT_TRUE(mroce_stream_get_rxmsg_info(st, 4, &ri));
  EXPECT_EQ(ri.total, 10u);
  mroce_stream_params prm{};
  prm.mss = 1;
  prm.rnr_retry = 3;
  prm.ack_timeout_ns = 42;
  mroce_stream_set_requester(st, &prm);
  EXPECT_EQ(st->prm.rnr_retry, 3);
  EXPECT_EQ(st->prm.ack_timeout_ns, 42u);
  EXPECT_EQ(st->prm.mss, 0u);
}

TEST(StreamStart, TxStartOnlyBeforeFirstPost) {
  mroce::test::Fabric f{1};
  f.routes[0].assign(1, mroce::test::Route{});
  f.routes[1].assign(1, mroce::test::Route{});
  f.add_endpoint(mroce::test::test_cfg(1, 1024));
  f.add_endpoint(mroce::test::test_cfg(1, 1024));
  ASSERT_TRUE(f.connect());
  mroce::test::connect_qps(f, 1, 2);
  auto &st = f.ep(0).qp(1).st;
  EXPECT_EQ(mroce_stream_set_tx_start(&st, 0x777), 0);
  EXPECT_EQ(st.tx_end, 0x777u);
  mroce::test::SendWr w;
  w.msg.op = MROCE_OP_SEND;
  w.msg.cookie = 1;
  ASSERT_EQ(f.ep(0).post_send(f.ep(0).qp(1), w), 0);
  EXPECT_EQ(mroce_stream_set_tx_start(&st, 5), MROCE_ERR_INVAL);
}

}  // namespace
