#include "topology.h"

#include <algorithm>
#include <cmath>

namespace mroce::sim {

std::string topology_name(TopologyKind k) {
  switch (k) {
  case TopologyKind::kPair:
    return "pair";
  case TopologyKind::kDumbbell:
    return "dumbbell";
  case TopologyKind::kStar:
    return "star";
  case TopologyKind::kFatTree:
    return "fattree";
  }
  return "?";
}

bool parse_topology(const std::string &s, TopologyKind &k) {
  for (auto c : {TopologyKind::kPair, TopologyKind::kDumbbell, TopologyKind::kStar,
                 TopologyKind::kFatTree}) {
    if (s == topology_name(c)) {
      k = c;
      return true;
    }
  }
  return false;
}

namespace {

std::string plane_prefix(uint32_t plane) { return "p" + std::to_string(plane) + "."; }

struct Builder {
  Network &net;
  Topology &topo;
  const TopologyParams &tp;
  uint64_t core_rate() const { return tp.core_rate_bps ? tp.core_rate_bps : tp.host_rate_bps; }

  uint32_t sw(const std::string &name, uint32_t plane) {
    const uint32_t n = net.add_switch(plane_prefix(plane) + name, plane);
    topo.switch_nodes.push_back(n);
    return n;
  }
  void host_link(uint32_t host, uint32_t sw_node, uint32_t plane) {
    const uint32_t l = net.connect(topo.host_nodes[host], sw_node, tp.host_rate_bps, tp.link_delay);
    topo.host_links.push_back(l);
    topo.plane_links[plane].push_back(l);
  }
  void core_link(uint32_t a, uint32_t b, uint32_t plane) {
    const uint32_t l = net.connect(a, b, core_rate(), tp.link_delay);
    topo.core_links.push_back(l);
    topo.plane_links[plane].push_back(l);
  }
};

} // namespace

Status build_topology(const TopologyParams &tp, Network &net, Topology &topo) {
  if (tp.hosts < 2)
    return Status::error("a topology needs at least 2 hosts");
  if (tp.hosts > kMaxHosts)
    return Status::error("at most " + std::to_string(kMaxHosts) + " hosts");
  if (tp.planes == 0 || tp.planes > 255)
    return Status::error("planes must be in [1, 255]");
  if (tp.host_rate_bps == 0)
    return Status::error("link rate must be positive");
  if (tp.kind == TopologyKind::kPair && tp.hosts != 2)
    return Status::error("topology pair needs exactly 2 hosts");
  if (tp.kind == TopologyKind::kFatTree && !(tp.oversubscription > 0))
    return Status::error("oversubscription must be positive");
  if (!net.nodes().empty())
    return Status::error("network is not empty");

  topo = Topology{};
  topo.hosts = tp.hosts;
  topo.planes = tp.planes;
  topo.plane_links.resize(tp.planes);
  for (uint32_t h = 0; h < tp.hosts; ++h)
    topo.host_nodes.push_back(net.add_host("h" + std::to_string(h)));

  Builder b{net, topo, tp};
  // Host ports are created plane by plane, so host port p is on plane p.
  switch (tp.kind) {
  case TopologyKind::kPair:
    for (uint32_t p = 0; p < tp.planes; ++p) {
      const uint32_t l =
          net.connect(topo.host_nodes[0], topo.host_nodes[1], tp.host_rate_bps, tp.link_delay);
      topo.host_links.push_back(l);
      topo.plane_links[p].push_back(l);
    }
    break;
  case TopologyKind::kStar:
    for (uint32_t p = 0; p < tp.planes; ++p) {
      const uint32_t s = b.sw("sw", p);
      for (uint32_t h = 0; h < tp.hosts; ++h)
        b.host_link(h, s, p);
    }
    break;
  case TopologyKind::kDumbbell:
    for (uint32_t p = 0; p < tp.planes; ++p) {
      const uint32_t left = b.sw("left", p);
      const uint32_t right = b.sw("right", p);
      for (uint32_t h = 0; h < tp.hosts; ++h)
        b.host_link(h, h < tp.hosts / 2 ? left : right, p);
      b.core_link(left, right, p);
    }
    break;
  case TopologyKind::kFatTree: {
    const uint32_t hpl =
        tp.hosts_per_leaf ? tp.hosts_per_leaf : std::min(8u, std::max(1u, tp.hosts / 2));
    const uint32_t leaves = (tp.hosts + hpl - 1) / hpl;
    uint32_t spines = tp.spines;
    if (spines == 0) {
      const double want = static_cast<double>(hpl) * static_cast<double>(tp.host_rate_bps) /
                          (tp.oversubscription * static_cast<double>(b.core_rate()));
      spines = static_cast<uint32_t>(std::max(1.0, std::round(want)));
    }
    if (leaves == 1)
      spines = 0; // one leaf: nothing to spine
    topo.hosts_per_leaf = hpl;
    topo.leaves_per_plane = leaves;
    topo.spines_per_plane = spines;
    for (uint32_t p = 0; p < tp.planes; ++p) {
      std::vector<uint32_t> leaf(leaves), spine(spines);
      for (uint32_t i = 0; i < leaves; ++i)
        leaf[i] = b.sw("leaf" + std::to_string(i), p);
      for (uint32_t i = 0; i < spines; ++i)
        spine[i] = b.sw("spine" + std::to_string(i), p);
      for (uint32_t h = 0; h < tp.hosts; ++h)
        b.host_link(h, leaf[h / hpl], p);
      for (uint32_t i = 0; i < leaves; ++i)
        for (uint32_t s = 0; s < spines; ++s)
          b.core_link(leaf[i], spine[s], p);
    }
    break;
  }
  }
  net.finalize();
  return {};
}

void apply_loss(Network &net, LossPlacement where, double loss) {
  const auto &nodes = net.nodes();
  for (const Link &l : net.links()) {
    for (uint32_t port : {l.port_a, l.port_b}) {
      const Port &pt = net.ports()[port];
      const bool from_host = nodes[pt.node].kind == NodeKind::kHost;
      const bool to_host = nodes[net.ports()[pt.peer].node].kind == NodeKind::kHost;
      bool apply = false;
      switch (where) {
      case LossPlacement::kLastHop:
        apply = to_host;
        break;
      case LossPlacement::kAll:
        apply = true;
        break;
      case LossPlacement::kCore:
        apply = !from_host && !to_host;
        break;
      }
      if (apply)
        net.channel(port).set_loss(loss);
    }
  }
}

} // namespace mroce::sim
