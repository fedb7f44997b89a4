// `ferry bench --transports iceoryx`: with iceoryx built, the comparator
// gives sane numbers at a small and a frame size, the RouDi it started is
// gone afterwards (no process of ours left, none of RouDi's shared-memory
// objects, sockets or locks), and another RouDi on the machine is one
// sentence, not a hang. Without iceoryx, asking for it is a usage error.
// RUN_SERIAL: iceoryx 2.0 allows one RouDi per machine.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_test_util.hpp"
#include "json_text.hpp"

using namespace ferry::test;
using namespace ferry::test::bench;

#ifdef FERRY_BENCH_HAVE_ICEORYX

namespace {

// What a RouDi 2.0 and its applications make: shared memory (management,
// and data named after the user's group), sockets and locks in /tmp.
std::set<std::string> iceoryx_files() {
  std::string group = "root";
  if (const ::group* g = ::getgrgid(::getegid()); g != nullptr) group = g->gr_name;
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("iceoryx", 0) == 0 || name == group) found.insert(e.path().string());
  }
  for (const auto& e : std::filesystem::directory_iterator("/tmp")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("roudi", 0) == 0 || name.rfind("iox-", 0) == 0 ||
        (name.rfind("ferry-bench-", 0) == 0 && !e.is_directory())) {
      found.insert(e.path().string());
    }
  }
  return found;
}

// RouDi's management segment exists while a RouDi runs: then ours cannot.
bool another_roudi() { return std::filesystem::exists("/dev/shm/iceoryx_mgmt"); }

}  // namespace

// Both cases are skipped (and counted so) while another RouDi runs.
TEST_CASE("bench_measures_iceoryx_next_to_ferry_and_stops_its_roudi" *
          doctest::skip(another_roudi())) {
  const auto before = iceoryx_files();

  const auto latency = run_bench({"latency", "--size", "64,3110400", "--transports",
                                  "ferry,iceoryx", "--rounds", "500", "--repeat", "1", "--json"});
  REQUIRE(latency.size() == 2);
  CHECK(latency[0].at("size") == 64);
  CHECK(latency[1].at("size") == 3110400);
  for (const auto& line : latency) {
    CAPTURE(ferry::test::json_text(line));
    CHECK(transports_of(line) == std::vector<std::string>{"ferry", "iceoryx"});
    for (const auto& r : line.at("results")) {
      const auto p50 = r.at("p50_ns").get<std::int64_t>();
      CHECK(p50 > 0);
      CHECK(p50 <= r.at("p99_ns").get<std::int64_t>());
      CHECK(r.at("max_ns").get<std::int64_t>() < 10'000'000'000);
      CHECK(r.at("p50_vs_ferry").get<double>() > 0);
    }
  }
  CHECK(iceoryx_files() == before);  // RouDi stopped and its files gone

  const auto throughput = run_bench({"throughput", "--size", "64", "--transports", "ferry,iceoryx",
                                     "--seconds", "0.2", "--repeat", "1", "--json"});
  REQUIRE(throughput.size() == 1);
  CAPTURE(ferry::test::json_text(throughput[0]));
  CHECK(transports_of(throughput[0]) == std::vector<std::string>{"ferry", "iceoryx"});
  for (const auto& r : throughput[0].at("results")) {
    CHECK(r.at("msgs_per_s").get<double>() > 0);
    CHECK(r.at("sequence_errors") == 0);
  }
  CHECK(iceoryx_files() == before);
}

TEST_CASE("bench_reports_another_roudi_in_one_sentence_and_leaves_it_alone" *
          doctest::skip(another_roudi())) {
  const auto before = iceoryx_files();
  TestDomain domain;
  // Someone else's RouDi (a small pool), started and stopped by its pid.
  const auto config = domain.runtime_dir() / "other-roudi.toml";
  std::ofstream(config)
      << "[general]\nversion = 1\n\n[[segment]]\n\n[[segment.mempool]]\nsize = 128\ncount = 16\n";
  const auto log = domain.runtime_dir() / "other-roudi.log";
  const pid_t other = ::fork();
  REQUIRE(other >= 0);
  if (other == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execl(FERRY_IOX_ROUDI, FERRY_IOX_ROUDI, "-c", config.c_str(), "-m", "off",
            static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find("RouDi is ready for clients") != std::string::npos) break;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto r = run_program(domain,
                             {bin_path("ferry"), "bench", "latency", "--size", "64", "--transports",
                              "ferry,iceoryx", "--rounds", "300", "--repeat", "1"},
                             std::chrono::seconds(60));
  const bool other_alive =
      ::kill(other, 0) == 0 && std::filesystem::exists("/dev/shm/iceoryx_mgmt");
  ::kill(other, SIGTERM);
  int status = 0;
  ::waitpid(other, &status, 0);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);  // ferry measured, iceoryx failed
  CHECK(r.err.find("another RouDi (iceoryx's daemon) already runs on this machine") !=
        std::string::npos);
  CHECK(r.out.find("ferry ") != std::string::npos);
  CHECK(other_alive);                // its files were not ours to remove
  CHECK(iceoryx_files() == before);  // and it removed them when it stopped
}

#else

TEST_CASE("bench_refuses_iceoryx_when_it_was_not_built") {
  TestDomain domain;
  const auto r =
      run_program(domain, {bin_path("ferry"), "bench", "latency", "--transports", "ferry,iceoryx"});
  CHECK(r.exit_code == 2);
  CHECK(
      r.err.find(
          "iceoryx was not found when ferry was built; install libiceoryx-posh-dev and rebuild") !=
      std::string::npos);
}

#endif
