// DaemonCore: connections, the timer and the departure of nodes. Message
// handlers are in daemon_handlers.cpp, start and adoption in
// daemon_core_start.cpp, SIGHUP's result in daemon_core_reload.cpp.
#include "daemon_core.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "served_topics.hpp"

namespace ferry::discovery {

DaemonCore::DaemonCore(DaemonCoreSettings settings, const config::Config& config, ShmFactory& shm,
                       LivenessActions& actions, GroupMembership is_member)
    : settings_(std::move(settings)),
      is_member_(std::move(is_member)),
      liveness_config_(config.liveness),
      limits_(config.limits),
      registry_(settings_.access.domain, served_topics(config), to_topic_config(config.defaults),
                config.strict, shm),
      node_slots_(config.limits.max_nodes),
      liveness_(actions, config.liveness.timeout_ms) {
  registry_.set_limits({config.limits.max_topics, config.limits.max_ports_per_node});
}

const DaemonCore::Who* DaemonCore::who(ConnectionId connection) const {
  auto it = connections_.find(connection);
  return it == connections_.end() ? nullptr : &it->second.who;
}

Effects DaemonCore::connected(std::uint64_t now, ConnectionId id,
                              const std::expected<Credentials, std::string>& credentials) {
  Effects out;
  const pid_t pid = credentials ? credentials->pid : 0;
  if (connections_.size() >= settings_.max_connections) {
    const std::string why = fmt::format(
        "ferryd of domain '{}' already serves {} connections, its limit (limits: "
        "max_connections); try again when other clients have closed",
        domain(), connections_.size());
    log_limited(now, "connections", spdlog::level::warn, "refusing client pid {}: {}", pid, why);
    // The socket closes after it: the client reads the error, then the end.
    out.push_back(SendMessage{id, 0, make_error(RefusalCode::ResourceExhausted, why), {}});
    out.push_back(CloseConnection{id});
    return out;
  }
  if (!credentials) {
    // Without credentials the client cannot be told from root: refuse it.
    log_limited(now, "refused", spdlog::level::warn, "refusing a client: {}", credentials.error());
    out.push_back(CloseConnection{id});
    return out;
  }
  if (const auto refused =
          refuse_client(credentials->uid, credentials->gid, settings_.access, is_member_)) {
    log_limited(now, "refused", spdlog::level::warn, "refusing client pid {}: {}", pid, *refused);
    out.push_back(SendMessage{id, 0, make_error(RefusalCode::PermissionDenied, *refused), {}});
    out.push_back(CloseConnection{id});
    return out;
  }
  Connection connection;
  connection.who.pid = pid;
  connection.uid = credentials->uid;
  connection.gid = credentials->gid;
  connection.connected_at = now;
  connections_.insert_or_assign(id, std::move(connection));
  spdlog::debug("client connected: pid {} uid {}", pid, credentials->uid);
  return out;
}

Effects DaemonCore::malformed(std::uint64_t now, ConnectionId id, const std::string& why) {
  Effects out;
  auto it = connections_.find(id);
  if (it != connections_.end()) {
    const Who& who = it->second.who;
    log_limited(now, "malformed", spdlog::level::warn,
                "closing client pid {} ({}): malformed message: {}", who.pid,
                who.name.empty() ? "no hello yet" : who.name, why);
  }
  out.push_back(SendMessage{id, 0, make_error(RefusalCode::MalformedMessage, why), {}});
  drop(id, "", out);
  return out;
}

Effects DaemonCore::hung_up(ConnectionId id, const std::string& why) {
  Effects out;
  drop(id, why, out);
  return out;
}

Effects DaemonCore::tick(std::uint64_t now) {
  Effects out;
  check_liveness(now, out);
  expire_silent_clients(now, out);
  return out;
}

void DaemonCore::send_notifications(const Outbox& notifications, Effects& out) const {
  for (const auto& [node_id, message] : notifications) {
    auto to = node_connections_.find(node_id);
    if (to != node_connections_.end()) out.push_back(SendMessage{to->second, 0, message, {}});
  }
}

void DaemonCore::drop(ConnectionId id, const std::string& why, Effects& out, UnmatchReason reason) {
  auto it = connections_.find(id);
  if (it == connections_.end()) {
    out.push_back(CloseConnection{id});
    return;
  }
  const Connection client = std::move(it->second);
  connections_.erase(it);
  out.push_back(CloseConnection{id});
  if (client.node_id == 0) return;
  spdlog::info("node '{}' (pid {}) left{}{}", client.who.name, client.who.pid,
               why.empty() ? "" : ": ", why);
  node_slots_.retire(client.owner, client.who.pid);
  Outbox notifications;
  registry_.remove_node(client.node_id, reason, notifications);
  // Everything the node held in the pool comes back: its loans, what it
  // took and did not release, what was queued to it. A process that still
  // exists (only its socket closed) keeps the chunks it is allocating
  // until it is gone (node_reaper.hpp). The Unmatched to its peers go
  // after the reclaim: a publisher revokes what it gives the node from
  // then on once it has applied its Unmatched.
  liveness_.left(client.owner);
  node_connections_.erase(client.node_id);
  joined_.erase(client.node_id);
  send_notifications(notifications, out);
}

void DaemonCore::check_liveness(std::uint64_t now, Effects& out) {
  // SYNC: relaxed; clients read it as a number.
  beats_.header().daemon_beat_ms.store(now, std::memory_order_relaxed);
  const std::vector<NodeLiveness::Death> deaths = liveness_.tick(now);
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
      node_slots_.retire(death.owner, death.pid);
      continue;
    }
    auto it = std::find_if(connections_.begin(), connections_.end(), [&](const auto& c) {
      return c.second.node_id != 0 && c.second.owner == death.owner;
    });
    if (it == connections_.end()) {
      liveness_.left(death.owner);  // no client to drop: reclaimed all the same
      continue;
    }
    const std::string why = fmt::format(
        "this node was declared dead after {} ms without a "
        "heartbeat (timeout_ms is {})",
        death.silent_ms, liveness_config_.timeout_ms);
    spdlog::warn("node '{}' (pid {}): {}", it->second.who.name, it->second.who.pid, why);
    out.push_back(SendMessage{it->first, 0, make_error(RefusalCode::NodeExpired, why), {}});
    drop(it->first, why, out, UnmatchReason::PeerTimedOut);
  }
}

void DaemonCore::expire_silent_clients(std::uint64_t now, Effects& out) {
  std::vector<ConnectionId> silent;
  for (const auto& [id, client] : connections_) {
    if (client.node_id == 0 && now > client.connected_at + limits_.hello_timeout_ms) {
      silent.push_back(id);
    }
  }
  for (ConnectionId id : silent) {
    const std::string why = fmt::format(
        "no Hello within {} ms of connecting (limits: hello_timeout_ms); closing the connection",
        limits_.hello_timeout_ms);
    log_limited(now, "silent", spdlog::level::warn, "client pid {}: {}",
                connections_.at(id).who.pid, why);
    out.push_back(SendMessage{id, 0, make_error(RefusalCode::NotRegistered, why), {}});
    drop(id, why, out);
  }
}

void DaemonCore::recycle_node_slots(Effects& out) {
  // Nodes whose processes went since the last tick are finished first, so
  // their slots can be given now rather than after the next tick.
  liveness_.probe_waiting();
  node_slots_.recycle([&](const NodeSlots::Retired& r) {
    // The reaper frees a slot once its node is reclaimed and its process is
    // gone (node lock): until then the process may allocate with the id. A
    // node of the previous ferryd may still come back with it. A survivor
    // that has not acknowledged the departure may still take the id for the
    // departed node's.
    if (liveness_.state(r.owner) != NodeState::Free || registry_.awaits_release(r.owner)) {
      return false;
    }
    // What a late publisher gave the departed node after its reclaim goes
    // (before the Welcome that gives the id again): from then on the id
    // means someone else.
    out.push_back(ReclaimSlot{r.owner});
    return true;
  });
}

std::size_t DaemonCore::live_nodes(const std::function<bool(ConnectionId)>& still_open) {
  // A node that closed its socket just before the signal (its event not
  // served yet) or whose process is gone (its node lock) does not count.
  std::size_t live = 0;
  for (const auto& [id, client] : connections_) {
    if (client.node_id != 0 && still_open(id) && liveness_.process_alive(client.owner)) ++live;
  }
  for (std::uint32_t owner = 1; owner < node_slots_.next_fresh() && owner < kHeartbeatSlots;
       ++owner) {
    const auto slot = static_cast<std::uint16_t>(owner);
    if (liveness_.state(slot) == NodeState::Orphan && liveness_.process_alive(slot)) ++live;
  }
  return live;
}

void DaemonCore::save_counters() {
  // SYNC: relaxed; read by the next ferryd only, after this one is gone.
  beats_.header().next_owner.store(node_slots_.next_fresh(), std::memory_order_relaxed);
  beats_.header().next_id.store(registry_.next_id(), std::memory_order_relaxed);
}

}  // namespace ferry::discovery
