// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// mroce-inject: send hostile datagrams to a MetaRoCE UDP port, for the VM
// tests that check the module counts and drops them.  Paced, bounded in
// count and time, and only to the address given (a test namespace's).
//
//   mroce-inject --dst ADDR [--port P] [--kind all|K[,K..]] [--count N]
//                [--duration S] [--rate PPS] [--seed S] [--dst-conn ID]
//                [--src ADDR] [--src-net PREFIX] [--src-conn ID]
//                [--npaths N] [--dst-stream Q] [--src-stream Q]
//                [--psn-base N] [--dsn-base N] [--msn-base N] [--frag B]
//   mroce-inject --self-test
//
// The malformed kinds go out of an ordinary UDP socket, from this host's
// own address, unless --src is given.  The protocol kinds forge their
// source: --src (the peer's address, for the attacker that learnt the
// live ids) or a random host of --src-net (connect-flood).  They go out of
// a raw socket with the IP header written here (IPv4: IPPROTO_RAW, which
// implies IP_HDRINCL; IPv6: IPPROTO_RAW with IPV6_HDRINCL), so the kernel
// routes them by their destination and sends them as written: the source
// address, and for "fragment" the fragments, are ours.  A raw socket
// rather than AF_PACKET: the namespace's own routing and neighbour table
// take the packet to --dst, and nothing else needs to know the link.
//
// At the end, one line per receiver counter group the injected datagrams
// must move, by construction of each datagram (craft.h, struct Effect),
// never by what a decoder makes of them:
//   "expect GROUP MIN MAX"
// and "sent=N", the datagrams that left.
#include "craft.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

using namespace mroce::inject;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string dst;
  uint16_t port = MROCE_UDP_PORT;
  std::vector<Kind> kinds{std::begin(kMalformedKinds),
                          std::end(kMalformedKinds)};
  uint64_t count = 1000;
  double duration = 0; // 0: until count
  double rate = 2000;  // datagrams per second
  uint64_t seed = 1;
  // "conn" packets name this id rather than a random one: a closed
  // connection's id, or a live one's slot with another generation.  The
  // protocol kinds take it as the live connection's id at the receiver.
  uint32_t dst_conn = 0;
  Live live;
  std::string src, src_net;
  uint32_t frag = 0; // fragment size; 0: random 64..256
  bool self_test = false;
};

[[noreturn]] void usage(const char *msg) {
  if (msg)
    std::fprintf(stderr, "mroce-inject: %s\n", msg);
  std::fprintf(
      stderr,
      "usage: mroce-inject --dst ADDR [--port P] [--kind all|K,K..] "
      "[--count N]\n"
      "                    [--duration S] [--rate PPS] [--seed S]\n"
      "                    [--dst-conn ID] [--src-conn ID] [--src ADDR]\n"
      "                    [--src-net PREFIX] [--npaths N] [--dst-stream Q]\n"
      "                    [--src-stream Q] [--psn-base N] [--dsn-base N]\n"
      "                    [--msn-base N] [--frag BYTES]\n"
      "       mroce-inject --self-test\n"
      "kinds: truncated oversized version conn flags random blocks (default:\n"
      "       these)\n"
      "       connect-flood (--src-net) connect-spoof (--src)\n"
      "       reset-spoof close-spoof window ack-body fragment (--src and the\n"
      "       live ids: --dst-conn, --src-conn)\n");
  std::exit(2);
}

std::vector<Kind> parse_kinds(const std::string &s) {
  if (s == "all")
    return {std::begin(kMalformedKinds), std::end(kMalformedKinds)};
  std::vector<Kind> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string word = s.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    Kind k;
    if (!parse_kind(word, k))
      usage(("unknown kind " + word).c_str());
    out.push_back(k);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

uint32_t u32(const std::string &v) {
  return static_cast<uint32_t>(std::stoul(v, nullptr, 0));
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc)
        usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--dst")
      o.dst = val();
    else if (a == "--port")
      o.port = static_cast<uint16_t>(std::stoul(val()));
    else if (a == "--kind")
      o.kinds = parse_kinds(val());
    else if (a == "--count")
      o.count = std::stoull(val());
    else if (a == "--duration")
      o.duration = std::stod(val());
    else if (a == "--rate")
      o.rate = std::stod(val());
    else if (a == "--seed")
      o.seed = std::stoull(val());
    else if (a == "--dst-conn")
      o.dst_conn = o.live.dst_conn = u32(val());
    else if (a == "--src-conn")
      o.live.src_conn = u32(val());
    else if (a == "--src")
      o.src = val();
    else if (a == "--src-net")
      o.src_net = val();
    else if (a == "--npaths")
      o.live.npaths = static_cast<uint16_t>(u32(val()));
    else if (a == "--dst-stream")
      o.live.dst_stream = u32(val());
    else if (a == "--src-stream")
      o.live.src_stream = u32(val());
    else if (a == "--psn-base")
      o.live.psn_base = u32(val());
    else if (a == "--dsn-base")
      o.live.dsn_base = u32(val());
    else if (a == "--msn-base")
      o.live.msn_base = u32(val());
    else if (a == "--frag")
      o.frag = u32(val());
    else if (a == "--self-test")
      o.self_test = true;
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.self_test)
    return o;
  if (o.dst.empty())
    usage("--dst is required");
  if (o.rate <= 0 || o.rate > 1e6)
    usage("--rate must be in (0, 1e6]");
  // Bounded by construction: at most 10^7 datagrams, at most one hour.
  if (o.count > 10000000 || o.duration > 3600)
    usage("--count at most 1e7, --duration at most 3600");
  if (!o.live.npaths || o.live.npaths > MROCE_MAX_PATHS)
    usage("--npaths must be in 1..64");
  if (o.frag && (o.frag < 8 || o.frag > 1400))
    usage("--frag must be in 8..1400");
  for (Kind k : o.kinds) {
    if (kind_needs_live(k) && (!o.live.dst_conn || !o.live.src_conn))
      usage("this kind needs the live ids: --dst-conn and --src-conn");
    if (k == Kind::ConnectFlood && o.src_net.empty())
      usage("connect-flood needs --src-net");
    if (kind_needs_raw(k) && k != Kind::ConnectFlood && o.src.empty())
      usage("this kind forges the peer's address: --src");
  }
  return o;
}

// Every kind, many times: each packet as its construction says.
int self_test() {
  std::mt19937_64 rng(42);
  int bad = 0;
  auto not_ok = [&](const std::string &what) {
    if (bad++ < 10)
      std::printf("not ok: %s\n", what.c_str());
  };
  for (Kind k : kAllKinds) {
    std::map<int, int> verdicts;
    std::map<std::string, int> broke;
    for (int i = 0; i < 20000; i++) {
      Live l;
      l.dst_conn = static_cast<uint32_t>(rng()) | 1;
      l.src_conn = static_cast<uint32_t>(rng()) | 1;
      l.npaths = static_cast<uint16_t>(1 + rng() % MROCE_MAX_PATHS);
      l.dst_stream = static_cast<uint32_t>(rng()) & MROCE_STREAM_MASK;
      l.src_stream = static_cast<uint32_t>(rng()) & MROCE_STREAM_MASK;
      l.psn_base = static_cast<uint32_t>(rng());
      l.dsn_base = static_cast<uint32_t>(rng());
      l.msn_base = static_cast<uint32_t>(rng());
      Crafted c = craft(k, l, rng);
      mroce_err got;
      if (!verdict_matches(c, &got))
        not_ok(std::string(kind_name(k)) + ": decoder said " +
               mroce_err_name(got) + ", expected " +
               mroce_err_name(c.expect));
      std::string why;
      if (!construction_holds(k, c, l, &why))
        not_ok(std::string(kind_name(k)) + " " + c.broke + ": " + why);
      verdicts[got]++;
      if (*c.broke)
        broke[c.broke]++;
    }
    std::printf("# %-13s:", std::string(kind_name(k)).c_str());
    for (auto [v, n] : verdicts)
      std::printf(" %s=%d", mroce_err_name(v), n);
    for (auto &[b, n] : broke)
      std::printf(" %s=%d", b.c_str(), n);
    std::printf("\n");
  }

  // The checksum against a value worked out by hand: 192.0.2.1:49152 ->
  // 192.0.2.2:4797, payload "MR": pseudo header c000+0201+c000+0202+0011+
  // 000a, header c000+12bd+000a(+0000), payload 4d52: sum 0x2a437, folded
  // 0xa439, complemented 0x5bc6.
  Addr s4, d4, s6, d6;
  parse_addr("192.0.2.1", s4);
  parse_addr("192.0.2.2", d4);
  std::vector<uint8_t> udp = {0xc0, 0x00, 0x12, 0xbd, 0x00,
                              0x0a, 0x00, 0x00, 'M',  'R'};
  if (udp_checksum(s4, d4, udp) != 0x5bc6)
    not_ok("UDP checksum of the worked example: " +
           std::to_string(udp_checksum(s4, d4, udp)));

  // Framing: every packet reassembles to what was framed, with a checksum
  // the receiver accepts, sources inside the prefix.
  parse_addr("2001:db8::2", d6);
  Prefix p4, p6;
  parse_prefix("198.18.0.0/15", p4);
  parse_prefix("2001:db8:96::/64", p6);
  int frames = 0, frags = 0;
  for (int i = 0; i < 4000; i++) {
    bool v6 = i & 1;
    const Prefix &p = v6 ? p6 : p4;
    Addr src = random_host(p, rng), dst = v6 ? d6 : d4;
    if (!in_prefix(p, src) || in_prefix(p, v6 ? d4 : d6))
      not_ok("random_host outside its prefix: " + addr_str(src));
    std::vector<uint8_t> pl(rng() % 1200);
    for (auto &b : pl)
      b = static_cast<uint8_t>(rng());
    uint32_t frag = (rng() & 1) ? 8 + static_cast<uint32_t>(rng() % 300) : 0;
    auto pkts = ip_packets(src, dst, static_cast<uint16_t>(49152 + i), 4797, pl,
                           frag, static_cast<uint32_t>(i + 1));
    std::vector<uint8_t> back;
    std::string why;
    if (pkts.size() > 1)
      std::shuffle(pkts.begin(), pkts.end(), rng);
    if (!ip_reassemble(pkts, src, dst, 4797, back, &why) || back != pl)
      not_ok("framing " + std::string(v6 ? "IPv6" : "IPv4") + " frag " +
             std::to_string(frag) + ": " + why);
    frames++;
    frags += pkts.size() > 1;
    // a flipped byte anywhere in the UDP part must fail the checksum
    if (!pkts.empty() && pkts[0].size() > (v6 ? 48u : 20u) + 8) {
      pkts[0].back() ^= 0x01;
      if (ip_reassemble(pkts, src, dst, 4797, back, &why))
        not_ok("a corrupted datagram passed the checksum");
    }
  }
  std::printf("# framing      : %d datagrams, %d fragmented\n", frames, frags);
  std::printf("%s: mroce-inject self-test\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}

// The raw socket for --dst's family, sending IP packets as written.
int raw_socket(bool v6) {
  int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
  if (fd < 0)
    return -1;
  if (v6) {
    int on = 1;
#ifndef IPV6_HDRINCL
#define IPV6_HDRINCL 36
#endif
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_HDRINCL, &on, sizeof(on)) < 0) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  if (o.self_test)
    return self_test();

  Addr dst;
  if (!parse_addr(o.dst, dst))
    usage("--dst must be a numeric IPv4 or IPv6 address");
  Addr src;
  Prefix net;
  bool raw = !o.src.empty();
  if (!o.src.empty() && (!parse_addr(o.src, src) || src.v6 != dst.v6))
    usage("--src must be an address of --dst's family");
  if (!o.src_net.empty()) {
    if (!parse_prefix(o.src_net, net) || net.base.v6 != dst.v6)
      usage("--src-net must be a prefix of --dst's family (IPv4 /8 or "
            "longer, IPv6 /64 or longer)");
    raw = true;
  }

  sockaddr_storage ss{};
  socklen_t sl;
  if (!dst.v6) {
    auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
    s4->sin_family = AF_INET;
    s4->sin_port = raw ? 0 : htons(o.port);
    std::memcpy(&s4->sin_addr, dst.a.data(), 4);
    sl = sizeof(*s4);
  } else {
    auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = raw ? 0 : htons(o.port);
    std::memcpy(&s6->sin6_addr, dst.a.data(), 16);
    sl = sizeof(*s6);
  }
  int fd = raw ? raw_socket(dst.v6) : socket(ss.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) {
    std::perror(raw ? "raw socket" : "socket");
    return 1;
  }

  std::mt19937_64 rng(o.seed);
  std::map<Kind, uint64_t> per_kind;
  std::map<std::string, uint64_t> broke;
  std::array<uint64_t, kGroups> total{};
  uint64_t sent = 0, ip_pkts = 0, errors = 0, challenged_kinds = 0;
  int first_errno = 0;
  auto start = Clock::now();
  auto gap = std::chrono::duration<double>(1.0 / o.rate);
  for (uint64_t i = 0;; i++) {
    double el = std::chrono::duration<double>(Clock::now() - start).count();
    if (o.duration > 0 ? el >= o.duration : i >= o.count)
      break;
    if (i >= 10000000)
      break;
    Kind k = o.kinds[rng() % o.kinds.size()];
    Crafted c = craft(k, o.live, rng);
    // dst_conn is at byte 4 of the common header (protocol.md section 3)
    if (k == Kind::Conn && o.dst_conn)
      mroce_put_be32(o.dst_conn, c.bytes.data() + 4);
    bool ok;
    if (raw) {
      Addr from = c.spoof_net || o.src.empty() ? random_host(net, rng) : src;
      uint32_t frag = 0;
      if (c.fragment)
        frag = o.frag ? o.frag : 64 + static_cast<uint32_t>(rng() % 193);
      auto pkts =
          ip_packets(from, dst, static_cast<uint16_t>(49152 + rng() % 16384),
                     o.port, c.bytes, frag, static_cast<uint32_t>(rng()) | 1);
      ok = true;
      for (auto &p : pkts) {
        ssize_t n = sendto(fd, p.data(), p.size(), 0,
                           reinterpret_cast<sockaddr *>(&ss), sl);
        if (n != static_cast<ssize_t>(p.size())) {
          if (!first_errno)
            first_errno = errno;
          ok = false;
          break;
        }
        ip_pkts++;
      }
    } else {
      ssize_t n = sendto(fd, c.bytes.data(), c.bytes.size(), 0,
                         reinterpret_cast<sockaddr *>(&ss), sl);
      ok = n == static_cast<ssize_t>(c.bytes.size());
      if (!ok && !first_errno)
        first_errno = errno;
      ip_pkts += ok;
    }
    if (ok) {
      sent++;
      per_kind[k]++;
      if (*c.broke)
        broke[std::string(kind_name(k)) + ":" + c.broke]++;
      for (int g = 0; g < kGroups; g++)
        total[g] += c.effect.n[g];
      challenged_kinds += k == Kind::ResetSpoof || k == Kind::CloseSpoof;
    } else {
      errors++;
    }
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<Clock::duration>(gap * (i + 1)));
  }
  close(fd);
  double el = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("# mroce-inject: %llu datagrams (%llu IP packets%s) to %s port "
              "%u in %.1f s:",
              static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(ip_pkts), raw ? ", forged" : "",
              o.dst.c_str(), o.port, el);
  for (auto [k, n] : per_kind)
    std::printf(" %s=%llu", std::string(kind_name(k)).c_str(),
                static_cast<unsigned long long>(n));
  if (errors)
    std::printf(" (%llu sends failed: %s)",
                static_cast<unsigned long long>(errors),
                std::strerror(first_errno));
  std::printf("\n");
  if (!broke.empty()) {
    std::printf("# broken:");
    for (auto &[b, n] : broke)
      std::printf(" %s=%llu", b.c_str(), static_cast<unsigned long long>(n));
    std::printf("\n");
  }
  // What the receiver must count: exactly this many if every datagram got
  // there (the caller allows for the ones its network lost).  With a
  // malformed kind, every decoder reason and "unknown" is bounded on both
  // sides, those the datagrams were not built for at zero; random bytes
  // widen each by their number, and their sum is exact.
  bool malformed = false;
  for (Kind k : o.kinds)
    malformed |= !kind_needs_raw(k);
  const uint64_t any = total[kAnyOnce];
  uint64_t decoded = any;
  for (int g = 0; g < kGroups; g++) {
    bool wire = is_drop_group(g) || g == kUnknown;
    if (g == kAnyOnce || (!total[g] && !(wire && malformed)))
      continue;
    if (wire)
      decoded += total[g];
    std::printf("expect %s %llu %llu\n", std::string(group_name(g)).c_str(),
                static_cast<unsigned long long>(total[g]),
                static_cast<unsigned long long>(total[g] + (wire ? any : 0)));
    if (g == kUnproven) // each answered with a CHALLENGE, or limited
      std::printf("expect challenges %llu %llu\n",
                  static_cast<unsigned long long>(total[g]),
                  static_cast<unsigned long long>(total[g]));
  }
  if (malformed) // each counted once: refused for a reason, or unknown
    std::printf("expect decoded %llu %llu\n",
                static_cast<unsigned long long>(decoded),
                static_cast<unsigned long long>(decoded));
  if (challenged_kinds) {
    // one CHALLENGE per initial RTO at most, the first at once; and no
    // forged RESET or CLOSE ends the connection
    std::printf("expect tx_challenges 1 %llu\n",
                static_cast<unsigned long long>(challenged_kinds));
    std::printf("expect proven_end 0 0\n");
  }
  std::printf("sent=%llu\n", static_cast<unsigned long long>(sent));
  return errors && !sent ? 1 : 0;
}
