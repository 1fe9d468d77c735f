// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A QEMU TCG plugin that counts the guest instructions executed per start
// address of a translated block, for tools/bench/insn_count.sh.  Unlike a
// latency, an instruction count does not depend on how fast the host runs
// the guest, so the difference between two drivers' counts per ping-pong
// iteration is the difference in work their code asks for.
//
//   qemu-system-x86_64 ... -plugin PATH/metaroce-insn-plugin.so,ctl=FIFO
//
// A thread reads lines "snap FILE" from the FIFO and writes every block
// address that has run, with its instruction count so far, to FILE
// ("hex-address instructions runs seg-runs" per line); the host diffs two.
// Counting is an inline add at each block's entry: cheap, but not atomic,
// so blocks two vCPUs run at once may lose a few counts.
//
// With seg=on it also measures segments of one vCPU's execution: from a
// block starting at address START to the NTH block starting at END that
// follows on the same vCPU, the instructions and blocks run in between
// ("seg START END NTH" on the FIFO, hex addresses; "segdump FILE" writes
// "S instructions blocks" per segment completed since; a snapshot's
// fourth column counts each block's runs inside segments).  A ping-pong's
// round trip waits for the stretch from a doorbell to the placement of its
// payload on the other side, which over veth runs on the doorbell's CPU;
// what runs after the placement overlaps the other side's answer, so the
// totals above cannot tell the two apart.  A callback per block: slower.
//
// The declarations below are QEMU 7.2's plugin ABI (API version 1), the
// few calls used; Debian ships no qemu-plugin.h.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

extern "C" {
using qemu_plugin_id_t = uint64_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
using tb_trans_cb = void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *);
using udata_cb = void (*)(qemu_plugin_id_t, void *);
using vcpu_udata_cb = void (*)(unsigned int vcpu_index, void *userdata);
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          vcpu_udata_cb cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb,
                                    void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;
__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                    char **argv);
}

namespace {

struct Slot {
  uint64_t vaddr;
  uint64_t insns; // added to by translated code, read by snapshots
  uint64_t execs; // runs of blocks starting here
  uint64_t n;     // instructions in the block (the last translation's)
  uint64_t seg;   // runs inside a segment (seg=on), not atomic either
};

std::mutex mu;                              // guards the two below
std::deque<Slot> slots;                     // stable addresses
std::unordered_map<uint64_t, Slot *> index; // block start -> slot
std::string ctl_path;
std::atomic<bool> stopping{false};
bool seg_on;

// Segments, per vCPU (see the top).  The bounds change only between runs.
constexpr unsigned kMaxVcpus = 64;
std::atomic<uint64_t> seg_start{0}, seg_end{0}, seg_nth{1};
struct SegState {
  std::mutex mu; // against segdump
  bool active;
  uint64_t ends, insns, blocks;
  std::vector<std::pair<uint64_t, uint64_t>> done;
};
SegState seg_state[kMaxVcpus];

void on_exec(unsigned int vcpu, void *udata) {
  Slot *s = static_cast<Slot *>(udata);
  SegState &st = seg_state[vcpu % kMaxVcpus];
  uint64_t start = seg_start.load(std::memory_order_relaxed);
  if (!start)
    return;
  if (s->vaddr == start) {
    // a new doorbell before the last one's end: that one never got there
    st.active = true;
    st.ends = st.insns = st.blocks = 0;
  }
  if (!st.active)
    return;
  st.insns += s->n;
  st.blocks++;
  s->seg++;
  if (s->vaddr == seg_end.load(std::memory_order_relaxed) &&
      ++st.ends == seg_nth.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> g(st.mu);
    st.done.emplace_back(st.insns, st.blocks);
    st.active = false;
  }
}

void seg_dump(const std::string &file) {
  std::ofstream out(file + ".tmp");
  for (SegState &st : seg_state) {
    std::lock_guard<std::mutex> g(st.mu);
    for (const auto &[i, b] : st.done)
      out << "S " << i << ' ' << b << '\n';
    st.done.clear();
  }
  out.close();
  std::rename((file + ".tmp").c_str(), file.c_str());
}

void on_translate(qemu_plugin_id_t, struct qemu_plugin_tb *tb) {
  uint64_t va = qemu_plugin_tb_vaddr(tb);
  Slot *s;
  {
    std::lock_guard<std::mutex> g(mu);
    auto [it, fresh] = index.try_emplace(va, nullptr);
    if (fresh) {
      slots.push_back(Slot{va, 0, 0, 0, 0});
      it->second = &slots.back();
    }
    s = it->second;
  }
  // a block retranslated (another size or mode) adds to the same slot
  size_t n = qemu_plugin_tb_n_insns(tb);
  s->n = n;
  if (seg_on)
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         s);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &s->insns, n);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &s->execs, 1);
}

void snapshot(const std::string &file) {
  std::ofstream out(file + ".tmp");
  {
    std::lock_guard<std::mutex> g(mu);
    for (const Slot &s : slots) {
      uint64_t n = __atomic_load_n(&s.insns, __ATOMIC_RELAXED);
      uint64_t e = __atomic_load_n(&s.execs, __ATOMIC_RELAXED);
      uint64_t g = __atomic_load_n(&s.seg, __ATOMIC_RELAXED);
      if (n)
        out << std::hex << s.vaddr << ' ' << std::dec << n << ' ' << e << ' '
            << g << '\n';
    }
  }
  out.close();
  // the reader waits for FILE: it appears whole
  std::rename((file + ".tmp").c_str(), file.c_str());
}

// Reopens the FIFO after each writer closes it.
void control() {
  while (!stopping.load()) {
    std::ifstream in(ctl_path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("snap ", 0) == 0) {
        snapshot(line.substr(5));
      } else if (line.rfind("seg ", 0) == 0) {
        unsigned long long a = 0, b = 0, k = 1;
        if (std::sscanf(line.c_str() + 4, "%llx %llx %llu", &a, &b, &k) >= 2) {
          seg_start.store(0); // quiet while the bounds change
          seg_end.store(b);
          seg_nth.store(std::max(1ull, k));
          seg_start.store(a);
        }
      } else if (line.rfind("segdump ", 0) == 0) {
        seg_dump(line.substr(8));
      } else if (line == "quit") {
        return;
      }
    }
  }
}

void on_exit(qemu_plugin_id_t, void *) { stopping.store(true); }

} // namespace

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *, int argc,
                        char **argv) {
  for (int i = 0; i < argc; i++)
    if (std::strncmp(argv[i], "ctl=", 4) == 0)
      ctl_path = argv[i] + 4;
    else if (std::strcmp(argv[i], "seg=on") == 0)
      seg_on = true;
  if (ctl_path.empty()) {
    std::fprintf(stderr, "metaroce-insn-plugin: needs ctl=FIFO\n");
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, nullptr);
  // blocked in open() or read() on the FIFO until the host writes to it
  std::thread(control).detach();
  return 0;
}
