// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// metaroce-core-bench: the protocol core's per-packet hot paths, in
// steady state, on one core.
//
//   TxWrite4K     mroce_conn_poll_tx producing one 4 KiB WRITE packet:
//                 stream pick, dsn, path spray, scoreboard entry, header
//                 encode.  The window never fills (everything is
//                 acknowledged between batches).
//   RxAckSack     decode + mroce_conn_rx of an ACK with one path block that
//                 acknowledges 4 new packets; 1 in 16 packets is lost, so
//                 the cumulative point lags, the bitmap carries holes and
//                 loss detection runs.  The ACKs are the ones the real
//                 receiver code (mroce_sack_rx / mroce_sack_fill) produces.
//   RxWrite4K     decode + mroce_conn_rx of an in-order 4 KiB WRITE into a
//                 region; the placement callback bounds-checks but does
//                 not copy (protocol cost only).
//   RxWrite4KCopy the same, the callback copies the 4 KiB.
//   TxAck         mroce_conn_poll_tx building the ACK owed after 16 data
//                 packets sprayed over 4 paths (4 path blocks + a stream
//                 entry), i.e. the receiver's ACK cost per 16 packets.
//   WireDecode*   mroce_wire_decode alone.
//
// Batches are timed with a steady clock around the measured calls only
// (UseManualTime); the untimed work between batches feeds the next one.
// The ns_per_pkt counter is the figure to read: nanoseconds per packet
// event.  The core is the same source as the module's, built -O2 with
// MROCE_NO_ASSERT (see CMakeLists.txt).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include "conn.h"
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kMss = 4096;
constexpr uint32_t kPaths = 4;
constexpr uint32_t kMsg = 256 * kMss;  // 1 MiB messages
constexpr uint64_t kPktNs = 328;       // 4 KiB at 100 Gb/s
constexpr uint32_t kOurId = 1, kPeerId = 2;
constexpr uint32_t kStream = 1, kPeerStream = 2;
constexpr uint32_t kRkey = 0x100;
constexpr uint64_t kVa = 0x100000;

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "core_bench: %s\n", what);
  std::abort();
}

// ---- a minimal, fast glue ----

struct Glue {
  mroce_stream *st = nullptr;
  std::vector<uint8_t> region = std::vector<uint8_t>(kMsg);
  bool copy = false;
  uint64_t sends_done = 0, placed = 0;
};

Glue *G(void *ctx) { return static_cast<Glue *>(ctx); }

mroce_stream *g_lookup(void *ctx, mroce_conn *, uint32_t id) {
  mroce_stream *st = G(ctx)->st;
  return st && st->id == id ? st : nullptr;
}
int g_claim(void *, mroce_stream *, uint32_t rsn, uint32_t, uint64_t *cookie) {
  *cookie = rsn;
  return MROCE_OK;
}
int g_place(void *ctx, mroce_stream *, const mroce_place *pl, const void *pctx,
            uint32_t off) {
  Glue *g = G(ctx);
  // what any glue must check: the whole message inside the region
  if (pl->kind != MROCE_PLACE_WRITE || pl->rkey != kRkey || pl->va < kVa ||
      pl->va - kVa + pl->total > g->region.size())
    return MROCE_ERR_ACCESS;
  if (g->copy)
    std::memcpy(&g->region[pl->va - kVa + pl->offset],
                static_cast<const uint8_t *>(pctx) + off, pl->len);
  g->placed += pl->len;
  return MROCE_OK;
}
int g_read_check(void *, mroce_stream *, uint32_t, uint64_t, uint32_t) {
  return MROCE_OK;
}
int g_atomic(void *, mroce_stream *, const mroce_atomic *, uint64_t *orig) {
  *orig = 0;
  return MROCE_OK;
}
void g_send_done(void *ctx, mroce_stream *, uint64_t, int status) {
  if (status != MROCE_OK) fail("a send failed");
  G(ctx)->sends_done++;
}
void g_recv_done(void *, mroce_stream *, const mroce_recv_done *) {}
void g_stream_error(void *, mroce_stream *, int) { fail("stream error"); }
void g_conn_event(void *, mroce_conn *, int, uint32_t) {}

const mroce_ops kOps = {
    .stream_lookup = g_lookup,
    .recv_claim = g_claim,
    .place = g_place,
    .read_check = g_read_check,
    .atomic = g_atomic,
    .send_done = g_send_done,
    .recv_done = g_recv_done,
    .stream_error = g_stream_error,
    .conn_event = g_conn_event,
};

// ---- one established endpoint with one stream ----

struct Endpoint {
  Glue glue;
  std::unique_ptr<uint8_t[]> mem;
  mroce_conn *c;
  std::unique_ptr<mroce_stream> st = std::make_unique<mroce_stream>();
  uint64_t now = 1'000'000'000;
  uint64_t cookie = 0;
  uint8_t txbuf[2048];
  mroce_tx tx;

  Endpoint() {
    mroce_cfg cfg;
    mroce_cfg_default(&cfg);
    cfg.npaths = kPaths;
    cfg.mss = kMss;
    // congestion control is not what is measured: never the limit
    cfg.init_cwnd = MROCE_PATH_WINDOW * kMss;
    cfg.conn_max_cwnd = kPaths * MROCE_PATH_WINDOW * kMss;
    cfg.conn_init_cwnd = cfg.conn_max_cwnd;
    mem.reset(new uint8_t[mroce_conn_size(kPaths)]);
    c = reinterpret_cast<mroce_conn *>(mem.get());
    if (mroce_conn_init(c, &cfg, &kOps, &glue, kOurId, 0x11, 1, now))
      fail("conn init");
    // passive open: the peer's CONNECT, our ACCEPT
    mroce_pkt h{};
    h.hdr.opcode = MROCE_OP_CONNECT;
    h.hdr.src_conn = kPeerId;
    h.hello.nonce = 0x22;
    h.hello.max_paths = kPaths;
    h.hello.dsn_window = MROCE_DSN_WINDOW;
    rx_encoded(h, nullptr, 0);
    drain();
    if (c->state != MROCE_CONN_ESTABLISHED) fail("handshake");

    mroce_stream_init(st.get(), kStream, nullptr);
    mroce_stream_params prm{};
    prm.mss = kMss;
    prm.max_rd_atomic = 16;
    prm.rnr_retry = 7;
    prm.retry_cnt = 7;
    if (mroce_stream_attach(c, st.get(), kPeerStream, &prm)) fail("attach");
    glue.st = st.get();
  }

  void rx(const uint8_t *b, uint32_t len) {
    mroce_pkt p;
    if (mroce_wire_decode(b, len, &p) != MROCE_OK) fail("decode");
    mroce_rx_meta m{b, 0};
    mroce_conn_rx(c, &p, b, &m, now);
  }
  void rx_encoded(const mroce_pkt &p, const uint8_t *blocks, uint32_t blen) {
    std::vector<uint8_t> b(MROCE_MAX_HDR_LEN + blen);
    uint32_t n = mroce_wire_encode(&p, b.data());
    if (blen) std::memcpy(&b[n], blocks, blen);
    rx(b.data(), n + blen);
  }
  // Send whatever is due (ACKs, handshake); returns packets sent.
  int drain() {
    int n = 0;
    while (mroce_conn_poll_tx(c, now, txbuf, sizeof(txbuf), &tx) ==
           MROCE_POLL_PACKET)
      n++;
    return n;
  }
  // Keep @depth 1 MiB WRITEs posted.
  void top_up(uint32_t depth) {
    while (st->tx_end - st->tx_una < depth) {
      mroce_msg m{};
      m.op = MROCE_OP_WRITE;
      m.cookie = cookie++;
      m.len = kMsg;
      m.va = kVa;
      m.rkey = kRkey;
      if (mroce_stream_post(st.get(), &m, now)) fail("post");
    }
  }
  // The peer's ACK: @blocks path blocks, and a stream entry moving the
  // frontier to @frontier if @entry.
  void ack(const std::vector<mroce_ack_path> &blocks, bool entry,
           uint32_t frontier) {
    mroce_pkt p{};
    p.hdr.opcode = MROCE_OP_ACK;
    p.hdr.dst_conn = kOurId;
    p.hdr.src_conn = kPeerId;
    p.hdr.ts = static_cast<uint32_t>(now);
    p.ack.rate_hint = MROCE_RATE_NONE;
    p.ack.npaths = static_cast<uint8_t>(blocks.size());
    p.ack.nstreams = entry;
    std::vector<uint8_t> b(blocks.size() * MROCE_ACK_PATH_LEN +
                           MROCE_ACK_STREAM_LEN);
    for (size_t i = 0; i < blocks.size(); i++)
      mroce_wire_put_ack_path(&blocks[i], &b[i * MROCE_ACK_PATH_LEN]);
    if (entry) {
      mroce_ack_stream e{};
      e.stream = kStream;
      e.msn = frontier;
      mroce_wire_put_ack_stream(&e, &b[blocks.size() * MROCE_ACK_PATH_LEN]);
    }
    rx_encoded(p, b.data(),
               static_cast<uint32_t>(blocks.size() * MROCE_ACK_PATH_LEN +
                                     (entry ? MROCE_ACK_STREAM_LEN : 0)));
  }
  // The first msn whose packets are not all acknowledged: the peer's
  // frontier once everything acknowledged has been placed.
  uint32_t acked_frontier() const {
    uint32_t msn = st->tx_una;
    for (; msn != st->tx_next; msn++) {
      const struct mroce_txmsg *t = mroce_txmsg(st.get(), msn);
      if (t->acked != t->m.len || !t->acked_last) break;
    }
    return msn;
  }
};

// The measured calls, out of line so that callgrind can count exactly
// them: valgrind --tool=callgrind --toggle-collect='*run_measured*'.
template <typename Fn>
[[gnu::noinline]] void run_measured(int n, Fn &fn) {
  for (int i = 0; i < n; i++) fn(i);
}

// Per-batch timings.  The machine is shared: a batch that was preempted
// is an outlier, so the figure reported is the median batch (and the best
// one), per event; the mean is there for comparison.
struct Timing {
  explicit Timing(const char *name) : bench(name) {}
  const char *bench;
  std::vector<double> per_event;  // ns, one entry per batch
  double ns = 0;
  uint64_t events = 0;

  template <typename Fn>
  void timed(benchmark::State &state, int n, Fn &&fn) {
    if (!n) return;
    auto t0 = Clock::now();
    run_measured(n, fn);
    auto t1 = Clock::now();
    double s = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(s);
    ns += s * 1e9;
    events += n;
    per_event.push_back(s * 1e9 / n);
  }
  void report(benchmark::State &state, const char *name = "ns_per_pkt") {
    // every event measured by this process, over all of the library's
    // runs of the benchmark: callgrind's instruction total divides by it
    static std::map<std::string, uint64_t> all;
    state.counters["events_all"] = static_cast<double>(all[bench] += events);
    if (per_event.empty()) return;
    std::sort(per_event.begin(), per_event.end());
    state.counters[name] = per_event[per_event.size() / 2];
    state.counters[std::string(name) + "_min"] = per_event.front();
    state.counters[std::string(name) + "_mean"] = ns / events;
    state.counters["events"] = static_cast<double>(events);
  }
};

// ---- benchmarks ----

void BM_TxWrite4K(benchmark::State &state) {
  constexpr int kBatch = 64;
  Endpoint e;
  Timing tm{"TxWrite4K"};
  uint64_t bytes = 0;
  for (auto _ : state) {
    e.top_up(8);
    tm.timed(state, kBatch, [&](int) {
      e.now += kPktNs;
      if (mroce_conn_poll_tx(e.c, e.now, e.txbuf, sizeof(e.txbuf), &e.tx) !=
          MROCE_POLL_PACKET)
        fail("poll_tx produced no packet");
      bytes += e.tx.len;
    });
    // the peer acknowledges everything and completes what it can
    std::vector<mroce_ack_path> blocks(kPaths);
    for (uint32_t i = 0; i < kPaths; i++) {
      const mroce_path &p = e.c->paths[i];
      blocks[i] = mroce_ack_path{};
      blocks[i].path = static_cast<uint16_t>(i);
      blocks[i].cum_psn = p.snd_nxt;
      blocks[i].echo_ts = static_cast<uint32_t>(e.now - 5'000);
      blocks[i].rcv_count = p.snd_nxt;
    }
    e.ack(blocks, true, e.st->tx_next);
  }
  if (bytes != tm.events * kMss) fail("not every packet carried 4 KiB");
  tm.report(state);
}
BENCHMARK(BM_TxWrite4K)->UseManualTime();

void BM_RxAckSack(benchmark::State &state) {
  constexpr int kSend = 256;  // packets sent per round
  Endpoint e;
  // the receiver's halves of the four paths, run by the real code
  std::vector<mroce_path> rp(kPaths);
  for (uint32_t i = 0; i < kPaths; i++)
    mroce_path_init(&rp[i], static_cast<uint16_t>(i), 1, kMss, kMss, 1, 0);
  uint32_t got[kPaths] = {};
  uint64_t seq = 0;
  std::vector<std::vector<uint8_t>> acks;
  Timing tm{"RxAckSack"};
  uint64_t newly = 0;
  for (auto _ : state) {
    // untimed: send a round (retransmissions first), lose 1 in 16 first
    // transmissions, build an ACK every 4 arrivals on a path
    e.top_up(8);
    acks.clear();
    for (int i = 0; i < kSend; i++) {
      e.now += kPktNs;
      if (mroce_conn_poll_tx(e.c, e.now, e.txbuf, sizeof(e.txbuf), &e.tx) !=
          MROCE_POLL_PACKET)
        break;
      uint16_t flags = mroce_get_be16(e.txbuf + 2);
      if (!(flags & MROCE_F_RETX) && seq++ % 16 == 5) continue;
      mroce_path &p = rp[e.tx.path];
      mroce_sack_rx(&p, mroce_get_be32(e.txbuf + 16));
      p.rcv_count++;
      p.rcv_last_ts = mroce_get_be32(e.txbuf + 20);
      p.rcv_last_ns = e.now;
      if (++got[e.tx.path] % 4) continue;
      mroce_pkt a{};
      a.hdr.opcode = MROCE_OP_ACK;
      a.hdr.dst_conn = kOurId;
      a.hdr.src_conn = kPeerId;
      a.hdr.path = e.tx.path;
      a.ack.rate_hint = MROCE_RATE_NONE;
      a.ack.npaths = 1;
      std::vector<uint8_t> b(MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
                             MROCE_ACK_PATH_LEN);
      mroce_wire_encode(&a, b.data());
      mroce_ack_path ap;
      mroce_sack_fill(&p, &ap, e.now + 2'000);
      mroce_wire_put_ack_path(&ap, &b[MROCE_HDR_LEN + MROCE_ACK_EXT_LEN]);
      acks.push_back(std::move(b));
    }
    e.now += 10'000;
    uint64_t before =
        e.c->paths[0].stats.acked_pkts + e.c->paths[1].stats.acked_pkts +
        e.c->paths[2].stats.acked_pkts + e.c->paths[3].stats.acked_pkts;
    tm.timed(state, static_cast<int>(acks.size()), [&](int i) {
      e.rx(acks[i].data(), static_cast<uint32_t>(acks[i].size()));
    });
    for (uint32_t i = 0; i < kPaths; i++)
      newly += e.c->paths[i].stats.acked_pkts;
    newly -= before;
    // untimed: the frontier moves over fully acknowledged messages
    e.ack({}, true, e.acked_frontier());
  }
  tm.report(state);
  state.counters["acked_per_ack"] = tm.events ? double(newly) / tm.events : 0;
  state.counters["lost"] = static_cast<double>(e.c->stats.lost);
}
BENCHMARK(BM_RxAckSack)->UseManualTime();

// An in-order stream of 4 KiB WRITE packets, sprayed over the paths.
struct WriteStream {
  static constexpr int kBatch = 64;
  std::vector<std::vector<uint8_t>> pkts;
  uint32_t psn[kPaths] = {}, dsn = 0, msn = 0, off = 0, k = 0;

  WriteStream()
      : pkts(kBatch,
             std::vector<uint8_t>(MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN + kMss)) {
    for (auto &p : pkts)
      for (uint32_t i = 0; i < kMss; i++)
        p[MROCE_HDR_LEN + MROCE_WRITE_EXT_LEN + i] = static_cast<uint8_t>(i);
  }
  // Re-encode the headers for the next batch (untimed).
  void next(uint64_t now) {
    for (auto &b : pkts) {
      mroce_pkt p{};
      uint16_t path = static_cast<uint16_t>(k++ % kPaths);
      p.hdr.opcode = MROCE_OP_WRITE;
      p.hdr.dst_conn = kOurId;
      p.hdr.src_conn = kPeerId;
      p.hdr.path = path;
      p.hdr.psn = psn[path]++;
      p.hdr.dsn = dsn++;
      p.hdr.ts = static_cast<uint32_t>(now);
      p.hdr.dst_stream = kStream;
      p.hdr.src_stream = kPeerStream;
      p.hdr.msn = msn;
      p.data.va = kVa;
      p.data.rkey = kRkey;
      p.data.offset = off;
      p.data.total = kMsg;
      off += kMss;
      if (off == kMsg) {
        p.hdr.flags = MROCE_F_LAST | MROCE_F_ACK_REQ;
        off = 0;
        msn++;
      }
      mroce_wire_encode(&p, b.data());
    }
  }
};

void rx_write(benchmark::State &state, bool copy) {
  Endpoint e;
  e.glue.copy = copy;
  WriteStream ws;
  Timing tm{copy ? "RxWrite4KCopy" : "RxWrite4K"};
  for (auto _ : state) {
    ws.next(e.now);
    tm.timed(state, WriteStream::kBatch, [&](int i) {
      e.now += kPktNs;
      e.rx(ws.pkts[i].data(), static_cast<uint32_t>(ws.pkts[i].size()));
    });
    e.drain();  // the ACKs owed: measured by BM_TxAck
  }
  if (e.glue.placed != tm.events * kMss) fail("not every packet was placed");
  tm.report(state);
}

void BM_RxWrite4K(benchmark::State &state) { rx_write(state, false); }
BENCHMARK(BM_RxWrite4K)->UseManualTime();

void BM_RxWrite4KCopy(benchmark::State &state) { rx_write(state, true); }
BENCHMARK(BM_RxWrite4KCopy)->UseManualTime();

void BM_TxAck(benchmark::State &state) {
  constexpr int kPer = 16;  // data packets per ACK
  Endpoint e;
  WriteStream ws;
  Timing tm{"TxAck"};
  int left = 0;
  for (auto _ : state) {
    // untimed: 16 packets arrive (4 per path); the last owes an ACK
    for (int i = 0; i < kPer; i++) {
      if (!left) {
        ws.next(e.now);
        left = WriteStream::kBatch;
      }
      auto &b = ws.pkts[WriteStream::kBatch - left--];
      e.now += kPktNs;
      e.rx(b.data(), static_cast<uint32_t>(b.size()));
    }
    tm.timed(state, 1, [&](int) {
      if (mroce_conn_poll_tx(e.c, e.now, e.txbuf, sizeof(e.txbuf), &e.tx) !=
          MROCE_POLL_PACKET)
        fail("no ACK owed");
    });
    e.drain();
  }
  tm.report(state, "ns_per_ack");
  state.counters["ns_per_data_pkt"] = state.counters["ns_per_ack"] / kPer;
}
BENCHMARK(BM_TxAck)->UseManualTime();

void BM_WireDecodeWrite(benchmark::State &state) {
  WriteStream ws;
  ws.next(0);
  const auto &b = ws.pkts[0];
  mroce_pkt p;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &p));
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WireDecodeWrite);

void BM_WireDecodeAck(benchmark::State &state) {
  mroce_pkt a{};
  a.hdr.opcode = MROCE_OP_ACK;
  a.hdr.dst_conn = kOurId;
  a.hdr.src_conn = kPeerId;
  a.ack.npaths = 1;
  a.ack.nstreams = 1;
  std::vector<uint8_t> b(MROCE_HDR_LEN + MROCE_ACK_EXT_LEN +
                         MROCE_ACK_PATH_LEN + MROCE_ACK_STREAM_LEN);
  mroce_wire_encode(&a, b.data());
  mroce_pkt p;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        mroce_wire_decode(b.data(), static_cast<uint32_t>(b.size()), &p));
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_pkt"] = benchmark::Counter(
      static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WireDecodeAck);

}  // namespace

BENCHMARK_MAIN();
