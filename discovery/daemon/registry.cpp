#include "registry.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>

#include <algorithm>

#include "ferry/config/layout_fingerprint.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/names.hpp"
#include "ferry/discovery/limits.hpp"
#include "ferry/transport/names.hpp"
#include "ferry/transport/pool_layout.hpp"
#include "ferry/transport/slot_format.hpp"
#include "object_names.hpp"
#include "service_registry.hpp"

namespace ferry::discovery {

namespace {

void erase_value(std::vector<std::uint64_t>& v, std::uint64_t value) {
  v.erase(std::remove(v.begin(), v.end(), value), v.end());
}

// True when `who` names the uid (user name or number) or the gid (group name).
// The user database's name for a uid or a gid (nullopt: none).
std::optional<std::string> user_name(uid_t uid) {
  char buf[4096];
  passwd pw{};
  passwd* result = nullptr;
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &result) != 0 || result == nullptr) {
    return std::nullopt;
  }
  return std::string(pw.pw_name);
}

std::optional<std::string> group_name(gid_t gid) {
  char buf[4096];
  group gr{};
  group* result = nullptr;
  if (::getgrgid_r(gid, &gr, buf, sizeof buf, &result) != 0 || result == nullptr) {
    return std::nullopt;
  }
  return std::string(gr.gr_name);
}

}  // namespace

Registry::Registry(std::string domain, std::vector<ServedTopic> declared, TopicConfig defaults,
                   bool strict, ShmFactory& shm)
    : domain_(std::move(domain)), defaults_(defaults), strict_(strict), shm_(shm) {
  for (auto& t : declared) {
    t.declared = true;
    t.config.slot_size = slot_size_for(t.config);
    std::string name = t.name;
    topics_.emplace(std::move(name), TopicEntry{std::move(t), {}, {}});
  }
}

std::uint32_t Registry::slot_size_for(const TopicConfig& config) {
  // Samples up to the inline limit are copied into the slot; larger ones
  // travel as a pool reference (16 bytes), so their slots stay small whatever
  // the sample size. A bytes topic's slot holds up to kBytesInlineMax bytes
  // of a sample inline (a longer one goes by reference).
  std::uint64_t payload = transport::kPooledSlotBytes;
  if (config.max_size != 0) {
    payload = std::clamp<std::uint64_t>(config.max_size, transport::kPooledSlotBytes,
                                        transport::kBytesInlineMax);
  } else if (config.sample_size <= config::kMaxInlineSample) {
    payload = std::max<std::uint64_t>(config.sample_size, transport::kPooledSlotBytes);
  }
  return transport::slot_size_for_payload(payload);
}

std::uint64_t Registry::add_node(std::string name, pid_t pid, std::uint16_t owner) {
  const std::uint64_t id = next_id_++;
  nodes_.emplace(id, NodeEntry{std::move(name), pid, owner, {}});
  return id;
}

void Registry::remove_node(std::uint64_t node_id, UnmatchReason reason, Outbox& out) {
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  const std::vector<std::uint64_t> ports = it->second.ports;
  for (std::uint64_t port : ports) remove_port(port, reason, out);
  nodes_.erase(node_id);
}

Registry::TopicEntry* Registry::topic_for(const std::string& name, std::optional<TopicEntry>& fresh,
                                          Error& error) {
  auto it = topics_.find(name);
  if (it != topics_.end()) return &it->second;
  // A service's topic: made by the service's rules, strict or not.
  if (auto settings = service_topic_settings(name, defaults_, [&](const std::string& n) {
        auto t = topics_.find(n);
        return t == topics_.end() ? nullptr : &t->second.settings;
      })) {
    if (strict_ && !settings->declared && settings->type_name.empty()) {
      error = make_error(RefusalCode::UnknownTopic,
                         fmt::format("topic '{}' belongs to a service that is not declared in the "
                                     "configuration and the domain is strict; declare it under "
                                     "'services:'",
                                     name));
      return nullptr;
    }
    fresh.emplace(TopicEntry{std::move(*settings), {}, {}});
    return &*fresh;
  }
  if (strict_) {
    error = make_error(RefusalCode::UnknownTopic,
                       fmt::format("topic '{}' is not declared in the configuration and the domain "
                                   "is strict; declare it under 'topics:'",
                                   name));
    return nullptr;
  }
  if (topics_.size() >= limits_.max_topics) {
    error = make_error(RefusalCode::LimitExceeded,
                       fmt::format("topic '{}' would be the domain's topic number {}, over its "
                                   "limit of {} (limits: max_topics)",
                                   name, topics_.size() + 1, limits_.max_topics));
    return nullptr;
  }
  ServedTopic settings;
  settings.name = name;
  settings.config = defaults_;
  fresh.emplace(TopicEntry{std::move(settings), {}, {}});
  return &*fresh;
}

std::optional<Error> Registry::check_node_limit(const NodeEntry& node) const {
  if (node.ports.size() < limits_.max_ports_per_node) return std::nullopt;
  return make_error(RefusalCode::LimitExceeded,
                    fmt::format("node '{}' already has {} ports; limits: max_ports_per_node "
                                "is {}",
                                node.name, node.ports.size(), limits_.max_ports_per_node));
}

namespace {

// Printable, for a refusal that quotes a name a client sent.
std::string escaped_name(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 160)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::optional<Error> Registry::check_request(const PortRequest& request) const {
  // A declared topic's name is valid (the configuration checked it); any
  // other name is checked here, before it can become an undeclared topic.
  const bool fresh = !topics_.contains(request.topic);
  if (fresh && !config::is_valid_topic_name(request.topic)) {
    return make_error(
        RefusalCode::InvalidArgument,
        fmt::format("'{}' is not a valid topic name: use letters, digits and _ / . - (at most {} "
                    "characters), with no leading, trailing or doubled '/'",
                    escaped_name(request.topic), config::kMaxTopicNameLength));
  }
  if (request.type_name.empty()) return std::nullopt;  // a generic port takes the topic's type
  if (!config::is_valid_type_name(request.type_name)) {
    return make_error(RefusalCode::InvalidArgument,
                      fmt::format("'{}' is not a valid type name: a letter or _ first, then "
                                  "letters, digits and _ : / . - (at most {} characters)",
                                  escaped_name(request.type_name), config::kMaxTypeNameLength));
  }
  const bool bytes = request.type_name == "ferry::Bytes";
  const std::uint64_t size = request.type_size;
  const std::uint32_t align = request.type_align;
  if ((bytes && (size != 0 || align != 1)) ||
      (!bytes && (size == 0 || size > config::kMaxSampleSize || align == 0 ||
                  align > config::kMaxAlign || (align & (align - 1)) != 0 || size % align != 0))) {
    return make_error(
        RefusalCode::InvalidArgument,
        fmt::format("type '{}' has size {} and alignment {}: a type needs a size from 1 to {} "
                    "bytes and an alignment that is a power of two up to {} dividing it",
                    request.type_name, size, align, config::kMaxSampleSize, config::kMaxAlign));
  }
  // A type name means one layout in the domain: a declared topic's type
  // cannot be reused with another size on a new undeclared topic (on a
  // topic that exists, check_type compares with its own type).
  if (!fresh) return std::nullopt;
  for (const auto& [name, topic] : topics_) {
    const ServedTopic& s = topic.settings;
    if (!s.declared || s.type_name != request.type_name) continue;
    if (s.type_size != size || s.type_align != align) {
      return make_error(RefusalCode::TypeMismatch,
                        fmt::format("type '{}' is declared with size {} and alignment {} (topic "
                                    "'{}'), but the port's has size {} and alignment {}",
                                    s.type_name, s.type_size, s.type_align, s.name, size, align));
    }
    break;
  }
  return std::nullopt;
}

std::optional<Error> Registry::check_type(const TopicEntry& topic,
                                          const PortRequest& request) const {
  const ServedTopic& s = topic.settings;
  if (request.type_name.empty()) {
    // A generic port (a tool such as `ferry topic echo`) takes the topic's type.
    if (s.type_name.empty()) {
      return make_error(RefusalCode::InvalidArgument,
                        fmt::format("topic '{}' has no type yet (it is not declared and has no "
                                    "ports); a generic port cannot choose one",
                                    s.name));
    }
    return std::nullopt;
  }
  if (s.type_name.empty()) return std::nullopt;  // an undeclared topic's first port fixes it
  if (s.type_name != request.type_name || s.type_size != request.type_size ||
      s.type_align != request.type_align) {
    return make_error(
        RefusalCode::TypeMismatch,
        fmt::format("type mismatch on topic '{}': the port's type is '{}' (size {}, alignment {}) "
                    "but the topic's is '{}' (size {}, alignment {})",
                    s.name, request.type_name, request.type_size, request.type_align, s.type_name,
                    s.type_size, s.type_align));
  }
  // A generated type is checked field by field (docs/types.md): two fields of
  // one size swapped pass the size check but not this one.
  if (request.type_layout.empty() || s.type_layout.empty()) return std::nullopt;
  if (auto difference = config::first_layout_difference(request.type_layout, s.type_layout)) {
    return make_error(
        RefusalCode::TypeMismatch,
        fmt::format("layout mismatch on topic '{}' (type '{}'): {}; the port's "
                    "layout is {{{}}}, the topic's is {{{}}}",
                    s.name, s.type_name, *difference, request.type_layout, s.type_layout));
  }
  return std::nullopt;
}

std::optional<Error> Registry::check_allowed(const TopicEntry& topic, const Peer& peer,
                                             bool publisher) const {
  const auto& allowed = publisher ? topic.settings.allow_publish : topic.settings.allow_subscribe;
  if (!allowed) return std::nullopt;
  // The peer's names looked up in the list, never the list's names in the
  // user database: a long list must not stall this (the serving) thread.
  if (allowed->contains(std::to_string(peer.uid))) return std::nullopt;
  const std::optional<std::string> name = user_name(peer.uid);
  if (name && allowed->contains(*name)) return std::nullopt;
  if (auto g = group_name(peer.gid); g && allowed->contains(*g)) return std::nullopt;
  const std::string user = name.value_or(std::to_string(peer.uid));
  return make_error(
      RefusalCode::PermissionDenied,
      fmt::format("user '{}' (uid {}) may not {} topic '{}' (see its 'allow:')", user, peer.uid,
                  publisher ? "publish on" : "subscribe to", topic.settings.name));
}

std::optional<Error> Registry::check_port_limit(const TopicEntry& topic, bool publisher,
                                                const PortRequest& request) const {
  if (publisher && request.observer) {
    return make_error(RefusalCode::InvalidArgument,
                      fmt::format("a publisher on topic '{}' cannot be an observer; only "
                                  "subscribers observe",
                                  request.topic));
  }
  if (request.observer) return std::nullopt;  // observers never take a subscriber's place
  const auto& ports = publisher ? topic.publishers : topic.subscribers;
  const auto count = static_cast<std::size_t>(std::count_if(
      ports.begin(), ports.end(), [&](std::uint64_t id) { return !ports_.at(id).observer; }));
  std::optional<ServingPort> serving;
  if (!topic.subscribers.empty()) {
    const PortEntry& server = ports_.at(topic.subscribers.front());
    if (auto n = nodes_.find(server.node_id); n != nodes_.end())
      serving = ServingPort{n->second.name, static_cast<std::int32_t>(n->second.pid)};
  }
  if (auto e = service_port_refusal(topic.settings, publisher, count, serving)) return e;
  const std::uint32_t limit = publisher ? topic.settings.config.limits.max_publishers
                                        : topic.settings.config.limits.max_subscribers;
  if (count < limit) return std::nullopt;
  return make_error(RefusalCode::LimitExceeded,
                    fmt::format("topic '{}' already has {} {}, its {} is {}", request.topic, count,
                                publisher ? "publishers" : "subscribers",
                                publisher ? "max_publishers" : "max_subscribers", limit));
}

std::expected<PortCreated, Error> Registry::create_port(const Peer& peer, bool publisher,
                                                        const PortRequest& request, Outbox& out) {
  auto node = nodes_.find(peer.node_id);
  if (node == nodes_.end()) {
    return std::unexpected(make_error(RefusalCode::NotRegistered, "the node is not registered"));
  }
  if (request.topic.empty()) {
    return std::unexpected(make_error(RefusalCode::InvalidArgument, "the topic name is empty"));
  }
  if (auto e = check_node_limit(node->second)) return std::unexpected(*e);
  if (auto e = check_request(request)) return std::unexpected(*e);
  Error error;
  std::optional<TopicEntry> fresh;  // a new undeclared topic, registered only once all passed
  TopicEntry* topic = topic_for(request.topic, fresh, error);
  if (topic == nullptr) return std::unexpected(error);
  if (auto e = check_type(*topic, request)) return std::unexpected(*e);
  if (auto e = check_allowed(*topic, peer, publisher)) return std::unexpected(*e);

  if (auto e = check_port_limit(*topic, publisher, request)) return std::unexpected(*e);

  const std::uint64_t port_id = next_id_;
  // A new port's identity is its first id; a re-registered one keeps its own.
  const std::uint64_t identity = request.identity != 0 ? request.identity : port_id;
  PortEntry entry{peer.node_id, publisher, request.topic, {}, identity, request.observer};
  if (!publisher && !request.resume_doorbell.empty()) {
    // A subscriber re-registering after a daemon restart keeps its doorbell
    // (its publishers ring it already); only a doorbell name of this domain
    // that no port uses is accepted.
    const bool ours = request.resume_doorbell.starts_with(transport::shm_name(domain_, "bell."));
    const bool taken = std::any_of(ports_.begin(), ports_.end(), [&](const auto& p) {
      return p.second.doorbell_shm == request.resume_doorbell;
    });
    if (!ours || taken) {
      return std::unexpected(
          make_error(RefusalCode::InvalidArgument,
                     fmt::format("doorbell '{}' is not a free doorbell of domain '{}'",
                                 request.resume_doorbell, domain_)));
    }
    if (auto adopted = shm_.adopt_doorbell(request.resume_doorbell); !adopted) {
      return std::unexpected(make_error(RefusalCode::InvalidArgument, adopted.error()));
    }
    entry.doorbell_shm = request.resume_doorbell;
  } else if (!publisher) {
    auto bell =
        make_unguessable(transport::shm_name(domain_, fmt::format("bell.{}", port_id)),
                         [&](const std::string& name) { return shm_.create_doorbell(name); });
    if (!bell) return std::unexpected(make_error(RefusalCode::ResourceExhausted, bell.error()));
    entry.doorbell_shm = std::move(*bell);
  }

  // Every check passed: from here on the port is registered.
  ++next_id_;
  if (fresh) {
    topic = &topics_.emplace(request.topic, std::move(*fresh)).first->second;
  }
  auto& ports_of_topic = publisher ? topic->publishers : topic->subscribers;
  ServedTopic& s = topic->settings;
  if (s.type_name.empty()) {  // the first port of an undeclared topic decides its type
    s.type_name = request.type_name;
    s.type_size = request.type_size;
    s.type_align = request.type_align;
    s.type_layout = request.type_layout;
    s.config.sample_size = request.type_size;
    s.config.slot_size = slot_size_for(s.config);
  }
  PortCreated reply;
  reply.port_id = port_id;
  reply.topic = s.config;
  reply.doorbell_shm = entry.doorbell_shm;
  ports_.emplace(port_id, std::move(entry));
  ports_of_topic.push_back(port_id);
  node->second.ports.push_back(port_id);

  // Match with every port on the other side. When a ring cannot be made the
  // port is refused whole; peers already matched are told it is gone.
  const std::vector<std::uint64_t> others = publisher ? topic->subscribers : topic->publishers;
  for (std::uint64_t other : others) {
    auto made = publisher ? connect(port_id, other, out) : connect(other, port_id, out);
    if (!made) {
      remove_port(port_id, UnmatchReason::PortDestroyed, out);
      return std::unexpected(made.error());
    }
  }
  return reply;
}

std::expected<void, Error> Registry::connect(std::uint64_t pub, std::uint64_t sub, Outbox& out) {
  const PortEntry& p = ports_.at(pub);
  const PortEntry& s = ports_.at(sub);
  const ServedTopic& topic = topics_.at(p.topic).settings;
  // An observer's queue overwrites its oldest sample whatever the topic's
  // policy: its publisher never waits for it.
  const Policy policy = s.observer ? Policy::DropOldest : topic.config.policy;
  auto made = make_unguessable(transport::shm_name(domain_, fmt::format("ring.{}.{}", pub, sub)),
                               [&](const std::string& name) {
                                 return shm_.create_ring(name, topic.config.capacity,
                                                         topic.config.slot_size, policy);
                               });
  if (!made) return std::unexpected(make_error(RefusalCode::ResourceExhausted, made.error()));
  const std::string ring = std::move(*made);
  queues_.emplace(std::make_pair(pub, sub), ring);
  const NodeEntry& pub_node = nodes_.at(p.node_id);
  const NodeEntry& sub_node = nodes_.at(s.node_id);

  Matched to_pub;
  to_pub.port_id = pub;
  to_pub.peer_port_id = sub;
  to_pub.peer_node = sub_node.name;
  to_pub.peer_pid = sub_node.pid;
  to_pub.peer_owner = sub_node.owner;
  to_pub.ring_shm = ring;
  to_pub.doorbell_shm = s.doorbell_shm;
  to_pub.peer_identity = s.identity;
  to_pub.peer_observer = s.observer;
  out.emplace_back(p.node_id, to_pub);

  Matched to_sub;
  to_sub.port_id = sub;
  to_sub.peer_port_id = pub;
  to_sub.peer_node = pub_node.name;
  to_sub.peer_pid = pub_node.pid;
  to_sub.peer_owner = pub_node.owner;
  to_sub.ring_shm = ring;
  to_sub.peer_identity = p.identity;
  out.emplace_back(s.node_id, to_sub);
  return {};
}

void Registry::disconnect(std::uint64_t pub, std::uint64_t sub, std::uint64_t gone,
                          UnmatchReason reason, Outbox& out) {
  auto q = queues_.find({pub, sub});
  if (q == queues_.end()) return;
  std::string ring = std::move(q->second);
  queues_.erase(q);
  const std::uint64_t survivor = gone == pub ? sub : pub;
  auto it = ports_.find(survivor);
  if (it == ports_.end()) {
    shm_.remove(ring);
    return;
  }
  // The survivor may not have opened the ring yet (its Matched can still be
  // on the way): the name stays until it answers this Unmatched with
  // QueueReleased. Once mapped, the ring outlives its name, and the
  // subscriber drains what was published before it forgets the queue.
  lingering_.emplace(std::make_pair(survivor, gone), std::move(ring));
  if (auto departed = ports_.find(gone); departed != ports_.end()) {
    if (auto node = nodes_.find(departed->second.node_id); node != nodes_.end()) {
      lingering_owner_[{survivor, gone}] = node->second.owner;
      ++unreleased_by_owner_[node->second.owner];
    }
  }
  Unmatched note;
  note.port_id = survivor;
  note.peer_port_id = gone;
  note.reason = reason;
  out.emplace_back(it->second.node_id, note);
}

void Registry::remove_port(std::uint64_t port_id, UnmatchReason reason, Outbox& out) {
  auto it = ports_.find(port_id);
  if (it == ports_.end()) return;
  PortEntry port = it->second;
  TopicEntry& topic = topics_.at(port.topic);
  if (port.publisher) {
    for (std::uint64_t sub : topic.subscribers) disconnect(port_id, sub, port_id, reason, out);
    erase_value(topic.publishers, port_id);
  } else {
    for (std::uint64_t pub : topic.publishers) disconnect(pub, port_id, port_id, reason, out);
    erase_value(topic.subscribers, port_id);
    shm_.remove(port.doorbell_shm);
  }
  // Rings this port kept after its peers left are nobody's now.
  for (auto l = lingering_.lower_bound({port_id, 0});
       l != lingering_.end() && l->first.first == port_id;) {
    shm_.remove(l->second);
    forget_lingering(l->first);
    l = lingering_.erase(l);
  }
  if (auto node = nodes_.find(port.node_id); node != nodes_.end()) {
    erase_value(node->second.ports, port_id);
  }
  ports_.erase(port_id);
  // An undeclared topic with no port left forgets its type (and disappears).
  if (!topic.settings.declared && topic.publishers.empty() && topic.subscribers.empty()) {
    topics_.erase(port.topic);
  }
}

void Registry::forget_lingering(const std::pair<std::uint64_t, std::uint64_t>& key) {
  auto o = lingering_owner_.find(key);
  if (o == lingering_owner_.end()) return;
  if (auto n = unreleased_by_owner_.find(o->second); n != unreleased_by_owner_.end()) {
    if (--n->second == 0) unreleased_by_owner_.erase(n);
  }
  lingering_owner_.erase(o);
}

std::expected<PortDestroyed, Error> Registry::destroy_port(std::uint64_t node_id,
                                                           std::uint64_t port_id, Outbox& out) {
  auto it = ports_.find(port_id);
  if (it == ports_.end() || it->second.node_id != node_id) {
    return std::unexpected(make_error(
        RefusalCode::UnknownPort, fmt::format("port {} does not belong to this node", port_id)));
  }
  remove_port(port_id, UnmatchReason::PortDestroyed, out);
  return PortDestroyed{port_id};
}

void Registry::queue_released(std::uint64_t node_id, std::uint64_t port_id,
                              std::uint64_t peer_port_id) {
  auto port = ports_.find(port_id);
  if (port == ports_.end() || port->second.node_id != node_id) return;  // not its port
  auto l = lingering_.find({port_id, peer_port_id});
  if (l == lingering_.end()) return;
  shm_.remove(l->second);
  forget_lingering(l->first);
  lingering_.erase(l);
}

TopicList Registry::list_topics(std::uint32_t start, const std::string& only,
                                std::uint32_t part) const {
  TopicList list;
  std::vector<const TopicEntry*> selected;
  for (const auto& [name, entry] : topics_) {
    if (only.empty() || name == only) selected.push_back(&entry);
  }
  list.total = static_cast<std::uint32_t>(selected.size());
  list.start = start;
  list.part = part;
  // Encoded sizes, rounded up: a datagram never passes kMaxMessageSize.
  std::size_t budget = kMaxMessageSize - 1024;
  auto take = [&budget](std::size_t cost) {
    if (cost > budget) return false;
    budget -= cost;
    return true;
  };
  for (std::size_t i = start; i < selected.size(); ++i) {
    const TopicEntry& t = *selected[i];
    TopicInfo info;
    info.name = t.settings.name;
    info.type_name = t.settings.bytes ? "bytes" : t.settings.type_name;
    info.policy = t.settings.config.policy;
    info.capacity = t.settings.config.capacity;
    info.sample_size = t.settings.config.sample_size;
    if (!take(64 + info.name.size() + info.type_name.size())) break;
    // Items in a fixed order: publishers, subscribers, queues.
    const std::size_t first = i == start ? part : 0;
    std::size_t item = 0;
    bool cut = false;
    auto port_info = [&](std::uint64_t id) {
      const PortEntry& p = ports_.at(id);
      const NodeEntry& n = nodes_.at(p.node_id);
      return PortInfo{id, n.name, n.pid, p.observer};
    };
    auto add_ports = [&](const std::vector<std::uint64_t>& ids, std::vector<PortInfo>& into) {
      for (std::uint64_t id : ids) {
        if (cut) return;
        if (item++ < first) continue;
        PortInfo port = port_info(id);
        if (!take(24 + port.node.size())) {
          cut = true;
          --item;
          return;
        }
        into.push_back(std::move(port));
      }
    };
    add_ports(t.publishers, info.publishers);
    add_ports(t.subscribers, info.subscribers);
    for (auto pub : t.publishers) {
      for (auto sub : t.subscribers) {
        if (cut) break;
        auto q = queues_.find({pub, sub});
        if (q == queues_.end()) continue;
        if (item++ < first) continue;
        if (!take(28 + q->second.size())) {
          cut = true;
          --item;
          break;
        }
        info.queues.push_back(QueueInfo{pub, sub, q->second});
      }
    }
    const bool empty = info.publishers.empty() && info.subscribers.empty() && info.queues.empty();
    if (cut && empty && item == first && !list.topics.empty()) break;  // whole in the next page
    list.topics.push_back(std::move(info));
    if (cut) {
      list.next_part = static_cast<std::uint32_t>(item);
      break;
    }
  }
  return list;
}

NodeList Registry::list_nodes(std::uint32_t start) const {
  NodeList list;
  list.total = static_cast<std::uint32_t>(nodes_.size());
  list.start = start;
  std::size_t budget = kMaxMessageSize / 2;
  auto it = nodes_.begin();
  std::advance(it, std::min<std::size_t>(start, nodes_.size()));
  for (; it != nodes_.end(); ++it) {
    const auto& [id, n] = *it;
    NodeInfo info;
    info.node_id = id;
    info.name = n.name;
    info.pid = n.pid;
    for (std::uint64_t port_id : n.ports) {
      if (info.publishers.size() + info.subscribers.size() >= kMaxPortsListed) break;
      const PortEntry& p = ports_.at(port_id);
      (p.publisher ? info.publishers : info.subscribers).push_back(NodePortInfo{port_id, p.topic});
    }
    const std::size_t cost =
        256 + (info.publishers.size() + info.subscribers.size()) * (kMaxTopicName + 16);
    if (cost > budget && !list.nodes.empty()) break;
    budget -= std::min(budget, cost);
    list.nodes.push_back(std::move(info));
  }
  return list;
}

}  // namespace ferry::discovery
