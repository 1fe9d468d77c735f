// One direction of a link.  A full-duplex cable is two channels, each owned
// by the port that transmits on it.
#pragma once

#include "rng.h"
#include "sim_time.h"

#include <cstdint>

namespace mroce::sim {

struct Channel {
  uint64_t rate_bps = 0;
  Time delay = 0;              // propagation
  double loss = 0.0;           // random loss fraction, per packet
  uint64_t loss_threshold = 0; // loss as an Rng::chance() threshold
  bool up = true;
  // Bumped when the channel goes down: packets already on the wire carry the
  // old epoch and are dropped on arrival.
  uint32_t epoch = 0;
  uint32_t link = 0;     // index of the Link this channel belongs to
  Time jitter = 0;       // extra arrival delay, uniform in [0, jitter]
  Time last_arrival = 0; // arrivals stay in order despite the jitter
  Rng rng;               // loss draws, a stream of its own

  void set_loss(double p) {
    loss = p;
    loss_threshold = probability_threshold(p);
  }
};

} // namespace mroce::sim
