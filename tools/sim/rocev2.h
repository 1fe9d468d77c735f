// The RoCEv2 baseline, modelled on what RoCE NICs do (and rxe does):
//
//  * one path per QP: a fixed UDP source port per QP, so ECMP pins it, and a
//    fixed NIC port (plane);
//  * the responder accepts only the expected PSN; the first out-of-sequence
//    packet triggers one NAK (sequence error), later ones are dropped
//    silently until the expected PSN arrives; duplicates are re-ACKed;
//  * the requester goes back N on a NAK or on the retransmission timeout,
//    and gives the QP up after retry_cnt timeouts without progress;
//  * DCQCN rate control per QP, from CNPs the responder sends on CE marks.
//
// PSNs are 64-bit here: with far less than 2^23 packets in flight 24-bit
// wrap-around changes nothing, so it is not modelled.
#pragma once

#include "dcqcn.h"
#include "transport.h"

#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>
#include <vector>

namespace mroce::sim {

struct RoceV2Params {
  uint32_t mtu = 4096; // payload bytes per packet
  // Retransmission timeout.  Like ConnectX adaptive retransmission it starts
  // at `rto`, doubles on each timeout without progress up to `rto_max` (the
  // QP's IB ack timeout, 4.096 us * 2^timeout) and falls back to `rto` on
  // progress; rto == rto_max gives the classic fixed IB timeout.  The QP
  // fails (retry count exceeded) after rto_max * retry_cnt without progress.
  Time rto = 100 * kUs;
  Time rto_max = 8 * kMs;
  uint32_t retry_cnt = 7;
  uint32_t ack_every = 4; // responder coalesces ACKs (and ACKs every message end)
  // 0: one NAK per sequence error, then silence until the expected PSN
  // arrives (IB, rxe).  Otherwise the responder NAKs again for an
  // out-of-sequence packet once this long has passed since its last NAK.
  Time nak_resend = 0;
  DcqcnParams dcqcn;
};

// Bytes a packet occupies on the wire besides the RoCE headers: preamble +
// SFD + inter-frame gap (20), Ethernet header + FCS (18), IPv4 (20), UDP (8).
inline constexpr uint32_t kRoceWireOverhead = 66;
inline constexpr uint32_t kRoceUdpPort = 4791;

class RoceV2Transport;

// All RoCEv2 endpoints of one simulation: QP connection setup is out of
// band, as with rdma_cm, so endpoints find their peers here.
struct RoceV2Directory {
  std::vector<RoceV2Transport *> hosts;
};

class RoceV2Transport final : public Transport {
public:
  RoceV2Transport(TransportEnv &env, const RoceV2Params &params, RoceV2Directory *dir);

  const char *name() const override { return "rocev2"; }
  void post(const MessageDesc &msg) override;
  void on_packet(uint32_t port, const Packet &pkt) override;
  void on_timer(uint64_t cookie) override;
  TxResult poll_tx(uint32_t port, bool data_allowed, Packet &out) override;
  void set_sender_trace(SenderTrace *t) override { trace_ = t; }

  // Introspection for tests.
  size_t num_qps() const { return requesters_.size(); }
  double qp_rate_bps(uint32_t qp);
  uint16_t qp_source_port(uint32_t qp) const { return requesters_[qp].tuple.src_port; }
  uint32_t qp_port(uint32_t qp) const { return requesters_[qp].port; }

private:
  enum Opcode : uint8_t { kOpData = 1, kOpAck, kOpNak, kOpCnp };
  enum Flags : uint8_t { kFirst = 1, kLast = 2 };
  struct Header {
    uint8_t opcode;
    uint8_t flags;
    uint16_t reserved;
    uint32_t dst_qp; // index in the receiver's requester/responder table
    uint64_t psn;    // data: its PSN; ACK/NAK: next expected PSN
    uint64_t msg;    // data: message id (stands for the receive WQE it matches)
    uint64_t offset; // data: byte offset in the message
    uint32_t len;    // data: payload bytes
    uint32_t pad;
  };
  struct SendMsg {
    uint64_t id;
    uint64_t bytes;
    uint64_t first_psn;
    uint64_t npkts;
  };
  enum Sched : uint8_t { kIdle, kReady, kWaiting };
  struct Requester {
    uint32_t peer_host = 0;
    uint32_t peer_qp = 0;
    uint32_t port = 0;
    FiveTuple tuple;
    std::deque<SendMsg> msgs; // not yet fully acknowledged, PSN order
    size_t cur = 0;           // msgs index holding snd_nxt
    uint64_t snd_una = 0;     // oldest unacknowledged PSN
    uint64_t snd_nxt = 0;     // next PSN to transmit
    uint64_t snd_end = 0;     // PSN after the last posted packet
    uint64_t max_sent = 0;    // one past the highest PSN ever sent
    Time rto_deadline = kNever;
    Time timer_at = kNever; // pending env timer, if any
    Time rto_cur = 0;       // current (backed-off) timeout
    Time progress_at = 0;   // last forward progress, for the retry budget
    bool failed = false;
    Time next_tx = 0; // pacing
    Sched sched = kIdle;
    Dcqcn cc;
  };
  struct Responder {
    uint32_t peer_host = 0;
    uint32_t peer_qp = 0;
    uint32_t port = 0;
    FiveTuple tuple; // responder -> requester
    uint64_t epsn = 0;
    bool nak_sent = false;
    bool ack_queued = false;
    uint32_t unacked = 0;
    Time last_cnp = kNever;
    Time last_nak = 0;
  };
  enum CtrlKind : uint8_t { kCtrlAck, kCtrlNak, kCtrlCnp };
  struct CtrlItem {
    CtrlKind kind;
    uint32_t responder;
    uint64_t psn;
  };
  struct Waiting {
    Time at;
    uint64_t seq;
    uint32_t qp;
    bool operator>(const Waiting &o) const { return at > o.at || (at == o.at && seq > o.seq); }
  };
  struct PortSched {
    std::deque<CtrlItem> ctrl;
    std::deque<uint32_t> ready;
    std::priority_queue<Waiting, std::vector<Waiting>, std::greater<Waiting>> waiting;
  };

  uint32_t accept(uint32_t peer_host, uint32_t peer_qp, uint32_t port);
  uint32_t requester_for(uint32_t dst, uint32_t flow);
  uint16_t source_port(uint64_t qp_key) const;
  static bool has_data(const Requester &q) { return !q.failed && q.snd_nxt < q.snd_end; }
  void locate(Requester &q);
  void schedule(uint32_t qp);
  void requeue(PortSched &ps, uint32_t qp, Time now);
  void arm_timer(uint32_t qp);
  void build_data(uint32_t qp, Packet &out, Time now);
  void build_ctrl(const CtrlItem &item, Packet &out);
  void queue_ctrl(const Responder &r, CtrlItem item);
  void queue_ack(uint32_t responder);
  void rx_data(const Header &h, const Packet &pkt);
  void rx_ack(const Header &h, bool nak);
  void fail(Requester &q);

  TransportEnv &env_;
  RoceV2Params params_;
  RoceV2Directory *dir_;
  std::vector<Requester> requesters_;
  std::vector<Responder> responders_;
  std::unordered_map<uint64_t, uint32_t> by_peer_flow_; // (dst << 32 | flow) -> requester
  std::vector<PortSched> ports_;
  uint64_t wait_seq_ = 0;
  SenderTrace *trace_ = nullptr; // --timeline_senders
};

} // namespace mroce::sim
