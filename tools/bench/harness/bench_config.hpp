#pragma once
// The YAML a benchmark's private ferryd loads: topics with policy `block`
// (lossless, like a socket or a pipe) and an explicit pool. ferry's loan
// path uses `bytes` topics; its copy path topics of an opaque type of
// exactly the message size, which is what publish(const T&) sends.
//
// Each run uses topics of its own: the topics a run needs are declared
// kTopicSlots times (".../s0" ... ".../s7") and run i uses slot i % 8. A
// process of the previous run that ferryd has not yet seen go (its socket
// closed a moment ago) is then never matched with the next run's sides,
// never counted by their subscriber_count(), and never fills a queue that a
// `block` publisher would wait on.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/bench/options.hpp"
#include "ferry/config/limits.hpp"

namespace ferry::bench {

// How a ferry transport sends a message:
// - Copy: publish(const T&) of a T of the message size and take(): up to
//   kMaxInlineSample bytes the sample is copied into the ring slot and out
//   of it (what ferry does for small samples); above, once into a pool chunk.
// - Loan: loan(n) / publish(loan) on a bytes topic and take(): zero copy,
//   the sample stays in the pool.
// - Image: loan / publish of a sensor_msgs/msg/Image (the shipped
//   definition) whose data sequence holds the message: zero copy too.
enum class FerryPath : std::uint8_t { Copy, Loan, Image };

// The path a user of the full API takes for `size`, which the `ferry`
// transport measures: the inline copy while the sample fits a ring slot,
// the loan above.
[[nodiscard]] constexpr FerryPath ferry_path(std::uint64_t size) noexcept {
  return size <= config::kMaxInlineSample ? FerryPath::Copy : FerryPath::Loan;
}

inline constexpr std::uint32_t kTopicSlots = 8;

// The Image path's type (transports/ferry/bench_image.hpp) and its size.
inline constexpr std::string_view kBenchImageType = "sensor_msgs/msg/Image";
inline constexpr std::uint64_t kBenchImageSize = 24883332;

struct BenchTopic {
  std::string name;                   // without the slot suffix
  std::uint64_t max_size = 0;         // bytes topic: max_size; fixed: the type's size
  bool fixed = false;                 // an opaque type of max_size bytes instead of bytes
  std::uint32_t capacity = 0;         // queue slots, a power of two
  std::uint32_t max_subscribers = 1;  // one publisher per topic
  // Messages a queue ever holds at once (sizes the pool): capacity for a
  // stream, 1 for a ping-pong (one message in flight, whatever the capacity).
  std::uint32_t max_queued = 0;
  std::string type = {};  // a type of ferry's shipped definitions (Image path), else empty
};

// The topics one run uses at the same time.
using TopicSet = std::vector<BenchTopic>;

// The topic sets the ferry transports among `transports` need for `sizes`
// (empty when none is asked for): `topics_for(size, path)` gives one run's.
// ferry-copy and ferry-loan measure their path at every size; ferry the one
// a user of the full API takes (ferry_path).
template <class TopicsFor>
[[nodiscard]] std::vector<TopicSet> ferry_topic_sets(const std::vector<std::string>& transports,
                                                     const std::vector<std::uint64_t>& sizes,
                                                     TopicsFor&& topics_for);

// Per-topic limits the benchmark's sides stay within.
inline constexpr std::uint32_t kBenchMaxLoans = 2;
inline constexpr std::uint32_t kBenchMaxHeld = 2;

// Queue capacity for latency: the raw-ring's (and the topic default), 64.
// One message is in flight, but a producer re-reads the consumer's head (a
// cross-core miss) each time its cached copy says full, so a tiny ring would
// cost a miss every other message. The pool is sized from the one message
// in flight, not from the capacity (max_queued).
inline constexpr std::uint32_t kLatencyCapacity = 64;

// The topics of each path (Copy: a fixed-size type; Loan: bytes).
[[nodiscard]] std::string latency_ping_topic(std::uint64_t size, FerryPath path);
[[nodiscard]] std::string latency_pong_topic(std::uint64_t size, FerryPath path);
[[nodiscard]] std::string throughput_topic(std::uint64_t size, FerryPath path);
// The opaque type of a Copy-path topic of `size` bytes (alignment 1).
[[nodiscard]] std::string bench_blob_type(std::uint64_t size);
// The name run `run` uses for `topic`.
[[nodiscard]] std::string slot_topic(const std::string& topic, std::uint64_t run);

// Queue capacity for throughput at `size` bytes (ferry and raw-ring alike).
[[nodiscard]] std::uint32_t throughput_capacity(std::uint64_t size) noexcept;

[[nodiscard]] TopicSet latency_topics(std::uint64_t size, FerryPath path);
// `batch` > 1: the Loan path's topic has a fixed-size type (ferry-loan's
// batches are loan_many's).
[[nodiscard]] TopicSet throughput_topics(std::uint64_t size, std::uint32_t subscribers,
                                         FerryPath path, std::uint32_t batch = 1);

// The configuration text: every set's topics in every slot; `pool:` with one
// class per power-of-two chunk size, holding twice what the most demanding
// set can hold at once (every queue full, every loan out, every subscriber
// at max_held): the previous run's chunks may still await reclaim.
[[nodiscard]] std::string bench_yaml(const std::vector<TopicSet>& sets);

// Bytes of pool that configuration asks for.
[[nodiscard]] std::uint64_t bench_pool_bytes(const std::vector<TopicSet>& sets);

template <class TopicsFor>
std::vector<TopicSet> ferry_topic_sets(const std::vector<std::string>& transports,
                                       const std::vector<std::uint64_t>& sizes,
                                       TopicsFor&& topics_for) {
  const auto wants = [&](std::string_view t) {
    return std::find(transports.begin(), transports.end(), t) != transports.end();
  };
  std::vector<TopicSet> sets;
  for (auto size : sizes) {
    const bool full_api = wants(kFerry);
    if (wants(kFerryCopy) || wants(kFerryWaitSet) || wants(kFerryFd) || wants(kFerryC) ||
        (full_api && ferry_path(size) == FerryPath::Copy)) {
      sets.push_back(topics_for(size, FerryPath::Copy));
    }
    if (wants(kFerryLoan) || (full_api && ferry_path(size) == FerryPath::Loan)) {
      sets.push_back(topics_for(size, FerryPath::Loan));
    }
    if (wants(kFerryImage)) sets.push_back(topics_for(size, FerryPath::Image));
  }
  return sets;
}

}  // namespace ferry::bench
