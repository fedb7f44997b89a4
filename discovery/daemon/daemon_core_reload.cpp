// DaemonCore: SIGHUP's result applied (docs/operations/ferryd.md). New
// types and topics are added and new limits apply to new ports; a change
// that conflicts with live ports, or a file that did not load, is refused
// with file:line:col in the log, and the old configuration stays whole. The
// shell reads and parses the file on a thread of its own (daemon_reload.cpp).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>

#include "daemon_core.hpp"
#include "domain_pool.hpp"
#include "ferry/config/limits.hpp"
#include "served_topics.hpp"

namespace ferry::discovery {

namespace {

std::string where(const config::Config& config, const std::string& topic) {
  const config::Topic* t = config.find_topic(topic);
  if (t == nullptr || t->pos.line == 0) return config.source;
  return fmt::format("{}:{}:{}", config.source, t->pos.line, t->pos.column);
}

// A pooled topic (bytes, or samples too large to travel inline) whose
// samples fit no class of the live pool: the pool cannot grow while nodes
// map it.
std::optional<std::string> pool_misfit(const config::Config& config, std::uint64_t largest) {
  for (const config::Topic& t : config.topics) {
    const bool pooled = t.is_bytes() || t.sample_size > config::kMaxInlineSample;
    if (pooled && t.sample_size > largest) {
      return fmt::format(
          "{}: topic '{}' needs {}-byte pool chunks but the domain's pool, made at "
          "start, has none larger than {} bytes (restart ferryd with no node "
          "running to re-plan it)",
          where(config, t.name), t.name, t.sample_size, largest);
    }
  }
  return std::nullopt;
}

}  // namespace

void DaemonCore::reload(std::variant<LoadedConfig, std::string> result) {
  const std::string& path = settings_.config_source;
  std::optional<std::string> refused;
  if (auto* error = std::get_if<std::string>(&result)) {
    refused = std::move(*error);
  } else if (auto* next = std::get_if<LoadedConfig>(&result)) {
    std::vector<ServedTopic> served = served_topics(next->config);
    if (auto conflict = registry_.reload_conflict(served)) {
      refused = fmt::format("{}: topic '{}' {}", where(next->config, conflict->topic),
                            conflict->topic, conflict->why);
    } else if (auto misfit = pool_misfit(next->config, pool_.max_chunk_size)) {
      refused = *misfit;
    } else {
      const std::size_t topics = served.size();
      registry_.reload(std::move(served), to_topic_config(next->config.defaults),
                       next->config.strict);
      settings_.config_text = std::move(next->text);
      if (next->config.liveness.heartbeat_ms != liveness_config_.heartbeat_ms ||
          next->config.liveness.timeout_ms != liveness_config_.timeout_ms) {
        spdlog::warn(
            "{}: liveness changes apply when ferryd restarts (nodes keep the rhythm "
            "they were given)",
            path);
      }
      spdlog::info("configuration reloaded from {}: {} declared topic(s)", path, topics);
      if (const std::uint32_t want = holder_nodes_for(next->config, pool_.chunks);
          want > pool_.holder_nodes) {
        spdlog::warn(
            "{}: the topics now want {} overflow holder nodes and the pool has {}: a sample "
            "held by many reader nodes at once may miss some of them (counted) until ferryd "
            "restarts",
            path, want, pool_.holder_nodes);
      }
    }
  }
  if (refused) {
    spdlog::error("reload refused, the old configuration stays: {}", *refused);
  }
}

}  // namespace ferry::discovery
