// DaemonCore's message dispatch: one small handler per message a client may
// send (daemon_core.hpp). A handler answers through its Context and returns
// false when the client must be dropped (after its answer).
#include <fmt/format.h>

#include <algorithm>

#include "daemon_core.hpp"
#include "ferry/discovery/objects.hpp"
#include "ferry/discovery/protocol.hpp"

namespace ferry::discovery {

Effects DaemonCore::received(std::uint64_t now, ConnectionId id, std::uint32_t request_id,
                             const Message& message) {
  Effects out;
  auto it = connections_.find(id);
  if (it == connections_.end()) return out;  // closed already in this turn
  const Context context{now, id, it->second, request_id, out};
  const bool keep = std::visit([&](const auto& m) { return on(context, m); }, message);
  if (!keep) drop(id, "", out);
  return out;
}

template <class M>
bool DaemonCore::on(const Context& c, const M& message) {
  if (c.connection.node_id == 0) {
    c.reply(make_error(RefusalCode::NotRegistered, "send hello first"));
    return false;
  }
  c.reply(make_error(RefusalCode::MalformedMessage,
                     fmt::format("a client may not send {}", to_string(type_of(message)))));
  return false;
}

bool DaemonCore::on(const Context& c, const Hello& hello) {
  Connection& client = c.connection;
  if (client.node_id != 0) {
    c.reply(make_error(RefusalCode::AlreadyRegistered, "hello sent twice"));
    return false;
  }
  if (hello.protocol_version != kProtocolVersion) {
    c.reply(make_error(RefusalCode::UnsupportedVersion,
                       fmt::format("protocol version {} is not supported; ferryd speaks {}",
                                   hello.protocol_version, kProtocolVersion)));
    return false;
  }
  if (std::ranges::any_of(hello.node_name, [](char ch) {
        return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
      })) {
    c.reply(make_error(RefusalCode::InvalidArgument,
                       "a node name may not hold control characters (newlines, escapes)"));
    return false;
  }
  client.who.name = hello.node_name;
  bool resumed = false;
  const auto slot = slot_for(c, hello, resumed);
  if (!slot) return false;
  client.owner = *slot;
  client.node_id = registry_.add_node(hello.node_name, client.who.pid, client.owner);
  node_connections_[client.node_id] = c.id;
  joined_[client.node_id] = c.now;
  Welcome welcome;
  welcome.node_id = client.node_id;
  welcome.domain = domain();
  welcome.heartbeat_ms = liveness_config_.heartbeat_ms;
  welcome.timeout_ms = liveness_config_.timeout_ms;
  welcome.node_slot = client.owner;
  welcome.registry_shm = registry_object_name(domain());
  liveness_.joined(client.owner, client.who.pid, c.now);
  // A new node's lock travels with the Welcome (the shell takes it): a
  // resumed node holds its own already.
  c.reply(welcome, resumed ? std::nullopt : std::optional<std::uint16_t>(client.owner));
  spdlog::info("node '{}' (pid {}) joined as node {}", client.who.name, client.who.pid,
               client.node_id);
  return true;
}

std::optional<std::uint16_t> DaemonCore::slot_for(const Context& c, const Hello& hello,
                                                  bool& resumed) {
  const Who& who = c.connection.who;
  // A node of the previous ferryd coming back keeps its owner id: what it
  // holds in the adopted pool stays attributed to it.
  if (hello.resume_slot <= 0xffff &&
      liveness_.resumed(static_cast<std::uint16_t>(hello.resume_slot), who.pid)) {
    resumed = true;
    const auto owner = static_cast<std::uint16_t>(hello.resume_slot);
    spdlog::info("node '{}' (pid {}) resumes slot {}", who.name, who.pid, owner);
    return owner;
  }
  auto owner = node_slots_.take();
  // Recycling asks the kernel about every retired slot: not more than
  // ten times a second, whatever a flood of Hellos asks.
  if (!owner && (!last_recycle_ || c.now - *last_recycle_ >= 100)) {
    last_recycle_ = c.now;
    recycle_node_slots(c.out);
    owner = node_slots_.take();
  }
  if (!owner) {
    const std::string why = fmt::format(
        "all {} node slots of domain '{}' are in use (limits: max_nodes), {} of them kept for "
        "processes that left but still run; try again when nodes exit",
        node_slots_.capacity(), domain(), node_slots_.retired_count());
    log_limited(c.now, "slots", spdlog::level::warn, "refusing node '{}' (pid {}): {}", who.name,
                who.pid, why);
    c.reply(make_error(RefusalCode::ResourceExhausted, why));
  }
  return owner;
}

bool DaemonCore::on(const Context& c, const ListTopics& list) {
  c.reply(registry_.list_topics(list.start, list.topic, list.part));
  return true;
}

bool DaemonCore::on(const Context& c, const ListNodes& list) {
  c.reply(node_list(list.start, c.now));
  return true;
}

bool DaemonCore::on(const Context& c, const GetConfig& get) {
  c.reply(config_page(get.offset));
  return true;
}

bool DaemonCore::on(const Context& c, const Ping& /*ping*/) {
  c.reply(Pong{});
  return true;
}

bool DaemonCore::on(const Context& c, const CreatePublisher& request) {
  return port_reply(c, true, request);
}

bool DaemonCore::on(const Context& c, const CreateSubscriber& request) {
  return port_reply(c, false, request);
}

bool DaemonCore::port_reply(const Context& c, bool publisher, const PortRequest& request) {
  if (!registered(c)) return false;
  const Connection& client = c.connection;
  const char* role = publisher ? "publisher" : "subscriber";
  Outbox notifications;
  auto made = registry_.create_port({client.node_id, client.uid, client.gid}, publisher, request,
                                    notifications);
  if (made) {
    spdlog::info("node '{}' {} '{}' (port {})", client.who.name,
                 publisher ? "publishes on" : "subscribes to", request.topic, made->port_id);
    c.reply(*made);
  } else {
    log_limited(c.now, "refused-port", spdlog::level::info, "refused {} of node '{}': {}", role,
                client.who.name, made.error().message);
    c.reply(made.error());
  }
  return port_done(c, notifications);
}

bool DaemonCore::on(const Context& c, const DestroyPort& request) {
  if (!registered(c)) return false;
  Outbox notifications;
  auto done = registry_.destroy_port(c.connection.node_id, request.port_id, notifications);
  if (done) {
    c.reply(*done);
  } else {
    c.reply(done.error());
  }
  return port_done(c, notifications);
}

bool DaemonCore::on(const Context& c, const QueueReleased& released) {
  if (!registered(c)) return false;
  registry_.queue_released(c.connection.node_id, released.port_id, released.peer_port_id);
  return port_done(c, {});
}

bool DaemonCore::registered(const Context& c) {
  if (c.connection.node_id != 0) return true;
  c.reply(make_error(RefusalCode::NotRegistered, "send hello first"));
  return false;
}

bool DaemonCore::port_done(const Context& c, const Outbox& notifications) {
  liveness_.set_must_beat(c.connection.owner, registry_.has_ports(c.connection.node_id));
  save_counters();
  // Replies first, then the notifications they caused.
  send_notifications(notifications, c.out);
  return true;
}

NodeList DaemonCore::node_list(std::uint32_t start, std::uint64_t now) const {
  NodeList list = registry_.list_nodes(start);
  for (NodeInfo& node : list.nodes) {
    if (auto joined = joined_.find(node.node_id); joined != joined_.end()) {
      node.connected_ms = now > joined->second ? now - joined->second : 0;
    }
    if (auto id = node_connections_.find(node.node_id); id != node_connections_.end()) {
      if (auto client = connections_.find(id->second); client != connections_.end()) {
        node.slot = client->second.owner;
        node.heartbeat_age_ms = liveness_.silent_ms(client->second.owner, now);
      }
    }
  }
  return list;
}

ConfigText DaemonCore::config_page(std::uint32_t offset) const {
  const std::string& text = settings_.config_text;
  ConfigText page;
  page.source = settings_.config_source.substr(0, kMaxPathName);
  page.total = static_cast<std::uint32_t>(text.size());
  page.offset = std::min(offset, page.total);
  page.text = text.substr(page.offset, kMaxConfigChunk);
  return page;
}

}  // namespace ferry::discovery
