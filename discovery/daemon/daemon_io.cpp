// DaemonIo: the loop, the clients' sockets, and the core's effects carried
// out. Start and stop are in daemon_io_start.cpp, accepting in
// daemon_limits.cpp, SIGHUP's reading thread in daemon_reload.cpp.
#include "daemon_io.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery {

namespace {

// The group the domain's objects are given to: --group's, else ferryd's own.
gid_t object_group(const DaemonOptions& options) {
  return options.group ? options.group->gid : static_cast<gid_t>(-1);
}

DaemonCoreSettings core_settings(const DaemonOptions& options) {
  DaemonCoreSettings settings;
  settings.access = {options.domain, ::geteuid(), options.group};
  settings.config_source = options.config_source;
  settings.config_text = options.config_text;
  return settings;
}

}  // namespace

DaemonIo::DaemonIo(DaemonOptions options, const config::Config& config,
                   UnixSeqpacketSocket listener)
    : options_(std::move(options)),
      config_(config),
      listener_(std::move(listener)),
      shm_(options_.object_mode, object_group(options_)),
      reaper_(options_.domain, std::filesystem::path(options_.socket_path).parent_path()),
      core_(core_settings(options_), config, shm_, reaper_) {}

DaemonIo::~DaemonIo() {
  reload_job_.reset();  // joins a reading thread
  if (reload_fd_ >= 0) ::close(reload_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

int DaemonIo::run() {
  spdlog::info("ferryd serving domain '{}' on {}", options_.domain, options_.socket_path);
  // Wake at least every heartbeat period to beat and to check the nodes',
  // and often enough to pet systemd's watchdog.
  wait_ms_ = static_cast<int>(std::clamp<std::uint32_t>(config_.liveness.heartbeat_ms, 5, 1000));
  if (const auto pet = notifier_.tick_period()) {
    wait_ms_ = std::min(wait_ms_, static_cast<int>(std::min<std::int64_t>(pet->count(), 1000)));
  }
  notifier_.ready();  // the socket listens
  while (true) {
    if (const auto code = poll_once(std::chrono::milliseconds(wait_ms_))) return *code;
  }
}

std::optional<int> DaemonIo::poll_once(std::chrono::milliseconds timeout) {
  notifier_.tick();
  std::array<epoll_event, 64> events{};
  const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                             static_cast<int>(timeout.count()));
  if (n < 0) {
    if (errno == EINTR) return std::nullopt;
    spdlog::error("epoll_wait failed: {}", std::strerror(errno));
    shutdown();
    return 1;
  }
  apply(core_.tick(options_.clock()));
  resume_accepting_when_due();
  for (int i = 0; i < n; ++i) {
    const int tag = events[static_cast<std::size_t>(i)].data.fd;
    if (tag == kSignalTag) {
      signalfd_siginfo info{};
      [[maybe_unused]] const ssize_t r = ::read(signal_fd_, &info, sizeof info);
      if (info.ssi_signo == SIGHUP) {
        reload();
        continue;
      }
      spdlog::info("ferryd: signal {} received, shutting down", info.ssi_signo);
      shutdown();
      return 0;
    }
    if (tag == kListenerTag) {
      accept_clients();
      continue;
    }
    if (tag == kReloadTag) {
      finish_reload();
      continue;
    }
    auto it = connections_.find(tag);
    if (it != connections_.end()) {
      const std::uint32_t ready = events[static_cast<std::size_t>(i)].events;
      if ((ready & EPOLLOUT) != 0) flush_outbox(it->first, it->second);
      if ((ready & ~static_cast<std::uint32_t>(EPOLLOUT)) != 0) serve(it->first, it->second);
    }
    drop_broken();
  }
  return std::nullopt;
}

void DaemonIo::serve(ConnectionId id, Connection& connection) {
  std::array<std::byte, kMaxMessageSize> buffer;
  auto received = connection.socket.recv(buffer, std::chrono::milliseconds(0));
  if (!received) {
    if (received.error().code == SocketErrorCode::Timeout) return;  // spurious wake-up
    // A closed socket is the immediate death of the node.
    if (received.error().code != SocketErrorCode::Closed) {
      const DaemonCore::Who* who = core_.who(id);
      spdlog::warn("closing client pid {} ({}): {}", who ? who->pid : 0, who ? who->name : "",
                   received.error().message);
    }
    apply(core_.hung_up(id));
    return;
  }
  auto envelope = decode(std::span<const std::byte>(buffer.data(), *received));
  const std::uint64_t now = options_.clock();
  if (!envelope) {
    apply(core_.malformed(now, id, envelope.error().message));
    return;
  }
  apply(core_.received(now, id, envelope->request_id, envelope->message));
}

void DaemonIo::apply(const Effects& effects) {
  for (const Effect& effect : effects) {
    std::visit([this](const auto& e) { carry_out(e); }, effect);
  }
  drop_broken();
}

void DaemonIo::drop_broken() {
  while (true) {
    auto it = std::ranges::find_if(connections_, [](const auto& c) { return c.second.broken; });
    if (it == connections_.end()) return;
    // hung_up ends with the connection's CloseConnection: it goes here.
    for (const Effect& effect : core_.hung_up(it->first, "its socket failed")) {
      std::visit([this](const auto& e) { carry_out(e); }, effect);
    }
  }
}

void DaemonIo::carry_out(const SendMessage& message) {
  auto it = connections_.find(message.to);
  if (it == connections_.end()) return;
  // A new node's lock, taken here and handed over with the Welcome (ours
  // closes when `lock` goes).
  std::optional<NodeLock> lock;
  if (message.node_lock) {
    const auto group =
        options_.group ? std::optional<gid_t>(options_.group->gid) : std::optional<gid_t>();
    auto taken = NodeLock::take(options_.domain, *message.node_lock, reaper_.runtime_dir(), group);
    if (taken) {
      lock.emplace(std::move(*taken));
    } else {
      const DaemonCore::Who* who = core_.who(message.to);
      core_.log_limited(options_.clock(), "node-lock", spdlog::level::warn,
                        "node '{}' (pid {}) will be judged by its pid: {}", who ? who->name : "",
                        who ? who->pid : 0, taken.error());
    }
  }
  send(message.to, it->second, message.request_id, message.message, lock ? lock->fd() : -1);
}

void DaemonIo::carry_out(const CloseConnection& close) {
  auto it = connections_.find(close.connection);
  if (it == connections_.end()) return;
  if (it->second.polled) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->first, nullptr);
  connections_.erase(it);
}

void DaemonIo::carry_out(const ReclaimSlot& reclaim) {
  const auto reclaimed = pool_->pool().reclaim_owner(reclaim.owner, true);
  if (reclaimed.refs_dropped > 0) {
    spdlog::info("reclaimed {} reference(s) of node slot {} before reusing it",
                 reclaimed.refs_dropped, reclaim.owner);
  }
}

void DaemonIo::send(ConnectionId id, Connection& connection, std::uint32_t request_id,
                    const Message& message, int attached_fd) {
  auto bytes = encode(message, request_id);
  if (!bytes) {
    const DaemonCore::Who* who = core_.who(id);
    spdlog::error("cannot encode {} for node '{}': {}", to_string(type_of(message)),
                  who ? who->name : "", bytes.error().message);
    return;
  }
  // A client that is not reading just now gets it later, in order: the loop
  // never waits for one, and a live node never misses a notification.
  auto sent = connection.outbox.send(connection.socket, *bytes, attached_fd);
  if (!sent) {
    broken(id, connection, sent.error());
    return;
  }
  if (*sent == ClientOutbox::Sent::Queued && connection.outbox.size() == 1) {
    const DaemonCore::Who* who = core_.who(id);
    spdlog::debug("node '{}' (pid {}) is not reading: ferryd keeps its messages until it does",
                  who ? who->name : "", who ? who->pid : 0);
    watch_writable(connection, true);
  }
}

void DaemonIo::broken(ConnectionId id, Connection& connection, const SocketError& error) {
  if (error.code != SocketErrorCode::Closed) {
    const DaemonCore::Who* who = core_.who(id);
    spdlog::warn("dropping node '{}' (pid {}): {}", who ? who->name : "", who ? who->pid : 0,
                 error.message);
  }
  connection.broken = true;
}

void DaemonIo::flush_outbox(ConnectionId id, Connection& connection) {
  auto done = connection.outbox.flush(connection.socket);
  if (!done) {
    broken(id, connection, done.error());
    return;
  }
  if (*done) watch_writable(connection, false);
}

void DaemonIo::watch_writable(Connection& connection, bool writable) {
  // A refused connection (not polled) gets no second chance.
  if (!connection.polled) return;
  epoll_event ev{};
  ev.events = writable ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  ev.data.fd = connection.socket.fd();
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, connection.socket.fd(), &ev);
}

}  // namespace ferry::discovery
