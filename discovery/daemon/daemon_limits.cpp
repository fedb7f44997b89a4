// DaemonIo against a client that takes too much: the connection limit and
// the file-descriptor back-off. (The Hello deadline and node slot reuse are
// the core's: daemon_core.cpp.)

#include <sys/epoll.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include "daemon_io.hpp"

namespace ferry::discovery {

namespace {
// Descriptors ferryd keeps for itself: epoll, signalfd, the listener and
// its lock, the log, shared-memory objects it opens while matching.
constexpr std::size_t kReservedFds = 32;
constexpr std::uint64_t kAcceptBackoffMs = 100;
}  // namespace

std::size_t connection_limit(const config::DaemonLimits& limits) {
  rlimit files{};
  std::size_t from_fds = 1024 - kReservedFds;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    from_fds = files.rlim_cur > kReservedFds + 1 ? files.rlim_cur - kReservedFds : 1;
  }
  if (limits.max_connections == 0) return from_fds;
  if (limits.max_connections > from_fds) {
    spdlog::warn(
        "limits: max_connections is {} but the file-descriptor limit leaves room for "
        "about {}; connections past that wait until others close",
        limits.max_connections, from_fds);
  }
  return limits.max_connections;
}

void DaemonIo::accept_clients() {
  while (true) {
    auto accepted = listener_.accept();
    if (!accepted) {
      const int err = accepted.error().sys_errno;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        pause_accepting(accepted.error().message);
      } else if (accepted.error().code != SocketErrorCode::Timeout) {
        core_.log_limited(options_.clock(), "accept", spdlog::level::warn, "accept failed: {}",
                          accepted.error().message);
      }
      return;  // no more pending connections
    }
    const int fd = accepted->fd();
    std::expected<Credentials, std::string> credentials = std::unexpected(std::string());
    if (auto cred = accepted->peer_credentials()) {
      credentials = Credentials{cred->pid, cred->uid, cred->gid};
    } else {
      credentials = std::unexpected(cred.error().message);
    }
    connections_.emplace(fd, Connection{std::move(*accepted), {}, false, false});
    // The core admits it, or refuses it with an error and closes it.
    apply(core_.connected(options_.clock(), fd, credentials));
    auto it = connections_.find(fd);
    if (it == connections_.end()) continue;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      spdlog::warn("cannot poll a new client: {}", std::strerror(errno));
      apply(core_.hung_up(fd, "ferryd could not poll its socket"));
      continue;
    }
    it->second.polled = true;
  }
}

void DaemonIo::pause_accepting(const std::string& why) {
  if (!accepting_) return;
  core_.log_limited(options_.clock(), "accept-fds", spdlog::level::warn,
                    "cannot accept connections ({}); pausing {} ms with {} clients connected", why,
                    kAcceptBackoffMs, connections_.size());
  epoll_event ev{};
  ev.events = 0;  // still registered, never reported: no busy loop on a full fd table
  ev.data.fd = kListenerTag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd(), &ev);
  accepting_ = false;
  resume_accepting_at_ = options_.clock() + kAcceptBackoffMs;
}

void DaemonIo::resume_accepting_when_due() {
  if (accepting_ || options_.clock() < resume_accepting_at_) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = kListenerTag;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd(), &ev);
  accepting_ = true;
}

}  // namespace ferry::discovery
