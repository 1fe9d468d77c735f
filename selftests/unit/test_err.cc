// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The core's one error space (err.c): every value has a name and a text of
// its own and the group its range says; the wire's NACK statuses and RESET
// reasons map onto it one to one (wire.h).
#include <gtest/gtest.h>

#include <set>
#include <string>

extern "C" {
#include "wire.h"
}

namespace {

// Every value of enum mroce_err, by group.
const std::vector<std::pair<int, std::vector<int>>> kGroups = {
    {MROCE_EG_CALL, {MROCE_ERR_AGAIN, MROCE_ERR_INVAL}},
    {MROCE_EG_WIRE,
     {MROCE_ERR_SHORT, MROCE_ERR_VERSION, MROCE_ERR_OPCODE, MROCE_ERR_RESERVED,
      MROCE_ERR_FLAGS, MROCE_ERR_LENGTH, MROCE_ERR_FIELD}},
    {MROCE_EG_REFUSED,
     {MROCE_ERR_RNR, MROCE_ERR_ACCESS, MROCE_ERR_INVALID, MROCE_ERR_OPERR,
      MROCE_ERR_WINDOW, MROCE_ERR_NO_STREAM}},
    {MROCE_EG_WC,
     {MROCE_ERR_RNR_RETRY, MROCE_ERR_REM_ACCESS, MROCE_ERR_REM_INVALID,
      MROCE_ERR_REM_OP, MROCE_ERR_RETRY_EXC, MROCE_ERR_LOC_PROT,
      MROCE_ERR_LOC_LEN, MROCE_ERR_FLUSH, MROCE_ERR_LOC_QP_OP}},
    {MROCE_EG_CONN,
     {MROCE_ERR_PEER_UNKNOWN, MROCE_ERR_PEER_CLOSED, MROCE_ERR_PEER_REFUSED,
      MROCE_ERR_NO_ANSWER, MROCE_ERR_DEAD, MROCE_ERR_RESTARTED,
      MROCE_ERR_PAYLOAD, MROCE_ERR_LINK_MTU}},
};

TEST(Err, EveryValueHasItsOwnNameTextAndGroup) {
  std::set<std::string> names, texts;
  size_t n = 0;
  for (const auto &[group, errs] : kGroups) {
    for (size_t i = 0; i < errs.size(); i++) {
      const int e = errs[i];
      SCOPED_TRACE(e);
      EXPECT_EQ(e, group + static_cast<int>(i)) << "groups are contiguous";
      EXPECT_EQ(mroce_err_group(e), group);
      EXPECT_STRNE(mroce_err_name(e), "unknown");
      EXPECT_STRNE(mroce_strerror(e), "unknown error");
      names.insert(mroce_err_name(e));
      texts.insert(mroce_strerror(e));
      n++;
    }
  }
  EXPECT_EQ(names.size(), n);
  EXPECT_EQ(texts.size(), n);
  EXPECT_STREQ(mroce_err_name(MROCE_OK), "ok");
  EXPECT_STREQ(mroce_strerror(MROCE_OK), "success");
  EXPECT_EQ(mroce_err_group(MROCE_OK), 0);
  EXPECT_EQ(MROCE_ERR_WIRE_NR, 7);
}

TEST(Err, ValuesOutsideTheSpaceAreUnknown) {
  for (int e :
       {-1, 3, 0x0f, MROCE_ERR_FIELD + 1, MROCE_ERR_NO_STREAM + 1,
        MROCE_ERR_LOC_QP_OP + 1, MROCE_ERR_LINK_MTU + 1, 0x50, 0xff, 1 << 20}) {
    SCOPED_TRACE(e);
    EXPECT_STREQ(mroce_err_name(e), "unknown");
    EXPECT_STREQ(mroce_strerror(e), "unknown error");
  }
}

// protocol.md numbers the NACK statuses 1..6 and the RESET reasons 1..3.
TEST(Err, WireCodesMapOneToOne) {
  const int nacks[] = {MROCE_ERR_RNR,   MROCE_ERR_ACCESS, MROCE_ERR_INVALID,
                       MROCE_ERR_OPERR, MROCE_ERR_WINDOW, MROCE_ERR_NO_STREAM};
  EXPECT_EQ(mroce_nack_err(0), MROCE_OK);
  EXPECT_EQ(mroce_err_nack(MROCE_OK), 0);
  for (int w = 1; w <= MROCE_NACK_MAX; w++) {
    EXPECT_EQ(mroce_nack_err(static_cast<uint8_t>(w)), nacks[w - 1]);
    EXPECT_EQ(mroce_err_nack(nacks[w - 1]), w);
  }
  EXPECT_EQ(mroce_reset_err(MROCE_RESET_UNKNOWN_CONN), MROCE_ERR_PEER_UNKNOWN);
  EXPECT_EQ(mroce_reset_err(MROCE_RESET_CLOSED), MROCE_ERR_PEER_CLOSED);
  EXPECT_EQ(mroce_reset_err(MROCE_RESET_VERSION), MROCE_ERR_PEER_REFUSED);

  // Through the codec: each status byte decodes to its error and back.
  for (int w = 0; w <= MROCE_NACK_MAX; w++) {
    mroce_ack_stream as{
        7, 9, 8, static_cast<uint8_t>(mroce_nack_err(static_cast<uint8_t>(w))),
        1, 0};
    uint8_t b[MROCE_ACK_STREAM_LEN];
    mroce_wire_put_ack_stream(&as, b);
    EXPECT_EQ(b[12], w);
  }
}

} // namespace
