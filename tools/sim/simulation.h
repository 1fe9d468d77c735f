// One simulation run: builds the topology, the transports and the workload
// from a Config, runs the fabric until the event queue drains (or max_time),
// and reports what happened.  It is also the ground-truth observer: every
// placement and completion a transport reports is checked against the
// message table.
#pragma once

#include "config.h"
#include "messages.h"
#include "network.h"
#include "timeline.h"
#include "topology.h"
#include "transport_factory.h"
#include "workload.h"

#include <memory>
#include <string>

namespace mroce::sim {

struct SimResult {
  std::string transport;
  std::string workload;
  std::string topology;
  uint32_t hosts = 0;
  uint32_t planes = 0;
  uint32_t paths = 0;
  uint32_t qps_per_pair = 0;
  uint64_t size = 0;
  uint64_t seed = 0;
  double loss = 0;
  bool completed = false;
  Time completion_time = 0; // last delivery; if incomplete, when the run stopped
  Time end_time = 0;        // last event processed
  uint64_t bytes_expected = 0;
  uint64_t messages_expected = 0;
  uint32_t receivers = 0;
  double goodput_gbps = 0;
  double goodput_per_receiver_gbps = 0;
  double line_rate_fraction = 0; // per-receiver goodput / receiver port capacity
  uint64_t events = 0;
  uint64_t packets_in_flight_at_end = 0;
  MessageStats msgs;
  FabricCounters fabric;
  TransportCounters transport_stats;
  Timeline timeline; // interval 0: not recorded
};

class Simulation final : public AppSink, public WorkloadDriver {
public:
  // Validates `cfg`; returns nullptr and sets `err` on any problem.
  static std::unique_ptr<Simulation> create(Config cfg, std::string &err);
  ~Simulation() override;

  SimResult run();

  Network &network() { return net_; }
  const Topology &topology() const { return topo_; }
  const MessageTable &messages() const override { return msgs_; }
  Transport &transport(uint32_t host) { return transports_->at(host); }
  const Config &config() const { return cfg_; }

  // AppSink
  void placed(uint32_t host, uint64_t msg, uint64_t offset, uint64_t len) override;
  void delivered(uint32_t host, uint64_t msg) override;
  void send_complete(uint32_t host, uint64_t msg) override;
  // WorkloadDriver
  uint64_t post(uint32_t src, uint32_t dst, uint32_t flow, uint64_t bytes, uint32_t tag) override;

private:
  explicit Simulation(const Config &cfg);
  Status setup();
  static void start(void *ctx, Time now);
  static void sample_timeline(void *ctx, Time now);
  TimelineCounters timeline_counters() const;
  void watched_link_bytes(TimelineCounters &c) const;

  Config cfg_;
  Network net_;
  Topology topo_;
  std::unique_ptr<TransportSet> transports_;
  std::unique_ptr<Workload> workload_;
  MessageTable msgs_;
  std::unique_ptr<TimelineRecorder> timeline_;
  std::vector<uint32_t> watched_links_;
  Time completed_at_ = kNever;
};

// The result as one JSON object (what --json prints).
std::string result_json(const SimResult &r);

} // namespace mroce::sim
