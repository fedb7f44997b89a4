// ferryd under systemd (docs/operations/systemd.md), without systemd: the test plays the
// service manager. It binds the datagram socket that NOTIFY_SOCKET names and
// reads what ferryd --foreground sends there (the sd_notify protocol):
// READY=1 once the socket listens, WATCHDOG=1 at half of WATCHDOG_USEC,
// STOPPING=1 on SIGTERM, RELOADING=1 then READY=1 around a SIGHUP reload;
// and the systemd unit's own ExecStart and ExecReload, run as systemd would.
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "process.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using namespace ferry::test;

namespace {

// The manager's end: a bound datagram socket, and the environment that
// points a child at it (restored when the test ends).
class NotifySocket {
 public:
  explicit NotifySocket(const TestDomain& domain)
      : path_((domain.runtime_dir() / "notify.sock").string()) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    ::setenv("NOTIFY_SOCKET", path_.c_str(), 1);
  }
  ~NotifySocket() {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // True when a datagram containing `state` (a line, e.g. "READY=1")
  // arrives within `timeout`; other datagrams are skipped.
  bool expect(const std::string& state, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) != 1) continue;
      char buf[512];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      const std::string message(buf, static_cast<std::size_t>(n));
      if (("\n" + message + "\n").find("\n" + state + "\n") != std::string::npos) return true;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

const std::string kConfig = seq_config("  - { name: t, type: Seq }\n");

}  // namespace

TEST_CASE("ferryd --foreground tells NOTIFY_SOCKET it is ready, and that it stops") {
  TestDomain domain;
  NotifySocket manager(domain);
  Daemon daemon(domain, kConfig);
  CHECK(manager.expect("READY=1", 5s));
  CHECK_FALSE(manager.expect("WATCHDOG=1", 300ms));  // no WATCHDOG_USEC: no pets
  CHECK(daemon.stop() == 0);
  CHECK(manager.expect("STOPPING=1", 1s));
}

TEST_CASE("ferryd pets the watchdog at half of WATCHDOG_USEC") {
  TestDomain domain;
  NotifySocket manager(domain);
  ::setenv("WATCHDOG_USEC", "400000", 1);  // 400 ms: a pet every 200 ms
  Daemon daemon(domain, kConfig);
  REQUIRE(manager.expect("READY=1", 5s));
  const auto start = std::chrono::steady_clock::now();
  int pets = 0;
  while (pets < 5 && manager.expect("WATCHDOG=1", 400ms)) ++pets;
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(pets == 5);
  CHECK(took >= 600ms);  // not a flood: about one per 200 ms
}

namespace {

// The value of `key=` in the unit file (its first occurrence).
std::string unit_value(const std::string& unit, const std::string& key) {
  std::istringstream in(unit);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(key + "=")) return line.substr(key.size() + 1);
  }
  return {};
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size())) {
    text.replace(at, what.size(), with);
  }
  return text;
}

// Runs argv (no shell) and waits for it; its exit code.
int run(const std::vector<std::string>& argv) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  return ferry::test::wait_exit(pid, 10s);
}

}  // namespace

TEST_CASE(
    "the systemd unit's ExecStart serves the domain as Type=notify, its ExecReload re-reads "
    "the file with RELOADING=1 then READY=1, and SIGTERM stops it") {
  std::ifstream file(FERRY_UNIT_TEMPLATE);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  const std::string unit = text.str();
  CHECK(unit_value(unit, "Type") == "notify");
  CHECK(unit_value(unit, "NotifyAccess") == "main");

  TestDomain domain;
  NotifySocket manager(domain);
  const std::string config = (domain.runtime_dir() / "unit.yaml").string();
  std::ofstream(config) << kConfig;
  // As installed, with this build's binary, this test's domain (the
  // instance name) and configuration; FERRY_RUNTIME_DIR is the test's
  // (the unit's /run/ferry is the host's), FERRYD_ARGS empty.
  std::string exec_start = unit_value(unit, "ExecStart");
  exec_start = replaced(exec_start, "@CMAKE_INSTALL_FULL_BINDIR@",
                        std::filesystem::path(ferry::test::bin_path("ferryd")).parent_path());
  exec_start = replaced(exec_start, "/etc/ferry/%i.yaml", config);
  exec_start = replaced(exec_start, "%i", domain.name());
  exec_start = replaced(exec_start, "$FERRYD_ARGS", "");
  const std::vector<std::string> argv = words(exec_start);
  REQUIRE(argv.size() >= 2);
  CHECK(std::find(argv.begin(), argv.end(), "--foreground") != argv.end());

  std::fflush(nullptr);
  const pid_t main_pid = ::fork();
  if (main_pid == 0) {
    ferry::test::use_domain_env(domain);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  REQUIRE(main_pid > 0);
  CHECK(manager.expect("READY=1", 10s));
  CHECK(std::filesystem::exists(domain.runtime_dir() / (domain.name() + ".sock")));

  // ExecReload, with $MAINPID as systemd sets it.
  const auto reload =
      words(replaced(unit_value(unit, "ExecReload"), "$MAINPID", std::to_string(main_pid)));
  REQUIRE_FALSE(reload.empty());
  CHECK(run(reload) == 0);
  CHECK(manager.expect("RELOADING=1", 5s));
  CHECK(manager.expect("READY=1", 5s));  // the reload is done

  REQUIRE(::kill(main_pid, SIGTERM) == 0);
  CHECK(manager.expect("STOPPING=1", 5s));
  CHECK(ferry::test::wait_exit(main_pid, 5s) == 0);
}

TEST_CASE(
    "ferryd's log level: FERRY_LOG sets it, --log-level wins over it, an unknown one exits 2") {
  TestDomain domain;
  ::setenv("FERRY_LOG", "debug", 1);
  {
    Daemon daemon(domain, kConfig);
    ferry::test::use_domain_env(domain);
    { ferry::Node visitor{"visitor"}; }
    CHECK(eventually(
        [&] { return daemon.log().find("client connected: pid") != std::string::npos; }));
    CHECK(daemon.stop() == 0);
  }
  {
    Daemon daemon(domain, kConfig, {"--log-level", "warn"});
    { ferry::Node visitor{"visitor"}; }
    CHECK(daemon.stop() == 0);
    const std::string log = daemon.log();
    // This start's lines: after the last one of the debug run before.
    const std::string mine = log.substr(log.rfind("ferryd stopped") + 1);
    CHECK(mine.find("client connected") == std::string::npos);
    CHECK(mine.find("[info]") == std::string::npos);
    CHECK(mine.find("[debug]") == std::string::npos);
  }
  ::setenv("FERRY_LOG", "chatty", 1);
  const auto refused = ferry::test::run_program(
      domain, {ferry::test::bin_path("ferryd"), "--config",
               (domain.runtime_dir() / "ferry.yaml").string(), "--foreground"});
  ::unsetenv("FERRY_LOG");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("unknown log level 'chatty'") != std::string::npos);
}
