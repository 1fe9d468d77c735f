// Everything a run is made of, settable from a scenario file (key = value
// lines) and from the command line (--key value), with one table of options
// so both accept the same names.  See Documentation/simulator.md.
#pragma once

#include "metaroce_adapter.h"
#include "network.h"
#include "rocev2.h"
#include "topology.h"
#include "workload.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mroce::sim {

struct LinkEvent {
  Time at = 0;
  bool up = false;
  std::string link; // link name, or empty for a whole plane
  int plane = -1;
};

struct LinkLoss {
  std::string link;
  double loss = 0;
};

// One link made different from the rest (both directions): a longer cable,
// a slower (degraded) port.
struct LinkSetting {
  std::string link;
  Time delay = kNever;   // kNever: unchanged
  uint64_t rate_bps = 0; // 0: unchanged
};

struct Config {
  std::string transport = "rocev2";
  WorkloadKind workload = WorkloadKind::kAllReduce;
  uint64_t size = 16ull << 20;
  double loss = 0.0;
  LossPlacement loss_at = LossPlacement::kLastHop;
  uint32_t paths = 8;        // MetaRoCE paths per connection (RoCEv2: always 1)
  uint32_t qps_per_pair = 0; // 0: one per plane
  uint32_t mtu = 4096;
  Time max_time = 60 * kSec; // give up (and report incomplete) after this
  TopologyParams topo;       // topo.hosts and topo.planes are --hosts / --planes
  FabricParams fabric;       // fabric.seed is --seed
  RoceV2Params rocev2;
  MetaRoceParams metaroce; // metaroce.paths and .mtu are --paths / --mtu
  std::vector<LinkEvent> link_events;
  std::vector<LinkLoss> link_losses;
  std::vector<LinkSetting> link_settings;
  Time timeline = 0;                       // time-series interval; 0 = none
  bool timeline_flows = false;             // also per (src, dst) host pair
  std::vector<std::string> timeline_links; // wire bytes per interval of these links
  bool timeline_queues = false;            // and their output queues at every interval's end
  bool timeline_senders = false;           // log of every sender's departures and state

  uint32_t effective_qps_per_pair() const { return qps_per_pair ? qps_per_pair : topo.planes; }
};

// Sets one option; an error names the option.
Status set_option(Config &c, const std::string &key, const std::string &value);
// Applies a scenario file; errors carry the file name and line.
Status load_scenario(Config &c, const std::string &path);
// Checks the whole configuration, fills derived defaults (PFC thresholds);
// the error is the first problem found.
Status validate(Config &c);
// Option reference, one line per option.
void print_options(std::FILE *out);

// Value parsers (exposed for tests).  Sizes: plain bytes or K/M/G (10^3..)
// and KiB/MiB/GiB (2^10..); times: ps/ns/us/ms/s, plain numbers are ns.
bool parse_bytes(const std::string &s, uint64_t &out);
bool parse_time(const std::string &s, Time &out);

} // namespace mroce::sim
