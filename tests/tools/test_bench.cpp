// `ferry bench` run as a user would: the JSON shape of DESIGN 1.5, sane
// numbers from every transport, and nothing left behind (no shared-memory
// object of its private domain, no runtime directory, no process).
#include <doctest/doctest.h>

#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon_fixture.hpp"
#include "test_domain.hpp"

using ferry::test::bin_path;
using ferry::test::run_program;
using ferry::test::TestDomain;
using Json = nlohmann::json;

namespace {

const std::vector<std::string> kTransports{"ferry", "raw-ring", "unix-socket", "pipe"};

std::vector<Json> json_lines(const std::string& out) {
  std::vector<Json> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(Json::parse(line));
  }
  return lines;
}

std::vector<std::string> transports_of(const Json& line) {
  std::vector<std::string> names;
  for (const auto& r : line.at("results")) names.push_back(r.at("transport").get<std::string>());
  return names;
}

// /dev/shm objects of `domain` ("ferry.<domain>.*").
std::vector<std::string> shm_objects(const std::string& domain) {
  std::vector<std::string> found;
  const std::string prefix = "ferry." + domain + ".";
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) found.push_back(name);
  }
  return found;
}

// Processes whose parent is this test (alive or zombie). The test is a child
// subreaper, so anything the benchmark left running is reparented to us.
std::vector<std::string> our_children() {
  std::vector<std::string> found;
  const std::string self = std::to_string(::getpid());
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream status(e.path() / "status");
    std::string line, name;
    for (; std::getline(status, line);) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(5);
      if (line.rfind("PPid:", 0) == 0) {
        std::istringstream v(line.substr(5));
        std::string ppid;
        v >> ppid;
        if (ppid == self) found.push_back(e.path().filename().string() + name);
        break;
      }
    }
  }
  return found;
}

// Runs `ferry bench ...` in a fresh TMPDIR (where it makes its private
// runtime directory); checks it exited 0 and removed everything it made.
std::vector<Json> run_bench(const std::vector<std::string>& args) {
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  TestDomain domain;
  const auto tmp = domain.runtime_dir() / "tmp";
  std::filesystem::create_directories(tmp);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  std::vector<std::string> argv{bin_path("ferry"), "bench"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_program(domain, argv, std::chrono::seconds(90));
  ::unsetenv("TMPDIR");
  INFO("stderr: " << r.err);
  INFO("stdout: " << r.out);
  REQUIRE(r.exit_code == 0);
  const auto lines = json_lines(r.out);
  REQUIRE(!lines.empty());

  const std::string bench_domain = lines.front().at("domain").get<std::string>();
  CHECK(!bench_domain.empty());
  CHECK(shm_objects(bench_domain).empty());
  CHECK(std::filesystem::is_empty(tmp));  // its runtime directory is gone
  CHECK(our_children().empty());          // no ferryd, no side left running (or unreaped)
  return lines;
}

}  // namespace

TEST_CASE("bench_latency_reports_percentiles_of_every_transport_per_size_and_leaves_nothing") {
  const auto lines = run_bench({"latency", "--rounds", "2000", "--size", "64", "--size", "1MiB", "--json"});
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("size") == 64);
  CHECK(lines[1].at("size") == 1048576);
  for (const auto& line : lines) {
    CAPTURE(line.dump());
    CHECK(line.at("rounds") == 2000);
    CHECK(transports_of(line) == kTransports);
    for (const auto& r : line.at("results")) {
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
  const auto lines = run_bench({"throughput", "--seconds", "1", "--json"});
  REQUIRE(lines.size() == 1);
  const Json& line = lines[0];
  CAPTURE(line.dump());
  CHECK(line.at("size") == 64);
  CHECK(line.at("seconds") == 1.0);
  CHECK(transports_of(line) == kTransports);
  for (const auto& r : line.at("results")) {
    const double msgs = r.at("msgs_per_s").get<double>();
    CHECK(msgs > 0);
    CHECK(r.at("bytes_per_s").get<double>() == doctest::Approx(msgs * 64));
    CHECK(r.at("sequence_errors") == 0);
  }
}

TEST_CASE("bench_measures_ferry_copy_and_ferry_loan_on_request") {
  // ferry takes the copy path at 64 B and the loan path at 1 MiB; the two
  // variants measure one path at every size.
  const auto lines = run_bench({"latency", "--rounds", "500", "--repeat", "1", "--size", "64", "--size", "1MiB",
                                "--transports", "ferry-loan,ferry,ferry-copy", "--json"});
  REQUIRE(lines.size() == 2);
  for (const auto& line : lines) {
    CAPTURE(line.dump());
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "ferry-copy", "ferry-loan"});
    for (const auto& r : line.at("results")) CHECK(r.at("p50_ns").get<std::int64_t>() > 0);
  }
}

TEST_CASE("bench_refuses_bad_options_with_exit_code_2") {
  TestDomain domain;
  auto r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--size", "4KB"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("4KB") != std::string::npos);
  r = run_program(domain, {bin_path("ferry"), "bench", "latency", "--transports", "carrier-pigeon"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("carrier-pigeon") != std::string::npos);
  r = run_program(domain, {bin_path("ferry"), "bench", "throughput", "--subscribers", "0"});
  CHECK(r.exit_code == 2);
}
