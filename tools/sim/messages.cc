#include "messages.h"

#include <algorithm>

namespace mroce::sim {

uint64_t RangeSet::add(uint64_t begin, uint64_t end) {
  if (begin >= end)
    return 0;
  const bool any = last_end_ > last_begin_;
  // Fast path: in-order placement extends the last range.
  if (any && last_end_ == begin) {
    last_end_ = end;
    covered_ += end - begin;
    return end - begin;
  }
  if (!any || last_end_ < begin) {
    if (any)
      ranges_.emplace_back(last_begin_, last_end_);
    last_begin_ = begin;
    last_end_ = end;
    covered_ += end - begin;
    return end - begin;
  }
  // The general case works on the vector with the last range in it.
  ranges_.emplace_back(last_begin_, last_end_);
  const uint64_t added = add_slow(begin, end);
  last_begin_ = ranges_.back().first;
  last_end_ = ranges_.back().second;
  ranges_.pop_back();
  return added;
}

uint64_t RangeSet::add_slow(uint64_t begin, uint64_t end) {
  // Merge with every overlapping or touching range.
  auto first = std::lower_bound(ranges_.begin(), ranges_.end(), begin,
                                [](const auto &r, uint64_t b) { return r.second < b; });
  uint64_t nb = begin, ne = end, old = 0;
  auto last = first;
  while (last != ranges_.end() && last->first <= end) {
    nb = std::min(nb, last->first);
    ne = std::max(ne, last->second);
    old += last->second - last->first;
    ++last;
  }
  const uint64_t added = (ne - nb) - old;
  first = ranges_.erase(first, last);
  ranges_.insert(first, {nb, ne});
  covered_ += added;
  return added;
}

uint64_t MessageTable::add(uint32_t src, uint32_t dst, uint32_t flow, uint64_t bytes, uint32_t tag,
                           Time now) {
  MessageRecord m;
  m.src = src;
  m.dst = dst;
  m.flow = flow;
  m.tag = tag;
  m.bytes = bytes;
  m.posted = now;
  msgs_.push_back(std::move(m));
  stats_.bytes_posted += bytes;
  return msgs_.size() - 1;
}

bool MessageTable::place(uint32_t host, uint64_t id, uint64_t offset, uint64_t len) {
  if (id >= msgs_.size() || msgs_[id].dst != host || offset + len > msgs_[id].bytes ||
      offset + len < offset) {
    ++stats_.bad_reports;
    return false;
  }
  const uint64_t fresh = msgs_[id].placed.add(offset, offset + len);
  stats_.bytes_delivered += fresh;
  stats_.duplicate_bytes += len - fresh;
  return fresh == len;
}

bool MessageTable::deliver(uint32_t host, uint64_t id, Time now) {
  if (id >= msgs_.size() || msgs_[id].dst != host) {
    ++stats_.bad_reports;
    return false;
  }
  MessageRecord &m = msgs_[id];
  if (m.delivered != kNever) {
    ++stats_.duplicate_deliveries;
    return false;
  }
  if (m.placed.covered() != m.bytes) {
    ++stats_.incomplete_deliveries;
    return false;
  }
  m.delivered = now;
  ++stats_.messages_delivered;
  return true;
}

bool MessageTable::send_complete(uint32_t host, uint64_t id, Time now) {
  if (id >= msgs_.size() || msgs_[id].src != host || msgs_[id].send_completed != kNever) {
    ++stats_.bad_reports;
    return false;
  }
  msgs_[id].send_completed = now;
  ++stats_.send_completions;
  return true;
}

} // namespace mroce::sim
