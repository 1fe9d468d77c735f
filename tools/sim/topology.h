// Topology builders.  Every topology is built once per plane: with P planes a
// host has P ports, port p attached to plane p, and planes share nothing.
//
//   pair      two hosts, one direct link per plane
//   dumbbell  hosts split over two switches joined by one bottleneck link
//   star      every host on one switch
//   fattree   2-tier leaf/spine, every leaf linked to every spine; the spine
//             count sets the oversubscription
#pragma once

#include "network.h"
#include "sim_time.h"
#include "status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mroce::sim {

enum class TopologyKind : uint8_t { kPair, kDumbbell, kStar, kFatTree };

struct TopologyParams {
  TopologyKind kind = TopologyKind::kFatTree;
  uint32_t hosts = 8;
  uint32_t planes = 1;
  uint32_t hosts_per_leaf = 0;                 // 0: min(8, max(1, hosts / 2))
  uint32_t spines = 0;                         // per plane; 0: from the oversubscription ratio
  double oversubscription = 1.0;               // leaf downlink / uplink capacity
  uint64_t host_rate_bps = 100'000'000'000ULL; // per host port
  uint64_t core_rate_bps = 0;                  // switch-switch links; 0: host rate
  Time link_delay = 100 * kNs;                 // propagation, every link
};

// What was built, for the simulation and the tests.
struct Topology {
  uint32_t hosts = 0;
  uint32_t planes = 0;
  uint32_t hosts_per_leaf = 0;      // fattree
  uint32_t leaves_per_plane = 0;    // fattree
  uint32_t spines_per_plane = 0;    // fattree
  std::vector<uint32_t> host_nodes; // host index -> node
  std::vector<uint32_t> switch_nodes;
  std::vector<uint32_t> host_links;               // every link with a host end
  std::vector<uint32_t> core_links;               // every switch-switch link
  std::vector<std::vector<uint32_t>> plane_links; // plane -> its links
};

// Builds into an empty network and finalises it.
Status build_topology(const TopologyParams &params, Network &net, Topology &out);

enum class LossPlacement : uint8_t {
  kLastHop, // on links into hosts: every packet sees `loss` once, end to end
  kAll,     // on every channel: a packet sees it on every hop
  kCore,    // on switch-switch channels only: paths differ
};

// Sets the random loss fraction of the channels `where` selects.
void apply_loss(Network &net, LossPlacement where, double loss);

std::string topology_name(TopologyKind k);
bool parse_topology(const std::string &s, TopologyKind &k);

} // namespace mroce::sim
