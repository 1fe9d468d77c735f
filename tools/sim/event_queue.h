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
// beyond the calendar's window, they go into the heap, as does whatever else
// does not fit the calendar.  pop() takes the earlier of the calendar's least event and
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
  // top().time, or kNever when empty: one load for the calendar's test.
  Time top_time() const { return top_time_; }
  void clear() {
    heap_.clear();
    top_time_ = kNever;
  }

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
    top_time_ = h[0].time;
  }

  Event pop() {
    const Event out = heap_.front();
    const size_t n = heap_.size() - 1; // entries once the last one is taken
    if (n == 0) {
      heap_.pop_back();
      top_time_ = kNever;
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
    top_time_ = h[0].time;
    return out;
  }

private:
  static constexpr size_t kArity = 4;
  std::vector<Event> heap_;
  Time top_time_ = kNever;
};

// The calendar: a ring of kBuckets buckets of kWidth picoseconds (~2 us in
// all, 256 KB: it stays in the caches), each up to kSlotCap events sorted by
// (time, seq), with a bitmap of the buckets in use.  The least event is the
// head of the first bucket in use (a bit scan); a push is an insertion from
// the back, which is an append for the usual push at or after the bucket's
// latest time.
//
// Behind it a coarser wheel (kFarBuckets unsorted buckets of kFarSpan
// calendar buckets, ~1 ms in all) takes what is due after the calendar's
// window: transport timers (RTO, TLP, delayed ACK, pacing rechecks), which
// with thousands of connections would otherwise make the heap deep.  A far
// bucket is appended to, and poured into the calendar once the window
// covers it whole, so the calendar never holds an event later than one in
// the wheel.  Events beyond the wheel, in a full bucket or before the
// window go into the heap.  Where an event is kept is only a matter of
// speed: pop() takes the least of the calendar and the heap, the order of
// one heap.
class EventQueue {
public:
  EventQueue() {
    std::fill(std::begin(far_head_), std::end(far_head_), kNoChunk);
    std::fill(std::begin(far_tail_), std::end(far_tail_), kNoChunk);
  }
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return size() == 0; }
  size_t size() const { return next_seq_ - taken_; }
  uint64_t scheduled() const { return next_seq_; }
  size_t peak_size() const { return std::max(peak_, size()); }
  const Event &top() {
    settle();
    if (near_ == 0)
      return heap_.top();
    const Event &n = slots_[near_least()];
    return heap_.empty() || event_before(n, heap_.top()) ? n : heap_.top();
  }

  // Inline: most events are packets due within the calendar's window.
  [[gnu::always_inline]] void push(Time time, uint8_t type, uint32_t target, uint64_t arg) {
    const uint64_t seq = next_seq_++; // and one more pending: size()
    const uint64_t b = time / kWidth;
    if (b >= cur_ && b < near_end_) {
      // near_insert() with the event written in place, not copied
      const size_t ring = b % kBuckets;
      if (uint8_t &end = end_[ring]; end < kSlotCap) {
        Event *const e = &slots_[ring * kSlotCap];
        size_t at = end++;
        for (const size_t head = head_[ring]; at > head && time < e[at - 1].time; --at)
          e[at] = e[at - 1];
        e[at].time = time;
        e[at].seq = seq;
        e[at].arg = arg;
        e[at].target = target;
        e[at].type = type;
        inserted(ring, b, at);
        return;
      }
    }
    place_far(Event{time, seq, arg, target, type}, b);
  }

  Event pop() {
    Event out;
    pop_due(kNever, out);
    return out;
  }

  // Takes the least event into `out` if there is one due at or before
  // `until` (one look at the least event instead of top() then pop()).
  bool pop_due(Time until, Event &out) {
    settle();
    if (near_ == 0) {
      if (heap_.empty() || heap_.top().time > until)
        return false;
      out = heap_.pop();
      taken();
      return true;
    }
    const size_t at = near_least();
    // Nearly always the heap is empty or its top later: one compare.
    if (heap_.top_time() <= slots_[at].time && !heap_.empty() &&
        event_before(heap_.top(), slots_[at])) {
      if (heap_.top().time > until)
        return false;
      out = heap_.pop();
      taken();
      return true;
    }
    if (slots_[at].time > until)
      return false;
    out = slots_[at];
    const size_t ring = at / kSlotCap;
    if (++head_[ring] == end_[ring]) {
      head_[ring] = end_[ring] = 0;
      bits_[ring / 64] &= ~(uint64_t{1} << (ring % 64));
      least_ = kNoLeast;
    } else {
      ++least_; // the bucket's next event
    }
    --near_;
    taken();
    cur_ = scan_; // nothing before this bucket is left, or can come
    if (cur_ >= pour_at_)
      pour();
    return true;
  }

  // The calendar's next two events, or nullptr: a hint for prefetching
  // only (the heap is not looked at, so either may not be what pop()
  // returns).  Reads state only; finding the least bucket early is what
  // the next pop() would do anyway.
  void peek2(const Event *&first, const Event *&second) const {
    first = second = nullptr;
    if (near_ == 0)
      return;
    const size_t at = near_least();
    first = &slots_[at];
    const size_t ring = at / kSlotCap;
    if (at + 1 < ring * kSlotCap + end_[ring]) {
      second = &slots_[at + 1];
    } else if (near_ > 1) {
      const size_t r = next_set(bits_, kBuckets / 64, (ring + 1) % kBuckets);
      second = &slots_[r * kSlotCap + head_[r]];
    }
  }

  void clear() {
    heap_.clear();
    std::fill(std::begin(head_), std::end(head_), 0);
    std::fill(std::begin(end_), std::end(end_), 0);
    std::fill(std::begin(bits_), std::end(bits_), 0);
    std::fill(std::begin(far_head_), std::end(far_head_), kNoChunk);
    std::fill(std::begin(far_tail_), std::end(far_tail_), kNoChunk);
    chunks_.clear();
    free_chunk_ = kNoChunk;
    std::fill(std::begin(far_bits_), std::end(far_bits_), 0);
    near_ = far_n_ = 0;
    peak_ = std::max(peak_, size());
    taken_ = next_seq_;
    cur_ = scan_ = 0;
    least_ = kNoLeast;
    far_base_ = kBuckets / kFarSpan;
    near_end_ = kBuckets;
    pour_at_ = (far_base_ + 1) * kFarSpan - kBuckets;
  }

private:
  static constexpr Time kWidth = 4096;    // ps per bucket (~4 ns)
  static constexpr size_t kBuckets = 512; // horizon ~2 us
  static constexpr uint8_t kSlotCap = 16; // events per bucket; more go to the heap
  static constexpr size_t kNoLeast = ~size_t{0};
  static constexpr uint64_t kFarSpan = 128;   // calendar buckets per far bucket (~0.5 us)
  static constexpr size_t kFarBuckets = 2048; // horizon ~1 ms
  static_assert(kBuckets % kFarSpan == 0 && kFarSpan < kBuckets);

  // What does not go into the calendar (its window is [cur_, near_end_)):
  // into the wheel if within its horizon, else into the heap.
  [[gnu::noinline]] void place_far(const Event &ev, uint64_t b) {
    if (const uint64_t f = b / kFarSpan; f >= far_base_ && f - far_base_ < kFarBuckets) {
      const size_t i = f % kFarBuckets;
      uint32_t t = far_tail_[i];
      if (t == kNoChunk || chunks_[t].n == kChunkEvents) {
        const uint32_t c = new_chunk();
        (t == kNoChunk ? far_head_[i] : chunks_[t].next) = c;
        far_tail_[i] = t = c;
        far_bits_[i / 64] |= uint64_t{1} << (i % 64);
      }
      FarChunk &ch = chunks_[t];
      ch.ev[ch.n++] = ev;
      ++far_n_;
      return;
    }
    heap_.push(ev);
  }

  // b in [cur_, near_end_).  False if its bucket is full.  (push() does
  // the same for the newest event: among equal times it goes last, so it
  // compares times only.)
  bool near_insert(const Event &ev, uint64_t b) {
    const size_t ring = b % kBuckets;
    uint8_t &end = end_[ring];
    if (end >= kSlotCap)
      return false;
    Event *const e = &slots_[ring * kSlotCap];
    size_t at = end++;
    for (const size_t head = head_[ring]; at > head && event_before(ev, e[at - 1]); --at)
      e[at] = e[at - 1];
    e[at] = ev;
    inserted(ring, b, at);
    return true;
  }

  // An event leaves.  The most pending is reached just before a pop (only
  // pushes come between two), so the peak is taken here, not at every push.
  void taken() {
    if (const size_t n = size(); n > peak_)
      peak_ = n;
    ++taken_;
  }

  // Bookkeeping of an insertion at slot `at` of bucket `ring` (absolute b).
  [[gnu::always_inline]] void inserted(size_t ring, uint64_t b, size_t at) {
    bits_[ring / 64] |= uint64_t{1} << (ring % 64);
    ++near_;
    if (b < scan_)
      scan_ = b;
    // The least event is the head of the first bucket in use: only a push
    // into an (empty) earlier bucket moves it.
    if (least_ != kNoLeast && b < least_bucket_) {
      least_ = ring * kSlotCap + at;
      least_bucket_ = b;
    }
  }

  // Pours every far bucket the window now covers whole into the calendar.
  void pour() {
    while (cur_ >= pour_at_) {
      const size_t i = far_base_ % kFarBuckets;
      ++far_base_;
      near_end_ += kFarSpan;
      pour_at_ += kFarSpan;
      uint32_t c = far_head_[i];
      if (c == kNoChunk)
        continue;
      far_head_[i] = far_tail_[i] = kNoChunk;
      far_bits_[i / 64] &= ~(uint64_t{1} << (i % 64));
      while (c != kNoChunk) {
        FarChunk &ch = chunks_[c];
        far_n_ -= ch.n;
        for (uint32_t k = 0; k < ch.n; ++k)
          if (!near_insert(ch.ev[k], ch.ev[k].time / kWidth))
            heap_.push(ch.ev[k]);
        const uint32_t next = ch.next;
        ch.next = free_chunk_; // recycled while it is in the caches
        free_chunk_ = c;
        c = next;
      }
    }
  }

  uint32_t new_chunk() {
    uint32_t c = free_chunk_;
    if (c != kNoChunk) {
      free_chunk_ = chunks_[c].next;
    } else {
      c = static_cast<uint32_t>(chunks_.size());
      chunks_.emplace_back();
    }
    chunks_[c].n = 0;
    chunks_[c].next = kNoChunk;
    return c;
  }

  // The first set bit at or after @from in a circular bitmap of @words
  // words, of which at least one bit is set.
  static size_t next_set(const uint64_t *bits, size_t words, size_t from) {
    const uint64_t word = bits[from / 64] >> (from % 64);
    if (word)
      return from + static_cast<size_t>(__builtin_ctzll(word));
    size_t w = from / 64;
    do
      w = (w + 1) % words;
    while (!bits[w]);
    return w * 64 + static_cast<size_t>(__builtin_ctzll(bits[w]));
  }

  // With the calendar empty and events in the wheel, moves the window to
  // the first far bucket in use, unless the heap has an earlier event.
  void settle() {
    if (near_ != 0 || far_n_ == 0)
      return;
    const size_t i = next_set(far_bits_, kFarBuckets / 64, far_base_ % kFarBuckets);
    const uint64_t f = far_base_ + (i + kFarBuckets - far_base_ % kFarBuckets) % kFarBuckets;
    if (!heap_.empty() && heap_.top().time / kWidth < f * kFarSpan)
      return;
    // Nothing is in the calendar: the window may start anywhere up to the
    // bucket's start; place it so that the bucket is its last far bucket.
    const uint64_t to = (f + 1) * kFarSpan - kBuckets;
    if (to > cur_)
      cur_ = scan_ = to;
    least_ = kNoLeast;
    pour();
  }

  // Slot index of the calendar's least event (near_ > 0).  Moves scan_ to
  // its bucket: every bucket between cur_ and it is empty.  Remembered
  // while it stays the least.
  size_t near_least() const {
    if (least_ != kNoLeast)
      return least_;
    const size_t ring = next_set(bits_, kBuckets / 64, scan_ % kBuckets);
    scan_ += (ring - scan_ % kBuckets) % kBuckets;
    least_ = ring * kSlotCap + head_[ring];
    least_bucket_ = scan_;
    return least_;
  }

  // In the object, not behind vectors: the hot paths address them from
  // `this` instead of loading a pointer first.
  EventHeap heap_;
  Event slots_[kBuckets * kSlotCap]; // kSlotCap per bucket, [head_, end_) in use
  uint8_t head_[kBuckets] = {};      // per bucket
  uint8_t end_[kBuckets] = {};       // per bucket
  uint64_t bits_[kBuckets / 64] = {};
  // The wheel: per far bucket a list of chunks of events, unsorted, from
  // one pool with a free list, so it takes memory (and cache) for the
  // events pending in it, not the most each bucket ever held.
  static constexpr uint32_t kChunkEvents = 7;
  static constexpr uint32_t kNoChunk = ~uint32_t{0};
  struct FarChunk {
    Event ev[kChunkEvents];
    uint32_t n;
    uint32_t next; // the bucket's next chunk, or the free list's
  };
  std::vector<FarChunk> chunks_;
  uint32_t free_chunk_ = kNoChunk;
  uint32_t far_head_[kFarBuckets], far_tail_[kFarBuckets]; // per far bucket
  uint64_t far_bits_[kFarBuckets / 64] = {};
  size_t near_ = 0;                   // events in the calendar
  size_t far_n_ = 0;                  // events in the wheel
  uint64_t taken_ = 0;                // popped or cleared: size() is next_seq_ - taken_
  uint64_t cur_ = 0;                  // absolute bucket of the last event taken from it
  mutable uint64_t scan_ = 0;         // >= cur_; no calendar event before this bucket
  mutable size_t least_ = kNoLeast;   // near_least(), while valid
  mutable uint64_t least_bucket_ = 0; // its absolute bucket
  // Far buckets before far_base_ have been poured; far bucket far_base_
  // starts at calendar bucket far_base_ * kFarSpan, which is where the
  // calendar's window ends.  It is poured once cur_ reaches pour_at_.
  uint64_t far_base_ = kBuckets / kFarSpan;
  uint64_t near_end_ = kBuckets; // far_base_ * kFarSpan
  uint64_t pour_at_ = (kBuckets / kFarSpan + 1) * kFarSpan - kBuckets;
  uint64_t next_seq_ = 0;
  size_t peak_ = 0;
};

} // namespace mroce::sim
