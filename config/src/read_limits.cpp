// `limits:`: what ferryd grants its clients (docs/operations/ferryd.md, "Limits").

#include "ferry/config/limits.hpp"
#include "readers.hpp"

namespace ferry::config::detail {

namespace {
const std::vector<std::string_view> kLimitKeys{"max_topics", "max_ports_per_node",
                                               "max_connections", "max_nodes", "hello_timeout_ms"};
constexpr std::string_view kLimitsExample = "{ max_topics: 1024, max_ports_per_node: 256 }";

void read_u32(Reader& r, const std::vector<Entry>& entries, std::string_view key, std::uint64_t min,
              std::uint64_t max, std::uint32_t& out) {
  const Entry* e = find(entries, key);
  if (e == nullptr) return;
  if (const auto v = r.integer(*e, min, max)) out = static_cast<std::uint32_t>(*v);
}
}  // namespace

DaemonLimits read_limits(Reader& r, const Entry& e) {
  DaemonLimits limits;
  if (!r.expect_map(e.value, e.value_pos, "'limits'", kLimitsExample)) return limits;
  const auto entries = r.entries(e.value, "in 'limits'", kLimitKeys);
  read_u32(r, entries, "max_topics", 1, kMaxTopics, limits.max_topics);
  read_u32(r, entries, "max_ports_per_node", 1, kMaxPortsPerNode, limits.max_ports_per_node);
  // 0 keeps the default: derived from ferryd's file-descriptor limit.
  read_u32(r, entries, "max_connections", 0, kMaxConnections, limits.max_connections);
  read_u32(r, entries, "max_nodes", 1, kMaxNodes, limits.max_nodes);
  read_u32(r, entries, "hello_timeout_ms", 1, kMaxMillis, limits.hello_timeout_ms);
  return limits;
}

}  // namespace ferry::config::detail
