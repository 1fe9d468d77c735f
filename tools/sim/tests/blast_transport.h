// Test transports: a sender that emits a fixed train of packets at line rate
// and records what it receives, so fabric behaviour can be checked packet by
// packet without any protocol in the way.
#pragma once

#include "transport.h"

#include <cstdint>
#include <vector>

namespace mroce::sim::test {

struct BlastHeader {
  uint32_t seq;
  uint32_t src;
};

struct Received {
  uint32_t seq;
  uint32_t src;
  uint8_t ecn;
  Time at;
};

class BlastTransport final : public Transport {
public:
  explicit BlastTransport(TransportEnv &env) : env_(env) {}

  // Queue `count` packets of `wire_bytes` to `dst` on `port`.
  void blast(uint32_t dst, uint32_t count, uint32_t wire_bytes, uint8_t ecn = kEct0,
             uint32_t port = 0, uint16_t src_port = 0xc000, bool vary_src_port = false) {
    dst_ = dst;
    left_ = count;
    wire_ = wire_bytes;
    ecn_ = ecn;
    port_ = port;
    sport_ = src_port;
    vary_ = vary_src_port;
    env_.tx_ready(port);
  }
  // Alternate ECT and Not-ECT packets.
  void alternate_ecn(bool on) { alternate_ = on; }

  const char *name() const override { return "blast"; }
  void post(const MessageDesc &) override {}
  void on_packet(uint32_t, const Packet &pkt) override {
    BlastHeader h;
    if (pkt.get_header(h))
      rx.push_back(Received{h.seq, h.src, pkt.ecn, env_.now()});
  }
  void on_timer(uint64_t) override {}
  TxResult poll_tx(uint32_t port, bool data_allowed, Packet &out) override {
    if (port != port_ || left_ == 0 || !data_allowed)
      return {TxStatus::kIdle, kNever};
    --left_;
    BlastHeader h{sent_++, env_.host_id()};
    out.set_header(h);
    out.tuple.src_ip = host_address(env_.host_id(), port);
    out.tuple.dst_ip = host_address(dst_, port);
    out.tuple.src_port = vary_ ? static_cast<uint16_t>(sport_ + h.seq) : sport_;
    out.tuple.dst_port = 4791;
    out.wire_bytes = wire_;
    out.payload_bytes = wire_ - 64;
    out.ecn = alternate_ && (h.seq & 1) ? uint8_t{kNotEct} : ecn_;
    out.tclass = kClassData;
    return {TxStatus::kPacket, 0};
  }

  std::vector<Received> rx;
  uint32_t sent() const { return sent_; }

private:
  TransportEnv &env_;
  uint32_t dst_ = 0, left_ = 0, wire_ = 0, port_ = 0, sent_ = 0;
  uint8_t ecn_ = kEct0;
  uint16_t sport_ = 0;
  bool vary_ = false, alternate_ = false;
};

} // namespace mroce::sim::test
