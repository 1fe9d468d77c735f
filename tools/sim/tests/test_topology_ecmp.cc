// Topology construction and ECMP: shapes, names, routes, hash spread and
// per-flow stability.
#include "ecmp.h"
#include "network.h"
#include "rng.h"
#include "topology.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace mroce::sim;

namespace {

uint32_t count_kind(const Network &net, NodeKind k) {
  uint32_t n = 0;
  for (const Node &node : net.nodes())
    n += node.kind == k;
  return n;
}

// Follows routes hop by hop from a host port; returns the destination host
// reached or -1, and the number of switches crossed.
int walk(const Network &net, uint32_t src, uint32_t port, uint32_t dst, int &hops) {
  FiveTuple t;
  t.src_ip = host_address(src, port);
  t.dst_ip = host_address(dst, port);
  t.src_port = 0xc123;
  t.dst_port = 4791;
  const uint32_t first = net.nodes()[net.host_node(src)].ports[port];
  uint32_t node = net.ports()[net.ports()[first].peer].node;
  hops = 0;
  while (net.nodes()[node].kind == NodeKind::kSwitch && hops < 16) {
    ++hops;
    const int out = net.route(node, t);
    if (out < 0)
      return -1;
    node = net.ports()[net.ports()[out].peer].node;
  }
  const Node &n = net.nodes()[node];
  return n.kind == NodeKind::kHost ? static_cast<int>(n.id) : -1;
}

} // namespace

TEST(Topology, FatTreeShapeAndRoutes) {
  TopologyParams tp;
  tp.hosts = 64;
  tp.hosts_per_leaf = 8;
  Network net(FabricParams{});
  Topology topo;
  ASSERT_TRUE(build_topology(tp, net, topo).ok());
  EXPECT_EQ(topo.leaves_per_plane, 8u);
  EXPECT_EQ(topo.spines_per_plane, 8u); // 1:1
  EXPECT_EQ(count_kind(net, NodeKind::kHost), 64u);
  EXPECT_EQ(count_kind(net, NodeKind::kSwitch), 16u);
  EXPECT_EQ(topo.host_links.size(), 64u);
  EXPECT_EQ(topo.core_links.size(), 64u); // 8 leaves x 8 spines
  const uint32_t leaf0 = topo.switch_nodes[0];
  EXPECT_EQ(net.nodes()[leaf0].name, "p0.leaf0");
  EXPECT_EQ(net.next_hops(leaf0, 3).size(), 1u);  // local host: down
  EXPECT_EQ(net.next_hops(leaf0, 40).size(), 8u); // remote: any spine
  for (uint32_t s = 0; s < 64; s += 7)
    for (uint32_t d = 0; d < 64; d += 5) {
      if (s == d)
        continue;
      int hops;
      EXPECT_EQ(walk(net, s, 0, d, hops), static_cast<int>(d));
      EXPECT_EQ(hops, s / 8 == d / 8 ? 1 : 3);
    }
  EXPECT_GE(net.find_link("h9~p0.leaf1"), 0);
  EXPECT_GE(net.find_link("p0.spine3~p0.leaf2"), 0); // either order
  EXPECT_EQ(net.find_link("p0.leaf0~p0.leaf1"), -1);
}

TEST(Topology, OversubscriptionSetsTheSpineCount) {
  for (auto [ratio, spines] : {std::pair{1.0, 8u}, {2.0, 4u}, {4.0, 2u}, {8.0, 1u}}) {
    TopologyParams tp;
    tp.hosts = 32;
    tp.hosts_per_leaf = 8;
    tp.oversubscription = ratio;
    Network net(FabricParams{});
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    EXPECT_EQ(topo.spines_per_plane, spines) << "ratio " << ratio;
  }
  // Faster core links need fewer spines for the same ratio.
  TopologyParams tp;
  tp.hosts = 32;
  tp.hosts_per_leaf = 8;
  tp.core_rate_bps = 4 * tp.host_rate_bps;
  Network net(FabricParams{});
  Topology topo;
  ASSERT_TRUE(build_topology(tp, net, topo).ok());
  EXPECT_EQ(topo.spines_per_plane, 2u);
}

TEST(Topology, MultiplaneHostsHaveOnePortPerPlane) {
  TopologyParams tp;
  tp.hosts = 16;
  tp.hosts_per_leaf = 4;
  tp.planes = 4;
  Network net(FabricParams{});
  Topology topo;
  ASSERT_TRUE(build_topology(tp, net, topo).ok());
  EXPECT_EQ(count_kind(net, NodeKind::kSwitch), 4u * (4 + 4));
  for (uint32_t h = 0; h < 16; ++h) {
    ASSERT_EQ(net.num_host_ports(h), 4u);
    for (uint32_t p = 0; p < 4; ++p) {
      const Port &port = net.ports()[net.nodes()[net.host_node(h)].ports[p]];
      const Node &sw = net.nodes()[net.ports()[port.peer].node];
      EXPECT_EQ(sw.plane, p); // port p is on plane p
      int hops;
      EXPECT_EQ(walk(net, h, p, (h + 5) % 16, hops), static_cast<int>((h + 5) % 16));
    }
  }
  for (uint32_t p = 0; p < 4; ++p)
    EXPECT_EQ(topo.plane_links[p].size(), 16u + 4 * 4);
  // Planes share nothing: no switch links to a switch of another plane.
  for (const Link &l : net.links()) {
    const Node &a = net.nodes()[net.ports()[l.port_a].node];
    const Node &b = net.nodes()[net.ports()[l.port_b].node];
    if (a.kind == NodeKind::kSwitch && b.kind == NodeKind::kSwitch) {
      EXPECT_EQ(a.plane, b.plane);
    }
  }
}

TEST(Topology, SimpleShapes) {
  {
    TopologyParams tp;
    tp.kind = TopologyKind::kPair;
    tp.hosts = 2;
    tp.planes = 2;
    Network net(FabricParams{});
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    EXPECT_EQ(net.links().size(), 2u);
    EXPECT_EQ(count_kind(net, NodeKind::kSwitch), 0u);
    EXPECT_EQ(net.links()[1].name, "h0~h1#1");
  }
  {
    TopologyParams tp;
    tp.kind = TopologyKind::kDumbbell;
    tp.hosts = 6;
    Network net(FabricParams{});
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    EXPECT_EQ(count_kind(net, NodeKind::kSwitch), 2u);
    EXPECT_EQ(topo.core_links.size(), 1u);
    int hops;
    EXPECT_EQ(walk(net, 0, 0, 5, hops), 5);
    EXPECT_EQ(hops, 2);
  }
  {
    TopologyParams tp;
    tp.kind = TopologyKind::kStar;
    tp.hosts = 5;
    Network net(FabricParams{});
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    EXPECT_EQ(count_kind(net, NodeKind::kSwitch), 1u);
    EXPECT_EQ(net.links().size(), 5u);
  }
}

TEST(Topology, RejectsImpossibleShapes) {
  auto build = [](TopologyParams tp) {
    Network net(FabricParams{});
    Topology topo;
    return build_topology(tp, net, topo);
  };
  TopologyParams tp;
  tp.kind = TopologyKind::kPair;
  tp.hosts = 3;
  EXPECT_FALSE(build(tp).ok());
  tp = TopologyParams{};
  tp.planes = 0;
  EXPECT_FALSE(build(tp).ok());
  tp = TopologyParams{};
  tp.hosts = 1;
  EXPECT_FALSE(build(tp).ok());
  tp = TopologyParams{};
  tp.oversubscription = 0;
  EXPECT_FALSE(build(tp).ok());
}

TEST(Ecmp, SpreadsFlowsEvenlyOverNextHops) {
  Rng rng(99);
  for (uint32_t n : {2u, 3u, 8u, 16u}) {
    std::vector<int> hist(n, 0);
    const int flows = 160000;
    for (int i = 0; i < flows; ++i) {
      FiveTuple t;
      t.src_ip = host_address(static_cast<uint32_t>(rng.below(64)), 0);
      t.dst_ip = host_address(static_cast<uint32_t>(rng.below(64)), 0);
      t.src_port = static_cast<uint16_t>(rng.next());
      t.dst_port = 4791;
      ++hist[ecmp_select(ecmp_hash(t, 0x1234), n)];
    }
    const double mean = static_cast<double>(flows) / n;
    for (int h : hist)
      EXPECT_NEAR(h, mean, mean * 0.03) << n << " next hops";
  }
}

TEST(Ecmp, SourcePortAloneSpreadsOneHostPair) {
  // What multipath transports rely on: same hosts, varying UDP source port.
  std::vector<int> hist(8, 0);
  for (uint32_t sport = 0xc000; sport < 0xc000 + 8000; ++sport) {
    FiveTuple t;
    t.src_ip = host_address(1, 0);
    t.dst_ip = host_address(2, 0);
    t.src_port = static_cast<uint16_t>(sport);
    t.dst_port = 4791;
    ++hist[ecmp_select(ecmp_hash(t, 77), 8)];
  }
  for (int h : hist)
    EXPECT_NEAR(h, 1000, 120);
}

TEST(Ecmp, StablePerFlowAndSeedable) {
  FiveTuple t;
  t.src_ip = host_address(3, 1);
  t.dst_ip = host_address(9, 1);
  t.src_port = 0xc555;
  t.dst_port = 4791;
  const uint64_t h = ecmp_hash(t, 42);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(ecmp_hash(t, 42), h);
  // Another seed re-shuffles flows over next hops.
  int moved = 0;
  for (uint16_t p = 0; p < 1000; ++p) {
    t.src_port = p;
    moved += ecmp_select(ecmp_hash(t, 42), 8) != ecmp_select(ecmp_hash(t, 43), 8);
  }
  EXPECT_GT(moved, 800); // ~7/8 expected
  // Any field of the tuple matters.
  FiveTuple u = t;
  u.dst_port = 4792;
  EXPECT_NE(ecmp_hash(u, 42), ecmp_hash(t, 42));
}

TEST(Ecmp, SwitchesUseTheirOwnSeedsUnlessTold) {
  TopologyParams tp;
  tp.hosts = 16;
  tp.hosts_per_leaf = 4;
  for (const bool per_switch : {true, false}) {
    FabricParams fp;
    fp.ecmp_seed_per_switch = per_switch;
    Network net(fp);
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    std::set<uint64_t> seeds;
    for (uint32_t s : topo.switch_nodes)
      seeds.insert(net.ecmp_seed(s));
    EXPECT_EQ(seeds.size(), per_switch ? topo.switch_nodes.size() : 1u);
    // The same network built twice routes identically.
    Network again(fp);
    Topology topo2;
    ASSERT_TRUE(build_topology(tp, again, topo2).ok());
    for (uint32_t s : topo.switch_nodes)
      EXPECT_EQ(net.ecmp_seed(s), again.ecmp_seed(s));
  }
}
