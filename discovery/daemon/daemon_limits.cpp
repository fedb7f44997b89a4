// ferryd against a client that takes too much: the connection limit, the
// file-descriptor back-off, the Hello deadline and node slot reuse.

#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>

#include "daemon.hpp"
#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery {

namespace {
// Descriptors ferryd keeps for itself: epoll, signalfd, the listener and
// its lock, the log, shared-memory objects it opens while matching.
constexpr std::size_t kReservedFds = 32;
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
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

bool Daemon::refuse_over_limit() {
  auto accepted = listener_.accept();
  if (!accepted) {
    const int err = accepted.error().sys_errno;
    if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
      pause_accepting(accepted.error().message);
    }
    return false;
  }
  Client client{std::move(*accepted), 0, 0, 0, 0, 0, {}, false, {}, {}};
  if (auto cred = client.socket.peer_credentials()) client.pid = cred->pid;
  const std::string why = fmt::format(
      "ferryd of domain '{}' already serves {} connections, its limit (limits: "
      "max_connections); try again when other clients have closed",
      options_.domain, clients_.size());
  log_limited("connections", spdlog::level::warn, "refusing client pid {}: {}", client.pid, why);
  send_to(client, 0, make_error(ErrorCode::resource_exhausted, why));
  return true;  // the socket closes here: the client reads the error, then the end
}

void Daemon::pause_accepting(const std::string& why) {
  if (!accepting_) return;
  log_limited("accept-fds", spdlog::level::warn,
              "cannot accept connections ({}); pausing {} ms with {} clients connected", why,
              kAcceptBackoff.count(), clients_.size());
  epoll_event ev{};
  ev.events = 0;    // still registered, never reported: no busy loop on a full fd table
  ev.data.fd = -1;  // kListenerTag
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd(), &ev);
  accepting_ = false;
  resume_accepting_at_ = std::chrono::steady_clock::now() + kAcceptBackoff;
}

void Daemon::resume_accepting_when_due() {
  if (accepting_ || std::chrono::steady_clock::now() < resume_accepting_at_) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = -1;  // kListenerTag
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd(), &ev);
  accepting_ = true;
}

void Daemon::expire_silent_clients() {
  const auto deadline =
      std::chrono::steady_clock::now() - std::chrono::milliseconds(limits_.hello_timeout_ms);
  std::vector<int> silent;
  for (const auto& [fd, client] : clients_) {
    if (client.node_id == 0 && client.connected_at < deadline) silent.push_back(fd);
  }
  for (int fd : silent) {
    Client& client = clients_.at(fd);
    const std::string why = fmt::format(
        "no Hello within {} ms of connecting (limits: hello_timeout_ms); closing the connection",
        limits_.hello_timeout_ms);
    log_limited("silent", spdlog::level::warn, "client pid {}: {}", client.pid, why);
    send_to(client, 0, make_error(ErrorCode::not_registered, why));
    drop(fd, why);
  }
}

void Daemon::recycle_owner_ids() {
  // Nodes whose processes went since the last tick are finished first, so
  // their slots can be given now rather than after the next tick.
  liveness_.probe_waiting();
  owner_ids_.recycle([&](const OwnerIds::Retired& r) {
    // The reaper frees a slot once its node is reclaimed and its process is
    // gone (node lock): until then the process may allocate with the id. A
    // node of the previous ferryd may still come back with it. A survivor
    // that has not acknowledged the departure may still take the id for the
    // departed node's.
    if (liveness_.state(r.owner) != NodeState::free || registry_.awaits_release(r.owner)) {
      return false;
    }
    // What a late publisher gave the departed node after its reclaim goes
    // now: from here on the id means someone else.
    const auto reclaimed = pool_->pool().reclaim_owner(r.owner, true);
    if (reclaimed.refs_dropped > 0) {
      spdlog::info("reclaimed {} reference(s) of node slot {} before reusing it",
                   reclaimed.refs_dropped, r.owner);
    }
    return true;
  });
}

void Daemon::retire_adopted_slots() {
  for (std::uint32_t owner = 1; owner < owner_ids_.next_fresh() && owner < kHeartbeatSlots;
       ++owner) {
    const auto id = static_cast<std::uint16_t>(owner);
    if (liveness_.state(id) == NodeState::orphan) continue;
    const HeartbeatSlot* slot = beats_.slot(owner);
    // SYNC: relaxed; the previous daemon is gone, its stores long done.
    owner_ids_.retire(id, slot != nullptr ? slot->pid.load(std::memory_order_relaxed) : 0);
  }
}

}  // namespace ferry::discovery
