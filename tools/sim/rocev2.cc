#include "rocev2.h"

#include "rng.h"
#include "timeline.h"

#include <algorithm>

namespace mroce::sim {

namespace {
// RoCEv2 header sizes (bytes).
constexpr uint32_t kBth = 12;
constexpr uint32_t kReth = 16; // first packet of an RDMA Write
constexpr uint32_t kAeth = 4;
constexpr uint32_t kIcrc = 4;
constexpr uint32_t kCnpPad = 16; // CNP: BTH + 16 reserved bytes
} // namespace

RoceV2Transport::RoceV2Transport(TransportEnv &env, const RoceV2Params &params,
                                 RoceV2Directory *dir)
    : env_(env), params_(params), dir_(dir), ports_(env.num_ports()) {}

uint16_t RoceV2Transport::source_port(uint64_t qp_key) const {
  // Like rxe and RoCE NICs: a hash of the QP number in the ephemeral range,
  // fixed for the QP's lifetime.  Seeded, so seeds sample ECMP placements.
  const uint64_t h = mix64(env_.seed() ^ mix64((uint64_t{env_.host_id()} << 32) ^ qp_key));
  return static_cast<uint16_t>(0xc000u | (h & 0x3fffu));
}

uint32_t RoceV2Transport::accept(uint32_t peer_host, uint32_t peer_qp, uint32_t port) {
  Responder r;
  r.peer_host = peer_host;
  r.peer_qp = peer_qp;
  r.port = port;
  const auto idx = static_cast<uint32_t>(responders_.size());
  r.tuple.src_ip = host_address(env_.host_id(), port);
  r.tuple.dst_ip = host_address(peer_host, port);
  r.tuple.src_port = source_port((1ull << 40) | idx);
  r.tuple.dst_port = kRoceUdpPort;
  responders_.push_back(r);
  return idx;
}

uint32_t RoceV2Transport::requester_for(uint32_t dst, uint32_t flow) {
  const uint64_t key = (uint64_t{dst} << 32) | flow;
  if (auto it = by_peer_flow_.find(key); it != by_peer_flow_.end())
    return it->second;
  const auto idx = static_cast<uint32_t>(requesters_.size());
  Requester q;
  q.peer_host = dst;
  // Spread a host's QPs over its ports (planes); RoCE cannot split a QP.
  q.port = (flow + dst + env_.host_id()) % static_cast<uint32_t>(ports_.size());
  q.tuple.src_ip = host_address(env_.host_id(), q.port);
  q.tuple.dst_ip = host_address(dst, q.port);
  q.tuple.src_port = source_port(idx);
  q.tuple.dst_port = kRoceUdpPort;
  q.peer_qp = dir_->hosts[dst]->accept(env_.host_id(), idx, q.port);
  q.cc.init(&params_.dcqcn, static_cast<double>(env_.port_rate_bps(q.port)));
  q.rto_cur = params_.rto;
  requesters_.push_back(std::move(q));
  by_peer_flow_.emplace(key, idx);
  return idx;
}

double RoceV2Transport::qp_rate_bps(uint32_t qp) { return requesters_[qp].cc.rate(env_.now()); }

void RoceV2Transport::post(const MessageDesc &m) {
  if (m.bytes == 0 || m.dst == env_.host_id() || m.dst >= dir_->hosts.size()) {
    ++env_.stats().rejected_packets; // nothing the workloads ever ask for
    return;
  }
  const uint32_t qi = requester_for(m.dst, m.flow);
  Requester &q = requesters_[qi];
  const uint64_t npkts = (m.bytes + params_.mtu - 1) / params_.mtu;
  q.msgs.push_back(SendMsg{m.id, m.bytes, q.snd_end, npkts});
  q.snd_end += npkts;
  locate(q);
  schedule(qi);
}

void RoceV2Transport::locate(Requester &q) {
  q.cur = 0;
  while (q.cur < q.msgs.size() && q.msgs[q.cur].first_psn + q.msgs[q.cur].npkts <= q.snd_nxt)
    ++q.cur;
}

void RoceV2Transport::schedule(uint32_t qi) {
  Requester &q = requesters_[qi];
  if (q.sched != kIdle || !has_data(q))
    return;
  requeue(ports_[q.port], qi, env_.now());
  env_.tx_ready(q.port);
}

void RoceV2Transport::requeue(PortSched &ps, uint32_t qi, Time now) {
  Requester &q = requesters_[qi];
  if (q.next_tx <= now) {
    q.sched = kReady;
    ps.ready.push_back(qi);
  } else {
    q.sched = kWaiting;
    ps.waiting.push(Waiting{q.next_tx, wait_seq_++, qi});
  }
}

TxResult RoceV2Transport::poll_tx(uint32_t port, bool data_allowed, Packet &out) {
  PortSched &ps = ports_[port];
  if (!ps.ctrl.empty()) {
    const CtrlItem item = ps.ctrl.front();
    ps.ctrl.pop_front();
    build_ctrl(item, out);
    return {TxStatus::kPacket, 0};
  }
  if (!data_allowed)
    return {TxStatus::kIdle, kNever};
  const Time now = env_.now();
  while (!ps.waiting.empty() && ps.waiting.top().at <= now) {
    const uint32_t qi = ps.waiting.top().qp;
    ps.waiting.pop();
    requesters_[qi].sched = kReady;
    ps.ready.push_back(qi);
  }
  while (!ps.ready.empty()) {
    const uint32_t qi = ps.ready.front();
    ps.ready.pop_front();
    Requester &q = requesters_[qi];
    q.sched = kIdle;
    if (!has_data(q))
      continue;
    if (q.next_tx > now) {
      requeue(ps, qi, now);
      continue;
    }
    build_data(qi, out, now);
    if (has_data(q))
      requeue(ps, qi, now); // round robin among the port's QPs
    return {TxStatus::kPacket, 0};
  }
  if (!ps.waiting.empty())
    return {TxStatus::kWait, ps.waiting.top().at};
  return {TxStatus::kIdle, kNever};
}

void RoceV2Transport::build_data(uint32_t qi, Packet &out, Time now) {
  Requester &q = requesters_[qi];
  while (q.msgs[q.cur].first_psn + q.msgs[q.cur].npkts <= q.snd_nxt)
    ++q.cur;
  const SendMsg &m = q.msgs[q.cur];
  const uint64_t i = q.snd_nxt - m.first_psn;
  const uint64_t offset = i * params_.mtu;
  const auto len = static_cast<uint32_t>(std::min<uint64_t>(params_.mtu, m.bytes - offset));
  Header h{};
  h.opcode = kOpData;
  h.flags = static_cast<uint8_t>((i == 0 ? kFirst : 0) | (i + 1 == m.npkts ? kLast : 0));
  h.dst_qp = q.peer_qp;
  h.psn = q.snd_nxt;
  h.msg = m.id;
  h.offset = offset;
  h.len = len;
  out.set_header(h);
  out.tuple = q.tuple;
  out.payload_bytes = len;
  out.wire_bytes = kRoceWireOverhead + kBth + (i == 0 ? kReth : 0) + len + kIcrc;
  out.ecn = kEct0;
  out.tclass = kClassData;

  if (q.snd_nxt < q.max_sent) {
    ++env_.stats().packets_retransmitted;
    env_.stats().bytes_retransmitted += len;
  }
  ++q.snd_nxt;
  q.max_sent = std::max(q.max_sent, q.snd_nxt);

  // Pace at the DCQCN rate; at line rate the port itself is the limit.
  if (params_.dcqcn.enabled) {
    q.cc.on_sent(now, out.wire_bytes);
    const double rate = q.cc.rate(now);
    const auto line = static_cast<double>(env_.port_rate_bps(q.port));
    q.next_tx = rate < line ? now + static_cast<Time>(out.wire_bytes * 8.0 * kSec / rate) : now;
    if (trace_) {
      // The DCQCN rate in payload bytes/s of full-size packets (0: line rate, not paced).
      SenderState st;
      const double full = params_.mtu, wire = kRoceWireOverhead + kBth + params_.mtu + kIcrc;
      st.pace_Bps = rate < line ? static_cast<uint64_t>(rate / 8 * full / wire) : 0;
      trace_->departure(now, env_.host_id(), q.peer_host, len, st);
    }
  } else if (trace_) {
    trace_->departure(now, env_.host_id(), q.peer_host, len, SenderState{});
  }
  if (q.rto_deadline == kNever) {
    q.progress_at = now;
    q.rto_deadline = now + q.rto_cur;
    arm_timer(qi);
  }
}

void RoceV2Transport::arm_timer(uint32_t qi) {
  Requester &q = requesters_[qi];
  if (q.timer_at != kNever || q.rto_deadline == kNever)
    return;
  q.timer_at = q.rto_deadline;
  env_.set_timer(q.rto_deadline, qi);
}

void RoceV2Transport::on_timer(uint64_t cookie) {
  if (cookie >= requesters_.size())
    return;
  const auto qi = static_cast<uint32_t>(cookie);
  Requester &q = requesters_[qi];
  q.timer_at = kNever;
  if (q.failed || q.rto_deadline == kNever)
    return;
  const Time now = env_.now();
  if (now < q.rto_deadline) { // progress moved the deadline
    arm_timer(qi);
    return;
  }
  ++env_.stats().timeouts;
  if (now - q.progress_at > params_.rto_max * params_.retry_cnt) {
    fail(q);
    return;
  }
  q.snd_nxt = q.snd_una; // go back N
  locate(q);
  q.rto_cur = std::min(2 * q.rto_cur, params_.rto_max);
  q.rto_deadline = now + q.rto_cur;
  arm_timer(qi);
  schedule(qi);
}

void RoceV2Transport::fail(Requester &q) {
  // IB: retry count exceeded, the QP moves to the error state; its
  // outstanding messages never complete.
  q.failed = true;
  q.rto_deadline = kNever;
  ++env_.stats().failed_qps;
}

void RoceV2Transport::queue_ctrl(const Responder &r, CtrlItem item) {
  ports_[r.port].ctrl.push_back(item);
  env_.tx_ready(r.port);
}

void RoceV2Transport::queue_ack(uint32_t ri) {
  Responder &r = responders_[ri];
  r.unacked = 0;
  if (r.ack_queued)
    return; // the queued ACK will carry the newest PSN
  r.ack_queued = true;
  queue_ctrl(r, CtrlItem{kCtrlAck, ri, 0});
}

void RoceV2Transport::build_ctrl(const CtrlItem &item, Packet &out) {
  Responder &r = responders_[item.responder];
  Header h{};
  h.dst_qp = r.peer_qp;
  switch (item.kind) {
  case kCtrlAck:
    h.opcode = kOpAck;
    h.psn = r.epsn;
    r.ack_queued = false;
    ++env_.stats().acks_sent;
    out.wire_bytes = kRoceWireOverhead + kBth + kAeth + kIcrc;
    break;
  case kCtrlNak:
    h.opcode = kOpNak;
    h.psn = item.psn;
    out.wire_bytes = kRoceWireOverhead + kBth + kAeth + kIcrc;
    break;
  case kCtrlCnp:
    h.opcode = kOpCnp;
    out.wire_bytes = kRoceWireOverhead + kBth + kCnpPad + kIcrc;
    break;
  }
  out.set_header(h);
  out.tuple = r.tuple;
  out.payload_bytes = 0;
  out.ecn = kNotEct;
  out.tclass = kClassControl;
}

void RoceV2Transport::on_packet(uint32_t port, const Packet &pkt) {
  Header h;
  if (!pkt.get_header(h) || port >= ports_.size()) {
    ++env_.stats().rejected_packets;
    return;
  }
  switch (h.opcode) {
  case kOpData:
    if (h.dst_qp >= responders_.size() || h.len != pkt.payload_bytes) {
      ++env_.stats().rejected_packets;
      return;
    }
    rx_data(h, pkt);
    break;
  case kOpAck:
  case kOpNak:
  case kOpCnp:
    if (h.dst_qp >= requesters_.size()) {
      ++env_.stats().rejected_packets;
      return;
    }
    if (h.opcode == kOpCnp) {
      ++env_.stats().cnps_received;
      Requester &q = requesters_[h.dst_qp];
      if (params_.dcqcn.enabled && !q.failed) {
        q.cc.on_cnp(env_.now());
        ++env_.stats().rate_decreases;
      }
    } else {
      if (trace_ && h.opcode == kOpAck)
        trace_->ack(env_.now(), env_.host_id(), requesters_[h.dst_qp].peer_host);
      rx_ack(h, h.opcode == kOpNak);
    }
    break;
  default:
    ++env_.stats().rejected_packets;
  }
}

void RoceV2Transport::rx_data(const Header &h, const Packet &pkt) {
  const uint32_t ri = h.dst_qp;
  Responder &r = responders_[ri];
  const Time now = env_.now();
  // Notification point: CNPs for CE marks, whatever the PSN.
  if (pkt.ecn == kCe && params_.dcqcn.enabled &&
      (r.last_cnp == kNever || now - r.last_cnp >= params_.dcqcn.cnp_interval)) {
    r.last_cnp = now;
    ++env_.stats().cnps_sent;
    queue_ctrl(r, CtrlItem{kCtrlCnp, ri, 0});
  }
  if (h.psn == r.epsn) {
    env_.placed(h.msg, h.offset, h.len);
    ++r.epsn;
    r.nak_sent = false;
    ++r.unacked;
    const bool last = h.flags & kLast;
    if (last)
      env_.delivered(h.msg);
    if (last || r.unacked >= params_.ack_every)
      queue_ack(ri);
  } else if (h.psn > r.epsn) {
    ++env_.stats().out_of_sequence_dropped;
    if (!r.nak_sent || (params_.nak_resend && now - r.last_nak >= params_.nak_resend)) {
      r.nak_sent = true;
      r.last_nak = now;
      ++env_.stats().naks_sent;
      queue_ctrl(r, CtrlItem{kCtrlNak, ri, r.epsn});
    }
  } else {
    ++env_.stats().duplicates_received;
    queue_ack(ri); // the requester may have lost our ACK
  }
}

void RoceV2Transport::rx_ack(const Header &h, bool nak) {
  Requester &q = requesters_[h.dst_qp];
  if (nak)
    ++env_.stats().naks_received;
  if (q.failed)
    return;
  if (h.psn > q.max_sent) {
    ++env_.stats().rejected_packets; // acknowledges what was never sent
    return;
  }
  const Time now = env_.now();
  const uint32_t qi = h.dst_qp;
  if (h.psn > q.snd_una) {
    q.snd_una = h.psn;
    q.progress_at = now;
    q.rto_cur = params_.rto;
    while (!q.msgs.empty() && q.msgs.front().first_psn + q.msgs.front().npkts <= q.snd_una) {
      const uint64_t id = q.msgs.front().id;
      q.msgs.pop_front();
      env_.send_complete(id);
    }
    if (q.snd_nxt < q.snd_una)
      q.snd_nxt = q.snd_una;
    locate(q);
    q.rto_deadline = q.snd_una < q.max_sent ? now + q.rto_cur : kNever;
    arm_timer(qi);
  }
  if (nak && h.psn == q.snd_una && h.psn < q.snd_nxt) {
    q.snd_nxt = h.psn; // go back N
    locate(q);
    schedule(qi);
  }
}

} // namespace mroce::sim
