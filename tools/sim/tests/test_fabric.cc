// Fabric behaviour packet by packet: switch output queues, ECN marking,
// drop-tail, random link loss, PFC, link up/down and rerouting.
#include "blast_transport.h"
#include "network.h"
#include "topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

using namespace mroce::sim;
using mroce::sim::test::BlastTransport;

namespace {

struct Rig {
  Network net;
  Topology topo;
  std::vector<std::unique_ptr<BlastTransport>> hosts;

  Rig(const TopologyParams &tp, const FabricParams &fp) : net(fp) {
    const Status st = build_topology(tp, net, topo);
    EXPECT_TRUE(st.ok()) << st.message();
    for (uint32_t h = 0; h < net.num_hosts(); ++h) {
      hosts.push_back(std::make_unique<BlastTransport>(net.env(h)));
      net.set_transport(h, hosts.back().get());
    }
  }
  BlastTransport &h(uint32_t i) { return *hosts[i]; }
};

FabricParams quiet() {
  FabricParams fp;
  fp.sw.jitter = 0; // exact timing for packet-level assertions
  return fp;
}

// h0 -> left switch -(10G)-> right switch -> h1, hosts at 100G.
TopologyParams bottleneck() {
  TopologyParams tp;
  tp.kind = TopologyKind::kDumbbell;
  tp.hosts = 2;
  tp.host_rate_bps = 100'000'000'000ULL;
  tp.core_rate_bps = 10'000'000'000ULL;
  return tp;
}

bool received(const BlastTransport &t, uint32_t seq) {
  return std::any_of(t.rx.begin(), t.rx.end(), [&](const auto &r) { return r.seq == seq; });
}

} // namespace

TEST(Switch, DropTailBoundsTheQueueAndKeepsFifoOrder) {
  FabricParams fp = quiet();
  fp.sw.buffer_bytes = 10 * 1000;
  fp.sw.ecn_k_bytes = 1 << 30; // no marking here
  Rig rig(bottleneck(), fp);
  rig.h(0).blast(1, 100, 1000);
  rig.net.run();

  const auto &rx = rig.h(1).rx;
  const auto &c = rig.net.counters();
  // Everything sent is either received or dropped by drop-tail.
  EXPECT_EQ(rx.size() + c.drops[kDropBuffer], 100u);
  EXPECT_EQ(c.packets_dropped(), c.drops[kDropBuffer]);
  // 10 packets fit in the buffer and one is on the wire: the head of the
  // burst always gets through; the tail is what gets dropped.
  for (uint32_t s = 0; s <= 11; ++s)
    EXPECT_TRUE(received(rig.h(1), s)) << "seq " << s;
  // Arrivals are 10x faster than departures: ~1 in 10 later ones fits.
  EXPECT_GE(rx.size(), 19u);
  EXPECT_LE(rx.size(), 23u);
  EXPECT_LE(c.max_queue_bytes, fp.sw.buffer_bytes);
  EXPECT_GE(c.max_queue_bytes, fp.sw.buffer_bytes - 1000);
  for (size_t i = 1; i < rx.size(); ++i)
    EXPECT_LT(rx[i - 1].seq, rx[i].seq) << "reordered";
}

TEST(Switch, NoDropWhenTheBurstFits) {
  FabricParams fp = quiet();
  fp.sw.buffer_bytes = 100 * 1000;
  Rig rig(bottleneck(), fp);
  rig.h(0).blast(1, 90, 1000);
  rig.net.run();
  EXPECT_EQ(rig.h(1).rx.size(), 90u);
  EXPECT_EQ(rig.net.counters().packets_dropped(), 0u);
}

TEST(Switch, MarksCeOnlyOnEctPacketsAboveK) {
  FabricParams fp = quiet();
  fp.sw.buffer_bytes = 1 << 20;
  fp.sw.ecn_k_bytes = 3 * 1000 - 1; // the 4th queued packet sees depth 3000 > K
  Rig rig(bottleneck(), fp);
  rig.h(0).alternate_ecn(true); // odd sequence numbers are Not-ECT
  rig.h(0).blast(1, 60, 1000);
  rig.net.run();

  const auto &rx = rig.h(1).rx;
  ASSERT_EQ(rx.size(), 60u);
  uint64_t ce = 0;
  for (const auto &r : rx) {
    // p0 goes straight to the wire; p1..p3 find 0, 1000, 2000 bytes queued;
    // from p4 on the queue only grows (arrivals 10x faster than departures).
    if (r.seq & 1)
      EXPECT_EQ(r.ecn, kNotEct) << "Not-ECT packet " << r.seq << " was marked";
    else if (r.seq < 4)
      EXPECT_EQ(r.ecn, kEct0) << "seq " << r.seq;
    else
      EXPECT_EQ(r.ecn, kCe) << "seq " << r.seq;
    ce += r.ecn == kCe;
  }
  EXPECT_EQ(rig.net.counters().ecn_marks, ce);
}

TEST(Switch, RedRampMarksAFractionBetweenKAndKmax) {
  FabricParams fp = quiet();
  fp.sw.buffer_bytes = 1 << 20;
  fp.sw.ecn_k_bytes = 0;
  fp.sw.ecn_kmax_bytes = 1000 * 1000;
  fp.sw.ecn_pmax = 1.0;
  Rig rig(bottleneck(), fp);
  rig.h(0).blast(1, 500, 1000);
  rig.net.run();
  // Packet i finds ~0.9 * i KB queued, so it is marked with p ~ 0.0009 i:
  // ~112 marks expected over 500 packets (sd ~ 9).
  const uint64_t marks = rig.net.counters().ecn_marks;
  EXPECT_GT(marks, 70u);
  EXPECT_LT(marks, 160u);
}

TEST(Link, RandomLossRateMatchesTheFraction) {
  TopologyParams tp;
  tp.kind = TopologyKind::kPair;
  tp.hosts = 2;
  Rig rig(tp, quiet());
  const Link &l = rig.net.links()[0];
  rig.net.channel(l.port_a).set_loss(0.1); // h0 -> h1 only
  rig.h(0).blast(1, 200000, 200);
  rig.h(1).blast(0, 1000, 200);
  rig.net.run();
  const double got = static_cast<double>(rig.h(1).rx.size()) / 200000;
  EXPECT_NEAR(got, 0.9, 0.005); // sd 0.0007
  EXPECT_EQ(rig.net.counters().drops[kDropRandom], 200000u - rig.h(1).rx.size());
  EXPECT_EQ(rig.h(0).rx.size(), 1000u); // the other direction is clean
}

TEST(Link, LossPlacementSelectsChannels) {
  TopologyParams tp;
  tp.hosts = 8;
  tp.hosts_per_leaf = 4;
  for (auto where : {LossPlacement::kLastHop, LossPlacement::kAll, LossPlacement::kCore}) {
    Network net(quiet());
    Topology topo;
    ASSERT_TRUE(build_topology(tp, net, topo).ok());
    apply_loss(net, where, 0.02);
    for (const Port &p : net.ports()) {
      const bool from_host = net.nodes()[p.node].kind == NodeKind::kHost;
      const bool to_host = net.nodes()[net.ports()[p.peer].node].kind == NodeKind::kHost;
      bool want = where == LossPlacement::kAll || (where == LossPlacement::kLastHop && to_host) ||
                  (where == LossPlacement::kCore && !from_host && !to_host);
      EXPECT_EQ(p.ch.loss, want ? 0.02 : 0.0);
    }
  }
}

TEST(Link, DownDropsEverythingOnItAndUpRestores) {
  TopologyParams tp;
  tp.kind = TopologyKind::kPair;
  tp.hosts = 2;
  Rig rig(tp, quiet());
  rig.net.schedule_link_state(10 * kUs, 0, false);
  rig.net.schedule_link_state(20 * kUs, 0, true);
  rig.h(0).blast(1, 1000, 1000); // 80 ns each at 100G: 80 us of traffic
  rig.net.run();
  const auto &c = rig.net.counters();
  EXPECT_GT(c.drops[kDropLinkDown], 100u); // ~10 us worth
  EXPECT_EQ(rig.h(1).rx.size() + c.drops[kDropLinkDown], 1000u);
  EXPECT_EQ(rig.h(1).rx.back().seq, 999u);
  for (const auto &r : rig.h(1).rx)
    EXPECT_TRUE(r.at < 10 * kUs + kUs || r.at > 20 * kUs) << "delivered while down";
}

namespace {
// A 4-host fat-tree: h0,h1 on leaf0, h2,h3 on leaf1, two spines.
TopologyParams small_fattree() {
  TopologyParams tp;
  tp.hosts = 4;
  tp.hosts_per_leaf = 2;
  tp.spines = 2;
  return tp;
}
} // namespace

TEST(Link, FailureBlackholesUntilRoutesAreRecomputed) {
  for (const bool reroute : {false, true}) {
    FabricParams fp = quiet();
    fp.reroute_delay = reroute ? 1 * kUs : kNever;
    Rig rig(small_fattree(), fp);
    const uint32_t leaf0 = rig.topo.switch_nodes[0];
    FiveTuple t;
    t.src_ip = host_address(0, 0);
    t.dst_ip = host_address(2, 0);
    t.src_port = 0xc000;
    t.dst_port = 4791;
    const int out = rig.net.route(leaf0, t);
    ASSERT_GE(out, 0);
    const uint32_t link = rig.net.port(out).ch.link;
    EXPECT_EQ(rig.net.next_hops(leaf0, 2).size(), 2u);
    rig.net.schedule_link_state(5 * kUs, link, false);
    rig.h(0).blast(2, 500, 1000, kEct0, 0, 0xc000); // 40 us, one 5-tuple
    rig.net.run();
    const auto &rx = rig.h(2).rx;
    if (reroute) {
      EXPECT_EQ(rig.net.next_hops(leaf0, 2).size(), 1u);
      EXPECT_EQ(rx.back().seq, 499u); // the flow moved to the other spine
      EXPECT_LT(rig.net.counters().drops[kDropLinkDown], 50u);
    } else {
      EXPECT_EQ(rig.net.next_hops(leaf0, 2).size(), 2u);
      EXPECT_LT(rx.back().seq, 100u); // everything after the failure is lost
    }
  }
}

TEST(Pfc, PausesUpstreamInsteadOfDropping) {
  TopologyParams tp;
  tp.kind = TopologyKind::kStar;
  tp.hosts = 3;
  for (const bool pfc : {false, true}) {
    FabricParams fp = quiet();
    fp.sw.buffer_bytes = 64 * 1000;
    fp.sw.pfc = pfc;
    fp.sw.pfc_xoff_bytes = 32 * 1000;
    fp.sw.pfc_xon_bytes = 16 * 1000;
    Rig rig(tp, fp);
    rig.h(1).blast(0, 2000, 1000);
    rig.h(2).blast(0, 2000, 1000);
    rig.net.run();
    const auto &c = rig.net.counters();
    if (pfc) {
      EXPECT_EQ(c.packets_dropped(), 0u);
      EXPECT_EQ(rig.h(0).rx.size(), 4000u);
      EXPECT_GT(c.pfc_pauses, 0u);
      EXPECT_EQ(c.pfc_pauses, c.pfc_resumes);
    } else {
      EXPECT_GT(c.drops[kDropBuffer], 0u);
      EXPECT_EQ(c.pfc_pauses, 0u);
    }
  }
}
