// ferryd under systemd (docs/operations/systemd.md), without systemd: the test plays the
// service manager. It binds the datagram socket that NOTIFY_SOCKET names and
// reads what ferryd --foreground sends there (the sd_notify protocol):
// READY=1 once the socket listens, WATCHDOG=1 at half of WATCHDOG_USEC,
// STOPPING=1 on SIGTERM.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "daemon_fixture.hpp"
#include "pubsub_util.hpp"
#include "test_domain.hpp"

using namespace std::chrono_literals;
using ferry::test::Daemon;
using ferry::test::TestDomain;

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
