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
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n == 0)
      return out;
    size_t hole = 0;
    for (;;) {
      const size_t first = hole * kArity + 1;
      if (first >= n)
        break;
      size_t best = first;
      const size_t end = first + kArity < n ? first + kArity : n;
      for (size_t c = first + 1; c < end; ++c)
        if (before(heap_[c], heap_[best]))
          best = c;
      if (!before(heap_[best], last))
        break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    return out;
  }

  void clear() { heap_.clear(); }

private:
  static constexpr size_t kArity = 4;
  static bool before(const Event &a, const Event &b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
  size_t peak_ = 0;
};

} // namespace mroce::sim
