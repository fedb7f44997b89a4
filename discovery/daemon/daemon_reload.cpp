// Daemon: SIGHUP re-reads the YAML (docs/operations/ferryd.md). New types
// and topics are added and new limits apply to new ports; a change that conflicts with
// live ports, or a file that does not load, is refused with file:line:col
// in the log, and the old configuration stays whole. The file is read and
// parsed on a thread of its own (a file may take a while, however bounded),
// never on the serving loop; only the result is applied there.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <thread>
#include <variant>

#include "daemon.hpp"
#include "ferry/config/error.hpp"
#include "ferry/config/limits.hpp"
#include "ferry/config/load.hpp"
#include "served_topics.hpp"

namespace ferry::discovery {

namespace {

// As ferryd read it at start (a regular file within the size limit): the
// text is kept for GetConfig. Throws ConfigError naming the file and why.
LoadedConfig load(const std::string& path) {
  LoadedConfig loaded;
  auto text = config::read_config_text(path);
  if (!text) throw config::ConfigError({std::move(text.error())});
  loaded.config = config::load_string(*text, path);
  loaded.text = config::self_contained_text(loaded.config, *text);
  return loaded;
}

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

void Daemon::reload() {
  if (reload_job_) {  // one read at a time; the file is read again after it
    reload_again_ = true;
    return;
  }
  notifier_.reloading();
  const std::string path = options_.config_source;
  spdlog::info("SIGHUP: re-reading {}", path);
  reload_job_ = std::make_unique<ReloadJob>();
  ReloadJob* job = reload_job_.get();
  const int done_fd = reload_fd_;
  job->thread = std::thread([job, path, done_fd] {
    try {
      job->result = load(path);
    } catch (const config::ConfigError& e) {
      job->result = std::string(e.what());
    } catch (const std::exception& e) {
      job->result = fmt::format("{}: {}", path, e.what());
    }
    // SYNC: the eventfd write happens before the loop's read of it, and
    // the loop joins the thread before it reads `result`.
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(done_fd, &one, sizeof one);
  });
}

void Daemon::finish_reload() {
  std::uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(reload_fd_, &count, sizeof count);
  if (!reload_job_) return;
  reload_job_->thread.join();
  auto result = std::move(reload_job_->result);
  reload_job_.reset();
  const std::string& path = options_.config_source;
  std::optional<std::string> refused;
  if (auto* error = std::get_if<std::string>(&result)) {
    refused = std::move(*error);
  } else if (auto* next = std::get_if<LoadedConfig>(&result)) {
    std::vector<ServedTopic> served = served_topics(next->config);
    if (auto conflict = registry_.reload_conflict(served)) {
      refused = fmt::format("{}: topic '{}' {}", where(next->config, conflict->topic),
                            conflict->topic, conflict->why);
    } else if (auto misfit = pool_misfit(next->config, pool_->pool().max_chunk_size())) {
      refused = *misfit;
    } else {
      const std::size_t topics = served.size();
      registry_.reload(std::move(served), to_topic_config(next->config.defaults),
                       next->config.strict);
      options_.config_text = std::move(next->text);
      if (next->config.liveness.heartbeat_ms != liveness_config_.heartbeat_ms ||
          next->config.liveness.timeout_ms != liveness_config_.timeout_ms) {
        spdlog::warn(
            "{}: liveness changes apply when ferryd restarts (nodes keep the rhythm "
            "they were given)",
            path);
      }
      spdlog::info("configuration reloaded from {}: {} declared topic(s)", path, topics);
      std::uint64_t chunks = 0;
      for (std::uint32_t c = 0; c < pool_->pool().class_count(); ++c)
        chunks += pool_->pool().chunk_count(c);
      if (const std::uint32_t want = holder_nodes_for(next->config, chunks);
          want > pool_->pool().holder_nodes()) {
        spdlog::warn(
            "{}: the topics now want {} overflow holder nodes and the pool has {}: a sample "
            "held by many reader nodes at once may miss some of them (counted) until ferryd "
            "restarts",
            path, want, pool_->pool().holder_nodes());
      }
    }
  }
  if (refused) {
    spdlog::error("reload refused, the old configuration stays: {}", *refused);
  }
  notifier_.ready();
  if (reload_again_) {
    reload_again_ = false;
    reload();
  }
}

}  // namespace ferry::discovery
