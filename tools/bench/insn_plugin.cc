// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A QEMU TCG plugin that counts the guest instructions executed per start
// address of a translated block, for tools/bench/insn_count.sh.  Unlike a
// latency, an instruction count does not depend on the emulator's mode
// (design.md 8, "Pages"): software-TLB fills and cache effects are not
// guest instructions.  So the difference between two drivers' counts per
// ping-pong iteration is the difference in work their code asks for.
//
//   qemu-system-x86_64 ... -plugin PATH/metaroce-insn-plugin.so,ctl=FIFO
//
// A thread reads lines "snap FILE" from the FIFO and writes every block
// address that has run, with its instruction count so far, to FILE
// ("hex-address instructions runs" per line); the host diffs two.  Counting
// is an inline add at each block's entry: cheap, but not atomic, so
// blocks two vCPUs run at once may lose a few counts.
//
// With mem=on it also counts the data accesses to each 4 KiB page ("D
// hex-page count hex-pc" lines, pc: the last access's instruction), through a
// callback per load and store: the guest runs several times slower, but the
// pages an iteration touches, the working set the emulator's TLB must hold, can
// then be counted.  Each vCPU's accesses are cut into windows of window=N
// (default 10000), and a page also counts the windows it was accessed in: over
// all the windows, the mean number of distinct pages one window touches, which
// a ring walked through (one page busy at a time) does not inflate as a count
// of accesses per iteration would.  "W windows accesses" leads the snapshot.
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
// With jc=on it models each vCPU's jump cache, QEMU's 4,096-entry table
// (direct-mapped by a hash of the guest PC, 64 entries per page-hash) that
// a return, an indirect jump or call, and a jump to another page go
// through to find their next block; a miss searches the block hash table
// (qht_lookup, design.md 8).  A lookup is assumed wherever a block was
// entered from one that ended in such an instruction, or in a direct
// branch to another page than the block's own.  Since where a module's
// code lands decides which of its blocks share entries with the kernel's,
// the model runs once per module placement: a copy of the table for each
// of 64 shifts of the module area by whole pages ("J shift lookups misses"
// lines; "M pc misses" the misses by target in the real placement).
//
// The declarations below are QEMU 7.2's plugin ABI (API version 1), the
// few calls used; Debian ships no qemu-plugin.h.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
struct qemu_plugin_insn;
using qemu_plugin_meminfo_t = uint32_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_RW = 3 };
using mem_cb = void (*)(unsigned int vcpu, qemu_plugin_meminfo_t info,
                        uint64_t vaddr, void *userdata);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
struct qemu_plugin_insn *
qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, mem_cb cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw,
                                      void *userdata);
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
  uint8_t exit;   // how the block ends (jc=on): Exit
};

// How a block's last instruction leaves it, for the jump-cache model.
enum Exit : uint8_t {
  kDirect,   // direct branch or fall-through: chained within its page
  kIndirect, // ret, jmp/call through a register or memory, iret, syscall..
};

std::mutex mu;                              // guards the two below
std::deque<Slot> slots;                     // stable addresses
std::unordered_map<uint64_t, Slot *> index; // block start -> slot
std::string ctl_path;
std::atomic<bool> stopping{false};
bool mem_on;
bool seg_on;
bool jc_on;

// The jump-cache model (jc=on), per vCPU; only that vCPU's thread touches
// it, but snapshots read the counters (relaxed, they only grow).
constexpr unsigned kJcBits = 12, kJcShifts = 64;
constexpr uint64_t kModBase = 0xffffffffa0000000ull; // x86-64 module area
struct JumpCache {
  const Slot *prev;
  uint64_t tab[kJcShifts][1u << kJcBits];
  uint64_t lookups[kJcShifts], misses[kJcShifts];
  std::mutex mu; // the per-target misses, against snapshots
  std::unordered_map<uint64_t, uint64_t> miss_at;
};

// Segments, per vCPU (see the top).  The bounds change only between runs.
std::atomic<uint64_t> seg_start{0}, seg_end{0}, seg_nth{1};
struct SegState {
  std::mutex mu; // against segdump
  bool active;
  uint64_t ends, insns, blocks;
  std::vector<std::pair<uint64_t, uint64_t>> done;
};

// Data pages, per vCPU: a vCPU's thread only contends with snapshots.
constexpr unsigned kMaxVcpus = 64;
struct PageUse {
  uint64_t n;       // loads and stores
  uint64_t pc;      // the instruction of the last one: who owns the page
  uint64_t last;    // 1 + the window of the last one
  uint64_t windows; // windows with one or more
};
struct PageCounts {
  std::mutex mu;
  std::unordered_map<uint64_t, PageUse> pages;
  uint64_t accesses; // this vCPU's; window = accesses / window_len
};
uint64_t window_len = 10000;
PageCounts page_counts[kMaxVcpus];
SegState seg_state[kMaxVcpus];
JumpCache *jump_caches[kMaxVcpus];

// QEMU 7.2's tb_jmp_cache_hash_func() for 4 KiB pages
unsigned jc_hash(uint64_t pc) {
  uint64_t t = pc ^ (pc >> 6);
  return ((t >> 6) & 0xfc0) | (t & 0x3f);
}

void jc_lookup(JumpCache &jc, uint64_t pc) {
  bool mod = pc >= kModBase && pc < 0xffffffffff000000ull;
  for (unsigned k = 0; k < kJcShifts; k++) {
    uint64_t at = mod ? pc + (uint64_t(k) << 12) : pc;
    uint64_t &e = jc.tab[k][jc_hash(at)];
    jc.lookups[k]++;
    if (e != pc) {
      e = pc;
      jc.misses[k]++;
      if (!k) {
        std::lock_guard<std::mutex> g(jc.mu);
        jc.miss_at[pc]++;
      }
    }
  }
}

void on_exec_jc(unsigned int vcpu, const Slot *s) {
  JumpCache *&slot = jump_caches[vcpu % kMaxVcpus];
  JumpCache *jc = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (!jc) {
    jc = new JumpCache();
    __atomic_store_n(&slot, jc, __ATOMIC_RELEASE);
  }
  const Slot *p = jc->prev;
  jc->prev = s;
  if (!p || (p->exit == kDirect && (p->vaddr >> 12) == (s->vaddr >> 12)))
    return;
  jc_lookup(*jc, s->vaddr);
}

// Classify an x86 instruction that ends a block.
Exit classify(const uint8_t *b, size_t n) {
  size_t i = 0;
  // legacy prefixes and REX
  while (i < n &&
         (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 ||
          b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x64 ||
          b[i] == 0x65 || b[i] == 0x36 || (b[i] & 0xf0) == 0x40))
    i++;
  if (i >= n)
    return kDirect;
  uint8_t op = b[i];
  if (op == 0xc3 || op == 0xc2 || op == 0xcb || op == 0xca || op == 0xcf ||
      op == 0xcc || op == 0xcd)
    return kIndirect; // ret, lret, iret, int3, int
  if (op == 0xff && i + 1 < n) {
    uint8_t reg = (b[i + 1] >> 3) & 7;
    return reg >= 2 && reg <= 5 ? kIndirect : kDirect;
  }
  if (op == 0x0f && i + 1 < n &&
      (b[i + 1] == 0x05 || b[i + 1] == 0x07 || b[i + 1] == 0x34 ||
       b[i + 1] == 0x35 || b[i + 1] == 0x01 || b[i + 1] == 0x30))
    return kIndirect; // syscall, sysret, sysenter, sysexit, 0f01 group, wrmsr
  return kDirect;
}

void on_exec(unsigned int vcpu, void *udata) {
  Slot *s = static_cast<Slot *>(udata);
  if (jc_on)
    on_exec_jc(vcpu, s);
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

void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t, uint64_t vaddr,
            void *insn_pc) {
  PageCounts &pc = page_counts[vcpu % kMaxVcpus];
  std::lock_guard<std::mutex> g(pc.mu);
  uint64_t w = 1 + pc.accesses++ / window_len;
  PageUse &u = pc.pages[vaddr >> 12];
  u.n++;
  u.pc = reinterpret_cast<uintptr_t>(insn_pc);
  if (u.last != w) {
    u.last = w;
    u.windows++;
  }
}

void on_translate(qemu_plugin_id_t, struct qemu_plugin_tb *tb) {
  uint64_t va = qemu_plugin_tb_vaddr(tb);
  Slot *s;
  {
    std::lock_guard<std::mutex> g(mu);
    auto [it, fresh] = index.try_emplace(va, nullptr);
    if (fresh) {
      slots.push_back(Slot{va, 0, 0, 0, 0, kDirect});
      it->second = &slots.back();
    }
    s = it->second;
  }
  // a block retranslated (another size or mode) adds to the same slot
  size_t n = qemu_plugin_tb_n_insns(tb);
  s->n = n;
  if (jc_on && n) {
    struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
    s->exit =
        classify(static_cast<const uint8_t *>(qemu_plugin_insn_data(last)),
                 qemu_plugin_insn_size(last));
  }
  if (seg_on || jc_on)
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS,
                                         s);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &s->insns, n);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &s->execs, 1);
  if (mem_on)
    for (size_t i = 0; i < n; i++) {
      struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
      qemu_plugin_register_vcpu_mem_cb(
          insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
          reinterpret_cast<void *>(qemu_plugin_insn_vaddr(insn)));
    }
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
  std::unordered_map<uint64_t, PageUse> pages;
  uint64_t accesses = 0, windows = 0;
  for (PageCounts &pc : page_counts) {
    std::lock_guard<std::mutex> g(pc.mu);
    accesses += pc.accesses;
    windows += pc.accesses / window_len;
    for (const auto &[p, u] : pc.pages) {
      pages[p].n += u.n;
      pages[p].pc = u.pc;
      pages[p].windows += u.windows;
    }
  }
  if (mem_on)
    out << "W " << windows << ' ' << accesses << '\n';
  if (jc_on) {
    std::unordered_map<uint64_t, uint64_t> miss_at;
    for (unsigned k = 0; k < kJcShifts; k++) {
      uint64_t l = 0, m = 0;
      for (JumpCache *&slot : jump_caches)
        if (JumpCache *jc = __atomic_load_n(&slot, __ATOMIC_ACQUIRE)) {
          l += __atomic_load_n(&jc->lookups[k], __ATOMIC_RELAXED);
          m += __atomic_load_n(&jc->misses[k], __ATOMIC_RELAXED);
        }
      out << "J " << k << ' ' << l << ' ' << m << '\n';
    }
    for (JumpCache *&slot : jump_caches)
      if (JumpCache *jc = __atomic_load_n(&slot, __ATOMIC_ACQUIRE)) {
        std::lock_guard<std::mutex> g(jc->mu);
        for (const auto &[pc, m] : jc->miss_at)
          miss_at[pc] += m;
      }
    for (const auto &[pc, m] : miss_at)
      out << "M " << std::hex << pc << ' ' << std::dec << m << '\n';
  }
  for (const auto &[p, u] : pages)
    out << "D " << std::hex << p << ' ' << std::dec << u.n << ' ' << std::hex
        << u.pc << std::dec << ' ' << u.windows << '\n';
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
    else if (std::strcmp(argv[i], "mem=on") == 0)
      mem_on = true;
    else if (std::strcmp(argv[i], "seg=on") == 0)
      seg_on = true;
    else if (std::strcmp(argv[i], "jc=on") == 0)
      jc_on = true;
    else if (std::strncmp(argv[i], "window=", 7) == 0)
      window_len = std::max(1ul, std::strtoul(argv[i] + 7, nullptr, 10));
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
