// The MetaRoCE transport in the simulator: the protocol core of
// kernel/core/ (the very files built into metaroce.ko), driven through the
// Transport interface exactly as the kernel glue drives it.  Nothing of the
// protocol is re-implemented here; this file only does what glue does:
//
//  * owns the memory of one struct mroce_conn per peer host (both ends are
//    created together, out of band, as rdma_cm would exchange ids) and of
//    one struct mroce_stream per QP, attached on both sides;
//  * posts each message as a WRITE_IMM whose va encodes (message, offset),
//    so placement reports say which bytes landed and the receive completion
//    says the message is complete;
//  * feeds received packets to mroce_conn_rx(), drains mroce_conn_poll_tx()
//    when a NIC port is idle, arms one timer per connection at
//    mroce_conn_next_timer(), and runs the receiver fair share
//    (mroce_share) of each host every epoch;
//  * picks the NIC port (plane) of a packet from its path id, skipping
//    ports whose link is down: plane selection is the NIC's job.
#pragma once

#include "sim_time.h"
#include "timeline.h"
#include "transport.h"

extern "C" {
#include "mroce.h"
}

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mroce::sim {

struct MetaRoceParams {
  uint32_t paths = 8;  // per connection, 1..MROCE_MAX_PATHS
  uint32_t mtu = 4096; // payload bytes per packet
  // Timers of a NIC on a datacenter fabric (microsecond RTTs), not the
  // core's defaults, which suit a software stack in a VM (mroce_cfg_default:
  // 1ms, 4ms, 200us).  0 keeps the core's default.
  Time rto_min = 200 * kUs;
  Time rto_init = 200 * kUs;
  Time tlp_min = 20 * kUs;
  Time ack_delay = 0;
  uint32_t dupthresh = 0;
  // A connection's first window, packets.  8 (about one bandwidth-delay
  // product of the modelled fabric, 100 Gb/s x ~3 us) made a 16->1 incast's
  // first windows 5x the ECN threshold; with the first ACK one RTT after
  // the first data, slow start reaches 8 in two RTTs (incast.py).
  uint32_t init_window = 2;
  Time share_epoch = 100 * kUs; // receiver fair-share epoch; 0 disables hints
  Time health_epoch = 0;        // path health check period; 0 keeps the core's
  // A receiver grants a connection opened to it a first rate in the
  // ACCEPT: its capacity / its connections (share.h).  An incast that
  // starts as its connections open then settles before its first ACKs
  // (incast.py); needs the share (share_epoch > 0).
  bool grants = true;
};

class MetaRoceTransport;

// The memory of every connection and stream of a simulation: zeroed pages
// from large mappings, used in order and freed together.  One calloc per
// connection (~170 KB) was one mmap each and, at the end, one munmap each
// with a TLB shootdown (18% of a 32-host all-to-all's process time here);
// packed in order, the connections and streams created together (both ends
// of a pair) share pages.  Memory no connection touches is never faulted in.
class MemArena {
public:
  MemArena() = default;
  ~MemArena();
  MemArena(const MemArena &) = delete;
  MemArena &operator=(const MemArena &) = delete;
  // `bytes` of zeroed memory aligned to 64; lives as long as the arena.
  void *alloc(size_t bytes);
  size_t bytes() const { return used_; }

private:
  struct Block {
    char *base;
    size_t size;
  };
  std::vector<Block> blocks_;
  char *next_ = nullptr;
  char *end_ = nullptr;
  size_t used_ = 0;
};

// Every MetaRoCE endpoint of a simulation.  Connections and QPs are set up
// out of band through it; it also defers calls that would re-enter the core
// from one of its own callbacks (a completion that makes the workload post).
struct MetaRoceDirectory {
  std::vector<MetaRoceTransport *> hosts;
  MemArena mem;       // connections and streams of every host
  uint32_t depth = 0; // core calls in progress (nested through callbacks)
  bool draining = false;
  std::deque<MessageDesc> deferred;
  void drain();
};

class MetaRoceTransport final : public Transport {
public:
  MetaRoceTransport(TransportEnv &env, const MetaRoceParams &params, MetaRoceDirectory *dir);
  ~MetaRoceTransport() override;

  const char *name() const override { return "metaroce"; }
  void post(const MessageDesc &msg) override;
  void on_packet(uint32_t port, const Packet &pkt) override;
  void on_timer(uint64_t cookie) override;
  TxResult poll_tx(uint32_t port, bool data_allowed, Packet &out) override;
  void report(TransportCounters &c) const override;
  void set_sender_trace(SenderTrace *t) override { trace_ = t; }
  void prefetch_packet(const Packet &pkt) const override;
  void prefetch_timer(uint64_t cookie, Time at, bool near) const override;
  void prefetch_poll() const override;

  // Introspection for tests.
  size_t num_connections() const { return conns_.size(); }
  const mroce_conn &connection(uint32_t i) const;
  const mroce_share &share() const { return *share_; }
  // What connection `k` enforces now (for --timeline_senders).
  SenderState sender_state(const mroce_conn &c) const;

  // Internal, used by the core callbacks and the directory.
  struct Conn;
  struct Stream;
  void do_post(const MessageDesc &msg);
  TransportEnv &env() { return env_; }
  void on_placed(const mroce_place *pl);
  void on_send_done(Stream *s, uint64_t cookie, int status);
  void on_recv_done(Stream *s, const mroce_recv_done *rd);
  void on_stream_error();
  void on_conn_event(int event);
  mroce_stream *lookup(Conn *k, uint32_t id);
  Stream *stream_by_id(uint32_t id);

private:
  struct Queued; // a packet waiting for its (other) port

  uint64_t now_ns() const { return env_.now() / kNs; }
  Conn *conn_to(uint32_t peer);
  Conn *create_conn(uint32_t peer);
  Stream *stream_to(uint32_t peer, uint32_t flow);
  Stream *create_stream(uint32_t peer, uint32_t flow);
  void flush(Stream *s);
  // The always_inline ones run around every core call: small, and their
  // calls' frames cost about as much as their work (and inlined, arm()
  // and after_core() lose the test of a constant timer_ran).
  //
  // After a core call: post deferred backlog, re-arm, mark ready, kick ports.
  [[gnu::always_inline]] inline void after_core(Conn *k, bool timer_ran = false);
  [[gnu::always_inline]] inline void make_ready(Conn *k);
  [[gnu::always_inline]] inline void arm(Conn *k, bool timer_ran = false);
  void arm_share();
  uint64_t share_capacity() const;
  uint32_t plane_of(uint32_t path) const;
  [[gnu::always_inline]] inline void build(Conn *k, const mroce_tx &tx, uint32_t plane,
                                           Packet &out);

  TransportEnv &env_;
  MetaRoceParams params_;
  MetaRoceDirectory *dir_;
  SenderTrace *trace_ = nullptr; // --timeline_senders
  mroce_cfg cfg_{};
  mroce_share *share_ = nullptr; // in the directory's arena
  bool share_armed_ = false;
  uint64_t share_seen_ = 0;                  // rx bytes of all connections at the last epoch
  // index = connection id - 1; each Conn is in the directory's arena, on
  // the line before its core connection (one page for both, and a hint
  // finds the connection without reading the Conn)
  std::vector<Conn *> conns_;
  // The core's streams by id - 1, beside streams_, so that a prefetch
  // hint need not read a Stream.
  std::vector<mroce_stream *> core_streams_;
  std::vector<Conn *> conn_by_peer_;
  std::vector<std::unique_ptr<Stream>> streams_; // index = stream id - 1
  std::unordered_map<uint64_t, Stream *> stream_by_peer_flow_;
  std::deque<Conn *> ready_;            // may have packets to send
  std::vector<Stream *> pending_flush_; // backlog to post after a core call
  std::vector<std::deque<Queued>> port_ctrl_, port_data_;
  uint32_t planes_; // NIC ports, one per plane
  std::vector<uint8_t> txbuf_, rxbuf_;
  // Messages split into parts (over the core's message size limit).
  std::unordered_map<uint64_t, uint32_t> parts_sent_, parts_received_;
};

} // namespace mroce::sim
