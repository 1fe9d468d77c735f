// Whole runs: determinism, conservation of bytes, workload semantics, and
// the message bookkeeping that catches double delivery.
#include "messages.h"
#include "simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace mroce::sim;

namespace {

Config cfg(uint32_t hosts, WorkloadKind w, uint64_t size, double loss = 0, uint64_t seed = 1) {
  Config c;
  c.topo.hosts = hosts;
  c.workload = w;
  c.size = size;
  c.loss = loss;
  c.fabric.seed = seed;
  return c;
}

std::unique_ptr<Simulation> make(Config c) {
  std::string err;
  auto sim = Simulation::create(c, err);
  EXPECT_NE(sim, nullptr) << err;
  return sim;
}

std::string json_of(Config c) {
  auto sim = make(c);
  return sim ? result_json(sim->run()) : "";
}

} // namespace

TEST(Determinism, SameSeedGivesIdenticalResults) {
  for (auto w : {WorkloadKind::kAllReduce, WorkloadKind::kAllToAll, WorkloadKind::kIncast,
                 WorkloadKind::kPermutation}) {
    Config c = cfg(8, w, 4ull << 20, 0.01, 42);
    c.topo.planes = 2;
    const std::string a = json_of(c);
    const std::string b = json_of(c);
    EXPECT_EQ(a, b) << workload_name(w);
    EXPECT_NE(a.find("\"completed\":true"), std::string::npos) << a;
  }
}

// The results without the seed they name: two runs must differ in what
// happened, not in the label.
TEST(Determinism, OtherSeedsGiveOtherRuns) {
  SimResult a = make(cfg(8, WorkloadKind::kPermutation, 4ull << 20, 0.01, 1))->run();
  SimResult b = make(cfg(8, WorkloadKind::kPermutation, 4ull << 20, 0.01, 2))->run();
  ASSERT_NE(a.seed, b.seed);
  b.seed = a.seed;
  EXPECT_NE(result_json(a), result_json(b));
}

TEST(Conservation, BytesSentEqualDeliveredPlusDropped) {
  std::vector<Config> runs;
  runs.push_back(cfg(8, WorkloadKind::kAllReduce, 4ull << 20));
  runs.push_back(cfg(8, WorkloadKind::kAllToAll, 4ull << 20, 0.02));
  runs.push_back(cfg(16, WorkloadKind::kIncast, 1ull << 20)); // buffer drops
  {
    Config c = cfg(8, WorkloadKind::kPermutation, 4ull << 20, 0.01);
    c.loss_at = LossPlacement::kAll;
    c.topo.planes = 2;
    runs.push_back(c);
  }
  {
    Config c = cfg(8, WorkloadKind::kAllToAll, 4ull << 20);
    c.fabric.reroute_delay = 50 * kUs;
    c.link_events.push_back(LinkEvent{30 * kUs, false, "p0.leaf0~p0.spine0", -1});
    c.link_events.push_back(LinkEvent{200 * kUs, true, "p0.leaf0~p0.spine0", -1});
    runs.push_back(c);
  }
  for (const Config &c : runs) {
    auto sim = make(c);
    ASSERT_NE(sim, nullptr);
    const SimResult r = sim->run();
    const FabricCounters &f = r.fabric;
    SCOPED_TRACE(result_json(r));
    EXPECT_TRUE(r.completed);
    EXPECT_EQ(r.packets_in_flight_at_end, 0u); // the run drained
    EXPECT_EQ(f.packets_sent, f.packets_received + f.packets_dropped());
    EXPECT_EQ(f.payload_bytes_sent, f.payload_bytes_received + f.payload_bytes_dropped);
    // What reached the application: every byte, once.
    EXPECT_EQ(r.msgs.bytes_delivered, r.bytes_expected);
    EXPECT_EQ(r.msgs.duplicate_bytes, 0u);
    EXPECT_EQ(r.msgs.duplicate_deliveries, 0u);
    EXPECT_EQ(r.msgs.incomplete_deliveries, 0u);
    EXPECT_EQ(r.msgs.bad_reports, 0u);
    // Payload that crossed the fabric = first transmissions + retransmissions.
    EXPECT_EQ(f.payload_bytes_sent, r.bytes_expected + r.transport_stats.bytes_retransmitted);
  }
}

TEST(Workload, RingAllReduceStepsWaitForTheirInput) {
  Config c = cfg(6, WorkloadKind::kAllReduce, 6ull << 20);
  c.qps_per_pair = 3;
  auto sim = make(c);
  ASSERT_NE(sim, nullptr);
  const SimResult r = sim->run();
  ASSERT_TRUE(r.completed);
  const MessageTable &m = sim->messages();
  const uint32_t n = 6, steps = 2 * (n - 1);
  EXPECT_EQ(m.size(), static_cast<size_t>(n) * steps * 3);
  // Last delivery of step k into each host.
  std::map<std::pair<uint32_t, uint32_t>, Time> done;
  for (size_t i = 0; i < m.size(); ++i) {
    const auto &rec = m[i];
    EXPECT_EQ(rec.dst, (rec.src + 1) % n);
    const uint64_t part = (6ull << 20) / n / 3; // 1 MiB chunk in 3 parts
    EXPECT_TRUE(rec.bytes == part || rec.bytes == part + 1) << rec.bytes;
    auto &t = done[{rec.dst, rec.tag}];
    t = std::max(t, rec.delivered);
  }
  for (size_t i = 0; i < m.size(); ++i) {
    const auto &rec = m[i];
    if (rec.tag == 0) {
      EXPECT_EQ(rec.posted, 0u);
    } else {
      EXPECT_GE(rec.posted, (done[{rec.src, rec.tag - 1}])) << "step posted before its input";
    }
  }
}

TEST(Workload, AllToAllIncastPermutationShapes) {
  {
    auto sim = make(cfg(5, WorkloadKind::kAllToAll, 5000));
    ASSERT_NE(sim, nullptr);
    ASSERT_TRUE(sim->run().completed);
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (size_t i = 0; i < sim->messages().size(); ++i) {
      const auto &m = sim->messages()[i];
      EXPECT_NE(m.src, m.dst);
      EXPECT_EQ(m.bytes, 1000u);
      pairs.insert({m.src, m.dst});
    }
    EXPECT_EQ(pairs.size(), 20u);
  }
  {
    auto sim = make(cfg(5, WorkloadKind::kIncast, 3000));
    ASSERT_NE(sim, nullptr);
    const SimResult r = sim->run();
    ASSERT_TRUE(r.completed);
    EXPECT_EQ(r.receivers, 1u);
    EXPECT_EQ(r.bytes_expected, 4u * 3000);
    for (size_t i = 0; i < sim->messages().size(); ++i)
      EXPECT_EQ(sim->messages()[i].dst, 0u);
  }
  for (uint64_t seed = 1; seed < 20; ++seed) {
    auto sim = make(cfg(7, WorkloadKind::kPermutation, 1000, 0, seed));
    ASSERT_NE(sim, nullptr);
    ASSERT_TRUE(sim->run().completed);
    std::set<uint32_t> srcs, dsts;
    for (size_t i = 0; i < sim->messages().size(); ++i) {
      const auto &m = sim->messages()[i];
      EXPECT_NE(m.src, m.dst);
      srcs.insert(m.src);
      dsts.insert(m.dst);
    }
    EXPECT_EQ(srcs.size(), 7u);
    EXPECT_EQ(dsts.size(), 7u);
  }
}

TEST(Workload, RejectsImpossibleParameters) {
  std::string err;
  WorkloadParams p;
  p.hosts = 1;
  EXPECT_EQ(make_workload(p, err), nullptr);
  p.hosts = 8;
  p.size = 4; // allreduce needs size >= hosts
  EXPECT_EQ(make_workload(p, err), nullptr);
  EXPECT_NE(err.find("size"), std::string::npos);
  p.size = 0;
  p.kind = WorkloadKind::kIncast;
  EXPECT_EQ(make_workload(p, err), nullptr);
}

TEST(Multiplane, RoceSpreadsQpsOverPlanesAndScales) {
  Config one = cfg(8, WorkloadKind::kAllToAll, 8ull << 20);
  Config four = one;
  four.topo.planes = 4; // qps_per_pair defaults to one per plane
  auto a = make(one), b = make(four);
  ASSERT_TRUE(a && b);
  const SimResult ra = a->run(), rb = b->run();
  ASSERT_TRUE(ra.completed && rb.completed);
  EXPECT_EQ(rb.qps_per_pair, 4u);
  EXPECT_GT(rb.goodput_gbps, 3.5 * ra.goodput_gbps);
  // Every plane carried traffic.
  for (uint32_t p = 0; p < 4; ++p) {
    const Port &hp = b->network().ports()[b->network().nodes()[b->network().host_node(0)].ports[p]];
    EXPECT_GT(hp.tx_bytes, (8ull << 20) / 8 * 7 / 4) << "plane " << p;
  }
}

TEST(Messages, RangeSetCountsNewBytesOnly) {
  RangeSet s;
  EXPECT_EQ(s.add(0, 100), 100u);
  EXPECT_EQ(s.add(100, 200), 100u); // in order: extends
  EXPECT_EQ(s.pieces(), 1u);
  EXPECT_EQ(s.add(300, 400), 100u);
  EXPECT_EQ(s.add(500, 600), 100u);
  EXPECT_EQ(s.pieces(), 3u);
  EXPECT_EQ(s.add(150, 350), 100u); // overlaps two ranges, 100 new bytes
  EXPECT_EQ(s.pieces(), 2u);
  EXPECT_EQ(s.add(0, 600), 100u);
  EXPECT_EQ(s.pieces(), 1u);
  EXPECT_EQ(s.covered(), 600u);
  EXPECT_EQ(s.add(10, 20), 0u);
  EXPECT_EQ(s.add(5, 5), 0u);
}

TEST(Messages, TableCatchesDuplicatesAndBadReports) {
  MessageTable t;
  const uint64_t id = t.add(1, 2, 0, 1000, 0, 0);
  EXPECT_TRUE(t.place(2, id, 0, 600));
  EXPECT_FALSE(t.deliver(2, id, 5)); // 400 bytes missing
  EXPECT_EQ(t.stats().incomplete_deliveries, 1u);
  EXPECT_FALSE(t.place(2, id, 500, 200)); // 100 bytes twice
  EXPECT_EQ(t.stats().duplicate_bytes, 100u);
  EXPECT_TRUE(t.place(2, id, 700, 300));
  EXPECT_FALSE(t.place(3, id, 0, 1));   // wrong host
  EXPECT_FALSE(t.place(2, id, 999, 2)); // past the end
  EXPECT_FALSE(t.place(2, 77, 0, 1));   // unknown message
  EXPECT_EQ(t.stats().bad_reports, 3u);
  EXPECT_TRUE(t.deliver(2, id, 9));
  EXPECT_FALSE(t.deliver(2, id, 10));
  EXPECT_EQ(t.stats().duplicate_deliveries, 1u);
  EXPECT_EQ(t.stats().bytes_delivered, 1000u);
  EXPECT_EQ(t[id].delivered, 9u);
}
