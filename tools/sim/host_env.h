// TransportEnv of one host: what its transport may ask of the fabric.
#pragma once

#include "network.h"
#include "transport.h"

namespace mroce::sim {

class HostEnv final : public TransportEnv {
public:
  HostEnv(Network *net, uint32_t host) : TransportEnv(&net->now_), net_(net), host_(host) {}

  uint32_t host_id() const override { return host_; }
  uint32_t num_hosts() const override { return net_->num_hosts(); }
  uint32_t num_ports() const override { return static_cast<uint32_t>(ports().size()); }
  bool port_up(uint32_t port) const override;
  uint64_t port_rate_bps(uint32_t port) const override;
  uint64_t seed() const override { return net_->params_.seed; }
  void set_timer(Time at, uint64_t cookie) override;
  void tx_ready(uint32_t port) override;
  void placed(uint64_t msg, uint64_t offset, uint64_t len) override;
  void delivered(uint64_t msg) override;
  void send_complete(uint64_t msg) override;
  TransportCounters &stats() override { return net_->tcounters_; }
  uint8_t *attach_header(Packet &pkt, uint32_t len) override;
  const uint8_t *attached_header(const Packet &pkt) override;
  void enable_prefetch() override { net_->prefetch_ = true; }

  // The host's global port indices; set by Network::finalize().
  void set_ports(const std::vector<uint32_t> *ports) { ports_ = ports; }

private:
  const std::vector<uint32_t> &ports() const;
  uint32_t global_port(uint32_t port) const;
  Network *net_;
  uint32_t host_;
  const std::vector<uint32_t> *ports_ = nullptr;
};

} // namespace mroce::sim
