// ferry-bench-batch-latency run as a user would: a short run's table, bad
// flags refused in one line, and a run whose echo side stops answering ends
// within its answer wait instead of spinning for ever.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

std::string read_proc(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The child of `parent` that runs the same program (the echo side), once the
// other child runs ferryd (until it execs, it too has the parent's name); or -1.
pid_t echo_child_of(pid_t parent) {
  const std::string base = "/proc/" + std::to_string(parent);
  std::istringstream children(read_proc(base + "/task/" + std::to_string(parent) + "/children"));
  const std::string own = read_proc(base + "/comm");
  pid_t echo = -1;
  bool ferryd = false;
  for (pid_t child = 0; children >> child;) {
    const std::string comm = read_proc("/proc/" + std::to_string(child) + "/comm");
    if (comm == own) echo = child;
    if (comm == "ferryd\n") ferryd = true;
  }
  return ferryd ? echo : -1;
}

}  // namespace

TEST_CASE("a short run prints the three kinds of burst and exits 0") {
  TestDomain domain;  // run_program's environment: the tool makes its own domain
  const auto r = run_program(
      domain, {bin_path("ferry-bench-batch-latency"), "--rounds", "300", "--runs", "1"}, 60s);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("300 rounds x 1 runs") != std::string::npos);
  for (const char* kind : {"publish_many(64)", "64 x publish()", "1 x publish()"}) {
    CHECK(r.out.find(kind) != std::string::npos);
  }
}

TEST_CASE("bad flags are refused in one line with exit code 2") {
  TestDomain domain;
  const auto unknown = run_program(domain, {bin_path("ferry-bench-batch-latency"), "--size"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err ==
        "ferry-bench-batch-latency: unknown argument '--size'; usage: ferry-bench-batch-latency "
        "[--rounds N] [--runs N]\n");
  const auto zero = run_program(domain, {bin_path("ferry-bench-batch-latency"), "--runs", "0"});
  CHECK(zero.exit_code == 2);
  CHECK(zero.err == "ferry-bench-batch-latency: --runs needs a whole number from 1, not '0'\n");
}

TEST_CASE("an echo side that stops answering ends the run with a sentence, not a hang") {
  TestDomain domain;
  Background bench(domain, {bin_path("ferry-bench-batch-latency"), "--rounds", "10000000"});
  pid_t echo = -1;
  REQUIRE(ferry::test::eventually([&] { return (echo = echo_child_of(bench.pid())) > 0; }, 10s));
  std::this_thread::sleep_for(300ms);  // into the measured rounds (they run for minutes)
  ::kill(echo, SIGSTOP);
  const auto started = std::chrono::steady_clock::now();
  CHECK(bench.wait(30s) == 1);
  CHECK(std::chrono::steady_clock::now() - started < 15s);
  CHECK(bench.err().find("the echo process stopped answering") != std::string::npos);
}
