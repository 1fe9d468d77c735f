// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Address validation cookies (cookie.c): a CHALLENGE's token binds the
// address, connection id, nonce and time epoch; SipHash-2-4 against its
// published test vector.
#include <gtest/gtest.h>

#include "harness.h"

extern "C" {
#include "cookie.h"
}

using namespace mroce::test;

namespace {

TEST(Cookie, BindsAddressIdNonceAndEpoch) {
  mroce_key key{1, 2};
  mroce_pkt c{};
  c.hdr.opcode = MROCE_OP_CONNECT;
  c.hdr.src_conn = 0x1234;
  c.hello = {0xabcdef, 0, 4, 0, 4096, 0};
  auto addr = Endpoint::addr(0), other = Endpoint::addr(1);
  const uint64_t epoch = 1ull << MROCE_COOKIE_EPOCH_SHIFT, t = 5 * epoch + 7;

  uint8_t buf[MROCE_HDR_LEN + MROCE_CHALLENGE_EXT_LEN];
  ASSERT_EQ(mroce_cookie_challenge(&key, addr.data(), &c, t, buf),
            sizeof(buf));
  mroce_pkt ch;
  ASSERT_EQ(mroce_wire_decode(buf, sizeof(buf), &ch), MROCE_OK);
  EXPECT_EQ(ch.hdr.opcode, MROCE_OP_CHALLENGE);
  EXPECT_EQ(ch.hdr.dst_conn, 0x1234u);
  EXPECT_EQ(ch.hdr.src_conn, 0u);  // from no connection: nothing was kept

  EXPECT_FALSE(mroce_cookie_valid(&key, addr.data(), &c, t));  // no echo
  c.hello.echo_nonce = ch.challenge.token;
  EXPECT_TRUE(mroce_cookie_valid(&key, addr.data(), &c, t));
  EXPECT_TRUE(mroce_cookie_valid(&key, addr.data(), &c, t + epoch));
  EXPECT_FALSE(mroce_cookie_valid(&key, addr.data(), &c, t + 2 * epoch));
  EXPECT_FALSE(mroce_cookie_valid(&key, other.data(), &c, t));
  mroce_key other_key{1, 3};
  EXPECT_FALSE(mroce_cookie_valid(&other_key, addr.data(), &c, t));
  mroce_pkt d = c;
  d.hdr.src_conn++;
  EXPECT_FALSE(mroce_cookie_valid(&key, addr.data(), &d, t));
  d = c;
  d.hello.nonce++;
  EXPECT_FALSE(mroce_cookie_valid(&key, addr.data(), &d, t));
  d = c;
  d.hello.echo_nonce ^= 1;
  EXPECT_FALSE(mroce_cookie_valid(&key, addr.data(), &d, t));
}

// SipHash-2-4's published test vector (key 00..0f, 15 bytes 00..0e).
TEST(Cookie, SipHashTestVector) {
  mroce_key key{0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  uint8_t in[15];
  for (int i = 0; i < 15; i++) in[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(mroce_siphash(&key, in, 15), 0xa129ca6149be45e5ull);
}

}  // namespace
