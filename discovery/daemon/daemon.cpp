#include "daemon.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "ferry/discovery/node_lock.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/discovery/protocol.hpp"
#include "ferry/transport/domain_lock.hpp"
#include "ferry/transport/names.hpp"
#include "ferry/transport/object_trust.hpp"
#include "resumed_ids.hpp"
#include "served_topics.hpp"

namespace ferry::discovery {

namespace {

constexpr int kListenerTag = -1;
constexpr int kSignalTag = -2;
constexpr int kReloadTag = -3;

void add_to_epoll(int epoll_fd, int fd, int tag) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = tag;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw std::runtime_error(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  }
}

}  // namespace

transport::ObjectOwner Daemon::object_owner() const { return {::geteuid(), options_.object_mode}; }

// The group the domain's objects are given to: --group's, else ferryd's own.
gid_t object_group(const DaemonOptions& options) {
  return options.group ? options.group->gid : static_cast<gid_t>(-1);
}

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // reload
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

Daemon::Daemon(DaemonOptions options, const config::Config& config, UnixSeqpacketSocket listener)
    : options_(std::move(options)),
      access_{options_.domain, ::geteuid(), options_.group},
      liveness_config_(config.liveness),
      listener_(std::move(listener)),
      shm_(options_.object_mode, object_group(options_)),
      registry_(options_.domain, served_topics(config), to_topic_config(config.defaults),
                config.strict, shm_),
      limits_(config.limits),
      max_connections_(connection_limit(config.limits)),
      owner_ids_(config.limits.max_nodes),
      reaper_(options_.domain, std::filesystem::path(options_.socket_path).parent_path()),
      liveness_(reaper_, config.liveness.timeout_ms) {
  registry_.set_limits({config.limits.max_topics, config.limits.max_ports_per_node});
  // Signals first: a SIGTERM that arrives while the pool is being made waits
  // in the signalfd and stops the loop on its first turn.
  const sigset_t signals = block_stop_signals();
  signal_fd_ = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) throw std::runtime_error(fmt::format("signalfd: {}", std::strerror(errno)));
  // A client that vanishes mid-send must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);

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
  if (!adopt_live_state()) {
    if (const std::size_t stale =
            transport::remove_trusted_domain_objects(options_.domain, object_owner());
        stale > 0) {
      spdlog::warn("removed {} stale shared-memory object(s) of domain '{}'", stale,
                   options_.domain);
    }
    reaper_.remove_all_locks();  // of nodes of the old objects
    pool_.emplace(options_.domain, config, options_.object_mode, object_group(options_));
    create_heartbeat_table();
    reaper_.attach(pool_->pool(), beats_);
    liveness_.attach(beats_);
  }
  // SYNC: relaxed; a number for the clients.
  beats_.header().daemon_pid.store(static_cast<std::int32_t>(::getpid()),
                                   std::memory_order_relaxed);
  beats_.header().daemon_beat_ms.store(options_.clock(), std::memory_order_relaxed);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0)
    throw std::runtime_error(fmt::format("epoll_create1: {}", std::strerror(errno)));

  add_to_epoll(epoll_fd_, listener_.fd(), kListenerTag);
  add_to_epoll(epoll_fd_, signal_fd_, kSignalTag);
  reload_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (reload_fd_ < 0) throw std::runtime_error(fmt::format("eventfd: {}", std::strerror(errno)));
  add_to_epoll(epoll_fd_, reload_fd_, kReloadTag);
}

void Daemon::refuse_foreign_objects() {
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

void Daemon::create_heartbeat_table() {
  const std::string name = registry_object_name(options_.domain);
  auto beats = transport::Segment::create(
      name, kRegistryKind, kRegistryLayoutVersion, kHeartbeatTableBytes,
      {.remove_stale = true, .mode = options_.object_mode, .group = object_group(options_)});
  if (!beats) {
    throw std::runtime_error(fmt::format("cannot create the heartbeat table '{}': {}", name,
                                         transport::to_string(beats.error())));
  }
  beats_ = HeartbeatTable::in(beats->payload(), beats->payload_size());
  // The segment is zero-filled: every slot is free. Plain fields before
  // seal(), whose release store of the magic publishes them to openers.
  beats_.header().heartbeat_ms = liveness_config_.heartbeat_ms;
  beats_.header().timeout_ms = liveness_config_.timeout_ms;
  beats_.header().slot_count = kHeartbeatSlots;
  beats->seal();
  heartbeat_segment_.emplace(std::move(*beats));
  save_counters();
}

bool Daemon::adopt_live_state() {
  auto beats = transport::Segment::open(registry_object_name(options_.domain), kRegistryKind,
                                        kRegistryLayoutVersion, std::chrono::milliseconds(0),
                                        transport::SegmentAccess::ReadWrite, object_owner());
  if (!beats) return false;  // none, or not one of ours: start clean
  const HeartbeatTable table = HeartbeatTable::in(beats->payload(), beats->payload_size());
  if (!table) return false;
  std::uint32_t highest = 0;
  for (std::uint32_t owner = 1; owner < kHeartbeatSlots; ++owner) {
    // SYNC: relaxed; the previous daemon is gone, its stores long done.
    if (table.slot(owner)->state.load(std::memory_order_relaxed) != 0) highest = owner;
  }
  const std::vector<NodeLiveness::Death> live = liveness_.adopt(table);
  if (live.empty()) return false;
  try {
    pool_.emplace(options_.domain, DomainPool::Adopt{object_owner()});
  } catch (const std::exception& e) {
    spdlog::warn("not adopting domain '{}': {}", options_.domain, e.what());
    return false;
  }
  beats_ = table;
  reaper_.attach(pool_->pool(), beats_);
  const std::size_t dead = liveness_.finish_adoption();
  // SYNC: relaxed; only ferryd writes the counters.
  owner_ids_.continue_from(
      std::max(beats_.header().next_owner.load(std::memory_order_relaxed), highest + 1));
  // SYNC: relaxed, as above. Shared memory: checked against the domain's
  // objects before it is trusted (resumed_ids.hpp).
  const std::uint64_t stored_id = beats_.header().next_id.load(std::memory_order_relaxed);
  const ResumedIds ids = resume_ids(
      stored_id,
      highest_id_in_names(options_.domain, transport::list_domain_objects(options_.domain)));
  if (!ids.recovered_because.empty()) {
    spdlog::warn(
        "the shared registry of domain '{}' says port ids go on from {}, which cannot be ({}); "
        "going on from {}, past every id its queues and doorbells name",
        options_.domain, stored_id, ids.recovered_because, ids.next);
  }
  registry_.continue_ids_from(ids.next);
  beats_.header().heartbeat_ms = liveness_config_.heartbeat_ms;
  beats_.header().timeout_ms = liveness_config_.timeout_ms;
  heartbeat_segment_.emplace(std::move(*beats));
  retire_adopted_slots();
  spdlog::warn(
      "adopted domain '{}' from a previous ferryd: {} live node(s) may reconnect, {} "
      "dead one(s) reclaimed",
      options_.domain, live.size(), dead);
  return true;
}

void Daemon::save_counters() {
  // SYNC: relaxed; read by the next ferryd only, after this one is gone.
  beats_.header().next_owner.store(owner_ids_.next_fresh(), std::memory_order_relaxed);
  beats_.header().next_id.store(registry_.next_id(), std::memory_order_relaxed);
}

Daemon::~Daemon() {
  reload_job_.reset();  // joins a reading thread
  if (reload_fd_ >= 0) ::close(reload_fd_);
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

int Daemon::run() {
  spdlog::info("ferryd serving domain '{}' on {}", options_.domain, options_.socket_path);
  // Wake at least every heartbeat period to beat and to check the nodes',
  // and often enough to pet systemd's watchdog.
  wait_ms_ = static_cast<int>(std::clamp<std::uint32_t>(liveness_config_.heartbeat_ms, 5, 1000));
  if (const auto pet = notifier_.tick_period()) {
    wait_ms_ = std::min(wait_ms_, static_cast<int>(std::min<std::int64_t>(pet->count(), 1000)));
  }
  notifier_.ready();  // the socket listens
  while (true) {
    if (const auto code = poll_once(std::chrono::milliseconds(wait_ms_))) return *code;
  }
}

std::optional<int> Daemon::poll_once(std::chrono::milliseconds timeout) {
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
  check_liveness();
  expire_silent_clients();
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
    auto it = clients_.find(tag);
    if (it != clients_.end()) {
      const std::uint32_t ready = events[static_cast<std::size_t>(i)].events;
      if ((ready & EPOLLOUT) != 0) flush_outbox(it->second);
      if ((ready & ~static_cast<std::uint32_t>(EPOLLOUT)) != 0 && !serve(it->second)) drop(tag, "");
    }
    drop_broken();
  }
  return std::nullopt;
}

void Daemon::accept_clients() {
  while (true) {
    if (clients_.size() >= max_connections_) {
      if (!refuse_over_limit()) return;
      continue;
    }
    auto accepted = listener_.accept();
    if (!accepted) {
      const int err = accepted.error().sys_errno;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        pause_accepting(accepted.error().message);
      } else if (accepted.error().code != SocketErrorCode::timeout) {
        log_limited("accept", spdlog::level::warn, "accept failed: {}", accepted.error().message);
      }
      return;  // no more pending connections
    }
    UnixSeqpacketSocket socket = std::move(*accepted);
    const int fd = socket.fd();
    Client client{
        std::move(socket), 0, 0, 0, 0, 0, {}, false, std::chrono::steady_clock::now(), {}};
    auto cred = client.socket.peer_credentials();
    if (!cred) {
      // Without credentials the client cannot be told from root: refuse it.
      log_limited("refused", spdlog::level::warn, "refusing a client: {}", cred.error().message);
      continue;
    }
    client.pid = cred->pid;
    client.uid = cred->uid;
    client.gid = cred->gid;
    if (const auto refused = refuse_client(client.uid, client.gid, access_, user_in_group)) {
      log_limited("refused", spdlog::level::warn, "refusing client pid {}: {}", client.pid,
                  *refused);
      send_to(client, 0, make_error(ErrorCode::permission_denied, *refused));
      continue;
    }
    add_to_epoll(epoll_fd_, fd, fd);
    spdlog::debug("client connected: pid {} uid {}", client.pid, client.uid);
    clients_.emplace(fd, std::move(client));
  }
}

bool Daemon::serve(Client& client) {
  std::array<std::byte, kMaxMessageSize> buffer;
  auto received = client.socket.recv(buffer, std::chrono::milliseconds(0));
  if (!received) {
    if (received.error().code == SocketErrorCode::timeout) return true;  // spurious wake-up
    // A closed socket is the immediate death of the node.
    if (received.error().code != SocketErrorCode::closed) {
      spdlog::warn("closing client pid {} ({}): {}", client.pid, client.name,
                   received.error().message);
    }
    return false;
  }
  auto envelope = decode(std::span<const std::byte>(buffer.data(), *received));
  if (!envelope) {
    log_limited("malformed", spdlog::level::warn,
                "closing client pid {} ({}): malformed message: {}", client.pid,
                client.name.empty() ? "no hello yet" : client.name, envelope.error().message);
    send_to(client, 0, make_error(ErrorCode::malformed_message, envelope.error().message));
    return false;
  }
  return handle(client, envelope->request_id, envelope->message);
}

bool Daemon::handle(Client& client, std::uint32_t request_id, const Message& message) {
  if (const auto* hello = std::get_if<Hello>(&message)) {
    if (client.node_id != 0) {
      send_to(client, request_id, make_error(ErrorCode::already_registered, "hello sent twice"));
      return false;
    }
    if (hello->protocol_version != kProtocolVersion) {
      send_to(client, request_id,
              make_error(ErrorCode::unsupported_version,
                         fmt::format("protocol version {} is not supported; ferryd speaks {}",
                                     hello->protocol_version, kProtocolVersion)));
      return false;
    }
    if (std::ranges::any_of(hello->node_name, [](char c) {
          return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
        })) {
      send_to(client, request_id,
              make_error(ErrorCode::invalid_argument,
                         "a node name may not hold control characters (newlines, escapes)"));
      return false;
    }
    client.name = hello->node_name;
    // A node of the previous ferryd coming back keeps its owner id: what it
    // holds in the adopted pool stays attributed to it.
    bool resumed = false;
    if (hello->resume_slot <= 0xffff &&
        liveness_.resumed(static_cast<std::uint16_t>(hello->resume_slot), client.pid)) {
      resumed = true;
      client.owner = static_cast<std::uint16_t>(hello->resume_slot);
      spdlog::info("node '{}' (pid {}) resumes slot {}", client.name, client.pid, client.owner);
    } else {
      auto owner = owner_ids_.take();
      // Recycling asks the kernel about every retired slot: not more than
      // ten times a second, whatever a flood of Hellos asks.
      if (const auto now = std::chrono::steady_clock::now();
          !owner && now - last_recycle_ >= std::chrono::milliseconds(100)) {
        last_recycle_ = now;
        recycle_owner_ids();
        owner = owner_ids_.take();
      }
      if (!owner) {
        const std::string why = fmt::format(
            "all {} node slots of domain '{}' are in use (limits: max_nodes), {} of them kept for "
            "processes that left but still run; try again when nodes exit",
            owner_ids_.capacity(), options_.domain, owner_ids_.retired_count());
        log_limited("slots", spdlog::level::warn, "refusing node '{}' (pid {}): {}", client.name,
                    client.pid, why);
        send_to(client, request_id, make_error(ErrorCode::resource_exhausted, why));
        return false;
      }
      client.owner = *owner;
    }
    client.node_id = registry_.add_node(hello->node_name, client.pid, client.owner);
    node_fds_[client.node_id] = client.socket.fd();
    joined_[client.node_id] = std::chrono::steady_clock::now();
    Welcome welcome;
    welcome.node_id = client.node_id;
    welcome.domain = options_.domain;
    welcome.heartbeat_ms = liveness_config_.heartbeat_ms;
    welcome.timeout_ms = liveness_config_.timeout_ms;
    welcome.heartbeat_slot = client.owner;
    welcome.registry_shm = registry_object_name(options_.domain);
    liveness_.joined(client.owner, client.pid, options_.clock());
    // A new node's lock, taken here and handed over with the Welcome (ours
    // closes when `lock` goes): a resumed node holds its own already.
    std::optional<NodeLock> lock;
    if (!resumed) {
      const auto group =
          options_.group ? std::optional<gid_t>(options_.group->gid) : std::optional<gid_t>();
      auto taken = NodeLock::take(options_.domain, client.owner, reaper_.runtime_dir(), group);
      if (taken) {
        lock.emplace(std::move(*taken));
      } else {
        log_limited("node-lock", spdlog::level::warn,
                    "node '{}' (pid {}) will be judged by its pid: {}", client.name, client.pid,
                    taken.error());
      }
    }
    send_to(client, request_id, welcome, lock ? lock->fd() : -1);
    spdlog::info("node '{}' (pid {}) joined as node {}", client.name, client.pid, client.node_id);
    return true;
  }
  if (std::holds_alternative<ListTopics>(message)) {
    const auto& list = std::get<ListTopics>(message);
    send_to(client, request_id, registry_.list_topics(list.start, list.topic, list.part));
    return true;
  }
  if (const auto* nodes = std::get_if<ListNodes>(&message)) {
    send_to(client, request_id, node_list(nodes->start));
    return true;
  }
  if (const auto* get = std::get_if<GetConfig>(&message)) {
    send_to(client, request_id, config_page(get->offset));
    return true;
  }
  if (std::holds_alternative<Ping>(message)) {
    send_to(client, request_id, Pong{});
    return true;
  }
  if (client.node_id == 0) {
    send_to(client, request_id, make_error(ErrorCode::not_registered, "send hello first"));
    return false;
  }
  const Peer peer{client.node_id, client.uid, client.gid};
  Outbox out;
  if (const auto* pub = std::get_if<CreatePublisher>(&message)) {
    auto made = registry_.create_port(peer, true, *pub, out);
    if (made) {
      spdlog::info("node '{}' publishes on '{}' (port {})", client.name, pub->topic, made->port_id);
      send_to(client, request_id, *made);
    } else {
      log_limited("refused-port", spdlog::level::info, "refused publisher of node '{}': {}",
                  client.name, made.error().message);
      send_to(client, request_id, made.error());
    }
  } else if (const auto* sub = std::get_if<CreateSubscriber>(&message)) {
    auto made = registry_.create_port(peer, false, *sub, out);
    if (made) {
      spdlog::info("node '{}' subscribes to '{}' (port {})", client.name, sub->topic,
                   made->port_id);
      send_to(client, request_id, *made);
    } else {
      log_limited("refused-port", spdlog::level::info, "refused subscriber of node '{}': {}",
                  client.name, made.error().message);
      send_to(client, request_id, made.error());
    }
  } else if (const auto* destroy = std::get_if<DestroyPort>(&message)) {
    auto done = registry_.destroy_port(client.node_id, destroy->port_id, out);
    if (done) {
      send_to(client, request_id, *done);
    } else {
      send_to(client, request_id, done.error());
    }
  } else if (const auto* released = std::get_if<QueueReleased>(&message)) {
    registry_.queue_released(client.node_id, released->port_id, released->peer_port_id);
  } else {
    send_to(client, request_id,
            make_error(ErrorCode::malformed_message,
                       fmt::format("a client may not send {}", to_string(type_of(message)))));
    return false;
  }
  liveness_.set_must_beat(client.owner, registry_.has_ports(client.node_id));
  save_counters();
  // Replies first, then the notifications they caused.
  deliver(out);
  return true;
}

void Daemon::send_to(Client& client, std::uint32_t request_id, const Message& message,
                     int attached_fd) {
  auto bytes = encode(message, request_id);
  if (!bytes) {
    spdlog::error("cannot encode {} for node '{}': {}", to_string(type_of(message)), client.name,
                  bytes.error().message);
    return;
  }
  // A client that is not reading just now gets it later, in order: the loop
  // never waits for one, and a live node never misses a notification.
  auto sent = client.outbox.send(client.socket, *bytes, attached_fd);
  if (!sent) {
    if (sent.error().code != SocketErrorCode::closed) {
      spdlog::warn("dropping node '{}' (pid {}): {}", client.name, client.pid,
                   sent.error().message);
    }
    client.broken = true;
    return;
  }
  if (*sent == ClientOutbox::Sent::queued && client.outbox.size() == 1) {
    spdlog::debug("node '{}' (pid {}) is not reading: ferryd keeps its messages until it does",
                  client.name, client.pid);
    watch_writable(client.socket.fd(), true);
  }
}

void Daemon::flush_outbox(Client& client) {
  auto done = client.outbox.flush(client.socket);
  if (!done) {
    if (done.error().code != SocketErrorCode::closed) {
      spdlog::warn("dropping node '{}' (pid {}): {}", client.name, client.pid,
                   done.error().message);
    }
    client.broken = true;
    return;
  }
  if (*done) watch_writable(client.socket.fd(), false);
}

void Daemon::watch_writable(int fd, bool writable) {
  // A refused connection (not in clients_, not polled) gets no second chance.
  if (clients_.find(fd) == clients_.end()) return;
  epoll_event ev{};
  ev.events = writable ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  ev.data.fd = fd;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void Daemon::deliver(const Outbox& out) {
  for (const auto& [node_id, message] : out) {
    auto fd = node_fds_.find(node_id);
    if (fd == node_fds_.end()) continue;
    auto client = clients_.find(fd->second);
    if (client != clients_.end()) send_to(client->second, 0, message);
  }
}

NodeList Daemon::node_list(std::uint32_t start) const {
  NodeList list = registry_.list_nodes(start);
  const auto now = std::chrono::steady_clock::now();
  for (NodeInfo& node : list.nodes) {
    if (auto joined = joined_.find(node.node_id); joined != joined_.end()) {
      node.connected_ms = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(now - joined->second).count());
    }
    if (auto fd = node_fds_.find(node.node_id); fd != node_fds_.end()) {
      if (auto client = clients_.find(fd->second); client != clients_.end()) {
        node.slot = client->second.owner;
        node.heartbeat_age_ms = liveness_.silent_ms(client->second.owner, options_.clock());
      }
    }
  }
  return list;
}

ConfigText Daemon::config_page(std::uint32_t offset) const {
  const std::string& text = options_.config_text;
  ConfigText page;
  page.source = options_.config_source.substr(0, kMaxPathName);
  page.total = static_cast<std::uint32_t>(text.size());
  page.offset = std::min(offset, page.total);
  page.text = text.substr(page.offset, kMaxConfigChunk);
  return page;
}

void Daemon::drop(int fd, const std::string& why, UnmatchReason reason) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  Client& client = it->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  if (client.node_id != 0) {
    spdlog::info("node '{}' (pid {}) left{}{}", client.name, client.pid, why.empty() ? "" : ": ",
                 why);
    owner_ids_.retire(client.owner, client.pid);
    Outbox out;
    registry_.remove_node(client.node_id, reason, out);
    // Everything the node held in the pool comes back: its loans, what it
    // took and did not release, what was queued to it. A process that still
    // exists (only its socket closed) keeps the chunks it is allocating
    // until it is gone (node_reaper.hpp). The Unmatched to its peers go
    // after the reclaim: a publisher revokes what it gives the node from
    // then on once it has applied its Unmatched.
    liveness_.left(client.owner);
    node_fds_.erase(client.node_id);
    joined_.erase(client.node_id);
    clients_.erase(it);
    deliver(out);
  } else {
    clients_.erase(it);
  }
}

void Daemon::check_liveness() {
  const std::uint64_t now = options_.clock();
  // SYNC: relaxed; clients read it as a number.
  beats_.header().daemon_beat_ms.store(now, std::memory_order_relaxed);
  const std::vector<NodeLiveness::Death> deaths = liveness_.tick(now);
  bool dropped = false;
  for (const NodeLiveness::Death& death : deaths) {
    if (death.orphan) {
      if (death.silent_ms > 0) {
        spdlog::warn(
            "node slot {} (pid {}) of the previous ferryd did not come back: reclaiming it",
            death.owner, death.pid);
      } else {
        spdlog::warn("node slot {} (pid {}) of the previous ferryd is gone: reclaimed it",
                     death.owner, death.pid);
      }
      owner_ids_.retire(death.owner, death.pid);
      continue;
    }
    auto it = std::find_if(clients_.begin(), clients_.end(), [&](const auto& c) {
      return c.second.node_id != 0 && c.second.owner == death.owner;
    });
    if (it == clients_.end()) {
      liveness_.left(death.owner);  // no client to drop: reclaimed all the same
      continue;
    }
    Client& client = it->second;
    const std::string why = fmt::format(
        "this node was declared dead after {} ms without a "
        "heartbeat (timeout_ms is {})",
        death.silent_ms, liveness_config_.timeout_ms);
    spdlog::warn("node '{}' (pid {}): {}", client.name, client.pid, why);
    send_to(client, 0, make_error(ErrorCode::node_expired, why));
    drop(it->first, why, UnmatchReason::peer_timed_out);
    dropped = true;
  }
  if (dropped) drop_broken();
}

void Daemon::drop_broken() {
  // Dropping one node notifies its peers, which may break another: repeat.
  while (true) {
    std::vector<int> broken;
    for (const auto& [fd, client] : clients_) {
      if (client.broken) broken.push_back(fd);
    }
    if (broken.empty()) return;
    for (int fd : broken) drop(fd, "its socket failed");
  }
}

void Daemon::shutdown() {
  notifier_.stopping();
  // Nodes that live keep their flows: the domain's objects are theirs until
  // the next ferryd adopts them, as after a crash.
  // A node that closed its socket just before the signal (its event not
  // served yet) or whose process is gone (its node lock) does not count.
  std::size_t live = 0;
  for (const auto& [fd, client] : clients_) {
    char byte = 0;
    const bool closed = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
    if (client.node_id != 0 && !closed && liveness_.process_alive(client.owner)) ++live;
  }
  for (std::uint32_t owner = 1; owner < owner_ids_.next_fresh() && owner < kHeartbeatSlots;
       ++owner) {
    const auto id = static_cast<std::uint16_t>(owner);
    if (liveness_.state(id) == NodeState::orphan && liveness_.process_alive(id)) ++live;
  }
  save_counters();
  clients_.clear();
  node_fds_.clear();
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
