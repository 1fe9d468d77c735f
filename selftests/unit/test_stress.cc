// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Scenario test: the whole core at both ends of the two-endpoint harness.
// Randomised verbs traffic through the core over a lossy, duplicating,
// reordering fabric: many QPs, every opcode, random sizes and offsets,
// fences, both directions at once, receives posted late (RNR).  Checked:
// every completion in order and successful; every SEND's bytes, length and
// immediate in the receive it matched; every READ's bytes against a model
// of the responder's memory (it sees every earlier WRITE of its stream);
// every atomic's returned value against the model, with compare-and-swaps
// that succeed and that fail on purpose; and at the end every byte of both
// regions against the model.  The atomic targets take values from a small
// set, so an atomic executed twice, even late, leaves a mark: a FETCH_ADD
// moves the target out of the set, a stale compare-and-swap matches a value
// the target holds again later.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "harness.h"

using namespace mroce::test;

namespace {

// Messages per QP and direction; the sanitizer run (METAROCE_TRANSFER_MB
// below the default) sends fewer.
uint32_t stress_msgs() {
  const char *e = std::getenv("METAROCE_TRANSFER_MB");
  return e && std::strtoull(e, nullptr, 10) < 1024 ? 150 : 300;
}

// What an atomic target may hold: distinct in both 32-bit halves, so a
// compare of half the word, or a swap of half, shows.
constexpr uint64_t kAtom[4] = {0x8000000000000001ull, 0x00000001ffffffffull,
                               0xffffffff00000000ull, 0x7fffffff7ffffffeull};

struct Stress {
  Fabric f;
  std::mt19937_64 rng;
  static constexpr uint32_t kQps = 6, kRegion = 1 << 20;
  // Each QP's slice of a region: its atomic target (8 bytes) at the start,
  // then kArea bytes its WRITEs and READs share, so they overlap often.
  static constexpr uint32_t kSlice = (kRegion / kQps) & ~4095u, kArea = 32 << 10;
  static constexpr uint64_t kVa = 0x100000;
  static constexpr uint32_t kGuard = 16;  // READ buffers: bytes past the end
  const uint32_t kMsgs = stress_msgs();
  struct Side {
    uint32_t rkey;
    std::vector<std::vector<uint8_t>> rbufs;
  } side[2];
  struct Expect {
    uint8_t op;
    uint64_t seed;
    uint32_t len;
    uint64_t va;
    std::vector<uint8_t> readbuf;
    std::vector<uint8_t> want;  // READ: the responder's bytes at execution
    uint64_t orig = 0;          // atomic: the target's value before it
  };
  // per direction, per QP: what each cookie should have done
  std::vector<std::vector<Expect>> sent[2];
  std::vector<uint8_t *> recvbuf[2][kQps];
  // model[e]: what endpoint e's region must hold, requests applied in
  // stream order; atom[e][q]: index in kAtom of QP q's target there
  std::vector<uint8_t> model[2];
  uint32_t atom[2][kQps] = {};
  uint32_t reads = 0, long_reads = 0, empty_reads = 0, cas_ok = 0, cas_fail = 0,
           faa = 0, fenced = 0;

  Stress(uint64_t seed, double loss, double dup, uint64_t jitter, uint64_t dup_late = 0)
      : f(seed), rng(seed) {
    for (int d = 0; d < 2; d++) {
      f.routes[d].assign(6, Route{});
      int i = 0;
      for (auto &r : f.routes[d]) {
        r.delay_ns = 5'000 + 7'000 * i++;
        r.gbps = 10;
        r.loss = loss;
        r.dup = dup;
        r.dup_late_ns = dup_late;
        r.jitter_ns = jitter;
      }
    }
    auto cfg = test_cfg(4, 1024);
    f.add_endpoint(cfg);
    f.add_endpoint(cfg);
  }

  static void fill(uint8_t *p, uint32_t n, uint64_t seed) {
    uint64_t x = seed | 1;
    for (uint32_t i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      p[i] = static_cast<uint8_t>(x);
    }
  }

  static bool overlap(uint64_t a, uint32_t alen, uint64_t b, uint32_t blen) {
    return alen && blen && a < b + blen && b < a + alen;
  }

  // The next atomic of QP @q from side @d, its result known now: the
  // target is this QP's alone and its atomics run in posting order.  A
  // FETCH_ADD run twice leaves the set of values; a compare-and-swap run
  // again later succeeds once a later operation put back the value it
  // compares with.  (Run again at once it changes nothing, as it must:
  // only the value it returns could tell, and that is checked.)
  void atomic(int d, uint32_t q, SendWr &w, Expect &e) {
    uint32_t &cur = atom[1 - d][q];
    uint32_t other = (cur + 1 + rng() % 3) % 4;  // a value it does not hold
    e.orig = kAtom[cur];
    switch (rng() % 3) {
      case 0:  // FETCH_ADD to another value of the set
        e.op = MROCE_OP_FETCH_ADD;
        w.msg.swap_add = kAtom[other] - kAtom[cur];
        cur = other;
        faa++;
        break;
      case 1:  // compare-and-swap that succeeds
        e.op = MROCE_OP_CMP_SWAP;
        w.msg.compare = kAtom[cur];
        w.msg.swap_add = kAtom[other];
        cur = other;
        cas_ok++;
        break;
      default:  // compare-and-swap that fails: a value held before or
                // after, or the current one with one bit flipped
        e.op = MROCE_OP_CMP_SWAP;
        w.msg.compare = rng() % 3 ? kAtom[other] : kAtom[cur] ^ (1ull << (rng() % 64));
        w.msg.swap_add = kAtom[(cur + 1 + rng() % 3) % 4];
        cas_fail++;
        break;
    }
    w.msg.op = e.op;
    e.len = 8;
    w.msg.len = 8;
    e.va = kVa + q * kSlice;
  }

  void run() {
    ASSERT_TRUE(f.connect(2'000'000'000));
    for (int d = 0; d < 2; d++) {
      side[d].rkey = f.ep(d).add_region(kVa, kRegion);
      Region &r = f.ep(d).regions[side[d].rkey];
      fill(r.mem.data(), kRegion, 99 + d);
      for (uint32_t q = 0; q < kQps; q++) std::memcpy(&r.mem[q * kSlice], &kAtom[0], 8);
      model[d] = r.mem;
      sent[d].resize(kQps);
    }
    for (uint32_t q = 0; q < kQps; q++) connect_qps(f, 10 + q, 20 + q);
    // A (QPs 10..) and B (QPs 20..) both send
    std::vector<uint32_t> cnt[2] = {std::vector<uint32_t>(kQps), std::vector<uint32_t>(kQps)};
    std::vector<uint32_t> recvs_posted[2] = {std::vector<uint32_t>(kQps), std::vector<uint32_t>(kQps)};
    auto qpid = [](int d, uint32_t q) { return (d ? 20u : 10u) + q; };
    bool done = false;
    uint64_t deadline = f.now + 20'000'000'000ull;
    while (!done && f.now < deadline) {
      for (int d = 0; d < 2; d++)
        for (uint32_t q = 0; q < kQps; q++) {
          Qp &qp = f.ep(d).qp(qpid(d, q));
          // receives trickle in late, so RNR happens
          Qp &peer = f.ep(1 - d).qp(qpid(1 - d, q));
          if (rng() % 3 == 0 && recvs_posted[1 - d][q] < kMsgs) {
            auto &bufs = side[1 - d].rbufs;
            bufs.emplace_back(4096);
            recvbuf[1 - d][q].push_back(bufs.back().data());
            f.ep(1 - d).post_recv(peer, recvs_posted[1 - d][q]++, bufs.back().data(), 4096);
          }
          if (cnt[d][q] >= kMsgs || qp.sends.size() >= 24 || !mroce_stream_can_post(&qp.st)) continue;
          uint32_t i = cnt[d][q]++;
          Expect e;
          static const uint8_t ops[] = {MROCE_OP_SEND, MROCE_OP_SEND_IMM, MROCE_OP_WRITE,
                                        MROCE_OP_WRITE_IMM, MROCE_OP_READ_REQ,
                                        MROCE_OP_CMP_SWAP, MROCE_OP_FETCH_ADD};
          e.op = ops[rng() % 7];
          e.seed = rng();
          e.len = rng() % 16 == 0 ? 0 : static_cast<uint32_t>(rng() % 4000);
          if (e.op == MROCE_OP_READ_REQ && e.len) e.len = static_cast<uint32_t>(1 + rng() % 8192);
          const uint64_t area = kVa + q * kSlice + 64;
          e.va = area + rng() % (kArea - e.len + 1);
          SendWr w;
          w.msg.cookie = i;
          w.msg.rkey = side[1 - d].rkey;
          w.msg.imm = i;
          w.msg.flags = rng() % 8 == 0 ? MROCE_MSG_FENCE : 0;
          // A WRITE must not land on bytes an earlier message still in
          // flight writes (placement is in any order) or reads (a READ
          // is executed when its turn comes, its bytes read when sent):
          // another place, or a fence behind the READs.
          std::vector<uint8_t> &mem = model[1 - d];
          for (int tries = 0; e.op == MROCE_OP_WRITE || e.op == MROCE_OP_WRITE_IMM; tries++) {
            bool clash = false, behind_read = false;
            for (uint32_t k = static_cast<uint32_t>(qp.scq.size()); k < i; k++) {
              const Expect &o = sent[d][q][k];
              if (!overlap(e.va, e.len, o.va, o.len)) continue;
              if (o.op == MROCE_OP_WRITE || o.op == MROCE_OP_WRITE_IMM) clash = true;
              if (o.op == MROCE_OP_READ_REQ) behind_read = true;
            }
            if (!clash) {
              if (behind_read) {
                w.msg.flags |= MROCE_MSG_FENCE;
                fenced++;
              }
              break;
            }
            if (tries == 8) {
              e.op = MROCE_OP_READ_REQ;  // nowhere free: read instead
              break;
            }
            e.va = area + rng() % (kArea - e.len + 1);
          }
          w.msg.op = e.op;
          w.msg.len = e.len;
          if (e.op == MROCE_OP_CMP_SWAP || e.op == MROCE_OP_FETCH_ADD) atomic(d, q, w, e);
          w.msg.va = e.va;
          if (e.op == MROCE_OP_READ_REQ) {
            e.want.assign(mem.begin() + (e.va - kVa), mem.begin() + (e.va - kVa) + e.len);
            e.readbuf.assign(e.len + kGuard, 0xa5);
            w.read_len = static_cast<uint32_t>(e.readbuf.size());
            reads++;
            long_reads += e.len > 1024;
            empty_reads += e.len == 0;
          } else if (e.op == MROCE_OP_CMP_SWAP || e.op == MROCE_OP_FETCH_ADD) {
            e.readbuf.assign(8, 0);
            w.read_len = 8;
            std::memcpy(&mem[e.va - kVa], &kAtom[atom[1 - d][q]], 8);
          } else {
            w.data.resize(e.len);
            fill(w.data.data(), e.len, e.seed);
            if (e.op == MROCE_OP_WRITE || e.op == MROCE_OP_WRITE_IMM)
              std::copy(w.data.begin(), w.data.end(), mem.begin() + (e.va - kVa));
          }
          sent[d][q].push_back(std::move(e));
          // readbuf moved with e: point the request at its final home
          auto &home = sent[d][q].back();
          if (!home.readbuf.empty()) w.read_dst = home.readbuf.data();
          ASSERT_EQ(f.ep(d).post_send(qp, std::move(w)), 0);
        }
      f.ep(0).drain(f.now);
      f.ep(1).drain(f.now);
      f.run([] { return false; }, 20'000);
      done = true;
      for (int d = 0; d < 2; d++)
        for (uint32_t q = 0; q < kQps; q++) {
          Qp &qp = f.ep(d).qp(qpid(d, q));
          ASSERT_EQ(qp.error, 0) << "side " << d << " qp " << q;
          if (qp.scq.size() < kMsgs) done = false;
        }
    }
    for (int d = 0; d < 2; d++)
      for (uint32_t q = 0; q < kQps; q++) {
        Qp &qp = f.ep(d).qp(qpid(d, q));
        if (qp.scq.size() != kMsgs) {
          auto &st = qp.st;
          std::fprintf(stderr, "now %.3f ms una %u next %u end %u frontier %u rdinf %u state %d\n", f.now / 1e6, st.tx_una, st.tx_next, st.tx_end, st.frontier, st.rd_inflight, st.state);
          for (uint32_t m = st.tx_una; m != st.tx_end && m != st.tx_una + 6; m++) {
            auto *t = mroce_txmsg(&st, m);
            std::fprintf(stderr, "  msn %u op %u state %u len %u sent %u acked %u resp %u attempt %u\n", m, t->m.op, t->state, t->m.len, t->sent, t->acked, t->resp, t->attempt);
          }
          auto &pst = f.ep(1 - d).qp((d ? 10u : 20u) + q).st;
          std::fprintf(stderr, "  peer rx_next %u resp_count %u failing %u rnr_slots %u state %d\n", pst.rx_next, pst.resp_count, pst.failing, pst.rnr_slots, pst.state);
          auto *r = mroce_rxmsg(&pst, pst.rx_next);
          std::fprintf(stderr, "  peer slot msn %u op %u state %u total %u got %u\n", r->msn, r->op, r->state, r->total, r->got);
        }
        ASSERT_EQ(qp.scq.size(), kMsgs) << "side " << d << " qp " << q << " stalled";
        for (uint32_t i = 0; i < kMsgs; i++) {
          ASSERT_EQ(qp.scq[i].cookie, i);
          ASSERT_EQ(qp.scq[i].status, MROCE_OK) << i;
          const Expect &e = sent[d][q][i];
          if (e.op == MROCE_OP_FETCH_ADD || e.op == MROCE_OP_CMP_SWAP) {
            uint64_t v;
            std::memcpy(&v, e.readbuf.data(), 8);
            ASSERT_EQ(v, e.orig) << (e.op == MROCE_OP_CMP_SWAP ? "CMP_SWAP " : "FETCH_ADD ") << i
                                 << " of side " << d << " qp " << q
                                 << " ran out of order or twice, or compared wrong";
          } else if (e.op == MROCE_OP_READ_REQ) {
            ASSERT_TRUE(!e.len || !std::memcmp(e.readbuf.data(), e.want.data(), e.len))
                << "READ " << i << " of " << e.len << " bytes, side " << d << " qp " << q;
            for (uint32_t g = 0; g < kGuard; g++)
              ASSERT_EQ(e.readbuf[e.len + g], 0xa5) << "READ " << i << " wrote past its end";
          }
        }
        // receives: the k-th receive-consuming message matched the k-th receive
        Qp &peer = f.ep(1 - d).qp((d ? 10u : 20u) + q);
        size_t k = 0;
        std::vector<uint8_t> want;
        for (uint32_t i = 0; i < kMsgs; i++) {
          const Expect &e = sent[d][q][i];
          if (e.op != MROCE_OP_SEND && e.op != MROCE_OP_SEND_IMM && e.op != MROCE_OP_WRITE_IMM)
            continue;
          ASSERT_LT(k, peer.rcq.size());
          const Completion &c = peer.rcq[k++];
          ASSERT_EQ(c.status, MROCE_OK);
          ASSERT_EQ(c.op, e.op);
          ASSERT_EQ(c.cookie, k - 1);
          if (e.op != MROCE_OP_SEND) {
            ASSERT_EQ(c.imm, i);
          }
          ASSERT_EQ(c.byte_len, e.len);  // a WRITE_IMM's: the write's
          if (e.op == MROCE_OP_WRITE_IMM || !e.len) continue;
          want.resize(e.len);
          fill(want.data(), e.len, e.seed);
          ASSERT_EQ(0, std::memcmp(recvbuf[1 - d][q][c.cookie], want.data(), e.len)) << "SEND " << i;
        }
        ASSERT_EQ(k, peer.rcq.size());
      }
    // every WRITE in place, every atomic target where its last op left it
    for (int d = 0; d < 2; d++) {
      const Region &r = f.ep(d).regions[side[d].rkey];
      for (size_t b = 0; b < kRegion; b++)
        ASSERT_EQ(r.mem[b], model[d][b]) << "endpoint " << d << " byte " << b << " (qp "
                                         << b / kSlice << ", offset " << b % kSlice << ")";
    }
    // the workload did what it is here for
    EXPECT_GT(cas_ok, 0u);
    EXPECT_GT(cas_fail, 0u);
    EXPECT_GT(faa, 0u);
    EXPECT_GT(long_reads, 0u);
    EXPECT_GT(empty_reads, 0u);
    EXPECT_GT(fenced, 0u);
  }

  // What the fabric and the core saw, summed over both ends.
  struct Seen {
    uint64_t dropped = 0, duplicated = 0, reordered = 0, rx_dup = 0, rx_dup_dsn = 0, rx_old = 0,
             lost = 0, retx = 0;
  };
  Seen seen() {
    Seen s;
    for (int d = 0; d < 2; d++) {
      for (auto &r : f.routes[d]) {
        s.dropped += r.dropped;
        s.duplicated += r.duplicated;
        s.reordered += r.reordered;
      }
      mroce_conn_stats cs = conn_stats(f.ep(d).conn);
      s.rx_dup_dsn += cs.rx_dup_dsn;
      s.rx_old += cs.rx_drop_psn + cs.rx_drop_dsn;
      for (uint32_t p = 0; p < f.ep(d).conn->npaths; p++)
        s.rx_dup += f.ep(d).conn->paths[p].stats.rx_dup;
      s.lost += cs.lost;
      s.retx += cs.tx_retx;
    }
    return s;
  }
};

// One run, and proof that each impairment asked for took place: packets
// dropped and recovered, duplicated and refused as such, overtaken on
// their route.
void stress(uint64_t seed, double loss, double dup, uint64_t jitter, uint64_t dup_late = 0) {
  Stress s(seed, loss, dup, jitter, dup_late);
  s.run();
  if (::testing::Test::HasFatalFailure()) return;
  Stress::Seen n = s.seen();
  std::printf("# seed %llu: %u READs (%u over one packet, %u empty), %u CAS that swapped, "
              "%u that did not, %u FETCH_ADD, %u fenced WRITEs; %llu dropped, %llu lost, "
              "%llu resent, %llu duplicated, %llu refused as duplicates by path, %llu by dsn, "
              "%llu as too old, %llu reordered\n",
              (unsigned long long)seed, s.reads, s.long_reads, s.empty_reads, s.cas_ok,
              s.cas_fail, s.faa, s.fenced, (unsigned long long)n.dropped,
              (unsigned long long)n.lost, (unsigned long long)n.retx,
              (unsigned long long)n.duplicated, (unsigned long long)n.rx_dup,
              (unsigned long long)n.rx_dup_dsn, (unsigned long long)n.rx_old,
              (unsigned long long)n.reordered);
  if (loss > 0) {
    EXPECT_GT(n.dropped, 0u);
    EXPECT_GT(n.lost, 0u);
    EXPECT_GT(n.retx, 0u);
  }
  if (dup > 0) {
    EXPECT_GT(n.duplicated, 0u);
    // the exactly-once filter itself, or for the late ones the windows
    // in front of it
    EXPECT_GT(dup_late ? n.rx_old : n.rx_dup_dsn, 0u);
  }
  if (jitter > 0) {
    EXPECT_GT(n.reordered, 0u);
  }
}

TEST(Stress, AllOpcodesLossDuplicationReordering) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    stress(seed, 0.05, 0.02, 3'000);
    if (HasFatalFailure()) return;
  }
}

TEST(Stress, AllOpcodesOnePercentLoss) { stress(7, 0.01, 0, 0); }

TEST(Stress, AllOpcodesTenPercentLoss) { stress(8, 0.10, 0, 0); }

TEST(Stress, AllOpcodesDuplication) { stress(9, 0, 0.05, 0); }

// Duplicates up to 1 ms late, long after their message executed (a
// compare-and-swap run again then may find the value it compares with,
// put back by a later operation): the windows must refuse them.
TEST(Stress, AllOpcodesLateDuplicates) { stress(11, 0, 0.05, 0, 1'000'000); }

// Every packet up to 20 us late on its route: a route's packets (about
// 1 us apart) overtake each other by many.
TEST(Stress, AllOpcodesReordering) { stress(10, 0, 0, 20'000); }

}  // namespace
