// The discrete-event engine's queue: a small calendar of near events in
// front of a 4-ary min-heap, of small POD events.
//
// Ordering is (time, sequence number).  The sequence number is the insertion
// count, so two events at the same picosecond always run in the order they
// were scheduled: the same seed gives the same run, bit for bit.  Events are
// plain data dispatched by a switch on `type`, never std::function, and the
// storage is reused, so the hot path does not allocate.
//
// Packet events (end of serialisation, arrival) are due within a microsecond
// or so of now: they go into the calendar.  Transport timers are mostly far
// off (RTOs, probes) and, with thousands of connections, far more numerous:
// they go straight into the heap (push_timer), as does whatever does not fit
// the calendar.  pop() takes the earlier of the calendar's least event and
// the heap's top, so the order is exactly that of one heap.
#pragma once

#include "sim_time.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
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
        // A full group of children: a branch-free tournament.  The choice
        // depends on loads, so nothing fetches the next level early: ask
        // for all four of its groups now (a heap beyond the caches would
        // otherwise wait for memory at every level).
        if (const size_t next = first * kArity + 1; next < n) {
          __builtin_prefetch(&h[next]);
          __builtin_prefetch(&h[next + 4]);
          __builtin_prefetch(&h[next + 8]);
          __builtin_prefetch(&h[next + 12]);
        }
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

// The calendar: a ring of kBuckets buckets of kWidth picoseconds (~2 us in
// all, 256 KB: it stays in the caches), each up to kSlotCap events sorted by
// (time, seq), with a bitmap of the buckets in use.  The least event is the
// head of the first bucket in use (a bit scan); a push is an insertion from
// the back, which is an append for the usual push at or after the bucket's
// latest time.  Events beyond the window, in a full bucket or before the
// window go into the heap.  Where an event is kept is only a matter of
// speed.
class EventQueue {
public:
  EventQueue() : slots_(kBuckets * kSlotCap), head_(kBuckets, 0), end_(kBuckets, 0) {}
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return near_ == 0 && heap_.empty(); }
  size_t size() const { return near_ + heap_.size(); }
  uint64_t scheduled() const { return next_seq_; }
  size_t peak_size() const { return peak_; }
  const Event &top() const {
    if (near_ == 0)
      return heap_.top();
    const Event &n = slots_[near_least()];
    return heap_.empty() || event_before(n, heap_.top()) ? n : heap_.top();
  }

  void push(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    const Event ev{time, next_seq_++, arg, target, type};
    note_size();
    const uint64_t b = time / kWidth;
    if (b >= cur_ && b - cur_ < kBuckets) {
      const size_t ring = b % kBuckets;
      uint8_t &end = end_[ring];
      if (end < kSlotCap) {
        Event *const e = &slots_[ring * kSlotCap];
        size_t at = end++;
        for (const size_t head = head_[ring]; at > head && event_before(ev, e[at - 1]); --at)
          e[at] = e[at - 1];
        e[at] = ev;
        bits_[ring / 64] |= uint64_t{1} << (ring % 64);
        ++near_;
        if (b < scan_)
          scan_ = b;
        // The least event is the head of the first bucket in use: only a
        // push into an (empty) earlier bucket moves it.
        if (least_ != kNoLeast && b < least_bucket_)
          set_least(ring * kSlotCap + at, b);
        return;
      }
    }
    heap_.push(ev);
  }
  // The same, for events that are mostly far in the future (timers).
  void push_timer(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    note_size();
    heap_.push(Event{time, next_seq_++, arg, target, type});
  }

  Event pop() {
    if (near_ == 0)
      return heap_.pop();
    const size_t at = near_least();
    if (!heap_.empty() && event_before(heap_.top(), slots_[at]))
      return heap_.pop();
    const Event out = slots_[at];
    const size_t ring = at / kSlotCap;
    if (++head_[ring] == end_[ring]) {
      head_[ring] = end_[ring] = 0;
      bits_[ring / 64] &= ~(uint64_t{1} << (ring % 64));
      least_ = kNoLeast;
    } else {
      ++least_; // the bucket's next event
    }
    --near_;
    cur_ = scan_; // nothing before this bucket is left, or can come
    return out;
  }

  void clear() {
    heap_.clear();
    std::fill(head_.begin(), head_.end(), 0);
    std::fill(end_.begin(), end_.end(), 0);
    std::fill(std::begin(bits_), std::end(bits_), 0);
    near_ = 0;
    cur_ = scan_ = 0;
    least_ = kNoLeast;
  }

private:
  static constexpr Time kWidth = 4096;    // ps per bucket (~4 ns)
  static constexpr size_t kBuckets = 512; // horizon ~2 us
  static constexpr uint8_t kSlotCap = 16; // events per bucket; more go to the heap
  static constexpr size_t kNoLeast = ~size_t{0};

  // Slot index of the calendar's least event (near_ > 0).  Moves scan_ to
  // its bucket: every bucket between cur_ and it is empty.  Remembered
  // while it stays the least.
  size_t near_least() const {
    if (least_ != kNoLeast)
      return least_;
    size_t ring = scan_ % kBuckets;
    uint64_t word = bits_[ring / 64] >> (ring % 64);
    if (word) {
      ring += static_cast<size_t>(__builtin_ctzll(word));
    } else {
      size_t w = ring / 64;
      do
        w = (w + 1) % (kBuckets / 64);
      while (!bits_[w]);
      ring = w * 64 + static_cast<size_t>(__builtin_ctzll(bits_[w]));
    }
    scan_ += (ring - scan_ % kBuckets) % kBuckets;
    set_least(ring * kSlotCap + head_[ring], scan_);
    return least_;
  }

  void set_least(size_t slot, uint64_t bucket) const {
    least_ = slot;
    least_bucket_ = bucket;
  }

  void note_size() { // before adding one
    const size_t n = size() + 1;
    if (n > peak_)
      peak_ = n;
  }

  EventHeap heap_;
  std::vector<Event> slots_;  // kSlotCap per bucket, [head_, end_) in use
  std::vector<uint8_t> head_; // per bucket
  std::vector<uint8_t> end_;  // per bucket
  uint64_t bits_[kBuckets / 64] = {};
  size_t near_ = 0;                   // events in the calendar
  uint64_t cur_ = 0;                  // absolute bucket of the last event taken from it
  mutable uint64_t scan_ = 0;         // >= cur_; no calendar event before this bucket
  mutable size_t least_ = kNoLeast;   // near_least(), while valid
  mutable uint64_t least_bucket_ = 0; // its absolute bucket
  uint64_t next_seq_ = 0;
  size_t peak_ = 0;
};

} // namespace mroce::sim
