// A node's lock as ferryd hands it over: taken by one process, sent with a
// datagram, adopted by the other, and refused when it is not what it claims.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/protocol.hpp"
#include "ferry/discovery/socket.hpp"
#include "test_domain.hpp"

using namespace ferry::discovery;
using namespace std::chrono_literals;

namespace {

// Sends `fd` over a socket pair and returns the descriptor that arrived.
int pass_over_socket(int fd) {
  auto pair = UnixSeqpacketSocket::pair();
  REQUIRE(pair.has_value());
  const std::vector<std::byte> datagram(4);
  REQUIRE(pair->first.send(datagram, 0ms, fd).has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  int received = -1;
  REQUIRE(pair->second.recv(buffer, 1s, &received).has_value());
  REQUIRE(received >= 0);
  return received;
}

}  // namespace

TEST_CASE("a lock handed over stays held after its taker closes its own descriptor") {
  ferry::test::TestDomain domain;
  const auto path = node_lock_path(domain.name(), 7, domain.runtime_dir());
  int received = -1;
  {
    auto taken = NodeLock::take(domain.name(), 7, domain.runtime_dir());
    REQUIRE(taken.has_value());
    received = pass_over_socket(taken->fd());
  }  // the taker's descriptor closes here
  auto adopted = NodeLock::adopt(received, path);
  REQUIRE(adopted.has_value());
  CHECK(probe_node_lock(path) == NodeLockState::Held);
  *adopted = NodeLock{};
  CHECK(probe_node_lock(path) == NodeLockState::Free);
  remove_node_lock(path);
}

TEST_CASE("a lock that is not the named file, or is held through another file, is refused") {
  ferry::test::TestDomain domain;
  const auto path = node_lock_path(domain.name(), 8, domain.runtime_dir());
  auto held = NodeLock::take(domain.name(), 8, domain.runtime_dir());
  REQUIRE(held.has_value());

  const auto other = domain.runtime_dir() / "not-a-lock";
  const int stranger = ::open(other.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(stranger >= 0);
  auto refused = NodeLock::adopt(stranger, path);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error() == "ferryd sent a node lock that is not '" + path.string() +
                               "': what came is not the file of that name");
  ::unlink(other.c_str());

  // The named file itself, opened anew: its lock is held through another open file.
  const int second = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(second >= 0);
  refused = NodeLock::adopt(second, path);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().ends_with("': another process holds its lock"));
  CHECK(probe_node_lock(path) == NodeLockState::Held);
  *held = NodeLock{};
  remove_node_lock(path);
}
