// `ferry bench` run as a user would: the JSON shape of docs/cli/index.md, sane
// numbers from every transport, and nothing left behind (no shared-memory
// object of its private domain, no runtime directory, no process).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "bench_test_util.hpp"
#include "json_text.hpp"

using namespace ferry::test;
using namespace ferry::test::bench;

namespace {

// Every transport measured by default: iceoryx too when it was built;
// latency adds the floor, cacheline.
#ifdef FERRY_BENCH_HAVE_ICEORYX
const std::vector<std::string> kTransports{"ferry", "raw-ring", "unix-socket", "pipe", "iceoryx"};
const std::vector<std::string> kLatencyTransports{"ferry",       "raw-ring", "cacheline",
                                                  "unix-socket", "pipe",     "iceoryx"};
#else
const std::vector<std::string> kTransports{"ferry", "raw-ring", "unix-socket", "pipe"};
const std::vector<std::string> kLatencyTransports{"ferry", "raw-ring", "cacheline", "unix-socket",
                                                  "pipe"};
#endif

}  // namespace

TEST_CASE("bench_latency_reports_percentiles_of_every_transport_per_size_and_leaves_nothing") {
  const auto lines = run_bench(
      {"latency", "--rounds", "500", "--repeat", "2", "--size", "64", "--size", "1MiB", "--json"});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("size") == 64);
  CHECK(lines[1].at("size") == 1048576);
  for (const auto& line : lines) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(line.at("rounds") == 500);
    CHECK(transports_of(line) == kLatencyTransports);
    CHECK(line.at("pinned") == false);  // no --cpus: the scheduler places the sides
    CHECK(line.at("cpus").empty());
    const auto floor = line.at("floor_p50_ns").get<std::int64_t>();
    CHECK(floor > 0);
    // The spin loops' polling period, measured: what the p50s' steps follow.
    CHECK(line.at("spin_pauses").get<std::int64_t>() >= 1);
    CHECK(line.at("spin_step_ns").get<std::int64_t>() > 0);
    for (const auto& r : line.at("results")) {
      // The floor's multiple, and each percentile's range over the repeats.
      CHECK(r.at("p50_vs_floor").get<double>() ==
            doctest::Approx(static_cast<double>(r.at("p50_ns").get<std::int64_t>()) /
                            static_cast<double>(floor)));
      // The same ratios taken within each repeat, then their median: every
      // transport ran in both repeats, next to ferry and the floor.
      const bool is_ferry = r.at("transport") == "ferry";
      const bool is_floor = r.at("transport") == "cacheline";
      CHECK(r.at("p50_vs_ferry_paired").get<double>() > 0);
      CHECK(r.at("p50_vs_floor_paired").get<double>() > 0);
      if (is_ferry) CHECK(r.at("p50_vs_ferry_paired").get<double>() == 1.0);
      if (is_floor) CHECK(r.at("p50_vs_floor_paired").get<double>() == 1.0);
      for (const char* key : {"p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"}) {
        const auto& spread = r.at("spread").at(key);
        REQUIRE(spread.size() == 3);
        CHECK(spread[0] <= spread[1]);
        CHECK(spread[1] == r.at(key));
        CHECK(spread[1] <= spread[2]);
      }
      const auto p50 = r.at("p50_ns").get<std::int64_t>();
      const auto p90 = r.at("p90_ns").get<std::int64_t>();
      const auto p99 = r.at("p99_ns").get<std::int64_t>();
      const auto p999 = r.at("p999_ns").get<std::int64_t>();
      const auto max = r.at("max_ns").get<std::int64_t>();
      CHECK(p50 > 0);
      CHECK(p50 <= p90);
      CHECK(p90 <= p99);
      CHECK(p99 <= p999);
      CHECK(p999 <= max);
      CHECK(max < 10'000'000'000);  // a sample of ten seconds is no measurement
    }
  }
}

TEST_CASE("bench_throughput_reports_rates_of_every_transport_and_leaves_nothing") {
  // One short run per transport: the shape and sanity of the figures are
  // what is checked here, not the figures (CI time).
  const auto lines = run_bench({"throughput", "--seconds", "0.5", "--repeat", "1", "--json"});
  REQUIRE(lines.size() == 1);
  const Json& line = lines[0];
  CAPTURE(ferry::test::json_text(line));
  CHECK(line.at("size") == 64);
  CHECK(line.at("seconds") == 0.5);
  CHECK(transports_of(line) == kTransports);
  for (const auto& r : line.at("results")) {
    const double msgs = r.at("msgs_per_s").get<double>();
    CHECK(msgs > 0);
    const auto& spread = r.at("spread").at("msgs_per_s");  // one run: all three the same
    CHECK(spread == Json::array({msgs, msgs, msgs}));
    CHECK(r.at("bytes_per_s").get<double>() == doctest::Approx(msgs * 64));
    CHECK(r.at("sequence_errors") == 0);
    // One repeat: the ratio within it is the ratio of the medians.
    CHECK(r.at("vs_ferry_paired").get<double>() == doctest::Approx(r.at("vs_ferry").get<double>()));
  }
}

TEST_CASE("bench_throughput_batch_measures_ferry_and_raw_ring_in_batches_without_a_gap") {
  // --batch N: publish_many / take_many (ferry), loan_many / publish_many
  // (ferry-loan: samples that fit a slot at 64 B, a pool chunk each at
  // 8 KiB), stage_many / consume_many (raw-ring); every sequence number is
  // still checked, including those of the last, shorter batch that carries
  // the stop message, at both of two subscribers.
  const auto lines = run_bench({"throughput", "--seconds", "0.3", "--repeat", "1", "--batch", "64",
                                "--size", "64,8KiB", "--subscribers", "2", "--transports",
                                "ferry,ferry-loan,raw-ring", "--json"});
  REQUIRE(lines.size() == 2);
  for (const Json& line : lines) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(line.at("batch") == 64);
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "ferry-loan", "raw-ring"});
    for (const auto& r : line.at("results")) {
      CHECK(r.at("msgs_per_s").get<double>() > 0);
      CHECK(r.at("sequence_errors") == 0);
    }
  }
}

TEST_CASE("bench_measures_ferry_copy_and_ferry_loan_on_request") {
  // ferry takes the copy path at 64 B and the loan path at 1 MiB; the two
  // variants measure one path at every size.
  const auto lines =
      run_bench({"latency", "--rounds", "500", "--repeat", "1", "--size", "64", "--size", "1MiB",
                 "--transports", "ferry-loan,ferry,ferry-copy", "--json"});
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "ferry-copy", "ferry-loan"});
    for (const auto& r : line.at("results")) CHECK(r.at("p50_ns").get<std::int64_t>() > 0);
  }
}

TEST_CASE("bench_measures_ferry_c_beside_ferry_and_only_for_latency") {
  // ferry-c: the ping side through the C API (libferry_c), the echo side C++;
  // the copy path at every size, in both wait modes.
  for (const char* wait : {"spin", "sleep"}) {
    CAPTURE(wait);
    const auto lines =
        run_bench({"latency", "--rounds", "300", "--repeat", "1", "--size", "64", "--size", "8KiB",
                   "--wait", wait, "--transports", "ferry-c,ferry", "--json"});
    REQUIRE(lines.size() == 2);
    for (const auto& line : lines) {
      CAPTURE(ferry::test::json_text(line));
      CHECK(transports_of(line) == std::vector<std::string>{"ferry", "ferry-c"});
      for (const auto& r : line.at("results")) CHECK(r.at("p50_ns").get<std::int64_t>() > 0);
    }
  }
  TestDomain domain;
  const auto throughput =
      run_program(domain, {bin_path("ferry"), "bench", "throughput", "--transports", "ferry-c"});
  CHECK(throughput.exit_code == 2);
  CHECK(throughput.err.find("transport 'ferry-c' measures latency only") != std::string::npos);
}

TEST_CASE("bench_refuses_bad_options_with_exit_code_2") {
  TestDomain domain;
  auto r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--size", "4KB"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("4KB") != std::string::npos);
  r = run_program(domain,
                  {bin_path("ferry"), "bench", "latency", "--transports", "carrier-pigeon"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("carrier-pigeon") != std::string::npos);
  r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--subscribers", "0"});
  CHECK(r.exit_code == 2);
  r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--batch", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--batch") != std::string::npos);
  // --cpus: malformed, out of range (no such CPU), the same CPU twice, one
  // CPU for two sides; each one sentence naming the option.
  for (const char* cpus : {"zero,1", "0,4096", "0,-1", "0,0", "0"}) {
    CAPTURE(cpus);
    r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--cpus", cpus});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--cpus") != std::string::npos);
  }
  r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--cpus", "4000"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--cpus 4000: CPU 4000 is not available") != std::string::npos);
  // cacheline's throughput floor polls, and streams up to 4 KiB.
  r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--transports", "cacheline",
                           "--wait", "sleep"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cacheline's throughput floor polls; measure it with --wait spin") !=
        std::string::npos);
  r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--transports",
                           "ferry,cacheline", "--size", "64,8KiB"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cacheline's throughput floor streams up to 4096 B, not 8192 B") !=
        std::string::npos);
  // raw-ring-owned measures latency only.
  r = run_program(domain,
                  {bin_path("ferry"), "bench", "throughput", "--transports", "raw-ring-owned"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("raw-ring-owned") != std::string::npos);
  // Durations: NaN fails every comparison, so it is refused by name (it ran
  // "nan s per run"); a count is digits (-1 was read as 2^64 - 1).
  for (const char* bad : {"nan", "0", "-1", "3601"}) {
    CAPTURE(bad);
    r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--max-run-seconds", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--max-run-seconds must be above 0 and at most 3600 (seconds), not ") !=
          std::string::npos);
    r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--seconds", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--seconds must be above 0 and at most 3600 (seconds), not ") !=
          std::string::npos);
  }
  r = run_program(domain, {bin_path("ferry"), "bench", "scale", "--idle-seconds", "nan"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--idle-seconds must be above 0 and at most 600 (seconds), not nan") !=
        std::string::npos);
  r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--rounds", "-1"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--rounds: expected a count (0 or more), got '-1'") != std::string::npos);
  // Its range in the sentence, not 1.8e308 written out.
  r = run_program(domain, {bin_path("ferry"), "bench", "rpc", "--rounds", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--rounds: Value 0 not in range 1 to 100000000") != std::string::npos);
}

TEST_CASE("bench_throughput_cacheline_streams_every_message_in_order_beside_ferry") {
  // The throughput floor: every sequence number checked, at one line per
  // message (64 B) and at several (200 B), with two receivers reading
  // their own rings, and with batches as long as the ring (no stall).
  for (const auto& [receivers, batch] : {std::pair{"1", "1"}, {"2", "64"}, {"1", "1023"}}) {
    CAPTURE(receivers);
    CAPTURE(batch);
    const auto lines = run_bench({"throughput", "--seconds", "0.3", "--repeat", "1", "--size",
                                  "64,200", "--subscribers", receivers, "--batch", batch,
                                  "--transports", "ferry,cacheline", "--json"});
    REQUIRE(lines.size() == 2);
    for (const auto& line : lines) {
      CAPTURE(ferry::test::json_text(line));
      CHECK(transports_of(line) == std::vector<std::string>{"ferry", "cacheline"});
      for (const auto& r : line.at("results")) {
        CHECK(r.at("msgs_per_s").get<double>() > 0);
        CHECK(r.at("sequence_errors") == 0);
      }
    }
  }
}

TEST_CASE("bench_latency_pins_each_side_to_its_own_cpu_with_cpus") {
  const auto lines = run_bench({"latency", "--rounds", "300", "--repeat", "1", "--size", "64",
                                "--transports", "ferry,cacheline", "--cpus", "0,1", "--json"});
  REQUIRE(lines.size() == 1);
  CAPTURE(ferry::test::json_text(lines[0]));
  CHECK(lines[0].at("pinned") == true);
  CHECK(lines[0].at("cpus") == Json::array({0, 1}));
  CHECK(transports_of(lines[0]) == std::vector<std::string>{"ferry", "cacheline"});
}

// raw-ring-owned, the floor of a zero-copy hand-off that records its holder:
// above 4 KiB both sides move the buffer's owner word through its four CASes
// (a step that finds the word in another state fails the run); at 64 B it
// is raw-ring. The text report gives its large p50 against ferry's small one.
TEST_CASE("bench_latency_raw_ring_owned_hands_over_a_recorded_reference_and_compares_with_ferry") {
  const auto lines = run_bench({"latency", "--rounds", "300", "--repeat", "1", "--size", "64,64KiB",
                                "--transports", "ferry,raw-ring-owned", "--json"});
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "raw-ring-owned"});
    for (const auto& r : line.at("results")) CHECK(r.at("p50_ns").get<std::int64_t>() > 0);
  }
  TestDomain domain;
  auto r =
      run_program(domain, {bin_path("ferry"), "bench", "latency", "--rounds", "300", "--repeat",
                           "1", "--size", "64,64KiB", "--transports", "ferry,raw-ring-owned"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("raw-ring-owned p50 at 64 KiB is x ") != std::string::npos);
  CHECK(r.out.find("ferry's p50 at 64 B") != std::string::npos);
  r = run_program(domain,
                  {bin_path("ferry"), "bench", "throughput", "--transports", "raw-ring-owned"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("raw-ring-owned") != std::string::npos);
}
