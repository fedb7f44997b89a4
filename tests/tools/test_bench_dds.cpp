// `ferry bench --transports fastdds,cyclonedds`: with a DDS built in, the
// comparator gives sane numbers for latency at a small and a frame size and
// for throughput, next to ferry and the cache-line floor, and leaves
// nothing behind (run_bench: no process, no object of the private domain;
// here also no Fast DDS data segment). Without it, asking for it is a usage
// error that says the transport was left out of the build.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "bench_test_util.hpp"
#include "json_text.hpp"

using namespace ferry::test;
using namespace ferry::test::bench;

namespace {

// The DDS transports this build has, in their canonical order.
std::vector<std::string> built_dds() {
  std::vector<std::string> names;
#ifdef FERRY_BENCH_HAVE_FASTDDS
  names.emplace_back("fastdds");
#endif
#ifdef FERRY_BENCH_HAVE_CYCLONEDDS
  names.emplace_back("cyclonedds");
#endif
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// Fast DDS's data segments and data-sharing pools in /dev/shm (its port
// files, shared by every Fast DDS process of the machine, are not ours).
std::set<std::string> fastdds_segments() {
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if ((name.rfind("fastrtps_", 0) == 0 && name.find("port") == std::string::npos) ||
        name.rfind("fast_datasharing", 0) == 0) {
      found.insert(name);
    }
  }
  return found;
}

}  // namespace

TEST_CASE("bench_measures_the_dds_comparators_next_to_ferry_and_the_floor" *
          doctest::skip(built_dds().empty())) {
  const auto before = fastdds_segments();
  std::vector<std::string> expected{"ferry", "cacheline"};
  for (const auto& n : built_dds()) expected.push_back(n);

  const auto latency =
      run_bench({"latency", "--size", "64,3110400", "--transports", joined(expected), "--rounds",
                 "300", "--max-run-seconds", "0.5", "--repeat", "1", "--json"},
                "ferry bench: fastdds at ");
  REQUIRE(latency.size() == 2);
  CHECK(latency[1].at("size") == 3110400);
  for (const auto& line : latency) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(transports_of(line) == expected);
    CHECK(line.at("floor_p50_ns").get<std::int64_t>() > 0);
    for (const auto& r : line.at("results")) {
      const auto p50 = r.at("p50_ns").get<std::int64_t>();
      CHECK(p50 > 0);
      CHECK(p50 <= r.at("p99_ns").get<std::int64_t>());
      CHECK(r.at("max_ns").get<std::int64_t>() < 10'000'000'000);
      CHECK(r.at("p50_vs_floor").get<double>() > 0);
    }
  }

  std::vector<std::string> streamed{"ferry"};
  for (const auto& n : built_dds()) streamed.push_back(n);
  const auto throughput = run_bench({"throughput", "--size", "64", "--transports", joined(streamed),
                                     "--seconds", "0.2", "--repeat", "1", "--json"},
                                    "ferry bench: fastdds at ");
  REQUIRE(throughput.size() == 1);
  CAPTURE(ferry::test::json_text(throughput[0]));
  CHECK(transports_of(throughput[0]) == streamed);
  for (const auto& r : throughput[0].at("results")) {
    CHECK(r.at("msgs_per_s").get<double>() > 0);
    CHECK(r.at("sequence_errors") == 0);  // reliable, keep-all: nothing lost
  }
  CHECK(fastdds_segments() == before);
}

TEST_CASE("bench_says_a_dds_left_out_of_the_build_was_left_out") {
  TestDomain domain;
#ifndef FERRY_BENCH_HAVE_FASTDDS
  const auto f =
      run_program(domain, {bin_path("ferry"), "bench", "latency", "--transports", "fastdds"});
  CHECK(f.exit_code == 2);
  CHECK(f.err.find("fastdds was left out of this build") != std::string::npos);
#endif
#ifndef FERRY_BENCH_HAVE_CYCLONEDDS
  const auto c =
      run_program(domain, {bin_path("ferry"), "bench", "throughput", "--transports", "cyclonedds"});
  CHECK(c.exit_code == 2);
  CHECK(c.err.find("cyclonedds was left out of this build") != std::string::npos);
#endif
  // Built or not, the help names both and says which.
  const auto help = run_program(domain, {bin_path("ferry"), "bench", "latency", "--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("fastdds is Fast DDS") != std::string::npos);
  CHECK(help.out.find("cyclonedds is Cyclone DDS") != std::string::npos);
}
