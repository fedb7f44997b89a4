#include "daemon.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "ferry/discovery/protocol.hpp"
#include "ferry/transport/names.hpp"
#include "served_topics.hpp"

namespace ferry::discovery {

namespace {

constexpr int kListenerTag = -1;
constexpr int kSignalTag = -2;

void add_to_epoll(int epoll_fd, int fd, int tag) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = tag;
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw std::runtime_error(fmt::format("epoll_ctl: {}", std::strerror(errno)));
  }
}

}  // namespace

sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

Daemon::Daemon(DaemonOptions options, const config::Config& config, UnixSeqpacketSocket listener)
    : options_(std::move(options)),
      access_{options_.domain, ::geteuid(), options_.group},
      liveness_(config.liveness),
      listener_(std::move(listener)),
      shm_(options_.object_mode),
      registry_(options_.domain, served_topics(config), to_topic_config(config.defaults),
                config.strict, shm_) {
  // Signals first: a SIGTERM that arrives while the pool is being made waits
  // in the signalfd and stops the loop on its first turn.
  const sigset_t signals = block_stop_signals();
  signal_fd_ = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) throw std::runtime_error(fmt::format("signalfd: {}", std::strerror(errno)));
  // A client that vanishes mid-send must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);

  // We hold the domain's socket, so no other daemon serves it: whatever is
  // left under its prefix was left by a dead one.
  if (const std::size_t stale = transport::remove_domain_objects(options_.domain); stale > 0) {
    spdlog::warn("removed {} stale shared-memory object(s) of domain '{}'", stale, options_.domain);
  }
  pool_.emplace(options_.domain, config, options_.object_mode);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw std::runtime_error(fmt::format("epoll_create1: {}", std::strerror(errno)));

  add_to_epoll(epoll_fd_, listener_.fd(), kListenerTag);
  add_to_epoll(epoll_fd_, signal_fd_, kSignalTag);
}

Daemon::~Daemon() {
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

int Daemon::run() {
  spdlog::info("ferryd serving domain '{}' on {}", options_.domain, options_.socket_path);
  std::array<epoll_event, 64> events{};
  auto last_tick = std::chrono::steady_clock::now();
  while (true) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 1000);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("epoll_wait failed: {}", std::strerror(errno));
      shutdown();
      return 1;
    }
    if (const auto now = std::chrono::steady_clock::now(); now - last_tick >= std::chrono::seconds(1)) {
      last_tick = now;
      reclaim_dead_owners();
    }
    for (int i = 0; i < n; ++i) {
      const int tag = events[static_cast<std::size_t>(i)].data.fd;
      if (tag == kSignalTag) {
        signalfd_siginfo info{};
        [[maybe_unused]] const ssize_t r = ::read(signal_fd_, &info, sizeof info);
        spdlog::info("ferryd: signal {} received, shutting down", info.ssi_signo);
        shutdown();
        return 0;
      }
      if (tag == kListenerTag) {
        accept_clients();
        continue;
      }
      auto it = clients_.find(tag);
      if (it != clients_.end() && !serve(it->second)) drop(tag, "");
      drop_broken();
    }
  }
}

void Daemon::accept_clients() {
  while (true) {
    auto accepted = listener_.accept();
    if (!accepted) {
      if (accepted.error().code != SocketErrorCode::timeout) {
        spdlog::warn("accept failed: {}", accepted.error().message);
      }
      return;  // no more pending connections
    }
    UnixSeqpacketSocket socket = std::move(*accepted);
    const int fd = socket.fd();
    Client client{std::move(socket), 0, 0, 0, 0, 0, {}, false};
    auto cred = client.socket.peer_credentials();
    if (!cred) {
      // Without credentials the client cannot be told from root: refuse it.
      spdlog::warn("refusing a client: {}", cred.error().message);
      continue;
    }
    client.pid = cred->pid;
    client.uid = cred->uid;
    client.gid = cred->gid;
    if (const auto refused = refuse_client(client.uid, client.gid, access_, user_in_group)) {
      spdlog::warn("refusing client pid {}: {}", client.pid, *refused);
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
    spdlog::warn("closing client pid {} ({}): malformed message: {}", client.pid,
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
    if (next_owner_ > UINT16_MAX) {
      send_to(client, request_id,
              make_error(ErrorCode::resource_exhausted,
                         "this ferryd has given out all 65535 node slots; restart it"));
      return false;
    }
    client.name = hello->node_name;
    client.owner = static_cast<std::uint16_t>(next_owner_++);
    client.node_id = registry_.add_node(hello->node_name, client.pid, client.owner);
    node_fds_[client.node_id] = client.socket.fd();
    joined_[client.node_id] = std::chrono::steady_clock::now();
    Welcome welcome;
    welcome.node_id = client.node_id;
    welcome.domain = options_.domain;
    welcome.heartbeat_ms = liveness_.heartbeat_ms;
    welcome.timeout_ms = liveness_.timeout_ms;
    welcome.heartbeat_slot = client.owner;
    send_to(client, request_id, welcome);
    spdlog::info("node '{}' (pid {}) joined as node {}", client.name, client.pid, client.node_id);
    return true;
  }
  if (std::holds_alternative<ListTopics>(message)) {
    const auto& list = std::get<ListTopics>(message);
    send_to(client, request_id, registry_.list_topics(list.start, list.topic));
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
      spdlog::info("refused publisher of node '{}': {}", client.name, made.error().message);
      send_to(client, request_id, made.error());
    }
  } else if (const auto* sub = std::get_if<CreateSubscriber>(&message)) {
    auto made = registry_.create_port(peer, false, *sub, out);
    if (made) {
      spdlog::info("node '{}' subscribes to '{}' (port {})", client.name, sub->topic, made->port_id);
      send_to(client, request_id, *made);
    } else {
      spdlog::info("refused subscriber of node '{}': {}", client.name, made.error().message);
      send_to(client, request_id, made.error());
    }
  } else if (const auto* destroy = std::get_if<DestroyPort>(&message)) {
    auto done = registry_.destroy_port(client.node_id, destroy->port_id, out);
    if (done) {
      send_to(client, request_id, *done);
    } else {
      send_to(client, request_id, done.error());
    }
  } else {
    send_to(client, request_id,
            make_error(ErrorCode::malformed_message,
                       fmt::format("a client may not send {}", to_string(type_of(message)))));
    return false;
  }
  // Replies first, then the notifications they caused.
  deliver(out);
  return true;
}

void Daemon::send_to(Client& client, std::uint32_t request_id, const Message& message) {
  auto bytes = encode(message, request_id);
  if (!bytes) {
    spdlog::error("cannot encode {} for node '{}': {}", to_string(type_of(message)), client.name,
                  bytes.error().message);
    return;
  }
  if (auto sent = client.socket.send(*bytes); !sent) {
    // A client that does not read its socket is dropped rather than allowed
    // to stall the daemon or silently miss a notification.
    if (sent.error().code != SocketErrorCode::closed) {
      spdlog::warn("dropping node '{}' (pid {}): {}", client.name, client.pid,
                   sent.error().message);
    }
    client.broken = true;
  }
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

void Daemon::drop(int fd, const std::string& why) {
  auto it = clients_.find(fd);
  if (it == clients_.end()) return;
  Client& client = it->second;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  if (client.node_id != 0) {
    spdlog::info("node '{}' (pid {}) left{}{}", client.name, client.pid, why.empty() ? "" : ": ",
                 why);
    Outbox out;
    registry_.remove_node(client.node_id, UnmatchReason::peer_closed, out);
    // Everything the node held in the pool comes back: its loans, what it
    // took and did not release, what was queued to it. A process that still
    // exists (only its socket closed) keeps the chunks it is allocating.
    const bool gone = ::kill(client.pid, 0) != 0 && errno == ESRCH;
    const auto reclaimed = pool_->pool().reclaim_owner(client.owner, gone);
    if (reclaimed.refs_dropped > 0 || reclaimed.chunks_freed > 0) {
      spdlog::info("reclaimed {} reference(s), {} chunk(s) freed, from node '{}'",
                   reclaimed.refs_dropped, reclaimed.chunks_freed, client.name);
    }
    dead_owners_.push_back({client.owner, 3});
    node_fds_.erase(client.node_id);
    joined_.erase(client.node_id);
    clients_.erase(it);
    deliver(out);
  } else {
    clients_.erase(it);
  }
}

void Daemon::reclaim_dead_owners() {
  for (auto& dead : dead_owners_) {
    const auto r = pool_->pool().reclaim_owner(dead.owner, true);
    if (r.refs_dropped > 0) {
      spdlog::info("reclaimed {} late reference(s) of a dead node", r.refs_dropped);
    }
    --dead.ticks_left;
  }
  std::erase_if(dead_owners_, [](const DeadOwner& d) { return d.ticks_left <= 0; });
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
  clients_.clear();
  node_fds_.clear();
  const std::size_t removed = transport::remove_domain_objects(options_.domain);
  ::unlink(options_.socket_path.c_str());
  spdlog::info("ferryd stopped; removed {} shared-memory object(s) of domain '{}'", removed,
               options_.domain);
}

}  // namespace ferry::discovery
