// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// fuzz_conn_rx: one established connection (the victim, id 101) with two
// attached streams and three memory regions, driven by a program the
// fuzzer writes: packets from the peer (structured, so sequence numbers land
// near the live windows, or raw bytes), ACKs of what the victim sent, posted
// sends and receives, timer expiries and transmit drains.
//
// The glue callbacks bounds-check everything and abort when the core breaks
// its side of the contract (placing outside a packet or a claimed buffer,
// transmitting bytes of a message that is not outstanding, completing out of
// order or twice, executing a READ/ATOMIC off the frontier).  After every
// step the connection's bookkeeping is recounted from scratch: in-flight
// bytes per path and per connection against the scoreboard ring, the SACK
// and dsn windows, the stream windows, the retransmission queue.  Every
// packet the victim emits must pass the decoder, and after a timer run and
// a drain the next deadline must move into the future (else the glue's
// timer would spin).  At the end every stream is
// flushed and detached: every posted send and every claimed receive must
// have completed exactly once, and nothing may still point at a stream.
//
// Input: three config bytes, then records.  A record is one command byte
// (command = byte % 16, see kCmds) followed by its operands; the layouts are
// in the functions below.  Reading past the end yields zeros.  The victim
// and its streams mirror endpoint 1 of the unit-test harness (ids, msns,
// regions), so packets captured from a harness run replay as raw records.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <vector>

#include "input.h"
#include "timer_ref.h"

extern "C" {
#include "conn.h"
#include "share.h"
}

using mroce::fuzz::die;
using mroce::fuzz::Input;

namespace {

constexpr uint32_t kVictimId = 101, kPeerId = 100;
constexpr uint64_t kVictimNonce = 0x1001, kPeerNonce = 0x1000;
constexpr uint64_t kRecvTag = 1ull << 62;
constexpr uint32_t kMaxLen = 1u << 20;  // largest buffer we allocate

// MROCE_FUZZ_TRACE=1 prints every packet and step (for reading a crash).
const bool kTrace = std::getenv("MROCE_FUZZ_TRACE") != nullptr;

void trace_pkt(const char *dir, const mroce_pkt &p, uint64_t now) {
  if (!kTrace) return;
  const mroce_hdr &h = p.hdr;
  std::fprintf(stderr,
               "%12llu %s op=%#x fl=%#x path=%u psn=%u dsn=%u msn=%#x att=%u "
               "st=%u->%u off=%u tot=%u len=%u",
               static_cast<unsigned long long>(now), dir, h.opcode, h.flags,
               h.path, h.psn, h.dsn, h.msn, h.attempt, h.src_stream,
               h.dst_stream, p.data.offset, p.data.total, p.payload_len);
  if (h.opcode == MROCE_OP_ACK)
    std::fprintf(stderr, " npaths=%u nstreams=%u", p.ack.npaths,
                 p.ack.nstreams);
  std::fputc('\n', stderr);
}

// A completion status: success, or one of enum mroce_err's completions.
bool is_wc(int status) {
  return status == MROCE_OK || mroce_err_group(status) == MROCE_EG_WC;
}

bool seq_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
bool seq_le(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) <= 0; }

struct RegionSpec {
  uint32_t rkey;
  uint64_t va;
  uint32_t len;
  bool rd, wr, at;
};
const RegionSpec kRegions[] = {
    {0x100, 0x10000, 256 << 10, true, true, true},
    {0x101, 0x80000, 4096, true, false, false},  // read-only
    {0x102, 0x8000, 64, false, false, true},     // atomics only
};

struct Region {
  RegionSpec spec;
  std::unique_ptr<uint8_t[]> mem;
  // Is [va, va + len) inside the region?  Overflow-safe.
  bool covers(uint64_t va, uint64_t len) const {
    return va >= spec.va && len <= spec.len && va - spec.va <= spec.len - len;
  }
};

struct Recv {
  uint64_t cookie;
  uint32_t len;
  std::unique_ptr<uint8_t[]> buf;
  bool claimed = false, done = false;
};

struct Send {
  mroce_msg msg;
  bool bad_local = false;          // placing the response fails (lkey gone)
  std::unique_ptr<uint8_t[]> src;  // WRITE*/SEND* payload
  std::unique_ptr<uint8_t[]> dst;  // READ / ATOMIC result
};

struct Qp {
  mroce_stream st;
  uint32_t peer;
  bool srq;
  std::deque<uint64_t> pending;  // posted, not completed, in posting order
  std::map<uint64_t, Send> sends;
  std::vector<Recv> rq;  // by rsn; SRQ: in posting order
  uint32_t srq_next = 0;
  uint32_t claims = 0;
  bool executed = false;  // a READ/ATOMIC ran at the frontier ...
  uint32_t exec_msn = 0;  // ... for this msn, the latest
};

struct RxBuf {
  const uint8_t *data;
  uint32_t len;
};

bool op_has_payload(uint8_t op) {
  return op == MROCE_OP_WRITE || op == MROCE_OP_WRITE_IMM ||
         op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM;
}

bool op_is_read_atomic(uint8_t op) {
  return op == MROCE_OP_READ_REQ || op == MROCE_OP_CMP_SWAP ||
         op == MROCE_OP_FETCH_ADD;
}

struct World {
  mroce_cfg cfg;
  std::unique_ptr<uint8_t[]> cmem;
  mroce_conn *c = nullptr;
  std::unique_ptr<Qp> qp[2];
  Region regions[3];
  uint64_t now = 1'000'000'000;
  uint64_t next_cookie = 1;
  uint32_t cap = 2048;
  bool autodrain = true;
  bool share_on = false;
  mroce_share share;
  const RxBuf *cur_rx = nullptr;

  explicit World(Input &in);
  void teardown();

  Qp *qp_of(const mroce_stream *st) {
    for (auto &q : qp)
      if (q && &q->st == st) return q.get();
    die("callback names stream %p, which is not ours (freed?)",
        static_cast<const void *>(st));
  }
  Region *region(uint32_t rkey) {
    for (auto &r : regions)
      if (r.spec.rkey == rkey) return &r;
    return nullptr;
  }
  Qp &pick(uint8_t b) { return *qp[b & 1]; }
  // The peer's connection id: the one adopted, or the harness's before.
  uint32_t peer() const { return c->peer_id ? c->peer_id : kPeerId; }
  uint32_t size_of(uint8_t sel, Input &in);

  void rx_bytes(const uint8_t *data, size_t len, bool ce);
  void deliver(const mroce_pkt &pkt, const uint8_t *blocks, uint32_t blen,
               uint32_t payload, bool ce);
  void drain();
  void check_tx(const uint8_t *hdr, const mroce_tx &tx);
  void check();
  void check_path(const mroce_path &p, uint32_t i, uint64_t *inflight);
  void check_stream(const Qp &q);
  void dump_timers() const;
  bool stream_ok(const mroce_stream *st) const;

  // records
  void cmd_data(Input &in);
  void cmd_ack(Input &in);
  std::vector<uint8_t> ack_blocks(Input &in, uint8_t s, mroce_ack_ext &ext);
  void cmd_ctrl(Input &in);
  void cmd_raw(Input &in);
  void cmd_post(Input &in);
  void cmd_recv(Input &in);
  void cmd_timer(Input &in);
  void cmd_flush(Input &in);
};

World *W(void *ctx) { return static_cast<World *>(ctx); }

// A sequence number near @base.  The mode byte picks: a specials[] value,
// a small step (-16 .. +223), a jump by whole windows, a step back, or any.
uint32_t rel(Input &in, uint32_t base,
             std::initializer_list<uint32_t> specials = {}) {
  uint8_t m = in.u8();
  if (m < specials.size()) return specials.begin()[m];
  if (m < 0xf0) return base + m - 0x10;
  if (m < 0xfe) return base + 256u * (m - 0xef) + in.u8() - 0x80;
  if (m == 0xfe) return base - in.u16();
  return in.u32();
}

// ---- callbacks: the glue, strict ----

mroce_stream *cb_lookup(void *ctx, mroce_conn *c, uint32_t id) {
  World *w = W(ctx);
  FUZZ_REQUIRE(c == w->c, "lookup for a foreign connection");
  for (auto &q : w->qp)
    if (q && q->st.id == id) return &q->st;
  return nullptr;
}

Recv *find_recv(Qp *q, uint64_t cookie) {
  if (!(cookie & kRecvTag)) return nullptr;
  uint64_t idx = cookie & 0xffffffffu;
  if (idx >= q->rq.size() || q->rq[idx].cookie != cookie) return nullptr;
  return &q->rq[idx];
}

int cb_claim(void *ctx, mroce_stream *st, uint32_t rsn, uint32_t total,
             uint64_t *cookie) {
  Qp *q = W(ctx)->qp_of(st);
  FUZZ_REQUIRE(st->state == MROCE_STREAM_ACTIVE, "claim on a broken stream");
  Recv *r;
  if (q->srq) {
    if (q->srq_next >= q->rq.size()) return MROCE_ERR_RNR;
    r = &q->rq[q->srq_next++];
  } else {
    if (rsn >= q->rq.size()) return MROCE_ERR_RNR;
    r = &q->rq[rsn];
    // a peer naming one receive twice is refused, as real glue must
    if (r->claimed) return MROCE_ERR_OPERR;
  }
  r->claimed = true;
  q->claims++;
  *cookie = r->cookie;
  return total > r->len ? MROCE_ERR_INVALID : MROCE_OK;
}

int cb_place(void *ctx, mroce_stream *st, const mroce_place *pl,
             const void *pctx, uint32_t off) {
  World *w = W(ctx);
  Qp *q = w->qp_of(st);
  const RxBuf *rb = static_cast<const RxBuf *>(pctx);
  FUZZ_REQUIRE(rb && rb == w->cur_rx, "place outside of mroce_conn_rx");
  FUZZ_REQUIRE(pl->offset <= pl->total && pl->len <= pl->total - pl->offset,
               "place [%u, +%u) outside its message of %u", pl->offset, pl->len,
               pl->total);
  const uint8_t *src = nullptr;
  if (pl->kind != MROCE_PLACE_ATOMIC_RESP) {
    FUZZ_REQUIRE(off <= rb->len && pl->len <= rb->len - off,
                 "payload [%u, +%u) outside the %u-byte packet", off, pl->len,
                 rb->len);
    src = rb->data + off;
  }
  switch (pl->kind) {
    case MROCE_PLACE_WRITE: {
      Region *r = w->region(pl->rkey);
      if (!r || !r->spec.wr || !r->covers(pl->va, pl->total))
        return MROCE_ERR_ACCESS;
      std::memcpy(r->mem.get() + (pl->va - r->spec.va) + pl->offset, src,
                  pl->len);
      return MROCE_OK;
    }
    case MROCE_PLACE_SEND: {
      Recv *r = find_recv(q, pl->cookie);
      FUZZ_REQUIRE(r && r->claimed && !r->done,
                   "SEND placed into receive %#llx, not claimed or done",
                   static_cast<unsigned long long>(pl->cookie));
      if (pl->total > r->len) return MROCE_ERR_INVALID;
      std::memcpy(r->buf.get() + pl->offset, src, pl->len);
      return MROCE_OK;
    }
    case MROCE_PLACE_READ_RESP: {
      auto it = q->sends.find(pl->cookie);
      FUZZ_REQUIRE(
          it != q->sends.end() && it->second.msg.op == MROCE_OP_READ_REQ,
          "READ response for %#llx, not an outstanding READ",
          static_cast<unsigned long long>(pl->cookie));
      FUZZ_REQUIRE(pl->total == it->second.msg.len,
                   "READ response of %u bytes for a READ of %u", pl->total,
                   it->second.msg.len);
      if (it->second.bad_local) return MROCE_ERR_ACCESS;
      std::memcpy(it->second.dst.get() + pl->offset, src, pl->len);
      return MROCE_OK;
    }
    case MROCE_PLACE_ATOMIC_RESP: {
      auto it = q->sends.find(pl->cookie);
      FUZZ_REQUIRE(
          it != q->sends.end() && (it->second.msg.op == MROCE_OP_CMP_SWAP ||
                                   it->second.msg.op == MROCE_OP_FETCH_ADD),
          "ATOMIC response for %#llx, not an outstanding ATOMIC",
          static_cast<unsigned long long>(pl->cookie));
      FUZZ_REQUIRE(pl->len == 8 && pl->offset == 0, "ATOMIC response shape");
      if (it->second.bad_local) return MROCE_ERR_ACCESS;
      std::memcpy(it->second.dst.get(), &pl->value, 8);
      return MROCE_OK;
    }
  }
  die("place kind %u", pl->kind);
}

// READs and ATOMICs execute at the frontier, each msn once, in order.
void executed_at_frontier(Qp *q, const mroce_stream *st) {
  FUZZ_REQUIRE(st->state == MROCE_STREAM_ACTIVE,
               "execution on a broken stream");
  FUZZ_REQUIRE(!q->executed || seq_lt(q->exec_msn, st->rx_next),
               "READ/ATOMIC at msn %#x after msn %#x", st->rx_next,
               q->exec_msn);
  q->executed = true;
  q->exec_msn = st->rx_next;
}

int cb_read_check(void *ctx, mroce_stream *st, uint32_t rkey, uint64_t va,
                  uint32_t len) {
  World *w = W(ctx);
  executed_at_frontier(w->qp_of(st), st);
  Region *r = w->region(rkey);
  if (!r || !r->spec.rd || !r->covers(va, len)) return MROCE_ERR_ACCESS;
  return MROCE_OK;
}

int cb_atomic(void *ctx, mroce_stream *st, const mroce_atomic *a,
              uint64_t *orig) {
  World *w = W(ctx);
  executed_at_frontier(w->qp_of(st), st);
  FUZZ_REQUIRE(!(a->va & 7), "misaligned atomic reached the glue");
  FUZZ_REQUIRE(a->op == MROCE_OP_CMP_SWAP || a->op == MROCE_OP_FETCH_ADD,
               "atomic op %u", a->op);
  Region *r = w->region(a->rkey);
  if (!r || !r->spec.at || !r->covers(a->va, 8)) return MROCE_ERR_ACCESS;
  uint8_t *p = r->mem.get() + (a->va - r->spec.va);
  uint64_t v;
  std::memcpy(&v, p, 8);
  *orig = v;
  if (a->op == MROCE_OP_CMP_SWAP)
    v = v == a->compare ? a->swap_add : v;
  else
    v += a->swap_add;
  std::memcpy(p, &v, 8);
  return MROCE_OK;
}

void cb_send_done(void *ctx, mroce_stream *st, uint64_t cookie, int wc_status) {
  Qp *q = W(ctx)->qp_of(st);
  FUZZ_REQUIRE(is_wc(wc_status), "wc status %d",
               wc_status);
  FUZZ_REQUIRE(!q->pending.empty(), "send %#llx completed, nothing pending",
               static_cast<unsigned long long>(cookie));
  FUZZ_REQUIRE(q->pending.front() == cookie,
               "send %#llx completed before %#llx (out of order or twice)",
               static_cast<unsigned long long>(cookie),
               static_cast<unsigned long long>(q->pending.front()));
  q->pending.pop_front();
  q->sends.erase(cookie);
}

void cb_recv_done(void *ctx, mroce_stream *st, const mroce_recv_done *rd) {
  Qp *q = W(ctx)->qp_of(st);
  Recv *r = find_recv(q, rd->cookie);
  FUZZ_REQUIRE(r && r->claimed && !r->done,
               "receive %#llx completed, not claimed or completed before",
               static_cast<unsigned long long>(rd->cookie));
  FUZZ_REQUIRE(is_wc(rd->status), "wc status %u", rd->status);
  FUZZ_REQUIRE(rd->op == MROCE_OP_SEND || rd->op == MROCE_OP_SEND_IMM ||
                   rd->op == MROCE_OP_WRITE_IMM,
               "receive completed by opcode %#x", rd->op);
  if (rd->status == MROCE_OK)
    FUZZ_REQUIRE(rd->byte_len <= r->len, "received %u into %u bytes",
                 rd->byte_len, r->len);
  r->done = true;
}

void cb_stream_error(void *ctx, mroce_stream *st, int wc_status) {
  W(ctx)->qp_of(st);
  FUZZ_REQUIRE(st->state == MROCE_STREAM_ERROR,
               "stream_error on a stream not in error");
  FUZZ_REQUIRE(is_wc(wc_status), "wc status %d",
               wc_status);
}

void cb_conn_event(void *ctx, mroce_conn *c, int ev, uint32_t) {
  FUZZ_REQUIRE(c == W(ctx)->c, "event for a foreign connection");
  FUZZ_REQUIRE(ev >= MROCE_EV_ESTABLISHED && ev <= MROCE_EV_PATH, "event %d",
               ev);
}

const mroce_ops kOps = {
    .stream_lookup = cb_lookup,
    .recv_claim = cb_claim,
    .place = cb_place,
    .read_check = cb_read_check,
    .atomic = cb_atomic,
    .send_done = cb_send_done,
    .recv_done = cb_recv_done,
    .stream_error = cb_stream_error,
    .conn_event = cb_conn_event,
};

// ---- setup ----

// Config byte 0: bits 0-1 paths (1..4), 2-3 mss, 4 stream 0 uses an SRQ,
// 5 the victim opens (else the peer does), 6 no automatic drain after each
// input, 7 minimal transmit buffer.  Byte 1: bits 0-1 the peer's path
// count, 2-3 its dsn window, 4-5 ours, 6 RNR retry 1 (else forever), 7
// retry count 1 (else 7).  Byte 2: bit 0 the handshake is left to the
// records (the victim is idle, or has sent its CONNECT), bit 1 the victim
// shares an inbound capacity (fair-share rate hints, share.c), bit 2 it
// holds a message's ACK for an answer to carry (ack_hold_ns), bit 3 it puts
// no ACK on its data.
World::World(Input &in) {
  static const uint32_t kMss[] = {1024, 4096, 256, 1500};
  static const uint16_t kPeerPaths[] = {4, 1, 2, 64};
  static const uint32_t kPeerWin[] = {16384, 256, 1u << 20, 1024};
  static const uint32_t kOurWin[] = {16384, 256, 1024, 4096};
  uint8_t b0 = in.u8(), b1 = in.u8(), b2 = in.u8();

  mroce_cfg_default(&cfg);
  cfg.npaths = 1 + (b0 & 3);
  cfg.mss = kMss[(b0 >> 2) & 3];
  cfg.init_cwnd = 16 * cfg.mss;
  cfg.conn_init_cwnd = 64 * cfg.mss;
  cfg.conn_max_cwnd = cfg.npaths * MROCE_PATH_WINDOW * cfg.mss;
  cfg.pace_burst = 4 * cfg.mss;
  cfg.rto_init_ns = 1'000'000;
  cfg.rto_min_ns = 200'000;
  cfg.tlp_min_ns = 50'000;
  cfg.ack_delay_ns = 5'000;
  cfg.ack_hold_ns = (b2 & 4) ? 3'000 : 0;
  cfg.ack_bodies = !(b2 & 8);
  cfg.probe_interval_ns = 500'000;
  cfg.epoch_ns = 2'000'000;
  cfg.dead_ns = 200'000'000;
  cfg.dsn_window = kOurWin[(b1 >> 4) & 3];
  autodrain = !(b0 & 0x40);
  cap = (b0 & 0x80) ? MROCE_TX_BUF_MIN : 2048;

  cmem.reset(new uint8_t[mroce_conn_size(cfg.npaths)]);
  c = reinterpret_cast<mroce_conn *>(cmem.get());
  if (mroce_conn_init(c, &cfg, &kOps, this, kVictimId, kVictimNonce, 7, now))
    die("mroce_conn_init refused the config");

  for (size_t i = 0; i < 3; i++) {
    regions[i].spec = kRegions[i];
    regions[i].mem.reset(new uint8_t[kRegions[i].len]());
  }

  mroce_pkt h{};
  h.hdr.src_conn = kPeerId;
  h.hello.nonce = kPeerNonce;
  h.hello.max_paths = kPeerPaths[b1 & 3];
  h.hello.dsn_window = kPeerWin[(b1 >> 2) & 3];
  if (b2 & 2) {
    share_on = true;
    mroce_share_init(&share, 1'250'000'000, 1'000'000, now);  // 10 Gb/s
    mroce_share_join(&share, c);
  }
  if (b0 & 0x20) {
    mroce_conn_open(c, now);
    drain();  // CONNECT
    h.hdr.opcode = MROCE_OP_ACCEPT;
    h.hdr.dst_conn = kVictimId;
    h.hello.echo_nonce = kVictimNonce;
  } else {
    h.hdr.opcode = MROCE_OP_CONNECT;
  }
  if (!(b2 & 1)) {
    deliver(h, nullptr, 0, 0, false);
    drain();  // ACCEPT
    FUZZ_REQUIRE(c->state == MROCE_CONN_ESTABLISHED, "handshake failed");
  }

  // Streams as the harness's connect_qps(1, 2) and (3, 4) make them.
  for (uint32_t i = 0; i < 2; i++) {
    auto q = std::make_unique<Qp>();
    uint32_t id = 2 + 2 * i;
    q->peer = id - 1;
    q->srq = i ? true : (b0 & 0x10) != 0;
    mroce_stream_init(&q->st, id, q.get());
    mroce_stream_params prm{};
    prm.mss = i ? cfg.mss / 2 : cfg.mss;
    prm.tx_msn = 0x20000 + id;
    prm.rx_msn = 0x10000 + q->peer;
    prm.max_rd_atomic = i ? 2 : 16;
    prm.rnr_retry = (b1 & 0x40) ? 1 : 7;
    prm.retry_cnt = (b1 & 0x80) ? 1 : 7;
    prm.srq = q->srq;
    prm.rnr_delay_ns = 100'000;
    prm.min_rnr_ns = 100'000;
    if (mroce_stream_attach(c, &q->st, q->peer, &prm))
      die("stream attach refused");
    qp[i] = std::move(q);
  }
  check();
}

// Message and buffer sizes worth trying, by selector; 0xf0+ reads a u32.
uint32_t World::size_of(uint8_t sel, Input &in) {
  const uint32_t m = cfg.mss;
  const uint32_t sizes[] = {0,     1,         8,      m - 1, m,       m + 1,
                            2 * m, 3 * m + 5, 16 * m, 65536, 100'000, kMaxLen};
  if (sel >= 0xf0) return in.u32() % (kMaxLen + 1);
  return sizes[sel % (sizeof(sizes) / sizeof(sizes[0]))];
}

// ---- feeding the victim ----

void World::rx_bytes(const uint8_t *data, size_t len, bool ce) {
  if (len > 0xffff) return;
  // exact-size copies: any read past the packet is an ASan report, and
  // the core gets only the head it asks for (as kernel/rx.c pulls it),
  // placement the whole packet
  const uint32_t n = static_cast<uint32_t>(len);
  std::unique_ptr<uint8_t[]> buf(new uint8_t[len ? len : 1]);
  if (len) std::memcpy(buf.get(), data, len);
  uint32_t head = 0;
  for (int round = 0; round < 3; round++) {
    uint32_t need = mroce_wire_head_len(buf.get(), head, n);
    FUZZ_REQUIRE(need <= n, "head of %u asked of a %u-byte packet", need, n);
    if (need <= head) break;
    head = need;
  }
  std::unique_ptr<uint8_t[]> hbuf(new uint8_t[head ? head : 1]);
  if (head) std::memcpy(hbuf.get(), data, head);
  mroce_pkt pkt;
  if (mroce_wire_decode_head(hbuf.get(), head, n, &pkt) != MROCE_OK)
    return;
  if (pkt.hdr.opcode != MROCE_OP_CONNECT && pkt.hdr.dst_conn != c->id) {
    // glue: not ours; answer with a RESET (and check it is well formed)
    uint8_t rst[MROCE_MAX_HDR_LEN];
    uint32_t n = mroce_reset_reply(&pkt, MROCE_RESET_UNKNOWN_CONN, rst);
    mroce_pkt r;
    FUZZ_REQUIRE(!n || mroce_wire_decode(rst, n, &r) == MROCE_OK,
                 "reset reply does not decode");
    return;
  }
  trace_pkt("rx", pkt, now);
  RxBuf rb{buf.get(), static_cast<uint32_t>(len)};
  mroce_rx_meta m{&rb, static_cast<uint8_t>(ce)};
  cur_rx = &rb;
  mroce_conn_rx(c, &pkt, hbuf.get(), &m, now);
  cur_rx = nullptr;
  if (autodrain) drain();
}

// Encode @pkt, append @blen block bytes (an ACK's blocks, or a data
// packet's ACK body) and @payload bytes of pattern.
void World::deliver(const mroce_pkt &pkt, const uint8_t *blocks, uint32_t blen,
                    uint32_t payload, bool ce) {
  std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + blen + payload);
  uint32_t n = mroce_wire_encode(&pkt, b.data());
  if (blen) std::memcpy(&b[n], blocks, blen);
  for (uint32_t i = 0; i < payload; i++)
    b[n + blen + i] = static_cast<uint8_t>(pkt.hdr.msn + pkt.data.offset + i);
  rx_bytes(b.data(), n + blen + payload, ce);
}

// 'D': a stream packet from the peer.  s: bit 0 stream, 1-4 opcode, 5-6
// stream ids (0/1 right, 2 wrong source, 3 unknown destination), 7 CE.
void World::cmd_data(Input &in) {
  static const uint8_t kOps[] = {
      MROCE_OP_WRITE,    MROCE_OP_WRITE_IMM, MROCE_OP_SEND,
      MROCE_OP_SEND_IMM, MROCE_OP_READ_REQ,  MROCE_OP_READ_RESP,
      MROCE_OP_CMP_SWAP, MROCE_OP_FETCH_ADD, MROCE_OP_ATOMIC_RESP};
  uint8_t s = in.u8();
  Qp &q = pick(s);
  uint8_t op = kOps[((s >> 1) & 15) % 9];
  bool resp = op == MROCE_OP_READ_RESP || op == MROCE_OP_ATOMIC_RESP;
  mroce_pkt p{};
  mroce_hdr &h = p.hdr;
  h.opcode = op;
  h.dst_conn = c->id;
  h.src_conn = peer();
  h.dst_stream = q.st.id;
  h.src_stream = q.peer;
  switch ((s >> 5) & 3) {
    case 2:
      h.src_stream = in.u8();
      break;
    case 3:
      h.dst_stream = in.u8();
      break;
  }
  h.path = static_cast<uint16_t>(in.u8() % (c->npaths + 1));
  h.psn = rel(in, h.path < c->npaths ? c->paths[h.path].rcv_cum : 0);
  h.dsn = rel(in, c->rx_dsn_base);
  h.msn = rel(in, resp ? q.st.tx_una : q.st.rx_next);
  h.attempt = in.u8();
  h.flags = in.u8() & MROCE_F_ALL;
  h.ts = static_cast<uint32_t>(now) - in.u8() * 100u;

  mroce_data_ext &d = p.data;
  uint32_t plen = 0;
  uint8_t tsel = in.u8();
  if (op == MROCE_OP_READ_RESP && tsel < 0x80)
    d.total = mroce_txmsg(&q.st, h.msn)->m.len;  // the READ it answers
  else
    d.total = size_of(tsel, in);
  if (op_has_payload(op) || op == MROCE_OP_READ_RESP) {
    uint8_t chunk = in.u8();
    if (chunk < 0xf0) {
      d.offset = std::min<uint64_t>(uint64_t(chunk) * cfg.mss, d.total);
      plen = std::min(cfg.mss, d.total - d.offset);
    } else {
      d.offset = in.u32();
      plen = in.u16() % (cfg.mss + 1);
    }
  }
  if (op != MROCE_OP_SEND && op != MROCE_OP_SEND_IMM && !resp) {
    uint8_t r = in.u8();
    uint16_t v = in.u16();
    const RegionSpec &rs = kRegions[r % 3];
    d.rkey = r < 0xf0 ? rs.rkey : r;
    d.va = rs.va + uint64_t(v & 0x7fff) * ((v & 0x8000) ? 1 : 8);
  }
  if (op == MROCE_OP_SEND || op == MROCE_OP_SEND_IMM ||
      op == MROCE_OP_WRITE_IMM)
    d.rsn = rel(in, q.claims);
  if (op == MROCE_OP_SEND_IMM || op == MROCE_OP_WRITE_IMM) d.imm = in.u8();
  if (op == MROCE_OP_CMP_SWAP || op == MROCE_OP_FETCH_ADD) {
    d.swap_add = in.u8();
    if (op == MROCE_OP_CMP_SWAP) d.compare = in.u8();
    d.total = 8;
  }
  if (op == MROCE_OP_READ_REQ) plen = 0;
  if (op == MROCE_OP_ATOMIC_RESP) {
    d.orig = in.u8();
    d.total = 8;
  }
  // an ACK body between the extension and the payload (ack_blocks())
  std::vector<uint8_t> body;
  if (h.flags & MROCE_F_ACK_BODY) {
    mroce_ack_ext ext{};
    std::vector<uint8_t> blk = ack_blocks(in, in.u8(), ext);
    body.resize(MROCE_ACK_EXT_LEN);
    mroce_wire_put_ack_ext(&ext, body.data());
    body.insert(body.end(), blk.begin(), blk.end());
  }
  deliver(p, body.data(), static_cast<uint32_t>(body.size()), plen, s >> 7);
}

// The blocks of an ACK, or of a data packet's ACK body.  s: bits 1-2 path
// blocks, 3-4 stream entries.  Path block: path, cum_psn (0 snd_nxt, 1
// snd_una, 2 snd_high, else near snd_una), SACK mode, timestamps and ECN
// counts.  Stream entry: stream, msn (0 tx_next, 1 tx_end, 2 tx_una, else
// near tx_una), status, nack_msn, attempt (0: the message's current one),
// RNR delay.
std::vector<uint8_t> World::ack_blocks(Input &in, uint8_t s, mroce_ack_ext &ext) {
  uint8_t hint = in.u8();
  ext.rate_hint = hint == 0xff ? MROCE_RATE_NONE : hint * 100'000u;
  ext.npaths = (s >> 1) & 3;
  ext.nstreams = (s >> 3) & 3;
  std::vector<uint8_t> blk(ext.npaths * MROCE_ACK_PATH_LEN +
                           ext.nstreams * MROCE_ACK_STREAM_LEN);
  uint8_t *b = blk.data();
  for (unsigned i = 0; i < ext.npaths; i++, b += MROCE_ACK_PATH_LEN) {
    uint8_t ps = in.u8();
    mroce_ack_path ap{};
    ap.path = static_cast<uint16_t>(ps < 0xf0 ? ps % c->npaths : ps % 64);
    const mroce_path &pp = c->paths[ap.path < c->cfg.npaths ? ap.path : 0];
    ap.cum_psn = rel(in, pp.snd_una, {pp.snd_nxt, pp.snd_una, pp.snd_high});
    uint8_t mode = in.u8() % 6;
    switch (mode) {
      case 0:
        break;
      case 1:    // the receiver has everything above cum_psn ...
      case 2: {  // ... or all but every k-th
        uint32_t every = 2 + in.u8() % 8;
        for (uint32_t j = 0; j < MROCE_PATH_WINDOW; j++) {
          if (!seq_lt(ap.cum_psn + 1 + j, pp.snd_nxt)) break;
          if (mode == 2 && j % every == 0) continue;
          ap.sack[j / 64] |= 1ull << (j % 64);
        }
        break;
      }
      case 3:
        ap.sack[0] = in.u64();
        break;
      case 4:
        for (auto &word : ap.sack) word = in.u64();
        break;
      case 5: {
        uint8_t bit = in.u8();
        ap.sack[bit / 64] |= 1ull << (bit % 64);
        break;
      }
    }
    ap.echo_ts = static_cast<uint32_t>(now) - in.u16() * 16u;
    ap.ack_delay = in.u8() * 100u;
    ap.rcv_count = pp.peer_rcv + in.u8();
    ap.ce_count = pp.peer_ce + in.u8();
    mroce_wire_put_ack_path(&ap, b);
  }
  for (unsigned i = 0; i < ext.nstreams; i++, b += MROCE_ACK_STREAM_LEN) {
    uint8_t qs = in.u8();
    Qp &q = pick(qs);
    const mroce_stream &st = q.st;
    mroce_ack_stream e{};
    e.stream = qs < 0xf0 ? st.id : qs;
    e.msn = rel(in, st.tx_una, {st.tx_next, st.tx_end, st.tx_una});
    e.status = static_cast<uint8_t>(mroce_nack_err(in.u8() % (MROCE_NACK_MAX + 1)));
    e.nack_msn = rel(in, st.tx_una, {st.tx_una});
    uint8_t a = in.u8();
    e.attempt = a ? static_cast<uint8_t>(a - 1)
                  : q.st.tx[e.nack_msn % MROCE_STREAM_WINDOW].attempt;
    e.rnr_delay_us = in.u8();
    mroce_wire_put_ack_stream(&e, b);
  }
  return blk;
}

// 'A': an ACK from the peer.  s: bit 0 ECE, the rest as ack_blocks().
void World::cmd_ack(Input &in) {
  uint8_t s = in.u8();
  mroce_pkt p{};
  p.hdr.opcode = MROCE_OP_ACK;
  p.hdr.dst_conn = c->id;
  p.hdr.src_conn = peer();
  p.hdr.path = static_cast<uint16_t>(in.u8() % c->npaths);
  p.hdr.ts = static_cast<uint32_t>(now);
  p.hdr.flags = (s & 1) ? MROCE_F_ECE : 0;
  std::vector<uint8_t> blk = ack_blocks(in, s, p.ack);
  deliver(p, blk.data(), static_cast<uint32_t>(blk.size()), 0, false);
}

// 'C': a control packet.  s: opcode (CONNECT, ACCEPT, RESET, CLOSE, PROBE,
// PROBE_ACK, POLL, CHALLENGE), bit 6 wrong dst_conn, bit 7 wrong src_conn.
void World::cmd_ctrl(Input &in) {
  static const uint8_t kOps[] = {
      MROCE_OP_CONNECT, MROCE_OP_ACCEPT,    MROCE_OP_RESET, MROCE_OP_CLOSE,
      MROCE_OP_PROBE,   MROCE_OP_PROBE_ACK, MROCE_OP_POLL,  MROCE_OP_CHALLENGE};
  uint8_t s = in.u8();
  mroce_pkt p{};
  mroce_hdr &h = p.hdr;
  h.opcode = kOps[(s & 0x3f) % 8];
  h.src_conn = (s & 0x80) ? in.u8() : peer();
  h.dst_conn = h.opcode == MROCE_OP_CONNECT ? 0 : (s & 0x40) ? in.u8() : c->id;
  h.path = static_cast<uint16_t>(in.u8() % (c->npaths + 1));
  h.ts = static_cast<uint32_t>(now);
  uint32_t pad = 0;
  switch (h.opcode) {
    case MROCE_OP_CONNECT:
    case MROCE_OP_ACCEPT:
      p.hello.nonce = (in.u8() & 1) ? kPeerNonce : 0x2000 + in.u8();
      if (h.opcode == MROCE_OP_ACCEPT)
        p.hello.echo_nonce = (in.u8() & 1) ? kVictimNonce : 1 + in.u8();
      p.hello.max_paths = static_cast<uint16_t>(1 + in.u8() % 64);
      p.hello.dsn_window = 256u << (in.u8() % 13);
      break;
    case MROCE_OP_RESET: {
      // the echo of the victim's challenge (what a peer that really lost
      // the connection sends), of its nonce (a refused CONNECT), or a guess
      uint8_t e = in.u8();
      p.reset.reason = 1 + in.u8() % 3;
      p.reset.echo = e % 3 == 0   ? c->challenge
                     : e % 3 == 1 ? kVictimNonce
                                  : 1 + in.u8();
      break;
    }
    case MROCE_OP_CHALLENGE:
      // a cookie (from no connection) or the peer asking for a proof
      if (in.u8() & 1) h.src_conn = 0;
      p.challenge.token = 1 + in.u16();
      break;
    case MROCE_OP_PROBE:
      h.flags = MROCE_F_ACK_REQ;
      pad = in.u8();
      break;
    case MROCE_OP_PROBE_ACK:
      p.probe_ack.echo_ts = static_cast<uint32_t>(now) - in.u16() * 16u;
      p.probe_ack.delay = in.u8();
      break;
    case MROCE_OP_POLL: {
      uint8_t qs = in.u8();
      Qp &q = pick(qs);
      h.flags = MROCE_F_ACK_REQ;
      h.dst_stream = (qs & 2) ? qs >> 2 : q.st.id;  // 2: a stream not ours
      h.src_stream = q.peer;
      h.msn = rel(in, q.st.rx_next);
      break;
    }
  }
  deliver(p, nullptr, 0, pad, false);
}

// 'R': raw bytes.  u8 patch flags (bit 0: write our connection ids),
// u16 length (mod 2048), bytes.
void World::cmd_raw(Input &in) {
  uint8_t patch = in.u8();
  size_t n = in.u16() % 2048, got;
  const uint8_t *at = in.take(n, &got);
  std::vector<uint8_t> b(at, at + got);
  if ((patch & 1) && b.size() >= 12) {
    mroce_put_be32(c->id, &b[4]);
    mroce_put_be32(peer(), &b[8]);
  }
  rx_bytes(b.data(), b.size(), patch & 2);
}

// 'P': post a send.  s: bit 0 stream, 1-3 opcode, 4 fence, 5 solicited,
// 6 its local buffer refuses the response (READ/ATOMIC: a bad lkey), 7 va
// misaligned by one; then size selector, va, rkey, imm, swap/add,
// compare.
void World::cmd_post(Input &in) {
  static const uint8_t kOps[] = {MROCE_OP_WRITE,    MROCE_OP_WRITE_IMM,
                                 MROCE_OP_SEND,     MROCE_OP_SEND_IMM,
                                 MROCE_OP_READ_REQ, MROCE_OP_CMP_SWAP,
                                 MROCE_OP_FETCH_ADD};
  uint8_t s = in.u8();
  Qp &q = pick(s);
  mroce_msg m{};
  m.op = kOps[((s >> 1) & 7) % 7];
  m.flags =
      (s & 0x10 ? MROCE_MSG_FENCE : 0) | (s & 0x20 ? MROCE_MSG_SOLICITED : 0);
  uint8_t lsel = in.u8();
  bool huge = lsel == 0xff;  // beyond MROCE_MAX_MSG: must be refused
  m.len = huge ? MROCE_MAX_MSG + 1 : size_of(lsel, in);
  if (!op_has_payload(m.op) && m.op != MROCE_OP_READ_REQ && !(lsel & 0x80))
    m.len = 8;  // atomics: mostly well formed
  m.va = 0x10000 + uint64_t(in.u16()) * 8 + (s >> 7);
  m.rkey = 0x100 + in.u8();
  m.imm = in.u8();
  m.swap_add = in.u8();
  m.compare = in.u8();
  m.cookie = next_cookie++;

  bool args_ok;
  if (op_is_read_atomic(m.op) && m.op != MROCE_OP_READ_REQ)
    args_ok = m.len == 8 && !(m.va & 7);
  else
    args_ok = m.len <= MROCE_MAX_MSG && m.va + m.len >= m.va;
  int want = q.st.state != MROCE_STREAM_ACTIVE ? MROCE_ERR_INVAL
             : !mroce_stream_can_post(&q.st)   ? MROCE_ERR_AGAIN
             : !args_ok                        ? MROCE_ERR_INVAL
                                               : 0;
  int rc = mroce_stream_post(&q.st, &m, now);
  FUZZ_REQUIRE(rc == want, "post returned %d, expected %d", rc, want);
  if (rc) return;
  Send snd;
  snd.msg = m;
  snd.bad_local = (s & 0x40) != 0;
  if (op_has_payload(m.op)) {
    snd.src.reset(new uint8_t[m.len ? m.len : 1]);
    for (uint32_t i = 0; i < m.len; i++)
      snd.src[i] = static_cast<uint8_t>(m.cookie + i);
  } else {
    snd.dst.reset(new uint8_t[m.op == MROCE_OP_READ_REQ && m.len ? m.len : 8]);
  }
  q.pending.push_back(m.cookie);
  q.sends.emplace(m.cookie, std::move(snd));
  if (autodrain) drain();
}

// 'Q': post a receive.  s: bit 0 stream; then a size selector.
void World::cmd_recv(Input &in) {
  uint8_t s = in.u8();
  Qp &q = pick(s);
  Recv r;
  r.len = size_of(in.u8(), in);
  r.buf.reset(new uint8_t[r.len ? r.len : 1]);
  r.cookie = kRecvTag | uint64_t(s & 1) << 32 | q.rq.size();
  q.rq.push_back(std::move(r));
}

// 'T': time passes, the timer fires.  m < 14: a step from the table;
// 0xff: exactly the armed deadline; else m microseconds.
void World::cmd_timer(Input &in) {
  static const uint64_t kDt[] = {
      0,           1'000,       5'000,         20'000,       100'000,
      500'000,     1'000'000,   2'000'000,     5'000'000,    20'000'000,
      100'000'000, 250'000'000, 1'000'000'000, 3'000'000'000};
  uint8_t m = in.u8();
  if (m < sizeof(kDt) / sizeof(kDt[0])) {
    now += kDt[m];
  } else if (m == 0xff) {
    uint64_t at = mroce_conn_next_timer(c);
    if (at > now) now = at;
  } else {
    now += m * 1000ull;
  }
  if (share_on && mroce_share_deadline(&share) <= now)
    mroce_share_epoch(&share, now);
  mroce_conn_on_timer(c, now);
  if (!autodrain) return;
  drain();
  // The glue re-arms its timer at next_timer, and a deadline not in the
  // future fires again at once.  That may happen once or twice (an epoch
  // check skipped on a path that just timed out), but it must settle, or
  // the timer would fire forever (a softirq livelock).
  for (int spins = 0;; spins++) {
    uint64_t at = mroce_conn_next_timer(c);
    if (!at || at > now) break;
    if (spins >= 4) dump_timers();
    FUZZ_REQUIRE(spins < 4, "timer livelock: next_timer %llu, now %llu",
                 static_cast<unsigned long long>(at),
                 static_cast<unsigned long long>(now));
    mroce_conn_on_timer(c, now);
    drain();
  }
  (void)mroce_conn_busy(c);
}

// Everything mroce_conn_next_timer() derives a deadline from.
void World::dump_timers() const {
  std::fprintf(stderr, "now %llu ack_at %llu pace %llu hint %u progress %llu\n",
               (unsigned long long)now, (unsigned long long)c->ack_at,
               (unsigned long long)c->pace_next_ns, c->rate_hint,
               (unsigned long long)c->last_progress_ns);
  for (uint32_t i = 0; i < c->npaths; i++) {
    const mroce_path &p = c->paths[i];
    std::fprintf(
        stderr,
        " path %u state %u inflight %u una %u nxt %u sent %llu "
        "last_ack %llu last_send %llu rto %llu probe_at %llu "
        "epoch %u@%llu\n",
        i, p.state, p.inflight_pkts, p.snd_una, p.snd_nxt,
        (unsigned long long)mroce_path_ent(&p, p.snd_una)->sent_ns,
        (unsigned long long)p.last_ack_ns, (unsigned long long)p.last_send_ns,
        (unsigned long long)p.rtt.rto, (unsigned long long)p.probe_at,
        p.epoch_sent, (unsigned long long)p.epoch_start);
  }
  for (auto &q : qp)
    if (q)
      std::fprintf(stderr, " stream %u state %u wake_at %llu poll_at %llu\n",
                   q->st.id, q->st.state, (unsigned long long)q->st.wake_at,
                   (unsigned long long)q->st.poll_at);
}

// 'F': the verbs layer moves a stream to the error state.
void World::cmd_flush(Input &in) {
  Qp &q = pick(in.u8());
  if (q.st.conn) mroce_stream_flush(&q.st);
}

// ---- what the victim sends ----

void World::drain() {
  for (int i = 0; i < 1024; i++) {
    std::unique_ptr<uint8_t[]> buf(new uint8_t[cap]);
    mroce_tx tx;
    std::memset(&tx, 0xa5, sizeof(tx));
    mroce_poll r = mroce_conn_poll_tx(c, now, buf.get(), cap, &tx);
    FUZZ_REQUIRE(
        r == MROCE_POLL_IDLE || r == MROCE_POLL_PACKET || r == MROCE_POLL_WAIT,
        "poll_tx returned %d", r);
    if (r != MROCE_POLL_PACKET) return;
    check_tx(buf.get(), tx);
  }
}

void World::check_tx(const uint8_t *hdr, const mroce_tx &tx) {
  FUZZ_REQUIRE(tx.hdr_len >= MROCE_HDR_LEN && tx.hdr_len <= cap,
               "header of %u bytes in a %u-byte buffer", tx.hdr_len, cap);
  FUZZ_REQUIRE(tx.path < c->cfg.npaths, "sent on path %u of %u", tx.path,
               c->cfg.npaths);
  FUZZ_REQUIRE(tx.sport == c->paths[tx.path].sport, "sport is not the path's");
  FUZZ_REQUIRE(tx.src <= MROCE_SRC_READ, "payload source %u", tx.src);
  if (tx.src != MROCE_SRC_NONE)
    FUZZ_REQUIRE(tx.len <= c->tx_mss, "payload of %u > tx_mss", tx.len);
  std::vector<uint8_t> b(tx.hdr_len + (tx.src == MROCE_SRC_NONE ? 0 : tx.len));
  std::memcpy(b.data(), hdr, tx.hdr_len);
  uint8_t *pay = b.data() + tx.hdr_len;
  switch (tx.src) {
    case MROCE_SRC_NONE:
      FUZZ_REQUIRE(tx.len == 0, "payload of %u without a source", tx.len);
      break;
    case MROCE_SRC_SQ: {
      Qp *q = qp_of(tx.st);
      auto it = q->sends.find(tx.cookie);
      FUZZ_REQUIRE(it != q->sends.end(),
                   "payload of send %#llx, which is not outstanding",
                   static_cast<unsigned long long>(tx.cookie));
      const Send &s = it->second;
      FUZZ_REQUIRE(op_has_payload(s.msg.op), "payload of opcode %u", s.msg.op);
      FUZZ_REQUIRE(tx.offset <= s.msg.len && tx.len <= s.msg.len - tx.offset,
                   "payload [%u, +%u) of a %u-byte send", tx.offset, tx.len,
                   s.msg.len);
      std::memcpy(pay, s.src.get() + tx.offset, tx.len);
      break;
    }
    case MROCE_SRC_READ: {
      qp_of(tx.st);
      Region *r = region(tx.rkey);
      uint64_t at = tx.va + tx.offset;
      FUZZ_REQUIRE(r && r->spec.rd && at >= tx.va && r->covers(at, tx.len),
                   "READ response from [%#llx, +%u) outside rkey %#x",
                   static_cast<unsigned long long>(at), tx.len, tx.rkey);
      std::memcpy(pay, r->mem.get() + (at - r->spec.va), tx.len);
      break;
    }
  }
  mroce_pkt d;
  mroce_err err =
      mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &d);
  FUZZ_REQUIRE(err == MROCE_OK, "own packet (opcode %#x) rejected: %s",
               hdr[1], mroce_err_name(err));
  trace_pkt("tx", d, now);
  FUZZ_REQUIRE(d.hdr.src_conn == c->id, "src_conn %u", d.hdr.src_conn);
  if (d.hdr.opcode != MROCE_OP_CONNECT)
    FUZZ_REQUIRE(d.hdr.dst_conn == c->peer_id, "dst_conn %u", d.hdr.dst_conn);
  if (mroce_op_sequenced(d.hdr.opcode)) {
    FUZZ_REQUIRE(d.hdr.path == tx.path && d.payload_len == tx.len,
                 "data header disagrees with the tx descriptor");
    FUZZ_REQUIRE(tx.path < c->npaths, "data on path %u, %u negotiated", tx.path,
                 c->npaths);
    FUZZ_REQUIRE(seq_lt(d.hdr.dsn, c->tx_dsn_nxt), "dsn %u never allocated",
                 d.hdr.dsn);
    FUZZ_REQUIRE(tx.st && d.hdr.src_stream == tx.st->id &&
                     d.hdr.dst_stream == tx.st->peer,
                 "data packet names the wrong streams");
  }
}

// ---- invariants, recounted from scratch ----

bool World::stream_ok(const mroce_stream *st) const {
  if (!st) return true;
  for (auto &q : qp)
    if (q && &q->st == st) return q->st.conn == c;
  return false;
}

bool ring_bit(const uint64_t *bits, uint32_t n, uint32_t mask) {
  n &= mask;
  return bits[n / 64] >> (n % 64) & 1;
}

// Set bits among the @n positions from @start of a ring bitmap.
uint32_t count_bits(const uint64_t *bits, uint32_t start, uint32_t n,
                    uint32_t mask) {
  uint32_t k = 0;
  if (n > mask) {  // the whole ring
    for (uint32_t w = 0; w <= mask / 64; w++)
      k += static_cast<uint32_t>(__builtin_popcountll(bits[w]));
    return k;
  }
  for (uint32_t i = 0; i < n; i++) k += ring_bit(bits, start + i, mask);
  return k;
}

void World::check_path(const mroce_path &p, uint32_t i, uint64_t *inflight) {
  uint32_t span = p.snd_nxt - p.snd_una;
  FUZZ_REQUIRE(span <= MROCE_PATH_WINDOW, "path %u: %u psns unresolved", i,
               span);
  FUZZ_REQUIRE(seq_le(p.snd_una, p.snd_high) && seq_le(p.snd_high, p.snd_nxt),
               "path %u: snd_high %u outside [%u, %u]", i, p.snd_high,
               p.snd_una, p.snd_nxt);
  // a path out of timer_mask must have no deadline at all
  FUZZ_REQUIRE((c->timer_mask >> i & 1) ||
                   (!p.inflight_pkts && !p.epoch_sent && !p.reo_at &&
                    p.state != MROCE_PATH_PROBING),
               "path %u: deadlines but not in timer_mask", i);
  // transmit looks for due probes only among the paths of probe_mask
  FUZZ_REQUIRE((c->probe_mask >> i & 1) || p.state != MROCE_PATH_PROBING,
               "path %u: probing but not in probe_mask", i);
  uint64_t bytes = 0;
  uint32_t pkts = 0;
  bool live[MROCE_PATH_WINDOW] = {};
  for (uint32_t psn = p.snd_una; psn != p.snd_nxt; psn++) {
    const mroce_txent &e = *mroce_path_ent(&p, psn);
    FUZZ_REQUIRE(e.state != MROCE_TXE_FREE && e.state <= MROCE_TXE_LOST,
                 "path %u psn %u: state %u inside the window", i, psn, e.state);
    bool out = e.state == MROCE_TXE_INFLIGHT || e.state == MROCE_TXE_LOST;
    FUZZ_REQUIRE(ring_bit(p.out_bits, psn, MROCE_PATH_WINDOW - 1) == out,
                 "path %u psn %u: out bit disagrees with state %u", i, psn,
                 e.state);
    live[psn % MROCE_PATH_WINDOW] = true;
    if (e.state == MROCE_TXE_INFLIGHT) {
      bytes += e.ref.len;
      pkts++;
    }
    FUZZ_REQUIRE(stream_ok(e.ref.st),
                 "path %u psn %u: stale stream pointer %p (state %u, dsn %u)",
                 i, psn, static_cast<const void *>(e.ref.st), e.state,
                 e.ref.dsn);
    FUZZ_REQUIRE(seq_lt(e.ref.dsn, c->tx_dsn_nxt) || !e.ref.st,
                 "path %u psn %u: dsn %u never allocated", i, psn, e.ref.dsn);
  }
  FUZZ_REQUIRE(p.snd_una == p.snd_nxt ||
                   p.una_sent_ns ==
                       mroce_path_ent(&p, p.snd_una)->sent_ns,
               "path %u: una_sent_ns %llu, the ring's psn %u was sent at %llu",
               i, static_cast<unsigned long long>(p.una_sent_ns), p.snd_una,
               static_cast<unsigned long long>(
                   mroce_path_ent(&p, p.snd_una)->sent_ns));
  for (uint32_t pos = 0; pos < MROCE_PATH_WINDOW; pos++)
    FUZZ_REQUIRE(live[pos] || !ring_bit(p.out_bits, pos, 0xff),
                 "path %u: out bit %u set outside the window", i, pos);
  FUZZ_REQUIRE(p.inflight == bytes && p.inflight_pkts == pkts,
               "path %u: inflight %u bytes / %u pkts, ring says %llu / %u", i,
               p.inflight, p.inflight_pkts,
               static_cast<unsigned long long>(bytes), pkts);
  FUZZ_REQUIRE(!ring_bit(p.rcv_bits, p.rcv_cum, 0xff),
               "path %u: the receive bit at rcv_cum is set", i);
  *inflight += p.inflight;
}

void World::check_stream(const Qp &q) {
  const mroce_stream &st = q.st;
  uint32_t span = st.tx_end - st.tx_una;
  FUZZ_REQUIRE(span <= MROCE_STREAM_WINDOW, "stream %u: %u messages posted",
               st.id, span);
  // (a failed stream's tx_next is meaningless until flush resets it)
  if (st.state == MROCE_STREAM_ACTIVE)
    FUZZ_REQUIRE(seq_le(st.tx_una, st.tx_next) && seq_le(st.tx_next, st.tx_end),
                 "stream %u: tx_next %#x outside [%#x, %#x]", st.id, st.tx_next,
                 st.tx_una, st.tx_end);
  FUZZ_REQUIRE(q.pending.size() == span,
               "stream %u: %zu sends pending, %u in the window", st.id,
               q.pending.size(), span);
  uint32_t rd = 0;
  for (uint32_t i = 0; i < span; i++) {
    const struct mroce_txmsg &t = st.tx[(st.tx_una + i) % MROCE_STREAM_WINDOW];
    FUZZ_REQUIRE(t.state != MROCE_TXM_FREE && t.msn == st.tx_una + i &&
                     t.m.cookie == q.pending[i],
                 "stream %u: message %#x lost from the window", st.id,
                 st.tx_una + i);
    rd += op_is_read_atomic(t.m.op) && t.state == MROCE_TXM_SENT;
  }
  FUZZ_REQUIRE(st.resp_count <= MROCE_MAX_RD_ATOMIC &&
                   st.resp_head < MROCE_MAX_RD_ATOMIC,
               "stream %u: response ring %u/%u", st.id, st.resp_head,
               st.resp_count);
  for (uint32_t i = st.resp_count; i < MROCE_MAX_RD_ATOMIC; i++)
    FUZZ_REQUIRE(!st.resp[(st.resp_head + i) % MROCE_MAX_RD_ATOMIC].busy,
                 "stream %u: busy response job outside the ring", st.id);
  if (st.state != MROCE_STREAM_ACTIVE) return;
  FUZZ_REQUIRE(st.rd_inflight == rd,
               "stream %u: rd_inflight %u, %u READ/ATOMICs outstanding", st.id,
               st.rd_inflight, rd);
  uint32_t rnr = 0;
  for (uint32_t i = 0; i < MROCE_STREAM_WINDOW; i++) {
    const struct mroce_rxmsg &r = st.rx[i];
    if (r.state == MROCE_RXM_FREE) continue;
    FUZZ_REQUIRE(r.msn % MROCE_STREAM_WINDOW == i &&
                     r.msn - st.rx_next < MROCE_STREAM_WINDOW,
                 "stream %u: receive slot %u holds msn %#x, frontier %#x",
                 st.id, i, r.msn, st.rx_next);
    rnr += r.state == MROCE_RXM_RNR;
  }
  FUZZ_REQUIRE(st.rnr_slots == rnr, "stream %u: rnr_slots %u, %u refused",
               st.id, st.rnr_slots, rnr);
}

void World::check() {
  // every fresh entry of next_timer's per-path cache (the paths of
  // timer_mask not in timer_dirty; on_timer skips those not due by it)
  // still holds what the plain scan finds after this step
  if (c->state == MROCE_CONN_ESTABLISHED)
    for (uint32_t i = 0; i < c->npaths; i++) {
      // next_timer takes the minimum of every entry: one out of the mask
      // must say "none"
      FUZZ_REQUIRE((c->timer_mask >> i & 1) || c->timer_at[i] == ~0ull,
                   "path %u: not in timer_mask, cached deadline %llu", i,
                   static_cast<unsigned long long>(c->timer_at[i] + 1));
      if (!(c->timer_mask >> i & 1) || (c->timer_dirty >> i & 1))
        continue;
      FUZZ_REQUIRE(c->timer_at[i] + 1 == mroce_path_timer_ref(c, i),
                   "path %u: cached deadline %llu, reference %llu", i,
                   static_cast<unsigned long long>(c->timer_at[i] + 1),
                   static_cast<unsigned long long>(mroce_path_timer_ref(c, i)));
    }
  // the optimised deadline scan against the plain one, after every step
  FUZZ_REQUIRE(mroce_conn_next_timer(c) == mroce_next_timer_ref(c),
               "next_timer %llu, reference %llu",
               static_cast<unsigned long long>(mroce_conn_next_timer(c)),
               static_cast<unsigned long long>(mroce_next_timer_ref(c)));
  FUZZ_REQUIRE(c->state <= MROCE_CONN_FAILED, "state %u", c->state);
  FUZZ_REQUIRE(c->npaths >= 1 && c->npaths <= c->cfg.npaths, "npaths %u",
               c->npaths);
  uint64_t inflight = 0;
  for (uint32_t i = 0; i < c->cfg.npaths; i++)
    check_path(c->paths[i], i, &inflight);
  FUZZ_REQUIRE(c->inflight == inflight,
               "connection inflight %u, paths sum to %llu", c->inflight,
               static_cast<unsigned long long>(inflight));
  // (the peer may use every path we allocated, even while we send on fewer)
  FUZZ_REQUIRE(
      !(c->ack_mask >> c->cfg.npaths) && !(c->probe_ack_mask >> c->cfg.npaths),
      "ACK owed on a path never allocated");

  // dsn windows: no bit outside the live range, none at the base
  const uint32_t dmask = MROCE_DSN_WINDOW - 1;
  uint32_t tspan = c->tx_dsn_nxt - c->tx_dsn_una;
  FUZZ_REQUIRE(
      tspan <= c->tx_dsn_window && c->tx_dsn_window <= MROCE_DSN_WINDOW,
      "%u dsns unacknowledged, window %u", tspan, c->tx_dsn_window);
  FUZZ_REQUIRE(count_bits(c->tx_dsn_acked, c->tx_dsn_una, tspan, dmask) ==
                   count_bits(c->tx_dsn_acked, 0, MROCE_DSN_WINDOW, dmask),
               "tx dsn bits set outside [una, nxt)");
  FUZZ_REQUIRE(!ring_bit(c->tx_dsn_acked, c->tx_dsn_una, dmask) || !tspan,
               "tx dsn bit at una set");
  FUZZ_REQUIRE(!ring_bit(c->rx_dsn_bits, c->rx_dsn_base, dmask),
               "rx dsn bit at the base set");
  FUZZ_REQUIRE(
      count_bits(c->rx_dsn_bits, c->rx_dsn_base, c->cfg.dsn_window, dmask) ==
          count_bits(c->rx_dsn_bits, 0, MROCE_DSN_WINDOW, dmask),
      "rx dsn bits set beyond the window");

  FUZZ_REQUIRE(c->retx_tail - c->retx_head <= c->retx_cap,
               "retransmission queue holds %u of %u",
               c->retx_tail - c->retx_head, c->retx_cap);
  for (uint32_t i = c->retx_head; i != c->retx_tail; i++)
    FUZZ_REQUIRE(stream_ok(c->retx[i % c->retx_cap].st),
                 "retransmission queue: stale stream pointer");

  for (auto &q : qp)
    if (q && q->st.conn == c) check_stream(*q);
}

// Flush and detach every stream: everything completes exactly once and
// nothing keeps a pointer to a stream; then free them and keep running.
void World::teardown() {
  for (auto &q : qp) {
    if (q->st.conn) mroce_stream_flush(&q->st);
    FUZZ_REQUIRE(q->pending.empty(), "stream %u: %zu sends never completed",
                 q->st.id, q->pending.size());
    for (const Recv &r : q->rq)
      FUZZ_REQUIRE(!r.claimed || r.done,
                   "stream %u: receive %#llx claimed, never completed",
                   q->st.id, static_cast<unsigned long long>(r.cookie));
    mroce_stream_detach(&q->st);
  }
  check();
  if (share_on) mroce_share_leave(c);
  for (auto &q : qp) q.reset();
  drain();
  now += 10'000'000'000ull;
  mroce_conn_on_timer(c, now);
  drain();
  check();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in(data, size);
  World w(in);
  enum { D, A, C, R, P, Q, T, X, F, K };
  static const uint8_t kCmds[16] = {D, D, D, A, A, A, P, P,
                                    T, T, Q, C, R, X, F, K};
  while (!in.done()) {
    uint8_t cmd = kCmds[in.u8() % 16];
    if (kTrace) {
      std::fprintf(stderr, "-- %c state=%u np=%u inflight=%u dsn=[%u,%u) rx=%u",
                   "DACRPQTXFK"[cmd], w.c->state, w.c->npaths, w.c->inflight,
                   w.c->tx_dsn_una, w.c->tx_dsn_nxt, w.c->rx_dsn_base);
      for (auto &q : w.qp)
        std::fprintf(stderr, " | s%u %u tx=[%#x %#x %#x) rx=%#x rd=%u",
                     q->st.id, q->st.state, q->st.tx_una, q->st.tx_next,
                     q->st.tx_end, q->st.rx_next, q->st.rd_inflight);
      std::fputc('\n', stderr);
    }
    switch (cmd) {
      case D:
        w.cmd_data(in);
        break;
      case A:
        w.cmd_ack(in);
        break;
      case C:
        w.cmd_ctrl(in);
        break;
      case R:
        w.cmd_raw(in);
        break;
      case P:
        w.cmd_post(in);
        break;
      case Q:
        w.cmd_recv(in);
        break;
      case T:
        w.cmd_timer(in);
        break;
      case X:
        w.drain();
        break;
      case F:
        w.cmd_flush(in);
        break;
      case K:
        mroce_conn_close(w.c);
        break;
    }
    w.check();
  }
  w.teardown();
  return 0;
}
