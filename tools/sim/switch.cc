// Switch behaviour: forward by destination with ECMP, per-port output queues
// (control class served first), ECN marking above K bytes, drop-tail, and
// optional PFC driven by per-ingress-port occupancy.
#include "ecmp.h"
#include "network.h"

namespace mroce::sim {

std::span<const uint32_t> Network::next_hops(uint32_t switch_node, uint32_t dst_host) const {
  const Route r = route_to(nodes_[switch_node].id, dst_host);
  return {route_hops_.data() + r.first, r.count};
}

int Network::route(uint32_t switch_node, const FiveTuple &tuple) const {
  return pick_hop(nodes_[switch_node].id, address_host(tuple.dst_ip), tuple);
}

void Network::switch_receive(uint32_t in_port, uint32_t pkt) {
  const Packet &p = pool_[pkt];
  ++counters_.switch_hops;
  const int out = pick_hop(ports_[in_port].owner, p.dst_host, p.tuple);
  if (out < 0) {
    drop(pkt, kDropNoRoute);
    return;
  }
  switch_enqueue(static_cast<uint32_t>(out), in_port, pkt);
}

bool Network::ecn_should_mark(SwitchState &sw, uint64_t depth) {
  const SwitchParams &sp = params_.sw;
  if (depth <= sp.ecn_k_bytes)
    return false;
  if (sp.ecn_kmax_bytes <= sp.ecn_k_bytes || depth >= sp.ecn_kmax_bytes)
    return true;
  // RED-style ramp between K and Kmax, as DCQCN's switches are configured.
  const double frac = static_cast<double>(depth - sp.ecn_k_bytes) /
                      static_cast<double>(sp.ecn_kmax_bytes - sp.ecn_k_bytes);
  return sw.rng.uniform() < frac * sp.ecn_pmax;
}

void Network::switch_enqueue(uint32_t out_port, uint32_t in_port, uint32_t pkt) {
  Port &op = ports_[out_port];
  Packet &p = pool_[pkt];
  const SwitchParams &sp = params_.sw;
  if (!op.ch.up) {
    drop(pkt, kDropLinkDown);
    return;
  }
  const bool data = p.tclass == kClassData;
  if (data && sp.pfc) {
    // Lossless class: the limit is the ingress port's share; crossing XOFF
    // pauses the upstream sender.  Overrunning `buffer` means the headroom
    // was too small for the in-flight bytes: dropped, and counted.
    Port &ip = ports_[in_port];
    if (ip.ingress_bytes + p.wire_bytes > sp.buffer_bytes) {
      drop(pkt, kDropBuffer);
      return;
    }
    ip.ingress_bytes += p.wire_bytes;
    p.ingress_port = in_port;
    if (!ip.pause_sent && ip.ingress_bytes > sp.pfc_xoff_bytes)
      send_pfc(in_port, true);
  } else {
    // Drop-tail.  With PFC the data class is bounded at ingress, so the
    // control class is held to the buffer on its own.
    const uint64_t occupied = sp.pfc ? op.queued_bytes - op.queued_data_bytes : op.queued_bytes;
    if (occupied + p.wire_bytes > sp.buffer_bytes) {
      drop(pkt, kDropBuffer);
      return;
    }
  }
  if (data && p.ecn != kNotEct && p.ecn != kCe &&
      ecn_should_mark(switches_[op.owner], op.queued_data_bytes)) {
    p.ecn = kCe;
    ++counters_.ecn_marks;
  }
  op.fifo[p.tclass].push(pkt);
  op.queued_bytes += p.wire_bytes;
  if (data)
    op.queued_data_bytes += p.wire_bytes;
  if (op.queued_bytes > op.max_queued_bytes) {
    op.max_queued_bytes = op.queued_bytes;
    if (op.queued_bytes > counters_.max_queue_bytes)
      counters_.max_queue_bytes = op.queued_bytes;
  }
  if (!op.busy)
    switch_start_tx(out_port);
}

void Network::ingress_release(uint32_t in_port, uint32_t bytes) {
  Port &ip = ports_[in_port];
  ip.ingress_bytes -= bytes;
  if (ip.pause_sent && ip.ingress_bytes < params_.sw.pfc_xon_bytes)
    send_pfc(in_port, false);
}

void Network::send_pfc(uint32_t in_port, bool pause) {
  Port &ip = ports_[in_port];
  ip.pause_sent = pause;
  if (pause)
    ++counters_.pfc_pauses;
  else
    ++counters_.pfc_resumes;
  if (!ip.ch.up)
    return; // the frame would be lost; set_link_state clears pauses anyway
  // The PAUSE frame travels back over the ingress link (it is small and
  // pre-empts data, so only propagation is modelled).
  queue_.push(now_ + ip.ch.delay, kEvPfc, ip.peer, pause ? 1 : 0);
}

} // namespace mroce::sim
