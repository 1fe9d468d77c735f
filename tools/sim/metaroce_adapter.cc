#include "metaroce_adapter.h"

#include "rng.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include <sys/mman.h>

namespace mroce::sim {

namespace {

// A message's WRITE_IMM carries va = (message id << kVaShift) + byte offset
// of its part, so every placement names the message and the offset.
constexpr unsigned kVaShift = 34;
constexpr uint64_t kVaOffsetMask = (1ull << kVaShift) - 1;
// The core takes messages up to 2^31 bytes: larger ones go as parts.
constexpr uint64_t kPartBytes = 1ull << 30;
constexpr unsigned kPartBits = 4;
constexpr uint64_t kMaxParts = 1u << kPartBits;
constexpr uint64_t kShareCookie = ~0ull;
// mroce_conn_next_timer() reports a deadline already past while a window
// blocks the data it paces: re-check at this interval rather than spin.
constexpr uint64_t kRecheckNs = 10'000;
constexpr uint32_t kRkey = 1;
// Preamble + SFD + IFG (20), Ethernet + FCS (18), IPv4 (20), UDP (8).
constexpr uint32_t kWireOverhead = 66;
// A Conn takes the line before its core connection in the arena.
constexpr size_t kConnHead = 64;
// The leading lines of a connection that most core calls touch (its hot
// fields and the timer cache; mroce_conn_prefetch_rx() fetches the same).
constexpr unsigned kConnHotLines = 6;
// Connections and streams of all hosts beyond which the fabric is asked for
// prefetch hints: ~190 connections of 8 paths (the 32-host all-to-all has
// 992, 172 MB; a 16-host ring all-reduce 32, 5.6 MB).
constexpr size_t kPrefetchArenaBytes = size_t{32} << 20;

[[noreturn]] void fatal(const char *what) {
  std::fprintf(stderr, "metaroce-sim: metaroce adapter: %s\n", what);
  std::abort();
}

// Counts core calls; leaving the outermost one runs deferred posts.
struct CoreCall {
  explicit CoreCall(MetaRoceDirectory *d) : dir(d) { ++dir->depth; }
  ~CoreCall() {
    if (--dir->depth == 0 && !dir->deferred.empty())
      dir->drain();
  }
  CoreCall(const CoreCall &) = delete;
  CoreCall &operator=(const CoreCall &) = delete;
  MetaRoceDirectory *dir;
};

} // namespace

struct MetaRoceTransport::Conn {
  MetaRoceTransport *owner = nullptr;
  uint32_t peer = 0;
  // The connection (~170 KB with 8 paths), in the directory's arena.
  mroce_conn *c = nullptr;
  uint64_t armed_ns = 0; // pending timer (0: none)
  bool ready = false;    // in ready_
};

struct MetaRoceTransport::Stream {
  mroce_stream *st = nullptr; // ~42 KB, in the directory's arena
  Conn *conn = nullptr;
  Stream *peer_side = nullptr;
  uint32_t peer = 0;
  uint32_t flow = 0;
  // Receive side: the receives the peer's WRITE_IMMs consume, in rsn order
  // (posted when the peer posts the message, as a collective library
  // pre-posts its receives).
  struct Expect {
    uint64_t cookie;
    uint32_t bytes;
    uint32_t parts;
  };
  std::deque<Expect> expected;
  uint32_t rsn_base = 0;
  // Send side: messages waiting for room in the stream's window.
  std::deque<mroce_msg> backlog;
  bool flush_pending = false;
};

struct MetaRoceTransport::Queued {
  Packet pkt;
  std::vector<uint8_t> ext; // header bytes beyond Packet::header
};

// ---- core callbacks: ctx is the Conn ----

namespace {

using Conn = MetaRoceTransport::Conn;

Conn *conn_of(void *ctx) { return static_cast<Conn *>(ctx); }

mroce_stream *op_lookup(void *ctx, mroce_conn *, u32 id) {
  Conn *k = conn_of(ctx);
  return k->owner->lookup(k, id);
}

MetaRoceTransport::Stream *stream_of(void *ctx, mroce_stream *st) {
  Conn *k = conn_of(ctx);
  MetaRoceTransport::Stream *s = k->owner->stream_by_id(mroce_stream_get_id(st));
  if (!s || s->st != st || s->conn != k)
    fatal("core handed back a stream that is not ours");
  return s;
}

int op_recv_claim(void *ctx, mroce_stream *st, u32 rsn, u32 total, u64 *cookie) {
  auto *s = stream_of(ctx, st);
  const uint32_t idx = rsn - s->rsn_base;
  if (idx >= s->expected.size())
    return MROCE_ERR_RNR;
  *cookie = s->expected[idx].cookie;
  return total == s->expected[idx].bytes ? MROCE_OK : MROCE_ERR_INVALID;
}

int op_place(void *ctx, mroce_stream *, const mroce_place *pl, const void *, u32) {
  if (pl->kind != MROCE_PLACE_WRITE || pl->rkey != kRkey)
    return MROCE_ERR_ACCESS;
  if (static_cast<uint64_t>(pl->offset) + pl->len > pl->total)
    return MROCE_ERR_ACCESS;
  conn_of(ctx)->owner->on_placed(pl);
  return MROCE_OK;
}

int op_read_check(void *, mroce_stream *, u32, u64, u32) {
  return MROCE_ERR_ACCESS; // the workloads never READ
}

int op_atomic(void *, mroce_stream *, const mroce_atomic *, u64 *) {
  return MROCE_ERR_ACCESS; // nor use atomics
}

void op_send_done(void *ctx, mroce_stream *st, u64 cookie, int status) {
  conn_of(ctx)->owner->on_send_done(stream_of(ctx, st), cookie, status);
}

void op_recv_done(void *ctx, mroce_stream *st, const mroce_recv_done *rd) {
  conn_of(ctx)->owner->on_recv_done(stream_of(ctx, st), rd);
}

void op_stream_error(void *ctx, mroce_stream *, int) { conn_of(ctx)->owner->on_stream_error(); }

void op_conn_event(void *ctx, mroce_conn *, int event, u32) {
  conn_of(ctx)->owner->on_conn_event(event);
}

const mroce_ops kOps = {
    .stream_lookup = op_lookup,
    .recv_claim = op_recv_claim,
    .place = op_place,
    .read_check = op_read_check,
    .atomic = op_atomic,
    .send_done = op_send_done,
    .recv_done = op_recv_done,
    .stream_error = op_stream_error,
    .conn_event = op_conn_event,
};

} // namespace

void MetaRoceDirectory::drain() {
  if (draining)
    return;
  draining = true;
  while (!deferred.empty()) {
    const MessageDesc m = deferred.front();
    deferred.pop_front();
    hosts[m.src]->do_post(m);
  }
  draining = false;
}

// ---- memory ----

namespace {
constexpr size_t kArenaBlock = size_t{64} << 20;
} // namespace

MemArena::~MemArena() {
  for (const Block &b : blocks_)
    munmap(b.base, b.size);
}

void *MemArena::alloc(size_t bytes) {
  bytes = (bytes + 63) & ~size_t{63};
  if (static_cast<size_t>(end_ - next_) < bytes) {
    // Fresh pages, zeroed by the kernel when first touched: what no
    // connection touches costs nothing.
    const size_t size = std::max(kArenaBlock, bytes);
    void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      fatal("out of memory for connections");
    blocks_.push_back({static_cast<char *>(p), size});
    next_ = static_cast<char *>(p);
    end_ = next_ + size;
  }
  void *p = next_;
  next_ += bytes;
  used_ += bytes;
  return p;
}

// ---- setup ----

MetaRoceTransport::MetaRoceTransport(TransportEnv &env, const MetaRoceParams &params,
                                     MetaRoceDirectory *dir)
    : env_(env), params_(params), dir_(dir), conn_by_peer_(env.num_hosts(), nullptr),
      port_ctrl_(env.num_ports()), port_data_(env.num_ports()), planes_(env.num_ports()),
      txbuf_(std::max<uint32_t>(kMaxAttachedHeader, MROCE_TX_BUF_MIN)),
      rxbuf_(kMaxAttachedHeader + std::max<uint32_t>(params.mtu, 4096) + 64) {
  mroce_cfg_default(&cfg_);
  cfg_.npaths = params.paths;
  cfg_.mss = params.mtu;
  cfg_.init_cwnd = 16 * params.mtu;
  cfg_.conn_init_cwnd = std::max<uint32_t>(params.init_window, 1) * params.mtu;
  cfg_.conn_max_cwnd = params.paths * MROCE_PATH_WINDOW * params.mtu;
  cfg_.pace_burst = 4 * params.mtu;
  if (params.rto_min)
    cfg_.rto_min_ns = params.rto_min / kNs;
  if (params.rto_init)
    cfg_.rto_init_ns = params.rto_init / kNs;
  if (params.tlp_min)
    cfg_.tlp_min_ns = params.tlp_min / kNs;
  if (params.ack_delay)
    cfg_.ack_delay_ns = params.ack_delay / kNs;
  if (params.dupthresh)
    cfg_.dupthresh = params.dupthresh;
  if (params.health_epoch)
    cfg_.epoch_ns = params.health_epoch / kNs;
  share_ = static_cast<mroce_share *>(dir_->mem.alloc(mroce_share_size()));
  mroce_share_init(share_, share_capacity(), std::max<uint64_t>(params.share_epoch / kNs, 1), 0);
  mroce_share_set_grants(share_, params.grants);
}

MetaRoceTransport::~MetaRoceTransport() {
  for (Conn *k : conns_)
    if (mroce_conn_get_share(k->c))
      mroce_share_leave(k->c);
}

MetaRoceTransport::Conn *MetaRoceTransport::create_conn(uint32_t peer) {
  static_assert(sizeof(Conn) <= kConnHead && alignof(Conn) <= kConnHead &&
                std::is_trivially_destructible_v<Conn>);
  char *mem = static_cast<char *>(dir_->mem.alloc(kConnHead + mroce_conn_size(cfg_.npaths)));
  Conn *k = new (mem) Conn();
  k->owner = this;
  k->peer = peer;
  k->c = reinterpret_cast<mroce_conn *>(mem + kConnHead);
  const auto id = static_cast<uint32_t>(conns_.size() + 1);
  const uint64_t host = env_.host_id();
  const uint64_t nonce = mix64(env_.seed() ^ (host << 20) ^ 0x6e6f6e6365ULL) | 1;
  const uint64_t seed = mix64(env_.seed() ^ (host << 32) ^ peer) | 1;
  if (mroce_conn_init(k->c, &cfg_, &kOps, k, id, nonce, seed, now_ns()))
    fatal("mroce_conn_init refused the configuration");
  if (params_.share_epoch)
    mroce_share_join(share_, k->c);
  conn_by_peer_[peer] = k;
  conns_.push_back(k);
  // Beyond the caches, prefetching the next events' state pays; within,
  // it only costs (~70 instructions an event).
  if (dir_->mem.bytes() >= kPrefetchArenaBytes)
    env_.enable_prefetch();
  return k;
}

MetaRoceTransport::Conn *MetaRoceTransport::conn_to(uint32_t peer) {
  if (Conn *k = conn_by_peer_[peer])
    return k;
  // Both ends at once, out of band; this end opens (CONNECT/ACCEPT).
  Conn *k = create_conn(peer);
  dir_->hosts[peer]->create_conn(env_.host_id());
  {
    CoreCall call(dir_);
    mroce_conn_open(k->c, now_ns());
  }
  after_core(k);
  return k;
}

MetaRoceTransport::Stream *MetaRoceTransport::create_stream(uint32_t peer, uint32_t flow) {
  // Zeroed memory: the core writes only the stream's header, so the pages
  // of its message windows are touched only by the messages it carries.
  auto s = std::make_unique<Stream>();
  s->st = static_cast<mroce_stream *>(dir_->mem.alloc(mroce_stream_size()));
  const auto id = static_cast<uint32_t>(streams_.size() + 1);
  if (id > MROCE_STREAM_MASK)
    fatal("out of stream ids");
  mroce_stream_init_zeroed(s->st, id, s.get());
  s->conn = conn_by_peer_[peer];
  s->peer = peer;
  s->flow = flow;
  stream_by_peer_flow_[(uint64_t{peer} << 32) | flow] = s.get();
  core_streams_.push_back(s->st);
  streams_.push_back(std::move(s));
  return streams_.back().get();
}

MetaRoceTransport::Stream *MetaRoceTransport::stream_to(uint32_t peer, uint32_t flow) {
  if (auto it = stream_by_peer_flow_.find((uint64_t{peer} << 32) | flow);
      it != stream_by_peer_flow_.end())
    return it->second;
  conn_to(peer);
  MetaRoceTransport *other = dir_->hosts[peer];
  Stream *mine = create_stream(peer, flow);
  Stream *theirs = other->create_stream(env_.host_id(), flow);
  mine->peer_side = theirs;
  theirs->peer_side = mine;
  // A QP pair, connected as rdma_cm would: each side's sq_psn is the
  // other's rq_psn.
  mroce_stream_params a{};
  a.mss = params_.mtu;
  const uint32_t mine_id = mroce_stream_get_id(mine->st);
  const uint32_t theirs_id = mroce_stream_get_id(theirs->st);
  a.tx_msn = 0x100000 + mine_id;
  a.rx_msn = 0x200000 + theirs_id;
  a.max_rd_atomic = 16;
  a.rnr_retry = 7;
  a.retry_cnt = 7;
  a.rnr_delay_ns = 100'000;
  a.min_rnr_ns = 100'000;
  mroce_stream_params b = a;
  b.tx_msn = a.rx_msn;
  b.rx_msn = a.tx_msn;
  {
    CoreCall call(dir_);
    if (mroce_stream_attach(mine->conn->c, mine->st, theirs_id, &a) ||
        mroce_stream_attach(theirs->conn->c, theirs->st, mine_id, &b))
      fatal("mroce_stream_attach failed");
  }
  return mine;
}

// ---- posting ----

void MetaRoceTransport::post(const MessageDesc &m) {
  // Posting may happen inside a completion callback of the core (the
  // workload reacts to a delivery): queue it until the core call returns.
  dir_->deferred.push_back(m);
  if (dir_->depth == 0)
    dir_->drain();
}

void MetaRoceTransport::do_post(const MessageDesc &m) {
  const uint64_t parts = (m.bytes + kPartBytes - 1) / kPartBytes;
  if (m.bytes == 0 || parts > kMaxParts || m.dst == env_.host_id() || m.dst >= env_.num_hosts() ||
      (m.id >> (64 - kVaShift)) != 0) {
    ++env_.stats().rejected_packets; // nothing the workloads ever ask for
    return;
  }
  Stream *s = stream_to(m.dst, m.flow);
  if (parts > 1)
    parts_sent_[m.id] = static_cast<uint32_t>(parts);
  for (uint64_t i = 0; i < parts; ++i) {
    const uint64_t base = i * kPartBytes;
    mroce_msg mm{};
    mm.cookie = (m.id << kPartBits) | i;
    mm.va = (m.id << kVaShift) | base;
    mm.rkey = kRkey;
    mm.len = static_cast<uint32_t>(std::min(kPartBytes, m.bytes - base));
    mm.op = MROCE_OP_WRITE_IMM;
    s->backlog.push_back(mm);
    s->peer_side->expected.push_back({mm.cookie, mm.len, static_cast<uint32_t>(parts)});
  }
  flush(s);
}

void MetaRoceTransport::flush(Stream *s) {
  s->flush_pending = false;
  while (!s->backlog.empty() && mroce_stream_can_post(s->st)) {
    int rc;
    {
      CoreCall call(dir_);
      rc = mroce_stream_post(s->st, &s->backlog.front(), now_ns());
    }
    if (rc == MROCE_ERR_AGAIN)
      break;
    if (rc != 0)
      ++env_.stats().rejected_packets;
    s->backlog.pop_front();
  }
  arm(s->conn);
  make_ready(s->conn);
}

// ---- callbacks ----

const mroce_conn &MetaRoceTransport::connection(uint32_t i) const { return *conns_[i]->c; }

MetaRoceTransport::Stream *MetaRoceTransport::stream_by_id(uint32_t id) {
  return id == 0 || id > streams_.size() ? nullptr : streams_[id - 1].get();
}

mroce_stream *MetaRoceTransport::lookup(Conn *k, uint32_t id) {
  if (id == 0 || id > streams_.size())
    return nullptr;
  Stream *s = streams_[id - 1].get();
  return s->conn == k ? s->st : nullptr;
}

void MetaRoceTransport::on_placed(const mroce_place *pl) {
  const uint64_t msg = pl->va >> kVaShift;
  env_.placed(msg, (pl->va & kVaOffsetMask) + pl->offset, pl->len);
}

void MetaRoceTransport::on_send_done(Stream *s, uint64_t cookie, int status) {
  const uint64_t msg = cookie >> kPartBits;
  if (!s->backlog.empty() && !s->flush_pending) {
    s->flush_pending = true; // post once the core call has returned
    pending_flush_.push_back(s);
  }
  if (status != MROCE_OK)
    return; // the stream error is counted; the message never completes
  if (auto it = parts_sent_.find(msg); it != parts_sent_.end()) {
    if (--it->second)
      return;
    parts_sent_.erase(it);
  }
  env_.send_complete(msg);
}

void MetaRoceTransport::on_recv_done(Stream *s, const mroce_recv_done *rd) {
  if (s->expected.empty() || s->expected.front().cookie != rd->cookie) {
    ++env_.stats().rejected_packets;
    return;
  }
  const uint32_t parts = s->expected.front().parts;
  s->expected.pop_front();
  ++s->rsn_base;
  if (rd->status != MROCE_OK)
    return;
  const uint64_t msg = rd->cookie >> kPartBits;
  if (parts > 1) {
    auto &n = parts_received_[msg];
    if (++n < parts)
      return;
    parts_received_.erase(msg);
  }
  env_.delivered(msg);
}

void MetaRoceTransport::on_stream_error() { ++env_.stats().failed_qps; }

void MetaRoceTransport::on_conn_event(int event) {
  if (event == MROCE_EV_FAILED)
    ++env_.stats().failed_connections;
}

// ---- driving the core ----

void MetaRoceTransport::make_ready(Conn *k) {
  if (!k->ready) {
    k->ready = true;
    ready_.push_back(k);
  }
  env_.tx_ready(kAllPorts);
}

void MetaRoceTransport::arm(Conn *k, bool timer_ran) {
  uint64_t at = mroce_conn_next_timer(k->c);
  if (!at)
    return;
  const uint64_t now = now_ns();
  if (at <= now) {
    if (timer_ran) {
      // mroce_conn_on_timer() has just run, so what is still due is work
      // only poll_tx releases (pacing, an ACK), or work blocked until new
      // input (a full window).  The connection is ready for the NIC; look
      // again later for deadlines the due one hides.
      make_ready(k);
      at = now + kRecheckNs;
    } else {
      at = now + 1; // something may be due that only on_timer runs
    }
  }
  // An earlier timer is pending: it re-arms when it fires.
  if (k->armed_ns && k->armed_ns <= at && k->armed_ns > now)
    return;
  k->armed_ns = at;
  env_.set_timer(at * kNs, static_cast<uint64_t>(mroce_conn_get_id(k->c) - 1));
}

SenderState MetaRoceTransport::sender_state(const mroce_conn &c) const {
  SenderState s;
  mroce_conn_info ci;
  mroce_conn_get_info(&c, &ci);
  const uint32_t mss = ci.tx_mss ? ci.tx_mss : params_.mtu;
  if (ci.rate_hint != MROCE_RATE_NONE)
    s.hint = ci.rate_hint;
  // The pacer spaces packets by (payload + MROCE_HDR_LEN) / hint (tx.c),
  // unless the hint is at or above cfg.line_rate.
  if (ci.hint_paced)
    s.pace_Bps = uint64_t{ci.rate_hint} * 1000 * mss / (mss + MROCE_HDR_LEN);
  uint64_t sum = 0, n = 0;
  mroce_path_info pi;
  for (uint32_t i = 0; i < ci.npaths && mroce_conn_get_path_info(&c, i, &pi); ++i)
    if (pi.srtt_ns) {
      sum += pi.srtt_ns;
      ++n;
    }
  s.srtt_ns = n ? sum / n : 0;
  s.cwnd = ci.cwnd;
  s.inflight = ci.inflight;
  s.window_Bps = s.srtt_ns ? s.cwnd * 1000000000ull / s.srtt_ns : 0;
  mroce_conn_stats cs;
  mroce_conn_get_stats(&c, &cs);
  s.acks = cs.rx_acks;
  return s;
}

void MetaRoceTransport::after_core(Conn *k, bool timer_ran) {
  if (trace_)
    trace_->state(env_.now(), env_.host_id(), k->peer, sender_state(*k->c));
  while (!pending_flush_.empty()) {
    Stream *s = pending_flush_.back();
    pending_flush_.pop_back();
    flush(s);
  }
  arm(k, timer_ran);
  make_ready(k);
}

uint64_t MetaRoceTransport::share_capacity() const {
  // The receiver's inbound capacity of the ports that are up, in what the
  // share measures: payload bytes per second.  The line rate would promise
  // the senders ~3% more than the link delivers (Ethernet, IP, UDP and
  // MetaRoCE headers); the excess builds a standing queue whose ECN marks
  // keep the windows, not the hints, in charge, and the incast never settles.
  uint64_t capacity = 0;
  for (uint32_t p = 0; p < env_.num_ports(); ++p)
    if (env_.port_up(p))
      capacity += env_.port_rate_bps(p) / 8;
  capacity = capacity * params_.mtu / (params_.mtu + kWireOverhead + MROCE_MAX_HDR_LEN);
  return params_.share_epoch ? capacity : 0;
}

void MetaRoceTransport::arm_share() {
  // (Re)start the epoch clock when data starts arriving after a lull.
  mroce_share_set_inbound(share_, share_capacity());
  mroce_share_epoch(share_, now_ns());
  share_armed_ = true;
  env_.set_timer(mroce_share_deadline(share_) * kNs, kShareCookie);
}

void MetaRoceTransport::on_timer(uint64_t cookie) {
  const uint64_t now = now_ns();
  if (cookie == kShareCookie) {
    mroce_share_set_inbound(share_, share_capacity());
    mroce_share_epoch(share_, now);
    uint64_t seen = 0;
    bool busy = false;
    for (Conn *k : conns_) {
      seen += mroce_conn_get_rx_data_bytes(k->c);
      busy |= mroce_conn_get_state(k->c) == MROCE_CONN_ESTABLISHED && mroce_conn_busy(k->c);
    }
    // Keep the epoch running while anything moves, so an idle simulation
    // drains its event queue.
    if (seen != share_seen_ || busy) {
      share_seen_ = seen;
      env_.set_timer(mroce_share_deadline(share_) * kNs, kShareCookie);
    } else {
      share_armed_ = false;
    }
    return;
  }
  if (cookie >= conns_.size())
    return;
  Conn *k = conns_[cookie];
  if (k->armed_ns != now)
    return; // superseded
  k->armed_ns = 0;
  {
    CoreCall call(dir_);
    mroce_conn_on_timer(k->c, now);
  }
  after_core(k, true);
}

void MetaRoceTransport::on_packet(uint32_t, const Packet &pkt) {
  const uint8_t *hdr = pkt.header;
  uint32_t hlen = pkt.header_len;
  if (pkt.attachment != kNoAttachment) {
    hdr = env_.attached_header(pkt);
    hlen = pkt.attachment_len;
  }
  const uint64_t len = uint64_t{hlen} + pkt.payload_bytes;
  if (len > rxbuf_.size()) {
    ++env_.stats().rejected_packets;
    return;
  }
  // The decoder sees the packet's real length; the payload itself is not
  // simulated (placement is reported, not copied), so it reads as zeros.
  std::memcpy(rxbuf_.data(), hdr, hlen);
  mroce_pkt dp;
  if (mroce_wire_decode(rxbuf_.data(), static_cast<uint32_t>(len), &dp) != MROCE_OK) {
    ++env_.stats().rejected_packets;
    return;
  }
  const uint32_t from = address_host(pkt.tuple.src_ip);
  Conn *k = nullptr;
  if (dp.hdr.opcode == MROCE_OP_CONNECT)
    k = from < conn_by_peer_.size() ? conn_by_peer_[from] : nullptr;
  else if (dp.hdr.dst_conn >= 1 && dp.hdr.dst_conn <= conns_.size())
    k = conns_[dp.hdr.dst_conn - 1];
  if (!k || k->peer != from) {
    ++env_.stats().rejected_packets;
    return;
  }
  // A grant counts the connection as a sender from its CONNECT: start the
  // epoch clock first, or its first tick would forget the count.
  if (dp.hdr.opcode == MROCE_OP_CONNECT && params_.grants && params_.share_epoch && !share_armed_)
    arm_share();
  const mroce_rx_meta meta{rxbuf_.data(), static_cast<u8>(pkt.ecn == kCe)};
  {
    CoreCall call(dir_);
    mroce_conn_rx(k->c, &dp, rxbuf_.data(), &meta, now_ns());
  }
  after_core(k);
  if (pkt.payload_bytes && params_.share_epoch && !share_armed_)
    arm_share();
}

uint32_t MetaRoceTransport::plane_of(uint32_t path) const {
  // Paths are spread over the planes.  The paths of a plane whose port is
  // down are spread over the planes that are up; the others stay put.
  const uint32_t planes = planes_;
  if (planes == 1)
    return 0; // up or not, the only port
  const uint32_t home = path % planes;
  if (env_.port_up(home))
    return home;
  uint32_t up[256], n = 0;
  for (uint32_t p = 0; p < planes; ++p)
    if (env_.port_up(p))
      up[n++] = p;
  return n ? up[(path / planes) % n] : home;
}

void MetaRoceTransport::build(Conn *k, const mroce_tx &tx, uint32_t plane, Packet &out) {
  out.tuple.src_ip = host_address(env_.host_id(), plane);
  out.tuple.dst_ip = host_address(k->peer, plane);
  out.tuple.src_port = tx.sport;
  out.tuple.dst_port = MROCE_UDP_PORT;
  out.tuple.proto = kIpProtoUdp;
  out.payload_bytes = tx.len;
  out.wire_bytes = kWireOverhead + tx.hdr_len + tx.len;
  if (mroce_op_sequenced(tx.opcode)) {
    out.tclass = kClassData;
    out.ecn = tx.ect ? kEct0 : kNotEct;
  } else {
    out.tclass = kClassControl;
    out.ecn = kNotEct;
  }
}

TxResult MetaRoceTransport::poll_tx(uint32_t port, bool data_allowed, Packet &out) {
  auto take = [&](std::deque<Queued> &q) {
    Queued &e = q.front();
    out = e.pkt;
    if (!e.ext.empty())
      std::memcpy(env_.attach_header(out, static_cast<uint32_t>(e.ext.size())), e.ext.data(),
                  e.ext.size());
    q.pop_front();
    return TxResult{TxStatus::kPacket, 0};
  };
  if (!port_ctrl_[port].empty())
    return take(port_ctrl_[port]);
  if (data_allowed && !port_data_[port].empty())
    return take(port_data_[port]);

  // Ask connections, round robin, until one produces a packet for this
  // port.  Packets for other ports wait in their queues (the NIC's rings).
  const uint32_t planes = planes_;
  const uint32_t cap = std::min<uint32_t>(std::max<uint32_t>(params_.mtu, MROCE_TX_BUF_MIN),
                                          static_cast<uint32_t>(txbuf_.size()));
  for (uint32_t budget = 4 * planes + 4; budget && !ready_.empty(); --budget) {
    Conn *k = ready_.front();
    ready_.pop_front();
    k->ready = false;
    mroce_tx tx{};
    enum mroce_poll r;
    {
      CoreCall call(dir_);
      r = mroce_conn_poll_tx(k->c, now_ns(), txbuf_.data(), cap, &tx);
    }
    if (r != MROCE_POLL_PACKET) {
      arm(k); // idle until new input, or paced until its timer
      continue;
    }
    k->ready = true;
    ready_.push_back(k);
    if (trace_ && tx.len)
      trace_->departure(env_.now(), env_.host_id(), k->peer, tx.len, sender_state(*k->c));
    if (tx.retx) {
      ++env_.stats().packets_retransmitted;
      env_.stats().bytes_retransmitted += tx.len;
    }
    if (tx.hdr_len > cap)
      fatal("core wrote past the transmit buffer");
    const uint32_t plane = plane_of(tx.path);
    const bool sequenced = mroce_op_sequenced(tx.opcode);
    if (plane == port && (data_allowed || !sequenced)) {
      build(k, tx, plane, out);
      if (tx.hdr_len <= kMaxHeader) {
        std::memcpy(out.header, txbuf_.data(), tx.hdr_len);
        out.header_len = static_cast<uint8_t>(tx.hdr_len);
      } else {
        std::memcpy(env_.attach_header(out, tx.hdr_len), txbuf_.data(), tx.hdr_len);
        out.header_len = 0;
      }
      arm(k);
      return {TxStatus::kPacket, 0};
    }
    Queued q;
    build(k, tx, plane, q.pkt);
    if (tx.hdr_len <= kMaxHeader) {
      std::memcpy(q.pkt.header, txbuf_.data(), tx.hdr_len);
      q.pkt.header_len = static_cast<uint8_t>(tx.hdr_len);
    } else {
      q.ext.assign(txbuf_.begin(), txbuf_.begin() + tx.hdr_len);
      q.pkt.header_len = 0;
    }
    (sequenced ? port_data_ : port_ctrl_)[plane].push_back(std::move(q));
    arm(k);
    env_.tx_ready(plane);
  }
  if (!port_ctrl_[port].empty())
    return take(port_ctrl_[port]);
  if (data_allowed && !port_data_[port].empty())
    return take(port_data_[port]);
  if (!ready_.empty())
    env_.tx_ready(port); // budget spent: come back for more
  return {TxStatus::kIdle, kNever};
}

// ---- prefetch hints ----

namespace {

// The count is a constant: unrolled, a hint is its prefetches and nothing
// else (the loop took two instructions per line).
template <unsigned Lines> void prefetch_lines(const void *p) {
#pragma GCC unroll 8
  for (unsigned i = 0; i < Lines; ++i)
    __builtin_prefetch(static_cast<const char *>(p) + 64 * i);
}

} // namespace

// What mroce_conn_rx() and the adapter around it touch first: the Conn,
// what the core names (mroce_conn_prefetch_rx()) and, for data, the
// stream.  Only the packet's header is read.
void MetaRoceTransport::prefetch_packet(const Packet &pkt) const {
  const uint8_t *h = pkt.header;
  uint32_t hlen = pkt.header_len;
  if (pkt.attachment != kNoAttachment) {
    h = env_.attached_header(pkt);
    hlen = pkt.attachment_len;
  }
  const uint32_t id = mroce_wire_dst_conn(h, hlen) - 1;
  if (id >= conns_.size())
    return;
  const Conn *k = conns_[id];
  const auto *c = reinterpret_cast<const mroce_conn *>(reinterpret_cast<const char *>(k) +
                                                       kConnHead); // k->c, unread
  __builtin_prefetch(k);
  const uint32_t sid = mroce_conn_prefetch_rx(c, params_.paths, h, hlen) - 1;
  if (sid < core_streams_.size()) {
    __builtin_prefetch(streams_[sid].get());
    mroce_stream_prefetch_rx(core_streams_[sid], h, hlen);
  }
}

// Two events ahead the Conn; one ahead, if the timer is not superseded,
// the connection's leading lines.
void MetaRoceTransport::prefetch_timer(uint64_t cookie, Time at, bool near) const {
  if (cookie >= conns_.size())
    return;
  const Conn *k = conns_[cookie];
  if (!near)
    __builtin_prefetch(k);
  else if (k->armed_ns == at / kNs)
    prefetch_lines<kConnHotLines>(reinterpret_cast<const char *>(k) + kConnHead);
}

// The connection poll_tx() will ask first, two events ahead (reading its
// round robin one event ahead to prefetch the path waited for the line).
void MetaRoceTransport::prefetch_poll() const {
  if (!ready_.empty())
    prefetch_lines<1 + kConnHotLines>(ready_.front());
}

void MetaRoceTransport::report(TransportCounters &t) const {
  for (const Conn *k : conns_) {
    mroce_conn_stats s;
    mroce_conn_get_stats(k->c, &s);
    t.timeouts += s.rtos;
    t.tail_loss_probes += s.tlps;
    t.paths_replaced += s.path_replaced;
    t.spurious_retransmissions += s.spurious;
    t.duplicates_received += s.rx_dup_dsn;
    t.acks_sent += s.tx_acks;
    t.rejected_packets +=
        s.rx_drop_state + s.rx_drop_path + s.rx_drop_msn + s.rx_drop_stream + s.rx_drop_ack;
    t.window_dropped += s.rx_drop_psn + s.rx_drop_dsn;
  }
}

} // namespace mroce::sim
