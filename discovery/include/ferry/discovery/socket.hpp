#pragma once
// RAII AF_UNIX SOCK_SEQPACKET socket: one datagram is one message, the kernel
// keeps boundaries and order, and a closed peer is seen at once. Every socket
// is non-blocking and close-on-exec; calls that can wait take a timeout and
// use poll(), so the daemon's event loop and a client's blocking call share
// one implementation.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "ferry/discovery/limits.hpp"

namespace ferry::discovery {

enum class SocketErrorCode : std::uint8_t {
  PathTooLong,    // the path does not fit sockaddr_un
  AlreadyServed,  // listen: a live server answers on the path
  NotASocket,     // listen: the path exists and is not a socket
  NotRunning,     // connect: nobody listens on the path
  Timeout,        // nothing happened within the timeout
  Closed,         // the peer closed the connection
  Oversized,      // recv: a datagram larger than the buffer / send: larger than kMaxMessageSize
  System,         // a system call failed; `sys_errno` says why
};

struct SocketError {
  SocketErrorCode code;
  int sys_errno = 0;    // errno of the failed call, 0 when none
  std::string message;  // one sentence: what failed, on which path, strerror
};

// The peer process as the kernel saw it when it connected.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The flock()ed `<socket path>.lock` that a listening server holds for as
// long as it lives. Holding it proves that no server (no ferryd) serves the
// path, so a tool may remove what a dead one left (`ferry clean`).
class ServerLock {
 public:
  // Takes the lock without waiting, creating the lock file (mode 0600) when
  // needed; already_served when a live server holds it.
  [[nodiscard]] static std::expected<ServerLock, SocketError> acquire(
      const std::filesystem::path& socket_path);

  ServerLock() noexcept = default;
  ~ServerLock();
  ServerLock(ServerLock&& other) noexcept;
  ServerLock& operator=(ServerLock&& other) noexcept;
  ServerLock(const ServerLock&) = delete;
  ServerLock& operator=(const ServerLock&) = delete;

  [[nodiscard]] bool is_held() const noexcept { return fd_ >= 0; }
  // Releases the lock (the lock file stays).
  void release() noexcept;

 private:
  explicit ServerLock(int fd) noexcept : fd_(fd) {}
  int fd_ = -1;
};

class UnixSeqpacketSocket {
 public:
  using Millis = std::chrono::milliseconds;

  // Binds and listens on `path`: mode 0600, or 0660 and group `group` when
  // one is given (set before listen(), so nobody the group admits finds
  // the socket listening and still closed to them). A socket file left by a
  // dead server is replaced; a live server (one that accepts connections,
  // or holds `<path>.lock`) gives already_served. The lock file stays
  // beside the socket for as long as this socket lives and is flock()ed,
  // so two servers starting together cannot both win.
  [[nodiscard]] static std::expected<UnixSeqpacketSocket, SocketError> listen(
      const std::filesystem::path& path, std::optional<gid_t> group = std::nullopt,
      int backlog = 128);

  // Connects to `path`, retrying while the server's backlog is full, up to
  // `timeout`.
  [[nodiscard]] static std::expected<UnixSeqpacketSocket, SocketError> connect(
      const std::filesystem::path& path, Millis timeout);

  // A connected pair (socketpair), for tests and in-process use.
  [[nodiscard]] static std::expected<std::pair<UnixSeqpacketSocket, UnixSeqpacketSocket>,
                                     SocketError>
  pair();

  UnixSeqpacketSocket() noexcept = default;
  ~UnixSeqpacketSocket();
  UnixSeqpacketSocket(UnixSeqpacketSocket&& other) noexcept;
  UnixSeqpacketSocket& operator=(UnixSeqpacketSocket&& other) noexcept;
  UnixSeqpacketSocket(const UnixSeqpacketSocket&) = delete;
  UnixSeqpacketSocket& operator=(const UnixSeqpacketSocket&) = delete;

  // Listening socket: the next pending connection, or timeout when none is
  // waiting (never blocks).
  [[nodiscard]] std::expected<UnixSeqpacketSocket, SocketError> accept();

  // Sends one datagram (MSG_NOSIGNAL: a dead peer is `closed`, never
  // SIGPIPE). When the peer's queue is full, waits up to `timeout` for room
  // (0: do not wait), then gives timeout. `attached_fd` >= 0 travels with
  // the datagram (SCM_RIGHTS): the peer gets its own descriptor of the same
  // open file; ours stays ours to close.
  [[nodiscard]] std::expected<void, SocketError> send(std::span<const std::byte> datagram,
                                                      Millis timeout = Millis{0},
                                                      int attached_fd = -1);

  // Receives one datagram into `buffer`; returns its size. Waits up to
  // `timeout` (0: do not wait). A datagram larger than `buffer` is consumed
  // and reported as oversized; a closed peer as closed. With `attached_fd`,
  // a descriptor sent with the datagram is stored there (close-on-exec; -1
  // when none came, and any beyond the first is closed); without it the
  // kernel closes whatever came attached.
  [[nodiscard]] std::expected<std::size_t, SocketError> recv(std::span<std::byte> buffer,
                                                             Millis timeout = Millis{0},
                                                             int* attached_fd = nullptr);

  // Waits up to `timeout` until a datagram (or a hang-up) can be read:
  // false on timeout. Unlike recv, a timeout builds no error (no allocation:
  // a node's runtime thread polls with it while its topology is steady).
  [[nodiscard]] std::expected<bool, SocketError> wait_readable(Millis timeout);

  // SO_PEERCRED of a connected socket.
  [[nodiscard]] std::expected<PeerCredentials, SocketError> peer_credentials() const;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  // The bound path of a listening socket, empty otherwise.
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // Closes the socket; a listening socket also removes its socket file
  // (when it is still the one it bound) and releases its lock.
  void close() noexcept;

 private:
  explicit UnixSeqpacketSocket(int fd) noexcept : fd_(fd) {}

  int fd_ = -1;
  ServerLock lock_;             // listening socket: the flock()ed <path>.lock
  std::filesystem::path path_;  // listening socket: the bound path
  dev_t bound_dev_ = 0;         // the socket file we created, to remove only that one
  ino_t bound_ino_ = 0;
};

}  // namespace ferry::discovery
