#pragma once
// A loaded, validated configuration (docs/configuration.md).
//
// Defaults when a key is omitted:
//   domain                none (the runtime then uses --domain, FERRY_DOMAIN or "default")
//   liveness              heartbeat_ms 100, timeout_ms 1000 (timeout must exceed heartbeat)
//   pool                  none: sized from the topics (pool_plan.hpp)
//   strict                false (undeclared topics get `defaults`)
//   defaults / per topic  capacity 64, policy drop_oldest, block_timeout_ms 1000,
//                         max_publishers 8, max_subscribers 16, max_loans 4,
//                         max_held 4, history 0
//   allow                 none: anyone may publish and subscribe
//   limits                max_topics 1024, max_ports_per_node 256,
//                         max_connections 0 (from ferryd's file-descriptor
//                         limit), max_nodes 65535, hello_timeout_ms 3000
// A topic's omitted settings come from `defaults:`, whose omitted keys come
// from the values above. Ranges are in limits.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/config/diagnostic.hpp"
#include "ferry/config/policy.hpp"
#include "ferry/config/schema.hpp"
#include "ferry/config/service.hpp"

namespace ferry::config {

struct Liveness {
  std::uint32_t heartbeat_ms = 100;  // how often every node bumps its heartbeat
  std::uint32_t timeout_ms = 1000;   // a heartbeat older than this is death
};

// One size class of the loaned-memory pool.
struct PoolClass {
  std::uint64_t chunk_size = 0;
  std::uint64_t count = 0;

  friend bool operator==(const PoolClass&, const PoolClass&) = default;
};

// The per-topic knobs that `defaults:` also sets.
struct TopicSettings {
  std::uint32_t capacity = 64;  // slots per (publisher, subscriber) queue, power of two
  Policy policy = Policy::DropOldest;
  std::uint32_t block_timeout_ms = 1000;  // policy block only
  std::uint32_t max_publishers = 8;
  std::uint32_t max_subscribers = 16;
  std::uint32_t max_loans = 4;  // unpublished loans one publisher may hold
  std::uint32_t max_held = 4;   // samples one subscriber may hold at once
  std::uint32_t history = 0;    // last samples handed to late subscribers (<= capacity)

  friend bool operator==(const TopicSettings&, const TopicSettings&) = default;
};

// Users or groups (names or numeric ids, as written) allowed per direction;
// nullopt means anyone, an empty list means no one.
struct Allow {
  std::optional<std::vector<std::string>> publish;
  std::optional<std::vector<std::string>> subscribe;
};

inline constexpr std::string_view kBytesType = "bytes";

struct Topic {
  std::string name;
  std::string type;                       // a declared type's name, or "bytes"
  std::optional<std::size_t> type_index;  // into Config::schema.types(); empty for bytes
  std::uint64_t sample_size = 0;          // the type's size, or max_size for bytes
  std::uint64_t sample_align = 1;         // the type's alignment; 1 for bytes
  TopicSettings settings;
  Allow allow;
  SourcePos pos;  // where the topic is declared

  [[nodiscard]] bool is_bytes() const noexcept { return type == kBytesType; }
};

// What ferryd grants its clients (`limits:`), so that one local user cannot
// exhaust the daemon for everyone.
struct DaemonLimits {
  std::uint32_t max_topics = 1024;         // topics served at once, declared ones included
  std::uint32_t max_ports_per_node = 256;  // publishers and subscribers of one node
  std::uint32_t max_connections = 0;       // 0: ferryd's RLIMIT_NOFILE minus a reserve
  std::uint32_t max_nodes = 65535;         // node slots (pool owner ids) in use at once
  std::uint32_t hello_timeout_ms = 3000;   // a connection must say Hello within this

  friend bool operator==(const DaemonLimits&, const DaemonLimits&) = default;
};

struct Config {
  std::string source;                 // file name used in messages
  std::optional<std::string> domain;  // `domain:`, when given
  Liveness liveness;
  std::vector<PoolClass> pool;  // `pool:` sorted by chunk_size; empty when omitted
  TopicSettings defaults;
  bool strict = false;
  DaemonLimits limits;
  Schema schema;
  std::vector<Topic> topics;      // declaration order
  std::vector<Service> services;  // declaration order (docs/services.md)
  // `include:`: the files read (after the configuration's own), and their
  // texts, for self_contained_text().
  std::vector<std::string> included_files;
  std::vector<std::string> included_texts;

  [[nodiscard]] const Topic* find_topic(std::string_view name) const noexcept;
  [[nodiscard]] const Service* find_service(std::string_view name) const noexcept;
  // The topic's declared type, or nullptr for bytes topics.
  [[nodiscard]] const Type* type_of(const Topic& topic) const noexcept;
};

}  // namespace ferry::config
