#pragma once
// Runs a real ferryd (the built binary) for a test: writes the YAML config
// into the test domain's runtime directory, starts ferryd in the foreground
// with FERRY_RUNTIME_DIR pointing there, waits until its socket accepts, and
// stops it (SIGTERM, then SIGKILL) when the fixture dies. ferryd's stderr goes
// to a file: when the fixture dies, the running test fails if ferryd did not
// exit 0 on its SIGTERM or if a sanitizer reported anything in it.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "process.hpp"
#include "test_domain.hpp"

namespace ferry::test {

// Path of a program built into build/bin (from $FERRY_BIN_DIR, set by ctest).
std::string bin_path(const std::string& program);

// Path of a file in tests/support: the YAML types several tests include
// (pose_frame.yaml, images.yaml).
std::string support_path(const std::string& name);

// Runs a program to completion with the test domain's environment; captures
// stdout and stderr. Kills it after `timeout`. The running test fails if a
// sanitizer reported anything on its stderr, whatever its exit code.
struct RunResult {
  int exit_code = -1;  // 128+signal when killed, -1 on timeout
  std::string out;
  std::string err;
};
RunResult run_program(const TestDomain& domain, const std::vector<std::string>& argv,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Another user for ferryd (root tests): its uid and primary group, no
// supplementary groups. The runtime directory must be that user's.
struct RunAs {
  uid_t uid;
  gid_t gid;
};

class Daemon {
 public:
  Daemon(const TestDomain& domain, const std::string& yaml);
  // With more ferryd arguments after the usual ones (e.g. {"--group", "users"}).
  Daemon(const TestDomain& domain, const std::string& yaml, std::vector<std::string> extra_args);
  Daemon(const TestDomain& domain, const std::string& yaml, std::vector<std::string> extra_args,
         RunAs user);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] const std::string& config_path() const noexcept { return config_path_; }
  // SIGTERM and wait; returns the exit code (128+signal if killed), which
  // the caller checks (the destructor checks it when the test did not stop it).
  [[nodiscard]] int stop();
  // SIGKILL: its exit is the test's doing, not checked.
  void kill9();
  // Everything ferryd wrote to stderr so far, all its starts.
  [[nodiscard]] std::string log() const;
  // Starts it again after stop()/kill9(), same config.
  void start();

 private:
  const TestDomain& domain_;
  std::string config_path_;
  std::vector<std::string> extra_args_;
  std::string log_path_;
  std::optional<RunAs> user_;
  pid_t pid_ = -1;
};

// Points FERRY_DOMAIN and FERRY_RUNTIME_DIR of this process at the domain
// (for ferry::Node in the test process and in forked children).
void use_domain_env(const TestDomain& domain);

// The usual start of a test: a fresh domain served by a real ferryd with
// `yaml`, and this process's environment pointing at it.
//   ferry::test::ServedConfig served(seq_config("  - { name: t, type: Seq }\n"));
//   ferry::Node node{"n"}; ... served.domain ... served.daemon ...
struct ServedConfig {
  explicit ServedConfig(const std::string& yaml) : daemon(domain, yaml) { use_domain_env(domain); }
  TestDomain domain;
  Daemon daemon;
};

// The same as a doctest fixture, for a config fixed at compile time:
//   using Served = ferry::test::ServedDomain<kConfig>;
//   TEST_CASE_FIXTURE(Served, "...") { ferry::Node node{"n"}; ... domain ... daemon ... }
template <const std::string& Yaml>
struct ServedDomain : ServedConfig {
  ServedDomain() : ServedConfig(Yaml) {}
};

// In a forked child: the domain's environment, then exec_argv (process.hpp).
[[noreturn]] void exec_in_domain(const TestDomain& domain, const std::vector<std::string>& argv);

}  // namespace ferry::test
