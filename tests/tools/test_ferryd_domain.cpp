// Which domain ferryd serves (docs/concepts/index.md): --domain, else FERRY_DOMAIN,
// else the config file's `domain:`, else `default`. Each case starts a real
// ferryd without the fixture's --domain and finds the socket it made.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "ferry/discovery/socket.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

namespace fs = std::filesystem;

// A foreground ferryd whose runtime directory is `home`'s, given only
// --config (and `extra`), with FERRY_DOMAIN set to `env_domain` or, when
// that is empty, unset.
Child ferryd(const TestDomain& home, const std::string& config_domain,
             const std::string& env_domain, const std::vector<std::string>& extra = {}) {
  const std::string config = (home.runtime_dir() / "ferry.yaml").string();
  std::ofstream(config) << "domain: " << config_domain << "\n"
                        << seq_config("  - { name: t, type: Seq }\n");
  return Child([&] {
    ferry::test::use_domain_env(home);
    if (env_domain.empty()) {
      ::unsetenv("FERRY_DOMAIN");
    } else {
      ::setenv("FERRY_DOMAIN", env_domain.c_str(), 1);
    }
    std::vector<std::string> argv{bin_path("ferryd"), "--config", config, "--foreground"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    return 127;
  });
}

// The domain whose socket in `home`'s directory accepts first (within 10 s;
// empty if none does).
std::string served_domain(const TestDomain& home) {
  std::string served;
  // Empty `served` says it when none did: the callers check the name.
  (void)eventually(
      [&] {
        for (const auto& entry : fs::directory_iterator(home.runtime_dir())) {
          if (entry.path().extension() == ".sock" &&
              ferry::discovery::UnixSeqpacketSocket::connect(entry.path(), 100ms)) {
            served = entry.path().stem().string();
            return true;
          }
        }
        return false;
      },
      10s);
  return served;
}

// The domains that have a socket in `home`'s directory.
std::vector<std::string> sockets_in(const TestDomain& home) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(home.runtime_dir())) {
    if (entry.path().extension() == ".sock") names.push_back(entry.path().stem().string());
  }
  return names;
}

// Stops the daemon as a user would and expects a clean exit.
void stop(Child& daemon) {
  daemon.kill(SIGTERM);
  CHECK(daemon.wait(10s) == 0);
}

}  // namespace

TEST_CASE("ferryd serves FERRY_DOMAIN over the config's domain:, and domain: without it") {
  TestDomain from_env;     // also the runtime directory of every case
  TestDomain from_config;  // named by the file
  {
    Child daemon = ferryd(from_env, from_config.name(), from_env.name());
    REQUIRE(served_domain(from_env) == from_env.name());
    CHECK(sockets_in(from_env) == std::vector<std::string>{from_env.name()});
    // ferry finds it by the same variable.
    const auto list = run_program(from_env, {bin_path("ferry"), "topic", "list"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find("Seq") != std::string::npos);
    stop(daemon);
  }
  {
    Child daemon = ferryd(from_env, from_config.name(), "");
    REQUIRE(served_domain(from_env) == from_config.name());
    CHECK(sockets_in(from_env) == std::vector<std::string>{from_config.name()});
    const auto list =
        run_program(from_env, {bin_path("ferry"), "--domain", from_config.name(), "topic", "list"});
    CHECK(list.exit_code == 0);
    CHECK(list.out.find("Seq") != std::string::npos);
    stop(daemon);
  }
}

TEST_CASE("ferryd --domain wins over FERRY_DOMAIN and domain:") {
  TestDomain home;
  TestDomain from_config;
  TestDomain from_flag;
  Child daemon = ferryd(home, from_config.name(), home.name(), {"--domain", from_flag.name()});
  REQUIRE(served_domain(home) == from_flag.name());
  CHECK(sockets_in(home) == std::vector<std::string>{from_flag.name()});
  stop(daemon);
}
