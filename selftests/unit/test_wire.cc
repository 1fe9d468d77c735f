// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Wire format: round trips for every opcode, the golden packets of
// Documentation/protocol.md byte for byte, and every rejection reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "conn.h"
#include "wire.h"
#include "wire_packets.h"
}

namespace {

std::vector<uint8_t> hex(const std::string &s) {
  std::vector<uint8_t> out;
  std::string digits;
  for (char ch : s)
    if (isxdigit(static_cast<unsigned char>(ch))) digits += ch;
  for (size_t i = 0; i + 1 < digits.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<uint8_t> encode(const mroce_pkt &p, uint32_t payload = 0) {
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + payload);
  uint32_t n = mroce_wire_encode(&p, b.data());
  b.resize(n + payload);
  for (uint32_t i = 0; i < payload; i++) b[n + i] = static_cast<uint8_t>(i);
  return b;
}

using mroce::test::base;

mroce_err decode(const std::vector<uint8_t> &b, mroce_pkt *out) {
  return mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), out);
}

TEST(Wire, WriteRoundTrip) {
  mroce_pkt p = base(MROCE_OP_WRITE_IMM);
  p.hdr.flags = MROCE_F_LAST | MROCE_F_ACK_REQ | MROCE_F_SOLICITED;
  p.data.va = 0x1122334455667788ull;
  p.data.rkey = 0xabcdef01;
  p.data.offset = 1024;
  p.data.total = 1100;
  p.data.rsn = 9;
  p.data.imm = 0xdeadbeef;
  auto b = encode(p, 76);
  ASSERT_EQ(b.size(), MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN + 76u);
  mroce_pkt d;
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.hdr.opcode, MROCE_OP_WRITE_IMM);
  EXPECT_EQ(d.hdr.flags, p.hdr.flags);
  EXPECT_EQ(d.hdr.dst_conn, p.hdr.dst_conn);
  EXPECT_EQ(d.hdr.src_conn, p.hdr.src_conn);
  EXPECT_EQ(d.hdr.path, 3);
  EXPECT_EQ(d.hdr.psn, 77u);
  EXPECT_EQ(d.hdr.dsn, 99u);
  EXPECT_EQ(d.hdr.msn, 5u);
  EXPECT_EQ(d.hdr.ts, 0x11223344u);
  EXPECT_EQ(d.data.va, p.data.va);
  EXPECT_EQ(d.data.rkey, p.data.rkey);
  EXPECT_EQ(d.data.offset, 1024u);
  EXPECT_EQ(d.data.total, 1100u);
  EXPECT_EQ(d.data.rsn, 9u);
  EXPECT_EQ(d.data.imm, 0xdeadbeefu);
  EXPECT_EQ(d.payload_off, MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN);
  EXPECT_EQ(d.payload_len, 76u);
}

TEST(Wire, EveryOpcodeRoundTrips) {
  for (int op = 0; op < 256; op++) {
    int ext = mroce_wire_ext_len(static_cast<uint8_t>(op));
    if (ext < 0) continue;
    mroce_pkt p = base(static_cast<uint8_t>(op));
    uint32_t payload = 0;
    switch (op) {
      case MROCE_OP_CONNECT:
        p.hdr.dst_conn = 0;
        p.hello = {0x1234, 0, 8, 8192, 4096, 0};
        break;
      case MROCE_OP_ACCEPT:
        p.hello = {0x1234, 0x5678, 8, 0, 4096, 125000};
        break;
      case MROCE_OP_RESET:
        p.reset.reason = MROCE_RESET_UNKNOWN_CONN;
        p.reset.echo = 0x0123456789abcdefull;
        break;
      case MROCE_OP_CHALLENGE:
        p.challenge.token = 0xfedcba9876543210ull;
        break;
      case MROCE_OP_POLL:
        p.hdr.dst_stream = 7;
        p.hdr.src_stream = 8;
        p.hdr.msn = 3;
        break;
      case MROCE_OP_ACK:
        break;
      case MROCE_OP_WRITE:
      case MROCE_OP_SEND:
      case MROCE_OP_SEND_IMM:
      case MROCE_OP_WRITE_IMM:
      case MROCE_OP_READ_RESP:
        p.data.total = 100;
        payload = 100;
        if (op == MROCE_OP_SEND_IMM || op == MROCE_OP_WRITE_IMM) p.data.imm = 5;
        break;
      case MROCE_OP_READ_REQ:
        p.data.total = 1 << 20;
        break;
      case MROCE_OP_CMP_SWAP:
        p.data.compare = 1;
        [[fallthrough]];
      case MROCE_OP_FETCH_ADD:
        p.data.swap_add = 2;
        p.data.va = 64;
        break;
      default:
        break;
    }
    auto b = encode(p, payload);
    mroce_pkt d;
    EXPECT_EQ(decode(b, &d), MROCE_OK) << "opcode " << op;
    EXPECT_EQ(d.hdr.opcode, op);
    auto b2 = encode(d, payload);
    EXPECT_EQ(b, b2) << "opcode " << op;
  }
}

TEST(Wire, AckBlocksRoundTrip) {
  mroce_pkt p = base(MROCE_OP_ACK);
  p.ack.rate_hint = 12345;
  p.ack.npaths = 2;
  p.ack.nstreams = 1;
  std::vector<uint8_t> b(MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
                         2 * MROCE_ACK_PATH_LEN + MROCE_ACK_STREAM_LEN);
  mroce_wire_encode(&p, b.data());
  mroce_ack_path a{};
  a.path = 5;
  a.cum_psn = 0xfffffff0;
  a.echo_ts = 42;
  a.ack_delay = 7;
  a.ce_count = 3;
  a.rcv_count = 100;
  a.sack[0] = 0x8000000000000001ull;
  a.sack[3] = 0x4000000000000000ull;
  mroce_wire_put_ack_path(&a, &b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN]);
  a.path = 6;
  mroce_wire_put_ack_path(&a, &b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + MROCE_ACK_PATH_LEN]);
  mroce_ack_stream s{0x33, 10, 9, MROCE_ERR_RNR, 2, 500};
  mroce_wire_put_ack_stream(&s, &b[b.size() - MROCE_ACK_STREAM_LEN]);

  mroce_pkt d;
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.ack.rate_hint, 12345u);
  mroce_ack_path x;
  mroce_wire_ack_path(b.data(), &d, 1, &x);
  EXPECT_EQ(x.path, 6);
  EXPECT_EQ(x.cum_psn, 0xfffffff0u);
  EXPECT_EQ(x.sack[0], a.sack[0]);
  EXPECT_EQ(x.sack[3], a.sack[3]);
  EXPECT_EQ(x.rcv_count, 100u);
  mroce_ack_stream y;
  mroce_wire_ack_stream(b.data(), &d, 0, &y);
  EXPECT_EQ(y.stream, 0x33u);
  EXPECT_EQ(y.msn, 10u);
  EXPECT_EQ(y.nack_msn, 9u);
  EXPECT_EQ(y.status, MROCE_ERR_RNR);
  EXPECT_EQ(y.attempt, 2);
  EXPECT_EQ(y.rnr_delay_us, 500);
  EXPECT_EQ(d.ack_nack, 1);  // an RNR entry is a NACK
  s.status = MROCE_OK;
  mroce_wire_put_ack_stream(&s, &b[b.size() - MROCE_ACK_STREAM_LEN]);
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.ack_nack, 0);  // reset by each decode
  // Bit 0 of the bitmap is the least significant bit of byte 0.
  EXPECT_EQ(b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + 24], 0x01);
  EXPECT_EQ(b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + 31], 0x80);
}

// Golden packets: the worked examples of Documentation/protocol.md.
TEST(Wire, GoldenWritePacket) {
  auto b = hex(
      "20 10 00 11 00 00 00 07 00 00 00 03 00 01 00 00"
      "00 00 00 2a 00 0f 42 40 00 00 00 12 00 00 00 34"
      "00 00 01 00 00 00 00 05"
      "00 00 7f 00 00 10 00 00 00 00 12 34 00 00 00 00"
      "00 00 00 04 00 00 00 00 00 00 00 00 00 00 00 00"
      "de ad be ef");
  mroce_pkt d;
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.hdr.opcode, MROCE_OP_WRITE);
  EXPECT_EQ(d.hdr.flags, MROCE_F_LAST | MROCE_F_ACK_REQ);
  EXPECT_EQ(d.hdr.dst_conn, 7u);
  EXPECT_EQ(d.hdr.src_conn, 3u);
  EXPECT_EQ(d.hdr.path, 1);
  EXPECT_EQ(d.hdr.psn, 42u);
  EXPECT_EQ(d.hdr.ts, 1000000u);
  EXPECT_EQ(d.hdr.dst_stream, 0x12u);
  EXPECT_EQ(d.hdr.src_stream, 0x34u);
  EXPECT_EQ(d.hdr.msn, 256u);
  EXPECT_EQ(d.hdr.dsn, 5u);
  EXPECT_EQ(d.data.va, 0x7f0000100000ull);
  EXPECT_EQ(d.data.rkey, 0x1234u);
  EXPECT_EQ(d.data.offset, 0u);
  EXPECT_EQ(d.data.total, 4u);
  EXPECT_EQ(d.payload_len, 4u);
  EXPECT_EQ(encode(d, 0).size() + 4, b.size());
}

TEST(Wire, GoldenConnectPacket) {
  auto b = hex(
      "20 01 00 00 00 00 00 00 00 00 00 03 00 00 00 00"
      "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
      "00 00 00 00 00 00 00 00"
      "00 00 00 00 c0 ff ee 01 00 00 00 00 00 00 00 00"
      "00 04 00 00 00 00 40 00 00 01 86 a0 00 00 00 00");
  mroce_pkt d;
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.hdr.opcode, MROCE_OP_CONNECT);
  EXPECT_EQ(d.hello.nonce, 0xc0ffee01ull);
  EXPECT_EQ(d.hello.max_paths, 4);
  EXPECT_EQ(d.hello.dsn_window, 16384u);
  EXPECT_EQ(d.hello.rate_hint, 100000u);  // 100 MB/s
  // the hello's last 4 bytes are reserved
  b.back() = 1;
  EXPECT_EQ(decode(b, &d), MROCE_ERR_FIELD);
  // the hello before the rate grant (24 bytes) is short
  b.resize(b.size() - 8);
  EXPECT_EQ(decode(b, &d), MROCE_ERR_SHORT);
}

struct Bad {
  const char *what;
  void (*mutate)(std::vector<uint8_t> &);
  mroce_err want;
};

TEST(Wire, Rejections) {
  mroce_pkt p = base(MROCE_OP_SEND);
  p.data.total = 10;
  const auto good = encode(p, 10);
  mroce_pkt d;
  ASSERT_EQ(decode(good, &d), MROCE_OK);

  const Bad cases[] = {
      {"short", [](auto &b) { b.resize(39); }, MROCE_ERR_SHORT},
      {"short ext", [](auto &b) { b.resize(MROCE_HDR_LEN + 4); }, MROCE_ERR_SHORT},
      {"version", [](auto &b) { b[0] = 0x10; }, MROCE_ERR_VERSION},
      {"low nibble", [](auto &b) { b[0] = 0x21; }, MROCE_ERR_RESERVED},
      {"byte 15", [](auto &b) { b[15] = 1; }, MROCE_ERR_RESERVED},
      {"opcode", [](auto &b) { b[1] = 0x7f; }, MROCE_ERR_OPCODE},
      {"flag", [](auto &b) { b[3] |= 0x80; }, MROCE_ERR_FLAGS},
      {"ece on data", [](auto &b) { b[3] |= MROCE_F_ECE; }, MROCE_ERR_FLAGS},
      {"stream bits", [](auto &b) { b[24] = 1; }, MROCE_ERR_RESERVED},
      {"path", [](auto &b) { b[13] = 64; }, MROCE_ERR_FIELD},
      {"no src conn", [](auto &b) { std::memset(&b[8], 0, 4); }, MROCE_ERR_FIELD},
      {"no dst conn", [](auto &b) { std::memset(&b[4], 0, 4); }, MROCE_ERR_FIELD},
      {"payload too long", [](auto &b) { b.push_back(0); }, MROCE_ERR_LENGTH},
      {"segment past end", [](auto &b) { b[MROCE_HDR_LEN + 3] = 1; }, MROCE_ERR_LENGTH},
      {"imm on SEND", [](auto &b) { b[MROCE_HDR_LEN + 15] = 1; }, MROCE_ERR_RESERVED},
      {"total > 2^31",
       [](auto &b) { b[MROCE_HDR_LEN + 4] = 0x80; b[MROCE_HDR_LEN + 7] = 1; },
       MROCE_ERR_FIELD},
  };
  for (const auto &c : cases) {
    auto b = good;
    c.mutate(b);
    EXPECT_EQ(decode(b, &d), c.want) << c.what;
  }
}

TEST(Wire, RejectsControlWithSequenceState) {
  mroce_pkt p = base(MROCE_OP_ACK);
  auto b = encode(p);
  b[19] = 1;  // psn on an ACK
  mroce_pkt d;
  EXPECT_EQ(decode(b, &d), MROCE_ERR_RESERVED);
}

TEST(Wire, RejectsBadAckLengthAndBlocks) {
  mroce_pkt p = base(MROCE_OP_ACK);
  p.ack.npaths = 1;
  auto b = encode(p, MROCE_ACK_PATH_LEN - 1);
  mroce_pkt d;
  EXPECT_EQ(decode(b, &d), MROCE_ERR_LENGTH);
  b = encode(p, MROCE_ACK_PATH_LEN);
  std::memset(&b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN], 0, MROCE_ACK_PATH_LEN);
  EXPECT_EQ(decode(b, &d), MROCE_OK);
  b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN + 1] = 64;  // path id 64
  EXPECT_EQ(decode(b, &d), MROCE_ERR_FIELD);
}

TEST(Wire, RejectsBadHello) {
  mroce_pkt p = base(MROCE_OP_CONNECT);
  p.hdr.dst_conn = 0;
  p.hello = {1, 0, 8, 9000, 4096, 0};
  mroce_pkt d;
  auto b = encode(p);
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.hello.max_payload, 9000);
  p.hello.max_payload = MROCE_MIN_PAYLOAD - 1;  // 0 (unstated) or >= 256
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);
  p.hello.max_payload = 0;
  EXPECT_EQ(decode(encode(p), &d), MROCE_OK);
  p.hello.max_paths = 65;
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);
  p.hello.max_paths = 8;
  p.hello.dsn_window = 3000;
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);
  p.hello.dsn_window = 4096;
  p.hello.echo_nonce = 5;  // a CONNECT's echo is its cookie
  EXPECT_EQ(decode(encode(p), &d), MROCE_OK);
  EXPECT_EQ(d.hello.echo_nonce, 5u);
  p.hdr.opcode = MROCE_OP_ACCEPT;  // an ACCEPT must echo the nonce
  p.hdr.dst_conn = 9;
  p.hello.echo_nonce = 0;
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);
}

TEST(Wire, ChallengeAndResetEcho) {
  mroce_pkt p = base(MROCE_OP_CHALLENGE);
  p.challenge.token = 0x1122334455667788ull;
  mroce_pkt d;
  auto b = encode(p);
  ASSERT_EQ(b.size(), MROCE_HDR_LEN + MROCE_CHALLENGE_EXT_LEN);
  ASSERT_EQ(decode(b, &d), MROCE_OK);
  EXPECT_EQ(d.challenge.token, 0x1122334455667788ull);
  p.hdr.src_conn = 0;  // a cookie comes from no connection
  ASSERT_EQ(decode(encode(p), &d), MROCE_OK);
  p.challenge.token = 0;  // a token is never 0
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);
  p.challenge.token = 1;
  p.hdr.dst_conn = 0;  // a CHALLENGE always names its receiver
  EXPECT_EQ(decode(encode(p), &d), MROCE_ERR_FIELD);

  // The RESET answering it echoes the token; one answering a CONNECT,
  // the CONNECT's nonce; anything else, 0.
  mroce_pkt ch = base(MROCE_OP_CHALLENGE);
  ch.challenge.token = 0xabcdef;
  uint8_t r[MROCE_HDR_LEN + MROCE_RESET_EXT_LEN];
  ASSERT_EQ(mroce_reset_reply(&ch, MROCE_RESET_UNKNOWN_CONN, r), sizeof(r));
  ASSERT_EQ(mroce_wire_decode(r, sizeof(r), &d), MROCE_OK);
  EXPECT_EQ(d.reset.echo, 0xabcdefu);
  EXPECT_EQ(d.hdr.dst_conn, ch.hdr.src_conn);
  EXPECT_EQ(d.hdr.src_conn, ch.hdr.dst_conn);
  mroce_pkt co = base(MROCE_OP_CONNECT);
  co.hdr.dst_conn = 0;
  co.hello = {0x77, 0, 4, 0, 4096, 0};
  ASSERT_EQ(mroce_reset_reply(&co, MROCE_RESET_VERSION, r), sizeof(r));
  ASSERT_EQ(mroce_wire_decode(r, sizeof(r), &d), MROCE_OK);
  EXPECT_EQ(d.reset.echo, 0x77u);
  mroce_pkt w = base(MROCE_OP_PROBE);
  ASSERT_EQ(mroce_reset_reply(&w, MROCE_RESET_UNKNOWN_CONN, r), sizeof(r));
  ASSERT_EQ(mroce_wire_decode(r, sizeof(r), &d), MROCE_OK);
  EXPECT_EQ(d.reset.echo, 0u);
}

TEST(Wire, RejectsSegmentOutsideMessage) {
  mroce_pkt p = base(MROCE_OP_WRITE);
  p.data.total = 100;
  p.data.offset = 90;
  mroce_pkt d;
  EXPECT_EQ(decode(encode(p, 20), &d), MROCE_ERR_LENGTH);
  p.data.offset = 0;
  p.data.va = ~0ull - 10;
  EXPECT_EQ(decode(encode(p, 20), &d), MROCE_ERR_FIELD);
  p.data.va = 0;
  p.data.total = 0;  // only an empty message may be empty
  EXPECT_EQ(decode(encode(p, 0), &d), MROCE_OK);
  p.data.total = 5;
  EXPECT_EQ(decode(encode(p, 0), &d), MROCE_ERR_LENGTH);
}

}  // namespace

// Every worked example in Documentation/protocol.md must decode, and
// re-encoding the decoded packet must give the same bytes: the document
// and the code cannot drift apart.
namespace {

std::vector<std::vector<uint8_t>> spec_examples() {
  std::vector<std::vector<uint8_t>> out;
  FILE *f = std::fopen(METAROCE_SOURCE_DIR "/Documentation/protocol.md", "r");
  if (!f) return out;
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  std::fclose(f);
  size_t pos = 0;
  while ((pos = text.find("```\n", pos)) != std::string::npos) {
    size_t end = text.find("```", pos + 4);
    if (end == std::string::npos) break;
    std::string block = text.substr(pos + 4, end - pos - 4);
    bool is_hex = !block.empty() &&
                  block.find_first_not_of("0123456789abcdef \n") == std::string::npos;
    if (is_hex) out.push_back(hex(block));
    pos = end + 3;
  }
  return out;
}

TEST(Wire, SpecExamplesDecodeAndReencode) {
  auto ex = spec_examples();
  ASSERT_GE(ex.size(), 7u) << "examples not found in Documentation/protocol.md";
  for (size_t i = 0; i < ex.size(); i++) {
    auto b = ex[i];
    mroce_pkt d;
    // header-only examples of data packets: add the payload the text names
    if (decode(b, &d) == MROCE_ERR_LENGTH && b[1] == MROCE_OP_SEND_IMM)
      b.resize(b.size() + 4096);
    ASSERT_EQ(decode(b, &d), MROCE_OK) << "example " << i;
    std::vector<uint8_t> re(b.size());
    uint32_t n = mroce_wire_encode(&d, re.data());
    if (d.hdr.flags & MROCE_F_ACK_BODY) {
      mroce_wire_put_ack_ext(&d.ack, &re[n]);
      n += MROCE_ACK_EXT_LEN;
    }
    if (d.hdr.opcode == MROCE_OP_ACK || (d.hdr.flags & MROCE_F_ACK_BODY)) {
      for (unsigned k = 0; k < d.ack.npaths; k++) {
        mroce_ack_path ap;
        mroce_wire_ack_path(b.data(), &d, k, &ap);
        mroce_wire_put_ack_path(&ap, &re[n]);
        n += MROCE_ACK_PATH_LEN;
      }
      for (unsigned k = 0; k < d.ack.nstreams; k++) {
        mroce_ack_stream as;
        mroce_wire_ack_stream(b.data(), &d, k, &as);
        mroce_wire_put_ack_stream(&as, &re[n]);
        n += MROCE_ACK_STREAM_LEN;
      }
    }
    // headers must match exactly; the rest is payload, copied verbatim
    std::copy(b.begin() + n, b.end(), re.begin() + n);
    EXPECT_EQ(re, b) << "example " << i;
  }
}

TEST(Wire, SpecAckExampleMeaning) {
  auto ex = spec_examples();
  const std::vector<uint8_t> *ack = nullptr;
  for (auto &b : ex)
    if (b.size() > 1 && b[1] == MROCE_OP_ACK) ack = &b;
  ASSERT_NE(ack, nullptr);
  mroce_pkt d;
  ASSERT_EQ(decode(*ack, &d), MROCE_OK);
  EXPECT_EQ(d.ack.rate_hint, 1250000u);
  mroce_ack_path ap;
  mroce_wire_ack_path(ack->data(), &d, 0, &ap);
  EXPECT_EQ(ap.cum_psn, 40u);
  EXPECT_EQ(ap.sack[0], 0x6u);  // psn 42, 43
  mroce_ack_stream as;
  mroce_wire_ack_stream(ack->data(), &d, 0, &as);
  EXPECT_EQ(as.status, MROCE_ERR_RNR);
  EXPECT_EQ(as.nack_msn, 257u);
  EXPECT_EQ(as.rnr_delay_us, 100);
}

TEST(Wire, SpecAckBodyExampleMeaning) {
  auto ex = spec_examples();
  const std::vector<uint8_t> *w = nullptr;
  for (auto &b : ex)
    if (b.size() > 3 && b[1] == MROCE_OP_WRITE && (b[3] & MROCE_F_ACK_BODY))
      w = &b;
  ASSERT_NE(w, nullptr);
  mroce_pkt d;
  ASSERT_EQ(decode(*w, &d), MROCE_OK);
  EXPECT_EQ(d.payload_len, 4u);
  EXPECT_EQ((*w)[d.payload_off], 0xca);
  EXPECT_EQ(d.data.va, 0x7f0000300000ull);
  EXPECT_EQ(d.ack.rate_hint, MROCE_RATE_NONE);
  ASSERT_EQ(d.ack.npaths, 1);
  ASSERT_EQ(d.ack.nstreams, 1);
  mroce_ack_path ap;
  mroce_wire_ack_path(w->data(), &d, 0, &ap);
  EXPECT_EQ(ap.path, 1);
  EXPECT_EQ(ap.cum_psn, 43u);
  EXPECT_EQ(ap.ack_delay, 2000u);
  EXPECT_EQ(ap.rcv_count, 42u);
  mroce_ack_stream as;
  mroce_wire_ack_stream(w->data(), &d, 0, &as);
  EXPECT_EQ(as.stream, 0x34u);
  EXPECT_EQ(as.msn, 257u);
  EXPECT_EQ(as.status, MROCE_OK);
  EXPECT_EQ(d.ack_nack, 0);
}

}  // namespace
