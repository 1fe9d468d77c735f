// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "harness.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "timer_ref.h"

namespace mroce::test {
namespace {

constexpr uint32_t kWireOverhead = 14 + 20 + 8;  // Ethernet + IPv4 + UDP

// The core hands us its stream; find the QP that embeds it.
std::unordered_map<const mroce_stream *, Qp *> &owner() {
  static std::unordered_map<const mroce_stream *, Qp *> m;
  return m;
}

Qp *qp_of(mroce_stream *st) { return owner().at(st); }
Endpoint *ep_of(void *ctx) { return static_cast<Endpoint *>(ctx); }

mroce_stream *op_lookup(void *ctx, mroce_conn *, uint32_t id) {
  auto &qps = ep_of(ctx)->qps;
  auto it = qps.find(id);
  return it == qps.end() ? nullptr : &it->second->st;
}

int op_claim(void *, mroce_stream *st, uint32_t rsn, uint32_t total,
             uint64_t *cookie) {
  Qp *q = qp_of(st);
  if (q->srq) {
    if (q->rq.empty()) return MROCE_ERR_RNR;
    RecvWr r = std::move(q->rq.front());
    q->rq.pop_front();
    *cookie = r.cookie;
    q->claimed.emplace(r.cookie, std::move(r));
    return MROCE_OK;
  }
  // As kernel/rq.c: any receive is claimed; placement refuses a SEND
  // too long for it.
  uint32_t idx = rsn - q->rq_base;
  if (idx >= q->rq.size()) return MROCE_ERR_RNR;
  *cookie = q->rq[idx].cookie;
  return MROCE_OK;
}

RecvWr *find_recv(Qp *q, uint64_t cookie) {
  if (q->srq) {
    auto it = q->claimed.find(cookie);
    return it == q->claimed.end() ? nullptr : &it->second;
  }
  for (auto &r : q->rq)
    if (r.cookie == cookie) return &r;
  return nullptr;
}

int op_place(void *ctx, mroce_stream *st, const mroce_place *pl,
             const void *pctx, uint32_t off) {
  Endpoint *e = ep_of(ctx);
  Qp *q = qp_of(st);
  const uint8_t *src = static_cast<const uint8_t *>(pctx) + off;
  e->place_calls++;
  e->place_bytes += pl->len;
  switch (pl->kind) {
    case MROCE_PLACE_WRITE: {
      auto it = e->regions.find(pl->rkey);
      if (it == e->regions.end() || !it->second.remote_write)
        return MROCE_ERR_ACCESS;
      Region &r = it->second;
      if (pl->va < r.va || pl->va + pl->total > r.va + r.mem.size())
        return MROCE_ERR_ACCESS;
      size_t at = pl->va - r.va + pl->offset;
      std::memcpy(&r.mem[at], src, pl->len);
      if (!r.placed.empty())
        for (uint32_t i = 0; i < pl->len; i++) r.placed[at + i]++;
      return MROCE_OK;
    }
    case MROCE_PLACE_SEND: {
      RecvWr *r = find_recv(q, pl->cookie);
      if (!r) return MROCE_ERR_OPERR;
      if (pl->total > r->len) return MROCE_ERR_OPERR;  // as kernel/rq.c
      std::memcpy(r->buf + pl->offset, src, pl->len);
      if (r->placed.size() < r->len) r->placed.resize(r->len);
      for (uint32_t i = 0; i < pl->len; i++) r->placed[pl->offset + i]++;
      return MROCE_OK;
    }
    case MROCE_PLACE_READ_RESP: {
      auto it = q->sends.find(pl->cookie);
      if (it == q->sends.end() || pl->offset + pl->len > it->second.read_len)
        return MROCE_ERR_ACCESS;
      std::memcpy(it->second.read_dst + pl->offset, src, pl->len);
      return MROCE_OK;
    }
    case MROCE_PLACE_ATOMIC_RESP: {
      auto it = q->sends.find(pl->cookie);
      if (it == q->sends.end() || it->second.read_len < 8)
        return MROCE_ERR_ACCESS;
      std::memcpy(it->second.read_dst, &pl->value, 8);
      return MROCE_OK;
    }
  }
  return MROCE_ERR_INVALID;
}

int op_read_check(void *ctx, mroce_stream *, uint32_t rkey, uint64_t va,
                  uint32_t len) {
  Endpoint *e = ep_of(ctx);
  auto it = e->regions.find(rkey);
  if (it == e->regions.end() || !it->second.remote_read)
    return MROCE_ERR_ACCESS;
  const Region &r = it->second;
  if (va < r.va || va + len > r.va + r.mem.size()) return MROCE_ERR_ACCESS;
  return MROCE_OK;
}

int op_atomic(void *ctx, mroce_stream *, const mroce_atomic *a,
              uint64_t *orig) {
  Endpoint *e = ep_of(ctx);
  auto it = e->regions.find(a->rkey);
  if (it == e->regions.end() || !it->second.remote_atomic)
    return MROCE_ERR_ACCESS;
  Region &r = it->second;
  if (a->va < r.va || a->va + 8 > r.va + r.mem.size()) return MROCE_ERR_ACCESS;
  uint64_t v;
  std::memcpy(&v, &r.mem[a->va - r.va], 8);
  *orig = v;
  if (a->op == MROCE_OP_CMP_SWAP) {
    if (v == a->compare) v = a->swap_add;
  } else {
    v += a->swap_add;
  }
  std::memcpy(&r.mem[a->va - r.va], &v, 8);
  return MROCE_OK;
}

void op_send_done(void *, mroce_stream *st, uint64_t cookie, int status) {
  Qp *q = qp_of(st);
  Completion c{cookie, status};
  auto it = q->sends.find(cookie);
  if (it != q->sends.end()) {
    c.op = it->second.msg.op;
    c.byte_len = it->second.msg.len;
    q->sends.erase(it);
  }
  q->scq.push_back(c);
}

void op_recv_done(void *, mroce_stream *st, const mroce_recv_done *rd) {
  Qp *q = qp_of(st);
  q->rcq.push_back({rd->cookie, rd->status, rd->byte_len, rd->imm, rd->op});
  if (q->srq) {
    q->claimed.erase(rd->cookie);
    return;
  }
  if (!q->rq.empty() && q->rq.front().cookie == rd->cookie) {
    q->rq.pop_front();
    q->rq_base++;
  } else {
    throw std::logic_error("receive completed out of order");
  }
}

void op_stream_error(void *, mroce_stream *st, int status) {
  qp_of(st)->error = status;
}

void op_conn_event(void *ctx, mroce_conn *, int ev, uint32_t) {
  ep_of(ctx)->events.push_back(ev);
}

const mroce_ops kOps = {
    .stream_lookup = op_lookup,
    .recv_claim = op_claim,
    .place = op_place,
    .read_check = op_read_check,
    .atomic = op_atomic,
    .send_done = op_send_done,
    .recv_done = op_recv_done,
    .stream_error = op_stream_error,
    .conn_event = op_conn_event,
};

}  // namespace

mroce_cfg test_cfg(uint32_t npaths, uint32_t mss) {
  mroce_cfg c;
  mroce_cfg_default(&c);
  c.npaths = npaths;
  c.mss = mss;
  c.init_cwnd = 16 * mss;
  c.conn_init_cwnd = 64 * mss;
  c.conn_max_cwnd = npaths * MROCE_PATH_WINDOW * mss;
  c.pace_burst = 4 * mss;
  c.rto_init_ns = 1'000'000;
  c.rto_min_ns = 200'000;
  c.tlp_min_ns = 50'000;
  c.ack_delay_ns = 5'000;
  c.probe_interval_ns = 500'000;
  c.epoch_ns = 2'000'000;
  c.dead_ns = 200'000'000;
  return c;
}

Endpoint::Endpoint(Fabric *f, int i, const mroce_cfg &cfg, uint64_t seed)
    : fab(f), idx(i), mem(mroce_conn_size(cfg.npaths)) {
  conn = reinterpret_cast<mroce_conn *>(mem.data());
  if (mroce_conn_init(conn, &cfg, &kOps, this, 100 + i, 0x1000 + i, seed,
                      f->now))
    throw std::invalid_argument("mroce_conn_init refused the config");
  cookie_key = {0xc00c1e0000000000ull + static_cast<uint64_t>(i), seed};
}

Endpoint::~Endpoint() {
  for (auto &[id, q] : qps) owner().erase(&q->st);
}

Qp &Endpoint::add_qp(uint32_t id) {
  auto q = std::make_unique<Qp>();
  q->ep = this;
  mroce_stream_init(&q->st, id, q.get());
  owner()[&q->st] = q.get();
  Qp &ref = *q;
  qps[id] = std::move(q);
  return ref;
}

uint32_t Endpoint::add_region(uint64_t va, size_t len) {
  uint32_t rkey = 0x100 + static_cast<uint32_t>(regions.size());
  Region r;
  r.va = va;
  r.mem.assign(len, 0);
  regions.emplace(rkey, std::move(r));
  return rkey;
}

void Endpoint::post_recv(Qp &q, uint64_t cookie, uint8_t *buf, uint32_t len) {
  q.rq.push_back(RecvWr{cookie, buf, len, {}});
}

int Endpoint::post_send(Qp &q, SendWr wr) {
  uint64_t cookie = wr.msg.cookie;
  auto [it, fresh] = q.sends.emplace(cookie, std::move(wr));
  if (!fresh) return MROCE_ERR_INVAL;
  int rc = mroce_stream_post(&q.st, &it->second.msg, fab->now);
  if (rc) q.sends.erase(it);
  return rc;
}

int Endpoint::ring(Qp &q, SendWr wr) {
  int rc = post_send(q, std::move(wr));
  if (rc == 0) drain(fab->now);
  return rc;
}

void Endpoint::drain(uint64_t now) {
  uint8_t buf[2048];
  mroce_tx tx;
  for (;;) {
    enum mroce_poll r = mroce_conn_poll_tx(conn, now, buf, sizeof(buf), &tx);
    if (r != MROCE_POLL_PACKET) break;
    // the module sends ACKs outside the ordered queue on this field alone
    if (tx.hdr_len < 2 || tx.opcode != buf[1]) {
      std::fprintf(stderr, "tx.opcode %u, header says %u\n", tx.opcode,
                   tx.hdr_len < 2 ? 0u : buf[1]);
      std::abort();
    }
    std::vector<uint8_t> pkt(buf, buf + tx.hdr_len);
    if (tx.src == MROCE_SRC_SQ) {
      Qp *q = qp_of(tx.st);
      const SendWr &w = q->sends.at(tx.cookie);
      pkt.insert(pkt.end(), w.data.begin() + tx.offset,
                 w.data.begin() + tx.offset + tx.len);
    } else if (tx.src == MROCE_SRC_READ) {
      const Region &r = regions.at(tx.rkey);
      const uint8_t *p = &r.mem[tx.va - r.va + tx.offset];
      pkt.insert(pkt.end(), p, p + tx.len);
    }
    pkts_out++;
    if (tap) tap(*this, pkt.data(), static_cast<uint32_t>(pkt.size()));
    if (drop && drop(*this, pkt.data(), static_cast<uint32_t>(pkt.size())))
      continue;
    fab->send(idx, tx.sport, pkt.data(), static_cast<uint32_t>(pkt.size()),
              tx.ect);
  }
  uint64_t at = mroce_conn_next_timer(conn);
  // the optimised scan must agree with the plain one, in every state
  if (at != mroce_next_timer_ref(conn)) {
    std::fprintf(stderr, "next_timer %llu, reference %llu\n",
                 static_cast<unsigned long long>(at),
                 static_cast<unsigned long long>(mroce_next_timer_ref(conn)));
    std::abort();
  }
  if (share_on) {
    uint64_t s = mroce_share_deadline(&share);
    at = at ? std::min(at, s) : s;
  }
  if (at) fab->arm(idx, std::max(at, now + 1));
}

Endpoint &Fabric::add_endpoint(const mroce_cfg &cfg) {
  eps.push_back(std::make_unique<Endpoint>(this, static_cast<int>(eps.size()),
                                           cfg, rng()));
  return *eps.back();
}

size_t Fabric::route_of(int dir, uint16_t sport) const {
  uint32_t h = sport * 2654435761u;
  h ^= h >> 15;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return h % routes[dir].size();
}

void Fabric::send(int from, uint16_t sport, const uint8_t *buf, uint32_t len,
                  bool ect) {
  Route &r = routes[from][route_of(from, sport)];
  std::uniform_real_distribution<double> u(0, 1);
  bool data = len > 1 && mroce_op_sequenced(buf[1]);
  r.sent++;
  r.data_sent += data;
  if (!r.up || (r.loss > 0 && u(rng) < r.loss)) {
    r.dropped++;
    r.data_dropped += data;
    return;
  }
  uint64_t wire = len + kWireOverhead;
  uint64_t start = std::max(now, r.busy_until);
  uint64_t backlog = 0;
  if (r.gbps > 0 && r.busy_until > now)
    backlog = static_cast<uint64_t>((r.busy_until - now) * r.gbps / 8);
  if (r.queue_bytes && backlog + wire > r.queue_bytes) {
    r.dropped++;
    r.data_dropped += data;
    return;
  }
  bool ce = ect && r.ecn_bytes && backlog > r.ecn_bytes;
  if (ce) r.marked++;
  uint64_t depart = start;
  if (r.gbps > 0) depart += static_cast<uint64_t>(wire * 8 / r.gbps);
  r.busy_until = depart;
  uint64_t at = depart + r.delay_ns;
  if (r.jitter_ns) at += rng() % r.jitter_ns;
  if (r.lane_delay_ns) {
    if (!r.lane_left) {
      r.lane_slow = rng() % 2;
      r.lane_left = r.lane_run;
    }
    r.lane_left--;
    if (r.lane_slow) at += r.lane_delay_ns;
  }
  if (at < r.last_arrival) r.reordered++;
  r.last_arrival = std::max(r.last_arrival, at);
  auto p = std::make_shared<Packet>(Packet{1 - from, {buf, buf + len}, ce});
  q.push(Ev{at, seq++, 0, 1 - from, p});
  if (r.dup > 0 && u(rng) < r.dup) {
    r.duplicated++;
    uint64_t lag = r.dup_late_ns ? 1000 + rng() % r.dup_late_ns : 1000;
    q.push(Ev{at + lag, seq++, 0, 1 - from, p});
  }
}

void Fabric::arm(int e, uint64_t at) {
  Endpoint &x = ep(e);
  if (x.armed && x.armed <= at && x.armed > now) return;
  x.armed = at;
  q.push(Ev{at, seq++, 1, e, nullptr});
}

bool Fabric::step() {
  if (q.empty()) return false;
  Ev ev = q.top();
  q.pop();
  now = std::max(now, ev.at);
  events++;
  Endpoint &e = ep(ev.ep);
  if (ev.kind == 1) {
    if (e.armed != ev.at) return true;  // superseded
    e.armed = 0;
    if (e.share_on && mroce_share_deadline(&e.share) <= now)
      mroce_share_epoch(&e.share, now);
    mroce_conn_on_timer(e.conn, now);
    e.drain(now);
    return true;
  }
  const Packet &p = *ev.pkt;
  const uint32_t len = static_cast<uint32_t>(p.bytes.size());
  mroce_pkt pkt;
  // as the module: the core sees the head, placement the whole datagram
  std::vector<uint8_t> head = pull_head(p.bytes.data(), len, 0);
  if (mroce_wire_decode_head(head.data(), static_cast<uint32_t>(head.size()),
                             len, &pkt) != MROCE_OK) {
    e.rx_bad++;
    return true;
  }
  if (pkt.hdr.opcode == MROCE_OP_CONNECT) {
    const auto from = Endpoint::addr(1 - e.idx);
    if (!mroce_cookie_valid(&e.cookie_key, from.data(), &pkt, now)) {
      uint8_t buf[MROCE_HDR_LEN + MROCE_CHALLENGE_EXT_LEN];
      uint32_t n = mroce_cookie_challenge(&e.cookie_key, from.data(), &pkt,
                                          now, buf);
      send(e.idx, 4797, buf, n, false);
      e.cookie_challenges++;
      return true;
    }
  }
  if (pkt.hdr.opcode != MROCE_OP_CONNECT && pkt.hdr.dst_conn != e.conn->id) {
    uint8_t buf[128];
    uint32_t n = mroce_reset_reply(&pkt, MROCE_RESET_UNKNOWN_CONN, buf);
    if (n) send(e.idx, 4797, buf, n, false);
    e.rx_bad++;
    return true;
  }
  rx_split += head.size() < len;
  e.receive(pkt, head.data(), p.ce, now, p.bytes.data());
  return true;
}

// As the module's mroce_rx() does it: the packet, then what it lets out.
void Endpoint::receive(const mroce_pkt &pkt, const uint8_t *bytes, bool ce,
                       uint64_t now, const uint8_t *whole) {
  mroce_rx_meta m{whole ? whole : bytes, static_cast<uint8_t>(ce)};

  mroce_conn_rx(conn, &pkt, bytes, &m, now);
  drain(now);
}

std::vector<uint8_t> pull_head(const uint8_t *pkt, uint32_t len,
                               uint32_t linear, int *rounds) {
  linear = std::min(linear, len);
  std::vector<uint8_t> head(pkt, pkt + linear);
  if (rounds) *rounds = 0;
  // the module's rx_decode(): three rounds at most
  for (int i = 0; i < 3; i++) {
    uint32_t need = mroce_wire_head_len(
        head.data(), static_cast<uint32_t>(head.size()), len);
    if (need <= head.size()) break;
    if (need > len) throw std::logic_error("head longer than the datagram");
    head = std::vector<uint8_t>(pkt, pkt + need);
    if (rounds) ++*rounds;
  }
  return head;
}

bool Fabric::run(const std::function<bool()> &done, uint64_t limit_ns) {
  uint64_t end = now + limit_ns;
  while (!done()) {
    if (q.empty() || q.top().at > end) {
      now = std::max(now, std::min(end, q.empty() ? end : q.top().at));
      return done();
    }
    step();
  }
  return true;
}

bool Fabric::connect(uint64_t limit_ns) {
  mroce_conn_open(ep(0).conn, now);
  ep(0).drain(now);
  return run(
      [&] {
        return ep(0).conn->state == MROCE_CONN_ESTABLISHED &&
               ep(1).conn->state == MROCE_CONN_ESTABLISHED;
      },
      limit_ns);
}

void connect_qps(Fabric &f, uint32_t a, uint32_t b, uint32_t mss,
                 uint64_t ack_timeout_ns) {
  Qp &qa = f.ep(0).qps.count(a) ? f.ep(0).qp(a) : f.ep(0).add_qp(a);
  Qp &qb = f.ep(1).qps.count(b) ? f.ep(1).qp(b) : f.ep(1).add_qp(b);
  mroce_stream_params pa{};
  pa.mss = mss;
  pa.tx_msn = 0x10000 + a;
  pa.rx_msn = 0x20000 + b;
  pa.max_rd_atomic = 16;
  pa.rnr_retry = 7;
  pa.retry_cnt = 7;
  pa.rnr_delay_ns = 100'000;
  pa.min_rnr_ns = 100'000;
  pa.ack_timeout_ns = ack_timeout_ns;
  mroce_stream_params pb = pa;
  pb.tx_msn = pa.rx_msn;
  pb.rx_msn = pa.tx_msn;
  pa.srq = qa.srq;
  pb.srq = qb.srq;
  if (mroce_stream_attach(f.ep(0).conn, &qa.st, b, &pa) ||
      mroce_stream_attach(f.ep(1).conn, &qb.st, a, &pb))
    throw std::logic_error("attach failed");
}

bool routed_pair(Fabric &f, int nroutes, uint64_t delay_ns) {
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(nroutes, Route{});
    for (auto &r : f.routes[d]) {
      r.delay_ns = delay_ns;
      r.gbps = 10;
    }
  }
  auto cfg = test_cfg(4, 1024);
  f.add_endpoint(cfg);
  f.add_endpoint(cfg);
  if (!f.connect()) return false;
  connect_qps(f, 1, 2);
  return true;
}

bool one_path_pair(Fabric &f, uint64_t delay_ns, const mroce_cfg &cfg,
                   uint64_t share_capacity) {
  for (int d = 0; d < 2; d++) {
    f.routes[d].assign(1, Route{});
    f.routes[d][0].delay_ns = delay_ns;
    f.routes[d][0].gbps = 100;
  }
  f.add_endpoint(cfg);
  Endpoint &b = f.add_endpoint(cfg);
  if (share_capacity)
    mroce_share_init(&b.share, share_capacity, 1'000'000, f.now);
  if (!f.connect()) return false;
  if (share_capacity) {
    mroce_share_join(&b.share, b.conn);
    b.share_on = true;
  }
  connect_qps(f, 1, 2);
  return true;
}

}  // namespace mroce::test
