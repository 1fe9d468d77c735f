// Application messages and what happened to them: the ground truth the
// simulator checks transports against.  Every placement is recorded as a
// byte range, so a byte placed twice (or outside its message) is caught
// whatever order the transport places in.
#pragma once

#include "sim_time.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mroce::sim {

// Disjoint, sorted byte ranges [begin, end).  The last range is kept in
// the object: nearly every placement extends it (a transport places in
// order), and then only the object's line is read, not the vector's.
class RangeSet {
public:
  // Adds [begin, end); returns how many of those bytes were new.
  uint64_t add(uint64_t begin, uint64_t end);
  uint64_t covered() const { return covered_; }
  size_t pieces() const { return ranges_.size() + (last_end_ > last_begin_); }

private:
  uint64_t add_slow(uint64_t begin, uint64_t end);
  uint64_t covered_ = 0;
  uint64_t last_begin_ = 0, last_end_ = 0;            // empty: no range yet
  std::vector<std::pair<uint64_t, uint64_t>> ranges_; // before the last
};

struct MessageRecord {
  // What a placement reads first, together.
  uint32_t src = 0;
  uint32_t dst = 0;
  uint64_t bytes = 0;
  RangeSet placed;
  uint32_t flow = 0;
  uint32_t tag = 0; // workload's own (ring step, ...)
  Time posted = 0;
  Time delivered = kNever;
  Time send_completed = kNever;
};

struct MessageStats {
  uint64_t bytes_posted = 0;
  uint64_t bytes_delivered = 0; // unique application bytes placed
  uint64_t duplicate_bytes = 0; // placed more than once
  uint64_t bad_reports = 0;     // out of range, wrong host, unknown or repeated message
  uint64_t messages_delivered = 0;
  uint64_t duplicate_deliveries = 0;
  uint64_t incomplete_deliveries = 0; // completion before every byte was placed
  uint64_t send_completions = 0;
};

class MessageTable {
public:
  uint64_t add(uint32_t src, uint32_t dst, uint32_t flow, uint64_t bytes, uint32_t tag, Time now);
  // Each returns false when the report is invalid (and counts it).
  bool place(uint32_t host, uint64_t id, uint64_t offset, uint64_t len);
  bool deliver(uint32_t host, uint64_t id, Time now);
  bool send_complete(uint32_t host, uint64_t id, Time now);

  size_t size() const { return msgs_.size(); }
  const MessageRecord &operator[](uint64_t id) const { return msgs_[id]; }
  const MessageStats &stats() const { return stats_; }

private:
  std::vector<MessageRecord> msgs_;
  MessageStats stats_;
};

} // namespace mroce::sim
