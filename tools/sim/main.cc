// metaroce-sim: the command line.  Options are the scenario keys (see
// config.cc and Documentation/simulator.md) written as --key value or
// --key=value; --scenario FILE loads a key = value file first.
#include "config.h"
#include "simulation.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace mroce::sim;

namespace {

constexpr int kExitUsage = 2;

void usage(std::FILE *out) {
  std::fprintf(
      out, "usage: metaroce-sim [--scenario FILE] [--json] [--timing] [--list-links]\n"
           "                    [--hosts N] [--workload allreduce|alltoall|incast|permutation]\n"
           "                    [--size BYTES] [--transport metaroce|rocev2] [--loss FRACTION]\n"
           "                    [--planes P] [--paths K] [--seed S] [--KEY VALUE ...]\n"
           "\n"
           "Runs one workload over a simulated fabric and reports goodput, completion\n"
           "time, retransmissions and losses.  The same seed gives the same result.\n"
           "Options (also scenario file keys):\n");
  print_options(out);
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "metaroce-sim: %s\n", msg.c_str());
  return kExitUsage;
}

void print_human(const SimResult &r) {
  std::printf("%s %s, %u hosts, %u plane(s), size %llu, loss %g, seed %llu\n", r.transport.c_str(),
              r.workload.c_str(), r.hosts, r.planes, static_cast<unsigned long long>(r.size),
              r.loss, static_cast<unsigned long long>(r.seed));
  std::printf("  completed        %s\n", r.completed ? "yes" : "NO (time limit or failed QPs)");
  std::printf("  completion time  %.6f ms\n", to_seconds(r.completion_time) * 1e3);
  std::printf("  goodput          %.3f Gb/s (%.3f per receiver, %.1f%% of its ports)\n",
              r.goodput_gbps, r.goodput_per_receiver_gbps, r.line_rate_fraction * 100);
  std::printf("  delivered        %llu of %llu bytes\n",
              static_cast<unsigned long long>(r.msgs.bytes_delivered),
              static_cast<unsigned long long>(r.bytes_expected));
  std::printf("  retransmitted    %llu bytes, %llu timeouts\n",
              static_cast<unsigned long long>(r.transport_stats.bytes_retransmitted),
              static_cast<unsigned long long>(r.transport_stats.timeouts));
  std::printf("  packets lost     %llu (ECN marks %llu)\n",
              static_cast<unsigned long long>(r.fabric.packets_dropped()),
              static_cast<unsigned long long>(r.fabric.ecn_marks));
  std::printf("  events           %llu\n", static_cast<unsigned long long>(r.events));
}

} // namespace

int main(int argc, char **argv) {
  Config cfg;
  bool json = false, timing = false, list_links = false;
  std::vector<std::pair<std::string, std::string>> opts;
  std::string scenario;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (arg == "--timing") {
      timing = true;
      continue;
    }
    if (arg == "--list-links") {
      list_links = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      return fail("unexpected argument \"" + arg + "\" (see --help)");
    std::string key = arg.substr(2), value;
    const auto eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key.erase(eq);
    } else {
      if (i + 1 >= argc)
        return fail("option --" + key + " needs a value");
      value = argv[++i];
    }
    if (key == "scenario") {
      if (!scenario.empty())
        return fail("only one --scenario");
      scenario = value;
    } else {
      opts.emplace_back(key, value);
    }
  }
  // The scenario file first, command-line options override it.
  if (!scenario.empty()) {
    if (Status st = load_scenario(cfg, scenario); !st.ok())
      return fail(st.message());
  }
  for (const auto &[k, v] : opts) {
    if (Status st = set_option(cfg, k, v); !st.ok())
      return fail(st.message());
  }

  std::string err;
  auto sim = Simulation::create(cfg, err);
  if (!sim)
    return fail(err);
  if (list_links) {
    for (const Link &l : sim->network().links())
      std::printf("%s\n", l.name.c_str());
    return 0;
  }

  const auto t0 = std::chrono::steady_clock::now();
  const SimResult r = sim->run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (json) {
    std::string out = result_json(r);
    if (timing) {
      // Wall-clock figures differ between runs: only on request.
      out.pop_back();
      char buf[160];
      std::snprintf(buf, sizeof(buf),
                    ",\"wall_time_s\":%.6f,\"events_per_s\":%.0f,\"peak_pending_events\":%zu}",
                    wall, wall > 0 ? static_cast<double>(r.events) / wall : 0.0,
                    sim->network().peak_pending_events());
      out += buf;
    }
    std::printf("%s\n", out.c_str());
  } else {
    print_human(r);
    if (timing)
      std::printf("  wall time        %.3f s (%.2f M events/s, %zu events pending at most)\n", wall,
                  wall > 0 ? static_cast<double>(r.events) / wall / 1e6 : 0.0,
                  sim->network().peak_pending_events());
  }
  return 0;
}
