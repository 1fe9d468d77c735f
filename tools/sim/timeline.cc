#include "timeline.h"

#include <algorithm>

namespace mroce::sim {

TimelineCounters TimelineCounters::from(const FabricCounters &f, const TransportCounters &t) {
  TimelineCounters c;
  c.payload_sent = f.payload_bytes_sent;
  c.retransmitted = t.bytes_retransmitted;
  c.dropped = f.packets_dropped();
  c.ecn_marks = f.ecn_marks;
  c.timeouts = t.timeouts;
  c.tail_loss_probes = t.tail_loss_probes;
  c.paths_replaced = t.paths_replaced;
  c.failed = t.failed_qps + t.failed_connections;
  return c;
}

TimelineSender &SenderTrace::of(uint32_t src, uint32_t dst) {
  const uint64_t key = (uint64_t{src} << 32) | dst;
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(senders_.size()));
  if (inserted) {
    senders_.emplace_back();
    senders_.back().src = src;
    senders_.back().dst = dst;
  }
  return senders_[it->second];
}

void SenderTrace::state(Time now, uint32_t src, uint32_t dst, const SenderState &s) {
  TimelineSender &f = of(src, dst);
  if (s.acks && f.first_ack == kNever)
    f.first_ack = now;
  if (!f.states.empty() && f.states.back() == s)
    return;
  f.state_at.push_back(now);
  f.states.push_back(s);
}

void SenderTrace::ack(Time now, uint32_t src, uint32_t dst) {
  TimelineSender &f = of(src, dst);
  f.first_ack = std::min(f.first_ack, now);
}

void SenderTrace::departure(Time now, uint32_t src, uint32_t dst, uint32_t payload,
                            const SenderState &s) {
  state(now, src, dst, s);
  TimelineSender &f = of(src, dst);
  f.departures.push_back(now);
  f.departure_len.push_back(payload);
}

TimelineRecorder::TimelineRecorder(Time interval, bool per_flow,
                                   const std::vector<std::string> &links, bool queues,
                                   bool senders)
    : per_flow_(per_flow) {
  tl_.interval = interval;
  tl_.queues = queues;
  tl_.senders_recorded = senders;
  for (const std::string &name : links)
    tl_.links.push_back(TimelineLink{name, {}, {}, {}, {}});
  last_.link_bytes.assign(2 * links.size(), 0);
}

void TimelineRecorder::grow(size_t n) {
  if (tl_.delivered_bytes.size() >= n)
    return;
  for (auto *v : {&tl_.delivered_bytes, &tl_.messages_delivered, &tl_.payload_sent,
                  &tl_.retransmitted_bytes, &tl_.packets_dropped, &tl_.ecn_marks, &tl_.timeouts,
                  &tl_.tail_loss_probes, &tl_.paths_replaced, &tl_.failures})
    v->resize(n, 0);
  for (TimelineFlow &f : tl_.flows)
    f.bytes.resize(n, 0);
  for (TimelineLink &l : tl_.links) {
    l.a_to_b.resize(n, 0);
    l.b_to_a.resize(n, 0);
    if (tl_.queues) {
      l.queue_a_to_b.resize(n, 0);
      l.queue_b_to_a.resize(n, 0);
    }
  }
}

void TimelineRecorder::placed(Time now, uint32_t src, uint32_t dst, uint64_t fresh) {
  if (!fresh)
    return;
  const size_t b = bin(now);
  grow(b + 1);
  tl_.delivered_bytes[b] += fresh;
  tl_.first_delivery = std::min(tl_.first_delivery, now);
  if (!per_flow_)
    return;
  const uint64_t key = (uint64_t{src} << 32) | dst;
  auto [it, inserted] = flow_index_.try_emplace(key, static_cast<uint32_t>(tl_.flows.size()));
  if (inserted) {
    TimelineFlow f;
    f.src = src;
    f.dst = dst;
    f.first = now;
    f.bytes.assign(tl_.delivered_bytes.size(), 0);
    tl_.flows.push_back(std::move(f));
  }
  tl_.flows[it->second].bytes[b] += fresh;
}

void TimelineRecorder::delivered(Time now) {
  const size_t b = bin(now);
  grow(b + 1);
  ++tl_.messages_delivered[b];
}

void TimelineRecorder::add_diff(size_t b, const TimelineCounters &c) {
  grow(b + 1);
  tl_.payload_sent[b] += c.payload_sent - last_.payload_sent;
  tl_.retransmitted_bytes[b] += c.retransmitted - last_.retransmitted;
  tl_.packets_dropped[b] += c.dropped - last_.dropped;
  tl_.ecn_marks[b] += c.ecn_marks - last_.ecn_marks;
  tl_.timeouts[b] += c.timeouts - last_.timeouts;
  tl_.tail_loss_probes[b] += c.tail_loss_probes - last_.tail_loss_probes;
  tl_.paths_replaced[b] += c.paths_replaced - last_.paths_replaced;
  tl_.failures[b] += c.failed - last_.failed;
  for (size_t i = 0; i < tl_.links.size() && 2 * i + 1 < c.link_bytes.size(); ++i) {
    tl_.links[i].a_to_b[b] += c.link_bytes[2 * i] - last_.link_bytes[2 * i];
    tl_.links[i].b_to_a[b] += c.link_bytes[2 * i + 1] - last_.link_bytes[2 * i + 1];
  }
  for (size_t i = 0; tl_.queues && i < tl_.links.size() && 2 * i + 1 < c.link_queue.size(); ++i) {
    tl_.links[i].queue_a_to_b[b] = c.link_queue[2 * i];
    tl_.links[i].queue_b_to_a[b] = c.link_queue[2 * i + 1];
  }
  last_ = c;
}

void TimelineRecorder::sample(Time now, const TimelineCounters &c) {
  // Everything counted up to the boundary happened in the interval before it.
  add_diff(now == 0 ? 0 : bin(now) - 1, c);
}

Timeline TimelineRecorder::finish(Time end, const TimelineCounters &c) {
  // Intervals up to the one holding `end`; an end exactly on a boundary
  // closes the interval before it.
  const size_t last = end == 0 ? 0 : bin(end - 1);
  grow(last + 1);
  add_diff(std::min(last, tl_.delivered_bytes.size() - 1), c);
  if (tl_.senders_recorded)
    tl_.senders = senders_.take();
  return tl_;
}

} // namespace mroce::sim
