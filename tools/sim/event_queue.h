// The discrete-event engine's queue: a 4-ary min-heap of small POD events.
//
// Ordering is (time, sequence number).  The sequence number is the insertion
// count, so two events at the same picosecond always run in the order they
// were scheduled: the same seed gives the same run, bit for bit.  Events are
// plain data dispatched by a switch on `type`, never std::function, and the
// heap's storage is reused, so the hot path does not allocate.
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

class EventQueue {
public:
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t scheduled() const { return next_seq_; }
  size_t peak_size() const { return peak_; }
  const Event &top() const { return heap_.front(); }

  void push(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    Event ev{time, next_seq_++, arg, target, type};
    size_t hole = heap_.size();
    heap_.push_back(ev);
    if (heap_.size() > peak_)
      peak_ = heap_.size();
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!before(ev, heap_[parent]))
        break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = ev;
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
        const size_t a = before(h[first + 1], h[first]) ? first + 1 : first;
        const size_t b = before(h[first + 3], h[first + 2]) ? first + 3 : first + 2;
        best = before(h[b], h[a]) ? b : a;
      } else if (first < n) {
        best = first;
        for (size_t c = first + 1; c < n; ++c)
          if (before(h[c], h[best]))
            best = c;
      } else {
        break;
      }
      h[hole] = h[best];
      hole = best;
    }
    while (hole > 0) {
      const size_t parent = (hole - 1) / kArity;
      if (!before(last, h[parent]))
        break;
      h[hole] = h[parent];
      hole = parent;
    }
    h[hole] = last;
    return out;
  }

  void clear() { heap_.clear(); }

private:
  static constexpr size_t kArity = 4;
  // (time, seq) as one 128-bit key: a compare and a subtract-with-borrow,
  // no branch.
  static bool before(const Event &a, const Event &b) {
    using Key = unsigned __int128;
    return ((Key{a.time} << 64) | a.seq) < ((Key{b.time} << 64) | b.seq);
  }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
  size_t peak_ = 0;
};

} // namespace mroce::sim
