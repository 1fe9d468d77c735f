// The RoCEv2 baseline: go-back-N recovery, timeouts, QP failure, DCQCN.
#include "dcqcn.h"
#include "rocev2.h"
#include "simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

using namespace mroce::sim;

namespace {

Config base(uint32_t hosts, WorkloadKind w, uint64_t size) {
  Config c;
  c.transport = "rocev2";
  c.topo.hosts = hosts;
  c.workload = w;
  c.size = size;
  return c;
}

SimResult run(Config c) {
  std::string err;
  auto sim = Simulation::create(c, err);
  EXPECT_NE(sim, nullptr) << err;
  if (!sim)
    return {};
  return sim->run();
}

void expect_every_byte_once(const SimResult &r) {
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.msgs.bytes_delivered, r.bytes_expected);
  EXPECT_EQ(r.msgs.duplicate_bytes, 0u);
  EXPECT_EQ(r.msgs.duplicate_deliveries, 0u);
  EXPECT_EQ(r.msgs.incomplete_deliveries, 0u);
  EXPECT_EQ(r.msgs.bad_reports, 0u);
  EXPECT_EQ(r.msgs.messages_delivered, r.messages_expected);
  EXPECT_EQ(r.msgs.send_completions, r.messages_expected);
}

} // namespace

TEST(RoceV2, GoBackNRecoversEveryByteUnderOnePercentLoss) {
  for (auto w : {WorkloadKind::kAllReduce, WorkloadKind::kAllToAll, WorkloadKind::kPermutation}) {
    Config c = base(8, w, 8ull << 20);
    c.loss = 0.01;
    const SimResult r = run(c);
    SCOPED_TRACE(workload_name(w));
    expect_every_byte_once(r);
    EXPECT_GT(r.fabric.drops[kDropRandom], 0u);
    EXPECT_GT(r.transport_stats.bytes_retransmitted, 0u);
    EXPECT_GT(r.transport_stats.naks_sent, 0u);
    EXPECT_GT(r.transport_stats.out_of_sequence_dropped, 0u); // the go-back-N cost
    EXPECT_EQ(r.transport_stats.failed_qps, 0u);
  }
}

TEST(RoceV2, LossCostsFarMoreThanItsShare) {
  Config c = base(8, WorkloadKind::kAllReduce, 16ull << 20);
  const SimResult clean = run(c);
  c.loss = 0.01;
  const SimResult lossy = run(c);
  expect_every_byte_once(clean);
  expect_every_byte_once(lossy);
  EXPECT_GT(clean.line_rate_fraction, 0.95);
  // Go-back-N resends everything in flight behind each loss: 1% loss costs
  // much more than 1% of goodput.
  EXPECT_LT(lossy.goodput_gbps, 0.9 * clean.goodput_gbps);
  EXPECT_GT(lossy.transport_stats.bytes_retransmitted, lossy.bytes_expected / 20);
}

TEST(RoceV2, OneGapOneNakThenGoBack) {
  // Two hosts, one link, one QP: the link drops everything for 1 us.
  Config c = base(2, WorkloadKind::kIncast, 4ull << 20);
  c.topo.kind = TopologyKind::kPair;
  c.link_events.push_back(LinkEvent{20 * kUs, false, "h0~h1", -1});
  c.link_events.push_back(LinkEvent{21 * kUs, true, "h0~h1", -1});
  const SimResult r = run(c);
  expect_every_byte_once(r);
  const uint64_t lost = r.fabric.data_packets_dropped;
  EXPECT_GE(lost, 2u);
  EXPECT_EQ(r.transport_stats.naks_sent, 1u); // one NAK per sequence error
  EXPECT_EQ(r.transport_stats.timeouts, 0u);
  // Everything sent between the gap and the NAK's arrival is sent again.
  EXPECT_GT(r.transport_stats.packets_retransmitted, lost);
  EXPECT_EQ(r.transport_stats.packets_retransmitted,
            r.transport_stats.out_of_sequence_dropped + lost);
}

TEST(RoceV2, TailLossNeedsTheTimeout) {
  // 100 packets of 4 KiB take ~34 us; the link is down over the last ones,
  // so no later packet can reveal the gap: only the RTO recovers.
  Config c = base(2, WorkloadKind::kIncast, 100 * 4096);
  c.topo.kind = TopologyKind::kPair;
  c.qps_per_pair = 1;
  c.link_events.push_back(LinkEvent{33 * kUs, false, "h0~h1", -1});
  c.link_events.push_back(LinkEvent{40 * kUs, true, "h0~h1", -1});
  const SimResult r = run(c);
  expect_every_byte_once(r);
  EXPECT_GE(r.transport_stats.timeouts, 1u);
  EXPECT_EQ(r.transport_stats.naks_sent, 0u);
  EXPECT_GT(r.completion_time, c.rocev2.rto);
}

TEST(RoceV2, QpFailsWhenItsOnlyPathIsDead) {
  Config c = base(2, WorkloadKind::kIncast, 1ull << 20);
  c.topo.kind = TopologyKind::kPair;
  c.link_events.push_back(LinkEvent{10 * kUs, false, "h0~h1", -1});
  const SimResult r = run(c);
  EXPECT_FALSE(r.completed);
  EXPECT_EQ(r.transport_stats.failed_qps, 1u);
  EXPECT_LT(r.msgs.bytes_delivered, r.bytes_expected);
  // Retry budget: rto_max * retry_cnt of no progress.
  EXPECT_GE(r.end_time, c.rocev2.rto_max * c.rocev2.retry_cnt);
}

TEST(RoceV2, OneSourcePortPerQp) {
  // ECMP pins a QP: all its packets take one path.  Different QPs get
  // different source ports (hence, usually, different paths).
  Config c = base(4, WorkloadKind::kAllToAll, 1ull << 20);
  c.qps_per_pair = 4;
  std::string err;
  auto sim = Simulation::create(c, err);
  ASSERT_NE(sim, nullptr) << err;
  sim->run();
  auto &t = dynamic_cast<RoceV2Transport &>(sim->transport(0));
  ASSERT_EQ(t.num_qps(), 3u * 4);
  std::set<uint16_t> ports;
  for (uint32_t q = 0; q < t.num_qps(); ++q)
    ports.insert(t.qp_source_port(q));
  EXPECT_GE(ports.size(), 11u); // 14-bit hash: a collision is possible, not likely
}

TEST(Dcqcn, CutsOnCnpAndRecovers) {
  DcqcnParams p;
  Dcqcn d;
  const double line = 100e9;
  d.init(&p, line);
  EXPECT_DOUBLE_EQ(d.rate(0), line);
  d.on_cnp(1 * kUs);
  // alpha starts at 1: the first cut halves the rate.
  EXPECT_DOUBLE_EQ(d.rate(1 * kUs), line / 2);
  EXPECT_DOUBLE_EQ(d.alpha(), 1.0);
  EXPECT_DOUBLE_EQ(d.target(), line);
  // One increase period later: fast recovery halves the gap to the target.
  EXPECT_DOUBLE_EQ(d.rate(1 * kUs + p.increase_period), 0.75 * line);
  // Alpha decays while no CNP arrives.
  d.rate(1 * kUs + 10 * p.alpha_period);
  EXPECT_NEAR(d.alpha(), std::pow(1 - p.g, 10), 1e-12);
  // A second CNP cuts by the (smaller) alpha.
  const Time t2 = 1 * kUs + 10 * p.alpha_period;
  const double before = d.rate(t2);
  const double a = d.alpha();
  d.on_cnp(t2);
  EXPECT_DOUBLE_EQ(d.rate(t2), before * (1 - a / 2));
  // Without further CNPs it climbs back to line rate.
  EXPECT_DOUBLE_EQ(d.rate(t2 + 100 * kMs), line);
  EXPECT_FALSE(d.limited());
}

TEST(Dcqcn, ByteCounterAlsoDrivesIncrease) {
  DcqcnParams p;
  Dcqcn d;
  d.init(&p, 100e9);
  d.on_cnp(0);
  d.on_sent(1, p.byte_counter); // one byte-counter event, no timer yet
  EXPECT_DOUBLE_EQ(d.rate(1), 75e9);
  d.on_sent(2, p.byte_counter - 1);
  EXPECT_DOUBLE_EQ(d.rate(2), 75e9);
}

TEST(Dcqcn, RespectsTheMinimumRate) {
  DcqcnParams p;
  p.min_rate_bps = 10e9;
  Dcqcn d;
  d.init(&p, 100e9);
  for (int i = 0; i < 20; ++i)
    d.on_cnp(static_cast<Time>(i));
  EXPECT_DOUBLE_EQ(d.rate(20), 10e9);
}

namespace {
struct RateProbe {
  Simulation *sim;
  double min_rate = 1e300;
  static void probe(void *ctx, Time) {
    auto *self = static_cast<RateProbe *>(ctx);
    for (uint32_t h = 1; h < self->sim->network().num_hosts(); ++h) {
      auto &t = dynamic_cast<RoceV2Transport &>(self->sim->transport(h));
      for (uint32_t q = 0; q < t.num_qps(); ++q)
        self->min_rate = std::min(self->min_rate, t.qp_rate_bps(q));
    }
  }
};
} // namespace

TEST(Dcqcn, IncastEcnMarksCutSenderRates) {
  Config c = base(8, WorkloadKind::kIncast, 4ull << 20);
  c.topo.kind = TopologyKind::kStar;
  std::string err;
  auto sim = Simulation::create(c, err);
  ASSERT_NE(sim, nullptr) << err;
  RateProbe probe{sim.get()};
  for (Time t = 20 * kUs; t < 400 * kUs; t += 20 * kUs)
    sim->network().schedule_call(t, &RateProbe::probe, &probe);
  const SimResult with = sim->run();
  expect_every_byte_once(with);
  EXPECT_GT(with.fabric.ecn_marks, 0u);
  EXPECT_GT(with.transport_stats.cnps_sent, 0u);
  EXPECT_GT(with.transport_stats.rate_decreases, 0u);
  // 7 senders into one 100G port: DCQCN settles them well below line rate.
  EXPECT_LT(probe.min_rate, 30e9);

  c.rocev2.dcqcn.enabled = false;
  const SimResult without = run(c);
  EXPECT_EQ(without.transport_stats.cnps_sent, 0u);
  EXPECT_GT(without.fabric.drops[kDropBuffer], with.fabric.drops[kDropBuffer]);
}

TEST(Pfc, LosslessIncastWithoutCongestionControl) {
  Config c = base(8, WorkloadKind::kIncast, 4ull << 20);
  c.topo.kind = TopologyKind::kStar;
  c.fabric.sw.pfc = true;
  c.rocev2.dcqcn.enabled = false;
  // PFC trades drops for queueing: 7 ingress ports x xoff queue up ~300 us
  // in front of the receiver, so the timeout must exceed that.
  c.rocev2.rto = 2 * kMs;
  const SimResult r = run(c);
  expect_every_byte_once(r);
  EXPECT_EQ(r.fabric.packets_dropped(), 0u);
  EXPECT_GT(r.fabric.pfc_pauses, 0u);
  EXPECT_EQ(r.transport_stats.bytes_retransmitted, 0u);
  EXPECT_GT(r.line_rate_fraction, 0.9);
}
