// The fabric: hosts, switches, ports, links, and the event loop that moves
// packets between them.
//
// Each port owns the channel it transmits on.  A packet costs two events per
// hop: the end of its serialisation (the port is free again) and its arrival
// at the far end (after propagation plus the receiving node's processing
// delay).  Switches forward by destination host with ECMP over equal-cost
// next hops; hosts hand packets to their Transport and poll it when a port
// goes idle.
#pragma once

#include "ecmp.h"
#include "event_queue.h"
#include "fifo.h"
#include "link.h"
#include "metrics.h"
#include "packet.h"
#include "rng.h"
#include "sim_time.h"
#include "transport.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mroce::sim {

struct SwitchParams {
  uint64_t buffer_bytes = 1ull << 20;  // per output port; per ingress port with PFC
  uint64_t ecn_k_bytes = 100ull << 10; // mark CE on ECT data above this depth
  uint64_t ecn_kmax_bytes = 0;         // > ecn_k: mark with probability rising to ecn_pmax
  double ecn_pmax = 1.0;
  Time latency = 500 * kNs; // forwarding delay, added on arrival
  // Per-packet forwarding-time noise, uniform in [0, jitter].  Without it
  // equal-rate senders keep a fixed phase and drop-tail can lock one out
  // completely, an artefact of perfectly periodic simulated NICs.
  Time jitter = 50 * kNs;
  bool pfc = false;
  uint64_t pfc_xoff_bytes = 0; // pause upstream above this ingress occupancy
  uint64_t pfc_xon_bytes = 0;  // resume below this
};

struct HostParams {
  Time tx_overhead = 0;      // minimum time a NIC port spends per packet sent
  Time rx_delay = 200 * kNs; // NIC receive processing before the transport sees it
};

struct FabricParams {
  SwitchParams sw;
  HostParams host;
  uint64_t seed = 1;
  bool ecmp_seed_per_switch = true; // false: every switch hashes alike (polarisation)
  Time reroute_delay = kNever;      // routes recomputed this long after a link change
};

enum class NodeKind : uint8_t { kHost, kSwitch };

struct Port {
  uint32_t node = 0;
  uint32_t owner = 0;      // nodes_[node].id: its host or switch index
  bool on_switch = false;  // nodes_[node].kind == kSwitch (read per packet)
  uint32_t index = 0;      // position in the node's port list (= plane on hosts)
  uint32_t peer = 0;       // global index of the port at the other end
  Channel ch;              // the direction this port transmits on
  Time arrive_delay = 0;   // ch.delay + the peer node's processing delay
  uint64_t tx_packets = 0; // put on the wire (including ones then lost)
  uint64_t tx_bytes = 0;
  bool busy = false;     // serialising a packet
  bool paused = false;   // data class held by a PFC pause from downstream
  Time poll_at = kNever; // hosts: time of the pending transport poll
  // Switch output queue.
  PacketFifo fifo[kNumClasses];
  uint64_t queued_bytes = 0;
  uint64_t queued_data_bytes = 0;
  uint64_t max_queued_bytes = 0;
  // Switch ingress accounting for PFC: data bytes that entered through this
  // port and are still buffered in the switch.
  uint64_t ingress_bytes = 0;
  bool pause_sent = false;
};

struct Link {
  uint32_t port_a = 0; // its channel carries a -> b
  uint32_t port_b = 0; // its channel carries b -> a
  std::string name;
};

struct Node {
  NodeKind kind = NodeKind::kHost;
  std::string name;
  uint32_t plane = 0; // switches: the plane they belong to
  uint32_t id = 0;    // host index or switch index
  std::vector<uint32_t> ports;
};

// Receives what transports report about application data.
class AppSink {
public:
  virtual ~AppSink() = default;
  virtual void placed(uint32_t host, uint64_t msg, uint64_t offset, uint64_t len) = 0;
  virtual void delivered(uint32_t host, uint64_t msg) = 0;
  virtual void send_complete(uint32_t host, uint64_t msg) = 0;
};

class HostEnv;

class Network {
public:
  explicit Network(const FabricParams &params);
  ~Network();
  Network(const Network &) = delete;
  Network &operator=(const Network &) = delete;

  // --- Construction (before finalize()) ---
  uint32_t add_host(std::string name);
  uint32_t add_switch(std::string name, uint32_t plane);
  // Full-duplex link between nodes a and b; returns the link index.  Host
  // ports are numbered in the order their links are added.
  uint32_t connect(uint32_t node_a, uint32_t node_b, uint64_t rate_bps, Time delay);
  // Computes arrival delays and routes.  Call once, after construction.
  void finalize();

  // --- Setup before run() ---
  void set_transport(uint32_t host, Transport *t);
  // The environment host `host`'s transport must be built with.
  TransportEnv &env(uint32_t host);
  void set_app(AppSink *app) { app_ = app; }
  void schedule_link_state(Time at, uint32_t link, bool up);
  // Make one link (both directions) longer or slower than the rest.
  void set_link_delay(uint32_t link, Time delay);
  void set_link_rate(uint32_t link, uint64_t rate_bps);
  // Runs fn(ctx) at simulated time `at` (workload starts, test probes).
  using Callback = void (*)(void *ctx, Time now);
  void schedule_call(Time at, Callback fn, void *ctx);

  // Runs events until the queue is empty, `until` is passed, or stop() is
  // called.  Returns the number of events processed by this call.
  uint64_t run(Time until = kNever);
  void stop() { stopped_ = true; }

  // --- Inspection ---
  Time now() const { return now_; }
  uint64_t events() const { return events_; }
  size_t pending_events() const { return queue_.size(); }
  size_t peak_pending_events() const { return queue_.peak_size(); }
  const FabricParams &params() const { return params_; }
  uint32_t num_hosts() const { return static_cast<uint32_t>(hosts_.size()); }
  uint32_t host_node(uint32_t host) const { return hosts_[host]; }
  uint32_t num_host_ports(uint32_t host) const;
  const std::vector<Node> &nodes() const { return nodes_; }
  const std::vector<Port> &ports() const { return ports_; }
  const std::vector<Link> &links() const { return links_; }
  Port &port(uint32_t idx) { return ports_[idx]; }
  Channel &channel(uint32_t port) { return ports_[port].ch; }
  // Link index by name ("a~b", either order), or -1.
  int find_link(const std::string &name) const;
  // Equal-cost next hops (global port indices) at a switch towards a host.
  std::span<const uint32_t> next_hops(uint32_t switch_node, uint32_t dst_host) const;
  // Port a packet with this tuple leaves `switch_node` by, or -1 if no route.
  int route(uint32_t switch_node, const FiveTuple &tuple) const;
  uint64_t ecmp_seed(uint32_t switch_node) const {
    return switches_[nodes_[switch_node].id].ecmp_seed;
  }
  void recompute_routes();

  FabricCounters &counters() { return counters_; }
  const FabricCounters &counters() const { return counters_; }
  TransportCounters &transport_counters() { return tcounters_; }
  const TransportCounters &transport_counters() const { return tcounters_; }
  size_t packets_in_flight() const { return pool_.in_use(); }

private:
  friend class HostEnv;
  enum EventType : uint8_t {
    kEvTxDone, // target = port
    kEvArrive, // target = receiving port, arg = packet | (attachment + 1) << 32
    kEvPoll,   // target = host port: ask the transport for a packet
    kEvTimer,  // target = host, arg = cookie
    kEvPfc,    // target = port being paused/resumed, arg = 1 pause / 0 resume
    kEvLink,   // target = link, arg = 1 up / 0 down
    kEvRoute,  // recompute routes
    kEvCall,   // arg = index into calls_
  };

  struct SwitchState {
    uint64_t ecmp_seed = 0;
    Rng rng;                     // ECN marking draws
    std::vector<uint32_t> route; // dst host -> group index (kNoGroup: none)
    std::vector<std::vector<uint32_t>> groups;
  };
  static constexpr uint32_t kNoGroup = 0xffffffffu;
  // The switches' routes flattened for the per-packet lookup: entry
  // switch * hosts + destination is a range of route_hops_ (count 0: no
  // route), one load instead of three vectors deep.
  struct Route {
    uint32_t first = 0;
    uint32_t count = 0;
  };

  // The route of switch `sw` (its index) to `dst_host`; count 0: none.
  Route route_to(uint32_t sw, uint32_t dst_host) const {
    const auto nhosts = static_cast<uint32_t>(hosts_.size());
    return dst_host < nhosts ? routes_[size_t{sw} * nhosts + dst_host] : Route{};
  }
  // The port a packet with `tuple` leaves switch `sw` by, or -1: the one
  // lookup for packets and for route().
  int pick_hop(uint32_t sw, uint32_t dst_host, const FiveTuple &tuple) const {
    const Route r = route_to(sw, dst_host);
    if (r.count == 0)
      return -1;
    uint32_t at = r.first;
    if (r.count > 1)
      at += ecmp_select(ecmp_hash(tuple, switches_[sw].ecmp_seed), r.count);
    return static_cast<int>(route_hops_[at]);
  }

  void dispatch(const Event &ev);
  // Prefetch hints for the events after the one being dispatched: the
  // packet of the one after next, the transport's state for the next.
  void prefetch_far(const Event &ev) const;
  void prefetch_near(const Event &ev) const;
  // Puts packet `pkt` on the wire of `port` (which must be idle).
  // Inline (below): its two callers, a host and a switch sending, run it
  // for every hop, and the call's frame was a third of its own work.
  [[gnu::always_inline]] inline void transmit(uint32_t port, uint32_t pkt, Time min_duration);
  void on_arrive(uint32_t port, uint32_t pkt);
  void drop(uint32_t pkt, DropReason why);
  // Back to the pool, with its attachment.  Inline (below): once per packet.
  [[gnu::always_inline]] inline void release(uint32_t pkt);
  void set_link_state(uint32_t link, bool up);
  void flush_port(uint32_t port);

  // switch.cc
  void switch_receive(uint32_t in_port, uint32_t pkt);
  void switch_enqueue(uint32_t out_port, uint32_t in_port, uint32_t pkt);
  // Inline (below), these two: a switch port starts its next packet at
  // every end of transmission (about half of all events), and the calls
  // cost more than the work.
  [[gnu::always_inline]] inline void switch_start_tx(uint32_t port);
  [[gnu::always_inline]] inline void switch_dequeued(uint32_t out_port, const Packet &p);
  void ingress_release(uint32_t in_port, uint32_t bytes);
  void send_pfc(uint32_t in_port, bool pause);
  bool ecn_should_mark(SwitchState &sw, uint64_t depth);

  // host.cc
  void host_receive(uint32_t port, uint32_t pkt);
  void host_poll(uint32_t port);
  void host_kick(uint32_t port);

  FabricParams params_;
  std::vector<Node> nodes_;
  std::vector<Port> ports_;
  std::vector<Link> links_;
  std::vector<uint32_t> hosts_; // host index -> node
  std::vector<SwitchState> switches_;
  std::vector<Route> routes_;        // recompute_routes()
  std::vector<uint32_t> route_hops_; // global port indices
  std::vector<std::unique_ptr<HostEnv>> envs_;
  std::vector<Transport *> transports_;
  std::vector<std::pair<Callback, void *>> calls_;
  AppSink *app_ = nullptr;

  EventQueue queue_;
  PacketPool pool_;
  AttachmentStore attachments_;
  Time now_ = 0;
  uint64_t events_ = 0;
  uint64_t next_serial_ = 0;
  bool stopped_ = false;
  bool finalized_ = false;
  bool prefetch_ = false; // give prefetch hints (a transport asked)
  FabricCounters counters_;
  TransportCounters tcounters_;
};

inline void Network::transmit(uint32_t port, uint32_t pkt, Time min_duration) {
  Port &pt = ports_[port];
  Packet &p = pool_[pkt];
  Time ser = serialization_time(p.wire_bytes, pt.ch.rate_bps);
  if (ser < min_duration)
    ser = min_duration;
  pt.busy = true;
  ++pt.tx_packets;
  pt.tx_bytes += p.wire_bytes;
  queue_.push(now_ + ser, kEvTxDone, port, 0);
  if (!pt.ch.up) {
    drop(pkt, kDropLinkDown);
    return;
  }
  if (pt.ch.rng.chance(pt.ch.loss_threshold)) {
    drop(pkt, kDropRandom);
    return;
  }
  p.link_epoch = pt.ch.epoch;
  Time at = now_ + ser + pt.arrive_delay;
  if (pt.ch.jitter) {
    // Processing-time noise at the receiver; never reorders a link's packets.
    at += pt.ch.rng.below(pt.ch.jitter + 1);
    at = std::max(at, pt.ch.last_arrival);
    pt.ch.last_arrival = at;
  }
  // The attachment rides along for prefetch_far() (kNoAttachment + 1 = 0).
  queue_.push(at, kEvArrive, pt.peer, pkt | uint64_t{p.attachment + 1} << 32);
}

inline void Network::switch_dequeued(uint32_t out_port, const Packet &p) {
  Port &op = ports_[out_port];
  op.queued_bytes -= p.wire_bytes;
  if (p.tclass == kClassData) {
    op.queued_data_bytes -= p.wire_bytes;
    if (params_.sw.pfc)
      ingress_release(p.ingress_port, p.wire_bytes);
  }
}

inline void Network::switch_start_tx(uint32_t port) {
  Port &op = ports_[port];
  uint32_t pkt;
  if (!op.fifo[kClassControl].empty())
    pkt = op.fifo[kClassControl].pop();
  else if (!op.paused && !op.fifo[kClassData].empty())
    pkt = op.fifo[kClassData].pop();
  else
    return;
  switch_dequeued(port, pool_[pkt]);
  transmit(port, pkt, 0);
}

inline void Network::release(uint32_t pkt) {
  Packet &p = pool_[pkt];
  if (p.attachment != kNoAttachment) {
    attachments_.release(p.attachment);
    p.attachment = kNoAttachment;
  }
  pool_.release(pkt);
}

} // namespace mroce::sim
