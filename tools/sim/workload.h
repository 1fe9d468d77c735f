// Workloads: who sends how much to whom, and when.
//
//   allreduce    ring all-reduce: 2(N-1) steps of size/N bytes to the next
//                host; a host's step k+1 starts when it has received step k
//   alltoall     every host sends size/N bytes to every other host
//   incast       hosts 1..N-1 each send `size` bytes to host 0
//   permutation  every host sends `size` bytes to one other host, a random
//                derangement drawn from the seed
//
// Each host-to-host transfer is split evenly over qps_per_pair connections
// (flows 0..Q-1), as collective libraries spread a transfer over QPs.
#pragma once

#include "messages.h"
#include "sim_time.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mroce::sim {

enum class WorkloadKind : uint8_t { kAllReduce, kAllToAll, kIncast, kPermutation };

std::string workload_name(WorkloadKind k);
bool parse_workload(const std::string &s, WorkloadKind &k);

struct WorkloadParams {
  WorkloadKind kind = WorkloadKind::kAllReduce;
  uint32_t hosts = 2;
  uint64_t size = 1ull << 20;
  uint32_t qps_per_pair = 1;
  uint64_t seed = 1;
};

// What a workload may do to the simulation.
class WorkloadDriver {
public:
  virtual ~WorkloadDriver() = default;
  // Posts one message; returns its id.
  virtual uint64_t post(uint32_t src, uint32_t dst, uint32_t flow, uint64_t bytes,
                        uint32_t tag) = 0;
  virtual const MessageTable &messages() const = 0;
};

class Workload {
public:
  explicit Workload(const WorkloadParams &p) : p_(p) {}
  virtual ~Workload() = default;
  virtual void start(WorkloadDriver &d) = 0;
  // Message `msg` was delivered (completely, once) to its destination.
  virtual void on_delivered(WorkloadDriver &d, uint64_t msg) = 0;
  bool done() const { return messages_expected_ > 0 && messages_delivered_ == messages_expected_; }
  uint64_t bytes_expected() const { return bytes_expected_; }
  uint64_t messages_expected() const { return messages_expected_; }
  uint32_t receivers() const { return receivers_; } // hosts that receive data

protected:
  // Posts src->dst `bytes` split over the flows; returns parts posted.
  uint32_t transfer(WorkloadDriver &d, uint32_t src, uint32_t dst, uint64_t bytes, uint32_t tag);
  uint32_t parts(uint64_t bytes) const;
  WorkloadParams p_;
  uint64_t bytes_expected_ = 0;
  uint64_t messages_expected_ = 0;
  uint64_t messages_delivered_ = 0;
  uint32_t receivers_ = 0;
};

// Returns nullptr and sets `err` for impossible parameters.
std::unique_ptr<Workload> make_workload(const WorkloadParams &p, std::string &err);

} // namespace mroce::sim
