#include "config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace mroce::sim {

namespace {

std::string trim(const std::string &s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Splits "number[suffix]".
bool split_number(const std::string &s, double &num, std::string &suffix) {
  const std::string t = trim(s);
  if (t.empty())
    return false;
  const char *begin = t.c_str();
  char *end = nullptr;
  errno = 0;
  num = std::strtod(begin, &end);
  if (end == begin || errno == ERANGE || !std::isfinite(num))
    return false;
  suffix = trim(std::string(end));
  return true;
}

bool parse_double(const std::string &s, double &out) {
  std::string suffix;
  return split_number(s, out, suffix) && suffix.empty();
}

bool parse_u64(const std::string &s, uint64_t &out) {
  const std::string t = trim(s);
  if (t.empty() || t[0] == '-' || t[0] == '+')
    return false;
  char *end = nullptr;
  errno = 0;
  out = std::strtoull(t.c_str(), &end, 0);
  return errno == 0 && *end == '\0';
}

bool parse_u32(const std::string &s, uint32_t &out) {
  uint64_t v;
  if (!parse_u64(s, v) || v > 0xffffffffull)
    return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_bool(const std::string &s, bool &out) {
  const std::string t = trim(s);
  if (t == "1" || t == "true" || t == "yes" || t == "on") {
    out = true;
    return true;
  }
  if (t == "0" || t == "false" || t == "no" || t == "off") {
    out = false;
    return true;
  }
  return false;
}

bool parse_gbps(const std::string &s, uint64_t &bps) {
  double g;
  if (!parse_double(s, g) || !(g > 0) || g > 1e6)
    return false;
  bps = static_cast<uint64_t>(std::llround(g * 1e9));
  return bps > 0;
}

// "TIME NAME" as used by link_down / link_up / plane_down / link_loss.
bool split_pair(const std::string &s, std::string &a, std::string &b) {
  std::istringstream in(s);
  if (!(in >> a >> b))
    return false;
  std::string extra;
  return !(in >> extra);
}

using Setter = std::function<Status(Config &, const std::string &)>;
struct Option {
  const char *name;
  const char *help;
  Setter set;
};

Status bad(const char *what) { return Status::error(std::string("expected ") + what); }

// A setter's outcome: ok when @parsed, else what was expected.
Status expect(bool parsed, const char *what) { return parsed ? Status{} : bad(what); }

Setter u32_opt(uint32_t Config::*field) {
  return [field](Config &c, const std::string &v) {
    return expect(parse_u32(v, c.*field), "a non-negative integer");
  };
}

template <typename F> Setter with(F f) { return Setter(f); }

const std::vector<Option> &options() {
  static const std::vector<Option> opts = {
      // --- the run ---
      {"transport", "metaroce|rocev2", with([](Config &c, const std::string &v) -> Status {
         c.transport = trim(v);
         return {};
       })},
      {"workload", "allreduce|alltoall|incast|permutation",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_workload(trim(v), c.workload),
                       "allreduce, alltoall, incast or permutation");
       })},
      {"hosts", "number of hosts (>= 2)", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.topo.hosts), "a non-negative integer");
       })},
      {"size", "bytes per workload unit (see workloads), e.g. 64MiB",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.size), "a size like 4096, 1MiB, 1GiB");
       })},
      {"loss", "random loss fraction in [0, 1)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.loss), "a number");
       })},
      {"loss_at",
       "last_hop (each packet sees `loss` once) | all (every hop) | core (switch-switch)",
       with([](Config &c, const std::string &v) -> Status {
         const std::string t = trim(v);
         if (t == "last_hop")
           c.loss_at = LossPlacement::kLastHop;
         else if (t == "all")
           c.loss_at = LossPlacement::kAll;
         else if (t == "core")
           c.loss_at = LossPlacement::kCore;
         else
           return bad("last_hop, all or core");
         return {};
       })},
      {"planes", "independent network planes; hosts get one port per plane",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.topo.planes), "a non-negative integer");
       })},
      {"paths", "MetaRoCE paths (UDP source ports) per connection", u32_opt(&Config::paths)},
      {"seed", "seed of every random choice", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u64(v, c.fabric.seed), "an unsigned integer");
       })},
      {"qps_per_pair", "connections (QPs) per host pair; 0 = one per plane",
       u32_opt(&Config::qps_per_pair)},
      {"mtu", "payload bytes per packet", u32_opt(&Config::mtu)},
      {"max_time", "simulated time limit, e.g. 10s",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.max_time), "a time like 500us, 2ms, 1s");
       })},
      // --- topology ---
      {"topology", "fattree|pair|dumbbell|star",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_topology(trim(v), c.topo.kind), "fattree, pair, dumbbell or star");
       })},
      {"hosts_per_leaf", "fattree: hosts per leaf; 0 = min(8, hosts/2)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.topo.hosts_per_leaf), "a non-negative integer");
       })},
      {"spines", "fattree: spines per plane; 0 = from oversubscription",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.topo.spines), "a non-negative integer");
       })},
      {"oversubscription", "fattree: leaf down/up capacity ratio, e.g. 2 for 2:1",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.topo.oversubscription), "a number");
       })},
      {"link_rate_gbps", "host link rate, Gb/s per port",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_gbps(v, c.topo.host_rate_bps), "a positive rate in Gb/s");
       })},
      {"core_rate_gbps", "switch-switch link rate, Gb/s; 0 = link_rate_gbps",
       with([](Config &c, const std::string &v) -> Status {
         double g;
         if (parse_double(v, g) && g == 0) {
           c.topo.core_rate_bps = 0;
           return {};
         }
         return expect(parse_gbps(v, c.topo.core_rate_bps), "a rate in Gb/s");
       })},
      {"link_delay", "propagation delay of every link",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.topo.link_delay), "a time like 100ns");
       })},
      // --- switches ---
      {"buffer", "bytes per switch output port (per ingress port with pfc)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.fabric.sw.buffer_bytes), "a size");
       })},
      {"ecn_k", "mark CE on ECT packets when the queue is above this",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.fabric.sw.ecn_k_bytes), "a size");
       })},
      {"ecn_kmax", "0 = step marking at ecn_k; else RED ramp from ecn_k to ecn_kmax",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.fabric.sw.ecn_kmax_bytes), "a size");
       })},
      {"ecn_pmax", "marking probability at ecn_kmax (RED ramp)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.fabric.sw.ecn_pmax), "a number");
       })},
      {"switch_latency", "switch forwarding latency",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.fabric.sw.latency), "a time");
       })},
      {"switch_jitter", "per-packet forwarding-time noise, uniform in [0, this]",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.fabric.sw.jitter), "a time");
       })},
      {"pfc", "0|1: PFC on the data class", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.fabric.sw.pfc), "0 or 1");
       })},
      {"pfc_xoff", "ingress bytes that trigger PAUSE; 0 = buffer/2",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.fabric.sw.pfc_xoff_bytes), "a size");
       })},
      {"pfc_xon", "ingress bytes below which to resume; 0 = xoff/2",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.fabric.sw.pfc_xon_bytes), "a size");
       })},
      {"ecmp_seed_per_switch", "0|1: 0 = every switch hashes alike",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.fabric.ecmp_seed_per_switch), "0 or 1");
       })},
      {"reroute_delay", "routes are recomputed this long after a link change; 0 = never",
       with([](Config &c, const std::string &v) -> Status {
         Time t;
         if (!parse_time(v, t))
           return bad("a time");
         c.fabric.reroute_delay = t == 0 ? kNever : t;
         return {};
       })},
      // --- hosts ---
      {"host_tx_overhead", "minimum time a host port spends per packet sent",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.fabric.host.tx_overhead), "a time");
       })},
      {"host_rx_delay", "NIC receive processing delay",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.fabric.host.rx_delay), "a time");
       })},
      // --- events (repeatable) ---
      {"link_down", "TIME LINK: take a link down (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string t, name;
         LinkEvent e;
         if (!split_pair(v, t, name) || !parse_time(t, e.at))
           return bad("\"TIME LINK\", e.g. \"2ms p0.leaf0~p0.spine1\"");
         e.link = name;
         c.link_events.push_back(e);
         return {};
       })},
      {"link_up", "TIME LINK: bring a link up (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string t, name;
         LinkEvent e;
         e.up = true;
         if (!split_pair(v, t, name) || !parse_time(t, e.at))
           return bad("\"TIME LINK\"");
         e.link = name;
         c.link_events.push_back(e);
         return {};
       })},
      {"plane_down", "TIME PLANE: every link of a plane down (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string t, p;
         LinkEvent e;
         uint32_t plane;
         if (!split_pair(v, t, p) || !parse_time(t, e.at) || !parse_u32(p, plane))
           return bad("\"TIME PLANE\", e.g. \"1ms 2\"");
         e.plane = static_cast<int>(plane);
         c.link_events.push_back(e);
         return {};
       })},
      {"plane_up", "TIME PLANE: every link of a plane up (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string t, p;
         LinkEvent e;
         e.up = true;
         uint32_t plane;
         if (!split_pair(v, t, p) || !parse_time(t, e.at) || !parse_u32(p, plane))
           return bad("\"TIME PLANE\"");
         e.plane = static_cast<int>(plane);
         c.link_events.push_back(e);
         return {};
       })},
      {"link_loss", "LINK FRACTION: random loss on one link, both directions (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string name, f;
         LinkLoss l;
         if (!split_pair(v, name, f) || !parse_double(f, l.loss))
           return bad("\"LINK FRACTION\"");
         l.link = name;
         c.link_losses.push_back(l);
         return {};
       })},
      {"link_latency", "LINK TIME: propagation delay of one link, e.g. a longer cable (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string name, t;
         LinkSetting l;
         if (!split_pair(v, name, t) || !parse_time(t, l.delay))
           return bad("\"LINK TIME\", e.g. \"p0.leaf0~p0.spine1 5us\"");
         l.link = name;
         c.link_settings.push_back(l);
         return {};
       })},
      {"link_rate", "LINK GBPS: rate of one link, e.g. a degraded port (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         std::string name, r;
         LinkSetting l;
         if (!split_pair(v, name, r) || !parse_gbps(r, l.rate_bps))
           return bad("\"LINK GBPS\", e.g. \"p0.leaf0~p0.spine1 25\"");
         l.link = name;
         c.link_settings.push_back(l);
         return {};
       })},
      // --- output ---
      {"timeline", "time-series interval for --json (\"timeline\"); 0 = none",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.timeline), "a time like 10us");
       })},
      {"timeline_flows", "0|1: the timeline also per (source, destination) host pair",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.timeline_flows), "0 or 1");
       })},
      {"timeline_link", "LINK: the timeline also has the bytes this link carries (repeatable)",
       with([](Config &c, const std::string &v) -> Status {
         const std::string name = trim(v);
         if (name.empty() || name.find(' ') != std::string::npos)
           return bad("a link name, e.g. p0.leaf0~p0.spine1");
         c.timeline_links.push_back(name);
         return {};
       })},
      {"timeline_queues", "0|1: the watched links' output queues (bytes) at every interval's end",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.timeline_queues), "0 or 1");
       })},
      {"timeline_senders",
       "0|1: the timeline also logs every sender's departures and pacing/window state",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.timeline_senders), "0 or 1");
       })},
      // --- MetaRoCE (the protocol core's knobs; 0 keeps the core default) ---
      {"metaroce_rto_min", "path RTO floor (default 200us; 0 = core default 1ms)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.rto_min), "a time");
       })},
      {"metaroce_rto_init",
       "path RTO before the first RTT sample (default 200us; 0 = core default 4ms)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.rto_init), "a time");
       })},
      {"metaroce_tlp_min", "tail-loss probe floor (default 20us; 0 = core default 200us)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.tlp_min), "a time");
       })},
      {"metaroce_ack_delay", "delayed-ACK limit (core default 20us)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.ack_delay), "a time");
       })},
      {"metaroce_dupthresh", "psn distance that proves a loss (core default 3)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.metaroce.dupthresh), "a non-negative integer");
       })},
      {"metaroce_init_window", "a connection's first window, packets (default 2)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.metaroce.init_window) && c.metaroce.init_window,
                       "a positive integer");
       })},
      {"metaroce_health_epoch", "path health check period (core default 10ms)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.health_epoch), "a time");
       })},
      {"metaroce_share_epoch", "receiver fair-share epoch; 0 = no rate hints",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.metaroce.share_epoch), "a time");
       })},
      {"metaroce_grants",
       "1: a receiver grants a new connection a first rate in its ACCEPT (capacity / its "
       "connections; default); 0: none",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.metaroce.grants), "0 or 1");
       })},
      // --- RoCEv2 baseline ---
      {"rocev2_rto", "initial retransmission timeout (doubles up to rocev2_rto_max)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.rto), "a time");
       })},
      {"rocev2_rto_max", "timeout cap (the QP ack timeout); = rocev2_rto: fixed timeout",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.rto_max), "a time");
       })},
      {"rocev2_retry_cnt", "QP fails after rocev2_rto_max * this without progress",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.rocev2.retry_cnt), "a non-negative integer");
       })},
      {"rocev2_ack_every", "responder ACKs every N packets (and every message end)",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.rocev2.ack_every), "a non-negative integer");
       })},
      {"rocev2_nak_resend", "0 = one NAK per sequence error (IB/rxe); else re-NAK after this",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.nak_resend), "a time");
       })},
      {"dcqcn", "0|1: DCQCN rate control", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bool(v, c.rocev2.dcqcn.enabled), "0 or 1");
       })},
      {"dcqcn_g", "alpha gain g", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.rocev2.dcqcn.g), "a number");
       })},
      {"dcqcn_alpha_period", "alpha decay period",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.dcqcn.alpha_period), "a time");
       })},
      {"dcqcn_increase_period", "rate increase timer",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.dcqcn.increase_period), "a time");
       })},
      {"dcqcn_byte_counter", "bytes per rate increase event",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_bytes(v, c.rocev2.dcqcn.byte_counter), "a size");
       })},
      {"dcqcn_f", "fast recovery steps F", with([](Config &c, const std::string &v) -> Status {
         return expect(parse_u32(v, c.rocev2.dcqcn.fast_recovery_steps), "a non-negative integer");
       })},
      {"dcqcn_ai", "additive increase, fraction of line rate",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.rocev2.dcqcn.ai_fraction), "a number");
       })},
      {"dcqcn_hai", "hyper increase, fraction of line rate",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_double(v, c.rocev2.dcqcn.hai_fraction), "a number");
       })},
      {"dcqcn_min_rate_gbps", "rate floor, Gb/s",
       with([](Config &c, const std::string &v) -> Status {
         double g;
         if (!parse_double(v, g) || !(g > 0))
           return bad("a positive rate in Gb/s");
         c.rocev2.dcqcn.min_rate_bps = g * 1e9;
         return {};
       })},
      {"dcqcn_cnp_interval", "at most one CNP per QP per interval",
       with([](Config &c, const std::string &v) -> Status {
         return expect(parse_time(v, c.rocev2.dcqcn.cnp_interval), "a time");
       })},
  };
  return opts;
}

} // namespace

bool parse_bytes(const std::string &s, uint64_t &out) {
  double num;
  std::string suffix;
  if (!split_number(s, num, suffix) || num < 0)
    return false;
  double mult = 1;
  if (suffix.empty() || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "k" || suffix == "kB")
    mult = 1e3;
  else if (suffix == "M" || suffix == "MB")
    mult = 1e6;
  else if (suffix == "G" || suffix == "GB")
    mult = 1e9;
  else if (suffix == "KiB")
    mult = 1024.0;
  else if (suffix == "MiB")
    mult = 1024.0 * 1024;
  else if (suffix == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (suffix == "TiB")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else
    return false;
  const double v = num * mult;
  if (v > 1.8e19 || v != std::floor(v))
    return false;
  out = static_cast<uint64_t>(v);
  return true;
}

bool parse_time(const std::string &s, Time &out) {
  double num;
  std::string suffix;
  if (!split_number(s, num, suffix) || num < 0)
    return false;
  double mult;
  if (suffix.empty() || suffix == "ns")
    mult = kNs;
  else if (suffix == "ps")
    mult = kPs;
  else if (suffix == "us")
    mult = kUs;
  else if (suffix == "ms")
    mult = kMs;
  else if (suffix == "s")
    mult = kSec;
  else
    return false;
  const double v = std::round(num * mult);
  if (v > 1.8e19)
    return false;
  out = static_cast<Time>(v);
  return true;
}

Status set_option(Config &c, const std::string &key, const std::string &value) {
  std::string k = key;
  for (char &ch : k)
    if (ch == '-')
      ch = '_';
  if (k == "oversub")
    k = "oversubscription";
  for (const Option &o : options()) {
    if (k == o.name) {
      const Status st = o.set(c, value);
      if (st.ok())
        return st;
      return Status::error("option " + k + "=\"" + value + "\": " + st.message());
    }
  }
  return Status::error("unknown option \"" + key + "\"");
}

Status load_scenario(Config &c, const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return Status::error("cannot open scenario file " + path);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.erase(hash);
    line = trim(line);
    if (line.empty())
      continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      return Status::error(path + ":" + std::to_string(lineno) + ": expected key = value");
    const Status st = set_option(c, trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
    if (!st.ok())
      return Status::error(path + ":" + std::to_string(lineno) + ": " + st.message());
  }
  return {};
}

Status validate(Config &c) {
  TopologyParams &t = c.topo;
  SwitchParams &sw = c.fabric.sw;
  if (t.hosts < 2)
    return Status::error("hosts must be at least 2");
  if (t.hosts > kMaxHosts)
    return Status::error("hosts must be at most " + std::to_string(kMaxHosts));
  if (t.planes == 0 || t.planes > 255)
    return Status::error("planes must be in [1, 255]");
  if (!(c.loss >= 0.0 && c.loss < 1.0))
    return Status::error("loss must be in [0, 1)");
  if (c.paths == 0 || c.paths > 65535)
    return Status::error("paths must be in [1, 65535]");
  if (c.size == 0)
    return Status::error("size must be at least 1 byte");
  if (c.effective_qps_per_pair() > 4096)
    return Status::error("qps_per_pair must be at most 4096");
  if (c.mtu < 64 || c.mtu > 65536)
    return Status::error("mtu must be in [64, 65536]");
  if (c.max_time == 0)
    return Status::error("max_time must be positive");
  if (t.kind == TopologyKind::kPair && t.hosts != 2)
    return Status::error("topology pair needs exactly 2 hosts");
  if (t.kind == TopologyKind::kFatTree) {
    if (!(t.oversubscription > 0))
      return Status::error("oversubscription must be positive");
    if (t.hosts_per_leaf > t.hosts)
      return Status::error("hosts_per_leaf is larger than hosts");
  }
  if (c.loss_at == LossPlacement::kCore && c.loss > 0) {
    const bool has_core =
        t.kind == TopologyKind::kDumbbell ||
        (t.kind == TopologyKind::kFatTree &&
         (t.hosts_per_leaf ? t.hosts_per_leaf : std::min(8u, std::max(1u, t.hosts / 2))) < t.hosts);
    if (!has_core)
      return Status::error("loss_at=core but the topology has no switch-switch links");
  }
  const uint64_t frame = c.mtu + 128;
  if (sw.buffer_bytes < frame)
    return Status::error("buffer must hold at least one packet (mtu + headers)");
  if (sw.ecn_kmax_bytes && sw.ecn_kmax_bytes <= sw.ecn_k_bytes)
    return Status::error("ecn_kmax must be 0 or above ecn_k");
  if (!(sw.ecn_pmax >= 0 && sw.ecn_pmax <= 1))
    return Status::error("ecn_pmax must be in [0, 1]");
  if (sw.pfc) {
    if (sw.pfc_xoff_bytes == 0)
      sw.pfc_xoff_bytes = sw.buffer_bytes / 2;
    if (sw.pfc_xon_bytes == 0)
      sw.pfc_xon_bytes = sw.pfc_xoff_bytes / 2;
    if (sw.pfc_xoff_bytes >= sw.buffer_bytes)
      return Status::error("pfc_xoff must leave headroom below buffer");
    if (sw.pfc_xon_bytes >= sw.pfc_xoff_bytes)
      return Status::error("pfc_xon must be below pfc_xoff");
  }
  for (const LinkEvent &e : c.link_events)
    if (e.plane >= 0 && static_cast<uint32_t>(e.plane) >= t.planes)
      return Status::error("plane " + std::to_string(e.plane) +
                           " does not exist (planes=" + std::to_string(t.planes) + ")");
  for (const LinkLoss &l : c.link_losses)
    if (!(l.loss >= 0.0 && l.loss < 1.0))
      return Status::error("link_loss fraction must be in [0, 1)");
  if ((c.timeline_flows || !c.timeline_links.empty() || c.timeline_senders) && !c.timeline)
    return Status::error(
        "timeline_flows, timeline_link and timeline_senders need a timeline interval");
  if (c.timeline_queues && c.timeline_links.empty())
    return Status::error("timeline_queues needs a watched link (timeline_link)");
  if (c.timeline && c.timeline < 100 * kNs)
    return Status::error("timeline interval must be at least 100ns");
  const RoceV2Params &r = c.rocev2;
  if (r.rto == 0)
    return Status::error("rocev2_rto must be positive");
  if (r.rto_max < r.rto)
    return Status::error("rocev2_rto_max must be at least rocev2_rto");
  if (r.ack_every == 0)
    return Status::error("rocev2_ack_every must be at least 1");
  const DcqcnParams &d = r.dcqcn;
  if (!(d.g > 0 && d.g <= 1))
    return Status::error("dcqcn_g must be in (0, 1]");
  if (d.alpha_period == 0 || d.increase_period == 0 || d.byte_counter == 0)
    return Status::error("dcqcn periods and byte counter must be positive");
  if (!(d.ai_fraction >= 0 && d.ai_fraction <= 1 && d.hai_fraction >= 0 && d.hai_fraction <= 1))
    return Status::error("dcqcn_ai and dcqcn_hai must be in [0, 1]");
  if (c.transport != "rocev2" && c.transport != "metaroce")
    return Status::error("unknown transport \"" + c.transport + "\" (metaroce or rocev2)");
  if (c.transport == "metaroce") {
    if (c.paths > MROCE_MAX_PATHS)
      return Status::error("metaroce: paths must be at most " + std::to_string(MROCE_MAX_PATHS));
    if (c.mtu < 256 || c.mtu > 4096)
      return Status::error("metaroce: mtu must be in [256, 4096] (the QP path MTU)");
  }
  c.rocev2.mtu = c.mtu;
  c.metaroce.mtu = c.mtu;
  c.metaroce.paths = c.paths;
  return {};
}

void print_options(std::FILE *out) {
  for (const Option &o : options())
    std::fprintf(out, "  --%-24s %s\n", o.name, o.help);
}

} // namespace mroce::sim
