// DCQCN reaction point (Zhu et al., SIGCOMM 2015): the per-QP sending rate of
// the RoCEv2 baseline.  A CNP cuts the rate by alpha/2 and raises alpha;
// alpha decays while no CNP arrives; a timer and a byte counter drive fast
// recovery, then additive, then hyper increase towards line rate.
//
// Timers are evaluated lazily: the state is advanced to `now` whenever it is
// read or changed, which gives the same result as firing every timer on time
// without scheduling an event per QP per period.
#pragma once

#include "sim_time.h"

#include <cstdint>

namespace mroce::sim {

struct DcqcnParams {
  bool enabled = true;
  double g = 1.0 / 256;                // alpha gain
  Time alpha_period = 55 * kUs;        // alpha decay period without CNPs
  Time increase_period = 55 * kUs;     // rate increase timer
  uint64_t byte_counter = 10ull << 20; // bytes sent per increase event
  uint32_t fast_recovery_steps = 5;    // F
  double ai_fraction = 0.005;          // additive increase, fraction of line rate
  double hai_fraction = 0.05;          // hyper increase, fraction of line rate
  double min_rate_bps = 100e6;
  Time cnp_interval = 50 * kUs; // notification point: at most one CNP per QP per interval
};

class Dcqcn {
public:
  void init(const DcqcnParams *p, double line_bps);
  // Current rate in bit/s, timers advanced to `now`.
  double rate(Time now);
  void on_cnp(Time now);
  void on_sent(Time now, uint64_t bytes);
  double alpha() const { return alpha_; }
  double target() const { return rt_; }
  bool limited() const { return rc_ < line_; }

private:
  void catch_up(Time now);
  void increase();

  const DcqcnParams *p_ = nullptr;
  double line_ = 0;
  double rc_ = 0; // current rate
  double rt_ = 0; // target rate
  double alpha_ = 1.0;
  bool recovering_ = false; // below line rate: increase timers run
  Time alpha_next_ = kNever;
  Time increase_next_ = kNever;
  uint32_t timer_count_ = 0;
  uint32_t byte_count_ = 0;
  uint64_t bytes_ = 0;
};

} // namespace mroce::sim
