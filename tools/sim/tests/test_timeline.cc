// The time series (--timeline) and per-link settings (link_latency,
// link_rate): the series add up to the run's totals, recording them does not
// change the run, failures show where they happen, and a longer or slower
// link is longer or slower.
#include "simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

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

SimResult run(const Config &c) {
  std::string err;
  auto sim = Simulation::create(c, err);
  EXPECT_NE(sim, nullptr) << err;
  return sim ? sim->run() : SimResult{};
}

uint64_t sum(const std::vector<uint64_t> &v) { return std::accumulate(v.begin(), v.end(), 0ull); }

// Every series sums to the matching total of the run.
void expect_series_add_up(const SimResult &r) {
  const Timeline &t = r.timeline;
  ASSERT_GT(t.interval, 0u);
  ASSERT_GT(t.size(), 0u);
  for (const auto *v :
       {&t.messages_delivered, &t.payload_sent, &t.retransmitted_bytes, &t.packets_dropped,
        &t.ecn_marks, &t.timeouts, &t.tail_loss_probes, &t.paths_replaced, &t.failures})
    EXPECT_EQ(v->size(), t.size());
  EXPECT_EQ(sum(t.delivered_bytes), r.msgs.bytes_delivered);
  EXPECT_EQ(sum(t.messages_delivered), r.msgs.messages_delivered);
  EXPECT_EQ(sum(t.payload_sent), r.fabric.payload_bytes_sent);
  EXPECT_EQ(sum(t.retransmitted_bytes), r.transport_stats.bytes_retransmitted);
  EXPECT_EQ(sum(t.packets_dropped), r.fabric.packets_dropped());
  EXPECT_EQ(sum(t.ecn_marks), r.fabric.ecn_marks);
  EXPECT_EQ(sum(t.timeouts), r.transport_stats.timeouts);
  EXPECT_EQ(sum(t.tail_loss_probes), r.transport_stats.tail_loss_probes);
  EXPECT_EQ(sum(t.paths_replaced), r.transport_stats.paths_replaced);
  EXPECT_EQ(sum(t.failures), r.transport_stats.failed_qps + r.transport_stats.failed_connections);
  // The series cover the run up to its completion, no further.
  const Time end = r.completion_time;
  EXPECT_EQ(t.size(), (end + t.interval - 1) / t.interval);
  EXPECT_NE(t.delivered_bytes.back(), 0u); // the last delivery is in the last interval
}

// The result without what only a timeline run has (its sampling events).
std::string core_json(SimResult r) {
  r.timeline = Timeline{};
  r.events = 0;
  return result_json(r);
}

} // namespace

TEST(Timeline, SeriesAddUpToTheTotals) {
  std::vector<Config> runs;
  for (const char *t : {"metaroce", "rocev2"}) {
    Config c = cfg(t, 8, WorkloadKind::kAllToAll, 8ull << 20, 0.01);
    c.timeline = 10 * kUs;
    runs.push_back(c);
    // A link failure: timeouts, drops and (MetaRoCE) path replacements.
    Config f = cfg(t, 8, WorkloadKind::kAllToAll, 8ull << 20);
    f.topo.hosts_per_leaf = 4;
    f.fabric.reroute_delay = 300 * kUs;
    f.link_events.push_back(LinkEvent{60 * kUs, false, "p0.leaf0~p0.spine1", -1});
    f.timeline = 7 * kUs; // not a divisor of anything in the run
    runs.push_back(f);
  }
  for (const Config &c : runs) {
    const SimResult r = run(c);
    SCOPED_TRACE(c.transport + " " + std::to_string(c.link_events.size()));
    EXPECT_TRUE(r.completed);
    expect_series_add_up(r);
    EXPECT_GT(sum(r.timeline.packets_dropped), 0u);
  }
}

TEST(Timeline, RecordingDoesNotChangeTheRun) {
  for (const char *t : {"metaroce", "rocev2"}) {
    Config c = cfg(t, 8, WorkloadKind::kAllReduce, 4ull << 20, 0.01);
    c.topo.planes = 2;
    const SimResult plain = run(c);
    c.timeline = 5 * kUs;
    c.timeline_flows = true;
    const SimResult timed = run(c);
    EXPECT_EQ(plain.timeline.interval, 0u);
    EXPECT_GT(timed.events, plain.events); // the sampler's own events
    EXPECT_EQ(core_json(plain), core_json(timed)) << t;
    // Reproducible, series included.
    EXPECT_EQ(result_json(timed), result_json(run(c)));
  }
}

TEST(Timeline, PerFlowSeriesSplitTheDeliveredBytesBySender) {
  Config c = cfg("metaroce", 9, WorkloadKind::kIncast, 2ull << 20);
  c.topo.kind = TopologyKind::kStar;
  c.timeline = 2 * kUs;
  c.timeline_flows = true;
  const SimResult r = run(c);
  ASSERT_TRUE(r.completed);
  expect_series_add_up(r);
  const Timeline &t = r.timeline;
  ASSERT_EQ(t.flows.size(), 8u);
  std::vector<bool> seen(9, false);
  std::vector<uint64_t> total(t.size(), 0);
  for (const TimelineFlow &f : t.flows) {
    EXPECT_EQ(f.dst, 0u);
    ASSERT_GE(f.src, 1u);
    ASSERT_LE(f.src, 8u);
    EXPECT_FALSE(seen[f.src]);
    seen[f.src] = true;
    EXPECT_EQ(sum(f.bytes), 2ull << 20); // each sender's whole message
    ASSERT_EQ(f.bytes.size(), t.size());
    EXPECT_GE(f.first, t.first_delivery);
    // Nothing before its first byte, something in the interval holding it.
    const size_t first_bin = f.first / t.interval;
    EXPECT_EQ(sum({f.bytes.begin(), f.bytes.begin() + first_bin}), 0u);
    EXPECT_GT(f.bytes[first_bin], 0u);
    for (size_t i = 0; i < t.size(); ++i)
      total[i] += f.bytes[i];
  }
  EXPECT_EQ(total, t.delivered_bytes);
}

TEST(Timeline, ALinkFailureShowsWhereItHappens) {
  // RoCEv2 QPs hashed onto a dead link stall until the routes reconverge:
  // drops at the failure, timeouts after it, nothing of it before.
  Config c = cfg("rocev2", 8, WorkloadKind::kAllToAll, 32ull << 20);
  c.topo.hosts_per_leaf = 4;
  c.fabric.reroute_delay = 500 * kUs;
  c.link_events.push_back(LinkEvent{200 * kUs, false, "p0.leaf0~p0.spine1", -1});
  c.timeline = 50 * kUs;
  const SimResult r = run(c);
  ASSERT_TRUE(r.completed);
  expect_series_add_up(r);
  const Timeline &t = r.timeline;
  const size_t fail_bin = 200 * kUs / t.interval;
  EXPECT_EQ(sum({t.packets_dropped.begin(), t.packets_dropped.begin() + fail_bin}), 0u);
  EXPECT_GT(t.packets_dropped[fail_bin], 0u);
  EXPECT_EQ(sum({t.timeouts.begin(), t.timeouts.begin() + fail_bin}), 0u);
  EXPECT_GT(sum(t.timeouts), 0u);
  // The stall: some interval after the failure delivers much less than
  // the average of the intervals before it.
  const uint64_t before =
      sum({t.delivered_bytes.begin() + 1, t.delivered_bytes.begin() + fail_bin}) / (fail_bin - 1);
  uint64_t low = before;
  for (size_t i = fail_bin + 1; i < t.size() - 1; ++i)
    low = std::min(low, t.delivered_bytes[i]);
  EXPECT_LT(low, before * 3 / 4);
}

TEST(LinkSettings, ALongerLinkAddsItsDelayAndASlowerOneItsRate) {
  Config base = cfg("rocev2", 2, WorkloadKind::kIncast, 64ull << 10);
  base.topo.kind = TopologyKind::kPair;
  const SimResult r0 = run(base);
  Config longer = base;
  longer.link_settings.push_back(LinkSetting{"h0~h1", 50 * kUs, 0});
  const SimResult r1 = run(longer);
  ASSERT_TRUE(r0.completed && r1.completed);
  // One small message: it arrives one extra propagation delay later.
  EXPECT_EQ(r1.completion_time - r0.completion_time, 50 * kUs - 100 * kNs);

  Config slower = base;
  slower.size = 16ull << 20;
  const SimResult r2 = run(slower);
  slower.link_settings.push_back(LinkSetting{"h1~h0", kNever, 25'000'000'000ULL});
  const SimResult r3 = run(slower);
  ASSERT_TRUE(r2.completed && r3.completed);
  EXPECT_GT(r2.line_rate_fraction, 0.9);
  EXPECT_NEAR(r3.line_rate_fraction, r2.line_rate_fraction / 4, 0.01);

  Config bad = base;
  bad.link_settings.push_back(LinkSetting{"h0~h7", 1 * kUs, 0});
  std::string err;
  EXPECT_EQ(Simulation::create(bad, err), nullptr);
  EXPECT_NE(err.find("link_latency"), std::string::npos) << err;
}

TEST(Timeline, WatchedLinksCarryWhatTheirPortsSent) {
  Config c = cfg("metaroce", 8, WorkloadKind::kAllToAll, 16ull << 20);
  c.topo.hosts_per_leaf = 4;
  c.timeline = 20 * kUs;
  c.timeline_links = {"p0.leaf0~p0.spine1", "p0.spine0~p0.leaf1"};
  c.link_events.push_back(LinkEvent{100 * kUs, false, "p0.leaf0~p0.spine1", -1});
  std::string err;
  auto sim = Simulation::create(c, err);
  ASSERT_NE(sim, nullptr) << err;
  const SimResult r = sim->run();
  ASSERT_TRUE(r.completed);
  expect_series_add_up(r);
  const Timeline &t = r.timeline;
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.links[0].name, "p0.leaf0~p0.spine1");
  EXPECT_EQ(t.links[1].name, "p0.leaf1~p0.spine0"); // as the topology names it
  const Network &net = sim->network();
  for (const TimelineLink &tl : t.links) {
    const Link &l = net.links()[net.find_link(tl.name)];
    EXPECT_EQ(tl.a_to_b.size(), t.size());
    EXPECT_EQ(sum(tl.a_to_b), net.ports()[l.port_a].tx_bytes) << tl.name;
    EXPECT_EQ(sum(tl.b_to_a), net.ports()[l.port_b].tx_bytes) << tl.name;
    EXPECT_GT(sum(tl.a_to_b), 0u);
  }
  // Nothing crosses the dead link after the interval it died in.
  const size_t dead = 100 * kUs / t.interval;
  EXPECT_GT(t.links[0].a_to_b[dead - 1], 0u);
  for (size_t i = dead + 1; i < t.size(); ++i)
    EXPECT_EQ(t.links[0].a_to_b[i] + t.links[0].b_to_a[i], 0u) << i;
  // The other one keeps working.
  EXPECT_GT(sum({t.links[1].a_to_b.begin() + dead + 1, t.links[1].a_to_b.end()}), 0u);

  Config bad = c;
  bad.timeline_links = {"p0.leaf0~p0.spine9"};
  EXPECT_EQ(Simulation::create(bad, err), nullptr);
  EXPECT_NE(err.find("timeline_link"), std::string::npos) << err;
}

// --timeline_senders logs every data packet a sender puts on the wire and
// what it enforced, and --timeline_queues the receiver port's queue; neither
// changes the run.
TEST(Timeline, SenderLogHasEveryDepartureAndTheHintInForce) {
  for (const char *t : {"metaroce", "rocev2"}) {
    Config c = cfg(t, 9, WorkloadKind::kIncast, 1ull << 20);
    c.topo.kind = TopologyKind::kStar;
    c.timeline = 2 * kUs;
    const SimResult plain = run(c);
    c.timeline_senders = true;
    c.timeline_links = {"h0~p0.sw"};
    c.timeline_queues = true;
    const SimResult r = run(c);
    SCOPED_TRACE(t);
    ASSERT_TRUE(r.completed);
    EXPECT_EQ(core_json(plain), core_json(r));
    EXPECT_TRUE(plain.timeline.senders.empty());
    uint64_t packets = 0, bytes = 0, senders = 0;
    for (const TimelineSender &s : r.timeline.senders) {
      ASSERT_EQ(s.departures.size(), s.departure_len.size());
      ASSERT_EQ(s.states.size(), s.state_at.size());
      EXPECT_TRUE(std::is_sorted(s.departures.begin(), s.departures.end()));
      EXPECT_TRUE(std::is_sorted(s.state_at.begin(), s.state_at.end()));
      if (s.departures.empty())
        continue;
      ++senders;
      EXPECT_EQ(s.dst, 0u);
      EXPECT_NE(s.first_ack, kNever);
      EXPECT_GT(s.first_ack, s.departures.front());
      packets += s.departures.size();
      bytes += sum(std::vector<uint64_t>(s.departure_len.begin(), s.departure_len.end()));
      if (std::string(t) == "metaroce") { // the receiver's hint reaches every sender
        EXPECT_GT(s.states.back().hint, 0u);
      }
    }
    EXPECT_EQ(senders, 8u);
    EXPECT_EQ(packets, r.fabric.data_packets_sent);
    EXPECT_EQ(bytes, r.fabric.payload_bytes_sent);
    const TimelineLink &l = r.timeline.links.at(0);
    ASSERT_EQ(l.queue_b_to_a.size(), r.timeline.size());
    EXPECT_GT(*std::max_element(l.queue_b_to_a.begin(), l.queue_b_to_a.end()), 0u);
  }
}
