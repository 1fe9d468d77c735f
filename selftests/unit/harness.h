// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Two MetaRoCE endpoints, each running the real protocol core, joined by a
// simulated fabric: per-route delay, rate, queue (ECN marking, drop-tail),
// random loss and duplication, with ECMP-style route choice by UDP source
// port.  Virtual time, seeded, deterministic.  Used by the unit tests, the
// bulk-transfer test, the fuzzers and the benchmarks.
#pragma once

#include <cstdint>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "conn.h"
#include "share.h"
}

namespace mroce::test {

struct Route {
  uint64_t delay_ns = 10'000;      // one-way propagation
  uint64_t jitter_ns = 0;          // uniform extra delay: reorders within a route
  // A host's two receive backlogs: runs of lane_run packets each take the
  // fast lane or one lane_delay_ns slower (a CPU stalled in a long softirq
  // pass), at random, so runs pass each other whole.
  uint64_t lane_delay_ns = 0;
  uint32_t lane_run = 16;
  double gbps = 0;                 // 0: infinitely fast
  double loss = 0;                 // random drop probability
  double dup = 0;                  // duplication probability
  uint64_t dup_late_ns = 0;        // a duplicate's lag: 1 us, or up to this
  uint64_t queue_bytes = 0;        // drop-tail limit, 0 = unlimited
  uint64_t ecn_bytes = 0;          // mark CE above this backlog, 0 = never
  bool up = true;
  // state
  uint64_t busy_until = 0;
  uint32_t lane_left = 0;
  bool lane_slow = false;
  uint64_t last_arrival = 0;
  uint64_t sent = 0, dropped = 0, marked = 0, duplicated = 0;
  uint64_t reordered = 0;  // arrived before a packet sent earlier on it
  uint64_t data_sent = 0, data_dropped = 0;  // stream packets only
};

struct Completion {
  uint64_t cookie;
  int status;
  uint32_t byte_len = 0;
  uint32_t imm = 0;
  uint8_t op = 0;
};

struct Region {
  uint64_t va;
  std::vector<uint8_t> mem;
  std::vector<uint8_t> placed;  // per-byte placement counts, if enabled
  bool remote_write = true, remote_read = true, remote_atomic = true;
};

struct SendWr {
  mroce_msg msg{};
  std::vector<uint8_t> data;  // SEND/WRITE source bytes
  uint8_t *read_dst = nullptr;  // READ/ATOMIC: where the result lands
  uint32_t read_len = 0;
};

// A message @op of @len bytes, each @fill (a SEND or WRITE's source; READs
// and atomics ignore it), to @va of region @rkey where the op has a target.
inline SendWr make_wr(uint8_t op, uint64_t cookie, uint32_t len, uint8_t fill,
                      uint32_t rkey = 0, uint64_t va = 0) {
  SendWr w;
  w.msg.op = op;
  w.msg.cookie = cookie;
  w.msg.len = len;
  w.msg.rkey = rkey;
  w.msg.va = va;
  w.data.assign(len, fill);
  return w;
}

// Source bytes fill, fill + 7, fill + 14, ...: a byte placed at the wrong
// offset shows.
inline SendWr &pattern(SendWr &w, uint8_t fill) {
  for (size_t i = 0; i < w.data.size(); i++)
    w.data[i] = static_cast<uint8_t>(fill + i * 7);
  return w;
}

struct RecvWr {
  uint64_t cookie;
  uint8_t *buf;
  uint32_t len;
  std::vector<uint32_t> placed;  // per-byte placement counts (checks)
};

struct Endpoint;

// A copy of a connection's counters.
inline mroce_conn_stats conn_stats(const mroce_conn *c) {
  mroce_conn_stats s;
  mroce_conn_get_stats(c, &s);
  return s;
}

struct Qp {
  Endpoint *ep;
  mroce_stream st;
  std::map<uint64_t, SendWr> sends;  // by cookie
  std::deque<RecvWr> rq;             // posted receives, in order
  uint32_t rq_base = 0;              // rsn of rq.front()
  std::map<uint64_t, RecvWr> claimed;
  std::vector<Completion> scq, rcq;
  int error = 0;                     // stream_error status, if any
  bool srq = false;
};

struct Fabric;

struct Endpoint {
  Endpoint(Fabric *f, int idx, const mroce_cfg &cfg, uint64_t seed);
  ~Endpoint();
  Fabric *fab;
  int idx;
  std::vector<uint8_t> mem;
  mroce_conn *conn;
  mroce_share share{};
  bool share_on = false;
  std::map<uint32_t, Region> regions;  // by rkey
  std::map<uint32_t, std::unique_ptr<Qp>> qps;
  std::vector<int> events;
  uint64_t armed = 0;
  uint64_t place_calls = 0, place_bytes = 0, rx_bad = 0;
  // The glue's address validation (core/cookie.h): a CONNECT without a
  // valid cookie is answered with a CHALLENGE and goes no further.
  mroce_key cookie_key{};
  uint64_t cookie_challenges = 0;
  // Endpoint i's address, 16 bytes (what the module keys cookies by).
  static std::array<uint8_t, 16> addr(int i) {
    std::array<uint8_t, 16> a{};
    a[10] = a[11] = 0xff;  // v4-mapped 10.0.0.(i + 1)
    a[12] = 10;
    a[15] = static_cast<uint8_t>(i + 1);
    return a;
  }
  uint64_t pkts_out = 0;
  std::function<void(Endpoint &, const uint8_t *, uint32_t)> tap;  // sees every packet it sends
  std::function<bool(Endpoint &, const uint8_t *, uint32_t)> drop;  // true: lose it

  Qp &qp(uint32_t id) { return *qps.at(id); }
  Qp &add_qp(uint32_t id);
  uint32_t add_region(uint64_t va, size_t len);
  void post_recv(Qp &q, uint64_t cookie, uint8_t *buf, uint32_t len);
  int post_send(Qp &q, SendWr wr);
  // The module's doorbell: post, then send what the post lets out.
  int ring(Qp &q, SendWr wr);
  void drain(uint64_t now);  // poll_tx until idle; arm timer
  // One received packet, as the module takes it: @bytes
  // holds its contiguous head (mroce_wire_head_len()), @whole the datagram
  // placement copies the payload from (nullptr: @bytes holds it all).
  void receive(const mroce_pkt &pkt, const uint8_t *bytes, bool ce,
               uint64_t now, const uint8_t *whole = nullptr);
};

struct Packet {
  int to;
  std::vector<uint8_t> bytes;
  bool ce;
};

// The fabric: two directions, each with its own routes; ECMP by source port.
struct Fabric {
  explicit Fabric(uint64_t seed = 1) : rng(seed) {}
  uint64_t now = 0;
  std::mt19937_64 rng;
  std::vector<Route> routes[2];  // routes[d]: from endpoint d to 1 - d
  std::vector<std::unique_ptr<Endpoint>> eps;
  uint64_t events = 0;
  uint64_t rx_split = 0;  // packets received with bytes past their head

  struct Ev {
    uint64_t at;
    uint64_t seq;
    int kind;  // 0 packet, 1 timer
    int ep;
    std::shared_ptr<Packet> pkt;
    bool operator>(const Ev &o) const {
      return at != o.at ? at > o.at : seq > o.seq;
    }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  uint64_t seq = 0;

  Endpoint &ep(int i) { return *eps.at(i); }
  Endpoint &add_endpoint(const mroce_cfg &cfg);
  // Both endpoints: connect (0 opens), wait until established.
  bool connect(uint64_t limit_ns = 1'000'000'000);
  void send(int from, uint16_t sport, const uint8_t *buf, uint32_t len,
            bool ect);
  void arm(int ep, uint64_t at);
  // Run until @done returns true or virtual time passes @limit.
  bool run(const std::function<bool()> &done, uint64_t limit_ns);
  bool step();
  size_t route_of(int dir, uint16_t sport) const;
};

// The module's receive path (kernel/rx.c): the first @linear bytes of the
// @len-byte datagram @pkt are contiguous, more are pulled as
// mroce_wire_head_len() asks, as pskb_may_pull() would.  Every pull makes
// an exact-size copy, so reading past the contiguous bytes is an ASan
// report.  Returns them; @rounds, if given, counts the pulls.
std::vector<uint8_t> pull_head(const uint8_t *pkt, uint32_t len,
                               uint32_t linear, int *rounds = nullptr);

// A default configuration for tests: 4 paths, 1 KiB packets.
mroce_cfg test_cfg(uint32_t npaths = 4, uint32_t mss = 1024);

// Connect a QP pair (id a on ep 0, id b on ep 1) with default parameters.
// @ack_timeout_ns: the streams' local ACK timeout (0: infinite).
void connect_qps(Fabric &f, uint32_t a, uint32_t b, uint32_t mss = 1024,
                 uint64_t ack_timeout_ns = 0);

// Two endpoints joined by one route of @delay_ns each way at 100 Gb/s, both
// with @cfg, connected, QP 1 of endpoint 0 to QP 2 of endpoint 1.  A
// non-zero @share_capacity (bytes/s) gives endpoint 1 a receiver fair share.
bool one_path_pair(Fabric &f, uint64_t delay_ns, const mroce_cfg &cfg,
                   uint64_t share_capacity = 0);

// Two endpoints of test_cfg(4, 1024) joined by @nroutes routes of
// @delay_ns each way at 10 Gb/s, connected, QP 1 of endpoint 0 to QP 2 of
// endpoint 1.
bool routed_pair(Fabric &f, int nroutes, uint64_t delay_ns);

}  // namespace mroce::test
