// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// mroce-inject: send hostile datagrams to a MetaRoCE UDP port, for the VM
// tests that check the module counts and drops them.  Paced, bounded in
// count and time, and only to the address given (a test namespace's).
//
//   mroce-inject --dst 10.93.0.2 [--port 4797] [--kind all|K[,K..]]
//                [--count N] [--duration S] [--rate PPS] [--seed S]
//                [--dst-conn ID]
//   mroce-inject --self-test
//
// The last line sums up what the receiver should have seen:
//   "rejected=N unknown_conn=M sent=T": N datagrams its decoder must reject,
//   M well-formed ones for connections that do not exist.
#include "craft.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
  std::vector<Kind> kinds{std::begin(kAllKinds), std::end(kAllKinds)};
  uint64_t count = 1000;
  double duration = 0; // 0: until count
  double rate = 2000;  // datagrams per second
  uint64_t seed = 1;
  // "conn" packets name this id rather than a random one: a closed
  // connection's id, or a live one's slot with another generation.
  uint32_t dst_conn = 0;
  bool self_test = false;
};

[[noreturn]] void usage(const char *msg) {
  if (msg)
    std::fprintf(stderr, "mroce-inject: %s\n", msg);
  std::fprintf(stderr,
               "usage: mroce-inject --dst ADDR [--port P] [--kind all|K,K..] "
               "[--count N]\n"
               "                    [--duration S] [--rate PPS] [--seed S]\n"
               "                    [--dst-conn ID]\n"
               "       mroce-inject --self-test\n"
               "kinds: truncated oversized version conn flags random "
               "blocks\n");
  std::exit(2);
}

std::vector<Kind> parse_kinds(const std::string &s) {
  if (s == "all")
    return {std::begin(kAllKinds), std::end(kAllKinds)};
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
      o.dst_conn = static_cast<uint32_t>(std::stoul(val(), nullptr, 0));
    else if (a == "--self-test")
      o.self_test = true;
    else
      usage(("unknown option " + a).c_str());
  }
  if (!o.self_test && o.dst.empty())
    usage("--dst is required");
  if (o.rate <= 0 || o.rate > 1e6)
    usage("--rate must be in (0, 1e6]");
  // Bounded by construction: at most 10^7 datagrams, at most one hour.
  if (o.count > 10000000 || o.duration > 3600)
    usage("--count at most 1e7, --duration at most 3600");
  return o;
}

// Every kind, many times: the core decoder must give the intended verdict.
int self_test() {
  std::mt19937_64 rng(42);
  int bad = 0;
  for (Kind k : kAllKinds) {
    std::map<int, int> verdicts;
    for (int i = 0; i < 20000; i++) {
      Crafted c = craft(k, rng);
      mroce_wire_err got;
      if (!verdict_matches(c, &got)) {
        if (bad++ < 10)
          std::printf("not ok: %s: decoder said %s, expected %s\n",
                      std::string(kind_name(k)).c_str(),
                      mroce_wire_err_names[got],
                      mroce_wire_err_names[c.expect]);
      }
      verdicts[got]++;
    }
    std::printf("# %-9s:", std::string(kind_name(k)).c_str());
    for (auto [v, n] : verdicts)
      std::printf(" %s=%d", mroce_wire_err_names[v], n);
    std::printf("\n");
  }
  std::printf("%s: mroce-inject self-test\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  if (o.self_test)
    return self_test();

  sockaddr_storage ss{};
  socklen_t sl;
  auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
  auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);
  if (inet_pton(AF_INET, o.dst.c_str(), &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(o.port);
    sl = sizeof(*s4);
  } else if (inet_pton(AF_INET6, o.dst.c_str(), &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(o.port);
    sl = sizeof(*s6);
  } else {
    usage("--dst must be a numeric IPv4 or IPv6 address");
  }
  int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
  if (fd < 0) {
    std::perror("socket");
    return 1;
  }

  std::mt19937_64 rng(o.seed);
  std::map<Kind, uint64_t> per_kind;
  uint64_t sent = 0, rejected = 0, unknown_conn = 0, errors = 0;
  auto start = Clock::now();
  auto gap = std::chrono::duration<double>(1.0 / o.rate);
  for (uint64_t i = 0;; i++) {
    double el = std::chrono::duration<double>(Clock::now() - start).count();
    if (o.duration > 0 ? el >= o.duration : i >= o.count)
      break;
    Kind k = o.kinds[rng() % o.kinds.size()];
    Crafted c = craft(k, rng);
    // dst_conn is at byte 4 of the common header (protocol.md section 3)
    if (k == Kind::Conn && o.dst_conn)
      mroce_put_be32(o.dst_conn, c.bytes.data() + 4);
    mroce_wire_err v;
    verdict_matches(c, &v);
    ssize_t n = sendto(fd, c.bytes.data(), c.bytes.size(), 0,
                       reinterpret_cast<sockaddr *>(&ss), sl);
    if (n == static_cast<ssize_t>(c.bytes.size())) {
      sent++;
      per_kind[k]++;
      if (v == MROCE_WIRE_OK)
        unknown_conn++;
      else
        rejected++;
    } else {
      errors++;
    }
    std::this_thread::sleep_until(
        start + std::chrono::duration_cast<Clock::duration>(gap * (i + 1)));
  }
  close(fd);
  double el = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("# mroce-inject: %llu datagrams to %s port %u in %.1f s:",
              static_cast<unsigned long long>(sent), o.dst.c_str(), o.port, el);
  for (auto [k, n] : per_kind)
    std::printf(" %s=%llu", std::string(kind_name(k)).c_str(),
                static_cast<unsigned long long>(n));
  std::printf("%s\n", errors ? " (some sends failed)" : "");
  std::printf("rejected=%llu unknown_conn=%llu sent=%llu\n",
              static_cast<unsigned long long>(rejected),
              static_cast<unsigned long long>(unknown_conn),
              static_cast<unsigned long long>(sent));
  return errors && !sent ? 1 : 0;
}
