// The command line and the scenario format: errors are clear and fatal,
// results are one JSON object, and equal inputs print equal bytes.
#include "config.h"
#include "json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

using namespace mroce::sim;

namespace {

struct CliRun {
  int status;
  std::string out; // stdout + stderr
};

CliRun sim(const std::string &args) {
  const std::string cmd = std::string(METAROCE_SIM_BINARY) + " " + args + " 2>&1";
  CliRun r{-1, ""};
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
    r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void expect_error(const std::string &args, const std::string &needle) {
  const CliRun r = sim(args);
  EXPECT_NE(r.status, 0) << args;
  EXPECT_NE(r.out.find(needle), std::string::npos) << args << " said: " << r.out;
  EXPECT_EQ(r.out.find('{'), std::string::npos) << "no result on error: " << r.out;
}

const std::string kSmall = "--hosts 4 --size 1MiB ";

} // namespace

TEST(Cli, RejectsBadFlagsAndImpossibleScenarios) {
  expect_error(kSmall + "--planes 0", "planes");
  expect_error(kSmall + "--loss 1", "loss");
  expect_error(kSmall + "--loss 1.5", "loss");
  expect_error(kSmall + "--loss -0.1", "loss");
  expect_error(kSmall + "--loss abc", "loss");
  expect_error("--hosts 1 --size 1MiB", "hosts");
  expect_error(kSmall + "--workload broadcast", "workload");
  expect_error(kSmall + "--transport tcp", "unknown transport");
  expect_error(kSmall + "--frobnicate 3", "unknown option");
  expect_error(kSmall + "--hosts", "needs a value");
  expect_error(kSmall + "stray", "unexpected argument");
  expect_error("--hosts 4 --size 0", "size");
  expect_error("--hosts 16 --size 8 --workload allreduce", "size");
  expect_error(kSmall + "--topology pair", "pair");
  expect_error(kSmall + "--topology ring", "topology");
  expect_error(kSmall + "--paths 0", "paths");
  expect_error(kSmall + "--buffer 100", "buffer");
  expect_error(kSmall + "--pfc 1 --pfc_xoff 1KiB --pfc_xon 2KiB", "pfc_xon");
  expect_error(kSmall + "--link_down '1ms p0.leaf0~nowhere'", "no link named");
  expect_error(kSmall + "--link_down 1ms", "TIME LINK");
  expect_error(kSmall + "--plane_down '1ms 3'", "plane 3");
  expect_error(kSmall + "--loss 0.1 --loss_at core --topology star", "core");
  expect_error(kSmall + "--scenario /nonexistent.scn", "cannot open");
  expect_error(std::string("--scenario ") + METAROCE_SIM_TESTDATA + "/bad_line.scn",
               "bad_line.scn:3");
}

TEST(Cli, MetaroceRunsTheCoreAndNeverFallsBack) {
  const CliRun r = sim(kSmall + "--transport metaroce --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"transport\":\"metaroce\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"completed\":true"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rocev2"), std::string::npos) << r.out;
  expect_error(kSmall + "--transport metaroce --paths 65", "paths");
  expect_error(kSmall + "--transport metaroce --mtu 9000", "mtu");
}

TEST(Cli, JsonHasTheRequiredFieldsAndIsReproducible) {
  const std::string args = "--hosts 8 --workload allreduce --size 4MiB --transport rocev2 "
                           "--loss 0.01 --planes 2 --paths 4 --seed 3 --json";
  const CliRun a = sim(args);
  ASSERT_EQ(a.status, 0) << a.out;
  for (const char *k :
       {"\"transport\":\"rocev2\"", "\"loss\":0.01",
        "\"goodput_gbps\":", "\"completion_time_s\":", "\"bytes_delivered\":",
        "\"bytes_retransmitted\":", "\"packets_lost\":", "\"events\":", "\"completed\":true"})
    EXPECT_NE(a.out.find(k), std::string::npos) << k << " missing in " << a.out;
  EXPECT_EQ(a.out.front(), '{');
  EXPECT_EQ(a.out.substr(a.out.size() - 2), "}\n");
  const CliRun b = sim(args);
  EXPECT_EQ(a.out, b.out);
}

TEST(Cli, TimelineOnlyOnRequest) {
  const std::string args = "--hosts 4 --workload incast --size 256KiB --transport metaroce --json";
  const CliRun plain = sim(args);
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_EQ(plain.out.find("\"timeline\""), std::string::npos);
  const CliRun timed = sim(args + " --timeline 5us --timeline_flows 1");
  ASSERT_EQ(timed.status, 0) << timed.out;
  for (const char *k : {"\"timeline\":{\"interval_s\":5e-06,", "\"delivered_bytes\":[",
                        "\"paths_replaced\":[", "\"flows\":[{\"src\":"})
    EXPECT_NE(timed.out.find(k), std::string::npos) << k << " missing in " << timed.out;
  expect_error(kSmall + "--timeline_flows 1", "timeline");
  expect_error(kSmall + "--timeline_senders 1", "timeline");
  expect_error(kSmall + "--timeline 5us --timeline_queues 1", "timeline_queues");
  EXPECT_EQ(timed.out.find("\"senders\""), std::string::npos); // only on request
  const CliRun tx = sim(args + " --topology star --timeline 5us --timeline_senders 1 "
                               "--timeline_link h0~p0.sw --timeline_queues 1");
  ASSERT_EQ(tx.status, 0) << tx.out;
  for (const char *k :
       {"\"queue_b_to_a\":[", "\"senders\":[{\"src\":", "\"departure_ns\":[", "\"pace_Bps\":["})
    EXPECT_NE(tx.out.find(k), std::string::npos) << k << " missing";
  expect_error(kSmall + "--timeline 10ps", "timeline");
  expect_error(kSmall + "--link_latency p0.leaf0~p0.spine0", "link_latency");
  expect_error(kSmall + "--link_rate \"p0.leaf0~p0.spine0 0\"", "link_rate");
  expect_error(kSmall + "--link_rate \"nosuch~link 10\"", "no link named");
}

TEST(Cli, ScenarioFileWithCommandLineOverride) {
  const std::string scn = std::string("--scenario ") + METAROCE_SIM_TESTDATA + "/failover.scn";
  const CliRun a = sim(scn + " --json");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("\"workload\":\"alltoall\""), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\"seed\":7"), std::string::npos);
  EXPECT_NE(a.out.find("\"completed\":true"), std::string::npos) << a.out;
  const CliRun b = sim(scn + " --seed 8 --json");
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_NE(b.out.find("\"seed\":8"), std::string::npos);
  const CliRun links = sim(scn + " --list-links");
  EXPECT_NE(links.out.find("p0.leaf0~p0.spine1"), std::string::npos) << links.out;
}

TEST(Config, ParsesSizesAndTimes) {
  uint64_t b;
  EXPECT_TRUE(parse_bytes("4096", b));
  EXPECT_EQ(b, 4096u);
  EXPECT_TRUE(parse_bytes("1MiB", b));
  EXPECT_EQ(b, 1u << 20);
  EXPECT_TRUE(parse_bytes("1GiB", b));
  EXPECT_EQ(b, 1ull << 30);
  EXPECT_TRUE(parse_bytes("1.5 KiB", b));
  EXPECT_EQ(b, 1536u);
  EXPECT_TRUE(parse_bytes("2M", b));
  EXPECT_EQ(b, 2000000u);
  EXPECT_FALSE(parse_bytes("1.5", b));
  EXPECT_FALSE(parse_bytes("-1", b));
  EXPECT_FALSE(parse_bytes("12 parsecs", b));
  Time t;
  EXPECT_TRUE(parse_time("250", t));
  EXPECT_EQ(t, 250 * kNs);
  EXPECT_TRUE(parse_time("1.5us", t));
  EXPECT_EQ(t, 1500 * kNs);
  EXPECT_TRUE(parse_time("2ms", t));
  EXPECT_EQ(t, 2 * kMs);
  EXPECT_TRUE(parse_time("3s", t));
  EXPECT_EQ(t, 3 * kSec);
  EXPECT_FALSE(parse_time("soon", t));
}

TEST(Config, DashesAndUnderscoresAreTheSameOption) {
  Config c;
  EXPECT_TRUE(set_option(c, "qps-per-pair", "3").ok());
  EXPECT_EQ(c.qps_per_pair, 3u);
  EXPECT_TRUE(set_option(c, "oversub", "2").ok());
  EXPECT_EQ(c.topo.oversubscription, 2.0);
  EXPECT_FALSE(set_option(c, "qps_per_pair", "-3").ok());
  EXPECT_FALSE(set_option(c, "planes", "4294967296").ok());
}

TEST(Json, WritesValidCompactJson) {
  JsonWriter j;
  j.begin_object().field("s", "a\"b\\c\n").field("n", uint64_t{18446744073709551615ULL});
  j.field("d", 0.1).field("x", 1e-300).field("b", true);
  j.key("arr").begin_array().value(1).value(-2).end_array();
  j.key("o").begin_object().end_object();
  j.end_object();
  EXPECT_EQ(j.str(), "{\"s\":\"a\\\"b\\\\c\\n\",\"n\":18446744073709551615,\"d\":0.1,"
                     "\"x\":1e-300,\"b\":true,\"arr\":[1,-2],\"o\":{}}");
}
