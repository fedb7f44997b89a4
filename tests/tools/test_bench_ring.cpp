// ferry-bench-ring run as a user would: its --json document (the keys that
// scripts read, one short run), --help, and bad flags refused in one line
// with exit code 2.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "daemon_fixture.hpp"
#include "json_text.hpp"
#include "test_domain.hpp"

using namespace ferry::test;
using Json = nlohmann::json;

namespace {

// A short run: ~0.1 s a transport instead of the default's seconds.
const std::vector<std::string> kShort{"--json", "--messages", "20000", "--rounds",
                                      "2000",   "--repeat",   "1"};

RunResult bench_ring(std::vector<std::string> args) {
  TestDomain domain;  // for run_program's environment: the tool itself uses no domain
  args.insert(args.begin(), bin_path("ferry-bench-ring"));
  return run_program(domain, args, std::chrono::seconds(60));
}

std::vector<std::string> transports_of(const Json& results) {
  std::vector<std::string> names;
  for (const auto& r : results) names.push_back(r.at("transport").get<std::string>());
  return names;
}

bool one_line(const std::string& text) {
  return !text.empty() && text.find('\n') == text.size() - 1;
}

}  // namespace

TEST_CASE("bench_ring_json_has_every_key_of_every_transport") {
  const auto r = bench_ring(kShort);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);  // one document: throws (fails the test) if not JSON
  CAPTURE(ferry::test::json_text(doc));

  for (const char* key : {"cpu", "cores", "kernel", "clocksource", "compiler"}) {
    CHECK(doc.at("machine").contains(key));
  }
  CHECK(doc.at("cpus") == Json::array({0, 1}));
  CHECK(doc.at("pinned").is_boolean());
  CHECK(doc.at("repeat") == 1);
  CHECK(doc.at("slot_size") == 64);
  CHECK(doc.at("capacity") == 1024);
  CHECK(doc.at("spin_limit").get<int>() > 0);
  CHECK(doc.at("clock_read_ns").is_number_integer());
  CHECK(doc.at("failed_runs") == 0);

  const Json& tput = doc.at("throughput");
  CHECK(tput.at("size") == 56);
  CHECK(tput.at("seconds").is_number());
  CHECK(transports_of(tput.at("results")) == std::vector<std::string>{"raw-ring", "raw-ring-batch",
                                                                      "raw-ring-futex",
                                                                      "unix-socket", "pipe"});
  for (const auto& t : tput.at("results")) {
    CAPTURE(ferry::test::json_text(t));
    CHECK(t.at("msgs_per_s").is_number_integer());
    CHECK(t.at("msgs_per_s").get<std::int64_t>() > 0);
    CHECK(t.at("bytes_per_s").get<std::int64_t>() > t.at("msgs_per_s").get<std::int64_t>());
    CHECK(t.at("seconds").is_number());
    CHECK(t.at("vs_unix_socket").get<double>() > 0);
  }
  CHECK(tput.at("results")[3].at("vs_unix_socket") == 1.0);

  const Json& lat = doc.at("latency");
  CHECK(lat.at("size") == 56);
  CHECK(lat.at("rounds") == 2000);
  CHECK(lat.at("sleep_rounds") == 200);
  CHECK(transports_of(lat.at("results")) == std::vector<std::string>{"raw-ring", "raw-ring-futex",
                                                                     "raw-ring-sleep",
                                                                     "unix-socket", "pipe"});
  for (const auto& l : lat.at("results")) {
    CAPTURE(ferry::test::json_text(l));
    const auto p50 = l.at("p50_ns").get<std::int64_t>();
    CHECK(p50 > 0);
    CHECK(p50 <= l.at("p90_ns").get<std::int64_t>());
    CHECK(l.at("p90_ns").get<std::int64_t>() <= l.at("p99_ns").get<std::int64_t>());
    CHECK(l.at("p99_ns").get<std::int64_t>() <= l.at("p999_ns").get<std::int64_t>());
    CHECK(l.at("p999_ns").get<std::int64_t>() <= l.at("max_ns").get<std::int64_t>());
    CHECK(l.at("p50_vs_unix_socket").get<double>() > 0);
  }
}

TEST_CASE("bench_ring_only_runs_the_named_transports_and_keeps_the_shape") {
  auto args = kShort;
  args.insert(args.end(), {"--only", "pipe", "--cpus", "1,0"});
  const auto r = bench_ring(args);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const Json doc = Json::parse(r.out);
  CAPTURE(ferry::test::json_text(doc));
  CHECK(doc.at("cpus") == Json::array({1, 0}));
  CHECK(transports_of(doc.at("throughput").at("results")) == std::vector<std::string>{"pipe"});
  CHECK(transports_of(doc.at("latency").at("results")) == std::vector<std::string>{"pipe"});
  // No Unix socket ran: the ratios against it are 0, as they always were.
  CHECK(doc.at("throughput").at("results")[0].at("vs_unix_socket") == 0.0);
  CHECK(doc.at("latency").at("results")[0].at("p50_vs_unix_socket") == 0.0);
}

TEST_CASE("bench_ring_help_describes_it_with_an_example") {
  const auto r = bench_ring({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Usage: ferry-bench-ring") != std::string::npos);
  CHECK(r.out.find("Example:") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("bench_ring_refuses_a_bad_flag_or_value_in_one_line_with_exit_code_2") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--bogus"}, "--bogus"},
      {{"--repeat", "0"}, "--repeat"},
      {{"--messages", "many"}, "--messages"},
      {{"--rounds"}, "--rounds"},
      {{"--cpus", "0"}, "--cpus"},
      {{"--only", "carrier-pigeon"}, "--only"},
  };
  for (const auto& [args, flag] : cases) {
    const auto r = bench_ring(args);
    CAPTURE(args.front());
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.rfind("ferry-bench-ring: ", 0) == 0);
    CHECK(r.err.find(flag) != std::string::npos);
    CHECK(r.out.empty());
  }
}
