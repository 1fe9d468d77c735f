// metaroce-sim-bench: how fast the simulator processes events.
//
//   EventQueue/Hold   the engine alone: the classic hold model (pop the
//                     earliest event, schedule one a random time later) at a
//                     fixed queue size.
//   BM_Sim*           whole runs (fabric + transport + workload); events/s
//                     is what a user sees.  MetaRoCE runs the protocol core.
#include "event_queue.h"
#include "rng.h"
#include "simulation.h"

#include <benchmark/benchmark.h>

using namespace mroce::sim;

static void BM_EventQueueHold(benchmark::State &state) {
  const auto size = static_cast<size_t>(state.range(0));
  EventQueue q;
  q.reserve(size + 1);
  Rng rng(1);
  for (size_t i = 0; i < size; ++i)
    q.push(rng.below(1'000'000), 0, static_cast<uint32_t>(i), i);
  uint64_t sink = 0;
  for (auto _ : state) {
    const Event e = q.pop();
    sink += e.arg;
    q.push(e.time + 1 + rng.below(1'000'000), e.type, e.target, e.arg);
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

static void run_sim(benchmark::State &state, Config c) {
  uint64_t events = 0;
  for (auto _ : state) {
    std::string err;
    state.PauseTiming();
    auto sim = Simulation::create(c, err);
    if (!sim) {
      state.SkipWithError(err.c_str());
      return;
    }
    state.ResumeTiming();
    const SimResult r = sim->run();
    events += r.events;
    state.PauseTiming();
    sim.reset();
    state.ResumeTiming();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

static void BM_SimAllReduce(benchmark::State &state) {
  Config c;
  c.topo.hosts = 16;
  c.workload = WorkloadKind::kAllReduce;
  c.size = 64ull << 20;
  c.loss = 0.01;
  run_sim(state, c);
}
BENCHMARK(BM_SimAllReduce)->Unit(benchmark::kMillisecond);

static void BM_SimAllToAllMultiplane(benchmark::State &state) {
  Config c;
  c.topo.hosts = 32;
  c.topo.planes = 4;
  c.workload = WorkloadKind::kAllToAll;
  c.size = 32ull << 20;
  run_sim(state, c);
}
BENCHMARK(BM_SimAllToAllMultiplane)->Unit(benchmark::kMillisecond);

static void BM_SimIncast(benchmark::State &state) {
  Config c;
  c.topo.hosts = 32;
  c.workload = WorkloadKind::kIncast;
  c.size = 4ull << 20;
  run_sim(state, c);
}
BENCHMARK(BM_SimIncast)->Unit(benchmark::kMillisecond);

static void BM_SimMetaRoceAllReduce(benchmark::State &state) {
  Config c;
  c.transport = "metaroce";
  c.topo.hosts = 16;
  c.workload = WorkloadKind::kAllReduce;
  c.size = 64ull << 20;
  c.loss = 0.01;
  run_sim(state, c);
}
BENCHMARK(BM_SimMetaRoceAllReduce)->Unit(benchmark::kMillisecond);

// Many connections per host (31): the adapter's per-connection work.
static void BM_SimMetaRoceAllToAll(benchmark::State &state) {
  Config c;
  c.transport = "metaroce";
  c.topo.hosts = 32;
  c.workload = WorkloadKind::kAllToAll;
  c.size = 32ull << 20;
  run_sim(state, c);
}
BENCHMARK(BM_SimMetaRoceAllToAll)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
