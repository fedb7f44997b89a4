#pragma once
// The readers of each top-level section; load.cpp runs them in order.

#include <optional>
#include <vector>

#include "ferry/config/config.hpp"
#include "ferry/config/schema.hpp"
#include "yaml_reader.hpp"

namespace ferry::config::detail {

// `types:` as declarations (build_schema lays them out). A type whose
// declaration is malformed becomes a 1-byte opaque placeholder, so that its
// users are not reported again as using an unknown type.
[[nodiscard]] std::vector<TypeDecl> read_types(Reader& reader, const Entry& types);

// Where capacity and history were given, to point at the right one when
// history exceeds capacity.
struct SettingsPositions {
  std::optional<SourcePos> capacity;
  std::optional<SourcePos> history;
};

// The keys shared by `defaults:` and a topic.
inline const std::vector<std::string_view> kSettingKeys{
    "capacity",        "policy",    "block_timeout_ms", "max_publishers",
    "max_subscribers", "max_loans", "max_held",         "history"};

// Reads `e` into `settings` when it is one of kSettingKeys; false otherwise.
bool read_setting(Reader& reader, const Entry& e, TopicSettings& settings,
                  SettingsPositions& positions);
void check_history(Reader& reader, const TopicSettings& settings,
                   const SettingsPositions& positions, SourcePos fallback);

[[nodiscard]] TopicSettings read_defaults(Reader& reader, const Entry& defaults);

// `limits:` (ferryd's limits on what its clients may take).
[[nodiscard]] DaemonLimits read_limits(Reader& reader, const Entry& limits);

struct TopicContext {
  const Schema& schema;
  const std::vector<TypeDecl>& decls;
  const TopicSettings& defaults;
  const std::vector<PoolClass>& pool;  // empty when `pool:` is omitted
};

[[nodiscard]] std::vector<Topic> read_topics(Reader& reader, const Entry& topics,
                                             const TopicContext& context);

// `services:`, after `topics:` (a service may not take a topic's name).
[[nodiscard]] std::vector<Service> read_services(Reader& reader, const Entry& services,
                                                 const Schema& schema,
                                                 const std::vector<Topic>& topics);

}  // namespace ferry::config::detail
