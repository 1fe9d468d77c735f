// Shortest-path ECMP routing tables, computed from the links that are up.
// Hosts never forward, so each plane is routed on its own.  Every switch gets,
// per destination host, the group of output ports that lead one hop closer.
#include "network.h"

#include <limits>
#include <map>

namespace mroce::sim {

void Network::recompute_routes() {
  constexpr uint32_t kFar = std::numeric_limits<uint32_t>::max();
  const uint32_t nhosts = num_hosts();
  std::vector<std::map<std::vector<uint32_t>, uint32_t>> dedupe(switches_.size());
  for (auto &sw : switches_) {
    sw.route.assign(nhosts, kNoGroup);
    sw.groups.clear();
  }
  std::vector<uint32_t> dist(nodes_.size(), kFar);
  std::vector<uint32_t> order;
  std::vector<uint32_t> hops;
  for (uint32_t h = 0; h < nhosts; ++h) {
    const uint32_t hnode = hosts_[h];
    std::fill(dist.begin(), dist.end(), kFar);
    order.clear();
    dist[hnode] = 0;
    // Breadth-first from the destination over channels pointing at it.
    for (uint32_t p : nodes_[hnode].ports) {
      const Port &towards = ports_[ports_[p].peer]; // neighbour -> host
      const uint32_t n = towards.node;
      if (towards.ch.up && nodes_[n].kind == NodeKind::kSwitch && dist[n] == kFar) {
        dist[n] = 1;
        order.push_back(n);
      }
    }
    for (size_t i = 0; i < order.size(); ++i) {
      const uint32_t u = order[i];
      for (uint32_t p : nodes_[u].ports) {
        const Port &back = ports_[ports_[p].peer]; // v -> u
        const uint32_t v = back.node;
        if (back.ch.up && nodes_[v].kind == NodeKind::kSwitch && dist[v] == kFar) {
          dist[v] = dist[u] + 1;
          order.push_back(v);
        }
      }
    }
    for (uint32_t u : order) {
      hops.clear();
      for (uint32_t p : nodes_[u].ports) {
        const Port &out = ports_[p];
        const uint32_t w = ports_[out.peer].node;
        if (out.ch.up && dist[w] != kFar && dist[w] + 1 == dist[u] &&
            (w == hnode || nodes_[w].kind == NodeKind::kSwitch))
          hops.push_back(p);
      }
      if (hops.empty())
        continue;
      SwitchState &sw = switches_[nodes_[u].id];
      auto [it, fresh] =
          dedupe[nodes_[u].id].try_emplace(hops, static_cast<uint32_t>(sw.groups.size()));
      if (fresh)
        sw.groups.push_back(hops);
      sw.route[h] = it->second;
    }
  }
  routes_.assign(switches_.size() * nhosts, Route{});
  route_hops_.clear();
  std::vector<uint32_t> first;
  for (size_t s = 0; s < switches_.size(); ++s) {
    const SwitchState &sw = switches_[s];
    first.clear();
    for (const auto &g : sw.groups) {
      first.push_back(static_cast<uint32_t>(route_hops_.size()));
      route_hops_.insert(route_hops_.end(), g.begin(), g.end());
    }
    for (uint32_t h = 0; h < nhosts; ++h)
      if (const uint32_t g = sw.route[h]; g != kNoGroup)
        routes_[s * nhosts + h] = {first[g], static_cast<uint32_t>(sw.groups[g].size())};
  }
}

} // namespace mroce::sim
