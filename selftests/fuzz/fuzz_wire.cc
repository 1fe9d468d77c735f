// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// fuzz_wire: mroce_wire_decode on arbitrary bytes.
//
// For every packet the decoder accepts:
//  - the payload (or ACK block area) lies inside the input;
//  - re-encoding the decoded header reproduces the input byte for byte (the
//    decoder accepts only the canonical form: every reserved bit is zero),
//    and so does re-encoding every ACK block;
//  - decoding the re-encoded packet gives the same fields, field by field;
//  - ACK blocks decode within bounds and with in-range values;
//  - a RESET answering it (mroce_reset_reply) is itself a valid packet.
// The input buffer is exactly @size bytes (libFuzzer and the replay driver
// both guarantee it), so any read past the end is an ASan report.
//
// And as the module receives it, with only a prefix contiguous (none, and
// a length the input's hash picks): the core's mroce_wire_head_len() asks
// for more at most three times, never past the packet or
// MROCE_MAX_HEAD_LEN, each pull an exact-size copy; mroce_wire_decode_head()
// on it must give what the whole-buffer decode gives, field by field, the
// ACK blocks must read from it alone, and it must end where the payload
// starts (an ACK: where the packet ends).
#include <cstring>
#include <memory>
#include <vector>

#include "input.h"

extern "C" {
#include "conn.h"
#include "wire.h"
}

using mroce::fuzz::die;

namespace {

void same_hdr(const mroce_hdr &a, const mroce_hdr &b) {
  FUZZ_REQUIRE(
      a.version == b.version && a.opcode == b.opcode && a.flags == b.flags &&
          a.dst_conn == b.dst_conn && a.src_conn == b.src_conn &&
          a.path == b.path && a.attempt == b.attempt && a.psn == b.psn &&
          a.ts == b.ts && a.dst_stream == b.dst_stream &&
          a.src_stream == b.src_stream && a.msn == b.msn && a.dsn == b.dsn,
      "header fields differ after a round trip (opcode %#x)", a.opcode);
}

// The opcode's extension fields, compared one by one.
void same_ext(const mroce_pkt &a, const mroce_pkt &b) {
  const mroce_data_ext &x = a.data, &y = b.data;
  bool eq = true;
  switch (a.hdr.opcode) {
    case MROCE_OP_CONNECT:
    case MROCE_OP_ACCEPT:
      eq = a.hello.nonce == b.hello.nonce &&
           a.hello.echo_nonce == b.hello.echo_nonce &&
           a.hello.max_paths == b.hello.max_paths &&
           a.hello.dsn_window == b.hello.dsn_window &&
           a.hello.max_payload == b.hello.max_payload &&
           a.hello.rate_hint == b.hello.rate_hint;
      break;
    case MROCE_OP_RESET:
      eq = a.reset.reason == b.reset.reason;
      break;
    case MROCE_OP_PROBE_ACK:
      eq = a.probe_ack.echo_ts == b.probe_ack.echo_ts &&
           a.probe_ack.delay == b.probe_ack.delay;
      break;
    case MROCE_OP_ACK:
      eq = a.ack.rate_hint == b.ack.rate_hint && a.ack.npaths == b.ack.npaths &&
           a.ack.nstreams == b.ack.nstreams && a.ack.flags == b.ack.flags;
      break;
    case MROCE_OP_CLOSE:
    case MROCE_OP_PROBE:
    case MROCE_OP_POLL:
      break;
    default:  // the stream opcodes share one extension struct
      eq = x.va == y.va && x.rkey == y.rkey && x.rsn == y.rsn &&
           x.offset == y.offset && x.total == y.total && x.imm == y.imm &&
           x.swap_add == y.swap_add && x.compare == y.compare &&
           x.orig == y.orig;
      break;
  }
  FUZZ_REQUIRE(eq, "extension fields differ after a round trip (opcode %#x)",
               a.hdr.opcode);
}

// The blocks of an ACK, or of the ACK body a data packet carries.
void check_ack_blocks(const uint8_t *buf, size_t size, const mroce_pkt &pkt) {
  const uint32_t need = pkt.ack.npaths * MROCE_ACK_PATH_LEN +
                        pkt.ack.nstreams * MROCE_ACK_STREAM_LEN;
  if (pkt.hdr.opcode == MROCE_OP_ACK)
    FUZZ_REQUIRE(pkt.ack_off == pkt.payload_off && pkt.payload_len == need,
                 "ACK length %u, blocks need %u", pkt.payload_len, need);
  else
    FUZZ_REQUIRE(pkt.payload_off - pkt.ack_off == need,
                 "ACK body blocks [%u, %u), need %u", pkt.ack_off,
                 pkt.payload_off, need);
  FUZZ_REQUIRE(pkt.ack.npaths <= MROCE_MAX_PATHS, "ACK with %u path blocks",
               pkt.ack.npaths);
  std::vector<uint8_t> blk(MROCE_ACK_PATH_LEN);
  for (unsigned i = 0; i < pkt.ack.npaths; i++) {
    mroce_ack_path ap;
    mroce_wire_ack_path(buf, &pkt, i, &ap);
    FUZZ_REQUIRE(ap.path < MROCE_MAX_PATHS, "ACK path id %u", ap.path);
    mroce_wire_put_ack_path(&ap, blk.data());
    size_t at = pkt.ack_off + i * MROCE_ACK_PATH_LEN;
    FUZZ_REQUIRE(at + MROCE_ACK_PATH_LEN <= size, "path block %u past end", i);
    FUZZ_REQUIRE(!std::memcmp(blk.data(), buf + at, MROCE_ACK_PATH_LEN),
                 "path block %u does not re-encode to its bytes", i);
  }
  for (unsigned i = 0; i < pkt.ack.nstreams; i++) {
    mroce_ack_stream as;
    mroce_wire_ack_stream(buf, &pkt, i, &as);
    FUZZ_REQUIRE(!(as.stream & ~MROCE_STREAM_MASK), "stream id %#x", as.stream);
    FUZZ_REQUIRE(as.status == MROCE_OK || mroce_err_group(as.status) == MROCE_EG_REFUSED,
                 "stream status %u", as.status);
    mroce_wire_put_ack_stream(&as, blk.data());
    size_t at = pkt.ack_off + pkt.ack.npaths * MROCE_ACK_PATH_LEN +
                i * MROCE_ACK_STREAM_LEN;
    FUZZ_REQUIRE(at + MROCE_ACK_STREAM_LEN <= size, "stream entry %u past end",
                 i);
    FUZZ_REQUIRE(!std::memcmp(blk.data(), buf + at, MROCE_ACK_STREAM_LEN),
                 "stream entry %u does not re-encode to its bytes", i);
  }
}

// The module's receive path with @k bytes linear; @want/@w: the whole
// buffer's decode.
void check_split(const uint8_t *data, uint32_t len, uint32_t k,
                 mroce_err want, const mroce_pkt &w) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[k]);
  std::memcpy(buf.get(), data, k);
  uint32_t head = k;
  for (int round = 0;; round++) {
    uint32_t need = mroce_wire_head_len(buf.get(), head, len);
    FUZZ_REQUIRE(need <= len && need <= MROCE_MAX_HEAD_LEN,
                 "head of %u asked of a %u-byte packet", need, len);
    if (need <= head) break;
    FUZZ_REQUIRE(round < 3, "a fourth pull, to %u of %u bytes", need, len);
    buf.reset(new uint8_t[need]);  // pskb_may_pull: exactly what was asked
    std::memcpy(buf.get(), data, need);
    head = need;
  }
  mroce_pkt s;
  std::memset(&s, 0x5a, sizeof(s));
  mroce_err err = mroce_wire_decode_head(buf.get(), head, len, &s);
  FUZZ_REQUIRE(err == want, "%u of %u bytes linear: %s, whole: %s", k, len,
               mroce_err_name(err), mroce_err_name(want));
  if (err != MROCE_OK) return;
  FUZZ_REQUIRE(!std::memcmp(&s, &w, sizeof(s)),
               "%u of %u bytes linear: fields differ (opcode %#x)", k, len,
               w.hdr.opcode);
  if (k < head) {  // nothing linear beyond what was asked
    const uint32_t end = w.hdr.opcode == MROCE_OP_ACK ? len : w.payload_off;
    FUZZ_REQUIRE(head == end, "pulled %u bytes, the headers end at %u", head,
                 end);
  }
  if (w.hdr.opcode == MROCE_OP_ACK || (w.hdr.flags & MROCE_F_ACK_BODY))
    check_ack_blocks(buf.get(), head, s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0xffff) return 0;  // a UDP payload
  mroce_pkt a;
  std::memset(&a, 0x5a, sizeof(a));
  const uint32_t len = static_cast<uint32_t>(size);
  mroce_err err = mroce_wire_decode(data, len, &a);
  FUZZ_REQUIRE(err == MROCE_OK || mroce_err_group(err) == MROCE_EG_WIRE, "error code %d",
               err);
  // as received: nothing linear, and a prefix the input's hash picks
  uint32_t hash = 2166136261u;
  for (uint32_t i = 0; i < len; i++) hash = (hash ^ data[i]) * 16777619u;
  check_split(data, len, 0, err, a);
  check_split(data, len, hash % (len + 1), err, a);
  if (err != MROCE_OK) return 0;

  const mroce_hdr &h = a.hdr;
  int ext = mroce_wire_ext_len(h.opcode);
  FUZZ_REQUIRE(ext >= 0, "accepted unknown opcode %#x", h.opcode);
  const uint32_t ext_end = MROCE_HDR_LEN + static_cast<uint32_t>(ext);
  const bool body = h.flags & MROCE_F_ACK_BODY;
  FUZZ_REQUIRE(!body || mroce_op_sequenced(h.opcode), "ACK body on opcode %#x",
               h.opcode);
  FUZZ_REQUIRE(a.ack_off == (body ? ext_end + MROCE_ACK_EXT_LEN : ext_end),
               "ack_off %u", a.ack_off);
  FUZZ_REQUIRE(body || a.payload_off == ext_end, "payload_off %u",
               a.payload_off);
  FUZZ_REQUIRE(a.payload_off + a.payload_len == len,
               "payload [%u, +%u) does not end the packet (%u)", a.payload_off,
               a.payload_len, len);
  FUZZ_REQUIRE(h.path < MROCE_MAX_PATHS, "path %u", h.path);
  FUZZ_REQUIRE(!((h.dst_stream | h.src_stream) & ~MROCE_STREAM_MASK),
               "stream ids beyond 24 bits");
  if (mroce_op_sequenced(h.opcode) && h.opcode != MROCE_OP_READ_REQ &&
      h.opcode != MROCE_OP_CMP_SWAP && h.opcode != MROCE_OP_FETCH_ADD &&
      h.opcode != MROCE_OP_ATOMIC_RESP) {
    const mroce_data_ext &d = a.data;
    FUZZ_REQUIRE(d.total <= MROCE_MAX_MSG && d.offset <= d.total &&
                     a.payload_len <= d.total - d.offset,
                 "segment [%u, +%u) outside message of %u", d.offset,
                 a.payload_len, d.total);
  }
  if (h.opcode == MROCE_OP_ACK || body) check_ack_blocks(data, size, a);

  // Canonical: the header and extension re-encode to the very same bytes.
  std::vector<uint8_t> out(size);
  uint32_t n = mroce_wire_encode(&a, out.data());
  FUZZ_REQUIRE(n == ext_end, "encode wrote %u, extension ends at %u", n,
               ext_end);
  if (body) {  // the ACK body's extension is canonical too
    mroce_wire_put_ack_ext(&a.ack, out.data() + n);
    n += MROCE_ACK_EXT_LEN;
  }
  for (uint32_t i = 0; i < n; i++)
    if (out[i] != data[i])
      die("byte %u re-encodes as %#x, input had %#x (opcode %#x)", i, out[i],
          data[i], h.opcode);

  // And decoding that gives the same fields.
  std::memcpy(out.data() + n, data + n, size - n);
  mroce_pkt b;
  std::memset(&b, 0xa5, sizeof(b));
  FUZZ_REQUIRE(mroce_wire_decode(out.data(), len, &b) == MROCE_OK,
               "re-encoded packet rejected");
  same_hdr(a.hdr, b.hdr);
  same_ext(a, b);
  FUZZ_REQUIRE(a.payload_off == b.payload_off && a.payload_len == b.payload_len,
               "payload moved after a round trip");

  // The RESET we would answer with must itself be valid.
  uint8_t rst[MROCE_MAX_HDR_LEN];
  uint32_t rn = mroce_reset_reply(&a, MROCE_RESET_UNKNOWN_CONN, rst);
  if (rn) {
    mroce_pkt r;
    FUZZ_REQUIRE(mroce_wire_decode(rst, rn, &r) == MROCE_OK,
                 "reset reply to opcode %#x does not decode", h.opcode);
    FUZZ_REQUIRE(r.hdr.opcode == MROCE_OP_RESET &&
                     r.hdr.dst_conn == h.src_conn &&
                     r.hdr.src_conn == h.dst_conn,
                 "reset reply names the wrong connections");
    const uint64_t echo = h.opcode == MROCE_OP_CHALLENGE ? a.challenge.token
                          : h.opcode == MROCE_OP_CONNECT ? a.hello.nonce
                                                         : 0;
    FUZZ_REQUIRE(r.reset.echo == echo, "reset reply echoes the wrong value");
  } else {
    // never a RESET; nor a cookie CHALLENGE, which comes from no connection
    FUZZ_REQUIRE(h.opcode == MROCE_OP_RESET ||
                     (h.opcode == MROCE_OP_CHALLENGE && !h.src_conn),
                 "no reset reply for opcode %#x",
                 h.opcode);
  }
  return 0;
}
