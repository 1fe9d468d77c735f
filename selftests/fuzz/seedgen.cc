// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// fuzz_seedgen OUTDIR: writes the seed corpus of the fuzz targets into
// OUTDIR/<target>/ (selftests/fuzz/corpus/ is its committed output):
//
//  fuzz_wire     the golden packets of the wire unit test, the worked
//                examples of Documentation/protocol.md, and one packet
//                of every kind a two-endpoint harness run puts on the wire;
//  fuzz_conn_rx  record programs (format: fuzz_conn_rx.cc) that exercise
//                each feature, and the packets endpoint 0 sent in a harness
//                run, replayed as raw records into the fuzzer's victim (it
//                mirrors the harness's endpoint 1);
//  fuzz_sack     sequence programs: in order, holes, drags, wrap-around.
//
// Deterministic: the same sources give the same files.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

using namespace mroce::test;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

fs::path g_out;

void write_seed(const char *target, const std::string &name, const Bytes &b) {
  fs::path dir = g_out / target;
  fs::create_directories(dir);
  std::ofstream f(dir / name, std::ios::binary);
  f.write(reinterpret_cast<const char *>(b.data()),
          static_cast<std::streamsize>(b.size()));
}

Bytes hex(const char *s) {
  Bytes out;
  std::string digits;
  for (; *s; s++)
    if (isxdigit(static_cast<unsigned char>(*s))) digits += *s;
  for (size_t i = 0; i + 1 < digits.size(); i += 2)
    out.push_back(
        static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  return out;
}

// ---- a harness run: every packet both endpoints send ----

struct Capture {
  std::vector<Bytes> sent[2];  // by sending endpoint
};

SendWr wr(uint8_t op, uint64_t cookie, uint32_t len, uint32_t rkey = 0,
          uint64_t va = 0) {
  SendWr w = make_wr(op, cookie, len, 0, rkey, va);
  if (op == MROCE_OP_READ_REQ || op == MROCE_OP_CMP_SWAP ||
      op == MROCE_OP_FETCH_ADD)
    w.data.clear();  // no source bytes
  else
    pattern(w, static_cast<uint8_t>(cookie));
  return w;
}

// Endpoint 1 is laid out as fuzz_conn_rx's victim: QPs 2 (peer 1) and 4
// (peer 3, shared receive queue), regions 0x100 / 0x101 / 0x102.
Capture run_harness(double loss) {
  Capture cap;
  Fabric f(11);
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(4, Route{});
    for (int i = 0; i < 4; i++) {
      f.routes[d][i].delay_ns = 10'000 + 3'000 * i;
      f.routes[d][i].gbps = 10;
      f.routes[d][i].loss = loss;
    }
  }
  auto cfg = test_cfg(4, 256);  // small packets: small seeds
  Endpoint &A = f.add_endpoint(cfg);
  Endpoint &B = f.add_endpoint(cfg);
  A.tap = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    cap.sent[0].emplace_back(b, b + n);
  };
  B.tap = [&](Endpoint &, const uint8_t *b, uint32_t n) {
    cap.sent[1].emplace_back(b, b + n);
  };
  if (!f.connect()) throw std::runtime_error("harness: no connection");
  B.add_qp(4).srq = true;
  connect_qps(f, 1, 2);
  connect_qps(f, 3, 4);
  uint32_t r0 = B.add_region(0x10000, 256 << 10);
  uint32_t r1 = B.add_region(0x80000, 4096);
  uint32_t r2 = B.add_region(0x8000, 64);
  uint32_t a0 = A.add_region(0x40000, 64 << 10);

  static std::vector<uint8_t> rbuf[4], rd(1000), rd2(600);
  static uint64_t at1, at2, at3;
  for (auto &b : rbuf) b.assign(4096, 0);
  B.post_recv(B.qp(2), 1, rbuf[0].data(), 4096);
  B.post_recv(B.qp(2), 2, rbuf[1].data(), 4096);
  B.post_recv(B.qp(4), 3, rbuf[2].data(), 4096);

  // A -> B: every opcode
  A.post_send(A.qp(1), wr(MROCE_OP_WRITE, 1, 2000, r0, 0x10000 + 4096));
  A.post_send(A.qp(1), wr(MROCE_OP_SEND, 2, 600));
  SendWr r = wr(MROCE_OP_READ_REQ, 3, 1000, r1, 0x80000);
  r.read_dst = rd.data();
  r.read_len = 1000;
  A.post_send(A.qp(1), std::move(r));
  SendWr fa = wr(MROCE_OP_FETCH_ADD, 4, 8, r2, 0x8000);
  fa.msg.swap_add = 3;
  fa.read_dst = reinterpret_cast<uint8_t *>(&at1);
  fa.read_len = 8;
  A.post_send(A.qp(1), std::move(fa));
  SendWr cs = wr(MROCE_OP_CMP_SWAP, 5, 8, r2, 0x8008);
  cs.msg.compare = 0;
  cs.msg.swap_add = 9;
  cs.read_dst = reinterpret_cast<uint8_t *>(&at2);
  cs.read_len = 8;
  A.post_send(A.qp(1), std::move(cs));
  SendWr wi = wr(MROCE_OP_WRITE_IMM, 6, 300, r0, 0x10000);
  wi.msg.imm = 0xabcd;
  A.post_send(A.qp(1), std::move(wi));
  SendWr si = wr(MROCE_OP_SEND_IMM, 7, 100);
  si.msg.imm = 0x1234;
  si.msg.flags = MROCE_MSG_SOLICITED;
  A.post_send(A.qp(3), std::move(si));
  A.drain(f.now);

  // B -> A: requests, so A sends responses and stream entries
  B.post_send(B.qp(2), wr(MROCE_OP_WRITE, 11, 300, a0, 0x40000));
  SendWr br = wr(MROCE_OP_READ_REQ, 12, 600, a0, 0x40000);
  br.read_dst = rd2.data();
  br.read_len = 600;
  B.post_send(B.qp(2), std::move(br));
  SendWr ba = wr(MROCE_OP_FETCH_ADD, 13, 8, a0, 0x40000);
  ba.msg.swap_add = 1;
  ba.read_dst = reinterpret_cast<uint8_t *>(&at3);
  ba.read_len = 8;
  B.post_send(B.qp(2), std::move(ba));
  B.drain(f.now);

  f.run([&] { return A.qp(1).scq.size() == 6 && B.qp(2).scq.size() == 3; },
        2'000'000'000);
  f.run([] { return false; }, 5'000'000);  // let the last ACKs fly
  return cap;
}

// ---- fuzz_conn_rx record programs (layouts: fuzz_conn_rx.cc) ----

enum Cmd : uint8_t {
  D = 0,
  A = 3,
  P = 6,
  T = 8,
  Q = 10,
  C = 11,
  R = 12,
  X = 13,
  F = 14,
  K = 15
};
enum DataOp : uint8_t {
  dWRITE,
  dWRITE_IMM,
  dSEND,
  dSEND_IMM,
  dREAD,
  dREAD_RESP,
  dCAS,
  dFADD,
  dATOMIC_RESP
};
enum PostOp : uint8_t {
  pWRITE,
  pWRITE_IMM,
  pSEND,
  pSEND_IMM,
  pREAD,
  pCAS,
  pFADD
};
// size selectors of World::size_of (mss-relative)
enum Size : uint8_t {
  z0,
  z1,
  z8,
  zMssM1,
  zMss,
  zMssP1,
  z2Mss,
  z3Mss5,
  z16Mss,
  z64K,
  z100K,
  z1M
};

struct Prog {
  Bytes b;
  Prog(uint8_t cfg0, uint8_t cfg1, uint8_t cfg2 = 0) { b = {cfg0, cfg1, cfg2}; }
  Prog &u8(uint8_t v) {
    b.push_back(v);
    return *this;
  }
  Prog &u16(uint16_t v) { return u8(v >> 8).u8(v & 0xff); }
  Prog &u32(uint32_t v) { return u16(v >> 16).u16(v & 0xffff); }
  Prog &u64(uint64_t v) { return u32(v >> 32).u32(v & 0xffffffff); }
  // rel(): a delta from the base (-16 .. +223)
  Prog &d(int delta) { return u8(static_cast<uint8_t>(delta + 0x10)); }

  // a data packet on stream q, in order unless told (chunk: mss index)
  Prog &data(uint8_t q, DataOp op, uint8_t path, int dpsn, int ddsn, int dmsn,
             uint8_t flags, uint8_t size, uint8_t chunk, uint8_t rkey_sel = 0,
             uint16_t va_sel = 0, int drsn = 0, uint8_t attempt = 0) {
    u8(D).u8(static_cast<uint8_t>(q | op << 1));
    u8(path).d(dpsn).d(ddsn).d(dmsn).u8(attempt).u8(flags).u8(0).u8(size);
    bool payload = op == dWRITE || op == dWRITE_IMM || op == dSEND ||
                   op == dSEND_IMM || op == dREAD_RESP;
    if (payload) u8(chunk);
    if (op != dSEND && op != dSEND_IMM && op != dREAD_RESP &&
        op != dATOMIC_RESP)
      u8(rkey_sel).u16(va_sel);
    if (op == dSEND || op == dSEND_IMM || op == dWRITE_IMM) d(drsn);
    if (op == dSEND_IMM || op == dWRITE_IMM) u8(0x42);
    if (op == dCAS || op == dFADD) u8(5);
    if (op == dCAS) u8(0);
    if (op == dATOMIC_RESP) u8(77);
    return *this;
  }
  Prog &post(uint8_t q, PostOp op, uint8_t size, uint8_t flags = 0) {
    return u8(P)
        .u8(static_cast<uint8_t>(q | op << 1 | flags << 4))
        .u8(size)
        .u16(0x100)
        .u8(0)
        .u8(1)
        .u8(2)
        .u8(3);
  }
  Prog &recv(uint8_t q, uint8_t size) { return u8(Q).u8(q).u8(size); }
  Prog &timer(uint8_t m) { return u8(T).u8(m); }
  Prog &drain() { return u8(X); }
  Prog &flush(uint8_t q) { return u8(F).u8(q); }
  // ACK header: ECE, npaths, nstreams
  Prog &ack(uint8_t npaths, uint8_t nstreams, uint8_t hint = 0) {
    return u8(A)
        .u8(static_cast<uint8_t>(npaths << 1 | nstreams << 3))
        .u8(0)
        .u8(hint);
  }
  // a data packet's ACK body (after its data() record): npaths, nstreams,
  // then path() and entry() records as for ack()
  Prog &body(uint8_t npaths, uint8_t nstreams, uint8_t hint = 0) {
    return u8(static_cast<uint8_t>(npaths << 1 | nstreams << 3)).u8(hint);
  }
  // a path block: cum special (0 nxt, 1 una, 2 high), SACK mode, holes
  Prog &path(uint8_t pid, uint8_t cum, uint8_t mode, uint8_t every = 3) {
    u8(pid).u8(cum).u8(mode);
    if (mode == 1 || mode == 2) u8(every);
    if (mode == 3) u64(0x5555);
    if (mode == 5) u8(3);
    return u16(20).u8(1).u8(4).u8(0);
  }
  // a stream entry: msn special (0 tx_next, 1 tx_end, 2 tx_una), status
  Prog &entry(uint8_t q, uint8_t msn, uint8_t status, uint8_t rnr = 10) {
    return u8(q).u8(msn).u8(status).u8(0).u8(0).u8(rnr);
  }
  Prog &ctrl(uint8_t op, uint8_t path) { return u8(C).u8(op).u8(path); }
  Prog &raw(const Bytes &pkt) {
    u8(R).u8(0).u16(static_cast<uint16_t>(pkt.size()));
    b.insert(b.end(), pkt.begin(), pkt.end());
    return *this;
  }
};

// Config bytes: 4 paths, mss 1024, passive, automatic drain.
constexpr uint8_t kCfg0 = 0x03, kCfg1 = 0x00;
// post() flags
constexpr uint8_t kFence = 1, kBadLocal = 4;

void conn_rx_programs() {
  const char *t = "fuzz_conn_rx";
  // requester: a WRITE goes out, is acknowledged, completes
  write_seed(t, "write-acked",
             Prog(kCfg0, kCfg1)
                 .post(0, pWRITE, z3Mss5)
                 .drain()
                 .ack(3, 1)
                 .path(0, 0, 0)
                 .path(1, 0, 0)
                 .path(2, 0, 0)
                 .entry(0, 0, MROCE_OK)
                 .ack(1, 0)
                 .path(3, 0, 0)
                 .timer(6)
                 .b);
  // ping-pong with ACKs on the data: the peer's answer WRITE acknowledges
  // ours, the victim holds its ACK of the answer for its next WRITE
  write_seed(t, "ping-pong-ack-body",
             Prog(kCfg0, kCfg1, 4)
                 .post(0, pWRITE, z8)
                 .drain()
                 .data(0, dWRITE, 0, 0, 0, 0,
                       MROCE_F_ACK_REQ | MROCE_F_LAST | MROCE_F_ACK_BODY, z8,
                       0)
                 .body(1, 1)
                 .path(0, 0, 0)
                 .entry(0, 0, MROCE_OK)
                 .post(0, pWRITE, z8)
                 .drain()
                 .timer(2)
                 .b);
  // requester: loss with holes, then timers: SACK recovery, TLP, RTO
  write_seed(t, "write-loss",
             Prog(kCfg0, kCfg1)
                 .post(0, pWRITE, z16Mss)
                 .post(0, pWRITE, z64K)
                 .ack(1, 0)
                 .path(0, 1, 2, 3)
                 .ack(1, 0)
                 .path(1, 1, 2, 2)
                 .timer(4)
                 .timer(6)
                 .ack(2, 0)
                 .path(0, 0, 0)
                 .path(1, 0, 0)
                 .timer(0xff)
                 .timer(0xff)
                 .b);
  // requester: READ and ATOMICs answered by the peer
  write_seed(
      t, "read-atomic-requester",
      Prog(kCfg0, kCfg1)
          .post(0, pREAD, z2Mss)
          .post(0, pFADD, z8)
          .post(0, pCAS, z8)
          .data(0, dREAD_RESP, 0, 0, 0, 0, MROCE_F_ACK_REQ, 0, 0)
          .data(0, dREAD_RESP, 1, 0, 0, 0, MROCE_F_ACK_REQ | MROCE_F_LAST, 0, 1)
          .data(0, dATOMIC_RESP, 2, 0, 0, 0, MROCE_F_LAST, 0, 0)
          .data(0, dATOMIC_RESP, 3, 0, 0, 0, MROCE_F_LAST, 0, 0)
          .ack(3, 0)
          .path(0, 0, 0)
          .path(1, 0, 0)
          .path(2, 0, 0)
          .b);
  // requester: NACKs (RNR, then access error) and a fence behind a READ
  write_seed(t, "nack-rnr-access",
             Prog(kCfg0, kCfg1)
                 .post(0, pSEND, zMss)
                 .post(0, pREAD, z8)
                 .post(0, pWRITE, z8, kFence)
                 .ack(0, 1)
                 .entry(0, 2, MROCE_ERR_RNR)
                 .timer(4)
                 .timer(4)
                 .ack(0, 1)
                 .entry(0, 2, MROCE_ERR_ACCESS)
                 .flush(0)
                 .b);
  // responder: a 3-packet WRITE in order, a WRITE_IMM, a SEND into a
  // receive and one without (RNR), then its new attempt
  write_seed(t, "responder-write-send",
             Prog(kCfg0, kCfg1)
                 .recv(0, z3Mss5)
                 .data(0, dWRITE, 0, 0, 0, 0, 0, z3Mss5, 0)
                 .data(0, dWRITE, 1, 0, 0, 0, 0, z3Mss5, 1)
                 .data(0, dWRITE, 2, 0, 0, 0, 0, z3Mss5, 2)
                 .data(0, dWRITE, 3, 0, 0, 0, MROCE_F_LAST, z3Mss5, 3)
                 .data(0, dWRITE_IMM, 0, 0, 0, 0, MROCE_F_LAST, zMss, 0)
                 .data(0, dSEND, 1, 0, 0, 0, MROCE_F_LAST, zMss, 0, 0, 0, 0)
                 .data(0, dSEND, 2, 0, 0, 0, MROCE_F_LAST, zMss, 0, 0, 0, 0)
                 .recv(0, zMss)
                 .data(0, dSEND, 3, 0, 0, 0, MROCE_F_LAST, zMss, 0, 0, 0, 0, 1)
                 .drain()
                 .b);
  // responder: READ and ATOMICs executed and answered, responses acked
  write_seed(t, "responder-read-atomic",
             Prog(kCfg0, kCfg1)
                 .data(0, dREAD, 0, 0, 0, 0, MROCE_F_LAST, z3Mss5, 0, 1, 0)
                 .data(0, dFADD, 1, 0, 0, 0, MROCE_F_LAST, z8, 0, 2, 0)
                 .data(0, dCAS, 2, 0, 0, 0, MROCE_F_LAST, z8, 0, 2, 1)
                 .drain()
                 .ack(3, 0)
                 .path(0, 0, 0)
                 .path(1, 0, 0)
                 .path(2, 0, 0)
                 .ack(1, 0)
                 .path(3, 0, 0)
                 .b);
  // responder: out-of-order arrival across paths, a duplicate dsn
  write_seed(t, "responder-reorder",
             Prog(kCfg0, kCfg1)
                 .data(0, dWRITE, 1, 0, 2, 0, 0, z3Mss5, 2)
                 .data(0, dWRITE, 0, 0, 0, 0, 0, z3Mss5, 0)
                 .data(0, dWRITE, 2, 0, 2, 0, MROCE_F_LAST, z3Mss5, 3)
                 .data(0, dWRITE, 3, 0, -1, 0, 0, z3Mss5, 0)
                 .data(0, dWRITE, 3, 0, 0, 0, 0, z3Mss5, 1)
                 .timer(2)
                 .b);
  // SRQ stream with a smaller mss; control packets; a peer restart
  write_seed(t, "srq-and-control",
             Prog(kCfg0, kCfg1)
                 .recv(1, z100K)
                 .data(1, dSEND_IMM, 0, 0, 0, 0,
                       MROCE_F_LAST | MROCE_F_SOLICITED, z16Mss, 0, 0, 0, 0)
                 .ctrl(4, 1)
                 .u8(0)
                 .ctrl(5, 1)
                 .u16(20)
                 .u8(5)
                 .ctrl(6, 0)
                 .u8(0)
                 .d(0)
                 .drain()
                 .ctrl(0, 0)
                 .u8(0)
                 .u8(3)
                 .u8(3)
                 .u8(6)
                 .timer(0xff)
                 .b);
  // path failure: nothing acknowledged, RTOs until the path is replaced
  // and probed, then the connection gives up
  write_seed(t, "rto-probe-dead",
             Prog(kCfg0, kCfg1)
                 .post(0, pWRITE, z64K)
                 .timer(6)
                 .timer(6)
                 .timer(6)
                 .timer(7)
                 .timer(7)
                 .ctrl(5, 0)
                 .u16(1)
                 .u8(1)
                 .timer(11)
                 .b);
  // pacing by the receiver's rate hint
  write_seed(t, "paced",
             Prog(kCfg0, kCfg1)
                 .ack(0, 0, 1)
                 .post(0, pWRITE, z16Mss)
                 .timer(1)
                 .timer(2)
                 .timer(0xff)
                 .b);
  // one path, minimal tx buffer, small windows, retries of 1
  write_seed(t, "narrow",
             Prog(0x80 | 0x04, 0x5f)
                 .post(0, pWRITE, z16Mss)
                 .post(1, pSEND, zMss)
                 .ack(1, 2)
                 .path(0, 1, 2, 2)
                 .entry(0, 0, 0)
                 .entry(1, 2, MROCE_ERR_RNR)
                 .timer(5)
                 .timer(5)
                 .ack(0, 1)
                 .entry(1, 2, MROCE_ERR_RNR)
                 .u8(K)
                 .drain()
                 .b);

  // the handshake left to the records: the victim's CONNECT goes
  // unanswered until it gives up; a packet meanwhile is dropped
  write_seed(t, "connect-gives-up",
             Prog(kCfg0 | 0x20, kCfg1, 1)
                 .post(0, pWRITE, zMss)
                 .data(0, dWRITE, 0, 0, 0, 0, MROCE_F_LAST, zMss, 0)
                 .timer(12)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(13)
                 .timer(0xff)
                 .b);
  // the established peer repeats its CONNECT (same nonce) announcing fewer
  // paths while data is in flight on all four: nothing may change under
  // the packets in flight (the path count, the dsn window)
  write_seed(t, "connect-repeat-fewer-paths",
             Prog(kCfg0, kCfg1)
                 .post(0, pWRITE, z16Mss)
                 .ctrl(0, 0)
                 .u8(1)
                 .u8(1)
                 .u8(0)
                 .timer(4)
                 .b);
  // passive: the peer's CONNECT arrives as a record, data follows
  write_seed(t, "connect-late",
             Prog(kCfg0, kCfg1, 1)
                 .ctrl(0, 0)
                 .u8(1)
                 .u8(3)
                 .u8(5)
                 .data(0, dWRITE, 0, 0, 0, 0, MROCE_F_LAST, zMss, 0)
                 .b);
  // fair share: the victim's ACKs carry a rate hint after an epoch
  {
    Prog p(kCfg0, kCfg1, 2);
    for (int i = 0; i < 8; i++)
      p.data(0, dWRITE, static_cast<uint8_t>(i % 4), 0, 0, 0, 0, z16Mss,
             static_cast<uint8_t>(i));
    p.timer(7).data(0, dWRITE, 0, 0, 0, 0, 0, z16Mss, 8).timer(7);
    write_seed(t, "fair-share", p.b);
  }
  // the responder's 16 response jobs all busy: READ 17 waits until the
  // responses are acknowledged
  {
    Prog p(kCfg0, kCfg1);
    for (int i = 0; i < 18; i++)  // from the 17th on, ahead of the frontier
      p.data(0, dREAD, static_cast<uint8_t>(i % 4), 0, 0, i < 16 ? 0 : i - 16,
             MROCE_F_LAST, z8, 0, 1, 0);
    p.ack(3, 0).path(0, 0, 0).path(1, 0, 0).path(2, 0, 0);
    p.ack(1, 0).path(3, 0, 0);
    write_seed(t, "responder-jobs-full", p.b);
  }
  // NO_STREAM until the retries run out (retry count 1)
  write_seed(t, "no-stream-retries",
             Prog(kCfg0, 0x80)
                 .post(0, pSEND, z8)
                 .ack(0, 1)
                 .entry(0, 2, MROCE_ERR_NO_STREAM)
                 .timer(7)
                 .timer(7)
                 .ack(0, 1)
                 .entry(0, 2, MROCE_ERR_NO_STREAM)
                 .flush(0)
                 .b);
  // the requester's own buffer refuses a READ response; a POLL for a
  // stream that is not ours gets an orphan NACK
  write_seed(t, "local-refuses-response",
             Prog(kCfg0, kCfg1)
                 .post(0, pREAD, z8, kBadLocal)
                 .data(0, dREAD_RESP, 0, 0, 0, 0, MROCE_F_LAST, 0, 0)
                 .ctrl(6, 0)
                 .u8(0x22)
                 .d(0)
                 .b);
  // one path ECN-marked epoch after epoch while another is clean: the
  // marked path is moved to a new source port
  {
    Prog p(0x01 /* 2 paths */, kCfg1);
    for (int e = 0; e < 8; e++) {
      p.post(0, pWRITE, z64K);
      for (int k = 0; k < 4; k++) {
        p.ack(2, 0);
        p.u8(0).u8(0).u8(0).u16(20).u8(1).u8(16).u8(16);  // path 0: all CE
        p.u8(1).u8(0).u8(0).u16(20).u8(1).u8(16).u8(0);   // path 1: clean
        p.timer(5);
      }
      p.ack(0, 1).entry(0, 0, MROCE_OK);
    }
    write_seed(t, "ecn-congested-path", p.b);
  }

  // the harness run replayed into the victim
  for (double loss : {0.0, 0.2}) {
    Capture cap = run_harness(loss);
    Prog p(kCfg0 | 0x08, kCfg1);  // mss 256, as the run
    p.recv(0, z3Mss5).recv(0, z3Mss5).recv(1, z3Mss5);
    // the victim's own requests, as endpoint 1 posted them
    p.u8(P).u8(pWRITE << 1).u8(0xf0).u32(300).u16(0).u8(0).u8(0).u8(0).u8(0);
    p.u8(P).u8(pREAD << 1).u8(0xf0).u32(600).u16(0).u8(0).u8(0).u8(0).u8(0);
    p.post(0, pFADD, z8);
    size_t n = 0;
    for (const Bytes &pkt : cap.sent[0]) {
      p.raw(pkt);
      if (++n % 8 == 0) p.timer(2);
    }
    p.timer(6);
    write_seed(t, loss > 0 ? "harness-lossy" : "harness", p.b);
  }
}

// ---- fuzz_wire ----

// The worked examples of Documentation/protocol.md section 14, each code
// block one packet.  Every one must decode: a spec example the decoder
// refuses is a bug in one of them.  A data example whose payload the text
// only describes ("4096 bytes of payload follow") gets that payload.
void spec_seeds() {
  std::ifstream f(std::string(MROCE_SOURCE_DIR) + "/Documentation/protocol.md");
  std::string line, block;
  bool in_section = false, in_block = false;
  int n = 0;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line.rfind("## 14.", 0) == 0;
    if (!in_section) continue;
    if (line.rfind("```", 0) == 0) {
      if (in_block) {
        Bytes b = hex(block.c_str());
        mroce_pkt d;
        mroce_err err =
            mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d);
        if (err == MROCE_ERR_LENGTH) {
          b.resize(b.size() + 4096);
          err =
              mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d);
        }
        if (err != MROCE_OK)
          throw std::runtime_error(
              "protocol.md example " + std::to_string(n + 1) +
              " does not decode: " + mroce_err_name(err));
        char name[32];
        std::snprintf(name, sizeof(name), "spec-%d-op%02x", ++n, d.hdr.opcode);
        write_seed("fuzz_wire", name, b);
      }
      in_block = !in_block;
      block.clear();
      continue;
    }
    if (in_block) block += line + " ";
  }
  if (!n) throw std::runtime_error("no worked examples found in protocol.md");
}

// A packet with ACK blocks: an ACK (@p's opcode), or data of @payload
// bytes with an ACK body; every block distinct, stream entry @nack_at a
// NACK.  Long ones, up to the largest head a receiver pulls.
Bytes with_blocks(mroce_pkt p, unsigned npaths, unsigned nstreams,
                  uint32_t payload, unsigned nack_at = ~0u) {
  const bool ack = p.hdr.opcode == MROCE_OP_ACK;
  mroce_ack_ext e{50'000, static_cast<uint8_t>(npaths),
                  static_cast<uint8_t>(nstreams), 0};
  if (ack) {
    p.ack = e;
  } else {
    p.hdr.flags |= MROCE_F_ACK_BODY;
  }
  Bytes b(MROCE_MAX_HDR_LEN + MROCE_ACK_EXT_LEN +
          npaths * MROCE_ACK_PATH_LEN + nstreams * MROCE_ACK_STREAM_LEN +
          payload);
  uint32_t n = mroce_wire_encode(&p, b.data());
  if (!ack) {
    mroce_wire_put_ack_ext(&e, &b[n]);
    n += MROCE_ACK_EXT_LEN;
  }
  for (unsigned i = 0; i < npaths; i++, n += MROCE_ACK_PATH_LEN) {
    mroce_ack_path ap{};
    ap.path = static_cast<uint16_t>(i);
    ap.cum_psn = 1000 + 7 * i;
    ap.echo_ts = 5000 + i;
    ap.ack_delay = 100 * i;
    ap.ce_count = i / 3;
    ap.rcv_count = 2000 + i;
    ap.sack[i % MROCE_SACK_WORDS] = 0x8000000000000001ull >> (i % 64);
    mroce_wire_put_ack_path(&ap, &b[n]);
  }
  for (unsigned i = 0; i < nstreams; i++, n += MROCE_ACK_STREAM_LEN) {
    bool nack = i == nack_at;
    mroce_ack_stream as{2 + 2 * (i % 4), 0x10000 + i, nack ? 0x10000 + i : 0,
                        static_cast<uint8_t>(nack ? MROCE_ERR_RNR : 0),
                        static_cast<uint8_t>(nack),
                        static_cast<uint16_t>(nack ? 50 : 0)};
    mroce_wire_put_ack_stream(&as, &b[n]);
  }
  for (uint32_t i = 0; i < payload; i++, n++)
    b[n] = static_cast<uint8_t>(0x30 + i);
  b.resize(n);
  mroce_pkt d;
  if (mroce_wire_decode(b.data(), n, &d))
    throw std::runtime_error("a block seed does not decode");
  return b;
}

mroce_pkt seed_hdr(uint8_t op) {
  mroce_pkt p{};
  p.hdr.opcode = op;
  p.hdr.dst_conn = 101;
  p.hdr.src_conn = 100;
  p.hdr.path = 1;
  p.hdr.ts = 77;
  if (mroce_op_sequenced(op)) {
    p.hdr.flags = MROCE_F_ACK_REQ | MROCE_F_LAST;
    p.hdr.psn = 12;
    p.hdr.dsn = 30;
    p.hdr.msn = 0x10001;
    p.hdr.dst_stream = 2;
    p.hdr.src_stream = 1;
  }
  return p;
}

// ACKs with many blocks and data packets with ACK bodies: what a receiver
// makes contiguous before the payload.
void block_seeds(const char *t) {
  mroce_pkt a = seed_hdr(MROCE_OP_ACK);
  write_seed(t, "ack-64-255", with_blocks(a, 64, 255, 0, 100));
  write_seed(t, "ack-8-16-nack", with_blocks(a, 8, 16, 0, 3));
  write_seed(t, "ack-0-40", with_blocks(a, 0, 40, 0));
  mroce_pkt w = seed_hdr(MROCE_OP_WRITE);
  w.data.va = 0x10000;
  w.data.rkey = 0x100;
  w.data.total = 300;
  write_seed(t, "write-body-64-255", with_blocks(w, 64, 255, 300, 7));
  write_seed(t, "write-body-4-2", with_blocks(w, 4, 2, 300));
  mroce_pkt si = seed_hdr(MROCE_OP_SEND_IMM);
  si.data.total = 1000;
  si.data.offset = 900;
  si.data.imm = 0x1234;
  write_seed(t, "send-imm-body-4-3", with_blocks(si, 4, 3, 100, 1));
  mroce_pkt rr = seed_hdr(MROCE_OP_READ_RESP);
  rr.data.total = 64;
  write_seed(t, "read-resp-body-1-0", with_blocks(rr, 1, 0, 64));
  mroce_pkt rq = seed_hdr(MROCE_OP_READ_REQ);
  rq.data.va = 0x80000;
  rq.data.rkey = 0x101;
  rq.data.total = 1000;
  write_seed(t, "read-req-body-2-1", with_blocks(rq, 2, 1, 0));
  mroce_pkt ar = seed_hdr(MROCE_OP_ATOMIC_RESP);
  ar.data.orig = 5;
  write_seed(t, "atomic-resp-body-0-2", with_blocks(ar, 0, 2, 0, 0));

  // the same, as raw records into fuzz_conn_rx's victim (conn 101 of peer
  // 100, stream 2 of peer stream 1) while it has a WRITE outstanding
  write_seed("fuzz_conn_rx", "raw-ack-blocks",
             Prog(kCfg0, kCfg1)
                 .post(0, pWRITE, z3Mss5)
                 .drain()
                 .raw(with_blocks(a, 8, 16, 0, 3))
                 .raw(with_blocks(w, 4, 2, 300))
                 .raw(with_blocks(si, 4, 3, 100, 1))
                 .raw(with_blocks(a, 64, 255, 0))
                 .timer(6)
                 .b);
}

void wire_seeds() {
  const char *t = "fuzz_wire";
  block_seeds(t);
  // golden packets: Documentation/protocol.md's worked examples
  write_seed(t, "golden-write",
             hex("10 10 00 11 00 00 00 07 00 00 00 03 00 01 00 00"
                 "00 00 00 2a 00 0f 42 40 00 00 00 12 00 00 00 34"
                 "00 00 01 00 00 00 00 05"
                 "00 00 7f 00 00 10 00 00 00 00 12 34 00 00 00 00"
                 "00 00 00 04 00 00 00 00 00 00 00 00 00 00 00 00"
                 "de ad be ef"));
  write_seed(t, "golden-connect",
             hex("10 01 00 00 00 00 00 00 00 00 00 03 00 00 00 00"
                 "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
                 "00 00 00 00 00 00 00 00"
                 "00 00 00 00 c0 ff ee 01 00 00 00 00 00 00 00 00"
                 "00 04 00 00 00 00 40 00"));
  spec_seeds();
  // one packet per (opcode, flags, blocks) seen in a lossy harness run;
  // data payloads cut to 64 bytes (the decoder does not care)
  Capture cap = run_harness(0.2);
  std::set<std::string> seen;
  for (int e = 0; e < 2; e++)
    for (Bytes pkt : cap.sent[e]) {
      mroce_pkt d;
      if (mroce_wire_decode(pkt.data(), static_cast<uint32_t>(pkt.size()), &d))
        throw std::runtime_error("harness sent an invalid packet");
      char key[64];
      // d.ack is zero unless an ACK or a data packet's ACK body
      std::snprintf(key, sizeof(key), "op%02x-f%02x-%u-%u", d.hdr.opcode,
                    d.hdr.flags, d.ack.npaths, d.ack.nstreams);
      if (!seen.insert(key).second) continue;
      if (d.payload_len > 64 && mroce_op_sequenced(d.hdr.opcode)) {
        // keep it valid: shrink the segment and the message together
        uint32_t cut = d.payload_len - 64;
        d.data.total -= cut;
        pkt.resize(pkt.size() - cut);
        mroce_wire_encode(&d, pkt.data());
      }
      write_seed(t, std::string("harness-") + key, pkt);
    }
}

// ---- fuzz_sack ----

struct SackProg {
  Bytes b;
  SackProg(uint32_t psn, uint8_t win, uint32_t rx, uint32_t tx) {
    for (uint32_t v : {psn})
      for (int i = 3; i >= 0; i--) b.push_back(v >> (8 * i));
    b.push_back(win);
    for (uint32_t v : {rx, tx})
      for (int i = 3; i >= 0; i--) b.push_back(v >> (8 * i));
  }
  SackProg &op(uint8_t o, uint8_t m) {
    b.push_back(o);
    b.push_back(m);
    return *this;
  }
};

void sack_seeds() {
  const char *t = "fuzz_sack";
  SackProg inorder(0, 6, 0, 0);
  for (int i = 0; i < 40; i++) inorder.op(0, 0x10).op(1, 0x10);
  write_seed(t, "in-order", inorder.b);

  SackProg holes(1000, 0, 5000, 7000);
  for (int i = 0; i < 60; i++)
    holes.op(0, static_cast<uint8_t>(0x10 + (i * 7) % 40));
  holes.op(2, 50);
  for (int i = 0; i < 60; i++)
    holes.op(3, static_cast<uint8_t>(0x10 + (i * 11) % 50));
  for (int i = 0; i < 30; i++)
    holes.op(1, static_cast<uint8_t>(0x10 + (i * 5) % 30));
  write_seed(t, "holes", holes.b);

  // drag the cumulative point: jumps of one and several windows
  SackProg drag(0xfffffff0u, 3, 0xffffff00u, 0xfffffffau);
  drag.op(0, 0x11).op(0, 0x13).op(0, 0xf0).b.push_back(0x80);
  drag.op(0, 0x12).op(0, 0xf3).b.push_back(0x10);
  drag.op(0, 0x05).op(1, 0xf1).b.push_back(0x00);
  drag.op(2, 200).op(3, 0x20).op(3, 0x10).op(3, 0x05);
  write_seed(t, "drag-wrap", drag.b);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  wire_seeds();
  conn_rx_programs();
  sack_seeds();
  return 0;
}
