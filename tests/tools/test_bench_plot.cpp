// scripts/plot-bench.py on a real, short `ferry bench --json` result
// (latency at two sizes with the floor, throughput): an SVG with a panel
// per size and every transport named; bad input is one sentence, exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_test_util.hpp"
#include "json_text.hpp"

using namespace ferry::test;
using namespace ferry::test::bench;

namespace {

void write_lines(const std::filesystem::path& path, const std::vector<Json>& lines) {
  std::ofstream out(path, std::ios::app);
  for (const auto& line : lines) out << ferry::test::json_text(line) << '\n';
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("plot_bench_draws_latency_percentiles_and_throughput_bars_as_svg") {
  TestDomain domain;
  const auto result = domain.runtime_dir() / "result.json";
  write_lines(result,
              run_bench({"latency", "--size", "64,1MiB", "--transports", "ferry,raw-ring,cacheline",
                         "--rounds", "300", "--repeat", "2", "--json"}));
  write_lines(result, run_bench({"throughput", "--size", "64", "--transports", "ferry,raw-ring",
                                 "--seconds", "0.2", "--repeat", "1", "--json"}));
  const auto svg = domain.runtime_dir() / "bench.svg";
  const auto r = run_program(domain, {FERRY_TEST_PYTHON, FERRY_PLOT_BENCH, result.string(), "-o",
                                      svg.string(), "--title", "ferry bench (test)"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(text.find("</svg>") != std::string::npos);
  for (const char* expected : {"latency, 64 B", "latency, 1 MiB", "throughput, 64 B", "ferry",
                               "raw-ring", "cacheline", "ferry bench (test)", "p99.9"}) {
    CAPTURE(expected);
    CHECK(text.find(expected) != std::string::npos);
  }
}

TEST_CASE("plot_bench_refuses_what_is_not_a_bench_result_with_exit_code_2") {
  TestDomain domain;
  const auto bad = domain.runtime_dir() / "bad.json";
  std::ofstream(bad) << "not json\n";
  const auto svg = domain.runtime_dir() / "bad.svg";
  auto r =
      run_program(domain, {FERRY_TEST_PYTHON, FERRY_PLOT_BENCH, bad.string(), "-o", svg.string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is not a JSON line of `ferry bench --json`") != std::string::npos);
  CHECK(!std::filesystem::exists(svg));
  r = run_program(domain, {FERRY_TEST_PYTHON, FERRY_PLOT_BENCH,
                           (domain.runtime_dir() / "missing.json").string(), "-o", svg.string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot read") != std::string::npos);
}
