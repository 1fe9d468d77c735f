// The MetaRoCE transport: the protocol core of kernel/core driven through
// the simulator's transport interface, against the same fabric and
// workloads as the RoCEv2 baseline.
#include "simulation.h"

#include <gtest/gtest.h>

using namespace mroce::sim;

namespace {

Config cfg(const char *transport, uint32_t hosts, WorkloadKind w, uint64_t size, double loss = 0) {
  Config c;
  c.transport = transport;
  c.topo.hosts = hosts;
  c.workload = w;
  c.size = size;
  c.loss = loss;
  return c;
}

SimResult run(const Config &c, std::unique_ptr<Simulation> *keep = nullptr) {
  std::string err;
  auto sim = Simulation::create(c, err);
  EXPECT_NE(sim, nullptr) << err;
  if (!sim)
    return {};
  SimResult r = sim->run();
  if (keep)
    *keep = std::move(sim);
  return r;
}

void expect_exactly_once(const SimResult &r) {
  EXPECT_TRUE(r.completed) << result_json(r);
  EXPECT_EQ(r.msgs.bytes_delivered, r.bytes_expected);
  EXPECT_EQ(r.msgs.duplicate_bytes, 0u);
  EXPECT_EQ(r.msgs.duplicate_deliveries, 0u);
  EXPECT_EQ(r.msgs.incomplete_deliveries, 0u);
  EXPECT_EQ(r.msgs.bad_reports, 0u);
  EXPECT_EQ(r.msgs.messages_delivered, r.messages_expected);
  EXPECT_EQ(r.msgs.send_completions, r.messages_expected);
  EXPECT_EQ(r.transport_stats.rejected_packets, 0u);
  // Dropped outside a window: only a late copy, so never more than were resent.
  EXPECT_LE(r.transport_stats.window_dropped, r.transport_stats.packets_retransmitted);
  // Conservation through the fabric.
  EXPECT_EQ(r.packets_in_flight_at_end, 0u);
  EXPECT_EQ(r.fabric.packets_sent, r.fabric.packets_received + r.fabric.packets_dropped());
  EXPECT_EQ(r.fabric.payload_bytes_sent,
            r.fabric.payload_bytes_received + r.fabric.payload_bytes_dropped);
  EXPECT_EQ(r.fabric.payload_bytes_sent, r.bytes_expected + r.transport_stats.bytes_retransmitted);
}

} // namespace

TEST(MetaRoce, CleanRunIsCloseToLineRate) {
  Config c = cfg("metaroce", 2, WorkloadKind::kIncast, 16ull << 20);
  c.topo.kind = TopologyKind::kPair;
  const SimResult r = run(c);
  expect_exactly_once(r);
  // 4096 payload bytes per 66 + 72 + 4096 on the wire: 96.7% at most.
  EXPECT_GT(r.line_rate_fraction, 0.95);
  EXPECT_EQ(r.transport_stats.bytes_retransmitted, 0u);
}

TEST(MetaRoce, RecoversEveryByteOnceUnderOnePercentLoss) {
  for (auto w : {WorkloadKind::kAllReduce, WorkloadKind::kAllToAll, WorkloadKind::kPermutation}) {
    SCOPED_TRACE(workload_name(w));
    const SimResult r = run(cfg("metaroce", 8, w, 8ull << 20, 0.01));
    expect_exactly_once(r);
    EXPECT_GT(r.fabric.drops[kDropRandom], 0u);
    EXPECT_GT(r.transport_stats.bytes_retransmitted, 0u);
    // Selective repeat: what is resent is about what was lost (plus the
    // odd tail-loss probe), not everything in flight behind it.
    EXPECT_LT(r.transport_stats.bytes_retransmitted,
              2 * r.fabric.payload_bytes_dropped + (1u << 20));
  }
}

TEST(MetaRoce, BeatsGoBackNUnderLoss) {
  const SimResult m = run(cfg("metaroce", 8, WorkloadKind::kAllReduce, 16ull << 20, 0.01));
  const SimResult g = run(cfg("rocev2", 8, WorkloadKind::kAllReduce, 16ull << 20, 0.01));
  expect_exactly_once(m);
  ASSERT_TRUE(g.completed);
  EXPECT_GT(m.goodput_gbps, 1.1 * g.goodput_gbps);
  EXPECT_LT(m.transport_stats.bytes_retransmitted, g.transport_stats.bytes_retransmitted / 4);
}

TEST(MetaRoce, SameSeedSameRun) {
  Config c = cfg("metaroce", 8, WorkloadKind::kAllToAll, 4ull << 20, 0.01);
  c.topo.planes = 2;
  const SimResult a = run(c), b = run(c);
  EXPECT_EQ(result_json(a), result_json(b));
  c.fabric.seed = 2;
  EXPECT_NE(result_json(run(c)), result_json(a));
}

TEST(MetaRoce, OneConnectionSpraysOverEveryPath) {
  // Two hosts on different leaves, 4 spines: RoCEv2's single QP takes one
  // uplink, MetaRoCE's 8 paths (source ports) hash over all of them.
  for (const char *t : {"metaroce", "rocev2"}) {
    Config c = cfg(t, 2, WorkloadKind::kIncast, 16ull << 20);
    c.topo.hosts_per_leaf = 1;
    c.topo.spines = 4;
    c.qps_per_pair = 1;
    std::unique_ptr<Simulation> sim;
    const SimResult r = run(c, &sim);
    expect_exactly_once(r);
    // h1 sends; its leaf is the second switch.  Count h1's leaf uplinks.
    const Network &net = sim->network();
    const uint32_t leaf1 = sim->topology().switch_nodes[1];
    uint32_t used = 0;
    for (uint32_t p : net.nodes()[leaf1].ports) {
      const Port &port = net.ports()[p];
      if (net.nodes()[net.ports()[port.peer].node].kind == NodeKind::kSwitch &&
          port.tx_bytes > (1u << 20))
        ++used;
    }
    if (std::string(t) == "metaroce") {
      EXPECT_GE(used, 3u); // 8 source ports hashed onto 4 uplinks
    } else {
      EXPECT_EQ(used, 1u);
    }
  }
}

TEST(MetaRoce, MultiplaneUsesEveryPlane) {
  Config one = cfg("metaroce", 8, WorkloadKind::kAllToAll, 8ull << 20);
  Config four = one;
  four.topo.planes = 4;
  std::unique_ptr<Simulation> sim;
  const SimResult a = run(one);
  const SimResult b = run(four, &sim);
  expect_exactly_once(a);
  expect_exactly_once(b);
  EXPECT_GT(b.goodput_gbps, 3 * a.goodput_gbps);
  const Network &net = sim->network();
  for (uint32_t p = 0; p < 4; ++p)
    EXPECT_GT(net.ports()[net.nodes()[net.host_node(0)].ports[p]].tx_bytes, 1u << 20);
}

TEST(MetaRoce, SurvivesAPlaneFailureWhereRoceQpsDie) {
  for (const char *t : {"metaroce", "rocev2"}) {
    Config c = cfg(t, 8, WorkloadKind::kAllToAll, 32ull << 20);
    c.topo.planes = 4;
    c.link_events.push_back(LinkEvent{100 * kUs, false, "", 1});
    const SimResult r = run(c);
    if (std::string(t) == "metaroce") {
      expect_exactly_once(r);
      EXPECT_GT(r.fabric.drops[kDropLinkDown], 0u);
    } else {
      // RoCEv2 QPs are pinned to their plane: the ones on plane 1 fail.
      EXPECT_FALSE(r.completed);
      EXPECT_GT(r.transport_stats.failed_qps, 0u);
    }
  }
}

TEST(MetaRoce, RoutesAroundADeadLinkWithoutRerouting) {
  // A leaf-spine link dies and the fabric never reconverges: every path
  // hashed onto it times out and moves to a new source port.
  Config c = cfg("metaroce", 8, WorkloadKind::kAllToAll, 16ull << 20);
  c.topo.hosts_per_leaf = 4;
  c.link_events.push_back(LinkEvent{50 * kUs, false, "p0.leaf0~p0.spine1", -1});
  const SimResult r = run(c);
  expect_exactly_once(r);
  EXPECT_GT(r.transport_stats.paths_replaced, 0u);
  EXPECT_GT(r.transport_stats.timeouts, 0u);
}

TEST(MetaRoce, IncastCompletesWithReceiverHints) {
  Config c = cfg("metaroce", 16, WorkloadKind::kIncast, 4ull << 20);
  c.topo.kind = TopologyKind::kStar;
  std::unique_ptr<Simulation> sim;
  const SimResult r = run(c, &sim);
  expect_exactly_once(r);
  EXPECT_GT(r.line_rate_fraction, 0.8);
}

TEST(MetaRoce, IncastSettlesOnTheReceiversRateHints) {
  // 16 senders into one port: with the receiver's hints every sender ends
  // up paced at the same share; on ECN windows alone the rates keep
  // wandering.  The hints are computed from the payload capacity: with the
  // line rate they promise ~3% more than the port delivers and never settle.
  auto spread = [](Time share_epoch) {
    Config c = cfg("metaroce", 17, WorkloadKind::kIncast, 8ull << 20);
    c.topo.kind = TopologyKind::kStar;
    c.metaroce.share_epoch = share_epoch;
    c.timeline = 100 * kUs;
    c.timeline_flows = true;
    const SimResult r = run(c);
    expect_exactly_once(r);
    // Worst relative deviation from the mean, over 200-us windows in
    // 5..9 ms (every sender is still busy until ~11 ms).
    double worst = 0;
    for (size_t i = 50; i + 2 <= 90; i += 2) {
      std::vector<double> v;
      for (const TimelineFlow &f : r.timeline.flows)
        v.push_back(static_cast<double>(f.bytes[i] + f.bytes[i + 1]));
      double mean = 0;
      for (double x : v)
        mean += x / v.size();
      for (double x : v)
        worst = std::max(worst, std::abs(x - mean) / mean);
    }
    return worst;
  };
  const double hinted = spread(100 * kUs);
  const double unhinted = spread(0);
  EXPECT_LT(hinted, 0.06); // one 4 KiB packet in ~37 per window
  EXPECT_GT(unhinted, 0.15);
}

TEST(MetaRoce, IncastAcksAtOnceAndDrainsItsStartUpQueue) {
  // 16 senders with first windows of 8 packets (488 KiB, 5x the ECN
  // threshold) into one port.  The first ACK used to wait for the 20-us
  // delayed ACK (8 paths, one packet each, never reach ack_every), and the
  // hints, adding up to the port, drained the queue at ~1% of line rate:
  // first ACK at 24.5 us, queue <= K only from 208 us.  Now a sender's
  // first data is acknowledged at once, and the hints drop while the
  // receiver's data comes CE-marked.
  Config c = cfg("metaroce", 17, WorkloadKind::kIncast, 8ull << 20);
  c.topo.kind = TopologyKind::kStar;
  c.metaroce.init_window = 8;
  c.metaroce.grants = false; // the queue comes from the first windows
  c.timeline = 2 * kUs;
  c.timeline_links = {"h0~p0.sw"};
  c.timeline_queues = true;
  c.timeline_senders = true;
  const SimResult r = run(c);
  expect_exactly_once(r);
  Time first_ack = kNever;
  for (const TimelineSender &s : r.timeline.senders)
    first_ack = std::min(first_ack, s.first_ack);
  EXPECT_LT(first_ack, 8 * kUs); // one base RTT is 3.2 us
  ASSERT_EQ(r.timeline.links.size(), 1u);
  const std::vector<uint64_t> &q = r.timeline.links[0].queue_b_to_a;
  ASSERT_GT(q.size(), 2500u);
  uint64_t worst = 0;
  for (size_t i = 75; i < 2500; i++) // 150 us .. 5 ms
    worst = std::max(worst, q[i]);
  EXPECT_LE(worst, 100u << 10);
}

TEST(MetaRoce, GrantedIncastNeverQueuesAboveTheMarkingThreshold) {
  // 64 senders open their connections to one receiver at once.  Without
  // grants their first windows (64 x 2 packets, 5x the ECN threshold K)
  // meet in the receiver's port; with them each starts paced at capacity /
  // the receiver's 64 connections, its first packet at a random point of
  // one packet time, and the port's queue stays under K from the start.
  auto peak = [](bool grants) {
    Config c = cfg("metaroce", 65, WorkloadKind::kIncast, 256ull << 10);
    c.topo.kind = TopologyKind::kStar;
    c.metaroce.grants = grants;
    c.timeline = 2 * kUs;
    c.timeline_links = {"h0~p0.sw"};
    c.timeline_queues = true;
    const SimResult r = run(c);
    expect_exactly_once(r);
    EXPECT_EQ(r.fabric.packets_dropped(), 0u);
    EXPECT_EQ(r.timeline.links.size(), 1u);
    uint64_t worst = 0;
    for (uint64_t v : r.timeline.links.at(0).queue_b_to_a)
      worst = std::max(worst, v);
    return worst;
  };
  EXPECT_LE(peak(true), 50u << 10);
  EXPECT_GT(peak(false), 100u << 10);
}

TEST(MetaRoce, LossSweepStaysWithinItsBounds) {
  // The loss sweep of tools/sim/experiments/loss_sweep.py in small: MetaRoCE keeps
  // >= 90% of its lossless goodput at 1% loss and >= 50% at 10%, delivering
  // every byte once; go-back-N collapses where MetaRoCE does not.
  std::vector<double> m, g;
  for (double loss : {0.0, 0.01, 0.05, 0.1}) {
    SCOPED_TRACE(loss);
    const SimResult rm = run(cfg("metaroce", 8, WorkloadKind::kAllReduce, 16ull << 20, loss));
    expect_exactly_once(rm);
    m.push_back(rm.line_rate_fraction);
    const SimResult rg = run(cfg("rocev2", 8, WorkloadKind::kAllReduce, 16ull << 20, loss));
    ASSERT_TRUE(rg.completed);
    g.push_back(rg.line_rate_fraction);
  }
  EXPECT_GT(m[0], 0.93);
  EXPECT_GE(m[1], 0.90 * m[0]);
  EXPECT_GE(m[3], 0.50 * m[0]);
  for (size_t i = 1; i < m.size(); ++i)
    EXPECT_LE(m[i], m[i - 1] + 0.01) << "more loss, more goodput?";
  EXPECT_LT(g[2], 0.3 * g[0]);
  EXPECT_GT(m[2], 3 * g[2]);
}
