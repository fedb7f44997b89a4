// ferryd's loop driven in-process, one poll_once() at a time, on a fake
// clock: a node with a port that stops beating is declared dead the turn the
// clock passes its timeout, and not a turn before; no sleeps.
#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "daemon_io.hpp"
#include "ferry/config/load.hpp"
#include "ferry/discovery/paths.hpp"
#include "ferry/discovery/protocol.hpp"
#include "ferry/discovery/socket.hpp"
#include "test_domain.hpp"

using namespace ferry::discovery;
using namespace std::chrono_literals;
using ferry::test::TestDomain;

namespace {

constexpr std::uint32_t kTimeoutMs = 1000;

// A client speaking the protocol by hand, so that this thread can run the
// daemon between its requests.
struct RawClient {
  UnixSeqpacketSocket socket;
  int lock_fd = -1;  // the node lock ferryd sends with the Welcome, kept as a node keeps it

  RawClient(UnixSeqpacketSocket s) : socket(std::move(s)) {}
  ~RawClient() {
    if (lock_fd >= 0) ::close(lock_fd);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send(const Message& message, std::uint32_t request_id) {
    auto bytes = encode(message, request_id);
    REQUIRE(bytes.has_value());
    REQUIRE(socket.send(*bytes).has_value());
  }
  // The next message, which must have come already (the daemon ran).
  Message receive() {
    std::array<std::byte, kMaxMessageSize> buffer{};
    int attached = -1;
    auto size = socket.recv(buffer, 0ms, &attached);
    REQUIRE(size.has_value());
    if (attached >= 0) {
      if (lock_fd >= 0) ::close(lock_fd);
      lock_fd = attached;
    }
    auto envelope = decode(std::span<const std::byte>(buffer.data(), *size));
    REQUIRE(envelope.has_value());
    return envelope->message;
  }
  [[nodiscard]] bool nothing_waiting() {
    std::array<std::byte, kMaxMessageSize> buffer{};
    auto size = socket.recv(buffer, 0ms);
    return !size && size.error().code == SocketErrorCode::Timeout;
  }
};

}  // namespace

TEST_CASE(
    "ferryd's poll_once declares a silent node dead when the injected clock passes its timeout") {
  TestDomain domain;
  const auto config = ferry::config::load_string(
      "liveness: { heartbeat_ms: 100, timeout_ms: " + std::to_string(kTimeoutMs) + " }\n");
  const auto found = socket_path(domain.name(), domain.runtime_dir());
  REQUIRE(found.has_value());
  const std::filesystem::path sock = *found;
  auto listener = UnixSeqpacketSocket::listen(sock);
  REQUIRE(listener.has_value());
  std::uint64_t now = 1'000'000;
  DaemonOptions options;
  options.domain = domain.name();
  options.socket_path = sock.string();
  options.clock = [&now] { return now; };
  DaemonIo daemon(options, config, std::move(*listener));
  REQUIRE(daemon.start().has_value());

  auto connected = UnixSeqpacketSocket::connect(sock, 1s);
  REQUIRE(connected.has_value());
  RawClient client{std::move(*connected)};
  CHECK_FALSE(daemon.poll_once(0ms).has_value());  // accepts
  client.send(Hello{kProtocolVersion, "frozen", static_cast<std::int32_t>(::getpid()), 0}, 1);
  CHECK_FALSE(daemon.poll_once(0ms).has_value());
  const auto welcome = std::get<Welcome>(client.receive());
  CHECK(client.lock_fd >= 0);
  const auto owner = static_cast<std::uint16_t>(welcome.node_slot);
  CHECK(daemon.core().liveness().state(owner) == NodeState::Alive);

  CreatePublisher publisher;
  publisher.topic = "frozen_topic";
  publisher.type_name = "bytes";
  publisher.type_size = 1;
  publisher.type_align = 1;
  client.send(publisher, 2);
  CHECK_FALSE(daemon.poll_once(0ms).has_value());
  REQUIRE(std::holds_alternative<PortCreated>(client.receive()));

  // The node never beats: its beat is the Welcome's `now`.
  now += kTimeoutMs;
  CHECK_FALSE(daemon.poll_once(0ms).has_value());
  CHECK(client.nothing_waiting());
  CHECK(daemon.core().liveness().state(owner) == NodeState::Alive);

  now += 1;
  CHECK_FALSE(daemon.poll_once(0ms).has_value());
  const auto expired = std::get<Error>(client.receive());
  CHECK(expired.code == RefusalCode::NodeExpired);
  CHECK(expired.message.find("1001 ms without a heartbeat") != std::string::npos);
  // This process lives (it holds its node lock): reclaimed, not free.
  CHECK(daemon.core().liveness().state(owner) == NodeState::Reclaiming);
  // The lock let go, the process counts as gone: the slot is freed.
  ::close(client.lock_fd);
  client.lock_fd = -1;
  now += 1000;
  CHECK_FALSE(daemon.poll_once(0ms).has_value());
  CHECK(daemon.core().liveness().state(owner) == NodeState::Free);
}
