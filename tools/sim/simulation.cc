#include "simulation.h"

#include "json.h"

namespace mroce::sim {

Simulation::Simulation(const Config &cfg) : cfg_(cfg), net_(cfg.fabric) {}

Simulation::~Simulation() = default;

std::unique_ptr<Simulation> Simulation::create(Config cfg, std::string &err) {
  if (Status st = validate(cfg); !st.ok()) {
    err = st.message();
    return nullptr;
  }
  std::unique_ptr<Simulation> sim(new Simulation(cfg));
  if (Status st = sim->setup(); !st.ok()) {
    err = st.message();
    return nullptr;
  }
  return sim;
}

Status Simulation::setup() {
  if (Status st = build_topology(cfg_.topo, net_, topo_); !st.ok())
    return st;
  std::string err;
  apply_loss(net_, cfg_.loss_at, cfg_.loss);
  for (const LinkLoss &l : cfg_.link_losses) {
    const int link = net_.find_link(l.link);
    if (link < 0)
      return Status::error("link_loss: no link named \"" + l.link + "\"");
    net_.channel(net_.links()[link].port_a).set_loss(l.loss);
    net_.channel(net_.links()[link].port_b).set_loss(l.loss);
  }
  for (const std::string &name : cfg_.timeline_links) {
    const int link = net_.find_link(name);
    if (link < 0)
      return Status::error("timeline_link: no link named \"" + name + "\"");
    watched_links_.push_back(static_cast<uint32_t>(link));
  }
  for (const LinkSetting &l : cfg_.link_settings) {
    const int link = net_.find_link(l.link);
    if (link < 0)
      return Status::error(std::string(l.delay != kNever ? "link_latency" : "link_rate") +
                           ": no link named \"" + l.link + "\"");
    if (l.delay != kNever)
      net_.set_link_delay(static_cast<uint32_t>(link), l.delay);
    if (l.rate_bps)
      net_.set_link_rate(static_cast<uint32_t>(link), l.rate_bps);
  }
  for (const LinkEvent &e : cfg_.link_events) {
    if (e.plane >= 0) {
      for (uint32_t link : topo_.plane_links[e.plane])
        net_.schedule_link_state(e.at, link, e.up);
      continue;
    }
    const int link = net_.find_link(e.link);
    if (link < 0)
      return Status::error(std::string(e.up ? "link_up" : "link_down") + ": no link named \"" +
                           e.link + "\"");
    net_.schedule_link_state(e.at, static_cast<uint32_t>(link), e.up);
  }
  WorkloadParams wp;
  wp.kind = cfg_.workload;
  wp.hosts = cfg_.topo.hosts;
  wp.size = cfg_.size;
  wp.qps_per_pair = cfg_.effective_qps_per_pair();
  wp.seed = cfg_.fabric.seed;
  workload_ = make_workload(wp, err);
  if (!workload_)
    return Status::error(err);
  TransportOptions to;
  to.rocev2 = cfg_.rocev2;
  to.metaroce = cfg_.metaroce;
  transports_ = make_transports(cfg_.transport, to, net_, err);
  if (!transports_)
    return Status::error(err);
  net_.set_app(this);
  return {};
}

void Simulation::start(void *ctx, Time) {
  auto *self = static_cast<Simulation *>(ctx);
  self->workload_->start(*self);
}

uint64_t Simulation::post(uint32_t src, uint32_t dst, uint32_t flow, uint64_t bytes, uint32_t tag) {
  const uint64_t id = msgs_.add(src, dst, flow, bytes, tag, net_.now());
  transports_->at(src).post(MessageDesc{id, src, dst, flow, bytes});
  return id;
}

void Simulation::placed(uint32_t host, uint64_t msg, uint64_t offset, uint64_t len) {
  if (!timeline_) {
    msgs_.place(host, msg, offset, len);
    return;
  }
  const uint64_t before = msgs_.stats().bytes_delivered;
  msgs_.place(host, msg, offset, len);
  const uint64_t fresh = msgs_.stats().bytes_delivered - before;
  if (fresh)
    timeline_->placed(net_.now(), msgs_[msg].src, msgs_[msg].dst, fresh);
}

void Simulation::delivered(uint32_t host, uint64_t msg) {
  if (!msgs_.deliver(host, msg, net_.now()))
    return;
  if (timeline_)
    timeline_->delivered(net_.now());
  workload_->on_delivered(*this, msg);
  if (workload_->done() && completed_at_ == kNever)
    completed_at_ = net_.now();
}

void Simulation::send_complete(uint32_t host, uint64_t msg) {
  msgs_.send_complete(host, msg, net_.now());
}

TimelineCounters Simulation::timeline_counters() const {
  TransportCounters t = net_.transport_counters();
  for (uint32_t h = 0; h < net_.num_hosts(); ++h)
    transports_->at(h).report(t);
  TimelineCounters c = TimelineCounters::from(net_.counters(), t);
  watched_link_bytes(c);
  return c;
}

void Simulation::watched_link_bytes(TimelineCounters &c) const {
  c.link_bytes.clear();
  for (uint32_t link : watched_links_) {
    const Link &l = net_.links()[link];
    c.link_bytes.push_back(net_.ports()[l.port_a].tx_bytes);
    c.link_bytes.push_back(net_.ports()[l.port_b].tx_bytes);
    if (cfg_.timeline_queues) {
      c.link_queue.push_back(net_.ports()[l.port_a].queued_bytes);
      c.link_queue.push_back(net_.ports()[l.port_b].queued_bytes);
    }
  }
}

void Simulation::sample_timeline(void *ctx, Time now) {
  auto *self = static_cast<Simulation *>(ctx);
  // Only until the workload completes (the series end there) and while
  // something else is pending, so the run still ends when the fabric falls
  // idle.
  if (self->completed_at_ != kNever)
    return;
  self->timeline_->sample(now, self->timeline_counters());
  if (self->net_.pending_events() > 0)
    self->net_.schedule_call(now + self->timeline_->interval(), &Simulation::sample_timeline, self);
}

SimResult Simulation::run() {
  net_.schedule_call(0, &Simulation::start, this);
  if (cfg_.timeline) {
    std::vector<std::string> names;
    for (uint32_t link : watched_links_)
      names.push_back(net_.links()[link].name);
    timeline_ = std::make_unique<TimelineRecorder>(cfg_.timeline, cfg_.timeline_flows, names,
                                                   cfg_.timeline_queues, cfg_.timeline_senders);
    if (SenderTrace *trace = timeline_->sender_trace())
      for (uint32_t h = 0; h < net_.num_hosts(); ++h)
        transports_->at(h).set_sender_trace(trace);
    net_.schedule_call(cfg_.timeline, &Simulation::sample_timeline, this);
  }
  net_.run(cfg_.max_time);

  SimResult r;
  r.transport = cfg_.transport;
  r.workload = workload_name(cfg_.workload);
  r.topology = topology_name(cfg_.topo.kind);
  r.hosts = cfg_.topo.hosts;
  r.planes = cfg_.topo.planes;
  r.paths = cfg_.transport == "rocev2" ? 1 : cfg_.paths;
  r.qps_per_pair = cfg_.effective_qps_per_pair();
  r.size = cfg_.size;
  r.seed = cfg_.fabric.seed;
  r.loss = cfg_.loss;
  r.completed = completed_at_ != kNever;
  r.end_time = net_.now();
  r.completion_time = r.completed ? completed_at_ : net_.now();
  r.bytes_expected = workload_->bytes_expected();
  r.messages_expected = workload_->messages_expected();
  r.receivers = workload_->receivers();
  r.msgs = msgs_.stats();
  r.fabric = net_.counters();
  r.transport_stats = net_.transport_counters();
  for (uint32_t h = 0; h < net_.num_hosts(); ++h)
    transports_->at(h).report(r.transport_stats);
  if (timeline_) {
    // A completed run's series end at the completion; whatever is counted
    // after it (the last ACKs) goes into the last interval.
    TimelineCounters c = TimelineCounters::from(r.fabric, r.transport_stats);
    watched_link_bytes(c);
    r.timeline = timeline_->finish(r.completion_time, c);
  }
  r.events = net_.events();
  r.packets_in_flight_at_end = net_.packets_in_flight();
  const double secs = to_seconds(r.completion_time);
  if (secs > 0) {
    r.goodput_gbps = static_cast<double>(r.msgs.bytes_delivered) * 8 / secs / 1e9;
    r.goodput_per_receiver_gbps = r.goodput_gbps / r.receivers;
    r.line_rate_fraction = r.goodput_per_receiver_gbps * 1e9 /
                           (static_cast<double>(cfg_.topo.host_rate_bps) * cfg_.topo.planes);
  }
  return r;
}

namespace {

void series(JsonWriter &j, const char *name, const std::vector<uint64_t> &v) {
  j.key(name).begin_array();
  for (uint64_t x : v)
    j.value(x);
  j.end_array();
}

// Times in ns (integers), one array per field.
void senders_json(JsonWriter &j, const std::vector<TimelineSender> &senders) {
  j.key("senders").begin_array();
  for (const TimelineSender &f : senders) {
    j.begin_object();
    j.field("src", f.src).field("dst", f.dst);
    j.field("first_ack_ns",
            f.first_ack == kNever ? int64_t{-1} : static_cast<int64_t>(f.first_ack / kNs));
    std::vector<uint64_t> v;
    auto put = [&](const char *name, auto get, size_t n) {
      v.clear();
      for (size_t i = 0; i < n; ++i)
        v.push_back(get(i));
      series(j, name, v);
    };
    put(
        "departure_ns", [&](size_t i) { return f.departures[i] / kNs; }, f.departures.size());
    put(
        "departure_len", [&](size_t i) { return uint64_t{f.departure_len[i]}; },
        f.departures.size());
    const size_t n = f.states.size();
    j.key("states").begin_object();
    put(
        "t_ns", [&](size_t i) { return f.state_at[i] / kNs; }, n);
    put(
        "pace_Bps", [&](size_t i) { return f.states[i].pace_Bps; }, n);
    put(
        "window_Bps", [&](size_t i) { return f.states[i].window_Bps; }, n);
    put(
        "hint", [&](size_t i) { return f.states[i].hint; }, n);
    put(
        "cwnd", [&](size_t i) { return f.states[i].cwnd; }, n);
    put(
        "inflight", [&](size_t i) { return f.states[i].inflight; }, n);
    put(
        "srtt_ns", [&](size_t i) { return f.states[i].srtt_ns; }, n);
    put(
        "acks", [&](size_t i) { return f.states[i].acks; }, n);
    j.end_object();
    j.end_object();
  }
  j.end_array();
}

void timeline_json(JsonWriter &j, const Timeline &t) {
  j.key("timeline").begin_object();
  j.field("interval_s", to_seconds(t.interval));
  j.field("intervals", static_cast<uint64_t>(t.size()));
  j.field("first_delivery_s", t.first_delivery == kNever ? -1.0 : to_seconds(t.first_delivery));
  series(j, "delivered_bytes", t.delivered_bytes);
  series(j, "messages_delivered", t.messages_delivered);
  series(j, "payload_sent", t.payload_sent);
  series(j, "retransmitted_bytes", t.retransmitted_bytes);
  series(j, "packets_dropped", t.packets_dropped);
  series(j, "ecn_marks", t.ecn_marks);
  series(j, "timeouts", t.timeouts);
  series(j, "tail_loss_probes", t.tail_loss_probes);
  series(j, "paths_replaced", t.paths_replaced);
  series(j, "failures", t.failures);
  if (!t.links.empty()) {
    j.key("links").begin_array();
    for (const TimelineLink &l : t.links) {
      j.begin_object();
      j.field("name", l.name);
      series(j, "a_to_b", l.a_to_b);
      series(j, "b_to_a", l.b_to_a);
      if (t.queues) {
        series(j, "queue_a_to_b", l.queue_a_to_b);
        series(j, "queue_b_to_a", l.queue_b_to_a);
      }
      j.end_object();
    }
    j.end_array();
  }
  if (!t.flows.empty()) {
    j.key("flows").begin_array();
    for (const TimelineFlow &f : t.flows) {
      j.begin_object();
      j.field("src", f.src).field("dst", f.dst).field("first_s", to_seconds(f.first));
      series(j, "bytes", f.bytes);
      j.end_object();
    }
    j.end_array();
  }
  if (t.senders_recorded)
    senders_json(j, t.senders);
  j.end_object();
}

} // namespace

std::string result_json(const SimResult &r) {
  JsonWriter j;
  const FabricCounters &f = r.fabric;
  const TransportCounters &t = r.transport_stats;
  j.begin_object();
  j.field("transport", r.transport).field("workload", r.workload).field("topology", r.topology);
  j.field("hosts", r.hosts).field("planes", r.planes).field("paths", r.paths);
  j.field("qps_per_pair", r.qps_per_pair).field("size", r.size).field("seed", r.seed);
  j.field("loss", r.loss);
  j.field("completed", r.completed);
  j.field("completion_time_s", to_seconds(r.completion_time));
  j.field("goodput_gbps", r.goodput_gbps);
  j.field("goodput_per_receiver_gbps", r.goodput_per_receiver_gbps);
  j.field("line_rate_fraction", r.line_rate_fraction);
  j.field("bytes_expected", r.bytes_expected);
  j.field("bytes_delivered", r.msgs.bytes_delivered);
  j.field("bytes_retransmitted", t.bytes_retransmitted);
  j.field("packets_lost", f.packets_dropped());
  j.field("events", r.events);
  j.key("messages").begin_object();
  j.field("expected", r.messages_expected).field("delivered", r.msgs.messages_delivered);
  j.field("send_completed", r.msgs.send_completions);
  j.field("duplicate_bytes", r.msgs.duplicate_bytes);
  j.field("duplicate_deliveries", r.msgs.duplicate_deliveries);
  j.field("incomplete_deliveries", r.msgs.incomplete_deliveries);
  j.field("bad_reports", r.msgs.bad_reports);
  j.end_object();
  j.key("fabric").begin_object();
  j.field("packets_sent", f.packets_sent).field("data_packets_sent", f.data_packets_sent);
  j.field("wire_bytes_sent", f.wire_bytes_sent).field("payload_bytes_sent", f.payload_bytes_sent);
  j.field("packets_received", f.packets_received);
  j.field("payload_bytes_received", f.payload_bytes_received);
  j.field("payload_bytes_dropped", f.payload_bytes_dropped);
  j.field("data_packets_lost", f.data_packets_dropped);
  j.key("drops").begin_object();
  for (int i = 0; i < kNumDropReasons; ++i)
    j.field(drop_reason_name(static_cast<DropReason>(i)), f.drops[i]);
  j.end_object();
  j.field("ecn_marks", f.ecn_marks).field("pfc_pauses", f.pfc_pauses);
  j.field("max_queue_bytes", f.max_queue_bytes);
  j.field("packets_in_flight_at_end", r.packets_in_flight_at_end);
  j.end_object();
  j.key("transport_stats").begin_object();
  j.field("packets_retransmitted", t.packets_retransmitted).field("timeouts", t.timeouts);
  j.field("naks_sent", t.naks_sent).field("acks_sent", t.acks_sent);
  j.field("cnps_sent", t.cnps_sent).field("rate_decreases", t.rate_decreases);
  j.field("out_of_sequence_dropped", t.out_of_sequence_dropped);
  j.field("duplicates_received", t.duplicates_received);
  j.field("failed_qps", t.failed_qps).field("rejected", t.rejected_packets);
  j.field("window_dropped", t.window_dropped);
  j.field("failed_connections", t.failed_connections);
  j.field("tail_loss_probes", t.tail_loss_probes).field("paths_replaced", t.paths_replaced);
  j.field("spurious_retransmissions", t.spurious_retransmissions);
  j.end_object();
  j.field("end_time_s", to_seconds(r.end_time));
  if (r.timeline.interval)
    timeline_json(j, r.timeline);
  j.end_object();
  return j.str();
}

} // namespace mroce::sim
