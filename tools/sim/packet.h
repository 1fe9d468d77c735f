// A packet in flight: the addressing the fabric looks at (5-tuple, size, ECN,
// priority) plus opaque transport header bytes only the endpoints read.
// Payload contents are never materialised; `payload_bytes` is what the
// transport carries for the application and is what conservation counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace mroce::sim {

inline constexpr uint8_t kIpProtoUdp = 17;

struct FiveTuple {
  uint32_t src_ip = 0;
  uint32_t dst_ip = 0;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t proto = kIpProtoUdp;
};

// IP ECN codepoints (RFC 3168).
enum Ecn : uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };

// Traffic classes: control (ACK/NAK/CNP) is served first and is never
// paused by PFC; data is ECN-marked and PFC-paused.
enum TrafficClass : uint8_t { kClassData = 0, kClassControl = 1, kNumClasses = 2 };

// Each host port has its own address, 10.<plane>.<host/256>.<host%256>, so a
// host index and a plane can be read back from any address.
constexpr uint32_t host_address(uint32_t host, uint32_t plane) {
  return (10u << 24) | ((plane & 0xffu) << 16) | (host & 0xffffu);
}
constexpr uint32_t address_host(uint32_t ip) { return ip & 0xffffu; }
inline constexpr uint32_t kMaxHosts = 0xffff;

inline constexpr size_t kMaxHeader = 128;
// Longer headers (e.g. ACKs with many SACK blocks) are attached out of line.
inline constexpr uint32_t kMaxAttachedHeader = 9216;
inline constexpr uint32_t kNoAttachment = 0xffffffffu;

struct Packet {
  FiveTuple tuple;
  uint32_t wire_bytes = 0;    // everything the link serialises (incl. preamble/IFG)
  uint32_t payload_bytes = 0; // application bytes carried
  uint8_t ecn = kNotEct;
  uint8_t tclass = kClassData;
  uint8_t header_len = 0;
  // Filled in by the fabric, not by the transport.
  uint32_t src_host = 0;
  uint32_t dst_host = 0;
  uint32_t ingress_port = 0;           // switch scratch: where it entered (PFC accounting)
  uint32_t link_epoch = 0;             // channel epoch when put on the wire
  uint64_t serial = 0;                 // unique id, for tracing
  uint32_t attachment = kNoAttachment; // AttachmentStore slot, if any
  uint32_t attachment_len = 0;
  uint8_t header[kMaxHeader];

  template <typename T> void set_header(const T &h) {
    static_assert(sizeof(T) <= kMaxHeader);
    std::memcpy(header, &h, sizeof(T));
    header_len = sizeof(T);
  }
  template <typename T> bool get_header(T &h) const {
    if (header_len != sizeof(T))
      return false;
    std::memcpy(&h, header, sizeof(T));
    return true;
  }
};

// Fixed-slot packet storage with a free list; indices stay valid while a
// packet is in flight and slots are recycled, so steady state never allocates.
class PacketPool {
public:
  uint32_t alloc() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<uint32_t>(slots_.size() - 1);
    }
    const uint32_t idx = free_.back();
    free_.pop_back();
    return idx;
  }
  void release(uint32_t idx) { free_.push_back(idx); }
  Packet &operator[](uint32_t idx) { return slots_[idx]; }
  const Packet &operator[](uint32_t idx) const { return slots_[idx]; }
  size_t in_use() const { return slots_.size() - free_.size(); }
  size_t capacity() const { return slots_.size(); }

private:
  std::vector<Packet> slots_;
  std::vector<uint32_t> free_;
};

// Out-of-line header bytes for packets in flight: fixed-size slots with
// stable addresses, recycled when the fabric is done with the packet.
class AttachmentStore {
public:
  uint32_t alloc() {
    if (free_.empty()) {
      slots_.push_back(std::make_unique<uint8_t[]>(kMaxAttachedHeader));
      return static_cast<uint32_t>(slots_.size() - 1);
    }
    const uint32_t idx = free_.back();
    free_.pop_back();
    return idx;
  }
  void release(uint32_t idx) { free_.push_back(idx); }
  uint8_t *data(uint32_t idx) { return slots_[idx].get(); }
  const uint8_t *data(uint32_t idx) const { return slots_[idx].get(); }
  size_t in_use() const { return slots_.size() - free_.size(); }

private:
  std::vector<std::unique_ptr<uint8_t[]>> slots_;
  std::vector<uint32_t> free_;
};

} // namespace mroce::sim
