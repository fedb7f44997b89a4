// UnixSeqpacketSocket between real processes: credentials, a live server in
// another process, a server killed with SIGKILL, protocol messages both ways.
// Children report through their exit code (no doctest in a forked child).

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "ferry/discovery/protocol.hpp"
#include "ferry/discovery/socket.hpp"
#include "test_domain.hpp"

using namespace ferry::discovery;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Socket = UnixSeqpacketSocket;
using ferry::test::Child;

namespace {

fs::path sock_path(const ferry::test::TestDomain& d) {
  return d.runtime_dir() / (d.name() + ".sock");
}

// Waits until something accepts connections on `path`.
bool wait_until_served(const fs::path& path, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Socket::connect(path, 100ms)) return true;
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

// A server in a child process: answers each Ping with a Pong carrying the
// same request id, until its client closes.
int pong_server(const fs::path& path) {
  auto server = Socket::listen(path);
  if (!server) return 10;
  while (true) {
    auto conn = server->accept();
    if (!conn) {
      std::this_thread::sleep_for(1ms);
      continue;
    }
    std::vector<std::byte> buffer(kMaxMessageSize);
    while (true) {
      const auto n = conn->recv(buffer, 10s);
      if (!n) break;  // closed (a probe connection) or timeout: next client
      const auto in = decode(std::span(buffer).first(*n));
      if (!in || !std::holds_alternative<Ping>(in->message)) return 11;
      if (!conn->send(encode(Pong{}, in->request_id).value(), 1s)) return 12;
    }
  }
}

// The first connection to `server`, which does not block: accept() polled
// every millisecond for 5 s.
std::optional<Socket> accept_within_5s(Socket& server) {
  for (int i = 0; i < 5000; ++i) {
    if (auto c = server.accept()) return std::move(*c);
    std::this_thread::sleep_for(1ms);
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("SO_PEERCRED names the connecting child process") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  auto server = Socket::listen(path);
  REQUIRE(server.has_value());

  Child child{[&] {
    auto client = Socket::connect(path, 5s);
    if (!client) return 1;
    std::vector<std::byte> buffer(16);
    (void)client->recv(buffer, 10s);  // stay connected until the parent is done
    return 0;
  }};
  std::optional<Socket> conn = accept_within_5s(*server);
  REQUIRE(conn.has_value());
  const auto cred = conn->peer_credentials();
  REQUIRE(cred.has_value());
  CHECK(cred->pid == child.pid());
  CHECK(cred->uid == ::getuid());
  conn->close();
  CHECK(child.wait() == 0);
}

TEST_CASE("messages go both ways between processes") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  Child server{[&] { return pong_server(path); }};
  REQUIRE(wait_until_served(path));
  auto client = Socket::connect(path, 5s);
  REQUIRE(client.has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  for (std::uint32_t id = 1; id <= 100; ++id) {
    REQUIRE(client->send(encode(Ping{}, id).value(), 1s).has_value());
    const auto n = client->recv(buffer, 5s);
    REQUIRE_MESSAGE(n.has_value(), n.error().message);
    const auto reply = decode(std::span(buffer).first(*n));
    REQUIRE(reply.has_value());
    CHECK(reply->request_id == id);
    CHECK(std::holds_alternative<Pong>(reply->message));
  }
}

TEST_CASE("listen refuses while a server in another process is alive") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  Child server{[&] { return pong_server(path); }};
  REQUIRE(wait_until_served(path));
  const auto second = Socket::listen(path);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == SocketErrorCode::AlreadyServed);
  CHECK(second.error().message.find(domain.name()) != std::string::npos);
  CHECK(wait_until_served(path, 1s));  // the refused attempt did not disturb the server
}

TEST_CASE("listen refuses a live server that holds no lock (the connect probe)") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  // A bare listening socket, as a server predating the lock file would have.
  Child bare{[&] {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return 1;
    if (::listen(fd, 16) != 0) return 2;
    ::pause();
    return 0;
  }};
  REQUIRE(wait_until_served(path));
  const auto second = Socket::listen(path);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == SocketErrorCode::AlreadyServed);
  CHECK(fs::exists(path));
}

TEST_CASE("a server killed with SIGKILL leaves a stale socket that the next one replaces") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  Child server{[&] { return pong_server(path); }};
  REQUIRE(wait_until_served(path));
  auto client = Socket::connect(path, 5s);
  REQUIRE(client.has_value());

  server.kill(SIGKILL);
  CHECK(server.wait() == 128 + SIGKILL);
  CHECK(fs::exists(path));  // nobody cleaned up

  std::vector<std::byte> buffer(64);
  CHECK(client->recv(buffer, 5s).error().code == SocketErrorCode::Closed);

  auto next = Socket::listen(path);
  REQUIRE_MESSAGE(next.has_value(), next.error().message);
  CHECK(Socket::connect(path, 1s).has_value());
}

TEST_CASE("an oversized datagram from another process is detected") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  auto server = Socket::listen(path);
  REQUIRE(server.has_value());
  Child child{[&] {
    auto client = Socket::connect(path, 5s);
    if (!client) return 1;
    // Bypass the class's size check: raw send of a datagram over the limit.
    std::vector<char> big(kMaxMessageSize + 100, 'x');
    if (::send(client->fd(), big.data(), big.size(), MSG_NOSIGNAL) < 0) return 2;
    if (!client->send(encode(Ping{}, 1).value(), 1s)) return 3;
    std::vector<std::byte> buffer(16);
    (void)client->recv(buffer, 10s);
    return 0;
  }};
  std::optional<Socket> conn = accept_within_5s(*server);
  REQUIRE(conn.has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  const auto big = conn->recv(buffer, 5s);
  REQUIRE_FALSE(big.has_value());
  CHECK(big.error().code == SocketErrorCode::Oversized);
  const auto next = conn->recv(buffer, 5s);  // the stream goes on after the dropped datagram
  REQUIRE(next.has_value());
  CHECK(decode(std::span(buffer).first(*next)).has_value());
  conn->close();
  CHECK(child.wait() == 0);
}
