// docs/cpp-api.md: `cmake --install` gives a CMake package. This installs the
// build tree into a temporary prefix, configures and builds a separate
// project with find_package(ferry CONFIG), ferry::ferry and ferry::ferry_c
// (a C11 program), and runs both against the installed ferryd.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "test_domain.hpp"

using namespace ferry::test;

namespace {

namespace fs = std::filesystem;
constexpr auto kStepTimeout = std::chrono::seconds(100);

// The step's output when it failed, so that the test log says why.
bool ran(const RunResult& r) {
  if (r.exit_code != 0) MESSAGE("exit " << r.exit_code << "\n" << r.out << r.err);
  return r.exit_code == 0;
}

}  // namespace

TEST_CASE(
    "an installed ferry builds a find_package(ferry CONFIG) program that runs against ferryd") {
  TestDomain domain;
  const fs::path prefix = domain.runtime_dir() / "prefix";
  const fs::path build = domain.runtime_dir() / "consumer-build";

  REQUIRE(ran(run_program(domain,
                          {FERRY_TEST_CMAKE, "--install", FERRY_TEST_BUILD_DIR, "--prefix", prefix},
                          kStepTimeout)));
  CHECK(fs::exists(prefix / "bin" / "ferryd"));
  CHECK(fs::exists(prefix / "bin" / "ferry"));
  CHECK(fs::exists(prefix / "include" / "ferry" / "ferry.hpp"));
  CHECK(fs::exists(prefix / "include" / "ferry" / "ferry.h"));

  std::vector<std::string> configure{FERRY_TEST_CMAKE,
                                     "-S",
                                     FERRY_TEST_CONSUMER_DIR,
                                     "-B",
                                     build,
                                     "-G",
                                     FERRY_TEST_GENERATOR,
                                     std::string("-DCMAKE_MAKE_PROGRAM=") + FERRY_TEST_MAKE_PROGRAM,
                                     std::string("-DCMAKE_CXX_COMPILER=") + FERRY_TEST_CXX,
                                     std::string("-DCMAKE_C_COMPILER=") + FERRY_TEST_CC,
                                     "-DCMAKE_PREFIX_PATH=" + prefix.string(),
                                     "-DCMAKE_BUILD_TYPE=RelWithDebInfo"};
  if (std::string(FERRY_TEST_CCACHE).size() > 0) {
    configure.push_back(std::string("-DCMAKE_CXX_COMPILER_LAUNCHER=") + FERRY_TEST_CCACHE);
    configure.push_back(std::string("-DCMAKE_C_COMPILER_LAUNCHER=") + FERRY_TEST_CCACHE);
  }
  if (std::string(FERRY_TEST_CONSUMER_FLAGS).size() > 0) {
    configure.push_back(std::string("-DCMAKE_CXX_FLAGS=") + FERRY_TEST_CONSUMER_FLAGS);
    configure.push_back(std::string("-DCMAKE_C_FLAGS=") + FERRY_TEST_CONSUMER_FLAGS);
    configure.push_back(std::string("-DCMAKE_EXE_LINKER_FLAGS=") + FERRY_TEST_CONSUMER_FLAGS);
  }
  REQUIRE(ran(run_program(domain, configure, kStepTimeout)));
  REQUIRE(ran(run_program(domain, {FERRY_TEST_CMAKE, "--build", build}, kStepTimeout)));

  // The installed ferryd and ferry, not the build tree's.
  ::setenv("FERRY_BIN_DIR", (prefix / "bin").c_str(), 1);
  Daemon daemon(domain,
                "types:\n"
                "  Ping:\n"
                "    fields:\n"
                "      - { name: n, type: u64 }\n"
                "      - { name: value, type: f64 }\n"
                "topics:\n"
                "  - { name: ping, type: Ping }\n");
  const auto consumer = run_program(domain, {(build / "consumer").string()});
  CHECK(ran(consumer));
  CHECK(consumer.out == "consumer took 42 2.50\n");
  // The C11 program, through libferry_c.
  const auto c_consumer = run_program(domain, {(build / "c_consumer").string()});
  CHECK(ran(c_consumer));
  CHECK(c_consumer.out == "c consumer took 42 2.50\n");
  const auto list = run_program(domain, {(prefix / "bin" / "ferry").string(), "topic", "list"});
  CHECK(ran(list));
  CHECK(list.out.find("ping") != std::string::npos);
}
