// A growable ring buffer of packet indices: an output queue that does not
// allocate once it has reached its working size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mroce::sim {

class PacketFifo {
public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }

  void push(uint32_t v) {
    if (count_ == buf_.size())
      grow();
    buf_[(head_ + count_) & (buf_.size() - 1)] = v;
    ++count_;
  }
  uint32_t front() const { return buf_[head_]; }
  uint32_t pop() {
    const uint32_t v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --count_;
    return v;
  }

private:
  void grow() {
    std::vector<uint32_t> next(buf_.empty() ? 16 : buf_.size() * 2);
    for (size_t i = 0; i < count_; ++i)
      next[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(next);
    head_ = 0;
  }
  std::vector<uint32_t> buf_; // size is always a power of two (or zero)
  size_t head_ = 0;
  size_t count_ = 0;
};

} // namespace mroce::sim
