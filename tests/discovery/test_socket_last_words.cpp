// What a peer sent just before it closed reaches us even when it closed
// with our own datagrams unread (ferryd refusing a client answers its
// connection with an Error and closes before reading the client's Hello).
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "ferry/discovery/protocol.hpp"
#include "ferry/discovery/socket.hpp"

using ferry::discovery::kMaxMessageSize;
using ferry::discovery::SocketErrorCode;
using ferry::discovery::UnixSeqpacketSocket;
using namespace std::chrono_literals;

TEST_CASE("a datagram sent before the peer closed with ours unread is received, then the close") {
  auto pair = UnixSeqpacketSocket::pair();
  REQUIRE(pair.has_value());
  auto& [client, server] = *pair;
  const std::vector<std::byte> hello(8, std::byte{1});
  const std::vector<std::byte> refusal(24, std::byte{2});
  REQUIRE(client.send(hello).has_value());
  REQUIRE(server.send(refusal).has_value());
  {
    // The server closes without reading the hello: the kernel marks the
    // client's side reset (ECONNRESET) ahead of the refusal it queued.
    auto closing = std::move(server);
  }
  std::vector<std::byte> buffer(kMaxMessageSize);
  const auto last_words = client.recv(buffer, 1s);
  REQUIRE(last_words.has_value());
  CHECK(*last_words == refusal.size());
  CHECK(buffer[0] == std::byte{2});
  const auto after = client.recv(buffer, 1s);
  REQUIRE_FALSE(after.has_value());
  CHECK(after.error().code == SocketErrorCode::Closed);
}
