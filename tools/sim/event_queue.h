// The discrete-event engine's queue: two 4-ary min-heaps of small POD events.
//
// Ordering is (time, sequence number).  The sequence number is the insertion
// count, so two events at the same picosecond always run in the order they
// were scheduled: the same seed gives the same run, bit for bit.  Events are
// plain data dispatched by a switch on `type`, never std::function, and the
// heaps' storage is reused, so the hot path does not allocate.
//
// Packet events (end of serialisation, arrival) are due within a microsecond
// or so; transport timers are mostly far off (RTOs, probes) and, with
// thousands of connections, far more numerous.  They go into a heap of their
// own (push_timer), so the packet events' heap stays a few levels shallower.
// Both heaps share the sequence counter and pop() takes the earlier of the
// two tops: the order is exactly that of one heap.
#pragma once

#include "sim_time.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mroce::sim {

struct Event {
  Time time;
  uint64_t seq;
  uint64_t arg;    // packet index, timer cookie, ...
  uint32_t target; // port, host or link index, by type
  uint8_t type;
};

// (time, seq) as one 128-bit key: a compare and a subtract-with-borrow, no
// branch.  Keys are unique (seq is).
inline bool event_before(const Event &a, const Event &b) {
  using Key = unsigned __int128;
  return ((Key{a.time} << 64) | a.seq) < ((Key{b.time} << 64) | b.seq);
}

class EventHeap {
public:
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event &top() const { return heap_.front(); }
  void clear() { heap_.clear(); }

  void push(const Event &ev) {
    size_t hole = heap_.size();
    heap_.emplace_back();
    Event *const h = heap_.data();
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!event_before(ev, h[parent]))
        break;
      h[hole] = h[parent];
      hole = parent;
    }
    h[hole] = ev;
  }

  Event pop() {
    const Event out = heap_.front();
    const size_t n = heap_.size() - 1; // entries once the last one is taken
    if (n == 0) {
      heap_.pop_back();
      return out;
    }
    const Event last = heap_[n];
    heap_.pop_back();
    Event *const h = heap_.data();
    // Bottom-up ("Floyd") removal: walk the hole down to a leaf along the
    // smaller children without comparing against `last` (which, taken from
    // the bottom, nearly always belongs near the bottom again), then sift
    // `last` up from there.  Same heap invariant, so the same order.
    size_t hole = 0;
    for (;;) {
      const size_t first = hole * kArity + 1;
      size_t best;
      if (first + kArity <= n) {
        // A full group of children: a branch-free tournament.
        const size_t a = event_before(h[first + 1], h[first]) ? first + 1 : first;
        const size_t b = event_before(h[first + 3], h[first + 2]) ? first + 3 : first + 2;
        best = event_before(h[b], h[a]) ? b : a;
      } else if (first < n) {
        best = first;
        for (size_t c = first + 1; c < n; ++c)
          if (event_before(h[c], h[best]))
            best = c;
      } else {
        break;
      }
      h[hole] = h[best];
      hole = best;
    }
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!event_before(last, h[parent]))
        break;
      h[hole] = h[parent];
      hole = parent;
    }
    h[hole] = last;
    return out;
  }

private:
  static constexpr size_t kArity = 4;
  std::vector<Event> heap_;
};

class EventQueue {
public:
  void reserve(size_t n) {
    events_.reserve(n);
    timers_.reserve(n);
  }
  bool empty() const { return events_.empty() && timers_.empty(); }
  size_t size() const { return events_.size() + timers_.size(); }
  uint64_t scheduled() const { return next_seq_; }
  size_t peak_size() const { return peak_; }
  const Event &top() const { return from_timers() ? timers_.top() : events_.top(); }

  void push(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    events_.push(Event{time, next_seq_++, arg, target, type});
    note_size();
  }
  // The same, for events that are mostly far in the future (timers).
  void push_timer(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    timers_.push(Event{time, next_seq_++, arg, target, type});
    note_size();
  }

  Event pop() { return from_timers() ? timers_.pop() : events_.pop(); }

  void clear() {
    events_.clear();
    timers_.clear();
  }

private:
  bool from_timers() const {
    return !timers_.empty() && (events_.empty() || event_before(timers_.top(), events_.top()));
  }
  void note_size() {
    const size_t n = size();
    if (n > peak_)
      peak_ = n;
  }
  EventHeap events_, timers_;
  uint64_t next_seq_ = 0;
  size_t peak_ = 0;
};

} // namespace mroce::sim
