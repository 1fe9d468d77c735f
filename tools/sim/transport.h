// The boundary between the fabric and a transport.
//
// A host's NIC owns one Transport: it carries every connection/QP of that
// host.  The host drives it with four calls -- post a message, hand it a
// received packet, fire a timer it asked for, poll it for the next packet to
// put on an idle port -- and the transport talks back only through
// TransportEnv.  The RoCEv2 baseline (rocev2.cc) and the MetaRoCE adapter
// (metaroce_adapter.cc, which drives kernel/core) implement it; nothing here
// knows which transport is running.
#pragma once

#include "metrics.h"
#include "packet.h"
#include "sim_time.h"

#include <cstdint>

namespace mroce::sim {

class SenderTrace; // timeline.h

// One application message: `bytes` from host `src` to host `dst`, carried on
// connection/QP number `flow` of that host pair (0 .. qps_per_pair-1).
struct MessageDesc {
  uint64_t id = 0;
  uint32_t src = 0;
  uint32_t dst = 0;
  uint32_t flow = 0;
  uint64_t bytes = 0;
};

enum class TxStatus : uint8_t {
  kPacket, // `out` holds a packet: transmit it now
  kIdle,   // nothing to send until the transport calls tx_ready()
  kWait,   // nothing now; poll again at `wait_until` (pacing)
};

struct TxResult {
  TxStatus status = TxStatus::kIdle;
  Time wait_until = kNever;
};

inline constexpr uint32_t kAllPorts = 0xffffffffu;

// Services a host gives its transport.
class TransportEnv {
public:
  virtual ~TransportEnv() = default;
  // Not virtual: the MetaRoCE adapter asks for the time at every core call.
  Time now() const { return *clock_; }
  virtual uint32_t host_id() const = 0;
  virtual uint32_t num_hosts() const = 0;
  virtual uint32_t num_ports() const = 0;
  virtual bool port_up(uint32_t port) const = 0;
  virtual uint64_t port_rate_bps(uint32_t port) const = 0;
  // Seed for this host's transport randomness (UDP source ports, ...).
  virtual uint64_t seed() const = 0;

  // Calls on_timer(cookie) at `at` (or now, if `at` is in the past).  Timers
  // cannot be cancelled: transports ignore stale cookies.
  virtual void set_timer(Time at, uint64_t cookie) = 0;
  // The transport has something to send on `port` (or on kAllPorts).
  virtual void tx_ready(uint32_t port) = 0;

  // Receiver side: `len` bytes at `offset` of message `msg` are in place.
  virtual void placed(uint64_t msg, uint64_t offset, uint64_t len) = 0;
  // Receiver side: message `msg` is complete (its completion is generated).
  virtual void delivered(uint64_t msg) = 0;
  // Sender side: message `msg` is acknowledged end to end.
  virtual void send_complete(uint64_t msg) = 0;

  virtual TransportCounters &stats() = 0;

  // Header bytes that do not fit Packet::header: storage for `len` (up to
  // kMaxAttachedHeader) bytes that travels with `pkt` and is freed with it.
  virtual uint8_t *attach_header(Packet &pkt, uint32_t len) = 0;
  // The attached bytes of a received packet, or nullptr.
  virtual const uint8_t *attached_header(const Packet &pkt) = 0;
  // From now on the fabric gives the prefetch hints below (they cost
  // time where the state fits the caches).
  virtual void enable_prefetch() = 0;

protected:
  explicit TransportEnv(const Time *clock) : clock_(clock) {}

private:
  const Time *clock_; // the simulated time now() reads
};

class Transport {
public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  // Queue a message for sending (this host is msg.src).
  virtual void post(const MessageDesc &msg) = 0;
  // A packet addressed to this host arrived on `port`.
  virtual void on_packet(uint32_t port, const Packet &pkt) = 0;
  virtual void on_timer(uint64_t cookie) = 0;
  // `port` is idle: fill `out` with the next packet (tuple, sizes, ECN, class,
  // header).  With data_allowed false (PFC pause) only control packets may
  // be returned.
  virtual TxResult poll_tx(uint32_t port, bool data_allowed, Packet &out) = 0;
  // End of run: add counters the transport keeps itself.
  virtual void report(TransportCounters &) const {}
  // Log what the senders enforce (--timeline_senders); nullptr: off.
  virtual void set_sender_trace(SenderTrace *) {}

  // Hints, called an event or so before on_packet(), on_timer() or
  // poll_tx() may follow once the transport has asked for them
  // (TransportEnv::enable_prefetch()): it may prefetch the state it will
  // touch.  They must not change anything (a hint can be wrong).  A timer
  // due at `at` gets two: two events ahead (`near` false) and one; a poll
  // one, two events ahead.
  virtual void prefetch_packet(const Packet &) const {}
  virtual void prefetch_timer(uint64_t, Time, bool) const {}
  virtual void prefetch_poll() const {}
};

} // namespace mroce::sim
