// DaemonIo's start and stop: the signals, the domain's shared memory
// (adopted from a previous ferryd whose nodes live, else made fresh) and the
// epoll set; at the end, the socket and, when no node lives, the objects.
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "daemon_io.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/transport/domain_lock.hpp"
#include "ferry/transport/names.hpp"
#include "ferry/transport/object_trust.hpp"
#include "resumed_ids.hpp"

namespace ferry::discovery {

namespace {

std::expected<void, std::string> add_to_epoll(int epoll_fd, int fd, int tag) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = tag;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return std::unexpected(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  }
  return {};
}

}  // namespace

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // reload
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

transport::ObjectOwner DaemonIo::object_owner() const {
  return {::geteuid(), options_.object_mode};
}

std::expected<void, std::string> DaemonIo::start() {
  // Signals first: a SIGTERM that arrives while the pool is being made waits
  // in the signalfd and stops the loop on its first turn.
  if (auto opened = open_signals(); !opened) return opened;
  core_.set_max_connections(connection_limit(config_.limits));
  try {
    // We hold the domain's socket, so no other daemon serves it. A previous
    // one may have died while its nodes live on: their flows keep running and
    // they will reconnect, so its pool and heartbeat table are adopted.
    // Otherwise whatever is left under the domain's prefix is stale.
    // Objects another uid made or opened wide under the domain's names are
    // neither adopted nor silently replaced: the operator must look at them.
    // One at a name this daemon needs (its heartbeat table, pool or lock)
    // stops it; others (per-port names, which ferryd makes unguessable,
    // object_names.hpp) cannot be in its way and are only reported.
    refuse_foreign_objects();
    if (!adopt_live_state()) start_clean();
  } catch (const std::exception& e) {
    return std::unexpected(std::string(e.what()));
  }
  // SYNC: relaxed; a number for the clients.
  beats_.header().daemon_pid.store(static_cast<std::int32_t>(::getpid()),
                                   std::memory_order_relaxed);
  return open_epoll();
}

std::expected<void, std::string> DaemonIo::open_signals() {
  const sigset_t signals = block_stop_signals();
  signal_fd_ = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) return std::unexpected(fmt::format("signalfd: {}", std::strerror(errno)));
  // A client that vanishes mid-send must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);
  return {};
}

std::expected<void, std::string> DaemonIo::open_epoll() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return std::unexpected(fmt::format("epoll_create1: {}", std::strerror(errno)));
  if (auto added = add_to_epoll(epoll_fd_, listener_.fd(), kListenerTag); !added) return added;
  if (auto added = add_to_epoll(epoll_fd_, signal_fd_, kSignalTag); !added) return added;
  reload_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (reload_fd_ < 0) return std::unexpected(fmt::format("eventfd: {}", std::strerror(errno)));
  return add_to_epoll(epoll_fd_, reload_fd_, kReloadTag);
}

void DaemonIo::refuse_foreign_objects() {
  const auto foreign = transport::untrusted_domain_objects(options_.domain, object_owner());
  const std::string needed[] = {registry_object_name(options_.domain),
                                pool_object_name(options_.domain),
                                transport::domain_lock_name(options_.domain)};
  for (const auto& [name, why] : foreign) {
    if (std::ranges::find(needed, name) != std::end(needed)) {
      throw std::runtime_error(fmt::format("refusing domain '{}': {}", options_.domain, why));
    }
  }
  for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) {
    spdlog::warn("leaving another user's object alone: {}", foreign[i].second);
  }
  if (foreign.size() > 5) {
    spdlog::warn("{} more objects of domain '{}' in /dev/shm are another user's: left alone",
                 foreign.size() - 5, options_.domain);
  }
}

PoolFacts DaemonIo::pool_facts() {
  transport::Pool& pool = pool_->pool();
  PoolFacts facts;
  facts.max_chunk_size = pool.max_chunk_size();
  for (std::uint32_t c = 0; c < pool.class_count(); ++c) facts.chunks += pool.chunk_count(c);
  facts.holder_nodes = pool.holder_nodes();
  return facts;
}

void DaemonIo::start_clean() {
  if (const std::size_t stale =
          transport::remove_trusted_domain_objects(options_.domain, object_owner());
      stale > 0) {
    spdlog::warn("removed {} stale shared-memory object(s) of domain '{}'", stale, options_.domain);
  }
  reaper_.remove_all_locks();  // of nodes of the old objects
  pool_.emplace(options_.domain, config_, options_.object_mode,
                options_.group ? options_.group->gid : static_cast<gid_t>(-1));
  const std::string name = registry_object_name(options_.domain);
  auto beats = transport::Segment::create(
      name, kRegistryKind, kRegistryLayoutVersion, kHeartbeatTableBytes,
      {.remove_stale = true,
       .mode = options_.object_mode,
       .group = options_.group ? options_.group->gid : static_cast<gid_t>(-1)});
  if (!beats) {
    throw std::runtime_error(fmt::format("cannot create the heartbeat table '{}': {}", name,
                                         transport::to_string(beats.error())));
  }
  beats_ = HeartbeatTable::in(beats->payload(), beats->payload_size());
  // The core writes the table's plain fields before seal(), whose release
  // store of the magic publishes them to openers.
  core_.start_fresh(beats_, pool_facts(), options_.clock());
  beats->seal();
  heartbeat_segment_.emplace(std::move(*beats));
  reaper_.attach(pool_->pool(), beats_);
}

bool DaemonIo::adopt_live_state() {
  auto beats = transport::Segment::open(registry_object_name(options_.domain), kRegistryKind,
                                        kRegistryLayoutVersion, std::chrono::milliseconds(0),
                                        transport::SegmentAccess::ReadWrite, object_owner());
  if (!beats) return false;  // none, or not one of ours: start clean
  const HeartbeatTable table = HeartbeatTable::in(beats->payload(), beats->payload_size());
  if (!table) return false;
  const std::vector<NodeLiveness::Death> live = core_.adopt_slots(table);
  if (live.empty()) return false;
  try {
    pool_.emplace(options_.domain, DomainPool::Adopt{object_owner()});
  } catch (const std::exception& e) {
    spdlog::warn("not adopting domain '{}': {}", options_.domain, e.what());
    return false;
  }
  beats_ = table;
  reaper_.attach(pool_->pool(), beats_);
  const std::size_t dead = core_.finish_adoption(
      beats_, pool_facts(),
      highest_id_in_names(options_.domain, transport::list_domain_objects(options_.domain)),
      options_.clock());
  heartbeat_segment_.emplace(std::move(*beats));
  spdlog::warn(
      "adopted domain '{}' from a previous ferryd: {} live node(s) may reconnect, {} "
      "dead one(s) reclaimed",
      options_.domain, live.size(), dead);
  return true;
}

void DaemonIo::shutdown() {
  notifier_.stopping();
  // Nodes that live keep their flows: the domain's objects are theirs until
  // the next ferryd adopts them, as after a crash.
  const std::size_t live = core_.live_nodes([](ConnectionId fd) {
    char byte = 0;
    return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0;
  });
  core_.save_counters();
  connections_.clear();
  ::unlink(options_.socket_path.c_str());
  if (live > 0) {
    spdlog::info(
        "ferryd stopped; domain '{}' is left to its {} live node(s): its shared-memory "
        "objects stay for the next ferryd to adopt",
        options_.domain, live);
    return;
  }
  const std::size_t removed =
      transport::remove_trusted_domain_objects(options_.domain, object_owner());
  reaper_.remove_all_locks();
  domain_removed_ = true;
  spdlog::info("ferryd stopped; removed {} shared-memory object(s) of domain '{}'", removed,
               options_.domain);
}

}  // namespace ferry::discovery
