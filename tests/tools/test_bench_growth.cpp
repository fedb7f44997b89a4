// `ferry bench scale` and `ferry bench fanout` at tiny sizes, run as a user
// would: the JSON shape docs/performance.md documents, every pair matched, every
// sample of every subscriber timed, and nothing left behind (run_bench
// checks: no shared-memory object, no runtime directory, no process).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bench_test_util.hpp"
#include "json_text.hpp"

using namespace ferry::test::bench;

TEST_CASE("bench_scale_matches_every_pair_and_reports_ferryd_costs") {
  const auto lines = run_bench({"scale", "--nodes", "6", "--topics", "3", "--idle-seconds", "0.5",
                                "--traffic-seconds", "0.6", "--repeat", "2", "--json"});
  REQUIRE(lines.size() == 1);
  const Json& j = lines.front();
  CAPTURE(ferry::test::json_text(j));
  CHECK(j.at("bench") == "scale");
  CHECK(j.at("nodes") == 6);
  CHECK(j.at("topics") == 3);
  CHECK(j.at("ports") == 36);
  CHECK(j.at("queues") == 18);
  CHECK(j.at("runs") == 2);
  CHECK(j.at("all_matched") == true);
  // Every queue is a ring in /dev/shm, every subscriber has a doorbell.
  CHECK(j.at("shm").at("rings") == 18);
  CHECK(j.at("shm").at("doorbells") == 18);
  CHECK(j.at("shm").at("bytes_per_queue").get<std::uint64_t>() > 0);
  CHECK(j.at("match_after_last_port_ms").get<double>() >= 0);
  CHECK(j.at("match_after_last_port_ms").get<double>() < 10'000);
  CHECK(j.at("ferryd_idle_cpu_percent").get<double>() >= 0);
  CHECK(j.at("ferryd_rss_bytes").get<std::uint64_t>() > 0);
  CHECK(j.at("node_rss_median_bytes").get<std::uint64_t>() > 0);
  CHECK(j.at("node_rss_max_bytes").get<std::uint64_t>() >=
        j.at("node_rss_median_bytes").get<std::uint64_t>());
  // Samples flowed: each node publishes 100 Hz after a 0.2 s warm-up.
  const Json& lat = j.at("latency_64b");
  CHECK(lat.at("samples").get<std::uint64_t>() > 0);
  CHECK(lat.at("p50_ns").get<std::int64_t>() > 0);
  CHECK(lat.at("p99_ns").get<std::int64_t>() >= lat.at("p50_ns").get<std::int64_t>());
}

TEST_CASE("bench_fanout_times_the_publisher_and_the_first_and_last_subscriber_per_k") {
  // iceoryx is left out: test_bench_iceoryx owns the machine's one RouDi.
  const auto lines = run_bench({"fanout", "--subscribers", "1,3", "--samples", "50", "--repeat",
                                "2", "--transports", "ferry,ferry-loan,unix-socket", "--json"});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("subscribers") == 1);
  CHECK(lines[1].at("subscribers") == 3);
  for (const auto& line : lines) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(line.at("bench") == "fanout");
    CHECK(line.at("size") == 64);
    CHECK(line.at("samples") == 50);
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "ferry-loan", "unix-socket"});
    for (const auto& r : line.at("results")) {
      CHECK(r.at("runs") == 2);
      const auto publish = r.at("publish_p50_ns").get<std::int64_t>();
      const auto first = r.at("first_wake_p50_ns").get<std::int64_t>();
      const auto last = r.at("last_wake_p50_ns").get<std::int64_t>();
      CHECK(publish > 0);
      CHECK(first > 0);
      CHECK(last >= first);
      if (line.at("subscribers") == 1) CHECK(last == first);
    }
  }
}

TEST_CASE("bench_scale_and_fanout_refuse_bad_sizes_with_a_sentence") {
  ferry::test::TestDomain domain;
  const auto bench = ferry::test::bin_path("ferry");
  auto r = ferry::test::run_program(domain, {bench, "bench", "scale", "--nodes", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--nodes must be between 1 and") != std::string::npos);
  r = ferry::test::run_program(domain, {bench, "bench", "fanout", "--subscribers", "17"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--subscribers '17' is not a count from 1 to 16") != std::string::npos);
  r = ferry::test::run_program(domain, {bench, "bench", "fanout", "--transports", "pipe"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("transport 'pipe' has no fanout side") != std::string::npos);
}
