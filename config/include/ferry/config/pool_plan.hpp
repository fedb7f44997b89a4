#pragma once
// Sizing the loaned-memory pool, and checking it fits /dev/shm (docs/configuration.md).
//
// Every topic may loan (docs/loans.md: any type may be loaned), so every topic
// counts. A topic's demand is what it can have outstanding at once:
//   chunks = (capacity x max_subscribers + history + max_loans) x max_publishers
// each of chunk_size = the sample size rounded up to a power of two, at
// least kMinChunkSize (64 B). Without `pool:`, the classes are the topics'
// demands grouped by chunk size. Byte counts saturate at UINT64_MAX instead
// of wrapping. Only chunk payloads are counted: the pool's own metadata and
// the rings are small next to them and sized by the transport.

#include <cstdint>
#include <expected>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "ferry/config/config.hpp"

namespace ferry::config {

struct TopicDemand {
  std::string topic;
  std::uint64_t sample_size = 0;
  std::uint64_t chunk_size = 0;  // power of two >= kMinChunkSize
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;  // chunk_size x chunks
};

struct PoolPlan {
  std::vector<PoolClass> classes;    // ascending chunk_size
  std::vector<TopicDemand> demands;  // one per topic, in config order
  std::uint64_t total_bytes = 0;     // sum of chunk_size x count over classes
  bool from_config = false;          // classes come from `pool:` rather than the topics
};

// The sums and products of pool sizes, here and in ferryd's pool layout:
// saturating at UINT64_MAX (a size that never fits) instead of wrapping.
[[nodiscard]] constexpr std::uint64_t add_sat(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
[[nodiscard]] constexpr std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

[[nodiscard]] TopicDemand topic_demand(const Topic& topic);

// The classes of `pool:` when given, else planned from the topics.
[[nodiscard]] PoolPlan plan_pool(const Config& config);

struct PoolFitError {
  std::string topic;              // the topic that needs the most ("" without topics)
  std::uint64_t topic_bytes = 0;  // what that topic needs
  std::uint64_t pool_bytes = 0;   // what the whole pool needs
  std::uint64_t free_bytes = 0;   // what /dev/shm has
  std::string message;            // one sentence naming all of the above and the fix
};

// Fails when the pool needs more than `free_bytes`.
[[nodiscard]] std::expected<void, PoolFitError> check_pool_fits(const PoolPlan& plan,
                                                                std::uint64_t free_bytes);

// Bytes an unprivileged process may still allocate under `dir` (statvfs:
// f_bavail x f_frsize).
[[nodiscard]] std::expected<std::uint64_t, std::error_code> free_shm_bytes(
    const std::filesystem::path& dir = "/dev/shm");

}  // namespace ferry::config
