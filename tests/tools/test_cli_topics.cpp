// `ferry topic info | echo | pub` against a real ferryd: counters read from
// the queues, samples decoded and encoded with the YAML types, exit codes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "all_types_yaml.hpp"
#include "cli_test_util.hpp"
#include "daemon_fixture.hpp"
#include "json_text.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"
#include "text_lines.hpp"

using namespace ferry::test;
using nlohmann::json;

// An opaque 40-byte type, as a C++ program would declare it.
struct BlobSample {
  unsigned char bytes[40];
};
FERRY_TYPE_NAMED(BlobSample, "Blob");

namespace {

const std::string kAllTypes = std::string("types:\n") + ferry::test::kInnerAndAllTypes +
                              "  Blob: { size: 40 }\n"
                              "topics:\n"
                              "  - { name: all, type: All }\n"
                              "  - { name: blob, type: Blob }\n";

const char* const kAllValue =
    "{b: true, i8: -128, i16: -32768, i32: -2147483648, i64: -9223372036854775808, u8: 255, "
    "u16: 65535, u32: 4294967295, u64: 18446744073709551615, f32: 0.1, f64: -2.5e-300, "
    "name: robot-7, arr: [1, -2, 3], inner: {flag: true, label: abc, value: 1.5}, "
    "inners: [{label: x}, {flag: true, value: -1}]}";

// Polls `ferry topic list` until the topic has `subscribers` subscribers,
// observers (topic echo) included.
bool wait_for_subscribers(const TestDomain& domain, const std::string& topic,
                          std::size_t subscribers) {
  return eventually(
      [&] {
        for (const auto& t : ferry_json(domain, {"topic", "list"})) {
          if (t["name"] == topic &&
              t["subscribers"].get<std::size_t>() + t["observers"].get<std::size_t>() ==
                  subscribers) {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(10));
}

json queue_of(const json& info) {
  REQUIRE(info["queues"].size() == 1);
  return info["queues"][0];
}

}  // namespace

TEST_CASE("topic info counts a drop_new queue that nobody takes from: 4 delivered, 6 dropped") {
  TestDomain domain;
  Daemon daemon(
      domain,
      seq_config(
          "  - { name: robot/pose, type: Seq, capacity: 4, policy: drop_new, max_held: 2 }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"tester"};
  auto [pub, sub] = matched_ports<Seq>(node, "robot/pose");
  for (std::uint64_t i = 0; i < 10; ++i) (void)pub.publish(make_seq(1, i));

  json info = ferry_json(domain, {"topic", "info", "robot/pose"});
  CHECK(info["name"] == "robot/pose");
  CHECK(info["type"] == "Seq");
  CHECK(info["declared"] == true);
  CHECK(info["policy"] == "drop_new");
  CHECK(info["capacity"] == 4);
  CHECK(info["sample_size"] == 64);
  CHECK(info["max_held"] == 2);
  REQUIRE(info["publishers"].size() == 1);
  CHECK(info["publishers"][0]["node"] == "tester");
  CHECK(info["publishers"][0]["pid"] == ::getpid());
  REQUIRE(info["subscribers"].size() == 1);
  CHECK(info["subscribers"][0]["node"] == "tester");
  json q = queue_of(info);
  CHECK(q["publisher"] == "tester");
  CHECK(q["subscriber"] == "tester");
  CHECK(q["published"] == 10);
  CHECK(q["delivered"] == 4);
  CHECK(q["dropped"] == 6);
  CHECK(q["taken"] == 0);
  CHECK(q["overwritten"] == 0);
  CHECK(q["timed_out"] == 0);
  CHECK(q["backlog"] == 4);
  CHECK(q["max_backlog"] == 4);

  {
    auto a = sub.take();
    auto b = sub.take();
    REQUIRE((a && b));
  }
  q = queue_of(ferry_json(domain, {"topic", "info", "robot/pose"}));
  CHECK(q["taken"] == 2);
  CHECK(q["backlog"] == 2);
  CHECK(q["max_backlog"] == 4);

  const auto text = run_program(domain, {bin_path("ferry"), "topic", "info", "robot/pose"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("policy:   drop_new, capacity 4") != std::string::npos);
  CHECK(text.out.find("Seq (64 bytes, align 8): publisher u64, seq u64, check u64, pad u64[5]") !=
        std::string::npos);
  CHECK(text.out.find(
            "PUBLISHED  DELIVERED  TAKEN  DROPPED  OVERWRITTEN  TIMED_OUT  BACKLOG  MAX_BACKLOG") !=
        std::string::npos);
  CHECK(last_line_words(text.out, "  tester") ==
        std::vector<std::string>{"tester", "tester", "10", "4", "2", "6", "0", "0", "2", "4"});
}

TEST_CASE("topic info shows the largest backlog of a queue that never filled") {
  TestDomain domain;
  Daemon daemon(
      domain,
      seq_config("  - { name: slow, type: Seq, capacity: 16, policy: drop_new, max_held: 8 }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"tester"};
  auto [pub, sub] = matched_ports<Seq>(node, "slow");
  for (std::uint64_t i = 0; i < 5; ++i) REQUIRE(pub.publish(make_seq(1, i)).delivered == 1);

  json q = queue_of(ferry_json(domain, {"topic", "info", "slow"}));
  CHECK(q["backlog"] == 5);
  CHECK(q["max_backlog"] == 5);  // the publisher never found it full
  for (int i = 0; i < 5; ++i) REQUIRE(sub.take());
  q = queue_of(ferry_json(domain, {"topic", "info", "slow"}));
  CHECK(q["taken"] == 5);
  CHECK(q["backlog"] == 0);
  CHECK(q["max_backlog"] == 5);  // kept by the subscriber, which saw 5 waiting
}

TEST_CASE("topic info counts overwrites on a drop_oldest queue and timeouts on a block queue") {
  TestDomain domain;
  Daemon daemon(
      domain,
      seq_config(
          "  - { name: newest, type: Seq, capacity: 4, policy: drop_oldest }\n"
          "  - { name: strict, type: Seq, capacity: 2, policy: block, block_timeout_ms: 1 }\n"));
  ferry::test::use_domain_env(domain);
  ferry::Node node{"tester"};
  auto pub = node.publisher<Seq>("newest");
  auto sub = node.subscriber<Seq>("newest");
  auto block_pub = node.publisher<Seq>("strict");
  auto block_sub = node.subscriber<Seq>("strict");
  REQUIRE(pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  REQUIRE(block_pub.wait_for_subscribers(1, std::chrono::seconds(10)));
  for (std::uint64_t i = 0; i < 10; ++i) (void)pub.publish(make_seq(1, i));
  for (std::uint64_t i = 0; i < 5; ++i) (void)block_pub.publish(make_seq(1, i));

  const json q = queue_of(ferry_json(domain, {"topic", "info", "newest"}));
  CHECK(q["published"] == 10);
  CHECK(q["delivered"] == 10);
  CHECK(q["overwritten"] == 6);
  CHECK(q["dropped"] == 0);
  CHECK(q["backlog"] == 4);

  const json b = queue_of(ferry_json(domain, {"topic", "info", "strict"}));
  CHECK(b["published"] == 5);
  CHECK(b["delivered"] == 2);
  CHECK(b["timed_out"] == 3);
  CHECK(b["backlog"] == 2);
}

TEST_CASE("topic pub then topic echo round-trips every field type, as JSON and as YAML") {
  TestDomain domain;
  Daemon daemon(domain, kAllTypes);
  {
    Background echo(domain, {bin_path("ferry"), "topic", "echo", "all", "--count", "1", "--json"});
    REQUIRE(wait_for_subscribers(domain, "all", 1));
    const auto pub = run_program(domain, {bin_path("ferry"), "topic", "pub", "all", kAllValue});
    CHECK(pub.exit_code == 0);
    // The echo is an observer: it gets the sample, the publisher's counts leave it out.
    CHECK(pub.out.find("published 1 sample(s) on 'all': 0 delivered") != std::string::npos);
    CHECK(pub.out.find("1 observer(s) not counted") != std::string::npos);
    REQUIRE(echo.wait() == 0);
    const json v = ferry::test::parse_json(echo.out());
    // The sample's metadata follows the fields, under _info.
    REQUIRE(v.contains("_info"));
    CHECK(echo.out().find("\"b\":") < echo.out().find("\"_info\":"));  // the type's fields first
    CHECK(v["_info"]["sequence"] == 0);
    CHECK(v["_info"]["publisher_id"].get<std::uint64_t>() > 0);
    CHECK(v["_info"]["publish_time_ns"].get<std::uint64_t>() > 1'600'000'000'000'000'000ULL);
    CHECK(v["_info"]["age_ms"].get<double>() >= 0);
    CHECK(v["_info"]["age_ms"].get<double>() < 10'000);
    CHECK(v["b"] == true);
    CHECK(v["i8"] == -128);
    CHECK(v["i16"] == -32768);
    CHECK(v["i32"] == -2147483648LL);
    CHECK(v["i64"] == std::numeric_limits<std::int64_t>::min());
    CHECK(v["u8"] == 255);
    CHECK(v["u16"] == 65535);
    CHECK(v["u32"] == 4294967295ULL);
    CHECK(v["u64"] == std::numeric_limits<std::uint64_t>::max());
    CHECK(v["f32"] == 0.1);
    CHECK(v["f64"] == -2.5e-300);
    CHECK(v["name"] == "robot-7");
    CHECK(v["arr"] == json::array({1, -2, 3}));
    CHECK(v["inner"] == json{{"flag", true}, {"label", "abc"}, {"value", 1.5}});
    CHECK(v["inners"] == json::array({json{{"flag", false}, {"label", "x"}, {"value", 0.0}},
                                      json{{"flag", true}, {"label", ""}, {"value", -1.0}}}));
  }
  {
    Background echo(domain, {bin_path("ferry"), "topic", "echo", "all", "--count", "2"});
    REQUIRE(wait_for_subscribers(domain, "all", 1));
    const auto pub =
        run_program(domain, {bin_path("ferry"), "topic", "pub", "all",
                             "{\"u16\": 7, \"name\": \"j\"}", "--count", "2", "--rate", "100"});
    CHECK(pub.exit_code == 0);
    REQUIRE(echo.wait() == 0);
    const std::string out = echo.out();
    CHECK(out.find("u16: 7\n") != std::string::npos);
    CHECK(out.find("name: \"j\"\n") != std::string::npos);
    CHECK(out.find("arr: [0, 0, 0]\n") != std::string::npos);  // missing fields are zero
    CHECK(out.find("inners:\n  - flag: false\n") != std::string::npos);
    // Each sample's sequence, from one publisher: 0 then 1.
    CHECK(out.find("_info:\n  sequence: 0\n") != std::string::npos);
    CHECK(out.find("_info:\n  sequence: 1\n") != std::string::npos);
    // Two documents, each ended by '---'.
    CHECK(out.find("---\n") != out.rfind("---\n"));
    CHECK(out.substr(out.size() - 4) == "---\n");
  }
}

TEST_CASE("topic echo shows an opaque type as its size and a hex prefix") {
  ServedConfig served(kAllTypes);
  ferry::Node node{"blobber"};
  auto pub = node.publisher<BlobSample>("blob");
  Background echo(served.domain,
                  {bin_path("ferry"), "topic", "echo", "blob", "--count", "1", "--json"});
  REQUIRE(eventually([&] { return pub.observer_count() == 1; }));  // the echo observes
  BlobSample s{};
  for (unsigned i = 0; i < sizeof s.bytes; ++i) s.bytes[i] = static_cast<unsigned char>(0xA0 + i);
  CHECK(pub.publish(s).delivered == 0);  // an observer is not counted
  REQUIRE(echo.wait() == 0);
  const json v = ferry::test::parse_json(echo.out());
  CHECK(v["size"] == 40);
  CHECK(v["hex"].get<std::string>().substr(0, 8) == "a0a1a2a3");
  CHECK(v["hex"].get<std::string>().size() == 64);  // the first 32 bytes
}

TEST_CASE("topic pub refuses a bad value with exit 2 naming the field, and publishes nothing") {
  ServedConfig served(kAllTypes);
  struct Check {
    const char* value;
    const char* message;
  };
  for (const Check& c : {Check{"{u8: 300}", "field 'u8': out of range for u8 (0..255)"},
                         Check{"{i8: -129}", "field 'i8': out of range for i8 (-128..127)"},
                         Check{"{f32: 1e39}", "field 'f32': out of range for f32"},
                         Check{"{colour: red}", "unknown field 'colour' in type 'All'"},
                         Check{"{inner: {label: waytoolongforit}}", "field 'inner.label'"},
                         Check{"{b: maybe}", "field 'b': expected true or false"},
                         Check{"{i32: 1.5}", "field 'i32': expected an integer (i32)"},
                         Check{"{arr: [1, 2", "VALUE is not valid YAML or JSON"}}) {
    CAPTURE(c.value);
    const auto r = run_program(served.domain, {bin_path("ferry"), "topic", "pub", "all", c.value});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  }
  // None of them created a publisher.
  const json info = ferry_json(served.domain, {"topic", "info", "all"});
  CHECK(info["publishers"].empty());
}

TEST_CASE("unknown topics exit 1 and say how to list the topics") {
  TestDomain domain;
  Daemon daemon(domain, kAllTypes);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"topic", "info", "nope"},
                                               {"topic", "echo", "nope"},
                                               {"topic", "pub", "nope", "{}"},
                                               {"topic", "hz", "nope"},
                                               {"topic", "bw", "nope"}}) {
    std::vector<std::string> argv{bin_path("ferry")};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(domain, argv);
    CAPTURE(args[1]);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("topic 'nope' is unknown in domain '" + domain.name() + "'") !=
          std::string::npos);
    CHECK(r.err.find("ferry topic list") != std::string::npos);
  }
}

TEST_CASE("topic echo stops cleanly on Ctrl-C and leaves the topic") {
  TestDomain domain;
  Daemon daemon(domain, kAllTypes);
  Background echo(domain, {bin_path("ferry"), "topic", "echo", "all"});
  REQUIRE(wait_for_subscribers(domain, "all", 1));
  echo.signal(SIGINT);
  CHECK(echo.wait() == 0);
  CHECK(echo.err().empty());
  CHECK(wait_for_subscribers(domain, "all", 0));
}
