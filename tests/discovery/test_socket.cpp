// UnixSeqpacketSocket within one process: datagram semantics, timeouts,
// oversize detection, listen/connect/accept and the socket file's life.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "ferry/discovery/protocol.hpp"
#include "ferry/discovery/socket.hpp"
#include "test_domain.hpp"

using namespace ferry::discovery;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using Socket = UnixSeqpacketSocket;

namespace {

std::vector<std::byte> bytes(std::size_t n, unsigned char fill) {
  return std::vector<std::byte>(n, static_cast<std::byte>(fill));
}

std::pair<Socket, Socket> make_pair() {
  auto p = Socket::pair();
  REQUIRE(p.has_value());
  return std::move(*p);
}

fs::path sock_path(const ferry::test::TestDomain& d) {
  return d.runtime_dir() / (d.name() + ".sock");
}

// A socket file nobody listens on, as a crashed server leaves it.
void make_stale_socket(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
}

}  // namespace

TEST_CASE("datagrams keep their boundaries and order") {
  auto [a, b] = make_pair();
  REQUIRE(a.send(bytes(3, 1)).has_value());
  REQUIRE(a.send(bytes(100, 2)).has_value());
  REQUIRE(a.send(bytes(1, 3)).has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  CHECK(b.recv(buffer, 1s).value() == 3);
  CHECK(b.recv(buffer, 1s).value() == 100);
  CHECK(buffer[99] == std::byte{2});
  CHECK(b.recv(buffer, 1s).value() == 1);
}

namespace {
// The number of descriptors this process has open.
std::size_t open_fds() {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}));
}
}  // namespace

TEST_CASE("a descriptor sent with a datagram arrives as the same open file, and only when asked") {
  auto [a, b] = make_pair();
  const int file = ::memfd_create("ferry-test-fd", MFD_CLOEXEC);
  REQUIRE(file >= 0);
  struct stat sent {};
  REQUIRE(::fstat(file, &sent) == 0);
  std::vector<std::byte> buffer(kMaxMessageSize);

  REQUIRE(a.send(bytes(5, 7), 0ms, file).has_value());
  int received = -2;
  CHECK(b.recv(buffer, 1s, &received).value() == 5);
  REQUIRE(received >= 0);
  struct stat got {};
  REQUIRE(::fstat(received, &got) == 0);
  CHECK(got.st_ino == sent.st_ino);
  CHECK((::fcntl(received, F_GETFD) & FD_CLOEXEC) != 0);
  ::close(received);

  // A datagram without one: -1. A receiver that did not ask: the kernel
  // closes what came, nothing stays open here.
  REQUIRE(a.send(bytes(2, 1)).has_value());
  CHECK(b.recv(buffer, 1s, &received).value() == 2);
  CHECK(received == -1);
  const std::size_t before = open_fds();
  for (int i = 0; i < 10; ++i) REQUIRE(a.send(bytes(3, 2), 0ms, file).has_value());
  for (int i = 0; i < 10; ++i) CHECK(b.recv(buffer, 1s).value() == 3);
  CHECK(open_fds() == before);
  ::close(file);
}

TEST_CASE("a peer that sends several descriptors leaves us holding only the first") {
  auto [a, b] = make_pair();
  int files[3];
  for (int& f : files) {
    f = ::memfd_create("ferry-test-fd", MFD_CLOEXEC);
    REQUIRE(f >= 0);
  }
  std::byte payload[4]{};
  iovec iov{payload, sizeof payload};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof files)]{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof files);
  std::memcpy(CMSG_DATA(cmsg), files, sizeof files);
  REQUIRE(::sendmsg(a.fd(), &msg, 0) == static_cast<ssize_t>(sizeof payload));
  for (const int f : files) ::close(f);

  const std::size_t before = open_fds();
  std::vector<std::byte> buffer(kMaxMessageSize);
  int received = -1;
  CHECK(b.recv(buffer, 1s, &received).value() == sizeof payload);
  CHECK(received >= 0);
  CHECK(open_fds() == before + 1);
  ::close(received);
}

TEST_CASE("a full-size message goes through, a larger one is refused before sending") {
  auto [a, b] = make_pair();
  REQUIRE(a.send(bytes(kMaxMessageSize, 7)).has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  CHECK(b.recv(buffer, 1s).value() == kMaxMessageSize);
  const auto too_big = a.send(bytes(kMaxMessageSize + 1, 7));
  REQUIRE_FALSE(too_big.has_value());
  CHECK(too_big.error().code == SocketErrorCode::Oversized);
}

TEST_CASE("recv gives timeout when nothing arrives, after about the timeout") {
  auto [a, b] = make_pair();
  std::vector<std::byte> buffer(64);
  CHECK(b.recv(buffer).error().code == SocketErrorCode::Timeout);  // 0: just check
  const auto start = std::chrono::steady_clock::now();
  const auto r = b.recv(buffer, 50ms);
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == SocketErrorCode::Timeout);
  CHECK(waited >= 45ms);
  CHECK(waited < 2s);
}

TEST_CASE("an oversized datagram is detected and dropped, the next one is intact") {
  auto [a, b] = make_pair();
  REQUIRE(a.send(bytes(1000, 1)).has_value());
  REQUIRE(a.send(bytes(10, 2)).has_value());
  std::vector<std::byte> small(100);
  const auto r = b.recv(small, 1s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == SocketErrorCode::Oversized);
  CHECK(r.error().message.find("1000 bytes") != std::string::npos);
  CHECK(b.recv(small, 1s).value() == 10);
  CHECK(small[0] == std::byte{2});
}

TEST_CASE("a closed peer is reported as closed, on recv and on send, without SIGPIPE") {
  auto [a, b] = make_pair();
  REQUIRE(a.send(bytes(5, 1)).has_value());
  a.close();
  CHECK_FALSE(a.is_open());
  std::vector<std::byte> buffer(64);
  CHECK(b.recv(buffer, 1s).value() == 5);  // what was sent before the close still arrives
  CHECK(b.recv(buffer, 1s).error().code == SocketErrorCode::Closed);
  const auto sent = b.send(bytes(5, 1));
  REQUIRE_FALSE(sent.has_value());
  CHECK(sent.error().code == SocketErrorCode::Closed);
}

TEST_CASE("send to a peer that does not read times out instead of blocking") {
  auto [a, b] = make_pair();
  int sent = 0;
  while (true) {
    const auto r = a.send(bytes(4096, 1));
    if (!r) {
      CHECK(r.error().code == SocketErrorCode::Timeout);
      break;
    }
    REQUIRE(++sent < 100000);
  }
  CHECK(sent > 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK(a.send(bytes(4096, 1), 30ms).error().code == SocketErrorCode::Timeout);
  CHECK(std::chrono::steady_clock::now() - start >= 25ms);
  // Once the reader drains, sending works again.
  std::vector<std::byte> buffer(kMaxMessageSize);
  for (int i = 0; i < sent; ++i) REQUIRE(b.recv(buffer, 1s).has_value());
  CHECK(a.send(bytes(4096, 1), 1s).has_value());
}

TEST_CASE("a message goes through encode, send, recv and decode") {
  auto [a, b] = make_pair();
  const Message hello = Hello{kProtocolVersion, "planner", static_cast<std::int32_t>(::getpid())};
  REQUIRE(a.send(encode(hello, 42).value()).has_value());
  std::vector<std::byte> buffer(kMaxMessageSize);
  const auto n = b.recv(buffer, 1s);
  REQUIRE(n.has_value());
  const auto envelope = decode(std::span(buffer).first(*n));
  REQUIRE(envelope.has_value());
  CHECK(envelope->request_id == 42);
  CHECK(envelope->message == hello);
}

TEST_CASE(
    "listen, connect and accept; the socket file is 0600; every fd is CLOEXEC and non-blocking") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  auto server = Socket::listen(path);
  REQUIRE_MESSAGE(server.has_value(), server.error().message);
  CHECK(server->path() == path);

  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);

  CHECK(server->accept().error().code == SocketErrorCode::Timeout);  // nobody yet
  auto client = Socket::connect(path, 1s);
  REQUIRE_MESSAGE(client.has_value(), client.error().message);
  auto conn = server->accept();
  REQUIRE(conn.has_value());

  for (const Socket* s : {&*server, &*client, &*conn}) {
    CHECK((::fcntl(s->fd(), F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(s->fd(), F_GETFL) & O_NONBLOCK) != 0);
  }

  const auto cred = conn->peer_credentials();
  REQUIRE(cred.has_value());
  CHECK(cred->pid == ::getpid());
  CHECK(cred->uid == ::getuid());
  CHECK(cred->gid == ::getgid());

  REQUIRE(client->send(bytes(8, 9)).has_value());
  std::vector<std::byte> buffer(64);
  CHECK(conn->recv(buffer, 1s).value() == 8);
}

TEST_CASE("a second listener on a live socket is refused with a clear message") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  auto first = Socket::listen(path);
  REQUIRE(first.has_value());
  const auto second = Socket::listen(path);
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == SocketErrorCode::AlreadyServed);
  CHECK(second.error().message == "another ferryd is serving domain '" + domain.name() + "' on " +
                                      path.string() + "; stop it first or choose another domain");
  CHECK(Socket::connect(path, 1s).has_value());  // the first one still serves
}

TEST_CASE("a stale socket file is replaced") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  make_stale_socket(path);
  REQUIRE(fs::exists(path));
  CHECK(Socket::connect(path, 100ms).error().code == SocketErrorCode::NotRunning);

  auto server = Socket::listen(path);
  REQUIRE_MESSAGE(server.has_value(), server.error().message);
  CHECK(Socket::connect(path, 1s).has_value());
}

TEST_CASE("listen never removes something that is not a socket") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  std::ofstream{path} << "precious";
  const auto server = Socket::listen(path);
  REQUIRE_FALSE(server.has_value());
  CHECK(server.error().code == SocketErrorCode::NotASocket);
  CHECK(fs::file_size(path) == 8);
}

TEST_CASE("closing the listener removes its socket file, but not a successor's") {
  ferry::test::TestDomain domain;
  const fs::path path = sock_path(domain);
  {
    auto server = Socket::listen(path);
    REQUIRE(server.has_value());
    Socket moved = std::move(*server);  // the moved-to socket owns the file now
    CHECK(fs::exists(path));
  }
  CHECK_FALSE(fs::exists(path));

  auto server = Socket::listen(path);
  REQUIRE(server.has_value());
  fs::remove(path);  // someone replaced the file (e.g. a successor after a presumed death)
  make_stale_socket(path);
  server->close();
  CHECK(fs::exists(path));
}

TEST_CASE("connect to a path nobody serves says so") {
  ferry::test::TestDomain domain;
  const auto client = Socket::connect(sock_path(domain), 100ms);
  REQUIRE_FALSE(client.has_value());
  CHECK(client.error().code == SocketErrorCode::NotRunning);
  CHECK(client.error().message.find("is ferryd running") != std::string::npos);
}

TEST_CASE("paths too long for sun_path are refused by listen and connect") {
  const fs::path long_path = "/tmp/" + std::string(200, 'x') + ".sock";
  CHECK(Socket::listen(long_path).error().code == SocketErrorCode::PathTooLong);
  CHECK(Socket::connect(long_path, 10ms).error().code == SocketErrorCode::PathTooLong);
}
