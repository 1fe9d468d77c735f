// Counters the fabric and the transports keep.  Plain integers, summed over
// the whole run; the simulation turns them into the JSON result.
#pragma once

#include <cstdint>

namespace mroce::sim {

enum DropReason : uint8_t {
  kDropRandom,   // random loss on a link
  kDropBuffer,   // drop-tail: output queue (or PFC ingress headroom) full
  kDropLinkDown, // sent on, queued for, or in flight over a link that is down
  kDropNoRoute,  // no up path to the destination
  kNumDropReasons,
};

const char *drop_reason_name(DropReason r);

struct FabricCounters {
  // Injected by host NICs.
  uint64_t packets_sent = 0;
  uint64_t data_packets_sent = 0;
  uint64_t wire_bytes_sent = 0;
  uint64_t payload_bytes_sent = 0;
  // Handed to the destination host's transport.
  uint64_t packets_received = 0;
  uint64_t payload_bytes_received = 0;
  // Lost in the fabric.
  uint64_t drops[kNumDropReasons] = {};
  uint64_t data_packets_dropped = 0;
  uint64_t payload_bytes_dropped = 0;
  uint64_t ecn_marks = 0;
  uint64_t pfc_pauses = 0;
  uint64_t pfc_resumes = 0;
  uint64_t max_queue_bytes = 0; // deepest switch output queue seen
  uint64_t switch_hops = 0;     // packets forwarded by switches

  uint64_t packets_dropped() const {
    uint64_t n = 0;
    for (uint64_t d : drops)
      n += d;
    return n;
  }
};

// Filled by transports through TransportEnv::stats().
struct TransportCounters {
  uint64_t bytes_retransmitted = 0; // payload bytes sent again
  uint64_t packets_retransmitted = 0;
  uint64_t timeouts = 0;
  uint64_t naks_sent = 0;
  uint64_t naks_received = 0;
  uint64_t acks_sent = 0;
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  uint64_t rate_decreases = 0;
  uint64_t out_of_sequence_dropped = 0; // receiver discarded (go-back-N)
  uint64_t duplicates_received = 0;
  uint64_t failed_qps = 0;               // retry count exhausted / stream in error
  uint64_t failed_connections = 0;       // MetaRoCE: peer declared unreachable
  uint64_t tail_loss_probes = 0;         // MetaRoCE
  uint64_t paths_replaced = 0;           // MetaRoCE: a path moved to a new source port
  uint64_t spurious_retransmissions = 0; // MetaRoCE: declared lost, then acked
  uint64_t rejected_packets = 0;         // malformed or unknown connection
  // MetaRoCE: outside a path's psn window or the dsn window, dropped
  // unplaced.  From an honest peer, a late copy of data already delivered
  // (a spurious retransmission that arrived after its ACK moved a window).
  uint64_t window_dropped = 0;
};

} // namespace mroce::sim
