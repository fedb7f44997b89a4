#include "harness/bench_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>

namespace ferry::bench {

namespace {

constexpr std::uint64_t kMinChunk = 64;

std::uint64_t chunk_size_for(std::uint64_t size) noexcept {
  return std::bit_ceil(std::max(size, kMinChunk));
}

std::uint64_t chunks_for(const BenchTopic& t) noexcept {
  return std::uint64_t{t.max_queued} * t.max_subscribers + kBenchMaxLoans +
         std::uint64_t{kBenchMaxHeld} * t.max_subscribers;
}

std::map<std::uint64_t, std::uint64_t> pool_classes(const std::vector<TopicSet>& sets) {
  std::map<std::uint64_t, std::uint64_t> classes;  // chunk size -> count
  for (const auto& set : sets) {
    std::map<std::uint64_t, std::uint64_t> demand;
    for (const auto& t : set) demand[chunk_size_for(t.max_size)] += chunks_for(t);
    for (const auto& [chunk, count] : demand) classes[chunk] = std::max(classes[chunk], 2 * count);
  }
  return classes;
}

}  // namespace

namespace {
const char* path_suffix(FerryPath path) noexcept {
  switch (path) {
    case FerryPath::Copy:
      return "-copy";
    case FerryPath::Image:
      return "-image";
    case FerryPath::Loan:
      break;
  }
  return "";
}
}  // namespace

std::string latency_ping_topic(std::uint64_t size, FerryPath path) {
  return fmt::format("bench/latency{}/{}/ping", path_suffix(path), size);
}
std::string latency_pong_topic(std::uint64_t size, FerryPath path) {
  return fmt::format("bench/latency{}/{}/pong", path_suffix(path), size);
}
std::string throughput_topic(std::uint64_t size, FerryPath path) {
  return fmt::format("bench/throughput{}/{}", path_suffix(path), size);
}
std::string slot_topic(const std::string& topic, std::uint64_t run) {
  return fmt::format("{}/s{}", topic, run % kTopicSlots);
}

std::uint32_t throughput_capacity(std::uint64_t size) noexcept {
  if (size <= 4096) return 1024;
  if (size <= 64 * 1024) return 64;
  return 4;
}

TopicSet latency_topics(std::uint64_t size, FerryPath path) {
  const bool fixed = path == FerryPath::Copy;
  if (path == FerryPath::Image) {
    const std::uint64_t image = kBenchImageSize;
    return {BenchTopic{latency_ping_topic(size, path), image, false, kLatencyCapacity, 1, 1,
                       std::string(kBenchImageType)},
            BenchTopic{latency_pong_topic(size, path), image, false, kLatencyCapacity, 1, 1,
                       std::string(kBenchImageType)}};
  }
  return {BenchTopic{latency_ping_topic(size, path), size, fixed, kLatencyCapacity, 1, 1},
          BenchTopic{latency_pong_topic(size, path), size, fixed, kLatencyCapacity, 1, 1}};
}

TopicSet throughput_topics(std::uint64_t size, std::uint32_t subscribers, FerryPath path,
                           std::uint32_t batch) {
  const std::uint32_t capacity = throughput_capacity(size);
  // The loan path's batches are loan_many's, which a fixed-size type needs.
  const bool fixed = path == FerryPath::Copy || (path == FerryPath::Loan && batch > 1);
  return {BenchTopic{throughput_topic(size, path), size, fixed, capacity, subscribers, capacity}};
}

std::string bench_yaml(const std::vector<TopicSet>& sets) {
  // A generous liveness timeout: a side that spins on a loaded 2-CPU machine
  // may starve its node's heartbeat thread for a moment; that is not death.
  std::string y =
      "# Written by `ferry bench` for its private ferryd; removed when the run ends.\n"
      "liveness: { heartbeat_ms: 100, timeout_ms: 5000 }\n";
  const bool shipped = std::any_of(sets.begin(), sets.end(), [](const TopicSet& set) {
    return std::any_of(set.begin(), set.end(), [](const BenchTopic& t) { return !t.type.empty(); });
  });
  if (shipped) y += "include: [sensor_msgs.yaml]\n";
  y += "pool:\n";
  for (const auto& [chunk, count] : pool_classes(sets)) {
    y += fmt::format("  - {{ chunk_size: {}, count: {} }}\n", chunk, count);
  }
  std::set<std::uint64_t> blobs;  // fixed sizes: one opaque type each
  for (const auto& set : sets) {
    for (const auto& t : set) {
      if (t.fixed) blobs.insert(t.max_size);
    }
  }
  if (!blobs.empty()) {
    y += "types:\n";
    for (auto size : blobs) y += fmt::format("  {}: {{ size: {} }}\n", bench_blob_type(size), size);
  }
  y += "topics:\n";
  for (std::uint32_t slot = 0; slot < kTopicSlots; ++slot) {
    for (const auto& set : sets) {
      for (const auto& t : set) {
        const std::string type = !t.type.empty() ? t.type
                                 : t.fixed       ? bench_blob_type(t.max_size)
                                                 : fmt::format("bytes, max_size: {}", t.max_size);
        y += fmt::format(
            "  - {{ name: {}, type: {}, capacity: {}, policy: block, block_timeout_ms: 5000, "
            "max_publishers: 1, max_subscribers: {}, max_loans: {}, max_held: {} }}\n",
            slot_topic(t.name, slot), type, t.capacity, t.max_subscribers, kBenchMaxLoans,
            kBenchMaxHeld);
      }
    }
  }
  return y;
}

std::uint64_t bench_pool_bytes(const std::vector<TopicSet>& sets) {
  std::uint64_t total = 0;
  for (const auto& [chunk, count] : pool_classes(sets)) total += chunk * count;
  return total;
}

std::string bench_blob_type(std::uint64_t size) { return fmt::format("BenchBlob{}", size); }

}  // namespace ferry::bench
