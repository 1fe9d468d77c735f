#include "workload.h"

#include "rng.h"

#include <algorithm>
#include <numeric>

namespace mroce::sim {

std::string workload_name(WorkloadKind k) {
  switch (k) {
  case WorkloadKind::kAllReduce:
    return "allreduce";
  case WorkloadKind::kAllToAll:
    return "alltoall";
  case WorkloadKind::kIncast:
    return "incast";
  case WorkloadKind::kPermutation:
    return "permutation";
  }
  return "?";
}

bool parse_workload(const std::string &s, WorkloadKind &k) {
  for (auto c : {WorkloadKind::kAllReduce, WorkloadKind::kAllToAll, WorkloadKind::kIncast,
                 WorkloadKind::kPermutation}) {
    if (s == workload_name(c)) {
      k = c;
      return true;
    }
  }
  return false;
}

uint32_t Workload::parts(uint64_t bytes) const {
  return static_cast<uint32_t>(std::min<uint64_t>(p_.qps_per_pair, bytes));
}

uint32_t Workload::transfer(WorkloadDriver &d, uint32_t src, uint32_t dst, uint64_t bytes,
                            uint32_t tag) {
  const uint32_t n = parts(bytes);
  for (uint32_t f = 0; f < n; ++f) {
    // Even split; the first (bytes % n) parts carry one byte more.
    const uint64_t part = bytes / n + (f < bytes % n ? 1 : 0);
    d.post(src, dst, f, part, tag);
  }
  return n;
}

namespace {

class RingAllReduce final : public Workload {
public:
  explicit RingAllReduce(const WorkloadParams &p) : Workload(p) {
    const uint32_t n = p.hosts;
    steps_ = 2 * (n - 1);
    chunk_ = p.size / n;
    parts_ = parts(chunk_);
    received_.assign(static_cast<size_t>(n) * steps_, 0);
    next_step_.assign(n, 1);
    bytes_expected_ = uint64_t{n} * steps_ * chunk_;
    messages_expected_ = uint64_t{n} * steps_ * parts_;
    receivers_ = n;
  }
  void start(WorkloadDriver &d) override {
    for (uint32_t h = 0; h < p_.hosts; ++h)
      transfer(d, h, (h + 1) % p_.hosts, chunk_, 0);
  }
  void on_delivered(WorkloadDriver &d, uint64_t msg) override {
    ++messages_delivered_;
    const MessageRecord &m = d.messages()[msg];
    const size_t row = static_cast<size_t>(m.dst) * steps_;
    ++received_[row + m.tag];
    // A host sends step k+1 once it holds all of step k (it reduces and
    // forwards); checked in order, whatever order the parts complete in.
    uint32_t &next = next_step_[m.dst];
    while (next < steps_ && received_[row + next - 1] == parts_)
      transfer(d, m.dst, (m.dst + 1) % p_.hosts, chunk_, next++);
  }

private:
  uint32_t steps_ = 0;
  uint64_t chunk_ = 0;
  uint32_t parts_ = 0;
  std::vector<uint32_t> received_;  // [host][step] parts received
  std::vector<uint32_t> next_step_; // per host: next step to send
};

class AllToAll final : public Workload {
public:
  explicit AllToAll(const WorkloadParams &p) : Workload(p) {
    const uint32_t n = p.hosts;
    share_ = p.size / n;
    bytes_expected_ = uint64_t{n} * (n - 1) * share_;
    messages_expected_ = uint64_t{n} * (n - 1) * parts(share_);
    receivers_ = n;
  }
  void start(WorkloadDriver &d) override {
    // Each host starts with a different peer, as collective libraries do.
    for (uint32_t k = 1; k < p_.hosts; ++k)
      for (uint32_t h = 0; h < p_.hosts; ++h)
        transfer(d, h, (h + k) % p_.hosts, share_, k);
  }
  void on_delivered(WorkloadDriver &, uint64_t) override { ++messages_delivered_; }

private:
  uint64_t share_ = 0;
};

class Incast final : public Workload {
public:
  explicit Incast(const WorkloadParams &p) : Workload(p) {
    bytes_expected_ = uint64_t{p.hosts - 1} * p.size;
    messages_expected_ = uint64_t{p.hosts - 1} * parts(p.size);
    receivers_ = 1;
  }
  void start(WorkloadDriver &d) override {
    for (uint32_t h = 1; h < p_.hosts; ++h)
      transfer(d, h, 0, p_.size, 0);
  }
  void on_delivered(WorkloadDriver &, uint64_t) override { ++messages_delivered_; }
};

class Permutation final : public Workload {
public:
  explicit Permutation(const WorkloadParams &p) : Workload(p) {
    // A uniformly random derangement: shuffle until nobody sends to itself.
    Rng rng(p.seed, 0x9e3a0000ULL);
    dst_.resize(p.hosts);
    for (;;) {
      std::iota(dst_.begin(), dst_.end(), 0u);
      for (uint32_t i = p.hosts - 1; i > 0; --i)
        std::swap(dst_[i], dst_[rng.below(i + 1)]);
      bool fixed = false;
      for (uint32_t i = 0; i < p.hosts; ++i)
        fixed |= dst_[i] == i;
      if (!fixed)
        break;
    }
    bytes_expected_ = uint64_t{p.hosts} * p.size;
    messages_expected_ = uint64_t{p.hosts} * parts(p.size);
    receivers_ = p.hosts;
  }
  void start(WorkloadDriver &d) override {
    for (uint32_t h = 0; h < p_.hosts; ++h)
      transfer(d, h, dst_[h], p_.size, 0);
  }
  void on_delivered(WorkloadDriver &, uint64_t) override { ++messages_delivered_; }
  const std::vector<uint32_t> &destinations() const { return dst_; }

private:
  std::vector<uint32_t> dst_;
};

} // namespace

std::unique_ptr<Workload> make_workload(const WorkloadParams &p, std::string &err) {
  if (p.hosts < 2) {
    err = "workloads need at least 2 hosts";
    return nullptr;
  }
  if (p.size == 0) {
    err = "size must be at least 1 byte";
    return nullptr;
  }
  if (p.qps_per_pair == 0) {
    err = "qps_per_pair must be at least 1";
    return nullptr;
  }
  const bool split = p.kind == WorkloadKind::kAllReduce || p.kind == WorkloadKind::kAllToAll;
  if (split && p.size < p.hosts) {
    err = workload_name(p.kind) + " splits size over the hosts: size must be >= hosts";
    return nullptr;
  }
  switch (p.kind) {
  case WorkloadKind::kAllReduce:
    return std::make_unique<RingAllReduce>(p);
  case WorkloadKind::kAllToAll:
    return std::make_unique<AllToAll>(p);
  case WorkloadKind::kIncast:
    return std::make_unique<Incast>(p);
  case WorkloadKind::kPermutation:
    return std::make_unique<Permutation>(p);
  }
  err = "unknown workload";
  return nullptr;
}

} // namespace mroce::sim
