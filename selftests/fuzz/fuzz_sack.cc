// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// fuzz_sack: the receiver's sequence state against a plain reference model.
//
//  - path receive state (sack.c): cumulative psn + 256-bit ring, the drag
//    of the cumulative point when a psn 256 or more ahead arrives, the SACK
//    bitmap an ACK carries (mroce_sack_fill) and its re-alignment onto the
//    sender's ring (mroce_sack_to_ring);
//  - exactly-once dsn windows (dsn.c), receive and transmit sides.
// The model keeps explicit sets of sequence numbers; after every operation
// the core's answer, cumulative point and every bit must agree with it.
// Start values come from the input, so 2^32 wrap-around is covered.
//
// Input: u32 psn start, u8 dsn window (256 << n), u32 rx dsn start, u32 tx
// dsn start, then records of one op byte and its operands (see below).
#include <bitset>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "input.h"

extern "C" {
#include "internal.h"
}

using mroce::fuzz::die;
using mroce::fuzz::Input;

namespace {

bool seq_lt(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

// A set of sequence numbers at or above a base that only moves forward,
// kept as offsets from the base (the live window is small).
struct Window {
  uint32_t base = 0;
  std::set<uint32_t> off;
  bool has(uint32_t v) const { return off.count(v - base) != 0; }
  void add(uint32_t v) { off.insert(v - base); }
  // Move the base forward to @nb, forgetting everything below it.
  void rebase(uint32_t nb) {
    uint32_t k = nb - base;
    std::set<uint32_t> n;
    for (uint32_t d : off)
      if (d >= k) n.insert(d - k);
    off.swap(n);
    base = nb;
  }
  // Advance the base over the members at it.
  void advance() {
    uint32_t k = 0;
    while (off.count(k)) k++;
    if (k) rebase(base + k);
  }
};

struct SackModel {
  Window got;  // got.base is the cumulative point

  mroce_sack_result rx(uint32_t psn) {
    uint32_t d = psn - got.base;
    if (static_cast<int32_t>(d) < 0) return MROCE_SACK_LATE;
    if (d >= MROCE_PATH_WINDOW) got.rebase(psn - (MROCE_PATH_WINDOW - 1));
    if (got.has(psn)) return MROCE_SACK_DUP;
    got.add(psn);
    got.advance();
    return MROCE_SACK_NEW;
  }
};

bool ring_bit(const uint64_t *bits, uint32_t psn) {
  uint32_t pos = psn % MROCE_PATH_WINDOW;
  return bits[pos / 64] >> (pos % 64) & 1;
}

void check_sack(const mroce_path &p, const SackModel &m, uint64_t now) {
  const uint32_t cum = m.got.base;
  FUZZ_REQUIRE(p.rcv_cum == cum, "rcv_cum %u, model %u", p.rcv_cum, cum);
  std::bitset<MROCE_PATH_WINDOW + 1> want;  // bit i: cum + i received
  for (uint32_t d : m.got.off) {
    FUZZ_REQUIRE(d < MROCE_PATH_WINDOW, "model holds psn %u past the window",
                 cum + d);
    want.set(d);
  }
  for (uint32_t i = 0; i < MROCE_PATH_WINDOW; i++)
    FUZZ_REQUIRE(ring_bit(p.rcv_bits, cum + i) == want[i],
                 "ring bit for psn %u (cum %u) is %d", cum + i, cum,
                 ring_bit(p.rcv_bits, cum + i));
  mroce_ack_path ap;
  mroce_sack_fill(&p, &ap, now);
  FUZZ_REQUIRE(ap.cum_psn == cum, "ACK cum_psn %u, model %u", ap.cum_psn, cum);
  for (uint32_t i = 0; i < MROCE_PATH_WINDOW; i++) {
    bool bit = ap.sack[i / 64] >> (i % 64) & 1;
    FUZZ_REQUIRE(bit == want[i + 1], "SACK bit %u (psn %u) is %d", i,
                 cum + 1 + i, bit);
  }
  uint64_t ring[MROCE_SACK_WORDS];
  mroce_sack_to_ring(ap.sack, ap.cum_psn + 1, ring);
  FUZZ_REQUIRE(!std::memcmp(ring, p.rcv_bits, sizeof(ring)),
               "SACK bitmap does not map back onto the receive ring");
}

struct DsnModel {
  uint32_t window;
  Window rx;     // rx.base: every dsn below arrived
  Window acked;  // acked.base: tx_dsn_una
  uint32_t nxt;

  enum mroce_dsn_rx on_rx(uint32_t dsn) {
    uint32_t d = dsn - rx.base;
    if (static_cast<int32_t>(d) < 0)
      return 0u - d <= window ? MROCE_DSN_DUP : MROCE_DSN_OUTSIDE;
    if (d >= MROCE_DSN_JUMP_MAX) return MROCE_DSN_OUTSIDE;
    // beyond the window: the sender resolved everything <= dsn - window
    if (d >= window) rx.rebase(dsn - (window - 1));
    if (rx.has(dsn)) return MROCE_DSN_DUP;
    rx.add(dsn);
    rx.advance();
    return MROCE_DSN_NEW;
  }
  bool is_acked(uint32_t dsn) const {
    if (seq_lt(dsn, acked.base)) return true;
    if (!seq_lt(dsn, nxt)) return false;
    return acked.has(dsn);
  }
  bool on_ack(uint32_t dsn) {
    if (is_acked(dsn) || !seq_lt(dsn, nxt)) return false;
    acked.add(dsn);
    acked.advance();
    return true;
  }
};

void check_dsn(const mroce_conn &c, const DsnModel &m) {
  FUZZ_REQUIRE(c.rx_dsn_base == m.rx.base, "rx_dsn_base %u, model %u",
               c.rx_dsn_base, m.rx.base);
  FUZZ_REQUIRE(c.tx_dsn_una == m.acked.base && c.tx_dsn_nxt == m.nxt,
               "tx dsn [%u, %u), model [%u, %u)", c.tx_dsn_una, c.tx_dsn_nxt,
               m.acked.base, m.nxt);
}

// A sequence number near @base: mostly small steps, sometimes a window
// jump or any value at all.
uint32_t near(Input &in, uint32_t base, uint32_t window) {
  uint8_t m = in.u8();
  if (m < 0xf0) return base + m - 0x10;
  if (m < 0xfc) return base + window * (m - 0xef) + in.u8() - 0x80;
  if (m < 0xff) return base - in.u16();
  return in.u32();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in(data, size);
  const uint64_t now = 1'000'000;

  auto pmem = std::make_unique<mroce_path>();
  mroce_path &p = *pmem;
  mroce_path_init(&p, 0, 49152, 1024, 16384, 1'000'000, 0);
  SackModel sm;
  sm.got.base = p.rcv_cum = in.u32();

  mroce_cfg cfg;
  mroce_cfg_default(&cfg);
  cfg.npaths = 1;
  cfg.dsn_window = MROCE_PATH_WINDOW << (in.u8() % 7);
  std::vector<uint8_t> cmem(mroce_conn_size(1));
  auto *c = reinterpret_cast<mroce_conn *>(cmem.data());
  static const mroce_ops kNoOps = {};
  if (mroce_conn_init(c, &cfg, &kNoOps, nullptr, 1, 1, 1, 0))
    die("mroce_conn_init refused the config");
  DsnModel dm;
  dm.window = cfg.dsn_window;
  dm.rx.base = c->rx_dsn_base = in.u32();
  dm.nxt = dm.acked.base = c->tx_dsn_una = c->tx_dsn_nxt = in.u32();
  c->tx_dsn_window = cfg.dsn_window;

  while (!in.done()) {
    switch (in.u8() % 4) {
      case 0: {  // a psn arrives on the path
        uint32_t psn = near(in, sm.got.base, MROCE_PATH_WINDOW);
        mroce_sack_result want = sm.rx(psn);
        mroce_sack_result got = mroce_sack_rx(&p, psn);
        FUZZ_REQUIRE(got == want, "psn %u: sack_rx says %d, model %d", psn, got,
                     want);
        check_sack(p, sm, now);
        break;
      }
      case 1: {  // a dsn arrives
        uint32_t dsn = near(in, dm.rx.base, dm.window);
        enum mroce_dsn_rx want = dm.on_rx(dsn);
        enum mroce_dsn_rx got = mroce_dsn_rx(c, dsn);
        FUZZ_REQUIRE(got == want, "dsn %u: dsn_rx says %d, model %d", dsn, got,
                     want);
        break;
      }
      case 2: {  // we send new packets: up to the window
        uint32_t room = dm.window - (dm.nxt - dm.acked.base);
        uint32_t k = in.u8();
        if (k > room) k = room;
        dm.nxt += k;
        c->tx_dsn_nxt += k;
        break;
      }
      case 3: {  // the peer acknowledges one dsn
        uint32_t dsn = near(in, dm.acked.base, dm.window);
        bool want_acked = dm.is_acked(dsn);
        FUZZ_REQUIRE(mroce_dsn_tx_acked(c, dsn) == want_acked,
                     "dsn_tx_acked(%u) disagrees with the model", dsn);
        bool want = dm.on_ack(dsn);
        bool got = mroce_dsn_tx_ack(c, dsn);
        FUZZ_REQUIRE(got == want, "dsn_tx_ack(%u) says %d, model %d", dsn, got,
                     want);
        break;
      }
    }
    check_dsn(*c, dm);
  }
  return 0;
}
