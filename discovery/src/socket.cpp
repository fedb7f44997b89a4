#include "ferry/discovery/socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "text.hpp"

namespace ferry::discovery {

namespace {

using Clock = std::chrono::steady_clock;
using Millis = UnixSeqpacketSocket::Millis;

// One non-blocking send, with `attached_fd` (>= 0) as SCM_RIGHTS.
ssize_t send_datagram(int fd, std::span<const std::byte> datagram, int attached_fd) {
  constexpr int kFlags = MSG_NOSIGNAL | MSG_DONTWAIT;
  if (attached_fd < 0) return ::send(fd, datagram.data(), datagram.size(), kFlags);
  iovec iov{const_cast<std::byte*>(datagram.data()), datagram.size()};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &attached_fd, sizeof(int));
  return ::sendmsg(fd, &msg, kFlags);
}

// One non-blocking receive (MSG_TRUNC: the datagram's real length). With
// `attached_fd`, keeps the first descriptor that came along and closes the
// rest: a peer cannot make us hold descriptors we did not ask for.
ssize_t recv_datagram(int fd, std::span<std::byte> buffer, int* attached_fd) {
  constexpr int kFlags = MSG_TRUNC | MSG_DONTWAIT;
  if (attached_fd == nullptr) return ::recv(fd, buffer.data(), buffer.size(), kFlags);
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4)> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(fd, &msg, kFlags | MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*attached_fd < 0) {
        *attached_fd = received;
      } else {
        ::close(received);
      }
    }
  }
  return n;
}

SocketError sys_error(std::string_view what, int err) {
  return SocketError{SocketErrorCode::System, err, text::cat(what, ": ", std::strerror(err))};
}

// Closes an fd we still own on an error path.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept { return std::exchange(fd, -1); }
};

std::expected<sockaddr_un, SocketError> make_address(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& native = path.native();
  if (native.empty() || native.size() >= sizeof(addr.sun_path)) {
    return std::unexpected(SocketError{SocketErrorCode::PathTooLong, 0,
                                       text::cat("socket path '", native, "' is ", native.size(),
                                                 " bytes; a Unix socket path must be 1 to ",
                                                 sizeof(addr.sun_path) - 1, " bytes")});
  }
  std::memcpy(addr.sun_path, native.c_str(), native.size() + 1);
  return addr;
}

int new_socket() { return ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }

int connect_to(int fd, const sockaddr_un& addr) {
  while (true) {
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

// Deadline arithmetic that survives Millis::max() ("wait for ever").
std::optional<Clock::time_point> deadline_after(Millis timeout) {
  if (timeout >= std::chrono::hours(24 * 365)) return std::nullopt;
  return Clock::now() + timeout;
}

// poll() for `events` until `deadline`; false on timeout.
std::expected<bool, SocketError> wait_for(int fd, short events,
                                          std::optional<Clock::time_point> deadline) {
  while (true) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<Millis>(*deadline - Clock::now());
      wait_ms =
          static_cast<int>(std::max<Millis::rep>(0, std::min<Millis::rep>(left.count(), 1 << 30)));
    }
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r > 0) return true;  // ready, or an error/hang-up that the next call reports
    if (r == 0) {
      if (!deadline || Clock::now() >= *deadline) return false;
      continue;
    }
    if (errno != EINTR) return std::unexpected(sys_error("poll", errno));
  }
}

std::string domain_of(const std::filesystem::path& path) { return path.stem().string(); }

SocketError already_served(const std::filesystem::path& path) {
  return SocketError{SocketErrorCode::AlreadyServed, 0,
                     text::cat("another ferryd is serving domain '", domain_of(path), "' on ",
                               path.string(), "; stop it first or choose another domain")};
}

}  // namespace

std::expected<ServerLock, SocketError> ServerLock::acquire(
    const std::filesystem::path& socket_path) {
  const std::string lock_path = socket_path.string() + ".lock";
  FdGuard lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)};
  if (lock.fd < 0) return std::unexpected(sys_error(text::cat("cannot open ", lock_path), errno));
  if (::flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return std::unexpected(already_served(socket_path));
    return std::unexpected(sys_error(text::cat("cannot lock ", lock_path), errno));
  }
  return ServerLock{lock.release()};
}

ServerLock::~ServerLock() { release(); }

ServerLock::ServerLock(ServerLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

ServerLock& ServerLock::operator=(ServerLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void ServerLock::release() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));  // closing the last descriptor releases the flock
}

std::expected<UnixSeqpacketSocket, SocketError> UnixSeqpacketSocket::listen(
    const std::filesystem::path& path, std::optional<gid_t> group, int backlog) {
  const auto addr = make_address(path);
  if (!addr) return std::unexpected(addr.error());
  const std::string shown = path.string();

  // The lock decides between servers starting at the same moment; the
  // connect() probe below then only has to tell a stale file from a live
  // server that predates the lock.
  auto lock = ServerLock::acquire(path);
  if (!lock) return std::unexpected(lock.error());

  FdGuard sock{new_socket()};
  if (sock.fd < 0) return std::unexpected(sys_error("socket(AF_UNIX, SOCK_SEQPACKET)", errno));

  // A few rounds: the stale file may be replaced or removed under our feet.
  for (int attempt = 0;; ++attempt) {
    if (::bind(sock.fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) == 0) break;
    if (errno != EADDRINUSE || attempt == 3) {
      return std::unexpected(sys_error(text::cat("cannot bind ", shown), errno));
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;  // gone meanwhile: bind again
    if (!S_ISSOCK(st.st_mode)) {
      return std::unexpected(SocketError{
          SocketErrorCode::NotASocket, 0,
          text::cat(shown, " exists and is not a socket; remove it or choose another domain")});
    }
    // Only a socket file that refuses connections is stale. A full backlog
    // (EAGAIN) means a live but busy server.
    FdGuard probe{new_socket()};
    if (probe.fd < 0) return std::unexpected(sys_error("socket(AF_UNIX, SOCK_SEQPACKET)", errno));
    const int err = connect_to(probe.fd, *addr);
    if (err == 0 || err == EAGAIN) return std::unexpected(already_served(path));
    if (err == ENOENT) continue;
    if (err != ECONNREFUSED) {
      return std::unexpected(sys_error(text::cat("cannot probe ", shown), err));
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return std::unexpected(sys_error(text::cat("cannot remove the stale socket ", shown), errno));
    }
  }

  // chown and chmod before listen(): until listen() nobody can connect, so
  // there is no window in which the socket is reachable with the umask's
  // mode, nor one in which it listens but is still closed to the group.
  if (group && ::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return std::unexpected(
        sys_error(text::cat("cannot give group ", *group, " access to ", shown), err));
  }
  const mode_t mode = group ? 0660 : 0600;
  if (::chmod(path.c_str(), mode) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return std::unexpected(
        sys_error(text::cat("cannot chmod ", group ? "0660 " : "0600 ", shown), err));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || ::listen(sock.fd, backlog) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return std::unexpected(sys_error(text::cat("cannot listen on ", shown), err));
  }

  UnixSeqpacketSocket result{sock.release()};
  result.lock_ = std::move(*lock);
  result.path_ = path;
  result.bound_dev_ = st.st_dev;
  result.bound_ino_ = st.st_ino;
  return result;
}

std::expected<UnixSeqpacketSocket, SocketError> UnixSeqpacketSocket::connect(
    const std::filesystem::path& path, Millis timeout) {
  const auto addr = make_address(path);
  if (!addr) return std::unexpected(addr.error());
  FdGuard sock{new_socket()};
  if (sock.fd < 0) return std::unexpected(sys_error("socket(AF_UNIX, SOCK_SEQPACKET)", errno));

  const auto deadline = deadline_after(timeout);
  while (true) {
    const int err = connect_to(sock.fd, *addr);
    if (err == 0) return UnixSeqpacketSocket{sock.release()};
    if (err == ENOENT || err == ECONNREFUSED) {
      return std::unexpected(
          SocketError{SocketErrorCode::NotRunning, err,
                      text::cat("nothing listens on ", path.string(), " (", std::strerror(err),
                                "); is ferryd running for this domain?")});
    }
    if (err != EAGAIN) {
      return std::unexpected(sys_error(text::cat("cannot connect to ", path.string()), err));
    }
    // The server's backlog is full: it is alive but slow. Try again shortly.
    if (deadline && Clock::now() >= *deadline) {
      return std::unexpected(
          SocketError{SocketErrorCode::Timeout, EAGAIN,
                      text::cat("the server on ", path.string(),
                                " did not accept the connection within ", timeout.count(), " ms")});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::expected<std::pair<UnixSeqpacketSocket, UnixSeqpacketSocket>, SocketError>
UnixSeqpacketSocket::pair() {
  int fds[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    return std::unexpected(sys_error("socketpair(AF_UNIX, SOCK_SEQPACKET)", errno));
  }
  return std::pair{UnixSeqpacketSocket{fds[0]}, UnixSeqpacketSocket{fds[1]}};
}

UnixSeqpacketSocket::~UnixSeqpacketSocket() { close(); }

UnixSeqpacketSocket::UnixSeqpacketSocket(UnixSeqpacketSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      lock_(std::move(other.lock_)),
      path_(std::exchange(other.path_, {})),
      bound_dev_(other.bound_dev_),
      bound_ino_(other.bound_ino_) {}

UnixSeqpacketSocket& UnixSeqpacketSocket::operator=(UnixSeqpacketSocket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    lock_ = std::move(other.lock_);
    path_ = std::exchange(other.path_, {});
    bound_dev_ = other.bound_dev_;
    bound_ino_ = other.bound_ino_;
  }
  return *this;
}

void UnixSeqpacketSocket::close() noexcept {
  if (!path_.empty()) {
    // Remove the socket file only if it is still ours: a successor may have
    // replaced it after we were presumed dead.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == bound_dev_ && st.st_ino == bound_ino_) {
      ::unlink(path_.c_str());
    }
    path_.clear();
  }
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  lock_.release();
}

std::expected<UnixSeqpacketSocket, SocketError> UnixSeqpacketSocket::accept() {
  while (true) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return UnixSeqpacketSocket{fd};
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return std::unexpected(
          SocketError{SocketErrorCode::Timeout, errno, "no connection is waiting"});
    }
    return std::unexpected(sys_error("accept", errno));
  }
}

std::expected<void, SocketError> UnixSeqpacketSocket::send(std::span<const std::byte> datagram,
                                                           Millis timeout, int attached_fd) {
  if (datagram.size() > kMaxMessageSize) {
    return std::unexpected(
        SocketError{SocketErrorCode::Oversized, 0,
                    text::cat("a datagram of ", datagram.size(), " bytes exceeds the ",
                              kMaxMessageSize, "-byte message limit")});
  }
  const auto deadline = deadline_after(timeout);
  while (true) {
    const ssize_t n = send_datagram(fd_, datagram, attached_fd);
    if (n >= 0) return {};  // SOCK_SEQPACKET sends whole datagrams or nothing
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) {
      return std::unexpected(
          SocketError{SocketErrorCode::Closed, err, "the peer closed the connection"});
    }
    if (err != EAGAIN && err != EWOULDBLOCK) return std::unexpected(sys_error("send", err));
    // The peer is not reading: wait for room, at most until the deadline.
    const auto ready = wait_for(fd_, POLLOUT, deadline);
    if (!ready) return std::unexpected(ready.error());
    if (!*ready) {
      return std::unexpected(
          SocketError{SocketErrorCode::Timeout, EAGAIN,
                      text::cat("the peer's queue stayed full for ", timeout.count(), " ms")});
    }
  }
}

std::expected<std::size_t, SocketError> UnixSeqpacketSocket::recv(std::span<std::byte> buffer,
                                                                  Millis timeout,
                                                                  int* attached_fd) {
  if (attached_fd != nullptr) *attached_fd = -1;
  const auto deadline = deadline_after(timeout);
  bool reset_reported = false;
  while (true) {
    // MSG_TRUNC: the return value is the datagram's real length, so an
    // oversized one is detected (and dropped) rather than silently cut.
    const ssize_t n = recv_datagram(fd_, buffer, attached_fd);
    if (n > 0) {
      const auto size = static_cast<std::size_t>(n);
      if (size > buffer.size()) {
        if (attached_fd != nullptr && *attached_fd >= 0) {
          ::close(*attached_fd);
          *attached_fd = -1;
        }
        return std::unexpected(
            SocketError{SocketErrorCode::Oversized, EMSGSIZE,
                        text::cat("a datagram of ", size, " bytes arrived, larger than the ",
                                  buffer.size(), "-byte buffer; it was dropped")});
      }
      return size;
    }
    // The protocol never sends an empty datagram, so 0 is the peer closing.
    if (n == 0) {
      return std::unexpected(
          SocketError{SocketErrorCode::Closed, 0, "the peer closed the connection"});
    }
    const int err = errno;
    if (err == EINTR) continue;
    // A peer that closed with our datagrams unread leaves ECONNRESET, which
    // Linux reports (once) ahead of the datagrams it sent before closing:
    // read on, so that its last words (ferryd's refusal of a client) arrive.
    if (err == ECONNRESET && !reset_reported) {
      reset_reported = true;
      continue;
    }
    if (err == ECONNRESET || err == ENOTCONN) {
      return std::unexpected(
          SocketError{SocketErrorCode::Closed, err, "the peer closed the connection"});
    }
    if (err != EAGAIN && err != EWOULDBLOCK) return std::unexpected(sys_error("recv", err));
    const auto ready = wait_for(fd_, POLLIN, deadline);
    if (!ready) return std::unexpected(ready.error());
    if (!*ready) {
      return std::unexpected(SocketError{SocketErrorCode::Timeout, EAGAIN,
                                         text::cat("no message within ", timeout.count(), " ms")});
    }
  }
}

std::expected<bool, SocketError> UnixSeqpacketSocket::wait_readable(Millis timeout) {
  return wait_for(fd_, POLLIN, deadline_after(timeout));
}

std::expected<PeerCredentials, SocketError> UnixSeqpacketSocket::peer_credentials() const {
  ucred cred{};
  socklen_t length = sizeof(cred);
  if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) {
    return std::unexpected(sys_error("getsockopt(SO_PEERCRED)", errno));
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

}  // namespace ferry::discovery
