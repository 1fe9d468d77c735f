#include "dcqcn.h"

#include <algorithm>
#include <cmath>

namespace mroce::sim {

void Dcqcn::init(const DcqcnParams *p, double line_bps) {
  *this = Dcqcn{};
  p_ = p;
  line_ = line_bps;
  rc_ = line_bps;
  rt_ = line_bps;
}

double Dcqcn::rate(Time now) {
  catch_up(now);
  return rc_;
}

void Dcqcn::catch_up(Time now) {
  if (alpha_next_ != kNever && now >= alpha_next_) {
    const uint64_t n = (now - alpha_next_) / p_->alpha_period + 1;
    alpha_ *= std::pow(1.0 - p_->g, static_cast<double>(n));
    alpha_next_ += n * p_->alpha_period;
  }
  while (recovering_ && increase_next_ <= now) {
    ++timer_count_;
    increase_next_ += p_->increase_period;
    increase();
  }
}

void Dcqcn::on_cnp(Time now) {
  catch_up(now);
  rt_ = rc_;
  rc_ = std::max(rc_ * (1.0 - alpha_ / 2), p_->min_rate_bps);
  alpha_ = (1.0 - p_->g) * alpha_ + p_->g;
  alpha_next_ = now + p_->alpha_period;
  increase_next_ = now + p_->increase_period;
  timer_count_ = 0;
  byte_count_ = 0;
  bytes_ = 0;
  recovering_ = true;
}

void Dcqcn::on_sent(Time now, uint64_t bytes) {
  catch_up(now);
  if (!recovering_)
    return;
  bytes_ += bytes;
  while (recovering_ && bytes_ >= p_->byte_counter) {
    bytes_ -= p_->byte_counter;
    ++byte_count_;
    increase();
  }
}

void Dcqcn::increase() {
  const uint32_t f = p_->fast_recovery_steps;
  const uint32_t hi = std::max(timer_count_, byte_count_);
  const uint32_t lo = std::min(timer_count_, byte_count_);
  if (hi < f) {
    // Fast recovery: close half the gap to the rate before the cut.
  } else if (lo < f) {
    rt_ += p_->ai_fraction * line_; // additive increase
  } else {
    rt_ += static_cast<double>(lo - f + 1) * p_->hai_fraction * line_; // hyper increase
  }
  rt_ = std::min(rt_, line_);
  rc_ = std::min((rt_ + rc_) / 2, line_);
  // Close enough to line rate: stop the timers until the next CNP.
  if (line_ - rc_ < line_ * 1e-6) {
    rc_ = line_;
    rt_ = line_;
    recovering_ = false;
    increase_next_ = kNever;
  }
}

} // namespace mroce::sim
