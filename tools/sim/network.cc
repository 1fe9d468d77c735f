// Fabric construction, the event loop, and what every port does alike:
// serialisation, propagation, random loss, link up/down.
#include "network.h"

#include "host_env.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace mroce::sim {

const char *drop_reason_name(DropReason r) {
  switch (r) {
  case kDropRandom:
    return "random";
  case kDropBuffer:
    return "buffer";
  case kDropLinkDown:
    return "link_down";
  case kDropNoRoute:
    return "no_route";
  case kNumDropReasons:
    break;
  }
  return "?";
}

Network::Network(const FabricParams &params) : params_(params) { queue_.reserve(1 << 16); }

Network::~Network() = default;

uint32_t Network::add_host(std::string name) {
  const auto node = static_cast<uint32_t>(nodes_.size());
  const auto host = static_cast<uint32_t>(hosts_.size());
  nodes_.push_back(Node{NodeKind::kHost, std::move(name), 0, host, {}});
  hosts_.push_back(node);
  envs_.push_back(std::make_unique<HostEnv>(this, host));
  transports_.push_back(nullptr);
  return node;
}

uint32_t Network::add_switch(std::string name, uint32_t plane) {
  const auto node = static_cast<uint32_t>(nodes_.size());
  const auto id = static_cast<uint32_t>(switches_.size());
  nodes_.push_back(Node{NodeKind::kSwitch, std::move(name), plane, id, {}});
  SwitchState sw;
  // Real switches hash with per-device seeds to avoid polarisation.
  sw.ecmp_seed = mix64(params_.seed ^ 0xec3f00d5ULL) ^
                 (params_.ecmp_seed_per_switch ? mix64(0x5eedULL + id) : 0);
  sw.rng.reseed(params_.seed, 0x5700000000ULL + id);
  switches_.push_back(std::move(sw));
  return node;
}

uint32_t Network::connect(uint32_t a, uint32_t b, uint64_t rate_bps, Time delay) {
  const auto link = static_cast<uint32_t>(links_.size());
  const auto pa = static_cast<uint32_t>(ports_.size());
  const uint32_t pb = pa + 1;
  for (uint32_t i = 0; i < 2; ++i) {
    Port p;
    p.node = i == 0 ? a : b;
    p.owner = nodes_[p.node].id;
    p.on_switch = nodes_[p.node].kind == NodeKind::kSwitch;
    p.index = static_cast<uint32_t>(nodes_[p.node].ports.size());
    p.peer = i == 0 ? pb : pa;
    p.ch.rate_bps = rate_bps;
    p.ch.delay = delay;
    p.ch.link = link;
    p.ch.rng.reseed(params_.seed, 0x11c0000000ULL + 2ULL * link + i);
    nodes_[p.node].ports.push_back(pa + i);
    ports_.push_back(std::move(p));
  }
  links_.push_back(Link{pa, pb, nodes_[a].name + "~" + nodes_[b].name});
  return link;
}

void Network::finalize() {
  // Parallel links between the same two nodes get "#k" suffixes.
  std::map<std::string, int> seen;
  for (auto &l : links_) {
    const int n = seen[l.name]++;
    if (n > 0)
      l.name += "#" + std::to_string(n);
  }
  for (auto &p : ports_) {
    const Node &peer = nodes_[ports_[p.peer].node];
    p.arrive_delay =
        p.ch.delay + (peer.kind == NodeKind::kSwitch ? params_.sw.latency : params_.host.rx_delay);
    p.ch.jitter = peer.kind == NodeKind::kSwitch ? params_.sw.jitter : 0;
  }
  for (uint32_t h = 0; h < hosts_.size(); ++h)
    envs_[h]->set_ports(&nodes_[hosts_[h]].ports); // nodes_ is complete now
  recompute_routes();
  finalized_ = true;
}

int Network::find_link(const std::string &name) const {
  for (size_t i = 0; i < links_.size(); ++i) {
    const Link &l = links_[i];
    if (l.name == name)
      return static_cast<int>(i);
    // Accept "b~a" for "a~b".
    const auto tilde = name.find('~');
    if (tilde != std::string::npos) {
      const auto hash = name.find('#', tilde);
      const std::string suffix = hash == std::string::npos ? "" : name.substr(hash);
      const std::string left = name.substr(0, tilde);
      const std::string right =
          name.substr(tilde + 1, hash == std::string::npos ? hash : hash - tilde - 1);
      if (l.name == right + "~" + left + suffix)
        return static_cast<int>(i);
    }
  }
  return -1;
}

uint32_t Network::num_host_ports(uint32_t host) const {
  return static_cast<uint32_t>(nodes_[hosts_[host]].ports.size());
}

void Network::set_transport(uint32_t host, Transport *t) { transports_[host] = t; }

void Network::set_link_delay(uint32_t link, Time delay) {
  for (uint32_t port : {links_[link].port_a, links_[link].port_b}) {
    Port &p = ports_[port];
    p.arrive_delay = p.arrive_delay - p.ch.delay + delay;
    p.ch.delay = delay;
  }
}

void Network::set_link_rate(uint32_t link, uint64_t rate_bps) {
  for (uint32_t port : {links_[link].port_a, links_[link].port_b})
    ports_[port].ch.rate_bps = rate_bps;
}

void Network::schedule_link_state(Time at, uint32_t link, bool up) {
  queue_.push(at, kEvLink, link, up ? 1 : 0);
}

void Network::schedule_call(Time at, Callback fn, void *ctx) {
  // Periodic callers (the timeline sampler) reuse their entry.
  size_t i = 0;
  while (i < calls_.size() && calls_[i] != std::make_pair(fn, ctx))
    ++i;
  if (i == calls_.size())
    calls_.emplace_back(fn, ctx);
  queue_.push(at, kEvCall, 0, i);
}

uint64_t Network::run(Time until) {
  if (!finalized_) {
    std::fprintf(stderr, "metaroce-sim: Network::run() before finalize()\n");
    std::abort();
  }
  stopped_ = false;
  uint64_t n = 0;
  Event ev;
  while (!stopped_ && queue_.pop_due(until, ev)) {
    now_ = ev.time;
    ++n;
    // With many connections most of an event's time is waiting for
    // memory (a packet, a connection of the hundreds that take turns):
    // ask for what the next two events will need while this one runs.
    if (prefetch_) {
      const Event *next, *after;
      queue_.peek2(next, after);
      if (after)
        prefetch_far(*after);
      if (next)
        prefetch_near(*next);
    }
    dispatch(ev);
  }
  events_ += n;
  return n;
}

void Network::prefetch_far(const Event &ev) const {
  if (ev.type == kEvArrive) {
    const char *p = reinterpret_cast<const char *>(&pool_[static_cast<uint32_t>(ev.arg)]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64); // the start of the header
    if (const auto a = static_cast<uint32_t>(ev.arg >> 32); a && !ports_[ev.target].on_switch) {
      const uint8_t *h = attachments_.data(a - 1); // a long header (an ACK)
      for (int i = 0; i < 4; ++i)
        __builtin_prefetch(h + 64 * i);
    }
  } else if (ev.type == kEvTimer) {
    if (const Transport *t = transports_[ev.target])
      t->prefetch_timer(ev.arg, ev.time, false);
  } else if (ev.type == kEvTxDone || ev.type == kEvPoll) {
    const Port &p = ports_[ev.target];
    if (!p.on_switch)
      if (const Transport *t = transports_[p.owner])
        t->prefetch_poll();
  }
}

void Network::prefetch_near(const Event &ev) const {
  switch (ev.type) {
  case kEvArrive: {
    const Port &p = ports_[ev.target];
    if (!p.on_switch)
      if (const Transport *t = transports_[p.owner])
        t->prefetch_packet(pool_[static_cast<uint32_t>(ev.arg)]);
    break;
  }
  case kEvTimer:
    if (const Transport *t = transports_[ev.target])
      t->prefetch_timer(ev.arg, ev.time, true);
    break;
  default:
    break;
  }
}

void Network::dispatch(const Event &ev) {
  switch (ev.type) {
  case kEvTxDone: {
    Port &p = ports_[ev.target];
    p.busy = false;
    if (p.on_switch)
      switch_start_tx(ev.target);
    else
      host_poll(ev.target);
    break;
  }
  case kEvArrive:
    on_arrive(ev.target, static_cast<uint32_t>(ev.arg));
    break;
  case kEvPoll: {
    Port &p = ports_[ev.target];
    if (p.poll_at != ev.time)
      break; // superseded by an earlier poll
    p.poll_at = kNever;
    host_poll(ev.target);
    break;
  }
  case kEvTimer:
    if (Transport *t = transports_[ev.target])
      t->on_timer(ev.arg);
    break;
  case kEvPfc: {
    Port &p = ports_[ev.target];
    p.paused = ev.arg != 0;
    if (!p.paused) {
      if (p.on_switch) {
        if (!p.busy)
          switch_start_tx(ev.target);
      } else {
        host_kick(ev.target);
      }
    }
    break;
  }
  case kEvLink:
    set_link_state(ev.target, ev.arg != 0);
    break;
  case kEvRoute:
    recompute_routes();
    break;
  case kEvCall: {
    const auto &c = calls_[ev.arg];
    c.first(c.second, now_);
    break;
  }
  default:
    std::fprintf(stderr, "metaroce-sim: unknown event type %u\n", ev.type);
    std::abort();
  }
}

void Network::on_arrive(uint32_t port, uint32_t pkt) {
  const Port &in = ports_[port];
  if (pool_[pkt].link_epoch != ports_[in.peer].ch.epoch) {
    drop(pkt, kDropLinkDown); // the link went down while it was on the wire
    return;
  }
  if (in.on_switch)
    switch_receive(port, pkt);
  else
    host_receive(port, pkt);
}

void Network::drop(uint32_t pkt, DropReason why) {
  const Packet &p = pool_[pkt];
  ++counters_.drops[why];
  if (p.payload_bytes) {
    ++counters_.data_packets_dropped;
    counters_.payload_bytes_dropped += p.payload_bytes;
  }
  release(pkt);
}

void Network::flush_port(uint32_t port) {
  Port &pt = ports_[port];
  for (auto &fifo : pt.fifo) {
    while (!fifo.empty()) {
      const uint32_t pkt = fifo.pop();
      switch_dequeued(port, pool_[pkt]);
      drop(pkt, kDropLinkDown);
    }
  }
}

void Network::set_link_state(uint32_t link, bool up) {
  const Link &l = links_[link];
  for (uint32_t port : {l.port_a, l.port_b}) {
    Port &pt = ports_[port];
    if (pt.ch.up == up)
      continue;
    pt.ch.up = up;
    pt.paused = false; // a PFC state does not survive the link
    pt.pause_sent = false;
    if (!up) {
      ++pt.ch.epoch;
      flush_port(port);
    }
  }
  if (up) {
    for (uint32_t port : {l.port_a, l.port_b}) {
      if (nodes_[ports_[port].node].kind == NodeKind::kHost)
        host_kick(port);
    }
  }
  if (params_.reroute_delay != kNever)
    queue_.push(now_ + params_.reroute_delay, kEvRoute, 0, 0);
}

} // namespace mroce::sim
