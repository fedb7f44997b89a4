#pragma once
// ferryd's book of nodes, ports and queues, and the matching rules. Pure
// bookkeeping: shared-memory objects are made through ShmFactory, and the
// messages to send are returned, so that the daemon decides when they go out
// (a port's reply always precedes its Matched notifications).

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ferry/discovery/messages.hpp"

namespace ferry::discovery {

// A topic as the daemon serves it: the declared (or default) configuration
// and the type every port must have.
struct ServedTopic {
  std::string name;
  bool declared = false;  // from the YAML; undeclared topics take `defaults`
  std::string type_name;  // empty: not fixed yet (undeclared topic, no port)
  std::uint64_t type_size = 0;
  std::uint32_t type_align = 0;
  // The declared type's layout fingerprint, or the first generated port's on
  // an undeclared topic; empty: none to check (opaque or hand-written).
  std::string type_layout;
  bool bytes = false;  // `type: bytes` topic
  TopicConfig config;  // policy, capacity, limits, sizes (slot_size filled by the daemon)
  // `allow:` (nullopt: anyone may): user names, group names and numeric
  // uids as written, in a set. A port request looks up its peer's user and
  // group names (two user-database lookups) and those in the set: one
  // request costs the same with 9,000 names as with one.
  std::optional<std::unordered_set<std::string>> allow_publish;
  std::optional<std::unordered_set<std::string>> allow_subscribe;
};

// Makes and removes the shared-memory objects of the domain.
class ShmFactory {
 public:
  virtual ~ShmFactory() = default;
  virtual std::expected<void, std::string> create_ring(const std::string& name,
                                                       std::uint32_t capacity,
                                                       std::uint32_t slot_size, Policy policy) = 0;
  virtual std::expected<void, std::string> create_doorbell(const std::string& name) = 0;
  // A doorbell a previous ferryd made, kept by its subscriber: it must exist.
  virtual std::expected<void, std::string> adopt_doorbell(const std::string& name) = 0;
  virtual void remove(const std::string& name) = 0;
};

// Who asks: the node and the credentials of its socket.
struct Peer {
  std::uint64_t node_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

using Outbox = std::vector<std::pair<std::uint64_t /*node id*/, Message>>;

// What one client may take (the YAML's `limits:`).
struct RegistryLimits {
  std::size_t max_topics = 1024;  // topics at once, declared ones included
  std::size_t max_ports_per_node = 256;
};

class Registry {
 public:
  Registry(std::string domain, std::vector<ServedTopic> declared, TopicConfig defaults, bool strict,
           ShmFactory& shm);

  void set_limits(const RegistryLimits& limits) noexcept { limits_ = limits; }

  std::uint64_t add_node(std::string name, pid_t pid, std::uint16_t owner);
  // Removes the node and all its ports; their peers are told (`reason`).
  void remove_node(std::uint64_t node_id, UnmatchReason reason, Outbox& out);

  std::expected<PortCreated, Error> create_port(const Peer& peer, bool publisher,
                                                const PortRequest& request, Outbox& out);
  std::expected<PortDestroyed, Error> destroy_port(std::uint64_t node_id, std::uint64_t port_id,
                                                   Outbox& out);
  // The node that owns `port_id` has let go of the ring it shared with the
  // departed `peer_port_id`: its name can go. Anything else is ignored.
  void queue_released(std::uint64_t node_id, std::uint64_t port_id, std::uint64_t peer_port_id);

  // SIGHUP (registry_reload.cpp). A declared topic of the new YAML that
  // would change what live ports were made with (type, capacity, policy,
  // max_size): {topic, why}. Nothing is changed.
  struct ReloadConflict {
    std::string topic;
    std::string why;
  };
  [[nodiscard]] std::optional<ReloadConflict> reload_conflict(
      const std::vector<ServedTopic>& declared) const;
  // Applies a conflict-free YAML: new topics are added, changed limits and
  // allow lists apply to new ports; a topic no longer declared stays while
  // it has ports (then goes, as undeclared topics do).
  void reload(std::vector<ServedTopic> declared, TopicConfig defaults, bool strict);

  // Topics [start, ...) that fit in one reply, the first one from its item
  // `part` on (ListTopics); `only` non-empty: that topic.
  [[nodiscard]] TopicList list_topics(std::uint32_t start, const std::string& only,
                                      std::uint32_t part = 0) const;
  // Nodes [start, ...) that fit in one reply, with their ports (at most
  // kMaxPortsListed each). The daemon fills in times and slots.
  [[nodiscard]] NodeList list_nodes(std::uint32_t start) const;
  static constexpr std::size_t kMaxPortsListed = 256;

  // Ids continue across daemon restarts (the heartbeat table keeps them),
  // so ring and doorbell names never collide with a predecessor's.
  [[nodiscard]] std::uint64_t next_id() const noexcept { return next_id_; }
  void continue_ids_from(std::uint64_t next) noexcept { next_id_ = std::max(next_id_, next); }

  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }
  [[nodiscard]] bool has_ports(std::uint64_t node_id) const {
    auto it = nodes_.find(node_id);
    return it != nodes_.end() && !it->second.ports.empty();
  }
  [[nodiscard]] std::size_t port_count() const noexcept { return ports_.size(); }
  [[nodiscard]] std::size_t queue_count() const noexcept { return queues_.size(); }
  // Rings whose peer left and whose survivor has not released them yet.
  [[nodiscard]] std::size_t lingering_count() const noexcept { return lingering_.size(); }
  // Whether a survivor has not yet acknowledged (QueueReleased) the
  // departure of a node that had pool owner id `owner`: until it has, it
  // may still know the id as that node's, so the id must not be reused.
  [[nodiscard]] bool awaits_release(std::uint16_t owner) const {
    return unreleased_by_owner_.contains(owner);
  }

  // Slot size of a ring for a topic: slot header plus the largest inline sample.
  [[nodiscard]] static std::uint32_t slot_size_for(const TopicConfig& config);

 private:
  struct NodeEntry {
    std::string name;
    pid_t pid = 0;
    std::uint16_t owner = 0;
    std::vector<std::uint64_t> ports;
  };
  struct PortEntry {
    std::uint64_t node_id = 0;
    bool publisher = false;
    std::string topic;
    std::string doorbell_shm;  // subscribers only
    std::uint64_t identity =
        0;                  // its first id, kept across ferryd restarts (PortRequest::identity)
    bool observer = false;  // an observer subscriber (PortRequest::observer)
  };
  struct TopicEntry {
    ServedTopic settings;
    std::vector<std::uint64_t> publishers;
    std::vector<std::uint64_t> subscribers;
  };

  // The topic's entry, or a new undeclared one in `fresh` (not registered:
  // nothing is until every check passed); nullptr with `error` when refused.
  TopicEntry* topic_for(const std::string& name, std::optional<TopicEntry>& fresh, Error& error);
  std::optional<Error> check_node_limit(const NodeEntry& node) const;
  // max_publishers / max_subscribers (observers are not counted). A pooled
  // sample reaches any number of reader nodes (docs/design/pool.md).
  std::optional<Error> check_port_limit(const TopicEntry& topic, bool publisher,
                                        const PortRequest& request) const;
  // The topic's name (when not declared), the type's name, size and
  // alignment: what a client may not send whatever the topic.
  std::optional<Error> check_request(const PortRequest& request) const;
  std::optional<Error> check_type(const TopicEntry& topic, const PortRequest& request) const;
  std::optional<Error> check_allowed(const TopicEntry& topic, const Peer& peer,
                                     bool publisher) const;
  std::expected<void, Error> connect(std::uint64_t pub, std::uint64_t sub, Outbox& out);
  void disconnect(std::uint64_t pub, std::uint64_t sub, std::uint64_t gone, UnmatchReason reason,
                  Outbox& out);
  void remove_port(std::uint64_t port_id, UnmatchReason reason, Outbox& out);

  std::string domain_;
  TopicConfig defaults_;
  bool strict_;
  ShmFactory& shm_;
  std::uint64_t next_id_ = 1;
  RegistryLimits limits_;
  std::map<std::uint64_t, NodeEntry> nodes_;
  std::map<std::uint64_t, PortEntry> ports_;
  std::map<std::string, TopicEntry> topics_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> queues_;  // (pub, sub) -> ring
  // (survivor port, departed port) -> ring name kept until the survivor
  // says QueueReleased or goes itself.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> lingering_;
  // The departed node's owner id of each lingering ring, and their count per owner.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint16_t> lingering_owner_;
  std::map<std::uint16_t, std::size_t> unreleased_by_owner_;
  void forget_lingering(const std::pair<std::uint64_t, std::uint64_t>& key);
};

}  // namespace ferry::discovery
