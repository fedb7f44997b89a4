#pragma once
// The YAML a benchmark's private ferryd loads: topics with policy `block`
// (lossless, like a socket or a pipe) and an explicit pool. ferry's loan
// path uses `bytes` topics; its copy path (ferry-copy) topics of an opaque
// type of exactly the message size, which is what publish(const T&) sends.
//
// Each run uses topics of its own: the topics a run needs are declared
// kTopicSlots times (".../s0" ... ".../s7") and run i uses slot i % 8. A
// process of the previous run that ferryd has not yet seen go (its socket
// closed a moment ago) is then never matched with the next run's sides,
// never counted by their subscriber_count(), and never fills a queue that a
// `block` publisher would wait on.

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::bench {

inline constexpr std::uint32_t kTopicSlots = 8;

struct BenchTopic {
  std::string name;                   // without the slot suffix
  std::uint64_t max_size = 0;         // bytes topic: max_size; fixed: the type's size
  bool fixed = false;                 // an opaque type of max_size bytes instead of bytes
  std::uint32_t capacity = 0;         // queue slots, a power of two
  std::uint32_t max_subscribers = 1;  // one publisher per topic
};

// The topics one run uses at the same time.
using TopicSet = std::vector<BenchTopic>;

// Per-topic limits the benchmark's sides stay within.
inline constexpr std::uint32_t kBenchMaxLoans = 2;
inline constexpr std::uint32_t kBenchMaxHeld = 2;
inline constexpr std::uint32_t kLatencyCapacity = 2;  // one message in flight

// `copy`: the ferry-copy transport's topics (fixed-size type).
[[nodiscard]] std::string latency_ping_topic(std::uint64_t size, bool copy = false);
[[nodiscard]] std::string latency_pong_topic(std::uint64_t size, bool copy = false);
[[nodiscard]] std::string throughput_topic(std::uint64_t size, bool copy = false);
// The name run `run` uses for `topic`.
[[nodiscard]] std::string slot_topic(const std::string& topic, std::uint64_t run);

// Queue capacity for throughput at `size` bytes (ferry and raw-ring alike).
[[nodiscard]] std::uint32_t throughput_capacity(std::uint64_t size) noexcept;

[[nodiscard]] TopicSet latency_topics(std::uint64_t size, bool copy = false);
[[nodiscard]] TopicSet throughput_topics(std::uint64_t size, std::uint32_t subscribers, bool copy = false);

// The configuration text: every set's topics in every slot; `pool:` with one
// class per power-of-two chunk size, holding twice what the most demanding
// set can hold at once (every queue full, every loan out, every subscriber
// at max_held): the previous run's chunks may still await reclaim.
[[nodiscard]] std::string bench_yaml(const std::vector<TopicSet>& sets);

// Bytes of pool that configuration asks for.
[[nodiscard]] std::uint64_t bench_pool_bytes(const std::vector<TopicSet>& sets);

}  // namespace ferry::bench
