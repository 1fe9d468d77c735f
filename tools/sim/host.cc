// Host NIC behaviour: ports pull packets from the transport when idle
// (rate-paced transports answer "wait until t"), and received packets are
// handed to the transport after the NIC's receive delay.
#include "host_env.h"
#include "network.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mroce::sim {

namespace {
[[noreturn]] void contract_violation(const char *what) {
  std::fprintf(stderr, "metaroce-sim: transport contract violation: %s\n", what);
  std::abort();
}
} // namespace

const std::vector<uint32_t> &HostEnv::ports() const {
  return ports_ ? *ports_ : net_->nodes_[net_->hosts_[host_]].ports; // before finalize()
}

uint32_t HostEnv::global_port(uint32_t port) const {
  const auto &ports = this->ports();
  if (port >= ports.size())
    contract_violation("port index out of range");
  return ports[port];
}

bool HostEnv::port_up(uint32_t port) const { return net_->ports_[global_port(port)].ch.up; }

uint64_t HostEnv::port_rate_bps(uint32_t port) const {
  return net_->ports_[global_port(port)].ch.rate_bps;
}

void HostEnv::set_timer(Time at, uint64_t cookie) {
  net_->queue_.push(std::max(at, net_->now_), Network::kEvTimer, host_, cookie);
}

void HostEnv::tx_ready(uint32_t port) {
  if (port == kAllPorts) {
    for (uint32_t p : ports())
      net_->host_kick(p);
    return;
  }
  net_->host_kick(global_port(port));
}

uint8_t *HostEnv::attach_header(Packet &pkt, uint32_t len) {
  if (len > kMaxAttachedHeader)
    contract_violation("attached header too long");
  if (pkt.attachment == kNoAttachment)
    pkt.attachment = net_->attachments_.alloc();
  pkt.attachment_len = len;
  return net_->attachments_.data(pkt.attachment);
}

const uint8_t *HostEnv::attached_header(const Packet &pkt) {
  return pkt.attachment == kNoAttachment ? nullptr : net_->attachments_.data(pkt.attachment);
}

void HostEnv::placed(uint64_t msg, uint64_t offset, uint64_t len) {
  if (net_->app_)
    net_->app_->placed(host_, msg, offset, len);
}

void HostEnv::delivered(uint64_t msg) {
  if (net_->app_)
    net_->app_->delivered(host_, msg);
}

void HostEnv::send_complete(uint64_t msg) {
  if (net_->app_)
    net_->app_->send_complete(host_, msg);
}

TransportEnv &Network::env(uint32_t host) { return *envs_[host]; }

void Network::host_kick(uint32_t port) {
  Port &pt = ports_[port];
  if (pt.busy || pt.poll_at <= now_)
    return;
  pt.poll_at = now_;
  queue_.push(now_, kEvPoll, port, 0);
}

void Network::host_poll(uint32_t port) {
  Port &pt = ports_[port];
  if (pt.busy)
    return;
  const uint32_t host = pt.owner;
  Transport *t = transports_[host];
  if (!t)
    return;
  const uint32_t idx = pool_.alloc();
  Packet &p = pool_[idx];
  p.wire_bytes = 0;
  p.payload_bytes = 0;
  p.ecn = kNotEct;
  p.tclass = kClassData;
  p.header_len = 0;
  p.attachment = kNoAttachment;
  p.attachment_len = 0;
  const bool data_allowed = !pt.paused;
  const TxResult r = t->poll_tx(pt.index, data_allowed, p);
  if (r.status != TxStatus::kPacket) {
    release(idx);
    if (r.status == TxStatus::kWait) {
      const Time at = std::max(r.wait_until, now_ + 1);
      if (at < pt.poll_at) {
        pt.poll_at = at;
        queue_.push(at, kEvPoll, port, 0);
      }
    }
    return;
  }
  if (p.wire_bytes == 0 || p.payload_bytes > p.wire_bytes || p.tclass >= kNumClasses)
    contract_violation("packet without a sane size or class");
  if (!data_allowed && p.tclass == kClassData)
    contract_violation("data packet returned while the port is PFC-paused");
  p.src_host = host;
  p.dst_host = address_host(p.tuple.dst_ip);
  p.serial = next_serial_++;
  ++counters_.packets_sent;
  counters_.wire_bytes_sent += p.wire_bytes;
  if (p.payload_bytes) {
    ++counters_.data_packets_sent;
    counters_.payload_bytes_sent += p.payload_bytes;
  }
  transmit(port, idx, params_.host.tx_overhead);
}

void Network::host_receive(uint32_t port, uint32_t pkt) {
  const Port &pt = ports_[port];
  const Packet &p = pool_[pkt];
  const uint32_t host = pt.owner;
  if (p.dst_host != host) {
    // Only a direct host-host link can get here; hosts never forward.
    drop(pkt, kDropNoRoute);
    return;
  }
  ++counters_.packets_received;
  counters_.payload_bytes_received += p.payload_bytes;
  if (Transport *t = transports_[host])
    t->on_packet(pt.index, p);
  release(pkt);
}

} // namespace mroce::sim
