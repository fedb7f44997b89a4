#include "ferry/config/pool_plan.hpp"

#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "ferry/config/limits.hpp"
#include "ferry/config/units.hpp"

namespace ferry::config {

namespace {
std::uint64_t chunk_for(std::uint64_t sample) {
  std::uint64_t chunk = kMinChunkSize;
  while (chunk < sample) chunk *= 2;  // sample <= 1 GiB: no overflow
  return chunk;
}
}  // namespace

TopicDemand topic_demand(const Topic& topic) {
  const TopicSettings& s = topic.settings;
  TopicDemand d;
  d.topic = topic.name;
  d.sample_size = topic.sample_size;
  d.chunk_size = chunk_for(topic.sample_size);
  const std::uint64_t per_publisher =
      add_sat(add_sat(mul_sat(s.capacity, s.max_subscribers), s.history), s.max_loans);
  d.chunks = mul_sat(per_publisher, s.max_publishers);
  d.bytes = mul_sat(d.chunk_size, d.chunks);
  return d;
}

PoolPlan plan_pool(const Config& config) {
  PoolPlan plan;
  std::map<std::uint64_t, std::uint64_t> by_chunk;  // ordered: classes come out ascending
  for (const Topic& topic : config.topics) {
    TopicDemand d = topic_demand(topic);
    by_chunk[d.chunk_size] = add_sat(by_chunk[d.chunk_size], d.chunks);
    plan.demands.push_back(std::move(d));
  }
  for (const Service& service : config.services) {
    for (const Topic& topic : service_topics(config, service)) {
      TopicDemand d = topic_demand(topic);
      by_chunk[d.chunk_size] = add_sat(by_chunk[d.chunk_size], d.chunks);
      plan.demands.push_back(std::move(d));
    }
  }
  plan.from_config = !config.pool.empty();
  if (plan.from_config) {
    plan.classes = config.pool;
    std::ranges::sort(plan.classes, {}, &PoolClass::chunk_size);
  } else {
    for (const auto& [chunk, count] : by_chunk) plan.classes.push_back({chunk, count});
  }
  for (const PoolClass& c : plan.classes)
    plan.total_bytes = add_sat(plan.total_bytes, mul_sat(c.chunk_size, c.count));
  return plan;
}

std::expected<void, PoolFitError> check_pool_fits(const PoolPlan& plan, std::uint64_t free_bytes) {
  if (plan.total_bytes <= free_bytes) return {};
  PoolFitError e;
  e.pool_bytes = plan.total_bytes;
  e.free_bytes = free_bytes;
  const auto worst = std::ranges::max_element(plan.demands, {}, &TopicDemand::bytes);
  e.message = "the shared-memory pool " +
              std::string(plan.from_config ? "given by 'pool'" : "sized from the topics") +
              " needs " + std::to_string(plan.total_bytes) + " bytes (" +
              format_size(plan.total_bytes) + ") but /dev/shm has only " +
              std::to_string(free_bytes) + " bytes (" + format_size(free_bytes) + ") free";
  if (worst != plan.demands.end()) {
    e.topic = worst->topic;
    e.topic_bytes = worst->bytes;
    e.message += "; topic '" + worst->topic + "' needs the most: " + std::to_string(worst->bytes) +
                 " bytes (" + std::to_string(worst->chunks) + " chunks of " +
                 format_size(worst->chunk_size) + ")";
  }
  e.message += plan.from_config
                   ? "; shrink 'pool' or enlarge /dev/shm"
                   : "; lower its capacity, max_subscribers, max_publishers, history or max_loans, "
                     "give 'pool' explicitly, or enlarge /dev/shm";
  return std::unexpected(std::move(e));
}

std::expected<std::uint64_t, std::error_code> free_shm_bytes(const std::filesystem::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return std::unexpected(std::error_code(errno, std::generic_category()));
  return mul_sat(st.f_bavail, st.f_frsize);
}

}  // namespace ferry::config
