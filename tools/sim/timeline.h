// Time series of a run (--timeline INTERVAL): what happened in each
// interval [k*I, (k+1)*I) of simulated time.
//
// Application bytes are binned where they land (the placement reports the
// simulation already checks), so the series sums exactly to the run's
// bytes_delivered.  Fabric and transport counters are cumulative; they are
// snapshotted at every interval boundary and the series holds the
// differences, so each series sums to the run's total as well.  Sampling
// only reads state: a run with a timeline gives the same result as one
// without.
//
// With per-flow recording (--timeline_flows 1) the delivered bytes are also
// kept per (source host, destination host): the receiver-side rate of every
// sender, for fairness and convergence measurements.  Watched links
// (--timeline_link NAME) get the bytes each direction put on the wire, and
// with --timeline_queues 1 also the bytes waiting in each direction's output
// queue at the end of every interval (a gauge, sampled, not summed).
//
// Sender-side recording (--timeline_senders 1) logs, per sending connection
// (source, destination host), what its transport enforces: every departure
// of a data packet (time, payload bytes) and every change of its sending
// state (the rate the pacer allows, the rate the window allows, the
// receiver's hint, cwnd, bytes in flight, smoothed RTT, ACKs received), at
// the exact simulated time it happens.  The transports only call it when it
// is on (one null check otherwise).
#pragma once

#include "metrics.h"
#include "sim_time.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace mroce::sim {

// Cumulative counters a timeline samples.
struct TimelineCounters {
  uint64_t payload_sent = 0; // payload bytes hosts put on the wire (first + resent)
  uint64_t retransmitted = 0;
  uint64_t dropped = 0; // packets, every reason
  uint64_t ecn_marks = 0;
  uint64_t timeouts = 0;
  uint64_t tail_loss_probes = 0;
  uint64_t paths_replaced = 0;
  uint64_t failed = 0; // failed QPs + failed connections
  // Watched links: wire bytes sent, [2 * i] a -> b and [2 * i + 1] b -> a.
  std::vector<uint64_t> link_bytes;
  // Watched links with --timeline_queues: bytes queued now, same order.
  std::vector<uint64_t> link_queue;

  static TimelineCounters from(const FabricCounters &f, const TransportCounters &t);
};

struct TimelineFlow {
  uint32_t src = 0;
  uint32_t dst = 0;
  Time first = kNever;         // first application byte placed
  std::vector<uint64_t> bytes; // per interval
};

struct TimelineLink {
  std::string name;
  std::vector<uint64_t> a_to_b, b_to_a; // wire bytes per interval
  // --timeline_queues: bytes in each direction's output queue at the end
  // of every interval.
  std::vector<uint64_t> queue_a_to_b, queue_b_to_a;
};

// What a sending connection enforces at one instant.  Rates are payload
// bytes per second of full-size packets; 0 means "no such limit".
struct SenderState {
  uint64_t pace_Bps = 0;   // the pacer (MetaRoCE: the receiver's hint; RoCEv2: DCQCN)
  uint64_t window_Bps = 0; // the congestion window: cwnd / srtt (0: no window or no RTT yet)
  uint64_t hint = 0;       // the hint as the transport holds it (MetaRoCE: 1000 B/s); 0: none
  uint64_t cwnd = 0;       // bytes
  uint64_t inflight = 0;   // bytes
  uint64_t srtt_ns = 0;    // mean of the paths' smoothed RTTs (0: no sample yet)
  uint64_t acks = 0;       // ACKs received so far
  bool operator==(const SenderState &) const = default;
};

struct TimelineSender {
  uint32_t src = 0;
  uint32_t dst = 0;
  Time first_ack = kNever;              // the first ACK of data it received
  std::vector<Time> departures;         // data packets put on the wire (first + resent)
  std::vector<uint32_t> departure_len;  // their payload bytes
  std::vector<Time> state_at;           // when the state changed ...
  std::vector<SenderState> states;      // ... to what
};

// The sender-side log (--timeline_senders 1); transports feed it.
class SenderTrace {
public:
  // The connection src -> dst now has state `s` (logged only if changed).
  void state(Time now, uint32_t src, uint32_t dst, const SenderState &s);
  // A data packet of `payload` bytes left src -> dst now, in state `s`.
  void departure(Time now, uint32_t src, uint32_t dst, uint32_t payload, const SenderState &s);
  // An ACK reached src (for transports whose state has no ACK count).
  void ack(Time now, uint32_t src, uint32_t dst);
  std::vector<TimelineSender> take() { return std::move(senders_); }

private:
  TimelineSender &of(uint32_t src, uint32_t dst);
  std::unordered_map<uint64_t, uint32_t> index_; // src << 32 | dst
  std::vector<TimelineSender> senders_;
};

struct Timeline {
  Time interval = 0; // 0: no timeline was recorded
  Time first_delivery = kNever;
  std::vector<uint64_t> delivered_bytes; // application bytes placed (new ones only)
  std::vector<uint64_t> messages_delivered;
  std::vector<uint64_t> payload_sent;
  std::vector<uint64_t> retransmitted_bytes;
  std::vector<uint64_t> packets_dropped;
  std::vector<uint64_t> ecn_marks;
  std::vector<uint64_t> timeouts;
  std::vector<uint64_t> tail_loss_probes;
  std::vector<uint64_t> paths_replaced;
  std::vector<uint64_t> failures;
  std::vector<TimelineFlow> flows; // in order of their first byte
  std::vector<TimelineLink> links; // as watched
  bool queues = false;             // links have queue_* series
  bool senders_recorded = false;   // --timeline_senders
  std::vector<TimelineSender> senders; // in order of their first record

  size_t size() const { return delivered_bytes.size(); }
};

class TimelineRecorder {
public:
  // `links`: names of the watched links, in the order of link_bytes.
  TimelineRecorder(Time interval, bool per_flow, const std::vector<std::string> &links = {},
                   bool queues = false, bool senders = false);

  Time interval() const { return tl_.interval; }
  // `fresh` new application bytes of a src->dst message landed at `now`.
  void placed(Time now, uint32_t src, uint32_t dst, uint64_t fresh);
  void delivered(Time now);
  // The counters at the boundary `now` (a multiple of the interval).
  void sample(Time now, const TimelineCounters &c);
  // The end of the run: the last (partial) interval, then the result.
  Timeline finish(Time end, const TimelineCounters &c);
  // The sender-side log, or nullptr when not recorded.
  SenderTrace *sender_trace() { return tl_.senders_recorded ? &senders_ : nullptr; }

private:
  size_t bin(Time t) const { return static_cast<size_t>(t / tl_.interval); }
  void grow(size_t n);
  void add_diff(size_t bin, const TimelineCounters &c);

  Timeline tl_;
  bool per_flow_;
  TimelineCounters last_;
  std::unordered_map<uint64_t, uint32_t> flow_index_; // src << 32 | dst
  SenderTrace senders_;
};

} // namespace mroce::sim
